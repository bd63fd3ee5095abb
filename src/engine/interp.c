/* interp.c — evaluates the AST with Jinja2's runtime semantics.
 *
 * Scoping follows Jinja2's compiled code: the template body writes to the
 * top-level slots (one per symbol, seeded from the variables); a `for` body,
 * macro body, call-block body and `with` body each get a Frame whose sets
 * stay local — a loop body's frame is fresh for every iteration, so a set
 * inside a loop never survives to the next iteration or the outside
 * (exactly what Jinja2 prints). Names resolve innermost frame first, then
 * the top-level slots, then builtin globals, else Undefined.
 *
 * Python's operators over the values (arithmetic, `in`, slicing) are in
 * operators.c, the `loop` object's generic face in loop_object.c; the state
 * this file shares with that one (frames, Interp, Loop) is interp_internal.h. */
#include "interp_internal.h"
#include "operators.h"
#include "unicode.h"
#include "lexer.h"
#include "bigint.h"
#include "complex.h"
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <limits.h>
#include <stdio.h>

static Ctl exec_body(Interp *I, const NodeList *body, Frame *f);

/* "now" pinned by the options, else by CHATFMT_NOW: looked up only when a
 * template asks for the time (getenv scans the environment). */
bool interp_autoescape(Rt *rt) { return rt->interp && INTERP(rt)->autoescape; }

const char *interp_now(Rt *rt) {
    const char *now = INTERP(rt)->now;
    return now ? now : getenv("CHATFMT_NOW");
}

/* ---- frames ---- */
enum { SYM_UNBOUND = INT_MIN };   /* (not -1: a fill of one byte value becomes a memset call) */

static ALWAYS_INLINE Frame *frame_new(Interp *I, Frame *parent) {
    Frame *f = rt_alloc(I->rt, sizeof(Frame));
    f->parent = parent;
    f->n = 0;
    f->cap = FRAME_INLINE;
    f->nslots = 0;
    f->scope = NULL;
    f->syms = f->syms_inline;
    f->vals = f->vals_inline;
    return f;
}

/* A frame with the layout of scope (an N_FOR or N_MACRO): its slots all
 * unbound. */
static ALWAYS_INLINE Frame *frame_new_layout(Interp *I, Frame *parent, const Node *scope) {
    Frame *f = frame_new(I, parent);
    int nslots = scope->nslots;
    if (nslots > FRAME_INLINE) {
        f->syms = rt_alloc(I->rt, (size_t)nslots * sizeof(int));
        f->vals = rt_alloc(I->rt, (size_t)nslots * sizeof(Value));
        f->cap = nslots;
    }
    for (int i = 0; i < nslots; i++) f->syms[i] = SYM_UNBOUND;
    f->n = f->nslots = nslots;
    f->scope = scope;
    return f;
}

/* A layout frame back to its slots alone, those from `from` on unbound
 * (a loop's next iteration). */
static inline void frame_unbind(Frame *f, int from) {
    for (int k = from; k < f->nslots; k++) f->syms[k] = SYM_UNBOUND;
    f->n = f->nslots;
}

static NOINLINE void frame_grow(Interp *I, Frame *f) {
    int nc = f->cap * 2;
    f->syms = rt_realloc(I->rt, f->syms, (size_t)f->cap * sizeof(int), (size_t)nc * sizeof(int));
    f->vals = rt_realloc(I->rt, f->vals, (size_t)f->cap * sizeof(Value), (size_t)nc * sizeof(Value));
    f->cap = nc;
}

static inline void frame_set(Interp *I, Frame *f, int sym, Value v) {
    for (int i = 0; i < f->n; i++)
        if (f->syms[i] == sym) { f->vals[i] = v; return; }
    if (f->n == f->cap) frame_grow(I, f);
    f->syms[f->n] = sym;
    f->vals[f->n] = v;
    f->n++;
}

/* A frame's names that start missing (FrameInit), bound to their Undefined. */
static NOINLINE void frame_start_missing(Interp *I, Frame *f, int n, const int *syms, const uint8_t *slots) {
    for (int i = 0; i < n; i++) {
        int sym = syms[i];
        unsigned slot = slots ? slots[i] : SLOT_NONE;
        if (slot < (unsigned)f->nslots && (f->syms[slot] == sym || (f->syms[slot] == SYM_UNBOUND && f->n == f->nslots))) {
            f->syms[slot] = sym;
            f->vals[slot] = I->t->sym_undef[sym];
        } else {
            frame_set(I, f, sym, I->t->sym_undef[sym]);
        }
    }
}
static ALWAYS_INLINE void frame_start(Interp *I, Frame *f, const Node *maker) {
    const FrameInit *fi = maker->init;
    if (fi && fi->n) frame_start_missing(I, f, fi->n, fi->syms, fi->slots);
}
/* frame_start for a loop's iteration, whose body most often starts one
 * name missing (`content`, set in the body): that one bound in place when
 * frame_start_missing would bind it in its slot. */
static ALWAYS_INLINE void frame_start_iteration(Interp *I, Frame *f, const FrameInit *fi) {
    if (!fi || !fi->n) return;
    if (fi->n == 1 && fi->slots) {
        int sym = fi->syms[0];
        unsigned slot = fi->slots[0];
        if (slot < (unsigned)f->nslots && (f->syms[slot] == sym || (f->syms[slot] == SYM_UNBOUND && f->n == f->nslots))) {
            f->syms[slot] = sym;
            f->vals[slot] = I->t->sym_undef[sym];
            return;
        }
    }
    frame_start_missing(I, f, fi->n, fi->syms, fi->slots);
}

static void assign_sym(Interp *I, Frame *f, int sym, Value v) {
    if (f) frame_set(I, f, sym, v);
    else I->globals[sym] = v;
}

/* `set x = v` (x: an N_NAME target) into its slot when the frame has the
 * layout the parser gave x: the slot holds x, or is unbound while nothing
 * was added past the slots (so x is nowhere else in the frame). Otherwise
 * as assign_sym. Either way a frame holds a name at most once. */
static ALWAYS_INLINE void bind_target(Interp *I, Frame *f, const Node *target, Value v) {
    int sym = target->sym;
    if (f) {
        unsigned slot = target->flag;
        if (f->scope == target->scope && slot < (unsigned)f->nslots &&
            (f->syms[slot] == sym || (f->syms[slot] == SYM_UNBOUND && f->n == f->nslots))) {
            f->syms[slot] = sym;
            f->vals[slot] = v;
            return;
        }
        frame_set(I, f, sym, v);
    } else {
        I->globals[sym] = v;
    }
}


/* A name's value from outside the template: chat variable, caller
 * variable, default (special token), builtin global, else Undefined. */
static ALWAYS_INLINE Value input_value(Interp *I, int sym) {
    const RenderInput *in = I->in;
    const struct cf_template *t = I->t;
    Str *name = t->syms[sym];
    Value v;
    if (sym == t->sym_self)   /* Jinja2 binds `self` itself, over any variable of that name */
        return v_object(I->rt, VT_OBJECT, &TEMPLATE_REF_TYPE, NULL);
    if (in->chat_mode && t->sym_chat[sym] >= 0) {
        v = in->chat[t->sym_chat[sym]];
        if (v.type == VT_MISSING) goto builtin;   /* hidden */
        return v;
    }
    /* symbol names are frozen (hash cached): the keyed lookup only reads them */
    if (in->vars && dict_get_key(in->vars, name, &v)) return v;
    if (in->defaults && dict_get_key(in->defaults, name, &v)) return v;
builtin:
    v = t->sym_builtin[sym];
    return v.type == VT_MISSING ? t->sym_undef[sym] : v;
}

/* A top-level name's value on first use, cached: its Undefined when the
 * top level sets it before reading it (scope.c: Jinja2 then never looks
 * outside), else input_value's answer, from the name's SymInput. */
NOINLINE Value resolve_global(Interp *I, int sym) {
    const SymInput *si = &I->t->sym_input[sym];
    const RenderInput *in = I->in;
    Value v;
    if (si->how != SI_INPUT) {
        v = si->how == SI_UNDEF ? si->fallback : input_value(I, sym);
    } else if (in->chat_mode && si->chat >= 0) {
        v = in->chat[si->chat];
        if (v.type == VT_MISSING) v = si->fallback;   /* hidden */
    } else if (!(in->vars && dict_get_key(in->vars, si->name, &v)) &&
               !(in->defaults && dict_get_key(in->defaults, si->name, &v))) {
        v = si->fallback;
    }
    return I->globals[sym] = v;
}

/* Before a chat render runs: the chat variables the template reads bound
 * at the top level, as their first read would resolve them (a top-level
 * set or a frame's binding hides them as it would a resolved name). */
static void bind_chat_inputs(Interp *I) {
    const struct cf_template *t = I->t;
    const RenderInput *in = I->in;
    if (!in->chat_mode) return;
    for (int k = 0; k < t->nchat_inputs; k++) {
        Value v = in->chat[t->chat_inputs[k].chat];
        if (v.type != VT_MISSING) I->globals[t->chat_inputs[k].sym] = v;   /* (hidden: resolve_global) */
    }
}




static Value lookup(Interp *I, Frame *f, int sym) { return lookup_inline(I, f, sym); }

/* A binding a frame started with (FrameInit: "missing" in Jinja2) that
 * nothing set since. (An Undefined of that very name set there on purpose
 * looks the same: Jinja2 would pass that one on to a block.) */
static bool still_missing(const Interp *I, int sym, Value v) {
    const Value u = I->t->sym_undef[sym];
    return v.type == VT_UNDEFINED && v.u.s == u.u.s && v.iter == u.iter;
}

/* A name inside a {% block %} (NAME_IN_BLOCK). Jinja2 compiles a block to a
 * function of the render's context: the names the block's own frames bind,
 * then (scoped: the enclosing frames' bindings, then) the top level's sets
 * so far, then the render's variables. What the enclosing frames or the top
 * level hold as still missing is not in that context. */
NOINLINE Value lookup_in_block(Interp *I, Frame *f, int sym) {
    bool outside = false;   /* past the innermost block's own frame */
    for (; f; f = f->parent) {
        for (int i = f->n - 1; i >= 0; i--)
            if (f->syms[i] == sym && !(outside && still_missing(I, sym, f->vals[i]))) return f->vals[i];
        if (f->scope && f->scope->kind == N_SCOPE_BLOCK) outside = true;
    }
    Value v = I->globals[sym];
    if (v.type != VT_MISSING && !still_missing(I, sym, v)) return v;
    return input_value(I, sym);
}




/* Constants and names are a third of all nodes: evaluated in place. */


/* ---- helpers ---- */

/* Where Jinja2 joins what a body yielded: its first item that is not a str
 * fails the join. */
static void join_check(Interp *I, const StrBuf *sb) {
    if (sb->bad_type)
        rt_throw(I->rt, CF_ERR_TYPE, "sequence item %zu: expected str instance, %s found", sb->bad_item,
                 sb->bad_type);
}

/* Render body into a string; *ctl (if given) receives a break/continue that
 * escaped the body (the caller then drops the text, as Jinja2 does). */
