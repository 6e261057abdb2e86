/*
 * serverInt.h: what the files of remem serve share. The server is cut along
 * the path a request takes:
 *
 *   http.c     libmicrohttpd glue: the daemon and its thread pool, reading
 *              bodies under the size limit, framing, Content-Type and key
 *              checks, draining on SIGINT/SIGTERM.
 *   routes.c   the path matcher and the dispatch.
 *   route_table.c  the route table (data: routes.c matches against it,
 *              metrics.c names counters after it).
 *   export.c   export streamed through a pipe.
 *   mcp_route.c  the /mcp transport (sessions, around mcp_handle).
 *   routes_memories.c, routes_recall.c, routes_namespaces.c,
 *   routes_admin.c
 *              the handlers, by resource: JSON in, a remem call on a
 *              pooled handle, JSON out.
 *   reply.c    what the handlers share: JSON replies and errors, access
 *              checks, body and query-string readers, the visible
 *              namespaces.
 *
 * Calls go one way, down this list's reverse: http.c -> routes.c ->
 * handlers -> reply.c, export.c, mcp_route.c, metrics.c, route_table.c
 * (scripts/check_cycles.py checks it).
 *   keys.c     API keys: the keys file, SHA-256 of secrets, namespace globs.
 *   pool.c     remem handles checked out per request (a handle is used by
 *              one thread at a time; they all open the same store).
 *   work.c     the worker threads that run handlers, and their bounded
 *              queue (http.c hands them each request's work).
 *   metrics.c  Prometheus counters and latency histograms.
 *   openapi.c  docs/openapi.json, embedded into the binary at build time.
 *   ui.c       the inspector's page (/ui), embedded the same way.
 *
 * Only server.h is seen from outside (cli/cmd_serve.c).
 */
#ifndef REMEM_SERVER_INT_H
#define REMEM_SERVER_INT_H

#include <jansson.h>
#include <stdio.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include "remem.h"
#include "server.h"

/* ------------------------------------------------------------------ */
/* Keys (keys.c)                                                       */
/* ------------------------------------------------------------------ */
typedef struct api_key {
    char *name;
    unsigned char hash[32]; /* SHA-256 of the secret */
    char **patterns;        /* namespace globs (fnmatch) */
    size_t n_patterns;
    unsigned rights;    /* enum serve_right, admin implying the others */
    int all_namespaces; /* one pattern is "*" */
} api_key;

typedef struct key_table {
    api_key *keys;
    size_t n;
} key_table;

/* Load and validate a keys file. 0, or -1 with the reason in err. */
int keys_load(const char *path, key_table *out, char *err, size_t errcap);
void keys_free(key_table *t);
/* The key whose hash is SHA-256(secret), or NULL. Compares in constant
 * time against every key. */
const api_key *keys_find(const key_table *t, const char *secret);
/* May key exercise right on ns? key NULL means "no keys configured": all.
 * ns NULL: on every namespace (a pattern exactly "*"). HTTP routes and MCP
 * tools both decide with this one function. */
int key_allows(const api_key *key, const char *ns, unsigned right);
/* key_allows(key, NULL, right): every namespace (store-wide views). */
int key_allows_all(const api_key *key, unsigned right);

/* ------------------------------------------------------------------ */
/* Handle pool (pool.c)                                                */
/* ------------------------------------------------------------------ */
typedef struct handle_pool {
    pthread_mutex_t mu;
    pthread_cond_t freed;
    remem **idle;      /* a stack: the warmest handle is reused first */
    uint64_t *idle_ns; /* hash of the namespace each idle handle served */
    int n_idle, n_open, cap;
    char *uri;
    remem_options opt;
    remem_rate_later_fn rate_later; /* set on every handle opened (rater.c) */
    void *rate_later_ctx;
    remem **busy;        /* the handles checked out (n_open - n_idle of them) */
    int64_t deadline_ms; /* remem_set_deadline on each checkout (0: none) */
} handle_pool;

