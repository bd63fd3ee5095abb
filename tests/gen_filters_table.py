#!/usr/bin/env python3
"""Writes tests/unit/filters.jsonl: small raw-mode templates covering every
builtin filter and test of Jinja2 3.1 (every argument, Undefined inputs,
Markup, unicode, error cases), Python `%` formatting and str.format (the
format-spec mini-language), as src/engine/filters.c, src/engine/tests.c and src/engine/format.c
implement them.

No expected output is stored: tests/run_tests.sh renders every row live with
the reference (shared/oracle/hf_render.py) and with chatfmt, and compares.

Row ids are filters-SECTION-NNN, numbered in order inside each section. Add
new rows at the END of a section so existing ids stay stable. Regenerate with:
    python3 tests/gen_filters_table.py
"""
import json
import os
import re

BASE = {
    "s": "héllo wörld",
    "u": "ǅemal ßtraße ΣΊΣΥΦΟΣ",
    "n": 7,
    "neg": -3,
    "f": 2.5,
    "z": 0,
    "t": True,
    "no": False,
    "nil": None,
    "xs": [3, 1, 2],
    "fs": [1.5, 2, 0.25],
    "words": ["b", "A", "c", "a", "B"],
    "d": {"b": 1, "a": 2, "C": 0},
    "users": [
        {"name": "bob", "age": 30, "city": "NY", "tags": ["x", "y"], "active": True},
        {"name": "Alice", "age": 25, "city": "ny", "tags": [], "active": False},
        {"name": "carol", "age": 30, "city": "LA", "active": True},
        {"name": "dave", "age": None, "city": "la", "tags": ["z"]},
    ],
    "msgs": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello", "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]},
        {"role": "tool", "content": "42"},
        {"role": "user", "content": [{"type": "text", "text": "more"}]},
    ],
    "tools": [
        {"type": "function", "function": {"name": "get", "parameters": {"type": "object"}}},
        {"type": "code_interpreter"},
    ],
    "big": 12345678901234567890,
    "nbig": -98765432109876543210,
    "empty": "",
    "el": [],
    "ed": {},
    "html": "<b>Tom & \"Jerry\"</b> 'x'",
    "text": "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.",
    "lines": "one\ntwo\n\nthree\r\nfour",
    "nested": {"a": {"b": [10, {"c": "deep"}]}},
    "mixed": [1, "a", None],
    "pairs": [["a", 1], ["b", 2]],
    "longlist": list(range(100, 0, -3)),
    "nanstr": "nan",
    "infstr": "inf",
}

ROWS = []
_counts = {}


def add(section, template, context=None):
    _counts[section] = _counts.get(section, 0) + 1
    if context is None:
        context = {k: v for k, v in BASE.items() if re.search(r"(?<![\w.'\"])" + k + r"\b", template)}
    ROWS.append({"id": f"filters-{section}-{_counts[section]:03d}", "template_text": template,
                 "context": context, "raw": True})


def many(section, templates):
    for t in templates:
        add(section, t)


