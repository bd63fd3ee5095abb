#!/usr/bin/env bash
# caps_test.sh — `chatfmt caps` from the CLI (built-ins, a repaired web copy,
# a tokenizer_config.json's tokens), then tests/caps_check.py: --polyfill and
# --spans against the reference renderer. (Expected caps objects of the seeds
# and the corpus run are in tests/test_caps.c.) Exit status 0 when all pass.
#
# Run from the repo root after `make` (tests/run_tests.sh does). CHATFMT_BIN
# (default $BUILD/chatfmt) and CHATFMT_SHARED (default ../shared) can point elsewhere.
set -u
cd "$(dirname "$0")/.." || exit 2
BIN=${CHATFMT_BIN:-${BUILD:-build}/chatfmt}
SHARED=${CHATFMT_SHARED:-../shared}
TMP=$(mktemp -d /tmp/chatfmt-caps-sh-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# every built-in: exit 0, a JSON object with the keys the issue lists
for name in $("$BIN" list-templates); do
    if "$BIN" caps "$name" > "$TMP/caps.json" 2> "$TMP/err" && python3 - "$TMP/caps.json" <<'EOF'
import json, sys
caps = json.load(open(sys.argv[1]))
keys = ["supports_system_role", "supports_tools", "supports_tool_calls", "supports_parallel_tool_calls",
        "supports_tool_call_id", "supports_tool_responses", "supports_reasoning", "supports_documents",
        "requires_object_arguments", "requires_typed_content", "thinking_switch", "generation_prompt",
        "reply_format", "stop_strings", "prefix_stable"]
missing = [k for k in keys if k not in caps]
sys.exit(1 if missing else 0)
EOF
    then ok; else ko "caps $name: $(head -c 300 "$TMP/err")"; fi
done

# a web copy is repaired before probing: same caps as the clean seed
"$BIN" caps glm45 > "$TMP/clean.json"
if "$BIN" caps "$SHARED/seeds/raw/000_da935e215c15b9d2.txt" > "$TMP/raw.json" 2> "$TMP/err" &&
    cmp -s "$TMP/clean.json" "$TMP/raw.json" && grep -q "line-number" "$TMP/err"; then ok
else ko "caps of raw seed 000 differs from glm45's or does not say it repaired"; fi

# a tokenizer_config.json: its eos_token is a stop string
python3 - "$SHARED/seeds/toolcall-qwen3.jinja" "$TMP/tokenizer_config.json" <<'EOF'
import json, sys
json.dump({"chat_template": open(sys.argv[1], encoding="utf-8").read(),
           "eos_token": {"content": "<|endoftext|>"}, "bos_token": None}, open(sys.argv[2], "w"))
EOF
if "$BIN" caps "$TMP/tokenizer_config.json" > "$TMP/tc.json" &&
    python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["stop_strings"] == ["<|im_end|>", "<|endoftext|>"]' "$TMP/tc.json"
then ok; else ko "caps of a tokenizer_config.json: stop_strings $(cat "$TMP/tc.json" | tr -d '\n' | head -c 300)"; fi

# usage
if "$BIN" caps --help > /dev/null; then ok; else ko "caps --help"; fi
"$BIN" caps > /dev/null 2>&1
if [ $? -eq 2 ]; then ok; else ko "caps without TEMPLATE should exit 2"; fi
if ! "$BIN" caps no-such-template > /dev/null 2> "$TMP/err" && grep -q "error" "$TMP/err"; then ok
else ko "caps of an unknown template should fail"; fi

# --polyfill and --spans against the reference
if python3 tests/caps_check.py --bin "$BIN" --shared "$SHARED" --tmp "$TMP" > "$TMP/check.log" 2>&1; then ok
else ko "caps_check.py: $(grep -E '^FAIL|passed' "$TMP/check.log" | head -n 20)"; fi
grep -E '^(XFAIL|XPASS|polyfill|caps corpus|spans:)|passed, ' "$TMP/check.log"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
