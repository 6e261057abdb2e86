/*
 * maintenance.h: what the files of src/maintenance/ share (seed 003's
 * MemoryAgent as engine operations over ordinary memories): the policy
 * they act on, the episode record's layout in a memory, and the archive
 * (date-partitioned zstd JSONL files outside the store, with restore).
 *
 * Episodes are memories of kind "episode": the text is the prompt, a blank
 * line and the output (so the vector and the lexical lane see both), and
 * the metadata holds seed 003's EpisodeMetadata keys at the top level (so
 * the ordinary filters reach them: {"projectID":{"$eq":"acme"}}) plus
 * "promptBytes", where the prompt ends in the text.
 */
#ifndef REMEM_MAINTENANCE_H
#define REMEM_MAINTENANCE_H

#include <jansson.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/ops.h"

/* The kind of an episode, and the metadata key marking a cluster's summary. */
#define EPISODE_KIND        "episode"
#define EPISODE_SUMMARY_KEY "episodeSummary"

/* Seed 003's configuration keys, resolved for one namespace (policy.c). */
typedef struct maint_policy {
    int max_episodes_per_project; /* 0: no limit */
    double similarity_threshold;  /* clusters and recall's default minSimilarity */
    char strategy[16];            /* "none" | "heuristic" | "llm" */
    double prune_interval_hours;  /* 0: never (serve) */
    double retention_days;        /* 0: keep forever */
    char archive_location[1024];  /* resolved: never empty */
    double feedback_weight_factor;
} maint_policy;

/* The policy of ns: the configuration's, with the defaults of seed 003's
 * example where it sets nothing. The archive location defaults to the
 * store's path + ".archive" (":memory:" stores: ./remem-archive). */
void maint_policy_get(remem *db, const char *ns, maint_policy *out);

/* The "prune" operation called from C (prune.c): args as the operation
 * takes them; *result is its PruneReport. episode.add runs it when a
 * project passes maxEpisodesPerProject. */
int maint_prune(remem *db, json_t *args, json_t **result);

/* ---- the archive (archive.c) ---- */

/* Move the rows of ns with these rowids out of the live store into one new
 * archive file under dir (dir/YYYY/MM/DD/, the day of `now`): the file is
 * written and fsync'd first (as NAME.pending), then the rows are deleted
 * in one transaction with a history row "archive" each, then the file
 * takes its final name. A crash anywhere leaves every memory in exactly
 * one place once maint_archive_recover has run: every operation that
 * archives calls it once before its first batch (not per batch: it walks
 * the whole archive folder). ids (may be NULL) receives the archived ids
 * (a JSON array, appended). */
int maint_archive_rows(remem *db, const char *dir, const char *ns, const int64_t *rowids, size_t n,
                       int64_t now, const char *actor, json_t *ids);
/* maint_archive_rows, adding one memory in the same transaction (a prune
 * cluster's summary: it and the archiving of its members commit together
 * or not at all, so a failure between them cannot leave the summary
 * beside its live members, nor a retry add it twice). add is validated;
 * add_vec is its unit vector (NULL: embedded later); id_out receives its
 * id. */
int maint_archive_rows_adding(remem *db, const char *dir, const char *ns, const int64_t *rowids,
                              size_t n, int64_t now, const char *actor, json_t *ids,
                              const remem_memory *add, const float *add_vec, char *id_out,
                              size_t id_cap);
/* Finish or undo what a crash left under dir: a .pending file whose rows
 * are still live is removed (its transaction never committed), one whose
 * rows are gone takes its final name; a file marked for settling (a
 * restore's) is rewritten without the records that are live again; .part
 * files and a dead prune's id list are removed. It walks only remem's own
 * layout (dir/YYYY/MM/DD/FILE, checked with lstat: a link is never
 * followed) and takes the store's write lock for one file at a time. The
 * caller holds the folder's lock (maint_archive_lock). */
int maint_archive_recover(remem *db, const char *dir);
/* The archive folder's lock: archive, restore, archive.list and prune hold
 * it from their recovery to their last file, so that within a process and
 * across processes one operation at a time writes under dir, and whatever
 * unfinished file a holder finds was left by one that died. It is an
 * flock(2) on dir/.lock (released by the kernel when a process dies).
 * create: make dir first (else a missing dir gives *fd = -1 and REMEM_OK:
 * nothing to lock). Returns REMEM_OK or REMEM_EIO (the message names the
 * folder). */
int maint_archive_lock(remem *db, const char *dir, int create, int *fd);
/* Release a lock of maint_archive_lock; fd -1 is a no-op. */
void maint_archive_unlock(int fd);

#endif