# ---------------------------------------------------------------- filters
many("abs", [
    "{{ neg|abs }}", "{{ -2.5|abs }}", "{{ t|abs }}", "{{ nbig|abs }}", "{{ big|abs }}",
    "{{ 's'|abs }}", "{{ nil|abs }}", "{{ undef|abs }}", "{{ -0.0|abs }}", "{{ neg|abs(1) }}",
])
many("attr", [
    "{{ d|attr('a') }}", "{{ d|attr('items') is callable }}", "{{ (d|attr('keys'))()|list }}",
    "{{ s|attr('upper')() }}", "{{ xs|attr('count')(1) }}", "{{ undef|attr('x') }}",
    "{% set ns = namespace(a=1) %}{{ ns|attr('a') }}", "{{ d|attr('zz') is defined }}",
    "{{ xs|attr(1) }}", "{{ d|attr('_private') is defined }}", "{{ d|attr }}",
    "{{ nil|attr('x') is defined }}", "{{ d|attr('pop') }}", "{{ d|attr('a').x }}",
])
many("batch", [
    "{{ xs|batch(2)|list }}", "{{ xs|batch(2, 'F')|list }}", "{{ longlist|batch(7)|list|length }}",
    "{{ el|batch(3)|list }}", "{{ 'abcde'|batch(2)|list }}", "{{ xs|batch(0)|list }}",
    "{{ xs|batch(-1)|list }}", "{{ xs|batch(5, 0)|list }}", "{{ xs|batch }}", "{{ d|batch(2)|list }}",
    "{{ undef|batch(2)|list }}", "{{ xs|batch(2.0)|list }}", "{{ xs|batch(2.0, 'x')|list }}",
    "{% for row in users|batch(3, none) %}[{{ row|map(attribute='name')|join(',') }}]{% endfor %}",
])
many("capitalize", [
    "{{ s|capitalize }}", "{{ 'HELLO World'|capitalize }}", "{{ u|capitalize }}", "{{ n|capitalize }}",
    "{{ undef|capitalize }}", "{{ 'ǆx'|capitalize }}", "{{ 'ßa'|capitalize }}", "{{ html|safe|capitalize }}",
    "{{ ''|capitalize }}", "{{ xs|capitalize }}",
])
many("center", [
    "[{{ 'ab'|center(7) }}]", "[{{ 'ab'|center(6) }}]", "[{{ 'abc'|center(6) }}]", "[{{ s|center }}]",
    "[{{ 'é'|center(4) }}]", "[{{ 'x'|center(-3) }}]", "[{{ n|center(5) }}]", "[{{ undef|center(3) }}]",
    "[{{ 'x'|center(2.5) }}]", "[{{ 'x'|center(width=5) }}]", "[{{ '<'|safe|center(3) }}]",
])
many("count", [
    "{{ xs|count }}", "{{ s|count }}", "{{ d|count }}", "{{ undef|count }}", "{{ n|count }}",
    "{{ xs|length }}", "{{ u|length }}", "{{ ''|length }}", "{{ nil|length }}", "{{ xs|length(1) }}",
    "{{ (1, 2)|length }}", "{{ d.items()|length }}", "{{ xs|select('odd')|list|length }}",
])
many("default", [
    "{{ undef|default('x') }}", "{{ undef|d('x') }}", "{{ ''|default('x') }}", "{{ ''|default('x', true) }}",
    "{{ 0|default('x', boolean=true) }}", "{{ nil|default('x') }}", "{{ nil|default('x', true) }}",
    "{{ undef|default }}", "[{{ undef|default|length }}]", "{{ undef.a|default('y') }}",
    "{{ d.zz|default(d.a) }}", "{{ n|default(1, 2, 3) }}", "{{ n|default(x=1) }}",
    "{{ undef|default(undef2)|default('z') }}", "{{ el|d('e', true) }}",
])
many("dictsort", [
    "{{ d|dictsort }}", "{{ d|dictsort(true) }}", "{{ d|dictsort(false, 'value') }}",
    "{{ d|dictsort(reverse=true) }}", "{{ d|dictsort(by='value', reverse=true) }}",
    "{{ d|dictsort(by='other') }}", "{{ xs|dictsort }}", "{{ undef|dictsort }}",
    "{{ {'b': 1, 'a': 'x'}|dictsort(by='value') }}", "{{ {1: 'a', 'b': 2}|dictsort }}",
    "{% for k, v in {'x': 1, 'X': 2, 'y': 0}|dictsort %}{{ k }}={{ v }};{% endfor %}",
    "{{ {'b': 1, 'a': 1, 'c': 0}|dictsort(by='value') }}", "{{ ed|dictsort }}",
])
many("escape", [
    "{{ html|e }}", "{{ html|escape }}", "{{ html|safe|e }}", "{{ n|e }}", "{{ nil|e }}", "{{ undef|e }}",
    "{{ xs|e }}", "{{ (html|e)|e }}", "{{ html|e(1) }}", "{{ html|forceescape }}", "{{ html|e|forceescape }}",
    "{{ undef|forceescape }}", "{{ html|e is escaped }}", "{{ ('<' ~ html|e) }}", "{{ html|e ~ '<' }}",
])
many("filesizeformat", [
    "{{ 0|filesizeformat }}", "{{ 1|filesizeformat }}", "{{ 999|filesizeformat }}", "{{ 1000|filesizeformat }}",
    "{{ 1234567|filesizeformat }}", "{{ 1234567|filesizeformat(true) }}", "{{ 1024|filesizeformat(binary=true) }}",
    "{{ 1e30|filesizeformat }}", "{{ -5|filesizeformat }}", "{{ '2048'|filesizeformat }}",
    "{{ 'x'|filesizeformat }}", "{{ nil|filesizeformat }}", "{{ 1.5|filesizeformat }}",
    "{{ big|filesizeformat }}", "{{ 1e15|filesizeformat(true) }}", "{{ 999999|filesizeformat }}",
])
many("first", [
    "{{ xs|first }}", "{{ s|first }}", "{{ d|first }}", "{{ el|first is defined }}", "{{ undef|first is defined }}",
    "{{ n|first }}", "{{ ''|first is defined }}", "{{ users|first|attr('name') }}", "{{ xs|first(1) }}",
    "{{ el|first }}", "{{ xs|last }}", "{{ s|last }}", "{{ d|last }}", "{{ el|last is defined }}",
    "{{ undef|last is defined }}", "{{ n|last }}", "{{ xs|select('odd')|last }}", "{{ (1,2)|last }}",
    "{{ d.items()|first }}", "{{ html|safe|first }}",
])
many("float", [
    "{{ '3.5'|float }}", "{{ 'x'|float }}", "{{ 'x'|float(1) }}", "{{ n|float }}", "{{ big|float }}",
    "{{ ' 1e3 '|float }}", "{{ 'nan'|float }}", "{{ '-inf'|float }}", "{{ '1_000.5'|float }}", "{{ '1__0'|float }}",
    "{{ nil|float }}", "{{ t|float }}", "{{ undef|float }}", "{{ xs|float(default='d') }}", "{{ '0x10'|float }}",
    "{{ '.5'|float }}", "{{ '5.'|float }}", "{{ '1e'|float }}", "{{ 'infinity'|float }}", "{{ '١٢'|float }}",
    "{{ (10**400)|float }}",
])
many("format", [
    "{{ '%s-%s'|format(1, 'a') }}", "{{ '%(a)s'|format(a=5) }}", "{{ '%d'|format('x') }}", "{{ '%s'|format }}",
    "{{ 'abc'|format }}", "{{ '%s %s'|format(1) }}", "{{ '%s'|format(1, 2) }}", "{{ '%s'|format(1, a=2) }}",
    "{{ html|safe|format }}", "{{ '<%s>'|safe|format(html) }}", "{{ '%s'|format(xs) }}", "{{ n|format }}",
    "{{ undef|format }}", "{{ '%(a)s %(b)r'|format(a=html, b='q') }}", "{{ '%5.1f|%-6d|%x'|format(f, n, 255) }}",
])
many("groupby", [
    "{% for g, items in users|groupby('city') %}{{ g }}:{{ items|map(attribute='name')|join(',') }};{% endfor %}",
    "{% for g, items in users|groupby('city', case_sensitive=true) %}{{ g }}:{{ items|length }};{% endfor %}",
    "{% for g in users|groupby('age') %}{{ g.grouper }}={{ g.list|length }};{% endfor %}",
    "{{ users|groupby('tags.0', default='none')|map(attribute='grouper')|list }}",
    "{{ users|groupby('city')|length }}", "{{ xs|groupby(0) }}", "{{ users|groupby }}",
    "{{ [[1, 'a'], [0, 'b'], [1, 'c']]|groupby(0) }}", "{{ users|groupby('nope') }}",
    "{{ users|groupby('nope', default='d')|list }}", "{{ el|groupby('a') }}",
    "{% for g, l in [{'a': 'X'}, {'a': 'x'}, {'a': 'y'}]|groupby('a') %}{{ g }}{{ l }};{% endfor %}",
    "{{ (users|groupby('city'))[0] }}", "{{ users|groupby('active', default=false)|map('first')|list }}",
])
many("indent", [
    "{{ lines|indent }}", "{{ lines|indent(2, true) }}", "{{ lines|indent(2, blank=true) }}",
    "{{ lines|indent('> ', first=true, blank=true) }}", "{{ 'a\\n\\nb\\n'|indent(1) }}", "[{{ ''|indent(first=true) }}]",
    "{{ lines|safe|indent(3) }}", "{{ '<x>\\ny'|indent('<'|safe) }}", "{{ 'a\\nb'|indent('<'|safe, true) }}",
    "{{ 'a\\nb'|indent('<'|safe, blank=true) }}", "{{ n|indent }}", "{{ undef|indent }}", "{{ 'a\\nb'|indent(1.5) }}",
    "{{ 'a\\u2028b\\x1cc'|indent(1) }}", "{{ 'a\\nb'|indent(-1) }}", "{{ 'a\\nb'|indent(t) }}",
])
many("int", [
    "{{ '42'|int }}", "{{ '42.7'|int }}", "{{ 'x'|int }}", "{{ 'x'|int(-1) }}", "{{ '0x1A'|int(0, 16) }}",
    "{{ '0x1A'|int }}", "{{ '1A'|int(base=16) }}", "{{ '0b101'|int(0, 0) }}", "{{ '010'|int(base=0) }}",
    "{{ '0o17'|int(base=8) }}", "{{ 3.99|int }}", "{{ -3.99|int }}", "{{ 1e20|int }}", "{{ big|int }}",
    "{{ t|int }}", "{{ nil|int }}", "{{ undef|int }}", "{{ ' 1_000 '|int }}", "{{ '1__0'|int }}",
    "{{ '99999999999999999999999'|int }}", "{{ 'ff'|int(base=16) }}", "{{ 'FFFFFFFFFFFFFFFFFFFF'|int(base=16) }}",
    "{{ 'nan'|int }}", "{{ 'inf'|int(7) }}", "{{ '42'|int(base=1) }}", "{{ '42'|int(base=2.0) }}",
    "{{ 1e300|int }}", "{{ -1.5e19|int }}", "{{ xs|int }}", "{{ '+7'|int }}", "{{ '-0'|int }}",
])
many("items", [
    "{{ d|items|list }}", "{% for k, v in d|items %}{{ k }}{{ v }}{% endfor %}", "{{ undef|items|list }}",
    "{{ xs|items|list }}", "{{ ed|items|list }}", "{{ nil|items|list }}",
])
many("join", [
    "{{ xs|join }}", "{{ xs|join(', ') }}", "{{ users|join('|', attribute='name') }}", "{{ users|join(attribute='age') }}",
    "{{ undef|join(',') }}", "{{ s|join('-') }}", "{{ d|join(',') }}", "{{ [html|safe, html]|join(' ') }}",
    "{{ [html, 1]|join(html|safe) }}", "{{ mixed|join(',') }}", "{{ n|join }}", "{{ users|join(',', 'tags.0') }}",
    "{{ [[1, 2], [3]]|join(';') }}", "{{ xs|join(1) }}", "{{ xs|join(d=',') }}", "{{ users|join(',', attribute='nope') }}",
])
many("list", [
    "{{ s|list }}", "{{ d|list }}", "{{ xs|list }}", "{{ undef|list }}", "{{ n|list }}", "{{ (1, 2)|list }}",
    "{{ d.values()|list }}", "{{ html|safe|list|first }}", "{{ nil|list }}", "{{ ''|list }}",
    "{{ xs|list is sameas xs }}", "{% set l = xs|list %}{{ l is sameas l }}{{ l == xs }}{{ l + [4] }}{{ xs }}",
    "{{ (xs|list + xs|list)|length }}{{ xs|list|sort }}{{ xs }}",
    "{{ range(3)|list }}{{ (range(3)|list) + [3] }}", "{{ (xs|list)|tojson }}{{ d.items()|list }}",
])
many("lower", [
    "{{ u|lower }}", "{{ u|upper }}", "{{ 'ΣΑΣ ΣΑΣ.'|lower }}", "{{ 'ß ﬁ ŉ'|upper }}", "{{ n|upper }}",
    "{{ undef|upper }}", "{{ html|safe|upper }}", "{{ xs|lower }}", "{{ 'İ'|lower|length }}", "{{ s|lower(1) }}",
])
many("map", [
    "{{ users|map(attribute='name')|list }}", "{{ users|map(attribute='tags.0')|list }}",
    "{{ users|map(attribute='tags.0', default='-')|list }}", "{{ words|map('upper')|list }}",
    "{{ words|map('lower')|join }}", "{{ xs|map('string')|join('+') }}", "{{ fs|map('round')|list }}",
    "{{ fs|map('round', 1, 'floor')|list }}", "{{ xs|map('default', 5)|list }}", "{{ xs|map('nope')|list }}",
    "{{ xs|map|list }}", "{{ xs|map(attribute='a', x=1)|list }}", "{{ el|map('nope')|list }}",
    "{{ undef|map('upper')|list }}", "{{ users|map(attribute='name')|map('upper')|join(',') }}",
    "{{ xs|map('upper', attribute='x')|list }}", "{{ msgs|map(attribute='role')|unique|list }}",
    "{{ [[1, 2], [3]]|map('sum')|list }}", "{{ [[1, 2], [3]]|map('join', ',')|list }}", "{{ n|map('upper')|list }}",
    "{{ xs|map(undef)|list }}", "{{ xs|map(1)|list }}", "{{ xs|map(['x'])|list }}",
    "{{ tools|map(attribute='function')|list }}", "{{ d|map('upper')|list }}",
])
many("minmax", [
    "{{ xs|min }}", "{{ xs|max }}", "{{ words|min }}", "{{ words|max }}", "{{ words|min(true) }}", "{{ words|max(case_sensitive=true) }}",
    "{{ users|min(attribute='age') }}", "{{ users|max(attribute='name') }}", "{{ el|min is defined }}",
    "{{ mixed|max }}", "{{ [1, 'a']|min }}", "{{ s|max }}", "{{ d|max }}", "{{ [2, 1.5, 2.0]|max }}",
    "{{ [1, 1.0]|max }}", "{{ ['b', 'B', 'a']|max }}", "{{ ['b', 'B', 'a']|min }}", "{{ undef|max is defined }}",
    "{{ users|max(attribute='nope') }}", "{{ [[1, 2], [1, 3]]|max }}",
])
many("pprint", [
    "{{ d|pprint }}", "{{ xs|pprint }}", "{{ s|pprint }}", "{{ nil|pprint }}", "{{ users|pprint }}",
    "{{ msgs|pprint }}", "{{ text|pprint }}", "{{ (text ~ ' ' ~ text)|pprint }}", "{{ html|safe|pprint }}",
    "{{ {'z': [1, 2], 'a': {'y': 1, 'b': 2}}|pprint }}", "{{ longlist|pprint }}", "{{ undef|pprint }}",
    "{{ [text, text]|pprint }}", "{{ {'k': text}|pprint }}", "{{ (1,)|pprint }}", "{{ big|pprint }}",
    "{{ lines|pprint }}", "{{ {'text': text, 'n': [1, 2, 3], 'longer_key_name': lines * 5}|pprint }}",
])
many("random", [
    "{{ [7]|random }}", "{{ el|random is defined }}", "{{ 'a'|random }}", "{{ xs|random in xs }}", "{{ n|random }}",
])
many("replace", [
    "{{ s|replace('l', 'L') }}", "{{ s|replace('l', 'L', 2) }}", "{{ 'aaaa'|replace('a', 'b', 0) }}",
    "{{ 'abc'|replace('', '-') }}", "{{ n|replace('7', 'seven') }}", "{{ undef|replace('a', 'b') }}",
    "{{ html|safe|replace('<', '[') }}", "{{ 'a<b'|replace('<', html|safe) }}", "{{ html|replace('\"', '&quot;') }}",
    "{{ 'x'|replace('x') }}", "{{ 'x'|replace(1, 2) }}", "{{ 'x1'|replace(1, 2) }}", "{{ 'aa'|replace('a', 'b', count=1) }}",
    "{{ 'aa'|replace('a', 'b', 1.0) }}", "{{ 'aa'|replace('a', 'b', none) }}", "{{ 'aa'|replace('a', 'b', -1) }}",
])
many("reverse", [
    "{{ s|reverse }}", "{{ xs|reverse|list }}", "{{ d|reverse|list }}", "{{ undef|reverse|list }}", "{{ n|reverse }}",
    "{{ html|safe|reverse }}", "{{ (1, 2)|reverse|list }}", "{{ xs|select('odd')|reverse }}", "{{ '👍a'|reverse }}",
    "{% for x in xs|reverse %}{{ x }}{% endfor %}",
])
many("round", [
    "{{ 2.5|round }}", "{{ 3.5|round }}", "{{ -2.5|round }}", "{{ 2.675|round(2) }}", "{{ 42.55|round(1, 'floor') }}",
    "{{ 42.55|round(1, 'ceil') }}", "{{ 42|round }}", "{{ 42|round(-1) }}", "{{ 45|round(-1) }}", "{{ 55|round(-1) }}",
    "{{ 1250|round(-2) }}", "{{ 1350.0|round(-2) }}", "{{ 50.0|round(-2) }}", "{{ 51.0|round(-2) }}", "{{ -51.0|round(-2) }}",
    "{{ 1e300|round(-300) }}", "{{ 0.5|round(0, 'ceil') }}", "{{ -0.5|round(0, 'ceil') }}", "{{ 7|round(0, 'floor') }}",
    "{{ 2.5|round(method='other') }}", "{{ 'x'|round }}", "{{ nil|round }}", "{{ undef|round }}", "{{ 2.5|round(1.5) }}",
    "{{ 1.23456789|round(5) }}", "{{ t|round }}", "{{ big|round(-5) }}", "{{ nbig|round(-3) }}", "{{ 0.1|round(20) }}",
    "{{ 1.5|round(none) }}", "{{ 2.5|round(none) }}", "{{ 123.456|round(-1, 'floor') }}", "{{ 1e-10|round(12) }}",
    "{{ 5e-324|round(400) }}", "{{ 1.7976931348623157e308|round(-308) }}", "{{ 15|round(-1, 'ceil') }}",
    "{{ 0.285|round(2) }}", "{{ 1.005|round(2) }}", "{{ -0.0|round }}", "{{ 999.9999|round(3) }}",
    "{{ 2.5|round(0, 'common') }}", "{{ 4.5|round(precision=0) }}", "{{ 1.15|round(1) }}", "{{ 2|round(2, 'ceil') }}",
])
many("safe", [
    "{{ html|safe }}", "{{ (html|safe) ~ html }}", "{{ html ~ (html|safe) }}", "{{ n|safe }}", "{{ undef|safe }}",
    "{{ nil|safe }}", "{{ html|safe is escaped }}", "{{ html is escaped }}", "{{ (html|safe + '&') }}",
    "{{ xs|safe }}", "{{ html|safe|string is escaped }}", "{{ html|safe|safe }}",
])
many("slice", [
    "{{ xs|slice(2)|list }}", "{{ longlist|slice(3)|list }}", "{{ longlist|slice(4, 'F')|map('length')|list }}",
    "{{ xs|slice(5, 0)|list }}", "{{ xs|slice(0)|list }}", "{{ xs|slice(-2)|list }}", "{{ el|slice(2)|list }}",
    "{{ s|slice(3)|list }}", "{{ xs|slice }}", "{{ xs|slice(2.0)|list }}", "{{ undef|slice(2)|list }}",
    "{% for col in users|slice(2) %}[{{ col|map(attribute='name')|join(',') }}]{% endfor %}",
])
many("sort", [
    "{{ xs|sort }}", "{{ xs|sort(true) }}", "{{ words|sort }}", "{{ words|sort(case_sensitive=true) }}",
    "{{ words|sort(reverse=true) }}", "{{ users|sort(attribute='name')|map(attribute='name')|list }}",
    "{{ users|sort(attribute='age') }}", "{{ users|sort(attribute='city,name')|map(attribute='name')|list }}",
    "{{ users|sort(attribute='city,name', case_sensitive=true)|map(attribute='name')|list }}", "{{ mixed|sort }}",
    "{{ [1, 'a']|sort }}", "{{ ['a', 1]|sort }}", "{{ [2, 1, 'a']|sort }}", "{{ s|sort|join }}", "{{ d|sort }}",
    "{{ fs|sort }}", "{{ [[2, 'b'], [1, 'z'], [2, 'a']]|sort }}", "{{ [[2, 'b'], [1, 'z'], [2, 'a']]|sort(attribute='1') }}",
    "{{ longlist|sort|first }}", "{{ longlist|sort(reverse=true)|first }}", "{{ undef|sort }}", "{{ n|sort }}",
    "{{ [nil, 1]|sort }}", "{{ [undef, 1]|sort }}", "{{ [big, 1, -5.5, t]|sort }}", "{{ users|sort(attribute='tags') }}",
    "{{ [{'a': 1}, {'a': 0}]|sort(attribute='a') }}", "{{ [{'a': 1}, {'b': 0}]|sort(attribute='a') }}",
    "{{ ['b', 'a', 'B', 'A']|sort(true, true) }}", "{{ (longlist + ['x'])|sort }}", "{{ [3, 2, 1, 'x', 5]|sort }}",
    "{{ [1, 2, 3, 'x', 0]|sort }}",
])
many("string", [
    "{{ n|string }}", "{{ xs|string }}", "{{ html|safe|string }}", "{{ undef|string }}", "{{ nil|string }}",
    "{{ (html|safe|string) ~ '<' }}", "{{ d|string }}", "{{ 1.0|string }}", "{{ n|string(1) }}", "{{ n|string ~ 1 }}",
])
many("striptags", [
    "{{ '<p>Hello <b>World</b></p>'|striptags }}", "{{ 'a <!-- c --> b'|striptags }}", "{{ '  a\\n\\n b  '|striptags }}",
    "{{ 'x &amp; y &lt;z&gt; &#65;&#x42; &copy; &nbsp;'|striptags }}", "{{ html|striptags }}", "{{ html|e|striptags }}",
    "{{ 'a < b'|striptags }}", "{{ '<a href=\"x\">link</a>'|striptags }}", "{{ n|striptags }}", "{{ undef|striptags }}",
    "{{ '<!<!---->-- x -->y'|striptags }}", "{{ 'a &ampx &#128; &#0; &#x110000;'|striptags }}",
    # every HTML5 name html.unescape knows, the longest one first, in any case
    "{{ '&amp;'|upper|striptags }}|{{ '&hearts;&spades &fjlig; &NotNestedGreaterGreater;'|striptags }}",
    "{{ '&notin; &notit; &frac12 &sup2x &ampamp; &Aacute&AAcute; &a;'|striptags }}",
    "{{ '&CounterClockwiseContourIntegral; &aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; &;'|striptags }}",
])
many("sum", [
    "{{ xs|sum }}", "{{ fs|sum }}", "{{ users|sum(attribute='age') }}", "{{ xs|sum(start=10) }}", "{{ el|sum }}",
    "{{ [[1], [2, 3]]|sum(start=[]) }}", "{{ words|sum }}", "{{ words|sum(start='') }}", "{{ [big, big]|sum }}",
    "{{ [9223372036854775807, 1]|sum }}", "{{ [-9223372036854775807, -5]|sum }}", "{{ [big, nbig]|sum }}",
    "{{ [t, t]|sum }}", "{{ [0.1, 0.2, 0.3]|sum }}", "{{ undef|sum }}", "{{ [undef]|sum }}", "{{ [1, nil]|sum }}",
    "{{ n|sum }}", "{{ xs|sum('x') }}", "{{ [(1,), (2,)]|sum(start=()) }}", "{{ [big, 0.5]|sum }}",
    "{{ [[1], [2, 3], []]|sum(start=[0]) }}{{ [[1], [2]]|sum(start=xs) }}{{ xs }}",
    "{{ [[1], (2, 3)]|sum(start=[]) }}", "{{ [[1], [2]]|sum(start=(0,)) }}", "{{ [[1], [2]]|sum }}",
    "{{ [xs, xs]|sum(start=xs) }}{{ xs }}", "{{ [{'a': [1]}, {'a': [2]}]|sum(attribute='a', start=[]) }}",
    "{{ [[1], 2]|sum(start=[]) }}", "{{ [[1], xs|unique]|sum(start=[]) }}", "{{ [range(2)|list, [5]]|sum(start=[]) }}",
])
many("title", [
    "{{ s|title }}", "{{ u|title }}", "{{ \"they're bill's friends\"|title }}", "{{ 'hello-world (foo)[bar]{baz}<qux>'|title }}",
    "{{ 'ǆungla ǅx'|title }}", "{{ 'ßtraße'|title }}", "{{ n|title }}", "{{ undef|title }}", "{{ 'a1b2 c_d'|title }}",
    "{{ '  lead   and\ttabs'|title }}", "{{ html|safe|title }}", "{{ 'ŉx'|title }}",
])
many("tojson", [
    "{{ d|tojson }}", "{{ msgs|tojson }}", "{{ s|tojson }}", "{{ s|tojson(ensure_ascii=true) }}", "{{ d|tojson(indent=2) }}",
    "{{ d|tojson(indent='\\t') }}", "{{ d|tojson(sort_keys=true) }}", "{{ xs|tojson(separators=[',', ':']) }}",
    "{{ d|tojson(separators=(';', '=')) }}", "{{ d|tojson(indent=0) }}", "{{ d|tojson(indent=-1) }}",
    "{{ nested|tojson(indent=1, sort_keys=true) }}", "{{ undef|tojson }}", "{{ html|tojson }}", "{{ html|safe|tojson }}",
    "{{ big|tojson }}", "{{ 1.0|tojson }}", "{{ nil|tojson }}", "{{ d|tojson(indent=2.5) }}", "{{ d|tojson(separators=[',']) }}",
    "{{ d|tojson(4) }}", "{{ d|tojson(true, 1) }}", "{{ d|tojson(nope=1) }}", "{{ xs|select('odd')|tojson }}",
    "{{ tools|map(attribute='function')|tojson(indent=2) }}", "{{ d|items|tojson }}", "{{ d.items()|tojson }}",
    "{{ {1: 'a', none: 'b', 1.5: 'c', t: 'd'}|tojson }}", "{{ (1, 2)|tojson }}", "{{ el|tojson(indent=2) }}",
    "{{ d|tojson(indent=t) }}",
])
many("trim", [
    "[{{ '  a b  '|trim }}]", "[{{ 'xxaxx'|trim('x') }}]", "[{{ '\\u3000a\\x85'|trim }}]", "[{{ n|trim }}]",
    "[{{ undef|trim }}]", "[{{ 'abca'|trim('ab') }}]", "[{{ ' <a> '|safe|trim }}]", "[{{ 'x'|trim(1) }}]",
    "[{{ 'x'|trim(chars=none) }}]",
])
many("truncate", [
    "{{ text|truncate(20) }}", "{{ text|truncate(20, true) }}", "{{ text|truncate(20, end='…') }}",
    "{{ 'foo bar baz qux'|truncate(9) }}", "{{ 'foo bar baz qux'|truncate(9, True) }}", "{{ 'foo bar baz qux'|truncate(11) }}",
    "{{ 'foo bar baz qux'|truncate(11, False, '...', 0) }}", "{{ text|truncate }}", "{{ 'ab'|truncate(2) }}",
    "{{ text|truncate(2) }}", "{{ text|truncate(10, leeway=-1) }}", "{{ n|truncate }}", "{{ undef|truncate(1) }}",
    "{{ xs|truncate(1) }}", "{{ xs|truncate(1, leeway=0) }}", "{{ html|safe|truncate(10, end='<') }}",
    "{{ 'aaaaaaaaaaaaaaaaaaaaaaaaa'|truncate(10) }}", "{{ 'héllo wörld ünïcode'|truncate(8, leeway=0) }}",
    "{{ text|truncate(10.5) }}",
])
many("unique", [
    "{{ words|unique|list }}", "{{ words|unique(true)|list }}", "{{ users|unique(attribute='city')|map(attribute='name')|list }}",
    "{{ users|unique(attribute='age')|list|length }}", "{{ [1, 1.0, t, 2]|unique|list }}", "{{ [[1], [1]]|unique|list }}",
    "{{ s|unique|join }}", "{{ undef|unique|list }}", "{{ n|unique|list }}", "{{ users|unique(attribute='tags')|list }}",
    "{{ el|unique|list }}", "{{ words|unique|first }}",
])
many("urlencode", [
    "{{ 'a b/c?d=é&'|urlencode }}", "{{ {'a': 'x y', 'b/': 1}|urlencode }}", "{{ pairs|urlencode }}", "{{ n|urlencode }}",
    "{{ nil|urlencode }}", "{{ undef|urlencode }}", "{{ xs|urlencode }}", "{{ [['a', 'b', 'c']]|urlencode }}",
    "{{ ['ab', 'cd']|urlencode }}", "{{ '~_.-!*()'|urlencode }}", "{{ html|safe|urlencode }}",
])
many("urlize", [
    "{{ 'see http://example.com/x?y=1 now'|urlize }}", "{{ 'www.example.org.'|urlize }}", "{{ 'mail me@example.com!'|urlize }}",
    "{{ '(https://a.io/b)'|urlize }}", "{{ 'example.com and foo.bar'|urlize }}", "{{ 'http://1.2.3.4:80/x'|urlize }}",
    "{{ 'http://example.com/abcdefghij'|urlize(10) }}", "{{ 'http://example.com'|urlize(nofollow=true, target='_blank') }}",
    "{{ 'mailto:a@b.co x'|urlize }}", "{{ '<http://x.com>'|urlize }}", "{{ 'http://localhost:8000'|urlize }}",
    "{{ 'plain text & <tags>'|urlize }}", "{{ 'ftp://x.y'|urlize(extra_schemes=['ftp://']) }}",
    "{{ 'https://example.com/(a)'|urlize }}", "{{ n|urlize }}", "{{ 'a@b'|urlize }}",
])
many("wordcount", [
    "{{ s|wordcount }}", "{{ text|wordcount }}", "{{ 'a_b c-d e1 ²'|wordcount }}", "{{ ''|wordcount }}", "{{ n|wordcount }}",
    "{{ undef|wordcount }}", "{{ u|wordcount }}",
])
many("wordwrap", [
    "{{ text|wordwrap(20) }}", "{{ text|wordwrap(20, wrapstring='<br>') }}", "{{ 'supercalifragilistic'|wordwrap(5) }}",
    "{{ 'supercalifragilistic'|wordwrap(5, false) }}", "{{ 'a well-known state-of-the-art thing'|wordwrap(10) }}",
    "{{ 'a well-known state-of-the-art thing'|wordwrap(10, break_on_hyphens=false) }}", "{{ lines|wordwrap(3) }}",
    "{{ 'Look, goof-ball -- use the -b option!'|wordwrap(8) }}", "{{ 'x--y a---b'|wordwrap(2) }}", "{{ text|wordwrap }}",
    "{{ text|wordwrap(0) }}", "{{ ''|wordwrap(0) }}", "{{ n|wordwrap }}", "{{ undef|wordwrap }}", "{{ 'a  b   c'|wordwrap(3) }}",
    "{{ 'aaa-bbb-ccc-ddd'|wordwrap(6) }}", "{{ '---abc'|wordwrap(2) }}", "{{ 'tab\\there  and   more words here'|wordwrap(6) }}",
    "{{ 'héllo wörld ünïcode wörds'|wordwrap(7) }}", "{{ 'one two'|wordwrap(3, wrapstring='<'|safe) }}",
    "{{ 'aa bb'|wordwrap(2, break_on_hyphens=1) }}", "{{ 'ab-cd ef'|wordwrap(3, true, none, 1) }}", "{{ '12-34 x'|wordwrap(3) }}",
])
many("xmlattr", [
    "<p{{ {'class': 'a b', 'id': 'x<y', 'n': none, 'u': undef}|xmlattr }}>", "<p{{ {'a': 1}|xmlattr(false) }}>",
    "<p{{ ed|xmlattr }}>", "<p{{ {'a b': 1}|xmlattr }}>", "<p{{ {'a/': 1}|xmlattr }}>", "<p{{ {1: 1}|xmlattr }}>",
    "<p{{ {'q': html}|xmlattr }}>", "<p{{ {'q': html|safe}|xmlattr }}>", "<p{{ xs|xmlattr }}>", "<p{{ {'a': 1, 'b': 2}|xmlattr }}>",
])
many("select", [
    "{{ xs|select('odd')|list }}", "{{ xs|reject('odd')|list }}", "{{ xs|select|list }}", "{{ [0, 1, '', 'a', nil]|select|list }}",
    "{{ [0, 1, '', 'a', nil]|reject|list }}", "{{ xs|select('divisibleby', 3)|list }}", "{{ xs|select('lessthan', 3)|list }}",
    "{{ xs|select('>', 1)|list }}", "{{ words|select('equalto', 'a')|list }}", "{{ xs|select('nope')|list }}",
    "{{ el|select('nope')|list }}", "{{ msgs|selectattr('role', 'equalto', 'user')|list|length }}",
    "{{ msgs|rejectattr('role', 'equalto', 'user')|map(attribute='role')|list }}", "{{ users|selectattr('active')|map(attribute='name')|list }}",
    "{{ users|rejectattr('active')|map(attribute='name')|list }}", "{{ users|selectattr('tags', 'defined')|list|length }}",
    "{{ users|selectattr('age', 'none')|list|length }}", "{{ users|selectattr()|list }}", "{{ users|selectattr|list }}",
    "{{ tools|selectattr('type', 'equalto', 'code_interpreter')|list }}", "{{ tools|rejectattr('type', 'equalto', 'code_interpreter')|list|length }}",
    "{{ msgs|selectattr('role', 'in', ['user', 'tool'])|list|length }}", "{{ xs|select('in', [1, 2])|list }}",
    "{{ users|selectattr('name', 'upper')|list }}", "{{ users|selectattr('name', 'lower')|list|length }}",
    "{{ undef|select('odd')|list }}", "{{ n|select('odd')|list }}", "{{ xs|select('odd', 1)|list }}",
    "{{ users|selectattr('tags.0', 'equalto', 'x')|list|length }}", "{{ xs|select('ge', 2)|list }}",
    "{% if msgs|selectattr('role', 'equalto', 'nobody') %}yes{% else %}no{% endif %}",
    "{{ xs|select('odd')|length }}", "{{ (xs|select('odd'))[0] }}", "{{ xs|select('sameas', 1)|list }}",
    "{{ words|select('string')|list }}", "{{ mixed|reject('none')|list }}", "{{ mixed|select('number')|list }}",
])

