#!/usr/bin/env python3
"""gen_cases.py — writes tests/reply_cases/cases.jsonl for tests/test_reply.c.

Usage (from the repository root): python3 tests/reply_cases/gen_cases.py [SHARED]
SHARED defaults to $CHATFMT_SHARED or ../shared.

Every case is one JSON object:
  {"name", "format", "tools" (list|null), "tail" (str|null), "reply" (str) or
   "reply_hex" (bytes, for invalid UTF-8), "expect" (the exact compact JSON the
   whole parse must print), "broken" (bool), "keywords" (markup words)}

Where replies come from:
  - "rendered" cases: the assistant turn is rendered by the seed template itself
    (the reference renderer, ../shared/oracle/hf_render.py), so the reply is
    exactly what the model was trained to write; the reply is the full render
    minus the generation-prompt render.
  - "built" cases (text after calls, cut-off, malformed, ...): the reply is
    assembled from the same call writers, which are first checked against the
    template's own rendering.
The expected message follows the contract in include/chatfmt.h (@@REPLIES@@):
content/reasoning stripped of ASCII whitespace (null when empty); hermes and
command-a arguments are the JSON text the model wrote; glm45 arguments are
rebuilt as json.dumps does, each value typed by the tool schema
(glm_args_text below is the Python statement of that rule).
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = (sys.argv[1] if len(sys.argv) > 1 else
          os.environ.get("CHATFMT_SHARED", os.path.join(HERE, "..", "..", "..", "shared")))
sys.path.insert(0, os.path.join(SHARED, "oracle"))
import hf_render  # noqa: E402

SEEDS = os.path.join(SHARED, "seeds")
sys.path.insert(0, HERE)
from expect import WS, strip_or_none  # noqa: E402


def seed(name):
    with open(os.path.join(SEEDS, name), encoding="utf-8") as f:
        return f.read()


def dumps(v):
    return json.dumps(v, ensure_ascii=False)


def compact(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


# ---- tools ---------------------------------------------------------------

def fn(name, props, required=()):
    return {"type": "function", "function": {
        "name": name, "description": name.replace("_", " "),
        "parameters": {"type": "object", "properties": props, "required": list(required)}}}


TOOLS = [
    fn("get_weather", {"city": {"type": "string"},
                       "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, ["city"]),
    fn("search_docs", {"query": {"type": "string"}, "limit": {"type": "integer"},
                       "filters": {"type": "object"}, "exact": {"type": "boolean"}}, ["query"]),
    fn("lookup", {"zip": {"type": "string"}, "code": {"type": ["string", "null"]},
                  "version": {"anyOf": [{"type": "number"}, {"type": "string"}]},
                  "tag": {"enum": ["007", "008"]}, "count": {"oneOf": [{"type": "integer"}, {"type": "null"}]},
                  "ratio": {"type": "number"}, "anything": {}}),
    fn("run_python", {"code": {"type": "string"}, "timeout_s": {"type": "number"}}, ["code"]),
    fn("configure", {"matrix": {"type": "array"}, "options": {"type": "object"},
                     "label": {"type": "string"}}),
    fn("ping", {}),
]


def schema_of(tools, name, key):
    for t in tools or []:
        f = t.get("function", t)
        if f.get("name") == name:
            return f.get("parameters", {}).get("properties", {}).get(key)
    return None


def allows_string(s, depth=0):
    """The documented rule: type / type list / enum / const / anyOf / oneOf."""
    if not isinstance(s, dict) or depth > 32:
        return False
    if "type" in s:
        t = s["type"]
        return t == "string" if isinstance(t, str) else isinstance(t, list) and "string" in t
    if "enum" in s:
        return isinstance(s["enum"], list) and any(isinstance(x, str) for x in s["enum"])
    if "const" in s:
        return isinstance(s["const"], str)
    return any(allows_string(b, depth + 1) for k in ("anyOf", "oneOf")
               for b in (s.get(k) if isinstance(s.get(k), list) else []))


def strict_json(text):
    def no_constants(c):
        raise ValueError(c)
    try:
        json.loads(text, parse_constant=no_constants)
        return True
    except ValueError:
        return False


def glm_raw(v):
    """How the GLM template writes a value: strings raw, the rest as JSON."""
    return v if isinstance(v, str) else dumps(v)


def glm_args_text(tools, name, args):
    """glm45 arguments as the parser builds them from the raw values."""
    parts = []
    for k, v in args.items():
        raw = glm_raw(v)
        if not allows_string(schema_of(tools, name, k)) and strict_json(raw):
            text = raw.strip(" \t\n\r")
        else:
            text = dumps(raw)
        parts.append(dumps(k.strip(WS)) + ": " + text)
    return "{" + ", ".join(parts) + "}"


# ---- call writers (what each template renders; checked against it) ------

def hermes_call(name, args):
    return '<tool_call>\n{"name": "' + name + '", "arguments": ' + dumps(args) + '}\n</tool_call>'


def glm_call(name, args):
    body = "".join("<arg_key>" + k + "</arg_key>\n<arg_value>" + glm_raw(v) + "</arg_value>\n"
                   for k, v in args.items())
    return "<tool_call>" + name + "\n" + body + "</tool_call>"


def cmda_item(i, name, args):
    return '{"tool_call_id": "' + str(i) + '", "tool_name": "' + name + '", "parameters": ' + dumps(args) + '}'


def cmda_action(calls, first_id=0):
    return ("<|START_ACTION|>[\n" + ",".join(cmda_item(first_id + i, n, a) for i, (n, a) in enumerate(calls)) +
            "]<|END_ACTION|>")


# ---- families --------------------------------------------------------------

# hermes markup: <tool_call> and the other tags models wrap a call in (<function_call>,
# <tools>, <response>, <json>, <xml>, <function=NAME>, a ```json code block)
HERMES_WORDS = ["think", "tool", "call", "name", "arguments", "parameters", "function", "tools", "response",
                "json", "xml", "JSON"]   # (a code block's ``` is not a word)
FAMILIES = {
    "glm45": {"format": "glm45", "template": "glm45.jinja", "end": "",
              "keywords": ["think", "tool", "call", "arg", "key", "value"]},
    "qwen3": {"format": "hermes", "template": "toolcall-qwen3.jinja", "end": "<|im_end|>\n",
              "keywords": HERMES_WORDS},
    "nanbeige": {"format": "hermes", "template": "nanbeige.jinja", "end": "<|im_end|>\n",
                 "keywords": HERMES_WORDS},
    "qwen25": {"format": "hermes", "template": "reasoning-qwen25.jinja", "end": "<|im_end|>\n",
               "keywords": HERMES_WORDS},
    "command-a": {"format": "command-a", "template": "command-a-reasoning.jinja", "end": "",
                  "keywords": ["START", "END", "THINKING", "ACTION", "RESPONSE", "TEXT", "OF", "TURN", "TOKEN",
                               "co", "tool", "call", "id", "name", "parameters"]},
}

USER = {"role": "user", "content": "Please help."}


def render_reply(fam, msg, tools, extra=None):
    """The assistant turn as the template writes it, and the prompt's tail."""
    text = seed(FAMILIES[fam]["template"])
    ctx = dict(extra or {})
    ctx.update({"tools": tools, "bos_token": "<s>", "eos_token": "</s>"})
    prompt = hf_render.render(text, dict(ctx, messages=[USER], add_generation_prompt=True))
    full = hf_render.render(text, dict(ctx, messages=[USER, msg], add_generation_prompt=False))
    assert full.startswith(prompt), (fam, prompt[-80:], full[len(prompt) - 80:])
    reply = full[len(prompt):]
    end = FAMILIES[fam]["end"]
    if end and reply.endswith(end):
        reply = reply[:-len(end)]
    return reply, prompt[-200:]




