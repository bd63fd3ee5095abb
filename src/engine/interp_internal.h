/* interp_internal.h — the interpreter's state (frames, the render's
 * Interp, the runtime objects a template sees: macros and loops) and the
 * tree walk's hot helpers (name lookup, obj.attr, the truth of a test),
 * kept inline here so that interp.c (expressions, statements), interp_chain.c
 * (tests and if/elif chains) and loop_object.c (the `loop` variable's
 * Python face) all inline them. Not for any other file. */
#ifndef CF_INTERP_INTERNAL_H
#define CF_INTERP_INTERNAL_H

#include "interp.h"
#include "lexer.h"   /* OP_ADD, OP_SUB */

#define FRAME_INLINE 6
typedef struct Frame {
    struct Frame *parent;
    int n, cap;
    int nslots;              /* entries [0, nslots) are its layout's slots (parser.c: frame layouts) */
    const Node *scope;       /* the N_FOR / N_MACRO whose layout it has, or NULL */
    int *syms;               /* SYM_UNBOUND: a slot whose name is not set (yet) */
    Value *vals;
    int syms_inline[FRAME_INLINE];   /* most frames hold a few names */
    Value vals_inline[FRAME_INLINE];
} Frame;

typedef enum { CTL_NONE, CTL_BREAK, CTL_CONTINUE } Ctl;

/* Recent dict.attr results. Dicts never change once a template can see
 * them and attribute names are interned, so (dict, name) pointers identify
 * a result for the whole render: `m.role` tested in an elif chain is looked
 * up once. Hits are near in time, so a small table does (it is cleared for
 * every render: 16 entries cost less than 8 or 32 over seeds x
 * conversations), indexed by the dict's address plus the name's hash. */
#define ATTR_CACHE_SIZE 16
typedef struct AttrCacheEntry {
    const void *dict;   /* the Dict; for d.attr|filter (filtered_slot) its address + 1, which no d.attr entry has */
    const Str *attr;
    Value v;
    FilterFn filter;    /* d.attr|filter's filter */
} AttrCacheEntry;

/* Recent results of pure filters (filter_pure). An entry whose result is
 * an elif chain's shared operand also keeps which of that chain's tests
 * the result leaves to run (interp_chain.c: chain_dispatch): `chain` NULL until
 * then, and again whenever the entry takes another operand. */
#define FILTER_MEMO_SIZE 8
typedef struct FilterMemo {
    const void *operand;
    FilterFn filter;
    Value v;
    uint64_t steps;
    uint8_t type;
    const void *chain;     /* the N_IF_CHAIN `candidates` is for, or NULL */
    uint32_t candidates;   /* bit k: test k is unguarded, or its guard lists v */
    /* The N_IF_CHAIN whose branch v decides whatever else holds (the first
     * test v leaves holds by its guard alone, or v leaves none), or NULL;
     * that branch, and the elif steps charged on the way there. */
    const void *decided_for;
    const struct NodeList *decided;
    uint32_t decided_steps;
} FilterMemo;

/* An if/elif chain's shared left operand (ast.h: N_IF_CHAIN) while
 * the chain's tests run: its value once evaluated, for the run of `owner`
 * in `frame` (a test of a nested run, or of another frame, misses). */
typedef struct IfMemo {
    const struct Node *owner;
    const Frame *frame;
    bool set;
    Value v;
} IfMemo;

typedef struct Interp {
    Rt *rt;
    const struct cf_template *t;
    Value *globals;          /* per symbol; VT_MISSING = not resolved yet */
    const RenderInput *in;   /* where unresolved names come from */
    StrBuf *out;             /* current output (captures swap it) */
    StrBuf *root;            /* the template's own output */
    SpanVec *spans;
    int depth;               /* macro / loop() / capture nesting */
    uintptr_t stack_limit;   /* lowest C stack address the render may reach */
    size_t stack_budget;     /* bytes of C stack the render may use */
    const char *now;
    bool autoescape;         /* inside {% autoescape true %} */
    size_t root_counted, root_chars;  /* bytes of root already counted, their code points */
    struct Accumulator *acc;   /* ACCUMULATORS, allocated at the first accumulate */
    unsigned acc_next;         /* the entry the next new accumulator takes */
    IfMemo *if_memo;           /* the innermost chain whose tests are running, or NULL */
    /* {{ x|tojson }}'s JSON is written here, then into the output (interp.c:
     * output_tojson): one buffer for the render instead of a str each */
    StrBuf json_scratch;       /* p NULL until the first use */
    bool json_scratch_busy;
    /* Last, so that a render zeroes what comes before them and only the
     * key each entry is found by (interp_init): an attribute entry is read
     * only after its dict matches, a filter entry after its operand does,
     * and neither is ever NULL. */
    AttrCacheEntry attr_cache[ATTR_CACHE_SIZE];
    FilterMemo filter_memo[FILTER_MEMO_SIZE];
} Interp;