# argument binding: Python's messages for too many / unknown / missing arguments
many("sig", [
    "{{ xs|sort(1, 2, 3, 4) }}", "{{ xs|join(1, 2, 3) }}", "{{ d|dictsort(1, 2, 3, 4) }}", "{{ s|truncate(1, 2, 3, 4, 5) }}",
    "{{ s|wordwrap(1, 2, 3, 4, 5) }}", "{{ xs|sum(1, 2, 3) }}", "{{ xs|unique(1, 2, 3) }}", "{{ s|replace('a') }}",
    "{{ s|replace() }}", "{{ xs|groupby() }}", "{{ s|indent(1, 2, 3, 4) }}", "{{ s|tojson(1, 2, 3, 4, 5) }}",
    "{{ s|urlize(1, 2, 3, 4, 5, 6) }}", "{{ f|round(1, 2, 3) }}", "{{ s|center(1, 2) }}", "{{ xs|min(1, 2, 3) }}",
    "{{ xs|slice() }}", "{{ s|center(width=1, x=2) }}", "{{ s|center(5, width=1) }}", "{{ xs|list(1) }}",
    "{{ s|string(x=1) }}", "{{ s|e(x=1) }}", "{{ n|abs(x=1) }}", "{{ xs|length(x=1) }}", "{{ s|safe(1) }}",
    "{{ d|xmlattr(1, 2) }}", "{{ d|items(1) }}", "{{ s|int(1, 2, 3) }}", "{{ s|float(1, 2) }}", "{{ xs|batch(1, 2, 3) }}",
    "{{ s|attr() }}", "{{ s|attr('a', 'b') }}", "{{ xs|random(1) }}", "{{ s|pprint(1) }}", "{{ s|filesizeformat(1, 2) }}",
    "{{ s|wordcount(1) }}", "{{ s|title(1) }}", "{{ s|urlencode(1) }}", "{{ s|striptags(1) }}", "{{ s|forceescape(1) }}",
    "{{ s|reverse(1) }}", "{{ s|capitalize(1) }}", "{{ s|upper(1) }}", "{{ s|trim(1, 2) }}", "{{ s|default(1, 2, 3) }}",
    "{{ xs|sort(reverse=true, reverse=false) }}", "{{ xs|first(x=1) }}", "{{ xs|last(1) }}",
])

