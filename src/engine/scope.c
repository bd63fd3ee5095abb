/* scope.c — where each name lives, decided once after parsing, by the rule
 * Jinja2's compiler follows (jinja2/idtracking.py, compiler.py).
 *
 * Jinja2 compiles the template body, each loop body (and its else), macro,
 * call block's caller, filter block, block set, with, autoescape and block
 * into a frame of its own; an `if` is no frame. Before it compiles a frame
 * it visits the frame's own statements (not the frames nested in them) and
 * gives the frame a variable for every name they set, and for every name
 * they read that no enclosing frame has a variable for. The first thing
 * those statements do to a name decides what its variable holds when the
 * frame starts:
 *   - a read, or a set inside an `if`: the value from outside (the nearest
 *     enclosing frame's variable, else the render's variables);
 *   - a set outside any `if`, when no enclosing frame has the name:
 *     nothing ("missing"). Reading it before the set gives Undefined.
 * Frames nested inside are compiled after the whole frame was visited, and
 * a name they read is the nearest enclosing frame's variable, wherever the
 * set that made it stands. So a macro that reads `b` above a top-level
 * `{% set a, b = ... %}` reads the top-level `b`, missing until that set
 * runs: Undefined, not the render's `b`.
 *
 * The interpreter's frames hold bindings; a read searches them innermost
 * first, then the top-level slots, then the render's variables. That search
 * gives the same answers once every frame starts with its missing names
 * bound to their Undefined (FrameInit, ast.h) and the top level with its own
 * (cf_template.sym_starts_undef). A {% block %} is a function of the
 * render's context in Jinja2, where nothing is missing: the names inside
 * one are marked NAME_IN_BLOCK and read past those bindings (interp.c). */
#include "ast.h"
#include <string.h>

/* ---- names no frame can bind ----
 * Targets of set/with inside a frame, loop targets, macro parameters, and
 * the implicit loop/caller/varargs/kwargs. A set outside any frame writes
 * the top-level slot, so every other name lives only there and its lookups
 * skip the frames (NAME_TOP_LEVEL). */
static void mark_target(const Node *target, uint8_t *framed) {
    if (target->kind == N_NAME) framed[target->sym] = 1;
    else if (target->kind == N_TUPLE)
        for (int i = 0; i < target->items.n; i++) mark_target(target->items.v[i], framed);
}

static void mark_bindings(const Node *n, uint8_t *framed, bool in_frame);
static void mark_bindings_list(const NodeList *l, uint8_t *framed, bool in_frame) {
    for (int i = 0; i < l->n; i++) mark_bindings(l->v[i], framed, in_frame);
}
static void mark_bindings(const Node *n, uint8_t *framed, bool in_frame) {
    if (!n) return;
    switch (n->kind) {
    case N_FOR:                 /* body, else and the filter test run in frames */
        mark_target(n->a, framed);
        mark_bindings_list(&n->body, framed, true);
        mark_bindings_list(&n->alt, framed, true);
        return;
    case N_MACRO:               /* also the caller of a call block (N_CALL_BLOCK.b) */
        if (in_frame) framed[n->sym] = 1;
        for (int i = 0; i < n->nparams; i++) framed[n->param_syms[i]] = 1;
        mark_bindings_list(&n->body, framed, true);
        return;
    case N_WITH:
        for (int i = 0; i < n->items.n; i++) mark_target(n->items.v[i]->a, framed);
        mark_bindings_list(&n->body, framed, true);
        return;
    case N_SET_BLOCK:           /* its target is the enclosing frame's; its body a frame */
        if (in_frame) mark_target(n->a, framed);
        mark_bindings_list(&n->body, framed, true);
        return;
    case N_SCOPE_BLOCK: case N_AUTOESCAPE: case N_FILTER_BLOCK: case N_GENERATION:
        mark_bindings_list(&n->body, framed, true);
        return;
    case N_SET:
        if (in_frame) mark_target(n->a, framed);
        break;
    case N_IF:                  /* the elif branches */
        mark_bindings_list(&n->items, framed, in_frame);
        break;
    default:
        break;
    }
    mark_bindings(n->b, framed, in_frame);   /* N_CALL_BLOCK's caller */
    mark_bindings_list(&n->body, framed, in_frame);
    mark_bindings_list(&n->alt, framed, in_frame);
}

