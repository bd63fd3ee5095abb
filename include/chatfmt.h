/*
 * chatfmt — render LLM chat templates byte-for-byte like Hugging Face
 * transformers' apply_chat_template, and parse model replies back into
 * OpenAI-style assistant messages.
 *
 * The whole public API lives in this header.
 *
 * Model of use:
 *   cf_template *t = cf_compile(src, len, NULL, &err);   // once
 *   cf_context  *c = cf_context_from_json(json, n, &err);  // per request
 *   cf_result r; cf_render_chat(t, c, NULL, &r, &err);     // many times, any thread
 *   ... r.text, r.len ...
 *   cf_result_free(&r); cf_context_free(c); cf_template_free(t);
 *
 * Thread safety: a compiled cf_template and a built cf_context are immutable;
 * any number of threads may render them at once. Each render owns its memory.
 * Memory: a render that outgrows its first few KiB takes 64 KiB blocks; when
 * it ends, up to 2 MiB of them stay with the thread for its next render (so
 * their pages are not faulted in anew each time) and are freed when the
 * thread exits. Likewise the thread keeps the last output buffer that
 * cf_result_free released (up to 1 MiB) and the last context block that
 * cf_context_free released (16 KiB), for its next render and context.
 *
 * Errors are values: every fallible call fills a cf_error (kind, message,
 * line, column). The library never prints, never exits and checks every
 * allocation.
 */
#ifndef CHATFMT_H
#define CHATFMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CHATFMT_VERSION "0.1.0"

#if defined(CF_BUILD_SHARED) && defined(__GNUC__)
#define CF_API __attribute__((visibility("default")))
#else
#define CF_API
#endif

/* ---- errors ------------------------------------------------------------ */

/* Error kinds mirror the Python exception class a Jinja2/transformers
 * render would raise, so callers can compare with the reference. */
typedef enum cf_error_kind {
    CF_OK = 0,
    CF_ERR_TEMPLATE_SYNTAX,   /* TemplateSyntaxError */
    CF_ERR_UNDEFINED,         /* UndefinedError */
    CF_ERR_TEMPLATE,          /* TemplateError (raise_exception) */
    CF_ERR_TYPE,              /* TypeError */
    CF_ERR_VALUE,             /* ValueError */
    CF_ERR_SECURITY,          /* SecurityError */
    CF_ERR_OVERFLOW,          /* OverflowError */
    CF_ERR_ZERO_DIVISION,     /* ZeroDivisionError */
    CF_ERR_INDEX,             /* IndexError */
    CF_ERR_KEY,               /* KeyError */
    CF_ERR_ATTRIBUTE,         /* AttributeError */
    CF_ERR_RUNTIME,           /* RuntimeError */
    CF_ERR_JSON,              /* JSONDecodeError: malformed JSON input */
    CF_ERR_LIMIT,             /* LimitError: a chatfmt safety limit was hit */
    CF_ERR_MEMORY,            /* MemoryError: allocation failed */
    CF_ERR_IO,                /* IOError: file could not be read */
    CF_ERR_UNICODE,           /* UnicodeDecodeError: invalid UTF-8 input */
    CF_ERR_FORMAT,            /* FormatError: unreadable GGUF/config/template source */
    CF_ERR_USAGE,             /* UsageError: bad API/CLI arguments */
    CF_ERR_TEMPLATE_RUNTIME,  /* TemplateRuntimeError */
    CF_ERR_TEMPLATE_ASSERTION,/* TemplateAssertionError (e.g. unknown filter) */
    CF_ERR_FILTER_ARGUMENT,   /* FilterArgumentError (a TemplateRuntimeError: bad filter arguments) */
    CF_ERR_ASSERTION          /* AssertionError (truncate's argument checks) */
} cf_error_kind;

typedef struct cf_error {
    cf_error_kind kind;
    int line;            /* 1-based template line, 0 when not applicable */
    int column;          /* 1-based column, 0 when not applicable */
    size_t offset;       /* byte offset (JSON / UTF-8 errors), else 0 */
    char message[1024];  /* human readable, as Python would print str(e) */
} cf_error;

/* Python exception class name for a kind, e.g. "UndefinedError". */
CF_API const char *cf_error_kind_name(cf_error_kind kind);

/* ---- limits ------------------------------------------------------------ */

/* Bounds on the work one render (or one JSON parse) may do. Every field has
 * a safe default from cf_limits_default(); 0 in any field means "default".
 * max_recursion, max_parse_depth and max_json_depth also bound recursion on
 * the C stack: at their defaults a render, a compile and a JSON parse each
 * fit in a 1 MiB thread stack. Raising them far beyond the defaults needs a
 * correspondingly larger stack (a render also stops itself after 256 KiB +
 * 8 KiB per max_recursion level of stack). */
typedef struct cf_limits {
    uint64_t max_steps;        /* interpreter steps per render (default 10M) */
    uint32_t max_recursion;    /* macro / loop() / call nesting (default 500) */
    uint32_t max_parse_depth;  /* expression/statement nesting (default 500) */
    size_t max_output;         /* bytes of rendered output (default 64 MiB) */
    size_t max_string;         /* bytes of any single string (default 16 MiB) */
    size_t max_items;          /* items of any single list/dict (default 4M) */
    size_t max_memory;         /* bytes of working memory per render (default 256 MiB) */
    uint32_t max_range;        /* range() length (default 100000, Jinja2 sandbox) */
    uint32_t max_json_depth;   /* JSON nesting (default 512) */
    size_t max_json_bytes;     /* JSON document size (default 256 MiB) */
} cf_limits;

CF_API void cf_limits_default(cf_limits *out);

/* ---- templates --------------------------------------------------------- */

typedef struct cf_template cf_template;

typedef struct cf_compile_options {
    const cf_limits *limits;   /* NULL: defaults */
    const char *name;          /* file name used in error messages (may be NULL) */
} cf_compile_options;

/* Compile a template (UTF-8). Returns NULL and fills err on failure
 * (TemplateSyntaxError with line:column, UnicodeDecodeError with offset). */
CF_API cf_template *cf_compile(const char *src, size_t len, const cf_compile_options *opt,
                        cf_error *err);
CF_API void cf_template_free(cf_template *t);
/* The (possibly repaired) source text the template was compiled from. */
CF_API const char *cf_template_source(const cf_template *t, size_t *len);

/* ---- contexts (the variables of a render) ------------------------------ */

typedef struct cf_context cf_context;

