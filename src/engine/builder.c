/* builder.c — a render's variables pushed value by value from the host's
 * own data (a binding's objects, a C++ JSON tree), with no JSON text in
 * between (cf_builder_* in chatfmt.h). The values are exactly those the
 * JSON reader would make of the same data; the first error is kept and
 * reported by cf_builder_finish, every later call being ignored. */
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include "context.h"
#include "json.h"
#include "unicode.h"

/* A list or dict being filled: allocated when opened with its final size
 * (the host says how many items come), filled in place. */
typedef struct OpenContainer {
    Value v;            /* the list or dict */
    size_t remaining;   /* values still to come (a dict's keys count too) */
    Value *slot;        /* a dict's: where the value of the key just placed goes */
} OpenContainer;

enum { OPEN_INLINE = 16 };   /* nesting that needs no allocation */

/* What is known of a key's Str: it is its known Str (known_key), found
 * in a dict by pointer; it has none (looked up, not found); or not looked
 * up yet. */
typedef enum KeyStr { KEY_UNRESOLVED, KEY_KNOWN, KEY_PLAIN } KeyStr;

/* A key's Str by the address of its bytes (see cf_builder.seen). */
typedef struct SeenKey {
    const char *at;
    size_t len;
    Str *str;
    KeyStr what;
} SeenKey;
enum { SEEN_KEYS = 32 };

struct cf_builder {
    cf_context *ctx;
    Rt rt;
    jmp_buf jb;
    cf_error err;
    bool failed;
    Value root;
    bool have_root;
    size_t bytes;            /* string bytes so far, bounded by max_json_bytes */
    /* open[1..depth] are the open containers, innermost last; open[0] is
     * none (VT_MISSING), so that the innermost one is always open[depth]. */
    OpenContainer *open;     /* open_inline, or a heap array when nesting is deeper */
    OpenContainer *top;      /* open + depth (every item looks at it) */
    size_t depth, open_cap;
    /* open_container's quick way, in two compares: a container of n items
     * with n - 1 < small_items (DICT_LINEAR_MAX, or max_items when less)
     * opened at a depth below quick_depth (max_json_depth, or the open
     * stack's last level when less): see quick_bounds. */
    size_t small_items, quick_depth;
    size_t carve_max;   /* the longest string carved (see carve_str) */
    OpenContainer open_inline[OPEN_INLINE];
    StrCarver carver;
    /* Short strings already made (keys mostly: "role", "content"...): one
     * Str each, which also keeps its hash for the dict building. */
    Str *recent[64];
    /* Dict keys pushed as CF_ITEM_ASCII, by address: a binding's key
     * objects repeat within a row (one "role" for every message), so a
     * repeat is found without reading its bytes. */
    SeenKey seen[SEEN_KEYS];
};

/* open_container's bounds for its quick way (see cf_builder.small_items). */
static void quick_bounds(cf_builder *b) {
    b->small_items = b->rt.lim.max_items < DICT_LINEAR_MAX ? b->rt.lim.max_items : DICT_LINEAR_MAX;
    b->quick_depth = b->open_cap - 1 < b->rt.lim.max_json_depth ? b->open_cap - 1 : b->rt.lim.max_json_depth;
    b->carve_max = b->rt.lim.max_string < CARVE_BLOCK / 8 ? b->rt.lim.max_string : CARVE_BLOCK / 8;
}

/* Every entry point runs under this: an allocation or limit failure
 * unwinds to it and is kept as the builder's error. */
#define GUARDED(b)                                     \
    if (!(b) || (b)->failed) return;                   \
    if (setjmp((b)->jb)) {                             \
        (b)->failed = true;                            \
        return;                                        \
    }

/* The builder empty, as new, over a fresh context (false: no memory).
 * The caches are cleared: their Strs lived in the last context, and the
 * addresses they remember were the last value's. */
static bool builder_clear(cf_builder *b) {
    b->failed = b->have_root = false;
    b->bytes = b->depth = 0;
    b->top = b->open;
    b->carver.at = b->carver.end = NULL;
    memset(b->recent, 0, sizeof b->recent);
    memset(b->seen, 0, sizeof b->seen);
    b->err.kind = CF_OK;
    b->err.message[0] = 0;
    b->ctx = context_alloc(b->rt.lim.max_memory);
    if (!b->ctx) return false;
    b->rt.arena = &b->ctx->arena;
    return true;
}

