/* described.c — the grammar of a described reply format, read from the
 * same ReplyFormatDesc (src/reply/format_desc.h) that engine.c parses
 * replies with: a family added to formats.c gets a grammar, lazy
 * triggers, preserved tokens and a structural tag with no code here.
 *
 * The walk follows engine.c's reading: whitespace may come before every
 * marker it expects (expect_tag), header fields are trimmed, a call's
 * body is a JSON call object, a bare arguments object, or typed-XML
 * parameters (raw text for a string parameter, JSON for the rest, as
 * key_done/value_done type them back). Where the parser tolerates what a
 * template never writes (a missing closer, an unknown key read as text)
 * the grammar asks for the well-formed spelling. */
#include <stdio.h>
#include "calls.h"

typedef struct DescCx {
    const ReplyFormatDesc *d;
    bool bare;   /* a call after a bare_call_open: no header, its body at once */
} DescCx;

/* One of the markers of a list (the parser takes any of them). */
static GExpr *any_of(Gram *g, const char *const *list) {
    GList alts = {0};
    for (int k = 0; k < DESC_MARKERS && list[k]; k++) gl_push(g, &alts, gx_litz(g, list[k]));
    return gl_alt(g, &alts);
}

/* A header field and its end marker (field_done trims the field). */
static GExpr *header_field(Gram *g, const HeaderField *h, const Str *name) {
    GExpr *text;
    switch (h->kind) {
    case HF_NAME:
    case HF_SAME_NAME:   /* the name again, as an earlier field gave it */
        text = gx_seq(g, call_ws(g), gx_lit(g, name->data, name->len), call_ws(g));
        break;
    case HF_KIMI_ID: {
        /* functions.NAME:INDEX (kimi_id: the prefix and the index are optional) */
        GExpr *index = gx_seq(g, gx_litz(g, ":"), gx_greedy(g, gx_chars(g, false, "0-9"), 1, 9));
        text = gx_seq(g, call_ws(g), gx_opt(g, gx_litz(g, "functions.")), gx_lit(g, name->data, name->len),
                      gx_opt(g, index), call_ws(g));
        break;
    }
    case HF_ID: {
        /* any text without controls up to the marker (the id is not checked) */
        unsigned char stop = (unsigned char)h->end[0][0];
        GRange ex[2] = {{0, 0x1F}, {stop, stop}};
        text = gx_rep(g, gx_class(g, true, ex, 2), 0, GREP_INF);
        break;
    }
    default: {   /* HF_LITERAL: "a|b|" is a, b or nothing (engine.c's literal_is) */
        GList alts = {0};
        for (const char *want = h->text;;) {
            const char *bar = strchr(want, '|');
            size_t k = bar ? (size_t)(bar - want) : strlen(want);
            bool blank = true;
            for (size_t i = 0; i < k; i++) blank = blank && strchr(" \n\t\r", want[i]);
            gl_push(g, &alts, blank ? call_ws(g) : gx_seq(g, call_ws(g), gx_lit(g, want, k), call_ws(g)));
            if (!bar) break;
            want = bar + 1;
        }
        text = gl_alt(g, &alts);
    }
    }
    return gx_seq(g, text, any_of(g, h->end));
}

/* {"name": N, "arguments": {...}} in either order, or {"N": {...}}. */
static GExpr *json_call_object(Gram *g, const ReplyFormatDesc *d, SchemaCx *c, Value params, const Str *name) {
    GExpr *colon = gx_seq(g, call_ws(g), gx_litz(g, ":"), call_ws(g));
    GExpr *args = gx_ref(g, call_args_rule(g, c, params, name));
    GExpr *quoted = call_json_string_lit(g, name->data, name->len);
    if (d->name_is_key)
        return gx_seq(g, gx_litz(g, "{"), call_ws(g), quoted, colon, args, call_ws(g), gx_litz(g, "}"));
    GList names = {0}, argk = {0};
    for (int k = 0; k < DESC_MARKERS && d->name_keys[k]; k++)
        gl_push(g, &names, call_json_string_lit(g, d->name_keys[k], strlen(d->name_keys[k])));
    for (int k = 0; k < DESC_MARKERS && d->args_keys[k]; k++)
        gl_push(g, &argk, call_json_string_lit(g, d->args_keys[k], strlen(d->args_keys[k])));
    GExpr *name_part = gx_seq(g, gl_alt(g, &names), colon, quoted, call_ws(g));
    GExpr *args_part = gx_seq(g, gl_alt(g, &argk), colon, args, call_ws(g));
    GExpr *comma = gx_seq(g, gx_litz(g, ","), call_ws(g));
    return gx_seq(g, gx_litz(g, "{"), call_ws(g),
                  gx_alt(g, gx_seq(g, name_part, comma, args_part), gx_seq(g, args_part, comma, name_part)), gx_litz(g, "}"));
}