CF_API cf_context *cf_context_new(void);
/* A JSON object whose keys become variables. NULL + err on bad JSON.
 * The context keeps a copy of a text up to 1 MiB: a list or dict spelled
 * there exactly as json.dumps(ensure_ascii=False) writes it (Python's
 * ", " and ": ", no indent) is copied from it by `tojson` with those
 * options, rather than written again. */
CF_API cf_context *cf_context_from_json(const char *json, size_t len, cf_error *err);
/* Set one variable from JSON text (any JSON value). false + err on failure. */
CF_API bool cf_context_set_json(cf_context *c, const char *name, const char *json, size_t len,
                         cf_error *err);
/* Both with explicit limits (NULL: defaults): max_json_depth and
 * max_json_bytes bound the document, max_string, max_items and max_steps
 * the values read from it (the CLI's --max-json-depth etc.). */
CF_API cf_context *cf_context_from_json_limits(const char *json, size_t len, const cf_limits *limits,
                                               cf_error *err);
CF_API bool cf_context_set_json_limits(cf_context *c, const char *name, const char *json, size_t len,
                                       const cf_limits *limits, cf_error *err);
CF_API bool cf_context_set_string(cf_context *c, const char *name, const char *s, size_t len);
CF_API bool cf_context_set_bool(cf_context *c, const char *name, bool v);
CF_API bool cf_context_set_int(cf_context *c, const char *name, int64_t v);
CF_API bool cf_context_has(const cf_context *c, const char *name);
/* Present and not null (transformers' `tools is not None`). */
CF_API bool cf_context_has_value(const cf_context *c, const char *name);
CF_API void cf_context_remove(cf_context *c, const char *name);
CF_API void cf_context_free(cf_context *c);
/* The variables as one JSON object, spelled as json.dumps(ensure_ascii=False)
 * (a tuple as a list): cf_context_from_json of it gives the same variables.
 * malloc'd and NUL-terminated (release with free()); its length in *len
 * (may be NULL). NULL + err when memory runs out. */
CF_API char *cf_context_to_json(const cf_context *c, size_t *len, cf_error *err);

/* ---- rendering --------------------------------------------------------- */

typedef struct cf_span { size_t start, end; } cf_span;  /* character offsets */

typedef struct cf_result {
    char *text;          /* NUL-terminated UTF-8, owned: cf_result_free */
    size_t len;          /* bytes */
    cf_span *spans;      /* {% generation %} spans, in code points */
    size_t nspans;
    size_t nchars;       /* code points in text when the render knows them without
                            reading text back, else 0. nchars == len: every byte is
                            ASCII (most prompts: known from the template's text and
                            the variables' strings as they were read), so a caller
                            converting text (to a Python str, to UTF-16) may skip
                            scanning it. Counted whenever there are spans. */
} cf_result;

CF_API void cf_result_free(cf_result *r);

typedef struct cf_render_options {
    const cf_limits *limits;   /* NULL: the template's limits */
    const char *now;           /* "YYYY-MM-DDTHH:MM:SS" pins strftime_now; NULL:
                                  $CHATFMT_NOW if set, else local time */
    const cf_context *defaults; /* variables used where ctx has none, e.g. the
                                  special tokens of a tokenizer_config.json
                                  (caller keys override them, as transformers) */
    bool polyfill;             /* chat mode, opt-in: make the request fit what the
                                  template can render (src/chat/polyfill.c): string tool
                                  `arguments` parsed into objects where it requires
                                  objects; typed text parts joined into a string where
                                  it renders only strings (and the reverse); a leading
                                  system message merged into the first user turn where
                                  it has no system role. The template is probed once
                                  (at its first polyfilled render, with that render's
                                  defaults) and the answer cached in it. false:
                                  exactly transformers. */
} cf_render_options;

/* Raw mode: only the context's variables. Returns false + err on failure. */
CF_API bool cf_render(const cf_template *t, const cf_context *ctx, const cf_render_options *opt,
               cf_result *out, cf_error *err);

/* Chat mode, as transformers' apply_chat_template: the context holds
 * `messages` (required), optional `tools`, `documents` (always defined, None
 * when absent), `add_generation_prompt`, `continue_final_message` (bool or
 * field name) and any other variables (special tokens, enable_thinking, ...). */
CF_API bool cf_render_chat(const cf_template *t, const cf_context *ctx,
                    const cf_render_options *opt, cf_result *out, cf_error *err);

/* ---- batch protocol ----------------------------------------------------
 * The JSON Lines protocol of the reference renderer (hf_render.py --batch):
 * each input line {"template": PATH|null, "template_text": STR|null,
 * "context": {...}, "raw": bool} gives one output line
 * {"ok": true, "output": STR} or {"ok": false, "error_type": KIND, "error": MSG}.
 * A cf_batch caches compiled templates across lines (by text and by path). */
typedef struct cf_batch cf_batch;
CF_API cf_batch *cf_batch_new(const cf_limits *limits);
/* Process one line; *out is malloc'd JSON (no newline). false only when
 * memory runs out (every other failure is reported inside the JSON). */
CF_API bool cf_batch_line(cf_batch *b, const char *line, size_t len, char **out, size_t *out_len);
CF_API void cf_batch_free(cf_batch *b);

/* ---- template sources: files, tokenizer_config.json, model folders, GGUF,
 *      built-in seeds, web-copy repair (src/chat/loader.c, src/chat/gguf.c, src/chat/repair.c) ---- */
/* @@LOADERS@@ (section owned by the loaders stage) */

/* Where a template comes from and what came with it. */
typedef struct cf_load_options {
    const char *template_name;  /* NULL: "tool_use" when has_tools and present, else "default" */
    bool has_tools;             /* the request carries tools (picks "tool_use") */
    bool no_repair;             /* keep the text exactly as found */
    const cf_limits *limits;    /* NULL: defaults; max_json_depth, max_json_bytes, max_string,
                                   max_items and max_memory bound the files read */
} cf_load_options;

typedef struct cf_source {
    char *text; size_t len;     /* template text, NUL-terminated (repaired unless no_repair) */
    cf_context *tokens;         /* special tokens as variables (bos_token, eos_token, ...);
                                   never NULL after success. Caller keys override them:
                                   set the request's variables on top (transformers' rule). */
    const char *kind;           /* "file", "tokenizer_config", "model_dir", "gguf", "builtin",
                                   or "text" (cf_source_from_text); static string */
    char *name;                 /* template name when one was picked (named templates, or the
                                   built-in's name), else NULL */
    char *warnings;             /* newline-separated human notes ("repaired: removed
                                   line-number prefixes from 106 lines"), or NULL */
    bool looks_tag_stripped;    /* heuristics say HTML tags were stripped (seeds raw 001/003):
                                   cannot be repaired; explain the render error with it */
} cf_source;

