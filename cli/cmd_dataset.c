/* cmd_dataset.c — `chatfmt render TEMPLATE --jsonl IN.jsonl`: dataset mode.
 *
 * Each input line is one chat-mode context; each output line is
 * {"text": ...} (plus "spans" with --spans) or {"error": {"type", "message"}},
 * one per input line, in input order. The template is compiled once and
 * shared by every worker (compiled templates are immutable).
 *
 * Streaming with constant memory: the main thread reads lines into a ring of
 * blocks and writes finished blocks in order; workers claim whole blocks
 * and render their rows. Rows travel in blocks of BLOCK_ROWS so that the
 * lock, the wake-ups and the writes are paid once per block, not per row. A
 * block is reused only after it was written, so at most `ring size` rows are
 * in flight whatever the file size; its buffers are kept for the next rows
 * (unless a huge row made them big). */
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
#ifdef __GLIBC__
#include <malloc.h>
#endif

enum {
    BLOCK_ROWS = 32,
    BLOCKS_PER_THREAD = 4,
    MAX_THREADS = 256,
    MAX_DEFINES = 64,
    KEEP_BUFFER_BYTES = 1 << 20   /* a line or output buffer beyond this is released after use */
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

/* ---- growable output buffer (malloc; a failed allocation is remembered) ---- */

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

/* A JSON string literal (json.dumps(s, ensure_ascii=False)). */
static void ob_json_string(OutBuf *b, const char *s, size_t n) {
    /* room for the worst case (6 bytes a byte) spares measuring it first */
    if (!ob_reserve(b, n <= (1 << 16) ? 6 * n + 2 : 2)) return;
    size_t room = b->cap - b->len - 1;
    size_t need = cf_json_quote(s, n, b->p + b->len, room);
    if (need > room) {   /* the buffer grows, and the next rows fit at once */
        if (!ob_reserve(b, need)) return;
        need = cf_json_quote(s, n, b->p + b->len, need);
    }
    b->len += need;
}

/* ---- the job ---- */

typedef struct Define { char key[256]; const char *value; bool is_json; } Define;

typedef struct Line { char *p; size_t cap, len; } Line;

typedef struct Block {
    Line rows[BLOCK_ROWS];   /* input lines (getline buffers, reused) */
    size_t nrows;
    OutBuf out;              /* the rows' output lines, each ending in '\n' */
    size_t end[BLOCK_ROWS];  /* where each row's output line ends in `out` */
    bool oom[BLOCK_ROWS];    /* out of memory for that row: written as an error row */
    uint64_t errors;         /* error rows in the block */
    bool done;               /* rendered; set by the worker under the lock */
} Block;

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

