/* functools.c — FireFunction v2 and Phi-4-mini tool calls:
 *   CONTENT functools[{"name": "f", "arguments": {...}}, ...]
 * (FireFunction writes a space before "functools"; it is trimmed with the
 * content). Text after the list is content. */
#include <string.h>
#include "families.h"

enum { T_TEXT, T_LIST };
static const char *const TEXT_MARKS[] = {"functools["};
static const MarkSet TEXT_SET = {TEXT_MARKS, 1, "f"};

static void functools_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (p->state == T_TEXT) {
            if (scan_marks(p, s, n, &i, &TEXT_SET, put_content) >= 0) {
                p->call.raw.len = 0;
                call_raw(p, TEXT_MARKS[0], strlen(TEXT_MARKS[0]));
                jlist_begin(p, 0, T_TEXT, T_TEXT);
                p->state = T_LIST;
            }
        } else {
            jlist_step(p, s, n, &i);
        }
    }
}

static void functools_finish(Parser *p) {
    if (p->state == T_TEXT) flush_tag_prefix(p, put_content);
    else call_break_eof(p, T_TEXT);
}

static int functools_fast(const Parser *p, const TagSet **tags) {
    return p->state == T_LIST ? jcall_fast(p) : FAST_NONE;
}

void functools_init(Parser *p) {
    p->step = functools_step;
    p->finish = functools_finish;
    p->fast = functools_fast;
    p->state = T_TEXT;
}