/* Load a template source. `what` is a path — a template file, a
 * tokenizer_config.json, a model folder, a .gguf — or, when no such path
 * exists, a built-in name (cf_builtin_names). Files are told apart by
 * content (GGUF magic, a JSON object), not by name.
 *
 * Special tokens follow transformers 5.x (tokenizer.special_tokens_map):
 * bos/eos/unk/sep/pad/cls/mask_token and every other top-level "*_token" key
 * whose value is a string or an AddedToken object {"content": ...}, plus the
 * entries of an `extra_special_tokens` object. List-valued
 * `additional_special_tokens` / `extra_special_tokens` are NOT variables in
 * 5.x. A model folder's special_tokens_map.json is merged only when
 * tokenizer_config.json has no "added_tokens_decoder" (transformers' legacy
 * path). In a model folder, chat_template.jinja and
 * additional_chat_templates/NAME.jinja replace the config's templates.
 * GGUF: bos/eos/unk/pad_token from tokenizer.ggml.*_token_id.
 * Returns false + err (CF_ERR_IO, CF_ERR_FORMAT with a byte offset,
 * CF_ERR_UNICODE, CF_ERR_USAGE for an unknown template name...). */
CF_API bool cf_source_load(const char *what, const cf_load_options *opt, cf_source *out,
                           cf_error *err);
/* Same for text already in memory (repair + tag-strip detection only). */
CF_API bool cf_source_from_text(const char *text, size_t len, const cf_load_options *opt,
                                cf_source *out, cf_error *err);
CF_API void cf_source_free(cf_source *s);

/* Built-in templates (the five seeds): names in order, NULL-terminated;
 * text by name (NULL if unknown). The text is static: do not free. */
CF_API const char *const *cf_builtin_names(void);
CF_API const char *cf_builtin_text(const char *name, size_t *len);

/* Repair a web copy (line numbers, markdown table rows, hub page header).
 * Returns malloc'd NUL-terminated text (unchanged copy when nothing needed
 * repair) or NULL when out of memory; *notes (if notes != NULL) gets
 * malloc'd newline-separated notes, or NULL when nothing was repaired. */
CF_API char *cf_repair_text(const char *text, size_t len, size_t *out_len, char **notes);

/* ---- capabilities and polyfills (src/chat/caps.c) ---- */
/* @@CAPS@@ */

/* What a template can do, found by PROBING: rendering small synthetic
 * conversations (cf_render_chat, `defaults` as the special tokens, may be
 * NULL) and looking for unique markers in the output; a probe that raises
 * means "not supported". Returns malloc'd JSON (indent 2; free()), NULL + err
 * only on memory exhaustion. Keys, in this order:
 *   supports_system_role          a leading system message's text is rendered
 *   supports_tools                a tool schema's name is rendered (tools=[...])
 *   supports_tool_calls           an assistant tool call's name is rendered
 *   supports_parallel_tool_calls  two calls in one turn are both rendered
 *   supports_tool_call_id         call ids are printed, or results are paired
 *                                 with calls by id (a result answering no call
 *                                 renders differently)
 *   supports_tool_responses       a tool message's content is rendered
 *   supports_reasoning            an assistant's `reasoning_content` is rendered
 *   reasoning_field               the field reasoning is read from:
 *                                 "reasoning_content", "reasoning", "thinking", null
 *   supports_documents            documents=[{"title", "text"}] are rendered
 *   supports_string_content       "content": "text" is rendered (user turn)
 *   supports_typed_content        "content": [{"type": "text", "text"}] is rendered
 *                                 as text (not printed as Python/JSON data)
 *   requires_object_arguments     tool calls work and string `arguments` (the
 *                                 object as json.dumps text) fail or render
 *                                 unlike the object
 *   requires_typed_content        typed parts render, plain strings do not
 *   thinking_switch               the first of enable_thinking, reasoning,
 *                                 thinking, enable_reasoning, think,
 *                                 reasoning_enabled whose true and false render
 *                                 differently, or null
 *   generation_prompt             what add_generation_prompt=true appends, or null
 *   reply_format                  cf_reply_format_name(cf_reply_format_detect(text))
 *   stop_strings                  end-of-turn token observed after an assistant
 *                                 turn, the reply format's turn ends, eos_token
 *   prefix_stable                 rendering messages[:k] is a prefix of
 *                                 rendering messages[:k+1] for a conversation
 *                                 with reasoning and tool turns (KV-cache reuse);
 *                                 false when old reasoning is dropped; null when
 *                                 it could not be told (see src/chat/caps.c) */
CF_API char *cf_caps_json(const cf_template *t, const cf_context *defaults, cf_error *err);

/* ---- reply parsing, whole and streaming (src/reply/reply.c) ---- */
/* @@REPLIES@@ (section owned by the replies stage) */

