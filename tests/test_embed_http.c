/*
 * test_embed_http.c: the http embedder (src/embed/http.c) against the
 * in-process stand-in server (tests/support/embed_server.c) on a loopback
 * port: the wire format, batching and order, normalisation, the dimension
 * probe, retries with backoff (and what is not retried), timeouts, a server
 * that is down, bad answers (malformed, no data, too few, wrong dimension),
 * the bearer token, all-or-nothing failure, and use from two threads.
 * Retries wait 10 ms here instead of 200 ms, except in the one test that
 * measures the default backoff.
 */
#include "test.h"

#include <pthread.h>
#include <time.h>

#include "embed/embed.h"
#include "support/embed_server.h"
#include "remem.h"

enum { DIM = 16 };

typedef struct http_options {
    int dim, batch, retries, timeout_ms, backoff_ms;
    const char *api_key, *model, *url;
} http_options;

/* Creates an http embedder for server s with o's settings (zero fields:
 * this file's defaults). Returns the status; err gets the message. */
static int make_http(embed_server *s, http_options o, embedder **e, char *err, size_t errcap) {
    embed_config cfg = {0};
    cfg.url = o.url ? o.url : embed_server_url(s);
    cfg.model = o.model ? o.model : "test-model";
    cfg.api_key = o.api_key;
    cfg.dim = o.dim;
    cfg.batch = o.batch;
    cfg.retries = o.retries;
    cfg.timeout_ms = o.timeout_ms ? o.timeout_ms : 5000;
    cfg.retry_backoff_ms = o.backoff_ms ? o.backoff_ms : 10;
    err[0] = '\0';
    return embed_http_create(&cfg, e, err, errcap);
}

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* Row i of out is the server's vector for texts[i], normalised. */
static int rows_match(const char *const *texts, size_t n, const float *out, int dim) {
    float want[DIM + 1];
    for (size_t i = 0; i < n; i++) {
        embed_server_vector(texts[i], dim, want);
        double norm = 0;
        for (int j = 0; j < dim; j++) norm += (double)want[j] * want[j];
        norm = sqrt(norm);
        for (int j = 0; j < dim; j++)
            if (fabs(out[i * (size_t)dim + j] - want[j] / norm) > 1e-6) {
                fprintf(stderr, "  row %zu differs at %d: %g vs %g\n", i, j,
                        out[i * (size_t)dim + j], want[j] / norm);
                return 0;
            }
    }
    return 1;
}

static void test_probe_learns_dim(void) {
    embed_server *s = embed_server_start(DIM);
    CHECK(s != NULL);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(make_http(s, (http_options){0}, &e, err, sizeof err), REMEM_OK);
    if (e) {
        CHECK_INT(e->dim, DIM);
        CHECK_STR(e->name, "http");
        CHECK_STR(e->model_id, "http:test-model");
        CHECK_INT(embed_server_requests(s), 1);
        char model[64];
        embed_server_last_model(s, model, sizeof model);
        CHECK_STR(model, "test-model");
    }
    embed_destroy(e);
    /* A given dim is trusted: no probe. */
    e = NULL;
    CHECK_INT(make_http(s, (http_options){.dim = DIM}, &e, err, sizeof err), REMEM_OK);
    CHECK_INT(embed_server_requests(s), 1);
    CHECK(e && e->dim == DIM);
    embed_destroy(e);
    embed_server_stop(s);
}

static void test_batching_order_and_normalisation(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(make_http(s, (http_options){.dim = DIM, .batch = 64}, &e, err, sizeof err), REMEM_OK);
    if (!e) goto out;
    enum { N = 150 };
    static char store[N][32];
    const char *texts[N];
    for (int i = 0; i < N; i++) {
        snprintf(store[i], sizeof store[i], "memory number %d", i);
        texts[i] = store[i];
    }
    float *out = malloc((size_t)N * DIM * sizeof *out);
    CHECK_INT(e->embed(e, texts, N, out, err, sizeof err), REMEM_OK);
    CHECK_INT(embed_server_requests(s), 3); /* 64 + 64 + 22 */
    CHECK_INT(embed_server_max_batch(s), 64);
    CHECK_INT(embed_server_texts(s), N);
    CHECK(rows_match(texts, N, out, DIM)); /* answers came in reverse order */
    for (int i = 0; i < N; i++) {
        double norm2 = 0;
        for (int j = 0; j < DIM; j++) norm2 += (double)out[i * DIM + j] * out[i * DIM + j];
        CHECK_NEAR(norm2, 1.0, 1e-5);
    }
    /* No texts, no request. */
    CHECK_INT(e->embed(e, texts, 0, out, err, sizeof err), REMEM_OK);
    CHECK_INT(embed_server_requests(s), 3);
    free(out);
out:
    embed_destroy(e);
    embed_server_stop(s);
}

