#!/usr/bin/env python3
"""Generate tests/filters_cases.h: direct calls of the helpers in
src/engine/format.c and of a few filters, with what Python 3.11 (+ Jinja2 3.1,
markupsafe) gives for them.

Usage: python3 tests/gen_filters_cases.py > tests/filters_cases.h

Each case is {kind, a, b, expected}:
  "int_from_float"  a = repr(float)          -> str(int(x))
  "parse_int"       a = text, b = base       -> str(int(text, base)) or "E"
  "parse_float"     a = text                 -> repr(float(text)) or "E"
  "percent"         a = fmt ("m:" prefix: Markup), b = JSON args (a JSON list is
                    the tuple right operand, "!" prefix: the list itself)
  "format"          a = fmt ("m:" prefix: Markup), b = JSON list of positional args
  "escape"          a = text
  "filter:NAME"     a = JSON value, b = JSON list of positional args -> the
                    rendered "{{ a|NAME(*b) }}" (with |list after generators)
Expected is str(result) (with "m:" when the result is Markup) or
"E<ExceptionName>:<message>".
"""
import json
import math
import sys

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup, escape

ENV = ImmutableSandboxedEnvironment()


def c_str(s):
    out = []
    for b in s.encode("utf-8"):
        ch = chr(b)
        if ch == "\\" or ch == '"':
            out.append("\\" + ch)
        elif 32 <= b < 127 and ch != "?":
            out.append(ch)
        else:
            out.append("\\%03o" % b)
    return '"' + "".join(out) + '"'


def show(v):
    return ("m:" if isinstance(v, Markup) else "") + str(v)


def run(fn):
    try:
        return show(fn())
    except Exception as e:  # noqa: BLE001 - recorded as data
        return "E%s:%s" % (type(e).__name__, e)


CASES = []


def case(kind, a, b, expected):
    CASES.append((kind, a, b, expected))


# ---- int(float) ----
for x in [0.0, -0.0, 1.5, -1.5, 1e18, 9.2e18, 9.3e18, -9.3e18, 2.0**63, -(2.0**63), 2.0**64, 1e20, 1e300,
          -1.7976931348623157e308, 123456789012345678901234567890.0, 5e-324, float("inf"), float("-inf"), float("nan")]:
    case("int_from_float", repr(x), "", run(lambda: int(x)))

# ---- int(text, base) ----
INTS = ["0", "-0", "+7", " 42 ", "\t-17\n", "1_000", "1__0", "_1", "1_", "0x1f", "0X1F", "0b101", "0o17", "017",
        "00", "0_0", "010", "ff", "FF", "z", "Z", "0x", "0x_1", "0x__1", "", " ", "1 2", "٣٤", "1.5", "１２",
        "99999999999999999999999999", "-99999999999999999999999999", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "ffffffffffffffffffffffffffffffff", "\u30001\u3000"]
for text in INTS:
    for base in [10, 0, 16, 2, 8, 36]:
        def f(text=text, base=base):
            return int(text, base)
        r = run(f)
        case("parse_int", text, str(base), r if not r.startswith("E") else "E")

# ---- float(text) ----
FLOATS = ["1", "1.5", " -2.5e3 ", "1_000.5", "1__0", "1_.5", "1._5", ".5", "5.", ".", "e5", "1e", "1e+", "1e_5", "1e1_0",
          "inf", "-Infinity", "+nan", "NaN", "infinit", "0x10", "1e500", "-1e-500", "١٫٥", "١٢", "1,5", "", "  ", "1.5\x85",
          "0.1", "123456789012345678901234567890", "2.2250738585072014e-308"]
for text in FLOATS:
    r = run(lambda: repr(float(text)))
    case("parse_float", text, "", r if not r.startswith("E") else "E")

# ---- fmt % args ----
PCT = [
    ("%s|%r|%a", ["é", "é", "é"]), ("%5.2f|%-6d|%+x|%#o", [3.14159, 42, 255, 8]), ("%c%c", [65, "é"]),
    ("%(a)s %(b)d", {"a": "x", "b": 2.7}), ("%s", "!" + json.dumps([1, 2])), ("%s %s", [1]), ("%s", [1, 2]),
    ("%d", ["x"]), ("%x", [1.5]), ("%*.*f|", [8, 2, 3.14159]), ("%-*s|", [-4, "a"]), ("%05.1f|%05d|%05s", [-2.5, -7, "ab"]),
    ("%e|%E|%g|%G", [1e-10, 12345.678, 1e16, 1e-5]), ("%.0f %.0f %.0f", [0.5, 1.5, 2.5]), ("%i", [12345678901234567890]),
    ("%x %X %o", [12345678901234567890, -12345678901234567890, 12345678901234567890]), ("abc", "5"), ("abc", "{}"),
    ("%", [1]), ("%z", [1]), ("%(a", {}), ("%(a)s", {"b": 1}), ("%c", [1114112]), ("%c", ["ab"]),
    ("m:<%s>", ["<&>"]), ("m:%r", ["<"]), ("m:%(a)s", {"a": "<"}), ("m:%s", "\"<\""), ("m:%d", [5]), ("m:%x", [5]),
]
for fmt, args in PCT:
    markup = fmt.startswith("m:")
    f = Markup(fmt[2:]) if markup else fmt
    if isinstance(args, list):
        operand, enc = tuple(args), json.dumps(args, ensure_ascii=False)
    elif isinstance(args, dict):
        operand, enc = args, json.dumps(args, ensure_ascii=False)
    elif args.startswith("!"):
        operand, enc = json.loads(args[1:]), args
    else:
        operand, enc = json.loads(args), args
    case("percent", fmt, enc, run(lambda: f % operand))

