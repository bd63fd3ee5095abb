#!/usr/bin/env python3
"""Generate tests/data/value_cases.jsonl for tests/test_values.c.

Every expected value is computed here by Python 3.11 + Jinja2 (the same
ImmutableSandboxedEnvironment transformers uses); the C test replays each
case. Values are written in a tagged JSON form both sides decode the same
way (see tests/tagged_value.h):
  {"$float": "nan"}  {"$tuple": [...]}  {"$dict": [[k, v], ...]}
  {"$markup": "s"}   {"$undefined": hint-or-null}  {"$ns": {...}}
  {"$view": "items"|"keys"|"values", "of": {...}}
Usage: python3 tests/gen_value_cases.py > tests/data/value_cases.jsonl
"""
import json
import math
import random
import struct
import sys

from jinja2.runtime import Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace
from markupsafe import Markup

ENV = ImmutableSandboxedEnvironment()


def dec(t):
    if isinstance(t, list):
        return [dec(x) for x in t]
    if not isinstance(t, dict):
        return t
    if "$float" in t:
        return float(t["$float"])
    if "$tuple" in t:
        return tuple(dec(x) for x in t["$tuple"])
    if "$dict" in t:
        return {dec(k): dec(v) for k, v in t["$dict"]}
    if "$markup" in t:
        return Markup(t["$markup"])
    if "$undefined" in t:
        return Undefined(hint=t["$undefined"])
    if "$ns" in t:
        return Namespace(**{k: dec(v) for k, v in t["$ns"].items()})
    if "$view" in t:
        return getattr(dec(t["of"]), t["$view"])()
    return {k: dec(v) for k, v in t.items()}


def F(x):
    return {"$float": repr(float(x))}


def T(*xs):
    return {"$tuple": list(xs)}


NUMBERS = [0, 1, -1, 2, 7, 2**53, 2**53 + 1, 2**63 - 1, -2**63, 2**63, -2**63 - 1,
           12345678901234567890, -99999999999999999999999, True, False,
           F(0.0), F(-0.0), F(1.0), F(0.5), F(-1.5), F(2.0**53), F(2.0**63), F(-2.0**63),
           F(1e20), F(-1e30), F(12345678901234567890.0), F(0.1), F(1e308),
           {"$float": "nan"}, {"$float": "inf"}, {"$float": "-inf"}]
STRINGS = ["", "a", "ab", "b", "abc", "B", "é", "e\u0301", "😀", "\U000e0001", "a\x00",
           {"$markup": "a"}, {"$markup": "<b>it's</b>"}]
SEQS = [[], [1], [1, 2], [1, "a"], [2], [1, [2, 3]], [1, [2, 4]], ["a", "b"],
        T(), T(1), T(1, 2), T(1, "a"), T(T(1, 2), 3), [F(1.0), True]]
OTHERS = [None, {}, {"a": 1}, {"a": 1, "b": 2}, {"b": 2, "a": 1}, {"$dict": [[1, "x"], [F(2.5), "y"]]},
          {"$undefined": None}, {"$undefined": "x is missing"}, {"$ns": {"a": 1}},
          {"$view": "items", "of": {"a": 1, "b": [2]}}, {"$view": "keys", "of": {"a": 1}},
          {"$view": "values", "of": {"a": 1}}, {"$view": "items", "of": {}}]

REPR_EXTRA = ["it's", 'say "hi"', "both ' and \"", "tab\tnl\nret\r", "\x00\x1f\x7f\x80\x9f",
              "\u00a0\u00ad\u2028\u200b\ufeff", "\\back\\", "日本語", "\U0001f600\U000e007f\U0010ffff",
              "\ud7ff\ue000", {"$markup": "x'y\"z"}, [None, True, F(1e-7), "q'", {"k": T()}],
              {"$dict": [[None, 1], [True, 2], [F(0.5), 3], [T(1, "a"), 4]]},
              {"a": {"$markup": "m"}, "u": {"$undefined": "h"}}, T(T()), T([], {})]


def emit(case):
    sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")


def err(e):
    return {"error_type": type(e).__name__, "msg": str(e)}


def classify(r):
    """Outcome of an env.getattr/getitem lookup."""
    if isinstance(r, Undefined):
        try:
            r._fail_with_undefined_error()
        except Exception as e:  # noqa: BLE001
            return {"undefined": err(e)}
    if callable(r) and not isinstance(r, (list, dict, str)):
        return {"callable": True}
    return {"repr": repr(r)}