static Value capture_ctl(Interp *I, const NodeList *body, Frame *f, Ctl *ctl) {
    StrBuf buf, *saved = I->out;
    sb_init_lazy(I->rt, &buf);
    I->out = &buf;
    Ctl c = exec_body(I, body, f);
    I->out = saved;
    if (c == CTL_NONE) join_check(I, &buf);   /* (a break's text is dropped, not joined) */
    if (ctl) *ctl = c;
    Value v = sb_to_value(&buf);
    if (I->autoescape) v.flags |= VF_MARKUP;
    return v;
}

static Value capture(Interp *I, const NodeList *body, Frame *f) { return capture_ctl(I, body, f, NULL); }


COLD _Noreturn void stack_exhausted(Interp *I) {
    rt_throw(I->rt, CF_ERR_LIMIT,
                 "nesting too deep: the render used more than %zu KiB of C stack (256 KiB + 8 KiB per recursion level; "
                 "raise it with --max-recursion / cf_limits.max_recursion)",
                 I->stack_budget >> 10);
}

static void depth_enter(Interp *I) {
    if (++I->depth > (int)I->rt->lim.max_recursion)
        rt_throw(I->rt, CF_ERR_LIMIT,
                 "recursion deeper than %u (macro / loop() / call nesting; raise it with --max-recursion / cf_limits.max_recursion)",
                 I->rt->lim.max_recursion);
}


bool interp_compare(Interp *I, uint8_t op, Value a, Value b) {
    if ((op == OP_EQ || op == OP_NE) && a.type == VT_STR && b.type == VT_STR)   /* role == 'user' */
        return strs_equal(a.u.s, b.u.s) == (op == OP_EQ);
    switch (op) {
    case OP_EQ: return v_equal(a, b);
    case OP_NE: return !v_equal(a, b);
    case OP_LT: return v_compare(I->rt, a, b, "<") < 0;
    case OP_LE: return v_compare(I->rt, a, b, "<=") <= 0;
    case OP_GT: return v_compare(I->rt, a, b, ">") > 0;
    case OP_GE: return v_compare(I->rt, a, b, ">=") >= 0;
    case OP_IN: return py_contains(I->rt, a, b);
    case OP_NOTIN: return !py_contains(I->rt, a, b);
    }
    return false;
}

/* ---- calls ---- */
typedef struct ArgBuf {
    Value pos_small[8];
    Value kw_small[8];
    Str *kwn_small[8];
    Args args;
} ArgBuf;

static NOINLINE void eval_args_general(Interp *I, const Node *call, Frame *f, ArgBuf *ab, Value extra_first,
                                       Str *extra_kw_name, Value extra_kw);
static ALWAYS_INLINE void eval_args(Interp *I, const Node *call, Frame *f, ArgBuf *ab, Value extra_first,
                                    Str *extra_kw_name, Value extra_kw) {
    if (!call->b && !call->c && !extra_kw_name && extra_first.type == VT_MISSING && call->items.n <= 8 &&
        call->kwvals.n <= 8) {   /* the usual call: no * or ** (content.strip(), x|tojson(indent=2)) */
        for (int i = 0; i < call->items.n; i++) ab->pos_small[i] = operand(I, call->items.v[i], f);
        for (int k = 0; k < call->kwvals.n; k++) {   /* (after the positionals, as Python) */
            ab->kwn_small[k] = call->kwnames[k];
            ab->kw_small[k] = operand(I, call->kwvals.v[k], f);
        }
        ab->args.npos = call->items.n;
        ab->args.pos = ab->pos_small;
        ab->args.nkw = call->kwvals.n;
        ab->args.kwnames = ab->kwn_small;
        ab->args.kwvals = ab->kw_small;
        return;
    }
    eval_args_general(I, call, f, ab, extra_first, extra_kw_name, extra_kw);
}

static NOINLINE void eval_args_general(Interp *I, const Node *call, Frame *f, ArgBuf *ab, Value extra_first,
                                       Str *extra_kw_name, Value extra_kw) {
    Rt *rt = I->rt;
    int npos = call->items.n + (extra_first.type != VT_MISSING ? 1 : 0);
    int nkw = call->kwvals.n + (extra_kw_name ? 1 : 0);
    List *star = NULL;
    Dict *dstar = NULL;
    if (call->b) {
        Value v = interp_eval(I, call->b, f);
        bool iterable = v.type == VT_LIST || v.type == VT_TUPLE || v.type == VT_DICT || v.type == VT_STR ||
                        v.type == VT_UNDEFINED || (v.type == VT_OBJECT && v.u.obj->type->iterate);
        if (!iterable) rt_throw(rt, CF_ERR_TYPE, "Value after * must be an iterable, not %s", v_type_name(v));
        star = v_iterate(rt, v);
        npos += (int)star->len;
    }
    if (call->c) {
        Value v = interp_eval(I, call->c, f);
        if (v.type != VT_DICT)   /* (a call goes through the sandbox's call(); a filter or test is named itself) */
            rt_throw(rt, CF_ERR_TYPE, "%sargument after ** must be a mapping, not %s",
                     call->kind == N_CALL ? "jinja2.sandbox.SandboxedEnvironment.call() " : "", v_type_name(v));
        dstar = v.u.dict;
        nkw += (int)dict_len(dstar);
    }
    Value *pos = npos <= 8 ? ab->pos_small : rt_alloc(rt, (size_t)npos * sizeof(Value));
    Value *kwv = nkw <= 8 ? ab->kw_small : rt_alloc(rt, (size_t)nkw * sizeof(Value));
    Str **kwn = nkw <= 8 ? ab->kwn_small : rt_alloc(rt, (size_t)nkw * sizeof(Str *));
    int p = 0, k = 0;
    if (extra_first.type != VT_MISSING) pos[p++] = extra_first;
    for (int i = 0; i < call->items.n; i++) pos[p++] = operand(I, call->items.v[i], f);
    if (star) for (size_t i = 0; i < star->len; i++) pos[p++] = star->items[i];
    for (int i = 0; i < call->kwvals.n; i++) {
        kwn[k] = call->kwnames[i];
        kwv[k++] = operand(I, call->kwvals.v[i], f);
    }
    if (dstar) {
        for (size_t i = 0; i < dict_len(dstar); i++) {
            Value key = dict_key_at(dstar, i);
            if (key.type != VT_STR) rt_throw(rt, CF_ERR_TYPE, "keywords must be strings");
            kwn[k] = key.u.s;
            kwv[k++] = dict_val_at(dstar, i);
        }
    }
    if (extra_kw_name) { kwn[k] = extra_kw_name; kwv[k++] = extra_kw; }
    ab->args.npos = p;
    ab->args.pos = pos;
    ab->args.nkw = k;
    ab->args.kwnames = kwn;
    ab->args.kwvals = kwv;
}

Value interp_call(Rt *rt, Value callee, const Args *args) {
    rt_step(rt, 1);
    if (callee.type == VT_UNDEFINED) v_undefined_fail(rt, callee);
    if ((callee.type == VT_CALLABLE || callee.type == VT_OBJECT) && callee.u.obj->type->call)
        return callee.u.obj->type->call(rt, callee.u.obj, args);
    rt_throw(rt, CF_ERR_TYPE, "'%s' object is not callable", v_type_name(callee));
}

static Value macro_call(Rt *rt, Obj *self, const Args *args);
/* What a macro call costs beyond interp_call's step: a frame, its bindings
 * and an output buffer, so a fan-out of calls that print nothing stops on
 * the step budget before it has filled memory with frames. */
enum { MACRO_CALL_STEPS = 8 };

static void macro_repr(Rt *rt, Obj *self, struct StrBuf *sb) {
    Macro *m = self->data;
    if (m->node->flag & MF_ANONYMOUS) sb_puts(sb, "<Macro anonymous>");
    else sb_printf(sb, "<Macro '%s'>", m->node->name->data);
}

static bool macro_getattr(Rt *rt, Obj *self, const char *name, size_t n, Value *out) {
    Macro *m = self->data;
    const Node *node = m->node;
#define IS(z) (n == sizeof(z) - 1 && memcmp(name, z, n) == 0)
    if (IS("name")) *out = node->flag & MF_ANONYMOUS ? v_none() : v_str_of(node->name);
    else if (IS("arguments")) {
        List *l = list_new(rt, (size_t)node->nparams);
        for (int i = 0; i < node->nparams; i++) list_push(rt, l, v_str_of(node->params[i]));
        *out = v_tuple_of(l);
    } else if (IS("catch_kwargs")) *out = v_bool(node->flag & MF_KWARGS);
    else if (IS("catch_varargs")) *out = v_bool(node->flag & MF_VARARGS);
    else if (IS("caller")) *out = v_bool(node->flag & MF_CALLER);
    else return false;
#undef IS
    return true;
}

static const ObjType MACRO_OBJ = {"Macro", macro_getattr, macro_call, macro_repr, NULL};

static Value make_macro(Interp *I, const Node *node, Frame *closure) {
    Macro *m = rt_alloc(I->rt, sizeof(Macro));
    m->node = node;
    m->closure = closure;
    m->caller = v_missing();
    return v_object(I->rt, VT_CALLABLE, &MACRO_OBJ, m);
}

/* The macro's body, its parameters bound in f; leaves the macro's level. */
static Value macro_body(Interp *I, const Node *node, Frame *f, int saved_line, int saved_col) {
    frame_start(I, f, node);
    Value out = capture(I, &node->body, f);
    I->depth--;
    I->rt->line = saved_line;
    I->rt->col = saved_col;
    return out;
}

