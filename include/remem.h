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
 *   - Errors, one style: every call on a handle that can fail returns an int
 *     status, REMEM_OK (0) or a negative REMEM_E* code, and remem_errmsg(db)
 *     gives the detail of the last failure on that handle ("filter: unknown
 *     operator $regexx at $.kind"); a success clears it. The calls that
 *     need no handle (remem_model_*, remem_parse_time) return the status
 *     too and, having no handle to hold a message, write it into the
 *     caller's err buffer where there is one. The few calls that return a
 *     pointer (remem_*_to_json, remem_profile_json) return NULL on failure;
 *     each says when.
 *   - Each call below lists the statuses it can return ("Returns:"). Two
 *     apply to every call on a handle and are not repeated: REMEM_EINVAL
 *     when db is NULL or its open failed ("the store is not open"), and
 *     REMEM_ENOMEM when memory runs out. Every call that writes (and every
 *     read that must take the store's read lock while another process holds
 *     a write lock for longer) may return REMEM_EBUSY once the busy timeout
 *     (remem_options.busy_timeout_ms, default 10 s) has passed, REMEM_ESTORE
 *     or REMEM_EIO for an SQLite or disk failure, and REMEM_ECORRUPT for a
 *     damaged file: these three are listed as "store errors". A failed write
 *     changes nothing.
 *   - Writes on a handle opened read_only return REMEM_EINVAL ("the store is
 *     open read-only") and change nothing.
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
 * STRUCT SIZES (how a struct can grow without breaking older callers)
 *   The structs a caller fills (remem_options, remem_memory, remem_patch,
 *   remem_query) begin with `size_t size`, and their init functions are the
 *   only supported way to prepare them: remem_query_init(&q) is a macro for
 *   remem_query_init_(&q, sizeof q), which fills the defaults and records
 *   the size the caller's header gave the struct. New fields are only ever
 *   appended. Every call that reads such a struct reads `size` bytes of it
 *   and takes the defaults for the fields beyond: a program compiled
 *   against an older, smaller remem.h keeps working with a newer library,
 *   and the library never reads or writes past the caller's struct (the
 *   init functions write only `size` bytes; remem_parse_line fills only
 *   `size` bytes; remem_add_batch steps through its array at the caller's
 *   size). A size of 0 (a struct never passed to its init function) is
 *   refused with REMEM_EINVAL "remem_query was not initialised with
 *   remem_query_init"; so is a size larger than the library's own (a
 *   program built against a newer remem.h than the library it runs with).
 *   Copying an initialised struct (q2 = q) keeps its size and is fine.
 *   The structs the library fills and the caller only reads (remem_result,
 *   remem_hit, and the remem_memory in them or behind remem_record_memory)
 *   carry the library's sizes (hits[i].mem.size is sizeof remem_memory).
 *   remem_hit and remem_memory are never grown within one soname
 *   (libremem.so.0): the caller indexes the hits array with its own sizeof,
 *   so growing them is a new soname, which an old program does not load.
 *   remem_result, which the library allocates and callers only read
 *   through a pointer (never in arrays), may gain fields at its end: an
 *   older caller does not see them (memory_off came so).
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

/* ------------------------------------------------------------------ */
/* Version and exported names                                          */
/* ------------------------------------------------------------------ */
/* The one place the version is written: the Makefile reads these three
 * lines for remem.pc, and remem_version() returns the library's own at run
 * time (compare it with REMEM_VERSION to catch a header/library mismatch).
 * REMEM_VERSION_NUMBER is MAJOR * 10000 + MINOR * 100 + PATCH, for #if. */
#define REMEM_VERSION_MAJOR 0
#define REMEM_VERSION_MINOR 1
#define REMEM_VERSION_PATCH 0
#define REMEM__STR2(x)      #x
#define REMEM__STR(x)       REMEM__STR2(x)
#define REMEM_VERSION               \
    REMEM__STR(REMEM_VERSION_MAJOR) \
    "." REMEM__STR(REMEM_VERSION_MINOR) "." REMEM__STR(REMEM_VERSION_PATCH)
#define REMEM_VERSION_NUMBER \
    (REMEM_VERSION_MAJOR * 10000 + REMEM_VERSION_MINOR * 100 + REMEM_VERSION_PATCH)

/* libremem is built with -fvisibility=hidden: only the declarations marked
 * REMEM_API (every function in this header, all named remem_*) are exported
 * from libremem.so; the engine's and the parts' internal names are not, so
 * they cannot clash with other libraries in the caller's process
 * (tests/e2e/abi_symbols.sh checks the list). */
#if defined(__GNUC__) || defined(__clang__)
#define REMEM_API __attribute__((visibility("default")))
#else
#define REMEM_API
#endif

/* The version of the library actually loaded ("0.1.0"). Static storage. */
REMEM_API const char *remem_version(void);
/* The same as REMEM_VERSION_NUMBER, for the library actually loaded. */
REMEM_API int remem_version_number(void);

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
    X(REMEM_EUNSUPPORTED, -15, "not supported")                 \
    X(REMEM_ELLM, -16, "language model failed")                 \
    X(REMEM_ETIMEOUT, -17, "deadline passed")

enum remem_status {
#define REMEM__ENUM(name, val, msg) name = val,
    REMEM_STATUS_MAP(REMEM__ENUM)
#undef REMEM__ENUM
};

/* The name of a status code ("REMEM_EFILTER"), or "REMEM_UNKNOWN". Static.
 * These two never fail. */
REMEM_API const char *remem_status_name(int rc);
/* The default one-line message of a status code. Static storage. */
REMEM_API const char *remem_strerror(int rc);

