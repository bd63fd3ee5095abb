/* cmd_parse.c — `chatfmt parse`: a model reply in, the OpenAI assistant
 * message out (or, with --stream, chat.completion.chunk objects as JSON
 * Lines, fed as the reply arrives). */
#include "cli.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void parse_usage(FILE *to) {
    fputs("usage: chatfmt parse [--template T | --format NAME] [options] FILE|-\n"
          "\n"
          "Read a model reply and print the OpenAI assistant message (JSON):\n"
          "content, reasoning_content, tool_calls (and citations for command-a).\n"
          "\n"
          "options:\n"
          "  --template T             the model's chat template (file, tokenizer_config.json,\n"
          "                           model folder, GGUF or built-in name): picks the format\n"
          "                           and tells whether the prompt opened or closed reasoning\n"
          "  --format NAME            a reply format (`chatfmt formats` lists them; overrides detection)\n"
          "  --tools FILE             tools array (JSON): types glm45 argument values\n"
          "  -D, --define KEY=JSON    a template variable for the prompt, e.g.\n"
          "                           -D enable_thinking=false\n"
          "  --prompt FILE            the rendered prompt the reply continues (its end says\n"
          "                           whether reasoning is open); instead of rendering T's\n"
          "  --reasoning-open         the reply starts inside reasoning\n"
          "  --response-format json   the request asked for a JSON answer (response_format\n"
          "                           json_object or json_schema): a ```json fence around\n"
          "                           the content is dropped (text: the default, as written)\n"
          "  --no-stop                read past the template's stop strings (by default the\n"
          "                           reply ends at the first, as a server stops there)\n"
          "  --stream                 print chat.completion.chunk objects, one per line, as\n"
          "                           the input arrives\n"
          "  --chunk-bytes N          feed the input N bytes at a time (default 4096)\n"
          "  --max-string BYTES, --max-memory BYTES, --max-steps N, --max-json-depth N\n", to);
}

typedef struct ParseArgs {
    const char *template_path, *input;
    bool stream, no_stop;
    bool json_response;         /* --response-format json */
    size_t chunk;
    bool exact_chunks;          /* --chunk-bytes given */
    CliReplyRequest req;
} ParseArgs;

/* 0 ok, 1 --help printed, 2 usage error */
static int parse_args(int argc, char **argv, ParseArgs *a) {
    memset(a, 0, sizeof *a);
    a->chunk = 4096;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        int shared = cli_reply_option(argc, argv, &i, &a->req);
        if (shared < 0) return 2;
        if (shared) continue;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            parse_usage(stdout);
            return 1;
        } else if (!strcmp(o, "--stream")) {
            a->stream = true;
        } else if (!strcmp(o, "--no-stop")) {
            a->no_stop = true;
        } else if (!strcmp(o, "--response-format") && next) {
            const char *kind = argv[++i];
            if (strcmp(kind, "json") && strcmp(kind, "text")) {
                fprintf(stderr, "chatfmt: error: UsageError: --response-format wants json or text\n");
                return 2;
            }
            a->json_response = !strcmp(kind, "json");
        } else if (!strcmp(o, "--template") && next) {
            a->template_path = argv[++i];
        } else if (!strcmp(o, "--chunk-bytes") && next) {
            char *end;
            unsigned long long n = strtoull(argv[++i], &end, 10);
            if (*end || n == 0) {
                fprintf(stderr, "chatfmt: error: UsageError: --chunk-bytes wants a positive number\n");
                return 2;
            }
            a->chunk = (size_t)n;
            a->exact_chunks = true;
        } else if (o[0] == '-' && o[1]) {
            fprintf(stderr, "chatfmt: error: UsageError: unknown option %s\n", o);
            parse_usage(stderr);
            return 2;
        } else if (!a->input) {
            a->input = o;
        } else {
            parse_usage(stderr);
            return 2;
        }
    }
    if (!a->input) {
        parse_usage(stderr);
        return 2;
    }
    return 0;
}

/* ---- the template: format and the prompt's tail ---- */

enum { TAIL_BYTES = 256 };


/* Render the probe and keep the end of the prompt in tail[]. A template
 * that cannot render leaves the tail empty (with a warning): the reply is
 * then read as starting outside reasoning. */
