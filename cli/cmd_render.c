/* cmd_render.c — `chatfmt render`: one context, or the --batch protocol. */
#include "cli.h"
#include "pipeline.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void render_usage(FILE *to) {
    fputs("usage: chatfmt render [options] TEMPLATE [CONTEXT.json|-]\n"
          "       chatfmt render --batch CASES.jsonl|- [--threads N]\n"
          "\n"
          "Renders TEMPLATE (a .jinja file, tokenizer_config.json, model folder, GGUF\n"
          "file or built-in name; see 'chatfmt list-templates') exactly as transformers'\n"
          "apply_chat_template does. CONTEXT holds messages, tools, documents,\n"
          "add_generation_prompt, continue_final_message and any other variables.\n"
          "\n"
          "options:\n"
          "  --raw                    pass only the given variables (no chat-mode defaults)\n"
          "  --batch FILE             JSON Lines cases in, one result object per line out,\n"
          "                           in order (the reference's --batch protocol)\n"
          "  --threads N              with --batch: worker threads (default: all cores)\n"
          "  --messages FILE          messages array (JSON) instead of / on top of CONTEXT\n"
          "  --tools FILE             tools array (JSON)\n"
          "  -D, --define KEY=JSON    set a variable, e.g. -D enable_thinking=false\n"
          "  --add-generation-prompt  set add_generation_prompt=true\n"
          "  --template-name NAME     pick a named template (tokenizer_config list, GGUF)\n"
          "  --no-repair              do not undo web-copy damage in the template\n"
          "  --spans                  print {% generation %} spans as JSON after the text\n"
          "  --polyfill               adapt the request to what the template can render\n"
          "                           (see 'chatfmt caps'): parse string tool arguments,\n"
          "                           join/wrap content parts, merge an unsupported system\n"
          "                           message into the first user turn\n"
          "  --now YYYY-MM-DDTHH:MM:SS  pin strftime_now (same as CHATFMT_NOW)\n"
          "  --max-steps N, --max-recursion N, --max-output BYTES, --max-string BYTES,\n"
          "  --max-items N, --max-memory BYTES, --max-range N, --max-parse-depth N,\n"
          "  --max-json-depth N, --max-json-bytes BYTES\n"
          "                           raise or lower the safety limits\n", to);
}

/* --batch: each non-blank line is a case of the reference's protocol, run
 * by its worker's cf_batch (a template cache each: compiled templates are
 * not shared between workers, so no lock is taken per case), made on the
 * worker's own thread (see PipelineWorkerStart). */
typedef struct BatchJob {
    const cf_limits *lim;
    cf_batch *per_worker[PIPELINE_MAX_THREADS];   /* NULL: out of memory (its cases say so) */
    bool started[PIPELINE_MAX_THREADS];
} BatchJob;

#define BATCH_OOM_ROW "{\"ok\": false, \"error_type\": \"MemoryError\", \"error\": \"out of memory\"}\n"

static void start_batch_worker(void *job, unsigned worker) {
    BatchJob *j = job;
    j->per_worker[worker] = cf_batch_new(j->lim);
    j->started[worker] = true;
}

static bool batch_row(void *job, unsigned worker, const char *line, size_t len, OutBuf *out) {
    const BatchJob *j = job;
    bool blank = true;   /* the reference skips blank lines: no output line */
    for (size_t i = 0; i < len && blank; i++) blank = line[i] == ' ' || line[i] == '\t';
    if (blank) return true;
    char *result;
    size_t n;
    if (!j->per_worker[worker] || !cf_batch_line(j->per_worker[worker], line, len, &result, &n)) {
        ob_puts(out, BATCH_OOM_ROW);
        return false;
    }
    ob_put(out, result, n);
    ob_put(out, "\n", 1);
    free(result);
    return true;
}

