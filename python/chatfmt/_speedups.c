/* _speedups.c — the binding's render path in C: the Python variables are
 * walked straight into a cf_builder (no marshal or JSON text), rendered, and
 * the output decoded, in one call from Python. It uses the very libchatfmt
 * that ctypes loaded (resolved with dlopen/dlsym by path), so templates and
 * options made through ctypes are valid here. Data outside the JSON-like
 * subset (subclasses, non-str keys, NaN, ints beyond int64, lone surrogates,
 * very deep or cyclic data) is declined: template.py then takes its general
 * path, which decides what such data becomes, so results never depend on
 * which path ran. Optional: without it the binding works the same, slower. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "chatfmt.h"
#include "_batch_pool.h"

static struct {
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
} lib;

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

static PyObject *declined;   /* returned when the data is outside the subset */

/* The item kind of a compact ASCII str: CF_ITEM_ASCII (not scanned, keys
 * known again by address: a str's bytes never move or change), or
 * CF_ITEM_STR from a library that predates it (see sp_init). */
static cf_builder_item_kind ascii_kind = CF_ITEM_STR;
/* The kind of a compact ASCII key of a Python dict (its keys are distinct):
 * CF_ITEM_KEY (placed without a look at the keys before it), or ascii_kind
 * from a library that predates it (see sp_init). */
static cf_builder_item_kind key_kind = CF_ITEM_STR;

static PyObject *new_ref(PyObject *o) {   /* Py_NewRef, before Python 3.10 */
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
static cf_builder_item *grow_items(Walk *w);

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

static bool hold(Walk *w, PyObject *o);

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
    cf_builder_item *it = next_item(w, PyUnicode_IS_COMPACT_ASCII(o) ? ascii_kind : CF_ITEM_STR);
    it->n = (size_t)n;
    it->u.s = s;
    return true;
}

/* Push a key of a Python dict (an exact str): as push_unicode, an ASCII
 * one as a KEY. */
static inline bool push_dict_key(Walk *w, PyObject *o) {
    if (!PyUnicode_IS_COMPACT_ASCII(o)) return push_unicode(w, o);
    if (w->held && !hold(w, o)) return false;
    cf_builder_item *it = next_item(w, key_kind);
    it->n = (size_t)PyUnicode_GET_LENGTH(o);
    it->u.s = (const char *)PyUnicode_DATA(o);
    return true;
}

/* None, a bool, an exact int within int64 or a finite float; false for
 * anything else (nothing raised: an exact int's digits are only read, so
 * this is also safe on a thread reading rows while the caller holds the GIL). */
static bool push_scalar(Walk *w, PyObject *o, PyTypeObject *t) {
    if (o == Py_None) {
        next_item(w, CF_ITEM_NULL);
        return true;
    }
    if (t == &PyBool_Type) {
        next_item(w, CF_ITEM_BOOL)->n = o == Py_True;
        return true;
    }
    if (t == &PyLong_Type) {
        int overflow;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow) return false;
        next_item(w, CF_ITEM_INT)->u.i = (int64_t)v;
        return true;
    }
    if (t == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(o);
        if (!isfinite(d)) return false;
        next_item(w, CF_ITEM_FLOAT)->u.f = d;
        return true;
    }
    return false;
}

static bool walk_other(Walk *w, PyObject *o, int depth);

/* Push one object; false when it is outside the subset (nothing raised).
 * Strings, the commonest (every key, most values), are pushed in place. */
static inline bool walk(Walk *w, PyObject *o, int depth) {
    if (Py_TYPE(o) == &PyUnicode_Type) return push_unicode(w, o);
    return walk_other(w, o, depth);
}

static bool walk_other(Walk *w, PyObject *o, int depth) {
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyDict_Type) {
        if (depth >= MAX_DEPTH) return false;
        next_item(w, CF_ITEM_DICT)->n = (size_t)PyDict_GET_SIZE(o);
        Pairs pairs;
        pairs_start(&pairs, o);
        PyObject *k, *v;
        while (pairs_next(&pairs, &k, &v)) {
            if (Py_TYPE(k) != &PyUnicode_Type || !push_dict_key(w, k) || !walk(w, v, depth + 1)) return false;
        }
        return true;
    }
    if (t == &PyList_Type || t == &PyTuple_Type) {
        if (depth >= MAX_DEPTH) return false;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        PyObject **items = PySequence_Fast_ITEMS(o);
        next_item(w, t == &PyTuple_Type ? CF_ITEM_TUPLE : CF_ITEM_LIST)->n = (size_t)n;
        for (Py_ssize_t i = 0; i < n; i++)
            if (!walk(w, items[i], depth + 1)) return false;
        return true;
    }
    return push_scalar(w, o, t);
}

static void pick_text_kernels(void);
static void thread_builder_setup(void);

/* Does the library build {"a": None} with the key pushed as `kind`? (false
 * with MemoryError set when no builder could be made) */
static bool probe_kind(cf_builder_item_kind kind) {
    cf_builder *b = lib.builder_new(NULL);
    if (!b) {
        PyErr_NoMemory();
        return false;
    }
    const cf_builder_item probe[] = {{CF_ITEM_DICT, 1, {0}}, {kind, 1, {.s = "a"}}, {CF_ITEM_NULL, 0, {0}}};
    lib.feed(b, probe, 3);
    bool known = !lib.failed(b);
    lib.builder_free(b);
    return known;
}

/* init(library_path) -> bool: resolve the library ctypes already loaded. */
static PyObject *sp_init(PyObject *self, PyObject *arg) {
    const char *path = PyUnicode_AsUTF8(arg);
    if (!path) return NULL;
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!h) Py_RETURN_FALSE;
#define SYM(field, name)                                   \
    do {                                                   \
        *(void **)(&lib.field) = dlsym(h, name);           \
        if (!lib.field) Py_RETURN_FALSE;                   \
    } while (0)
    SYM(builder_new, "cf_builder_new");
    SYM(feed, "cf_builder_feed");
    SYM(failed, "cf_builder_failed");
    SYM(finish, "cf_builder_finish");
    SYM(builder_free, "cf_builder_free");
    *(void **)(&lib.take) = dlsym(h, "cf_builder_take");   /* (optional) */
    SYM(render_chat, "cf_render_chat");
    SYM(render, "cf_render");
    SYM(result_free, "cf_result_free");
    SYM(context_free, "cf_context_free");
    SYM(context_from_json_limits, "cf_context_from_json_limits");
    SYM(context_set_json, "cf_context_set_json");
    SYM(context_set_bool, "cf_context_set_bool");
    SYM(context_has_value, "cf_context_has_value");
    SYM(json_quote, "cf_json_quote");
    SYM(error_kind_name, "cf_error_kind_name");
#undef SYM
    /* A library that knows CF_ITEM_ASCII (CF_ITEM_KEY) builds this; an
     * older one fails it. */
    ascii_kind = probe_kind(CF_ITEM_ASCII) ? CF_ITEM_ASCII : CF_ITEM_STR;
    key_kind = probe_kind(CF_ITEM_KEY) ? CF_ITEM_KEY : ascii_kind;
    if (PyErr_Occurred()) return NULL;
    thread_builder_setup();
    pick_text_kernels();
    Py_RETURN_TRUE;
}

/* The render's error as a tuple (kind, message, line, column, offset), for
 * template.py to raise as the general path does. */
static PyObject *error_tuple(const cf_error *err) {
    PyObject *msg = PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strlen(err->message), "replace");
    if (!msg) return NULL;
    return Py_BuildValue("(iNiin)", (int)err->kind, msg, err->line, err->column, (Py_ssize_t)err->offset);
}

/* The output as a str. Prompts are mostly ASCII: checked 32 bytes a step
 * and copied into a new ASCII str, which costs a third of the decoder's
 * pass; other text is decoded. */
static PyObject *text_to_str(const char *s, size_t n) {
    size_t i = 0;
    uint64_t high = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t w[4];
        memcpy(w, s + i, 32);
        high |= (w[0] | w[1] | w[2] | w[3]);
    }
    for (; i < n; i++) high |= (unsigned char)s[i];
    if (high & 0x8080808080808080ULL) return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, NULL);
    PyObject *u = PyUnicode_New((Py_ssize_t)n, 127);
    if (u) memcpy(PyUnicode_1BYTE_DATA(u), s, n);
    return u;
}

/* Finish what was walked into w and render it: str, an error tuple, or
 * DECLINED (the data is outside the subset, or the builder refused it — a
 * limit: the caller then renders the general way, which reports exactly as
 * before). Frees the builder. */
static PyObject *render_walked(Walk *w, bool walked, const cf_template *t, const cf_render_options *opt, bool chat) {
    cf_builder *b = w->b;
    if (walked && w->n) lib.feed(b, w->items, w->n);
    if (!walked || lib.failed(b)) {
        lib.builder_free(b);
        return new_ref(declined);
    }
    cf_error err;
    cf_context *ctx = lib.finish(b, &err);
    if (!ctx) return new_ref(declined);
    cf_result res;
    bool ok;
    /* The render touches no Python object: other threads run meanwhile (a
     * compiled template renders from any number of threads at once). */
    Py_BEGIN_ALLOW_THREADS
    ok = (chat ? lib.render_chat : lib.render)(t, ctx, opt, &res, &err);
    lib.context_free(ctx);
    Py_END_ALLOW_THREADS
    if (!ok) return error_tuple(&err);
    PyObject *text = text_to_str(res.text, res.len);
    lib.result_free(&res);
    return text;
}

static bool start_walk(Walk *w, const cf_render_options *opt) {
    w->b = lib.builder_new(opt ? opt->limits : NULL);
    w->n = 0;
    w->cap = CHUNK;
    w->items = w->chunk;
    w->held = NULL;
    w->failed = false;
    return w->b != NULL;
}

/* render(template, options, chat, variables) -> str | error tuple | DECLINED
 * template/options: addresses of the ctypes cf_template and cf_render_options. */
static PyObject *sp_render(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "render() takes 4 arguments");
        return NULL;
    }
    const cf_template *t = PyLong_AsVoidPtr(args[0]);
    const cf_render_options *opt = PyLong_AsVoidPtr(args[1]);
    int chat = PyObject_IsTrue(args[2]);
    if (PyErr_Occurred()) return NULL;
    if (!t || Py_TYPE(args[3]) != &PyDict_Type) return new_ref(declined);
    Walk w;
    if (!start_walk(&w, opt)) return PyErr_NoMemory();
    return render_walked(&w, walk(&w, args[3], 0), t, opt, chat != 0);
}

/* chat(template, options, kwargs, messages, tools, documents,
 *      add_generation_prompt, continue_final_message) -> as render()
 * Template.render's variables without building their dict: kwargs' items,
 * then the five chat arguments (the order that dict would have). */
static PyObject *sp_chat(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    static const char *const names[] = {"messages", "tools", "documents", "add_generation_prompt",
                                        "continue_final_message"};
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "chat() takes 8 arguments");
        return NULL;
    }
    const cf_template *t = PyLong_AsVoidPtr(args[0]);
    const cf_render_options *opt = PyLong_AsVoidPtr(args[1]);
    if (PyErr_Occurred()) return NULL;
    PyObject *kwargs = args[2];
    if (!t || Py_TYPE(kwargs) != &PyDict_Type) return new_ref(declined);
    Walk w;
    if (!start_walk(&w, opt)) return PyErr_NoMemory();
    next_item(&w, CF_ITEM_DICT)->n = (size_t)PyDict_GET_SIZE(kwargs) + 5;
    bool walked = true;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (walked && PyDict_Next(kwargs, &pos, &k, &v))
        walked = Py_TYPE(k) == &PyUnicode_Type && walk(&w, k, 1) && walk(&w, v, 1);
    for (int i = 0; walked && i < 5; i++) {
        cf_builder_item *it = next_item(&w, CF_ITEM_STR);
        it->u.s = names[i];
        it->n = strlen(names[i]);
        walked = walk(&w, args[3 + i], 1);
    }
    return render_walked(&w, walked, t, opt, true);
}

/* ---- apply_chat_template in C ----
 * The binding's front door, for its usual call: template text seen before
 * (the very str object: found by identity, no text compare), one
 * conversation, keyword variables. The arguments are walked from the call's
 * own vector (no kwargs dict, no Python frame). Every other call, and data
 * this path declines, goes to template.py's apply_chat_template, which also
 * registers the templates this path may take. */
/* Registered texts, by value (a dict: text -> (template, ptr, options));
 * and the str objects lately seen, by identity (two ways per set, the one
 * used last first: a server passes the same str every time, and then no
 * text is compared; equal texts read into many str objects mostly stay
 * apart too, where one way per set had them evict each other). */
enum { KNOWN_MAX = 64, SEEN_SETS = 256, MAX_KEYWORDS = 64 };
typedef struct SeenText {
    PyObject *text;                  /* the str, held (so its address is not reused) */
    PyObject *tmpl;                  /* its Template, held: keeps ptr and opt alive */
    const cf_template *ptr;          /* the compiled template for every render (no tool_use variant) */
    const cf_render_options *opt;
} SeenText;
static SeenText seen[SEEN_SETS][2];
static PyObject *known;              /* dict */
static PyObject *general_apply;      /* template.py's apply_chat_template */
static PyObject *raise_native;       /* template.py's _raise_native(template, error_tuple) */
/* The parameters of apply_chat_template (Template.render: from index 1),
 * transformers' signature; "messages" names the conversation too. */
