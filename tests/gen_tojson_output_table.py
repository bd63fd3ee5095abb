#!/usr/bin/env python3
"""Writes tests/unit/tojson_output.jsonl: `{{ x|tojson(...) }}` written
straight to the output through one buffer a render reuses (src/engine/
interp.c: output_tojson), and the places that must take the filter's own
str instead. Each row checks that nothing Jinja2 shows changes:

- tojson_output-NNN: values read from the context and made in the template,
  every option (positional and keyword), whitespace control, many dumps in a
  loop whose sizes grow past the buffer's first capacity and shrink again
  (each dump starts from empty), outputs inside macros, call blocks, block
  sets and filter blocks (captured text), a dump inside another (tojson of
  tojson), filters before and after tojson, autoescape (escaped: not this
  path), and the errors: an unknown or repeated keyword, too many positional
  arguments, values json.dumps refuses, a raising operand.

No expected output is stored: tests/run_tests.sh renders every row with the
reference and with chatfmt and compares. Add rows at the END so ids stay
stable. Regenerate with:
    python3 tests/gen_tojson_output_table.py
"""
from unit_table import write_table

BIG = {"name": "tool_" + "x" * 40, "description": "d" * 1500, "parameters": {
    "type": "object", "properties": {"k%d" % i: {"type": "string", "enum": ["a", "b"]} for i in range(30)}}}
VALUES = {"d": {"b": [1, 2.5, None, True], "a": "é \"q\" \\ \n \u2028 😀"}, "l": [3, "x", [], {}],
          "s": "<b>&'\"", "n": None, "i": -12, "f": 1e100, "big": BIG, "small": {"a": 1}}

