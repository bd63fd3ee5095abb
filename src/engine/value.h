/* value.h — Python-semantics values as Jinja2 sees them.
 *
 * A Value is 16 bytes, passed by value. Heap parts (strings, lists, dicts,
 * objects) live in the arena of the Rt that made them and are immutable once
 * built — the immutable sandbox forbids mutation, which is also what lets a
 * compiled template's constants be shared by concurrent renders. The only
 * mutable things are namespace attributes and the internal state of
 * cycler/joiner/loop objects, all created per render. */
#ifndef CF_VALUE_H
#define CF_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "runtime.h"
#include <string.h>

typedef enum ValueType {
    VT_MISSING = 0,   /* internal "no value" (unset arg); never user visible */
    VT_UNDEFINED,     /* Jinja2 Undefined; its hint: see UNDEF_TEXT */
    VT_NONE,
    VT_BOOL,
    VT_INT,           /* fits int64 */
    VT_BIGINT,        /* out of int64 range; u.s = decimal digits, optional '-' */
    VT_FLOAT,
    VT_STR,           /* flags & VF_MARKUP: a Jinja2 Markup string */
    VT_LIST,
    VT_TUPLE,         /* same representation as list */
    VT_DICT,
    VT_NAMESPACE,     /* u.dict holds the attributes (mutable) */
    VT_CALLABLE,      /* macro, builtin function, bound method, caller */
    VT_OBJECT         /* loop, cycler, joiner, dict views...: see Obj */
} ValueType;

/* Value.flags. VF_MARKUP on VT_STR. The VF_VIEW_* bits mark a VT_LIST that
 * is really a dict view (d.items()/keys()/values()): it iterates and
 * measures as a list but prints as dict_items([...]) etc. */
enum { VF_MARKUP = 1, VF_VIEW_ITEMS = 2, VF_VIEW_KEYS = 4, VF_VIEW_VALUES = 8,
       VF_GENERATOR = 16, VF_GROUP_TUPLE = 32, VF_RANGE = 64 };
/* VF_RANGE marks a VT_LIST that is a Python range (what range() and a slice
 * of a range give): it iterates, measures, indexes and tests membership as
 * the list of its items, which it holds; it prints as range(0, 3), equals
 * only a range, refuses + and *, json.dumps and ordering, and has .start,
 * .stop, .step. Its List is the head of a RangeList. */
/* The VT_LIST flags of things that are not a Python list. */
#define VF_NOT_A_LIST (VF_VIEW_ITEMS | VF_VIEW_KEYS | VF_VIEW_VALUES | VF_GENERATOR | VF_RANGE)
/* VF_GENERATOR marks a VT_LIST that stands for a Python generator (what
 * map/select/reject/selectattr/rejectattr/unique/batch/slice/items/reverse
 * return): iterable once, no len(), no indexing, always truthy, rejected by
 * json.dumps, printed as <generator object ...>. VF_GROUP_TUPLE marks
 * groupby's (grouper, list) 2-tuples, whose attributes .grouper and .list
 * name the two items. (filters.c sets both; value.c/json.c honour them.) */
/* Value.iter: what a VF_GENERATOR list is in Python, whose type name
 * messages show ('list_reverseiterator' object is not reversible): a
 * generator, or what reversed() gives for a list, a tuple (or Undefined),
 * and a dict and its views. */
enum { ITER_GENERATOR, ITER_LIST_REVERSE, ITER_REVERSED, ITER_DICT_REVERSE_KEYS, ITER_DICT_REVERSE_ITEMS,
       ITER_DICT_REVERSE_VALUES, ITER_RANGE };
/* For VT_UNDEFINED, flags holds the cf_error_kind its use raises (0 means
 * CF_ERR_UNDEFINED); the sandbox's "unsafe" undefineds raise SecurityError.
 * Its iter tells where its hint (the message of that error) is: UNDEF_TEXT,
 * u.s (or NULL: none); UNDEF_MISSED, u.miss, a failed lookup whose message
 * ("'str object' has no attribute 'type'") is written only if it is read,
 * as Jinja2's Undefined does: templates probe missing keys in loops (`for c
 * in message['content']` over a string's characters, then c['type']), and
 * formatting each hint took most of such a render; UNDEF_NOT_PROVIDED,
 * u.s is a macro parameter the call left out ("parameter 'x' was not
 * provided"); UNDEF_NO_ELSE, u.i is the line of an inline if without else
 * whose test was false (`'x' if y` is common, and false in most renders).
 * Read it with undef_hint(). */
