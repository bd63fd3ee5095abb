/* ast.h — the syntax tree the parser builds and the interpreter walks, and
 * the compiled template that owns it. One Node shape serves every kind; the
 * comment on each kind says which fields it uses. */
#ifndef CF_AST_H
#define CF_AST_H

#include "value.h"
#include "builtins.h"

typedef enum NodeKind {
    /* statements */
    N_DATA,        /* v: literal template text */
    N_OUTPUT,      /* a: expression to print; flag: ESC_* */
    N_IF,          /* a: test; body; items: the elif branches (N_IF: a, body);
                      alt: else body */
    N_FOR,         /* a: target; b: iterable; c: filter test or NULL; body; alt: else;
                      flag: recursive; op: ESC_* (loop(...) returns markup) */
    N_SET,         /* a: target (N_NAME, N_TUPLE of names, N_NSREF); b: value;
                      flag: SET_ACCUMULATE (parser.c, mark_accumulators) */
    N_SET_BLOCK,   /* a: target; body; c: filter chain (innermost .a == NULL) or NULL */
    N_MACRO,       /* name/sym; params (names/nparams); defaults (items, NULL = none);
                      body; flag: MF_* uses */
    N_CALL_BLOCK,  /* a: the N_CALL; b: the caller N_MACRO (anonymous) */
    N_FILTER_BLOCK,/* c: filter chain; body */
    N_WITH,        /* items: N_SET assignments; body */
    N_BREAK, N_CONTINUE,
    N_GENERATION,  /* body; its output span is recorded */
    N_SCOPE_BLOCK, /* {% block name %}: body rendered in place, in a scope of
                      its own (flag: BLOCK_*; scoped: it sees the
                      enclosing names) */
    N_AUTOESCAPE,  /* a: on/off expression; body */
    N_FAIL,        /* statement Jinja2 accepts but cannot run here: v = message,
                      op = error kind (raised when executed) */
    N_IF_CHAIN,    /* an N_IF two or more of whose tests share a left operand (its
                      fields as N_IF's; the last pass turns the N_IF into one) */
    /* expressions */
    N_CONST,       /* v */
    N_NAME,        /* name/sym; op: NAME_TOP_LEVEL when no frame can bind it,
                      NAME_IN_BLOCK inside a {% block %} (scope.c) */
    N_NSREF,       /* name/sym: namespace variable; attr: attribute */
    N_TUPLE, N_LIST, /* items */
    N_DICT,        /* items: keys; alt: values */
    N_GETATTR,     /* a: object; attr; flag: attr can only be a dict key,
                      then v: the Undefined a missing key gives */
    N_GETITEM,     /* a: object; b: key (obj['plain key'] is parsed as N_GETATTR) */
    N_SLICE,       /* a: object; b, c, d: start, stop, step (each may be NULL) */
    N_CALL,        /* a: callee; items: args; kwnames/kwvals; b: *args; c: **kwargs */
    N_FILTER,      /* a: operand (NULL inside filter/set blocks); attr: name; filter fn;
                      args as N_CALL */
    N_TEST,        /* a: operand; attr: name; test fn; args as N_CALL; flag:
                      TEST_NEGATED (`x is not none` without arguments) */
    N_NEG, N_POS, N_NOT, /* a */
    N_BINOP,       /* op: OP_ADD..OP_POW; a, b; items: see ADD_CHAIN_MAX */
    N_AND, N_OR,   /* a, b */
    N_COMPARE,     /* a: first operand; items: further operands; ops: one per item */
    N_CONCAT,      /* items (the ~ operator) */
    N_CONDEXPR     /* a: test; b: value if true; c: value if false (NULL: Undefined) */
} NodeKind;

/* N_TEST.flag: `x is not none` whose test is plain (simple): its truth is
 * the test's negation, as the `not` Jinja2 compiles it to (interp_chain.c:
 * cond_test); a test with arguments is an N_NOT of the test. */
enum { TEST_NEGATED = 1 };

/* N_SET.flag: {% set ns.x = ns.x ~ ... %} where nothing else can hold
 * ns.x's value: the renderer may append to it in place. */
enum { SET_ACCUMULATE = 1 };

/* N_MACRO.flag. MF_ANONYMOUS: a call block's caller, which Jinja2 creates
 * with no name (repr <Macro anonymous>, .name None, "macro None" in errors).
 * MF_CALLER_PARAM: the body uses caller and a parameter named caller has no
 * default, which Jinja2 refuses when it compiles the macro. */
