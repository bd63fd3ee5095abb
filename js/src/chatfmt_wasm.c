/* chatfmt_wasm.c — the flat C surface the JavaScript wrapper (js/src) calls
 * in the WebAssembly build. JavaScript cannot easily read or fill C structs,
 * so every function here takes and returns numbers and pointers only: the
 * structs (cf_error, cf_render_buffer, cf_render_options, cf_source,
 * cf_reply_options) live on this side.
 *
 * The module is single-threaded (no -pthread): the last error and the
 * render buffer are plain statics, valid until the next call that sets them.
 * Nothing here changes what the library does; it only forwards. */
#include "chatfmt.h"
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((used, visibility("default")))

/* ---- the last error ---- */

static cf_error last_error;

EXPORT int cfjs_error_kind(void) { return (int)last_error.kind; }
EXPORT const char *cfjs_error_kind_name(void) { return cf_error_kind_name(last_error.kind); }
EXPORT const char *cfjs_error_message(void) { return last_error.message; }
EXPORT int cfjs_error_line(void) { return last_error.line; }
EXPORT int cfjs_error_column(void) { return last_error.column; }
EXPORT double cfjs_error_offset(void) { return (double)last_error.offset; }

static void set_error(cf_error_kind kind, const char *message) {
    memset(&last_error, 0, sizeof last_error);
    last_error.kind = kind;
    strncpy(last_error.message, message, sizeof last_error.message - 1);
}

/* ---- scratch input: JavaScript writes UTF-8 here (grown on demand) ---- */

static char *input;
static size_t input_cap;

/* A buffer of at least n bytes (its address may change: ask again when
 * more is needed). NULL when memory runs out. */
EXPORT char *cfjs_input(size_t n) {
    if (n + 1 > input_cap) {
        size_t cap = input_cap ? input_cap : 4096;
        while (cap < n + 1) cap *= 2;
        char *p = malloc(cap);
        if (!p) return NULL;
        free(input);
        input = p;
        input_cap = cap;
    }
    return input;
}
EXPORT size_t cfjs_input_cap(void) { return input_cap; }

/* ---- limits: set field by field from a JavaScript object ---- */

EXPORT cf_limits *cfjs_limits_new(void) { return calloc(1, sizeof(cf_limits)); }
EXPORT void cfjs_limits_free(cf_limits *l) { free(l); }

