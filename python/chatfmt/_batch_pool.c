/* _batch_pool.c — the threads of a batch: see _batch_pool.h. */
#define _GNU_SOURCE   /* (RUSAGE_THREAD) */
#include "_batch_pool.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

_Thread_local unsigned pool_thread_index;
atomic_uint claim_rows = CLAIM_ROWS;

/* Add this thread's CPU time, faults and switches so far times sign. */
void thread_usage(ThreadFigures *f, int sign) {
#ifdef RUSAGE_THREAD
    struct rusage u;
    if (getrusage(RUSAGE_THREAD, &u) != 0) return;
    f->cpu_ns += sign * ((u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000LL +
                         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000LL);
    f->minor_faults += sign * u.ru_minflt;
    f->switches += sign * (u.ru_nvcsw + u.ru_nivcsw);
#else
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return;
    f->cpu_ns += sign * (t.tv_sec * 1000000000LL + t.tv_nsec);
#endif
}

long long thread_cpu_ns(void) {
    struct timespec t;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

void figures_add(ThreadFigures *to, const ThreadFigures *f) {
    to->cpu_ns += f->cpu_ns;
    to->render_cpu_ns += f->render_cpu_ns;
    to->wait_cpu_ns += f->wait_cpu_ns;
    to->wait_ns += f->wait_ns;
    to->sleep_ns += f->sleep_ns;
    to->minor_faults += f->minor_faults;
    to->switches += f->switches;
    to->rows += f->rows;
    to->copies += f->copies;
    to->given_back += f->given_back;
    to->waits += f->waits;
    to->yields += f->yields;
    to->sleeps += f->sleeps;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

long long monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* Watch until ready(arg) or SPIN_NS pass; whether it became ready. Past
 * the first few microseconds the watcher yields its processor between
 * looks: on a machine with more runnable threads than processors the
 * thread it waits for may be the one waiting for a processor. */
enum { SPIN_QUIET_NS = 5000 };

bool spin_until(bool (*ready)(void *), void *arg, ThreadFigures *f) {
    long long start = 0;
    for (unsigned k = 0;; k++) {
        if (ready(arg)) return true;
        if ((k & 63) == 63) {   /* (the clock read now and then) */
            long long t = monotonic_ns();
            if (!start) {
                start = t;
            } else if (t - start >= SPIN_NS) {
                return false;
            } else if (t - start >= SPIN_QUIET_NS) {
                sched_yield();
                if (f) f->yields++;
            }
        }
        cpu_relax();
    }
}

/* A wait's start, when figures are gathered (else 0). */
long long wait_begin(ThreadFigures *f) {
    if (!f) return 0;
    f->waits++;
    f->wait_cpu_ns -= thread_cpu_ns();
    return monotonic_ns();
}

void wait_end(ThreadFigures *f, long long since, bool slept, long long slept_since) {
    if (!f) return;
    f->wait_cpu_ns += thread_cpu_ns();
    long long now = monotonic_ns();
    f->wait_ns += now - since;
    if (slept) {
        f->sleeps++;
        f->sleep_ns += now - slept_since;
    }
}

/* Claim and run rows of win until none is left, and the side work ready
 * before each row and at the end. */
void run_rows(Window *win, ThreadFigures *f) { run_rows_from(win, f, NULL); }

void run_rows_from(Window *win, ThreadFigures *f, long long *mark) {
    size_t rows = 0, side = 0;
    long long cpu = f ? (mark ? *mark : thread_cpu_ns()) : 0;
    bool held = false;   /* a row rendered, not yet settled and published (see Window.settle) */
    size_t last = 0;
    size_t claimed = 0, claimed_end = 0;   /* rows claimed and not yet taken: [claimed, claimed_end) */
    size_t claim = atomic_load_explicit(&claim_rows, memory_order_relaxed);
    for (;;) {
        if (win->side) side += win->side(win);
        size_t i = claimed;
        if (claimed == claimed_end) {
            i = atomic_fetch_add(&win->next, claim);
            claimed_end = i + claim;
        }
        claimed = i + 1;
        if (held) win->settle(win, last);
        if (i >= win->nrows) break;
        win->row(win, i);
        if (held) win->publish(win, last);
        held = win->settle != NULL;
        last = i;
        rows++;
    }
    if (held) win->publish(win, last);
    if (win->side) side += win->side(win);
    if (f) {
        long long end = thread_cpu_ns();
        f->rows += rows;
        f->copies += side;
        f->render_cpu_ns += end - cpu;
        if (mark) *mark = end;
    }
}

typedef struct WorkerWait { Pool *p; unsigned long seen; } WorkerWait;

static bool work_published(void *arg) {
    WorkerWait *w = arg;
    return atomic_load_explicit(&w->p->generation, memory_order_acquire) != w->seen ||
           __atomic_load_n(&w->p->quit, __ATOMIC_ACQUIRE);
}

static void *worker_main(void *arg) {
    Pool *p = arg;
    pool_thread_index = atomic_fetch_add(&p->started, 1) + 1;
    ThreadFigures *f = p->fig ? &p->fig[pool_thread_index] : NULL;
    if (f) thread_usage(f, -1);
    WorkerWait wait = {p, 0};
    for (;;) {
        bool waited = !work_published(&wait);   /* (a window already there is no wait) */
        long long since = waited ? wait_begin(f) : 0, slept_since = 0;
        bool seen_new = !waited || spin_until(work_published, &wait, f);
        pthread_mutex_lock(&p->mu);
        if (!seen_new) {
            if (f) slept_since = monotonic_ns();
            p->asleep++;
            while (atomic_load(&p->generation) == wait.seen && !p->quit) pthread_cond_wait(&p->work, &p->mu);
            p->asleep--;
        }
        if (waited) wait_end(f, since, !seen_new, slept_since);
        if (p->quit) break;
        wait.seen = atomic_load(&p->generation);
        Window *win = p->current;
        atomic_fetch_add(&win->users, 1);
        pthread_mutex_unlock(&p->mu);
        run_rows(win, f);
        pthread_mutex_lock(&p->mu);
        atomic_fetch_sub(&win->users, 1);
        if (p->caller_asleep) pthread_cond_broadcast(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    if (f) thread_usage(f, +1);
    return NULL;
}

/* Start up to `threads` - 1 workers (fewer when threads cannot start:
 * the caller renders alone, the result is the same); with figures, each
 * thread's are kept in p->fig (none when that memory is not there). */
void pool_start(Pool *p, unsigned threads, bool figures) {
    memset(p, 0, sizeof *p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->generation, 0);
    atomic_init(&p->started, 0);
    if (figures && (p->fig = aligned_alloc(_Alignof(ThreadFigures), threads * sizeof *p->fig)))
        memset(p->fig, 0, threads * sizeof *p->fig);
    if (threads > 1 && (p->threads = calloc(threads - 1, sizeof *p->threads))) {
        while (p->nthreads < threads - 1 && pthread_create(&p->threads[p->nthreads], NULL, worker_main, p) == 0)
            p->nthreads++;
    }
}

/* Stop the workers; their figures and the caller's added to into[0..n)
 * (when gathered and into is not NULL). */
void pool_stop(Pool *p, ThreadFigures *into, unsigned n) {
    pthread_mutex_lock(&p->mu);
    __atomic_store_n(&p->quit, true, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->nthreads; i++) pthread_join(p->threads[i], NULL);
    for (unsigned i = 0; p->fig && into && i <= p->nthreads && i < n; i++) figures_add(&into[i], &p->fig[i]);
    free(p->threads);
    free(p->fig);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
}

/* Hand win to the workers (its rows set up; the caller then joins in with
 * pool_finish). */
void pool_publish(Pool *p, Window *win) {
    atomic_store(&win->next, 0);
    pthread_mutex_lock(&p->mu);
    p->current = win;
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    if (p->asleep) pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
}

/* (for the calling thread, once its own run_rows on win has returned:
 * every row is claimed, and a worker is among the users before it claims
 * one and until it has finished its last; no count of finished rows, which
 * every thread would write at every row, a line passed between them) */
bool window_finished(void *arg) {
    Window *win = arg;
    return atomic_load(&win->next) >= win->nrows && !atomic_load(&win->users);
}

bool window_unused(void *arg) { return !atomic_load(&((Window *)arg)->users); }

/* Wait until ready(win), watching a while before sleeping on `done`. */
void pool_wait(Pool *p, Window *win, bool (*ready)(void *)) {
    if (ready(win)) return;
    ThreadFigures *f = p->fig;
    long long since = wait_begin(f), slept_since = 0;
    bool seen = spin_until(ready, win, f);
    if (!seen) {
        if (f) slept_since = monotonic_ns();
        pthread_mutex_lock(&p->mu);
        p->caller_asleep = true;
        while (!ready(win)) pthread_cond_wait(&p->done, &p->mu);
        p->caller_asleep = false;
        pthread_mutex_unlock(&p->mu);
    }
    wait_end(f, since, !seen, slept_since);
}

/* Render win's rows beside the workers until all are done and no worker
 * holds it. Called without the GIL. */
void pool_finish(Pool *p, Window *win) {
    run_rows(win, p->fig);
    pool_wait(p, win, window_finished);
}

/* Wait until no worker holds win (one that woke late may still be leaving
 * it): only then may the caller write its rows again. */
void pool_quiesce(Pool *p, Window *win) { pool_wait(p, win, window_unused); }
