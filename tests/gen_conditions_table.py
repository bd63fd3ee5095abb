#!/usr/bin/env python3
"""Writes tests/unit/conditions.jsonl: the truth of `if` tests whose parts
chatfmt reads without a call (src/engine/interp_chain.c, interp_internal.h):
`name.attr` as a test, in `is string`, compared (`loop.index0 > ns.last`);
`loop.first` and `loop.last` under `not` and `or`; `'</think>' in content`.
Each row checks that this changes nothing Jinja2 shows, where the fast path
serves and where it must step aside:

- conditions-attr-NNN: `if m.x`, `if m.x is string`, `if not m.x` on dicts
  with and without the key (known keys and others), big dicts, values of
  every truth, a top-level name, a namespace, a name that holds no dict.
- conditions-loop-NNN: `loop.first or ...`, `not loop.first`, `loop.last or
  ...`, `not loop.last` in plain, filtered (looked ahead), nested and
  recursive loops, after a break, with a `loop` that is no loop.
- conditions-in-NNN: `s in t` on strs (empty, longer, equal, markup, not
  ASCII), on lists and dicts, with an Undefined or int on either side
  (raising as Python does), negated, in an elif.

No expected output is stored: tests/run_tests.sh renders every row with the
reference and with chatfmt and compares. Add rows at the END of a list so
ids stay stable. Regenerate with:
    python3 tests/gen_conditions_table.py
"""
from unit_table import raw_rows, write_table

BIG = dict({"content": "x"}, **{"k%d" % i: i for i in range(12)})
MS = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": ""}, {"role": "tool"},
      {"role": "assistant", "content": None, "tool_calls": [1]}, {"role": "user", "content": ["a"]}, BIG,
      {"content": 0}, {"content": "0"}, {"reasoning_content": "r"}]

ATTR_ROWS = [
    ("{% for m in ms %}{% if m.content %}T{% else %}F{% endif %}{% if m.content is string %}s{% endif %}"
     "{% if not m.tool_calls %}n{% endif %}{% if m.reasoning_content is defined %}r{% endif %};{% endfor %}", {"ms": MS}),
    ("{% if m.content %}a{% endif %}{% if m.content is string %}b{% endif %}{% if not m.role %}c{% endif %}"
     "{% for x in [1] %}{% if m.content %}d{% endif %}{% endfor %}", {"m": {"content": "x"}}),
    ("{% set ns = namespace(flag=false, last=2, s='') %}{% for i in range(5) %}{% if ns.flag %}F{% endif %}"
     "{% if i > ns.last %}>{% endif %}{% if ns.s is string %}s{% endif %}{% set ns.flag = i == 1 %}{% endfor %}", {}),
    ("{% for m in ms %}{% if m.content %}T{% endif %}{% endfor %}", {"ms": ["str", 3, None, ["l"]]}),
    ("{% for m in ms %}{% if m.content is string and m.content %}{{ m.content }}{% elif m.content is none %}N"
     "{% else %}-{% endif %}{% endfor %}", {"ms": MS}),
    ("{% macro f(m) %}{% if m.content is string %}{{ m.content }}{% else %}?{% endif %}{% endmacro %}"
     "{{ f({'content': 'a'}) }}{{ f({'x': 1}) }}{{ f('s') }}{{ f(none) }}", {}),
    ("{% for m in ms %}{% if m.content.x is defined %}d{% endif %}{% endfor %}", {"ms": MS}),   # raises
]

LOOP_ROWS = [
    ("{% for x in xs %}{% if loop.first or x > 2 %}a{% endif %}{% if not loop.first %}b{% endif %}"
     "{% if loop.last or x == 1 %}c{% endif %}{% if not loop.last %}d{% endif %};{% endfor %}", {"xs": [1, 2, 3, 4]}),
    ("{% for x in xs if x is odd %}{% if not loop.last %}{{ x }},{% endif %}{% if loop.last or x > 100 %}!{% endif %}"
     "{% endfor %}", {"xs": [1, 2, 3, 4, 5, 6]}),
    ("{% for x in xs %}{% for y in x %}{% if not loop.first %}-{% endif %}{{ y }}{% if loop.last or false %}.{% endif %}"
     "{% endfor %}{% if not loop.last %}|{% endif %}{% endfor %}", {"xs": [[1, 2], [3], []]}),
    ("{% for x in xs recursive %}{% if not loop.first %},{% endif %}{{ x.n }}{% if x.c %}[{{ loop(x.c) }}]{% endif %}"
     "{% if loop.last or not loop.first %}.{% endif %}{% endfor %}",
     {"xs": [{"n": 1, "c": [{"n": 2}, {"n": 3}]}, {"n": 4}]}),
    ("{% for x in xs %}{% if x == 3 %}{% break %}{% endif %}{% if not loop.last %}{{ x }}{% endif %}{% endfor %}"
     "{% set g = xs|map('string') %}{% for x in g %}{% if loop.last or not loop.first %}{{ x }}{% endif %}{% endfor %}",
     {"xs": [1, 2, 3, 4]}),
    ("{% macro m(loop) %}{% if not loop.first %}a{% endif %}{% if loop.last or false %}b{% endif %}{% endmacro %}"
     "{{ m({'first': false, 'last': true}) }}{{ m({}) }}{% for x in [1, 2] %}{{ m(loop) }}{% endfor %}", {}),
    ("{% if not loop.first %}a{% endif %}{% if loop.last or false %}b{% endif %}", {"loop": {"first": True, "last": 1}}),
    ("{% for x in xs %}{% set loop2 = loop %}{% for y in [0] %}{% if not loop2.first %}p{% endif %}"
     "{% if loop2.last or false %}q{% endif %}{% endfor %}{% endfor %}", {"xs": [1, 2]}),
]

IN_ROWS = [
    ("{% for c in cs %}{% if '</think>' in c %}T{% elif '' in c %}E{% endif %}{% if not 'ab' in c %}n{% endif %};"
     "{% endfor %}", {"cs": ["x</think>y", "", "ab", "a", "é</think>", "</think", "abab"]}),
    ("{% set m = '<b>'|safe %}{% if '<' in m %}a{% endif %}{% if m in '<b>x' %}b{% endif %}"
     "{% if 'b' in ['a', 'b'] %}c{% endif %}{% if 'k' in {'k': 1} %}d{% endif %}{% if 'ab' in 'a' %}e{% endif %}", {}),
    ("{% if 1 in 'abc' %}x{% endif %}", {}),   # raises
    ("{% if nothing in 'abc' %}x{% endif %}", {}),   # raises
    ("{% if 'a' in nothing %}x{% endif %}", {}),
    ("{% if 'a' in 5 %}x{% endif %}", {}),   # raises
    ("{% for m in ms %}{% if m.content is string and '</think>' in m.content %}"
     "{{ m.content.split('</think>')[-1] }}{% endif %}{% endfor %}",
     {"ms": [{"content": "a</think>b"}, {"content": "c"}, {"content": ["</think>"]}]}),
]


GROUPS = (("attr", ATTR_ROWS), ("loop", LOOP_ROWS), ("in", IN_ROWS))


def main():
    write_table("conditions", raw_rows("conditions", GROUPS))


if __name__ == "__main__":
    main()
