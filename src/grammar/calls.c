/* calls.c — the call syntax of each reply format (data), and the walk that
 * turns a description plus the request's tools into grammar rules, lazy
 * triggers and an xgrammar structural tag. */
#include "engine/json.h"
#include "engine/unicode.h"
#include "calls.h"

/* ---- the formats ---- */

#define HERMES_TOKENS "<think>", "</think>", "<tool_call>", "</tool_call>"

static const CallSyntax HERMES = {
    .format = "hermes", .reasoning_open = "<think>", .reasoning_close = "</think>",
    .call_open = "<tool_call>", .call_close = "</tool_call>", .style = ARGS_JSON_OBJECT,
    .name_key = "name", .args_key = "arguments", .name_args_any_order = true,
    .canon_after_open = "\n", .canon_before_close = "\n",
    .preserved_tokens = {HERMES_TOKENS},
};

static const CallSyntax GLM45 = {
    .format = "glm45", .reasoning_open = "<think>", .reasoning_close = "</think>",
    .call_open = "<tool_call>", .call_close = "</tool_call>", .style = ARGS_XML_PARAMS,
    .key_open = "<arg_key>", .key_close = "</arg_key>", .value_open = "<arg_value>", .value_close = "</arg_value>",
    .canon_after_open = "", .canon_before_close = "",
    .preserved_tokens = {HERMES_TOKENS, "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"},
    .additional_stops = {"<|observation|>", "<|user|>"},
};

static const CallSyntax COMMAND_A = {
    .format = "command-a", .reasoning_open = "<|START_THINKING|>", .reasoning_close = "<|END_THINKING|>",
    .section_open = "<|START_ACTION|>", .section_close = "<|END_ACTION|>", .calls_in_array = true,
    .style = ARGS_JSON_OBJECT, .id_key = "tool_call_id", .name_key = "tool_name", .args_key = "parameters",
    .canon_after_open = "[\n    ", .canon_before_close = "\n]",
    .preserved_tokens = {"<|START_THINKING|>", "<|END_THINKING|>", "<|START_ACTION|>", "<|END_ACTION|>",
                         "<|START_RESPONSE|>", "<|END_RESPONSE|>"},
    .additional_stops = {"<|END_OF_TURN_TOKEN|>"},
};

bool call_syntax_of(cf_reply_format f, CallSyntax *out) {
    const CallSyntax *fixed = NULL;
    switch (f) {
    case CF_REPLY_HERMES: fixed = &HERMES; break;
    case CF_REPLY_GLM45: fixed = &GLM45; break;
    case CF_REPLY_COMMAND_A: fixed = &COMMAND_A; break;
    default: break;
    }
    /* a description wins: the grammar is then what the parser reads */
    const ReplyFormatDesc *d = reply_format_desc(f);
    if (d) {
        described_syntax(d, out);
        return true;
    }
    if (fixed) {
        *out = *fixed;
        return true;
    }
    return family_syntax(f, out);
}

void call_block_add(CallBlock *b, const char *open, GExpr *inner, const char *close) {
    if (b->n >= CALL_MAX_VARIANTS || !open || !*open) return;
    for (int k = 0; k < b->n; k++)
        if (strcmp(b->v[k].open, open) == 0) return;   /* the first way a marker opens calls wins */
    b->v[b->n++] = (CallVariant){open, close ? close : "", inner, NULL, false};
}

void call_block_add_pattern(CallBlock *b, const char *pattern, bool full, GExpr *inner) {
    if (b->n < CALL_MAX_VARIANTS) b->v[b->n++] = (CallVariant){"", "", inner, pattern, full};
}


const char *call_names_regex(Gram *g, const CallRequest *r) {
    StrBuf sb;
    sb_init(g->rt, &sb, 64);
    sb_puts(&sb, "(?:");
    const List *tools = r->tools.u.list;
    bool first = true;
    for (size_t i = 0; i < tools->len; i++) {
        Str *name;
        if (!tool_name(tools->items[i], &name)) continue;
        if (!first) sb_putc(&sb, '|');
        first = false;
        call_regex_escape(&sb, name->data, name->len);
    }
    sb_putc(&sb, ')');
    sb_putc(&sb, 0);   /* a C string */
    return sb.p;
}

/* ---- tools ---- */

Value tool_function(Value tool) {
    Value inner;
    if (schema_get(tool, "function", &inner) && inner.type == VT_DICT) return inner;
    return tool;
}

bool tool_name(Value tool, Str **out) {
    Value v;
    if (!schema_get(tool_function(tool), "name", &v) || v.type != VT_STR) return false;
    *out = v.u.s;
    return true;
}

