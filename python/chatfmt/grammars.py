"""Decoding grammars: what constrains a model's reply to calls of the request's
tools, in its template's reply format (GBNF for llama.cpp, Lark for llguidance,
an xgrammar structural tag for vLLM and SGLang), and JSON Schema grammars."""
import ctypes
import json

from . import _lib, errors
from .replies import REPLY_FORMATS, _prompt_tail
from .template import _template_for

_CHOICES = {"auto": 0, "required": 1, "none": 2}
_EMIT = {"gbnf": 1, "lark": 2, "structural-tag": 4, "all": 7}


def _call(fn, *args):
    if fn is None:
        raise errors.UsageError("this libchatfmt has no grammar stage")
    err = _lib.Error()
    n = ctypes.c_size_t()
    p = fn(*args, ctypes.byref(n), ctypes.byref(err))
    if not p:
        _lib.raise_error(err)
    try:
        return json.loads(ctypes.string_at(p, n.value).decode("utf-8"))
    finally:
        _lib.free(p)


def tool_grammar(template=None, tools=(), *, tool_choice="auto", parallel_tool_calls=True, format=None,
                 prompt=None, reasoning_open=False, emit="all", limits=None, **variables):
    """The grammar for a request (a dict: format, grammar, grammar_lazy,
    grammar_triggers, preserved_tokens, additional_stops, structural_tag, lark,
    warnings; see chatfmt.h's cf_tool_grammar).

    ``template`` (text, path, built-in name or :class:`Template`) picks the reply
    format and, rendered with ``tools`` and ``variables`` (e.g.
    enable_thinking=False), tells whether the reply starts inside reasoning.
    ``tool_choice``: "auto", "required", "none" or a tool's name. ``format``
    overrides detection; ``prompt`` (the rendered prompt) replaces the probe
    render; ``emit``: "gbnf", "lark", "structural-tag" or "all".
    """
    t = _template_for(template) if template is not None else None
    if format is None:
        format = t.reply_format if t is not None else "plain"
    value = ctypes.c_int()
    if not _lib.cf_reply_format_from_name(format.encode(), ctypes.byref(value)):
        raise errors.UsageError(f"unknown reply format {format!r} ({', '.join(REPLY_FORMATS)})")
    if emit not in _EMIT:
        raise errors.UsageError(f"emit must be one of {', '.join(_EMIT)}")
    tail = prompt[-256:] if prompt is not None else (_prompt_tail(t, list(tools), variables) if t is not None else None)
    choice = _CHOICES.get(tool_choice, 3)
    tools_json = json.dumps(list(tools)).encode()
    name = tool_choice.encode() if choice == 3 else None
    tail_b = tail.encode("utf-8") if tail else None
    lim = _lib.limits_struct(limits)
    opts = _lib.GrammarOptions(value.value, tools_json, choice, name, not parallel_tool_calls, tail_b,
                               bool(reasoning_open), _EMIT[emit], ctypes.pointer(lim) if lim else None)
    return _call(_lib.cf_tool_grammar, ctypes.byref(opts))


def schema_grammar(schema, syntax="gbnf", *, limits=None):
    """One JSON Schema (a dict or JSON text) as a grammar for the values it
    accepts: {"grammar": text, "warnings": [...]} (``syntax`` "gbnf": root rule
    "root"; "lark": "start")."""
    if syntax not in ("gbnf", "lark"):
        raise errors.UsageError("syntax must be 'gbnf' or 'lark'")
    data = (schema if isinstance(schema, str) else json.dumps(schema)).encode("utf-8")
    lim = _lib.limits_struct(limits)
    return _call(_lib.cf_schema_grammar, data, len(data), 0 if syntax == "gbnf" else 1,
                 ctypes.pointer(lim) if lim else None)
