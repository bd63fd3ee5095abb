#!/usr/bin/env python3
"""Generate src/engine/unicode_tables.c from this Python's own str methods.

Usage: python3 tools/gen_unicode.py > src/engine/unicode_tables.c

Every table is derived empirically by calling Python 3.11's str methods on
each code point 0..0x10FFFF, so the C side reproduces exactly what CPython's
unicodedata version says (recorded in the output header).

How each property is derived (single-character strings unless noted):
  space, alpha, decimal, digit, numeric, upper, lower, printable: chr(c).isX()
  title:    chr(c).istitle() and not chr(c).isupper()  (istitle is upper|title)
  idstart:  chr(c).isidentifier()
  idcont:   ('a' + chr(c)).isidentifier()
  linebreak: ('a' + chr(c) + 'b').splitlines() has 2 parts
  name:     chr(c) matches Jinja2's lexer rule for names (jinja2._identifier:
            \w plus the other identifier characters); a run of them is a
            name token, which Jinja2 then requires to be str.isidentifier()
  cased (CPython _PyUnicode_IsCased): ('A' + c + 'A').title() ends with 'a',
            because str.title() lowercases a letter exactly when the previous
            code point is cased.
  case-ignorable (_PyUnicode_IsCaseIgnorable): from lower()'s final-sigma
            rule, which skips case-ignorable code points backwards:
              c not cased: ('A' + c + 'Σ').lower() ends with 'ς' iff ignorable
              c cased:     (' ' + c + 'Σ').lower() ends with 'ς' iff NOT ignorable
Case mappings: chr(c).upper(), .lower(), .title(), .casefold() (full,
SpecialCasing included; a lone 'Σ' lowers to 'σ', the context rule for final
sigma lives in methods.c).

Encoding:
  * properties: a direct array for code points below 0x800, then one sorted
    table of (start code point, property bits); the bits hold from `start` up
    to the next entry's start. Binary search.
  * case mappings: runs of code points sharing one "case record" (deltas for
    upper/lower/title/fold), with stride 1 or 2 (Latin Extended alternates
    upper/lower), binary searched by start. Mappings that are not a single
    code point are flagged in the record and stored in a side table.
"""
import re
import sys
import unicodedata

from jinja2._identifier import pattern as _jinja_name_chars   # noqa: E402 (a generator: jinja2 is on every machine)

JINJA_NAME = re.compile(_jinja_name_chars.pattern)   # one character of a name token

N = 0x110000
SURROGATES = range(0xD800, 0xE000)

PROPS = ["SPACE", "ALPHA", "DECIMAL", "DIGIT", "NUMERIC", "UPPER", "LOWER",
         "TITLE", "CASED", "CASE_IGNORABLE", "PRINTABLE", "ID_START",
         "ID_CONTINUE", "LINEBREAK", "NAME"]
BIT = {name: 1 << i for i, name in enumerate(PROPS)}
KINDS = ["upper", "lower", "title", "fold"]
DIRECT_LIMIT = 0x800


def is_cased(ch):
    return ("A" + ch + "A").title()[-1] == "a"


def is_case_ignorable(ch, cased):
    if cased:
        return (" " + ch + "\u03a3").lower()[-1] != "\u03c2"
    return ("A" + ch + "\u03a3").lower()[-1] == "\u03c2"


def prop_bits(c):
    ch = chr(c)
    cased = is_cased(ch)
    flags = {
        "SPACE": ch.isspace(),
        "ALPHA": ch.isalpha(),
        "DECIMAL": ch.isdecimal(),
        "DIGIT": ch.isdigit(),
        "NUMERIC": ch.isnumeric(),
        "UPPER": ch.isupper(),
        "LOWER": ch.islower(),
        "TITLE": ch.istitle() and not ch.isupper(),
        "CASED": cased,
        "CASE_IGNORABLE": is_case_ignorable(ch, cased),
        "PRINTABLE": ch.isprintable(),
        "ID_START": ch.isidentifier(),
        "ID_CONTINUE": ("a" + ch).isidentifier(),
        "LINEBREAK": len(("a" + ch + "b").splitlines()) == 2,
        "NAME": JINJA_NAME.fullmatch(ch) is not None,
    }
    bits = 0
    for name, on in flags.items():
        if on:
            bits |= BIT[name]
    return bits


def case_maps(c):
    ch = chr(c)
    return [ch.upper(), ch.lower(), ch.title(), ch.casefold()]


