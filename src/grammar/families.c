/* families.c — grammars for the hand-written reply families (src/reply:
 * mistral, llama3-json, pythonic, ...). Their parsers are code, not a
 * ReplyFormatDesc, because their syntax is not markers around fields: a
 * name before [ARGS], bare JSON anywhere in the text, Python calls. So
 * each gets a small writer here that fills the call block from the same
 * spellings its parser reads (the comments name the parser's file). */
#include "reply/families.h"
#include "calls.h"

static GExpr *ws(Gram *g) { return call_ws(g); }

static GExpr *args_of(Gram *g, Value tool) {
    Value params;
    SchemaCx *c = call_schema_cx(g, tool, &params);
    Str *name;
    tool_name(tool, &name);
    return gx_ref(g, call_args_rule(g, c, params, name));
}

static GExpr *quoted_name(Gram *g, Value tool) {
    Str *name;
    tool_name(tool, &name);
    return call_json_string_lit(g, name->data, name->len);
}

static GExpr *json_string(Gram *g) { return gx_ref(g, gram_string(g)); }

/* ---- mistral (mistral.c) ----
 * v11/v13: [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...} (the id optional), each
 * call after its own [TOOL_CALLS]; v3: [TOOL_CALLS] [{"name", "arguments",
 * "id"}, ...] — one opener, the JSON array after it. */
static GExpr *mistral_v13_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    Str *name;
    tool_name(tool, &name);
    GExpr *id = gx_seq(g, gx_litz(g, "[CALL_ID]"), gx_greedy(g, gx_chars(g, false, "a-zA-Z0-9_-"), 1, 64));
    return gx_seq(g, gx_lit(g, name->data, name->len), gx_opt(g, id), gx_litz(g, "[ARGS]"), args_of(g, tool));
}

static GExpr *json_call_object(Gram *g, Value tool, const char *args_key, bool with_id) {
    GExpr *colon = gx_seq(g, ws(g), gx_litz(g, ":"), ws(g));
    GExpr *comma = gx_seq(g, ws(g), gx_litz(g, ","), ws(g));
    GExpr *name = gx_seq(g, gx_litz(g, "\"name\""), colon, quoted_name(g, tool));
    GExpr *args = gx_seq(g, gx_litz(g, args_key), colon, args_of(g, tool));
    GExpr *id = with_id ? gx_opt(g, gx_seq(g, comma, gx_litz(g, "\"id\""), colon, json_string(g))) : NULL;
    return gx_seq(g, gx_litz(g, "{"), ws(g), gx_alt(g, gx_seq(g, name, comma, args), gx_seq(g, args, comma, name)), id, ws(g),
                  gx_litz(g, "}"));
}

static GExpr *mistral_v3_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    return json_call_object(g, tool, "\"arguments\"", true);
}

/* A rule for the alternatives over the tools made by `one` (named `nm`). */
static GExpr *each_tool_cx(Gram *g, const CallRequest *r, const char *nm,
                           GExpr *(*one)(Gram *g, const CallRequest *r, Value tool, void *cx), void *cx) {
    return call_rule_per_tool(g, r, nm, nm, one, cx);
}

static GExpr *each_tool(Gram *g, const CallRequest *r, const char *nm,
                        GExpr *(*one)(Gram *g, const CallRequest *r, Value tool, void *cx)) {
    return each_tool_cx(g, r, nm, one, NULL);
}

/* [ item (, item)* ] with one item unless parallel */
static GExpr *json_list(Gram *g, const CallRequest *r, GExpr *item) {
    GExpr *more = r->parallel ? gx_rep(g, gx_seq(g, ws(g), gx_litz(g, ","), ws(g), item), 0, GREP_INF) : NULL;
    return gx_seq(g, gx_litz(g, "["), ws(g), item, more, ws(g), gx_litz(g, "]"));
}

static void mistral_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    GExpr *v13 = each_tool(g, r, "call", mistral_v13_call);
    GExpr *v3 = json_list(g, r, each_tool(g, r, "call-object", mistral_v3_call));
    b->repeat_outside = true;
    call_block_add(b, "[TOOL_CALLS]", gx_alt(g, v13, gx_seq(g, ws(g), v3)), "");
}

