/* parser.c — tokens -> AST, following jinja2/parser.py production by
 * production so precedence, tuple handling and error cases match. */
#include "ast.h"
#include "lexer.h"
#include "interp.h"
#include "unicode.h"
#include <string.h>
#include <stdio.h>
#include <math.h>
#include <stdint.h>

typedef struct Parser {
    Rt *rt;
    struct cf_template *t;
    Token *tok;
    size_t n, pos;
    int depth;
    int loop_depth;        /* for break/continue: inside a for body? */
    Str *blocks[64];       /* block names seen (defined twice is an error) */
    int nblocks;
    int *sym_slots;        /* open-addressing index of t->syms (-1 = empty) */
    size_t sym_mask;       /* slots - 1 */
    /* For Jinja2's messages about unknown tags and early ends: the tags of
     * the statements being parsed, and the end tags each open body awaits. */
    const char **tags;
    int ntags, cap_tags;
    const char *const **ends;
    int nends, cap_ends;
    /* Nodes come from slabs of their own, one after another in parse
     * (roughly execution) order: a render walks a few hundred nodes, and
     * packed together they take far fewer cache lines and pages than
     * scattered between the lexer's tokens and the lists. */
    unsigned char *slab;
    size_t slab_left, slab_nodes;
    /* Jinja2's compile-time eval context for the statements being parsed:
     * the autoescape constant of the innermost block that set one, and
     * whether a block with a value known only at run time encloses them. */
    bool escape, escape_volatile;
    /* Expression roots: how deep parse_expression/parse_tuple are nested,
     * whether the root being parsed is a {{ }} child, and whether a slice
     * flagged to fold (N_SLICE) waits for settle_slices. */
    int expr_nesting;
    bool output_root, slices_to_settle;
} Parser;

static Token *cur(Parser *P) { return &P->tok[P->pos]; }

/* The lexer's error, raised when the parser reaches it (Jinja2 lexes as
 * its parser reads: an earlier parser error wins). */
static _Noreturn void lexer_failed(Parser *P, const Token *t) {
    P->rt->line = t->line;
    P->rt->col = t->col;
    rt_throw(P->rt, (cf_error_kind)t->op, "%s", t->v.u.s->data);
}
/* The next token, as Jinja2's TokenStream.look() fetches it. */
static Token *peek(Parser *P) {
    Token *t = &P->tok[P->pos + 1 < P->n ? P->pos + 1 : P->pos];
    if (t->type == T_ERROR) lexer_failed(P, t);
    return t;
}
static Token *advance(Parser *P) {
    Token *t = cur(P);
    if (P->pos + 1 < P->n) P->pos++;
    if (cur(P)->type == T_ERROR) lexer_failed(P, cur(P));
    return t;
}

static const char *tok_desc(Token *t, char *buf, size_t cap) {
    switch (t->type) {
    case T_EOF: return "end of template";
    case T_BLOCK_END: return "end of statement block";
    case T_VAR_END: return "end of print statement";
    case T_BLOCK_BEGIN: return "begin of statement block";
    case T_VAR_BEGIN: return "begin of print statement";
    /* Jinja2's describe_token: a name is itself, a literal its type */
    case T_INT: return "integer";
    case T_FLOAT: return "float";
    case T_STRING: return "string";
    case T_DATA: return "template data / text";
    case T_NAME: case T_OP: default: {
        size_t k = t->n < cap - 1 ? t->n : cap - 1;
        memcpy(buf, t->p, k);
        buf[k] = 0;
        return buf;
    }
    }
}

static _Noreturn void fail_at(Parser *P, Token *t, const char *fmt, const char *a, const char *b) {
    P->rt->line = t->line;
    P->rt->col = t->col;
    char msg[600];
    snprintf(msg, sizeof msg, fmt, a ? a : "", b ? b : "");
    rt_throw(P->rt, CF_ERR_TEMPLATE_SYNTAX, "%s", msg);
}

static _Noreturn void fail_unexpected(Parser *P) {
    char buf[64];
    Token *t = cur(P);
    fail_at(P, t, "unexpected '%s'", tok_desc(t, buf, sizeof buf), NULL);
}

static bool is_name(Token *t, const char *z) {
    return t->type == T_NAME && t->n == strlen(z) && memcmp(t->p, z, t->n) == 0;
}
static bool is_op(Token *t, uint8_t op) { return t->type == T_OP && t->op == op; }

/* Jinja2's TokenStream.expect failing: what it expected, and what came. */
static _Noreturn void expect_failed(Parser *P, const char *what) {
    char buf[64];
    Token *t = cur(P);
    if (t->type == T_EOF) fail_at(P, t, "unexpected end of template, expected '%s'.", what, NULL);
    fail_at(P, t, "expected token '%s', got '%s'", what, tok_desc(t, buf, sizeof buf));
}
static void expect_op(Parser *P, uint8_t op, const char *what) {
    if (!is_op(cur(P), op)) expect_failed(P, what);
    advance(P);
}
static Token *expect_name(Parser *P) {
    if (cur(P)->type != T_NAME) expect_failed(P, "name");
    return advance(P);
}
static void expect_block_end(Parser *P) {
    if (cur(P)->type != T_BLOCK_END) expect_failed(P, "end of statement block");
    advance(P);
}
static void enter(Parser *P) {
    if (++P->depth > (int)P->rt->lim.max_parse_depth) {
        P->rt->line = cur(P)->line;
        P->rt->col = cur(P)->col;
        rt_throw(P->rt, CF_ERR_LIMIT, "template nesting deeper than %u (raise it with --max-parse-depth / cf_limits.max_parse_depth)", P->rt->lim.max_parse_depth);
    }
}
static void leave(Parser *P) { P->depth--; }

/* Each link of a left-deep chain (a + b + c, x.y[0](), v|f|g ...)
 * nests the tree one level deeper although the parser only loops, and the
 * interpreter recurses on that depth: count links as nesting levels, then
 * release them together when the chain ends. */
static void chain_link(Parser *P, int *links) { enter(P); (*links)++; }
static void chain_end(Parser *P, int links) { P->depth -= links; }

/* (with 8-byte pointers, as on x86-64 and arm64; a 32-bit target such as
 * wasm32 packs the same fields smaller and only loses the cache line layout) */
_Static_assert(sizeof(Node) % 64 == 0 || sizeof(void *) < 8, "a slab's nodes stay on cache line boundaries");

static Node *new_node(Parser *P, NodeKind k, Token *at) {
    /* 64-byte aligned (ast.h: the fields are laid out by cache line) */
    if (!P->slab_left) {
        P->slab_nodes = P->slab_nodes ? (P->slab_nodes < 256 ? P->slab_nodes * 2 : 256) : 16;
        unsigned char *block = rt_alloc(P->rt, P->slab_nodes * sizeof(Node) + 48);
        P->slab = block + ((64 - ((uintptr_t)block & 63)) & 63);
        P->slab_left = P->slab_nodes;
    }
    Node *n = (Node *)(void *)P->slab;
    P->slab += sizeof(Node);
    P->slab_left--;
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)k;
    n->line = at->line;
    n->col = at->col;
    n->sym = -1;
    return n;
}

static void nl_push(Parser *P, NodeList *l, Node *n) {
    /* capacity = next power of two >= n */
    int c = l->n;
    if (c == 0 || (c & (c - 1)) == 0) {
        size_t nc = c ? (size_t)c * 2 : 4;
        l->v = rt_realloc(P->rt, l->v, (size_t)c * sizeof(Node *), nc * sizeof(Node *));
    }
    l->v[l->n++] = n;
}

/* Rebuild the symbol index with room for twice the symbols. */
static void sym_index_grow(Parser *P) {
    struct cf_template *t = P->t;
    size_t slots = 64;
    while (slots < (size_t)t->nsyms * 4) slots *= 2;
    P->sym_slots = rt_alloc(P->rt, slots * sizeof(int));
    for (size_t i = 0; i < slots; i++) P->sym_slots[i] = -1;
    P->sym_mask = slots - 1;
    for (int k = 0; k < t->nsyms; k++) {
        size_t i = str_hash(t->syms[k]) & P->sym_mask;
        while (P->sym_slots[i] >= 0) i = (i + 1) & P->sym_mask;
        P->sym_slots[i] = k;
    }
}

/* The symbol index of a name, added on first sight. Hashed: a template
 * with a hundred thousand distinct names compiles in linear time. */
static int intern_sym(Parser *P, Str *name) {
    struct cf_template *t = P->t;
    if (!P->sym_slots || (size_t)t->nsyms * 2 >= P->sym_mask) sym_index_grow(P);
    size_t i = str_hash(name) & P->sym_mask;
    for (; P->sym_slots[i] >= 0; i = (i + 1) & P->sym_mask)
        if (str_eq(t->syms[P->sym_slots[i]], name)) return P->sym_slots[i];
    int c = t->nsyms;
    if (c == 0 || (c & (c - 1)) == 0) {
        size_t nc = c ? (size_t)c * 2 : 16;
        t->syms = rt_realloc(P->rt, t->syms, (size_t)c * sizeof(Str *), nc * sizeof(Str *));
    }
    /* a name that is a known key is its shared Str: message.role then
     * finds a JSON dict's key by pointer (known_keys.c) */
    Str *known = known_key(name, str_hash(name));
    t->syms[t->nsyms] = known ? known : name;
    P->sym_slots[i] = t->nsyms;
    return t->nsyms++;
}

static Str *tok_str(Token *t) { return t->v.u.s; }

/* Python's str.isspace(): not empty, and whitespace throughout. */
static bool all_whitespace(const Str *s) {
    size_t i = 0;
    while (i < s->len)
        if (!uc_isspace(utf8_next(s->data, s->len, &i))) return false;
    return s->len > 0;
}

/* ---- expressions ---- */
static Node *parse_expression(Parser *P, bool with_condexpr);

/* Filters and tests Jinja2 cannot fold: they take the render's context. */
static bool needs_context(const Str *name) {
    static const char *const names[] = {"map", "select", "reject", "selectattr", "rejectattr", "random"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(name->data, names[i]) == 0) return true;
    return false;
}

/* An expression Jinja2 evaluates while compiling (its as_const): literals,
 * and containers and operators of them; with `calls`, also filters and
 * tests of constants (Jinja2 folds those unless autoescape is being
 * decided at run time there). */
static bool foldable(Parser *P, const Node *n, bool calls);

/* The truth of a foldable operand, evaluated now; false when it fails. */
static bool folds_to_truth(Parser *P, const Node *n, bool calls, bool *truth) {
    Value v;
    if (!foldable(P, n, calls) || !interp_eval_constant(P->rt, P->t, n, &v)) return false;
    *truth = v_truthy(v);
    return true;
}

