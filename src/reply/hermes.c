/* hermes.c — Hermes-style replies (Qwen 2.5/3, Nanbeige) and plain
 * reasoning replies:
 *   [<think>REASONING</think>] CONTENT <tool_call>{"name": N, "arguments": {...}}</tool_call> ...
 * The JSON object is scanned incrementally: the call commits once "name"
 * is read; the "arguments" object's text streams verbatim as it arrives
 * (held, if it comes before "name", until the name is known). */
#include <string.h>
#include "reply.h"

enum { H_PRE, H_REASON, H_CONTENT, H_CALL, H_POST };
enum { K_NONE, K_NAME, K_ARGS };

/* a leading </think> closes reasoning the prompt opened (history drops it) */
static const char *const PRE_TAGS[] = {"<think>", "</think>", "<tool_call>"};
static const char *const REASON_TAGS[] = {"</think>"};
static const char *const CALL_TAGS[] = {"<tool_call>"};
static const char *const POST_TAGS[] = {"</tool_call>"};
static const TagSet PRE_SET = {PRE_TAGS, 3}, PLAIN_PRE_SET = {PRE_TAGS, 2};
static const TagSet REASON_SET = {REASON_TAGS, 1};
static const TagSet CONTENT_SET = {CALL_TAGS, 1}, PLAIN_CONTENT_SET = {NULL, 0};
static const TagSet POST_SET = {POST_TAGS, 1};

static bool with_calls(const Parser *p) { return p->format == CF_REPLY_HERMES; }

static void start_call(Parser *p) {
    call_begin(p, "<tool_call>", false, false);
    js_init(p, &p->js, 1, 1);
    p->cur_key = K_NONE;
    p->val_mode = V_SKIP;
    p->nargs = 0;              /* "arguments" seen */
    p->state = H_CALL;
}

/* Only "name" and "arguments" (or "parameters"), once each: anything else
 * is not a call we can represent without dropping what the model wrote. */
static bool on_key(Parser *p) {
    const JScan *j = &p->js;
    if (json_key_is(j, "name") && !p->call.has_name) p->cur_key = K_NAME;
    else if ((json_key_is(j, "arguments") || json_key_is(j, "parameters")) && !p->nargs)
        p->cur_key = K_ARGS;
    else return false;
    return true;
}

/* A value starts; false if the call is malformed here. */
static bool on_vstart(Parser *p) {
    JScan *j = &p->js;
    if (j->vdepth == 0) return j->vtype == '{';
    switch (p->cur_key) {
    case K_NAME:
        if (j->vtype != '"') return false;
        p->val_mode = V_NAME;
        j->dec = &p->call.name;
        break;
    case K_ARGS:
        return json_args_start(p, j->vtype);
    default:
        p->val_mode = V_SKIP;
    }
    return true;
}

/* A value ended; false if the call is malformed here. */
static bool on_vend(Parser *p) {
    if (p->js.vdepth == 0) {               /* the whole object */
        if (!p->call.has_name) return false;
        if (!p->nargs) call_args(p, "{}", 2);
        p->state = H_POST;
        return true;
    }
    if (p->val_mode == V_NAME) {
        if (!p->call.name.len) return false;
        p->call.has_name = true;
        call_try_commit(p);
    }
    p->val_mode = V_SKIP;
    p->cur_key = K_NONE;
    return true;
}

static const JsonHooks HOOKS = {on_key, on_vstart, on_vend, H_CONTENT};

static void hermes_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        switch (p->state) {
        case H_PRE: {   /* before any text: a reasoning block may open */
            int r = scan_lead(p, s, n, &i, with_calls(p) ? &PRE_SET : &PLAIN_PRE_SET, H_CONTENT);
            if (r == 0) p->state = H_REASON;
            else if (r == 1) p->state = H_CONTENT;
            else if (r == 2) start_call(p);
            break;
        }
        case H_REASON:
            if (scan_text(p, s, n, &i, &REASON_SET, put_reasoning) >= 0) p->state = H_CONTENT;
            break;
        case H_CONTENT:
            if (scan_text(p, s, n, &i, with_calls(p) ? &CONTENT_SET : &PLAIN_CONTENT_SET,
                          put_content) >= 0)
                start_call(p);
            break;
        case H_CALL:
            i += json_call_step(p, s + i, n - i, &HOOKS);
            break;
        default:        /* H_POST: the JSON is complete; a missing end tag is forgiven */
            if (expect_tag(p, s, n, &i, &POST_SET, H_CONTENT, true) >= 0) {
                call_end(p);
                p->state = H_CONTENT;
            }
        }
    }
}

static void hermes_finish(Parser *p) {
    switch (p->state) {
    case H_REASON: flush_tag_prefix(p, put_reasoning); break;
    case H_CALL: call_break_eof(p, H_CONTENT); break;
    case H_POST: call_accept_eof(p); break;
    default: flush_tag_prefix(p, put_content);
    }
}

static int hermes_fast(const Parser *p, const TagSet **tags) {
    switch (p->state) {
    case H_CONTENT:
        *tags = with_calls(p) ? &CONTENT_SET : &PLAIN_CONTENT_SET;
        return FAST_CONTENT;
    case H_REASON:
        *tags = &REASON_SET;
        return FAST_REASONING;
    case H_CALL: return json_args_fast(p);
    default: return FAST_NONE;
    }
}

void hermes_init(Parser *p) {
    p->step = hermes_step;
    p->finish = hermes_finish;
    p->fast = hermes_fast;
    p->state = p->reasoning_mode == REASONING_OPEN ? H_REASON
             : p->reasoning_mode == REASONING_CLOSED ? H_CONTENT
             : H_PRE;
}
