#!/usr/bin/env python3
"""Writes tests/unit/scope.jsonl: where names live (src/engine/scope.c) and
what the random differential found with them.

- scope-div-NNN: the shrunk random templates where chatfmt once differed from
  the reference (a name a macro, loop, block set or filter block reads that
  the enclosing frame sets later; tuple sets inside block sets and filter
  blocks; chained comparisons with Undefined; a negative number to a
  fractional power), each with the variables it names.
- scope-frame-NNN: Jinja2's rule for each kind of frame (loop bodies and
  their else, macros and their defaults, call blocks, block sets, filter
  blocks, with, generation, autoescape): a name read before the set that
  makes it, in the frame or a nested one; names set inside an if.
- scope-block-NNN: {% block %} bodies, which read the render's context.
- scope-filter-NNN: a block set's filter naming what no frame has (Jinja2's
  compiler fails with AssertionError).
- scope-complex-NNN: Python's complex numbers, from ** (src/engine/complex.c),
  and a folded negative constant to a power that does not fold.
- scope-misc-NNN: operator.index of an Undefined (range, round), a sequence
  times a non-int, unhashable tuples, autoescape around a {% block %}.
- scope-loopfilter-NNN: `for x in xs if test`, whose tests run as the loop
  reaches each item (a generator in Jinja2).
- scope-iterstart-NNN: a loop body reading a name before the set that makes
  it, as each iteration starts it missing (interp.c: frame_start_iteration).
- scope-chatvar-NNN: chat mode's own variables (messages, tools, documents,
  add_generation_prompt, continue_final_message) where a template reads,
  sets, shadows or lacks them, and names that are none of them.

No expected output is stored: tests/run_tests.sh renders every row with the
reference and with chatfmt and compares. Add rows at the END of a list so ids
cited in tests/KNOWN_DIFFERENCES.md stay stable. Regenerate with:
    python3 tests/gen_scope_table.py
"""
import json
import os
import re

# Variables the hand-written rows may use; a row gets the ones its template names.
BASE = {"a": 5, "b": 6, "xs": [1, 2], "s": "str", "n": 3, "d": {"k": 1}}

