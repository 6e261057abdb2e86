/*
 * test_lessons_writes.c: how the lesson operations write (src/lessons/
 * records.c). They change only the fields they own, on the lesson as it is
 * stored when they write, inside the store's transaction:
 *   - an importance set by an update, and an archive by forget, survive a
 *     later lesson.hints and lesson.outcome (the lesson is not written back
 *     whole with its defaults, nor handed out again once archived);
 *   - two processes, each with its own handle on one store, hammering
 *     hints and outcomes on the same lesson lose no count;
 *   - no lock spans an embedder call: another namespace's lesson.event
 *     completes while a lesson.hints waits for a slow embedder.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>

#include "support/engine_fixture.h"

static json_t *call(remem *db, const char *op, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    json_t *a = json_vpack_ex(NULL, 0, fmt, ap);
    va_end(ap);
    char *args = json_dumps(a, JSON_COMPACT), *out = NULL;
    json_decref(a);
    int rc = remem_call(db, op, args, strlen(args), &out);
    free(args);
    if (rc) {
        fprintf(stderr, "  %s: %s\n", op, remem_errmsg(db));
        return NULL;
    }
    json_t *j = json_loads(out, 0, NULL);
    remem_free(out);
    return j;
}

static char *add_lesson(remem *db, const char *ns) {
    json_t *r = call(db, "lesson.add", "{ss ss ss}", "ns", ns, "domain", "sqlite", "rule",
                     "quote identifiers that clash with keywords");
    char *id = r ? strdup(json_string_value(json_object_get(r, "lesson_id"))) : NULL;
    json_decref(r);
    return id;
}

static int hinted(json_t *h, const char *id) {
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(h, "hints"), i, e) {
        if (!strcmp(json_string_value(json_object_get(e, "lesson_id")), id)) return 1;
    }
    return 0;
}

static json_t *hints(remem *db, const char *ns) {
    return call(db, "lesson.hints", "{ss ss ss}", "ns", ns, "domain", "sqlite", "task",
                "select from the order table");
}

/* The stored memory of id: its importance, tier and metadata (a new
 * reference, or NULL). */
static json_t *stored(remem *db, const char *ns, const char *id, double *importance,
                      char tier[16]) {
    remem_record *r = NULL;
    if (remem_get(db, ns, id, &r)) return NULL;
    const remem_memory *m = remem_record_memory(r);
    *importance = m->importance;
    snprintf(tier, 16, "%s", m->tier);
    json_t *meta = json_loads(m->metadata, 0, NULL);
    remem_record_free(r);
    return meta;
}

static void test_update_survives_hints(void) {
    remem *db = open_store(":memory:");
    char *id = add_lesson(db, "w");
    CHECK(id != NULL);
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_IMPORTANCE;
    p.importance = 0.99;
    CHECK_INT(remem_update(db, "w", id, &p), REMEM_OK);
    json_t *h = hints(db, "w");
    CHECK(h && hinted(h, id));
    json_decref(h);
    double imp = 0;
    char tier[16];
    json_t *m = stored(db, "w", id, &imp, tier);
    CHECK(m != NULL);
    CHECK(fabs(imp - 0.99) < 1e-9);
    CHECK_INT(json_integer_value(json_object_get(m, "retrieval_count")), 1);
    json_decref(m);
    free(id);
    remem_close(db);
}

static void test_archive_survives_outcome(void) {
    remem *db = open_store(":memory:");
    char *id = add_lesson(db, "w");
    CHECK(id != NULL);
    json_t *h = hints(db, "w");
    CHECK(h && hinted(h, id));
    json_decref(h);
    CHECK_INT(remem_forget(db, "w", id, 0), REMEM_OK);
    json_t *o = call(db, "lesson.outcome", "{ss ss ss ss s[s]}", "ns", "w", "run", "r1", "domain",
                     "sqlite", "result", "pass", "lessons", id);
    CHECK(o != NULL);
    json_decref(o);
    double imp = 0;
    char tier[16] = "";
    json_t *m = stored(db, "w", id, &imp, tier);
    CHECK_STR(tier, "archived");
    /* The outcome measured it all the same. */
    CHECK_INT(json_integer_value(json_object_get(json_object_get(m, "relevant_runs"), "with")), 1);
    json_decref(m);
    h = hints(db, "w");
    CHECK(h && !hinted(h, id));
    json_decref(h);
    free(id);
    remem_close(db);
}

#define ROUNDS 25

