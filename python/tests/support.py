"""Shared setup of the binding's tests: the package from this repository,
the reference renderer (shared/oracle/hf_render.py) and pinned clocks."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))

# Both renderers see the same strftime_now (as tests/testenv.py).
os.environ.setdefault("CHATFMT_NOW", "2026-03-14T15:09:26")
os.environ.setdefault("TZ", "UTC")

SHARED = os.path.abspath(os.environ.get("CHATFMT_SHARED") or os.path.join(REPO, "..", "shared"))
try:
    sys.path.insert(0, os.path.join(SHARED, "oracle"))
    import hf_render  # noqa: E402
except ImportError:   # no shared/ or no jinja2: the oracle tests skip
    hf_render = None

import chatfmt  # noqa: E402


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def conversations():
    """(name, context) for every shared conversation."""
    import json
    d = os.path.join(SHARED, "conversations")
    return [(n, json.loads(read(os.path.join(d, n)))) for n in sorted(os.listdir(d)) if n.endswith(".json")]


def templates(subdir):
    d = os.path.join(SHARED, subdir)
    return [(n, read(os.path.join(d, n))) for n in sorted(os.listdir(d)) if n.endswith(".jinja")]


def oracle_outcome(text, context, raw=False):
    """("ok", text) or ("error", exception class name), as the reference renders."""
    try:
        return "ok", hf_render.render(text, context, raw)
    except Exception as e:  # noqa: BLE001 - any failure is an outcome
        return "error", type(e).__name__


def chatfmt_outcome(call):
    try:
        return "ok", call()
    except chatfmt.ChatfmtError as e:
        return "error", type(e).__name__
