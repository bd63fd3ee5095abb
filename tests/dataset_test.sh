#!/usr/bin/env bash
# dataset_test.sh — `chatfmt render TEMPLATE --jsonl IN.jsonl` (dataset mode):
#   - every row identical to the reference renderer (hf_render.render in
#     process), row by row, for each seed over a file built from the shared
#     conversations with variations, including bad rows mid-file (malformed
#     JSON, a blank line, a render error) that yield error rows and never stop
#     the job;
#   - mixed rows (bench/gen_mixed_rows.py: 50-turn conversations and requests
#     repeating 60 tools, which the JSON cache reads once) against the
#     reference, and on 1 and 3 threads identical;
#   - input order kept; --threads 1 and --threads N byte-identical, stdin
#     input and -o identical to stdout;
#   - -D overrides every row, --add-generation-prompt, --spans (as render
#     --spans), and rows with tools take a tokenizer_config's tool_use template;
#   - line splitting (a file: mapped, lines found in place; a pipe: read(2)
#     into block buffers, lines carried over to the next block): empty input, no final newline, CRLF and lone '\r', empty
#     lines, rows from 0 bytes to 5 MB across buffer boundaries, more rows
#     than a block holds; each output row checked against its input line,
#     --threads 1 / 3 and a pipe identical; write and read errors;
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
    python3 - "$SHARED/oracle" "$1" "${ORACLE_IN:-$TMP/in.jsonl}" "$2" "${3:-{\}}" <<'EOF'
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
# ---- mixed rows: short chats, 50-turn conversations, requests with 60 tools ----------
# (bench/gen_mixed_rows.py; the same 60 tools on every tools row: each worker's JSON
# cache reads them once and shares them, cf_json_cache)
python3 bench/gen_mixed_rows.py "$SHARED" 150 > "$TMP/mixed.jsonl"
for t in "$SHARED"/seeds/*.jinja; do
    name=$(basename "$t" .jinja)
    "$BIN" render "$t" --jsonl "$TMP/mixed.jsonl" --threads 3 -o "$TMP/$name.mixed" 2> /dev/null
    ORACLE_IN=$TMP/mixed.jsonl check "$name: 150 mixed rows (50-turn, 60 tools) identical to the reference" \
        compare_with_oracle "$t" "$TMP/$name.mixed"
    check "$name: mixed rows on 1 thread as on 3" \
        bash -c "'$BIN' render '$t' --jsonl '$TMP/mixed.jsonl' --threads 1 2> /dev/null | cmp -s - '$TMP/$name.mixed'"
done

for _ in $(seq 40); do cat "$TMP/in.jsonl"; done > "$TMP/many.jsonl"
"$BIN" render "$t" --jsonl "$TMP/many.jsonl" --threads 1 2>> "$TMP/summaries.err" > "$TMP/t1.out"
"$BIN" render "$t" --jsonl "$TMP/many.jsonl" --threads 7 2>> "$TMP/summaries.err" > "$TMP/t7.out"
"$BIN" render "$t" --jsonl - < "$TMP/many.jsonl" 2>> "$TMP/summaries.err" > "$TMP/stdin.out"
check "--threads 1 and --threads 7 identical ($(wc -l < "$TMP/many.jsonl") rows)" cmp -s "$TMP/t1.out" "$TMP/t7.out"
check "--jsonl - (stdin) identical" cmp -s "$TMP/t1.out" "$TMP/stdin.out"
check "one output row per input row" test "$(wc -l < "$TMP/t1.out")" -eq "$(wc -l < "$TMP/many.jsonl")"
check "no progress output when stderr is not a terminal (and no row fails)" bash -c \
    "head -n 1 '$TMP/in.jsonl' | '$BIN' render '$t' --jsonl - 2>&1 > /dev/null | wc -c | grep -qx 0"
# failing rows are counted on stderr, with the first one's line number and output line
for n in 1 3; do
    "$BIN" render "$t" --jsonl "$TMP/in.jsonl" --threads $n 2> "$TMP/summary.err" > "$TMP/summary.out"
    nbad=$(grep -c '^{"error"' "$TMP/summary.out")
    first=$(grep -n -m 1 '^{"error"' "$TMP/summary.out")
    check "failing rows summed up on stderr ($n threads): $nbad of $rows, the first line ${first%%:*}" grep -qxF \
        "chatfmt: $nbad of $rows rows failed (their output lines hold \"error\"); the first is line ${first%%:*}: ${first#*:}" \
        "$TMP/summary.err"
    check "and nothing else on stderr ($n threads)" test "$(wc -l < "$TMP/summary.err")" -eq 1
done

# ---- line splitting: read(2) into block buffers, lines carried over ---------------------
# Each input line is a row: its '\n' and the '\r's before it stripped, a last
# line without '\n' is a row, an empty line is a (failing) row. Rows from 0
# bytes to past the 64 KiB block buffer and a 5 MB one cross every boundary;
# short rows fill blocks to their row limit. The expected output is worked
# out here, row by row, from the bytes (template: n, length and ends of s),
# so a row split, merged, lost, reordered or with a '\r' left fails.
printf '%s' '{{ n }}:{{ s | length }}:{{ s[:6] }}{{ s[-6:] }}' > "$TMP/lines.jinja"
mkdir -p "$TMP/lines"
python3 - "$TMP/lines" <<'EOF'
import json, random, sys
d = sys.argv[1]
rng = random.Random(11)
def row(i, size):
    s = "%06d" % i + "x" * size + "%06d" % i
    return json.dumps({"n": i, "s": s}).encode()
def write(name, data):
    open(f"{d}/{name}.jsonl", "wb").write(data)
write("empty", b"")
write("nl", b"\n")
write("cr", b"\r")
write("crlf-only", b"\r\n")
write("no-final-newline", row(0, 5) + b"\n" + row(1, 5))
write("crlf", row(0, 1) + b"\r\n" + row(1, 2) + b"\r\r\n\r\n" + row(2, 3) + b"\r\n\r" + b"\n" + row(3, 4) + b"\r")
write("blank", b"\n\n" + row(0, 1) + b"\n\n\n" + row(1, 1) + b"\n\n")
write("bad", row(0, 1) + b"\nnot json\n" + b'{"n": 1' + b"\n " + row(2, 1) + b"\r\n")
write("short", b"".join(row(i, i % 7) + (b"\n\n" if i % 97 == 0 else b"\n") for i in range(5000)))
sizes = [0, 1, 100, 4000, 16383, 16384, 65517, 65518, 65536, 70000, 131072, 300000]
parts = []
for i in range(400):
    size = 5 << 20 if i == 200 else rng.choice(sizes)
    parts.append(row(i, size) + rng.choice([b"\n", b"\r\n", b"\n\n", b"\r\r\n", b"\n\r\n"]))
parts.append(row(400, 70000))   # and no newline at the end
write("long", b"".join(parts))
# A mapped file's blocks are byte ranges (about 32 mean lines, at least
# 4 KiB) whose rows are the lines starting in them: small rows of mixed
# sizes and endings put range edges on a '\n', a '\r', an empty line and
# inside rows, every way.
write("ranges", b"".join(row(i, rng.choice([0, 1, 2, 30, 127, 128, 129, 1000, 4095, 4096, 4097, 9000]))
                         + rng.choice([b"\n", b"\r\n", b"\n\n", b"\r\n\r\n", b"\n\r\n"]) for i in range(3000)))
# A mapped file ends where its last page does when its size is a multiple
# of the page size: a last row without a newline, whole or cut short, ends
# right there (a reader looking one byte past a row would fault).
for page in (4096, 65536):
    for k, tail in enumerate([row(1, 3), row(2, 3)[:-1], row(3, 3)[:-3], b'{"n": 4, "s": "ab\\', b"{"]):
        first = row(0, 0)
        first = row(0, page - len(tail) - 1 - len(first))
        write(f"page-end-{page}-{k}", first + b"\n" + tail)
EOF
# check_lines IN OUT: OUT holds IN's rows as the template renders them.
check_lines() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
data = open(sys.argv[1], "rb").read()
lines = data.split(b"\n")
if lines[-1] == b"":   # a last line ending in '\n' ends the input; an unfinished one is a row
    lines.pop()
out = open(sys.argv[2], "rb").read().split(b"\n")
if out.pop() != b"":
    sys.exit("output does not end in a newline")
if len(out) != len(lines):
    sys.exit(f"{len(out)} output rows for {len(lines)} input lines")
for k, (line, got) in enumerate(zip(lines, out), 1):
    text = line.rstrip(b"\r").decode()
    try:
        ctx = json.loads(text)
        s = ctx["s"]
        want = {"text": f"{ctx['n']}:{len(s)}:{s[:6]}{s[-6:]}"}
    except json.JSONDecodeError as e:
        want = {"error": {"type": "JSONDecodeError", "message": str(e)}}
    if json.loads(got) != want:
        sys.exit(f"row {k}: want {str(want)[:150]} got {got[:150]}")
EOF
}
for f in "$TMP"/lines/*.jsonl; do
    name=$(basename "$f" .jsonl)
    "$BIN" render "$TMP/lines.jinja" --raw --jsonl "$f" --threads 1 2>> "$TMP/summaries.err" -o "$TMP/lines/$name.1"
    "$BIN" render "$TMP/lines.jinja" --raw --jsonl "$f" --threads 3 2>> "$TMP/summaries.err" > "$TMP/lines/$name.3"
    cat "$f" | "$BIN" render "$TMP/lines.jinja" --raw --jsonl - --threads 2 2>> "$TMP/summaries.err" > "$TMP/lines/$name.pipe"
    check "lines $name: $(python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(d.count(b"\n") + (not d.endswith(b"\n") and d != b""))' "$f") rows, each as worked out from its line" \
        check_lines "$f" "$TMP/lines/$name.1"
    check "lines $name: --threads 3 identical to --threads 1" cmp -s "$TMP/lines/$name.1" "$TMP/lines/$name.3"
    check "lines $name: from a pipe identical" cmp -s "$TMP/lines/$name.1" "$TMP/lines/$name.pipe"
done
check "an empty input is no row and no output" test ! -s "$TMP/lines/empty.1"
check "a lone '\\r' is an empty row, as a lone '\\n'" cmp -s "$TMP/lines/cr.1" "$TMP/lines/nl.1"

# --batch on the same reading: CRLF, blank and whitespace lines, long cases
# across buffers and no newline at the end, against the reference.
python3 - "$TMP/lines/batch.cases" <<'EOF'
import json, random, sys
rng = random.Random(5)
with open(sys.argv[1], "wb") as f:
    for i in range(300):
        size = rng.choice([0, 10, 60000, 65536, 100000, 250000])
        case = {"template_text": "{{ n }} {{ s | length }} {{ s[:3] }}", "context": {"n": i, "s": "%03d" % i + "y" * size}}
        f.write(json.dumps(case).encode())
        f.write(rng.choice([b"\n", b"\r\n", b"\n\n", b"\n \t\n", b"\r\n\r\n"]) if i < 299 else b"")
EOF
python3 "$SHARED/oracle/hf_render.py" --batch "$TMP/lines/batch.cases" > "$TMP/lines/batch.ref"
check "render --batch: 300 long cases, CRLF and blank lines, no newline at the end: rows of the reference" \
    test "$(wc -l < "$TMP/lines/batch.ref")" -eq 300
for n in 1 3; do
    "$BIN" render --batch "$TMP/lines/batch.cases" --threads "$n" > "$TMP/lines/batch.$n"
    check "render --batch --threads $n on those lines: identical to the reference" \
        cmp -s "$TMP/lines/batch.ref" "$TMP/lines/batch.$n"
done
check "render --batch from a pipe on those lines: identical to the reference" \
    bash -c "cat '$TMP/lines/batch.cases' | '$BIN' render --batch - --threads 2 | cmp -s - '$TMP/lines/batch.ref'"

# ---- options applied to every row -------------------------------------------------------
"$BIN" render "$t" --jsonl "$TMP/in.jsonl" -D enable_thinking=false -D 'extra={"k": [1]}' 2>> "$TMP/summaries.err" > "$TMP/d.out"
check "-D overrides every row" compare_with_oracle "$t" "$TMP/d.out" '{"enable_thinking": false, "extra": {"k": [1]}}'
"$BIN" render "$t" --jsonl "$TMP/in.jsonl" --add-generation-prompt 2>> "$TMP/summaries.err" > "$TMP/agp.out"
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

# Outputs that begin like earlier ones take the quoted bytes of that beginning
# (cli/quote_memo.c): texts sharing prefixes of every length, differing at
# and around the 256-byte pieces it compares, escapes across their edges,
# more kinds than it keeps, outputs with many escapes and with few; each
# output line must be json.dumps of its text.
python3 - "$TMP/memo.jsonl" "$TMP/memo.want" <<'EOF'
import json, random, sys
rng = random.Random(7)
alphabet = 'ab c"\\\n\t\x01\x1f\x7f/é€😀\u2028<>{}'
def text(n, rate=0.3):
    return "".join(rng.choice(alphabet) if rng.random() < rate else "x" for _ in range(n))
# dense in escapes (kept) and sparse (quoted whole: the memo rests after a run of them)
bases = [text(rng.choice([600, 2100, 5000, 9000, 20000]), rng.choice([0.3, 0.01])) for _ in range(12)]
rows = []
for _ in range(1500):
    b = rng.choice(bases)
    cut = rng.choice([0, 1, 255, 256, 257, 511, 512, 4095, 4096, 4097, rng.randrange(len(b) + 1)])
    cut = min(cut, len(b))
    kind = rng.randrange(4)
    if kind == 0: t = b                                            # the same
    elif kind == 1: t = b[:cut]                                    # a prefix
    elif kind == 2: t = b[:cut] + text(rng.randrange(1, 3000))     # a prefix and new text
    else: t = b[:cut] + rng.choice('"\\\nyé') + b[cut + 1:]        # one character changed
    rows.append(t)
with open(sys.argv[1], "w") as f, open(sys.argv[2], "w") as w:
    for t in rows:
        f.write(json.dumps({"text": t}) + "\n")
        w.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
EOF
printf '{{ text }}' > "$TMP/memo.jinja"
for n in 1 3; do
    "$BIN" render "$TMP/memo.jinja" --raw --jsonl "$TMP/memo.jsonl" --threads $n > "$TMP/memo.$n" 2>> "$TMP/summaries.err"
    check "outputs repeating earlier ones' beginnings (1500 rows, --threads $n): json.dumps of each" \
        cmp -s "$TMP/memo.$n" "$TMP/memo.want"
done

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
"$BIN" render "$TMP/tokenizer_config.json" --jsonl "$TMP/tools.jsonl" 2>> "$TMP/summaries.err" > "$TMP/tools.out"
for i in 1 2 3; do
    sed -n "${i}p" "$TMP/tools.jsonl" > "$TMP/row.json"
    python3 -c 'import json,sys; print(json.dumps({"text": open(sys.argv[1]).read()}, ensure_ascii=False))' \
        <("$BIN" render "$TMP/tokenizer_config.json" "$TMP/row.json") > "$TMP/want.row"
    check "tokenizer_config row $i picks its template as render does" cmp -s "$TMP/want.row" <(sed -n "${i}p" "$TMP/tools.out")
done

# A broken tool_use template fails only the rows with tools (transformers compiles it only then).
python3 -c 'import json, sys; json.dump({"chat_template": [{"name": "default", "template": "ok {{ messages | length }}"},
    {"name": "tool_use", "template": "{% if %}"}]}, open(sys.argv[1], "w"))' "$TMP/broken_tools.json"
"$BIN" render "$TMP/broken_tools.json" --jsonl "$TMP/tools.jsonl" 2>> "$TMP/summaries.err" > "$TMP/broken.out"
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

if [ -w /dev/full ]; then
    for n in 1 3; do
        check "a write error (/dev/full, --threads $n) is an IOError and exit status 1" bash -c \
            "'$BIN' render '$t' --jsonl '$TMP/many.jsonl' --threads $n > /dev/full 2> '$TMP/full.err'; [ \$? -eq 1 ] &&
             grep -qx 'chatfmt: error: IOError: cannot write the output: No space left on device' '$TMP/full.err'"
    done
fi
check "a read error (a directory as input) is an IOError and exit status 1" bash -c \
    "'$BIN' render '$t' --jsonl '$TMP' > /dev/null 2> '$TMP/dir.err'; [ \$? -eq 1 ] &&
     grep -q '^chatfmt: error: IOError: cannot read the input: ' '$TMP/dir.err'"
check "unknown option is a usage error" bash -c "'$BIN' render '$t' --jsonl '$TMP/in.jsonl' --bogus > /dev/null 2>&1; [ \$? -eq 2 ]"
check "missing input file fails" bash -c "! '$BIN' render '$t' --jsonl '$TMP/nope.jsonl' > /dev/null 2>&1"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
