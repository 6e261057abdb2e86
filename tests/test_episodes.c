/*
 * test_episodes.c: seed 003's episodes and the archive (src/maintenance/):
 * episode.add (ids, metadata, duplicates), episode.recall (strict project
 * filtering, language filter, minSimilarity and "too few matches",
 * feedback weight), archive and restore field by field, restore run twice,
 * and the recovery of what a crash leaves in the archive folder.
 */
#include <dirent.h>
#include <time.h>

#include "support/engine_fixture.h"
#include "support/op_call.h"

/* Call operation op with the JSON args; the answer (NULL on failure, with
 * *rc set). */
static void add_ep(remem *db, const char *project, const char *task, const char *lang,
                   const char *prompt, const char *output, const char *ts) {
    char args[2048];
    snprintf(args, sizeof args,
             "{\"ns\":\"eps\",\"prompt\":\"%s\",\"output\":\"%s\",\"meta\":{\"taskID\":\"%s\","
             "\"projectID\":\"%s\",\"language\":\"%s\",\"timestamp\":\"%s\",\"modelUsed\":\"m1\","
             "\"tokensIn\":12,\"tokensOut\":34,\"generationOutcome\":\"accepted\","
             "\"filesChanged\":[\"a.c\"]}}",
             prompt, output, task, project, lang, ts);
    json_decref(call_ok(db, "episode.add", args));
}

static void test_episode_add(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    json_t *r = call_ok(db, "episode.add",
                        "{\"ns\":\"eps\",\"prompt\":\"sort a list\",\"output\":\"sorted(xs)\","
                        "\"meta\":{\"taskID\":\"t1\",\"projectID\":\"acme\",\"timestamp\":"
                        "\"2026-01-02T03:04:05Z\",\"language\":\"python\"}}");
    CHECK_STR(json_string_value(json_object_get(r, "id")), "acme_t1_1767323045000");
    CHECK_STR(json_string_value(json_object_get(r, "outcome")), "added");
    json_decref(r);
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "eps", "acme_t1_1767323045000", &rec), REMEM_OK);
    if (rec) {
        const remem_memory *m = remem_record_memory(rec);
        CHECK_STR(m->kind, "episode");
        CHECK_STR(m->text, "sort a list\n\nsorted(xs)");
        CHECK_INT(m->created_at, 1767323045000LL);
        CHECK_HAS(m->metadata, "\"projectID\":\"acme\"");
        CHECK_HAS(m->metadata, "\"generationOutcome\":\"accepted\"");
    }
    remem_record_free(rec);
    /* The same pair again, later, with other metadata: folded. */
    r = call_ok(
        db, "episode.add",
        "{\"ns\":\"eps\",\"prompt\":\"sort a list\",\"output\":\"sorted(xs)\","
        "\"meta\":{\"taskID\":\"t9\",\"projectID\":\"acme\",\"timestamp\":"
        "\"2026-02-02T00:00:00Z\",\"language\":\"python\",\"generationOutcome\":\"fixed\"}}");
    CHECK_STR(json_string_value(json_object_get(r, "outcome")), "duplicate");
    CHECK_STR(json_string_value(json_object_get(r, "id")), "acme_t1_1767323045000");
    CHECK_INT(json_integer_value(json_object_get(r, "duplicateCount")), 1);
    json_decref(r);
    CHECK_INT(remem_get(db, "eps", "acme_t1_1767323045000", &rec), REMEM_OK);
    if (rec) {
        const remem_memory *m = remem_record_memory(rec);
        CHECK_INT(m->duplicate_count, 1);
        CHECK_HAS(m->metadata, "\"timestamp\":\"2026-02-02T00:00:00.000Z\"");
        CHECK_HAS(m->metadata, "\"generationOutcome\":\"fixed\"");
    }
    remem_record_free(rec);
    /* Bad input changes nothing. */
    int rc = 0;
    CHECK(!call(db, "episode.add",
                "{\"ns\":\"eps\",\"prompt\":\"p\",\"output\":\"o\",\"meta\":{\"taskID\":\"t\","
                "\"projectID\":\"p\",\"generationOutcome\":\"great\"}}",
                &rc));
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "generationOutcome");
    CHECK(!call(db, "episode.add",
                "{\"ns\":\"eps\",\"prompt\":\"p\",\"output\":\"o\",\"meta\":{\"taskID\":\"t\","
                "\"projectID\":\"p\",\"timestamp\":\"2023-02-31\"}}",
                &rc));
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "timestamp");
    char *st = NULL;
    CHECK_INT(remem_stats(db, "eps", &st), REMEM_OK);
    CHECK_HAS(st, "\"memories\":1");
    remem_free(st);
    remem_close(db);
}

