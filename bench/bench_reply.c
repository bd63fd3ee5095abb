/* bench_reply.c — reply parsing throughput on a 1 MB reply per format:
 * whole parse, and streaming in 1-byte chunks (drained every 4 KB of input,
 * as a server relaying tokens in batches would; and drained after every
 * byte, the worst case), plus 4 KB chunks. Targets: whole >= 200 MB/s;
 * 1-byte streaming within 3x of whole.
 *
 * The described formats' replies are written from their descriptions
 * (src/reply/formats.c): what a grammar would let a model write.
 *
 * Build and run (from the repository root, after make):
 *   cc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc bench/bench_reply.c build/libchatfmt.a -lm -o build/bench_reply
 *   build/bench_reply [MB] [FORMAT...]
 * Times are process CPU time (other load on the machine does not count).
 * Exit status 1 when a target is missed; 2 when a reply does not parse
 * into the calls it was made with (the bench would time the wrong thing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "chatfmt.h"
#include "reply/format_desc.h"

typedef struct Buf { char *p; size_t len, cap; } Buf;

static void put_n(Buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) exit(2);
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

static void put(Buf *b, const char *s) {
    if (s) put_n(b, s, strlen(s));   /* a description leaves unused markers NULL */
}

/* Prose with the odd '<', quotes, escapes and non-ASCII, like real replies. */
static void prose(Buf *b, size_t bytes, unsigned *seed) {
    static const char *const words[] = {
        "the", "model", "reasons", "about", "a < b", "and", "\"quoted\"", "caché", "中文", "🙂",
        "values", "tool", "results", "x<y>z", "step", "\\path", "so", "then", "we", "check"};
    size_t end = b->len + bytes;
    while (b->len < end) {
        *seed = *seed * 1103515245u + 12345u;
        put(b, words[(*seed >> 16) % 20]);
        put(b, (*seed >> 8) % 11 == 0 ? ".\n" : " ");
    }
}

static const char TOOLS[] =
    "[{\"type\":\"function\",\"function\":{\"name\":\"run_python\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"code\":{\"type\":\"string\"},\"timeout_s\":{\"type\":\"number\"},"
    "\"options\":{\"type\":\"object\"}}}}}]";

/* JSON string text of s (no quotes). */
static void put_json_text(Buf *b, const char *s) {
    for (const char *c = s; *c; c++) {
        char one[3] = {*c, 0, 0};
        if (*c == '"' || *c == '\\') { one[0] = '\\'; one[1] = *c; }
        else if (*c == '\n') { one[0] = '\\'; one[1] = 'n'; }
        put(b, one);
    }
}

static const char *first(const char *const *list) { return list[0] ? list[0] : ""; }

static void put_args_json(Buf *b, const char *code) {
    put(b, "{\"code\": \"");
    put_json_text(b, code);
    put(b, "\", \"timeout_s\": 2.5, \"options\": {\"lang\": \"py\", \"n\": [1, 2]}}");
}

static void put_param(Buf *b, const ReplyFormatDesc *d, const char *key, const char *value, bool string) {
    put(b, first(d->param_open));
    put(b, key);
    if (d->key_flag) {
        put(b, d->key_flag);
        put(b, string ? d->flag_string : d->flag_json);
        put(b, d->flag_close);
    } else {
        put(b, first(d->key_close));
    }
    if (d->value_open) put(b, d->value_open);
    put(b, value);
    put(b, first(d->value_close));
}

/* Calls the reply being made holds: its whole parse must find them all, or
 * the bench would time a reply that is not what it means to measure. */
static size_t calls_written;

/* A call as the description writes it. */
static void described_call(Buf *b, const ReplyFormatDesc *d, const char *code) {
    calls_written++;
    put(b, first(d->call_open));
    for (int k = 0; k < d->nheader; k++) {
        const HeaderField *h = &d->header[k];
        if (h->kind == HF_LITERAL)   /* "a|b|": the first spelling */
            put_n(b, h->text, strcspn(h->text, "|"));
        else
            put(b, h->kind == HF_ID ? "call_7" : h->kind == HF_KIMI_ID ? "functions.run_python:0" : "run_python");
        put(b, first(h->end));
    }
    switch (d->body) {
    case BODY_JSON_CALL:   /* the description's own keys (Command R: tool_name, parameters) */
        if (d->name_is_key) {
            put(b, "{\"run_python\": ");
        } else {
            put(b, "{\"");
            put(b, d->name_keys[0] ? d->name_keys[0] : "name");
            put(b, "\": \"run_python\", \"");
            put(b, d->args_keys[0] ? d->args_keys[0] : "arguments");
            put(b, "\": ");
        }
        put_args_json(b, code);
        put(b, "}");
        break;
    case BODY_JSON_ARGS:
        put_args_json(b, code);
        if (d->args_after) put(b, d->args_after);
        break;
    default:
        put_param(b, d, "code", code, true);
        put_param(b, d, "timeout_s", "2.5", false);
        put_param(b, d, "options", "{\"lang\": \"py\", \"n\": [1, 2]}", false);
        put(b, first(d->params_close));
    }
    put(b, first(d->call_close));
}