CF_API cf_builder *cf_builder_new(const cf_limits *limits) {
    /* not calloc: the error record and jmp_buf need no clearing (2 KiB) */
    cf_builder *b = malloc(sizeof *b);
    if (!b) return NULL;
    b->open = b->open_inline;
    b->open_cap = OPEN_INLINE;
    b->open[0].v = v_missing();
    memset(&b->rt, 0, sizeof b->rt);
    if (limits) b->rt.lim = *limits;
    limits_resolve(&b->rt.lim);
    quick_bounds(b);
    b->rt.jb = &b->jb;
    b->rt.err = &b->err;
    if (!builder_clear(b)) {
        free(b);
        return NULL;
    }
    return b;
}

CF_API void cf_builder_free(cf_builder *b) {
    if (!b) return;
    if (b->ctx) cf_context_free(b->ctx);
    if (b->open != b->open_inline) free(b->open);
    free(b);
}

static NOINLINE void grow_open(cf_builder *b) {
    size_t ncap = b->open_cap * 2;
    OpenContainer *q = b->open == b->open_inline ? malloc(ncap * sizeof *q) : realloc(b->open, ncap * sizeof *q);
    if (!q) rt_throw(&b->rt, CF_ERR_MEMORY, "out of memory");
    if (b->open == b->open_inline) memcpy(q, b->open_inline, sizeof b->open_inline);
    b->open = q;
    b->top = q + b->depth;
    b->open_cap = ncap;
    quick_bounds(b);
}

static NOINLINE void place_root(cf_builder *b, Value v) {
    if (b->have_root) rt_throw(&b->rt, CF_ERR_USAGE, "cf_builder: a value after the top-level one");
    b->root = v;
    b->have_root = true;
}

static COLD _Noreturn void key_not_string(cf_builder *b) {
    rt_throw(&b->rt, CF_ERR_TYPE, "cf_builder: a dict key must be a string");
}

/* The next item of the innermost open container (inline: every value
 * passes here; the rare cases are calls). A container that gets its last
 * item is itself the next item of the one around it. */
static inline void place(cf_builder *b, Value v) {
    for (;;) {
        OpenContainer *c = b->top;
        if (c->v.type == VT_DICT) {
            if (c->remaining & 1) {
                *c->slot = v;
            } else {
                if (v.type != VT_STR) key_not_string(b);
                c->slot = dict_str_slot(&b->rt, c->v.u.dict, v);
            }
        } else if (b->depth) {   /* a list or a tuple */
            List *l = c->v.u.list;
            l->items[l->len++] = v;
        } else {
            place_root(b, v);
            return;
        }
        if (--c->remaining) return;
        v = c->v;
        b->depth--;
        b->top--;
    }
}

enum { OPEN_LIST, OPEN_DICT, OPEN_TUPLE };

static NOINLINE void open_container_slow(cf_builder *b, int kind, size_t n) {
    bool is_dict = kind == OPEN_DICT;
    if (n > b->rt.lim.max_items)
        rt_throw(&b->rt, CF_ERR_LIMIT, "more than %zu items in one value (raise it with --max-items / cf_limits.max_items)",
                 (size_t)b->rt.lim.max_items);
    if (n == 0) {
        place(b, is_dict ? v_dict_of(dict_new(&b->rt, 0))
                         : kind == OPEN_TUPLE ? v_tuple_of(list_new(&b->rt, 0)) : v_list_of(list_new(&b->rt, 0)));
        return;
    }
    if (b->depth >= b->rt.lim.max_json_depth)
        rt_throw(&b->rt, CF_ERR_LIMIT,
                 "JSON nesting deeper than %u levels (raise it with --max-json-depth / cf_limits.max_json_depth)",
                 (unsigned)b->rt.lim.max_json_depth);
    if (b->depth + 1 == b->open_cap) grow_open(b);
    b->depth++;
    OpenContainer *c = ++b->top;
    c->v = is_dict ? v_dict_of(dict_new_str_pairs(&b->rt, n)) : v_list_of(list_new(&b->rt, n));
    if (kind == OPEN_TUPLE) c->v.type = VT_TUPLE;
    c->remaining = is_dict ? 2 * n : n;
}

