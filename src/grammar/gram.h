/* gram.h — a context-free grammar held as expression trees, printed as
 * GBNF (llama.cpp's grammar parser) or Lark (python-lark and llguidance).
 *
 * Both converters (json_schema.c: JSON Schema -> rules; calls.c: a reply
 * format's call syntax -> rules) build the same trees, so one grammar has
 * two spellings that accept the same text. Everything lives in the Rt's
 * arena; work is bounded by the Rt's step budget and by GRAM_MAX_RULES. */
#ifndef CF_GRAMMAR_GRAM_H
#define CF_GRAMMAR_GRAM_H

#include "engine/value.h"

enum { GX_LIT, GX_CLASS, GX_REF, GX_SEQ, GX_ALT, GX_REP };
#define GREP_INF UINT32_MAX
/* Repetition counts above this are relaxed (llama.cpp expands {m,n} into
 * nested rules: a hostile maxLength must not cost memory). */
enum { GRAM_MAX_COUNT = 256, GRAM_MAX_RULES = 50000 };
enum { GRAM_SHARED_SEEN = 16, GRAM_WARNED_SEEN = 16, GRAM_UNTIL_SEEN = 8, GRAM_NODES_SEEN = 24 };

typedef struct GRange { uint32_t lo, hi; } GRange;   /* code points, inclusive */

typedef struct GExpr GExpr;
struct GExpr {
    uint8_t kind;
    bool negated;            /* GX_CLASS: any code point but these */
    bool greedy;             /* GX_REP of a GX_CLASS that nothing after it can continue
                                (JSON whitespace, a number's digits): Lark may take it
                                as one longest-match terminal */
    uint32_t n;              /* GX_LIT: bytes; GX_CLASS: ranges; GX_SEQ/GX_ALT: children */
    uint32_t min, max;       /* GX_REP */
    union {
        const char *lit;
        const GRange *ranges;
        GExpr **kids;
        GExpr *kid;          /* GX_REP */
        uint32_t rule;       /* GX_REF */
    } u;
    GExpr *flat;             /* GX_SEQ/ALT/REP: its Lark form inside a rule, once made (a
                                node in two rules, as a body shared by two calls, is
                                flattened once) */
};

typedef struct GRule {
    const char *name;
    const char *lark_name;   /* as Lark prints it, once it was (NULL before) */
    uint32_t name_len;
    uint32_t hash;           /* of the name, for the name index */
    bool indexed;            /* in the name index (Lark's helper rules are not: no name asks for them) */
    bool flat;               /* a Lark helper rule: its body is flat already */
    GExpr *body;
    /* With keep_text, its GBNF line as printed (JSON-escaped) in Gram.text,
     * and the rules it refers to in Gram.refs, for the next print (text_len 0: none) */
    uint32_t text_at, text_len, refs_at, nrefs;
} GRule;

typedef struct Gram {
    Rt *rt;
    GRule *rules;
    uint32_t nrules, cap;
    uint32_t *slots;         /* open-addressed name index: rule id + 1, 0 = empty */
    uint32_t nslots;
    struct GMemo **memo;     /* rules made once per key (gram_memo_*): chained hash buckets */
    /* gram_shared's rules by the address of the name asked for (a string
     * constant): thousands of asks for "ws" find it without hashing */
    struct { const char *name; uint32_t rule; } shared[GRAM_SHARED_SEEN];
    uint32_t nshared;
    GExpr *ws_ref;           /* json_schema.c: the one reference to JSON whitespace */
    struct { const void *key; GExpr *e; } nodes_seen[GRAM_NODES_SEEN];   /* gram_node_of */
    uint32_t nnodes_seen;
    /* call_until's rules by their delimiter's text: asked for once per
     * string parameter, found without a memo key */
    struct { const char *delim; uint32_t rule; } until_seen[GRAM_UNTIL_SEEN];
    uint32_t nuntil_seen;
    const char *warned[GRAM_WARNED_SEEN];   /* warnings without arguments already said, by format */
    uint32_t nwarned;
    uint32_t nmemo, memo_buckets;
    struct SchemaMemoTable *schema_memo;   /* json_schema.c: schemas made once */
    StrBuf warnings;         /* JSON strings, comma-separated (a JSON array's body) */
    uint32_t nwarnings;
    /* Printed GBNF lines kept for reuse (the structural tag's grammars
     * repeat the rules of the calls): set keep_text before printing. */
    bool keep_text;
    StrBuf text;
    uint32_t *refs, nrefs, refs_cap;
    /* Lark's helper rules by their body's structure (open addressing: rule
     * id + 1, 0 = empty): sixty tools' identical groups share one helper */
    uint32_t *helpers, nhelper_slots, nhelpers;
} Gram;

