/*
 * remem.h: the one public header of libremem, written as its manual.
 *
 * remem is a memory engine for LLM agents. An agent tells it what it
 * observed, did, concluded and learned (a "memory"); before its next step it
 * asks remem for the few memories that matter ("recall") and gets them back
 * ranked, each with every component of its score.
 *
 * MAIN CONCEPTS
 *   store      one database, opened by URI: a file path or ":memory:".
 *   namespace  the unit of isolation (an agent, a user, a project). Every
 *              write names one; every read names one or more.
 *   memory     one record: (namespace, id) is its key.
 *   profile    a named scoring preset (see PROFILES below).
 *
 * CONVENTIONS
 *   - Every function that can fail returns an int status: REMEM_OK (0) or a
 *     negative REMEM_E* code. remem_errmsg(db) gives the detail of the last
 *     failure on that handle ("filter: unknown operator $regexx at $.kind").
 *   - The library never prints and never exits.
 *   - Times are int64 milliseconds since the Unix epoch (UTC).
 *   - Strings are UTF-8 and NUL-terminated. Strings passed in are copied
 *     when the call needs them later; the caller keeps ownership.
 *   - Pointers returned inside a result object (remem_memory fields of a
 *     remem_result, for instance) stay valid until that object is freed.
 *   - Every free function accepts NULL.
 *   - A handle may be used by one thread at a time; open one handle per
 *     thread (they share the file safely), or serialise calls yourself.
 *   - Every write call is one transaction: it commits whole or changes
 *     nothing, and returns only once its commit is durable to the level
 *     chosen at open (REMEM_DURABLE_NORMAL survives a process crash;
 *     REMEM_DURABLE_FULL also survives power loss).
 *   - Several processes may open one store; each sees the others' commits on
 *     its next call.
 *
 * PROFILES (see docs/profiles.md for the formulas)
 *   "default"            hybrid: 0.4 relevance + 0.6 lexical (BM25) + 0.3
 *                        temporal context + small recency and importance
 *                        terms; remem's own, measured on LoCoMo.
 *   "generative-agents"  relevance + recency + importance, weight 1 each,
 *                        min-max normalised, recency 0.995^hours since access.
 *   "metaverse"          1.0 relevance (1/(1+L2)) + 0.25 recency (k^hours) +
 *                        0.25 importance; min_score 0.35; tiers static,
 *                        short, long in that priority.
 *   "stream"             0.4 relevance + 0.3 recency (half-life 7 days) +
 *                        0.3 importance; k = 5.
 *   "replay"             relevance only, over records with
 *                        metadata.reward >= 0.05; 2k candidates, best k.
 *   "episodes"           relevance with min_similarity 0.7; kind "feedback"
 *                        weighted 1.5.
 *   Every field of a profile can be overridden per query (remem_query).
 */
#ifndef REMEM_H
#define REMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REMEM_VERSION "0.1.0"

/* ------------------------------------------------------------------ */
/* Status codes. One table gives each its name and default message.    */
/* ------------------------------------------------------------------ */
#define REMEM_STATUS_MAP(X)                                     \
    X(REMEM_OK, 0, "ok")                                        \
    X(REMEM_EINVAL, -1, "invalid argument")                     \
    X(REMEM_ENOTFOUND, -2, "not found")                         \
    X(REMEM_EFILTER, -3, "invalid filter")                      \
    X(REMEM_EPROFILE, -4, "unknown profile")                    \
    X(REMEM_EDIM, -5, "vector has the wrong dimension")         \
    X(REMEM_EMODEL, -6, "embedding model mismatch")             \
    X(REMEM_EEMBED, -7, "embedder failed")                      \
    X(REMEM_ESTORE, -8, "storage error")                        \
    X(REMEM_EBUSY, -9, "store is busy")                         \
    X(REMEM_ENOMEM, -10, "out of memory")                       \
    X(REMEM_EIO, -11, "input/output error")                     \
    X(REMEM_EPARSE, -12, "malformed input")                     \
    X(REMEM_EAMBIGUOUS, -13, "id exists in several namespaces") \
    X(REMEM_ECORRUPT, -14, "corrupt or unsupported file")       \
    X(REMEM_EUNSUPPORTED, -15, "not supported")

enum remem_status {
#define REMEM__ENUM(name, val, msg) name = val,
    REMEM_STATUS_MAP(REMEM__ENUM)
#undef REMEM__ENUM
};

