/* filters_shared.h — what the two filter files (filters.c: the registry and
 * the filters over values and sequences; filters_text.c: the filters that
 * format or rewrite text) share: Python-style argument binding and the
 * small Python helpers, inline here so that neither file pays a call for
 * them. Included by those two files only. */
#ifndef CF_FILTERS_SHARED_H
#define CF_FILTERS_SHARED_H

#include "builtins.h"

/* ---- argument binding with the messages Python gives for def f(value, ...) ---- */

enum { MAX_PARAMS = 6 };

typedef struct Sig {
    const char *fname;   /* Python function name, for messages */
    int hidden;          /* leading parameters Jinja2 fills (environment, context) */
    int nreq;            /* required parameters after the value */
    int nparams;         /* parameters after the value */
    const char *names[MAX_PARAMS];
} Sig;

/* bind's rare paths: keywords, and the TypeErrors Python raises. */
void filter_bind_slow(Rt *rt, const Args *args, const Sig *sig, Value *out);

/* out[0..sig->nparams) from args, VT_MISSING where not given. Most calls
 * pass a fitting number of positional arguments and no keyword: copied
 * here; the rest (keywords, errors) go through filter_bind_slow. */
static inline void bind(Rt *rt, const Args *args, const Sig *sig, Value *out) {
    int npos = args->npos;
    if (args->nkw || npos < sig->nreq || npos > sig->nparams) {
        filter_bind_slow(rt, args, sig, out);
        return;
    }
    for (int i = 0; i < npos; i++) out[i] = args->pos[i];
    for (int i = npos; i < sig->nparams; i++) out[i] = v_missing();
}

static inline Value or_default(Value v, Value dflt) { return v.type == VT_MISSING ? dflt : v; }

/* ---- Python helpers ---- */

static inline bool is_markup(Value v) { return v.type == VT_STR && (v.flags & VF_MARKUP); }
static inline bool is_int(Value v) { return v.type == VT_INT || v.type == VT_BOOL || v.type == VT_BIGINT; }
static inline bool is_number(Value v) { return is_int(v) || v.type == VT_FLOAT; }
static inline int64_t small_int(Value v) { return v.type == VT_BOOL ? (int64_t)v.u.b : v.u.i; }
static inline bool is_none(Value v) { return v.type == VT_NONE || v.type == VT_MISSING; }

/* markupsafe.soft_str: str() unless already a str (Markup stays Markup). */
static inline Value soft_str(Rt *rt, Value v) { return v.type == VT_STR ? v : v_to_str(rt, v); }

/* Python str(): always a plain str. */
static inline Value plain_str(Rt *rt, Value v) { return v_to_str(rt, v); }

static inline Value empty_str(Rt *rt) { return v_str(rt, "", 0); }

/* operator.index(): ints (and bools) only. */
static inline int64_t as_index(Rt *rt, Value v) {
    if (v.type == VT_INT || v.type == VT_BOOL) return small_int(v);
    if (v.type == VT_UNDEFINED) v_undefined_fail(rt, v);
    if (v.type == VT_BIGINT) rt_throw(rt, CF_ERR_OVERFLOW, "Python int too large to convert to C ssize_t");
    rt_throw(rt, CF_ERR_TYPE, "'%s' object cannot be interpreted as an integer", v_type_name(v));
}

static inline List *new_list(Rt *rt, size_t cap) { return list_new(rt, cap ? cap : 1); }

static inline Value tuple2(Rt *rt, Value a, Value b) {
    List *t = list_new(rt, 2);
    list_push(rt, t, a);
    list_push(rt, t, b);
    return v_tuple_of(t);
}

typedef struct Path { size_t n; Value *parts; } Path;

typedef struct Getter {
    size_t npaths;     /* 1 for make_attrgetter; one per ','-part for multi */
    Path *paths;
    bool multi;        /* result is a list of the values (sort's keys) */
    bool lower;        /* postprocess=ignore_case */
    Value dflt;        /* default= for undefined parts (VT_MISSING: none) */
} Getter;

typedef struct Keyed { Value key, val; } Keyed;

/* Defined in filters.c. */
/* s.lower(), without a copy when s has no upper-case ASCII letter. */
Value str_lower(Rt *rt, Value s);
/* Python's `a + b` on two strs, with Markup's escaping of the plain side. */
Value markup_concat(Rt *rt, Value a, Value b);
/* sep.join(items) for str items: Markup.join escapes plain items. */
Value markup_join(Rt *rt, Value sep, const List *items);
/* s[start:end] by code points (Markup keeps its flag). */
Value str_slice_chars(Rt *rt, Value s, size_t start, size_t end);
/* Python float(v), raising as Python does. */
double py_float(Rt *rt, Value v);
/* list.sort's comparisons, in CPython's order (the TypeError it raises first). */
void sort_keyed(Rt *rt, Keyed *a, size_t n, bool reverse);
/* sorted(items, key=getter, reverse=reverse) */
List *sorted_list(Rt *rt, const List *items, const Getter *g, bool reverse);

/* The text filters (filters_text.c), for the registry in filters.c. */
Value filter_center(Rt *rt, Value self, const Args *args);
Value filter_filesizeformat(Rt *rt, Value self, const Args *args);
Value filter_indent(Rt *rt, Value self, const Args *args);
Value filter_pprint(Rt *rt, Value self, const Args *args);
Value filter_striptags(Rt *rt, Value self, const Args *args);
Value filter_title(Rt *rt, Value self, const Args *args);
Value filter_truncate(Rt *rt, Value self, const Args *args);
Value filter_urlencode(Rt *rt, Value self, const Args *args);
Value filter_urlize(Rt *rt, Value self, const Args *args);
Value filter_wordcount(Rt *rt, Value self, const Args *args);
Value filter_wordwrap(Rt *rt, Value self, const Args *args);
Value filter_xmlattr(Rt *rt, Value self, const Args *args);

#endif