static void described_reply(Buf *b, const ReplyFormatDesc *d, size_t total, unsigned *seed) {
    size_t third = total / 3;
    if (d->think_open[0]) {
        put(b, d->think_open[0]);
        prose(b, third, seed);
        put(b, d->think_close[0]);
    }
    prose(b, third, seed);
    while (b->len < total) {   /* sections of two calls with ~2 KB of code each */
        Buf code[2] = {{0}, {0}};
        prose(&code[0], 2000, seed);
        prose(&code[1], 2000, seed);
        put(b, "\n");
        put(b, first(d->section_open));
        bool list = d->body == BODY_JSON_CALL && d->list != LIST_ONE;
        if (list) put(b, d->list == LIST_ARRAY ? "[" : "\n");
        for (int k = 0; k < 2; k++) {
            if (k && list) put(b, d->list == LIST_ARRAY ? ", " : "\n");
            if (k && !list && !d->call_open[0]) {   /* the section is the call: one each */
                put(b, first(d->section_close));
                put(b, "\n");
                put(b, first(d->section_open));
            }
            described_call(b, d, code[k].p);
            free(code[k].p);
        }
        if (list) put(b, d->list == LIST_ARRAY ? "]" : "\n");
        put(b, first(d->section_close));
    }
}

static char *make_reply(cf_reply_format f, size_t total, size_t *len) {
    Buf b = {0};
    unsigned seed = 7;
    size_t third = total / 3;
    const ReplyFormatDesc *d = reply_format_desc(f);
    if (d) {
        described_reply(&b, d, total, &seed);
        *len = b.len;
        return b.p;
    }
    /* command-a: its citations (its calls are JSON as hermes') */
    put(&b, "<|START_THINKING|>");
    prose(&b, third, &seed);
    put(&b, "<|END_THINKING|><|START_RESPONSE|>");
    while (b.len < total) {
        prose(&b, 300, &seed);
        put(&b, " <co>cited span of text</co: 0:[1,2],1:[0]>");
    }
    put(&b, "<|END_RESPONSE|><|END_OF_TURN_TOKEN|>");
    *len = b.len;
    return b.p;
}

/* The code as a JSON string's text (quote: '"') or a Python one's ('\''). */
static void put_quoted(Buf *b, const char *code, char quote) {
    for (const char *c = code; *c; c++) {
        char one[3] = {*c, 0, 0};
        if (*c == quote || *c == '\\') { one[0] = '\\'; one[1] = *c; }
        else if (*c == '\n') { one[0] = '\\'; one[1] = 'n'; }
        put(b, one);
    }
}

/* One call of run_python in the hand-written families' syntax. */
static void family_call(Buf *b, cf_reply_format f, const char *code) {
    calls_written++;
    static const char OPTS[] = "\"timeout_s\": 2.5, \"options\": {\"lang\": \"py\", \"n\": [1, 2]}}";
    switch (f) {
    case CF_REPLY_HARMONY: put(b, "<|start|>assistant<|channel|>commentary to=functions.run_python <|constrain|>json<|message|>"); break;
    case CF_REPLY_MISTRAL: put(b, "[TOOL_CALLS]run_python[ARGS]"); break;
    case CF_REPLY_FUNCTIONARY_V31: put(b, "<function=run_python>"); break;
    case CF_REPLY_FUNCTIONARY_V32: put(b, ">>>run_python\n"); break;
    case CF_REPLY_FUNCTOOLS: put(b, " functools[{\"name\": \"run_python\", \"arguments\": "); break;
    case CF_REPLY_XLAM: put(b, "[{\"name\": \"run_python\", \"arguments\": "); break;
    case CF_REPLY_LLAMA3_JSON: put(b, "{\"name\": \"run_python\", \"parameters\": "); break;
    case CF_REPLY_PYTHONIC:
        put(b, "[run_python(code='");
        put_quoted(b, code, '\'');
        put(b, "', timeout_s=2.5, options={'lang': 'py', 'n': [1, 2]})]");
        return;
    default:   /* gemma4 */
        put(b, "<|tool_call>call:run_python{code:<|\"|>");
        put(b, code);
        put(b, "<|\"|>,timeout_s:2.5,options:{lang:<|\"|>py<|\"|>,n:[1,2]}}<tool_call|>");
        return;
    }
    put(b, "{\"code\": \"");
    put_quoted(b, code, '"');
    put(b, "\", ");
    put(b, OPTS);
    if (f == CF_REPLY_HARMONY) put(b, "<|call|>");
    else if (f == CF_REPLY_FUNCTIONARY_V31) put(b, "</function>");
    else if (f == CF_REPLY_FUNCTOOLS || f == CF_REPLY_XLAM) put(b, "}]");
    else if (f == CF_REPLY_LLAMA3_JSON) put(b, "}; ");
}

