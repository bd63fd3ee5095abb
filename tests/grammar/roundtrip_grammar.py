#!/usr/bin/env python3
"""roundtrip_grammar.py — chatfmt's tool-call grammars against what templates really write.

  python3 tests/grammar/roundtrip_grammar.py CHATFMT LLAMA_CHECK SHARED [-v]

For every seed and corpus template whose reply format has tool calls (the format
`chatfmt grammar` detects), and the first template of SHARED/corpus/more for each
format none of those covers, the reference renderer (SHARED/oracle/hf_render.py)
renders the reply round trip's scenarios (SHARED/tools/reply_roundtrip.py: one call,
two parallel calls, content + call, reasoning + content): the text between the prompt
and the conversation with the assistant turn is what the model wrote. Only replies
that `chatfmt parse` reads back as written are used (the grammar constrains what the
parser reads). llama.cpp's own grammar engine (LLAMA_CHECK), fed character by
character, must

  accept every such reply: tool_choice auto (lazy; a reply with calls must fire a
  trigger), required and the named tool (replies with calls and nothing before them),
  parallel calls off (one call);
  reject replies that break the request, rendered by the same template: an unknown
  tool, a missing required argument, an argument of the wrong type (auto), a second
  call with parallel calls off, content before the call with tool_choice required,
  the other tool with tool_choice naming one.

Every structural tag must have xgrammar's triggered_tags shape (each tag's begin starts
with a trigger, json_schema contents are schemas), and python-lark must accept every
round-trip reply with the Lark grammar of the whole reply (tool_choice auto).

Every grammar must parse. Prints "PASS grammar_roundtrip (...)" or FAIL with cases.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
except ImportError:   # Debian's python3-jsonschema beside another python3
    sys.path.append("/usr/lib/python3/dist-packages")
    import jsonschema


def load_roundtrip(shared):
    spec = importlib.util.spec_from_file_location("reply_roundtrip", os.path.join(shared, "tools", "reply_roundtrip.py"))
    mod = importlib.util.module_from_spec(spec)
    saved = sys.argv
    sys.argv = ["reply_roundtrip"]
    spec.loader.exec_module(mod)
    sys.argv = saved
    return mod


def main(argv):
    verbose = "-v" in argv
    only = [a[len("--only="):] for a in argv if a.startswith("--only=")]   # template names containing these (debugging)
    chatfmt, check, shared = [a for a in argv if a != "-v" and not a.startswith("--only=")][:3]
    rr = load_roundtrip(shared)
    dirs = [os.path.join(shared, "seeds"), os.path.join(shared, "corpus", "templates")]
    def listed(d):
        return sorted(os.path.join(d, f) for f in (os.listdir(d) if os.path.isdir(d) else [])
                      if f.endswith(".jinja") and (not only or any(o in f for o in only)))
    files = [p for d in dirs for p in listed(d)]
    # templates of the wider corpus stand in for formats the seeds and the
    # corpus do not write (the first that reads back, per format)
    more = set(listed(os.path.join(shared, "corpus", "more")))
    files += sorted(more)
    covered = set()
    tmp = tempfile.mkdtemp(prefix="grammar-rt-")
    tools_path = os.path.join(tmp, "tools.json")
    with open(tools_path, "w") as f:
        json.dump(rr.TOOLS, f)

    def write(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def grammar(tpl, prompt, *opts):
        r = subprocess.run([chatfmt, "grammar", tpl, "--tools", tools_path, "--prompt", write("prompt.txt", prompt), *opts],
                           capture_output=True, text=True, timeout=60)
        return json.loads(r.stdout) if r.returncode == 0 else None

    def stop_strings(tpl):
        # where a server stops the model: the grammar's extra stops and the
        # template's own (caps), as `chatfmt parse --template` cuts there
        r = subprocess.run([chatfmt, "caps", tpl], capture_output=True, text=True, timeout=60)
        return json.loads(r.stdout).get("stop_strings") or [] if r.returncode == 0 else []

    def cut(d, stops):
        for stop in stops:
            if stop and stop in d:
                d = d[:d.index(stop)]
        return d

    def parses_back(tpl, reply, prompt, calls, content, reasoning):
        return rr.judge(rr.parse(chatfmt, tpl, reply, prompt, tmp), calls, content, reasoning)

    def call(name, args):
        return {"name": name, "arguments": args}

    requests, expect, labels = [], [], []
    shape_errors, lark_checks = [], []   # structural tags; (template, lark grammar, replies) for python-lark

    def check_shape(g, label):
        """xgrammar's triggered_tags structural tag, as its documentation describes it."""
        st = g.get("structural_tag") or {}
        f = st.get("format") or {}
        problems = []
        if st.get("type") != "structural_tag" or f.get("type") != "triggered_tags":
            problems.append("not a triggered_tags structural tag")
        triggers = f.get("triggers")
        if not (isinstance(triggers, list) and triggers and all(isinstance(t, str) and t for t in triggers)):
            problems.append("triggers must be non-empty strings")
        for tag in f.get("tags") or [None]:
            if not isinstance(tag, dict) or tag.get("type") != "tag" or not isinstance(tag.get("begin"), str) \
                    or not isinstance(tag.get("end"), str):
                problems.append(f"bad tag {tag!r:.100}")
                continue
            if not any(tag["begin"].startswith(t) for t in triggers or []):
                problems.append(f"tag begin {tag['begin']!r} starts with no trigger")
            content = tag.get("content") or {}
            if content.get("type") == "json_schema":
                try:
                    jsonschema.Draft202012Validator.check_schema(content["json_schema"])
                except Exception as e:  # noqa: BLE001 - reported as the failure
                    problems.append(f"json_schema content is not a schema: {e}")
            elif content.get("type") != "grammar" or not isinstance(content.get("grammar"), str):
                problems.append(f"content {content!r:.100}")
        for key in ("at_least_one", "stop_after_first"):
            if not isinstance(f.get(key), bool):
                problems.append(f"{key} must be a boolean")
        if problems:
            shape_errors.append(f"{label}: {'; '.join(problems)}")

    def check_case(g, reply, should_accept, must_fire, label):
        requests.append({"grammar": g["grammar"], "lazy": g["grammar_lazy"], "triggers": g["grammar_triggers"], "texts": [reply]})
        expect.append((should_accept, must_fire))
        labels.append(label)

    templates = 0
    for path in files:
        tpl = open(path, encoding="utf-8").read()
        probe = grammar(path, "")
        if not probe or (path in more and probe["format"] in covered):
            continue   # a format without tool calls, or one already covered
        stops = list(probe["additional_stops"]) + stop_strings(path)
        cases = {}
        # and a string argument the template writes in a verbatim section
        # (MiniCPM 5 wraps one holding '<', '&' or a newline in CDATA, which
        # may then hold the parameter's own closer): kept where it does
        verbatim_call = call("get_weather", {"city": "Paris </param> & <b>\nnorth", "days": 3})
        verbatim = ("verbatim", dict(role="assistant", content="", tool_calls=[rr.tc(verbatim_call, 0)]), [verbatim_call], None, None)
        for name, asst, calls, content, reasoning in [*rr.scenarios(), verbatim]:
            d, prompt = rr.delta(tpl, asst, rr.TOOLS if calls else None)
            if d is None and calls:
                asst = dict(asst, tool_calls=[rr.tc(c, i, True) for i, c in enumerate(calls)])
                d, prompt = rr.delta(tpl, asst, rr.TOOLS)
            if d is None or (calls and not all(c["name"] in d for c in calls)) or (reasoning and reasoning not in d):
                continue
            d = cut(d, stops)   # the model stops there
            if name == "verbatim" and "<![CDATA[" not in d:
                continue
            if not parses_back(path, d, prompt, calls, content, reasoning):
                continue
            cases[name] = (d, prompt, asst)
        if not cases:
            continue
        templates += 1
        covered.add(probe["format"])
        base = os.path.basename(path)
        lark_replies = []
        for name, (reply, prompt, asst) in cases.items():
            has_calls = name != "think"
            auto = grammar(path, prompt)
            check_case(auto, reply, True, has_calls, f"{base} {name} auto")
            check_shape(auto, f"{base} {name}")
            lark_replies.append((auto["lark"], reply))
            if not has_calls:
                continue
            at = [reply.find(t["value"]) for t in probe["grammar_triggers"] if t["value"] in reply]
            content_first = name == "text" and at and reply.find("Let me look") < min(at)
            req = grammar(path, prompt, "--tool-choice", "required")
            check_case(req, reply, not content_first, False, f"{base} {name} required" + (" (content first)" if content_first else ""))
            single = grammar(path, prompt, "--parallel-tool-calls", "false")
            check_case(single, reply, name != "two", True, f"{base} {name} parallel=false")
            named = grammar(path, prompt, "--tool-choice", "get_weather")
            check_case(named, reply, name != "two" and not content_first, False, f"{base} {name} tool_choice=get_weather")
        lark_checks.append((base, lark_replies))
        # broken calls, rendered by the template itself
        if "call" in cases:
            _, prompt, asst = cases["call"]
            auto = grammar(path, prompt)
            for label, bad in (("unknown tool", call("get_wether", {"city": "Paris", "days": 3})),
                               ("missing required argument", call("get_weather", {"days": 3})),
                               ("wrong type", call("get_weather", {"city": "Paris", "days": "three"}))):
                as_string = isinstance(asst["tool_calls"][0]["function"]["arguments"], str)
                a2 = dict(asst, tool_calls=[rr.tc(bad, 0, as_string)])
                d, _ = rr.delta(tpl, a2, rr.TOOLS)
                if d is None or bad["name"] not in d:
                    continue
                d = cut(d, stops)
                check_case(auto, d, False, True, f"{base} {label}")

    # every reply format with tool calls has a grammar llama.cpp reads, in
    # each mode (formats no corpus template writes are covered here)
    listed = subprocess.run([chatfmt, "formats"], capture_output=True, text=True, timeout=60).stdout
    names = sorted({ln.split()[0] for ln in listed.splitlines() if ln[:1].isalpha() and len(ln.split()) > 1
                    and ln.split()[0] == ln.split()[0].lower() and ln.split()[0] not in ("all", "plain")})
    missing = []
    for fname in names:
        for opts in ((), ("--tool-choice", "required"), ("--parallel-tool-calls", "false")):
            r = subprocess.run([chatfmt, "grammar", "--format", fname, "--tools", tools_path, *opts],
                               capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                missing.append(f"{fname} {' '.join(opts)}: {r.stderr.strip()[:120]}")
                continue
            g = json.loads(r.stdout)
            # the empty reply: a lazy grammar never fires; a required one must reject it
            check_case(g, "", g["grammar_lazy"], False, f"format {fname} {' '.join(opts)}".strip())
    for m in missing:
        print("  no grammar: " + m)

    res = subprocess.run([check], input="".join(json.dumps(r, ensure_ascii=False) + "\n" for r in requests),
                         capture_output=True, text=True, timeout=600)
    out = [json.loads(x) for x in res.stdout.splitlines() if x.strip()]
    if res.returncode != 0 or len(out) != len(requests):
        print(f"FAIL grammar_roundtrip (llama.cpp's engine exited {res.returncode}: {res.stderr[-300:]})")
        return 1
    bad = []
    acc_ok = acc_n = rej_ok = rej_n = fmt_ok = 0
    for r, (should, must_fire), label, req in zip(out, expect, labels, requests):
        if not r.get("parsed"):
            bad.append(f"{label}: grammar does not parse: {r.get('error', '')[:200]}")
            continue
        got, fired = r["accepted"][0], r["triggered"][0]
        if label.startswith("format "):
            if got == should:
                fmt_ok += 1
            else:
                bad.append(f"{label}: the empty reply {'rejected' if should else 'accepted'}")
            continue
        if should:
            acc_n += 1
            ok = got and (fired or not must_fire)
            acc_ok += ok
        else:
            rej_n += 1
            ok = not got and (fired or not must_fire)
            rej_ok += ok
        if not ok:
            bad.append(f"{label}: expected {'accept' if should else 'reject'}, got accepted={got} triggered={fired}: {req['texts'][0][:160]!r}")
    if verbose or bad:
        for b in bad[:30]:
            print("  " + b)
    for e in shape_errors[:10]:
        print("  structural tag: " + e)
    status = "PASS" if not bad and not missing and not shape_errors and (templates >= 10 or only) and acc_n and rej_n else "FAIL"
    print(f"{status} grammar_roundtrip ({templates} templates; accepted {acc_ok}/{acc_n} round-trip replies, "
          f"rejected {rej_ok}/{rej_n} broken ones, through llama.cpp's grammar engine; {len(names)} reply formats "
          f"with grammars it reads, {fmt_ok}/{3 * len(names)} modes right on the empty reply)")
    # python-lark on the Lark grammar of the whole reply (tool_choice auto)
    lark = load_lark()
    if lark is None:
        print("SKIP grammar_roundtrip_lark (python3-lark is not installed)")
        return 0 if status == "PASS" else 1
    lark_ok = lark_n = 0
    lark_bad = []
    cache = {}
    for base, pairs in lark_checks:
        for text, reply in pairs:
            lark_n += 1
            try:
                parser = cache.get(text) or lark.Lark(text, start="start", parser="earley", lexer="dynamic")
                cache[text] = parser
                parser.parse(reply)
                lark_ok += 1
            except lark.exceptions.LarkError as e:
                lark_bad.append(f"{base}: {str(e)[:160]}")
    for b in lark_bad[:10]:
        print("  lark: " + b)
    lstatus = "PASS" if not lark_bad and lark_n else "FAIL"
    print(f"{lstatus} grammar_roundtrip_lark (python-lark accepted {lark_ok}/{lark_n} round-trip replies with the "
          f"whole-reply Lark grammar of tool_choice auto; {len(cache)} grammars)")
    return 0 if status == "PASS" and lstatus == "PASS" else 1


def load_lark():
    try:
        import lark
        return lark
    except ImportError:
        sys.path.append("/usr/lib/python3/dist-packages")   # Debian's python3-lark
        try:
            import lark
            return lark
        except ImportError:
            return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