def call_args_text(fam, tools, name, args):
    if fam == "glm45":
        return glm_args_text(tools, name, args)
    return dumps(args)


def expect(fam, content, reasoning, calls=(), tools=None, ids=None, citations=None):
    m = {"role": "assistant", "content": strip_or_none(content), "reasoning_content": strip_or_none(reasoning)}
    if calls:
        m["tool_calls"] = [{"id": (ids[i] if ids else "call_%d" % i), "type": "function",
                            "function": {"name": n, "arguments": call_args_text(fam, tools, n, a)}}
                           for i, (n, a) in enumerate(calls)]
    if citations:
        m["citations"] = citations
    return compact(m)


CASES = []


def add(name, fam, reply, expected, tools=None, tail=None, broken=False, raw_bytes=None, json_response=False):
    case = {"name": fam + ":" + name, "format": FAMILIES[fam]["format"], "tools": tools, "tail": tail,
            "expect": expected, "broken": broken, "keywords": FAMILIES[fam]["keywords"]}
    if json_response:   # cf_reply_options.json_response: the request asked for a JSON answer
        case["json_response"] = True
    if raw_bytes is not None:
        case["reply_hex"] = raw_bytes.hex()
    else:
        case["reply"] = reply
    CASES.append(case)


def assistant(fam, content, reasoning, calls, ids_from=0):
    """The message the template renders (field names differ per family)."""
    m = {"role": "assistant", "content": content}
    if fam == "command-a":
        if reasoning:
            m["tool_plan" if calls else "thinking"] = reasoning
    elif fam == "qwen25":
        if reasoning:   # this template has no reasoning field: the model writes it inline
            m["content"] = "<think>\n" + reasoning + "\n</think>\n\n" + (content or "")
    elif reasoning is not None:
        m["reasoning_content"] = reasoning
    if calls:
        m["tool_calls"] = [{"id": "c%d" % i, "type": "function", "function": {"name": n, "arguments": a}}
                           for i, (n, a) in enumerate(calls)]
    return m