/* A new block for the strings' carver (see carve). */
static NOINLINE void carve_block(cf_builder *b) {
    b->carver.at = rt_alloc(&b->rt, CARVE_BLOCK);
    b->carver.end = b->carver.at + CARVE_BLOCK;
}

/* n bytes (8-byte aligned; n well under CARVE_BLOCK) from the block the
 * strings are carved from: a small container's memory is a bump of it,
 * with no check of the arena's own (its blocks were counted as they came). */
static ALWAYS_INLINE void *carve(cf_builder *b, size_t n) {
    size_t need = (n + 7) & ~(size_t)7;
    if (need > (size_t)(b->carver.end - b->carver.at)) carve_block(b);
    void *p = b->carver.at;
    b->carver.at += need;
    return p;
}
_Static_assert(sizeof(Dict) + DICT_LINEAR_MAX * sizeof(DictEntry) <= CARVE_BLOCK / 4, "a small dict fits a carver block");

/* Most containers of chat data: 1 to DICT_LINEAR_MAX items, made here
 * in one block (as dict_new_str_pairs and list_new make them) without a
 * call; the rest, and every limit, go the way above. */
static ALWAYS_INLINE void open_container(cf_builder *b, int kind, size_t n) {
    if (n - 1 >= b->small_items || b->depth >= b->quick_depth) {
        open_container_slow(b, kind, n);
        return;
    }
    b->depth++;
    OpenContainer *c = ++b->top;
    if (kind == OPEN_DICT) {
        Dict *d = carve(b, sizeof *d + n * sizeof(DictEntry));
        *d = (Dict){.len = 0, .cap = n, .entries = (DictEntry *)(void *)(d + 1)};
        c->v = v_dict_of(d);
        c->remaining = 2 * n;
    } else {
        List *l = carve(b, sizeof *l + n * sizeof(Value));
        *l = (List){.len = 0, .cap = n, .items = (Value *)(void *)(l + 1)};
        c->v = kind == OPEN_TUPLE ? v_tuple_of(l) : v_list_of(l);
        c->remaining = n;
    }
}

#if KNOWN_SHORT_KEYS
static inline uint64_t load8(const char *p) { uint64_t x; memcpy(&x, p, 8); return x; }
static inline uint64_t load4(const char *p) { uint32_t x; memcpy(&x, p, 4); return x; }

/* The n bytes (0 < n < 16) at s, zero-padded to two little-endian words,
 * read without a byte past s + n: overlapping loads, merged (a library
 * memcpy of a variable length costs more than the key lookup). */
static inline void load_padded16(const char *s, size_t n, uint64_t k[2]) {
    if (n >= 8) {
        k[0] = load8(s);
        k[1] = n == 8 ? 0 : load8(s + n - 8) >> (8 * (16 - n));
    } else if (n >= 4) {
        k[0] = load4(s) | load4(s + n - 4) << (8 * (n - 4));
        k[1] = 0;
    } else {
        const unsigned char *u = (const unsigned char *)s;
        k[0] = (uint64_t)u[0] | (uint64_t)u[n / 2] << (8 * (n / 2)) | (uint64_t)u[n - 1] << (8 * (n - 1));
        k[1] = 0;
    }
}
#endif

/* The slot of dict d's key whose Str is made. unique: the host says no
 * key before it in this dict equals it (a CF_ITEM_KEY): a small dict
 * appends it without looking. */
static ALWAYS_INLINE Value *key_slot(cf_builder *b, Dict *d, Str *key, KeyStr what, bool unique) {
    bool known = what == KEY_KNOWN;
    if (d->index || (!known && !unique))
        return known ? dict_known_key_slot(&b->rt, d, key) : dict_str_slot(&b->rt, d, v_str_of(key));
    /* dict_known_key_slot without a call (a small dict the builder made:
     * no hash index, no JSON source): a known key is in a dict exactly
     * when its Str is, so a repeat is found by pointer. */
    DictEntry *e = d->entries, *end = e + d->len;
    if (!unique)
        while (e < end && !(e->key.type == VT_STR && e->key.u.s == key)) e++;
    else
        e = end;
    if (e == end) {
        uint32_t h = known ? key->hash : str_hash(key);
        Str *shared = what == KEY_UNRESOLVED ? known_key(key, h) : known ? key : NULL;   /* (as dict_str_slot) */
        e->key = v_str_of(shared ? shared : key);
        e->hash = h;
        d->len++;
    }
    return &e->val;
}

