/*
 * server.h: what the command line (cli/cmd_serve.c) needs from remem's HTTP
 * server: its configuration, the call that runs it until SIGINT/SIGTERM,
 * and the helpers that make API key entries. Everything the server's own
 * files share beyond this lives in serverInt.h, so that the command sees a
 * small surface and the server can be reshaped behind it.
 */
#ifndef REMEM_SERVER_H
#define REMEM_SERVER_H

#include <stddef.h>
#include <stdio.h>
#include "remem.h"

#define SERVE_DEFAULT_LISTEN          "127.0.0.1:8077"
#define SERVE_DEFAULT_MAX_BODY        (8u << 20)
#define SERVE_DEFAULT_TIMEOUT_S       30
#define SERVE_DEFAULT_MAX_CONNECTIONS 512
#define SERVE_DEFAULT_QUEUE           256
#define SERVE_DEFAULT_GRACE_S         30
#define SERVE_DEFAULT_LLM_DEADLINE_S  60

typedef struct serve_config {
    const char *db_path;         /* the store's URI */
    remem_options opt;           /* how every handle of the pool is opened */
    const char *listen;          /* "ADDR:PORT" or "[V6ADDR]:PORT"; port 0 picks one */
    const char *keys_path;       /* JSON keys file, or NULL: loopback only */
    int threads;                 /* I/O threads and the workers kept alive
                                    (0: 2 per core, at least 4) */
    int workers;                 /* requests worked on at once (0: 4 x threads) */
    int queue;                   /* requests waiting for a worker; more get
                                    503 with Retry-After */
    int grace_s;                 /* shutdown: how long requests in flight may
                                    take to finish */
    int llm_deadline_s;          /* each request's LLM and embedder work */
    size_t max_body;             /* bytes; larger bodies get 413 */
    int timeout_s;               /* idle connection timeout */
    int max_connections;         /* concurrent connections accepted */
    int quiet;                   /* no banner */
    int ingest_queue;            /* background ingest jobs accepted at most (0: 256) */
    double maintain_every_hours; /* run "maintain" this often; < 0 (the
                                    default): pruneIntervalHours of the
                                    configuration; 0: never */
    const char *mcp_tools;       /* the MCP tool groups /mcp offers besides
                                    the core ones ("memory,lessons", "all");
                                    NULL: mcp.tools of the configuration */
    int no_ui;                   /* 1: no inspector page at /ui (--no-ui) */
} serve_config;

void serve_config_init(serve_config *cfg);

/*
 * Open the store, start listening, print the banner to out (address, the
 * machine-readable line "listening on http://ADDR:PORT", a first curl to
 * try) and serve until SIGINT or SIGTERM; then stop accepting, let the
 * requests in flight finish, close every handle and return 0. When they
 * do not finish within the grace (or a second signal comes), the requests
 * not yet started get 503, the LLM and embedder calls under way are cut
 * (their requests answer 504), and if some handler still runs a moment
 * later the process ends at once with _exit(1), having flushed its
 * output (a handle in use cannot be closed). Returns 1 when requests had
 * to be cut. On a startup failure it prints "remem: ..." to stderr and
 * returns 1.
 */
int serve_run(const serve_config *cfg, FILE *out);

/* Rights of an API key (bit mask; read, write and admin have the values of
 * enum mcp_right; embed is for POST /v1/embed alone). */
enum serve_right { SERVE_READ = 1, SERVE_WRITE = 2, SERVE_ADMIN = 4, SERVE_EMBED = 8 };

/* "read,write", "embed" or "admin" -> bit mask. 0 on success, -1 on an unknown
 * right (named in err). */
int serve_parse_rights(const char *list, unsigned *rights, char *err, size_t errcap);
/* The lowercase hex SHA-256 of secret into hex (65 bytes). */
void serve_hash_secret(const char *secret, char hex[65]);
/* One keys-file entry as JSON text (malloc'd; free()). */
char *serve_key_entry(const char *name, const char *hash_hex, const char *const *patterns,
                      size_t n_patterns, unsigned rights);
/* Append an entry to the keys file at path (created as {"keys": []} when
 * missing), replacing the file atomically. 0 or -1 with err filled. */
int serve_keys_append(const char *path, const char *entry_json, char *err, size_t errcap);

#endif