static Value macro_call(Rt *rt, Obj *self, const Args *args) {
    Interp *I = INTERP(rt);
    Macro *m = self->data;
    const Node *node = m->node;
    /* as Jinja2 spells the name in its messages: repr(name), None for a caller */
    bool anonymous = node->flag & MF_ANONYMOUS;
    const char *q = anonymous ? "" : "'", *mname = anonymous ? "None" : node->name->data;
    int saved_line = rt->line, saved_col = rt->col;
    depth_enter(I);
    rt_step(rt, MACRO_CALL_STEPS);
    Frame *f = frame_new_layout(I, m->closure, node);   /* the parameters' slots first */
    int np = node->nparams;
    if (args->npos == np && !args->nkw && np <= FRAME_INLINE &&
        !(node->flag & (MF_VARARGS | MF_KWARGS | MF_CALLER))) {
        /* the usual call, visible_text(m.content): one positional per
         * parameter (their names are distinct: the parser saw to it),
         * nothing to match by name, no defaults to run */
        for (int j = 0; j < np; j++) {
            f->syms[j] = node->param_syms[j];
            f->vals[j] = args->pos[j];
        }
        return macro_body(I, node, f, saved_line, saved_col);
    }
    Value bound_small[8];
    Value *bound = np <= 8 ? bound_small : rt_alloc(rt, (size_t)np * sizeof(Value));
    memset(bound, 0, (size_t)(np <= 8 ? 8 : np) * sizeof(Value));
    /* Jinja2's Macro.__call__ step by step (its order decides which error a
     * bad call raises): positionals fill the first parameters; keywords fill
     * only the parameters after those; then the caller keyword; the other
     * keywords go to kwargs or are an error; then surplus positionals. */
    int npos = args->npos, nkw = args->nkw;
    int off = npos < np ? npos : np;
    for (int i = 0; i < off; i++) bound[i] = args->pos[i];
    bool used_small[16], *used = nkw <= 16 ? used_small : rt_alloc(rt, (size_t)nkw);
    if (nkw) memset(used, 0, (size_t)nkw);
    for (int j = off; j < np && nkw; j++) {
        for (int k = 0; k < nkw; k++) {
            if (used[k] || !str_eq(args->kwnames[k], node->params[j])) continue;
            bound[j] = args->kwvals[k];
            used[k] = true;
            break;
        }
    }
    /* (Jinja2 skips this when a parameter is named caller; the parser then
     * leaves MF_CALLER off) */
    Value caller = m->caller;
    if ((node->flag & MF_CALLER) && nkw) {
        for (int k = 0; k < nkw; k++) {
            if (used[k] || !str_eqz(args->kwnames[k], "caller")) continue;
            caller = args->kwvals[k];
            used[k] = true;
            break;
        }
        if (caller.type == VT_NONE) caller = v_missing();   /* caller=None: "No caller defined" */
    }
    Dict *kwargs = (node->flag & MF_KWARGS) ? dict_new(rt, 0) : NULL;
    int first_extra = -1;
    bool extra_caller = false;
    for (int k = 0; k < nkw; k++) {
        if (used[k]) continue;
        if (kwargs) {
            dict_set(rt, kwargs, v_str_of(args->kwnames[k]), args->kwvals[k]);
            continue;
        }
        if (first_extra < 0) first_extra = k;
        extra_caller |= str_eqz(args->kwnames[k], "caller");
    }
    if (extra_caller)
        rt_throw(rt, CF_ERR_TYPE, "macro %s%s%s was invoked with two values for the special caller argument. "
                 "This is most likely a bug.", q, mname, q);
    if (first_extra >= 0)
        rt_throw(rt, CF_ERR_TYPE, "macro %s%s%s takes no keyword argument '%s'", q, mname, q,
                 args->kwnames[first_extra]->data);
    List *varargs = NULL;
    if (node->flag & MF_VARARGS) {
        varargs = list_new(rt, npos > np ? (size_t)(npos - np) : 0);
        for (int i = np; i < npos; i++) list_push(rt, varargs, args->pos[i]);
    } else if (npos > np) {
        rt_throw(rt, CF_ERR_TYPE, "macro %s%s%s takes not more than %d argument(s)", q, mname, q, np);
    }
    /* Every parameter is local before any default runs, so a default that
     * names a parameter sees it (or Undefined), never an outer variable. */
    for (int j = 0; j < np; j++) {   /* (the layout's first slots, as many as it has) */
        Value v = bound[j].type != VT_MISSING ? bound[j] : I->t->sym_undef[node->param_syms[j]];   /* "'x' is undefined" */
        if (j < f->nslots) {
            f->syms[j] = node->param_syms[j];
            f->vals[j] = v;
        } else {
            frame_set(I, f, node->param_syms[j], v);
        }
    }
    for (int j = 0; j < np; j++) {
        if (bound[j].type != VT_MISSING) continue;
        const Node *def = node->items.v[j];
        if (def) {
            bound[j] = interp_eval(I, def, f);
        } else {
            bound[j] = v_undef(node->params[j]);   /* (its hint is written if it is read) */
            bound[j].iter = UNDEF_NOT_PROVIDED;
        }
        frame_set(I, f, node->param_syms[j], bound[j]);
    }
    if (node->flag & MF_VARARGS) frame_set(I, f, I->t->sym_varargs, v_tuple_of(varargs));
    if (node->flag & MF_KWARGS) frame_set(I, f, I->t->sym_kwargs, v_dict_of(kwargs));
    if (node->flag & MF_CALLER)
        frame_set(I, f, I->t->sym_caller, caller.type == VT_MISSING ? v_undef_msg(rt, "No caller defined") : caller);
    return macro_body(I, node, f, saved_line, saved_col);
}

/* visible_text(m.content): a macro called with one positional argument per
 * parameter and nothing else binds them straight into its frame (the steps
 * and checks of interp_call and macro_call, in their order). */
static bool macro_takes_positional(const Node *call, const Node *macro) {
    return call->items.n == macro->nparams && macro->nparams <= FRAME_INLINE &&
           !(macro->flag & (MF_VARARGS | MF_KWARGS | MF_CALLER));
}

/* The call's arguments, evaluated and bound in the macro's new frame. */
static ALWAYS_INLINE Frame *macro_enter_positional(Interp *I, const Node *call, Frame *f, const Macro *m) {
    const Node *node = m->node;
    int np = node->nparams;
    Value args[FRAME_INLINE];
    for (int j = 0; j < np; j++) args[j] = operand(I, call->items.v[j], f);
    set_pos(I, call);
    rt_step(I->rt, 1 + MACRO_CALL_STEPS);
    depth_enter(I);
    Frame *mf = frame_new_layout(I, m->closure, node);   /* the parameters' slots first */
    for (int j = 0; j < np; j++) {
        mf->syms[j] = node->param_syms[j];
        mf->vals[j] = args[j];
    }
    return mf;
}

static NOINLINE Value macro_call_positional(Interp *I, const Node *call, Frame *f, Value callee) {
    const Macro *m = callee.u.obj->data;
    if (!macro_takes_positional(call, m->node)) {
        ArgBuf ab;
        eval_args(I, call, f, &ab, v_missing(), NULL, v_missing());
        set_pos(I, call);
        return interp_call(I->rt, callee, &ab.args);
    }
    return macro_body(I, m->node, macro_enter_positional(I, call, f, m), call->line, call->col);
}

/* {{ visible_text(m.content) }} without escaping: the body writes straight
 * to the output rather than into a string that is then copied there (the
 * same bytes; a macro's output is one top-level write, as its result would
 * be). Not in a template with generation blocks: a span in the macro starts
 * where the top-level output was before the call. False, having done
 * nothing, when the name is not such a macro. */
static NOINLINE bool output_macro_call(Interp *I, const Node *call, Frame *f) {
    if (I->t->uses_generation) return false;
    Value callee = operand(I, call->a, f);   /* (a name: looking it up again costs nothing) */
    if (callee.type != VT_CALLABLE || callee.u.obj->type != &MACRO_OBJ) return false;
    const Macro *m = callee.u.obj->data;
    if (!macro_takes_positional(call, m->node)) return false;
    Frame *mf = macro_enter_positional(I, call, f, m);
    frame_start(I, mf, m->node);
    /* the body yields into a sequence of its own, joined as the macro returns */
    StrBuf *out = I->out;
    size_t items = out->items, bad_item = out->bad_item;
    const char *bad_type = out->bad_type;
    out->items = 0;
    out->bad_type = NULL;
    exec_body(I, &m->node->body, mf);   /* (a break or continue cannot leave a macro's body) */
    join_check(I, out);
    out->items = items + 1;
    out->bad_item = bad_item;
    out->bad_type = bad_type;
    I->depth--;
    set_pos(I, call);
    return true;
}

/* ---- loop object ---- */
static Ctl loop_run(Interp *I, const Node *node, Value iterable, Frame *outer, int depth0);

static inline void unpack_assign(Interp *I, const Node *target, Value v, Frame *f);
static ALWAYS_INLINE bool cond(Interp *I, const Node *n, Frame *f);

/* Tests source items until `need` are kept or none is left. */
NOINLINE void loop_fill(Interp *I, Loop *l, size_t need) {
    const Node *node = l->node;
    while (l->source && l->items->len < need) {
        if (l->next_source >= l->source->len) {
            l->source = NULL;
            break;
        }
        Value item = l->source->items[l->next_source++];
        rt_step(I->rt, 1);
        frame_unbind(l->test_frame, 0);
        unpack_assign(I, node->a, item, l->test_frame);
        if (cond(I, node->c, l->test_frame)) list_push(I->rt, l->items, item);
    }
}
Value loop_call(Rt *rt, Obj *self, const Args *args) {
    Loop *l = self->data;
    Interp *I = INTERP(rt);
    if (!(l->node->flag & 1))
        rt_throw(rt, CF_ERR_TYPE, "The loop must have the 'recursive' marker to be called recursively.");
    if (args->npos != 1 || args->nkw) rt_throw(rt, CF_ERR_TYPE, "loop() takes exactly one argument");
    depth_enter(I);
    StrBuf buf, *saved = I->out;
    sb_init_lazy(rt, &buf);
    I->out = &buf;
    loop_run(I, l->node, args->pos[0], l->outer, l->depth0 + 1);
    I->out = saved;
    I->depth--;
    Value v = sb_to_value(&buf);
    uint8_t mode = l->node->op;   /* ESC_*: Jinja2 returns markup where the loop escapes */
    if (mode == ESC_ON || (mode == ESC_RUNTIME && I->autoescape)) v.flags |= VF_MARKUP;
    return v;
}

/* ---- assignment ---- */
/* ns.attr = v: the one place a namespace changes, its cached value too.
 * An attribute it has is replaced in place (as dict_set would). */
static void namespace_set(Interp *I, Dict *d, Str *attr, Value v) {
    if (!d->index) {
        uint32_t h = attr->hash;   /* (attribute names are hashed when parsed) */
        for (DictEntry *e = d->entries, *end = e + d->len; e < end; e++) {
            if (e->key.type == VT_STR && (e->key.u.s == attr || (e->hash == h && strs_equal(e->key.u.s, attr)))) {
                e->val = v;
                d->json = NULL;
                goto cached;
            }
        }
    }
    dict_set(I->rt, d, v_str_of(attr), v);
cached:;
    AttrCacheEntry *c = attr_slot(I, d, attr);
    if (c->dict == d && c->attr == attr) c->v = v;
}

static void unpack_assign_slow(Interp *I, const Node *target, Value v, Frame *f);
static inline void unpack_assign(Interp *I, const Node *target, Value v, Frame *f) {
    if (target->kind == N_NAME) bind_target(I, f, target, v);
    else unpack_assign_slow(I, target, v, f);
}

static NOINLINE void unpack_assign_slow(Interp *I, const Node *target, Value v, Frame *f) {
    Rt *rt = I->rt;
    if (target->kind == N_NSREF) {
        Value ns = lookup(I, f, target->sym);
        if (ns.type == VT_NAMESPACE) {
            namespace_set(I, ns.u.dict, target->attr, v);
            return;
        }
        /* Only a block set gets here with another value (a set tested it
         * first): Jinja2 compiles it to Python's ns['attr'] = value. */
        if (v_is_list(ns)) rt_throw(rt, CF_ERR_TYPE, "list indices must be integers or slices, not str");
        if (ns.type == VT_DICT)   /* Python would change the dict: values are immutable here */
            rt_throw(rt, CF_ERR_SECURITY, "a block set cannot assign an item of a dict (values are immutable)");
        const char *type = v_type_name(ns);
        if (ns.type == VT_UNDEFINED && ns.iter == UNDEF_TEXT && ns.u.s == I->t->sym_undef[target->sym].u.s)
            type = "_MissingType";   /* the name itself is undefined: Jinja2 holds its `missing` marker */
        rt_throw(rt, CF_ERR_TYPE, "'%s' object does not support item assignment", type);
    }
    /* tuple target */
    switch ((ValueType)v.type) {
    case VT_NONE: case VT_BOOL: case VT_INT: case VT_BIGINT: case VT_FLOAT: case VT_CALLABLE: case VT_NAMESPACE:
        rt_throw(rt, CF_ERR_TYPE, "cannot unpack non-iterable %s object", v_type_name(v));
    default:
        if (v_is_complex(v)) rt_throw(rt, CF_ERR_TYPE, "cannot unpack non-iterable complex object");
        break;
    }
    List *items = v_iterate(rt, v);
    int want = target->items.n;
    if ((int64_t)items->len < want)
        rt_throw(rt, CF_ERR_VALUE, "not enough values to unpack (expected %d, got %zu)", want, items->len);
    if ((int64_t)items->len > want)
        rt_throw(rt, CF_ERR_VALUE, "too many values to unpack (expected %d)", want);
    for (int i = 0; i < want; i++) unpack_assign(I, target->items.v[i], items->items[i], f);
}

