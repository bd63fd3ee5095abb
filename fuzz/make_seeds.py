#!/usr/bin/env python3
"""make_seeds.py OUTDIR [SHARED] — seed corpora for the fuzzers in fuzz/.

Writes OUTDIR/render, OUTDIR/json, OUTDIR/marshal, OUTDIR/reply and OUTDIR/loaders, one
file per input (named by content hash), from:
  render   shared/seeds/*.jinja, shared/corpus/templates/*.jinja, the
           templates of tests/unit/*.jsonl
  json     shared/conversations/*.json, tests/data/json_cases.jsonl inputs,
           contexts of tests/unit/*.jsonl
  marshal  the same contexts as Python's marshal.dumps(context, 4) (the
           Python binding's encoding for cf_render_data)
  reply    tests/reply_cases/*.jsonl replies, with the two option bytes
           fuzz_reply.c reads (format, reasoning, tools; chunking seed)
  loaders  the GGUF fixtures of tests/make_gguf.py, tokenizer_config.json
           files built around the seed templates, the raw web copies in
           shared/seeds/raw
and, for each fuzzer NAME, the crash inputs kept in tests/hostile/regress/NAME/.
"""
import glob
import hashlib
import json
import marshal
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FORMATS = {"plain": 0, "glm45": 1, "hermes": 2, "command-a": 3, "harmony": 4, "llama3-json": 5,
           "pythonic": 6, "mistral": 7, "functionary-v31": 8, "functionary-v32": 9, "functools": 10,
           "gemma4": 11, "xlam": 12}   # cf_reply_format


def format_bits(name):
    """fuzz_reply.c's byte 0 for a format: its low two bits, the rest in bits 4-7."""
    f = FORMATS.get(name, 0)
    return (f & 3) | (f >> 2) << 4


def put(outdir, kind, data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    d = os.path.join(outdir, kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def jsonl(pattern):
    for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    shared = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "..", "shared")

    templates = sorted(glob.glob(os.path.join(shared, "seeds", "*.jinja")) +
                       glob.glob(os.path.join(shared, "corpus", "templates", "*.jinja")))
    for path in templates:
        put(out, "render", read(path))
    for case in jsonl("tests/unit/*.jsonl"):
        if case.get("template_text"):
            put(out, "render", case["template_text"])
        if isinstance(case.get("context"), dict):
            put(out, "json", json.dumps(case["context"], ensure_ascii=False))
            put(out, "marshal", marshal.dumps(case["context"], 4))

    for path in sorted(glob.glob(os.path.join(shared, "conversations", "*.json"))):
        put(out, "json", read(path))
        put(out, "marshal", marshal.dumps(json.loads(read(path)), 4))
    for case in jsonl("tests/data/json_cases.jsonl"):
        if case.get("op") == "loads" and "hex" in case:
            put(out, "json", bytes.fromhex(case["hex"]))

    for case in jsonl("tests/reply_cases/*.jsonl"):
        reply = bytes.fromhex(case["reply_hex"]) if case.get("reply_hex") else case.get("reply", "").encode()
        flags = format_bits(case.get("format")) | (8 if case.get("tools") else 0)
        tail = case.get("tail") or ""
        if tail.rstrip().endswith(("<think>", "<|START_THINKING|>", "[THINK]", "<|message|>")):
            flags |= 4
        put(out, "reply", bytes([flags, len(reply) & 0xFF]) + reply)

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(ROOT, "tests", "make_gguf.py"), tmp],
                       check=True, stdout=subprocess.DEVNULL)
        for path in sorted(glob.glob(os.path.join(tmp, "*.gguf"))):
            put(out, "loaders", read(path))
    for path in sorted(glob.glob(os.path.join(shared, "seeds", "*.jinja"))):
        text = read(path).decode("utf-8")
        put(out, "loaders", text)
        put(out, "loaders", json.dumps({"chat_template": text, "bos_token": "<s>",
                                        "eos_token": {"content": "</s>", "lstrip": False},
                                        "added_tokens_decoder": {"0": {"content": "<unk>"}}}))
        put(out, "loaders", json.dumps({"chat_template": [{"name": "default", "template": text},
                                                          {"name": "tool_use", "template": text}],
                                        "extra_special_tokens": {"image_token": "<img>"}}))
    for path in sorted(glob.glob(os.path.join(shared, "seeds", "raw", "*"))):
        put(out, "loaders", read(path))
    # fuzz_builder: op bytes (0 null, 1 bool, 2 int, 3 float, 4 str, 5 list, 6 dict; see the harness)
    def s(text):
        b = text.encode()
        return bytes([4, len(b)]) + b
    put(out, "builder", bytes([5, 2, 6, 2]) + s("role") + s("user") + s("content") + s("hi \u00e9") +
        bytes([6, 1]) + s("n") + bytes([2, 7]))
    put(out, "builder", bytes([6, 3]) + s("a") + bytes([0]) + s("b") + bytes([1 | 8]) + s("a") + bytes([3, 9]))
    put(out, "builder", bytes([5, 3, 5, 1, 5, 0, 6, 0, 4, 2, 0xC3, 0xA9]))
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "hostile", "regress", "*", "*"))):
        put(out, os.path.basename(os.path.dirname(path)), read(path))


if __name__ == "__main__":
    main()