enum { MF_CALLER = 1, MF_VARARGS = 2, MF_KWARGS = 4, MF_ANONYMOUS = 8, MF_CALLER_PARAM = 16 };
/* NAME_IN_BLOCK: read as Jinja2's block functions read, through the render's
 * context (interp.c: lookup_in_block). */
enum { NAME_TOP_LEVEL = 1, NAME_IN_BLOCK = 2 };
/* N_NAME.flag: the slot its symbol has in the layout of the frame it is
 * read or assigned in (N_NAME.scope: the N_FOR or N_MACRO that makes that
 * frame), or SLOT_NONE. A hint: a frame's entry is checked to hold the
 * symbol before it is used, so a wrong slot only costs the usual search. */
enum { SLOT_NONE = 0xFF, SLOT_MAX = 64 };
/* N_OUTPUT.flag: whether it escapes, as Jinja2 compiled it: by its
 * enclosing autoescape blocks' constant, or, under a block whose value is
 * not a constant, by the mode in force when it runs (constants excepted:
 * Jinja2 escapes those when it compiles). So a macro's outputs follow
 * where it was written, not where it is called. */
enum { ESC_OFF = 0, ESC_ON = 1, ESC_RUNTIME = 2 };
enum { GA_NAME = 1, GA_NAME_TOP = 2 };   /* N_GETATTR.simple */
/* N_GETITEM.simple: name[loop.index0 + k] or name[loop.index0 - k] (k an
 * int constant; Qwen's messages[loop.index0 - 1].role): the item found in
 * place when the name holds a list and the index is in range
 * (interp_internal.h: loop_offset_item) */
enum { GI_LOOP_OFFSET = 1 };
/* N_GETATTR.flag: on a dict, the attribute can only be a key (GA_KEY), and
 * its name is a known key (GA_KEY_KNOWN, known_keys.c: found by pointer) */
enum { GA_KEY = 1, GA_KEY_KNOWN = 2 };
/* N_COMPARE.simple: one == or !=, one other operator, or one == or != of
 * an if/elif chain that shares its left operand (N_IF_CHAIN); CMP_ATTR_STR:
 * one == or != of name.key (the key a dict's plain key) and a str constant
 * (m.role == 'user': interp_chain.c, cond_attr_equality) */
enum { CMP_EQUALITY = 1, CMP_SINGLE = 2, CMP_CHAINED = 3, CMP_ATTR_STR = 4 };
/* N_IF_CHAIN: two or more of the chain's tests (if and elif, through
 * and/or/not) are `E == x` / `E != x` with one E of the form
 * name.key|pure_filter (each such N_COMPARE is CMP_CHAINED, its chain_if
 * this node): E is evaluated once per run of the chain when its name holds
 * a dict (interp.c: IfMemo). N_IF.simple IF_ELIF: an elif branch's node. */
enum { IF_ELIF = 1 };
/* An N_IF_CHAIN whose first test starts with its shared operand E (`E == c
 * and ...`, `E == c or E == d`): E is evaluated first, and a test that can
 * only hold for some constants (its guard: `E == c and X` holds only if E
 * is c, `A or B` only for A's or B's) is known false without running when
 * E is a str that none of them is. Skipping it skips nothing observable:
 * it would compare two strs (from the chain's memo) and stop. parser.c:
 * mark_chain_guards; interp_chain.c: chain_dispatch. */
typedef struct ChainGuards {
    const struct Node *operand;   /* E: the N_FILTER name.key|pure of the first test */
    int ntests;                   /* the if's test, then each elif's */
    const Str *const *const *consts;   /* per test: its guard's strs, NULL-ended; NULL: no guard */
    const uint8_t *then;          /* per guarded test, once E is one of its strs: GUARD_* */
} ChainGuards;
enum {
    GUARD_HOLDS = 1,   /* the test holds (`E == c`, `E == c or E == d`) */
    GUARD_AND = 2,     /* it holds as its `and`'s right operand does (`E == c and X`) */
    GUARD_TEST = 3     /* it is run as it is */
};
/* N_BINOP.simple: a + or - whose operands are int constants, names,
 * name.attr, x|length and such sums, one at least an int by its shape
 * (interp.c: int_sum; parser.c: int_sum_shape) */
