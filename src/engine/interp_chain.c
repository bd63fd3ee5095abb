/* interp_chain.c — the truth of a test where only its truth matters (if,
 * elif, inline if, not), and if/elif chains: the memo of a chain's shared
 * operand, the guards that pass over the tests its value rules out, and
 * the memo of pure filters' results they stand on. The tree walk that
 * calls into it is interp.c; what the two share is interp_internal.h. */
#include "interp_internal.h"
#include "lexer.h"
#include "operators.h"

/* The truth of an expression where only its truth matters (if, inline if,
 * not): `a and b` is true exactly when both are, so no Value is built and
 * eval is not entered for the usual tests. Same evaluation order. */
static NOINLINE bool cond_equality_slow(Interp *I, const Node *n, Frame *f);
static NOINLINE bool cond_equality_miss(Interp *I, const Node *n, const Dict *d, AttrCacheEntry *c) {
    Value left = getattr_dict_miss(n->a, d, c);
    if (left.type == VT_STR) return str_equality(n, left);
    set_pos(I, n);
    return interp_compare(I, n->op, left, n->v);
}
static NOINLINE bool cond_equality_other(Interp *I, const Node *n, Value left) {   /* left not a str */
    set_pos(I, n);
    return interp_compare(I, n->op, left, n->v);
}

/* a = m.role|lower (simple, FILTER_PURE) with m already found as obj: what
 * eval_filter computes, without looking m up again. */
static NOINLINE Value filtered_attr_miss(Interp *I, const Node *a, Value obj) {
    Value v = getattr_of(I, a->a, obj);
    set_pos(I, a);
    return filter_pure(I, a, v);
}

/* m.role|lower == 'user' (Command-A's elif chain): a pure filter's result
 * for a dict's plain key is cached as the key's value is, by dict, key and
 * filter (a dict never changes once a template sees it, and the filter's
 * result depends on the value alone). A miss evaluates the filter as eval
 * does. Not under autoescape (filter_pure's memo is not either). */
static NOINLINE bool cond_equality_filtered(Interp *I, const Node *n, Frame *f) {
    const Node *a = n->a, *g = a->a;
    Value obj;
    if (g->kind == N_GETATTR && g->simple && g->flag && !I->autoescape && name_bound(I, g, f, &obj) &&
        obj.type == VT_DICT) {
        AttrCacheEntry *c = filtered_slot(I, obj.u.dict, g->attr);
        const void *key = filtered_key(obj.u.dict);
        if (c->dict == key && c->attr == g->attr && c->filter == a->filter) return str_equality(n, c->v);
        Value left = filtered_attr_miss(I, a, obj);
        if (left.type != VT_STR) return cond_equality_other(I, n, left);
        c->dict = key;
        c->attr = g->attr;
        c->filter = a->filter;
        c->v = left;
        return str_equality(n, left);
    }
    /* (safety_mode|upper == 'STRICT': what eval_filter does, without entering eval) */
    Value v = operand(I, g, f);
    set_pos(I, a);
    Value left = filter_pure(I, a, v);
    if (left.type == VT_STR) return str_equality(n, left);
    return cond_equality_other(I, n, left);
}

/* A test of an if/elif chain whose left operand name.key|filter the chain
 * shares (ast.h: N_IF_CHAIN), while its run's memo is installed: the
 * operand evaluated as cond_equality_slow does, the first time only. Kept
 * when its name holds a dict outside autoescape: a dict's key cannot
 * change while the tests run, and a pure filter's result depends on its
 * operand alone. */
static NOINLINE bool cond_equality_chained(Interp *I, const Node *n, Frame *f) {
    IfMemo *m = I->if_memo;
    Value left;
    if (m->set) {
        left = m->v;
    } else {
        const Node *a = n->a, *g = a->a;   /* name.key|filter */
        Value obj = g->simple == GA_NAME_TOP ? lookup_top(I, g->sym) : lookup_name(I, g->a, f);
        left = getattr_of(I, g, obj);
        set_pos(I, a);   /* as eval_filter: a simple FILTER_PURE filter */
        left = filter_pure(I, a, left);
        if (obj.type == VT_DICT && !I->autoescape) {
            m->v = left;
            m->set = true;
        }
    }
    Value right = n->flag ? n->v : operand(I, n->b, f);
    if (left.type == VT_STR && right.type == VT_STR) return strs_equal(left.u.s, right.u.s) == (n->op == OP_EQ);
    set_pos(I, n);
    return interp_compare(I, n->op, left, right);
}

