#!/usr/bin/env python3
"""batch_scaling.py [SEED...]: render_batch's wall-clock scaling from 1 to 2 threads, each seed
measured in several fresh processes (a benchmark for `make bench`, not a test).

bench_python_batch.py prints one scaling figure a seed from one process; on a shared 2-vCPU
virtual machine that figure moves by a fifth from one minute to the next (the second vCPU is
sometimes slower, sometimes busy). Here each seed runs in PROCS (default 5) fresh processes, in
turn with the other seeds; each process renders ROWS (default 100000) rows (the shared
conversations cycled, as bench_python_batch.py renders them; with DISTINCT=1 each row a separate
object) in the order 1 2 2 1 1 2 2 1 1 2 2 1 threads, one result held at a time, the first two
calls untimed, and reports the best 1-thread wall time over the best 2-thread one. The line a
seed prints is the median of its processes, with their lowest and highest.
Environment: BUILD (the library is BUILD/libchatfmt.so unless CHATFMT_LIBRARY is set),
CHATFMT_SHARED (default ../shared), PROCS, ROWS, DISTINCT.
"""
import gc
import glob
import json
import os
import statistics
import subprocess
import sys
import time

from batch_thread_cost import SHARED, seed_and_rows, seed_path   # (bare seed names or paths; a child's setup)

ORDER = (1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2, 1)


def child(seed, nrows):
    """Print one process's best 1-thread wall time over its best 2-thread one."""
    t, rows = seed_and_rows(seed, nrows)
    if os.environ.get("DISTINCT"):
        rows = [json.loads(json.dumps(r)) for r in rows]
    gc.disable()
    best, held = {1: float("inf"), 2: float("inf")}, None
    for k, threads in enumerate(ORDER):
        t0 = time.perf_counter()
        out = t.render_batch(rows, threads=threads)
        elapsed = time.perf_counter() - t0
        held = out   # (the last result freed after this call, as a pipeline's last batch)
        del out
        if k >= 2:
            best[threads] = min(best[threads], elapsed)
    del held
    print(f"{best[1] / best[2]:.4f}")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]))
        return
    seeds = [seed_path(s) for s in sys.argv[1:]] or sorted(glob.glob(os.path.join(SHARED, "seeds", "*.jinja")))
    procs, nrows = int(os.environ.get("PROCS", "5")), int(os.environ.get("ROWS", "100000"))
    got = {s: [] for s in seeds}
    load = "load %.1f %.1f %.1f" % os.getloadavg()
    for _ in range(procs):
        for s in seeds:
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", s, str(nrows)],
                                 check=True, capture_output=True, text=True).stdout
            got[s].append(float(out))
    rows = "distinct row objects" if os.environ.get("DISTINCT") else "the shared conversations cycled"
    print(f"render_batch scaling, 1 to 2 threads, wall clock: {nrows} rows ({rows}), median of {procs} processes "
          f"(lowest, highest) [{load} before, %.1f %.1f %.1f after]" % os.getloadavg())
    for s in seeds:
        print(f"  {os.path.basename(s):28s} {statistics.median(got[s]):.2f}x  ({min(got[s]):.2f}, {max(got[s]):.2f})")
    print(f"render_batch_scaling_median_min {min(statistics.median(v) for v in got.values()):.2f}x   (target ~1.8x)")


if __name__ == "__main__":
    main()
