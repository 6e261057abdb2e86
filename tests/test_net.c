/*
 * test_net.c: the net client (src/net/) against the in-process stand-in
 * server of tests/support/embed_server.c on a loopback port: a JSON POST
 * with and without a bearer key, a 500 then success (retried), retries
 * exhausted, a 4xx not retried, a slow server (timeout), a refused
 * connection, an answer over the size cap (in memory and streamed), a
 * streamed download into a sink with progress, an error answer kept out of
 * the sink, a sink's own error, and the backoff schedule. Retries wait
 * 10 ms here. A net_cancel: its deadline caps a slow try and stops the
 * retries (REMEM_ETIMEOUT), and its stop flag, set from another thread,
 * cuts a try and a backoff wait.
 */
#include "test.h"

#include <pthread.h>
#include <time.h>

#include "net/net.h"
#include "remem.h"
#include "support/embed_server.h"

static const char BODY[] = "{\"model\":\"m\",\"input\":[\"alpha\",\"beta\"]}";

static double seconds_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* A POST of BODY to url with the given time limit and retries. */
static net_request post(const char *url, long timeout_ms, int retries) {
    net_request rq = {
        .what = "test",
        .url = url,
        .body = BODY,
        .body_len = sizeof BODY - 1,
        .accept = "application/json",
        .timeout_ms = timeout_ms,
        .retries = retries,
        .backoff_ms = 10,
    };
    return rq;
}

static void test_post_json_and_bearer(void) {
    embed_server *s = embed_server_start(4);
    if (!s) return;
    char url[128], err[512] = "", auth[256];
    snprintf(url, sizeof url, "%s/embeddings", embed_server_url(s));
    net_client *c = net_client_new(err, sizeof err);
    CHECK(c != NULL);
    net_response resp = {0};
    net_request rq = post(url, 5000, 0);
    rq.bearer = "sk-test-123";
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_OK);
    CHECK_INT(resp.status, 200);
    CHECK_INT(resp.tries, 1);
    CHECK(resp.body.data && strstr(resp.body.data, "\"embedding\""));
    CHECK_INT(resp.body.len, strlen(resp.body.data));
    embed_server_last_auth(s, auth, sizeof auth);
    CHECK_STR(auth, "Bearer sk-test-123");
    CHECK_INT(embed_server_texts(s), 2);
    /* The same client again (connection reused), without a key: no header. */
    rq.bearer = NULL;
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_OK);
    embed_server_last_auth(s, auth, sizeof auth);
    CHECK_STR(auth, "");
    rq.bearer = "";
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_OK);
    embed_server_last_auth(s, auth, sizeof auth);
    CHECK_STR(auth, "");
    CHECK_INT(embed_server_requests(s), 3);
    net_response_free(&resp);
    net_client_free(c);
    embed_server_stop(s);
}

static void test_500_then_success(void) {
    embed_server *s = embed_server_start(4);
    if (!s) return;
    char url[128], err[512] = "";
    snprintf(url, sizeof url, "%s/embeddings", embed_server_url(s));
    net_client *c = net_client_new(err, sizeof err);
    net_response resp = {0};
    net_request rq = post(url, 5000, 2);
    embed_server_fail_next(s, 1, 500);
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_OK);
    CHECK_INT(resp.status, 200);
    CHECK_INT(resp.tries, 2);
    CHECK_INT(embed_server_requests(s), 2);
    /* The failed try's error body is gone: only the answer is there. */
    CHECK(resp.body.data && strstr(resp.body.data, "injected") == NULL);
    CHECK(strstr(resp.body.data, "\"data\"") != NULL);
    /* 429 is retried too. */
    embed_server_fail_next(s, 2, 429);
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_OK);
    CHECK_INT(resp.tries, 3);
    net_response_free(&resp);
    net_client_free(c);
    embed_server_stop(s);
}