static bool foldable(Parser *P, const Node *n, bool calls) {
    switch (n->kind) {
    case N_CONST: return true;
    case N_LIST: case N_TUPLE: case N_CONCAT:
        for (int i = 0; i < n->items.n; i++)
            if (!foldable(P, n->items.v[i], calls)) return false;
        return true;
    case N_DICT:
        for (int i = 0; i < n->items.n; i++)
            if (!foldable(P, n->items.v[i], calls) || !foldable(P, n->alt.v[i], calls)) return false;
        return true;
    case N_NEG: case N_POS: case N_NOT: case N_GETATTR: return foldable(P, n->a, calls);
    case N_BINOP: case N_GETITEM:
        return foldable(P, n->a, calls) && foldable(P, n->b, calls);
    case N_AND: case N_OR: {   /* Jinja2 folds `true or x` without looking at x */
        bool truth;
        if (!folds_to_truth(P, n->a, calls, &truth)) return false;
        return truth == (n->kind == N_OR) || foldable(P, n->b, calls);
    }
    case N_CONDEXPR: {
        bool truth;
        if (!folds_to_truth(P, n->a, calls, &truth)) return false;
        if (truth) return foldable(P, n->b, calls);
        return n->c && foldable(P, n->c, calls);   /* (no else: Undefined, left to run time) */
    }
    case N_SLICE:   /* (no object: a slice among several subscripts, itself a constant) */
        return (!n->a || foldable(P, n->a, calls)) && (!n->b || foldable(P, n->b, calls)) &&
               (!n->c || foldable(P, n->c, calls)) && (!n->d || foldable(P, n->d, calls));
    case N_COMPARE:
        for (int i = 0; i < n->items.n; i++)
            if (!foldable(P, n->items.v[i], calls)) return false;
        return foldable(P, n->a, calls);
    case N_FILTER: case N_TEST:
        if (!calls || !n->a || !foldable(P, n->a, calls) || needs_context(n->attr)) return false;
        if ((n->b && !foldable(P, n->b, calls)) || (n->c && !foldable(P, n->c, calls))) return false;
        for (int i = 0; i < n->items.n; i++)
            if (!foldable(P, n->items.v[i], calls)) return false;
        for (int i = 0; i < n->kwvals.n; i++)
            if (!foldable(P, n->kwvals.v[i], calls)) return false;
        return true;
    default: return false;
    }
}

/* (filters and tests never fold where output escaping is decided at run
 * time, the one place the answer matters to escape_mode) */
static bool compile_time_constant(Parser *P, const Node *n) { return foldable(P, n, false); }

/* ESC_* of output at this point (ast.h): Jinja2 escapes a constant when
 * it compiles it, by the enclosing blocks' constant; other values too,
 * unless a block whose value is known only at run time encloses them. */
static uint8_t escape_mode(const Parser *P, bool constant) {
    if (P->escape_volatile && !constant) return ESC_RUNTIME;
    return P->escape ? ESC_ON : ESC_OFF;
}
static Node *parse_tuple(Parser *P, bool simplified, bool with_condexpr, bool explicit_parens,
                         bool with_namespace);
static Node *parse_unary(Parser *P, bool with_filter);
static Node *parse_filter(Parser *P, Node *node, bool start_inline);

static void parse_call_args(Parser *P, Node *call) {
    Token *lp = cur(P);
    expect_op(P, OP_LPAREN, "(");
    bool require_comma = false;
    int nkw = 0, kwcap = 0;
    while (!is_op(cur(P), OP_RPAREN)) {
        if (require_comma) {
            expect_op(P, OP_COMMA, ",");
            if (is_op(cur(P), OP_RPAREN)) break;
        }
        if (is_op(cur(P), OP_MUL)) {
            if (call->b || call->c) fail_at(P, lp, "invalid syntax for function call expression", NULL, NULL);
            advance(P);
            call->b = parse_expression(P, true);
        } else if (is_op(cur(P), OP_POW)) {
            if (call->c) fail_at(P, lp, "invalid syntax for function call expression", NULL, NULL);
            advance(P);
            call->c = parse_expression(P, true);
        } else if (cur(P)->type == T_NAME && is_op(peek(P), OP_ASSIGN)) {
            if (call->c) fail_at(P, lp, "invalid syntax for function call expression", NULL, NULL);
            Str *key = tok_str(advance(P));
            advance(P);
            Node *val = parse_expression(P, true);
            if (nkw == kwcap) {
                int nc = kwcap ? kwcap * 2 : 4;
                call->kwnames = rt_realloc(P->rt, call->kwnames, (size_t)kwcap * sizeof(Str *), (size_t)nc * sizeof(Str *));
                kwcap = nc;
            }
            call->kwnames[nkw++] = key;
            nl_push(P, &call->kwvals, val);
        } else {
            if (call->b || call->c || nkw) fail_at(P, lp, "invalid syntax for function call expression", NULL, NULL);
            nl_push(P, &call->items, parse_expression(P, true));
        }
        require_comma = true;
    }
    expect_op(P, OP_RPAREN, ")");
}

/* A filter or test name, dots included (`is a.b`): the parts go into one
 * buffer, so a long chain costs linear time and memory. */
static Str *parse_dotted_name(Parser *P) {
    Str *name = tok_str(expect_name(P));
    if (!is_op(cur(P), OP_DOT)) return name;
    StrBuf sb;
    sb_init(P->rt, &sb, name->len + 16);
    sb_put(&sb, name->data, name->len);
    while (is_op(cur(P), OP_DOT)) {
        advance(P);
        Str *part = tok_str(expect_name(P));
        sb_putc(&sb, '.');
        sb_put(&sb, part->data, part->len);
    }
    return sb_to_str(&sb);
}

static Node *parse_filter(Parser *P, Node *node, bool start_inline) {
    int links = 0;
    while (is_op(cur(P), OP_PIPE) || start_inline) {
        chain_link(P, &links);
        if (!start_inline) advance(P);
        Token *at = cur(P);
        Str *name = parse_dotted_name(P);
        Node *f = new_node(P, N_FILTER, at);
        f->a = node;
        f->attr = name;
        f->filter = filter_lookup(name->data, name->len);   /* NULL: see check_unknown */
        if (is_op(cur(P), OP_LPAREN)) parse_call_args(P, f);
        f->simple = !f->items.n && !f->kwvals.n && !f->b && !f->c && f->filter;
        if (f->simple && filter_is_pure(f->filter)) f->op = FILTER_PURE;
        if (f->simple && filter_is_length(f->filter)) f->op = FILTER_LENGTH;
        if (f->filter && filter_is_tojson(f->filter)) f->op = FILTER_TOJSON;
        node = f;
        start_inline = false;
    }
    chain_end(P, links);
    return node;
}

static Node *parse_primary(Parser *P, bool with_namespace);
static Node *parse_postfix(Parser *P, Node *node);
static uint8_t attr_is_plain_key(Str *name);
static Node *new_getattr(Parser *P, Token *t, Node *obj, Str *name);

static Node *parse_test(Parser *P, Node *node) {
    Token *is_tok = advance(P);   /* 'is' */
    bool negated = false;
    if (is_name(cur(P), "not")) { advance(P); negated = true; }
    Token *at = cur(P);
    Str *name = parse_dotted_name(P);
    Node *t = new_node(P, N_TEST, at);
    t->a = node;
    t->attr = name;
    t->test = test_lookup(name->data, name->len);      /* NULL: see check_unknown */
    Token *c = cur(P);
    if (is_op(c, OP_LPAREN)) {
        parse_call_args(P, t);
    } else if ((c->type == T_NAME || c->type == T_STRING || c->type == T_INT || c->type == T_FLOAT ||
                is_op(c, OP_LPAREN) || is_op(c, OP_LBRACKET) || is_op(c, OP_LBRACE)) &&
               !is_name(c, "else") && !is_name(c, "or") && !is_name(c, "and")) {
        if (is_name(c, "is")) fail_at(P, c, "You cannot chain multiple tests with is", NULL, NULL);
        Node *arg = parse_primary(P, false);
        arg = parse_postfix(P, arg);
        nl_push(P, &t->items, arg);
    }
    (void)is_tok;
    t->simple = !t->items.n && !t->kwvals.n && !t->b && !t->c && t->test;
    if (t->simple) t->op = test_type_id(t->test);
    if (negated && t->simple) {
        t->flag = TEST_NEGATED;
    } else if (negated) {
        Node *n = new_node(P, N_NOT, at);
        n->a = t;
        return n;
    }
    return t;
}

static Node *parse_subscribed(Parser *P) {
    Token *at = cur(P);
    Node *args[3] = {NULL, NULL, NULL};
    if (is_op(cur(P), OP_COLON)) {
        advance(P);
    } else {
        Node *node = parse_expression(P, true);
        if (!is_op(cur(P), OP_COLON)) return node;
        advance(P);
        args[0] = node;
    }
    if (!is_op(cur(P), OP_COLON) && !is_op(cur(P), OP_RBRACKET) && !is_op(cur(P), OP_COMMA))
        args[1] = parse_expression(P, true);
    if (is_op(cur(P), OP_COLON)) {
        advance(P);
        if (!is_op(cur(P), OP_RBRACKET) && !is_op(cur(P), OP_COMMA)) args[2] = parse_expression(P, true);
    }
    Node *s = new_node(P, N_SLICE, at);
    s->b = args[0];
    s->c = args[1];
    s->d = args[2];
    return s;
}

/* callee(args...); a method call such as content.strip() gets str's method
 * of that name resolved now (used when the receiver is a str). */
static Node *new_call(Parser *P, Token *t, Node *callee) {
    Node *c = new_node(P, N_CALL, t);
    c->a = callee;
    if (callee->kind == N_GETATTR) callee->str_method = str_method_find(callee->attr->data, callee->attr->len);
    parse_call_args(P, c);
    return c;
}

static Node *parse_postfix(Parser *P, Node *node) {
    int links = 0;
    for (;;) {
        Token *t = cur(P);
        if (is_op(t, OP_DOT) || is_op(t, OP_LBRACKET) || is_op(t, OP_LPAREN)) chain_link(P, &links);
        if (is_op(t, OP_DOT)) {
            advance(P);
            Token *a = cur(P);
            if (a->type == T_NAME) {
                advance(P);
                node = new_getattr(P, t, node, tok_str(a));
            } else if (a->type == T_INT) {
                advance(P);
                Node *k = new_node(P, N_CONST, a);
                k->v = a->v;
                Node *g = new_node(P, N_GETITEM, t);
                g->a = node;
                g->b = k;
                node = g;
            } else {
                fail_at(P, a, "expected name or number", NULL, NULL);
            }
        } else if (is_op(t, OP_LBRACKET)) {
            advance(P);
            NodeList args = {0};
            while (!is_op(cur(P), OP_RBRACKET)) {
                if (args.n) expect_op(P, OP_COMMA, ",");
                nl_push(P, &args, parse_subscribed(P));
            }
            expect_op(P, OP_RBRACKET, "]");
            Node *arg;
            if (args.n == 1) arg = args.v[0];
            else { arg = new_node(P, N_TUPLE, t); arg->items = args; }
            if (arg->kind == N_SLICE) {
                arg->a = node;
                /* Jinja2 folds an all-constant slice through the sandbox's
                 * getitem, which turns its TypeError into Undefined */
                arg->flag = foldable(P, arg, !P->escape_volatile);
                P->slices_to_settle |= arg->flag;
                node = arg;
            } else if (arg->kind == N_CONST && arg->v.type == VT_STR && !arg->v.flags && attr_is_plain_key(arg->v.u.s)) {
                /* message['role'] is message.role in the sandbox when no dict
                 * attribute answers to the name: a dict gives its item either
                 * way, and everything else its attribute (its getitem fails
                 * for a str key, and getitem then tries getattr) */
                node = new_getattr(P, t, node, arg->v.u.s);
            } else {
                Node *g = new_node(P, N_GETITEM, t);
                g->a = node;
                g->b = arg;
                node = g;
                /* Jinja2 writes a slice among several subscripts as Python
                 * (x[1:, y] -> getitem(x, (1:, y))), which does not compile
                 * unless the whole expression was folded as a constant */
                for (int i = 0; arg->kind == N_TUPLE && i < arg->items.n; i++)
                    if (arg->items.v[i]->kind == N_SLICE && !compile_time_constant(P, g)) {
                        P->rt->line = t->line;
                        P->rt->col = t->col;
                        rt_throw(P->rt, CF_ERR_TEMPLATE_SYNTAX, "invalid syntax (<template>, line %d)", t->line);
                    }
            }
        } else if (is_op(t, OP_LPAREN)) {
            node = new_call(P, t, node);
        } else {
            chain_end(P, links);
            return node;
        }
    }
}

