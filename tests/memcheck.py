#!/usr/bin/env python3
"""Run the chatfmt CLI under valgrind memcheck (`make test-valgrind`).

usage: memcheck.py [--bin build/chatfmt] [--jobs 2] [--logs DIR]

Runs, each under `valgrind --leak-check=full --error-exitcode=1`:
  - `chatfmt render SEED CONVERSATION` for every shared/seeds/*.jinja x
    shared/conversations/*.json (shared/ is $CHATFMT_SHARED, else ../shared);
  - `chatfmt render --batch` over every golden and unit table in tests/
    (many error paths: every failing render unwinds through longjmp).
A run is clean when valgrind reports "ERROR SUMMARY: 0 errors" (leaks count as
errors with --leak-check=full) and the process was not killed by a signal. The
render's own exit status is not judged here: templates may legitimately raise.
Exits 1 when any run is not clean.
"""
import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys

from testenv import PINNED_ENV, REPO, shared_dir


def runs(binary):
    shared = shared_dir()
    seeds = sorted(glob.glob(os.path.join(shared, "seeds", "*.jinja")))
    conversations = sorted(glob.glob(os.path.join(shared, "conversations", "*.json")))
    if not seeds:
        print(f"memcheck: no seeds under {shared}: only the batch runs (set CHATFMT_SHARED)")
    for s in seeds:
        for c in conversations:
            yield f"{os.path.basename(s)}|{os.path.basename(c)}", [binary, "render", s, c]
    tables = sorted(glob.glob(os.path.join(REPO, "tests", "golden", "*.cases.jsonl")) +
                    glob.glob(os.path.join(REPO, "tests", "unit", "*.jsonl")))
    for t in tables:
        yield f"batch {os.path.relpath(t, REPO)}", [binary, "render", "--batch", t]


def memcheck(name, argv, logdir):
    log = os.path.join(logdir, re.sub(r"[^\w.-]+", "_", name) + ".log")
    cmd = ["valgrind", "--leak-check=full", "--error-exitcode=1", f"--log-file={log}"] + argv
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          env=dict(os.environ, **PINNED_ENV), timeout=900)
    with open(log, encoding="utf-8", errors="replace") as f:
        report = f.read()
    if done.returncode < 0 or "ERROR SUMMARY: 0 errors" not in report:
        m = re.search(r"ERROR SUMMARY: .*", report)
        why = m.group(0) if m else f"no valgrind summary, exit status {done.returncode}"
        return f"{name}: {why} (see {log})"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "chatfmt"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--logs", default=os.path.join("build", "memcheck"))
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"memcheck: {args.bin} is not built")
    os.makedirs(args.logs, exist_ok=True)
    todo = list(runs(os.path.abspath(args.bin)))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        problems = [p for p in pool.map(lambda job: memcheck(*job, args.logs), todo) if p]
    for p in problems:
        print("FAIL", p)
    print(f"memcheck: {len(todo)} runs, {len(todo) - len(problems)} clean, {len(problems)} with errors")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
