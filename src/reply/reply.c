/* reply.c — reading model replies back into OpenAI messages: the public
 * API, UTF-8 repair, trimmed text fields, the output (whole message or
 * stream deltas), tool-call transactions, markup tags and an incremental
 * JSON scanner. The formats themselves live in reply_<format>.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reply.h"
#include "format_desc.h"
#include "families.h"
#include "leaf_tables.h"
#include "engine/json.h"

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#else
#define NOINLINE
#define LIKELY(x) (x)
#endif

/* ---- formats ---- */

/* The formats written by hand in their own file (the described ones are
 * named in formats.c, the families in families.c). */
static const char *const FORMAT_NAMES[] = {[CF_REPLY_COMMAND_A] = "command-a"};
enum { HAND_WRITTEN = sizeof FORMAT_NAMES / sizeof FORMAT_NAMES[0] };

const char *cf_reply_format_name(cf_reply_format f) {
    const ReplyFormatDesc *d = reply_format_desc(f);
    if (d) return d->name;
    if (is_family(f)) return family_name(f);
    return (unsigned)f < HAND_WRITTEN && FORMAT_NAMES[f] ? FORMAT_NAMES[f] : "plain";
}

const char *cf_reply_format_example(cf_reply_format f) {
    static const char *const EXAMPLES[HAND_WRITTEN] = {
        [CF_REPLY_COMMAND_A] = "<|START_THINKING|>R<|END_THINKING|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"f\", \"parameters\": {...}}]<|END_ACTION|>",
    };
    const ReplyFormatDesc *d = reply_format_desc(f);
    if (d) return d->example;
    if ((unsigned)f < HAND_WRITTEN) return EXAMPLES[f];
    static const char *const FAMILY_EXAMPLES[FAMILY_COUNT] = {
        "<|channel|>analysis<|message|>R<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{...}<|call|>",
        "C {\"name\": \"f\", \"parameters\": {...}}; {\"name\": \"g\", \"parameters\": {...}}",
        "<think>R</think>C [f(a=1, b='x'), g()]",
        "[THINK]R[/THINK]C[TOOL_CALLS]f[ARGS]{...}",
        "C <function=f>{...}</function>",
        "all\nC>>>f\n{...}",
        "C functools[{\"name\": \"f\", \"arguments\": {...}}]",
        "<|channel>thought\nR<channel|>C<|tool_call>call:f{k:<|\"|>v<|\"|>}<tool_call|>",
        "<think>R</think>C [{\"name\": \"f\", \"arguments\": {...}}]",
    };
    return is_family(f) ? FAMILY_EXAMPLES[f - FAMILY_FIRST] : NULL;
}

bool cf_reply_format_from_name(const char *name, cf_reply_format *out) {
    for (int f = 0; name && f < CF_REPLY_FORMAT_COUNT; f++) {
        if (strcmp(name, cf_reply_format_name((cf_reply_format)f)) == 0 &&
            (f == CF_REPLY_PLAIN || strcmp(name, "plain") != 0)) {
            *out = (cf_reply_format)f;
            return true;
        }
    }
    return false;
}

static bool contains(const char *s, size_t n, const char *needle) {
    size_t k = strlen(needle);
    if (k == 0 || n < k) return k == 0;
    const char *p = s, *last = s + (n - k);   /* the last place a match can start */
    while (p <= last) {
        const char *hit = memchr(p, needle[0], (size_t)(last - p) + 1);
        if (!hit) return false;
        if (memcmp(hit, needle, k) == 0) return true;
        p = hit + 1;
    }
    return false;
}

/* A JSON key as a template writes it: in plain text ("name") or inside a
 * Jinja string literal (\"name\"). */
static bool mentions_json_key(const char *s, size_t n, const char *quoted, const char *escaped) {
    return contains(s, n, quoted) || contains(s, n, escaped);
}

cf_reply_format cf_reply_format_detect(const char *t, size_t n) {
    if (!t) return CF_REPLY_PLAIN;
    if (contains(t, n, "<arg_key>") && contains(t, n, "<|assistant|>")) return CF_REPLY_GLM45;
    if (contains(t, n, "<|START_ACTION|>") && contains(t, n, "<|END_ACTION|>"))
        return CF_REPLY_COMMAND_A;
    cf_reply_format family = families_detect(t, n);
    if (family != CF_REPLY_PLAIN) return family;
    if (contains(t, n, "<tool_call>") &&
        mentions_json_key(t, n, "\"name\"", "\\\"name\\\"") &&
        mentions_json_key(t, n, "\"arguments\"", "\\\"arguments\\\""))
        return CF_REPLY_HERMES;
    return reply_format_by_signature(t, n);
}

/* ---- small helpers ---- */

/* Append a string literal (its length known at compile time). */
#define PUT_LIT(sb, lit) sb_put((sb), (lit), sizeof(lit) - 1)

/* Index of the lowest flagged byte of a non-zero mask (little-endian load). */
static inline unsigned first_flagged(uint64_t mask) {
#if defined(__GNUC__)
    return (unsigned)__builtin_ctzll(mask) >> 3;
#else
    unsigned k = 0;
    while (!(mask & 0x80)) mask >>= 8, k++;
    return k;
#endif
}

static inline bool little_endian(void) {
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

/* The escape of each byte: 0 for none, 'u' for \u00XX, else the letter
 * after the backslash. */
static const char ESCAPE[256] = {
    ['\b'] = 'b', ['\t'] = 't', ['\n'] = 'n', ['\f'] = 'f', ['\r'] = 'r', ['"'] = '"', ['\\'] = '\\',
    [0] = 'u', [1] = 'u', [2] = 'u', [3] = 'u', [4] = 'u', [5] = 'u', [6] = 'u', [7] = 'u',
    [11] = 'u', [14] = 'u', [15] = 'u', [16] = 'u', [17] = 'u', [18] = 'u', [19] = 'u', [20] = 'u',
    [21] = 'u', [22] = 'u', [23] = 'u', [24] = 'u', [25] = 'u', [26] = 'u', [27] = 'u', [28] = 'u',
    [29] = 'u', [30] = 'u', [31] = 'u',
};

/* Blocks go straight into the buffer when it has room for the worst case
 * (6 bytes a byte), else through a small stack buffer and sb_put (which
 * grows the buffer and enforces max_string). */
void json_escape_into(StrBuf *sb, const char *s, size_t n) {
    enum { BLOCK = 256 };
    while (n) {
        size_t k = n < BLOCK ? n : BLOCK;
        if (sb->p && sb->cap - sb->len >= 6 * k) {
            sb->len = (size_t)(json_quote_body(sb->p + sb->len, s, k) - sb->p);
        } else {
            char tmp[6 * BLOCK];
            sb_put(sb, tmp, (size_t)(json_quote_body(tmp, s, k) - tmp));
        }
        s += k;
        n -= k;
    }
}

static void put_uint(StrBuf *sb, uint64_t v) {
    char buf[24], *w = buf + sizeof buf;
    do *--w = (char)('0' + v % 10);
    while (v /= 10);
    sb_put(sb, w, (size_t)(buf + sizeof buf - w));
}

static void put_json_string(StrBuf *sb, const char *s, size_t n) {
    sb_putc(sb, '"');
    json_escape_into(sb, s, n);
    sb_putc(sb, '"');
}

/* Code points in valid UTF-8: the bytes that are not continuation bytes
 * (10xxxxxx), counted 8 at a time. */
static uint64_t count_cps(const char *s, size_t n) {
    uint64_t k = n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        uint64_t cont = w & ~(w << 1) & 0x8080808080808080ull;   /* bit 7 set, bit 6 clear */
        cont = (cont >> 7) * 0x0101010101010101ull;              /* sum of the 8 flags */
        k -= cont >> 56;
    }
    for (; i < n; i++) k -= ((unsigned char)s[i] & 0xC0) == 0x80;
    return k;
}

/* ---- output ---- */

enum { LINE_NONE, LINE_CONTENT, LINE_REASONING, LINE_ARGS };

static void out_close_line(Parser *p) {
    if (p->open_line == LINE_ARGS) sb_put(&p->out, "\"}}]}\n", 6);
    else if (p->open_line != LINE_NONE) sb_put(&p->out, "\"}\n", 3);
    p->open_line = LINE_NONE;
}

/* The whole parse writes its message into one malloc'd block, which is
 * what cf_parse_reply returns: the head ({"role":"assistant","content":")
 * is reserved, the content is escaped in after it as it comes, the other
 * fields are appended at the end. One copy of the content, no more. */
static const char MSG_HEAD[] = "{\"role\":\"assistant\",\"content\":\"";
enum { MSG_HEAD_LEN = sizeof MSG_HEAD - 1 };

static void msg_reserve(Parser *p, size_t extra) {
    if (p->msg_cap - p->msg_len >= extra) return;
    size_t cap = p->msg_cap * 2 > p->msg_len + extra ? p->msg_cap * 2 : p->msg_len + extra;
    char *m = realloc(p->msg, cap);
    if (!m) rt_throw(&p->rt, CF_ERR_MEMORY, "out of memory");
    p->msg = m;
    p->msg_cap = cap;
}

static void msg_put(Parser *p, const char *s, size_t n) {
    msg_reserve(p, n);
    memcpy(p->msg + p->msg_len, s, n);
    p->msg_len += n;
}

static void msg_put_escaped(Parser *p, const char *s, size_t n) {
    if (n > p->rt.lim.max_string || p->msg_len - MSG_HEAD_LEN > p->rt.lim.max_string - n)
        rt_throw(&p->rt, CF_ERR_LIMIT,
                 "string length limit of %zu bytes exceeded (raise it with --max-string / cf_limits.max_string)",
                 p->rt.lim.max_string);
    msg_reserve(p, 6 * n);
    p->msg_len = (size_t)(json_quote_body(p->msg + p->msg_len, s, n) - p->msg);
}

static void emit_text(Parser *p, int field, const char *s, size_t n) {
    if (p->whole) {     /* kept as JSON string text, ready for the message */
        if (field == FIELD_CONTENT) msg_put_escaped(p, s, n);
        else json_escape_into(&p->msg_reasoning, s, n);
        return;
    }
    int line = field == FIELD_CONTENT ? LINE_CONTENT : LINE_REASONING;
    if (p->open_line != line) {
        out_close_line(p);
        if (line == LINE_CONTENT) PUT_LIT(&p->out, "{\"content\":\"");
        else PUT_LIT(&p->out, "{\"reasoning_content\":\"");
        p->open_line = line;
    }
    json_escape_into(&p->out, s, n);
}

