/* line_transfer.c — what one 64-byte line costs to move from one core's
 * cache to another's: two threads pinned to CPUs A and B (default 0 and 1)
 * hand a counter back and forth, BATCHES times ROUNDS hand-overs; prints
 * the best batch's time a one-way hand-over (the best: a neighbour that
 * takes either CPU for a while stalls the batch it falls in).
 *
 *   cc -O2 -pthread bench/line_transfer.c -o build/line_transfer && build/line_transfer [A B]
 *
 * render_batch moves a few lines a row between its threads (see
 * docs/pipelines.md, "Two threads"); on a virtual machine the figure
 * depends on where the host runs the two vCPUs at the time, so run it a
 * few times. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { ROUNDS = 1000, BATCHES = 3000 };

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

int main(int argc, char **argv) {
    int cpu_a = argc > 2 ? atoi(argv[1]) : 0;
    if (argc > 2) cpu_b = atoi(argv[2]);
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
    printf("a line from CPU %d to CPU %d and back: %.1f ns one way (best of %d batches of %d)\n", cpu_a, cpu_b, best,
           BATCHES, ROUNDS);
    return 0;
}
