// chatfmt for JavaScript: the C library compiled to WebAssembly (dist/),
// wrapped for Node >= 18 and browsers. Renders chat templates byte for byte
// as transformers' apply_chat_template and parses model replies back into
// OpenAI messages. See README.md; the types are in index.d.ts.
//
// Memory: compiled templates, loaded sources and reply streams live in the
// module's heap. dispose() (or `using`, Symbol.dispose) frees them at once;
// a FinalizationRegistry frees what is dropped without it, eventually.
import createChatfmt from "./dist/chatfmt.mjs";
import { applyWithOptions, isBatch, splitOptions } from "./tokenize.js";

const isNode = typeof process === "object" && !!process.versions && !!process.versions.node;
const moduleArgs = {};
if (isNode) {
  // emscripten's web build fetches its .wasm beside the module; Node reads it.
  const fs = await import("node:fs");
  moduleArgs.wasmBinary = fs.readFileSync(new URL("./dist/chatfmt.wasm", import.meta.url));
}
const M = await createChatfmt(moduleArgs);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// ---- strings across the boundary ----

function heap() {
  return M.HEAPU8;
}

/** Bytes at p (n of them) as a string. */
function readBytes(p, n) {
  return decoder.decode(heap().subarray(p, p + n));
}

/** NUL-terminated string at p, or null for a null pointer. */
function readCString(p) {
  if (!p) return null;
  const h = heap();
  let e = p;
  while (h[e]) e++;
  return decoder.decode(h.subarray(p, e));
}

// The scratch input buffer (C side: cfjs_input) the hot path writes its JSON into.
let inputPtr = 0;
let inputCap = 0;
let inputView = null;

/** Writes s as UTF-8 into the scratch buffer; returns its length in bytes. */
function writeInput(s) {
  const need = s.length * 3 + 1; // UTF-16 units to UTF-8: at most 3 bytes each
  if (need > inputCap) {
    inputPtr = M._cfjs_input(need);
    if (!inputPtr) throw makeError("MemoryError", "out of memory");
    inputCap = M._cfjs_input_cap();
    inputView = null;
  }
  if (!inputView || inputView.byteLength === 0 || inputView.buffer !== M.HEAPU8.buffer) {
    inputView = M.HEAPU8.subarray(inputPtr, inputPtr + inputCap);
  }
  const { written } = encoder.encodeInto(s, inputView);
  inputView[written] = 0;
  return written;
}

/** A malloc'd NUL-terminated copy of a string or bytes (free with _cfjs_free). */
function allocString(s) {
  const bytes = typeof s === "string" ? encoder.encode(s) : s;
  const p = M._cfjs_malloc(bytes.length + 1);
  if (!p) throw makeError("MemoryError", "out of memory");
  heap().set(bytes, p);
  heap()[p + bytes.length] = 0;
  return p;
}

/** Runs fn with malloc'd copies of the given strings (null stays 0), then frees them. */
function withStrings(strings, fn) {
  const ptrs = [];
  try {
    for (const s of strings) ptrs.push(s == null ? 0 : allocString(s));
    return fn(...ptrs);
  } finally {
    for (const p of ptrs) if (p) M._cfjs_free(p);
  }
}

// ---- errors: one class per kind, named as the Python exception ----

const ERROR_BRAND = Symbol("chatfmt.error");

/** Base of every chatfmt error. `kind` (= `name`) is the Python exception
 * class transformers would raise; lineno/column locate template errors. */
export class ChatfmtError extends Error {
  constructor(message = "", { lineno = null, column = null, offset = null, template = null } = {}) {
    super(message);
    this.lineno = lineno;
    this.column = column;
    this.offset = offset;
    this.template = template;
  }
  get kind() {
    return this.name;
  }
  // chatfmt.TypeError also extends the global TypeError: instanceof ChatfmtError
  // is decided by the brand, as Python's multiple inheritance would.
  static [Symbol.hasInstance](x) {
    if (this === ChatfmtError) return !!x && x[ERROR_BRAND] === true;
    return Function.prototype[Symbol.hasInstance].call(this, x);
  }
}
Object.defineProperty(ChatfmtError.prototype, ERROR_BRAND, { value: true });
Object.defineProperty(ChatfmtError.prototype, "name", { value: "ChatfmtError", writable: true });

