"""Templates: compile once, render many times (any thread)."""
import ctypes
import functools
import json
import marshal
import os
import threading

from . import _lib, _transformers, errors

# The variables cross into C in Python's marshal format: CPython writes it
# several times faster than JSON, and the library reads exactly the
# JSON-like subset of it (cf_render_data). Data outside that subset (NaN,
# non-str keys, dict subclasses, objects...) makes the library answer
# CF_RENDER_UNSUPPORTED, and the render is redone through JSON, whose
# encoder and reader decide what it becomes or which error it raises. So
# the result never depends on which encoding was used.
_marshal = marshal.dumps
# ASCII output (\\u escapes) is the C JSON encoder's fast path; NaN/Infinity
# are refused here because the library reads strict JSON.
_encode = json.JSONEncoder(ensure_ascii=True, check_circular=False, allow_nan=False).encode
_size_t = ctypes.c_size_t
_CHAT = _lib.CF_DATA_MARSHAL | _lib.CF_DATA_CHAT
_RAW = _lib.CF_DATA_MARSHAL
_FIRST_CAP, _MAX_CAP = 1 << 16, 1 << 22   # per-thread output buffer: start, most kept


def _load_speedups():
    """The C render path (_speedups.c) when it was built and the loaded
    library has the builder API; None otherwise ($CHATFMT_NO_SPEEDUPS=1 too)."""
    if os.environ.get("CHATFMT_NO_SPEEDUPS"):
        return None, None
    try:
        from . import _speedups
    except ImportError:
        return None, None
    if not _speedups.init(_lib.path):
        return None, None
    return _speedups, _speedups.DECLINED


# _native.render(template, options, chat, variables) and _native.chat(template,
# options, kwargs, messages, tools, documents, agp, cfm) answer the text, an
# error tuple for _lib.raise_fields, or _DECLINED (data outside the JSON-like
# subset: the general path below decides what it becomes).
_native, _DECLINED = _load_speedups()


class _Scratch(threading.local):
    """Per-thread output buffer and error record for cf_render_data (a
    thread-local, so concurrent renders never share one)."""

    def __init__(self):
        self.rb = _lib.RenderBuffer()
        self.ref = ctypes.byref(self.rb)
        self.resize(_FIRST_CAP)

    def resize(self, cap):
        self.buf = bytearray(cap)   # buf[:n].decode() is the cheapest way out
        self.pin = (ctypes.c_char * cap).from_buffer(self.buf)   # holds the buffer in place
        self.rb.text = ctypes.addressof(self.pin)
        self.rb.cap = cap


_scratch = _Scratch()


@functools.lru_cache(maxsize=None)
def _builtins():
    names = _lib.cf_builtin_names()
    out = []
    while names[len(out)]:
        out.append(names[len(out)].decode())
    return tuple(out)


def builtin_names():
    """Names of the built-in templates (`chatfmt list-templates`)."""
    return list(_builtins())


def _names_a_source(s):
    """A string names a file, model folder, GGUF or built-in rather than
    being template text: no template syntax, one line, and it exists."""
    if "{" in s or "\n" in s or not s:
        return False
    return os.path.exists(s) or s in _builtins()


class _Compiled:
    """One compiled template and the special tokens that came with it."""

    __slots__ = ("ptr", "handle", "source", "_src", "tokens", "_own_tokens", "__weakref__")

    def __init__(self, text, name, limits, src=None, tokens=None):
        self._src = src                  # keeps src.tokens alive
        self._own_tokens = tokens        # a cf_context of its own (an unpickled template's tokens)
        self.tokens = src.tokens if src is not None else tokens
        self.source = text
        data = text.encode("utf-8") if isinstance(text, str) else text
        if isinstance(text, bytes):
            self.source = text.decode("utf-8", "replace")
        opts = _lib.CompileOptions(ctypes.pointer(limits) if limits else None,
                                   name.encode() if name else None)
        err = _lib.Error()
        self.ptr = _lib.cf_compile(data, len(data), ctypes.byref(opts), ctypes.byref(err))
        if not self.ptr:
            _lib.raise_error(err, name)
        self.handle = ctypes.c_void_p(self.ptr)   # passed as is to cf_render_data

    def __del__(self):
        lib = _lib   # module globals may already be gone at interpreter exit
        if lib is None:
            return
        if getattr(self, "ptr", None):
            lib.cf_template_free(self.ptr)
            self.ptr = None
        if getattr(self, "_src", None) is not None:
            lib.cf_source_free(ctypes.byref(self._src))
            self._src = None
        if getattr(self, "_own_tokens", None):
            lib.cf_context_free(self._own_tokens)
            self._own_tokens = None