/* ---- llama3-json (llama3.c) ----
 * {"name": "f", "parameters": {...}} (or "arguments") anywhere in the text,
 * several back to back or joined by ';', or after <|python_tag|>. The
 * lazy grammar starts at {"name" (a bare '{' in prose is no call); Llama
 * 4's <|python_start|><|python_end|> wrapper may lead a required call. */
static GExpr *llama3_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    GExpr *colon = gx_seq(g, ws(g), gx_litz(g, ":"), ws(g));
    GExpr *comma = gx_seq(g, ws(g), gx_litz(g, ","), ws(g));
    GExpr *args = gx_seq(g, gx_alt(g, gx_litz(g, "\"parameters\""), gx_litz(g, "\"arguments\"")), colon, args_of(g, tool));
    /* what follows {"name" (the trigger) */
    return gx_seq(g, colon, quoted_name(g, tool), comma, args, ws(g), gx_litz(g, "}"));
}

static void llama3_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    GExpr *rest = each_tool(g, r, "call-rest", llama3_call);
    GExpr *one = gx_seq(g, gx_litz(g, "{"), ws(g), gx_litz(g, "\"name\""), rest);
    GExpr *sep = gx_seq(g, ws(g), gx_opt(g, gx_seq(g, gx_litz(g, ";"), ws(g))));
    GExpr *more = r->parallel ? gx_rep(g, gx_seq(g, sep, one), 0, GREP_INF) : NULL;
    b->repeat_outside = false;
    call_block_add(b, "{\"name\"", gx_seq(g, rest, more), "");
    call_block_add(b, "<|python_tag|>", gx_seq(g, ws(g), one, more), "");
}

/* ---- pythonic (pythonic.c) ----
 * [f(a=1), g(b='x')] between <|tool_call_start|> and an optional
 * <|tool_call_end|> (LFM2), a ```python fence of calls one per line there
 * (MiniCPM 3), or one per line between <function_calls> and
 * </function_calls> (Olmo 3). Argument values are Python literals typed by
 * the schema's top-level type; deeper values are any Python literal (a
 * relaxation, said in a warning). */
static GExpr *any_char(Gram *g) { return gx_class(g, true, (const GRange[]){{0, 0}}, 1); }

static GExpr *make_pystr(Gram *g) {
    GExpr *single = gx_seq(g, gx_litz(g, "'"),
                           gx_rep(g, gx_alt(g, gx_chars(g, true, "'\\\\\n"), gx_seq(g, gx_litz(g, "\\"), any_char(g))),
                                  0, GREP_INF),
                           gx_litz(g, "'"));
    GExpr *dbl = gx_seq(g, gx_litz(g, "\""),
                        gx_rep(g, gx_alt(g, gx_chars(g, true, "\"\\\\\n"), gx_seq(g, gx_litz(g, "\\"), any_char(g))),
                               0, GREP_INF),
                        gx_litz(g, "\""));
    return gx_alt(g, single, dbl);
}

static GExpr *make_pyint(Gram *g) {
    return gx_seq(g, gx_opt(g, gx_litz(g, "-")), gx_greedy(g, gx_chars(g, false, "0-9"), 1, 20));
}

static GExpr *make_pynum(Gram *g) {
    GExpr *frac = gx_opt(g, gx_seq(g, gx_litz(g, "."), gx_greedy(g, gx_chars(g, false, "0-9"), 0, 20)));
    GExpr *exp = gx_opt(g, gx_seq(g, gx_chars(g, false, "eE"), gx_opt(g, gx_chars(g, false, "+-")),
                                  gx_greedy(g, gx_chars(g, false, "0-9"), 1, 5)));
    return gx_seq(g, gx_opt(g, gx_litz(g, "-")), gx_greedy(g, gx_chars(g, false, "0-9"), 1, 20), frac, exp);
}

static GExpr *make_pybool(Gram *g) {
    return gx_alt(g, gx_litz(g, "True"), gx_litz(g, "False"), gx_litz(g, "true"), gx_litz(g, "false"));
}

static GExpr *make_pyany(Gram *g);
static uint32_t pyany_rule(Gram *g) { return gram_shared(g, "py-value", make_pyany); }

