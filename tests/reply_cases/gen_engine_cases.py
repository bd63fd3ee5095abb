#!/usr/bin/env python3
"""gen_engine_cases.py — writes tests/reply_cases/engine_cases.jsonl: cases for
the formats read by the description-driven engine (src/reply/engine.c,
src/reply/formats.c), in the case format of gen_cases.py (tests/test_reply.c
runs both files: whole parse byte for byte, every chunking, mutations).

Usage (from the repository root): python3 tests/reply_cases/gen_engine_cases.py [SHARED]

Where replies come from:
  - "rendered": a real template of the family (../shared/corpus) writes the
    assistant turn through the reference renderer; the reply is the text after
    the prompt (the render with add_generation_prompt), its end-of-turn token
    removed, and the prompt's end is the case's tail. A scenario counts only
    where the template prints what it tests.
  - "built": families without a corpus template, and quirks (text after calls,
    missing closers, calls inside reasoning, cut-off calls), written from the
    format's documentation by the writers below.
Expected messages follow the contract in include/chatfmt.h: content/reasoning
stripped of ASCII whitespace (null when empty); JSON arguments are the text
the model wrote; XML parameters are rebuilt as json.dumps writes them, each
value typed by an explicit flag or the tool schema (a string-typed value is
the raw text; any other is JSON when it parses, else the raw text).
"""
import ast
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = (sys.argv[1] if len(sys.argv) > 1 else
          os.environ.get("CHATFMT_SHARED", os.path.join(HERE, "..", "..", "..", "shared")))
sys.path.insert(0, os.path.join(SHARED, "oracle"))
# Templates that print the date (Hunyuan) must give the same goldens every run.
os.environ["CHATFMT_NOW"] = "2026-03-14T15:09:26"
import hf_render  # noqa: E402

CORPUS = os.path.join(SHARED, "corpus")
sys.path.insert(0, HERE)
from expect import WS, strip_or_none  # noqa: E402


def dumps(v):
    return json.dumps(v, ensure_ascii=False)


def compact(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def fn(name, props, required=()):
    return {"type": "function", "function": {
        "name": name, "description": name.replace("_", " "),
        "parameters": {"type": "object", "properties": props, "required": list(required)}}}


TOOLS = [
    fn("get_weather", {"city": {"type": "string"}, "days": {"type": "integer"}}, ["city"]),
    fn("search_docs", {"query": {"type": "string"}, "limit": {"type": "integer"}}, ["query"]),
    fn("lookup", {"zip": {"type": "string"}, "code": {"type": ["string", "null"]},
                  "count": {"type": "integer"}, "ratio": {"type": "number"}}),
    fn("configure", {"matrix": {"type": "array"}, "options": {"type": "object"}, "label": {"type": "string"}}),
    fn("run_python", {"code": {"type": "string"}}, ["code"]),
    fn("ping", {}),
]


def schema_of(name, key):
    for t in TOOLS:
        f = t["function"]
        if f["name"] == name:
            return f["parameters"]["properties"].get(key)
    return None


def allows_string(s):
    if not isinstance(s, dict):
        return False
    t = s.get("type")
    return t == "string" if isinstance(t, str) else isinstance(t, list) and "string" in t


def strict_json(text):
    def no_constants(c):
        raise ValueError(c)
    try:
        json.loads(text, parse_constant=no_constants)
        return True
    except ValueError:
        return False


CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.S)


def typed_args(name, pairs, trim_newline=False, cdata=False):
    """XML parameters [(key, raw, flag)] as the engine rebuilds them (cdata:
    a CDATA section is its text, as XML reads it)."""
    parts = []
    for k, raw, flag in pairs:
        if cdata:
            raw = CDATA.sub(lambda m: m.group(1), raw)
        string = flag in ("true", "string") if flag is not None else allows_string(schema_of(name, k.strip(WS)))
        if trim_newline and string:   # the newline after <parameter=K> and before </parameter> is layout
            raw = raw[1:] if raw.startswith("\n") else raw
            raw = raw[:-1] if raw.endswith("\n") else raw
        elif trim_newline:            # any other value: JSON, or its text stripped
            raw = raw.strip(" \t\n\r")
        if not string and strict_json(raw):
            text = raw.strip(" \t\n\r")
        else:
            text = dumps(raw)
        parts.append(dumps(k.strip(WS)) + ": " + text)
    return "{" + ", ".join(parts) + "}"


# ---- families -------------------------------------------------------------------
# format name -> (template under corpus/ or None, end-of-turn tokens, parameter
# regex for XML formats: (key, raw value[, flag]) per parameter of a call)

