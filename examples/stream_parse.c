/* stream_parse.c — parse a model reply as it arrives.
 *
 * Reads the reply from stdin (as a server reads tokens from a model), feeds
 * each piece to a cf_reply_stream, and prints the deltas it gives: OpenAI
 * chat.completion.chunk `delta` objects, one per line. At the end it prints
 * the whole-parse message of the same text, which the deltas add up to.
 *
 *   cc -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude examples/stream_parse.c build/libchatfmt.a -lm -o stream_parse
 *   printf '<think>Hmm.</think>Sure.<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>' |
 *       ./stream_parse hermes
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "chatfmt.h"

int main(int argc, char **argv) {
    cf_reply_options opt;
    memset(&opt, 0, sizeof opt);
    if (argc < 2 || !cf_reply_format_from_name(argv[1], &opt.format)) {
        fprintf(stderr, "usage: %s glm45|hermes|command-a|plain [PROMPT_TAIL] < reply\n", argv[0]);
        return 2;
    }
    if (argc > 2) opt.prompt_tail = argv[2];   /* e.g. "<think>\n": reasoning already open */

    cf_error err;
    cf_reply_stream *s = cf_reply_stream_new(&opt, &err);
    if (!s) {
        fprintf(stderr, "error: %s\n", err.message);
        return 1;
    }
    char *all = NULL;     /* the reply so far, for the comparison at the end */
    size_t all_len = 0;
    char piece[16];       /* small reads: a token or two at a time */
    for (;;) {
        ssize_t n = read(0, piece, sizeof piece);
        if (n <= 0) break;
        char *grown = realloc(all, all_len + (size_t)n);
        if (!grown) break;
        all = grown;
        memcpy(all + all_len, piece, (size_t)n);
        all_len += (size_t)n;
        if (!cf_reply_stream_feed(s, piece, (size_t)n, &err)) {
            fprintf(stderr, "error: %s\n", err.message);
            break;
        }
        size_t len;
        const char *deltas = cf_reply_stream_drain(s, &len);   /* "" when nothing is ready */
        fwrite(deltas, 1, len, stdout);
        fflush(stdout);
    }
    if (cf_reply_stream_finish(s, &err)) {   /* flushes what was held back */
        size_t len;
        const char *deltas = cf_reply_stream_drain(s, &len);
        fwrite(deltas, 1, len, stdout);
    }
    cf_reply_stream_free(s);

    char *msg = cf_parse_reply(all ? all : "", all_len, &opt, NULL, &err);
    if (msg) printf("whole: %s\n", msg);
    free(msg);
    free(all);
    return 0;
}