    /* the ring; sequence numbers of blocks: written <= claimed <= read */
    Block *ring;
    size_t nblocks;
    pthread_mutex_t mu;
    pthread_cond_t work;       /* a block was read, or the input ended */
    pthread_cond_t finished;   /* the oldest unwritten block is done */
    uint64_t next_read, next_claim, next_write;
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

/* Render one input row, appending its output line to b; false when it is
 * an error row. */
static bool render_row(const Dataset *d, const char *line, size_t len, OutBuf *b) {
    cf_error err;
    err.kind = CF_OK;
    err.message[0] = 0;
    cf_result res;
    cf_context *ctx = cf_context_from_json_limits(line, len, d->lim, &err);
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
    cf_context_free(ctx);
    if (!ok && err.kind == CF_OK) {   /* a context setter failed without saying why */
        err.kind = CF_ERR_MEMORY;
        strcpy(err.message, "out of memory");
    }
    if (!ok) {
        error_row(b, cf_error_kind_name(err.kind), err.message);
        ob_put(b, "\n", 1);
        return false;
    }
    ob_puts(b, "{\"text\": ");
    ob_json_string(b, res.text, res.len);
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

/* Render every row of a block into its output buffer. */
static void render_block(const Dataset *d, Block *blk) {
    OutBuf *b = &blk->out;
    b->len = 0;
    b->failed = false;
    blk->errors = 0;
    for (size_t i = 0; i < blk->nrows; i++) {
        size_t start = b->len;
        bool ok = render_row(d, blk->rows[i].p, blk->rows[i].len, b);
        blk->oom[i] = b->failed;
        if (b->failed) {   /* drop the partial line: the writer puts an error row there */
            b->failed = false;
            b->len = start;
        }
        blk->errors += !ok || blk->oom[i];
        blk->end[i] = b->len;
    }
}

static void *worker(void *arg) {
    Dataset *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->stop && d->next_claim == d->next_read && !d->input_ended)
            pthread_cond_wait(&d->work, &d->mu);
        if (d->stop || d->next_claim == d->next_read) break;
        uint64_t seq = d->next_claim++;
        Block *blk = &d->ring[seq % d->nblocks];
        pthread_mutex_unlock(&d->mu);
        render_block(d, blk);
        pthread_mutex_lock(&d->mu);
        blk->done = true;
        if (seq == d->next_write) pthread_cond_signal(&d->finished);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

/* ---- progress (stderr, only when it is a terminal) ---- */

typedef struct Progress {
    bool on;
    uint64_t rows;      /* written, at the end */
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

/* Read up to BLOCK_ROWS lines into blk; false at the end of the input. */
static bool read_block(Block *blk, FILE *in) {
    blk->nrows = 0;
    while (blk->nrows < BLOCK_ROWS) {
        Line *l = &blk->rows[blk->nrows];
        ssize_t n = getline(&l->p, &l->cap, in);
        if (n < 0) return false;
        l->len = (size_t)n;
        while (l->len && (l->p[l->len - 1] == '\n' || l->p[l->len - 1] == '\r')) l->len--;
        blk->nrows++;
    }
    return true;
}

static bool write_block(FILE *out, const Block *blk) {
    static const char oom_row[] = "{\"error\": {\"type\": \"MemoryError\", \"message\": \"out of memory\"}}\n";
    size_t start = 0;
    for (size_t i = 0; i < blk->nrows; i++) {
        const char *p = blk->oom[i] ? oom_row : blk->out.p + start;
        size_t n = blk->oom[i] ? sizeof oom_row - 1 : blk->end[i] - start;
        if (n && fwrite(p, 1, n, out) != n) return false;
        start = blk->end[i];
    }
    return true;
}

/* After a block was written: keep its buffers for the next rows, unless a
 * huge row made one big. */
static void recycle_block(Block *blk) {
    for (size_t i = 0; i < BLOCK_ROWS; i++) {
        if (blk->rows[i].cap > KEEP_BUFFER_BYTES) {
            free(blk->rows[i].p);
            blk->rows[i].p = NULL;
            blk->rows[i].cap = 0;
        }
    }
    if (blk->out.cap > KEEP_BUFFER_BYTES) {
        free(blk->out.p);
        memset(&blk->out, 0, sizeof blk->out);
    }
    blk->out.len = 0;
    blk->nrows = 0;
    blk->done = false;
}

/* Returns 0 when every row was written, 1 on an I/O error. */
static int pump(Dataset *d, FILE *in, FILE *out, Progress *prog) {
    int rc = 0;
    bool ended = false;   /* the main thread's copy of input_ended */
    uint64_t rows = 0;
    for (;;) {
        /* read while the ring has room (workers never touch unread blocks) */
        while (!ended && d->next_read - d->next_write < d->nblocks) {
            Block *blk = &d->ring[d->next_read % d->nblocks];
            bool more = read_block(blk, in);
            pthread_mutex_lock(&d->mu);
            if (blk->nrows) {
                d->next_read++;
                pthread_cond_signal(&d->work);
            }
            if (!more) {
                ended = d->input_ended = true;
                pthread_cond_broadcast(&d->work);
            }
            pthread_mutex_unlock(&d->mu);
            if (!more && ferror(in)) {
                fprintf(stderr, "chatfmt: error: IOError: cannot read the input: %s\n", strerror(errno));
                rc = 1;
            }
        }
        /* With reading to do, write what is done and go on; otherwise wait
         * for the oldest block. */
        pthread_mutex_lock(&d->mu);
        uint64_t pending = d->next_read - d->next_write;
        if (pending && (ended || pending == d->nblocks))
            while (!d->ring[d->next_write % d->nblocks].done) pthread_cond_wait(&d->finished, &d->mu);
        uint64_t ready = 0;
        while (d->next_write + ready < d->next_read && d->ring[(d->next_write + ready) % d->nblocks].done)
            ready++;
        bool all_done = ended && d->next_write + ready == d->next_read;
        pthread_mutex_unlock(&d->mu);

        /* finished blocks are the main thread's until next_write passes them */
        for (uint64_t k = 0; k < ready; k++) {
            Block *blk = &d->ring[(d->next_write + k) % d->nblocks];
            if (rc == 0 && !write_block(out, blk)) {
                fprintf(stderr, "chatfmt: error: IOError: cannot write the output: %s\n", strerror(errno));
                rc = 1;
            }
            prog->errors += blk->errors;
            rows += blk->nrows;
            recycle_block(blk);
        }
        pthread_mutex_lock(&d->mu);
        d->next_write += ready;
        if (rc) {
            d->stop = true;
            pthread_cond_broadcast(&d->work);
        }
        pthread_mutex_unlock(&d->mu);
        progress_show(prog, rows, in, false);
        if (rc || all_done) break;
    }
    prog->rows = rows;
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
    d.lim = &a.lim;
    d.ro.now = a.now;
    d.ro.defaults = d.raw ? NULL : l.src.tokens;

    in = strcmp(a.input, "-") ? fopen(a.input, "rb") : stdin;
    if (!in) { fprintf(stderr, "chatfmt: error: IOError: cannot open %s: %s\n", a.input, strerror(errno)); goto done; }
    out = a.output ? fopen(a.output, "wb") : stdout;
    if (!out) { fprintf(stderr, "chatfmt: error: IOError: cannot open %s: %s\n", a.output, strerror(errno)); goto done; }
    /* given buffers: glibc ignores the size of one it allocates itself */
    static char in_buf[1 << 16], out_buf[1 << 16];
    setvbuf(in, in_buf, _IOFBF, sizeof in_buf);
    setvbuf(out, out_buf, _IOFBF, sizeof out_buf);

    /* Every row mallocs and frees two 64 KiB arena chunks (its context and
     * its render). On top of a worker's heap they would be handed back to
     * the kernel and faulted in again on every row (an madvise per row, a
     * quarter of the time): keep up to 64 MiB free in each heap instead. */
#if defined(__GLIBC__) && defined(M_TRIM_THRESHOLD)
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
    long nthreads = a.threads ? a.threads : default_threads();
    d.nblocks = (size_t)nthreads * BLOCKS_PER_THREAD;
    d.ring = calloc(d.nblocks, sizeof *d.ring);
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
        progress_show(&prog, prog.rows, in, true);
    }
    pthread_mutex_lock(&d.mu);
    d.stop = true;
    pthread_cond_broadcast(&d.work);
    pthread_mutex_unlock(&d.mu);
    for (long i = 0; i < started; i++) pthread_join(threads[i], NULL);
    for (size_t i = 0; i < d.nblocks; i++) {
        for (size_t k = 0; k < BLOCK_ROWS; k++) free(d.ring[i].rows[k].p);
        free(d.ring[i].out.p);
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
