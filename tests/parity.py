#!/usr/bin/env python3
"""Compare two batch outputs of `render --batch` (one JSON result per line).

usage: parity.py REF.jsonl GOT.jsonl [--cases CASES.jsonl] [--min RATIO] [--show N]
                 [--known KNOWN_DIFFERENCES.md] [--strict-errors] [--strict-messages]

A case matches when both sides render identical bytes, or both fail. When both
fail with different error types the case still matches but is counted apart
("error-type-differs"); --strict-errors makes it a mismatch. --strict-messages
also requires the same error message ("message-differs" otherwise). A GOT file
shorter than REF (engine crashed mid-batch) counts the missing lines as
mismatches.

--known FILE: case ids listed there as lines `- unit:<id> ...` are left out of
the ratio (reported as "known"); ids listed as `- message:<id> ...` only have
their error message exempted from --strict-messages ("known-message").

Prints the counts and `parity M/N = R`; exits 1 when R < RATIO (default 0).
"""
import argparse
import collections
import json
import re
import sys


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_results(path):
    """Like read_jsonl, but a truncated last line (crash mid-write) is dropped."""
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return rows


def known_ids(path, what="unit"):
    ids = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"- " + what + r":(\S+)", line)
            if m:
                ids.add(m.group(1))
    return ids


def classify(ref, got, strict_errors, strict_messages=False, message_known=False):
    if got is None:
        return "missing"
    if ref["ok"] and got.get("ok"):
        return "same" if ref["output"] == got["output"] else "diff"
    if ref["ok"]:
        return "missed"        # reference renders, engine fails
    if got.get("ok"):
        return "no-error"      # reference fails, engine renders
    if ref.get("error_type") == got.get("error_type"):
        if strict_messages and ref.get("error") != got.get("error"):
            return "known-message" if message_known else "message-differs"
        return "both-error"
    if strict_messages and message_known:
        return "known-message"
    return "error-type-mismatch" if strict_errors else "error-type-differs"


MATCHING = {"same", "both-error", "error-type-differs", "known-message"}


def describe(result):
    if result is None:
        return "(no output line)"
    if result.get("ok"):
        return repr(result["output"][:240])
    return f"{result.get('error_type')}: {result.get('error', '')[:200]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ref")
    ap.add_argument("got")
    ap.add_argument("--cases", help="the cases file, to show ids and templates")
    ap.add_argument("--min", type=float, default=0.0, help="required parity ratio")
    ap.add_argument("--show", type=int, default=0, help="print up to N mismatching cases")
    ap.add_argument("--known", help="KNOWN_DIFFERENCES.md: skip ids listed as '- unit:<id>'")
    ap.add_argument("--strict-errors", action="store_true", help="error types must match too")
    ap.add_argument("--strict-messages", action="store_true", help="error types and messages must match")
    args = ap.parse_args()

    ref = read_jsonl(args.ref)
    got = read_results(args.got)
    cases = read_jsonl(args.cases) if args.cases else [{} for _ in ref]
    if len(cases) != len(ref):
        sys.exit(f"parity: {len(cases)} cases but {len(ref)} reference results")
    if len(got) > len(ref):
        sys.exit(f"parity: {len(got)} results but only {len(ref)} reference results")
    got += [None] * (len(ref) - len(got))
    skip = known_ids(args.known) if args.known else set()
    known_messages = known_ids(args.known, "message") if args.known else set()
    strict_errors = args.strict_errors or args.strict_messages

    kinds = collections.Counter()
    shown = 0
    for case, a, b in zip(cases, ref, got):
        kind = "known" if case.get("id") in skip else classify(
            a, b, strict_errors, args.strict_messages, case.get("id") in known_messages)
        kinds[kind] += 1
        if shown < args.show and kind not in MATCHING and kind != "known":
            shown += 1
            text = case.get("template_text") or case.get("template") or ""
            print(f"--- {kind} {case.get('id', '')}")
            print(f"  template: {text[:300]!r}")
            print(f"  ref: {describe(a)}")
            print(f"  got: {describe(b)}")

    total = len(ref) - kinds["known"]
    match = sum(kinds[k] for k in MATCHING)
    ratio = match / total if total else 1.0
    print(" ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
    print(f"parity {match}/{total} = {ratio:.4f}")
    return 0 if ratio >= args.min else 1


if __name__ == "__main__":
    sys.exit(main())