/* Typed-XML parameters in the schema's order, required ones present. A
 * parameter the schema does not name is not offered (nothing could type it). */
static GExpr *xml_params(Gram *g, const ReplyFormatDesc *d, SchemaCx *c, Value params, const Str *name) {
    Value props, req;
    if (params.type != VT_DICT || !schema_get(params, "properties", &props) || props.type != VT_DICT) return NULL;
    bool has_req = schema_get(params, "required", &req) && req.type == VT_LIST;
    GList items = {0};
    for (size_t i = 0; i < dict_len(props.u.dict); i++) {
        Value k = dict_key_at(props.u.dict, i), ps = dict_val_at(props.u.dict, i);
        if (k.type != VT_STR) continue;
        bool required = false;
        for (size_t r = 0; has_req && r < req.u.list->len; r++)
            if (req.u.list->items[r].type == VT_STR && str_eq(req.u.list->items[r].u.s, k.u.s)) required = true;
        bool raw = schema_takes_string(c, ps);
        GExpr *value;
        if (raw) {
            GExpr *choices = schema_raw_string_choices(c, ps);
            if (choices && d->trim_value) choices = gx_seq(g, call_ws(g), choices, call_ws(g));
            value = choices ? choices : call_until(g, d->value_close[0]);
        } else {
            char nm[96];
            snprintf(nm, sizeof nm, "%.40s-%.40s", name->data, k.u.s->data);
            value = gx_seq(g, call_ws(g), gx_ref(g, schema_rule(c, ps, nm)), call_ws(g));
        }
        GExpr *key_end = any_of(g, d->key_close);
        if (d->key_flag) /* the type said by a flag, or by the schema when the flag is absent */
            key_end = gx_alt(g, gx_seq(g, gx_litz(g, d->key_flag), gx_litz(g, raw ? d->flag_string : d->flag_json),
                                       gx_litz(g, d->flag_close)),
                             key_end);
        GExpr *item = gx_seq(g, any_of(g, d->param_open), gx_lit(g, k.u.s->data, k.u.s->len), key_end,
                             d->value_open ? gx_seq(g, call_ws(g), gx_litz(g, d->value_open)) : NULL, value,
                             any_of(g, d->value_close), call_ws(g));
        gl_push(g, &items, required ? item : gx_opt(g, item));
    }
    Value addl;
    if (schema_get(params, "additionalProperties", &addl) && !(addl.type == VT_BOOL && !addl.u.b))
        gram_warn(g, "%s: parameters the schema does not name are not offered", d->name);
    return gl_seq(g, &items);
}

/* One call after its opener: the header, the body, the closer. */
static GExpr *one_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    const ReplyFormatDesc *d = ((DescCx *)cx)->d;
    bool bare = ((DescCx *)cx)->bare;
    Str *name;
    tool_name(tool, &name);
    Value params;
    SchemaCx *c = call_schema_cx(g, tool, &params);
    GList parts = {0};
    for (int k = 0; !bare && k < d->nheader && k < MAX_HEADER_FIELDS; k++)
        gl_push(g, &parts, header_field(g, &d->header[k], name));
    switch (d->body) {
    case BODY_JSON_CALL: gl_push(g, &parts, gx_seq(g, call_ws(g), json_call_object(g, d, c, params, name))); break;
    case BODY_JSON_ARGS:
        gl_push(g, &parts, gx_seq(g, call_ws(g), gx_ref(g, call_args_rule(g, c, params, name))));
        if (d->args_after) gl_push(g, &parts, gx_seq(g, call_ws(g), gx_litz(g, d->args_after)));
        break;
    default:
        gl_push(g, &parts, gx_seq(g, call_ws(g), xml_params(g, d, c, params, name), any_of(g, d->params_close)));
    }
    /* in a JSON array or a row the object is the call; its closer is the list's */
    bool listed = !bare && d->body == BODY_JSON_CALL && d->section_open[0] && d->list != LIST_ONE;
    /* (a reply may end before the closer: a server stops at it when it is a stop string) */
    if (d->call_close[0] && !listed) gl_push(g, &parts, gx_opt(g, gx_seq(g, call_ws(g), any_of(g, d->call_close))));
    (void)r;
    return gl_seq(g, &parts);
}

/* A call opener then the call, possibly repeated (calls in a section or a row). */
static GExpr *opened_calls(Gram *g, const CallRequest *r, GExpr *call) {
    const ReplyFormatDesc *d = r->syn->desc;
    GExpr *first = call;   /* (the variant's opener is the first call's) */
    if (!r->parallel) return first;
    GExpr *next = gx_seq(g, call_ws(g), any_of(g, d->call_open), call);
    return gx_seq(g, first, gx_rep(g, next, 0, GREP_INF));
}