DIVERGENCES = [
    ("{% for x in ys | reverse %}{%- set a = a | join(', ') %}{% endfor %}{% set a, b = (1, 2) %}",
     {'a': 6, 'b': 4, 'ys': ['1,2,3', 'back\\slash', '<tool_call>', 'Hello World', '1,2,3']}),  # fz20261121-1057
    ("{% macro mk(p, q='dq', r=none) -%}{{ b }}{% endmacro %}{{ mk(p=2, r=3) }}{% set a, b = (1, 2) %}",
     {'a': 6, 'b': 6}),  # fz20261121-1093
    ("{%- macro mk(p, q='dq', r=none) %}{{ -a }}{%+ endmacro %}{{ mk(p=2, r=3) }}{% set a, b = xs[:2] if xs | length >= 2 else (0, 0) -%}",
     {'a': -2, 'b': 7, 'xs': [7, 8, -1, -9]}),  # fz20261121-1123
    ('{% set blk -%}{{ a < b < n }}{%- endset -%}{% set a, b = (1, 2) %}',
     {'a': 18, 'b': 7, 'n': 2}),  # fz20261121-116
    ("{%- macro mk(p, q='dq', r=none) -%}{{ 1 < a < 10 }}{%- endmacro %}{{ mk(p=2, r=3) }}{%- set a, b = [s, u] %}",
     {'a': 18, 'b': 6, 's': '<tool_call>', 'u': '<tool_call>'}),  # fz20261121-1305
    ('{% set blk %}{%- set a, b = [s, u] -%}{% endset -%}{{ -b -}}',
     {'a': 2, 'b': 4, 's': ' ', 'u': '中文'}),  # fz20261121-1422
    ('{%- macro mk(p, q=\'dq\', r=none) %}{{ (({}, u) if (xs) else \'back\\\\slash\') }}{%- endmacro -%}{{ mk(p=2, r=3) }}{% set xs = (\'trail\\n\\n\', ("\\"dq\\"", 1e3, {}), n) or d %}',
     {'n': 2, 'u': 'hi', 'xs': [8, 5, 4, 8, 2, 2], 'd': {'k': '  pad  ', 'name': '"dq"'}}),  # fz20261121-1446
    ('{% set blk %}{{- 1 < a < 10 }}{% endset -%}{%- set a, b = [s, u] %}',
     {'a': 1, 'b': 3, 's': '</think>', 'u': '中文'}),  # fz20261121-15
    ('{% set blk %}{%- set a, b = (1, 2) %}{% endset %}{% if (0 <= a <= b) %}{{ xs <= s }}{% endif -%}',
     {'a': 19, 'b': 3, 's': '🙂 ok', 'xs': [-5, 2, -1]}),  # fz20261121-188
    ('{% for x in d %}{% set a = a < b < n %}{%- endfor -%}{% set a = (-(xs | length)) -%}',
     {'a': 18, 'b': 4, 'n': 0, 'xs': [8, 9, 3, -3, 8], 'd': {'name': '  pad  ', 'é': '\n\nlead', 'k': '"dq"', 'type': '"dq"'}}),  # fz20261121-216
    ('{% macro mk(p, q=\'dq\', r=none) %}{% if (msgs[0].items() | list is mapping) -%}{%- elif (("  pad  " is equalto 3) != messages[2].missing) %}{{ a -}}{%- endif %}{% endmacro %}{{ mk(p=2, r=3) }}{%- set a, b = [s, u] %}',
     {'a': 0, 'b': 6, 's': 'hi', 'u': '🙂 ok', 'msgs': [{'role': 'tool', 'content': 'x\ny\n'}, {'role': 'tool', 'content': ''}, {'role': 'user', 'content': [{'type': 'text', 'text': ''}, {'type': 'image'}]}, {'role': 'user', 'content': "'q'"}], 'messages': [{'role': 'tool', 'content': 'x\ny\n'}, {'role': 'tool', 'content': ''}, {'role': 'user', 'content': [{'type': 'text', 'text': ''}, {'type': 'image'}]}, {'role': 'user', 'content': "'q'"}]}),  # fz20261121-337
    ("{% set blk %}{{ (xs if (not xs) else u.count('l')) }}{% endset %}{{ blk }}{% set xs = 'tab\\there' | upper %}",
     {'u': 'MiXeD CaSe', 'xs': [1, 9, 7, -4]}),  # fz20261121-378
    ('{% for x in d -%}{% set ns = namespace(c=0, t=\'\') %}{%- for x in xs %}{% set ns.t = ns.t ~ x %}{% endfor -%}{{ ns.t }}{% endfor %}{%- set xs = namespace(v=msgs).v or (n, ([10.0, (msgs, {\'v0\': {\'w0\': \' \', \'k1\': "1,2,3", \'k2\': true}, \'w1\': -12}, \'hi\'), "1,2,3"], 0.1, 25)) %}',
     {'n': 2, 'xs': [-6, 9, 3, 4, 8], 'd': {'é': 'Hello World', 'k': '  pad  ', 'name': 'x\ny\n'}, 'msgs': [{'role': 'system', 'content': 'x\ny\n'}, {'role': 'user', 'content': None}]}),  # fz20261121-447
    ("{%- filter lower %}{% set xs = (ys | first | default('')) not in '<think>x</think>' -%}{% endfilter -%}{% for x in xs | sort %}{% endfor %}",
     {'xs': [9, -1, 7, 1, -5, -5], 'ys': ['中文', ' ', 'hi']}),  # fz20261121-452
    ('{% set blk -%}{% set a, b = [s, u] -%}{%- endset -%}{{ a -}}',
     {'a': 0, 'b': 3, 's': 'back\\slash', 'u': 'tab\there'}),  # fz20261121-477
    ('{{ f ** 0.5 }}',
     {'f': -1.25}),  # fz20261121-502
    ('{% set blk -%}{% set s = (flag if (a < b < n) else f) %}{% endset %}{{ s }}',
     {'a': -5, 'b': 7, 'n': 10, 'f': 2.0, 's': '\n\nlead', 'flag': False}),  # fz20261121-609
    ("{% macro mk(p, q='dq', r=none) %}{{ range(b) -}}{% endmacro %}{{ mk(p=2, r=3) }}{% set a, b = xs[:2] if xs | length >= 2 else (0, 0) %}",
     {'a': 18, 'b': 2, 'xs': [-6, -1]}),  # fz20261121-639
    ('{% filter replace("a", "b") %}{%- set a, b = [s, u] %}{{ b }}{%- endfilter %}{%- set u = d.get("nope") is not number %}',
     {'a': -4, 'b': 1, 's': 'a,b,,c', 'u': 'snake_case_name', 'd': {}}),  # fz20261121-73
    ('{% set blk %}{% set a, b = (1, 2) %}{% endset %}{% if (d.items() | list >= ys[-2:-1:2]) %}{%- elif (xs) %}{{ 3 % b -}}{% endif -%}',
     {'a': 17, 'b': 4, 'xs': [6, 7], 'ys': [' ', '"dq"', 'back\\slash', 'snake_case_name'], 'd': {}}),  # fz20261121-731
    ("{%- macro mk(p, q='dq', r=none) %}{% for x in msgs[::-1] if b %}{{- a < s }}{% endfor -%}{%- endmacro %}{{ mk(p=2, r=3) }}{% set a, b = (1, 2) -%}",
     {'a': 15, 'b': 1, 's': '', 'msgs': [{'role': 'user', 'content': '\n\nlead'}, {'role': 'user', 'content': '🙂 ok'}]}),  # fz20261121-739
    ('{% filter upper -%}{% set a, b = xs[:2] if xs | length >= 2 else (0, 0) %}{% endfilter -%}{{- a }}',
     {'a': 8, 'b': 3, 'xs': [-1, -8]}),  # fz20261121-801
    ('{% for k, v in d.items() %}{{ -2 * b }}{% endfor %}{% set a, b = xs[:2] if xs | length >= 2 else (0, 0) %}',
     {'a': 0, 'b': 4, 'xs': [], 'd': {'z': '"dq"'}}),  # fz20261121-825
    ('{% set blk %}{{ -(xs | length) -}}{% endset -%}{{ blk }}{%- set xs = namespace(v="x\\ny\\n").v not in msgs %}',
     {'n': 0, 'xs': [2, -5], 'msgs': [{'role': 'system', 'content': 'tab\there'}, {'role': 'user', 'content': 'x\ny\n'}]}),  # fz20261121-839
]


