/*
 * progress.h: a one-line progress bar on stderr for long commands (import,
 * reindex, eval). It draws only when stderr is a terminal, at most ten times
 * a second, and erases itself when done, so logs and pipes stay clean.
 */
#ifndef REMEM_CLI_PROGRESS_H
#define REMEM_CLI_PROGRESS_H

#include <stdint.h>

typedef struct progress {
    const char *label;
    int64_t total; /* 0 when unknown */
    int enabled;
    double last_draw, start;
} progress;

void progress_start(progress *p, const char *label, int64_t total, int quiet);
void progress_update(progress *p, int64_t done);
void progress_done(progress *p);

#endif
