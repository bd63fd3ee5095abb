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
#include "chatfmt.h"

static struct {
    cf_builder *(*builder_new)(const cf_limits *);
    void (*feed)(cf_builder *, const cf_builder_item *, size_t);
    bool (*failed)(const cf_builder *);
    cf_context *(*finish)(cf_builder *, cf_error *);
    void (*builder_free)(cf_builder *);
    bool (*render_chat)(const cf_template *, const cf_context *, const cf_render_options *, cf_result *, cf_error *);
    bool (*render)(const cf_template *, const cf_context *, const cf_render_options *, cf_result *, cf_error *);
    void (*result_free)(cf_result *);
    void (*context_free)(cf_context *);
} lib;

static PyObject *declined;   /* returned when the data is outside the subset */

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
    cf_builder *b;
    size_t n;
    cf_builder_item items[CHUNK];
} Walk;

static inline cf_builder_item *next_item(Walk *w, cf_builder_item_kind kind) {
    if (w->n == CHUNK) {
        lib.feed(w->b, w->items, CHUNK);
        w->n = 0;
    }
    cf_builder_item *it = &w->items[w->n++];
    it->kind = kind;
    return it;
}

/* Push one object; false when it is outside the subset (nothing raised). */
static bool walk(Walk *w, PyObject *o, int depth) {
    PyTypeObject *t = Py_TYPE(o);
    if (t == &PyUnicode_Type) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(o, &n);   /* ASCII: no copy */
        if (!s) {   /* lone surrogates */
            PyErr_Clear();
            return false;
        }
        cf_builder_item *it = next_item(w, CF_ITEM_STR);
        it->n = (size_t)n;
        it->u.s = s;
        return true;
    }
    if (t == &PyDict_Type) {
        if (depth >= MAX_DEPTH) return false;
        next_item(w, CF_ITEM_DICT)->n = (size_t)PyDict_GET_SIZE(o);
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(o, &pos, &k, &v)) {
            if (Py_TYPE(k) != &PyUnicode_Type || !walk(w, k, depth + 1) || !walk(w, v, depth + 1)) return false;
        }
        return true;
    }
    if (t == &PyList_Type || t == &PyTuple_Type) {
        if (depth >= MAX_DEPTH) return false;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        PyObject **items = PySequence_Fast_ITEMS(o);
        next_item(w, CF_ITEM_LIST)->n = (size_t)n;
        for (Py_ssize_t i = 0; i < n; i++)
            if (!walk(w, items[i], depth + 1)) return false;
        return true;
    }
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
    SYM(render_chat, "cf_render_chat");
    SYM(render, "cf_render");
    SYM(result_free, "cf_result_free");
    SYM(context_free, "cf_context_free");
#undef SYM
    Py_RETURN_TRUE;
}

/* render(template, options, chat, variables, error) -> str | None | DECLINED
 * template/options/error: addresses of the ctypes cf_template, cf_render_options
 * and cf_error. None: the render failed and *error says why. DECLINED: the
 * variables are outside the subset, or the builder refused them (a limit):
 * the caller renders the general way, which reports exactly as before. */
static PyObject *sp_render(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "render() takes 5 arguments");
        return NULL;
    }
    const cf_template *t = PyLong_AsVoidPtr(args[0]);
    const cf_render_options *opt = PyLong_AsVoidPtr(args[1]);
    int chat = PyObject_IsTrue(args[2]);
    cf_error *err = PyLong_AsVoidPtr(args[4]);
    if (PyErr_Occurred()) return NULL;
    if (!t || !err || Py_TYPE(args[3]) != &PyDict_Type) return new_ref(declined);
    cf_builder *b = lib.builder_new(opt ? opt->limits : NULL);
    if (!b) return PyErr_NoMemory();
    Walk w;
    w.b = b;
    w.n = 0;
    bool walked = walk(&w, args[3], 0);
    if (walked && w.n) lib.feed(b, w.items, w.n);
    if (!walked || lib.failed(b)) {
        lib.builder_free(b);
        return new_ref(declined);
    }
    cf_context *ctx = lib.finish(b, err);
    if (!ctx) return new_ref(declined);
    cf_result res;
    bool ok;
    /* The render touches no Python object: other threads run meanwhile (a
     * compiled template renders from any number of threads at once). */
    Py_BEGIN_ALLOW_THREADS
    ok = (chat ? lib.render_chat : lib.render)(t, ctx, opt, &res, err);
    lib.context_free(ctx);
    Py_END_ALLOW_THREADS
    if (!ok) Py_RETURN_NONE;
    PyObject *text = PyUnicode_DecodeUTF8(res.text, (Py_ssize_t)res.len, NULL);
    lib.result_free(&res);
    return text;
}

static PyMethodDef methods[] = {
    {"init", sp_init, METH_O, "init(library_path) -> bool"},
    {"render", (PyCFunction)(void (*)(void))sp_render, METH_FASTCALL,
     "render(template_ptr, options_ptr, chat, variables, error_ptr) -> str | None | DECLINED"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    declined = PyUnicode_FromString("chatfmt._speedups.DECLINED");
    if (!declined || PyModule_AddObject(m, "DECLINED", new_ref(declined)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