/* false for an unknown name. Values are doubles (exact up to 2^53). */
EXPORT int cfjs_limits_set(cf_limits *l, const char *name, double v) {
    if (v < 0) return 0;
#define FIELD(f, type)                 \
    if (!strcmp(name, #f)) {           \
        l->f = (type)v;                \
        return 1;                      \
    }
    FIELD(max_steps, uint64_t)
    FIELD(max_recursion, uint32_t)
    FIELD(max_parse_depth, uint32_t)
    FIELD(max_output, size_t)
    FIELD(max_string, size_t)
    FIELD(max_items, size_t)
    FIELD(max_memory, size_t)
    FIELD(max_range, uint32_t)
    FIELD(max_json_depth, uint32_t)
    FIELD(max_json_bytes, size_t)
#undef FIELD
    return 0;
}

/* ---- templates ---- */

EXPORT cf_template *cfjs_compile(const char *src, size_t len, const cf_limits *limits, const char *name) {
    cf_compile_options opt = {limits, name};
    return cf_compile(src, len, &opt, &last_error);
}

/* Render options: the strings are copied and freed with the options. */
typedef struct Options {
    cf_render_options opt;
    char now[32];
} Options;

EXPORT cf_render_options *cfjs_options_new(const cf_limits *limits, const char *now, const cf_context *defaults,
                                           int polyfill) {
    Options *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->opt.limits = limits;
    o->opt.defaults = defaults;
    o->opt.polyfill = polyfill != 0;
    if (now && *now) {
        strncpy(o->now, now, sizeof o->now - 1);
        o->opt.now = o->now;
    }
    return &o->opt;
}
EXPORT void cfjs_options_free(cf_render_options *o) { free(o); }

/* ---- rendering: variables as JSON in, text out ---- */

static cf_render_buffer render_buffer;
static char *output;           /* what cfjs_output answers: render_buffer.text or .big.text */

/* Render the JSON object data[0..len) (chat: cf_render_chat, else
 * cf_render). Returns the output's length in bytes (the text is at
 * cfjs_output()), or -1 with the error in cfjs_error_*. */
EXPORT double cfjs_render(const cf_template *t, const cf_render_options *opt, int chat, const char *data,
                          size_t len) {
    cf_render_buffer *b = &render_buffer;
    if (b->big.text) cf_result_free(&b->big);
    if (!b->text) {
        b->text = malloc(1 << 16);
        b->cap = b->text ? 1 << 16 : 0;
    }
    int n = cf_render_data(b, t, opt, CF_DATA_JSON | (chat ? CF_DATA_CHAT : 0), data, len);
    if (n >= 0) {
        output = b->text;
        return n;
    }
    if (n == CF_RENDER_BIG) {
        output = b->big.text;
        /* the next outputs of this size fit (up to 4 MiB kept) */
        if (b->len <= (1u << 22)) {
            size_t cap = b->cap;
            while (cap < b->len) cap *= 2;
            char *p = malloc(cap);
            if (p) {
                free(b->text);
                b->text = p;
                b->cap = cap;
            }
        }
        return (double)b->len;
    }
    last_error = b->err;
    return -1;
}
EXPORT const char *cfjs_output(void) { return output; }

/* Spans too: through a context and cf_render_chat / cf_render. The result
 * stays until the next call of this function (cfjs_result_*). */
static cf_result spans_result;

EXPORT int cfjs_render_spans(const cf_template *t, const cf_render_options *opt, int chat, const char *data,
                             size_t len) {
    cf_result_free(&spans_result);
    memset(&spans_result, 0, sizeof spans_result);
    cf_context *ctx = cf_context_from_json_limits(data, len, opt ? opt->limits : NULL, &last_error);
    if (!ctx) return 0;
    bool ok = chat ? cf_render_chat(t, ctx, opt, &spans_result, &last_error)
                   : cf_render(t, ctx, opt, &spans_result, &last_error);
    cf_context_free(ctx);
    if (!ok) memset(&spans_result, 0, sizeof spans_result);
    return ok;
}
EXPORT const char *cfjs_result_text(void) { return spans_result.text; }
EXPORT double cfjs_result_len(void) { return (double)spans_result.len; }
EXPORT double cfjs_result_nspans(void) { return (double)spans_result.nspans; }
EXPORT double cfjs_result_span(size_t i, int end) {
    return (double)(end ? spans_result.spans[i].end : spans_result.spans[i].start);
}

/* ---- template sources (files in the module's in-memory file system) ---- */

EXPORT cf_source *cfjs_source_load(const char *what, const char *template_name, int has_tools, int no_repair,
                                   const cf_limits *limits, int from_text, const char *text, size_t len) {
    cf_source *s = calloc(1, sizeof *s);
    if (!s) {
        set_error(CF_ERR_MEMORY, "out of memory");
        return NULL;
    }
    cf_load_options lo = {template_name, has_tools != 0, no_repair != 0, limits};
    bool ok = from_text ? cf_source_from_text(text, len, &lo, s, &last_error)
                        : cf_source_load(what, &lo, s, &last_error);
    if (!ok) {
        free(s);
        return NULL;
    }
    return s;
}
EXPORT void cfjs_source_free(cf_source *s) {
    if (!s) return;
    cf_source_free(s);
    free(s);
}
EXPORT const char *cfjs_source_text(const cf_source *s) { return s->text; }
EXPORT double cfjs_source_len(const cf_source *s) { return (double)s->len; }
EXPORT const cf_context *cfjs_source_tokens(const cf_source *s) { return s->tokens; }
EXPORT const char *cfjs_source_kind(const cf_source *s) { return s->kind; }
EXPORT const char *cfjs_source_name(const cf_source *s) { return s->name; }
EXPORT const char *cfjs_source_warnings(const cf_source *s) { return s->warnings; }
EXPORT int cfjs_source_tag_stripped(const cf_source *s) { return s->looks_tag_stripped; }

/* ---- caps ---- */

EXPORT char *cfjs_caps(const cf_template *t, const cf_context *defaults) {
    return cf_caps_json(t, defaults, &last_error);
}

/* ---- replies ---- */

typedef struct ReplyOptions {
    cf_reply_options opt;
    char *tools, *tail;
} ReplyOptions;

static char *copy_string(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* format: a name ("glm45", "hermes", "command-a", "plain"); json_response:
 * the request asked for a JSON answer. NULL + error for an unknown name or
 * no memory. */
EXPORT cf_reply_options *cfjs_reply_options_new(const char *format, const char *tools_json,
                                                const char *prompt_tail, int reasoning_open,
                                                const cf_limits *limits, int json_response) {
    ReplyOptions *o = calloc(1, sizeof *o);
    if (!o) {
        set_error(CF_ERR_MEMORY, "out of memory");
        return NULL;
    }
    if (!cf_reply_format_from_name(format, &o->opt.format)) {
        free(o);
        set_error(CF_ERR_USAGE, "unknown reply format (glm45, hermes, command-a, plain)");
        return NULL;
    }
    o->tools = copy_string(tools_json);
    o->tail = copy_string(prompt_tail);
    if ((tools_json && !o->tools) || (prompt_tail && !o->tail)) {
        free(o->tools);
        free(o->tail);
        free(o);
        set_error(CF_ERR_MEMORY, "out of memory");
        return NULL;
    }
    o->opt.tools_json = o->tools;
    o->opt.prompt_tail = o->tail;
    o->opt.reasoning_open = reasoning_open != 0;
    o->opt.json_response = json_response != 0;
    o->opt.limits = limits;
    return &o->opt;
}
EXPORT void cfjs_reply_options_free(cf_reply_options *opt) {
    ReplyOptions *o = (ReplyOptions *)opt;   /* opt is its first member */
    if (!o) return;
    free(o->tools);
    free(o->tail);
    free(o);
}

EXPORT const char *cfjs_reply_format_detect(const char *text, size_t len) {
    return cf_reply_format_name(cf_reply_format_detect(text, len));
}
/* The format found by probing renders through t, as `chatfmt parse --template` finds it. */
EXPORT const char *cfjs_reply_format_of(const cf_template *t, const cf_context *tokens) {
    return cf_reply_format_name(cf_reply_format_of(t, tokens));
}

static size_t reply_len;
EXPORT double cfjs_reply_len(void) { return (double)reply_len; }

/* The message as malloc'd JSON (free with cfjs_free), length in cfjs_reply_len. */
EXPORT char *cfjs_parse_reply(const char *text, size_t len, const cf_reply_options *opt) {
    return cf_parse_reply(text, len, opt, &reply_len, &last_error);
}

EXPORT cf_reply_stream *cfjs_stream_new(const cf_reply_options *opt) { return cf_reply_stream_new(opt, &last_error); }
/* Feed (finish when p is NULL), then the deltas as JSON Lines at the returned
 * pointer, cfjs_reply_len bytes; NULL + error on failure. */
EXPORT const char *cfjs_stream_step(cf_reply_stream *s, const char *p, size_t n, int finish) {
    bool ok = finish ? cf_reply_stream_finish(s, &last_error) : cf_reply_stream_feed(s, p, n, &last_error);
    if (!ok) return NULL;
    return cf_reply_stream_drain(s, &reply_len);
}
EXPORT void cfjs_stream_free(cf_reply_stream *s) { cf_reply_stream_free(s); }

/* ---- built-ins, memory ---- */

EXPORT const char *cfjs_builtin_name(int i) {
    const char *const *names = cf_builtin_names();
    for (int k = 0; k < i; k++)
        if (!names[k]) return NULL;
    return names[i];
}

EXPORT void *cfjs_malloc(size_t n) { return malloc(n); }
EXPORT void cfjs_free(void *p) { free(p); }
EXPORT void cfjs_context_free(cf_context *c) { cf_context_free(c); }
EXPORT void cfjs_template_free(cf_template *t) { cf_template_free(t); }

/* Bytes of the heap in use (the leak test watches it). */
EXPORT double cfjs_heap_in_use(void) { return (double)mallinfo().uordblks; }