/* Argument text of the committed call (stream) — merged into the open line. */
static void emit_args(Parser *p, const char *s, size_t n) {
    uint32_t index = p->ncalls - 1;
    if (p->open_line != LINE_ARGS || p->open_index != index) {
        out_close_line(p);
        PUT_LIT(&p->out, "{\"tool_calls\":[{\"index\":");
        put_uint(&p->out, index);
        PUT_LIT(&p->out, ",\"function\":{\"arguments\":\"");
        p->open_line = LINE_ARGS;
        p->open_index = index;
    }
    json_escape_into(&p->out, s, n);
}

/* ---- text fields ---- */

static void chan_send(Parser *p, Chan *c, const char *s, size_t n) {
    if (!n) return;
    emit_text(p, c->field, s, n);
    if (c->count_cps) {
        c->cps += count_cps(s, n);
        if (p->span_open && p->span_started) sb_put(&p->span_text, s, n);
    }
}

/* Whitespace beside markup or at the reply's end. A line break there is
 * layout (templates print markers on lines of their own and "</think>\n\n"
 * before the answer); spaces and tabs on the text's own line are what the
 * model wrote ("I'll check. <|tool_calls_section_begin|>"), and nothing the
 * model wrote is lost. So a field's leading whitespace is kept from after
 * its last line break, but dropped before the reply's first text (the
 * separator templates print after the assistant header: Jamba's " ", GLM's
 * "\n"; scan_lead drops it too); its trailing whitespace is held (a call or
 * more text may follow), out in full before more text of the field, and up
 * to its first line break at the end of the reply (chan_end). A field of
 * whitespace only stays empty. */
static void chan_put(Parser *p, Chan *c, const char *s, size_t n) {
    if (!c->started) {
        size_t lead = 0;
        while (lead < n && is_space((unsigned char)s[lead])) lead++;
        sb_put(&c->ws, s, lead);
        s += lead, n -= lead;
        if (!n) return;
        size_t cut = c->ws.len;
        if (p->content.started || p->reasoning.started || p->ncalls)
            while (cut && !is_line_break((unsigned char)c->ws.p[cut - 1])) cut--;
        c->started = true;
        memmove(c->ws.p, c->ws.p + cut, c->ws.len - cut);
        c->ws.len -= cut;
    }
    size_t k = n;
    while (k && is_space((unsigned char)s[k - 1])) k--;
    if (!k) {
        sb_put(&c->ws, s, n);
        return;
    }
    if (c->ws.len) {
        chan_send(p, c, c->ws.p, c->ws.len);
        c->ws.len = 0;
    }
    if (c->count_cps && p->span_open && !p->span_started) {
        /* a cited span starts at its first non-space character */
        size_t lead = 0;
        while (is_space((unsigned char)s[lead])) lead++;
        chan_send(p, c, s, lead);
        s += lead, k -= lead, n -= lead;
        p->span_started = true;
        p->span_start = c->cps;
    }
    chan_send(p, c, s, k);
    if (k < n) sb_put(&c->ws, s + k, n - k);
}

/* The end of the reply: trailing whitespace up to its first line break. */
static void chan_end(Parser *p, Chan *c) {
    if (!c->started) return;
    size_t k = 0;
    while (k < c->ws.len && !is_line_break((unsigned char)c->ws.p[k])) k++;
    chan_send(p, c, c->ws.p, k);
    c->ws.len = 0;
}

void content_send(Parser *p, const char *s, size_t n) { chan_put(p, &p->content, s, n); }
void put_content(Parser *p, const char *s, size_t n) {
    if (p->answer) answer_put(p, s, n);   /* a fence around a JSON answer may begin or end here */
    else chan_put(p, &p->content, s, n);
}
void put_reasoning(Parser *p, const char *s, size_t n) { chan_put(p, &p->reasoning, s, n); }

/* ---- citations ---- */

void span_open(Parser *p) {
    answer_flush(p);   /* the span's offsets count the content before it */
    p->span_open = true;
    p->span_started = false;
    p->span_text.len = 0;
}

void span_close(Parser *p, const char *sources, size_t n) {
    uint64_t end = p->content.cps;
    uint64_t start = p->span_started ? p->span_start : end;
    StrBuf *sb = p->whole ? &p->msg_citations : &p->out;
    if (p->whole) {
        if (p->msg_ncitations++) sb_putc(sb, ',');
    } else {
        out_close_line(p);
        PUT_LIT(sb, "{\"citations\":[");
    }
    PUT_LIT(sb, "{\"start\":");
    put_uint(sb, start);
    PUT_LIT(sb, ",\"end\":");
    put_uint(sb, end);
    PUT_LIT(sb, ",\"text\":");
    put_json_string(sb, p->span_text.p, p->span_text.len);
    PUT_LIT(sb, ",\"sources\":");
    sb_put(sb, sources, n);
    sb_putc(sb, '}');
    if (!p->whole) PUT_LIT(sb, "]}\n");
    p->span_open = false;
}

/* ---- tool-call transactions ---- */

void call_begin(Parser *p, const char *tag, bool keep_raw, bool need_id) {
    Call *c = &p->call;
    c->active = true;
    c->committed = false;
    c->need_id = need_id;
    c->has_name = c->has_id = false;
    c->name.len = c->id.len = c->args.len = 0;
    if (!keep_raw) c->raw.len = 0;
    if (tag) sb_puts(&c->raw, tag);
}

void call_raw(Parser *p, const char *s, size_t n) { sb_put(&p->call.raw, s, n); }

void call_represented(Parser *p) {
    if (p->call.committed) p->call.raw.len = 0;
}

static void call_commit(Parser *p) {
    Call *c = &p->call;
    uint32_t index = p->ncalls++;
    if (!c->has_id) {
        c->id.len = 0;
        PUT_LIT(&c->id, "call_");
        put_uint(&c->id, index);
    }
    StrBuf *sb = p->whole ? &p->msg_calls : &p->out;
    if (p->whole) {
        if (index) sb_putc(sb, ',');
        PUT_LIT(sb, "{\"id\":");
    } else {
        out_close_line(p);
        PUT_LIT(sb, "{\"tool_calls\":[{\"index\":");
        put_uint(sb, index);
        PUT_LIT(sb, ",\"id\":");
    }
    put_json_string(sb, c->id.p, c->id.len);
    PUT_LIT(sb, ",\"type\":\"function\",\"function\":{\"name\":");
    put_json_string(sb, c->name.p, c->name.len);
    PUT_LIT(sb, ",\"arguments\":\"");
    json_escape_into(sb, c->args.p, c->args.len);
    if (p->whole) {
        PUT_LIT(sb, "\"}}");
    } else {
        p->open_line = LINE_ARGS;
        p->open_index = index;
    }
    c->args.len = 0;
    c->committed = true;
    c->raw.len = 0;
}

void call_try_commit(Parser *p) {
    Call *c = &p->call;
    if (!p->whole && c->active && !c->committed && c->has_name && (c->has_id || !c->need_id))
        call_commit(p);
}

void call_args(Parser *p, const char *s, size_t n) {
    Call *c = &p->call;
    if (c->committed) emit_args(p, s, n);
    else sb_put(&c->args, s, n);
}

void call_end(Parser *p) {
    if (!p->call.committed) call_commit(p);
    p->call.active = false;
    p->call.raw.len = 0;
}

/* Scan again, in the current state, bytes that were held as a possible tag
 * (at most sizeof tm_buf; they may live in tm_buf itself). */
static void rescan(Parser *p, const char *bytes, size_t n) {
    char copy[sizeof p->tm_buf];
    p->tm_len = 0;
    if (!n) return;
    memcpy(copy, bytes, n);
    p->step(p, copy, n);
}

static void run_step(Parser *p, const char *s, size_t n);

/* Where the first of `closers` begins in s[0..n) (n when none); *len its length. */
static size_t find_closer(const char *s, size_t n, const char *const *closers, size_t *len) {
    size_t best = n;
    for (int k = 0; k < REASONING_CLOSERS && closers[k]; k++) {
        size_t m = strlen(closers[k]);
        for (size_t i = 0; m && i + m <= best; i++)
            if (s[i] == closers[k][0] && !memcmp(s + i, closers[k], m)) {
                best = i;
                *len = m;
                break;
            }
    }
    return best;
}

/* A call broken inside reasoning: its text, then the held bytes, are
 * reasoning up to a reasoning closer; what follows the closer is parsed again
 * in Call.content_state, as it would have been had no call opened. False
 * (nothing done) when the text holds no closer, or while such text is being
 * parsed already (a call broken inside it replays verbatim: replays never
 * nest, so the stack stays flat). */
static bool break_reasoning_at_close(Parser *p, const char *held, size_t held_len) {
    Call *c = &p->call;
    if (!c->in_reasoning || !c->reasoning_close || p->replaying) return false;
    StrBuf *text = &p->replay;   /* Call.raw is the next call's while the rest is parsed */
    text->len = 0;
    sb_put(text, c->raw.p, c->raw.len);
    sb_put(text, held, held_len);
    size_t close_len = 0;
    size_t at = find_closer(text->p, text->len, c->reasoning_close, &close_len);
    if (at == text->len) return false;
    c->raw.len = 0;
    c->in_reasoning = false;
    put_reasoning(p, text->p, at);
    p->state = c->content_state;
    p->replaying = p->replayed = true;
    run_step(p, text->p + at + close_len, text->len - at - close_len);   /* (charged like input: a
        description where content may open reasoning again re-parses suffixes; the step budget bounds it) */
    p->replaying = false;
    text->len = 0;
    return true;
}

void call_break(Parser *p, int resume_state, const char *replay, size_t replay_len) {
    Call *c = &p->call;
    char rep[sizeof p->tm_buf];
    if (replay_len) memcpy(rep, replay, replay_len);
    c->active = false;
    p->tm_len = 0;
    p->val_mode = V_SKIP;   /* (json_args_fast reads it: a call broken inside its arguments must not leave it set) */
    if (break_reasoning_at_close(p, rep, replay_len)) return;
    p->state = c->in_reasoning ? c->reasoning_state : resume_state;
    if (c->raw.len) {
        (c->in_reasoning ? put_reasoning : put_content)(p, c->raw.p, c->raw.len);
        c->raw.len = 0;
    }
    c->in_reasoning = false;
    rescan(p, rep, replay_len);
}

