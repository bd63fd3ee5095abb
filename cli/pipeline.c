/* pipeline.c — the row pipeline of dataset mode and --batch (pipeline.h).
 *
 * Streaming with constant memory: the main thread reads lines into a ring of
 * blocks and writes finished blocks in order; workers claim whole blocks
 * and run the row function on their rows. Rows travel in blocks of
 * BLOCK_ROWS so that the lock, the wake-ups and the writes are paid once per
 * block, not per row. A block is reused only after it was written, so at
 * most `ring size` rows are in flight whatever the file size; its buffers
 * are kept for the next rows (unless a huge row made them big). */
#include "pipeline.h"
#include "chatfmt.h"
#include <errno.h>
#include <pthread.h>
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
    KEEP_BUFFER_BYTES = 1 << 20   /* a line or output buffer beyond this is released after use */
};

/* ---- output buffer ---- */

/* Room for n more bytes (and a NUL); false (remembered) when memory is out. */
bool ob_reserve(OutBuf *b, size_t n) {
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

void ob_put(OutBuf *b, const char *s, size_t n) {
    if (!ob_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void ob_puts(OutBuf *b, const char *s) { ob_put(b, s, strlen(s)); }

/* A JSON string literal (json.dumps(s, ensure_ascii=False)). */
void ob_json_string(OutBuf *b, const char *s, size_t n) {
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


/* ---- the ring ---- */

typedef struct Line { char *p; size_t cap, len; } Line;

typedef struct Block {
    Line rows[BLOCK_ROWS];   /* input lines (getline buffers, reused) */
    size_t nrows;
    OutBuf out;              /* the rows' output lines */
    size_t end[BLOCK_ROWS];  /* where each row's output ends in `out` */
    bool oom[BLOCK_ROWS];    /* out of memory for that row: written as oom_row */
    uint64_t errors;         /* error rows in the block */
    bool done;               /* processed; set by the worker under the lock */
} Block;

typedef struct Ring {
    const Pipeline *p;
    Block *blocks;
    size_t nblocks;
    pthread_mutex_t mu;
    pthread_cond_t work;       /* a block was read, or the input ended */
    pthread_cond_t finished;   /* the oldest unwritten block is done */
    /* sequence numbers of blocks: written <= claimed <= read */
    uint64_t next_read, next_claim, next_write;
    bool input_ended, stop;
} Ring;

typedef struct Worker { Ring *ring; unsigned index; } Worker;

/* Run the row function on every row of a block, into its output buffer. */
static void process_block(const Pipeline *p, unsigned worker, Block *blk) {
    OutBuf *b = &blk->out;
    b->len = 0;
    b->failed = false;
    blk->errors = 0;
    for (size_t i = 0; i < blk->nrows; i++) {
        size_t start = b->len;
        bool ok = p->row(p->job, worker, blk->rows[i].p, blk->rows[i].len, b);
        blk->oom[i] = b->failed;
        if (b->failed) {   /* drop the partial line: the writer puts an error row there */
            b->failed = false;
            b->len = start;
        }
        blk->errors += !ok || blk->oom[i];
        blk->end[i] = b->len;
    }
}

static void *worker_main(void *arg) {
    const Worker *w = arg;
    Ring *d = w->ring;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->stop && d->next_claim == d->next_read && !d->input_ended)
            pthread_cond_wait(&d->work, &d->mu);
        if (d->stop || d->next_claim == d->next_read) break;
        uint64_t seq = d->next_claim++;
        Block *blk = &d->blocks[seq % d->nblocks];
        pthread_mutex_unlock(&d->mu);
        process_block(d->p, w->index, blk);
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

static bool write_block(FILE *out, const Block *blk, const char *oom_row) {
    size_t start = 0;
    for (size_t i = 0; i < blk->nrows; i++) {
        const char *p = blk->oom[i] ? oom_row : blk->out.p + start;
        size_t n = blk->oom[i] ? strlen(oom_row) : blk->end[i] - start;
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
static int pump(Ring *d, FILE *in, FILE *out, Progress *prog) {
    int rc = 0;
    bool ended = false;   /* the main thread's copy of input_ended */
    uint64_t rows = 0;
    for (;;) {
        /* read while the ring has room (workers never touch unread blocks) */
        while (!ended && d->next_read - d->next_write < d->nblocks) {
            Block *blk = &d->blocks[d->next_read % d->nblocks];
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
            while (!d->blocks[d->next_write % d->nblocks].done) pthread_cond_wait(&d->finished, &d->mu);
        uint64_t ready = 0;
        while (d->next_write + ready < d->next_read && d->blocks[(d->next_write + ready) % d->nblocks].done)
            ready++;
        bool all_done = ended && d->next_write + ready == d->next_read;
        pthread_mutex_unlock(&d->mu);

        /* finished blocks are the main thread's until next_write passes them */
        for (uint64_t k = 0; k < ready; k++) {
            Block *blk = &d->blocks[(d->next_write + k) % d->nblocks];
            if (rc == 0 && !write_block(out, blk, d->p->oom_row)) {
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


/* ---- running it ---- */

unsigned pipeline_default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > PIPELINE_MAX_THREADS ? PIPELINE_MAX_THREADS : (unsigned)n;
}

int pipeline_run(Pipeline *p, FILE *in, FILE *out) {
    static Ring d;   /* one pipeline per process */
    static Worker workers[PIPELINE_MAX_THREADS];
    pthread_t threads[PIPELINE_MAX_THREADS];
    memset(&d, 0, sizeof d);
    d.p = p;
    p->rows = p->errors = 0;
    unsigned nthreads = p->threads < 1 ? 1 : p->threads > PIPELINE_MAX_THREADS ? PIPELINE_MAX_THREADS : p->threads;
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
    d.nblocks = (size_t)nthreads * BLOCKS_PER_THREAD;
    d.blocks = calloc(d.nblocks, sizeof *d.blocks);
    if (!d.blocks) {
        fprintf(stderr, "chatfmt: error: MemoryError: out of memory\n");
        return 1;
    }
    pthread_mutex_init(&d.mu, NULL);
    pthread_cond_init(&d.work, NULL);
    pthread_cond_init(&d.finished, NULL);

    Progress prog = {0};
    prog.on = p->progress && isatty(STDERR_FILENO);
    prog.start = prog.last = now_seconds();
    struct stat st;
    if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode)) prog.total = st.st_size;

    int rc = 1;
    unsigned started = 0;
    for (; started < nthreads; started++) {
        workers[started].ring = &d;
        workers[started].index = started;
        if (pthread_create(&threads[started], NULL, worker_main, &workers[started]) != 0) break;
    }
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
    for (unsigned i = 0; i < started; i++) pthread_join(threads[i], NULL);
    for (size_t i = 0; i < d.nblocks; i++) {
        for (size_t k = 0; k < BLOCK_ROWS; k++) free(d.blocks[i].rows[k].p);
        free(d.blocks[i].out.p);
    }
    free(d.blocks);
    pthread_mutex_destroy(&d.mu);
    pthread_cond_destroy(&d.work);
    pthread_cond_destroy(&d.finished);
    p->rows = prog.rows;
    p->errors = prog.errors;
    return rc;
}
