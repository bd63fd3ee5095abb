#!/usr/bin/env python3
"""bench_read_rows.py [SEED...]: Template.render_batch on rows that are
distinct objects (each a JSON round trip of a shared conversation, as rows
read from a file are), on one thread: CPU time and user time a row, min and
median of ROUNDS rounds (after two untimed ones), per seed; then the read
alone: the template "x", which renders next to nothing, on the same rows and
on the conversations' own objects repeated (read once per call).

User time is printed beside CPU time: a seed whose texts are long (Command-A)
spends much of its CPU time in the kernel, giving the texts' str objects
fresh pages, which the read does not touch.

Instruction counts of one call (repeatable on a loaded machine):
    CHATFMT_READ_ROWS_CALLGRIND=SEED valgrind --tool=callgrind \
        --toggle-collect=sp_render_batch PYTHON bench/bench_read_rows.py
renders SEED (or "x") once on N rows and exits; PYTHON is the real binary
(python3 -c 'import sys; print(sys.executable)'), read_row's inclusive count
is the read. Environment: N (rows, default 30000), ROUNDS (default 7),
CHATFMT_SHARED (default ../shared), NOT_ASCII=1 (every string value longer
than 12 characters starts with "\u00e9": rows of text that is not ASCII)."""
import gc
import glob
import json
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import chatfmt  # noqa: E402

SHARED = os.environ.get("CHATFMT_SHARED", "../shared")
N = int(os.environ.get("N", "30000"))
ROUNDS = int(os.environ.get("ROUNDS", "7"))


def user_time():
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def template(seed):
    if seed == "x":
        return chatfmt.compile("x")
    with open(os.path.join(SHARED, "seeds", seed + ".jinja"), encoding="utf-8") as f:
        return chatfmt.compile(f.read())


def timed(t, rows):
    cpu, user = [], []
    for r in range(ROUNDS + 2):
        c, u = time.process_time(), user_time()
        out = t.render_batch(rows, threads=1)
        c, u = time.process_time() - c, user_time() - u
        del out
        if r >= 2:
            cpu.append(c / len(rows) * 1e6)
            user.append(u / len(rows) * 1e6)
    return (f"cpu min {min(cpu):6.3f} med {statistics.median(cpu):6.3f}   "
            f"user min {min(user):6.3f} med {statistics.median(user):6.3f} us/row")


def not_ascii(value):
    if isinstance(value, str):
        return "\u00e9" + value if len(value) > 12 else value
    if isinstance(value, dict):
        return {k: not_ascii(v) for k, v in value.items()}
    if isinstance(value, list):
        return [not_ascii(v) for v in value]
    return value


def main():
    convs = []
    for path in sorted(glob.glob(os.path.join(SHARED, "conversations", "*.json"))):
        with open(path, encoding="utf-8") as f:
            convs.append(json.load(f))
    if os.environ.get("NOT_ASCII") == "1":
        convs = [not_ascii(c) for c in convs]
    distinct = [json.loads(json.dumps(convs[i % len(convs)])) for i in range(N)]
    one = os.environ.get("CHATFMT_READ_ROWS_CALLGRIND")
    if one:
        t = template(one)
        t.render_batch(distinct[:len(convs)], threads=1)
        t.render_batch(distinct, threads=1)
        return
    gc.disable()   # (a collection would fall on one round or another)
    seeds = sys.argv[1:] or [os.path.basename(p)[:-len(".jinja")]
                             for p in sorted(glob.glob(os.path.join(SHARED, "seeds", "*.jinja")))]
    print(f"render_batch on {N} distinct row objects, 1 thread; load {os.getloadavg()[0]:.1f}")
    for seed in seeds:
        print(f"  {seed:22s} {timed(template(seed), distinct)}")
    repeated = [convs[i % len(convs)] for i in range(N)]
    t = template("x")
    print(f"  {'read (template x)':22s} {timed(t, distinct)}")
    print(f"  {'  repeated objects':22s} {timed(t, repeated)}")


if __name__ == "__main__":
    main()
