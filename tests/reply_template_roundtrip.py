#!/usr/bin/env python3
"""reply_template_roundtrip.py — does chatfmt read back what each corpus
template writes? For every template of shared/corpus/templates and
shared/corpus/more, the reference renderer (shared/oracle/hf_render.py)
renders the prompt (one user turn and the generation prompt) and the same
conversation with one more assistant turn; the text between the two is what
a model trained on the template writes. `chatfmt parse --template T --tools F
--prompt P` must give that assistant turn back, whole and streamed (chunks of
1, 3 and 64 bytes, each equal to the whole parse).

Where the generation prompt differs from how the template prints history
(it opens <think> that history drops, say), the reply is the text after the
two renders' common part, cut back to the start of a marker if the common
part ends inside one, and that common part is the prompt: the pair a model
really sees. Where the full render goes on with the rest of the prompt, whitespace
aside (history lays the same turn header out differently), the prompt is
the real one and the reply what follows that header. Where the generation
prompt opens reasoning in words history never prints (Apriel 1.6's "Here are
my reasoning steps:") and the turn's reasoning follows the common part
straight away, the prompt is the real one too: the model writes its
reasoning after that opener. The turn's end marker (<|im_end|>, <|eot_id|>...) is cut off,
as a server stops there.

A server also stops at the first of the template's stop strings inside the
reply (those `chatfmt caps` reports that are end-of-turn tokens of ENDS;
`chatfmt parse --template` stops there too): DeepSeek R1 distills print a
tool-calling turn's content after <｜end▁of▁sentence｜>, Nemotron Nano v2 and
llama-cpp-python's template the calls after the content's end token. The
reply is cut there, and a scenario counts only where what it tests is in the
reply so cut, as a model's reply reaches the server.

Scenarios, each counted for a template only where it prints what the
scenario tests (every call's name, the reasoning, the content, the
non-ASCII text):
  call        one tool call           get_weather {"city": "Paris", "days": 3}
  two         two parallel calls      get_weather, get_time
  text        content + a call
  think       reasoning + content
  think_call  reasoning + a call
  nested      object and array arguments  plan_trip {"stops": [{...}], "options": {...}}
  unicode     non-ASCII content and arguments
  noargs      a call without arguments    get_location {}
The message must match: the calls (names, arguments as JSON values; ids
not compared), content and reasoning (stripped; absent = empty).

Usage (from the repository root, after `make`):
  python3 tests/reply_template_roundtrip.py [--chatfmt build/chatfmt] [--shared ../shared]
      [--known tests/KNOWN_DIFFERENCES.md] [--min-matched N] [--only TEXT]
      [--chunks 1,3,64] [--show N] [--json FILE] [--peer CMD] [-j JOBS] [-v]
The reference renders are cached in $ORACLE_CACHE (default build/oracle-cache)
under the hash of the cases, the oracle and the Python side, as
tests/run_tests.sh caches them. --peer CMD parses with another project's
parser instead: CMD reads JSON lines {"template", "tools", "prompt", "reply"}
on stdin and prints one {"message": {...}} or {"error": "..."} line each
(bench/compare_peers.sh passes llama.cpp's).
A (template, scenario) listed in tests/KNOWN_DIFFERENCES.md as
`- roundtrip:<template>|<scenario> — why` still counts as failed; the
report says how many failures are listed.
Last line: `round trip: M/N (template x scenario) ...`; exit status 0 when
M >= --min-matched.
"""
import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import replylib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tool(name, description, properties, required):
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


TOOLS = [
    tool("get_weather", "Get the weather", {"city": {"type": "string"}, "days": {"type": "integer"}}, ["city"]),
    tool("get_time", "Get the time", {"tz": {"type": "string"}}, ["tz"]),
    tool("plan_trip", "Plan a trip", {
        "stops": {"type": "array", "items": {"type": "object", "properties": {
            "city": {"type": "string"}, "nights": {"type": "integer"}}}},
        "options": {"type": "object", "properties": {
            "budget": {"type": "number"}, "flexible": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}}}}}, ["stops"]),
    tool("get_location", "Where the user is", {}, []),
]
WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
TIME = {"name": "get_time", "arguments": {"tz": "Europe/Paris"}}
TRIP = {"name": "plan_trip", "arguments": {
    "stops": [{"city": "Paris", "nights": 2}, {"city": "Lyon", "nights": 1}],
    "options": {"budget": 1200.5, "flexible": True, "tags": ["food", "art"]}}}
