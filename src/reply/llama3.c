/* llama3.c — Llama 3.1-3.3 / 4 JSON tool calls (also Nemotron-70B):
 *   {"name": "f", "parameters": {...}}          (or "arguments"; "type": "function" may lead)
 * with no marker before it, anywhere in the reply, several joined by ';'
 * or written back to back; optionally after <|python_tag|>, which also
 * introduces Llama 3.1's built-in tools: <|python_tag|>brave_search.call(query="x").
 * A '{' that does not go on as such an object (both a name and arguments)
 * is text. Llama 4's <|python_start|>/<|python_end|> wrappers and the
 * end-of-turn tokens are markup. */
#include <string.h>
#include "families.h"

enum { L_TEXT, L_CALL, L_SEP, L_TAG, L_BUILTIN };

static const char *const TEXT_MARKS[] = {"{", "<|python_tag|>", "<|python_start|>", "<|python_end|>",
                                         "<|eot|>", "<|eot_id|>", "<|eom_id|>"};
static const TagSet TEXT_SET = {TEXT_MARKS, 7};
static const TagSet TEXT_TAGS = {TEXT_MARKS, 7};   /* (the fast path's view) */
enum { M_BRACE, M_TAG };

static void start_call(Parser *p, bool keep_raw) {
    jcall_begin(p, NULL, keep_raw, FAM_NEED_ARGS, L_SEP, L_TEXT);
    p->state = L_CALL;
}

static bool ident_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static void llama3_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        switch (p->state) {
        case L_TEXT: {
            int r = scan_text(p, s, n, &i, &TEXT_SET, put_content);
            if (r == M_BRACE) {
                start_call(p, false);
                jcall_step(p, "{", 1);   /* the '{' was the marker */
            } else if (r == M_TAG) {
                p->call.raw.len = 0;
                call_raw(p, TEXT_MARKS[r], strlen(TEXT_MARKS[r]));
                p->state = L_TAG;
            }
            break;
        }
        case L_CALL:
            i += jcall_step(p, s + i, n - i);
            break;
        case L_SEP:   /* after a call: whitespace, maybe ';', maybe the next call */
            if (is_space(c)) {
                if (p->call.raw.len) call_raw(p, s + i, 1);
                else put_content(p, s + i, 1);
                i++;
            } else if (c == ';' && !p->call.raw.len) {
                call_raw(p, s + i, 1);
                i++;
            } else if (c == '{') {
                start_call(p, true);
            } else {
                call_break(p, L_TEXT, NULL, 0);
            }
            break;
        case L_TAG:   /* after <|python_tag|>: JSON calls or a built-in tool */
            if (is_space(c)) {
                call_raw(p, s + i, 1);
                i++;
            } else if (c == '{') {
                start_call(p, true);
            } else if (ident_start(c)) {
                pycall_begin(p, NULL, true, true);
                p->state = L_BUILTIN;
            } else {
                call_break(p, L_TEXT, NULL, 0);   /* code or text: content */
            }
            break;
        default:   /* L_BUILTIN */
            if (pycall_step(p, s, n, &i, L_TEXT) > 0) p->state = L_SEP;
        }
    }
}

static void llama3_finish(Parser *p) {
    switch (p->state) {
    case L_TEXT: flush_tag_prefix(p, put_content); break;
    default: call_break_eof(p, L_TEXT);
    }
}

static int llama3_fast(const Parser *p, const TagSet **tags) {
    if (p->state == L_TEXT) {
        *tags = &TEXT_TAGS;
        return FAST_CONTENT;
    }
    if (p->state == L_BUILTIN) return pycall_fast(p);
    return p->state == L_CALL ? jcall_fast(p) : FAST_NONE;
}

void llama3_init(Parser *p) {
    p->step = llama3_step;
    p->finish = llama3_finish;
    p->fast = llama3_fast;
    p->state = L_TEXT;
}
