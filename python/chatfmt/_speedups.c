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
#include <string.h>
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
    cf_builder_item *it = next_item(w, CF_ITEM_STR);
    it->n = (size_t)n;
    it->u.s = s;
    return true;
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
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        while (PyDict_Next(o, &pos, &k, &v)) {
            if (Py_TYPE(k) != &PyUnicode_Type || !push_unicode(w, k) || !walk(w, v, depth + 1)) return false;
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
static PyObject *param_names[6];     /* template, messages, tools, documents, add_generation_prompt, continue_final_message */

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
    static const char *const names[6] = {"template", "messages", "tools", "documents", "add_generation_prompt",
                                         "continue_final_message"};
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "setup(general_apply, raise_native)");
        return NULL;
    }
    for (int i = 0; i < 6; i++)
        if (!param_names[i] && !(param_names[i] = PyUnicode_InternFromString(names[i]))) return NULL;
    if (!known && !(known = PyDict_New())) return NULL;
    Py_XSETREF(general_apply, new_ref(args[0]));
    Py_XSETREF(raise_native, new_ref(args[1]));
    Py_RETURN_NONE;
}

/* Which parameter a keyword names (-1: a template variable), among
 * param_names[first..5]. Keywords from a ** dict are seldom the interned
 * names: compared by length and bytes. */
static int param_index(PyObject *name, int first) {
    for (int i = first; i < 6; i++)
        if (name == param_names[i]) return i;
    Py_ssize_t n = PyUnicode_GET_LENGTH(name);
    if (!PyUnicode_IS_COMPACT_ASCII(name)) return -1;   /* the six are ASCII */
    const char *s = (const char *)PyUnicode_DATA(name);
    for (int i = first; i < 6; i++)
        if (PyUnicode_GET_LENGTH(param_names[i]) == n && memcmp(PyUnicode_DATA(param_names[i]), s, (size_t)n) == 0)
            return i;
    return -1;
}

/* One call of apply_chat_template (first = 0) or of Template.render
 * (first = 1: the template is the instance), its arguments sorted out. */
typedef struct ChatCall {
    PyObject *const *args;
    Py_ssize_t nargs, nkw, nvars;
    PyObject *kwnames;
    PyObject *param[6];   /* template, messages, tools, documents, add_generation_prompt, continue_final_message */
    signed char kw_param[MAX_KEYWORDS];
} ChatCall;

/* False when the general function must answer: arguments it would reject
 * (it raises Python's TypeError), or not one conversation. */
static bool parse_chat_call(ChatCall *c, PyObject *const *args, size_t nargsf, PyObject *kwnames, int first) {
    c->args = args;
    c->nargs = PyVectorcall_NARGS(nargsf);
    c->nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    c->kwnames = kwnames;
    c->nvars = 0;
    PyObject *defaults[6] = {NULL, NULL, Py_None, Py_None, Py_False, Py_False};
    memcpy(c->param, defaults, sizeof defaults);
    bool given[6] = {false};
    if (!param_names[0] || c->nargs > 6 - first || c->nkw > MAX_KEYWORDS) return false;
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
    if (!given[1] || (first == 0 && !given[0])) return false;
    PyObject *messages = c->param[1];
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
    for (int i = 0; walked && i < 5; i++)
        walked = walk(&w, param_names[1 + i], 1) && walk(&w, c->param[1 + i], 1);
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
    "render($self, messages, tools=None, documents=None, add_generation_prompt=False, continue_final_message=False, "
    "**kwargs)\n--\n\n"
    "Render a conversation as transformers' apply_chat_template(..., tokenize=False) does; other keyword "
    "arguments become template variables (enable_thinking=False, bos_token=..., ...)."};

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
     "apply_chat_template(template, messages, tools=None, documents=None, add_generation_prompt=False, "
     "continue_final_message=False, **kwargs)\n--\n\n"
     "chatfmt.apply_chat_template: see template.py; its usual calls are answered here."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", NULL, -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    declined = PyObject_CallObject((PyObject *)&PyBaseObject_Type, NULL);   /* a fresh object(): no answer is it */
    if (!declined || PyModule_AddObject(m, "DECLINED", new_ref(declined)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
