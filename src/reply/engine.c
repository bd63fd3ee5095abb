/* engine.c — one streaming parser for every described format
 * (format_desc.h, formats.c). It walks the description with the shared
 * machinery of reply.c: markers are TagSets built once per parser from the
 * description, text goes through the trimmed fields, and every call is a
 * transaction (call_begin ... call_end, or call_break putting what it
 * consumed back into content). Every decision depends only on bytes
 * already seen, so a stream equals the whole parse at every chunking. */
#include <string.h>
#include "reply.h"
#include "format_desc.h"

enum {
    E_PRE, E_REASON, E_CONTENT,            /* text */
    E_LEAD_REASON,                         /* the prompt opened reasoning: the model may open it again */
    E_SECTION,                             /* in a section, between calls */
    E_HDR,                                 /* a header field (name, id...) */
    E_JSON_CALL,                           /* a {"name", "arguments"} object */
    E_ARR_OPEN, E_ARR_ITEM, E_ARR_NEXT,    /* a JSON array of call objects */
    E_SEQ_NEXT,                            /* call objects in a row */
    E_SECTION_END,                         /* after the calls: the section's closer */
    E_ARGS, E_AFTER_ARGS,                  /* a bare arguments object, then its fence */
    E_CALL_END,                            /* the call's closer */
    E_WRAP, E_WRAP_END,                    /* a wrapper tag around a JSON body, or the body; its closer */
    E_TREE, E_TREE_TAG, E_TREE_VAL, E_TREE_VAL_TAG,   /* XML elements named by their keys */
    E_PARAMS, E_KEY, E_FLAG, E_MID, E_VAL, /* typed XML parameters */
    E_VERBATIM                             /* a verbatim section of a value (CDATA) */
};

/* What a matched marker is. */
enum {
    R_THINK_OPEN, R_THINK_CLOSE, R_SECTION_OPEN, R_SECTION_CLOSE, R_CALL_OPEN, R_CALL_CLOSE,
    R_DROP, R_FIELD_END, R_PARAM_OPEN, R_KEY_CLOSE, R_KEY_FLAG, R_FLAG_CLOSE, R_VALUE_OPEN,
    R_VALUE_CLOSE, R_PARAMS_CLOSE, R_AFTER, R_BARE_OPEN, R_VERBATIM,
    R_ALT   /* R_ALT + 2k: alt[k]'s section opener, + 2k + 1: its call opener */
};

enum { SET_MAX = 16,
       HEADER_MAX = MAX_CALL_NAME + 64,   /* a longer header field is not one */
       KEY_MAX = 256,                     /* a longer parameter key is not one */
       FLAG_MAX = 15 };

typedef struct MarkSet {
    TagSet set;
    const char *tags[SET_MAX];
    uint8_t role[SET_MAX];
    bool lt_only;            /* the stream's fast path may watch for it */
    bool overflow;           /* more markers than SET_MAX */
} MarkSet;

struct Engine {
    const ReplyFormatDesc *d;
    struct Engine *main, *alt[MAX_ALTS];   /* the format's own engine; its alternative syntaxes' */
    MarkSet lead, lead_reason, reason, content, section, field[MAX_HEADER_FIELDS], call_end, after, params, key,
        flag, mid, val, section_end, tree, wrap, wrap_end, verbatim;
    bool in_section;
    bool wrapped;            /* the body stands inside a wrapper tag: its closer follows */
    bool from_reason;        /* the calls opened inside reasoning: it goes on after them */
    uint32_t section_calls;  /* calls ended in the current section */
    uint8_t field_at;        /* the header field being read */
    bool val_fresh;          /* trim: no byte of the value seen yet */
    char flag_text[FLAG_MAX + 1];
    uint8_t flag_len;
    /* BODY_XML_TREE: the parameter being read, the tag after a prefix, elements of its name open inside */
    char tree_key[KEY_MAX], tag[KEY_MAX + 4];
    uint16_t tree_key_len, tag_len;
    uint32_t tree_depth;
};
typedef struct Engine Engine;

enum { K_NONE, K_NAME, K_ARGS };

/* ---- marker sets ---- */

static bool in_set(const MarkSet *m, const char *marker) {
    for (int t = 0; t < m->set.n; t++)
        if (strcmp(m->tags[t], marker) == 0) return true;
    return false;
}

/* A marker already in the set keeps its first role (hyperclovax's
 * <|im_end|> closes reasoning, and is dropped from content). */
static void add(MarkSet *m, const char *const *list, int role) {
    for (int k = 0; k < DESC_MARKERS && list[k]; k++) {
        if (in_set(m, list[k])) continue;
        if (m->set.n >= SET_MAX) {   /* (engine_check_desc refuses such a description) */
            m->overflow = true;
            return;
        }
        m->tags[m->set.n] = list[k];
        m->role[m->set.n++] = (uint8_t)role;
    }
}

static void add1(MarkSet *m, const char *marker, int role) {
    const char *list[2] = {marker, NULL};
    if (marker) add(m, list, role);
}

static void seal(MarkSet *m) {
    m->set.tags = m->tags;
    m->lt_only = tags_lt_only(&m->set);
}

/* Markers that start calls in text. */
static void add_triggers(MarkSet *m, const ReplyFormatDesc *d) {
    add(m, d->section_open, R_SECTION_OPEN);
    if (!d->section_open[0] || d->section_optional) add(m, d->call_open, R_CALL_OPEN);
    add(m, d->bare_call_open, R_BARE_OPEN);
}

/* The alternative syntaxes' call openers, in the format's text. */
static void add_alt_triggers(MarkSet *m, const ReplyFormatDesc *d) {
    for (int k = 0; k < MAX_ALTS && d->alt[k]; k++) {
        const ReplyFormatDesc *a = d->alt[k];
        add(m, a->section_open, R_ALT + 2 * k);
        if (!a->section_open[0] || a->section_optional) add(m, a->call_open, R_ALT + 2 * k + 1);
    }
}