enum { P_TEMPLATE, P_CONVERSATION, P_TOOLS, P_DOCUMENTS, P_CHAT_TEMPLATE, P_AGP, P_CFM, P_TOKENIZE,
       P_TOKENIZER = 15, NPARAMS, P_MESSAGES = NPARAMS, NNAMES };
static const char *const param_spelling[NNAMES] = {
    "template", "conversation", "tools", "documents", "chat_template", "add_generation_prompt",
    "continue_final_message", "tokenize", "padding", "truncation", "max_length", "return_tensors", "return_dict",
    "return_assistant_tokens_mask", "tokenizer_kwargs", "tokenizer", "messages"};
static PyObject *param_names[NNAMES];
static PyObject *var_names[5];       /* messages, tools, documents, add_generation_prompt, continue_final_message */
static SeenText *seen_set(PyObject *text) {
    uint64_t h = (uint64_t)(uintptr_t)text * 0x9E3779B97F4A7C15ull;   /* addresses differ in the middle bits */
    _Static_assert(SEEN_SETS == 256, "the set is the hash's top 8 bits");
    return seen[h >> 56];
}

/* register(text, template, template_ptr, options_ptr): a text template the
 * front door may render (one whose compiled form serves every call). */
static PyObject *sp_register(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyUnicode_CheckExact(args[0]) || !known) {
        PyErr_SetString(PyExc_TypeError, "register(text, template, template_ptr, options_ptr) after setup()");
        return NULL;
    }
    if (PyDict_GET_SIZE(known) >= KNOWN_MAX) PyDict_Clear(known);
    PyObject *entry = PyTuple_Pack(3, args[1], args[2], args[3]);
    if (!entry) return NULL;
    int rc = PyDict_SetItem(known, args[0], entry);
    Py_DECREF(entry);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* The registered template of this text, or NULL (no exception set). */
static SeenText *find_known(PyObject *text) {
    SeenText *set = seen_set(text);
    if (set[0].text == text) return &set[0];
    if (set[1].text == text) return &set[1];
    PyObject *entry = PyDict_GetItemWithError(known, text);   /* borrowed */
    if (!entry) {
        PyErr_Clear();
        return NULL;
    }
    const cf_template *ptr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(entry, 1));
    const cf_render_options *opt = PyLong_AsVoidPtr(PyTuple_GET_ITEM(entry, 2));
    if (PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    /* the new text takes the first way; the first way's moves to the second */
    PyObject *old_text = set[1].text, *old_tmpl = set[1].tmpl;
    set[1] = set[0];
    SeenText *slot = &set[0];
    slot->text = new_ref(text);
    slot->tmpl = new_ref(PyTuple_GET_ITEM(entry, 0));
    slot->ptr = ptr;
    slot->opt = opt;
    Py_XDECREF(old_text);   /* (after the slot is whole: a finaliser may run here) */
    Py_XDECREF(old_tmpl);
    return slot->text == text ? slot : NULL;
}

/* setup(general_apply, raise_native) */
static PyObject *sp_setup(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    static const char *const vars[5] = {"messages", "tools", "documents", "add_generation_prompt",
                                        "continue_final_message"};
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "setup(general_apply, raise_native)");
        return NULL;
    }
    for (int i = 0; i < NNAMES; i++)
        if (!param_names[i] && !(param_names[i] = PyUnicode_InternFromString(param_spelling[i]))) return NULL;
    for (int i = 0; i < 5; i++)
        if (!var_names[i] && !(var_names[i] = PyUnicode_InternFromString(vars[i]))) return NULL;
    if (!known && !(known = PyDict_New())) return NULL;
    Py_XSETREF(general_apply, new_ref(args[0]));
    Py_XSETREF(raise_native, new_ref(args[1]));
    Py_RETURN_NONE;
}

/* Which parameter a keyword names (-1: a template variable), among
 * param_names[first..]; "messages" is the conversation. Keywords from a **
 * dict are seldom the interned names: compared by length and bytes. */
static int param_index(PyObject *name, int first) {
    for (int i = first; i < NNAMES; i++)
        if (name == param_names[i]) return i == P_MESSAGES ? P_CONVERSATION : i;
    Py_ssize_t n = PyUnicode_GET_LENGTH(name);
    if (!PyUnicode_IS_COMPACT_ASCII(name)) return -1;   /* the names are ASCII */
    const char *s = (const char *)PyUnicode_DATA(name);
    for (int i = first; i < NNAMES; i++)
        if (PyUnicode_GET_LENGTH(param_names[i]) == n && memcmp(PyUnicode_DATA(param_names[i]), s, (size_t)n) == 0)
            return i == P_MESSAGES ? P_CONVERSATION : i;
    return -1;
}

/* One call of apply_chat_template (first = 0) or of Template.render
 * (first = 1: the template is the instance), its arguments sorted out. */
typedef struct ChatCall {
    PyObject *const *args;
    Py_ssize_t nargs, nkw, nvars;
    PyObject *kwnames;
    PyObject *param[NPARAMS];
    signed char kw_param[MAX_KEYWORDS];
} ChatCall;

/* False when the general function must answer: arguments it would reject
 * (it raises Python's TypeError), not one conversation, or any option
 * beyond rendering text (chat_template, tokenize, return_dict, ...: those
 * take the general path, which checks them), continue_final_message with
 * add_generation_prompt (the general path raises transformers' error). */
static bool parse_chat_call(ChatCall *c, PyObject *const *args, size_t nargsf, PyObject *kwnames, int first) {
    c->args = args;
    c->nargs = PyVectorcall_NARGS(nargsf);
    c->nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    c->kwnames = kwnames;
    c->nvars = 0;
    for (int i = 0; i < NPARAMS; i++) c->param[i] = i == P_AGP || i == P_CFM ? Py_False : NULL;
    bool given[NPARAMS] = {false};
    if (!param_names[0] || c->nargs > P_CHAT_TEMPLATE - first || c->nkw > MAX_KEYWORDS) return false;
    for (Py_ssize_t i = 0; i < c->nargs; i++) {
        c->param[first + i] = args[i];
        given[first + i] = true;
    }
    for (Py_ssize_t i = 0; i < c->nkw; i++) {
        int p = c->kw_param[i] = (signed char)param_index(PyTuple_GET_ITEM(kwnames, i), first);
        if (p < 0) {
            c->nvars++;
            continue;
        }
        if (given[p]) return false;
        c->param[p] = args[c->nargs + i];
        given[p] = true;
    }
    if (!given[P_CONVERSATION] || (first == 0 && !given[P_TEMPLATE])) return false;
    if (!c->param[P_TOOLS]) c->param[P_TOOLS] = Py_None;
    if (!c->param[P_DOCUMENTS]) c->param[P_DOCUMENTS] = Py_None;
    if (c->param[P_CFM] != Py_False) {   /* not with add_generation_prompt: the general path raises that */
        int agp = PyObject_IsTrue(c->param[P_AGP]);
        if (agp != 0) {
            if (agp < 0) PyErr_Clear();
            return false;
        }
    }
    for (int i = P_CHAT_TEMPLATE; i < NPARAMS; i++)
        if (i != P_AGP && i != P_CFM && c->param[i] && c->param[i] != Py_None && c->param[i] != Py_False)
            return false;
    PyObject *messages = c->param[P_CONVERSATION];
    return PyList_CheckExact(messages) &&   /* (else a batch of conversations, or not a list) */
           (!PyList_GET_SIZE(messages) || PyDict_CheckExact(PyList_GET_ITEM(messages, 0)));
}

/* Render the call with this compiled template: the text; NULL with the
 * exception raised as the general path raises it; or a new reference to
 * DECLINED (the general path decides what such data becomes). */
static PyObject *render_chat_call(const ChatCall *c, PyObject *tmpl, const cf_template *t, const cf_render_options *opt) {
    Walk w;
    if (!start_walk(&w, opt)) return PyErr_NoMemory();
    next_item(&w, CF_ITEM_DICT)->n = (size_t)c->nvars + 5;
    bool walked = true;
    for (Py_ssize_t i = 0; walked && i < c->nkw; i++) {
        if (c->kw_param[i] >= 0) continue;
        walked = walk(&w, PyTuple_GET_ITEM(c->kwnames, i), 1) && walk(&w, c->args[c->nargs + i], 1);
    }
    static const int order[5] = {P_CONVERSATION, P_TOOLS, P_DOCUMENTS, P_AGP, P_CFM};
    for (int i = 0; walked && i < 5; i++)
        walked = walk(&w, var_names[i], 1) && walk(&w, c->param[order[i]], 1);
    PyObject *out = render_walked(&w, walked, t, opt, true);
    if (out && !PyUnicode_CheckExact(out) && out != declined) {
        PyObject *raised = PyObject_CallFunctionObjArgs(raise_native, tmpl, out, NULL);   /* raises */
        Py_XDECREF(raised);
        Py_DECREF(out);
        out = NULL;
    }
    return out;
}

static PyObject *sp_apply(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    ChatCall c;
    if (!general_apply || !parse_chat_call(&c, args, nargsf, kwnames, 0) || !PyUnicode_CheckExact(c.param[0]))
        return PyObject_Vectorcall(general_apply, args, nargsf, kwnames);
    SeenText *k = find_known(c.param[0]);
    if (!k) return PyObject_Vectorcall(general_apply, args, nargsf, kwnames);
    PyObject *tmpl = new_ref(k->tmpl);   /* held while the GIL is let go in the render */
    PyObject *out = render_chat_call(&c, tmpl, k->ptr, k->opt);
    Py_DECREF(tmpl);
    if (out != declined) return out;
    Py_DECREF(out);
    return PyObject_Vectorcall(general_apply, args, nargsf, kwnames);
}

/* Template.render in C (a method descriptor of the class, made by
 * render_method): the instance's _front is (template_ptr, options_ptr)
 * when one compiled template serves every call, else None; any call this
 * path does not take goes to Template._render_py. */
static PyObject *general_render;     /* Template._render_py */
static PyObject *front_name;         /* "_front" */

static PyObject *render_general(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), n = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject **stack = PyMem_Malloc((size_t)(n + 1) * sizeof(PyObject *));
    if (!stack) return PyErr_NoMemory();
    stack[0] = self;
    if (n) memcpy(stack + 1, args, (size_t)n * sizeof(PyObject *));
    PyObject *out = PyObject_Vectorcall(general_render, stack, (size_t)nargs + 1, kwnames);
    PyMem_Free(stack);
    return out;
}

static PyObject *sp_template_render(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    ChatCall c;
    PyObject *front = NULL;
    if (!general_render || !parse_chat_call(&c, args, (size_t)nargs, kwnames, 1) ||
        !(front = PyObject_GetAttr(self, front_name)) || !PyTuple_Check(front) || PyTuple_GET_SIZE(front) != 2) {
        Py_XDECREF(front);
        PyErr_Clear();
        return render_general(self, args, (size_t)nargs, kwnames);
    }
    const cf_template *t = PyLong_AsVoidPtr(PyTuple_GET_ITEM(front, 0));
    const cf_render_options *opt = PyLong_AsVoidPtr(PyTuple_GET_ITEM(front, 1));
    Py_DECREF(front);   /* (self holds it, and the caller holds self) */
    if (PyErr_Occurred() || !t) {
        PyErr_Clear();
        return render_general(self, args, (size_t)nargs, kwnames);
    }
    PyObject *out = render_chat_call(&c, self, t, opt);
    if (out != declined) return out;
    Py_DECREF(out);
    return render_general(self, args, (size_t)nargs, kwnames);
}

static PyMethodDef render_def = {
    "render", (PyCFunction)(void (*)(void))sp_template_render, METH_FASTCALL | METH_KEYWORDS,
    "render($self, conversation, tools=None, documents=None, chat_template=None, add_generation_prompt=False, "
    "continue_final_message=False, tokenize=False, padding=False, truncation=False, max_length=None, "
    "return_tensors=None, return_dict=False, return_assistant_tokens_mask=False, tokenizer_kwargs=None, "
    "tokenizer=None, **kwargs)\n--\n\n"
    "transformers' apply_chat_template on this template (see template.py: Template._render_general)."};

/* render_method(Template, Template._render_py) -> the descriptor to install as Template.render */
static PyObject *sp_render_method(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyType_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "render_method(Template, general_render)");
        return NULL;
    }
    if (!front_name && !(front_name = PyUnicode_InternFromString("_front"))) return NULL;
    Py_XSETREF(general_render, new_ref(args[1]));
    return PyDescr_NewMethod((PyTypeObject *)args[0], &render_def);
}

/* ---- chatfmt.patch(tokenizer): the patched apply_chat_template ----
 * A callable object (set on the tokenizer instance) that answers the usual
 * call in C: text (tokenize=False), one conversation, the tokenizer's
 * chat_template a text the front door knows, tools None or JSON schemas;
 * the variables are the tokenizer's special_tokens_map with the call's
 * keyword variables over them (in the order of that merged dict), walked
 * from the call's own vector. Every other call, a render error and data the
 * walk declines go to `general` (_transformers.py's patched function),
 * which answers it as before or hands it to the tokenizer's own method. It
 * carries a __dict__, so functools.update_wrapper gives it the original's
 * name, doc and __wrapped__ (inspect.signature follows that). */
typedef struct Patched {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *dict;          /* __name__, __doc__, __wrapped__, ... */
    PyObject *tokenizer;
    PyObject *general;
    bool tokenize_default;   /* the tokenizer's own default for tokenize */
} Patched;

