#!/usr/bin/env python3
"""schema_agreement.py — chatfmt's JSON Schema grammars against Python's jsonschema.

  python3 tests/grammar/schema_agreement.py CHATFMT LLAMA_CHECK [--lark [--lark-every K]] [--llama-converter] [-v]

The pairs of schema_pairs.py (seeded: the same every run) are labelled valid or
invalid by jsonschema. For each schema, `chatfmt grammar --schema-batch` gives a
GBNF grammar, which llama.cpp's own grammar engine (LLAMA_CHECK, built by
llama_engine.sh) parses and runs over each instance's text; with --lark the Lark
grammar goes through python-lark too; with --llama-converter llama.cpp's
json_schema_to_grammar is measured on the same pairs (a figure, not a check).

A disagreement is explained when the grammar accepts an instance jsonschema
rejects and a relaxed schema (what docs/grammar.md says the grammar relaxes:
oneOf counted as anyOf, a date's day not checked against its month, ...)
accepts it too. Fails when a grammar does not parse, when it rejects a valid
instance, when a disagreement is unexplained, or when agreement < 99.5%.
Prints one line per grammar syntax: "gbnf AGREE/N ..." and "lark AGREE/N ...".
"""
import copy
import json
import os
import subprocess
import sys

try:
    import jsonschema
except ImportError:   # Debian's python3-jsonschema beside another python3
    sys.path.append("/usr/lib/python3/dist-packages")
    import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import schema_pairs  # noqa: E402

FC = jsonschema.Draft202012Validator.FORMAT_CHECKER


def relaxed(schema):
    """The schema as the grammar enforces it (docs/grammar.md, "What is relaxed")."""
    s = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if "oneOf" in node:            # "exactly one" is not counted
                node["anyOf"] = node.pop("oneOf")
            if node.get("format") in ("date", "date-time"):
                # month 01-12 and day 01-31 are checked, not the day against the month
                node.pop("format")
                day = "(0[1-9]|[12][0-9]|3[01])"
                date = "[0-9]{4}-(0[1-9]|1[0-2])-" + day
                node["pattern"] = "^" + date + ("$" if node.get("type") != "date-time" and True else "")
                if schema_fmt(node) == "date-time":
                    node["pattern"] = "^" + date + "[Tt].*$"
            for v in list(node.values()):
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    def schema_fmt(node):
        return node.get("_format")

    walk(s)
    return s


def relaxed_valid(schema, text):
    s = copy.deepcopy(schema)

    def mark(node):
        if isinstance(node, dict):
            if node.get("format") == "date-time":
                node["_format"] = "date-time"
            for v in node.values():
                mark(v)
        elif isinstance(node, list):
            for v in node:
                mark(v)

    mark(s)
    r = relaxed(schema_pairs.openapi_nullable(s))
    return jsonschema.Draft202012Validator(r, format_checker=FC).is_valid(json.loads(text))


def run_lines(cmd, lines):
    r = subprocess.run(cmd, input="".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines),
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"FAIL schema_agreement ({cmd[0]} exited {r.returncode}: {r.stderr[-300:]})")
    return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


def grammars(chatfmt, schemas, syntax):
    r = subprocess.run([chatfmt, "grammar", "--schema-batch", "-", "--syntax", syntax],
                       input="".join(json.dumps(s, ensure_ascii=False) + "\n" for s in schemas),
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"FAIL schema_agreement (chatfmt grammar --schema-batch: {r.stderr[-300:]})")
    return [json.loads(x) for x in r.stdout.splitlines()]


def load_lark():
    try:
        import lark
        return lark
    except ImportError:
        sys.path.append("/usr/lib/python3/dist-packages")   # Debian's python3-lark
        try:
            import lark
            return lark
        except ImportError:
            return None


def judge(name, pairs, accepted, verbose):
    agree = rejects_valid = relaxed_ok = unexplained = 0
    bad = []
    for p, acc in zip(pairs, accepted):
        if acc == p["valid"]:
            agree += 1
        elif not acc:
            rejects_valid += 1
            bad.append(("rejects valid", p))
        elif relaxed_valid(p["schema"], p["text"]):
            relaxed_ok += 1
        else:
            unexplained += 1
            bad.append(("accepts invalid, unexplained", p))
    n = len(pairs)
    if verbose:
        for why, p in bad[:20]:
            print(f"  {name}: {why}: schema {json.dumps(p['schema'])[:300]} text {p['text'][:200]}")
    return agree, n, rejects_valid, relaxed_ok, unexplained