static void build_sets(Engine *e) {
    const ReplyFormatDesc *d = e->d;
    add(&e->lead, d->think_open, R_THINK_OPEN);
    add(&e->lead, d->think_close, R_THINK_CLOSE);   /* the prompt opened it: empty reasoning */
    add_triggers(&e->lead, d);
    add_alt_triggers(&e->lead, d);
    add(&e->lead, d->drop, R_DROP);
    add(&e->lead_reason, d->think_open, R_THINK_OPEN);
    add(&e->lead_reason, d->think_close, R_THINK_CLOSE);
    add(&e->reason, d->think_close, R_THINK_CLOSE);
    if (d->calls_in_reasoning) add_triggers(&e->reason, d);
    add_triggers(&e->content, d);
    add_alt_triggers(&e->content, d);
    if (d->think_in_content) add(&e->content, d->think_open, R_THINK_OPEN);
    add(&e->content, d->drop, R_DROP);
    add(&e->section, d->call_open, R_CALL_OPEN);
    add(&e->section, d->section_close, R_SECTION_CLOSE);
    for (int k = 0; k < d->nheader; k++) add(&e->field[k], d->header[k].end, R_FIELD_END);
    add(&e->call_end, d->call_close, R_CALL_CLOSE);
    add(&e->call_end, d->section_close, R_SECTION_CLOSE);
    add(&e->call_end, d->call_open, R_CALL_OPEN);
    add1(&e->after, d->args_after, R_AFTER);
    add(&e->params, d->param_open, R_PARAM_OPEN);
    add(&e->params, d->params_close, R_PARAMS_CLOSE);
    add(&e->params, d->call_close, R_CALL_CLOSE);
    add(&e->params, d->section_close, R_SECTION_CLOSE);
    add(&e->key, d->key_close, R_KEY_CLOSE);
    add1(&e->key, d->key_flag, R_KEY_FLAG);
    add1(&e->flag, d->flag_close, R_FLAG_CLOSE);
    add1(&e->mid, d->value_open, R_VALUE_OPEN);
    add(&e->val, d->value_close, R_VALUE_CLOSE);
    add1(&e->val, d->verbatim_open, R_VERBATIM);
    add1(&e->verbatim, d->verbatim_close, R_VERBATIM);
    if (d->trim_value) {   /* Qwen3-Coder models drop </parameter>: the next tag ends the value */
        add(&e->val, d->param_open, R_PARAM_OPEN);
        add(&e->val, d->params_close, R_PARAMS_CLOSE);
    }
    add(&e->section_end, d->section_close, R_SECTION_CLOSE);
    add1(&e->tree, d->element_prefix, R_PARAM_OPEN);
    add(&e->wrap, d->body_wrap_open, R_CALL_OPEN);
    add(&e->wrap_end, d->body_wrap_close, R_CALL_CLOSE);
    MarkSet *all[] = {&e->lead, &e->lead_reason, &e->reason, &e->content, &e->section, &e->field[0], &e->field[1],
                      &e->field[2], &e->field[3], &e->field[4], &e->call_end, &e->after, &e->params, &e->key, &e->flag,
                      &e->mid, &e->val, &e->section_end, &e->tree, &e->wrap, &e->wrap_end, &e->verbatim};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) seal(all[k]);
}

/* The rules of TagSet (reply.h) for one set; NULL when it keeps them. The
 * matcher holds a prefix of a marker and, when a byte shows it is none,
 * lets out as text the bytes before where another marker may still begin
 * (tag_restart). That is exact as long as no marker lies inside another
 * before its end: a marker found whole inside a held prefix would have to
 * complete in the middle of bytes already held. */
static const char *set_problem(const MarkSet *m) {
    if (m->overflow) return "more than 16 markers";
    for (int a = 0; a < m->set.n; a++) {
        const char *x = m->tags[a];
        size_t xn = strlen(x);
        if (!xn || xn >= 32) return "a marker is empty or 32 bytes or longer";
        for (int b = 0; b < m->set.n; b++) {
            const char *y = m->tags[b];
            size_t yn = strlen(y);
            if (a == b || yn > xn) continue;
            if (memcmp(x, y, yn) == 0) return "a marker is a prefix of another";
            for (size_t i = 1; i + yn < xn; i++)   /* (as x's last bytes it completes with x) */
                if (memcmp(x + i, y, yn) == 0) return "a marker lies inside another";
        }
    }
    return NULL;
}

const char *engine_check_desc(const ReplyFormatDesc *d) {
    Engine e;
    memset(&e, 0, sizeof e);
    e.d = d;
    build_sets(&e);
    const MarkSet *all[] = {&e.lead, &e.lead_reason, &e.reason, &e.content, &e.section, &e.field[0], &e.field[1],
                            &e.field[2], &e.field[3], &e.field[4], &e.call_end, &e.after, &e.params, &e.key, &e.flag, &e.mid,
                            &e.val, &e.section_end, &e.tree, &e.wrap, &e.wrap_end, &e.verbatim};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) {
        const char *why = set_problem(all[k]);
        if (why) return why;
    }
    if (d->nheader > MAX_HEADER_FIELDS) return "too many header fields";
    for (int k = 0; k < d->nheader; k++)
        if (d->header[k].token && (d->header[k].kind != HF_NAME || d->header[k].end[0]))
            return "a token field is a name without end markers";
    if (d->no_calls) return d->section_open[0] || d->call_open[0] ? "call markers in a format without calls" : NULL;
    bool named = d->body == BODY_JSON_CALL;
    for (int k = 0; k < d->nheader; k++) named |= d->header[k].kind == HF_NAME || d->header[k].kind == HF_KIMI_ID;
    if (!named) return "nothing names the call";
    if (!d->section_open[0] && !d->call_open[0] && !d->bare_call_open[0]) return "nothing opens a call";
    if (d->body == BODY_XML && (!d->param_open[0] || !d->key_close[0] || !d->value_close[0] || !d->params_close[0]))
        return "typed XML without its parameter markers";
    if (!d->verbatim_open != !d->verbatim_close || (d->verbatim_open && d->body != BODY_XML))
        return "a verbatim section without its closer, or outside typed XML values";
    if (d->key_flag && (!d->flag_close || !d->flag_string || !d->flag_json)) return "a type flag without its values";
    if (d->body == BODY_XML_TREE && (!d->element_prefix || !d->element_item || !d->element_end))
        return "XML elements without their prefix, list item or end";
    if (d->opens_in_field > d->nheader) return "a reply that opens in a header field it does not have";
    if (!d->body_wrap_open[0] != !d->body_wrap_close[0] ||
        (d->body_wrap_open[0] && d->body != BODY_JSON_CALL && d->body != BODY_JSON_ARGS))
        return "a body wrapper without its closers, or around a body that is not JSON";
    for (int k = 0; k < MAX_ALTS && d->alt[k]; k++) {
        if (d->alt[k]->alt[0] || d->no_calls) return "an alternative syntax of its own, or without calls";
        const char *why = engine_check_desc(d->alt[k]);
        if (why) return why;
    }
    return NULL;
}

