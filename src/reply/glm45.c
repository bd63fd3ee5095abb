/* glm45.c — GLM-4.5/4.6 replies:
 *   [<think>REASONING</think>] CONTENT
 *   <tool_call>NAME
 *   <arg_key>K</arg_key>
 *   <arg_value>V</arg_value>
 *   ...</tool_call>
 * The template writes string values raw and everything else as JSON, so
 * values carry no type: the tool's JSON schema decides. A value whose schema
 * allows a string is that string; any other value is JSON when it parses,
 * else the raw string. The arguments object is built as Python's
 * json.dumps(args, ensure_ascii=False) writes it. In a stream the key goes
 * out when </arg_key> arrives, string values stream as they arrive, other
 * values wait for their </arg_value>. */
#include <string.h>
#include "reply.h"

enum { G_PRE, G_REASON, G_CONTENT, G_NAME, G_ARGS, G_KEY, G_MID, G_VAL };

/* a leading </think> closes reasoning the prompt opened (GLM-4.7/5 history drops it) */
static const char *const PRE_TAGS[] = {"<think>", "<tool_call>", "</think>"};
static const char *const REASON_TAGS[] = {"</think>"};
static const char *const ARGS_TAGS[] = {"<arg_key>", "</tool_call>"};
static const char *const KEY_TAGS[] = {"</arg_key>"};
static const char *const MID_TAGS[] = {"<arg_value>"};
static const char *const VAL_TAGS[] = {"</arg_value>"};
static const TagSet PRE_SET = {PRE_TAGS, 3}, CONTENT_SET = {PRE_TAGS + 1, 1};
static const TagSet REASON_SET = {REASON_TAGS, 1}, ARGS_SET = {ARGS_TAGS, 2};
static const TagSet KEY_SET = {KEY_TAGS, 1}, MID_SET = {MID_TAGS, 1}, VAL_SET = {VAL_TAGS, 1};

/* ---- the call ---- */

static bool is_name_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.' || c == ':' || c >= 0x80;
}

static void start_call(Parser *p) {
    call_begin(p, "<tool_call>", false, false);
    p->nargs = 0;
    p->props = v_none();
    p->state = G_NAME;
}

static void name_done(Parser *p) {
    p->call.has_name = true;
    p->props = tool_properties(p, p->call.name.p, p->call.name.len);
    p->state = G_ARGS;
    call_try_commit(p);
}

static void step_name(Parser *p, const char *s, size_t n, size_t *pi) {
    size_t i = *pi, k = i, room = MAX_CALL_NAME - p->call.name.len;
    while (k < n && k - i < room && is_name_byte((unsigned char)s[k])) k++;
    if (k > i) {
        sb_put(&p->call.name, s + i, k - i);
        call_raw(p, s + i, k - i);
        *pi = k;
        return;
    }
    unsigned char c = (unsigned char)s[i];
    bool named = p->call.name.len > 0;
    if (is_space(c) && !named) {            /* "<tool_call>\nname" */
        call_raw(p, s + i, 1);
        *pi = i + 1;
    } else if ((is_space(c) || c == '<') && named) {
        if (c != '<') {
            call_raw(p, s + i, 1);
            *pi = i + 1;
        }
        name_done(p);
    } else {
        call_break(p, G_CONTENT, NULL, 0);
    }
}

static void trim(const char **s, size_t *n) {
    while (*n && is_space((unsigned char)**s)) (*s)++, (*n)--;
    while (*n && is_space((unsigned char)(*s)[*n - 1])) (*n)--;
}

static void put_key(Parser *p, const char *s, size_t n) {
    sb_put(&p->text, s, n);
    call_raw(p, s, n);
}

/* `{"key": ` or `, "key": ` goes out at once; the value's type follows from
 * the key's schema. */
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

static void put_value(Parser *p, const char *s, size_t n) {
    if (!p->string_value) {      /* held until </arg_value> */
        sb_put(&p->text, s, n);
        call_raw(p, s, n);
        return;
    }
    p->esc.len = 0;
    json_escape_into(&p->esc, s, n);
    call_args(p, p->esc.p, p->esc.len);
    if (p->call.committed) call_represented(p);
    else call_raw(p, s, n);
}