static void seed_projects(remem *db) {
    add_ep(db, "alpha", "a1", "python", "parse a csv file into rows", "csv.reader(f)",
           "2026-01-01T00:00:00Z");
    add_ep(db, "alpha", "a2", "go", "parse a csv file into records", "csv.NewReader(f)",
           "2026-01-01T00:01:00Z");
    add_ep(db, "beta", "b1", "python", "parse a csv file into rows quickly", "pandas.read_csv(f)",
           "2026-01-01T00:02:00Z");
    add_ep(db, "beta", "b2", "go", "parse a csv file into records fast", "csv.NewReader(bufio)",
           "2026-01-01T00:03:00Z");
}

static int count_project(json_t *r, const char *project) {
    int n = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r, "episodes"), i, e) {
        const char *p =
            json_string_value(json_object_get(json_object_get(e, "metadata"), "projectID"));
        if (p && !strcmp(p, project)) n++;
    }
    return n;
}

static void test_episode_recall(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    seed_projects(db);
    json_t *r = call_ok(db, "episode.recall",
                        "{\"ns\":\"eps\",\"query\":\"parse a csv file\",\"project\":\"alpha\","
                        "\"min_similarity\":0.0,\"max\":10}");
    CHECK_INT(json_array_size(json_object_get(r, "episodes")), 2);
    CHECK_INT(count_project(r, "beta"), 0);
    CHECK(json_is_true(json_object_get(r, "tooFewMatches")));
    json_t *e0 = json_array_get(json_object_get(r, "episodes"), 0);
    CHECK(json_string_value(json_object_get(e0, "prompt")) != NULL);
    CHECK(json_string_value(json_object_get(e0, "output")) != NULL);
    CHECK(json_object_get(json_object_get(e0, "metadata"), "promptBytes") == NULL);
    /* Sorted by similarity. */
    json_t *e1 = json_array_get(json_object_get(r, "episodes"), 1);
    CHECK(json_number_value(json_object_get(e0, "similarity")) >=
          json_number_value(json_object_get(e1, "similarity")));
    json_decref(r);
    r = call_ok(db, "episode.recall",
                "{\"ns\":\"eps\",\"query\":\"parse a csv file\",\"project\":\"beta\","
                "\"language\":\"go\",\"min_similarity\":0.0}");
    CHECK_INT(json_array_size(json_object_get(r, "episodes")), 1);
    CHECK_STR(
        json_string_value(json_object_get(json_array_get(json_object_get(r, "episodes"), 0), "id")),
        "beta_b2_1767225780000");
    json_decref(r);
    /* No project and no cross-project: refused (seed 003 failure mode 6). */
    int rc = 0;
    CHECK(!call(db, "episode.recall", "{\"ns\":\"eps\",\"query\":\"csv\"}", &rc));
    CHECK_INT(rc, REMEM_EINVAL);
    CHECK_HAS(remem_errmsg(db), "cross-project");
    r = call_ok(db, "episode.recall",
                "{\"ns\":\"eps\",\"query\":\"parse a csv file\",\"cross_project\":true,"
                "\"min_similarity\":0.0,\"max\":10}");
    CHECK_INT(count_project(r, "alpha"), 2);
    CHECK_INT(count_project(r, "beta"), 2);
    json_decref(r);
    /* A threshold nothing reaches: no episodes, and said so. */
    r = call_ok(db, "episode.recall",
                "{\"ns\":\"eps\",\"query\":\"completely unrelated words about gardening\","
                "\"project\":\"alpha\",\"min_similarity\":0.99}");
    CHECK_INT(json_array_size(json_object_get(r, "episodes")), 0);
    CHECK(json_is_true(json_object_get(r, "tooFewMatches")));
    CHECK_HAS(json_string_value(json_object_get(r, "text")), "too few");
    json_decref(r);
    remem_close(db);
}