/* ---- calls ---- */

static void body_start(Parser *p);

static void begin_call(Parser *p, const char *tag, bool header) {
    Engine *e = p->eng;
    call_begin(p, tag, true, false);   /* raw keeps the section's opener for its first call */
    e->field_at = 0;
    p->nargs = 0;
    p->props = v_none();
    p->text.len = 0;
    if (header && e->d->nheader) p->state = E_HDR;
    else body_start(p);
}

/* Where text goes on after calls: reasoning when they opened inside it
 * (Kimi K2 Thinking calls mid-thought, then thinks on until </think>). */
static int after_calls(const Engine *e) { return e->from_reason ? E_REASON : E_CONTENT; }

static void finish_call(Parser *p) {
    Engine *e = p->eng;
    call_end(p);
    e->section_calls++;
    p->state = e->in_section ? E_SECTION : after_calls(e);
}

/* The body is complete: its wrapper's closer, then the call's, if any, come next. */
static void body_done(Parser *p) {
    if (p->eng->wrapped) p->state = E_WRAP_END;
    else if (p->eng->d->call_close[0]) p->state = E_CALL_END;
    else finish_call(p);
}

_Static_assert((int)REASONING_CLOSERS == (int)DESC_MARKERS, "Call.reasoning_close holds a description's think_close");

static void on_trigger(Parser *p, int role, const char *tag) {
    if (role >= R_ALT) {   /* the call is an alternative syntax's */
        p->eng = p->eng->alt[(role - R_ALT) / 2];
        role = (role - R_ALT) % 2 ? R_CALL_OPEN : R_SECTION_OPEN;
    }
    Engine *e = p->eng;
    const ReplyFormatDesc *d = e->d;
    p->call.raw.len = 0;
    e->from_reason = p->state == E_REASON;
    p->call.in_reasoning = e->from_reason;   /* a call that breaks there is reasoning text */
    p->call.reasoning_state = E_REASON;
    p->call.reasoning_close = e->main->d->think_close;   /* (the format's own, as E_REASON scans them) */
    p->call.content_state = E_CONTENT;
    if (role != R_SECTION_OPEN) {
        e->in_section = false;
        begin_call(p, tag, role != R_BARE_OPEN);
        return;
    }
    e->in_section = true;
    e->section_calls = 0;
    call_raw(p, tag, strlen(tag));
    if (d->body == BODY_JSON_CALL && d->list == LIST_ARRAY) p->state = E_ARR_OPEN;
    else if (d->body == BODY_JSON_CALL && d->list == LIST_SEQUENCE) p->state = E_SEQ_NEXT;
    else if (!d->call_open[0]) begin_call(p, NULL, true);
    else p->state = E_SECTION;
}

/* The name is known: the tool's schema types its XML values, and a stream
 * sends the call's header now. */
static void name_known(Parser *p) {
    p->call.has_name = true;
    p->props = tool_properties(p, p->call.name.p, p->call.name.len);
    call_try_commit(p);
}

static void body_begin(Parser *p);

static void body_start(Parser *p) {
    Engine *e = p->eng;
    const ReplyFormatDesc *d = e->d;
    if (p->call.name.len) {   /* a bare arguments object commits when it opens (after a fence) */
        p->call.has_name = true;
        p->props = tool_properties(p, p->call.name.p, p->call.name.len);
        if (d->body != BODY_JSON_ARGS) call_try_commit(p);
    }
    e->wrapped = false;
    if (d->body_wrap_open[0]) p->state = E_WRAP;
    else body_begin(p);
}

/* The body's first byte comes next. */
static void body_begin(Parser *p) {
    const ReplyFormatDesc *d = p->eng->d;
    switch (d->body) {
    case BODY_JSON_CALL:
        js_init(p, &p->js, 1, 1);
        p->cur_key = K_NONE;
        p->val_mode = V_SKIP;
        p->state = E_JSON_CALL;
        break;
    case BODY_JSON_ARGS:
        js_init(p, &p->js, 0, 0);
        p->val_mode = V_SKIP;
        p->state = E_ARGS;
        break;
    case BODY_XML_TREE: p->state = E_TREE; break;
    default:
        p->state = E_PARAMS;
    }
}

/* ---- header fields ---- */

static void put_held(Parser *p, const char *s, size_t n) {
    sb_put(&p->text, s, n);
    call_raw(p, s, n);
}

static void trim(const char **s, size_t *n) {
    while (*n && is_space((unsigned char)**s)) (*s)++, (*n)--;
    while (*n && is_space((unsigned char)(*s)[*n - 1])) (*n)--;
}

static bool has_control(const char *s, size_t n) {
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)s[k] < 0x20) return true;
    return false;
}

/* Kimi's "functions.NAME:INDEX" is the id; NAME is the name. */
static bool kimi_id(Parser *p, const char *s, size_t n) {
    sb_put(&p->call.id, s, n);
    p->call.has_id = true;
    static const char prefix[] = "functions.";
    if (n >= sizeof prefix - 1 && memcmp(s, prefix, sizeof prefix - 1) == 0)
        s += sizeof prefix - 1, n -= sizeof prefix - 1;
    size_t k = n;
    while (k && s[k - 1] >= '0' && s[k - 1] <= '9') k--;
    if (k && k < n && s[k - 1] == ':') n = k - 1;
    if (!n) return false;
    sb_put(&p->call.name, s, n);
    return true;
}