/* ------------------------------------------------------------------ */
/* Opening a store                                                     */
/* ------------------------------------------------------------------ */
typedef struct remem remem; /* opaque handle */

enum remem_durability {
    REMEM_DURABLE_NORMAL = 0, /* WAL, synchronous=NORMAL: survives crashes */
    REMEM_DURABLE_FULL = 1    /* WAL, synchronous=FULL: survives power loss */
};

typedef struct remem_options {
    size_t size; /* set by remem_options_init (see STRUCT SIZES) */
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
    /* The configuration file (docs/config.md): policies per namespace
     * pattern, the LLM endpoint. NULL: $REMEM_CONFIG, else remem.yaml in the
     * store file's folder when there is one, else none (the defaults). A
     * file named here or in $REMEM_CONFIG must exist and parse: remem_open
     * fails with REMEM_EINVAL and the file, line and key otherwise. */
    const char *config_path;
    /* Memory off (seed 004's --no-memory), for comparing an agent's runs
     * with and without memory: recall returns no hits, writes are accepted
     * and dropped (nothing stored), and the answers say "memory": "off".
     * A config policy (memory_off) can switch it on per namespace. */
    int no_memory;
    /* The LLM the lifecycle operations use (rating, consolidation, ...):
     * base URL of an OpenAI-compatible API (".../v1"); requests go to
     * {llm_url}/chat/completions. NULL: $REMEM_LLM_URL; neither: no LLM
     * (each operation uses its named fallback or refuses; docs/llm.md). */
    const char *llm_url;
    const char *llm_model;   /* NULL: $REMEM_LLM_MODEL, else "default" */
    const char *llm_api_key; /* NULL: $REMEM_LLM_API_KEY; neither: no key */
    int llm_timeout_ms;      /* per request; 0: 30000 */
    /* The byte budget of the process's namespace caches, in MB, shared by
     * every handle of the process (the last handle opened with one sets
     * it): least recently used namespaces are evicted whole beyond it,
     * never one a call is using. 0: the config's cache.max_mb, else a
     * quarter of physical memory (at least 64 MB). docs/deploy.md. */
    int cache_mb;
} remem_options;

/* Fill *opt with the defaults and its size. A macro: see STRUCT SIZES. */
#define remem_options_init(opt) remem_options_init_((opt), sizeof *(opt))
REMEM_API void remem_options_init_(remem_options *opt, size_t size);

/*
 * Open (creating if needed) the store at uri: a file path, ":memory:", or
 * a PostgreSQL database as "postgres://user@host:port/db?..." (libpq's
 * URI; docs/deploy.md), whose schema remem creates and migrates too.
 * opt may be NULL for the defaults. On success *out is a new handle (free
 * it with remem_close). On failure *out is a handle too, unless memory ran
 * out (then NULL), so that remem_errmsg(*out) can say why; close it.
 * Creates the file and its schema (or migrates an older schema) unless
 * read_only; loads the MiniLM weights when that embedder is chosen.
 * Returns: REMEM_OK; REMEM_EINVAL (no uri, opt not initialised, an unknown
 * embedder, the http embedder without a URL, a configuration file
 * (config_path, $REMEM_CONFIG, remem.yaml beside the store) that is missing
 * or wrong: the message names the file, the line and the key); REMEM_EUNSUPPORTED
 * (a scheme not built in); REMEM_ECORRUPT (not a remem store,
 * a schema newer than this library, a broken model folder); REMEM_EIO (the
 * file or model cannot be read or created); REMEM_EEMBED (the embedder
 * cannot start); REMEM_ENOTFOUND (minilm asked for and not installed);
 * store errors (REMEM_EBUSY while another process migrates the schema, or
 * while PostgreSQL is unreachable).
 */
REMEM_API int remem_open(const char *uri, const remem_options *opt, remem **out);
/* Close the handle and free everything it holds (results and records
 * obtained from it stay valid: they own their memory). NULL is fine. */
REMEM_API void remem_close(remem *db);
/* Detail of the last failure on db (or "" after a success). Valid until the
 * next call on db. db may be NULL ("out of memory"). */
REMEM_API const char *remem_errmsg(const remem *db);
/* Name, model id and dimension of the handle's embedder. Valid until close;
 * "" and 0 on a handle whose open failed. Never fail. */
REMEM_API const char *remem_embedder_name(const remem *db);
REMEM_API const char *remem_embedder_model(const remem *db);
REMEM_API int remem_embedder_dim(const remem *db);
/* Why "auto" chose the embedder it did (one line), or "". */
REMEM_API const char *remem_embedder_note(const remem *db);

