/* test_reply.c — reply parsing, whole and streaming.
 *
 * Cases: tests/reply_cases/cases.jsonl (from tests/reply_cases/gen_cases.py:
 * replies rendered by the seed templates themselves, or assembled from the
 * same call writers; expected messages computed in Python) and
 * tests/reply_cases/families.jsonl (gen_family_cases.py: the hand-written
 * families, rendered by corpus templates or written from their syntax).
 *   1. whole parse == the expected message, byte for byte;
 *   2. streaming, for chunk sizes 1..16 and 40 random chunkings per case:
 *      every feed succeeds, every delta line is a JSON object, a call's
 *      header comes once and before its arguments (nothing is retracted);
 *      the reassembled message == the whole parse for well-formed replies;
 *      for broken ones, no word of the reply is lost;
 *   3. API: names, detection on the seed templates, errors, limits, drain.
 * Run from the repository root: build/tests/test_reply [cases.jsonl] [seeds dir] */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"
#include "engine/json.h"
#include "engine/value.h"

static int passed, failed;

static void check(bool ok, const char *what, const char *detail) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    if (failed <= 30) fprintf(stderr, "FAIL %s%s%s\n", what, detail ? "\n    " : "", detail ? detail : "");
}

/* ---- the test's own JSON work: `rt` holds the cases, `srt` is scratch
 * for one stream (released after each) ---- */

static Arena arena, scratch;
static Rt rt, srt;
static cf_error rt_error;

static void rt_setup(Rt *r, Arena *a) {
    arena_init(a, 0);
    r->arena = a;
    r->err = &rt_error;
    memset(&r->lim, 0, sizeof r->lim);
    limits_resolve(&r->lim);
}

static void scratch_reset(void) {
    arena_release(&scratch);
    arena_init(&scratch, 0);
}

/* Parse JSON; false (no throw) when invalid. */
static bool try_parse(Rt *r, const char *s, size_t n, Value *out) {
    jmp_buf jb, *saved = r->jb;
    r->jb = &jb;
    if (setjmp(jb)) {
        r->jb = saved;
        return false;
    }
    *out = json_parse(r, s, n);
    r->jb = saved;
    return true;
}

static Value field(Value obj, const char *key) {
    Value v = v_none();
    if (obj.type == VT_DICT) dict_get_str(obj.u.dict, key, strlen(key), &v);
    return v;
}

static const char *cstr(Value v) { return v.type == VT_STR ? v.u.s->data : NULL; }

static char *file_text(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) buf = realloc(buf, (cap *= 2) + 1);
    }
    fclose(f);
    if (buf) buf[n] = 0;
    *len = n;
    return buf;
}

/* ---- a case ---- */

typedef struct Case {
    const char *name;
    cf_reply_options opt;
    char *reply;
    size_t len;
    const char *expect;
    bool broken;
    Value keywords;
} Case;

static bool load_case(Value c, Case *out) {
    memset(out, 0, sizeof *out);
    out->name = cstr(field(c, "name"));
    if (!out->name || !cf_reply_format_from_name(cstr(field(c, "format")), &out->opt.format))
        return false;
    Value tools = field(c, "tools"), tail = field(c, "tail"), hex = field(c, "reply_hex");
    if (tools.type == VT_LIST) {
        StrBuf sb;
        sb_init(&rt, &sb, 256);
        JsonDumpOpts o;
        json_opts_default(&o);
        json_dump(&rt, &sb, tools, &o);
        sb_putc(&sb, 0);
        out->opt.tools_json = sb.p;
    }
    out->opt.prompt_tail = cstr(tail);
    out->opt.json_response = v_truthy(field(c, "json_response"));
    if (hex.type == VT_STR) {
        out->len = hex.u.s->len / 2;
        out->reply = rt_alloc(&rt, out->len + 1);
        for (size_t i = 0; i < out->len; i++) {
            unsigned byte;
            sscanf(hex.u.s->data + 2 * i, "%2x", &byte);
            out->reply[i] = (char)byte;
        }
    } else {
        out->reply = (char *)cstr(field(c, "reply"));
        out->len = out->reply ? strlen(out->reply) : 0;
    }
    out->expect = cstr(field(c, "expect"));
    out->broken = v_truthy(field(c, "broken"));
    out->keywords = field(c, "keywords");
    return out->reply && out->expect;
}

/* ---- reassembling a stream ---- */

