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
than 12 characters starts with "\u00e9": rows of text that is not ASCII),
VALUES=KIND (with CHATFMT_READ_ROWS_CALLGRIND: rows of a list of 100 values
of one kind in place of the conversations, KIND one of VALUE_KINDS; a
value's instructions are (read_row's a row less those of KIND "none") /
100)."""
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


# Value j of row i of each VALUES kind: strings of 18 and 380 bytes, scalars,
# dicts of one and two known keys, lists of one string, dicts of a key the
# library does not know (each distinct in its row); "none": no values.
VALUE_KINDS = {
    "none": None,
    "str": lambda i, j: f"text value {i:03d} {j:03d}",
    "long": lambda i, j: f"text value {i:03d} {j:03d} " * 20,
    "int": lambda i, j: i * 1000 + j,
    "bool": lambda i, j: j % 2 == 0,
    "null": lambda i, j: None,
    "dict": lambda i, j: {"role": f"u{j}"},
    "dict2": lambda i, j: {"role": "user", "content": f"c{j}"},
    "list": lambda i, j: [f"x{j}"],
    "unknown-key": lambda i, j: {f"key{j}": 1},
}


def value_rows(kind):
    make = VALUE_KINDS[kind]
    rows = [{"v": [make(i, j) for j in range(100)] if make else []} for i in range(N)]
    return [json.loads(json.dumps(r)) for r in rows]


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
    one = os.environ.get("CHATFMT_READ_ROWS_CALLGRIND")
    if one and os.environ.get("VALUES"):
        distinct = value_rows(os.environ["VALUES"])
    else:
        distinct = [json.loads(json.dumps(convs[i % len(convs)])) for i in range(N)]
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