/* messages[loop.index0 - 1].role != "tool" (Qwen's run of tool messages):
 * the item found in place (loop_offset_item), then its attribute as
 * eval_getattr_node reads it; else as any other equality. */
static NOINLINE bool cond_equality_loop_item(Interp *I, const Node *n, Frame *f) {
    Value item;
    if (!loop_offset_item(I, n->a->a, f, &item)) return cond_equality_slow(I, n, f);
    Value left = getattr_of(I, n->a, item);
    if (left.type == VT_STR) return str_equality(n, left);
    return cond_equality_other(I, n, left);
}

/* m.role == 'user' (CMP_ATTR_STR: the shape the parser checked, so that
 * only the values are tested here): cond_equality's first case. */
NOINLINE bool cond_attr_equality(Interp *I, const Node *n, Frame *f) {
    const Node *a = n->a;
    Value obj, left;
    if (!name_bound(I, a, f, &obj) || obj.type != VT_DICT) return cond_equality_slow(I, n, f);
    if ((a->flag & GA_KEY_KNOWN) && known_key_get(obj.u.dict, a->attr, a->v, &left)) {
        if (left.type == VT_STR) return str_equality(n, left);
        return cond_equality_other(I, n, left);
    }
    AttrCacheEntry *c = attr_slot(I, obj.u.dict, a->attr);
    if (c->dict != obj.u.dict || c->attr != a->attr) return cond_equality_miss(I, n, obj.u.dict, c);
    left = c->v;
    if (left.type == VT_STR) return str_equality(n, left);
    return cond_equality_slow(I, n, f);
}

/* m.role == 'user' and the other shapes with a path of their own; every
 * path leaves by a tail call. */
NOINLINE bool cond_equality(Interp *I, const Node *n, Frame *f) {
    const Node *a = n->a;
    if (n->flag && n->v.type == VT_STR && a->kind == N_GETATTR && a->simple && a->flag) {
        return cond_attr_equality(I, n, f);
    } else if (n->flag && n->v.type == VT_STR && a->kind == N_FILTER && a->simple && a->op == FILTER_PURE) {
        return cond_equality_filtered(I, n, f);
    } else if (n->flag && n->v.type == VT_STR && a->kind == N_GETATTR && a->a->kind == N_GETITEM &&
               a->a->simple == GI_LOOP_OFFSET) {
        return cond_equality_loop_item(I, n, f);
    }
    return cond_equality_slow(I, n, f);
}

/* A test marked CMP_CHAINED: from its chain's memo while the chain's
 * tests run, else as any other equality. */
NOINLINE bool cond_equality_in_chain(Interp *I, const Node *n, Frame *f) {
    const IfMemo *m = I->if_memo;
    if (m && m->owner == n->chain_if && m->frame == f) {
        if (m->set && m->v.type == VT_STR && n->flag && n->v.type == VT_STR) return str_equality(n, m->v);
        return cond_equality_chained(I, n, f);
    }
    return cond_equality(I, n, f);
}

static NOINLINE bool cond_equality_slow(Interp *I, const Node *n, Frame *f) {
    const Node *a = n->a;   /* m.role, looked up here rather than by a call; loop.index0 read in place */
    int64_t index;
    Value left = a->kind == N_GETATTR && a->simple
                     ? (loop_index_in_place(I, a, f, &index) ? v_int(index) : getattr_of_name_inline(I, a, f))
                     : operand(I, a, f);
    Value right = n->flag ? n->v : operand(I, n->b, f);
    if (left.type == VT_STR && right.type == VT_STR) return strs_equal(left.u.s, right.u.s) == (n->op == OP_EQ);
    set_pos(I, n);
    return interp_compare(I, n->op, left, right);
}

/* One comparison other than ==/!= (loop.index0 > ns.last, 'x' in s): as
 * eval_compare_chain, ints compared in place. */
