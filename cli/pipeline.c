/* pipeline.c — the row pipeline of dataset mode and --batch (pipeline.h).
 *
 * Streaming with constant memory, and no thread that only moves bytes:
 * each of the `threads` threads (the caller is one) claims the next block
 * by reading it itself, under the input lock: from a regular file, mapped,
 * by finding its lines where they lie; otherwise with read(2) straight into
 * the block's buffer; runs the row function on its rows; and then, if that
 * block is the next to be written and nobody is writing, writes it and every
 * following block already done with write(2) (the writer token). A thread
 * sleeps only on a lock or when every block of the ring is in flight, so the
 * futex waits and wake-ups of a reader thread feeding workers are gone.
 *
 * Rows travel in blocks so that the locks, the system calls and the
 * bookkeeping are paid once per block, not per row. A block is reused only
 * after it was written, so at most `ring size` blocks are in flight whatever
 * the file size; its buffers are kept for the next rows (unless a huge row
 * made them big). */
#define _DEFAULT_SOURCE 1   /* madvise(MADV_DONTNEED) */
#include "pipeline.h"
#include "chatfmt.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

enum {
    BLOCK_ROWS = 32,              /* rows a block aims at (reads are sized by the mean line) */
    MAX_BLOCK_ROWS = 64,          /* and holds at most */
    BLOCKS_PER_THREAD = 4,
    IN_BUF_BYTES = 64 << 10,      /* a block's input buffer, and the most one read(2) asks for */
    /* A block of a mapped input (no buffer to fill): rows of a few KB then
     * still come some twenty a block, so that the locks, the wake-ups and
     * the write(2) of a block are paid over many rows. */
    MAP_BLOCK_BYTES = 256 << 10,
    FIRST_READ_BYTES = 16 << 10,  /* before the mean line is known */
    MIN_READ_BYTES = 4 << 10,
    KEEP_BUFFER_BYTES = 1 << 20   /* an input or output buffer beyond this is released after use */
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

typedef struct Row { size_t at, len; } Row;   /* a line of the block's input buffer */

typedef struct Block {
    /* Input: the bytes read for the block. Its rows come first; after them
     * may follow the start of the next block's rows, which that block
     * copies (so the buffer stays intact until the slot is claimed again,
     * always after the next block was read). Offsets, not pointers: the
     * buffer may move while a long line grows it. */
    char *in;
    size_t in_cap;
    const char *rows_base;   /* what rows[].at counts from: `in`, or the mapped file */
    Row rows[MAX_BLOCK_ROWS];
    size_t nrows;
    uint64_t in_end;         /* input offset after its last row (progress) */
    /* output, filled by the thread that processes the block */
    OutBuf out;              /* the rows' output lines */
    size_t end[MAX_BLOCK_ROWS];  /* where each row's output ends in `out` */
    bool oom[MAX_BLOCK_ROWS];    /* out of memory for that row: written as oom_row */
    uint64_t errors;         /* error rows in the block */
    size_t first_bad;        /* the first of them, or SIZE_MAX */
    bool done;               /* processed, not yet written (out_mu) */
} Block;

typedef struct Progress {
    bool on;
    double start, last;
    off_t total;        /* input size when it is a regular file, else 0 */
} Progress;

typedef struct Ring {
    const Pipeline *p;
    Block *blocks;
    size_t nblocks;
    int in_fd, out_fd;
    /* A regular input file is mapped, and its rows are read where they lie:
     * no copy into block buffers by read(2), none of a line split between
     * two reads (NULL: read(2) into the blocks). */
    const char *map;
    size_t map_len;
    size_t map_released;   /* the mapping's pages before this were given back (the writer's) */

    /* The input side (in_mu): the fd, the next block to read and where the
     * line that the last block left unfinished starts. */
    pthread_mutex_t in_mu;
    uint64_t next_read;
    const Block *carry;        /* the block whose buffer holds that line's start, or NULL */
    size_t carry_at, carry_len;
    uint64_t consumed, lines;  /* input bytes and lines handed out in rows */
    bool input_ended;

    /* The output side (out_mu): blocks are written in sequence order,
     * next_write <= next_read; slot seq % nblocks holds block seq. */
    pthread_mutex_t out_mu;
    pthread_cond_t room;       /* next_write moved (or failed was set) */
    uint64_t next_write;
    bool writing;              /* a thread holds the writer token */
    bool room_wanted;          /* the reader waits on `room` */
    bool failed;               /* I/O error or out of memory: stop */

    /* the writer token holder's alone */
    uint64_t rows, errors;
    uint64_t first_error_line;   /* 0: none yet */
    char first_error[PIPELINE_ERROR_TEXT];
    Progress prog;
} Ring;

typedef struct Worker { Ring *ring; unsigned index; } Worker;

/* ---- progress (stderr, only when it is a terminal) ---- */

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress_show(Ring *d, uint64_t at, bool final) {
    Progress *p = &d->prog;
    if (!p->on) return;
    double t = now_seconds();
    if (!final && t - p->last < 0.2) return;
    p->last = t;
    double rate = t > p->start ? (double)d->rows / (t - p->start) : 0;
    char pct[32] = "";
    if (p->total > 0) {
        double f = final ? 1.0 : (double)at / (double)p->total;
        snprintf(pct, sizeof pct, " %5.1f%%", 100.0 * (f > 1.0 ? 1.0 : f));
    }
    fprintf(stderr, "\rchatfmt: %llu rows%s  %.0f rows/s  %llu errors%s", (unsigned long long)d->rows, pct,
            rate, (unsigned long long)d->errors, final ? "\n" : "   ");
}

/* ---- reading a block (under in_mu) ---- */

/* The input buffer holds at least have + more bytes (its content kept);
 * false when memory is out (or the size would overflow). */
static bool in_reserve(Block *blk, size_t have, size_t more) {
    if (have > SIZE_MAX / 4 || more > SIZE_MAX / 4) return false;   /* so that nothing below wraps */
    size_t n = have + more;
    if (blk->in_cap >= n) return true;
    size_t cap = blk->in_cap ? blk->in_cap : IN_BUF_BYTES;
    while (cap < n) cap *= 2;
    char *p = realloc(blk->in, cap);
    if (!p) return false;
    blk->in = p;
    blk->in_cap = cap;
    return true;
}

/* The line [at, end) of the buffer (without its '\n') becomes a row; the
 * '\r's before the '\n' go too (CRLF files; as the getline-based reader
 * did). A NUL follows the row (over its '\n' or a '\r'), so that a row is
 * also a C string. */
static void add_row(Block *blk, size_t at, size_t end) {
    while (end > at && blk->in[end - 1] == '\r') end--;
    blk->in[end] = '\0';
    blk->rows[blk->nrows].at = at;
    blk->rows[blk->nrows].len = end - at;
    blk->nrows++;
}

/* Read the next block into blk: the carried-over start of a line, then
 * read(2) until the buffer holds at least one whole line (or the input
 * ends). Returns its number of rows (0 at the end of the input), or -1
 * after an error (reported on stderr). */
static long read_block(Ring *d, Block *blk) {
    blk->nrows = 0;
    /* a buffer a huge line made big goes back before the slot is reused */
    if (blk->in_cap > KEEP_BUFFER_BYTES) {
        free(blk->in);
        blk->in = NULL;
        blk->in_cap = 0;
    }
    size_t len = d->carry_len;
    if (!in_reserve(blk, len, MIN_READ_BYTES)) goto oom;
    if (len) memcpy(blk->in, d->carry->in + d->carry_at, len);
    d->carry = NULL;
    d->carry_len = 0;
    /* Blocks of about BLOCK_ROWS rows keep the threads evenly busy to the
     * end of small inputs, as blocks of a fixed row count did: the first
     * read asks for the bytes that many lines took on average so far, so
     * little is left over to copy into the next block. */
    size_t want = d->lines ? (size_t)(d->consumed / d->lines) * BLOCK_ROWS : FIRST_READ_BYTES;
    size_t start = 0, scan = 0;   /* the current line's start; where its '\n' is still to be looked for */
    bool have_read = false, eof = false;
    for (;;) {
        while (blk->nrows < MAX_BLOCK_ROWS) {
            char *nl = memchr(blk->in + scan, '\n', len - scan);
            if (!nl) { scan = len; break; }
            size_t e = (size_t)(nl - blk->in);
            add_row(blk, start, e);
            start = scan = e + 1;
        }
        if (blk->nrows == MAX_BLOCK_ROWS) break;
        if (eof) {
            if (start < len) add_row(blk, start, len);   /* the last line has no '\n' */
            start = len;
            break;
        }
        /* Read more: once to top up carried-over rows, and as long as no
         * line is whole (all the buffer takes: a long line); a line longer
         * than the buffer grows it. One byte stays free for the NUL after a
         * last line. */
        size_t room = blk->in_cap - 1 - len;
        if (blk->nrows && (have_read || room < MIN_READ_BYTES)) break;
        if (room < MIN_READ_BYTES) {
            if (!in_reserve(blk, blk->in_cap, blk->in_cap)) goto oom;
            room = blk->in_cap - 1 - len;
        }
        size_t ask = have_read ? IN_BUF_BYTES : want > len + MIN_READ_BYTES ? want - len : MIN_READ_BYTES;
        if (ask > room) ask = room;
        if (ask > IN_BUF_BYTES) ask = IN_BUF_BYTES;
        ssize_t n;
        do n = read(d->in_fd, blk->in + len, ask);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
            fprintf(stderr, "chatfmt: error: IOError: cannot read the input: %s\n", strerror(errno));
            return -1;
        }
        have_read = true;
        eof = n == 0;
        len += (size_t)n;
    }
    /* eof is only learnt from a read that added nothing while the block had
     * room for rows, so every line is a row by now; were a rest left, the
     * next block would read (and meet the end) again. */
    if (eof && start == len) d->input_ended = true;
    if (start < len) {   /* the next block starts with the rest */
        d->carry = blk;
        d->carry_at = start;
        d->carry_len = len - start;
    }
    d->consumed += start;
    d->lines += blk->nrows;
    blk->in_end = d->consumed;
    blk->rows_base = blk->in;
    return (long)blk->nrows;
oom:
    fprintf(stderr, "chatfmt: error: MemoryError: out of memory\n");
    return -1;
}

