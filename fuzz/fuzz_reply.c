/* fuzz_reply.c — libFuzzer: the reply parsers, whole and streamed.
 *
 * Input: byte 0 picks the format (bits 0-1 and 4-7: (low | high << 2) modulo
 * the number of formats), whether the reply starts
 * inside reasoning (bit 2) and whether tools are given (bit 3, they type
 * glm45 argument values); byte 1 seeds the chunking; the rest is the reply.
 *
 * Properties:
 *   1. nothing crashes; a failure comes with an error (only limits may fail);
 *   2. the streamed message is the same for one chunk and for a random
 *      chunking (decisions depend only on the bytes, never on the chunks);
 *   3. the streamed message equals the whole parse unless a call broke
 *      after the stream committed to it (the documented difference: the
 *      stream closes such a call as received, the whole parse puts it back
 *      in the content). Both resume scanning where it broke, so the stream
 *      then has more calls than the whole parse, never fewer; with as many
 *      calls the two must be equal.
 * Messages are compared in a canonical form: content, reasoning, each call
 * (id, name, arguments) and the citations. */
#include "fuzz_common.h"
#include "engine/runtime.h"
#include "engine/value.h"
#include "engine/json.h"

static const char TOOLS[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\","
    " \"properties\": {\"city\": {\"type\": \"string\"}, \"days\": {\"type\": \"integer\"},"
    " \"opts\": {\"anyOf\": [{\"type\": \"object\"}, {\"type\": \"null\"}]}}}}}]";

static cf_limits limits;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    limits = fuzz_limits();
    return 0;
}

/* ---- canonical form of a message ---- */

typedef struct Canon {
    StrBuf content, reasoning, calls, citations;
    int ncalls;
    int open_index;           /* streaming: index of the call being streamed, -1 none */
} Canon;

static void canon_init(Rt *rt, Canon *c) {
    sb_init(rt, &c->content, 64);
    sb_init(rt, &c->reasoning, 64);
    sb_init(rt, &c->calls, 64);
    sb_init(rt, &c->citations, 64);
    c->ncalls = 0;
    c->open_index = -1;
}

static Value field(Value obj, const char *name) {
    Value v = v_none();
    if (obj.type == VT_DICT) dict_get_str(obj.u.dict, name, strlen(name), &v);
    return v;
}

static void put_str(StrBuf *sb, Value v) {
    if (v.type == VT_STR) sb_put(sb, v.u.s->data, v.u.s->len);
}

static void put_json(Rt *rt, StrBuf *sb, Value v) {
    JsonDumpOpts o;
    json_opts_default(&o);
    json_dump(rt, sb, v, &o);
    sb_putc(sb, '\n');
}

/* Calls are written as "\x01id\x02name\x02args"; streamed arguments are
 * appended as they come, so the two forms line up. */
static void call_header(StrBuf *sb, Value id, Value name) {
    sb_putc(sb, 1);
    put_str(sb, id);
    sb_putc(sb, 2);
    put_str(sb, name);
    sb_putc(sb, 2);
}

static void canon_whole(Rt *rt, Canon *c, Value msg) {
    FUZZ_CHECK(msg.type == VT_DICT);
    FUZZ_CHECK(field(msg, "role").type == VT_STR);
    put_str(&c->content, field(msg, "content"));
    put_str(&c->reasoning, field(msg, "reasoning_content"));
    Value calls = field(msg, "tool_calls");
    if (calls.type == VT_LIST) {
        for (size_t i = 0; i < calls.u.list->len; i++) {
            Value tc = calls.u.list->items[i], fn = field(tc, "function");
            call_header(&c->calls, field(tc, "id"), field(fn, "name"));
            put_str(&c->calls, field(fn, "arguments"));
            c->ncalls++;
        }
    }
    Value cites = field(msg, "citations");
    if (cites.type == VT_LIST)
        for (size_t i = 0; i < cites.u.list->len; i++) put_json(rt, &c->citations, cites.u.list->items[i]);
}

static void canon_delta(Rt *rt, Canon *c, Value d) {
    FUZZ_CHECK(d.type == VT_DICT && dict_len(d.u.dict) == 1);
    Value v;
    if ((v = field(d, "content")).type != VT_NONE) {
        FUZZ_CHECK(v.type == VT_STR);
        put_str(&c->content, v);
    } else if ((v = field(d, "reasoning_content")).type != VT_NONE) {
        FUZZ_CHECK(v.type == VT_STR);
        put_str(&c->reasoning, v);
    } else if ((v = field(d, "citations")).type != VT_NONE) {
        FUZZ_CHECK(v.type == VT_LIST);
        for (size_t i = 0; i < v.u.list->len; i++) put_json(rt, &c->citations, v.u.list->items[i]);
    } else {
        v = field(d, "tool_calls");
        FUZZ_CHECK(v.type == VT_LIST && v.u.list->len == 1);
        Value tc = v.u.list->items[0], fn = field(tc, "function"), index = field(tc, "index");
        FUZZ_CHECK(index.type == VT_INT && fn.type == VT_DICT);
        if (field(tc, "id").type != VT_NONE) {        /* a new call: the next index */
            FUZZ_CHECK(index.u.i == c->open_index + 1);
            c->open_index = (int)index.u.i;
            c->ncalls++;
            call_header(&c->calls, field(tc, "id"), field(fn, "name"));
        } else {
            FUZZ_CHECK(index.u.i == c->open_index && c->open_index >= 0);
        }
        put_str(&c->calls, field(fn, "arguments"));
    }
}

