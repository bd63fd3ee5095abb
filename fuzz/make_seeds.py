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
  reply    tests/reply_cases/*.jsonl replies and the replies of the
           peers' parser tests (shared/replies: every family llama.cpp and
           vLLM test), with the two option bytes fuzz_reply.c reads (format,
           reasoning, tools; chunking seed); a peer reply gets the format
           chatfmt finds for its template (`chatfmt caps`, when build/chatfmt
           and build/libchatfmt.so are built; plain otherwise)
  loaders  the GGUF fixtures of tests/make_gguf.py, tokenizer_config.json
           files built around the seed templates, the raw web copies in
           shared/seeds/raw
and, for each fuzzer NAME, the crash inputs kept in tests/hostile/regress/NAME/.
"""
import ctypes
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


def reply_seed(fmt, reasoning_open, tools, chunk_seed, reply):
    """A fuzz_reply.c input: byte 0 = the format (its low two bits in bits
    0-1, the rest in bits 4-7) | reasoning open (bit 2) | tools given (bit 3);
    byte 1 seeds the chunking; then the reply. Keep in step with
    LLVMFuzzerTestOneInput's decoding."""
    return bytes([(fmt & 3) | (fmt >> 2) << 4 | (4 if reasoning_open else 0) | (8 if tools else 0),
                  chunk_seed & 0xFF]) + reply


class TemplateFormats:
    """The reply format chatfmt finds for a template (`chatfmt caps`), as
    its cf_reply_format value (cf_reply_format_from_name in the library);
    plain when the binary or the library is not built."""

    def __init__(self):
        self.bin = os.environ.get("CHATFMT_BIN") or os.path.join(ROOT, "build", "chatfmt")
        self.lib = None
        try:
            self.lib = ctypes.CDLL(os.environ.get("CHATFMT_LIB") or os.path.join(ROOT, "build", "libchatfmt.so"))
            self.lib.cf_reply_format_from_name.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
            self.lib.cf_reply_format_from_name.restype = ctypes.c_bool
        except (OSError, AttributeError):
            self.lib = None
        if self.lib is None or not os.access(self.bin, os.X_OK):
            print("make_seeds: %s or the library not built: peer replies seeded as plain" % self.bin, file=sys.stderr)
            self.lib = None
        self.cache = {}

    def __call__(self, template):
        if self.lib is None or not template:
            return 0
        if template not in self.cache:
            r = subprocess.run([self.bin, "caps", template], capture_output=True, text=True)
            value = ctypes.c_int(0)
            try:
                name = json.loads(r.stdout).get("reply_format") or "plain"
                self.lib.cf_reply_format_from_name(name.encode(), ctypes.byref(value))
            except ValueError:
                pass
            self.cache[template] = value.value
        return self.cache[template]


def peer_replies(out, shared):
    """The replies of llama.cpp's and vLLM's parser tests, each with the
    format of its template and the reasoning state the test gave."""
    formats = TemplateFormats()
    for name in ("cases.jsonl", "cases_option_dependent.jsonl"):
        path = os.path.join(shared, "replies", name)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                case = json.loads(line)
                template = None
                for d in ("templates", "more"):
                    p = os.path.join(shared, "corpus", d, case.get("template") or "")
                    if case.get("template") and os.path.exists(p):
                        template = p
                reply = case["text"].encode("utf-8")
                put(out, "reply", reply_seed(formats(template), case.get("reasoning_open") is True,
                                             bool(case.get("tools")), len(reply), reply))


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
    peer_replies(out, shared)

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