/* obj.name (and obj['name'] when that means the same): one Str per
 * distinct name (the symbol's), as the renderer's attribute cache compares
 * names by pointer; for a plain key, whether it is a known key, and the
 * Undefined a dict without it gives, made once (not per miss). */
static Node *new_getattr(Parser *P, Token *t, Node *obj, Str *name) {
    Node *g = new_node(P, N_GETATTR, t);
    g->a = obj;
    int attr_sym = intern_sym(P, name);   /* may move t->syms */
    g->attr = P->t->syms[attr_sym];
    g->flag = attr_is_plain_key(g->attr);
    if (g->flag && known_key(g->attr, str_hash(g->attr)) == g->attr) g->flag |= GA_KEY_KNOWN;
    g->op = loop_attr_id(g->attr);
    if (g->flag) g->v = v_missed_lookup(P->rt, v_dict_of(dict_new(P->rt, 0)), v_str_of(g->attr));
    return g;
}

/* True when `d.name` on a dict can only mean d['name']: not a dict method,
 * not private. Lets the interpreter skip the attribute protocol. */
static uint8_t attr_is_plain_key(Str *name) {
    Value dummy = {0};
    dummy.type = VT_DICT;
    if (name->len == 0 || name->data[0] == '_') return 0;
    return !method_exists(dummy, name->data, name->len);
}

static Node *parse_filter_expr(Parser *P, Node *node) {
    int links = 0;
    for (;;) {
        Token *t = cur(P);
        if (is_op(t, OP_PIPE)) node = parse_filter(P, node, false);
        else if (is_name(t, "is")) { chain_link(P, &links); node = parse_test(P, node); }
        else if (is_op(t, OP_LPAREN)) {
            chain_link(P, &links);
            node = new_call(P, t, node);
        } else {
            chain_end(P, links);
            return node;
        }
    }
}

static Node *parse_list_lit(Parser *P) {
    Token *at = advance(P);
    Node *l = new_node(P, N_LIST, at);
    while (!is_op(cur(P), OP_RBRACKET)) {
        if (l->items.n) expect_op(P, OP_COMMA, ",");
        if (is_op(cur(P), OP_RBRACKET)) break;
        nl_push(P, &l->items, parse_expression(P, true));
    }
    expect_op(P, OP_RBRACKET, "]");
    return l;
}

static Node *parse_dict_lit(Parser *P) {
    Token *at = advance(P);
    Node *d = new_node(P, N_DICT, at);
    while (!is_op(cur(P), OP_RBRACE)) {
        if (d->items.n) expect_op(P, OP_COMMA, ",");
        if (is_op(cur(P), OP_RBRACE)) break;
        Node *k = parse_expression(P, true);
        expect_op(P, OP_COLON, ":");
        Node *v = parse_expression(P, true);
        nl_push(P, &d->items, k);
        nl_push(P, &d->alt, v);
    }
    expect_op(P, OP_RBRACE, "}");
    return d;
}

static Node *parse_primary(Parser *P, bool with_namespace) {
    Token *t = cur(P);
    Node *node;
    enter(P);
    if (t->type == T_NAME) {
        advance(P);
        Str *s = tok_str(t);
        if (str_eqz(s, "loop")) P->t->reads_loop = true;
        if (str_eqz(s, "true") || str_eqz(s, "True") || str_eqz(s, "false") || str_eqz(s, "False")) {
            node = new_node(P, N_CONST, t);
            node->v = v_bool(s->data[0] == 't' || s->data[0] == 'T');
        } else if (str_eqz(s, "none") || str_eqz(s, "None")) {
            node = new_node(P, N_CONST, t);
            node->v = v_none();
        } else if (with_namespace && is_op(cur(P), OP_DOT)) {
            advance(P);
            Token *a = expect_name(P);
            node = new_node(P, N_NSREF, t);
            node->name = s;
            node->sym = intern_sym(P, s);
            /* the attribute's Str is the one ns.attr reads use: the attribute
             * cache keeps namespace values up to date by it */
            int attr_sym = intern_sym(P, tok_str(a));
            node->attr = P->t->syms[attr_sym];
        } else {
            node = new_node(P, N_NAME, t);
            node->name = s;
            node->sym = intern_sym(P, s);
        }
    } else if (t->type == T_STRING) {
        advance(P);
        node = new_node(P, N_CONST, t);
        if (cur(P)->type == T_STRING) {
            StrBuf sb;
            sb_init(P->rt, &sb, 64);
            sb_put(&sb, t->v.u.s->data, t->v.u.s->len);
            while (cur(P)->type == T_STRING) {
                Token *u = advance(P);
                sb_put(&sb, u->v.u.s->data, u->v.u.s->len);
            }
            node->v = sb_to_value(&sb);
        } else {
            node->v = t->v;
        }
    } else if (t->type == T_INT || t->type == T_FLOAT) {
        advance(P);
        node = new_node(P, N_CONST, t);
        node->v = t->v;
    } else if (is_op(t, OP_LPAREN)) {
        advance(P);
        node = parse_tuple(P, false, true, true, false);
        expect_op(P, OP_RPAREN, ")");
    } else if (is_op(t, OP_LBRACKET)) {
        node = parse_list_lit(P);
    } else if (is_op(t, OP_LBRACE)) {
        node = parse_dict_lit(P);
    } else {
        fail_unexpected(P);
    }
    leave(P);
    return node;
}

static Node *parse_unary(Parser *P, bool with_filter) {
    Token *t = cur(P);
    Node *node;
    enter(P);
    if (is_op(t, OP_SUB) || is_op(t, OP_ADD)) {
        advance(P);
        node = new_node(P, is_op(t, OP_SUB) ? N_NEG : N_POS, t);
        node->a = parse_unary(P, false);
    } else {
        node = parse_primary(P, false);
    }
    node = parse_postfix(P, node);
    if (with_filter) node = parse_filter_expr(P, node);
    leave(P);
    return node;
}

static Node *binop(Parser *P, Token *at, uint8_t op, Node *a, Node *b) {
    Node *n = new_node(P, N_BINOP, at);
    n->op = op;
    n->a = a;
    n->b = b;
    return n;
}

/* left ** right. Jinja2 folds a constant left operand (`-0.5`, `(1 - 3)`)
 * and, when the power does not fold (its right operand is no constant, or
 * computing it fails), writes its repr into the Python it generates as is:
 * `(-0.5 ** n)`, which Python reads as -(0.5 ** n). */
static Node *pow_node(Parser *P, Token *at, Node *left, Node *right) {
    Node *pow = binop(P, at, OP_POW, left, right);
    Value v, folded;
    if (foldable(P, left, true) && interp_eval_constant(P->rt, P->t, left, &v) &&
        ((v.type == VT_INT && v.u.i < 0 && v.u.i != INT64_MIN) || (v.type == VT_FLOAT && signbit(v.u.f))) &&
        !(foldable(P, right, true) && interp_eval_constant(P->rt, P->t, pow, &folded))) {
        Node *base = new_node(P, N_CONST, at);
        base->v = v.type == VT_INT ? v_int(-v.u.i) : v_float(-v.u.f);
        pow->a = base;
        Node *neg = new_node(P, N_NEG, at);
        neg->a = pow;
        return neg;
    }
    return pow;
}

static Node *parse_pow(Parser *P) {
    Node *left = parse_unary(P, true);
    int links = 0;
    while (is_op(cur(P), OP_POW)) {
        chain_link(P, &links);
        Token *t = advance(P);
        left = pow_node(P, t, left, parse_unary(P, true));
    }
    chain_end(P, links);
    return left;
}

static Node *parse_math2(Parser *P) {
    Node *left = parse_pow(P);
    int links = 0;
    while (is_op(cur(P), OP_MUL) || is_op(cur(P), OP_DIV) || is_op(cur(P), OP_FLOORDIV) || is_op(cur(P), OP_MOD)) {
        chain_link(P, &links);
        Token *t = advance(P);
        left = binop(P, t, t->op, left, parse_pow(P));
    }
    chain_end(P, links);
    return left;
}

static Node *parse_concat(Parser *P) {
    Token *at = cur(P);
    Node *first = parse_math2(P);
    if (!is_op(cur(P), OP_TILDE)) return first;
    Node *c = new_node(P, N_CONCAT, at);
    nl_push(P, &c->items, first);
    while (is_op(cur(P), OP_TILDE)) {
        advance(P);
        nl_push(P, &c->items, parse_math2(P));
    }
    /* markup_join or str_join; a concat of constants Jinja2 folds with str()
     * of each part, so a Markup part ('<'|safe ~ x) is plain text then */
    c->op = foldable(P, c, !P->escape_volatile) ? ESC_OFF : escape_mode(P, false);
    return c;
}

static Node *parse_math1(Parser *P) {
    Node *left = parse_concat(P);
    int links = 0;
    while (is_op(cur(P), OP_ADD) || is_op(cur(P), OP_SUB)) {
        chain_link(P, &links);
        Token *t = advance(P);
        left = binop(P, t, t->op, left, parse_concat(P));
    }
    chain_end(P, links);
    return left;
}

static Node *parse_compare(Parser *P) {
    Token *at = cur(P);
    Node *expr = parse_math1(P);
    Node *cmp = NULL;
    int cap = 0;
    for (;;) {
        Token *t = cur(P);
        uint8_t op;
        if (t->type == T_OP && (t->op == OP_EQ || t->op == OP_NE || t->op == OP_LT || t->op == OP_LE ||
                                t->op == OP_GT || t->op == OP_GE)) {
            op = t->op;
            advance(P);
        } else if (is_name(t, "in")) {
            op = OP_IN;
            advance(P);
        } else if (is_name(t, "not") && is_name(peek(P), "in")) {
            op = OP_NOTIN;
            advance(P);
            advance(P);
        } else break;
        if (!cmp) {
            cmp = new_node(P, N_COMPARE, at);
            cmp->a = expr;
        }
        if (cmp->items.n == cap) {
            int nc = cap ? cap * 2 : 4;
            cmp->ops = rt_realloc(P->rt, cmp->ops, (size_t)cap, (size_t)nc);
            cap = nc;
        }
        cmp->ops[cmp->items.n] = op;
        nl_push(P, &cmp->items, parse_math1(P));
    }
    if (cmp && cmp->items.n == 1) {
        /* m.role == 'user' (CMP_EQUALITY), loop.index0 > n (CMP_SINGLE):
         * the interpreter's short paths (ast.h) */
        cmp->simple = cmp->ops[0] == OP_EQ || cmp->ops[0] == OP_NE ? CMP_EQUALITY : CMP_SINGLE;
        cmp->op = cmp->ops[0];
        cmp->b = cmp->items.v[0];
        if (cmp->b->kind == N_CONST) {
            cmp->v = cmp->b->v;
            cmp->flag = 1;
        }
    }
    return cmp ? cmp : expr;
}