/* ------------------------------------------------------------------ */
/* The memory record                                                   */
/* ------------------------------------------------------------------ */
typedef struct remem_memory {
    size_t size;                     /* set by remem_memory_init (see STRUCT SIZES) */
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

/* Zero *m, set importance to -1 (= kind default) and its size. A macro:
 * see STRUCT SIZES. */
#define remem_memory_init(m) remem_memory_init_((m), sizeof *(m))
REMEM_API void remem_memory_init_(remem_memory *m, size_t size);

/* A record owned by the library (from remem_get). remem_record_memory's
 * pointer and every string in it stay valid until remem_record_free. */
typedef struct remem_record remem_record;
REMEM_API const remem_memory *remem_record_memory(const remem_record *r);
REMEM_API void remem_record_free(remem_record *r);

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */
enum remem_add_outcome {
    REMEM_ADDED = 1,     /* a new row */
    REMEM_UPSERTED = 2,  /* an existing caller id was replaced */
    REMEM_DUPLICATE = 3, /* same normalised text in the namespace: the
                            existing row's duplicate_count was bumped */
    REMEM_DROPPED = 4    /* memory is off for the namespace (remem_options
                            no_memory, or its policy's memory_off): accepted,
                            nothing written, no id */
};

/*
 * Add one memory. The embedder runs unless m->vector is given (it is then
 * scaled to unit length). id_out (may be NULL) receives the memory's id
 * (generated or the existing duplicate's), NUL-terminated, truncated to
 * id_cap bytes; 64 bytes always suffice for generated ids. outcome (may be
 * NULL) receives an enum remem_add_outcome.
 * Side effects: one transaction with one history row ("add", "update" for
 * an upsert, "duplicate" for a fold); the first vector written to a
 * namespace records the handle's model as the namespace's.
 * Returns: REMEM_OK; REMEM_EINVAL (m not initialised; ns or text empty; an
 * id, ns or kind too long; an unknown tier; importance above 1 or NaN;
 * expires_at negative; read-only); REMEM_EPARSE (metadata not a JSON
 * object, links not a JSON array of ids); REMEM_EDIM (m->dim is not the
 * embedder's); REMEM_EMODEL (the namespace holds another model's vectors);
 * REMEM_EEMBED (the embedder failed: nothing written; the http embedder's
 * REMEM_EDIM when its endpoint changes dimension); store errors.
 */
REMEM_API int remem_add(remem *db, const remem_memory *m, char *id_out, size_t id_cap,
                        int *outcome);

/*
 * Add n memories in one transaction: all or none. ids (may be NULL) is an
 * array of n buffers of id_cap bytes each, filled as remem_add does.
 * Every element of ms must have been initialised (all with one size: the
 * array is walked at that stride). Every memory is checked and embedded
 * before the transaction starts, so a slow embedder never holds the lock.
 * On failure *failed_index (may be NULL) is the index of the memory at fault
 * (or -1 when no single memory is), and nothing was written.
 * Returns: those of remem_add, the message prefixed "memory I: " when n > 1.
 */
REMEM_API int remem_add_batch(remem *db, const remem_memory *ms, size_t n, char *ids, size_t id_cap,
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
/* A change to a memory: set the bits of `fields` whose values apply. */
typedef struct remem_patch {
    size_t size;     /* set by remem_patch_init (see STRUCT SIZES) */
    unsigned fields; /* which of the values below apply */
    const char *text, *kind, *tier, *metadata, *links;
    double importance;
    int64_t expires_at;
    const char *actor; /* who made the change, for history; may be NULL */
} remem_patch;

/* Zero *p (no fields) and set its size. A macro: see STRUCT SIZES. */
#define remem_patch_init(p) remem_patch_init_((p), sizeof *(p))
REMEM_API void remem_patch_init_(remem_patch *p, size_t size);

/* Change the memory (ns, id). ns may be NULL when the id is unique across
 * namespaces. A new text is embedded again (outside the transaction).
 * Side effects: one transaction; a history row with before and after, op
 * "update", or "migrate" / "archive" / "restore" for a tier change.
 * Returns: REMEM_OK; REMEM_EINVAL (p not initialised, no fields, no id, a
 * value remem_add would refuse, read-only); REMEM_EPARSE (metadata, links);
 * REMEM_ENOTFOUND; REMEM_EAMBIGUOUS (ns NULL and the id in several
 * namespaces); REMEM_EEMBED; REMEM_EMODEL (a new text in a namespace of
 * another model); store errors. */
REMEM_API int remem_update(remem *db, const char *ns, const char *id, const remem_patch *p);
/* Hide (ns, id) from recall and keep it; superseded_by (may be NULL) names
 * the memory that replaces it; reason (may be NULL) is the history row's
 * actor. One transaction; a history row "invalidate".
 * Returns: REMEM_OK; REMEM_EINVAL (no id, read-only); REMEM_ENOTFOUND;
 * REMEM_EAMBIGUOUS; store errors. */
REMEM_API int remem_invalidate(remem *db, const char *ns, const char *id, const char *superseded_by,
                               const char *reason);
/* Delete (ns, id). With purge = 0 it moves to tier "archived" (out of
 * recall, restorable with remem_update; history row "archive"); with
 * purge = 1 the row and its vector are deleted, its text is scrubbed from
 * the earlier history rows, and history keeps a row "delete" without the
 * text.
 * Returns: REMEM_OK; REMEM_EINVAL (no id, read-only); REMEM_ENOTFOUND;
 * REMEM_EAMBIGUOUS; store errors. A purge whose row is deleted but whose
 * scrub of the store's files then fails returns the store error with a message that
 * says so: run it again. */
REMEM_API int remem_forget(remem *db, const char *ns, const char *id, int purge);

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */
/* Fetch (ns, id); ns may be NULL as for remem_update. *out: free with
 * remem_record_free (NULL on failure). Does not touch the memory
 * (accessed_at and access_count stay). The record has no vector.
 * Returns: REMEM_OK; REMEM_EINVAL (no id); REMEM_ENOTFOUND;
 * REMEM_EAMBIGUOUS; store errors. */
REMEM_API int remem_get(remem *db, const char *ns, const char *id, remem_record **out);

/* The longest query text remem_recall takes, in bytes (REMEM_EINVAL
 * beyond): 4 MiB, so that a whole conversation can be the query. No text
 * makes a recall slow: both lanes read its first REMEM_QUERY_HEAD_MAX
 * bytes (cut where a character starts): the embedder embeds them (MiniLM
 * itself reads at most 256 word pieces), and the lexical lane keeps the 64
 * rarest of their distinct terms, each counted once. */
#define REMEM_QUERY_TEXT_MAX (4 << 20)
#define REMEM_QUERY_HEAD_MAX 32768

/* A query. remem_query_init sets every override to "use the profile". */
typedef struct remem_query {
    size_t size;         /* set by remem_query_init (see STRUCT SIZES) */
    const char *text;    /* query text (embedded and used for BM25), at most
                            REMEM_QUERY_TEXT_MAX bytes */
    const float *vector; /* or a vector (then no lexical lane unless text) */
    int dim;
    const char *const *namespaces; /* at least one */
    size_t n_namespaces;
    const char *filter;  /* Chroma-style JSON filter, or NULL */
    const char *profile; /* NULL: "default" */
    int k;               /* <= 0: the profile's */
    /* Overrides; NaN (or -1 for the ints) means "the profile's value".
     * remem_recall refuses (REMEM_EINVAL) values outside the bounds listed
     * at remem_query_parse below: k <= 1000, weights in [0, 1e6], ... */
    double w_relevance, w_lexical, w_recency, w_importance;
    double min_similarity, min_score;
    double recency_base;    /* k of k^hours, e.g. 0.995 */
    double half_life_hours; /* > 0 selects half-life decay */
    int normalize;          /* min-max normalise components: 0/1 */
    int candidates;         /* candidates per lane */
    const char *tiers;      /* comma list in priority order, or NULL */
    int64_t now;            /* 0: the clock. Given, the query is a replay
                               at that time: memories created after it
                               are left out, in every profile */
    int no_touch;           /* 1: do not update accessed_at/access_count */
    int include_invalid;    /* 1: also invalidated and expired memories */
    double w_context;       /* weight of the temporal-context component */
} remem_query;

/* A macro: see STRUCT SIZES. */
#define remem_query_init(q) remem_query_init_((q), sizeof *(q))
REMEM_API void remem_query_init_(remem_query *q, size_t size);

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
    unsigned lanes;    /* bit 0: vector candidate; bit 1: lexical; bit 2:
                          entity; bit 3: a stream neighbour of one of the
                          best lexical hits (lanes that brought it) */
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
    /* 1: memory is off for every namespace of the query (no hits, by
     * choice); 2: off for some of them, which were left out. 0: on.
     * (Appended: a caller built before it never reads it.) */
    int memory_off;
    /* entity[i]: hit i's entity component in [0,1] (the BM25 of the
     * entities it shares with the query, over the best among the
     * candidates; docs/retrieval.md), which its score counts with the
     * profile's entity weight; NULL when the profile has no entity lane.
     * remem_hit cannot grow within this soname, so it lives here. */
    const double *entity;
} remem_result;

/* Run a query. *out: free with remem_result_free (NULL on failure); every
 * pointer inside it (hits, their memories' strings, profile) stays valid
 * until then. The hits' memories carry no vector.
 * Side effects: the returned memories are touched (accessed_at = now,
 * access_count + 1) unless q->no_touch or the handle is read-only; the
 * touch is a small transaction of its own and best effort: when the store
 * is busy the recall still succeeds, untouched. The first recall of a
 * namespace loads its vectors into memory (held until close; another
 * process's writes are caught up on the next call).
 * Returns: REMEM_OK; REMEM_EINVAL (q not initialised, no namespaces, an
 * empty namespace name, neither text nor vector, k above 1000, a bad tier
 * list); REMEM_EDIM (the vector's dimension); REMEM_EPROFILE; REMEM_EFILTER
 * (the message names the offending part); REMEM_EMODEL (a namespace of
 * another model); REMEM_EEMBED (embedding the text); store errors. A
 * namespace that does not exist is not an error: it has no hits. */
REMEM_API int remem_recall(remem *db, const remem_query *q, remem_result **out);
REMEM_API void remem_result_free(remem_result *r);

/* The names of the built-in profiles, NULL-terminated. Static; never fails. */
REMEM_API const char *const *remem_profiles(void);
/* The definition of a profile as a JSON object (weights, decay, thresholds),
 * malloc'd: free with remem_free. NULL if unknown (or out of memory). */
REMEM_API char *remem_profile_json(const char *name);

/* ------------------------------------------------------------------ */
/* Recall queries as JSON: the one parser every face uses              */
/* ------------------------------------------------------------------ */
/*
 * HTTP (POST /v1/recall), MCP (the recall tool), the CLI (remem recall)
 * and the Python binding all hand the query to this parser, so they accept
 * and refuse the same queries with the same messages. The JSON object:
 *
 *   "namespaces"   required: an array of non-empty names (or one name)
 *   "text"         the query text; "vector" an array of numbers; one of
 *                  the two is required
 *   "filter"       a Chroma-style filter object (or its JSON text)
 *   "profile"      a profile name (NULL/absent: "default")
 *   "k"            an integer in [1, 1000]
 *   "w_relevance", "w_lexical", "w_recency", "w_importance", "w_context"
 *                  finite numbers in [0, 1000000]
 *   "min_similarity", "min_score"   finite numbers
 *   "recency_base" in (0, 1]; "half_life_hours" in (0, 10^7]
 *   "candidates"   an integer in [1, 100000]
 *   "normalize", "touch", "include_invalid"   true or false
 *   "tiers"        an array of tier names (or a comma-separated string)
 *   "now"          integer milliseconds or a time remem_parse_time reads
 *
 * null for any field means "absent". Any other field is refused. Every
 * error message starts with the field it is about: "k: 1001 is above the
 * limit of 1000", "now: \"2023-02-31\" is not a valid time (February 2023
 * has 28 days)", "frobnicate: unknown field (known: namespaces, text,
 * ...)". The numeric rules are also enforced by remem_recall for a
 * remem_query filled in C, with the same messages. What the parser leaves
 * to remem_recall: whether the profile exists, the filter's contents, the
 * tier names and the vector's dimension (they need the engine), reported
 * with the same "field: ..." style.
 */

/* A parsed recall query: the remem_query and the strings and arrays it
 * points into, owned together. */
typedef struct remem_query_json remem_query_json;

/*
 * Parse json (len bytes, not necessarily NUL-terminated) into *out. Needs
 * no store, so a server can parse (and check the caller's rights on the
 * namespaces) before it picks a handle.
 *   REMEM_OK      *out is a new parsed query: free with remem_query_json_free
 *   REMEM_EPARSE  not JSON, or not a JSON object
 *   REMEM_EINVAL  a field is unknown, of the wrong type, out of range, or a
 *                 required one is missing
 *   REMEM_ENOMEM  out of memory
 * On failure *out is NULL and err (errcap bytes; may be NULL/0) holds the
 * message. Side effects: none ("now": "now" reads the clock once, here).
 */
REMEM_API int remem_query_parse(const char *json, size_t len, remem_query_json **out, char *err,
                                size_t errcap);
/* The query inside p, for remem_recall. Its pointers stay valid until
 * remem_query_json_free(p); do not free them. p must not be NULL. */
REMEM_API const remem_query *remem_query_json_get(const remem_query_json *p);
/* Free a parsed query. NULL is fine. */
REMEM_API void remem_query_json_free(remem_query_json *p);

/*
 * Parse, recall and render in one call: *result_json is the text of
 * remem_result_to_json (malloc'd: remem_free) on REMEM_OK, else NULL and
 * remem_errmsg(db) says why. Returns what remem_query_parse and
 * remem_recall return. Side effects: those of remem_recall (the returned
 * memories are touched unless "touch": false).
 */
REMEM_API int remem_recall_json(remem *db, const char *json, size_t len, char **result_json);

/*
 * remem_parse_time for a named field: on failure err holds the message
 * every face prints for a bad time, `FIELD: "VALUE" is not a valid time
 * (WHY)` (WHY such as "February 2023 has 28 days"). REMEM_OK or
 * REMEM_EPARSE. No side effects.
 */
REMEM_API int remem_parse_time_field(const char *field, const char *s, int64_t *ms, char *err,
                                     size_t errcap);

/* ------------------------------------------------------------------ */
/* History, stats, namespaces                                          */
/* ------------------------------------------------------------------ */
/* The history of (ns, id) as a JSON array (oldest first) of
 * {"seq","at","op","actor","before","after"}; *json is malloc'd (remem_free).
 * Works for purged memories too. Reads only.
 * Returns: REMEM_OK; REMEM_EINVAL (no id); REMEM_ENOTFOUND (no history);
 * REMEM_EAMBIGUOUS; store errors. */
REMEM_API int remem_history(remem *db, const char *ns, const char *id, char **json);

/* Statistics as a JSON object: memories in total and per namespace, per
 * kind and tier, invalidated, expired, models, file size. ns may be NULL
 * for all. With ns, when this handle holds the namespace in memory (a
 * recall loaded it), "cache" says what that costs: {"rows",
 * "vector_bytes" (the float32 rows), "lexical_bytes", "lexical_postings",
 * "lexical_bytes_per_memory"}. *json: remem_free. Reads only.
 * Returns: REMEM_OK; REMEM_EINVAL for an empty namespace or one longer
 * than 256 bytes; store errors. */
REMEM_API int remem_stats(remem *db, const char *ns, char **json);

/* The namespaces as a JSON array of {"ns","count","model","dim"}.
 * *json: remem_free. Reads only. Returns: REMEM_OK; store errors. */
REMEM_API int remem_namespaces(remem *db, char **json);
/* Delete every memory of a namespace (history keeps one "clear" row), in
 * one transaction. *deleted (may be NULL) receives the count.
 * Returns: REMEM_OK; REMEM_EINVAL (ns empty or too long, read-only); store
 * errors. */
REMEM_API int remem_clear(remem *db, const char *ns, int64_t *deleted);

/* ------------------------------------------------------------------ */
/* Export, import, reindex                                             */
/* ------------------------------------------------------------------ */
/* Write the memories of ns (NULL: all) as JSONL, one object per line, to
 * the callback; with_vectors adds "vector". The callback returns 0 to go
 * on, non-zero to stop (then REMEM_EIO). *count (may be NULL): lines. data
 * is valid only during the callback. Reads only, in one read transaction
 * (a consistent snapshot). Returns: REMEM_OK; REMEM_EIO; store errors. */
typedef int (*remem_write_fn)(void *ctx, const char *data, size_t len);
REMEM_API int remem_export(remem *db, const char *ns, int with_vectors, remem_write_fn write,
                           void *ctx, int64_t *count);

/* Copy every namespace of db's store (memories with their vectors and
 * models, and history) into the store dst_uri names (any backend: SQLite
 * to PostgreSQL and back). One destination transaction per namespace;
 * namespaces the destination already holds with the same content are
 * skipped, so an interrupted copy resumes by running it again; one it
 * holds with other content is refused. Each namespace is verified after
 * its commit by counts and checksums read back from the destination.
 * *json (malloc'd: remem_free; may be NULL): {"namespaces":[{"ns",
 * "memories","history","skipped","checksum"}],"copied","skipped",
 * "memories","history","checksum","text"}. Copy a store nobody writes to.
 * Returns: REMEM_OK; REMEM_EINVAL (no destination, the same store, a
 * destination namespace with other content); REMEM_ESTORE (verification
 * failed); store errors of either store. */
REMEM_API int remem_copy(remem *db, const char *dst_uri, char **json);

/* Parse one JSONL line (an object: text required; id, ns, kind, tier,
 * importance, created_at (ms or ISO 8601), expires_at, metadata, links,
 * vector optional) into *m. default_ns is used when the line has no "ns".
 * Strings point into *holder, which the caller frees with remem_free_line
 * after using m. The fields are also checked as remem_add checks them (all
 * but the vector's dimension), so a line that parses is one remem_add takes:
 * REMEM_EPARSE for malformed lines, REMEM_EINVAL (say) for an unknown tier.
 * *m must have been initialised (remem_memory_init): it is filled up to its
 * size. *holder is NULL on failure. Touches no store.
 * Returns: REMEM_OK; REMEM_EPARSE; REMEM_EINVAL (db NULL, m not
 * initialised, a field remem_add would refuse). */
typedef struct remem_line remem_line;
REMEM_API int remem_parse_line(remem *db, const char *line, size_t len, const char *default_ns,
                               remem_memory *m, remem_line **holder);
REMEM_API void remem_free_line(remem_line *holder);

/* Re-embed every memory of ns (NULL: every namespace) with the handle's
 * embedder. A namespace is embedded in batches of 256 (progress, may be
 * NULL, is called after each with done/total), then written in one
 * transaction with its new model and a history row "reindex" (id "*"), so
 * it is never half in one model; namespaces are done one after another.
 * Returns: REMEM_OK; REMEM_EINVAL (read-only); REMEM_EEMBED; store errors.
 * On failure the namespaces already done stay reindexed. */
typedef void (*remem_progress_fn)(void *ctx, int64_t done, int64_t total);
REMEM_API int remem_reindex(remem *db, const char *ns, remem_progress_fn progress, void *ctx);

/* ------------------------------------------------------------------ */
/* Utilities                                                           */
/* ------------------------------------------------------------------ */
/* Embed texts with the handle's embedder: out holds n * dim floats. Touches
 * no store. Returns: REMEM_OK; REMEM_EEMBED (the embedder failed: the http
 * endpoint down after its retries, a model error); REMEM_EDIM (the http
 * endpoint answered with another dimension than before). */
REMEM_API int remem_embed(remem *db, const char *const *texts, size_t n, float *out);
/* Parse a time: ISO 8601 ("2023-05-08", "2023-05-08T13:56:00Z", offsets
 * "+02:00", fractions), integer milliseconds, or "now". Strict: an
 * impossible date ("2023-02-31", month 13, hour 25) is refused, never
 * rolled over. Returns 0 and sets *ms, or REMEM_EPARSE (*ms untouched; no
 * handle: no message, remem_parse_time_field gives one). */
REMEM_API int remem_parse_time(const char *s, int64_t *ms);
/* Format ms as ISO 8601 UTC ("2023-05-08T13:56:00.000Z") into buf (>= 32).
 * Never fails. */
REMEM_API void remem_format_time(int64_t ms, char *buf, size_t cap);
/* The current time in ms. */
REMEM_API int64_t remem_now(void);
/* A memory or a hit as a JSON object text (every field; a hit adds "score"
 * and "components"). malloc'd: free with remem_free. NULL when out of
 * memory or when m (or a hit's mem) was never initialised (STRUCT SIZES).
 * The faces (CLI, server, MCP, bindings) all print these, so the shapes
 * match everywhere. */
REMEM_API char *remem_memory_to_json(const remem_memory *m);
REMEM_API char *remem_hit_to_json(const remem_hit *h);
/* A whole result: {"profile","now","candidates","took_ms","hits":[...]},
 * plus "memory": "off" (or "partly off") when memory_off says so. */
REMEM_API char *remem_result_to_json(const remem_result *r);
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
 *                    (outcome non-zero: purged);
 *   any op with outcome REMEM_DROPPED: {"id","ns","outcome":"dropped",
 *                    "memory":"off"} (memory is off: nothing was written).
 * None holds stored content. malloc'd (remem_free); NULL on an unknown op or
 * out of memory. */
REMEM_API char *remem_write_result_json(const char *op, const char *ns, const char *id, int outcome,
                                        const char *superseded_by);
/* 1 when memory is off for ns on this handle (remem_options.no_memory, or
 * the config policy of ns says memory_off), else 0 (also for db NULL).
 * Then remem_add and remem_add_batch store nothing (outcome REMEM_DROPPED),
 * remem_update, remem_invalidate, remem_forget and remem_clear change
 * nothing and return REMEM_OK, and remem_recall returns no hits from ns:
 * the faces check it to answer "dropped". Never fails. */
REMEM_API int remem_memory_off(remem *db, const char *ns);
/* A setting of the configuration file that a face acts on, by its dotted
 * key: "mcp.tools" (the MCP tool groups to offer) and "serve.ui" ("true" or
 * "false": remem serve's inspector page; docs/config.md). Returns its text as written, or NULL when the file does
 * not set it, the key is unknown, or db is NULL. Valid until remem_close. */
REMEM_API const char *remem_setting(remem *db, const char *key);
/* Free memory returned by remem (JSON strings). */
REMEM_API void remem_free(void *p);

/* ------------------------------------------------------------------ */
/* Operations: the lifecycle, experience, lessons and maintenance     */
/* ------------------------------------------------------------------ */
/*
 * Every operation beyond the store's own calls (rating, reflection,
 * migration, summaries, planning, prompt rendering, decisions, feedback,
 * lessons, episodes, pruning, archive...) is one JSON-in, JSON-out call
 * named by a dotted name ("rate", "decision.add", "lesson.hints"). The
 * table below is the one list of them: the CLI turns its flags into the
 * arguments (`remem decision add --ns N --title T` is "decision.add"), the
 * server answers POST /v1/<name with '.' as '/'>, MCP offers one tool per
 * operation (<name with '.' as '_'>) in the tool groups a server is started
 * with (remem_op_info.group), and the Python binding has a method for each. So every operation exists on every face, with the same
 * arguments, checks and answers.
 *
 * Arguments are a JSON object checked against the operation's schema
 * before anything runs (an unknown key, a wrong type or a missing required
 * key is REMEM_EINVAL naming it). "ns" names the namespace the operation
 * works in (the server checks the key's scope against it); an operation
 * without "ns" needs an admin key. The answer is a JSON object; when it has
 * a "text" string the CLI prints that without --json. Answers of
 * operations that could use an LLM say what they did: "llm" {"model",
 * "prompt_tokens", "completion_tokens"} when one answered, or "fallback"
 * naming the deterministic method used instead.
 */
typedef struct remem_op_info {
    const char *name;    /* "decision.add" */
    const char *right;   /* what an API key needs: "read", "write", "read+write"
                            (a write whose answer shows stored content) or
                            "admin" */
    const char *summary; /* one line, for --help, MCP and the API description */
    const char *schema;  /* JSON Schema of the arguments (an object); besides
                            the standard keywords, "x-positional": [names]
                            lists the properties the CLI takes as positional
                            arguments, "x-file": true on a property makes
                            the CLI read that argument as a JSON file, and
                            "x-local": true marks an argument that names a
                            file or folder of this machine (an archive
                            folder, a store file): accepted from the C API
                            and the CLI, refused by remem_call_ex with
                            REMEM_CALL_REMOTE (the server, MCP);
                            "x-advanced": true leaves a property out of
                            the MCP tool's inputSchema (the call still
                            takes it: it is there for programs, and a
                            model's tool list stays short) */
    unsigned hints;      /* REMEM_OP_* bits below: what a call does to the
                            store, for clients that ask before calling
                            (MCP's tool annotations) */
    const char *group;   /* the set it belongs to: "core" (the few a model
                            needs to remember and recall: MCP's default
                            tools), "memory", "lifecycle", "lessons",
                            "experience", "episodes" or "admin" (store
                            upkeep, benchmarks: never offered by default) */
} remem_op_info;
/* remem_op_info.hints. An operation without REMEM_OP_READ_ONLY writes. */
#define REMEM_OP_READ_ONLY 1u   /* changes no memory (recall may still note
                                   that a memory was read) */
