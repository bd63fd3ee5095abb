#!/usr/bin/env python3
"""bench_corpus.py — render-only speed on templates at large: the corpus
(../shared/corpus/templates, 150 real templates) x the public conversations,
chatfmt against Python Jinja2 (transformers' semantics), per template.

The seeds benchmark measures five templates; users bring any of hundreds,
and one construct Jinja2 handles cheaply can make chatfmt slow on a whole
family (a render that faulted its memory in anew was 0.6x Jinja2 before it
was found this way). Prints the speedup over every case (total Jinja2 time
over total chatfmt time, as the seeds figure), the median template's, and
the five lowest with their times, so a slow family shows up in `make bench`.

    bench_corpus.py BENCH_RENDER SHARED OUTDIR

Both sides render the same cases with templates compiled once, each case
timed in the same loop shape (Jinja2: best of 3 rounds a template; chatfmt:
bench_render --by-template, best of 3), in ROUNDS alternating rounds
(BENCH_CORPUS_ROUNDS, default 2), each side keeping a template's best time;
both sides of a round run on the same CPU, round r on CPU r mod the count.
Templates that do not compile are left out of both.
"""
import json
import os
import statistics
import subprocess
import sys
import time

ROUNDS = int(os.environ.get("BENCH_CORPUS_ROUNDS", "2"))


def main():
    bench_render, shared, outdir = sys.argv[1:4]
    cases_path = os.path.join(outdir, "corpus.jsonl")
    with open(cases_path, "w", encoding="utf-8") as out:
        subprocess.run([sys.executable, os.path.join(shared, "tools", "mkcases.py"),
                        os.path.join(shared, "corpus", "templates"), os.path.join(shared, "conversations")],
                       stdout=out, check=True)
    sys.path.insert(0, os.path.join(shared, "oracle"))
    import hf_render  # noqa: E402 (the reference, from shared/)

    by_template = {}
    with open(cases_path, encoding="utf-8") as f:
        for line in f:
            case = json.loads(line)
            by_template.setdefault(case["template"], []).append(case)

    def jinja_round(jinja):
        for path, cases in by_template.items():
            with open(path, encoding="utf-8") as f:
                text = f.read()
            try:
                hf_render.compile_template(text)
            except Exception:  # noqa: BLE001 - does not compile: left out
                continue
            for _ in range(3):
                t0 = time.perf_counter()
                for case in cases:
                    try:
                        hf_render.render(text, case["context"], bool(case.get("raw")))
                    except Exception:  # noqa: BLE001 - failing renders cost time too
                        pass
                us = (time.perf_counter() - t0) / len(cases) * 1e6
                jinja[path] = min(us, jinja.get(path, us))

    def chatfmt_round(chatfmt):
        res = subprocess.run([bench_render, cases_path, "20", "--by-template"], capture_output=True, text=True,
                             check=True)
        for line in res.stdout.splitlines():
            parts = line.split()
            if parts[0] == "template":
                us = float(parts[2])
                chatfmt[parts[1]] = min(us, chatfmt.get(parts[1], us))

    # the two sides alternate, each keeping a template's best time: a
    # neighbour on a shared machine can slow a whole run 1.8x. Both sides of
    # round r run on CPU r mod the CPU count (bench_render inherits the
    # affinity), as run_bench.sh pins them: one CPU may run slowed for minutes.
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    jinja, chatfmt = {}, {}
    for r in range(ROUNDS):
        if len(cpus) > 1:
            os.sched_setaffinity(0, {cpus[r % len(cpus)]})
        jinja_round(jinja)
        chatfmt_round(chatfmt)
    if len(cpus) > 1:
        os.sched_setaffinity(0, set(cpus))

    both = sorted(set(jinja) & set(chatfmt))
    if not both:
        print("corpus: no template measured")
        return 1
    n = {p: len(by_template[p]) for p in both}
    total_py = sum(jinja[p] * n[p] for p in both)
    total_cf = sum(chatfmt[p] * n[p] for p in both)
    ratios = sorted((jinja[p] / chatfmt[p], p) for p in both)
    cases = sum(n.values())
    print(f"corpus_templates {len(both)}   cases {cases}   (templates that compile; corpus x conversations)")
    print(f"corpus_jinja2_us_per_render {total_py / cases:.2f}   corpus_chatfmt_us_per_render {total_cf / cases:.3f}")
    print(f"corpus_render_speedup {total_py / total_cf:.1f}x   (all cases; median template "
          f"{statistics.median(r for r, _ in ratios):.1f}x)")
    for r, p in ratios[:5]:
        print(f"corpus_slowest {r:.1f}x  {os.path.basename(p)}   (jinja2 {jinja[p]:.1f} us, chatfmt {chatfmt[p]:.2f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