DOCS = [{"title": "Penguins", "text": "Emperor penguins are the tallest."}]


def rendered(name, fam, content, reasoning, calls, tools=TOOLS, extra=None):
    """A case whose reply the template itself writes."""
    ids = None
    if fam == "command-a" and calls:
        content = None      # the template writes no content beside an action
        # this template renders actions only in its `if documents` branch,
        # where the document turn takes tool_call_id 0: the ids it writes are ours
        extra = dict(extra or {}, documents=DOCS)
    reply, tail = render_reply(fam, assistant(fam, content, reasoning, calls), tools, extra)
    if fam == "command-a" and calls:
        ids = re.findall(r'"tool_call_id": "([^"]*)"', reply)
        assert cmda_action(calls, int(ids[0])) in reply, (name, reply)
    for n, a in calls:      # the writers used by built cases agree with the template
        if fam != "command-a":
            writer = (glm_call if fam == "glm45" else hermes_call)(n, a)
            assert writer in reply, (fam, name, writer, reply)
    for n, a in calls:      # typing by schema gives back exactly the arguments
        assert json.loads(call_args_text(fam, tools, n, a)) == a, (fam, name, n)
    add(name, fam, reply, expect(fam, content, reasoning, calls, tools, ids), tools)
    return reply


# ---- the cases --------------------------------------------------------------

WEATHER = ("get_weather", {"city": "Paris", "unit": "celsius"})
SEARCH = ("search_docs", {"query": "kv cache", "limit": 5, "exact": False})
NOARGS = ("ping", {})
NUMBERLIKE = ("lookup", {"zip": "02134", "code": "123", "version": "1.10", "tag": "007",
                         "count": 3, "ratio": 0.5})
NESTED = ("configure", {"matrix": [[1, 2], [3, 4.5]], "options": {"lang": "en", "tags": ["a", "b"],
                                                                   "deep": {"x": None, "y": True}},
                        "label": "nested {\"json\": [1]} text"})
UNICODE = ("run_python", {"code": "print(\"héllo\\n\" + 'é' * 2)\n\t# 中文 👋 \\ backslash", "timeout_s": 2.5})

for fam in FAMILIES:
    is_cmda = fam == "command-a"
    rendered("reasoning-content", fam, "The answer is 42.", "Let me think.\nStep 2.", [])
    rendered("content-only", fam, "Just an answer.", None, [])
    rendered("one-call", fam, "Checking the weather.", "Need weather.", [WEATHER])
    rendered("parallel-calls", fam, "Two things at once.", "Plan.", [WEATHER, SEARCH])
    rendered("no-arg-call", fam, "", None, [NOARGS])
    rendered("number-like-strings", fam, "", None, [NUMBERLIKE])
    rendered("nested-args", fam, "", None, [NESTED])
    rendered("unicode", fam, "Écris « bonjour » 👋 — 中文 \"quotes\" \\ back\ttab", "Réflexion 🤔", [UNICODE])