/* A filter/test unknown at compile time inside an `if` fails when run. */
static _Noreturn void unknown_filter_or_test(Interp *I, const Node *n) {
    rt_throw(I->rt, CF_ERR_TEMPLATE_RUNTIME, "No %s named '%s' found.", n->kind == N_FILTER ? "filter" : "test",
             n->attr->data);
}

/* Apply a filter chain; for filter/set blocks its innermost node has a == NULL. */
static Value eval_filter_args(Interp *I, const Node *n, Frame *f, Value operand_value);
static Value apply_filter(Interp *I, const Node *fnode, Value operand, Frame *f) {
    if (fnode->a) operand = apply_filter(I, fnode->a, operand, f);
    return eval_filter_args(I, fnode, f, operand);
}


/* ---- expressions ---- */
/* (value.c, v_undefined_has_dunder: the sandbox answers those with an
 * "unsafe" Undefined instead of failing) */
static bool undefined_has_dunder(const Str *attr) { return v_undefined_has_dunder(attr->data, attr->len); }

static Value eval_getattr(Interp *I, Value obj, Str *attr) {
    if (obj.type == VT_UNDEFINED && undefined_has_dunder(attr)) {
        Value u = v_undef_msg(I->rt, "access to attribute '%s' of 'Undefined' object is unsafe.", attr->data);
        u.flags = CF_ERR_SECURITY;
        return u;
    }
    return v_getattr_str(I->rt, obj, attr);
}

static NOINLINE Value eval_call(Interp *I, const Node *n, Frame *f, Str *caller_kw, Value caller) {
    Rt *rt = I->rt;
    const Node *fn = n->a;
    ArgBuf ab;
    if (fn->kind == N_GETATTR) {
        Value obj = operand(I, fn->a, f);
        uint8_t t = obj.type;
        if (t == VT_STR || t == VT_LIST || t == VT_TUPLE || t == VT_DICT) {
            eval_args(I, n, f, &ab, v_missing(), caller_kw, caller);
            set_pos(I, n);
            Value out;
            charge_operand(rt, obj);
            if (t == VT_STR && fn->str_method) return str_method_invoke(rt, fn->str_method, obj, &ab.args);
            if (method_call(rt, obj, fn->attr->data, fn->attr->len, &ab.args, &out)) return out;
            Value callee = eval_getattr(I, obj, fn->attr);
            return interp_call(rt, callee, &ab.args);
        }
        Value callee = eval_getattr(I, obj, fn->attr);
        eval_args(I, n, f, &ab, v_missing(), caller_kw, caller);
        set_pos(I, n);
        return interp_call(rt, callee, &ab.args);
    }
    Value callee = operand(I, fn, f);
    if (callee.type == VT_CALLABLE && callee.u.obj->type == &MACRO_OBJ && !caller_kw && !n->b && !n->c &&
        !n->kwvals.n)
        return macro_call_positional(I, n, f, callee);
    eval_args(I, n, f, &ab, v_missing(), caller_kw, caller);
    set_pos(I, n);
    return interp_call(rt, callee, &ab.args);
}

/* The rarer expression kinds live out of line, so that eval itself keeps a
 * small frame: it is entered for every node. */
static NOINLINE Value eval_getattr_slow(Interp *I, const Node *n, Value obj) {
    set_pos(I, n);
    return eval_getattr(I, obj, n->attr);
}

static NOINLINE Value eval_getitem_slow(Interp *I, const Node *n, Value obj, Value key) {
    set_pos(I, n);
    return v_getitem(I->rt, obj, key);
}

static NOINLINE Value eval_slice(Interp *I, const Node *n, Frame *f) {
    /* a slice among several subscripts (x[1, :2]) has no object of its
     * own: Python makes a slice object, which no container accepts in a
     * tuple key, and the sandbox turns that TypeError into Undefined */
    if (!n->a) return v_undef(NULL);
    Value obj = operand(I, n->a, f);
    Value s = n->b ? operand(I, n->b, f) : v_missing();
    Value e = n->c ? operand(I, n->c, f) : v_missing();
    Value st = n->d ? operand(I, n->d, f) : v_missing();
    set_pos(I, n);
    return py_slice(I->rt, obj, s, e, st, n->flag);
}

static NOINLINE Value eval_sequence(Interp *I, const Node *n, Frame *f) {
    List *l = list_new(I->rt, (size_t)n->items.n);
    for (int i = 0; i < n->items.n; i++) list_push(I->rt, l, operand(I, n->items.v[i], f));
    return n->kind == N_LIST ? v_list_of(l) : v_tuple_of(l);
}

static NOINLINE Value eval_dict(Interp *I, const Node *n, Frame *f) {
    Rt *rt = I->rt;
    Dict *d = dict_new(rt, (size_t)n->items.n);
    for (int i = 0; i < n->items.n; i++) {
        Value k = operand(I, n->items.v[i], f);
        Value v = operand(I, n->alt.v[i], f);
        if (!v_hashable(k)) { set_pos(I, n); rt_throw(rt, CF_ERR_TYPE, "unhashable type: '%s'", v_unhashable_type(k)); }
        dict_set(rt, d, k, v);
    }
    return v_dict_of(d);
}

static NOINLINE Value eval_filter_args(Interp *I, const Node *n, Frame *f, Value operand_value) {
    ArgBuf ab;
    eval_args(I, n, f, &ab, v_missing(), NULL, v_missing());
    set_pos(I, n);
    if (!n->filter) unknown_filter_or_test(I, n);
    charge_operand(I->rt, operand_value);
    return n->filter(I->rt, operand_value, &ab.args);
}

static NOINLINE Value eval_test_args(Interp *I, const Node *n, Frame *f, Value operand_value) {
    ArgBuf ab;
    eval_args(I, n, f, &ab, v_missing(), NULL, v_missing());
    set_pos(I, n);
    if (!n->test) unknown_filter_or_test(I, n);
    return v_bool(n->test(I->rt, operand_value, &ab.args));
}

static NOINLINE Value eval_unary(Interp *I, const Node *n, Value v) {
    Rt *rt = I->rt;
    set_pos(I, n);
    if (v.type == VT_UNDEFINED) v_undefined_fail(rt, v);
    if (is_intlike(v)) {
        int64_t x = as_int(v);
        if (n->kind == N_POS) return v_int(x);
        if (x == INT64_MIN) return bigint_neg(rt, v);    /* 2**63: a bigint */
        return v_int(-x);
    }
    if (v.type == VT_BIGINT) return n->kind == N_NEG ? bigint_neg(rt, v) : v;
    if (v.type == VT_FLOAT) return v_float(n->kind == N_NEG ? -v.u.f : v.u.f);
    if (v_is_complex(v)) return n->kind == N_NEG ? complex_neg(rt, v) : v;
    rt_throw(rt, CF_ERR_TYPE, "bad operand type for unary %s: '%s'", n->kind == N_NEG ? "-" : "+", v_type_name(v));
}

/* a ~ b ~ c where autoescape is on when compiled (Jinja2's markup_join): when one part
 * is Markup the result is Markup, the other parts escaped. Every part is
 * evaluated before any is joined, as Jinja2 builds their tuple first. */
static COLD Value concat_markup_aware(Interp *I, const Node *n, Frame *f) {
    Value *parts = rt_alloc(I->rt, (size_t)n->items.n * sizeof(Value));
    bool markup = false;
    for (int i = 0; i < n->items.n; i++) {
        parts[i] = operand(I, n->items.v[i], f);
        markup |= parts[i].type == VT_STR && (parts[i].flags & VF_MARKUP);
    }
    StrBuf sb;
    sb_init(I->rt, &sb, 64);
    for (int i = 0; i < n->items.n; i++) {
        Value v = markup ? markup_escape(I->rt, parts[i]) : parts[i];
        if (v.type == VT_STR) sb_put(&sb, v.u.s->data, v.u.s->len);
        else v_write_str(I->rt, &sb, v);
    }
    Value out = sb_to_value(&sb);
    return markup ? v_markup(out) : out;
}

static NOINLINE Value eval_concat(Interp *I, const Node *n, Frame *f) {
    /* (where the setting is known only at run time, Jinja2 tests the run-time
     * context's `volatile`, which is never set: str_join) */
    if (n->op == ESC_ON) return concat_markup_aware(I, n, f);
    StrBuf sb;
    sb_init(I->rt, &sb, 64);
    for (int i = 0; i < n->items.n; i++) {
        Value v = operand(I, n->items.v[i], f);
        if (v.type == VT_STR) sb_put_str(&sb, v.u.s);   /* (the result is known ASCII when they are) */
        else v_write_str(I->rt, &sb, v);
    }
    return sb_to_value(&sb);
}

static NOINLINE Value eval_compare_chain(Interp *I, const Node *n, Frame *f, Value left) {
    for (int i = 0; i < n->items.n; i++) {
        Value right = operand(I, n->items.v[i], f);
        set_pos(I, n);
        if (!interp_compare(I, n->ops[i], left, right)) return v_bool(false);
        left = right;
    }
    return v_bool(true);
}

/* One `+` of a chain: a str + str builds into *acc_buf (no intermediate
 * strings for 'a' + b + 'c' + d), anything else goes through binop. */
static Value add_step(Interp *I, const Node *at, Value acc, Value b, StrBuf *sb, bool *building) {
    set_pos(I, at);
    bool plain_str = b.type == VT_STR && !(b.flags & VF_MARKUP);
    if (*building) {
        if (plain_str) { sb_put_str(sb, b.u.s); return acc; }
        acc = sb_to_value(sb);
        *building = false;
    } else if (plain_str && acc.type == VT_STR && !(acc.flags & VF_MARKUP)) {
        sb_init(I->rt, sb, acc.u.s->len + b.u.s->len + 64);
        sb_put_str(sb, acc.u.s);   /* (the sum is known ASCII when they are) */
        sb_put_str(sb, b.u.s);
        *building = true;
        return acc;
    }
    return py_binop(I->rt, OP_ADD, acc, b);
}

/* a + b + c parses as ((a + b) + c): the `+` nodes of the left spine,
 * outermost first, into spine[]; returns how many, *first = the leftmost
 * operand. */
static int add_spine(const Node *n, const Node *spine[ADD_CHAIN_MAX], const Node **first) {
    int k = 0;
    while (n->kind == N_BINOP && n->op == OP_ADD && k < ADD_CHAIN_MAX) { spine[k++] = n; n = n->a; }
    *first = n;
    return k;
}

