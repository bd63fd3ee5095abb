#!/usr/bin/env bash
# ensure_emscripten.sh — make sure `emcc` exists for `make wasm`: installs
# Debian's emscripten package (as root, apt-get) when it is missing.
# Exit status 0 when emcc is usable afterwards, else 1 with a reason on stderr.
set -u
command -v emcc > /dev/null 2>&1 && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get > /dev/null 2>&1; then
    echo "ensure_emscripten: emcc not found and cannot be installed here (needs root and apt-get)" >&2
    exit 1
fi
echo "ensure_emscripten: installing Debian's emscripten package" >&2
{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emscripten; } > /dev/null 2>&1
command -v emcc > /dev/null 2>&1 || { echo "ensure_emscripten: apt-get install emscripten failed" >&2; exit 1; }