Value tool_parameters(Value tool) {
    Value v;
    if (schema_get(tool_function(tool), "parameters", &v) && (v.type == VT_DICT || v.type == VT_BOOL)) return v;
    return v_none();
}

/* ---- text without a delimiter ---- */

/* Text in which `delim` does not occur (possibly empty), as a chain of
 * rules over code points: the rule of level k is what may follow when the
 * text so far ends with delim's first k code points (the longest such k),
 * the matching automaton of Knuth-Morris-Pratt, so delimiters with
 * repeated characters ("```") are exact too. */
enum { UNTIL_MAX = 64 };   /* code points of a delimiter (markers are under 32 bytes) */

enum { UNTIL_KEY_BYTES = 80 };   /* of the delimiter, in its memo key */

/* The rule of state s of a delimiter automaton (call_until, call_until_either):
 * next[d] is the state after the code point distinct[d] (0: the root;
 * UNTIL_COMPLETE: a delimiter would be complete). Only the code points that
 * keep part of a match need their own branch; any other goes back to the root. */
enum { UNTIL_COMPLETE = (size_t)-1 };

static void until_state_rule(Gram *g, const uint32_t *lv, size_t s, const uint32_t *distinct, const size_t *next,
                             size_t nd) {
    GRange keep[2 * UNTIL_MAX + 1];
    size_t nk = 0;
    GList alts = {0};
    for (size_t d = 0; d < nd; d++) {
        if (!next[d]) continue;
        keep[nk++] = (GRange){distinct[d], distinct[d]};
        if (next[d] == UNTIL_COMPLETE) continue;
        char u[4];
        int ul = utf8_encode(distinct[d], u);
        gl_push(g, &alts, gx_seq(g, gx_lit(g, u, (size_t)ul), gx_opt(g, gx_ref(g, lv[next[d]]))));
    }
    gl_push(g, &alts, gx_seq(g, gx_class(g, true, keep, nk), gx_opt(g, gx_ref(g, lv[0]))));
    gram_rule_set(g, lv[s], gl_alt(g, &alts));
}

GExpr *call_until(Gram *g, const char *delim) {
    for (uint32_t i = 0; i < g->nuntil_seen; i++)
        if (strncmp(g->until_seen[i].delim, delim, UNTIL_KEY_BYTES) == 0) return gx_opt(g, gx_ref(g, g->until_seen[i].rule));
    char key[96];
    gram_fmt(key, sizeof key, "until-%.80s", delim);
    uint32_t first = gram_memo_get(g, key);
    if (first != UINT32_MAX) return gx_opt(g, gx_ref(g, first));
    uint32_t cp[UNTIL_MAX];
    size_t L = 0, n = strlen(delim);
    for (size_t i = 0; i < n && L < UNTIL_MAX;) cp[L++] = utf8_next(delim, n, &i);
    if (!L) rt_throw(g->rt, CF_ERR_USAGE, "an empty delimiter");
    /* failure links, then the distinct code points */
    size_t fail[UNTIL_MAX] = {0};
    for (size_t k = 1, j = 0; k < L; k++) {
        while (j && cp[k] != cp[j]) j = fail[j - 1];
        if (cp[k] == cp[j]) j++;
        fail[k] = j;
    }
    uint32_t distinct[UNTIL_MAX];
    size_t nd = 0;
    for (size_t k = 0; k < L; k++) {
        size_t d = 0;
        while (d < nd && distinct[d] != cp[k]) d++;
        if (d == nd) distinct[nd++] = cp[k];
    }
    uint32_t lv[UNTIL_MAX];
    for (size_t k = 0; k < L; k++) {
        char nm[112];
        gram_fmt(nm, sizeof nm, k ? "until-%.60s-%zu" : "until-%.60s", delim, k);
        lv[k] = gram_rule_new(g, nm, strlen(nm));
    }
    gram_memo_put(g, key, lv[0]);
    if (g->nuntil_seen < GRAM_UNTIL_SEEN) {
        /* (a copy: the caller's text may be a buffer it reuses) */
        size_t kn = strlen(key + 6);
        char *copy = rt_alloc(g->rt, kn + 1);
        memcpy(copy, key + 6, kn + 1);
        g->until_seen[g->nuntil_seen].delim = copy;
        g->until_seen[g->nuntil_seen++].rule = lv[0];
    }
    for (size_t k = 0; k < L; k++) {
        size_t next[UNTIL_MAX];
        for (size_t d = 0; d < nd; d++) {
            size_t j = k;   /* the next level after distinct[d] */
            while (j && cp[j] != distinct[d]) j = fail[j - 1];
            if (cp[j] == distinct[d]) j++;
            next[d] = j == L ? UNTIL_COMPLETE : j;
        }
        until_state_rule(g, lv, k, distinct, next, nd);
    }
    return gx_opt(g, gx_ref(g, lv[0]));
}

