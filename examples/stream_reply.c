/* stream_reply.c — parse a model reply as it streams in: reads the reply
 * from stdin (any chunking: a pipe from the model works) and prints each
 * OpenAI delta as it becomes certain, then the whole message as parsed at
 * once for comparison.
 *
 *   stream_reply TEMPLATE [TOOLS.json] < reply.txt
 *   cc examples/stream_reply.c $(pkg-config --cflags --libs chatfmt) -o stream_reply */
#include <chatfmt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && (buf = malloc((size_t)n + 1))) {
        rewind(f);
        buf[fread(buf, 1, (size_t)n, f)] = 0;
    }
    if (f) fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: stream_reply TEMPLATE [TOOLS.json] < reply.txt\n");
        return 2;
    }
    cf_error err = {0};
    cf_source src = {0};
    if (!cf_source_load(argv[1], NULL, &src, &err)) {
        fprintf(stderr, "stream_reply: %s: %s\n", cf_error_kind_name(err.kind), err.message);
        return 1;
    }
    /* The template says how its model writes replies (glm45, hermes, command-a). */
    cf_reply_options opt = {.format = cf_reply_format_detect(src.text, src.len)};
    opt.tools_json = argc == 3 ? read_file(argv[2]) : NULL;   /* types glm45 argument values */
    cf_reply_stream *s = cf_reply_stream_new(&opt, &err);
    if (!s) {
        fprintf(stderr, "stream_reply: %s: %s\n", cf_error_kind_name(err.kind), err.message);
        return 1;
    }
    printf("format: %s\n", cf_reply_format_name(opt.format));

    char chunk[16];        /* small on purpose: deltas never depend on the chunking */
    char *whole = NULL;    /* the reply kept to parse it whole at the end */
    size_t total = 0;
    bool ok = true;
    for (;;) {
        size_t n = fread(chunk, 1, sizeof chunk, stdin);
        char *grown = realloc(whole, total + n + 1);
        if (!grown) { ok = false; break; }
        whole = grown;
        memcpy(whole + total, chunk, n);
        total += n;
        ok = n ? cf_reply_stream_feed(s, chunk, n, &err) : cf_reply_stream_finish(s, &err);
        size_t dlen;
        const char *deltas = cf_reply_stream_drain(s, &dlen);   /* JSON Lines, maybe "" */
        if (ok) fwrite(deltas, 1, dlen, stdout);
        if (!ok || n == 0) break;
    }
    if (ok) {
        char *message = cf_parse_reply(whole, total, &opt, NULL, &err);
        ok = message != NULL;
        if (ok) printf("whole: %s\n", message);
        free(message);
    }
    if (!ok) fprintf(stderr, "stream_reply: %s: %s\n", cf_error_kind_name(err.kind), err.message);
    cf_reply_stream_free(s);
    free(whole);
    free((char *)opt.tools_json);
    cf_source_free(&src);
    return ok ? 0 : 1;
}
