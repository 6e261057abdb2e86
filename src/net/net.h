/*
 * net.h: remem's one HTTP client (libcurl), shared by every part that talks
 * to a server: the http embedder (a JSON POST with a bearer key, the answer
 * in memory), `remem model pull` (a streamed download into a file, with
 * progress and a size cap) and the coming LLM client (the same JSON POST as
 * the embedder).
 *
 * One call, net_perform, does one request with the policy every caller
 * wants and none should write twice:
 *   - a time limit per try (connecting included) and/or a stall limit;
 *   - retries of what may pass (connection refused or reset, DNS failure,
 *     timeout, HTTP 429 and 5xx), waiting backoff_ms, then twice that, ...
 *     up to NET_MAX_BACKOFF_MS, each wait stretched by a random 0-25% so
 *     that clients failed together do not come back together; anything else
 *     (other 4xx, a bad URL, TLS verification, the size cap, the sink's own
 *     error) fails at once, since trying again would not change it;
 *   - a cap on the size of a 2xx answer, counted as the bytes arrive;
 *   - a bearer key ("Authorization: Bearer KEY");
 *   - one message style that names who asked, the method, the URL and the
 *     cause: "http embedder: POST http://127.0.0.1:9/v1/embeddings:
 *     connection refused after 4 tries", "pull: GET URL answered HTTP 404:
 *     not found", "... timed out (no answer within 300 ms) after 2 tries".
 *
 * The answer goes into resp->body (a strbuf) or, when rq->write is set, to
 * that sink piece by piece. Only a 2xx answer (or a file:// read) reaches
 * the sink; an error status's body is kept in resp->body (its first 64 KiB)
 * for the message and for callers that parse error bodies. After a failure
 * a sink may hold part of an answer (up to the cap): the caller discards it.
 *
 * A net_client is one libcurl handle, reused from request to request so
 * that connections are kept alive; it is not thread-safe (one per thread or
 * per call). The library never prints; errors go to err.
 */
#ifndef REMEM_NET_H
#define REMEM_NET_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

enum {
    NET_DEFAULT_TIMEOUT_MS = 30000,
    NET_DEFAULT_BACKOFF_MS = 200,
    NET_MAX_BACKOFF_MS = 5000,
    NET_ERROR_BODY_KEPT = 64 * 1024, /* of an error answer, in resp->body */
    NET_ERROR_BODY_SHOWN = 200,      /* of it, in the message */
};
/* The cap on an answer when the request gives none. */
#define NET_DEFAULT_MAX_BYTES ((int64_t)256 << 20)

typedef struct net_client net_client;

/* A bound that the owner of a request may move from another thread while it
 * runs (a server's per-request deadline, a shutdown): the request ends with
 * REMEM_ETIMEOUT once net_mono_ms() passes deadline_ms (0: no deadline) or
 * once stop is set; a try is given no more time than what is left, a retry
 * that would start past the deadline is not made, and a transfer under way
 * is cut within about a second (libcurl's progress callback). */
typedef struct net_cancel {
    _Atomic int64_t deadline_ms; /* net_mono_ms() clock; 0: none */
    atomic_int stop;             /* set: cut now */
} net_cancel;
/* Milliseconds of CLOCK_MONOTONIC: the clock of net_cancel.deadline_ms. */
int64_t net_mono_ms(void);

/* Receives the next n bytes of a 2xx answer. Returns 0, or a REMEM_ status
 * with a message in err (say what failed: "PATH: No space left on
 * device"), which ends the request without retries. */
typedef int (*net_write_fn)(void *ctx, const void *data, size_t n, char *err, size_t errcap);
/* Called before a retry that follows a try which reached the sink, so that
 * the sink starts over (truncate the file, reset the checksum). Returns 0
 * or a status as above. Without it such a request is not retried. */