static PyObject *chat_template_name, *special_tokens_name;

/* The patched call's answer, or NULL with no exception set when `general`
 * must answer. */
static PyObject *patched_fast(Patched *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    ChatCall c;
    if (!known || !parse_chat_call(&c, args, nargsf, kwnames, 1)) return NULL;
    if (c.param[P_TOKENIZER] || (!c.param[P_TOKENIZE] && self->tokenize_default)) return NULL;
    for (Py_ssize_t i = 0; i < c.nkw; i++) {   /* messages= is a template variable here: the general way */
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        if (c.kw_param[i] == P_CONVERSATION && PyUnicode_Compare(name, param_names[P_CONVERSATION]) != 0) {
            PyErr_Clear();
            return NULL;
        }
    }
    PyObject *messages = c.param[P_CONVERSATION], *tools = c.param[P_TOOLS];
    if (!PyList_GET_SIZE(messages)) return NULL;   /* (transformers' own answer) */
    if (tools != Py_None) {
        if (!PyList_CheckExact(tools) && !PyTuple_CheckExact(tools)) return NULL;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(tools); i++)
            if (!PyDict_CheckExact(PySequence_Fast_ITEMS(tools)[i])) return NULL;
    }
    PyObject *text = PyObject_GetAttr(self->tokenizer, chat_template_name);
    if (!text || !PyUnicode_CheckExact(text)) {
        Py_XDECREF(text);
        PyErr_Clear();
        return NULL;
    }
    SeenText *k = find_known(text);
    Py_DECREF(text);
    if (!k) return NULL;
    PyObject *specials = PyObject_GetAttr(self->tokenizer, special_tokens_name);
    if (!specials) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *tmpl = new_ref(k->tmpl);   /* held while the GIL is let go in the render */
    const cf_template *t = k->ptr;
    const cf_render_options *opt = k->opt;
    PyObject *out = NULL;
    bool used[MAX_KEYWORDS] = {false};
    Py_ssize_t nspecial = specials == Py_None ? 0 : PyDict_CheckExact(specials) ? PyDict_GET_SIZE(specials) : -1;
    Py_ssize_t overridden = 0, pos = 0;
    PyObject *key, *value;
    if (nspecial < 0) goto done;
    /* a special token a keyword variable also names takes the keyword's value, in its place */
    while (nspecial && PyDict_Next(specials, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key) || param_index(key, 1) >= 0) goto done;
        for (Py_ssize_t i = 0; i < c.nkw; i++) {
            if (c.kw_param[i] >= 0 || used[i]) continue;
            int eq = PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, i), key);
            if (eq == 0) {
                used[i] = true;
                overridden++;
                break;
            }
            if (eq == -1 && PyErr_Occurred()) {
                PyErr_Clear();
                goto done;
            }
        }
    }
    Walk w;
    if (!start_walk(&w, opt)) {
        out = PyErr_NoMemory();
        goto done;
    }
    next_item(&w, CF_ITEM_DICT)->n = (size_t)(nspecial + c.nvars - overridden + 5);
    bool walked = true;
    pos = 0;
    while (walked && nspecial && PyDict_Next(specials, &pos, &key, &value)) {
        PyObject *v = value;
        for (Py_ssize_t i = 0; i < c.nkw; i++)
            if (used[i] && PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, i), key) == 0) v = c.args[c.nargs + i];
        walked = push_unicode(&w, key) && walk(&w, v, 1);
    }
    for (Py_ssize_t i = 0; walked && i < c.nkw; i++) {
        if (c.kw_param[i] >= 0 || used[i]) continue;
        walked = walk(&w, PyTuple_GET_ITEM(kwnames, i), 1) && walk(&w, c.args[c.nargs + i], 1);
    }
    static const int order[5] = {P_CONVERSATION, P_TOOLS, P_DOCUMENTS, P_AGP, P_CFM};
    for (int i = 0; walked && i < 5; i++)
        walked = walk(&w, var_names[i], 1) && walk(&w, c.param[order[i]], 1);
    out = render_walked(&w, walked, t, opt, true);
    if (out && !PyUnicode_CheckExact(out)) Py_CLEAR(out);   /* an error or DECLINED: the general way */
done:
    Py_DECREF(specials);
    Py_DECREF(tmpl);
    return out;
}

static PyObject *patched_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Patched *p = (Patched *)self;
    PyObject *out = patched_fast(p, args, nargsf, kwnames);
    if (out || PyErr_Occurred()) return out;
    return PyObject_Vectorcall(p->general, args, nargsf, kwnames);
}

static int patched_traverse(PyObject *self, visitproc visit, void *arg) {
    Patched *p = (Patched *)self;
    Py_VISIT(p->dict);
    Py_VISIT(p->tokenizer);
    Py_VISIT(p->general);
    return 0;
}

static int patched_clear(PyObject *self) {
    Patched *p = (Patched *)self;
    Py_CLEAR(p->dict);
    Py_CLEAR(p->tokenizer);
    Py_CLEAR(p->general);
    return 0;
}

static void patched_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    patched_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject PatchedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "chatfmt._speedups.PatchedApplyChatTemplate",
    .tp_basicsize = sizeof(Patched),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A tokenizer's apply_chat_template patched by chatfmt.patch (see _transformers.py).",
    .tp_vectorcall_offset = offsetof(Patched, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_dictoffset = offsetof(Patched, dict),
    .tp_getattro = PyObject_GenericGetAttr,
    .tp_setattro = PyObject_GenericSetAttr,
    .tp_traverse = patched_traverse,
    .tp_clear = patched_clear,
    .tp_dealloc = patched_dealloc,
};

/* patched(tokenizer, general, tokenize_default) -> the patched apply_chat_template */
static PyObject *sp_patched(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "patched(tokenizer, general, tokenize_default)");
        return NULL;
    }
    int tokenize_default = PyObject_IsTrue(args[2]);
    if (tokenize_default < 0) return NULL;
    if (!chat_template_name && !(chat_template_name = PyUnicode_InternFromString("chat_template"))) return NULL;
    if (!special_tokens_name && !(special_tokens_name = PyUnicode_InternFromString("special_tokens_map")))
        return NULL;
    Patched *p = PyObject_GC_New(Patched, &PatchedType);
    if (!p) return NULL;
    p->vectorcall = patched_vectorcall;
    p->dict = NULL;
    p->tokenizer = new_ref(args[0]);
    p->general = new_ref(args[1]);
    p->tokenize_default = tokenize_default != 0;
    PyObject_GC_Track(p);
    return (PyObject *)p;
}

/* ---- batches on threads (Template.render_batch, format_jsonl) ----
 * The rows of a batch are rendered on N threads: the calling thread
 * (holding the GIL) sets up a window of rows, hands it to N - 1 workers
 * and renders beside them. While they render one window it sets up the
 * next and hands it over at once (a thread that finds no row left to
 * claim goes on to it), then makes the str objects of the rows finished,
 * following the rendering threads row by row; the threads rendering the
 * next window fill those str objects with the texts already in their form
 * (see copy_texts), so only the making of Python objects is serial and no
 * thread waits for a window's last rows. A window is set up again only
 * when no worker holds it. */
typedef struct Held { PyObject **o; size_t n, cap; } Held;

static bool hold(Walk *w, PyObject *o) {
    Held *h = w->held;
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        PyObject **p = realloc(h->o, cap * sizeof *p);
        if (!p) {
            w->failed = true;
            return false;
        }
        h->o = p;
        h->cap = cap;
    }
    Py_INCREF(o);
    h->o[h->n++] = o;
    return true;
}

static void release_held(Held *h) {
    for (size_t i = 0; i < h->n; i++) Py_DECREF(h->o[i]);
    h->n = 0;
}

static cf_builder_item *grow_items(Walk *w) {
    static cf_builder_item scratch;   /* written after a failure, never read */
    size_t cap = w->cap ? 2 * w->cap : 4096;
    cf_builder_item *p = w->failed ? NULL : realloc(w->items, cap * sizeof *p);
    if (!p) {
        w->failed = true;
        return &scratch;
    }
    w->items = p;
    w->cap = cap;
    return &w->items[w->n++];
}

/* -- render_batch -- */

/* The figures of the last render_batch call made while batch_stats was on
 * (touched only with the GIL held). */
enum { FIGURE_THREADS = 16 };
static struct {
    bool on;
    bool have;                 /* a call was measured */
    unsigned threads;          /* threads the call asked for */
    ThreadFigures thread[FIGURE_THREADS];   /* [0]: the calling thread (its CPU: the whole call) */
    long long wall_ns;         /* the whole call */
    /* the calling thread's CPU time in the work only it does (a loaded
     * machine changes these little, where it changes wall time a lot): */
    long long fill_ns;         /* rows looked up or walked into windows */
    long long drain_ns;        /* the str objects and results of finished windows made (not its waits) */
    long long complete_ns;     /* after the pass: results deferred, rows walked under the GIL */
    unsigned long windows;
} figures;

static inline long long phase_begin(void) { return figures.on ? thread_cpu_ns() : 0; }
static inline void phase_end(long long *total, long long since) {
    if (figures.on) *total += thread_cpu_ns() - since;
}

enum { ROW_PENDING, ROW_DECLINED, ROW_TOOLS_ERROR, ROW_OK, ROW_ERROR,
       ROW_UNREAD };   /* read on a worker: outside what it reads, walked under the GIL later */
/* A window holds up to WINDOW_ROWS rows, fewer when their outputs would
 * pass WINDOW_TEXT bytes (as long as the last window's were): the texts
 * are read back under the GIL a window later, from the cache when the
 * window's texts fit in it (about a third of a long row's time went to
 * memory with 512 rows of 6.6 KB). */
enum { WINDOW_ROWS = 512, WINDOW_MIN_ROWS = 16, WINDOW_TEXT = 256 << 10, WINDOW_ITEMS = 1 << 16 };

/* A window's rows are claimed one by one by whichever thread comes, so
 * neighbours are written by different threads: each row has cache lines
 * of its own. */
typedef struct BatchRow {
    _Alignas(64) size_t first, count;   /* its items in the window's array */
    atomic_bool finished;     /* rendered (release): the drain may read it */
    const cf_template *t;
    int state;
    cf_result res;            /* ROW_OK: the output as rendered */
    cf_error err;
    /* ROW_OK and `converted`: the output measured for its str (nchars
     * characters, the largest maxchar: `kind` bytes a character), which is
     * written once, straight from res (see copy_text). Otherwise the output
     * is decoded under the GIL. */
    bool converted;
    /* The row's context: another row's, shared (a repeated row object), or
     * its own kept for the rows that repeat it (`keep`); NULL otherwise. */
    cf_context *ctx;
    bool shared, keep;
    unsigned char kind;       /* bytes a character: 1, 2, 4 */
    uint32_t maxchar;
    size_t nchars;
    size_t ascii_prefix;      /* bytes before the first that is not ASCII */
    /* The render buffer of the slot's last output: its text is in its str
     * before the slot renders again, which gives the buffer back to that
     * thread's cache for the render to take (no buffer allocated a row). */
    cf_result spent;
    /* spent's text is in its str: its copy is queued for the threads of the
     * next window; all of that window's copies are taken before the window
     * after it (this slot's next row) is handed over (see batch_pass), but
     * one may still be in the making on another thread */
    atomic_bool spent_copied;
    /* rows read on the rendering threads: the row object (borrowed: the
     * list holds it) and a buffer for its strings that are not ASCII */
    PyObject *row;
    unsigned char *utf8;
    size_t utf8_cap;
} BatchRow;

/* Outputs up to this size are measured and copied into their str by the
 * rendering threads (a window's rows then hold at most WINDOW_ROWS times
 * it); a bigger one is decoded under the GIL. */
enum { SLOT_TEXT_MAX = 32 << 10 };

/* 16 bytes as a vector (gcc and clang vector types: SSE2 on x86-64, plain
 * words elsewhere), and whether they are all ASCII. */
typedef unsigned char u8x16 __attribute__((vector_size(16)));

static inline bool ascii16(const unsigned char *p, u8x16 *v) {
    uint64_t h[2];
    memcpy(v, p, 16);
    memcpy(h, v, 16);
    return !((h[0] | h[1]) & 0x8080808080808080ULL);
}

/* Widening 16 ASCII bytes to 2- or 4-byte code units: one vector
 * conversion where the compiler has it (the unpack instructions), else a
 * loop. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_convertvector)
#define HAVE_CONVERTVECTOR 1
#endif
#endif

static inline __attribute__((always_inline)) void widen16(const u8x16 *v, int kind, unsigned char *out) {
#ifdef HAVE_CONVERTVECTOR
    typedef uint16_t u16x16 __attribute__((vector_size(32)));
    typedef uint32_t u32x16 __attribute__((vector_size(64)));
    if (kind == 2) {
        u16x16 w = __builtin_convertvector(*v, u16x16);
        memcpy(out, &w, sizeof w);
    } else {
        u32x16 w = __builtin_convertvector(*v, u32x16);
        memcpy(out, &w, sizeof w);
    }
#else
    unsigned char b[16];
    memcpy(b, v, 16);
    for (int j = 0; j < 16; j++) {
        if (kind == 2) {
            uint16_t c = b[j];
            memcpy(out + 2 * j, &c, 2);
        } else {
            uint32_t c = b[j];
            memcpy(out + 4 * j, &c, 4);
        }
    }
#endif
}

/* The code points of valid UTF-8 s[from..n) (s[0..from) is ASCII): count
 * (from included) and largest; false for bytes that are not valid UTF-8
 * (then decoded under the GIL, as before). ASCII stretches go 16 bytes a
 * step: prompts are mostly ASCII with a few other characters. */
