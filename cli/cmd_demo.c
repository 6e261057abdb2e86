/*
 * cmd_demo.c: `remem demo`, remem end to end in a few seconds, on the
 * embedded default (one SQLite file, the hash embedder, nothing else). An
 * assistant agent writes a week of its memory stream, recalls before a step
 * with every score component shown, learns that a fact changed (the old
 * memory is invalidated and superseded, not deleted), and recalls again.
 * Times are fixed, so the output is the same on every machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

/* Text output, left out with --json (steps is then non-NULL). */
#define SAY(...)                         \
    do {                                 \
        if (!steps) printf(__VA_ARGS__); \
    } while (0)

#define NS  "demo:assistant"
#define DAY (24LL * 3600 * 1000)

static const struct {
    int day;
    const char *kind, *text, *meta;
    double importance;
} stream[] = {
    {0, "static", "I am Ada, the team's deployment assistant. I never deploy on Fridays.", NULL,
     1.0},
    {0, "observation", "Maya said the staging cluster runs on Kubernetes 1.29.",
     "{\"topic\":\"infra\"}", 0.4},
    {1, "observation", "Maya prefers deployments to go out through the blue-green pipeline.",
     "{\"topic\":\"deploy\"}", 0.7},
    {1, "observation", "Lunch order for the team: two vegetarian pizzas.", NULL, 0.1},
    {2, "decision", "Rolled back release 4.2 because the payment service timed out.",
     "{\"topic\":\"deploy\",\"reward\":0.2}", -1},
    {3, "observation", "The on-call engineer this week is Tom.", "{\"topic\":\"people\"}", 0.5},
    {4, "reflection", "Releases that touch the payment service need a load test first.",
     "{\"topic\":\"deploy\"}", -1},
    {5, "observation", "Maya asked for release notes to be posted in #releases.",
     "{\"topic\":\"deploy\"}", 0.5},
    {6, "observation", "The coffee machine on floor 3 is broken again.", NULL, 0.05},
};

/* With --json nothing is printed as it goes: each step is appended to
 * steps (an array) and main prints one JSON document at the end. */
static void add_step(json_t *steps, const char *what, json_t *detail) {
    if (steps)
        json_array_append_new(steps, json_pack("{s:s,s:o}", "step", what, "result", detail));
    else
        json_decref(detail);
}

static json_t *engine_json(char *text) {
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    remem_free(text);
    return v ? v : json_null();
}

static int recall_and_show(remem *db, json_t *steps, const char *query, int64_t now,
                           const char *profile) {
    remem_query q;
    remem_query_init(&q);
    const char *ns[] = {NS};
    q.namespaces = ns;
    q.n_namespaces = 1;
    q.text = query;
    q.k = 4;
    q.now = now;
    q.profile = profile;
    q.no_touch = 1;
    remem_result *r = NULL;
    int rc = remem_recall(db, &q, &r);
    if (rc) return cli_fail_db(db, rc, "recall");
    if (steps) {
        json_t *res = engine_json(remem_result_to_json(r));
        json_object_set_new(res, "query", json_string(query));
        add_step(steps, "recall", res);
        remem_result_free(r);
        return 0;
    }
    printf("\n  recall \"%s\"  (profile %s, %zu candidates, %.2f ms)\n", query, r->profile,
           r->candidates, r->took_ms);
    printf("   #  score   relev  lexic  recen  impor  memory\n");
    for (size_t i = 0; i < r->n; i++) {
        const remem_hit *h = &r->hits[i];
        printf("  %2zu  %.3f   %.3f  %.3f  %.3f  %.2f   [%s] %.70s%s\n", i + 1, h->score,
               h->relevance, h->lexical, h->recency, h->importance, h->mem.kind, h->mem.text,
               strlen(h->mem.text) > 70 ? "..." : "");
    }
    remem_result_free(r);
    return 0;
}