FRAMES = [
    '{% set blk %}{% set a = 1 %}{% endset %}{{ a }}',
    '{% filter upper %}{% set a = 1 %}{% endfilter %}{{ a }}',
    '{% generation %}{% set a = 1 %}{% endgeneration %}{{ a }}',
    '{% autoescape false %}{% set a = 1 %}{% endautoescape %}{{ a }}',
    '{% for x in xs %}{% for y in xs %}{{ a }}{% endfor %}{% set a = 1 %}{% endfor %}',
    '{% for x in xs %}{{ a }}{% set a = x %}{% endfor %}',
    '{% if false %}{% set a = 1 %}{% endif %}{% for x in xs %}{{ a }}{% endfor %}',
    '{% for x in xs %}{{ a }}{% endfor %}{% if true %}{% set a = 1 %}{% endif %}',
    '{% for x in xs %}{{ a }}{% endfor %}{{ a }}{% set a = 1 %}',
    '{% for x in xs %}{{ range(2) }}{% endfor %}{% set range = 1 %}',
    '{% macro m() %}{{ a }}{% endmacro %}{% set a = 1 %}{{ m() }}',
    '{% macro m() %}{{ a }}{% endmacro %}{{ m() }}{% set a = 1 %}{{ m() }}',
    '{% macro m(x=a) %}{{ x }}{% endmacro %}{{ m() }}{% set a = 1 %}{{ m() }}',
    '{% with q = a %}{{ q }}{% endwith %}{% set a = 1 %}',
    '{% with %}{{ a }}{% endwith %}{% set a = 1 %}',
    "{% filter replace('5', b) %}{{ a }}{% set b = 'X' %}{% endfilter %}",
    '{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{{ a }}{% set a = 2 %}{{ a }}{% endcall %}{{ a }}',
    '{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{{ b }}{% endcall %}{% set b = 2 %}',
    '{% generation %}{{ a }}{% set a = 2 %}{{ a }}{% endgeneration %}{{ a }}',
    '{% generation %}{{ b }}{% endgeneration %}{% set b = 2 %}',
    '{% set ns = namespace(v=1) %}{% macro m() %}{{ ns.v }}{% set ns.v = 5 %}{% endmacro %}{{ m() }}{{ ns.v }}',
    '{% macro m() %}{{ ns.v }}{% endmacro %}{{ m() }}{% set ns = namespace(v=1) %}',
    '{% macro m() %}{% set ns.v = 2 %}{% endmacro %}{% set ns = namespace(v=1) %}{{ m() }}{{ ns.v }}',
    '{% with a = 2 %}{% macro m() %}{{ a }}{{ b }}{% endmacro %}{{ m() }}{% set b = 3 %}{{ m() }}{% endwith %}',
    '{% for x in xs %}{% macro m() %}{{ y }}{% endmacro %}{{ m() }}{% set y = x %}{{ m() }}{% endfor %}',
    '{% for x in xs %}{% if x > 1 %}{% set y = x %}{% endif %}{{ y }}{% endfor %}',
    '{% for x in xs %}{% set y = x %}{% else %}{{ y }}{% endfor %}{% set y = 1 %}',
    '{% for x in [] %}{% else %}{{ y }}{% set y = 3 %}{{ y }}{% endfor %}',
    '{% for x in [] %}{% else %}{% for z in xs %}{{ y }}{% endfor %}{% set y = 3 %}{% endfor %}',
    '{% for x in xs if a > x %}{{ x }}{% endfor %}{% set a = 1 %}',
    '{% for x in xs %}{{ loop.index }}{% set a = loop.index %}{% endfor %}{{ a }}',
    '{% set a = a %}{{ a }}',
    '{% set a = b %}{% set b = 1 %}{{ a }}',
    '{% macro m(x=b) %}{{ x }}{% endmacro %}{{ m() }}{% set b = 1 %}',
    '{% macro m(x=b) %}{{ x }}{% set b = 1 %}{% endmacro %}{{ m() }}',
    '{% macro m() %}{% set b = b %}{{ b }}{% endmacro %}{{ m() }}',
    '{% macro m() %}{{ b }}{% set b = 1 %}{% endmacro %}{{ m() }}',
    '{% macro m() %}{% for x in xs %}{{ b }}{% endfor %}{% set b = 1 %}{% endmacro %}{{ m() }}',
    '{% macro m() %}{% if true %}{% set b = 1 %}{% endif %}{% for x in xs %}{{ b }}{% endfor %}{% endmacro %}{{ m() }}',
    '{% macro m() %}{% for x in xs %}{{ b }}{% endfor %}{% if true %}{% set b = 1 %}{% endif %}{% endmacro %}{{ m() }}',
    '{% if true %}{% macro m() %}{{ a }}{% endmacro %}{% endif %}{{ m() }}{% set a = 2 %}',
    '{% macro m() %}{{ a }}{% endmacro %}{% if true %}{% set a = 2 %}{% endif %}{{ m() }}',
    '{% macro m() %}{{ a }}{% endmacro %}{{ m() }}{% if true %}{% set a = 2 %}{% endif %}',
    '{% set x %}{{ x }}{% endset %}[{{ x }}]',
    '{% set a %}{{ a }}{% endset %}[{{ a }}]',
    '{% set a | upper %}{{ a }}{% endset %}[{{ a }}]',
    "{% filter upper %}{{ a }}{% set a = 'q' %}{{ a }}{% endfilter %}{{ a }}",
    "{% filter upper %}{% for x in xs %}{{ a }}{% endfor %}{% set a = 'q' %}{% endfilter %}",
    "{% autoescape true %}{% for x in xs %}{{ a }}{% endfor %}{% set a = 'q' %}{% endautoescape %}",
    "{% with %}{% for x in xs %}{{ a }}{% endfor %}{% set a = 'q' %}{% endwith %}",
    '{% with a = 3 %}{% for x in xs %}{{ a }}{% endfor %}{% endwith %}',
    '{% for a in xs %}{% macro m() %}{{ a }}{% endmacro %}{% endfor %}{{ m() }}',
    '{% for x in xs %}{% macro m() %}{{ x }}{% endmacro %}{% endfor %}{{ m is defined }}',
    '{% set a, b = 1 %}',
    '{% set range = 3 %}{{ range }}',
    '{% for x in xs %}{{ range(2)|list }}{% set range = 1 %}{% endfor %}',
    '{% macro m() %}{{ messages }}{% endmacro %}{{ m() }}{% set messages = 2 %}',
    '{{ a is defined }}{% for x in xs %}{{ b is defined }}{% endfor %}{% set b = 1 %}',
]

