/*
 * embed_server.h: a stand-in for an OpenAI-compatible embeddings server,
 * run inside a test (libmicrohttpd, its own threads, 127.0.0.1 only, a port
 * the kernel picks), so the http embedder can be tested without a network
 * or a model. It answers POST /v1/embeddings with deterministic vectors
 * (embed_server_vector: deliberately not unit length, so the client's
 * normalisation shows) listed in reverse order (so placement by "index"
 * shows), counts what it receives, and misbehaves on request: fail the next
 * N requests with a status, answer slowly, answer malformed JSON, drop
 * "data", answer too few embeddings, or the wrong dimension. GET
 * /v1/blob/N answers N bytes of embed_server_blob, for download tests of
 * the net client (tests/test_net.c); failures and delays apply to it too.
 *
 * All functions are thread-safe with respect to the server's threads.
 */
#ifndef REMEM_TEST_EMBED_SERVER_H
#define REMEM_TEST_EMBED_SERVER_H

#include <stddef.h>

typedef struct embed_server embed_server;

typedef enum embed_server_mode {
    EMBED_SERVER_OK = 0,    /* well-formed answers */
    EMBED_SERVER_MALFORMED, /* a truncated JSON document */
    EMBED_SERVER_NO_DATA,   /* {"object":"list"} without "data" */
    EMBED_SERVER_SHORT,     /* one embedding fewer than texts */
    EMBED_SERVER_WRONG_DIM, /* vectors of dim + 1 */
} embed_server_mode;

/* Starts a server answering dim-dimensional vectors; NULL on failure (the
 * reason goes to stderr). */
embed_server *embed_server_start(int dim);
/* The same on a given port (0: any free one): a server brought back where
 * a stopped one listened. */
embed_server *embed_server_start_on(int dim, int port);
/* Stops it (waits for in-flight requests, cutting delays short) and frees
 * it. NULL is fine. */
void embed_server_stop(embed_server *s);
int embed_server_port(const embed_server *s);
/* "http://127.0.0.1:PORT/v1": the base URL to give the embedder. Valid
 * until embed_server_stop. */
const char *embed_server_url(const embed_server *s);

/* The next n requests get HTTP status (e.g. 500, 429, 400) with the body
 * {"error":{"message":"injected failure <status>"}}. */
void embed_server_fail_next(embed_server *s, int n, int status);
/* The same after skip more requests have been answered normally. */
void embed_server_fail_after(embed_server *s, int skip, int n, int status);
/* Every answer waits this long first (0: none). */
void embed_server_set_delay_ms(embed_server *s, int ms);
void embed_server_set_mode(embed_server *s, embed_server_mode mode);

/* Requests received (any path, any outcome), texts embedded, the largest
 * "input" array seen. */
int embed_server_requests(embed_server *s);
int embed_server_texts(embed_server *s);
int embed_server_max_batch(embed_server *s);
/* The last request's Authorization header ("" if it had none) and "model"
 * value, copied into buf. */
void embed_server_last_auth(embed_server *s, char *buf, size_t cap);
void embed_server_last_model(embed_server *s, char *buf, size_t cap);

/* The n bytes GET /v1/blob/N answers. */
void embed_server_blob(size_t n, unsigned char *out);

/* The vector the server answers for text (dim floats, not normalised). */
void embed_server_vector(const char *text, int dim, float *out);

/* A loopback port that refuses connections: a socket bound to it but not
 * listening, held open until embed_server_release_port(fd) so that nothing
 * else takes the port meanwhile. Returns the port, or -1. */
int embed_server_refusing_port(int *fd);
void embed_server_release_port(int fd);

#endif