/* The name of a status code ("REMEM_EFILTER"), or "REMEM_UNKNOWN". Static. */
const char *remem_status_name(int rc);
/* The default one-line message of a status code. Static storage. */
const char *remem_strerror(int rc);

/* ------------------------------------------------------------------ */
/* Opening a store                                                     */
/* ------------------------------------------------------------------ */
typedef struct remem remem; /* opaque handle */

enum remem_durability {
    REMEM_DURABLE_NORMAL = 0, /* WAL, synchronous=NORMAL: survives crashes */
    REMEM_DURABLE_FULL = 1    /* WAL, synchronous=FULL: survives power loss */
};

typedef struct remem_options {
    /* Embedder: "hash" (default), "http", "minilm", or NULL for "auto":
     * minilm when a verified model is installed and the namespace has no
     * vectors of another model yet, hash otherwise. */
    const char *embedder;
    /* For "http": base URL of an OpenAI-compatible API (".../v1"); the
     * request goes to {embed_url}/embeddings. NULL: $REMEM_EMBED_URL. */
    const char *embed_url;
    const char *embed_model;   /* model name sent to the http endpoint */
    const char *embed_api_key; /* NULL: $REMEM_EMBED_API_KEY */
    int embed_timeout_ms;      /* per request; 0: 10000 */
    int embed_retries;         /* 0: 3 */
    int embed_batch;           /* texts per request; 0: 64 */
    const char *model_dir;     /* for "minilm"; NULL: $REMEM_MODEL_DIR or
                                  ~/.cache/remem/models/all-MiniLM-L6-v2 */
    int durability;            /* enum remem_durability */
    int busy_timeout_ms;       /* 0: 10000 */
    int read_only;             /* open without writing anything */
} remem_options;

/* Fill *opt with the defaults. */
void remem_options_init(remem_options *opt);

/*
 * Open (creating if needed) the store at uri: a file path or ":memory:".
 * opt may be NULL for the defaults. On success *out is a new handle (free
 * it with remem_close). On failure *out is a handle too, unless memory ran
 * out (then NULL), so that remem_errmsg(*out) can say why; close it.
 */
int remem_open(const char *uri, const remem_options *opt, remem **out);
/* Close the handle and free everything it holds. NULL is fine. */
void remem_close(remem *db);
/* Detail of the last failure on db (or "" after a success). Valid until the
 * next call on db. db may be NULL ("out of memory"). */
const char *remem_errmsg(const remem *db);
/* Name, model id and dimension of the handle's embedder. Valid until close. */
const char *remem_embedder_name(const remem *db);
const char *remem_embedder_model(const remem *db);
int remem_embedder_dim(const remem *db);
/* Why "auto" chose the embedder it did (one line), or "". */
const char *remem_embedder_note(const remem *db);

/* ------------------------------------------------------------------ */
/* The memory record                                                   */
/* ------------------------------------------------------------------ */
typedef struct remem_memory {
    const char *ns;                  /* namespace; required on add */
    const char *id;                  /* NULL on add: generated, unique, time-ordered */
    const char *kind;                /* open set; NULL on add: "observation" */
    const char *tier;                /* "static" "short" "long" "archived"; NULL: "short"
                                        ("static" for kind "static") */
    const char *text;                /* required on add, not empty */
    double importance;               /* in [0,1]; < 0 on add: the kind's default */
    int64_t created_at;              /* 0 on add: now */
    int64_t updated_at, accessed_at; /* set by the engine */
    int64_t access_count;
    int64_t expires_at;        /* 0: never. A TTL hides, it does not delete. */
    int64_t invalidated_at;    /* 0: valid */
    const char *superseded_by; /* id of the memory that replaced this one */
    int64_t duplicate_count;   /* exact re-adds folded into this record */
    const char *metadata;      /* a JSON object as text, or NULL */
    const char *links;         /* a JSON array of ids (evidence), or NULL */
    const char *model;         /* model id of the stored vector (read only) */
    const float *vector;       /* optional on add: a precomputed embedding */
    int dim;                   /* its length; must match the embedder */
} remem_memory;

/* Zero *m and set importance to -1 (= kind default). */
void remem_memory_init(remem_memory *m);

