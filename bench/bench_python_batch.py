#!/usr/bin/env python3
"""bench_python_batch.py [ROWS]: the binding's pipeline paths against Python
Jinja2 in the same process (a benchmark for `make bench`, not a test).

  render_batch   Template.render_batch on ROWS (default 100000) rows per
                 seed template (the shared conversations, cycled), on 1 and
                 2 threads (wall clock, best of 3), against a loop of
                 hf_render.render (Jinja2 with transformers' semantics, the
                 template compiled once) timed on a sample of the same rows,
                 keeping the texts in a list as render_batch returns them.
                 Targets: >= 50x the Jinja2 loop; ~1.8x from 1 to 2 threads.
                 The cycled rows are the same objects many times over, which
                 render_batch reads once per call (as a list of repeated
                 conversations, or rows sharing one dict); the line
                 `distinct` renders the same rows as separate objects (each
                 a JSON round trip of its conversation, as rows read from a
                 file are), which are read in full. Each side's page faults
                 a row (its texts' fresh memory; the same per byte on both
                 sides) are printed beside its time.
  threads        under each render_batch line, the figures the extension
                 gathers per thread (_speedups.batch_stats) on 1 and 2
                 threads, which a loaded machine leaves much as they are
                 where it halves wall-clock scaling: each thread's CPU time
                 (ns a row), of it rendering (R: rows and the texts' copies
                 into their str), the calling thread's serial work (S: rows
                 looked up and str objects made, beside the rendering; X:
                 results made after the last window, with no other thread
                 at work), waiting (counts: watching, yields, sleeps), page
                 faults a thread. "work" is the CPU time of R + S + X on 2
                 threads against 1 (what running on two costs more: shared
                 cache lines, memory, malloc). "scaling from CPU" is the
                 time 2 threads would take on an idle machine from these
                 figures, against 1 thread's CPU time:
                     C1 / (X2 + other2 + max(S2, (R2 + S2) / 2))
                 (the calling thread renders only when its serial work
                 leaves it time; other: starting and stopping the threads,
                 the call itself). The calls measured run with Python's
                 cyclic GC off (a collection falls on one call or another
                 and would be counted as serial work).
  patch          chatfmt.patch on the stand-in tokenizer
                 (python/tests/standin_tokenizer.py: transformers'
                 apply_chat_template on Jinja2) with tokenize=False, against
                 the same tokenizer unpatched, on seeds x conversations (CPU
                 time), on the calls that render (target: >= 20x) and on all
                 (a call that fails is answered by the original method, so
                 that it raises transformers' own exception: it costs both).
Each figure is printed as the best and the median of its rounds
(BENCH_ROUNDS, default 3, after two untimed ones; see rounds()), with the load average before
and after: on a shared machine the ratios of one run are what compare.
Environment: BUILD (the library is BUILD/libchatfmt.so unless
CHATFMT_LIBRARY is set), CHATFMT_SHARED (default ../shared), BENCH_ROUNDS, BENCH_SEEDS (seed names,
comma-separated, e.g. `glm45,nanbeige`: only those; default all).
"""
import gc
import glob
import json
import os
import resource
import statistics
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.abspath(os.environ.get("CHATFMT_SHARED") or os.path.join(REPO, "..", "shared"))
os.environ.setdefault("CHATFMT_LIBRARY", os.path.join(REPO, os.environ.get("BUILD", "build"), "libchatfmt.so"))
os.environ.setdefault("CHATFMT_NOW", "2026-03-14T15:09:26")
os.environ["CHATFMT_SHARED"] = SHARED
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "python", "tests"))
sys.path.insert(0, os.path.join(SHARED, "oracle"))
import chatfmt  # noqa: E402
import hf_render  # noqa: E402


ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))


def rounds(*calls, n=ROUNDS, warm=2, clock=time.perf_counter):
    """The times of n rounds of calls, a list per call; in each round the
    calls run in turn (two sides compared meet the same load: a neighbour
    on a shared machine can slow one stretch of seconds twofold). Each
    call's result is held until its next call has returned, as a pipeline
    does that assigns each batch's texts over the last batch's
    (`out = t.render_batch(part)`), and `warm` rounds run first, untimed:
    the timed calls then write their texts into memory the process already
    has, as every batch of a pipeline after its first two does. (The first
    two calls' texts go to memory the system hands over a page at a time,
    at microseconds a page fault on a virtual machine: a 6.6 KB Command-A
    text costs more in page faults there than in rendering.)"""
    times = [[] for _ in calls]
    FAULTS.clear()
    FAULTS.update({k: [] for k in range(len(calls))})
    held = [None] * len(calls)
    for r in range(warm + n):
        for k, call in enumerate(calls):
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t0 = clock()
            out = call()
            if r >= warm:
                times[k].append(clock() - t0)
                FAULTS[k].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
            held[k] = out   # (the result before it is freed here, after the call)
            del out
    return times


