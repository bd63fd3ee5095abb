#!/usr/bin/env bash
# hostile_test.sh — hostile inputs never crash, hang or exhaust memory (issue 5).
#
#   1. the hostile suite (tests/hostile/gen_cases.py, run_hostile.py): every
#      case exits 0 or 1 within 1 s of CPU and under 1.25 GiB, with a clear
#      message (a LimitError names its limit and how to raise it); syntax and
#      sandbox cases end as the reference renderer does
#   2. the fuzzers' crash inputs (tests/hostile/regress/NAME/*) replayed
#      through the harnesses fuzz/fuzz_NAME.c built without libFuzzer
#   3. the corpus with default limits: no render stops on a LimitError
#
# Run by tests/run_tests.sh (any tests/*_test.sh) with BUILD, CHATFMT_BIN,
# CHATFMT_SHARED, CC and CFLAGS in the environment. On a sanitizer build
# (ASan/UBSan/TSan: CFLAGS has -fsanitize) time and memory are not judged.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
BIN=${CHATFMT_BIN:-$BUILD/chatfmt}
SHARED=${CHATFMT_SHARED:-../shared}
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2 -g}
OUT=$BUILD/tests/hostile
mkdir -p "$OUT" || exit 2
failed=0

step() { echo "== $1"; }

sanitized=()
case " $CFLAGS " in *-fsanitize=*) sanitized=(--sanitized) ;; esac
oracle=()
if [ -f "$SHARED/oracle/hf_render.py" ] && python3 -c 'import jinja2' 2>/dev/null; then
    oracle=(--oracle "$SHARED/oracle/hf_render.py")
fi

step "hostile suite"
rm -f "$OUT/suite.log"
if ! python3 tests/hostile/gen_cases.py "$OUT/cases"; then
    echo "FAIL could not generate the hostile cases"
    failed=1
elif ! python3 tests/hostile/run_hostile.py "$OUT/cases/manifest.jsonl" --bin "$BIN" \
        ${oracle[@]+"${oracle[@]}"} ${sanitized[@]+"${sanitized[@]}"} > "$OUT/suite.log"; then
    failed=1
fi
[ -f "$OUT/suite.log" ] && cat "$OUT/suite.log"
rm -rf "$OUT/cases"     # ~150 MB of generated inputs

step "fuzzer crash inputs replayed"
for dir in tests/hostile/regress/*/; do
    name=$(basename "$dir")
    inputs=("$dir"*)
    [ -e "${inputs[0]}" ] || continue
    driver=$OUT/replay_$name
    # shellcheck disable=SC2086  # CFLAGS is a list of flags
    if ! $CC -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter $CFLAGS -D_POSIX_C_SOURCE=200809L \
            -Iinclude -Isrc "fuzz/fuzz_$name.c" fuzz/standalone_main.c "$BUILD/libchatfmt.a" -lm -lpthread \
            -o "$driver" 2> "$driver.log"; then
        echo "FAIL replay $name: the harness does not compile: $(head -c 300 "$driver.log")"
        failed=1
        continue
    fi
    for input in "${inputs[@]}"; do
        timeout 60 "$driver" "$input" > "$driver.log" 2>&1
        st=$?
        if [ "$st" -eq 0 ]; then
            echo "PASS replay $name/$(basename "$input")"
        else
            [ "$st" -gt 128 ] && st="signal $((st - 128))"
            echo "FAIL replay $name/$(basename "$input") (exit status $st$(grep -m1 -E 'ERROR|runtime error' "$driver.log" | cut -c1-200 | sed 's/^/: /'))"
            failed=1
        fi
    done
done

# corpus_limits NAME OPTIONS...: no corpus render may stop on a LimitError
corpus_limits() {
    local name=$1
    shift
    timeout 600 "$BIN" render "$@" --batch "$OUT/corpus.jsonl" > "$OUT/corpus.got.jsonl"
    local total got limited
    total=$(wc -l < "$OUT/corpus.jsonl")
    got=$(wc -l < "$OUT/corpus.got.jsonl")
    limited=$(grep -c '"error_type": "LimitError"' "$OUT/corpus.got.jsonl")
    if [ "$got" -ne "$total" ] || [ "$limited" -ne 0 ]; then
        echo "FAIL corpus, $name: $got of $total results, $limited stopped by a limit"
        grep '"LimitError"' "$OUT/corpus.got.jsonl" | head -n 3
        failed=1
    else
        echo "PASS corpus, $name: $total renders, none stopped by a limit"
    fi
}

step "corpus with default limits, and with every limit 10-100 times tighter"
if [ -d "$SHARED/corpus/templates" ] && [ -f "$SHARED/tools/mkcases.py" ]; then
    python3 "$SHARED/tools/mkcases.py" "$SHARED/corpus/templates" "$SHARED/conversations" > "$OUT/corpus.jsonl"
    corpus_limits "default limits"
    # the defaults leave room: steps and output /100, memory and strings /64,
    # items /100, recursion /25, parser nesting /10
    corpus_limits "tight limits" --max-steps 100000 --max-output 655360 --max-memory 4194304 \
        --max-string 262144 --max-items 40000 --max-recursion 20 --max-parse-depth 50
else
    echo "SKIP corpus ($SHARED/corpus not found)"
fi

# the line tests/run_tests.sh shows in this step's PASS line
worst=$(sed -n 's/^worst passing case: \(.*\)/\1/p' "$OUT/suite.log" 2>/dev/null)
[ -n "$worst" ] && echo "figures: hostile suite's worst case $worst${sanitized[@]+ (sanitized build: not judged)}"
[ "$failed" -eq 0 ]
