/* heap.c: the memory allocator of `remem serve`, and what it is told.
 *
 * The namespace caches churn under their budget: at 3,000-4,000 loads a
 * second a namespace's blocks of every size are allocated by one worker
 * and freed by another at its eviction. glibc's malloc keeps what is freed
 * inside its arenas; giving it back takes malloc_trim, which walks each
 * arena with its lock held for tens of milliseconds on a full budget, and
 * the requests queued behind it were most of a busy server's p99 (30-45
 * ms, 8-9 ms without the trim, but then the heap grew past the budget by
 * 175 MB in a minute; bench/bench_tenants.sh). jemalloc (Debian's
 * libjemalloc2) keeps blocks of one size class together and gives dirty
 * pages back from a background thread after a decay time, without holding
 * the locks the allocating threads take: the same run's p99 was 7-10 ms
 * with the heap as small. So the remem binary links jemalloc (the Makefile,
 * REMEM_ALLOC=jemalloc, the default), and this file asks it for what glibc
 * needed by hand. Built without it (REMEM_ALLOC=libc, or a sanitizer's
 * build, whose allocator replaces both), the glibc policy stays: two arenas
 * a core and a trim every few seconds.
 *
 * jemalloc is found at run time (a weak reference to mallctl), so the same
 * code serves a binary linked with it, one given it by LD_PRELOAD, and one
 * without it. */
#include <gnu/libc-version.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "serverInt.h"

/* jemalloc's control call; NULL when jemalloc is not in the process. */
extern int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
    __attribute__((weak));

/* Read by jemalloc when it starts (before main): a background thread
 * gives dirty pages back after 1 s unused (muzzy pages are not kept:
 * they would count in RSS until reused). Ignored without jemalloc. An
 * operator's MALLOC_CONF comes after this and wins. */
const char *malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0";

/* glibc heap arenas a core. glibc gives each thread that allocates an
 * arena of its own, up to eight per core, and memory freed into an arena
 * stays there: with namespaces loaded by one worker and evicted by
 * another, every arena kept its share of the budget's churn (anonymous
 * memory 564 / 593 / 669 MB at 1 / 4 / 8 threads under a 512 MB budget).
 * With one a core, workers queued on the arenas' locks (15 futex calls a
 * recall, 6.6 with two, bench/tenant_cost.sh). */
#define ARENAS_PER_CORE 2

static int heap_jemalloc(void) { return mallctl != NULL; }

void heap_setup(void) {
    if (heap_jemalloc()) return;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    mallopt(M_ARENA_MAX, ARENAS_PER_CORE * (cores > 0 ? (int)cores : 2));
}

void heap_tick(void) {
    if (!heap_jemalloc()) malloc_trim(0);
}

void heap_release(void) {
    if (heap_jemalloc()) {
        /* Every arena's dirty pages, now (4096: MALLCTL_ARENAS_ALL). */
        mallctl("arena.4096.purge", NULL, NULL, NULL, 0);
        return;
    }
    malloc_trim(0);
}

const char *heap_allocator(char *buf, size_t cap) {
    if (heap_jemalloc()) {
        const char *v = NULL;
        size_t len = sizeof v;
        if (mallctl("version", &v, &len, NULL, 0) || !v) v = "?";
        /* "5.3.0-0-g54eaed1d...": the release, without the commit. */
        snprintf(buf, cap, "jemalloc %.*s", (int)strcspn(v, "-"), v);
    } else {
        snprintf(buf, cap, "glibc %s", gnu_get_libc_version());
    }
    return buf;
}

int heap_figures(size_t *allocated, size_t *held) {
    *allocated = *held = 0;
    if (heap_jemalloc()) {
        /* The statistics are a snapshot, refreshed by writing the epoch. */
        uint64_t epoch = 1;
        size_t len = sizeof epoch;
        mallctl("epoch", &epoch, &len, &epoch, len);
        len = sizeof *allocated;
        if (mallctl("stats.allocated", allocated, &len, NULL, 0)) return -1;
        len = sizeof *held;
        if (mallctl("stats.resident", held, &len, NULL, 0)) return -1;
        return 0;
    }
    /* glibc: what is in use, and what the arenas and mapped blocks take
     * from the system (pages a trim gave back inside an arena still count). */
    struct mallinfo2 mi = mallinfo2();
    *allocated = mi.uordblks + mi.hblkhd;
    *held = mi.arena + mi.hblkhd;
    return 0;
}