static void test_feedback_weight(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    /* The weaker match carries positive feedback: with a large factor it
     * ranks first; with factor 1 the order is by similarity. */
    json_decref(
        call_ok(db, "episode.add",
                "{\"ns\":\"eps\",\"prompt\":\"open the database connection pool\",\"output\":"
                "\"pool.open()\",\"meta\":{\"taskID\":\"x\",\"projectID\":\"p\"}}"));
    json_decref(call_ok(
        db, "episode.add",
        "{\"ns\":\"eps\",\"prompt\":\"open the database connection\",\"output\":"
        "\"db.connect()\",\"meta\":{\"taskID\":\"y\",\"projectID\":\"p\",\"feedback\":1}}"));
    const char *q = "{\"ns\":\"eps\",\"query\":\"open the database connection pool\",\"project\":"
                    "\"p\",\"min_similarity\":-1,\"feedback_weight_factor\":%s}";
    char a[512];
    snprintf(a, sizeof a, q, "1");
    json_t *r = call_ok(db, "episode.recall", a);
    CHECK_HAS(
        json_string_value(json_object_get(json_array_get(json_object_get(r, "episodes"), 0), "id")),
        "p_x_");
    json_decref(r);
    snprintf(a, sizeof a, q, "50");
    r = call_ok(db, "episode.recall", a);
    CHECK_HAS(
        json_string_value(json_object_get(json_array_get(json_object_get(r, "episodes"), 0), "id")),
        "p_y_");
    json_decref(r);
    remem_close(db);
}

/* ---- archive ---- */

typedef struct lines {
    char *buf[64];
    size_t n;
} lines;

static int keep_line(void *ctx, const char *data, size_t len) {
    lines *l = ctx;
    if (l->n < 64) l->buf[l->n++] = strndup(data, len);
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void export_sorted(remem *db, const char *ns, lines *l) {
    l->n = 0;
    CHECK_INT(remem_export(db, ns, 1, keep_line, l, NULL), REMEM_OK);
    qsort(l->buf, l->n, sizeof l->buf[0], cmp_str);
}

static void lines_free(lines *l) {
    for (size_t i = 0; i < l->n; i++) free(l->buf[i]);
    l->n = 0;
}

static void rm_rf(const char *p) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", p);
    CHECK_INT(system(cmd), 0);
}

static void test_archive_round_trip(void) {
    tmpdir t;
    tmp_make(&t);
    remem *db = open_store(t.db);
    if (!db) return;
    char loc[200], args[600];
    snprintf(loc, sizeof loc, "%s/arch", t.dir);
    seed_projects(db);
    remem_memory m;
    remem_memory_init(&m);
    m.ns = "eps";
    m.id = "note";
    m.text = "a plain memory with links and an expiry";
    m.metadata = "{\"k\": [1, 2.5, \"x\"], \"nested\": {\"a\": null}}";
    m.links = "[\"alpha_a1_1767225600000\"]";
    m.expires_at = 4102444800000LL;
    m.importance = 0.3333333;
    CHECK_INT(remem_add(db, &m, NULL, 0, NULL), REMEM_OK);
    remem_patch p;
    remem_patch_init(&p);
    p.fields = REMEM_SET_IMPORTANCE;
    p.importance = 0.123456789;
    CHECK_INT(remem_update(db, "eps", "note", &p), REMEM_OK);
    CHECK_INT(remem_invalidate(db, "eps", "beta_b1_1767225720000", "note", "test"), REMEM_OK);
    /* Touch some, so access counts are not all zero. */
    json_decref(
        call_ok(db, "episode.recall",
                "{\"ns\":\"eps\",\"query\":\"csv\",\"cross_project\":true,\"min_similarity\":-1}"));
    lines before, after;
    export_sorted(db, "eps", &before);
    CHECK_INT(before.n, 5);
    snprintf(
        args, sizeof args,
        "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"ids\":[\"note\",\"alpha_a1_1767225600000\","
        "\"beta_b1_1767225720000\"]}",
        loc);
    json_t *r = call_ok(db, "archive", args);
    CHECK_INT(json_array_size(json_object_get(r, "archived")), 3);
    json_decref(r);
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "eps", "note", &rec), REMEM_ENOTFOUND);
    /* One file, under YYYY/MM/DD, checksum intact. */
    snprintf(args, sizeof args, "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"ids\":true}", loc);
    r = call_ok(db, "archive.list", args);
    json_t *files = json_object_get(r, "files");
    CHECK_INT(json_array_size(files), 1);
    const char *path = json_string_value(json_object_get(json_array_get(files, 0), "path"));
    CHECK(path && strlen(path) > strlen(loc) + 12 && path[strlen(loc) + 5] == '/' &&
          path[strlen(loc) + 8] == '/');
    CHECK(json_is_true(json_object_get(json_array_get(files, 0), "ok")));
    CHECK_INT(json_array_size(json_object_get(r, "ids")), 3);
    json_decref(r);
    /* Restore one by id, then the rest by time: exactly as before. */
    snprintf(args, sizeof args, "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"id\":\"note\"}",
             loc);
    r = call_ok(db, "restore", args);
    CHECK_INT(json_integer_value(json_object_get(r, "restored")), 1);
    json_decref(r);
    snprintf(
        args, sizeof args,
        "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"since\":\"2000-01-01\",\"until\":\"now\"}",
        loc);
    r = call_ok(db, "restore", args);
    CHECK_INT(json_integer_value(json_object_get(r, "restored")), 2);
    json_decref(r);
    export_sorted(db, "eps", &after);
    CHECK_INT(after.n, before.n);
    for (size_t i = 0; i < before.n && i < after.n; i++) CHECK_STR(after.buf[i], before.buf[i]);
    /* Restore again: nothing to do, nothing doubled. */
    r = call_ok(db, "restore", args);
    CHECK_INT(json_integer_value(json_object_get(r, "restored")), 0);
    json_decref(r);
    lines again;
    export_sorted(db, "eps", &again);
    CHECK_INT(again.n, before.n);
    lines_free(&again);
    /* The archive is empty now (restored records leave it). */
    snprintf(args, sizeof args, "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"ids\":true}", loc);
    r = call_ok(db, "archive.list", args);
    CHECK_INT(json_array_size(json_object_get(r, "ids")), 0);
    json_decref(r);
    /* Archived memories are out of recall. */
    snprintf(args, sizeof args,
             "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"ids\":[\"alpha_a1_1767225600000\"]}",
             loc);
    json_decref(call_ok(db, "archive", args));
    r = call_ok(db, "episode.recall",
                "{\"ns\":\"eps\",\"query\":\"parse a csv "
                "file\",\"project\":\"alpha\",\"min_similarity\":-1}");
    CHECK_INT(json_array_size(json_object_get(r, "episodes")), 1);
    json_decref(r);
    /* History: archive and restore rows. */
    char ops[256];
    history_ops(db, "eps", "note", ops, sizeof ops);
    CHECK_STR(ops, "add,update,archive,restore");
    lines_free(&before);
    lines_free(&after);
    remem_close(db);
    rm_rf(loc);
    tmp_done(&t);
}

