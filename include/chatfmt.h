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
    CF_ERR_USAGE              /* UsageError: bad API/CLI arguments */
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
 * a safe default from cf_limits_default(); 0 in any field means "default". */
typedef struct cf_limits {
    uint64_t max_steps;        /* interpreter steps per render (default 50M) */
    uint32_t max_recursion;    /* macro / loop() / call nesting (default 500) */
    uint32_t max_parse_depth;  /* expression/statement nesting (default 500) */
    size_t max_output;         /* bytes of rendered output (default 64 MiB) */
    size_t max_string;         /* bytes of any single string (default 64 MiB) */
    size_t max_items;          /* items of any single list/dict (default 4M) */
    size_t max_memory;         /* bytes of working memory per render (default 1 GiB) */
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
/* A JSON object whose keys become variables. NULL + err on bad JSON. */
CF_API cf_context *cf_context_from_json(const char *json, size_t len, cf_error *err);
/* Set one variable from JSON text (any JSON value). false + err on failure. */
CF_API bool cf_context_set_json(cf_context *c, const char *name, const char *json, size_t len,
                         cf_error *err);
CF_API bool cf_context_set_string(cf_context *c, const char *name, const char *s, size_t len);
CF_API bool cf_context_set_bool(cf_context *c, const char *name, bool v);
CF_API bool cf_context_set_int(cf_context *c, const char *name, int64_t v);
CF_API bool cf_context_has(const cf_context *c, const char *name);
CF_API void cf_context_remove(cf_context *c, const char *name);
CF_API void cf_context_free(cf_context *c);

/* ---- rendering --------------------------------------------------------- */

typedef struct cf_span { size_t start, end; } cf_span;  /* character offsets */

typedef struct cf_result {
    char *text;          /* NUL-terminated UTF-8, owned: cf_result_free */
    size_t len;          /* bytes */
    cf_span *spans;      /* {% generation %} spans, in code points */
    size_t nspans;
} cf_result;

CF_API void cf_result_free(cf_result *r);

typedef struct cf_render_options {
    const cf_limits *limits;   /* NULL: the template's limits */
    const char *now;           /* "YYYY-MM-DDTHH:MM:SS" pins strftime_now; NULL:
                                  $CHATFMT_NOW if set, else local time */
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

/* ---- template sources: files, tokenizer_config.json, model folders, GGUF,
 *      built-in seeds, web-copy repair (src/loader.c, src/gguf.c, src/repair.c) ---- */
/* @@LOADERS@@ (section owned by the loaders stage) */

/* ---- capabilities and polyfills (src/caps.c) ---- */
/* @@CAPS@@ */

/* ---- reply parsing, whole and streaming (src/reply.c) ---- */
/* @@REPLIES@@ (section owned by the replies stage) */

#ifdef __cplusplus
}
#endif
#endif /* CHATFMT_H */