def _load_source(what, template_name, has_tools, repair, limits):
    opts = _lib.LoadOptions(template_name.encode() if template_name else None, has_tools, not repair,
                            ctypes.pointer(limits) if limits else None)
    src = _lib.Source()
    err = _lib.Error()
    if not _lib.cf_source_load(os.fsencode(what), ctypes.byref(opts), ctypes.byref(src), ctypes.byref(err)):
        _lib.raise_error(err, what)
    return src


def _source_text(src):
    return ctypes.string_at(src.text, src.len).decode("utf-8")


class Template:
    """A compiled chat template.

    ``template`` is template text, or a path (a .jinja file, a
    tokenizer_config.json, a model folder, a .gguf) or a built-in name
    (:func:`builtin_names`): a one-line string without ``{`` that exists as a
    file or is a built-in name is loaded, anything else is template text.
    Loaded sources bring their special tokens (bos_token, eos_token, ...) as
    defaults that render arguments override, as transformers does; a
    tokenizer_config with a "tool_use" template uses it for renders with
    tools unless ``template_name`` picks one.

    ``repair``: undo web-copy damage (line numbers, markdown table rows).
    Default: on for loaded sources (as the CLI), off for text (rendered
    exactly as given, as transformers does).
    ``limits``: dict of safety limits, e.g. ``{"max_steps": 10**6}``.
    ``now``: "YYYY-MM-DDTHH:MM:SS" pins strftime_now (else $CHATFMT_NOW, else
    the local time).
    ``polyfill``: adapt each request to what the template can render (string
    tool arguments parsed, content parts joined or wrapped, an unsupported
    system message merged into the first user turn; see :meth:`caps`).
    Off by default: exactly transformers.
    """

    def __init__(self, template, *, template_name=None, repair=None, limits=None, now=None, name=None,
                 polyfill=False):
        if isinstance(template, os.PathLike):
            template = os.fspath(template)
        if not isinstance(template, (str, bytes)):
            raise errors.UsageError(f"template must be text or a path, not {type(template).__name__}")
        self._limits = _lib.limits_struct(limits)
        self._now = now.encode() if now else None
        self._with_tools = None
        self._tools_error = None   # the tool_use template failed to compile: raised by renders with tools
        self._tools_source = None  # its text
        self.warnings = []
        self.kind = "text"
        self.name = name
        # what pickling and chat_template= need: the source a path named, and the options
        self._origin = None
        self._spec = {"limits": dict(limits) if limits else None, "now": now, "polyfill": bool(polyfill),
                      "repair": repair}
        self._selected = {}
        if isinstance(template, str) and _names_a_source(template):
            self._origin = template
            self._load(template, template_name, repair is not False, name or template)
        elif repair:
            self._from_text(template, name)
        else:
            self._plain = _Compiled(template, name, self._limits)
        self._set_options(polyfill)

    def _set_options(self, polyfill):
        limits = ctypes.pointer(self._limits) if self._limits else None
        self._options = _lib.RenderOptions(limits, self._now, self._plain.tokens, bool(polyfill))
        self._raw_options = _lib.RenderOptions(limits, self._now, None, False)   # the variables only
        self._options_ref = ctypes.byref(self._options)
        self._raw_options_ref = ctypes.byref(self._raw_options)
        self._options_addr = ctypes.addressof(self._options)
        self._raw_options_addr = ctypes.addressof(self._raw_options)
        # What the C Template.render needs: set when one compiled template serves every call
        self._front = (self._plain.ptr, self._options_addr) \
            if self._with_tools is None and self._tools_error is None else None

    def _load(self, what, template_name, repair, name):
        src = _load_source(what, template_name, False, repair, self._limits)
        self.kind = src.kind.decode()
        self.name = src.name.decode() if src.name else name
        if src.warnings:
            self.warnings = src.warnings.decode("utf-8", "replace").splitlines()
        self._plain = _Compiled(_source_text(src), name, self._limits, src)
        if template_name:
            return
        try:   # a different template for tools (tokenizer_config "tool_use")?
            tsrc = _load_source(what, None, True, repair, self._limits)
        except errors.ChatfmtError:
            return
        text = _source_text(tsrc)
        if text == self._plain.source:
            _lib.cf_source_free(ctypes.byref(tsrc))
            return
        self._tools_source = text
        try:
            self._with_tools = _Compiled(text, name, self._limits, tsrc)
        except errors.ChatfmtError as e:   # transformers compiles it only when tools come
            self._tools_error = e

    def _from_text(self, text, name):
        data = text.encode("utf-8") if isinstance(text, str) else text
        src = _lib.Source()
        err = _lib.Error()
        opts = _lib.LoadOptions(None, False, False, ctypes.pointer(self._limits) if self._limits else None)
        if not _lib.cf_source_from_text(data, len(data), ctypes.byref(opts), ctypes.byref(src), ctypes.byref(err)):
            _lib.raise_error(err, name)
        if src.warnings:
            self.warnings = src.warnings.decode("utf-8", "replace").splitlines()
        self._plain = _Compiled(_source_text(src), name, self._limits, src)

    @property
    def source(self):
        """The (possibly repaired) template text rendered for requests without tools."""
        return self._plain.source

    @property
    def reply_format(self):
        """The reply format this template's model writes: "glm45", "hermes",
        "command-a" or "plain" (chatfmt.h: cf_reply_format_detect)."""
        data = self._plain.source.encode("utf-8")
        return _lib.cf_reply_format_name(_lib.cf_reply_format_detect(data, len(data))).decode()

    def caps(self):
        """What the template supports, found by probing renders (a dict:
        supports_tools, supports_reasoning, thinking_switch, reply_format,
        stop_strings, prefix_stable, ...; `chatfmt caps`, chatfmt.h)."""
        if _lib.cf_caps_json is None:
            raise errors.UsageError(f"{_lib.path} has no cf_caps_json (a library older than the binding)")
        err = _lib.Error()
        p = _lib.cf_caps_json(self._plain.ptr, self._plain.tokens, ctypes.byref(err))
        if not p:
            _lib.raise_error(err, self.name)
        try:
            return json.loads(ctypes.string_at(p).decode("utf-8"))
        finally:
            _lib.free(p)

    # ---- rendering ----

    def _compiled_for(self, tools):
        if tools is None:
            return self._plain
        if self._tools_error is not None:
            raise self._tools_error
        return self._with_tools or self._plain

    def _render(self, variables, chat):
        """The render path: the native one (_speedups: the variables walked
        straight into the library) when built, else one foreign call
        (cf_render_data); both give the same text and errors."""
        tools = variables.get("tools")
        compiled = self._plain if tools is None else self._compiled_for(tools)
        if _native is not None:
            text = _native.render(compiled.ptr, self._options_addr if chat else self._raw_options_addr, chat,
                                  variables)
            if type(text) is str:
                return text
            if text is not _DECLINED:
                _lib.raise_fields(*text, name=self.name)
        render = _lib.cf_render_data
        if render is None:   # a library older than the binding
            return self._run_context(compiled, variables, chat)
        flags, options = (_CHAT, self._options_ref) if chat else (_RAW, self._raw_options_ref)
        s = _scratch
        try:
            data = _marshal(variables, 4)
        except ValueError:   # not marshallable (a subclass, an object...): JSON decides
            data, flags = _encode(variables).encode("ascii"), flags & ~_lib.CF_DATA_MARSHAL
        n = render(s.ref, compiled.handle, options, flags, data, _size_t(len(data)))
        if n >= 0:
            return s.buf[:n].decode()
        if n == _lib.CF_RENDER_UNSUPPORTED:
            data = _encode(variables).encode("ascii")
            n = render(s.ref, compiled.handle, options, flags & ~_lib.CF_DATA_MARSHAL, data, _size_t(len(data)))
            if n >= 0:
                return s.buf[:n].decode()
        if n == _lib.CF_RENDER_BIG:
            return self._take_big(s)
        _lib.raise_error(s.rb.err, self.name)

    @staticmethod
    def _take_big(s):
        """An output longer than the thread's buffer: take it from rb.big and
        grow the buffer (up to _MAX_CAP) for the next ones."""
        rb = s.rb
        try:
            text = ctypes.string_at(rb.big.text, rb.len).decode("utf-8")
        finally:
            _lib.cf_result_free(ctypes.byref(rb.big))
        if rb.len <= _MAX_CAP:
            cap = s.rb.cap
            while cap < rb.len:
                cap *= 2
            s.resize(cap)
        return text

    def _run_context(self, compiled, variables, chat, spans=False):
        """Through a cf_context and cf_render_chat/cf_render (spans, or a
        library without cf_render_data)."""
        data = _encode(variables).encode("ascii")
        err = _lib.Error()
        ctx = _lib.cf_context_from_json(data, len(data), ctypes.byref(err))
        if not ctx:
            _lib.raise_error(err, self.name)
        res = _lib.Result()
        render, options = (_lib.cf_render_chat, self._options) if chat else (_lib.cf_render, self._raw_options)
        try:
            if not render(compiled.ptr, ctx, ctypes.byref(options), ctypes.byref(res), ctypes.byref(err)):
                _lib.raise_error(err, self.name)
        finally:
            _lib.cf_context_free(ctx)
        try:
            text = ctypes.string_at(res.text, res.len).decode("utf-8")
            if spans:
                return text, [(res.spans[i].start, res.spans[i].end) for i in range(res.nspans)]
            return text
        finally:
            _lib.cf_result_free(ctypes.byref(res))

    def _run(self, variables, chat, spans=False):
        if spans:
            return self._run_context(self._compiled_for(variables.get("tools")), variables, chat, True)
        return self._render(variables, chat)

    def _render_general(self, conversation=None, tools=None, documents=None, chat_template=None,
                        add_generation_prompt=False, continue_final_message=False, tokenize=False, padding=False,
                        truncation=False, max_length=None, return_tensors=None, return_dict=False,
                        return_assistant_tokens_mask=False, tokenizer_kwargs=None, tokenizer=None, **kwargs):
        """transformers' ``tokenizer.apply_chat_template`` with this template
        (see :func:`apply_chat_template` and python/README.md's table).

        ``conversation``: one conversation (a list of messages) or a batch of
        them (a list of lists; the result is then a list). Only ``kwargs``
        (and the source's special tokens) reach the template, as in
        transformers; ``messages=`` is accepted for ``conversation``.
        ``tokenize=False`` (the default) returns text; ``return_dict=True``
        with text gives ``{"text", "assistant_spans"}``; ``tokenize=True``
        calls ``tokenizer`` as transformers does and returns its ids or, with
        ``return_dict=True``, its encoding (plus ``assistant_masks`` with
        ``return_assistant_tokens_mask=True``)."""
        if "messages" in kwargs:
            if conversation is not None:
                raise TypeError("render() got the conversation twice (conversation and messages)")
            conversation = kwargs.pop("messages")
        if conversation is None:
            raise TypeError("render() missing the conversation (a list of messages, or a list of them)")
        t = self.select(chat_template, tools)
        if tokenize or return_dict or return_assistant_tokens_mask or continue_final_message \
                or _is_batch(conversation):
            return _transformers.apply(t, conversation, tools, documents, add_generation_prompt,
                                       continue_final_message, tokenize, padding, truncation, max_length,
                                       return_tensors, return_dict, return_assistant_tokens_mask, tokenizer_kwargs,
                                       tokenizer, kwargs)
        return t._render_one(conversation, tools, documents, add_generation_prompt, continue_final_message, kwargs)

    render = _render_general

    def _render_one(self, messages, tools, documents, add_generation_prompt, continue_final_message, kwargs):
        """One conversation's text (kwargs: the template variables; taken over)."""
        if _native is not None:
            text = _chat_native(self, kwargs, messages, tools, documents, add_generation_prompt,
                                continue_final_message)
            if text is not None:
                return text
        kwargs["messages"] = messages
        kwargs["tools"] = tools
        kwargs["documents"] = documents
        kwargs["add_generation_prompt"] = add_generation_prompt
        kwargs["continue_final_message"] = continue_final_message
        return self._render(kwargs, True)

    def select(self, chat_template=None, tools=None):
        """The template transformers' ``chat_template=`` argument picks: None
        is this one; a name of the source's named templates (a
        tokenizer_config.json's or model folder's) is that template; anything
        else is template text, rendered with this source's special tokens."""
        if chat_template is None:
            return self
        if not isinstance(chat_template, str):
            raise errors.UsageError(f"chat_template must be a template name or text, not {type(chat_template).__name__}")
        t = self._selected.get(chat_template)
        if t is not None:
            return t
        if self._origin is not None and "{" not in chat_template and "\n" not in chat_template \
                and self.kind in ("tokenizer_config", "model_dir"):
            try:
                t = Template(self._origin, template_name=chat_template, name=self.name, **self._spec)
            except errors.UsageError:   # not one of its names: template text, as transformers takes it
                t = None
        if t is None:
            spec = dict(self._spec, repair=False)
            t = Template(chat_template, **spec)
            t._options.defaults = self._plain.tokens   # this source's special tokens
            t._tokens_owner = self                      # (kept alive with them)
        if len(self._selected) >= 16:
            self._selected.clear()
        self._selected[chat_template] = t
        return t

    def render_batch(self, rows, threads=None, **variables):
        """Render many requests in one call, on ``threads`` threads (default:
        $CHATFMT_THREADS, else every core) that read the rows while this
        thread holds the GIL (other Python threads run every 5 ms, between
        two windows of rows).

        ``rows``: a list of contexts (dicts of variables: ``messages``,
        ``tools``, ``documents``, ``add_generation_prompt``, ... as a
        dataset-mode row) or of conversations (lists of messages).
        ``variables`` are set on every row (a row's own keys win). Returns a
        list in the order of ``rows``: each item is the text, or the
        exception object (a :class:`ChatfmtError`) of a row that failed; the
        batch never stops at a failing row. A row object that comes again
        within the call is read once (its repeats share what was read):
        the rows must not change while the call runs."""
        rows = rows if type(rows) is list else list(rows)
        threads = _thread_count(threads)
        tools_error = self._tools_error
        if _native is not None and hasattr(_native, "render_batch"):
            plain = self._plain.ptr
            with_tools = self._with_tools.ptr if self._with_tools is not None else None
            out, declined = _native.render_batch(rows, variables, plain, with_tools, tools_error, self._options_addr,
                                                 True, threads, self._error_object)
            for i in declined or ():
                out[i] = self._row_general(rows[i], variables)
            return out
        if threads == 1 or len(rows) < 2:
            return [self._row_general(r, variables) for r in rows]
        # ctypes lets the GIL go during each foreign call: the rows overlap
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(threads) as pool:
            return list(pool.map(lambda r: self._row_general(r, variables), rows, chunksize=64))

    def _row_general(self, row, variables):
        """One batch row the general way: its text or its exception object."""
        try:
            if isinstance(row, dict):
                ctx = dict(variables)
                ctx.update(row)
            else:
                ctx = dict(variables, messages=getattr(row, "messages", row))
            return self._render(ctx, True)
        except Exception as e:  # noqa: BLE001 - a failing row gives its error in its place
            return e

    def _error_object(self, kind, message, line, column, offset):
        return _lib.error_class(kind)(message, line or None, column or None, offset or None, self.name)

    # ---- pickling: by text, name and options; recompiled once per process ----

    def __reduce__(self):
        return (_restore, (self._state(),))

    def _state(self):
        tokens = None
        defaults = self._options.defaults   # its source's special tokens (select() shares them)
        if defaults:
            if _lib.cf_context_to_json is None:
                raise errors.UsageError(f"{_lib.path} has no cf_context_to_json: cannot pickle the special tokens")
            err = _lib.Error()
            n = ctypes.c_size_t()
            p = _lib.cf_context_to_json(defaults, ctypes.byref(n), ctypes.byref(err))
            if not p:
                _lib.raise_error(err, self.name)
            try:
                tokens = ctypes.string_at(p, n.value).decode("utf-8")
            finally:
                _lib.free(p)
        spec = self._spec
        limits = tuple(sorted(spec["limits"].items())) if spec["limits"] else None
        return ("chatfmt.Template/1", self._plain.source, self._tools_source, tokens, self.name, self.kind,
                tuple(self.warnings), limits, spec["now"], spec["polyfill"])

    @classmethod
    def _from_state(cls, state):
        _, plain, tools_text, tokens, name, kind, warnings, limits, now, polyfill = state
        t = cls.__new__(cls)
        t._limits = _lib.limits_struct(dict(limits) if limits else None)
        t._now = now.encode() if now else None
        t._with_tools = t._tools_error = None
        t._tools_source = tools_text
        t.warnings = list(warnings)
        t.kind = kind
        t.name = name
        t._origin = None
        t._spec = {"limits": dict(limits) if limits else None, "now": now, "polyfill": polyfill, "repair": False}
        t._selected = {}
        ctx = None
        if tokens is not None:
            data = tokens.encode("utf-8")
            err = _lib.Error()
            ctx = _lib.cf_context_from_json(data, len(data), ctypes.byref(err))
            if not ctx:
                _lib.raise_error(err, name)
        t._plain = _Compiled(plain, name, t._limits, tokens=ctx)
        if tools_text is not None:
            try:
                t._with_tools = _Compiled(tools_text, name, t._limits)
            except errors.ChatfmtError as e:
                t._tools_error = e
        t._set_options(polyfill)
        return t

    def render_with_spans(self, messages, tools=None, documents=None, add_generation_prompt=False,
                          continue_final_message=False, **kwargs):
        """Like render, plus the {% generation %} spans as (start, end) code
        point offsets into the text (transformers' assistant masks)."""
        kwargs.update(messages=messages, tools=tools, documents=documents,
                      add_generation_prompt=add_generation_prompt,
                      continue_final_message=continue_final_message)
        return self._run(kwargs, True, spans=True)

    def render_raw(self, **variables):
        """Render with exactly these variables (no chat-mode defaults, no
        special tokens), as jinja2's Template.render(**variables)."""
        return self._render(variables, False)

    def __repr__(self):
        return f"<chatfmt.Template {self.name or self.kind} ({len(self.source)} chars)>"