/* The allocator of the remem binary (heap.c): jemalloc when it is in the
 * process, glibc's malloc otherwise. heap_setup once before the workers
 * start; heap_tick every few seconds; heap_release after a large request;
 * heap_figures: bytes allocated and bytes the allocator holds. */
void heap_setup(void);
void heap_tick(void);
void heap_release(void);
const char *heap_allocator(char *buf, size_t cap);
int heap_figures(size_t *allocated, size_t *held);

/* The auto-rater (rater.c): ids of memories to rate, and the thread with
 * its own handle that rates them. */
typedef struct rater {
    pthread_mutex_t mu;
    pthread_cond_t wake;
    pthread_t thread;
    struct rate_job *head, *tail;
    int queued, stop, running;
    char *uri;
    remem_options opt;
    remem *db;           /* its handle once open (rater_interrupt) */
    int64_t deadline_ms; /* each rating's LLM work (remem_set_deadline) */
} rater;
/* Start the thread (its handle opens on the first id). 0 or -1. */
int rater_start(rater *r, const char *uri, const remem_options *opt);
/* Cut the LLM request the rating under way waits on (remem_interrupt). */
void rater_interrupt(rater *r);
/* A remem_rate_later_fn: queue (ns, id) for rating; ctx is the rater. */
void rater_enqueue(void *ctx, const char *ns, const char *id);
/* Let the rating under way finish (up to wait_ms; then its LLM call is cut
 * and it gets cut_ms more), drop the queue (saying how many), join. 0, or
 * -1 when the thread is still busy: it is left behind, its handle open. */
int rater_stop(rater *r, int wait_ms, int cut_ms);

/* Open the first handle (so that a bad store fails at startup). The pool
 * grows lazily up to cap handles. 0, or -1 with err filled. */
int pool_init(handle_pool *p, const char *uri, const remem_options *opt, int cap, char *err,
              size_t errcap);
/* Give every handle, idle and yet to open, remem_set_rate_later(fn, ctx)
 * (the auto-rater, rater.c). Call before the handles are in use. */
void pool_rate_later(handle_pool *p, remem_rate_later_fn fn, void *ctx);
/* Check a handle out, waiting while all cap are in use: preferably the
 * idle one that last served namespace ns (may be NULL), whose cache of it is
 * warm and current, else the most recently used. NULL when opening a new
 * one failed (err says why). */
remem *pool_get(handle_pool *p, const char *ns, char *err, size_t errcap);
/* uri as it may be shown (banner, errors): a password in
 * "scheme://user:password@host..." becomes "***". Returns buf. */
const char *shown_uri(const char *uri, char *buf, size_t cap);
/* Put db back, noting the namespace it served (may be NULL). */
void pool_put(handle_pool *p, remem *db, const char *ns);
/* Give each handle's LLM and embedder work ms milliseconds from its
 * checkout (remem_set_deadline; 0: no bound). Call before the handles are
 * in use. */
void pool_deadline(handle_pool *p, int64_t ms);
/* remem_interrupt every handle checked out now (a shutdown's cut). */
void pool_interrupt(handle_pool *p);
/* Close every handle; all must have been put back. */
void pool_close(handle_pool *p);

/* ------------------------------------------------------------------ */
/* Routes (routes.c, routes_*.c, reply.c)                            */
/* ------------------------------------------------------------------ */
enum route_id {
    R_HEALTHZ,
    R_METRICS,
    R_OPENAPI,
    R_MCP_POST,
    R_MCP_GET,
    R_MCP_DELETE,
    R_PROFILES,
    R_PROFILE,
    R_EMBED,
    R_NS_LIST,
    R_NS_CLEAR,
    R_NS_STATS,
    R_STATS,
    R_ADD,
    R_LIST,
    R_DELETE_BY,
    R_BATCH,
    R_MEM_GET,
    R_MEM_PATCH,
    R_MEM_DELETE,
    R_INVALIDATE,
    R_HISTORY,
    R_EXPORT_NS,
    R_EXPORT_ALL,
    R_RECALL,
    R_FIND_ID,
    R_OPS_LIST,
    R_UI,       /* the inspector's page (ui.c) */
    R_UI_ASSET, /* its script, style and chart library */
    R_OP, /* POST /v1/<operation>: matched against remem_ops(), not by template */
    R_COUNT,
    R_UNMATCHED = R_COUNT, /* 404 and 405, for the metrics */
    R_SLOTS
};

