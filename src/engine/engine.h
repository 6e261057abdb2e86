/*
 * engine.h: what the engine's files (handle.c, txn.c, write.c, edit.c, namespace.c,
 * cache.c, cache_rows.c, cache_share.c, cache_snap.c, recall.c, render.c, jsonl.c)
 * share: the handle, the per-namespace caches that vector search runs over,
 * and the error helpers. Faces never see this header; parts never include
 * it.
 */
#ifndef REMEM_ENGINE_H
#define REMEM_ENGINE_H

#include <jansson.h>
#include <pthread.h>
#include "remem.h"
#include "config/config.h"
#include "embed/embed.h"
#include "index/flat.h"
#include "lexical/lexical.h"
#include "llm/llm.h"
#include "net/net.h"
#include "store/store.h"
#include "text/analyse.h"
#include "util/util.h"

/* A namespace's rows held in memory: the vectors in a flat index, the
 * analysed words of the texts in a lexical index (the lexical lane's BM25),
 * and next to each the row's fields (everything a filter or the scoring
 * reads), all in the same order: row i is flat row i and lexical document
 * i. `version` is the namespaces.version it reflects. */
typedef struct ns_cache {
    char *ns;
    int64_t version;
    int64_t hist_seq; /* the newest history row of ns this cache reflects */
    /* The namespace's touch count (store_touched_since) when the rows'
     * access fields were read; -1 unknown (then it is never saved). */
    int64_t touch_seq;
    int dim;
    flat_index *ix;
    lex_index *lex;     /* document i: the terms of rows[i].m.text (cache_terms) */
    /* Document i: the entity keys of rows[i].m.text (cache_ent.c); NULL
     * until a recall asks for it (cache_entities), set under ent_lock. */
    lex_index *ent;
    pthread_mutex_t ent_lock;
    text_stemmer *stem; /* the handle's (remem.stem), for those terms */
    store_row *rows;    /* rows[i] describes flat row i; vec unused */
    json_t **meta;      /* parsed metadata, lazily (NULL until needed) */
    uint8_t *tier;      /* tier code of each row (cache_tier_code) */
    /* The last allow bitmap recall built (recall.c), kept for the next
     * query with the same filter, tiers and validity at the same version,
     * while `now` stays where no TTL starts or stops counting. */
    char *allow_key;
    uint64_t *allow_bits;
    size_t allow_count;
    int64_t allow_version, allow_from, allow_until;
    size_t n, cap;
    size_t str_bytes; /* the rows' own string blocks, as the heap holds them */
    /* rowid -> row index: open addressing, keys 0 = empty (rowids are > 0) */
    int64_t *map_keys;
    uint32_t *map_vals;
    size_t map_cap, map_used;
    /* Read from a snapshot (cache_snap.c): the file mapped (private,
     * writable; unmapped with the cache), in which lie the lexical index's
     * lists and the rows' strings (slab: the rows read from it; rows
     * written since own theirs), the version the snapshot was at (-1:
     * loaded by a scan), and how long the load took in all (ms; snapshot
     * and catch-up, or the scan). */
    void *map_base;
    size_t map_len;
    const char *slab;
    size_t slab_len;
    int from_snapshot;
    int snap_refused; /* a snapshot was there but could not be used: replace it */
    int64_t snap_version;
    double load_ms;
    /* Sharing (cache_share.c): every handle of the process on the same
     * store uses one cache per namespace. `lock` is held for reading by
     * whoever reads the rows (recall, a walk) and for writing by whoever
     * changes them (a write's catch-up, a refresh, a touch); `allow_lock`
     * guards the kept allow bitmap and `meta` entries are set once with
     * an atomic exchange, so readers in parallel never race. The rest is
     * the registry's, under its own mutex: pins (a cache pinned by a
     * request is never evicted), the LRU links, the hash chain (`next`),
     * the store it belongs to, the bytes it was last counted at, and
     * `dead` (dropped from the registry; freed by its last unpin). */
    pthread_rwlock_t lock;
    pthread_mutex_t allow_lock;
    const void *shelf;
    int pins, dead;
    size_t bytes;
    struct ns_cache *lru_prev, *lru_next;
    struct ns_cache *next;
} ns_cache;

