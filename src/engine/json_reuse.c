/* json_reuse.c — cf_json_cache: repeated large member values parsed once
 * (json_reuse.h). A slot watches one top-level member name: the bytes of
 * its last few distinct values, and once the same bytes come again, the
 * value parsed from them, which the next documents with those bytes share. */
#include "json_reuse.h"
#include "context.h"
#include "json.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct ReusedValue {
    atomic_size_t refs;
    Arena arena;
    ReuseHit hit;      /* (held unused) */
};

/* One value a slot remembers: its bytes, and once they came twice, the
 * value parsed from them. */
typedef struct ReuseEntry {
    char *text;         /* the value's bytes (malloc), or NULL: unused */
    size_t len;
    bool seen_twice;    /* to be parsed after the document */
    bool unparsable;    /* these bytes failed alone: do not try again */
    bool multiline;     /* they hold a '\n': no JSON Lines row read in place has them */
    ReusedValue *parsed;
    unsigned last_use;  /* the slot's clock when last stored or matched */
} ReuseEntry;

/* A member name's last few distinct values: a dataset may interleave a few
 * tool lists (agents of different kinds), each repeating every few rows,
 * and one remembered value would be replaced by the other before it came
 * again. */
struct ReuseSlot {
    char key[JSON_REUSE_KEY_MAX];
    size_t key_len;     /* 0: free */
    ReuseEntry entries[JSON_REUSE_WAYS];
    unsigned clock;
    unsigned misses;    /* values in a row that matched none */
    cf_json_cache *cache;
};

struct cf_json_cache {
    ReuseSlot slots[JSON_REUSE_SLOTS];
    bool to_parse;      /* some entry is seen_twice */
    size_t text_bytes;  /* the entries' bytes, at most JSON_REUSE_BUDGET */
    cf_limits lim;      /* resolved; what the values were parsed under */
    bool have_lim;
    Str *key_guesses[JSON_KEY_GUESS_WAYS << JSON_KEY_GUESS_BITS];
};

void json_reused_release(ReusedValue *r) {
    if (!r || atomic_fetch_sub(&r->refs, 1) != 1) return;
    arena_release(&r->arena);
    free(r);
}

static void entry_forget(ReuseSlot *s, ReuseEntry *e) {
    if (e->text) s->cache->text_bytes -= e->len;
    free(e->text);
    e->text = NULL;
    e->len = 0;
    e->seen_twice = e->unparsable = false;
    json_reused_release(e->parsed);
    e->parsed = NULL;
}

static void slot_forget(ReuseSlot *s) {
    if (!s->key_len) return;   /* (never claimed: nothing held) */
    for (int w = 0; w < JSON_REUSE_WAYS; w++) entry_forget(s, &s->entries[w]);
}

void json_reuse_begin(cf_json_cache *c, const cf_limits *lim) {
    if (c->have_lim && !memcmp(&c->lim, lim, sizeof *lim)) return;
    for (int k = 0; k < JSON_REUSE_SLOTS; k++) slot_forget(&c->slots[k]);
    memset(c->key_guesses, 0, sizeof c->key_guesses);   /* (guessed under other limits) */
    c->lim = *lim;
    c->have_lim = true;
}

Str **json_reuse_key_guesses(cf_json_cache *c) { return c->key_guesses; }

ReuseSlot *json_reuse_slot(cf_json_cache *c, const char *key, size_t key_len) {
    if (!key_len || key_len > JSON_REUSE_KEY_MAX) return NULL;
    for (int k = 0; k < JSON_REUSE_SLOTS; k++) {
        ReuseSlot *s = &c->slots[k];
        if (s->key_len == key_len && !memcmp(s->key, key, key_len)) return s;
    }
    for (int k = 0; k < JSON_REUSE_SLOTS; k++) {
        ReuseSlot *s = &c->slots[k];
        if (!s->key_len) {
            memcpy(s->key, key, key_len);
            s->key_len = key_len;
            s->cache = c;
            return s;
        }
    }
    return NULL;
}

bool json_reuse_match(ReuseSlot *s, const char *p, size_t avail, bool one_line, ReuseHit *hit, bool *same_bytes) {
    *same_bytes = false;
    for (int w = 0; w < JSON_REUSE_WAYS; w++) {
        ReuseEntry *e = &s->entries[w];
        if (one_line && e->multiline) continue;   /* (it would run past the row's '\n') */
        /* (a changed value most often differs at its end, and shares a long
         * start with the remembered one: its last bytes are compared first) */
        if (!e->text || e->len > avail || !mem_equal(p + e->len - 16, e->text + e->len - 16, 16) ||
            memcmp(p, e->text, e->len) != 0)
            continue;
        *same_bytes = true;
        s->misses = 0;
        e->last_use = ++s->clock;
        if (!e->parsed) {
            e->seen_twice = !e->unparsable;
            s->cache->to_parse |= e->seen_twice;
            return false;
        }
        *hit = e->parsed->hit;
        atomic_fetch_add(&e->parsed->refs, 1);
        hit->held = e->parsed;
        return true;
    }
    return false;
}

