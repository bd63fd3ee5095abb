#!/usr/bin/env bash
# The whole test suite; `make test` runs it after building. Each step prints
# `PASS name (figures)` or `FAIL name (details)`; the last line is
# `N passed, N failed` and the exit status is 1 when anything failed.
#
#   a. C unit tests tests/test_*.c, linked against $BUILD/libchatfmt.a
#      (files listed in tests/SKIP_C are skipped: work in progress)
#   b. goldens tests/golden/NAME.cases.jsonl == NAME.expected.jsonl, 100%
#   c. unit tables tests/unit/*.jsonl vs the reference, live, 100%
#      (except ids listed as `- unit:<id>` in tests/KNOWN_DIFFERENCES.md)
#   d. corpus: shared/corpus/templates x shared/conversations, >= 99.5%
#      and seeds + corpus x edge-case variants of the conversations,
#      and seeds + corpus on one long conversation (100% but known limits)
#      (tests/gen_conversation_variants.py), >= 99.5%
#   e. random templates from tests/randgen.py (fixed seeds), >= 99%
#   f. tests/*_test.sh scripts (exit status decides)
#   g. decoding grammars through llama.cpp's grammar engine, jsonschema and
#      python-lark (tests/grammar/)
#
# Environment: BUILD (default build), CHATFMT_BIN (default $BUILD/chatfmt),
# CC, CFLAGS (for the C tests), CHATFMT_SHARED (default ../shared),
# ORACLE_CACHE (reference outputs keyed by input hash; default build/oracle-cache),
# RANDOM_SEEDS / RANDOM_CASES (default "1 2 3" x 1000).
set -u
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build}
CHATFMT_BIN=${CHATFMT_BIN:-$BUILD/chatfmt}
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2 -g}
SHARED=${CHATFMT_SHARED:-../shared}
ORACLE_CACHE=${ORACLE_CACHE:-build/oracle-cache}
RANDOM_SEEDS=${RANDOM_SEEDS:-1 2 3}
RANDOM_CASES=${RANDOM_CASES:-1000}
OUT=$BUILD/tests
ORACLE=$SHARED/oracle/hf_render.py
KNOWN_ARGS=()
[ -f tests/KNOWN_DIFFERENCES.md ] && KNOWN_ARGS=(--known tests/KNOWN_DIFFERENCES.md)
# Both sides render with the same pinned clock and zone (as tests/testenv.py).
export CHATFMT_NOW=2026-03-14T15:09:26 TZ=UTC

mkdir -p "$OUT" || exit 2
passed=0
failed=0

# report WORD NAME [DETAILS]: one step's line, ending with the seconds spent
# since the previous report (steps run one after another).
mark=$SECONDS
report() {
    echo "$1 $2${3:+ ($3)} [$((SECONDS - mark))s]"
    mark=$SECONDS
}
pass() { report PASS "$1" "${2:-}"; passed=$((passed + 1)); }
fail() { report FAIL "$1" "$2"; failed=$((failed + 1)); }
skip() { report SKIP "$1" "$2"; }
indent() { sed 's/^/    /'; }
SANITIZER_REPORT='ERROR: (Address|Leak)Sanitizer|runtime error:'
# excerpt LOG N: N lines from the start of a sanitizer report when there is
# one, else the last N lines (without test-progress noise).
excerpt() {
    if grep -a -q -E "$SANITIZER_REPORT" "$1"; then
        grep -a -m 1 -A "$(($2 - 1))" -E "$SANITIZER_REPORT" "$1"
    else
        grep -a -v -E '^(ok|PASS)\b' "$1" | tail -n "$2"
    fi
}
oneline() { tr '\n' ' ' | sed 's/ *$//' | cut -c1-300; }

# ---- reference and engine runs ----------------------------------------------

oracle_usable() {
    [ -f "$ORACLE" ] && python3 -c 'import jinja2' 2>/dev/null
}