int expect_marks(Parser *p, const char *s, size_t n, size_t *pi, const TagSet *set) {
    size_t i = *pi;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (!p->tm_len && is_space(c)) {
            size_t k = i + 1;
            while (k < n && is_space((unsigned char)s[k])) k++;
            call_raw(p, s + i, k - i);
            i = k;
            continue;
        }
        int r = tag_step(p, set, c);
        if (r == TAG_MORE) {
            i++;
            continue;
        }
        *pi = r == TAG_MISS ? i : i + 1;
        return r >= 0 ? r : -2;
    }
    *pi = i;
    return -1;
}

void marks_break(Parser *p, int resume) { call_break(p, resume, p->tm_buf, p->tm_len); }

void marks_accept(Parser *p, int resume) {
    char rep[sizeof p->tm_buf];
    size_t k = p->tm_len;
    memcpy(rep, p->tm_buf, k);
    call_accept(p);
    p->state = resume;
    rescan(p, rep, k);
}

int expect_tag(Parser *p, const char *s, size_t n, size_t *pi, const TagSet *set, int resume,
               bool miss_ends_call) {
    int r = expect_marks(p, s, n, pi, set);
    if (r != -2) return r;
    if (miss_ends_call) marks_accept(p, resume);
    else marks_break(p, resume);
    return -2;
}

void call_accept(Parser *p) {
    if (p->call.active) call_end(p);
    p->call.raw.len = 0;
}

void call_break_eof(Parser *p, int resume_state) {
    call_raw(p, p->tm_buf, p->tm_len);
    p->tm_len = 0;
    call_break(p, resume_state, NULL, 0);
}

void call_accept_eof(Parser *p) {
    char rest[sizeof p->tm_buf];
    size_t k = p->tm_len;
    memcpy(rest, p->tm_buf, k);
    p->tm_len = 0;
    call_accept(p);
    put_content(p, rest, k);
}

/* ---- calls written as JSON (hermes, command-a) ---- */

bool json_key_is(const JScan *j, const char *z) {
    size_t n = strlen(z);
    return !j->key_long && j->key_len == n && memcmp(j->key, z, n) == 0;
}

bool json_name_start(Parser *p) {
    if (p->js.vtype != '"') return false;
    p->val_mode = V_NAME;
    p->js.dec = &p->call.name;
    return true;
}

bool json_args_start(Parser *p, char vtype) {
    if (vtype == '{') {
        p->val_mode = V_ARGS_RAW;
    } else if (vtype == '"') {         /* arguments given as a JSON string: its text */
        p->val_mode = V_ARGS_STR;
        p->dec.len = 0;
        p->js.dec = &p->dec;
    } else {
        return false;
    }
    p->nargs = 1;
    return true;
}

int json_args_fast(const Parser *p) {
    bool in_string = p->js.st == J_STR || p->js.st == J_ESC;
    if (p->val_mode != V_ARGS_RAW || !in_string) return FAST_NONE;
    return p->call.committed ? FAST_JSON_ARGS : FAST_JSON_HELD;   /* (held: until the call commits) */
}

/* Bytes of the JSON, under the current value mode. */
static void json_take(Parser *p, const char *s, size_t n) {
    if (!n) return;
    if (p->val_mode == V_ARGS_RAW) {       /* streams verbatim */
        call_args(p, s, n);
        if (p->call.committed) call_represented(p);
        else call_raw(p, s, n);
        return;
    }
    if (p->val_mode == V_ARGS_STR) {       /* the decoded text is the arguments */
        if (p->dec.len) call_args(p, p->dec.p, p->dec.len);
        p->dec.len = 0;
        if (p->call.committed) call_represented(p);
        else call_raw(p, s, n);
        return;
    }
    call_raw(p, s, n);
    if (p->val_mode == V_ID && p->js.vtype != '"') sb_put(&p->call.id, s, n);  /* numeric id */
}

size_t json_call_step(Parser *p, const char *s, size_t n, const JsonHooks *h) {
    size_t used;
    int ev = js_feed(&p->js, s, n, &used);
    size_t body = ev == JE_VSTART ? used - 1 : used;
    json_take(p, s, body);
    bool ok = true;
    switch (ev) {
    case JE_ERR: ok = false; break;
    case JE_KEY: ok = h->on_key(p); break;
    case JE_VSTART:     /* the value's first byte belongs to its new mode */
        ok = h->on_vstart(p);
        if (ok) json_take(p, s + body, 1);
        else call_raw(p, s + body, 1);
        break;
    case JE_VEND: ok = h->on_vend(p); break;
    default: break;
    }
    if (!ok) call_break(p, h->resume_state, NULL, 0);
    return used;
}

/* ---- markup tags ---- */

/* tm_mask: the tags of the set that tm_buf is still a prefix of. Sets are
 * prefix-free, so at most one tag completes at a time. */
int tag_step(Parser *p, const TagSet *set, unsigned char c) {
    size_t k = p->tm_len;
    uint32_t alive = k ? p->tm_mask : (1u << set->n) - 1, next = 0;   /* (n < 32) */
    for (int t = 0; t < set->n; t++) {
        const char *tag = set->tags[t];
        if (!(alive >> t & 1) || (unsigned char)tag[k] != c) continue;
        if (tag[k + 1] == 0) {
            p->tm_len = 0;
            return t;
        }
        next |= 1u << t;
    }
    if (!next) return TAG_MISS;
    p->tm_buf[p->tm_len++] = (char)c;
    p->tm_mask = next;
    return TAG_MORE;
}

/* After a miss: where, after the first byte, the held bytes could still
 * begin a tag (a marker may start inside a failed partial match of
 * another: Kimi K3's "<|close|>response<|" then "open|>"). Returns that
 * offset d (1 <= d < len) with *mask the tags buf[d..len) begins, or len
 * when no suffix does. No tag lies inside another (the sets' rule), so the
 * suffix is never a whole tag. */
size_t tag_restart(const TagSet *set, const char *buf, size_t len, uint32_t *mask) {
    for (size_t d = 1; d < len; d++) {
        uint32_t m = 0;
        for (int t = 0; t < set->n; t++)
            if (strlen(set->tags[t]) > len - d && memcmp(set->tags[t], buf + d, len - d) == 0) m |= 1u << t;
        if (m) {
            *mask = m;
            return d;
        }
    }
    return len;
}

/* The held prefix missed: its bytes up to where a tag may still begin go
 * out as text (`put`, or nothing when put is NULL: they are in the caller's
 * run); the rest stays held. Returns how many went out. */
static size_t tag_fall_back(Parser *p, const TagSet *set, TextSink put) {
    uint32_t mask = 0;
    size_t k = p->tm_len, d = tag_restart(set, p->tm_buf, k, &mask);
    if (put) put(p, p->tm_buf, d);
    memmove(p->tm_buf, p->tm_buf + d, k - d);
    p->tm_len = (uint8_t)(k - d);
    p->tm_mask = mask;
    return d;
}

bool tags_lt_only(const TagSet *set) {
    for (int t = 0; t < set->n; t++)
        if (set->tags[t][0] != '<') return false;
    return true;
}

int scan_text(Parser *p, const char *s, size_t n, size_t *pi, const TagSet *set, TextSink put) {
    size_t i = *pi;
    size_t run = i;              /* text of s not put yet starts here */
    size_t tm_at = SIZE_MAX;     /* where the held tag prefix begins in s (else: an earlier chunk) */
    /* every tag starts with `lead` and is longer ('<' mostly): memchr finds
     * where one may start; else a bitmap of the first bytes */
    unsigned char lead = set->n ? (unsigned char)set->tags[0][0] : 0;
    bool one_lead = set->n > 0;
    uint64_t first[4] = {0, 0, 0, 0};
    for (int t = 0; t < set->n; t++) {
        unsigned char c = (unsigned char)set->tags[t][0];
        one_lead &= c == lead && set->tags[t][1];
        first[c >> 6] |= 1ull << (c & 63);
    }
    for (;;) {
        if (p->tm_len) {
            if (i == n) break;
            int r = tag_step(p, set, (unsigned char)s[i]);
            if (r == TAG_MORE) {
                i++;
                continue;
            }
            if (r >= 0) {        /* a tag: the text before it goes out */
                size_t end = tm_at == SIZE_MAX ? run : tm_at;
                if (end > run) put(p, s + run, end - run);
                *pi = i + 1;
                return r;
            }
            /* not this tag after all: the prefix is text up to where another
               may begin inside it; s[i] is looked at again */
            if (tm_at == SIZE_MAX) {   /* held from an earlier chunk: all of it in tm_buf */
                tag_fall_back(p, set, put);
                run = i;
            } else {                   /* it is in s, part of the run */
                tm_at += tag_fall_back(p, set, NULL);
            }
            if (!p->tm_len) tm_at = SIZE_MAX;
            continue;
        }
        if (!set->n || i >= n) {
            i = n;
            break;
        }
        if (one_lead) {
            const char *at = memchr(s + i, lead, n - i);
            if (!at) {
                i = n;
                break;
            }
            i = (size_t)(at - s);
            tm_at = i++;
            p->tm_buf[0] = (char)lead;
            p->tm_len = 1;
            p->tm_mask = (1u << set->n) - 1;
            continue;
        }
        while (i < n && !(first[(unsigned char)s[i] >> 6] >> ((unsigned char)s[i] & 63) & 1)) i++;
        if (i == n) break;
        int r = tag_step(p, set, (unsigned char)s[i]);   /* a one-byte tag completes here */
        if (r >= 0) {
            if (i > run) put(p, s + run, i - run);
            *pi = i + 1;
            return r;
        }
        tm_at = i++;
    }
    /* input ended: put the run, but not a prefix still held */
    size_t end = !p->tm_len ? n : tm_at == SIZE_MAX ? run : tm_at;
    if (end > run) put(p, s + run, end - run);
    *pi = n;
    return -1;
}

int scan_lead(Parser *p, const char *s, size_t n, size_t *pi, const TagSet *set,
              int content_state) {
    size_t i = *pi;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (!p->tm_len && is_space(c)) {   /* the reply's first whitespace is layout (chan_put) */
            i++;
            continue;
        }
        int r = tag_step(p, set, c);
        if (r == TAG_MORE) {
            i++;
            continue;
        }
        if (r >= 0) {
            *pi = i + 1;
            return r;
        }
        p->state = content_state;
        rescan(p, p->tm_buf, p->tm_len);   /* (text: c is looked at again there) */
        break;
    }
    *pi = i;
    return -1;
}