/* What a model writes back, and how to read it (`chatfmt formats` prints an
 * example of each; R reasoning, C content, N a tool name, K/V an argument):
 *   glm45     <think>R</think> C <tool_call>NAME <arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>
 *             (GLM-4.5/4.6, and 4.7/5 without the newlines)
 *   hermes    <think>R</think> C <tool_call>{"name": N, "arguments": {...}}</tool_call>  (Qwen, Nanbeige)
 *   command-a <|START_THINKING|>R<|END_THINKING|> then <|START_ACTION|>[{"tool_call_id", "tool_name",
 *             "parameters"}...]<|END_ACTION|> or <|START_RESPONSE|>C<|END_RESPONSE|>; citations
 *             <co>SPAN</co: 0:[1,2]> in C
 *   plain     <think>R</think> C, no tool calls
 * Described formats, read by one engine from a table (src/reply/formats.c):
 *   typed XML parameters (values typed like glm45's: by the schema, or by an explicit flag)
 *     qwen3-coder   <tool_call><function=N><parameter=K>\nV\n</parameter></function></tool_call>
 *                   (Qwen3-Coder, Qwen3.5/3.6, Nemotron 3, Step 3.5; one newline around V is layout;
 *                   a missing </parameter> or <tool_call> is forgiven)
 *     seed-oss      <seed:think>R</seed:think><seed:tool_call><function=N>...</seed:tool_call>
 *     minimax-m2    <minimax:tool_call><invoke name="N"><parameter name="K">V</parameter></invoke>...
 *     deepseek-dsml <｜DSML｜function_calls> (V4: tool_calls) <｜DSML｜invoke name="N">
 *                   <｜DSML｜parameter name="K" string="true|false">V</｜DSML｜parameter>...
 *     gigachat-gcml the same with GCML (GigaChat 3.5)
 *     hunyuan-v3    <tool_calls:opensource><tool_call:opensource>N<tool_sep:opensource>
 *                   <arg_key:opensource>K</arg_key:opensource><arg_value:opensource>V</...>
 *     step3         <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="N">
 *                   <steptml:parameter name="K">V</steptml:parameter></steptml:invoke>...
 *     minicpm5      <function name="N"><param name="K">V</param></function>
 *     kimi-k3       <|open|>tools<|sep|><|open|>call tool="N" index="1"<|sep|><|open|>argument key="K"
 *                   type="string"<|sep|>V<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>
 *                   (a type other than string: V is JSON); <|open|>think<|sep|>R<|close|>think<|sep|>,
 *                   content in <|open|>response<|sep|>...<|close|>response<|sep|>
 *     minimax-m3    every tag after the ]<]minimax[>[ token: [NS]<tool_call>[NS]<invoke name="N">
 *                   [NS]<K>V[NS]</K>...[NS]</invoke>[NS]</tool_call>; V is text or elements in turn
 *                   (named by keys: an object; <item>: a list), typed by the tool's schema (M3 muse)
 *   a name, then the arguments object (kept verbatim, as hermes)
 *     deepseek-r1   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>N\n```json\n{...}\n```
 *                   <｜tool▁call▁end｜><｜tool▁calls▁end｜>
 *     deepseek-v3.1 <｜tool▁call▁begin｜>N<｜tool▁sep｜>{...}<｜tool▁call▁end｜> (in the same section)
 *     kimi-k2       <|tool_calls_section_begin|><|tool_call_begin|>functions.N:0<|tool_call_argument_begin|>
 *                   {...}<|tool_call_end|>...; the id is "functions.N:0"; calls may come inside
 *                   <think> (they end it); the singular <|tool_call_section_begin|> and a missing
 *                   section are accepted
 *     solar-open    <|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>N<|tool_call:args|>{...}
 *                   <|tool_call:end|>; the id is the model's
 *   JSON call objects {"name": N, "arguments"|"parameters": {...}}
 *     nemotron-v2   <TOOLCALL>[...]</TOOLCALL>       granite  <|tool_call|>[...] (<response> dropped;
 *                   reasoning also "Here is my thought process:R Here is my response:")
 *     apriel        <thinking>R</thinking><tool_calls>[...]</tool_calls>
 *     jamba         <tool_calls>[...]</tool_calls>   hunyuan  the same, <answer> dropped
 *     minimax-m1    <tool_calls>\n{...}\n{...}\n</tool_calls>
 *     apertus       <|inner_prefix|>R<|inner_suffix|><|tools_prefix|>[{"N": {...}}]<|tools_suffix|>
 *     internlm      <|action_start|><|plugin|>{...}<|action_end|>
 *     longcat       <longcat_tool_call>{...}</longcat_tool_call>
 *     gigachat3     C<|message_sep|>\n\nfunction call<|role_sep|>\n{...} (GigaChat 3) or
 *                   <|function_call|>{...}<|message_sep|> (3.1)
 *     granite-20b-fc <function_call> {...} (repeated, no closer)
 *     ernie45       <think>R</think><response>C</response><tool_call>{...}</tool_call>
 *     command-r     C\nAction:\n```json\n[{"tool_name": N, "parameters": {...}}...]``` (Command R/R+)
 *     hyperclovax   /think\nR<|im_end|>\n<|im_start|>assistant\nC<|im_end|>\n<|im_start|>assistant
 *                   -> tool/function_call\n[...] (HyperCLOVA X SEED Think: each part is a turn)
 *   a name, then the arguments object, with no markup around them
 *     chatml-functions functions.N:\n{...}functions.N:\n{...} (llama-cpp-python's
 *                   chatml-function-calling)
 *     functionary-v2 after the prompt's "<|from|>assistant\n<|recipient|>": all\n<|content|>C
 *                   \n<|from|>assistant\n<|recipient|>N\n<|content|>{...} (Functionary v2.2)
 *     glimmer       after the prompt's "<|start|>assistant": to=self<|message|>R<|eom|>
 *                   <|start|>assistant to=N<|message|><atem:function_calls><atem:invoke name="N">
 *                   <atem:parameter name="K">V</atem:parameter>...; to=user is content
 * Every described format takes <think>R</think> (or its own markers) before
 * the content, a leading closer when the prompt opened reasoning, and text
 * between and after calls.
 * and the families read by hand-written code (src/reply/families.h):
 *   harmony   gpt-oss: [<|start|>assistant][ to=functions.F]<|channel|>analysis|commentary|final
 *             [ to=functions.F][ <|constrain|>json]<|message|>BODY<|end|>|<|call|>|<|return|>...;
 *             analysis is reasoning, a message to functions.F a call (BODY its JSON arguments)
 *   llama3-json  Llama 3.1-4: {"name": F, "parameters": {...}} anywhere, ';'-joined or back to
 *             back, optionally after <|python_tag|>; <|python_tag|>brave_search.call(query="x")
 *   pythonic  [f(a=1, b='x'), g()] (Llama 3.2/4, ToolACE), inside <|tool_call_start|>...
 *             <|tool_call_end|> (LFM2, also a JSON list there), or one per line in
 *             <function_calls>...</function_calls> (Olmo 3); <think>R</think> first
 *   mistral   [THINK]R[/THINK] C [TOOL_CALLS][{"name", "arguments", "id"}...] (v3) or
 *             [TOOL_CALLS]F[CALL_ID]ID[ARGS]{...} (v11) or [TOOL_CALLS]F[ARGS]{...}... (v13)
 *   functionary-v31  C <function=F>{...}</function>; <|python_tag|>CODE
 *   functionary-v32  after the prompt's ">>>": all\nC>>>F\n{...}>>>python\nCODE
 *   functools C functools[{"name", "arguments"}...] (FireFunction v2, Phi-4-mini)
 *   gemma4    <|channel>thought\nR<channel|> C <|tool_call>call:F{k:<|"|>v<|"|>,n:1}<tool_call|>;
 *             FunctionGemma's <start_function_call>call:F{k:<escape>v<escape>}<end_function_call>
 *   xlam      [<think>R</think>] C [{"name", "arguments"}...], also in ```json, <tool_call>, after
 *             [TOOL_CALLS] */