static void canon_lines(Rt *rt, Canon *c, const char *s, size_t n) {
    while (n) {
        const char *nl = memchr(s, '\n', n);
        FUZZ_CHECK(nl != NULL);
        canon_delta(rt, c, json_parse(rt, s, (size_t)(nl - s)));
        n -= (size_t)(nl + 1 - s);
        s = nl + 1;
    }
}

static bool same(const StrBuf *a, const StrBuf *b) {
    return a->len == b->len && memcmp(a->p, b->p, a->len) == 0;
}

static bool canon_equal(const Canon *a, const Canon *b) {
    return same(&a->content, &b->content) && same(&a->reasoning, &b->reasoning) &&
           same(&a->calls, &b->calls) && same(&a->citations, &b->citations);
}

/* ---- streaming ---- */

/* Stream the reply in chunks drawn from `seed` (0: one chunk); false when a
 * limit stopped it. Drains at random points too (a drain closes the open
 * line, which changes the stream's internal path). */
static bool stream(Rt *rt, const cf_reply_options *opt, const char *text, size_t len, uint32_t seed,
                   Canon *out) {
    cf_error err;
    cf_reply_stream *s = cf_reply_stream_new(opt, &err);
    FUZZ_CHECK(s != NULL);
    StrBuf deltas;
    sb_init(rt, &deltas, 256);
    bool ok = true;
    size_t at = 0, dlen;
    while (at < len) {
        size_t n = len - at;
        if (seed) {
            seed = seed * 1103515245u + 12345u;
            n = 1 + (seed >> 16) % 17;
            if (n > len - at) n = len - at;
        }
        if (!cf_reply_stream_feed(s, text + at, n, &err)) {
            fuzz_check_error(&err);
            FUZZ_CHECK(err.kind == CF_ERR_LIMIT || err.kind == CF_ERR_MEMORY);
            ok = false;
            break;
        }
        at += n;
        if (!seed || (seed >> 8) % 3 == 0) {
            const char *d = cf_reply_stream_drain(s, &dlen);
            sb_put(&deltas, d, dlen);
        }
    }
    if (ok && !cf_reply_stream_finish(s, &err)) {
        fuzz_check_error(&err);
        ok = false;
    }
    if (ok) {
        const char *d = cf_reply_stream_drain(s, &dlen);
        sb_put(&deltas, d, dlen);
    }
    cf_reply_stream_free(s);
    if (ok) canon_lines(rt, out, deltas.p, deltas.len);
    return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    cf_reply_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format = (cf_reply_format)(((data[0] & 3) | (data[0] >> 4) << 2) % (CF_REPLY_XLAM + 1));
    opt.reasoning_open = data[0] & 4;
    opt.tools_json = data[0] & 8 ? TOOLS : NULL;
    opt.limits = &limits;
    uint32_t seed = data[1] | 0x100u;
    const char *text = (const char *)data + 2;
    size_t len = size - 2;

    cf_error err;
    size_t whole_len;
    char *whole = cf_parse_reply(text, len, &opt, &whole_len, &err);
    if (!whole) {
        fuzz_check_error(&err);
        FUZZ_CHECK(err.kind == CF_ERR_LIMIT || err.kind == CF_ERR_MEMORY);
    }

    Arena arena;
    arena_init(&arena, 0);
    jmp_buf jb;
    cf_error rt_err;
    Rt rt;
    memset(&rt, 0, sizeof rt);
    rt.arena = &arena;
    rt.jb = &jb;
    rt.err = &rt_err;
    cf_limits_default(&rt.lim);
    if (setjmp(jb)) __builtin_trap();   /* a delta or the message is not valid JSON */

    Canon one, chunked, parsed;
    canon_init(&rt, &one);
    canon_init(&rt, &chunked);
    canon_init(&rt, &parsed);
    bool one_ok = stream(&rt, &opt, text, len, 0, &one);
    bool chunked_ok = stream(&rt, &opt, text, len, seed, &chunked);
    FUZZ_CHECK(one_ok == chunked_ok);
    if (one_ok) FUZZ_CHECK(canon_equal(&one, &chunked));
    if (whole) {
        FUZZ_CHECK(whole[whole_len] == 0);
        canon_whole(&rt, &parsed, json_parse(&rt, whole, whole_len));
        if (one_ok) {
            FUZZ_CHECK(one.ncalls >= parsed.ncalls);
            if (one.ncalls == parsed.ncalls) FUZZ_CHECK(canon_equal(&parsed, &one));
        }
        free(whole);
    }
    arena_release(&arena);
    return 0;
}
