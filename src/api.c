/* api.c — the public entry points: compile, contexts, render (raw and chat
 * mode). Each entry point sets up an Rt with a jmp_buf so that errors thrown
 * anywhere below come back here as cf_error values. */
#include "chatfmt.h"
#include "engine/ast.h"
#include "chat/caps.h"
#include "engine/context.h"
#include "engine/interp.h"
#include "engine/lexer.h"
#include "engine/json.h"
#include "engine/unicode.h"
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>


/* Run `body` with a fresh runtime over `arena`; true on success. */
#define PROTECTED(rtvar, arena_ptr, err_ptr, lim_ptr)                  \
    jmp_buf jb_##rtvar;                                                 \
    cf_error scratch_##rtvar;                                           \
    Rt rtvar;                                                           \
    memset(&rtvar, 0, sizeof rtvar);                                    \
    rtvar.arena = (arena_ptr);                                          \
    rtvar.jb = &jb_##rtvar;                                             \
    rtvar.err = (err_ptr) ? (err_ptr) : &scratch_##rtvar;               \
    rtvar.err->kind = CF_OK;        /* the 1 KiB message only on error */ \
    rtvar.err->line = rtvar.err->column = 0;                            \
    rtvar.err->offset = 0;                                              \
    rtvar.err->message[0] = '\0';                                       \
    if ((const cf_limits *)(lim_ptr)) rtvar.lim = *(const cf_limits *)(lim_ptr); \
    limits_resolve(&rtvar.lim);


/* ---- templates ---- */

CF_API cf_template *cf_compile(const char *src, size_t len, const cf_compile_options *opt,
                               cf_error *err) {
    cf_template *volatile t = calloc(1, sizeof(cf_template));
    if (!t) {
        if (err) error_set(err, CF_ERR_MEMORY, 0, 0, "out of memory");
        return NULL;
    }
    if (opt && opt->limits) t->lim = *opt->limits;
    limits_resolve(&t->lim);
    arena_init(&t->arena, t->lim.max_memory);   /* compiling is bounded too */
    PROTECTED(rt, &t->arena, err, &t->lim);
    if (setjmp(jb_rt)) {
        arena_release(&t->arena);
        free(t->name);
        free(t);
        return NULL;
    }
    size_t bad;
    if (!utf8_validate(src, len, &bad)) {
        rt.err->offset = bad;
        rt_throw(&rt, CF_ERR_UNICODE, "'utf-8' codec can't decode byte 0x%02x in position %zu: invalid utf-8",
                 (unsigned char)src[bad], bad);
    }
    if (len > rt.lim.max_json_bytes && len > ((size_t)256 << 20))
        rt_throw(&rt, CF_ERR_LIMIT, "template larger than 256 MiB");
    if (opt && opt->name) {
        t->name = strdup(opt->name);
        if (!t->name) rt_oom(&rt, strlen(opt->name));
    }
    t->source = lex_normalize_source(&rt, src, len);
    parse_template(&rt, t);
    t->source_has_content = cf_memmem(t->source->data, t->source->len, "content", 7) != NULL;
    return t;
}

CF_API void cf_template_free(cf_template *t) {
    if (!t) return;
    arena_release(&t->arena);
    free(t->name);
    free(t);
}

CF_API const char *cf_template_source(const cf_template *t, size_t *len) {
    if (len) *len = t->source->len;
    return t->source->data;
}

/* ---- contexts ---- */