static void prompt_tail(const ParseArgs *a, const char *src, size_t len, const cf_context *tokens,
                        const char *tools, size_t tools_len, char *tail) {
    tail[0] = 0;
    cf_error err;
    cf_context *ctx = cli_probe_context(a->req.tools_path, tools, tools_len, a->req.defines, a->req.ndefines);
    if (!ctx) return;
    cf_compile_options co = {&a->req.lim, a->template_path};
    cf_template *t = cf_compile(src, len, &co, &err);
    cf_render_options ro;
    memset(&ro, 0, sizeof ro);
    ro.limits = &a->req.lim;
    ro.defaults = tokens;
    cf_result res;
    if (t && cf_render_chat(t, ctx, &ro, &res, &err)) {
        size_t k = res.len < TAIL_BYTES ? res.len : TAIL_BYTES;
        memcpy(tail, res.text + res.len - k, k);
        tail[k] = 0;
        cf_result_free(&res);
    } else {
        fprintf(stderr, "chatfmt: warning: cannot render the template's generation prompt (%s: %s); "
                        "assuming it leaves reasoning closed to the reply\n",
                cf_error_kind_name(err.kind), err.message);
    }
    cf_template_free(t);
    cf_context_free(ctx);
}

/* Format (unless --format), tail and stop strings (*stops, see
 * cf_reply_stop_strings; unless --no-stop) from the template. 0 ok, 1 error. */
static int read_template(const ParseArgs *a, const char *tools, size_t tools_len, cf_reply_format *fmt,
                         bool detect, char *tail, char **stops) {
    cf_error err;
    cf_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.has_tools = tools != NULL;
    cf_source src;
    if (!cf_source_load(a->template_path, &lo, &src, &err)) {
        cli_print_error(&err, a->template_path, NULL, 0);
        return 1;
    }
    const char *text = src.text;
    size_t len = src.len;
    const cf_context *tokens = src.tokens;
    /* by probing renders; a template that does not compile: its text's signature */
    cf_compile_options co = {&a->req.lim, a->template_path};
    cf_template *t = cf_compile(text, len, &co, &err);
    if (detect) *fmt = t ? cf_reply_format_of(t, tokens) : cf_reply_format_detect(text, len);
    if (t && !a->no_stop) *stops = cf_reply_stop_strings(t, tokens, &err);
    cf_template_free(t);
    if (!a->req.prompt_path) prompt_tail(a, text, len, tokens, tools, tools_len, tail);
    cf_source_free(&src);
    return 0;
}

/* ---- reading the reply ---- */

static int open_input(const char *path) {
    if (!strcmp(path, "-")) return 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) fprintf(stderr, "chatfmt: error: IOError: cannot open %s: %s\n", path, strerror(errno));
    return fd;
}

/* Up to n bytes, as they arrive (a pipe gives what the model wrote so far). */
static ssize_t read_some(int fd, char *buf, size_t n) {
    for (;;) {
        ssize_t k = read(fd, buf, n);
        if (k >= 0 || errno != EINTR) return k;
    }
}