/* The next block of a mapped input: whole lines from where the last block
 * ended, up to BLOCK_ROWS of them or MAP_BLOCK_BYTES (at least one line), as
 * read_block makes them. A row's '\r's before its '\n' are left out of
 * its length (the mapping is read-only: rows are not C strings here).
 * Returns its number of rows (0 at the end of the input). */
static long map_block(Ring *d, Block *blk) {
    blk->nrows = 0;
    blk->rows_base = d->map;
    size_t at = (size_t)d->consumed, end = d->map_len;
    while (at < end && blk->nrows < BLOCK_ROWS && (blk->nrows == 0 || at - (size_t)d->consumed < MAP_BLOCK_BYTES)) {
        const char *nl = memchr(d->map + at, '\n', end - at);
        size_t e = nl ? (size_t)(nl - d->map) : end, len = e;
        while (len > at && d->map[len - 1] == '\r') len--;
        blk->rows[blk->nrows].at = at;
        blk->rows[blk->nrows].len = len - at;
        blk->nrows++;
        at = nl ? e + 1 : end;
    }
    if (at >= end) d->input_ended = true;
    d->lines += blk->nrows;
    d->consumed = at;
    blk->in_end = d->consumed;
    return (long)blk->nrows;
}

/* Mapping the input: a file shrunk by someone else while it is read
 * raises SIGBUS at the first page past its new end; that is an I/O error
 * of the run, said as one, not a crash. */