function defineError(name, Base) {
  const cls = { [name]: class extends Base {} }[name];
  Object.defineProperty(cls.prototype, "name", { value: name, writable: true });
  if (!(ERROR_BRAND in cls.prototype)) Object.defineProperty(cls.prototype, ERROR_BRAND, { value: true });
  return cls;
}

/** A Python-like error that is also the JavaScript builtin of that name
 * where one exists (chatfmt's TypeError is a TypeError). */
function definePythonLike(name, JsBase) {
  if (!JsBase) return defineError(name, ChatfmtError);
  const cls = {
    [name]: class extends JsBase {
      constructor(message = "", { lineno = null, column = null, offset = null, template = null } = {}) {
        super(message);
        this.lineno = lineno;
        this.column = column;
        this.offset = offset;
        this.template = template;
      }
      get kind() {
        return this.name;
      }
    },
  }[name];
  Object.defineProperty(cls.prototype, "name", { value: name, writable: true });
  Object.defineProperty(cls.prototype, ERROR_BRAND, { value: true });
  return cls;
}

// Jinja2's hierarchy, as python/chatfmt/errors.py.
export const TemplateError = defineError("TemplateError", ChatfmtError);
export const TemplateSyntaxError = defineError("TemplateSyntaxError", TemplateError);
export const TemplateAssertionError = defineError("TemplateAssertionError", TemplateSyntaxError);
export const TemplateRuntimeError = defineError("TemplateRuntimeError", TemplateError);
export const FilterArgumentError = defineError("FilterArgumentError", TemplateRuntimeError);
export const UndefinedError = defineError("UndefinedError", TemplateRuntimeError);
export const SecurityError = defineError("SecurityError", TemplateRuntimeError);
export const LimitError = defineError("LimitError", ChatfmtError);

/** The Python-like kinds (TypeError, KeyError, ...), under their Python names. */
export const errors = {
  ChatfmtError, TemplateError, TemplateSyntaxError, TemplateAssertionError, TemplateRuntimeError,
  FilterArgumentError, UndefinedError, SecurityError, LimitError,
  TypeError: definePythonLike("TypeError", globalThis.TypeError),
  ValueError: definePythonLike("ValueError"),
  OverflowError: definePythonLike("OverflowError", globalThis.RangeError),
  ZeroDivisionError: definePythonLike("ZeroDivisionError", globalThis.RangeError),
  IndexError: definePythonLike("IndexError", globalThis.RangeError),
  KeyError: definePythonLike("KeyError"),
  AttributeError: definePythonLike("AttributeError"),
  RuntimeError: definePythonLike("RuntimeError"),
  MemoryError: definePythonLike("MemoryError", globalThis.RangeError),
  IOError: definePythonLike("IOError"),
  JSONDecodeError: definePythonLike("JSONDecodeError", globalThis.SyntaxError),
  UnicodeDecodeError: definePythonLike("UnicodeDecodeError"),
  FormatError: definePythonLike("FormatError"),
  UsageError: definePythonLike("UsageError"),
  AssertionError: definePythonLike("AssertionError"),
};
export const {
  ValueError, KeyError, AttributeError, OverflowError, ZeroDivisionError, IndexError, RuntimeError,
  JSONDecodeError, UnicodeDecodeError, FormatError, UsageError,
} = errors;

function makeError(kind, message, fields) {
  const cls = errors[kind] || ChatfmtError;
  return new cls(message, fields);
}