BLOCKS = [
    '{% block b %}{{ a }}{% endblock %}{% set a = 1 %}',
    '{% set a = 1 %}{% block b %}{{ a }}{% endblock %}',
    '{% for x in xs %}{% block b scoped %}{{ x }}{{ a }}{% endblock %}{% endfor %}{% set a = 1 %}',
    '{% for x in xs %}{% set a = 2 %}{% block b scoped %}{{ a }}{% endblock %}{% endfor %}',
    '{% for x in xs %}{% block b scoped %}{{ a }}{% endblock %}{% set a = 2 %}{% endfor %}',
    '{% block b %}{{ a }}{% set a = 3 %}{{ a }}{% endblock %}',
    '{% block b %}{% for x in xs %}{{ a }}{% endfor %}{% set a = 3 %}{% endblock %}',
    '{% block b %}{{ self }}{% endblock %}{{ self.b() }}',
]

SET_BLOCK_FILTERS = [
    "{% set x | replace('s', zz) %}abcs{% endset %}{{ x }}",
    "{% set zz = 1 %}{% set x | replace('s', zz) %}abcs{% endset %}{{ x }}",
    "{% set x | replace('s', zz) %}abcs{% endset %}{{ x }}",
    "{% if false %}{% set x | replace('s', zz) %}abcs{% endset %}{% endif %}ok",
    "{% for zz in xs %}{% set x | replace('1', zz) %}a1{% endset %}{{ x }}{% endfor %}",
    "{% set x | replace('s', a) %}abcs{% set a = 'Q' %}{% endset %}{{ x }}",
]