/* Exactly n bytes unless the input ends first. */
static ssize_t read_chunk(int fd, char *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t k = read_some(fd, buf + got, n - got);
        if (k < 0) return -1;
        if (k == 0) break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

/* ---- stop strings ---- */

/* Where the first stop string in s[0..n) starts (n: none). stops: as
 * cf_reply_stop_strings returns them, or NULL. */
static size_t stop_at(const char *stops, const char *s, size_t n) {
    size_t best = n;
    for (const char *z = stops; z && *z; z += strlen(z) + 1) {
        size_t k = strlen(z);
        for (size_t i = 0; i + k <= best; i++)
            if (s[i] == z[0] && memcmp(s + i, z, k) == 0) {
                best = i;
                break;
            }
    }
    return best;
}

/* The longest end of s[0..n) that may still become a stop string. */
static size_t stop_prefix(const char *stops, const char *s, size_t n) {
    size_t held = 0;
    for (const char *z = stops; z && *z; z += strlen(z) + 1) {
        size_t k = strlen(z);
        for (size_t m = k - 1 < n ? k - 1 : n; m > held; m--)
            if (memcmp(s + n - m, z, m) == 0) {
                held = m;
                break;
            }
    }
    return held;
}

static size_t longest(const char *stops) {
    size_t most = 0;
    for (const char *z = stops; z && *z; z += strlen(z) + 1)
        if (strlen(z) > most) most = strlen(z);
    return most;
}

/* ---- output ---- */

/* Each delta line becomes a chat.completion.chunk object. */
static bool print_chunks(const char *d, size_t n, bool *saw_calls) {
    static const char head[] = "{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":";
    static const char tail[] = ",\"finish_reason\":null}]}\n";
    while (n) {
        const char *nl = memchr(d, '\n', n);
        size_t k = nl ? (size_t)(nl - d) : n;
        if (k > 14 && !memcmp(d, "{\"tool_calls\":", 14)) *saw_calls = true;
        if (!cli_write(head, sizeof head - 1) || !cli_write(d, k) || !cli_write(tail, sizeof tail - 1))
            return false;
        k += nl != NULL;
        d += k;
        n -= k;
    }
    return fflush(stdout) == 0;
}

/* Bytes held back (a possible stop string's start) come before the next
 * chunk; the reply ends at a stop string. */
static int run_stream(const ParseArgs *a, int fd, const cf_reply_options *opt, const char *stops) {
    cf_error err;
    cf_reply_stream *s = cf_reply_stream_new(opt, &err);
    if (!s) {
        cli_print_error(&err, NULL, NULL, 0);
        return 1;
    }
    size_t held = 0, room = longest(stops);
    char *buf = malloc(a->chunk + room);
    int rc = 1;
    bool calls = false, stopped = false;
    if (!buf) goto done;
    if (!print_chunks("{\"role\":\"assistant\"}", 20, &calls)) goto done;
    for (;;) {
        /* --chunk-bytes: exact chunks (tests); otherwise whatever has arrived */
        ssize_t k = stopped ? 0
                  : a->exact_chunks ? read_chunk(fd, buf + held, a->chunk) : read_some(fd, buf + held, a->chunk);
        if (k < 0) {
            fprintf(stderr, "chatfmt: error: IOError: cannot read %s: %s\n", a->input, strerror(errno));
            goto done;
        }
        size_t n = held + (size_t)k, feed = n;
        if (k && stops) {
            feed = stop_at(stops, buf, n);
            stopped = feed < n;
            if (!stopped) feed = n - stop_prefix(stops, buf, n);
        }
        bool ok = true;
        if (feed) ok = cf_reply_stream_feed(s, buf, feed, &err);
        held = k && !stopped ? n - feed : 0;
        memmove(buf, buf + feed, held);
        if (ok && (!k || stopped)) ok = cf_reply_stream_finish(s, &err);
        if (!ok) {
            cli_print_error(&err, a->input, NULL, 0);
            goto done;
        }
        size_t dn;
        const char *d = cf_reply_stream_drain(s, &dn);
        if (!print_chunks(d, dn, &calls)) goto done;
        if (!k || stopped) break;
    }
    printf("{\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},"
           "\"finish_reason\":\"%s\"}]}\n", calls ? "tool_calls" : "stop");
    rc = fflush(stdout) == 0 ? 0 : 1;
done:
    free(buf);
    cf_reply_stream_free(s);
    return rc;
}

static int run_whole(const ParseArgs *a, const cf_reply_options *opt, const char *stops) {
    size_t len, out_len;
    char *text = cli_read_file(a->input, &len);
    if (!text) return 1;
    len = stop_at(stops, text, len);
    cf_error err;
    char *msg = cf_parse_reply(text, len, opt, &out_len, &err);
    free(text);
    if (!msg) {
        cli_print_error(&err, a->input, NULL, 0);
        return 1;
    }
    bool ok = cli_write(msg, out_len) && cli_write("\n", 1) && fflush(stdout) == 0;
    free(msg);
    return ok ? 0 : 1;
}

int cmd_parse(int argc, char **argv) {
    ParseArgs a;
    int r = parse_args(argc, argv, &a);
    if (r) return r == 1 ? 0 : 2;

    cf_reply_options opt;
    memset(&opt, 0, sizeof opt);
    opt.limits = &a.req.lim;
    opt.reasoning_open = a.req.reasoning_open;
    opt.json_response = a.json_response;
    if (a.req.format_name && !cf_reply_format_from_name(a.req.format_name, &opt.format)) {
        fprintf(stderr, "chatfmt: error: UsageError: unknown format '%s' (`chatfmt formats` lists them)\n",
                a.req.format_name);
        return 2;
    }
    int rc = 1;
    size_t tools_len = 0;
    char *tools = a.req.tools_path ? cli_read_file(a.req.tools_path, &tools_len) : NULL;
    char tail[TAIL_BYTES + 1] = "";
    char *stops = NULL;
    if (a.req.tools_path && !tools) return 1;
    opt.tools_json = tools;
    if (a.template_path &&
        read_template(&a, tools, tools_len, &opt.format, a.req.format_name == NULL, tail, &stops) != 0)
        goto done;
    if (a.req.prompt_path) {
        size_t plen;
        char *prompt = cli_read_file(a.req.prompt_path, &plen);
        if (!prompt) goto done;
        size_t k = plen < TAIL_BYTES ? plen : TAIL_BYTES;
        memcpy(tail, prompt + plen - k, k);
        tail[k] = 0;
        free(prompt);
    }
    opt.prompt_tail = tail[0] ? tail : NULL;
    if (a.stream) {
        int fd = open_input(a.input);
        if (fd < 0) goto done;
        rc = run_stream(&a, fd, &opt, stops);
        if (fd != 0) close(fd);
    } else {
        rc = run_whole(&a, &opt, stops);
    }
done:
    free(stops);
    free(tools);
    return rc;
}