static inline AttrCacheEntry *attr_slot(Interp *I, const Dict *d, const Str *attr) {
    uintptr_t h = ((uintptr_t)d >> 4) + attr->hash;   /* (attribute names are hashed when parsed) */
    return &I->attr_cache[h & (ATTR_CACHE_SIZE - 1)];
}
/* d.attr|filter's entry: across the table from d.attr's, so that the two
 * do not evict each other. */
static inline AttrCacheEntry *filtered_slot(Interp *I, const Dict *d, const Str *attr) {
    uintptr_t h = ((uintptr_t)d >> 4) + attr->hash + ATTR_CACHE_SIZE / 2;
    return &I->attr_cache[h & (ATTR_CACHE_SIZE - 1)];
}
static inline const void *filtered_key(const Dict *d) { return (const char *)(const void *)d + 1; }

/* Runtime objects */
typedef struct Macro { const Node *node; Frame *closure; Value caller; } Macro;
typedef struct Loop {
    List *items;             /* the items (`for x in xs if test`: those kept so far) */
    int64_t index0;
    int depth0;
    const Node *node;        /* the N_FOR, for loop(...) recursion */
    Frame *outer;            /* frame the loop runs in */
    List *last_changed;      /* loop.changed() memory; NULL = never called */
    /* `for x in xs if test`: Jinja2 filters through a generator, so an
     * item's test runs when the loop reaches it (after the body of the item
     * before), or when loop.last, .nextitem or .length looks ahead. */
    const List *source;      /* xs, while items remain untested; else NULL */
    size_t next_source;      /* the next one to test */
    Frame *test_frame;
    /* Without a test: how many items looking ahead has taken (Python's loop
     * peeks its iterator), so a break leaves a generator after them. */
    size_t looked_ahead;
} Loop;

static inline Interp *INTERP(Rt *rt) { return (Interp *)rt->interp; }

/* Tests a filtered loop's source items until `need` are kept or none is
 * left (interp.c: the tests run in the loop's frames). */
void loop_fill(Interp *I, Loop *l, size_t need);
/* Whether item i exists (testing up to it). */
static inline bool loop_has(Interp *I, Loop *l, size_t i) {
    if (l->source && l->items->len <= i) loop_fill(I, l, i + 1);
    return i < l->items->len;
}
/* What loop.last / .nextitem (ahead 1) and .length (ahead: all) need known. */
static inline void loop_look_ahead(Interp *I, Loop *l, bool all) {
    if (l->source) loop_fill(I, l, all ? SIZE_MAX : (size_t)l->index0 + 2);
    size_t upto = all ? l->items->len : (size_t)l->index0 + 2;
    if (upto > l->looked_ahead) l->looked_ahead = upto;
}

/* loop.index0 and the other attributes the parser knows (LA_*), read in
 * place (loop_object.c). */
Value loop_attr(Interp *I, Loop *l, uint8_t id);
/* The block rendered into a string, as self.name() does (interp.c), and
 * `self`'s object type (block_ref.c). */
Value block_render(Interp *I, const struct Node *block);
extern const ObjType TEMPLATE_REF_TYPE;
/* loop(items): a recursive loop's next level (interp.c). */
Value loop_call(Rt *rt, Obj *self, const Args *args);
/* The LoopContext object type (loop_object.c). */
extern const ObjType LOOP_TYPE;

/* ---- the tree walk's hot helpers, shared by interp.c (expressions and
 * statements) and interp_chain.c (truth of tests, if/elif chains) ---- */

