/* value.c — Python-semantics values: strings, lists, dicts, string builder,
 * str()/repr(), equality, ordering, hashing and the Jinja2 sandbox's
 * attribute/item lookup. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "value.h"
#include "complex.h"
#include "builtins.h"
#include "unicode.h"

/* Python raises RecursionError past ~1000 frames; values nested deeper than
 * this (only buildable by a looping template) are refused rather than
 * overflowing the C stack. */
#define VALUE_MAX_DEPTH 1000

/* ======================================================================
 * Strings
 * ====================================================================== */

Value v_object(Rt *rt, ValueType vt, const ObjType *type, void *data) {
    Obj *o = rt_alloc(rt, sizeof(Obj));
    o->type = type;
    o->data = data;
    Value v = {0};
    v.type = (uint8_t)vt;
    v.u.obj = o;
    return v;
}

Str *str_alloc(Rt *rt, size_t n) {
    if (n > rt->lim.max_string) {
        rt_throw(rt, CF_ERR_LIMIT,
                 "string length limit of %zu bytes exceeded (raise it with --max-string / cf_limits.max_string)",
                 rt->lim.max_string);
    }
    Str *s = rt_alloc(rt, sizeof(Str) + n + 1);
    s->len = n;
    s->nchars = -1;
    s->hash = 0;
    s->data[n] = '\0';
    return s;
}

Str *str_new(Rt *rt, const char *p, size_t n) {
    Str *s = str_alloc(rt, n);
    if (n) memcpy(s->data, p, n);
    return s;
}

Value v_str(Rt *rt, const char *p, size_t n) { return v_str_of(str_new(rt, p, n)); }
Value v_strz(Rt *rt, const char *z) { return v_str(rt, z, strlen(z)); }

Value v_undef_msg(Rt *rt, const char *fmt, ...) {
    char small[256];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    Str *s;
    if (n < 0) n = 0;
    if ((size_t)n < sizeof small) {
        s = str_new(rt, small, (size_t)n);
    } else {
        s = str_alloc(rt, (size_t)n);
        vsnprintf(s->data, (size_t)n + 1, fmt, ap2);
    }
    va_end(ap2);
    return v_undef(s);
}

size_t str_nchars(Str *s) {
    /* Benign cache: every thread would store the same value. */
    if (s->nchars < 0) s->nchars = (int64_t)utf8_count(s->data, s->len);
    return (size_t)s->nchars;
}

/* FNV-1a; 0 is reserved for "not computed". */
static uint32_t hash_bytes(const char *p, size_t n) {
    const unsigned char *u = (const unsigned char *)p;
    uint32_t h = 2166136261u;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {   /* (unrolled: the loop cost more than the hashing) */
        h = (h ^ u[i]) * 16777619u;
        h = (h ^ u[i + 1]) * 16777619u;
        h = (h ^ u[i + 2]) * 16777619u;
        h = (h ^ u[i + 3]) * 16777619u;
    }
    for (; i < n; i++) h = (h ^ u[i]) * 16777619u;
    return h ? h : 1;
}

uint32_t str_hash(Str *s) {
    if (!s->hash) s->hash = hash_bytes(s->data, s->len);
    return s->hash;
}

bool str_eq(const Str *a, const Str *b) {
    return a == b || (a->len == b->len && mem_equal(a->data, b->data, a->len));
}

bool str_eqz(const Str *a, const char *z) {
    size_t n = strlen(z);
    return a->len == n && memcmp(a->data, z, n) == 0;
}

/* ---- big integers (decimal digit strings) ---- */

static const char INT64_MAX_DIGITS[] = "9223372036854775807";
static const char INT64_MIN_DIGITS[] = "9223372036854775808"; /* magnitude */

Value v_bigint(Rt *rt, const char *digits, size_t n) {
    bool neg = n && digits[0] == '-';
    size_t i = (n && (digits[0] == '-' || digits[0] == '+')) ? 1 : 0;
    while (i + 1 < n && digits[i] == '0') i++;       /* canonical: no leading zeros */
    const char *mag = digits + i;
    size_t mlen = n - i;
    if (mlen == 0 || (mlen == 1 && mag[0] == '0')) return v_int(0);
    const char *limit = neg ? INT64_MIN_DIGITS : INT64_MAX_DIGITS;
    if (mlen < 19 || (mlen == 19 && memcmp(mag, limit, 19) <= 0)) {
        uint64_t u = 0;
        for (size_t k = 0; k < mlen; k++) u = u * 10 + (uint64_t)(mag[k] - '0');
        return v_int(neg && u ? -(int64_t)(u - 1) - 1 : (int64_t)u);   /* no overflow at INT64_MIN */
    }
    Str *s = str_alloc(rt, mlen + neg);
    if (neg) s->data[0] = '-';
    memcpy(s->data + neg, mag, mlen);
    Value v = {0};
    v.type = VT_BIGINT;
    v.u.s = s;
    return v;
}

/* Compare two canonical signed decimal strings. */
static int cmp_decimal(const char *a, size_t an, const char *b, size_t bn) {
    bool aneg = an && a[0] == '-', bneg = bn && b[0] == '-';
    if (aneg != bneg) return aneg ? -1 : 1;
    if (aneg) { a++, an--, b++, bn--; }
    int mag = an != bn ? (an < bn ? -1 : 1) : memcmp(a, b, an);
    mag = mag < 0 ? -1 : mag > 0;
    return aneg ? -mag : mag;
}

/* ======================================================================
 * Lists
 * ====================================================================== */

static _Noreturn void throw_too_many_items(Rt *rt) {
    rt_throw(rt, CF_ERR_LIMIT,
             "container of more than %zu items (raise it with --max-items / cf_limits.max_items)",
             rt->lim.max_items);
}

List *list_new(Rt *rt, size_t cap) {
    if (cap > rt->lim.max_items) throw_too_many_items(rt);
    /* one block: header, then the initial items */
    List *l = rt_alloc(rt, sizeof *l + cap * sizeof(Value));
    l->len = 0;
    l->cap = cap;
    l->items = cap ? (Value *)(void *)(l + 1) : NULL;
    l->json = NULL;
    l->tail_owner = NULL;
    return l;
}

uint64_t range_length(int64_t start, int64_t stop, int64_t step) {
    if (step > 0 && stop > start) return ((uint64_t)stop - (uint64_t)start - 1) / (uint64_t)step + 1;
    if (step < 0 && start > stop) return ((uint64_t)start - (uint64_t)stop - 1) / ((uint64_t)-(step + 1) + 1) + 1;
    return 0;
}

Value v_range(Rt *rt, int64_t start, int64_t stop, int64_t step) {
    uint64_t n = range_length(start, stop, step);
    if (n > rt->lim.max_items) throw_too_many_items(rt);
    RangeList *r = rt_alloc(rt, sizeof *r + (size_t)n * sizeof(Value));
    r->list.len = r->list.cap = (size_t)n;
    r->list.items = n ? (Value *)(void *)(r + 1) : NULL;
    r->list.json = NULL;
    r->list.tail_owner = NULL;
    r->start = start;
    r->stop = stop;
    r->step = step;
    for (uint64_t i = 0; i < n; i++)   /* (no step past the last item: it could overflow) */
        r->list.items[i] = v_int((int64_t)((uint64_t)start + i * (uint64_t)step));
    Value v = v_list_of(&r->list);
    v.flags = VF_RANGE;
    return v;
}

void list_push(Rt *rt, List *l, Value v) {
    l->json = NULL;
    if (l->len == l->cap) {
        if (l->len >= rt->lim.max_items) throw_too_many_items(rt);
        size_t cap = l->cap ? l->cap * 2 : 4;
        if (cap > rt->lim.max_items) cap = rt->lim.max_items;
        l->items = rt_realloc(rt, l->items, l->cap * sizeof(Value), cap * sizeof(Value));
        l->cap = cap;
    }
    l->items[l->len++] = v;
}

/* ======================================================================
 * Dicts: entries in insertion order; a hash index of entry positions once
 * the dict outgrows a linear scan.
 * ====================================================================== */

#define SLOT_EMPTY UINT32_MAX

const JsonSource *dict_json_source(const Dict *d) { return d->json; }
void dict_set_json_source(Dict *d, const JsonSource *js) { d->json = js; }

static void index_rebuild(Rt *rt, Dict *d, size_t want_len);

Dict *dict_new(Rt *rt, size_t cap) {
    if (cap > rt->lim.max_items) throw_too_many_items(rt);
    Dict *d = rt_alloc0(rt, sizeof *d);
    d->cap = cap;
    d->entries = cap ? rt_alloc(rt, cap * sizeof(DictEntry)) : NULL;
    if (cap > DICT_LINEAR_MAX) index_rebuild(rt, d, cap);
    return d;
}

/* The index first: it was made after the entries. */
void dict_free(Rt *rt, Dict *d) {
    if (d->index) rt_free(rt, d->index, (d->index_mask + 1) * sizeof(uint32_t));
    rt_free(rt, d->entries, d->cap * sizeof(DictEntry));
    rt_free(rt, d, sizeof *d);
}

size_t dict_len(const Dict *d) { return d->len; }
Value dict_key_at(const Dict *d, size_t i) { return d->entries[i].key; }
Value dict_val_at(const Dict *d, size_t i) { return d->entries[i].val; }

static void index_insert(Dict *d, uint32_t hash, uint32_t pos) {
    size_t slot = hash & d->index_mask;
    while (d->index[slot] != SLOT_EMPTY) slot = (slot + 1) & d->index_mask;
    d->index[slot] = pos;
}

static void index_fill(Dict *d) {
    for (size_t i = 0; i <= d->index_mask; i++) d->index[i] = SLOT_EMPTY;
    for (size_t i = 0; i < d->len; i++) index_insert(d, d->entries[i].hash, (uint32_t)i);
}