NOINLINE bool cond_comparison(Interp *I, const Node *n, Frame *f) {
    int64_t index;   /* loop.index0 > ns.last: the index without a call */
    Value left = n->a->kind == N_GETATTR && loop_index_in_place(I, n->a, f, &index) ? v_int(index) : operand(I, n->a, f);
    const Node *b = n->b;   /* (ns.last: looked up here, not by a call) */
    Value right = n->flag ? n->v : b->kind == N_GETATTR && b->simple ? getattr_of_name_inline(I, b, f) : operand(I, b, f);
    set_pos(I, n);
    if (n->op == OP_IN && left.type == VT_STR && right.type == VT_STR) return py_str_contains(I->rt, right.u.s, left.u.s);
    if (left.type == VT_INT && right.type == VT_INT) {
        int64_t x = left.u.i, y = right.u.i;
        switch (n->op) {
        case OP_LT: return x < y;
        case OP_LE: return x <= y;
        case OP_GT: return x > y;
        case OP_GE: return x >= y;
        default: break;
        }
    }
    return interp_compare(I, n->op, left, right);
}

NOINLINE bool cond_test(Interp *I, const Node *n, Frame *f) {
    static const Args no_args = {0, NULL, 0, NULL, NULL};
    const Node *a = n->a;   /* message.content is string: the attribute looked up here, not by a call */
    Value v = a->kind == N_GETATTR && a->simple ? getattr_of_name_inline(I, a, f) : operand(I, a, f);
    bool holds;
    switch (n->op) {   /* a type test without arguments cannot fail */
    case TYPE_TEST_DEFINED: holds = v.type != VT_UNDEFINED && v.type != VT_MISSING; break;
    case TYPE_TEST_UNDEFINED: holds = v.type == VT_UNDEFINED || v.type == VT_MISSING; break;
    case TYPE_TEST_IS_NONE: holds = v.type == VT_NONE; break;
    case TYPE_TEST_STRING: holds = v.type == VT_STR; break;
    case TYPE_TEST_MAPPING: holds = v.type == VT_DICT; break;
    default:
        set_pos(I, n);
        holds = n->test(I->rt, v, &no_args);
        break;
    }
    return holds != (n->flag == TEST_NEGATED);
}

/* The right side of and/or (the parser right-nests a chain) is taken in
 * the same call: `a or (b and not c) or d` recurses only into its parts. */
/* An operand of and/or/not: loop.first and loop.last of a frame's loop
 * (`loop.first or ...`, `not loop.last`) answered from the loop in place. */
static ALWAYS_INLINE bool cond_operand(Interp *I, const Node *n, Frame *f) {
    Value obj;
    if (n->kind == N_GETATTR && (n->op == LA_FIRST || n->op == LA_LAST) && n->simple == GA_NAME &&
        name_bound(I, n, f, &obj) && obj.type == VT_OBJECT && obj.u.obj->type == &LOOP_TYPE) {
        Loop *l = obj.u.obj->data;
        if (n->op == LA_FIRST) return l->index0 == 0;
        loop_look_ahead(I, l, false);   /* (as loop_attr: what it found is kept) */
        return l->index0 == (int64_t)l->items->len - 1;
    }
    return cond(I, n, f);
}

NOINLINE bool cond_logic(Interp *I, const Node *n, Frame *f) {
    stack_check(I);
    for (;;) {
        switch (n->kind) {
        case N_NOT: return !cond_operand(I, n->a, f);
        case N_AND:
            if (!cond(I, n->a, f)) return false;
            break;
        case N_OR:
            if (cond_operand(I, n->a, f)) return true;
            break;
        default: return cond(I, n, f);
        }
        n = n->b;
    }
}

/* message.role|lower in an elif chain, messages|length in a loop: a pure
 * filter's result on an immutable operand (a str, list or dict, as it
 * came) is remembered for the render, with the steps it charged, which a
 * repeat charges again. Scalar results only: a new list or dict each time
 * keeps `is sameas` as Jinja2 has it. Not under autoescape (str and escape
 * depend on it). */
NOINLINE Value filter_pure(Interp *I, const Node *n, Value v) {
    static const Args no_args = {0, NULL, 0, NULL, NULL};
    Rt *rt = I->rt;
    FilterMemo *m = NULL;
    if (!v.flags && !v.iter && !I->autoescape &&
        (v.type == VT_STR || v.type == VT_LIST || v.type == VT_TUPLE || v.type == VT_DICT)) {
        uintptr_t h = (uintptr_t)v.u.s >> 4;
        m = &I->filter_memo[h & (FILTER_MEMO_SIZE - 1)];
        if (m->operand == v.u.s && m->filter == n->filter && m->type == v.type) {
            rt_step(rt, m->steps);
            return m->v;
        }
    }
    uint64_t before = rt->steps;
    charge_operand(rt, v);
    Value r = n->filter(rt, v, &no_args);
    if (m && (r.type == VT_STR || r.type == VT_INT || r.type == VT_BOOL || r.type == VT_FLOAT || r.type == VT_NONE)) {
        m->operand = v.u.s;
        m->filter = n->filter;
        m->type = v.type;
        m->v = r;
        m->steps = rt->steps - before;
        m->chain = NULL;
        m->decided_for = NULL;
    }
    return r;
}