enum route_flag {
    RF_PUBLIC = 1,        /* no key needed (health, the API description) */
    RF_BODY = 2,          /* a JSON body is required */
    RF_BODY_OPTIONAL = 4, /* a JSON body may come */
    RF_QUERY = 8,         /* query-string parameters are the operation's arguments */
    RF_ADDS = 16,         /* an add: 201 when something was added; a key without read on
                             the namespace is told "accepted" only (docs/server.md) */
    RF_VISIBLE = 32       /* the answer's namespaces are filtered to the key's */
};

/* A route: a method and a path template, and either an operation it runs
 * (op: the path's {ns} and {id} become the arguments "ns" and "id", the
 * body or the query string the others, fixed adds its own) or a handler
 * of its own (op NULL: routes.c's switch). */
typedef struct route {
    const char *method;
    const char *tmpl; /* "/v1/namespaces/{ns}/memories/{id}:invalidate" */
    unsigned flags;
    const char *op;     /* the operation (remem_ops()), or NULL */
    const char *fixed;  /* arguments always given, JSON, or NULL */
    const char *unwrap; /* reply with this member of the answer, or NULL: all */
} route;

extern const route server_routes[R_COUNT];

/* Match a raw (still percent-encoded) path. Returns the route id and sets
 * *ns, *id to the decoded captures (malloc'd, NULL when absent); or -404,
 * or -405 with the allowed methods in allow; or -400 when a capture is
 * invalid (bad percent-encoding such as %zz, an encoded NUL, bytes that
 * are not UTF-8), with the capture named and the problem said in allow. */
int route_match(const char *method, const char *path, char **ns, char **id, char *allow,
                size_t allowcap);

/* ------------------------------------------------------------------ */
/* Requests and replies                                                */
/* ------------------------------------------------------------------ */
typedef struct server server;

typedef struct request {
    struct request *next; /* in the workers' queue (work.c) */
    server *srv;
    struct MHD_Connection *conn;
    int route;          /* enum route_id or R_UNMATCHED */
    char *ns, *id;      /* decoded path captures (R_OP: id is the operation's name) */
    const api_key *key; /* NULL when the server runs without keys */
    char *body;
    size_t body_len, body_cap, body_dropped;
    int too_large; /* the body went over max_body */
    int has_body;  /* the request announced a body */
    unsigned long long content_length;
    struct reply *deferred; /* a refusal sent once the body is read */
    int responded;          /* a response was queued */
    int status;             /* its status, for the metrics */
    int64_t t0_ns;
    int bad_framing;          /* refused for its framing headers: close after */
    int trim;                 /* return freed memory to the system once the reply is sent */
    struct reply *work_reply; /* filled by the worker, then moved to deferred */
    int handed;               /* suspended and queued for a worker */
} request;

/* Limits of POST /v1/embed (docs/server.md): texts per request and bytes of
 * text in all. */
#define SERVE_EMBED_MAX_TEXTS 256
#define SERVE_EMBED_MAX_BYTES (256 * 1024)

struct reply;
typedef struct reply {
    int status;
    char *body; /* owned; freed with free_body */
    size_t len;
    void (*free_body)(void *);
    const char *content_type;
    int pipe_fd;          /* >= 0: stream this fd instead (export) */
    char allow[192];      /* for 405 (route_match also says here why a -400) */
    char session[72];     /* Mcp-Session-Id to send back */
    int bearer_challenge; /* add WWW-Authenticate (401) */
    int retry_after;      /* > 0: a Retry-After header, in seconds */
} reply;