void flush_tag_prefix(Parser *p, TextSink put) {
    uint8_t k = p->tm_len;
    p->tm_len = 0;
    if (k) put(p, p->tm_buf, k);
}

/* ---- UTF-8 repair ---- */

static const char REPLACEMENT[3] = {(char)0xEF, (char)0xBF, (char)0xBD};

/* The sequence at s: its length when complete and valid; 0 when it is a
 * valid prefix cut by the end of input; -k when invalid, k being the length
 * of its maximal valid prefix (at least 1): that many bytes become one
 * U+FFFD, as Python's bytes.decode("utf-8", "replace") does. */
static inline int u8_seq(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    int need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80) return 1;
    if (c < 0xC2) return -1;
    if (c < 0xE0) need = 1;
    else if (c < 0xF0) { need = 2; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
    else if (c < 0xF5) { need = 3; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
    else return -1;
    if (n < 2) return 0;
    if (s[1] < lo || s[1] > hi) return -1;
    for (int k = 2; k <= need; k++) {
        if ((size_t)k >= n) return 0;
        if ((s[k] & 0xC0) != 0x80) return -k;
    }
    return need + 1;
}

static size_t u8_valid_prefix(const unsigned char *s, size_t n) {
    size_t i = 0;
    bool le = little_endian();
    for (;;) {
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            uint64_t high = w & 0x8080808080808080ull;
            if (high) {
                if (le) i += first_flagged(high);
                break;
            }
            i += 8;
        }
        while (i < n && s[i] < 0x80) i++;
        if (i >= n) return n;
        int r = u8_seq(s + i, n - i);
        if (r <= 0) return i;
        i += (size_t)r;
    }
}

static void run_step(Parser *p, const char *s, size_t n) {
    p->step_bytes += n;
    if (p->step_bytes >= 1024) {
        rt_step(&p->rt, p->step_bytes >> 10);
        p->step_bytes &= 1023;
    }
    p->step(p, s, n);
}

static void feed_bytes(Parser *p, const char *s, size_t n) {
    while (p->u8_len && n) {
        p->u8_hold[p->u8_len++] = (unsigned char)*s++;
        n--;
        int r = u8_seq(p->u8_hold, p->u8_len);
        if (r > 0) {
            char seq[4];
            memcpy(seq, p->u8_hold, (size_t)r);
            p->u8_len = 0;
            run_step(p, seq, (size_t)r);
        } else if (r < 0) {
            /* the held prefix is invalid; the byte that said so is looked at again */
            p->u8_len = 0;
            s--, n++;
            run_step(p, REPLACEMENT, 3);
        }
    }
    size_t i = 0;
    while (i < n) {
        size_t k = u8_valid_prefix((const unsigned char *)s + i, n - i);
        if (k) run_step(p, s + i, k);
        i += k;
        if (i >= n) break;
        int r = u8_seq((const unsigned char *)s + i, n - i);
        if (r == 0) {
            memcpy(p->u8_hold, s + i, n - i);
            p->u8_len = (uint8_t)(n - i);
            break;
        }
        run_step(p, REPLACEMENT, 3);
        i += (size_t)-r;
    }
}

/* ---- parser life cycle ---- */

static int reasoning_from_tail(cf_reply_format f, const cf_reply_options *opt);
static void marks_hot_alloc(Parser *p);

static void parser_setup(Parser *p, const cf_reply_options *opt, bool whole) {
    Rt *rt = &p->rt;
    p->whole = whole;
    p->format = opt ? opt->format : CF_REPLY_PLAIN;
    if ((unsigned)p->format >= CF_REPLY_FORMAT_COUNT)
        rt_throw(rt, CF_ERR_USAGE, "unknown reply format %d", (int)p->format);
    StrBuf *bufs[] = {&p->content.ws, &p->reasoning.ws, &p->value.ws, &p->call.name, &p->call.id,
                      &p->call.args, &p->call.raw, &p->text, &p->esc, &p->dec, &p->replay,
                      &p->span_text, &p->msg_reasoning, &p->msg_calls,
                      &p->msg_citations, &p->out};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) sb_init(rt, bufs[k], 64);
    p->content.field = FIELD_CONTENT;
    p->reasoning.field = FIELD_REASONING;
    p->value.field = FIELD_VALUE;
    p->tools = v_none();
    p->props = v_none();
    if (opt && opt->tools_json && opt->tools_json[0])
        p->tools = json_parse(rt, opt->tools_json, strlen(opt->tools_json));
    p->reasoning_mode = reasoning_from_tail(p->format, opt);
    p->answer = opt && opt->json_response ? ANSWER_LEAD : ANSWER_OFF;
    const ReplyFormatDesc *desc = reply_format_desc(p->format);
    switch (p->format) {
    case CF_REPLY_COMMAND_A: command_a_init(p); break;
    default:
        if (is_family(p->format)) {
            families_init(p);
            marks_hot_alloc(p);
            break;
        }
        if (!desc) rt_throw(rt, CF_ERR_USAGE, "unknown reply format %d", (int)p->format);
        engine_init(p, desc);
        marks_hot_alloc(p);   /* (text markers of other first bytes: hermes' ```) */
    }
}

/* Which way the prompt left reasoning: its tail ends (ignoring whitespace)
 * with the opener or the closer of the format's reasoning block. */
static int reasoning_from_tail(cf_reply_format f, const cf_reply_options *opt) {
    if (!opt) return REASONING_AUTO;
    if (opt->reasoning_open) return REASONING_OPEN;
    const char *t = opt->prompt_tail;
    if (!t) return REASONING_AUTO;
    size_t n = strlen(t);
    while (n && is_space((unsigned char)t[n - 1])) n--;
    if (is_family(f)) {
        const char *fo = "<think>", *fc = "</think>";
        family_reasoning_markers(f, &fo, &fc);
        size_t lo = fo ? strlen(fo) : 0, lc = fc ? strlen(fc) : 0;
        if (lo && n >= lo && memcmp(t + n - lo, fo, lo) == 0) return REASONING_OPEN;
        if (lc && n >= lc && memcmp(t + n - lc, fc, lc) == 0) return REASONING_CLOSED;
        return REASONING_AUTO;
    }
    const ReplyFormatDesc *d = reply_format_desc(f);
    static const char *const THINK_OPEN[] = {"<think>", NULL}, *const THINK_CLOSE[] = {"</think>", NULL};
    static const char *const CA_OPEN[] = {"<|START_THINKING|>", NULL}, *const CA_CLOSE[] = {"<|END_THINKING|>", NULL};
    const char *const *open = d ? d->think_open : f == CF_REPLY_COMMAND_A ? CA_OPEN : THINK_OPEN;
    const char *const *close = d ? d->think_close : f == CF_REPLY_COMMAND_A ? CA_CLOSE : THINK_CLOSE;
    for (int k = 0; open[k]; k++) {
        size_t lo = strlen(open[k]);
        if (n >= lo && memcmp(t + n - lo, open[k], lo) == 0) return REASONING_OPEN;
    }
    for (int k = 0; close[k]; k++) {
        size_t lc = strlen(close[k]);
        if (n >= lc && memcmp(t + n - lc, close[k], lc) == 0) return REASONING_CLOSED;
    }
    return REASONING_AUTO;
}

/* The caller's error record (or a local one), reset cheaply: feeds are
 * frequent and a cf_error is 1 KB. */
static cf_error *error_sink(cf_error *err, cf_error *local) {
    if (!err) err = local;
    err->kind = CF_OK;
    err->line = err->column = 0;
    err->offset = 0;
    err->message[0] = 0;
    return err;
}

static bool parser_init(Parser *p, const cf_reply_options *opt, bool whole, cf_error *err) {
    memset(p, 0, sizeof *p);
    cf_limits lim;
    if (opt && opt->limits) lim = *opt->limits;
    else memset(&lim, 0, sizeof lim);
    limits_resolve(&lim);
    arena_init(&p->arena, lim.max_memory);
    p->rt.arena = &p->arena;
    p->rt.lim = lim;
    p->rt.err = err;
    jmp_buf jb;
    p->rt.jb = &jb;
    if (setjmp(jb)) {
        arena_release(&p->arena);
        p->failed = true;
        return false;
    }
    parser_setup(p, opt, whole);
    return true;
}

static void parser_finish(Parser *p) {
    if (p->u8_len) {     /* a sequence cut by the end of the reply */
        p->u8_len = 0;
        p->step(p, REPLACEMENT, 3);
    }
    p->finish(p);
    answer_end(p);
    chan_end(p, &p->reasoning);
    chan_end(p, &p->content);
    p->span_open = false;   /* a <co> never closed cites nothing */
    p->finished = true;
}

/* ---- whole parse ---- */

static void msg_text_field(Parser *p, const char *key, const StrBuf *body) {
    msg_put(p, key, strlen(key));
    if (!body->len) {
        msg_put(p, "null", 4);
        return;
    }
    msg_put(p, "\"", 1);
    msg_put(p, body->p, body->len);
    msg_put(p, "\"", 1);
}

/* Finish the message in p->msg (see MSG_HEAD). */
static void build_message(Parser *p) {
    memcpy(p->msg, MSG_HEAD, MSG_HEAD_LEN);
    if (p->msg_len == MSG_HEAD_LEN) {   /* no content: "content":null */
        p->msg_len--;
        msg_put(p, "null", 4);
    } else {
        msg_put(p, "\"", 1);
    }
    msg_text_field(p, ",\"reasoning_content\":", &p->msg_reasoning);
    if (p->ncalls) {
        msg_put(p, ",\"tool_calls\":[", strlen(",\"tool_calls\":["));
        msg_put(p, p->msg_calls.p, p->msg_calls.len);
        msg_put(p, "]", 1);
    }
    if (p->msg_ncitations) {
        msg_put(p, ",\"citations\":[", strlen(",\"citations\":["));
        msg_put(p, p->msg_citations.p, p->msg_citations.len);
        msg_put(p, "]", 1);
    }
    msg_put(p, "}", 2);     /* and the NUL */
    p->msg_len--;
}

