#!/usr/bin/env bash
# hostile_test.sh — hostile inputs never crash, hang or exhaust memory (issue 5).
#
#   1. the hostile suite (tests/hostile/gen_cases.py, run_hostile.py): every
#      case exits 0 or 1 within 1 s of CPU and under 1.25 GiB, with a clear
#      message (a LimitError names its limit and how to raise it); syntax and
#      sandbox cases end as the reference renderer does
#   2. the fuzzers' crash inputs (tests/hostile/regress/NAME/*) replayed
#      through the harnesses fuzz/fuzz_NAME.c built without libFuzzer
#      (and, when clang is installed, built with clang ASan + UBSan, with a
#      few tiny inputs each: clang's UBSan sees NULL + 0, gcc's does not)
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

# replay_driver CC CFLAGS LIB NAME: build fuzz/fuzz_NAME.c with standalone_main.c
# into $driver; say FAIL and return 1 when it does not compile
replay_driver() {
    local cc=$1 cflags=$2 lib=$3 name=$4
    # shellcheck disable=SC2086  # cflags is a list of flags
    if ! $cc -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter $cflags -D_POSIX_C_SOURCE=200809L \
            -Iinclude -Isrc "fuzz/fuzz_$name.c" fuzz/standalone_main.c "$lib" -lm -lpthread \
            -o "$driver" 2> "$driver.log"; then
        echo "FAIL replay $name: the harness does not compile: $(head -c 300 "$driver.log")"
        return 1
    fi
}

# replay_input LABEL INPUT: run $driver on one input; FAIL says how it ended
replay_input() {
    timeout 60 "$driver" "$2" > "$driver.log" 2>&1
    local st=$?
    [ "$st" -eq 0 ] && return 0
    [ "$st" -gt 128 ] && st="signal $((st - 128))"
    echo "FAIL replay $1 (exit status $st$(grep -m1 -E 'ERROR|runtime error' "$driver.log" | cut -c1-200 | sed 's/^/: /'))"
    return 1
}

step "fuzzer crash inputs replayed"
for dir in tests/hostile/regress/*/; do
    name=$(basename "$dir")
    inputs=("$dir"*)
    [ -e "${inputs[0]}" ] || continue
    driver=$OUT/replay_$name
    replay_driver "$CC" "$CFLAGS" "$BUILD/libchatfmt.a" "$name" || { failed=1; continue; }
    for input in "${inputs[@]}"; do
        if replay_input "$name/$(basename "$input")" "$input"; then
            echo "PASS replay $name/$(basename "$input")"
        else
            failed=1
        fi
    done
done

# clang's UBSan reports what gcc's does not (NULL + 0, the empty template's
# crash, among them), so when clang is here the harnesses are also built with
# clang ASan + UBSan, on a library built once in build-clang-san/ (make keeps
# it), and replay the crash inputs and a few tiny inputs each (the empty one too).
CLANG_SAN_BUILD=build-clang-san
CLANG_SAN_CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
step "crash inputs and tiny inputs replayed under clang ASan + UBSan"
clang_started=$SECONDS
clang_seconds=
if ! command -v clang > /dev/null; then
    echo "SKIP clang_sanitizer_replay (clang not found)"
elif ! make --no-print-directory -j2 BUILD=$CLANG_SAN_BUILD CC=clang CFLAGS="$CLANG_SAN_CFLAGS" \
        "$CLANG_SAN_BUILD/libchatfmt.a" > "$OUT/clang_san_build.log" 2>&1; then
    echo "FAIL clang_sanitizer_replay (the library does not build with clang: $(grep -m1 -E 'error' "$OUT/clang_san_build.log" | cut -c1-300))"
    failed=1
else
    tiny=$OUT/tiny
    rm -rf "$tiny" && mkdir -p "$tiny"
    i=0
    for text in '' '\0' '\0377' ' ' '0' '{' '[' '{}' '[]' '""' '{{' '{%' '{#'; do   # (printf %b escapes)
        printf '%b' "$text" > "$tiny/tiny-$i"
        i=$((i + 1))
    done
    for harness in fuzz/fuzz_*.c; do
        name=$(basename "$harness" .c)
        name=${name#fuzz_}
        driver=$OUT/clang_san_replay_$name
        replay_driver clang "$CLANG_SAN_CFLAGS" "$CLANG_SAN_BUILD/libchatfmt.a" "$name" || { failed=1; continue; }
        ok=0 bad=0
        for input in tests/hostile/regress/"$name"/* "$tiny"/*; do
            [ -e "$input" ] || continue
            if replay_input "clang_san/$name/$(basename "$input")" "$input"; then
                ok=$((ok + 1))
            else
                bad=$((bad + 1))
            fi
        done
        [ "$bad" -eq 0 ] && echo "PASS clang_san_replay_$name ($((ok - i)) crash inputs and $i tiny ones)"
        [ "$bad" -ne 0 ] && failed=1
    done
    clang_seconds=$((SECONDS - clang_started))
    echo "clang sanitizer replay: $clang_seconds s (the library's build included when it was not built)"
fi

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
[ -n "$worst" ] && echo "figures: hostile suite's worst case $worst${sanitized[@]+ (sanitized build: not judged)}${clang_seconds:+; clang sanitizer replay $clang_seconds s}"
[ "$failed" -eq 0 ]
