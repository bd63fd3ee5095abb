#!/usr/bin/env python3
"""case_mapping_check.py CHATFMT — str.upper/lower/casefold/title/capitalize/
swapcase and the upper/lower/capitalize/title filters, rendered by chatfmt over EVERY code point
(U+0000..U+10FFFF but the surrogates), byte for byte against this python3's
own str methods (Jinja2's upper/lower/capitalize filters are the str methods;
its title filter comes from jinja2 itself).

Each method runs on three strings built from all code points:
  plain     every code point in order, one after another
  mixed     each one between ASCII runs of 1..17 letters (the engine maps
            ASCII eight bytes a step and two-byte UTF-8 through a table: the
            runs put every character at every alignment to those steps)
  sigma     each one as "A\u03a3" + c + "\u03a3 " (the final-sigma rule of
            lower() looks at the neighbours: every code point is one)
Prints `PASS case_mapping (N strings x M calls, K code points)` or
`FAIL case_mapping (...)` with the first difference.
"""
import json
import os
import subprocess
import sys
import tempfile

CALLS = ["s.upper()", "s.lower()", "s.casefold()", "s.title()", "s.capitalize()", "s.swapcase()",
         "s|upper", "s|lower", "s|capitalize", "s|title"]


def python_result(call, s):
    if call == "s|title":   # Jinja2's own (a regex split, then upper + lower a word)
        from jinja2.filters import do_title
        return do_title(s)
    method = call[2:-2] if call.startswith("s.") else call[2:]
    return getattr(s, method)()


def strings():
    cps = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    letters = "aBcDeFgHiJkLmNoPqRsTuVwXyZ"
    mixed = []
    for k, ch in enumerate(cps):
        run = 1 + k % 17
        mixed.append((letters * 2)[k % 26:k % 26 + run] + ch)
    return len(cps), {
        "plain": "".join(cps),
        "mixed": "".join(mixed),
        "sigma": "".join("A\u03a3" + ch + "\u03a3 " for ch in cps),
    }


def first_difference(got, want):
    n = 0
    while n < min(len(got), len(want)) and got[n] == want[n]:
        n += 1
    return "at byte %d: chatfmt %r, python %r" % (n, got[max(0, n - 8):n + 8], want[max(0, n - 8):n + 8])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    chatfmt = sys.argv[1]
    try:
        import jinja2.filters  # noqa: F401
    except ImportError:
        CALLS.remove("s|title")   # (no reference for it: the str methods are still checked)
    count, texts = strings()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, s in texts.items():
            ctx = os.path.join(tmp, name + ".json")
            with open(ctx, "w", encoding="utf-8") as f:
                json.dump({"s": s}, f, ensure_ascii=False)
            for call in CALLS:
                template = os.path.join(tmp, "t.jinja")
                with open(template, "w") as f:
                    f.write("{{ %s }}" % call)
                # (the budget is the work limit's business, not this check's)
                run = subprocess.run([chatfmt, "render", "--raw", "--max-steps", "1000000000", template, ctx],
                                     capture_output=True)
                want = python_result(call, s).encode("utf-8")
                if run.returncode != 0:
                    failures.append("%s on %s: exit %d: %s" % (call, name, run.returncode,
                                                              run.stderr.decode("utf-8", "replace")[:200]))
                elif run.stdout != want:
                    failures.append("%s on %s: %s" % (call, name, first_difference(run.stdout, want)))
    figures = "%d strings x %d calls, %d code points" % (len(texts), len(CALLS), count)
    if failures:
        print("FAIL case_mapping (%s; %d differ)" % (figures, len(failures)))
        for line in failures[:10]:
            print("    " + line)
        sys.exit(1)
    print("PASS case_mapping (%s, identical to python3 %d.%d)" % (figures, *sys.version_info[:2]))


if __name__ == "__main__":
    main()