/* Keep the index at most half full. */
static void index_rebuild(Rt *rt, Dict *d, size_t want_len) {
    size_t slots = 16;
    while (slots < want_len * 2) slots *= 2;
    if (d->index && d->index_mask + 1 >= slots) return;
    if (d->index) rt_free(rt, d->index, (d->index_mask + 1) * sizeof(uint32_t));   /* (the dict's own) */
    d->index = rt_alloc(rt, slots * sizeof(uint32_t));
    d->index_mask = slots - 1;
    index_fill(d);
}

Dict *dict_claim(Rt *rt, Dict *d, size_t more) {
    size_t n = d->len + more;
    bool index_fits = d->index ? n * 2 <= d->index_mask + 1 : n <= DICT_LINEAR_MAX;
    if (d->tail_owner != rt->arena || d->cap - d->len < more || !index_fits) return NULL;
    Dict *c = rt_alloc(rt, sizeof *c);
    *c = (Dict){.len = d->len, .cap = d->cap, .entries = d->entries, .index = d->index,
                .index_mask = d->index_mask, .tail_owner = rt->arena};
    d->cap = d->len;   /* (its room is c's now: a tail is claimed once) */
    d->tail_owner = NULL;
    return c;
}

void dict_fill_copy(Dict *d, const Dict *src) {
    if (!src->len) return;
    memcpy(d->entries, src->entries, src->len * sizeof(DictEntry));
    d->len = src->len;
    d->json = NULL;
    if (d->index) {
        for (size_t i = 0; i < d->len; i++) index_insert(d, d->entries[i].hash, (uint32_t)i);
    }
}

/* Entry position of `key` or -1. `eq` decides key equality. */
static long dict_find(const Dict *d, uint32_t hash, bool (*eq)(const DictEntry *, const void *),
                      const void *ctx) {
    if (!d->index) {
        for (size_t i = 0; i < d->len; i++)
            if (d->entries[i].hash == hash && eq(&d->entries[i], ctx)) return (long)i;
        return -1;
    }
    for (size_t slot = hash & d->index_mask; d->index[slot] != SLOT_EMPTY;
         slot = (slot + 1) & d->index_mask) {
        if (d->index[slot] >= d->len) continue;   /* a later dict's, sharing the index (dict_claim) */
        const DictEntry *e = &d->entries[d->index[slot]];
        if (e->hash == hash && eq(e, ctx)) return (long)d->index[slot];
    }
    return -1;
}

static bool entry_key_equals_value(const DictEntry *e, const void *ctx) {
    return v_equal(e->key, *(const Value *)ctx);
}

typedef struct { const char *p; size_t n; } RawStr;

static bool entry_key_equals_raw(const DictEntry *e, const void *ctx) {
    const RawStr *k = ctx;
    return e->key.type == VT_STR && e->key.u.s->len == k->n && memcmp(e->key.u.s->data, k->p, k->n) == 0;
}

static const char *unhashable_type_name(Value v, int depth);

static inline bool entry_is_str(const DictEntry *e, uint32_t h, const Str *key);

/* Position of a str key (the JSON readers' and templates' only kind), or -1. */
static long dict_find_str(const Dict *d, uint32_t h, const Str *key) {
    if (!d->index) {
        for (size_t i = 0; i < d->len; i++)
            if (entry_is_str(&d->entries[i], h, key)) return (long)i;
        return -1;
    }
    for (size_t slot = h & d->index_mask; d->index[slot] != SLOT_EMPTY; slot = (slot + 1) & d->index_mask)
        if (d->index[slot] < d->len && entry_is_str(&d->entries[d->index[slot]], h, key)) return (long)d->index[slot];
    return -1;
}

/* dict_set (replace: the last value wins) and dict_add (the first value
 * stays): one lookup either way. True when the key was added. */
static ALWAYS_INLINE bool dict_put(Rt *rt, Dict *d, Value key, Value val, bool replace) {
    d->json = NULL;
    uint32_t hash;
    long pos;
    if (key.type == VT_STR) {   /* a str hashes and compares as its bytes (Markup too) */
        hash = str_hash(key.u.s);
        pos = dict_find_str(d, hash, key.u.s);
    } else {
        const char *bad = unhashable_type_name(key, 0);
        if (bad) rt_throw(rt, CF_ERR_TYPE, "unhashable type: '%s'", bad);
        hash = v_hash(key);
        pos = dict_find(d, hash, entry_key_equals_value, &key);
    }
    if (pos >= 0) {
        if (replace) d->entries[pos].val = val;   /* Python keeps the first key object too */
        return false;
    }
    if (d->len == d->cap) {
        if (d->len >= rt->lim.max_items || d->len >= SLOT_EMPTY / 4) throw_too_many_items(rt);
        size_t cap = d->cap ? d->cap * 2 : 4;
        if (cap > rt->lim.max_items) cap = rt->lim.max_items;
        d->entries = rt_realloc(rt, d->entries, d->cap * sizeof(DictEntry), cap * sizeof(DictEntry));
        d->cap = cap;
    }
    DictEntry *e = &d->entries[d->len];
    e->key = key;
    if (key.type == VT_STR) {
        Str *known = known_key(key.u.s, hash);   /* (see known_keys.c) */
        if (known) e->key.u.s = known;
    }
    e->val = val;
    e->hash = hash;
    d->len++;
    if (d->index) {
        if (d->len * 2 > d->index_mask + 1) index_rebuild(rt, d, d->len);
        else index_insert(d, hash, (uint32_t)(d->len - 1));
    } else if (d->len > DICT_LINEAR_MAX) {
        index_rebuild(rt, d, d->len);
    }
    return true;
}

void dict_set(Rt *rt, Dict *d, Value key, Value val) { dict_put(rt, d, key, val, true); }

bool dict_add(Rt *rt, Dict *d, Value key, Value val) { return dict_put(rt, d, key, val, false); }

/* A dict of str keys from (key, value) pairs in order, exactly as dict_set
 * one pair at a time would build it (a repeated key keeps its first
 * position and takes the last value): the JSON and marshal readers'
 * constructor. A small one is one allocation, filled without calls. */
static ALWAYS_INLINE Dict *dict_from_pairs(Rt *rt, const Value *kv, size_t npairs, bool resolved) {
    if (npairs > rt->lim.max_items) throw_too_many_items(rt);
    if (npairs > DICT_LINEAR_MAX) {
        Dict *d = dict_new(rt, npairs);
        for (size_t k = 0; k < npairs; k++) dict_set(rt, d, kv[2 * k], kv[2 * k + 1]);
        return d;
    }
    Dict *d = rt_alloc(rt, sizeof *d + npairs * sizeof(DictEntry));
    DictEntry *entries = npairs ? (DictEntry *)(void *)(d + 1) : NULL;
    size_t len = 0;
    for (size_t k = 0; k < npairs; k++) {
        Str *key = kv[2 * k].u.s;
        uint32_t h = str_hash(key);
        size_t j = 0;
        while (j < len && !entry_is_str(&entries[j], h, key)) j++;
        if (j == len) {
            entries[len].key = kv[2 * k];
            Str *known = resolved ? NULL : known_key(key, h);   /* (see known_keys.c) */
            if (known) entries[len].key.u.s = known;
            entries[len].hash = h;
            len++;
        }
        entries[j].val = kv[2 * k + 1];
    }
    d->len = len;
    d->cap = npairs;
    d->entries = entries;
    d->index = NULL;
    d->index_mask = 0;
    d->json = NULL;
    d->tail_owner = NULL;
    return d;
}

Dict *dict_from_str_pairs(Rt *rt, const Value *kv, size_t npairs) { return dict_from_pairs(rt, kv, npairs, false); }
Dict *dict_from_resolved_pairs(Rt *rt, const Value *kv, size_t npairs) { return dict_from_pairs(rt, kv, npairs, true); }

Dict *dict_new_str_pairs(Rt *rt, size_t npairs) {
    if (npairs > DICT_LINEAR_MAX) return dict_new(rt, npairs);
    Dict *d = rt_alloc(rt, sizeof *d + npairs * sizeof(DictEntry));
    dict_init_small(d, (DictEntry *)(void *)(d + 1), npairs);
    return d;
}

Value *dict_str_slot(Rt *rt, Dict *d, Value key) {
    d->json = NULL;   /* (the caller writes the slot) */
    Str *k = key.u.s;
    uint32_t h = str_hash(k);
    if (d->index) {   /* (a big one: as dict_set, which appends a new key) */
        long pos = dict_find_str(d, h, k);
        if (pos < 0) {
            dict_set(rt, d, key, v_none());
            pos = (long)d->len - 1;
        }
        return &d->entries[pos].val;
    }
    size_t j = 0;
    while (j < d->len && !entry_is_str(&d->entries[j], h, k)) j++;
    if (j == d->len) {
        d->entries[j].key = key;
        Str *known = known_key(k, h);   /* (see known_keys.c) */
        if (known) d->entries[j].key.u.s = known;
        d->entries[j].hash = h;
        d->len++;
    }
    return &d->entries[j].val;
}

Value *dict_known_key_slot(Rt *rt, Dict *d, Str *known) {
    if (d->index) return dict_str_slot(rt, d, v_str_of(known));
    d->json = NULL;   /* (the caller writes the slot) */
    size_t j = 0;   /* a known key is in a dict exactly when its Str is */
    while (j < d->len && !(d->entries[j].key.type == VT_STR && d->entries[j].key.u.s == known)) j++;
    if (j == d->len) {
        d->entries[j].key = v_str_of(known);
        d->entries[j].hash = known->hash;
        d->len++;
    }
    return &d->entries[j].val;
}

