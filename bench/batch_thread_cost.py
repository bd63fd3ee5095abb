#!/usr/bin/env python3
"""batch_thread_cost.py SEED [ROWS] [ROUNDS]: what a second render_batch thread costs, and whether it is ours.

SEED is a template's path, or a seed's name in CHATFMT_SHARED/seeds (`command-a-reasoning`, with or
without `.jinja`).

The render_batch counterpart of thread_cost.py. Each round runs, in turn, three kinds of child
process on ROWS rows (default 50000: the shared conversations cycled, as bench_python_batch.py
renders them), each timing 3 calls after 2 untimed ones (so that the texts are written into
memory the process already has), with Python's cyclic GC off:
  1 thread     one process, render_batch(rows, threads=1)
  2 threads    one process, render_batch(rows, threads=2)
  2 processes  two processes at once, each render_batch(half the rows, threads=1)
and prints each kind's CPU time a row (process CPU of the timed calls, summed over the
processes), min and median of ROUNDS (default 7) rounds, and the median over the 1-thread one.
Two threads that spend more than two processes point at render_batch (its pool, shared cache
lines, malloc); what both spend beyond one thread is the two CPUs running at once (shared cache
and memory, or a slower second CPU). CPU time, not wall: other load changes it less.
Environment: BUILD (the library is BUILD/libchatfmt.so unless CHATFMT_LIBRARY is set),
CHATFMT_SHARED (default ../shared).
"""
import gc
import glob
import json
import os
import subprocess
import sys
import time

from thread_cost import measure_kinds, report   # (this folder: the dataset-mode counterpart)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.abspath(os.environ.get("CHATFMT_SHARED") or os.path.join(REPO, "..", "shared"))


def seed_and_rows(seed, nrows):
    """In a child: SEED compiled by the library BUILD holds, and nrows rows (the shared
    conversations cycled, as bench_python_batch.py renders them)."""
    os.environ.setdefault("CHATFMT_LIBRARY", os.path.join(REPO, os.environ.get("BUILD", "build"), "libchatfmt.so"))
    sys.path.insert(0, os.path.join(REPO, "python"))
    import chatfmt  # noqa: E402 - after the library path is set
    convs = []
    for path in sorted(glob.glob(os.path.join(SHARED, "conversations", "*.json"))):
        with open(path, encoding="utf-8") as f:
            convs.append(json.load(f))
    with open(seed, encoding="utf-8") as f:
        return chatfmt.compile(f.read()), [convs[i % len(convs)] for i in range(nrows)]


def child(seed, threads, nrows, part):
    """Print the CPU seconds of 3 timed render_batch calls (part: all, or half 0 or 1 of the rows)."""
    t, rows = seed_and_rows(seed, nrows)
    if part != "all":
        half = nrows // 2
        rows = rows[:half] if part == "0" else rows[half:]
    gc.disable()
    held = None
    cpu = 0.0
    for k in range(5):
        c0 = time.process_time()
        out = t.render_batch(rows, threads=threads)
        if k >= 2:
            cpu += time.process_time() - c0
        held = out   # (the last result freed after the next call, as a pipeline's batches)
        del out
    del held
    print(cpu)


def seed_path(seed):
    """SEED as given when it is a file, else the seed of that name in SHARED/seeds."""
    if os.path.isfile(seed):
        return os.path.abspath(seed)
    seeds = os.path.join(SHARED, "seeds")
    for name in (seed, seed + ".jinja"):
        path = os.path.join(seeds, name)
        if os.path.isfile(path):
            return path
    names = sorted(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(seeds, "*.jinja")))
    sys.exit(f"{os.path.basename(sys.argv[0])}: no template {seed!r}: give a path, or one of the seeds: {', '.join(names)}")


def run(commands):
    """CPU seconds of the children's timed calls, the children run at once."""
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, text=True) for c in commands]
    return sum(float(p.communicate()[0]) for p in procs)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
        return
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    seed = seed_path(sys.argv[1])
    nrows = int(sys.argv[2]) if len(sys.argv) > 2 else 50000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    os.environ.setdefault("CHATFMT_NOW", "2026-03-14T15:09:26")
    os.environ.setdefault("TZ", "UTC")
    me = [sys.executable, os.path.abspath(__file__), "--child", seed]
    kinds = {
        "1 thread": [me + ["1", str(nrows), "all"]],
        "2 threads": [me + ["2", str(nrows), "all"]],
        "2 processes": [me + ["1", str(nrows), "0"], me + ["1", str(nrows), "1"]],
    }
    got = measure_kinds(kinds, lambda commands: run(commands) / (3 * nrows) * 1e6, rounds)
    report(f"{os.path.basename(seed)}, render_batch of {nrows} rows, CPU us a row (min / median of {rounds}):",
           got, "6.3f")


if __name__ == "__main__":
    main()