static void input_shrank(int sig) {
    (void)sig;
    static const char msg[] = "chatfmt: error: IOError: the input file shrank while it was read\n";
    ssize_t r = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)r;
    _exit(1);
}

/* Map in_fd when it is a non-empty regular file (else d->map stays NULL). */
static void map_input(Ring *d, struct sigaction *saved) {
    struct stat st;
    if (fstat(d->in_fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return;
    if ((uint64_t)st.st_size > SIZE_MAX / 2) return;
    off_t start = lseek(d->in_fd, 0, SEEK_CUR);   /* (stdin may be a file read part-way) */
    if (start != 0) return;
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, d->in_fd, 0);
    if (m == MAP_FAILED) return;
    (void)posix_madvise(m, (size_t)st.st_size, POSIX_MADV_SEQUENTIAL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = input_shrank;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, saved) != 0) {
        munmap(m, (size_t)st.st_size);
        return;
    }
    d->map = m;
    d->map_len = (size_t)st.st_size;
}

/* The mapped input before `done` (every row there was written) gives its
 * pages back, a MiB at a time: the process's memory stays flat however
 * long the file, as with read(2) into the blocks. */
static void release_input(Ring *d, uint64_t done) {
    enum { RELEASE_STEP = 1 << 20 };
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    size_t upto = (size_t)done / (size_t)page * (size_t)page;
    if (upto < d->map_released + RELEASE_STEP) return;
    (void)madvise((void *)(d->map + d->map_released), upto - d->map_released, MADV_DONTNEED);
    d->map_released = upto;
}