# oracle_run CASES OUT [FILE...]: the reference's results for CASES, from the
# cache when CASES, the files it names (FILE...), the oracle and the Python
# side are unchanged.
oracle_run() {
    local cases=$1 out=$2
    shift 2
    local key
    key=$( { cat "$cases" "$ORACLE" "$@"; python3 -c 'import sys, importlib.metadata as m; print(sys.version, m.version("jinja2"), m.version("markupsafe"))'; } \
           | sha256sum | cut -c1-32)
    local cached=$ORACLE_CACHE/$key.jsonl
    if [ ! -s "$cached" ]; then
        mkdir -p "$ORACLE_CACHE" || return 1
        # (Python warns while compiling what Jinja2 generates for `3[1:]`: noise, not a result)
        if ! PYTHONWARNINGS=ignore::SyntaxWarning python3 "$ORACLE" --batch "$cases" > "$cached.tmp.$$"; then
            rm -f "$cached.tmp.$$"
            return 1
        fi
        mv "$cached.tmp.$$" "$cached" || return 1
    fi
    cp "$cached" "$out"
}

# engine_run CASES OUT ERRLOG: chatfmt's results; non-zero when it did not exit 0.
engine_run() {
    timeout 600 "$CHATFMT_BIN" render --batch "$1" > "$2" 2> "$3"
}

engine_status() {   # engine_status EXIT ERRLOG -> text describing a bad exit
    local st=$1
    if [ "$st" -eq 124 ]; then echo "timed out"
    elif [ "$st" -gt 128 ]; then echo "killed by signal $((st - 128))"
    else echo "exit status $st"
    fi
    [ -s "$2" ] && echo ": $(excerpt "$2" 3 | oneline)"
}

# compare NAME CASES REF GOT ENGINE_EXIT ERRLOG PARITY-ARGS...: one PASS/FAIL line.
compare() {
    local name=$1 cases=$2 ref=$3 got=$4 st=$5 errlog=$6
    shift 6
    local report figures
    report=$(python3 tests/parity.py "$ref" "$got" --cases "$cases" --show 5 "$@" 2>&1)
    local verdict=$?
    figures=$(echo "$report" | tail -n 2 | tac | oneline)
    if [ "$st" -eq 0 ] && [ "$verdict" -eq 0 ]; then
        pass "$name" "$figures"
        return
    fi
    if [ "$st" -ne 0 ]; then
        fail "$name" "chatfmt $(engine_status "$st" "$errlog" | oneline); $figures"
    else
        fail "$name" "$figures"
    fi
    echo "$report" | head -n -2 | indent
    echo "    shrink one: python3 tests/reduce_case.py $cases ID --bin $CHATFMT_BIN"
}

# differential NAME CASES [--files FILE... --] PARITY-ARGS...: reference and
# engine run side by side (2 cores), then compare.
differential() {
    local name=$1 cases=$2
    shift 2
    local files=()
    if [ "${1:-}" = --files ]; then
        shift
        while [ "$1" != -- ]; do files+=("$1"); shift; done
        shift
    fi
    local ref=$OUT/$name.ref.jsonl got=$OUT/$name.got.jsonl errlog=$OUT/$name.stderr
    oracle_run "$cases" "$ref" "${files[@]}" &
    local oracle_pid=$!
    engine_run "$cases" "$got" "$errlog"
    local st=$?
    if ! wait "$oracle_pid"; then
        fail "$name" "the reference renderer failed on $cases"
        return
    fi
    compare "$name" "$cases" "$ref" "$got" "$st" "$errlog" "$@"
}

engine_ready() {    # engine_ready STEP: fail STEP when there is no binary
    [ -x "$CHATFMT_BIN" ] && return 0
    fail "$1" "$CHATFMT_BIN not built"
    return 1
}

# ---- a. C unit tests ------------------------------------------------------------