# '<' that starts no tag, in reasoning, content and argument values; partial tags
LT_TEXT = "a < b, c<d>e, </thin and <tool_ca> and </arg_value and <|START_R and </文 and <é stay text"
LT_CALL = ("run_python", {"code": "if a < b and c<d: print('<tool_call> <arg_key>')", "timeout_s": 1})
for fam in FAMILIES:
    rendered("lt-in-text", fam, LT_TEXT, LT_TEXT.replace("</arg_value", "x"), [])
    rendered("lt-in-args", fam, "", None, [LT_CALL])

# every kind of whitespace, held (it may be trailing) and then released
WS_TEXT = "a\vb \f c\t\r\nd  \v\fe"
for fam in ("qwen3", "glm45", "command-a"):
    rendered("control-whitespace", fam, WS_TEXT, "r\v\fs", [])

# text before, between and after calls (templates never write text after calls)
for fam in FAMILIES:
    kw = FAMILIES[fam]
    if fam == "command-a":
        reply = ("Before the action.\n" + cmda_action([WEATHER, SEARCH]) + "\nAnd text after it." +
                 "<|END_OF_TURN_TOKEN|>")
        add("text-around-calls", fam, reply,
            expect(fam, "Before the action.\n\nAnd text after it.", None, [WEATHER, SEARCH], TOOLS, ["0", "1"]),
            TOOLS)
        continue
    call = glm_call if fam == "glm45" else hermes_call
    lead = "\n<think>R.</think>\n" if fam == "glm45" else "<think>\nR.\n</think>\n\n"
    reply = lead + "Before.\n" + call(*WEATHER) + "\nBetween the calls.\n" + call(*SEARCH) + "\n\nAfter all calls."
    add("text-around-calls", fam, reply,
        expect(fam, "Before.\n\nBetween the calls.\n\n\nAfter all calls.", "R.", [WEATHER, SEARCH], TOOLS), TOOLS)

# glm45 without a schema: JSON when it parses, else the raw string
for tools, label in ((None, "no-tools"), ([fn("lookup", {})], "no-properties")):
    args = {"zip": "02134", "code": "123", "flag": "true", "obj": '{"a": 1}', "text": "plain words",
            "nan": "NaN", "padded": " 7 "}
    reply = "\n<think></think>\n" + glm_call("lookup", args)
    add("untyped-values-" + label, "glm45", reply, expect("glm45", "", None, [("lookup", args)], tools), tools)

# reasoning opened by the prompt (the reply holds only the closer)
for fam, tail in (("glm45", "<|assistant|>\n<think>"), ("qwen3", "<|im_start|>assistant\n<think>\n"),
                  ("nanbeige", "<|im_start|>assistant\n<think>\n"), ("qwen25", "<|im_start|>assistant\n<think>"),
                  ("command-a", "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|>")):
    if fam == "command-a":
        reply = "Opened by the prompt.<|END_THINKING|><|START_RESPONSE|>Answer.<|END_RESPONSE|>"
    else:
        reply = "Opened by the prompt.\n</think>\n\nAnswer."
    add("prompt-opened-reasoning", fam, reply, expect(fam, "Answer.", "Opened by the prompt."), tail=tail)

# reasoning closed by the prompt (enable_thinking=false): the tail comes from the template
for fam in ("glm45", "qwen3"):
    text = seed(FAMILIES[fam]["template"])
    prompt = hf_render.render(text, {"messages": [USER], "add_generation_prompt": True, "enable_thinking": False})
    assert prompt.rstrip().endswith("</think>"), prompt[-40:]
    add("prompt-closed-reasoning", fam, "\nAnswer without thinking.",
        expect(fam, "Answer without thinking.", None), tail=prompt[-120:])
    add("prompt-closed-think-is-text", fam, "<think>not reasoning</think> Answer.",
        expect(fam, "<think>not reasoning</think> Answer.", None), tail=prompt[-120:])

# plain (no tool markup): reasoning only
add_plain = [("plain-reasoning", "<think>\nhmm\n</think>\n\nHello <tool_call>{}</tool_call>", "Hello <tool_call>{}</tool_call>", "hmm")]
for name, reply, content, reasoning in add_plain:
    CASES.append({"name": "plain:" + name, "format": "plain", "tools": None, "tail": None, "reply": reply,
                  "expect": compact({"role": "assistant", "content": content, "reasoning_content": reasoning}),
                  "broken": False, "keywords": ["think"]})