FW = "\uff5c"
XML_QWEN = r"<parameter=([^>]*)>(.*?)</parameter>"
XML_NAMED = r'<parameter name="([^"]*)">(.*?)</parameter>'
FAMILIES = {
    "qwen3-coder": ("templates/Qwen__Qwen3-Coder.jinja", ["<|im_end|>"], XML_QWEN),
    "qwen3-coder/qwen3.5": ("templates/Qwen__Qwen3.5-4B.jinja", ["<|im_end|>"], XML_QWEN),
    "seed-oss": ("templates/ByteDance-Seed__Seed-OSS.jinja", ["<seed:eos>"], XML_QWEN),
    "minimax-m2": ("templates/MiniMaxAI__MiniMax-M2.jinja", ["[e~["], XML_NAMED),
    "deepseek-r1": ("templates/deepseek-ai__DeepSeek-R1.jinja", ["<\uff5cend\u2581of\u2581sentence\uff5c>"], None),
    "deepseek-v3.1": ("templates/deepseek-ai__DeepSeek-V3.1.jinja", ["<\uff5cend\u2581of\u2581sentence\uff5c>"], None),
    "deepseek-dsml": ("templates/deepseek-ai__DeepSeek-V3.2.jinja", ["<\uff5cend\u2581of\u2581sentence\uff5c>"],
                      r'<' + FW + r'DSML' + FW + r'parameter name="([^"]*)" string="(true|false)">(.*?)</' + FW + 'DSML' + FW + 'parameter>'),
    "gigachat-gcml": ("more/ai-sage__GigaChat3.5.jinja", ["</s>"],
                      r'<' + FW + r'GCML' + FW + r'parameter name="([^"]*)" string="(true|false)">(.*?)</' + FW + 'GCML' + FW + 'parameter>'),
    "kimi-k2": ("templates/moonshotai__Kimi-K2.jinja", ["<|im_end|>"], None),
    "solar-open": ("templates/upstage__Solar-Open-100B.jinja", ["<|calls|>", "<|end|>"], None),
    "hunyuan-v3": ("more/tencent__Hy3.jinja", ["<\uff5chy_eos:opensource\uff5c>"],
                   r"<arg_key:opensource>(.*?)</arg_key:opensource>\s*<arg_value:opensource>(.*?)</arg_value:opensource>"),
    "minicpm5": ("more/openbmb__MiniCPM5-1B.jinja", ["<|im_end|>"], r'<param name="([^"]*)">(.*?)</param>'),
    "nemotron-v2": ("templates/nvidia__NVIDIA-Nemotron-Nano-v2.jinja", ["<SPECIAL_12>"], None),
    "apertus": ("templates/swiss-ai__Apertus-8B-Instruct.jinja", ["<|assistant_end|>"], None),
    "apriel": ("templates/unsloth__Apriel-1.5.jinja", ["<|end|>", "</s>"], None),
    "jamba": ("templates/ai21labs__AI21-Jamba-Large-1.6.jinja", ["<|eom|>"], None),
    "hunyuan": ("more/vllm__tool_chat_template_hunyuan_a13b.jinja", ["<|eos|>"], None),
    "minimax-m1": ("more/MiniMaxAI__MiniMax-M1.jinja", ["<end_of_sentence>"], None),
    "gigachat3": ("templates/ai-sage__GigaChat3.1-10B-A1.8B.jinja", ["<|message_sep|>"], None),
    # GigaChat 3 writes the call as a "function call" turn after the text's <|message_sep|>
    "gigachat3/3.0": ("templates/ai-sage__GigaChat3-10B-A1.8B.jinja", [], None),
    "command-r": ("templates/CohereForAI__c4ai-command-r-plus-tool_use.jinja", ["<|END_OF_TURN_TOKEN|>"], None),
    "hyperclovax": ("more/vllm__tool_chat_template_hyperclovax_seed_think_14b.jinja", ["<|endofturn|>", "<|stop|>"],
                    None),
    "chatml-functions": ("more/llama-cpp-python__function_calling_template.jinja", ["<|im_end|>"], None),
    "functionary-v2": ("templates/meetkai__functionary-medium-v2.2.jinja", ["<|stop|>"], None),
    "glimmer": ("more/muse__glimmer.jinja", ["<|eot|>"], r'<atem:parameter name="([^"]*)">(.*?)</atem:parameter>'),
    # (arguments as nested elements: their expectation is the call's own arguments, see tree_args)
    "minimax-m3": ("more/MiniMaxAI__MiniMax-M3-muse.jinja", ["[e~["], None),
    "kimi-k3": ("more/moonshotai__Kimi-K3.jinja", ["<|end_of_msg|>"],
                r'<\|open\|>argument key="([^"]*)" type="([a-z]+)"<\|sep\|>(.*?)<\|close\|>argument<\|sep\|>'),
}
KEYWORDS = ["think", "tool", "call", "calls", "function", "parameter", "name", "arguments", "invoke",
            "begin", "end", "sep", "section", "argument", "TOOLCALL", "string", "DSML", "GCML", "arg",
            "key", "value", "opensource", "param", "tools", "prefix", "suffix", "args", "message", "seed",
            "minimax", "steptml", "longcat", "response", "answer", "thinking", "inner", "plugin", "action",
            "start", "functions", "json", "GCML", "get_weather", "sep", "true", "false", "parameters", "content",
            "role", "BEGIN", "FINAL", "RESPONSE", "reasoning", "steps", "Action", "tool_name", "Here", "is", "my", "thought", "process", "response"]