static int run_batch(const char *path, const cf_limits *lim, long threads) {
    bool own_in = strcmp(path, "-") != 0;
    int in = own_in ? open(path, O_RDONLY) : STDIN_FILENO;
    if (in < 0) { fprintf(stderr, "chatfmt: error: IOError: cannot open %s\n", path); return 1; }
    static BatchJob job;
    job.lim = lim;
    Pipeline p = {0};
    p.row = batch_row;
    p.worker_start = start_batch_worker;
    p.job = &job;
    p.threads = threads ? (unsigned)threads : pipeline_default_threads();
    p.oom_row = BATCH_OOM_ROW;
    int rc = 0;
    if (fflush(stdout) != 0) {   /* the pipeline writes the descriptor itself, after stdio's bytes */
        fprintf(stderr, "chatfmt: error: IOError: cannot write the output: %s\n", strerror(errno));
        rc = 1;
    }
    if (rc == 0) rc = pipeline_run(&p, in, STDOUT_FILENO);
    bool oom = false;
    for (unsigned w = 0; w < p.threads; w++) oom |= job.started[w] && !job.per_worker[w];
    if (oom && rc == 0) {
        fprintf(stderr, "chatfmt: error: MemoryError: out of memory\n");
        rc = 1;
    }
    for (unsigned w = 0; w < p.threads; w++) cf_batch_free(job.per_worker[w]);
    if (own_in) close(in);
    return rc;
}

