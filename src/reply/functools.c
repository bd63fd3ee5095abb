/* functools.c — FireFunction v2 and Phi-4-mini tool calls:
 *   CONTENT functools[{"name": "f", "arguments": {...}}, ...]
 * (FireFunction writes a space before "functools"; it is trimmed with the
 * content): the marker starts the reply or follows whitespace, else it is
 * text. Text after the list is content. Phi-4-mini's template writes
 * past calls without the marker, {"name": ..., "arguments": ...} joined by
 * ',': such bare objects are calls too when complete and well-formed (a
 * '{' that does not go on as one is text). */
#include <string.h>
#include "families.h"

enum { T_TEXT, T_LIST, T_CALL, T_SEP };
static const char *const TEXT_MARKS[] = {"functools[", "{"};
static const TagSet TEXT_SET = {TEXT_MARKS, 2};
static const TagSet TEXT_TAGS = {TEXT_MARKS, 2};   /* (the fast path's view) */

static void bare_call(Parser *p, bool keep_raw) {
    jcall_begin(p, NULL, keep_raw, FAM_NEED_ARGS, T_SEP, T_TEXT);
    p->state = T_CALL;
}

static void functools_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        switch (p->state) {
        case T_TEXT: {
            int r = scan_text(p, s, n, &i, &TEXT_SET, put_content);
            if (r == 0 && p->content.started && !p->content.ws.len) {   /* "functools[" ends a word: text */
                put_content(p, TEXT_MARKS[0], strlen(TEXT_MARKS[0]));
            } else if (r == 0) {
                p->call.raw.len = 0;
                call_raw(p, TEXT_MARKS[0], strlen(TEXT_MARKS[0]));
                jlist_begin(p, 0, T_TEXT, T_TEXT);
                p->state = T_LIST;
            } else if (r == 1) {
                bare_call(p, false);
                jcall_step(p, "{", 1);   /* the '{' was the marker */
            }
            break;
        }
        case T_LIST:
            jlist_step(p, s, n, &i);
            break;
        case T_CALL:
            i += jcall_step(p, s + i, n - i);
            break;
        default:   /* T_SEP: after a bare call: whitespace, maybe ',', maybe the next one */
            if (is_space(c)) {
                if (p->call.raw.len) call_raw(p, s + i, 1);
                else put_content(p, s + i, 1);
                i++;
            } else if (c == ',' && !p->call.raw.len) {
                call_raw(p, s + i, 1);
                i++;
            } else if (c == '{') {
                bare_call(p, true);
            } else {
                call_break(p, T_TEXT, NULL, 0);
            }
        }
    }
}

static void functools_finish(Parser *p) {
    if (p->state == T_TEXT) flush_tag_prefix(p, put_content);
    else call_break_eof(p, T_TEXT);
}

static int functools_fast(const Parser *p, const TagSet **tags) {
    if (p->state == T_TEXT) {
        *tags = &TEXT_TAGS;
        return FAST_CONTENT;
    }
    return p->state == T_LIST || p->state == T_CALL ? jcall_fast(p) : FAST_NONE;
}

void functools_init(Parser *p) {
    p->step = functools_step;
    p->finish = functools_finish;
    p->fast = functools_fast;
    p->state = T_TEXT;
}
