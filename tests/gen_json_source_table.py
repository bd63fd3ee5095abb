#!/usr/bin/env python3
"""Writes tests/unit/json_source.jsonl: `tojson` of lists and dicts whose
context JSON is spelled in many ways, for src/engine/json.c's JsonSource (a
container read from text that json.dumps(ensure_ascii=False) would write
again as it was is copied, not dumped).

The context of each row is written here byte by byte (other spacing, escapes
json.dumps does not use, numbers it spells otherwise, repeated keys), so the
reader's verbatim check is exercised both ways; every row is rendered with
each tojson option set, as the unit tables are: live, against the reference.

Row ids are json_source-NNN. Add rows at the END so ids stay stable.
Regenerate with:
    python3 tests/gen_json_source_table.py
"""
import json
import os

# Each template dumps x whole, a part of it, and x under every option that
# must NOT take the copy (ensure_ascii, indent, sort_keys, separators).
TOJSON_ALL = ("{{ x|tojson }}|{{ x|tojson(ensure_ascii=False) }}|{{ x|tojson(separators=(', ', ': ')) }}"
              "|{{ x|tojson(ensure_ascii=True) }}|{{ x|tojson(indent=2) }}|{{ x|tojson(sort_keys=True) }}"
              "|{{ x|tojson(separators=(',', ':')) }}")

# (template, context JSON text exactly as the line carries it)
ROWS = [
    # canonical: copied
    (TOJSON_ALL, '{"x": {"b": [1, 2, {"c": null}], "a": "text", "t": true, "f": false, "n": -7}}'),
    (TOJSON_ALL, '{"x": [{"name": "get_weather", "parameters": {"type": "object", "properties": '
                 '{"city": {"type": "string"}}, "required": ["city"]}}]}'),
    (TOJSON_ALL, '{"x": {"g": {}, "h": [], "big": 12345678901234567890, "neg": -98765432109876543210}}'),
    (TOJSON_ALL, '{"x": {"s": "q\\"\\\\\\n\\r\\t\\b\\f", "ctl": "\\u001b\\u0000\\u001f", "raw": "caf\u00e9 \u2603 \U0001f600", "del": "\x7f"}}'),
    # spacing json.dumps does not write: dumped
    (TOJSON_ALL, '{"x": {"a":1, "b": [1,2]}}'),
    (TOJSON_ALL, '{"x": {"a": 1,  "b": 2}}'),
    (TOJSON_ALL, '{"x": {"a" : 1}}'),
    (TOJSON_ALL, '{"x": [ 1, 2 ]}'),
    (TOJSON_ALL, '{"x": { }}'),
    (TOJSON_ALL, '{"x": [\t1,\t2]}'),   # (a line of JSONL holds no newline)
    (TOJSON_ALL, '{"x":\t{"a": 1}}'),
    (TOJSON_ALL, '{"x": {"a": [1, 2],"b": 3}}'),
    # escapes json.dumps(ensure_ascii=False) spells otherwise
    (TOJSON_ALL, '{"x": {"a": "\\/"}}'),
    (TOJSON_ALL, '{"x": {"a": "\\u00e9"}}'),
    (TOJSON_ALL, '{"x": {"a": "\\u001B"}}'),
    (TOJSON_ALL, '{"x": {"a": "\\u0041"}}'),
    (TOJSON_ALL, '{"x": {"a": "\\u000a"}}'),
    (TOJSON_ALL, '{"x": {"a": "\\ud83d\\ude00"}}'),
    (TOJSON_ALL, '{"x": {"a": "\\u007f"}}'),
    # numbers json.dumps spells otherwise
    (TOJSON_ALL, '{"x": {"a": -0}}'),
    (TOJSON_ALL, '{"x": {"a": 1.50, "b": 1.5}}'),
    (TOJSON_ALL, '{"x": [1e5, 2E-3, 0.1]}'),
    (TOJSON_ALL, '{"x": [1.0]}'),
    # a repeated key: the last value, at the first position
    (TOJSON_ALL, '{"x": {"a": 1, "b": [1, 2], "a": 2}}'),
    ("{{ x|tojson }}{{ x.b|tojson }}{{ x.c|tojson }}", '{"x": {"a": 1, "b": [1, 2], "c": {"k": "v"}, "a": 2}}'),
    # a part copied where the whole is not, and containers the template builds
    ("{{ x|tojson }}{{ x.a|tojson }}{{ x.b|tojson }}", '{"x": {"a": [1, 2], "b": {"k" : 1}}}'),
    ("{{ [x, x.a]|tojson }}{{ {'k': x}|tojson }}{{ (x.a + [3])|tojson }}{{ x.a[::-1]|tojson }}{{ x.a|list|tojson }}",
     '{"x": {"a": [1, 2], "b": "c"}}'),
    ("{{ x|items|list|tojson }}{{ dict(x)|tojson }}{{ x|dictsort|tojson }}{{ (x|list)|tojson }}",
     '{"x": {"z": 1, "a": 2}}'),
    ("{% set ns = namespace(v=x) %}{{ ns.v|tojson }}{% for k, v in x.items() %}{{ v|tojson }}{% endfor %}",
     '{"x": {"a": {"b": [true]}, "c": [{"d": null}]}}'),
    # what the template then prints around it (Markup under autoescape)
    ("{% autoescape true %}{{ x|tojson }}{% endautoescape %}", '{"x": {"a": "<b>&"}}'),
    ("{{ x|tojson|length }} {{ (x|tojson)[2:5] }}", '{"x": {"a": "é"}}'),
    # chat mode: tools and tool-call arguments as the templates dump them
    ("{% for t in tools %}{{ t|tojson }}\n{% endfor %}{% for m in messages %}{% for c in m.tool_calls or [] %}"
     "{{ c.function.arguments|tojson }}{% endfor %}{% endfor %}",
     '{"messages": [{"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": '
     '{"name": "f", "arguments": {"city": "Paris", "n": [1, {"x": "y"}]}}}]}], "tools": [{"type": "function", '
     '"function": {"name": "f", "description": "d\\n", "parameters": {"type": "object", "properties": {}}}}]}'),
    # floats that repr() spells as they are (copied) and otherwise (dumped)
    (TOJSON_ALL, '{"x": [0.5, 100.0, -0.0, 0.0, 0.0001, 0.00012, 12.25, -3.5, 123456789012345.0, 0.1]}'),
    (TOJSON_ALL, '{"x": [0.00001]}'),
    (TOJSON_ALL, '{"x": [1.10]}'),
    (TOJSON_ALL, '{"x": [123456789012345.6]}'),
    (TOJSON_ALL, '{"x": [1234567890123456.0]}'),
    (TOJSON_ALL, '{"x": [12345678901234567.0]}'),
    (TOJSON_ALL, '{"x": [0.1000000000000000055511151231257827]}'),
    (TOJSON_ALL, '{"x": [1.5e3, 1E2]}'),
    (TOJSON_ALL, '{"x": {"t": 0.7, "p": 0.95, "n": -5, "z": -10}}'),
]


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unit", "json_source.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        for k, (template, context) in enumerate(ROWS, 1):
            json.loads(context)   # a typo here would make a row test the JSON reader instead
            raw = "messages" not in json.loads(context)
            # the line is assembled as text: the context keeps its spelling
            fh.write('{"id": "json_source-%03d", "template_text": %s, "context": %s, "raw": %s}\n'
                     % (k, json.dumps(template, ensure_ascii=False), context, "true" if raw else "false"))
    print(f"{len(ROWS)} rows -> {os.path.relpath(path)}")


if __name__ == "__main__":
    main()
