/* cmd_dataset.c — `chatfmt render TEMPLATE --jsonl IN.jsonl`: dataset mode.
 *
 * Each input line is one chat-mode context; each output line is
 * {"text": ...} (plus "spans" with --spans) or {"error": {"type", "message"}},
 * one per input line, in input order. The template is compiled once and
 * shared by every worker (compiled templates are immutable); the rows run on
 * the shared pipeline (pipeline.c: worker threads, constant memory). */
#include "cli.h"
#include "pipeline.h"
#include "quote_memo.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_DEFINES = 64 };

static void dataset_usage(FILE *to) {
    fputs("usage: chatfmt render TEMPLATE --jsonl IN.jsonl|- [options]\n"
          "\n"
          "Dataset mode: each input line is a chat-mode context (messages, tools,\n"
          "documents, add_generation_prompt, ...). Each output line is {\"text\": ...}\n"
          "or, for a row that fails, {\"error\": {\"type\": KIND, \"message\": ...}};\n"
          "one output line per input line, in input order.\n"
          "\n"
          "options:\n"
          "  -o, --output FILE        write here instead of stdout\n"
          "  --threads N              worker threads (default: all cores)\n"
          "  --spans                  add \"spans\": {% generation %} spans in code points\n"
          "  --raw                    render each row's variables only (no chat mode)\n"
          "  --polyfill               adapt each row to what the template can render\n"
          "                           (as render --polyfill)\n"
          "  -D, --define KEY=JSON    set a variable on every row (overrides the row)\n"
          "  --add-generation-prompt  set add_generation_prompt=true on every row\n"
          "  --template-name NAME     pick a named template (otherwise \"tool_use\" for\n"
          "                           rows with tools when the source has one)\n"
          "  --no-repair              do not undo web-copy damage in the template\n"
          "  --now YYYY-MM-DDTHH:MM:SS  pin strftime_now (same as CHATFMT_NOW)\n"
          "  --max-steps N, ... --max-json-depth N   safety limits, as for render\n"
          "A progress line is shown on stderr when it is a terminal; when rows\n"
          "failed, a last line there counts them and shows the first.\n", to);
}

/* ---- the job ---- */

typedef struct Define { char key[256]; const char *value; bool is_json; } Define;

typedef struct Dataset {
    /* read-only while the workers run */
    const cf_template *plain;       /* rows without tools (and every row when alone) */
    const cf_template *with_tools;  /* the source's "tool_use" template, or NULL */
    const cf_error *tools_error;    /* that template did not compile: the error of rows with tools */
    cf_render_options ro;
    const cf_limits *lim;           /* also bound each row's JSON */
    bool raw, spans, agp;
    Define defines[MAX_DEFINES];
    int ndefines;
    /* one per worker, made on its thread (start_worker): the tools list
     * most datasets repeat on every row is read once (cf_json_cache); NULL
     * entries read rows without */
    cf_json_cache *caches[PIPELINE_MAX_THREADS];
    /* and the outputs rows often begin alike, kept quoted (quote_memo.h) */
    QuoteMemo *memos[PIPELINE_MAX_THREADS];
} Dataset;

static void error_row(OutBuf *b, const char *kind, const char *message) {
    ob_puts(b, "{\"error\": {\"type\": ");
    ob_json_string(b, kind, strlen(kind));
    ob_puts(b, ", \"message\": ");
    ob_json_string(b, message, strlen(message));
    ob_puts(b, "}}");
}

static bool apply_defines(const Dataset *d, cf_context *ctx, cf_error *err) {
    for (int k = 0; k < d->ndefines; k++) {
        const Define *def = &d->defines[k];
        bool ok = def->is_json ? cf_context_set_json(ctx, def->key, def->value, strlen(def->value), err)
                               : cf_context_set_string(ctx, def->key, def->value, strlen(def->value));
        if (!ok) return false;
    }
    return !d->agp || cf_context_set_bool(ctx, "add_generation_prompt", true);
}