/* Empty texts are not sent (servers refuse them) and get zero rows; text
 * that is not UTF-8 is sent with U+FFFD in place of the bad byte. */
static void test_empty_and_invalid_utf8_texts(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(make_http(s, (http_options){.dim = DIM}, &e, err, sizeof err), REMEM_OK);
    if (!e) goto out;
    const char *texts[] = {"first", "", "caf\xe9 au lait"};
    float out[3 * DIM];
    CHECK_INT(e->embed(e, texts, 3, out, err, sizeof err), REMEM_OK);
    CHECK_INT(embed_server_texts(s), 2);
    const char *sent[] = {"first", "caf\xef\xbf\xbd au lait"};
    CHECK(rows_match(sent, 1, out, DIM));
    CHECK(rows_match(sent + 1, 1, out + 2 * DIM, DIM));
    for (int j = 0; j < DIM; j++) CHECK(out[DIM + j] == 0.0f);
    const char *only_empty[] = {""};
    CHECK_INT(e->embed(e, only_empty, 1, out, err, sizeof err), REMEM_OK);
    CHECK_INT(embed_server_requests(s), 1);
    const char *with_null[] = {"x", NULL};
    CHECK_INT(e->embed(e, with_null, 2, out, err, sizeof err), REMEM_EINVAL);
    CHECK_HAS(err, "text 1");
out:
    embed_destroy(e);
    embed_server_stop(s);
}

static void test_retry_then_success(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(make_http(s, (http_options){.dim = DIM, .retries = 3}, &e, err, sizeof err),
              REMEM_OK);
    if (!e) goto out;
    const char *texts[] = {"alpha", "beta"};
    float out[2 * DIM];
    embed_server_fail_next(s, 2, 500);
    CHECK_INT(e->embed(e, texts, 2, out, err, sizeof err), REMEM_OK);
    CHECK_INT(embed_server_requests(s), 3);
    CHECK(rows_match(texts, 2, out, DIM));
    embed_server_fail_next(s, 1, 429);
    CHECK_INT(e->embed(e, texts, 2, out, err, sizeof err), REMEM_OK);
    CHECK_INT(embed_server_requests(s), 5);
    CHECK(rows_match(texts, 2, out, DIM));
out:
    embed_destroy(e);
    embed_server_stop(s);
}

static void test_retries_exhausted(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(make_http(s, (http_options){.dim = DIM, .retries = 2}, &e, err, sizeof err),
              REMEM_OK);
    if (!e) goto out;
    const char *texts[] = {"alpha"};
    float out[DIM];
    embed_server_fail_next(s, 100, 503);
    CHECK_INT(e->embed(e, texts, 1, out, err, sizeof err), REMEM_EEMBED);
    CHECK_INT(embed_server_requests(s), 3);
    char want[256];
    snprintf(want, sizeof want, "%s/embeddings answered HTTP 503 after 3 tries",
             embed_server_url(s));
    CHECK_HAS(err, want);
    CHECK_HAS(err, "injected failure 503"); /* the start of the body */
out:
    embed_destroy(e);
    embed_server_stop(s);
}

static void test_client_errors_not_retried(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(make_http(s, (http_options){.dim = DIM, .retries = 3}, &e, err, sizeof err),
              REMEM_OK);
    if (!e) goto out;
    const char *texts[] = {"alpha"};
    float out[DIM];
    embed_server_fail_next(s, 1, 400);
    CHECK_INT(e->embed(e, texts, 1, out, err, sizeof err), REMEM_EEMBED);
    CHECK_INT(embed_server_requests(s), 1);
    CHECK_HAS(err, "HTTP 400: ");
    CHECK_HAS(err, "injected failure 400");
    CHECK(strstr(err, "tries") == NULL);
    /* The failure was the server's one-off: the next call works. */
    CHECK_INT(e->embed(e, texts, 1, out, err, sizeof err), REMEM_OK);
    CHECK_INT(embed_server_requests(s), 2);
    embed_destroy(e);
    /* A wrong path is a 404, also final. */
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/nope/", embed_server_port(s));
    e = NULL;
    CHECK_INT(make_http(s, (http_options){.dim = DIM, .url = url}, &e, err, sizeof err), REMEM_OK);
    if (e) {
        CHECK_INT(e->embed(e, texts, 1, out, err, sizeof err), REMEM_EEMBED);
        CHECK_INT(embed_server_requests(s), 3);
        CHECK_HAS(err, "/nope/embeddings answered HTTP 404");
    }
out:
    embed_destroy(e);
    embed_server_stop(s);
}

