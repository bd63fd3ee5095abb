"""ctypes declarations of include/chatfmt.h and the search for libchatfmt.

The library is looked up, first found wins:
  1. $CHATFMT_LIBRARY (a path to libchatfmt.so), when set;
  2. the build tree, when this package runs from the repository
     (REPO/python/chatfmt -> REPO/build/libchatfmt.so);
  3. a copy bundled next to this file by `pip install` (see python/_build);
  4. the system: ctypes.util.find_library("chatfmt") (e.g. after `make install`).
"""
import ctypes
import ctypes.util
import os

from . import errors

_HERE = os.path.dirname(os.path.abspath(__file__))
_LIBNAME = "libchatfmt.so"


def _candidates():
    env = os.environ.get("CHATFMT_LIBRARY")
    if env:
        yield env
        return   # an explicit choice is never silently replaced
    repo = os.path.dirname(os.path.dirname(_HERE))
    if os.path.isfile(os.path.join(repo, "include", "chatfmt.h")):
        yield os.path.join(repo, "build", _LIBNAME)
    yield os.path.join(_HERE, _LIBNAME)
    found = ctypes.util.find_library("chatfmt")
    if found:
        yield found


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(f"{path} ({e})")
    raise ImportError("chatfmt: cannot find libchatfmt.so; build it with `make`, install it with "
                      "`make install`, or set CHATFMT_LIBRARY. Tried: " + "; ".join(tried or ["nothing"]))


lib, path = _load()

# ---- structures (same layout as chatfmt.h) ----


class Error(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("line", ctypes.c_int), ("column", ctypes.c_int),
                ("offset", ctypes.c_size_t), ("message", ctypes.c_char * 1024)]


class Limits(ctypes.Structure):
    _fields_ = [("max_steps", ctypes.c_uint64), ("max_recursion", ctypes.c_uint32),
                ("max_parse_depth", ctypes.c_uint32), ("max_output", ctypes.c_size_t),
                ("max_string", ctypes.c_size_t), ("max_items", ctypes.c_size_t),
                ("max_memory", ctypes.c_size_t), ("max_range", ctypes.c_uint32),
                ("max_json_depth", ctypes.c_uint32), ("max_json_bytes", ctypes.c_size_t)]


class Span(ctypes.Structure):
    _fields_ = [("start", ctypes.c_size_t), ("end", ctypes.c_size_t)]


class Result(ctypes.Structure):
    _fields_ = [("text", ctypes.c_void_p), ("len", ctypes.c_size_t),
                ("spans", ctypes.POINTER(Span)), ("nspans", ctypes.c_size_t), ("nchars", ctypes.c_size_t)]


class CompileOptions(ctypes.Structure):
    _fields_ = [("limits", ctypes.POINTER(Limits)), ("name", ctypes.c_char_p)]


class RenderOptions(ctypes.Structure):
    _fields_ = [("limits", ctypes.POINTER(Limits)), ("now", ctypes.c_char_p),
                ("defaults", ctypes.c_void_p), ("polyfill", ctypes.c_bool)]


class LoadOptions(ctypes.Structure):
    _fields_ = [("template_name", ctypes.c_char_p), ("has_tools", ctypes.c_bool),
                ("no_repair", ctypes.c_bool), ("limits", ctypes.POINTER(Limits))]


class Source(ctypes.Structure):
    _fields_ = [("text", ctypes.c_void_p), ("len", ctypes.c_size_t), ("tokens", ctypes.c_void_p),
                ("kind", ctypes.c_char_p), ("name", ctypes.c_char_p), ("warnings", ctypes.c_char_p),
                ("looks_tag_stripped", ctypes.c_bool)]


class RenderBuffer(ctypes.Structure):
    _fields_ = [("text", ctypes.c_void_p), ("cap", ctypes.c_size_t), ("len", ctypes.c_size_t),
                ("big", Result), ("err", Error)]


