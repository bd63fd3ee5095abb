#!/usr/bin/env python3
"""Writes tests/unit/subscripts.jsonl: `name[loop.index0 + k]` and
`name[loop.index0 - k]` (Qwen's `messages[loop.index0 - 1].role != "tool"`),
whose item chatfmt reads in place when the name holds a list or tuple, `loop`
is the loop and the index is in range (src/engine/interp_internal.h:
loop_offset_item; parser.c: GI_LOOP_OFFSET). Each row checks that this
changes nothing Jinja2 shows, where the fast path serves and where it must
step aside:

- subscripts-run-NNN: runs of tool messages opened and closed by looking at
  the previous and next message (==, !=, in an `or`, printed, as an inline
  if's test), items that are no dicts, lack the key, hold a non-str or
  markup, attributes that are not known keys.
- subscripts-edge-NNN: indexes out of range (Undefined), negative (Python
  counts from the end), huge constants, `loop` that is no loop (a macro
  parameter, a dict), names holding a str, a dict, a tuple, a range, a
  dict view, an Undefined; nested and filtered loops; a raise on the item.

No expected output is stored: tests/run_tests.sh renders every row with the
reference and with chatfmt and compares. Add rows at the END of a list so
ids stay stable. Regenerate with:
    python3 tests/gen_subscripts_table.py
"""
from unit_table import raw_rows, write_table

MS = [{"role": "user", "content": "a"}, {"role": "tool", "content": "t1"}, {"role": "tool", "content": "t2"},
      {"role": "assistant", "content": "b"}, {"role": "tool", "content": "t3"}, {"role": "user", "content": "c"},
      {"role": "tool", "content": "t4"}]
ODD = [{"role": "tool"}, "tool", {"role": 7}, {}, {"role": None}, {"role": "tool"}, ["tool"], {"role": ["tool"]},
       {"role": "TOOL"}, {"role": "tool"}, 3, {"role": "tool", "who": "x"}]

RUN_ROWS = [
    ("{% for m in ms %}{% if m.role == 'tool' %}{% if (loop.index0 == 0) or (ms[loop.index0 - 1].role != 'tool') %}"
     "<{% endif %}{{ m.content }}{% if loop.last or (ms[loop.index0 + 1].role != 'tool') %}>{% endif %}"
     "{% else %}{{ m.role }}{% endif %};{% endfor %}", {"ms": MS}),
    ("{% for m in ms %}{{ ms[loop.index0 - 1].role is defined }}{% if not loop.last %}"
     "{{ ms[loop.index0 + 1].role is defined and ms[loop.index0 + 1].role != 'tool' }}"
     "{{ ms[loop.index0 + 1].role|default('U') }}|{{ ms[loop.index0 + 1] }}{% endif %};{% endfor %}", {"ms": ODD}),
    ("{% for m in ms[:-2] %}{% if ms[loop.index0 + 1].role is defined %}"
     "{{ 'T' if ms[loop.index0 + 1].role == 'tool' else 'n' }}{% endif %}"
     "{% if ms[loop.index0 + 1].who is defined and ms[loop.index0 + 1].who != 'x' %}w{% endif %}"
     "{{ ms[loop.index0 + 2].who|default('-') }};{% endfor %}", {"ms": ODD}),
    ("{% set ms = [{'role': '<b>'|safe}, {'role': 'tool'|safe}, {'role': '<b>'}] %}"
     "{% for m in ms[1:] %}{{ ms[loop.index0 + 1].role != '<b>' }}{{ ms[loop.index0 + 1].role }};{% endfor %}"
     "{% autoescape true %}{% for m in ms[1:] %}{{ ms[loop.index0 + 1].role }}{{ ms[loop.index0 - 1].role }};"
     "{% endfor %}{% endautoescape %}", {}),
    ("{% for m in ms %}{% if m.role == 'tool' and ms[loop.index0 - 1].role != 'tool' %}[{% endif %}"
     "{% if loop.last or not (ms[loop.index0 + 1].role == 'tool') %}.{% endif %}{% endfor %}", {"ms": MS}),
]

