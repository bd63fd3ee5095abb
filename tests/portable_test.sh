#!/usr/bin/env bash
# portable_test.sh — the code a machine without x86 SIMD runs (an ARM
# server, say): the library and CLI built with -DCF_NO_SIMD, which swaps the
# SSE2 string scans for their 8-bytes-a-word versions and turns the SSSE3
# shuffle quoting off. On it:
#   - test_json_strings and test_json (the JSON string paths against a
#     byte-by-byte model and against Python's own outputs);
#   - the seed goldens (seeds x conversations) through `render --batch`;
#   - dataset mode over the goldens' contexts: the same JSON Lines, byte for
#     byte, as the default build writes.
# Run from the repository after `make`. BUILD (default build), CC.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
CC=${CC:-cc}
OUT=$BUILD/portable
FLAGS=(-std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -O2 -DCF_NO_SIMD -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc)
export CHATFMT_NOW=2026-03-14T15:09:26 TZ=UTC
passed=0
failed=0
ok() { echo "ok: $1"; passed=$((passed + 1)); }
bad() { echo "FAIL: $1"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

[ -x "$BUILD/chatfmt" ] || { bad "$BUILD/chatfmt not built (run make)"; finish; }
rm -rf "$OUT"
mkdir -p "$OUT/obj" "$OUT/cli"
pids=()
for src in src/*.c src/*/*.c; do
    obj=${src#src/}
    "$CC" "${FLAGS[@]}" -c "$src" -o "$OUT/obj/${obj//\//_}.o" & pids+=($!)
done
for src in cli/*.c; do
    "$CC" "${FLAGS[@]}" -c "$src" -o "$OUT/cli/$(basename "$src" .c).o" & pids+=($!)
done
built=true
for p in "${pids[@]}"; do wait "$p" || built=false; done
$built && ar rcs "$OUT/libchatfmt.a" "$OUT"/obj/*.o &&
    "$CC" -o "$OUT/chatfmt" "$OUT"/cli/*.o "$OUT/libchatfmt.a" -lm -lpthread || { bad "build with -DCF_NO_SIMD"; finish; }
ok "library and CLI build with -DCF_NO_SIMD"

for t in test_json_strings test_json; do
    if "$CC" "${FLAGS[@]}" "tests/$t.c" "$OUT/libchatfmt.a" -lm -lpthread -o "$OUT/$t" &&
        "$OUT/$t" > "$OUT/$t.log" 2>&1; then
        ok "$t: $(grep -a -E '[0-9]+ passed' "$OUT/$t.log" | tail -n 1)"
    else
        bad "$t"
        tail -n 15 "$OUT/$t.log" | sed 's/^/    /'
    fi
done

cases=tests/golden/seeds.cases.jsonl
"$OUT/chatfmt" render --batch "$cases" > "$OUT/seeds.got.jsonl" 2> "$OUT/seeds.err"
if python3 tests/parity.py tests/golden/seeds.expected.jsonl "$OUT/seeds.got.jsonl" --cases "$cases" --min 1 \
    --strict-errors > "$OUT/seeds.parity" 2>&1; then
    ok "seed goldens: $(tail -n 1 "$OUT/seeds.parity")"
else
    bad "seed goldens"
    tail -n 15 "$OUT/seeds.parity" | sed 's/^/    /'
fi

# dataset mode: every golden context as a row of one template, both builds
python3 - "$cases" "$OUT/rows.jsonl" <<'EOF' || bad "rows for dataset mode"
import json, sys
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "w", encoding="utf-8") as out:
    for line in f:
        case = json.loads(line)
        if not case.get("raw"):
            out.write(json.dumps(case["context"], ensure_ascii=False) + "\n")
EOF
for t in glm45 command-a-reasoning; do
    "$BUILD/chatfmt" render "$t" --jsonl "$OUT/rows.jsonl" -o "$OUT/rows.$t.want" 2> /dev/null
    "$OUT/chatfmt" render "$t" --jsonl "$OUT/rows.jsonl" -o "$OUT/rows.$t.got" 2> /dev/null
    if [ -s "$OUT/rows.$t.want" ] && cmp -s "$OUT/rows.$t.want" "$OUT/rows.$t.got"; then
        ok "dataset mode, $t: $(wc -l < "$OUT/rows.$t.got") rows identical to the default build's"
    else
        bad "dataset mode, $t: output differs from the default build's"
    fi
done
finish
