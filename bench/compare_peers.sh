#!/usr/bin/env bash
# compare_peers.sh — chatfmt next to the engines LLM servers use for chat
# templates: llama.cpp's own (C++, common/jinja: what llama-server renders
# with), @huggingface/jinja (transformers.js) and minijinja-js, and chatfmt's
# own WebAssembly package (js/, timed from JavaScript as they are), on the same
# cases: seeds x conversations and corpus x conversations.
# Prints, per engine, the cases identical to the reference renderer (text,
# or an error where it fails) and, on the seeds, microseconds per render with
# templates compiled once, next to Python Jinja2's in the same run.
#
# Replies: chatfmt's parser and llama.cpp's (common/chat, format detection +
# common_chat_parse, built from the same package with bench/peers/llamacpp_chat.cpp)
# on the peers' parser-test cases and the corpus round trip (tests/reply_*.py).
#
# Needs node and npm: the two packages are installed into $BUILD/peers (the
# npm registry must be reachable the first time). llama.cpp's engine comes
# as source in the llama.rn npm package (React Native's llama.cpp binding,
# pinned below with the llama.cpp build it carries): its common/jinja is
# compiled with g++ against bench/peers/llamacpp_jinja.cpp, the harness. Run
# after `make`:
#   bash bench/compare_peers.sh        (make bench-peers)
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
SHARED=${CHATFMT_SHARED:-../shared}
OUT=$BUILD/peers
export CHATFMT_NOW=2026-03-14T15:09:26 TZ=UTC
command -v node > /dev/null && command -v npm > /dev/null || { echo "compare_peers: skipped (needs node and npm)"; exit 0; }
[ -x "$BUILD/chatfmt" ] || { echo "compare_peers: $BUILD/chatfmt not built (run make)"; exit 2; }
mkdir -p "$OUT"
if ! [ -d "$OUT/node_modules/minijinja-js" ] || ! [ -d "$OUT/node_modules/@huggingface/jinja" ]; then
    (cd "$OUT" && [ -f package.json ] || echo '{"private": true}' > package.json
     npm install --no-audit --no-fund --loglevel=error @huggingface/jinja minijinja-js > /dev/null) ||
        { echo "compare_peers: skipped (npm install failed)"; exit 0; }
fi
cp bench/peers/compare.mjs "$OUT/"

# chatfmt itself in WebAssembly (the js/ package, `make wasm`), timed from JavaScript beside them.
js_index=
if bash js/tools/ensure_emscripten.sh 2> /dev/null && make --no-print-directory wasm > "$OUT/wasm.log" 2>&1; then
    js_index=file://$(realpath js/index.js)
else
    echo "compare_peers: chatfmt-wasm skipped (make wasm: $(tail -n 1 "$OUT/wasm.log" 2> /dev/null))"
fi
export CHATFMT_JS_INDEX=$js_index

