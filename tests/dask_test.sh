#!/usr/bin/env bash
# dask_test.sh — chatfmt on a Dask distributed cluster (tests/dask_check.py):
# 24 shards on a LocalCluster of 2 worker processes, byte-identical to
# `chatfmt render --jsonl`, also with a worker killed mid-job; bad rows give
# error rows. Debian's python3-dask and python3-distributed install for
# /usr/bin/python3 (installed here when missing and possible; else SKIP).
#
# Run from anywhere after `make`. BUILD, CHATFMT_BIN, CHATFMT_SHARED as for run_tests.sh.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
LIB=$(realpath "$BUILD/libchatfmt.so" 2> /dev/null)
BIN=$(realpath "${CHATFMT_BIN:-$BUILD/chatfmt}" 2> /dev/null)
SHARED=$(realpath "${CHATFMT_SHARED:-../shared}" 2> /dev/null || echo ../shared)
PY=/usr/bin/python3
[ -f "$LIB" ] && [ -x "$BIN" ] || { echo "FAIL: $BUILD/libchatfmt.so or chatfmt not built" >&2; exit 1; }
# A sanitizer build's library cannot be loaded into worker processes without its runtimes.
if nm -D "$LIB" 2> /dev/null | grep -q ' U __\(asan\|ubsan\|tsan\)_'; then
    echo "SKIP dask: $BUILD/libchatfmt.so is a sanitizer build"
    exit 0
fi
have() { [ -x "$PY" ] && "$PY" -c 'import dask.bag, distributed' 2> /dev/null; }
if ! have && [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-dask python3-distributed; } \
        > /dev/null 2>&1
fi
if ! have; then
    echo "SKIP dask: python3-dask and python3-distributed are not installed for $PY (apt-get install them)"
    exit 0
fi
WORK=$(mktemp -d /tmp/chatfmt-dask-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export CHATFMT_NOW=2026-03-14T15:09:26 TZ=UTC PYTHONDONTWRITEBYTECODE=1
timeout 300 "$PY" tests/dask_check.py "$SHARED" "$BIN" "$LIB" "$WORK" 2>&1 | grep -v -E ' - distributed\.|^\s*$' | tail -n 20
status=${PIPESTATUS[0]}
exit "$status"