static bool utf8_measure(const unsigned char *s, size_t n, size_t from, size_t *nchars, uint32_t *maxchar) {
    size_t count = from;
    uint32_t top = 0;
    for (size_t i = from; i < n; count++) {
        u8x16 v;
        if (i + 16 <= n && ascii16(s + i, &v)) {
            i += 16;
            count += 15;
            continue;
        }
        unsigned char c = s[i];
        uint32_t cp;
        if (c < 0x80) {
            cp = c;
            i++;
        } else if (c >= 0xC2 && c < 0xE0) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return false;
            cp = (uint32_t)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
            i += 2;
        } else if (c >= 0xE0 && c < 0xF0) {
            if (i + 2 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80) return false;
            cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
            if (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000)) return false;   /* overlong, surrogate */
            i += 3;
        } else if (c >= 0xF0 && c < 0xF5) {
            if (i + 3 >= n || (s[i + 1] & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80)
                return false;
            cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3F) << 12 | (uint32_t)(s[i + 2] & 0x3F) << 6 |
                 (s[i + 3] & 0x3F);
            if (cp < 0x10000 || cp > 0x10FFFF) return false;
            i += 4;
        } else {
            return false;
        }
        if (cp > top) top = cp;
    }
    *nchars = count;
    *maxchar = top;
    return true;
}

/* Valid UTF-8 s[from..n) into `kind`-byte code units at out, from code
 * unit `from` on (s[0..from) is ASCII, already written when kind is 1;
 * kind a constant at each call below: the compiler makes one loop per
 * kind). */
static inline __attribute__((always_inline)) void widen_as(const unsigned char *s, size_t n, size_t from, int kind,
                                                           unsigned char *out) {
    size_t k = from;
    for (size_t i = from; i < n; k++) {
        u8x16 v;
        if (i + 16 <= n && ascii16(s + i, &v)) {   /* an ASCII stretch */
            if (kind == 1) memcpy(out + k, &v, 16);
            else widen16(&v, kind, out + k * (size_t)kind);
            i += 16;
            k += 15;
            continue;
        }
        unsigned char c = s[i];
        uint32_t cp;
        if (c < 0x80) {
            cp = c;
            i++;
        } else if (c < 0xE0) {
            cp = (uint32_t)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
            i += 2;
        } else if (c < 0xF0) {
            cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
            i += 3;
        } else {
            cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3F) << 12 | (uint32_t)(s[i + 2] & 0x3F) << 6 |
                 (s[i + 3] & 0x3F);
            i += 4;
        }
        if (kind == 1) {
            out[k] = (unsigned char)cp;
        } else if (kind == 2) {
            uint16_t u = (uint16_t)cp;
            memcpy(out + 2 * k, &u, 2);
        } else {
            memcpy(out + 4 * k, &cp, 4);
        }
    }
}

static void utf8_widen(const unsigned char *s, size_t n, size_t from, int kind, unsigned char *out) {
    if (kind == 1) widen_as(s, n, from, 1, out);
    else if (kind == 2) widen_as(s, n, 0, 2, out);   /* (the ASCII prefix widens too) */
    else widen_as(s, n, 0, 4, out);
}

/* Where the first byte that is not ASCII is in s[0..n), or n. The render
 * just wrote s (it is in the cache): 128 bytes a step, or-ed in vector
 * registers and tested once a step. */
typedef unsigned char u8x32 __attribute__((vector_size(32)));

static inline __attribute__((always_inline)) size_t ascii_prefix_as(const unsigned char *s, size_t n) {
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        u8x32 a, b, c, d;
        memcpy(&a, s + i, 32);
        memcpy(&b, s + i + 32, 32);
        memcpy(&c, s + i + 64, 32);
        memcpy(&d, s + i + 96, 32);
        u8x32 all = (a | b) | (c | d);
        uint64_t w[4];
        memcpy(w, &all, 32);
        if ((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ULL) break;
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ULL) break;
    }
    while (i < n && s[i] < 0x80) i++;
    return i;
}

/* As compiled for the baseline instruction set, and on x86-64 also for
 * AVX2 (32-byte registers: half the instructions a byte), taken when the
 * processor has it (see sp_init). */
static size_t ascii_prefix_base(const unsigned char *s, size_t n) { return ascii_prefix_as(s, n); }
static size_t (*ascii_prefix_len)(const unsigned char *s, size_t n) = ascii_prefix_base;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2_PATH 1
__attribute__((target("avx2"))) static size_t ascii_prefix_avx2(const unsigned char *s, size_t n) {
    return ascii_prefix_as(s, n);
}
#endif

static void pick_text_kernels(void) {
#ifdef HAVE_AVX2_PATH
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        ascii_prefix_len = ascii_prefix_avx2;
    }
#endif
}

/* Measure a row's fresh output for its str (on the rendering thread,
 * without the GIL): ASCII (most prompts) or the count and the largest of
 * its code points. The text stays in the render's buffer, from which the
 * rendering threads write it into its str in the str's form (copy_text).
 * Output too big or not valid UTF-8 stays unconverted. */
static void convert_output(BatchRow *r) {
    const unsigned char *s = (const unsigned char *)r->res.text;
    size_t n = r->res.len;
    r->converted = false;
    if (n > SLOT_TEXT_MAX) return;
    r->ascii_prefix = ascii_prefix_len(s, n);
    if (r->ascii_prefix == n) {
        r->kind = 1;
        r->maxchar = 127;
        r->nchars = n;
    } else {
        size_t nchars;
        uint32_t maxchar;
        if (!utf8_measure(s, n, r->ascii_prefix, &nchars, &maxchar)) return;
        r->kind = maxchar < 0x100 ? 1 : maxchar < 0x10000 ? 2 : 4;
        r->maxchar = maxchar;
        r->nchars = nchars;
    }
    r->converted = true;
}

/* A converted output's text into its str (made for r->nchars characters
 * up to r->maxchar): one write of the str's memory, from the UTF-8 as
 * rendered. */
typedef struct TextCopy {
    const unsigned char *from;
    size_t len, ascii_prefix;
    void *to;
    int kind;
    atomic_bool *copied;      /* set once copied (a queued copy: see BatchRow.spent_copied) */
} TextCopy;

static void copy_text(const TextCopy *c) {
    if (c->kind == 1) {
        memcpy(c->to, c->from, c->ascii_prefix);
        if (c->ascii_prefix < c->len) utf8_widen(c->from, c->len, c->ascii_prefix, 1, c->to);
    } else {
        utf8_widen(c->from, c->len, c->ascii_prefix, c->kind, c->to);
    }
}

static TextCopy text_copy_of(const BatchRow *r, PyObject *str) {
    return (TextCopy){(const unsigned char *)r->res.text, r->res.len, r->ascii_prefix, PyUnicode_DATA(str), r->kind,
                      NULL};
}

/* The converted output as a str: one allocation and one write. */
static PyObject *converted_to_str(const BatchRow *r) {
    PyObject *u = PyUnicode_New((Py_ssize_t)r->nchars, (Py_UCS4)r->maxchar);
    if (u) {
        TextCopy c = text_copy_of(r, u);
        copy_text(&c);
    }
    return u;
}

/* ---- the rows read on the rendering threads ----
 * In a build with the GIL, render_batch's workers read the row objects
 * themselves (the walk was a third of a row's time, all of it serial under
 * the GIL): the calling thread holds the GIL while they read and only
 * waits, reads rows itself, or makes str objects, running no Python code,
 * so no other thread can run Python code and change the rows, and no
 * object is freed (the list holds every row). It lets the GIL go only
 * between two windows, when no worker reads (see PAUSE_NS). The walk
 * here only READS: exact dict/list/tuple/str/int/float/bool/None, through
 * macros and calls that read fields (PyDict_Next, PyLong_AsLongLongAndOverflow
 * on an exact int); no reference count changes, no error indicator, no
 * allocation by Python's allocators, and strings that are not ASCII are
 * turned into UTF-8 here (PyUnicode_AsUTF8AndSize would write a cache into
 * the object). Anything else (a subclass, a non-str key, an int beyond
 * int64, a lone surrogate, a string not in the compact form, data nested
 * deeper than MAX_DEPTH) makes the row go back to the walk under the GIL
 * after the fast pass, which decides as before. This stops being safe in
 * a free-threaded build (Py_GIL_DISABLED: holding no GIL stops nothing
 * there), which keeps the walk under the GIL; and for code that would run
 * Python while workers read: error objects and outputs that need decoding
 * are made after the last window is rendered. */
#ifdef Py_GIL_DISABLED
enum { READ_ON_WORKERS = 0 };
#else
enum { READ_ON_WORKERS = 1 };
#endif
/* A compact str's characters as UTF-8 in buf (size >= 4 a character);
 * false for a lone surrogate (no UTF-8). */
static bool ucs_to_utf8(int kind, const void *data, size_t n, unsigned char *buf, size_t *len) {
    unsigned char *o = buf;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = kind == PyUnicode_1BYTE_KIND   ? ((const Py_UCS1 *)data)[i]
                     : kind == PyUnicode_2BYTE_KIND ? ((const Py_UCS2 *)data)[i]
                                                    : ((const Py_UCS4 *)data)[i];
        if (c < 0x80) {
            *o++ = (unsigned char)c;
        } else if (c < 0x800) {
            *o++ = (unsigned char)(0xC0 | (c >> 6));
            *o++ = (unsigned char)(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            if (c >= 0xD800 && c <= 0xDFFF) return false;
            *o++ = (unsigned char)(0xE0 | (c >> 12));
            *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            *o++ = (unsigned char)(0x80 | (c & 0x3F));
        } else {
            *o++ = (unsigned char)(0xF0 | (c >> 18));
            *o++ = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
            *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
            *o++ = (unsigned char)(0x80 | (c & 0x3F));
        }
    }
    *len = (size_t)(o - buf);
    return true;
}

/* A row's read: the walk (a builder fed a chunk at a time) and the row
 * slot's UTF-8 buffer for strings that are not ASCII, filled up to
 * utf8_used since the walk's last feed. */
typedef struct RowRead {
    Walk w;
    unsigned char **utf8;
    size_t *utf8_cap;
    size_t utf8_used;
} RowRead;

enum { UTF8_BUFFER_MIN = 1024 };

/* A str that is not ASCII, converted into the slot's buffer after those
 * before it (a text of strings that are not ASCII costs no feed each); when
 * the buffer is full, the items pointing into it are fed first (the builder
 * copies them) and it starts again. False when it is not a compact str,
 * holds a lone surrogate, or no memory is left. */
static __attribute__((noinline)) bool read_push_other_str(RowRead *rr, PyObject *o) {
    Walk *w = &rr->w;
    size_t n = (size_t)PyUnicode_GET_LENGTH(o);
    if (!PyUnicode_IS_COMPACT(o) || n > ((size_t)-1) / 4 - 1) return false;
    if (n * 4 > *rr->utf8_cap - rr->utf8_used) {
        if (w->n) {
            lib.feed(w->b, w->items, w->n);
            w->n = 0;
        }
        rr->utf8_used = 0;
        if (n * 4 > *rr->utf8_cap) {
            size_t cap = n * 4 < UTF8_BUFFER_MIN ? UTF8_BUFFER_MIN : n * 4;
            unsigned char *p = malloc(cap);   /* (no copy: nothing points in now) */
            if (!p) return false;
            free(*rr->utf8);
            *rr->utf8 = p;
            *rr->utf8_cap = cap;
        }
    }
    unsigned char *at = *rr->utf8 + rr->utf8_used;
    size_t len;
    if (!ucs_to_utf8(PyUnicode_KIND(o), PyUnicode_DATA(o), n, at, &len)) return false;
    rr->utf8_used += len;
    cf_builder_item *it = next_item(w, CF_ITEM_STR);
    it->n = len;
    it->u.s = (const char *)at;
    return true;
}

/* Push a str read in place (an ASCII one, the commonest value and every
 * key of chat data, points into the object); false as
 * read_push_other_str. */
static inline bool read_push_str(RowRead *rr, PyObject *o) {
    if (!PyUnicode_IS_COMPACT_ASCII(o)) return read_push_other_str(rr, o);
    cf_builder_item *it = next_item(&rr->w, ascii_kind);
    it->n = (size_t)PyUnicode_GET_LENGTH(o);
    it->u.s = (const char *)PyUnicode_DATA(o);
    return true;
}

/* Push a key of a Python dict read in place: as read_push_str, an ASCII
 * one as a KEY. */
static inline bool read_push_key(RowRead *rr, PyObject *o) {
    if (!PyUnicode_IS_COMPACT_ASCII(o)) return read_push_other_str(rr, o);
    cf_builder_item *it = next_item(&rr->w, key_kind);
    it->n = (size_t)PyUnicode_GET_LENGTH(o);
    it->u.s = (const char *)PyUnicode_DATA(o);
    return true;
}

static bool read_value(RowRead *rr, PyObject *o, int depth);

/* A str in place (most values: no call), else read_value. */
static inline bool read_item(RowRead *rr, PyObject *o, int depth) {
    if (Py_TYPE(o) == &PyUnicode_Type) return read_push_str(rr, o);
    return read_value(rr, o, depth);
}