#define REMEM_OP_DESTRUCTIVE 2u /* may overwrite, archive or delete what is
                                   stored, not only add to it */
#define REMEM_OP_IDEMPOTENT 4u  /* a second call with the same arguments
                                   changes nothing more */
/* The operations, in a fixed order; *n receives their count. Never fails. */
REMEM_API const remem_op_info *remem_ops(size_t *n);
/* The operation called name, or NULL. */
REMEM_API const remem_op_info *remem_op_find(const char *name);
/* Run operation op with the arguments args (a JSON object text of len
 * bytes). *out: the answer (remem_free), NULL on failure.
 * Returns: REMEM_OK; REMEM_ENOTFOUND (no such operation, or what it names
 * does not exist); REMEM_EPARSE (args not JSON); REMEM_EINVAL (arguments
 * that do not fit the schema, or that the operation refuses); the
 * operation's own statuses (REMEM_EEMBED, REMEM_EUNSUPPORTED for an
 * operation that needs an LLM when none is configured, store errors). On
 * failure nothing is written. */
REMEM_API int remem_call(remem *db, const char *op, const char *args, size_t len, char **out);
/* Who is calling, for remem_call_ex. */
enum remem_call_flags {
    /* The arguments come from a remote client (HTTP, MCP): an argument the
     * schema marks "x-local" (a path on this machine) is refused with
     * REMEM_EINVAL naming it. File locations then come only from the
     * configuration of the process that owns the store. */
    REMEM_CALL_REMOTE = 1
};
/* remem_call with flags (enum remem_call_flags, or 0: remem_call); other
 * bits are refused with REMEM_EINVAL. */