typedef enum cf_reply_format {
    CF_REPLY_PLAIN = 0,
    CF_REPLY_GLM45,
    CF_REPLY_HERMES,
    CF_REPLY_COMMAND_A,
    /* read by the description-driven engine (src/reply/formats.c) */
    CF_REPLY_QWEN3_CODER,
    CF_REPLY_SEED_OSS,
    CF_REPLY_MINIMAX_M2,
    CF_REPLY_DEEPSEEK_R1,
    CF_REPLY_DEEPSEEK_V31,
    CF_REPLY_DEEPSEEK_DSML,
    CF_REPLY_GIGACHAT_GCML,
    CF_REPLY_KIMI_K2,
    CF_REPLY_SOLAR_OPEN,
    CF_REPLY_HUNYUAN_V3,
    CF_REPLY_STEP3,
    CF_REPLY_MINICPM5,
    CF_REPLY_NEMOTRON_V2,
    CF_REPLY_GRANITE,
    CF_REPLY_APERTUS,
    CF_REPLY_APRIEL,
    CF_REPLY_JAMBA,
    CF_REPLY_HUNYUAN,
    CF_REPLY_MINIMAX_M1,
    CF_REPLY_INTERNLM,
    CF_REPLY_LONGCAT,
    CF_REPLY_GIGACHAT3,
    CF_REPLY_GRANITE_20B_FC,
    CF_REPLY_ERNIE45,
    CF_REPLY_COMMAND_R,
    CF_REPLY_HYPERCLOVAX,
    CF_REPLY_CHATML_FUNCTIONS,
    CF_REPLY_FUNCTIONARY_V2,
    CF_REPLY_GLIMMER,
    CF_REPLY_KIMI_K3,
    CF_REPLY_MINIMAX_M3,
    /* written by hand per family (src/reply/families.h) */
    CF_REPLY_HARMONY,
    CF_REPLY_LLAMA3_JSON,
    CF_REPLY_PYTHONIC,
    CF_REPLY_MISTRAL,
    CF_REPLY_FUNCTIONARY_V31,
    CF_REPLY_FUNCTIONARY_V32,
    CF_REPLY_FUNCTOOLS,
    CF_REPLY_GEMMA4,
    CF_REPLY_XLAM,
    CF_REPLY_FORMAT_COUNT     /* not a format: how many there are */
} cf_reply_format;

/* The format's name ("plain", "glm45", "hermes", "command-a", "qwen3-coder", ...,
 * "harmony", "llama3-json", ...; `chatfmt formats` lists them all). */
CF_API const char *cf_reply_format_name(cf_reply_format f);
/* One line showing what a model writes in format f (R reasoning, C
 * content, f a tool name, k/v an argument), or NULL for an unknown f.
 * The formats are 0 .. CF_REPLY_FORMAT_COUNT - 1. */
CF_API const char *cf_reply_format_example(cf_reply_format f);
/* Inverse of cf_reply_format_name; false for an unknown name. */
CF_API bool cf_reply_format_from_name(const char *name, cf_reply_format *out);
/* Guess the format from a chat template's text with several independent
 * markers per family (GLM writes <tool_call> too): glm45 = "<arg_key>" and
 * "<|assistant|>"; command-a = "<|START_ACTION|>" and "<|END_ACTION|>";
 * then the hand-written families' signatures (families_detect: e.g. harmony
 * = "<|channel|>" and "<|message|>", mistral = "[TOOL_CALLS]", llama3-json =
 * "Environment: ipython"); hermes = "<tool_call>" and a JSON "name" and
 * "arguments"; else the first described format whose call markers all occur
 * (at least three of them); else plain. cf_reply_format_of is the better
 * answer: it renders. */
CF_API cf_reply_format cf_reply_format_detect(const char *template_text, size_t len);
/* The format found by rendering probes through t (defaults as in
 * cf_render_options.defaults; may be NULL): a turn calling a probe tool and
 * a turn with reasoning are rendered, and the text after the prompt is read
 * back with every format; the one that recovers the call (and the
 * reasoning, when the template prints it) wins, plain when the template
 * prints neither, cf_reply_format_detect's guess when no format reads it.
 * cf_caps_json's reply_format is this answer. */
CF_API cf_reply_format cf_reply_format_of(const cf_template *t, const cf_context *defaults);
/* Where a reply of t ends (cf_caps_json's stop_strings: the end-of-turn
 * token, the token that closes an assistant turn, the eos_token): a server
 * stops generating at them, so a reply it parses holds none. As malloc'd
 * NUL-terminated strings one after another, ended by an empty one (free()
 * it); NULL + err on failure. */
CF_API char *cf_reply_stop_strings(const cf_template *t, const cf_context *defaults, cf_error *err);

typedef struct cf_reply_options {
    cf_reply_format format;
    const char *tools_json;   /* OpenAI tools array (NUL-terminated JSON) or NULL: the
                                 JSON schemas type glm45 and typed-XML argument values */
    const char *prompt_tail;  /* the end of the rendered prompt, or NULL. Ending in the
                                 format's reasoning opener (<think>, <|START_THINKING|>)
                                 means the reply starts inside reasoning; ending in the
                                 closer (</think>: enable_thinking=false) means the reply
                                 has no reasoning block */
    bool reasoning_open;      /* the reply starts inside reasoning (same as such a tail) */
    const cf_limits *limits;  /* NULL: defaults (max_memory, max_string, max_steps,
                                 max_json_depth apply) */
    bool json_response;       /* the request asked for a JSON answer (OpenAI response_format
                                 json_object / json_schema): the content is that JSON, and a
                                 Markdown code fence around it (a first line "```json" or
                                 "```", a last line "```") is dropped; text before the fence
                                 keeps it all as written */
} cf_reply_options;