static Node *parse_not(Parser *P) {
    if (is_name(cur(P), "not")) {
        Token *t = advance(P);
        enter(P);
        Node *n = new_node(P, N_NOT, t);
        n->a = parse_not(P);
        leave(P);
        return n;
    }
    return parse_compare(P);
}

/* A left-associative chain `x KEYWORD y KEYWORD z` over one operand parser
 * (and/or); each link counts toward the nesting limit as Jinja2's tree would. */
static Node *parse_chain(Parser *P, const char *keyword, NodeKind kind, Node *(*operand)(Parser *)) {
    Node *left = operand(P);
    int links = 0;
    while (is_name(cur(P), keyword)) {
        chain_link(P, &links);
        Token *t = advance(P);
        Node *n = new_node(P, kind, t);
        n->a = left;
        n->b = operand(P);
        left = n;
    }
    chain_end(P, links);
    return left;
}

static Node *parse_and(Parser *P) { return parse_chain(P, "and", N_AND, parse_not); }
static Node *parse_or(Parser *P) { return parse_chain(P, "or", N_OR, parse_and); }

static Node *parse_condexpr(Parser *P) {
    Node *expr1 = parse_or(P);
    int links = 0;
    while (is_name(cur(P), "if")) {
        chain_link(P, &links);
        Token *t = advance(P);
        Node *expr2 = parse_or(P);
        Node *expr3 = NULL;
        if (is_name(cur(P), "else")) {
            advance(P);
            enter(P);
            expr3 = parse_condexpr(P);
            leave(P);
        }
        Node *c = new_node(P, N_CONDEXPR, t);
        c->a = expr2;
        c->b = expr1;
        c->c = expr3;
        expr1 = c;
    }
    chain_end(P, links);
    return expr1;
}

/* Whether Jinja2 can write v into the compiled code as a literal (its
 * has_safe_repr): its optimizer folds a subtree only then. */
static bool safe_repr(Value v) {
    switch (v.type) {
    case VT_NONE: case VT_BOOL: case VT_INT: case VT_BIGINT: case VT_FLOAT: case VT_STR: return true;
    case VT_LIST: case VT_TUPLE:
        if (v.flags & (VF_VIEW_ITEMS | VF_VIEW_KEYS | VF_VIEW_VALUES | VF_GENERATOR | VF_GROUP_TUPLE)) return false;
        for (size_t i = 0; i < v.u.list->len; i++)
            if (!safe_repr(v.u.list->items[i])) return false;
        return true;
    case VT_DICT:
        for (size_t i = 0; i < dict_len(v.u.dict); i++)
            if (!safe_repr(dict_key_at(v.u.dict, i)) || !safe_repr(dict_val_at(v.u.dict, i))) return false;
        return true;
    default: return false;
    }
}

/* A slice of constants folds through the sandbox's getitem, which turns
 * its TypeError into Undefined — but only inside a subtree Jinja2 folds as
 * a whole: the optimizer's (a value with a safe repr), or a {{ }} child's
 * (any value). Elsewhere the slice runs at run time and raises. Settle the
 * flags of one expression root, top down as the folding goes. */
static void settle_slices(Parser *P, Node *n, bool output) {
    if (!n) return;
    Value v;
    if (foldable(P, n, !P->escape_volatile) && interp_eval_constant(P->rt, P->t, n, &v) &&
        (output || safe_repr(v)))
        return;
    if (n->kind == N_SLICE) n->flag = 0;
    /* (an expression's children are all expressions; N_COMPARE's b is
     * items.v[0] again, settled twice alike) */
    settle_slices(P, n->a, false);
    settle_slices(P, n->b, false);
    settle_slices(P, n->c, false);
    settle_slices(P, n->d, false);
    for (int i = 0; i < n->items.n; i++) settle_slices(P, n->items.v[i], false);
    for (int i = 0; i < n->alt.n; i++) settle_slices(P, n->alt.v[i], false);
    for (int i = 0; i < n->kwvals.n; i++) settle_slices(P, n->kwvals.v[i], false);
}

/* The end of parsing an expression: at a statement's root, settle. */
static Node *expression_parsed(Parser *P, Node *n) {
    if (--P->expr_nesting == 0 && P->slices_to_settle) {
        settle_slices(P, n, P->output_root);
        P->slices_to_settle = false;
    }
    return n;
}

static Node *parse_expression(Parser *P, bool with_condexpr) {
    enter(P);
    P->expr_nesting++;
    Node *n = with_condexpr ? parse_condexpr(P) : parse_or(P);
    leave(P);
    return expression_parsed(P, n);
}

/* Jinja2 also passes "extra end rules" (`in` after a for target,
 * `recursive` after its iterable), but hands them to Token.test_any as one
 * tuple argument, so they never match: `{% for x, in y %}` parses `in` as a
 * name and fails. Only these tokens end a tuple. */
static bool is_tuple_end(Parser *P) {
    Token *t = cur(P);
    return t->type == T_VAR_END || t->type == T_BLOCK_END || is_op(t, OP_RPAREN);
}

static Node *parse_tuple_items(Parser *P, bool simplified, bool with_condexpr, bool explicit_parens,
                               bool with_namespace);
static Node *parse_tuple(Parser *P, bool simplified, bool with_condexpr, bool explicit_parens,
                         bool with_namespace) {
    P->expr_nesting++;
    Node *n = parse_tuple_items(P, simplified, with_condexpr, explicit_parens, with_namespace);
    return expression_parsed(P, n);
}

static Node *parse_tuple_items(Parser *P, bool simplified, bool with_condexpr, bool explicit_parens,
                               bool with_namespace) {
    Token *at = cur(P);
    NodeList args = {0};
    bool is_tuple = false;
    for (;;) {
        if (args.n) expect_op(P, OP_COMMA, ",");
        if (is_tuple_end(P)) break;
        Node *e = simplified ? parse_primary(P, with_namespace) : parse_expression(P, with_condexpr);
        nl_push(P, &args, e);
        if (is_op(cur(P), OP_COMMA)) is_tuple = true;
        else break;
    }
    if (!is_tuple) {
        if (args.n) return args.v[0];
        if (!explicit_parens) {
            char buf[64];
            fail_at(P, cur(P), "Expected an expression, got '%s'", tok_desc(cur(P), buf, sizeof buf), NULL);
        }
    }
    Node *t = new_node(P, N_TUPLE, at);
    t->items = args;
    return t;
}

static bool can_assign(Node *n) {
    if (n->kind == N_NAME || n->kind == N_NSREF) return true;
    if (n->kind == N_TUPLE) {
        for (int i = 0; i < n->items.n; i++)
            if (!can_assign(n->items.v[i])) return false;
        return true;
    }
    return false;
}

static Node *parse_assign_target(Parser *P, bool with_tuple, bool name_only, bool with_namespace) {
    Token *at = cur(P);
    Node *target;
    if (name_only) {
        Token *t = expect_name(P);
        target = new_node(P, N_NAME, t);
        target->name = tok_str(t);
        target->sym = intern_sym(P, target->name);
    } else if (with_tuple) {
        target = parse_tuple(P, true, true, false, with_namespace);
    } else {
        target = parse_primary(P, with_namespace);
    }
    if (!can_assign(target)) {
        const char *kind = target->kind == N_CONST ? "const" : target->kind == N_LIST ? "list" :
                           target->kind == N_DICT ? "dict" : "expression";
        fail_at(P, at, "can't assign to '%s'", kind, NULL);
    }
    return target;
}

/* ---- statements ---- */
static NodeList subparse(Parser *P, const char *const *end_tokens);
static NodeList subparse_body(Parser *P, const char *const *end_tokens);

static void push_tag(Parser *P, const char *tag) {
    if (P->ntags == P->cap_tags) {
        int nc = P->cap_tags ? P->cap_tags * 2 : 16;
        P->tags = rt_realloc(P->rt, P->tags, (size_t)P->cap_tags * sizeof *P->tags, (size_t)nc * sizeof *P->tags);
        P->cap_tags = nc;
    }
    P->tags[P->ntags++] = tag;
}

static void push_ends(Parser *P, const char *const *ends) {
    if (P->nends == P->cap_ends) {
        int nc = P->cap_ends ? P->cap_ends * 2 : 16;
        P->ends = rt_realloc(P->rt, P->ends, (size_t)P->cap_ends * sizeof *P->ends, (size_t)nc * sizeof *P->ends);
        P->cap_ends = nc;
    }
    P->ends[P->nends++] = ends;
}

/* Jinja2's Parser._fail_ut_eof: an unknown tag (name) or an early end of
 * the template (name NULL), with the end tags awaited (`looking`: the
 * innermost body's) and the innermost open statement. */
static _Noreturn void fail_unknown_or_eof(Parser *P, Token *at, const char *name, const char *const *extra) {
    StrBuf sb;
    sb_init(P->rt, &sb, 256);
    if (name) sb_printf(&sb, "Encountered unknown tag '%s'.", name);
    else sb_puts(&sb, "Unexpected end of template.");
    const char *const *looking = extra ? extra : P->nends ? P->ends[P->nends - 1] : NULL;
    if (looking) {
        bool expected = false;   /* name is an end tag some open body awaits */
        for (int i = 0; name && i <= P->nends; i++) {
            const char *const *e = i < P->nends ? P->ends[i] : extra;
            for (int k = 0; e && e[k]; k++) expected |= strcmp(e[k], name) == 0;
        }
        sb_puts(&sb, expected ? " You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for "
                              : " Jinja was looking for the following tags: ");
        for (int k = 0; looking[k]; k++) sb_printf(&sb, "%s'%s'", k ? " or " : "", looking[k]);
        sb_putc(&sb, '.');
    }
    if (P->ntags) sb_printf(&sb, " The innermost block that needs to be closed is '%s'.", P->tags[P->ntags - 1]);
    Str *msg = sb_to_str(&sb);
    fail_at(P, at, "%s", msg->data, NULL);
}

static NodeList parse_statements(Parser *P, const char *const *end_tokens, bool drop_needle) {
    if (is_op(cur(P), OP_COLON)) advance(P);
    expect_block_end(P);
    NodeList body = subparse(P, end_tokens);
    if (cur(P)->type == T_EOF) fail_unknown_or_eof(P, cur(P), NULL, end_tokens);
    if (drop_needle) advance(P);
    return body;
}

/* visit on each child of n (a, b, c, d, then the lists), NULLs skipped (a
 * macro's parameter without a default is one). */
