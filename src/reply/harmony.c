/* harmony.c — OpenAI Harmony replies (gpt-oss): a sequence of messages
 *   [<|start|>assistant][ to=R]<|channel|>CHANNEL[ to=R][ <|constrain|>json| json]<|message|>BODY
 * each ending in <|end|>, <|call|> or <|return|> (or where the next
 * <|start|> begins). The analysis channel is reasoning; final and
 * commentary are content; a message to functions.NAME (the recipient in
 * the role header or after the channel) is a tool call whose body is the
 * JSON arguments. A message to another recipient (python, browser.*,
 * container.*) is a built-in tool the host runs itself: its body is kept
 * as content, as nothing the model wrote may be lost. The reply usually
 * begins inside the header the prompt opened (`<|start|>assistant`). */
#include <string.h>
#include "families.h"

enum { HM_LEAD, HM_HEADER, HM_TEXT, HM_ARGS, HM_POST };

static const char *const LEAD_MARKS[] = {"<|start|>", "<|channel|>", "to=", "<|message|>", "<|constrain|>"};
static const MarkSet LEAD_SET = {LEAD_MARKS, 5, "<t"};
static const char *const HEADER_TAGS[] = {"<|message|>"};
static const TagSet HEADER_SET = {HEADER_TAGS, 1};
static const char *const END_TAGS[] = {"<|end|>", "<|call|>", "<|return|>", "<|start|>"};
static const TagSet END_SET = {END_TAGS, 4};
enum { END_START = 3 };
enum { MAX_HEADER = 512 };   /* a longer "header" is text */

static void start_header(Parser *p, const char *marker) {
    p->call.raw.len = 0;
    p->text.len = 0;
    call_raw(p, marker, strlen(marker));
    sb_puts(&p->text, marker);
    p->state = HM_HEADER;
}

static void put_header(Parser *p, const char *s, size_t n) {
    sb_put(&p->text, s, n);
    call_raw(p, s, n);
}

static void put_field(Parser *p, const char *s, size_t n) {
    if (p->fam_mode == FIELD_REASONING) put_reasoning(p, s, n);
    else put_content(p, s, n);
}

/* The word after `key` in the header (up to whitespace or '<'), its last
 * occurrence for `last`, else the first one that is not "assistant". */
static bool header_word(const char *h, size_t n, const char *key, bool last, const char **w, size_t *wn) {
    size_t k = strlen(key);
    bool found = false;
    for (size_t i = 0; i + k <= n; i++) {
        if (memcmp(h + i, key, k) != 0) continue;
        size_t b = i + k, e = b;
        while (e < n && !is_space((unsigned char)h[e]) && h[e] != '<') e++;
        if (!last && e - b == 9 && memcmp(h + b, "assistant", 9) == 0) continue;
        *w = h + b;
        *wn = e - b;
        found = true;
        if (!last) break;
    }
    return found;
}

static void header_done(Parser *p) {
    const char *h = p->text.p, *chan = "", *to = "";
    size_t n = p->text.len, chan_n = 0, to_n = 0;
    header_word(h, n, "<|channel|>", true, &chan, &chan_n);
    header_word(h, n, "to=", false, &to, &to_n);
    if (to_n > 10 && memcmp(to, "functions.", 10) == 0 && to_n - 10 <= MAX_CALL_NAME) {
        jcall_begin(p, NULL, true, FAM_ARGS_ONLY, HM_POST, HM_LEAD);
        sb_put(&p->call.name, to + 10, to_n - 10);
        p->call.has_name = true;
        p->state = HM_ARGS;
        return;
    }
    p->call.raw.len = 0;
    p->fam_mode = chan_n == 8 && memcmp(chan, "analysis", 8) == 0 && !to_n ? FIELD_REASONING : FIELD_CONTENT;
    Chan *c = p->fam_mode == FIELD_REASONING ? &p->reasoning : &p->content;
    if (c->started) put_field(p, "\n\n", 2);   /* messages of one field: held, out only before text */
    p->state = HM_TEXT;
}

static void harmony_step(Parser *p, const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        int r;
        switch (p->state) {
        case HM_LEAD:
            r = lead_marks(p, s, n, &i, &LEAD_SET, HM_TEXT);
            if (r >= 0) start_header(p, LEAD_MARKS[r]);
            else if (p->state == HM_TEXT) p->fam_mode = FIELD_CONTENT;
            break;
        case HM_HEADER:
            r = scan_text(p, s, n, &i, &HEADER_SET, put_header);
            if (r >= 0) {
                call_raw(p, HEADER_TAGS[0], strlen(HEADER_TAGS[0]));
                header_done(p);
            } else if (p->text.len > MAX_HEADER) {
                call_break(p, HM_TEXT, NULL, 0);
                p->fam_mode = FIELD_CONTENT;
            }
            break;
        case HM_TEXT:
            r = scan_text(p, s, n, &i, &END_SET, put_field);
            if (r == END_START) start_header(p, END_TAGS[END_START]);
            else if (r >= 0) p->state = HM_LEAD;
            break;
        case HM_ARGS:
            i += jcall_step(p, s + i, n - i);
            break;
        default:   /* HM_POST: the arguments are complete; the end token may follow */
            r = expect_tag(p, s, n, &i, &END_SET, HM_LEAD, true);
            if (r == END_START) start_header(p, END_TAGS[END_START]);
            else if (r >= 0) p->state = HM_LEAD;
        }
    }
}

static void harmony_finish(Parser *p) {
    switch (p->state) {
    case HM_TEXT: flush_tag_prefix(p, put_field); break;
    case HM_HEADER:
    case HM_ARGS: call_break_eof(p, HM_TEXT); break;
    case HM_POST: call_accept_eof(p); break;
    default: flush_tag_prefix(p, put_content);
    }
}

static int harmony_fast(const Parser *p, const TagSet **tags) {
    switch (p->state) {
    case HM_TEXT:
        *tags = &END_SET;
        return p->fam_mode == FIELD_REASONING ? FAST_REASONING : FAST_CONTENT;
    case HM_ARGS: return jcall_fast(p);
    default: return FAST_NONE;
    }
}

void harmony_init(Parser *p) {
    p->step = harmony_step;
    p->finish = harmony_finish;
    p->fast = harmony_fast;
    p->state = p->reasoning_mode == REASONING_OPEN ? HM_TEXT : HM_LEAD;
    p->fam_mode = p->reasoning_mode == REASONING_OPEN ? FIELD_REASONING : FIELD_CONTENT;
}