/* A record owned by the library (from remem_get). */
typedef struct remem_record remem_record;
const remem_memory *remem_record_memory(const remem_record *r);
void remem_record_free(remem_record *r);

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */
enum remem_add_outcome {
    REMEM_ADDED = 1,    /* a new row */
    REMEM_UPSERTED = 2, /* an existing caller id was replaced */
    REMEM_DUPLICATE = 3 /* same normalised text in the namespace: the
                           existing row's duplicate_count was bumped */
};

/*
 * Add one memory. The embedder runs unless m->vector is given.
 * id_out (may be NULL) receives the memory's id (generated or the
 * existing duplicate's), NUL-terminated, truncated to id_cap bytes;
 * 64 bytes always suffice for generated ids. outcome (may be NULL)
 * receives an enum remem_add_outcome. One transaction; a history row.
 */
int remem_add(remem *db, const remem_memory *m, char *id_out, size_t id_cap, int *outcome);

/*
 * Add n memories in one transaction: all or none. ids (may be NULL) is an
 * array of n buffers of id_cap bytes each, filled as remem_add does.
 * On failure *failed_index (may be NULL) is the index of the memory at fault
 * (or -1 when no single memory is), and nothing was written.
 */
int remem_add_batch(remem *db, const remem_memory *ms, size_t n, char *ids, size_t id_cap,
                    long *failed_index);

/* Fields of a patch (bit mask). */
enum remem_patch_field {
    REMEM_SET_TEXT = 1 << 0, /* re-embeds */
    REMEM_SET_KIND = 1 << 1,
    REMEM_SET_TIER = 1 << 2,
    REMEM_SET_IMPORTANCE = 1 << 3,
    REMEM_SET_METADATA = 1 << 4, /* replaces the whole object */
    REMEM_SET_EXPIRES = 1 << 5,
    REMEM_SET_LINKS = 1 << 6
};
typedef struct remem_patch {
    unsigned fields; /* which of the values below apply */
    const char *text, *kind, *tier, *metadata, *links;
    double importance;
    int64_t expires_at;
    const char *actor; /* who made the change, for history; may be NULL */
} remem_patch;

/* Change the memory (ns, id). ns may be NULL when the id is unique across
 * namespaces (else REMEM_EAMBIGUOUS). History keeps before and after. */
int remem_update(remem *db, const char *ns, const char *id, const remem_patch *p);
/* Hide (ns, id) from recall and keep it; superseded_by may be NULL. */
int remem_invalidate(remem *db, const char *ns, const char *id, const char *superseded_by,
                     const char *reason);
/* Delete (ns, id). With purge = 0 it moves to tier "archived" (out of
 * recall, restorable with remem_update); with purge = 1 the row and its
 * vector are deleted and history keeps a row without the text. */
int remem_forget(remem *db, const char *ns, const char *id, int purge);

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */
/* Fetch (ns, id); ns may be NULL as for remem_update. *out: free with
 * remem_record_free. Does not touch the memory. */
int remem_get(remem *db, const char *ns, const char *id, remem_record **out);

/* A query. remem_query_init sets every override to "use the profile". */
typedef struct remem_query {
    const char *text;    /* query text (embedded and used for BM25) */
    const float *vector; /* or a vector (then no lexical lane unless text) */
    int dim;
    const char *const *namespaces; /* at least one */
    size_t n_namespaces;
    const char *filter;  /* Chroma-style JSON filter, or NULL */
    const char *profile; /* NULL: "default" */
    int k;               /* <= 0: the profile's */
    /* Overrides; NaN (or -1 for the ints) means "the profile's value". */
    double w_relevance, w_lexical, w_recency, w_importance;
    double min_similarity, min_score;
    double recency_base;    /* k of k^hours, e.g. 0.995 */
    double half_life_hours; /* > 0 selects half-life decay */
    int normalize;          /* min-max normalise components: 0/1 */
    int candidates;         /* candidates per lane */
    const char *tiers;      /* comma list in priority order, or NULL */
    int64_t now;            /* 0: the clock */
    int no_touch;           /* 1: do not update accessed_at/access_count */
    int include_invalid;    /* 1: also invalidated and expired memories */
    double w_context;       /* weight of the temporal-context component */
} remem_query;

void remem_query_init(remem_query *q);

