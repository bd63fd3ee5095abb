/* _speedups.h — what the parts of the binding's C render path share:
 * the library's functions (resolved in _speedups.c's sp_init), the walk of
 * Python values into cf_builder items (_speedups.c) that render_batch
 * (_render_batch.c) also uses, and the calls between those files. Hot
 * helpers stay static inline here. */
#ifndef CHATFMT_SPEEDUPS_H
#define CHATFMT_SPEEDUPS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "chatfmt.h"
#include "_text_out.h"

/* (internal to the extension: not resolved through the process's symbols) */
#define SP_API __attribute__((visibility("hidden")))

typedef struct SpLib {
    cf_builder *(*builder_new)(const cf_limits *);
    void (*feed)(cf_builder *, const cf_builder_item *, size_t);
    bool (*failed)(const cf_builder *);
    cf_context *(*finish)(cf_builder *, cf_error *);
    cf_context *(*take)(cf_builder *, cf_error *);   /* NULL: a library without cf_builder_take */
    void (*builder_free)(cf_builder *);
    bool (*render_chat)(const cf_template *, const cf_context *, const cf_render_options *, cf_result *, cf_error *);
    bool (*render)(const cf_template *, const cf_context *, const cf_render_options *, cf_result *, cf_error *);
    void (*result_free)(cf_result *);
    void (*context_free)(cf_context *);
    /* dataset rows (format_jsonl) */
    cf_context *(*context_from_json_limits)(const char *, size_t, const cf_limits *, cf_error *);
    bool (*context_set_json)(cf_context *, const char *, const char *, size_t, cf_error *);
    bool (*context_set_bool)(cf_context *, const char *, bool);
    bool (*context_has_value)(const cf_context *, const char *);
    size_t (*json_quote)(const char *, size_t, char *, size_t);
    const char *(*error_kind_name)(cf_error_kind);
} SpLib;
SP_API extern SpLib lib;   /* the library ctypes loaded (sp_init) */

#if !defined(Py_GIL_DISABLED) && PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && \
    defined(__has_include)
#if __has_include("internal/pycore_dict.h")
#define READ_DICT_TABLE 1   /* (see Pairs) */
#endif
#endif
#ifndef READ_DICT_TABLE
#define READ_DICT_TABLE 0
#endif

/* A dict's pairs, in order, for the walks. On CPython 3.11 with the GIL, a
 * dict whose keys are all str in one table (every dict json.loads or a
 * literal makes) is read straight from its entries, as PyDict_Next reads
 * them (a call and its checks a pair were a sixth of a row's read); any
 * other layout or version goes through PyDict_Next. Fields only read. */
#if READ_DICT_TABLE
#define Py_BUILD_CORE 1
#include "internal/pycore_dict.h"
#undef Py_BUILD_CORE
#endif

typedef struct Pairs {
    PyObject *d;
    Py_ssize_t pos;           /* PyDict_Next's */
#if READ_DICT_TABLE
    const PyDictUnicodeEntry *e, *end;   /* the table's entries left; e NULL: PyDict_Next */
#endif
} Pairs;

static inline void pairs_start(Pairs *p, PyObject *d) {
    p->d = d;
    p->pos = 0;
#if READ_DICT_TABLE
    PyDictKeysObject *keys = ((PyDictObject *)d)->ma_keys;
    if (!((PyDictObject *)d)->ma_values && keys->dk_kind == DICT_KEYS_UNICODE) {
        p->e = DK_UNICODE_ENTRIES(keys);
        p->end = p->e + keys->dk_nentries;
    } else {
        p->e = NULL;
    }
#endif
}

static inline bool pairs_next(Pairs *p, PyObject **k, PyObject **v) {
#if READ_DICT_TABLE
    if (p->e) {
        for (; p->e < p->end; p->e++)
            if (p->e->me_value) {   /* (NULL: a deleted entry) */
                *k = p->e->me_key;
                *v = p->e->me_value;
                p->e++;
                return true;
            }
        return false;
    }
#endif
    return PyDict_Next(p->d, &p->pos, k, v);
}

SP_API extern PyObject *declined;   /* returned when the data is outside the subset */

/* The item kind of a compact ASCII str: CF_ITEM_ASCII (not scanned, keys
 * known again by address: a str's bytes never move or change), or
 * CF_ITEM_STR from a library that predates it (see sp_init). */
SP_API extern cf_builder_item_kind ascii_kind;
/* The kind of a compact ASCII key of a Python dict (its keys are distinct):
 * CF_ITEM_KEY (placed without a look at the keys before it), or ascii_kind
 * from a library that predates it (see sp_init). */
SP_API extern cf_builder_item_kind key_kind;
/* The kind of a str's UTF-8 that is not ASCII, made by Python or by the
 * walk (valid: a lone surrogate has none): CF_ITEM_UTF8 (not validated
 * again), or CF_ITEM_STR from a library that predates it (see sp_init). */
