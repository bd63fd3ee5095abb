/* cmd_dataset.c — `chatfmt render TEMPLATE --jsonl IN.jsonl`: dataset mode.
 *
 * Each input line is one chat-mode context; each output line is
 * {"text": ...} (plus "spans" with --spans) or {"error": {"type", "message"}},
 * one per input line, in input order. The template is compiled once and
 * shared by every worker (compiled templates are immutable).
 *
 * Streaming with constant memory: the main thread reads lines into a ring of
 * slots and writes finished slots in order; workers claim slots in order and
 * render them. A slot is reused only after its row was written, so at most
 * `ring size` rows are in flight whatever the file size. */
#include "cli.h"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    SLOTS_PER_THREAD = 64,
    MAX_THREADS = 256,
    MAX_DEFINES = 64,
    KEEP_LINE_BYTES = 1 << 20   /* a slot's line buffer beyond this is released after use */
};

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
          "A progress line is shown on stderr when it is a terminal.\n", to);
}

/* ---- growable output line (malloc; a failed allocation is remembered) ---- */

typedef struct OutBuf { char *p; size_t len, cap; bool failed; } OutBuf;

/* Room for n more bytes (and a NUL); false (remembered) when memory is out. */
static bool ob_reserve(OutBuf *b, size_t n) {
    if (b->failed) return false;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) { b->failed = true; return false; }
        b->p = p;
        b->cap = cap;
    }
    return true;
}

