/*
 * telemetry_glue.c: the engine's spans and metrics (telemetry_glue.h). The
 * operations themselves stay unaware of telemetry: remem_call opens a span
 * around every operation and, when it ends, reads the attributes seed 003
 * lists from the arguments and the answer the operation already returns
 * (an episode's projectID, a PruneReport's counts), so that an operation
 * added later gets a span "remem.<name>" with no code of its own.
 *
 * The gauges that need a count of the store (episodes in the index,
 * embeddings pending) are refreshed by one store_stats call after the
 * operations that change them, at most once a second (always after a
 * prune), so that a burst of adds does not pay for a count each.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/telemetry_glue.h"

static _Thread_local double t_embed_ms;

void eng_tm_note_embed_ms(double ms) { t_embed_ms += ms; }
void eng_tm_embed_ms_reset(void) { t_embed_ms = 0; }
double eng_tm_embed_ms(void) { return t_embed_ms; }

/* Seed 003's span names; every other operation is "remem.<name>". */
static const char *const g_names[][2] = {
    {"episode.add", "memory.store_episode"},
    {"episode.recall", "memory.retrieve_episodes"},
    {"prune", "memory.prune"},
    {"summarize", "memory.summarize"},
};

const char *eng_tm_span_name(const char *op, char *buf, size_t cap) {
    for (size_t i = 0; i < sizeof g_names / sizeof *g_names; i++)
        if (!strcmp(op, g_names[i][0])) return g_names[i][1];
    snprintf(buf, cap, "remem.%s", op);
    return buf;
}

tm_span *eng_tm_call_begin(const char *op) {
    if (!tm_enabled()) return NULL;
    char buf[96];
    tm_span *s = tm_span_start(eng_tm_span_name(op, buf, sizeof buf), TM_KIND_INTERNAL);
    eng_tm_embed_ms_reset();
    return s;
}

void eng_tm_status(remem *db, tm_span *s, int rc) {
    if (!s || !rc) return;
    tm_span_str(s, "error.type", remem_strerror(rc));
    tm_span_error(s, db && db->err[0] ? db->err : remem_strerror(rc));
}

/* ---- gauges from the store ---- */

typedef struct kind_counts {
    int64_t episodes, pending;
} kind_counts;

static int count_row(void *ctx, enum store_group g, const char *key, int64_t n) {
    kind_counts *k = ctx;
    if (g == STORE_BY_KIND && !strcmp(key, "episode")) k->episodes += n;
    if (g == STORE_BY_MODEL && !key[0]) k->pending += n;
    return 0;
}

static atomic_int_fast64_t g_last_refresh_ms;

static void refresh_gauges(remem *db, int always) {
    int64_t now = util_now_ms(), last = atomic_load(&g_last_refresh_ms);
    if (!db || !db->st) return;
    if (!always && now - last < 1000) return;
    if (!atomic_compare_exchange_strong(&g_last_refresh_ms, &last, now)) return;
    store_summary sum;
    kind_counts k = {0};
    if (store_stats(db->st, NULL, now, &sum, count_row, &k)) return;
    tm_gauge("memory.episodes_in_index", "{episode}",
             "Episodes in the store (every namespace), as of the last write or prune.",
             (double)k.episodes);
    tm_gauge("remem.embeddings.pending", "{memory}",
             "Memories stored without a vector while the embedder was down, waiting to be "
             "embedded.",
             (double)k.pending);
}

/* ---- the operations' attributes ---- */

static const char *jstr(json_t *o, const char *k) {
    return json_string_value(json_object_get(o, k));
}

static void put_str(tm_span *s, const char *key, json_t *o, const char *k) {
    tm_span_str(s, key, jstr(o, k));
}

static void put_num(tm_span *s, const char *key, json_t *o, const char *k) {
    json_t *v = json_object_get(o, k);
    if (json_is_integer(v))
        tm_span_int(s, key, (int64_t)json_integer_value(v));
    else if (json_is_real(v))
        tm_span_dbl(s, key, json_real_value(v));
}

static double span_ms(const tm_span *s) {
    return s ? (double)(tm_now_ns() - s->start_ns) / 1e6 : 0;
}