/** The library's last error as an exception. */
function lastError(template = null) {
  const kind = readCString(M._cfjs_error_kind_name()) || "ChatfmtError";
  const message = readCString(M._cfjs_error_message()) || "";
  const line = M._cfjs_error_line();
  const column = M._cfjs_error_column();
  return makeError(kind, message, {
    lineno: line || null,
    column: column || null,
    offset: M._cfjs_error_offset() || null,
    template,
  });
}

// ---- memory: dispose() or, failing that, the garbage collector ----

const finalizer =
  typeof FinalizationRegistry === "function" ? new FinalizationRegistry((release) => release()) : null;

class Owned {
  #release;
  constructor(release) {
    this.#release = release;
    if (finalizer) finalizer.register(this, release, this);
  }
  get disposed() {
    return this.#release === null;
  }
  /** Frees what this object holds in the module's heap (idempotent). */
  dispose() {
    if (!this.#release) return;
    const release = this.#release;
    this.#release = null;
    if (finalizer) finalizer.unregister(this);
    release();
  }
  [Symbol.dispose ?? Symbol.for("Symbol.dispose")]() {
    this.dispose();
  }
  checkAlive() {
    if (!this.#release) throw makeError("UsageError", `this ${this.constructor.name} was disposed`);
  }
}

// ---- limits ----

const LIMIT_NAMES = [
  "max_steps", "max_recursion", "max_parse_depth", "max_output", "max_string", "max_items", "max_memory",
  "max_range", "max_json_depth", "max_json_bytes",
];

/** A malloc'd cf_limits from {max_steps: ..., ...} (camelCase accepted), or 0. */
function makeLimits(limits) {
  if (!limits) return 0;
  const p = M._cfjs_limits_new();
  if (!p) throw makeError("MemoryError", "out of memory");
  for (const [key, value] of Object.entries(limits)) {
    const name = key.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
    if (!LIMIT_NAMES.includes(name) || !(Number(value) >= 0)) {
      M._cfjs_limits_free(p);
      throw makeError("UsageError", `unknown limit ${key} (${LIMIT_NAMES.join(", ")})`);
    }
    withStrings([name], (n) => M._cfjs_limits_set(p, n, Number(value)));
  }
  return p;
}

// ---- built-in templates ----

let builtinList = null;
/** Names of the built-in templates (`chatfmt list-templates`). */
export function builtinNames() {
  if (!builtinList) {
    builtinList = [];
    for (let i = 0; ; i++) {
      const p = M._cfjs_builtin_name(i);
      if (!p) break;
      builtinList.push(readCString(p));
    }
  }
  return builtinList.slice();
}

function isBuiltinName(s) {
  return typeof s === "string" && s.length > 0 && !s.includes("{") && !s.includes("\n") &&
    builtinNames().includes(s);
}

// ---- template sources (files pass through the module's in-memory file system) ----

let uploadCounter = 0;

/** Loads what cf_source_load would load from a file holding `bytes` (a
 * template, tokenizer_config.json or GGUF: told apart by content), or a
 * built-in by name. Returns a source pointer (free with _cfjs_source_free). */
function loadSource(what, { templateName = null, hasTools = false, repair = true, limitsPtr = 0, name = null } = {}) {
  let path = null;
  let source = 0;
  try {
    if (typeof what === "string" && isBuiltinName(what)) {
      path = null;
      source = withStrings([what, templateName], (w, tn) =>
        M._cfjs_source_load(w, tn, hasTools ? 1 : 0, repair ? 0 : 1, limitsPtr, 0, 0, 0));
    } else {
      const bytes = typeof what === "string" ? encoder.encode(what) : what;
      path = `/chatfmt-upload-${++uploadCounter}`;
      M.FS.writeFile(path, bytes);
      source = withStrings([path, templateName], (w, tn) =>
        M._cfjs_source_load(w, tn, hasTools ? 1 : 0, repair ? 0 : 1, limitsPtr, 0, 0, 0));
    }
  } finally {
    if (path) M.FS.unlink(path);
  }
  if (!source) {
    const e = lastError();
    // the in-memory file's path means nothing to the caller: name what they gave
    if (path) e.message = e.message.split(path).join(name || "<template source>");
    throw e;
  }
  return source;
}

function sourceText(src) {
  return readBytes(M._cfjs_source_text(src), M._cfjs_source_len(src));
}

function sourceBytes(src) {
  const p = M._cfjs_source_text(src);
  return heap().slice(p, p + M._cfjs_source_len(src));
}

function toBytes(x) {
  if (x instanceof Uint8Array) return x;
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  return null;
}

/** One compiled template and the special tokens (a cf_context) that came with it. */
function compileText(text, limitsPtr, name) {
  const bytes = typeof text === "string" ? encoder.encode(text) : text;
  const src = allocString(bytes);
  try {
    const t = withStrings([name], (n) => M._cfjs_compile(src, bytes.length, limitsPtr, n));
    if (!t) throw lastError(name);
    return t;
  } finally {
    M._cfjs_free(src);
  }
}

// ---- templates ----

/**
 * A compiled chat template. `new Template(text).render(vars)` renders with
 * exactly those variables (as @huggingface/jinja's Template); chat-mode
 * calls (applyChatTemplate, renderWithSpans) follow transformers.
 *
 * `template`: template text, a built-in name, or the bytes of a template
 * file, tokenizer_config.json or GGUF (see loadTemplate).
 * Options: templateName (a named template of a tokenizer_config/GGUF),
 * repair (undo web-copy damage; default: on for loaded sources, off for text),
 * limits ({max_steps, max_output, ...}), now ("YYYY-MM-DDTHH:MM:SS" pins
 * strftime_now), polyfill (adapt requests to what the template can render).
 */
export class Template extends Owned {
  #plain;        // cf_template*
  #withTools;    // cf_template* for requests with tools (tokenizer_config "tool_use"), or 0
  #toolsError;   // the tool_use template's compile error (raised by renders with tools)
  #toolsSource;  // the tool_use template's text
  #sources;      // cf_source* kept for their tokens
  #tokens;       // cf_context* (special tokens) or 0
  #limits;
  #chatOptions;  // cf_render_options* with the tokens as defaults
  #rawOptions;   // cf_render_options* without them

  constructor(template, { templateName = null, repair, limits = null, now = null, polyfill = false, name = null } = {}) {
    const held = { plain: 0, withTools: 0, sources: [], limits: 0, chat: 0, raw: 0 };
    super(() => {
      if (held.plain) M._cfjs_template_free(held.plain);
      if (held.withTools) M._cfjs_template_free(held.withTools);
      for (const s of held.sources) M._cfjs_source_free(s);
      if (held.chat) M._cfjs_options_free(held.chat);
      if (held.raw) M._cfjs_options_free(held.raw);
      if (held.limits) M._cfjs_limits_free(held.limits);
    });
    try {
      held.limits = makeLimits(limits);
      this.name = name;
      this.kind = "text";
      this.warnings = [];
      const bytes = toBytes(template);
      if (bytes || isBuiltinName(template)) {
        this.#load(bytes || template, templateName, repair !== false, held);
      } else if (typeof template === "string") {
        if (repair) {
          const b = encoder.encode(template);
          const src = withStrings([b], (p) => M._cfjs_source_load(0, 0, 0, 0, held.limits, 1, p, b.length));
          if (!src) throw lastError(name);
          held.sources.push(src);
          this.#addWarnings(src);
          this.source = sourceText(src);
          held.plain = compileText(sourceBytes(src), held.limits, name);
        } else {
          this.source = template;
          held.plain = compileText(template, held.limits, name);
        }
      } else {
        throw makeError("UsageError", `template must be text, bytes or a built-in name, not ${typeof template}`);
      }
      const tokens = held.sources.length ? M._cfjs_source_tokens(held.sources[0]) : 0;
      held.chat = withStrings([now], (n) => M._cfjs_options_new(held.limits, n, tokens, polyfill ? 1 : 0));
      held.raw = withStrings([now], (n) => M._cfjs_options_new(held.limits, n, 0, 0));
      if (!held.chat || !held.raw) throw makeError("MemoryError", "out of memory");
      this.#tokens = tokens;
    } catch (e) {
      this.dispose();
      throw e;
    }
    this.#plain = held.plain;
    this.#withTools = held.withTools;
    this.#sources = held.sources;
    this.#limits = held.limits;
    this.#chatOptions = held.chat;
    this.#rawOptions = held.raw;
  }

  #addWarnings(src) {
    const w = readCString(M._cfjs_source_warnings(src));
    if (w) this.warnings.push(...w.split("\n").filter(Boolean));
  }

  #load(what, templateName, repair, held) {
    const src = loadSource(what, { templateName, repair, limitsPtr: held.limits, name: this.name });
    held.sources.push(src);
    this.kind = readCString(M._cfjs_source_kind(src));
    this.name = readCString(M._cfjs_source_name(src)) || this.name;
    this.#addWarnings(src);
    this.source = sourceText(src);
    held.plain = compileText(sourceBytes(src), held.limits, this.name);
    if (templateName) return;
    let tsrc = 0;
    try { // a different template for tools (tokenizer_config "tool_use")?
      tsrc = loadSource(what, { hasTools: true, repair, limitsPtr: held.limits, name: this.name });
    } catch {
      return;
    }
    if (sourceText(tsrc) === this.source) {
      M._cfjs_source_free(tsrc);
      return;
    }
    held.sources.push(tsrc);
    this.#toolsSource = sourceText(tsrc);
    try {
      held.withTools = compileText(sourceBytes(tsrc), held.limits, this.name);
    } catch (e) { // transformers compiles it only when tools come
      this.#toolsError = e;
    }
  }

