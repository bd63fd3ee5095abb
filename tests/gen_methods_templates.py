#!/usr/bin/env python3
"""Writes tests/unit/methods.jsonl: raw-mode templates calling Python
methods the way chat templates do (same row format as tests/unit/lang.jsonl:
no expected output stored; the oracle renders each row live).

Complements tests/test_methods.c (direct calls) with the interpreter's side:
attribute lookup, keyword arguments, Markup from |safe/|e, printing results
(dict views, tuples), SecurityError for mutating methods.

Row ids are meth-NNN in order; add new rows at the END so ids stay stable.
Regenerate with:  python3 tests/gen_methods_templates.py
"""
import json
import os
import re

CTX = {
    "s": "  Héllo Wörld  ",
    "msg": {"role": "assistant", "content": "<think>\nplan\n</think>\n\nAnswer ΣΑΣ here"},
    "xs": [3, 1, 2, 1],
    "d": {"b": 1, "a": [1, 2], "c": None},
    "sig": "ΌΣΟΣ ΣΑΣ",
    "tool": "functions.get_weather:0",
    "text": "a\r\nb\u2028c\x85d",
}

ROWS = [
    "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ s.strip(' H') }}",
    "{{ s.split() }}|{{ s.split(' ') }}|{{ s.rsplit(None, 1) }}|{{ s.split(maxsplit=1) }}",
    "{{ msg.content.split('</think>')[-1].lstrip('\\n') }}",
    "{{ msg.content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}",
    "{% if msg.content.startswith('<think>') %}T{% endif %}{{ msg.content.endswith(('here', 'x')) }}",
    "{{ msg.content.startswith('think', 1) }}{{ msg.content.find('Σ') }}{{ msg.content.rfind('Σ') }}",
    "{{ s.upper() }}|{{ s.lower() }}|{{ s.title() }}|{{ s.capitalize() }}|{{ s.swapcase() }}",
    "{{ sig.lower() }}|{{ sig.casefold() }}|{{ sig.title() }}|{{ 'ß'.upper() }}|{{ 'ﬃ'.title() }}",
    "{{ s.replace('l', 'L') }}|{{ s.replace('l', 'L', 1) }}|{{ 'abc'.replace('', '-') }}",
    "{{ tool.split('.')[1].split(':')[0] }}|{{ tool.partition(':') }}|{{ tool.rpartition('.') }}",
    "{{ ', '.join(['a', 'b']) }}|{{ '-'.join(d) }}|{{ ''.join(xs|map('string')) }}",
    "{{ ', '.join(xs) }}",
    "{{ d.items() }}|{{ d.keys() }}|{{ d.values() }}|{{ d.items()|list }}",
    "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}",
    "{{ d.get('a') }}|{{ d.get('z') }}|{{ d.get('z', 'dflt') }}|{{ d.copy() }}",
    "{{ xs.index(1) }}|{{ xs.count(1) }}|{{ xs.copy() }}|{{ (1, 2).index(2) }}",
    "{{ xs.index(9) }}",
    "{{ xs.append(4) }}",
    "{% set _ = d.update({'x': 1}) %}",
    "[{{ xs.append }}]",
    "{{ xs.pop() }}",
    "{{ s.center(21, '*') }}|{{ 'ab'.ljust(5, '.') }}|{{ 'ab'.rjust(5) }}|{{ '-7'.zfill(5) }}",
    "{{ s.center(21, 'ab') }}",
    "{{ text.splitlines() }}|{{ text.splitlines(True) }}|{{ text.splitlines(keepends=True) }}",
    "{{ 'a\\tbc\\td'.expandtabs() }}|{{ 'a\\tb'.expandtabs(tabsize=2) }}",
    "{{ 'x'.isalpha() }}{{ '١٢'.isdecimal() }}{{ '½'.isnumeric() }}{{ 'a_1'.isidentifier() }}"
    "{{ 'Ab Cd'.istitle() }}{{ ' '.isspace() }}{{ 'é'.isascii() }}",
    "{{ '{} and {x}'.format(1, x='y') }}|{{ '{x}'.format_map({'x': 2}) }}",
    "{{ ('<b>%s</b>'|safe).replace('%s', '<i>') }}|{{ ('<b>'|safe).join(['<', '>']) }}",
    "{{ ('<p>{}</p>'|safe).format('<x>') }}|{{ ('a<b'|e).split('&') }}",
    "{{ ('<b>'|safe).upper() }}|{{ ('<b> '|safe).strip() }}|{{ ('x'|safe).center(5, '-') }}",
    "{{ ('x'|safe).center(5, '<') }}",
    "{{ 'a'.removeprefix('a') }}|{{ 'ab'.removesuffix('b') }}|{{ 'abab'.count('ab') }}",
    "{{ s.split(sep=' ', maxsplit=2) }}",
    "{{ s.split(sep=' ', foo=2) }}",
    "{{ s.startswith(prefix='a') }}",
    "{{ s.index('zzz') }}",
    "{{ ''.join([1]) }}",
    "{{ 'a'.split('') }}",
    "{{ 2.0.is_integer() }}{{ 2.5.is_integer() }}",
    "{{ s.nosuchmethod() }}",
    "[{{ s.nosuchmethod }}]",
    "{{ d.pop }}|{{ d.items is defined }}",
    "{{ msg.content.strip().split('\\n\\n') }}",
    "{{ sig.split('Σ') }}|{{ sig.rsplit('Σ', 1) }}|{{ sig.strip('Σ') }}",
    # a name with a NUL after a method's name (fuzz: read past the method table's strings)
    "{{ s['upper\\x00zz'] is defined }}|{{ [1]['pop\\x00'] is defined }}|{{ d['items\\x00x'] is defined }}",
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "unit", "methods.jsonl"), "w", encoding="utf-8") as f:
        for i, text in enumerate(ROWS, 1):
            ctx = {k: v for k, v in CTX.items() if re.search(r"\b%s\b" % k, text)}
            row = {"id": "meth-%03d" % i, "template_text": text, "context": ctx, "raw": True}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