static void flag_top_level_names(Node *n, void *framed) {
    if (n->kind == N_NAME && !((const uint8_t *)framed)[n->sym]) n->op = NAME_TOP_LEVEL;
    each_child(n, flag_top_level_names, framed);
}

static void flag_block_names(Node *n, void *ctx) {
    if (n->kind == N_NAME) n->op = NAME_IN_BLOCK;
    each_child(n, flag_block_names, ctx);
}
static void find_blocks(Node *n, void *ctx) {
    if (n->kind == N_SCOPE_BLOCK) flag_block_names(n, ctx);
    else each_child(n, find_blocks, ctx);
}

static void mark_names(Rt *rt, struct cf_template *t) {
    uint8_t *framed = rt_alloc0(rt, (size_t)(t->nsyms ? t->nsyms : 1));
    const int implicit[] = {t->sym_loop, t->sym_caller, t->sym_varargs, t->sym_kwargs, t->sym_super};
    for (size_t i = 0; i < sizeof implicit / sizeof implicit[0]; i++)
        if (implicit[i] >= 0) framed[implicit[i]] = 1;
    mark_bindings_list(&t->body, framed, false);
    for (int i = 0; i < t->body.n; i++) flag_top_level_names(t->body.v[i], framed);
    for (int i = 0; i < t->body.n; i++) find_blocks(t->body.v[i], NULL);
}

/* ---- Jinja2's symbol tables ----
 * One pass down the frames, as the compiler visits them. For each symbol,
 * the depth of the innermost frame on the current path with a variable for
 * it and whether that variable starts missing; entering a frame pushes the
 * changes on an undo log, leaving it pops them. */
enum { PART_FRAME, PART_ELSE };   /* which frame of the node: N_FOR has a second, its else */
typedef struct Pending { Node *n; int part; } Pending;
typedef struct Undo { int sym, depth; uint8_t missing; } Undo;

typedef struct Scopes {
    Rt *rt;
    struct cf_template *t;
    int *ref_depth;          /* per symbol: -1 when no frame on the path has it */
    uint8_t *ref_missing;
    Undo *undo;
    size_t nundo, capundo;
    Pending *pending;        /* frames met in the statements visited, visited after them */
    size_t npending, cappending;
    int depth;               /* the frame being visited (the template body: 0) */
    int floor;               /* frames above this depth are out of sight (a block starts afresh) */
    int in_branch;           /* inside an `if` of the frame being visited */
} Scopes;

static void define(Scopes *S, int sym, bool missing) {
    if (S->nundo == S->capundo) {
        size_t cap = S->capundo ? S->capundo * 2 : 64;
        S->undo = rt_realloc(S->rt, S->undo, S->capundo * sizeof *S->undo, cap * sizeof *S->undo);
        S->capundo = cap;
    }
    S->undo[S->nundo++] = (Undo){sym, S->ref_depth[sym], S->ref_missing[sym]};
    S->ref_depth[sym] = S->depth;
    S->ref_missing[sym] = missing;
}

static bool has_ref(const Scopes *S, int sym) { return S->ref_depth[sym] >= S->floor; }

static void load(Scopes *S, int sym) {
    if (!has_ref(S, sym)) define(S, sym, false);
}
static void store(Scopes *S, int sym) {
    if (S->ref_depth[sym] == S->depth) return;
    /* (a set inside an if makes a variable that starts with the value from
     * outside: Jinja2's Symbols.branch_update) */
    define(S, sym, !S->in_branch && !has_ref(S, sym));
}
static void param(Scopes *S, int sym) {
    if (sym < 0) return;
    if (S->ref_depth[sym] == S->depth) S->ref_missing[sym] = 0;
    else define(S, sym, false);
}