UNICODE_CALL = {"name": "get_weather", "arguments": {"city": "Zürich – 東京", "days": 2}}
LOCATION = {"name": "get_location", "arguments": {}}
USER = {"role": "user", "content": "What is the weather in Paris?"}

# name -> (calls, content, reasoning); what must come back
SCENARIOS = collections.OrderedDict([
    ("call", ([WEATHER], None, None)),
    ("two", ([WEATHER, TIME], None, None)),
    ("text", ([WEATHER], "Let me look that up.", None)),
    ("think", ([], "It is sunny.", "The user asks about the weather.")),
    ("think_call", ([WEATHER], None, "I should call the weather tool.")),
    ("nested", ([TRIP], None, None)),
    ("unicode", ([UNICODE_CALL], "Voilà : je regarde « Zürich » ☀️ 東京も", None)),
    ("noargs", ([LOCATION], None, None)),
])
# The end of a turn a server stops at (the model's stop token), cut off the reply.
ENDS = ['<|im_end|>', '<|eot_id|>', '<|eom_id|>', '<|end|>', '<|endoftext|>', '</s>', '<|END_OF_TURN_TOKEN|>',
        '<end_of_turn>', '<｜end▁of▁sentence｜>', '<|call|>', '<|return|>', '<|end_of_text|>',
        '[e~[', '<|observation|>', '<|user|>', '<eos>', '<turn|>', '<|endofassistant|>', '<seed:eos>',
        '<|end_of_sentence|>', '<|eos|>', '<|end▁of▁sentence|>', '<|tool_call_end|>', '<SPECIAL_12>']
BASE = {"bos_token": "<s>", "eos_token": "</s>"}
PINNED_NOW = "2026-03-14T15:09:26"   # strftime_now's clock for the reference (tests/run_tests.sh's)


def assistant_turn(calls, content, reasoning, string_args):
    msg = {"role": "assistant", "content": content or ""}
    if reasoning:
        msg["reasoning_content"] = reasoning
    if calls:
        msg["tool_calls"] = [{"id": "call_%d" % i, "type": "function", "function": {
            "name": c["name"],
            "arguments": json.dumps(c["arguments"], ensure_ascii=False) if string_args else c["arguments"]}}
            for i, c in enumerate(calls)]
    return msg


def context(messages, tools, generation_prompt):
    ctx = dict(BASE, messages=messages, add_generation_prompt=generation_prompt)
    if tools:
        ctx["tools"] = TOOLS
    return ctx


class Renders:
    """The reference's renders, asked for in batches (each cached): per
    template the two prompts (with and without tools) and each scenario's
    full conversation, its arguments a dict; then, where a template cannot
    print that or prints it as a Python dict, the full conversation with
    the arguments as the JSON string OpenAI sends (some templates print them
    as they are)."""

    def __init__(self, shared, cache_dir, templates):
        self.shared, self.cache_dir = shared, cache_dir
        self.text = {}
        for path in templates:
            with open(path, encoding="utf-8") as f:
                self.text[path] = f.read()

    def run(self, wanted):
        """{key: output or None} for wanted = {key: (template path, context)}."""
        keys = list(wanted)
        cases = [{"template_text": self.text[wanted[k][0]], "context": wanted[k][1]} for k in keys]
        results = oracle_renders(self.shared, cases, self.cache_dir) if cases else []
        return {k: (r["output"] if r.get("ok") else None) for k, r in zip(keys, results)}


def render_all(renders, templates):
    """{(path, scenario): (prompt, reply)} for every template and scenario the reference renders."""
    first = {}
    for path in templates:
        for tools in (False, True):
            first[(path, "prompt", tools)] = (path, context([USER], tools, True))
        for name, (calls, content, reasoning) in SCENARIOS.items():
            first[(path, name, False)] = (path, context([USER, assistant_turn(calls, content, reasoning, False)],
                                                        bool(calls), False))
    out = renders.run(first)

    def pair(path, name, string_args):
        prompt, full = out[(path, "prompt", bool(SCENARIOS[name][0]))], out.get((path, name, string_args))
        return split_reply(prompt, full, SCENARIOS[name][2]) if prompt is not None and full is not None else None

    second = {}
    for path in templates:
        for name, (calls, content, reasoning) in SCENARIOS.items():
            p = pair(path, name, False)
            if calls and (p is None or prints_python_dict(p[1])):
                second[(path, name, True)] = (path, context([USER, assistant_turn(calls, content, reasoning, True)],
                                                            True, False))
    out.update(renders.run(second))
    pairs = {}
    for path in templates:
        for name in SCENARIOS:
            p, q = pair(path, name, False), pair(path, name, True)
            if q is not None and (p is None or not prints_python_dict(q[1])):
                p = q
            if p is not None:
                pairs[(path, name)] = p
    return pairs