static NOINLINE Value eval_binop(Interp *I, const Node *n, Frame *f) {
    if (n->op == OP_ADD && n->a->kind == N_BINOP && n->a->op == OP_ADD) {
        /* add left to right exactly as Python does, one operand at a time */
        const Node *spine[ADD_CHAIN_MAX], *x;
        int k = add_spine(n, spine, &x);
        Value acc = operand(I, x, f);
        StrBuf sb;
        bool building = false;
        for (int i = k - 1; i >= 0; i--) {
            Value b = operand(I, spine[i]->b, f);
            acc = add_step(I, spine[i], acc, b, &sb, &building);
        }
        return building ? sb_to_value(&sb) : acc;
    }
    Value a = operand(I, n->a, f);
    Value b = operand(I, n->b, f);
    set_pos(I, n);
    /* the common cases first: '\n' + text, index - 1 */
    if (n->op == OP_ADD && a.type == VT_STR && b.type == VT_STR && !((a.flags | b.flags) & VF_MARKUP))
        return py_str_concat(I->rt, a, b);
    if (a.type == VT_INT && b.type == VT_INT) {
        int64_t r;
        if (n->op == OP_ADD && !__builtin_add_overflow(a.u.i, b.u.i, &r)) return v_int(r);
        if (n->op == OP_SUB && !__builtin_sub_overflow(a.u.i, b.u.i, &r)) return v_int(r);
    }
    return py_binop(I->rt, n->op, a, b);
}

/* An int sum (BINOP_INT_SUM), such as (messages|length - 1) - loop.index0,
 * computed on int64s without a Value or a call for each node: false when
 * an operand is not an int or the sum overflows, and eval_binop then starts
 * over. Nothing here changes anything before that (the operands are
 * lookups, and |length charges its steps only once all is done), and an
 * operand that raises does so as it would there: in the same order, with
 * its own position. */
static NOINLINE bool int_sum(Interp *I, const Node *n, Frame *f, int64_t *out, uint64_t *steps);

/* x|length of a list, tuple or dict (else false) */
static ALWAYS_INLINE bool int_length(Interp *I, const Node *n, Frame *f, int64_t *out, uint64_t *steps) {
    Value v = n->a->kind == N_NAME ? name_value(I, n->a, f) : operand(I, n->a, f);
    if (v.flags || v.iter || !(v.type == VT_LIST || v.type == VT_TUPLE || v.type == VT_DICT)) return false;
    *out = (int64_t)(v.type == VT_DICT ? dict_len(v.u.dict) : v.u.list->len);
    *steps += 1;   /* (as eval_filter charges it) */
    return true;
}

static ALWAYS_INLINE bool int_sum_operand(Interp *I, const Node *n, Frame *f, int64_t *out, uint64_t *steps) {
    Value v;
    switch (n->kind) {
    case N_CONST: *out = n->v.u.i; return true;
    case N_BINOP: return int_sum(I, n, f, out, steps);
    case N_FILTER: return int_length(I, n, f, out, steps);
    case N_GETATTR:
        if (loop_index_in_place(I, n, f, out)) return true;
        v = getattr_of_name(I, n, f);
        break;
    default: v = name_value(I, n, f); break;   /* N_NAME */
    }
    *out = v.u.i;
    return v.type == VT_INT;
}

/* a + b - c ...: the left spine's operands left to right, each `+` or `-`
 * checked as it is done (an operand that is itself a sum recurses). */
enum { INT_SUM_SPINE_MAX = 16 };
static NOINLINE bool int_sum(Interp *I, const Node *n, Frame *f, int64_t *out, uint64_t *steps) {
    const Node *spine[INT_SUM_SPINE_MAX];
    int k = 0;
    const Node *x = n;
    while (x->kind == N_BINOP && k < INT_SUM_SPINE_MAX) {   /* (a binop operand of an int sum is one) */
        spine[k++] = x;
        x = x->a;
    }
    int64_t acc, b;
    if (!int_sum_operand(I, x, f, &acc, steps)) return false;
    while (k > 0) {
        const Node *at = spine[--k];
        if (!int_sum_operand(I, at->b, f, &b, steps)) return false;
        if (at->op == OP_ADD ? __builtin_add_overflow(acc, b, &acc) : __builtin_sub_overflow(acc, b, &acc)) return false;
    }
    *out = acc;
    return true;
}

/* A name's value when finding it takes no call (false: a global not
 * resolved yet, a name in a block). */
static ALWAYS_INLINE bool name_found(const Interp *I, const Node *n, const Frame *f, Value *out) {
    if (n->op == NAME_TOP_LEVEL) {
        *out = I->globals[n->sym];
        return out->type != VT_MISSING;
    }
    if (n->op) return false;
    if (slot_holds(f, n->sym, n->flag, out) || frame_find(f, n->sym, out)) return true;
    *out = I->globals[n->sym];
    return out->type != VT_MISSING;
}

/* An int sum's operand found without a call: an int constant, a name
 * holding an int, name|length of a list, tuple or dict, loop.index0 or
 * loop.index of a frame's loop (false: anything else, a sum included). */
static ALWAYS_INLINE bool int_operand_found(const Interp *I, const Node *n, const Frame *f, int64_t *out,
                                            uint64_t *steps) {
    Value v;
    switch (n->kind) {
    case N_CONST: *out = n->v.u.i; return true;
    case N_GETATTR: return loop_index_in_place(I, n, f, out);
    case N_NAME:
        if (!name_found(I, n, f, &v) || v.type != VT_INT) return false;
        *out = v.u.i;
        return true;
    case N_FILTER:   /* (|length: the shape says so) */
        if (n->a->kind != N_NAME || !name_found(I, n->a, f, &v) || v.flags || v.iter ||
            !(v.type == VT_LIST || v.type == VT_TUPLE || v.type == VT_DICT))
            return false;
        *out = (int64_t)(v.type == VT_DICT ? dict_len(v.u.dict) : v.u.list->len);
        *steps += 1;
        return true;
    default: return false;
    }
}

/* a + b or a - b into *acc (false: it overflows) */
static ALWAYS_INLINE bool int_step(uint8_t op, int64_t b, int64_t *acc) {
    return op == OP_ADD ? !__builtin_add_overflow(*acc, b, acc) : !__builtin_sub_overflow(*acc, b, acc);
}

/* The usual int sum ((messages|length - 1) - loop.index0): two or three
 * operands along the left spine, all found without a call, so that this
 * makes none (false: int_sum's turn, from the start; nothing here is seen
 * outside). */
static NOINLINE bool int_sum_found(const Interp *I, const Node *n, const Frame *f, int64_t *out, uint64_t *steps) {
    const Node *inner = n->a;
    int64_t acc, b;
    if (inner->kind == N_BINOP) {   /* (a ± b) ± c */
        if (inner->a->kind == N_BINOP || !int_operand_found(I, inner->a, f, &acc, steps) ||
            !int_operand_found(I, inner->b, f, &b, steps) || !int_step(inner->op, b, &acc))
            return false;
    } else if (!int_operand_found(I, inner, f, &acc, steps)) {
        return false;
    }
    if (!int_operand_found(I, n->b, f, &b, steps) || !int_step(n->op, b, &acc)) return false;
    *out = acc;
    return true;
}

/* A sum computed on int64s: its steps charged and the position where
 * eval_binop leaves it. */
static ALWAYS_INLINE Value int_sum_done(Interp *I, const Node *n, int64_t r, uint64_t steps) {
    rt_step(I->rt, steps);
    set_pos(I, n);
    return v_int(r);
}

/* An int sum that int_sum_found leaves: int_sum, else Python's + and -. */
static NOINLINE Value eval_int_sum_general(Interp *I, const Node *n, Frame *f) {
    int64_t r;
    uint64_t steps = 0;
    if (!int_sum(I, n, f, &r, &steps)) return eval_binop(I, n, f);
    return int_sum_done(I, n, r, steps);
}

static NOINLINE Value eval_int_sum(Interp *I, const Node *n, Frame *f) {
    int64_t r;
    uint64_t steps = 0;
    if (!int_sum_found(I, n, f, &r, &steps)) return eval_int_sum_general(I, n, f);
    return int_sum_done(I, n, r, steps);
}

/* `'x' if y` with y false: an Undefined whose hint (the line) is written
 * only if it is read. */
static inline Value condexpr_undefined(const Node *n) {
    Value v = v_undef(NULL);
    v.iter = UNDEF_NO_ELSE;
    v.u.i = n->line;
    return v;
}



/* A plain key of a dict that missed the cache: looked up, and cached. */
NOINLINE Value getattr_dict_miss(const Node *n, const Dict *d, AttrCacheEntry *c) {
    Value v;
    if (!dict_get_key(d, n->attr, &v)) v = n->v;
    c->dict = d;
    c->attr = n->attr;
    c->v = v;
    return v;
}

/* A namespace attribute the cache does not hold yet, and every obj.attr
 * but the usual ones. */
NOINLINE Value getattr_of_rest(Interp *I, const Node *n, Value obj) {
    if (obj.type == VT_NAMESPACE && n->attr->data[0] != '_') {   /* ns.flag: cached too (see unpack_assign_slow) */
        AttrCacheEntry *c = attr_slot(I, obj.u.dict, n->attr);
        Value v;
        if (dict_get_key(obj.u.dict, n->attr, &v)) {
            c->dict = obj.u.dict;
            c->attr = n->attr;
            c->v = v;
            return v;
        }
    }
    return eval_getattr_slow(I, n, obj);
}




/* name.attr whose name is a global not resolved yet. */
static NOINLINE Value getattr_of_unresolved(Interp *I, const Node *n) {
    Value obj = resolve_global(I, n->sym);
    return getattr_of(I, n, obj);
}

/* name.attr: every path leaves by a tail call (see getattr_of), so that
 * the usual one saves no registers. */
NOINLINE Value getattr_of_name(Interp *I, const Node *n, Frame *f) {
    Value obj;
    if (!name_bound(I, n, f, &obj)) return getattr_of_unresolved(I, n);
    return getattr_of(I, n, obj);
}






/* Expressions do not count steps: their work is bounded by the template's
 * size except in calls, filters and loops, which count their own. */
/* The expression kinds that compute here rather than in a callee: each
 * out of line, so that eval itself is a dispatcher whose every case is a
 * tail call (no registers to save on the way through). */
static NOINLINE Value eval_getattr_node(Interp *I, const Node *n, Frame *f) {
    Value item;   /* messages[loop.index0 + 1].role: the item without entering eval twice */
    if (n->a->kind == N_GETITEM && n->a->simple == GI_LOOP_OFFSET && loop_offset_item(I, n->a, f, &item))
        return getattr_of(I, n, item);
    return getattr_of(I, n, operand(I, n->a, f));
}

