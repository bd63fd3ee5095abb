#!/usr/bin/env bash
# bench/count_instructions.sh — instructions per render of each seed, counted
# by callgrind (repeatable on a loaded machine, where times are not):
#   conv         the shared conversations (render only: cf_render_chat)
#   conv_nosrc   the same without the JSON text the reader keeps for tojson
#                (contexts built in memory, as the Python binding's)
#   mixed        dataset mode's mixed rows (bench/gen_mixed_rows.py), render only
#   mixed_nosrc  the same without the JSON text
#   dataset_row  `chatfmt render SEED --jsonl ROWS --threads 1`: the whole
#                process (reading, rendering, writing, start-up and compile
#                amortised over the rows) per row
# Usage: bash bench/count_instructions.sh [ROWS]   (ROWS mixed rows, default 100;
# BUILD and CHATFMT_SHARED as make bench). Needs valgrind.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SHARED=${CHATFMT_SHARED:-../shared}
CC=${CC:-cc}
ROWS=${1:-100}
OUT=$BUILD/bench/instructions
command -v valgrind > /dev/null || { echo "count_instructions: valgrind not found"; exit 2; }
mkdir -p "$OUT" || exit 2
export CHATFMT_NOW=2026-03-14T15:09:26 TZ=UTC
$CC -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc bench/bench_render.c "$BUILD/libchatfmt.a" -lm -lpthread \
    -o "$OUT/bench_render" || exit 2
python3 bench/gen_mixed_rows.py "$SHARED" "$ROWS" > "$OUT/mixed.jsonl" || exit 2

# total Ir of a callgrind output file
total() { grep -E '^(summary|totals):' "$1" | head -n 1 | awk '{print $2}'; }
# per_render CASES [ENV=VALUE]: cf_render_chat's instructions per case (bench_render renders each case 5 times)
per_render() {
  local cases=$1 n
  shift
  n=$(wc -l < "$cases")
  env "$@" valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.out" --toggle-collect=cf_render_chat \
    "$OUT/bench_render" "$cases" 1 > /dev/null 2>&1 || { echo "?"; return; }
  echo $(($(total "$OUT/cg.out") / (5 * n)))
}

printf "%-22s %11s %11s %11s %11s %11s\n" seed conv conv_nosrc mixed mixed_nosrc dataset_row
for seed in "$SHARED"/seeds/*.jinja; do
  name=$(basename "$seed" .jinja)
  mkdir -p "$OUT/one" && rm -f "$OUT"/one/* && ln -s "$(realpath "$seed")" "$OUT/one/"
  python3 "$SHARED/tools/mkcases.py" "$OUT/one" "$SHARED/conversations" > "$OUT/conv.jsonl"
  python3 - "$(realpath "$seed")" "$OUT/mixed.jsonl" > "$OUT/mixedcases.jsonl" << 'EOF'
import json, sys
for line in open(sys.argv[2], encoding="utf-8"):
    print(json.dumps({"template": sys.argv[1], "context": json.loads(line)}, ensure_ascii=False))
EOF
  a=$(per_render "$OUT/conv.jsonl" X=1)
  b=$(per_render "$OUT/conv.jsonl" CHATFMT_BENCH_NO_JSON_SOURCE=1)
  c=$(per_render "$OUT/mixedcases.jsonl" X=1)
  d=$(per_render "$OUT/mixedcases.jsonl" CHATFMT_BENCH_NO_JSON_SOURCE=1)
  valgrind --tool=callgrind --callgrind-out-file="$OUT/cgd.out" "$BUILD/chatfmt" render "$seed" --jsonl "$OUT/mixed.jsonl" \
    --threads 1 -o "$OUT/out.jsonl" > /dev/null 2>&1
  e=$(($(total "$OUT/cgd.out") / ROWS))
  printf "%-22s %11s %11s %11s %11s %11s\n" "$name" "$a" "$b" "$c" "$d" "$e"
done