static void load_expr(Scopes *S, Node *n);
static void load_visit(Node *n, void *S) { load_expr(S, n); }
static void load_expr(Scopes *S, Node *n) {
    if (!n) return;
    if (n->kind == N_NAME) load(S, n->sym);
    else each_child(n, load_visit, S);
}

static void store_target(Scopes *S, Node *target) {
    switch (target->kind) {
    case N_NAME: store(S, target->sym); break;
    case N_TUPLE: case N_LIST:
        for (int i = 0; i < target->items.n; i++) store_target(S, target->items.v[i]);
        break;
    case N_NSREF: load(S, target->sym); break;   /* ns.x = ...: a read of ns */
    default: load_expr(S, target); break;
    }
}

static void param_target(Scopes *S, Node *target) {
    if (target->kind == N_NAME) param(S, target->sym);
    else
        for (int i = 0; i < target->items.n; i++) param_target(S, target->items.v[i]);
}

static void pend(Scopes *S, Node *n, int part) {
    if (S->npending == S->cappending) {
        size_t cap = S->cappending ? S->cappending * 2 : 32;
        S->pending = rt_realloc(S->rt, S->pending, S->cappending * sizeof *S->pending, cap * sizeof *S->pending);
        S->cappending = cap;
    }
    S->pending[S->npending++] = (Pending){n, part};
}

/* One statement of the frame being visited: what it reads and sets there,
 * and the frames it makes, for later. */
static void visit_stmts(Scopes *S, const NodeList *body);
static void visit_stmt(Scopes *S, Node *n) {
    switch (n->kind) {
    case N_OUTPUT:
        load_expr(S, n->a);
        break;
    case N_IF:   /* the test, then the branches: the body, each elif's test and body, the else */
        load_expr(S, n->a);
        S->in_branch++;
        visit_stmts(S, &n->body);
        for (int i = 0; i < n->items.n; i++) {
            load_expr(S, n->items.v[i]->a);
            visit_stmts(S, &n->items.v[i]->body);
        }
        visit_stmts(S, &n->alt);
        S->in_branch--;
        break;
    case N_FOR:   /* the iterable is read here; target, body, test and else are frames */
        load_expr(S, n->b);
        pend(S, n, PART_FRAME);
        if (n->alt.n) pend(S, n, PART_ELSE);
        break;
    case N_SET:   /* the value before the target */
        load_expr(S, n->b);
        store_target(S, n->a);
        break;
    case N_SET_BLOCK:
        store_target(S, n->a);
        pend(S, n, PART_FRAME);
        break;
    case N_MACRO:
        store(S, n->sym);
        pend(S, n, PART_FRAME);
        break;
    case N_CALL_BLOCK:
        load_expr(S, n->a);
        pend(S, n->b, PART_FRAME);
        break;
    case N_FILTER_BLOCK:   /* its filter is read here, and again in its frame after the body */
        load_expr(S, n->c);
        pend(S, n, PART_FRAME);
        break;
    case N_WITH:
        for (int i = 0; i < n->items.n; i++) load_expr(S, n->items.v[i]->b);
        pend(S, n, PART_FRAME);
        break;
    case N_GENERATION: case N_SCOPE_BLOCK: case N_AUTOESCAPE:
        pend(S, n, PART_FRAME);
        break;
    default:
        break;
    }
}
static void visit_stmts(Scopes *S, const NodeList *body) {
    for (int i = 0; i < body->n; i++) visit_stmt(S, body->v[i]);
}

/* Jinja2 compiles a block set's filter in the block's frame without having
 * visited it there: a name no frame in sight has fails the compile. */
static void check_reachable(Scopes *S, Node *n);
static void check_visit(Node *n, void *S) { check_reachable(S, n); }
static void check_reachable(Scopes *S, Node *n) {
    if (!n) return;
    if (n->kind == N_NAME && !has_ref(S, n->sym)) {
        S->rt->line = n->line;
        S->rt->col = n->col;
        rt_throw(S->rt, CF_ERR_ASSERTION, "Tried to resolve a name to a reference that was unknown to the frame ('%s')",
                 n->name->data);
    }
    each_child(n, check_visit, S);
}