EDGE_ROWS = [
    # out of range both ways: Undefined past the end, Python's negative index before the start
    ("{% for x in xs %}{{ xs[loop.index0 + 3]|default('U') }}|{{ xs[loop.index0 - 2] }}|{{ xs[loop.index0 - 0] }}"
     "|{{ xs[loop.index0 + 0] }}|{{ xs[loop.index0 - 5] is defined }};{% endfor %}", {"xs": [1, 2, 3, 4]}),
    ("{% for x in xs %}{{ xs[loop.index0 + 9223372036854775807] is defined }}"
     "{{ xs[loop.index0 - 9223372036854775807] is defined }}"
     "{{ xs[loop.index0 - 9223372036854775807 - 5] is defined }};{% endfor %}", {"xs": [1, 2]}),
    ("{% for x in xs %}{{ xs[loop.index0 + 1].role }}{% endfor %}", {"xs": [{"role": "a"}]}),   # raises
    ("{% for x in xs %}{{ xs[loop.index0 + 1].role.upper() }}{% endfor %}", {"xs": [{"role": "a"}, {"role": "b"}]}),
    # `loop` that is no loop
    ("{% macro f(xs, loop) %}{{ xs[loop.index0 + 1] }}{% endmacro %}{{ f([1, 2, 3], {'index0': 0}) }}"
     "{{ f([1, 2, 3], {'index0': 1}) }}", {}),
    ("{% macro f(xs, loop) %}{{ xs[loop.index0 + 1] }}{% endmacro %}{{ f([1, 2, 3], none) }}", {}),   # raises
    ("{{ xs[loop.index0 + 1] }}", {"xs": [1, 2], "loop": {"index0": 0}}),
    # names that hold no list
    ("{% for c in s %}{{ s[loop.index0 + 1] }}{% endfor %}", {"s": "abc"}),
    ("{% set d = {1: 'one', 2: 'two', -1: 'minus'} %}{% for x in [0, 1, 2] %}{{ d[loop.index0 + 1] }}"
     "{{ d[loop.index0 - 1] }};{% endfor %}", {}),
    ("{% set t = (1, 2, 3) %}{% set r = range(10, 14) %}{% for x in t %}{{ t[loop.index0 + 1] }}"
     "{{ r[loop.index0 + 1] }}{{ r[loop.index0 - 1] }};{% endfor %}", {}),
    ("{% set d = {'a': 1, 'b': 2} %}{% set it = d.items() %}{% set ks = d.keys() %}{% for x in it %}"
     "{{ it[loop.index0 + 1] }}{{ ks[loop.index0] }};{% endfor %}", {}),
    ("{% for x in [1, 2] %}{{ none_value[loop.index0 + 1] is defined }};{% endfor %}", {"none_value": None}),
    ("{% for x in [1, 2] %}{{ nothing[loop.index0 + 1] is defined }};{% endfor %}", {}),   # raises
    # nested and filtered loops: the innermost loop's index
    ("{% for a in xs %}{% for b in xs %}{{ xs[loop.index0 + 1] }}{% endfor %}:{{ xs[loop.index0 + 1] }};"
     "{% endfor %}", {"xs": [1, 2, 3]}),
    ("{% for m in ms if m.role != 'tool' %}{{ ms[loop.index0 + 1].role }}{{ loop.length }};{% endfor %}",
     {"ms": MS}),
    ("{% for m in ms %}{% for m2 in ms[loop.index0 + 1:] %}{{ ms[loop.index0 - 1].role }}{% endfor %};"
     "{% endfor %}", {"ms": MS[:4]}),
    # the list rebound inside the loop, and the loop over another list
    ("{% for x in xs %}{% set xs = [9, 8, 7, 6] %}{{ xs[loop.index0 + 1] }}{% endfor %}"
     "{% for y in ys %}{{ xs[loop.index0 + 1] }}{% endfor %}", {"xs": [1, 2, 3], "ys": [0, 0, 0, 0]}),
]


GROUPS = (("run", RUN_ROWS), ("edge", EDGE_ROWS))


def main():
    write_table("subscripts", raw_rows("subscripts", GROUPS))


if __name__ == "__main__":
    main()