enum { UNDEF_TEXT = 0, UNDEF_MISSED = 1, UNDEF_NOT_PROVIDED = 2, UNDEF_NO_ELSE = 3 };
typedef struct MissedLookup MissedLookup;

typedef struct Str {
    size_t len;        /* bytes, excluding the terminating NUL */
    int64_t nchars;    /* code points; -1 = not computed yet */
    uint32_t hash;     /* 0 = not computed yet */
    char data[];       /* UTF-8, NUL-terminated */
} Str;

typedef struct Value Value;
/* The text a list or dict was read from, kept when it is exactly what
 * json.dumps(value, ensure_ascii=False) writes (Python's separators, no
 * indent): tojson with those options copies it rather than writing the value
 * again (json.c). steps: what that dump charges (rt_step); height: how far
 * below the container its dump descends. Cleared by any change. */
typedef struct JsonSource { const char *text; size_t len; uint64_t steps; uint32_t height; } JsonSource;
/* tail_owner: the arena of the render whose sums may write past len (see
 * seq_concat in operators.c); NULL for every other list. */
typedef struct List { size_t len, cap; Value *items; const JsonSource *json; const void *tail_owner; } List;
typedef struct Dict Dict;
typedef struct Obj Obj;

struct Value {
    uint8_t type;      /* ValueType */
    uint8_t flags;     /* VF_MARKUP */
    uint8_t iter;      /* a VF_GENERATOR list: the ITER_* Python type it stands for */
    union {
        bool b;
        int64_t i;
        double f;
        Str *s;
        List *list;
        Dict *dict;
        Obj *obj;
        const MissedLookup *miss;
    } u;
};

/* A lookup of key in obj that found nothing (an UNDEF_MISSED hint). */
struct MissedLookup { Value obj, key; };

/* Call arguments as the interpreter hands them to builtins. */
typedef struct Args {
    int npos;
    const Value *pos;
    int nkw;
    Str *const *kwnames;
    const Value *kwvals;
} Args;

struct StrBuf;      /* defined below; used by ObjType.repr */

/* Objects: callables and stateful helpers, dispatched through a vtable. */
typedef struct ObjType {
    const char *name;  /* Python type name for messages: "function", "LoopContext" */
    /* attribute lookup; return false when absent (-> Undefined) */
    bool (*getattr)(Rt *rt, Obj *self, const char *name, size_t n, Value *out);
    /* call; NULL = not callable */
    Value (*call)(Rt *rt, Obj *self, const Args *args);
    /* Python str()/repr() text; NULL = "<name object>" */
    void (*repr)(Rt *rt, Obj *self, struct StrBuf *sb);
    /* Python iter(): the items, as v_iterate gives them; NULL = not iterable */
    List *(*iterate)(Rt *rt, Obj *self);
} ObjType;

struct Obj {
    const ObjType *type;
    void *data;
};

/* ---- constructors ---- */
static inline Value v_missing(void) { Value v = {0}; return v; }
static inline Value v_none(void) { Value v = {0}; v.type = VT_NONE; return v; }
static inline Value v_bool(bool b) { Value v = {0}; v.type = VT_BOOL; v.u.b = b; return v; }
static inline Value v_int(int64_t i) { Value v = {0}; v.type = VT_INT; v.u.i = i; return v; }
static inline Value v_float(double f) { Value v = {0}; v.type = VT_FLOAT; v.u.f = f; return v; }
static inline Value v_undef(Str *hint) { Value v = {0}; v.type = VT_UNDEFINED; v.u.s = hint; return v; }
static inline Value v_str_of(Str *s) { Value v = {0}; v.type = VT_STR; v.u.s = s; return v; }
static inline Value v_list_of(List *l) { Value v = {0}; v.type = VT_LIST; v.u.list = l; return v; }
/* A Python list: not a tuple, dict view, generator or range. */
static inline bool v_is_list(Value v) { return v.type == VT_LIST && !(v.flags & VF_NOT_A_LIST); }
static inline Value v_tuple_of(List *l) { Value v = {0}; v.type = VT_TUPLE; v.u.list = l; return v; }
static inline Value v_dict_of(Dict *d) { Value v = {0}; v.type = VT_DICT; v.u.dict = d; return v; }
static inline Value v_markup(Value s) { s.flags |= VF_MARKUP; return s; }

