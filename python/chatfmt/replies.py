"""Model replies back into OpenAI assistant messages, whole or streamed."""
import ctypes
import json
import warnings

from . import _lib, errors
from .template import _template_for

_TAIL_CHARS = 256
_PROBE = [{"role": "user", "content": "x"}]


def _reply_formats():
    """Every reply format the library reads, in cf_reply_format order: the
    library is asked, so a format added in C is known here with no edit."""
    names = []
    while _lib.cf_reply_format_example(len(names)) is not None:
        names.append(_lib.cf_reply_format_name(len(names)).decode())
    return tuple(names)


REPLY_FORMATS = _reply_formats()


def _prompt_tail(template, tools, variables):
    """The end of the generation prompt the reply continues: rendering a
    one-turn probe tells whether the prompt opened (<think>) or closed
    (enable_thinking=False) reasoning. A template that cannot render the
    probe leaves reasoning closed, with a warning (as `chatfmt parse`)."""
    try:
        text = template.render(_PROBE, tools=tools, add_generation_prompt=True, **variables)
    except errors.ChatfmtError as e:
        warnings.warn(f"chatfmt: cannot render the template's generation prompt ({e.kind}: {e}); "
                      "assuming it leaves reasoning closed to the reply", stacklevel=4)
        return None
    return text[-_TAIL_CHARS:]


class _Options:
    """cf_reply_options and the buffers it points to."""

    def __init__(self, template, tools, format, prompt, reasoning_open, limits, variables, response_format=None):
        t = _template_for(template) if template is not None else None
        if format is None:
            format = t.reply_format if t is not None else "plain"
        value = ctypes.c_int()
        if not _lib.cf_reply_format_from_name(format.encode(), ctypes.byref(value)):
            raise errors.UsageError(f"unknown reply format {format!r} ({', '.join(REPLY_FORMATS)})")
        if prompt is not None:
            tail = prompt[-_TAIL_CHARS:]
        elif t is not None:
            tail = _prompt_tail(t, tools, variables)
        else:
            tail = None
        self._tools = json.dumps(tools).encode() if tools is not None else None
        self._tail = tail.encode("utf-8") if tail else None
        self._limits = _lib.limits_struct(limits)
        self.c = _lib.ReplyOptions(value.value, self._tools, self._tail, bool(reasoning_open),
                                   ctypes.pointer(self._limits) if self._limits else None,
                                   _json_response(response_format))


def _json_response(response_format):
    """Does the request's response_format ask for JSON? It is OpenAI's dict
    ({"type": "json_object"} or {"type": "json_schema", ...}), or "json" / "text"."""
    kind = response_format.get("type") if isinstance(response_format, dict) else response_format
    if kind in (None, "text"):
        return False
    if kind in ("json", "json_object", "json_schema"):
        return True
    raise errors.UsageError(f"unknown response_format {response_format!r} (text, json, json_object, json_schema)")


def _as_bytes(text):
    return text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)


def parse_reply(text, template=None, *, tools=None, format=None, prompt=None, reasoning_open=False,
                limits=None, response_format=None, **variables):
    """Parse a whole model reply into the OpenAI assistant message (a dict:
    role, content, reasoning_content, tool_calls, citations; see chatfmt.h).

    ``template`` (text, path, built-in name or :class:`Template`) picks the
    format and, rendered with ``tools`` and ``variables`` (e.g.
    enable_thinking=False), tells whether the reply starts inside reasoning.
    ``format`` ("glm45", "hermes", "command-a", "plain") overrides detection;
    ``prompt`` (the rendered prompt) replaces the probe render; ``tools``
    (OpenAI tools list) types glm45 argument values. ``response_format``
    (the request's, e.g. {"type": "json_object"}, or "json") asking for JSON:
    the content is the JSON answer, a ```json fence around it dropped.
    """
    opts = _Options(template, tools, format, prompt, reasoning_open, limits, variables, response_format)
    data = _as_bytes(text)
    err = _lib.Error()
    n = ctypes.c_size_t()
    p = _lib.cf_parse_reply(data, len(data), ctypes.byref(opts.c), ctypes.byref(n), ctypes.byref(err))
    if not p:
        _lib.raise_error(err)
    try:
        return json.loads(ctypes.string_at(p, n.value).decode("utf-8"))
    finally:
        _lib.free(p)


def _merge(message, delta):
    """Fold one streaming delta into an assistant message."""
    for key in ("content", "reasoning_content"):
        if key in delta:
            message[key] = (message.get(key) or "") + delta[key]
    for call in delta.get("tool_calls", ()):
        calls = message.setdefault("tool_calls", [])
        while len(calls) <= call["index"]:
            calls.append({"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
        into = calls[call["index"]]
        for key in ("id", "type"):
            if key in call:
                into[key] = call[key]
        fn = call.get("function", {})
        into["function"]["name"] += fn.get("name", "")
        into["function"]["arguments"] += fn.get("arguments", "")
    if "citations" in delta:
        message.setdefault("citations", []).extend(delta["citations"])


class ReplyStream:
    """Parse a reply as it arrives. ``feed(text)`` returns the deltas it
    produced (OpenAI chat.completion.chunk ``delta`` dicts); ``finish()``
    flushes what was held back. ``message`` is the assistant message built
    from the deltas so far (after finish, equal to parse_reply's for a
    well-formed reply). Same options as :func:`parse_reply`."""

    def __init__(self, template=None, *, tools=None, format=None, prompt=None, reasoning_open=False,
                 limits=None, response_format=None, **variables):
        self._opts = _Options(template, tools, format, prompt, reasoning_open, limits, variables, response_format)
        err = _lib.Error()
        self._ptr = _lib.cf_reply_stream_new(ctypes.byref(self._opts.c), ctypes.byref(err))
        if not self._ptr:
            _lib.raise_error(err)
        self._message = {"role": "assistant"}
        self.finished = False

    def _drain(self):
        n = ctypes.c_size_t()
        p = _lib.cf_reply_stream_drain(self._ptr, ctypes.byref(n))
        deltas = [json.loads(line) for line in ctypes.string_at(p, n.value).decode("utf-8").splitlines() if line]
        for d in deltas:
            _merge(self._message, d)
        return deltas

    def _check(self):
        if not self._ptr:
            raise errors.UsageError("the reply stream is closed")
        if self.finished:
            raise errors.UsageError("the reply stream is finished")

    def feed(self, text):
        self._check()
        data = _as_bytes(text)
        err = _lib.Error()
        if not _lib.cf_reply_stream_feed(self._ptr, data, len(data), ctypes.byref(err)):
            _lib.raise_error(err)
        return self._drain()

    def finish(self):
        self._check()
        err = _lib.Error()
        if not _lib.cf_reply_stream_finish(self._ptr, ctypes.byref(err)):
            _lib.raise_error(err)
        self.finished = True
        return self._drain()

    @property
    def message(self):
        m = {"role": "assistant", "content": self._message.get("content") or None,
             "reasoning_content": self._message.get("reasoning_content") or None}
        for key in ("tool_calls", "citations"):
            if key in self._message:
                m[key] = self._message[key]
        return m

    def close(self):
        if getattr(self, "_ptr", None) and _lib is not None:
            _lib.cf_reply_stream_free(self._ptr)
        self._ptr = None

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
