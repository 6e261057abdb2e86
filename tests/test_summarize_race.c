/*
 * test_summarize_race.c: concurrent "summarize" calls on one store must
 * not pick the same sources (issue 21). Six threads, each with its own
 * handle on one store file (as six processes would be), call summarize
 * five times each over 200 long-term memories; afterwards every archived
 * memory is the source of exactly one summary, and no memory is the
 * source of two.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "remem.h"

#define CLIENTS  6
#define CALLS    5
#define MEMORIES 200

static char db_path[128];
static int errors[CLIENTS], done_calls[CLIENTS];

static remem *open_file(void) {
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    remem *db = NULL;
    if (remem_open(db_path, &o, &db)) {
        fprintf(stderr, "  open %s: %s\n", db_path, remem_errmsg(db));
        remem_close(db);
        return NULL;
    }
    return db;
}

static void *client(void *arg) {
    int me = (int)(intptr_t)arg;
    remem *db = open_file();
    for (int i = 0; db && i < CALLS; i++) {
        static const char args[] = "{\"ns\":\"s\",\"count\":5,\"method\":\"extractive\"}";
        char *out = NULL;
        int rc = remem_call(db, "summarize", args, sizeof args - 1, &out);
        if (rc) {
            fprintf(stderr, "  client %d: %s\n", me, remem_errmsg(db));
            errors[me]++;
        } else {
            done_calls[me]++;
        }
        remem_free(out);
    }
    remem_close(db);
    return NULL;
}

/* Each exported line: count summaries' sources and archived memories. */
typedef struct tally {
    json_t *source_of; /* id -> the summary that names it */
    int archived, twice, sources, summaries;
} tally;

static int on_line(void *ctx, const char *data, size_t len) {
    tally *t = ctx;
    json_t *m = json_loadb(data, len, 0, NULL);
    const char *tier = json_string_value(json_object_get(m, "tier"));
    const char *kind = json_string_value(json_object_get(m, "kind"));
    if (tier && !strcmp(tier, "archived")) t->archived++;
    if (kind && !strcmp(kind, "summary")) {
        t->summaries++;
        size_t i;
        json_t *l;
        json_array_foreach(json_object_get(m, "links"), i, l) {
            t->sources++;
            if (json_object_get(t->source_of, json_string_value(l))) t->twice++;
            json_object_set(t->source_of, json_string_value(l), json_object_get(m, "id"));
        }
    }
    json_decref(m);
    return 0;
}

static void test_concurrent_summaries_take_distinct_sources(void) {
    char dir[] = "/tmp/remem-test-sumrace-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(db_path, sizeof db_path, "%s/store.db", dir);
    remem *db = open_file();
    if (!db) return;
    for (int i = 0; i < MEMORIES; i++) {
        char text[96];
        snprintf(text, sizeof text, "fact %d: the %s valve in room %d was checked", i,
                 i % 2 ? "red" : "blue", i % 17);
        remem_memory m;
        remem_memory_init(&m);
        m.ns = "s";
        m.text = text;
        m.tier = "long";
        m.importance = (double)(i % 10) / 10.0;
        CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    }
    pthread_t th[CLIENTS];
    for (int c = 0; c < CLIENTS; c++) pthread_create(&th[c], NULL, client, (void *)(intptr_t)c);
    for (int c = 0; c < CLIENTS; c++) pthread_join(th[c], NULL);
    int ok = 0;
    for (int c = 0; c < CLIENTS; c++) ok += done_calls[c];
    tally t = {.source_of = json_object()};
    CHECK_INT(remem_export(db, "s", 0, on_line, &t, NULL), REMEM_OK);
    /* No memory in two summaries; every archived memory in one; every
     * call that answered wrote one summary. */
    CHECK_INT(t.twice, 0);
    CHECK_INT(t.sources, t.archived);
    CHECK_INT((int)json_object_size(t.source_of), t.archived);
    CHECK_INT(t.summaries, ok);
    CHECK(ok >= CLIENTS); /* most calls get through (a loser reads again) */
    json_decref(t.source_of);
    remem_close(db);
    const char *suffix[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; i++) {
        char p[160];
        snprintf(p, sizeof p, "%s%s", db_path, suffix[i]);
        unlink(p);
    }
    rmdir(dir);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_concurrent_summaries_take_distinct_sources);
    return TEST_EXIT();
}