/* The header is read: the body follows. */
static void header_done(Parser *p) {
    if (!p->call.name.len && p->eng->d->body != BODY_JSON_CALL) {   /* (a description always names the call) */
        call_break(p, E_CONTENT, NULL, 0);
        return;
    }
    body_start(p);
}

static bool is_token_byte(unsigned char c) { return is_name_byte(c) || c >= 0x80; }

/* A name token (HeaderField.token): name bytes go to the name at once;
 * whitespace after them, or a '<' (not consumed), ends it; anything else
 * is not this format's call. */
static void step_token(Parser *p, const char *s, size_t n, size_t *pi) {
    Engine *e = p->eng;
    size_t i = *pi, k = i, room = MAX_CALL_NAME - p->call.name.len;
    while (k < n && k - i < room && is_token_byte((unsigned char)s[k])) k++;
    if (k > i) {
        sb_put(&p->call.name, s + i, k - i);
        call_raw(p, s + i, k - i);
        *pi = k;
        return;
    }
    unsigned char c = (unsigned char)s[i];
    bool named = p->call.name.len > 0;
    if (!named && is_space(c)) {
        call_raw(p, s + i, 1);
        *pi = i + 1;
    } else if (named && (is_space(c) || c == '<')) {
        if (c != '<') {
            call_raw(p, s + i, 1);
            *pi = i + 1;
        }
        if (++e->field_at == e->d->nheader) header_done(p);
    } else {
        call_break(p, E_CONTENT, NULL, 0);
    }
}

/* Is s[0..n) one of the '|'-separated alternatives of want? */
static bool literal_is(const char *want, const char *s, size_t n) {
    for (;;) {
        const char *bar = strchr(want, '|');
        size_t k = bar ? (size_t)(bar - want) : strlen(want);
        if (k == n && memcmp(want, s, n) == 0) return true;
        if (!bar) return false;
        want = bar + 1;
    }
}

static void field_done(Parser *p, const char *tag) {
    Engine *e = p->eng;
    call_raw(p, tag, strlen(tag));
    const char *s = p->text.p;
    size_t n = p->text.len;
    trim(&s, &n);
    HeaderFieldKind kind = e->d->header[e->field_at].kind;
    bool ok = !has_control(s, n);
    switch (kind) {
    case HF_NAME:
        ok = ok && n;
        if (ok) sb_put(&p->call.name, s, n);
        break;
    case HF_ID:
        if (ok && n) {
            sb_put(&p->call.id, s, n);
            p->call.has_id = true;
        }
        break;
    case HF_KIMI_ID: ok = ok && kimi_id(p, s, n); break;
    case HF_SAME_NAME: ok = ok && n == p->call.name.len && memcmp(s, p->call.name.p, n) == 0; break;
    case HF_NUMBER:
        ok = ok && n;
        for (size_t k = 0; ok && k < n; k++) ok = s[k] >= '0' && s[k] <= '9';
        break;
    default:   /* HF_LITERAL */
        ok = ok && literal_is(e->d->header[e->field_at].text, s, n);
    }
    p->text.len = 0;
    if (!ok) {
        call_break(p, E_CONTENT, NULL, 0);
        return;
    }
    const char *cn = e->d->content_name, *rn = e->d->reasoning_name;
    bool to_user = cn && n == strlen(cn) && memcmp(s, cn, n) == 0;
    if (kind == HF_NAME && (to_user || (rn && n == strlen(rn) && memcmp(s, rn, n) == 0))) {
        p->call.active = false;   /* a turn to the user or to itself: its header is markup */
        p->call.raw.len = 0;
        p->call.name.len = 0;
        p->state = to_user ? E_CONTENT : E_REASON;
        return;
    }
    if (++e->field_at < e->d->nheader) return;
    header_done(p);
}

/* ---- JSON bodies ---- */

static bool key_in(const JScan *j, const char *const *keys) {
    for (int k = 0; k < DESC_MARKERS && keys[k]; k++)
        if (json_key_is(j, keys[k])) return true;
    return false;
}

static bool call_on_key(Parser *p) {
    const ReplyFormatDesc *d = p->eng->d;
    const JScan *j = &p->js;
    if (d->name_is_key) {   /* {"NAME": {arguments}} */
        if (p->call.has_name || j->key_long || !j->key_len) return false;
        sb_put(&p->call.name, j->key, j->key_len);
        name_known(p);
        p->cur_key = K_ARGS;
        return true;
    }
    if (key_in(j, d->name_keys) && !p->call.has_name) p->cur_key = K_NAME;
    else if (key_in(j, d->args_keys) && !p->nargs) p->cur_key = K_ARGS;
    else return false;
    return true;
}

static bool call_on_vstart(Parser *p) {
    JScan *j = &p->js;
    if (j->vdepth == 0) return j->vtype == '{';
    switch (p->cur_key) {
    case K_NAME: return json_name_start(p);
    case K_ARGS: return json_args_start(p, j->vtype);
    default: return false;
    }
}

static bool call_on_vend(Parser *p) {
    Engine *e = p->eng;
    if (p->js.vdepth == 0) {   /* the whole object */
        if (!p->call.has_name) return false;
        if (!p->nargs) call_args(p, "{}", 2);
        call_represented(p);
        switch (e->d->list) {
        case LIST_ARRAY:
        case LIST_SEQUENCE:
            call_end(p);
            e->section_calls++;
            p->state = e->d->list == LIST_ARRAY ? E_ARR_NEXT : E_SEQ_NEXT;
            break;
        default: body_done(p);
        }
        return true;
    }
    if (p->val_mode == V_NAME) {
        if (!p->call.name.len) return false;
        name_known(p);
    }
    p->val_mode = V_SKIP;
    p->cur_key = K_NONE;
    return true;
}

static const JsonHooks CALL_HOOKS = {call_on_key, call_on_vstart, call_on_vend, E_CONTENT};

static bool args_on_key(Parser *p) { (void)p; return false; }

