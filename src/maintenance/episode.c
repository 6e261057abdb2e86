/*
 * episode.c: seed 003's episodes as operations ("episode.add",
 * "episode.recall"). An episode is an ordinary memory of kind "episode"
 * (maintenance.h says how prompt, output and EpisodeMetadata sit in it),
 * so recall, filters, export, history and the archive all work on it with
 * no code of their own here.
 *
 * Two of the seed's failure modes shape this file: a duplicate
 * prompt/output pair updates the existing episode (timestamp, metadata,
 * duplicate count) instead of adding a second one (mode 2), and recall is
 * strictly limited to one project unless the caller asks for cross-project
 * retrieval (mode 6): an episode of project A is never a few-shot example
 * for project B by accident. Too few matches above the threshold return
 * only those, and the answer says so (mode 3).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maintenance/maintenance.h"
#include "telemetry/telemetry.h"
#include "util/utf8.h"

/* A summary line of an episode is at most this many bytes per side. */
#define SUMMARY_SIDE 160

/* The stored metadata: EpisodeMetadata's keys in the seed's order. */
static json_t *episode_meta(json_t *meta, const char *ts_iso, size_t prompt_bytes) {
    json_t *o = json_object();
    json_t *files = json_object_get(meta, "filesChanged");
    json_object_set_new(o, "taskID", json_string(op_str(meta, "taskID", "")));
    json_object_set_new(o, "timestamp", json_string(ts_iso));
    json_object_set_new(o, "modelUsed", json_string(op_str(meta, "modelUsed", "")));
    json_object_set_new(o, "tokensIn", json_integer(op_int(meta, "tokensIn", 0)));
    json_object_set_new(o, "tokensOut", json_integer(op_int(meta, "tokensOut", 0)));
    json_object_set_new(o, "generationOutcome",
                        json_string(op_str(meta, "generationOutcome", "accepted")));
    json_object_set_new(o, "language", json_string(op_str(meta, "language", "")));
    json_object_set_new(o, "projectID", json_string(op_str(meta, "projectID", "")));
    json_object_set_new(o, "filesChanged", files ? json_deep_copy(files) : json_array());
    json_t *fb = json_object_get(meta, "feedback");
    if (json_is_number(fb)) json_object_set_new(o, "feedback", json_real(json_number_value(fb)));
    json_object_set_new(o, "promptBytes", json_integer((json_int_t)prompt_bytes));
    return o;
}

/* Fold a re-added prompt/output pair into the episode at rowid, inside the
 * open transaction: new metadata and timestamp, duplicate_count + 1, the
 * vector kept (same text, same vector). The new timestamp is also the
 * memory's created_at, the age retention reads: an episode just used again
 * is as young as its latest use. */
static int fold_duplicate(remem *db, txn *x, int64_t rowid, const char *meta, int64_t ts,
                          int64_t now, json_t **result) {
    store_row old;
    int rc = store_get_rowid(db->st, rowid, 1, &old);
    if (rc) return eng_store_fail(db, rc);
    remem_memory m = old.m;
    m.metadata = meta;
    m.created_at = ts;
    m.updated_at = now;
    m.duplicate_count++;
    m.vector = old.vec;
    char *norm = util_normalize_text(m.text);
    if (!norm) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
    if (!rc && (rc = store_replace(db->st, rowid, &m, norm, util_hash64(norm, strlen(norm)))))
        eng_store_fail(db, rc);
    if (!rc) rc = eng_history(db, &old.m, &m, "duplicate", "episode.add", now);
    if (!rc) rc = eng_txn_row(db, x, m.ns, rowid);
    if (!rc)
        *result = json_pack("{s:s,s:s,s:s,s:I}", "id", m.id, "ns", m.ns, "outcome", "duplicate",
                            "duplicateCount", (json_int_t)m.duplicate_count);
    free(norm);
    store_row_clear(&old);
    return rc;
}

/* 1 when the row at rowid is an episode of project (an episode of another
 * project with the same text is never folded into: seed 003's strict
 * project separation). */
static int episode_of(remem *db, int64_t rowid, const char *project, int *rc) {
    store_row r;
    if ((*rc = store_get_rowid(db->st, rowid, 0, &r))) {
        *rc = eng_store_fail(db, *rc);
        return 0;
    }
    int yes = r.m.kind && !strcmp(r.m.kind, EPISODE_KIND);
    if (yes) {
        json_t *md = r.m.metadata ? json_loads(r.m.metadata, 0, NULL) : NULL;
        yes = !strcmp(op_str(md, "projectID", ""), project);
        json_decref(md);
    }
    store_row_clear(&r);
    return yes;
}

