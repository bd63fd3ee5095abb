/* mistral.c — Mistral tool calls and reasoning, every tokenizer version:
 *   v3 (7B v0.3, Nemo, Large 2407):  [TOOL_CALLS][{"name": "f", "arguments": {...}, "id": "a1b2c3d4e"}, ...]
 *   v11 (Small 3.2, Devstral 2507):   [TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{...}
 *   v13 (Magistral, Ministral 3, Devstral 2): [TOOL_CALLS]f[ARGS]{...}[TOOL_CALLS]g[ARGS]{...}
 *   and f{...} right after [TOOL_CALLS] (no [ARGS]), as some models write;
 * reasoning first in [THINK]...[/THINK] (a [TOOL_CALLS] inside it is text).
 * The model's ids are kept. The arguments end where their JSON object does. */
#include <string.h>
#include "families.h"

enum { M_PRE, M_THINK, M_TEXT, M_CALLS, M_NAME, M_NAME_MARK, M_ID, M_ID_MARK, M_ARGS, M_LIST };

static const char *const PRE_MARKS[] = {"[THINK]", "[TOOL_CALLS]"};
static const TagSet PRE_SET = {PRE_MARKS, 2};
static const TagSet TEXT_SET = {PRE_MARKS + 1, 1};
static const char *const THINK_END[] = {"[/THINK]"};
static const TagSet THINK_SET = {THINK_END, 1};
static const TagSet TEXT_TAGS = {PRE_MARKS + 1, 1}, THINK_TAGS = {THINK_END, 1};   /* (the fast path's view) */
static const char *const NAME_MARKS[] = {"[ARGS]", "[CALL_ID]"};
static const TagSet NAME_SET = {NAME_MARKS, 2};
static const TagSet ARGS_SET = {NAME_MARKS, 1};
enum { MAX_ID = 64 };

static bool id_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static void calls_begin(Parser *p) {
    p->call.raw.len = 0;
    call_raw(p, PRE_MARKS[1], strlen(PRE_MARKS[1]));
    p->state = M_CALLS;
}

static void args_begin(Parser *p) {
    jcall_args(p, M_TEXT, M_TEXT);
    p->state = M_ARGS;
}

static void mistral_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        int r;
        unsigned char c = (unsigned char)s[i];
        switch (p->state) {
        case M_PRE:
            r = scan_lead(p, s, n, &i, &PRE_SET, M_TEXT);
            if (r == 0) p->state = M_THINK;
            else if (r == 1) calls_begin(p);
            break;
        case M_THINK:
            if (scan_text(p, s, n, &i, &THINK_SET, put_reasoning) >= 0) p->state = M_TEXT;
            break;
        case M_TEXT:
            if (scan_text(p, s, n, &i, &TEXT_SET, put_content) >= 0) calls_begin(p);
            break;
        case M_CALLS:   /* after [TOOL_CALLS]: a JSON list, or a name */
            if (is_space(c)) {
                call_raw(p, s + i, 1);
                i++;
            } else if (c == '[') {
                call_raw(p, s + i, 1);
                i++;
                jlist_begin(p, FAM_WANT_ID, M_TEXT, M_TEXT);
                p->state = M_LIST;
            } else if (c == '{') {
                jcall_begin(p, NULL, true, FAM_WANT_ID, M_TEXT, M_TEXT);
                p->state = M_ARGS;
            } else if (is_name_byte(c) && c != ':') {
                call_begin(p, NULL, true, false);
                p->state = M_NAME;
            } else {
                call_break(p, M_TEXT, NULL, 0);
            }
            break;
        case M_NAME: {
            Call *call = &p->call;
            size_t k = i;
            while (k < n && k - i < MAX_CALL_NAME - call->name.len && is_name_byte((unsigned char)s[k])) k++;
            if (k > i) {
                sb_put(&call->name, s + i, k - i);
                call_raw(p, s + i, k - i);
                i = k;
                break;
            }
            call->has_name = true;
            if (c == '{') args_begin(p);
            else if (c == '[') p->state = M_NAME_MARK;
            else call_break(p, M_TEXT, NULL, 0);
            break;
        }
        case M_NAME_MARK:
        case M_ID_MARK:
            r = expect_marks(p, s, n, &i, p->state == M_NAME_MARK ? &NAME_SET : &ARGS_SET);
            if (r == 0) {
                call_raw(p, NAME_MARKS[0], strlen(NAME_MARKS[0]));
                args_begin(p);
            } else if (r == 1) {
                call_raw(p, NAME_MARKS[1], strlen(NAME_MARKS[1]));
                p->state = M_ID;
            } else if (r == -2) {
                marks_break(p, M_TEXT);
            }
            break;
        case M_ID: {
            Call *call = &p->call;
            size_t k = i;
            while (k < n && k - i < MAX_ID - call->id.len && id_byte((unsigned char)s[k])) k++;
            if (k > i) {
                sb_put(&call->id, s + i, k - i);
                call_raw(p, s + i, k - i);
                i = k;
                break;
            }
            if (c != '[' || !call->id.len) {
                call_break(p, M_TEXT, NULL, 0);
                break;
            }
            call->has_id = true;
            p->state = M_ID_MARK;
            break;
        }
        case M_ARGS:
            i += jcall_step(p, s + i, n - i);
            break;
        default:   /* M_LIST */
            jlist_step(p, s, n, &i);
        }
    }
}

static void mistral_finish(Parser *p) {
    switch (p->state) {
    case M_PRE:
    case M_TEXT: flush_tag_prefix(p, put_content); break;
    case M_THINK: flush_tag_prefix(p, put_reasoning); break;
    default: call_break_eof(p, M_TEXT);
    }
}

static int mistral_fast(const Parser *p, const TagSet **tags) {
    if (p->state == M_TEXT || p->state == M_THINK) {
        *tags = p->state == M_TEXT ? &TEXT_TAGS : &THINK_TAGS;
        return p->state == M_TEXT ? FAST_CONTENT : FAST_REASONING;
    }
    return p->state == M_ARGS || p->state == M_LIST ? jcall_fast(p) : FAST_NONE;
}

void mistral_init(Parser *p) {
    p->step = mistral_step;
    p->finish = mistral_finish;
    p->fast = mistral_fast;
    p->state = p->reasoning_mode == REASONING_OPEN ? M_THINK
             : p->reasoning_mode == REASONING_CLOSED ? M_TEXT
             : M_PRE;
}
