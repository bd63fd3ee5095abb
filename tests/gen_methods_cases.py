#!/usr/bin/env python3
"""Generate tests/methods_cases.h: Python method calls and what Jinja2's
ImmutableSandboxedEnvironment makes of them (Python 3.11, markupsafe).

Usage: python3 tests/gen_methods_cases.py > tests/methods_cases.h

Each case is (receiver, method name, positional args, keyword args,
expected), with values in a small text encoding that tests/test_methods.c
decodes and encodes back:
    n             None            b0 / b1     False / True
    i<digits>;    int (any size)  f<repr>;    float
    s<len>:<utf8> str             m<len>:...  Markup
    l<n>:<items>  list            t<n>:...    tuple
    d<n>:<k v..>  dict            V<i|k|v><n>:<items>  dict items/keys/values view
Expected is an encoded value, "U" (no such method: method_call returns
false) or "E<ExceptionName>:<str(exception)>". The method is looked up with
the sandbox's getattr, as a template does, and called directly.
"""
import math
import random
import sys

from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.runtime import Undefined
from markupsafe import Markup

ENV = ImmutableSandboxedEnvironment()


def enc(v):
    if v is None:
        return "n"
    if isinstance(v, bool):
        return "b1" if v else "b0"
    if isinstance(v, int):
        return "i%d;" % v
    if isinstance(v, float):
        return "f%r;" % v
    if isinstance(v, str):
        b = v.encode("utf-8")
        tag = "m" if isinstance(v, Markup) else "s"
        return "%s%d:" % (tag, len(b)) + v
    if isinstance(v, list):
        return "l%d:" % len(v) + "".join(enc(x) for x in v)
    if isinstance(v, tuple):
        return "t%d:" % len(v) + "".join(enc(x) for x in v)
    if isinstance(v, dict):
        return "d%d:" % len(v) + "".join(enc(k) + enc(x) for k, x in v.items())
    kind = {type({}.items()): "i", type({}.keys()): "k", type({}.values()): "v"}.get(type(v))
    if kind:
        return "V%s%d:" % (kind, len(v)) + "".join(enc(x) for x in v)
    raise TypeError(type(v))


def run(recv, name, args, kwargs):
    fn = ENV.getattr(recv, name)
    try:
        if isinstance(fn, Undefined):
            try:
                fn()
            except Exception as e:
                if type(e).__name__ == "UndefinedError":
                    return "U"
                raise
        return enc(fn(*args, **kwargs))
    except Exception as e:
        return "E%s:%s" % (type(e).__name__, e)


CASES = []


def case(recv, name, *args, **kwargs):
    CASES.append((recv, name, args, kwargs))


STRINGS = [
    "", "a", "abc", "  hello world  ", "Hello World", "hello\tworld\n", "ß", "ǅ", "ǆemo",
    "İstanbul", "ΣΑΣ", "ὈΔΥΣΣΕΎΣ", "aΣ", "aΣb", "Σa", "a\u0345Σ", "aΣ\u0345", "ﬃ", "ŉ", "ǰ",
    "ᏣᎳᎩ ꮳꮃꭹ", "\U00010400\U00010428", "😀 emoji 😀", "\u3000x\u3000", "\x1cx\x1d\x1e\x1f",
    "\x85a\x85", "a\u2028b\u2029c", "a\r\nb\rc\nd\x0be\x0cf\x1cg\x1dh\x1ei\x85j\u2028k",
    "123", "١٢٣", "½", "²", "x_1", "_x", "1x", "ⅷ", "a,b,,c", "<b>&amp;</b>", "tab\tbed\t\tx",
    "-42", "+7", "MiXeD CaSe", "they're bill's", "ǈ", "ﬀ", "Ǆ", "ǉ", "ᾳ", "ᾼ", "ΐ", "ﬅ",
    "\u0130", "i\u0307", "ΑΣ ΣΑ", "ΑΣ. x", "ΑΣ'Σ", "x\u00adΣ", "\ufb00x", "\u1e9e", "ꭰ",
    "\u2160\u2170", "\u24b6\u24d0", "\U0001e900\U0001e922", "Δ\u0301Σ", "a\u02b0Σ",
    "user\n", " \t\n\r\x0b\x0c", "\u00a0", "\u200b", "\u2007\u202f", "e\u0301",
    "\x7f", "\ud7ff\ue000", "\U0010ffff", "<|im_start|>user\nhi<|im_end|>\n",
]