int cmd_demo(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts(
            "usage: remem [--db PATH] [--json] demo\n\nRuns an end-to-end scenario in namespace " NS
            " of the store (cleared first):\nan agent's memory stream written, "
            "recalled with scores shown, changed, recalled again.\n"
            "With --json: one document "
            "{\"store\",\"embedder\",\"steps\":[{\"step\",\"result\"}]}.");
        return 0;
    }
    remem *db = cli_open(env);
    if (!db) return 1;
    int64_t t0;
    remem_parse_time("2026-03-02T09:00:00Z", &t0);
    remem_clear(db, NS, NULL);
    json_t *steps = env->json ? json_array() : NULL;
    SAY("remem demo: store %s, embedder %s (%s)\n", env->db_path, remem_embedder_name(db),
        remem_embedder_model(db));
    SAY("\n1. The agent writes a week of memories into namespace " NS ":\n");
    size_t n = sizeof stream / sizeof stream[0];
    remem_memory *ms = calloc(n, sizeof *ms);
    char(*ids)[64] = calloc(n, sizeof *ids);
    int rc = 0;
    if (!ms || !ids) {
        rc = cli_fail("out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        remem_memory_init(&ms[i]);
        ms[i].ns = NS;
        ms[i].kind = stream[i].kind;
        ms[i].text = stream[i].text;
        ms[i].metadata = stream[i].meta;
        ms[i].importance = stream[i].importance;
        ms[i].created_at = t0 + stream[i].day * DAY + (int64_t)i * 60000;
    }
    long bad;
    if ((rc = remem_add_batch(db, ms, n, (char *)ids, sizeof ids[0], &bad))) {
        rc = cli_fail_db(db, rc, "add");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        SAY("   day %d  %-11s %s\n", stream[i].day, stream[i].kind, stream[i].text);
        add_step(steps, "add",
                 engine_json(remem_write_result_json("add", NS, ids[i], REMEM_ADDED, NULL)));
    }
    int64_t now = t0 + 7 * DAY;
    SAY("\n2. Before its next step (day 7) the agent asks what matters:");
    if ((rc = recall_and_show(db, steps, "How should I ship the payment service release?", now,
                              NULL)))
        goto out;
    if ((rc = recall_and_show(db, steps, "How should I ship the payment service release?", now,
                              "stream")))
        goto out;
    SAY("\n3. A fact changes: Maya now wants canary releases. The old preference is\n"
        "   invalidated and superseded (kept in history, out of recall):\n");
    remem_memory m;
    remem_memory_init(&m);
    m.ns = NS;
    m.text = "Maya now wants deployments to go out as canary releases, 5% of traffic first.";
    m.metadata = "{\"topic\":\"deploy\"}";
    m.importance = 0.8;
    m.created_at = now;
    char newid[64];
    int outcome = 0;
    if ((rc = remem_add(db, &m, newid, sizeof newid, &outcome)) ||
        (rc = remem_invalidate(db, NS, ids[2], newid, "preference changed"))) {
        rc = cli_fail_db(db, rc, "change");
        goto out;
    }
    add_step(steps, "add", engine_json(remem_write_result_json("add", NS, newid, outcome, NULL)));
    add_step(steps, "invalidate",
             engine_json(remem_write_result_json("invalidate", NS, ids[2], 0, newid)));
    SAY("   added %s, invalidated %s (superseded_by %s)\n", newid, ids[2], newid);
    SAY("\n4. The same question, after the change:");
    if ((rc = recall_and_show(db, steps, "How does Maya want deployments to go out?", now + 3600000,
                              NULL)))
        goto out;
    SAY("\n5. Filters: only decisions and reflections about deploys:");
    remem_query q;
    remem_query_init(&q);
    const char *nsl[] = {NS};
    q.namespaces = nsl;
    q.n_namespaces = 1;
    q.text = "payment service release";
    q.filter =
        "{\"$and\":[{\"topic\":\"deploy\"},{\"kind\":{\"$in\":[\"decision\",\"reflection\"]}}]}";
    q.now = now;
    q.no_touch = 1;
    remem_result *r = NULL;
    if ((rc = remem_recall(db, &q, &r))) {
        rc = cli_fail_db(db, rc, "recall");
        goto out;
    }
    SAY("\n  filter %s\n", q.filter);
    for (size_t i = 0; i < r->n; i++)
        SAY("  %2zu  %.3f  [%s] %s\n", i + 1, r->hits[i].score, r->hits[i].mem.kind,
            r->hits[i].mem.text);
    if (steps) {
        json_t *res = engine_json(remem_result_to_json(r));
        json_object_set_new(res, "filter", json_string(q.filter));
        add_step(steps, "recall", res);
    }
    remem_result_free(r);
    char *hist = NULL;
    if (remem_history(db, NS, ids[2], &hist) == REMEM_OK) {
        SAY("\n6. History of %s: %s\n", ids[2],
            strstr(hist, "\"invalidate\"") ? "add, then invalidate (superseded)" : hist);
        add_step(steps, "history", json_loads(hist, 0, NULL));
        remem_free(hist);
    }
    SAY("\nDone. Try: remem --db %s recall --ns %s --query \"who is on call?\"\n", env->db_path,
        NS);
    if (steps) {
        json_t *doc =
            json_pack("{s:s,s:{s:s,s:s},s:O}", "store", env->db_path, "embedder", "name",
                      remem_embedder_name(db), "model", remem_embedder_model(db), "steps", steps);
        char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
        if (text) puts(text);
        free(text);
        json_decref(doc);
    }
out:
    json_decref(steps);
    free(ms);
    free(ids);
    remem_close(db);
    return rc;
}