static GExpr *make_pyany(Gram *g) {
    GExpr *v = gx_ref(g, pyany_rule(g));
    GExpr *items = gx_opt(g, gx_seq(g, v, gx_rep(g, gx_seq(g, ws(g), gx_litz(g, ","), ws(g), v), 0, GREP_INF),
                                    gx_opt(g, gx_seq(g, ws(g), gx_litz(g, ",")))));
    GExpr *pair = gx_seq(g, v, ws(g), gx_litz(g, ":"), ws(g), v);
    GExpr *pairs = gx_opt(g, gx_seq(g, pair, gx_rep(g, gx_seq(g, ws(g), gx_litz(g, ","), ws(g), pair), 0, GREP_INF)));
    return gx_alt(g, gx_ref(g, gram_shared(g, "py-string", make_pystr)), gx_ref(g, gram_shared(g, "py-number", make_pynum)),
                  gx_ref(g, gram_shared(g, "py-bool", make_pybool)), gx_litz(g, "None"), gx_litz(g, "null"),
                  gx_seq(g, gx_litz(g, "["), ws(g), items, ws(g), gx_litz(g, "]")),
                  gx_seq(g, gx_litz(g, "("), ws(g), items, ws(g), gx_litz(g, ")")),
                  gx_seq(g, gx_litz(g, "{"), ws(g), pairs, ws(g), gx_litz(g, "}")));
}

/* A Python value for a parameter's schema: its top-level type (or any). */
static GExpr *py_value(Gram *g, Value schema, const char *quote) {
    (void)quote;
    Value t;
    if (schema.type == VT_DICT && schema_get(schema, "type", &t) && t.type == VT_STR) {
        if (str_eqz(t.u.s, "string")) return gx_ref(g, gram_shared(g, "py-string", make_pystr));
        if (str_eqz(t.u.s, "integer")) return gx_ref(g, gram_shared(g, "py-integer", make_pyint));
        if (str_eqz(t.u.s, "number")) return gx_ref(g, gram_shared(g, "py-number", make_pynum));
        if (str_eqz(t.u.s, "boolean")) return gx_ref(g, gram_shared(g, "py-bool", make_pybool));
        if (str_eqz(t.u.s, "null")) return gx_alt(g, gx_litz(g, "None"), gx_litz(g, "null"));
    }
    gram_warn(g, "pythonic: a parameter that is not a string, number or boolean takes any Python literal");
    return gx_ref(g, pyany_rule(g));
}

static bool is_required(Value params, const Str *key) {
    Value req;
    if (!schema_get(params, "required", &req) || req.type != VT_LIST) return false;
    for (size_t r = 0; r < req.u.list->len; r++)
        if (req.u.list->items[r].type == VT_STR && str_eq(req.u.list->items[r].u.s, key)) return true;
    return false;
}

static GExpr *make_comma_sep(Gram *g, const void *key) {
    (void)key;
    return gx_seq(g, ws(g), gx_litz(g, ","), ws(g));
}

static GExpr *make_litz(Gram *g, const void *z) { return gx_litz(g, z); }

/* The name "<tool name's first 40 bytes><mid><k>" (as "%.40s%s%zu" writes
 * it) in nm (96 bytes), and its length: two a parameter of each tool. */
static size_t kw_rule_name(char *nm, const Str *name, const char *mid, size_t k) {
    size_t n = name->len < 40 ? name->len : 40;
    const char *nul = memchr(name->data, 0, n);
    if (nul) n = (size_t)(nul - name->data);
    memcpy(nm, name->data, n);
    size_t m = strlen(mid);
    memcpy(nm + n, mid, m);
    n += m;
    char digits[24], *d = digits + sizeof digits;
    do *--d = (char)('0' + k % 10); while ((k /= 10) != 0);
    memcpy(nm + n, d, (size_t)(digits + sizeof digits - d));
    n += (size_t)(digits + sizeof digits - d);
    nm[n] = 0;
    return n;
}

/* Keyword arguments k<assign>v in the schema's order, the required ones
 * present, a comma between (first_k: the list from k on with nothing
 * before; rest_k: the same after an argument); NULL when none. */