ROWS = [
    ("{{ d|tojson }}|{{ l|tojson }}|{{ s|tojson }}|{{ n|tojson }}|{{ i|tojson }}|{{ f|tojson }}", VALUES),
    ("{{ {'z': [1, (2, 3)], 'a': none, 'u': 'é'}|tojson }}|{{ [1.0, -0.0, 10**20]|tojson }}|{{ 'a\tb'|tojson }}", {}),
    ("{{ d|tojson(indent=2) }}|{{ d|tojson(sort_keys=true) }}|{{ d|tojson(ensure_ascii=true) }}"
     "|{{ d|tojson(separators=(',', ':')) }}|{{ d|tojson(indent='\\t') }}|{{ d|tojson(true, 1, none, true) }}", VALUES),
    ("a {{- d|tojson -}} b\n{{ l|tojson }}  \n  {{- s|tojson }}", VALUES),
    # sizes past the first capacity, then small again: each dump from empty
    ("{% for x in [small, big, small, l, big, n, s] %}{{ x|tojson }};{% endfor %}", VALUES),
    ("{% for x in [big, small] %}{{ x|tojson(ensure_ascii=true) }}/{{ x|tojson }};{% endfor %}", VALUES),
    # captured outputs: a macro, a call block, a block set, a filter block
    ("{% macro m(x) %}{{ x|tojson }}{% endmacro %}[{{ m(d) }}]{{ m(l)|length }}{% set t = m(s) %}{{ t ~ t }}",
     VALUES),
    ("{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}{{ small|tojson }}{{ big|tojson|length }}{% endcall %}",
     VALUES),
    ("{% set b %}{{ d|tojson }}{{ l|tojson }}{% endset %}{{ b|length }}:{{ b }}", VALUES),
    ("{% filter upper %}{{ d|tojson }}{% endfilter %}|{% filter trim %}  {{ big|tojson }}  {% endfilter %}|{% filter replace('a', 'A') %}{{ l|tojson }}{% endfilter %}", VALUES),
    # a dump of a dump, filters before and after
    ("{{ (d|tojson)|tojson }}|{{ l|reverse|list|tojson }}|{{ d|tojson|length }}|{{ d|dictsort|tojson }}"
     "|{{ (l|tojson).upper() }}", VALUES),
    # autoescape: escaped, through the filter's str
    ("{% autoescape true %}{{ s|tojson }}|{{ d|tojson }}{% endautoescape %}|{{ s|tojson }}", VALUES),
    ("{% autoescape false %}{{ s|tojson }}{% endautoescape %}", VALUES),
    # errors
    ("{{ d|tojson(foo=1) }}", VALUES),
    ("{{ d|tojson(true, ensure_ascii=false) }}", VALUES),
    ("{{ d|tojson(1, 2, 3, 4, 5) }}", VALUES),
    ("{{ d|tojson(indent='x', separators=3) }}", VALUES),
    ("ok{{ namespace(a=1)|tojson }}", {}),
    ("ok{{ missing|tojson }}", {}),
    ("ok{{ d.b.nope.deeper|tojson }}", VALUES),
    ("ok{{ (1 / 0)|tojson }}", {}),
    ("{% for x in [small, range(2)] %}{{ x|tojson }};{% endfor %}", VALUES),
    # tojson(ensure_ascii=...) alone (src/engine/filters.c: filter_tojson_into takes it without
    # binding by name): every kind of truth value, in the output and captured, and the calls
    # it must not take: another keyword with it, a positional, a name that only starts alike
    ("{{ d|tojson(ensure_ascii=false) }}|{{ d|tojson(ensure_ascii=true) }}|{{ d|tojson(ensure_ascii=0) }}"
     "|{{ d|tojson(ensure_ascii='') }}|{{ d|tojson(ensure_ascii='x') }}|{{ d|tojson(ensure_ascii=[1]) }}"
     "|{{ d|tojson(ensure_ascii=none) }}|{{ d|tojson(ensure_ascii=missing) }}|{{ d|tojson(ensure_ascii=small) }}", VALUES),
    ("{% set t = d|tojson(ensure_ascii=false) %}{{ t }}|{{ l|tojson(ensure_ascii=true)|length }}"
     "|{% for x in [big, s, n, i, f] %}{{ x|tojson(ensure_ascii=false) }};{% endfor %}", VALUES),
    ("{{ d|tojson(ensure_ascii=false, sort_keys=true) }}|{{ d|tojson(sort_keys=true, ensure_ascii=true) }}"
     "|{{ d|tojson(indent=1, ensure_ascii=false) }}", VALUES),
    ("{{ d|tojson(true, ensure_ascii=false) }}", VALUES),
    ("{{ d|tojson(ensure_asci=false) }}", VALUES),
    ("{{ d|tojson(ensure_ascii_=false) }}", VALUES),
    ("ok{{ namespace(a=1)|tojson(ensure_ascii=false) }}", {}),
    ("ok{{ missing|tojson(ensure_ascii=false) }}", {}),
    ("ok{{ d|tojson(ensure_ascii=(1 / 0)) }}", VALUES),
    ("{% autoescape true %}{{ s|tojson(ensure_ascii=false) }}{% endautoescape %}", VALUES),
    # keys of dicts built in the template (no JSON text kept: src/engine/json.c writes a short
    # plain key with its separators in place): empty, to escape, non-ASCII, both sides of the
    # 16-byte scan, not str; first, middle and last; every option that changes separators
    ("{% set k = {'': 1, 'a\"b': 2, 'tab\there': 3, 'é': 'é', 'k' * 15: 'v', 'k' * 16: 'w', 'x' * 40: [],"
     " 7: 'i', none: 0, false: 1, 2.5: 'f', '\u2028': 'ls', 'back\\\\': {'': {}}, 'z': {'y': 'x'}} %}"
     "{{ k|tojson }}|{{ k|tojson(ensure_ascii=true) }}|{{ k|tojson(separators=(',', ':')) }}"
     "|{{ k|tojson(indent=1) }}|{{ k|tojson(separators=(', ', ':')) }}|{{ k|tojson(separators=(';', ': ')) }}", {}),
    ("{% set k = {'b': 1, '': 2, 'a\"': {'y': 1, 'x': [{'é': 1}, {}]}, 'k' * 16: 'w'} %}"
     "{{ k|tojson(sort_keys=true) }}|{{ k|tojson(sort_keys=true, ensure_ascii=true) }}"
     "|{{ [k, {}, [k]]|tojson }}|{{ {'only': k}|tojson }}", {}),
]


def rows():
    for i, (text, ctx) in enumerate(ROWS, 1):
        yield {"id": "tojson_output-%03d" % i, "template_text": text, "context": ctx, "raw": True}
    # chat mode: a request's tools, as the seeds write them
    yield {"id": "tojson_output-chat-001", "raw": False, "template_text":
           "{%- for tool in tools %}{{- '\\n' }}{{- tool | tojson }}{%- endfor %}"
           "{% for m in messages %}{% for tc in m.tool_calls or [] %}{{ tc.function.arguments|tojson }}"
           "{{ tc.function|tojson(ensure_ascii=False) }}{% endfor %}{% endfor %}",
           "context": {"tools": [{"type": "function", "function": BIG}, {"type": "function", "function": {
               "name": "f", "parameters": {"type": "object"}}}],
               "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [
                   {"type": "function", "function": {"name": "f", "arguments": {"q": "é", "n": [1, 2]}}}]}]}}


def main():
    write_table("tojson_output", rows())


if __name__ == "__main__":
    main()