/* Render one input row read into ctx (NULL: not read, err says why),
 * appending its output line to b; false when it is an error row. */
static bool render_context(const Dataset *d, unsigned worker, cf_context *ctx, cf_error *err, OutBuf *b) {
    cf_result res;
    bool ok = ctx && apply_defines(d, ctx, err);
    if (ok) {
        bool tools = (d->with_tools || d->tools_error) && cf_context_has_value(ctx, "tools");
        const cf_template *t = tools && d->with_tools ? d->with_tools : d->plain;
        if (tools && d->tools_error) {
            *err = *d->tools_error;
            ok = false;
        } else {
            ok = d->raw ? cf_render(t, ctx, &d->ro, &res, err) : cf_render_chat(t, ctx, &d->ro, &res, err);
        }
    }
    cf_context_free(ctx);
    if (!ok && err->kind == CF_OK) {   /* a context setter failed without saying why */
        err->kind = CF_ERR_MEMORY;
        strcpy(err->message, "out of memory");
    }
    if (!ok) {
        error_row(b, cf_error_kind_name(err->kind), err->message);
        ob_put(b, "\n", 1);
        return false;
    }
    ob_puts(b, "{\"text\": ");
    quote_memo_put(d->memos[worker], b, res.text, res.len);
    if (d->spans) {
        ob_puts(b, ", \"spans\": [");
        for (size_t i = 0; i < res.nspans; i++) {
            char num[80];
            snprintf(num, sizeof num, "%s{\"start\": %zu, \"end\": %zu}", i ? ", " : "",
                     res.spans[i].start, res.spans[i].end);
            ob_puts(b, num);
        }
        ob_puts(b, "]");
    }
    ob_puts(b, "}\n");
    cf_result_free(&res);
    return true;
}

/* A worker's own cache and memo, made on its thread: each is written on
 * every row. Made by the main thread for every worker, the second worker's
 * shared cache lines with the main thread's data, and the main thread's
 * copying of rendered text into its output took 2.5 times as long (perf
 * samples per thread, two threads). */
static void start_worker(void *job, unsigned worker) {
    Dataset *d = job;
    d->caches[worker] = cf_json_cache_new();
    d->memos[worker] = quote_memo_new();
}

static bool render_row(void *job, unsigned worker, const char *line, size_t len, OutBuf *b) {
    const Dataset *d = job;
    cf_error err;
    err.kind = CF_OK;
    err.message[0] = 0;
    cf_context *ctx = cf_context_from_json_cached(line, len, d->lim, d->caches[worker], &err);
    return render_context(d, worker, ctx, &err, b);
}

/* A row read where it lies, its line's end found by the reader (the usual
 * row: one JSON object); else *line_len = SIZE_MAX and render_row gets it. */
static bool render_row_in_place(void *job, unsigned worker, const char *text, size_t avail, OutBuf *b,
                                size_t *line_len) {
    const Dataset *d = job;
    cf_context *ctx = cf_context_from_jsonl_cached(text, avail, line_len, d->lim, d->caches[worker]);
    if (!ctx) return false;
    cf_error err;
    err.kind = CF_OK;
    err.message[0] = 0;
    return render_context(d, worker, ctx, &err, b);
}

/* ---- options and setup ---- */

typedef struct DatasetArgs {
    const char *template_path, *input, *output, *now;
    long threads;
    cf_limits lim;
    cf_load_options lo;
} DatasetArgs;

