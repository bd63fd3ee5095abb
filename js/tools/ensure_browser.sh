#!/usr/bin/env bash
# ensure_browser.sh DEPS_DIR — what the playground test drives: Debian's
# chromium (apt-get, as root) and playwright-core (npm, into DEPS_DIR, not
# into the package). Prints the node_modules folder holding playwright-core;
# exit status 1 with the reason on stderr when either cannot be had.
set -u
deps=${1:?usage: ensure_browser.sh DEPS_DIR}
if ! [ -x /usr/bin/chromium ]; then
    if [ "$(id -u)" -ne 0 ] || ! command -v apt-get > /dev/null 2>&1; then
        echo "ensure_browser: /usr/bin/chromium missing and cannot be installed here" >&2
        exit 1
    fi
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } > /dev/null 2>&1 ||
        { echo "ensure_browser: apt-get install chromium failed" >&2; exit 1; }
fi
if ! [ -f "$deps/node_modules/playwright-core/package.json" ]; then
    mkdir -p "$deps" && cd "$deps" || exit 1
    [ -f package.json ] || echo '{"private": true}' > package.json
    npm install --no-audit --no-fund --loglevel=error playwright-core > /dev/null 2>&1 ||
        { echo "ensure_browser: npm install playwright-core failed" >&2; exit 1; }
    cd - > /dev/null || exit 1
fi
realpath "$deps/node_modules"