static NOINLINE Value eval_getitem(Interp *I, const Node *n, Frame *f) {
    Value item;
    if (n->simple == GI_LOOP_OFFSET && loop_offset_item(I, n, f, &item)) return item;
    Value obj = operand(I, n->a, f);
    Value key = operand(I, n->b, f);
    if (obj.type == VT_DICT && key.type == VT_STR) {   /* message['role'] */
        Value v;
        if (dict_get_key(obj.u.dict, key.u.s, &v)) return v;
    } else if ((obj.type == VT_LIST || obj.type == VT_TUPLE) && key.type == VT_INT && key.u.i >= 0 &&
               (uint64_t)key.u.i < obj.u.list->len &&
               !(obj.flags & (VF_VIEW_ITEMS | VF_VIEW_KEYS | VF_VIEW_VALUES | VF_GENERATOR))) {
        return obj.u.list->items[key.u.i];   /* messages[0]: as v_getitem finds it (negative, views, generators: there) */
    }
    return eval_getitem_slow(I, n, obj, key);
}

static NOINLINE Value eval_filter(Interp *I, const Node *n, Frame *f) {
    Value v = operand(I, n->a, f);
    if (n->simple) {   /* x|lower */
        static const Args no_args = {0, NULL, 0, NULL, NULL};
        if (n->op == FILTER_LENGTH && !v.flags && !v.iter &&
            (v.type == VT_LIST || v.type == VT_TUPLE || v.type == VT_DICT)) {   /* messages|length */
            size_t len = v.type == VT_DICT ? dict_len(v.u.dict) : v.u.list->len;
            rt_step(I->rt, 1);   /* (a count kept, not made: one step whatever the length, or
                                    `messages|length` in a loop over the messages charged their
                                    square, and 800 messages of Qwen3 ran out of steps) */
            return v_int((int64_t)len);
        }
        set_pos(I, n);
        if (n->op == FILTER_PURE) return filter_pure(I, n, v);
        charge_operand(I->rt, v);
        return n->filter(I->rt, v, &no_args);
    }
    return eval_filter_args(I, n, f, v);
}

static NOINLINE Value eval_truth(Interp *I, const Node *n, Frame *f) {   /* x is string, not x, a == b */
    return v_bool(n->kind == N_NOT ? !cond(I, n->a, f) : cond(I, n, f));
}

static NOINLINE Value eval_test_node(Interp *I, const Node *n, Frame *f) {   /* x is divisibleby(3) */
    return eval_test_args(I, n, f, operand(I, n->a, f));
}

static NOINLINE Value eval_unary_node(Interp *I, const Node *n, Frame *f) {
    return eval_unary(I, n, operand(I, n->a, f));
}

static NOINLINE Value eval_and_or(Interp *I, const Node *n, Frame *f) {   /* Python's values, not bools */
    Value a = operand(I, n->a, f);
    if (v_truthy(a) == (n->kind == N_AND)) return operand(I, n->b, f);
    return a;
}

static NOINLINE Value eval_compare(Interp *I, const Node *n, Frame *f) {
    return eval_compare_chain(I, n, f, operand(I, n->a, f));
}

static NOINLINE Value eval_condexpr(Interp *I, const Node *n, Frame *f) {
    if (cond(I, n->a, f)) return operand(I, n->b, f);
    if (n->c) return operand(I, n->c, f);
    return condexpr_undefined(n);
}

static NOINLINE Value eval_nsref(Interp *I, const Node *n, Frame *f) {
    Value ns = lookup(I, f, n->sym);
    Value v;
    if (ns.type == VT_NAMESPACE && n->attr->data[0] != '_' && dict_get_key(ns.u.dict, n->attr, &v)) return v;
    return v_getattr(I->rt, ns, n->attr->data, n->attr->len);
}

static COLD Value eval_not_expression(Interp *I, const Node *n) {
    set_pos(I, n);
    rt_throw(I->rt, CF_ERR_RUNTIME, "internal error: node kind %d is not an expression", n->kind);
}

Value interp_eval(Interp *I, const Node *n, Frame *f) {
    stack_check(I);
    switch (n->kind) {
    case N_CONST: return n->v;
    case N_NAME: return name_value(I, n, f);
    case N_GETATTR: return eval_getattr_node(I, n, f);
    case N_GETITEM: return eval_getitem(I, n, f);
    case N_SLICE: return eval_slice(I, n, f);
    case N_LIST: case N_TUPLE: return eval_sequence(I, n, f);
    case N_DICT: return eval_dict(I, n, f);
    case N_CALL: return eval_call(I, n, f, NULL, v_missing());
    case N_FILTER: return eval_filter(I, n, f);
    case N_TEST: return plain_test(n) ? eval_truth(I, n, f) : eval_test_node(I, n, f);
    case N_NOT: return eval_truth(I, n, f);
    case N_NEG: case N_POS: return eval_unary_node(I, n, f);
    case N_BINOP: return n->simple ? eval_int_sum(I, n, f) : eval_binop(I, n, f);
    case N_AND: case N_OR: return eval_and_or(I, n, f);
    case N_COMPARE:
        if (single_comparison(n)) return eval_truth(I, n, f);
        return eval_compare(I, n, f);
    case N_CONCAT: return eval_concat(I, n, f);
    case N_CONDEXPR: return eval_condexpr(I, n, f);
    case N_NSREF: return eval_nsref(I, n, f);
    default: return eval_not_expression(I, n);
    }
}

/* ---- statements ---- */
/* Code points of the top-level output so far, counted incrementally. */
static size_t root_chars(Interp *I) {
    I->root_chars += utf8_count(I->root->p + I->root_counted, I->root->len - I->root_counted);
    I->root_counted = I->root->len;
    return I->root_chars;
}

static NOINLINE void write_value_slow(Interp *I, Value v, bool escape) {
    if (escape && !(v.type == VT_STR && (v.flags & VF_MARKUP))) v = markup_escape(I->rt, v);
    if (v.type == VT_STR) sb_put(I->out, v.u.s->data, v.u.s->len);
    else v_write_str(I->rt, I->out, v);
}

/* The top-level buffer enforces max_output itself (StrBuf.is_output). */
static inline void write_escaped(Interp *I, Value v, bool escape) {
    I->out->items++;
    if (v.type == VT_STR && !escape) sb_put_str(I->out, v.u.s);
    else write_value_slow(I, v, escape);
}

/* What call and filter blocks (and generation, a call block) write: Jinja2
 * writes their value as it is, escaping nothing. */
static inline void write_value(Interp *I, Value v) { write_escaped(I, v, false); }

/* The next item of a loop over messages is a dict a server or a benchmark
 * read a while ago: its header and first entries (a reader's dict holds
 * them together) are fetched while this item's body runs, which takes
 * hundreds of cycles. Without it, `m.role` waited on a cache miss in every
 * iteration over a conversation not rendered just before. */
static inline void prefetch_item(Value v) {
#if defined(__GNUC__)
    if (v.type == VT_DICT) {
        const char *d = (const char *)v.u.dict;
        __builtin_prefetch(d);
        __builtin_prefetch(d + 64);
        __builtin_prefetch(d + 128);
    }
#else
    (void)v;
#endif
}

/* Runs a for loop; returns the control flow of its `else` body, which (as
 * compiled Jinja2) belongs to the enclosing loop: a break there breaks it. */
static Ctl loop_run(Interp *I, const Node *node, Value iterable, Frame *outer, int depth0) {
    Rt *rt = I->rt;
    set_pos(I, node);
    List *items = v_iterate(rt, iterable);
    Loop *l = rt_alloc(rt, sizeof(Loop));
    *l = (Loop){.items = items, .depth0 = depth0, .node = node, .outer = outer};
    if (node->c) {   /* `for x in xs if cond`: tested as the loop reaches them (loop_fill) */
        l->source = items;
        l->items = items = list_new(rt, items->len);
        l->test_frame = frame_new_layout(I, outer, node);   /* the targets alone (no loop) */
    }
    Value loopv = v_object(rt, VT_OBJECT, &LOOP_TYPE, l);
    int loop_sym = I->t->sym_loop;
    Frame *f = frame_new_layout(I, outer, node);
    /* Jinja2 clears its "else" indicator at the END of a body, so `else`
     * runs unless some iteration ran to completion (continue/break skip it). */
    bool completed = false;
    /* Each iteration starts from `loop` and the target alone in the frame:
     * the layout's slot 0 and the next (the parser rejects a target named
     * loop); the names the body sets are unbound again. */
    int base = 0;
    if (loop_sym >= 0) {
        f->syms[0] = loop_sym;
        f->vals[0] = loopv;
        base = 1;
    }
    int name_target = node->a->kind == N_NAME ? node->a->sym : -1;
    int first_set = name_target >= 0 ? base + 1 : base;
    /* (the next item is the one after loop.index0: iterating the loop
     * object in the body may have advanced it to the end) */
    for (size_t i = 0; loop_has(I, l, i); i = (size_t)l->index0 + 1) {
        rt_step(rt, 1);
        frame_unbind(f, first_set);
        l->index0 = (int64_t)i;
        if (i + 1 < items->len) prefetch_item(items->items[i + 1]);
        if (name_target >= 0) {
            f->syms[base] = name_target;
            f->vals[base] = items->items[i];
        } else {
            unpack_assign(I, node->a, items->items[i], f);
        }
        frame_start_iteration(I, f, node->init);
        Ctl c = exec_body(I, &node->body, f);
        if (c == CTL_BREAK) {   /* a generator yields on from the next item */
            size_t taken = (size_t)l->index0 + 1;
            if (l->looked_ahead > taken) taken = l->looked_ahead;
            if (!node->c) generator_give_back(rt, iterable, items, taken);
            else if (l->source) generator_give_back(rt, iterable, l->source, l->next_source);
            break;
        }
        if (c == CTL_NONE) completed = true;
    }
    if (!completed && node->alt.n) {
        Frame *ef = frame_new(I, outer);
        if (node->init && node->init->nelse) frame_start_missing(I, ef, node->init->nelse, node->init->else_syms, NULL);
        return exec_body(I, &node->alt, ef);
    }
    return CTL_NONE;
}

/* `set ns.attr = value` (also inside a tuple target): Jinja2 tests that
 * each ns is a namespace before it evaluates the value. (A block set tests
 * nothing: see unpack_assign_slow.) */
static void namespace_targets(Interp *I, const Node *set, const Node *target, Frame *f) {
    if (target->kind == N_TUPLE) {
        for (int i = 0; i < target->items.n; i++) namespace_targets(I, set, target->items.v[i], f);
        return;
    }
    if (target->kind != N_NSREF || lookup(I, f, target->sym).type == VT_NAMESPACE) return;
    set_pos(I, set);
    rt_throw(I->rt, CF_ERR_TEMPLATE_RUNTIME, "cannot assign attribute on non-namespace object");
}

/* ---- blocks: without a parent template a block renders in place, and
 * self.name() renders it again ---- */

/* The scope a block's body runs in: Jinja2 compiles it to a function of the
 * render's context (only top-level names), or of the enclosing names when
 * `scoped`; `super` there is an Undefined (no parent template). */
static Frame *block_frame(Interp *I, const Node *block, Frame *parent) {
    if (block->flag & BLOCK_REQUIRED) {   /* no child template overrides it */
        set_pos(I, block);
        rt_throw(I->rt, CF_ERR_TEMPLATE_RUNTIME, "Required block '%s' not found", block->name->data);
    }
    Frame *bf = frame_new(I, parent);
    bf->scope = block;   /* (where lookup_in_block's search leaves the block) */
    if (I->t->sym_super >= 0)
        frame_set(I, bf, I->t->sym_super, v_undef_msg(I->rt, "there is no parent block called '%s'.", block->name->data));
    frame_start(I, bf, block);
    return bf;
}