FAULTS = {}   # call position -> page faults of each round, for the last rounds() call


def abba(n):
    """The order of 2n calls of two kinds (0, 1) that puts each kind as
    often at an even place as at an odd one: 0 1 1 0 0 1 1 0 ...

    Two calls compared (render_batch on 1 and 2 threads) return lists of
    the same size; holding the last one while the next is made, the heap
    settles into two places that the calls take in turn, and where the
    one given back lay at the heap's top, malloc returns it to the system
    and the next call there faults every page in again (microseconds a
    page on a virtual machine, more than a row's render). Calls of one
    kind at the even places and of the other at the odd ones would put
    that on one kind alone (a difference of the heap, not of the calls:
    measured so, one thread faulted as two did in its place). In this
    order each kind meets both places as often."""
    return [k for i in range(n) for k in ((0, 1) if i % 2 == 0 else (1, 0))]


def paired_rounds(one, two, n=ROUNDS, warm=2, clock=time.perf_counter):
    """rounds() of two calls in abba() order, one result held at a time
    (see abba): the times of each and, in FAULTS, the page faults."""
    times = [[], []]
    FAULTS.clear()
    FAULTS.update({0: [], 1: []})
    held = None
    for i, k in enumerate(abba(warm + n)):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = clock()
        out = (one, two)[k]()
        if i >= 2 * warm:
            times[k].append(clock() - t0)
            FAULTS[k].append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
        held = out   # (the result before it is freed here, after the call)
        del out
    del held
    return times


def faults_per_row(k, nrows):
    """Median page faults a row of call k in the last rounds() call."""
    return statistics.median(FAULTS[k]) / nrows


def thread_figures(t, rows):
    """batch_stats figures of render_batch(rows) on 1 and 2 threads: of
    BENCH_ROUNDS calls each (in abba() order, one result held at a time,
    after two untimed calls), the one of least CPU time. (A call whose
    texts go to memory the heap had given back faults every page in again,
    microseconds a page here: which call does depends on where the results
    before it lie, not on the threads; see abba.)"""
    speedups = chatfmt.template._native
    if speedups is None or not hasattr(speedups, "batch_stats"):
        return None
    speedups.batch_stats(True)
    figures, held = {}, None
    gc.disable()
    try:
        for i, k in enumerate(abba(1 + max(ROUNDS, 2))):
            threads = k + 1
            out = t.render_batch(rows, threads=threads)
            f = speedups.batch_stats(True)
            if i >= 2 and (threads not in figures or figure_parts(f)[0] < figure_parts(figures[threads])[0]):
                figures[threads] = f
            held = out
            del out
    finally:
        gc.enable()
        speedups.batch_stats(False)
    return figures


def figure_parts(f):
    """(C, R, W, S, X, other) of a call's figures, ns in all."""
    per = f["per_thread"]
    c = sum(t["cpu_ns"] for t in per)
    r = sum(t["render_cpu_ns"] for t in per)
    w = sum(t["wait_cpu_ns"] for t in per)
    s, x = f["fill_ns"] + f["drain_ns"], f["complete_ns"]
    return c, r, w, s, x, c - r - w - s - x


def print_thread_figures(figures, nrows):
    """Two lines of per-thread figures; returns the scaling from CPU."""
    c1, r1, _, s1, x1, _ = figure_parts(figures[1])
    c2, r2, w2, s2, x2, o2 = figure_parts(figures[2])
    scaling = c1 / (x2 + o2 + max(s2, (r2 + s2) / 2))
    per = figures[2]["per_thread"]
    us = 1e3 * nrows
    threads = " + ".join(f"t{k} {t['cpu_ns'] / us:.3f}" for k, t in enumerate(per))
    print(f"  {'':28s}   CPU us/row, 1 thread: {c1 / us:.3f} (R {r1 / us:.3f}, S {s1 / us:.3f}, X {x1 / us:.3f}); "
          f"2 threads: {threads} = {c2 / us:.3f} (R {r2 / us:.3f}, S {s2 / us:.3f}, X {x2 / us:.3f}, waiting "
          f"{w2 / us:.3f}, other {o2 / us:.3f})")
    print(f"  {'':28s}   page faults a row: 1 thread {figures[1]['per_thread'][0]['minor_faults'] / nrows:.2f}, "
          f"2 threads " + " + ".join(f"{t['minor_faults'] / nrows:.2f}" for t in per))
    waits = ", ".join(f"t{k} {t['rows']} rows, {t['waits']} waits ({t['yields']} yields, {t['sleeps']} sleeps)"
                      for k, t in enumerate(per))
    print(f"  {'':28s}   work 2/1 threads {(r2 + s2 + x2) / (r1 + s1 + x1):.3f}; serial share {(s2 + x2 + o2) / c2:.3f}; "
          f"scaling from CPU {scaling:.2f}x; {waits}")
    return scaling