/* One ranked result. */
typedef struct remem_hit {
    remem_memory mem;  /* valid until remem_result_free */
    double score;      /* the final score */
    double relevance;  /* vector similarity mapped to [0,1] (0 if none) */
    double similarity; /* raw cosine similarity (NaN when not computed) */
    double lexical;    /* BM25 normalised to [0,1] (0 if no match) */
    double bm25;       /* raw BM25 (higher is better; 0 if no match) */
    double recency;    /* decay in [0,1] */
    double importance; /* importance as used */
    unsigned lanes;    /* bit 0: vector candidate; bit 1: lexical */
    double context;    /* best base score of the memory's neighbours in its
                          namespace's stream (previous/next written), among
                          the candidates; 0 if none */
} remem_hit;

typedef struct remem_result {
    size_t n;
    remem_hit *hits;     /* best first */
    const char *profile; /* the profile used */
    int64_t now;         /* the time used */
    size_t candidates;   /* candidates scored */
    double took_ms;
} remem_result;

/* Run a query. *out: free with remem_result_free. */
int remem_recall(remem *db, const remem_query *q, remem_result **out);
void remem_result_free(remem_result *r);

/* The names of the built-in profiles, NULL-terminated. Static. */
const char *const *remem_profiles(void);
/* The definition of a profile as a JSON object (weights, decay, thresholds),
 * malloc'd: free with remem_free. NULL if unknown. */
char *remem_profile_json(const char *name);

/* ------------------------------------------------------------------ */
/* History, stats, namespaces                                          */
/* ------------------------------------------------------------------ */
/* The history of (ns, id) as a JSON array (oldest first) of
 * {"seq","at","op","actor","before","after"}; *json is malloc'd (remem_free).
 * Works for purged memories too. */
int remem_history(remem *db, const char *ns, const char *id, char **json);

/* Statistics as a JSON object: memories in total and per namespace, per
 * kind and tier, invalidated, expired, models, file size. ns may be NULL
 * for all. *json: remem_free. */
int remem_stats(remem *db, const char *ns, char **json);

/* The namespaces as a JSON array of {"ns","count","model","dim"}.
 * *json: remem_free. */
int remem_namespaces(remem *db, char **json);
/* Delete every memory of a namespace (history keeps one "clear" row).
 * *deleted (may be NULL) receives the count. */
int remem_clear(remem *db, const char *ns, int64_t *deleted);

/* ------------------------------------------------------------------ */
/* Export, import, reindex                                             */
/* ------------------------------------------------------------------ */
/* Write the memories of ns (NULL: all) as JSONL, one object per line, to
 * the callback; with_vectors adds "vector". The callback returns 0 to go
 * on, non-zero to stop (then REMEM_EIO). *count (may be NULL): lines. */
typedef int (*remem_write_fn)(void *ctx, const char *data, size_t len);
int remem_export(remem *db, const char *ns, int with_vectors, remem_write_fn write, void *ctx,
                 int64_t *count);

/* Parse one JSONL line (an object: text required; id, ns, kind, tier,
 * importance, created_at (ms or ISO 8601), expires_at, metadata, links,
 * vector optional) into *m. default_ns is used when the line has no "ns".
 * Strings point into *holder, which the caller frees with remem_free_line
 * after using m. The fields are also checked as remem_add checks them (all
 * but the vector's dimension), so a line that parses is one remem_add takes:
 * REMEM_EPARSE for malformed lines, REMEM_EINVAL (say) for an unknown tier. */
typedef struct remem_line remem_line;
int remem_parse_line(remem *db, const char *line, size_t len, const char *default_ns,
                     remem_memory *m, remem_line **holder);
void remem_free_line(remem_line *holder);

/* Re-embed every memory of ns (NULL: all) with the handle's embedder, in
 * batches, each batch one transaction. progress (may be NULL) is called
 * after each batch with done/total. */
typedef void (*remem_progress_fn)(void *ctx, int64_t done, int64_t total);
int remem_reindex(remem *db, const char *ns, remem_progress_fn progress, void *ctx);

/* ------------------------------------------------------------------ */
/* Utilities                                                           */
/* ------------------------------------------------------------------ */
/* Embed texts with the handle's embedder: out holds n * dim floats. */
int remem_embed(remem *db, const char *const *texts, size_t n, float *out);
/* Parse a time: ISO 8601 ("2023-05-08", "2023-05-08T13:56:00Z"), integer
 * milliseconds, or "now". Returns 0 and sets *ms, or REMEM_EPARSE. */
