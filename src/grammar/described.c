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
#include <string.h>
#include "calls.h"

/* A tool's call body (one or two parts), made once: a format with a bare
 * call opener writes each tool's call twice, with its header and without. */
typedef struct CallBodies {
    const Dict **tools;
    GExpr *(*parts)[2];
    uint32_t n, cap;
} CallBodies;

typedef struct DescCx {
    const ReplyFormatDesc *d;
    int first_field;   /* the header field a call's grammar starts at (addressed turns: the recipient) */
    bool bare;         /* a call after a bare_call_open: no header, its body at once */
    CallBodies *bodies;   /* or NULL */
} DescCx;

/* One of the markers of a list (the parser takes any of them). */
static GExpr *make_any_of(Gram *g, const void *key) {
    const char *const *list = key;
    GList alts = {0};
    for (int k = 0; k < DESC_MARKERS && list[k]; k++) gl_push(g, &alts, gx_litz(g, list[k]));
    return gl_alt(g, &alts);
}

/* (one node per marker list of the description: each parameter of each tool uses them) */
static GExpr *any_of(Gram *g, const char *const *list) { return gram_node_of(g, list, make_any_of); }

/* One of the '|'-separated alternatives of `text` (engine.c's literal_is). */
static GExpr *one_of_text(Gram *g, const char *text) {
    GList alts = {0};
    for (;;) {
        const char *bar = strchr(text, '|');
        size_t k = bar ? (size_t)(bar - text) : strlen(text);
        gl_push(g, &alts, gx_lit(g, text, k));
        if (!bar) break;
        text = bar + 1;
    }
    return gl_alt(g, &alts);
}

/* A header field and its end marker (field_done trims the field). name
 * NULL: a field before the tool's name (any text stands for a name there). */
