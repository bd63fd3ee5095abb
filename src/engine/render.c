/* render.c — one render of a compiled template, protected: errors thrown
 * anywhere below come back here as a cf_error value. */
#include "render.h"
#include "context.h"
#include "unicode.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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
    /* (len <= buf->len: the text kept of an ASCII buffer is ASCII) */
    out->nchars = buf->ascii_len == buf->len ? len : 0;
    if (spans && spans->n) {
        out->spans = malloc(spans->n * sizeof(cf_span));
        if (!out->spans) rt_oom(rt, spans->n * sizeof(cf_span));   /* buf is freed by the caller */
        size_t chars = utf8_count(text, len);   /* continue_final_message may cut */
        out->nchars = chars;
        for (size_t i = 0; i < spans->n; i++) {
            out->spans[i].start = spans->v[i].start < chars ? spans->v[i].start : chars;
            out->spans[i].end = spans->v[i].end < chars ? spans->v[i].end : chars;
        }
        out->nspans = spans->n;
    }
    out->text = text;
    buf->p = NULL;
}

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

bool render_template(const cf_template *t, const cf_context *ctx, const cf_render_options *opt,
                     const RenderHooks *hooks, cf_result *result, cf_error *err) {
    memset(result, 0, sizeof *result);
    const cf_limits *lim = opt && opt->limits ? opt->limits : &t->lim;
    /* A render's values take a few KiB (median 2 KiB on the seeds): they
     * start on the stack, and only a bigger render mallocs chunks. */
    _Alignas(ARENA_ALIGN) unsigned char first_chunk[8192];
    Arena arena;
    arena_init_borrowed(&arena, 0, first_chunk, sizeof first_chunk);
    RT_PROTECTED(rt, &arena, err, lim);
    arena.limit = rt.lim.max_memory;
    StrBuf out = {0};
    if (setjmp(jb_rt)) {
        arena_release(&arena);
        output_buffer_free(out.p);
        return false;
    }
    RenderInput in = {0};
    in.t = t;
    in.vars = ctx ? ctx->vars : NULL;
    in.now = opt ? opt->now : NULL;   /* NULL: CHATFMT_NOW, read when strftime_now runs */
    in.defaults = opt && opt->defaults ? opt->defaults->vars : NULL;
    size_t hint = atomic_load_explicit(&((cf_template *)t)->output_hint, memory_order_relaxed);
    sb_init_output(&rt, &out, hint > OUTPUT_START ? hint : OUTPUT_START);
    SpanVec spans = {0};
    if (hooks && hooks->prepare) hooks->prepare(&rt, &in, hooks->state);
    interp_run(&rt, &in, &out, &spans);
    size_t kept = hooks && hooks->trim ? hooks->trim(&rt, &out, hooks->state) : out.len;
    note_output_len(t, out.len);
    finish_result(&rt, &out, kept, &spans, result);
    arena_release(&arena);
    return true;
}