static FrameInit *frame_init_of(Scopes *S, Node *n) {
    if (!n->init) n->init = rt_alloc0(S->rt, sizeof(FrameInit));
    return n->init;
}

/* The names the frame at S->depth starts missing, defined since undo entry
 * `from`: into n's FrameInit. */
static void record_missing(Scopes *S, Node *n, int part, size_t from) {
    int count = 0;
    for (size_t k = from; k < S->nundo; k++) {
        int sym = S->undo[k].sym;
        count += S->ref_depth[sym] == S->depth && S->ref_missing[sym];
    }
    if (!count) return;
    int *syms = rt_alloc(S->rt, (size_t)count * sizeof(int));
    int j = 0;
    for (size_t k = from; k < S->nundo; k++) {
        int sym = S->undo[k].sym;
        if (S->ref_depth[sym] == S->depth && S->ref_missing[sym]) syms[j++] = sym;
    }
    FrameInit *fi = frame_init_of(S, n);
    if (part == PART_ELSE) {
        fi->nelse = count;
        fi->else_syms = syms;
        return;
    }
    fi->n = count;
    fi->syms = syms;
    fi->slots = rt_alloc(S->rt, (size_t)count);
    memset(fi->slots, SLOT_NONE, (size_t)count);   /* (scope_layout fills in those a layout has) */
}

static void visit_frame(Scopes *S, Node *n, int part);
static void visit_pending(Scopes *S, size_t from) {
    size_t to = S->npending;
    for (size_t i = from; i < to; i++) {
        Pending p = S->pending[i];   /* (visiting may move the array) */
        visit_frame(S, p.n, p.part);
    }
    S->npending = from;
}

static void visit_frame(Scopes *S, Node *n, int part) {
    const struct cf_template *t = S->t;
    size_t undo_from = S->nundo, pending_from = S->npending;
    int saved_floor = S->floor, saved_branch = S->in_branch;
    S->depth++;
    S->in_branch = 0;
    switch (n->kind) {
    case N_FOR:
        if (part == PART_ELSE) {
            visit_stmts(S, &n->alt);
            break;
        }
        param(S, t->sym_loop);
        param_target(S, n->a);
        visit_stmts(S, &n->body);
        break;
    case N_MACRO:   /* parameters, then the defaults (they run in the macro's frame), then the body */
        for (int i = 0; i < n->nparams; i++) param(S, n->param_syms[i]);
        if (n->flag & MF_CALLER) param(S, t->sym_caller);
        if (n->flag & MF_VARARGS) param(S, t->sym_varargs);
        if (n->flag & MF_KWARGS) param(S, t->sym_kwargs);
        for (int i = 0; i < n->items.n; i++) load_expr(S, n->items.v[i]);
        visit_stmts(S, &n->body);
        break;
    case N_WITH:
        for (int i = 0; i < n->items.n; i++) store_target(S, n->items.v[i]->a);
        visit_stmts(S, &n->body);
        break;
    case N_SET_BLOCK:   /* (its filter is checked once the body is compiled, below) */
        visit_stmts(S, &n->body);
        break;
    case N_FILTER_BLOCK:
        visit_stmts(S, &n->body);
        load_expr(S, n->c);
        break;
    case N_SCOPE_BLOCK:   /* a function of the render's context: no enclosing frame in sight */
        S->floor = S->depth;
        param(S, t->sym_self);
        param(S, t->sym_super);
        visit_stmts(S, &n->body);
        break;
    case N_AUTOESCAPE:
        load_expr(S, n->a);
        visit_stmts(S, &n->body);
        break;
    default:   /* N_GENERATION: a call block's caller without parameters */
        visit_stmts(S, &n->body);
        break;
    }
    record_missing(S, n, part, undo_from);
    visit_pending(S, pending_from);
    if (n->kind == N_SET_BLOCK) check_reachable(S, n->c);
    while (S->nundo > undo_from) {
        const Undo *u = &S->undo[--S->nundo];
        S->ref_depth[u->sym] = u->depth;
        S->ref_missing[u->sym] = u->missing;
    }
    S->depth--;
    S->floor = saved_floor;
    S->in_branch = saved_branch;
}

