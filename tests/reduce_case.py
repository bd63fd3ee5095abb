#!/usr/bin/env python3
"""Shrink a case on which chatfmt and the reference disagree.

usage: reduce_case.py CASES.jsonl ID [--bin build/chatfmt]

Takes case ID from CASES.jsonl (e.g. build/tests/random.cases.jsonl), then
repeatedly deletes pieces of its template -- a single tag or text run, or a
whole block from its opening tag to the matching end tag, or just a block's
two tags -- keeping a deletion when the two renderers still disagree in the
same way (different output / only chatfmt fails / only the reference fails).
Prints the smallest template found, both results, and the case as JSON.

The reference runs in-process (shared/oracle/hf_render.py, shared/ is
$CHATFMT_SHARED or ../shared); chatfmt runs in batch mode, one process per
round of candidates. Pinned like the test suite: CHATFMT_NOW, TZ=UTC.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from parity import classify
from testenv import PINNED_ENV, REPO, shared_dir

os.environ.update(PINNED_ENV)
sys.path.insert(0, os.path.join(shared_dir(), "oracle"))
import hf_render  # noqa: E402  (the reference renderer)

TOKEN = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
BLOCK_TAG = re.compile(r"\{%[-+]?\s*(end)?(if|for|macro|call|filter|set|with|generation|raw|block)\b")


def tokens(text):
    out, pos = [], 0
    for m in TOKEN.finditer(text):
        if m.start() > pos:
            out.append(text[pos:m.start()])
        out.append(m.group(0))
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def block_pairs(toks):
    """(open, close) token indexes of nested blocks. A `set` without `=` is a block."""
    stack, pairs = [], []
    for i, t in enumerate(toks):
        m = BLOCK_TAG.match(t)
        if not m or (m.group(2) == "set" and not m.group(1) and "=" in t):
            continue
        if m.group(1):
            for j in range(len(stack) - 1, -1, -1):
                if stack[j][1] == m.group(2):
                    pairs.append((stack[j][0], i))
                    del stack[j:]
                    break
        else:
            stack.append((i, m.group(2)))
    return pairs


def candidates(toks):
    """Smaller templates, biggest cuts first."""
    pairs = sorted(block_pairs(toks), key=lambda p: p[0] - p[1])
    for a, b in pairs:
        yield toks[:a] + toks[b + 1:]
    for a, b in pairs:
        yield toks[:a] + toks[a + 1:b] + toks[b + 1:]
    for i in range(len(toks)):
        yield toks[:i] + toks[i + 1:]


def reference(case):
    return hf_render._one(case)


def engine(binary, cases):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8", delete=False) as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    try:
        done = subprocess.run([binary, "render", "--batch", f.name], stdout=subprocess.PIPE, timeout=300)
    finally:
        os.unlink(f.name)
    results = []
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        try:
            results.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return results + [None] * (len(cases) - len(results))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cases")
    ap.add_argument("id")
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "chatfmt"))
    args = ap.parse_args()
    with open(args.cases, encoding="utf-8") as f:
        case = next((c for c in map(json.loads, f) if c.get("id") == args.id), None)
    if case is None:
        sys.exit(f"reduce_case: no case {args.id!r} in {args.cases}")
    if case.get("template_text") is None:
        with open(case["template"], encoding="utf-8") as f:
            case = dict(case, template_text=f.read(), template=None)

    def verdict(c, got):
        return classify(reference(c), got, strict_errors=False)

    kind = verdict(case, engine(args.bin, [case])[0])
    if kind in ("same", "both-error", "error-type-differs"):
        sys.exit(f"reduce_case: {args.id} does not differ ({kind})")
    toks = tokens(case["template_text"])
    shrunk = True
    while shrunk:
        shrunk = False
        trials = [dict(case, template_text="".join(t)) for t in candidates(toks)]
        for trial, got in zip(trials, engine(args.bin, trials)):
            if verdict(trial, got) == kind:
                toks, case, shrunk = tokens(trial["template_text"]), trial, True
                print(f"... {len(case['template_text'])} chars", file=sys.stderr)
                break
    got = engine(args.bin, [case])[0]
    print(f"{kind}: {case['template_text']!r}")
    print(f"  ref: {json.dumps(reference(case), ensure_ascii=False)}")
    print(f"  got: {json.dumps(got, ensure_ascii=False)}")
    print(json.dumps(case, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