/* Text in which neither `a` nor `b` occurs (possibly empty): call_until's
 * chain over the two delimiters at once, a rule per state of their
 * Aho-Corasick automaton (a state: the longest end of the text that starts
 * either delimiter). A value that may hold a verbatim section ends at the
 * value's closer or where such a section opens. */
enum { UNTIL_ANY_STATES = 2 * UNTIL_MAX + 1 };

typedef struct UntilTrie {
    uint32_t cp[UNTIL_ANY_STATES];      /* the code point into a node */
    int32_t parent[UNTIL_ANY_STATES];   /* -1: the root (node 0) */
    int32_t fail[UNTIL_ANY_STATES];
    bool dead[UNTIL_ANY_STATES];        /* a delimiter ends here (or at an end of it) */
    size_t n;
} UntilTrie;

static size_t trie_child(const UntilTrie *t, size_t s, uint32_t c) {
    for (size_t k = 1; k < t->n; k++)
        if (t->parent[k] == (int32_t)s && t->cp[k] == c) return k;
    return 0;
}

/* The state after c from s, failure links followed (0: the root). */
static size_t trie_move(const UntilTrie *t, size_t s, uint32_t c) {
    for (;;) {
        size_t k = trie_child(t, s, c);
        if (k || s == 0) return k;
        s = (size_t)t->fail[s];
    }
}

GExpr *call_until_either(Gram *g, const char *a, const char *b) {
    char key[200];
    gram_fmt(key, sizeof key, "until-either %.80s\x01%.80s", a, b);
    uint32_t first = gram_memo_get(g, key);
    if (first != UINT32_MAX) return gx_opt(g, gx_ref(g, first));
    UntilTrie t = {.n = 1, .parent = {-1}};
    uint32_t distinct[UNTIL_ANY_STATES];
    size_t nd = 0;
    const char *delims[2] = {a, b};
    for (int w = 0; w < 2; w++) {
        const char *z = delims[w];
        size_t n = strlen(z), at = 0, state = 0, depth = 0;
        if (!n) rt_throw(g->rt, CF_ERR_USAGE, "an empty delimiter");
        while (at < n && depth++ < UNTIL_MAX) {
            uint32_t c = utf8_next(z, n, &at);
            size_t next = trie_child(&t, state, c);
            if (!next) {
                next = t.n++;
                t.parent[next] = (int32_t)state;
                t.cp[next] = c;
            }
            state = next;
            size_t d = 0;
            while (d < nd && distinct[d] != c) d++;
            if (d == nd) distinct[nd++] = c;
        }
        t.dead[state] = true;
    }
    /* failure links breadth first: a node's before its children's */
    size_t order[UNTIL_ANY_STATES], no = 0;
    order[no++] = 0;
    for (size_t i = 0; i < no; i++)
        for (size_t k = 1; k < t.n; k++) {
            if (t.parent[k] != (int32_t)order[i]) continue;
            t.fail[k] = order[i] ? (int32_t)trie_move(&t, (size_t)t.fail[order[i]], t.cp[k]) : 0;
            t.dead[k] = t.dead[k] || t.dead[t.fail[k]];
            order[no++] = k;
        }
    uint32_t lv[UNTIL_ANY_STATES] = {0};
    for (size_t s = 0; s < t.n; s++) {
        if (t.dead[s]) continue;
        char nm[48];
        gram_fmt(nm, sizeof nm, s ? "until-either-%zu" : "until-either", s);
        lv[s] = gram_rule_new(g, nm, strlen(nm));
    }
    gram_memo_put(g, key, lv[0]);
    for (size_t s = 0; s < t.n; s++) {
        if (t.dead[s]) continue;
        size_t next[UNTIL_ANY_STATES];
        for (size_t d = 0; d < nd; d++) {
            size_t k = trie_move(&t, s, distinct[d]);
            next[d] = k && t.dead[k] ? UNTIL_COMPLETE : k;   /* (dead: a delimiter would be complete) */
        }
        until_state_rule(g, lv, s, distinct, next, nd);
    }
    return gx_opt(g, gx_ref(g, lv[0]));
}

/* ---- one call ---- */

