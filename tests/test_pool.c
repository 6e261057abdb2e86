/*
 * test_pool.c: the server's handle pool (server/pool.c), called directly:
 * a bad store fails at pool_init with a message that names it; handles
 * come back most recently used first, preferring the idle one that last
 * served the request's namespace; the pool never opens more than cap
 * handles, and a request waits (rather than fails) while all are out; and
 * every handle sees the others' commits. The file is #included, as
 * tests/test_mcp.c does for the MCP face.
 */
#include <pthread.h>
#include <unistd.h>

#include "../server/pool.c"
#include "test.h"

static char dir[64], db_path[128];

static remem_options hash_options(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    return o;
}

static void test_bad_store(void) {
    handle_pool p;
    remem_options o = hash_options();
    char err[512] = "";
    CHECK_INT(pool_init(&p, "/nonexistent/dir/x.db", &o, 2, err, sizeof err), -1);
    CHECK_HAS(err, "/nonexistent/dir/x.db");
    CHECK_INT(p.n_open, 0);
    pool_close(&p);
}

static void test_lifo_and_namespace_preference(void) {
    handle_pool p;
    remem_options o = hash_options();
    char err[512] = "";
    CHECK_INT(pool_init(&p, db_path, &o, 3, err, sizeof err), 0);
    CHECK_INT(p.n_open, 1);
    CHECK_INT(p.n_idle, 1);
    remem *a = pool_get(&p, "x", err, sizeof err);
    remem *b = pool_get(&p, "y", err, sizeof err);
    CHECK(a && b && a != b);
    CHECK_INT(p.n_open, 2);
    pool_put(&p, a, "x");
    pool_put(&p, b, "y");                           /* b is on top */
    CHECK(pool_get(&p, "x", err, sizeof err) == a); /* the one that served x */
    pool_put(&p, a, "x");
    CHECK(pool_get(&p, NULL, err, sizeof err) == a); /* no namespace: the top */
    CHECK(pool_get(&p, "z", err, sizeof err) == b);  /* unknown: the top */
    CHECK_INT(p.n_idle, 0);
    pool_put(&p, a, NULL);
    pool_put(&p, b, NULL);
    CHECK_INT(p.n_open, 2);
    pool_close(&p);
}

typedef struct waiter {
    handle_pool *p;
    remem *got;
    volatile int done;
} waiter;

static void *get_in_thread(void *arg) {
    waiter *w = arg;
    char err[256];
    w->got = pool_get(w->p, NULL, err, sizeof err);
    w->done = 1;
    return NULL;
}

/* All cap handles out: the next request waits for one to come back, and
 * never opens a cap+1-th. */
static void test_cap_waits(void) {
    handle_pool p;
    remem_options o = hash_options();
    char err[512] = "";
    CHECK_INT(pool_init(&p, db_path, &o, 2, err, sizeof err), 0);
    remem *a = pool_get(&p, NULL, err, sizeof err);
    remem *b = pool_get(&p, NULL, err, sizeof err);
    CHECK(a && b);
    waiter w = {&p, NULL, 0};
    pthread_t t;
    CHECK_INT(pthread_create(&t, NULL, get_in_thread, &w), 0);
    usleep(200 * 1000);
    CHECK(!w.done);
    CHECK_INT(p.n_open, 2);
    pool_put(&p, b, NULL);
    pthread_join(t, NULL);
    CHECK(w.done);
    CHECK(w.got == b);
    CHECK_INT(p.n_open, 2);
    pool_put(&p, a, NULL);
    pool_put(&p, w.got, NULL);
    pool_close(&p);
}

/* One handle's commit is seen by another on its next call. */
static void test_handles_share_the_store(void) {
    handle_pool p;
    remem_options o = hash_options();
    char err[512] = "";
    CHECK_INT(pool_init(&p, db_path, &o, 2, err, sizeof err), 0);
    remem *a = pool_get(&p, "s", err, sizeof err);
    remem *b = pool_get(&p, "s", err, sizeof err);
    CHECK(a && b && a != b);
    remem_record *r = NULL;
    CHECK_INT(remem_get(b, "s", "m1", &r), REMEM_ENOTFOUND);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "s";
    m.id = "m1";
    m.text = "written by one pooled handle";
    CHECK_INT(remem_add(a, &m, NULL, 0, NULL), REMEM_OK);
    CHECK_INT(remem_get(b, "s", "m1", &r), REMEM_OK);
    if (r) CHECK_STR(remem_record_memory(r)->text, m.text);
    remem_record_free(r);
    pool_put(&p, a, "s");
    pool_put(&p, b, "s");
    pool_close(&p);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    snprintf(dir, sizeof dir, "/tmp/remem-pool-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    snprintf(db_path, sizeof db_path, "%s/pool.db", dir);
    RUN(test_bad_store);
    RUN(test_lifo_and_namespace_preference);
    RUN(test_cap_waits);
    RUN(test_handles_share_the_store);
    const char *suffix[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char f[160];
        snprintf(f, sizeof f, "%s%s", db_path, suffix[i]);
        unlink(f);
    }
    rmdir(dir);
    return TEST_EXIT();
}