# the filters that read the autoescape setting: xmlattr and urlize return Markup under it, join
# escapes around Markup (t: true, known only at run time)
many("autoescape", [
    "{% autoescape true %}{{ {'a': '<\"'}|xmlattr }}{% endautoescape %}",
    "{{ {'a': '<\"'}|xmlattr }}",
    "{% autoescape t %}{{ {'a': '<\"'}|xmlattr }}{% endautoescape %}",
    "{% autoescape true %}{{ 'see http://x.com <b>'|urlize }}{% endautoescape %}",
    "{{ 'see http://x.com <b>'|urlize }}",
    "{% autoescape t %}{{ 'see http://x.com <b>'|urlize }}{% endautoescape %}",
    "{% autoescape true %}{{ ['<a>', '<b>'|safe]|join('&') }}{% endautoescape %}",
    "{{ ['<a>', '<b>'|safe]|join('&') }}",
    "{% autoescape t %}{{ ['<a>', '<b>'|safe]|join('&') }}{% endautoescape %}",
    "{% autoescape true %}{{ ['<a>', 'b']|join('<'|safe) }}{% endautoescape %}",
    "{{ ['<a>', 'b']|join('<'|safe) }}",
    "{% autoescape t %}{{ ['<a>', 'b']|join('<'|safe) }}{% endautoescape %}",
    "{% autoescape true %}{{ '<a>'|replace('a', '<'|safe) }}{% endautoescape %}",
    "{{ '<a>'|replace('a', '<'|safe) }}",
    "{% autoescape t %}{{ '<a>'|replace('a', '<'|safe) }}{% endautoescape %}",
    "{% autoescape true %}{{ '<a>'|replace('a', 'b') }}{% endautoescape %}",
    "{{ '<a>'|replace('a', 'b') }}",
    "{% autoescape t %}{{ '<a>'|replace('a', 'b') }}{% endautoescape %}",
    "{% autoescape true %}{{ ('<a>'|safe)|replace('a', '<') }}{% endautoescape %}",
    "{{ ('<a>'|safe)|replace('a', '<') }}",
    "{% autoescape t %}{{ ('<a>'|safe)|replace('a', '<') }}{% endautoescape %}",
    "{% autoescape true %}{{ 'x'|replace('x', '<') }}{% endautoescape %}",
    "{{ 'x'|replace('x', '<') }}",
    "{% autoescape t %}{{ 'x'|replace('x', '<') }}{% endautoescape %}",
    "{% autoescape true %}{{ {'a': '<\"'}|xmlattr ~ '<' }}{% endautoescape %}",
    "{{ {'a': '<\"'}|xmlattr ~ '<' }}",
    "{% autoescape t %}{{ {'a': '<\"'}|xmlattr ~ '<' }}{% endautoescape %}",
    "{% autoescape true %}{{ ({'a': '<\"'}|xmlattr) is escaped }}{% endautoescape %}",
    "{{ ({'a': '<\"'}|xmlattr) is escaped }}",
    "{% autoescape t %}{{ ({'a': '<\"'}|xmlattr) is escaped }}{% endautoescape %}",
    "{% autoescape true %}{{ ('a <x>'|urlize) is escaped }}{% endautoescape %}",
    "{{ ('a <x>'|urlize) is escaped }}",
    "{% autoescape t %}{{ ('a <x>'|urlize) is escaped }}{% endautoescape %}",
    "{% autoescape true %}{{ ['a']|join is escaped }}{% endautoescape %}",
    "{{ ['a']|join is escaped }}",
    "{% autoescape t %}{{ ['a']|join is escaped }}{% endautoescape %}",
    "{% autoescape true %}{{ 'a'|replace('a','b') is escaped }}{% endautoescape %}",
    "{{ 'a'|replace('a','b') is escaped }}",
    "{% autoescape t %}{{ 'a'|replace('a','b') is escaped }}{% endautoescape %}",
    "{% autoescape true %}{{ {'k': '<'}|xmlattr }}{% endautoescape %}",
    "{{ {'k': '<'}|xmlattr }}",
    "{% autoescape t %}{{ {'k': '<'}|xmlattr }}{% endautoescape %}",
    "{% autoescape true %}{{ ['<', '>']|join }}{% endautoescape %}",
    "{{ ['<', '>']|join }}",
    "{% autoescape t %}{{ ['<', '>']|join }}{% endautoescape %}",
    "{% autoescape true %}{{ 'www.a.org'|urlize(5) }}{% endautoescape %}",
    "{{ 'www.a.org'|urlize(5) }}",
    "{% autoescape t %}{{ 'www.a.org'|urlize(5) }}{% endautoescape %}",
    # a concat of constants folds to plain str (a Markup part loses its mark), else markup_join
    "{% autoescape true %}{{ '<'|safe ~ '>' }}{% endautoescape %}",
    "{{ '<'|safe ~ '>' }}",
    "{% autoescape t %}{{ '<'|safe ~ '>' }}{% endautoescape %}",
    "{% autoescape true %}{{ '<x>' ~ '<'|safe }}{% endautoescape %}",
    "{{ '<x>' ~ '<'|safe }}",
    "{% autoescape t %}{{ '<x>' ~ '<'|safe }}{% endautoescape %}",
    "{% autoescape true %}{% set y = '<'|safe ~ '>' %}{{ y }}{% endautoescape %}",
    "{% set y = '<'|safe ~ '>' %}{{ y }}",
    "{% autoescape t %}{% set y = '<'|safe ~ '>' %}{{ y }}{% endautoescape %}",
    "{% autoescape true %}{{ ('<'|safe ~ '>')|upper }}{% endautoescape %}",
    "{{ ('<'|safe ~ '>')|upper }}",
    "{% autoescape t %}{{ ('<'|safe ~ '>')|upper }}{% endautoescape %}",
    "{% autoescape true %}{{ ['<'|safe ~ '>'] }}{% endautoescape %}",
    "{{ ['<'|safe ~ '>'] }}",
    "{% autoescape t %}{{ ['<'|safe ~ '>'] }}{% endautoescape %}",
    "{% autoescape true %}{% macro m() %}<{% endmacro %}{{ '<' ~ m() }}{% endautoescape %}",
    "{% macro m() %}<{% endmacro %}{{ '<' ~ m() }}",
    "{% autoescape t %}{% macro m() %}<{% endmacro %}{{ '<' ~ m() }}{% endautoescape %}",
    "{% autoescape true %}{{ '<'|safe + '>' }}{% endautoescape %}",
    "{{ '<'|safe + '>' }}",
    "{% autoescape t %}{{ '<'|safe + '>' }}{% endautoescape %}",
    "{% autoescape true %}{{ ('<'|safe ~ '>') is escaped }}{% endautoescape %}",
    "{{ ('<'|safe ~ '>') is escaped }}",
    "{% autoescape t %}{{ ('<'|safe ~ '>') is escaped }}{% endautoescape %}",
    "{% autoescape true %}{{ '<' ~ ('>'|e) }}{% endautoescape %}",
    "{{ '<' ~ ('>'|e) }}",
    "{% autoescape t %}{{ '<' ~ ('>'|e) }}{% endautoescape %}",
    "{% autoescape true %}{{ '<'|e ~ '<x>' }}{% endautoescape %}",
    "{{ '<'|e ~ '<x>' }}",
    "{% autoescape t %}{{ '<'|e ~ '<x>' }}{% endautoescape %}",
    "{% autoescape true %}{{ ('a' ~ '<'|safe)|length }}{% endautoescape %}",
    "{{ ('a' ~ '<'|safe)|length }}",
    "{% autoescape t %}{{ ('a' ~ '<'|safe)|length }}{% endautoescape %}",
    "{% autoescape true %}{{ '%s'|format('<'|safe) ~ '>' }}{% endautoescape %}",
    "{{ '%s'|format('<'|safe) ~ '>' }}",
    "{% autoescape t %}{{ '%s'|format('<'|safe) ~ '>' }}{% endautoescape %}",
    "{% autoescape true %}{{ ('<' ~ '>')|e }}{% endautoescape %}",
    "{{ ('<' ~ '>')|e }}",
    "{% autoescape t %}{{ ('<' ~ '>')|e }}{% endautoescape %}",
    "{% autoescape true %}{{ 1 ~ '<'|safe }}{% endautoescape %}",
    "{{ 1 ~ '<'|safe }}",
    "{% autoescape t %}{{ 1 ~ '<'|safe }}{% endautoescape %}",
])

