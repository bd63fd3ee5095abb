/* line_transfer.c — what cache lines cost to move from one core's cache
 * to another's, on two threads pinned to CPUs A and B (default 0 and 1):
 *   one line   the threads hand a counter back and forth, BATCHES times
 *              ROUNDS hand-overs: the best batch's time a one-way hand-over
 *              (the best: a neighbour that takes either CPU for a while
 *              stalls the batch it falls in);
 *   a buffer   thread B writes a BYTES buffer (default 3072), then thread A
 *              writes it again; against A writing a buffer it wrote last
 *              itself (medians of WRITES each): what a render costs when its
 *              output buffer was last written by the other core.
 *
 *   cc -O2 -pthread bench/line_transfer.c -o build/line_transfer && build/line_transfer [A B [BYTES]]
 *
 * render_batch moves a few lines a row between its threads, and gives a
 * render buffer back to the thread that wrote it (see docs/pipelines.md,
 * "Two threads"); on a virtual machine the figures depend on where the
 * host runs the two vCPUs at the time, so run it a few times. x86-64. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

enum { ROUNDS = 1000, BATCHES = 3000, BUFFERS = 32, WRITES = 20000 };

static _Alignas(64) atomic_long turn;   /* odd: the second thread's turn; even: the first's */
static int cpu_b = 1;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) fprintf(stderr, "cannot pin to CPU %d\n", cpu);
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void *second(void *arg) {
    (void)arg;
    pin(cpu_b);
    for (long i = 0; i < (long)ROUNDS * BATCHES; i++) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 1) {
        }
        atomic_store_explicit(&turn, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

/* ---- a buffer ---- */
static size_t bytes = 3072;
static unsigned char *buffers[BUFFERS];
static unsigned long foreign_ticks[WRITES], own_ticks[WRITES];

static void *second_writes(void *arg) {
    (void)arg;
    pin(cpu_b);
    for (long i = 0; i < WRITES; i++) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 1) {
        }
        memset(buffers[i % BUFFERS], (int)i, bytes);
        atomic_store_explicit(&turn, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

static int by_value(const void *a, const void *b) {
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return x < y ? -1 : x > y;
}

/* Nanoseconds a tick of the time-stamp counter. */
static double tick_ns(void) {
    double start = now_ns();
    unsigned long ticks = __rdtsc();
    while (now_ns() - start < 2e8) {
    }
    return (now_ns() - start) / (double)(__rdtsc() - ticks);
}

static void buffer_writes(int cpu_a) {
    for (int k = 0; k < BUFFERS; k++)
        if (!(buffers[k] = aligned_alloc(64, (bytes + 63) & ~(size_t)63))) exit(1);
    atomic_store(&turn, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, second_writes, NULL) != 0) exit(1);
    for (long i = 0; i < WRITES; i++) {   /* the other core writes buffer i, then this one */
        atomic_store_explicit(&turn, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 2) {
        }
        unsigned long start = __rdtsc();
        memset(buffers[i % BUFFERS], (int)(i + 1), bytes);
        _mm_mfence();
        foreign_ticks[i] = __rdtsc() - start;
    }
    pthread_join(t, NULL);
    for (long i = 0; i < WRITES; i++) {   /* this core wrote buffer i last, BUFFERS writes ago */
        unsigned long start = __rdtsc();
        memset(buffers[i % BUFFERS], (int)(i + 2), bytes);
        _mm_mfence();
        own_ticks[i] = __rdtsc() - start;
    }
    qsort(foreign_ticks, WRITES, sizeof *foreign_ticks, by_value);
    qsort(own_ticks, WRITES, sizeof *own_ticks, by_value);
    double ns = tick_ns();
    printf("CPU %d writing %zu bytes last written by CPU %d: %.0f ns; last written by itself: %.0f ns (medians of %d)\n",
           cpu_a, bytes, cpu_b, foreign_ticks[WRITES / 2] * ns, own_ticks[WRITES / 2] * ns, WRITES);
}

int main(int argc, char **argv) {
    int cpu_a = argc > 2 ? atoi(argv[1]) : 0;
    if (argc > 2) cpu_b = atoi(argv[2]);
    if (argc > 3) bytes = strtoul(argv[3], NULL, 10);
    if (bytes < 1) bytes = 1;
    pin(cpu_a);
    pthread_t t;
    if (pthread_create(&t, NULL, second, NULL) != 0) return 1;
    double best = 1e300;
    for (long b = 0; b < BATCHES; b++) {
        double start = now_ns();
        for (long j = 0; j < ROUNDS; j++) {
            long i = b * ROUNDS + j;
            atomic_store_explicit(&turn, 2 * i + 1, memory_order_release);
            while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 2) {
            }
        }
        double one_way = (now_ns() - start) / ROUNDS / 2;
        if (one_way < best) best = one_way;
    }
    pthread_join(t, NULL);
    printf("a line between CPU %d and CPU %d: %.1f ns one way (best of %d batches of %d hand-overs)\n", cpu_a, cpu_b,
           best, BATCHES, ROUNDS);
    buffer_writes(cpu_a);
    return 0;
}
