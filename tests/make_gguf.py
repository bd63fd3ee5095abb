#!/usr/bin/env python3
"""make_gguf.py OUTDIR — write the GGUF test fixtures and what loading each must give.

A minimal GGUF writer (little endian; versions 1-3 differ only in the width of
counts, v1 using u32) and a fixed set of files: well-formed v2/v3 models with
chat templates and special tokens among metadata of every value type (nested
arrays included) and a tensor section we must never read, plus hostile files
(truncated, absurd lengths and counts, wrong types, duplicate keys, bad UTF-8,
deep nesting, unknown types, big-endian, version 1).

For every fixture NAME.gguf the expectations are written next to it:
  NAME.gguf.error        substring of the error message (file absent: must load)
  NAME.gguf.offset       byte offset the error must report
  NAME.gguf.T.tmpl       text of template T ("default", "tool_use", ...)
  NAME.gguf.VAR.tok      special token variable VAR (bos_token, eos_token, ...)
  NAME.gguf.notok        special token variables that must NOT be set, one a line
  NAME.gguf.warn         substring of the warnings
  NAME.gguf.kvend        offset where the metadata ends (truncation test)
The test (tests/test_loader.c) compares what the C loader reads with these.
"""
import os
import struct
import sys

U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
FMT = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f",
       BOOL: "<?", U64: "<Q", I64: "<q", F64: "<d"}


def gstr(s, v1=False):
    b = s if isinstance(s, bytes) else s.encode("utf-8")
    return struct.pack("<I" if v1 else "<Q", len(b)) + b


def gval(t, v, v1=False):
    if t == STR:
        return gstr(v, v1)
    if t == ARR:
        et, items = v
        head = struct.pack("<I", et) + struct.pack("<I" if v1 else "<Q", len(items))
        return head + b"".join(gval(et, x, v1) for x in items)
    return struct.pack(FMT[t], v)


def gkv(key, t, v, v1=False):
    return gstr(key, v1) + struct.pack("<I", t) + gval(t, v, v1)


def gguf(kvs, version=3, raw_kvs=None):
    """kvs: list of (key, type, value). Returns (bytes, offset where metadata ends).
    A tensor-info section and aligned tensor data follow the metadata."""
    v1 = version == 1
    body = b"".join(gkv(k, t, v, v1) for k, t, v in kvs) + (raw_kvs or b"")
    n_kv = len(kvs) + (1 if raw_kvs else 0)
    count = "<I" if v1 else "<Q"
    head = b"GGUF" + struct.pack("<I", version) + struct.pack(count, 1) + struct.pack(count, n_kv)
    kv_end = len(head) + len(body)
    # one 4x4 f32 tensor: name, n_dims, dims, type, offset; then align to 32
    tinfo = gstr("token_embd.weight", v1) + struct.pack("<I", 2) + struct.pack("<QQ", 4, 4) + \
        struct.pack("<IQ", 0, 0)
    data = head + body + tinfo
    data += b"\0" * (-len(data) % 32) + struct.pack("<16f", *range(16))
    return data, kv_end


TOKENS = ["<unk>", "<s>", "</s>", "hello", "<|pad|>", "é", "日本", "<|im_start|>", "<|im_end|>"]