typedef int (*net_restart_fn)(void *ctx, char *err, size_t errcap);
/* Bytes received so far in this try and the expected total (0: unknown). */
typedef void (*net_progress_fn)(void *ctx, int64_t done, int64_t total);

/* A request. Zeroed fields take the defaults given; fill it with a
 * designated initializer. Nothing here is kept after net_perform returns. */
typedef struct net_request {
    const char *what; /* who asks: the start of every message ("pull") */
    const char *url;
    const char *body; /* NULL: GET; otherwise POST of body_len bytes */
    size_t body_len;
    const char *content_type;   /* of body (NULL: application/json) */
    const char *accept;         /* NULL: no Accept header */
    const char *bearer;         /* an API key; NULL or "": none */
    const char *const *headers; /* more "Name: value" lines, NULL-ended; NULL: none */
    long timeout_ms;            /* per try, connecting included; 0: 30 s; <0: none */
    long connect_timeout_ms;    /* 0: timeout_ms, or 30 s without one */
    long stall_ms;              /* give up after this long without a byte; 0: never */
    int retries;                /* tries after the first, for what may pass */
    long backoff_ms;            /* the first wait (0: 200 ms), doubled each time */
    int64_t max_bytes;          /* the answer's cap (0: NET_DEFAULT_MAX_BYTES) */
    const char *cap_name;       /* the cap in messages ("the expected file");
                                 NULL: "N bytes" */
    int follow_redirects;       /* up to 10, to http and https only */
    int allow_file;             /* accept file:// URLs (local mirrors, tests) */
    net_write_fn write;         /* NULL: the answer goes to resp->body */
    net_restart_fn restart;
    void *sink;               /* ctx of write and restart */
    net_progress_fn progress; /* NULL: none */
    void *progress_ctx;
    const net_cancel *cancel; /* NULL: none; see net_cancel */
} net_request;

typedef struct net_response {
    long status; /* the last try's HTTP status; 0 when none came (or file://) */
    int tries;   /* tries made */
    strbuf body; /* the 2xx answer (without a sink) or the error answer's start;
                    data NULL when it was empty */
} net_response;

/* A client, or NULL (out of memory, or libcurl would not initialise; err
 * says which). Free with net_client_free (NULL is fine). */
net_client *net_client_new(char *err, size_t errcap);
void net_client_free(net_client *c);

/* Performs rq with c; resp (zeroed, or reused: its body is emptied) gets
 * the outcome; free its body with net_response_free. Returns REMEM_OK when
 * the last try answered 2xx (or read a file), else
 *   REMEM_EIO     the server could not be reached, timed out, answered an
 *                 error status, or answered more than the cap (err says
 *                 which; resp->status tells an answered error apart);
 *   REMEM_EINVAL  no URL;
 *   REMEM_ENOMEM  out of memory;
 *   REMEM_ETIMEOUT rq->cancel's deadline passed or its stop was set (err
 *                 says which);
 *   or the status a sink returned. */
int net_perform(net_client *c, const net_request *rq, net_response *resp, char *err, size_t errcap);
void net_response_free(net_response *r);

/* How long the wait before retry number `retry` (1, 2, ...) lasts, before
 * jitter: backoff_ms * 2^(retry-1), at most NET_MAX_BACKOFF_MS. */
long net_backoff_ms(long backoff_ms, int retry);

/* url as it may be shown (a message, config.show, usage, logs): a user name
 * and password become "***", every query value "***" (names kept:
 * "?token=***"), the fragment goes. A URL that does not parse is shown as
 * "(a URL that does not parse)", never as itself. Writes at most cap
 * bytes, NUL-terminated. */
void net_url_redact(const char *url, char *out, size_t cap);

/* base with tail appended to its path ("/chat/completions"), its query
 * kept after the new path: "http://h/v1?token=x" gives
 * "http://h/v1/chat/completions?token=x". A new string (free()), or NULL
 * when base does not parse as a URL or memory runs out. */
char *net_url_join(const char *base, const char *tail);

#endif