static void test_timeout(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(make_http(s, (http_options){.dim = DIM, .retries = 1, .timeout_ms = 300}, &e, err,
                        sizeof err),
              REMEM_OK);
    if (!e) goto out;
    const char *texts[] = {"alpha"};
    float out[DIM];
    embed_server_set_delay_ms(s, 3000);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_INT(e->embed(e, texts, 1, out, err, sizeof err), REMEM_EEMBED);
    double took = seconds_since(&t0);
    fprintf(stderr, "  two timed-out tries took %.2f s\n", took);
    CHECK(took >= 0.55 && took < 2.5);
    CHECK_HAS(err, "timed out");
    CHECK_HAS(err, "300 ms");
    CHECK_HAS(err, "after 2 tries");
    CHECK_HAS(err, embed_server_url(s));
out:
    embed_destroy(e);
    embed_server_stop(s);
}

static void test_server_down(void) {
    int holder;
    int port = embed_server_refusing_port(&holder);
    CHECK(port > 0);
    if (port <= 0) return;
    char url[64], want[160], err[512];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1", port);
    snprintf(want, sizeof want,
             "http embedder: POST %s/embeddings: connection refused after 4 tries", url);
    /* The probe fails, so creation does. */
    embedder *e = (embedder *)&holder;
    CHECK_INT(make_http(NULL, (http_options){.url = url, .retries = 3}, &e, err, sizeof err),
              REMEM_EEMBED);
    CHECK(e == NULL);
    CHECK_STR(err, want);
    /* With a given dim creation works, and embedding says why it cannot. */
    CHECK_INT(
        make_http(NULL, (http_options){.url = url, .retries = 3, .dim = DIM}, &e, err, sizeof err),
        REMEM_OK);
    if (e) {
        const char *texts[] = {"alpha"};
        float out[DIM];
        CHECK_INT(e->embed(e, texts, 1, out, err, sizeof err), REMEM_EEMBED);
        CHECK_STR(err, want);
    }
    embed_destroy(e);
    embed_server_release_port(holder);
}

static void test_wrong_dim(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    const char *texts[] = {"alpha", "beta"};
    float out[2 * DIM];
    /* Learned by the probe, then the server changes its mind. */
    CHECK_INT(make_http(s, (http_options){0}, &e, err, sizeof err), REMEM_OK);
    if (e) {
        embed_server_set_mode(s, EMBED_SERVER_WRONG_DIM);
        CHECK_INT(e->embed(e, texts, 2, out, err, sizeof err), REMEM_EDIM);
        CHECK_HAS(err, "dimension 17, expected 16");
        CHECK_HAS(err, embed_server_url(s));
    }
    embed_destroy(e);
    /* Configured, and the server never matched it. */
    e = NULL;
    CHECK_INT(make_http(s, (http_options){.dim = 32}, &e, err, sizeof err), REMEM_OK);
    if (e) {
        float big[2 * 32];
        CHECK_INT(e->embed(e, texts, 2, big, err, sizeof err), REMEM_EDIM);
        CHECK_HAS(err, "expected 32");
    }
    embed_destroy(e);
    embed_server_stop(s);
}

