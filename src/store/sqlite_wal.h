/*
 * sqlite_wal.h: the checkpoints of a writable SQLite handle's WAL, moved
 * off the commit path (sqlite_wal.c). Only sqlite.c uses it.
 */
#ifndef REMEM_SQLITE_WAL_H
#define REMEM_SQLITE_WAL_H

#include <sqlite3.h>

typedef struct sqlite_wal sqlite_wal;

/* Take over db's checkpoints (its WAL hook) for the file at path: past
 * soft_pages frames in the WAL a thread of its own (started on first
 * need, with its own connection) checkpoints while the writer goes on;
 * past hard_pages the committing writer checkpoints itself, so the WAL
 * stays bounded whatever the thread does. NULL when out of memory (then
 * SQLite's own autocheckpoint stays). */
sqlite_wal *sqlite_wal_start(sqlite3 *db, const char *path, int soft_pages, int hard_pages,
                             const char *synchronous);

/* Stop the thread (it finishes the checkpoint it is in) and close its
 * connection; before db is closed. NULL is fine. */
void sqlite_wal_stop(sqlite_wal *w);

#endif