DEFAULT_T = ("{{ bos_token }}{% for m in messages %}<|im_start|>{{ m.role }}\n"
             "{{ m.content }}<|im_end|>\n{% endfor %}"
             "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
TOOL_T = "{{ bos_token }}[tools: {{ tools | tojson }}]{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}"
RAG_T = "RAG {{ documents | length }} — données"


def model_kvs(templates, ids=None, tokens_first=True):
    ids = ids if ids is not None else [("bos", U32, 1), ("eos", U32, 2), ("unknown", U32, 0), ("padding", U32, 4)]
    meta = [
        ("general.architecture", STR, "llama"),
        ("general.name", STR, "tiny test model ✓"),
        ("general.alignment", U32, 32),
        ("llama.context_length", U64, 4096),
        ("llama.rope.freq_base", F32, 10000.0),
        ("llama.attention.layer_norm_rms_epsilon", F64, 1e-5),
        ("general.flag", BOOL, True),
        ("general.i8", I8, -3), ("general.u8", U8, 200), ("general.i16", I16, -300),
        ("general.u16", U16, 60000), ("general.i32", I32, -70000), ("general.i64", I64, -(1 << 40)),
        ("general.tags", ARR, (STR, ["a", "bé", ""])),
        ("general.matrix", ARR, (ARR, [(I32, [1, 2, 3]), (I32, []), (ARR, [(STR, ["deep"])])])),
        ("tokenizer.ggml.model", STR, "gpt2"),
    ]
    tok = [("tokenizer.ggml.tokens", ARR, (STR, TOKENS)),
           ("tokenizer.ggml.scores", ARR, (F32, [0.0] * len(TOKENS))),
           ("tokenizer.ggml.token_type", ARR, (I32, [1] * len(TOKENS)))]
    idkv = [("tokenizer.ggml.%s_token_id" % name, t, v) for name, t, v in ids]
    tmpl = [("tokenizer.chat_template" + ("." + n if n != "default" else ""), STR, text)
            for n, text in templates]
    return meta + (tok + idkv if tokens_first else idkv + tok) + tmpl


def write(outdir, name, data, **expect):
    path = os.path.join(outdir, name)
    with open(path, "wb") as f:
        f.write(data)
    for key, val in expect.items():
        if key == "templates":
            for tname, text in val:
                with open("%s.%s.tmpl" % (path, tname), "wb") as f:
                    f.write(text.encode("utf-8"))
        elif key == "tokens":
            for var, text in val.items():
                with open("%s.%s.tok" % (path, var), "wb") as f:
                    f.write(text.encode("utf-8"))
        elif key == "notok":
            with open(path + ".notok", "w") as f:
                f.write("".join(v + "\n" for v in val))
        else:
            with open("%s.%s" % (path, key), "w") as f:
                f.write(str(val))


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    all_tokens = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<|pad|>"}

    # well-formed files
    templates = [("default", DEFAULT_T), ("tool_use", TOOL_T), ("rag", RAG_T)]
    data, end = gguf(model_kvs(templates), 3)
    write(outdir, "ok_v3.gguf", data, templates=templates, tokens=all_tokens, kvend=end)

    ids = [("bos", I32, 7), ("eos", I64, 8)]   # other integer widths, ids listed before the tokens
    data, end = gguf(model_kvs([("default", DEFAULT_T)], ids, tokens_first=False), 2)
    write(outdir, "ok_v2.gguf", data, templates=[("default", DEFAULT_T)],
          tokens={"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}, notok=["unk_token", "pad_token"],
          kvend=end)

    data, _ = gguf(model_kvs([("tool_use", TOOL_T), ("rag", RAG_T)]), 3)
    write(outdir, "named_only.gguf", data, templates=[("tool_use", TOOL_T), ("rag", RAG_T)])

    ids = [("bos", U32, 99), ("eos", I32, -1)]
    data, _ = gguf(model_kvs([("default", DEFAULT_T)], ids), 3)
    write(outdir, "bad_token_id.gguf", data, templates=[("default", DEFAULT_T)],
          notok=["bos_token", "eos_token"], warn="bos_token_id 99 is out of range")

    data, _ = gguf([("tokenizer.ggml.bos_token_id", U32, 0), ("tokenizer.chat_template", STR, "x")], 3)
    write(outdir, "ids_without_tokens.gguf", data, templates=[("default", "x")], notok=["bos_token"],
          warn="tokenizer.ggml.tokens is missing")

    # hostile files; header = 4 magic + 4 version + 8 tensors + 8 kv count = 24 bytes
    data, _ = gguf([("general.name", STR, "x")], 3)
    write(outdir, "no_template.gguf", data, error="has no tokenizer.chat_template")

    data, _ = gguf([("tokenizer.chat_template", STR, "x")], 1)
    write(outdir, "v1.gguf", data, error="version 1 is not supported", offset=4)

    data, _ = gguf([("tokenizer.chat_template", STR, "x")], 3)
    data = data[:4] + struct.pack(">I", 3) + data[8:]
    write(outdir, "big_endian.gguf", data, error="big-endian", offset=4)

    data, _ = gguf([("tokenizer.chat_template", STR, "x")], 7)
    write(outdir, "v7.gguf", data, error="unsupported GGUF version 7", offset=4)

    key = "tokenizer.chat_template"
    raw = gstr(key) + struct.pack("<I", STR) + struct.pack("<Q", 1 << 62) + b"abc"
    data, _ = gguf([], 3, raw_kvs=raw)
    write(outdir, "huge_string.gguf", data, error="claims 4611686018427387904 bytes",
          offset=24 + 8 + len(key) + 4)

    raw = gstr("tokenizer.ggml.tokens") + struct.pack("<I", ARR) + struct.pack("<IQ", STR, 1 << 62)
    data, _ = gguf([], 3, raw_kvs=raw)
    write(outdir, "huge_array.gguf", data, error="array of 4611686018427387904 string elements",
          offset=24 + 8 + len("tokenizer.ggml.tokens") + 4 + 4)

    data, _ = gguf([("tokenizer.chat_template", STR, "x")], 3)
    data = data[:16] + struct.pack("<Q", 1 << 62) + data[24:]
    write(outdir, "huge_kv_count.gguf", data, error="metadata entries cannot fit", offset=16)

    raw = gstr("x" * 70000) + struct.pack("<I", U8) + b"\1"
    data, _ = gguf([], 3, raw_kvs=raw)
    write(outdir, "huge_key.gguf", data, error="key length 70000 exceeds", offset=24)

    data, _ = gguf([("general.name", STR, "m"), (key, U32, 5)], 3)
    write(outdir, "wrong_type.gguf", data, error="key 'tokenizer.chat_template' has type uint32, expected string",
          offset=24 + len(gkv("general.name", STR, "m")) + 8 + len(key))

    data, _ = gguf([(key + ".tool_use", ARR, (STR, ["a"]))], 3)
    write(outdir, "wrong_type_named.gguf", data, error="has type array, expected string")

    data, _ = gguf([("tokenizer.ggml.tokens", ARR, (I32, [1, 2]))], 3)
    write(outdir, "wrong_tokens.gguf", data, error="is an array of int32, expected an array of string")

    data, _ = gguf([("tokenizer.ggml.bos_token_id", STR, "1"), (key, STR, "x")], 3)
    write(outdir, "wrong_id_type.gguf", data, error="has type string, expected an integer")

    first = gkv("general.name", STR, "a")
    data, _ = gguf([("general.name", STR, "a"), ("general.name", STR, "b"), (key, STR, "x")], 3)
    write(outdir, "dup_key.gguf", data, error="duplicate key 'general.name'", offset=24 + len(first))

    bad = b"{{ bos_token }}\xff\xfe"
    data, _ = gguf([("general.name", STR, "a"), (key, STR, bad)], 3)
    write(outdir, "bad_utf8.gguf", data, error="chat template is not valid UTF-8",
          offset=24 + len(first) + 8 + len(key) + 4 + 8 + bad.index(b"\xff"))

    data, _ = gguf([(b"general.\xc3", STR, "a"), (key, STR, "x")], 3)
    write(outdir, "bad_utf8_key.gguf", data, error="key is not valid UTF-8", offset=24 + 8 + len("general."))

    nested = (STR, ["x"])
    for _ in range(20):
        nested = (ARR, [nested])
    data, _ = gguf([("general.deep", ARR, nested), (key, STR, "x")], 3)
    write(outdir, "deep_nesting.gguf", data, error="nested more than 16 deep")

    raw = gstr("general.odd") + struct.pack("<I", 13) + b"\0" * 8
    data, _ = gguf([], 3, raw_kvs=raw)
    write(outdir, "unknown_type.gguf", data, error="unknown value type 13", offset=24 + 8 + len("general.odd"))

    data, _ = gguf([(key, STR, "x")], 3)
    write(outdir, "truncated_header.gguf", data[:20], error="truncated", offset=16)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