/* The message as malloc'd JSON, or NULL + err (rt->err) when an error unwound. */
static char *parse_whole(Parser *p, const char *text, size_t len, size_t *out_len) {
    jmp_buf jb;
    p->rt.jb = &jb;
    if (setjmp(jb)) return NULL;
    /* room for the content as it will be kept, so that it rarely grows by
     * copying (untouched capacity costs no page); the other fields are
     * usually smaller */
    size_t expect = len + len / 8 + 64;
    if (expect > p->rt.lim.max_string) expect = p->rt.lim.max_string;
    sb_init(&p->rt, &p->msg_reasoning, expect / 4);
    sb_init(&p->rt, &p->msg_calls, expect / 4);
    p->msg_cap = MSG_HEAD_LEN + expect;
    p->msg = malloc(p->msg_cap);
    if (!p->msg) rt_throw(&p->rt, CF_ERR_MEMORY, "out of memory");
    p->msg_len = MSG_HEAD_LEN;
    feed_bytes(p, text, len);
    parser_finish(p);
    build_message(p);
    char *r = p->msg;
    p->msg = NULL;
    if (out_len) *out_len = p->msg_len;
    return r;
}

char *cf_parse_reply(const char *text, size_t len, const cf_reply_options *opt, size_t *out_len,
                     cf_error *err) {
    cf_error local;
    err = error_sink(err, &local);
    if (!text && len) {
        error_set(err, CF_ERR_USAGE, 0, 0, "cf_parse_reply: text is NULL");
        return NULL;
    }
    Parser p;
    if (!parser_init(&p, opt, true, err)) return NULL;
    char *r = parse_whole(&p, text, len, out_len);
    free(p.msg);     /* left only when an error unwound */
    arena_release(&p.arena);
    return r;
}

/* ---- streaming ---- */

static void leaf_init(Parser *p);

struct cf_reply_stream {
    Parser p;
    bool drained;        /* out was handed to the caller: reuse it on the next call */
};

cf_reply_stream *cf_reply_stream_new(const cf_reply_options *opt, cf_error *err) {
    cf_error local;
    err = error_sink(err, &local);
    cf_reply_stream *s = malloc(sizeof *s);
    if (!s) {
        error_set(err, CF_ERR_MEMORY, 0, 0, "out of memory");
        return NULL;
    }
    if (!parser_init(&s->p, opt, false, err)) {
        free(s);
        return NULL;
    }
    s->drained = false;
    leaf_init(&s->p);
    return s;
}

/* Checks shared by feed and finish; false + err when the stream is unusable. */
static bool stream_usable(cf_reply_stream *s, cf_error *err, const char *what) {
    if (!s || s->p.failed) {
        error_set(err, CF_ERR_USAGE, 0, 0, "%s: the stream is %s", what,
                  s ? "unusable after an error" : "NULL");
        return false;
    }
    if (s->p.finished) {
        error_set(err, CF_ERR_USAGE, 0, 0, "%s: the stream is already finished", what);
        return false;
    }
    if (s->drained) {
        s->p.out.len = 0;
        s->drained = false;
    }
    s->p.rt.err = err;
    return true;
}

/* ---- the stream's fast path ----
 * Most bytes of a reply are plain text. When the machine is in a state
 * where such bytes go straight to the open output line (or, in a call's
 * markup, to the bytes the call holds), a feed takes them itself, doing
 * exactly what the machine would (trailing whitespace held, JSON escapes,
 * UTF-8 completed, tag prefixes held) and stopping at anything else, which
 * the machine then takes. It never allocates, so it needs no error boundary.
 *
 * What a byte does is looked up in a table for the current state (held
 * whitespace, a held tag prefix or UTF-8 sequence are states too): feed_fast
 * runs the tables over a chunk. A byte-by-byte feed (a token loop) is the
 * "leaf": cf_reply_stream_feed itself takes most bytes of text (plain bytes,
 * escapes, whitespace, UTF-8, '<') with one lookup in a "hot" table, a store
 * and no branch on the byte; feed_leaf takes the other bytes the fast path
 * can (leaf_quick, leaf_act); anything else goes the chunk's way. What the
 * leaf did is charged (steps, code points) when anything else looks. The
 * tables are in leaf_tables.h. */

/* Can the hot path hold '<' for these tags (all their second bytes are
 * IS_TAG_SECOND)? The answer for the last set asked is kept. */
static bool hot_lt_ok(Parser *p, const TagSet *set) {
    if (set == p->lt_checked) return p->lt_ok;
    bool ok = true;
    for (int t = 0; t < set->n; t++) ok &= IS_TAG_SECOND((unsigned char)set->tags[t][1]);
    p->lt_checked = set;
    p->lt_ok = ok;
    return ok;
}

/* The state after a byte whose entry has HOT_FLAGS: a UTF-8 lead or a '<'
 * keeps whether whitespace is held before it; a continuation byte
 * completes the sequence or needs one less. */
static inline unsigned hot_after(const Hot *hot, unsigned hold) {
    switch (hot->flags) {
    case HOT_LEAD: return hot->after | (hold & HS_NO_SPACE);
    case HOT_LT: return hot->after | (hold & HS_NO_SPACE) << 7;   /* HS_LT_NO_SPACE */
    default: return hold >> HS_NEED_SHIFT == 1 ? HS_BASE : (hold | HS_CONT_ANY) - (1u << HS_NEED_SHIFT);
    }
}
_Static_assert(HS_NO_SPACE << 7 == HS_LT_NO_SPACE, "hot_after");

/* Bytes of escapes beyond one a byte in JSON text the hot path wrote: text
 * fields write \x, glm45 values \\x (x: n t r) and \\\x (x: " \). */
static size_t hot_escapes(int kind, const char *s, size_t n) {
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    size_t extra = 0, i = 0;
    bool le = little_endian();
    while (i < n) {
        if (i + 8 <= n) {   /* 8 bytes at once, up to a backslash */
            uint64_t w;
            memcpy(&w, s + i, 8);
            w ^= ones * '\\';
            uint64_t mask = (w - ones) & ~w & high;
            if (!mask) {
                i += 8;
                continue;
            }
            if (le) i += first_flagged(mask);
        }
        if (s[i++] != '\\') continue;
        size_t k = kind != FAST_GLM_ARGS && kind != FAST_TRIM_ARGS ? 2 : s[i + 1] == '\\' ? 4 : 3;
        extra += k - 1;
        i += k - 1;
    }
    return extra;
}

/* A held string's escape, where the machine keeps it: is one open, and
 * open or close it (its table is leaf_held). */
static inline bool held_escaped(const Parser *p) {
    int kind = p->fast_kind;
    return kind == FAST_JSON_HELD ? p->js.st == J_ESC : kind == FAST_GEMMA_STR ? p->fam_lit->tok : p->fam_lit->esc;
}
static inline void held_escape(Parser *p, bool open) {
    int kind = p->fast_kind;
    if (kind == FAST_JSON_HELD) p->js.st = open ? J_ESC : J_STR;
    else if (kind == FAST_GEMMA_STR) p->fam_lit->tok = open;
    else p->fam_lit->esc = open;
    p->leaf_tab = open ? p->leaf_held : p->leaf_base;
}

/* The table for the current state: the kind's own, unless something is held. */
static const uint8_t *leaf_select(const Parser *p) {
    bool markup = p->fast_kind >= FAST_TAG, held_string = p->fast_kind >= FAST_PY_STR1;
    if (p->u8_len && held_string) return p->tm_len || held_escaped(p) ? LEAF_REST : LEAF_HELD_U8;
    if (p->u8_len)   /* (after an escape's backslash: not an escape, the call breaks) */
        return p->tm_len || markup || p->span_open || p->fast_quiet || p->js.st == J_ESC ? LEAF_REST
                                                                                      : LEAF_U8;
    if (p->tm_len) return LEAF_TAG;
    if (held_string && held_escaped(p)) return p->leaf_held;
    if (p->js.st == J_ESC) return p->fast_kind == FAST_JSON_ARGS ? LEAF_JSON_ESC : LEAF_REST;
    if (p->fast_chan && p->fast_chan->ws.len) return p->leaf_held;
    return p->leaf_base;
}

/* The leaf's accounting. The hot path only writes JSON text and moves
 * out.len: what it wrote since leaf_from is charged to the field's code
 * points and to leaf_budget by leaf_fold before anything else looks, and
 * what it holds (leaf_hold: whitespace, '<', the start of a UTF-8
 * sequence) goes back to where the fast path holds it (the field's
 * whitespace, tm_buf, u8_hold). leaf_end bounds out.len for the hot path:
 * the buffer's end or the budget's (it takes a byte for every byte it
 * writes, or fewer). leaf_granted is 0 when the leaf is off. */
static inline void leaf_fold(Parser *p) {
    const char *o = p->out.p;
    size_t end = p->out.len, from = p->leaf_from, u8 = 0, lt = 0, ws = 0;
    unsigned hold = p->leaf_hold;
    if (end == from && hold == HS_BASE) return;
    Chan *c = p->fast_chan;
    if (!(hold & HS_READY))   /* an open UTF-8 sequence: back to its lead */
        for (u8 = 1; ((unsigned char)o[end - u8] & 0xC0) == 0x80; u8++) continue;
    lt = !(hold & HS_NO_LT);
    size_t esc = p->fast_kind == FAST_TRIM_ARGS ? 3 : 2;   /* \n's text, escaped once or twice */
    if (!(hold & (lt ? HS_LT_NO_SPACE : HS_NO_SPACE)))   /* " " or \n \t \r, just before */
        ws = o[end - u8 - lt - 1] == ' ' ? 1 : esc;
    size_t seen = end - u8 - lt - ws, extra = hot_escapes(p->fast_kind, o + from, end - from);
    p->leaf_budget -= (uint32_t)(end - from - extra);
    if (c && c->count_cps) c->cps += count_cps(o + from, seen - from) - (extra - (ws == 2));   /* (text fields) */
    p->out.len = p->leaf_from = seen;
    p->leaf_hold = HS_BASE;
    if (!(u8 | lt | ws)) return;
    if (ws) {
        char letter = o[seen + ws - 1];
        c->ws.p[c->ws.len++] = ws == 1 ? ' ' : letter == 'n' ? '\n' : letter == 't' ? '\t' : '\r';
    }
    if (lt) {   /* (as A_LT) */
        p->tm_buf[0] = '<';
        p->tm_len = 1;
        p->tm_mask = (1u << p->fast_tags->n) - 1;
    }
    memcpy(p->u8_hold, o + end - u8, u8);   /* (ws, tm_buf and u8_hold were empty) */
    p->u8_len = (uint8_t)u8;
    p->leaf_tab = leaf_select(p);
}

