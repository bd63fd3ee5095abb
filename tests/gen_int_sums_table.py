#!/usr/bin/env python3
"""Writes tests/unit/int_sums.jsonl: sums and differences of ints whose
operands are int constants, names, name.attr, x|length and such sums
(Qwen's `(messages|length - 1) - loop.index0`), which chatfmt computes on
int64s along the sum's left spine, reading loop.index0 and loop.index from
the loop itself when `loop` is a frame's loop (src/engine/interp.c: int_sum,
loop_index_in_place; parser.c: int_sum_shape). Each row checks that this
changes nothing Jinja2 shows, where the fast path serves and where it must
step aside:

- int_sums-shape-NNN: long left spines (past the spine the path walks at
  once), right operands that are sums, `+` and `-` mixed, loop.index and
  loop.index0 in nested and filtered loops, loop.length and loop.revindex
  (looked ahead), a sum set and printed.
- int_sums-edge-NNN: operands that are no ints (floats, bools, strs, None,
  Undefined, a dict or a str's |length), overflow past 64 bits at each step,
  a `loop` that is no loop (a context variable, a macro parameter, a dict,
  a namespace, a name set in the loop), |length of a generator and a view,
  a raise inside a sum; loop.index0 and loop.index compared with ==, !=, <,
  >, >= (also read in place), with a `loop` that is no loop there.

No expected output is stored: tests/run_tests.sh renders every row with the
reference and with chatfmt and compares. Add rows at the END of a list so
ids stay stable. Regenerate with:
    python3 tests/gen_int_sums_table.py
"""
from unit_table import raw_rows, write_table

BIG = 9223372036854775807

SHAPE_ROWS = [
    ("{% for m in ms[::-1] %}{% set index = (ms|length - 1) - loop.index0 %}{{ index }},{% endfor %}",
     {"ms": [1, 2, 3, 4]}),
    ("{% for x in xs %}{{ loop.index0 + loop.index + 1 - 2 + 3 - 4 + 5 - 6 + 7 - 8 + 9 - 10 + 11 - 12 + 13 - 14"
     " + 15 - 16 + 17 - 18 + 19 - 20 + loop.index0 }};{% endfor %}", {"xs": [1, 2, 3]}),
    ("{% for x in xs %}{{ 1 - (loop.index0 - (2 - loop.index)) }}|{{ (1 + 2) - (3 + loop.index0) + (xs|length - 1) }};"
     "{% endfor %}", {"xs": [1, 2, 3]}),
    ("{% for a in xs %}{% for b in xs %}{{ loop.index0 + 10 * 0 + loop.index }}{{ loop.index0 - a }},{% endfor %}"
     "{{ loop.index0 + 100 }};{% endfor %}", {"xs": [1, 2]}),
    ("{% for x in xs if x > 1 %}{{ loop.index0 + 1 }}{{ loop.length - loop.index0 }}{{ loop.revindex + 0 }}"
     "{{ loop.revindex0 - 1 }}{{ loop.depth + loop.depth0 }};{% endfor %}", {"xs": [1, 2, 3, 4]}),
    ("{% set n = namespace(i=0) %}{% for x in xs %}{% set n.i = n.i + loop.index %}{% set k = n.i - loop.index0 %}"
     "{{ k }}{% endfor %}{{ n.i }}", {"xs": [5, 6, 7]}),
    ("{% for x in xs recursive %}{{ loop.depth0 + loop.index0 }}{% if x is iterable %}[{{ loop(x) }}]{% endif %}"
     "{% endfor %}", {"xs": [[1, [2]], 3]}),
    ("{% for x in xs %}{{ x.n + loop.index0 }}{{ x.n - 1 + loop.index }},{% endfor %}", {"xs": [{"n": 5}, {"n": 7}]}),
    ("{% macro m(xs) %}{% for x in xs %}{{ loop.index0 + xs|length }}{% endfor %}{% endmacro %}{{ m([1, 2]) }}"
     "{% for y in [0] %}{{ m([3]) }}{{ loop.index + 1 }}{% endfor %}", {}),
    ("{% for x in xs %}{% for y in x %}{{ loop.index0 + y }}{% endfor %}{{ loop.index - 1 }};{% endfor %}",
     {"xs": [[10, 20], [30]]}),
]