int cmd_render(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--jsonl")) return cmd_dataset(argc, argv);
    bool raw = false, spans = false, agp = false, polyfill = false;
    const char *batch = NULL, *messages_file = NULL, *tools_file = NULL, *now = NULL;
    long threads = 0;
    const char *positional[2] = {NULL, NULL};
    int npos = 0;
    cf_limits lim;
    memset(&lim, 0, sizeof lim);
    const char *defines[64];
    int ndefines = 0;
    cf_load_options lo;
    memset(&lo, 0, sizeof lo);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { render_usage(stdout); return 0; }
        else if (!strcmp(a, "--raw")) raw = true;
        else if (!strcmp(a, "--spans")) spans = true;
        else if (!strcmp(a, "--polyfill")) polyfill = true;
        else if (!strcmp(a, "--add-generation-prompt")) agp = true;
        else if (!strcmp(a, "--batch") && next) { batch = next; i++; }
        else if (!strcmp(a, "--threads") && next) {
            char *end;
            threads = strtol(next, &end, 10);
            if (*end || threads < 1 || threads > PIPELINE_MAX_THREADS) {
                fprintf(stderr, "chatfmt: error: UsageError: --threads wants 1..%d\n", PIPELINE_MAX_THREADS);
                return 2;
            }
            i++;
        }
        else if (!strcmp(a, "--messages") && next) { messages_file = next; i++; }
        else if (!strcmp(a, "--tools") && next) { tools_file = next; i++; }
        else if (!strcmp(a, "--now") && next) { now = next; i++; }
        else if ((!strcmp(a, "-D") || !strcmp(a, "--define")) && next) {
            if (ndefines == 64) { fprintf(stderr, "chatfmt: error: UsageError: too many -D options\n"); return 2; }
            defines[ndefines++] = next;
            i++;
        }
        else if (!strcmp(a, "--template-name") && next) { lo.template_name = next; i++; }
        else if (!strcmp(a, "--no-repair")) lo.no_repair = true;
        else if (!strncmp(a, "--max-", 6)) {
            int r = cli_limit_option(a, next, &lim);
            if (r <= 0) { fprintf(stderr, "chatfmt: error: UsageError: bad option %s\n", a); return 2; }
            i++;
        } else if (a[0] == '-' && a[1] && strcmp(a, "-") != 0) {
            fprintf(stderr, "chatfmt: error: UsageError: unknown option %s\n", a);
            render_usage(stderr);
            return 2;
        } else if (npos < 2) positional[npos++] = a;
        else { render_usage(stderr); return 2; }
    }
    if (batch) return run_batch(batch, &lim, threads);
    if (threads) { fprintf(stderr, "chatfmt: error: UsageError: --threads goes with --batch or --jsonl\n"); return 2; }
    if (npos < 1 || (npos < 2 && !messages_file)) { render_usage(stderr); return 2; }

    int rc = 1;
    cf_error err;
    memset(&err, 0, sizeof err);
    cf_context *ctx = NULL;
    cf_template *t = NULL;
    char *tsrc = NULL;
    size_t tlen = 0;
    const char *tname = positional[0];
    const char *warn = NULL;
    bool tag_stripped = false;
    cf_context *tokens = NULL;
    cf_source src;
    memset(&src, 0, sizeof src);
    bool have_src = false;

    /* context */
    if (npos == 2) {
        size_t clen;
        char *ctext = cli_read_file(positional[1], &clen);
        if (!ctext) goto done;
        ctx = cf_context_from_json_limits(ctext, clen, &lim, &err);
        free(ctext);
        if (!ctx) { cli_print_error(&err, positional[1], NULL, 0); goto done; }
    } else {
        ctx = cf_context_new();
        if (!ctx) goto done;
    }
    const char *files[2][2] = {{"messages", messages_file}, {"tools", tools_file}};
    for (int k = 0; k < 2; k++) {
        if (!files[k][1]) continue;
        size_t n;
        char *text = cli_read_file(files[k][1], &n);
        if (!text) goto done;
        bool ok = cf_context_set_json_limits(ctx, files[k][0], text, n, &lim, &err);
        free(text);
        if (!ok) { cli_print_error(&err, files[k][1], NULL, 0); goto done; }
    }
    for (int k = 0; k < ndefines; k++) {
        const char *eq = strchr(defines[k], '=');
        if (!eq) { fprintf(stderr, "chatfmt: error: UsageError: -D wants KEY=JSON, got '%s'\n", defines[k]); rc = 2; goto done; }
        char key[256];
        size_t kl = (size_t)(eq - defines[k]);
        if (kl >= sizeof key) kl = sizeof key - 1;
        memcpy(key, defines[k], kl);
        key[kl] = 0;
        if (!cf_context_set_json_limits(ctx, key, eq + 1, strlen(eq + 1), &lim, &err)) {
            /* JSON past a limit is an error; text that is not JSON at all is
             * taken as a string, as a shell user means it */
            if (err.kind != CF_ERR_JSON) { cli_print_error(&err, "-D", NULL, 0); goto done; }
            if (!cf_context_set_string(ctx, key, eq + 1, strlen(eq + 1))) goto done;
        }
    }
    if (agp && !cf_context_set_bool(ctx, "add_generation_prompt", true)) goto done;

    /* template */
    lo.has_tools = cf_context_has_value(ctx, "tools");
    lo.limits = &lim;
    if (!cf_source_load(tname, &lo, &src, &err)) { cli_print_error(&err, tname, NULL, 0); goto done; }
    have_src = true;
    tsrc = src.text;
    tlen = src.len;
    warn = src.warnings;
    tag_stripped = src.looks_tag_stripped;
    tokens = src.tokens;
    cli_print_warnings(warn);
    cf_compile_options co = {&lim, tname};
    t = cf_compile(tsrc, tlen, &co, &err);
    if (!t) { cli_print_error(&err, tname, tsrc, tlen); goto done; }

    cf_render_options ro;
    memset(&ro, 0, sizeof ro);
    ro.limits = &lim;
    ro.now = now;
    ro.defaults = raw ? NULL : tokens;
    ro.polyfill = polyfill;
    cf_result res;
    bool ok = raw ? cf_render(t, ctx, &ro, &res, &err) : cf_render_chat(t, ctx, &ro, &res, &err);
    if (!ok) {
        cli_print_error(&err, tname, tsrc, tlen);
        if (tag_stripped)
            fprintf(stderr, "chatfmt: hint: this template looks like a web copy whose <tags> were stripped as HTML; "
                            "get the original file (e.g. the model's tokenizer_config.json)\n");
        goto done;
    }
    cli_write(res.text, res.len);
    if (spans) {
        printf("\n[");
        for (size_t i = 0; i < res.nspans; i++)
            printf("%s{\"start\": %zu, \"end\": %zu}", i ? ", " : "", res.spans[i].start, res.spans[i].end);
        printf("]\n");
    }
    cf_result_free(&res);
    rc = fflush(stdout) == 0 ? 0 : 1;
done:
    cf_template_free(t);
    cf_context_free(ctx);
    if (have_src) cf_source_free(&src);
    return rc;
}