# ---------------------------------------------------------------- tests
many("test", [
    "{{ n is odd }}{{ n is even }}{{ neg is odd }}{{ z is even }}{{ 3.0 is odd }}{{ 2.5 is odd }}{{ big is even }}{{ nbig is odd }}",
    "{{ 'a' is odd }}", "{{ '%s' is odd }}", "{{ nil is odd }}", "{{ undef is odd }}", "{{ t is odd }}", "{{ n is odd(1) }}",
    "{{ 9 is divisibleby 3 }}{{ 9 is divisibleby(4) }}{{ 9.0 is divisibleby 1.5 }}{{ -9 is divisibleby -3 }}{{ big is divisibleby 10 }}",
    "{{ 5 is divisibleby 0 }}", "{{ 5.0 is divisibleby 0 }}", "{{ 5 is divisibleby }}", "{{ big is divisibleby big }}",
    "{{ n is defined }}{{ undef is defined }}{{ undef is undefined }}{{ nil is defined }}{{ d.zz is defined }}",
    "{{ nil is none }}{{ z is none }}{{ t is boolean }}{{ 1 is boolean }}{{ t is true }}{{ 1 is true }}{{ no is false }}{{ 0 is false }}",
    "{{ n is integer }}{{ t is integer }}{{ f is integer }}{{ big is integer }}{{ f is float }}{{ n is float }}",
    "{{ n is number }}{{ t is number }}{{ f is number }}{{ big is number }}{{ '1' is number }}{{ nil is number }}",
    "{{ s is string }}{{ html|safe is string }}{{ n is string }}{{ undef is string }}",
    "{{ d is mapping }}{{ xs is mapping }}{{ undef is mapping }}{{ d.items() is mapping }}",
    "{{ xs is sequence }}{{ s is sequence }}{{ d is sequence }}{{ n is sequence }}{{ undef is sequence }}{{ d.keys() is sequence }}{{ (1,) is sequence }}",
    "{{ xs is iterable }}{{ s is iterable }}{{ d is iterable }}{{ n is iterable }}{{ undef is iterable }}{{ d.keys() is iterable }}",
    "{{ undef is callable }}{{ s.upper is callable }}{{ n is callable }}{{ range is callable }}{{ joiner() is callable }}{{ namespace() is callable }}",
    "{% macro m() %}{% endmacro %}{{ m is callable }}{% for i in xs %}{{ loop is callable }}{{ loop is iterable }}{{ loop is sequence }}{% endfor %}",
    "{{ s is lower }}{{ 'ABC' is upper }}{{ 'Abc' is upper }}{{ '1a' is lower }}{{ '12' is lower }}{{ 'ǅ' is upper }}{{ n is lower }}{{ undef is lower }}",
    "{{ 'ΣΑΣ' is upper }}{{ 'ß' is lower }}{{ 'ᾼ' is upper }}",
    "{{ nil is sameas none }}{{ t is sameas true }}{{ 1 is sameas 1 }}{{ 1000 is sameas 1000 }}{{ 'a' is sameas 'a' }}{{ 'abc' is sameas 'abc' }}{{ xs is sameas xs }}{{ undef is sameas undef }}",
    "{{ 1 is sameas true }}{{ 1.0 is sameas 1.0 }}{{ '' is sameas '' }}",
    "{{ html is escaped }}{{ html|e is escaped }}{{ n is escaped }}{{ undef is escaped }}",
    "{{ 1 is in xs }}{{ 5 is in xs }}{{ 'é' is in s }}{{ 'a' is in d }}{{ 'x' is in undef }}{{ '' is in s }}",
    "{{ 1 is in 'abc' }}", "{{ xs is in d }}", "{{ 1 is in n }}", "{{ 1 is in nil }}", "{{ 'a' is in d.keys() }}{{ 2 is in d.values() }}{{ ('a', 2) is in d.items() }}",
    "{{ 1 is eq 1 }}{{ 1 is equalto 1.0 }}{{ 1 is == t }}{{ 1 is ne 2 }}{{ 1 is != 1 }}{{ 'a' is eq 'a'|safe }}",
    "{{ 1 is lt 2 }}{{ 1 is lessthan 1 }}{{ 1 is < 2 }}{{ 2 is le 2 }}{{ 2 is <= 1 }}{{ 3 is gt 2 }}{{ 3 is greaterthan 3 }}{{ 3 is > 4 }}{{ 3 is ge 3 }}{{ 3 is >= 4 }}",
    "{{ 1 is lt 'a' }}", "{{ 'a' is ge 1 }}", "{{ undef is lt 1 }}", "{{ 1 is eq }}", "{{ 1 is eq(1, 2) }}", "{{ 1 is eq(b=1) }}",
    "{{ 'upper' is filter }}{{ 'tojson' is filter }}{{ 'nope' is filter }}{{ 1 is filter }}{{ 'odd' is test }}{{ '==' is test }}{{ 'nope' is test }}",
    "{{ xs is filter }}", "{{ undef is filter }}", "{{ n is defined(1) }}", "{{ n is odd(x=1) }}", "{{ n is callable(1) }}",
    "{{ [1, 2] is in [[1, 2]] }}{{ nan is eq nan }}{{ (1, 2) is eq [1, 2] }}",
    "{{ 'a' is lower }}{{ 'A' is lower }}{{ 'a b' is lower }}{{ '' is lower }}{{ '' is upper }}",
])

