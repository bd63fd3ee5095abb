/* test_reply_stream.c — the byte-by-byte stream's bookkeeping, which
 * tests/test_reply.c (messages) cannot see:
 *   1. a drain that fails (no room to close the line within max_string)
 *      leaves the stream unusable: the next feed is refused, whatever path
 *      (one-byte leaf, fast path, machine) it would have taken;
 *   2. the step budget (max_steps, charged per KB of input) stops a reply
 *      fed one byte at a time, in every format and in text, reasoning,
 *      arguments and markup, near the same byte as when it is fed in one
 *      chunk: the bytes the leaf takes are charged too.
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

int main(void) {
    failed_drain();
    step_budget();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