typedef struct Rebuilt {
    StrBuf content, reasoning, calls, citations;
    int ncalls, ncitations;
    StrBuf id, name, args;   /* the call being streamed */
    int index;               /* its index, -1 if none */
    StrBuf all_text;         /* every text fragment in the order it came (a call broken
                                mid-word continues the word in content) */
    const char *problem;
} Rebuilt;

static void rebuilt_init(Rebuilt *r) {
    StrBuf *bufs[] = {&r->content, &r->reasoning, &r->calls, &r->citations, &r->id, &r->name,
                      &r->args, &r->all_text};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) sb_init(&srt, bufs[k], 64);
    r->ncalls = r->ncitations = 0;
    r->index = -1;
    r->problem = NULL;
}

static void put_string(StrBuf *sb, const StrBuf *s) { json_write_string(sb, s->p, s->len, false); }

static void finish_call(Rebuilt *r) {
    if (r->index < 0) return;
    if (r->ncalls++) sb_putc(&r->calls, ',');
    sb_puts(&r->calls, "{\"id\":");
    put_string(&r->calls, &r->id);
    sb_puts(&r->calls, ",\"type\":\"function\",\"function\":{\"name\":");
    put_string(&r->calls, &r->name);
    sb_puts(&r->calls, ",\"arguments\":");
    put_string(&r->calls, &r->args);
    sb_puts(&r->calls, "}}");
    r->index = -1;
}

static void append_text(Rebuilt *r, StrBuf *to, Value v) {
    if (v.type != VT_STR) {
        r->problem = "text delta is not a string";
        return;
    }
    sb_put(to, v.u.s->data, v.u.s->len);
    sb_put(&r->all_text, v.u.s->data, v.u.s->len);
}

static void take_delta(Rebuilt *r, Value d) {
    if (d.type != VT_DICT || dict_len(d.u.dict) != 1) {
        r->problem = "delta is not an object with one field";
        return;
    }
    Value v;
    if ((v = field(d, "content")).type != VT_NONE) append_text(r, &r->content, v);
    else if ((v = field(d, "reasoning_content")).type != VT_NONE) append_text(r, &r->reasoning, v);
    else if ((v = field(d, "citations")).type == VT_LIST) {
        JsonDumpOpts o;
        json_opts_default(&o);
        o.item_sep = ",";
        o.key_sep = ":";
        for (size_t k = 0; k < v.u.list->len; k++) {
            if (r->ncitations++) sb_putc(&r->citations, ',');
            size_t at = r->citations.len;
            json_dump(&srt, &r->citations, v.u.list->items[k], &o);
            sb_put(&r->all_text, r->citations.p + at, r->citations.len - at);
        }
    } else if ((v = field(d, "tool_calls")).type == VT_LIST && v.u.list->len == 1) {
        Value tc = v.u.list->items[0], fn = field(tc, "function");
        Value index = field(tc, "index"), id = field(tc, "id"), name = field(fn, "name"),
              args = field(fn, "arguments");
        if (index.type != VT_INT || fn.type != VT_DICT) {
            r->problem = "tool_calls delta without index/function";
            return;
        }
        if (id.type != VT_NONE) {       /* a new call: exactly the next index */
            if (index.u.i != r->ncalls + (r->index >= 0) || name.type != VT_STR ||
                !str_eqz(field(tc, "type").u.s, "function")) {
                r->problem = "call header out of order or incomplete";
                return;
            }
            finish_call(r);
            r->index = (int)index.u.i;
            r->id.len = r->name.len = r->args.len = 0;
            sb_put(&r->id, id.u.s->data, id.u.s->len);
            sb_put(&r->name, name.u.s->data, name.u.s->len);
            sb_printf(&r->all_text, "\n%s\n%s\n", id.u.s->data, name.u.s->data);
        } else if (index.u.i != r->index || name.type != VT_NONE) {
            r->problem = "arguments for a call that is not the open one";
            return;
        }
        if (args.type == VT_STR) append_text(r, &r->args, args);
    } else {
        r->problem = "unknown delta";
    }
}

static void take_lines(Rebuilt *r, const char *s, size_t n) {
    while (n && !r->problem) {
        const char *nl = memchr(s, '\n', n);
        if (!nl) {
            r->problem = "deltas do not end with a newline";
            return;
        }
        Value d;
        if (!try_parse(&srt, s, (size_t)(nl - s), &d)) r->problem = "delta line is not JSON";
        else take_delta(r, d);
        n -= (size_t)(nl + 1 - s);
        s = nl + 1;
    }
}