void scope_analyze(Rt *rt, struct cf_template *t) {
    mark_names(rt, t);
    size_t n = (size_t)(t->nsyms ? t->nsyms : 1);
    Scopes S = {0};
    S.rt = rt;
    S.t = t;
    S.ref_depth = rt_alloc(rt, n * sizeof(int));
    for (size_t i = 0; i < n; i++) S.ref_depth[i] = -1;
    S.ref_missing = rt_alloc0(rt, n);
    param(&S, t->sym_self);   /* (Jinja2 binds `self` itself) */
    visit_stmts(&S, &t->body);
    t->sym_starts_undef = rt_alloc0(rt, n);
    for (int i = 0; i < t->nsyms; i++) t->sym_starts_undef[i] = S.ref_depth[i] == 0 && S.ref_missing[i];
    visit_pending(&S, 0);
    t->sym_input = rt_alloc0(rt, n * sizeof(SymInput));
    for (int i = 0; i < t->nsyms; i++) {
        SymInput *si = &t->sym_input[i];
        si->name = t->syms[i];
        si->chat = t->sym_chat[i];
        si->how = i == t->sym_self ? SI_SELF : t->sym_starts_undef[i] ? SI_UNDEF : SI_INPUT;
        si->fallback = si->how == SI_INPUT && t->sym_builtin[i].type != VT_MISSING ? t->sym_builtin[i] : t->sym_undef[i];
    }
    t->nchat_inputs = 0;
    for (int i = 0; i < t->nsyms; i++)
        if (t->sym_input[i].how == SI_INPUT && t->sym_input[i].chat >= 0) {
            t->chat_inputs[t->nchat_inputs].sym = i;
            t->chat_inputs[t->nchat_inputs++].chat = t->sym_input[i].chat;
        }
}

/* ---- frame layouts ----
 * A loop's body, a macro's body and a block set's, filter block's or
 * generation block's body each run in a frame of their own, whose names are
 * known here: the loop variable and targets, or the parameters, then the
 * names the body sets (not those of nested frames). Each gets a fixed slot,
 * so a name is read and assigned without searching the frame (interp.c:
 * frame_new_layout, slot_holds, bind_target). The slots are hints checked
 * at run time: the interpreter stays exact whatever they say, they only
 * decide how often the search is skipped. A block set, filter or
 * generation body that sets nothing gets no frame (nslots 0). */
typedef struct Layout {
    const Node *scope;    /* the node making the frame, NULL outside any */
    int syms[SLOT_MAX];
    int n;
} Layout;

static void layout_add(Layout *lo, int sym) {
    for (int i = 0; i < lo->n; i++)
        if (lo->syms[i] == sym) return;
    if (lo->n < SLOT_MAX) lo->syms[lo->n++] = sym;
}

static void layout_add_target(Layout *lo, const Node *target) {
    if (target->kind == N_NAME) layout_add(lo, target->sym);
    else if (target->kind == N_TUPLE)
        for (int i = 0; i < target->items.n; i++) layout_add_target(lo, target->items.v[i]);
}

/* The names a body's statements set in the body's own frame. */
static void layout_add_sets(Layout *lo, const NodeList *body) {
    for (int i = 0; i < body->n; i++) {
        const Node *n = body->v[i];
        switch (n->kind) {
        case N_SET: case N_SET_BLOCK:
            layout_add_target(lo, n->a);
            break;
        case N_MACRO:
            layout_add(lo, n->sym);
            break;
        case N_IF:
            layout_add_sets(lo, &n->body);
            for (int k = 0; k < n->items.n; k++) layout_add_sets(lo, &n->items.v[k]->body);
            layout_add_sets(lo, &n->alt);
            break;
        default:   /* loops, macros, with, blocks, captures: frames of their own */
            break;
        }
    }
}

