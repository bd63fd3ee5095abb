#!/usr/bin/env python3
"""Generate tests/data/json_cases.jsonl for tests/test_json.c.

loads cases: the document as hex bytes; the expectation is Python's
json.loads(bytes) -> repr(value), or its exception class, message and byte
offset. A few documented deviations (chatfmt is strict RFC 8259 and cannot
hold lone surrogates) carry chatfmt's own message, marked "deviation".
dumps cases: a value in the tagged form of tests/gen_value_cases.py plus
json.dumps options; the expectation is json.dumps' output or exception.
Usage: python3 tests/gen_json_cases.py > tests/data/json_cases.jsonl
"""
import itertools
import json
import sys

from gen_value_cases import F, T, dec


def emit(case):
    sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")


def loads_case(doc):
    data = doc.encode("utf-8", "surrogatepass") if isinstance(doc, str) else doc
    case = {"op": "loads", "hex": data.hex()}
    try:
        case["expect"] = repr(json.loads(data))
    except json.JSONDecodeError as e:
        text = e.doc
        bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        offset = bom + len(text[:e.pos].encode("utf-8", "surrogatepass"))
        case["expect"] = {"error_type": "JSONDecodeError", "msg": str(e), "offset": offset}
    except UnicodeDecodeError as e:
        case["expect"] = {"error_type": "UnicodeDecodeError", "msg": str(e), "offset": e.start}
    emit(case)


def deviation(doc, error_type, msg, offset):
    data = doc.encode() if isinstance(doc, str) else doc
    emit({"op": "loads", "hex": data.hex(), "deviation": True,
          "expect": {"error_type": error_type, "msg": msg, "offset": offset}})


VALID = [
    'null', 'true', 'false', '0', '-0', '1', '-1', '42', ' \t\r\n 7 \n', '9223372036854775807',
    '9223372036854775808', '-9223372036854775808', '-9223372036854775809',
    '123456789012345678901234567890', '-123456789012345678901234567890', '1.0', '-0.0', '0.5',
    '1e5', '1E5', '1e+5', '1e-7', '-1.5e300', '1e400', '-1e400', '2.5E-3', '0.1', '100000000000000000000.0',
    '""', '"a"', '"\\"\\\\\\/\\b\\f\\n\\r\\t"', '"\\u0041\\u00e9\\u20ac"', '"\\ud83d\\ude00"',
    '"\\uD83D\\uDE00x"', '"é日本😀"', '"\\u0000"', '"\u007f"', '"a\\nb"', '"mixed é \\u00e9 \\n 😀"',
    '[]', '[ ]', '{}', '{ }', '[1,2,3]', '[1, "a", null, true, [false, {}]]',
    '{"a": 1, "b": [1, 2], "c": {"d": null}}', '{"a":1,"a":2}', '{"b":1,"a":2,"b":3}',
    # repeated keys in dicts of up to 8 pairs and past them: known keys, long keys,
    # a key spelled with an escape, and sets of 8 keys (some of whose hashes share bits)
    '{"role": "user", "content": "x", "role": "tool"}', '{"a": 1, "\\u0061": 2, "b": 3}',
    '{"add_generation_prompt": true, "x": 1, "add_generation_prompt": false}',
    '{"a_key_longer_than_15": 1, "b": 2, "a_key_longer_than_15": 3, "b": 4}',
    '{"é": 1, "e": 2, "\\u00e9": 3}', '{"a": 1, "a": 2, "a": 3, "a": 4, "a": 5, "a": 6, "a": 7, "a": 8}',
] + ['{' + ', '.join('"%s": %d' % (k, i) for i, k in enumerate(keys)) + '}' for keys in (
    [c for c in "abcdefgh"], [c for c in "ijklmnop"], ["k%d" % i for i in range(8)],
    [c for c in "abcdefga"], ["k%d" % (i % 5) for i in range(8)], ["k%d" % (i % 7) for i in range(9)],
    ["content", "role", "name", "tool_calls", "content", "type", "id", "role"],
)] + [
    '  {"messages": [{"role": "user", "content": "Hi \\"there\\""}]}  ',
    '{"k\\u00e9y": "v", "": 0}', '[[[[[[[[[[]]]]]]]]]]', '[1e0, 0e0, -0e-0, 0.0e+00]',
    '\ufeff{"bom": true}', '{"nums": [0, -0, 0.0, -0.0, 1, -1]}',
    '"' + 'x' * 5000 + '"', '[' + ','.join(str(i) for i in range(3000)) + ']',
    '{' + ','.join('"k%d": %d' % (i, i) for i in range(300)) + '}',
    # short decimals (read without strtod) and the edges of that path
    '[2.5, -0.7, 0.001, 123456789012345.6, 999999999999999.9, 1234567890123456.7, 0.30000000000000004]',
    '[0.1000000000000000055511151231257827, 1.0000000000000002, 9007199254740993.0, 4.35, 0.000000000000001]',
    '[' + ', '.join('%d.%0*d' % (i * 7919 % 100000, 1 + i % 15, i * 104729 % 10 ** (1 + i % 15)) for i in range(400)) + ']',
]