def main(argv):
    verbose = "-v" in argv
    use_lark = "--lark" in argv
    converter = "--llama-converter" in argv
    args = [a for a in argv if not a.startswith("-") and not a.isdigit()]
    chatfmt, check = args[0], args[1]
    pairs = schema_pairs.pairs(26, 330)
    by_schema = {}
    for p in pairs:
        by_schema.setdefault(p["schema_id"], []).append(p)
    ids = sorted(by_schema)
    schemas = [by_schema[i][0]["schema"] for i in ids]
    ordered = [p for i in ids for p in by_schema[i]]
    failed = False

    gb = grammars(chatfmt, schemas, "gbnf")
    errors = [i for i, g in zip(ids, gb) if "grammar" not in g]
    if errors:
        print(f"FAIL schema_agreement (chatfmt refused {len(errors)} schemas, first {json.dumps(by_schema[errors[0]][0]['schema'])[:200]})")
        return 1
    res = run_lines([check], [{"grammar": g["grammar"], "texts": [p["text"] for p in by_schema[i]]} for i, g in zip(ids, gb)])
    unparsed = [i for i, r in zip(ids, res) if not r.get("parsed")]
    if unparsed:
        r0 = res[ids.index(unparsed[0])]
        print(f"FAIL schema_agreement (llama.cpp does not parse {len(unparsed)} of our grammars: {r0.get('error', '')[:200]})")
        return 1
    accepted = [a for r in res for a in r["accepted"]]
    warned = sum(1 for g in gb if g["warnings"])
    agree, n, rv, rel, unex = judge("gbnf", ordered, accepted, verbose)
    ok = rv == 0 and unex == 0 and agree >= 0.995 * n
    failed |= not ok
    print(f"{'PASS' if ok else 'FAIL'} schema_gbnf_llamacpp ({agree}/{n} = {100 * agree / n:.2f}% agree with jsonschema; "
          f"{rel} accepted invalid through a documented relaxation, {unex} unexplained, {rv} valid rejected; "
          f"{len(schemas)} schemas, {warned} with warnings)")

    if use_lark:
        lark = load_lark()
        if lark is None:
            print("SKIP schema_lark (python3-lark is not installed)")
        else:
            # python-lark takes ~0.3 s to compile a grammar: `--lark-every K` checks every
            # K-th schema (make test: 4; make bench-peers: all)
            every = int(argv[argv.index("--lark-every") + 1]) if "--lark-every" in argv else 1
            lids = ids[::every]
            lk = grammars(chatfmt, [by_schema[i][0]["schema"] for i in lids], "lark")
            acc = []
            lordered = [p for i in lids for p in by_schema[i]]
            for i, g in zip(lids, lk):
                try:
                    parser = lark.Lark(g["grammar"], start="start", parser="earley", lexer="dynamic")
                except Exception as e:  # noqa: BLE001 - a grammar lark refuses is the failure reported
                    print(f"FAIL schema_lark (python-lark refuses the grammar of schema {i}: {str(e)[:200]})")
                    return 1
                for p in by_schema[i]:
                    try:
                        parser.parse(p["text"])
                        acc.append(True)
                    except lark.exceptions.LarkError:
                        acc.append(False)
            agree, n, rv, rel, unex = judge("lark", lordered, acc, verbose)
            ok = rv == 0 and unex == 0 and agree >= 0.995 * n
            failed |= not ok
            print(f"{'PASS' if ok else 'FAIL'} schema_lark_python ({agree}/{n} = {100 * agree / n:.2f}% agree with jsonschema; "
                  f"{rel} through a documented relaxation, {unex} unexplained, {rv} valid rejected; {len(lids)} schemas)")

    if converter:
        res = run_lines([check], [{"schema": by_schema[i][0]["schema"], "texts": [p["text"] for p in by_schema[i]]} for i in ids])
        acc, refused = [], 0
        for i, r in zip(ids, res):
            if not r.get("parsed"):
                refused += 1
                acc += [None] * len(by_schema[i])
            else:
                acc += r["accepted"]
        agree = sum(1 for p, a in zip(ordered, acc) if a == p["valid"])
        rejects = sum(1 for p, a in zip(ordered, acc) if a is False and p["valid"])
        print(f"llama.cpp json_schema_to_grammar: {agree}/{len(ordered)} = {100 * agree / len(ordered):.2f}% agree with "
              f"jsonschema ({rejects} valid rejected, {refused} schemas refused)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