static bool read_value(RowRead *rr, PyObject *o, int depth) {
    PyTypeObject *t = Py_TYPE(o);
    Walk *w = &rr->w;
    if (t == &PyUnicode_Type) return read_push_str(rr, o);
    if (t == &PyDict_Type) {
        if (depth >= MAX_DEPTH) return false;
        next_item(w, CF_ITEM_DICT)->n = (size_t)PyDict_GET_SIZE(o);
        Pairs pairs;
        pairs_start(&pairs, o);
        PyObject *k, *v;
        while (pairs_next(&pairs, &k, &v))
            if (Py_TYPE(k) != &PyUnicode_Type || !read_push_key(rr, k) || !read_item(rr, v, depth + 1)) return false;
        return true;
    }
    if (t == &PyList_Type || t == &PyTuple_Type) {
        if (depth >= MAX_DEPTH) return false;
        Py_ssize_t n = Py_SIZE(o);   /* (a list's or a tuple's length) */
        PyObject **items = t == &PyList_Type ? ((PyListObject *)o)->ob_item : ((PyTupleObject *)o)->ob_item;
        next_item(w, t == &PyTuple_Type ? CF_ITEM_TUPLE : CF_ITEM_LIST)->n = (size_t)n;
        for (Py_ssize_t i = 0; i < n; i++)
            if (!read_item(rr, items[i], depth + 1)) return false;
        return true;
    }
    return push_scalar(w, o, t);
}

/* A dict's pairs without a header; *tools set to the value of a "tools"
 * key when one is there. */
static bool read_pairs(RowRead *rr, PyObject *d, PyObject **tools) {
    Pairs pairs;
    pairs_start(&pairs, d);
    PyObject *k, *v;
    while (pairs_next(&pairs, &k, &v)) {
        if (Py_TYPE(k) != &PyUnicode_Type || !read_push_str(rr, k) || !read_item(rr, v, 1)) return false;
        if (PyUnicode_IS_COMPACT_ASCII(k) && PyUnicode_GET_LENGTH(k) == 5 && memcmp(PyUnicode_DATA(k), "tools", 5) == 0)
            *tools = v;
    }
    return true;
}

typedef struct BatchWindow {
    Window win;
    /* The window before's texts, copied into the str objects the calling
     * thread makes for them (copies[0..copies_ready) are made) by the
     * threads rendering this window: see batch_drain. */
    TextCopy copies[WINDOW_ROWS];
    _Alignas(64) atomic_size_t copies_ready, copies_claimed;
    Walk walk;                /* items (a growing array) and the strings they point into */
    Held held;
    BatchRow rows[WINDOW_ROWS];
    size_t start;             /* index of its first row in the batch */
    unsigned long gen;        /* which fill of the batch this is */
    const cf_render_options *opt;
    bool chat;
    /* contexts dropped from the repeat cache while rows of this window
     * may render them: freed once the window is finished */
    cf_context **retired;
    size_t nretired, retired_cap;
    const struct BatchArgs *args;   /* rows read on the workers: what the row reads need */
} BatchWindow;

static void render_built(BatchWindow *bw, BatchRow *r, cf_builder *b);
static bool read_row(BatchWindow *bw, BatchRow *r, cf_builder *b);

/* ---- a rendering thread's builder ----
 * With cf_builder_take, a thread builds its rows' contexts with one
 * builder, left empty by each take for the next row (no builder made and
 * freed a row). It is made for one set of limits, and freed when its
 * thread ends (the pool's workers end with each call) or, the calling
 * thread's, at the end of the call (thread_builder_drop). */
typedef struct ThreadBuilder {
    cf_builder *b;
    bool defaults;            /* made for the default limits (lim unused) */
    cf_limits lim;
} ThreadBuilder;

static pthread_key_t thread_builder_key;
static bool thread_builder_keyed;   /* the key exists (made once, at init) */

static void thread_builder_free(void *p) {
    ThreadBuilder *tb = p;
    lib.builder_free(tb->b);
    free(tb);
}

/* (at init, under the GIL; without the key each row makes its builder) */
static void thread_builder_setup(void) {
    if (!thread_builder_keyed) thread_builder_keyed = pthread_key_create(&thread_builder_key, thread_builder_free) == 0;
}

static bool limits_same(const cf_limits *a, const cf_limits *b) {
    return a->max_steps == b->max_steps && a->max_recursion == b->max_recursion &&
           a->max_parse_depth == b->max_parse_depth && a->max_output == b->max_output &&
           a->max_string == b->max_string && a->max_items == b->max_items && a->max_memory == b->max_memory &&
           a->max_range == b->max_range && a->max_json_depth == b->max_json_depth &&
           a->max_json_bytes == b->max_json_bytes;
}

/* A builder for a row under these limits (NULL: the defaults): this
 * thread's, or a new one when the library has no take (NULL: no memory). */
static cf_builder *row_builder(const cf_limits *lim) {
    if (!lib.take || !thread_builder_keyed) return lib.builder_new(lim);
    ThreadBuilder *tb = pthread_getspecific(thread_builder_key);
    if (tb && (lim ? !tb->defaults && limits_same(&tb->lim, lim) : tb->defaults)) return tb->b;
    if (tb) {   /* other limits: this call's builder replaces the last one's */
        pthread_setspecific(thread_builder_key, NULL);
        thread_builder_free(tb);
    }
    if (!(tb = malloc(sizeof *tb))) return NULL;
    if (!(tb->b = lib.builder_new(lim))) {
        free(tb);
        return NULL;
    }
    tb->defaults = !lim;
    if (lim) tb->lim = *lim;
    if (pthread_setspecific(thread_builder_key, tb) != 0) {
        thread_builder_free(tb);
        return lib.builder_new(lim);
    }
    return tb->b;
}

/* Is b this thread's kept builder (else the row's own, to free)? */
static bool is_thread_builder(cf_builder *b) {
    if (!lib.take || !thread_builder_keyed) return false;
    ThreadBuilder *tb = pthread_getspecific(thread_builder_key);
    return tb && tb->b == b;
}

/* A row's builder after a read that is not rendered: emptied for the next
 * row, or freed. */
static void row_builder_drop(cf_builder *b) {
    if (is_thread_builder(b)) {
        cf_error ignored;
        lib.take(b, &ignored);
    } else {
        lib.builder_free(b);
    }
}

/* At the end of a call, the calling thread's builder (the workers' go with
 * their threads). */
static void thread_builder_drop(void) {
    if (!thread_builder_keyed) return;
    ThreadBuilder *tb = pthread_getspecific(thread_builder_key);
    if (!tb) return;
    pthread_setspecific(thread_builder_key, NULL);
    thread_builder_free(tb);
}

/* Copy the texts ready so far (any thread; the caller also after the
 * window is finished, for those no worker took): the copy into a fresh
 * str faults its pages in, at microseconds a page on a virtual machine,
 * which on the calling thread alone was serial work of every row. */
static size_t copy_texts(Window *win) {
    BatchWindow *bw = (BatchWindow *)win;
    size_t done = 0, j = atomic_load_explicit(&bw->copies_claimed, memory_order_relaxed);
    while (j < atomic_load_explicit(&bw->copies_ready, memory_order_acquire)) {
        if (!atomic_compare_exchange_weak(&bw->copies_claimed, &j, j + 1)) continue;   /* (j reloaded) */
        copy_text(&bw->copies[j]);
        atomic_store_explicit(bw->copies[j].copied, true, memory_order_release);
        done++;
        j = atomic_load_explicit(&bw->copies_claimed, memory_order_relaxed);
    }
    return done;
}

static bool spent_copied(void *arg) {
    return atomic_load_explicit(&((BatchRow *)arg)->spent_copied, memory_order_acquire);
}

/* Render row r from ctx and turn its output into its str's form. */
static void render_row(BatchWindow *bw, BatchRow *r, const cf_context *ctx) {
    if (r->spent.text) {   /* into this thread's cache (see spent), once its copy is made */
        while (!spin_until(spent_copied, r, NULL)) {
        }
        lib.result_free(&r->spent);
    }
    bool ok = (bw->chat ? lib.render_chat : lib.render)(r->t, ctx, bw->opt, &r->res, &r->err);
    r->state = ok ? ROW_OK : ROW_ERROR;
    if (ok) convert_output(r);
}

static void batch_row_body(BatchWindow *bw, BatchRow *r) {
    if (r->state != ROW_PENDING) return;
    if (r->shared) {   /* a row object seen before: its context is built */
        render_row(bw, r, r->ctx);
        return;
    }
    cf_builder *b = row_builder(bw->opt ? bw->opt->limits : NULL);
    if (!b) {
        r->state = ROW_DECLINED;   /* out of memory: the general path reports it */
        return;
    }
    if (bw->args) {
        if (!read_row(bw, r, b)) {
            row_builder_drop(b);
            if (r->state == ROW_PENDING) r->state = ROW_UNREAD;
            return;
        }
    } else {
        lib.feed(b, bw->walk.items + r->first, r->count);
    }
    render_built(bw, r, b);
}

static void batch_row(Window *win, size_t i) {
    BatchWindow *bw = (BatchWindow *)win;
    batch_row_body(bw, &bw->rows[i]);
    atomic_store_explicit(&bw->rows[i].finished, true, memory_order_release);
}

/* Finish the row's builder and render it. */
static void render_built(BatchWindow *bw, BatchRow *r, cf_builder *b) {
    if (lib.failed(b)) {
        row_builder_drop(b);
        r->state = ROW_DECLINED;
        return;
    }
    cf_context *ctx = is_thread_builder(b) ? lib.take(b, &r->err) : lib.finish(b, &r->err);
    if (!ctx) {
        r->state = ROW_DECLINED;
        return;
    }
    render_row(bw, r, ctx);
    if (r->keep) r->ctx = ctx;   /* (the drain caches it) */
    else lib.context_free(ctx);
}

/* ---- rows that repeat ----
 * A batch often holds the same row object many times (a list built as
 * [conversation] * n, or rows cycled from a few): its variables are the
 * same, so its context is built once and shared by the later rows (a
 * context renders from many threads at once). Keyed by object identity
 * within one call: a row is read once, where it first repeats, and the
 * rows are not expected to change while the call reads them (as any
 * reader of them on other threads). The cache holds each row object it
 * keys (its address is then not reused). Only a row seen a second time
 * keeps its context, so a batch of distinct rows builds and frees each
 * context on its rendering thread as before. */
typedef struct RepeatEntry {
    PyObject *row;            /* held; NULL: empty */
    cf_context *ctx;          /* built, or NULL */
    const cf_template *t;
    unsigned long used;       /* the last window that renders ctx */
    bool pending;             /* a row in flight is to bring ctx */
} RepeatEntry;

typedef struct RepeatCache {
    RepeatEntry *e;
    size_t mask;              /* entries - 1 (a power of two) */
    unsigned long gen;        /* fills so far */
} RepeatCache;

enum { REPEAT_MAX = 4096 };

static bool repeat_init(RepeatCache *c, size_t nrows) {
    size_t n = 16;
    while (n < nrows && n < REPEAT_MAX) n *= 2;
    c->e = calloc(n, sizeof *c->e);
    c->mask = n - 1;
    c->gen = 0;
    return c->e != NULL;
}

static RepeatEntry *repeat_slot(RepeatCache *c, PyObject *row) {
    uint64_t h = (uint64_t)(uintptr_t)row * 0x9E3779B97F4A7C15ull;
    return &c->e[(h >> 32) & c->mask];
}

static bool retire(BatchWindow *bw, cf_context *ctx) {
    if (bw->nretired == bw->retired_cap) {
        size_t cap = bw->retired_cap ? 2 * bw->retired_cap : 64;
        cf_context **p = realloc(bw->retired, cap * sizeof *p);
        if (!p) return false;
        bw->retired = p;
        bw->retired_cap = cap;
    }
    bw->retired[bw->nretired++] = ctx;
    return true;
}

static void free_retired(BatchWindow *bw) {
    for (size_t i = 0; i < bw->nretired; i++) lib.context_free(bw->retired[i]);
    bw->nretired = 0;
}

/* Set row r of the window being filled (bw) from the cache: true when its
 * context is there (shared: nothing to walk). Otherwise r->keep says
 * whether to keep the context it builds. False + r->shared false when
 * memory for the bookkeeping runs out (the row is then built as usual). */
static bool repeat_lookup(RepeatCache *c, BatchWindow *bw, BatchRow *r, PyObject *row) {
    RepeatEntry *e = repeat_slot(c, row);
    r->shared = r->keep = false;
    r->ctx = NULL;
    if (e->row == row) {
        if (e->ctx) {
            r->ctx = e->ctx;
            r->t = e->t;
            r->shared = true;
            e->used = bw->gen;
            return true;
        }
        if (!e->pending) r->keep = e->pending = true;   /* seen twice: keep this one's context */
        return false;
    }
    /* another object's entry, or none: this row takes it; a context rows in
     * flight may render (this window's or the one before) waits for the
     * end of this window, which finishes last */
    if (e->ctx) {
        if (e->used + 1 >= bw->gen) {
            if (!retire(bw, e->ctx)) return false;   /* (the entry stays as it was) */
        } else {
            lib.context_free(e->ctx);
        }
    }
    Py_XDECREF(e->row);
    e->row = new_ref(row);
    e->ctx = NULL;
    e->pending = false;
    return false;
}

/* A drained row's kept context into the cache, or freed when its entry
 * went to another row meanwhile. */