static char *rebuilt_message(Rebuilt *r) {
    finish_call(r);
    StrBuf sb;
    sb_init(&srt, &sb, 256);
    sb_puts(&sb, "{\"role\":\"assistant\",\"content\":");
    if (r->content.len) put_string(&sb, &r->content);
    else sb_puts(&sb, "null");
    sb_puts(&sb, ",\"reasoning_content\":");
    if (r->reasoning.len) put_string(&sb, &r->reasoning);
    else sb_puts(&sb, "null");
    if (r->ncalls) {
        sb_puts(&sb, ",\"tool_calls\":[");
        sb_put(&sb, r->calls.p, r->calls.len);
        sb_putc(&sb, ']');
    }
    if (r->ncitations) {
        sb_puts(&sb, ",\"citations\":[");
        sb_put(&sb, r->citations.p, r->citations.len);
        sb_putc(&sb, ']');
    }
    sb_putc(&sb, '}');
    sb_putc(&sb, 0);
    return sb.p;
}

/* Feed in the given chunk sizes (cycled), draining after every drain_every
 * feeds (a drain closes the open line, which also turns the stream's fast
 * path off until the next feed: both paths need covering); NULL +
 * *problem when anything is off. */
static char *stream(const Case *c, const size_t *sizes, size_t nsizes, size_t drain_every, Rebuilt *r) {
    cf_error err;
    rebuilt_init(r);
    cf_reply_stream *s = cf_reply_stream_new(&c->opt, &err);
    if (!s) {
        r->problem = "cf_reply_stream_new failed";
        return NULL;
    }
    size_t len;
    for (size_t i = 0, k = 0; i < c->len && !r->problem; k++) {
        size_t n = sizes[k % nsizes];
        if (n > c->len - i) n = c->len - i;
        if (!cf_reply_stream_feed(s, c->reply + i, n, &err)) r->problem = "feed failed";
        i += n;
        if (k % drain_every == 0) {
            const char *d = cf_reply_stream_drain(s, &len);
            take_lines(r, d, len);
        }
    }
    if (!r->problem && !cf_reply_stream_finish(s, &err)) r->problem = "finish failed";
    const char *d = cf_reply_stream_drain(s, &len);
    take_lines(r, d, len);
    cf_reply_stream_free(s);
    return r->problem ? NULL : rebuilt_message(r);
}

static bool is_word_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

static bool is_keyword(const Case *c, const char *w, size_t n) {
    for (size_t k = 0; c->keywords.type == VT_LIST && k < c->keywords.u.list->len; k++) {
        const Str *kw = c->keywords.u.list->items[k].u.s;
        if (kw->len == n && memcmp(kw->data, w, n) == 0) return true;
    }
    return false;
}

/* A markup word glued to text (a marker ending or starting in a letter:
 * "<|im_start|>assistant" + "The", "f" + "functions."): the text part
 * is in the output. */
static bool glued_keyword(const Case *c, const char *w, size_t n, const char *blob) {
    char part[256];
    for (size_t k = 0; c->keywords.type == VT_LIST && k < c->keywords.u.list->len; k++) {
        const Str *kw = c->keywords.u.list->items[k].u.s;
        if (!kw->len || kw->len >= n) continue;
        size_t rest = n - kw->len;
        if (memcmp(w, kw->data, kw->len) == 0) memcpy(part, w + kw->len, rest);
        else if (memcmp(w + rest, kw->data, kw->len) == 0) memcpy(part, w, rest);
        else continue;
        part[rest] = 0;
        if (strstr(blob, part)) return true;
    }
    return false;
}

/* Every word of the reply (bar markup words) is somewhere in the output.
 * Whitespace is ignored: a word broken by a failed call continues in
 * content after whatever whitespace content held back. */
