#!/usr/bin/env python3
"""caps_check.py — `chatfmt render --polyfill` and `--spans` against the
reference renderer (tests/caps_test.sh runs it).

Polyfills: for each template below x each shared conversation, the request
is rewritten here by the polyfill rules (written out independently of the C
code, driven by `chatfmt caps` of the template) and rendered by the oracle;
`chatfmt render --polyfill` must give the same text (or fail where the
oracle fails). Without --polyfill, chatfmt must equal the oracle on the
untouched request.

The rules (include/chatfmt.h, cf_render_options.polyfill):
  - no system role: the leading system message's text (typed parts joined)
    goes in front of the first user turn with string or list content,
    separated by a blank line (as a text part for lists); with no such
    turn, the system message becomes a user message;
  - only strings render (supports_string_content, not typed): list contents
    become the concatenation of their text parts (other parts dropped);
  - only typed parts render (requires_typed_content): non-empty string
    content of user/system/assistant turns becomes [{"type": "text", ...}];
  - requires_object_arguments: tool-call arguments (call.function.arguments,
    or call.arguments) holding JSON object text become that object.

The same for corpus/more: one template for each combination of rewrites
its caps ask for (the first by name), as the curated list is for the corpus.

Caps of every corpus/more template: `chatfmt caps` succeeds, with every key,
exactly where the reference compiles the template (one there does not).

Spans: spans_reference.py (transformers' tracker) vs chatfmt --spans, on the
corpus and corpus/more templates that use {% generation %} and on
tests/data/spans/*.jinja.

Usage: caps_check.py --bin CHATFMT --shared SHARED
Prints one line per failure and `N passed, N failed`; exit 1 on failure.
"""
import argparse
import copy
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NOW = "2026-01-02T03:04:05"

POLYFILL_TEMPLATES = [
    "seeds/glm45.jinja", "seeds/toolcall-qwen3.jinja", "seeds/nanbeige.jinja",
    "seeds/reasoning-qwen25.jinja", "seeds/command-a-reasoning.jinja",
    "corpus/templates/google__gemma-7b-it.jinja",             # no system role
    "corpus/templates/google__gemma-2-2b-it.jinja",
    "corpus/templates/HuggingFaceTB__SmolVLM-Instruct.jinja",  # typed parts only
    "corpus/templates/meta-llama__Llama-3.1-8B-Instruct.jinja",  # objects required
    "corpus/templates/Qwen__Qwen3-0.6B.jinja",
    "corpus/templates/mistralai__Mistral-7B-Instruct-v0.2-v1-template.jinja",
]

# Spans that transformers records and chatfmt does not (yet): the
# interpreter records a span only for a generation block written straight
# into the top-level output, and unconditionally. transformers records
# blocks inside macros / {% set %} captures / nested blocks too (at the
# top-level length at that moment), and none before the first top-level
# chunk is yielded. Listed here so the check reports them without failing;
# a fixed one is reported as XPASS.
SPANS_KNOWN = set()