static GExpr *keyword_args(Gram *g, Value tool, const char *assign, GExpr *(*value)(Gram *g, Value schema, const char *quote),
                           const char *quote) {
    Str *name;
    tool_name(tool, &name);
    Value params = tool_parameters(tool), props;
    if (params.type != VT_DICT || !schema_get(params, "properties", &props) || props.type != VT_DICT) return NULL;
    size_t n = dict_len(props.u.dict);
    GExpr *sep = gram_node_of(g, "kw-sep", make_comma_sep);
    GExpr *assign_e = gram_node_of(g, assign, make_litz);
    GExpr *first = NULL, *rest = NULL;   /* of k + 1 */
    for (size_t k = n; k-- > 0;) {
        Value key = dict_key_at(props.u.dict, k);
        if (key.type != VT_STR) continue;
        GExpr *item = gx_seq(g, gx_lit(g, key.u.s->data, key.u.s->len), ws(g), assign_e, ws(g),
                             value(g, dict_val_at(props.u.dict, k), quote));
        bool req = is_required(params, key.u.s);
        char nm[96];
        uint32_t rest_k = gram_rule_new(g, nm, kw_rule_name(nm, name, "-kw-", k));
        GExpr *after = gx_seq(g, sep, item, rest);
        gram_rule_set(g, rest_k, req ? after : rest ? gx_alt(g, after, rest) : gx_opt(g, after));
        uint32_t first_k = gram_rule_new(g, nm, kw_rule_name(nm, name, "-kw-first-", k));
        GExpr *here = gx_seq(g, item, rest);
        gram_rule_set(g, first_k, req ? here : first ? gx_alt(g, here, first) : gx_opt(g, here));
        rest = gx_ref(g, rest_k);
        first = gx_ref(g, first_k);
    }
    return first;
}

/* NAME(k=v, ...) */
static GExpr *python_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    Str *name;
    tool_name(tool, &name);
    return gx_seq(g, gx_lit(g, name->data, name->len), gx_litz(g, "("), ws(g), keyword_args(g, tool, "=", py_value, NULL), ws(g),
                  gx_litz(g, ")"));
}

static void pythonic_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    GExpr *one = each_tool(g, r, "call", python_call);
    GExpr *list = json_list(g, r, one);   /* [a(...), b(...)]: the list's spelling is JSON's */
    GExpr *lines = gx_seq(g, one, r->parallel ? gx_rep(g, gx_seq(g, ws(g), one), 0, GREP_INF) : NULL);
    GExpr *fence = gx_seq(g, gx_litz(g, "```python"), ws(g), lines, ws(g), gx_litz(g, "```"));
    /* after the closer the parser reads text again (LFM2 and MiniCPM 3
     * templates write content after the calls) */
    GExpr *end = gx_opt(g, gx_seq(g, ws(g), gx_litz(g, "<|tool_call_end|>"), call_until(g, "<|tool_call_start|>")));
    b->repeat_outside = true;
    call_block_add(b, "<|tool_call_start|>", gx_seq(g, ws(g), gx_alt(g, list, fence), end), "");
    call_block_add(b, "<function_calls>", gx_seq(g, ws(g), lines, ws(g)), "</function_calls>");
    /* a bare list (Llama 3.2 / 4 pythonic): from the '[' of "[NAME(" */
    StrBuf re;
    sb_init(g->rt, &re, 64);
    sb_puts(&re, "(\\[)");
    sb_puts(&re, call_names_regex(g, r));
    sb_puts(&re, "\\(");
    sb_putc(&re, 0);   /* a C string */
    call_block_add_pattern(b, re.p, false, list);
}

/* ---- gemma4 (gemma4.c) ----
 * <|tool_call>call:NAME{key:<|"|>text<|"|>,n:3}<tool_call|>, FunctionGemma's
 * <start_function_call>call:NAME{key:<escape>text<escape>}<end_function_call>:
 * bare keys, strings between string tokens, other values JSON-like (typed
 * by the schema's top-level type; deeper ones any such value). Text may
 * follow a call. */
static GExpr *make_gemma_string(Gram *g, const void *quote) {
    return gx_seq(g, gx_litz(g, quote), call_until(g, quote), gx_litz(g, quote));
}