/* Fill rp with {"error":{"code":code,"message":...}}. */
void reply_error(reply *rp, int status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A remem failure: HTTP status from the code, message from the handle. */
void reply_remem_error(reply *rp, remem *db, int rc);
/* HTTP status for a REMEM_E* code. */
int http_status_for(int rc);
/* Serialise and take obj (decref'd). */
void reply_json(reply *rp, int status, json_t *obj);
/* Take a malloc'd text freed with free_fn. */
void reply_text(reply *rp, int status, char *text, void (*free_fn)(void *),
                const char *content_type);

/* An error about one element of a batch: the body also carries "index"
 * (index < 0: none). */
void reply_error_at(reply *rp, int status, const char *code, long index, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Access (reply.c): 1 if the caller may use ns that way (or every namespace,
 * for a store-wide view named by what); else a 403 is in rp. */
int allowed(request *rq, reply *rp, const char *ns, unsigned right);
int allowed_all(request *rq, reply *rp, unsigned right, const char *what);

/* Bodies (reply.c). Each returns 1 (or a value) on success, else 0 (NULL)
 * with a 400 naming the field in rp. */
json_t *body_object(request *rq, reply *rp); /* the body as a JSON object */
/* Every field of o is in known (NULL-terminated). */
int known_fields(json_t *o, const char *const *known, reply *rp, const char *where);
/* A non-empty array of numbers as floats (malloc'd). */

/* The handlers, one per route (routes_*.c). Those given a db run on a
 * pooled handle taken by route_handle; the others take their own or need
 * none. */
void h_find_id(request *rq, reply *rp, remem *db);
void h_export(request *rq, reply *rp);
void h_profiles(reply *rp);
void h_profile(request *rq, reply *rp);
void h_embed(request *rq, reply *rp, remem *db);
void h_metrics(request *rq, reply *rp, remem *db);
void h_healthz(request *rq, reply *rp);
void h_openapi(reply *rp);
void h_op(request *rq, reply *rp);
/* A route that names an operation (routes_ops.c): its arguments from the
 * path, the body or the query string, the key's right checked on every
 * namespace they name, the operation run on a pooled handle. */
void h_route_op(request *rq, reply *rp);
/* The arguments of op read from rq's query string, each typed by the
 * operation's schema (a number, a boolean, a comma list, a JSON filter);
 * NULL with a 400 in rp. */
json_t *query_args(request *rq, reply *rp, const remem_op_info *op);
void h_ops_list(reply *rp);
/* GET /ui and /ui/{file}: the inspector's files, built into the binary
 * (ui.c); 404 when the server runs with --no-ui. */
void h_ui(request *rq, reply *rp);
/* remem_namespaces' array, filtered to what rq's key may read; NULL with
 * rp set on failure. */
json_t *visible_namespaces(request *rq, reply *rp, remem *db);

/* Run the handler of rq->route. Checks rights, checks out a handle when the
 * route needs one, and fills rp. */
void route_handle(request *rq, reply *rp);

/* ------------------------------------------------------------------ */
/* Workers (work.c)                                                    */
/* ------------------------------------------------------------------ */
typedef struct work_pool {
    pthread_mutex_t mu;
    pthread_cond_t ready; /* a request was queued, or stop */
    pthread_cond_t gone;  /* a worker ended */
    request *head, *tail; /* the queue, oldest first */
    int queued, running, threads;
    int min_threads, max_threads, max_queued;
    long long rejected; /* refused because the queue was full */
    int stop, ok;
    void (*run)(request *rq); /* the handler: fills rq, resumes it */
} work_pool;

typedef struct work_stats {
    int queued; /* waiting: beyond what the free workers are about to take */
    int running, threads;
    long long rejected;
} work_stats;

/* Set up (no thread yet): min_threads live for good, up to max_threads
 * when requests wait, at most max_queued waiting. 0 or -1. */
int work_init(work_pool *w, int min_threads, int max_threads, int max_queued,
              void (*run)(request *));
/* Start the min_threads workers. 0 or -1. */
int work_start(work_pool *w);
/* Queue rq for a worker. 0, or -1 when the queue is full or stopping
 * (counted as rejected): rq stays the caller's. */
int work_submit(work_pool *w, request *rq);
/* Empty the queue and return what it held (a list through ->next): the
 * requests no worker has started. */
request *work_take_queued(work_pool *w);
void work_counts(work_pool *w, work_stats *out);
/* Tell the workers to end once their request is done, and wait up to
 * wait_ms for them. Returns how many are still running. */
int work_stop(work_pool *w, int wait_ms);

/* ------------------------------------------------------------------ */
/* The server (http.c)                                                 */
/* ------------------------------------------------------------------ */
/* Background ingests (ingest_runner.c): one thread with its own handle
 * that resumes the store's unfinished ingest jobs. */
typedef struct ingest_runner {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    int stop, woken, running, limit, deadline_ms;
    char *uri;
    remem *db; /* the thread's handle once opened (under mu) */
    remem_options opt;
    atomic_int pending;                  /* jobs known unfinished (the last look, plus wakes) */
    _Atomic unsigned long long done, failures;
} ingest_runner;

int ingest_runner_start(ingest_runner *r, const char *uri, const remem_options *opt, int limit,
                        int deadline_ms);
/* A background ingest was accepted: look now. */
void ingest_runner_wake(ingest_runner *r);
/* The queue holds its limit: refuse another background ingest. */
int ingest_runner_full(ingest_runner *r);
void ingest_runner_stop(ingest_runner *r);
void ingest_runner_metrics(ingest_runner *r, FILE *f);

struct server {
    serve_config cfg;
    key_table keys;
    int keys_on;
    unsigned mcp_groups; /* the MCP tool groups offered (mcp.h) */
    handle_pool pool;
    rater rater;
    work_pool work;
    ingest_runner ingest;
    struct MHD_Daemon *daemon;
    char addr[128];                  /* "127.0.0.1:8077" as bound */
    atomic_int in_flight;            /* requests between first call and completion */
    atomic_int draining;             /* shutdown began: new requests get 503 */
    atomic_int exports;              /* export streams running */
    atomic_int connections;          /* open client connections */
    _Atomic int64_t last_request_ms; /* when the latest request began */
    int64_t grace_end_ms;            /* shutdown: when the grace ends */
    int max_exports;
    int64_t started_ms;
};

/* Streamed export of ns (NULL: all) into a pipe; fills rp with the read
 * end, or an error. */
void server_export(request *rq, reply *rp, const char *ns, int vectors);
/* The /mcp routes. */
void server_mcp(request *rq, reply *rp);
/* srv->mcp_groups from cfg.mcp_tools or the configuration's mcp.tools
 * (read on one of the pool's handles). 0, or -1 with err naming the
 * unknown group. */
int server_mcp_groups(struct server *srv, char *err, size_t cap);
/* A query-string value, percent-decoded (malloc'd), or NULL. */
char *request_arg(const request *rq, const char *name);
/* Value of a boolean query argument: "true"/"1"/"yes" -> 1, absent -> dflt,
 * anything else -> -1. */
int request_flag(const request *rq, const char *name, int dflt);

/* ------------------------------------------------------------------ */
/* Metrics (metrics.c)                                                 */
/* ------------------------------------------------------------------ */
void metrics_record(int route, int status, double seconds);
/* Count a request that ran the operation name, with its status and the
 * time the operation took (routes_ops.c): /metrics labels them per
 * operation. */
void metrics_op(const char *name, int status, double seconds);
/* The Prometheus text exposition; namespaces is remem_namespaces' array
 * already filtered to what the caller may see (may be NULL). malloc'd. */
char *metrics_render(const server *srv, json_t *namespaces);

/* ------------------------------------------------------------------ */
/* The API description (openapi.c)                                     */
/* ------------------------------------------------------------------ */
const char *openapi_document(size_t *len);

/* The maintenance thread (maintain.c): started after the banner when an
 * interval is set, told to stop first on shutdown. 0, or -1 with err. */
int serve_maint_start(const serve_config *cfg, FILE *log, char *err, size_t cap);
/* Ask it to stop and cut the embedder call it waits on; returns at once. */
void serve_maint_cut(void);
/* serve_maint_cut, then wait up to wait_ms for it. 0, or -1 when it still
 * runs (a long chore; its handle is left open). */
int serve_maint_stop(int wait_ms);

#endif