/* A VT_CALLABLE or VT_OBJECT value around a new Obj(type, data). */
Value v_object(Rt *rt, ValueType vt, const ObjType *type, void *data);
Str *str_new(Rt *rt, const char *p, size_t n);          /* copies */
Str *str_alloc(Rt *rt, size_t n);                        /* uninitialised data[n] + NUL */
Value v_str(Rt *rt, const char *p, size_t n);
Value v_strz(Rt *rt, const char *z);
Value v_undef_msg(Rt *rt, const char *fmt, ...);         /* Undefined with hint */
Str *undef_hint(Rt *rt, Value undef);                    /* its hint, or NULL (see UNDEF_TEXT) */
Value v_missed_lookup(Rt *rt, Value obj, Value key);     /* the Undefined obj[key] / obj.key gives */
Value v_bigint(Rt *rt, const char *digits, size_t n);    /* normalises to VT_INT if it fits */
size_t str_nchars(Str *s);                                /* code points (cached) */
/* s is ASCII, as far as is known without reading it: its code points
 * counted (by its reader, the builder, or the compiler for a template's
 * constants) and one a byte. (Every Str holds valid UTF-8, where a
 * character a byte means every byte < 0x80.) */
static inline bool str_known_ascii(const Str *s) { return s->nchars == (int64_t)s->len; }
uint32_t str_hash(Str *s);                                /* cached */
bool str_eq(const Str *a, const Str *b);
bool str_eqz(const Str *a, const char *z);

/* ---- lists ---- */
List *list_new(Rt *rt, size_t cap);
/* A VF_RANGE list: range(start, stop, step) with its items (step != 0;
 * the caller has bounded their number). */
typedef struct RangeList { List list; int64_t start, stop, step; } RangeList;
Value v_range(Rt *rt, int64_t start, int64_t stop, int64_t step);
static inline const RangeList *v_range_of(Value v) { return (const RangeList *)(const void *)v.u.list; }
/* How many items range(start, stop, step) has (step != 0). */
uint64_t range_length(int64_t start, int64_t stop, int64_t step);
void list_push(Rt *rt, List *l, Value v);               /* enforces lim.max_items */

/* ---- dicts (insertion ordered, any hashable key) ---- */
Dict *dict_new(Rt *rt, size_t cap);
/* Give back a dict from dict_new that nothing else refers to (a filter's
 * scratch table): see rt_free. */
void dict_free(Rt *rt, Dict *d);
/* A dict filled pair by pair with at most npairs str keys, whose count is
 * known up front (the builder's): dict_str_slot adds the key, or finds it
 * again as dict_set would (first position kept, last value wins), and
 * answers where its value goes. The dict never grows, so the slot stays
 * valid until the value is written. */
Dict *dict_new_str_pairs(Rt *rt, size_t npairs);
Value *dict_str_slot(Rt *rt, Dict *d, Value key);
/* The same for a key that is its known Str (known_key): found again by
 * pointer, its hash already set. */
Value *dict_known_key_slot(Rt *rt, Dict *d, Str *known);
Dict *dict_from_str_pairs(Rt *rt, const Value *kv, size_t npairs);   /* keys: VT_STR only */
/* The same when every key already is its known Str, if it has one (the
 * JSON reader resolves them as it reads them). */
Dict *dict_from_resolved_pairs(Rt *rt, const Value *kv, size_t npairs);
/* A dict holding d's items that adds `more` new keys (dict_set) into the
 * room after d's, taken over from d, not copied: when d is this render's
 * (its tail_owner) and has that room without growing its entries or index;
 * else NULL. The keys added must not be in d (d would see their values). */
Dict *dict_claim(Rt *rt, Dict *d, size_t more);
/* Copy src's items into d, empty and made (dict_new) with room for them:
 * their keys are distinct and hashed, so none is looked up. */
void dict_fill_copy(Dict *d, const Dict *src);
size_t dict_len(const Dict *d);
void dict_set(Rt *rt, Dict *d, Value key, Value val);   /* replace keeps position */
/* Adds key -> val unless the key is there (then nothing changes): false. One
 * lookup, where dict_get then dict_set take two (a set's add). */
bool dict_add(Rt *rt, Dict *d, Value key, Value val);
bool dict_get(const Dict *d, Value key, Value *out);
bool dict_get_str(const Dict *d, const char *k, size_t n, Value *out);
/* The hot path of `msg.role`: key is a Str whose hash is cached. */
bool dict_get_key(const Dict *d, Str *key, Value *out);

