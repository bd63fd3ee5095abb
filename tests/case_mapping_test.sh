#!/usr/bin/env bash
# case_mapping_test.sh — the str case methods and the upper/lower filters over
# every code point, byte for byte against python3's own str methods
# (tests/case_mapping_check.py). Run by tests/run_tests.sh (any tests/*_test.sh).
set -u
cd "$(dirname "$0")/.." || exit 2
BIN=${CHATFMT_BIN:-${BUILD:-build}/chatfmt}
python3 tests/case_mapping_check.py "$BIN"