/* Parse a whole reply into the OpenAI assistant message, as compact JSON
 * (ensure_ascii off), keys in this order:
 *   {"role":"assistant","content":S|null,"reasoning_content":S|null,
 *    "tool_calls":[{"id","type":"function","function":{"name","arguments"}}],
 *    "citations":[{"start","end","text","sources":[{"tool_call_index","result_indices"}]}]}
 * - content / reasoning_content: null when empty (or whitespace only); text
 *   between and after calls kept (joined as written). Whitespace at a field's
 *   ends: a line break beside markup is layout, so leading whitespace is kept
 *   from after its last line break and trailing whitespace up to its first;
 *   spaces and tabs on the text's own line are the model's and kept ("I'll
 *   check. " before a call section). Whitespace before the reply's first text
 *   (the separator a template prints after the assistant header) is dropped.
 * - tool_calls and citations are omitted when there are none (as OpenAI does).
 * - id: the model's own (command-a tool_call_id, kimi-k2 functions.N:0,
 *   solar-open, mistral and xlam "id" / [CALL_ID]), else "call_<index>"
 *   (0-based position in this reply: unique within the reply).
 * - arguments: hermes and command-a: the model's JSON object text verbatim
 *   (validated, RFC 8259 strict); a JSON string there is decoded and used as
 *   the text; missing -> "{}". A call object may hold only its own keys
 *   (hermes: "name", "arguments" or "parameters"; command-a: "tool_call_id",
 *   "tool_name", "parameters"), each once: anything else is malformed, as
 *   dropping it would lose what the model wrote. A hermes call whose JSON is
 *   complete but whose </tool_call> is missing is kept.
 *   The described formats that write a JSON object (or arguments object)
 *   keep it verbatim in the same way; a call object there holds only its
 *   name and arguments keys.
 *   glm45 and the typed-XML formats: built as Python json.dumps(args, ensure_ascii=False) would
 *   (", " and ": " separators): a value whose schema
 *   (anyOf/oneOf/enum/const/type lists) allows a string is the raw text as a
 *   JSON string; any other value is its JSON text when it is valid JSON,
 *   else the raw text as a JSON string.
 * - pythonic and gemma4 arguments (Python / Gemma literals) are rebuilt as
 *   json.dumps writes them: True/False/None -> true/false/null, tuples ->
 *   lists, Python string escapes decoded; a pythonic keyword argument
 *   written as a string whose tool schema type is integer, number or
 *   boolean is that JSON value when its text is one ("3" -> 3, as templates
 *   that print every value as a string teach); the other hand-written families'
 *   arguments are the model's JSON text verbatim, as hermes'. Python code
 *   after functionary's python recipient or <|python_tag|> is a call of
 *   "python" with {"code": CODE}. A JSON call with no marker before it
 *   (llama3-json, xlam) is a call only when it is complete and well-formed:
 *   a '{' or '[' in prose stays text. A harmony message to a built-in tool
 *   (python, browser.*, container.*) or with a header it does not know is
 *   kept as content, header included.
 * - citations (command-a): start/end in code points of the final content,
 *   spanning the cited text without its surrounding whitespace.
 * - Nothing is lost: a call that is cut off or malformed stays in content
 *   verbatim, from its opening tag up to where it went wrong; scanning
 *   resumes there. Invalid UTF-8 becomes U+FFFD.
 * Returns malloc'd NUL-terminated JSON (release with free()) and its length
 * in *out_len (may be NULL); NULL + err only on limits/memory/bad options. */
CF_API char *cf_parse_reply(const char *text, size_t len, const cf_reply_options *opt,
                            size_t *out_len, cf_error *err);

/* Streaming. Feed the reply in any chunking; drain the deltas it produced.
 * Deltas are OpenAI chat.completion.chunk `delta` objects, one compact JSON
 * object per line (JSON Lines):
 *   {"reasoning_content":"..."}   {"content":"..."}
 *   {"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"f","arguments":"..."}}]}
 *   {"tool_calls":[{"index":0,"function":{"arguments":"..."}}]}
 *   {"citations":[{...}]}
 * Fragments of the same field produced between two drains are merged into
 * one line. A delta is never retracted: the parser holds back only bytes
 * that could still be markup (a partial tag, an incomplete UTF-8 sequence),
 * whitespace that may turn out to be trailing, a call until its header is
 * unambiguous (complete name; command-a: name and id), and a glm45 argument
 * value whose schema does not allow a string (until its </arg_value>: it may
 * be JSON or fall back to a string). Hermes/command-a argument text and
 * string-typed glm45 values stream as they arrive; so do the JSON
 * arguments of harmony, llama3-json, mistral, functionary, functools and
 * xlam calls, and functionary's python code; a pythonic or gemma4 call goes
 * out whole when its closing bracket arrives.
 * For every well-formed reply, the concatenated deltas equal
 * cf_parse_reply's message for every chunking. The one difference: a call
 * that breaks after the stream committed to it (cut off, malformed JSON) is
 * closed as received (its arguments may be incomplete JSON) and the text from
 * where it broke continues as content; the whole parse instead puts such a
 * call in content verbatim. Total work is linear in the reply length. */
typedef struct cf_reply_stream cf_reply_stream;

CF_API cf_reply_stream *cf_reply_stream_new(const cf_reply_options *opt, cf_error *err);
/* false + err only on limits/memory; the stream is then unusable. */
CF_API bool cf_reply_stream_feed(cf_reply_stream *s, const char *p, size_t n, cf_error *err);
/* End of reply: flushes what was held back. Call once, then drain. */
CF_API bool cf_reply_stream_finish(cf_reply_stream *s, cf_error *err);
/* Deltas produced since the last drain (JSON Lines, each line ending in
 * '\n'; "" when none). NUL-terminated, owned by the stream, valid until the
 * next call on it. */
CF_API const char *cf_reply_stream_drain(cf_reply_stream *s, size_t *len);
CF_API void cf_reply_stream_free(cf_reply_stream *s);

/* ---- constrained decoding: grammars for tool calls (src/grammar/) ------------ */
/* @@GRAMMAR@@ (section owned by the grammar stage) */

/* A decoding grammar that makes a model's reply one the reply parser reads
 * back with valid calls: the tool name one of those offered, the arguments
 * valid against the tool's JSON schema, in the format's own call syntax.
 * It comes from the same markers the parser reads (src/grammar/calls.c). */
typedef enum cf_tool_choice {
    CF_TOOL_CHOICE_AUTO = 0,   /* free text, or calls (the grammar is lazy: triggers start it) */
    CF_TOOL_CHOICE_REQUIRED,   /* at least one call; only reasoning and whitespace before it */
    CF_TOOL_CHOICE_NONE,       /* no grammar at all */
    CF_TOOL_CHOICE_NAMED       /* as required, with only the tool named in tool_name */
} cf_tool_choice;

enum { CF_EMIT_GBNF = 1, CF_EMIT_LARK = 2, CF_EMIT_STRUCTURAL_TAG = 4, CF_EMIT_ALL = 7 };