cf_context *context_alloc(size_t memory_limit) {
    size_t head = (sizeof(cf_context) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    cf_context *c = context_block_take();
    if (!c) c = malloc(head + CONTEXT_FIRST_CHUNK);   /* (malloc aligns to 16) */
    if (!c) return NULL;
    arena_init_borrowed(&c->arena, memory_limit, (unsigned char *)c + head, CONTEXT_FIRST_CHUNK);
    c->vars = NULL;
    return c;
}

CF_API cf_context *cf_context_new(void) {
    cf_context *volatile c = context_alloc(0);
    if (!c) return NULL;
    PROTECTED(rt, &c->arena, NULL, NULL);
    if (setjmp(jb_rt)) {
        arena_release(&c->arena);
        free(c);
        return NULL;
    }
    c->vars = dict_new(&rt, 16);
    return c;
}

CF_API cf_context *cf_context_from_json(const char *json, size_t len, cf_error *err) {
    return cf_context_from_json_limits(json, len, NULL, err);
}

CF_API cf_context *cf_context_from_json_limits(const char *json, size_t len, const cf_limits *limits,
                                               cf_error *err) {
    cf_context *volatile c = context_alloc(0);
    if (!c) {
        if (err) error_set(err, CF_ERR_MEMORY, 0, 0, "out of memory");
        return NULL;
    }
    PROTECTED(rt, &c->arena, err, limits);
    if (setjmp(jb_rt)) {
        cf_context_free(c);
        return NULL;
    }
    Value v = json_parse(&rt, json, len);
    if (v.type != VT_DICT) rt_throw(&rt, CF_ERR_TYPE, "context must be a JSON object, not %s", v_type_name(v));
    c->vars = v.u.dict;
    return c;
}

static bool context_set(cf_context *c, const char *name, Value (*make)(Rt *, const void *, size_t),
                        const void *arg, size_t len, const cf_limits *limits, cf_error *err) {
    PROTECTED(rt, &c->arena, err, limits);
    if (setjmp(jb_rt)) return false;
    Value v = make(&rt, arg, len);
    dict_set(&rt, c->vars, v_strz(&rt, name), v);
    return true;
}

static Value make_json(Rt *rt, const void *p, size_t n) { return json_parse(rt, p, n); }
static Value make_str(Rt *rt, const void *p, size_t n) {
    size_t bad;
    if (!utf8_validate(p, n, &bad)) {
        rt->err->offset = bad;
        rt_throw(rt, CF_ERR_UNICODE, "invalid UTF-8 at byte %zu", bad);
    }
    return v_str(rt, p, n);
}
static Value make_bool(Rt *rt, const void *p, size_t n) { return v_bool(n != 0); }
static Value make_int(Rt *rt, const void *p, size_t n) { return v_int(*(const int64_t *)p); }

CF_API bool cf_context_set_json(cf_context *c, const char *name, const char *json, size_t len, cf_error *err) {
    return context_set(c, name, make_json, json, len, NULL, err);
}
CF_API bool cf_context_set_json_limits(cf_context *c, const char *name, const char *json, size_t len,
                                       const cf_limits *limits, cf_error *err) {
    return context_set(c, name, make_json, json, len, limits, err);
}
CF_API bool cf_context_set_string(cf_context *c, const char *name, const char *s, size_t len) {
    return context_set(c, name, make_str, s, len, NULL, NULL);
}
CF_API bool cf_context_set_bool(cf_context *c, const char *name, bool v) {
    return context_set(c, name, make_bool, NULL, v ? 1 : 0, NULL, NULL);
}
CF_API bool cf_context_set_int(cf_context *c, const char *name, int64_t v) {
    return context_set(c, name, make_int, &v, sizeof v, NULL, NULL);
}
CF_API bool cf_context_has(const cf_context *c, const char *name) {
    Value v;
    return dict_get_str(c->vars, name, strlen(name), &v);
}
CF_API bool cf_context_has_value(const cf_context *c, const char *name) {
    Value v;
    return dict_get_str(c->vars, name, strlen(name), &v) && v.type != VT_NONE;
}
CF_API void cf_context_remove(cf_context *c, const char *name) {
    PROTECTED(rt, &c->arena, NULL, NULL);
    if (setjmp(jb_rt)) return;
    dict_del(c->vars, v_strz(&rt, name));
}
CF_API void cf_context_free(cf_context *c) {
    if (!c) return;
    arena_release(&c->arena);
    if (!context_block_put(c)) free(c);
}

/* The variables as one JSON object (json.dumps, ensure_ascii off): what
 * cf_context_from_json reads back into the same variables (tuples become
 * lists). The Python binding pickles a template's special tokens so. */
CF_API char *cf_context_to_json(const cf_context *c, size_t *len, cf_error *err) {
    Arena arena;
    arena_init(&arena, 0);
    PROTECTED(rt, &arena, err, NULL);
    if (setjmp(jb_rt)) {
        arena_release(&arena);
        return NULL;
    }
    StrBuf sb;
    sb_init(&rt, &sb, 256);
    JsonDumpOpts o;
    json_opts_default(&o);
    o.ensure_ascii = false;
    json_dump(&rt, &sb, c && c->vars ? v_dict_of(c->vars) : v_dict_of(dict_new(&rt, 0)), &o);
    char *json = malloc(sb.len + 1);
    if (!json) rt_oom(&rt, sb.len + 1);
    memcpy(json, sb.p, sb.len);
    json[sb.len] = 0;
    if (len) *len = sb.len;
    arena_release(&arena);
    return json;
}

/* ---- rendering ---- */

CF_API void cf_result_free(cf_result *r) {
    if (!r) return;
    output_buffer_free(r->text);
    free(r->spans);
    memset(r, 0, sizeof *r);
}

/* The result takes over the heap output buffer (len <= its capacity, so
 * there is room for the NUL); spans to code points. */
static void finish_result(Rt *rt, StrBuf *buf, size_t len, const SpanVec *spans, cf_result *out) {
    char *text = buf->p;
    text[len] = 0;
    out->len = len;
    out->spans = NULL;
    out->nspans = 0;
    if (spans && spans->n) {
        out->spans = malloc(spans->n * sizeof(cf_span));
        if (!out->spans) rt_oom(rt, spans->n * sizeof(cf_span));   /* buf is freed by the caller */
        size_t chars = utf8_count(text, len);   /* continue_final_message may cut */
        for (size_t i = 0; i < spans->n; i++) {
            out->spans[i].start = spans->v[i].start < chars ? spans->v[i].start : chars;
            out->spans[i].end = spans->v[i].end < chars ? spans->v[i].end : chars;
        }
        out->nspans = spans->n;
    }
    out->text = text;
    buf->p = NULL;
}

typedef struct RenderCall {
    const cf_template *t;
    const cf_context *ctx;
    const cf_render_options *opt;
    cf_result *out;
} RenderCall;

/* A render's output buffer starts at OUTPUT_START bytes, or at the longest
 * output the template gave so far, up to OUTPUT_HINT_MAX (under malloc's
 * mmap threshold: a bigger buffer would be new pages, faulted in, each
 * render). */
enum { OUTPUT_START = 4096, OUTPUT_HINT_MAX = 96 << 10 };

static void note_output_len(const cf_template *t, size_t len) {
    _Atomic size_t *hint = &((cf_template *)t)->output_hint;
    if (len > OUTPUT_HINT_MAX) len = OUTPUT_HINT_MAX;
    if (len > atomic_load_explicit(hint, memory_order_relaxed)) atomic_store_explicit(hint, len, memory_order_relaxed);
}

static bool render_common(const RenderCall *rc, bool chat, cf_error *err) {
    memset(rc->out, 0, sizeof *rc->out);
    const cf_limits *lim = rc->opt && rc->opt->limits ? rc->opt->limits : &rc->t->lim;
    /* A render's values take a few KiB (median 2 KiB on the seeds): they
     * start on the stack, and only a bigger render mallocs chunks. */
    _Alignas(ARENA_ALIGN) unsigned char first_chunk[8192];
    Arena arena;
    arena_init_borrowed(&arena, 0, first_chunk, sizeof first_chunk);
    PROTECTED(rt, &arena, err, lim);
    arena.limit = rt.lim.max_memory;
    StrBuf out = {0};
    if (setjmp(jb_rt)) {
        arena_release(&arena);
        output_buffer_free(out.p);
        return false;
    }
    RenderInput in = {0};
    in.t = rc->t;
    in.vars = rc->ctx ? rc->ctx->vars : NULL;
    in.now = rc->opt ? rc->opt->now : NULL;   /* NULL: CHATFMT_NOW, read when strftime_now runs */
    in.defaults = rc->opt && rc->opt->defaults ? rc->opt->defaults->vars : NULL;
    size_t hint = atomic_load_explicit(&((cf_template *)rc->t)->output_hint, memory_order_relaxed);
    sb_init_output(&rt, &out, hint > OUTPUT_START ? hint : OUTPUT_START);
    SpanVec spans = {0};
    if (!chat) {
        interp_run(&rt, &in, &out, &spans);
        note_output_len(rc->t, out.len);
        finish_result(&rt, &out, out.len, &spans, rc->out);
        arena_release(&arena);
        return true;
    }
    /* Chat mode: hf_render.py's render() step by step. */
    static const char TAG[] = "CONTINUE_FINAL_MESSAGE_TAG ";
    const size_t TAGLEN = sizeof TAG - 1;
    Value messages, v;
    const Dict *vars = in.vars;
    Str *const *key = rc->t->chat_key;
    if (!vars || !dict_get_key(vars, key[CHAT_MESSAGES], &messages)) rt_throw(&rt, CF_ERR_KEY, "'messages'");
    in.chat_mode = true;
    in.chat[CHAT_TOOLS] = dict_get_key(vars, key[CHAT_TOOLS], &v) ? v : v_none();
    in.chat[CHAT_DOCUMENTS] = dict_get_key(vars, key[CHAT_DOCUMENTS], &v) ? v : v_none();
    in.chat[CHAT_AGP] = dict_get_key(vars, key[CHAT_AGP], &v) ? v : v_bool(false);
    in.chat[CHAT_CONTINUE] = v_missing();   /* popped: not a template variable */
    Value cont = v_bool(false);
    if (dict_get_key(vars, key[CHAT_CONTINUE], &v)) cont = v;
    Value final_text = v_missing();
    bool cfm = v_truthy(cont);
    if (cfm) {
        Value field = cont.type == VT_STR ? cont : v_strz(&rt, "content");
        Value last = v_getitem(&rt, messages, v_int(-1));
        if (last.type == VT_UNDEFINED) v_undefined_fail(&rt, last);
        if (last.type != VT_DICT) rt_throw(&rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute 'get'", v_type_name(last));
        Value final;
        if (!dict_get(last.u.dict, field, &final) || final.type == VT_NONE)
            rt_throw(&rt, CF_ERR_VALUE, "continue_final_message is set but the final message has no \"%s\" to continue!", field.u.s->data);
        Str *src = rc->t->source;
        bool in_source = field.u.s->len == 7 && memcmp(field.u.s->data, "content", 7) == 0
                             ? rc->t->source_has_content
                             : cf_memmem(src->data, src->len, field.u.s->data, field.u.s->len) != NULL;
        if (!in_source)
            rt_throw(&rt, CF_ERR_VALUE, "continue_final_message is set to \"%s\" but this is not an accepted field in the chat_template", field.u.s->data);
        Dict *new_last = dict_new(&rt, dict_len(last.u.dict));
        for (size_t i = 0; i < dict_len(last.u.dict); i++) dict_set(&rt, new_last, dict_key_at(last.u.dict, i), dict_val_at(last.u.dict, i));
        if (final.type == VT_LIST || final.type == VT_TUPLE) {
            List *blocks = list_new(&rt, final.u.list->len);
            for (size_t i = 0; i < final.u.list->len; i++) list_push(&rt, blocks, final.u.list->items[i]);
            bool found = false;
            for (size_t i = blocks->len; i-- > 0;) {
                Value b = blocks->items[i];
                Value text;
                if (b.type == VT_DICT && dict_get_str(b.u.dict, "text", 4, &text)) {
                    final_text = text;
                    Dict *nb = dict_new(&rt, dict_len(b.u.dict));
                    for (size_t j = 0; j < dict_len(b.u.dict); j++) dict_set(&rt, nb, dict_key_at(b.u.dict, j), dict_val_at(b.u.dict, j));
                    if (text.type != VT_STR) rt_throw(&rt, CF_ERR_TYPE, "unsupported operand type(s) for +: '%s' and 'str'", v_type_name(text));
                    StrBuf sb;
                    sb_init(&rt, &sb, text.u.s->len + TAGLEN);
                    sb_put(&sb, text.u.s->data, text.u.s->len);
                    sb_put(&sb, TAG, TAGLEN);
                    dict_set(&rt, nb, v_strz(&rt, "text"), sb_to_value(&sb));
                    blocks->items[i] = v_dict_of(nb);
                    found = true;
                    break;
                }
            }
            if (!found)
                rt_throw(&rt, CF_ERR_VALUE, "continue_final_message is set but we could not find any text to continue in the final message!");
            Value nl = final;
            nl.u.list = blocks;
            dict_set(&rt, new_last, field, nl);
        } else {
            if (final.type != VT_STR) rt_throw(&rt, CF_ERR_TYPE, "unsupported operand type(s) for +: '%s' and 'str'", v_type_name(final));
            final_text = final;
            StrBuf sb;
            sb_init(&rt, &sb, final.u.s->len + TAGLEN);
            sb_put(&sb, final.u.s->data, final.u.s->len);
            sb_put(&sb, TAG, TAGLEN);
            dict_set(&rt, new_last, field, sb_to_value(&sb));
        }
        List *msgs = list_new(&rt, messages.u.list->len);
        for (size_t i = 0; i + 1 < messages.u.list->len; i++) list_push(&rt, msgs, messages.u.list->items[i]);
        list_push(&rt, msgs, v_dict_of(new_last));
        messages = v_list_of(msgs);
    }
    if (rc->opt && rc->opt->polyfill)
        messages = polyfill_messages(&rt, rc->t, rc->opt->defaults, messages);
    in.chat[CHAT_MESSAGES] = messages;
    interp_run(&rt, &in, &out, &spans);
    size_t outlen = out.len;
    if (cfm) {
        Args noargs = {0};
        Value stripped;
        if (final_text.type != VT_STR || !method_call(&rt, final_text, "strip", 5, &noargs, &stripped))
            rt_throw(&rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute 'strip'", v_type_name(final_text));
        const char *tag = TAG;
        size_t tn = TAGLEN - 1;   /* the tag without its trailing space */
        /* (both are near the end: searched from there) */
        const char *tag_at = cf_memrmem(out.p, out.len, tag, tn);
        if (!cf_memrmem(out.p, out.len, stripped.u.s->data, stripped.u.s->len) || !tag_at)
            rt_throw(&rt, CF_ERR_VALUE, "continue_final_message is set but the final message does not appear in the chat after applying the chat template!");
        size_t loc = (size_t)(tag_at - out.p);   /* rindex */
        if (loc + TAGLEN <= out.len && memcmp(out.p + loc, TAG, TAGLEN) == 0) {
            outlen = loc;
        } else {
            Value head = v_str(&rt, out.p, loc), r;
            if (!method_call(&rt, head, "rstrip", 6, &noargs, &r)) r = head;
            outlen = r.u.s->len;
        }
    }
    note_output_len(rc->t, out.len);
    finish_result(&rt, &out, outlen, &spans, rc->out);
    arena_release(&arena);
    return true;
}

CF_API bool cf_render(const cf_template *t, const cf_context *ctx, const cf_render_options *opt,
                      cf_result *out, cf_error *err) {
    RenderCall rc = {t, ctx, opt, out};
    return render_common(&rc, false, err);
}

CF_API bool cf_render_chat(const cf_template *t, const cf_context *ctx,
                           const cf_render_options *opt, cf_result *out, cf_error *err) {
    RenderCall rc = {t, ctx, opt, out};
    return render_common(&rc, true, err);
}