void gram_init(Gram *g, Rt *rt);
/* Room for about n rules (a request's tools say how many it makes): the
 * rule array and the name index then do not grow a rule at a time. */
void gram_expect_rules(Gram *g, uint32_t n);
/* snprintf for names and keys, of %s, %.Ns, %zu, %u and %p only; the length written. */
size_t gram_fmt(char *buf, size_t cap, const char *fmt, ...);
/* A warning (printf-style), once per distinct text. */
void gram_warn(Gram *g, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- expressions ---- */
GExpr *gx_lit(Gram *g, const char *s, size_t n);
GExpr *gx_litz(Gram *g, const char *z);
GExpr *gx_class(Gram *g, bool negated, const GRange *r, size_t n);
GExpr *gx_chars(Gram *g, bool negated, const char *ascii_set);   /* "a-z0-9_" style set */
GExpr *gx_ref(Gram *g, uint32_t rule);
GExpr *gx_rep(Gram *g, GExpr *e, uint32_t min, uint32_t max);
static inline GExpr *gx_opt(Gram *g, GExpr *e) { return gx_rep(g, e, 0, 1); }
GExpr *gx_greedy(Gram *g, GExpr *class_expr, uint32_t min, uint32_t max);
/* Sequences and alternatives of the arguments; NULL items are skipped
 * (an optional part that is absent). */
extern GExpr gx_end;
GExpr *gx_seq_(Gram *g, ...);
GExpr *gx_alt_(Gram *g, ...);
#define gx_seq(g, ...) gx_seq_(g, __VA_ARGS__, &gx_end)
#define gx_alt(g, ...) gx_alt_(g, __VA_ARGS__, &gx_end)

/* Growable child lists for sequences and alternatives built in loops. */
typedef struct GList { GExpr **v; uint32_t n, cap; } GList;
void gl_push(Gram *g, GList *l, GExpr *e);
GExpr *gl_seq(Gram *g, GList *l);   /* one child: the child itself */
GExpr *gl_alt(Gram *g, GList *l);

/* A node made once per key (a string constant's address, say) by make(g, key):
 * trees only read their parts, so every use may share it. */
GExpr *gram_node_of(Gram *g, const void *key, GExpr *(*make)(Gram *g, const void *key));

/* ---- rules ---- */
/* A new rule named after `base` (sanitised to [a-z0-9-], made unique). */
uint32_t gram_rule_new(Gram *g, const char *base, size_t n);
void gram_rule_set(Gram *g, uint32_t id, GExpr *body);
/* The rule with exactly this name, or UINT32_MAX. */
uint32_t gram_rule_find(const Gram *g, const char *name);
/* Rules made once per key (a key may be any text; rule names are sanitised). */
uint32_t gram_memo_get(const Gram *g, const char *key);   /* UINT32_MAX when none */
void gram_memo_put(Gram *g, const char *key, uint32_t rule);
/* A rule named `name` whose body is made by `make` the first time it is asked for. */
uint32_t gram_shared(Gram *g, const char *name, GExpr *(*make)(Gram *g));

/* ---- printing: the rules reachable from `root`, root first, as `root_name`,
 * into sb as a JSON string (quoted and escaped as it is printed) ---- */
void gram_write_gbnf_json(Gram *g, StrBuf *sb, uint32_t root, const char *root_name);
void gram_write_lark_json(Gram *g, StrBuf *sb, uint32_t root, const char *root_name);

#endif