/* The hand-written families: reasoning where the format has it, content,
 * then calls with ~2 KB of code each. */
static char *make_family_reply(cf_reply_format f, size_t total, size_t *len) {
    Buf b = {0};
    unsigned seed = 7;
    size_t third = total / 3;
    if (f == CF_REPLY_HARMONY) {
        put(&b, "<|channel|>analysis<|message|>");
        prose(&b, third, &seed);
        put(&b, "<|end|><|start|>assistant<|channel|>commentary<|message|>");
    } else if (f == CF_REPLY_MISTRAL) {
        put(&b, "[THINK]");
        prose(&b, third, &seed);
        put(&b, "[/THINK]");
    } else if (f == CF_REPLY_GEMMA4) {
        put(&b, "<|channel>thought\n");
        prose(&b, third, &seed);
        put(&b, "<channel|>");
    } else if (f == CF_REPLY_FUNCTIONARY_V32) {
        put(&b, "all\n");
    } else if (f == CF_REPLY_PYTHONIC || f == CF_REPLY_XLAM) {
        put(&b, "<think>");
        prose(&b, third, &seed);
        put(&b, "</think>");
    }
    prose(&b, third, &seed);
    if (f == CF_REPLY_HARMONY) put(&b, "<|end|>");
    while (b.len < total) {
        Buf code = {0};
        prose(&code, 2000, &seed);
        family_call(&b, f, code.p);
        free(code.p);
    }
    *len = b.len;
    return b.p;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);   /* CPU time: robust on a busy machine */
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static size_t sink;   /* keeps the compiler from dropping the work */

static void whole(const char *text, size_t len, const cf_reply_options *opt) {
    cf_error err;
    size_t n;
    char *m = cf_parse_reply(text, len, opt, &n, &err);
    if (!m) {
        fprintf(stderr, "parse failed: %s\n", err.message);
        exit(2);
    }
    sink += n;
    free(m);
}

static void streamed(const char *text, size_t len, const cf_reply_options *opt, size_t chunk,
                     size_t drain_every) {
    cf_error err;
    cf_reply_stream *s = cf_reply_stream_new(opt, &err);
    size_t n, since = 0;
    bool ok = true;
    if (chunk == 1) {     /* byte by byte, as a token loop would: nothing else per byte */
        for (size_t i = 0; i < len && ok; i++) {
            ok = cf_reply_stream_feed(s, text + i, 1, &err);
            if (++since == drain_every) {
                cf_reply_stream_drain(s, &n);
                sink += n;
                since = 0;
            }
        }
    }
    for (size_t i = 0; chunk > 1 && i < len && ok; i += chunk) {
        size_t k = len - i < chunk ? len - i : chunk;
        ok = cf_reply_stream_feed(s, text + i, k, &err);
        if ((since += k) >= drain_every) {
            cf_reply_stream_drain(s, &n);
            sink += n;
            since = 0;
        }
    }
    if (!ok) {
        fprintf(stderr, "feed failed: %s\n", err.message);
        exit(2);
    }
    cf_reply_stream_finish(s, &err);
    cf_reply_stream_drain(s, &n);
    sink += n;
    cf_reply_stream_free(s);
}

/* Times a needle occurs in a haystack. */
static size_t occurrences(const char *hay, size_t n, const char *needle) {
    size_t count = 0, k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++) count += memcmp(hay + i, needle, k) == 0;
    return count;
}

/* Does the reply parse into the calls it was made with, whole and streamed
 * a byte at a time? (A reply whose calls stay text would time the wrong thing.) */
