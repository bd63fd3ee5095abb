/* bench_bytes.c ROWS.jsonl TEMPLATE — dataset mode's byte work against the
 * machine's memory speed, on one thread: the floor is memcpy and memchr over
 * the same bytes (in RAM-sized passes over the whole file, as dataset mode
 * reads it), and the figures are
 *   json read     cf_context_from_json_limits on every row (then freed)
 *   json cached   cf_context_from_json_cached, one cache (as a worker)
 *   quote         cf_json_quote of every row's rendered output (the
 *                 {"text": ...} string dataset mode writes)
 *   quote memo    the same as dataset mode writes it (cli/quote_memo.c: a
 *                 beginning an earlier output had takes its quoted bytes)
 * each in GB/s of its input and as a fraction of memcpy's speed on it, and
 * per row: the bytes read and written, and each part's ns and ns a byte. The
 * render itself is not byte work and is left out (bench_dataset_mixed.py
 * times whole rows). Best of 5 passes. */
#include "chatfmt.h"
#include "quote_memo.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) { fclose(f); free(b); return NULL; }
    fclose(f);
    b[len] = 0;
    *n = (size_t)len;
    return b;
}

typedef struct Span { const char *p; size_t n; } Span;
typedef struct Job {
    Span *rows, *outs;
    size_t nrows;
    char *dst;          /* room for the largest row or quoted output */
    cf_json_cache *cache;
    QuoteMemo *memo;
    OutBuf out;
    size_t sink;
} Job;

typedef void (*Pass)(Job *);

static void pass_memcpy_rows(Job *j) {
    for (size_t i = 0; i < j->nrows; i++) memcpy(j->dst, j->rows[i].p, j->rows[i].n), j->sink += (unsigned char)j->dst[0];
}
static void pass_memcpy_outs(Job *j) {
    for (size_t i = 0; i < j->nrows; i++) memcpy(j->dst, j->outs[i].p, j->outs[i].n), j->sink += (unsigned char)j->dst[0];
}
static void pass_memchr_rows(Job *j) {
    for (size_t i = 0; i < j->nrows; i++) {
        const char *nl = memchr(j->rows[i].p, '\n', j->rows[i].n + 1);   /* each row's end */
        j->sink += (size_t)(nl - j->rows[i].p);
    }
}
static void pass_json(Job *j) {
    for (size_t i = 0; i < j->nrows; i++) {
        cf_error err;
        cf_context *c = cf_context_from_json_limits(j->rows[i].p, j->rows[i].n, NULL, &err);
        j->sink += c != NULL;
        cf_context_free(c);
    }
}
static void pass_json_cached(Job *j) {
    for (size_t i = 0; i < j->nrows; i++) {
        cf_error err;
        cf_context *c = cf_context_from_json_cached(j->rows[i].p, j->rows[i].n, NULL, j->cache, &err);
        j->sink += c != NULL;
        cf_context_free(c);
    }
}
static void pass_quote(Job *j) {
    for (size_t i = 0; i < j->nrows; i++) j->sink += cf_json_quote(j->outs[i].p, j->outs[i].n, j->dst, 6 * j->outs[i].n + 2);
}

static void pass_quote_memo(Job *j) {
    for (size_t i = 0; i < j->nrows; i++) {
        j->out.len = 0;
        quote_memo_put(j->memo, &j->out, j->outs[i].p, j->outs[i].n);
        j->sink += j->out.len;
    }
}
static size_t quoted_bytes(Job *j) {
    size_t total = 0;
    for (size_t i = 0; i < j->nrows; i++) total += cf_json_quote(j->outs[i].p, j->outs[i].n, j->dst, 6 * j->outs[i].n + 2);
    return total;
}