/* Defined in interp.c. */
Value interp_eval(Interp *I, const Node *n, Frame *f);
bool interp_compare(Interp *I, uint8_t op, Value a, Value b);
Value resolve_global(Interp *I, int sym);
Value lookup_in_block(Interp *I, Frame *f, int sym);
Value getattr_of_name(Interp *I, const Node *n, Frame *f);
Value getattr_of_rest(Interp *I, const Node *n, Value obj);
Value getattr_dict_miss(const Node *n, const Dict *d, AttrCacheEntry *c);
/* Defined in interp_chain.c. */
bool cond_equality(Interp *I, const Node *n, Frame *f);
bool cond_attr_equality(Interp *I, const Node *n, Frame *f);
bool cond_equality_in_chain(Interp *I, const Node *n, Frame *f);
bool cond_comparison(Interp *I, const Node *n, Frame *f);
bool cond_test(Interp *I, const Node *n, Frame *f);
bool cond_logic(Interp *I, const Node *n, Frame *f);
Value filter_pure(Interp *I, const Node *n, Value v);
/* The branch an N_IF_CHAIN takes (its else branch when no test holds). */
const NodeList *chain_pick(Interp *I, const Node *n, Frame *f);

/* A name no frame can bind (parser: NAME_TOP_LEVEL). */
static inline Value lookup_top(Interp *I, int sym) {
    Value v = I->globals[sym];
    if (v.type != VT_MISSING) return v;
    return resolve_global(I, sym);
}

/* The innermost frame's binding of sym, if any frame has one. */
static ALWAYS_INLINE bool frame_find(const Frame *f, int sym, Value *out) {
    for (; f; f = f->parent)
        for (int i = f->n - 1; i >= 0; i--)
            if (f->syms[i] == sym) { *out = f->vals[i]; return true; }
    return false;
}

static ALWAYS_INLINE Value lookup_inline(Interp *I, Frame *f, int sym) {
    Value v;
    if (frame_find(f, sym, &v)) return v;
    v = I->globals[sym];
    if (v.type != VT_MISSING) return v;
    return resolve_global(I, sym);
}

/* A name read where the parser gave it a slot (N_NAME.flag): the frame's
 * entry there, if it holds the name (a frame holds a name at most once, so
 * that is its binding in the innermost frame), else the search. */
static ALWAYS_INLINE bool slot_holds(const Frame *f, int sym, unsigned slot, Value *out) {
    if (f && slot < (unsigned)f->n && f->syms[slot] == sym) {
        *out = f->vals[slot];
        return true;
    }
    return false;
}

static ALWAYS_INLINE Value lookup_name(Interp *I, const Node *name, Frame *f) {
    Value v;
    if (slot_holds(f, name->sym, name->flag, &v)) return v;
    return lookup_inline(I, f, name->sym);
}

/* Any N_NAME's value, by how the parser marked it. */
static ALWAYS_INLINE Value name_value(Interp *I, const Node *n, Frame *f) {
    if (n->op == NAME_TOP_LEVEL) return lookup_top(I, n->sym);
    if (!n->op) return lookup_name(I, n, f);
    return lookup_in_block(I, f, n->sym);
}

static inline Value operand(Interp *I, const Node *n, Frame *f) {
    if (n->kind == N_CONST) return n->v;
    if (n->kind == N_NAME) return name_value(I, n, f);
    if (n->kind == N_GETATTR && n->simple) return getattr_of_name(I, n, f);
    return interp_eval(I, n, f);
}

static inline void set_pos(Interp *I, const Node *n) {
    I->rt->line = n->line;
    I->rt->col = n->col;
}

/* Recursion goes through eval/exec_stmt, and one macro level may nest a
 * deep expression: counting macro levels alone cannot keep the C stack
 * from overflowing, so the hubs also measure the stack actually used. */
#define STACK_BASE_BUDGET ((size_t)256 << 10)
#define STACK_PER_RECURSION ((size_t)8 << 10)
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__aarch64__))
/* The stack pointer itself: real even when ASan moves locals to a heap
 * "fake stack", and read without making the function set up a frame
 * pointer (as __builtin_frame_address does), so that a dispatcher whose
 * every case is a tail call (eval) saves nothing. */
static inline uintptr_t stack_here(void) {
    uintptr_t sp;
#if defined(__x86_64__)
    __asm__("mov %%rsp, %0" : "=r"(sp));
#else
    __asm__("mov %0, sp" : "=r"(sp));
#endif
    return sp;
}
#define STACK_HERE() stack_here()
#elif defined(__GNUC__) || defined(__clang__)
/* the real frame, even when ASan moves locals to a heap "fake stack" */
#define STACK_HERE() ((uintptr_t)__builtin_frame_address(0))
#else
#define STACK_HERE() ((uintptr_t)&(char){0})
#endif