/* (one node per quote: a string parameter of every tool uses it) */
static GExpr *gemma_string(Gram *g, const char *quote) { return gram_node_of(g, quote, make_gemma_string); }

/* Any value, strings between `quote` (one rule per quote). */
static uint32_t gemma_any_rule(Gram *g, const char *quote) {
    char key[48];
    gram_fmt(key, sizeof key, "gemma-value %s", quote);
    uint32_t id = gram_memo_get(g, key);
    if (id != UINT32_MAX) return id;
    id = gram_rule_new(g, "gemma-value", 11);
    gram_memo_put(g, key, id);
    GExpr *v = gx_ref(g, id);
    GExpr *items = gx_opt(g, gx_seq(g, v, gx_rep(g, gx_seq(g, ws(g), gx_litz(g, ","), ws(g), v), 0, GREP_INF)));
    GExpr *key_e = gx_alt(g, gx_greedy(g, gx_chars(g, false, "a-zA-Z0-9_"), 1, 64), gemma_string(g, quote));
    GExpr *pair = gx_seq(g, key_e, ws(g), gx_litz(g, ":"), ws(g), v);
    GExpr *pairs = gx_opt(g, gx_seq(g, pair, gx_rep(g, gx_seq(g, ws(g), gx_litz(g, ","), ws(g), pair), 0, GREP_INF)));
    gram_rule_set(g, id, gx_alt(g, gemma_string(g, quote), gx_ref(g, gram_shared(g, "py-number", make_pynum)),
                                gx_litz(g, "true"), gx_litz(g, "false"), gx_litz(g, "null"),
                                gx_seq(g, gx_litz(g, "["), ws(g), items, ws(g), gx_litz(g, "]")),
                                gx_seq(g, gx_litz(g, "{"), ws(g), pairs, ws(g), gx_litz(g, "}"))));
    return id;
}

static GExpr *gemma_value(Gram *g, Value schema, const char *quote) {
    Value t;
    if (schema.type == VT_DICT && schema_get(schema, "type", &t) && t.type == VT_STR) {
        if (str_eqz(t.u.s, "string")) return gemma_string(g, quote);
        if (str_eqz(t.u.s, "integer")) return gx_ref(g, gram_shared(g, "py-integer", make_pyint));
        if (str_eqz(t.u.s, "number")) return gx_ref(g, gram_shared(g, "py-number", make_pynum));
        if (str_eqz(t.u.s, "boolean")) return gx_alt(g, gx_litz(g, "true"), gx_litz(g, "false"));
        if (str_eqz(t.u.s, "null")) return gx_litz(g, "null");
    }
    gram_warn(g, "gemma4: a parameter that is not a string, number or boolean takes any value");
    return gx_ref(g, gemma_any_rule(g, quote));
}

static GExpr *gemma_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    Str *name;
    tool_name(tool, &name);
    return gx_seq(g, gx_litz(g, "call:"), gx_lit(g, name->data, name->len), gx_litz(g, "{"), ws(g),
                  keyword_args(g, tool, ":", gemma_value, (const char *)cx), ws(g), gx_litz(g, "}"));
}

static void gemma4_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    b->repeat_outside = true;
    GExpr *call = each_tool_cx(g, r, "call", gemma_call, (void *)"<|\"|>");
    call_block_add(b, "<|tool_call>",
                   gx_seq(g, call, gx_litz(g, "<tool_call|>"), call_until(g, "<|tool_call>")), "");
    GExpr *fcall = each_tool_cx(g, r, "function-call", gemma_call, (void *)"<escape>");
    call_block_add(b, "<start_function_call>",
                   gx_seq(g, fcall, gx_litz(g, "<end_function_call>"), call_until(g, "<start_function_call>")), "");
}

/* ---- functools (functools.c) ----
 * functools[{"name": "f", "arguments": {...}}, ...], text after the list;
 * Phi-4-mini's bare {"name": ..., "arguments": ...} objects joined by ','. */
static GExpr *named_object(Gram *g, const CallRequest *r, Value tool, void *cx) {
    return json_call_object(g, tool, "\"arguments\"", false);
}

static GExpr *llama3_call(Gram *g, const CallRequest *r, Value tool, void *cx);