# words of markers a format drops from content (hyperclovax's turn tokens)
FORMAT_KEYWORDS = {"hyperclovax": ["im", "assistant", "stop"], "functionary-v2": ["from", "assistant", "recipient", "all"],
                   "glimmer": ["assistant", "to", "self", "user", "eom", "atem", "function_calls"],
                   # (index="1": a call's number is markup, its place in tool_calls says it)
                   "minimax-m3": ["minimax", "item", "invoke", "mm", "tool_call"],
                   "minicpm5": ["CDATA"],   # (a value's CDATA wrapper is markup)
                   "command-r": ["CHATBOT", "TOKEN"],   # (the prompt's turn header written again)
                   "kimi-k3": ["open", "close", "key", "type", "index", "number", "integer", "boolean", "null",
                               "object", "array", "1", "2"]}
USER = {"role": "user", "content": "What is the weather in Paris?"}

CASES = []


def add(name, fmt, reply, expected, tail=None, broken=False, keywords=()):
    CASES.append({"name": "engine:" + name, "format": fmt, "tools": TOOLS, "tail": tail, "reply": reply,
                  "expect": expected, "broken": broken,
                  "keywords": KEYWORDS + FORMAT_KEYWORDS.get(fmt, []) + list(keywords)})




def message(content, reasoning, calls, ids=None):
    m = {"role": "assistant", "content": strip_or_none(content), "reasoning_content": strip_or_none(reasoning)}
    if calls:
        m["tool_calls"] = [{"id": ids[i] if ids else "call_%d" % i, "type": "function",
                            "function": {"name": n, "arguments": a}} for i, (n, a) in enumerate(calls)]
    return compact(m)


def reply_of(path, msg, ends):
    """The text after the prompt (common part, cut back to a marker's start), end tokens removed."""
    text = open(os.path.join(CORPUS, path), encoding="utf-8").read()
    ctx = {"tools": TOOLS, "bos_token": "<s>", "eos_token": "</s>"}
    p = hf_render.render(text, dict(ctx, messages=[USER], add_generation_prompt=True))
    f = hf_render.render(text, dict(ctx, messages=[USER, msg], add_generation_prompt=False))
    i = 0
    while i < min(len(p), len(f)) and p[i] == f[i]:
        i += 1
    if i < len(p):
        for o, c in (("<", ">"), ("[", "]")):
            k = f.rfind(o, 0, i)
            if k > f.rfind(c, 0, i):
                i = k
    reply = f[i:]
    while True:
        t = reply.rstrip(WS)
        for e in ends:
            if t.endswith(e):
                t = t[:-len(e)]
                break
        else:
            return reply, f[max(0, i - 200):i]
        reply = t


def tree_args(args):
    """Arguments the template wrote as elements named by their keys (MiniMax
    M3), as the engine rebuilds them: each parameter's value as JSON (nested
    values compact), the parameters joined as json.dumps joins them."""
    return "{" + ", ".join(dumps(k) + ": " + compact(v) for k, v in args.items()) + "}"


def json_args_in(reply, args):
    for text in (dumps(args), json.dumps(args), json.dumps(args, separators=(",", ":"), ensure_ascii=False)):
        if text in reply:
            return text
    return None