typedef struct cf_grammar_options {
    cf_reply_format format;    /* the reply format (cf_reply_format_detect); plain has no calls */
    const char *tools_json;    /* OpenAI tools array (NUL-terminated JSON) */
    cf_tool_choice tool_choice;
    const char *tool_name;     /* CF_TOOL_CHOICE_NAMED: the tool */
    bool single_call;          /* parallel_tool_calls=false: at most one call */
    const char *prompt_tail;   /* as in cf_reply_options: ending in the reasoning opener
                                  means the reply starts inside reasoning, in the closer
                                  that it has none; else reasoning may come first */
    bool reasoning_open;       /* the reply starts inside reasoning */
    unsigned emit;             /* CF_EMIT_* bits; 0 = all */
    const cf_limits *limits;   /* NULL: defaults (max_steps, max_memory, max_string,
                                  max_json_depth apply) */
} cf_grammar_options;

/* The grammar for a request, as compact JSON (malloc'd; free()), keys in order:
 *   "format"            the reply format
 *   "grammar"           GBNF as llama.cpp's grammar parser reads it (root rule "root"),
 *                       or null (tool_choice none, or not emitted)
 *   "grammar_lazy"      true for tool_choice auto: the grammar applies from a trigger on
 *   "grammar_triggers"  [{"type": "word"|"pattern"|"pattern_full"|"token", "value"}], in
 *                       llama.cpp's meanings ("pattern": a regex searched anywhere, the
 *                       grammar starts at its first capture group)
 *   "preserved_tokens"  the format's special tokens (the sampler must let them through whole)
 *   "additional_stops"  strings that end the reply besides the model's end of turn
 *   "structural_tag"    xgrammar's {"type": "structural_tag", "format": {"type":
 *                       "triggered_tags", ...}} (vLLM, SGLang), or null
 *   "lark"              the whole reply in Lark (llguidance; python-lark reads it too:
 *                       root rule "start"), or null
 *   "warnings"          what the schemas ask that the grammar relaxes (it then accepts
 *                       more than the schema, never less)
 * Reasoning stays free text. Work and size are bounded by the limits: a
 * hostile schema fails with LimitError, never runs away.
 * NULL + err: UsageError (no tools, unknown NAME, a format without calls
 * and a choice other than none), JSONDecodeError, LimitError, MemoryError. */
CF_API char *cf_tool_grammar(const cf_grammar_options *opt, size_t *out_len, cf_error *err);

typedef enum cf_grammar_syntax { CF_GRAMMAR_GBNF = 0, CF_GRAMMAR_LARK } cf_grammar_syntax;

/* One JSON Schema as a grammar for the JSON values it accepts (root rule
 * "root" in GBNF, "start" in Lark), as JSON: {"grammar": "...", "warnings":
 * [...]}. Covered: type (and lists), properties in order with required /
 * optional, additionalProperties, enum, const, anyOf/oneOf, allOf, $ref to
 * $defs/definitions (recursive too), items/prefixItems/minItems/maxItems,
 * minLength/maxLength, pattern (docs/grammar.md names the regex subset),
 * format date/time/date-time/uuid, integer minimum/maximum, nullable.
 * Malloc'd (free()); NULL + err as cf_tool_grammar. */
CF_API char *cf_schema_grammar(const char *schema_json, size_t len, cf_grammar_syntax syntax,
                               const cf_limits *limits, size_t *out_len, cf_error *err);

/* ---- variables built from the host's own data (src/engine/builder.c) ---------- */

/* Push a render's variables value by value, straight from your own data (a
 * binding's objects, a C++ JSON tree), without writing JSON text:
 *
 *   cf_builder *b = cf_builder_new(NULL);
 *   cf_builder_dict(b, 2);                        // the top level: 2 pairs
 *     cf_builder_str(b, "add_generation_prompt", 21); cf_builder_bool(b, true);
 *     cf_builder_str(b, "messages", 8); cf_builder_list(b, 1);
 *       cf_builder_dict(b, 2);
 *         cf_builder_str(b, "role", 4); cf_builder_str(b, "user", 4);
 *         cf_builder_str(b, "content", 7); cf_builder_str(b, "Hi", 2);
 *   cf_context *ctx = cf_builder_finish(b, &err);   // NULL + err on failure
 *
 * A list or dict is announced with its size; the next that many values (a
 * dict: key, value, key, value...; keys are cf_builder_str) are its items,
 * and it closes by itself after the last. The result is exactly what
 * cf_context_from_json makes of the same data (a repeated key keeps its
 * first position and takes the last value). Errors — invalid UTF-8, NaN or
 * infinity, a non-string key, nesting past max_json_depth, more than
 * max_items items or max_json_bytes of strings, out of memory, a top level
 * that is not a dict — are kept: later calls do nothing and
 * cf_builder_finish reports the first one. One builder per thread. */
typedef struct cf_builder cf_builder;

CF_API cf_builder *cf_builder_new(const cf_limits *limits);   /* NULL: defaults; NULL on OOM */
CF_API void cf_builder_null(cf_builder *b);
CF_API void cf_builder_bool(cf_builder *b, bool v);
CF_API void cf_builder_int(cf_builder *b, int64_t v);
CF_API void cf_builder_float(cf_builder *b, double v);
CF_API void cf_builder_str(cf_builder *b, const char *s, size_t len);   /* UTF-8, copied */
CF_API void cf_builder_list(cf_builder *b, size_t n);
CF_API void cf_builder_dict(cf_builder *b, size_t npairs);
CF_API void cf_builder_tuple(cf_builder *b, size_t n);   /* a Python tuple: prints (1, 2) */
/* The same pushes in bulk: many values in one call (a binding fills an
 * array while it walks its objects and feeds it a chunk at a time). Each
 * item is what the matching call above would push: STR takes u.s and n
 * bytes (copied), LIST and TUPLE n items, DICT n pairs, BOOL n != 0, INT
 * u.i, FLOAT u.f. ASCII is a STR the host already knows is all ASCII
 * (every byte < 0x80; Python's PyUnicode_IS_ASCII says so for free) whose
 * bytes stay unchanged at u.s until cf_builder_finish (an immutable
 * object's): it is not scanned, and a dict key pushed again from the same
 * address is recognised without reading it. Bytes that break this promise
 * make string values whose character counts are wrong (renders stay
 * memory-safe, their text is unspecified). KEY is an ASCII item that is
 * a key of the innermost dict (a usage error elsewhere) and that equals
 * none of that dict's keys before it (as a Python dict's keys): it is
 * placed without looking among them (keys that break this promise make a
 * dict holding both, memory-safe, its lookups unspecified). UTF8 is a STR
 * whose bytes the host promises are valid UTF-8 (it encoded them itself,
 * as a binding encodes its own strings): copied without validating them,
 * their character count left for a render that needs it (bytes that break
 * this promise make string values that are memory-safe, their text
 * unspecified). Libraries older than ASCII (or KEY, or UTF8) reject it as
 * an unknown kind (cf_builder_failed): a binding can probe. */