/* Find the one file under dir whose name ends with suf. */
static int find_file(const char *dir, const char *suf, char *out, size_t cap) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*%s' | head -1", dir, suf);
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    int ok = fgets(out, (int)cap, f) != NULL;
    pclose(f);
    if (ok) out[strcspn(out, "\n")] = '\0';
    return ok ? 0 : -1;
}

static void test_archive_recovery(void) {
    tmpdir t;
    tmp_make(&t);
    remem *db = open_store(t.db);
    if (!db) return;
    char loc[200], args[600], f[600], g[700];
    memset(f, 0, sizeof f);
    snprintf(loc, sizeof loc, "%s/arch", t.dir);
    seed_projects(db);
    snprintf(args, sizeof args,
             "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"ids\":[\"alpha_a1_1767225600000\"]}",
             loc);
    json_decref(call_ok(db, "archive", args));
    CHECK_INT(find_file(loc, ".jsonl.zst", f, sizeof f), 0);
    /* A crash between the rename to .pending and the commit: the rows are
     * live and a .pending file names them. Recovery removes the file. */
    snprintf(args, sizeof args,
             "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"id\":\"alpha_a1_1767225600000\"}", loc);
    char copy[1300];
    snprintf(copy, sizeof copy, "cp '%s' '%s.copy'", f, f);
    CHECK_INT(system(copy), 0);
    json_decref(call_ok(db, "restore", args)); /* live again; the file is gone */
    snprintf(g, sizeof g, "%s.copy", f);
    char pend[800];
    snprintf(pend, sizeof pend, "%s.pending", f);
    CHECK_INT(rename(g, pend), 0);
    snprintf(args, sizeof args, "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"ids\":true}", loc);
    json_t *r = call_ok(db, "archive.list", args);
    CHECK_INT(json_array_size(json_object_get(r, "ids")), 0);
    json_decref(r);
    CHECK(access(pend, F_OK) != 0);
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "eps", "alpha_a1_1767225600000", &rec), REMEM_OK);
    remem_record_free(rec);
    /* A crash after the commit, before the final rename: the rows are gone
     * and the file is still .pending. Recovery gives it its final name. */
    snprintf(args, sizeof args,
             "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"ids\":[\"alpha_a2_1767225660000\"]}",
             loc);
    json_decref(call_ok(db, "archive", args));
    CHECK_INT(find_file(loc, ".jsonl.zst", f, sizeof f), 0);
    snprintf(pend, sizeof pend, "%s.pending", f);
    CHECK_INT(rename(f, pend), 0);
    snprintf(args, sizeof args, "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"ids\":true}", loc);
    r = call_ok(db, "archive.list", args);
    CHECK_INT(json_array_size(json_object_get(r, "ids")), 1);
    json_decref(r);
    CHECK(access(f, F_OK) == 0);
    /* A damaged file is reported, never half-read. */
    FILE *fp = fopen(f, "r+b");
    if (fp) {
        fseek(fp, 20, SEEK_SET);
        fputc('X', fp);
        fclose(fp);
    }
    r = call_ok(db, "archive.list", args);
    CHECK(json_is_false(json_object_get(json_array_get(json_object_get(r, "files"), 0), "ok")));
    json_decref(r);
    int rc = 0;
    snprintf(args, sizeof args, "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"all\":true}", loc);
    CHECK(!call(db, "restore", args, &rc));
    CHECK(rc == REMEM_ECORRUPT || rc == REMEM_EIO);
    remem_close(db);
    rm_rf(loc);
    tmp_done(&t);
}