/* The existing episode of ns and project with this text (same normalised
 * text), or 0. */
static int find_episode(remem *db, const char *ns, const char *project, const char *text,
                        int64_t *rowid) {
    *rowid = 0;
    char *norm = util_normalize_text(text);
    if (!norm) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    uint64_t h = util_hash64(norm, strlen(norm));
    int rc = REMEM_OK;
    for (int64_t after = 0;;) {
        int64_t rid = 0;
        if ((rc = store_find_dup_after(db->st, ns, h, norm, after, &rid))) {
            rc = eng_store_fail(db, rc);
            break;
        }
        if (!rid) break;
        if (episode_of(db, rid, project, &rc)) {
            *rowid = rid;
            break;
        }
        if (rc) break;
        after = rid;
    }
    free(norm);
    return rc;
}

/* How many episodes of project ns holds, from the namespace's cache (its
 * rows and parsed metadata stay in memory, so a count reads no row from
 * the store). */
static int count_project(remem *db, const char *ns, const char *project, int64_t *n) {
    int rc = REMEM_OK;
    *n = 0;
    ns_cache *c = cache_get(db, ns, &rc);
    if (!c) return rc;
    for (size_t i = 0; i < c->n; i++) {
        const remem_memory *m = &c->rows[i].m;
        if (!m->kind || strcmp(m->kind, EPISODE_KIND)) continue;
        const char *p = json_string_value(json_object_get(cache_meta(c, i), "projectID"));
        *n += p && !strcmp(p, project);
    }
    cache_put(db, c);
    return REMEM_OK;
}

/* Seed 003's trigger: when a new episode takes its project past
 * maxEpisodesPerProject, the retention rules (age, then count: a
 * project's oldest go to the archive) run on the namespace at once,
 * without waiting for the schedule; clustering stays with the scheduled
 * prune. Their PruneReport goes in the answer as "prune". A namespace of
 * no more memories than the limit is never counted. */
static int enforce_limit(remem *db, json_t *args, const char *project, json_t *result) {
    const char *ns = op_str(args, "ns", NULL);
    maint_policy pol;
    maint_policy_get(db, ns, &pol);
    pol.max_episodes_per_project =
        (int)op_int(args, "max_episodes_per_project", pol.max_episodes_per_project);
    if (pol.max_episodes_per_project <= 0) return REMEM_OK;
    int64_t rows = 0;
    if (store_ns_info(db->st, ns, NULL, 0, NULL, NULL, &rows) ||
        rows <= pol.max_episodes_per_project)
        return REMEM_OK;
    int64_t n = 0;
    int rc = count_project(db, ns, project, &n);
    if (rc) return rc;
    if (n <= pol.max_episodes_per_project) return REMEM_OK;
    json_t *pa = json_pack("{s:s,s:s,s:i,s:i}", "ns", ns, "strategy", "none", "ids_limit", 100,
                           "max_episodes_per_project", pol.max_episodes_per_project);
    json_t *days = json_object_get(args, "retention_days");
    if (days) json_object_set(pa, "retention_days", days);
    json_t *rep = NULL;
    rc = maint_prune(db, pa, &rep);
    json_decref(pa);
    /* The episode is stored either way: a failed prune is reported, not
     * turned into a failed add (the next prune tries again). */
    if (rc) {
        json_object_set_new(result, "pruneError", json_string(remem_errmsg(db)));
        eng_ok(db);
    } else {
        json_object_set_new(result, "prune", rep);
    }
    return REMEM_OK;
}