GExpr *call_ws(Gram *g) { return gram_ws_ref(g); }
static GExpr *ws(Gram *g) { return call_ws(g); }

static GExpr *json_key(Gram *g, const char *k) {
    StrBuf sb;
    sb_init(g->rt, &sb, strlen(k) + 2);
    json_write_string(&sb, k, strlen(k), false);
    return gx_lit(g, sb.p, sb.len);
}

GExpr *call_json_string_lit(Gram *g, const char *z, size_t n) {
    StrBuf sb;
    sb_init(g->rt, &sb, n + 2);
    json_write_string(&sb, z, n, false);
    return gx_lit(g, sb.p, sb.len);
}

SchemaCx *call_schema_cx(Gram *g, Value tool, Value *params) {
    *params = tool_parameters(tool);
    SchemaCx *c = schema_cx_new(g, *params);   /* $ref pointers are relative to the tool's parameters */
    schema_cx_close_objects(c);
    return c;
}

GExpr *call_rule_per_tool(Gram *g, const CallRequest *r, const char *prefix, const char *alt_name,
                          GExpr *(*one)(Gram *g, const CallRequest *r, Value tool, void *cx), void *cx) {
    GList alts = {0};
    const List *tools = r->tools.u.list;
    for (size_t i = 0; i < tools->len; i++) {
        Str *name;
        if (!tool_name(tools->items[i], &name)) {
            gram_warn(g, "a tool without a name is left out");
            continue;
        }
        char nm[112];
        gram_fmt(nm, sizeof nm, "%s-%.60s", prefix, name->data);
        uint32_t id = gram_rule_new(g, nm, strlen(nm));
        gram_rule_set(g, id, one(g, r, tools->items[i], cx));
        gl_push(g, &alts, gx_ref(g, id));
    }
    GExpr *e = gl_alt(g, &alts);
    if (!e) rt_throw(g->rt, CF_ERR_USAGE, "no tool with a name to call");
    uint32_t id = gram_rule_new(g, alt_name, strlen(alt_name));
    gram_rule_set(g, id, e);
    return gx_ref(g, id);
}

GExpr *call_each_tool(Gram *g, const CallRequest *r, GExpr *(*one)(Gram *g, const CallRequest *r, Value tool, void *cx),
                      void *cx) {
    uint32_t memo = gram_memo_get(g, "\x01tool-call");
    if (memo != UINT32_MAX) return gx_ref(g, memo);
    GExpr *ref = call_rule_per_tool(g, r, "call", "tool-call", one, cx);
    gram_memo_put(g, "\x01tool-call", ref->u.rule);
    return ref;
}

static GExpr *json_name(Gram *g, const Str *name) {
    StrBuf sb;
    sb_init(g->rt, &sb, name->len + 2);
    json_write_string(&sb, name->data, name->len, false);
    return gx_lit(g, sb.p, sb.len);
}

uint32_t call_args_rule(Gram *g, SchemaCx *c, Value params, const Str *name) {
    char nm[96];
    gram_fmt(nm, sizeof nm, "%.60s-args", name->data);
    /* one rule per tool's schema, however many spellings a format has */
    char key[128];
    gram_fmt(key, sizeof key, "\x02args %p %.60s", params.type == VT_DICT ? (void *)params.u.dict : NULL, name->data);
    uint32_t memo = gram_memo_get(g, key);
    if (memo != UINT32_MAX) return memo;
    if (params.type == VT_NONE) {
        /* no parameters: an object (OpenAI sends "{}") */
        Dict *d = dict_new(g->rt, 1);
        dict_set(g->rt, d, v_strz(g->rt, "type"), v_strz(g->rt, "object"));
        params = v_dict_of(d);
    }
    uint32_t id = schema_rule(c, params, nm);
    gram_memo_put(g, key, id);
    return id;
}

/* typed-XML parameters: each one written as the format spells it, in the
 * schema's order; required ones must be there. Parameters the schema does
 * not name are not offered (the parser could not type them). */
