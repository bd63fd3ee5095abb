/* functionary.c — MeetKai Functionary replies.
 * v3.1 (Llama 3.1 based): CONTENT <function=NAME>{...}</function> ..., and
 *   <|python_tag|>CODE: a call of the python tool, {"code": CODE}.
 * v3.2: every turn starts with a recipient line after ">>>" (the prompt
 *   writes the first ">>>"): `all\nTEXT` is content, `NAME\n{...}` a call,
 *   `python\nCODE` a python call; turns follow each other: >>>NAME\n{...}.
 * Code goes out as it comes, escaped into {"code": "..."}. */
#include <string.h>
#include "families.h"

static void put_code(Parser *p, const char *s, size_t n) {
    p->esc.len = 0;
    json_escape_into(&p->esc, s, n);
    call_args(p, p->esc.p, p->esc.len);
    call_represented(p);
}

/* A python call whose code follows. */
static void code_begin(Parser *p, bool keep_raw) {
    call_begin(p, NULL, keep_raw, false);
    p->call.name.len = 0;
    sb_puts(&p->call.name, "python");
    p->call.has_name = true;
    call_try_commit(p);
    call_args(p, "{\"code\": \"", 10);
    call_represented(p);
}

static void code_end(Parser *p) {
    call_args(p, "\"}", 2);
    call_end(p);
}

/* Reads a call's name up to the byte `end`, which it consumes: 1 when the
 * name is complete, 0 when the chunk ends first, -1 when the name is broken
 * (empty, too long or another byte). */
static int call_name_until(Parser *p, const char *s, size_t n, size_t *pi, char end) {
    Call *c = &p->call;
    size_t i = *pi, k = i;
    while (k < n && k - i < MAX_CALL_NAME - c->name.len && is_name_byte((unsigned char)s[k])) k++;
    sb_put(&c->name, s + i, k - i);
    call_raw(p, s + i, k - i);
    *pi = k;
    if (k == n) return 0;
    if (s[k] != end || !c->name.len) return -1;
    call_raw(p, s + k, 1);
    *pi = k + 1;
    return 1;
}

/* ---- v3.1 ---- */

enum { F1_TEXT, F1_NAME, F1_ARGS, F1_POST, F1_CODE };
static const char *const F1_TEXT_TAGS[] = {"<function=", "<|python_tag|>"};
static const TagSet F1_TEXT_SET = {F1_TEXT_TAGS, 2};
static const char *const F1_POST_TAGS[] = {"</function>"};
static const TagSet F1_POST_SET = {F1_POST_TAGS, 1};
static const char *const CODE_END_TAGS[] = {"<|eom_id|>", "<|eot_id|>"};
static const TagSet CODE_END_SET = {CODE_END_TAGS, 2};

static void v31_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        int r;
        switch (p->state) {
        case F1_TEXT:
            r = scan_text(p, s, n, &i, &F1_TEXT_SET, put_content);
            if (r == 0) {
                call_begin(p, F1_TEXT_TAGS[0], false, false);
                p->state = F1_NAME;
            } else if (r == 1) {
                code_begin(p, false);
                p->state = F1_CODE;
            }
            break;
        case F1_NAME: {
            r = call_name_until(p, s, n, &i, '>');
            if (r == 0) break;
            if (r < 0) {
                call_break(p, F1_TEXT, NULL, 0);
                break;
            }
            p->call.has_name = true;
            jcall_args(p, F1_POST, F1_TEXT);
            p->state = F1_ARGS;
            break;
        }
        case F1_ARGS:
            i += jcall_step(p, s + i, n - i);
            break;
        case F1_POST:   /* the arguments are complete; </function> may follow */
            if (expect_tag(p, s, n, &i, &F1_POST_SET, F1_TEXT, true) >= 0) p->state = F1_TEXT;
            break;
        default:   /* F1_CODE: to the end of the turn */
            if (scan_text(p, s, n, &i, &CODE_END_SET, put_code) >= 0) {
                code_end(p);
                p->state = F1_TEXT;
            }
        }
    }
}

static void v31_finish(Parser *p) {
    switch (p->state) {
    case F1_TEXT: flush_tag_prefix(p, put_content); break;
    case F1_POST: call_accept_eof(p); break;
    case F1_CODE:
        flush_tag_prefix(p, put_code);
        code_end(p);
        break;
    default: call_break_eof(p, F1_TEXT);
    }
}

