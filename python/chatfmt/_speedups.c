/* _speedups.c — the binding's render path in C: the Python variables are
 * walked straight into a cf_builder (no marshal or JSON text), rendered, and
 * the output decoded, in one call from Python. It uses the very libchatfmt
 * that ctypes loaded (resolved with dlopen/dlsym by path), so templates and
 * options made through ctypes are valid here. Data outside the JSON-like
 * subset (subclasses, non-str keys, NaN, ints beyond int64, lone surrogates,
 * very deep or cyclic data) is declined: template.py then takes its general
 * path, which decides what such data becomes, so results never depend on
 * which path ran. Optional: without it the binding works the same, slower.
 * Here: the module, single renders, apply_chat_template and patch in C, and
 * format_jsonl; render_batch is in _render_batch.c. */
#include "_speedups.h"
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include "_batch_pool.h"
#include "_text_out.h"

SpLib lib;

PyObject *declined;
cf_builder_item_kind ascii_kind = CF_ITEM_STR;
cf_builder_item_kind key_kind = CF_ITEM_STR;
cf_builder_item_kind utf8_kind = CF_ITEM_STR;

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

bool push_scalar(Walk *w, PyObject *o, PyTypeObject *t) {
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

bool walk_other(Walk *w, PyObject *o, int depth) {
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
    /* A library that knows CF_ITEM_ASCII (CF_ITEM_KEY, CF_ITEM_UTF8)
     * builds this; an older one fails it. */
    ascii_kind = probe_kind(CF_ITEM_ASCII) ? CF_ITEM_ASCII : CF_ITEM_STR;
    key_kind = probe_kind(CF_ITEM_KEY) ? CF_ITEM_KEY : ascii_kind;
    utf8_kind = probe_kind(CF_ITEM_UTF8) ? CF_ITEM_UTF8 : CF_ITEM_STR;
    if (PyErr_Occurred()) return NULL;
    thread_builder_setup();
    pick_text_kernels();
    Py_RETURN_TRUE;
}

/* The render's error as a tuple (kind, message, line, column, offset), for
 * template.py to raise as the general path does. */
PyObject *error_tuple(const cf_error *err) {
    PyObject *msg = PyUnicode_DecodeUTF8(err->message, (Py_ssize_t)strlen(err->message), "replace");
    if (!msg) return NULL;
    return Py_BuildValue("(iNiin)", (int)err->kind, msg, err->line, err->column, (Py_ssize_t)err->offset);
}

/* The output as a str. Prompts are mostly ASCII: known so from the
 * render (cf_result.nchars, see result_known_ascii), or checked 32 bytes a
 * step, and copied into a new ASCII str, which costs a third of the
 * decoder's pass; other text is decoded. */
PyObject *text_to_str(const char *s, size_t n, bool known_ascii) {
    if (known_ascii) {
        PyObject *u = PyUnicode_New((Py_ssize_t)n, 127);
        if (u) memcpy(PyUnicode_1BYTE_DATA(u), s, n);
        return u;
    }
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
    res.nchars = 0;   /* (a library without the field leaves it: nothing known) */
    bool ok;
    /* The render touches no Python object: other threads run meanwhile (a
     * compiled template renders from any number of threads at once). */
    Py_BEGIN_ALLOW_THREADS
    ok = (chat ? lib.render_chat : lib.render)(t, ctx, opt, &res, &err);
    lib.context_free(ctx);
    Py_END_ALLOW_THREADS
    if (!ok) return error_tuple(&err);
    PyObject *text = text_to_str(res.text, res.len, result_known_ascii(&res));
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

/* known_ascii_check(on) -> (claims, wrong): the outputs the library said
 * were ASCII while checks were on, since the last call, and of them those
 * that were not; checks them from now on or not (a test mode: each claim
 * is scanned all the same, and a wrong one is not believed). */
static PyObject *sp_known_ascii_check(PyObject *self, PyObject *arg) {
    int on = PyObject_IsTrue(arg);
    if (on < 0) return NULL;
    atomic_store(&check_ascii_claims, on != 0);
    size_t claims = atomic_exchange(&ascii_claims, 0), wrong = atomic_exchange(&ascii_claims_wrong, 0);
    return Py_BuildValue("(nn)", (Py_ssize_t)claims, (Py_ssize_t)wrong);
}

/* stream_texts_above(bytes) -> the bytes before: render_batch writes a
 * call's texts around the cache when they come to more than this (the
 * last-level cache's size unless set: a test knob, 0 streams every text;
 * a value below 0 gives the size back as found at init). */
static PyObject *sp_stream_texts_above(PyObject *self, PyObject *arg) {
    long long bytes = PyLong_AsLongLong(arg);
    if (bytes == -1 && PyErr_Occurred()) return NULL;
    size_t before = stream_texts_above;
    if (bytes < 0) pick_text_kernels();
    else stream_texts_above = (size_t)bytes;
    return PyLong_FromSize_t(before);
}

/* premade_miss(mode) -> the mode before: 1, render_batch takes every str
 * it made before its row rendered for the wrong form, and makes each
 * text's str the usual way; 2, it makes each one ASCII as long as the
 * row's last output in UTF-8, which an output that is not ASCII finds
 * wrong as it is copied; 3, each one in the next str form up (ASCII to
 * Latin-1 to 2-byte to 4-byte to Latin-1) and as long as the last output;
 * 4, each one a character short; 0, none (test modes for those ways). */
static PyObject *sp_premade_miss(PyObject *self, PyObject *arg) {
    long mode = PyLong_AsLong(arg);
    if (mode == -1 && PyErr_Occurred()) return NULL;
    if (mode < 0 || mode > 4) {
        PyErr_SetString(PyExc_ValueError, "premade_miss: 0 to 4");
        return NULL;
    }
    long before = premade_missed;
    premade_missed = (int)mode;
    return PyLong_FromLong(before);
}

/* give_back_mode(mode) -> the mode before: how render_batch gives a
 * spent render buffer back (0, into the cache of the thread that renders
 * its slot's next row; 1, to the thread that rendered it, the default; 2,
 * every one through the stack of the thread that rendered it, its own
 * too: a test mode for that way, in calls of 2 threads or more). */
static PyObject *sp_give_back_mode(PyObject *self, PyObject *arg) {
    long mode = PyLong_AsLong(arg);
    if (mode == -1 && PyErr_Occurred()) return NULL;
    if (mode < GIVE_BACK_HERE || mode > GIVE_BACK_EVERY) {
        PyErr_SetString(PyExc_ValueError, "give_back_mode: 0, 1 or 2");
        return NULL;
    }
    long before = atomic_exchange_explicit(&give_back_mode, (int)mode, memory_order_relaxed);
    return PyLong_FromLong(before);
}

/* claim_rows(n) -> the number before: rows a thread of a batch claims at
 * once (1 to CLAIM_ROWS_MAX; a knob to measure with). */
static PyObject *sp_claim_rows(PyObject *self, PyObject *arg) {
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 1 || n > CLAIM_ROWS_MAX) {
        PyErr_SetString(PyExc_ValueError, "claim_rows: 1 to 64");
        return NULL;
    }
    long before = (long)atomic_exchange_explicit(&claim_rows, (unsigned)n, memory_order_relaxed);
    return PyLong_FromLong(before);
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
    {"known_ascii_check", sp_known_ascii_check, METH_O,
     "known_ascii_check(on) -> (claims, wrong): outputs said ASCII, and wrongly, since the last call (a test mode)"},
    {"stream_texts_above", sp_stream_texts_above, METH_O,
     "stream_texts_above(bytes) -> bytes before: texts of calls bigger than this go around the cache (a test knob)"},
    {"premade_miss", sp_premade_miss, METH_O,
     "premade_miss(mode) -> before: str objects made before their rows render left unused (1), made ASCII (2), "
     "a form wider (3) or a character short (4)"},
    {"claim_rows", sp_claim_rows, METH_O, "claim_rows(n) -> before: rows a batch thread claims at once (a knob)"},
    {"give_back_mode", sp_give_back_mode, METH_O,
     "give_back_mode(mode) -> before: spent render buffers given back here (0), to their renderer (1), every one (2)"},
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