static void repeat_store(RepeatCache *c, BatchRow *r, PyObject *row) {
    if (!r->keep) return;
    RepeatEntry *e = repeat_slot(c, row);
    bool mine = e->row == row && e->pending && !e->ctx;
    if (mine) e->pending = false;
    if (r->ctx) {
        if (mine) {
            e->ctx = r->ctx;
            e->t = r->t;
            e->used = 0;   /* (no window renders it yet) */
        } else {
            lib.context_free(r->ctx);
        }
    }
    r->ctx = NULL;
    r->keep = false;
}

/* After the last window: every context and row the cache holds. */
static void repeat_free(RepeatCache *c) {
    if (!c->e) return;
    for (size_t i = 0; i <= c->mask; i++) {
        if (c->e[i].ctx) lib.context_free(c->e[i].ctx);
        Py_XDECREF(c->e[i].row);
    }
    free(c->e);
    c->e = NULL;
}

/* A row whose result is made after the last window (making it could run
 * Python code while workers read rows): an output to decode, an error, or
 * a row to walk under the GIL (ROW_UNREAD). */
typedef struct Deferred {
    size_t index;
    int state;
    cf_result res;            /* ROW_OK */
    cf_error_kind kind;       /* ROW_ERROR: the error, its message copied */
    int line, column;
    size_t offset;
    char *message;
} Deferred;

typedef struct BatchArgs {
    PyObject *rows, *common, *tools_key, *messages_key, *tools_error, *make_error;
    const cf_template *plain, *with_tools;
    RepeatCache repeat;
    size_t window_rows;       /* rows a window takes (see WINDOW_TEXT) */
    bool read_on_workers;     /* this pass's rows are read by the rendering threads */
    Deferred *deferred;
    size_t ndeferred, deferred_cap;
} BatchArgs;

/* Read row r into b on a rendering thread (see READ_ON_WORKERS): false
 * when the row is outside what is read here (or memory ran out), or for a
 * tools error (r->state set). */
static bool read_row(BatchWindow *bw, BatchRow *r, cf_builder *b) {
    const BatchArgs *a = bw->args;
    RowRead rr;   /* (fields one by one: an initializer would clear the chunk, 6 KiB a row) */
    rr.w.b = b;
    rr.w.n = 0;
    rr.w.cap = CHUNK;
    rr.w.items = rr.w.chunk;
    rr.w.held = NULL;
    rr.w.failed = false;
    rr.utf8 = &r->utf8;
    rr.utf8_cap = &r->utf8_cap;
    rr.utf8_used = 0;
    PyObject *row = r->row, *tools = NULL;
    PyTypeObject *t = Py_TYPE(row);
    bool read;
    if (t == &PyDict_Type) {
        next_item(&rr.w, CF_ITEM_DICT)->n = (size_t)(PyDict_GET_SIZE(a->common) + PyDict_GET_SIZE(row));
        read = read_pairs(&rr, a->common, &tools) && read_pairs(&rr, row, &tools);
    } else if (t == &PyList_Type || t == &PyTuple_Type) {   /* a conversation */
        next_item(&rr.w, CF_ITEM_DICT)->n = (size_t)PyDict_GET_SIZE(a->common) + 1;
        read = read_pairs(&rr, a->common, &tools) && read_push_str(&rr, a->messages_key) && read_value(&rr, row, 1);
    } else {
        read = false;
    }
    if (!read) return false;
    bool with_tools = tools && tools != Py_None;
    if (with_tools && a->tools_error != Py_None) {
        r->state = ROW_TOOLS_ERROR;
        return false;
    }
    r->t = with_tools && a->with_tools ? a->with_tools : a->plain;
    if (rr.w.n) lib.feed(b, rr.w.items, rr.w.n);
    return true;
}

/* The value `tools` has for this row (borrowed; NULL when absent). */
static PyObject *row_tools(const BatchArgs *a, PyObject *row) {
    PyObject *v = PyDict_CheckExact(row) ? PyDict_GetItemWithError(row, a->tools_key) : NULL;
    if (!v && !PyErr_Occurred()) v = PyDict_GetItemWithError(a->common, a->tools_key);
    return v;
}

/* A dict's pairs, without a header (the caller counted them). */
static bool walk_pairs(Walk *w, PyObject *d) {
    Pairs pairs;
    pairs_start(&pairs, d);
    PyObject *k, *v;
    while (pairs_next(&pairs, &k, &v))
        if (Py_TYPE(k) != &PyUnicode_Type || !push_unicode(w, k) || !walk(w, v, 1)) return false;
    return true;
}

/* Walk rows [start, end) of the batch into bw, as many as fit; returns the
 * end of what was walked, or (size_t)-1 with an exception set. */
static size_t batch_fill(BatchWindow *bw, BatchArgs *a, size_t start, size_t end) {
    Walk *w = &bw->walk;
    w->n = 0;
    w->failed = false;
    bw->start = start;
    bw->gen = ++a->repeat.gen;
    bw->args = a->read_on_workers ? a : NULL;
    atomic_store(&bw->copies_ready, 0);   /* (the last fill's were copied when it was finished) */
    atomic_store(&bw->copies_claimed, 0);
    size_t k = 0;
    for (; start + k < end && k < a->window_rows && w->n < WINDOW_ITEMS; k++) {
        PyObject *row = PyList_GET_ITEM(a->rows, (Py_ssize_t)(start + k));
        BatchRow *r = &bw->rows[k];
        r->first = w->n;
        r->state = ROW_PENDING;
        atomic_store_explicit(&r->finished, false, memory_order_relaxed);   /* (published with the window) */
        r->row = row;
        if (repeat_lookup(&a->repeat, bw, r, row) || a->read_on_workers) {   /* (no Python code runs here) */
            r->count = 0;
            continue;
        }
        PyObject *tools = row_tools(a, row);
        if (PyErr_Occurred()) return (size_t)-1;
        bool with_tools = tools && tools != Py_None;
        r->t = with_tools && a->with_tools ? a->with_tools : a->plain;
        bool walked;
        if (with_tools && a->tools_error != Py_None) {
            r->state = ROW_TOOLS_ERROR;
            walked = true;
        } else if (PyDict_CheckExact(row)) {
            next_item(w, CF_ITEM_DICT)->n = (size_t)(PyDict_GET_SIZE(a->common) + PyDict_GET_SIZE(row));
            walked = walk_pairs(w, a->common) && walk_pairs(w, row);
        } else if (PyList_CheckExact(row) || PyTuple_CheckExact(row)) {   /* a conversation */
            next_item(w, CF_ITEM_DICT)->n = (size_t)PyDict_GET_SIZE(a->common) + 1;
            walked = walk_pairs(w, a->common) && push_unicode(w, a->messages_key) && walk(w, row, 1);
        } else {
            walked = false;
        }
        if (w->failed) {
            PyErr_NoMemory();
            return (size_t)-1;
        }
        if (!walked) r->state = ROW_DECLINED;
        r->count = w->n - r->first;
    }
    bw->win.nrows = k;
    return start + k;
}

/* The window's results into out[start...], as str, error objects (made by
 * make_error(kind, message, line, column, offset)), the tools error, or
 * DECLINED; frees the outputs. False with an exception set. */
static bool defer_row(BatchArgs *a, BatchRow *r, size_t index) {
    if (a->ndeferred == a->deferred_cap) {
        size_t cap = a->deferred_cap ? 2 * a->deferred_cap : 64;
        Deferred *p = realloc(a->deferred, cap * sizeof *p);
        if (!p) return false;
        a->deferred = p;
        a->deferred_cap = cap;
    }
    Deferred *d = &a->deferred[a->ndeferred];
    memset(d, 0, sizeof *d);
    d->index = index;
    d->state = r->state;
    if (r->state == ROW_ERROR) {
        if (!(d->message = strdup(r->err.message))) return false;
        d->kind = r->err.kind;
        d->line = r->err.line;
        d->column = r->err.column;
        d->offset = r->err.offset;
    } else if (r->state == ROW_OK) {
        d->res = r->res;   /* (taken over) */
        memset(&r->res, 0, sizeof r->res);
    }
    a->ndeferred++;
    return true;
}

static bool row_finished(void *arg) {
    return atomic_load_explicit(&((BatchRow *)arg)->finished, memory_order_acquire);
}

/* pool_wait with the GIL let go when the workers do not read rows. */
static void caller_wait(Pool *p, BatchWindow *bw, bool (*ready)(void *), const BatchArgs *a) {
    if (a->read_on_workers) {
        pool_wait(p, &bw->win, ready);
    } else {
        Py_BEGIN_ALLOW_THREADS
        pool_wait(p, &bw->win, ready);
        Py_END_ALLOW_THREADS
    }
}

/* Wait until row r of bw is rendered: the drain follows the rendering
 * threads row by row, so that none waits for a window's last rows (the
 * threads go on to the next window meanwhile). A long row is waited for
 * asleep, until the window is finished, with the GIL let go when the
 * workers do not read rows. */
static void wait_row(Pool *p, BatchWindow *bw, BatchRow *r, const BatchArgs *a) {
    if (row_finished(r)) return;
    ThreadFigures *f = p->fig;
    long long since = wait_begin(f);
    bool seen = spin_until(row_finished, r, f);
    wait_end(f, since, false, 0);
    if (!seen) caller_wait(p, bw, window_finished, a);
}

/* copier: the window the threads render meanwhile, or NULL: they copy the
 * converted texts into the str objects made here (see copy_texts). The
 * rows are taken as they finish (see wait_row). */
static bool batch_drain(Pool *pool, BatchWindow *bw, BatchArgs *a, PyObject *out, BatchWindow *copier) {
    bool ok = true;
    size_t text_bytes = 0, ncopies = 0;
    for (size_t i = 0; i < bw->win.nrows; i++) {
        BatchRow *r = &bw->rows[i];
        wait_row(pool, bw, r, a);
        repeat_store(&a->repeat, r, PyList_GET_ITEM(a->rows, (Py_ssize_t)(bw->start + i)));
        PyObject *o = NULL;
        if (a->read_on_workers && (r->state == ROW_UNREAD || r->state == ROW_ERROR ||
                                   (r->state == ROW_OK && !r->converted))) {
            /* workers may be reading the next window's rows: made after the pass */
            if (r->state == ROW_OK) text_bytes += r->res.len;
            if (ok && !defer_row(a, r, bw->start + i)) {
                PyErr_NoMemory();
                ok = false;
            }
            if (r->state == ROW_OK) lib.result_free(&r->res);   /* (NULL once taken over) */
            continue;
        }
        if (r->state == ROW_OK) {
            text_bytes += r->res.len;
            if (ok && r->converted && copier) {
                o = PyUnicode_New((Py_ssize_t)r->nchars, (Py_UCS4)r->maxchar);
                if (o) {
                    copier->copies[ncopies] = text_copy_of(r, o);
                    copier->copies[ncopies].copied = &r->spent_copied;
                    atomic_store_explicit(&r->spent_copied, false, memory_order_relaxed);   /* (published below) */
                    atomic_store_explicit(&copier->copies_ready, ++ncopies, memory_order_release);
                }
            } else if (ok) {
                o = r->converted ? converted_to_str(r) : text_to_str(r->res.text, r->res.len);
            }
            if (r->converted) {   /* (read by its copy, if one was queued, until spent_copied) */
                if (!o || !copier) atomic_store_explicit(&r->spent_copied, true, memory_order_relaxed);
                r->spent = r->res;
                memset(&r->res, 0, sizeof r->res);
            } else {
                lib.result_free(&r->res);
            }
        } else if (!ok) {
            continue;
        } else if (r->state == ROW_ERROR) {
            PyObject *t = error_tuple(&r->err);
            if (t) {
                o = PyObject_CallObject(a->make_error, t);
                Py_DECREF(t);
            }
        } else {
            o = new_ref(r->state == ROW_TOOLS_ERROR ? a->tools_error : declined);
        }
        if (!o) {
            ok = false;
            continue;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)(bw->start + i), o);
    }
    release_held(&bw->held);
    free_retired(bw);
    size_t per_row = text_bytes / (bw->win.nrows ? bw->win.nrows : 1) + 1;
    size_t rows = WINDOW_TEXT / per_row;
    a->window_rows = rows < WINDOW_MIN_ROWS ? WINDOW_MIN_ROWS : rows > WINDOW_ROWS ? WINDOW_ROWS : rows;
    return ok;
}

static void batch_window_free(BatchWindow *bw) {
    if (!bw) return;
    release_held(&bw->held);
    free(bw->held.o);
    free_retired(bw);
    free(bw->retired);
    free(bw->walk.items);
    for (size_t i = 0; i < WINDOW_ROWS; i++) {
        free(bw->rows[i].utf8);
        lib.result_free(&bw->rows[i].spent);
    }
    free(bw);
}

/* Windows kept between calls (touched only with the GIL held): a window
 * with its item array is a few MiB, which malloc maps and unmaps on every
 * call otherwise; fresh pages cost several microseconds each on a loaded
 * machine, which made a call of 1000 rows pay more for its windows than
 * for its renders. A call made while another holds them allocates its own. */
enum { SPARE_WINDOWS = 2 };
static BatchWindow *spare_windows[SPARE_WINDOWS];