int remem_parse_time(const char *s, int64_t *ms);
/* Format ms as ISO 8601 UTC ("2023-05-08T13:56:00.000Z") into buf (>= 32). */
void remem_format_time(int64_t ms, char *buf, size_t cap);
/* The current time in ms. */
int64_t remem_now(void);
/* A memory or a hit as a JSON object text (every field; a hit adds "score"
 * and "components"). malloc'd: free with remem_free. NULL when out of
 * memory. The faces (CLI, server, MCP, bindings) all print these, so the
 * shapes match everywhere. */
char *remem_memory_to_json(const remem_memory *m);
char *remem_hit_to_json(const remem_hit *h);
/* A whole result: {"profile","now","candidates","took_ms","hits":[...]}. */
char *remem_result_to_json(const remem_result *r);
/* The answer to a write, in the one shape every face prints (CLI --json,
 * HTTP, MCP structuredContent; docs/server.md "Write answers"):
 *   op "add":        {"id","ns","outcome"}, outcome "added", "upserted" or
 *                    "duplicate" (REMEM_ADDED, _UPSERTED, _DUPLICATE), or
 *                    "accepted" when outcome is 0: the caller may not read
 *                    the namespace, so the answer must not tell whether the
 *                    text was already there (id NULL: "id" left out);
 *   op "update":     {"id","ns","outcome":"updated"};
 *   op "invalidate": {"id","ns","outcome":"invalidated","superseded_by"}
 *                    (superseded_by may be NULL: null);
 *   op "forget":     {"id","ns","outcome":"archived"|"purged","purged"}
 *                    (outcome non-zero: purged).
 * None holds stored content. malloc'd (remem_free); NULL on an unknown op or
 * out of memory. */
char *remem_write_result_json(const char *op, const char *ns, const char *id, int outcome,
                              const char *superseded_by);
/* Free memory returned by remem (JSON strings). */
void remem_free(void *p);

/* ------------------------------------------------------------------ */
/* Local models: all-MiniLM-L6-v2 for the "minilm" embedder            */
/* ------------------------------------------------------------------ */
/* A model folder holds model.safetensors, vocab.txt and config.json; dir
 * NULL means $REMEM_MODEL_DIR, else ~/.cache/remem/models/all-MiniLM-L6-v2.
 * These calls need no store; on failure err (errcap bytes) says why. */

/* Called while a file downloads: bytes done and total (0: not known yet). */
typedef void (*remem_model_progress_fn)(void *ctx, const char *file, int64_t done, int64_t total);

/* Download the three files from {base_url}/{file} (base_url NULL: the
 * model's Hugging Face address; file:// URLs work too) and check each
 * one's sha256 against sha256[i] (files in the order above; sha256 or an
 * entry NULL: the official checksum built into remem). Other checksums are
 * for mirrors of other weights and for tests: such weights are used only
 * when the minilm embedder is asked for, under a model id of their own.
 * All or nothing: files arrive under temporary names and are moved into
 * place only when all three check out, so a failure leaves dir as it was
 * and no partial file behind. Files already installed and verified with
 * the expected checksum are not fetched again. progress may be NULL. */
int remem_model_pull(const char *dir, const char *base_url, const char *const sha256[3],
                     remem_model_progress_fn progress, void *ctx, char *err, size_t errcap);

/* What dir holds, as a JSON object (*json: remem_free):
 *   {"dir", "model", "files": [{"name", "present", "size", "sha256",
 *    "official"}], "installed", "verified", "rehashed", "official",
 *    "test_model", "model_id", "dim", "layers", "heads", "intermediate",
 *    "vocab_size", "note"}
 * sha256 and official appear when known (from the verification marker, or
 * computed). verify = 1 re-hashes every file (a second or so for the real
 * model) and renews or removes the marker accordingly; 0 trusts it. */
int remem_model_info(const char *dir, int verify, char **json, char *err, size_t errcap);

/* The ids the minilm embedder feeds its model for text ([CLS] ... [SEP],
 * at most 256), with their tokens: {"ids": [...], "tokens": [...]}
 * (*json: remem_free). Needs only dir's vocab.txt and config.json. */
int remem_model_tokenize(const char *dir, const char *text, char **json, char *err, size_t errcap);

#ifdef __cplusplus
}
#endif
#endif /* REMEM_H */
