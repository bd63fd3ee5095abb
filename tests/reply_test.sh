#!/usr/bin/env bash
# reply_test.sh — `chatfmt parse` end to end: the committed reply cases are
# what tests/reply_cases/gen_cases.py writes today; the CLI gives each case's
# expected message (whole, stdin, --stream reassembled); format detection and
# the prompt's reasoning state come from --template; errors exit non-zero;
# and the round trip over ../shared/conversations (tests/reply_roundtrip.py)
# when the binary renders. Exit status: 0 when everything passes.
#
# Run from the repo root after `make`. CHATFMT_BIN (default $BUILD/chatfmt,
# BUILD default build) and CHATFMT_SHARED (default ../shared) can point elsewhere.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
BIN=${CHATFMT_BIN:-$BUILD/chatfmt}
SHARED=${CHATFMT_SHARED:-../shared}
CASES=tests/reply_cases/cases.jsonl
TMP=$(mktemp -d /tmp/chatfmt-reply-sh-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

if ! "$BIN" parse --help > /dev/null 2>&1; then
    echo "FAIL: $BIN has no 'parse' command" >&2
    exit 1
fi

# ---- the committed cases are up to date ---------------------------------------
if python3 -c 'import jinja2' 2> /dev/null && [ -d "$SHARED/seeds" ]; then
    cp "$CASES" "$TMP/committed.jsonl"
    if python3 tests/reply_cases/gen_cases.py "$SHARED" > /dev/null &&
        cmp -s "$CASES" "$TMP/committed.jsonl"; then ok
    else ko "tests/reply_cases/cases.jsonl is stale: rerun tests/reply_cases/gen_cases.py"; fi
    cp "$TMP/committed.jsonl" "$CASES"
    FAMILY_CASES=tests/reply_cases/families.jsonl
    cp "$FAMILY_CASES" "$TMP/committed-families.jsonl"
    if python3 tests/reply_cases/gen_family_cases.py "$SHARED" > /dev/null &&
        cmp -s "$FAMILY_CASES" "$TMP/committed-families.jsonl"; then ok
    else ko "$FAMILY_CASES is stale: rerun tests/reply_cases/gen_family_cases.py"; fi
    cp "$TMP/committed-families.jsonl" "$FAMILY_CASES"
else
    echo "note: python3 with jinja2 or $SHARED/seeds missing: generator freshness not checked"
fi

# ---- every case through the CLI: whole, stdin, and streamed -------------------
if python3 - "$BIN" "$CASES" "$TMP" <<'EOF'

import json, subprocess, sys
bin_, cases, tmp = sys.argv[1:4]
bad = total = 0
for line in open(cases, encoding="utf-8"):
    c = json.loads(line)
    if c.get("tail") or "reply" not in c:   # tails and raw bytes: covered by tests/test_reply.c
        continue
    reply = c["reply"].encode("utf-8")
    args = [bin_, "parse", "--format", c["format"]]
    if c.get("json_response"):
        args += ["--response-format", "json"]
    if c["tools"]:
        with open(tmp + "/tools.json", "w", encoding="utf-8") as f:
            json.dump(c["tools"], f)
        args += ["--tools", tmp + "/tools.json"]
    with open(tmp + "/reply.txt", "wb") as f:
        f.write(reply)
    total += 1
    whole = subprocess.run(args + [tmp + "/reply.txt"], capture_output=True)
    piped = subprocess.run(args + ["-"], input=reply, capture_output=True)
    want = c["expect"] + "\n"
    problems = []
    if whole.returncode or whole.stdout.decode() != want:
        problems.append("whole: " + (whole.stdout.decode() or whole.stderr.decode())[:300])
    if piped.stdout != whole.stdout:
        problems.append("stdin differs")
    if not c["broken"]:
        st = subprocess.run(args + ["--stream", "--chunk-bytes", "2", tmp + "/reply.txt"], capture_output=True)
        chunks = [json.loads(l) for l in st.stdout.decode().splitlines()]
        msg = {"role": "assistant", "content": None, "reasoning_content": None}
        calls, cites = [], []
        for ch in chunks:
            d = ch["choices"][0]["delta"]
            for k in ("content", "reasoning_content"):
                if k in d:
                    msg[k] = (msg[k] or "") + d[k]
            for tc in d.get("tool_calls", []):
                if "id" in tc:
                    calls.append({"id": tc["id"], "type": "function",
                                  "function": {"name": tc["function"]["name"], "arguments": ""}})
                calls[tc["index"]]["function"]["arguments"] += tc["function"].get("arguments", "")
            cites += d.get("citations", [])
        if calls:
            msg["tool_calls"] = calls
        if cites:
            msg["citations"] = cites
        finish = chunks[-1]["choices"][0]["finish_reason"]
        if json.dumps(msg, ensure_ascii=False, separators=(",", ":")) != c["expect"]:
            problems.append("stream reassembles to " + json.dumps(msg, ensure_ascii=False)[:300])
        if chunks[0]["choices"][0]["delta"] != {"role": "assistant"} or finish != ("tool_calls" if calls else "stop"):
            problems.append("stream framing (role chunk / finish_reason %s)" % finish)
    if problems:
        bad += 1
        print("FAIL:", c["name"], *problems, sep="\n    ", file=sys.stderr)
print("cli cases: %d, %d failed" % (total, bad))
sys.exit(1 if bad or total < 50 else 0)
EOF
then ok; else ko "cli cases"; fi

# ---- --template: format detection and the prompt's reasoning state -----------
printf 'Thinking here.\n</think>\n\nDone.' > "$TMP/opened.txt"
printf '<think>x</think>Done.' > "$TMP/think.txt"
check() {  # NAME WANT ARGS...
    local name=$1 want=$2
    shift 2
    local got
    got=$("$BIN" parse "$@" 2> "$TMP/err")
    if [ "$got" = "$want" ]; then ok; else ko "$name: got '$got' want '$want' ($(head -c 200 "$TMP/err"))"; fi
}
R='{"role":"assistant","content":"Done.","reasoning_content":'
for seed in glm45 toolcall-qwen3 nanbeige reasoning-qwen25; do
    T=$SHARED/seeds/$seed.jinja
    check "$seed detected, reasoning in reply" "$R\"x\"}" --template "$T" "$TMP/think.txt"
    check "$seed --reasoning-open" "$R\"Thinking here.\"}" --template "$T" --reasoning-open "$TMP/opened.txt"
    printf '<|im_start|>assistant\n<think>\n' > "$TMP/prompt.txt"
    check "$seed --prompt opens reasoning" "$R\"Thinking here.\"}" --template "$T" --prompt "$TMP/prompt.txt" "$TMP/opened.txt"
done
for seed in glm45 toolcall-qwen3; do
    check "$seed enable_thinking=false closes reasoning" \
        '{"role":"assistant","content":"<think>x</think>Done.","reasoning_content":null}' \
        --template "$SHARED/seeds/$seed.jinja" -D enable_thinking=false "$TMP/think.txt"
done
printf '<|START_THINKING|>x<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {"a": 1}}]<|END_ACTION|>' > "$TMP/cmda.txt"
check "command-a detected" \
    '{"role":"assistant","content":null,"reasoning_content":"x","tool_calls":[{"id":"0","type":"function","function":{"name":"f","arguments":"{\"a\": 1}"}}]}' \
    --template "$SHARED/seeds/command-a-reasoning.jinja" "$TMP/cmda.txt"
check "--format overrides detection" '{"role":"assistant","content":"Done.","reasoning_content":"x"}' \
    --template "$SHARED/seeds/command-a-reasoning.jinja" --format plain "$TMP/think.txt"

# ---- errors --------------------------------------------------------------------
expect_status() {  # NAME STATUS ARGS...
    local name=$1 want=$2
    shift 2
    "$BIN" parse "$@" > /dev/null 2> "$TMP/err"
    local st=$?
    if [ "$st" -eq "$want" ]; then ok; else ko "$name: exit $st, want $want ($(head -c 200 "$TMP/err"))"; fi
}
expect_status "unknown format" 2 --format qwen "$TMP/think.txt"
expect_status "no input" 2 --format hermes
expect_status "missing file" 1 --format hermes "$TMP/nope.txt"
echo '[{"name": ' > "$TMP/badtools.json"
expect_status "bad tools JSON" 1 --format glm45 --tools "$TMP/badtools.json" "$TMP/think.txt"
expect_status "bad --chunk-bytes" 2 --format hermes --stream --chunk-bytes 0 "$TMP/think.txt"
expect_status "bad --response-format" 2 --format hermes --response-format xml "$TMP/think.txt"
head -c 100000 /dev/zero | tr '\0' a > "$TMP/big.txt"
expect_status "--max-string limit" 1 --format hermes --max-string 1000 "$TMP/big.txt"

# ---- round trip over the shared conversations ----------------------------------
if python3 -c 'import jinja2' 2> /dev/null; then
    renderer=oracle
    printf '{"messages":[{"role":"user","content":"x"}]}' > "$TMP/ctx.json"
    if "$BIN" render "$SHARED/seeds/glm45.jinja" "$TMP/ctx.json" > /dev/null 2>&1; then renderer=chatfmt; fi
    if python3 tests/reply_roundtrip.py --chatfmt "$BIN" --renderer "$renderer" --shared "$SHARED"; then ok
    else ko "round trip"; fi
else
    echo "note: python3 with jinja2 missing: round trip not run"
fi

echo "reply_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