/* The ids episode.recall returns over every project, sorted, joined. */
static void recall_ids(remem *db, char *out, size_t cap) {
    json_t *r =
        call_ok(db, "episode.recall",
                "{\"ns\":\"eps\",\"query\":\"csv file rows records\",\"cross_project\":true,"
                "\"min_similarity\":-1,\"max\":250}");
    char *ids[64];
    size_t n = 0, i;
    json_t *e;
    json_array_foreach(json_object_get(r, "episodes"), i, e) if (n < 64) ids[n++] =
        strdup(json_string_value(json_object_get(e, "id")));
    json_decref(r);
    qsort(ids, n, sizeof ids[0], cmp_str);
    out[0] = '\0';
    for (i = 0; i < n; i++) {
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? "," : "", ids[i]);
        free(ids[i]);
    }
}

static void sorted_join(json_t *arr, char *out, size_t cap) {
    char *ids[64];
    size_t n = 0, i;
    json_t *e;
    json_array_foreach(arr, i, e) if (n < 64) ids[n++] = (char *)json_string_value(e);
    qsort(ids, n, sizeof ids[0], cmp_str);
    out[0] = '\0';
    for (i = 0; i < n; i++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? "," : "", ids[i]);
}

/* Acceptance 1 of issue 11: prune by count and age; the report names
 * exactly the ids gone from recall; restore brings them back identical. */
static void test_prune_count_age(void) {
    tmpdir t;
    tmp_make(&t);
    remem *db = open_store(t.db);
    if (!db) return;
    char loc[200], args[800];
    snprintf(loc, sizeof loc, "%s/arch", t.dir);
    seed_projects(db); /* 2026-01-01 */
    add_ep(db, "alpha", "a3", "python", "write rows to a csv file", "csv.writer(f)",
           "2026-03-01T00:00:00Z");
    add_ep(db, "alpha", "a4", "python", "append records to a csv", "w.writerow(r)",
           "2026-03-02T00:00:00Z");
    add_ep(db, "alpha", "a5", "go", "read a csv header row", "r.Read()", "2026-03-03T00:00:00Z");
    add_ep(db, "beta", "b3", "go", "csv with a custom separator", "r.Comma = ';'",
           "2026-03-01T00:00:00Z");
    lines before;
    char live_before[2048], live_after[2048];
    recall_ids(db, live_before, sizeof live_before);
    export_sorted(db, "eps", &before); /* after the recall's touch */
    /* now = 2026-03-10: retention 30 days takes the four of January;
     * then alpha keeps its 2 newest of 3 (a3 goes). */
    const char *pol = "\"max_episodes_per_project\":2,\"retention_days\":30,\"strategy\":\"none\","
                      "\"now\":\"2026-03-10T00:00:00Z\"";
    snprintf(args, sizeof args, "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"dry_run\":true,%s}",
             loc, pol);
    json_t *dry = call_ok(db, "prune", args);
    snprintf(args, sizeof args, "{\"ns\":\"eps\",\"archive_location\":\"%s\",%s}", loc, pol);
    json_t *rep = call_ok(db, "prune", args);
    CHECK(json_is_string(json_object_get(rep, "timestamp")));
    CHECK(json_is_number(json_object_get(rep, "durationMs")));
    CHECK_INT(json_integer_value(json_object_get(rep, "clustersCreated")), 0);
    CHECK_INT(json_array_size(json_object_get(rep, "episodesRemoved")), 5);
    char a[2048], b[2048];
    sorted_join(json_object_get(rep, "episodesRemoved"), a, sizeof a);
    sorted_join(json_object_get(dry, "episodesRemoved"), b, sizeof b);
    CHECK_STR(a, b); /* the dry run said the same */
    sorted_join(json_object_get(rep, "episodesArchived"), b, sizeof b);
    CHECK_STR(a, b);
    CHECK_STR(a, "alpha_a1_1767225600000,alpha_a2_1767225660000,alpha_a3_1772323200000,"
                 "beta_b1_1767225720000,beta_b2_1767225780000");
    /* Exactly those are gone from recall. */
    recall_ids(db, live_after, sizeof live_after);
    CHECK_STR(live_after, "alpha_a4_1772409600000,alpha_a5_1772496000000,beta_b3_1772323200000");
    CHECK_INT(strlen(live_before), strlen(a) + 1 + strlen(live_after));
    /* The report file lists them too. */
    const char *path = json_string_value(json_object_get(rep, "report"));
    json_t *file = path ? json_load_file(path, 0, NULL) : NULL;
    CHECK(file != NULL);
    CHECK_INT(json_array_size(json_object_get(file, "episodesRemoved")), 5);
    json_decref(file);
    json_decref(dry);
    json_decref(rep);
    /* Restore everything: identical to before, field by field. */
    snprintf(args, sizeof args, "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"all\":true}", loc);
    rep = call_ok(db, "restore", args);
    CHECK_INT(json_integer_value(json_object_get(rep, "restored")), 5);
    json_decref(rep);
    lines after;
    export_sorted(db, "eps", &after);
    CHECK_INT(after.n, before.n);
    /* The archived ones, field by field (recall_ids touched the others). */
    size_t compared = 0;
    for (size_t i = 0; i < before.n && i < after.n; i++) {
        char id[64];
        if (sscanf(before.buf[i], "{\"id\":\"%63[^\"]", id) == 1 && strstr(a, id)) {
            CHECK_STR(after.buf[i], before.buf[i]);
            compared++;
        }
    }
    CHECK_INT(compared, 5);
    lines_free(&before);
    lines_free(&after);
    remem_close(db);
    rm_rf(loc);
    tmp_done(&t);
}