def rendered(name, fam, content, reasoning, calls, args_as_text=False):
    path, ends, xml = FAMILIES[fam]
    fmt = fam.split("/")[0]
    msg = {"role": "assistant", "content": content or ""}
    if reasoning:
        msg["reasoning_content"] = reasoning
    if calls:
        msg["tool_calls"] = [{"id": "call_%d" % i, "type": "function",
                              "function": {"name": n, "arguments": dumps(a) if args_as_text else a}}
                             for i, (n, a) in enumerate(calls)]
    try:
        reply, tail = reply_of(path, msg, ends)
    except Exception:
        if calls and not args_as_text:   # templates that concatenate arguments take them as text
            return rendered(name, fam, content, reasoning, calls, True)
        return
    if any(n not in reply for n, _ in calls):
        return
    if any(e in reply for e in ends) or "\u52a9\u624b\uff1a" in reply:
        return   # the template split the turn (a call in a turn of its own) or prints a role prefix
    if reasoning and reasoning not in reply:
        return
    if not reasoning and tail.rstrip(WS).endswith("<think>") and not reply.lstrip(WS).startswith("</think>"):
        return   # the prompt opened reasoning, which history drops: not a reply a model writes
    if calls and not args_as_text and "{'" in reply:
        return rendered(name, fam, content, reasoning, calls, True)
    got_content = content if content and content in reply else None
    expected_calls, ids = [], []
    for n, a in calls:
        if xml:
            # this call's parameters, from its own stretch of the reply
            start = reply.index(n)
            nxt = [reply.index(m, start + len(n)) for m, _ in calls if m != n and m in reply[start + len(n):]]
            stretch = reply[start:min(nxt) if nxt else len(reply)]
            pairs = [(m[0], m[-1], m[1] if len(m) == 3 else None) for m in re.findall(xml, stretch, re.S)]
            text = typed_args(n, pairs, fmt == "qwen3-coder", fmt == "minicpm5")
            if json.loads(text) != a and fmt not in ("qwen3-coder", "seed-oss", "minimax-m2", "hunyuan-v3"):
                raise AssertionError((fam, name, text, a))
        elif fmt == "minimax-m3":
            text = tree_args(a)
        else:
            text = json_args_in(reply, a)
            if text is None:
                return
        expected_calls.append((n, text))
    if fmt == "kimi-k2":
        ids = re.findall(r"<\|tool_call_begin\|>([^<]*)<\|tool_call_argument_begin\|>", reply)
    elif fmt == "solar-open":
        ids = re.findall(r"<\|tool_call:begin\|>([^<]*)<\|tool_call:name\|>", reply)
    add(fam + ":" + name, fmt, reply, message(got_content, reasoning, expected_calls, ids or None), tail)


WEATHER = ("get_weather", {"city": "Paris", "days": 3})
SEARCH = ("search_docs", {"query": "kv cache", "limit": 5})
PING = ("ping", {})
NUMBERLIKE = ("lookup", {"zip": "02134", "code": "123", "count": 3, "ratio": 0.5})
NESTED = ("configure", {"matrix": [[1, 2], [3, 4.5]], "options": {"lang": "en", "tags": ["a", "b"]},
                        "label": "nested {\"json\": [1]} text"})
UNICODE = ("run_python", {"code": "print(\"héllo\") # 中文 👋 \\ back < slash"})
LT_TEXT = "a < b, c<d>e, </thin and <tool_ca> and <|tool and <\uff5ctool stay text"

for fam in FAMILIES:
    rendered("reasoning-content", fam, "The answer is 42.", "Let me think.\nStep 2.", [])
    rendered("content-only", fam, "Just an answer.", None, [])
    rendered("one-call", fam, "Checking the weather.", None, [WEATHER])
    rendered("call-only", fam, "", None, [WEATHER])
    rendered("parallel-calls", fam, "", None, [WEATHER, SEARCH])
    rendered("no-arg-call", fam, "", None, [PING])
    rendered("number-like-strings", fam, "", None, [NUMBERLIKE])
    rendered("nested-args", fam, "", None, [NESTED])
    rendered("unicode", fam, "Écris « bonjour » 👋 — 中文", None, [UNICODE])
    rendered("lt-in-text", fam, LT_TEXT, None, [])

# ---- built: families without a corpus template, and quirks ----------------------

W = dumps(WEATHER[1])
S = dumps(SEARCH[1])


def built(name, fmt, reply, content, reasoning, calls, ids=None, tail=None, broken=False, keywords=()):
    add(fmt + ":" + name, fmt, reply, message(content, reasoning, calls, ids), tail, broken, keywords)


# from the formats' documentation (vLLM's parsers' docstrings and tests)
built("doc", "longcat", "Sure.<longcat_tool_call>" + '{"name": "get_weather", "arguments": ' + W +
      "}</longcat_tool_call>", "Sure.", None, [("get_weather", W)])