static double best_gbs(Pass pass, Job *j, size_t bytes) {
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        pass(j);
        double t = now_s() - t0;
        if (t < best) best = t;
    }
    return (double)bytes / best / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_bytes ROWS.jsonl TEMPLATE\n");
        return 2;
    }
    size_t n, tn;
    char *data = slurp(argv[1], &n), *text = slurp(argv[2], &tn);
    if (!data || !text) { fprintf(stderr, "bench_bytes: cannot read the inputs\n"); return 2; }
    cf_error err;
    cf_template *t = cf_compile(text, tn, NULL, &err);
    if (!t) { fprintf(stderr, "bench_bytes: %s\n", err.message); return 2; }
    Job j = {0};
    size_t cap = 1024, in_bytes = 0, out_bytes = 0, biggest = 0;
    j.rows = malloc(cap * sizeof *j.rows);
    j.outs = malloc(cap * sizeof *j.outs);
    for (char *p = data, *end = data + n; p < end && j.rows && j.outs;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (j.nrows == cap) {
            cap *= 2;
            j.rows = realloc(j.rows, cap * sizeof *j.rows);
            j.outs = realloc(j.outs, cap * sizeof *j.outs);
            if (!j.rows || !j.outs) break;
        }
        cf_context *c = cf_context_from_json_limits(p, len, NULL, &err);
        cf_result r;
        Span out = {"", 0};
        if (c && cf_render_chat(t, c, NULL, &r, &err)) {
            out.p = r.text;   /* kept to the end (the process's) */
            out.n = r.len;
            free(r.spans);
        }
        cf_context_free(c);
        j.rows[j.nrows] = (Span){p, len};
        j.outs[j.nrows++] = out;
        in_bytes += len;
        out_bytes += out.n;
        if (len > biggest) biggest = len;
        if (6 * out.n + 2 > biggest) biggest = 6 * out.n + 2;
        p += len + 1;
    }
    j.dst = malloc(biggest + 1);
    j.cache = cf_json_cache_new();
    j.memo = quote_memo_new();
    if (!j.rows || !j.outs || !j.dst || !j.cache || !j.memo) { fprintf(stderr, "bench_bytes: out of memory\n"); return 2; }
    double cp_in = best_gbs(pass_memcpy_rows, &j, in_bytes), chr = best_gbs(pass_memchr_rows, &j, in_bytes);
    double js = best_gbs(pass_json, &j, in_bytes), jc = best_gbs(pass_json_cached, &j, in_bytes);
    double cp_out = best_gbs(pass_memcpy_outs, &j, out_bytes), q = best_gbs(pass_quote, &j, out_bytes);
    double qm = best_gbs(pass_quote_memo, &j, out_bytes);
    size_t written = quoted_bytes(&j);
    printf("bytes: %zu rows, %.1f MB in, %.1f MB out (%s)\n", j.nrows, in_bytes / 1e6, out_bytes / 1e6, argv[2]);
    printf("memcpy_rows_gb_s %.2f   memchr_rows_gb_s %.2f   (the floor: the same bytes copied and scanned)\n", cp_in, chr);
    printf("json_read_gb_s %.2f   (%.0f%% of memcpy)   json_cached_gb_s %.2f   (%.0f%% of memcpy: repeated tools read once)\n",
           js, 100 * js / cp_in, jc, 100 * jc / cp_in);
    printf("memcpy_outputs_gb_s %.2f   quote_gb_s %.2f   (%.0f%% of memcpy)   quote_memo_gb_s %.2f   (%.0f%% of memcpy: as dataset mode)\n",
           cp_out, q, 100 * q / cp_out, qm, 100 * qm / cp_out);
    double rows = (double)j.nrows, in_row = in_bytes / rows, out_row = written / rows;
    printf("per_row: %.0f bytes read, %.0f written;  memcpy %.0f ns (%.3f ns/byte) + %.0f ns;  "
           "json_cached %.0f ns (%.3f ns/byte);  quote_memo %.0f ns (%.3f ns/byte of output)\n",
           in_row, out_row, in_row / cp_in, 1 / cp_in, out_row / cp_out, in_row / jc, 1 / jc,
           (out_bytes / rows) / qm, 1 / qm);
    cf_json_cache_free(j.cache);
    quote_memo_free(j.memo);
    free(j.out.p);
    cf_template_free(t);
    return j.sink == 42 ? 1 : 0;   /* (keeps the passes from being optimised away) */
}