COLD _Noreturn void stack_exhausted(Interp *I);

/* Every supported target grows its stack downwards: one compare per node. */
static inline void stack_check(Interp *I) {
    if (STACK_HERE() < I->stack_limit) stack_exhausted(I);
}

/* Two strs' equality: by pointer (a known key, an interned name), else bytes. */
static ALWAYS_INLINE bool strs_equal(const Str *x, const Str *y) {
    return x == y || (x->len == y->len && mem_equal(x->data, y->data, x->len));
}

/* d.attr for a known key (GA_KEY_KNOWN): every dict holds such a key as
 * its shared Str, so a scan by pointer finds it, or shows it is absent
 * (missing: the Undefined). False for a dict big enough to be hashed. */
static ALWAYS_INLINE bool known_key_get(const Dict *d, const Str *attr, Value missing, Value *out) {
    if (d->index) return false;
    for (const DictEntry *e = d->entries, *end = e + d->len; e < end; e++)
        if (e->key.u.s == attr && e->key.type == VT_STR) {
            *out = e->val;
            return true;
        }
    *out = missing;
    return true;
}

/* obj.attr for an N_GETATTR: the usual answers in place (a dict's plain
 * key, loop.index0, a cached namespace attribute), every other path left
 * by a tail call, so that the usual one saves no registers. */
static ALWAYS_INLINE Value getattr_of(Interp *I, const Node *n, Value obj) {
    if (obj.type == VT_DICT && n->flag) {      /* message.role: plain key */
        Value v;
        if ((n->flag & GA_KEY_KNOWN) && known_key_get(obj.u.dict, n->attr, n->v, &v)) return v;
        AttrCacheEntry *c = attr_slot(I, obj.u.dict, n->attr);
        if (c->dict == obj.u.dict && c->attr == n->attr) return c->v;
        return getattr_dict_miss(n, obj.u.dict, c);
    }
    if (n->op && obj.type == VT_OBJECT && obj.u.obj->type == &LOOP_TYPE)   /* loop.index0 */
        return loop_attr(I, obj.u.obj->data, n->op);
    if (obj.type == VT_NAMESPACE && n->attr->data[0] != '_') {
        const AttrCacheEntry *c = attr_slot(I, obj.u.dict, n->attr);
        if (c->dict == obj.u.dict && c->attr == n->attr) return c->v;
    }
    return getattr_of_rest(I, n, obj);
}

/* name.attr, the commonest compound expression, without entering eval. */
static ALWAYS_INLINE Value getattr_of_name_inline(Interp *I, const Node *n, Frame *f) {
    return getattr_of(I, n, n->simple == GA_NAME_TOP ? lookup_top(I, n->sym) : lookup_name(I, n->a, f));
}

/* The object of name.attr when finding it needs no call (false: a global
 * not resolved yet). */
static ALWAYS_INLINE bool name_bound(const Interp *I, const Node *n, const Frame *f, Value *obj) {
    if (n->simple != GA_NAME_TOP && (slot_holds(f, n->sym, n->a->flag, obj) || frame_find(f, n->sym, obj))) return true;
    *obj = I->globals[n->sym];
    return obj->type != VT_MISSING;
}

/* loop.index0 or loop.index (a name.attr) read from the Loop itself when
 * `loop` is bound in a frame to a loop (else false: the usual name.attr
 * path). */
static ALWAYS_INLINE bool loop_index_in_place(const Interp *I, const Node *n, const Frame *f, int64_t *out) {
    Value obj;
    if ((n->op != LA_INDEX0 && n->op != LA_INDEX) || n->simple != GA_NAME || !name_bound(I, n, f, &obj) ||
        obj.type != VT_OBJECT || obj.u.obj->type != &LOOP_TYPE)
        return false;
    *out = ((const Loop *)obj.u.obj->data)->index0 + (n->op == LA_INDEX);
    return true;
}

/* name[loop.index0 ± k] (GI_LOOP_OFFSET) when the name holds a plain list
 * or tuple, `loop` is a loop and the index is in range: the item, read as
 * eval_getitem reads it after the int sum (whose position it leaves).
 * False otherwise (a negative index, a view, no loop...): the general path,
 * which only repeats lookups (a global resolved once gives the same value). */