static bool str_among(const Str *s, const Str *const *set) {
    for (; *set; set++)
        if (strs_equal(s, *set)) return true;
    return false;
}

/* filter_pure's memo entry for n's filter on v, if it holds one (what
 * filter_pure would return at the cost of the entry's steps), else NULL. */
static ALWAYS_INLINE FilterMemo *filter_memo_hit(Interp *I, const Node *n, Value v) {
    if (v.flags || v.iter || I->autoescape ||
        !(v.type == VT_STR || v.type == VT_LIST || v.type == VT_TUPLE || v.type == VT_DICT))
        return NULL;
    FilterMemo *m = &I->filter_memo[((uintptr_t)v.u.s >> 4) & (FILTER_MEMO_SIZE - 1)];
    return m->operand == v.u.s && m->filter == n->filter && m->type == v.type ? m : NULL;
}

/* Which of chain n's tests E (a str, m's result) leaves to run: bit k for
 * a test without a guard or whose guard lists E. */
static NOINLINE uint32_t chain_candidates(const ChainGuards *g, Value e) {
    uint32_t bits = 0;
    for (int k = 0; k < g->ntests; k++)
        if (!g->consts[k] || str_among(e.u.s, g->consts[k])) bits |= (uint32_t)1 << k;
    return bits;
}

/* E's value (m's result) decides chain n's branch: it, after `steps` elif steps. */
static inline void decide(FilterMemo *m, const Node *n, const NodeList *branch, int steps) {
    m->decided_for = n;
    m->decided = branch;
    m->decided_steps = (uint32_t)steps;
}

/* chain_dispatch's walk of the tests once E's memo entry m is known: the
 * tests E's value rules out are passed over in one step charge (the same
 * one elif step each; nothing runs between them, so a limit reached there
 * stops the render at the same point), the others run as in the walk. */
static ALWAYS_INLINE const NodeList *chain_candidates_run(Interp *I, const Node *n, Frame *f, FilterMemo *m, Value e) {
    const ChainGuards *g = n->guards;
    if (m->chain != n) {
        uint32_t bits = chain_candidates(g, e);
        int first = bits ? __builtin_ctz(bits) : -1;
        m->candidates = bits;
        m->chain = n;
        if (!bits) decide(m, n, &n->alt, g->ntests - 1);   /* no test can hold: the else, after every elif step */
        else if (g->consts[first] && g->then[first] == GUARD_HOLDS)   /* the first one left holds */
            decide(m, n, first ? &n->items.v[first - 1]->body : &n->body, first);
    }
    uint32_t left = m->candidates;
    int reached = 0;   /* the elif steps charged so far: one for each test after the first reached */
    while (left) {
        int k = __builtin_ctz(left);
        left &= left - 1;
        if (k > reached) rt_step(I->rt, (uint64_t)(k - reached));
        reached = k;
        const Node *test = k ? n->items.v[k - 1]->a : n->a;
        const NodeList *body = k ? &n->items.v[k - 1]->body : &n->body;
        uint8_t then = g->consts[k] ? g->then[k] : GUARD_TEST;
        if (then == GUARD_HOLDS || cond(I, then == GUARD_AND ? test->b : test, f)) return body;
    }
    if (g->ntests - 1 > reached) rt_step(I->rt, (uint64_t)(g->ntests - 1 - reached));
    return &n->alt;
}

/* A guarded chain (ast.h: ChainGuards): E evaluated first, as the first
 * test would (cond_equality_chained), and into the memo on the same terms;
 * then each test E's value rules out is passed over (its elif step still
 * charged), and a test E's value decides is not run. */
