/* command_a.c — Cohere Command-A (Reasoning) replies:
 *   <|START_THINKING|>REASONING<|END_THINKING|>
 *   <|START_ACTION|>[{"tool_call_id": "0", "tool_name": N, "parameters": {...}}, ...]<|END_ACTION|>
 *   or <|START_RESPONSE|>CONTENT<|END_RESPONSE|> (Cohere2MoE: <|START_TEXT|>
 *   CONTENT<|END_TEXT|>), then <|END_OF_TURN_TOKEN|>.
 * Each action is a call with the model's tool_call_id as its id; it commits
 * once both id and name are read (or at its end, when the id is missing:
 * then "call_<index>"), and its "parameters" text streams verbatim.
 * Content may cite tool results: <co>SPAN</co: 0:[1,2],1:[0]> becomes SPAN
 * plus a citation {start, end, text, sources}.
 * Written by hand, not described (format_desc.h): a description has no
 * citations (spans counted in code points, sources parsed into JSON), no
 * call that waits for the model's id before it commits, and no reasoning
 * block that a call or a response opener also ends. */
#include <stdio.h>
#include <string.h>
#include "reply.h"

enum { C_OUT, C_THINK, C_RESP, C_ACT, C_ACT_POST, C_CO_SRC };
enum { K_NONE, K_ID, K_NAME, K_ARGS };

/* Each tag is one object, so a matched tag is known by its address. */
static const char START_THINKING[] = "<|START_THINKING|>", END_THINKING[] = "<|END_THINKING|>",
                  START_ACTION[] = "<|START_ACTION|>", END_ACTION[] = "<|END_ACTION|>",
                  START_RESPONSE[] = "<|START_RESPONSE|>", END_RESPONSE[] = "<|END_RESPONSE|>",
                  START_TEXT[] = "<|START_TEXT|>", END_TEXT[] = "<|END_TEXT|>",
                  END_OF_TURN[] = "<|END_OF_TURN_TOKEN|>", CO_OPEN[] = "<co>", CO_CLOSE[] = "</co:";

/* Outside blocks. The first tag is left out when the prompt closed reasoning. */
static const char *const OUT_TAGS[] = {START_THINKING, START_ACTION, START_RESPONSE, START_TEXT, END_OF_TURN,
                                       CO_OPEN, CO_CLOSE};
static const char *const THINK_TAGS[] = {END_THINKING, START_ACTION, START_RESPONSE, START_TEXT};
static const char *const RESP_TAGS[] = {END_RESPONSE, END_TEXT, END_OF_TURN, CO_OPEN, CO_CLOSE};
static const char *const POST_TAGS[] = {END_ACTION};
static const TagSet OUT_SET = {OUT_TAGS, 7}, OUT_NOTHINK_SET = {OUT_TAGS + 1, 6};
static const TagSet THINK_SET = {THINK_TAGS, 4}, RESP_SET = {RESP_TAGS, 5};
static const TagSet POST_SET = {POST_TAGS, 1};

/* ---- citations ---- */

static void skip_spaces(const char **s, const char *end) {
    while (*s < end && is_space((unsigned char)**s)) (*s)++;
}

/* A decimal index (at most 9 digits), written back as a JSON number
 * (canonical: "007" is 7). */
static bool read_index(const char **s, const char *end, StrBuf *out) {
    skip_spaces(s, end);
    const char *start = *s;
    unsigned v = 0;
    for (; *s < end && **s >= '0' && **s <= '9' && *s - start < 9; (*s)++) v = v * 10 + (unsigned)(**s - '0');
    if (*s == start) return false;
    char digits[10], *w = digits + sizeof digits;
    do *--w = (char)('0' + v % 10);
    while (v /= 10);
    sb_put(out, w, (size_t)(digits + sizeof digits - w));
    skip_spaces(s, end);
    return true;
}

static bool read_char(const char **s, const char *end, char c) {
    skip_spaces(s, end);
    if (*s >= end || **s != c) return false;
    (*s)++;
    return true;
}

