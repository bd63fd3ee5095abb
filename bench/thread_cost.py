#!/usr/bin/env python3
"""thread_cost.py SEED [ROWS] [ROUNDS]: what a second dataset-mode thread costs, and whether it is ours.

On ROWS mixed rows (bench/gen_mixed_rows.py, default 20000) it measures the CPU time (user +
system) of three runs, interleaved, ROUNDS times (default 9):
  1 thread     `chatfmt render SEED --jsonl ROWS --threads 1`
  2 threads    the same with --threads 2
  2 processes  two `--threads 1` runs at once, on the first and the second half of the rows
and prints the minimum and median of each, and the 2-thread and 2-process figures over the
1-thread one. Two threads that spend more than two processes point at the pipeline (locks, shared
cache lines, the shared address space); what both spend beyond one thread is the two CPUs running
at once (shared caches and memory). CPU time, not wall: the load of other processes changes it
less. Environment: BUILD (default build), CHATFMT_SHARED (default ../shared).
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.abspath(os.environ.get("CHATFMT_SHARED") or os.path.join(REPO, "..", "shared"))
BIN = os.path.join(REPO, os.environ.get("BUILD", "build"), "chatfmt")


def cpu_ms(commands):
    """CPU milliseconds the commands, run at once, spent."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for c in commands]
    for p in procs:
        p.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e3


def measure_kinds(kinds, measure, rounds):
    """{kind: [measure(commands) of each round]}, the kinds run in turn in every round (so that
    each meets the same load)."""
    got = {k: [] for k in kinds}
    for _ in range(rounds):
        for kind, commands in kinds.items():
            got[kind].append(measure(commands))
    return got


def report(title, got, number):
    """Print title and each kind's min and median (in format `number`) against the 1-thread median."""
    one = statistics.median(got["1 thread"])
    print(title)
    for kind, values in got.items():
        median = statistics.median(values)
        print(f"  {kind:12} {min(values):{number}} / {median:{number}}   {median / one:.2f}x the 1-thread median")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    seed = sys.argv[1]
    nrows = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 9
    os.environ.setdefault("CHATFMT_NOW", "2026-03-14T15:09:26")
    os.environ.setdefault("TZ", "UTC")
    with tempfile.TemporaryDirectory() as tmp:
        rows = os.path.join(tmp, "rows.jsonl")
        with open(rows, "w", encoding="utf-8") as f:
            subprocess.run([sys.executable, os.path.join(REPO, "bench", "gen_mixed_rows.py"), SHARED, str(nrows)],
                           stdout=f, check=True)
        with open(rows, "rb") as f:
            lines = f.readlines()
        halves = [os.path.join(tmp, "first.jsonl"), os.path.join(tmp, "second.jsonl")]
        for path, part in zip(halves, (lines[:nrows // 2], lines[nrows // 2:])):
            with open(path, "wb") as f:
                f.writelines(part)
        run = [BIN, "render", seed, "--jsonl"]
        kinds = {
            "1 thread": [run + [rows, "--threads", "1"]],
            "2 threads": [run + [rows, "--threads", "2"]],
            "2 processes": [run + [h, "--threads", "1"] for h in halves],
        }
        got = measure_kinds(kinds, cpu_ms, rounds)
    report(f"{os.path.basename(seed)}, {nrows} mixed rows, CPU ms (min / median of {rounds}):", got, "7.0f")


if __name__ == "__main__":
    main()