/* Each tool's call after a bare_call_open (call_each_tool keeps one
 * "tool-call" rule per grammar: the headed one). */
static GExpr *bare_calls(Gram *g, const CallRequest *r, const ReplyFormatDesc *d) {
    DescCx cx = {d, true};
    GList alts = {0};
    const List *tools = r->tools.u.list;
    for (size_t i = 0; i < tools->len; i++) {
        Str *name;
        if (!tool_name(tools->items[i], &name)) continue;   /* (call_each_tool warned) */
        char nm[96];
        snprintf(nm, sizeof nm, "bare-call-%.60s", name->data);
        uint32_t id = gram_rule_new(g, nm, strlen(nm));
        gram_rule_set(g, id, one_call(g, r, tools->items[i], &cx));
        gl_push(g, &alts, gx_ref(g, id));
    }
    return gl_alt(g, &alts);
}

static void described_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    const ReplyFormatDesc *d = r->syn->desc;
    b->repeat_outside = true;   /* after a call or a section the parser reads text: another may open */
    DescCx cx = {d, false};
    GExpr *call = call_each_tool(g, r, one_call, &cx);
    if (d->bare_call_open[0]) {   /* a call standing alone in text (GigaChat 3.1's <|function_call|>) */
        GExpr *bare = bare_calls(g, r, d);
        for (int k = 0; k < DESC_MARKERS && d->bare_call_open[k]; k++) call_block_add(b, d->bare_call_open[k], bare, "");
    }
    if (d->section_open[0]) {
        GExpr *inner;
        if (d->body == BODY_JSON_CALL && d->list == LIST_ARRAY) {
            GExpr *more = r->parallel ? gx_rep(g, gx_seq(g, gx_litz(g, ","), call_ws(g), call, call_ws(g)), 0, GREP_INF) : NULL;
            inner = gx_seq(g, call_ws(g), gx_litz(g, "["), call_ws(g), call, call_ws(g), more, gx_litz(g, "]"));
        } else if (d->body == BODY_JSON_CALL && d->list == LIST_SEQUENCE) {
            GExpr *more = r->parallel ? gx_rep(g, gx_seq(g, call_ws(g), call), 0, GREP_INF) : NULL;
            inner = gx_seq(g, call_ws(g), call, more);
        } else if (!d->call_open[0]) {
            inner = gx_seq(g, call_ws(g), call);   /* the opener opens the one call */
        } else {
            inner = gx_seq(g, call_ws(g), any_of(g, d->call_open), opened_calls(g, r, call));
        }
        for (int k = 0; k < DESC_MARKERS && d->section_open[k]; k++) {
            const char *close = d->section_close[k] ? d->section_close[k] : d->section_close[0];
            call_block_add(b, d->section_open[k], close ? gx_seq(g, inner, call_ws(g)) : inner, close);
        }
        if (!d->section_optional) return;
    }
    /* calls outside a section: each opener starts one (in a row when the
     * section is optional) */
    for (int k = 0; k < DESC_MARKERS && d->call_open[k]; k++)
        call_block_add(b, d->call_open[k], d->section_open[0] ? opened_calls(g, r, call) : call, "");
}

/* Markers a tokenizer may hold as single tokens (llama.cpp keeps a
 * preserved token that is one token as text; others it ignores). */
static void add_token(CallSyntax *s, int *n, const char *z) {
    if (!z || z[0] != '<' || *n >= CALL_MAX_TOKENS - 1) return;
    for (int k = 0; k < *n; k++)
        if (strcmp(s->preserved_tokens[k], z) == 0) return;
    s->preserved_tokens[(*n)++] = z;
}

static void add_tokens(CallSyntax *s, int *n, const char *const *list) {
    for (int k = 0; k < DESC_MARKERS && list[k]; k++) add_token(s, n, list[k]);
}

void described_syntax(const ReplyFormatDesc *d, CallSyntax *out) {
    memset(out, 0, sizeof *out);
    out->format = d->name;
    out->writer = described_calls;
    out->desc = d;
    out->reasoning_open = d->think_open[0];
    out->reasoning_close = d->think_close[0];
    int n = 0;
    const char *const *lists[] = {d->think_open, d->think_close, d->section_open, d->section_close, d->call_open,
                                  d->bare_call_open, d->call_close, d->param_open, d->key_close, d->value_close, d->params_close};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) add_tokens(out, &n, lists[k]);
    for (int k = 0; k < d->nheader && k < MAX_HEADER_FIELDS; k++) add_tokens(out, &n, d->header[k].end);
    add_token(out, &n, d->value_open);
}