static void functools_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    GExpr *object = each_tool(g, r, "call-object", named_object);
    GExpr *more = r->parallel ? gx_rep(g, gx_seq(g, ws(g), gx_litz(g, ","), ws(g), object), 0, GREP_INF) : NULL;
    b->repeat_outside = false;
    call_block_add(b, "functools[", gx_seq(g, ws(g), object, more, ws(g), gx_litz(g, "]"), call_until(g, "functools[")), "");
    GExpr *rest = each_tool(g, r, "call-rest", llama3_call);
    GExpr *bare = gx_seq(g, gx_litz(g, "{"), ws(g), gx_litz(g, "\"name\""), rest);
    GExpr *bare_more = r->parallel ? gx_rep(g, gx_seq(g, ws(g), gx_litz(g, ","), ws(g), bare), 0, GREP_INF) : NULL;
    call_block_add(b, "{\"name\"", gx_seq(g, rest, bare_more), "");
}

/* ---- functionary (functionary.c) ----
 * v3.1: <function=NAME>{...}</function>, one after another;
 * v3.2: a recipient line after ">>>": NAME\n{...}. The prompt writes the
 * turn's first ">>>", so a lazy grammar starts at a later one; required
 * calls start with the name. */
static GExpr *functionary31_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    Str *name;
    tool_name(tool, &name);
    return gx_seq(g, gx_lit(g, name->data, name->len), gx_litz(g, ">"), ws(g), args_of(g, tool), ws(g),
                  gx_litz(g, "</function>"));
}

static void functionary31_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    b->repeat_outside = true;
    call_block_add(b, "<function=", each_tool(g, r, "call", functionary31_call), "");
}

static GExpr *functionary32_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    Str *name;
    tool_name(tool, &name);
    return gx_seq(g, gx_lit(g, name->data, name->len), gx_litz(g, "\n"), ws(g), args_of(g, tool));
}

static void functionary32_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    b->repeat_outside = true;
    GExpr *call = each_tool(g, r, "call", functionary32_call);
    call_block_add(b, ">>>", call, "");
    /* the turn's first recipient line, right after the prompt's ">>>":
     * any recipient but "all" (content) starts a call */
    call_block_add_pattern(b, "((?!all\\n)[^\\n>]+\\n)[\\s\\S]*", true, call);
}

/* ---- harmony (harmony.c) ----
 * [<|start|>assistant] to=functions.NAME<|channel|>commentary json<|message|>{...}<|call|>
 * (the recipient in the role header or after the channel; " json" or
 * <|constrain|>json). The reply begins inside the header the prompt opened. */
static GExpr *harmony_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    Str *name;
    tool_name(tool, &name);
    GExpr *channel = gx_opt(g, gx_seq(g, gx_litz(g, "<|channel|>"), gx_greedy(g, gx_chars(g, false, "a-z"), 1, 16)));
    GExpr *constrain = gx_opt(g, gx_seq(g, gx_opt(g, gx_litz(g, " ")), gx_opt(g, gx_litz(g, "<|constrain|>")), gx_litz(g, "json")));
    GExpr *end = gx_opt(g, gx_seq(g, ws(g), gx_alt(g, gx_litz(g, "<|call|>"), gx_litz(g, "<|end|>")),
                                  gx_opt(g, gx_litz(g, "<|start|>assistant"))));
    return gx_seq(g, gx_lit(g, name->data, name->len), channel, constrain, gx_litz(g, "<|message|>"), args_of(g, tool), end);
}

static void harmony_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    b->repeat_outside = true;
    call_block_add(b, " to=functions.", each_tool(g, r, "call", harmony_call), "");
}

/* ---- xlam (xlam.c) ----
 * [{"name": "f", "arguments": {...}}, ...] bare, in a ```json fence, in
 * <tool_call>...</tool_call> or after [TOOL_CALLS]. */
static GExpr *xlam_object(Gram *g, const CallRequest *r, Value tool, void *cx) {
    return json_call_object(g, tool, "\"arguments\"", true);
}

