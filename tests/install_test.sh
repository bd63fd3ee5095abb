#!/usr/bin/env bash
# install_test.sh — `make install` into a temporary prefix (and a DESTDIR
# staging tree), then use the installed chatfmt as its users would:
#   - the layout: header, libchatfmt.a, libchatfmt.so and .so.0 -> .so.0.1.0
#     (SONAME libchatfmt.so.0), chatfmt.pc, CMake package, bin/chatfmt, man page;
#   - examples/minimal.c built with `cc ... $(pkg-config --cflags --libs chatfmt)`
#     (and statically) renders every seed x conversation like `chatfmt render`,
#     and examples/stream_reply.c streams deltas that add up to the whole parse;
#   - with cmake: a consumer project via find_package(chatfmt) against the
#     prefix, one via add_subdirectory(repo), and the CMake build's own install.
# `make uninstall` leaves the prefix empty.
#
# Run from the repository after `make`. BUILD (default build), CHATFMT_SHARED
# (default ../shared), CC and CFLAGS (sanitizer builds need their flags when
# linking against the library) as for run_tests.sh.
set -u
cd "$(dirname "$0")/.." || exit 2
REPO=$PWD
BUILD=${BUILD:-build}
SHARED=$(realpath "${CHATFMT_SHARED:-../shared}" 2> /dev/null || echo ../shared)
CC=${CC:-cc}
CFLAGS=${CFLAGS:--O2 -g}
export CHATFMT_NOW=2026-03-14T15:09:26 TZ=UTC
TMP=$(mktemp -d /tmp/chatfmt-install-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else ko "$what"; fi; }

# ---- make install --------------------------------------------------------------
if ! make -s install BUILD="$BUILD" PREFIX="$PREFIX" > "$TMP/install.log" 2>&1; then
    ko "make install: $(tail -n 5 "$TMP/install.log" | tr '\n' ' ')"
    echo "$pass passed, $fail failed"
    exit 1
fi
for f in include/chatfmt.h lib/libchatfmt.a lib/libchatfmt.so.0.1.0 lib/pkgconfig/chatfmt.pc bin/chatfmt \
         share/man/man1/chatfmt.1 lib/cmake/chatfmt/chatfmtConfig.cmake lib/cmake/chatfmt/chatfmtConfigVersion.cmake; do
    check "installed $f" test -f "$PREFIX/$f"
done
check "lib/libchatfmt.so and .so.0 are links to .so.0.1.0" \
    test "$(readlink -f "$PREFIX/lib/libchatfmt.so")" = "$PREFIX/lib/libchatfmt.so.0.1.0" -a \
         "$(readlink -f "$PREFIX/lib/libchatfmt.so.0")" = "$PREFIX/lib/libchatfmt.so.0.1.0"
check "SONAME libchatfmt.so.0" bash -c "readelf -d '$PREFIX/lib/libchatfmt.so' | grep -q 'SONAME.*\[libchatfmt.so.0\]'"
check "bin/chatfmt --version" bash -c "'$PREFIX/bin/chatfmt' --version | grep -q '^chatfmt [0-9]'"
check "man page formats without warnings" \
    bash -c "! command -v man > /dev/null || [ -z \"\$(MANWIDTH=80 man --warnings -l '$PREFIX/share/man/man1/chatfmt.1' 2>&1 > /dev/null)\" ]"

# DESTDIR stages the same tree; the files still name the final prefix.
make -s install BUILD="$BUILD" PREFIX=/opt/chatfmt DESTDIR="$TMP/stage" > "$TMP/stage.log" 2>&1
check "DESTDIR staging" test -f "$TMP/stage/opt/chatfmt/lib/libchatfmt.so.0.1.0" -a \
    -f "$TMP/stage/opt/chatfmt/include/chatfmt.h" -a ! -e /opt/chatfmt/include/chatfmt.h
check "DESTDIR: chatfmt.pc names the final prefix" grep -qx 'prefix=/opt/chatfmt' "$TMP/stage/opt/chatfmt/lib/pkgconfig/chatfmt.pc"

# ---- the example, through pkg-config -------------------------------------------------
export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
check "pkg-config --modversion" test "$(pkg-config --modversion chatfmt)" = "$(grep -o '"[0-9.]*"' include/chatfmt.h | head -n 1 | tr -d '"')"
# shellcheck disable=SC2046,SC2086  # flags are word lists
$CC $CFLAGS examples/minimal.c $(pkg-config --cflags --libs chatfmt) -o "$TMP/minimal" 2> "$TMP/cc.log" ||
    ko "cc examples/minimal.c \$(pkg-config --cflags --libs chatfmt): $(head -n 3 "$TMP/cc.log" | tr '\n' ' ')"