def compile(template, **options):
    """Compile a template once for many renders; see :class:`Template`."""
    return Template(template, **options)


@functools.lru_cache(maxsize=32)
def _cached(template, stamp):
    return Template(template)


# Template texts seen by apply_chat_template, looked up before anything else
# (a text is never a path: it holds "{" or a newline). Bounded: cleared when full.
_by_text = {}
_BY_TEXT_MAX = 64


def _template_for(template):
    if type(template) is not str:   # (the isinstance checks cost more than the rest)
        if isinstance(template, Template):
            return template
        if isinstance(template, os.PathLike):
            template = os.fspath(template)
    stamp = None
    # One stat: a file (or folder) is stamped so that a changed one is loaded
    # again; anything else is a built-in name or template text.
    if isinstance(template, str) and template and "{" not in template and "\n" not in template:
        try:
            st = os.stat(template)
            stamp = (st.st_mtime_ns, st.st_size)
        except (OSError, ValueError):
            pass
    t = _cached(template, stamp)
    if stamp is None and type(template) is str and ("{" in template or "\n" in template):
        if len(_by_text) >= _BY_TEXT_MAX:
            _by_text.clear()
        _by_text[template] = t
        if _native_apply and t._with_tools is None and t._tools_error is None:
            _native.register(template, t, t._plain.ptr, t._options_addr)   # its next calls: the C front door
    return t