void each_child(Node *n, NodeVisit visit, void *ctx) {
    Node *kids[] = {n->a, n->b, n->c, n->d};
    for (int k = 0; k < 4; k++)
        if (kids[k]) visit(kids[k], ctx);
    const NodeList *lists[] = {&n->body, &n->alt, &n->items, &n->kwvals};
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < lists[k]->n; i++)
            if (lists[k]->v[i]) visit(lists[k]->v[i], ctx);
}

typedef struct Walk { NodeVisit visit; void *ctx; } Walk;
static void walk_node(Node *n, void *w) {
    ((Walk *)w)->visit(n, ((Walk *)w)->ctx);
    each_child(n, walk_node, w);
}
static void walk_tree(Node *n, NodeVisit visit, void *ctx) {
    Walk w = {visit, ctx};
    if (n) walk_node(n, &w);
}
static void walk_list(NodeList *l, NodeVisit visit, void *ctx) {
    for (int i = 0; i < l->n; i++) walk_tree(l->v[i], visit, ctx);
}

/* Which of caller/varargs/kwargs a macro body references (Jinja2's
 * find_undeclared): they decide whether the macro accepts extra args. */
static void note_magic_use(Node *n, void *ctx) {
    uint8_t *flags = ctx;
    if (n->kind == N_NAME && n->name) {
        if (str_eqz(n->name, "caller")) *flags |= MF_CALLER;
        else if (str_eqz(n->name, "varargs")) *flags |= MF_VARARGS;
        else if (str_eqz(n->name, "kwargs")) *flags |= MF_KWARGS;
    }
}

static void parse_signature(Parser *P, Node *m) {
    expect_op(P, OP_LPAREN, "(");
    int cap = 0;
    while (!is_op(cur(P), OP_RPAREN)) {
        if (m->nparams) expect_op(P, OP_COMMA, ",");
        Node *arg = parse_assign_target(P, false, true, false);
        Node *def = NULL;
        if (is_op(cur(P), OP_ASSIGN)) {
            advance(P);
            def = parse_expression(P, true);
        } else {
            for (int i = 0; i < m->items.n; i++)
                if (m->items.v[i]) fail_at(P, cur(P), "non-default argument follows default argument", NULL, NULL);
        }
        if (m->nparams == cap) {
            int nc = cap ? cap * 2 : 4;
            m->params = rt_realloc(P->rt, m->params, (size_t)cap * sizeof(Str *), (size_t)nc * sizeof(Str *));
            m->param_syms = rt_realloc(P->rt, m->param_syms, (size_t)cap * sizeof(int), (size_t)nc * sizeof(int));
            cap = nc;
        }
        for (int i = 0; i < m->nparams; i++)
            if (str_eq(m->params[i], arg->name))
                fail_at(P, cur(P), "duplicate argument '%s' in function definition", arg->name->data, NULL);
        m->params[m->nparams] = arg->name;
        m->param_syms[m->nparams] = arg->sym;
        m->nparams++;
        nl_push(P, &m->items, def);
    }
    expect_op(P, OP_RPAREN, ")");
}

static void finish_macro(Parser *P, Node *m) {
    uint8_t fl = 0;
    walk_list(&m->body, note_magic_use, &fl);
    /* a parameter with the same name shadows the magic variable; a body
     * that uses caller cannot have it as a parameter without a default */
    for (int i = 0; i < m->nparams; i++) {
        if (str_eqz(m->params[i], "caller")) {
            if ((fl & MF_CALLER) && !m->items.v[i]) fl |= MF_CALLER_PARAM;
            fl &= (uint8_t)~MF_CALLER;
        }
        if (str_eqz(m->params[i], "varargs")) fl &= (uint8_t)~MF_VARARGS;
        if (str_eqz(m->params[i], "kwargs")) fl &= (uint8_t)~MF_KWARGS;
    }
    m->flag = fl;
    intern_sym(P, str_new(P->rt, "caller", 6));
    intern_sym(P, str_new(P->rt, "varargs", 7));
    intern_sym(P, str_new(P->rt, "kwargs", 6));
}

static Node *parse_statement(Parser *P) {
    Token *t = cur(P);
    if (t->type != T_NAME) fail_at(P, t, "tag name expected", NULL, NULL);
    enter(P);
    push_tag(P, t->v.u.s->data);
    Node *n = NULL;
    static const char *const endfor_else[] = {"endfor", "else", NULL};
    static const char *const endfor[] = {"endfor", NULL};
    static const char *const if_ends[] = {"elif", "else", "endif", NULL};
    static const char *const endif[] = {"endif", NULL};
    static const char *const endset[] = {"endset", NULL};
    static const char *const endmacro[] = {"endmacro", NULL};
    static const char *const endcall[] = {"endcall", NULL};
    static const char *const endfilter[] = {"endfilter", NULL};
    static const char *const endwith[] = {"endwith", NULL};
    static const char *const endgen[] = {"endgeneration", NULL};
    static const char *const endblock[] = {"endblock", NULL};
    static const char *const endautoescape[] = {"endautoescape", NULL};
    if (is_name(t, "for")) {
        advance(P);
        n = new_node(P, N_FOR, t);
        n->a = parse_assign_target(P, true, false, false);
        if (!is_name(cur(P), "in")) expect_failed(P, "in");
        advance(P);
        n->b = parse_tuple(P, false, false, false, false);
        if (is_name(cur(P), "if")) { advance(P); n->c = parse_expression(P, true); }
        if (is_name(cur(P), "recursive")) { advance(P); n->flag = 1; }
        n->op = escape_mode(P, false);   /* whether loop(...) returns markup */
        P->loop_depth++;
        n->body = parse_statements(P, endfor_else, false);
        P->loop_depth--;
        if (is_name(advance(P), "else")) n->alt = parse_statements(P, endfor, true);
        intern_sym(P, str_new(P->rt, "loop", 4));
    } else if (is_name(t, "if")) {
        advance(P);
        /* the elif branches are a flat list, as Jinja2's If.elif_: a chain
         * of any length is one level of nesting to the parser, and nothing
         * that walks the tree recurses along it */
        n = new_node(P, N_IF, t);
        Node *node = n;
        for (;;) {
            node->a = parse_tuple(P, false, false, false, false);
            node->body = parse_statements(P, if_ends, false);
            Token *e = advance(P);
            if (is_name(e, "elif")) {
                node = new_node(P, N_IF, e);
                nl_push(P, &n->items, node);
                continue;
            } else if (is_name(e, "else")) {
                n->alt = parse_statements(P, endif, true);
            }
            break;
        }
    } else if (is_name(t, "set")) {
        advance(P);
        Node *target = parse_assign_target(P, true, false, true);
        if (is_op(cur(P), OP_ASSIGN)) {
            advance(P);
            n = new_node(P, N_SET, t);
            n->a = target;
            n->b = parse_tuple(P, false, true, false, false);
        } else {
            n = new_node(P, N_SET_BLOCK, t);
            n->a = target;
            n->c = parse_filter(P, NULL, false);
            n->body = parse_statements(P, endset, true);
        }
    } else if (is_name(t, "macro")) {
        advance(P);
        n = new_node(P, N_MACRO, t);
        Node *name = parse_assign_target(P, false, true, false);
        n->name = name->name;
        n->sym = name->sym;
        parse_signature(P, n);
        int saved_loops = P->loop_depth;
        P->loop_depth = 0;     /* a macro body is its own function */
        n->body = parse_statements(P, endmacro, true);
        P->loop_depth = saved_loops;
        finish_macro(P, n);
    } else if (is_name(t, "call")) {
        advance(P);
        n = new_node(P, N_CALL_BLOCK, t);
        Node *m = new_node(P, N_MACRO, t);
        m->name = str_new(P->rt, "caller", 6);
        m->sym = intern_sym(P, m->name);
        if (is_op(cur(P), OP_LPAREN)) parse_signature(P, m);
        Node *call = parse_expression(P, true);
        if (call->kind != N_CALL) fail_at(P, t, "expected call", NULL, NULL);
        n->a = call;
        int saved_loops = P->loop_depth;
        P->loop_depth = 0;
        m->body = parse_statements(P, endcall, true);
        P->loop_depth = saved_loops;
        finish_macro(P, m);
        m->flag |= MF_ANONYMOUS;
        n->b = m;
    } else if (is_name(t, "filter")) {
        advance(P);
        n = new_node(P, N_FILTER_BLOCK, t);
        n->c = parse_filter(P, NULL, true);
        n->body = parse_statements(P, endfilter, true);
    } else if (is_name(t, "with")) {
        advance(P);
        n = new_node(P, N_WITH, t);
        while (cur(P)->type != T_BLOCK_END) {
            if (n->items.n) expect_op(P, OP_COMMA, ",");
            Token *at = cur(P);
            Node *set = new_node(P, N_SET, at);
            set->a = parse_assign_target(P, true, false, false);
            expect_op(P, OP_ASSIGN, "=");
            set->b = parse_expression(P, true);
            nl_push(P, &n->items, set);
        }
        n->body = parse_statements(P, endwith, true);
    } else if (is_name(t, "break") || is_name(t, "continue")) {
        advance(P);
        if (P->loop_depth == 0)
            fail_at(P, t, "'%s' outside loop", is_name(t, "break") ? "break" : "continue", NULL);
        n = new_node(P, is_name(t, "break") ? N_BREAK : N_CONTINUE, t);
    } else if (is_name(t, "generation")) {
        advance(P);
        n = new_node(P, N_GENERATION, t);
        int saved_loops = P->loop_depth;
        P->loop_depth = 0;     /* the body runs as a caller() function */
        n->body = parse_statements(P, endgen, true);
        P->loop_depth = saved_loops;
        P->t->uses_generation = true;
    } else if (is_name(t, "block")) {
        advance(P);
        n = new_node(P, N_SCOPE_BLOCK, t);
        Str *bname = tok_str(expect_name(P));
        for (int i = 0; i < P->nblocks; i++)
            if (str_eq(P->blocks[i], bname)) {
                P->rt->line = t->line;
                P->rt->col = t->col;
                rt_throw(P->rt, CF_ERR_TEMPLATE_ASSERTION, "block '%s' defined twice", bname->data);
            }
        if (P->nblocks < 64) P->blocks[P->nblocks++] = bname;
        n->name = bname;
        if (is_name(cur(P), "scoped")) {
            advance(P);
            n->flag |= BLOCK_SCOPED;
        }
        if (is_name(cur(P), "required")) {
            advance(P);
            n->flag |= BLOCK_REQUIRED;
        }
        if (is_op(cur(P), OP_SUB))
            fail_at(P, cur(P), "Block names in Jinja have to be valid Python identifiers and may not contain hyphens, use an underscore instead.", NULL, NULL);
        int saved_loops = P->loop_depth;
        P->loop_depth = 0;     /* the body is a function of its own: no break out of it */
        /* ... which Jinja2 compiles after the template body, when the
         * enclosing autoescape blocks no longer decide how output escapes */
        bool saved_escape = P->escape, saved_volatile = P->escape_volatile;
        P->escape = P->escape_volatile = false;
        n->body = parse_statements(P, endblock, true);
        P->escape = saved_escape;
        P->escape_volatile = saved_volatile;
        P->loop_depth = saved_loops;
        if (n->flag & BLOCK_REQUIRED)
            for (int i = 0; i < n->body.n; i++)
                if (n->body.v[i]->kind != N_DATA || !all_whitespace(n->body.v[i]->v.u.s))
                    fail_at(P, cur(P), "Required blocks can only contain comments or whitespace", NULL, NULL);
        if (cur(P)->type == T_NAME && str_eq(tok_str(cur(P)), bname)) advance(P);   /* {% endblock name %} */
    } else if (is_name(t, "autoescape")) {
        advance(P);
        n = new_node(P, N_AUTOESCAPE, t);
        n->a = parse_expression(P, true);
        bool outer = P->escape, outer_volatile = P->escape_volatile;
        Value on;
        if (foldable(P, n->a, !P->escape_volatile) && interp_eval_constant(P->rt, P->t, n->a, &on))
            P->escape = v_truthy(on);
        else P->escape_volatile = true;
        n->body = parse_statements(P, endautoescape, true);
        P->escape = outer;
        P->escape_volatile = outer_volatile;
    } else if (is_name(t, "extends") || is_name(t, "include") || is_name(t, "import") || is_name(t, "from")) {
        /* Parsed by Jinja2, but with no loader they fail when run. */
        advance(P);
        n = new_node(P, N_FAIL, t);
        n->op = CF_ERR_TYPE;
        n->v = v_strz(P->rt, "no loader for this environment specified");
        while (cur(P)->type != T_BLOCK_END && cur(P)->type != T_EOF) advance(P);
    } else {
        P->ntags--;   /* (Jinja2 takes an unknown tag off its stack first) */
        fail_unknown_or_eof(P, t, t->v.u.s->data, NULL);
    }
    P->ntags--;
    leave(P);
    return n;
}