/* 0 ok, 1 --help printed, 2 usage error */
static int parse_args(int argc, char **argv, DatasetArgs *a, Dataset *d) {
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) { dataset_usage(stdout); return 1; }
        else if (!strcmp(o, "--raw")) d->raw = true;
        else if (!strcmp(o, "--spans")) d->spans = true;
        else if (!strcmp(o, "--polyfill")) d->ro.polyfill = true;
        else if (!strcmp(o, "--add-generation-prompt")) d->agp = true;
        else if (!strcmp(o, "--no-repair")) a->lo.no_repair = true;
        else if (!strcmp(o, "--jsonl") && next) { a->input = next; i++; }
        else if ((!strcmp(o, "-o") || !strcmp(o, "--output")) && next) { a->output = next; i++; }
        else if (!strcmp(o, "--now") && next) { a->now = next; i++; }
        else if (!strcmp(o, "--template-name") && next) { a->lo.template_name = next; i++; }
        else if (!strcmp(o, "--threads") && next) {
            char *end;
            a->threads = strtol(next, &end, 10);
            if (*end || a->threads < 1 || a->threads > PIPELINE_MAX_THREADS) {
                fprintf(stderr, "chatfmt: error: UsageError: --threads wants 1..%d\n", PIPELINE_MAX_THREADS);
                return 2;
            }
            i++;
        } else if ((!strcmp(o, "-D") || !strcmp(o, "--define")) && next) {
            const char *eq = strchr(next, '=');
            if (!eq || eq == next || (size_t)(eq - next) >= sizeof d->defines[0].key) {
                fprintf(stderr, "chatfmt: error: UsageError: -D wants KEY=JSON, got '%s'\n", next);
                return 2;
            }
            if (d->ndefines == MAX_DEFINES) {
                fprintf(stderr, "chatfmt: error: UsageError: too many -D options\n");
                return 2;
            }
            Define *def = &d->defines[d->ndefines++];
            memcpy(def->key, next, (size_t)(eq - next));
            def->key[eq - next] = 0;
            def->value = eq + 1;
            i++;
        } else if (!strncmp(o, "--max-", 6)) {
            if (cli_limit_option(o, next, &a->lim) <= 0) {
                fprintf(stderr, "chatfmt: error: UsageError: bad option %s\n", o);
                return 2;
            }
            i++;
        } else if (o[0] == '-' && o[1]) {
            fprintf(stderr, "chatfmt: error: UsageError: unknown option %s\n", o);
            dataset_usage(stderr);
            return 2;
        } else if (!a->template_path) {
            a->template_path = o;
        } else {
            dataset_usage(stderr);
            return 2;
        }
    }
    if (!a->template_path || !a->input) { dataset_usage(stderr); return 2; }
    return 0;
}

/* A -D value is JSON when it parses as JSON, else the text as a string
 * (as `chatfmt render` reads it). Decided once, applied to every row. */
static bool classify_defines(Dataset *d) {
    cf_context *probe = cf_context_new();
    if (!probe) return false;
    for (int k = 0; k < d->ndefines; k++) {
        cf_error err;
        Define *def = &d->defines[k];
        def->is_json = cf_context_set_json(probe, def->key, def->value, strlen(def->value), &err);
    }
    cf_context_free(probe);
    return true;
}

typedef struct Loaded {
    cf_source src, tools_src;
    bool have_src, have_tools_src;
    cf_template *plain, *with_tools;
    cf_error tools_error;
    bool tools_broken;
} Loaded;

/* The template for rows without tools and, when the source names a
 * different one for tools (tokenizer_config "tool_use"), that one too:
 * transformers picks per call, and compiles the tool template only for
 * calls with tools (its errors are those rows' errors). */
static bool load_templates(const DatasetArgs *a, Loaded *l) {
    cf_error err;
    cf_load_options lo = a->lo;
    lo.limits = &a->lim;   /* also bound the files read */
    lo.has_tools = false;
    if (!cf_source_load(a->template_path, &lo, &l->src, &err)) {
        cli_print_error(&err, a->template_path, NULL, 0);
        return false;
    }
    l->have_src = true;
    cli_print_warnings(l->src.warnings);
    cf_compile_options co = {&a->lim, a->template_path};
    l->plain = cf_compile(l->src.text, l->src.len, &co, &err);
    if (!l->plain) {
        cli_print_error(&err, a->template_path, l->src.text, l->src.len);
        return false;
    }
    if (a->lo.template_name) return true;
    /* a template file or a built-in is one template: no second load (its
     * reading and repair are a tenth of the start-up) */
    if (!strcmp(l->src.kind, "file") || !strcmp(l->src.kind, "builtin")) return true;
    lo.has_tools = true;
    if (!cf_source_load(a->template_path, &lo, &l->tools_src, &err)) return true;
    l->have_tools_src = true;
    if (l->tools_src.len == l->src.len && !memcmp(l->tools_src.text, l->src.text, l->src.len)) return true;
    l->with_tools = cf_compile(l->tools_src.text, l->tools_src.len, &co, &l->tools_error);
    l->tools_broken = !l->with_tools;
    return true;
}