class ReplyOptions(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("tools_json", ctypes.c_char_p),
                ("prompt_tail", ctypes.c_char_p), ("reasoning_open", ctypes.c_bool),
                ("limits", ctypes.POINTER(Limits)), ("json_response", ctypes.c_bool)]


class GrammarOptions(ctypes.Structure):
    _fields_ = [("format", ctypes.c_int), ("tools_json", ctypes.c_char_p), ("tool_choice", ctypes.c_int),
                ("tool_name", ctypes.c_char_p), ("single_call", ctypes.c_bool),
                ("prompt_tail", ctypes.c_char_p), ("reasoning_open", ctypes.c_bool),
                ("emit", ctypes.c_uint), ("limits", ctypes.POINTER(Limits))]


# ---- functions ----

_P = ctypes.c_void_p
_ERR = ctypes.POINTER(Error)
_SIZE_P = ctypes.POINTER(ctypes.c_size_t)


def _declare(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = argtypes
    return fn


cf_error_kind_name = _declare("cf_error_kind_name", ctypes.c_char_p, ctypes.c_int)
cf_limits_default = _declare("cf_limits_default", None, ctypes.POINTER(Limits))
cf_compile = _declare("cf_compile", _P, ctypes.c_char_p, ctypes.c_size_t,
                      ctypes.POINTER(CompileOptions), _ERR)
cf_template_free = _declare("cf_template_free", None, _P)
cf_context_new = _declare("cf_context_new", _P)
cf_context_from_json = _declare("cf_context_from_json", _P, ctypes.c_char_p, ctypes.c_size_t, _ERR)
cf_context_free = _declare("cf_context_free", None, _P)
cf_result_free = _declare("cf_result_free", None, ctypes.POINTER(Result))
cf_render = _declare("cf_render", ctypes.c_bool, _P, _P, ctypes.POINTER(RenderOptions),
                     ctypes.POINTER(Result), _ERR)
cf_render_chat = _declare("cf_render_chat", ctypes.c_bool, _P, _P, ctypes.POINTER(RenderOptions),
                          ctypes.POINTER(Result), _ERR)
cf_source_load = _declare("cf_source_load", ctypes.c_bool, ctypes.c_char_p,
                          ctypes.POINTER(LoadOptions), ctypes.POINTER(Source), _ERR)
cf_source_from_text = _declare("cf_source_from_text", ctypes.c_bool, ctypes.c_char_p, ctypes.c_size_t,
                               ctypes.POINTER(LoadOptions), ctypes.POINTER(Source), _ERR)
cf_source_free = _declare("cf_source_free", None, ctypes.POINTER(Source))
cf_builtin_names = _declare("cf_builtin_names", ctypes.POINTER(ctypes.c_char_p))
cf_reply_format_name = _declare("cf_reply_format_name", ctypes.c_char_p, ctypes.c_int)
cf_reply_format_example = _declare("cf_reply_format_example", ctypes.c_char_p, ctypes.c_int)
cf_reply_format_from_name = _declare("cf_reply_format_from_name", ctypes.c_bool, ctypes.c_char_p,
                                     ctypes.POINTER(ctypes.c_int))
cf_reply_format_detect = _declare("cf_reply_format_detect", ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t)
cf_parse_reply = _declare("cf_parse_reply", _P, ctypes.c_char_p, ctypes.c_size_t,
                          ctypes.POINTER(ReplyOptions), _SIZE_P, _ERR)
cf_reply_stream_new = _declare("cf_reply_stream_new", _P, ctypes.POINTER(ReplyOptions), _ERR)
cf_reply_stream_feed = _declare("cf_reply_stream_feed", ctypes.c_bool, _P, ctypes.c_char_p,
                                ctypes.c_size_t, _ERR)
cf_reply_stream_finish = _declare("cf_reply_stream_finish", ctypes.c_bool, _P, _ERR)
cf_reply_stream_drain = _declare("cf_reply_stream_drain", _P, _P, _SIZE_P)
cf_reply_stream_free = _declare("cf_reply_stream_free", None, _P)
# One call per render (src/api_fast.c). Declared WITHOUT argtypes on purpose:
# ctypes converts declared arguments through a Python-level from_param per
# argument, which costs more than the rest of the call; every argument is
# passed as a ctypes object (pointers, c_size_t) or bytes, whose conversion
# is done in C. Returns an int (the default restype).
cf_render_data = lib["cf_render_data"] if hasattr(lib, "cf_render_data") else None
CF_DATA_JSON, CF_DATA_MARSHAL, CF_DATA_CHAT = 0, 1, 0x100
CF_RENDER_UNSUPPORTED, CF_RENDER_BIG = -2, -3
# Template capabilities (src/chat/caps.c); absent from libraries built before it.
cf_caps_json = _declare("cf_caps_json", _P, _P, _P, _ERR) if hasattr(lib, "cf_caps_json") else None

# Decoding grammars (src/grammar/); absent from libraries built before them.
cf_tool_grammar = (_declare("cf_tool_grammar", _P, ctypes.POINTER(GrammarOptions), _SIZE_P, _ERR)
                   if hasattr(lib, "cf_tool_grammar") else None)
cf_schema_grammar = (_declare("cf_schema_grammar", _P, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int,
                              ctypes.POINTER(Limits), _SIZE_P, _ERR)
                     if hasattr(lib, "cf_schema_grammar") else None)
# The special tokens of a template as JSON (pickling); absent from older libraries.
cf_context_to_json = _declare("cf_context_to_json", _P, _P, _SIZE_P, _ERR) \
    if hasattr(lib, "cf_context_to_json") else None
cf_context_set_json = _declare("cf_context_set_json", ctypes.c_bool, _P, ctypes.c_char_p, ctypes.c_char_p,
                               ctypes.c_size_t, _ERR)
cf_context_set_bool = _declare("cf_context_set_bool", ctypes.c_bool, _P, ctypes.c_char_p, ctypes.c_bool)
cf_context_has_value = _declare("cf_context_has_value", ctypes.c_bool, _P, ctypes.c_char_p)
cf_context_from_json_limits = _declare("cf_context_from_json_limits", _P, ctypes.c_char_p, ctypes.c_size_t,
                                       ctypes.POINTER(Limits), _ERR)
cf_json_quote = _declare("cf_json_quote", ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                         ctypes.c_size_t)

# The library allocates cf_parse_reply's result with malloc; release it with
# the C library's free (the one libchatfmt itself links against).
_libc = ctypes.CDLL(None)
free = _libc.free
free.restype = None
free.argtypes = [_P]


def raise_error(err, name=None):
    """Raise the chatfmt exception class of a filled cf_error."""
    raise_fields(err.kind, err.message.decode("utf-8", "replace"), err.line, err.column, err.offset, name=name)


_ERROR_CLASS_BY_KIND = {}   # cf_error kind -> its exception class, as error_class finds it


def error_class(kind):
    """The chatfmt exception class of a cf_error kind (the kind's name is
    looked up once: a ctypes call cost as much as making the exception)."""
    cls = _ERROR_CLASS_BY_KIND.get(kind)
    if cls is None:
        cls = _ERROR_CLASS_BY_KIND[kind] = errors.BY_KIND.get(cf_error_kind_name(kind).decode(), errors.ChatfmtError)
    return cls


def raise_fields(kind, message, line, column, offset, name=None):
    """Raise the chatfmt exception class of a cf_error given field by field
    (the C render path answers its errors so)."""
    raise error_class(kind)(message, line or None, column or None, offset or None, name)


def limits_struct(limits):
    """A Limits structure from a dict of max_* fields (None: defaults)."""
    if not limits:
        return None
    lim = Limits()
    for key, value in limits.items():
        if key not in dict(Limits._fields_):
            raise errors.UsageError(f"unknown limit {key!r} (one of {', '.join(f for f, _ in Limits._fields_)})")
        setattr(lim, key, int(value))
    return lim
