/* pipeline.c — the row pipeline of dataset mode and --batch (pipeline.h).
 *
 * Streaming with constant memory, and no thread that only moves bytes:
 * each of the `threads` threads (the caller is one) claims the next block
 * of input under the input lock, finds its lines and runs the row function
 * on them outside it, and then, if that block is the next to be written and
 * nobody is writing, writes it and every following block already done with
 * write(2) (the writer token). A thread sleeps only on a lock or when every
 * block of the ring is in flight.
 *
 * What the input lock covers is kept to what must be serial: of a regular
 * file, which is mapped, a block is only a byte range (the worker finds the
 * lines that start in it, reading the last one past its end, and the page
 * faults of first touching the mapping, a fifth of a row's time on a
 * virtual machine, fall on the workers in parallel); of a pipe, the read(2)
 * itself and a memrchr for the last whole line, whose rest the next block
 * copies.
 *
 * Rows travel in blocks so that the locks, the system calls and the
 * bookkeeping are paid once per block, not per row. A block is reused only
 * after it was written, so at most `ring size` blocks are in flight whatever
 * the file size. The output buffers belong to the workers, not to the ring
 * slots: a worker writes its rows into memory its own core wrote last, not
 * into the cache lines another core left dirty; they are kept for the next
 * rows (unless a huge row made them big). */
#define _DEFAULT_SOURCE 1   /* madvise(MADV_DONTNEED) */
#define _GNU_SOURCE 1       /* F_SETPIPE_SZ (Linux), RUSAGE_THREAD (PIPELINE_STATS) */
#include "pipeline.h"
#include "chatfmt.h"
#include <errno.h>
#include <fcntl.h>
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
    BLOCK_ROWS = 32,              /* rows a block aims at (sized by the mean line so far) */
    BLOCKS_PER_THREAD = 4,
    IN_BUF_BYTES = 64 << 10,      /* a pipe block's input buffer, and the most one read(2) asks for */
    /* A block of a mapped input is a byte range of BLOCK_ROWS mean lines,
     * within these bounds: rows of a few KB then still come some twenty a
     * block, so that the locks, the wake-ups and the write(2) of a block
     * are paid over many rows. */
    MIN_MAP_BLOCK_BYTES = 4 << 10,
    MAP_BLOCK_BYTES = 256 << 10,
    FIRST_READ_BYTES = 16 << 10,  /* before the mean line is known */
    MIN_READ_BYTES = 4 << 10,
    KEEP_BUFFER_BYTES = 1 << 20,  /* an input or output buffer beyond this is released after use */
    OOM_SLOTS = 64                /* out-of-memory rows a block can place (more: the run fails) */
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

/* An output buffer of a worker; a block holds one from processing to
 * writing, then it goes back to its worker's free list. */
typedef struct Output {
    OutBuf buf;
    struct Output *next_free;
    struct Worker *owner;
} Output;

