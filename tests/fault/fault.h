/*
 * fault.h: fault injection for tests/test_fault.c, as SQLite tests itself:
 * the Nth allocation, the Nth store call or the Nth file write fails.
 *
 * Nothing of it is in the library: the test program is linked with
 * `-Wl,--wrap=SYMBOL` for each call below (the Makefile's FAULT_WRAP), so
 * that remem's own objects (libremem.a, linked statically into the test)
 * call fault.c's __wrap_SYMBOL, which counts and either fails or hands on
 * to the real one. SQLite's allocations come through its allocator methods
 * (sqlite3_config(SQLITE_CONFIG_MALLOC)) and jansson's through
 * json_set_alloc_funcs, both installed by fault_install. The normal build,
 * the remem command and libremem.so are untouched: the switch costs
 * nothing there.
 *
 *   allocations  malloc, calloc, realloc, strdup, strndup, aligned_alloc,
 *                vasprintf of remem's code; SQLite's; jansson's when asked
 *                (fault_jansson)
 *   store calls  every operation of the store's table (store/store.h) that
 *                returns a status: it returns REMEM_EIO as a disk error
 *                would (a failed commit rolls back first, as the table's
 *                contract says)
 *   file writes  opening a file for writing, write, pwrite, fwrite, fputs,
 *                fputc, fprintf, json_dumpf, fflush, fsync, fdatasync,
 *                fclose, rename, mkdir, ftruncate (archive files, cache
 *                snapshots, prune reports, anything remem writes)
 *
 * Counting runs only while armed, so the test's own work is never counted.
 * A fault is transient: the Nth call fails and later ones succeed.
 */
#ifndef REMEM_TEST_FAULT_H
#define REMEM_TEST_FAULT_H

#include <stdint.h>

enum fault_kind { FAULT_ALLOC, FAULT_STORE, FAULT_FILE, FAULT_KINDS };

/* Install the SQLite and jansson allocators; call first in main(), before
 * any SQLite call. 0, or -1 when SQLite refuses (already initialised). */
int fault_install(void);
/* Whether jansson's allocations count and fail (off at first). Never
 * inside jansson's parser (json_loads, json_loadb, also wrapped): jansson
 * 2.14 does not survive a failing allocator there: its lexer drops the
 * byte it could not append (lex_save ignores strbuffer_append_byte's
 * status), so a string parses with a character missing, and then asserts
 * (load.c:442). */
void fault_jansson(int on);
/* Count calls of every kind from now; the nth call (from 1) of kind k
 * fails (n 0: none fails, just count). */
void fault_arm(enum fault_kind k, long n);
/* Stop counting and failing. */
void fault_disarm(void);
/* Calls of kind k counted since fault_arm, and whether the fault fired. */
long fault_count(enum fault_kind k);
int fault_fired(void);
/* The name of a kind ("allocation", "store call", "file write"). */
const char *fault_kind_name(enum fault_kind k);

/* A deterministic clock and id source, so that two runs of one step write
 * the same rows: util_now_ms returns ms, and util_new_id numbers ids from
 * ms and a counter that this call resets. */
void fault_clock_set(int64_t ms);

#endif