def _is_batch(messages):
    if not isinstance(messages, (list, tuple)) or not messages:
        return False
    first = messages[0]
    if type(first) is dict:   # the usual single conversation, decided without hasattr
        return False
    return isinstance(first, (list, tuple)) or hasattr(first, "messages")


def _chat_native(t, kwargs, messages, tools, documents, add_generation_prompt, continue_final_message):
    """Template.render on the C path: the variables walked from the arguments
    (no dict built). The text, or None when the C path declines the data."""
    compiled = t._plain if tools is None else t._compiled_for(tools)
    text = _native.chat(compiled.ptr, t._options_addr, kwargs, messages, tools, documents,
                        add_generation_prompt, continue_final_message)
    if type(text) is str:
        return text
    if text is not _DECLINED:
        _lib.raise_fields(*text, name=t.name)
    return None


def _raise_native(t, err):
    """The C front door's render error, raised as the general path raises it."""
    _lib.raise_fields(*err, name=t.name)


def apply_chat_template(template, conversation=None, tools=None, documents=None, chat_template=None,
                        add_generation_prompt=False, continue_final_message=False, tokenize=False, padding=False,
                        truncation=False, max_length=None, return_tensors=None, return_dict=False,
                        return_assistant_tokens_mask=False, tokenizer_kwargs=None, tokenizer=None, **kwargs):
    """transformers' ``tokenizer.apply_chat_template`` without transformers,
    parameter by parameter (python/README.md has the table).

    ``template``: template text, a path (.jinja, tokenizer_config.json, model
    folder, .gguf), a built-in name or a :class:`Template` (compiled
    templates are cached by text/path, as transformers caches). The other
    parameters are transformers': ``conversation`` is one conversation or a
    batch (a list of them: the result is a list, rendered in one call on
    every core; a failing conversation gives its exception object in its
    place). ``tokenize`` defaults to False here (text); ``tokenize=True``
    needs ``tokenizer=`` (any object called as transformers' tokenizers are).
    Only ``kwargs`` (and the source's special tokens) reach the template.
    Errors raise the chatfmt exception named as the Python exception
    transformers would raise (TemplateError, UndefinedError, ...).
    """
    t = _by_text.get(template) if type(template) is str else None
    if t is None:
        t = template if type(template) is Template else _template_for(template)
    return Template._render_general(t, conversation, tools, documents, chat_template, add_generation_prompt,
                                    continue_final_message, tokenize, padding, truncation, max_length,
                                    return_tensors, return_dict, return_assistant_tokens_mask, tokenizer_kwargs,
                                    tokenizer, **kwargs)


def _thread_count(threads):
    if threads is None:
        threads = int(os.environ.get("CHATFMT_THREADS") or 0) or os.cpu_count() or 1
    threads = int(threads)
    if not 1 <= threads <= 256:
        raise errors.UsageError(f"threads must be 1..256, not {threads}")
    return threads


# Unpickled templates, by their state: each is compiled once per process.
_restored = {}
_RESTORED_MAX = 64


def _restore(state):
    t = _restored.get(state)
    if t is None:
        if len(_restored) >= _RESTORED_MAX:
            _restored.clear()
        t = _restored[state] = Template._from_state(state)
    return t


# With _speedups, chatfmt.apply_chat_template is its C front door: the usual
# call (a template text seen before, one conversation) is walked and rendered
# there without a Python frame; every other call comes to the function above.
# Template.render likewise, for calls on a compiled template.
_apply_general = apply_chat_template
_native_apply = _native is not None and hasattr(_native, "render_method")
if _native_apply:
    _native.setup(_apply_general, _raise_native)
    apply_chat_template = _native.apply_chat_template
    Template._render_py = Template._render_general
    Template.render = _native.render_method(Template, Template._render_general)
