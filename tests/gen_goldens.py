#!/usr/bin/env python3
"""Regenerate the golden files in tests/golden/ with the reference renderer.

  seeds.cases.jsonl / seeds.expected.jsonl
      every clean seed template (shared/seeds/*.jinja) x every conversation
      (shared/conversations/*.json), chat mode.
  examples.cases.jsonl / examples.expected.jsonl
      every seed template x every conversation bundled in examples/*.json
      (only when examples/ holds some).

Templates are inlined (template_text) so the goldens need nothing outside the
repo. The oracle runs with strftime_now pinned (CHATFMT_NOW) and TZ=UTC; the
test runner pins the same values for chatfmt.

shared/ is $CHATFMT_SHARED, else ../shared beside the repository.
usage: python3 tests/gen_goldens.py
"""
import glob
import json
import os
import subprocess
import sys

from testenv import PINNED_ENV, REPO, shared_dir

GOLDEN = os.path.join(REPO, "tests", "golden")


def read_text(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def make_cases(templates, conversations):
    cases = []
    for tpath in templates:
        text = read_text(tpath)
        for cpath in conversations:
            with open(cpath, encoding="utf-8") as f:
                context = json.load(f)
            cases.append({"id": f"{os.path.basename(tpath)}|{os.path.basename(cpath)}",
                          "template_text": text, "context": context, "raw": False})
    return cases


def run_oracle(oracle, cases):
    batch = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases)
    env = dict(os.environ, **PINNED_ENV)
    done = subprocess.run([sys.executable, oracle, "--batch", "-"], input=batch.encode("utf-8"),
                          stdout=subprocess.PIPE, env=env, check=True)
    results = done.stdout.decode("utf-8").splitlines()
    if len(results) != len(cases):
        sys.exit(f"gen_goldens: oracle gave {len(results)} results for {len(cases)} cases")
    return results


def write_golden(name, cases, oracle):
    results = run_oracle(oracle, cases)
    with open(os.path.join(GOLDEN, f"{name}.cases.jsonl"), "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    with open(os.path.join(GOLDEN, f"{name}.expected.jsonl"), "w", encoding="utf-8") as f:
        for line in results:
            f.write(line + "\n")
    ok = sum(json.loads(r)["ok"] for r in results)
    print(f"{name}: {len(cases)} cases ({ok} render, {len(cases) - ok} raise) -> tests/golden/{name}.*.jsonl")


def main():
    shared = shared_dir()
    if not os.path.isdir(shared):
        sys.exit(f"gen_goldens: shared directory not found at {shared} (set CHATFMT_SHARED)")
    oracle = os.path.join(shared, "oracle", "hf_render.py")
    seeds = sorted(glob.glob(os.path.join(shared, "seeds", "*.jinja")))
    os.makedirs(GOLDEN, exist_ok=True)
    write_golden("seeds", make_cases(seeds, sorted(glob.glob(os.path.join(shared, "conversations", "*.json")))),
                 oracle)
    examples = sorted(glob.glob(os.path.join(REPO, "examples", "*.json")))
    if examples:
        write_golden("examples", make_cases(seeds, examples), oracle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
