/*
 * archive_file.h: one archive file: zstd-compressed JSONL, written and read
 * as a stream so that neither side ever holds a whole file in memory.
 *
 * Layout (after decompression): line 1 is a header object
 * {"remem_archive":1,"ns","archived_at","actor"}, then one memory per
 * line, then a trailer {"remem_archive_end":N,"xxh3":"<16 hex>"} whose
 * checksum covers every byte before it. A file without a valid trailer
 * (cut short, altered) is refused as a whole: a half-written archive is
 * never mistaken for a complete one. zstd's own frame checksum is on too.
 */
#ifndef REMEM_MAINTENANCE_ARCHIVE_FILE_H
#define REMEM_MAINTENANCE_ARCHIVE_FILE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct arch_writer arch_writer;
typedef struct arch_reader arch_reader;

/* Create path (truncating) for writing; NULL with err set on failure. */
arch_writer *arch_writer_open(const char *path, char *err, size_t cap);
/* Append one JSON object as a line (the header first). 0 or -1 (err). */
int arch_writer_put(arch_writer *w, json_t *line, char *err, size_t cap);
/* Write the trailer, flush, fsync and close. 0 or -1 (err); the writer is
 * freed either way. */
int arch_writer_finish(arch_writer *w, char *err, size_t cap);
/* Close without finishing (the caller removes the file). NULL ok. */
void arch_writer_abort(arch_writer *w);

/* Open path for reading; NULL with err set. */
arch_reader *arch_reader_open(const char *path, char *err, size_t cap);
/* The next line as a JSON object (new reference): the header first, then
 * the records. 1 with *line set; 0 at the end (after the trailer was
 * checked: count and checksum); -1 on a damaged file (err). */
int arch_reader_next(arch_reader *r, json_t **line, char *err, size_t cap);
void arch_reader_close(arch_reader *r);

/* mkdir -p; 0 or -1 (errno). fsync of a folder (so a rename in it is
 * durable); 0 or -1. */
int arch_mkdirs(const char *path);
int arch_fsync_dir(const char *path);

#endif