/* " 0:[1,2],1:[0]" -> [{"tool_call_index":0,"result_indices":[1,2]},...] */
static bool sources_to_json(const char *s, size_t n, StrBuf *out) {
    const char *end = s + n;
    sb_putc(out, '[');
    do {
        if (out->len > 1) sb_putc(out, ',');
        sb_puts(out, "{\"tool_call_index\":");
        if (!read_index(&s, end, out) || !read_char(&s, end, ':') || !read_char(&s, end, '['))
            return false;
        sb_puts(out, ",\"result_indices\":[");
        if (!read_char(&s, end, ']')) {
            do {
                if (out->p[out->len - 1] != '[') sb_putc(out, ',');
                if (!read_index(&s, end, out)) return false;
            } while (read_char(&s, end, ','));
            if (!read_char(&s, end, ']')) return false;
        }
        sb_puts(out, "]}");
    } while (read_char(&s, end, ','));
    skip_spaces(&s, end);
    sb_putc(out, ']');
    return s == end;
}

/* `</co:` + SOURCES + `>`, or not a citation after all (then it is text). */
static void citation_end(Parser *p, bool closed) {
    p->state = p->ret_state;
    p->esc.len = 0;
    if (closed && p->span_open && sources_to_json(p->text.p, p->text.len, &p->esc)) {
        span_close(p, p->esc.p, p->esc.len);
        return;
    }
    put_content(p, CO_CLOSE, strlen(CO_CLOSE));
    put_content(p, p->text.p, p->text.len);
    if (closed) put_content(p, ">", 1);
}

static void step_sources(Parser *p, const char *s, size_t n, size_t *pi) {
    size_t i = *pi, room = MAX_SOURCES - p->text.len, end = n - i < room ? n : i + room;
    const char *gt = memchr(s + i, '>', end - i), *lt = memchr(s + i, '<', end - i);
    const char *stop = gt && (!lt || gt < lt) ? gt : lt;
    size_t k = stop ? (size_t)(stop - s) : end;
    sb_put(&p->text, s + i, k - i);
    *pi = k;
    if (stop == gt && gt) {
        *pi = k + 1;
        citation_end(p, true);
    } else if (stop || p->text.len >= MAX_SOURCES) {   /* not sources after all */
        citation_end(p, false);
    }
}

/* ---- actions ---- */

/* Only "tool_call_id", "tool_name" and "parameters", once each (see hermes). */
static bool on_key(Parser *p) {
    const JScan *j = &p->js;
    const Call *c = &p->call;
    if (json_key_is(j, "tool_call_id") && !c->has_id) p->cur_key = K_ID;
    else if (json_key_is(j, "tool_name") && !c->has_name) p->cur_key = K_NAME;
    else if (json_key_is(j, "parameters") && !p->nargs) p->cur_key = K_ARGS;
    else return false;
    return true;
}

static bool on_vstart(Parser *p) {
    JScan *j = &p->js;
    char t = j->vtype;
    switch (j->vdepth) {
    case 0: return t == '[';
    case 1:                                 /* one action */
        if (t != '{') return false;
        call_begin(p, NULL, true, true);
        p->nargs = 0;
        p->cur_key = K_NONE;
        p->val_mode = V_SKIP;
        return true;
    }
    p->val_mode = V_SKIP;
    switch (p->cur_key) {
    case K_ID:
        if (t != '"' && t != '-' && (t < '0' || t > '9')) return false;
        p->val_mode = V_ID;
        if (t == '"') j->dec = &p->call.id;
        break;
    case K_NAME: return json_name_start(p);
    case K_ARGS:
        return json_args_start(p, t);
    }
    return true;
}

