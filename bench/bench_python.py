#!/usr/bin/env python3
"""bench_python.py [REPEAT]: the Python binding against Python Jinja2 with
transformers' semantics, on the same cases (seeds x shared conversations):

  jinja2    shared/tools/bench_jinja2.py (hf_render.render, template compiled
            once and cached, as transformers does), median us per case
  chatfmt   chatfmt.apply_chat_template(template_text, **context) the same
            way (compiled template cached by text), median us per case; and
            Template.render with a compiled template held by the caller (one per
            template text)

The two sides alternate for BENCH_ROUNDS rounds (default 5), each keeping
its best round (a neighbour on a shared machine slows single short runs).
Prints each figure and the ratio (target: >= 30x) with every round's ratio,
and both again on CPU time in one process,
and the binding's cost beyond the render itself: its time per call minus
BUILD/bench/bench_render's on the same cases (when make bench built it).
Environment: BUILD
(default build: the library is BUILD/libchatfmt.so unless CHATFMT_LIBRARY is
set), CHATFMT_SHARED (default ../shared).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.abspath(os.environ.get("CHATFMT_SHARED") or os.path.join(REPO, "..", "shared"))
os.environ.setdefault("CHATFMT_LIBRARY", os.path.join(REPO, os.environ.get("BUILD", "build"), "libchatfmt.so"))
os.environ.setdefault("CHATFMT_NOW", "2026-03-14T15:09:26")
sys.path.insert(0, os.path.join(REPO, "python"))
import chatfmt  # noqa: E402


def median_us(call, cases, repeat, clock=time.perf_counter):
    runs = []
    for _ in range(repeat):
        t0 = clock()
        for case in cases:
            try:
                call(case)
            except Exception:  # noqa: BLE001 - failing cases cost time too (as bench_jinja2.py)
                pass
        runs.append((clock() - t0) / len(cases) * 1e6)
    return statistics.median(runs)


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    cases_text = subprocess.run([sys.executable, os.path.join(SHARED, "tools", "mkcases.py"),
                                 os.path.join(SHARED, "seeds"), os.path.join(SHARED, "conversations")],
                                capture_output=True, check=True, text=True).stdout
    cases = [json.loads(line) for line in cases_text.splitlines()]
    compiled = {}   # one compiled template per text, as transformers' cache and bench_jinja2.py
    for c in cases:
        with open(c["template"], encoding="utf-8") as f:
            c["text"] = f.read()
        if c["text"] not in compiled:
            compiled[c["text"]] = chatfmt.compile(c["text"])
        c["compiled"] = compiled[c["text"]]

    def api(c):
        return chatfmt.apply_chat_template(c["text"], **c["context"])

    sys.path.insert(0, os.path.join(SHARED, "oracle"))
    import hf_render

    # The sides alternate for ROUNDS rounds and each keeps its best round: on
    # a shared machine one short run of either can be slowed 1.5x by a neighbour.
    rounds = int(os.environ.get("BENCH_ROUNDS", "5"))
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
        f.write(cases_text)
    jinja, apis, comps, jinja_cpus, api_cpus = [], [], [], [], []
    # both sides of round r on CPU r mod the count (the subprocess inherits
    # it), as run_bench.sh pins them: one CPU may run slowed for minutes
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    try:
        for r in range(rounds):
            if len(cpus) > 1:
                os.sched_setaffinity(0, {cpus[r % len(cpus)]})
            out = subprocess.run([sys.executable, os.path.join(SHARED, "tools", "bench_jinja2.py"), f.name, "10"],
                                 capture_output=True, check=True, text=True).stdout
            jinja.append(float(out.split()[1]))
            apis.append(median_us(api, cases, repeat))
            comps.append(median_us(lambda c: c["compiled"].render(**c["context"]), cases, repeat))
            # the same two in this process on CPU time
            jinja_cpus.append(median_us(lambda c: hf_render.render(c["text"], c["context"]), cases, 5,
                                        time.process_time))
            api_cpus.append(median_us(api, cases, repeat, time.process_time))
    finally:
        os.unlink(f.name)
        if len(cpus) > 1:
            os.sched_setaffinity(0, set(cpus))
    jinja_us, api_us, compiled_us = min(jinja), min(apis), min(comps)
    jinja_cpu, api_cpu = min(jinja_cpus), min(api_cpus)
    rounds_text = " ".join(f"{j / a:.1f}" for j, a in zip(jinja, apis))

    print(f"cases {len(cases)} (seeds x conversations)   library {chatfmt.library_path}")
    print(f"jinja2_us_per_render {jinja_us:.2f}   (bench_jinja2.py)")
    print(f"python_binding_us_per_render {api_us:.2f}   (chatfmt.apply_chat_template)")
    print(f"python_binding_compiled_us_per_render {compiled_us:.2f}   (Template.render)")
    print(f"python_speedup {jinja_us / api_us:.1f}x   (target >= 30x; best of {rounds} alternating rounds each;"
          f" per-round ratios: {rounds_text})")
    print(f"python_speedup_compiled {jinja_us / compiled_us:.1f}x")
    print(f"python_cpu_us_per_render chatfmt {api_cpu:.2f}  jinja2 {jinja_cpu:.2f}   cpu_ratio {jinja_cpu / api_cpu:.1f}x"
          "   (CPU time, same process: independent of load)")
    bench_render = os.path.join(REPO, os.environ.get("BUILD", "build"), "bench", "bench_render")
    if os.path.exists(bench_render):
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False, encoding="utf-8") as f:
            f.write(cases_text)
        try:
            out = subprocess.run([bench_render, f.name, "50"], capture_output=True, text=True).stdout
        finally:
            os.unlink(f.name)
        if out.startswith("render_us_per_case"):
            render_us = float(out.split()[1])
            print(f"python_binding_overhead_us {api_us - render_us:.2f}   (binding {api_us:.2f} - render-only "
                  f"{render_us:.2f}: arguments, marshal, foreign call, decode)")


if __name__ == "__main__":
    main()