bool dict_get(const Dict *d, Value key, Value *out) {
    if (!d->len || unhashable_type_name(key, 0)) return false;
    long pos = dict_find(d, v_hash(key), entry_key_equals_value, &key);
    if (pos < 0) return false;
    if (out) *out = d->entries[pos].val;
    return true;
}

bool dict_get_str(const Dict *d, const char *k, size_t n, Value *out) {
    if (!d->len) return false;
    RawStr raw = {k, n};
    long pos = dict_find(d, hash_bytes(k, n), entry_key_equals_raw, &raw);
    if (pos < 0) return false;
    if (out) *out = d->entries[pos].val;
    return true;
}

static inline bool entry_is_str(const DictEntry *e, uint32_t h, const Str *key) {
    return e->hash == h && e->key.type == VT_STR &&
           (e->key.u.s == key || (e->key.u.s->len == key->len && mem_equal(e->key.u.s->data, key->data, key->len)));
}

/* The rest of dict_get_key: a key whose hash is not cached yet, or a dict
 * big enough to have a hash index. */
static NOINLINE bool dict_get_key_slow(const Dict *d, Str *key, Value *out) {
    uint32_t h = str_hash(key);
    if (!d->index) {
        for (size_t i = 0; i < d->len; i++)
            if (entry_is_str(&d->entries[i], h, key)) { *out = d->entries[i].val; return true; }
        return false;
    }
    for (size_t slot = h & d->index_mask; d->index[slot] != SLOT_EMPTY; slot = (slot + 1) & d->index_mask) {
        if (d->index[slot] >= d->len) continue;   /* (see dict_find) */
        const DictEntry *e = &d->entries[d->index[slot]];
        if (entry_is_str(e, h, key)) { *out = e->val; return true; }
    }
    return false;
}

/* dict_get_key past its first entry of the key's hash: the key's string is
 * compared there (a collision goes on scanning, through the slow path). */
static NOINLINE bool dict_get_key_at(const Dict *d, const DictEntry *e, Str *key, Value *out) {
    const Str *k = e->key.u.s;
    if (k == key || (k->len == key->len && k->len - 1 < 32 && mem_equal(k->data, key->data, k->len))) {
        *out = e->val;
        return true;
    }
    return dict_get_key_slow(d, key, out);
}

/* The renderer's hottest lookup (message.role): the entries' hashes are
 * scanned without a call, so it stays a leaf; the rest leaves by tail calls. */
bool dict_get_key(const Dict *d, Str *key, Value *out) {
    size_t n = d->len;
    if (!n) return false;   /* (entries may be NULL) */
    uint32_t h = key->hash;
    if (d->index || !h) return dict_get_key_slow(d, key, out);
    for (const DictEntry *e = d->entries, *end = e + n; e < end; e++) {
        if (e->hash != h || e->key.type != VT_STR) continue;
        if (e->key.u.s == key) {   /* a known key (known_keys.c), or the same Str */
            *out = e->val;
            return true;
        }
        return dict_get_key_at(d, e, key, out);
    }
    return false;
}

bool dict_del(Dict *d, Value key) {
    d->json = NULL;
    if (!d->len || unhashable_type_name(key, 0)) return false;
    long pos = dict_find(d, v_hash(key), entry_key_equals_value, &key);
    if (pos < 0) return false;
    memmove(&d->entries[pos], &d->entries[pos + 1], (d->len - (size_t)pos - 1) * sizeof(DictEntry));
    d->len--;
    if (d->index) index_fill(d);   /* positions shifted; rare, internal use only */
    return true;
}

/* ======================================================================
 * String builder. The buffer is allocated with a Str header in front, so
 * sb_to_str finishes without copying.
 * ====================================================================== */

/* (Out of line so that the compiler does not check this memcpy against
 * the few-byte buffers whose pieces take the short paths.) */
void copy_bytes_long(char *d, const char *s, size_t n) { memcpy(d, s, n); }

static size_t sb_block_size(size_t cap) { return sizeof(Str) + cap + 1; }

static Str *sb_header(const StrBuf *sb) { return (Str *)(void *)(sb->p - offsetof(Str, data)); }

/* An empty buffer's fields; its capacity never exceeds its limit. */
static void sb_begin(Rt *rt, StrBuf *sb, size_t cap, bool is_output) {
    size_t max = is_output ? rt->lim.max_output : rt->lim.max_string;
    sb->rt = rt;
    sb->len = 0;
    sb->is_output = is_output;
    sb->whole = NULL;
    sb->items = 0;
    sb->bad_type = NULL;
    sb->ascii_len = 0;
    sb->cap = cap < 16 ? 16 : cap;
    if (sb->cap > max) sb->cap = max;
}

void sb_init(Rt *rt, StrBuf *sb, size_t cap) {
    sb_begin(rt, sb, cap, false);
    Str *s = rt_alloc(rt, sb_block_size(sb->cap));
    sb->p = s->data;
}

void sb_init_lazy(Rt *rt, StrBuf *sb) {
    sb_begin(rt, sb, 0, false);
    sb->p = NULL;
    sb->cap = 0;
}

/* The render's output lives on the heap, not in the arena, so that the
 * result takes it over without a copy; the caller frees sb->p. */
void sb_init_output(Rt *rt, StrBuf *sb, size_t cap) {
    sb_begin(rt, sb, cap, true);
    size_t got;
    sb->p = output_buffer_new(sb->cap, &got);
    if (!sb->p) rt_oom(rt, sb->cap + 1);
    if (got > sb->cap) sb->cap = got < rt->lim.max_output ? got : rt->lim.max_output;
}

static void sb_reserve(StrBuf *sb, size_t extra) {
    Rt *rt = sb->rt;
    size_t max = sb->is_output ? rt->lim.max_output : rt->lim.max_string;
    if (extra > max || sb->len > max - extra) {
        if (sb->is_output)
            rt_throw(rt, CF_ERR_LIMIT, "output larger than %zu bytes (raise it with --max-output / cf_limits.max_output)", max);
        rt_throw(rt, CF_ERR_LIMIT,
                 "string length limit of %zu bytes exceeded (raise it with --max-string / cf_limits.max_string)",
                 max);
    }
    size_t need = sb->len + extra;
    if (sb->p && need <= sb->cap) return;
    if (!sb->p) {            /* finished by sb_to_str, lazy, or holding a string whole */
        Str *whole = sb->whole;
        sb_init(rt, sb, need);
        if (whole) {
            memcpy(sb->p, whole->data, whole->len);
            sb->len = whole->len;
            sb->ascii_len = str_known_ascii(whole) ? whole->len : SB_ASCII_LOST;
        }
        return;
    }
    size_t cap = sb->cap * 2;
    if (cap < need) cap = need;
    if (cap > max) cap = max;
    if (sb->is_output) {
        char *p = output_buffer_grow(sb->p, cap);
        if (!p) rt_oom(rt, cap + 1);
        sb->p = p;
        sb->cap = cap;
        return;
    }
    Str *s = rt_realloc(rt, sb_header(sb), sb_block_size(sb->cap), sb_block_size(cap));
    sb->p = s->data;
    sb->cap = cap;
}

/* The slow halves of sb_put / sb_putc (value.h): the buffer must grow. */
void sb_put_grow(StrBuf *sb, const char *p, size_t n) {
    if (!n) return;
    sb_reserve(sb, n);
    memcpy(sb->p + sb->len, p, n);
    sb->len += n;
}

void sb_putc_grow(StrBuf *sb, char c) {
    sb_reserve(sb, 1);
    sb->p[sb->len++] = c;
}

void sb_puts(StrBuf *sb, const char *z) { sb_put(sb, z, strlen(z)); }

/* Two digits a step, written where they go: ints are most of what `join`
 * and `tojson` write, and digits staged in a scratch array and copied on
 * stall the copy's wide load behind the narrow stores. */
static const char DIGIT_PAIRS[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

void sb_put_int(StrBuf *sb, int64_t i) {
    uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    size_t digits = 1;
    for (uint64_t t = u; t >= 10; t /= 10) digits++;
    size_t n = digits + (i < 0);
    if (!sb->p || n > sb->cap - sb->len) sb_reserve(sb, n);
    char *p = sb->p + sb->len + n;
    while (u >= 100) {
        unsigned pair = (unsigned)(u % 100) * 2;
        u /= 100;
        p -= 2;
        p[0] = DIGIT_PAIRS[pair];
        p[1] = DIGIT_PAIRS[pair + 1];
    }
    if (u >= 10) {
        p[-2] = DIGIT_PAIRS[u * 2];
        p[-1] = DIGIT_PAIRS[u * 2 + 1];
        p -= 2;
    } else {
        *--p = (char)('0' + u);
    }
    if (i < 0) *--p = '-';
    sb->len += n;
}

void sb_printf(StrBuf *sb, const char *fmt, ...) {
    char small[256];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof small) {
        sb_put(sb, small, (size_t)n);
    } else if (n > 0) {
        sb_reserve(sb, (size_t)n + 1);   /* room for vsnprintf's NUL; len excludes it */
        vsnprintf(sb->p + sb->len, (size_t)n + 1, fmt, ap2);
        sb->len += (size_t)n;
    }
    va_end(ap2);
}

void sb_put_cp(StrBuf *sb, uint32_t cp) {
    char buf[4];
    sb_put(sb, buf, (size_t)utf8_encode(cp, buf));
}

void sb_materialize(StrBuf *sb) {
    if (!sb->p) sb_reserve(sb, 0);
}

Str *sb_to_str(StrBuf *sb) {
    if (!sb->p && sb->whole) {
        Str *s = sb->whole;
        sb->whole = NULL;
        sb->len = sb->cap = 0;
        return s;
    }
    if (!sb->p) sb_init(sb->rt, sb, 0);
    Str *s = rt_realloc(sb->rt, sb_header(sb), sb_block_size(sb->cap), sb_block_size(sb->len));
    s->len = sb->len;
    s->nchars = sb->ascii_len == sb->len ? (int64_t)sb->len : -1;   /* (a capture of known ASCII stays known) */
    s->hash = 0;
    s->data[s->len] = '\0';
    sb->p = NULL;
    sb->len = sb->cap = 0;
    return s;
}