SP_API extern cf_builder_item_kind utf8_kind;

static inline PyObject *new_ref(PyObject *o) {   /* Py_NewRef, before Python 3.10 */
    Py_INCREF(o);
    return o;
}

/* Python's own recursion limit is far above what real variables nest; data
 * deeper than this goes the general way (which reports cycles as Python). */
enum { MAX_DEPTH = 200, CHUNK = 256 };

/* The values walked so far, fed to the builder a chunk at a time (one
 * library call per CHUNK values). Strings point into the Python objects,
 * alive until the feed copies them: the caller holds them and the GIL. */
typedef struct Walk {
    cf_builder *b;           /* a render's walk: full chunks go to this builder */
    size_t n, cap;
    cf_builder_item *items;  /* chunk (cap CHUNK), or a batch's growing array (b NULL) */
    struct Held *held;       /* a batch's walk: the strings pointed to, held until rendered */
    bool failed;             /* a batch's array could not grow (out of memory) */
    cf_builder_item chunk[CHUNK];
} Walk;

/* A batch's walk: room for more items (the array grows), else a scratch
 * slot and w->failed. */
SP_API cf_builder_item *grow_items(Walk *w);   /* (_render_batch.c) */

static inline cf_builder_item *next_item(Walk *w, cf_builder_item_kind kind) {
    if (w->n == w->cap) {
        if (w->b) {
            lib.feed(w->b, w->items, w->n);
            w->n = 0;
        } else {
            cf_builder_item *it = grow_items(w);
            it->kind = kind;
            return it;
        }
    }
    cf_builder_item *it = &w->items[w->n++];
    it->kind = kind;
    return it;
}

/* A batch's walk: o held until its row is rendered (_render_batch.c). */
SP_API bool hold(Walk *w, PyObject *o);

/* Push a str (its exact type checked by the caller); false for one with
 * lone surrogates (no UTF-8). */
static inline bool push_unicode(Walk *w, PyObject *o) {
    Py_ssize_t n;
    const char *s;
    if (PyUnicode_IS_COMPACT_ASCII(o)) {   /* its bytes are its UTF-8: no call */
        s = (const char *)PyUnicode_DATA(o);
        n = PyUnicode_GET_LENGTH(o);
    } else if (!(s = PyUnicode_AsUTF8AndSize(o, &n))) {   /* lone surrogates */
        PyErr_Clear();
        return false;
    }
    if (w->held && !hold(w, o)) return false;   /* (a batch renders it after the GIL is let go) */
    cf_builder_item *it = next_item(w, PyUnicode_IS_COMPACT_ASCII(o) ? ascii_kind : utf8_kind);
    it->n = (size_t)n;
    it->u.s = s;
    return true;
}

/* None, a bool, an exact int within int64 or a finite float; false for
 * anything else (nothing raised: an exact int's digits are only read, so
 * this is also safe on a thread reading rows while the caller holds the GIL). */
SP_API bool push_scalar(Walk *w, PyObject *o, PyTypeObject *t);

SP_API bool walk_other(Walk *w, PyObject *o, int depth);

/* Push one object; false when it is outside the subset (nothing raised).
 * Strings, the commonest (every key, most values), are pushed in place. */
static inline bool walk(Walk *w, PyObject *o, int depth) {
    if (Py_TYPE(o) == &PyUnicode_Type) return push_unicode(w, o);
    return walk_other(w, o, depth);
}

/* The render's error as a tuple (kind, message, line, column, offset). */
SP_API PyObject *error_tuple(const cf_error *err);
/* The output as a str (known_ascii: every byte is, without a look). */
SP_API PyObject *text_to_str(const char *s, size_t n, bool known_ascii);

/* The library says r's text is ASCII (cf_result.nchars == len; a library
 * without the field leaves the 0 its caller put there), believed without
 * a scan unless claims are checked (known_ascii_check). */
static inline bool result_known_ascii(const cf_result *r) {
    if (r->nchars != r->len) return false;
    return !atomic_load_explicit(&check_ascii_claims, memory_order_relaxed) ||
           ascii_claim_holds((const unsigned char *)r->text, r->len);
}

/* render_batch (_render_batch.c): the rendering threads' builders, made
 * ready at init; the module's render_batch and batch_stats. */
SP_API void thread_builder_setup(void);
SP_API PyObject *sp_render_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
SP_API PyObject *sp_batch_stats(PyObject *self, PyObject *arg);
/* render_batch's str objects made before their rows render (see
 * premake_strs in _render_batch.c) taken for the wrong form or made ASCII
 * (test modes 1 and 2: premade_miss); read and set under the GIL. */
SP_API extern int premade_missed;
/* how render_batch's spent render buffers go back (give_back_mode; see
 * give_back in _render_batch.c); read and set under the GIL */
enum { GIVE_BACK_HERE, GIVE_BACK_TO_RENDERER, GIVE_BACK_EVERY };
SP_API extern atomic_int give_back_mode;

#endif
