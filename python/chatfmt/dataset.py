"""chatfmt.format_jsonl: dataset mode (`chatfmt render TEMPLATE --jsonl`)
from Python, with the same output bytes.

Each input line is one chat-mode context (messages, tools, documents,
add_generation_prompt, ...); each output line is {"text": ...} (plus
"spans" with spans=True) or, for a row that fails, {"error": {"type",
"message"}}; one output line per input line, in input order. The file is
read a block of lines at a time and each block is rendered on `threads`
threads without the GIL (the C render path, _speedups), so memory stays
bounded for any file size.
"""
import ctypes
import json
import os

from . import _lib
from .template import Template, _native, _thread_count

BLOCK_BYTES = 4 << 20   # input read per step (whole lines; a longer line is read whole)
_OOM_ROW = b'{"error": {"type": "MemoryError", "message": "out of memory"}}\n'


class FormatStats:
    """What format_jsonl did: rows written, error rows among them, and the
    first error row's line number (1-based; 0: none) and output line."""

    __slots__ = ("rows", "errors", "first_error_line", "first_error")

    def __init__(self):
        self.rows = self.errors = self.first_error_line = 0
        self.first_error = None

    def __repr__(self):
        return (f"FormatStats(rows={self.rows}, errors={self.errors}, first_error_line={self.first_error_line}, "
                f"first_error={self.first_error!r})")


def _kind_numbers():
    out = {}
    for i in range(64):
        name = _lib.cf_error_kind_name(i)
        if name:
            out.setdefault(name.decode(), i)
    return out


def format_jsonl(template, in_path, out_path, *, threads=None, spans=False, raw=False, polyfill=False,
                 add_generation_prompt=False, template_name=None, repair=True, now=None, limits=None, define=None):
    """Format a JSON Lines file as `chatfmt render TEMPLATE --jsonl IN -o OUT`
    does, byte for byte. Options mirror the CLI's: ``spans`` (--spans),
    ``raw`` (--raw), ``polyfill`` (--polyfill), ``add_generation_prompt``
    (--add-generation-prompt), ``template_name`` (--template-name),
    ``repair=False`` (--no-repair), ``now`` (--now), ``limits`` (--max-*),
    ``define``: a dict of variables set on every row, overriding the row's
    (-D KEY=JSON). ``template``: a path or built-in name (as the CLI), or a
    :class:`Template` made with those options. ``in_path``/``out_path``:
    paths or binary file objects. Returns a :class:`FormatStats`; a failing
    row is an error row, never an exception."""
    if isinstance(template, Template):
        t = template
    else:
        t = Template(template, template_name=template_name, repair=repair, limits=limits, now=now,
                     polyfill=polyfill)
    threads = _thread_count(threads)
    defines = [(str(k).encode("utf-8"), json.dumps(v, ensure_ascii=False).encode("utf-8"))
               for k, v in (define or {}).items()]
    tools_error = None
    if t._tools_error is not None:
        e = t._tools_error
        tools_error = (_kind_numbers().get(e.kind, 0), e.message.encode("utf-8"))
    options = t._raw_options if raw else t._options
    limits_ptr = ctypes.addressof(t._limits) if t._limits else None
    stats = FormatStats()
    job = (t, tools_error, options, limits_ptr, raw, spans, add_generation_prompt, defines, threads)
    src = open(in_path, "rb") if isinstance(in_path, (str, bytes, os.PathLike)) else in_path
    dst = open(out_path, "wb") if isinstance(out_path, (str, bytes, os.PathLike)) else out_path
    try:
        rest = b""
        while True:
            chunk = src.read(BLOCK_BYTES)
            if not chunk:
                break
            data = rest + chunk if rest else chunk
            cut = data.rfind(b"\n") + 1
            rest = data[cut:]
            if cut:
                _format_block(job, data[:cut], dst, stats)
        if rest:   # a last line without a newline
            _format_block(job, rest, dst, stats)
    finally:
        if src is not in_path:
            src.close()
        if dst is not out_path:
            dst.close()
    return stats


def _format_block(job, block, dst, stats):
    t, tools_error, options, limits_ptr, raw, spans, agp, defines, threads = job
    if _native is not None and hasattr(_native, "format_rows"):
        with_tools = t._with_tools.ptr if t._with_tools is not None else None
        out, rows, nerr, first = _native.format_rows(block, t._plain.ptr, with_tools, tools_error,
                                                     ctypes.addressof(options), limits_ptr, raw, spans, agp,
                                                     defines, threads)
    else:
        rows_in = block.split(b"\n")
        if block.endswith(b"\n"):
            rows_in.pop()
        lines = [_format_row(job, line.rstrip(b"\r")) for line in rows_in]
        out = b"".join(x for x, _ in lines)
        rows = len(lines)
        flags = [bad for _, bad in lines]
        nerr = sum(flags)
        first = flags.index(True) if nerr else -1
    dst.write(out)
    if nerr and not stats.errors:
        stats.first_error_line = stats.rows + first + 1
        stats.first_error = _nth_line(out, first).decode("utf-8", "replace")
    stats.rows += rows
    stats.errors += nerr


def _nth_line(data, n):
    at = 0
    for _ in range(n):
        at = data.index(b"\n", at) + 1
    return data[at:data.index(b"\n", at)]


def _quote(data):
    cap = 6 * len(data) + 2
    buf = ctypes.create_string_buffer(cap)
    n = _lib.cf_json_quote(data, len(data), buf, cap)
    return buf.raw[:n]


def _format_row(job, line):
    """One row through ctypes (no _speedups): (output line, is an error)."""
    t, tools_error, options, limits_ptr, raw, spans, agp, defines, threads = job
    err = _lib.Error()
    lim = ctypes.cast(limits_ptr, ctypes.POINTER(_lib.Limits)) if limits_ptr else None
    ctx = _lib.cf_context_from_json_limits(line, len(line), lim, ctypes.byref(err))
    ok = bool(ctx)
    res = _lib.Result()
    try:
        for key, value in defines:
            ok = ok and _lib.cf_context_set_json(ctx, key, value, len(value), ctypes.byref(err))
        if ok and agp:
            ok = _lib.cf_context_set_bool(ctx, b"add_generation_prompt", True)
        if ok:
            tools = (t._with_tools is not None or tools_error is not None) and _lib.cf_context_has_value(ctx, b"tools")
            if tools and tools_error is not None:
                err.kind, err.message = tools_error[0], tools_error[1][:1023]
                ok = False
            else:
                compiled = t._with_tools if tools and t._with_tools is not None else t._plain
                render = _lib.cf_render if raw else _lib.cf_render_chat
                ok = render(compiled.ptr, ctx, ctypes.byref(options), ctypes.byref(res), ctypes.byref(err))
    finally:
        if ctx:
            _lib.cf_context_free(ctx)
    if not ok:
        if err.kind == 0:
            return _OOM_ROW, True
        kind = _lib.cf_error_kind_name(err.kind)
        return (b'{"error": {"type": ' + _quote(kind) + b', "message": ' + _quote(err.message) + b"}}\n"), True
    try:
        text = ctypes.string_at(res.text, res.len)
        out = b'{"text": ' + _quote(text)
        if spans:
            out += b', "spans": [' + b", ".join(b'{"start": %d, "end": %d}' % (res.spans[i].start, res.spans[i].end)
                                                for i in range(res.nspans)) + b"]"
        return out + b"}\n", False
    finally:
        _lib.cf_result_free(ctypes.byref(res))


__all__ = ["format_jsonl", "FormatStats"]