built("doc", "granite", "<think>plan</think><response>Calling.</response><|tool_call|>[" +
      '{"name": "get_weather", "arguments": ' + W + '}, {"name": "search_docs", "arguments": ' + S + "}]",
      "Calling.", "plan", [("get_weather", W), ("search_docs", S)])
built("doc", "granite-20b-fc", '<function_call> {"name": "get_weather", "arguments": ' + W + '}\n'
      '<function_call> {"name": "search_docs", "arguments": ' + S + '}', None, None,
      [("get_weather", W), ("search_docs", S)])
built("doc", "ernie45", "<think>plan</think>\n\n<response>Calling.</response>\n<tool_call>\n" +
      '{"name": "get_weather", "arguments": ' + W + "}\n</tool_call>", "Calling.", "plan", [("get_weather", W)])
built("doc", "internlm", "Let me check.<|action_start|><|plugin|>\n" + '{"name": "get_weather", "parameters": ' + W +
      "}<|action_end|>", "Let me check.", None, [("get_weather", W)])
built("doc", "step3", "<think>r</think><\uff5ctool_calls_begin\uff5c><\uff5ctool_call_begin\uff5c>function<\uff5ctool_sep\uff5c>"
      '<steptml:invoke name="get_weather"><steptml:parameter name="city">Paris</steptml:parameter>'
      '<steptml:parameter name="days">3</steptml:parameter></steptml:invoke><\uff5ctool_call_end\uff5c>'
      "<\uff5ctool_calls_end\uff5c>", None, "r", [("get_weather", '{"city": "Paris", "days": 3}')])
# Kimi K3: markers share their <|open|> and <|close|> tokens; one begins inside
# a failed match of another (the matcher restarts there), a type the format
# does not name breaks the call back into content
K3_CALL = ('<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>'
           '<|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>'
           '<|open|>argument key="days" type="integer"<|sep|>3<|close|>argument<|sep|><|close|>call<|sep|>'
           '<|close|>tools<|sep|>')
built("marker-inside-failed-match", "kimi-k3", "A <|close|>resp" + K3_CALL, "A <|close|>resp", None,
      [("get_weather", '{"city": "Paris", "days": 3}')], tail='<|open|>response<|sep|>')
built("reasoning-then-call", "kimi-k3", "Plan <|open|>x.<|close|>think<|sep|><|open|>response<|sep|>"
      "<|close|>response<|sep|>" + K3_CALL + "<|close|>message<|sep|>", None, "Plan <|open|>x.",
      [("get_weather", '{"city": "Paris", "days": 3}')], tail='<|open|>think<|sep|>')
K3_BAD = ('<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>'
          '<|open|>argument key="city" type="text"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|>'
          '<|close|>tools<|sep|>')
built("unknown-type", "kimi-k3", K3_BAD, K3_BAD, None, [], tail='<|open|>response<|sep|>', broken=True)

# MiniMax M3: an element inside a value named as the parameter itself (its
# closer is the outer one's only at depth 0); a value cut before its closer
MM = "]<]minimax[>["
built("same-name-inside", "minimax-m3", "<mm:think>r</mm:think>" + MM + "<tool_call>\n" + MM + '<invoke name="configure">' +
      MM + "<options>" + MM + "<options>1" + MM + "</options>" + MM + "<label>x" + MM + "</label>" + MM + "</options>" +
      MM + "</invoke>\n" + MM + "</tool_call>", None, "r", [("configure", '{"options": {"options":1,"label":"x"}}')])
built("cut-in-value", "minimax-m3", "Sure." + MM + "<tool_call>\n" + MM + '<invoke name="get_weather">' + MM + "<city>Par",
      "Sure." + MM + "<tool_call>\n" + MM + '<invoke name="get_weather">' + MM + "<city>Par", None, [], broken=True)

# quirks named in the landscape document
K = "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>" + W + "<|tool_call_end|>"
built("call-inside-reasoning", "kimi-k2", "<think>I will call it.<|tool_calls_section_begin|>" + K +
      "<|tool_calls_section_end|>", None, "I will call it.", [("get_weather", W)], ["functions.get_weather:0"])
built("reasoning-after-call", "kimi-k2", "<think>I will call it. <|tool_calls_section_begin|>" + K +
      "<|tool_calls_section_end|>Then I answer.</think>Sunny.", "Sunny.", "I will call it. Then I answer.",
      [("get_weather", W)], ["functions.get_weather:0"])