def chatfmt(binary, *args):
    env = dict(os.environ, CHATFMT_NOW=NOW)
    p = subprocess.run([binary, *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def joined(content):
    if not isinstance(content, list):
        return content
    out = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            out.append(part["text"])
    return "".join(out)


def merge_system(messages):
    if not messages or not isinstance(messages[0], dict) or messages[0].get("role") != "system":
        return messages
    system = joined(messages[0].get("content"))
    if not isinstance(system, str):
        return messages
    rest = messages[1:]
    for i, m in enumerate(rest):
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                rest[i] = dict(m, content=system + "\n\n" + c)
            elif isinstance(c, list):
                rest[i] = dict(m, content=[{"type": "text", "text": system + "\n\n"}] + c)
            else:
                continue
            return rest
    return [dict(messages[0], role="user")] + rest


def object_arguments(call):
    fn = call.get("function")
    holder = fn if isinstance(fn, dict) else call
    args = holder.get("arguments")
    if not isinstance(args, str):
        return call
    try:
        parsed = json.loads(args)
    except ValueError:
        return call
    if not isinstance(parsed, dict):
        return call
    holder = dict(holder, arguments=parsed)
    return dict(call, function=holder) if isinstance(fn, dict) else holder


def polyfill(ctx, caps):
    ctx = copy.deepcopy(ctx)
    msgs = ctx["messages"]
    if not caps["supports_system_role"]:
        msgs = merge_system(msgs)
    join = caps["supports_string_content"] and not caps["supports_typed_content"]
    wrap = caps["requires_typed_content"]
    out = []
    for m in msgs:
        if isinstance(m, dict):
            c = m.get("content")
            if join and isinstance(c, list):
                m = dict(m, content=joined(c))
            elif wrap and m.get("role") in ("user", "system", "assistant") and isinstance(c, str) and c:
                m = dict(m, content=[{"type": "text", "text": c}])
            if caps["requires_object_arguments"] and isinstance(m.get("tool_calls"), list):
                m = dict(m, tool_calls=[object_arguments(tc) if isinstance(tc, dict) else tc
                                        for tc in m["tool_calls"]])
        out.append(m)
    ctx["messages"] = out
    return ctx


def oracle(hf_render, text, ctx):
    try:
        return True, hf_render.render(text, copy.deepcopy(ctx))
    except Exception as e:  # noqa: BLE001 - any failure is an outcome
        return False, f"{type(e).__name__}: {e}"


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL", what)
        return ok


CAPS_KEYS = ["supports_system_role", "supports_tools", "supports_tool_calls", "supports_parallel_tool_calls",
             "supports_tool_call_id", "supports_tool_responses", "supports_reasoning", "supports_documents",
             "requires_object_arguments", "requires_typed_content", "thinking_switch", "generation_prompt",
             "reply_format", "stop_strings", "prefix_stable"]


def rewrites(caps):
    """Which polyfill rules a template's caps ask for."""
    return (not caps["supports_system_role"], caps["requires_typed_content"], caps["requires_object_arguments"],
            caps["supports_string_content"] and not caps["supports_typed_content"])


def check_caps_more(binary, shared, hf_render, tally):
    """caps of every corpus/more template; returns one template per rewrite combination."""
    picked = {}
    paths = sorted(glob.glob(os.path.join(shared, "corpus", "more", "*.jinja")))
    refused = 0
    for path in paths:
        name = os.path.basename(path)
        try:
            hf_render.compile_template(open(path, encoding="utf-8").read())
            compiles = True
        except Exception:  # noqa: BLE001 - a template the reference refuses is data
            compiles = False
        rc, out, err = chatfmt(binary, "caps", path)
        if not compiles:
            refused += 1
            tally.check(rc != 0, f"caps corpus/more/{name}: the reference cannot compile it, chatfmt can")
            continue
        if not tally.check(rc == 0, f"caps corpus/more/{name}: {err.strip()[:200]}"):
            continue
        caps = json.loads(out)
        missing = [k for k in CAPS_KEYS if k not in caps]
        tally.check(not missing, f"caps corpus/more/{name}: no {missing}")
        if any(rewrites(caps)):
            picked.setdefault(rewrites(caps), os.path.relpath(path, shared))
    print(f"caps corpus/more: {len(paths)} templates, {refused} the reference cannot compile")
    return [picked[k] for k in sorted(picked)]


def check_polyfills(binary, shared, hf_render, tally, tmp, templates=POLYFILL_TEMPLATES, label="polyfill"):
    conversations = sorted(glob.glob(os.path.join(shared, "conversations", "*.json")))
    # string arguments for every tool-calling conversation, too
    extra = []
    for path in conversations:
        ctx = json.load(open(path, encoding="utf-8"))
        changed = False
        for m in ctx["messages"]:
            for tc in m.get("tool_calls") or []:
                f = tc.get("function", tc)
                if isinstance(f.get("arguments"), dict):
                    f["arguments"] = json.dumps(f["arguments"], ensure_ascii=False)
                    changed = True
        if changed:
            p = os.path.join(tmp, "strargs-" + os.path.basename(path))
            json.dump(ctx, open(p, "w", encoding="utf-8"))
            extra.append(p)
    applied = 0
    for rel in templates:
        template = os.path.join(shared, rel)
        text = open(template, encoding="utf-8").read()
        rc, out, err = chatfmt(binary, "caps", template)
        if not tally.check(rc == 0, f"caps {rel}: {err.strip()}"):
            continue
        caps = json.loads(out)
        for conv in conversations + extra:
            ctx = json.load(open(conv, encoding="utf-8"))
            name = f"{os.path.basename(rel)} x {os.path.basename(conv)}"
            fixed = polyfill(ctx, caps)
            applied += fixed != ctx
            want_ok, want = oracle(hf_render, text, fixed)
            rc, got, err = chatfmt(binary, "render", "--polyfill", template, conv)
            if want_ok:
                tally.check(rc == 0 and got == want, f"--polyfill {name}: {err.strip()[:200]}")
            else:
                tally.check(rc != 0, f"--polyfill {name}: oracle fails ({want[:120]}) but chatfmt renders")
            plain_ok, plain = oracle(hf_render, text, ctx)
            rc, got, err = chatfmt(binary, "render", template, conv)
            tally.check((rc == 0) == plain_ok and (not plain_ok or got == plain),
                        f"without --polyfill {name} differs from the oracle")
    print(f"{label}: {len(templates)} templates, {applied} of the requests were rewritten")
    tally.check(applied >= 20, f"{label}: only {applied} requests needed a polyfill: the check is too weak")


def check_spans(binary, shared, tally):
    templates = [p for d in ("templates", "more") for p in sorted(glob.glob(os.path.join(shared, "corpus", d, "*.jinja")))
                 if "{% generation %}" in open(p, encoding="utf-8").read()]
    cases = [(t, c) for t in templates
             for c in sorted(glob.glob(os.path.join(shared, "conversations", "*.json")))
             if "continue" not in os.path.basename(c)]
    edge = sorted(glob.glob(os.path.join(HERE, "data", "spans", "*.jinja")))
    cases += [(t, os.path.join(HERE, "data", "spans", "conversation.json")) for t in edge]
    nonempty = 0
    for template, conv in cases:
        env = dict(os.environ, CHATFMT_NOW=NOW, CHATFMT_SHARED=shared)
        ref = subprocess.run([sys.executable, os.path.join(HERE, "spans_reference.py"), template, conv],
                             capture_output=True, text=True, env=env)
        rc, got, err = chatfmt(binary, "render", "--spans", template, conv)
        name = f"--spans {os.path.basename(template)} x {os.path.basename(conv)}"
        if ref.returncode != 0:
            tally.check(rc != 0, f"{name}: the reference fails, chatfmt renders")
            continue
        nonempty += ref.stdout.rstrip("\n").rsplit("\n", 1)[-1] != "[]"
        same = rc == 0 and got == ref.stdout
        if os.path.basename(template) in SPANS_KNOWN:
            print(("XPASS " if same else "XFAIL ") + name + ("" if same else
                  f"  reference {ref.stdout.splitlines()[-1]}  chatfmt {got.splitlines()[-1] if got else err}"))
            continue
        tally.check(same, f"{name}\n  reference: {ref.stdout[-200:]!r}\n  chatfmt:   {got[-200:]!r} {err[:200]}")
    print(f"spans: {len(cases)} cases, {nonempty} with spans")
    tally.check(nonempty >= 20, f"only {nonempty} span cases have spans")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--shared", required=True)
    ap.add_argument("--tmp", default="/tmp")
    a = ap.parse_args()
    os.environ["CHATFMT_NOW"] = NOW
    sys.path.insert(0, os.path.join(a.shared, "oracle"))
    import hf_render
    tally = Tally()
    check_polyfills(a.bin, a.shared, hf_render, tally, a.tmp)
    if os.path.isdir(os.path.join(a.shared, "corpus", "more")):
        more = check_caps_more(a.bin, a.shared, hf_render, tally)
        check_polyfills(a.bin, a.shared, hf_render, tally, a.tmp, more, "polyfill corpus/more")
    check_spans(a.bin, a.shared, tally)
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