/* Bytes the leaf took since the last sync are charged to step_bytes. */
static inline void leaf_sync(Parser *p) {
    if (!p->leaf_granted) return;
    if (p->out.len != p->leaf_from || p->leaf_hold != HS_BASE) leaf_fold(p);
    p->step_bytes += p->leaf_granted - p->leaf_budget;
    p->leaf_granted = p->leaf_budget;
}

static void leaf_stop(Parser *p) {
    if (p->leaf_granted) leaf_sync(p);
    p->leaf_budget = p->leaf_granted = 0;
    p->leaf_end = 0;
}

/* After the leaf's state changed (folded): where the hot path may go on. */
static inline void leaf_rehot(Parser *p) {
    size_t cap = p->out.cap, room = cap > HOT_MAX_TEXT ? cap - (HOT_MAX_TEXT - 1) : 0;
    size_t end = p->leaf_from + p->leaf_budget;
    p->leaf_end = end < room ? end : room;
    p->leaf_hot = p->leaf_tab == p->leaf_base ? p->leaf_hot_base : HOT_NONE;
    p->leaf_hold = HS_BASE;
}

/* A new stream: the hot path looks its tables up before it knows it is off. */
static void leaf_init(Parser *p) {
    p->leaf_hot = HOT_NONE;
    p->leaf_tab = LEAF_REST;
    p->fast_held = &p->text;
    p->leaf_hold = HS_BASE;
}

/* After the fast path or the machine ran: the leaf may take single bytes
 * until the step budget needs charging (rt_step is the machine's). */
static void leaf_refresh(Parser *p) {
    uint32_t budget = p->fast_ok && p->step_bytes < 1023 ? (uint32_t)(1023 - p->step_bytes) : 0;
    p->leaf_budget = p->leaf_granted = budget;
    p->leaf_tab = p->fast_ok ? leaf_select(p) : LEAF_REST;
    p->leaf_from = p->out.len;
    leaf_rehot(p);
}

/* Markers that do not all start with '<' ([TOOL_CALLS], functools[, a
 * bare '{'): the text tables with every marker's first byte left to the
 * machine (which then holds the prefix; LEAF_TAG goes on from there), and
 * HOT_PLAIN without those bytes, kept for the last set asked. */
static bool marks_leaf(Parser *p, const TagSet *set) {
    bool other = false;
    for (int t = 0; t < set->n; t++) other |= set->tags[t][0] != '<';
    if (!other || set == p->mark_leaf_set) return other;
    memcpy(p->mark_leaf[0], LEAF_PLAIN, 256);
    memcpy(p->mark_leaf[1], LEAF_PLAIN_HELD, 256);
    if (p->mark_hot) memcpy(p->mark_hot, HOT_PLAIN, sizeof HOT_PLAIN);
    for (int t = 0; t < set->n; t++) {
        unsigned char first = (unsigned char)set->tags[t][0];
        p->mark_leaf[0][first] = p->mark_leaf[1][first] = A_REST;
        if (p->mark_hot) ((Hot *)p->mark_hot)[first] = HOT_NONE[first];
    }
    p->mark_leaf_set = set;
    return true;
}

/* The hot table marks_leaf fills (parsers of the families and the described formats). */
static void marks_hot_alloc(Parser *p) { p->mark_hot = rt_alloc(&p->rt, sizeof HOT_PLAIN); }

/* After the machine ran: may the next plain bytes skip it? Only when
 * nothing is held that they would have to join (a citation span not yet
 * started) and the output line they belong to is open. */
static void fast_refresh(Parser *p) {
    /* the output line each kind writes to (markup kinds write none) */
    static const int lines[] = {LINE_NONE, LINE_CONTENT, LINE_REASONING, LINE_ARGS, LINE_ARGS, LINE_ARGS,
                                LINE_NONE, LINE_NONE, LINE_NONE, LINE_NONE,
                                LINE_NONE, LINE_NONE, LINE_NONE, LINE_NONE};
    _Static_assert(sizeof lines / sizeof lines[0] == FAST_JSON_HELD + 1, "a line per fast kind");
    static const TagSet no_tags = {NULL, 0};
    const TagSet *tags = &no_tags;
    int kind = p->fast(p, &tags);
    if (kind == FAST_CONTENT && p->answer) kind = FAST_NONE;   /* content goes through answer.c */
    Chan *c = kind == FAST_CONTENT ? &p->content : kind == FAST_REASONING ? &p->reasoning
            : kind == FAST_TRIM_ARGS ? &p->value : NULL;
    bool line_ok = kind >= FAST_TAG ||
                   (p->open_line == lines[kind] &&
                    (lines[kind] != LINE_ARGS || p->open_index == p->ncalls - 1));
    /* a cited span keeps its text too (fast_emit), once it has started */
    bool spanning = p->span_open && kind == FAST_CONTENT && c->count_cps && p->span_started;
    p->fast_kind = kind;
    p->fast_chan = c;
    p->fast_tags = tags;
    p->fast_held = kind == FAST_JSON_HELD ? &p->call.args : &p->text;
    /* a text field whose line is not open: whitespace and tag prefixes (as
     * between calls) still need not wait for the machine */
    bool quiet = c && c->field != FIELD_VALUE && !line_ok;
    p->fast_ok = kind != FAST_NONE && (!p->span_open || spanning || quiet || kind >= FAST_TAG) &&
                 (line_ok || quiet) && (!c || c->started);
    p->fast_quiet = quiet;
    p->leaf_cps = c ? &c->cps : &p->leaf_cps_sink;
    const Hot *hot = HOT_NONE;
    switch (kind) {
    case FAST_CONTENT:
    case FAST_REASONING:
        if (marks_leaf(p, tags)) {   /* markers of other first bytes: those bytes are the machine's */
            p->leaf_base = quiet ? LEAF_QUIET_PLAIN : p->mark_leaf[0];
            p->leaf_held = quiet ? LEAF_QUIET_PLAIN : p->mark_leaf[1];
            if (!quiet && !spanning && p->mark_hot) hot = p->mark_hot;
            break;
        }
        if (quiet) {
            p->leaf_base = p->leaf_held = tags->n ? LEAF_QUIET : LEAF_QUIET_PLAIN;
            break;
        }
        p->leaf_held = spanning ? LEAF_SPAN : tags->n ? LEAF_TEXT_HELD : LEAF_PLAIN_HELD;
        p->leaf_base = spanning ? LEAF_SPAN : tags->n ? LEAF_TEXT : LEAF_PLAIN;
        if (!spanning) hot = !tags->n ? HOT_PLAIN : hot_lt_ok(p, tags) ? HOT_TEXT : HOT_PLAIN;
        break;
    case FAST_JSON_ARGS:
        p->leaf_base = p->leaf_held = LEAF_JSON;
        hot = HOT_JSON;
        break;
    case FAST_GLM_ARGS:
        p->leaf_base = p->leaf_held = LEAF_GLM;
        hot = hot_lt_ok(p, tags) ? HOT_GLM : HOT_GLM_NO_LT;
        break;
    case FAST_TRIM_ARGS:
        p->leaf_base = LEAF_TRIM;
        p->leaf_held = LEAF_TRIM_HELD;
        hot = hot_lt_ok(p, tags) ? HOT_TRIM : HOT_TRIM_NO_LT;
        break;
    case FAST_TAG: p->leaf_base = p->leaf_held = LEAF_MARKUP_SPACE; break;
    case FAST_HELD: p->leaf_base = p->leaf_held = LEAF_MARKUP_TEXT; break;
    case FAST_NAME: p->leaf_base = p->leaf_held = LEAF_NAME; break;
    case FAST_SOURCES: p->leaf_base = p->leaf_held = LEAF_SOURCES; break;
    case FAST_PY_STR1:   /* held strings: leaf_held is the table in an escape */
    case FAST_PY_STR2:
        p->leaf_base = kind == FAST_PY_STR1 ? LEAF_HELD_PY1 : LEAF_HELD_PY2;
        p->leaf_held = LEAF_HELD_PY_ESC;
        break;
    case FAST_GEMMA_STR:
        p->leaf_base = LEAF_HELD_GEMMA;
        p->leaf_held = LEAF_HELD_GEMMA_LT;
        break;
    case FAST_JSON_HELD:
        p->leaf_base = LEAF_HELD_JSON;
        p->leaf_held = LEAF_HELD_JSON_ESC;
        break;
    default: p->leaf_base = p->leaf_held = LEAF_REST;
    }
    p->leaf_hot_base = hot;
    leaf_refresh(p);
}

/* Would c complete a tag (its index), extend the prefix (TAG_MORE) or
 * show it is not a tag (TAG_MISS)? Changes nothing. */
static int tag_peek(const Parser *p, const TagSet *set, unsigned char c) {
    int more = TAG_MISS;
    for (int t = 0; t < set->n; t++) {
        const char *tag = set->tags[t];
        if (!(p->tm_mask >> t & 1) || (unsigned char)tag[p->tm_len] != c) continue;
        if (tag[p->tm_len + 1] == 0) return t;
        more = TAG_MORE;
    }
    return more;
}

/* A_ESC: text fields escape '"' and '\\' once; an XML string value
 * escapes them and \n \t \r twice (a JSON string in the arguments string). */
typedef struct Escape {
    char text[5];
    uint8_t len;
} Escape;

static const Escape *escape_of(int kind, unsigned char ch) {
    static const Escape once[128] = {['"'] = {"\\\"", 2}, ['\\'] = {"\\\\", 2}};
    static const Escape twice[128] = {['"'] = {"\\\\\\\"", 4}, ['\\'] = {"\\\\\\\\", 4},
                                      ['\n'] = {"\\\\n", 3}, ['\t'] = {"\\\\t", 3},
                                      ['\r'] = {"\\\\r", 3}};
    return kind == FAST_GLM_ARGS || kind == FAST_TRIM_ARGS ? &twice[ch & 127] : &once[ch & 127];
}

/* Append s (n bytes of JSON text standing for the raw text raw[0..rn)) to
 * the open line, after any whitespace the field holds; a started cited span
 * keeps the raw text as chan_send would. False (nothing done) if it does
 * not fit. */