static const char *lost_word(const Case *c, const StrBuf *all) {
    static char word[256];
    char *blob = rt_alloc(&srt, all->len + 1), *w = blob;
    for (size_t i = 0; i < all->len; i++)
        if (!strchr(" \t\n\r\f\v", all->p[i]) || !all->p[i]) *w++ = all->p[i];
    *w = 0;
    for (size_t i = 0; i < c->len;) {
        if (!is_word_byte((unsigned char)c->reply[i])) {
            i++;
            continue;
        }
        if (i && c->reply[i - 1] == '\\') {   /* a JSON escape: \n, \u00e9... decode away */
            i += c->reply[i] == 'u' ? 5 : 1;
            continue;
        }
        size_t k = i;
        while (k < c->len && is_word_byte((unsigned char)c->reply[k])) k++;
        size_t n = k - i < sizeof word - 1 ? k - i : sizeof word - 1;
        memcpy(word, c->reply + i, n);
        word[n] = 0;
        bool ascii = true, digits = true;
        for (size_t j = 0; j < n; j++) {
            ascii &= (unsigned char)word[j] < 0x80;
            digits &= word[j] >= '0' && word[j] <= '9';
        }
        const char *w = word;
        while (digits && w[0] == '0' && w[1]) w++;   /* numbers may come back canonical */
        if (ascii && !is_keyword(c, word, n) && !strstr(blob, w) && !glued_keyword(c, word, n, blob)) return word;
        i = k;
    }
    return NULL;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static size_t rng(size_t bound) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (size_t)((rng_state >> 33) % bound);
}

static void run_case(const Case *c) {
    char what[512];
    cf_error err;
    size_t len;
    char *whole = cf_parse_reply(c->reply, c->len, &c->opt, &len, &err);
    snprintf(what, sizeof what, "%s: whole parse", c->name);
    if (!whole) {
        check(false, what, err.message);
        return;
    }
    char *detail = rt_alloc(&srt, strlen(whole) + strlen(c->expect) + 32);
    sprintf(detail, " got: %s\n   want: %s", whole, c->expect);
    check(strcmp(whole, c->expect) == 0 && strlen(whole) == len, what, detail);

    size_t sizes[64];
    for (int round = 0; round < 16 + 40 + 2; round++) {
        size_t nsizes = 1;
        if (round < 16) {
            sizes[0] = (size_t)round + 1;
            snprintf(what, sizeof what, "%s: stream in %d-byte chunks", c->name, round + 1);
        } else if (round >= 56) {   /* byte by byte, drained rarely: the fast path's leaf */
            sizes[0] = 1;
            snprintf(what, sizeof what, "%s: stream byte by byte, drained %s", c->name,
                     round == 56 ? "at the end" : "every 13 bytes");
        } else {
            nsizes = 64;
            for (size_t k = 0; k < nsizes; k++) sizes[k] = rng(4) == 0 ? rng(3) : 1 + rng(48);
            snprintf(what, sizeof what, "%s: stream in random chunks #%d", c->name, round - 16);
        }
        Rebuilt r;
        size_t drain_every = round == 56 ? 1000000 : round == 57 ? 13
                           : round % 3 == 0 ? 1 : round % 3 == 1 ? 1000000 : 1 + rng(20);
        char *got = stream(c, sizes, nsizes, drain_every, &r);
        if (!got) {
            check(false, what, r.problem);
            continue;
        }
        if (!c->broken) {
            char *d = rt_alloc(&srt, strlen(got) + strlen(whole) + 32);
            sprintf(d, " got: %s\n   want: %s", got, whole);
            check(strcmp(got, whole) == 0, what, d);
        } else {
            /* broken: may differ from the whole parse, never from another chunking */
            size_t all = c->len ? c->len : 1;
            Rebuilt r1;
            char *one = stream(c, &all, 1, 1, &r1);
            char *diff = rt_alloc(&srt, strlen(got) + (one ? strlen(one) : strlen(r1.problem)) + 32);
            sprintf(diff, " got: %s\n   one chunk: %s", got, one ? one : r1.problem);
            check(one && strcmp(got, one) == 0, what, diff);
            const char *w = lost_word(c, &r.all_text);
            char d[400];
            snprintf(d, sizeof d, "the word \"%s\" is lost; got %.300s", w ? w : "", got);
            check(!w, what, d);
        }
        scratch_reset();
    }
    free(whole);
}

/* Broken replies, made by mutating a case: whole and streamed parses
 * never fail, deltas stay well-formed, and no word of the reply is lost
 * (the whole parse keeps broken markup as content; the stream closes a
 * broken call as received). */
