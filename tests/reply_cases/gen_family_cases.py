#!/usr/bin/env python3
"""gen_family_cases.py — writes tests/reply_cases/families.jsonl for
tests/test_reply.c: the hand-written reply families (harmony, llama3-json,
pythonic, mistral, functionary-v31/v32, functools, gemma4, xlam).

Usage (from the repository root): python3 tests/reply_cases/gen_family_cases.py [SHARED]
SHARED defaults to $CHATFMT_SHARED or ../shared.

Same case format as gen_cases.py. Where replies come from:
  - "rendered" cases: a corpus template of the family renders the assistant
    turn (the reference renderer, shared/oracle/hf_render.py); the reply is the
    full render after the generation-prompt render, its end-of-turn token cut;
    the expected message is the turn the template was given. A template that
    prints something else than the turn (drops the content, stringifies
    numbers) leaves that scenario out, named in SKIPPED below with the reason.
  - "built" cases: replies written by the writer functions below from a
    message, in the syntax the family's documentation and peers' tests show
    (both harmony recipient positions, Llama's ';'-joined calls and builtin
    tools, Python literals with True/None/tuples/escapes, Mistral's three
    tokenizer versions, ...). The expected message is the one the writer was
    given; broken cases (cut off mid-call) expect the reply as content.
Arguments are expected as json.dumps(args, ensure_ascii=False) writes them:
what the templates' tojson writes, and what the converted formats build.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = (sys.argv[1] if len(sys.argv) > 1 else
          os.environ.get("CHATFMT_SHARED", os.path.join(HERE, "..", "..", "..", "shared")))
sys.path.insert(0, os.path.join(SHARED, "oracle"))
import hf_render  # noqa: E402

sys.path.insert(0, HERE)
from expect import WS, strip_or_none  # noqa: E402
OUT = os.path.join(HERE, "families.jsonl")


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
    fn("get_time", {"tz": {"type": "string"}}, ["tz"]),
    fn("configure", {"matrix": {"type": "array"}, "options": {"type": "object"}, "label": {"type": "string"}}),
    fn("ping", {}),
]

KEYWORDS = {
    "harmony": ["start", "assistant", "channel", "analysis", "commentary", "final", "to", "functions",
                "constrain", "json", "message", "end", "call", "return"],
    "llama3-json": ["name", "parameters", "arguments", "type", "function", "python", "tag", "start", "end",
                    "eot", "eom", "id", "call"],
    "pythonic": ["tool", "call", "start", "end", "function", "calls", "True", "False", "None", "python",
                 "eot", "id", "think", "name", "arguments"],
    "mistral": ["TOOL", "CALLS", "ARGS", "CALL", "ID", "THINK", "name", "arguments", "id"],
    "functionary-v31": ["function", "python", "tag", "eom", "id", "eot", "code"],
    "functionary-v32": ["all", "python", "code"],
    "functools": ["functools", "name", "arguments"],
    "gemma4": ["tool", "call", "channel", "thought", "response", "turn", "start", "end", "function", "escape",
               "None", "True", "False"],
    "xlam": ["name", "arguments", "json", "tool", "call", "TOOL", "CALLS", "think", "id"],
}

# ---- the expected message -----------------------------------------------------




def expect(content, reasoning, calls=(), ids=None):
    m = {"role": "assistant", "content": strip_or_none(content), "reasoning_content": strip_or_none(reasoning)}
    if calls:
        m["tool_calls"] = [{"id": (ids[i] if ids and ids[i] else "call_%d" % i), "type": "function",
                            "function": {"name": n, "arguments": dumps(a)}} for i, (n, a) in enumerate(calls)]
    return compact(m)


CASES = []


def case(name, fmt, reply, expected, tools=None, tail=None, broken=False):
    CASES.append({"name": name, "format": fmt, "tools": tools, "tail": tail, "reply": reply,
                  "expect": expected, "broken": broken, "keywords": KEYWORDS[fmt]})


# ---- rendered by the family's own templates ---------------------------------------

RENDERED = {
    "harmony": ["templates/openai__gpt-oss-120b.jinja", "more/unsloth__gptoss.jinja"],
    "llama3-json": ["templates/meta-llama__Llama-3.1-8B-Instruct.jinja", "templates/meta-llama__Llama-3.2-3B-Instruct.jinja",
                    "templates/ollama-library__llama4-latest.jinja", "templates/ollama-library__nemotron-70b.jinja"],
    "pythonic": ["templates/LiquidAI__LFM2.5-8B-A1B.jinja", "templates/LiquidAI__LFM2.5-VL-450M.jinja",
                 "more/vllm__tool_chat_template_olmo3.jinja", "more/vllm__tool_chat_template_llama4_pythonic.jinja"],
    "mistral": ["templates/mistralai__Mistral-7B-Instruct-v0.3-JSON_Schema.jinja",
                "templates/mistralai__Ministral-3-14B-Reasoning-2512.jinja",
                "templates/unsloth__mistral-Devstral-Small-2507.jinja",
                "more/CISCai__Mistral-7B-Instruct-v0.3-SOTA-GGUF-hfjs.jinja"],
    "functionary-v31": ["templates/meetkai__functionary-medium-v3.1.jinja"],
    "functionary-v32": ["templates/meetkai__functionary-medium-v3.2.jinja"],
    "gemma4": ["templates/google__gemma-4-31B-it.jinja", "templates/google__gemma4.jinja",
               "more/google__gemma-4-canonical-diffusion-trl.jinja"],
    "xlam": ["more/vllm__tool_chat_template_xlam_qwen.jinja", "more/ollama-library__cogito-3b.jinja"],
}
# scenario ids a template prints otherwise than the turn it was given
SKIPPED = {
    ("openai__gpt-oss-120b.jinja", "unicode"): "prints a tool-calling turn's content in the analysis channel",
    ("unsloth__gptoss.jinja", "unicode"): "prints a tool-calling turn's content in the analysis channel",
    ("LiquidAI__LFM2.5-VL-450M.jinja", "nested"): "writes a string's inner quotes unescaped",
    ("openai__gpt-oss-120b.jinja", "text"): "prints a tool-calling turn's content in the analysis channel",
    ("unsloth__gptoss.jinja", "text"): "prints a tool-calling turn's content in the analysis channel",
    ("vllm__tool_chat_template_llama4_pythonic.jinja", "nested"): "writes a dict argument's JSON text a character at a time",
}
ENDS = ["<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|eot|>", "<|end|>", "<|call|>", "<|return|>", "</s>",
        "<turn|>", "<|tool_response>", "<|endoftext|>", "<|end_of_text|>", "<|tool_call_end|>"]

NESTED = {"matrix": [[1, 2], [3]], "options": {"deep": {"x": None, "ok": True}, "r": 2.5},
          "label": "a \"quoted\" \\ back\nline"}
SCENARIOS = [
    ("call", "", None, [("get_weather", {"city": "Paris", "days": 3})]),
    ("two", "", None, [("get_weather", {"city": "Paris", "days": 3}), ("get_time", {"tz": "Europe/Paris"})]),
    ("text", "Let me look that up.", None, [("get_weather", {"city": "Paris", "days": 3})]),
    ("think", "It is sunny.", "The user asks about the weather.", []),
    ("nested", "", None, [("configure", NESTED)]),
    ("unicode", "Voilà: 東京 🙂", None, [("get_weather", {"city": "Zürich 東京 🙂"})]),
    ("noargs", "", None, [("ping", {})]),
]


def key_at(reply, key):
    """Where a key is written: key: / key= / "key" / 'key', not inside another word."""
    best = len(reply)
    for pat in ('"%s"' % key, "'%s'" % key, key + ":", key + "="):
        at = reply.find(pat)
        while at > 0 and pat[0] not in "\"'" and (reply[at - 1].isalnum() or reply[at - 1] == "_"):
            at = reply.find(pat, at + 1)
        if at >= 0:
            best = min(best, at)
    return best


def in_reply_order(v, reply):
    """The arguments with their keys in the order the reply writes them (a
    template may sort them; the parser keeps the order it reads)."""
    if isinstance(v, dict):
        return {k: in_reply_order(v[k], reply) for k in sorted(v, key=lambda k: key_at(reply, k))}
    if isinstance(v, list):
        return [in_reply_order(x, reply) for x in v]
    return v


def strip_end(s):
    while True:
        t = s.rstrip(WS)
        for e in ENDS:
            if t.endswith(e):
                t = t[:-len(e)]
                break
        else:
            return t
        s = t


def mistral_id(i):
    return "abcDEF12" + str(i)


def rendered_cases():
    for fmt, paths in RENDERED.items():
        for rel in paths:
            path = os.path.join(SHARED, "corpus", rel)
            with open(path, encoding="utf-8") as f:
                tpl = f.read()
            base = os.path.basename(rel)
            for sid, content, reasoning, calls in SCENARIOS:
                if (base, sid) in SKIPPED:
                    continue
                ids = [mistral_id(i) if fmt == "mistral" else "call_%d" % i for i in range(len(calls))]
                msg = {"role": "assistant", "content": content}
                if reasoning:
                    msg["reasoning_content"] = reasoning
                if calls:
                    msg["tool_calls"] = [{"id": ids[i], "type": "function", "function": {"name": n, "arguments": a}}
                                         for i, (n, a) in enumerate(calls)]
                user = {"role": "user", "content": "What is the weather in Paris?"}
                ctx = {"bos_token": "<s>", "eos_token": "</s>"}
                if calls:
                    ctx["tools"] = TOOLS
                try:
                    prompt = hf_render.render(tpl, dict(ctx, messages=[user], add_generation_prompt=True))
                    full = hf_render.render(tpl, dict(ctx, messages=[user, msg], add_generation_prompt=False))
                except Exception:
                    continue
                i = 0
                while i < min(len(prompt), len(full)) and prompt[i] == full[i]:
                    i += 1
                for o, c in (("<", ">"), ("[", "]")):
                    k = full.rfind(o, 0, i)
                    if k > full.rfind(c, 0, i):
                        i = k
                reply = strip_end(full[i:])
                # counted only where the template prints what the turn holds
                if any(n not in reply for n, _ in calls) or (reasoning and reasoning not in reply):
                    continue
                if content and content not in reply:
                    continue
                got_ids = [x if x in reply else None for x in ids]
                calls = [(n, in_reply_order(a, reply)) for n, a in calls]
                case("%s/%s/%s" % (fmt, base, sid), fmt, reply, expect(content, reasoning, calls, got_ids),
                     TOOLS if calls else None, prompt[i - 200 if i > 200 else 0:i])


# ---- built from the formats' documented syntax ------------------------------------

def py_kwargs(args):
    return ", ".join("%s=%r" % (k, v) for k, v in args.items())


def gemma_lit(v, tok='<|"|>'):
    if isinstance(v, str):
        return tok + v + tok
    if v is True or v is False:
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, list):
        return "[" + ",".join(gemma_lit(x, tok) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(k + ":" + gemma_lit(x, tok) for k, x in v.items()) + "}"
    return repr(v)


W = ("get_weather", {"city": "Paris", "days": 3})
T = ("get_time", {"tz": "Europe/Paris"})
N = ("configure", NESTED)
P = ("ping", {})


def built_cases():
    # harmony
    h = "harmony"
    case("harmony/header-recipient", h, " to=functions.get_weather<|channel|>commentary json<|message|>" +
         dumps(W[1]) + "<|call|>", expect("", None, [W]))
    case("harmony/channel-recipient", h, "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant"
         "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>" + dumps(W[1]) + "<|call|>",
         expect("", "Need weather.", [W]))
    case("harmony/final", h, "<|channel|>analysis<|message|>Think\nmore<|end|><|start|>assistant<|channel|>final"
         "<|message|>It is sunny.<|return|>", expect("It is sunny.", "Think\nmore"))
    case("harmony/preamble", h, "<|channel|>commentary<|message|>Checking now.<|end|><|start|>assistant to=functions.ping"
         "<|channel|>commentary json<|message|>{}<|call|>", expect("Checking now.", None, [P]))
    case("harmony/two-analysis", h, "<|channel|>analysis<|message|>One.<|end|><|start|>assistant<|channel|>analysis"
         "<|message|>Two.<|end|><|start|>assistant<|channel|>final<|message|>Done.", expect("Done.", "One.\n\nTwo."))
    case("harmony/open", h, "Thinking inside.<|end|><|start|>assistant<|channel|>final<|message|>Out.",
         expect("Out.", "Thinking inside."), tail="<|start|>assistant<|channel|>analysis<|message|>")
    case("harmony/plain", h, "Just text, no header.", expect("Just text, no header.", None))
    cut = " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Par"
    case("harmony/cut", h, cut, expect(cut.lstrip(WS), None), broken=True)

    # llama3-json
    l3 = "llama3-json"
    case("llama3/bare", l3, '{"name": "get_weather", "parameters": ' + dumps(W[1]) + "}", expect("", None, [W]))
    case("llama3/arguments-key", l3, '{"type": "function", "name": "get_time", "arguments": ' + dumps(T[1]) + "}",
         expect("", None, [T]))
    case("llama3/semicolons", l3, "; ".join('{"name": "%s", "parameters": %s}' % (n, dumps(a)) for n, a in (W, T, P)),
         expect("", None, [W, T, P]))
    case("llama3/back-to-back", l3, "".join('{"name": "%s", "parameters": %s}' % (n, dumps(a)) for n, a in (W, N)),
         expect("", None, [W, N]))
    case("llama3/text-around", l3, 'Here is the result: {"name": "get_time", "parameters": ' + dumps(T[1]) +
         "} Would you like more?", expect("Here is the result:  Would you like more?", None, [T]))
    case("llama3/python-tag", l3, '<|python_tag|>{"name": "get_weather", "parameters": ' + dumps(W[1]) + "}<|eom_id|>",
         expect("", None, [W]))
    case("llama3/builtin", l3, '<|python_tag|>brave_search.call(query="weather in Paris")<|eom_id|>',
         expect("", None, [("brave_search", {"query": "weather in Paris"})]))
    case("llama3/not-a-call", l3, 'Set {"name": "Bob", "age": 3} and {"parameters": {}}.',
         expect('Set {"name": "Bob", "age": 3} and {"parameters": {}}.', None))
    case("llama3/name-only", l3, '{"name": "ping"}', expect('{"name": "ping"}', None))
    cut = '{"name": "get_weather", "parameters": {"city": "Pa'
    case("llama3/cut", l3, cut, expect(cut, None), broken=True)

    # pythonic
    py = "pythonic"
    lits = ("register_user", {"name": "O'Brien \"Bob\"", "age": 37, "tags": ("a", "b"), "role": None, "ok": True,
                              "addr": {"city": "San Francisco", "zip": [9, 4]}, "note": "tab\there\u00e9"})
    lits_expect = ("register_user", {"name": "O'Brien \"Bob\"", "age": 37, "tags": ["a", "b"], "role": None,
                                     "ok": True, "addr": {"city": "San Francisco", "zip": [9, 4]}, "note": "tab\there\u00e9"})
    case("pythonic/list", py, "[%s(%s), %s(%s)]" % (W[0], py_kwargs(W[1]), lits[0], py_kwargs(lits[1])),
         expect("", None, [W, lits_expect]))
    case("pythonic/no-args", py, "[ping()]", expect("", None, [P]))
    case("pythonic/text-before", py, "Let me check. [%s(%s)]" % (T[0], py_kwargs(T[1])), expect("Let me check. ", None, [T]))
    case("pythonic/markdown", py, "See [link text](https://example.com) and [1].", expect(
        "See [link text](https://example.com) and [1].", None))
    case("pythonic/lfm2", py, "<think>Plan.</think>On it.<|tool_call_start|>[%s(%s)]<|tool_call_end|>Done." % (
        N[0], py_kwargs(N[1])), expect("On it.Done.", "Plan.", [N]))
    case("pythonic/lfm2-json", py, "<|tool_call_start|>[" + dumps({"name": W[0], "arguments": W[1]}) +
         "]<|tool_call_end|>", expect("", None, [W]))
    case("pythonic/olmo3", py, "<function_calls>\n%s(%s)\n%s(%s)\n</function_calls>" % (
        W[0], py_kwargs(W[1]), T[0], py_kwargs(T[1])), expect("", None, [W, T]))
    case("pythonic/llama4-wrapper", py, "<|python_start|>[%s(%s)]<|python_end|>" % (T[0], py_kwargs(T[1])),
         expect("", None, [T]))
    case("pythonic/triple-quoted", py, "[run(code='''print(\"a\")\nx = 'y'\n''')]",
         expect("", None, [("run", {"code": "print(\"a\")\nx = 'y'\n"})]))
    case("pythonic/minicpm3-fence", py, "<|tool_call_start|>\n```python\n%s(%s)\n%s(%s)\n```\n<|tool_call_end|>\nOK." % (
        W[0], py_kwargs(W[1]), T[0], py_kwargs(T[1])), expect("OK.", None, [W, T]))
    case("pythonic/typed-strings", py, '[get_weather(city="3", days="4")]', expect("", None, [("get_weather", {"city": "3", "days": 4})]),
         tools=TOOLS)
    case("pythonic/no-comma", py, '[get_weather(city="Paris"days=3)]', expect("", None, [W]))
    cut = "[get_weather(city='Par"
    case("pythonic/cut", py, cut, expect(cut, None), broken=True)

    # mistral
    m = "mistral"
    v3 = [dict(name=n, arguments=a, id=mistral_id(i)) for i, (n, a) in enumerate((W, T))]
    case("mistral/v3", m, "[TOOL_CALLS] " + dumps(v3), expect("", None, [W, T], [mistral_id(0), mistral_id(1)]))
    case("mistral/v3-no-id", m, "[TOOL_CALLS][" + dumps({"name": P[0], "arguments": {}}) + "]", expect("", None, [P]))
    case("mistral/v11", m, "Sure.[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]" + dumps(W[1]),
         expect("Sure.", None, [W], ["abcDEF123"]))
    case("mistral/v13", m, "[THINK]Two calls.[/THINK][TOOL_CALLS]get_weather[ARGS]" + dumps(W[1]) +
         "[TOOL_CALLS]configure[ARGS]" + dumps(N[1]), expect("", "Two calls.", [W, N]))
    case("mistral/bare-args", m, "[TOOL_CALLS]get_time" + dumps(T[1]), expect("", None, [T]))
    case("mistral/call-in-think", m, "[THINK]maybe [TOOL_CALLS]ping[ARGS]{} later[/THINK]Answer.",
         expect("Answer.", "maybe [TOOL_CALLS]ping[ARGS]{} later"))
    case("mistral/open", m, "Still thinking[/THINK]Answer.", expect("Answer.", "Still thinking"), tail="[INST]Q[/INST][THINK]")
    cut = "[TOOL_CALLS]get_weather[ARGS]{\"city\": "
    case("mistral/cut", m, cut, expect(cut, None), broken=True)

    # functionary
    f1 = "functionary-v31"
    case("functionary-v31/calls", f1, "Checking.<function=get_weather>" + dumps(W[1]) + "</function><function=ping>{}</function>",
         expect("Checking.", None, [W, P]))
    case("functionary-v31/python", f1, "<|python_tag|>import math\nprint(math.pi)<|eom_id|>",
         expect("", None, [("python", {"code": "import math\nprint(math.pi)"})]))
    cut = "<function=get_weather>{\"city\""
    case("functionary-v31/cut", f1, cut, expect(cut, None), broken=True)
    f2 = "functionary-v32"
    case("functionary-v32/all-then-call", f2, "all\nHello!\nLine two.>>>get_weather\n" + dumps(W[1]) + ">>>ping\n{}",
         expect("Hello!\nLine two.", None, [W, P]))
    case("functionary-v32/python", f2, "python\n# prog\nprint('hey')", expect("", None, [("python", {"code": "# prog\nprint('hey')"})]))
    case("functionary-v32/leading-marker", f2, ">>>get_time\n" + dumps(T[1]), expect("", None, [T]))
    case("functionary-v32/text-only", f2, "all\nJust text.", expect("Just text.", None))

    # functools
    ft = "functools"
    case("functools/firefunction", ft, " functools[" + ", ".join(dumps({"name": n, "arguments": a}) for n, a in (W, T)) + "]",
         expect("", None, [W, T]))
    case("functools/text-before", ft, "One moment. functools[" + dumps({"name": P[0], "arguments": {}}) + "]",
         expect("One moment. ", None, [P]))
    case("functools/bare-objects", ft, ",".join(dumps({"name": n, "arguments": a}) for n, a in (W, T)),
         expect("", None, [W, T]))
    cut = 'functools[{"name": "get_weather", "arguments": {"ci'
    case("functools/cut", ft, cut, expect(cut, None), broken=True)

    # gemma4
    g = "gemma4"
    case("gemma4/thought-and-call", g, "<|channel>thought\nNeed the weather.<channel|>Checking.<|tool_call>call:get_weather" +
         gemma_lit(W[1]) + "<tool_call|><|tool_response>", expect("Checking.", "Need the weather.", [W]))
    case("gemma4/nested", g, "<|tool_call>call:configure" + gemma_lit(N[1]) + "<tool_call|><|tool_call>call:ping{}<tool_call|>",
         expect("", None, [N, P]))
    case("gemma4/functiongemma", g, "<start_function_call>call:get_time" + gemma_lit(T[1], "<escape>") +
         "<end_function_call>", expect("", None, [T]))
    case("gemma4/empty-thought", g, "<|channel>thought\n<channel|>Hello.", expect("Hello.", None))
    cut = "<|tool_call>call:get_weather{city:<|\"|>Par"
    case("gemma4/cut", g, cut, expect(cut, None), broken=True)

    # xlam
    x = "xlam"
    lst = dumps([{"name": n, "arguments": a} for n, a in (W, T)])
    case("xlam/bare", x, lst, expect("", None, [W, T]))
    case("xlam/fenced", x, "I'll help.\n```json\n" + lst + "\n```", expect("I'll help.", None, [W, T]))
    case("xlam/tool-call-tag", x, "Sure.<tool_call>" + lst + "</tool_call>", expect("Sure.", None, [W, T]))
    case("xlam/tool-calls-token", x, "Sure.[TOOL_CALLS]" + lst, expect("Sure.", None, [W, T]))
    case("xlam/think", x, "<think>Plan.</think>" + lst, expect("", "Plan.", [W, T]))
    case("xlam/ids", x, dumps([{"name": P[0], "arguments": {}, "id": "call_x7"}]), expect("", None, [P], ["call_x7"]))
    case("xlam/prose-bracket", x, "Options [a] or [b].", expect("Options [a] or [b].", None))
    cut = '[{"name": "get_weather", "arguments": {"city'
    case("xlam/cut", x, cut, expect(cut, None), broken=True)


def main():
    rendered_cases()
    built_cases()
    with open(OUT, "w", encoding="utf-8") as f:
        for c in CASES:
            f.write(compact(c) + "\n")
    print("%d cases -> %s" % (len(CASES), OUT))


if __name__ == "__main__":
    main()