static void test_retries_exhausted_and_4xx(void) {
    embed_server *s = embed_server_start(4);
    if (!s) return;
    char url[128], err[512] = "", want[256];
    snprintf(url, sizeof url, "%s/embeddings", embed_server_url(s));
    net_client *c = net_client_new(err, sizeof err);
    net_response resp = {0};
    net_request rq = post(url, 5000, 2);
    embed_server_fail_next(s, 10, 503);
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EIO);
    CHECK_INT(resp.status, 503);
    CHECK_INT(resp.tries, 3);
    CHECK_INT(embed_server_requests(s), 3);
    snprintf(want, sizeof want, "test: POST %s answered HTTP 503 after 3 tries: ", url);
    CHECK_HAS(err, want);
    CHECK_HAS(err, "injected failure 503");
    CHECK(resp.body.data && strstr(resp.body.data, "injected failure 503")); /* kept whole */
    /* A 400 is final: one try, no "tries" in the message. */
    embed_server_fail_next(s, 1, 400);
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EIO);
    CHECK_INT(resp.status, 400);
    CHECK_INT(resp.tries, 1);
    CHECK_INT(embed_server_requests(s), 4);
    snprintf(want, sizeof want, "test: POST %s answered HTTP 400: ", url);
    CHECK_HAS(err, want);
    CHECK(strstr(err, "tries") == NULL);
    net_response_free(&resp);
    net_client_free(c);
    embed_server_stop(s);
}

static void test_slow_server_times_out(void) {
    embed_server *s = embed_server_start(4);
    if (!s) return;
    char url[128], err[512] = "", want[256];
    snprintf(url, sizeof url, "%s/embeddings", embed_server_url(s));
    net_client *c = net_client_new(err, sizeof err);
    net_response resp = {0};
    net_request rq = post(url, 200, 1);
    embed_server_set_delay_ms(s, 3000);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EIO);
    double took = seconds_since(&t0);
    fprintf(stderr, "  two timed-out tries took %.2f s\n", took);
    CHECK(took >= 0.39 && took < 2.0);
    CHECK_INT(resp.tries, 2);
    CHECK_INT(resp.status, 0);
    snprintf(want, sizeof want, "test: POST %s: timed out (no answer within 200 ms) after 2 tries",
             url);
    CHECK_STR(err, want);
    net_response_free(&resp);
    net_client_free(c);
    embed_server_stop(s);
}

static void *stop_later(void *arg) {
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    atomic_store(&((net_cancel *)arg)->stop, 1);
    return NULL;
}

static void test_cancel_deadline_and_stop(void) {
    embed_server *s = embed_server_start(4);
    if (!s) return;
    char url[128], err[512] = "";
    snprintf(url, sizeof url, "%s/embeddings", embed_server_url(s));
    net_client *c = net_client_new(err, sizeof err);
    net_response resp = {0};
    net_cancel cancel = {0};
    /* A slow server, 30 s tries, 3 retries: the deadline ends it all. */
    net_request rq = post(url, 30000, 3);
    rq.cancel = &cancel;
    embed_server_set_delay_ms(s, 3000);
    atomic_store(&cancel.deadline_ms, net_mono_ms() + 400);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_ETIMEOUT);
    double took = seconds_since(&t0);
    CHECK(took >= 0.35 && took < 2.0);
    CHECK_INT(resp.tries, 1);
    CHECK_HAS(err, "no answer within the caller's deadline after 1 try");
    /* Failing fast with long waits between retries: no wait past it. */
    embed_server_set_delay_ms(s, 0);
    embed_server_fail_next(s, 10, 503);
    rq.backoff_ms = 2000;
    atomic_store(&cancel.deadline_ms, net_mono_ms() + 500);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_ETIMEOUT);
    CHECK(seconds_since(&t0) < 1.0);
    /* No deadline; stop set from another thread, during a slow try and
     * then during a backoff wait. */
    atomic_store(&cancel.deadline_ms, 0);
    embed_server_set_delay_ms(s, 5000);
    for (int round = 0; round < 2; round++) {
        if (round) {
            embed_server_set_delay_ms(s, 0);
            embed_server_fail_next(s, 10, 503);
            rq.backoff_ms = 5000;
        }
        atomic_store(&cancel.stop, 0);
        pthread_t t;
        pthread_create(&t, NULL, stop_later, &cancel);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_ETIMEOUT);
        took = seconds_since(&t0);
        pthread_join(t, NULL);
        CHECK(took < 2.5);
        CHECK_HAS(err, "interrupted");
    }
    net_response_free(&resp);
    net_client_free(c);
    embed_server_stop(s);
}