Value sb_to_value(StrBuf *sb) { return v_str_of(sb_to_str(sb)); }

/* ======================================================================
 * Type names, truthiness
 * ====================================================================== */

static bool is_view(Value v) {
    return v.type == VT_LIST && (v.flags & (VF_VIEW_ITEMS | VF_VIEW_KEYS | VF_VIEW_VALUES));
}


const char *v_type_name(Value v) {
    switch ((ValueType)v.type) {
    case VT_MISSING:
    case VT_UNDEFINED: return "Undefined";
    case VT_NONE: return "NoneType";
    case VT_BOOL: return "bool";
    case VT_INT:
    case VT_BIGINT: return "int";
    case VT_FLOAT: return "float";
    case VT_STR: return (v.flags & VF_MARKUP) ? "Markup" : "str";
    case VT_LIST:
        if (v.flags & VF_RANGE) return "range";
        if (v.flags & VF_GENERATOR) {
            static const char *const names[] = {"generator", "list_reverseiterator", "reversed",
                                                "dict_reversekeyiterator", "dict_reverseitemiterator",
                                                "dict_reversevalueiterator", "range_iterator"};
            return v.iter < sizeof names / sizeof *names ? names[v.iter] : "generator";
        }
        if (v.flags & VF_VIEW_ITEMS) return "dict_items";
        if (v.flags & VF_VIEW_KEYS) return "dict_keys";
        if (v.flags & VF_VIEW_VALUES) return "dict_values";
        return "list";
    case VT_TUPLE: return "tuple";
    case VT_DICT: return "dict";
    case VT_NAMESPACE: return "Namespace";
    case VT_CALLABLE:
    case VT_OBJECT: return v.u.obj->type->name;
    }
    return "object";
}

bool v_truthy(Value v) {
    switch ((ValueType)v.type) {
    case VT_MISSING:
    case VT_UNDEFINED:
    case VT_NONE: return false;
    case VT_BOOL: return v.u.b;
    case VT_INT: return v.u.i != 0;
    case VT_BIGINT: return true;
    case VT_FLOAT: return v.u.f != 0.0;
    case VT_STR: return v.u.s->len != 0;
    case VT_LIST:
        if (v.flags & VF_GENERATOR) return true;   /* a generator object is always true */
        return v.u.list->len != 0;
    case VT_TUPLE: return v.u.list->len != 0;
    case VT_DICT: return v.u.dict->len != 0;
    case VT_NAMESPACE:
    case VT_CALLABLE: return true;
    case VT_OBJECT: return !v_is_complex(v) || complex_truthy(v);
    }
    return true;
}

/* ======================================================================
 * Numbers: exact comparisons across bool/int/bigint/float, as Python.
 * ====================================================================== */

static bool is_number(Value v) {
    return v.type == VT_BOOL || v.type == VT_INT || v.type == VT_BIGINT || v.type == VT_FLOAT;
}

/* bool and int as int64 (only valid for VT_BOOL / VT_INT). */
static int64_t small_int(Value v) { return v.type == VT_BOOL ? (int64_t)v.u.b : v.u.i; }

/* floor(d) as canonical decimal digits; d finite. glibc prints integral
 * doubles exactly. */
static size_t float_floor_digits(double d, char *buf, size_t size) {
    int n = snprintf(buf, size, "%.0f", floor(d));
    if (n > 0 && buf[0] == '-' && buf[1] == '0' && buf[2] == '\0') { buf[0] = '0'; buf[1] = '\0'; n = 1; }
    return n > 0 ? (size_t)n : 0;
}

enum { CMP_UNORDERED = 2 };   /* NaN involved */

static int cmp_int_float(int64_t i, double f) {
    if (isnan(f)) return CMP_UNORDERED;
    if (f >= 9223372036854775808.0) return -1;
    if (f < -9223372036854775808.0) return 1;
    double fl = floor(f);
    int64_t fi = (int64_t)fl;
    if (i != fi) return i < fi ? -1 : 1;
    return f > fl ? -1 : 0;
}

static int cmp_bigint_float(const Str *b, double f) {
    if (isnan(f)) return CMP_UNORDERED;
    if (isinf(f)) return f > 0 ? -1 : 1;
    char buf[400];
    size_t n = float_floor_digits(f, buf, sizeof buf);
    int c = cmp_decimal(b->data, b->len, buf, n);
    if (c) return c;
    return f > floor(f) ? -1 : 0;
}

static int number_rank(Value v) { return v.type == VT_BIGINT ? 2 : v.type == VT_FLOAT ? 1 : 0; }

/* <0, 0, >0 or CMP_UNORDERED; both operands numbers. */
static int cmp_numbers(Value a, Value b) {
    bool a_small = a.type != VT_BIGINT && a.type != VT_FLOAT;
    bool b_small = b.type != VT_BIGINT && b.type != VT_FLOAT;
    if (a_small && b_small) {
        int64_t x = small_int(a), y = small_int(b);
        return x < y ? -1 : x > y;
    }
    if (a.type == VT_FLOAT && b.type == VT_FLOAT) {
        if (isnan(a.u.f) || isnan(b.u.f)) return CMP_UNORDERED;
        return a.u.f < b.u.f ? -1 : a.u.f > b.u.f;
    }
    if (a.type == VT_BIGINT && b.type == VT_BIGINT)
        return cmp_decimal(a.u.s->data, a.u.s->len, b.u.s->data, b.u.s->len);
    /* Mixed kinds: compare with the wider kind (bigint, then float) on the
     * left, then flip the answer back if the operands were swapped. */
    bool swap = number_rank(a) < number_rank(b);
    Value x = swap ? b : a, y = swap ? a : b;
    int c;
    if (x.type == VT_BIGINT) {
        if (y.type == VT_FLOAT) c = cmp_bigint_float(x.u.s, y.u.f);
        else c = x.u.s->data[0] == '-' ? -1 : 1;     /* bigints lie outside int64 */
    } else {                                          /* x float, y small int */
        c = cmp_int_float(small_int(y), x.u.f);
        if (c != CMP_UNORDERED) c = -c;
    }
    if (c == CMP_UNORDERED) return c;
    return swap ? -c : c;
}

/* ======================================================================
 * Equality and hashing
 * ====================================================================== */

static bool equal_depth(Value a, Value b, int depth);

static bool lists_equal(const List *a, const List *b, int depth) {
    if (a == b) return true;
    if (a->len != b->len) return false;
    for (size_t i = 0; i < a->len; i++)
        if (!equal_depth(a->items[i], b->items[i], depth + 1)) return false;
    return true;
}

/* dict_keys / dict_items compare as sets. */
static bool views_equal(Value a, Value b, int depth) {
    if ((a.flags & VF_VIEW_VALUES) || a.flags != b.flags) return a.u.list == b.u.list;
    const List *x = a.u.list, *y = b.u.list;
    if (x->len != y->len) return false;
    for (size_t i = 0; i < x->len; i++) {
        bool found = false;
        for (size_t j = 0; j < y->len && !found; j++) found = equal_depth(x->items[i], y->items[j], depth + 1);
        if (!found) return false;
    }
    return true;
}

static bool dicts_equal(const Dict *a, const Dict *b, int depth) {
    if (a == b) return true;
    if (a->len != b->len) return false;
    for (size_t i = 0; i < a->len; i++) {
        Value other;
        if (!dict_get(b, a->entries[i].key, &other)) return false;
        if (!equal_depth(a->entries[i].val, other, depth + 1)) return false;
    }
    return true;
}

static bool equal_depth(Value a, Value b, int depth) {
    if (depth > VALUE_MAX_DEPTH) return false;   /* Python: RecursionError */
    if (is_number(a) && is_number(b)) return cmp_numbers(a, b) == 0;
    if (v_is_complex(a) || v_is_complex(b)) return complex_equals(a, b);
    bool a_undef = a.type == VT_UNDEFINED || a.type == VT_MISSING;
    bool b_undef = b.type == VT_UNDEFINED || b.type == VT_MISSING;
    if (a_undef || b_undef) return a_undef && b_undef;
    if (a.type != b.type) return false;
    switch ((ValueType)a.type) {
    case VT_NONE: return true;
    case VT_STR: return str_eq(a.u.s, b.u.s);
    case VT_LIST:
        if (is_view(a) || is_view(b)) return is_view(a) && is_view(b) && views_equal(a, b, depth);
        if ((a.flags | b.flags) & VF_GENERATOR) return a.u.list == b.u.list;   /* (by identity) */
        if ((a.flags ^ b.flags) & VF_RANGE) return false;   /* a range equals only a range */
        return lists_equal(a.u.list, b.u.list, depth);
    case VT_TUPLE: return lists_equal(a.u.list, b.u.list, depth);
    case VT_DICT: return dicts_equal(a.u.dict, b.u.dict, depth);
    case VT_NAMESPACE: return a.u.dict == b.u.dict;
    case VT_CALLABLE:
    case VT_OBJECT: return a.u.obj == b.u.obj;
    default: return false;
    }
}

bool v_equal(Value a, Value b) { return equal_depth(a, b, 0); }