static bool at_end_token(Parser *P, const char *const *end_tokens) {
    if (!end_tokens) return false;
    for (int i = 0; end_tokens[i]; i++)
        if (is_name(cur(P), end_tokens[i])) return true;
    return false;
}

static NodeList subparse(Parser *P, const char *const *end_tokens) {
    if (end_tokens) push_ends(P, end_tokens);
    NodeList body = subparse_body(P, end_tokens);
    if (end_tokens) P->nends--;
    return body;
}

static NodeList subparse_body(Parser *P, const char *const *end_tokens) {
    NodeList body = {0};
    for (;;) {
        Token *t = cur(P);
        if (t->type == T_EOF) break;
        if (t->type == T_DATA) {
            Node *d = new_node(P, N_DATA, t);
            d->v = t->v;
            nl_push(P, &body, d);
            advance(P);
        } else if (t->type == T_VAR_BEGIN) {
            advance(P);
            Node *o = new_node(P, N_OUTPUT, t);
            P->output_root = true;
            o->a = parse_tuple(P, false, true, false, false);
            P->output_root = false;
            o->flag = escape_mode(P, compile_time_constant(P, o->a));
            nl_push(P, &body, o);
            if (cur(P)->type != T_VAR_END) expect_failed(P, "end of print statement");
            advance(P);
        } else if (t->type == T_BLOCK_BEGIN) {
            advance(P);
            if (at_end_token(P, end_tokens)) return body;
            Node *s = parse_statement(P);
            nl_push(P, &body, s);
            expect_block_end(P);
        } else {
            fail_unexpected(P);
        }
    }
    return body;
}

/* Fill the lazily cached hash and length of every string the AST holds,
 * so concurrent renders only ever read the shared tree. */
static void freeze_str(Str *s) {
    if (!s) return;
    str_hash(s);
    str_nchars(s);
}
static void freeze_node(Node *n, void *ctx) {
    (void)ctx;
    if (n->v.type == VT_STR || n->v.type == VT_BIGINT) freeze_str(n->v.u.s);
    freeze_str(n->name);
    freeze_str(n->attr);
    for (int i = 0; i < n->kwvals.n; i++) freeze_str(n->kwnames[i]);
    for (int i = 0; i < n->nparams; i++) freeze_str(n->params[i]);
}

/* Unknown filters and tests are compile errors, except inside an `if` or a
 * conditional expression (Jinja2's "soft" frames), where they fail only when
 * run. Loop, macro, call, filter, set-block and with bodies are new frames,
 * which are never soft. */
/* The first store to `loop` in a for loop (its target, or a set/for
 * anywhere inside), which Jinja2's code generator rejects. */
static const Node *loop_store_in_target(const Node *t) {
    if (t->kind == N_NAME) return t->name && str_eqz(t->name, "loop") ? t : NULL;
    if (t->kind == N_TUPLE)
        for (int i = 0; i < t->items.n; i++) {
            const Node *hit = loop_store_in_target(t->items.v[i]);
            if (hit) return hit;
        }
    return NULL;
}
static const Node *find_loop_store(const Node *n);
static const Node *find_loop_store_list(const NodeList *l) {
    for (int i = 0; i < l->n; i++) {
        const Node *hit = find_loop_store(l->v[i]);
        if (hit) return hit;
    }
    return NULL;
}
static const Node *find_loop_store(const Node *n) {
    if (!n) return NULL;
    const Node *hit = NULL;
    if (n->kind == N_SET || n->kind == N_SET_BLOCK || n->kind == N_FOR) hit = loop_store_in_target(n->a);
    if (!hit) hit = find_loop_store(n->b);
    if (n->kind == N_WITH) {     /* its targets are parameters, not stores */
        for (int i = 0; i < n->items.n && !hit; i++) hit = find_loop_store(n->items.v[i]->b);
    } else if (!hit) {
        hit = find_loop_store_list(&n->items);
    }
    if (!hit) hit = find_loop_store_list(&n->body);
    if (!hit) hit = find_loop_store_list(&n->alt);
    return hit;
}

static void check_unknown(Parser *P, Node *n, bool soft);
static void check_list(Parser *P, NodeList *l, bool soft) {
    for (int i = 0; i < l->n; i++) check_unknown(P, l->v[i], soft);
}
static void check_unknown(Parser *P, Node *n, bool soft) {
    if (!n) return;
    switch (n->kind) {
    case N_IF: case N_CONDEXPR: soft = true; break;
    case N_FOR: {
        check_unknown(P, n->c, false);
        const Node *store = find_loop_store(n);
        if (store) {
            P->rt->line = store->line;
            P->rt->col = store->col;
            rt_throw(P->rt, CF_ERR_TEMPLATE_ASSERTION, "Can't assign to special loop variable in for-loop target");
        }
        check_unknown(P, n->b, soft);
        check_unknown(P, n->a, false);
        check_list(P, &n->body, false);
        check_list(P, &n->alt, false);
        return;
    }
    case N_CALL_BLOCK:          /* Jinja2 compiles the caller before the call */
        check_unknown(P, n->b, false);
        check_unknown(P, n->a, soft);
        return;
    case N_MACRO:
        if (n->flag & MF_CALLER_PARAM) {
            P->rt->line = n->line;
            P->rt->col = n->col;
            rt_throw(P->rt, CF_ERR_TEMPLATE_ASSERTION, "When defining macros or call blocks the special \"caller\" "
                     "argument must be omitted or be given a default.");
        }
        soft = false;
        break;
    case N_SET_BLOCK: case N_FILTER_BLOCK: case N_GENERATION: case N_SCOPE_BLOCK:
        soft = false;
        break;
    case N_WITH:
        for (int i = 0; i < n->items.n; i++) check_unknown(P, n->items.v[i]->b, soft);
        check_list(P, &n->body, false);
        return;
    case N_FILTER: case N_TEST:
        if (!(n->kind == N_FILTER ? (void *)n->filter : (void *)n->test) && !soft) {
            P->rt->line = n->line;
            P->rt->col = n->col;
            rt_throw(P->rt, CF_ERR_TEMPLATE_ASSERTION, "No %s named '%s'.",
                     n->kind == N_FILTER ? "filter" : "test", n->attr->data);
        }
        break;
    default:
        break;
    }
    check_unknown(P, n->a, soft);
    check_unknown(P, n->b, soft);
    check_unknown(P, n->c, soft);
    check_unknown(P, n->d, soft);
    check_list(P, &n->items, soft);
    check_list(P, &n->kwvals, soft);
    check_list(P, &n->body, soft);
    check_list(P, &n->alt, soft);
}

/* Everything a render needs to know about each name, computed once. */
static void resolve_symbols(Rt *rt, struct cf_template *t) {
    static const char *const chat_names[CHAT_NVARS] = {
        "messages", "tools", "documents", "add_generation_prompt", "continue_final_message"};
    int n = t->nsyms ? t->nsyms : 1;
    t->sym_builtin = rt_alloc0(rt, (size_t)n * sizeof(Value));
    t->sym_undef = rt_alloc0(rt, (size_t)n * sizeof(Value));
    t->sym_chat = rt_alloc(rt, (size_t)n);
    for (int k = 0; k < CHAT_NVARS; k++) {
        t->chat_key[k] = str_new(rt, chat_names[k], strlen(chat_names[k]));
        freeze_str(t->chat_key[k]);
        Str *known = known_key(t->chat_key[k], t->chat_key[k]->hash);   /* found by pointer */
        if (known) t->chat_key[k] = known;
    }
    t->sym_loop = t->sym_caller = t->sym_varargs = t->sym_kwargs = t->sym_self = t->sym_super = -1;
    for (int i = 0; i < t->nsyms; i++) {
        Str *name = t->syms[i];
        freeze_str(name);
        global_lookup(name->data, name->len, &t->sym_builtin[i]);
        t->sym_undef[i] = v_undef_msg(rt, "'%s' is undefined", name->data);
        freeze_str(t->sym_undef[i].u.s);
        t->sym_chat[i] = -1;
        for (int k = 0; k < CHAT_NVARS; k++)
            if (str_eqz(name, chat_names[k])) t->sym_chat[i] = (int8_t)k;
        if (str_eqz(name, "loop")) t->sym_loop = i;
        else if (str_eqz(name, "caller")) t->sym_caller = i;
        else if (str_eqz(name, "varargs")) t->sym_varargs = i;
        else if (str_eqz(name, "kwargs")) t->sym_kwargs = i;
        else if (str_eqz(name, "self")) t->sym_self = i;
        else if (str_eqz(name, "super")) t->sym_super = i;
    }
}

/* ---- packing the finished tree ----
 * A render walks a few hundred nodes of a tree that parsing left scattered
 * among the lexer's tokens and the lists' growth: copied in walk order into
 * one block of nodes and one of lists, they share cache lines and pages
 * (the tree is read-only from here on; the old copies are garbage in the
 * arena). A node reached twice keeps one copy. */
typedef struct Packer {
    Node *nodes;          /* next free node */
    Node **lists;         /* next free list slot */
    bool fold_outputs;    /* {{ 'text' }} may become text: no autoescape block */
} Packer;

enum { N_MOVED = 0xFF };  /* an old node already copied: its .a is the copy */

typedef struct TreeSize {
    size_t nodes, slots;  /* nodes, and list entries */
    bool autoescape;      /* an autoescape block anywhere */
} TreeSize;