/* self.name(): the block rendered again, into a string (block_ref.c). */
Value block_render(Interp *I, const Node *block) {
    depth_enter(I);
    Value v = capture(I, &block->body, block_frame(I, block, NULL));   /* Markup under autoescape */
    I->depth--;
    return v;
}

/* {% set ns.out = ns.out ~ a ~ b %} marked SET_ACCUMULATE (parser.c): no
 * one but the namespace can hold ns.out's value, so a value this function
 * made (an accumulator, with room to grow) is appended to in place, and
 * building a prompt piece by piece takes linear time and memory, as it does
 * in Python, which frees each old copy. The pieces are evaluated first, as
 * the `~` would; if one of them changed ns.out (a macro appending to it),
 * the result is built anew from the value read before them. */
typedef struct Accumulator { Str *s; size_t cap; } Accumulator;
static COLD _Noreturn void string_too_long(Interp *I);
enum { ACCUMULATORS = 8 };

static NOINLINE bool accumulate(Interp *I, const Node *n, Frame *f) {
    const Node *target = n->a, *cat = n->b;
    Value ns = lookup(I, f, target->sym);
    if (ns.type != VT_NAMESPACE) return false;
    Value cur = operand(I, cat->items.v[0], f);
    if (cur.type != VT_STR || cur.flags) return false;
    Str *s = cur.u.s;
    size_t len0 = s->len;
    StrBuf sb;
    sb_init(I->rt, &sb, 64);
    for (int i = 1; i < cat->items.n; i++) {   /* (as eval_concat) */
        Value v = operand(I, cat->items.v[i], f);
        if (v.type == VT_STR) sb_put(&sb, v.u.s->data, v.u.s->len);
        else v_write_str(I->rt, &sb, v);
    }
    Str *piece = sb_to_str(&sb);
    set_pos(I, n);
    size_t len = len0 + piece->len;
    if (len > I->rt->lim.max_string) string_too_long(I);
    if (!I->acc) I->acc = rt_alloc0(I->rt, ACCUMULATORS * sizeof *I->acc);
    Value now;
    for (int i = 0; i < ACCUMULATORS; i++) {
        Accumulator *a = &I->acc[i];
        if (a->s != s || s->len != len0 || a->cap < len) continue;
        if (!dict_get_key(ns.u.dict, target->attr, &now) || now.type != VT_STR || now.u.s != s) break;
        memcpy(s->data + len0, piece->data, piece->len);
        s->len = len;
        s->data[len] = '\0';
        s->nchars = -1;
        s->hash = 0;
        return true;
    }
    size_t cap = len < 128 ? 256 : len * 2;
    if (cap > I->rt->lim.max_string) cap = I->rt->lim.max_string;
    Str *grown = str_alloc(I->rt, cap);
    memcpy(grown->data, s->data, len0);
    memcpy(grown->data + len0, piece->data, piece->len);
    grown->len = len;
    grown->data[len] = '\0';
    I->acc[I->acc_next] = (Accumulator){grown, cap};
    I->acc_next = (I->acc_next + 1) % ACCUMULATORS;
    unpack_assign(I, target, v_str_of(grown), f);
    return true;
}

/* The frame a block set's, filter block's or generation block's body runs
 * in (Jinja2 compiles each to a frame of its own), or f when the body sets
 * nothing (scope.c: nslots 0). */
static Frame *body_frame(Interp *I, const Node *n, Frame *f) {
    if (!n->nslots) return f;
    Frame *bf = frame_new_layout(I, f, n);
    frame_start(I, bf, n);
    return bf;
}

/* Is v, what `call` gave, a range no one else holds: made by the global
 * range() for a loop over it (`for i in range(n)`) in a template that never
 * names `loop` (whose object holds the items and could be kept)? The loop
 * gives its memory back when it ends, so nested loops reuse it. */
static bool owned_range(Interp *I, const Node *call, Value v, Frame *f) {
    if (!(v.flags & VF_RANGE) || call->kind != N_CALL || call->a->kind != N_NAME || I->t->reads_loop) return false;
    Value callee = operand(I, call->a, f), range;
    return global_lookup("range", 5, &range) && callee.type == range.type && callee.u.obj == range.u.obj;
}

/* The statements other than text, output and if (exec_body runs those). */
static NOINLINE Ctl exec_stmt(Interp *I, const Node *n, Frame *f) {
    Rt *rt = I->rt;
    switch (n->kind) {
    case N_FOR: {
        Value iterable = operand(I, n->b, f);
        bool own = owned_range(I, n->b, iterable, f);
        Ctl c = loop_run(I, n, iterable, f, 0);
        if (own) rt_free(rt, (void *)v_range_of(iterable), sizeof(RangeList) + iterable.u.list->len * sizeof(Value));
        return c;
    }
    case N_SET: {
        if (n->a->kind == N_NSREF && n->flag != SET_ACCUMULATE) {   /* set ns.x = value: ns found once */
            Value ns = lookup(I, f, n->a->sym);
            if (ns.type != VT_NAMESPACE) namespace_targets(I, n, n->a, f);   /* (raises) */
            Value v = operand(I, n->b, f);
            set_pos(I, n);
            namespace_set(I, ns.u.dict, n->a->attr, v);
            return CTL_NONE;
        }
        if (n->a->kind == N_NSREF || n->a->kind == N_TUPLE) namespace_targets(I, n, n->a, f);
        if (n->flag == SET_ACCUMULATE && accumulate(I, n, f)) return CTL_NONE;
        Value v = operand(I, n->b, f);
        set_pos(I, n);
        unpack_assign(I, n->a, v, f);
        return CTL_NONE;
    }
    case N_SET_BLOCK: {
        depth_enter(I);
        Ctl c;
        Frame *bf = body_frame(I, n, f);
        Value v = capture_ctl(I, &n->body, bf, &c);
        I->depth--;
        if (c != CTL_NONE) return c;
        if (n->c) v = apply_filter(I, n->c, v, bf);
        set_pos(I, n);
        unpack_assign(I, n->a, v, f);
        return CTL_NONE;
    }
    case N_MACRO:
        assign_sym(I, f, n->sym, make_macro(I, n, f));
        return CTL_NONE;
    case N_CALL_BLOCK: {
        Value caller = make_macro(I, n->b, f);
        Str *kw = n->b->name;   /* "caller" */
        write_value(I, eval_call(I, n->a, f, kw, caller));
        return CTL_NONE;
    }
    case N_FILTER_BLOCK: {
        depth_enter(I);
        Ctl c;
        Frame *bf = body_frame(I, n, f);
        Value v = capture_ctl(I, &n->body, bf, &c);
        I->depth--;
        if (c != CTL_NONE) return c;
        Value r = apply_filter(I, n->c, v, bf);
        if (r.type != VT_STR) {   /* Jinja2 yields it as it is: the join refuses it */
            if (!I->out->bad_type) {
                I->out->bad_type = v_type_name(r);
                I->out->bad_item = I->out->items;
            }
            I->out->items++;
            return CTL_NONE;
        }
        write_value(I, r);
        return CTL_NONE;
    }
    case N_WITH: {
        Frame *wf = frame_new(I, f);
        frame_start(I, wf, n);
        for (int i = 0; i < n->items.n; i++) {
            const Node *s = n->items.v[i];
            unpack_assign(I, s->a, interp_eval(I, s->b, f), wf);
        }
        return exec_body(I, &n->body, wf);
    }
    case N_BREAK: return CTL_BREAK;
    case N_CONTINUE: return CTL_CONTINUE;
    case N_GENERATION: {
        /* transformers' AssistantTracker: the body renders as caller(); the
         * span starts at the top-level output yielded so far (so a block in a
         * macro or nested block starts where its enclosing top-level output
         * is), and nothing is recorded until something was yielded at the top
         * level or a span exists (its "is_active" tests two empty lists). */
        Value body = capture(I, &n->body, body_frame(I, n, f));
        SpanVec *sv = I->spans;
        if (I->root->items || sv->n) {
            size_t start = root_chars(I);
            if (sv->n == sv->cap) {
                size_t nc = sv->cap ? sv->cap * 2 : 8;
                sv->v = rt_realloc(rt, sv->v, sv->cap * sizeof(cf_span), nc * sizeof(cf_span));
                sv->cap = nc;
            }
            sv->v[sv->n].start = start;
            sv->v[sv->n].end = start + str_nchars(body.u.s);
            sv->n++;
        }
        write_value(I, body);
        return CTL_NONE;
    }
    case N_SCOPE_BLOCK:   /* (a break inside cannot leave it: the parser refuses one) */
        exec_body(I, &n->body, block_frame(I, n, (n->flag & BLOCK_SCOPED) ? f : NULL));
        return CTL_NONE;
    case N_AUTOESCAPE: {
        bool saved = I->autoescape;
        I->autoescape = v_truthy(interp_eval(I, n->a, f));
        /* Jinja2 compiles the block as a scope: what it sets stays inside */
        Frame *af = frame_new(I, f);
        frame_start(I, af, n);
        Ctl c = exec_body(I, &n->body, af);
        /* Jinja2 restores the setting after the block's last statement: a
         * break or continue inside skips that, and the setting outlives the
         * block (seen by output whose escaping is decided at run time). */
        if (c == CTL_NONE) I->autoescape = saved;
        return c;
    }
    case N_FAIL:
        set_pos(I, n);
        rt_throw(rt, (cf_error_kind)n->op, "%s", n->v.u.s->data);
    default:
        set_pos(I, n);
        rt_throw(rt, CF_ERR_RUNTIME, "internal error: node kind %d is not a statement", n->kind);
    }
}

static bool plain_str(Value v) { return v.type == VT_STR && !(v.flags & VF_MARKUP); }

static COLD _Noreturn void string_too_long(Interp *I) {
    rt_throw(I->rt, CF_ERR_LIMIT, "string length limit of %zu bytes exceeded (raise it with --max-string / cf_limits.max_string)",
             I->rt->lim.max_string);
}

/* {{ '<|im_start|>' + m.role + '\n' + m.content }}: while the operands are
 * plain strings they go straight to the output; at the first other operand
 * the text so far becomes the left operand of a real `+`, as in Python.
 * Expressions never write output, so nothing interleaves with the pieces. */
/* The rest of a sum once an operand is not a plain string: acc + b, then
 * the remaining operands (spine[i-1] .. spine[0]) with real `+`s. */
static NOINLINE void output_sum_rest(Interp *I, const Node *const *spine, int i, Value acc, Value b, Frame *f) {
    for (;;) {
        acc = py_binop(I->rt, OP_ADD, acc, b);
        if (--i < 0) break;
        b = operand(I, spine[i]->b, f);
        set_pos(I, spine[i]);
    }
    write_escaped(I, acc, false);   /* (only outputs that do not escape come here) */
}

/* The sum's operand at plan[j] (j >= 1) is not a plain str: acc (the
 * first operand, or the text so far) + it, and on with real `+`s. */
