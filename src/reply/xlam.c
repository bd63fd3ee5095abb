/* xlam.c — Salesforce xLAM tool calls: a JSON list of
 * {"name": "f", "arguments": {...}} objects with no marker before it, also
 * inside a ```json fence or <tool_call>...</tool_call> or after
 * [TOOL_CALLS], after reasoning in <think>...</think>; a model's "id" is
 * kept. A '[' that does not go on as such a list is text. */
#include <string.h>
#include "families.h"

enum { X_PRE, X_THINK, X_TEXT, X_FENCE, X_OPEN, X_LIST, X_CLOSE, X_BRACKET };
static const char TOOL_CALLS[] = "TOOL_CALLS]";   /* after '[': Mistral's marker, then the list */
enum { W_NONE, W_FENCE, W_TAG };   /* fam_mode: what wraps the list */

static const char *const PRE_MARKS[] = {"<think>"};
static const TagSet PRE_SET = {PRE_MARKS, 1};
static const char *const THINK_TAGS[] = {"</think>"};
static const TagSet THINK_SET = {THINK_TAGS, 1};
static const char *const TEXT_MARKS[] = {"[", "```", "<tool_call>"};
static const TagSet TEXT_SET = {TEXT_MARKS, 3};
static const TagSet TEXT_TAGS = {TEXT_MARKS, 3};   /* (the fast path's view) */
static const char *const FENCE_END[] = {"```"};
static const TagSet FENCE_END_SET = {FENCE_END, 1};
static const char *const TAG_END[] = {"</tool_call>"};
static const TagSet TAG_END_SET = {TAG_END, 1};

static void xlam_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        int r;
        unsigned char c = (unsigned char)s[i];
        switch (p->state) {
        case X_PRE:
            if (scan_lead(p, s, n, &i, &PRE_SET, X_TEXT) == 0) p->state = X_THINK;
            break;
        case X_THINK:
            if (scan_text(p, s, n, &i, &THINK_SET, put_reasoning) >= 0) p->state = X_TEXT;
            break;
        case X_TEXT:
            r = scan_text(p, s, n, &i, &TEXT_SET, put_content);
            if (r < 0) break;
            p->call.raw.len = 0;
            call_raw(p, TEXT_MARKS[r], strlen(TEXT_MARKS[r]));
            if (r == 0) {
                p->fam_mode = W_NONE;
                p->nargs = 0;   /* bytes of TOOL_CALLS matched */
                p->state = X_BRACKET;
            } else {
                p->fam_mode = r == 1 ? W_FENCE : W_TAG;
                p->nargs = 0;   /* bytes of the fence's "json" */
                p->state = r == 1 ? X_FENCE : X_OPEN;
            }
            break;
        case X_FENCE:   /* the fence's language: none or json */
            if (p->nargs < 4 && c == (unsigned char)"json"[p->nargs]) {
                call_raw(p, s + i, 1);
                i++;
                p->nargs++;
            } else if (p->nargs == 0 || p->nargs == 4) {
                p->state = X_OPEN;
            } else {
                call_break(p, X_TEXT, NULL, 0);
            }
            break;
        case X_OPEN:   /* whitespace, then the list */
            if (is_space(c)) {
                call_raw(p, s + i, 1);
                i++;
            } else if (c == '[') {
                call_raw(p, s + i, 1);
                i++;
                jlist_begin(p, FAM_WANT_ID, p->fam_mode == W_NONE ? X_TEXT : X_CLOSE, X_TEXT);
                p->state = X_LIST;
            } else {
                call_break(p, X_TEXT, NULL, 0);
            }
            break;
        case X_BRACKET:   /* after '[': the list, or [TOOL_CALLS] */
            if (c == (unsigned char)TOOL_CALLS[p->nargs]) {
                call_raw(p, s + i, 1);
                i++;
                if (TOOL_CALLS[++p->nargs] == 0) p->state = X_OPEN;
            } else if (p->nargs) {
                call_break(p, X_TEXT, NULL, 0);
            } else {
                jlist_begin(p, FAM_WANT_ID, X_TEXT, X_TEXT);
                p->state = X_LIST;
            }
            break;
        case X_LIST:
            jlist_step(p, s, n, &i);
            break;
        default:   /* X_CLOSE: the calls are done; the fence or tag may close */
            r = expect_marks(p, s, n, &i, p->fam_mode == W_FENCE ? &FENCE_END_SET : &TAG_END_SET);
            if (r == 0) {
                p->call.raw.len = 0;
                p->state = X_TEXT;
            } else if (r == -2) {
                marks_accept(p, X_TEXT);
            }
        }
    }
}

static void xlam_finish(Parser *p) {
    switch (p->state) {
    case X_PRE:
    case X_TEXT: flush_tag_prefix(p, put_content); break;
    case X_THINK: flush_tag_prefix(p, put_reasoning); break;
    case X_CLOSE: call_accept_eof(p); break;
    default: call_break_eof(p, X_TEXT);
    }
}

static int xlam_fast(const Parser *p, const TagSet **tags) {
    switch (p->state) {
    case X_THINK:
        *tags = &THINK_SET;
        return FAST_REASONING;
    case X_TEXT:
        *tags = &TEXT_TAGS;
        return FAST_CONTENT;
    case X_LIST: return jcall_fast(p);
    default: return FAST_NONE;
    }
}

void xlam_init(Parser *p) {
    p->step = xlam_step;
    p->finish = xlam_finish;
    p->fast = xlam_fast;
    p->state = p->reasoning_mode == REASONING_OPEN ? X_THINK
             : p->reasoning_mode == REASONING_CLOSED ? X_TEXT
             : X_PRE;
}
