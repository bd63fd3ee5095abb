#!/usr/bin/env python3
"""schema_pairs.py — (JSON Schema, JSON text) pairs over the keywords the grammar
converter covers, valid and invalid, labelled by Python's jsonschema (Draft 2020-12,
formats checked). Deterministic for a seed.

  python3 tests/grammar/schema_pairs.py [--seed N] [--schemas N] > pairs.jsonl

Each line: {"schema_id": K, "schema": {...}, "text": "...", "valid": bool, "kind": "..."}.
Instances are written as json.dumps writes them, object members in the schema's
property order (the order the grammar asks for, and the one templates print).
"""
import argparse
import json
import random
import sys

try:
    import jsonschema
except ImportError:   # Debian's python3-jsonschema beside another python3
    sys.path.append("/usr/lib/python3/dist-packages")
    import jsonschema

PATTERNS = {  # pattern -> (strings that match, strings that do not)
    "^[a-z]+$": (["abc", "z", "hello"], ["ABC", "ab1", ""]),
    "^[A-Z]{2,3}-[0-9]{3}$": (["AB-123", "XYZ-000"], ["A-123", "ABCD-123", "AB-12"]),
    "^\\d{3}-\\d{4}$": (["555-1234", "000-0000"], ["5551234", "55-1234"]),
    "^(foo|bar)baz$": (["foobaz", "barbaz"], ["bazbaz", "foobar", "foo"]),
    "^[^@ ]+@[^@ ]+\\.[a-z]{2,}$": (["a@b.co", "x.y@host.org"], ["a@b", "@b.com", "a b@c.de"]),
    "ab+c": (["abc", "xxabbbcyy", "abbc"], ["ac", "abx", "bc"]),
    "^\\w+$": (["word_1", "A"], ["two words", "", "dash-ed"]),
    "^[0-9a-f]{8}$": (["deadbeef", "01234567"], ["DEADBEEF", "0123456", "0123456789"]),
    "^v[0-9]+(\\.[0-9]+)*$": (["v1", "v1.2.3"], ["1.2", "v1.", "v"]),
    "^[\"'].*[\"']$": (["\"quoted\"", "'x'"], ["plain", "\"open"]),
}
FORMATS = {
    "date": (["2024-01-31", "1999-12-01"], ["2024-13-01", "24-01-01", "2024-1-1"]),
    "time": (["12:30:00Z", "23:59:59+02:00", "00:00:00.5Z"], ["25:00:00Z", "12:30Z", "12:30:00"]),
    "date-time": (["2024-01-31T12:30:00Z", "2024-06-01t00:00:00-05:00"], ["2024-01-31 12:30:00Z", "2024-01-31T12:30:00", "2024-01-31"]),
    "uuid": (["123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000"],
             ["123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456", "zz3e4567-e89b-12d3-a456-426614174000"]),
}
WORDS = ["alpha", "beta", "gamma", "delta", "Paris", "naïve", "東京", "a \"quote\"", "back\\slash", "tab\there", "x"]
KEYS = ["city", "days", "unit", "count", "name", "tags", "limit", "query", "mode", "id", "c", "ci"]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    # ---- schemas ----
    def schema(self, depth=0):
        r = self.r
        kinds = ["string", "string_len", "pattern", "format", "enum", "integer", "int_range", "number", "boolean",
                 "null", "const", "type_list", "nullable"]
        if depth < 3:
            kinds += ["object", "object", "object_closed", "object_addl_schema", "array", "array_bounds", "prefix",
                      "anyof", "oneof", "allof"]
        if depth == 0:   # "#/..." pointers resolve against the document root
            kinds += ["ref", "ref"]
        k = r.choice(kinds)
        if k == "string": return {"type": "string"}
        if k == "string_len":
            lo = r.randint(0, 3)
            return {"type": "string", "minLength": lo, "maxLength": lo + r.randint(0, 5)}
        if k == "pattern": return {"type": "string", "pattern": r.choice(list(PATTERNS))}
        if k == "format": return {"type": "string", "format": r.choice(list(FORMATS))}
        if k == "enum": return {"enum": r.sample(["red", "green", "blue", 1, 2.5, None, True, "x y"], r.randint(1, 4))}
        if k == "integer": return {"type": "integer"}
        if k == "int_range":
            lo = r.choice([-1000, -15, -1, 0, 1, 7, 10, 99, 100, 250])
            s = {"type": "integer"}
            which = r.choice(["min", "max", "both", "exclusive"])
            if which in ("min", "both"): s["minimum"] = lo
            if which in ("max", "both"): s["maximum"] = lo + r.choice([0, 1, 9, 10, 55, 900, 12345])
            if which == "exclusive":
                s["exclusiveMinimum"] = lo
                s["exclusiveMaximum"] = lo + r.choice([2, 11, 101])
            return s
        if k == "number": return {"type": "number"}
        if k == "boolean": return {"type": "boolean"}
        if k == "null": return {"type": "null"}
        if k == "const": return {"const": r.choice(["fixed", 42, {"a": [1, 2]}, [True, None], "ü"])}
        if k == "type_list": return {"type": r.sample(["string", "integer", "null", "boolean", "number"], 2)}
        if k == "nullable":
            s = self.schema(depth + 1)
            if "$defs" in s: return s
            s["nullable"] = True
            s.setdefault("type", "string") if "anyOf" not in s and "const" not in s and "enum" not in s else None
            return s
        if k.startswith("object"):
            keys = r.sample(KEYS, r.randint(1, 4))
            props = {key: self.sub(depth) for key in keys}
            s = {"type": "object", "properties": props}
            req = [key for key in keys if r.random() < 0.5]
            if req: s["required"] = req
            if k == "object_closed": s["additionalProperties"] = False
            if k == "object_addl_schema": s["additionalProperties"] = {"type": "integer"}
            return s
        if k == "array": return {"type": "array", "items": self.sub(depth)}
        if k == "array_bounds":
            lo = r.randint(0, 2)
            return {"type": "array", "items": self.sub(depth), "minItems": lo, "maxItems": lo + r.randint(0, 3)}
        if k == "prefix":
            s = {"type": "array", "prefixItems": [self.sub(depth) for _ in range(r.randint(1, 3))]}
            if r.random() < 0.5: s["items"] = False
            if r.random() < 0.3: s["minItems"] = 1
            return s
        if k == "anyof":
            return {"anyOf": [self.sub(depth) for _ in range(r.randint(2, 3))]}
        if k == "oneof":
            # as tool schemas use it: one branch per kind of value; now and then
            # overlapping branches (whose "exactly one" the grammar relaxes)
            if r.random() < 0.1:
                return {"oneOf": [self.sub(depth) for _ in range(2)]}
            branches = []
            for t in r.sample(["string", "integer", "boolean", "null", "object", "array"], r.randint(2, 3)):
                while True:
                    b = self.sub(depth)
                    if self.kind_of(b) == {t}:
                        break
                branches.append(b)
            return {"oneOf": branches}
        if k == "allof":
            a, b = r.sample(KEYS, 2)
            return {"allOf": [{"type": "object", "properties": {a: {"type": "string"}}, "required": [a]},
                              {"properties": {b: {"type": "integer"}}}]}
        if k == "ref":
            if r.random() < 0.5:   # recursive: a tree
                return {"$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["value"]}},
                        "$ref": "#/$defs/node"}
            return {"definitions": {"item": self.sub(depth)}, "type": "object",
                    "properties": {"first": {"$ref": "#/definitions/item"}, "second": {"$ref": "#/definitions/item"}},
                    "required": ["first"]}
        raise AssertionError(k)

    def kind_of(self, s):
        """The kinds of JSON value a generated schema accepts (None: unknown)."""
        if not isinstance(s, dict) or "nullable" in s: return None
        if "const" in s: vals = [s["const"]]
        elif "enum" in s: vals = s["enum"]
        else: vals = None
        if vals is not None:
            kinds = set()
            for v in vals:
                kinds.add("null" if v is None else "boolean" if isinstance(v, bool) else "integer" if isinstance(v, int)
                          else "number" if isinstance(v, float) else "string" if isinstance(v, str)
                          else "array" if isinstance(v, list) else "object")
            return kinds
        t = s.get("type")
        if isinstance(t, str): return {t}
        if "allOf" in s: return {"object"}
        return None

    def sub(self, depth):
        s = self.schema(depth + 1)
        return s

    # ---- instances ----
    def value(self, s, defs, depth=0, valid=True):
        """A value meant to be valid (or invalid) for s; jsonschema has the last word."""
        r = self.r
        if depth > 6: return None
        if "$ref" in s:
            ref = s["$ref"].split("/")[-1]
            return self.value(defs.get(ref, {}), defs, depth + 1, valid)
        if "const" in s: return s["const"] if valid else r.choice(["other", 7, None])
        if "enum" in s: return r.choice(s["enum"]) if valid else r.choice(["purple", 3, False])
        for key in ("anyOf", "oneOf"):
            if key in s: return self.value(r.choice(s[key]), defs, depth + 1, valid)
        if "allOf" in s:   # the parts' properties merged, in order
            merged = {"type": "object", "properties": {}, "required": []}
            for part in s["allOf"]:
                merged["properties"].update(part.get("properties", {}))
                merged["required"] += part.get("required", [])
            return self.value(merged, defs, depth + 1, valid)
        t = s.get("type")
        if isinstance(t, list): t = r.choice(t)
        if s.get("nullable") and r.random() < 0.3: return None if valid else 12.5
        if not valid and r.random() < 0.35:   # the wrong type
            return r.choice([{"a": 1}, [1], "text", 5, 2.5, True, None])
        if t == "string":
            if "pattern" in s:
                ok, bad = PATTERNS[s["pattern"]]
                return r.choice(ok if valid else bad)
            if "format" in s:
                ok, bad = FORMATS[s["format"]]
                return r.choice(ok if valid else bad)
            lo, hi = s.get("minLength", 0), s.get("maxLength", 8)
            n = r.randint(lo, max(lo, hi)) if valid else r.choice([max(lo - 1, 0), hi + 1])
            word = "".join(r.choice(WORDS) for _ in range(3))
            return (word * (n // max(len(word), 1) + 1))[:n]
        if t == "integer":
            lo = s.get("minimum", s.get("exclusiveMinimum", -50) + (1 if "exclusiveMinimum" in s else 0))
            hi = s.get("maximum", s.get("exclusiveMaximum", lo + 100) - (1 if "exclusiveMaximum" in s else 0))
            if valid: return r.randint(lo, max(lo, hi))
            return r.choice([lo - 1, hi + 1, lo - 1000, hi + 123457, 1.5])
        if t == "number": return r.choice([0, -1.5, 3.25, 1e-07, 12345.678, 7]) if valid else "1.5"
        if t == "boolean": return r.choice([True, False]) if valid else "true"
        if t == "null": return None if valid else 0
        if t == "object":
            props = s.get("properties", {})
            req = set(s.get("required", []))
            out = {}
            for key, sub in props.items():
                if key in req or r.random() < 0.6:
                    out[key] = self.value(sub, defs, depth + 1, True)
            if not valid:
                choice = r.random()
                if req and choice < 0.4: out.pop(r.choice(sorted(req)), None)
                elif props and choice < 0.8:
                    key = r.choice(list(props))
                    out[key] = self.value(props[key], defs, depth + 1, False)
                else: out["extra_key"] = r.choice(["v", 1.5])
            elif s.get("additionalProperties") is not False and r.random() < 0.2:
                addl = s.get("additionalProperties")
                out["zz_more"] = self.value(addl, defs, depth + 1, True) if isinstance(addl, dict) else "more"
            # members in the schema's order, extra ones after
            return {k: out[k] for k in list(props) + [k for k in out if k not in props] if k in out}
        if t == "array":
            if "prefixItems" in s:
                pre = s["prefixItems"]
                n = r.randint(s.get("minItems", 0), len(pre))
                out = [self.value(p, defs, depth + 1, True) for p in pre[:n]]
                if not valid:
                    if out: out[0] = self.value(pre[0], defs, depth + 1, False)
                    else: out = [self.value(pre[0], defs, depth + 1, False)]
                    if r.random() < 0.5: out = [self.value(p, defs, depth + 1, True) for p in pre] + ["extra"]
                return out
            item = s.get("items", {})
            lo, hi = s.get("minItems", 0), s.get("maxItems", 3)
            n = r.randint(lo, max(lo, hi))
            out = [self.value(item, defs, depth + 1, True) for _ in range(n)]
            if not valid:
                if r.random() < 0.5 and "maxItems" in s: out = out + [self.value(item, defs, depth + 1, True)] * (hi - n + 1)
                elif out: out[0] = self.value(item, defs, depth + 1, False)
                else: out = [self.value(item, defs, depth + 1, False)]
            return out
        # no type: anything
        return r.choice(["free", 1, None, {"k": "v"}])


def openapi_nullable(node):
    """`nullable: true` as OpenAPI 3.0 defines it: anyOf [the schema, null]."""
    if isinstance(node, list): return [openapi_nullable(v) for v in node]
    if not isinstance(node, dict): return node
    out = {k: openapi_nullable(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable") is True:
        defs = {k: out.pop(k) for k in ("$defs", "definitions") if k in out}
        return dict(defs, anyOf=[out, {"type": "null"}])
    return out


def pairs(seed, nschemas):
    g = Gen(seed)
    fc = jsonschema.Draft202012Validator.FORMAT_CHECKER
    out = []
    for sid in range(nschemas):
        s = g.schema()
        defs = dict(s.get("$defs", {}), **s.get("definitions", {}))
        # nullable is OpenAPI's keyword (JSON Schema ignores it): labelled as
        # OpenAPI means it, null allowed too
        v = jsonschema.Draft202012Validator(openapi_nullable(s), format_checker=fc)
        seen = set()
        for i in range(8):
            inst = g.value(s, defs, valid=i % 2 == 0)
            text = json.dumps(inst, ensure_ascii=False)
            if text in seen: continue
            seen.add(text)
            out.append({"schema_id": sid, "schema": s, "text": text, "valid": bool(v.is_valid(inst)),
                        "kind": "valid-intent" if i % 2 == 0 else "invalid-intent"})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--schemas", type=int, default=330)
    a = ap.parse_args()
    for p in pairs(a.seed, a.schemas):
        sys.stdout.write(json.dumps(p, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
