#!/usr/bin/env bash
# llama_engine.sh — build tests/grammar/llama_grammar_check.cpp against
# llama.cpp's grammar engine and JSON Schema converter, as the llama.rn npm
# package ships them (the same pinned sources bench/compare_peers.sh builds
# llama.cpp's Jinja engine from). Prints the binary's path, or
# "SKIP reason" (no npm, no g++, no registry) and exits 0 either way.
#   BUILD=build bash tests/grammar/llama_engine.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
LLAMA_RN=0.12.9
OUT=$BUILD/peers
SRC=$OUT/llama.rn-$LLAMA_RN
BIN=$OUT/llama_grammar_check
HARNESS=tests/grammar/llama_grammar_check.cpp
command -v g++ > /dev/null || { echo "SKIP needs g++"; exit 0; }
if ! [ -f "$SRC/package/cpp/llama-grammar.cpp" ] || ! [ -f "$SRC/package/cpp/common/json-schema-to-grammar.cpp" ]; then
    command -v npm > /dev/null || { echo "SKIP needs npm (to fetch llama.rn@$LLAMA_RN's sources)"; exit 0; }
    mkdir -p "$SRC"
    (cd "$SRC" && { [ -f "llama.rn-$LLAMA_RN.tgz" ] || npm pack --silent "llama.rn@$LLAMA_RN" > /dev/null; } &&
        tar xzf "llama.rn-$LLAMA_RN.tgz" --wildcards 'package/cpp/*.h' 'package/cpp/*.hpp' package/cpp/llama-grammar.cpp \
            package/cpp/common/json-schema-to-grammar.cpp) \
        > /dev/null 2>&1 || { echo "SKIP npm pack llama.rn@$LLAMA_RN failed"; exit 0; }
fi
if ! [ "$BIN" -nt "$HARNESS" ]; then
    objs=()
    for f in "$SRC/package/cpp/llama-grammar.cpp" "$SRC/package/cpp/common/json-schema-to-grammar.cpp" "$HARNESS"; do
        o=$OUT/grammar-$(basename "$f" .cpp).o
        objs+=("$o")
        [ "$o" -nt "$f" ] && continue
        nice g++ -std=c++17 -O2 -w -I "$SRC/package/cpp" -I "$SRC/package/cpp/common" -c "$f" -o "$o" ||
            { echo "SKIP compiling llama.cpp's grammar engine failed"; exit 0; }
    done
    g++ "${objs[@]}" -o "$BIN" || { echo "SKIP linking llama.cpp's grammar engine failed"; exit 0; }
fi
echo "$BIN"