typedef struct Block {
    /* Input: the rows are the lines that start in [from, to) of `base`
     * (base_len bytes; a line that starts there is read to its end, past
     * `to`). A mapped file: base is the mapping, the range any. A pipe: base
     * is the block's buffer, which holds whole lines [0, to) and may hold
     * after them the start of the next block's first line, which that block
     * copies (so the buffer stays intact until the slot is claimed again,
     * always after the next block was read). */
    _Alignas(64) char *in;   /* (blocks aligned apart: no cache line shared) */
    size_t in_cap;
    const char *base;
    size_t base_len, from, to;
    uint64_t in_end;         /* input offset after the block's range (progress, releasing the mapping) */
    /* output, filled by the thread that processes the block */
    Output *out;
    size_t nrows;            /* rows found */
    uint64_t errors;         /* error rows in the block */
    size_t first_bad;        /* the first of them (row index), or SIZE_MAX */
    size_t bad_start, bad_end;   /* its output line in out; empty: an unplaced out-of-memory row */
    size_t noom;             /* rows that ran out of memory with no room for oom_row: */
    size_t oom_at[OOM_SLOTS];    /* where each goes in out */
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
    struct Worker *workers;    /* nworkers of them, worker 0 the calling thread */
    unsigned nworkers;
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
    uint64_t consumed;         /* input bytes handed out in blocks */
    uint64_t seen_bytes, seen_lines;   /* what processed blocks found: the mean line */
    uint64_t no_line_before;   /* a mapped file: no line starts between the ranges handed out and this */
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

/* A worker's own: its output buffers (free ones listed under out_mu, as the
 * writer gives them back) and what its last block found, told to the
 * reader with the next claim. Aligned apart: no cache line is shared. */
typedef struct Worker {
    _Alignas(64) Ring *ring;
    unsigned index;
    Output *free_outputs;      /* out_mu */
    Output **all_outputs;      /* every one it made, to free at the end */
    size_t nall;
    size_t last_rows, last_bytes;
    size_t last_end;           /* where its last block's lines ended (mapped: no line starts before) */
} Worker;

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

/* The input bytes of BLOCK_ROWS lines of the mean length so far, within
 * [lo, hi]; `first` before any block was processed. Blocks of about
 * BLOCK_ROWS rows keep the threads evenly busy to the end of small inputs. */
static size_t block_bytes(const Ring *d, size_t lo, size_t hi, size_t first) {
    if (!d->seen_lines) return first;
    uint64_t want = d->seen_bytes / d->seen_lines * BLOCK_ROWS;
    return want < lo ? lo : want > hi ? hi : (size_t)want;
}

/* One past the last '\n' of p[0, n), or 0 when there is none: eight bytes
 * a step from the end, since a read ends mid-line and most of the line is
 * yet to come. */
static size_t after_last_newline(const char *p, size_t n) {
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL, nl = ones * '\n';
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p + n - 8, 8);
        w ^= nl;
        if ((w - ones) & ~w & highs) break;   /* some byte of these eight is '\n' */
        n -= 8;
    }
    while (n && p[n - 1] != '\n') n--;
    return n;
}

/* Read the next block of a pipe into blk: the carried-over start of a
 * line, then read(2) until the buffer holds at least one whole line (or the
 * input ends); what follows its last '\n' is carried over to the next
 * block. Returns 1, 0 at the end of the input, or -1 after an error
 * (reported on stderr). */