/* Name of the first unhashable type inside v (tuples recurse), or NULL. */
static const char *unhashable_type_name(Value v, int depth) {
    switch ((ValueType)v.type) {
    case VT_LIST:   /* dict_values and generators hash by identity, a range by its items */
        return (v.flags & (VF_VIEW_VALUES | VF_GENERATOR | VF_RANGE)) ? NULL : v_type_name(v);
    case VT_DICT: return v_type_name(v);
    case VT_TUPLE:
        if (depth > VALUE_MAX_DEPTH) return "tuple";
        for (size_t i = 0; i < v.u.list->len; i++) {
            const char *bad = unhashable_type_name(v.u.list->items[i], depth + 1);
            if (bad) return bad;
        }
        return NULL;
    default: return NULL;
    }
}

bool v_hashable(Value v) { return unhashable_type_name(v, 0) == NULL; }
const char *v_unhashable_type(Value v) { return unhashable_type_name(v, 0); }

static uint32_t hash_u64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    uint32_t h = (uint32_t)x;
    return h ? h : 1;
}

static uint32_t hash_depth(Value v, int depth) {
    switch ((ValueType)v.type) {
    case VT_MISSING:
    case VT_UNDEFINED: return 0x9e3779b9u;
    case VT_NONE: return 0x85ebca6bu;
    case VT_BOOL:
    case VT_INT: return hash_u64((uint64_t)small_int(v));
    case VT_BIGINT: return hash_bytes(v.u.s->data, v.u.s->len);
    case VT_FLOAT: {
        double f = v.u.f;
        /* integral floats hash as the int they equal */
        if (isfinite(f) && f == floor(f)) {
            if (f >= -9223372036854775808.0 && f < 9223372036854775808.0) return hash_u64((uint64_t)(int64_t)f);
            char buf[400];
            size_t n = float_floor_digits(f, buf, sizeof buf);
            return hash_bytes(buf, n);
        }
        uint64_t bits;
        memcpy(&bits, &f, sizeof bits);
        return hash_u64(bits ^ 0x5555555555555555ull);
    }
    case VT_STR: return str_hash(v.u.s);
    case VT_LIST:
        /* dict_values and generators by identity; a range as a tuple (equal ranges have equal items) */
        if (!(v.flags & VF_RANGE)) return hash_u64((uint64_t)(uintptr_t)v.u.list);
        /* fall through */
    case VT_TUPLE: {
        uint32_t h = 0x345678u;
        if (depth > VALUE_MAX_DEPTH) return h;
        for (size_t i = 0; i < v.u.list->len; i++) h = (h ^ hash_depth(v.u.list->items[i], depth + 1)) * 1000003u;
        return h ? h : 1;
    }
    case VT_NAMESPACE: return hash_u64((uint64_t)(uintptr_t)v.u.dict);
    case VT_CALLABLE:
    case VT_OBJECT: return hash_u64((uint64_t)(uintptr_t)v.u.obj);
    case VT_DICT: return 0;   /* unhashable */
    }
    return 0;
}

uint32_t v_hash(Value v) { return hash_depth(v, 0); }

/* ======================================================================
 * Ordering
 * ====================================================================== */

_Noreturn void v_undefined_fail(Rt *rt, Value undef) {
    cf_error_kind kind = undef.flags ? (cf_error_kind)undef.flags : CF_ERR_UNDEFINED;
    Str *hint = undef.type == VT_UNDEFINED ? undef_hint(rt, undef) : NULL;
    if (hint) rt_throw(rt, kind, "%s", hint->data);
    /* Jinja2's message for an Undefined that knows neither name nor object */
    rt_throw(rt, kind, "None is undefined");
}

/* For relations that are not a total order (NaN, subset): a result whose
 * sign makes `op` evaluate to `truth`. */
static int answer_for(const char *op, bool truth) {
    if (op[0] == '<') return truth ? -1 : 1;
    return truth ? 1 : -1;
}

static bool is_set_like_view(Value v) { return v.type == VT_LIST && (v.flags & (VF_VIEW_ITEMS | VF_VIEW_KEYS)); }

/* Is every item of a also in b? (dict_keys / dict_items are set-like) */
static bool view_subset(const List *a, const List *b) {
    for (size_t i = 0; i < a->len; i++) {
        bool found = false;
        for (size_t j = 0; j < b->len && !found; j++) found = v_equal(a->items[i], b->items[j]);
        if (!found) return false;
    }
    return true;
}

static int compare_views(Value a, Value b, const char *op) {
    const List *x = a.u.list, *y = b.u.list;
    bool truth;
    if (op[0] == '<') truth = (op[1] == '=' || x->len < y->len) && x->len <= y->len && view_subset(x, y);
    else truth = (op[1] == '=' || x->len > y->len) && x->len >= y->len && view_subset(y, x);
    return answer_for(op, truth);
}

static int compare_depth(Rt *rt, Value a, Value b, const char *op, int depth) {
    if (a.type == VT_UNDEFINED) v_undefined_fail(rt, a);
    if (b.type == VT_UNDEFINED) v_undefined_fail(rt, b);
    if (depth > VALUE_MAX_DEPTH) rt_throw(rt, CF_ERR_RUNTIME, "maximum recursion depth exceeded in comparison");
    if (is_number(a) && is_number(b)) {
        int c = cmp_numbers(a, b);
        if (c != CMP_UNORDERED) return c;
        return answer_for(op, false);   /* NaN: every ordering is false */
    }
    if (is_set_like_view(a) && is_set_like_view(b)) {
        rt_step(rt, a.u.list->len * b.u.list->len / 16 + 1);
        return compare_views(a, b, op);
    }
    if (a.type == VT_STR && b.type == VT_STR) {
        const Str *x = a.u.s, *y = b.u.s;
        int c = memcmp(x->data, y->data, x->len < y->len ? x->len : y->len);
        if (c) return c < 0 ? -1 : 1;
        return x->len < y->len ? -1 : x->len > y->len;
    }
    if ((v_is_list(a) && v_is_list(b)) || (a.type == VT_TUPLE && b.type == VT_TUPLE)) {
        const List *x = a.u.list, *y = b.u.list;
        size_t n = x->len < y->len ? x->len : y->len;
        for (size_t i = 0; i < n; i++) {
            if (!v_equal(x->items[i], y->items[i])) return compare_depth(rt, x->items[i], y->items[i], op, depth + 1);
        }
        return x->len < y->len ? -1 : x->len > y->len;
    }
    rt_throw(rt, CF_ERR_TYPE, "'%s' not supported between instances of '%s' and '%s'", op,
             v_type_name(a), v_type_name(b));
}

int v_compare(Rt *rt, Value a, Value b, const char *op) { return compare_depth(rt, a, b, op, 0); }

/* ======================================================================
 * str() and repr()
 * ====================================================================== */

/* Does M x 10^E read back as a? (No decimal point: immune to LC_NUMERIC.) */
static bool float_roundtrips(uint64_t m, int e, double a) {
    char buf[48];
    snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)m, e);
    return strtod(buf, NULL) == a;
}

/* The p-significant-digit decimal M x 10^E nearest to a (> 0) that reads
 * back as a, if any: the correctly rounded one, else (when a's rounding
 * interval is lopsided, or a is subnormal) its neighbour on the other side. */
static bool float_digits_at(double a, int p, uint64_t *m, int *e) {
    char buf[48];
    snprintf(buf, sizeof buf, "%.*e", p - 1, a);
    uint64_t mant = 0;
    const char *q = buf;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9') mant = mant * 10 + (uint64_t)(*q - '0');
    int exp10 = *q == 'e' ? atoi(q + 1) : 0;
    *e = exp10 - (p - 1);
    *m = mant;
    if (float_roundtrips(mant, *e, a)) return true;
    if (p < 16 && a >= DBL_MIN) return false;   /* see fmt_float_repr */
    if (float_roundtrips(mant + 1, *e, a)) { *m = mant + 1; return true; }
    if (mant > 1 && float_roundtrips(mant - 1, *e, a)) { *m = mant - 1; return true; }
    return false;
}

/* Most floats in chat data are short decimals (2.5, 0.7, 0.001): a = m /
 * 10^k for an m of at most 15 digits, found without printf. Such an m x
 * 10^-k is the only decimal of <= 15 digits that reads back as a (DBL_DIG),
 * so repr writes its digits. The division is IEEE's, correctly rounded from
 * two exact operands: the double strtod would read. Only for the positional
 * range (1e-4 <= a < 1e15); the smallest k gives m without trailing zeros. */
static bool float_short_decimal(double a, uint64_t *m, int *k) {
    static const double P10[16] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    if (!(a >= 1e-4 && a < 1e15)) return false;
    for (int j = 0; j < 16; j++) {
        double x = a * P10[j];
        if (x >= 1e15) return false;
        if (x == floor(x) && (double)(uint64_t)x / P10[j] == a) {
            *m = (uint64_t)x;
            *k = j;
            return true;
        }
    }
    return false;
}