# citations
CITED = [("text", "Emperor penguins are "), ("cite", "the tallest", "0:[0]"), ("text", " and they "),
         ("cite", " only live in Antarctica ", "0:[1],1:[0,2]"), ("text", ". Ünïcödé 👋 "),
         ("cite", "penguins", "1:[]"), ("text", ".")]


def citation_case(parts, lead="", trail=""):
    reply, clean, cites = lead, "", []
    for part in parts:
        if part[0] == "text":
            reply += part[1]
            clean += part[1]
        else:
            span, src = part[1], part[2]
            reply += "<co>" + span + "</co: " + src + ">"
            inner = span.strip(WS)
            start = len(clean) + (len(span) - len(span.lstrip(WS)))
            clean += span
            sources = []
            for group in src.split("],"):
                tid, idx = group.split(":")
                idx = idx.strip("[]")
                sources.append({"tool_call_index": int(tid),
                                "result_indices": [int(x) for x in idx.split(",")] if idx else []})
            cites.append({"start": start, "end": start + len(inner), "text": inner, "sources": sources})
    lead_ws = len(clean) - len(clean.lstrip(WS))
    for c in cites:     # offsets are into the content, which starts the reply: its leading whitespace goes
        c["start"] -= lead_ws
        c["end"] -= lead_ws
    return reply + trail, clean, cites


reply, clean, cites = citation_case(CITED, "<|START_THINKING|>Grounding.<|END_THINKING|><|START_RESPONSE|>",
                                    "<|END_RESPONSE|><|END_OF_TURN_TOKEN|>")
add("citations", "command-a", reply, expect("command-a", clean, "Grounding.", citations=cites))
reply, clean, cites = citation_case([("cite", "  Leading span", "0:[3]"), ("text", " rest.")],
                                    "<|START_RESPONSE|>", "<|END_RESPONSE|>")
add("citation-at-start", "command-a", reply, expect("command-a", clean.lstrip(WS), None, citations=cites))
add("citation-malformed-sources", "command-a", "<|START_RESPONSE|>A <co>span</co: zero> B<|END_RESPONSE|>",
    expect("command-a", "A span</co: zero> B", None))

# Command A Reasoning's MoE template (Cohere2MoE) wraps the answer in <|START_TEXT|>...<|END_TEXT|>
add("text-block", "command-a", "<|START_THINKING|>Plan.<|END_THINKING|><|START_TEXT|>It is sunny.<|END_TEXT|>"
    "<|END_OF_TURN_TOKEN|>", expect("command-a", "It is sunny.", "Plan."))

# tool_call_id kept; missing id -> generated; ids need not be "0".."n"
reply = ('<|START_ACTION|>[{"tool_call_id": "7", "tool_name": "ping", "parameters": {}}, '
         '{"tool_name": "get_weather", "parameters": {"city": "Oslo"}}, '
         '{"parameters": {"query": "late name"}, "tool_name": "search_docs", "tool_call_id": 3}]<|END_ACTION|>')
add("ids", "command-a", reply,
    expect("command-a", "", None, [("ping", {}), ("get_weather", {"city": "Oslo"}), ("search_docs", {"query": "late name"})],
           TOOLS, ["7", "call_1", "3"]))

# hermes variants: arguments before name, as a JSON string, missing; spaces
reply = ('<tool_call>{"arguments": {"city": "Rome"}, "name": "get_weather"}</tool_call>'
         '<tool_call>\n{"name": "search_docs", "arguments": "{\\"query\\": \\"as string\\"}"}\n</tool_call>'
         '<tool_call>{"name":"ping"}</tool_call>')
add("args-order-string-missing", "qwen3", reply,
    compact({"role": "assistant", "content": None, "reasoning_content": None, "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}},
        {"id": "call_1", "type": "function", "function": {"name": "search_docs", "arguments": '{"query": "as string"}'}},
        {"id": "call_2", "type": "function", "function": {"name": "ping", "arguments": "{}"}}]}))