static void test_connection_refused(void) {
    int holder;
    int port = embed_server_refusing_port(&holder);
    CHECK(port > 0);
    if (port <= 0) return;
    char url[128], err[512] = "", want[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/embeddings", port);
    net_client *c = net_client_new(err, sizeof err);
    net_response resp = {0};
    net_request rq = post(url, 2000, 2);
    rq.what = "http embedder";
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EIO);
    snprintf(want, sizeof want, "http embedder: POST %s: connection refused after 3 tries", url);
    CHECK_STR(err, want);
    CHECK_INT(resp.tries, 3);
    CHECK_INT(resp.status, 0);
    /* No retries: one try, and the message says so. */
    rq.retries = 0;
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EIO);
    CHECK_HAS(err, "connection refused after 1 try");
    /* No URL at all. */
    rq.url = "";
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EINVAL);
    CHECK_STR(err, "http embedder: no URL to connect to");
    net_response_free(&resp);
    net_client_free(c);
    embed_server_release_port(holder);
}

/* A sink that collects into a buffer, can fail on demand, counts restarts. */
typedef struct collect {
    unsigned char *data;
    size_t len, cap;
    int fail, restarts, progress_calls;
    int64_t last_done, last_total;
} collect;

static int collect_write(void *ctx, const void *data, size_t n, char *err, size_t errcap) {
    collect *c = ctx;
    if (c->fail) {
        snprintf(err, errcap, "sink: disk full");
        return REMEM_EIO;
    }
    if (c->len + n > c->cap) {
        snprintf(err, errcap, "sink: over the test's buffer");
        return REMEM_ENOMEM;
    }
    memcpy(c->data + c->len, data, n);
    c->len += n;
    return 0;
}

static int collect_restart(void *ctx, char *err, size_t errcap) {
    (void)err;
    (void)errcap;
    collect *c = ctx;
    c->len = 0;
    c->restarts++;
    return 0;
}

static void collect_progress(void *ctx, int64_t done, int64_t total) {
    collect *c = ctx;
    c->progress_calls++;
    c->last_done = done;
    c->last_total = total;
}

