#!/usr/bin/env python3
"""run_hostile.py MANIFEST --bin CHATFMT [--oracle HF_RENDER.PY] [--sanitized]
[--only SUBSTR] — run the hostile-input suite written by gen_cases.py.

Each case must exit with a status it allows (0 or 1, never a signal), within
1 s of CPU time and under 1.25 GiB of peak memory (max RSS), and when it fails
its error must match the case's pattern (a LimitError names its limit and the
option that raises it). Prints `PASS name (cpu, rss)` or `FAIL name (why)`
per case, then `N passed, N failed`; exit status 1 on any failure.

Cases with an "oracle" entry must end as the reference renderer does (it
renders: exit 0; it raises: exit 1 with the same error type); without
--oracle (or without jinja2) only their exit status is checked.
--sanitized (ASan/UBSan/valgrind builds): time and memory are not judged
(only exit status and message), and the wall-clock cap is 120 s.
Cases that need `chatfmt parse` are skipped when `chatfmt parse --help` fails.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

# Each bound is at least 4x what the costliest case takes on an idle machine
# (a render's memory stops at max_memory, 256 MiB: the worst case peaks near
# 280 MiB), so a busy machine cannot fail a case that is within its limits.
CPU_LIMIT = 1.0              # seconds of user + system time
RSS_LIMIT = 5 << 28          # bytes (1.25 GiB)
SAFETY_AS = 4 << 30          # address-space cap for normal builds, so a runaway cannot take the machine


def run(argv, wall_cap, cap_memory):
    """(status, cpu seconds, max rss bytes, stderr text, wall seconds); status < 0 = signal, None = timeout."""
    def limit_memory():
        if cap_memory:
            resource.setrlimit(resource.RLIMIT_AS, (SAFETY_AS, SAFETY_AS))
    with tempfile.TemporaryFile() as err:
        start = time.monotonic()
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                             preexec_fn=limit_memory)
        status = None
        while True:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                status = os.waitstatus_to_exitcode(st)
                break
            if time.monotonic() - start > wall_cap:
                p.kill()
                _, st, ru = os.wait4(p.pid, 0)
                break
            time.sleep(0.005)
        p.returncode = status if status is not None else -9   # reaped here: keep Popen quiet
        wall = time.monotonic() - start
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    return status, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, text, wall


def has_parse(binary):
    return subprocess.run([binary, "parse", "--help"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def reference_results(oracle, cases):
    """{case name: reference result} for the cases with an "oracle" entry."""
    wanted = [c for c in cases if c.get("oracle")]
    if not oracle or not wanted:
        return {}
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for c in wanted:
            f.write(json.dumps(c["oracle"]) + "\n")
        batch = f.name
    try:
        out = subprocess.run([sys.executable, oracle, "--batch", batch], capture_output=True, text=True, check=True)
    finally:
        os.unlink(batch)
    return {c["name"]: json.loads(line) for c, line in zip(wanted, out.stdout.splitlines())}


def judge(case, status, cpu, rss, err, sanitized, reference):
    """None when the case passes, else why not."""
    if status is None:
        return "timed out"
    if status < 0:
        return "killed by signal %d" % -status
    if status not in case["exit"]:
        return "exit status %d, expected %s: %s" % (status, case["exit"], first_line(err))
    if reference is not None:
        if reference["ok"] and status != 0:
            return "the reference renders it, chatfmt fails: %s" % first_line(err)
        if not reference["ok"] and not err.startswith("chatfmt: error: %s: " % reference["error_type"]):
            return "the reference raises %s: %s; chatfmt: %s" % (reference["error_type"], reference["error"][:100],
                                                               first_line(err) or "renders it")
    if status == 1:
        if not err.startswith("chatfmt: error: ") and case["argv"][0] != "parse":
            return "no error message: %s" % first_line(err)
        if case["expect"] and not re.search(case["expect"], err):
            return "message does not match /%s/: %s" % (case["expect"], first_line(err))
    if not sanitized:
        if cpu > CPU_LIMIT:
            return "took %.2f s of CPU (limit %.1f s): %s" % (cpu, CPU_LIMIT, first_line(err))
        if rss >= RSS_LIMIT:
            return "peak memory %d MiB (limit 1024 MiB)" % (rss >> 20)
    return None


def first_line(text):
    return text.strip().split("\n")[0][:300]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("manifest")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--oracle", help="the reference renderer (shared/oracle/hf_render.py)")
    ap.add_argument("--sanitized", action="store_true")
    ap.add_argument("--only", help="run the cases whose name contains this")
    args = ap.parse_args()

    with open(args.manifest) as f:
        cases = [json.loads(line) for line in f if line.strip()]
    parse_ok = has_parse(args.bin)
    references = reference_results(args.oracle, cases)
    if any(c.get("oracle") for c in cases) and not references:
        print("note: no reference renderer: cases marked for it are checked for their exit status only")
    passed = failed = skipped = 0
    worst_cpu = worst_rss = 0
    for case in cases:
        if args.only and args.only not in case["name"]:
            continue
        if case.get("needs") == "parse" and not parse_ok:
            print("SKIP %s (chatfmt parse is not available)" % case["name"])
            skipped += 1
            continue
        # (the wall-clock cap only catches a hang: CPU time is what is judged,
        # and a busy machine stretches a 0.4 s case to 3 s of wall time)
        status, cpu, rss, err, wall = run([args.bin] + case["argv"], 120 if args.sanitized else 30,
                                          not args.sanitized)
        why = judge(case, status, cpu, rss, err, args.sanitized, references.get(case["name"]))
        figures = "exit %s, %.2f s cpu, %.2f s wall, %d MiB" % (status, cpu, wall, rss >> 20)
        if why:
            print("FAIL %s (%s; %s)" % (case["name"], why, figures))
            failed += 1
        else:
            print("PASS %s (%s%s)" % (case["name"], figures,
                                      "; " + first_line(err)[:120] if status == 1 else ""))
            passed += 1
            worst_cpu = max(worst_cpu, cpu)
            worst_rss = max(worst_rss, rss)
    print("worst passing case: %.2f s cpu, %d MiB" % (worst_cpu, worst_rss >> 20))
    print("%d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
