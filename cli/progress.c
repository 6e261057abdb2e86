/*
 * progress.c: the progress bar of progress.h.
 */
#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

void progress_start(progress *p, const char *label, int64_t total, int quiet) {
    p->label = label;
    p->total = total;
    p->enabled = !quiet && isatty(2);
    p->start = now_s();
    p->last_draw = 0;
}

void progress_update(progress *p, int64_t done) {
    if (!p->enabled) return;
    double t = now_s();
    if (t - p->last_draw < 0.1 && !(p->total && done >= p->total)) return;
    p->last_draw = t;
    double rate = t > p->start ? (double)done / (t - p->start) : 0;
    if (p->total > 0) {
        int width = 30, fill = (int)(width * (double)done / (double)p->total);
        if (fill > width) fill = width;
        fprintf(stderr, "\r%s [", p->label);
        for (int i = 0; i < width; i++) fputc(i < fill ? '#' : '.', stderr);
        fprintf(stderr, "] %lld/%lld  %.0f/s ", (long long)done, (long long)p->total, rate);
    } else {
        fprintf(stderr, "\r%s %lld  %.0f/s ", p->label, (long long)done, rate);
    }
    fflush(stderr);
}

void progress_done(progress *p) {
    if (p->enabled) fprintf(stderr, "\r\033[K");
}