# ---- str.format (through the sandbox's formatter) ----
FMT = [
    ("{}|{!r}|{!a}", ["é", "é", "é"]), ("{:>8,}|{:_x}|{:#010b}", [1234567, 3054198966, 5]), ("{:.3}|{:.0}|{:g}", [1.0, 1.5, 1e16]),
    ("{0[a]}{0[b][0]}", [{"a": 1, "b": [2]}]), ("{:é^7}", ["x"]), ("{:08,}|{:06,}", [1234, 0.0]), ("{:z.1f}|{:+.2%}", [-0.04, 0.125]),
    ("{}", []), ("{0}{}", [1, 2]), ("{:d}", ["x"]), ("{:5}", [None]), ("{", []), ("}", []), ("{:{}{}}", ["a", ">", 4]),
    ("m:<{}>", ["<&>"]), ("m:{!r}", ["<"]), ("m:{:>3}", ["<"]), ("{:c}|{:5c}", [233, 66]), ("{:,.2f}", [-1234567.891]),
]
for fmt, args in FMT:
    markup = fmt.startswith("m:")
    f = Markup(fmt[2:]) if markup else fmt
    tmpl = ENV.from_string("{{ f.format(*a) }}")
    case("format", fmt, json.dumps(args, ensure_ascii=False),
         run(lambda: ENV.getattr(f, "format")(*args)))

# ---- escape ----
for text in ["", "plain", "<a href=\"x\">Tom & 'Jerry'</a>", "é&é", "&amp;"]:
    case("escape", text, "", run(lambda: escape(text)))

# ---- filters called directly ----
FILTERS = [
    ("round", 2.675, [2]), ("round", 2.5, []), ("round", -2.5, [0]), ("round", 1234, [-2]), ("round", 1250, [-2]),
    ("round", 12345678901234567890, [-5]), ("round", 1.5e300, [-299]), ("round", 0.5, [0, "ceil"]), ("round", 1, [0, "bad"]),
    ("int", "0x1A", [0, 16]), ("int", "42.9", []), ("int", 1e20, []), ("int", "x", [7]), ("float", "1_0.5", []),
    ("filesizeformat", 123456789, []), ("filesizeformat", 123456789, [True]), ("sum", [1, 2.5, 3], []),
    ("sum", [9223372036854775807, 9223372036854775807], []), ("sum", [-12345678901234567890, 12345678901234567891], []),
    ("title", "hello-wORLD (x)", []), ("wordwrap", "a well-known state-of-the-art example", [10]),
    ("truncate", "foo bar baz qux", [9]), ("indent", "a\n\nb", [2, True]), ("center", "é", [5]),
    ("sort", ["b", "A", "a", "C"], []), ("sort", [2, 1, "x"], []), ("dictsort", {"b": 1, "A": 2}, []),
    ("unique", ["a", "A", "b"], []), ("max", ["a", "B"], []), ("min", [], []), ("join", [1, "a", None], ["-"]),
    ("pprint", {"b": [1, 2], "a": "x" * 90}, []), ("striptags", "<p>a &amp; <b>b</b></p> <!-- c -->", []),
    ("urlencode", {"a b": "c/d"}, []), ("urlize", "see www.example.com.", []), ("tojson", {"a": [1, "é"]}, []),
    ("xmlattr", {"a": 1, "b": None}, []), ("batch", [1, 2, 3], [2, 0]), ("slice", [1, 2, 3, 4, 5], [3]),
    ("abs", -12345678901234567890, []), ("wordcount", "a b_c d-e", []), ("capitalize", "ßtraße", []),
]
ENV.filters["tojson"] = lambda x, ensure_ascii=False, indent=None, separators=None, sort_keys=False: json.dumps(
    x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
for name, value, args in FILTERS:
    suffix = "|list" if name in ("batch", "slice", "unique") else ""
    tmpl = ENV.from_string("{{ v|%s(*a)%s }}" % (name, suffix))
    case("filter:" + name, json.dumps(value, ensure_ascii=False), json.dumps(args, ensure_ascii=False),
         run(lambda: tmpl.render(v=value, a=args)))


def main():
    w = sys.stdout.write
    w("/* filters_cases.h — GENERATED by tests/gen_filters_cases.py; do not edit.\n")
    w(" * Python %s, Jinja2 %s. Fields: kind, a, b, expected. */\n" % (sys.version.split()[0], jinja2.__version__))
    w("static const FilterCase filter_cases[] = {\n")
    for kind, a, b, expected in CASES:
        w("    {%s, %s, %s, %s},\n" % (c_str(kind), c_str(a), c_str(b), c_str(expected)))
    w("};\n")


if __name__ == "__main__":
    main()