static GExpr *xml_params(Gram *g, SchemaCx *c, const CallSyntax *s, Value params, const Str *name) {
    Value props, req;
    if (params.type != VT_DICT || !schema_get(params, "properties", &props) || props.type != VT_DICT) return NULL;
    GList items = {0};
    for (size_t i = 0; i < dict_len(props.u.dict); i++) {
        Value k = dict_key_at(props.u.dict, i), ps = dict_val_at(props.u.dict, i);
        if (k.type != VT_STR) continue;
        bool required = false;
        if (schema_get(params, "required", &req) && req.type == VT_LIST)
            for (size_t r = 0; r < req.u.list->len; r++)
                if (req.u.list->items[r].type == VT_STR && str_eq(req.u.list->items[r].u.s, k.u.s)) required = true;
        GExpr *value;
        if (schema_takes_string(c, ps)) {
            GExpr *choices = schema_raw_string_choices(c, ps);
            value = choices ? choices : call_until(g, s->value_close);
        } else {
            char nm[96];
            gram_fmt(nm, sizeof nm, "%.40s-%.40s", name->data, k.u.s->data);
            value = gx_seq(g, ws(g), gx_ref(g, schema_rule(c, ps, nm)), ws(g));
        }
        GExpr *item = gx_seq(g, gx_litz(g, s->key_open), gx_lit(g, k.u.s->data, k.u.s->len), gx_litz(g, s->key_close), ws(g),
                             gx_litz(g, s->value_open), value, gx_litz(g, s->value_close), ws(g));
        gl_push(g, &items, required ? item : gx_opt(g, item));
    }
    Value addl;
    if (schema_get(params, "additionalProperties", &addl) && !(addl.type == VT_BOOL && !addl.u.b))
        gram_warn(g, "%s: parameters the schema does not name are not offered", s->format);
    return gl_seq(g, &items);
}

/* The call's text between call_open and call_close (or the array element). */
static GExpr *call_body(Gram *g, const CallSyntax *s, Value tool) {
    Str *name;
    if (!tool_name(tool, &name)) return NULL;
    Value params = tool_parameters(tool);
    SchemaCx *c = schema_cx_new(g, params);   /* $ref pointers are relative to the tool's parameters */
    schema_cx_close_objects(c);
    if (s->style == ARGS_XML_PARAMS)
        return gx_seq(g, gx_lit(g, name->data, name->len), ws(g), xml_params(g, c, s, params, name));
    GExpr *colon = gx_seq(g, ws(g), gx_litz(g, ":"), ws(g));
    GExpr *name_part = gx_seq(g, json_key(g, s->name_key), colon, json_name(g, name), ws(g));
    GExpr *args_part = gx_seq(g, json_key(g, s->args_key), colon, gx_ref(g, call_args_rule(g, c, params, name)), ws(g));
    GExpr *comma = gx_seq(g, gx_litz(g, ","), ws(g));
    GExpr *id_part = s->id_key ? gx_seq(g, json_key(g, s->id_key), colon, gx_ref(g, gram_string(g)), ws(g), comma) : NULL;
    GExpr *fwd = gx_seq(g, gx_litz(g, "{"), ws(g), id_part, name_part, comma, args_part, gx_litz(g, "}"));
    if (!s->name_args_any_order) return fwd;
    GExpr *rev = gx_seq(g, gx_litz(g, "{"), ws(g), args_part, comma, name_part, gx_litz(g, "}"));
    return gx_alt(g, fwd, rev);
}

/* One call of a CallSyntax format: its body, inside call_open/close. */
static GExpr *syntax_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    const CallSyntax *s = r->syn;
    GExpr *body = call_body(g, s, tool);
    if (s->call_open) body = gx_seq(g, gx_litz(g, s->call_open), ws(g), body, ws(g), gx_litz(g, s->call_close));
    return body;
}

static GExpr *one_call(Gram *g, const CallRequest *r) {
    return call_rule_per_tool(g, r, "call", "tool-call", syntax_call, NULL);
}

static GExpr *calls_expr(Gram *g, const CallRequest *r) {
    const CallSyntax *s = r->syn;
    GExpr *one = one_call(g, r);
    if (s->calls_in_array) {
        GExpr *more = r->parallel ? gx_rep(g, gx_seq(g, gx_litz(g, ","), ws(g), one, ws(g)), 0, GREP_INF) : NULL;
        return gx_seq(g, gx_litz(g, s->section_open), ws(g), gx_litz(g, "["), ws(g), one, ws(g), more, gx_litz(g, "]"), ws(g),
                      gx_litz(g, s->section_close));
    }
    GExpr *more = r->parallel ? gx_rep(g, gx_seq(g, ws(g), one), 0, GREP_INF) : NULL;
    GExpr *calls = gx_seq(g, one, more);
    if (s->section_open) calls = gx_seq(g, gx_litz(g, s->section_open), ws(g), calls, ws(g), gx_litz(g, s->section_close));
    return calls;
}