/* One process's share: ROUNDS hints, and an outcome every fifth. */
static int hammer(const char *path, int who) {
    remem *db = open_store(path);
    int bad = 0;
    for (int i = 0; i < ROUNDS; i++) {
        json_t *h = hints(db, "w");
        bad += !h || json_array_size(json_object_get(h, "hints")) != 1;
        json_decref(h);
        if (i % 5 == 4) {
            char run[32];
            snprintf(run, sizeof run, "p%d-%d", who, i);
            json_t *o = call(db, "lesson.outcome", "{ss ss ss ss}", "ns", "w", "run", run,
                             "domain", "sqlite", "result", "pass");
            bad += !o;
            json_decref(o);
        }
    }
    remem_close(db);
    return bad;
}

static size_t count_kind(remem *db, const char *kind) {
    char *js = NULL;
    if (remem_stats(db, "w", &js)) return 0;
    json_t *o = json_loads(js, 0, NULL);
    remem_free(js);
    size_t n = (size_t)json_integer_value(json_object_get(json_object_get(o, "by_kind"), kind));
    json_decref(o);
    return n;
}

static void test_two_processes_lose_no_count(void) {
    char dir[] = "/tmp/remem-lsnw-XXXXXX", path[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/s.db", dir);
    remem *db = open_store(path);
    char *id = add_lesson(db, "w");
    CHECK(id != NULL);
    pid_t kid[2];
    for (int k = 0; k < 2; k++)
        if ((kid[k] = fork()) == 0) _exit(hammer(path, k) ? 1 : 0);
    for (int k = 0; k < 2; k++) {
        int st = 0;
        waitpid(kid[k], &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    double imp = 0;
    char tier[16];
    json_t *m = stored(db, "w", id, &imp, tier);
    CHECK(m != NULL);
    CHECK_INT(json_integer_value(json_object_get(m, "retrieval_count")), 2 * ROUNDS);
    CHECK_INT(count_kind(db, "hint_log"), 2 * ROUNDS);
    CHECK_INT(count_kind(db, "run"), 2 * ROUNDS / 5);
    /* The last outcome measured every run, the other process's too. */
    CHECK_INT(json_integer_value(json_object_get(json_object_get(m, "relevant_runs"), "without")),
              2 * ROUNDS / 5);
    json_decref(m);
    free(id);
    remem_close(db);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_INT(system(cmd), 0);
}

typedef struct slow_hints {
    remem *db;
    atomic_int done;
    int ok;
} slow_hints;

static void *run_hints(void *arg) {
    slow_hints *s = arg;
    json_t *h = hints(s->db, "a");
    s->ok = h != NULL;
    json_decref(h);
    atomic_store(&s->done, 1);
    return NULL;
}

static void test_other_namespace_does_not_wait(void) {
    embed_server *srv = embed_server_start(32);
    if (!srv) SKIP("no stand-in embedder");
    char dir[] = "/tmp/remem-lsnw-XXXXXX", path[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/s.db", dir);
    remem_options o;
    remem_options_init(&o);
    o.embedder = "http";
    o.embed_url = embed_server_url(srv);
    o.embed_model = "stand-in";
    o.embed_retries = -1;
    o.embed_timeout_ms = 20000;
    remem *a = NULL, *b = open_store(path);
    CHECK_INT(remem_open(path, &o, &a), REMEM_OK);
    char *id = add_lesson(a, "a");
    CHECK(id != NULL);
    /* Namespace a's hints wait 1.5 s in the embedder; namespace b's event
     * (another handle, as a server's threads have) must not wait for it. */
    embed_server_set_delay_ms(srv, 1500);
    int before = embed_server_requests(srv);
    slow_hints s = {.db = a};
    pthread_t t;
    CHECK_INT(pthread_create(&t, NULL, run_hints, &s), 0);
    while (embed_server_requests(srv) == before) usleep(1000);
    json_t *e = call(b, "lesson.event", "{ss ss ss ss ss}", "ns", "b", "domain", "sqlite", "tool",
                     "run_sqlite", "channel", "hard_failure", "error", "no such table: x");
    CHECK(e != NULL);
    CHECK_INT(atomic_load(&s.done), 0); /* answered while the hints still wait */
    json_decref(e);
    pthread_join(t, NULL);
    CHECK(s.ok);
    free(id);
    remem_close(a);
    remem_close(b);
    embed_server_stop(srv);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_INT(system(cmd), 0);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_update_survives_hints);
    RUN(test_archive_survives_outcome);
    RUN(test_two_processes_lose_no_count);
    RUN(test_other_namespace_does_not_wait);
    return TEST_EXIT();
}