static BatchWindow *batch_window_take(void) {
    for (int k = 0; k < SPARE_WINDOWS; k++) {
        BatchWindow *bw = spare_windows[k];
        if (bw) {
            spare_windows[k] = NULL;
            return bw;
        }
    }
    BatchWindow *bw = aligned_alloc(_Alignof(BatchWindow), sizeof(BatchWindow));   /* (its rows: cache lines of their own) */
    if (bw) memset(bw, 0, sizeof *bw);
    return bw;
}

static void batch_window_give_back(BatchWindow *bw) {
    if (!bw) return;
    release_held(&bw->held);
    free_retired(bw);
    if (bw->walk.cap > 4 * WINDOW_ITEMS) {   /* grown by one huge row: not kept at that size */
        free(bw->walk.items);
        bw->walk.items = NULL;
        bw->walk.cap = 0;
    }
    for (size_t i = 0; i < WINDOW_ROWS; i++) {   /* likewise a buffer grown by one huge string */
        if (bw->rows[i].utf8_cap > SLOT_TEXT_MAX) {
            free(bw->rows[i].utf8);
            bw->rows[i].utf8 = NULL;
            bw->rows[i].utf8_cap = 0;
        }
    }
    for (int k = 0; k < SPARE_WINDOWS; k++) {
        if (!spare_windows[k]) {
            spare_windows[k] = bw;
            return;
        }
    }
    batch_window_free(bw);
}

/* While the workers read rows the calling thread holds the GIL; every
 * PAUSE_NS it lets other Python threads run (as the interpreter's own
 * switch interval would), at a moment when no worker reads a row. */
enum { PAUSE_NS = 5000000 };

static bool pause_due(const struct timespec *since) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000000000LL + (now.tv_nsec - since->tv_nsec) >= PAUSE_NS;
}

/* Render win's rows beside the workers until none is left to claim: with
 * the GIL let go when the caller walked the rows, held when the workers
 * read them (see READ_ON_WORKERS: holding it is what keeps the rows as
 * they are). The texts queued for win's threads to copy were all queued
 * before (by the drain of the window before), so the copies no worker took
 * are made here. */
static void batch_join(Pool *pool, BatchWindow *bw, const BatchArgs *a) {
    if (a->read_on_workers) {
        run_rows(&bw->win, pool->fig);
    } else {
        Py_BEGIN_ALLOW_THREADS
        run_rows(&bw->win, pool->fig);
        Py_END_ALLOW_THREADS
    }
}

/* ... and until every row is rendered and no worker holds it. */
static void batch_finish(Pool *pool, BatchWindow *bw, const BatchArgs *a) {
    batch_join(pool, bw, a);
    caller_wait(pool, bw, window_finished, a);
}

/* Render a->rows into out (a list of their length) on `threads` threads:
 * false with an exception set. Results the pass defers (a->deferred) are
 * made by batch_complete. */
static bool batch_pass(BatchArgs *a, PyObject *out, const cf_render_options *opt, bool chat, long threads) {
    Py_ssize_t n = PyList_GET_SIZE(a->rows);
    BatchWindow *bw[2] = {batch_window_take(), batch_window_take()};
    if (!bw[0] || !bw[1] || !repeat_init(&a->repeat, (size_t)n)) {
        PyErr_NoMemory();
        goto fail_early;
    }
    for (int k = 0; k < 2; k++) {
        bw[k]->win.row = batch_row;
        bw[k]->win.side = copy_texts;
        bw[k]->walk.held = &bw[k]->held;
        bw[k]->opt = opt;
        bw[k]->chat = chat;
    }
    if ((size_t)n < (size_t)threads * 8) threads = n / 8 + 1;
    Pool pool;
    pool_start(&pool, (unsigned)threads, figures.on);
    bool ok = true;
    BatchWindow *published = NULL;   /* handed to the workers, not yet finished */
    long long t0 = phase_begin();
    size_t at = batch_fill(bw[0], a, 0, (size_t)n);
    phase_end(&figures.fill_ns, t0);
    if (at == (size_t)-1) ok = false;
    else if (bw[0]->win.nrows) pool_publish(&pool, &(published = bw[0])->win);
    int c = 0;
    struct timespec last_pause;
    clock_gettime(CLOCK_MONOTONIC, &last_pause);
    while (ok && bw[c]->win.nrows) {
        BatchWindow *cur = bw[c], *nxt = bw[c ^ 1];
        /* the workers render cur meanwhile; nxt is handed to them once
         * filled, which they take when no row of cur is left to claim, so
         * that no thread waits at the end of a window */
        bool pause = a->read_on_workers && pause_due(&last_pause);
        pool_quiesce(&pool, &nxt->win);
        long long t = phase_begin();
        size_t next_at = at < (size_t)n && !pause ? batch_fill(nxt, a, at, (size_t)n) : at;
        phase_end(&figures.fill_ns, t);
        if (at >= (size_t)n || pause || next_at == (size_t)-1) nxt->win.nrows = 0;
        /* the texts queued for cur's threads (all queued: by the drain of
         * the window before) are taken before nxt's rows render in their
         * slots: a worker that ran out of cur's rows left some */
        long long copy_cpu = pool.fig ? thread_cpu_ns() : 0;
        size_t copied = copy_texts(&cur->win);
        if (pool.fig) {   /* (work beside the workers, as in run_rows) */
            pool.fig[0].copies += copied;
            pool.fig[0].render_cpu_ns += thread_cpu_ns() - copy_cpu;
        }
        if (nxt->win.nrows) pool_publish(&pool, &nxt->win);
        published = nxt->win.nrows ? nxt : NULL;
        batch_join(&pool, cur, a);
        t = phase_begin();
        long long waited = pool.fig ? pool.fig[0].wait_cpu_ns : 0;
        if (!batch_drain(&pool, cur, a, out, published) || next_at == (size_t)-1) ok = false;   /* (the workers render nxt) */
        phase_end(&figures.drain_ns, t);
        if (pool.fig) figures.drain_ns -= pool.fig[0].wait_cpu_ns - waited;
        if (figures.on) figures.windows++;
        if (pause && ok) {   /* no worker reads a row: other Python threads run a moment */
            pool_wait(&pool, &cur->win, window_finished);   /* (a worker may still be leaving it) */
            Py_BEGIN_ALLOW_THREADS
            Py_END_ALLOW_THREADS
            clock_gettime(CLOCK_MONOTONIC, &last_pause);
            if (PyList_GET_SIZE(a->rows) != n) {
                PyErr_SetString(PyExc_RuntimeError, "render_batch: the list of rows changed size during the call");
                ok = false;
            } else if (at < (size_t)n) {
                next_at = batch_fill(nxt, a, at, (size_t)n);
                if (next_at == (size_t)-1) ok = false;
                else if (nxt->win.nrows) pool_publish(&pool, &(published = nxt)->win);
            }
        }
        at = next_at;
        c ^= 1;
    }
    if (published) {   /* stopped by an exception: let the workers finish, drop the outputs */
        batch_finish(&pool, published, a);
        for (size_t i = 0; i < published->win.nrows; i++) {
            BatchRow *r = &published->rows[i];
            if (r->state == ROW_OK) lib.result_free(&r->res);
            repeat_store(&a->repeat, r, PyList_GET_ITEM(a->rows, (Py_ssize_t)(published->start + i)));
        }
    }
    pool_stop(&pool, figures.on ? figures.thread : NULL, FIGURE_THREADS);
fail_early:
    repeat_free(&a->repeat);
    batch_window_give_back(bw[0]);
    batch_window_give_back(bw[1]);
    return !PyErr_Occurred();
}

/* The deferred results into out, Python code allowed again (no worker
 * runs): decoded outputs, error objects, and the rows the workers did not
 * read, walked under the GIL in a second pass. False with an exception set
 * (with ok false, as after a failed pass: only frees them). */
static bool batch_complete(BatchArgs *a, PyObject *out, const cf_render_options *opt, bool chat, long threads,
                           bool ok) {
    size_t unread = 0;
    for (size_t k = 0; k < a->ndeferred; k++) {
        Deferred *d = &a->deferred[k];
        PyObject *o = NULL;
        if (d->state == ROW_UNREAD) {
            a->deferred[unread++] = *d;   /* (kept, in order, for the second pass) */
            continue;
        }
        if (!ok) {
        } else if (d->state == ROW_OK) {
            o = text_to_str(d->res.text, d->res.len);
        } else {
            PyObject *msg = PyUnicode_DecodeUTF8(d->message, (Py_ssize_t)strlen(d->message), "replace");
            PyObject *t = msg ? Py_BuildValue("(iNiin)", (int)d->kind, msg, d->line, d->column, (Py_ssize_t)d->offset)
                              : NULL;
            if (t) {
                o = PyObject_CallObject(a->make_error, t);
                Py_DECREF(t);
            }
        }
        if (d->state == ROW_OK) lib.result_free(&d->res);
        free(d->message);
        if (!o) {
            ok = false;
            continue;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)d->index, o);
    }
    a->ndeferred = unread;
    if (!ok || !unread) return ok;
    /* the unread rows, walked under the GIL (which decides what they become) */
    PyObject *rows = PyList_New((Py_ssize_t)unread), *sub = PyList_New((Py_ssize_t)unread);
    if (!rows || !sub) {
        Py_XDECREF(rows);
        Py_XDECREF(sub);
        return false;
    }
    for (size_t k = 0; k < unread; k++)
        PyList_SET_ITEM(rows, (Py_ssize_t)k, new_ref(PyList_GET_ITEM(a->rows, (Py_ssize_t)a->deferred[k].index)));
    BatchArgs second = *a;
    second.rows = rows;
    second.read_on_workers = false;
    second.deferred = NULL;
    second.ndeferred = second.deferred_cap = 0;
    second.window_rows = WINDOW_MIN_ROWS;
    ok = batch_pass(&second, sub, opt, chat, threads);
    for (size_t k = 0; ok && k < unread; k++)
        PyList_SET_ITEM(out, (Py_ssize_t)a->deferred[k].index, new_ref(PyList_GET_ITEM(sub, (Py_ssize_t)k)));
    Py_DECREF(rows);
    Py_DECREF(sub);
    return ok;
}

/* render_batch(rows, common, plain_ptr, tools_ptr, tools_error, options_ptr, chat, threads,
 *              make_error) -> (list, indices of its DECLINED items or None)
 * rows: a list of dicts (variables) or conversations (lists of messages);
 * common: variables every row has (a row's own keys win). Each result is a
 * str, an error object, tools_error (a row with tools when the tool_use
 * template did not compile; None: no such error), or DECLINED (data
 * outside the subset: the caller renders that row the general way). */
static PyObject *sp_render_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 9 || !PyList_CheckExact(args[0]) || !PyDict_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "render_batch(rows: list, common: dict, plain, with_tools, tools_error, "
                                         "options, chat, threads, make_error)");
        return NULL;
    }
    BatchArgs a = {args[0], args[1], NULL, NULL, args[4], args[8], PyLong_AsVoidPtr(args[2]), NULL, {NULL, 0, 0},
                   WINDOW_MIN_ROWS, READ_ON_WORKERS, NULL, 0, 0};
    a.with_tools = args[3] == Py_None ? NULL : PyLong_AsVoidPtr(args[3]);
    const cf_render_options *opt = PyLong_AsVoidPtr(args[5]);
    int chat = PyObject_IsTrue(args[6]);
    long threads = PyLong_AsLong(args[7]);
    if (PyErr_Occurred()) return NULL;
    if (!a.plain || threads < 1 || threads > 256) {
        PyErr_SetString(PyExc_ValueError, "render_batch: no template, or threads outside 1..256");
        return NULL;
    }
    long long call_start = 0;
    if (figures.on) {
        bool on = figures.on;
        memset(&figures, 0, sizeof figures);
        figures.on = figures.have = on;
        figures.threads = (unsigned)threads;
        thread_usage(&figures.thread[0], -1);
        call_start = monotonic_ns();
    }
    a.tools_key = PyUnicode_InternFromString("tools");
    a.messages_key = PyUnicode_InternFromString("messages");
    PyObject *out = PyList_New(PyList_GET_SIZE(a.rows));
    bool ok = a.tools_key && a.messages_key && out && batch_pass(&a, out, opt, chat != 0, threads);
    long long t = phase_begin();
    ok = batch_complete(&a, out, opt, chat != 0, threads, ok);   /* (after a failed pass: frees what was deferred) */
    phase_end(&figures.complete_ns, t);
    if (figures.on) {
        thread_usage(&figures.thread[0], +1);
        figures.wall_ns = monotonic_ns() - call_start;
    }
    free(a.deferred);
    thread_builder_drop();
    Py_XDECREF(a.tools_key);
    Py_XDECREF(a.messages_key);
    if (!ok) {
        Py_XDECREF(out);
        return NULL;
    }
    /* The DECLINED rows' indices, found by address here: a loop over the
     * results in Python touches each str, which a big batch has long
     * evicted from the cache (a memory access a row). */
    PyObject *declined_at = NULL;
    for (Py_ssize_t i = 0, n = PyList_GET_SIZE(out); i < n; i++) {
        if (PyList_GET_ITEM(out, i) != declined) continue;
        PyObject *index = (declined_at || (declined_at = PyList_New(0))) ? PyLong_FromSsize_t(i) : NULL;
        if (!index || PyList_Append(declined_at, index) < 0) {
            Py_XDECREF(index);
            Py_XDECREF(declined_at);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(index);
    }
    PyObject *both = PyTuple_Pack(2, out, declined_at ? declined_at : Py_None);
    Py_DECREF(out);
    Py_XDECREF(declined_at);
    return both;
}