static inline bool fast_emit(Parser *p, Chan *c, const char *s, size_t n, const char *raw, size_t rn,
                             uint64_t cps) {
    size_t held = c ? c->ws.len : 0;
    if (p->out.cap - p->out.len < n + 6 * held) return false;
    if (c && c->count_cps && p->span_open) {
        StrBuf *span = &p->span_text;
        if (span->cap - span->len < held + rn) return false;
        memcpy(span->p + span->len, c->ws.p, held);
        memcpy(span->p + span->len + held, raw, rn);
        span->len += held + rn;
    }
    if (held && c->field == FIELD_VALUE) {   /* escaped twice, as the machine's emit_value */
        for (size_t k = 0; k < held; k++)
            if (c->ws.p[k] == '\v' || c->ws.p[k] == '\f') return false;
    }
    if (held) {   /* whatever whitespace the field holds (the machine may hold \v, \f) */
        char *w = p->out.p + p->out.len;
        if (held == 1 && c->ws.p[0] == ' ') *w++ = ' ';   /* the usual one, between words */
        else if (c->field == FIELD_VALUE)
            for (size_t k = 0; k < held; k++) {
                const Escape *e = escape_of(FAST_TRIM_ARGS, (unsigned char)c->ws.p[k]);
                if (!e->len) *w++ = ' ';
                for (size_t b = 0; b < e->len; b++) *w++ = e->text[b];
            }
        else w = json_quote_body(w, c->ws.p, held);
        p->out.len = (size_t)(w - p->out.p);
        c->cps += held;
        c->ws.len = 0;
    }
    for (size_t k = 0; k < n; k++) p->out.p[p->out.len++] = s[k];   /* n <= 32 */
    if (c) c->cps += cps;
    return true;
}

/* A byte of a UTF-8 sequence: held until the sequence is complete, then
 * plain text. False (nothing done) when it is invalid: the machine repairs. */
static inline bool fast_utf8(Parser *p, Chan *c, unsigned char ch) {
    if (!p->u8_len && ch < 0xC2) return false;
    if (p->js.st == J_ESC) return false;       /* not an escape: the call breaks there */
    p->u8_hold[p->u8_len++] = ch;
    int r = u8_seq(p->u8_hold, p->u8_len);
    if (r < 0 || (r > 0 && !fast_emit(p, c, (const char *)p->u8_hold, (size_t)r,
                                      (const char *)p->u8_hold, (size_t)r, 1))) {
        p->u8_len--;
        return false;
    }
    if (r > 0) p->u8_len = 0;
    return true;
}

/* A_LT, and markup in a call: whitespace kept raw (A_RAW), text kept in
 * fast_held and raw (A_HELD, and the escapes of a held string). False
 * (nothing done) when there is no room. */
static inline bool leaf_markup(Parser *p, unsigned char ch) {
    StrBuf *raw = &p->call.raw, *held = p->fast_held;
    bool markup = p->fast_kind >= FAST_TAG;
    if (markup && raw->len == raw->cap) return false;
    int action = p->leaf_tab[ch];
    switch (action) {
    case A_LT:
        p->tm_buf[0] = '<';
        p->tm_len = 1;
        p->tm_mask = (1u << p->fast_tags->n) - 1;
        p->leaf_tab = LEAF_TAG;
        return true;
    case A_HELD:
    case A_HELD_BS:
    case A_HELD_ESC:
        if (held->len == held->cap) return false;
        held->p[held->len++] = (char)ch;
        if (action != A_HELD) held_escape(p, action == A_HELD_BS);
        break;
    default:   /* A_RAW */
        break;
    }
    raw->p[raw->len++] = (char)ch;
    return true;
}

/* A byte of a UTF-8 sequence in a held string: held until complete (as
 * the machine's repair), then kept as it is. False (nothing done) when it
 * is invalid (the machine repairs) or there is no room. */
static inline bool leaf_held_u8(Parser *p, unsigned char ch) {
    StrBuf *raw = &p->call.raw, *held = p->fast_held;
    p->u8_hold[p->u8_len++] = ch;
    int r = u8_seq(p->u8_hold, p->u8_len);
    if (r == 0) {
        p->leaf_tab = LEAF_HELD_U8;
        return true;
    }
    if (r < 0 || held->cap - held->len < (size_t)r || raw->cap - raw->len < (size_t)r) {
        p->u8_len--;
        return false;
    }
    memcpy(held->p + held->len, p->u8_hold, (size_t)r);
    memcpy(raw->p + raw->len, p->u8_hold, (size_t)r);
    held->len += (size_t)r;
    raw->len += (size_t)r;
    p->u8_len = 0;
    p->leaf_tab = p->leaf_base;
    return true;
}

/* A byte whose action is not a plain copy (or a copy that found no room).
 * False: not taken (the machine takes it). */
static NOINLINE bool leaf_act(Parser *p, unsigned char ch) {
    Chan *c = p->fast_chan;
    StrBuf *raw = &p->call.raw;
    bool markup = p->fast_kind >= FAST_TAG;
    for (;;) {
        switch (p->leaf_tab[ch]) {
        case A_COPY:
            if (p->out.len == p->out.cap) return false;
            p->out.p[p->out.len++] = (char)ch;
            ++*p->leaf_cps;
            return true;
        case A_HOLD:
            if (c->ws.len == c->ws.cap) return false;
            c->ws.p[c->ws.len++] = (char)ch;
            p->leaf_tab = p->leaf_held;
            return true;
        case A_EMIT:   /* after whitespace: it goes out first */
            if (!fast_emit(p, c, (const char *)&ch, 1, (const char *)&ch, 1, 1)) return false;
            p->leaf_tab = p->leaf_base;
            return true;
        case A_SPAN: {   /* the span keeps the raw byte, the line its escape */
            const Escape *e = escape_of(p->fast_kind, ch);
            if (!fast_emit(p, c, e->len ? e->text : (const char *)&ch, e->len ? e->len : 1,
                           (const char *)&ch, 1, 1))
                return false;
            p->leaf_tab = p->leaf_base;
            return true;
        }
        case A_ESC: {
            const Escape *e = escape_of(p->fast_kind, ch);
            if (!fast_emit(p, c, e->text, e->len, (const char *)&ch, 1, 1)) return false;
            p->leaf_tab = p->leaf_base;
            return true;
        }
        case A_U8:
            if (!fast_utf8(p, c, ch)) return false;
            p->leaf_tab = p->u8_len ? LEAF_U8 : p->leaf_base;
            return true;
        case A_LT:
        case A_RAW:
        case A_HELD:
        case A_HELD_BS:
        case A_HELD_ESC:
            return leaf_markup(p, ch);
        case A_HELD_U8:
            return leaf_held_u8(p, ch);
        case A_TAG: {
            int r = tag_peek(p, p->fast_tags, ch);
            /* a tag's non-ASCII byte is the machine's: it completes UTF-8 first */
            if (ch >= 0x80 || (markup && raw->len == raw->cap)) return false;
            if (r == TAG_MORE) {
                tag_step(p, p->fast_tags, ch);
                return true;
            }
            /* a tag is the machine's, and a miss in markup, where the fast path
             * writes nothing, or in a cited span; else the prefix is text */
            if (r >= 0 || markup || p->fast_quiet || p->span_open) return false;
            uint32_t mask;   /* a tag may begin inside the prefix: the machine's */
            if (tag_restart(p->fast_tags, p->tm_buf, p->tm_len, &mask) < p->tm_len) return false;
            for (uint8_t k = 0; k < p->tm_len; k++)   /* bytes JSON escapes (command-r's "Action:\n"): the machine's */
                if (!IS_PRINTABLE((unsigned char)p->tm_buf[k]) || IS_QUOTE_OR_BS((unsigned char)p->tm_buf[k]))
                    return false;
            if (!fast_emit(p, c, p->tm_buf, p->tm_len, p->tm_buf, p->tm_len, p->tm_len)) return false;
            p->tm_len = 0;
            p->leaf_tab = p->leaf_base;
            continue;                           /* ch is looked at again */
        }
        case A_JSON_BS:                         /* the model's JSON, escaped once more */
            if (p->out.cap - p->out.len < 2) return false;
            p->out.p[p->out.len++] = '\\';
            p->out.p[p->out.len++] = '\\';
            p->js.st = J_ESC;
            p->leaf_tab = LEAF_JSON_ESC;
            return true;
        case A_JSON_ESC:
            if (p->out.cap - p->out.len < 2) return false;
            if (IS_QUOTE_OR_BS(ch)) p->out.p[p->out.len++] = '\\';
            p->out.p[p->out.len++] = (char)ch;
            p->js.st = J_STR;
            p->leaf_tab = p->leaf_base;
            return true;
        default:
            return false;
        }
    }
}

/* The slow path: the machine, behind an error boundary. */
static bool feed_guarded(cf_reply_stream *s, const char *text, size_t n) {
    jmp_buf jb;
    s->p.rt.jb = &jb;
    s->p.fast_ok = false;
    leaf_stop(&s->p);
    if (setjmp(jb)) {
        s->p.failed = true;
        return false;
    }
    feed_bytes(&s->p, text, n);
    s->p.fast_stale = true;   /* fast_refresh when the next feed needs it (not before a drain) */
    return true;
}

static NOINLINE bool feed_slow(cf_reply_stream *s, const char *text, size_t n, cf_error *err);

/* Does c extend the held tag prefix without completing a tag? Then it is
 * held (as tag_step); else nothing changes. */
static inline bool tag_more(Parser *p, const TagSet *set, unsigned char c) {
    size_t k = p->tm_len;
    uint32_t alive = p->tm_mask, next = 0;
    for (int t = 0; t < set->n && alive >> t; t++) {
        const char *tag = set->tags[t];
        if (!(alive >> t & 1) || (unsigned char)tag[k] != c) continue;
        if (tag[k + 1] == 0) return false;   /* a tag: the machine's */
        next |= 1u << t;
    }
    if (!next) return false;
    p->tm_buf[p->tm_len++] = (char)c;
    p->tm_mask = next;
    return true;
}

/* The leaf's output for the byte it takes (k bytes of JSON text, one code
 * point), after the one whitespace byte the field may hold. False (nothing
 * done) when more is held or there is no room: leaf_act's. */