INVALID = [
    '', ' ', '[1,]', '{"a":1,}', '{"a" 1}', '{a:1}', '[1 2]', '01', '[01]', '"abc', '"a\x01"',
    '"\\x"', '"\\u12g4"', '1.', '-', '1e', 'nul', 'tru', 'fals', '[', '{', '{"a":', '"a\\', '[1]x',
    '"\\u"', '{"a":1 "b":2}', '\n\n  x', '["é", x]', '[1,\n2,,]', '-01', '1.5e+', '{"a"', '{"a":1',
    '[1', '"\\u1234', '"ab\\u12"', '"ab\\ud800\\u12"', '"\\ud800\\u12x4"', '"\\', '"ab\\x"',
    '"\t"', '"\n"', '[1]\n]', '{"a":1}}', "'a'", '[-]', '[+1]', '[.5]', '[1.e5]', '[0x10]',
    '"é\x00"', '\n"x\x1f"', '{"é": 1, 2: 3}', '[1, 2', 'truex', '[true false]', '{"a":[}',
    '/* c */ 1', '[1] // c', '\u00a0[]', '[1,\r\n\t x]',
]

BAD_UTF8 = [b'[\xff]', b'["\xc3"]', b'["\xc3', b'["\xe2\x82"]', b'"\xf8"', b'"\xc0\x80"',
            b'"\xe0\x80\x80"', b'"\xf4\x90\x80\x80"', b'["ok", "\x80"]', b'{"\xe9": 1}',
            b'[1, 2] \xff', b'\xc3\xa9', b'"\xf0\x9f\x98"', b'x \xff']


def loads_cases():
    for doc in VALID + INVALID:
        loads_case(doc)
    for data in BAD_UTF8:
        loads_case(data)
    # Python accepts these; RFC 8259 and chatfmt do not.
    deviation('NaN', "JSONDecodeError", "Expecting value: line 1 column 1 (char 0)", 0)
    deviation('[1, Infinity]', "JSONDecodeError", "Expecting value: line 1 column 5 (char 4)", 4)
    deviation('{"a": -Infinity}', "JSONDecodeError", "Expecting value: line 1 column 7 (char 6)", 6)
    deviation('"\\ud800"', "JSONDecodeError",
              "Unpaired surrogate in \\uXXXX escape: line 1 column 2 (char 1)", 1)
    deviation('["x", "a\\udc00b"]', "JSONDecodeError",
              "Unpaired surrogate in \\uXXXX escape: line 1 column 9 (char 8)", 8)
    deviation('"\\ud800\\u0041"', "JSONDecodeError",
              "Unpaired surrogate in \\uXXXX escape: line 1 column 2 (char 1)", 1)
    deviation(b'"\xed\xa0\x80"', "UnicodeDecodeError",
              "'utf-8' codec can't decode byte 0xed in position 1: invalid continuation byte", 1)
    deviation('[' * 513 + ']' * 513, "LimitError",
              "JSON nesting deeper than 512 levels (raise it with --max-json-depth / cf_limits.max_json_depth)",
              512)


VALUES = [
    None, True, False, 0, -7, 2**63, -2**70, 12345678901234567890,
    F(0.0), F(-0.0), F(0.1), F(1e16), F(1e15), F(1e-5), F(1e308), F(-1.5e-300), F(123456.789),
    {"$float": "nan"}, {"$float": "inf"}, {"$float": "-inf"},
    "", "plain", "quote\" back\\ slash/", "\x00\x01\x08\x09\x0a\x0b\x0c\x0d\x1f\x7f\x80",
    "é ü ß 日本 \u2028\u2029 \ufeff 😀 \U0010ffff", {"$markup": "<b>&</b>"},
    [], {}, [[]], [{}], {"a": []}, {"a": {}}, T(), T(1, "a"), [T([], {}), [[1], [2, [3]]]],
    {"b": 1, "a": [1, 2, {"d": None, "c": F(2.5)}], "é": {"z": [], "y": {}}},
    {"$dict": [[1, "int"], [F(2.5), "float"], [True, "true"], [False, "false"], [None, "null"],
               [2**64, "big"], [{"$float": "nan"}, "nan"], [{"$float": "-inf"}, "ninf"]]},
    {"$dict": [[3, "c"], [1, "a"], [2, "b"]]},
    {"$dict": [["b", 1], [1, 2]]},
    {"$dict": [[T(1, 2), "tuple key"]]},
    {"$undefined": None}, [1, {"$undefined": "h"}], {"$ns": {"a": 1}},
    {"$view": "items", "of": {"a": 1}}, {"a": {"$view": "keys", "of": {"a": 1}}},
    {"messages": [{"role": "user", "content": "Hi\n\"there\""},
                  {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]}]},
]

INDENTS = [None, 0, 2, 4, "\t", "--"]
SEPARATORS = [None, [",", ":"], [" , ", " : "]]


def dumps_cases():
    for t in VALUES:
        v = dec(t)
        for ensure_ascii, indent, seps, sort_keys in itertools.product(
                [True, False], INDENTS, SEPARATORS, [False, True]):
            opts = {"ensure_ascii": ensure_ascii, "indent": indent, "separators": seps,
                    "sort_keys": sort_keys}
            try:
                expect = json.dumps(v, ensure_ascii=ensure_ascii, indent=indent,
                                    separators=tuple(seps) if seps else None, sort_keys=sort_keys)
            except (TypeError, ValueError) as e:
                expect = {"error_type": type(e).__name__, "msg": str(e)}
            emit({"op": "dumps", "v": t, "opts": opts, "expect": expect})


if __name__ == "__main__":
    loads_cases()
    dumps_cases()