REMEM_API int remem_call_ex(remem *db, const char *op, const char *args, size_t len, unsigned flags,
                            char **out);

/* The LLM's token counts per operation, as a JSON object (*json: remem_free):
 *   {"model": "...", "url": "..." (null when no LLM is configured),
 *    "ops": {"rate": {"calls": 3, "prompt_tokens": 310,
 *                     "completion_tokens": 42}, ...}}
 * db NULL: the totals of every handle of this process (what a server's
 * /metrics shows; "model" and "url" are then null); else the handle's own.
 * Calls that failed count nothing. Returns REMEM_OK or REMEM_ENOMEM. */
REMEM_API int remem_llm_usage(remem *db, char **json);

/* The auto-rate policy (a namespace's auto_rate, docs/llm.md): remem_add of
 * a memory without an importance asks the LLM to rate it (seed 001's
 * prompt) before writing it, so the add waits for the model. A server that
 * must answer at once sets fn on its handles instead: remem_add then writes
 * the memory with the kind's default importance and, after the commit,
 * calls fn(ctx, ns, id) (strings valid during the call only), and the
 * server rates it later, e.g. with remem_call(db2, "rate", {"ns","id"}) on
 * another handle in another thread. fn NULL: rate in remem_add again.
 * fn must not call back into db. No side effects on the store. */