listed_in_skip_c() {
    [ -f tests/SKIP_C ] && sed 's/#.*//' tests/SKIP_C | tr -s ' \t' '\n' | grep -qx -e "$1" -e "$1.c"
}

for src in tests/test_*.c; do
    [ -e "$src" ] || continue
    name=$(basename "$src" .c)
    if listed_in_skip_c "$name"; then
        skip "$name" "listed in tests/SKIP_C"
        continue
    fi
    log=$OUT/$name.log
    # shellcheck disable=SC2086  # CFLAGS is a list of flags
    if ! $CC -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter $CFLAGS -D_POSIX_C_SOURCE=200809L \
            -Iinclude -Isrc "$src" "$BUILD/libchatfmt.a" -lm -lpthread -o "$OUT/$name" > "$log" 2>&1; then
        fail "$name" "does not compile: $(head -n 3 "$log" | oneline)"
        continue
    fi
    timeout 300 "$OUT/$name" > "$log" 2>&1
    st=$?
    summary=$(grep -a -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ "$st" -eq 0 ]; then
        pass "$name" "$summary"
    else
        fail "$name" "$(engine_status "$st" /dev/null | oneline)${summary:+; $summary}"
        excerpt "$log" 15 | indent
    fi
done

# ---- b. goldens -------------------------------------------------------------------

