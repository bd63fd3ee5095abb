#!/usr/bin/env bash
# compare_peers.sh — chatfmt next to the JavaScript engines LLM servers use
# for chat templates, @huggingface/jinja (transformers.js) and minijinja-js,
# on the same cases: seeds x conversations and corpus x conversations.
# Prints, per engine, the cases identical to the reference renderer (text,
# or an error where it fails) and, on the seeds, microseconds per render with
# templates compiled once, next to Python Jinja2's in the same run.
#
# Needs node and npm: the two packages are installed into $BUILD/peers (the
# npm registry must be reachable the first time). Run after `make`:
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
version() { node -p "require('./$OUT/node_modules/$1/package.json').version"; }
echo "engines: @huggingface/jinja $(version @huggingface/jinja), minijinja-js $(version minijinja-js), $(python3 -c 'import jinja2; print("jinja2", jinja2.__version__)')"

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
    else
        echo -e "chatfmt\tparity $same/$n"
        node "$OUT/compare.mjs" "$OUT/$set.jsonl" "$OUT/$set.ref" 0 | cut -f1,2
    fi
done