static void count_tree(const Node *n, TreeSize *sz);
static void count_list(const NodeList *l, TreeSize *sz) {
    sz->slots += (size_t)l->n;
    for (int i = 0; i < l->n; i++) count_tree(l->v[i], sz);
}
static void count_tree(const Node *n, TreeSize *sz) {
    if (!n) return;
    sz->nodes++;
    if (n->kind == N_AUTOESCAPE) sz->autoescape = true;
    count_tree(n->a, sz);
    count_tree(n->b, sz);
    count_tree(n->c, sz);
    count_tree(n->d, sz);
    count_list(&n->body, sz);
    count_list(&n->alt, sz);
    count_list(&n->items, sz);
    count_list(&n->kwvals, sz);
}

/* An operand of an int sum (BINOP_INT_SUM): 1 if its shape makes it an
 * int (an int constant, x|length, loop.index0, a sum), 0 if it may be one
 * (a name, name.attr), -1 if it cannot be an operand. */
static int int_sum_shape(const Node *n) {
    switch (n->kind) {
    case N_CONST: return n->v.type == VT_INT ? 1 : -1;
    case N_NAME: return 0;
    case N_GETATTR:
        if (!n->simple) return -1;
        return n->op && n->op != LA_FIRST && n->op != LA_LAST ? 1 : 0;   /* loop.index0 */
    case N_FILTER:
        return n->simple && n->op == FILTER_LENGTH && (n->a->kind == N_NAME || (n->a->kind == N_GETATTR && n->a->simple))
                   ? 1 : -1;
    case N_BINOP: return n->simple == BINOP_INT_SUM ? 1 : -1;
    default: return -1;
    }
}

/* name.attr carries its name's symbol in its own first cache line, so
 * that evaluating it touches one node, not two (ast.h: N_GETATTR.simple;
 * a single comparison does the same from the start: parse_compare). */
static void fuse_operands(Node *n) {
    if (n->kind == N_GETATTR && n->a->kind == N_NAME && n->a->op != NAME_IN_BLOCK) {   /* m.role */
        n->sym = n->a->sym;
        n->simple = (uint8_t)(n->a->op == NAME_TOP_LEVEL ? GA_NAME_TOP : GA_NAME);
    }
    if (n->kind == N_BINOP && (n->op == OP_ADD || n->op == OP_SUB)) {   /* messages|length - 1 - loop.index0 */
        int a = int_sum_shape(n->a), b = int_sum_shape(n->b);
        if (a >= 0 && b >= 0 && a + b > 0) n->simple = BINOP_INT_SUM;
    }
    if (n->kind == N_COMPARE && n->simple == CMP_EQUALITY && n->flag && n->v.type == VT_STR &&
        n->a->kind == N_GETATTR && n->a->simple && n->a->flag)   /* m.role == 'user' */
        n->simple = CMP_ATTR_STR;
    if (n->kind == N_GETITEM && n->a->kind == N_NAME && n->a->op != NAME_IN_BLOCK && n->b->kind == N_BINOP &&
        n->b->simple == BINOP_INT_SUM && n->b->a->kind == N_GETATTR && n->b->a->simple && n->b->a->op == LA_INDEX0 &&
        n->b->b->kind == N_CONST && n->b->b->v.type == VT_INT)   /* messages[loop.index0 - 1] */
        n->simple = GI_LOOP_OFFSET;
}

static Node *pack_tree(Packer *pk, Node *n);
static void pack_list(Packer *pk, NodeList *l) {
    if (!l->n) {
        l->v = NULL;
        return;
    }
    Node **v = pk->lists;
    pk->lists += l->n;
    for (int i = 0; i < l->n; i++) v[i] = l->v[i];
    l->v = v;
    for (int i = 0; i < l->n; i++) v[i] = pack_tree(pk, v[i]);
}
static Node *pack_tree(Packer *pk, Node *n) {
    if (!n) return NULL;
    if (n->kind == N_MOVED) return n->a;
    Node *copy = pk->nodes++;
    *copy = *n;
    n->kind = N_MOVED;
    n->a = copy;
    copy->a = pack_tree(pk, copy->a);
    copy->b = pack_tree(pk, copy->b);
    copy->c = pack_tree(pk, copy->c);
    copy->d = pack_tree(pk, copy->d);
    pack_list(pk, &copy->body);
    pack_list(pk, &copy->alt);
    pack_list(pk, &copy->items);
    pack_list(pk, &copy->kwvals);
    fuse_operands(copy);
    /* A constant printed is text, unless an autoescape block could be
     * active when it runs (a macro's body runs in its caller's mode). */
    if (pk->fold_outputs && copy->kind == N_OUTPUT && copy->a->kind == N_CONST && copy->a->v.type == VT_STR &&
        !(copy->a->v.flags & VF_MARKUP)) {
        copy->kind = N_DATA;
        copy->v = copy->a->v;
    }
    /* A constant string's code points, counted once here: the output
     * then knows that what it writes of it is ASCII (StrBuf.ascii_len). */
    if ((copy->kind == N_DATA || copy->kind == N_CONST) && copy->v.type == VT_STR) str_nchars(copy->v.u.s);
    return copy;
}

/* ((a and b) and c), as parsed, becomes (a and (b and c)): the same value
 * and order of evaluation (and/or are associative in Python), but a false
 * `a` ends the test at the top instead of at the bottom of the chain. New
 * nodes, so that a subtree reached twice is never changed under a parent. */
static void rotate_logic_chain(Node *n, void *ctx) {
    Rt *rt = ctx;
    while ((n->kind == N_AND || n->kind == N_OR) && n->a->kind == n->kind) {
        Node *inner = n->a;
        Node *right = rt_alloc(rt, sizeof(Node));
        *right = *inner;
        right->a = inner->b;
        right->b = n->b;
        n->a = inner->a;
        n->b = right;
    }
}

static void pack_template(Rt *rt, struct cf_template *t) {
    TreeSize sz = {0, 0, false};
    count_list(&t->body, &sz);
    if (!sz.nodes) return;
    Packer pk;
    pk.fold_outputs = !sz.autoescape;
    unsigned char *block = rt_alloc(rt, sz.nodes * sizeof(Node) + 64);
    pk.nodes = (Node *)(void *)(block + ((64 - ((uintptr_t)block & 63)) & 63));
    pk.lists = rt_alloc(rt, sz.slots * sizeof(Node *));
    pack_list(&pk, &t->body);
}

static void count_block(Node *n, void *t) {
    if (n->kind == N_SCOPE_BLOCK) ((struct cf_template *)t)->nblocks++;
}
static void collect_block(Node *n, void *t) {
    struct cf_template *tt = t;
    if (n->kind == N_SCOPE_BLOCK) tt->blocks[tt->nblocks++] = n;
}

/* ---- accumulators ----
 * {% set ns.out = ns.out ~ a ~ b %} copies the whole of ns.out each time,
 * and the arena keeps every copy until the render ends: a template that
 * builds its prompt this way (Reka-Edge) took memory quadratic in the
 * conversation, and 1 MB of it ran past the 256 MiB limit, where Python,
 * which frees each old copy, needs 30 MB. Such a statement is marked
 * (N_SET.flag = SET_ACCUMULATE) when nothing can hold on to ns.out's value
 * but the namespace: the renderer may then append to it in place
 * (interp.c, accumulate). That holds when the name `ns` is only ever read
 * to reach an attribute (never passed, aliased, printed or subscripted as a
 * whole) and `ns.out` is only ever read as the first operand of such a
 * statement, printed ({{ ns.out }}), tested ({% if ns.out %}, not ns.out)
 * or asked ns.out.endswith(...) / startswith / find / rfind / count. */
typedef struct AccScan {
    Node **sets;  int nsets, setcap;    /* candidate statements */
    Node **reads; int nreads, readcap;  /* reads that keep nothing: ns.out nodes, and ns names */
    Rt *rt;
} AccScan;

static void acc_push(AccScan *a, Node ***v, int *n, int *cap, Node *x) {
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 16;
        *v = rt_realloc(a->rt, *v, (size_t)*cap * sizeof **v, (size_t)nc * sizeof **v);
        *cap = nc;
    }
    (*v)[(*n)++] = x;
}

static bool attr_of_name(const Node *n) { return n && n->kind == N_GETATTR && n->a->kind == N_NAME; }

static bool acc_candidate_sym(const AccScan *a, int sym) {
    for (int i = 0; i < a->nsets; i++)
        if (a->sets[i]->a->sym == sym) return true;
    return false;
}

static void acc_find_sets(Node *n, void *ctx) {
    AccScan *a = ctx;
    if (n->kind != N_SET || n->a->kind != N_NSREF || !n->b || n->b->kind != N_CONCAT || n->b->op == ESC_ON ||
        n->b->items.n < 2)
        return;
    const Node *first = n->b->items.v[0];
    if (attr_of_name(first) && first->a->sym == n->a->sym && first->attr == n->a->attr)
        acc_push(a, &a->sets, &a->nsets, &a->setcap, n);
}

static void acc_allow(AccScan *a, Node *x) {
    if (x && ((x->kind == N_NAME && acc_candidate_sym(a, x->sym)) || (attr_of_name(x) && acc_candidate_sym(a, x->a->sym))))
        acc_push(a, &a->reads, &a->nreads, &a->readcap, x);
}

static void acc_find_reads(Node *n, void *ctx) {
    AccScan *a = ctx;
    static const char *const keep_nothing[] = {"endswith", "startswith", "find", "rfind", "count", NULL};
    switch (n->kind) {
    case N_SET:
    case N_FOR:
        for (int i = 0; i < a->nsets; i++)
            if (a->sets[i] == n) acc_allow(a, n->b->items.v[0]);
        /* a set's or a loop's target names are stores */
        if (n->a && n->a->kind == N_NAME) acc_allow(a, n->a);
        for (int i = 0; n->a && n->a->kind == N_TUPLE && i < n->a->items.n; i++)
            if (n->a->items.v[i]->kind == N_NAME) acc_allow(a, n->a->items.v[i]);
        break;
    case N_GETATTR:
        if (n->a->kind == N_NAME) acc_allow(a, n->a);   /* ns.anything: the name only reached through */
        break;
    case N_OUTPUT: case N_IF: case N_NOT:
        if (attr_of_name(n->a)) acc_allow(a, n->a);
        break;
    case N_CALL:
        if (n->a->kind == N_GETATTR && attr_of_name(n->a->a))
            for (const char *const *m = keep_nothing; *m; m++)
                if (str_eqz(n->a->attr, *m)) acc_allow(a, n->a->a);
        break;
    default:
        break;
    }
}

static bool acc_read_allowed(const AccScan *a, const Node *x) {
    for (int i = 0; i < a->nreads; i++)
        if (a->reads[i] == x) return true;
    return false;
}

/* Any other read of a candidate's name, or of its attribute, rules out
 * every candidate statement on that name (and attribute). */
static void acc_check_reads(Node *n, void *ctx) {
    AccScan *a = ctx;
    bool name = n->kind == N_NAME && acc_candidate_sym(a, n->sym);
    bool attr = attr_of_name(n) && acc_candidate_sym(a, n->a->sym);
    if ((!name && !attr) || acc_read_allowed(a, n)) return;
    for (int i = 0; i < a->nsets; i++) {
        Node *set = a->sets[i];
        if (set->a->sym == (name ? n->sym : n->a->sym) && (name || set->a->attr == n->attr)) {
            a->sets[i] = a->sets[--a->nsets];   /* (no longer a candidate) */
            i--;
        }
    }
}