static COLD _Noreturn void key_misplaced(cf_builder *b) {
    rt_throw(&b->rt, CF_ERR_USAGE, "cf_builder_feed: a KEY item where no dict key is due");
}

static COLD _Noreturn void null_string(cf_builder *b) {
    rt_throw(&b->rt, CF_ERR_USAGE, "cf_builder_str: NULL string");
}

static COLD _Noreturn void too_many_bytes(cf_builder *b) {
    rt_throw(&b->rt, CF_ERR_LIMIT,
             "variables larger than %zu bytes (raise it with --max-json-bytes / cf_limits.max_json_bytes)",
             b->rt.lim.max_json_bytes);
}

/* Every string's first checks: its pointer, and its bytes counted against
 * max_json_bytes. */
static ALWAYS_INLINE void count_str(cf_builder *b, const char *s, size_t n) {
    if (!s && n) null_string(b);
    b->bytes += n;
    if (b->bytes > b->rt.lim.max_json_bytes) too_many_bytes(b);
}

/* What the host says of a string's bytes: nothing (they are validated and
 * their characters counted), that they are ASCII (CF_ITEM_ASCII, CF_ITEM_KEY:
 * not scanned), or that they are valid UTF-8 (CF_ITEM_UTF8: not validated,
 * counted if a render needs the count). */
typedef enum StrTrust { STR_CHECKED, STR_ASCII, STR_UTF8 } StrTrust;

/* json_str_carve with its two bounds of a string carved in one
 * (cf_builder.carve_max); a longer string, or one past max_string, goes its
 * slow way, which makes it alone (or throws). */
static ALWAYS_INLINE Str *carve_str(cf_builder *b, const char *s, size_t n) {
    size_t need = (sizeof(Str) + n + 1 + 7) & ~(size_t)7;   /* (as json_str_carve) */
    if (n > b->carve_max || need > (size_t)(b->carver.end - b->carver.at))
        return json_str_carve_slow(&b->rt, &b->carver, s, n);
    Str *str = (Str *)(void *)b->carver.at;
    b->carver.at += need;
    str->len = n;
    str->hash = 0;
    copy_bytes(str->data, s, n);
    str->data[n] = '\0';
    return str;   /* (nchars: the caller's) */
}

/* The Str of n bytes at s (counted): with recent, a short one made moments
 * ago, else a new one. */
static ALWAYS_INLINE Str *make_str(cf_builder *b, const char *s, size_t n, StrTrust trust, bool recent) {
    Str **slot = NULL;
    if (recent && n && n <= 16) {
        slot = &b->recent[(n * 31 + (unsigned char)s[0] * 7 + (unsigned char)s[n - 1]) & 63];
        Str *hit = *slot;
        if (hit && hit->len == n && mem_equal(hit->data, s, n)) return hit;
    }
    int64_t chars = (int64_t)n;
    if (trust == STR_UTF8) {
        chars = -1;   /* (not known yet: see str_nchars) */
    } else if (trust == STR_CHECKED && !utf8_is_ascii(s, n)) {
        size_t bad;
        if (!utf8_validate(s, n, &bad))
            rt_throw(&b->rt, CF_ERR_UNICODE, "'utf-8' codec can't decode byte 0x%02x in position %zu: invalid utf-8",
                     (unsigned char)s[bad], bad);
        chars = (int64_t)utf8_count(s, n);
    }
    Str *str = carve_str(b, n ? s : "", n);
    str->nchars = chars;
    if (slot) *slot = str;
    return str;
}

/* The slot of a key of n bytes at s (counted) in dict d. STR_ASCII: the
 * host also says the bytes stay at s until the finish (CF_ITEM_ASCII): the
 * key is remembered by address. unique: also a key its dict has not had
 * (CF_ITEM_KEY). */