static bool args_on_vstart(Parser *p) {
    if (p->js.vdepth || !json_args_start(p, p->js.vtype)) return false;
    call_try_commit(p);
    return true;
}

static bool args_on_vend(Parser *p) {
    if (p->js.vdepth) return true;
    call_represented(p);
    if (p->eng->d->args_after) p->state = E_AFTER_ARGS;
    else body_done(p);
    return true;
}

static const JsonHooks ARGS_HOOKS = {args_on_key, args_on_vstart, args_on_vend, E_CONTENT};

/* Between the objects of a JSON array, or before the first. */
static void step_array(Parser *p, unsigned char c, size_t *pi, const char *s) {
    if (is_json_space(c)) {
        call_raw(p, s + *pi, 1);
        ++*pi;
        return;
    }
    switch (p->state) {
    case E_ARR_OPEN:
        if (c != '[') {
            call_break(p, E_CONTENT, NULL, 0);
            return;
        }
        p->state = E_ARR_ITEM;
        break;
    case E_ARR_ITEM:
        if (c == '{') {
            begin_call(p, NULL, true);   /* the object's bytes are the scanner's */
            return;
        }
        if (c != ']') {
            call_break(p, E_CONTENT, NULL, 0);
            return;
        }
        p->state = E_SECTION_END;
        break;
    case E_ARR_NEXT:
        if (c != ',' && c != ']') {   /* the calls stand; the rest is text */
            p->call.raw.len = 0;
            p->state = after_calls(p->eng);
            return;
        }
        p->state = c == ',' ? E_ARR_ITEM : E_SECTION_END;
        break;
    default:   /* E_SEQ_NEXT */
        if (c == '{') begin_call(p, NULL, true);
        else p->state = E_SECTION_END;
        return;
    }
    call_raw(p, s + *pi, 1);
    ++*pi;
}

/* ---- typed XML parameters ---- */

static void close_args(Parser *p) {
    call_args(p, p->nargs ? "}" : "{}", p->nargs ? 1 : 2);
    call_represented(p);
}

/* `{"key": ` or `, "key": ` goes out at once; the key's schema says
 * whether the value is a string (an explicit flag may still say). */
static void key_done(Parser *p) {
    const char *key = p->text.p;
    size_t n = p->text.len;
    trim(&key, &n);
    p->string_value = property_allows_string(p->props, key, n);
    p->esc.len = 0;
    sb_puts(&p->esc, p->nargs++ ? ", \"" : "{\"");
    json_escape_into(&p->esc, key, n);
    sb_puts(&p->esc, "\": ");
    call_args(p, p->esc.p, p->esc.len);
    call_represented(p);
}

static void value_begin(Parser *p) {
    p->text.len = 0;
    p->value.started = false;   /* trim: the value's first non-space byte was seen */
    p->value.ws.len = 0;        /* trim: whitespace held back, layout if the value ends here */
    p->eng->val_fresh = true;
    if (p->string_value) {
        call_args(p, "\"", 1);
        call_represented(p);
    }
    p->state = E_VAL;
}

static void after_key(Parser *p) {
    if (p->eng->d->value_open) p->state = E_MID;
    else value_begin(p);
}

static void emit_value(Parser *p, const char *s, size_t n) {
    p->esc.len = 0;
    json_escape_into(&p->esc, s, n);
    call_args(p, p->esc.p, p->esc.len);
}

/* A string value streams as it comes (a held newline waits to see whether
 * the value ends); any other value is held until its end. */
static void put_value(Parser *p, const char *s, size_t n) {
    Engine *e = p->eng;
    bool trim = e->d->trim_value;
    call_raw(p, s, n);
    if (!p->string_value) {   /* (value_done trims it) */
        sb_put(&p->text, s, n);
        return;
    }
    if (trim) {
        Chan *v = &p->value;
        if (e->val_fresh && n) {   /* the newline after the key's '>' is layout; indentation is not */
            e->val_fresh = false;
            if (*s == '\n') s++, n--;
        }
        if (n) v->started = true;
        size_t k = n;
        while (k && is_space((unsigned char)s[k - 1])) k--;
        if (k) {   /* text: the whitespace held before it is the value's */
            if (v->ws.len) emit_value(p, v->ws.p, v->ws.len);
            v->ws.len = 0;
            emit_value(p, s, k);
        }
        sb_put(&v->ws, s + k, n - k);
    } else {
        emit_value(p, s, n);
    }
    call_represented(p);
}

static void value_done(Parser *p) {
    Engine *e = p->eng;
    if (p->string_value) {
        /* trim: held whitespace is the value's but for the newline before the closer */
        StrBuf *ws = &p->value.ws;
        size_t w = ws->len;
        if (e->d->trim_value && w && ws->p[w - 1] == '\n') w--;
        if (e->d->trim_value && w) emit_value(p, ws->p, w);
        ws->len = 0;
        call_args(p, "\"", 1);
    } else {
        const char *v = p->text.p;
        size_t n = p->text.len;
        p->esc.len = 0;
        if (js_valid(p, v, n)) {
            while (is_json_space((unsigned char)*v)) v++, n--;
            while (is_json_space((unsigned char)v[n - 1])) n--;
            sb_put(&p->esc, v, n);
        } else if (!literal_value_to_json(p, v, n, &p->esc)) {
            /* neither JSON nor a Python literal ({'a': True}, as templates
               print a dict with str()): the text, as a string */
            if (p->eng->d->trim_value) {
                while (n && is_space((unsigned char)*v)) v++, n--;
                while (n && is_space((unsigned char)v[n - 1])) n--;
            }
            sb_putc(&p->esc, '"');
            json_escape_into(&p->esc, v, n);
            sb_putc(&p->esc, '"');
        }
        call_args(p, p->esc.p, p->esc.len);
    }
    call_represented(p);
}

static void put_flag(Parser *p, const char *s, size_t n) {
    Engine *e = p->eng;
    call_raw(p, s, n);
    for (size_t k = 0; k < n && e->flag_len < FLAG_MAX; k++) e->flag_text[e->flag_len++] = s[k];
}

static bool flag_is(const Engine *e, const char *want) {
    return want && literal_is(want, e->flag_text, e->flag_len);
}