built("singular-section", "kimi-k2", "<|tool_call_section_begin|>" + K + "<|tool_call_section_end|>", None, None,
      [("get_weather", W)], ["functions.get_weather:0"])
built("no-section", "kimi-k2", "Text." + K, "Text.", None, [("get_weather", W)], ["functions.get_weather:0"])
built("missing-parameter-close", "qwen3-coder", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
      "<parameter=days>\n3\n</function>\n</tool_call>", None, None, [("get_weather", '{"city": "Paris", "days": 3}')])
built("indented-code-value", "qwen3-coder", "<tool_call>\n<function=run_python>\n<parameter=code>\n    x = 1\n\n"
      "</parameter>\n</function>\n</tool_call>", None, None, [("run_python", '{"code": "    x = 1\\n"}')])
built("missing-section", "qwen3-coder", "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>",
      None, None, [("get_weather", '{"city": "Paris"}')])
built("int-as-float", "qwen3-coder", "<tool_call>\n<function=get_weather>\n<parameter=city>\n-\n</parameter>\n"
      "<parameter=days>\n140.0\n</parameter>\n</function>\n</tool_call>", None, None,
      [("get_weather", '{"city": "-", "days": 140.0}')])
built("not-json-int", "qwen3-coder", "<tool_call>\n<function=get_weather>\n<parameter=days>\nthree\n</parameter>\n"
      "</function>\n</tool_call>", None, None, [("get_weather", '{"days": "three"}')])
built("text-after-calls", "deepseek-v3.1", "<\uff5ctool\u2581calls\u2581begin\uff5c><\uff5ctool\u2581call\u2581begin\uff5c>"
      "get_weather<\uff5ctool\u2581sep\uff5c>" + W + "<\uff5ctool\u2581call\u2581end\uff5c><\uff5ctool\u2581calls\u2581end\uff5c> Done.",
      " Done.", None, [("get_weather", W)])
built("lone-calls-token", "deepseek-r1", "<\uff5ctool\u2581calls\uff5c>function<\uff5ctool\u2581sep\uff5c>get_weather\n```json\n" + W +
      "\n```<\uff5ctool\u2581call\u2581end\uff5c><\uff5ctool\u2581calls\u2581end\uff5c>", None, None, [("get_weather", W)])
built("closed-reasoning-lead", "deepseek-dsml", "</think>Hello.", "Hello.", None, [])
built("reasoning-open-by-prompt", "minimax-m2", "Thinking here.\n</think>\n\nHi.", "Hi.", "Thinking here.", [],
      tail="]~b]ai\n<think>\n")
built("call-in-open-reasoning", "nemotron-v2", '<TOOLCALL>[{"name": "get_weather", "arguments": ' + W + '}]</TOOLCALL>',
      None, None, [("get_weather", W)], tail="Assistant\n<think>\n")
built("reopened-reasoning", "qwen3-coder", "<think>\nPlan.\n</think>\n\nDone.", "Done.", "Plan.", [],
      tail="<|im_start|>assistant\n<think>\n")
G = '{"name": "get_weather", "arguments": ' + W + '}'
built("decoded-think-tokens", "hunyuan-v3", "Plan.</think>Sunny.", "Sunny.", "Plan.", [], tail="<think>")
# Command R+ as its tool_use template writes a call (Cohere's model card: "Action:" and a JSON list)
built("actions", "command-r", 'Let me check.\nAction:\n```json\n[\n    {\n        "tool_name": "get_weather",\n'
      '        "parameters": ' + W + '\n    },\n    {\n        "tool_name": "ping",\n        "parameters": {}\n    }\n]```',
      "Let me check.", None, [("get_weather", W), ("ping", "{}")])
built("action-then-text", "command-r", 'Action:\n```json\n[{"tool_name": "ping", "parameters": {}}]```\nDone.', "Done.",
      None, [("ping", "{}")])
# the reply writes the prompt's turn header <|CHATBOT_TOKEN|> again (llama.cpp's Command R+ test)
built("turn-header-again", "command-r", '<|CHATBOT_TOKEN|>Hello, world!\nAction:\n```json\n[{"tool_name": "ping", '
      '"parameters": {}}]```', "Hello, world!", None, [("ping", "{}")])
built("action-not-json", "command-r", "Action:\n```json\nnot a list```", "Action:\n```json\nnot a list```", None, [],
      broken=True)