static void run_mutations(const Case *c, int count) {
    static const char pieces[] = "<>{}[]\":,/|\\\n _";
    char what[512];
    for (int m = 0; m < count; m++) {
        Case mc = *c;
        size_t cap = c->len + 16;
        char *text = rt_alloc(&srt, cap);
        memcpy(text, c->reply, c->len);
        size_t len = c->len;
        for (int edits = 1 + (int)rng(3); edits-- && len;) {
            size_t at = rng(len);
            switch (rng(4)) {
            case 0: memmove(text + at, text + at + 1, len - at - 1); len--; break;       /* delete */
            case 1: len = at + 1; break;                                                   /* cut */
            case 2: if (len < cap) { memmove(text + at + 1, text + at, len - at); len++; } break; /* dup */
            default: text[at] = pieces[rng(sizeof pieces - 1)];                            /* replace */
            }
        }
        mc.reply = text;
        mc.len = len;
        cf_error err;
        char *whole = cf_parse_reply(text, len, &c->opt, NULL, &err);
        snprintf(what, sizeof what, "%s: mutation %d (whole)", c->name, m);
        Value msg;
        bool ok = whole && try_parse(&srt, whole, strlen(whole), &msg);
        check(ok, what, whole ? whole : err.message);
        if (ok) {
            StrBuf all;
            sb_init(&srt, &all, 256);
            static const char *const fields[] = {"content", "reasoning_content"};
            for (int f = 0; f < 2; f++) {
                Value v = field(msg, fields[f]);
                if (v.type == VT_STR) sb_put(&all, v.u.s->data, v.u.s->len);
                sb_putc(&all, '\n');
            }
            Value cites = field(msg, "citations");
            if (cites.type == VT_LIST) {
                JsonDumpOpts o;
                json_opts_default(&o);
                json_dump(&srt, &all, cites, &o);
            }
            Value calls = field(msg, "tool_calls");
            for (size_t k = 0; calls.type == VT_LIST && k < calls.u.list->len; k++) {
                Value tc = calls.u.list->items[k], fn = field(tc, "function");
                static const char *const parts[] = {"id", "name", "arguments"};
                for (int q = 0; q < 3; q++) {
                    Value v = field(q ? fn : tc, parts[q]);
                    if (v.type == VT_STR) sb_put(&all, v.u.s->data, v.u.s->len);
                    sb_putc(&all, '\n');
                }
            }
            const char *w = lost_word(&mc, &all);
            char d[700];
            snprintf(d, sizeof d, "the word \"%s\" is lost; reply %.200s; got %.300s", w ? w : "", text, whole);
            check(!w, what, d);
        }
        free(whole);
        size_t sizes[16];
        for (size_t k = 0; k < 16; k++) sizes[k] = 1 + rng(7);
        Rebuilt r, r1;
        char *got = stream(&mc, sizes, 16, 1 + rng(5), &r);
        size_t all = len ? len : 1;
        char *one = got ? stream(&mc, &all, 1, 1, &r1) : NULL;
        snprintf(what, sizeof what, "%s: mutation %d (stream)", c->name, m);
        if (!got) {
            check(false, what, r.problem);
        } else {
            char *d1 = rt_alloc(&srt, strlen(got) + (one ? strlen(one) : 0) + 64);
            sprintf(d1, " got: %s\n   one chunk: %s", got, one ? one : "(failed)");
            check(one && strcmp(got, one) == 0, what, d1);
            const char *w = lost_word(&mc, &r.all_text);
            char d[700];
            snprintf(d, sizeof d, "the word \"%s\" is lost; reply %.200s; got %.300s", w ? w : "", text, got);
            check(!w, what, d);
        }
        scratch_reset();
    }
}

/* ---- API ---- */

static void test_names(void) {
    static const char *const names[] = {"plain", "glm45", "hermes", "command-a"};
    for (int f = 0; f < 4; f++) {
        cf_reply_format got;
        check(strcmp(cf_reply_format_name((cf_reply_format)f), names[f]) == 0 &&
                  cf_reply_format_from_name(names[f], &got) && got == (cf_reply_format)f,
              names[f], "format name round trip");
    }
    cf_reply_format got;
    check(!cf_reply_format_from_name("qwen", &got) && !cf_reply_format_from_name(NULL, &got),
          "unknown format name", NULL);
}