/* The dict's layout, for the interpreter's inline lookups only. */
#define DICT_LINEAR_MAX 8
typedef struct DictEntry { Value key, val; uint32_t hash; } DictEntry;
struct Dict {
    size_t len, cap;
    DictEntry *entries;
    uint32_t *index;      /* NULL while len <= DICT_LINEAR_MAX */
    size_t index_mask;    /* slots - 1 (slots are a power of two) */
    const JsonSource *json;   /* see List */
    /* The arena of the render whose dict() may write past len: entries (and
     * index) are shared with the dict() that claimed them (see dict_claim). */
    const void *tail_owner;
};

/* An empty dict without an index over room for cap (<= DICT_LINEAR_MAX)
 * entries at entries: a small dict laid out in one allocation with them
 * (dict_new_str_pairs, the JSON reader's dicts). */
static inline void dict_init_small(Dict *d, DictEntry *entries, size_t cap) {
    d->len = 0;
    d->cap = cap;
    d->entries = cap ? entries : NULL;
    d->index = NULL;
    d->index_mask = 0;
    d->json = NULL;
    d->tail_owner = NULL;
}

/* known_keys.c (generated): the shared Str of a key chat data uses (role,
 * content, tool_calls, ...) equal to s, whose hash is given, or NULL. Every
 * dict stores such a key as that Str (dict_set, dict_str_slot,
 * dict_from_str_pairs see to it), and the parser names attributes with
 * them: a known key is in a dict exactly when its Str is. Never written. */
Str *known_key(const Str *s, uint32_t hash);
/* The known key of n bytes at p when n > 15 (by length and bytes: no hash), or NULL. */
Str *known_long_key(const char *p, size_t n);
/* The known key of up to 15 bytes whose first 16 bytes, zero-padded, are
 * the words k0 and k1, or NULL: without a hash (the JSON reader's keys).
 * Only where those words are little-endian, as the generator computes them. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define KNOWN_SHORT_KEYS 1
Str *known_short_key(uint64_t k0, uint64_t k1);
#else
#define KNOWN_SHORT_KEYS 0
#endif
size_t known_key_count(void);
Str *known_key_at(size_t i);   /* for the tests */
/* A dict's JsonSource (see List), or NULL; set by the JSON reader. */
const JsonSource *dict_json_source(const Dict *d);
void dict_set_json_source(Dict *d, const JsonSource *js);
bool dict_del(Dict *d, Value key);                       /* internal use only */
/* i-th entry in insertion order, 0 <= i < dict_len */
Value dict_key_at(const Dict *d, size_t i);
Value dict_val_at(const Dict *d, size_t i);

/* ---- string builder (arena backed) ---- */
typedef struct StrBuf {
    Rt *rt; char *p; size_t len, cap;
    bool is_output;     /* the render's output: max_output applies, not max_string */
    /* A capture's text while it is one string written whole (a macro whose
     * body outputs its argument): held, not copied; p is NULL until a second
     * piece comes (sb_reserve copies it in) and sb_to_str returns it as is. */
    Str *whole;
    /* The interpreter's writes into it so far: Jinja2's yields into the
     * sequence it joins. A filter block's value that is not a str is
     * yielded as it is and makes the join fail: the first such item's
     * type (NULL: none) and position, raised when the buffer is joined. */
    size_t items, bad_item;
    const char *bad_type;
    /* The bytes written as whole strs known to be ASCII (str_known_ascii),
     * or SB_ASCII_LOST once a str not known ASCII was written: equal to len
     * exactly when every byte came that way, so the buffer is ASCII without
     * reading it (cf_result.nchars: its caller need not scan the output).
     * Any other write adds to len alone, so it ends that for good. A buffer
     * is cut back only by sb_truncate. */
    size_t ascii_len;
} StrBuf;
/* StrBuf.ascii_len once lost: past any length a buffer reaches, with what is added after it. */
#define SB_ASCII_LOST (SIZE_MAX / 2)
void sb_init(Rt *rt, StrBuf *sb, size_t cap);
/* An empty buffer that allocates on its first write (captures). */
void sb_init_lazy(Rt *rt, StrBuf *sb);
/* Writes s into sb: held whole if sb is a lazy buffer still empty. */
static inline void sb_put_str(StrBuf *sb, Str *s);
/* Gives sb a real buffer (a held string copied in), for direct writes. */
void sb_materialize(StrBuf *sb);
/* A heap buffer for a render's output (max_output applies); the caller owns
 * and frees sb->p, also after an error. */