def oracle_renders(shared, cases, cache_dir):
    """hf_render.py --batch over CASES, from the cache when nothing changed
    (the key tests/run_tests.sh's oracle_run uses: cases, oracle, versions)."""
    oracle = os.path.join(shared, "oracle", "hf_render.py")
    data = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases).encode("utf-8")
    import importlib.metadata as md
    versions = "%s %s %s\n" % (sys.version, md.version("jinja2"), md.version("markupsafe"))
    with open(oracle, "rb") as f:
        key = hashlib.sha256(data + f.read() + versions.encode()).hexdigest()[:32]
    cached = os.path.join(cache_dir, key + ".jsonl")
    if not os.path.exists(cached) or os.path.getsize(cached) == 0:
        os.makedirs(cache_dir, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as f:
            f.write(data)
        try:
            # the clock pinned as tests/run_tests.sh pins it (the key does not hold it)
            env = dict(os.environ, PYTHONWARNINGS="ignore::SyntaxWarning", CHATFMT_NOW=PINNED_NOW, TZ="UTC")
            r = subprocess.run([sys.executable, oracle, "--batch", f.name], capture_output=True, env=env)
        finally:
            os.unlink(f.name)
        if r.returncode != 0:
            sys.exit("reply_template_roundtrip: the reference renderer failed: " + r.stderr.decode()[-500:])
        with open(cached + ".tmp.%d" % os.getpid(), "wb") as f:
            f.write(r.stdout)
        os.replace(cached + ".tmp.%d" % os.getpid(), cached)
    with open(cached, encoding="utf-8") as f:
        out = [json.loads(line) for line in f]
    if len(out) != len(cases):
        sys.exit("reply_template_roundtrip: %d reference results for %d cases" % (len(out), len(cases)))
    return out


def strip_end(s):
    while True:
        t = s.rstrip()
        for e in ENDS:
            if t.endswith(e):
                t = t[:-len(e)]
                break
        else:
            return t
        s = t


def after_same_text(rest, full, i):
    """Where full[i:] has gone through the text of rest, whitespace aside
    (None when it does not hold that text, or rest is only whitespace)."""
    if not rest.strip():
        return None
    for ch in rest:
        if ch.isspace():
            continue
        while i < len(full) and full[i].isspace():
            i += 1
        if i >= len(full) or full[i] != ch:
            return None
        i += 1
    return i


def split_reply(prompt, full, reasoning=None):
    """(prompt a model sees, reply it writes) from the two renders."""
    if full.startswith(prompt):
        return prompt, strip_end(full[len(prompt):])
    i = 0
    n = min(len(prompt), len(full))
    while i < n and prompt[i] == full[i]:
        i += 1
    # the rest of the prompt (its generation prompt) follows in the full
    # render, whitespace aside: history prints the same turn header with
    # other layout; the model sees the real prompt and writes what follows
    end = after_same_text(prompt[i:], full, i)
    if end is not None:
        return prompt, strip_end(full[end:])
    opener = prompt[i:].strip()
    if reasoning and opener and opener not in full[i:] and full[i:].lstrip().startswith(reasoning):
        # the generation prompt opened the reasoning in words history never prints
        return prompt, strip_end(full[i:])
    for opener, closer in (("<", ">"), ("[", "]")):   # never start the reply at "ool_call>"
        k = full.rfind(opener, 0, i)
        if k > full.rfind(closer, 0, i):
            i = k
    return full[:i], strip_end(full[i:])


def prints_python_dict(text):
    return "{'" in text


def cut_at_stop(reply, stops):
    """The reply up to the first of stops in it (a server stops there)."""
    at = min([reply.find(s) for s in stops if s in reply] or [-1])
    return reply if at < 0 else strip_end(reply[:at])


def build(templates, pairs, stops_of):
    """The counted (template, scenario) cases: prompt, reply, expectation."""
    out = []
    for path in templates:
        for name, (calls, content, reasoning) in SCENARIOS.items():
            if (path, name) not in pairs:
                continue
            prompt, reply = pairs[(path, name)]
            reply = cut_at_stop(reply, stops_of(path))
            # counted only where the template prints what the scenario tests
            if calls and not all(c["name"] in reply for c in calls):
                continue
            if reasoning and reasoning not in reply:
                continue
            if name == "text" and content not in reply:
                continue
            want_content = content if content and content in reply else None
            out.append({"template": path, "scenario": name, "prompt": prompt, "reply": reply,
                        "calls": calls, "content": want_content, "reasoning": reasoning})
    return out


def judge(case, msg):
    """What differs from the scenario's message ([] = the same)."""
    if msg is None:
        return ["no message"]
    problems = []
    got = msg.get("tool_calls") or []
    names = [(c.get("function") or {}).get("name") for c in got]
    if names != [c["name"] for c in case["calls"]]:
        problems.append("calls %s, want %s" % (replylib.short(names), replylib.short([c["name"] for c in case["calls"]])))
    else:
        for i, (c, w) in enumerate(zip(got, case["calls"])):
            if not replylib.json_equal(replylib.arguments_of(c), w["arguments"]):
                problems.append("call %d arguments %s, want %s" % (
                    i, replylib.short(replylib.arguments_of(c)), replylib.short(w["arguments"])))
    for key, want in (("content", case["content"]), ("reasoning_content", case["reasoning"])):
        have = (msg.get(key) or "").strip()
        if have != (want or ""):
            problems.append("%s %s, want %s" % (key, replylib.short(have), replylib.short(want or "")))
    return problems


_caps = {}


def caps(chatfmt, template):
    """What `chatfmt caps` reports for a template ({} when it fails)."""
    if template not in _caps:
        r = subprocess.run([chatfmt, "caps", template], capture_output=True, text=True)
        try:
            _caps[template] = json.loads(r.stdout)
        except ValueError:
            _caps[template] = {}
    return _caps[template]


def reply_format(chatfmt, template):
    """The reply format `chatfmt caps` reports for a template."""
    return caps(chatfmt, template).get("reply_format") or "?"


def end_stops(chatfmt, template):
    """The template's stop strings that end a turn (in ENDS): where a server stops."""
    return [s for s in caps(chatfmt, template).get("stop_strings") or [] if s in ENDS]


def run_peer(cmd, cases):
    lines = "".join(json.dumps({"template": c["template"], "tools": TOOLS if c["calls"] else None,
                                "prompt": c["prompt"], "reply": c["reply"]}, ensure_ascii=False) + "\n"
                    for c in cases)
    r = subprocess.run(cmd, shell=True, input=lines.encode("utf-8"), capture_output=True)
    out = r.stdout.decode("utf-8", "replace").splitlines()
    if r.returncode != 0 or len(out) != len(cases):
        sys.exit("reply_template_roundtrip: the peer gave %d lines for %d cases (exit %d): %s" % (
            len(out), len(cases), r.returncode, r.stderr.decode("utf-8", "replace")[-500:]))
    results = []
    for line in out:
        row = json.loads(line)
        results.append((row.get("message"), row.get("error")))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--chatfmt", default=os.path.join(ROOT, "build", "chatfmt"))
    ap.add_argument("--shared", default=os.environ.get("CHATFMT_SHARED", os.path.join(ROOT, "..", "shared")))
    ap.add_argument("--known", default=os.path.join(ROOT, "tests", "KNOWN_DIFFERENCES.md"))
    ap.add_argument("--min-matched", type=int, default=0)
    ap.add_argument("--only", default=None, help="templates whose file name contains this")
    ap.add_argument("--chunks", default="1,3,64", help="streamed chunk sizes ('' for none)")
    ap.add_argument("--show", type=int, default=10)
    ap.add_argument("--json", default=None, help="write every case, its reply and parse here")
    ap.add_argument("--failures", default=None, help="write every failure here")
    ap.add_argument("--peer", default=None, help="a peer's parser command (see above)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    chunks = [int(x) for x in a.chunks.split(",") if x.strip()]

    templates = sorted(os.path.join(a.shared, "corpus", d, f) for d in ("templates", "more")
                       for f in os.listdir(os.path.join(a.shared, "corpus", d)) if f.endswith(".jinja"))
    if a.only:
        templates = [t for t in templates if a.only in os.path.basename(t)]
    cache = os.environ.get("ORACLE_CACHE", os.path.join(ROOT, "build", "oracle-cache"))
    pairs = render_all(Renders(a.shared, cache, templates), templates)
    printed = sorted({path for path, _ in pairs})
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:   # (caps, cached per template)
        list(pool.map(lambda t: caps(a.chatfmt, t), printed))
    cases = build(templates, pairs, lambda t: end_stops(a.chatfmt, t))
    known = replylib.known_ids(a.known, "roundtrip")

    tmp = tempfile.mkdtemp(prefix="chatfmt-roundtrip-")
    try:
        if a.peer:
            parsed = run_peer(a.peer, cases)
            streams = [[] for _ in cases]
        else:
            parser = replylib.Parser(a.chatfmt, tmp)

            def one(job):
                c, chunk = job
                return parser.parse(c["reply"], chunk=chunk, template=c["template"],
                                    tools=TOOLS if c["calls"] else None, prompt=c["prompt"])
            jobs = [(c, k) for c in cases for k in [None] + chunks]
            with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
                flat = list(pool.map(one, jobs))
            per = 1 + len(chunks)
            parsed = [flat[i * per] for i in range(len(cases))]
            streams = [flat[i * per + 1:(i + 1) * per] for i in range(len(cases))]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    per_template = collections.OrderedDict()
    per_scenario = collections.OrderedDict((s, [0, 0]) for s in SCENARIOS)
    matched = stream_same = stream_total = listed = 0
    failures, rows = [], []
    for c, (msg, err), st in zip(cases, parsed, streams):
        problems = judge(c, msg) if msg is not None else ["parse failed: %s" % err]
        for k, (smsg, serr) in zip(chunks, st):
            stream_total += 1
            if smsg is not None and replylib.same_message(smsg, msg):
                stream_same += 1
            else:
                problems.append("streamed in %d-byte chunks: %s" % (
                    k, replylib.short(smsg) if smsg is not None else serr))
        ok = not problems
        matched += ok
        t = os.path.basename(c["template"])
        per_template.setdefault(t, collections.OrderedDict())[c["scenario"]] = ok
        per_scenario[c["scenario"]][0] += ok
        per_scenario[c["scenario"]][1] += 1
        key = "%s|%s" % (t, c["scenario"])
        if not ok:
            if key in known:
                listed += 1
            else:
                failures.append("FAIL %s\n    prompt ends: %s\n    reply: %s\n    %s" % (
                    key, replylib.short(c["prompt"][-60:]), replylib.short(c["reply"], 240), "\n    ".join(problems)))
        rows.append(dict(c, template=t, template_path=c["template"], ok=ok, got=msg, problems=problems))

    width = max([len(t) for t in per_template] + [10])
    print("%-*s  %s" % (width, "template", "  ".join("%-10s" % s for s in SCENARIOS)))
    for t, res in per_template.items():
        marks = ["%-10s" % ({True: "ok", False: "FAIL"}.get(res.get(s), "-")) for s in SCENARIOS]
        print("%-*s  %s" % (width, t, "  ".join(marks)))
    print("per scenario: " + ", ".join("%s %d/%d" % (s, p, n) for s, (p, n) in per_scenario.items()))
    if not a.peer:   # the format chatfmt finds for each template (caps), and how its cases fare
        per_format = collections.OrderedDict()
        for row in rows:
            fmt = reply_format(a.chatfmt, row["template_path"])
            t = per_format.setdefault(fmt, [0, 0])
            t[0] += row["ok"]
            t[1] += 1
        print("per chatfmt format: " + ", ".join("%s %d/%d" % (f, p, n) for f, (p, n) in sorted(per_format.items())))
    full = sum(1 for res in per_template.values() if all(res.values()))
    print("templates: %d of %d corpus templates print a tool call or reasoning; %d round-trip every scenario they print" % (
        len(per_template), len(templates), full))
    if chunks and not a.peer:
        print("streamed == whole: %d/%d parses (chunks of %s bytes)" % (stream_same, stream_total, a.chunks))
    for line in failures[:None if a.v else a.show]:
        print(line)
    if len(failures) > a.show and not a.v:
        print("... %d more failures (-v or --failures FILE prints them all)" % (len(failures) - a.show))
    if a.failures:
        with open(a.failures, "w", encoding="utf-8") as f:
            f.write("".join(x + "\n" for x in failures))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, ensure_ascii=False, indent=1)
    unknown = sorted(set(known) - {"%s|%s" % (os.path.basename(c["template"]), c["scenario"]) for c in cases})
    if unknown and not a.only:
        print("note: %s lists cases the round trip does not count: %s" % (a.known, ", ".join(unknown)))
    n = len(cases)
    streamed = "; streamed == whole %d/%d" % (stream_same, stream_total) if stream_total else ""
    print("round trip: %d/%d (template x scenario) matched (%.3f); %d of %d templates all ok%s; "
          "%d failures listed in KNOWN_DIFFERENCES; threshold %d" % (
              matched, n, matched / max(n, 1), full, len(per_template), streamed, listed, a.min_matched))
    return 0 if matched >= a.min_matched else 1


if __name__ == "__main__":
    sys.exit(main())