/* Reasoning before anything else, as the prompt left it. */
static GExpr *reasoning_prefix(Gram *g, const CallRequest *r) {
    const CallSyntax *s = r->syn;
    if (!s->reasoning_close || r->reasoning == REASON_CLOSED) return ws(g);
    GExpr *body = gx_seq(g, call_until(g, s->reasoning_close), gx_litz(g, s->reasoning_close));
    if (r->reasoning == REASON_OPEN) return gx_seq(g, body, ws(g));
    GExpr *open = s->reasoning_open ? gx_opt(g, gx_litz(g, s->reasoning_open)) : NULL;
    return gx_seq(g, ws(g), gx_opt(g, gx_seq(g, open, body)), ws(g));
}

static const char *call_marker(const CallSyntax *s) { return s->section_open ? s->section_open : s->call_open; }

/* A writer's block: one variant (or, with repeat_outside and parallel
 * calls, several in a row), each opener + inner + closer. */
static GExpr *block_expr(Gram *g, const CallRequest *r, const CallBlock *b) {
    GList alts = {0};
    for (int k = 0; k < b->n; k++)
        gl_push(g, &alts, gx_seq(g, *b->v[k].open ? gx_litz(g, b->v[k].open) : NULL, b->v[k].inner,
                                 *b->v[k].close ? gx_litz(g, b->v[k].close) : NULL));
    GExpr *one = gl_alt(g, &alts);
    if (!one) rt_throw(g->rt, CF_ERR_USAGE, "the %s reply format writes no calls", r->syn->format);
    if (!b->repeat_outside || !r->parallel) return one;
    uint32_t id = gram_rule_new(g, "call-block", 10);
    gram_rule_set(g, id, one);
    return gx_seq(g, gx_ref(g, id), gx_rep(g, gx_seq(g, ws(g), gx_ref(g, id)), 0, GREP_INF));
}

void call_grammar(Gram *g, const CallRequest *r, CallGrammar *out) {
    memset(out, 0, sizeof *out);
    GExpr *calls;
    const char *marker;
    if (r->syn->writer) {
        r->syn->writer(g, r, &out->block);
        calls = block_expr(g, r, &out->block);
        marker = out->block.v[0].open;
    } else {
        calls = calls_expr(g, r);
        marker = call_marker(r->syn);
    }
    uint32_t calls_id = gram_rule_new(g, "tool-calls", 10);
    gram_rule_set(g, calls_id, calls);
    GExpr *tail = gx_seq(g, ws(g), out->block.after);
    if (out->block.reply_any) {
        /* the reply opens inside a turn's header: the writer's whole reply */
        out->lark_root = gram_rule_new(g, "reply", 5);
        gram_rule_set(g, out->lark_root, gx_seq(g, out->block.reply_any, tail));
        if (r->required) {
            out->gbnf_root = gram_rule_new(g, "reply-with-calls", 16);
            gram_rule_set(g, out->gbnf_root, gx_seq(g, out->block.reply_with_calls, tail));
        } else {
            out->gbnf_root = gram_rule_new(g, "calls-from-trigger", 18);
            gram_rule_set(g, out->gbnf_root, gx_seq(g, gx_ref(g, calls_id), tail));
        }
        return;
    }
    GExpr *prefix = reasoning_prefix(g, r);
    if (r->required) {
        GList lead = {0};
        for (int k = 0; k < 4 && r->syn->lead_markup[k]; k++) gl_push(g, &lead, gx_litz(g, r->syn->lead_markup[k]));
        if (lead.n) prefix = gx_seq(g, prefix, gx_rep(g, gx_seq(g, gl_alt(g, &lead), ws(g)), 0, 4));
        out->gbnf_root = gram_rule_new(g, "reply", 5);
        gram_rule_set(g, out->gbnf_root, gx_seq(g, prefix, gx_ref(g, calls_id), tail));
        out->lark_root = out->gbnf_root;
        return;
    }
    /* lazy: the grammar starts at the trigger, with the call marker */
    out->gbnf_root = gram_rule_new(g, "calls-from-trigger", 18);
    gram_rule_set(g, out->gbnf_root, gx_seq(g, gx_ref(g, calls_id), tail));
    /* Lark constrains the whole reply: free text up to the first call */
    out->lark_root = gram_rule_new(g, "reply", 5);
    gram_rule_set(g, out->lark_root, gx_seq(g, prefix, call_until(g, marker), gx_opt(g, gx_seq(g, gx_ref(g, calls_id), tail))));
}

/* ---- triggers ---- */

void call_regex_escape(StrBuf *sb, const char *z, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (z[i] && strchr("\\^$.|?*+()[]{}", z[i])) sb_putc(sb, '\\');
        sb_putc(sb, z[i]);
    }
}