/* ---- claiming, processing, writing ---- */

/* Mark the pipeline failed (under out_mu): no more blocks are read or
 * written, and the reader waiting for room wakes up. */
static void set_failed(Ring *d) {
    d->failed = true;
    if (d->room_wanted) {
        d->room_wanted = false;
        pthread_cond_signal(&d->room);
    }
}

/* Read the next block for a worker; NULL when the input ended or the
 * pipeline failed. */
static Block *claim_block(Ring *d) {
    Block *blk = NULL;
    pthread_mutex_lock(&d->in_mu);
    if (!d->input_ended) {
        /* The next slot is free once the block that had it was written.
         * Only the thread holding in_mu can wait here, so one flag says
         * whether the writer must signal. Lock order: in_mu, then out_mu. */
        pthread_mutex_lock(&d->out_mu);
        while (!d->failed && d->next_read - d->next_write >= d->nblocks) {
            d->room_wanted = true;
            pthread_cond_wait(&d->room, &d->out_mu);
        }
        bool failed = d->failed;
        pthread_mutex_unlock(&d->out_mu);
        if (failed) {
            d->input_ended = true;
        } else {
            blk = &d->blocks[d->next_read % d->nblocks];
            long n = d->map ? map_block(d, blk) : read_block(d, blk);
            if (n > 0) {
                d->next_read++;
            } else {
                blk = NULL;
                d->input_ended = true;
                if (n < 0) {
                    pthread_mutex_lock(&d->out_mu);
                    set_failed(d);
                    pthread_mutex_unlock(&d->out_mu);
                }
            }
        }
    }
    pthread_mutex_unlock(&d->in_mu);
    return blk;
}

/* Run the row function on every row of a block, into its output buffer. */
static void process_block(const Pipeline *p, unsigned worker, Block *blk) {
    OutBuf *b = &blk->out;
    b->len = 0;
    b->failed = false;
    blk->errors = 0;
    blk->first_bad = SIZE_MAX;
    for (size_t i = 0; i < blk->nrows; i++) {
        size_t start = b->len;
        bool ok = p->row(p->job, worker, blk->rows_base + blk->rows[i].at, blk->rows[i].len, b);
        blk->oom[i] = b->failed;
        if (b->failed) {   /* drop the partial line: the writer puts an error row there */
            b->failed = false;
            b->len = start;
        }
        blk->errors += !ok || blk->oom[i];
        if ((!ok || blk->oom[i]) && blk->first_bad == SIZE_MAX) blk->first_bad = i;
        blk->end[i] = b->len;
    }
}

/* write(2) all of it, through partial writes and signals. */
static bool write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* One write for the block's output, unless rows ran out of memory (their
 * error rows go between the pieces). */
static bool write_block(int fd, const Block *blk, const char *oom_row) {
    size_t from = 0, start = 0;
    for (size_t i = 0; i < blk->nrows; i++) {
        if (blk->oom[i]) {
            if (!write_all(fd, blk->out.p + from, start - from) || !write_all(fd, oom_row, strlen(oom_row)))
                return false;
            from = blk->end[i];
        }
        start = blk->end[i];
    }
    return write_all(fd, blk->out.p + from, blk->out.len - from);
}

/* The input line number and output line of the first error row, in
 * input order (blocks are written in order; the writer's alone). */
static void note_first_error(Ring *d, const Block *b) {
    size_t i = b->first_bad;
    d->first_error_line = d->rows + i + 1;
    size_t start = i ? b->end[i - 1] : 0;
    const char *text = b->oom[i] ? d->p->oom_row : b->out.p + start;
    size_t len = b->oom[i] ? strlen(text) : b->end[i] - start;
    while (len && text[len - 1] == '\n') len--;
    bool cut = len >= sizeof d->first_error;
    if (cut) {   /* at a character's start, and said so */
        len = sizeof d->first_error - 4;
        while (len && (text[len] & 0xC0) == 0x80) len--;
    }
    memcpy(d->first_error, text, len);
    strcpy(d->first_error + len, cut ? "..." : "");
}

/* A processed block is done; whoever finds the writer token free writes the
 * blocks in order for as long as the next one is done. Setting `done` and
 * looking at the next block both happen under out_mu, so a block done while
 * another thread writes is seen by that thread before it gives the token
 * back. */