static void value_done(Parser *p) {
    if (p->string_value) {
        call_args(p, "\"", 1);
    } else {
        const char *v = p->text.p;
        size_t n = p->text.len;
        if (js_valid(p, v, n)) {
            while (is_json_space((unsigned char)*v)) v++, n--;
            while (is_json_space((unsigned char)v[n - 1])) n--;
            call_args(p, v, n);
        } else {
            p->esc.len = 0;
            sb_putc(&p->esc, '"');
            json_escape_into(&p->esc, p->text.p, p->text.len);
            sb_putc(&p->esc, '"');
            call_args(p, p->esc.p, p->esc.len);
        }
    }
    call_represented(p);
}

static void glm45_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        int r;
        switch (p->state) {
        case G_PRE:
            r = scan_lead(p, s, n, &i, &PRE_SET, G_CONTENT);
            if (r == 0) p->state = G_REASON;
            else if (r == 1) start_call(p);
            else if (r == 2) p->state = G_CONTENT;
            break;
        case G_REASON:
            if (scan_text(p, s, n, &i, &REASON_SET, put_reasoning) >= 0) p->state = G_CONTENT;
            break;
        case G_CONTENT:
            if (scan_text(p, s, n, &i, &CONTENT_SET, put_content) >= 0) start_call(p);
            break;
        case G_NAME:
            step_name(p, s, n, &i);
            break;
        case G_ARGS:
            r = expect_tag(p, s, n, &i, &ARGS_SET, G_CONTENT, false);
            if (r == 0) {
                call_raw(p, ARGS_TAGS[0], strlen(ARGS_TAGS[0]));
                p->text.len = 0;
                p->state = G_KEY;
            } else if (r == 1) {
                call_args(p, p->nargs ? "}" : "{}", p->nargs ? 1 : 2);
                call_end(p);
                p->state = G_CONTENT;
            }
            break;
        case G_KEY:
            if (scan_text(p, s, n, &i, &KEY_SET, put_key) >= 0) {
                call_raw(p, KEY_TAGS[0], strlen(KEY_TAGS[0]));
                key_done(p);
                p->state = G_MID;
            }
            break;
        case G_MID:
            if (expect_tag(p, s, n, &i, &MID_SET, G_CONTENT, false) == 0) {
                call_raw(p, MID_TAGS[0], strlen(MID_TAGS[0]));
                p->text.len = 0;
                if (p->string_value) {
                    call_args(p, "\"", 1);
                    call_represented(p);
                }
                p->state = G_VAL;
            }
            break;
        default:    /* G_VAL */
            if (scan_text(p, s, n, &i, &VAL_SET, put_value) >= 0) {
                call_raw(p, VAL_TAGS[0], strlen(VAL_TAGS[0]));
                value_done(p);
                p->state = G_ARGS;
            }
        }
    }
}

static void glm45_finish(Parser *p) {
    switch (p->state) {
    case G_PRE:
    case G_CONTENT: flush_tag_prefix(p, put_content); break;
    case G_REASON: flush_tag_prefix(p, put_reasoning); break;
    default: call_break_eof(p, G_CONTENT);
    }
}

static int glm45_fast(const Parser *p, const TagSet **tags) {
    switch (p->state) {
    case G_CONTENT:
        *tags = &CONTENT_SET;
        return FAST_CONTENT;
    case G_REASON:
        *tags = &REASON_SET;
        return FAST_REASONING;
    case G_VAL:
        *tags = &VAL_SET;
        if (!p->string_value) return FAST_HELD;
        return p->call.committed ? FAST_GLM_ARGS : FAST_NONE;
    case G_KEY:
        *tags = &KEY_SET;
        return FAST_HELD;
    case G_ARGS:
        *tags = &ARGS_SET;
        return FAST_TAG;
    case G_MID:
        *tags = &MID_SET;
        return FAST_TAG;
    case G_NAME: return FAST_NAME;
    default: return FAST_NONE;
    }
}

void glm45_init(Parser *p) {
    p->step = glm45_step;
    p->finish = glm45_finish;
    p->fast = glm45_fast;
    p->state = p->reasoning_mode == REASONING_OPEN ? G_REASON
             : p->reasoning_mode == REASONING_CLOSED ? G_CONTENT
             : G_PRE;
}