def main():
    singles = NUMBERS + STRINGS + SEQS + OTHERS + REPR_EXTRA
    for t in singles:
        v = dec(t)
        emit({"op": "str", "v": t, "expect": str(v)})
        emit({"op": "repr", "v": t, "expect": repr(v)})
        emit({"op": "truthy", "v": t, "expect": bool(v)})
        try:
            emit({"op": "len", "v": t, "expect": len(v)})
        except Exception as e:  # noqa: BLE001
            emit({"op": "len", "v": t, "expect": err(e)})
        try:
            emit({"op": "iter", "v": t, "expect": repr(list(v))})
        except Exception as e:  # noqa: BLE001
            emit({"op": "iter", "v": t, "expect": err(e)})
        try:
            hash(v)
            emit({"op": "hashable", "v": t, "expect": True})
        except TypeError as e:
            emit({"op": "hashable", "v": t, "expect": False, "msg": str(e)})

    pool = NUMBERS + STRINGS + SEQS + OTHERS
    for a in pool:
        for b in pool:
            x, y = dec(a), dec(b)
            emit({"op": "eq", "a": a, "b": b, "expect": x == y})
            if isinstance(x, Undefined) or isinstance(y, Undefined):
                continue
            for op in ("<", "<=", ">", ">="):
                try:
                    r = {"<": lambda: x < y, "<=": lambda: x <= y,
                         ">": lambda: x > y, ">=": lambda: x >= y}[op]()
                    emit({"op": "cmp", "a": a, "b": b, "cmp": op, "expect": bool(r)})
                except TypeError as e:
                    emit({"op": "cmp", "a": a, "b": b, "cmp": op, "expect": err(e)})
                    break

    # attribute / item lookup through the real sandbox
    objs = [{"items": 1, "foo": 2, "_private": 3, "pop": 4, "a b": 5, "it's": 6},
            {"$dict": [[1, "one"], [T(1, 2), "pair"], [None, "none"]]},
            [10, 20, 30], T(10, 20), "héllo", {"$markup": "mk"}, None, 5, F(1.5), True,
            {"$ns": {"a": 1, "_b": 2}}, {"$view": "keys", "of": {"a": 1}}]
    names = ["items", "foo", "_private", "pop", "append", "update", "__class__", "__len__",
             "missing", "a", "_b", "upper", "count", "get", "keys", "a b", "it's", "sort",
             "startswith", "index", "values"]
    keys = [0, 1, -1, 2, 5, -4, True, False, F(1.0), F(0.5), None, T(1, 2), [1], "items", "foo",
            "pop", "a", "_b", "count", "missing", "__class__", 2**70]
    for o in objs:
        obj = dec(o)
        for n in names:
            emit({"op": "getattr", "v": o, "name": n, "expect": classify(ENV.getattr(obj, n))})
        for k in keys:
            emit({"op": "getitem", "v": o, "key": k, "expect": classify(ENV.getitem(obj, dec(k)))})

    # float repr: shortest round trip, Python layout
    rnd = random.Random(1234)
    floats = [0.1, 0.2, 0.3, 1 / 3, 2 / 3, 1e16, 1e15, 123456789012345680.0, 1e-4, 1e-5, 9.999e-5,
              5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e22, 1e23, 9007199254740993.0,
              0.1 + 0.2, 100.0, 1234.5, 1e100, 123e-20, 4.35, 0.000123456789]
    floats += [2.0 ** e for e in range(-1074, 1024, 37)]
    floats += [rnd.uniform(-1e6, 1e6) for _ in range(300)]
    floats += [struct.unpack("<d", rnd.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(1500)]
    floats += [float(f"{rnd.randint(1, 999999)}e{rnd.randint(-30, 30)}") for _ in range(300)]
    # short decimals (the printf-free path) and the edges of its range
    floats += [round(rnd.uniform(-1e4, 1e4), rnd.randint(0, 8)) for _ in range(500)]
    floats += [rnd.randint(1, 10**15 - 1) / 10**rnd.randint(0, 15) for _ in range(500)]
    floats += [999999999999999.9, 99999999999999.99, 0.00010000000000000002, 1e15 - 1, 123456789012345.6,
               0.7, 2.5, 1e-3, 0.1 * 3, 1.1 * 1.1, 4.35 * 100, 1e14 + 0.5]
    for f in floats:
        if math.isnan(f):
            continue
        emit({"op": "float", "bits": struct.pack(">d", f).hex(), "expect": repr(f)})

    for digits in ["0", "-0", "007", "-007", "9223372036854775807", "9223372036854775808",
                   "-9223372036854775808", "-9223372036854775809", "+5", "000000000000000000000000012",
                   "123456789012345678901234567890"]:
        emit({"op": "bigint", "digits": digits, "expect": str(int(digits))})


if __name__ == "__main__":
    main()