static void mark_accumulators(Rt *rt, struct cf_template *t) {
    AccScan a = {0};
    a.rt = rt;
    walk_list(&t->body, acc_find_sets, &a);
    if (!a.nsets) return;
    walk_list(&t->body, acc_find_reads, &a);
    walk_list(&t->body, acc_check_reads, &a);
    for (int i = 0; i < a.nsets; i++) a.sets[i]->flag = SET_ACCUMULATE;
}

/* ---- if/elif chains testing one expression ----
 * `m.role|lower == 'system' ... elif m.role|lower == 'user' ... elif ...`:
 * Jinja2 evaluates the left operand again for every test. Where it is
 * name.key|pure_filter (GA_KEY: the name's dict cannot change while the
 * chain's tests run, nor can a name be rebound by an expression), the
 * N_IF becomes an N_IF_CHAIN and those tests CMP_CHAINED, so that a run of
 * the chain evaluates the operand once (interp.c: IfMemo). */
enum { CHAIN_TESTS_MAX = 32 };
typedef struct ChainTests { Node *v[CHAIN_TESTS_MAX]; int n; } ChainTests;

static bool chain_left_shape(const Node *e) {   /* name.key|pure (a plain name.key costs no more than a memo) */
    if (e->kind != N_FILTER || !e->simple || e->op != FILTER_PURE || !e->a) return false;
    e = e->a;
    return e->kind == N_GETATTR && e->simple && (e->flag & GA_KEY);
}

static bool same_chain_left(const Node *x, const Node *y) {
    if (x->kind != y->kind) return false;
    if (x->kind == N_FILTER) {
        if (x->filter != y->filter) return false;
        x = x->a;
        y = y->a;
    }
    return x->simple == y->simple && x->sym == y->sym && str_eq(x->attr, y->attr);
}

static void chain_collect(Node *n, ChainTests *ct) {   /* the ==/!= tests through and/or/not */
    if (n->kind == N_AND || n->kind == N_OR) {
        chain_collect(n->a, ct);
        chain_collect(n->b, ct);
    } else if (n->kind == N_NOT) {
        chain_collect(n->a, ct);
    } else if (n->kind == N_COMPARE && n->simple == CMP_EQUALITY && chain_left_shape(n->a) &&
               ct->n < CHAIN_TESTS_MAX) {
        ct->v[ct->n++] = n;
    }
}

/* The strs E must be one of for test to hold (ast.h: ChainGuards), appended
 * to out (at most max); false when test has no such guard. *exact: the
 * test holds whenever E is one of them (no `and` in it). */
static bool chain_guard(const Node *test, const Node *chain, const Str **out, int *count, int max, bool *exact) {
    if (test->kind == N_AND) {   /* a false `a` ends it */
        *exact = false;
        return chain_guard(test->a, chain, out, count, max, exact);
    }
    if (test->kind == N_OR)
        return chain_guard(test->a, chain, out, count, max, exact) &&
               chain_guard(test->b, chain, out, count, max, exact);
    if (test->kind != N_COMPARE || test->simple != CMP_CHAINED || test->chain_if != chain || test->op != OP_EQ ||
        !test->flag || test->v.type != VT_STR || *count == max)
        return false;
    out[(*count)++] = test->v.u.s;
    return true;
}

/* The leftmost ==/!= of a test: the first thing it evaluates. */
static const Node *chain_first_compare(const Node *test) {
    while (test->kind == N_AND || test->kind == N_OR) test = test->a;
    return test;
}

enum { CHAIN_GUARD_MAX = 8 };   /* constants a test's guard lists (more: no guard) */
static void mark_chain_guards(Rt *rt, Node *n) {
    const Node *first = chain_first_compare(n->a);
    const Str *buf[CHAIN_GUARD_MAX];
    int count = 0;
    bool exact = true;
    if (n->init || !chain_guard(n->a, n, buf, &count, CHAIN_GUARD_MAX, &exact) || first->kind != N_COMPARE) return;
    ChainGuards *g = rt_alloc0(rt, sizeof *g);
    g->operand = first->a;
    g->ntests = 1 + n->items.n;
    const Str *const **consts = rt_alloc0(rt, (size_t)g->ntests * sizeof *consts);
    uint8_t *then = rt_alloc0(rt, (size_t)g->ntests);
    for (int k = 0; k < g->ntests; k++) {
        const Node *test = k ? n->items.v[k - 1]->a : n->a;
        count = 0;
        exact = true;
        if (!chain_guard(test, n, buf, &count, CHAIN_GUARD_MAX, &exact)) continue;
        const Str **set = rt_alloc0(rt, (size_t)(count + 1) * sizeof *set);
        memcpy(set, buf, (size_t)count * sizeof *set);
        consts[k] = set;
        bool and_exact = true;
        int scratch = 0;
        then[k] = exact ? GUARD_HOLDS
                  : test->kind == N_AND && chain_guard(test->a, n, buf, &scratch, CHAIN_GUARD_MAX, &and_exact) && and_exact
                      ? GUARD_AND
                      : GUARD_TEST;
    }
    g->consts = consts;
    g->then = then;
    n->guards = g;
}

/* After every chain is marked (a test's chain_if is final). */
static void guard_if_chain(Node *n, void *rt) {
    if (n->kind == N_IF_CHAIN) mark_chain_guards(rt, n);
}

static void mark_if_chain(Node *n, void *ctx) {
    (void)ctx;
    if (n->kind != N_IF || n->simple == IF_ELIF) return;
    ChainTests ct = {{0}, 0};
    chain_collect(n->a, &ct);
    for (int k = 0; k < n->items.n; k++) {
        n->items.v[k]->simple = IF_ELIF;   /* (visited after n: never a chain of its own) */
        chain_collect(n->items.v[k]->a, &ct);
    }
    for (int i = 0; i + 1 < ct.n; i++) {   /* the first left operand tested twice or more */
        int same = 0;
        for (int j = i + 1; j < ct.n; j++) same += same_chain_left(ct.v[i]->a, ct.v[j]->a);
        if (!same) continue;
        for (int j = i; j < ct.n; j++)
            if (j == i || same_chain_left(ct.v[i]->a, ct.v[j]->a)) {
                ct.v[j]->chain_if = n;
                ct.v[j]->simple = CMP_CHAINED;
            }
        n->kind = N_IF_CHAIN;   /* (after every other pass: none of them knows the kind) */
        return;
    }
}

/* {{ a + b + c }}: the sum flattened once (ast.h: ADD_CHAIN_MAX), not on
 * every run. After every other pass (items is a list none of them expects
 * on an N_BINOP), and after the walk that finds the sums (the plan holds
 * the sum's own node: a walk would go round it). */
typedef struct SumScan { Rt *rt; Node **v; int n, cap; } SumScan;

static void find_output_sums(Node *n, void *ctx) {
    SumScan *sc = ctx;
    if (n->kind != N_OUTPUT || n->a->kind != N_BINOP || n->a->op != OP_ADD) return;
    if (sc->n == sc->cap) {
        int cap = sc->cap ? sc->cap * 2 : 16;
        sc->v = rt_realloc(sc->rt, sc->v, (size_t)sc->cap * sizeof *sc->v, (size_t)cap * sizeof *sc->v);
        sc->cap = cap;
    }
    sc->v[sc->n++] = n->a;
}

static bool plain_str_const(const Node *n) {
    return n->kind == N_CONST && n->v.type == VT_STR && !(n->v.flags & VF_MARKUP);
}

/* `... + '<|im_end|>' + '\n'`: a run of constant str operands in a sum's
 * plan (plan[j]->b, j >= 1) is written as one piece while the text so far
 * is a plain str, as it always is there (interp.c: output_sum). The run's
 * first `+` node holds the joined text (v) and the run's length (sym). */
static void join_constant_runs(Rt *rt, Node **plan, int count) {
    Node *top = plan[count - 1];
    for (int j = 1; j < count; j++) {
        int run = 1;
        while (j + run < count && plain_str_const(plan[j]->b) && plain_str_const(plan[j + run]->b)) run++;
        if (run < 2) continue;
        if (plan[j]->flag) {   /* (a `+` node in two sums' plans: joined in neither) */
            plan[j]->flag = SUM_SHARED;
            continue;
        }
        size_t len = 0;
        for (int r = 0; r < run; r++) len += plan[j + r]->b->v.u.s->len;
        char *text = rt_alloc(rt, len + 1);
        size_t at = 0;
        for (int r = 0; r < run; r++) {
            const Str *piece = plan[j + r]->b->v.u.s;
            memcpy(text + at, piece->data, piece->len);
            at += piece->len;
        }
        Value joined = v_str(rt, text, len);
        freeze_str(joined.u.s);
        plan[j]->v = joined;
        plan[j]->flag = SUM_JOINED;
        plan[j]->sym = run;
        top->flag |= SUM_HAS_RUNS;
        j += run - 1;
    }
}

static void plan_output_sums(Rt *rt, struct cf_template *t) {
    SumScan sc = {rt, NULL, 0, 0};
    walk_list(&t->body, find_output_sums, &sc);
    for (int i = 0; i < sc.n; i++) {
        Node *top = sc.v[i], *x = top;
        if (top->items.n) continue;   /* (a node reached twice) */
        int k = 0;
        while (x->kind == N_BINOP && x->op == OP_ADD && k < ADD_CHAIN_MAX) { k++; x = x->a; }
        Node **plan = rt_alloc(rt, (size_t)(k + 1) * sizeof *plan);
        plan[0] = x;
        x = top;
        for (int j = k; j >= 1; j--, x = x->a) plan[j] = x;
        top->items.v = plan;
        top->items.n = k + 1;
        join_constant_runs(rt, plan, k + 1);
    }
}

void parse_template(Rt *rt, struct cf_template *t) {
    TokenList toks = {0};
    lex_tokens(rt, t->source, &toks);
    Parser P = {0};
    P.rt = rt;
    P.t = t;
    P.tok = toks.t;
    P.n = toks.n;
    if (cur(&P)->type == T_ERROR) lexer_failed(&P, cur(&P));
    t->body = subparse(&P, NULL);
    if (cur(&P)->type != T_EOF) fail_unexpected(&P);
    check_list(&P, &t->body, false);
    walk_list(&t->body, freeze_node, NULL);
    resolve_symbols(rt, t);
    scope_analyze(rt, t);
    walk_list(&t->body, rotate_logic_chain, rt);
    pack_template(rt, t);
    walk_list(&t->body, count_block, t);   /* (after packing: the nodes a render reads) */
    t->blocks = rt_alloc(rt, (size_t)(t->nblocks ? t->nblocks : 1) * sizeof *t->blocks);
    t->nblocks = 0;
    walk_list(&t->body, collect_block, t);
    mark_accumulators(rt, t);
    scope_layout(t);   /* (after packing: a node reached twice is one node) */
    walk_list(&t->body, mark_if_chain, NULL);
    walk_list(&t->body, guard_if_chain, rt);
    plan_output_sums(rt, t);
}