# Apriel 1.6: its prompt ends "Here are my reasoning steps:\n"; the answer follows [BEGIN FINAL RESPONSE]
built("final-response-marker", "apriel", "Plan.\n[BEGIN FINAL RESPONSE]\n<tool_calls>[" + G + "]</tool_calls>", None,
      "Plan.", [("get_weather", W)], tail="<|begin_assistant|>\nHere are my reasoning steps:\n")
# Granite 3.2 reasons in words (IBM's model card; vLLM's granite reasoning parser)
built("thought-process-words", "granite", "Here is my thought process:Plan it.\nHere is my response:Sunny.", "Sunny.",
      "Plan it.", [])
built("thought-process-then-call", "granite", "Here is my thought process: need weather Here is my response:"
      "<|tool_call|>[" + G + "]", None, "need weather ", [("get_weather", W)])
built("thought-words-midway-are-text", "granite", "Well. Here is my thought process: none", "Well. Here is my thought process: none",
      None, [])
built("message-end-token", "gigachat3", "Just an answer.<|message_sep|>\n\n", "Just an answer.", None, [])
built("text-after-message-end", "gigachat3", "Hi.<|message_sep|>\n\nuser<|role_sep|>\nMore",
      "Hi.<|message_sep|>\n\nuser<|role_sep|>\nMore", None, [])
built("3.1-token-in-a-3.0-reply", "gigachat3", "Checking.<|function_call|>" + G, "Checking.", None, [("get_weather", W)])
built("role-turn-not-a-call", "gigachat3", "A.<|message_sep|>\n\nfunction call<|role_sep|>\nnot json",
      "A.<|message_sep|>\n\nfunction call<|role_sep|>\nnot json", None, [], broken=True)
# dict and list values printed with Python's str() (Qwen3-Coder-30B-A3B's, Seed-OSS's and
# MiniCPM5's templates do): the JSON of the Python literal
PY_MATRIX, PY_OPTIONS = "[[1, 2], [3, 4.5]]", "{'lang': 'en', 'tags': ['a', None], 'ok': True}"
built("python-literal-values", "qwen3-coder", "<tool_call>\n<function=configure>\n<parameter=matrix>\n" + PY_MATRIX +
      "\n</parameter>\n<parameter=options>\n" + PY_OPTIONS + "\n</parameter>\n</function>\n</tool_call>", None, None,
      [("configure", "{" + ", ".join('"%s": %s' % (k, dumps(ast.literal_eval(v))) for k, v in
                                     (("matrix", PY_MATRIX), ("options", PY_OPTIONS))) + "}")],
      keywords=["None", "True"])
built("python-literal-values", "minicpm5", '<function name="configure"><param name="options">' + PY_OPTIONS +
      '</param><param name="label">{\'a\': 1}</param></function>', None, None,
      [("configure", '{"options": %s, "label": "{\'a\': 1}"}' % dumps(ast.literal_eval(PY_OPTIONS)))],
      keywords=["None", "True"])
# MiniCPM5's template wraps a value holding '<', '&' or a newline in CDATA: the
# section is read as is (a "</param>" in it included), its wrapper is markup
HTML = '<a href="/x">hi</a>\n</param> & <![CDATA[ more'
built("cdata-value", "minicpm5", '<function name="run_python"><param name="code"><![CDATA[' + HTML + ']]></param>'
      '</function><function name="get_weather"><param name="city">Par<![CDATA[<is>]]></param>'
      '<param name="days"><![CDATA[3]]></param></function>', None, None,
      [("run_python", '{"code": %s}' % dumps(HTML)), ("get_weather", '{"city": "Par<is>", "days": 3}')])
built("cdata-cut-off", "minicpm5", 'See <function name="run_python"><param name="code"><![CDATA[<a href',
      'See <function name="run_python"><param name="code"><![CDATA[<a href', None, [], broken=True)
built("doc", "hyperclovax", "/think\nPlan.<|im_end|>\n<|im_start|>assistant\nCalling.<|im_end|>\n"
      '<|im_start|>assistant -> tool/function_call\n[{"name": "get_weather", "arguments": ' + W +
      '}, {"name": "search_docs", "arguments": ' + S + "}]<|im_end|><|stop|>", "Calling.", "Plan.",
      [("get_weather", W), ("search_docs", S)], tail="<|im_start|>assistant")
built("doc", "chatml-functions", "functions.get_weather:\n" + W + "\nfunctions.search_docs:\n" + S, None, None,
      [("get_weather", W), ("search_docs", S)])
built("not-a-call", "chatml-functions", "See functions.py:\nit has no JSON.", "See functions.py:\nit has no JSON.",
      None, [])