  /** The text of the template used for a request with (or without) tools. */
  sourceFor(tools) {
    this.checkAlive();
    return tools != null && this.#withTools ? this.#toolsSource : this.source;
  }

  #compiledFor(tools) {
    this.checkAlive();
    if (tools == null) return this.#plain;
    if (this.#toolsError) throw this.#toolsError;
    return this.#withTools || this.#plain;
  }

  /** Renders with exactly these variables (no chat-mode defaults, no special
   * tokens), as @huggingface/jinja's Template.render and jinja2's do. */
  render(variables = {}) {
    return this.#run(this.#compiledFor(null), this.#rawOptions, 0, variables);
  }

  /** transformers' apply_chat_template(conversation, options): the prompt text by default;
   * a batch of conversations gives an array; transformers' tokenize, return_dict,
   * return_assistant_tokens_mask, padding, truncation, max_length, tokenizer_kwargs and
   * tokenizer options as tokenize.js says (none of them reaches the template). */
  applyChatTemplate(messages, options = {}) {
    const { own, rest } = splitOptions(options);
    if (!own && !isBatch(messages)) return this.#text(messages, rest);
    return applyWithOptions(own || {}, messages, rest,
      (m, spans) => (spans ? this.renderWithSpans(m, rest) : { text: this.#text(m, rest) }), makeError);
  }

  #text(messages, options) {
    const vars = chatVariables(messages, options);
    return this.#run(this.#compiledFor(vars.tools), this.#chatOptions, 1, vars);
  }

  /** Like applyChatTemplate, plus the {% generation %} spans as [start, end)
   * code point offsets into the text (transformers' assistant masks). */
  renderWithSpans(messages, options = {}) {
    const vars = chatVariables(messages, options);
    const t = this.#compiledFor(vars.tools);
    const n = writeInput(encodeVariables(vars));
    if (!M._cfjs_render_spans(t, this.#chatOptions, 1, inputPtr, n)) throw lastError(this.name);
    const text = readBytes(M._cfjs_result_text(), M._cfjs_result_len());
    const spans = [];
    const count = M._cfjs_result_nspans();
    for (let i = 0; i < count; i++) spans.push([M._cfjs_result_span(i, 0), M._cfjs_result_span(i, 1)]);
    return { text, spans };
  }

  #run(t, options, chat, vars) {
    const n = writeInput(encodeVariables(vars));
    const len = M._cfjs_render(t, options, chat, inputPtr, n);
    if (len < 0) throw lastError(this.name);
    return readBytes(M._cfjs_output(), len);
  }

  /** Renders variables given as JSON text (an object), read exactly as the
   * library reads JSON: integers beyond 2^53 and 1.0 vs 1 survive, which a
   * JavaScript object cannot carry. chat: as applyChatTemplate (the text
   * then holds `messages` and the other keyword arguments), else as render. */
  renderJSON(json, { chat = false } = {}) {
    if (typeof json !== "string") throw makeError("UsageError", "renderJSON takes JSON text");
    // (the text is parsed here only to pick a tokenizer_config's tool_use template)
    const t = chat && (this.#withTools || this.#toolsError)
      ? this.#compiledFor(JSON.parse(json)?.tools) : this.#compiledFor(null);
    const n = writeInput(json);
    const len = M._cfjs_render(t, chat ? this.#chatOptions : this.#rawOptions, chat ? 1 : 0, inputPtr, n);
    if (len < 0) throw lastError(this.name);
    return readBytes(M._cfjs_output(), len);
  }

  /** What the template supports, found by probing renders (chatfmt.h: cf_caps_json). */
  caps() {
    const p = M._cfjs_caps(this.#compiledFor(null), this.#tokens);
    if (!p) throw lastError(this.name);
    try {
      return JSON.parse(readCString(p));
    } finally {
      M._cfjs_free(p);
    }
  }

  /** The reply format this template's model writes (`chatfmt formats` lists them). */
  get replyFormat() {
    return this.replyFormatFor(null);
  }

  /** The reply format of a request with (or without) tools: found by probing
   * renders, as `chatfmt parse --template` finds it; a template that does not
   * compile: its text's signature. */
  replyFormatFor(tools) {
    this.checkAlive();
    let t = 0;
    try {
      t = this.#compiledFor(tools);
    } catch {
      t = 0;
    }
    if (!t) return detectFormat(this.sourceFor(tools));
    return readCString(M._cfjs_reply_format_of(t, this.#tokens || 0));
  }

  toString() {
    return `<chatfmt.Template ${this.name || this.kind} (${this.source.length} chars)>`;
  }
}

/** The chat-mode variables, as transformers builds them. */
function chatVariables(messages, options) {
  const { tools = null, documents = null, add_generation_prompt = false, continue_final_message = false,
    ...kwargs } = options || {};
  if (!Array.isArray(messages)) throw makeError("UsageError", "messages must be an array of messages");
  return {
    ...kwargs,
    messages,
    tools: tools ?? null,
    documents: documents ?? null,
    add_generation_prompt: !!add_generation_prompt,
    continue_final_message: continue_final_message ?? false,
  };
}

function encodeVariables(vars) {
  try {
    return JSON.stringify(vars);
  } catch (e) { // BigInt, a cycle: not JSON data
    throw makeError("TypeError", `the variables are not JSON data: ${e.message}`);
  }
}

// ---- functions ----

/** Loads a template source: the bytes (Uint8Array, ArrayBuffer) or text of a
 * template, a tokenizer_config.json or a GGUF file (told apart by content,
 * as the CLI does), or a built-in name. Web copies are repaired unless
 * repair is false. Returns a Template (with the source's special tokens). */
export function loadTemplate(what, options = {}) {
  if (typeof what !== "string" && !toBytes(what)) {
    throw makeError("UsageError", "loadTemplate takes bytes or text");
  }
  if (typeof what === "string" && !isBuiltinName(what)) what = encoder.encode(what);
  return new Template(what, { repair: true, ...options });
}

// Template texts seen by applyChatTemplate (bounded: cleared when full).
const byText = new Map();
const BY_TEXT_MAX = 64;

function templateFor(template) {
  if (template instanceof Template) return template;
  if (typeof template !== "string") {
    throw makeError("UsageError", "template must be a Template, template text or a built-in name");
  }
  let t = byText.get(template);
  if (t && !t.disposed) return t;
  if (byText.size >= BY_TEXT_MAX) {
    for (const old of byText.values()) old.dispose();
    byText.clear();
  }
  t = new Template(template);
  byText.set(template, t);
  return t;
}

/**
 * transformers' tokenizer.apply_chat_template(messages, tokenize=False, ...)
 * without transformers: the prompt text. `template`: a Template, template
 * text or a built-in name (compiled once and cached). `messages`: a
 * conversation, or an array of conversations (returns an array of texts).
 * Options: tools, documents, add_generation_prompt, continue_final_message,
 * transformers' tokenize (with `tokenizer`), return_dict,
 * return_assistant_tokens_mask, padding, truncation, max_length and
 * tokenizer_kwargs (tokenize.js), and any other template variable
 * (enable_thinking, bos_token, ...).
 * Errors throw the class named as the Python exception (TemplateError,
 * UndefinedError, ...).
 */
export function applyChatTemplate(template, messages, options = {}) {
  return templateFor(template).applyChatTemplate(messages, options);
}

/** What a template supports (supports_tools, supports_reasoning, thinking_switch,
 * reply_format, stop_strings, ...), found by probing renders. */
export function caps(template) {
  return templateFor(template).caps();
}

function detectFormat(text) {
  const bytes = encoder.encode(text);
  const p = allocString(bytes);
  try {
    return readCString(M._cfjs_reply_format_detect(p, bytes.length));
  } finally {
    M._cfjs_free(p);
  }
}

// ---- replies ----

const TAIL_BYTES = 256;

/** The end of the prompt a reply continues: the template's generation prompt
 * for one user turn (as `chatfmt parse --template` renders it), or null when
 * it cannot render. */
function promptTailOf(t, tools, variables) {
  let prompt;
  try {
    prompt = t.applyChatTemplate([{ role: "user", content: "x" }],
      { ...variables, tools, add_generation_prompt: true });
  } catch {
    return null; // cannot render: the reply is read as starting outside reasoning
  }
  const bytes = encoder.encode(prompt);
  return bytes.subarray(Math.max(0, bytes.length - TAIL_BYTES));
}

function tailBytes(prompt) {
  const bytes = typeof prompt === "string" ? encoder.encode(prompt) : toBytes(prompt);
  return bytes.subarray(Math.max(0, bytes.length - TAIL_BYTES));
}

/** Does a request's response_format ({type: "json_object" | "json_schema" | "text"}, or "json" / "text") ask for JSON? */
function jsonResponseOf(responseFormat) {
  const kind = responseFormat && typeof responseFormat === "object" ? responseFormat.type : responseFormat;
  if (kind == null || kind === "text") return false;
  if (kind === "json" || kind === "json_object" || kind === "json_schema") return true;
  throw makeError("UsageError", `unknown responseFormat ${JSON.stringify(responseFormat)} (text, json, json_object, json_schema)`);
}

/** cf_reply_options* for parseReply / ReplyStream (free with _cfjs_reply_options_free). */
function replyOptions(options = {}) {
  const { template = null, tools = null, format = null, prompt = null, reasoningOpen = false,
    limits = null, variables = {}, responseFormat = null } = options;
  const jsonResponse = jsonResponseOf(responseFormat);
  let fmt = format;
  let tail = prompt != null ? tailBytes(prompt) : null;
  if (template != null) {
    const t = typeof template === "string" && !isBuiltinName(template) && !template.includes("{")
      ? null : templateFor(template);
    if (!t) throw makeError("UsageError", `unknown built-in template '${template}'`);
    if (!fmt) fmt = t.replyFormatFor(tools);
    if (prompt == null) tail = promptTailOf(t, tools, variables);
  }
  const limitsPtr = makeLimits(limits);
  const toolsJson = tools == null ? null : JSON.stringify(tools);
  const opt = withStrings([fmt || "plain", toolsJson, tail && tail.length ? tail : null],
    (f, tj, tl) => M._cfjs_reply_options_new(f, tj, tl, reasoningOpen ? 1 : 0, limitsPtr, jsonResponse ? 1 : 0));
  if (!opt) {
    if (limitsPtr) M._cfjs_limits_free(limitsPtr);
    throw lastError();
  }
  return { opt, limitsPtr };
}

function freeReplyOptions({ opt, limitsPtr }) {
  M._cfjs_reply_options_free(opt);
  if (limitsPtr) M._cfjs_limits_free(limitsPtr);
}

/**
 * Parses a whole model reply into the OpenAI assistant message
 * {role, content, reasoning_content, tool_calls?, citations?}.
 * Options: template (a Template, text or built-in name: picks the format and
 * tells whether the prompt left reasoning open), tools (types GLM argument
 * values), format ("glm45", "hermes", "command-a", "plain": overrides the
 * template's), prompt (the rendered prompt the reply continues),
 * reasoningOpen, variables (for the probe render, e.g. {enable_thinking: false}),
 * responseFormat (the request's, e.g. {type: "json_object"}, or "json": the
 * content is the JSON answer, a ```json fence around it dropped).
 */
export function parseReply(text, options = {}) {
  const ro = replyOptions(options);
  try {
    const bytes = typeof text === "string" ? encoder.encode(text) : toBytes(text);
    const p = allocString(bytes);
    let out = 0;
    try {
      out = M._cfjs_parse_reply(p, bytes.length, ro.opt);
    } finally {
      M._cfjs_free(p);
    }
    if (!out) throw lastError();
    try {
      return JSON.parse(readBytes(out, M._cfjs_reply_len()));
    } finally {
      M._cfjs_free(out);
    }
  } finally {
    freeReplyOptions(ro);
  }
}

/**
 * A reply parsed as it streams: feed(chunk) and finish() return the OpenAI
 * chat.completion.chunk `delta` objects produced so far ({content},
 * {reasoning_content}, {tool_calls: [...]}, {citations}). Chunks are
 * strings or UTF-8 bytes, cut anywhere. Options as parseReply.
 */
export class ReplyStream extends Owned {
  #stream;
  #finished = false;
  constructor(options = {}) {
    const held = { stream: 0, ro: null };
    super(() => {
      if (held.stream) M._cfjs_stream_free(held.stream);
      if (held.ro) freeReplyOptions(held.ro);
    });
    held.ro = replyOptions(options);
    held.stream = M._cfjs_stream_new(held.ro.opt);
    if (!held.stream) {
      const e = lastError();
      this.dispose();
      throw e;
    }
    this.#stream = held.stream;
  }

  #step(chunk, finish) {
    this.checkAlive();
    if (this.#finished) throw makeError("UsageError", "the stream was finished");
    let out;
    if (finish) {
      this.#finished = true;
      out = M._cfjs_stream_step(this.#stream, 0, 0, 1);
    } else {
      const bytes = typeof chunk === "string" ? encoder.encode(chunk) : toBytes(chunk);
      if (!bytes) throw makeError("UsageError", "feed takes a string or bytes");
      const p = bytes.length ? allocString(bytes) : 0;
      try {
        out = M._cfjs_stream_step(this.#stream, p, bytes.length, 0);
      } finally {
        if (p) M._cfjs_free(p);
      }
    }
    if (!out) throw lastError();
    const lines = readBytes(out, M._cfjs_reply_len());
    return lines ? lines.split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
  }

  /** Feeds the next piece of the reply; returns the deltas it produced. */
  feed(chunk) {
    return this.#step(chunk, false);
  }

  /** Ends the reply (flushes what was held back); returns the last deltas. */
  finish() {
    return this.#step(null, true);
  }
}

/** Bytes of the module's heap in use (what a leak would grow). */
export function heapInUse() {
  return M._cfjs_heap_in_use();
}

export const version = "0.1.0";
