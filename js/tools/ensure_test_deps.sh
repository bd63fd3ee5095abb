#!/usr/bin/env bash
# ensure_test_deps.sh DEPS_DIR — what the js tests use besides node: Debian's
# chromium (apt-get, as root) for the playground test, and from npm, into
# DEPS_DIR (not into the package), playwright-core to drive it and
# typescript to check index.d.ts. Prints that node_modules folder; exit
# status 1 with the reason on stderr when any of them cannot be had.
set -u
deps=${1:?usage: ensure_test_deps.sh DEPS_DIR}
if ! [ -x /usr/bin/chromium ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get > /dev/null 2>&1; then
        echo "ensure_test_deps: /usr/bin/chromium missing and cannot be installed here" >&2
        exit 1
    fi
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } > /dev/null 2>&1 ||
        { echo "ensure_test_deps: apt-get install chromium failed" >&2; exit 1; }
fi
if ! [ -f "$deps/node_modules/playwright-core/package.json" ] || ! [ -f "$deps/node_modules/typescript/package.json" ]; then
    mkdir -p "$deps" && cd "$deps" || exit 1
    [ -f package.json ] || echo '{"private": true}' > package.json
    npm install --no-audit --no-fund --loglevel=error playwright-core typescript > /dev/null 2>&1 ||
        { echo "ensure_test_deps: npm install playwright-core typescript failed" >&2; exit 1; }
    cd - > /dev/null || exit 1
fi
realpath "$deps/node_modules"