built("call-first", "functionary-v2", "get_weather\n<|content|>" + W + "\n<|from|>assistant\n<|recipient|>all\n"
      "<|content|>Done.", "Done.", None, [("get_weather", W)], tail="<|from|>assistant\n<|recipient|>")
built("content-after-call", "glimmer", ' to=get_weather<|message|><atem:function_calls>\n<atem:invoke name="get_weather">\n'
      '<atem:parameter name="city">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>'
      "<|start|>assistant to=user<|message|>Checking.", "Checking.", None, [("get_weather", '{"city": "Paris"}')],
      tail="<|start|>assistant")
CUT = "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar"
built("cut-off", "qwen3-coder", "Text " + CUT, "Text " + CUT, None, [], broken=True)
built("bad-json", "nemotron-v2", '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": }]</TOOLCALL>',
      '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": }]</TOOLCALL>', None, [], broken=True)
built("empty-name", "deepseek-v3.1", "<\uff5ctool\u2581call\u2581begin\uff5c><\uff5ctool\u2581sep\uff5c>{}",
      "<\uff5ctool\u2581call\u2581begin\uff5c><\uff5ctool\u2581sep\uff5c>{}", None, [], broken=True)
# a call opener inside reasoning that never becomes a call is reasoning text again
built("broken-call-in-reasoning", "qwen3-coder", "I might call <tool_call> later.\n</think>\n\nNo tools.",
      "No tools.", "I might call <tool_call> later.", [], tail="<|im_start|>assistant\n<think>\n")
built("broken-call-in-reasoning-cut", "qwen3-coder", "Maybe <tool_call>\n<function=get_weather>",
      None, "Maybe <tool_call>\n<function=get_weather>", [], tail="<|im_start|>assistant\n<think>\n", broken=True)
# a call opened inside reasoning and broken (here by the end of the reply) is
# reasoning text up to the reasoning's end; what follows is parsed as the reply
# goes on (content, a cut marker, a section that never holds a call)
built("broken-call-then-think-close", "kimi-k2", "<think>Plan <|tool_call_begin|>x</think>Sure.",
      "Sure.", "Plan <|tool_call_begin|>x", [])
built("broken-section-then-think-close", "kimi-k2",
      "<think>Plan <|tool_calls_section_begin|><|tool_call_begin|>functions.get</think>Sure.",
      "Sure.", "Plan <|tool_calls_section_begin|><|tool_call_begin|>functions.get", [])
built("broken-call-then-think-close-cut-marker", "kimi-k2", "<think>Plan <|tool_call_begin|>x</think>Sure <|tool_ca",
      "Sure <|tool_ca", "Plan <|tool_call_begin|>x", [])
built("broken-call-then-think-close-empty-section", "kimi-k2",
      "<think>Plan <|tool_call_begin|>x</think>Sure <|tool_calls_section_begin|>",
      "Sure <|tool_calls_section_begin|>", "Plan <|tool_call_begin|>x", [])
built("broken-call-then-think-close", "nemotron-v2", '<think>Plan <TOOLCALL>[{"name": "get_weather</think>Sure.',
      "Sure.", 'Plan <TOOLCALL>[{"name": "get_weather', [])
built("broken-args-then-think-close", "nemotron-v2",
      '<think>Plan <TOOLCALL>[{"arguments": {"city": "Paris</think>Sure.',
      "Sure.", 'Plan <TOOLCALL>[{"arguments": {"city": "Paris', [])
# (the stream commits the call at its name, so only the whole parse is compared)
built("broken-call-then-think-close", "qwen3-coder",
      "<think>Plan <tool_call>\n<function=get_weather>\n<parameter=city>\nParis</think>Sure.",
      "Sure.", "Plan <tool_call>\n<function=get_weather>\n<parameter=city>\nParis", [], broken=True)
# GLM-4.5 thinks again after text (interleaved thinking): reasoning goes on
built("second-think-block", "glm45", "<think>Plan.</think>Hello.\n<think> More plan.</think>Checking.\n"
      "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
      "Hello.\nChecking.", "Plan. More plan.", [("get_weather", '{"city": "Paris"}')])

out = os.path.join(HERE, "engine_cases.jsonl")
with open(out, "w", encoding="utf-8") as f:
    for c in CASES:
        f.write(json.dumps(c, ensure_ascii=False) + "\n")
counts = {}
for c in CASES:
    counts[c["format"]] = counts.get(c["format"], 0) + 1
print("wrote %d cases to %s: %s" % (len(CASES), os.path.relpath(out),
                                     ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