static void test_prune_clusters(void) {
    tmpdir t;
    tmp_make(&t);
    remem *db = open_store(t.db);
    if (!db) return;
    char loc[200], args[800];
    snprintf(loc, sizeof loc, "%s/arch", t.dir);
    /* Three near-duplicates in alpha, the same text in beta (never merged
     * across projects), and one unrelated episode in alpha. */
    add_ep(db, "alpha", "c1", "python", "parse the csv file into rows", "csv.reader(f)",
           "2026-03-01T00:00:00Z");
    add_ep(db, "alpha", "c2", "python", "parse the csv file into rows", "csv.reader(fh)",
           "2026-03-01T00:01:00Z");
    add_ep(db, "alpha", "c3", "python", "parse the csv file into rows!", "csv.reader(f)",
           "2026-03-01T00:02:00Z");
    add_ep(db, "beta", "c4", "python", "parse the csv file into rows", "csv.reader(f2)",
           "2026-03-01T00:03:00Z");
    add_ep(db, "alpha", "u1", "python", "send an email with smtp", "smtplib.SMTP(host)",
           "2026-03-01T00:04:00Z");
    snprintf(args, sizeof args,
             "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"similarity_threshold\":0.8,"
             "\"strategy\":\"heuristic\",\"retention_days\":0,\"max_episodes_per_project\":0}",
             loc);
    json_t *rep = call_ok(db, "prune", args);
    CHECK_INT(json_integer_value(json_object_get(rep, "clustersCreated")), 1);
    char a[1024];
    sorted_join(json_object_get(rep, "episodesRemoved"), a, sizeof a);
    CHECK_STR(a, "alpha_c1_1772323200000,alpha_c2_1772323260000,alpha_c3_1772323320000");
    const char *sid = json_string_value(json_array_get(json_object_get(rep, "summaries"), 0));
    remem_record *rec = NULL;
    CHECK_INT(remem_get(db, "eps", sid ? sid : "", &rec), REMEM_OK);
    if (rec) {
        const remem_memory *m = remem_record_memory(rec);
        CHECK_STR(m->kind, "summary");
        CHECK_HAS(m->links, "alpha_c1_1772323200000");
        CHECK_HAS(m->links, "alpha_c3_1772323320000");
        CHECK_HAS(m->metadata, "\"projectID\":\"alpha\"");
        CHECK_HAS(m->text, "parse the csv file into rows");
    }
    remem_record_free(rec);
    json_decref(rep);
    /* Recall of alpha returns the summary (with its links) and u1. */
    rep =
        call_ok(db, "episode.recall",
                "{\"ns\":\"eps\",\"query\":\"parse the csv file into rows\",\"project\":\"alpha\","
                "\"min_similarity\":-1}");
    json_t *e0 = json_array_get(json_object_get(rep, "episodes"), 0);
    CHECK(json_is_string(json_object_get(e0, "summary")));
    CHECK_INT(json_array_size(json_object_get(e0, "links")), 3);
    CHECK_INT(json_array_size(json_object_get(rep, "episodes")), 2);
    json_decref(rep);
    remem_close(db);
    rm_rf(loc);
    tmp_done(&t);
}