static int op_episode_add(remem *db, json_t *args, json_t **result) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    const char *ns = op_str(args, "ns", NULL), *prompt = op_str(args, "prompt", NULL),
               *output = op_str(args, "output", NULL);
    json_t *meta = json_object_get(args, "meta");
    int64_t now = util_now_ms(), ts = now;
    const char *tstext = op_str(meta, "timestamp", NULL);
    char why[128];
    if (tstext && util_parse_time_why(tstext, &ts, why, sizeof why))
        return eng_fail(db, REMEM_EINVAL, "meta.timestamp: \"%s\" is not a valid time (%s)", tstext,
                        why);
    char iso[40];
    remem_format_time(ts, iso, sizeof iso);
    size_t pl = strlen(prompt), ol = strlen(output);
    char *text = malloc(pl + ol + 3);
    if (!text) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    memcpy(text, prompt, pl);
    memcpy(text + pl, "\n\n", 2);
    memcpy(text + pl + 2, output, ol + 1);
    json_t *mo = episode_meta(meta, iso, pl);
    char *mtext = json_dumps(mo, JSON_COMPACT);
    json_decref(mo);
    char id[512];
    snprintf(id, sizeof id, "%s_%s_%lld", op_str(meta, "projectID", ""), op_str(meta, "taskID", ""),
             (long long)ts);
    if (!mtext) {
        free(text);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    /* The duplicate check and the fold share one transaction; a new
     * episode goes through remem_add (embedding outside any lock). */
    int64_t rowid = 0;
    if (db->opt.read_only)
        rc = eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    else if ((rc = store_begin(db->st)))
        eng_store_fail(db, rc);
    else {
        txn x = {0};
        rc = find_episode(db, ns, op_str(meta, "projectID", ""), text, &rowid);
        if (!rc && rowid) {
            rc = fold_duplicate(db, &x, rowid, mtext, ts, now, result);
            rc = eng_txn_end(db, &x, rc);
        } else {
            eng_txn_end(db, &x, 1); /* nothing written: roll back */
            eng_ok(db);
        }
    }
    if (!rc && !rowid) {
        remem_memory m;
        remem_memory_init(&m);
        m.ns = ns;
        m.id = id;
        m.kind = EPISODE_KIND;
        m.text = text;
        m.metadata = mtext;
        m.created_at = ts;
        int outcome = 0;
        char got[512];
        rc = remem_add(db, &m, got, sizeof got, &outcome);
        if (!rc)
            *result =
                json_pack("{s:s,s:s,s:s,s:i}", "id", got, "ns", ns, "outcome",
                          outcome == REMEM_UPSERTED ? "upserted" : "added", "duplicateCount", 0);
        if (!rc && *result) rc = enforce_limit(db, args, op_str(meta, "projectID", ""), *result);
    }
    if (!rc && *result) {
        json_t *r = *result;
        char line[700];
        int w = snprintf(line, sizeof line, "%s episode %s",
                         json_string_value(json_object_get(r, "outcome")),
                         json_string_value(json_object_get(r, "id")));
        json_t *pr = json_object_get(r, "prune");
        if (pr && w > 0 && (size_t)w < sizeof line)
            snprintf(line + w, sizeof line - (size_t)w,
                     "; the project passed maxEpisodesPerProject: %lld archived",
                     (long long)json_integer_value(json_object_get(pr, "removedCount")));
        json_object_set_new(r, "text", json_string(line));
    }
    free(text);
    free(mtext);
    return rc;
}

/* The filter of a retrieval: episodes (and the summaries prune made of
 * them) of the project and language asked for. */
static char *recall_filter(const char *project, const char *language) {
    json_t *all = json_array();
    json_array_append_new(all, json_pack("{s:{s:[s,s]}}", "kind", "$in", EPISODE_KIND, "summary"));
    if (project) json_array_append_new(all, json_pack("{s:{s:s}}", "projectID", "$eq", project));
    if (language) json_array_append_new(all, json_pack("{s:{s:s}}", "language", "$eq", language));
    json_t *f = json_pack("{s:o}", "$and", all);
    char *s = json_dumps(f, JSON_COMPACT);
    json_decref(f);
    return s;
}

typedef struct ranked {
    const remem_hit *h;
    double score;
} ranked;

static int by_score(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->h->similarity > y->h->similarity ? -1 : x->h->similarity < y->h->similarity;
}

/* The first non-blank line of s[0..n), at most SUMMARY_SIDE bytes (cut
 * at a character boundary, "..." added), appended to b. */
static void first_line(strbuf *b, const char *s, size_t n) {
    while (n && (*s == '\n' || *s == '\r' || *s == ' ' || *s == '\t')) s++, n--;
    size_t len = 0;
    while (len < n && s[len] != '\n' && s[len] != '\r') len++;
    int cut = len > SUMMARY_SIDE;
    if (cut) len = SUMMARY_SIDE;
    len = util_utf8_check(s, len); /* never half a character */
    sb_append(b, s, len);
    if (cut) sb_puts(b, "...");
}

/* Seed 003's per-episode summary ("optionally generate summary"), made
 * without a model so that retrieval stays as fast as a recall: the
 * prompt's first line and the output's first line ("prompt -> output"). */
static char *episode_summary(const char *text, size_t prompt_bytes) {
    size_t tl = strlen(text);
    strbuf b;
    sb_init(&b);
    first_line(&b, text, prompt_bytes);
    sb_puts(&b, " -> ");
    size_t out = prompt_bytes + 2 <= tl ? prompt_bytes + 2 : tl;
    first_line(&b, text + out, tl - out);
    return sb_take(&b);
}

/* One retrieved episode as seed 003 returns it: prompt, output, metadata,
 * similarity, summary (a cluster summary's text). */
