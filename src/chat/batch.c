/* batch.c — the reference renderer's --batch protocol, with a cache of
 * compiled templates so a file of many cases compiles each template once. */
#include "chatfmt.h"
#include "engine/context.h"
#include "engine/json.h"
#include "engine/render.h"
#include "chat_render.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct CacheEntry {
    char *key;              /* "p:" + path or "t:" + text */
    size_t key_len;
    uint64_t hash;
    cf_template *t;         /* NULL when compiling failed */
    cf_error err;
    struct CacheEntry *next;
} CacheEntry;

struct cf_batch {
    CacheEntry *buckets[256];
    cf_limits lim;
};

/* Keys are whole template texts, hashed on every line: eight bytes a step
 * (collisions only cost a memcmp). */
static uint64_t key_hash(const char *p, size_t n) {
    uint64_t h = 1469598103934665603ULL ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ (unsigned char)p[i]) * 0x100000001b3ULL;
    return h ^ (h >> 32);
}

CF_API cf_batch *cf_batch_new(const cf_limits *limits) {
    cf_batch *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    if (limits) b->lim = *limits;
    limits_resolve(&b->lim);
    return b;
}

CF_API void cf_batch_free(cf_batch *b) {
    if (!b) return;
    for (int i = 0; i < 256; i++) {
        CacheEntry *e = b->buckets[i];
        while (e) {
            CacheEntry *n = e->next;
            cf_template_free(e->t);
            free(e->key);
            free(e);
            e = n;
        }
    }
    free(b);
}

static char *read_whole(const char *path, size_t *len, cf_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(err, CF_ERR_IO, 0, 0, "[Errno 2] No such file or directory: '%s'", path);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (n < cap) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) { free(buf); buf = NULL; break; }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (!buf) { error_set(err, CF_ERR_MEMORY, 0, 0, "out of memory"); return NULL; }
    *len = n;
    return buf;
}

/* Find or compile; returns the entry (t may be NULL with err set). */
static CacheEntry *lookup(cf_batch *b, bool is_path, const char *s, size_t n) {
    uint64_t h = key_hash(s, n) ^ (is_path ? 0x9e3779b97f4a7c15ULL : 0);
    CacheEntry **slot = &b->buckets[h & 255];
    for (CacheEntry *e = *slot; e; e = e->next)
        if (e->hash == h && e->key_len == n + 2 && e->key[0] == (is_path ? 'p' : 't') && memcmp(e->key + 2, s, n) == 0)
            return e;
    CacheEntry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->key = malloc(n + 3);
    if (!e->key) { free(e); return NULL; }
    e->key[0] = is_path ? 'p' : 't';
    e->key[1] = ':';
    memcpy(e->key + 2, s, n);
    e->key[n + 2] = 0;
    e->key_len = n + 2;
    e->hash = h;
    cf_compile_options co = {&b->lim, is_path ? e->key + 2 : NULL};
    if (is_path) {
        size_t len = 0;
        char *text = read_whole(e->key + 2, &len, &e->err);
        if (text) {
            e->t = cf_compile(text, len, &co, &e->err);
            free(text);
        }
    } else {
        e->t = cf_compile(s, n, &co, &e->err);
    }
    e->next = *slot;
    *slot = e;
    return e;
}

/* One output line: literal text and JSON string literals, malloc'd in one
 * block of the exact size. */
enum { WORST_CASE_MAX = 1 << 16 };

typedef struct Piece { const char *p; size_t n; bool quoted; } Piece;

static bool build_line(const Piece *pieces, int npieces, char **out, size_t *out_len) {
    /* Room for the worst case (6 bytes a byte) spares measuring the quoted
     * pieces first, unless that room would be big. */
    size_t total = 0, worst = 0;
    for (int i = 0; i < npieces; i++) {
        size_t n = pieces[i].n;
        worst += pieces[i].quoted ? (n < WORST_CASE_MAX ? 6 * n + 2 : WORST_CASE_MAX) : n;
    }
    if (worst < WORST_CASE_MAX) {
        total = worst;
    } else {
        for (int i = 0; i < npieces; i++)
            total += pieces[i].quoted ? json_quoted_len(pieces[i].p, pieces[i].n) : pieces[i].n;
    }
    char *buf = malloc(total + 1);
    if (!buf) return false;
    char *o = buf;
    for (int i = 0; i < npieces; i++) {
        if (pieces[i].quoted) {
            o += json_quote_to(o, pieces[i].p, pieces[i].n);
        } else {
            memcpy(o, pieces[i].p, pieces[i].n);
            o += pieces[i].n;
        }
    }
    *o = 0;
    *out = buf;
    *out_len = (size_t)(o - buf);
    return true;
}

#define LITERAL(s) {s, sizeof s - 1, false}

static bool emit_error(const cf_error *err, char **out, size_t *out_len) {
    const char *kind = cf_error_kind_name(err->kind);
    Piece parts[] = {LITERAL("{\"ok\": false, \"error_type\": "), {kind, strlen(kind), true},
                     LITERAL(", \"error\": "), {err->message, strlen(err->message), true}, LITERAL("}")};
    return build_line(parts, 5, out, out_len);
}

CF_API bool cf_batch_line(cf_batch *b, const char *line, size_t len, char **out, size_t *out_len) {
    cf_context ctx;
    _Alignas(ARENA_ALIGN) unsigned char first_chunk[CONTEXT_FIRST_CHUNK];
    memset(&ctx, 0, sizeof ctx);
    arena_init_borrowed(&ctx.arena, 0, first_chunk, sizeof first_chunk);
    jmp_buf jb;
    cf_error err;
    Rt rt;
    memset(&rt, 0, sizeof rt);
    memset(&err, 0, sizeof err);
    rt.arena = &ctx.arena;
    rt.jb = &jb;
    rt.err = &err;
    rt.lim = b->lim;
    if (setjmp(jb)) {
        bool ok = emit_error(&err, out, out_len);
        arena_release(&ctx.arena);
        return ok;
    }
    Value c = json_parse(&rt, line, len);
    if (c.type != VT_DICT) rt_throw(&rt, CF_ERR_TYPE, "case must be a JSON object");
    Value tt, tp, cv, raw;
    CacheEntry *e;
    if (dict_get_str(c.u.dict, "template_text", 13, &tt) && tt.type == VT_STR) {
        e = lookup(b, false, tt.u.s->data, tt.u.s->len);
    } else if (dict_get_str(c.u.dict, "template", 8, &tp) && tp.type == VT_STR) {
        e = lookup(b, true, tp.u.s->data, tp.u.s->len);
    } else {
        rt_throw(&rt, CF_ERR_KEY, "'template'");
    }
    if (!e) rt_oom(&rt, 0);
    if (!e->t) {
        err = e->err;
        longjmp(jb, 1);
    }
    ctx.vars = (dict_get_str(c.u.dict, "context", 7, &cv) && cv.type == VT_DICT) ? cv.u.dict : dict_new(&rt, 0);
    bool is_raw = dict_get_str(c.u.dict, "raw", 3, &raw) && v_truthy(raw);
    cf_result res;
    bool ok = is_raw ? render_template(e->t, &ctx, NULL, NULL, &res, &err) : chat_render(e->t, &ctx, NULL, &res, &err);
    arena_release(&ctx.arena);
    if (!ok) return emit_error(&err, out, out_len);
    Piece parts[] = {LITERAL("{\"ok\": true, \"output\": "), {res.text, res.len, true}, LITERAL("}")};
    ok = build_line(parts, 3, out, out_len);
    cf_result_free(&res);
    return ok;
}