static ALWAYS_INLINE const NodeList *chain_dispatch(Interp *I, const Node *n, Frame *f, IfMemo *memo, Value e,
                                                     FilterMemo *m) {
    const ChainGuards *g = n->guards;
    const Node *a = g->operand;
    FilterMemo *kept = m;
    if (m) {   /* filter_pure's hit, without the call */
        rt_step(I->rt, m->steps);
        e = m->v;
    } else {   /* (a value's first run walks the tests: most values of a render's chain come once) */
        Value operand_value = e;
        e = filter_pure(I, a, e);
        kept = filter_memo_hit(I, a, operand_value);   /* the entry filter_pure made, if it kept e */
    }
    memo->v = e;
    memo->set = true;
    if (e.type != VT_STR) return if_branch(I, n, f);   /* (the tests read E from the memo) */
    if (m && g->ntests <= 32) return chain_candidates_run(I, n, f, m, e);
    /* The walk. While no test has run (each one so far passed over by its
     * guard), kept is as filter_pure left it: a branch reached then is the
     * one E decides, remembered there for E's next run. */
    bool none_ran = true;
    for (int k = 0; k < g->ntests; k++) {
        if (k) rt_step(I->rt, 1);   /* as if_branch, per elif reached */
        const Node *test = k ? n->items.v[k - 1]->a : n->a;
        const NodeList *body = k ? &n->items.v[k - 1]->body : &n->body;
        const Str *const *set = g->consts[k];
        if (!set) {
            none_ran = false;
            if (cond(I, test, f)) return body;
        } else if (str_among(e.u.s, set)) {
            uint8_t then = g->then[k];
            if (then == GUARD_HOLDS) {
                if (kept && none_ran) decide(kept, n, body, k);
                return body;
            }
            none_ran = false;
            if (cond(I, then == GUARD_AND ? test->b : test, f)) return body;
        }
    }
    if (kept && none_ran) decide(kept, n, &n->alt, g->ntests - 1);
    return &n->alt;
}

/* The branch an N_IF_CHAIN takes: if_branch (or chain_dispatch), with the
 * chain's memo installed while the tests run (a throw ends the render, so
 * nothing reads it after). A guarded chain whose E the filter memo holds
 * with the branch E decides (FilterMemo.decided: Command-A's role chain,
 * every message after the first of its role) takes it at once, charging
 * what the walk would: the filter's steps, then one a test passed over. */
static ALWAYS_INLINE const NodeList *chain_branch(Interp *I, const Node *n, Frame *f) {
    const ChainGuards *g = n->guards;
    FilterMemo *m = NULL;
    Value e = {0};
    bool dispatch = false;
    if (g) {
        const Node *a = g->operand, *ga = a->a;   /* E is name.key|filter */
        Value obj = ga->simple == GA_NAME_TOP ? lookup_top(I, ga->sym) : lookup_name(I, ga->a, f);
        if (obj.type == VT_DICT && !I->autoescape) {
            e = getattr_of(I, ga, obj);
            set_pos(I, a);
            m = filter_memo_hit(I, a, e);
            if (m && m->decided_for == n) {   /* E's value alone picks the branch: no test runs */
                rt_step(I->rt, m->steps + m->decided_steps);   /* (one limit test: nothing runs between the two) */
                return m->decided;
            }
            dispatch = true;
        }
    }
    IfMemo memo = {.owner = n, .frame = f};
    IfMemo *const outer = I->if_memo;
    I->if_memo = &memo;   /* (no memo of E without dispatch: the tests as they are) */
    const NodeList *branch = dispatch ? chain_dispatch(I, n, f, &memo, e, m) : if_branch(I, n, f);
    I->if_memo = outer;
    return branch;
}

static NOINLINE const NodeList *chain_pick_walk(Interp *I, const Node *n, Frame *f) { return chain_branch(I, n, f); }

/* (Out of line: the chain's memo and dispatch stay out of exec_body's
 * frame.) A branch E's value decides, E's dict in its slot and its key a
 * known one, is taken here without a call (chain_branch's first case);
 * anything else goes to chain_branch, which looks again from the start
 * (nothing here is seen but the position, which it sets the same). */
NOINLINE const NodeList *chain_pick(Interp *I, const Node *n, Frame *f) {
    const ChainGuards *g = n->guards;
    Value obj, e;
    if (g && !I->autoescape) {
        const Node *a = g->operand, *ga = a->a;
        if (ga->simple == GA_NAME && (ga->flag & GA_KEY_KNOWN) && slot_holds(f, ga->sym, ga->a->flag, &obj) &&
            obj.type == VT_DICT && known_key_get(obj.u.dict, ga->attr, ga->v, &e)) {
            set_pos(I, a);
            FilterMemo *m = filter_memo_hit(I, a, e);
            if (m && m->decided_for == n) {
                rt_step(I->rt, m->steps + m->decided_steps);
                return m->decided;
            }
        }
    }
    return chain_pick_walk(I, n, f);
}
