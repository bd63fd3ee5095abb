/* reply.c — reading model replies back into OpenAI messages: the public
 * API, UTF-8 repair, trimmed text fields, the output (whole message or
 * stream deltas), tool-call transactions, markup tags and an incremental
 * JSON scanner. The formats themselves live in reply_<format>.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "reply.h"
#include "json.h"

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

/* ---- formats ---- */

static const char *const FORMAT_NAMES[] = {"plain", "glm45", "hermes", "command-a"};

const char *cf_reply_format_name(cf_reply_format f) {
    return (unsigned)f < 4 ? FORMAT_NAMES[f] : "plain";
}

bool cf_reply_format_from_name(const char *name, cf_reply_format *out) {
    for (int f = 0; name && f < 4; f++) {
        if (strcmp(name, FORMAT_NAMES[f]) == 0) {
            *out = (cf_reply_format)f;
            return true;
        }
    }
    return false;
}

static bool contains(const char *s, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (const char *p = s; n >= k && (size_t)(p - s) <= n - k;) {
        const char *hit = memchr(p, needle[0], n - k + 1 - (size_t)(p - s));
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
    if (contains(t, n, "<tool_call>") &&
        mentions_json_key(t, n, "\"name\"", "\\\"name\\\"") &&
        mentions_json_key(t, n, "\"arguments\"", "\\\"arguments\\\""))
        return CF_REPLY_HERMES;
    return CF_REPLY_PLAIN;
}

/* ---- small helpers ---- */

static const char HEX_DIGITS[] = "0123456789abcdef";

/* Append a string literal (its length known at compile time). */
#define PUT_LIT(sb, lit) sb_put((sb), (lit), sizeof(lit) - 1)

/* Bit 7 of each byte of w that needs escaping (< 0x20, '"' or '\\'), by the
 * classic has-zero-byte tricks, 8 bytes at a time. Borrows only run
 * upwards, so the lowest flagged byte is exact (higher ones may not be). */
static inline uint64_t escape_mask(uint64_t w) {
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
    uint64_t control = (w - ones * 0x20) & ~w;
    return (control | ((quote - ones) & ~quote) | ((backslash - ones) & ~backslash)) & high;
}

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

/* Escape s into w, which has room for 6 bytes per input byte; returns the end. */
static char *escape_block(char *w, const char *s, size_t n) {
    size_t i = 0;
    bool le = little_endian();
    while (i < n) {
        if (i + 8 <= n) {       /* clean bytes 8 at a time, up to the first special one */
            uint64_t word;
            memcpy(&word, s + i, 8);
            uint64_t mask = escape_mask(word);
            memcpy(w, &word, 8);   /* room: 6 bytes a byte, and 8 are left */
            if (!mask) {
                w += 8;
                i += 8;
                continue;
            }
            if (le) {
                unsigned k = first_flagged(mask);
                w += k;
                i += k;
            }
        }
        unsigned char c = (unsigned char)s[i++];
        char e = ESCAPE[c];
        if (!e) {
            *w++ = (char)c;
        } else if (e != 'u') {
            *w++ = '\\';
            *w++ = e;
        } else {
            memcpy(w, "\\u00", 4);
            w[4] = HEX_DIGITS[c >> 4];
            w[5] = HEX_DIGITS[c & 15];
            w += 6;
        }
    }
    return w;
}

/* Blocks go straight into the buffer when it has room for the worst case
 * (6 bytes a byte), else through a small stack buffer and sb_put (which
 * grows the buffer and enforces max_string). */
void json_escape_into(StrBuf *sb, const char *s, size_t n) {
    enum { BLOCK = 256 };
    while (n) {
        size_t k = n < BLOCK ? n : BLOCK;
        if (sb->p && sb->cap - sb->len >= 6 * k) {
            sb->len = (size_t)(escape_block(sb->p + sb->len, s, k) - sb->p);
        } else {
            char tmp[6 * BLOCK];
            sb_put(sb, tmp, (size_t)(escape_block(tmp, s, k) - tmp));
        }
        s += k;
        n -= k;
    }
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
    p->msg_len = (size_t)(escape_block(p->msg + p->msg_len, s, n) - p->msg);
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
        sb_printf(&p->out, "{\"tool_calls\":[{\"index\":%u,\"function\":{\"arguments\":\"", index);
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

/* Leading whitespace is dropped; trailing whitespace is held until more
 * text follows it (so it is dropped at the end). */
static void chan_put(Parser *p, Chan *c, const char *s, size_t n) {
    if (!c->started) {
        while (n && is_space((unsigned char)*s)) s++, n--;
        if (!n) return;
        c->started = true;
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

void put_content(Parser *p, const char *s, size_t n) { chan_put(p, &p->content, s, n); }
void put_reasoning(Parser *p, const char *s, size_t n) { chan_put(p, &p->reasoning, s, n); }

/* ---- citations ---- */

static void put_uint(StrBuf *sb, uint64_t v) {
    char buf[24], *w = buf + sizeof buf;
    do *--w = (char)('0' + v % 10);
    while (v /= 10);
    sb_put(sb, w, (size_t)(buf + sizeof buf - w));
}

void span_open(Parser *p) {
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
        sb_printf(&c->id, "call_%u", index);
    }
    StrBuf *sb = p->whole ? &p->msg_calls : &p->out;
    if (p->whole) {
        if (index) sb_putc(sb, ',');
        PUT_LIT(sb, "{\"id\":");
    } else {
        out_close_line(p);
        sb_printf(sb, "{\"tool_calls\":[{\"index\":%u,\"id\":", index);
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

void call_break(Parser *p, int resume_state, const char *replay, size_t replay_len) {
    Call *c = &p->call;
    char rep[sizeof p->tm_buf];
    if (replay_len) memcpy(rep, replay, replay_len);
    c->active = false;
    p->state = resume_state;
    p->tm_len = 0;
    if (c->raw.len) {
        put_content(p, c->raw.p, c->raw.len);
        c->raw.len = 0;
    }
    rescan(p, rep, replay_len);
}

int expect_tag(Parser *p, const char *s, size_t n, size_t *pi, const TagSet *set, int resume,
               bool miss_ends_call) {
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
        if (r >= 0) return r;
        if (!miss_ends_call) {
            call_break(p, resume, p->tm_buf, p->tm_len);
            return -2;
        }
        char rep[sizeof p->tm_buf];
        size_t k = p->tm_len;
        memcpy(rep, p->tm_buf, k);
        call_accept(p);
        p->state = resume;
        rescan(p, rep, k);
        return -2;
    }
    *pi = i;
    return -1;
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

/* JScan states (the scanner is further down) */
enum {
    J_VAL, J_OBJ_FIRST, J_OBJ_KEY, J_COLON, J_OBJ_NEXT, J_ARR_FIRST, J_ARR_NEXT,
    J_STR, J_ESC, J_HEX, J_SURR_BS, J_SURR_U,
    J_NUM_MINUS, J_NUM_ZERO, J_NUM_INT, J_NUM_DOT, J_NUM_FRAC, J_NUM_E, J_NUM_ESIGN, J_NUM_EXP,
    J_LIT, J_DONE
};

/* ---- calls written as JSON (hermes, command-a) ---- */

bool json_key_is(const JScan *j, const char *z) {
    size_t n = strlen(z);
    return !j->key_long && j->key_len == n && memcmp(j->key, z, n) == 0;
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
    return p->val_mode == V_ARGS_RAW && p->call.committed && in_string ? FAST_JSON_ARGS : FAST_NONE;
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
    uint32_t alive = k ? p->tm_mask : (1u << set->n) - 1, next = 0;
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

int scan_text(Parser *p, const char *s, size_t n, size_t *pi, const TagSet *set, TextSink put) {
    size_t i = *pi;
    size_t run = i;              /* text of s not put yet starts here */
    size_t tm_at = SIZE_MAX;     /* where the held tag prefix begins in s (else: an earlier chunk) */
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
            /* not a tag after all: the prefix is text; s[i] is looked at again */
            if (tm_at == SIZE_MAX) {
                uint8_t k = p->tm_len;
                p->tm_len = 0;
                put(p, p->tm_buf, k);
                run = i;
            } else {
                p->tm_len = 0;   /* it is in s, part of the run */
            }
            tm_at = SIZE_MAX;
            continue;
        }
        const char *lt = set->n && i < n ? memchr(s + i, '<', n - i) : NULL;
        if (!lt) {
            i = n;
            break;
        }
        i = (size_t)(lt - s);    /* every tag starts with '<' */
        tm_at = i++;
        p->tm_buf[0] = '<';
        p->tm_len = 1;
        p->tm_mask = (1u << set->n) - 1;
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
        if (!p->tm_len && is_space(c)) {   /* leading whitespace is trimmed anyway */
            i++;
            continue;
        }
        int r = p->tm_len || c == '<' ? tag_step(p, set, c) : TAG_MISS;
        if (r == TAG_MORE) {
            i++;
            continue;
        }
        if (r >= 0) {
            *pi = i + 1;
            return r;
        }
        p->state = content_state;
        flush_tag_prefix(p, put_content);
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

/* ---- incremental JSON scanner ---- */


static const char *const JSON_LITERALS[] = {"true", "false", "null"};

static uint8_t *js_stack(Parser *p, uint32_t *max_depth) {
    static const uint32_t cap = 4096;   /* nesting bound whatever the limits say */
    uint32_t d = p->rt.lim.max_json_depth < cap ? p->rt.lim.max_json_depth : cap;
    *max_depth = d;
    if (!p->js.is_obj) p->js.is_obj = rt_alloc0(&p->rt, d + 2);
    return p->js.is_obj;
}

void js_init(Parser *p, JScan *j, uint32_t report_depth, uint32_t key_depth) {
    uint32_t max_depth;
    uint8_t *stack = js_stack(p, &max_depth);
    memset(j, 0, sizeof *j);
    j->is_obj = stack;
    j->max_depth = max_depth;
    j->report_depth = report_depth;
    j->key_depth = key_depth;
    j->st = J_VAL;
}

static void js_out(JScan *j, const char *s, size_t n) {
    if (j->in_key) {
        if (j->depth != j->key_depth) return;
        if (j->key_len + n > sizeof j->key) {
            j->key_long = true;
            return;
        }
        memcpy(j->key + j->key_len, s, n);
        j->key_len += (uint8_t)n;
    } else if (j->dec) {
        sb_put(j->dec, s, n);
    }
}

static void js_out_cp(JScan *j, uint32_t cp) {
    char buf[4];
    int n;
    if (cp < 0x80) { buf[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { buf[0] = (char)(0xC0 | cp >> 6); buf[1] = (char)(0x80 | (cp & 63)); n = 2; }
    else if (cp < 0x10000) {
        buf[0] = (char)(0xE0 | cp >> 12); buf[1] = (char)(0x80 | ((cp >> 6) & 63));
        buf[2] = (char)(0x80 | (cp & 63)); n = 3;
    } else {
        buf[0] = (char)(0xF0 | cp >> 18); buf[1] = (char)(0x80 | ((cp >> 12) & 63));
        buf[2] = (char)(0x80 | ((cp >> 6) & 63)); buf[3] = (char)(0x80 | (cp & 63)); n = 4;
    }
    js_out(j, buf, (size_t)n);
}

/* A value just ended at the current depth. */
static int js_value_end(JScan *j) {
    uint32_t parent = j->depth;
    j->st = parent == 0 ? J_DONE : j->is_obj[parent] ? J_OBJ_NEXT : J_ARR_NEXT;
    if (parent <= j->report_depth) {
        j->vdepth = parent;
        return JE_VEND;
    }
    return JE_NONE;
}

static int js_close(JScan *j) {
    j->depth--;
    return js_value_end(j);
}

static int js_value_start(JScan *j, unsigned char c) {
    uint32_t parent = j->depth;
    switch (c) {
    case '{':
    case '[':
        if (j->depth >= j->max_depth) return JE_ERR;
        j->depth++;
        j->is_obj[j->depth] = c == '{';
        j->st = c == '{' ? J_OBJ_FIRST : J_ARR_FIRST;
        break;
    case '"': j->st = J_STR; j->in_key = false; break;
    case '-': j->st = J_NUM_MINUS; break;
    case '0': j->st = J_NUM_ZERO; break;
    case 't': case 'f': case 'n':
        j->st = J_LIT;
        j->hex = c == 't' ? 0 : c == 'f' ? 1 : 2;
        j->aux = 1;
        break;
    default:
        if (c < '1' || c > '9') return JE_ERR;
        j->st = J_NUM_INT;
    }
    if (parent <= j->report_depth) {
        j->vtype = (char)c;
        j->vdepth = parent;
        return JE_VSTART;
    }
    return JE_NONE;
}

static void js_key_begin(JScan *j) {
    j->in_key = true;
    j->key_len = 0;
    j->key_long = false;
    j->st = J_STR;
}

static int js_string_end(JScan *j) {
    if (j->in_key) {
        j->in_key = false;
        j->st = J_COLON;
        if (j->depth == j->key_depth) {
            j->vdepth = j->depth;
            return JE_KEY;
        }
        return JE_NONE;
    }
    j->dec = NULL;
    return js_value_end(j);
}

/* A complete \uXXXX (surrogate pairs joined; lone halves become U+FFFD,
 * as they cannot be UTF-8). */
static void js_hex_done(JScan *j) {
    uint32_t cp = j->hex;
    j->st = J_STR;
    if (j->high) {
        uint32_t high = j->high;
        j->high = 0;
        if (cp >= 0xDC00 && cp <= 0xDFFF) {
            js_out_cp(j, 0x10000 + ((high - 0xD800) << 10) + (cp - 0xDC00));
            return;
        }
        js_out_cp(j, 0xFFFD);
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        j->high = cp;
        j->st = J_SURR_BS;
    } else {
        js_out_cp(j, cp >= 0xDC00 && cp <= 0xDFFF ? 0xFFFD : cp);
    }
}

static int hex_value(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

bool is_json_space(unsigned char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

int js_feed(JScan *j, const char *s, size_t n, size_t *used) {
    size_t i = 0;
    int ev = JE_NONE;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        switch (j->st) {
        case J_VAL:
            if (is_json_space(c)) { i++; break; }
            ev = js_value_start(j, c);
            if (ev == JE_ERR) goto out;
            i++;
            if (ev) goto out;
            break;
        case J_OBJ_FIRST:
            if (is_json_space(c)) { i++; break; }
            if (c == '}') { i++; if ((ev = js_close(j))) goto out; break; }
            if (c != '"') { ev = JE_ERR; goto out; }
            i++;
            js_key_begin(j);
            break;
        case J_OBJ_KEY:
            if (is_json_space(c)) { i++; break; }
            if (c != '"') { ev = JE_ERR; goto out; }
            i++;
            js_key_begin(j);
            break;
        case J_COLON:
            if (is_json_space(c)) { i++; break; }
            if (c != ':') { ev = JE_ERR; goto out; }
            i++;
            j->st = J_VAL;
            break;
        case J_OBJ_NEXT:
        case J_ARR_NEXT:
            if (is_json_space(c)) { i++; break; }
            if (c == ',') {
                i++;
                j->st = j->st == J_OBJ_NEXT ? J_OBJ_KEY : J_VAL;
                break;
            }
            if (c != (j->st == J_OBJ_NEXT ? '}' : ']')) { ev = JE_ERR; goto out; }
            i++;
            if ((ev = js_close(j))) goto out;
            break;
        case J_ARR_FIRST:
            if (is_json_space(c)) { i++; break; }
            if (c == ']') { i++; if ((ev = js_close(j))) goto out; break; }
            j->st = J_VAL;
            break;
        case J_STR: {
            size_t k = i;
            while (k < n) {
                unsigned char d = (unsigned char)s[k];
                if (d == '"' || d == '\\' || d < 0x20) break;
                k++;
            }
            if (k > i) js_out(j, s + i, k - i);
            i = k;
            if (i == n) break;
            c = (unsigned char)s[i];
            if (c < 0x20) { ev = JE_ERR; goto out; }
            i++;
            if (c == '\\') { j->st = J_ESC; break; }
            if ((ev = js_string_end(j))) goto out;
            break;
        }
        case J_ESC: {
            char e;
            switch (c) {
            case '"': case '\\': case '/': e = (char)c; break;
            case 'b': e = '\b'; break;
            case 'f': e = '\f'; break;
            case 'n': e = '\n'; break;
            case 'r': e = '\r'; break;
            case 't': e = '\t'; break;
            case 'u': e = 0; break;
            default: ev = JE_ERR; goto out;
            }
            i++;
            if (c == 'u') {
                j->st = J_HEX;
                j->aux = 0;
                j->hex = 0;
            } else {
                js_out(j, &e, 1);
                j->st = J_STR;
            }
            break;
        }
        case J_HEX: {
            int v = hex_value(c);
            if (v < 0) { ev = JE_ERR; goto out; }
            i++;
            j->hex = j->hex * 16 + (uint32_t)v;
            if (++j->aux == 4) js_hex_done(j);
            break;
        }
        case J_SURR_BS:      /* after a high surrogate: hoping for \u + low half */
            if (c == '\\') { i++; j->st = J_SURR_U; break; }
            j->high = 0;
            js_out_cp(j, 0xFFFD);
            j->st = J_STR;
            break;
        case J_SURR_U:
            if (c == 'u') { i++; j->st = J_HEX; j->aux = 0; j->hex = 0; break; }
            j->high = 0;
            js_out_cp(j, 0xFFFD);
            j->st = J_ESC;   /* the backslash already read starts another escape */
            break;
        case J_NUM_MINUS:
            if (c == '0') j->st = J_NUM_ZERO;
            else if (is_digit(c)) j->st = J_NUM_INT;
            else { ev = JE_ERR; goto out; }
            i++;
            break;
        case J_NUM_INT:
            while (i < n && is_digit((unsigned char)s[i])) i++;
            if (i == n) break;
            c = (unsigned char)s[i];
            /* fall through */
        case J_NUM_ZERO:
            if (c == '.') { i++; j->st = J_NUM_DOT; break; }
            if (c == 'e' || c == 'E') { i++; j->st = J_NUM_E; break; }
            if ((ev = js_value_end(j))) goto out;
            break;
        case J_NUM_DOT:
            if (!is_digit(c)) { ev = JE_ERR; goto out; }
            i++;
            j->st = J_NUM_FRAC;
            break;
        case J_NUM_FRAC:
            if (is_digit(c)) { i++; break; }
            if (c == 'e' || c == 'E') { i++; j->st = J_NUM_E; break; }
            if ((ev = js_value_end(j))) goto out;
            break;
        case J_NUM_E:
            if (c == '+' || c == '-') { i++; j->st = J_NUM_ESIGN; break; }
            /* fall through */
        case J_NUM_ESIGN:
            if (!is_digit(c)) { ev = JE_ERR; goto out; }
            i++;
            j->st = J_NUM_EXP;
            break;
        case J_NUM_EXP:
            if (is_digit(c)) { i++; break; }
            if ((ev = js_value_end(j))) goto out;
            break;
        case J_LIT: {
            const char *lit = JSON_LITERALS[j->hex];
            if (c != (unsigned char)lit[j->aux]) { ev = JE_ERR; goto out; }
            i++;
            if (lit[++j->aux] == 0 && (ev = js_value_end(j))) goto out;
            break;
        }
        default:  /* J_DONE: the document is complete; nothing more is ours */
            goto out;
        }
    }
out:
    *used = i;
    return ev;
}

bool js_valid(Parser *p, const char *s, size_t n) {
    JScan j;
    js_init(p, &j, 0, 0);
    size_t i = 0;
    while (i < n) {
        size_t used;
        int ev = js_feed(&j, s + i, n - i, &used);
        i += used;
        if (ev == JE_ERR) return false;
        if (ev == JE_VEND) {
            while (i < n && is_json_space((unsigned char)s[i])) i++;
            return i == n;
        }
    }
    /* a number at the very end is complete only now */
    return j.depth == 0 && (j.st == J_NUM_ZERO || j.st == J_NUM_INT || j.st == J_NUM_FRAC ||
                            j.st == J_NUM_EXP);
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

static void parser_setup(Parser *p, const cf_reply_options *opt, bool whole) {
    Rt *rt = &p->rt;
    p->whole = whole;
    p->format = opt ? opt->format : CF_REPLY_PLAIN;
    if ((unsigned)p->format > CF_REPLY_COMMAND_A)
        rt_throw(rt, CF_ERR_USAGE, "unknown reply format %d", (int)p->format);
    StrBuf *bufs[] = {&p->content.ws, &p->reasoning.ws, &p->call.name, &p->call.id,
                      &p->call.args, &p->call.raw, &p->text, &p->esc, &p->dec,
                      &p->span_text, &p->msg_reasoning, &p->msg_calls,
                      &p->msg_citations, &p->out};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) sb_init(rt, bufs[k], 64);
    p->content.field = FIELD_CONTENT;
    p->reasoning.field = FIELD_REASONING;
    p->tools = v_none();
    p->props = v_none();
    if (opt && opt->tools_json && opt->tools_json[0])
        p->tools = json_parse(rt, opt->tools_json, strlen(opt->tools_json));
    p->reasoning_mode = reasoning_from_tail(p->format, opt);
    switch (p->format) {
    case CF_REPLY_GLM45: glm45_init(p); break;
    case CF_REPLY_COMMAND_A: command_a_init(p); break;
    default: hermes_init(p); break;
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
    const char *open = f == CF_REPLY_COMMAND_A ? "<|START_THINKING|>" : "<think>";
    const char *close = f == CF_REPLY_COMMAND_A ? "<|END_THINKING|>" : "</think>";
    size_t lo = strlen(open), lc = strlen(close);
    if (n >= lo && memcmp(t + n - lo, open, lo) == 0) return REASONING_OPEN;
    if (n >= lc && memcmp(t + n - lc, close, lc) == 0) return REASONING_CLOSED;
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
 * where such bytes go straight to the open output line, a feed takes them
 * itself, doing exactly what the machine would (trailing whitespace held,
 * JSON escapes, UTF-8 completed) and stopping at anything else. It never
 * allocates, so it needs no error boundary. */

/* How many single bytes feed_one may take before the checks it leaves out
 * (the step budget, a tag prefix, a JSON escape, markup) must be redone. */
static void leaf_refresh(Parser *p) {
    bool ok = p->fast_ok && !p->tm_len && p->js.st != J_ESC && p->fast_kind < FAST_TAG &&
              p->step_bytes < 1023;
    p->leaf_budget = ok ? (uint32_t)(1023 - p->step_bytes) : 0;
}

/* After the machine ran: may the next plain bytes skip it? Only when
 * nothing is held that they would have to join (a tag prefix, a citation
 * span) and the output line they belong to is open. */
static void fast_refresh(Parser *p) {
    /* the output line each kind writes to (markup kinds write none) */
    static const int lines[] = {LINE_NONE, LINE_CONTENT, LINE_REASONING, LINE_ARGS, LINE_ARGS,
                                LINE_NONE, LINE_NONE};
    static const TagSet no_tags = {NULL, 0};
    const TagSet *tags = &no_tags;
    int kind = p->fast(p, &tags);
    Chan *c = kind == FAST_CONTENT ? &p->content : kind == FAST_REASONING ? &p->reasoning : NULL;
    bool line_ok = kind >= FAST_TAG ||
                   (p->open_line == lines[kind] &&
                    (lines[kind] != LINE_ARGS || p->open_index == p->ncalls - 1));
    p->fast_kind = kind;
    p->fast_chan = c;
    p->fast_tags = tags;
    p->fast_ok = kind != FAST_NONE && !p->span_open && line_ok && (!c || c->started);
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

/* FAST_TAG / FAST_HELD: markup bytes of a call, as expect_tag and
 * scan_text (with a sink keeping text and raw) would take them, up to the
 * byte that completes or breaks a tag, which the machine takes. ASCII only. */
static size_t fast_markup(Parser *p, const char *s, size_t n) {
    StrBuf *raw = &p->call.raw, *text = &p->text;
    const TagSet *tags = p->fast_tags;
    size_t i = 0;
    for (; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (p->u8_len || ch >= 0x80 || raw->len == raw->cap) break;
        if (p->tm_len) {
            if (tag_peek(p, tags, ch) != TAG_MORE) break;
            tag_step(p, tags, ch);
        } else if (ch == '<') {
            p->tm_buf[0] = '<';
            p->tm_len = 1;
            p->tm_mask = (1u << tags->n) - 1;
        } else if (p->fast_kind == FAST_TAG) {
            if (!is_space(ch)) break;
            raw->p[raw->len++] = (char)ch;
        } else {
            if (text->len == text->cap) break;
            text->p[text->len++] = (char)ch;
            raw->p[raw->len++] = (char)ch;
        }
    }
    return i;
}

/* One ASCII byte in the fast path: its JSON text for the open line (in
 * out[], returning its length), 0 to hold it as whitespace of the field,
 * or -1 when the machine must see it. */
static int fast_ascii(Parser *p, unsigned char ch, char out[4]) {
    bool plain = ch >= 0x20 && ch < 0x7F && ch != '"' && ch != '\\';
    switch (p->fast_kind) {
    case FAST_JSON_ARGS:                    /* the model's JSON, escaped once more */
        if (p->js.st == J_ESC) {
            if (!strchr("\"\\/bfnrt", ch) || !ch) return -1;
            p->js.st = J_STR;
        } else if (ch == '\\') {
            p->js.st = J_ESC;
        } else if (!plain) {
            return -1;                      /* '"' ends the string; controls are errors */
        }
        break;
    case FAST_GLM_ARGS: {                   /* a string value: escaped twice */
        static const char *const twice[] = {['"'] = "\\\\\\\"", ['\\'] = "\\\\\\\\",
                                            ['\n'] = "\\\\n", ['\t'] = "\\\\t", ['\r'] = "\\\\r"};
        if (ch < sizeof twice / sizeof twice[0] && twice[ch]) {
            size_t n = strlen(twice[ch]);
            memcpy(out, twice[ch], n);
            return (int)n;
        }
        if (!plain || ch == '<') return -1;
        break;
    }
    default:                                /* a text field */
        if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') return 0;
        if (ch == '<' || (!plain && ch != '"' && ch != '\\')) return -1;
        if (!plain) {
            out[0] = '\\';
            out[1] = (char)ch;
            return 2;
        }
    }
    out[0] = (char)ch;
    if (ch == '"' || ch == '\\') {           /* JSON args: escaped for the line */
        out[0] = '\\';
        out[1] = (char)ch;
        return 2;
    }
    return 1;
}

/* Append s (already JSON text) to the open line, after any whitespace the
 * field holds; false (nothing done) if it does not fit. */
static inline bool fast_emit(Parser *p, Chan *c, const char *s, size_t n, uint64_t cps) {
    size_t room = p->out.cap - p->out.len, need = n;
    if (c && c->ws.len) {   /* any whitespace the field holds (the machine may hold \v, \f) */
        need += 6 * c->ws.len;
        if (room < need) return false;
        p->out.len = (size_t)(escape_block(p->out.p + p->out.len, c->ws.p, c->ws.len) - p->out.p);
        c->cps += c->ws.len;
        c->ws.len = 0;
    } else if (room < need) {
        return false;
    }
    for (size_t k = 0; k < n; k++) p->out.p[p->out.len++] = s[k];   /* n <= 4 */
    if (c) c->cps += cps;
    return true;
}

/* Printable ASCII that means nothing in any fast state: not space (text
 * holds it), '<', '"' or '\\'. */
static inline bool plain_byte(unsigned char ch) {
    return ch > 0x20 && ch < 0x7F && ch != '<' && ch != '"' && ch != '\\';
}

/* A byte of a UTF-8 sequence: held until the sequence is complete, then
 * plain text. False (nothing done) when it is invalid: the machine repairs. */
static inline bool fast_utf8(Parser *p, Chan *c, unsigned char ch) {
    if (!p->u8_len && ch < 0xC2) return false;
    if (p->js.st == J_ESC) return false;       /* not an escape: the call breaks there */
    p->u8_hold[p->u8_len++] = ch;
    int r = u8_seq(p->u8_hold, p->u8_len);
    if (r < 0 || (r > 0 && !fast_emit(p, c, (const char *)p->u8_hold, (size_t)r, 1))) {
        p->u8_len--;
        return false;
    }
    if (r > 0) p->u8_len = 0;
    return true;
}

/* What a byte that is not plain becomes on the open line, for the leaf:
 * text fields escape '"' and '\\' once; a glm45 string value twice (it is
 * a JSON string inside the arguments string); "" = hold it as whitespace
 * of the field. NULL: feed_fast decides. */
static const char *leaf_escape(int kind, unsigned char ch) {
    static const char *const text[128] = {['"'] = "\\\"", ['\\'] = "\\\\",
                                          ['\n'] = "", ['\t'] = "", ['\r'] = "", [' '] = ""};
    static const char *const twice[128] = {['"'] = "\\\\\\\"", ['\\'] = "\\\\\\\\",
                                           ['\n'] = "\\\\n", ['\t'] = "\\\\t", ['\r'] = "\\\\r",
                                           [' '] = " "};
    if (kind == FAST_GLM_ARGS) return twice[ch];
    return kind == FAST_JSON_ARGS ? (ch == ' ' ? " " : NULL) : text[ch];
}

/* One byte of the fast path, with the fewest steps: a plain byte, a UTF-8
 * byte, or one of leaf_escape's, when no whitespace is held before it
 * (but one held space). False: leave it to feed_fast (which does the same
 * and the rest). */
static inline bool feed_one(Parser *p, unsigned char ch) {
    Chan *c = p->fast_chan;
    StrBuf *out = &p->out;
    if (p->u8_len || ch >= 0x80) {                  /* a byte of a UTF-8 sequence */
        if (!fast_utf8(p, c, ch)) return false;
    } else {
        const char *e = plain_byte(ch) ? NULL : leaf_escape(p->fast_kind, ch);
        if (!e && !plain_byte(ch)) return false;
        if (e && !*e) {                             /* whitespace that may be trailing: held */
            if (c->ws.len == c->ws.cap) return false;
            c->ws.p[c->ws.len++] = (char)ch;
        } else {
            if (out->cap - out->len < 5) return false;
            if (c && c->ws.len) {
                if (c->ws.len != 1 || c->ws.p[0] != ' ') return false;
                out->p[out->len++] = ' ';
                c->ws.len = 0;
                c->cps++;
            }
            if (!e) out->p[out->len++] = (char)ch;
            else while (*e) out->p[out->len++] = *e++;
            if (c) c->cps++;
        }
    }
    p->step_bytes++;
    p->leaf_budget--;
    return true;
}


/* Take the plain bytes at the start of text; returns how many. */
static NOINLINE size_t feed_fast(Parser *p, const char *text, size_t n) {
    Chan *c = p->fast_chan;
    size_t budget = 1024 - p->step_bytes;      /* rt_step is charged by the slow path */
    if (n > budget) n = budget;
    size_t i = 0;
    if (p->fast_kind >= FAST_TAG) {
        i = fast_markup(p, text, n);
        n = i;                                 /* the next byte is the machine's */
    }
    while (i < n) {
        unsigned char ch = (unsigned char)text[i];
        /* the common case first: a plain byte, nothing held before it */
        if (plain_byte(ch) && !p->u8_len && !p->tm_len && !(c && c->ws.len) &&
            p->out.len < p->out.cap && p->js.st != J_ESC) {
            p->out.p[p->out.len++] = (char)ch;
            if (c) c->cps++;
            i++;
            continue;
        }
        if (p->u8_len) {                       /* a held UTF-8 sequence is resolved first */
            if (p->tm_len) break;              /* after a held tag prefix: the machine orders them */
            if (!fast_utf8(p, c, ch)) break;
            i++;
            continue;
        }
        if (p->tm_len) {                       /* a possible tag: as scan_text does */
            int r = tag_peek(p, p->fast_tags, ch);
            if (r >= 0) break;                 /* a tag: the machine acts on it */
            if (r == TAG_MORE) {
                tag_step(p, p->fast_tags, ch);
                i++;
                continue;
            }
            /* not a tag: the held prefix is text (plain ASCII); ch is looked at again */
            if (!fast_emit(p, c, p->tm_buf, p->tm_len, p->tm_len)) break;
            p->tm_len = 0;
            continue;
        }
        if (ch == '<' && p->fast_tags->n) {     /* every tag starts with '<' */
            p->tm_buf[0] = '<';
            p->tm_len = 1;
            p->tm_mask = (1u << p->fast_tags->n) - 1;
            i++;
            continue;
        }
        if (ch >= 0x80) {
            if (!fast_utf8(p, c, ch)) break;
        } else {
            char out[4];
            uint8_t js_st = p->js.st;
            int k = fast_ascii(p, ch, out);
            if (k < 0) break;
            if (k == 0) {                      /* whitespace that may be trailing: held */
                if (c->ws.len == c->ws.cap) break;
                c->ws.p[c->ws.len++] = (char)ch;
            } else if (!fast_emit(p, c, out, (size_t)k, 1)) {
                p->js.st = js_st;              /* undone: the machine takes it */
                break;
            }
        }
        i++;
    }
    p->step_bytes += i;
    if (p->step_bytes >= 1024) p->fast_ok = false;
    leaf_refresh(p);
    return i;
}

/* The slow path: the machine, behind an error boundary. */
static bool feed_guarded(cf_reply_stream *s, const char *text, size_t n) {
    jmp_buf jb;
    s->p.rt.jb = &jb;
    s->p.fast_ok = false;
    s->p.leaf_budget = 0;
    if (setjmp(jb)) {
        s->p.failed = true;
        return false;
    }
    feed_bytes(&s->p, text, n);
    fast_refresh(&s->p);
    return true;
}

static NOINLINE bool feed_slow(cf_reply_stream *s, const char *text, size_t n, cf_error *err);

/* Everything but the one-byte leaf: the general fast path, then the machine. */
static NOINLINE bool feed_rest(cf_reply_stream *s, const char *text, size_t n, cf_error *err) {
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

/* Kept to the one-byte leaf (a byte-by-byte feed) and a tail call, so that
 * the hot path needs no stack frame. */
bool cf_reply_stream_feed(cf_reply_stream *s, const char *text, size_t n, cf_error *err) {
    if (n == 1 && s && text && s->p.leaf_budget && feed_one(&s->p, (unsigned char)text[0])) {
        if (err) err->kind = CF_OK;
        return true;
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
    s->p.fast_ok = false;
    s->p.leaf_budget = 0;
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
    if (setjmp(jb)) {   /* no room to close the last line */
        p->failed = true;
        return empty;
    }
    out_close_line(p);
    sb_putc(&p->out, 0);
    p->out.len--;
    s->drained = true;
    p->fast_ok = false;     /* the line is closed; the next feed reopens it */
    p->leaf_budget = 0;
    if (len) *len = p->out.len;
    return p->out.p;
}

void cf_reply_stream_free(cf_reply_stream *s) {
    if (!s) return;
    arena_release(&s->p.arena);
    free(s);
}
