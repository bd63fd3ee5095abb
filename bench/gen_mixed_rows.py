#!/usr/bin/env python3
"""gen_mixed_rows.py SHARED ROWS > rows.jsonl — dataset-mode rows of three kinds, mixed as a
training set mixes them (deterministic: the same arguments give the same bytes).

  short      (6 rows in 10) the shared conversations (SHARED/conversations/0*.json, 1*.json)
             cycled, each made distinct (the row number in its last user turn, thinking and
             the generation prompt toggled on some rows)
  long       (2 rows in 10) 50-turn agentic conversations: a window of 50 messages of
             20-long-agentic.json (user questions, reasoning, tool calls and results) after
             its system prompt, starting at a different user turn on each row, with its tools
  tools      (2 rows in 10) requests with 60 tools: a short tool round trip (a user turn,
             a call, its result, an answer, a new question) against a fixed set of 60
             generated function definitions (nested objects, enums, arrays, required lists),
             as an agent framework sends the same tool set with every request

Every row keeps bos_token/eos_token when its source conversation has them. One JSON object
a line, ensure_ascii=False (as datasets are written).
"""
import copy
import json
import os
import sys

KINDS = ["short"] * 6 + ["long"] * 2 + ["tools"] * 2
TYPES = ["string", "integer", "number", "boolean"]


def sixty_tools():
    tools = []
    for k in range(60):
        props = {}
        for j in range(2 + k % 5):
            name = f"field_{j}_{['id', 'name', 'limit', 'mode', 'path', 'query'][(k + j) % 6]}"
            prop = {"type": TYPES[(k + j) % 4], "description": f"The {name.replace('_', ' ')} of request {k}."}
            if (k + j) % 7 == 3:
                prop = {"type": "string", "enum": ["fast", "balanced", "thorough"], "description": "How hard to try."}
            if (k + j) % 9 == 4:
                prop = {"type": "array", "items": {"type": "string"}, "description": "Tags to filter by."}
            if (k + j) % 11 == 5:
                prop = {"type": "object", "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                        "required": ["lat", "lon"], "description": "A point on the map."}
            props[name] = prop
        tools.append({"type": "function", "function": {
            "name": f"tool_{k:02d}_{['search', 'fetch', 'update', 'delete', 'list'][k % 5]}",
            "description": f"Operation {k} of the service: does step {k % 13} of the workflow and returns JSON.",
            "parameters": {"type": "object", "properties": props, "required": sorted(props)[: 1 + k % 2]}}})
    return tools


def main():
    shared, rows = sys.argv[1], int(sys.argv[2])
    cdir = os.path.join(shared, "conversations")
    shorts = []
    for n in sorted(os.listdir(cdir)):
        if n.endswith(".json") and n[0] in "01":
            with open(os.path.join(cdir, n), encoding="utf-8") as f:
                shorts.append(json.load(f))
    with open(os.path.join(cdir, "20-long-agentic.json"), encoding="utf-8") as f:
        agentic = json.load(f)
    system, turns = agentic["messages"][0], agentic["messages"][1:]
    user_at = [i for i, m in enumerate(turns) if m["role"] == "user" and i + 50 <= len(turns)]
    tools = sixty_tools()
    out = sys.stdout
    for i in range(rows):
        kind = KINDS[i % len(KINDS)]
        if kind == "short":
            c = copy.deepcopy(shorts[(i // len(KINDS) * 6 + i % len(KINDS)) % len(shorts)])
        elif kind == "long":
            start = user_at[(i // len(KINDS) * 2 + i % 2) % len(user_at)]
            c = {k: v for k, v in agentic.items() if k != "messages"}
            c["messages"] = [copy.deepcopy(system)] + copy.deepcopy(turns[start:start + 50])
            c["add_generation_prompt"] = c["messages"][-1]["role"] != "assistant"
        else:
            name = tools[i % 60]["function"]["name"]
            c = {"tools": tools, "add_generation_prompt": True, "messages": [
                {"role": "user", "content": f"Please run {name} for account {i}."},
                {"role": "assistant", "content": "", "tool_calls": [{"id": f"call_{i}", "type": "function",
                 "function": {"name": name, "arguments": {"field_0_id": i, "mode": "fast"}}}]},
                {"role": "tool", "tool_call_id": f"call_{i}", "content": json.dumps({"ok": True, "rows": i % 17})},
                {"role": "assistant", "content": f"Done: {i % 17} rows changed."},
                {"role": "user", "content": "Now list what changed, please."}]}
        for m in reversed(c["messages"]):
            if m.get("role") == "user" and isinstance(m.get("content"), str):
                m["content"] += f" (#{i})"
                break
        if i % 3 == 1:
            c["enable_thinking"] = False
        if kind == "short" and i % 7 == 3 and not c.get("continue_final_message"):
            c["add_generation_prompt"] = not c.get("add_generation_prompt", False)
        out.write(json.dumps(c, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