static ALWAYS_INLINE Value *key_str_slot(cf_builder *b, Dict *d, const char *s, size_t n, StrTrust trust, bool unique) {
    SeenKey *seen = NULL;
    if (trust == STR_ASCII && n) {
        seen = &b->seen[((uintptr_t)s >> 3 ^ n) & (SEEN_KEYS - 1)];
        if (seen->at == s && seen->len == n) return key_slot(b, d, seen->str, seen->what, unique);
    }
    KeyStr what = KEY_UNRESOLVED;
#if KNOWN_SHORT_KEYS
    /* A dict key chat data uses (role, content, type...): its shared Str,
     * found by two words (a long one by its length and bytes), with no
     * copy, no hash and no byte compare; a key not found has none. */
    Str *known = NULL;
    if (n >= 16) {
        known = known_long_key(s, n);
    } else if (n) {
        uint64_t k[2];
        load_padded16(s, n, k);
        known = known_short_key(k[0], k[1]);
        if (known && known->len != n) known = NULL;   /* ("role\0" pads to the words of "role") */
    }
    if (known) {
        if (seen) *seen = (SeenKey){s, n, known, KEY_KNOWN};
        return key_slot(b, d, known, KEY_KNOWN, unique);
    }
    what = KEY_PLAIN;
#endif
    Str *str = make_str(b, s, n, trust, true);
    if (seen) *seen = (SeenKey){s, n, str, what};
    return key_slot(b, d, str, what, unique);
}

/* A string pushed one at a time (cf_builder_str, or an item fed where a
 * container opens or closes): a dict key where one is due, else a value.
 * trust, unique_key: as key_str_slot. */
static ALWAYS_INLINE void push_str(cf_builder *b, const char *s, size_t n, StrTrust trust, bool unique_key) {
    count_str(b, s, n);
    OpenContainer *c = b->top;
    bool is_key = c->v.type == VT_DICT && !(c->remaining & 1);
    if (unique_key && !is_key) key_misplaced(b);
    if (is_key) {
        c->remaining--;   /* (a value follows: never the last item) */
        c->slot = key_str_slot(b, c->v.u.dict, s, n, trust, unique_key);
        return;
    }
    place(b, v_str_of(make_str(b, s, n, trust, true)));
}

static void push_float(cf_builder *b, double v) {
    if (!isfinite(v)) rt_throw(&b->rt, CF_ERR_VALUE, "Out of range float values are not JSON compliant");
    place(b, v_float(v));
}

static ALWAYS_INLINE void push_dict(cf_builder *b, size_t npairs) {
    if (npairs > SIZE_MAX / 2) rt_throw(&b->rt, CF_ERR_LIMIT, "cf_builder_dict: too many pairs");
    open_container(b, OPEN_DICT, npairs);
}

CF_API void cf_builder_null(cf_builder *b) {
    GUARDED(b);
    place(b, v_none());
}

CF_API void cf_builder_bool(cf_builder *b, bool v) {
    GUARDED(b);
    place(b, v_bool(v));
}

CF_API void cf_builder_int(cf_builder *b, int64_t v) {
    GUARDED(b);
    place(b, v_int(v));
}

CF_API void cf_builder_float(cf_builder *b, double v) {
    GUARDED(b);
    push_float(b, v);
}

CF_API void cf_builder_str(cf_builder *b, const char *s, size_t n) {
    GUARDED(b);
    push_str(b, s, n, STR_CHECKED, false);
}

CF_API void cf_builder_list(cf_builder *b, size_t n) {
    GUARDED(b);
    open_container(b, OPEN_LIST, n);
}

CF_API void cf_builder_tuple(cf_builder *b, size_t n) {
    GUARDED(b);
    open_container(b, OPEN_TUPLE, n);
}

CF_API void cf_builder_dict(cf_builder *b, size_t npairs) {
    GUARDED(b);
    push_dict(b, npairs);
}

/* One item as the matching single call pushes it: the items where a
 * container opens, and those the runs below leave to it (a key that is
 * not a string, a misplaced KEY, an unknown kind, a top-level value). */
static NOINLINE void feed_one(cf_builder *b, const cf_builder_item *it) {
    switch (it->kind) {
    case CF_ITEM_ASCII: push_str(b, it->u.s, it->n, STR_ASCII, false); break;
    case CF_ITEM_KEY: push_str(b, it->u.s, it->n, STR_ASCII, true); break;
    case CF_ITEM_STR: push_str(b, it->u.s, it->n, STR_CHECKED, false); break;
    case CF_ITEM_UTF8: push_str(b, it->u.s, it->n, STR_UTF8, false); break;
    case CF_ITEM_DICT: push_dict(b, it->n); break;
    case CF_ITEM_LIST: open_container(b, OPEN_LIST, it->n); break;
    case CF_ITEM_TUPLE: open_container(b, OPEN_TUPLE, it->n); break;
    case CF_ITEM_NULL: place(b, v_none()); break;
    case CF_ITEM_BOOL: place(b, v_bool(it->n != 0)); break;
    case CF_ITEM_INT: place(b, v_int(it->u.i)); break;
    case CF_ITEM_FLOAT: push_float(b, it->u.f); break;
    default: rt_throw(&b->rt, CF_ERR_USAGE, "cf_builder_feed: unknown item kind %d", (int)it->kind);
    }
}