# llama.cpp's engine: sources from the pinned llama.rn package, built once.
LLAMA_RN=0.12.9
LCJ=$OUT/llamacpp_jinja
llamacpp_build() {
    command -v g++ > /dev/null || { echo "needs g++"; return 1; }
    local src=$OUT/llama.rn-$LLAMA_RN
    # (tests/grammar/llama_engine.sh unpacks other files of the same package)
    if ! [ -f "$src/package/cpp/common/unicode.cpp" ] || ! [ -f "$src/package/cpp/common/build-info.cpp" ] ||
       ! [ -f "$src/package/cpp/common/jinja/lexer.cpp" ]; then
        mkdir -p "$src"
        (cd "$src" && { [ -f "llama.rn-$LLAMA_RN.tgz" ] || npm pack --silent "llama.rn@$LLAMA_RN" > /dev/null; } &&
            tar xzf "llama.rn-$LLAMA_RN.tgz" package/cpp/common/jinja package/cpp/common/unicode.h \
                package/cpp/common/unicode.cpp package/cpp/common/build-info.cpp package/cpp/nlohmann) ||
            { echo "npm pack llama.rn@$LLAMA_RN failed"; return 1; }
    fi
    [ "$LCJ" -nt bench/peers/llamacpp_jinja.cpp ] && return 0
    local objs=() pids=() f o
    for f in "$src"/package/cpp/common/jinja/*.cpp "$src/package/cpp/common/unicode.cpp" bench/peers/llamacpp_jinja.cpp; do
        o=$src/$(basename "$f" .cpp).o
        objs+=("$o")
        g++ -std=c++17 -O2 -I "$src/package/cpp/common" -I "$src/package/cpp" -c "$f" -o "$o" & pids+=($!)
    done
    for f in "${pids[@]}"; do wait "$f" || { echo "compiling llama.cpp's engine failed"; return 1; }; done
    g++ "${objs[@]}" -o "$LCJ" || { echo "linking failed"; return 1; }
}
if why=$(llamacpp_build 2>&1); then
    llama_build=$(sed -n 's/^int LLAMA_BUILD_NUMBER = \([0-9]*\);/b\1/p' "$OUT/llama.rn-$LLAMA_RN"/package/cpp/common/build-info.cpp)
else
    echo "compare_peers: llama.cpp's engine skipped (${why##*$'\n'})"
    LCJ=
fi
# llama.cpp's reply parser (common/chat*.cpp: the format found from the
# template, common_chat_parse), from the same package, built once.
LCC=$OUT/llamacpp_chat
llamacpp_chat_build() {
    command -v g++ > /dev/null || { echo "needs g++"; return 1; }
    local src=$OUT/llama.rn-$LLAMA_RN objdir=$OUT/llama.rn-$LLAMA_RN/chat-objs
    [ -f "$src/llama.rn-$LLAMA_RN.tgz" ] || { echo "the llama.rn package is missing"; return 1; }
    if ! [ -f "$src/package/cpp/common/chat.cpp" ]; then
        (cd "$src" && tar xzf "llama.rn-$LLAMA_RN.tgz" --wildcards package/cpp/common 'package/cpp/*.h') ||
            { echo "unpacking llama.rn@$LLAMA_RN failed"; return 1; }
    fi
    [ "$LCC" -nt bench/peers/llamacpp_chat.cpp ] && return 0
    mkdir -p "$objdir"
    local objs=() f o n=0
    # the Jinja engine's objects are the ones built above
    for f in lexer parser runtime value string caps unicode; do objs+=("$src/$f.o"); done
    for f in chat chat-auto-parser-generator chat-auto-parser-helpers chat-diff-analyzer chat-peg-parser \
             peg-parser trie json-schema-to-grammar log common; do
        o=$objdir/$(basename "$f").o
        objs+=("$o")
        [ -s "$o" ] && continue
        # two compilers at a time: the machine's cores are shared
        g++ -std=c++17 -O2 -I "$src/package/cpp/common" -I "$src/package/cpp" \
            -c "$src/package/cpp/common/$f.cpp" -o "$o" &
        n=$((n + 1))
        if [ $((n % 2)) -eq 0 ]; then wait || true; fi
    done
    wait
    for o in "${objs[@]}"; do [ -s "$o" ] || { echo "compiling llama.cpp's chat parser failed ($o)"; return 1; }; done
    g++ -std=c++17 -O2 -I "$src/package/cpp/common" -I "$src/package/cpp" -c bench/peers/llamacpp_chat.cpp \
        -o "$objdir/llamacpp_chat.o" || { echo "compiling the harness failed"; return 1; }
    # without a model (templates given as text) nothing of libllama runs: its
    # functions, named by chat.cpp's model paths and common.cpp, stay unresolved
    g++ -no-pie "${objs[@]}" "$objdir/llamacpp_chat.o" -Wl,--unresolved-symbols=ignore-all -lpthread -o "$LCC" ||
        { echo "linking llama.cpp's chat parser failed"; return 1; }
}
if [ -n "$LCJ" ] && why=$(llamacpp_chat_build 2>&1); then :; else
    echo "compare_peers: llama.cpp's reply parser skipped (${why##*$'\n'})"
    LCC=
fi

version() { node -p "require('./$OUT/node_modules/$1/package.json').version"; }
echo "engines: @huggingface/jinja $(version @huggingface/jinja), minijinja-js $(version minijinja-js), ${LCJ:+llama.cpp $llama_build (llama.rn $LLAMA_RN), }$(python3 -c 'import jinja2; print("jinja2", jinja2.__version__)')"

for set in seeds corpus; do
    dir=$SHARED/seeds
    [ "$set" = corpus ] && dir=$SHARED/corpus/templates
    python3 "$SHARED/tools/mkcases.py" "$dir" "$SHARED/conversations" > "$OUT/$set.jsonl"
    python3 "$SHARED/oracle/hf_render.py" --batch "$OUT/$set.jsonl" > "$OUT/$set.ref"
    n=$(wc -l < "$OUT/$set.jsonl")
    echo "== $set x conversations ($n cases)"
    "$BUILD/chatfmt" render --batch "$OUT/$set.jsonl" > "$OUT/$set.chatfmt"
    same=$(python3 "$SHARED/tools/parity.py" "$OUT/$set.ref" "$OUT/$set.chatfmt" | sed -n 's/^parity \([0-9]*\)\/.*/\1/p')
    if [ "$set" = seeds ]; then
        cf=
        [ -x "$BUILD/bench/bench_render" ] && cf=$("$BUILD/bench/bench_render" "$OUT/$set.jsonl" 100 | awk '{print $2}')
        py=$(python3 "$SHARED/tools/bench_jinja2.py" "$OUT/$set.jsonl" 5 | awk '{print $2}')
        echo -e "chatfmt\tparity $same/$n\tus_per_render ${cf:-(run make bench first)}"
        echo -e "jinja2 (reference)\tparity $n/$n\tus_per_render $py"
        node "$OUT/compare.mjs" "$OUT/$set.jsonl" "$OUT/$set.ref" 20
        if [ -n "$LCJ" ]; then "$LCJ" "$OUT/$set.jsonl" "$OUT/$set.ref" 20; fi
    else
        echo -e "chatfmt\tparity $same/$n"
        node "$OUT/compare.mjs" "$OUT/$set.jsonl" "$OUT/$set.ref" 0 | cut -f1,2
        if [ -n "$LCJ" ]; then "$LCJ" "$OUT/$set.jsonl" "$OUT/$set.ref" 0 | cut -f1,2; fi
    fi
done

# Decoding grammars: chatfmt's JSON Schema grammars and llama.cpp's own converter
# (common/json-schema-to-grammar.cpp, same llama.rn sources) on the same generated
# (schema, instance) pairs, each run through llama.cpp's grammar engine and judged
# against Python's jsonschema; python-lark on chatfmt's Lark spelling of all of them.
echo "== JSON Schema grammars vs jsonschema (tests/grammar/schema_pairs.py)"
check=$(BUILD=$BUILD bash tests/grammar/llama_engine.sh 2>&1 | tail -n 1)
case $check in
    SKIP*) echo "compare_peers: grammars skipped (${check#SKIP })" ;;
    *) python3 tests/grammar/schema_agreement.py "$BUILD/chatfmt" "$check" --lark --llama-converter | sed 's/^PASS //; s/^FAIL /FAIL: /' ;;
esac
# ---- replies: chatfmt's parser next to llama.cpp's, on the same cases --------
# the peers' own parser tests (shared/replies) and the corpus round trip of
# tests/reply_template_roundtrip.py; per source / scenario and the totals.
replies() {   # replies NAME SCRIPT [ARGS...]: the script's summary lines, prefixed
    local name=$1
    shift
    python3 "$@" --chatfmt "$BUILD/chatfmt" --shared "$SHARED" --show 0 2> "$OUT/replies.err" |
        grep -E '^(per source|per scenario|strict cases|reply cases: [0-9]|round trip:)' |
        sed -e 's/; threshold .*$//' -e "s/^/$name\t/"
}
echo "== replies: the peers' parser-test cases (shared/replies)"
replies chatfmt tests/reply_peer_cases.py
[ -n "$LCC" ] && replies "llama.cpp $llama_build" tests/reply_peer_cases.py --peer "$LCC"
echo "== replies: corpus round trip (template x scenario)"
replies chatfmt tests/reply_template_roundtrip.py
[ -n "$LCC" ] && replies "llama.cpp $llama_build" tests/reply_template_roundtrip.py --peer "$LCC"
exit 0