COMPLEX = [
    '{{ (-1.5) ** 0.5 }}',
    '{{ (-8) ** (1/3) }}',
    '{{ [(-8) ** (1/3)] }}',
    '{{ ((-8) ** (1/3)) * 2 }}',
    '{{ ((-8) ** 0.5) == 1 }}',
    '{{ ((-8) ** 0.5) is number }}',
    '{{ ((-8) ** 0.5)|abs }}',
    '{{ ((-8) ** 0.5)|tojson }}',
    '{{ ((-8) ** 0.5)|int }}',
    '{{ ((-8) ** 0.5)|float }}',
    '{{ ((-8) ** 0.5).real }}',
    '{{ ((-8) ** 0.5).imag }}',
    '{{ ((-8) ** 0.5).conjugate() }}',
    '{{ ((-8) ** 0.5) < 1 }}',
    '{{ ((-8) ** 0.5)|round }}',
    '{{ ((-8) ** 0.5) ~ "" }}',
    '{{ ((-8) ** 0.5)|string }}',
    '{{ ((-8) ** 0.5) + 1 }}',
    '{{ 1 - ((-8) ** 0.5) }}',
    '{{ ((-8) ** 0.5) ** 2 }}',
    '{{ ((-8) ** 0.5) ** 0.5 }}',
    '{{ ((-8) ** 0.5) ** ((-8) ** 0.5) }}',
    '{{ ((-8) ** 0.5) // 2 }}',
    '{{ ((-8) ** 0.5) % 2 }}',
    '{{ ((-8) ** 0.5) / 0 }}',
    '{{ 2 / ((-8) ** 0.5) }}',
    '{{ (-2) ** -0.5 }}',
    '{{ (-1) ** 0.5 }}',
    '{{ -((-1) ** 0.5) }}',
    '{{ ((-1) ** 0.5) - ((-1) ** 0.5) }}',
    '{{ (((-1) ** 0.5) - ((-1) ** 0.5)) is true }}',
    '{% if ((-1) ** 0.5) - ((-1) ** 0.5) %}T{% else %}F{% endif %}',
    '{{ ((-1) ** 0.5) in [1, 2] }}',
    '{{ "%s" % ((-1) ** 0.5) }}',
    '{{ ((-1) ** 0.5)|pprint }}',
    '{{ (-1e300) ** 1.5 }}',
    '{{ ((-1) ** 0.5) ~ 1 }}',
    '{{ ((-1) ** 0.5) + "a" }}',
    '{{ "a" * ((-1) ** 0.5) }}',
    '{{ [(-1) ** 0.5]|sum }}',
    '{{ (-0.5) ** 0.5 > 0 }}',
    '{{ ((-1) ** 0.5) == ((-1) ** 0.5) }}',
    '{{ ((-1) ** 0.5) is sameas ((-1) ** 0.5) }}',
    '{{ (-2.0) ** 1e-300 }}',
    '{{ [(-1) ** 0.5]|tojson }}',
    '{{ ((-1) ** 0.5) is integer }}',
    '{{ ((-1) ** 0.5)|length }}',
    '{{ (-1) ** 0.5 != 1 }}',
    '{{ ((-1) ** 0.5) == none }}',
    '{{ ((-1) ** 0.5) * none }}',
    '{{ ((-1) ** 0.5) ** -1 }}',
    '{{ (0 * ((-1) ** 0.5)) ** -1 }}',
    '{{ ((-1) ** 0.5) + true }}',
    '{{ ((-1) ** 0.5) * 2 ** 70 }}',
]