static int v31_fast(const Parser *p, const TagSet **tags) {
    switch (p->state) {
    case F1_TEXT:
        *tags = &F1_TEXT_SET;
        return FAST_CONTENT;
    case F1_ARGS: return jcall_fast(p);
    default: return FAST_NONE;
    }
}

void functionary_v31_init(Parser *p) {
    p->step = v31_step;
    p->finish = v31_finish;
    p->fast = v31_fast;
    p->state = F1_TEXT;
}

/* ---- v3.2 ---- */

enum { F2_LEAD, F2_RECIPIENT, F2_TEXT, F2_ARGS, F2_AFTER, F2_CODE };
static const char *const TURN_MARKS[] = {">>>"};
static const TagSet TURN_SET = {TURN_MARKS, 1};
static const TagSet TURN_TAGS = {TURN_MARKS, 1};   /* (the fast path's view) */

static void recipient_begin(Parser *p) {
    call_begin(p, NULL, false, false);
    p->state = F2_RECIPIENT;
}

/* The recipient line is complete (s[i] == '\n'). */
static void recipient_done(Parser *p) {
    Call *c = &p->call;
    if (c->name.len == 3 && memcmp(c->name.p, "all", 3) == 0) {
        c->active = false;
        c->raw.len = 0;
        p->state = F2_TEXT;
    } else if (c->name.len == 6 && memcmp(c->name.p, "python", 6) == 0) {
        code_begin(p, false);
        p->state = F2_CODE;
    } else {
        c->has_name = true;
        jcall_args(p, F2_AFTER, F2_TEXT);
        p->state = F2_ARGS;
    }
}

static void v32_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        switch (p->state) {
        case F2_LEAD: {   /* the reply may repeat the prompt's ">>>" */
            unsigned char c = (unsigned char)s[i];
            if (!p->tm_len && is_space(c)) {
                i++;
                break;
            }
            int r = tag_step(p, &TURN_SET, c);
            if (r == TAG_MORE) {
                i++;
            } else if (r == 0) {
                i++;
                recipient_begin(p);
            } else {
                char held[sizeof p->tm_buf];
                size_t k = p->tm_len;
                memcpy(held, p->tm_buf, k);
                p->tm_len = 0;
                recipient_begin(p);
                if (k) p->step(p, held, k);
            }
            break;
        }
        case F2_RECIPIENT: {
            int r = call_name_until(p, s, n, &i, '\n');
            if (r == 0) break;
            if (r < 0) {
                call_break(p, F2_TEXT, NULL, 0);
                break;
            }
            recipient_done(p);
            break;
        }
        case F2_TEXT:
            if (scan_text(p, s, n, &i, &TURN_SET, put_content) >= 0) recipient_begin(p);
            break;
        case F2_ARGS:
            i += jcall_step(p, s + i, n - i);
            break;
        case F2_AFTER: {   /* after the arguments: whitespace, then the next turn */
            int r = expect_marks(p, s, n, &i, &TURN_SET);
            if (r == 0) recipient_begin(p);
            else if (r == -2) marks_accept(p, F2_TEXT);
            break;
        }
        default:   /* F2_CODE */
            if (scan_text(p, s, n, &i, &TURN_SET, put_code) >= 0) {
                code_end(p);
                recipient_begin(p);
            }
        }
    }
}

static void v32_finish(Parser *p) {
    switch (p->state) {
    case F2_TEXT: flush_tag_prefix(p, put_content); break;
    case F2_AFTER: call_accept_eof(p); break;
    case F2_CODE:
        flush_tag_prefix(p, put_code);
        code_end(p);
        break;
    case F2_LEAD:
        flush_tag_prefix(p, put_content);
        break;
    default: call_break_eof(p, F2_TEXT);
    }
}

static int v32_fast(const Parser *p, const TagSet **tags) {
    if (p->state == F2_TEXT) {
        *tags = &TURN_TAGS;
        return FAST_CONTENT;
    }
    return p->state == F2_ARGS ? jcall_fast(p) : FAST_NONE;
}

void functionary_v32_init(Parser *p) {
    p->step = v32_step;
    p->finish = v32_finish;
    p->fast = v32_fast;
    p->state = F2_LEAD;
}