EDGE_ROWS = [
    # operands that are no ints: the general `+` and `-`
    ("{% for x in xs %}{{ loop.index0 + x }};{% endfor %}", {"xs": [1.5, True, False, 2]}),
    ("{% for x in xs %}{{ x - loop.index }};{% endfor %}", {"xs": [0.25, True, 7]}),
    ("{% for x in xs %}{{ loop.index0 + x }}{% endfor %}", {"xs": ["a"]}),   # raises
    ("{% for x in xs %}{{ loop.index0 + x.n }}{% endfor %}", {"xs": [{"m": 1}]}),   # raises
    ("{% for x in xs %}{{ (x|length) + loop.index0 }};{% endfor %}", {"xs": ["abc", {"a": 1}, [1, 2], (1,)]}),
    ("{% for x in xs %}{{ loop.index0 + none_value }}{% endfor %}", {"xs": [1], "none_value": None}),   # raises
    ("{% for x in xs %}{{ loop.index0 - nothing }}{% endfor %}", {"xs": [1]}),   # raises
    # overflow at each step: Python's ints go on
    ("{% for x in xs %}{{ big + loop.index0 }}|{{ big + loop.index }}|{{ 0 - big - 1 - loop.index }}|"
     "{{ big - loop.index0 + 1 }};{% endfor %}", {"xs": [1, 2], "big": BIG}),
    ("{{ %d + 1 - 1 }}|{{ -%d - 1 - 1 + 2 }}|{{ (xs|length) + %d }}" % (BIG, BIG, BIG), {"xs": [1, 2]}),
    # `loop` that is no loop
    ("{{ loop.index0 + 1 }}|{{ loop.index - 1 }}", {"loop": {"index0": 4, "index": 5}}),
    ("{% for x in [1, 2] %}{% set loop = {'index0': 40} %}{{ loop.index0 + 1 }}{% endfor %}", {}),   # raises (syntax)
    ("{% macro m(loop) %}{{ loop.index0 + 1 }}{{ loop.index + 1 }}{% endmacro %}{{ m({'index0': 7, 'index': 'x'}) }}",
     {}),   # raises
    ("{% macro m(loop) %}{{ loop.index0 + 1 }}{% endmacro %}{% for x in [1] %}{{ m(loop) }}"
     "{{ m({'index0': 9}) }}{% endfor %}", {}),
    ("{% set loop = namespace(index0=3) %}{{ loop.index0 + 1 }}{% for x in [1, 2] %}{{ loop.index0 + 1 }}"
     "{% endfor %}", {}),
    ("{% for x in xs %}{% for loop2 in [loop] %}{{ loop2.index0 + loop.index0 }}{% endfor %}{% endfor %}",
     {"xs": [1, 2]}),
    ("{% for x in xs %}{{ x.index0 + 1 }}{% endfor %}", {"xs": [{"index0": 5}, {"index0": "a"}]}),   # raises
    # |length of what is not a list, tuple or dict as it came
    ("{% set g = xs|map('upper') %}{{ (g|list|length) + 1 }}|{% set d = {'a': 1} %}{{ (d.items()|length) - 1 }}"
     "|{{ (d.keys()|length) + 0 }}|{{ (range(3)|length) + 1 }}", {"xs": ["a", "b"]}),
    ("{{ (xs|length) - 1 }}|{{ (s|length) + 1 }}|{{ (n|length) + 1 }}", {"xs": [1], "s": "abc", "n": 5}),   # raises
    # a raise inside a sum: its position and message
    ("{% for x in xs %}\n{{ loop.index0 + (x|length) }}{% endfor %}", {"xs": [[1], 3]}),   # raises
    ("{% for x in xs %}{{ loop.index0 + 1 }}{{ loop.index0 - loop.foo }}{% endfor %}", {"xs": [1]}),   # raises
    # loop.index0 and loop.index compared (read in place too), and a `loop` that is no loop there
    ("{% set ns = namespace(last=1) %}{% for x in xs %}{% if loop.index0 > ns.last %}>{% elif loop.index >= 2 %}="
     "{% endif %}{% if loop.index0 == 0 %}0{% endif %}{% if loop.index != 3 %}n{% endif %}"
     "{% if loop.index0 < 1.5 %}f{% endif %};{% endfor %}", {"xs": [1, 2, 3, 4]}),
    ("{% macro m(loop) %}{% if loop.index0 > 1 %}a{% endif %}{% if loop.index0 == 5 %}b{% endif %}{% endmacro %}"
     "{{ m({'index0': 5}) }}{{ m({'index0': 1}) }}{% for y in [0, 1, 2] %}{{ m(loop) }}{% endfor %}", {}),
    ("{% macro m(loop) %}{% if loop.index0 > 1 %}a{% endif %}{% endmacro %}{{ m({'index0': 'x'}) }}", {}),   # raises
    ("{% if loop.index0 > 1 %}a{% endif %}{% if loop.index == 2 %}b{% endif %}", {"loop": {"index0": 3, "index": 2}}),
    ("{% for x in xs %}{% if loop.index0 > none_value %}a{% endif %}{% endfor %}", {"xs": [1], "none_value": None}),   # raises
]


GROUPS = (("shape", SHAPE_ROWS), ("edge", EDGE_ROWS))


def main():
    write_table("int_sums", raw_rows("int_sums", GROUPS))


if __name__ == "__main__":
    main()