static void regex_escape(StrBuf *sb, const char *z) { call_regex_escape(sb, z, strlen(z)); }

static void put_trigger(StrBuf *sb, const char *type, const char *value, size_t n) {
    sb_puts(sb, "{\"type\":\"");
    sb_puts(sb, type);
    sb_puts(sb, "\",\"value\":");
    json_write_string(sb, value, n, false);
    sb_putc(sb, '}');
}

void call_triggers(const CallRequest *r, const CallGrammar *cg, StrBuf *sb) {
    const CallSyntax *s = r->syn;
    const char *markers[CALL_MAX_VARIANTS];
    int n = 0;
    if (cg->block.n) {
        for (int k = 0; k < cg->block.n; k++)
            if (*cg->block.v[k].open) markers[n++] = cg->block.v[k].open;
    } else {
        markers[n++] = call_marker(s);
    }
    sb_putc(sb, '[');
    if (r->reasoning == REASON_OPEN && s->reasoning_close) {
        /* a call mentioned inside the open reasoning does not start the grammar */
        StrBuf re;
        sb_init(sb->rt, &re, 64);
        regex_escape(&re, s->reasoning_close);
        sb_puts(&re, "[\\s\\S]*?(");
        for (int k = 0; k < n; k++) {
            if (k) sb_putc(&re, '|');
            regex_escape(&re, markers[k]);
        }
        sb_putc(&re, ')');
        put_trigger(sb, "pattern", re.p, re.len);
    } else {
        for (int k = 0; k < n; k++) {
            if (k) sb_putc(sb, ',');
            put_trigger(sb, "word", markers[k], strlen(markers[k]));
        }
        for (int k = 0; k < cg->block.n; k++) {
            if (!cg->block.v[k].pattern) continue;
            if (n++) sb_putc(sb, ',');
            put_trigger(sb, cg->block.v[k].pattern_full ? "pattern_full" : "pattern", cg->block.v[k].pattern,
                        strlen(cg->block.v[k].pattern));
        }
    }
    sb_putc(sb, ']');
}

/* ---- xgrammar structural tag ---- */

static void put_json_z(StrBuf *sb, const char *z) { json_write_string(sb, z, strlen(z), false); }


/* Does variant k open the same calls as an earlier tagged variant (the
 * same grammar and closer: another spelling of the opener the parser also
 * reads)? Such a variant gets no tag: the structural tag constrains what
 * the model writes, so the format's own opener carries the calls, and a
 * tag per spelling repeated the whole grammar of the tools for each. */
static bool variant_repeats(const CallBlock *b, int k) {
    for (int j = 0; j < k; j++)
        if (*b->v[j].open && b->v[j].inner == b->v[k].inner && strcmp(b->v[j].close, b->v[k].close) == 0) return true;
    return false;
}

/* A writer's variants as tags: the opener, a grammar of what follows, the
 * closer (xgrammar reads GBNF; the tools are alternatives inside). */
static void block_structural_tag(Gram *g, const CallRequest *r, const CallBlock *b, StrBuf *sb) {
    /* (a variant a pattern triggers has no literal begin: xgrammar's
     * triggers are literal, so it has no tag) */
    sb_puts(sb, "{\"type\":\"structural_tag\",\"format\":{\"type\":\"triggered_tags\",\"triggers\":[");
    int n = 0;
    for (int k = 0; k < b->n; k++) {
        if (!*b->v[k].open || variant_repeats(b, k)) continue;
        if (n++) sb_putc(sb, ',');
        put_json_z(sb, b->v[k].open);
    }
    sb_puts(sb, "],\"tags\":[");
    n = 0;
    for (int k = 0; k < b->n; k++) {
        if (!*b->v[k].open || variant_repeats(b, k)) continue;
        if (n++) sb_putc(sb, ',');
        sb_puts(sb, "{\"type\":\"tag\",\"begin\":");
        put_json_z(sb, b->v[k].open);
        sb_puts(sb, ",\"content\":{\"type\":\"grammar\",\"grammar\":");
        uint32_t id = gram_rule_new(g, "tag-content", 11);
        gram_rule_set(g, id, b->v[k].inner);
        gram_write_gbnf_json(g, sb, id, "root");
        sb_puts(sb, "},\"end\":");
        put_json_z(sb, b->v[k].close);
        sb_putc(sb, '}');
    }
    sb_puts(sb, "],\"at_least_one\":");
    sb_puts(sb, r->required ? "true" : "false");
    sb_puts(sb, ",\"stop_after_first\":");
    sb_puts(sb, r->parallel && b->repeat_outside ? "false" : "true");
    sb_puts(sb, "}}");
}