static void finish_block(Ring *d, Block *blk) {
    pthread_mutex_lock(&d->out_mu);
    blk->done = true;
    if (!d->writing) {
        d->writing = true;
        for (;;) {
            Block *b = &d->blocks[d->next_write % d->nblocks];
            if (!b->done) break;
            bool failed = d->failed;
            pthread_mutex_unlock(&d->out_mu);
            bool ok = failed || write_block(d->out_fd, b, d->p->oom_row);
            if (!ok) fprintf(stderr, "chatfmt: error: IOError: cannot write the output: %s\n", strerror(errno));
            if (!failed && ok) {
                if (b->errors && !d->first_error_line) note_first_error(d, b);
                d->rows += b->nrows;
                d->errors += b->errors;
                progress_show(d, b->in_end, false);
                if (d->map) release_input(d, b->in_end);
            }
            /* keep the output buffer for the next rows, unless a huge row made it big */
            if (b->out.cap > KEEP_BUFFER_BYTES) {
                free(b->out.p);
                memset(&b->out, 0, sizeof b->out);
            }
            b->out.len = 0;
            pthread_mutex_lock(&d->out_mu);
            b->done = false;
            d->next_write++;
            if (!ok) set_failed(d);
            if (d->room_wanted) {
                d->room_wanted = false;
                pthread_cond_signal(&d->room);
            }
        }
        d->writing = false;
    }
    pthread_mutex_unlock(&d->out_mu);
}

static void work(Ring *d, unsigned index) {
    Block *blk;
    while ((blk = claim_block(d)) != NULL) {
        process_block(d->p, index, blk);
        finish_block(d, blk);
    }
}

static void *worker_main(void *arg) {
    const Worker *w = arg;
    work(w->ring, w->index);
    return NULL;
}


/* ---- running it ---- */

unsigned pipeline_default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > PIPELINE_MAX_THREADS ? PIPELINE_MAX_THREADS : (unsigned)n;
}

int pipeline_run(Pipeline *p, int in_fd, int out_fd) {
    static Ring d;   /* one pipeline per process */
    static Worker workers[PIPELINE_MAX_THREADS];
    pthread_t threads[PIPELINE_MAX_THREADS];
    memset(&d, 0, sizeof d);
    d.p = p;
    d.in_fd = in_fd;
    d.out_fd = out_fd;
    p->rows = p->errors = p->first_error_line = 0;
    p->first_error[0] = '\0';
    unsigned nthreads = p->threads < 1 ? 1 : p->threads > PIPELINE_MAX_THREADS ? PIPELINE_MAX_THREADS : p->threads;

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
    pthread_mutex_init(&d.in_mu, NULL);
    pthread_mutex_init(&d.out_mu, NULL);
    pthread_cond_init(&d.room, NULL);

    d.prog.on = p->progress && isatty(STDERR_FILENO);
    d.prog.start = d.prog.last = now_seconds();
    struct stat st;
    if (fstat(in_fd, &st) == 0 && S_ISREG(st.st_mode)) d.prog.total = st.st_size;
    struct sigaction saved_bus;
    map_input(&d, &saved_bus);

    /* The calling thread is worker 0; when a thread cannot start, fewer do
     * the work (a worker index still runs one row at a time). */
    unsigned started = 1;
    for (; started < nthreads; started++) {
        workers[started].ring = &d;
        workers[started].index = started;
        if (pthread_create(&threads[started], NULL, worker_main, &workers[started]) != 0) break;
    }
    work(&d, 0);
    for (unsigned i = 1; i < started; i++) pthread_join(threads[i], NULL);
    progress_show(&d, d.consumed, true);

    for (size_t i = 0; i < d.nblocks; i++) {
        free(d.blocks[i].in);
        free(d.blocks[i].out.p);
    }
    free(d.blocks);
    if (d.map) {
        munmap((void *)d.map, d.map_len);
        sigaction(SIGBUS, &saved_bus, NULL);
        (void)lseek(in_fd, (off_t)d.consumed, SEEK_SET);   /* where read(2) would have left a shared descriptor */
    }
    pthread_mutex_destroy(&d.in_mu);
    pthread_mutex_destroy(&d.out_mu);
    pthread_cond_destroy(&d.room);
    p->rows = d.rows;
    p->errors = d.errors;
    p->first_error_line = d.first_error_line;
    memcpy(p->first_error, d.first_error, sizeof p->first_error);
    return d.failed ? 1 : 0;
}
