/* interp_internal.h — the interpreter's state (frames, the render's
 * Interp, the runtime objects a template sees: macros and loops), shared by
 * interp.c (which runs the AST) and loop_object.c (the `loop` variable's
 * Python face). Not for any other file. */
#ifndef CF_INTERP_INTERNAL_H
#define CF_INTERP_INTERNAL_H

#include "interp.h"

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
 * the result leaves to run (interp.c: chain_dispatch): `chain` NULL until
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

#endif