static void test_bad_answers(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(make_http(s, (http_options){.dim = DIM, .retries = 3}, &e, err, sizeof err),
              REMEM_OK);
    if (!e) goto out;
    const char *texts[] = {"alpha", "beta", "gamma"};
    float out[3 * DIM];
    struct {
        embed_server_mode mode;
        const char *says;
    } cases[] = {
        {EMBED_SERVER_MALFORMED, "malformed JSON from "},
        {EMBED_SERVER_NO_DATA, "has no \"data\" array"},
        {EMBED_SERVER_SHORT, "returned 2 embeddings for 3 texts"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int before = embed_server_requests(s);
        embed_server_set_mode(s, cases[i].mode);
        CHECK_INT(e->embed(e, texts, 3, out, err, sizeof err), REMEM_EEMBED);
        CHECK_HAS(err, cases[i].says);
        CHECK_HAS(err, embed_server_url(s));
        CHECK_INT(embed_server_requests(s), before + 1); /* not retried */
    }
    embed_server_set_mode(s, EMBED_SERVER_OK);
    CHECK_INT(e->embed(e, texts, 3, out, err, sizeof err), REMEM_OK);
    CHECK(rows_match(texts, 3, out, DIM));
out:
    embed_destroy(e);
    embed_server_stop(s);
}

/* A failure in the second of three batches fails the call and stops it. */
static void test_all_or_nothing(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(make_http(s, (http_options){.dim = DIM, .batch = 2}, &e, err, sizeof err), REMEM_OK);
    if (!e) goto out;
    const char *texts[] = {"a1", "a2", "b1", "b2", "c1"};
    float out[5 * DIM];
    embed_server_fail_after(s, 1, 1, 422);
    CHECK_INT(e->embed(e, texts, 5, out, err, sizeof err), REMEM_EEMBED);
    CHECK_INT(embed_server_requests(s), 2);
    CHECK_HAS(err, "HTTP 422");
out:
    embed_destroy(e);
    embed_server_stop(s);
}

static void test_auth_header(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512], auth[128];
    CHECK_INT(make_http(s, (http_options){.api_key = "sk-test-123"}, &e, err, sizeof err),
              REMEM_OK);
    embed_server_last_auth(s, auth, sizeof auth);
    CHECK_STR(auth, "Bearer sk-test-123");
    embed_destroy(e);
    e = NULL;
    CHECK_INT(make_http(s, (http_options){0}, &e, err, sizeof err), REMEM_OK);
    embed_server_last_auth(s, auth, sizeof auth);
    CHECK_STR(auth, "");
    embed_destroy(e);
    embed_server_stop(s);
}

/* The default backoff waits 200 ms, then 400 ms. */
static void test_default_backoff(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embed_config cfg = {0};
    cfg.url = embed_server_url(s);
    cfg.model = "m";
    cfg.dim = DIM;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(embed_http_create(&cfg, &e, err, sizeof err), REMEM_OK);
    if (!e) goto out;
    const char *texts[] = {"alpha"};
    float out[DIM];
    embed_server_fail_next(s, 2, 502);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_INT(e->embed(e, texts, 1, out, err, sizeof err), REMEM_OK);
    double took = seconds_since(&t0);
    fprintf(stderr, "  two retries with the default backoff took %.2f s\n", took);
    CHECK(took >= 0.59 && took < 3.0);
    CHECK_INT(embed_server_requests(s), 3);
out:
    embed_destroy(e);
    embed_server_stop(s);
}