/* Issue 20, fix 1: duplicate folding stays inside one project. The same
 * prompt/output under another project is a new episode of that project,
 * and the first project still lists its own. */
static void test_duplicate_per_project(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    add_ep(db, "acme", "t1", "python", "sort a list", "sorted(xs)", "2026-01-02T00:00:00Z");
    json_t *r = call_ok(db, "episode.add",
                        "{\"ns\":\"eps\",\"prompt\":\"sort a list\",\"output\":\"sorted(xs)\","
                        "\"meta\":{\"taskID\":\"t2\",\"projectID\":\"beta\",\"timestamp\":"
                        "\"2026-01-03T00:00:00Z\"}}");
    CHECK_STR(json_string_value(json_object_get(r, "outcome")), "added");
    CHECK_STR(json_string_value(json_object_get(r, "id")), "beta_t2_1767398400000");
    json_decref(r);
    const char *q = "{\"ns\":\"eps\",\"query\":\"sort a list\",\"project\":\"%s\","
                    "\"min_similarity\":0.0}";
    char args[256];
    snprintf(args, sizeof args, q, "acme");
    r = call_ok(db, "episode.recall", args);
    CHECK_INT(json_array_size(json_object_get(r, "episodes")), 1);
    CHECK_INT(count_project(r, "acme"), 1);
    json_decref(r);
    snprintf(args, sizeof args, q, "beta");
    r = call_ok(db, "episode.recall", args);
    CHECK_INT(count_project(r, "beta"), 1);
    json_decref(r);
    /* acme again: folded into acme's own episode, not beta's. */
    r = call_ok(db, "episode.add",
                "{\"ns\":\"eps\",\"prompt\":\"sort a list\",\"output\":\"sorted(xs)\","
                "\"meta\":{\"taskID\":\"t3\",\"projectID\":\"acme\"}}");
    CHECK_STR(json_string_value(json_object_get(r, "outcome")), "duplicate");
    CHECK_STR(json_string_value(json_object_get(r, "id")), "acme_t1_1767312000000");
    json_decref(r);
    CHECK_INT(ns_count(db, "eps"), 2);
    remem_close(db);
}

/* Issue 20, fix 2: an episode used again (its duplicate added) is as
 * young as that use for retention. */
static void test_duplicate_refreshes_age(void) {
    tmpdir t;
    tmp_make(&t);
    remem *db = open_store(t.db);
    if (!db) return;
    char loc[200], args[600];
    snprintf(loc, sizeof loc, "%s/arch", t.dir);
    add_ep(db, "acme", "t1", "python", "sort a list", "sorted(xs)", "2026-01-01T00:00:00Z");
    add_ep(db, "acme", "t2", "python", "sort a list", "sorted(xs)", "2026-03-05T00:00:00Z");
    snprintf(args, sizeof args,
             "{\"ns\":\"eps\",\"archive_location\":\"%s\",\"retention_days\":30,"
             "\"strategy\":\"none\",\"now\":\"2026-03-10T00:00:00Z\"}",
             loc);
    json_t *rep = call_ok(db, "prune", args);
    CHECK_INT(json_integer_value(json_object_get(rep, "removedCount")), 0);
    json_decref(rep);
    CHECK_INT(ns_count(db, "eps"), 1);
    remem_close(db);
    rm_rf(loc);
    tmp_done(&t);
}

static double metric_value(const char *name) {
    char *js = NULL;
    if (remem_telemetry_stats(&js)) return -1;
    json_t *o = json_loads(js, 0, NULL), *m;
    remem_free(js);
    size_t i;
    double v = 0;
    json_array_foreach(json_object_get(o, "metrics"), i, m) {
        const char *n = json_string_value(json_object_get(m, "name"));
        if (n && !strcmp(n, name)) v = json_number_value(json_object_get(m, "value"));
    }
    json_decref(o);
    return v;
}

/* Issue 20, fix 8: too few matches are logged (counted), and every
 * returned episode carries a summary. */