/* batch_stats(on) -> the figures of the last render_batch call made while
 * on (None if there is none), and gathers them from now on or not: a dict
 * of the call's figures with "per_thread", a dict a thread (the calling
 * thread first). */
static PyObject *sp_batch_stats(PyObject *self, PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    PyObject *result = NULL;
    if (figures.have) {
        unsigned n = figures.threads < FIGURE_THREADS ? figures.threads : FIGURE_THREADS;
        PyObject *per = PyList_New(0);
        for (unsigned k = 0; per && k < n; k++) {
            const ThreadFigures *f = &figures.thread[k];
            PyObject *d = Py_BuildValue("{sLsLsLsLsLslslsksksksksk}", "cpu_ns", f->cpu_ns, "render_cpu_ns",
                                        f->render_cpu_ns, "wait_cpu_ns", f->wait_cpu_ns, "wait_ns", f->wait_ns,
                                        "sleep_ns", f->sleep_ns, "minor_faults", f->minor_faults, "switches",
                                        f->switches, "rows", f->rows, "copies", f->copies, "waits", f->waits,
                                        "yields", f->yields, "sleeps", f->sleeps);
            if (!d || PyList_Append(per, d) < 0) Py_CLEAR(per);
            Py_XDECREF(d);
        }
        if (!per) return NULL;
        result = Py_BuildValue("{sIsLsLsLsLsksN}", "threads", figures.threads, "wall_ns", figures.wall_ns,
                               "fill_ns", figures.fill_ns, "drain_ns", figures.drain_ns,
                               "complete_ns", figures.complete_ns, "windows", figures.windows,
                               "per_thread", per);
        if (!result) return NULL;
    } else {
        result = new_ref(Py_None);
    }
    figures.on = on != 0;
    return result;
}

/* -- format_jsonl: dataset mode's rows (cli/cmd_dataset.c), same bytes -- */

enum { MAX_DEFINES = 64 };

typedef struct JsonJob {
    const cf_template *plain, *with_tools;
    const cf_error *tools_error;     /* the tool_use template did not compile: rows with tools */
    const cf_render_options *opt;
    const cf_limits *lim;
    bool raw, spans, agp;
    int ndefines;
    const char *define_key[MAX_DEFINES], *define_json[MAX_DEFINES];
    size_t define_len[MAX_DEFINES];
} JsonJob;

typedef struct JsonRow {
    const char *line;
    size_t len;
    char *out;                       /* its output line (malloc), or NULL: out of memory */
    size_t out_len;
    bool error;
} JsonRow;

typedef struct JsonWindow {
    Window win;
    const JsonJob *job;
    JsonRow *rows;
} JsonWindow;

typedef struct Buf { char *p; size_t len, cap; bool failed; } Buf;

static bool buf_reserve(Buf *b, size_t n) {
    if (b->failed) return false;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return false;
        }
        b->p = p;
        b->cap = cap;
    }
    return true;
}

static void buf_put(Buf *b, const char *s, size_t n) {
    if (buf_reserve(b, n)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}

static void buf_puts(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }

/* json.dumps(s, ensure_ascii=False), as the CLI writes it (cf_json_quote). */
static void buf_json(Buf *b, const char *s, size_t n) {
    size_t need = lib.json_quote(s, n, NULL, 0);
    if (buf_reserve(b, need)) b->len += lib.json_quote(s, n, b->p + b->len, need);
}

static void json_row(Window *win, size_t i) {
    JsonWindow *jw = (JsonWindow *)win;
    const JsonJob *d = jw->job;
    JsonRow *r = &jw->rows[i];
    cf_error err;
    err.kind = CF_OK;
    err.message[0] = 0;
    cf_result res;
    cf_context *ctx = lib.context_from_json_limits(r->line, r->len, d->lim, &err);
    bool ok = ctx != NULL;
    for (int k = 0; ok && k < d->ndefines; k++)
        ok = lib.context_set_json(ctx, d->define_key[k], d->define_json[k], d->define_len[k], &err);
    if (ok && d->agp) ok = lib.context_set_bool(ctx, "add_generation_prompt", true);
    if (ok) {
        bool tools = (d->with_tools || d->tools_error) && lib.context_has_value(ctx, "tools");
        const cf_template *t = tools && d->with_tools ? d->with_tools : d->plain;
        if (tools && d->tools_error) {
            err = *d->tools_error;
            ok = false;
        } else {
            ok = (d->raw ? lib.render : lib.render_chat)(t, ctx, d->opt, &res, &err);
        }
    }
    if (ctx) lib.context_free(ctx);
    if (!ok && err.kind == CF_OK) {
        err.kind = CF_ERR_MEMORY;
        strcpy(err.message, "out of memory");
    }
    Buf b = {0};
    if (!ok) {
        const char *kind = lib.error_kind_name(err.kind);
        buf_puts(&b, "{\"error\": {\"type\": ");
        buf_json(&b, kind, strlen(kind));
        buf_puts(&b, ", \"message\": ");
        buf_json(&b, err.message, strlen(err.message));
        buf_puts(&b, "}}\n");
        r->error = true;
    } else {
        buf_puts(&b, "{\"text\": ");
        buf_json(&b, res.text, res.len);
        if (d->spans) {
            buf_puts(&b, ", \"spans\": [");
            for (size_t k = 0; k < res.nspans; k++) {
                char num[80];
                snprintf(num, sizeof num, "%s{\"start\": %zu, \"end\": %zu}", k ? ", " : "", res.spans[k].start,
                         res.spans[k].end);
                buf_puts(&b, num);
            }
            buf_puts(&b, "]");
        }
        buf_puts(&b, "}\n");
        lib.result_free(&res);
    }
    if (b.failed) {
        free(b.p);
        b.p = NULL;
        r->error = true;
    }
    r->out = b.p;
    r->out_len = b.len;
}

static const char OOM_ROW[] = "{\"error\": {\"type\": \"MemoryError\", \"message\": \"out of memory\"}}\n";

/* format_rows(block, plain_ptr, tools_ptr, tools_error, options_ptr, limits_ptr, raw, spans, agp,
 *             defines, threads) -> (bytes, rows, errors, first_error_row or -1)
 * block: whole lines of a JSON Lines file (each ending in '\n', the file's
 * last may not); '\r's before a '\n' are not part of the row (as the CLI).
 * tools_error: None or (kind, message) of the tool_use template's compile
 * error; defines: a list of (key, JSON text) as bytes, set on every row. */
static PyObject *sp_format_rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11 || !PyBytes_Check(args[0]) || !PyList_Check(args[9])) {
        PyErr_SetString(PyExc_TypeError, "format_rows(block: bytes, plain, with_tools, tools_error, options, "
                                         "limits, raw, spans, agp, defines: list, threads)");
        return NULL;
    }
    JsonJob d;
    memset(&d, 0, sizeof d);
    cf_error tools_error;
    d.plain = PyLong_AsVoidPtr(args[1]);
    d.with_tools = args[2] == Py_None ? NULL : PyLong_AsVoidPtr(args[2]);
    if (args[3] != Py_None) {
        int kind;
        const char *msg;
        if (!PyArg_ParseTuple(args[3], "iy", &kind, &msg)) return NULL;
        memset(&tools_error, 0, sizeof tools_error);
        tools_error.kind = (cf_error_kind)kind;
        snprintf(tools_error.message, sizeof tools_error.message, "%s", msg);
        d.tools_error = &tools_error;
    }
    d.opt = PyLong_AsVoidPtr(args[4]);
    d.lim = args[5] == Py_None ? NULL : PyLong_AsVoidPtr(args[5]);
    d.raw = PyObject_IsTrue(args[6]) == 1;
    d.spans = PyObject_IsTrue(args[7]) == 1;
    d.agp = PyObject_IsTrue(args[8]) == 1;
    long threads = PyLong_AsLong(args[10]);
    if (PyErr_Occurred()) return NULL;
    if (!d.plain || threads < 1 || threads > 256 || PyList_GET_SIZE(args[9]) > MAX_DEFINES) {
        PyErr_SetString(PyExc_ValueError, "format_rows: no template, threads outside 1..256 or too many defines");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(args[9]); k++) {
        Py_ssize_t n;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(args[9], k), "yy#", &d.define_key[k], &d.define_json[k], &n))
            return NULL;
        d.define_len[k] = (size_t)n;
        d.ndefines++;
    }
    const char *p = PyBytes_AS_STRING(args[0]);
    size_t len = (size_t)PyBytes_GET_SIZE(args[0]), nrows = 0;
    for (size_t i = 0; i < len; i++) nrows += p[i] == '\n';
    if (len && p[len - 1] != '\n') nrows++;
    JsonRow *rows = calloc(nrows ? nrows : 1, sizeof *rows);
    if (!rows) return PyErr_NoMemory();
    for (size_t i = 0, at = 0; i < nrows; i++) {
        const char *nl = memchr(p + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - p) : len, e = end;
        while (e > at && p[e - 1] == '\r') e--;
        rows[i].line = p + at;
        rows[i].len = e - at;
        at = end + 1;
    }
    JsonWindow jw;
    memset(&jw, 0, sizeof jw);
    jw.win.row = json_row;
    jw.win.nrows = nrows;
    jw.job = &d;
    jw.rows = rows;
    if (nrows < (size_t)threads * 4) threads = (long)(nrows / 4 + 1);
    /* the bytes object is held by the caller; the rows point into it */
    Py_BEGIN_ALLOW_THREADS
    Pool pool;
    pool_start(&pool, (unsigned)threads, false);
    pool_publish(&pool, &jw.win);
    pool_finish(&pool, &jw.win);
    pool_stop(&pool, NULL, 0);
    Py_END_ALLOW_THREADS
    size_t total = 0, errors = 0;
    Py_ssize_t first_error = -1;
    for (size_t i = 0; i < nrows; i++) {
        total += rows[i].out ? rows[i].out_len : sizeof OOM_ROW - 1;
        if (rows[i].error) {
            errors++;
            if (first_error < 0) first_error = (Py_ssize_t)i;
        }
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (out) {
        char *o = PyBytes_AS_STRING(out);
        for (size_t i = 0; i < nrows; i++) {
            const char *s = rows[i].out ? rows[i].out : OOM_ROW;
            size_t n = rows[i].out ? rows[i].out_len : sizeof OOM_ROW - 1;
            memcpy(o, s, n);
            o += n;
        }
    }
    for (size_t i = 0; i < nrows; i++) free(rows[i].out);
    free(rows);
    if (!out) return NULL;
    return Py_BuildValue("(Nnnn)", out, (Py_ssize_t)nrows, (Py_ssize_t)errors, first_error);
}

static PyMethodDef methods[] = {
    {"init", sp_init, METH_O, "init(library_path) -> bool"},
    {"render", (PyCFunction)(void (*)(void))sp_render, METH_FASTCALL,
     "render(template_ptr, options_ptr, chat, variables) -> str | error tuple | DECLINED"},
    {"chat", (PyCFunction)(void (*)(void))sp_chat, METH_FASTCALL,
     "chat(template_ptr, options_ptr, kwargs, messages, tools, documents, add_generation_prompt, "
     "continue_final_message) -> str | error tuple | DECLINED"},
    {"register", (PyCFunction)(void (*)(void))sp_register, METH_FASTCALL,
     "register(text, template, template_ptr, options_ptr): a text template apply_chat_template may take"},
    {"setup", (PyCFunction)(void (*)(void))sp_setup, METH_FASTCALL, "setup(general_apply, raise_native)"},
    {"render_method", (PyCFunction)(void (*)(void))sp_render_method, METH_FASTCALL,
     "render_method(Template, general_render) -> Template.render as a C method"},
    {"apply_chat_template", (PyCFunction)(void (*)(void))sp_apply, METH_FASTCALL | METH_KEYWORDS,
     "apply_chat_template(template, conversation, tools=None, documents=None, chat_template=None, "
     "add_generation_prompt=False, continue_final_message=False, tokenize=False, padding=False, truncation=False, "
     "max_length=None, return_tensors=None, return_dict=False, return_assistant_tokens_mask=False, "
     "tokenizer_kwargs=None, tokenizer=None, **kwargs)\n--\n\n"
     "chatfmt.apply_chat_template: see template.py; its usual calls are answered here."},
    {"patched", (PyCFunction)(void (*)(void))sp_patched, METH_FASTCALL,
     "patched(tokenizer, general, tokenize_default) -> the patched apply_chat_template (chatfmt.patch)"},
    {"render_batch", (PyCFunction)(void (*)(void))sp_render_batch, METH_FASTCALL,
     "render_batch(rows, common, plain_ptr, tools_ptr, tools_error, options_ptr, chat, threads, make_error) -> list"},
    {"batch_stats", sp_batch_stats, METH_O,
     "batch_stats(on) -> figures of the last render_batch call measured (or None); measure the next calls or not"},
    {"format_rows", (PyCFunction)(void (*)(void))sp_format_rows, METH_FASTCALL,
     "format_rows(block, plain_ptr, tools_ptr, tools_error, options_ptr, limits_ptr, raw, spans, agp, defines, "
     "threads) -> (bytes, rows, errors, first_error_row)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__speedups(void) {
    if (PyType_Ready(&PatchedType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    declined = PyObject_CallObject((PyObject *)&PyBaseObject_Type, NULL);   /* a fresh object(): no answer is it */
    if (!declined || PyModule_AddObject(m, "DECLINED", new_ref(declined)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