void json_reuse_remember(ReuseSlot *s, const char *p, size_t len) {
    /* A member that keeps changing (the messages) is copied on a few rows
     * only, so that a new repeating value is still found soon. */
    unsigned misses = s->misses++;
    if (len < JSON_REUSE_MIN_BYTES || (misses >= 4 && misses % 16 != 0)) return;
    ReuseEntry *e = &s->entries[0];   /* a free entry, else the least recently used */
    for (int w = 1; w < JSON_REUSE_WAYS && e->text; w++)
        if (!s->entries[w].text || s->entries[w].last_use < e->last_use) e = &s->entries[w];
    entry_forget(s, e);
    if (len > JSON_REUSE_BUDGET - s->cache->text_bytes) return;   /* (an optimisation only: nothing is lost) */
    e->text = malloc(len);
    if (!e->text) return;
    memcpy(e->text, p, len);
    e->len = len;
    e->multiline = memchr(p, '\n', len) != NULL;
    s->cache->text_bytes += len;
    e->last_use = ++s->clock;
}

/* Parse a slot's bytes alone, one nesting level shallower than the limits
 * say (in a document they sit one level down). */
static ReusedValue *parse_alone(const ReuseEntry *s, const cf_limits *lim) {
    if (lim->max_json_depth < 2) return NULL;
    ReusedValue *volatile r = malloc(sizeof *r);
    if (!r) return NULL;
    atomic_init(&r->refs, 1);
    arena_init(&r->arena, 0);
    cf_limits alone_storage = *lim;
    const cf_limits *alone = &alone_storage;
    alone_storage.max_json_depth--;
    RT_PROTECTED(rt, &r->arena, NULL, alone);
    if (setjmp(jb_rt)) {
        arena_release(&r->arena);
        free(r);
        return NULL;
    }
    JsonMeasure m;
    r->hit.value = json_parse_measured(&rt, s->text, s->len, &m);
    r->hit.len = s->len;
    r->hit.items = m.items;
    r->hit.deepest = m.deepest;
    r->hit.verbatim = m.verbatim;
    r->hit.held = NULL;
    return r;
}

void json_reuse_finish(cf_json_cache *c) {
    if (!c->to_parse) return;
    c->to_parse = false;
    for (int k = 0; k < JSON_REUSE_SLOTS; k++) {
        for (int w = 0; w < JSON_REUSE_WAYS; w++) {
            ReuseEntry *e = &c->slots[k].entries[w];
            if (!e->seen_twice) continue;
            e->seen_twice = false;
            e->parsed = parse_alone(e, &c->lim);
            e->unparsable = !e->parsed;
        }
    }
}

CF_API cf_json_cache *cf_json_cache_new(void) { return calloc(1, sizeof(cf_json_cache)); }

CF_API void cf_json_cache_free(cf_json_cache *c) {
    if (!c) return;
    for (int k = 0; k < JSON_REUSE_SLOTS; k++) slot_forget(&c->slots[k]);
    free(c);
}

CF_API cf_context *cf_context_from_jsonl_cached(const char *text, size_t avail, size_t *line_len,
                                                const cf_limits *limits, cf_json_cache *cache) {
    *line_len = SIZE_MAX;
    if (!cache) return NULL;
    cf_context *volatile c = context_alloc(0);
    if (!c) return NULL;
    RT_PROTECTED(rt, &c->arena, NULL, limits);   /* (any failure reads the line again, which reports it) */
    if (setjmp(jb_rt)) {
        cf_context_free(c);
        json_reuse_finish(cache);
        *line_len = SIZE_MAX;
        return NULL;
    }
    json_reuse_begin(cache, &rt.lim);
    size_t end;
    Value v = json_parse_line_reusing(&rt, text, avail, &end, cache, c->held, &c->nheld);
    if (v.type != VT_DICT) rt_throw(&rt, CF_ERR_TYPE, "context must be a JSON object");
    c->vars = v.u.dict;
    json_reuse_finish(cache);
    *line_len = end;
    return c;
}

CF_API cf_context *cf_context_from_json_cached(const char *json, size_t len, const cf_limits *limits,
                                               cf_json_cache *cache, cf_error *err) {
    if (!cache) return cf_context_from_json_limits(json, len, limits, err);
    cf_context *volatile c = context_alloc(0);
    if (!c) {
        if (err) error_set(err, CF_ERR_MEMORY, 0, 0, "out of memory");
        return NULL;
    }
    RT_PROTECTED(rt, &c->arena, err, limits);
    if (setjmp(jb_rt)) {
        cf_context_free(c);
        json_reuse_finish(cache);
        return NULL;
    }
    json_reuse_begin(cache, &rt.lim);
    Value v = json_parse_reusing(&rt, json, len, cache, c->held, &c->nheld);
    if (v.type != VT_DICT) rt_throw(&rt, CF_ERR_TYPE, "context must be a JSON object, not %s", v_type_name(v));
    c->vars = v.u.dict;
    json_reuse_finish(cache);
    return c;
}
