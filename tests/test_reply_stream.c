/* test_reply_stream.c — the byte-by-byte stream's bookkeeping, which
 * tests/test_reply.c (messages) cannot see:
 *   1. a drain that fails (no room to close the line within max_string)
 *      leaves the stream unusable: the next feed is refused, whatever path
 *      (one-byte leaf, fast path, machine) it would have taken;
 *   2. the step budget (max_steps, charged per KB of input) stops a reply
 *      fed one byte at a time, in every format and in text, reasoning,
 *      arguments and markup, near the same byte as when it is fed in one
 *      chunk: the bytes the leaf takes are charged too;
 *   3. strings of calls held until their end (Python and Gemma literals,
 *      JSON arguments before the model's id), which the leaf keeps without
 *      the machine: fed a byte at a time and in small chunks, the stream
 *      writes exactly what it writes fed at once (the machine alone), for
 *      escapes, UTF-8, invalid UTF-8, a backslash before non-ASCII and
 *      strings longer than the buffers that hold them.
 * Run from the repository root: build/tests/test_reply_stream */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "chatfmt.h"

static int passed, failed;

static void check(bool ok, const char *what) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL %s\n", what);
}

/* 1. For every length around the limit: either the drain returns the
 * deltas and the stream goes on, or it returns nothing and the stream
 * refuses the next feed with a usage error. Both cases occur. */
static void failed_drain(void) {
    int refused = 0, went_on = 0;
    for (int n = 20; n < 80; n++) {
        cf_limits lim;
        cf_limits_default(&lim);
        lim.max_string = 64;
        cf_reply_options opt;
        memset(&opt, 0, sizeof opt);
        opt.format = CF_REPLY_HERMES;
        opt.limits = &lim;
        cf_error err;
        cf_reply_stream *s = cf_reply_stream_new(&opt, &err);
        bool ok = true;
        for (int i = 0; i < n && ok; i++) ok = cf_reply_stream_feed(s, "a", 1, &err);
        if (ok) {
            size_t len;
            cf_reply_stream_drain(s, &len);
            bool next = cf_reply_stream_feed(s, "b", 1, &err);
            char what[96];
            snprintf(what, sizeof what, "after %d bytes and a drain of %zu bytes: feed %s", n, len,
                     next ? "accepted" : "refused");
            if (len) {
                check(next, what);
                went_on++;
            } else {
                check(!next && err.kind == CF_ERR_USAGE, what);
                refused++;
            }
        }
        cf_reply_stream_free(s);
    }
    check(refused > 0 && went_on > 0, "failed_drain: both cases occur");
}

/* Where a stream of `text` stops on the step budget: the byte count fed
 * when a feed failed with a LimitError, or 0 when none did. */
static size_t stops_at(cf_reply_format f, const char *tools, const char *text, size_t n, size_t chunk,
                       uint64_t steps) {
    cf_limits lim;
    cf_limits_default(&lim);
    lim.max_steps = steps;
    cf_reply_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format = f;
    opt.tools_json = tools;
    opt.limits = &lim;
    cf_error err;
    cf_reply_stream *s = cf_reply_stream_new(&opt, &err);
    size_t at = 0, len;
    bool ok = true;
    while (at < n && ok) {
        size_t k = n - at < chunk ? n - at : chunk;
        ok = cf_reply_stream_feed(s, text + at, k, &err);
        at += k;
        if (at % 4096 < k) cf_reply_stream_drain(s, &len);   /* a drain per 4 KB or so */
    }
    cf_reply_stream_free(s);
    return !ok && err.kind == CF_ERR_LIMIT ? at : 0;
}

typedef struct Sample {
    cf_reply_format format;
    const char *head;    /* puts what follows in one state */
    const char *unit;    /* repeated */
} Sample;

/* 2. Text as the leaf sees it: plain bytes, escapes, whitespace, UTF-8,
 * '<' that is not a tag; arguments; markup. */