# ---------------------------------------------------------------- % formatting
PCT = [
    ("'%s' % 1", None), ("'%s %s' % (1, 'a')", None), ("'%r' % 'x'", None), ("'%r' % \"it's\"", None), ("'%a' % 'é'", None),
    ("'%d' % 3.9", None), ("'%d' % -3.9", None), ("'%i' % t", None), ("'%d' % big", None), ("'%x' % 255", None), ("'%X' % 255", None),
    ("'%o' % 8", None), ("'%#x' % 255", None), ("'%#X' % 255", None), ("'%#o' % 8", None), ("'%#o' % 0", None), ("'%x' % -255", None),
    ("'%x' % big", None), ("'%X' % nbig", None), ("'%o' % big", None), ("'%5d|' % 42", None), ("'%-5d|' % 42", None), ("'%05d' % -42", None),
    ("'%+d' % 5", None), ("'% d' % 5", None), ("'%+05d' % 5", None), ("'%.3d' % 5", None), ("'%#.3x' % 5", None), ("'%#07x' % 255", None),
    ("'%+#07x' % 255", None), ("'%#-7x|' % 255", None), ("'%f' % 3.14159", None), ("'%.2f' % 2.675", None), ("'%e' % 12345.678", None),
    ("'%E' % 1e-10", None), ("'%g' % 1e-5", None), ("'%g' % 123456789.0", None), ("'%G' % 1e20", None), ("'%#g' % 1.0", None),
    ("'%.0f' % 0.5", None), ("'%.0f' % 1.5", None), ("'%010.3f' % -3.14159", None), ("'%-10.2e|' % 1234.5", None), ("'%f' % n", None),
    ("'%f' % big", None), ("'%f' % (10**400)", None), ("'%f' % 'x'", None), ("'%f' % nil", None), ("'%d' % 'x'", None), ("'%d' % nil", None),
    ("'%x' % 1.5", None), ("'%c' % 65", None), ("'%c' % 'é'", None), ("'%c' % 'ab'", None), ("'%c' % -1", None), ("'%c' % 1.5", None),
    ("'%5c|' % 'x'", None), ("'%s' % nil", None), ("'%s' % undef", None), ("'%r' % undef", None), ("'%d' % undef", None),
    ("'%s' % xs", None), ("'%s' % d", None), ("'%s' % (xs,)", None), ("'%(a)s-%(b)05.1f' % {'a': 'x', 'b': 2.25}", None),
    ("'%(a)s' % {'b': 1}", None), ("'%(a)s' % xs", None), ("'%(a)s %s' % {'a': 1}", None), ("'%(a' % {}", None),
    ("'%s %s' % (1,)", None), ("'%s' % (1, 2)", None), ("'abc' % 5", None), ("'abc' % xs", None), ("'abc' % d", None), ("'abc' % ()", None),
    ("'abc' % undef", None), ("'abc' % 'x'", None), ("'%' % 1", None), ("'%y' % 1", None), ("'%5%' % 1", None), ("'%%' % ()", None),
    ("'100%%' % ()", None), ("'%*d' % (5, 3)", None), ("'%-*d|' % (5, 3)", None), ("'%*d|' % (-5, 3)", None), ("'%.*f' % (2, 3.14159)", None),
    ("'%*s' % ('a', 1)", None), ("'%ld %hd %Lf' % (1, 2, 3.0)", None), ("'%5s|%-5s|' % ('é', 'ü')", None), ("'%.2s' % 'héllo'", None),
    ("'%-8.3s|' % 'héllo'", None), ("'%05s' % 'ab'", None), ("'%+5s' % 'ab'", None), ("'%s' % (html|safe)", None),
    ("('<%s>'|safe) % html", None), ("('<%s>'|safe) % (html|safe)", None), ("('%r'|safe) % html", None), ("('%s %s'|safe) % ('<', 1)", None),
    ("('%(a)s'|safe) % {'a': '<'}", None), ("('%s'|safe) % xs", None), ("('%d'|safe) % 5", None), ("('%x'|safe) % 5", None),
    ("('%c'|safe) % 'a'", None), ("('%.1f'|safe) % 2.25", None), ("'%s' % (html|safe) ~ '<'", None), ("'%i' % 1e20", None),
    ("'%d' % (10**30)", None), ("'%20.10e|' % -0.0", None), ("'%f' % -0.0", None), ("'%+f %+f' % (nan, inf)", "nan"),
    ("'%05f|%-6f|%F|%E' % (inf, -inf, inf, nan)", "nan"), ("'%.3g|%.10g|%g' % (0.0001234, 1/3, 1e16)", None),
    ("'%s' % 1e16", None), ("'%s' % 1.0", None), ("'%r' % 0.1", None), ("'%s' % -0.0", None), ("'%#.0f|%#.0e' % (1, 1)", None),
    ("'%c' % 1114112", None), ("'%c' % big", None), ("'%x' % t", None), ("'%.100f' % 1", None), ("'%s' % (1, 2)[0]", None),
]
for expr, special in PCT:
    if special == "nan":
        add("pct", "{% set xnan = nanstr|float %}{% set xinf = infstr|float %}{{ " + expr.replace("nan", "xnan").replace("inf", "xinf") + " }}")
    else:
        add("pct", "{{ " + expr + " }}")