static void test_detect(const char *seeds) {
    static const struct { const char *file; cf_reply_format f; } seed_formats[] = {
        {"glm45.jinja", CF_REPLY_GLM45},
        {"toolcall-qwen3.jinja", CF_REPLY_HERMES},
        {"nanbeige.jinja", CF_REPLY_HERMES},
        {"reasoning-qwen25.jinja", CF_REPLY_HERMES},
        {"command-a-reasoning.jinja", CF_REPLY_COMMAND_A},
    };
    for (size_t k = 0; k < sizeof seed_formats / sizeof seed_formats[0]; k++) {
        char path[2048];
        size_t len;
        snprintf(path, sizeof path, "%.1000s/%s", seeds, seed_formats[k].file);
        char *text = file_text(path, &len);
        if (!text) {
            fprintf(stderr, "note: %s not found, detection test skipped\n", path);
            continue;
        }
        cf_reply_format f = cf_reply_format_detect(text, len);
        check(f == seed_formats[k].f, seed_formats[k].file, cf_reply_format_name(f));
        free(text);
    }
    /* one marker alone is not enough */
    const char *only_tag = "{{ '<tool_call>' }}{{ messages }}";
    check(cf_reply_format_detect(only_tag, strlen(only_tag)) == CF_REPLY_PLAIN, "detect: <tool_call> alone",
          NULL);
    const char *glm_like = "<|assistant|><tool_call>{{ name }}<arg_key>k</arg_key>";
    check(cf_reply_format_detect(glm_like, strlen(glm_like)) == CF_REPLY_GLM45, "detect: glm markers",
          NULL);
}

static void test_errors(void) {
    cf_error err;
    cf_reply_options opt = {0};
    opt.format = CF_REPLY_HERMES;
    opt.tools_json = "[{\"name\": ";
    check(!cf_parse_reply("x", 1, &opt, NULL, &err) && err.kind == CF_ERR_JSON, "bad tools JSON",
          err.message);
    check(!cf_reply_stream_new(&opt, &err) && err.kind == CF_ERR_JSON, "bad tools JSON (stream)", NULL);
    opt.tools_json = NULL;
    opt.format = CF_REPLY_FORMAT_COUNT;
    check(!cf_parse_reply("x", 1, &opt, NULL, &err) && err.kind == CF_ERR_USAGE, "bad format", NULL);

    /* a limit unwinds into an error, never a crash; the stream is then refused */
    cf_limits lim = {0};
    lim.max_string = 64;
    opt.format = CF_REPLY_HERMES;
    opt.limits = &lim;
    char big[4096];
    memset(big, 'a', sizeof big);
    check(!cf_parse_reply(big, sizeof big, &opt, NULL, &err) && err.kind == CF_ERR_LIMIT, "max_string",
          err.message);
    cf_reply_stream *s = cf_reply_stream_new(&opt, &err);
    bool fed = cf_reply_stream_feed(s, big, sizeof big, &err);
    check(!fed && err.kind == CF_ERR_LIMIT, "max_string (stream)", err.message);
    check(!cf_reply_stream_feed(s, "a", 1, &err) && err.kind == CF_ERR_USAGE, "feed after failure", NULL);
    size_t len;
    check(cf_reply_stream_drain(s, &len)[0] == 0 && len == 0, "drain after failure", NULL);
    cf_reply_stream_free(s);

    opt.limits = NULL;
    s = cf_reply_stream_new(&opt, &err);
    check(cf_reply_stream_feed(s, "hi ", 3, &err), "feed", NULL);
    const char *d = cf_reply_stream_drain(s, &len);
    check(strcmp(d, "{\"content\":\"hi\"}\n") == 0, "drain merges and holds trailing space", d);
    d = cf_reply_stream_drain(s, &len);
    check(len == 0 && d[0] == 0, "second drain is empty", d);
    check(cf_reply_stream_feed(s, "<too", 4, &err) && cf_reply_stream_drain(s, &len) && len == 0,
          "a possible tag is held", NULL);
    check(cf_reply_stream_feed(s, "l_caller", 8, &err), "feed", NULL);
    d = cf_reply_stream_drain(s, &len);
    check(strcmp(d, "{\"content\":\" <tool_caller\"}\n") == 0, "held bytes released as text", d);
    check(cf_reply_stream_finish(s, &err) && !cf_reply_stream_finish(s, &err) && err.kind == CF_ERR_USAGE,
          "finish twice", NULL);
    check(!cf_reply_stream_feed(s, "x", 1, &err), "feed after finish", NULL);
    cf_reply_stream_free(s);
    cf_reply_stream_free(NULL);
    check(!cf_reply_stream_feed(NULL, "x", 1, &err) && err.kind == CF_ERR_USAGE, "NULL stream", NULL);

    /* a reply cut inside a UTF-8 sequence: held, then one U+FFFD at the end */
    s = cf_reply_stream_new(NULL, &err);
    cf_reply_stream_feed(s, "\xe4\xb8", 2, &err);
    check(cf_reply_stream_drain(s, &len) && len == 0, "partial UTF-8 held", NULL);
    cf_reply_stream_feed(s, "\xad", 1, &err);
    d = cf_reply_stream_drain(s, &len);
    check(strcmp(d, "{\"content\":\"\xe4\xb8\xad\"}\n") == 0, "UTF-8 completed across feeds", d);
    cf_reply_stream_feed(s, "\xe4", 1, &err);
    cf_reply_stream_finish(s, &err);
    d = cf_reply_stream_drain(s, &len);
    check(strcmp(d, "{\"content\":\"\xef\xbf\xbd\"}\n") == 0, "cut UTF-8 at the end", d);
    cf_reply_stream_free(s);

    /* the step budget holds on every path, the stream's fast path included */
    cf_limits few = {0};
    few.max_steps = 3;     /* about 3 KB of reply */
    opt.limits = &few;
    opt.format = CF_REPLY_HERMES;
    char text[8192];
    for (size_t i = 0; i < sizeof text; i++) text[i] = "words and <more> \"text\"\n"[i % 24];
    check(!cf_parse_reply(text, sizeof text, &opt, NULL, &err) && err.kind == CF_ERR_LIMIT, "max_steps",
          err.message);
    s = cf_reply_stream_new(&opt, &err);
    bool stopped = false;
    for (size_t i = 0; i < sizeof text && !stopped; i++) stopped = !cf_reply_stream_feed(s, text + i, 1, &err);
    check(stopped && err.kind == CF_ERR_LIMIT, "max_steps (stream, byte by byte)", err.message);
    cf_reply_stream_free(s);
    opt.limits = NULL;

    /* reasoning_open without a tail */
    opt.reasoning_open = true;
    char *m = cf_parse_reply("r</think>c", 10, &opt, NULL, &err);
    check(m && strcmp(m, "{\"role\":\"assistant\",\"content\":\"c\",\"reasoning_content\":\"r\"}") == 0,
          "reasoning_open", m);
    free(m);
}