static json_t *episode_json(const remem_hit *h, double score) {
    const remem_memory *m = &h->mem;
    json_t *meta = m->metadata ? json_loads(m->metadata, 0, NULL) : NULL;
    if (!meta) meta = json_object();
    json_t *o = json_pack("{s:s,s:s}", "id", m->id, "kind", m->kind);
    if (!strcmp(m->kind, EPISODE_KIND)) {
        size_t pb = (size_t)op_int(meta, "promptBytes", 0), tl = strlen(m->text);
        if (pb > tl) pb = tl;
        json_object_set_new(o, "prompt", json_stringn(m->text, pb));
        json_object_set_new(o, "output", json_string(m->text + (pb + 2 <= tl ? pb + 2 : tl)));
        char *sum = episode_summary(m->text, pb);
        if (sum) json_object_set_new(o, "summary", json_string(sum));
        free(sum);
    } else {
        json_object_set_new(o, "summary", json_string(m->text));
        json_t *links = m->links ? json_loads(m->links, 0, NULL) : NULL;
        json_object_set_new(o, "links", links ? links : json_array());
    }
    json_object_del(meta, "promptBytes");
    json_object_set_new(o, "metadata", meta);
    json_object_set_new(o, "similarity", json_real(h->similarity));
    json_object_set_new(o, "score", json_real(score));
    json_object_set_new(o, "duplicateCount", json_integer(m->duplicate_count));
    if (!m->model) json_object_set_new(o, "vector", json_false()); /* pending embedding */
    return o;
}

static int op_episode_recall(remem *db, json_t *args, json_t **result) {
    const char *ns = op_str(args, "ns", NULL), *query = op_str(args, "query", NULL);
    const char *project = op_str(args, "project", NULL), *language = op_str(args, "language", NULL);
    int cross = op_bool(args, "cross_project", 0);
    if (!project && !cross)
        return eng_fail(db, REMEM_EINVAL,
                        "episode.recall: give a project (--project) or ask for cross-project "
                        "retrieval (--cross-project): episodes are never mixed across projects "
                        "by default");
    maint_policy pol;
    maint_policy_get(db, ns, &pol);
    int max = (int)op_int(args, "max", 5);
    double minsim = op_num(args, "min_similarity", pol.similarity_threshold);
    double factor = op_num(args, "feedback_weight_factor", pol.feedback_weight_factor);
    char *filter = recall_filter(cross ? NULL : project, language);
    if (!filter) return eng_fail(db, REMEM_ENOMEM, "out of memory");
    remem_query q;
    remem_query_init(&q);
    const char *nss[1] = {ns};
    q.text = query;
    q.namespaces = nss;
    q.n_namespaces = 1;
    q.filter = filter;
    q.profile = "episodes";
    /* More candidates than asked for: the feedback weight may reorder them. */
    q.k = max * 4 > 1000 ? 1000 : max * 4;
    q.min_similarity = minsim;
    remem_result *res = NULL;
    int rc = remem_recall(db, &q, &res);
    free(filter);
    if (rc) return rc;
    ranked *rk = calloc(res->n ? res->n : 1, sizeof *rk);
    size_t n = 0;
    for (size_t i = 0; rk && i < res->n; i++) {
        const remem_hit *h = &res->hits[i];
        const char *md = h->mem.metadata;
        if (!strcmp(h->mem.kind, "summary") && (!md || !strstr(md, "\"" EPISODE_SUMMARY_KEY "\"")))
            continue;
        if (!isnan(h->similarity) && h->similarity < minsim) continue;
        json_t *meta = md ? json_loads(md, 0, NULL) : NULL;
        double fb = op_num(meta, "feedback", 0);
        json_decref(meta);
        double sim = isnan(h->similarity) ? 0 : h->similarity;
        rk[n].h = h;
        rk[n++].score = fb > 0 ? sim * factor : sim;
    }
    if (!rk) {
        remem_result_free(res);
        return eng_fail(db, REMEM_ENOMEM, "out of memory");
    }
    if (n > 1) qsort(rk, n, sizeof *rk, by_score);
    if (n > (size_t)max) n = (size_t)max;
    json_t *eps = json_array();
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        json_array_append_new(eps, episode_json(rk[i].h, rk[i].score));
        sum += isnan(rk[i].h->similarity) ? 0 : rk[i].h->similarity;
    }
    int too_few = n < (size_t)max;
    char text[256];
    /* Seed 003 failure mode 3: "log event". Every retrieval that came back
     * short is counted, telemetry on or off (remem_telemetry_stats, the
     * server's /metrics), besides the span's tooFewMatches. */
    if (too_few)
        tm_count("memory.retrieve_episodes.too_few_matches", "{retrieval}",
                 "Episode retrievals with fewer matches above minSimilarity than asked for.", 1);
    if (too_few)
        snprintf(text, sizeof text,
                 "%zu episode%s above minSimilarity %.2f (asked for %d): too few matches", n,
                 n == 1 ? "" : "s", minsim, max);
    else
        snprintf(text, sizeof text, "%zu episodes above minSimilarity %.2f", n, minsim);
    *result = json_pack("{s:o,s:i,s:b,s:f,s:f,s:s}", "episodes", eps, "numResults", (int)n,
                        "tooFewMatches", too_few, "minSimilarity", minsim, "avgSimilarity",
                        n ? sum / (double)n : 0.0, "text", text);
    json_object_set_new(*result, "queryTimeMs", json_real(res->took_ms));
    if (project) json_object_set_new(*result, "projectID", json_string(project));
    free(rk);
    remem_result_free(res);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