def load():
    return "load %.1f %.1f %.1f" % os.getloadavg()


def jinja_loop(text, rows):
    """The texts of rows in a list, as render_batch returns them (holding
    them costs memory that a loop dropping each text would reuse)."""
    out = []
    for r in rows:
        try:
            out.append(hf_render.render(text, r))
        except Exception as e:  # noqa: BLE001 - failing rows cost time too, and give their error
            out.append(e)
    return out


def main():
    nrows = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    convs = []
    for path in sorted(glob.glob(os.path.join(SHARED, "conversations", "*.json"))):
        with open(path, encoding="utf-8") as f:
            convs.append(json.load(f))
    seeds = sorted(glob.glob(os.path.join(SHARED, "seeds", "*.jinja")))
    only = [name.strip() for name in os.environ.get("BENCH_SEEDS", "").split(",") if name.strip()]
    if only:
        seeds = [p for p in seeds if os.path.splitext(os.path.basename(p))[0] in only]
        if not seeds:
            sys.exit(f"bench_python_batch.py: no seed named in BENCH_SEEDS={os.environ['BENCH_SEEDS']!r}")
    rows = [convs[i % len(convs)] for i in range(nrows)]
    distinct = [json.loads(json.dumps(r)) for r in rows]
    sample = rows[:max(len(convs), min(nrows, 3000) // len(convs) * len(convs))]
    print(f"render_batch: {nrows} rows per seed (the {len(convs)} shared conversations cycled); "
          f"Jinja2 timed on {len(sample)} of them; library {chatfmt.library_path}")
    tunables = os.environ.get("GLIBC_TUNABLES")
    print(f"  ({load()}; best and median of {ROUNDS} rounds{'; GLIBC_TUNABLES=' + tunables if tunables else ''})")
    ratios, medians, scalings, distinct_ratios, distinct_scalings = [], [], [], [], []
    cpu_scalings, distinct_cpu_scalings = [], []   # from per-thread CPU figures (see thread_figures)
    for path in seeds:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        t = chatfmt.compile(text)
        hf_render.compile_template(text)
        jinja, cpu = rounds(lambda: jinja_loop(text, sample), lambda: t.render_batch(rows, threads=1),
                            clock=time.process_time)
        jinja_faults, cpu_faults = faults_per_row(0, len(sample)), faults_per_row(1, nrows)
        jinja = [x / len(sample) * 1e6 for x in jinja]
        cpu = [x / nrows * 1e6 for x in cpu]
        one, two = ([x / nrows * 1e6 for x in side]
                    for side in paired_rounds(lambda: t.render_batch(rows, threads=1),
                                              lambda: t.render_batch(rows, threads=2)))
        jinja_us, cpu_us = min(jinja), min(cpu)
        ratios.append(jinja_us / cpu_us)
        medians.append(statistics.median(jinja) / statistics.median(cpu))
        scalings.append(min(one) / min(two))
        print(f"  {os.path.basename(path):28s} jinja2 {jinja_us:8.2f} us/row   render_batch 1 thread {cpu_us:6.3f} us/row "
              f"CPU ({jinja_us / cpu_us:6.1f}x; medians {medians[-1]:6.1f}x)   wall: 1 thread {min(one):6.3f}, "
              f"2 threads {min(two):6.3f} us/row (scaling {min(one) / min(two):.2f}x; medians "
              f"{statistics.median(one) / statistics.median(two):.2f}x); page faults a row: jinja2 {jinja_faults:.2f}, "
              f"render_batch {cpu_faults:.2f}")
        figures = thread_figures(t, rows)
        if figures:
            cpu_scalings.append(print_thread_figures(figures, nrows))
        dcpu, = rounds(lambda: t.render_batch(distinct, threads=1), clock=time.process_time)
        dcpu = [x / nrows * 1e6 for x in dcpu]
        dfaults = faults_per_row(0, nrows)
        done, dtwo = ([x / nrows * 1e6 for x in side] for side in paired_rounds(
            lambda: t.render_batch(distinct, threads=1), lambda: t.render_batch(distinct, threads=2)))
        distinct_ratios.append(jinja_us / min(dcpu))
        distinct_scalings.append(min(done) / min(dtwo))
        print(f"  {'':28s} distinct row objects:            render_batch 1 thread {min(dcpu):6.3f} us/row "
              f"CPU ({jinja_us / min(dcpu):6.1f}x)   wall: 1 thread {min(done):6.3f}, 2 threads {min(dtwo):6.3f} us/row "
              f"(scaling {min(done) / min(dtwo):.2f}x); page faults a row {dfaults:.2f}")
        figures = thread_figures(t, distinct)
        if figures:
            distinct_cpu_scalings.append(print_thread_figures(figures, nrows))
    print(f"render_batch_speedup_min {min(ratios):.1f}x   (1 thread vs the Jinja2 loop, CPU time, best rounds; "
          f"of the medians {min(medians):.1f}x; target >= 50x)")
    print(f"render_batch_scaling_2_threads min {min(scalings):.2f}x  max {max(scalings):.2f}x   (target ~1.8x; "
          f"{os.cpu_count()} CPUs, wall clock: a loaded machine scales less; {load()})")
    print(f"render_batch_distinct_speedup_min {min(distinct_ratios):.1f}x   scaling min {min(distinct_scalings):.2f}x  "
          f"max {max(distinct_scalings):.2f}x   (rows as separate objects: each read in full)")
    if cpu_scalings:
        print(f"render_batch_scaling_from_cpu min {min(cpu_scalings):.2f}x  max {max(cpu_scalings):.2f}x   distinct rows "
              f"min {min(distinct_cpu_scalings):.2f}x  max {max(distinct_cpu_scalings):.2f}x   (2 threads on an idle "
              f"machine from per-thread CPU time, which load changes little; target ~1.8x)")

    from standin_tokenizer import StandInTokenizer
    special = {"bos_token": "<s>", "eos_token": "</s>"}
    cases = []
    for path in seeds:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for c in convs:
            ctx = {k: v for k, v in c.items() if k != "messages"}
            cases.append((text, c["messages"], ctx))

    def run(tokenizers, which):
        for text, msgs, ctx in which:
            try:
                tokenizers[text].apply_chat_template(msgs, tokenize=False, **ctx)
            except Exception:  # noqa: BLE001
                pass

    plain = {text: StandInTokenizer(text, special) for text, _, _ in cases}
    patched = {text: chatfmt.patch(StandInTokenizer(text, special)) for text, _, _ in cases}
    rendering = []
    for case in cases:
        try:
            plain[case[0]].apply_chat_template(case[1], tokenize=False, **case[2])
            rendering.append(case)
        except Exception:  # noqa: BLE001 - the reference fails this call
            pass
    run(plain, cases)
    run(patched, cases)
    for name, which in (("rendering", rendering), ("all", cases)):
        jinja, fast = rounds(lambda: run(plain, which), lambda: [run(patched, which) for _ in range(10)],
                             warm=0, clock=time.process_time)
        jinja = [x / len(which) * 1e6 for x in jinja]
        fast = [x / len(which) / 10 * 1e6 for x in fast]
        jinja_us, patched_us = min(jinja), min(fast)
        median = statistics.median(jinja) / statistics.median(fast)
        print(f"patch: tokenizer.apply_chat_template(tokenize=False) unpatched (Jinja2) {jinja_us:.2f} us, "
              f"patched {patched_us:.2f} us per call on {len(which)} {name} seeds x conversations (CPU time, best of "
              f"{ROUNDS} rounds)")
        if name == "rendering":
            print(f"patch_speedup {jinja_us / patched_us:.1f}x   (the calls that render; medians {median:.1f}x; "
                  f"target >= 20x; {load()})")
        else:
            print(f"patch_speedup_all_calls {jinja_us / patched_us:.1f}x   (medians {median:.1f}x; "
                  f"{len(cases) - len(rendering)} calls fail and are answered by the original method, to raise "
                  "transformers' own exception)")

if __name__ == "__main__":
    main()