# ---------------------------------------------------------------- str.format
FMT = [
    "'{}'.format()", "'{}-{}'.format(1, 2)", "'{1}{0}'.format('a', 'b')", "'{0}{}'.format(1, 2)", "'{}{0}'.format(1, 2)",
    "'{a}'.format(a=1)", "'{a}'.format(b=1)", "'{5}'.format(1)", "'{0.x}'.format(1)", "'{.x}'.format(1)", "'{0.}'.format(1)",
    "'{0[a]}'.format(d)", "'{0[0]}'.format(xs)", "'{0[1]}'.format('ab')", "'{0[zz]}'.format(d)", "'{0[a]x}'.format(d)", "'{0[}'.format(1)",
    "'{0.a}'.format(d)", "'{0[b]:>4}'.format(d)", "'{0.real}'.format(1)", "'{0!r}'.format('x')", "'{0!s}'.format(1)", "'{0!a}'.format('é')",
    "'{0!x}'.format(1)", "'{0!}'.format(1)", "'{0!}x'.format(1)", "'{0!r:>6}'.format('x')", "'{{}}'.format()", "'{{{0}}}'.format(1)",
    "'}'.format()", "'{'.format()", "'a{0'.format(1)", "'{0:x'.format(1)", "'{x{}}'.format()", "'{:{}}'.format('a', 5)",
    "'{:{}{}}'.format('a', '>', 5)", "'{:{:{}}}'.format('a', 1, 2)", "'{0:{1}}'.format(3.14159, '.2f')", "'{:05}'.format('ab')",
    "'{:<5}|{:>5}|{:^5}|{:^6}'.format('a', 'b', 'c', 'd')", "'{:*^7}'.format('é')", "'{:é^5}'.format('x')", "'{:.2}'.format('héllo')",
    "'{:=5}'.format('a')", "'{:+}'.format('a')", "'{:#}'.format('a')", "'{:z}'.format('a')", "'{:,s}'.format('a')", "'{:d}'.format('a')",
    "'{:s}'.format(1)", "'{:x}'.format(1.5)", "'{:5}'.format(nil)", "'{}'.format(nil)", "'{:5}'.format(xs)", "'{}'.format(xs)",
    "'{}'.format(undef)", "'{:5}'.format(undef)", "'{}'.format(t)", "'{:>5}'.format(t)", "'{:d}'.format(t)", "'{:.2f}'.format(t)",
    "'{:x}'.format(t)", "'{:s}'.format(t)", "'{:d}|{:5d}|{:<5d}|{:^5d}|{:05d}|{:+d}|{: d}'.format(42, 42, 42, 42, -42, 42, 42)",
    "'{:b}|{:o}|{:x}|{:X}|{:#b}|{:#o}|{:#x}|{:#X}'.format(10, 10, 255, 255, 10, 10, 255, 255)", "'{:,}|{:_}|{:_x}|{:_b}'.format(1234567, 1234567, 3054198966, 37)",
    "'{:010,}|{:08,}|{:07,}|{:06,}|{:05,}'.format(1234, 1234, 1234, 1234, 1234)", "'{:x=10,}|{:=+10,}|{:0=10}'.format(1234, 1234, -5)",
    "'{:,}'.format(big)", "'{:x}'.format(big)", "'{:_o}'.format(nbig)", "'{:e}'.format(big)", "'{:c}'.format(65)", "'{:c}'.format(1114112)",
    "'{:+c}'.format(65)", "'{:#c}'.format(65)", "'{:5c}|{:<3c}|'.format(233, 66)", "'{:5.2d}'.format(1)", "'{:zd}'.format(1)", "'{:,n}'.format(1)",
    "'{:n}'.format(1234567)", "'{:,c}'.format(65)", "'{:_s}'.format('a')", "'{:,_}'.format(1)", "'{:_,}'.format(1)", "'{:,,}'.format(1)",
    "'{:xx}'.format(1)", "'{:.}'.format(1.0)", "'{:q}'.format(1)", "'{:%}'.format(0.5)", "'{:.1%}'.format(1)", "'{:e}'.format(12)",
    "'{}|{:}|{:g}|{:.3}|{:.0}|{:.1}|{:10}'.format(1e16, 1e16, 1e16, 1.0, 1.5, 1000.0, 1.5)", "'{:f}|{:.2f}|{:F}|{:e}|{:E}|{:g}|{:G}'.format(f, 2.675, 1e20, 0.000123, 1e-10, 1e-5, 1e20)",
    "'{:,}|{:,.2f}|{:010,.2f}|{:,.2%}'.format(1234.5, -1234.567, 1234.5, 1234.5)", "'{:z.1f}|{:z}|{:z.0f}'.format(-0.04, -0.0, -0.4)",
    "'{:+}|{: }|{:-}'.format(1.5, 1.5, -1.5)", "'{:08.3f}|{:<08.3f}|{:^9.2f}'.format(-3.14159, 3.14159, 2.5)", "'{:#.0f}|{:#g}|{:#.3g}'.format(1.0, 2.0, 1.0)",
    "'{}|{:f}|{:010}|{:+}'.format(inf, inf, inf, nan)", "'{:.3n}|{:n}'.format(1234.5, 0.00001)", "'{:,.0f}'.format(1e22)", "'{:.20f}'.format(0.1)",
    "'{:.2e}|{:10.3E}'.format(-0.0, 12345.6789)", "'{:.0e}|{:.0%}'.format(2.5, 0.125)", "'{:g}|{:g}|{:g}'.format(100000.0, 1000000.0, 1e-4)",
    "'{0:>{1}}'.format('x', 4)", "'{:>{w}.{p}f}'.format(3.14159, w=10, p=2)", "'{0}{1}{0}'.format('a', 'b')", "'{:{}}{}'.format(1, 3, 2)",
    "('<{}>'|safe).format(html)", "('<{}>'|safe).format(html|safe)", "('{!r}'|safe).format(html)", "('{:5}'|safe).format('<')",
    "('{:5}'|safe).format(html|safe)", "('{!s}'|safe).format(html|safe)", "'{}'.format(html|safe)", "'{:>30}'.format(html|safe)",
    "'{}'.format(html|safe) ~ '<'", "'{0.role}-{0[content]}'.format(msgs[1])", "'{m[1][role]}'.format(m=msgs)", "'{0.x.y}'.format(d)",
    "'{:99999999999999999999999}'.format(1)", "'{:.99999999999999999999}'.format(1.0)", "'{0:{1}}'.format(1, 'x' * 2)",
    "'{}'.format(1.0)", "'{:.1f}'.format(0.05)", "'{:.1f}'.format(0.25)", "'{:.2f}'.format(1e300)", "'{:,}'.format(-1e16)",
    "'{:,d}'.format(-1234)", "'{:_d}'.format(1234)", "'{:#_x}'.format(65535)", "'{:#010_b}'.format(5)", "'{:^+9,}'.format(12345)",
    "'{:0>5}'.format(-1)", "'{:0<5}'.format(-1)", "'{:0^5}'.format(-1)", "'{:%>8.2%}'.format(0.5)",
]
for expr in FMT:
    if "inf" in expr or "nan" in expr:
        add("fmt", "{% set xnan = nanstr|float %}{% set xinf = infstr|float %}{{ " + expr.replace("nan", "xnan").replace("inf", "xinf") + " }}")
    else:
        add("fmt", "{{ " + expr + " }}")