/* The process-wide registry of caches per store (cache_share.c). */
typedef struct cache_shelf cache_shelf;

struct remem {
    store *st;
    embedder *emb;
    char emb_note[512];
    remem_options opt;
    char *uri;
    /* The store's place in the process-wide cache (cache_share.c). */
    cache_shelf *shelf;
    /* Snowball's state for the lexical lane's terms (cache_terms): one per
     * handle, as a handle serves one thread at a time. */
    text_stemmer *stem;
    /* The lexical lane's accumulator (lex_search_with), kept from one
     * recall to the next; made on first use. */
    lex_scratch *lexs;
    /* Writes that survive an embedder outage (pending.c): while now <
     * embed_down_until adds skip the embedder and commit without a vector;
     * each failure doubles embed_backoff_ms (1 s to 5 min); pending_hint
     * says this handle wrote rows without a vector that a later write may
     * embed. */
    int64_t embed_down_until, embed_backoff_ms;
    int pending_hint;
    /* The configuration file's policies (policy.c); never NULL on an open
     * handle (the defaults when there is no file). */
    cfg *conf;
    /* The namespaces this handle has hydrated from their policy's
     * hydrate_files, or found already holding decisions (a JSON object used
     * as a set; src/experience/firstuse.c), so the check runs once. */
    json_t *hydrated;
    /* The LLM client (llm_glue.c), NULL when none is configured, and the
     * tokens it used per operation name. */
    llm *llm;
    struct eng_llm_tally *llm_counts;
    size_t n_llm_counts;
    /* Set: auto-rating is left to the caller (remem_set_rate_later). */
    remem_rate_later_fn rate_later;
    void *rate_later_ctx;
    /* The bound on this handle's LLM and embedder requests
     * (remem_set_deadline, remem_interrupt; llm_glue.c). */
    net_cancel cancel;
    /* Set by a recall whose entity lane will run: the namespaces it loads
     * read their entity keys in the same pass as their terms (cache.c),
     * rather than in a second pass on the lane's first look. */
    int load_entities;
    /* An answer an operation rendered as JSON text itself (recall's hits,
     * written once by remem_result_to_json) instead of a json_t:
     * remem_call_ex hands it out as it is (eng_answer_text, ops.c). */
    char *answer_text;
    char err[1024];
};