# a complete JSON call whose </tool_call> is missing is still a call
reply = hermes_call(*WEATHER)[:-len("</tool_call>")] + "\n" + hermes_call(*SEARCH)
add("missing-end-tag", "qwen3", reply, expect("qwen3", "", None, [WEATHER, SEARCH], TOOLS), TOOLS)
# what Hermes 2 Pro and Qwen models write instead of <tool_call> (llama.cpp's
# hermes parser reads the same): the call object in other tags, and
# <function=NAME>{arguments}</function> or <function name="NAME">
W_ARGS = dumps(WEATHER[1])
for tag in ("function_call", "tool", "tools", "response", "json", "xml", "JSON"):
    reply = "Checking. <%s>\n  %s\n</%s>" % (tag, hermes_call(*WEATHER)[len("<tool_call>"):-len("</tool_call>")].strip(), tag)
    add("wrapped-in-" + tag, "qwen3", reply, expect("qwen3", "Checking. ", None, [WEATHER], TOOLS), TOOLS)
reply = "<function=get_weather>%s</function>\n<function name=\"search_docs\">\n%s\n</function>" % (W_ARGS, dumps(SEARCH[1]))
add("function-tags", "qwen3", reply, expect("qwen3", "", None, [WEATHER, SEARCH], TOOLS), TOOLS)
for lang in ("json", "xml", ""):
    reply = "```%s\n%s\n```" % (lang, hermes_call(*WEATHER)[len("<tool_call>"):-len("</tool_call>")].strip())
    add("fenced-" + (lang or "bare"), "qwen3", reply, expect("qwen3", "", None, [WEATHER], TOOLS), TOOLS)
# ... or a tagged call inside the block (llama.cpp's hermes tests): the block is
# the call's wrapping and goes with it; a block of other XML stays text
for lang, tag in (("xml", "response"), ("json", "function_call"), ("", "tool_call")):
    reply = "```%s\n<%s>\n  %s\n</%s>\n``` " % (lang, tag, hermes_call(*WEATHER)[len("<tool_call>"):-len("</tool_call>")].strip(), tag)
    add("fenced-%s-%s" % (lang or "bare", tag), "qwen3", reply, expect("qwen3", "", None, [WEATHER], TOOLS), TOOLS)
add("fenced-xml-text", "qwen3", "```xml\n<note>hi</note>\n```\n```json\n<tool_calls/>\n```",
    expect("qwen3", "```xml\n<note>hi</note>\n```\n```json\n<tool_calls/>\n```", None), TOOLS)
# a reply to a response_format JSON request (llama.cpp's json_schema tests): the
# content is the JSON answer, the ```json fence around it dropped; text before
# a fence, another language, or text after the closing fence keep it as written
for name, reply, content, reasoning in (
        ("json-answer-fenced", '```json\n{"amount": 123.45, "date": "2025-12-03"}\n```',
         '{"amount": 123.45, "date": "2025-12-03"}', None),
        ("json-answer-after-reasoning", '<think>Plan.</think>\n\n```\n"42"\n```\n', '"42"', "Plan."),
        ("json-answer-bare", '{"a": [1, 2]}', '{"a": [1, 2]}', None),
        ("json-answer-ticks-inside", '```JSON \n{"a": "```"}\n```', '{"a": "```"}', None),
        ("json-answer-text-before", 'Here:\n```json\n{}\n```', 'Here:\n```json\n{}\n```', None),
        ("json-answer-other-language", '```python\nx = 1\n```', '```python\nx = 1\n```', None),
        ("json-answer-text-after", '```json\n{"a": 1}\n```\nDone.', '{"a": 1}\n```\nDone.', None)):
    add(name, "qwen3", reply, expect("qwen3", content, reasoning), TOOLS, json_response=True)
add("fenced-code", "qwen3", "Run:\n```python\nprint(1)\n```\n```\n{\"a\": 1}\n```",
    expect("qwen3", "Run:\n```python\nprint(1)\n```\n```\n{\"a\": 1}\n```", None), TOOLS)
add("function-tag-not-json", "qwen3", "<function=get_weather>Paris</function> done",
    expect("qwen3", "<function=get_weather>Paris</function> done", None), TOOLS)
# GLM-4.7 and 5 write no newline between the name and the first key
reply = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
add("no-newlines", "glm45", reply, expect("glm45", "", None, [("get_weather", {"city": "Paris"})], TOOLS), TOOLS)

# ---- broken replies: whole parse puts the broken call in content verbatim -----