static GExpr *header_field(Gram *g, const HeaderField *h, const Str *name) {
    GExpr *text;
    switch (!name && h->kind != HF_LITERAL && h->kind != HF_NUMBER ? HF_ID : h->kind) {
    case HF_NAME:
        if (h->token) {
            /* a run of name bytes ended by whitespace or the body's '<' (step_token):
               the body's own leading whitespace follows */
            text = gx_seq(g, call_ws(g), gx_lit(g, name->data, name->len));
            break;
        }
        /* fall through */
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
    case HF_NUMBER:   /* the call's number (engine.c reads digits and drops them) */
        text = gx_seq(g, call_ws(g), gx_greedy(g, gx_chars(g, false, "0-9"), 1, 9), call_ws(g));
        break;
    case HF_ID: {
        /* any text without controls up to the marker (the id is not checked) */
        if (!h->end[0]) return call_ws(g);
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

/* Whether a schema's "required" list names key. */
static bool names_key(const List *required, const Str *key) {
    for (size_t r = 0; r < required->len; r++)
        if (required->items[r].type == VT_STR && str_eq(required->items[r].u.s, key)) return true;
    return false;
}

/* A raw string value's text up to the value's closer; where the format
 * has verbatim sections (CDATA), they may come anywhere in it and hold
 * anything but their own closer (the parser reads them as is). */
static GExpr *raw_text(Gram *g, const ReplyFormatDesc *d) {
    if (!d->verbatim_open) return call_until(g, d->value_close[0]);
    GExpr *plain = call_until_either(g, d->value_close[0], d->verbatim_open);
    GExpr *section = gx_seq(g, gx_litz(g, d->verbatim_open), call_until(g, d->verbatim_close), gx_litz(g, d->verbatim_close));
    return gx_seq(g, plain, gx_rep(g, gx_seq(g, section, plain), 0, GREP_INF));
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
        bool required = has_req && names_key(req.u.list, k.u.s);
        bool raw = schema_takes_string(c, ps);
        GExpr *value;
        if (raw) {
            GExpr *choices = schema_raw_string_choices(c, ps);
            if (choices && d->trim_value) choices = gx_seq(g, call_ws(g), choices, call_ws(g));
            value = choices ? choices : raw_text(g, d);
        } else {
            char nm[96];
            gram_fmt(nm, sizeof nm, "%.40s-%.40s", name->data, k.u.s->data);
            value = gx_seq(g, call_ws(g), gx_ref(g, schema_rule(c, ps, nm)), call_ws(g));
        }
        GExpr *key_end = any_of(g, d->key_close);
        if (d->key_flag) /* the type said by a flag, or by the schema when the flag is absent */
            key_end = gx_alt(g, gx_seq(g, gx_litz(g, d->key_flag), one_of_text(g, raw ? d->flag_string : d->flag_json),
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

/* PREFIX + "<" + [/] name + ">", a tag of BODY_XML_TREE, NUL-terminated in buf. */
static const char *tree_tag(char *buf, size_t cap, const char *prefix, bool closing, const char *name, size_t n) {
    size_t len = gram_fmt(buf, cap, "%s<%s", prefix, closing ? "/" : "");
    if (len >= cap) len = cap - 1;
    if (n > cap - 2 - len) n = cap - 2 - len;   /* (keys are bounded: a longer one is cut) */
    memcpy(buf + len, name, n);
    buf[len + n] = '>';
    buf[len + n + 1] = 0;
    return buf;
}

/* Parameters as elements named by their keys (BODY_XML_TREE), in the
 * schema's order, required ones present: a string's raw text, a scalar as
 * JSON. An object or array value is elements in turn (xmltree.c reads
 * them by the schema); the grammar takes any text up to the parameter's
 * closer there. */
static GExpr *tree_params(Gram *g, const ReplyFormatDesc *d, SchemaCx *c, Value params, const Str *name) {
    Value props, req;
    if (params.type != VT_DICT || !schema_get(params, "properties", &props) || props.type != VT_DICT) return NULL;
    bool has_req = schema_get(params, "required", &req) && req.type == VT_LIST;
    GList items = {0};
    for (size_t i = 0; i < dict_len(props.u.dict); i++) {
        Value k = dict_key_at(props.u.dict, i), ps = dict_val_at(props.u.dict, i);
        if (k.type != VT_STR) continue;
        bool required = has_req && names_key(req.u.list, k.u.s);
        char open[160], close[160];
        tree_tag(open, sizeof open, d->element_prefix, false, k.u.s->data, k.u.s->len);
        tree_tag(close, sizeof close, d->element_prefix, true, k.u.s->data, k.u.s->len);
        Value type;
        bool nested = schema_get(ps, "type", &type) && type.type == VT_STR &&
                      (str_eqz(type.u.s, "object") || str_eqz(type.u.s, "array"));
        GExpr *value;
        if (schema_takes_string(c, ps)) {
            GExpr *choices = schema_raw_string_choices(c, ps);
            value = choices ? choices : call_until(g, close);
        } else if (nested) {
            value = call_until(g, close);
            gram_warn(g, "%s: an object or array parameter's elements are not constrained", d->name);
        } else {
            char nm[96];
            gram_fmt(nm, sizeof nm, "%.40s-%.40s", name->data, k.u.s->data);
            value = gx_ref(g, schema_rule(c, ps, nm));
        }
        GExpr *item = gx_seq(g, gx_litz(g, open), value, gx_litz(g, close), call_ws(g));
        gl_push(g, &items, required ? item : gx_opt(g, item));
    }
    return gl_seq(g, &items);
}

/* A tool's call body: the arguments as the format writes them. */
static void make_body(Gram *g, const ReplyFormatDesc *d, Value tool, const Str *name, GExpr *out[2]) {
    Value params;
    SchemaCx *c = call_schema_cx(g, tool, &params);
    out[0] = out[1] = NULL;
    switch (d->body) {
    case BODY_JSON_CALL: out[0] = gx_seq(g, call_ws(g), json_call_object(g, d, c, params, name)); break;
    case BODY_JSON_ARGS:
        out[0] = gx_seq(g, call_ws(g), gx_ref(g, call_args_rule(g, c, params, name)));
        if (d->args_after) out[1] = gx_seq(g, call_ws(g), gx_litz(g, d->args_after));
        break;
    case BODY_XML_TREE: {
        char end[96];
        tree_tag(end, sizeof end, d->element_prefix, true, d->element_end, strlen(d->element_end));
        out[0] = gx_seq(g, call_ws(g), tree_params(g, d, c, params, name), gx_litz(g, end));
        break;
    }
    default:
        out[0] = gx_seq(g, call_ws(g), xml_params(g, d, c, params, name), any_of(g, d->params_close));
    }
}

/* The tool's body, made the first time it is asked for (the same tree in
 * both places prints the same text as two copies would). */
static GExpr **call_body_parts(Gram *g, DescCx *cx, Value tool, const Str *name) {
    CallBodies *b = cx->bodies;
    if (!b || tool.type != VT_DICT) {
        GExpr **one = rt_alloc(g->rt, 2 * sizeof *one);
        make_body(g, cx->d, tool, name, one);
        return one;
    }
    for (uint32_t i = 0; i < b->n; i++)
        if (b->tools[i] == tool.u.dict) return b->parts[i];
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? 2 * b->cap : 64;
        b->tools = rt_realloc(g->rt, b->tools, b->n * sizeof *b->tools, cap * sizeof *b->tools);
        b->parts = rt_realloc(g->rt, b->parts, b->n * sizeof *b->parts, cap * sizeof *b->parts);
        b->cap = cap;
    }
    b->tools[b->n] = tool.u.dict;
    make_body(g, cx->d, tool, name, b->parts[b->n]);
    return b->parts[b->n++];
}

/* One call after its opener: the header, the body, the closer. */
static GExpr *one_call(Gram *g, const CallRequest *r, Value tool, void *cx) {
    const ReplyFormatDesc *d = ((DescCx *)cx)->d;
    bool bare = ((DescCx *)cx)->bare;
    Str *name;
    tool_name(tool, &name);
    GList parts = {0};
    for (int k = ((DescCx *)cx)->first_field; !bare && k < d->nheader && k < MAX_HEADER_FIELDS; k++)
        gl_push(g, &parts, header_field(g, &d->header[k], name));
    GExpr **body = call_body_parts(g, (DescCx *)cx, tool, name);
    gl_push(g, &parts, body[0]);
    gl_push(g, &parts, body[1]);
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

static void addressed_calls(Gram *g, const CallRequest *r, CallBlock *b, int to_at);

/* The recipient field of a format whose turns are addressed (content,
 * reasoning or a call by the name a turn's header gives), or -1. */
static int recipient_field(const ReplyFormatDesc *d) {
    if (!d->opens_in_field && !d->content_name && !d->reasoning_name) return -1;
    for (int k = 0; k < d->nheader && k < MAX_HEADER_FIELDS; k++)
        if (d->header[k].kind == HF_NAME) return k;
    return -1;
}

/* Each tool's call after a bare_call_open (call_each_tool keeps one
 * "tool-call" rule per grammar: the headed one). */
static GExpr *bare_calls(Gram *g, const CallRequest *r, const ReplyFormatDesc *d, CallBodies *bodies) {
    DescCx cx = {.d = d, .bare = true, .bodies = bodies};
    GList alts = {0};
    const List *tools = r->tools.u.list;
    for (size_t i = 0; i < tools->len; i++) {
        Str *name;
        if (!tool_name(tools->items[i], &name)) continue;   /* (call_each_tool warned) */
        char nm[96];
        gram_fmt(nm, sizeof nm, "bare-call-%.60s", name->data);
        uint32_t id = gram_rule_new(g, nm, strlen(nm));
        gram_rule_set(g, id, one_call(g, r, tools->items[i], &cx));
        gl_push(g, &alts, gx_ref(g, id));
    }
    return gl_alt(g, &alts);
}

static void described_calls(Gram *g, const CallRequest *r, CallBlock *b) {
    const ReplyFormatDesc *d = r->syn->desc;
    int to_at = recipient_field(d);
    if (to_at >= 0) {
        addressed_calls(g, r, b, to_at);
        return;
    }
    b->repeat_outside = true;   /* after a call or a section the parser reads text: another may open */
    /* markers the parser drops as content may close the reply (hyperclovax's <|im_end|><|stop|>) */
    if (d->drop[0]) b->after = gx_rep(g, gx_seq(g, any_of(g, d->drop), call_ws(g)), 0, DESC_MARKERS);
    CallBodies bodies = {0};
    DescCx cx = {.d = d, .bodies = d->bare_call_open[0] ? &bodies : NULL};
    GExpr *call = call_each_tool(g, r, one_call, &cx);
    if (d->bare_call_open[0]) {   /* a call standing alone in text (GigaChat 3.1's <|function_call|>) */
        GExpr *bare = bare_calls(g, r, d, &bodies);
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
        /* the opener also ends a text message: alone at the reply's end it
         * is no call (the parser drops it), except where calls are required */
        if (d->section_ends_message && !r->required) inner = gx_opt(g, inner);
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

/* ---- addressed turns (Functionary v2, Glimmer) ----
 * Every turn names its recipient in its header: content_name (content up
 * to the next turn), reasoning_name (reasoning up to think_close, then
 * content), or a tool (a call). The prompt ends inside the first turn's
 * header (opens_in_field), so the reply starts there; later turns start
 * at call_open. As field_done reads it: the recipient is trimmed, and a
 * name that is neither address is a call. */

/* header fields [from, to) of a turn, before its recipient */
static GExpr *fields_before(Gram *g, const ReplyFormatDesc *d, int from, int to) {
    GList parts = {0};
    for (int k = from; k < to; k++) gl_push(g, &parts, header_field(g, &d->header[k], NULL));
    return gl_seq(g, &parts);
}

/* the recipient field addressed to `who` */
static GExpr *addressed_to(Gram *g, const HeaderField *h, const char *who) {
    return gx_seq(g, call_ws(g), gx_litz(g, who), call_ws(g), any_of(g, h->end));
}

/* "(?:a|b)" of a marker list, regex-escaped */
static void regex_markers(StrBuf *sb, const char *const *list) {
    sb_puts(sb, "(?:");
    for (int k = 0; k < DESC_MARKERS && list[k]; k++) {
        if (k) sb_putc(sb, '|');
        call_regex_escape(sb, list[k], strlen(list[k]));
    }
    sb_putc(sb, ')');
}

/* The trigger of a reply whose first turn is a call: its header fields up
 * to the recipient, a recipient that is neither address, the field's end
 * (llama.cpp feeds the grammar from the group, the reply's start). */
static const char *first_call_pattern(Gram *g, const ReplyFormatDesc *d, int from, int to_at) {
    StrBuf sb;
    sb_init(g->rt, &sb, 128);
    sb_putc(&sb, '(');
    for (int k = from; k < to_at; k++) {
        const HeaderField *h = &d->header[k];
        if (h->kind == HF_LITERAL) {
            sb_puts(&sb, "\\s*(?:");
            for (const char *c = h->text; *c; c++) {
                if (*c == '|') sb_putc(&sb, '|');
                else call_regex_escape(&sb, c, 1);
            }
            sb_puts(&sb, ")\\s*");
        } else {
            sb_puts(&sb, "[\\s\\S]*?");
        }
        regex_markers(&sb, h->end);
    }
    const HeaderField *to = &d->header[to_at];
    sb_puts(&sb, "(?!\\s*(?:");
    const char *names[] = {d->content_name, d->reasoning_name};
    for (int k = 0, n = 0; k < 2; k++) {
        if (!names[k]) continue;
        if (n++) sb_putc(&sb, '|');
        call_regex_escape(&sb, names[k], strlen(names[k]));
    }
    sb_puts(&sb, ")\\s*");
    regex_markers(&sb, to->end);
    sb_puts(&sb, ")[\\s\\S]*?");
    regex_markers(&sb, to->end);
    sb_puts(&sb, ")[\\s\\S]*");
    sb_putc(&sb, 0);
    return sb.p;
}

static void addressed_calls(Gram *g, const CallRequest *r, CallBlock *b, int to_at) {
    const ReplyFormatDesc *d = r->syn->desc;
    const HeaderField *to = &d->header[to_at];
    DescCx cx = {.d = d, .first_field = to_at};
    GExpr *call = call_each_tool(g, r, one_call, &cx);   /* from the recipient on */
    /* a turn's end marker the parser drops as content (Glimmer's <|eom|>) */
    if (d->drop[0]) call = gx_seq(g, call, gx_opt(g, gx_seq(g, call_ws(g), any_of(g, d->drop))));
    /* a later turn, up to its recipient */
    GExpr *next = gx_seq(g, call_ws(g), any_of(g, d->call_open), fields_before(g, d, 0, to_at));
    /* turns to no tool; reasoning needs its closer (a reply that ends inside
     * it is not offered), content after it runs to the next turn as the
     * parser reads it */
    GList quiet_alts = {0};
    GExpr *reasoning = NULL;
    if (d->content_name) gl_push(g, &quiet_alts, gx_seq(g, addressed_to(g, to, d->content_name), call_until(g, d->call_open[0])));
    if (d->reasoning_name && d->think_close[0]) {
        reasoning = gx_seq(g, addressed_to(g, to, d->reasoning_name), call_until(g, d->think_close[0]), any_of(g, d->think_close));
        gl_push(g, &quiet_alts, gx_seq(g, reasoning, call_until(g, d->call_open[0])));
    }
    GExpr *quiet = gl_alt(g, &quiet_alts);
    if (quiet) {
        uint32_t id = gram_rule_new(g, "quiet-turn", 10);
        gram_rule_set(g, id, quiet);
        quiet = gx_ref(g, id);
    }
    /* the turns from a recipient on: with parallel calls any turns in a row;
     * without, turns to no tool and at most one call, last */
    uint32_t turns = gram_rule_new(g, "turns", 5);
    if (r->parallel) {
        GExpr *turn = quiet ? gx_alt(g, call, quiet) : call;
        gram_rule_set(g, turns, gx_seq(g, turn, gx_rep(g, gx_seq(g, next, turn), 0, GREP_INF)));
    } else {
        gram_rule_set(g, turns, quiet ? gx_alt(g, call, gx_seq(g, quiet, gx_opt(g, gx_seq(g, next, gx_ref(g, turns))))) : call);
    }
    /* with calls: reasoning turns and empty content turns (a template's
     * turn to the user with no content) may lead, then the calls */
    uint32_t with_calls = gram_rule_new(g, "turns-with-calls", 16);
    GList lead = {0};
    if (reasoning) gl_push(g, &lead, reasoning);
    if (d->content_name) gl_push(g, &lead, addressed_to(g, to, d->content_name));
    GExpr *more = r->parallel ? gx_rep(g, gx_seq(g, next, call), 0, GREP_INF) : NULL;
    GExpr *led = lead.n ? gx_seq(g, gl_alt(g, &lead), next, gx_ref(g, with_calls)) : NULL;
    gram_rule_set(g, with_calls, led ? gx_alt(g, gx_seq(g, call, more), led) : gx_seq(g, call, more));
    /* each turn opener triggers the lazy grammar, which holds the rest of the reply */
    b->repeat_outside = false;
    GExpr *after_open = gx_seq(g, fields_before(g, d, 0, to_at), gx_ref(g, turns));
    for (int k = 0; k < DESC_MARKERS && d->call_open[k]; k++) call_block_add(b, d->call_open[k], after_open, "");
    if (!d->opens_in_field) return;   /* the reply starts as content */
    int from = d->opens_in_field - 1 < to_at ? d->opens_in_field - 1 : to_at;
    GExpr *first = fields_before(g, d, from, to_at);
    b->reply_any = gx_seq(g, first, gx_ref(g, turns));
    b->reply_with_calls = gx_seq(g, first, gx_ref(g, with_calls));
    /* a first turn that is a call fires a pattern over the reply so far */
    GExpr *first_call = gx_seq(g, first, call, r->parallel ? gx_rep(g, gx_seq(g, next, gx_ref(g, turns)), 0, 1) : NULL);
    call_block_add_pattern(b, first_call_pattern(g, d, from, to_at), true, first_call);
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
    /* addressed turns: reasoning is a turn of its own, not a prefix */
    bool addressed = recipient_field(d) >= 0;
    out->reasoning_open = addressed ? NULL : d->think_open[0];
    out->reasoning_close = addressed ? NULL : d->think_close[0];
    int n = 0;
    const char *const *lists[] = {d->think_open, d->think_close, d->section_open, d->section_close, d->call_open,
                                  d->bare_call_open, d->call_close, d->param_open, d->key_close, d->value_close, d->params_close};
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) add_tokens(out, &n, lists[k]);
    for (int k = 0; k < d->nheader && k < MAX_HEADER_FIELDS; k++) add_tokens(out, &n, d->header[k].end);
    add_token(out, &n, d->value_open);
    /* content wrappers the parser drops may come before required calls
       (Kimi K3's empty <|open|>response<|sep|><|close|>response<|sep|>);
       not where a dropped marker also ends reasoning (HyperCLOVA X's turn
       tokens: text before them is no wrapper's) */
    bool wrappers = true;
    for (int k = 0; k < DESC_MARKERS && d->drop[k]; k++)
        for (int t = 0; t < DESC_MARKERS && d->think_close[t]; t++) wrappers &= strcmp(d->drop[k], d->think_close[t]) != 0;
    for (int k = 0; wrappers && k < 4 && k < DESC_MARKERS && d->drop[k]; k++) out->lead_markup[k] = d->drop[k];
}