void call_structural_tag(Gram *g, const CallRequest *r, const CallGrammar *cg, StrBuf *sb) {
    const CallSyntax *s = r->syn;
    if (cg->block.n) {
        block_structural_tag(g, r, &cg->block, sb);
        return;
    }
    JsonDumpOpts o;
    json_opts_default(&o);
    const char *marker = call_marker(s);
    sb_puts(sb, "{\"type\":\"structural_tag\",\"format\":{\"type\":\"triggered_tags\",\"triggers\":[");
    put_json_z(sb, marker);
    sb_puts(sb, "],\"tags\":[");
    const List *tools = r->tools.u.list;
    bool first = true;
    for (size_t i = 0; i < tools->len; i++) {
        Str *name;
        if (!tool_name(tools->items[i], &name)) continue;
        Value params = tool_parameters(tools->items[i]);
        if (!first) sb_putc(sb, ',');
        first = false;
        StrBuf begin, end;
        sb_init(g->rt, &begin, 64);
        sb_init(g->rt, &end, 32);
        sb_puts(sb, "{\"type\":\"tag\",\"begin\":");
        if (s->style == ARGS_XML_PARAMS) {
            /* the parameters as a grammar (xgrammar reads GBNF) */
            sb_puts(&begin, s->call_open);
            sb_put(&begin, name->data, name->len);
            sb_puts(&end, s->call_close);
            json_write_string(sb, begin.p, begin.len, false);
            sb_puts(sb, ",\"content\":{\"type\":\"grammar\",\"grammar\":");
            uint32_t id = gram_rule_new(g, "xml-params", 10);
            gram_rule_set(g, id, gx_seq(g, ws(g), xml_params(g, schema_cx_new(g, params), s, params, name)));
            gram_write_gbnf_json(g, sb, id, "root");
            sb_putc(sb, '}');
        } else if (s->calls_in_array) {
            /* the element varies by its id: the whole object is the content */
            sb_puts(&begin, s->section_open);
            sb_puts(&begin, s->canon_after_open);
            sb_puts(&end, s->canon_before_close);
            sb_puts(&end, s->section_close);
            json_write_string(sb, begin.p, begin.len, false);
            sb_puts(sb, ",\"content\":{\"type\":\"json_schema\",\"json_schema\":{\"type\":\"object\",\"properties\":{");
            put_json_z(sb, s->id_key);
            sb_puts(sb, ":{\"type\":\"string\"},");
            put_json_z(sb, s->name_key);
            sb_puts(sb, ":{\"const\":");
            json_write_string(sb, name->data, name->len, false);
            sb_puts(sb, "},");
            put_json_z(sb, s->args_key);
            sb_putc(sb, ':');
            if (params.type == VT_NONE) sb_puts(sb, "{\"type\":\"object\"}");
            else json_dump(g->rt, sb, params, &o);
            sb_puts(sb, "},\"required\":[");
            put_json_z(sb, s->name_key);
            sb_putc(sb, ',');
            put_json_z(sb, s->args_key);
            sb_puts(sb, "]}}");
        } else {
            sb_puts(&begin, s->call_open);
            sb_puts(&begin, s->canon_after_open);
            sb_puts(&begin, "{");
            json_write_string(&begin, s->name_key, strlen(s->name_key), false);
            sb_puts(&begin, ": ");
            json_write_string(&begin, name->data, name->len, false);
            sb_puts(&begin, ", ");
            json_write_string(&begin, s->args_key, strlen(s->args_key), false);
            sb_puts(&begin, ": ");
            sb_puts(&end, "}");
            sb_puts(&end, s->canon_before_close);
            sb_puts(&end, s->call_close);
            json_write_string(sb, begin.p, begin.len, false);
            sb_puts(sb, ",\"content\":{\"type\":\"json_schema\",\"json_schema\":");
            if (params.type == VT_NONE) sb_puts(sb, "{\"type\":\"object\"}");
            else json_dump(g->rt, sb, params, &o);
            sb_putc(sb, '}');
        }
        sb_puts(sb, ",\"end\":");
        json_write_string(sb, end.p, end.len, false);
        sb_putc(sb, '}');
    }
    sb_puts(sb, "],\"at_least_one\":");
    sb_puts(sb, r->required ? "true" : "false");
    sb_puts(sb, ",\"stop_after_first\":");
    sb_puts(sb, r->parallel ? "false" : "true");
    sb_puts(sb, "}}");
}