static void ob_put(OutBuf *b, const char *s, size_t n) {
    if (!ob_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

static void ob_puts(OutBuf *b, const char *s) { ob_put(b, s, strlen(s)); }

/* Write the escape of a byte that needs one in a JSON string, as Python's
 * json.dumps(s, ensure_ascii=False) does; returns its length (2 or 6). */
static size_t json_escape(unsigned char c, char *out) {
    static const char hex[] = "0123456789abcdef";
    char named;
    switch (c) {
    case '"': named = '"'; break;
    case '\\': named = '\\'; break;
    case '\n': named = 'n'; break;
    case '\r': named = 'r'; break;
    case '\t': named = 't'; break;
    case '\b': named = 'b'; break;
    case '\f': named = 'f'; break;
    default: named = 0;
    }
    out[0] = '\\';
    if (named) {
        out[1] = named;
        return 2;
    }
    memcpy(out + 1, "u00", 3);
    out[4] = hex[c >> 4];
    out[5] = hex[c & 15];
    return 6;
}

/* A JSON string literal. Runs of plain bytes are copied whole; the buffer
 * always has room for the rest of the string and the closing quote. */
static void ob_json_string(OutBuf *b, const char *s, size_t n) {
    if (!ob_reserve(b, n + 2)) return;
    b->p[b->len++] = '"';
    const char *run = s, *end = s + n;
    for (const char *p = s; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        memcpy(b->p + b->len, run, (size_t)(p - run));
        b->len += (size_t)(p - run);
        if (!ob_reserve(b, (size_t)(end - p) + 6)) return;
        b->len += json_escape(c, b->p + b->len);
        run = p + 1;
    }
    memcpy(b->p + b->len, run, (size_t)(end - run));
    b->len += (size_t)(end - run);
    b->p[b->len++] = '"';
}

/* ---- the job ---- */

typedef struct Define { char key[256]; const char *value; bool is_json; } Define;

typedef struct Slot {
    char *line;        /* input row (getline buffer, reused) */
    size_t cap, len;
    char *out;         /* output row without newline; NULL with done: out of memory */
    size_t out_len;
    bool failed;       /* the row is an error row */
    bool done;         /* rendered; written by the worker under the lock */
} Slot;

typedef struct Dataset {
    /* read-only while the workers run */
    const cf_template *plain;       /* rows without tools (and every row when alone) */
    const cf_template *with_tools;  /* the source's "tool_use" template, or NULL */
    const cf_error *tools_error;    /* that template did not compile: the error of rows with tools */
    cf_render_options ro;
    bool raw, spans, agp;
    Define defines[MAX_DEFINES];
    int ndefines;

    /* the ring; sequence numbers: written <= claimed <= read */
    Slot *ring;
    size_t nslots;
    pthread_mutex_t mu;
    pthread_cond_t work;       /* a row was read, or the input ended */
    pthread_cond_t finished;   /* the oldest unwritten row or wait_target is done */
    uint64_t next_read, next_claim, next_write;
    uint64_t wait_target;      /* the row the main thread waits for (with the oldest) */
    bool input_ended, stop;
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

/* Render one input row into s->out. */
static void render_row(const Dataset *d, Slot *s) {
    OutBuf b = {0};
    cf_error err;
    memset(&err, 0, sizeof err);
    cf_result res;
    cf_context *ctx = cf_context_from_json(s->line, s->len, &err);
    bool ok = ctx && apply_defines(d, ctx, &err);
    if (ok) {
        bool tools = (d->with_tools || d->tools_error) && cf_context_has_value(ctx, "tools");
        const cf_template *t = tools && d->with_tools ? d->with_tools : d->plain;
        if (tools && d->tools_error) {
            err = *d->tools_error;
            ok = false;
        } else {
            ok = d->raw ? cf_render(t, ctx, &d->ro, &res, &err) : cf_render_chat(t, ctx, &d->ro, &res, &err);
        }
    }
    if (!ok && err.kind == CF_OK) {   /* a context setter failed without saying why */
        err.kind = CF_ERR_MEMORY;
        strcpy(err.message, "out of memory");
    }
    if (ok) {
        ob_puts(&b, "{\"text\": ");
        ob_json_string(&b, res.text, res.len);
        if (d->spans) {
            ob_puts(&b, ", \"spans\": [");
            for (size_t i = 0; i < res.nspans; i++) {
                char num[80];
                snprintf(num, sizeof num, "%s{\"start\": %zu, \"end\": %zu}", i ? ", " : "",
                         res.spans[i].start, res.spans[i].end);
                ob_puts(&b, num);
            }
            ob_puts(&b, "]");
        }
        ob_puts(&b, "}");
        cf_result_free(&res);
    } else {
        error_row(&b, cf_error_kind_name(err.kind), err.message);
    }
    cf_context_free(ctx);
    if (b.failed) {
        free(b.p);
        b.p = NULL;
    }
    s->out = b.p;
    s->out_len = b.len;
    s->failed = !ok;
}

static void *worker(void *arg) {
    Dataset *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->stop && d->next_claim == d->next_read && !d->input_ended)
            pthread_cond_wait(&d->work, &d->mu);
        if (d->stop || d->next_claim == d->next_read) break;
        uint64_t seq = d->next_claim++;
        Slot *s = &d->ring[seq % d->nslots];
        pthread_mutex_unlock(&d->mu);
        render_row(d, s);
        pthread_mutex_lock(&d->mu);
        s->done = true;
        if (seq == d->next_write || seq == d->wait_target) pthread_cond_signal(&d->finished);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ---- progress (stderr, only when it is a terminal) ---- */

typedef struct Progress {
    bool on;
    double start, last;
    off_t total;        /* input size when it is a regular file, else 0 */
    uint64_t errors;
} Progress;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress_show(Progress *p, uint64_t rows, FILE *in, bool final) {
    if (!p->on) return;
    double t = now_seconds();
    if (!final && t - p->last < 0.2) return;
    p->last = t;
    double rate = t > p->start ? (double)rows / (t - p->start) : 0;
    char pct[32] = "";
    if (p->total > 0) {
        off_t at = final ? p->total : ftello(in);
        snprintf(pct, sizeof pct, " %5.1f%%", at < 0 ? 0.0 : 100.0 * (double)at / (double)p->total);
    }
    fprintf(stderr, "\rchatfmt: %llu rows%s  %.0f rows/s  %llu errors%s", (unsigned long long)rows, pct,
            rate, (unsigned long long)p->errors, final ? "\n" : "   ");
}

/* ---- the main thread: read, hand out, write in order ---- */

static void strip_newline(Slot *s) {
    while (s->len && (s->line[s->len - 1] == '\n' || s->line[s->len - 1] == '\r')) s->len--;
}

static bool write_row(FILE *out, const Slot *s) {
    static const char oom_row[] = "{\"error\": {\"type\": \"MemoryError\", \"message\": \"out of memory\"}}";
    const char *p = s->out ? s->out : oom_row;
    size_t n = s->out ? s->out_len : sizeof oom_row - 1;
    return fwrite(p, 1, n, out) == n && fputc('\n', out) != EOF;
}

/* Returns 0 when every row was written, 1 on an I/O error. */
static int pump(Dataset *d, FILE *in, FILE *out, Progress *prog) {
    int rc = 0;
    bool ended = false;   /* the main thread's copy of input_ended */
    for (;;) {
        /* read while the ring has room (workers never touch unread slots) */
        while (!ended && d->next_read - d->next_write < d->nslots) {
            Slot *s = &d->ring[d->next_read % d->nslots];
            ssize_t n = getline(&s->line, &s->cap, in);
            pthread_mutex_lock(&d->mu);
            if (n < 0) {
                ended = d->input_ended = true;
                pthread_cond_broadcast(&d->work);
            } else {
                s->len = (size_t)n;
                strip_newline(s);
                d->next_read++;
                pthread_cond_signal(&d->work);
            }
            pthread_mutex_unlock(&d->mu);
            if (n < 0 && ferror(in)) {
                fprintf(stderr, "chatfmt: error: IOError: cannot read the input: %s\n", strerror(errno));
                rc = 1;
            }
        }
        /* With reading to do, write what is done and go on. Otherwise wait
         * for the oldest row and for the end of a batch of rows: waking per
         * row would cost a context switch per row. */
        pthread_mutex_lock(&d->mu);
        uint64_t pending = d->next_read - d->next_write;
        if (pending && (ended || pending == d->nslots)) {
            uint64_t batch = d->nslots / 2;
            d->wait_target = d->next_write + (pending < batch ? pending : batch) - 1;
            while (!(d->ring[d->next_write % d->nslots].done && d->ring[d->wait_target % d->nslots].done))
                pthread_cond_wait(&d->finished, &d->mu);
        }
        uint64_t ready = 0;
        while (d->next_write + ready < d->next_read && d->ring[(d->next_write + ready) % d->nslots].done)
            ready++;
        bool all_done = ended && d->next_write + ready == d->next_read;
        pthread_mutex_unlock(&d->mu);

        /* finished slots are the main thread's until next_write passes them */
        for (uint64_t k = 0; k < ready; k++) {
            Slot *s = &d->ring[(d->next_write + k) % d->nslots];
            if (rc == 0 && !write_row(out, s)) {
                fprintf(stderr, "chatfmt: error: IOError: cannot write the output: %s\n", strerror(errno));
                rc = 1;
            }
            prog->errors += s->failed;
            free(s->out);
            s->out = NULL;
            s->done = false;
            if (s->cap > KEEP_LINE_BYTES) {
                free(s->line);
                s->line = NULL;
                s->cap = 0;
            }
        }
        pthread_mutex_lock(&d->mu);
        d->next_write += ready;
        if (rc) {
            d->stop = true;
            pthread_cond_broadcast(&d->work);
        }
        pthread_mutex_unlock(&d->mu);
        progress_show(prog, d->next_write, in, false);
        if (rc || all_done) break;
    }
    return rc;
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
            if (*end || a->threads < 1 || a->threads > MAX_THREADS) {
                fprintf(stderr, "chatfmt: error: UsageError: --threads wants 1..%d\n", MAX_THREADS);
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

static long default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : n;
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
    FILE *in = NULL, *out = NULL;
    pthread_t threads[MAX_THREADS];
    long started = 0;
    int rc = 1;
    if (!load_templates(&a, &l)) goto done;
    d.plain = l.plain;
    d.with_tools = l.with_tools;
    d.tools_error = l.tools_broken ? &l.tools_error : NULL;
    d.ro.limits = &a.lim;
    d.ro.now = a.now;
    d.ro.defaults = d.raw ? NULL : l.src.tokens;

    in = strcmp(a.input, "-") ? fopen(a.input, "rb") : stdin;
    if (!in) { fprintf(stderr, "chatfmt: error: IOError: cannot open %s: %s\n", a.input, strerror(errno)); goto done; }
    out = a.output ? fopen(a.output, "wb") : stdout;
    if (!out) { fprintf(stderr, "chatfmt: error: IOError: cannot open %s: %s\n", a.output, strerror(errno)); goto done; }
    setvbuf(out, NULL, _IOFBF, 1 << 16);

    long nthreads = a.threads ? a.threads : default_threads();
    d.nslots = (size_t)nthreads * SLOTS_PER_THREAD;
    d.ring = calloc(d.nslots, sizeof *d.ring);
    if (!d.ring) { fprintf(stderr, "chatfmt: error: MemoryError: out of memory\n"); goto done; }
    pthread_mutex_init(&d.mu, NULL);
    pthread_cond_init(&d.work, NULL);
    pthread_cond_init(&d.finished, NULL);

    Progress prog = {0};
    prog.on = isatty(STDERR_FILENO);
    prog.start = prog.last = now_seconds();
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode)) prog.total = st.st_size;

    for (; started < nthreads; started++)
        if (pthread_create(&threads[started], NULL, worker, &d) != 0) break;
    if (started == 0) {
        fprintf(stderr, "chatfmt: error: RuntimeError: cannot start a thread\n");
    } else {
        rc = pump(&d, in, out, &prog);
        if (fflush(out) != 0 && rc == 0) {
            fprintf(stderr, "chatfmt: error: IOError: cannot write the output: %s\n", strerror(errno));
            rc = 1;
        }
        progress_show(&prog, d.next_write, in, true);
    }
    pthread_mutex_lock(&d.mu);
    d.stop = true;
    pthread_cond_broadcast(&d.work);
    pthread_mutex_unlock(&d.mu);
    for (long i = 0; i < started; i++) pthread_join(threads[i], NULL);
    for (size_t i = 0; i < d.nslots; i++) {
        free(d.ring[i].line);
        free(d.ring[i].out);
    }
    free(d.ring);
    pthread_mutex_destroy(&d.mu);
    pthread_cond_destroy(&d.work);
    pthread_cond_destroy(&d.finished);
done:
    if (in && in != stdin) fclose(in);
    if (out && out != stdout && fclose(out) != 0 && rc == 0) rc = 1;
    unload_templates(&l);
    return rc;
}
