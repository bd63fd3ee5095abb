#!/usr/bin/env python3
"""Writes tests/unit/namespace_sets.jsonl: `{% set ns.x = value %}`, which
chatfmt runs with the namespace found once and an attribute it already has
replaced in place (src/engine/interp.c: exec_stmt's N_SET, namespace_set).
Each row checks that this changes nothing Jinja2 shows, where the fast path
serves and where it must step aside:

- namespace_sets-set-NNN: attributes replaced and added, read back through
  the attribute cache, in loops, macros, call blocks and nested scopes;
  namespaces built from keywords, from a dict and from both; a namespace
  past the size kept without an index; names that start with `_`; block
  sets, tuple targets and `ns.x = ns.x ~ ...` (which go their own way).
- namespace_sets-edge-NNN: targets that are no namespace (a dict, a list,
  an int, an Undefined, a macro parameter), a value that raises (its
  position), a namespace changed while its new value is computed.

No expected output is stored: tests/run_tests.sh renders every row with the
reference and with chatfmt and compares. Add rows at the END of a list so
ids stay stable. Regenerate with:
    python3 tests/gen_namespace_sets_table.py
"""
from unit_table import raw_rows, write_table

MANY = "namespace(" + ", ".join("a%d=%d" % (i, i) for i in range(12)) + ")"

SET_ROWS = [
    ("{% set ns = namespace(x=1) %}{% set ns.x = 2 %}{{ ns.x }}{% set ns.y = 3 %}{{ ns.y }}{{ ns.x + ns.y }}", {}),
    ("{% set ns = namespace(last=-1) %}{% for m in ms %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}"
     "{% endif %}{{ ns.last }},{% endfor %}{{ ns.last }}", {"ms": [{"role": "user"}, {"role": "a"}, {"role": "user"}]}),
    ("{% set ns = namespace(multi=true, last=xs|length - 1) %}{% for x in xs[::-1] %}"
     "{% set index = (xs|length - 1) - loop.index0 %}{% if ns.multi and x == 'u' %}{% set ns.multi = false %}"
     "{% set ns.last = index %}{% endif %}{% endfor %}{{ ns.multi }}{{ ns.last }}", {"xs": ["u", "a", "u", "t"]}),
    ("{% set ns = namespace(n=0) %}{% macro bump() %}{% set ns.n = ns.n + 1 %}{{ ns.n }}{% endmacro %}"
     "{{ bump() }}{{ bump() }}{% for i in range(3) %}{{ bump() }}{% endfor %}|{{ ns.n }}", {}),
    ("{% set ns = namespace(s='') %}{% macro m() %}{{ caller() }}{% endmacro %}"
     "{% call m() %}{% set ns.s = ns.s ~ 'c' %}{{ ns.s }}{% endcall %}{{ ns.s }}", {}),
    ("{% set d = {'a': 1, 'b': 2} %}{% set ns = namespace(d) %}{% set ns.a = 10 %}{% set ns.c = 3 %}"
     "{{ ns.a }}{{ ns.b }}{{ ns.c }}{{ d }}", {}),
    ("{% set ns = namespace({'a': 1}, b=2) %}{% set ns.a = ns.b %}{% set ns.b = 5 %}{{ ns.a }}{{ ns.b }}", {}),
    ("{% set ns = " + MANY + " %}{% set ns.a11 = 'x' %}{% set ns.a0 = 'y' %}{% set ns.z = 'z' %}"
     "{{ ns.a11 }}{{ ns.a0 }}{{ ns.z }}{{ ns.a5 }}", {}),
    ("{% set ns = namespace(_p=1) %}{% set ns._p = 2 %}{{ ns._p }}|{% set ns._q = 3 %}{{ ns._q }}", {}),
    ("{% set ns = namespace(x='a') %}{% set ns.x %}block {{ ns.x }}{% endset %}{{ ns.x }}"
     "{% set ns.a, ns.b = 1, 2 %}{{ ns.a }}{{ ns.b }}{% set ns.x = ns.x ~ '!' %}{{ ns.x }}", {}),
    ("{% set ns = namespace(i=0) %}{% for x in xs %}{% set ns.i = ns.i + x %}{% set ns.i = ns.i * 2 %}{% endfor %}"
     "{{ ns.i }}{% for x in xs %}{% set ns = namespace(i=100) %}{% set ns.i = ns.i + x %}{{ ns.i }}{% endfor %}"
     "{{ ns.i }}", {"xs": [1, 2, 3]}),
    ("{% set a = namespace(v=1) %}{% set b = a %}{% set b.v = 2 %}{{ a.v }}{{ b.v }}"
     "{% set c = namespace(v=1) %}{% set c.v = none %}{{ c.v }}{% set c.v = [1, 2] %}{{ c.v|length }}", {}),
    ("{% set ns = namespace(x=1) %}{% with %}{% set ns.x = 2 %}{% endwith %}{{ ns.x }}"
     "{% if true %}{% set ns.x = 3 %}{% endif %}{{ ns.x }}", {}),
    ("{% set ns = namespace(v='<b>') %}{% autoescape true %}{% set ns.v = ns.v ~ '&' %}{{ ns.v }}"
     "{% set ns.w = '<i>'|safe %}{{ ns.w }}{% endautoescape %}{{ ns.v }}", {}),
]

EDGE_ROWS = [
    ("{% set d = {'x': 1} %}{% set d.x = 2 %}{{ d.x }}", {}),   # raises
    ("{% set l = [1] %}{% set l.x = 2 %}", {}),   # raises
    ("{% set n = 3 %}{% set n.x = 2 %}", {}),   # raises
    ("{% set nothing.x = 2 %}", {}),   # raises
    ("{% macro m(ns) %}{% set ns.x = 5 %}{{ ns.x }}{% endmacro %}{{ m(namespace(x=1)) }}|{{ m({'x': 1}) }}", {}),
    ("{% set ns = namespace(x=1) %}\n\n{% set ns.x = 1 / 0 %}", {}),   # raises
    ("{% set ns = namespace(x=1) %}{% set ns.x = ns.y.z %}{{ ns.x }}", {}),   # raises
    ("{% set ns = namespace(x=1) %}{% macro f() %}{% set ns.x = 7 %}{{ ns.x }}{% endmacro %}"
     "{% set ns.x = f() ~ ns.x %}{{ ns.x }}", {}),
    ("{% set ns = namespace() %}{% set ns.x = 1 %}{{ ns.x }}{% set ns.x = 2 %}{{ ns.x }}{{ ns }}", {}),
    ("{% for ns in [namespace(x=1), 5] %}{% set ns.x = 9 %}{{ ns.x }}{% endfor %}", {}),   # raises
]


GROUPS = (("set", SET_ROWS), ("edge", EDGE_ROWS))


def main():
    write_table("namespace_sets", raw_rows("namespace_sets", GROUPS))


if __name__ == "__main__":
    main()