/* Every case of one file; -1 when it cannot be read. */
static int run_file(const char *path) {
    size_t len;
    char *text = file_text(path, &len);
    if (!text) {
        fprintf(stderr, "cannot read %s\n", path);
        return -1;
    }
    int ncases = 0;
    for (char *line = text, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) nl = line + strlen(line);
        Value c;
        Case cs;
        if (nl > line && try_parse(&rt, line, (size_t)(nl - line), &c) && load_case(c, &cs)) {
            run_case(&cs);
            run_mutations(&cs, 30);
            ncases++;
        } else if (nl > line) {
            check(false, "unreadable case line", NULL);
        }
        if (!*nl) break;
    }
    free(text);
    return ncases;
}

int main(int argc, char **argv) {
    /* the seed families' cases, then the described formats' (gen_engine_cases.py) */
    const char *files[] = {argc > 1 ? argv[1] : "tests/reply_cases/cases.jsonl",
                           argc > 1 ? NULL : "tests/reply_cases/engine_cases.jsonl",
                           argc > 1 ? NULL : "tests/reply_cases/families.jsonl"};
    static char seeds[1100];
    if (argc > 2) snprintf(seeds, sizeof seeds, "%.1000s", argv[2]);
    else if (getenv("CHATFMT_SHARED")) snprintf(seeds, sizeof seeds, "%.1000s/seeds", getenv("CHATFMT_SHARED"));
    else snprintf(seeds, sizeof seeds, "../shared/seeds");
    rt_setup(&rt, &arena);
    rt_setup(&srt, &scratch);
    jmp_buf jb;
    rt.jb = srt.jb = &jb;
    if (setjmp(jb)) {
        fprintf(stderr, "test harness error: %s\n", rt_error.message);
        return 2;
    }
    test_names();
    test_detect(seeds);
    test_errors();

    int ncases = 0;
    for (size_t f = 0; f < sizeof files / sizeof files[0] && files[f]; f++) {
        int n = run_file(files[f]);
        if (n < 0) return 2;
        ncases += n;
    }
    printf("%d cases\n%d passed, %d failed\n", ncases, passed, failed);
    arena_release(&arena);
    arena_release(&scratch);
    return failed ? 1 : 0;
}