MISC = [
    "{{ {'k': 1} * (1, 2) }}",
    '{{ (1, 2) * 1.5 }}',
    '{{ range(nope) }}',
    '{{ range(1, nope) }}',
    '{{ 1.5|round(nope) }}',
    "{{ 1.5|round(nope, 'floor') }}",
    "{{ 'abc'|truncate(nope) }}",
    '{{ xs|slice(nope)|list }}',
    '{{ 1 < nope < 10 }}',
    '{{ nope < 10 }}',
    "{{ (a, xs) in {} }}",
    "{{ {(1, [2]): 1} }}",
    "{{ {'k': 1}.get((1, [2])) }}",
    "{% autoescape true %}{% block b1 %}{{ '<x>' ~ s }}{{ s }}{% endblock %}{% endautoescape %}",
    "{% autoescape true %}{% block b1 %}{% set q %}<{{ s }}>{% endset %}{{ q }}{% endblock %}{% endautoescape %}",
    "{% autoescape a %}{% block b1 %}{{ '<x>' ~ s }}{% endblock %}{% endautoescape %}",
    "{% autoescape true %}{% block b1 %}{% autoescape true %}{{ '<x>' ~ s }}{% endautoescape %}{% endblock %}{% endautoescape %}",
    "{% autoescape true %}{% block b1 %}{% macro m() %}{{ '<' }}{% endmacro %}{{ m() }}{% endblock %}{% endautoescape %}",
]

# `for x in xs if test`: each item's test runs when the loop reaches it
LOOP_FILTERS = [
    "{% for b, d in [[2, false], [xs, 0]] if b >= d %}{% set d = d + [1, 2] %}{{ n }}{% endfor %}",
    "{% set ns = namespace(c=0) %}{% for x in xs + xs if ns.c < 2 %}{% set ns.c = ns.c + 1 %}{{ x }}{% endfor %}{{ ns.c }}",
    "{% set ns = namespace(c=0) %}{% for x in xs + xs if ns.c < 2 %}{% set ns.c = ns.c + 1 %}{{ x }}{{ loop.last }}{% endfor %}{{ ns.c }}",
    "{% set ns = namespace(c=0) %}{% for x in xs + xs if ns.c < 2 %}{% set ns.c = ns.c + 1 %}{{ x }}{{ loop.length }}{% endfor %}{{ ns.c }}",
    "{% set ns = namespace(c=0) %}{% for x in xs + xs + xs if ns.c < 3 %}{% set ns.c = ns.c + 1 %}{{ loop.nextitem }}/{{ loop.revindex }}{% endfor %}{{ ns.c }}",
    "{% for x in [1, 'a', 2] if x > 0 %}{{ x }}{% endfor %}",
    "{% for x in [1, 'a', 2] if x > 0 %}{{ loop.length }}{% endfor %}",
    "{% for x in [1, 0, 2] if x > 0 %}{{ loop.index }}{{ loop.first }}{{ loop.last }}{{ loop.previtem }}{% else %}E{% endfor %}",
    "{% for x in [1, 0, 2] if x > 5 %}{{ x }}{% else %}E{% endfor %}",
    "{% for x in [1, 0, 2] if x > 0 %}{{ loop }}{% endfor %}",
    "{% for x in [[1, [2]], [0, []]] if x[0] recursive %}{{ x[0] }}{{ loop(x[1]|map('list')|list) if x[1] }}{% endfor %}",
]

