/* answer.c — a reply to a response_format request (cf_reply_options.
 * json_response): its content is the JSON answer, and a Markdown code fence
 * the model put around it (```json ... ```, as chat models are trained to
 * show JSON) is the answer's wrapping, not part of it. The fence's opening
 * line, at the start of the content, and its closing ``` line, at the end,
 * are dropped; anything else (text before the fence, a fence that never
 * closes its line) stays content as written.
 *
 * Content passes through here byte by byte while a fence is possible; the
 * bytes that may still be one are held (at most ANSWER_HOLD), and nothing
 * depends on how the reply was chunked, so a stream equals the whole parse. */
#include <string.h>
#include "reply.h"

/* Where a held opening line stands: 1 a whole opener ("```", an optional
 * language json (any case), optional spaces, a line break), 0 a prefix of
 * one, -1 none. */
static int opener_state(const char *s, size_t n) {
    static const char lang[] = "json";
    size_t i = 0;
    for (; i < n && i < 3; i++)
        if (s[i] != '`') return -1;
    size_t letters = 0;
    while (i < n && ((s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z')) {
        if (letters >= 4 || (s[i] | 0x20) != lang[letters]) return -1;
        letters++, i++;
    }
    if (i < n && letters && letters < 4) return -1;   /* a language that is not json */
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) i++;
    if (i == n) return 0;
    return s[i] == '\n' && i + 1 == n ? 1 : -1;
}

static void let_out(Parser *p) {
    content_send(p, p->answer_hold, p->answer_len);
    p->answer_line_start = p->answer_hold[p->answer_len - 1] == '\n';
    p->answer_len = 0;
}

static void hold(Parser *p, char c) {
    if (p->answer_len >= sizeof p->answer_hold) let_out(p);   /* (opener_state refuses first) */
    p->answer_hold[p->answer_len++] = c;
}

void answer_put(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n && p->answer != ANSWER_OFF) {
        char c = s[i];
        if (p->answer == ANSWER_LEAD) {
            if (!p->answer_len && is_space((unsigned char)c)) {   /* before the content: layout */
                content_send(p, s + i++, 1);
                continue;
            }
            hold(p, c);
            i++;
            int st = opener_state(p->answer_hold, p->answer_len);
            if (st > 0) {                  /* the fence opens: its line is dropped */
                p->answer_len = 0;
                p->answer = ANSWER_FENCED;
                p->answer_line_start = true;
            } else if (st < 0) {           /* no fence: the content is as written */
                let_out(p);
                p->answer = ANSWER_OFF;
            }
            continue;
        }
        /* ANSWER_FENCED: a line of ``` and whitespace may be the closer */
        if (p->answer_len) {
            bool ticks = p->answer_len < 3;
            if (ticks ? c == '`' : is_space((unsigned char)c)) {
                hold(p, c);
                i++;
                continue;
            }
            let_out(p);                    /* more text: it was content */
        }
        if (p->answer_line_start && c == '`') {
            hold(p, c);
            i++;
            continue;
        }
        size_t k = i;                      /* a run up to the next line start */
        while (k < n && s[k] != '\n') k++;
        if (k < n) k++;
        p->answer_line_start = s[k - 1] == '\n';
        content_send(p, s + i, k - i);
        i = k;
    }
    if (i < n) content_send(p, s + i, n - i);
}

void answer_flush(Parser *p) {
    if (p->answer_len) let_out(p);
}

void answer_end(Parser *p) {
    if (p->answer == ANSWER_FENCED && p->answer_len >= 3) p->answer_len = 0;   /* the closing fence */
    answer_flush(p);
    p->answer = ANSWER_OFF;
}