typedef void (*remem_rate_later_fn)(void *ctx, const char *ns, const char *id);
REMEM_API void remem_set_rate_later(remem *db, remem_rate_later_fn fn, void *ctx);
/* Bound the network work of the calls that follow on db: every request to
 * the LLM (and to the http embedder) that they make must end within ms
 * milliseconds from now, all tries and waits between them included. A
 * request still unanswered then is cut, and the call fails with
 * REMEM_ETIMEOUT, its message naming the operation ("rate: llm: POST URL:
 * no answer within the caller's deadline after 1 try"); as with any LLM
 * failure the operation writes nothing. An add whose embedding is cut is
 * stored without its vector, as in an embedder outage, and embedded later
 * ("pending.embed", docs/maintenance.md). ms 0 removes the bound; each
 * call replaces the last, and also clears a remem_interrupt. For servers,
 * which give each request its own bound. Never fails; db NULL is ignored. */
REMEM_API void remem_set_deadline(remem *db, int64_t ms);
/* From any thread: cut the LLM or embedder request db is waiting on, and
 * any it would start, as if its deadline had passed (REMEM_ETIMEOUT, "...
 * interrupted"), until the next remem_set_deadline. Only the network wait
 * is cut: store work under way finishes. For a server shutting down. Never
 * fails; db NULL is ignored. */