/* A string or scalar item as a value into *v; false for any other kind
 * (a container, a KEY, an unknown kind: left to feed_one). The commonest
 * kinds by direct branches (a jump on the kind is an indirect one, which
 * these items make hard to predict). A short ASCII or checked string equal
 * to a recent one is that Str: a binding's rows hold each message's role
 * as an object of its own, and a render's memos (message.role|lower, the
 * elif chain it decides) are keyed by the Str's address. */
static ALWAYS_INLINE bool item_value(cf_builder *b, const cf_builder_item *it, Value *v) {
    cf_builder_item_kind kind = it->kind;
    if (kind == CF_ITEM_ASCII || kind == CF_ITEM_STR) {
        count_str(b, it->u.s, it->n);
        *v = v_str_of(make_str(b, it->u.s, it->n, kind == CF_ITEM_ASCII ? STR_ASCII : STR_CHECKED, true));
        return true;
    }
    switch (kind) {
    case CF_ITEM_UTF8:
        count_str(b, it->u.s, it->n);
        *v = v_str_of(make_str(b, it->u.s, it->n, STR_UTF8, false));
        return true;
    case CF_ITEM_NULL: *v = v_none(); return true;
    case CF_ITEM_BOOL: *v = v_bool(it->n != 0); return true;
    case CF_ITEM_INT: *v = v_int(it->u.i); return true;
    case CF_ITEM_FLOAT:
        if (!isfinite(it->u.f)) return false;   /* (feed_one reports it) */
        *v = v_float(it->u.f);
        return true;
    default: return false;
    }
}

/* A value item that is not a string or scalar: a container opened here
 * (inline: it becomes the innermost), anything else by feed_one. The
 * caller's container has its state written back (the opening of an empty
 * one places it there). Returns the item after it. */
static ALWAYS_INLINE const cf_builder_item *open_item(cf_builder *b, const cf_builder_item *it) {
    switch (it->kind) {
    case CF_ITEM_DICT: push_dict(b, it->n); break;
    case CF_ITEM_LIST: open_container(b, OPEN_LIST, it->n); break;
    case CF_ITEM_TUPLE: open_container(b, OPEN_TUPLE, it->n); break;
    default: feed_one(b, it);
    }
    return it + 1;
}

/* Container c (the innermost) got its last item: it is itself the next
 * item of the one around it. */
static ALWAYS_INLINE void close_top(cf_builder *b, OpenContainer *c) {
    b->depth--;
    b->top--;
    place(b, c->v);
}

/* A run of dict c's pairs (c the innermost) from it, up to end: each key
 * and value placed with the dict's state in locals, without the checks of
 * where an item goes that a single push makes. Returns where it stopped:
 * at the end, after the dict's last value (closed), or after an item that
 * changes the innermost container or is not a pair's (feed_one's). */
static ALWAYS_INLINE const cf_builder_item *feed_pairs(cf_builder *b, OpenContainer *c, const cf_builder_item *it,
                                                       const cf_builder_item *end) {
    Dict *d = c->v.u.dict;
    size_t remaining = c->remaining;
    Value *slot = c->slot;
    while (it < end) {
        if (!(remaining & 1)) {   /* a key */
            cf_builder_item_kind kind = it->kind;
            if (kind != CF_ITEM_KEY && kind != CF_ITEM_ASCII && kind != CF_ITEM_STR && kind != CF_ITEM_UTF8) {
                c->remaining = remaining;
                feed_one(b, it);   /* (its error) */
                return it + 1;
            }
            count_str(b, it->u.s, it->n);
            slot = kind == CF_ITEM_KEY     ? key_str_slot(b, d, it->u.s, it->n, STR_ASCII, true)
                   : kind == CF_ITEM_ASCII ? key_str_slot(b, d, it->u.s, it->n, STR_ASCII, false)
                   : kind == CF_ITEM_STR   ? key_str_slot(b, d, it->u.s, it->n, STR_CHECKED, false)
                                           : key_str_slot(b, d, it->u.s, it->n, STR_UTF8, false);
            remaining--;
            if (++it == end) break;
        }
        Value v;
        if (!item_value(b, it, &v)) {
            c->remaining = remaining;
            c->slot = slot;
            return open_item(b, it);
        }
        *slot = v;
        it++;
        if (!--remaining) {
            c->remaining = 0;
            close_top(b, c);
            return it;
        }
    }
    c->remaining = remaining;
    c->slot = slot;
    return it;
}

