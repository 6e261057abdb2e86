/*
 * scaling.h: the timing harness the two scaling benchmarks share
 * (bench_scaling.c, bench_scaling_lessons.c). An operation is timed at
 * 1x, 2x, 4x and 8x a base size; what they print is the growth per
 * doubling, about 2 for linear work and 4 for quadratic.
 *
 * The figures must say how the work grows, not how loaded a shared
 * 2-core machine was at one moment, so:
 *   - time is the process's CPU time (the machine's other load counts
 *     less than in wall time);
 *   - every size runs in a child process of its own (no size inherits the
 *     heap an earlier one fragmented), and the four sizes are interleaved
 *     over SCALING_ROUNDS passes, the best of each kept: a burst of load
 *     slows one pass of every size, not every pass of one; a doubling
 *     still above the limit gets up to two more such passes;
 *   - malloc never hands out fresh pages for a block a repeat already
 *     freed (glibc serves blocks above its mmap threshold, at most 32 MB,
 *     with new pages each time: a size above it paid its page faults on
 *     every repeat and one below it did not, a step in the curve that was
 *     the allocator's, not the operation's).
 */
#ifndef REMEM_BENCH_SCALING_H
#define REMEM_BENCH_SCALING_H

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SCALING_ROUNDS    3
#define SCALING_MAX_RATIO 2.5

static inline double scaling_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Call once, first thing in main. */
static inline void scaling_init(void) {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

/* run(n) in a child process; its seconds come back through a pipe. */
static inline double scaling_isolated(double (*run)(size_t), size_t n) {
    int fd[2];
    if (pipe(fd)) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        double t = run(n);
        if (write(fd[1], &t, sizeof t) != (ssize_t)sizeof t) _exit(1);
        _exit(0);
    }
    close(fd[1]);
    double t = -1;
    if (pid < 0 || read(fd[0], &t, sizeof t) != (ssize_t)sizeof t) t = -1;
    close(fd[0]);
    int st = 0;
    if (pid > 0) waitpid(pid, &st, 0);
    if (t < 0) {
        fprintf(stderr, "the run of size %zu failed\n", n);
        exit(2);
    }
    return t;
}

static inline double scaling_worst(const double t[4]) {
    double w = 0;
    for (int k = 1; k < 4; k++) {
        double g = t[k] / (t[k - 1] > 0 ? t[k - 1] : 1e-9);
        if (g > w) w = g;
    }
    return w;
}

/* t[k] = the best of the interleaved runs of size base << k: SCALING_ROUNDS
 * of them, and while a doubling still looks above SCALING_MAX_RATIO, up to
 * two more passes of as many (a minimum only falls with more samples, so
 * noise fades and true growth stays). Returns the passes made. */
static inline int scaling_sizes(double (*run)(size_t), size_t base, double t[4]) {
    for (int k = 0; k < 4; k++) t[k] = 1e30;
    int pass = 0;
    do {
        for (int r = 0; r < SCALING_ROUNDS; r++)
            for (int k = 0; k < 4; k++) {
                double x = scaling_isolated(run, base << k);
                if (x < t[k]) t[k] = x;
            }
    } while (++pass < 3 && scaling_worst(t) > SCALING_MAX_RATIO);
    return pass;
}

#endif