static int layout_slot(const Layout *lo, int sym) {
    for (int i = 0; lo && i < lo->n; i++)
        if (lo->syms[i] == sym) return i;
    return SLOT_NONE;
}

static void layout_init_slots(Node *n, const Layout *lo) {
    FrameInit *fi = n->init;
    for (int i = 0; fi && i < fi->n; i++) fi->slots[i] = (uint8_t)layout_slot(lo, fi->syms[i]);
}

static void layout_tree(const struct cf_template *t, Node *n, const Layout *lo);
static void layout_list(const struct cf_template *t, NodeList *l, const Layout *lo) {
    for (int i = 0; i < l->n; i++) layout_tree(t, l->v[i], lo);
}
typedef struct LayoutWalk { const struct cf_template *t; const Layout *lo; } LayoutWalk;
static void layout_child(Node *n, void *w) { layout_tree(((LayoutWalk *)w)->t, n, ((LayoutWalk *)w)->lo); }
static void layout_tree(const struct cf_template *t, Node *n, const Layout *lo) {
    if (!n) return;
    switch (n->kind) {
    case N_NAME:
        if (n->op != NAME_TOP_LEVEL) {
            n->flag = (uint8_t)layout_slot(lo, n->sym);
            n->scope = n->flag == SLOT_NONE ? NULL : lo->scope;
        }
        return;
    case N_FOR: {
        layout_tree(t, n->b, lo);   /* the iterable: in the enclosing frame */
        Layout in = {n, {0}, 0};
        if (t->sym_loop >= 0) layout_add(&in, t->sym_loop);   /* slot 0, the target next (loop_run) */
        layout_add_target(&in, n->a);
        layout_add_sets(&in, &n->body);
        n->nslots = (int16_t)in.n;
        layout_init_slots(n, &in);
        layout_tree(t, n->a, &in);
        layout_tree(t, n->c, &in);   /* the filter test: a frame of the same layout */
        layout_list(t, &n->body, &in);
        layout_list(t, &n->alt, NULL);   /* else: a frame without a layout */
        return;
    }
    case N_MACRO: {   /* also a call block's caller */
        Layout in = {n, {0}, 0};
        for (int i = 0; i < n->nparams && i < SLOT_MAX; i++) layout_add(&in, n->param_syms[i]);
        if (n->nparams <= SLOT_MAX) layout_add_sets(&in, &n->body);
        n->nslots = (int16_t)in.n;
        layout_init_slots(n, &in);
        layout_list(t, &n->items, &in);   /* defaults run in the macro's frame */
        layout_list(t, &n->body, &in);
        return;
    }
    case N_SET_BLOCK: case N_FILTER_BLOCK: case N_GENERATION: {
        if (n->kind == N_SET_BLOCK) layout_tree(t, n->a, lo);   /* the target: the enclosing frame's */
        Layout in = {n, {0}, 0};
        layout_add_sets(&in, &n->body);
        n->nslots = (int16_t)in.n;
        const Layout *body = in.n ? &in : lo;
        layout_init_slots(n, body);
        layout_list(t, &n->body, body);
        layout_tree(t, n->c, body);   /* the filter runs in the body's frame */
        return;
    }
    case N_WITH:
        for (int i = 0; i < n->items.n; i++) {
            layout_tree(t, n->items.v[i]->b, lo);
            layout_tree(t, n->items.v[i]->a, NULL);
        }
        layout_list(t, &n->body, NULL);
        return;
    case N_SCOPE_BLOCK: case N_AUTOESCAPE:
        layout_tree(t, n->a, lo);
        layout_list(t, &n->body, NULL);
        return;
    default: {
        LayoutWalk w = {t, lo};
        each_child(n, layout_child, &w);
        return;
    }
    }
}

void scope_layout(const struct cf_template *t) {
    for (int i = 0; i < t->body.n; i++) layout_tree(t, t->body.v[i], NULL);
}