void sb_init_output(Rt *rt, StrBuf *sb, size_t cap);
/* Equal bytes. Keys and roles are short ("role", "user"): two overlapping
 * loads from either end (never past n) compare them without calling memcmp. */
static inline bool mem_equal(const char *a, const char *b, size_t n) {
    if (n >= 8 && n <= 16) {
        uint64_t a0, a1, b0, b1;
        memcpy(&a0, a, 8); memcpy(&a1, a + n - 8, 8);
        memcpy(&b0, b, 8); memcpy(&b1, b + n - 8, 8);
        return ((a0 ^ b0) | (a1 ^ b1)) == 0;
    }
    if (n >= 4 && n < 8) {
        uint32_t a0, a1, b0, b1;
        memcpy(&a0, a, 4); memcpy(&a1, a + n - 4, 4);
        memcpy(&b0, b, 4); memcpy(&b1, b + n - 4, 4);
        return ((a0 ^ b0) | (a1 ^ b1)) == 0;
    }
    if (n > 16 && n <= 32) {   /* reasoning_content, add_generation_prompt */
        uint64_t a0, a1, a2, a3, b0, b1, b2, b3;
        memcpy(&a0, a, 8); memcpy(&a1, a + 8, 8); memcpy(&a2, a + n - 16, 8); memcpy(&a3, a + n - 8, 8);
        memcpy(&b0, b, 8); memcpy(&b1, b + 8, 8); memcpy(&b2, b + n - 16, 8); memcpy(&b3, b + n - 8, 8);
        return ((a0 ^ b0) | (a1 ^ b1) | (a2 ^ b2) | (a3 ^ b3)) == 0;
    }
    if (n && n < 4) return a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1];
    return memcmp(a, b, n) == 0;
}

/* Append; enforce lim.max_string (max_output for the output buffer). The
 * fast paths are inline: cap never exceeds the buffer's limit, so fitting
 * in the buffer also means staying within the limit. */
void sb_put_grow(StrBuf *sb, const char *p, size_t n);
void sb_putc_grow(StrBuf *sb, char c);
/* Most output pieces are a few bytes ("\n", "<|im_end|>"): copied as two
 * overlapping words (never reading past n), not by a call to memcpy. */
void copy_bytes_long(char *d, const char *s, size_t n);   /* memcpy, out of line */
#if defined(__GNUC__) && !defined(__clang__)
/* GCC checks the word copies of inlined calls against small buffers even
 * on the branches their length rules out. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
static inline void copy_bytes(char *d, const char *s, size_t n) {
    if (n > 16) {
        copy_bytes_long(d, s, n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8); memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8); memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4); memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4); memcpy(d + n - 4, &b, 4);
    } else if (n) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
static inline void sb_put(StrBuf *sb, const char *p, size_t n) {
    if (sb->p && n <= sb->cap - sb->len) {
        copy_bytes(sb->p + sb->len, p, n);
        sb->len += n;
    } else {
        sb_put_grow(sb, p, n);
    }
}
static inline void sb_put_str(StrBuf *sb, Str *s) {
    bool ascii = str_known_ascii(s);
    if (!sb->p && !sb->len) {   /* a lazy capture, nothing written yet */
        sb->whole = s;
        sb->len = s->len;
        sb->ascii_len = ascii ? s->len : SB_ASCII_LOST;
        return;
    }
    sb_put(sb, s->data, s->len);
    if (ascii) sb->ascii_len += s->len;
    else sb->ascii_len = SB_ASCII_LOST;
}
/* Cut sb back to its first n bytes (n <= len): known ASCII if all of it
 * was (every shortening of a buffer goes through here). */