# A loop body that reads a name before the set that makes it (the one name
# its frame starts missing, bound in place each iteration: interp.c:
# frame_start_iteration), the target among them, two such names, unpacked
# targets, nested and recursive loops, an else body, a filtered loop.
ITERATION_START = [
    "{% for x in xs %}[{{ n }}]{% set n = x %}{{ n }}{% endfor %}{{ n }}",
    "{% for x in xs %}{{ n is defined }}{% set n = x * 2 %}{{ n }}{% endfor %}",
    "{% for x in xs %}{{ n + 1 }}{% set n = x %}{% endfor %}",
    "{% for x in xs %}{{ x }}{% set x = x * 10 %}{{ x }}{% endfor %}",
    "{% for x in xs %}{{ a }}{{ n }}{% set n = x %}{% set a = n %}{{ a }}{% endfor %}{{ a }}{{ n }}",
    "{% for a, b in [[1, 2], [3, 4]] %}{{ n is defined }}{% set n = a + b %}{{ n }}{% set b = 0 %}{% endfor %}",
    "{% for x in xs %}{% for y in xs %}{{ n is defined }}{% set n = x + y %}{{ n }};{% endfor %}{{ n is defined }}"
    "{% set n = x %}{{ n }}|{% endfor %}",
    "{% for x in [[1, [2, 3]], [0, []]] recursive %}{{ n is defined }}{% set n = x[0] %}{{ n }}"
    "{{ loop(x[1]|map('list')|list) if x[1] is iterable and x[1] and x[1][0] is iterable }}{% endfor %}",
    "{% for x in [] %}{% set n = 1 %}{% else %}{{ n }}{% endfor %}",
    "{% for x in xs + xs if x > 1 %}{{ n is defined }}{% set n = loop.index %}{{ n }}{% endfor %}",
    "{% macro m(v) %}{% for x in xs %}{{ v }}{% set v = x %}{{ v }}{% endfor %}{% endmacro %}{{ m(9) }}",
    # names nothing outside defines
    "{% for x in xs %}[{{ q }}]{% set q = x %}{{ q }}{% endfor %}{{ q is defined }}",
    "{% for x in xs %}{% if x > 1 %}{% set q = x %}{% endif %}{{ q is defined }}{{ q }};{% endfor %}",
    "{% for x in xs %}{{ q + 1 }}{% set q = x %}{% endfor %}",
    "{% for x in xs %}{{ q is defined }}{{ r is defined }}{% set q = x %}{% set r = q %}{{ r }}{% endfor %}",
    "{% for u, v in [[1, 2], [3, 4]] %}{{ q is defined }}{% set q = u + v %}{{ q }}{% endfor %}",
    "{% for x in xs %}{% for y in xs %}{{ q is defined }}{% set q = x + y %}{{ q }};{% endfor %}{{ q is defined }}"
    "{% set q = x %}{{ q }}|{% endfor %}",
    "{% for x in xs + xs if x > 1 %}{{ q is defined }}{% set q = loop.index %}{{ q }}{% endfor %}",
    "{% for x in xs %}{{ loop.index }}{% set q = x %}{% if loop.last %}{{ q }}{% break %}{% endif %}{% endfor %}",
]