static void test_bad_config(void) {
    embed_config cfg = {0};
    embedder *e = NULL;
    char err[512];
    CHECK_INT(embed_http_create(&cfg, &e, err, sizeof err), REMEM_EINVAL);
    CHECK_HAS(err, "URL");
    cfg.url = "http://127.0.0.1:1/v1";
    CHECK_INT(embed_http_create(&cfg, &e, err, sizeof err), REMEM_EINVAL);
    CHECK_HAS(err, "model");
    char long_name[200];
    memset(long_name, 'm', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    cfg.model = long_name;
    CHECK_INT(embed_http_create(&cfg, &e, err, sizeof err), REMEM_EINVAL);
    CHECK_HAS(err, "longer than");
    cfg.model = "m";
    cfg.batch = -1;
    CHECK_INT(embed_http_create(&cfg, &e, err, sizeof err), REMEM_EINVAL);
    CHECK(e == NULL);
}

typedef struct thread_job {
    embedder *e;
    const char *const *texts;
    size_t n;
    float *out;
    int rc;
} thread_job;

static void *embed_in_thread(void *arg) {
    thread_job *job = arg;
    char err[512];
    for (int round = 0; round < 10 && job->rc == REMEM_OK; round++)
        job->rc = job->e->embed(job->e, job->texts, job->n, job->out, err, sizeof err);
    return NULL;
}

static void test_two_threads(void) {
    embed_server *s = embed_server_start(DIM);
    if (!s) return;
    embedder *e = NULL;
    char err[512];
    CHECK_INT(make_http(s, (http_options){.batch = 3}, &e, err, sizeof err), REMEM_OK);
    if (!e) goto out;
    const char *a[] = {"one", "two", "three", "four", "five"};
    const char *b[] = {"six", "seven", "eight", "nine"};
    float oa[5 * DIM], ob[4 * DIM];
    thread_job ja = {e, a, 5, oa, 0}, jb = {e, b, 4, ob, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, embed_in_thread, &ja);
    pthread_create(&tb, NULL, embed_in_thread, &jb);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK_INT(ja.rc, REMEM_OK);
    CHECK_INT(jb.rc, REMEM_OK);
    CHECK(rows_match(a, 5, oa, DIM));
    CHECK(rows_match(b, 4, ob, DIM));
    CHECK_INT(embed_server_requests(s), 1 + 10 * 2 + 10 * 2);
out:
    embed_destroy(e);
    embed_server_stop(s);
}

/* The parser alone (embed_http_parse), on answers the stand-in server does
 * not make: each bad one is refused with its reason and writes nothing. */
static void test_parser_alone(void) {
    struct {
        const char *body;
        size_t n;
        int dim, rc;
        const char *says;
    } cases[] = {
        {"{\"data\":[{\"index\":1,\"embedding\":[0,2]},{\"index\":0,\"embedding\":[3,4]}]}", 2, 0,
         REMEM_OK, NULL},
        {"{\"data\":[{\"embedding\":[3,4]}]}", 1, 2, REMEM_OK, NULL},
        {"{\"data\":[{\"index\":0,\"embedding\":[1e39,1]}]}", 1, 0, REMEM_EEMBED,
         "element 0 is not a finite number"},
        {"{\"data\":[{\"index\":0,\"embedding\":[\"0.1\",1]}]}", 1, 0, REMEM_EEMBED,
         "element 0 is not a finite number"},
        {"{\"data\":[{\"index\":0,\"embedding\":[NaN]}]}", 1, 0, REMEM_EEMBED, "malformed JSON"},
        {"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]}]}", 1, 2, REMEM_EDIM,
         "dimension 3, expected 2"},
        {"{\"data\":[{\"index\":0,\"embedding\":[1]},{\"index\":0,\"embedding\":[1]}]}", 2, 0,
         REMEM_EEMBED, "repeated"},
        {"{\"data\":[{\"index\":\"0\",\"embedding\":[1]}]}", 1, 0, REMEM_EEMBED, "index"},
        {"{\"data\":[{\"index\":0,\"embedding\":{\"0\":1}}]}", 1, 0, REMEM_EEMBED,
         "no \"embedding\" array"},
        {"{\"error\":{\"message\":\"model not found\"}}", 1, 0, REMEM_EEMBED,
         "no \"data\" array: model not found"},
        {"[[[[[[[[[[]]]]]]]]]]", 1, 0, REMEM_EEMBED, "no \"data\" array"},
        {"", 1, 0, REMEM_EEMBED, "malformed JSON from src"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        float out[4] = {9, 9, 9, 9};
        size_t rows[2] = {1, 0};
        char err[256] = "";
        int dim = cases[i].dim;
        int rc = embed_http_parse(cases[i].body, strlen(cases[i].body), "src", cases[i].n, &dim,
                                  out, rows, err, sizeof err);
        CHECK_INT(rc, cases[i].rc);
        if (cases[i].says) {
            CHECK_HAS(err, cases[i].says);
            for (int j = 0; j < 4; j++) CHECK(out[j] == 9);
        }
    }
    /* The first case, placed by index then rows, and normalised: data[0]
     * (index 1) goes to rows[1] = row 0. */
    float out[4];
    size_t rows[2] = {1, 0};
    int dim = 0;
    char err[256];
    CHECK_INT(embed_http_parse(cases[0].body, strlen(cases[0].body), "src", 2, &dim, out, rows, err,
                               sizeof err),
              REMEM_OK);
    CHECK_INT(dim, 2);
    CHECK_NEAR(out[0], 0, 1e-7);
    CHECK_NEAR(out[1], 1, 1e-7);
    CHECK_NEAR(out[2], 0.6, 1e-6);
    CHECK_NEAR(out[3], 0.8, 1e-6);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    /* Loopback only: a proxy from the environment must not get in between. */
    setenv("no_proxy", "*", 1);
    setenv("NO_PROXY", "*", 1);
    RUN(test_probe_learns_dim);
    RUN(test_batching_order_and_normalisation);
    RUN(test_empty_and_invalid_utf8_texts);
    RUN(test_retry_then_success);
    RUN(test_retries_exhausted);
    RUN(test_client_errors_not_retried);
    RUN(test_timeout);
    RUN(test_server_down);
    RUN(test_wrong_dim);
    RUN(test_bad_answers);
    RUN(test_all_or_nothing);
    RUN(test_auth_header);
    RUN(test_default_backoff);
    RUN(test_bad_config);
    RUN(test_two_threads);
    RUN(test_parser_alone);
    return TEST_EXIT();
}
