/*
 * embed_server.c: the in-process stand-in for an OpenAI-compatible
 * embeddings server that the http embedder's tests talk to (see
 * embed_server.h for what it can be told to do). libmicrohttpd with a thread
 * per connection, so that one slow answer does not hold up the next
 * request; bound to 127.0.0.1 on a port the kernel picks, so tests running
 * side by side never collide. Its settings and counters sit behind one
 * mutex, since the server's threads and the test read and write them.
 */
#include "embed_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <microhttpd.h>

enum { MAX_REQUEST = 64 * 1024 * 1024 };

struct embed_server {
    struct MHD_Daemon *daemon;
    int port, dim;
    char url[64];
    pthread_mutex_t lock;
    /* behaviour, set by the test */
    int fail_skip, fail_left, fail_status, delay_ms;
    embed_server_mode mode;
    int stopping;
    /* what was seen */
    int requests, texts, max_batch;
    char last_auth[256], last_model[256];
};

/* The request body, gathered over libmicrohttpd's upload callbacks. */
typedef struct upload {
    char *data;
    size_t len;
    int too_big;
} upload;

static uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void embed_server_vector(const char *text, int dim, float *out) {
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    for (int j = 0; j < dim; j++) {
        uint64_t x = mix64(h + (uint64_t)j * 0x9e3779b97f4a7c15ull);
        out[j] = (float)((double)(x & 0xffff) / 65536.0 * 4.0 - 2.0);
    }
}