static void store_episode(remem *db, tm_span *s, json_t *args, json_t *res) {
    json_t *meta = json_object_get(args, "meta");
    const char *outcome = jstr(res, "outcome");
    if (res && outcome && strcmp(outcome, "dropped")) {
        tm_count("memory.episodes_stored_total", "{episode}",
                 "Episodes stored (episode.add), duplicates folded included.", 1);
        if (strcmp(outcome, "duplicate") && db->emb)
            tm_observe("memory.embedding_size_distribution", "By",
                       "Size of each stored episode's embedding (dimensions x 4 bytes).",
                       (double)db->emb->dim * sizeof(float));
    }
    refresh_gauges(db, 0);
    if (!s) return;
    put_str(s, "episodeID", res, "id");
    put_str(s, "outcome", res, "outcome");
    put_num(s, "duplicateCount", res, "duplicateCount");
    tm_span_dbl(s, "embeddingTimeMs", eng_tm_embed_ms());
    tm_span_str(s, "storeBackend", db->st ? db->st->ops->name : NULL);
    tm_span_str(s, "modelUsedForEmbedding", db->emb ? db->emb->model_id : NULL);
    put_str(s, "projectID", meta, "projectID");
    put_str(s, "taskID", meta, "taskID");
    put_str(s, "language", meta, "language");
    put_str(s, "modelUsed", meta, "modelUsed");
    put_str(s, "generationOutcome", meta, "generationOutcome");
    put_num(s, "tokensIn", meta, "tokensIn");
    put_num(s, "tokensOut", meta, "tokensOut");
}

static void retrieve_episodes(tm_span *s, json_t *args, json_t *res) {
    if (!s) return;
    put_num(s, "queryTimeMs", res, "queryTimeMs");
    put_num(s, "numResultsReturned", res, "numResults");
    put_num(s, "avgSimilarity", res, "avgSimilarity");
    put_num(s, "minSimilarity", res, "minSimilarity");
    put_str(s, "projectID", args, "project");
    put_str(s, "language", args, "language");
    put_num(s, "maxResults", args, "max");
    json_t *few = json_object_get(res, "tooFewMatches");
    if (json_is_boolean(few)) tm_span_bool(s, "tooFewMatches", json_is_true(few));
}

static void prune_attrs(tm_span *s, json_t *res) {
    if (!s) return;
    json_int_t removed = json_integer_value(json_object_get(res, "removedCount"));
    int dry = json_is_true(json_object_get(res, "dryRun"));
    tm_span_int(s, "episodesRemovedCount", removed);
    tm_span_int(s, "episodesArchivedCount", dry ? 0 : removed);
    put_num(s, "clustersCreatedCount", res, "clustersCreated");
    put_num(s, "durationMs", res, "durationMs");
    tm_span_bool(s, "dryRun", dry);
}

static void summarize_attrs(tm_span *s, json_t *res) {
    if (!s) return;
    json_t *src = json_object_get(res, "sources");
    tm_span_int(s, "episodesSummarizedCount",
                json_is_array(src) ? (int64_t)json_array_size(src)
                                   : (int64_t)json_integer_value(src));
    tm_span_dbl(s, "summarizationTimeMs", span_ms(s));
    const char *model = jstr(json_object_get(res, "llm"), "model");
    tm_span_str(s, "modelUsedForSummarization", model ? model : jstr(res, "method"));
}

void eng_tm_call_end(remem *db, tm_span *s, const char *op, json_t *args, json_t *res, int rc) {
    if (!rc) {
        if (!strcmp(op, "episode.add")) store_episode(db, s, args, res);
        if (!strcmp(op, "prune") || !strcmp(op, "maintain")) {
            /* maintain's per-namespace prunes are part of its one run */
            if (!json_is_true(json_object_get(args, "_maintain")))
                tm_count("remem.maintenance.runs", "{run}", "Maintenance runs (prune, maintain).",
                         1);
            if (!json_is_true(json_object_get(res, "dryRun"))) refresh_gauges(db, 1);
        }
        if (!strcmp(op, "pending.embed")) refresh_gauges(db, 1);
    }
    if (!s) return;
    tm_span_str(s, "remem.op", op);
    tm_span_str(s, "remem.namespace", jstr(args, "ns"));
    if (!rc) {
        if (!strcmp(op, "episode.recall")) retrieve_episodes(s, args, res);
        if (!strcmp(op, "prune")) prune_attrs(s, res);
        if (!strcmp(op, "summarize")) summarize_attrs(s, res);
        if (!strcmp(op, "maintain")) put_num(s, "episodesRemovedCount", res, "removedCount");
        json_t *llm = json_object_get(res, "llm");
        if (json_is_object(llm)) put_str(s, "gen_ai.request.model", llm, "model");
        put_str(s, "remem.fallback", res, "fallback");
    }
    eng_tm_status(db, s, rc);
    tm_span_end(s);
}

int remem_telemetry_stats(char **json) {
    *json = tm_snapshot_json();
    return *json ? REMEM_OK : REMEM_ENOMEM;
}

void remem_telemetry_flush(void) { tm_flush(); }