void fmt_float_repr(StrBuf *sb, double d) {
    if (isnan(d)) { sb_puts(sb, "nan"); return; }
    if (isinf(d)) { sb_puts(sb, d < 0 ? "-inf" : "inf"); return; }
    if (d == 0) { sb_puts(sb, signbit(d) ? "-0.0" : "0.0"); return; }

    /* Shortest round-tripping digits, as Python's repr. For a normal double
     * any <= 15-digit string that round-trips is its correct 15-digit
     * rounding stripped of zeros (DBL_DIG = 15), so the search starts at 15;
     * subnormals have fewer significant bits and start at 1. */
    double a = fabs(d);
    uint64_t mant = 0;
    int e = 0, k;
    if (float_short_decimal(a, &mant, &k)) e = -k;
    else
        for (int p = a >= DBL_MIN ? 15 : 1; p <= 17; p++)
            if (float_digits_at(a, p, &mant, &e)) break;
    char digits[24];
    int ndigits = 0;
    for (uint64_t v = mant; ndigits == 0 || v; v /= 10) digits[ndigits++] = (char)('0' + v % 10);
    for (int i = 0; i < ndigits / 2; i++) {
        char c = digits[i];
        digits[i] = digits[ndigits - 1 - i];
        digits[ndigits - 1 - i] = c;
    }
    int exp10 = e + ndigits - 1;
    while (ndigits > 1 && digits[ndigits - 1] == '0') ndigits--;

    if (d < 0) sb_putc(sb, '-');
    if (exp10 < -4 || exp10 >= 16) {
        sb_putc(sb, digits[0]);
        if (ndigits > 1) {
            sb_putc(sb, '.');
            sb_put(sb, digits + 1, (size_t)ndigits - 1);
        }
        sb_printf(sb, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    } else if (exp10 < 0) {
        sb_puts(sb, "0.");
        for (int i = 0; i < -exp10 - 1; i++) sb_putc(sb, '0');
        sb_put(sb, digits, (size_t)ndigits);
    } else {
        int int_len = exp10 + 1;
        for (int i = 0; i < int_len; i++) sb_putc(sb, i < ndigits ? digits[i] : '0');
        sb_putc(sb, '.');
        if (ndigits > int_len) sb_put(sb, digits + int_len, (size_t)(ndigits - int_len));
        else sb_putc(sb, '0');
    }
}

/* Python repr() of a str: quote choice and escapes as CPython's
 * unicode_repr. */
/* Bytes repr may write otherwise than as they are: quotes, the backslash,
 * controls, DEL and every byte of a non-ASCII character. */
static const uint64_t REPR_SPECIAL[4] = {
    0x00000084FFFFFFFFull,   /* 0x00-0x1f, '"' (34), '\'' (39) */
    0x8000000010000000ull,   /* '\\' (92), DEL (127) */
    ~0ull, ~0ull,
};
static inline bool repr_special(unsigned char c) { return (REPR_SPECIAL[c >> 6] >> (c & 63)) & 1; }

static void write_str_repr(StrBuf *sb, const char *s, size_t n) {
    bool has_single = memchr(s, '\'', n) != NULL, has_double = memchr(s, '"', n) != NULL;
    char quote = (has_single && !has_double) ? '"' : '\'';
    sb_putc(sb, quote);
    size_t run = 0;   /* start of the pending run of bytes copied verbatim */
    size_t i = 0;
    while (i < n) {
        while (i < n && !repr_special((unsigned char)s[i])) i++;   /* (a run copied whole, below) */
        if (i == n) break;
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char tmp[12];
        size_t next = i + 1;
        if (c < 0x80) {
            if (c == (unsigned char)quote || c == '\\') {
                tmp[0] = '\\'; tmp[1] = (char)c; tmp[2] = '\0';
                esc = tmp;
            } else if (c == '\n') esc = "\\n";
            else if (c == '\r') esc = "\\r";
            else if (c == '\t') esc = "\\t";
            else if (c < 0x20 || c == 0x7f) {
                snprintf(tmp, sizeof tmp, "\\x%02x", c);
                esc = tmp;
            }
        } else {
            next = i;
            uint32_t cp = utf8_next(s, n, &next);
            if (!uc_isprintable(cp)) {
                if (cp <= 0xff) snprintf(tmp, sizeof tmp, "\\x%02x", (unsigned)cp);
                else if (cp <= 0xffff) snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)cp);
                else snprintf(tmp, sizeof tmp, "\\U%08x", (unsigned)cp);
                esc = tmp;
            }
        }
        if (esc) {
            sb_put(sb, s + run, i - run);
            sb_puts(sb, esc);
            run = next;
        }
        i = next;
    }
    sb_put(sb, s + run, n - run);
    sb_putc(sb, quote);
}

static void write_repr_depth(Rt *rt, StrBuf *sb, Value v, int depth);

static void write_items(Rt *rt, StrBuf *sb, const List *l, int depth) {
    for (size_t i = 0; i < l->len; i++) {
        if (i) sb_put(sb, ", ", 2);
        write_repr_depth(rt, sb, l->items[i], depth + 1);
    }
    rt_step(rt, l->len);
}

static void write_dict_repr(Rt *rt, StrBuf *sb, const Dict *d, int depth) {
    sb_putc(sb, '{');
    for (size_t i = 0; i < d->len; i++) {
        if (i) sb_put(sb, ", ", 2);
        write_repr_depth(rt, sb, d->entries[i].key, depth + 1);
        sb_put(sb, ": ", 2);
        write_repr_depth(rt, sb, d->entries[i].val, depth + 1);
    }
    rt_step(rt, d->len);
    sb_putc(sb, '}');
}

static void write_object(Rt *rt, StrBuf *sb, Obj *o) {
    if (o->type->repr) o->type->repr(rt, o, sb);
    else sb_printf(sb, "<%s object>", o->type->name);
}

void v_write_bigint(Rt *rt, StrBuf *sb, Value v) {
    const Str *d = v.u.s;
    if (d->len - (d->data[0] == '-') > INT_MAX_STR_DIGITS)
        rt_throw(rt, CF_ERR_VALUE, "Exceeds the limit (%d digits) for integer string conversion; "
                 "use sys.set_int_max_str_digits() to increase the limit", INT_MAX_STR_DIGITS);
    sb_put(sb, d->data, d->len);
}

/* Shared by str() and repr(): everything but strings and Undefined. */
static void write_common(Rt *rt, StrBuf *sb, Value v, int depth) {
    switch ((ValueType)v.type) {
    case VT_NONE: sb_put(sb, "None", 4); return;
    case VT_BOOL: sb_puts(sb, v.u.b ? "True" : "False"); return;
    case VT_INT: sb_put_int(sb, v.u.i); return;
    case VT_BIGINT: v_write_bigint(rt, sb, v); return;
    case VT_FLOAT: fmt_float_repr(sb, v.u.f); return;
    case VT_LIST:
        if (v.flags & VF_RANGE) {
            const RangeList *r = v_range_of(v);
            if (r->step == 1) sb_printf(sb, "range(%lld, %lld)", (long long)r->start, (long long)r->stop);
            else sb_printf(sb, "range(%lld, %lld, %lld)", (long long)r->start, (long long)r->stop, (long long)r->step);
            return;
        }
        if (v.flags & VF_GENERATOR) {
            /* CPython prints an address; ours is a fixed placeholder */
            if (v.iter == ITER_GENERATOR) sb_puts(sb, "<generator object <genexpr> at 0x0>");
            else {
                sb_putc(sb, '<');
                sb_puts(sb, v_type_name(v));
                sb_puts(sb, " object at 0x0>");
            }
            return;
        }
        if (is_view(v)) {
            sb_puts(sb, v_type_name(v));
            sb_put(sb, "([", 2);
            write_items(rt, sb, v.u.list, depth);
            sb_put(sb, "])", 2);
            return;
        }
        sb_putc(sb, '[');
        write_items(rt, sb, v.u.list, depth);
        sb_putc(sb, ']');
        return;
    case VT_TUPLE:
        sb_putc(sb, '(');
        write_items(rt, sb, v.u.list, depth);
        if (v.u.list->len == 1) sb_putc(sb, ',');
        sb_putc(sb, ')');
        return;
    case VT_DICT: write_dict_repr(rt, sb, v.u.dict, depth); return;
    case VT_NAMESPACE:
        sb_puts(sb, "<Namespace ");
        write_dict_repr(rt, sb, v.u.dict, depth);
        sb_putc(sb, '>');
        return;
    case VT_CALLABLE:
    case VT_OBJECT: write_object(rt, sb, v.u.obj); return;
    default: return;
    }
}

static void write_repr_depth(Rt *rt, StrBuf *sb, Value v, int depth) {
    if (depth > VALUE_MAX_DEPTH)
        rt_throw(rt, CF_ERR_RUNTIME, "maximum recursion depth exceeded while getting the repr of an object");
    switch ((ValueType)v.type) {
    case VT_MISSING:
    case VT_UNDEFINED: sb_put(sb, "Undefined", 9); return;
    case VT_STR:
        if (v.flags & VF_MARKUP) {
            sb_put(sb, "Markup(", 7);
            write_str_repr(sb, v.u.s->data, v.u.s->len);
            sb_putc(sb, ')');
        } else {
            write_str_repr(sb, v.u.s->data, v.u.s->len);
        }
        return;
    default: write_common(rt, sb, v, depth);
    }
}

void v_write_repr(Rt *rt, StrBuf *sb, Value v) { write_repr_depth(rt, sb, v, 0); }

void v_write_str(Rt *rt, StrBuf *sb, Value v) {
    switch ((ValueType)v.type) {
    case VT_MISSING:
    case VT_UNDEFINED: return;
    case VT_STR: sb_put(sb, v.u.s->data, v.u.s->len); return;
    default: write_common(rt, sb, v, 0);
    }
}

Value v_to_str(Rt *rt, Value v) {
    if (v.type == VT_STR) {
        v.flags = 0;
        return v;
    }
    StrBuf sb;
    sb_init(rt, &sb, 32);
    v_write_str(rt, &sb, v);
    return sb_to_value(&sb);
}

/* ======================================================================
 * Sandbox attribute / item lookup (jinja2.sandbox.SandboxedEnvironment
 * getattr/getitem + ImmutableSandboxedEnvironment.is_safe_attribute)
 * ====================================================================== */

/* A method bound to its receiver, e.g. `messages[0].items`. */
typedef struct BoundMethod { Value self; Str *name; } BoundMethod;

static Value bound_method_call(Rt *rt, Obj *o, const Args *args) {
    BoundMethod *m = o->data;
    Value out;
    if (!method_call(rt, m->self, m->name->data, m->name->len, args, &out))
        rt_throw(rt, CF_ERR_ATTRIBUTE, "'%s' object has no attribute '%s'", v_type_name(m->self), m->name->data);
    return out;
}

