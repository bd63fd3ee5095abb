#!/usr/bin/env python3
"""Generate tests/data/bigint_cases.jsonl for tests/test_bigint.c.

Each line is one case: {"op": OP, "a": INT, "b": INT, "expect": E} where OP
is one of + - * // % / ** (binary, Python semantics) or "neg" / "float"
(unary, no "b"). E is repr() of Python's result, or {"error_type": NAME,
"msg": str(exception)} when Python raises. A handful of cases at the end
are chatfmt-specific: results too large to build ({"error_type":
"LimitError"}, message not compared); Python would just grind on them.

Usage: python3 tests/gen_bigint_cases.py > tests/data/bigint_cases.jsonl
"""
import json
import operator
import random
import sys

OPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
    "%": operator.mod, "/": operator.truediv, "**": operator.pow,
    "neg": operator.neg, "float": float,
}

BOUNDARIES = [0, 1, 2, 7, 10, 2**31, 2**32, 2**53 - 1, 2**53, 2**53 + 1, 2**62,
              2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1, 2**64, 2**64 + 1, 10**18, 10**19,
              12345678901234567890, 2**96, 2**127, 2**128 + 3]


def expect(op, a, b=None):
    try:
        r = OPS[op](a) if b is None else OPS[op](a, b)
    except (ArithmeticError, ValueError) as e:
        return {"error_type": type(e).__name__, "msg": str(e)}
    return repr(r)


def case(op, a, b=None):
    c = {"op": op, "a": a}
    if b is not None:
        c["b"] = b
    c["expect"] = expect(op, a, b)
    return c


def rand_int(rng, max_digits=60):
    n = rng.randint(1, max_digits)
    v = rng.randrange(10 ** (n - 1), 10 ** n) if n > 1 else rng.randrange(10)
    return -v if rng.random() < 0.5 else v


def signed(rng, v):
    return -v if rng.random() < 0.5 else v


def operand(rng):
    """A mix of small ints, int64 edges and 1..60-digit numbers."""
    k = rng.random()
    if k < 0.3:
        return signed(rng, rng.choice(BOUNDARIES) + rng.choice([-1, 0, 0, 1]))
    if k < 0.45:
        return rng.randint(-1000, 1000)
    return rand_int(rng)


def main():
    rng = random.Random(20240611)
    cases = []
    # int64 arithmetic that overflows, and edges of every operation
    for a in BOUNDARIES:
        for sa in (a, -a):
            for b in (1, -1, 3, 2**63 - 1, -2**63, 2**64):
                for op in ("+", "-", "*", "//", "%", "/"):
                    cases.append(case(op, sa, b))
            cases.append(case("neg", sa))
            cases.append(case("float", sa))
    # random mixed signs and sizes
    for _ in range(1000):
        op = rng.choice(["+", "-", "*", "//", "%", "/"])
        cases.append(case(op, operand(rng), operand(rng)))
    # division by zero, all spellings
    for op in ("//", "%", "/"):
        for a in (0, 5, -5, 10**30, -10**30):
            cases.append(case(op, a, 0))
    # powers: small exponents on big and small bases, negative exponents
    for _ in range(300):
        base = operand(rng) if rng.random() < 0.5 else rng.randint(-20, 20)
        exp = rng.randint(-5, 12) if abs(base) > 10**12 else rng.randint(-80, 80)
        cases.append(case("**", base, exp))
    for base, exp in [(2, 100), (2, 64), (2, 63), (-2, 63), (-2, 64), (10, 40), (0, 0), (0, 5),
                      (1, 10**30), (-1, 10**30), (-1, 10**30 + 1), (0, 10**30), (3, 0),
                      (0, -1), (0, -10**30), (2, -10**30), (-1, -10**30 - 1), (10**400, -1),
                      (12345678901234567890, -1), (2, -1074), (2, -1075), (7, -3)]:
        cases.append(case("**", base, exp))
    # true division: exact-halfway, subnormal, near-overflow and big/big quotients
    for k in (1, 3, 7, 2**40 + 1, 10**20 + 7):
        for m in (2**53 + 1, 2**53 + 3, 2**54 + 2, 2**54 + 6, 2**60 + 2**7, 2**60 + 2**7 + 1):
            cases.append(case("/", m * k, k))
            cases.append(case("/", -m * k, k))
    for _ in range(100):
        a, b = rand_int(rng, 330), rand_int(rng, 330)
        if b:
            cases.append(case("/", a, b))
    for a, b in [(1, 2**1074), (1, 2**1075), (3, 2**1075), (1, 3 * 2**1073), (2**1024, 1),
                 (2**1024 - 2**970, 1), (2**1024 - 2**970 - 1, 1), (2**1025, 2), (2**2000, 2**976),
                 (10**400, 10**399), (1, 10**400), (-1, 10**400), (0, -10**30), (10**30, -1),
                 (2**1023 * 3, 3), (5, 10**330), (10**330, 7)]:
        cases.append(case("/", a, b))
    # float(): rounding ties, sticky bits, overflow edge
    for v in (2**53 + 1, (2**53 + 1) * 2**100, (2**53 + 3) * 2**100, (2**54 + 1) * 2**99 + 1,
              2**1024 - 2**970, 2**1024 - 2**970 - 1, 2**1024, 10**308, 10**309, 10**400,
              179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368):
        cases.append(case("float", v))
        cases.append(case("float", -v))
    for _ in range(100):
        cases.append(case("float", rand_int(rng, 320)))
    for _ in range(100):
        cases.append(case("neg", rand_int(rng)))
    # bools take part as ints
    for op in ("+", "-", "*", "//", "%", "/", "**"):
        cases.append(case(op, True, 2**64))
        cases.append(case(op, 2**64, True))
    # chatfmt limits: refused before any work
    for a, b in [(2, 10**9), (10, 10**30), (-3, 2**64), (2**64, 10**8)]:
        cases.append({"op": "**", "a": a, "b": b, "expect": {"error_type": "LimitError"}})
    for c in cases:
        sys.stdout.write(json.dumps(c) + "\n")


if __name__ == "__main__":
    main()