static bool on_vend(Parser *p) {
    switch (p->js.vdepth) {
    case 0:                                 /* the list */
        p->state = C_ACT_POST;
        return true;
    case 1:                                 /* one action */
        if (!p->call.has_name) return false;
        if (!p->nargs) call_args(p, "{}", 2);
        call_end(p);
        return true;
    }
    if (p->val_mode == V_ID) {
        p->call.has_id = true;
        call_try_commit(p);
    } else if (p->val_mode == V_NAME) {
        if (!p->call.name.len) return false;
        p->call.has_name = true;
        call_try_commit(p);
    }
    p->val_mode = V_SKIP;
    p->cur_key = K_NONE;
    return true;
}

static const JsonHooks HOOKS = {on_key, on_vstart, on_vend, C_OUT};

static void start_actions(Parser *p) {
    p->call.raw.len = 0;
    call_raw(p, START_ACTION, strlen(START_ACTION));
    js_init(p, &p->js, 2, 2);
    p->state = C_ACT;
}

/* A tag in content (outside blocks or in a response). */
static void content_tag(Parser *p, const char *tag) {
    if (tag == START_THINKING) p->state = C_THINK;
    else if (tag == START_ACTION) start_actions(p);
    else if (tag == START_RESPONSE || tag == START_TEXT) p->state = C_RESP;
    else if (tag == END_RESPONSE || tag == END_TEXT || tag == END_OF_TURN) p->state = C_OUT;
    else if (tag == CO_OPEN) span_open(p);
    else if (!p->span_open) put_content(p, tag, strlen(tag));   /* </co: closing nothing */
    else {
        p->ret_state = p->state;
        p->text.len = 0;
        p->state = C_CO_SRC;
    }
}

static const TagSet *out_set(const Parser *p) {
    return p->reasoning_mode == REASONING_CLOSED ? &OUT_NOTHINK_SET : &OUT_SET;
}

static void command_a_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        int r;
        switch (p->state) {
        case C_OUT:
        case C_RESP: {
            const TagSet *set = p->state == C_OUT ? out_set(p) : &RESP_SET;
            r = scan_text(p, s, n, &i, set, put_content);
            if (r >= 0) content_tag(p, set->tags[r]);
            break;
        }
        case C_THINK:
            r = scan_text(p, s, n, &i, &THINK_SET, put_reasoning);
            if (r == 0) p->state = C_OUT;
            else if (r > 0) content_tag(p, THINK_TAGS[r]);   /* END_THINKING forgotten */
            break;
        case C_ACT:
            i += json_call_step(p, s + i, n - i, &HOOKS);
            break;
        case C_ACT_POST:   /* the list is complete; a missing end tag is forgiven */
            if (expect_tag(p, s, n, &i, &POST_SET, C_OUT, true) >= 0) {
                call_accept(p);
                p->state = C_OUT;
            }
            break;
        default:           /* C_CO_SRC */
            step_sources(p, s, n, &i);
        }
    }
}

static void command_a_finish(Parser *p) {
    switch (p->state) {
    case C_THINK: flush_tag_prefix(p, put_reasoning); break;
    case C_ACT: call_break_eof(p, C_OUT); break;
    case C_ACT_POST: call_accept_eof(p); break;
    case C_CO_SRC: citation_end(p, false); break;
    default: flush_tag_prefix(p, put_content);
    }
}

static int command_a_fast(const Parser *p, const TagSet **tags) {
    switch (p->state) {
    case C_OUT:
    case C_RESP:
        *tags = p->state == C_OUT ? out_set(p) : &RESP_SET;
        return FAST_CONTENT;
    case C_THINK:
        *tags = &THINK_SET;
        return FAST_REASONING;
    case C_ACT: return json_args_fast(p);
    case C_CO_SRC: return FAST_SOURCES;
    default: return FAST_NONE;
    }
}

void command_a_init(Parser *p) {
    p->step = command_a_step;
    p->finish = command_a_finish;
    p->fast = command_a_fast;
    p->content.count_cps = true;
    p->state = p->reasoning_mode == REASONING_OPEN ? C_THINK : C_OUT;
}