static long read_block(Ring *d, Block *blk) {
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
    /* The first read asks for the bytes BLOCK_ROWS lines took on average so
     * far, so little is left over to copy into the next block; then reads
     * go on only while no line is whole (a long line grows the buffer). */
    size_t want = block_bytes(d, MIN_READ_BYTES, IN_BUF_BYTES, FIRST_READ_BYTES);
    size_t cut = 0;   /* after the last '\n' read: the carry holds none */
    bool have_read = false;
    while (cut == 0) {
        size_t room = blk->in_cap - len;
        if (room < MIN_READ_BYTES) {
            if (!in_reserve(blk, blk->in_cap, blk->in_cap)) goto oom;
            room = blk->in_cap - len;
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
        if (n == 0) {   /* the end: the last line has no '\n' */
            d->input_ended = true;
            cut = len;
            break;
        }
        size_t after = after_last_newline(blk->in + len, (size_t)n);
        if (after) cut = len + after;
        len += (size_t)n;
        have_read = true;
    }
    if (cut < len) {   /* the next block starts with the rest */
        d->carry = blk;
        d->carry_at = cut;
        d->carry_len = len - cut;
    }
    d->consumed += cut;
    blk->in_end = d->consumed;
    blk->base = blk->in;
    blk->base_len = cut;
    blk->from = 0;
    blk->to = cut;
    return cut > 0;
oom:
    fprintf(stderr, "chatfmt: error: MemoryError: out of memory\n");
    return -1;
}

/* The next block of a mapped input: the byte range after the last block's
 * (the worker finds its lines). Returns 1, or 0 at the end of the input. */
static long map_block(Ring *d, Block *blk) {
    /* Past the end of a long line that blocks already found: ranges inside
     * it would have no rows, and each would scan the rest of the line for
     * its first one (a line of L bytes would cost L^2 / range bytes). */
    if (d->no_line_before > d->consumed) d->consumed = d->no_line_before;
    size_t at = (size_t)d->consumed;
    if (at >= d->map_len) {
        d->input_ended = true;
        return 0;
    }
    size_t want = block_bytes(d, MIN_MAP_BLOCK_BYTES, MAP_BLOCK_BYTES, FIRST_READ_BYTES);
    size_t to = d->map_len - at > want ? at + want : d->map_len;
    if (to == d->map_len) d->input_ended = true;
    blk->base = d->map;
    blk->base_len = d->map_len;
    blk->from = at;
    blk->to = to;
    d->consumed = to;
    blk->in_end = to;
    return 1;
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

/* A pipe's buffer (64 KiB by default) grows to a MiB where the system
 * allows it: the process that feeds it then blocks, and the reader's
 * read(2) returns, a sixteenth as often (49 MB of mixed rows fed by `cat`
 * to two threads on two cores: 59-67 ms instead of 78-90). Failing is
 * harmless. */
static void widen_pipe(int fd) {
#ifdef F_SETPIPE_SZ
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) && fcntl(fd, F_GETPIPE_SZ) < (1 << 20))
        (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#else
    (void)fd;
#endif
}

/* The mapped input before `done` gives its pages back, 8 MiB at a time:
 * the process's memory stays flat however long the file, as with read(2)
 * into the blocks. Each call also interrupts every other core running a
 * worker to flush its TLB, which costs tens of µs on a virtual machine:
 * steps of a MiB would take two threads about 1.5 ms more over the 49 MB of
 * the mixed benchmark rows (-DPIPELINE_STATS, finishing). (A page
 * given back that a worker still reads is only faulted in again.) */
static void release_input(Ring *d, uint64_t done) {
    enum { RELEASE_STEP = 8 << 20 };
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

/* An output buffer for w's next block (under out_mu): its own free one,
 * else another worker's (so that no more exist than blocks in flight plus
 * one a worker), else NULL (the caller makes one). */
static Output *take_output(Ring *d, Worker *w) {
    Worker *from = w;
    for (unsigned i = 0; !from->free_outputs && i < d->nworkers; i++) from = &d->workers[i];
    Output *o = from->free_outputs;
    if (o) from->free_outputs = o->next_free;
    return o;
}

/* Read the next block for worker w; NULL when the input ended or the
 * pipeline failed. */
static Block *claim_block(Ring *d, Worker *w) {
    Block *blk = NULL;
    pthread_mutex_lock(&d->in_mu);
    d->seen_lines += w->last_rows;
    d->seen_bytes += w->last_bytes;
    w->last_rows = w->last_bytes = 0;
    if (w->last_end > d->no_line_before) d->no_line_before = w->last_end;
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
        Output *out = failed ? NULL : take_output(d, w);
        pthread_mutex_unlock(&d->out_mu);
        if (!failed && !out) {
            out = calloc(1, sizeof *out);
            if (out) {
                out->owner = w;   /* listed for the end (in the worker's own array of them) */
                Output **all = realloc(w->all_outputs, (w->nall + 1) * sizeof *all);
                if (all) {
                    all[w->nall++] = out;
                    w->all_outputs = all;
                } else {
                    free(out);
                    out = NULL;
                }
            }
            if (!out) fprintf(stderr, "chatfmt: error: MemoryError: out of memory\n");
        }
        if (failed || !out) {
            d->input_ended = true;
            if (!failed) {
                pthread_mutex_lock(&d->out_mu);
                set_failed(d);
                pthread_mutex_unlock(&d->out_mu);
            }
        } else {
            blk = &d->blocks[d->next_read % d->nblocks];
            long n = d->map ? map_block(d, blk) : read_block(d, blk);
            if (n > 0) {
                d->next_read++;
                blk->out = out;
            } else {
                blk = NULL;
                d->input_ended = true;
                pthread_mutex_lock(&d->out_mu);
                out->next_free = w->free_outputs;
                w->free_outputs = out;
                if (n < 0) set_failed(d);
                pthread_mutex_unlock(&d->out_mu);
            }
        }
    }
    pthread_mutex_unlock(&d->in_mu);
    return blk;
}

/* Find the block's rows and run the row function on each, into its output
 * buffer. A row that runs out of memory loses its partial line and is
 * written as oom_row. */
static void process_block(const Pipeline *p, Worker *w, Block *blk) {
    OutBuf *b = &blk->out->buf;
    b->len = 0;
    b->failed = false;
    blk->nrows = 0;
    blk->errors = 0;
    blk->first_bad = SIZE_MAX;
    blk->noom = 0;
    const char *base = blk->base;
    size_t end = blk->base_len, at = blk->from;
    if (at > 0) {   /* the first line that starts in the range: after a '\n' at from - 1 or later */
        const char *nl = memchr(base + at - 1, '\n', end - (at - 1));
        at = nl ? (size_t)(nl - base) + 1 : end;
    }
    size_t first = at;
    size_t oom_len = strlen(p->oom_row);
    while (at < blk->to) {
        size_t start = b->len, found = SIZE_MAX;
        bool ok = p->row_in_place && p->row_in_place(p->job, w->index, base + at, end - at, b, &found);
        const char *nl = found != SIZE_MAX ? base + at + found : NULL;
        size_t e = nl ? at + found : end;
        if (found == SIZE_MAX) {
            b->len = start;   /* (nothing was appended) */
            nl = memchr(base + at, '\n', end - at);
            e = nl ? (size_t)(nl - base) : end;
            size_t len = e;
            while (len > at && base[len - 1] == '\r') len--;   /* CRLF files, as getline-based readers took them */
            ok = p->row(p->job, w->index, base + at, len - at, b);
        }
        bool oom = b->failed;
        if (oom) {   /* drop the partial line; its error row goes there */
            b->failed = false;
            b->len = start;
            ob_put(b, p->oom_row, oom_len);
            if (b->failed) {   /* not even that fits: the writer puts it between the pieces */
                b->failed = false;
                b->len = start;
                if (blk->noom < OOM_SLOTS) blk->oom_at[blk->noom] = start;
                blk->noom++;
            }
        }
        if ((!ok || oom) && blk->errors++ == 0) {
            blk->first_bad = blk->nrows;
            blk->bad_start = start;
            blk->bad_end = b->len;
        }
        blk->nrows++;
        at = nl ? e + 1 : end;
    }
    w->last_rows += blk->nrows;
    w->last_bytes += at > first ? at - first : 0;
    /* No line starts between a mapped range's end and `at`: the last row's
     * rest, or (no row) the part of a line that started before the range. */
    if (w->ring->map) w->last_end = at;
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

/* One write for the block's output, unless rows ran out of memory with no
 * room for their error row (those go between the pieces). */
static bool write_block(int fd, const Block *blk, const char *oom_row) {
    const char *out = blk->out->buf.p;
    size_t from = 0;
    for (size_t k = 0; k < blk->noom; k++) {
        if (!write_all(fd, out + from, blk->oom_at[k] - from) || !write_all(fd, oom_row, strlen(oom_row))) return false;
        from = blk->oom_at[k];
    }
    return write_all(fd, out + from, blk->out->buf.len - from);
}

/* The input line number and output line of the first error row, in
 * input order (blocks are written in order; the writer's alone). */
static void note_first_error(Ring *d, const Block *b) {
    d->first_error_line = d->rows + b->first_bad + 1;
    bool unplaced = b->bad_end == b->bad_start;
    const char *text = unplaced ? d->p->oom_row : b->out->buf.p + b->bad_start;
    size_t len = unplaced ? strlen(text) : b->bad_end - b->bad_start;
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
 * back. A written block's output buffer goes back to the worker that made
 * it. */
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
            bool lost = b->noom > OOM_SLOTS;
            if (lost && !failed) fprintf(stderr, "chatfmt: error: MemoryError: out of memory\n");
            bool ok = failed || (!lost && write_block(d->out_fd, b, d->p->oom_row));
            if (!ok && !lost) fprintf(stderr, "chatfmt: error: IOError: cannot write the output: %s\n", strerror(errno));
            if (!failed && ok) {
                if (b->errors && !d->first_error_line) note_first_error(d, b);
                d->rows += b->nrows;
                d->errors += b->errors;
                progress_show(d, b->in_end, false);
                if (d->map && b->in_end) release_input(d, b->in_end - 1);   /* the next block reads from there */
            }
            /* keep the output buffer for the next rows, unless a huge row made it big */
            Output *o = b->out;
            if (o->buf.cap > KEEP_BUFFER_BYTES) {
                free(o->buf.p);
                memset(&o->buf, 0, sizeof o->buf);
            }
            o->buf.len = 0;
            b->out = NULL;
            pthread_mutex_lock(&d->out_mu);
            o->next_free = o->owner->free_outputs;
            o->owner->free_outputs = o;
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

#ifndef PIPELINE_STATS
static void work(Ring *d, Worker *w) {
    Block *blk;
    while ((blk = claim_block(d, w)) != NULL) {
        process_block(d->p, w, blk);
        finish_block(d, blk);
    }
}
#else
/* A build with -DPIPELINE_STATS (make CFLAGS="-O2 -g -DPIPELINE_STATS")
 * says on stderr, per worker, the wall and thread CPU time of claiming
 * (the input lock, and waiting for room in the ring), of processing and of
 * finishing (writing) blocks, with its faults and context switches: where a
 * run's serial time and waits are. */
#include <sys/resource.h>

typedef struct StageTime { double wall, cpu; } StageTime;

static double thread_cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Add the time since *mark to *t, and move the mark. */
static void stage_add(StageTime *t, StageTime *mark) {
    StageTime now = {now_seconds(), thread_cpu_seconds()};
    t->wall += now.wall - mark->wall;
    t->cpu += now.cpu - mark->cpu;
    *mark = now;
}

static void work(Ring *d, Worker *w) {
    static pthread_mutex_t print_mu = PTHREAD_MUTEX_INITIALIZER;
    StageTime start = {now_seconds(), thread_cpu_seconds()}, mark = start, claim = {0, 0}, proc = {0, 0},
              fin = {0, 0}, all = {0, 0};
    unsigned long blocks = 0, rows = 0;
    Block *blk;
    for (;;) {
        blk = claim_block(d, w);
        stage_add(&claim, &mark);
        if (!blk) break;
        process_block(d->p, w, blk);
        blocks++;
        rows += blk->nrows;
        stage_add(&proc, &mark);
        finish_block(d, blk);
        stage_add(&fin, &mark);
    }
    stage_add(&all, &start);
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    pthread_mutex_lock(&print_mu);
    fprintf(stderr, "pipeline worker %u: %lu blocks, %lu rows; ms wall/CPU: all %.1f/%.1f, claim %.1f/%.1f, "
            "process %.1f/%.1f, finish %.1f/%.1f; %ld minor faults, %ld voluntary and %ld involuntary switches\n",
            w->index, blocks, rows, all.wall * 1e3, all.cpu * 1e3, claim.wall * 1e3, claim.cpu * 1e3, proc.wall * 1e3,
            proc.cpu * 1e3, fin.wall * 1e3, fin.cpu * 1e3, ru.ru_minflt, ru.ru_nvcsw, ru.ru_nivcsw);
    pthread_mutex_unlock(&print_mu);
}
#endif

static void *worker_main(void *arg) {
    Worker *w = arg;
    if (w->ring->p->worker_start) w->ring->p->worker_start(w->ring->p->job, w->index);
    work(w->ring, w);
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
    d.blocks = aligned_alloc(_Alignof(Block), d.nblocks * sizeof *d.blocks);
    if (!d.blocks) {
        fprintf(stderr, "chatfmt: error: MemoryError: out of memory\n");
        return 1;
    }
    memset(d.blocks, 0, d.nblocks * sizeof *d.blocks);
    memset(workers, 0, nthreads * sizeof *workers);
    for (unsigned i = 0; i < nthreads; i++) {
        workers[i].ring = &d;
        workers[i].index = i;
    }
    d.workers = workers;
    d.nworkers = nthreads;
    pthread_mutex_init(&d.in_mu, NULL);
    pthread_mutex_init(&d.out_mu, NULL);
    pthread_cond_init(&d.room, NULL);

    d.prog.on = p->progress && isatty(STDERR_FILENO);
    d.prog.start = d.prog.last = now_seconds();
    struct stat st;
    if (fstat(in_fd, &st) == 0 && S_ISREG(st.st_mode)) d.prog.total = st.st_size;
    struct sigaction saved_bus;
    map_input(&d, &saved_bus);
    if (!d.map) widen_pipe(in_fd);

    /* The calling thread is worker 0; when a thread cannot start, fewer do
     * the work (a worker index still runs one row at a time). */
    unsigned started = 1;
    for (; started < nthreads; started++)
        if (pthread_create(&threads[started], NULL, worker_main, &workers[started]) != 0) break;
    if (p->worker_start) p->worker_start(p->job, 0);
    work(&d, &workers[0]);
    for (unsigned i = 1; i < started; i++) pthread_join(threads[i], NULL);
    progress_show(&d, d.consumed, true);

    for (size_t i = 0; i < d.nblocks; i++) free(d.blocks[i].in);
    free(d.blocks);
    for (unsigned i = 0; i < nthreads; i++) {
        for (size_t k = 0; k < workers[i].nall; k++) {
            free(workers[i].all_outputs[k]->buf.p);
            free(workers[i].all_outputs[k]);
        }
        free(workers[i].all_outputs);
    }
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