static ALWAYS_INLINE bool loop_offset_item(Interp *I, const Node *n, Frame *f, Value *out) {
    const Node *sum = n->b;
    Value seq = name_value(I, n->a, f), lv;
    if (!name_bound(I, sum->a, f, &lv) || lv.type != VT_OBJECT || lv.u.obj->type != &LOOP_TYPE) return false;
    if (!(seq.type == VT_LIST || seq.type == VT_TUPLE) ||
        (seq.flags & (VF_VIEW_ITEMS | VF_VIEW_KEYS | VF_VIEW_VALUES | VF_GENERATOR)))
        return false;
    int64_t at, i = ((const Loop *)lv.u.obj->data)->index0, k = sum->b->v.u.i;
    if (sum->op == OP_ADD ? __builtin_add_overflow(i, k, &at) : __builtin_sub_overflow(i, k, &at)) return false;
    if (at < 0 || (uint64_t)at >= seq.u.list->len) return false;
    set_pos(I, sum);
    *out = seq.u.list->items[at];
    return true;
}

/* n->op (== or !=) on left and n's str constant. */
static ALWAYS_INLINE bool str_equality(const Node *n, Value left) {   /* n->op on two strs */
    const Str *x = left.u.s, *y = n->v.u.s;
    size_t len = x->len;
    bool equal;
    if (x == y || len != y->len) {
        equal = x == y;
    } else if (len >= 4 && len <= 8) {   /* a role against a constant: two words, no call */
        uint32_t a0, a1, b0, b1;
        memcpy(&a0, x->data, 4); memcpy(&a1, x->data + len - 4, 4);
        memcpy(&b0, y->data, 4); memcpy(&b1, y->data + len - 4, 4);
        equal = ((a0 ^ b0) | (a1 ^ b1)) == 0;
    } else {
        equal = mem_equal(x->data, y->data, len);
    }
    return equal == (n->op == OP_EQ);
}
static inline bool single_comparison(const Node *compare) {   /* m.role == 'user', loop.index0 > 0 */
    return compare->simple;   /* the parser decided, so that only the node's first line is read */
}
static inline bool plain_test(const Node *test) {             /* x is defined */
    return test->simple;   /* no arguments, a known test (the parser decided) */
}

static ALWAYS_INLINE bool cond_value(Interp *I, const Node *n, Frame *f) {
    Value v = n->kind == N_GETATTR && n->simple ? getattr_of_name_inline(I, n, f) : operand(I, n, f);
    switch (v.type) {   /* the usual `if x`, without a call */
    case VT_STR: return v.u.s->len != 0;
    case VT_NONE: case VT_UNDEFINED: return false;
    case VT_BOOL: return v.u.b;
    default: return v_truthy(v);
    }
}

/* The truth of n: dispatched in the caller (inline), so that an `if` on
 * m.role == 'user' costs one call; and/or/not recurse out of line. */
static ALWAYS_INLINE bool cond(Interp *I, const Node *n, Frame *f) {
    switch (n->kind) {
    case N_COMPARE:
        if (n->simple == CMP_ATTR_STR) {   /* m.role == 'user' with m in its slot, a dict: no call */
            const Node *a = n->a;
            Value obj, left;
            if (a->simple != GA_NAME_TOP && (a->flag & GA_KEY_KNOWN) && slot_holds(f, a->sym, a->a->flag, &obj) &&
                obj.type == VT_DICT && known_key_get(obj.u.dict, a->attr, a->v, &left) && left.type == VT_STR)
                return str_equality(n, left);
            return cond_attr_equality(I, n, f);
        }
        return n->simple == CMP_EQUALITY  ? cond_equality(I, n, f)
               : n->simple == CMP_SINGLE  ? cond_comparison(I, n, f)
               : n->simple == CMP_CHAINED ? cond_equality_in_chain(I, n, f)
                                          : cond_value(I, n, f);
    case N_NOT: case N_AND: case N_OR: return cond_logic(I, n, f);
    case N_TEST: return plain_test(n) ? cond_test(I, n, f) : cond_value(I, n, f);
    default: return cond_value(I, n, f);
    }
}

/* The branch an N_IF takes (its else branch when no test holds). */
static ALWAYS_INLINE const NodeList *if_branch(Interp *I, const Node *n, Frame *f) {
    if (cond(I, n->a, f)) return &n->body;
    for (int k = 0; k < n->items.n; k++) {   /* elif */
        rt_step(I->rt, 1);
        if (cond(I, n->items.v[k]->a, f)) return &n->items.v[k]->body;
    }
    return &n->alt;
}

#endif