# Chat mode: the five names apply_chat_template passes (messages, tools,
# documents, add_generation_prompt, continue_final_message) read at the top
# level, in a macro, in a loop; set before they are read (the top level then
# never looks outside); absent from the call (tools and documents are None);
# the same names as keys of a message; and names that are none of the five,
# which come from the other variables or are undefined. Each template runs
# on every context of CHAT_CONTEXTS.
CHAT_VARS = [
    "{{ messages|length }}|{{ tools }}|{{ documents }}|{{ add_generation_prompt }}|{{ continue_final_message is defined }}",
    "{% macro m() %}{{ messages[0].content }}{{ tools|length if tools else 'no tools' }}{{ add_generation_prompt }}{% endmacro %}{{ m() }}",
    "{% for x in messages %}{{ x.role }}:{{ x.content }}{{ documents is none }}{% endfor %}{{ add_generation_prompt }}",
    "{% set tools = ['t'] %}{{ tools }}{% set add_generation_prompt = 7 %}{{ add_generation_prompt }}{{ messages|length }}",
    "{{ tools }}{% set tools = ['t'] %}{{ tools }}",
    "{% if add_generation_prompt %}G{% endif %}{{ reasoning if reasoning is defined else 'r?' }}{{ bos_token }}{{ messages[-1].content }}",
    "{{ message is defined }}{{ tool is defined }}{{ document }}{{ message.content }}",
    "{% for messages in [[1]] %}{{ messages }}{% endfor %}{{ messages|length }}",
    "{% macro m(messages) %}{{ messages }}{% endmacro %}{{ m(3) }}{{ m() }}{{ messages[0].role }}",
    "{{ messages[-1].content }}{% if continue_final_message is defined %}C{% endif %}{{ documents|length if documents else 0 }}",
    # bound before the render runs (interp.c: bind_chat_inputs): a block reading them, sets after a read,
    # a set inside an if, a macro reading a name the top level sets later, a hidden one in a block
    "{% block b %}{{ messages|length }}{{ tools }}{{ continue_final_message is defined }}{% endblock %}",
    "{{ messages|length }}{% set messages = messages[:1] %}{{ messages|length }}{% set tools = none %}{{ tools }}",
    "{% if not messages %}{% set tools = 1 %}{% endif %}{{ tools }}{% if messages %}{% set documents = 2 %}{% endif %}"
    "{{ documents }}",
    "{% macro m() %}{{ add_generation_prompt }}|{{ tools is none }}{% endmacro %}{{ m() }}"
    "{% set add_generation_prompt = 5 %}{{ m() }}{{ add_generation_prompt }}",
    "{% for m in messages %}{% set tools = loop.index %}{{ tools }}{% endfor %}{{ tools is none }}"
    "{% with documents = 3 %}{{ documents }}{% endwith %}{{ documents is none }}",
]
CHAT_CONTEXTS = [
    {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]},
    {"messages": [{"role": "user", "content": "hi", "tools": "k", "messages": 2}], "add_generation_prompt": True,
     "tools": [{"type": "function", "function": {"name": "f"}}], "documents": [{"title": "d", "text": "t"}],
     "reasoning": False, "bos_token": "<s>", "message": "m", "document": "D"},
    {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "par"}],
     "continue_final_message": True},
]


def base_context(template):
    return {k: v for k, v in BASE.items() if re.search(r"(?<![\w.'\"])" + k + r"\b", template)}


def main():
    rows = []
    for k, (template, context) in enumerate(DIVERGENCES, 1):
        rows.append({"id": f"scope-div-{k:03d}", "template_text": template, "context": context, "raw": True})
    for section, templates in (("frame", FRAMES), ("block", BLOCKS), ("filter", SET_BLOCK_FILTERS),
                               ("complex", COMPLEX), ("misc", MISC), ("loopfilter", LOOP_FILTERS),
                               ("iterstart", ITERATION_START)):
        for k, template in enumerate(templates, 1):
            rows.append({"id": f"scope-{section}-{k:03d}", "template_text": template,
                         "context": base_context(template), "raw": True})
    k = 0
    for template in CHAT_VARS:
        for context in CHAT_CONTEXTS:
            k += 1
            rows.append({"id": f"scope-chatvar-{k:03d}", "template_text": template, "context": context, "raw": False})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unit", "scope.jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{path}: {len(rows)} rows")


if __name__ == "__main__":
    main()
