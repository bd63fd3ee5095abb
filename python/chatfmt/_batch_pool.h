/* _batch_pool.h — the threads of a batch (render_batch and format_jsonl in
 * _speedups.c): windows of rows that N threads claim one by one, a pool
 * of workers that take each window as it is handed over, and the figures
 * each thread keeps of what it did (batch_stats). No Python here: the
 * workers never touch the interpreter. */
#ifndef CHATFMT_BATCH_POOL_H
#define CHATFMT_BATCH_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* (internal to the extension: not resolved through the process's symbols) */
#define POOL_API __attribute__((visibility("hidden")))

typedef struct Window Window;
typedef void (*RowFn)(Window *win, size_t i);

struct Window {
    RowFn row;
    size_t (*side)(Window *win);  /* or NULL: other work the threads take between rows (see run_rows);
                                   * returns how many pieces it did */
    /* Or NULL: a row's second half, its output written out to memory
     * (settle), and the row then said finished (publish). A thread settles
     * a row once it has claimed its next one, and publishes it after
     * rendering that one (or at its end): writes that bypass the cache
     * then drain while it renders, where the claim's atomic operation
     * right after them waited for all of them to reach memory (a sixth of
     * a long row's time). */
    RowFn settle, publish;
    void *job;
    size_t nrows;
    /* written by every thread at every row: a cache line apart from the
     * fields above, which they only read */
    _Alignas(64) atomic_size_t next;   /* rows claimed */
    atomic_int users;           /* workers that may still claim rows (changed under the pool mutex) */
};

/* Handing a window over costs a wake-up when the thread waits asleep: a
 * futex call on the waker's side, and tens of microseconds on a loaded
 * machine before the sleeper runs, against windows of a few hundred
 * microseconds of rendering. So a thread that waits for the next window,
 * or for the last rows of one, first watches for it a while (SPIN_NS, a
 * few rows' time), and only then sleeps; the other side calls the futex
 * only for a sleeper. */
enum { SPIN_NS = 50000 };

/* What each thread of a render_batch call did, gathered only when
 * batch_stats(True) asks for it (bench/bench_python_batch.py): CPU time
 * and page faults per thread, which a loaded machine leaves as they are
 * where it halves wall-clock scaling, and where the time between rows
 * went. Each thread writes only its own record (cache lines of its own). */
typedef struct ThreadFigures {
    _Alignas(64) long long cpu_ns;   /* CPU time, user + system */
    long long render_cpu_ns;         /* of it, claiming and rendering rows and copying texts (run_rows) */
    long long wait_ns, sleep_ns;     /* wall time waiting for another thread: in all, and of it asleep */
    long long wait_cpu_ns;           /* CPU time waiting (watching, yielding, waking) */
    long minor_faults, switches;     /* page faults; context switches (voluntary or not) */
    unsigned long rows, copies;      /* rows rendered; texts copied into their str */
    unsigned long given_back;        /* render buffers given back to the thread that rendered them */
    unsigned long waits, yields, sleeps;   /* waits; of them, yields of the processor and sleeps */
} ThreadFigures;

typedef struct Pool {
    pthread_t *threads;
    unsigned nthreads;          /* workers besides the caller */
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    atomic_ulong generation;    /* bumped when `current` is published (under mu) */
    Window *current;
    bool quit;
    unsigned asleep;            /* workers waiting on `work` (mu) */
    bool caller_asleep;         /* the caller waiting on `done` (mu) */
    ThreadFigures *fig;         /* or NULL: each thread's figures, [0] the caller's */
    atomic_uint started;        /* workers started (each takes the next index) */
} Pool;

/* Which thread of the pool this is: 0 the caller (and any thread outside
 * a pool), 1.. the workers in the order they started. */
POOL_API extern _Thread_local unsigned pool_thread_index;

/* Figures: this thread's CPU time, faults and switches so far added
 * times sign (+1 / -1 around a stretch); its CPU time alone; a sum. */
POOL_API void thread_usage(ThreadFigures *f, int sign);
POOL_API long long thread_cpu_ns(void);
POOL_API void figures_add(ThreadFigures *to, const ThreadFigures *f);
POOL_API long long monotonic_ns(void);

/* Waiting: watch ready(arg) a while (true once it holds; false after
 * SPIN_NS); a wait's start and end in the figures (f NULL: none kept). */
POOL_API bool spin_until(bool (*ready)(void *), void *arg, ThreadFigures *f);
POOL_API long long wait_begin(ThreadFigures *f);
POOL_API void wait_end(ThreadFigures *f, long long since, bool slept, long long slept_since);

/* Rows a thread claims at once (CLAIM_ROWS; the module's claim_rows sets
 * it, to measure, under the GIL between calls): the claim is an atomic
 * operation on a line both threads write, which moves between their cores
 * (up to a hundred and more nanoseconds on a virtual machine whose two
 * processors lie apart); rows of a window are rendered in their order all
 * the same. */
enum { CLAIM_ROWS = 2, CLAIM_ROWS_MAX = 64 };
POOL_API extern atomic_uint claim_rows;

/* Claim and run win's rows (and its side work) until none is left. With
 * figures and mark, the stretch counted as rendering starts at *mark (the
 * thread's CPU clock read where the caller's last phase ended) and *mark
 * is left at its end: consecutive phases share a reading (the clock is a
 * system call, near a microsecond on a virtual machine). */
POOL_API void run_rows(Window *win, ThreadFigures *f);
POOL_API void run_rows_from(Window *win, ThreadFigures *f, long long *mark);

/* The pool: start up to threads - 1 workers; stop them (figures added to
 * into[0..n)); hand win over; whether win is finished / held by no worker;
 * wait for one of those (watching, then asleep); render win beside the
 * workers to its end; wait until no worker holds win. */
POOL_API void pool_start(Pool *p, unsigned threads, bool figures);
POOL_API void pool_stop(Pool *p, ThreadFigures *into, unsigned n);
POOL_API void pool_publish(Pool *p, Window *win);
POOL_API bool window_finished(void *arg);
POOL_API bool window_unused(void *arg);
POOL_API void pool_wait(Pool *p, Window *win, bool (*ready)(void *));
POOL_API void pool_finish(Pool *p, Window *win);
POOL_API void pool_quiesce(Pool *p, Window *win);

#endif