static void test_recall_summary_and_log(void) {
    remem *db = open_store(":memory:");
    if (!db) return;
    seed_projects(db);
    const char *name = "memory.retrieve_episodes.too_few_matches";
    double before = metric_value(name);
    json_t *r = call_ok(db, "episode.recall",
                        "{\"ns\":\"eps\",\"query\":\"parse a csv file\",\"project\":\"alpha\","
                        "\"min_similarity\":0.0,\"max\":10}");
    CHECK(json_is_true(json_object_get(r, "tooFewMatches")));
    CHECK(metric_value(name) >= before + 1);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(r, "episodes"), i, e) {
        const char *sum = json_string_value(json_object_get(e, "summary"));
        const char *prompt = json_string_value(json_object_get(e, "prompt"));
        CHECK(sum != NULL && prompt != NULL);
        if (sum && prompt) {
            CHECK(strncmp(sum, prompt, strlen(prompt)) == 0);
            CHECK_HAS(sum, " -> ");
        }
    }
    json_decref(r);
    remem_close(db);
}

/* Issue 20, fix 8: seed 003's block brings its defaults (1000 episodes,
 * 90 days, 24 hours) for what it omits, and an add that takes a project
 * past maxEpisodesPerProject archives the project's oldest at once. */
static void test_memory_agent_block(void) {
    tmpdir t;
    tmp_make(&t);
    char yaml[200], loc[200];
    snprintf(yaml, sizeof yaml, "%s/remem.yaml", t.dir);
    snprintf(loc, sizeof loc, "%s/arch", t.dir);
    FILE *f = fopen(yaml, "w");
    if (!f) return;
    fprintf(f, "{\"memoryAgent\": {\"maxEpisodesPerProject\": 2, \"archiveLocation\": \"%s\",}}\n",
            loc);
    fclose(f);
    remem_options o;
    remem_options_init(&o);
    o.embedder = "hash";
    o.config_path = yaml;
    remem *db = NULL;
    CHECK_INT(remem_open(t.db, &o, &db), REMEM_OK);
    json_t *r = call_ok(db, "maintain.schedule", "{}");
    CHECK(json_number_value(json_object_get(r, "pruneIntervalHours")) == 24);
    json_decref(r);
    /* retentionDays 90: an episode 100 days old would go, one of 80 not */
    char args[600], ts[40];
    int64_t now = (int64_t)time(NULL) * 1000;
    remem_format_time(now - 100LL * 86400000, ts, sizeof ts);
    add_ep(db, "old", "o1", "c", "an old prompt", "an old output", ts);
    remem_format_time(now - 80LL * 86400000, ts, sizeof ts);
    add_ep(db, "old", "o2", "c", "a newer prompt", "a newer output", ts);
    r = call_ok(db, "prune", "{\"ns\":\"eps\",\"dry_run\":true,\"strategy\":\"none\"}");
    CHECK_INT(json_integer_value(json_object_get(json_object_get(r, "reasons"), "age")), 1);
    json_decref(r);
    /* three episodes of alpha: the third add archives the oldest */
    for (int i = 1; i <= 3; i++) {
        remem_format_time(now - (10 - i) * 60000LL, ts, sizeof ts);
        snprintf(args, sizeof args,
                 "{\"ns\":\"eps\",\"prompt\":\"prompt %d\",\"output\":\"output %d\",\"meta\":"
                 "{\"taskID\":\"a%d\",\"projectID\":\"alpha\",\"timestamp\":\"%s\"}}",
                 i, i, i, ts);
        r = call_ok(db, "episode.add", args);
        json_t *pr = json_object_get(r, "prune");
        if (i < 3) CHECK(pr == NULL);
        if (i == 3) {
            CHECK(pr != NULL);
            CHECK(json_integer_value(json_object_get(pr, "removedCount")) >= 1);
            char *ids = json_dumps(json_object_get(pr, "episodesRemoved"), 0);
            CHECK_HAS(ids ? ids : "", "alpha_a1_");
            free(ids);
            CHECK_HAS(json_string_value(json_object_get(r, "text")), "maxEpisodesPerProject");
        }
        json_decref(r);
    }
    r = call_ok(db, "episode.recall",
                "{\"ns\":\"eps\",\"query\":\"prompt\",\"project\":\"alpha\",\"min_similarity\":-1,"
                "\"max\":10}");
    CHECK_INT(json_array_size(json_object_get(r, "episodes")), 2);
    json_decref(r);
    remem_close(db);
    rm_rf(loc);
    unlink(yaml);
    tmp_done(&t);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_episode_add);
    RUN(test_episode_recall);
    RUN(test_feedback_weight);
    RUN(test_archive_round_trip);
    RUN(test_archive_recovery);
    RUN(test_prune_count_age);
    RUN(test_prune_clusters);
    RUN(test_duplicate_per_project);
    RUN(test_duplicate_refreshes_age);
    RUN(test_recall_summary_and_log);
    RUN(test_memory_agent_block);
    return TEST_EXIT();
}
