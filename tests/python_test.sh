#!/usr/bin/env bash
# python_test.sh — the Python binding (python/): its unit tests against the
# reference renderer and the CLI (python/tests/test_*.py), then
# `pip install ./python` offline (isolated and --no-build-isolation) into
# temporary directories, used from outside the repository.
#
# Run from anywhere after `make`. BUILD (default build), CHATFMT_BIN (default
# $BUILD/chatfmt) and CHATFMT_SHARED (default ../shared) as for run_tests.sh.
# A sanitizer build's library is loaded with its runtimes preloaded.
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
LIB=$(realpath "$BUILD/libchatfmt.so" 2> /dev/null)
BIN=$(realpath "${CHATFMT_BIN:-$BUILD/chatfmt}" 2> /dev/null)
CHATFMT_SHARED=$(realpath "${CHATFMT_SHARED:-../shared}" 2> /dev/null || echo ../shared)
export CHATFMT_SHARED
export CHATFMT_NOW=2026-03-14T15:09:26 TZ=UTC PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
TMP=$(mktemp -d /tmp/chatfmt-python-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok: $*"; }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

[ -f "$LIB" ] || { echo "FAIL: $BUILD/libchatfmt.so not built" >&2; exit 1; }

# An ASan/UBSan library needs its runtimes in the (uninstrumented) interpreter.
PRELOAD=
if nm -D "$LIB" 2> /dev/null | grep -q ' U __asan_'; then
    PRELOAD="$(${CC:-cc} -print-file-name=libasan.so)"
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
fi
if nm -D "$LIB" 2> /dev/null | grep -q ' U __ubsan_'; then
    PRELOAD="$PRELOAD $(${CC:-cc} -print-file-name=libubsan.so)"
fi
py() { LD_PRELOAD="$PRELOAD" python3 "$@"; }

# ---- unit tests (oracle, CLI, replies) -----------------------------------------
# Twice when the C render path (python/chatfmt/_speedups*.so, `make python-ext`)
# is built: through it (and it must be the one used), then without it.
unit_tests() {   # LABEL ENV...
    local label=$1
    shift
    if env "$@" CHATFMT_LIBRARY="$LIB" CHATFMT_BIN="$BIN" LD_PRELOAD="$PRELOAD" \
            python3 -m unittest discover -s python/tests -p 'test_*.py' 2>&1 |
            tee "$TMP/unittest.log" | grep -E '^(seeds|corpus) x|^patch:|^assistant masks:|^Ran|^OK|^FAILED'; then
        grep -q '^OK' "$TMP/unittest.log" && ok "$label" || { ko "$label"; tail -n 40 "$TMP/unittest.log" >&2; }
    else
        ko "$label did not run"
        tail -n 40 "$TMP/unittest.log" >&2
    fi
}
if ls python/chatfmt/_speedups*.so > /dev/null 2>&1; then
    unit_tests "python/tests (C render path)" CHATFMT_EXPECT_SPEEDUPS=1
fi
# (the second pass checks the seeds only where a test loops over the corpus: CHATFMT_QUICK)
unit_tests "python/tests (ctypes path)" CHATFMT_NO_SPEEDUPS=1 CHATFMT_QUICK=1

# The C render path's text kernels as compiled for the baseline instruction
# set (a processor with AVX2 takes the AVX2 ones): render_batch's outputs of
# every str kind, at every offset, with them.
if ls python/chatfmt/_speedups*.so > /dev/null 2>&1; then
    if (cd python/tests && CHATFMT_BASELINE_KERNELS=1 CHATFMT_LIBRARY="$LIB" LD_PRELOAD="$PRELOAD" python3 -m unittest \
            test_pipelines.RenderBatch.test_other_characters_at_every_offset_of_an_ascii_text \
            test_pipelines.RenderBatch.test_repeated_row_objects_and_every_text_kind \
            test_pipelines.NativeOnly.test_outputs_said_ascii_are_ascii \
            test_pipelines.NativeOnly.test_texts_written_around_the_cache \
            test_pipelines.NativeOnly.test_texts_written_into_strs_made_before_their_rows \
            test_pipelines.NativeOnly.test_texts_not_ascii_written_into_strs_made_before_their_rows > "$TMP/baseline.log" 2>&1); then
        ok "render_batch texts with the baseline kernels"
    else
        ko "render_batch texts with the baseline kernels"
        tail -n 20 "$TMP/baseline.log" >&2
    fi
fi

# return_tensors="np" needs numpy: Debian's python3 has it when python3-numpy
# is installed (python3-dask brings it), the first python3 on PATH may not.
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import numpy, jinja2' 2> /dev/null; then
    if (cd python/tests && CHATFMT_LIBRARY="$LIB" LD_PRELOAD="$PRELOAD" /usr/bin/python3 -m unittest \
            test_transformers.Tokenize.test_return_tensors_np > "$TMP/np.log" 2>&1); then
        ok "return_tensors='np' with numpy (/usr/bin/python3)"
    else
        ko "return_tensors='np' with numpy (/usr/bin/python3)"
        tail -n 20 "$TMP/np.log" >&2
    fi
else
    echo "SKIP: return_tensors='np': no numpy for /usr/bin/python3 (apt-get install python3-numpy)"
fi

# ---- pip install ./python, offline, used from elsewhere --------------------------
printf '{"messages": [{"role": "user", "content": "Hi \\u00e9"}], "add_generation_prompt": true}\n' > "$TMP/ctx.json"
"$BIN" render glm45 "$TMP/ctx.json" > "$TMP/want.txt" 2> /dev/null || ko "chatfmt render glm45"
for mode in isolated no-build-isolation; do
    target=$TMP/site-$mode
    flags=(--no-index --quiet --target "$target")
    [ $mode = no-build-isolation ] && flags+=(--no-build-isolation)
    if ! CHATFMT_LIBRARY=$LIB python3 -m pip install "${flags[@]}" ./python > "$TMP/pip.log" 2>&1; then
        ko "pip install ($mode): $(tail -n 3 "$TMP/pip.log" | tr '\n' ' ')"
        continue
    fi
    (cd "$TMP" && env -u CHATFMT_LIBRARY PYTHONPATH="$target" LD_PRELOAD="$PRELOAD" python3 - "$target" > "$TMP/got.txt" <<'EOF'
import json, os, sys
import chatfmt
assert chatfmt.library_path == os.path.join(sys.argv[1], "chatfmt", "libchatfmt.so"), chatfmt.library_path
assert chatfmt.__file__.startswith(sys.argv[1]), chatfmt.__file__
sys.stdout.write(chatfmt.apply_chat_template("glm45", **json.load(open("ctx.json"))))
EOF
    ) && cmp -s "$TMP/got.txt" "$TMP/want.txt" && ok "pip install ($mode): bundled library renders as the CLI" ||
        ko "pip install ($mode): the installed package does not render as the CLI"
done

# ---- the backend's other hooks (sdist, editable) -----------------------------------
if (cd python && python3 - "$TMP" <<'EOF'
import os, sys, tarfile, zipfile
sys.path.insert(0, "_build")
import backend
out = sys.argv[1]
sdist = backend.build_sdist(out)
names = tarfile.open(os.path.join(out, sdist)).getnames()
assert "chatfmt-0.1.0/chatfmt/template.py" in names and "chatfmt-0.1.0/PKG-INFO" in names, names
editable = backend.build_editable(out)
z = zipfile.ZipFile(os.path.join(out, editable))
assert z.read("__editable__.chatfmt.pth").decode().strip() == os.getcwd()
EOF
); then ok "sdist and editable wheels"; else ko "sdist and editable wheels"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
