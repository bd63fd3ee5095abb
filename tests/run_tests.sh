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
#      and shared/corpus/more (181 more real templates) x the conversations
#      (step corpus-more) and x the edge-case variants, 100%
#   d2. other engines' test suites (shared/suites/cases.jsonl: Jinja2,
#      minijinja, minja, @huggingface/jinja), 100% but known differences
#   d3. the reply round trip over corpus/templates and corpus/more (shared/
#      tools/reply_roundtrip.py): figures, each at least what it was
#   e. random templates from tests/randgen.py (fixed seeds), >= 99.9%
#   f. replies: the peers' own parser tests' replies (tests/reply_peer_cases.py,
#      at least REPLY_CASES_MIN matched, REPLY_STRICT_MIN of the strict ones); the corpus templates' tool calls and
#      reasoning read back whole and streamed (tests/reply_template_roundtrip.py,
#      at least ROUNDTRIP_MIN matched)
#   g. tests/*_test.sh scripts (exit status decides)
#   h. the JavaScript package js/ (make wasm; node --test js/test/), when node is present
#   i. decoding grammars through llama.cpp's grammar engine, jsonschema and
#      python-lark (tests/grammar/)
#
# Environment: BUILD (default build), CHATFMT_BIN (default $BUILD/chatfmt),
# CC, CFLAGS (for the C tests), CHATFMT_SHARED (default ../shared),
# ORACLE_CACHE (reference outputs keyed by input hash; default build/oracle-cache),
# ORACLE_JOBS (reference processes for a long case file; default 2),
# RANDOM_SEEDS / RANDOM_CASES (default "1 2 3" x 4000).
set -u
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build}
CHATFMT_BIN=${CHATFMT_BIN:-$BUILD/chatfmt}
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2 -g}
SHARED=${CHATFMT_SHARED:-../shared}
ORACLE_CACHE=${ORACLE_CACHE:-build/oracle-cache}
RANDOM_SEEDS=${RANDOM_SEEDS:-1 2 3}
RANDOM_CASES=${RANDOM_CASES:-4000}
ORACLE_JOBS=${ORACLE_JOBS:-2}
OUT=$BUILD/tests
ORACLE=$SHARED/oracle/hf_render.py
KNOWN_ARGS=()
[ -f tests/KNOWN_DIFFERENCES.md ] && KNOWN_ARGS=(--known tests/KNOWN_DIFFERENCES.md)
# Both sides render with the same pinned clock and zone (as tests/testenv.py).
TESTS_NOW=2026-03-14T15:09:26
export CHATFMT_NOW=$TESTS_NOW TZ=UTC
SUITES_NOW=2025-07-10T12:00:00      # the date @huggingface/jinja's tests pin (shared/suites/README.txt)
# Reply round trips matched (of the template x scenario cases each corpus
# prints) by shared/tools/reply_roundtrip.py: raise as formats land.
declare -A REPLY_CORPUS_MIN=([templates]=188 [more]=197)

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
        if ! oracle_parallel "$cases" "$cached.tmp.$$"; then
            rm -f "$cached.tmp.$$"
            return 1
        fi
        mv "$cached.tmp.$$" "$cached" || return 1
    fi
    cp "$cached" "$out"
}