static inline void sb_truncate(StrBuf *sb, size_t n) {
    sb->ascii_len = sb->ascii_len == sb->len ? n : SB_ASCII_LOST;
    sb->len = n;
}
static inline void sb_putc(StrBuf *sb, char c) {
    if (sb->p && sb->len < sb->cap) sb->p[sb->len++] = c;
    else sb_putc_grow(sb, c);
}
void sb_puts(StrBuf *sb, const char *z);
void sb_printf(StrBuf *sb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void sb_put_cp(StrBuf *sb, uint32_t cp);                 /* UTF-8 encode */
void sb_put_int(StrBuf *sb, int64_t i);                  /* decimal, like "%lld" */
Str *sb_to_str(StrBuf *sb);                              /* finishes; sb reusable after sb_init */
Value sb_to_value(StrBuf *sb);

/* ---- Python semantics ---- */
const char *v_type_name(Value v);    /* "str", "int", "float", "bool", "NoneType",
                                        "list", "tuple", "dict", "Undefined", "Namespace",
                                        "Markup" for markup str, obj->type->name */
bool v_truthy(Value v);               /* Python bool(); Undefined is false */
bool v_equal(Value a, Value b);       /* Python ==  (1 == 1.0 == True) */
/* Python ordering for <, <=, >, >=: returns <0, 0, >0; throws TypeError
 * "'<' not supported between instances of 'X' and 'Y'" (op is the operator text). */
int v_compare(Rt *rt, Value a, Value b, const char *op);
bool v_hashable(Value v);
/* The type Python's hash() of v names when it fails (a tuple's unhashable
 * item's), or NULL when v hashes. */
const char *v_unhashable_type(Value v);
uint32_t v_hash(Value v);             /* consistent with v_equal (hash(1)==hash(1.0)==hash(True)) */

/* Python str(v) appended to sb. Undefined prints as "" (Jinja2 default). */
void v_write_str(Rt *rt, StrBuf *sb, Value v);
/* Python repr(v) appended to sb (used for containers' items). */
void v_write_repr(Rt *rt, StrBuf *sb, Value v);
/* A VT_BIGINT's digits; ValueError past Python's 4300-digit int <-> str limit. */
void v_write_bigint(Rt *rt, StrBuf *sb, Value v);
/* Python str(v) as a Value (returns v itself when it is a plain str). */
Value v_to_str(Rt *rt, Value v);
/* Python float repr: "1.0", "1e-07", "1e+20", "-0.0", "inf", "nan". */
void fmt_float_repr(StrBuf *sb, double d);
/* Strictly an Undefined? Throws UndefinedError with its hint. Used by every
 * operation that Jinja2's Undefined refuses (attribute, item, arithmetic, call). */
_Noreturn void v_undefined_fail(Rt *rt, Value undef);

/* Jinja2 sandbox attribute/item lookup.
 * v_getattr: obj.name — attribute first (dict methods, namespace attrs,
 *   object attrs), then item; Undefined (with Jinja2's hint) when absent.
 *   Names starting with '_' are unsafe: Undefined, as the sandbox does.
 * v_getitem: obj[key] — item first (dict key, list/str index incl. negative),
 *   then attribute for str keys; Undefined when absent. */
Value v_getattr(Rt *rt, Value obj, const char *name, size_t n);
/* The dunder attributes a jinja2.Undefined instance has (dir(Undefined())):
 * the sandbox answers those with an "unsafe" Undefined (SecurityError when
 * used) instead of failing as other attributes of an Undefined do. */
bool v_undefined_has_dunder(const char *name, size_t n);
/* The same for a name that outlives the render (a template's): a missed
 * lookup's Undefined keeps it rather than a copy. */
Value v_getattr_str(Rt *rt, Value obj, Str *name);
Value v_getitem(Rt *rt, Value obj, Value key);

/* Iterate: strings yield characters, dicts keys, lists/tuples items.
 * Returns a fresh List (may alias for list/tuple). Throws TypeError
 * "'int' object is not iterable"; Undefined iterates as empty. */
List *v_iterate(Rt *rt, Value v);
/* A VF_GENERATOR list is used up as Python's iterators are: v_iterate takes
 * what is left of it (later reads see nothing), and a consumer that stops
 * part-way (`in`, first, a loop's break) gives back the items from `from`
 * on of what it took, which the generator then yields. The position lives
 * on the List: a render's values belong to one render and one thread, and
 * the parser never folds a generator into a template's constants. */
void generator_give_back(Rt *rt, Value gen, const List *taken, size_t from);
/* Python len(); throws TypeError "object of type 'int' has no len()". */
int64_t v_len(Rt *rt, Value v);

/* ---- argument binding for builtins ----
 * Bind `args` to parameters named `names[0..nparams)`: positional first, then
 * keywords by name. out[i] is VT_MISSING when not given. Throws TypeError
 * as Python would for too many positionals, unknown keyword or duplicates.
 * fname is used in messages ("foo() got an unexpected keyword argument 'x'"). */
void args_bind(Rt *rt, const Args *args, const char *fname, int nparams,
               const char *const *names, Value *out);
/* Convenience: throw TypeError unless there are no arguments at all. */
void args_none(Rt *rt, const Args *args, const char *fname);

#endif