static void unload_templates(Loaded *l) {
    cf_template_free(l->plain);
    cf_template_free(l->with_tools);
    if (l->have_src) cf_source_free(&l->src);
    if (l->have_tools_src) cf_source_free(&l->tools_src);
}

int cmd_dataset(int argc, char **argv) {
    static Dataset d;   /* large (defines); one job per process */
    DatasetArgs a;
    memset(&d, 0, sizeof d);
    memset(&a, 0, sizeof a);
    int r = parse_args(argc, argv, &a, &d);
    if (r) return r == 1 ? 0 : 2;
    if (!classify_defines(&d)) return 1;

    Loaded l;
    memset(&l, 0, sizeof l);
    int in = -1, out = -1;   /* the pipeline reads and writes the descriptors itself */
    bool own_in = false, own_out = false;
    int rc = 1;
    if (!load_templates(&a, &l)) goto done;
    d.plain = l.plain;
    d.with_tools = l.with_tools;
    d.tools_error = l.tools_broken ? &l.tools_error : NULL;
    d.ro.limits = &a.lim;
    d.lim = &a.lim;
    d.ro.now = a.now;
    d.ro.defaults = d.raw ? NULL : l.src.tokens;

    own_in = strcmp(a.input, "-") != 0;
    in = own_in ? open(a.input, O_RDONLY) : STDIN_FILENO;
    if (in < 0) { fprintf(stderr, "chatfmt: error: IOError: cannot open %s: %s\n", a.input, strerror(errno)); goto done; }
    own_out = a.output != NULL;
    out = own_out ? open(a.output, O_WRONLY | O_CREAT | O_TRUNC, 0666) : STDOUT_FILENO;
    if (out < 0) { fprintf(stderr, "chatfmt: error: IOError: cannot open %s: %s\n", a.output, strerror(errno)); goto done; }
    if (fflush(stdout) != 0) {   /* stdio's buffered bytes go before the rows, not into them */
        fprintf(stderr, "chatfmt: error: IOError: cannot write the output: %s\n", strerror(errno));
        goto done;
    }
    Pipeline p = {0};
    p.row = render_row;
    p.row_in_place = render_row_in_place;
    p.job = &d;
    p.threads = a.threads ? (unsigned)a.threads : pipeline_default_threads();
    p.oom_row = "{\"error\": {\"type\": \"MemoryError\", \"message\": \"out of memory\"}}\n";
    p.progress = true;
    p.worker_start = start_worker;
    rc = pipeline_run(&p, in, out);
    for (unsigned w = 0; w < p.threads; w++) {
        cf_json_cache_free(d.caches[w]);
        quote_memo_free(d.memos[w]);
    }
    /* Failing rows do not stop the job, nor go unnoticed in a script. */
    if (p.errors)
        fprintf(stderr, "chatfmt: %llu of %llu rows failed (their output lines hold \"error\"); the first is line %llu: %s\n",
                (unsigned long long)p.errors, (unsigned long long)p.rows, (unsigned long long)p.first_error_line,
                p.first_error);
done:
    if (own_in && in >= 0) close(in);
    if (own_out && out >= 0 && close(out) != 0 && rc == 0) {
        fprintf(stderr, "chatfmt: error: IOError: cannot write the output: %s\n", strerror(errno));
        rc = 1;
    }
    unload_templates(&l);
    return rc;
}