enum { BINOP_INT_SUM = 1 };
/* The most `+` nodes of a left spine (a + b + c + ...) a sum flattens
 * (interp.c: output_sum); the rest of a longer chain is its first operand.
 * An N_OUTPUT's sum keeps that flattening in its N_BINOP's items (parser.c:
 * plan_output_sums): the first operand, then the `+` nodes innermost first. */
enum { ADD_CHAIN_MAX = 32 };
/* N_BINOP.flag in a sum's plan: this `+` node starts a run of constant str
 * operands (sym: how many), v their text joined (parser.c: join_constant_runs);
 * on the sum's outermost `+`, SUM_HAS_RUNS: its plan holds such a run */
enum { SUM_JOINED = 1, SUM_SHARED = 2, SUM_HAS_RUNS = 4 };
enum {   /* N_FILTER.op */
    FILTER_PURE = 1,    /* a simple filter whose result only its operand decides */
    FILTER_LENGTH = 2,  /* |length (|count): of a list, tuple or dict, answered in place */
    FILTER_TOJSON = 3   /* |tojson, with or without arguments: an output's is written through
                           a buffer the render reuses (interp.c: output_tojson) */
};

/* N_GETATTR.op: which loop.* attribute the name is (0: none), so the
 * interpreter answers loop.index0 without comparing strings. */
enum { LA_NONE, LA_INDEX0, LA_INDEX, LA_FIRST, LA_LAST, LA_LENGTH, LA_REVINDEX, LA_REVINDEX0,
       LA_DEPTH, LA_DEPTH0 };
uint8_t loop_attr_id(const Str *name);

typedef struct Node Node;
typedef struct NodeList { Node **v; int n; } NodeList;

/* The names a frame starts with bound to their Undefined ("'x' is
 * undefined"), besides its parameters: those its body sets before anything
 * reads them, when no enclosing frame has the name (scope.c says why).
 * Hung on the node that makes the frame; NULL when there are none. */
typedef struct FrameInit {
    int n;
    const int *syms;
    uint8_t *slots;         /* each one's slot in the frame's layout, or SLOT_NONE */
    int nelse;              /* N_FOR: the same for the frame of its else body */
    const int *else_syms;
} FrameInit;

/* Fields are grouped by cache line (the parser aligns nodes to 64 bytes):
 * the first line holds all that constants, names, attribute lookups,
 * operators and argument-less filters and tests read, the second what
 * if/for, comparisons and calls add; the rest is for calls and macros. A
 * render visits a few hundred nodes, so this decides how much of the tree
 * stays in the L1 cache. */
struct Node {
    /* line 1 */
    uint8_t kind;
    uint8_t op;
    uint8_t flag;
    uint8_t simple;         /* N_FILTER / N_TEST: no arguments and a known name;
                               N_COMPARE: one operator, CMP_* (op; b: the right operand,
                               and if that is a constant, flag 1 and v: its value);
                               N_GETATTR: GA_NAME* when a is a name (sym: its symbol) */
    int sym;                /* symbol index of name */
    Node *a, *b;
    Str *attr;              /* N_GETATTR / N_NSREF / N_FILTER / N_TEST name */
    Value v;                /* N_CONST / N_DATA / N_FAIL */
    union {
        FilterFn filter;    /* N_FILTER */
        TestFn test;        /* N_TEST */
        const struct Method *str_method;   /* N_GETATTR called as a method: str's method of that name */
        const struct Node *scope;          /* N_NAME: the frame layout its slot (flag) is in, or NULL */
        FrameInit *init;                   /* a node that makes a frame (scope.c) */
        const struct Node *chain_if;       /* N_COMPARE (CMP_CHAINED): its N_IF_CHAIN */
        const struct ChainGuards *guards;  /* N_IF_CHAIN: its tests' guards, or NULL */
    };
    int line, col;
    /* line 2 */
    NodeList items;         /* positional args / elements / keys / operands */
    uint8_t *ops;           /* N_COMPARE operators (OpCode, or OP_IN / OP_NOTIN below) */
    Node *c;
    NodeList body, alt;     /* statement bodies */
    /* line 3 */
    NodeList kwvals;        /* keyword argument values */
    Node *d;
    Str **kwnames;          /* keyword argument names (kwvals.n of them) */
    Str **params;           /* macro parameter names */
    int *param_syms;
    int nparams;
    int16_t nslots;         /* N_FOR / N_MACRO / N_SET_BLOCK / N_FILTER_BLOCK / N_GENERATION: names its
                               frame's layout places (scope.c: frame layouts); 0: no frame of its own */
    Str *name;              /* N_NAME / N_NSREF / N_MACRO */
};

