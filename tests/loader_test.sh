#!/usr/bin/env bash
# loader_test.sh — the template sources through the CLI: list-templates, repair
# of the raw seeds and of every corpus template (no false repair), and renders
# from each source kind compared with the reference renderer given the same
# template text and special tokens. Exit status: 0 when everything passes.
#
# Run from the repo root after `make` (tests/run_tests.sh does). CHATFMT_BIN
# (default $BUILD/chatfmt) and CHATFMT_SHARED (default ../shared) can point elsewhere.
set -u
cd "$(dirname "$0")/.." || exit 2
BIN=${CHATFMT_BIN:-${BUILD:-build}/chatfmt}
SHARED=${CHATFMT_SHARED:-../shared}
ORACLE="$SHARED/oracle/hf_render.py"
export CHATFMT_NOW=${CHATFMT_NOW:-2026-01-02T03:04:05}
TMP=$(mktemp -d /tmp/chatfmt-loader-sh-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# ---- list-templates ----------------------------------------------------------
printf 'glm45\ntoolcall-qwen3\nnanbeige\nreasoning-qwen25\ncommand-a-reasoning\n' > "$TMP/names"
if "$BIN" list-templates > "$TMP/out" && cmp -s "$TMP/out" "$TMP/names"; then ok; else ko "list-templates"; fi

# ---- repair: raw seeds -----------------------------------------------------------
check_repair() {  # RAW CLEAN NOTE
    if "$BIN" repair "$SHARED/seeds/raw/$1" > "$TMP/out" 2> "$TMP/err" &&
        cmp -s "$TMP/out" "$SHARED/seeds/$2.jinja" && grep -q "$3" "$TMP/err"; then ok
    else ko "repair $1 -> $2 ($(head -c 300 "$TMP/err"))"; fi
}
check_repair 000_da935e215c15b9d2.txt glm45 "removed line-number prefixes from 106 lines"
check_repair 002_38e39df8a69631b3.txt nanbeige "unwrapped 131 markdown table rows"
check_repair 004_44a4f0d1f8988f4c.txt command-a-reasoning "removed 4 model-hub page header lines"

# from standard input too
if "$BIN" repair - < "$SHARED/seeds/raw/000_da935e215c15b9d2.txt" 2>/dev/null | cmp -s - "$SHARED/seeds/glm45.jinja"
then ok; else ko "repair - (stdin)"; fi

# and from a pipe that cannot rewind (a shell's <(...))
if "$BIN" repair <(cat "$SHARED/seeds/raw/002_38e39df8a69631b3.txt") 2>/dev/null |
    cmp -s - "$SHARED/seeds/nanbeige.jinja"; then ok; else ko "repair <(pipe)"; fi

# tag-stripped copies cannot be repaired: printed unchanged, with a warning
for raw in 001_5fa5cb2e5202d1fe.txt 003_45848dccb0b1c1c0.txt; do
    if "$BIN" repair "$SHARED/seeds/raw/$raw" > "$TMP/out" 2> "$TMP/err" &&
        cmp -s "$TMP/out" "$SHARED/seeds/raw/$raw" && grep -q "tag-stripped" "$TMP/err"; then ok
    else ko "repair $raw should warn tag-stripped and keep the text"; fi
done

# ---- repair: the corpus and the clean seeds stay byte for byte ----------------------
for t in "$SHARED"/corpus/templates/*.jinja "$SHARED"/seeds/*.jinja; do
    if "$BIN" repair "$t" > "$TMP/out" 2> "$TMP/err" && cmp -s "$TMP/out" "$t" &&
        grep -q "nothing to repair" "$TMP/err" && ! grep -q "tag-stripped" "$TMP/err"; then ok
    else ko "false repair or flag on $t: $(head -c 200 "$TMP/err")"; fi
done

# ---- renders: each source kind against the reference -----------------------------------
# oracle_render TEMPLATE_FILE CONTEXT_JSON TOKENS_JSON: the reference output, with
# the source's special tokens under the context (caller keys win, as in transformers).
oracle_render() {
    python3 - "$ORACLE" "$1" "$2" "$3" <<'EOF'
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("hf_render", sys.argv[1])
hf = importlib.util.module_from_spec(spec); spec.loader.exec_module(hf)
text = open(sys.argv[2], encoding="utf-8").read()
ctx = {**json.loads(sys.argv[4]), **json.load(open(sys.argv[3], encoding="utf-8"))}
try:
    sys.stdout.write(hf.render(text, ctx))
except Exception as e:
    sys.stdout.write("ERROR %s: %s" % (type(e).__name__, e))
EOF
}

# ours SOURCE CONTEXT [options]: our output ("ERROR ..." on failure)
ours() {
    local src=$1 ctx=$2
    shift 2
    "$BIN" render "$@" "$src" "$ctx" 2> "$TMP/ours.err" || printf 'ERROR %s' "$(head -c 200 "$TMP/ours.err")"
}

compare() {  # NAME SOURCE TEMPLATE_TEXT_FILE CONTEXT TOKENS_JSON [render options]
    local name=$1 src=$2 text=$3 ctx=$4 toks=$5
    shift 5
    oracle_render "$text" "$ctx" "$toks" > "$TMP/want"
    ours "$src" "$ctx" "$@" > "$TMP/got"
    if cmp -s "$TMP/want" "$TMP/got"; then ok
    else ko "render $name: $(head -c 160 "$TMP/got" | tr '\n' ' ') / want $(head -c 160 "$TMP/want" | tr '\n' ' ')"; fi
}

CONVS="01-single-user 03-tools-roundtrip 05-reasoning-history 12-no-generation-prompt"

# raw seeds render exactly like their clean copies (and like the reference)
for pair in 000_da935e215c15b9d2.txt:glm45 002_38e39df8a69631b3.txt:nanbeige \
            004_44a4f0d1f8988f4c.txt:command-a-reasoning; do
    raw=${pair%%:*} clean=${pair##*:}
    for c in $CONVS; do
        conv="$SHARED/conversations/$c.json"
        compare "raw $raw / $c" "$SHARED/seeds/raw/$raw" "$SHARED/seeds/$clean.jinja" "$conv" '{}'
        compare "built-in $clean / $c" "$clean" "$SHARED/seeds/$clean.jinja" "$conv" '{}'
    done
done

# GGUF v2 and v3 (tokens from tokenizer.ggml.tokens), named templates
python3 tests/make_gguf.py "$TMP/gguf" || ko "make_gguf.py"
conv="$SHARED/conversations/03-tools-roundtrip.json"
single="$SHARED/conversations/01-single-user.json"
G="$TMP/gguf"
toks3='{"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<|pad|>"}'
compare "gguf v3 tool_use" "$G/ok_v3.gguf" "$G/ok_v3.gguf.tool_use.tmpl" "$conv" "$toks3"
compare "gguf v3 default" "$G/ok_v3.gguf" "$G/ok_v3.gguf.default.tmpl" "$single" "$toks3"
compare "gguf v3 --template-name" "$G/ok_v3.gguf" "$G/ok_v3.gguf.default.tmpl" "$conv" "$toks3" \
    --template-name default
compare "gguf v2" "$G/ok_v2.gguf" "$G/ok_v2.gguf.default.tmpl" "$conv" \
    '{"bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}'

# tokenizer_config.json (string and list) and model folders
mkdir -p "$TMP/model/additional_chat_templates"
python3 - "$TMP" <<'EOF'
import json, os, sys
tmp = sys.argv[1]
default = "{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }}{{ eos_token }}\n{% endfor %}"
tool = "{{ bos_token }}TOOLS {{ tools | tojson }}\n{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
tokens = {"bos_token": {"__type": "AddedToken", "content": "<|bos|>", "lstrip": False}, "eos_token": "<|eot|>",
          "add_bos_token": True, "additional_special_tokens": ["<x>"]}
json.dump({**tokens, "chat_template": default}, open(os.path.join(tmp, "config_string.json"), "w"))
json.dump({**tokens, "chat_template": [{"name": "default", "template": default},
                                        {"name": "tool_use", "template": tool}]},
          open(os.path.join(tmp, "config_list.json"), "w"))
open(os.path.join(tmp, "default.jinja"), "w").write(default)
open(os.path.join(tmp, "tool.jinja"), "w").write(tool)
json.dump({**tokens, "chat_template": "ignored: chat_template.jinja wins"},
          open(os.path.join(tmp, "model", "tokenizer_config.json"), "w"))
open(os.path.join(tmp, "model", "chat_template.jinja"), "w").write(default)
open(os.path.join(tmp, "model", "additional_chat_templates", "tool_use.jinja"), "w").write(tool)
EOF
ctoks='{"bos_token": "<|bos|>", "eos_token": "<|eot|>"}'
compare "tokenizer_config string" "$TMP/config_string.json" "$TMP/default.jinja" "$conv" "$ctoks"
compare "tokenizer_config list, tools" "$TMP/config_list.json" "$TMP/tool.jinja" "$conv" "$ctoks"
compare "tokenizer_config list, no tools" "$TMP/config_list.json" "$TMP/default.jinja" "$single" "$ctoks"
compare "model folder, tools" "$TMP/model" "$TMP/tool.jinja" "$conv" "$ctoks"
compare "model folder, default" "$TMP/model" "$TMP/default.jinja" "$single" "$ctoks"
# caller keys override special tokens
python3 -c 'import json, sys; c = json.load(open(sys.argv[1])); c["bos_token"] = "<mine>"; json.dump(c, sys.stdout)' \
    "$single" > "$TMP/override.json"
compare "caller overrides bos_token" "$TMP/config_string.json" "$TMP/default.jinja" "$TMP/override.json" "$ctoks"

# a GGUF through a pipe is read whole, then parsed the same way
if "$BIN" repair <(cat "$G/ok_v3.gguf") 2>/dev/null | cmp -s - "$G/ok_v3.gguf.default.tmpl"; then ok
else ko "GGUF from a pipe"; fi

# hostile GGUF through the CLI: a clean error, exit 1, no crash
for f in huge_string huge_array wrong_type dup_key bad_utf8 v1 big_endian; do
    "$BIN" render "$G/$f.gguf" "$single" > /dev/null 2> "$TMP/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q "FormatError" "$TMP/err"; then ok; else ko "hostile $f.gguf: rc=$rc $(cat "$TMP/err")"; fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