/* Set the handle's error message (printf-style) and return rc. */
int eng_fail(remem *db, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Take the store's message for rc. */
int eng_store_fail(remem *db, int rc);
void eng_ok(remem *db);

/* ---- the struct-size guard (handle.c; include/remem.h, STRUCT SIZES) ---- */

/* Copy the caller's struct *in over the library's defaults into *out (full
 * size, out->size ours), reading only the in->size bytes the caller's
 * header gave it. REMEM_EINVAL with the message set (db may be NULL) when
 * in is NULL, was never initialised, or is larger than the library's. Every
 * public call that reads one of these structs reads its *out instead. */
int eng_take_options(remem *db, const remem_options *in, remem_options *out);
int eng_take_memory(remem *db, const remem_memory *in, remem_memory *out);
int eng_take_patch(remem *db, const remem_patch *in, remem_patch *out);
int eng_take_query(remem *db, const remem_query *in, remem_query *out);
/* Copy the library's *full into the caller's *out up to out->size (which
 * the caller's remem_memory_init set), keeping that size. */
int eng_give_memory(remem *db, const remem_memory *full, remem_memory *out);
/* The leading size_t of a public struct (0 for NULL). */
size_t eng_struct_size(const void *in);

/* Caches, shared by every handle of the process on the same store
 * (cache_share.c; docs/architecture.md, "Caches"). */
/* The cache of ns, loaded if needed and caught up with the store's
 * version (another handle's or process's writes), pinned (never evicted)
 * and locked for reading: the caller may read its rows until cache_put.
 * NULL with *rc set when the namespace is empty (rc = REMEM_OK) or on
 * error. A caller that gets several must get them in strcmp order of
 * their names and must not write to the store before cache_put (its own
 * write would wait for the lock it holds). */
ns_cache *cache_get(remem *db, const char *ns, int *rc);
/* cache_get when the caller has just read the namespace's version and
 * row count (store_ns_info; rows 0: empty, NULL). */
ns_cache *cache_get_known(remem *db, const char *ns, int64_t version, int64_t rows, int *rc);
/* The cache of ns when it is loaded (no load, no catch-up), pinned and
 * locked for reading as cache_get; NULL when it is not. */
ns_cache *cache_peek(remem *db, const char *ns);
/* 1 when ns is cached for db's store right now (a hint: it may be
 * evicted the next moment), else 0. */
int cache_has(remem *db, const char *ns);
/* Share c, a cache_load_read of this handle (which it takes over): as
 * cache_get_known gives it, pinned and read-locked; another thread's
 * cache of the namespace instead when that one is not older. */
ns_cache *cache_get_loaded(remem *db, ns_cache *c, int *rc);
/* Release a cache_get: cache_unlock then cache_unpin (NULL ok). */
void cache_put(remem *db, ns_cache *c);
void cache_unlock(ns_cache *c);
void cache_unpin(remem *db, ns_cache *c);
/* With c pinned and not locked by the caller: set the access fields of
 * its rows rowids[0..n) (a recall's touch), atomically under the read
 * lock. */
void cache_touch(ns_cache *c, const int64_t *rowids, size_t n, int64_t now);
/* After our own committed write to ns: bring the cache from version
 * `before` to `after` (history up to hist_seq) by re-reading the given rows
 * (removing the ones that are gone). If the cache was not at `before`,
 * another process wrote too: catch up from the history instead. */
void cache_apply(remem *db, const char *ns, int64_t before, int64_t after, int64_t hist_seq,
                 const int64_t *rowids, size_t n);
void cache_drop(remem *db, const char *ns);
/* The handle joins its store's shelf (remem_open) and leaves it
 * (remem_close: the last handle of a store frees its caches). */
int cache_attach(remem *db);
void cache_detach(remem *db);
/* fn for every cache of db's store, each pinned and read-locked meanwhile. */
void cache_each(remem *db, void (*fn)(remem *db, const ns_cache *c, void *ctx), void *ctx);
/* The process's budget in bytes (0: the default, from physical memory). */
void cache_set_budget(size_t bytes);
size_t cache_default_budget(void);
/* The process cache's figures, as JSON (a new reference): bytes, budget,
 * namespaces, loads, hits, misses, evictions, oversized_loads (loads of a
 * namespace larger than the whole budget), hit_ratio. */
json_t *cache_stats_json(void);
/* What c allocates (rows, strings, vectors and codes, lexical index,
 * maps, kept bitmap; a snapshot's map by its length), by its own counts. */
size_t cache_bytes(const ns_cache *c);
/* Recount c's bytes in the shared budget (cache_share.c), after a reader
 * added derived data to it (the entity index); c is pinned and locked. */
void cache_account(remem *db, ns_cache *c);
/* The entity index of c (cache_ent.c), built on first use from the rows
 * (the caller holds c's read lock; *built = 1 when this call built it:
 * the caller then has it counted, cache_account); NULL when out of
 * memory. */
lex_index *cache_entities(ns_cache *c, int *built);
/* Keep it in step with the rows (the caller holds c's write lock); each
 * is a no-op while there is none. _set: row's text becomes text. */
void cache_ent_append(ns_cache *c, size_t row);
void cache_ent_set(ns_cache *c, size_t row, const char *text);
void cache_ent_remove(ns_cache *c, size_t row);
/* Its bytes (0 while there is none), under c->ent_lock (cache_rows.c). */
size_t cache_ent_bytes(const ns_cache *c);
/* The entity keys of text (src/text/entities.h) as cache_terms gives
 * terms: copies in buf, their offsets appended to *offs; how many, or
 * -1 when out of memory. */
/* A query's terms for a lane (qterms.c): copies in buf, v[i] pointing at
 * term i and w[i] its weight; the first `own` are the query's own. Zero
 * it (and sb_init buf) first; qterms_free frees what it holds. */
typedef struct qterms {
    strbuf buf;
    size_t *offs, n, cap, own;
    const char **v;
    double *w;
} qterms;
/* The lexical lane's: the analysed query, then its WordNet expansion
 * weighted w_expand (none when 0 or when WordNet's files are missing). */
int qterms_lexical(remem *db, const char *text, double w_expand, qterms *q);
/* The entity lane's: the query's entity keys, weight 1. */
int qterms_entities(const char *text, qterms *q);
void qterms_free(qterms *q);
long cache_entity_keys(const char *text, strbuf *buf, size_t **offs, size_t *n, size_t *cap);
/* The loading steps the registry drives (cache.c): a namespace from its
 * snapshot or a scan (not shared yet; NULL with *rc as cache_get), and our
 * own rows applied to c (0, or -1: drop it). */
ns_cache *cache_load(remem *db, const char *ns, int *rc);
/* Where the store reads a load in one call (store_has_load): ns's
 * namespace row (model, may be NULL; version; rows) and, when it holds
 * rows, its cache (not shared yet) from the same read; NULL when empty.
 * *rc: REMEM_ENOTFOUND (nothing reported) when ns was never written. */
ns_cache *cache_load_read(remem *db, const char *ns, char *model, size_t model_cap,
                          int64_t *version, int64_t *rows, int *rc);
int cache_apply_rows(remem *db, ns_cache *c, int64_t before, int64_t after, int64_t hist_seq,
                     const int64_t *rowids, size_t n);
/* A cache's storage (cache_rows.c), which a scan (cache.c) and a snapshot
 * (cache_snap.c) fill: an empty cache of ns (NULL: out of memory), room
 * for cap rows in all its arrays (0 or -1), row idx's entry in the rowid
 * map (0 or -1) and its removal, the release of a row's strings (packed
 * by cache.c, or in a snapshot's map), and the whole cache's release
 * (NULL ok). */
ns_cache *cache_new(remem *db, const char *ns, int dim);
int cache_reserve(ns_cache *c, size_t cap);
int cache_map_put(ns_cache *c, int64_t rowid, uint32_t idx);
void cache_map_forget(ns_cache *c, int64_t rowid);
void cache_release_row(ns_cache *c, store_row *r);
void cache_destroy(ns_cache *c);
/* Catch c up with the store's history. 0, or -1 when it must be dropped
 * instead (a clear, a reindex, too many changes, a failed read, or with
 * keep_order a row to remove). *seen (may be NULL) gets the number of
 * history rows applied. */
int cache_refresh(remem *db, ns_cache *c, int64_t *seen, int keep_order);

/* Snapshots of caches (cache_snap.c; the file's comment has the format
 * and the checks). snap_enabled: not turned off by REMEM_SNAPSHOTS=0.
 * snap_min_rows: the smallest cache worth one (REMEM_SNAPSHOT_MIN, 5000).
 * snap_read: the cache of ns from its snapshot, at the snapshot's version
 * (<= version; the caller catches up), when one exists for this store,
 * ns, model and dim and passes every check; else NULL, with *refused
 * set to 1 when a file was there (snap_save then replaces it). snap_save:
 * write c's snapshot unless the one there is at c's version or (force 0)
 * close behind (and c->snap_refused is 0); 1 written, 0 not needed, -1
 * not possible (no place for one, rows out of rowid order, I/O). snap_save_all: snap_save of each cache of the handle
 * big enough (remem_close). */
int snap_enabled(void);
size_t snap_min_rows(void);
double snap_clock_ms(void);
ns_cache *snap_read(remem *db, const char *ns, const char *model, int dim, int64_t version,
                    int *refused);
int snap_save(remem *db, const ns_cache *c, int force);
void snap_save_all(remem *db);
/* 0 static, 1 short, 2 long, 3 archived, 4 anything else. */
int cache_tier_code(const char *tier);
/* The analysed terms of text (text_analyse_with and the stemmer st,
 * src/text/analyse.h), the one analysis the lexical index's documents and
 * the lexical lane's queries share: NUL-terminated copies in buf
 * (appended; sb_init it first), their offsets into buf appended to *offs
 * (grown with realloc; *n of *cap used). Returns the number of terms
 * added, or -1 when out of memory. */
long cache_terms(text_stemmer *st, const char *text, strbuf *buf, size_t **offs, size_t *n,
                 size_t *cap);
/* Row index of rowid in c, or -1. */
long cache_find(const ns_cache *c, int64_t rowid);
/* Parsed metadata of row i (NULL if none or not an object). */
const json_t *cache_meta(ns_cache *c, size_t i);

/* Renderings (render.c). The memory as a JSON object (times as ISO 8601;
 * with_vec adds "vector"). New reference. */
json_t *eng_memory_json(const remem_memory *m, int with_vec);
/* The memory as remem_memory_to_json renders it, without the size check:
 * for the engine's own memories (store rows, history). malloc'd. */
char *eng_memory_text(const remem_memory *m);
/* s (UTF-8) as a JSON string, quoted and escaped as jansson writes it,
 * appended to o. */
void eng_json_string(strbuf *o, const char *s);

/* The checks remem_add makes of a memory's fields (not of its vector's
 * dimension): REMEM_OK or the error, with the message set. */
int eng_check_memory(remem *db, const remem_memory *m);
/* The numeric overrides of a query (k, candidates, weights, thresholds,
 * decay) against remem's one rule set (query.c): REMEM_OK, or
 * REMEM_EINVAL with "FIELD: PROBLEM" in err. NaN and k, candidates <= 0
 * mean "the profile's" and pass. */
int eng_query_check(const remem_query *q, char *err, size_t cap);
/* remem_query_parse of a query already parsed (an object built by an
 * operation from its arguments): the same checks and messages, without
 * printing and reading the JSON again. The parsed query holds its own
 * reference to root. */
int eng_query_from_json(json_t *root, remem_query_json **out, char *err, size_t errcap);
/* The memories of *ns most like text by their vectors alone (relevance
 * weight 1, every other 0, no touch), at most k, similarity at least
 * min_sim, filter applied (may be NULL): what consolidate and ingest show
 * the model. An unknown namespace is no hits (*out NULL, REMEM_OK). */
int eng_similar(remem *db, const char *const *ns, const char *text, int k, double min_sim,
                const char *filter, remem_result **out);

/* ---- policies (policy.c; the file is read by src/config/) ---- */

/* Load the handle's configuration (remem_options.config_path,
 * $REMEM_CONFIG, remem.yaml beside the store): REMEM_OK or REMEM_EINVAL
 * with the file, line and key in the message. Called by remem_open. */
int eng_config_load(remem *db);
/* The handle's configuration (never NULL on an open handle). */
cfg *eng_config(remem *db);
/* The effective policy of ns (never NULL; valid until remem_close). */
const cfg_policy *eng_policy(remem *db, const char *ns);
/* 1 when memory is off for ns (the no_memory option, or the policy). An
 * operation that writes checks it and answers "dropped" without writing;
 * one that reads returns nothing. ns NULL: the option alone. */
int eng_memory_off(remem *db, const char *ns);
/* Fill the fields q leaves to the profile from the policy of its first
 * namespace (profile, k = top_k, and, when q uses the policy's profile,
 * the policy's overrides). *holder (json_decref after the recall) owns
 * strings q may now point into. */
int eng_query_policy(remem *db, remem_query *q, json_t **holder);

/* The kind's default importance (seed 004: decisions 0.9, reflections 0.95). */
double eng_kind_importance(const char *kind);

/* ---- the LLM (llm_glue.c; docs/llm.md) ---- */

/* Open the handle's LLM client from its options or $REMEM_LLM_* (no
 * request is made); none configured leaves db->llm NULL. REMEM_EINVAL with
 * the message for a URL that is not http(s). Called by remem_open. */
int eng_llm_open(remem *db);
void eng_llm_close(remem *db);
/* The handle's LLM client, or NULL when none is configured: operations
 * then use their named fallback or refuse. */
llm *eng_llm(remem *db);
/* One chat completion for operation op (its name labels the token
 * counts): llm_chat, then the tokens it used added to the handle's and the
 * process's counts for op and to *u (may be NULL). On failure REMEM_ELLM
 * (or REMEM_ENOMEM) with the handle's message "OP: CAUSE". No LLM:
 * REMEM_EUNSUPPORTED "OP needs an LLM: set REMEM_LLM_URL". */
int eng_llm_chat(remem *db, const char *op, const char *system, const char *user, int json_mode,
                 char **answer, llm_usage *u);
/* The same asking for an answer that follows the JSON Schema text schema
 * (llm_chat_schema: json_schema, then json_object, then plain text, as
 * the endpoint takes them). */
int eng_llm_chat_schema(remem *db, const char *op, const char *system, const char *user,
                        const char *schema_name, const char *schema, char **answer,
                        llm_usage *u);
/* The "llm" member of an operation's answer: {"model", "prompt_tokens",
 * "completion_tokens"} from u. New reference (NULL: out of memory). */
json_t *eng_llm_answer(remem *db, const llm_usage *u);
/* Add u to the counts of op (handle and process), for a caller that ran
 * llm_chat itself. */
void eng_llm_count(remem *db, const char *op, const llm_usage *u);

/* The auto-rate policy, for remem_add (write.c; defined in
 * src/lifecycle/rate.c beside the "rate" operation, whose prompt it
 * shares): when the namespace's policy says auto_rate, an LLM is
 * configured and m has no importance, rate m's text and set m->importance and m->metadata (a new text with
 * "rating" in it, *meta to free after the write). A failed rating is no
 * failed add: the memory keeps the kind's default and metadata.rating
 * says {"fallback": "kind_default", "error": the cause}. When the handle
 * rates later (remem_set_rate_later), only *later = 1. Returns REMEM_OK or
 * REMEM_ENOMEM. */
int eng_rate_on_add(remem *db, remem_memory *m, char **meta, int *later);

/* ---- the write path's shared steps (txn.c) ---- */

/* REMEM_OK when the handle has a store and an embedder; clears the error. */
int eng_need_open(remem *db);
/* 1 for the kinds of bookkeeping records features keep for themselves
 * (hint_log, error_event, attempt, run, message, ingest_job; list.c): recall and list leave
 * them out unless the call names kinds. */
int eng_internal_kind(const char *kind);
/* Purge the rows (rowids) in one transaction, as remem_forget's purge does
 * each (edit.c); rows gone already are skipped. *deleted: how many. */
int eng_purge_rows(remem *db, const int64_t *rowids, size_t n, int64_t *deleted);
/* s is non-empty, at most max bytes and valid UTF-8; the error names
 * `what`. */
int eng_check_str(remem *db, const char *what, const char *s, size_t max);
/* s (NULL: nothing to check) is valid UTF-8, else REMEM_EINVAL "<what> is
 * not valid UTF-8 at byte N" (N: the offset of the first bad byte). */
int eng_check_utf8(remem *db, const char *what, const char *s);
/* Every check remem_add makes of a memory (including its vector's dimension). */
int eng_validate(remem *db, const remem_memory *m);
/* Scale v to unit length (a zero vector stays zero). */
void eng_normalize_vec(float *v, int dim);

/* The namespaces one transaction touched, with the rows it wrote in each,
 * so that eng_txn_end can bring exactly those caches along. */
typedef struct touched {
    char *ns;
    int model_ok; /* the model lock was checked and recorded in this txn */
    int64_t before;
    int64_t *rowids;
    size_t n, cap;
} touched;

typedef struct txn {
    touched *t;
    size_t n, cap;
} txn;

/* The entry of ns in x (added, with the namespace's version before the
 * write, on first use). NULL with *rc set on failure. */
touched *eng_txn_ns(remem *db, txn *x, const char *ns, int *rc);
/* Record that rowid of ns was written in x. */
int eng_txn_row(remem *db, txn *x, const char *ns, int64_t rowid);
/* Commit (or roll back when rc != 0), bring the caches along, free x.
 * Returns the final status. */
int eng_txn_end(remem *db, txn *x, int rc);
/* One history row: before/after rendered as JSON (either may be NULL). */
int eng_history(remem *db, const remem_memory *before, const remem_memory *after, const char *op,
                const char *actor, int64_t now);
/* Write one validated memory m (defaults filled here: kind, tier,
 * importance, times; a generated id when m->id is NULL, an exact duplicate
 * then folding) with its unit vector vec (the embedder's dimension),
 * inside the open transaction x (write.c). No policy hook runs: the
 * lifecycle stores its own products (reflections, summaries, plans,
 * static memories) through it, in one transaction with their other
 * changes. */
int eng_add_in_txn(remem *db, txn *x, const remem_memory *m, const float *vec, int64_t now,
                   char *id_out, size_t id_cap, int *outcome);
/* eng_add_in_txn for a memory the caller has looked up in this
 * transaction: m->id is set and not stored in m->ns, and its text is no
 * exact duplicate to fold; norm is util_normalize_text(m->text) and h its
 * util_hash64. Saves the two lookups (ingest's turns, write.c). */
int eng_insert_in_txn(remem *db, txn *x, const remem_memory *m, const float *vec, int64_t now,
                      const char *norm, uint64_t h);
/* Update (the patch's fields; a new text with its unit vector newvec) or
 * invalidate the memory (ns, id) inside the open transaction x, with one
 * history row, as remem_update and remem_invalidate do in their own
 * transaction (edit.c): several changes of one operation then commit
 * together. REMEM_ENOTFOUND when it is not there. */
int eng_update_in_txn(remem *db, txn *x, const char *ns, const char *id, const remem_patch *p,
                      const float *newvec, int64_t now);
int eng_invalidate_in_txn(remem *db, txn *x, const char *ns, const char *id,
                          const char *superseded_by, const char *reason, int64_t now);
/* Delete the memory (ns, id) for good inside x, as remem_forget's purge
 * does, but without scrubbing the store's files afterwards: for
 * bookkeeping rows that hold nothing to scrub. */
int eng_purge_in_txn(remem *db, txn *x, const char *ns, const char *id, int64_t now);
/* The namespace's stored vectors come from the handle's model (or none yet). */
int eng_check_model(remem *db, const char *ns);
/* Record the handle's model as the namespace's. */
int eng_set_model(remem *db, const char *ns);
/* End a transaction that changed a whole namespace (clear, reindex). */
int eng_end_ns_change(remem *db, const char *ns, const char *op, const char *after, int rc);

/* ---- pending embeddings (pending.c) ---- */

/* Embed texts for an add. REMEM_OK with the vectors in out; or, when the
 * embedder is a remote one ("http") that is failing (or failed within its
 * backoff), REMEM_OK with *pending = 1 and out untouched: the caller
 * commits the rows without vectors. Other failures are returned as they
 * are (the message set). */
int eng_embed_for_add(remem *db, const char *const *texts, size_t n, float *out, int *pending);
/* Embed a query text into out (dim floats). When a remote embedder is
 * down (failing now, or within its backoff) out is all zeros and the
 * call succeeds: recall then ranks by its lexical lane alone. */
int eng_embed_query(remem *db, const char *text, float *out);
/* Embed up to max rows of ns (NULL: every namespace) that have no vector
 * yet, in batches, each row only if it still has none inside the write
 * transaction (so nothing is embedded twice). *done (may be NULL) gets the
 * rows embedded, *left (may be NULL) those still pending. */
int eng_embed_pending(remem *db, const char *ns, int64_t max, int64_t *done, int64_t *left);

/* recall.explain (recall.c): recall q as remem_recall does, and answer its
 * hits with what each score component put into the score ("parts", which
 * sum to the score), the near best candidates left out ("near_misses", at
 * most near, each saying why: rank, min_similarity, min_score), the
 * effective profile ("settings") and its formula. *out: a new object. */
int eng_recall_explain(remem *db, const remem_query *q, size_t near, json_t **out);

#endif