#define S_NS "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace\"}"

const engine_op episode_ops[] = {
    {{"episode.add", "write",
      "Store a completed episode: prompt, output and EpisodeMetadata; a repeated "
      "prompt/output pair updates the stored one and counts the duplicate.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"prompt\",\"output\",\"meta\"],"
      "\"properties\":{" S_NS ","
      "\"prompt\":{\"type\":\"string\",\"minLength\":1,\"description\":\"the prompt sent to the "
      "model\"},"
      "\"output\":{\"type\":\"string\",\"minLength\":1,\"description\":\"what the model "
      "produced\"},"
      "\"meta\":{\"type\":\"object\",\"description\":\"EpisodeMetadata\","
      "\"required\":[\"taskID\",\"projectID\"],\"properties\":{"
      "\"taskID\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"description\":\"the "
      "task\"},"
      "\"projectID\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"description\":\"the "
      "project\"},"
      "\"timestamp\":{\"type\":\"string\",\"description\":\"when (ISO 8601 or ms; default "
      "now)\"},"
      "\"modelUsed\":{\"type\":\"string\",\"description\":\"the generating model\"},"
      "\"tokensIn\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"prompt tokens\"},"
      "\"tokensOut\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"completion "
      "tokens\"},"
      "\"generationOutcome\":{\"enum\":[\"accepted\",\"fixed\",\"failed\"],\"description\":"
      "\"what became of the output (default accepted)\"},"
      "\"language\":{\"type\":\"string\",\"description\":\"programming language\"},"
      "\"filesChanged\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":"
      "\"paths the episode changed\"},"
      "\"feedback\":{\"type\":\"number\",\"minimum\":-1,\"maximum\":1,\"description\":"
      "\"feedback score; positive ones weigh feedbackWeightFactor in recall\"}}},"
      "\"max_episodes_per_project\":{\"type\":\"integer\",\"minimum\":0,\"description\":"
      "\"maxEpisodesPerProject for this add (default from the config): past it the project's "
      "oldest are archived at once\"},"
      "\"retention_days\":{\"type\":\"number\",\"minimum\":0,\"description\":\"retentionDays "
      "of that archiving run (default from the config)\"}}}", 0, "episodes"},
     op_episode_add},
    {{"episode.recall", "read",
      "Few-shot retrieval: the episodes most similar to a query, "
      "strictly within one project unless cross_project is set.",
      "{\"type\":\"object\",\"required\":[\"ns\",\"query\"],\"properties\":{" S_NS ","
      "\"query\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":32768,\"description\":"
      "\"queryPrompt\"},"
      "\"project\":{\"type\":\"string\",\"minLength\":1,\"description\":\"projectID: only this "
      "project's episodes\"},"
      "\"language\":{\"type\":\"string\",\"minLength\":1,\"description\":\"languageFilter\"},"
      "\"max\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":250,\"description\":\"maxResults "
      "(default 5)\"},"
      "\"min_similarity\":{\"type\":\"number\",\"minimum\":-1,\"maximum\":1,\"description\":"
      "\"minSimilarity (default: similarityThreshold, 0.7)\"},"
      "\"cross_project\":{\"type\":\"boolean\",\"description\":\"search every project (the "
      "project filter is then ignored)\"},"
      "\"feedback_weight_factor\":{\"type\":\"number\",\"minimum\":0,\"maximum\":100,"
      "\"description\":\"weight of episodes with positive feedback (default "
      "feedbackWeightFactor, 1.5)\"}}}", REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "episodes"},
     op_episode_recall},
};
const size_t episode_ops_n = sizeof episode_ops / sizeof episode_ops[0];