static void step_budget(void) {
    static const char tools[] =
        "[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\","
        "\"properties\":{\"code\":{\"type\":\"string\"},\"n\":{\"type\":\"integer\"}}}}}]";
    static const Sample samples[] = {
        {CF_REPLY_PLAIN, "", "the model \"q\" caf\xc3\xa9 \xe4\xb8\xad a < b\n"},
        {CF_REPLY_HERMES, "<think>", "the model \"q\" caf\xc3\xa9 \xe4\xb8\xad a < b\n"},
        {CF_REPLY_HERMES, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"code\": \"", "x = \\\"q\\\" \xf0\x9f\x99\x82\\n"},
        {CF_REPLY_GLM45, "</think>", "the model \"q\" caf\xc3\xa9 \xe4\xb8\xad a < b\n"},
        {CF_REPLY_GLM45, "<tool_call>f\n<arg_key>code</arg_key>\n<arg_value>", "x = \"q\" a < b \xe4\xb8\xad\n"},
        {CF_REPLY_GLM45, "", "<tool_call>f\n<arg_key>n</arg_key>\n<arg_value>12</arg_value>\n</tool_call>\n"},
        {CF_REPLY_COMMAND_A, "<|START_RESPONSE|>", "cited <co>span \"q\" \xe4\xb8\xad</co: 0:[1,2]> then\n"},
        {CF_REPLY_COMMAND_A, "<|START_THINKING|>", "the model \"q\" caf\xc3\xa9 \xe4\xb8\xad a < b\n"},
    };
    enum { SIZE = 24 * 1024 };
    char *text = malloc(SIZE + 256);
    if (!text) exit(2);
    for (size_t k = 0; k < sizeof samples / sizeof samples[0]; k++) {
        const Sample *sm = &samples[k];
        size_t n = (size_t)sprintf(text, "%s", sm->head);
        while (n < SIZE) n += (size_t)sprintf(text + n, "%s", sm->unit);
        for (uint64_t steps = 1; steps <= 9; steps += 4) {
            size_t by_byte = stops_at(sm->format, tools, text, n, 1, steps);
            size_t at_once = stops_at(sm->format, tools, text, n, n, steps);
            size_t bound = (size_t)(steps + 1) * 1024;   /* a step per KB: it runs out past this */
            char what[160];
            snprintf(what, sizeof what, "sample %zu (%s), max_steps %llu: one byte at a time stops at %zu",
                     k, cf_reply_format_name(sm->format), (unsigned long long)steps, by_byte);
            /* a few bytes either way: UTF-8 held across a hand-over is charged twice */
            check(by_byte > bound - 64 && by_byte < bound + 64, what);
            snprintf(what, sizeof what, "sample %zu, max_steps %llu: in one chunk it stops too",
                     k, (unsigned long long)steps);
            check(at_once == n, what);
        }
    }
    free(text);
}

/* Everything a stream writes for text fed in `chunk`-byte pieces (one drain
 * at the end); NULL when a feed failed. */
static char *stream_all(cf_reply_format f, const char *tools, const char *text, size_t n, size_t chunk) {
    cf_reply_options opt;
    memset(&opt, 0, sizeof opt);
    opt.format = f;
    opt.tools_json = tools;
    cf_error err;
    cf_reply_stream *s = cf_reply_stream_new(&opt, &err);
    bool ok = s != NULL;
    for (size_t at = 0; ok && at < n; at += chunk) ok = cf_reply_stream_feed(s, text + at, n - at < chunk ? n - at : chunk, &err);
    ok = ok && cf_reply_stream_finish(s, &err);
    size_t len;
    const char *out = ok ? cf_reply_stream_drain(s, &len) : NULL;
    char *copy = out ? malloc(len + 1) : NULL;
    if (copy) memcpy(copy, out, len + 1);
    cf_reply_stream_free(s);
    return copy;
}

/* 3. Held strings: `head` opens a string of a held call, `unit` (repeated
 * past the buffers' first sizes) fills it, `tail` ends the call. */