for cases in tests/golden/*.cases.jsonl; do
    [ -e "$cases" ] || continue
    name=golden-$(basename "$cases" .cases.jsonl)
    expected=${cases%.cases.jsonl}.expected.jsonl
    engine_ready "$name" || continue
    got=$OUT/$name.got.jsonl
    engine_run "$cases" "$got" "$OUT/$name.stderr"
    compare "$name" "$cases" "$expected" "$got" $? "$OUT/$name.stderr" --min 1 --strict-errors
done

# ---- c, d, e: against the reference, live -------------------------------------------

if [ ! -d "$SHARED" ]; then
    skip "unit, corpus, random" "shared directory $SHARED not found (set CHATFMT_SHARED); the reference renderer lives there"
elif ! oracle_usable; then
    skip "unit, corpus, random" "python3 with jinja2 or $ORACLE unavailable"
else
    for table in tests/unit/*.jsonl; do
        [ -e "$table" ] || continue
        name=unit-$(basename "$table" .jsonl)
        engine_ready "$name" && differential "$name" "$table" --min 1 --strict-messages ${KNOWN_ARGS[@]+"${KNOWN_ARGS[@]}"}
    done

    if engine_ready corpus; then
        cases=$OUT/corpus.cases.jsonl
        python3 "$SHARED/tools/mkcases.py" "$SHARED/corpus/templates" "$SHARED/conversations" > "$cases"
        differential corpus "$cases" --files "$SHARED"/corpus/templates/*.jinja -- --min 0.995 --strict-messages
    fi

    # seeds and corpus on edge-case variants of the conversations (odd content, roles, arguments)
    if engine_ready variants; then
        cases=$OUT/variants.cases.jsonl
        rm -rf "$OUT/variants" && python3 tests/gen_conversation_variants.py "$SHARED/conversations" "$OUT/variants" 2> /dev/null
        { python3 "$SHARED/tools/mkcases.py" "$SHARED/seeds" "$OUT/variants"
          python3 "$SHARED/tools/mkcases.py" "$SHARED/corpus/templates" "$OUT/variants"; } > "$cases"
        differential variants "$cases" --files "$SHARED"/seeds/*.jinja "$SHARED"/corpus/templates/*.jinja -- \
            --min 0.995 --strict-messages
    fi

    # every template on one long conversation (~4000 messages, 1.8 MB): memory and
    # steps that grow faster than the conversation show here (tests/gen_long_conversation.py)
    if engine_ready long; then
        cases=$OUT/long.cases.jsonl
        python3 tests/gen_long_conversation.py "$SHARED" > "$cases"
        differential long "$cases" --files "$SHARED"/seeds/*.jinja "$SHARED"/corpus/templates/*.jinja -- \
            --min 1 --strict-messages ${KNOWN_ARGS[@]+"${KNOWN_ARGS[@]}"}
    fi

    if engine_ready random; then
        cases=$OUT/random.cases.jsonl
        for seed in $RANDOM_SEEDS; do
            python3 tests/randgen.py "$seed" "$RANDOM_CASES"
        done > "$cases"
        differential random "$cases" --min 0.99 --strict-messages
    fi
fi

# ---- f. other engineers' scripts ------------------------------------------------------

for script in tests/*_test.sh; do
    [ -e "$script" ] || continue
    name=$(basename "$script" .sh)
    log=$OUT/$name.log
    if BUILD=$BUILD CHATFMT_BIN=$CHATFMT_BIN CHATFMT_SHARED=$SHARED timeout 600 bash "$script" > "$log" 2>&1; then
        pass "$name"
    else
        fail "$name" "exit status $?: $(tail -n 3 "$log" | oneline)"
    fi
done

# ---- g. decoding grammars (tests/grammar/) ---------------------------------------------
# llama.cpp's own grammar engine (llama-grammar.cpp from the pinned llama.rn sources,
# built by tests/grammar/llama_engine.sh) runs the grammars chatfmt emits: every reply
# of the round trip accepted, broken ones rejected; JSON Schema grammars agree with
# Python's jsonschema, and python-lark reads the Lark spelling of the same schemas.

# relay CMD...: the PASS/FAIL/SKIP lines a script prints become steps here.
relay() {
    local out line word name rest
    out=$("$@" 2>&1)
    local st=$?
    local seen=0
    while IFS= read -r line; do
        if [[ $line =~ ^(PASS|FAIL|SKIP)\ ([^ ]+)\ \((.*)\)$ ]]; then
            word=${BASH_REMATCH[1]} name=${BASH_REMATCH[2]} rest=${BASH_REMATCH[3]}
            seen=1
            case $word in
                PASS) pass "$name" "$rest" ;;
                FAIL) fail "$name" "$rest"; printf '%s\n' "$out" | grep -v -E '^(PASS|FAIL|SKIP) ' | head -n 15 | indent ;;
                SKIP) skip "$name" "$rest" ;;
            esac
        fi
    done <<< "$out"
    [ "$seen" = 1 ] || fail "$(basename "$2" .py)" "exit status $st: $(printf '%s\n' "$out" | tail -n 3 | oneline)"
}

grammar_python_ready() {
    python3 -c 'import jsonschema' 2> /dev/null && return 0
    # Debian's package, for the python3 on PATH when it is not Debian's own
    { apt-get install -y -qq python3-jsonschema || { apt-get update -qq && apt-get install -y -qq python3-jsonschema; }; } > /dev/null 2>&1
    PYTHONPATH=/usr/lib/python3/dist-packages python3 -c 'import jsonschema' 2> /dev/null
}

llama_check=$(BUILD=$BUILD bash tests/grammar/llama_engine.sh 2>&1 | tail -n 1)
case $llama_check in
    SKIP*) skip grammar_llamacpp "llama.cpp's grammar engine: ${llama_check#SKIP }" ;;
    *)
        relay python3 tests/grammar/roundtrip_grammar.py "$CHATFMT_BIN" "$llama_check" "$SHARED"
        if grammar_python_ready; then
            python3 -c 'import lark' 2> /dev/null || [ -d /usr/lib/python3/dist-packages/lark ] ||
                apt-get install -y -qq python3-lark > /dev/null 2>&1
            relay python3 tests/grammar/schema_agreement.py "$CHATFMT_BIN" "$llama_check" --lark --lark-every 4
        else
            skip schema_gbnf_llamacpp "needs Python's jsonschema (python3-jsonschema)"
        fi
        ;;
esac

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
