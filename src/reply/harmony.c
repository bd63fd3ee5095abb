/* harmony.c — OpenAI Harmony replies (gpt-oss): a sequence of messages
 *   [<|start|>assistant][ to=R]<|channel|>CHANNEL[ to=R][ <|constrain|>json| json]<|message|>BODY
 * each ending in <|end|>, <|call|> or <|return|> (or where the next
 * <|start|> begins). The analysis channel is reasoning; final and
 * commentary are content; a message to functions.NAME (the recipient in
 * the role header or after the channel) is a tool call whose body is the
 * JSON arguments. A message to another recipient (python, browser.*,
 * container.*) is a built-in tool the host runs itself: it is kept as
 * content, header and all, as nothing the model wrote may be lost; so is a
 * header with anything else in it. The reply usually begins inside the
 * header the prompt opened (`<|start|>assistant`). */
#include <string.h>
#include "families.h"

enum { HM_LEAD, HM_HEADER, HM_TEXT, HM_ARGS, HM_POST };

static const char *const LEAD_MARKS[] = {"<|start|>", "<|channel|>", "to=", "<|message|>", "<|constrain|>"};
static const TagSet LEAD_SET = {LEAD_MARKS, 5};
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
    p->nargs = (uint32_t)strlen(marker);   /* header bytes read */
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

static bool word_is(const char *w, size_t n, const char *z) { return strlen(z) == n && memcmp(w, z, n) == 0; }

/* Read the header: its channel (the last one named) and recipient. False
 * when it holds anything else than the role, `to=R`, <|channel|> with a
 * known channel, <|constrain|> json (or code), and "json": then it is text. */
static bool parse_header(const char *h, size_t n, const char **chan, size_t *chan_n, const char **to,
                         size_t *to_n) {
    static const char *const tokens[] = {"<|start|>", "<|channel|>", "<|constrain|>"};
    int after = -1;   /* the token the next word belongs to */
    *chan_n = *to_n = 0;
    for (size_t i = 0; i < n;) {
        if (is_space((unsigned char)h[i])) {
            i++;
            continue;
        }
        int t = 0;
        while (t < 3 && !(n - i >= strlen(tokens[t]) && memcmp(h + i, tokens[t], strlen(tokens[t])) == 0)) t++;
        if (t < 3) {
            i += strlen(tokens[t]);
            after = t;
            continue;
        }
        size_t b = i;
        while (i < n && !is_space((unsigned char)h[i]) && h[i] != '<') i++;
        const char *w = h + b;
        size_t wn = i - b;
        if (!wn) return false;   /* an unknown <|token|> */
        if (after == 1) {
            if (!word_is(w, wn, "analysis") && !word_is(w, wn, "commentary") && !word_is(w, wn, "final"))
                return false;
            *chan = w, *chan_n = wn;
        } else if (wn > 3 && memcmp(w, "to=", 3) == 0) {
            if (!word_is(w + 3, wn - 3, "assistant")) *to = w + 3, *to_n = wn - 3;
        } else if (!word_is(w, wn, "json") && !(after == 2 && word_is(w, wn, "code")) &&
                   !(after != 2 && word_is(w, wn, "assistant"))) {
            return false;
        }
        after = -1;
    }
    return *chan_n > 0 || *to_n > 0;
}

static void header_done(Parser *p) {
    const char *chan = "", *to = "";
    size_t chan_n = 0, to_n = 0;
    bool ok = parse_header(p->text.p, p->text.len, &chan, &chan_n, &to, &to_n);
    if (ok && to_n > 10 && memcmp(to, "functions.", 10) == 0 && to_n - 10 <= MAX_CALL_NAME) {
        jcall_begin(p, NULL, true, FAM_ARGS_ONLY, HM_POST, HM_LEAD);
        sb_put(&p->call.name, to + 10, to_n - 10);
        p->call.has_name = true;
        p->state = HM_ARGS;
        return;
    }
    if (!ok || to_n) {   /* not a header, or a built-in tool's message: all of it is content */
        call_break(p, HM_TEXT, NULL, 0);
        p->fam_mode = FIELD_CONTENT;
        return;
    }
    p->call.raw.len = 0;
    p->fam_mode = word_is(chan, chan_n, "analysis") ? FIELD_REASONING : FIELD_CONTENT;
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
            r = scan_lead(p, s, n, &i, &LEAD_SET, HM_TEXT);
            if (r >= 0) start_header(p, LEAD_MARKS[r]);
            else if (p->state == HM_TEXT) p->fam_mode = FIELD_CONTENT;
            break;
        case HM_HEADER: {   /* at most MAX_HEADER bytes, whatever the chunks */
            size_t from = i, end = n - i > MAX_HEADER - p->nargs ? i + (MAX_HEADER - p->nargs) : n;
            r = scan_text(p, s, end, &i, &HEADER_SET, put_header);
            p->nargs += (uint32_t)(i - from);
            if (r >= 0) {
                call_raw(p, HEADER_TAGS[0], strlen(HEADER_TAGS[0]));
                header_done(p);
            } else if (p->nargs >= MAX_HEADER) {
                p->fam_mode = FIELD_CONTENT;
                marks_break(p, HM_TEXT);
            }
            break;
        }
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