static NOINLINE void output_sum_other(Interp *I, const Node *n, const Node *at, Value acc, Value b, Frame *f) {
    const Node *spine[ADD_CHAIN_MAX], *x;
    int i = add_spine(n, spine, &x);
    while (spine[--i] != at) {}   /* (at is one of them) */
    output_sum_rest(I, spine, i, acc, b, f);
}

/* A piece of a sum into the output, which holds a buffer: sb_put_str
 * without its lazy-capture case, the buffer's fields read once. */
static ALWAYS_INLINE void sum_put(StrBuf *out, const Str *s) {
    size_t n = s->len, len = out->len;
    if (n > out->cap - len) {
        sb_put_str(out, (Str *)s);
        return;
    }
    bool ascii = str_known_ascii(s);
    copy_bytes(out->p + len, s->data, n);
    out->len = len + n;
    if (ascii) out->ascii_len += n;
    else out->ascii_len = SB_ASCII_LOST;
}

/* A joined run of constants (from plan[first]) took the sum's text to
 * total bytes, past the string limit: the error where the `+` of the
 * constant that crossed it would raise it. */
static COLD _Noreturn void joined_too_long(Interp *I, Node *const *plan, int first, size_t total) {
    int last = first + plan[first]->sym - 1;
    size_t after = total;   /* the text's length after plan[k]'s constant */
    for (int k = last; k > first; k--) {
        size_t before = after - plan[k]->b->v.u.s->len;
        if (before <= I->rt->lim.max_string) break;
        after = before;
        last = k - 1;
    }
    set_pos(I, plan[last]);
    string_too_long(I);
}

/* The sum's pieces; runs: whether its plan holds joined runs of constants
 * (a sum without them does not test each `+` node for one). */
static ALWAYS_INLINE void output_sum_pieces(Interp *I, const Node *n, Frame *f, bool runs) {
    Node *const *plan = n->items.v;   /* the first operand, then the `+` nodes innermost first */
    int count = n->items.n;
    StrBuf *out = I->out;
    if (!out->p) sb_materialize(out);   /* (pieces are read back from out->p) */
    size_t mark = out->len;
    Value first = operand(I, plan[0], f);
    if (!plain_str(first)) {
        Value b = operand(I, plan[1]->b, f);
        set_pos(I, plan[1]);
        output_sum_other(I, n, plan[1], first, b, f);
        return;
    }
    sum_put(out, first.u.s);
    for (int j = 1; j < count; j++) {
        const Node *at = plan[j];
        if (runs && at->flag == SUM_JOINED) {   /* constants: the text so far is a plain str, as it is here */
            int run = at->sym;
            sum_put(out, at->v.u.s);
            j += run - 1;
            set_pos(I, plan[j]);
            if (out->len - mark > I->rt->lim.max_string) joined_too_long(I, plan, j - run + 1, out->len - mark);
            continue;
        }
        const Node *x = at->b;   /* (m.role: looked up here, not by a call) */
        Value b = x->kind == N_GETATTR && x->simple ? getattr_of_name_inline(I, x, f) : operand(I, x, f);
        set_pos(I, at);
        if (!plain_str(b)) {   /* the text so far becomes the left operand */
            Value acc = v_str(I->rt, out->p + mark, out->len - mark);
            sb_truncate(out, mark);
            output_sum_other(I, n, at, acc, b, f);
            return;
        }
        sum_put(out, b.u.s);
        if (out->len - mark > I->rt->lim.max_string) string_too_long(I);   /* as the `+` would */
    }
    out->items++;
}

static NOINLINE void output_sum(Interp *I, const Node *n, Frame *f) {
    if (n->flag & SUM_HAS_RUNS) output_sum_pieces(I, n, f, true);
    else output_sum_pieces(I, n, f, false);
}

/* {{ x|tojson(...) }} without escaping: what eval_filter does, in its order
 * (operand, arguments, position, the operand's charge, the filter), but the
 * JSON goes into a buffer the render keeps for it, from empty (the string
 * limit applies to it as to the filter's own buffer), and from there into
 * the output as the filter's str would be: no str made, grown and given
 * back for every tool of a request. */
static NOINLINE void output_tojson(Interp *I, const Node *n, Frame *f) {
    static const Args no_args = {0, NULL, 0, NULL, NULL};
    Rt *rt = I->rt;
    Value v = operand(I, n->a, f);
    ArgBuf ab;
    const Args *args = &no_args;
    if (!n->simple) {
        eval_args(I, n, f, &ab, v_missing(), NULL, v_missing());
        args = &ab.args;
    }
    set_pos(I, n);
    charge_operand(rt, v);
    StrBuf *scratch = &I->json_scratch;
    if (I->json_scratch_busy) {   /* (the writer calls no template code; kept safe all the same) */
        write_escaped(I, n->filter(rt, v, args), false);
        return;
    }
    if (!scratch->p) sb_init(rt, scratch, 1024);   /* (room for a tool, as the filter's) */
    scratch->len = 0;
    I->json_scratch_busy = true;
    filter_tojson_into(rt, scratch, v, args);
    I->json_scratch_busy = false;
    I->out->items++;
    sb_put(I->out, scratch->p, scratch->len);
}



static Ctl exec_body(Interp *I, const NodeList *body, Frame *f) {
    stack_check(I);
    if (!body->n) return CTL_NONE;   /* (an empty body may have no array, and NULL + 0 is undefined) */
    rt_step(I->rt, (uint64_t)body->n);   /* a step a statement, charged as the body starts */
    Node *const *next = body->v, *const *end = next + body->n;   /* (pointers: fewer registers than an index) */
    while (next < end) {
        const Node *n = *next++;
        Ctl c;
    dispatch:
        switch (n->kind) {
        case N_DATA:
            I->out->items++;
            sb_put_str(I->out, n->v.u.s);
            continue;
        case N_OUTPUT: {
            bool escape = n->flag == ESC_RUNTIME ? I->autoescape : n->flag == ESC_ON;
            if (n->a->kind == N_GETATTR && n->a->simple) {   /* {{ message.content }}: as operand reads it */
                write_escaped(I, getattr_of_name(I, n->a, f), escape);
                continue;
            }
            if (n->a->kind == N_BINOP && n->a->op == OP_ADD && !escape) output_sum(I, n->a, f);
            else if (n->a->kind == N_CALL && n->a->a->kind == N_NAME && !escape && !n->a->b && !n->a->c &&
                     !n->a->kwvals.n && output_macro_call(I, n->a, f))
                continue;
            else if (n->a->kind == N_FILTER && n->a->op == FILTER_TOJSON && !escape) output_tojson(I, n->a, f);
            else write_escaped(I, operand(I, n->a, f), escape);
            continue;
        }
        case N_IF: {
            const NodeList *branch = if_branch(I, n, f);
            if (!branch->n) continue;
            if (next == end) {   /* the body's last statement: the branch runs in its place */
                next = branch->v;
                end = next + branch->n;
                rt_step(I->rt, (uint64_t)branch->n);
                continue;
            }
            if (branch->n == 1) {   /* one statement: run in place, as its own body would run it */
                rt_step(I->rt, 1);
                n = branch->v[0];
                goto dispatch;
            }
            c = exec_body(I, branch, f);
            break;
        }
        case N_SET:
            if (n->a->kind == N_NAME) {   /* set x = value: as exec_stmt, without entering it */
                Value v = n->b->kind == N_GETATTR && n->b->simple ? getattr_of_name_inline(I, n->b, f) : operand(I, n->b, f);
                set_pos(I, n);
                bind_target(I, f, n->a, v);
                continue;
            }
            c = exec_stmt(I, n, f);
            break;
        default:
            if (n->kind == N_IF_CHAIN && next == end) {   /* as an N_IF last (a loop's body is often one chain) */
                const NodeList *branch = chain_pick(I, n, f);
                if (!branch->n) continue;   /* (next == end already: the body is done) */
                next = branch->v;
                end = next + branch->n;
                rt_step(I->rt, (uint64_t)branch->n);
                continue;
            }
            if (n->kind == N_IF_CHAIN) {
                const NodeList *branch = chain_pick(I, n, f);
                if (branch->n == 1) {   /* (as an N_IF's) */
                    rt_step(I->rt, 1);
                    n = branch->v[0];
                    goto dispatch;
                }
                c = branch->n ? exec_body(I, branch, f) : CTL_NONE;
                break;
            }
            c = exec_stmt(I, n, f);
            break;
        }
        if (c != CTL_NONE) return c;
    }
    return CTL_NONE;
}

/* An empty interpreter state: all zero but the two caches, where an
 * entry whose dict (operand) is NULL is empty whatever its other fields
 * hold (every reader compares that first): 24 stores instead of their
 * 1 KiB. */
_Static_assert(offsetof(Interp, filter_memo) + sizeof(((Interp *)0)->filter_memo) == sizeof(Interp) &&
                   offsetof(Interp, attr_cache) + sizeof(((Interp *)0)->attr_cache) == offsetof(Interp, filter_memo),
               "interp_init zeroes what precedes attr_cache: it and filter_memo must be the state's last fields");
static void interp_init(Interp *I) {
    memset(I, 0, offsetof(Interp, attr_cache));
    for (int k = 0; k < ATTR_CACHE_SIZE; k++) I->attr_cache[k].dict = NULL;
    for (int k = 0; k < FILTER_MEMO_SIZE; k++) I->filter_memo[k].operand = NULL;
}

bool interp_eval_constant(Rt *rt, const struct cf_template *t, const Node *n, Value *out) {
    Interp I = {0};
    I.rt = rt;
    I.t = t;
    I.stack_budget = STACK_BASE_BUDGET;
    uintptr_t base = STACK_HERE();
    I.stack_limit = base > I.stack_budget ? base - I.stack_budget : 0;
    jmp_buf jb, *const outer_jb = rt->jb;
    void *const outer_interp = rt->interp;
    cf_error *const outer_err = rt->err;
    const int line = rt->line, col = rt->col;
    cf_error scratch;   /* a failure here is no error: the caller falls back */
    rt->err = &scratch;
    rt->interp = &I;
    rt->jb = &jb;
    volatile bool ok = false;   /* (set between setjmp and a longjmp) */
    if (!setjmp(jb)) {
        *out = interp_eval(&I, n, NULL);
        ok = true;
    }
    rt->jb = outer_jb;
    rt->interp = outer_interp;
    rt->err = outer_err;
    rt->line = line;
    rt->col = col;
    return ok;
}

void interp_run(Rt *rt, const RenderInput *in, StrBuf *out, SpanVec *spans) {
    Interp I;
    interp_init(&I);
    I.rt = rt;
    I.t = in->t;
    I.out = I.root = out;
    I.spans = spans;
    I.now = in->now;
    I.stack_budget = STACK_BASE_BUDGET + (size_t)rt->lim.max_recursion * STACK_PER_RECURSION;
    uintptr_t base = STACK_HERE();
    I.stack_limit = base > I.stack_budget ? base - I.stack_budget : 0;
    rt->interp = &I;
    I.in = in;
    int ns = in->t->nsyms;
    I.globals = rt_alloc0(rt, (size_t)(ns ? ns : 1) * sizeof(Value));
    bind_chat_inputs(&I);
    exec_body(&I, &in->t->body, NULL);
    join_check(&I, out);
    rt->interp = NULL;
}