REMEM_API void remem_interrupt(remem *db);
/* The lesson validation gate's retry counters in this process (the
 * "lesson.validate" operation with a run: seed 002's same-step retry cap):
 * *attempts counts invalid inputs answered "retry" (regenerate, same
 * step), *capped the ones past the cap, answered "reflect". Either pointer
 * may be NULL. They only grow; the server shows them in /metrics as
 * tool_validation_retry_attempts and tool_validation_retry_capped_events.
 * Never fails. */
REMEM_API void remem_validation_counters(uint64_t *attempts, uint64_t *capped);
/* Telemetry (docs/telemetry.md): the process's OpenTelemetry exporter
 * counts and the metrics remem keeps, as one JSON object (free with
 * remem_free): {"enabled": spans are exported (OTEL_EXPORTER_OTLP_ENDPOINT
 * set), "spans": {"started","exported","dropped","dropped_queue_full",
 * "dropped_export_failed","exports_failed","queued","queue_capacity"},
 * "metrics": [{"name","kind":"counter"|"gauge"|"histogram","unit",
 * "description", "value" (counter, gauge) or "bounds","buckets","count",
 * "sum" (histogram)}]}. The metrics are kept with or without an endpoint;
 * the server's /metrics shows them. Returns REMEM_OK or REMEM_ENOMEM. */