NOARG = ["upper", "lower", "title", "capitalize", "casefold", "swapcase", "isalnum", "isalpha",
         "isascii", "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric",
         "isprintable", "isspace", "istitle", "isupper", "strip", "lstrip", "rstrip", "split",
         "rsplit", "splitlines", "expandtabs"]


def gen():
    for s in STRINGS:
        for m in NOARG:
            case(s, m)

    # strip family
    for s in ["  xxhixx  ", "abcba", "ßaß", "\u3000 a \u3000", "xΣx", "", "aaa", "😀a😀",
              "\x85 a\x1c"]:
        for m in ["strip", "lstrip", "rstrip"]:
            for a in [None, "ab", " a", "ß", "", "\u3000", "x ", "😀", "\x85\x1c "]:
                case(s, m, a)
    case("a", "strip", 1)
    case("a", "lstrip", [])
    case("a", "strip", 1, 2)
    case("a", "strip", chars="a")

    # split family
    split_strings = ["a,b,,c", "  a  b  c  ", "a b\tc\nd", "\u3000a\u3000\u3000b\x85c\x1c",
                     "", "   ", ",", "a", "aΣbΣΣc", "x--y--z--", "😀,😀", "a\u2028b"]
    for s in split_strings:
        for m in ["split", "rsplit"]:
            for args in [(), (None,), (None, 1), (None, 0), (" ",), (",",), (",", 1),
                         (",", 0), ("--",), ("--", 1), ("Σ",), ("ΣΣ",), (None, -1), (",", -5)]:
                case(s, m, *args)
            case(s, m, sep=",", maxsplit=1)
            case(s, m, maxsplit=1)
    for m in ["split", "rsplit"]:
        case("a", m, "")
        case("a", m, 1)
        case("a", m, "a", "b")
        case("a", m, "a", 1, 2)
        case("a", m, foo=1)
        case("a", m, "a", sep="b")
        case("a", m, "a", 1, maxsplit=2)
        case("a", m, sep="a", maxsplit=1, x=2)
        case("a", m, None, None)
        case("a", m, None, 10**30)
        case("a b", m, maxsplit=True)
        case("a b", m, None, 1.5)
    for s in ["a\nb\r\nc\rd", "a\n\nb\n", "\n", "", "x\u2028y\u2029z\x85w\x0bv\x0cu\x1ct",
              "\r\n\r\n", "a\r", "no break"]:
        case(s, "splitlines", True)
        case(s, "splitlines", keepends=True)
        case(s, "splitlines", False)
    case("a", "splitlines", 1, 2)
    case("a", "splitlines", "x")
    case("a", "splitlines", 1.5)
    case("a", "splitlines", None)
    case("a", "splitlines", 2**40)
    case("a", "splitlines", x=1)
    case("a", "splitlines", True, keepends=1)

    # replace
    for s in ["hello", "aaa", "", "aΣbΣ", "😀x😀", "abc"]:
        for args in [("a", "b"), ("", "-"), ("", "-", 2), ("", "-", 0), ("l", "L", 1),
                     ("Σ", "σσ"), ("a", "b", 0), ("a", "b", -1), ("aa", "x"), ("😀", ""),
                     ("x", "😀", 1), ("abc", "abc"), ("", "")]:
            case(s, "replace", *args)
    case("a", "replace", "a")
    case("a", "replace", 1, "b")
    case("a", "replace", "a", 1)
    case("a", "replace", None, "b")
    case("a", "replace", "a", None)
    case("a", "replace", "a", "b", "c")
    case("a", "replace", "a", "b", count=1)
    case("a", "replace", "a", "b", 1, 2)
    case("a", "replace", "a", "b", 10**30)

    # find family
    for s in ["abcabc", "", "aΣbΣc", "😀a😀a", "aaaa"]:
        for m in ["find", "rfind", "index", "rindex", "count"]:
            for args in [("a",), ("",), ("", 2), ("", 100), ("a", 1), ("a", -2), ("a", 1, 3),
                         ("a", None, 2), ("Σ",), ("😀",), ("aa",), ("a", 10**30),
                         ("a", -10**30), ("bc", 0, -1), ("a", True), ("", 3, 1), ("", -1)]:
                case(s, m, *args)
    for m in ["find", "rfind", "index", "rindex", "count"]:
        case("a", m)
        case("a", m, 1)
        case("a", m, None)
        case("a", m, "a", "x")
        case("a", m, "a", 1.5)
        case("a", m, "a", 1, 2, 3)
        case("a", m, sub="a")
        case("a", m, 1, "x")

    # startswith / endswith
    for s in ["hello", "", "aΣ😀", "<|im_start|>assistant"]:
        for m in ["startswith", "endswith"]:
            for args in [("h",), ("",), (("x", "he"),), (("x", "lo"),), ((),), ("h", 1),
                         ("", 5), ("", 0, 0), ("o", -1), ("l", 0, -1), ("aΣ",), ("😀",),
                         ("Σ", 1, 2), ("hello!",), ("<|im_start|>",), ("assistant", 12),
                         ("h", None, None), ("h", 10**30), ("o", -10**30)]:
                case(s, m, *args)
    for m in ["startswith", "endswith"]:
        case("a", m)
        case("a", m, 1)
        case("a", m, ["a"])
        case("b", m, ("a", 1))
        case("a", m, ("a", 1))
        case("a", m, "a", "x")
        case("a", m, "a", 1.5)
        case("a", m, prefix="a")
        case("a", m, "a", 1, 2, 3)
        case("a", m, 1, "x")

    # padding
    for s in ["abc", "", "ß😀", "-42", "+7", "42", "-", "ab"]:
        for m in ["center", "ljust", "rjust"]:
            for args in [(10,), (10, "*"), (3,), (-1,), (11, "ß"), (8, "😀"), (True,), (4,),
                         (5, "-")]:
                case(s, m, *args)
        for w in [5, 0, -3, 1, 6, True]:
            case(s, "zfill", w)
    for m in ["center", "ljust", "rjust"]:
        case("a", m)
        case("a", m, 10, "ab")
        case("a", m, 10, "")
        case("a", m, 10, 1)
        case("a", m, 3, None)
        case("a", m, "x")
        case("a", m, 1.5)
        case("a", m, 10**30)
        case("a", m, 1, "a", 3)
        case("a", m, width=3)
    case("a", "zfill")
    case("a", "zfill", None)
    case("a", "zfill", "x")
    case("a", "zfill", 10**30)

    # expandtabs
    for s in ["a\tb", "\t", "ab\tcd\tefghij\tk\nx\ty\rz\tw", "😀\tx", "no tabs", "\t\t"]:
        for args in [(), (4,), (0,), (-1,), (1,), (True,)]:
            case(s, "expandtabs", *args)
        case(s, "expandtabs", tabsize=2)
    case("a", "expandtabs", "x")
    case("a", "expandtabs", None)
    case("a", "expandtabs", 2**40)
    case("a", "expandtabs", -2**40)
    case("a", "expandtabs", x=2)
    case("a", "expandtabs", 1, 2)
    case("a", "expandtabs", 1, tabsize=2)

    # partition
    for s in ["a,b,c", "abc", "", "aΣbΣc", ",", "😀=😀=😀"]:
        for m in ["partition", "rpartition"]:
            for sep in [",", "Σ", "x", "abc", "=", "😀"]:
                case(s, m, sep)
    for m in ["partition", "rpartition"]:
        case("a", m, "")
        case("a", m, 1)
        case("a", m, None)
        case("a", m)
        case("a", m, "a", "b")
        case("a<b", m, Markup("<"))

    # removeprefix / removesuffix
    for s in ["abcabc", "", "ΣaΣ", "😀x"]:
        for m in ["removeprefix", "removesuffix"]:
            for a in ["a", "", "abc", "abcabcx", "Σ", "😀", "c", "x"]:
                case(s, m, a)
    for m in ["removeprefix", "removesuffix"]:
        case("a", m, 1)
        case("a", m, None)
        case("a", m)
        case("a", m, x="a")

    # join
    for sep in [", ", "", "Σ", "😀"]:
        for it in [["a", "b"], [], ["x"], "abc", {"k1": 1, "k2": 2}, ("p", "q"),
                   [Markup("<m>"), "<s>"]]:
            case(sep, "join", it)
    case(",", "join", [1])
    case(",", "join", ["a", 1])
    case(",", "join", ["a", None])
    case(",", "join", 1)
    case(",", "join", None)
    case(",", "join")
    case(",", "join", [], x=1)
    case(",", "join", [("a",)])

    # seeded random strings over tricky code points
    rng = random.Random(1234)
    pool = list("aAzZ ßǅǆǄΣσςİiı\u0307\u0345\u02b0\u3000\t\n\r\x85\u2028"
                "1١½_😀ﬃᾳᾼᎠꭰ.'-\u00ad\u1e9e\U00010400\U00010428")
    for _ in range(60):
        s = "".join(rng.choice(pool) for _ in range(rng.randint(0, 9)))
        for m in ["upper", "lower", "title", "capitalize", "swapcase", "casefold", "istitle",
                  "isupper", "islower", "split", "rsplit", "strip", "splitlines"]:
            case(s, m)
        case(s, "split", None, 1)
        case(s, "rsplit", None, 1)
        case(s, "center", 12, "ς")

    # format / format_map (py_str_format in format.c does the formatting)
    case("{} and {x}", "format", 1, x="<y>")
    case("{0!r:>8}|{1:.2f}", "format", "a", 2.5)
    case(Markup("<{}>{x}"), "format", "<&>", x=Markup("<i>"))
    case("{x}-{y}", "format_map", {"x": 1, "y": "z", 3: 4})
    case(Markup("{x}"), "format_map", {"x": "<"})
    case("{x}", "format_map", {})
    case("{x}", "format_map", {"x": 1}, 2)
    case("{x}", "format_map")
    case("{x}", "format_map", m={"x": 1})
    case("{}", "format")

    # no-arg methods given arguments
    for m in ["upper", "isalpha", "casefold", "title"]:
        case("a", m, 1)
        case("a", m, x=1)
        case("a", m, 1, x=2)

    # missing / unsupported str methods
    # (encode, translate and maketrans exist in Python but are not supported)
    for m in ["foo", "mro", "unescape"]:
        case("a", m)

    # Markup receivers
    mk = Markup("<b>x</b> Σ ")
    for m in ["upper", "lower", "title", "capitalize", "swapcase", "casefold", "strip",
              "lstrip", "rstrip", "split", "rsplit", "splitlines", "expandtabs", "isalpha",
              "isupper"]:
        case(mk, m)
    case(mk, "replace", "x", "<i>")
    case(mk, "replace", "x", Markup("<i>"))
    case(mk, "replace", "<b>", "&")
    case(mk, "replace", "x", 5)
    case(Markup(", "), "join", ["<a>", Markup("<b>"), 3])
    case(Markup(""), "join", ["<a>"])
    case(mk, "center", 20)
    case(mk, "center", 20, "<")
    case(mk, "ljust", 20, "-")
    case(mk, "rjust", 20, 7)
    case(mk, "zfill", 15)
    case(mk, "split", ">")
    case(mk, "rsplit", ">", 1)
    case(mk, "partition", ">")
    case(mk, "rpartition", "<")
    case(mk, "partition", "zz")
    case(mk, "removeprefix", "<b>")
    case(mk, "removesuffix", " ")
    case(mk, "strip", "<> ")
    case(mk, "startswith", "<b>")
    case(mk, "find", "x")
    case(mk, "count", "b")
    case(Markup("a\tb\nc"), "splitlines", True)
    case(Markup("a\tb"), "expandtabs", 4)

    # list / tuple
    lst = [1, 2, 3, 2, "a", None, True, [1], {"k": 1}, 2.0]
    for args in [(2,), (2, 2), (2, 4), (9,), ("a",), (1, -10), (3, -8, -6), (1, 10**30),
                 (1, -10**30), (None,), ([1],), ({"k": 1},), (2, 0, 1), ("b",), (1.0,)]:
        case(lst, "index", *args)
        case(tuple(lst), "index", *args)
    for v in [2, True, 1, "a", None, 9, [1], 2.0]:
        case(lst, "count", v)
        case(tuple(lst), "count", v)
    case(lst, "copy")
    case([], "copy")
    for recv in [lst, tuple(lst)]:
        case(recv, "index")
        case(recv, "index", 1, "a")
        case(recv, "index", 1, None)
        case(recv, "index", 1, 1.5)
        case(recv, "index", x=1)
        case(recv, "count")
        case(recv, "count", 1, 2)
        case(recv, "count", x=1)
    case(lst, "copy", 1)
    case(tuple(lst), "copy")
    for m in ["append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"]:
        case(lst, m, 1)
        case(tuple(lst), m, 1)
    for m in ["foo", "mro"]:
        case(lst, m)

    # dict
    d = {"a": 1, "b": [1, 2], 3: "three", "nested": {"x": None}, True: "t"}
    for args in [("a",), ("z",), ("z", 5), (3,), (3.0,), (1,), ("nested",), ("z", None),
                 ([],), ({},)]:
        case(d, "get", *args)
    case(d, "get")
    case(d, "get", 1, 2, 3)
    case(d, "get", key=1)
    case(d, "get", "a", default=3)
    for m in ["items", "keys", "values", "copy"]:
        case(d, m)
        case({}, m)
        case(d, m, 1)
        case(d, m, x=1)
    for m in ["clear", "pop", "popitem", "setdefault", "update"]:
        case(d, m, "a")
    for m in ["foo", "append"]:  # (fromkeys exists in Python, not supported)
        case(d, m)

    # numbers
    for f in [1.0, 1.5, -0.0, math.inf, -math.inf, math.nan, 1e300, 2.5e-300]:
        case(f, "is_integer")
    case(1.0, "is_integer", 1)
    case(1, "is_integer")
    case(1.0, "foo")
    case(None, "foo")
    case(True, "foo")


def c_literal(s):
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif (32 <= code < 127 and ch != "?") or code >= 0x80:
            out.append(ch)  # raw UTF-8 is fine in a C string literal
        else:
            out.append("\\%03o" % code)
    out.append('"')
    return "".join(out)


def main():
    gen()
    w = sys.stdout.write
    w("/* methods_cases.h — GENERATED by tests/gen_methods_cases.py; do not edit.\n")
    w(" * Python %s. Fields: receiver, method, args (tuple), kwargs (dict),\n"
      " * expected. See the generator for the value encoding. */\n" % sys.version.split()[0])
    w("static const MethodCase method_cases[] = {\n")
    for recv, name, args, kwargs in CASES:
        expected = run(recv, name, args, kwargs)
        fields = [enc(recv), name, enc(tuple(args)), enc(kwargs), expected]
        w("    {%s},\n" % ", ".join(c_literal(f) for f in fields))
    w("};\n")


if __name__ == "__main__":
    main()