/* The parameter list ended with `role`'s marker (tag: consumed). */
static void params_end(Parser *p, int role, const char *tag) {
    Engine *e = p->eng;
    call_raw(p, tag, strlen(tag));
    close_args(p);
    if (role == R_PARAMS_CLOSE) {
        body_done(p);
    } else if (role == R_CALL_CLOSE) {
        finish_call(p);
    } else {   /* the section's closer: the call and the section end */
        call_end(p);
        e->in_section = false;
        p->state = after_calls(e);
    }
}

/* ---- XML elements named by their keys (BODY_XML_TREE) ---- */

/* A tag after the element prefix, '<' ['/'] NAME '>', into Engine.tag:
 * 1 once read whole, 0 when input ran out, -1 at a byte that makes it none
 * (not consumed). */
static int read_tree_tag(Parser *p, const char *s, size_t n, size_t *pi) {
    Engine *e = p->eng;
    size_t i = *pi;
    int r = 0;
    while (i < n && !r) {
        unsigned char c = (unsigned char)s[i];
        size_t k = e->tag_len;
        bool closing = k > 1 && e->tag[1] == '/';
        bool ok = !k ? c == '<'
                : c == '>' ? k > 1u + closing
                : k == 1 && c == '/' ? true
                : c >= 0x20 && c != '<' && k < KEY_MAX;
        if (!ok) {
            r = -1;
            break;
        }
        e->tag[e->tag_len++] = (char)c;
        call_raw(p, s + i, 1);
        i++;
        if (k && c == '>') r = 1;
    }
    *pi = i;
    return r;
}

/* The tag read: is it the closer (or opener) of an element named name? */
static bool tag_is(const Engine *e, bool closing, const char *name, size_t n) {
    size_t at = closing ? 2 : 1;
    return (e->tag_len > 1 && (e->tag[1] == '/') == closing) && e->tag_len - at - 1 == n &&
           memcmp(e->tag + at, name, n) == 0;
}

/* A parameter's element opened: its key goes out; its value is held. */
static void tree_key(Parser *p) {
    Engine *e = p->eng;
    e->tree_key_len = (uint16_t)(e->tag_len - 2);
    memcpy(e->tree_key, e->tag + 1, e->tree_key_len);
    p->text.len = 0;
    sb_put(&p->text, e->tree_key, e->tree_key_len);
    key_done(p);
    p->text.len = 0;
    e->tree_depth = 0;
    p->state = E_TREE_VAL;
}

/* The parameter's element closed: its value, typed by the key's schema. */
static void tree_value_done(Parser *p) {
    Engine *e = p->eng;
    Value schema = v_none();
    if (p->props.type == VT_DICT) dict_get_str(p->props.u.dict, e->tree_key, e->tree_key_len, &schema);
    p->esc.len = 0;
    if (!xml_tree_to_json(p, p->text.p, p->text.len, e->d->element_prefix, e->d->element_item, schema, &p->esc)) {
        call_break(p, E_CONTENT, NULL, 0);
        return;
    }
    call_args(p, p->esc.p, p->esc.len);
    call_represented(p);
    p->text.len = 0;
    p->state = E_TREE;
}

/* ---- the machine ---- */

/* Scan text of a bounded field (at most `max` bytes held in Parser.text):
 * the matched tag's index, -1 when input ran out, -2 when the field is too
 * long (the call then broke). A tag prefix held across a feed counts as
 * held: the field then ends at the same byte however the input is cut. */
static int scan_bounded(Parser *p, const char *s, size_t n, size_t *pi, const MarkSet *m, TextSink put,
                        size_t held, size_t max) {
    held += p->tm_len;
    if (held >= max) {
        call_break(p, E_CONTENT, p->tm_buf, p->tm_len);
        return -2;
    }
    size_t end = n - *pi > max - held ? *pi + (max - held) : n;
    return scan_text(p, s, end, pi, &m->set, put);
}