static void held_strings(void) {
    static const char tools[] =
        "[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\","
        "\"properties\":{\"code\":{\"type\":\"string\"}}}}}]";
    typedef struct Held {
        cf_reply_format format;
        const char *head, *unit, *tail;
        bool call;   /* the reply is a call (else: its text is content) */
    } Held;
    static const Held samples[] = {
        {CF_REPLY_PYTHONIC, "[f(code='", "a \\'q\\' \"d\" \\\\p \\n caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x99\x82 x<y\t;", "')]", true},
        {CF_REPLY_PYTHONIC, "[f(code=\"", "a \\\"q\\\" 'd' \\\xc3\xa9 caf\xc3\xa9 ", "\")]", true},
        {CF_REPLY_PYTHONIC, "[f(code='", "\\\xc3\xa9', code='", "')]", true},   /* the escape ends with the sequence */
        {CF_REPLY_PYTHONIC, "[f(code='", "bad \xff \xc3( \xe4\xb8 cut \xf0\x9f ", "')]", true},
        {CF_REPLY_PYTHONIC, "<function_calls>\nf(code='", "x \\' y \xc3\xa9 ", "')\n</function_calls>", true},
        {CF_REPLY_LLAMA3_JSON, "<|python_tag|>f.call(code='", "q \\' \xe4\xb8\xad ", "')", true},
        {CF_REPLY_GEMMA4, "<|tool_call>call:f{code:<|\"|>", "a < b <| x<y> \\ \"q\" caf\xc3\xa9 \xff \xf0\x9f\x99\x82 ", "<|\"|>}<tool_call|>", true},
        {CF_REPLY_GEMMA4, "<start_function_call>call:f{code:<escape>", "a <esc b \xe4\xb8\xad ", "<escape>}<end_function_call>", true},
        {CF_REPLY_XLAM, "[{\"name\": \"f\", \"arguments\": {\"code\": \"", "a \\\"q\\\" \\\\p \\n \\u00e9 \\ud83d\\ude42 caf\xc3\xa9 \xe4\xb8\xad ", "\"}, \"id\": \"c9\"}]", true},
        {CF_REPLY_XLAM, "[{\"name\": \"f\", \"arguments\": {\"code\": \"", "bad \xff \xc3( x ", "\"}}]", true},
        {CF_REPLY_XLAM, "[{\"name\": \"f\", \"arguments\": {\"code\": \"", "a \\x not an escape ", "\"}}]", false},
        {CF_REPLY_XLAM, "[{\"name\": \"f\", \"arguments\": {\"code\": \"", "a \\\xc3\xa9 ", "\"}}]", false},
        {CF_REPLY_XLAM, "[{\"name\": \"f\", \"arguments\": {\"code\": \"", "raw\ttab ", "\"}}]", false},
        {CF_REPLY_FUNCTOOLS, "functools[{\"arguments\": {\"code\": \"", "name first? \\\"no\\\" \xc3\xa9 ", "\"}, \"name\": \"f\"}]", true},
    };
    enum { SIZE = 700 };
    char *text = malloc(SIZE + 256);
    if (!text) exit(2);
    for (size_t k = 0; k < sizeof samples / sizeof samples[0]; k++) {
        const Held *sm = &samples[k];
        size_t n = (size_t)sprintf(text, "Some text %s", sm->head);
        while (n < SIZE) n += (size_t)sprintf(text + n, "%s", sm->unit);
        n += (size_t)sprintf(text + n, "%s then more text.", sm->tail);
        char *at_once = stream_all(sm->format, tools, text, n, n);
        char what[160];
        snprintf(what, sizeof what, "held string %zu (%s): %s", k, cf_reply_format_name(sm->format),
                 sm->call ? "a call" : "content only");
        check(at_once && (strstr(at_once, "\"tool_calls\"") != NULL) == sm->call, what);
        for (size_t chunk = 1; chunk <= 7; chunk++) {
            char *got = stream_all(sm->format, tools, text, n, chunk);
            snprintf(what, sizeof what, "held string %zu (%s) in %zu-byte chunks writes what it writes at once", k,
                     cf_reply_format_name(sm->format), chunk);
            check(got && at_once && strcmp(got, at_once) == 0, what);
            if (got && at_once && strcmp(got, at_once) != 0 && chunk == 1)
                fprintf(stderr, "  at once: %.300s\n  by byte: %.300s\n", at_once, got);
            free(got);
        }
        free(at_once);
    }
    free(text);
}

int main(void) {
    failed_drain();
    step_budget();
    held_strings();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