# oracle_parallel CASES OUT: the reference over CASES, a long file split in
# ORACLE_JOBS runs side by side (compiling each template is its cost), the
# results joined in input order.
oracle_parallel() {
    local cases=$1 out=$2 lines jobs=$ORACLE_JOBS
    lines=$(wc -l < "$cases")
    [ "$lines" -lt 1000 ] && jobs=1
    # (Python warns while compiling what Jinja2 generates for `3[1:]`: noise, not a result)
    if [ "$jobs" -le 1 ]; then
        PYTHONWARNINGS=ignore::SyntaxWarning python3 "$ORACLE" --batch "$cases" > "$out"
        return
    fi
    local part=$out.part pids=() k ok=0
    split -n "l/$jobs" -d -a 2 "$cases" "$part.in."
    for k in $(seq -f %02g 0 $((jobs - 1))); do
        PYTHONWARNINGS=ignore::SyntaxWarning python3 "$ORACLE" --batch "$part.in.$k" > "$part.out.$k" &
        pids+=($!)
    done
    for k in "${pids[@]}"; do wait "$k" || ok=1; done
    [ "$ok" -eq 0 ] && cat "$part".out.* > "$out"
    rm -f "$part".in.* "$part".out.*
    return "$ok"
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

    # 181 more real templates (vLLM, axolotl, unsloth, TRL, Ollama, llama.cpp
    # forks, gpt4all): a template the reference cannot compile fails in both
    if [ -d "$SHARED/corpus/more" ] && engine_ready corpus-more; then
        cases=$OUT/corpus-more.cases.jsonl
        python3 "$SHARED/tools/mkcases.py" "$SHARED/corpus/more" "$SHARED/conversations" > "$cases"
        differential corpus-more "$cases" --files "$SHARED"/corpus/more/*.jinja -- --min 1 --strict-messages
        if [ -d "$OUT/variants" ]; then
            cases=$OUT/corpus-more-variants.cases.jsonl
            python3 "$SHARED/tools/mkcases.py" "$SHARED/corpus/more" "$OUT/variants" > "$cases"
            differential corpus-more-variants "$cases" --files "$SHARED"/corpus/more/*.jinja -- --min 1 --strict-messages
        fi
    fi

    # the test suites of other Jinja engines, with the clock they pin
    # (shared/suites/README.txt): every case, failures listed by id
    if [ -f "$SHARED/suites/cases.jsonl" ] && engine_ready suites; then
        echo "CHATFMT_NOW=$SUITES_NOW" > "$OUT/suites.clock"
        CHATFMT_NOW=$SUITES_NOW
        differential suites "$SHARED/suites/cases.jsonl" --files "$OUT/suites.clock" -- \
            --min 1 --strict-messages --show 1000 ${KNOWN_ARGS[@]+"${KNOWN_ARGS[@]}"}
        CHATFMT_NOW=$TESTS_NOW
    fi

    # the reply round trip on real templates: what chatfmt parse recovers of
    # an assistant turn each template renders (one call, two calls, text and
    # a call, reasoning). Figures, not targets: reply formats are being
    # added; each must stay at least what it was (REPLY_CORPUS_MIN).
    if engine_ready reply-corpus; then
        figures=""
        status=0
        for dir in templates more; do
            [ -d "$SHARED/corpus/$dir" ] || continue
            log=$OUT/reply-corpus-$dir.log
            python3 "$SHARED/tools/reply_roundtrip.py" "$CHATFMT_BIN" "$SHARED/corpus/$dir" > "$log" 2>&1
            got=$(sed -n 's|^round trip: \([0-9]*\)/\([0-9]*\) = .*|\1/\2|p' "$log")
            min=${REPLY_CORPUS_MIN[$dir]}
            figures+="${figures:+, }corpus/$dir $got (at least $min)"
            if [ -z "$got" ] || [ "${got%/*}" -lt "$min" ]; then status=1; fi
        done
        if [ "$status" -eq 0 ]; then pass reply-corpus "$figures"
        else
            fail reply-corpus "$figures"
            tail -n 8 "$OUT"/reply-corpus-*.log | indent
        fi
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
        differential random "$cases" --min 0.999 --strict-messages
    fi
fi

# ---- f. replies: the peers' parser tests --------------------------------------------

# The least number of peer test cases (shared/replies) chatfmt must parse as
# the test asserts, and of them the strict cases of cases.jsonl (the whole message
# asserted; 95% of the 695 is 661): raise them as reply formats land.
REPLY_CASES_MIN=672
REPLY_STRICT_MIN=661

# reply_step NAME LOG STATUS: PASS/FAIL from a reply script's last line and log.
reply_step() {
    local figures
    figures=$(tail -n 1 "$2" | sed 's/^[a-z ]*: //' | oneline)
    if [ "$3" -eq 0 ]; then
        pass "$1" "$figures"
    else
        fail "$1" "${figures:-exit status $3}"
        { grep -a -E '^(per |templates: |streamed |FAIL|    )' "$2" || tail -n 5 "$2"; } | head -n 24 | indent
    fi
}

if [ ! -f "$SHARED/replies/cases.jsonl" ]; then
    skip reply-peer-cases "$SHARED/replies/cases.jsonl not found (set CHATFMT_SHARED)"
elif engine_ready reply-peer-cases; then
    log=$OUT/reply-peer-cases.log
    python3 tests/reply_peer_cases.py --chatfmt "$CHATFMT_BIN" --shared "$SHARED" --known tests/KNOWN_DIFFERENCES.md \
        --chunks 1 --min-matched "$REPLY_CASES_MIN" --min-strict "$REPLY_STRICT_MIN" --show 8 --failures "$OUT/reply-peer-cases.failures" > "$log" 2>&1
    reply_step reply-peer-cases "$log" $?
fi

# The least number of (corpus template x scenario) replies chatfmt must read
# back, whole and streamed (tests/reply_template_roundtrip.py): raise it as
# reply formats land (the goal is 98%).
ROUNDTRIP_MIN=842

if [ ! -d "$SHARED/corpus/more" ]; then
    skip reply-roundtrip "$SHARED/corpus not found (set CHATFMT_SHARED)"
elif ! oracle_usable; then
    skip reply-roundtrip "python3 with jinja2 or $ORACLE unavailable"
elif engine_ready reply-roundtrip; then
    log=$OUT/reply-roundtrip.log
    ORACLE_CACHE=$ORACLE_CACHE python3 tests/reply_template_roundtrip.py --chatfmt "$CHATFMT_BIN" --shared "$SHARED" \
        --known tests/KNOWN_DIFFERENCES.md --min-matched "$ROUNDTRIP_MIN" --show 8 \
        --failures "$OUT/reply-roundtrip.failures" > "$log" 2>&1
    reply_step reply-roundtrip "$log" $?
fi

# ---- h. the JavaScript package js/: `make wasm`, then node --test js/test/ ---------------
# (the corpus and unit tables' references come from the oracle cache, as above)
js_step() {
    if ! command -v node > /dev/null 2>&1; then
        skip js "node not found: the WebAssembly package is not tested"
        return
    fi
    if ! bash js/tools/ensure_emscripten.sh > "$OUT/js-wasm.log" 2>&1; then
        skip js "emscripten missing and not installable: $(tail -n 1 "$OUT/js-wasm.log" | oneline)"
        return
    fi
    if ! make --no-print-directory wasm BUILD=build > "$OUT/js-wasm.log" 2>&1; then
        fail js "make wasm: $(tail -n 3 "$OUT/js-wasm.log" | oneline)"
        return
    fi
    local env=(CHATFMT_BIN="$(realpath "$CHATFMT_BIN")" CHATFMT_SHARED="$(realpath "$SHARED")"
               CHATFMT_JS_FIGURES="$(realpath "$OUT")/js-figures.txt")
    if [ -d "$SHARED" ] && oracle_usable; then
        local cases=$OUT/js-corpus.cases.jsonl ref=$OUT/js-corpus.ref.jsonl unit= table
        python3 "$SHARED/tools/mkcases.py" "$SHARED/corpus/templates" "$SHARED/conversations" > "$cases" &&
            oracle_run "$cases" "$ref" "$SHARED"/corpus/templates/*.jinja &&
            env+=(CHATFMT_JS_CORPUS_CASES="$(realpath "$cases")" CHATFMT_JS_CORPUS_REF="$(realpath "$ref")")
        for table in tests/unit/*.jsonl; do
            ref=$OUT/js-unit-$(basename "$table" .jsonl).ref.jsonl
            oracle_run "$table" "$ref" && unit+="$(realpath "$table"):$(realpath "$ref"),"
        done
        env+=(CHATFMT_JS_UNIT="$unit")
    fi
    # chromium, playwright-core and typescript for the playground and types tests (each SKIPs without them)
    local deps
    deps=$(bash js/tools/ensure_test_deps.sh "$BUILD/js-deps" 2>> "$OUT/js-wasm.log") && env+=(CHATFMT_JS_DEPS="$deps")
    rm -f "$OUT/js-figures.txt"
    local log=$OUT/js.log
    if env "${env[@]}" timeout 600 node --test js/test/*.test.mjs > "$log" 2>&1; then
        pass js "$(grep -E '^# (tests|pass|skipped) ' "$log" | tr -d '#' | oneline); $(sed ':a;N;$!ba;s/\n/; /g' "$OUT/js-figures.txt")"
    else
        fail js "$(grep -E '^# (tests|pass|fail) ' "$log" | tr -d '#' | oneline)"
        grep -E '^not ok|^  error:' "$log" | head -n 10 | indent
    fi
}
js_step

# ---- g. other engineers' scripts ------------------------------------------------------

for script in tests/*_test.sh; do
    [ -e "$script" ] || continue
    name=$(basename "$script" .sh)
    log=$OUT/$name.log
    if BUILD=$BUILD CHATFMT_BIN=$CHATFMT_BIN CHATFMT_SHARED=$SHARED timeout 600 bash "$script" > "$log" 2>&1; then
        pass "$name" "$(sed -n 's/^figures: //p' "$log" | tail -n 1)"   # (a script's `figures: ...` line)
    else
        fail "$name" "exit status $?: $(tail -n 3 "$log" | oneline)"
    fi
done

# ---- i. decoding grammars (tests/grammar/) ---------------------------------------------
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
        # Debian's python3-lark, for both steps that read the Lark grammars
        python3 -c 'import lark' 2> /dev/null || [ -d /usr/lib/python3/dist-packages/lark ] ||
            { apt-get install -y -qq python3-lark || { apt-get update -qq && apt-get install -y -qq python3-lark; }; } \
                > /dev/null 2>&1
        relay python3 tests/grammar/roundtrip_grammar.py "$CHATFMT_BIN" "$llama_check" "$SHARED"
        if grammar_python_ready; then
            relay python3 tests/grammar/schema_agreement.py "$CHATFMT_BIN" "$llama_check" --lark --lark-every 4
        else
            skip schema_gbnf_llamacpp "needs Python's jsonschema (python3-jsonschema)"
        fi
        ;;
esac

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