/* The same for a list's or a tuple's items. */
static ALWAYS_INLINE const cf_builder_item *feed_list(cf_builder *b, OpenContainer *c, const cf_builder_item *it,
                                                      const cf_builder_item *end) {
    List *l = c->v.u.list;
    size_t remaining = c->remaining;
    while (it < end) {
        Value v;
        if (!item_value(b, it, &v)) {
            c->remaining = remaining;
            return open_item(b, it);
        }
        l->items[l->len++] = v;
        it++;
        if (!--remaining) {
            c->remaining = 0;
            close_top(b, c);
            return it;
        }
    }
    c->remaining = remaining;
    return it;
}

/* The items from it to end: runs of the innermost container's items (it
 * changes only where one opens or closes), a top-level value alone. */
static void feed_items(cf_builder *b, const cf_builder_item *it, const cf_builder_item *end) {
    while (it < end) {
        OpenContainer *c = b->top;
        if (c->v.type == VT_DICT) it = feed_pairs(b, c, it, end);
        else if (b->depth) it = feed_list(b, c, it, end);
        else feed_one(b, it++);
    }
}

/* Many values under one guard: what a binding walking its objects calls,
 * a chunk of items at a time, instead of one call (and setjmp) a value. */
CF_API void cf_builder_feed(cf_builder *b, const cf_builder_item *items, size_t n) {
    GUARDED(b);
    if (!items && n) rt_throw(&b->rt, CF_ERR_USAGE, "cf_builder_feed: NULL items");
    feed_items(b, items, items + n);
}

CF_API bool cf_builder_failed(const cf_builder *b) { return !b || b->failed; }

/* The value built, as a context (b's, handed over), or NULL + b->err
 * (caller: the entry point's name, for a usage error). */
static cf_context *built_context(cf_builder *b, const char *caller) {
    if (b->failed) return NULL;
    if (b->depth || !b->have_root)
        error_set(&b->err, CF_ERR_USAGE, 0, 0, "%s: %s", caller,
                  b->depth ? "a list or dict is still open" : "no value was built");
    else if (b->root.type != VT_DICT)
        error_set(&b->err, CF_ERR_TYPE, 0, 0, "context must be a JSON object, not %s", v_type_name(b->root));
    else {
        cf_context *ctx = b->ctx;
        ctx->vars = b->root.u.dict;
        b->ctx = NULL;
        return ctx;
    }
    return NULL;
}

/* finish's and take's common part: the context built, or NULL + *err
 * (b NULL: out of memory, as cf_builder_new failed). */
static cf_context *hand_over(cf_builder *b, cf_error *err, const char *caller) {
    cf_error scratch;
    if (!err) err = &scratch;
    if (!b) {
        error_set(err, CF_ERR_MEMORY, 0, 0, "out of memory");
        return NULL;
    }
    cf_context *ctx = b->ctx ? built_context(b, caller) : NULL;
    if (!ctx) {
        *err = b->err;
        err->offset = 0;
    }
    return ctx;
}

CF_API cf_context *cf_builder_finish(cf_builder *b, cf_error *err) {
    cf_context *ctx = hand_over(b, err, "cf_builder_finish");
    cf_builder_free(b);
    return ctx;
}

CF_API cf_context *cf_builder_take(cf_builder *b, cf_error *err) {
    cf_context *ctx = hand_over(b, err, "cf_builder_take");
    if (!b) return NULL;
    /* the next value's start: the last one's context (a failed one's) goes */
    if (b->ctx) cf_context_free(b->ctx);
    b->ctx = NULL;
    if (!builder_clear(b)) {   /* (a deep value's open stack stays, grown) */
        b->failed = true;
        error_set(&b->err, CF_ERR_MEMORY, 0, 0, "out of memory");
    }
    return ctx;
}