static void test_download_to_sink(void) {
    embed_server *s = embed_server_start(4);
    if (!s) return;
    enum { N = 300000 };
    char url[128], err[512] = "", want[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/blob/%d", embed_server_port(s), N);
    collect sink = {malloc(N + 16), 0, N + 16, 0, 0, 0, 0, 0};
    unsigned char *expect = malloc(N);
    embed_server_blob(N, expect);
    net_client *c = net_client_new(err, sizeof err);
    net_response resp = {0};
    net_request rq = {
        .what = "pull",
        .url = url,
        .timeout_ms = -1,
        .stall_ms = 5000,
        .retries = 2,
        .backoff_ms = 10,
        .max_bytes = N,
        .cap_name = "the expected file",
        .write = collect_write,
        .restart = collect_restart,
        .sink = &sink,
        .progress = collect_progress,
        .progress_ctx = &sink,
    };
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_OK);
    CHECK_INT(resp.status, 200);
    CHECK_INT(sink.len, N);
    CHECK(sink.len == N && memcmp(sink.data, expect, N) == 0);
    CHECK_INT(resp.body.len, 0); /* the answer went to the sink only */
    CHECK(sink.progress_calls > 0);
    CHECK_INT(sink.last_done, N);
    CHECK_INT(sink.last_total, N);

    /* An error answer never reaches the sink; it is retried (5xx) and the
     * body of the last one is kept for the message. */
    sink.len = 0;
    embed_server_fail_next(s, 1, 502);
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_OK);
    CHECK_INT(resp.tries, 2);
    CHECK_INT(sink.restarts, 0); /* the 502's body never reached it */
    CHECK_INT(sink.len, N);
    sink.len = 0;
    embed_server_fail_next(s, 1, 404);
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EIO);
    CHECK_INT(sink.len, 0);
    CHECK_HAS(err, "pull: GET ");
    CHECK_HAS(err, "answered HTTP 404: ");
    CHECK_HAS(err, "injected failure 404");

    /* One byte more than the cap: refused, not retried. */
    int before = embed_server_requests(s);
    rq.max_bytes = N - 1;
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EIO);
    snprintf(want, sizeof want, "pull: GET %s: larger than the expected file", url);
    CHECK_STR(err, want);
    CHECK_INT(embed_server_requests(s), before + 1);
    CHECK(sink.len <= N - 1); /* what came before the cap; the caller discards it */
    sink.len = 0;

    /* The sink's own error ends the request with its message, no retry. */
    rq.max_bytes = N;
    sink.fail = 1;
    before = embed_server_requests(s);
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EIO);
    CHECK_STR(err, "sink: disk full");
    CHECK_INT(embed_server_requests(s), before + 1);
    net_response_free(&resp);
    net_client_free(c);
    free(sink.data);
    free(expect);
    embed_server_stop(s);
}

static void test_oversized_answer_in_memory(void) {
    embed_server *s = embed_server_start(64);
    if (!s) return;
    char url[128], err[512] = "", want[256];
    snprintf(url, sizeof url, "%s/embeddings", embed_server_url(s));
    net_client *c = net_client_new(err, sizeof err);
    net_response resp = {0};
    net_request rq = post(url, 5000, 3);
    rq.max_bytes = 100; /* two 64-dimensional vectors are far more */
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EIO);
    snprintf(want, sizeof want, "test: POST %s: larger than 100 bytes", url);
    CHECK_STR(err, want);
    CHECK_INT(resp.tries, 1); /* not retried: it would not get smaller */
    CHECK_INT(embed_server_requests(s), 1);
    CHECK_INT(resp.body.len, 0);
    /* The same through a GET. */
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/blob/101", embed_server_port(s));
    rq.body = NULL;
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_EIO);
    CHECK_HAS(err, "larger than 100 bytes");
    rq.max_bytes = 101;
    CHECK_INT(net_perform(c, &rq, &resp, err, sizeof err), REMEM_OK);
    CHECK_INT(resp.body.len, 101);
    net_response_free(&resp);
    net_client_free(c);
    embed_server_stop(s);
}

static void test_backoff_schedule(void) {
    CHECK_INT(net_backoff_ms(0, 1), NET_DEFAULT_BACKOFF_MS);
    CHECK_INT(net_backoff_ms(200, 1), 200);
    CHECK_INT(net_backoff_ms(200, 2), 400);
    CHECK_INT(net_backoff_ms(200, 3), 800);
    CHECK_INT(net_backoff_ms(200, 6), NET_MAX_BACKOFF_MS);
    CHECK_INT(net_backoff_ms(200, 1000), NET_MAX_BACKOFF_MS);
    CHECK_INT(net_backoff_ms(9000, 1), NET_MAX_BACKOFF_MS);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    /* Loopback only: a proxy from the environment must not get in between. */
    setenv("no_proxy", "*", 1);
    RUN(test_post_json_and_bearer);
    RUN(test_500_then_success);
    RUN(test_retries_exhausted_and_4xx);
    RUN(test_slow_server_times_out);
    RUN(test_connection_refused);
    RUN(test_cancel_deadline_and_stop);
    RUN(test_download_to_sink);
    RUN(test_oversized_answer_in_memory);
    RUN(test_backoff_schedule);
    return TEST_EXIT();
}