# shellcheck disable=SC2046,SC2086
$CC $CFLAGS examples/minimal.c $(pkg-config --cflags chatfmt) "$PREFIX/lib/libchatfmt.a" \
    $(pkg-config --static --libs-only-l chatfmt | sed 's/-lchatfmt//') -o "$TMP/minimal-static" 2> "$TMP/cc.log" ||
    ko "static link: $(head -n 3 "$TMP/cc.log" | tr '\n' ' ')"

# compare_runs NAME PROGRAM: PROGRAM TEMPLATE CONTEXT == build's chatfmt render, for
# every seed x conversation (output and success alike).
compare_runs() {
    local name=$1 prog=$2 n=0 bad=0
    [ -x "$prog" ] || { ko "$name: $prog not built"; return; }
    for t in "$SHARED"/seeds/*.jinja; do
        for c in "$SHARED"/conversations/*.json; do
            n=$((n + 1))
            "$BUILD/chatfmt" render "$t" "$c" > "$TMP/want" 2> /dev/null
            local want_st=$?
            LD_LIBRARY_PATH=$PREFIX/lib "$prog" "$t" "$c" > "$TMP/got" 2> /dev/null
            local got_st=$?
            if [ $((want_st == 0)) -ne $((got_st == 0)) ] || ! cmp -s "$TMP/want" "$TMP/got"; then
                bad=$((bad + 1))
                [ $bad -le 3 ] && echo "  differs: $(basename "$t") $(basename "$c")" >&2
            fi
        done
    done
    if [ "$n" -gt 0 ] && [ "$bad" -eq 0 ]; then ok "$name renders $n seed x conversation cases like chatfmt render"
    else ko "$name: $bad of $n cases differ from chatfmt render"; fi
}
if [ -d "$SHARED/seeds" ]; then
    compare_runs "minimal (pkg-config, shared)" "$TMP/minimal"
    compare_runs "minimal (static)" "$TMP/minimal-static"
    check "minimal resolves the installed libchatfmt.so.0" \
        bash -c "LD_LIBRARY_PATH='$PREFIX/lib' ldd '$TMP/minimal' | grep -q '$PREFIX/lib/libchatfmt.so.0'"
else
    echo "note: $SHARED/seeds not found: render comparisons skipped"
fi

# The streaming example: deltas for any chunking add up to the whole parse.
# shellcheck disable=SC2046,SC2086
if $CC $CFLAGS examples/stream_reply.c $(pkg-config --cflags --libs chatfmt) -o "$TMP/stream_reply" 2> "$TMP/cc.log"; then
    printf '<think>Checking.</think>On it.<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>' |
        LD_LIBRARY_PATH=$PREFIX/lib "$TMP/stream_reply" glm45 > "$TMP/stream.out"
    check "stream_reply: deltas add up to the whole parse" python3 - "$TMP/stream.out" <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
assert lines[0] == "format: glm45", lines[0]
whole = json.loads(lines[-1][len("whole: "):])
msg = {"role": "assistant", "content": None, "reasoning_content": None}
calls = []
for d in map(json.loads, lines[1:-1]):
    for k in ("content", "reasoning_content"):
        if k in d:
            msg[k] = (msg[k] or "") + d[k]
    for c in d.get("tool_calls", []):
        if "id" in c:
            calls.append({"id": c["id"], "type": c["type"], "function": {"name": c["function"]["name"], "arguments": ""}})
        calls[c["index"]]["function"]["arguments"] += c["function"].get("arguments", "")
if calls:
    msg["tool_calls"] = calls
assert msg == whole and calls, (msg, whole)
EOF
else
    ko "cc examples/stream_reply.c: $(head -n 3 "$TMP/cc.log" | tr '\n' ' ')"
fi

# ---- CMake consumers ---------------------------------------------------------------------
if command -v cmake > /dev/null; then
    # cmake_consumer NAME DIR CMAKE-BODY [configure args...]: build `minimal` from examples/minimal.c.
    cmake_consumer() {
        local name=$1 dir=$2 body=$3
        shift 3
        mkdir -p "$dir"
        printf 'cmake_minimum_required(VERSION 3.13)\nproject(consumer C)\n%s\n' "$body" > "$dir/CMakeLists.txt"
        if cmake -S "$dir" -B "$dir/build" -DCMAKE_C_FLAGS="$CFLAGS" "$@" > "$dir/log" 2>&1 &&
            cmake --build "$dir/build" --target minimal -j 2 >> "$dir/log" 2>&1; then
            compare_runs "$name" "$dir/build/minimal"
        else
            ko "$name: $(grep -m 3 -iE 'error|not found' "$dir/log" | tr '\n' ' ')"
        fi
    }
    cmake_consumer "cmake find_package(chatfmt 0.1) -> chatfmt::chatfmt" "$TMP/fp" \
        "find_package(chatfmt 0.1 REQUIRED)
add_executable(minimal $REPO/examples/minimal.c)
target_link_libraries(minimal PRIVATE chatfmt::chatfmt)" -DCMAKE_PREFIX_PATH="$PREFIX"
    cmake_consumer "cmake find_package -> chatfmt::chatfmt_static" "$TMP/fps" \
        "find_package(chatfmt REQUIRED)
add_executable(minimal $REPO/examples/minimal.c)
target_link_libraries(minimal PRIVATE chatfmt::chatfmt_static)" -DCMAKE_PREFIX_PATH="$PREFIX"
    check "cmake refuses find_package(chatfmt 9.0)" bash -c "
        mkdir -p '$TMP/v9' && printf 'cmake_minimum_required(VERSION 3.13)\nproject(v C)\nfind_package(chatfmt 9.0 REQUIRED)\n' > '$TMP/v9/CMakeLists.txt' &&
        ! cmake -S '$TMP/v9' -B '$TMP/v9/build' -DCMAKE_PREFIX_PATH='$PREFIX' > /dev/null 2>&1"
    # The library built by CMake: as a subproject, then standalone with its
    # own install tree (which must match make install's).
    cmake_builds() {
        cmake_consumer "cmake add_subdirectory(chatfmt) -> chatfmt::chatfmt" "$TMP/sub" \
            "add_subdirectory($REPO chatfmt EXCLUDE_FROM_ALL)
add_executable(minimal $REPO/examples/minimal.c)
target_link_libraries(minimal PRIVATE chatfmt::chatfmt)"
        if ! { cmake -S . -B "$TMP/cm" -DCMAKE_C_FLAGS="$CFLAGS" > "$TMP/cm.log" 2>&1 &&
               cmake --build "$TMP/cm" -j 2 >> "$TMP/cm.log" 2>&1 &&
               cmake --install "$TMP/cm" --prefix "$TMP/cmprefix" >> "$TMP/cm.log" 2>&1; }; then
            ko "cmake build of the repository: $(grep -m 3 -iE 'error' "$TMP/cm.log" | tr '\n' ' ')"
            return
        fi
        (cd "$PREFIX" && find . ! -type d | sort) > "$TMP/make-tree"
        (cd "$TMP/cmprefix" && find . ! -type d | sort) > "$TMP/cmake-tree"
        check "cmake --install lays out the files of make install" cmp -s "$TMP/make-tree" "$TMP/cmake-tree"
        check "cmake-installed chatfmt.pc is relocatable" test \
            "$(PKG_CONFIG_PATH=$TMP/cmprefix/lib/pkgconfig pkg-config --variable=includedir chatfmt | xargs realpath)" \
            = "$TMP/cmprefix/include"
        cmake_consumer "cmake find_package against the CMake install" "$TMP/fp2" \
            "find_package(chatfmt 0.1 REQUIRED)
add_executable(minimal $REPO/examples/minimal.c)
target_link_libraries(minimal PRIVATE chatfmt::chatfmt)" -DCMAKE_PREFIX_PATH="$TMP/cmprefix"
        check "CMake-built chatfmt renders like the make-built one" bash -c \
            "cmp -s <('$TMP/cmprefix/bin/chatfmt' render glm45 examples/conversation.json) <('$BUILD/chatfmt' render glm45 examples/conversation.json)"
    }
    # Two builds of the whole library test packaging, not memory safety: a
    # sanitizer run (make test-asan) leaves them to the normal run.
    if [[ "$CFLAGS" == *-fsanitize* ]]; then
        echo "note: sanitizer build: CMake builds of the repository skipped"
    else
        cmake_builds
    fi
else
    echo "note: cmake not installed: CMake consumers skipped"
fi

# ---- make uninstall ------------------------------------------------------------------
make -s uninstall PREFIX="$PREFIX" > /dev/null 2>&1
check "make uninstall removes every file" test -z "$(find "$PREFIX" ! -type d)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
