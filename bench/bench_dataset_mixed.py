#!/usr/bin/env python3
"""bench_dataset_mixed.py [ROWS]: dataset mode against a Python loop, for every seed template,
on mixed rows (bench/gen_mixed_rows.py: 6 short chats, 2 fifty-turn conversations and 2
requests with 60 tools in every 10 rows; ROWS default 20000, about 180 MB). A benchmark for
`make bench`, not a test.

  chatfmt   `chatfmt render SEED --jsonl rows` with the output discarded: on all cores (the
            default) and with --threads 1, wall clock, best (and median) of 3 x BENCH_ROUNDS
            runs (BENCH_ROUNDS default 3); and its CPU time (user + system, summed over
            threads: what the load does not change). The whole process is timed: its start-up
            (exec, compiling the template; printed, from a run of 10 rows) counts against
            chatfmt, while the Python loop's template is compiled before its clock starts
  python    the loop a user writes: json.loads(line), the reference's render (Jinja2 with
            transformers' semantics, the template compiled once), json.dumps of {"text": ...}
            (or of the error), in this process, on the first 500 rows (the same mix), best of
            two passes; each pass pinned to one CPU, a different one each round, as
            bench_dataset.sh does
Prints per seed the ratio of the Python loop's time a row to chatfmt's on all cores (target
>= 100x; also of the medians), on one thread and on CPU time, and the lowest of each over the
seeds.
Environment: BUILD (default build), CHATFMT_SHARED (default ../shared), BENCH_ROUNDS.
"""
import glob
import json
import os
import resource
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.abspath(os.environ.get("CHATFMT_SHARED") or os.path.join(REPO, "..", "shared"))
BUILD = os.path.join(REPO, os.environ.get("BUILD", "build"))
BIN = os.path.join(BUILD, "chatfmt")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SAMPLE = 500
os.environ.setdefault("CHATFMT_NOW", "2026-03-14T15:09:26")
os.environ.setdefault("TZ", "UTC")
sys.path.insert(0, os.path.join(SHARED, "oracle"))
import hf_render  # noqa: E402


def run_chatfmt(seed, rows_path, threads):
    """(wall seconds, CPU seconds) of one dataset-mode run."""
    cmd = [BIN, "render", seed, "--jsonl", rows_path] + (["--threads", str(threads)] if threads else [])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def python_loop(text, lines):
    """(wall, CPU) seconds of the loop over lines."""
    t0, c0 = time.perf_counter(), time.process_time()
    for line in lines:
        try:
            out = {"text": hf_render.render(text, json.loads(line))}
        except Exception as e:  # noqa: BLE001 - failing rows cost time too, and write their error
            out = {"error": {"type": type(e).__name__, "message": str(e)}}
        json.dumps(out, ensure_ascii=False)
    return time.perf_counter() - t0, time.process_time() - c0


def main():
    nrows = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    if not os.access(BIN, os.X_OK):
        print(f"bench_dataset_mixed: {BIN} not built")
        return 2
    out_dir = os.path.join(BUILD, "bench")
    os.makedirs(out_dir, exist_ok=True)
    rows_path = os.path.join(out_dir, f"dataset-mixed-{nrows}.jsonl")
    with open(rows_path, "w", encoding="utf-8") as f:
        subprocess.run([sys.executable, os.path.join(REPO, "bench", "gen_mixed_rows.py"), SHARED, str(nrows)],
                       stdout=f, check=True)
    with open(rows_path, encoding="utf-8") as f:
        lines = [line for _, line in zip(range(SAMPLE), f)]
    few_path = os.path.join(out_dir, "dataset-mixed-10.jsonl")
    with open(few_path, "w", encoding="utf-8") as f:
        f.writelines(lines[:10])
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    print(f"rows {nrows} (6 short, 2 fifty-turn, 2 sixty-tool in every 10), {os.path.getsize(rows_path) >> 20} MB; "
          f"Python loop on the first {len(lines)}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}")
    lowest = {"all": None, "median": None, "one": None, "cpu": None}
    for seed in sorted(glob.glob(os.path.join(SHARED, "seeds", "*.jinja"))):
        with open(seed, encoding="utf-8") as f:
            text = f.read()
        hf_render.compile_template(text)
        alls, ones, cpus_cf, py_wall, py_cpu = [], [], [], [], []
        start_ms = min(run_chatfmt(seed, few_path, None)[0] for _ in range(5)) * 1e3
        for r in range(3 * ROUNDS):
            wall, cpu = run_chatfmt(seed, rows_path, None)
            alls.append(wall)
            cpus_cf.append(cpu)
            ones.append(run_chatfmt(seed, rows_path, 1)[0])
            if r < 2:
                if len(cpus) > 1:
                    os.sched_setaffinity(0, {cpus[r % len(cpus)]})
                try:
                    w, c = python_loop(text, lines)
                finally:
                    if len(cpus) > 1:
                        os.sched_setaffinity(0, set(cpus))
                py_wall.append(w)
                py_cpu.append(c)
        py_us = min(py_wall) / len(lines) * 1e6
        pyc_us = min(py_cpu) / len(lines) * 1e6
        all_us, one_us, cpu_us = (min(x) / nrows * 1e6 for x in (alls, ones, cpus_cf))
        median_us = statistics.median(alls) / nrows * 1e6
        ratios = {"all": py_us / all_us, "median": py_us / median_us, "one": py_us / one_us, "cpu": pyc_us / cpu_us}
        for k, v in ratios.items():
            lowest[k] = v if lowest[k] is None else min(lowest[k], v)
        print(f"dataset_mixed_speedup {os.path.basename(seed)} {ratios['all']:.1f}x   (python {py_us:.0f} us a row, "
              f"chatfmt {all_us:.2f} us all cores, median {median_us:.2f} us = {ratios['median']:.1f}x; "
              f"start-up {start_ms:.1f} ms; 1 thread {one_us:.2f} us = {ratios['one']:.1f}x; "
              f"CPU {pyc_us:.0f} / {cpu_us:.2f} us = {ratios['cpu']:.1f}x)")
    print(f"dataset_mixed_speedup_lowest {lowest['all']:.1f}x   (all cores, wall; target >= 100x; of the medians "
          f"{lowest['median']:.1f}x)   "
          f"1 thread {lowest['one']:.1f}x   CPU time {lowest['cpu']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