static enum MHD_Result send_json(struct MHD_Connection *conn, unsigned status, const char *body) {
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ok = MHD_queue_response(conn, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, unsigned status,
                                  const char *message) {
    json_t *root =
        json_pack("{s:{s:s,s:s}}", "error", "message", message, "type", "invalid_request_error");
    char *body = root ? json_dumps(root, JSON_COMPACT) : NULL;
    enum MHD_Result ok = send_json(conn, status, body ? body : "{}");
    free(body);
    json_decref(root);
    return ok;
}

/* Waits ms, in small steps so that stopping the server cuts it short. */
static void wait_delay(embed_server *s, int ms) {
    for (int waited = 0; waited < ms; waited += 10) {
        pthread_mutex_lock(&s->lock);
        int stopping = s->stopping;
        pthread_mutex_unlock(&s->lock);
        if (stopping) return;
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* Answers a well-formed request: the vectors for inputs, in reverse index
 * order, shaped by mode. */
static enum MHD_Result send_embeddings(embed_server *s, struct MHD_Connection *conn, json_t *inputs,
                                       const char *model, embed_server_mode mode) {
    if (mode == EMBED_SERVER_MALFORMED)
        return send_json(conn, 200,
                         "{\"object\":\"list\",\"data\":[{\"index\":0,\"embedding\":[0.1,");
    if (mode == EMBED_SERVER_NO_DATA) return send_json(conn, 200, "{\"object\":\"list\"}");
    int dim = s->dim + (mode == EMBED_SERVER_WRONG_DIM);
    size_t n = json_array_size(inputs);
    size_t answered = mode == EMBED_SERVER_SHORT && n > 0 ? n - 1 : n;
    float *v = malloc((size_t)dim * sizeof *v);
    json_t *data = json_array();
    enum MHD_Result ok = MHD_NO;
    if (!v || !data) goto done;
    for (size_t k = answered; k-- > 0;) {
        embed_server_vector(json_string_value(json_array_get(inputs, k)), dim, v);
        json_t *vec = json_array();
        for (int j = 0; j < dim; j++) json_array_append_new(vec, json_real(v[j]));
        json_array_append_new(data, json_pack("{s:s,s:I,s:o}", "object", "embedding", "index",
                                              (json_int_t)k, "embedding", vec));
    }
    json_t *root =
        json_pack("{s:s,s:o,s:s,s:{s:I,s:I}}", "object", "list", "data", data, "model", model,
                  "usage", "prompt_tokens", (json_int_t)n, "total_tokens", (json_int_t)n);
    data = NULL; /* owned by root now */
    char *body = root ? json_dumps(root, JSON_COMPACT) : NULL;
    if (body) ok = send_json(conn, 200, body);
    free(body);
    json_decref(root);
done:
    json_decref(data);
    free(v);
    return ok;
}

void embed_server_blob(size_t n, unsigned char *out) {
    for (size_t i = 0; i < n; i++) out[i] = (unsigned char)(i * 7 + 3 + (i >> 8));
}

/* GET /v1/blob/N: N bytes of embed_server_blob, for downloads. */
static enum MHD_Result send_blob(struct MHD_Connection *conn, unsigned long n) {
    if (n > MAX_REQUEST) return send_error(conn, 400, "blob too large");
    unsigned char *data = malloc(n ? n : 1);
    if (!data) return MHD_NO;
    embed_server_blob(n, data);
    struct MHD_Response *r = MHD_create_response_from_buffer(n, data, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/octet-stream");
    enum MHD_Result ok = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result handle_request(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_size,
                                      void **con_cls) {
    (void)version;
    embed_server *s = cls;
    upload *up = *con_cls;
    if (!up) {
        if (!(up = calloc(1, sizeof *up))) return MHD_NO;
        *con_cls = up;
        return MHD_YES;
    }
    if (*upload_size) {
        if (up->len + *upload_size > MAX_REQUEST) {
            up->too_big = 1;
        } else {
            char *d = realloc(up->data, up->len + *upload_size + 1);
            if (!d) return MHD_NO;
            memcpy(d + up->len, upload_data, *upload_size);
            up->data = d;
            up->len += *upload_size;
            up->data[up->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }

    const char *auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
    pthread_mutex_lock(&s->lock);
    s->requests++;
    snprintf(s->last_auth, sizeof s->last_auth, "%s", auth ? auth : "");
    int status = 0;
    if (s->fail_skip > 0) {
        s->fail_skip--;
    } else if (s->fail_left > 0) {
        s->fail_left--;
        status = s->fail_status;
    }
    int delay = s->delay_ms;
    embed_server_mode mode = s->mode;
    pthread_mutex_unlock(&s->lock);

    wait_delay(s, delay);
    if (status) {
        char msg[64];
        snprintf(msg, sizeof msg, "injected failure %d", status);
        return send_error(conn, (unsigned)status, msg);
    }
    unsigned long blob;
    char tail;
    if (strcmp(method, "GET") == 0 && sscanf(url, "/v1/blob/%lu%c", &blob, &tail) == 1)
        return send_blob(conn, blob);
    if (strcmp(url, "/v1/embeddings") != 0) return send_error(conn, 404, "no such path");
    if (strcmp(method, "POST") != 0) return send_error(conn, 405, "POST only");
    if (up->too_big) return send_error(conn, 413, "request too large");

    json_error_t jerr;
    json_t *root = up->data ? json_loadb(up->data, up->len, 0, &jerr) : NULL;
    json_t *inputs = json_object_get(root, "input");
    const char *model = json_string_value(json_object_get(root, "model"));
    int valid = json_is_array(inputs) && json_array_size(inputs) > 0 && model;
    size_t i;
    json_t *x;
    json_array_foreach(inputs, i, x) valid =
        valid && json_is_string(x) && json_string_length(x) > 0;
    if (!valid) {
        json_decref(root);
        return send_error(conn, 400,
                          "expected {\"model\": string, \"input\": [non-empty strings]}");
    }
    pthread_mutex_lock(&s->lock);
    snprintf(s->last_model, sizeof s->last_model, "%s", model);
    s->texts += (int)json_array_size(inputs);
    if ((int)json_array_size(inputs) > s->max_batch) s->max_batch = (int)json_array_size(inputs);
    pthread_mutex_unlock(&s->lock);
    enum MHD_Result ok = send_embeddings(s, conn, inputs, model, mode);
    json_decref(root);
    return ok;
}

static void request_done(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode why) {
    (void)cls;
    (void)conn;
    (void)why;
    upload *up = *con_cls;
    if (up) {
        free(up->data);
        free(up);
    }
    *con_cls = NULL;
}

embed_server *embed_server_start(int dim) { return embed_server_start_on(dim, 0); }

embed_server *embed_server_start_on(int dim, int port) {
    embed_server *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->dim = dim;
    pthread_mutex_init(&s->lock, NULL);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons((uint16_t)port);
    s->daemon =
        MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, 0, NULL,
                         NULL, handle_request, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
                         MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL, MHD_OPTION_END);
    const union MHD_DaemonInfo *info =
        s->daemon ? MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    if (!info || !info->port) {
        fprintf(stderr, "embed_server: cannot start libmicrohttpd on 127.0.0.1:%d\n", port);
        embed_server_stop(s);
        return NULL;
    }
    s->port = info->port;
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/v1", s->port);
    return s;
}

void embed_server_stop(embed_server *s) {
    if (!s) return;
    pthread_mutex_lock(&s->lock);
    s->stopping = 1;
    pthread_mutex_unlock(&s->lock);
    if (s->daemon) MHD_stop_daemon(s->daemon);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

int embed_server_port(const embed_server *s) { return s->port; }

const char *embed_server_url(const embed_server *s) { return s->url; }

void embed_server_fail_next(embed_server *s, int n, int status) {
    embed_server_fail_after(s, 0, n, status);
}

void embed_server_fail_after(embed_server *s, int skip, int n, int status) {
    pthread_mutex_lock(&s->lock);
    s->fail_skip = skip;
    s->fail_left = n;
    s->fail_status = status;
    pthread_mutex_unlock(&s->lock);
}

void embed_server_set_delay_ms(embed_server *s, int ms) {
    pthread_mutex_lock(&s->lock);
    s->delay_ms = ms;
    pthread_mutex_unlock(&s->lock);
}

void embed_server_set_mode(embed_server *s, embed_server_mode mode) {
    pthread_mutex_lock(&s->lock);
    s->mode = mode;
    pthread_mutex_unlock(&s->lock);
}

static int read_counter(embed_server *s, const int *field) {
    pthread_mutex_lock(&s->lock);
    int v = *field;
    pthread_mutex_unlock(&s->lock);
    return v;
}

int embed_server_requests(embed_server *s) { return read_counter(s, &s->requests); }

int embed_server_texts(embed_server *s) { return read_counter(s, &s->texts); }

int embed_server_max_batch(embed_server *s) { return read_counter(s, &s->max_batch); }

void embed_server_last_auth(embed_server *s, char *buf, size_t cap) {
    pthread_mutex_lock(&s->lock);
    snprintf(buf, cap, "%s", s->last_auth);
    pthread_mutex_unlock(&s->lock);
}

void embed_server_last_model(embed_server *s, char *buf, size_t cap) {
    pthread_mutex_lock(&s->lock);
    snprintf(buf, cap, "%s", s->last_model);
    pthread_mutex_unlock(&s->lock);
}

int embed_server_refusing_port(int *fd) {
    *fd = socket(AF_INET, SOCK_STREAM, 0);
    if (*fd < 0) return -1;
    struct sockaddr_in addr = {0};
    socklen_t len = sizeof addr;
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(*fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        getsockname(*fd, (struct sockaddr *)&addr, &len) != 0) {
        close(*fd);
        *fd = -1;
        return -1;
    }
    return ntohs(addr.sin_port);
}

void embed_server_release_port(int fd) {
    if (fd >= 0) close(fd);
}
