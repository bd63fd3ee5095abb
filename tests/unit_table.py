"""write_table(name, rows): a generated unit table, tests/unit/NAME.jsonl, one row a line
(the format tests/unit/README.md describes), for the gen_*_table.py scripts; raw_rows(name,
groups): the rows of (prefix, [(template, context), ...]) groups, rendered raw, with the ids
NAME-PREFIX-NNN."""
import json
import os


def write_table(name, rows):
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unit", name + ".jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def raw_rows(name, groups):
    for prefix, table in groups:
        for i, (text, ctx) in enumerate(table, 1):
            yield {"id": "%s-%s-%03d" % (name, prefix, i), "template_text": text, "context": ctx, "raw": True}