def main():
    out = []
    w = out.append

    # ---- properties ----
    bits_of = [0] * N
    for c in range(N):
        if c in SURROGATES:
            continue  # never decoded from valid UTF-8; keep their neighbours' runs
        bits_of[c] = prop_bits(c)
    for c in SURROGATES:
        bits_of[c] = bits_of[0xD7FF]
    starts = []
    prev = None
    for c in range(N):
        if bits_of[c] != prev:
            starts.append((c, bits_of[c]))
            prev = bits_of[c]

    # ---- case mappings ----
    records = {}       # (deltas..., special_mask) -> index
    record_list = []
    special = []       # (cp, kind, [cps])
    mapped = []        # (cp, record index)
    for c in range(N):
        if c in SURROGATES:
            continue
        maps = case_maps(c)
        deltas = []
        special_mask = 0
        for k, m in enumerate(maps):
            if len(m) == 1:
                deltas.append(ord(m) - c)
            else:
                assert 1 < len(m) <= 3, (hex(c), m)
                deltas.append(0)
                special_mask |= 1 << k
                special.append((c, k, [ord(x) for x in m]))
        if special_mask == 0 and all(d == 0 for d in deltas):
            continue
        key = tuple(deltas) + (special_mask,)
        if key not in records:
            records[key] = len(record_list)
            record_list.append(key)
        mapped.append((c, records[key]))

    # greedy runs of equal records at stride 1 or 2
    runs = []  # [start, count, stride, record]
    for c, rec in mapped:
        if runs:
            r = runs[-1]
            last = r[0] + (r[1] - 1) * r[2]
            if r[3] == rec:
                if r[1] == 1 and c - r[0] in (1, 2):
                    r[2] = c - r[0]
                    r[1] = 2
                    continue
                if c == last + r[2] and r[1] < 0xFFFF:
                    r[1] += 1
                    continue
        runs.append([c, 1, 1, rec])

    w("/* unicode_tables.c — GENERATED by tools/gen_unicode.py; do not edit.\n")
    w(" * Derived from Python %s str methods, unicodedata %s.\n"
      % (sys.version.split()[0], unicodedata.unidata_version))
    w(" * %d property breaks, %d case runs, %d case records, %d special mappings. */\n"
      % (len(starts), len(runs), len(record_list), len(special)))
    w('#include "unicode_tables.h"\n\n')
    w('const char uc_unidata_version[] = "%s";\n\n' % unicodedata.unidata_version)

    # Direct table below DIRECT_LIMIT (2-byte UTF-8: Latin, Greek, Cyrillic,
    # Hebrew, Arabic...), binary search above it.
    w("const uint16_t uc_direct_props[%d] = {\n" % DIRECT_LIMIT)
    emit_numbers(w, ["0x%x" % bits_of[c] for c in range(DIRECT_LIMIT)], per_line=12)
    w("};\n")
    # Upper bounds that let hot predicates reject most text without a search.
    w("const uint32_t uc_space_max = 0x%x;\n"
      % max(c for c in range(N) if bits_of[c] & BIT["SPACE"]))
    w("const uint32_t uc_linebreak_max = 0x%x;\n\n"
      % max(c for c in range(N) if bits_of[c] & BIT["LINEBREAK"]))

    w("const size_t uc_prop_count = %d;\n" % len(starts))
    w("const uint32_t uc_prop_start[%d] = {\n" % len(starts))
    emit_numbers(w, ["0x%x" % s for s, _ in starts])
    w("};\n")
    w("const uint16_t uc_prop_bits[%d] = {\n" % len(starts))
    emit_numbers(w, ["0x%x" % b for _, b in starts])
    w("};\n\n")

    w("const UcCaseRecord uc_case_records[%d] = {\n" % len(record_list))
    for rec in record_list:
        w("    {{%d, %d, %d, %d}, %d},\n" % rec)
    w("};\n\n")

    w("const size_t uc_case_run_count = %d;\n" % len(runs))
    w("const UcCaseRun uc_case_runs[%d] = {\n" % len(runs))
    emit_numbers(w, ["{0x%x,%d,%d,%d}" % tuple(r) for r in runs], per_line=4)
    w("};\n\n")

    special.sort()
    w("const size_t uc_case_special_count = %d;\n" % len(special))
    w("const UcCaseSpecial uc_case_special[%d] = {\n" % len(special))
    for c, k, cps in special:
        padded = cps + [0] * (3 - len(cps))
        w("    {0x%x, %d, %d, {0x%x, 0x%x, 0x%x}},  /* %s */\n"
          % (c, k, len(cps), padded[0], padded[1], padded[2], KINDS[k]))
    w("};\n")

    sys.stdout.write("".join(out))


def emit_numbers(w, items, per_line=10):
    for i in range(0, len(items), per_line):
        w("    " + ",".join(items[i:i + per_line]) + ",\n")


if __name__ == "__main__":
    main()