static inline bool leaf_put(Parser *p, Chan *c, const char *b, size_t k) {
    StrBuf *out = &p->out;
    char ws[2];
    size_t wk = 0;
    if (c && c->ws.len) {
        unsigned char w = (unsigned char)c->ws.p[0];
        if (c->ws.len != 1 || w == '\v' || w == '\f') return false;   /* \u000b, ... */
        if (w != ' ' && c->field == FIELD_VALUE) return false;        /* escaped twice: fast_emit's */
        ws[0] = w == ' ' ? ' ' : '\\';
        ws[1] = ESCAPE[w];
        wk = w == ' ' ? 1 : 2;
    }
    if (out->cap - out->len < wk + k) return false;
    char *o = out->p + out->len;
    for (size_t i = 0; i < wk; i++) *o++ = ws[i];
    for (size_t i = 0; i < k; i++) *o++ = b[i];
    out->len += wk + k;
    *p->leaf_cps += 1 + (wk != 0);
    if (wk) c->ws.len = 0;
    p->leaf_tab = p->leaf_base;
    return true;
}

/* The commonest bytes the hot path leaves (leaf_act takes them too, and
 * the rest): other whitespace held, a byte after one held whitespace byte,
 * an escape, UTF-8. False (nothing done): leaf_act's. */
static inline bool leaf_quick(Parser *p, unsigned char ch) {
    Chan *c = p->fast_chan;
    switch (p->leaf_tab[ch]) {
    case A_HOLD:
        if (c->ws.len == c->ws.cap) return false;
        c->ws.p[c->ws.len++] = (char)ch;
        p->leaf_tab = p->leaf_held;
        return true;
    case A_COPY:
    case A_EMIT:
        return leaf_put(p, c, (const char *)&ch, 1);
    case A_ESC: {
        const Escape *e = escape_of(p->fast_kind, ch);
        return leaf_put(p, c, e->text, e->len);
    }
    case A_LT:
    case A_RAW:
    case A_HELD:
    case A_HELD_BS:
    case A_HELD_ESC:
        return leaf_markup(p, ch);
    case A_HELD_U8:
        return leaf_held_u8(p, ch);
    case A_NAME: {
        StrBuf *name = &p->call.name, *raw = &p->call.raw;
        if (name->len >= MAX_CALL_NAME || name->len == name->cap || raw->len == raw->cap) return false;
        name->p[name->len++] = (char)ch;
        raw->p[raw->len++] = (char)ch;
        return true;
    }
    case A_SOURCE:                  /* the byte that would reach the limit is the machine's */
        if (p->text.len >= MAX_SOURCES - 1 || p->text.len == p->text.cap) return false;
        p->text.p[p->text.len++] = (char)ch;
        return true;
    case A_TAG:                     /* a tag goes on (else: leaf_act's) */
        if (ch >= 0x80 || (p->fast_kind >= FAST_TAG && p->call.raw.len == p->call.raw.cap)) return false;
        return tag_more(p, p->fast_tags, ch);
    case A_U8: {                    /* held until complete (as fast_utf8) */
        p->u8_hold[p->u8_len++] = ch;
        int r = u8_seq(p->u8_hold, p->u8_len);
        if (r == 0) {
            p->leaf_tab = LEAF_U8;
            return true;
        }
        if (r < 0 || !leaf_put(p, c, (const char *)p->u8_hold, (size_t)r)) {
            p->u8_len--;
            return false;
        }
        p->u8_len = 0;
        return true;
    }
    default:
        return false;
    }
}

/* Take the bytes at the start of text that the fast path can; returns how many. */
static NOINLINE size_t feed_fast(Parser *p, const char *text, size_t n) {
    size_t budget = 1024 - p->step_bytes;      /* rt_step is charged by the slow path */
    if (n > budget) n = budget;
    size_t i = 0;
    while (i < n) {
        const uint8_t *tab = p->leaf_tab;
        size_t k = i, end = p->out.cap - p->out.len < n - i ? i + (p->out.cap - p->out.len) : n;
        while (k < end && tab[(unsigned char)text[k]] == A_COPY) k++;
        if (k > i) {                           /* a run of plain bytes */
            memcpy(p->out.p + p->out.len, text + i, k - i);
            p->out.len += k - i;
            *p->leaf_cps += k - i;
            i = k;
            continue;
        }
        if (tab[(unsigned char)text[i]] == A_HELD) {   /* a run of held text */
            StrBuf *held = p->fast_held, *raw = &p->call.raw;
            size_t room = held->cap - held->len < raw->cap - raw->len ? held->cap - held->len : raw->cap - raw->len;
            end = n - i < room ? n : i + room;
            while (k < end && tab[(unsigned char)text[k]] == A_HELD) k++;
            memcpy(held->p + held->len, text + i, k - i);
            memcpy(raw->p + raw->len, text + i, k - i);
            held->len += k - i;
            raw->len += k - i;
            if (k > i) {
                i = k;
                continue;
            }
        }
        if (!leaf_quick(p, (unsigned char)text[i]) && !leaf_act(p, (unsigned char)text[i])) break;
        i++;
    }
    p->step_bytes += i;
    if (p->step_bytes >= 1024) p->fast_ok = false;
    leaf_refresh(p);
    return i;
}

/* Everything but the leaf: the fast path, then the machine. */
static NOINLINE bool feed_rest(cf_reply_stream *s, const char *text, size_t n, cf_error *err) {
    if (s && s->p.fast_stale) {
        s->p.fast_stale = false;
        fast_refresh(&s->p);
    }
    if (s) leaf_sync(&s->p);
    if (s && s->p.fast_ok && text) {   /* never set once failed, finished or drained */
        size_t k = feed_fast(&s->p, text, n);
        if (k == n) {
            if (err) err->kind = CF_OK;
            return true;
        }
        text += k;
        n -= k;
    }
    return feed_slow(s, text, n, err);
}

/* A single byte the hot path did not take. */
static NOINLINE bool feed_leaf(cf_reply_stream *s, const char *text, size_t n, cf_error *err) {
    Parser *p = &s->p;
    unsigned char ch = (unsigned char)text[0];
    if (!p->leaf_granted) return feed_rest(s, text, n, err);
    if (p->out.len != p->leaf_from || p->leaf_hold != HS_BASE) leaf_fold(p);
    bool taken = p->leaf_budget && (leaf_quick(p, ch) || leaf_act(p, ch));
    p->leaf_from = p->out.len;   /* (leaf_quick and leaf_act count their own) */
    p->leaf_budget -= taken;
    leaf_rehot(p);
    if (taken) {
        if (err) err->kind = CF_OK;
        return true;
    }
    if (!p->leaf_budget) return feed_rest(s, text, n, err);   /* feed_fast may take one more */
    leaf_sync(p);
    return feed_slow(s, text, n, err);                       /* it would refuse this byte too */
}

/* The leaf: most bytes of a byte-by-byte feed are taken here, with a
 * lookup and a store: no call, no stack frame, no branch on the byte. */
bool cf_reply_stream_feed(cf_reply_stream *s, const char *text, size_t n, cf_error *err) {
    if (LIKELY(n == 1) && LIKELY(s != NULL) && LIKELY(text != NULL)) {
        Parser *p = &s->p;
        size_t len = p->out.len;
        const Hot *hot = &p->leaf_hot[(unsigned char)text[0]];   /* (HOT_NONE when the leaf is off) */
        unsigned hold = p->leaf_hold, needs = hot->needs;
        {
            if (LIKELY((len < p->leaf_end) & ((hold & needs) == needs))) {
                uint32_t t = hot->text;
                unsigned after = hot->after;
                if (!LIKELY(!hot->flags)) after = hot_after(hot, hold);
                if (little_endian()) {
                    memcpy(p->out.p + len, &t, 4);
                } else {
                    for (int k = 0; k < 4; k++) p->out.p[len + k] = (char)(t >> 8 * k);
                }
                p->out.len = len + hot->len;
                p->leaf_hold = after;
                if (LIKELY(err != NULL)) err->kind = CF_OK;
                return true;
            }
        }
        StrBuf *held = p->fast_held, *raw = &p->call.raw;   /* a held string's text (leaf_markup's A_HELD) */
        if (p->leaf_budget && p->leaf_tab[(unsigned char)text[0]] == A_HELD && held->len < held->cap &&
            raw->len < raw->cap) {
            held->p[held->len++] = text[0];
            raw->p[raw->len++] = text[0];
            p->leaf_budget--;
            if (LIKELY(err != NULL)) err->kind = CF_OK;
            return true;
        }
        return feed_leaf(s, text, n, err);
    }
    return feed_rest(s, text, n, err);
}

/* Kept out of line: the fast path above stays small. */
static bool feed_slow(cf_reply_stream *s, const char *text, size_t n, cf_error *err) {
    cf_error local;
    err = error_sink(err, &local);
    if (!stream_usable(s, err, "cf_reply_stream_feed")) return false;
    if (!text && n) {
        error_set(err, CF_ERR_USAGE, 0, 0, "cf_reply_stream_feed: text is NULL");
        return false;
    }
    return feed_guarded(s, text, n);
}

bool cf_reply_stream_finish(cf_reply_stream *s, cf_error *err) {
    cf_error local;
    err = error_sink(err, &local);
    if (!stream_usable(s, err, "cf_reply_stream_finish")) return false;
    jmp_buf jb;
    s->p.rt.jb = &jb;
    if (setjmp(jb)) {
        s->p.failed = true;
        return false;
    }
    s->p.fast_ok = s->p.fast_stale = false;
    leaf_stop(&s->p);
    parser_finish(&s->p);
    return true;
}

const char *cf_reply_stream_drain(cf_reply_stream *s, size_t *len) {
    static const char empty[1] = "";
    if (len) *len = 0;
    if (!s || s->p.failed) return empty;
    Parser *p = &s->p;
    if (s->drained) p->out.len = 0;
    cf_error local;
    jmp_buf jb;
    p->rt.err = &local;
    p->rt.jb = &jb;
    p->fast_ok = p->fast_stale = false;   /* the line is closed; the next feed reopens it */
    leaf_stop(p);
    if (setjmp(jb)) {   /* no room to close the last line */
        p->failed = true;
        return empty;
    }
    out_close_line(p);
    sb_putc(&p->out, 0);
    p->out.len--;
    s->drained = true;
    if (len) *len = p->out.len;
    return p->out.p;
}

void cf_reply_stream_free(cf_reply_stream *s) {
    if (!s) return;
    arena_release(&s->p.arena);
    free(s);
}