REMEM_API int remem_telemetry_stats(char **json);
/* Sends the spans queued so far and waits for the exporter (at most the
 * export timeout, OTEL_EXPORTER_OTLP_TIMEOUT); done at exit too. Nothing
 * when telemetry is off. */
REMEM_API void remem_telemetry_flush(void);

/* ------------------------------------------------------------------ */
/* Local models: all-MiniLM-L6-v2 for the "minilm" embedder            */
/* ------------------------------------------------------------------ */
/* A model folder holds model.safetensors, vocab.txt and config.json; dir
 * NULL means $REMEM_MODEL_DIR, else ~/.cache/remem/models/all-MiniLM-L6-v2.
 * These calls need no store; on failure err (errcap bytes, may be NULL)
 * says why: they have no handle for remem_errmsg (CONVENTIONS). */

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
 * the expected checksum are not fetched again. progress may be NULL.
 * Returns: REMEM_OK; REMEM_EINVAL (a bad checksum or URL); REMEM_EIO (the
 * download or a write failed, e.g. no network); REMEM_ECORRUPT (a file
 * does not match its checksum); REMEM_ENOMEM. */
REMEM_API int remem_model_pull(const char *dir, const char *base_url, const char *const sha256[3],
                               remem_model_progress_fn progress, void *ctx, char *err,
                               size_t errcap);

/* What dir holds, as a JSON object (*json: remem_free):
 *   {"dir", "model", "files": [{"name", "present", "size", "sha256",
 *    "official"}], "installed", "verified", "rehashed", "official",
 *    "test_model", "model_id", "dim", "layers", "heads", "intermediate",
 *    "vocab_size", "note"}
 * sha256 and official appear when known (from the verification marker, or
 * computed). verify = 1 re-hashes every file (a second or so for the real
 * model) and renews or removes the marker accordingly; 0 trusts it.
 * Returns: REMEM_OK (also for a folder with nothing installed: see
 * "installed"); REMEM_EINVAL (json NULL); REMEM_EIO; REMEM_ENOMEM. */
REMEM_API int remem_model_info(const char *dir, int verify, char **json, char *err, size_t errcap);

/* The ids the minilm embedder feeds its model for text ([CLS] ... [SEP],
 * at most 256), with their tokens: {"ids": [...], "tokens": [...]}
 * (*json: remem_free). Needs only dir's vocab.txt and config.json.
 * Returns: REMEM_OK; REMEM_EINVAL (json or text NULL); REMEM_ENOTFOUND or
 * REMEM_EIO (no vocabulary); REMEM_ECORRUPT (an unreadable one);
 * REMEM_ENOMEM. */
REMEM_API int remem_model_tokenize(const char *dir, const char *text, char **json, char *err,
                                   size_t errcap);

#ifdef __cplusplus
}
#endif
#endif /* REMEM_H */