# The int and str shortcuts of join, min/max, map('string') and `in`, and the
# table-driven case mapping: each beside the general path it must agree with.
INTS = [0, -1, 9, 10, -10, 99, 100, 12345, -9223372036854775808, 9223372036854775807]
add("fast", "{{ xs|join(',') }}|{{ xs|join }}|{{ xs|join('<>') }}", {"xs": INTS})
add("fast", "{{ xs|join('-') }}", {"xs": [1, "a", -2, "é", 3.5, True, None, [1], "", 0]})
add("fast", "{{ (xs|map('e')|list + ['<'])|join(',') }}", {"xs": ["<a>", 1]})
add("fast", "{{ xs|join(',' |safe) }}|{{ ['<', '>'|safe, 3]|join('&') }}", {"xs": [1, "<", -3]})
add("fast", "{{ xs|max }} {{ xs|min }}", {"xs": INTS})
add("fast", "{{ xs|max }} {{ xs|min }}", {"xs": [1, 5, 5.0, 2, True, -1, -1.0]})
add("fast", "{{ xs|max }} {{ xs|min }}", {"xs": [3, 7, 7.5, 2.5]})
add("fast", "{{ xs|max }}", {"xs": [3, 7, "a"]})
add("fast", "{{ xs|max(attribute='0') }} {{ xs|min(attribute=0) }}", {"xs": [[1, 2], [3, 0], [-1, 4]]})
add("fast", "{{ xs|min(case_sensitive=true) }} {{ ['b', 'A', 'a']|min }} {{ ['b', 'A', 'a']|max }}", {"xs": [2, 1, 3]})
add("fast", "{{ xs|map('string')|list }} {{ xs|map('string')|join('|') }}", {"xs": INTS})
add("fast", "{{ [1.5, True, 'x', none]|map('string')|list }}", {})
add("fast", "{{ 5 in xs }} {{ 1 in xs }} {{ 2 in xs }} {{ 7 in xs }} {{ 0 in xs }}", {"xs": [True, 2.0, "5", 7, None]})
add("fast", "{{ 5 in xs }} {{ 3 in xs }} {{ 'a' in xs }} {{ -1 in xs }}", {"xs": INTS + [3.0, "a"]})
add("fast", "{{ s.upper() }}|{{ s.lower() }}|{{ s.casefold() }}|{{ s|upper }}|{{ s|lower }}",
    {"s": "Straße ΣΑΣ ὈΔΥΣΣΕΎΣ ǅǆǄ İı ŉ ΐ Ωmega ﬃ АБВгде ÀÉÎÕÜàéîõüÿ abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ @[`{"})
add("fast", "{{ s.upper() }}|{{ s.lower() }}", {"s": "aΣ bΣc Σ .Σ. ΑΣ' ΑΣ'Α ΑΣ\u0301"})
add("fast", "{{ (s * 9).upper() }}|{{ (s * 9).lower() }}", {"s": "aBcDeFgHé"})


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unit", "filters.jsonl")
    with open(out, "w", encoding="utf-8") as fh:
        for row in ROWS:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(ROWS)} rows to {out}")


if __name__ == "__main__":
    main()