static bool parses_as_made(const char *text, size_t len, const cf_reply_options *opt, size_t calls) {
    static const char CALL[] = "\"type\":\"function\",\"function\":{\"name\":\"run_python\"";
    cf_error err;
    size_t n, streamed_calls = 0;
    char *m = cf_parse_reply(text, len, opt, &n, &err);
    size_t whole_calls = m ? occurrences(m, n, CALL) : 0;
    free(m);
    cf_reply_stream *s = cf_reply_stream_new(opt, &err);
    for (size_t i = 0; s && i < len; i++) {
        cf_reply_stream_feed(s, text + i, 1, &err);
        if (i % 4096 == 4095 || i == len - 1) {
            if (i == len - 1) cf_reply_stream_finish(s, &err);
            const char *out = cf_reply_stream_drain(s, &n);
            streamed_calls += occurrences(out, n, CALL);
        }
    }
    cf_reply_stream_free(s);
    if (whole_calls == calls && streamed_calls == calls) return true;
    fprintf(stderr, "%s: the reply holds %zu calls; the whole parse found %zu, the stream %zu\n",
            cf_reply_format_name(opt->format), calls, whole_calls, streamed_calls);
    return false;
}

/* Best MB/s of each mode over many rounds (at least 10, and 4 s in all).
 * The modes take turns within a round, so a busy moment hurts them alike;
 * the best run is the one least disturbed by whatever else the machine does. */
typedef enum { WHOLE, STREAM_1B, STREAM_1B_EACH, STREAM_4K, NMODES } Mode;
static void measure(const char *text, size_t len, const cf_reply_options *opt, double best[NMODES]) {
    double spent = 0;
    for (int m = 0; m < NMODES; m++) best[m] = 0;
    for (int round = 0; round < 500 && (round < 10 || spent < 4.0); round++) {
        for (int m = 0; m < NMODES; m++) {
            double t0 = now();
            switch ((Mode)m) {
            case WHOLE: whole(text, len, opt); break;
            case STREAM_1B: streamed(text, len, opt, 1, 4096); break;
            case STREAM_1B_EACH: streamed(text, len, opt, 1, 1); break;
            default: streamed(text, len, opt, 4096, 4096); break;
            }
            double dt = now() - t0, mbs = len / dt / 1e6;
            spent += dt;
            if (mbs > best[m]) best[m] = mbs;
        }
    }
}

int main(int argc, char **argv) {
    size_t total = (size_t)((argc > 1 ? atof(argv[1]) : 1.0) * 1e6);
    cf_reply_format formats[CF_REPLY_FORMAT_COUNT];
    size_t nformats = 0;
    for (int k = 2; k < argc && nformats < CF_REPLY_FORMAT_COUNT; k++)
        if (cf_reply_format_from_name(argv[k], &formats[nformats])) nformats++;
    for (int f = CF_REPLY_GLM45; argc <= 2 && f < CF_REPLY_FORMAT_COUNT; f++) formats[nformats++] = (cf_reply_format)f;
    int missed = 0;
    printf("reply parse throughput, MB/s of CPU time (best of several runs; %.1f MB replies)\n", total / 1e6);
    printf("%-15s %10s %14s %16s %12s %8s\n", "format", "whole", "stream 1 B", "1 B, drain each",
           "stream 4 KB", "1B/whole");
    for (size_t k = 0; k < nformats; k++) {
        size_t len;
        calls_written = 0;
        char *text = formats[k] >= CF_REPLY_HARMONY ? make_family_reply(formats[k], total, &len)
                                                    : make_reply(formats[k], total, &len);
        cf_reply_options opt;
        memset(&opt, 0, sizeof opt);
        opt.format = formats[k];
        opt.tools_json = TOOLS;
        if (!parses_as_made(text, len, &opt, calls_written)) return 2;
        double best[NMODES];
        measure(text, len, &opt, best);
        double w = best[WHOLE], s1 = best[STREAM_1B], se = best[STREAM_1B_EACH], s4 = best[STREAM_4K];
        bool ok = w >= 200 && w / s1 <= 3;
        missed += !ok;
        printf("%-15s %10.0f %14.0f %16.0f %12.0f %7.1fx %s\n", cf_reply_format_name(formats[k]), w, s1, se,
               s4, w / s1, ok ? "ok" : "BELOW TARGET");
        free(text);
    }
    printf("targets: whole >= 200 MB/s, 1-byte streaming (drained per 4 KB) within 3x of whole%s\n",
           sink ? "" : " ");
    return missed ? 1 : 0;
}