/* N_SCOPE_BLOCK.flag */
enum { BLOCK_SCOPED = 1, BLOCK_REQUIRED = 2 };

/* Extra comparison operators beyond the lexer's OpCode range. */
enum { OP_IN = 100, OP_NOTIN = 101 };

/* Chat-mode variables apply_chat_template passes explicitly. */
enum { CHAT_MESSAGES, CHAT_TOOLS, CHAT_DOCUMENTS, CHAT_AGP, CHAT_CONTINUE, CHAT_NVARS };

/* SymInput.how: the name's first top-level read is its Undefined (the top
 * level sets it first: sym_starts_undef), `self`, or a value from the
 * render's input (chat variable, context, defaults, else `fallback`). */
enum { SI_INPUT = 0, SI_UNDEF = 1, SI_SELF = 2 };
typedef struct SymInput {
    Value fallback;   /* SI_INPUT: the builtin global, else the Undefined; SI_UNDEF: the Undefined */
    Str *name;
    int8_t chat;      /* as sym_chat */
    uint8_t how;      /* SI_* */
} SymInput;

/* A compiled template: immutable after cf_compile, shared across threads. */
struct cf_template {
    Arena arena;            /* owns the AST, symbols, constants */
    Str *source;            /* normalised source */
    char *name;
    NodeList body;
    Str **syms;             /* symbol table: names referenced anywhere */
    int nsyms;
    Value *sym_builtin;     /* per symbol: builtin global, or VT_MISSING */
    Value *sym_undef;       /* per symbol: Undefined "'name' is undefined" */
    uint8_t *sym_starts_undef; /* per symbol: the top level holds its Undefined until a set (scope.c) */
    int8_t *sym_chat;       /* per symbol: the chat variable it names (CHAT_MESSAGES...), or -1 */
    /* per symbol: how a top-level read that finds it unresolved answers
     * (interp.c: resolve_global), the fields that needs side by side */
    struct SymInput *sym_input;
    /* The chat variables the template reads as SI_INPUT names: a chat
     * render binds them before it runs (interp.c: bind_chat_inputs). */
    int nchat_inputs;
    struct { int sym; int chat; } chat_inputs[CHAT_NVARS];
    Str *chat_key[CHAT_NVARS]; /* each chat variable's name, hashed: looked up in every context */
    int sym_loop, sym_caller, sym_varargs, sym_kwargs;  /* -1 if unused */
    int sym_self, sym_super;                            /* -1 if unused */
    bool reads_loop;        /* some expression names `loop` (else no loop object can be kept) */
    const Node **blocks;    /* the {% block %} nodes (self.name() renders one) */
    int nblocks;
    cf_limits lim;
    bool uses_generation;
    bool source_has_content;   /* "content" in the source (continue_final_message's usual test) */
    /* What the polyfills must do for this template (src/chat/polyfill.c): 0 until
     * its first polyfilled render probes it. Atomic: renders share t. */
    _Atomic unsigned polyfill_needs;
    /* The output buffer a render starts with: the longest output so far
     * (up to OUTPUT_HINT_MAX), so that a long render does not grow it again
     * and again (each time a realloc copying all of it). Relaxed: any value
     * some render stored will do. */
    _Atomic size_t output_hint;
};

/* Parse the normalised source into t (syms, body). Throws TemplateSyntaxError. */
void parse_template(Rt *rt, struct cf_template *t);

/* The passes over a parsed tree: visit on each child of n (a, b, c, d, then
 * the lists body, alt, items, kwvals), NULLs skipped (parser.c). */
typedef void (*NodeVisit)(Node *n, void *ctx);
void each_child(Node *n, NodeVisit visit, void *ctx);

/* scope.c: where each name lives, as Jinja2's compiler decides it. Before
 * packing: marks names NAME_TOP_LEVEL / NAME_IN_BLOCK and fills
 * sym_starts_undef and each frame's FrameInit; throws the AssertionError
 * Jinja2's compiler raises for a name a block set's filter cannot reach. */
void scope_analyze(Rt *rt, struct cf_template *t);
/* After packing: the frame layouts (nslots, N_NAME slots, FrameInit slots). */
void scope_layout(const struct cf_template *t);

#endif