for fam in ("glm45", "qwen3"):
    call = glm_call(*NESTED) if fam == "glm45" else hermes_call(*NESTED)
    stop = len(call) - len("</tool_call>") if fam == "glm45" else call.rindex("}")
    cuts = sorted({1, 5, 11, 12, 13, 20, 30, 45, 60, stop - 1, stop})
    for k in cuts:
        if k > stop:
            continue
        reply = "Text first. " + call[:k]
        add("cut-off-%d" % k, fam, reply, expect(fam, reply, None), TOOLS, broken=True)
    # a cut-off second call keeps the first
    first = glm_call(*WEATHER) if fam == "glm45" else hermes_call(*WEATHER)
    reply = first + "\n" + call[:40]
    add("cut-off-second-call", fam, reply, expect(fam, call[:40], None, [WEATHER], TOOLS), TOOLS, broken=True)

act = cmda_action([WEATHER, NESTED])
first_end = act.index("}}") + 2
second_end = act.rindex("}") + 1
for k in sorted({5, 15, 16, 17, 30, first_end - 1, first_end + 1, first_end + 30, second_end - 1}):
    reply = "<|START_THINKING|>T<|END_THINKING|>" + act[:k]
    if k < first_end:
        exp = expect("command-a", act[:k], "T")
    else:   # the first action is complete: kept; the rest is content
        exp = expect("command-a", act[first_end:k], "T", [WEATHER], TOOLS, ["0"])
    add("cut-off-%d" % k, "command-a", reply, exp, TOOLS, broken=True)

MALFORMED = {
    "qwen3": ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris",}}\n</tool_call>',
              '<tool_call>\n{"name": get_weather, "arguments": {}}\n</tool_call>',
              '<tool_call>\n{"arguments": {"a": 1}}\n</tool_call>',
              '<tool_call>\n{"name": "f", "arguments": [1, 2]}\n</tool_call>',
              '<tool_call>\nnot json at all\n</tool_call>',
              '<tool_call>\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Rome\\"}": 1}\n</tool_call>'],
    "glm45": ['<tool_call>get weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>',
              '<tool_call>get_weather\n<arg_key>city</arg_key>\n<oops>Paris</arg_value>\n</tool_call>',
              '<tool_call>get_weather\nstray text\n</tool_call>',
              '<tool_call>{"name": "get_weather"}</tool_call>'],
    "command-a": ['<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": }}]<|END_ACTION|>',
                  '<|START_ACTION|>{"tool_call_id": "0"}<|END_ACTION|>',
                  '<|START_ACTION|>[{"tool_call_id": "0", "parameters": {}}]<|END_ACTION|>'],
}
for fam, bad in MALFORMED.items():
    for i, markup in enumerate(bad):
        reply = "Before. " + markup + " After."
        add("malformed-%d" % i, fam, reply, expect(fam, reply, None), TOOLS, broken=True)

# invalid UTF-8: replaced by U+FFFD as bytes.decode("utf-8", "replace") does
for fam in ("qwen3", "glm45", "command-a"):
    bad = b"Caf\xc3 ok \xe2\x82 \xff\xfe end \xf0\x9f\x91"
    text = bad.decode("utf-8", "replace")
    add("invalid-utf8", fam, None, expect(fam, text, None), raw_bytes=bad)

# an incomplete sequence right before a tag: its U+FFFD comes before the tag's effect
for fam, lead, close in (("qwen3", b"<think>", b"</think>"), ("glm45", b"\n<think>", b"</think>"),
                         ("command-a", b"<|START_THINKING|>", b"<|END_THINKING|>")):
    bad = lead + b"R\xf0\x9f\xa4" + close + b"C\xe2\x82<co>x</co: 0:[0]>"
    text = bad.decode("utf-8", "replace")
    if fam == "command-a":
        exp = expect(fam, "C\ufffdx", "R\ufffd", citations=[{"start": 2, "end": 3, "text": "x",
                                                             "sources": [{"tool_call_index": 0, "result_indices": [0]}]}])
    else:
        exp = expect(fam, "C\ufffd<co>x</co: 0:[0]>", "R\ufffd")
    add("invalid-utf8-before-tag", fam, None, exp, raw_bytes=bad)

out = os.path.join(HERE, "cases.jsonl")
with open(out, "w", encoding="utf-8") as f:
    for c in CASES:
        f.write(json.dumps(c, ensure_ascii=False) + "\n")
print("wrote %d cases to %s" % (len(CASES), os.path.relpath(out)))