typedef enum {
    CF_ITEM_NULL, CF_ITEM_BOOL, CF_ITEM_INT, CF_ITEM_FLOAT, CF_ITEM_STR, CF_ITEM_LIST, CF_ITEM_DICT,
    CF_ITEM_TUPLE, CF_ITEM_ASCII, CF_ITEM_KEY, CF_ITEM_UTF8
} cf_builder_item_kind;
typedef struct cf_builder_item {
    cf_builder_item_kind kind;
    size_t n;
    union { const char *s; int64_t i; double f; } u;
} cf_builder_item;
CF_API void cf_builder_feed(cf_builder *b, const cf_builder_item *items, size_t n);
/* Has an error been kept (stop walking early)? */
CF_API bool cf_builder_failed(const cf_builder *b);
/* The context (free with cf_context_free), or NULL + err. Frees b either way. */
CF_API cf_context *cf_builder_finish(cf_builder *b, cf_error *err);
/* As cf_builder_finish, but b stays, empty, to build the next context with
 * the same limits (a thread building many saves an allocation and setup
 * each); cf_builder_free it at the end. An error (a failed build, or no
 * memory for the next context) is reported here or by the next take. */
CF_API cf_context *cf_builder_take(cf_builder *b, cf_error *err);
/* Drop a builder without finishing it. */
CF_API void cf_builder_free(cf_builder *b);

/* ---- one-call rendering for bindings and batch jobs (src/api_fast.c) ---- */
/* @@FAST@@ (section owned by the binding/dataset speed work) */

/* cf_render_data's output and error. Set `text`/`cap` to a buffer of the
 * caller's (may be NULL/0) and reuse the struct for every call of one thread. */
typedef struct cf_render_buffer {
    char *text;          /* the caller's buffer: the output is copied here when it fits (no NUL) */
    size_t cap;          /* its size in bytes */
    size_t len;          /* out: output length in bytes */
    cf_result big;       /* out: the output when it did not fit (release: cf_result_free);
                            spans are never returned here (cf_render_chat has them) */
    cf_error err;        /* out: the error of a call that returned -1 */
} cf_render_buffer;

/* cf_render_data flags: one format, optionally | CF_DATA_CHAT. */
enum {
    CF_DATA_JSON = 0,          /* a JSON object, read as cf_context_from_json_limits does */
    CF_DATA_MARSHAL = 1,       /* Python's marshal.dumps(variables, 4) of JSON-like data:
                                  str keys; str, int, float, bool, None, list, tuple (kept a
                                  tuple), dict */
    CF_DATA_FORMAT_MASK = 0xff,
    CF_DATA_CHAT = 0x100       /* chat mode (cf_render_chat); else raw mode (cf_render) */
};

/* cf_render_data results besides a length and -1 (error in b->err). */
enum {
    CF_RENDER_UNSUPPORTED = -2, /* CF_DATA_MARSHAL data that JSON would spell differently or
                                   cannot (NaN, non-str keys, lone surrogates, bytes, sets,
                                   ints beyond int64, cycles) or that passes a limit: encode the
                                   variables as JSON and call again; that call reports any error
                                   exactly as cf_context_from_json does */
    CF_RENDER_BIG = -3          /* the output (b->len bytes) is in b->big, not b->text */
};

/* Read the variables from `data` and render them in one call: what
 * cf_context_from_json_limits + cf_render_chat (or cf_render) +
 * cf_context_free do, the output copied into b->text. The variables are
 * read under the render's limits (opt->limits, else the template's). Returns
 * the output length (0..INT_MAX, in b->text), -1 (error in b->err),
 * CF_RENDER_UNSUPPORTED or CF_RENDER_BIG. Thread safety: as cf_render_chat,
 * one cf_render_buffer per thread. */
CF_API int cf_render_data(cf_render_buffer *b, const cf_template *t, const cf_render_options *opt,
                          int flags, const char *data, size_t len);

/* A reader's memory of large values that repeat from one JSON document to
 * the next: a dataset sends the same "tools" list (tens of KiB) with every
 * row, and reading it is most of such a row's cost. An array or object of at
 * least 256 bytes under a top-level key (the last few distinct ones under
 * each), seen twice with the same bytes, is
 * parsed once more on its own and then shared by the contexts whose
 * documents repeat those bytes: the same values, error messages and limits
 * as cf_context_from_json_limits (whose result it always equals). It also
 * remembers which keys follow which, so that the next row's keys are matched
 * by their bytes rather than looked up (a table of 1.5 KiB). A cache
 * serves one thread at a time (one per worker); its contexts may be freed
 * from any thread, before or after the cache. */
typedef struct cf_json_cache cf_json_cache;
CF_API cf_json_cache *cf_json_cache_new(void);   /* NULL when out of memory */
CF_API void cf_json_cache_free(cf_json_cache *c);
/* cf_context_from_json_limits through the cache (NULL: without one). With a
 * cache, json is read in place rather than copied (a row's bytes are read
 * once): keep it unchanged until the context is freed. */
CF_API cf_context *cf_context_from_json_cached(const char *json, size_t len, const cf_limits *limits,
                                               cf_json_cache *cache, cf_error *err);
/* The same for a JSON Lines row at text whose end is not yet found: when
 * the row is one JSON object followed by optional spaces, tabs and carriage
 * returns and a '\n' within the first avail bytes, its context (as
 * cf_context_from_json_cached reads the line without its line ending) and
 * *line_len = the offset of that '\n'. Otherwise NULL and *line_len =
 * SIZE_MAX, for any reason (not such a row, a row too long, no cache, out of
 * memory): find the line's end and call cf_context_from_json_cached, which
 * reports any error. Spares a separate pass for the line's end over bytes
 * the reader reads anyway. */
CF_API cf_context *cf_context_from_jsonl_cached(const char *text, size_t avail, size_t *line_len,
                                                const cf_limits *limits, cf_json_cache *cache);

/* s[0..n) as a JSON string literal, quotes included, spelled as Python's
 * json.dumps(s, ensure_ascii=False) spells it (for writing outputs into JSON
 * Lines). Returns the literal's length; it is written to out only when that
 * is <= cap (else nothing is written: call again with a buffer that big;
 * 6 * n + 2 bytes always suffice). */
CF_API size_t cf_json_quote(const char *s, size_t n, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* CHATFMT_H */
