#!/usr/bin/env python3
"""gen_long_conversation.py SHARED — batch cases: every seed and corpus template on one long
conversation (shared/conversations/20-long-agentic.json's 100 turns, tools and all, repeated
40 times with 600 more characters in each user and tool turn: about 4000 messages, 1.8 MB).

tests/run_tests.sh renders them with the reference and with chatfmt and wants every case
identical. Long inputs are where memory that a render never gives back shows: a template
that builds its prompt as ns.out = ns.out ~ ... once ran past the 256 MiB memory limit on
such a conversation, where Python needs 30 MB (interp.c, accumulate); one that walks
each message's characters held 64 bytes a character; and `messages|length` inside the loop
over the messages charged their square in steps, so Qwen3 ran out of its step budget.
One case stops at the step budget by design: gemma-4-31B-it looks back over every earlier
message for each message, which takes 15 to 20 million steps here against the default
10 million (tests/KNOWN_DIFFERENCES.md).
"""
import copy
import glob
import json
import os
import sys

shared = sys.argv[1]
with open(os.path.join(shared, "conversations", "20-long-agentic.json"), encoding="utf-8") as f:
    base = json.load(f)
filler = " ".join(f"word{i % 97}" for i in range(100))[:600]
messages = []
for r in range(40):
    for m in base["messages"]:
        m = copy.deepcopy(m)
        if m.get("role") in ("user", "tool") and isinstance(m.get("content"), str):
            m["content"] = f"{m['content']} [{r}] {filler}"
        if m.get("role") == "system" and r:
            continue
        messages.append(m)
context = dict(base, messages=messages)
templates = sorted(glob.glob(os.path.join(shared, "seeds", "*.jinja"))) + \
    sorted(glob.glob(os.path.join(shared, "corpus", "templates", "*.jinja")))
for t in templates:
    print(json.dumps({"id": f"{os.path.basename(t)}|long", "template": t, "context": context}, ensure_ascii=False))