static void bound_method_repr(Rt *rt, Obj *o, StrBuf *sb) {
    BoundMethod *m = o->data;
    sb_printf(sb, "<built-in method %s of %s object at %p>", m->name->data, v_type_name(m->self), (void *)o);
}

static const ObjType BOUND_METHOD_TYPE = {
    "builtin_function_or_method", NULL, bound_method_call, bound_method_repr, NULL,
};

static Value make_bound_method(Rt *rt, Value self, const char *name, size_t n) {
    BoundMethod *m = rt_alloc(rt, sizeof *m);
    m->self = self;
    m->name = str_new(rt, name, n);
    Obj *o = rt_alloc(rt, sizeof *o);
    o->type = &BOUND_METHOD_TYPE;
    o->data = m;
    Value v = {0};
    v.type = VT_CALLABLE;
    v.u.obj = o;
    return v;
}

static bool name_is(const char *name, size_t n, const char *z) {
    return strlen(z) == n && memcmp(name, z, n) == 0;
}

static bool name_in(const char *name, size_t n, const char *const *set) {
    for (; *set; set++)
        if (name_is(name, n, *set)) return true;
    return false;
}


/* jinja2.utils.object_type_repr, written as Python repr would quote it when
 * `quoted` ("'dict object'") or bare ("dict object"). */
static void write_object_type_repr(StrBuf *sb, Value obj, bool quoted) {
    static const char *const jinja_classes[][2] = {
        {"LoopContext", "jinja2.runtime.LoopContext"}, {"Macro", "jinja2.runtime.Macro"},
        {"Cycler", "jinja2.utils.Cycler"}, {"Joiner", "jinja2.utils.Joiner"},
        {"Namespace", "jinja2.utils.Namespace"}, {"Markup", "markupsafe.Markup"},
        {"TemplateReference", "jinja2.runtime.TemplateReference"}, {"BlockReference", "jinja2.runtime.BlockReference"},
    };
    const char *q = quoted ? "'" : "";
    if (obj.type == VT_NONE) {
        sb_printf(sb, "%sNone%s", q, q);
        return;
    }
    const char *name = v_type_name(obj);
    for (size_t i = 0; i < sizeof jinja_classes / sizeof jinja_classes[0]; i++)
        if (strcmp(name, jinja_classes[i][0]) == 0) name = jinja_classes[i][1];
    sb_printf(sb, "%s%s object%s", q, name, q);
}

/* Undefined for a failed lookup, with the hint Jinja2's Undefined computes
 * when it is read: "'dict object' has no attribute 'x'" or "list object has
 * no element 5". */
Value v_missed_lookup(Rt *rt, Value obj, Value key) {
    MissedLookup *m = rt_alloc(rt, sizeof *m);
    m->obj = obj;
    m->key = key;
    Value v = v_undef(NULL);
    v.iter = UNDEF_MISSED;
    v.u.miss = m;
    return v;
}

Str *undef_hint(Rt *rt, Value undef) {
    StrBuf sb;
    if (undef.iter == UNDEF_NOT_PROVIDED) {
        sb_init(rt, &sb, 64);
        sb_puts(&sb, "parameter '");
        sb_put(&sb, undef.u.s->data, undef.u.s->len);
        sb_puts(&sb, "' was not provided");
        return sb_to_str(&sb);
    }
    if (undef.iter == UNDEF_NO_ELSE) {
        sb_init(rt, &sb, 96);
        sb_printf(&sb, "the inline if-expression on line %lld evaluated to false and no else section was defined.",
                  (long long)undef.u.i);
        return sb_to_str(&sb);
    }
    if (undef.iter != UNDEF_MISSED) return undef.u.s;
    const MissedLookup *m = undef.u.miss;
    sb_init(rt, &sb, 64);
    bool by_name = m->key.type == VT_STR;
    write_object_type_repr(&sb, m->obj, by_name);
    sb_puts(&sb, by_name ? " has no attribute " : " has no element ");
    v_write_repr(rt, &sb, m->key);
    return sb_to_str(&sb);
}

static Value missing_attr_undefined(Rt *rt, Value obj, const char *name, size_t n) {
    return v_missed_lookup(rt, obj, v_str(rt, name, n));
}

static Value unsafe_undefined(Rt *rt, Value obj, const char *name, size_t n) {
    StrBuf sb;
    sb_init(rt, &sb, 64);
    sb_puts(&sb, "access to attribute ");
    write_str_repr(&sb, name, n);
    sb_puts(&sb, " of ");
    const char *type = v_type_name(obj);
    write_str_repr(&sb, type, strlen(type));
    sb_puts(&sb, " object is unsafe.");
    Value u = v_undef(sb_to_str(&sb));
    u.flags = CF_ERR_SECURITY;
    return u;
}

/* Whether obj has the dunder attribute `name` (all of them are unsafe; the
 * difference matters only for the error a use raises). */
static bool has_dunder(Value obj, const char *name, size_t n) {
    static const char *const every_object[] = {
        "__class__", "__doc__", "__init__", "__new__", "__repr__", "__str__", "__hash__",
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__getattribute__",
        "__setattr__", "__delattr__", "__dir__", "__format__", "__reduce__", "__reduce_ex__",
        "__sizeof__", "__subclasshook__", "__init_subclass__", "__getstate__", NULL};
    static const char *const containers[] = {
        "__len__", "__iter__", "__contains__", "__getitem__", "__add__", "__mul__", "__rmul__",
        "__class_getitem__", NULL};
    static const char *const numbers[] = {
        "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__",
        "__neg__", "__pos__", "__abs__", "__bool__", "__int__", "__float__", "__round__",
        "__trunc__", "__floor__", "__ceil__", "__divmod__", "__radd__", "__rsub__", "__rmul__",
        "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__", "__rdivmod__", "__getnewargs__", NULL};
    if (n < 4 || name[0] != '_' || name[1] != '_') return false;
    if (name_in(name, n, every_object)) return true;
    switch ((ValueType)obj.type) {
    case VT_STR: case VT_LIST: case VT_TUPLE: case VT_DICT: return name_in(name, n, containers);
    case VT_BOOL: case VT_INT: case VT_BIGINT: case VT_FLOAT: return name_in(name, n, numbers);
    case VT_CALLABLE: case VT_OBJECT: return name_is(name, n, "__dict__") || name_is(name, n, "__module__");
    default: return false;
    }
}

/* Python getattr(obj, name) followed by the sandbox's safety check.
 * False when the attribute does not exist. */
static bool lookup_attr(Rt *rt, Value obj, const char *name, size_t n, Value *out) {
    bool exists = false;
    Value found = {0};
    switch ((ValueType)obj.type) {
    case VT_NAMESPACE:
        exists = dict_get_str(obj.u.dict, name, n, &found) || name_is(name, n, "__class__");
        break;
    case VT_CALLABLE:
    case VT_OBJECT:
        exists = obj.u.obj->type->getattr && obj.u.obj->type->getattr(rt, obj.u.obj, name, n, &found);
        break;
    case VT_BOOL:
    case VT_INT:
    case VT_BIGINT:
    case VT_FLOAT: {
        /* the numeric data attributes: n.real, n.imag, n.numerator, n.denominator */
        bool is_float = obj.type == VT_FLOAT;
        Value self = obj.type == VT_BOOL ? v_int(obj.u.b) : obj;
        if (name_is(name, n, "real")) { found = self; exists = true; }
        else if (name_is(name, n, "imag")) { found = is_float ? v_float(0.0) : v_int(0); exists = true; }
        else if (!is_float && name_is(name, n, "numerator")) { found = self; exists = true; }
        else if (!is_float && name_is(name, n, "denominator")) { found = v_int(1); exists = true; }
        break;
    }
    case VT_LIST:
        if (obj.flags & VF_RANGE) {
            const RangeList *r = v_range_of(obj);
            if (name_is(name, n, "start")) { found = v_int(r->start); exists = true; }
            else if (name_is(name, n, "stop")) { found = v_int(r->stop); exists = true; }
            else if (name_is(name, n, "step")) { found = v_int(r->step); exists = true; }
        }
        break;
    case VT_TUPLE:
        /* groupby's _GroupTuple(grouper, list) namedtuple */
        if ((obj.flags & VF_GROUP_TUPLE) && obj.u.list->len == 2) {
            if (name_is(name, n, "grouper")) { found = obj.u.list->items[0]; exists = true; }
            else if (name_is(name, n, "list")) { found = obj.u.list->items[1]; exists = true; }
        }
        break;
    default:
        break;
    }
    if (!exists && obj.type != VT_NAMESPACE) exists = has_dunder(obj, name, n);
    if (exists && n && name[0] == '_') {
        *out = unsafe_undefined(rt, obj, name, n);
        return true;
    }
    if (exists) {
        *out = found;
        return true;
    }
    if (obj.type == VT_NAMESPACE || obj.type == VT_CALLABLE || obj.type == VT_OBJECT || is_view(obj))
        return false;
    if (method_is_unsafe(obj, name, n)) {   /* jinja2.sandbox.modifies_known_mutable */
        *out = unsafe_undefined(rt, obj, name, n);
        return true;
    }
    if (method_exists(obj, name, n)) {
        *out = make_bound_method(rt, obj, name, n);
        return true;
    }
    return false;
}

/* Python obj[key] for the types that support it; false on
 * TypeError/LookupError (the sandbox swallows both). */
