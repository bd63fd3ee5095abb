#!/usr/bin/env bash
# dataset_test.sh — `chatfmt render TEMPLATE --jsonl IN.jsonl` (dataset mode):
#   - every row identical to the reference renderer (hf_render.render in
#     process), row by row, for each seed over a file built from the shared
#     conversations with variations, including bad rows mid-file (malformed
#     JSON, a blank line, a render error) that yield error rows and never stop
#     the job;
#   - input order kept; --threads 1 and --threads N byte-identical, stdin
#     input and -o identical to stdout;
#   - -D overrides every row, --add-generation-prompt, --spans (as render
#     --spans), and rows with tools take a tokenizer_config's tool_use template;
#   - render --batch (the same pipeline): --threads 1, 2 and 3 byte-identical
#     and identical to the reference's --batch on seeds x conversations with
#     blank lines and failing cases mixed in.
#
# Run from the repository after `make`. CHATFMT_BIN (default $BUILD/chatfmt,
# BUILD default build) and CHATFMT_SHARED (default ../shared) as for run_tests.sh.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
BIN=$(realpath "${CHATFMT_BIN:-$BUILD/chatfmt}")
SHARED=$(realpath "${CHATFMT_SHARED:-../shared}" 2> /dev/null || echo ../shared)
export CHATFMT_NOW=2026-03-14T15:09:26 TZ=UTC
TMP=$(mktemp -d /tmp/chatfmt-dataset-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else ko "$what"; fi; }

[ -x "$BIN" ] || { echo "FAIL: $BIN not built" >&2; exit 1; }
if ! [ -d "$SHARED/conversations" ] || ! python3 -c 'import jinja2' 2> /dev/null; then
    echo "FAIL: needs $SHARED (conversations, seeds, oracle) and python3 with jinja2" >&2
    exit 1
fi

# ---- the input: conversations x variations, bad rows in the middle ------------------
python3 - "$SHARED" > "$TMP/in.jsonl" <<'EOF'
import json, os, sys
d = os.path.join(sys.argv[1], "conversations")
convs = [json.load(open(os.path.join(d, n), encoding="utf-8")) for n in sorted(os.listdir(d)) if n.endswith(".json")]
rows = []
for i in range(3):
    for c in convs:
        c = dict(c)
        if i == 1:
            c["enable_thinking"] = False
            c["add_generation_prompt"] = not c.get("add_generation_prompt", False)
        if i == 2:
            c.pop("tools", None)
        rows.append(json.dumps(c, ensure_ascii=(i == 0)))
# every byte that JSON output must escape, and text that must not be escaped
rows.append(json.dumps({"messages": [{"role": "user", "content": "".join(map(chr, range(32))) + "\"\\ \u00e9 \u2028 \U0001f600 \x7f"}],
                        "add_generation_prompt": True}))
mid = len(rows) // 2
rows[mid:mid] = ['{"messages": [ this is not json', "", '{"messages": 5}', '["not", "an", "object"]']
print("\n".join(rows))
EOF
rows=$(wc -l < "$TMP/in.jsonl")

# compare_with_oracle TEMPLATE_FILE OUT [PYTHON-EXPR-FOR-EXTRA-VARS]: rows == reference.
compare_with_oracle() {
    python3 - "$SHARED/oracle" "$1" "$TMP/in.jsonl" "$2" "${3:-{\}}" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1])
import hf_render
text = open(sys.argv[2], encoding="utf-8").read()
extra = json.loads(sys.argv[5])
inputs = open(sys.argv[3], encoding="utf-8").read().split("\n")
if inputs and inputs[-1] == "":
    inputs.pop()
outputs = [json.loads(l) for l in open(sys.argv[4], encoding="utf-8")]
bad = 0
if len(outputs) != len(inputs):
    print(f"{len(outputs)} output rows for {len(inputs)} input rows")
    sys.exit(1)
for n, (line, got) in enumerate(zip(inputs, outputs), 1):
    try:
        ctx = json.loads(line)
        if not isinstance(ctx, dict):
            raise TypeError("context must be a JSON object")
        ctx.update(extra)
        want = {"text": hf_render.render(text, ctx)}
    except json.JSONDecodeError:
        want = {"error": "JSONDecodeError"}
    except Exception as e:  # noqa: BLE001 - a failing row is data
        want = {"error": type(e).__name__}
    if "error" in got:
        got = {"error": got["error"]["type"]} if set(got["error"]) == {"type", "message"} else got
    if got != want:
        bad += 1
        if bad <= 3:
            print(f"row {n}: want {str(want)[:120]} got {str(got)[:120]}")