static void engine_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;   /* (re-entered by scan_lead and call_break for at most 31 held bytes) */
    while (i < n) {
        int r;
        if (p->state <= E_LEAD_REASON) p->eng = p->eng->main;   /* text: the format's own markers */
        Engine *e = p->eng;
        const ReplyFormatDesc *d = e->d;
        switch (p->state) {
        case E_PRE:
            r = scan_lead(p, s, n, &i, &e->lead.set, E_CONTENT);
            if (r < 0) break;
            if (e->lead.role[r] == R_THINK_OPEN) p->state = E_REASON;
            else if (e->lead.role[r] == R_THINK_CLOSE) p->state = E_CONTENT;
            else if (e->lead.role[r] == R_DROP) break;   /* a content wrapper: still before any text */
            else on_trigger(p, e->lead.role[r], e->lead.tags[r]);
            break;
        case E_LEAD_REASON:   /* a held prefix that is not a marker is reasoning, scanned again */
            r = scan_lead(p, s, n, &i, &e->lead_reason.set, E_REASON);
            if (r >= 0) p->state = e->lead_reason.role[r] == R_THINK_OPEN ? E_REASON : E_CONTENT;
            break;
        case E_REASON:
            r = scan_text(p, s, n, &i, &e->reason.set, put_reasoning);
            if (r < 0) break;
            if (e->reason.role[r] == R_THINK_CLOSE) p->state = E_CONTENT;
            else on_trigger(p, e->reason.role[r], e->reason.tags[r]);
            break;
        case E_CONTENT:
            r = scan_text(p, s, n, &i, &e->content.set, put_content);
            if (r >= 0 && e->content.role[r] == R_THINK_OPEN) {
                if (p->reasoning_mode != REASONING_CLOSED) p->state = E_REASON;
                else put_content(p, e->content.tags[r], strlen(e->content.tags[r]));   /* thinking off: text */
            } else if (r >= 0 && e->content.role[r] != R_DROP) on_trigger(p, e->content.role[r], e->content.tags[r]);
            break;
        case E_SECTION:
            r = expect_tag(p, s, n, &i, &e->section.set, e->section_calls ? after_calls(e) : E_CONTENT,
                           e->section_calls > 0);
            if (r < 0) break;
            if (e->section.role[r] == R_CALL_OPEN) {
                begin_call(p, e->section.tags[r], true);
            } else if (!e->section_calls) {   /* an empty section is text */
                call_raw(p, e->section.tags[r], strlen(e->section.tags[r]));
                call_break(p, E_CONTENT, NULL, 0);
            } else {
                p->call.raw.len = 0;
                e->in_section = false;
                p->state = after_calls(e);
            }
            break;
        case E_HDR: {
            if (d->header[e->field_at].token) {
                step_token(p, s, n, &i);
                break;
            }
            const MarkSet *m = &e->field[e->field_at];
            r = scan_bounded(p, s, n, &i, m, put_held, p->text.len, HEADER_MAX);
            if (r >= 0) field_done(p, m->tags[r]);
            break;
        }
        case E_JSON_CALL:
            i += json_call_step(p, s + i, n - i, &CALL_HOOKS);
            break;
        case E_ARGS:
            i += json_call_step(p, s + i, n - i, &ARGS_HOOKS);
            break;
        case E_ARR_OPEN:
        case E_ARR_ITEM:
        case E_ARR_NEXT:
        case E_SEQ_NEXT:
            step_array(p, (unsigned char)s[i], &i, s);
            break;
        case E_SECTION_END:
            if (!d->section_close[0]) {
                p->call.raw.len = 0;
                p->state = after_calls(e);
                break;
            }
            r = expect_tag(p, s, n, &i, &e->section_end.set, e->section_calls ? after_calls(e) : E_CONTENT,
                           e->section_calls > 0);
            if (r < 0) break;
            if (!e->section_calls) {
                call_raw(p, e->section_end.tags[r], strlen(e->section_end.tags[r]));
                call_break(p, E_CONTENT, NULL, 0);
            } else {
                p->call.raw.len = 0;
                p->state = after_calls(e);
            }
            e->in_section = false;
            break;
        case E_AFTER_ARGS:
            r = expect_tag(p, s, n, &i, &e->after.set, after_calls(e), true);
            if (r < 0) break;
            call_raw(p, e->after.tags[r], strlen(e->after.tags[r]));
            body_done(p);
            break;
        case E_WRAP:   /* a wrapper tag, or the body itself (the byte a tag misses at is the body's) */
            r = expect_marks(p, s, n, &i, &e->wrap.set);
            if (r == -1) break;
            if (r >= 0) {
                call_raw(p, e->wrap.tags[r], strlen(e->wrap.tags[r]));
                e->wrapped = true;
                body_begin(p);
            } else if (p->tm_len) {   /* part of a tag: not a body */
                marks_break(p, E_CONTENT);
            } else {
                body_begin(p);
            }
            break;
        case E_WRAP_END:
            r = expect_tag(p, s, n, &i, &e->wrap_end.set, after_calls(e), true);
            if (r < 0) break;
            call_raw(p, e->wrap_end.tags[r], strlen(e->wrap_end.tags[r]));
            e->wrapped = false;
            body_done(p);
            break;
        case E_CALL_END:
            r = expect_tag(p, s, n, &i, &e->call_end.set, after_calls(e), true);
            if (r < 0) break;
            switch (e->call_end.role[r]) {
            case R_CALL_CLOSE: finish_call(p); break;
            case R_CALL_OPEN:   /* its closer is missing: the next call begins */
                finish_call(p);
                p->call.raw.len = 0;
                begin_call(p, e->call_end.tags[r], true);
                break;
            default:            /* the section closes */
                call_end(p);
                p->call.raw.len = 0;
                e->in_section = false;
                p->state = after_calls(e);
            }
            break;
        case E_TREE:   /* between parameters: the prefix of the next element, or of the list's end */
            r = expect_tag(p, s, n, &i, &e->tree.set, E_CONTENT, false);
            if (r < 0) break;
            call_raw(p, e->tree.tags[r], strlen(e->tree.tags[r]));
            e->tag_len = 0;
            p->state = E_TREE_TAG;
            break;
        case E_TREE_TAG:
            r = read_tree_tag(p, s, n, &i);
            if (r == 0) break;
            if (r < 0) {
                call_break(p, E_CONTENT, NULL, 0);
            } else if (tag_is(e, true, d->element_end, strlen(d->element_end))) {
                close_args(p);
                body_done(p);
            } else if (e->tag[1] == '/') {   /* the closer of no open element */
                call_break(p, E_CONTENT, NULL, 0);
            } else {
                tree_key(p);
            }
            break;
        case E_TREE_VAL:
            r = scan_text(p, s, n, &i, &e->tree.set, put_held);
            if (r < 0) break;
            call_raw(p, e->tree.tags[r], strlen(e->tree.tags[r]));
            e->tag_len = 0;
            p->state = E_TREE_VAL_TAG;
            break;
        case E_TREE_VAL_TAG:
            r = read_tree_tag(p, s, n, &i);
            if (r == 0) break;
            if (r < 0) {
                call_break(p, E_CONTENT, NULL, 0);
                break;
            }
            if (tag_is(e, true, e->tree_key, e->tree_key_len) && !e->tree_depth) {
                tree_value_done(p);
                break;
            }
            if (tag_is(e, false, e->tree_key, e->tree_key_len)) e->tree_depth++;
            else if (tag_is(e, true, e->tree_key, e->tree_key_len)) e->tree_depth--;
            sb_puts(&p->text, d->element_prefix);   /* (raw has them) */
            sb_put(&p->text, e->tag, e->tag_len);
            p->state = E_TREE_VAL;
            break;
        case E_PARAMS:
            r = expect_tag(p, s, n, &i, &e->params.set, E_CONTENT, false);
            if (r < 0) break;
            if (e->params.role[r] == R_PARAM_OPEN) {
                call_raw(p, e->params.tags[r], strlen(e->params.tags[r]));
                p->text.len = 0;
                p->state = E_KEY;
            } else {
                params_end(p, e->params.role[r], e->params.tags[r]);
            }
            break;
        case E_KEY:
            r = scan_bounded(p, s, n, &i, &e->key, put_held, p->text.len, KEY_MAX);
            if (r < 0) break;
            call_raw(p, e->key.tags[r], strlen(e->key.tags[r]));
            key_done(p);
            if (e->key.role[r] == R_KEY_FLAG) {
                e->flag_len = 0;
                p->state = E_FLAG;
            } else {
                after_key(p);
            }
            break;
        case E_FLAG:
            r = scan_bounded(p, s, n, &i, &e->flag, put_flag, e->flag_len, FLAG_MAX);
            if (r < 0) break;
            call_raw(p, e->flag.tags[r], strlen(e->flag.tags[r]));
            p->string_value = flag_is(e, d->flag_string);
            if (!p->string_value && !flag_is(e, d->flag_json)) {
                call_break(p, E_CONTENT, NULL, 0);
                break;
            }
            after_key(p);
            break;
        case E_MID:
            r = expect_tag(p, s, n, &i, &e->mid.set, E_CONTENT, false);
            if (r < 0) break;
            call_raw(p, e->mid.tags[r], strlen(e->mid.tags[r]));
            value_begin(p);
            break;
        case E_VERBATIM:   /* the value's text up to the section's closer, whatever it holds */
            r = scan_text(p, s, n, &i, &e->verbatim.set, put_value);
            if (r < 0) break;
            call_raw(p, e->verbatim.tags[r], strlen(e->verbatim.tags[r]));
            p->state = E_VAL;
            break;
        default:   /* E_VAL */
            r = scan_text(p, s, n, &i, &e->val.set, put_value);
            if (r < 0) break;
            if (e->val.role[r] == R_VERBATIM) {   /* the wrapper is markup, not the value's */
                call_raw(p, e->val.tags[r], strlen(e->val.tags[r]));
                p->state = E_VERBATIM;
                break;
            }
            value_done(p);
            switch (e->val.role[r]) {
            case R_VALUE_CLOSE:
                call_raw(p, e->val.tags[r], strlen(e->val.tags[r]));
                p->state = E_PARAMS;
                break;
            case R_PARAM_OPEN:   /* the value's closer is missing */
                call_raw(p, e->val.tags[r], strlen(e->val.tags[r]));
                p->text.len = 0;
                p->state = E_KEY;
                break;
            default: params_end(p, e->val.role[r], e->val.tags[r]);
            }
        }
    }
}