/* what follows {"name" in a bare list: the name, the arguments, an optional id */
static GExpr *xlam_call_rest(Gram *g, const CallRequest *r, Value tool, void *cx) {
    GExpr *colon = gx_seq(g, ws(g), gx_litz(g, ":"), ws(g));
    GExpr *comma = gx_seq(g, ws(g), gx_litz(g, ","), ws(g));
    GExpr *id = gx_opt(g, gx_seq(g, comma, gx_litz(g, "\"id\""), colon, json_string(g)));
    return gx_seq(g, colon, quoted_name(g, tool), comma, gx_litz(g, "\"arguments\""), colon, args_of(g, tool), id, ws(g),
                  gx_litz(g, "}"));
}

static void xlam_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    GExpr *list = json_list(g, r, each_tool(g, r, "call-object", xlam_object));
    b->repeat_outside = false;
    call_block_add(b, "```json", gx_seq(g, ws(g), list, ws(g)), "```");
    call_block_add(b, "<tool_call>", gx_seq(g, ws(g), list, ws(g)), "</tool_call>");
    call_block_add(b, "[TOOL_CALLS]", gx_seq(g, ws(g), list), "");
    /* the bare list: the grammar starts at [{"name" (an "id" may follow the arguments) */
    GExpr *rest = each_tool(g, r, "call-rest", xlam_call_rest);
    GExpr *object = gx_seq(g, gx_litz(g, "{"), ws(g), gx_litz(g, "\"name\""), rest);
    GExpr *more = r->parallel ? gx_rep(g, gx_seq(g, ws(g), gx_litz(g, ","), ws(g), object), 0, GREP_INF) : NULL;
    call_block_add(b, "[{\"name\"", gx_seq(g, rest, more, ws(g), gx_litz(g, "]")), "");
}

/* ---- the families ---- */

typedef struct FamilyGrammar {
    cf_reply_format format;
    CallWriter writer;
    const char *tokens[8];
    const char *lead[4];
} FamilyGrammar;

static const FamilyGrammar FAMILY_GRAMMARS[] = {
    {CF_REPLY_MISTRAL, mistral_calls, {"[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "[THINK]", "[/THINK]"}, {NULL}},
    {CF_REPLY_LLAMA3_JSON, llama3_calls, {"<|python_tag|>", "<|python_start|>", "<|python_end|>"},
     {"<|python_start|>", "<|python_end|>"}},
    {CF_REPLY_PYTHONIC, pythonic_calls, {"<|tool_call_start|>", "<|tool_call_end|>", "<think>", "</think>"}, {NULL}},
    {CF_REPLY_GEMMA4, gemma4_calls, {"<|tool_call>", "<tool_call|>", "<|\"|>", "<|channel>", "<channel|>",
                                     "<start_function_call>", "<end_function_call>", "<escape>"}, {NULL}},
    {CF_REPLY_FUNCTOOLS, functools_calls, {NULL}, {NULL}},
    {CF_REPLY_FUNCTIONARY_V31, functionary31_calls, {"<function=", "</function>", "<|python_tag|>"}, {NULL}},
    {CF_REPLY_FUNCTIONARY_V32, functionary32_calls, {">>>"}, {NULL}},
    {CF_REPLY_HARMONY, harmony_calls, {"<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|call|>", "<|end|>"},
     {NULL}},
    {CF_REPLY_XLAM, xlam_calls, {"<tool_call>", "</tool_call>", "[TOOL_CALLS]", "<think>", "</think>"}, {NULL}},
};

bool family_syntax(cf_reply_format f, CallSyntax *out) {
    for (size_t k = 0; k < sizeof FAMILY_GRAMMARS / sizeof FAMILY_GRAMMARS[0]; k++) {
        const FamilyGrammar *fg = &FAMILY_GRAMMARS[k];
        if (fg->format != f) continue;
        memset(out, 0, sizeof *out);
        out->format = family_name(f);
        out->writer = fg->writer;
        family_reasoning_markers(f, &out->reasoning_open, &out->reasoning_close);
        for (int t = 0; t < 8 && fg->tokens[t]; t++) out->preserved_tokens[t] = fg->tokens[t];
        for (int t = 0; t < 4 && fg->lead[t]; t++) out->lead_markup[t] = fg->lead[t];
        return true;
    }
    return false;
}
