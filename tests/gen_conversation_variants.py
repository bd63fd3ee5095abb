#!/usr/bin/env python3
"""Edge-case variants of the public conversations, for a differential of real
templates (seeds and corpus) on data they rarely see.

usage: gen_conversation_variants.py CONVERSATIONS_DIR OUT_DIR [SEED PER MIX]

Three variants of each conversation, each one change picked by a fixed
random stream (so the set is the same on every run): assistant content None,
content as a parts list, empty contents, no system message, a tool message
first, an unknown role, tool arguments as a JSON string or nested with a big
integer, an assistant turn last without a generation prompt, Unicode and
escapes in every text, extra message keys, odd enable_thinking /
reasoning_effort values, an empty tools list, a message without a role.
The reference decides what each template makes of them.

SEED PER MIX (exploration, not the committed test): another random stream,
PER variants of each conversation, each with up to MIX changes at once.
"""
import copy
import json
import os
import random
import sys

KINDS = ["none_content", "list_content", "empty", "no_system", "tool_first", "weird_role", "args_string",
         "args_nested", "assistant_last", "unicode", "extra_keys", "numbers", "empty_tools", "missing_role"]


def vary(conv, kind, r):
    d = copy.deepcopy(conv)
    ms = d["messages"]
    if kind == "none_content":
        for m in ms:
            if m.get("role") == "assistant":
                m["content"] = None
    elif kind == "list_content":
        for m in ms:
            if isinstance(m.get("content"), str):
                m["content"] = [{"type": "text", "text": m["content"]}]
    elif kind == "empty":
        for m in ms:
            m["content"] = ""
    elif kind == "no_system":
        d["messages"] = [m for m in ms if m.get("role") != "system"] or ms
    elif kind == "tool_first":
        d["messages"] = [{"role": "tool", "content": "{\"ok\": true}", "tool_call_id": "x1"}] + ms
    elif kind == "weird_role":
        ms.insert(len(ms) // 2, {"role": "developer", "content": "Be brief."})
    elif kind == "args_string":
        for m in ms:
            for tc in m.get("tool_calls") or []:
                tc["function"]["arguments"] = json.dumps(tc["function"].get("arguments", {}))
    elif kind == "args_nested":
        for m in ms:
            for tc in m.get("tool_calls") or []:
                tc["function"]["arguments"] = {"q": {"a": [1, 2.5, None, True], "b": "x\ny"},
                                               "n": 12345678901234567890}
    elif kind == "assistant_last":
        ms.append({"role": "assistant", "content": "Partial answer"})
        d["add_generation_prompt"] = False
    elif kind == "unicode":
        for m in ms:
            if isinstance(m.get("content"), str):
                m["content"] += " \u2014 \u00df \u0130 \U0001f600 \u200b\t\"q\" \\ </s>"
    elif kind == "extra_keys":
        for m in ms:
            m["name"] = "n"
            m["weight"] = 0.5
    elif kind == "numbers":
        d["enable_thinking"] = r.choice([True, False, 0, 1, None])
        d["reasoning_effort"] = r.choice(["low", "high", 3])
    elif kind == "empty_tools":
        d["tools"] = []
    elif kind == "missing_role":
        ms.insert(0, {"content": "no role"})
    return d


def main():
    src, out = sys.argv[1], sys.argv[2]
    seed, per, mix = (int(a) for a in sys.argv[3:6]) if len(sys.argv) >= 6 else (7, 3, 1)
    os.makedirs(out, exist_ok=True)
    r = random.Random(seed)
    n = 0
    for name in sorted(os.listdir(src)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(src, name), encoding="utf-8") as f:
            conv = json.load(f)
        for v in range(per):
            kind = r.choice(KINDS)
            d = vary(conv, kind, r)
            for _ in range(r.randint(1, mix) - 1 if mix > 1 else 0):   # (mix 1 draws nothing: the committed set)
                more = r.choice(KINDS)
                d = vary(d, more, r)
                kind += "+" + more
            with open(os.path.join(out, f"{name[:-5]}-{kind}-{v}.json"), "w", encoding="utf-8") as f:
                json.dump(d, f, ensure_ascii=False)
            n += 1
    print(f"{n} variants -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