static void finish_state(Parser *p) {
    Engine *e = p->eng;
    switch (p->state) {
    case E_PRE:
    case E_CONTENT: flush_tag_prefix(p, put_content); break;
    case E_LEAD_REASON:
    case E_REASON: flush_tag_prefix(p, put_reasoning); break;
    case E_SECTION:
        if (!e->section_calls && !p->tm_len && e->d->section_ends_message) {   /* the message's end token */
            p->call.raw.len = 0;   /* (no call began: the opener and layout are all it holds) */
            break;
        }
        /* fall through */
    case E_ARR_NEXT:
    case E_SEQ_NEXT:
    case E_SECTION_END:
        if (e->section_calls) call_accept_eof(p);
        else call_break_eof(p, E_CONTENT);
        break;
    case E_CALL_END:
    case E_WRAP_END:
    case E_AFTER_ARGS: call_accept_eof(p); break;
    default: call_break_eof(p, E_CONTENT);
    }
}

static void engine_finish(Parser *p) {
    do {   /* again while a call broken in reasoning left text after the closer, parsed anew */
        p->replayed = false;
        finish_state(p);
    } while (p->replayed);
}

static int engine_fast(const Parser *p, const TagSet **tags) {
    const Engine *e = p->state <= E_LEAD_REASON ? p->eng->main : p->eng;
    const MarkSet *m = NULL;
    int kind = FAST_NONE;
    switch (p->state) {
    case E_CONTENT: m = &e->content; kind = FAST_CONTENT; break;
    case E_REASON: m = &e->reason; kind = FAST_REASONING; break;
    case E_JSON_CALL:
    case E_ARGS: return json_args_fast(p);
    case E_VAL:
        /* a string value of a committed call, escaped twice (a held newline
         * is the machine's); any other value is held whole */
        m = &e->val;
        if (!p->string_value) kind = FAST_HELD;
        else if (!p->call.committed) return FAST_NONE;
        else kind = e->d->trim_value ? FAST_TRIM_ARGS : FAST_GLM_ARGS;
        break;
    case E_HDR: return e->d->header[e->field_at].token ? FAST_NAME : FAST_NONE;
    case E_PARAMS: m = &e->params; kind = FAST_TAG; break;
    case E_MID: m = &e->mid; kind = FAST_TAG; break;
    case E_SECTION: m = &e->section; kind = FAST_TAG; break;
    case E_CALL_END: m = &e->call_end; kind = FAST_TAG; break;
    default: return FAST_NONE;
    }
    if (!m->set.n) return kind >= FAST_TAG ? FAST_NONE : kind;
    /* in text the fast path takes markers of any first byte; in a call it watches for '<' only */
    if (!m->lt_only && kind != FAST_CONTENT && kind != FAST_REASONING) return FAST_NONE;
    *tags = &m->set;
    return kind;
}

void engine_init(Parser *p, const ReplyFormatDesc *d) {
    Engine *e = rt_alloc0(&p->rt, sizeof *e);
    e->d = d;
    e->main = e;
    build_sets(e);
    for (int k = 0; k < MAX_ALTS && d->alt[k]; k++) {
        Engine *a = e->alt[k] = rt_alloc0(&p->rt, sizeof *a);
        a->d = d->alt[k];
        a->main = e;
        build_sets(a);
    }
    p->eng = e;
    p->step = engine_step;
    p->finish = engine_finish;
    p->fast = engine_fast;
    p->state = p->reasoning_mode == REASONING_OPEN && d->think_close[0] ? (d->think_open[0] ? E_LEAD_REASON : E_REASON)
             : p->reasoning_mode == REASONING_CLOSED ? E_CONTENT
             : E_PRE;
    if (d->opens_in_field) {
        begin_call(p, NULL, true);
        e->field_at = (uint8_t)(d->opens_in_field - 1);
    }
}