static bool lookup_item(Rt *rt, Value obj, Value key, Value *out) {
    switch ((ValueType)obj.type) {
    case VT_DICT: return dict_get(obj.u.dict, key, out);
    case VT_LIST:
    case VT_TUPLE:
    case VT_STR: {
        if (is_view(obj) || (obj.flags & VF_GENERATOR) || (key.type != VT_INT && key.type != VT_BOOL)) return false;
        int64_t i = small_int(key);
        if (obj.type == VT_STR) {
            Str *s = obj.u.s;
            int64_t len = (int64_t)str_nchars(s);
            if (i < 0) i += len;
            if (i < 0 || i >= len) return false;
            size_t start = (size_t)s->nchars == s->len ? (size_t)i : utf8_offset(s->data, s->len, (size_t)i);
            size_t end = start + 1;
            while (end < s->len && ((unsigned char)s->data[end] & 0xC0) == 0x80) end++;
            *out = v_str(rt, s->data + start, end - start);
            out->flags = obj.flags & VF_MARKUP;   /* Markup.__getitem__ keeps Markup */
            return true;
        }
        int64_t len = (int64_t)obj.u.list->len;
        if (i < 0) i += len;
        if (i < 0 || i >= len) return false;
        *out = obj.u.list->items[i];
        return true;
    }
    default: return false;
    }
}

/* obj.name found: attribute first, then item (v_getattr, v_getattr_str). */
bool v_undefined_has_dunder(const char *name, size_t n) {
    static const char *const names[] = {
        "__add__", "__aiter__", "__bool__", "__call__", "__class__", "__complex__", "__delattr__",
        "__dir__", "__div__", "__doc__", "__eq__", "__float__", "__floordiv__", "__format__", "__ge__",
        "__getattr__", "__getattribute__", "__getitem__", "__getstate__", "__gt__", "__hash__",
        "__init__", "__init_subclass__", "__int__", "__iter__", "__le__", "__len__", "__lt__",
        "__mod__", "__module__", "__mul__", "__ne__", "__neg__", "__new__", "__pos__", "__pow__",
        "__radd__", "__rdiv__", "__reduce__", "__reduce_ex__", "__repr__", "__rfloordiv__",
        "__rmod__", "__rmul__", "__rpow__", "__rsub__", "__rtruediv__", "__setattr__", "__sizeof__",
        "__slots__", "__str__", "__sub__", "__subclasshook__", "__truediv__", NULL};
    if (n < 4 || name[0] != '_' || name[1] != '_') return false;
    return name_in(name, n, names);
}

static bool getattr_found(Rt *rt, Value obj, const char *name, size_t n, Value *out) {
    if (obj.type == VT_UNDEFINED && v_undefined_has_dunder(name, n)) {   /* (str.format's {0.__call__}) */
        *out = unsafe_undefined(rt, obj, name, n);
        return true;
    }
    if (obj.type == VT_UNDEFINED || obj.type == VT_MISSING) v_undefined_fail(rt, obj);
    return lookup_attr(rt, obj, name, n, out) || (obj.type == VT_DICT && dict_get_str(obj.u.dict, name, n, out));
}

Value v_getattr(Rt *rt, Value obj, const char *name, size_t n) {
    Value out;
    return getattr_found(rt, obj, name, n, &out) ? out : missing_attr_undefined(rt, obj, name, n);
}

Value v_getattr_str(Rt *rt, Value obj, Str *name) {
    Value out;   /* (a miss keeps the name itself: it outlives the render) */
    return getattr_found(rt, obj, name->data, name->len, &out) ? out : v_missed_lookup(rt, obj, v_str_of(name));
}

Value v_getitem(Rt *rt, Value obj, Value key) {
    if (obj.type == VT_UNDEFINED || obj.type == VT_MISSING) v_undefined_fail(rt, obj);
    Value out;
    if (lookup_item(rt, obj, key, &out)) return out;
    if (key.type == VT_STR && lookup_attr(rt, obj, key.u.s->data, key.u.s->len, &out)) return out;
    return v_missed_lookup(rt, obj, key);
}

/* ======================================================================
 * Iteration and len()
 * ====================================================================== */

/* One-character ASCII strings, shared by every render: iterating a string
 * makes a value of each character, and templates that loop over a
 * message's content expecting parts (Llama 3.2 Vision, SmolVLM) walk every
 * character of every message, 64 bytes of arena a character without these.
 * Immutable: hash and length are set once, before any render reads them. */
enum { CHAR_STR_SIZE = (offsetof(Str, data) + 2 + 15) & ~15 };
static _Alignas(16) unsigned char char_strs[128 * CHAR_STR_SIZE];
static pthread_once_t char_strs_once = PTHREAD_ONCE_INIT;

static void char_strs_init(void) {
    for (int c = 0; c < 128; c++) {
        Str *s = (Str *)(void *)(char_strs + (size_t)c * CHAR_STR_SIZE);
        s->len = 1;
        s->nchars = 1;
        s->data[0] = (char)c;
        s->data[1] = '\0';
        s->hash = 0;
        str_hash(s);
    }
}

static Str *char_str(unsigned char c) {   /* c < 128 */
    pthread_once(&char_strs_once, char_strs_init);
    return (Str *)(void *)(char_strs + (size_t)c * CHAR_STR_SIZE);
}

List *v_iterate(Rt *rt, Value v) {
    switch ((ValueType)v.type) {
    case VT_MISSING:
    case VT_UNDEFINED: return list_new(rt, 0);
    case VT_LIST:
        if (v.flags & VF_GENERATOR) {   /* used up: what is left moves to the taker */
            List *gen = v.u.list, *taken = rt_alloc(rt, sizeof *taken);
            *taken = (List){.len = gen->len, .cap = gen->len, .items = gen->items};
            *gen = (List){0};
            return taken;
        }
        return v.u.list;
    case VT_TUPLE: return v.u.list;
    case VT_DICT: {
        const Dict *d = v.u.dict;
        List *l = list_new(rt, d->len);
        for (size_t i = 0; i < d->len; i++) l->items[i] = d->entries[i].key;
        l->len = d->len;
        rt_step(rt, d->len);
        return l;
    }
    case VT_STR: {
        Str *s = v.u.s;
        List *l = list_new(rt, str_nchars(s));
        for (size_t i = 0; i < s->len;) {
            size_t start = i++;
            while (i < s->len && ((unsigned char)s->data[i] & 0xC0) == 0x80) i++;
            unsigned char c = (unsigned char)s->data[start];
            l->items[l->len++] = i - start == 1 && c < 0x80 ? v_str_of(char_str(c)) : v_str(rt, s->data + start, i - start);
        }
        rt_step(rt, l->len);
        return l;
    }
    case VT_OBJECT:
        if (v.u.obj->type->iterate) return v.u.obj->type->iterate(rt, v.u.obj);
        /* fall through */
    default:
        rt_throw(rt, CF_ERR_TYPE, "'%s' object is not iterable", v_type_name(v));
    }
}

void generator_give_back(Rt *rt, Value gen, const List *taken, size_t from) {
    if (!(gen.type == VT_LIST && (gen.flags & VF_GENERATOR)) || from >= taken->len) return;
    /* (a copy: the taker may share its items with a list it returned) */
    size_t n = taken->len - from;
    List *l = gen.u.list;
    l->items = rt_alloc(rt, n * sizeof(Value));
    memcpy(l->items, taken->items + from, n * sizeof(Value));
    l->len = l->cap = n;
    l->json = NULL;
    l->tail_owner = NULL;
    rt_step(rt, n / 64 + 1);
}

int64_t v_len(Rt *rt, Value v) {
    switch ((ValueType)v.type) {
    case VT_OBJECT: {   /* of our objects only LoopContext has a __len__: its length */
        Value length;
        if (strcmp(v.u.obj->type->name, "LoopContext") == 0 && v.u.obj->type->getattr(rt, v.u.obj, "length", 6, &length))
            return length.u.i;
        rt_throw(rt, CF_ERR_TYPE, "object of type '%s' has no len()", v_type_name(v));
    }
    case VT_MISSING:
    case VT_UNDEFINED: return 0;
    case VT_STR: return (int64_t)str_nchars(v.u.s);
    case VT_LIST:
        if (v.flags & VF_GENERATOR) rt_throw(rt, CF_ERR_TYPE, "object of type '%s' has no len()", v_type_name(v));
        return (int64_t)v.u.list->len;
    case VT_TUPLE: return (int64_t)v.u.list->len;
    case VT_DICT: return (int64_t)v.u.dict->len;
    default:
        rt_throw(rt, CF_ERR_TYPE, "object of type '%s' has no len()", v_type_name(v));
    }
}

/* ======================================================================
 * Argument binding
 * ====================================================================== */

void args_bind(Rt *rt, const Args *args, const char *fname, int nparams,
               const char *const *names, Value *out) {
    for (int i = 0; i < nparams; i++) out[i] = v_missing();
    if (args->npos > nparams) {
        if (nparams == 0)
            rt_throw(rt, CF_ERR_TYPE, "%s() takes no arguments (%d given)", fname, args->npos);
        rt_throw(rt, CF_ERR_TYPE, "%s() takes at most %d argument%s (%d given)", fname, nparams,
                 nparams == 1 ? "" : "s", args->npos);
    }
    for (int i = 0; i < args->npos; i++) out[i] = args->pos[i];
    for (int k = 0; k < args->nkw; k++) {
        const Str *kw = args->kwnames[k];
        int at = -1;
        for (int i = 0; i < nparams && at < 0; i++)
            if (str_eqz(kw, names[i])) at = i;
        if (at < 0) rt_throw(rt, CF_ERR_TYPE, "%s() got an unexpected keyword argument '%s'", fname, kw->data);
        if (out[at].type != VT_MISSING)
            rt_throw(rt, CF_ERR_TYPE, "%s() got multiple values for argument '%s'", fname, kw->data);
        out[at] = args->kwvals[k];
    }
}

void args_none(Rt *rt, const Args *args, const char *fname) {
    if (args->nkw) rt_throw(rt, CF_ERR_TYPE, "%s() takes no keyword arguments", fname);
    if (args->npos) rt_throw(rt, CF_ERR_TYPE, "%s() takes no arguments (%d given)", fname, args->npos);
}