print(f"{len(inputs) - bad}/{len(inputs)} rows identical")
sys.exit(1 if bad else 0)
EOF
}

# ---- every seed, row by row against the reference ------------------------------------
for t in "$SHARED"/seeds/*.jinja; do
    name=$(basename "$t" .jinja)
    if "$BIN" render "$t" --jsonl "$TMP/in.jsonl" --threads 3 -o "$TMP/$name.out" 2> "$TMP/err"; then
        check "$name: $rows rows identical to the reference, in order" compare_with_oracle "$t" "$TMP/$name.out"
    else
        ko "$name: chatfmt exited non-zero: $(head -c 300 "$TMP/err")"
    fi
done
check "bad rows are error rows with type and message" bash -c \
    "grep -c '^{\"error\": {\"type\": \"JSONDecodeError\", \"message\": \"' '$TMP/glm45.out' | grep -qx 2"

# ---- threads, stdin, stdout ------------------------------------------------------------
t=$SHARED/seeds/glm45.jinja
for _ in $(seq 40); do cat "$TMP/in.jsonl"; done > "$TMP/many.jsonl"
"$BIN" render "$t" --jsonl "$TMP/many.jsonl" --threads 1 > "$TMP/t1.out"
"$BIN" render "$t" --jsonl "$TMP/many.jsonl" --threads 7 > "$TMP/t7.out"
"$BIN" render "$t" --jsonl - < "$TMP/many.jsonl" > "$TMP/stdin.out"
check "--threads 1 and --threads 7 identical ($(wc -l < "$TMP/many.jsonl") rows)" cmp -s "$TMP/t1.out" "$TMP/t7.out"
check "--jsonl - (stdin) identical" cmp -s "$TMP/t1.out" "$TMP/stdin.out"
check "one output row per input row" test "$(wc -l < "$TMP/t1.out")" -eq "$(wc -l < "$TMP/many.jsonl")"
check "no progress output when stderr is not a terminal" bash -c \
    "'$BIN' render '$t' --jsonl '$TMP/in.jsonl' 2>&1 > /dev/null | wc -c | grep -qx 0"

# ---- options applied to every row -------------------------------------------------------
"$BIN" render "$t" --jsonl "$TMP/in.jsonl" -D enable_thinking=false -D 'extra={"k": [1]}' > "$TMP/d.out"
check "-D overrides every row" compare_with_oracle "$t" "$TMP/d.out" '{"enable_thinking": false, "extra": {"k": [1]}}'
"$BIN" render "$t" --jsonl "$TMP/in.jsonl" --add-generation-prompt > "$TMP/agp.out"
check "--add-generation-prompt on every row" compare_with_oracle "$t" "$TMP/agp.out" '{"add_generation_prompt": true}'

cat > "$TMP/gen.jinja" <<'EOF'
{% for m in messages %}<{{ m.role }}>{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}{% endfor %}
EOF
check "--spans: text and spans as render --spans, row by row" python3 - "$BIN" "$TMP" "$SHARED" <<'EOF'
import json, os, subprocess, sys
bin_, tmp, shared = sys.argv[1:4]
d = os.path.join(shared, "conversations")
rows = [json.load(open(os.path.join(d, n), encoding="utf-8")) for n in sorted(os.listdir(d)) if n.endswith(".json")]
with open(os.path.join(tmp, "spans.jsonl"), "w", encoding="utf-8") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows)
out = subprocess.run([bin_, "render", os.path.join(tmp, "gen.jinja"), "--jsonl", os.path.join(tmp, "spans.jsonl"),
                      "--spans"], capture_output=True, check=True).stdout.decode().splitlines()
assert len(out) == len(rows)
with_spans = 0
for row, line in zip(rows, out):
    got = json.loads(line)
    with open(os.path.join(tmp, "ctx.json"), "w", encoding="utf-8") as f:
        json.dump(row, f)
    r = subprocess.run([bin_, "render", "--spans", os.path.join(tmp, "gen.jinja"), os.path.join(tmp, "ctx.json")],
                       capture_output=True)
    if r.returncode:
        assert "error" in got, line
        continue
    text, spans = r.stdout.decode().rsplit("\n", 2)[:2]
    assert got == {"text": text, "spans": json.loads(spans)}, (got, text, spans)
    with_spans += bool(got["spans"])
assert with_spans >= 3, with_spans
EOF

python3 - "$TMP" <<'EOF'
import json, sys
json.dump({"bos_token": "<s>", "chat_template": [
    {"name": "default", "template": "D{{ bos_token }}{{ messages | length }}"},
    {"name": "tool_use", "template": "T{{ bos_token }}{{ tools | length }}"}]},
    open(sys.argv[1] + "/tokenizer_config.json", "w"))
with open(sys.argv[1] + "/tools.jsonl", "w") as f:
    f.write('{"messages": [{"role": "user", "content": "a"}]}\n')
    f.write('{"messages": [], "tools": [{"type": "function", "function": {"name": "f"}}]}\n')
    f.write('{"messages": [], "tools": null, "bos_token": "<B>"}\n')
EOF
"$BIN" render "$TMP/tokenizer_config.json" --jsonl "$TMP/tools.jsonl" > "$TMP/tools.out"
for i in 1 2 3; do
    sed -n "${i}p" "$TMP/tools.jsonl" > "$TMP/row.json"
    python3 -c 'import json,sys; print(json.dumps({"text": open(sys.argv[1]).read()}, ensure_ascii=False))' \
        <("$BIN" render "$TMP/tokenizer_config.json" "$TMP/row.json") > "$TMP/want.row"
    check "tokenizer_config row $i picks its template as render does" cmp -s "$TMP/want.row" <(sed -n "${i}p" "$TMP/tools.out")
done

# A broken tool_use template fails only the rows with tools (transformers compiles it only then).
python3 -c 'import json, sys; json.dump({"chat_template": [{"name": "default", "template": "ok {{ messages | length }}"},
    {"name": "tool_use", "template": "{% if %}"}]}, open(sys.argv[1], "w"))' "$TMP/broken_tools.json"
"$BIN" render "$TMP/broken_tools.json" --jsonl "$TMP/tools.jsonl" > "$TMP/broken.out"
check "a broken tool_use template fails only the rows with tools" test \
    "$(cut -c1-50 "$TMP/broken.out" | tr '\n' '|')" = \
    '{"text": "ok 1"}|{"error": {"type": "TemplateSyntaxError", "message|{"text": "ok 0"}|'

# ---- render --batch on the same pipeline ---------------------------------------------
python3 "$SHARED/tools/mkcases.py" "$SHARED/seeds" "$SHARED/conversations" > "$TMP/seeds.jsonl"
python3 - "$TMP/seeds.jsonl" > "$TMP/batch.jsonl" <<'EOF'
import random, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
rng = random.Random(7)
for _ in range(4):   # enough cases for every worker to take several blocks
    for line in lines:
        print(line)
        if rng.random() < 0.05: print("")
        if rng.random() < 0.03: print("  \t")
        if rng.random() < 0.03: print('{"template_text": "{{ 1 / 0 }}", "context": {}}')
EOF
python3 "$SHARED/oracle/hf_render.py" --batch "$TMP/batch.jsonl" > "$TMP/batch.ref"
for n in 1 2 3; do
    "$BIN" render --batch "$TMP/batch.jsonl" --threads "$n" > "$TMP/batch.$n"
    check "render --batch --threads $n: identical to the reference's --batch" cmp -s "$TMP/batch.ref" "$TMP/batch.$n"
done
check "render --batch reads stdin" bash -c "'$BIN' render --batch - < '$TMP/batch.jsonl' | cmp -s - '$TMP/batch.ref'"
check "render --threads without --batch is a usage error" \
    bash -c "'$BIN' render --threads 2 '$t' '$SHARED/conversations/01-single-user.json' > /dev/null 2>&1; [ \$? -eq 2 ]"

check "unknown option is a usage error" bash -c "'$BIN' render '$t' --jsonl '$TMP/in.jsonl' --bogus > /dev/null 2>&1; [ \$? -eq 2 ]"
check "missing input file fails" bash -c "! '$BIN' render '$t' --jsonl '$TMP/nope.jsonl' > /dev/null 2>&1"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
