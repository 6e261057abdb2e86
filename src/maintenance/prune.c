/*
 * prune.c: seed 003's "Summarization & Pruning" and "Aging & Retention"
 * as the operations "prune" and "maintain". Three rules, applied to the
 * episodes of a namespace in this order, each to what the previous left:
 *
 *   age      episodes older than retentionDays are archived;
 *   count    beyond maxEpisodesPerProject in a project, the oldest are
 *            archived;
 *   clusters near-duplicates (cosine >= similarityThreshold, never across
 *            projects) become one summary memory (kind "summary", linked
 *            to its members, metadata episodeSummary) and the members are
 *            archived. summarizationStrategy "none" leaves them alone.
 *
 * Nothing is deleted: every episode that leaves the live store goes to
 * the archive (archive.c) and "restore" brings it back, so the
 * PruneReport's episodesRemoved and episodesArchived name the same ids.
 *
 * Bounded memory (seed 003 failure mode 5): the first pass keeps 24 bytes
 * per episode (rowid, time, project), never texts or vectors; clustering
 * streams the rows with their vectors through a window of PRUNE_WINDOW
 * episodes (greedy leader clustering within the window), and the archive
 * is written in files of PRUNE_BATCH memories. The answer lists at most
 * "ids_limit" ids (the counts are always exact); the report file under
 * ARCHIVE/reports/ lists them all.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index/flat.h"
#include "maintenance/archive_file.h"
#include "lifecycle/lifecycle.h"
#include "maintenance/maintenance.h"
#include "engine/telemetry_glue.h"
#include "telemetry/telemetry.h"

#define PRUNE_WINDOW 2048
#define PRUNE_BATCH  1000

/* ---- pass 1: every episode's rowid, time and project ---- */

typedef struct ep {
    int64_t rowid, created;
    uint32_t project;
    uint8_t gone; /* 0 live; 1 age; 2 count; 3 cluster */
} ep;

typedef struct pass1 {
    ep *e;
    size_t n, cap;
    char **projects; /* interned names; small (projects, not episodes) */
    size_t np, pcap;
    int oom;
} pass1;

static uint32_t intern(pass1 *p, const char *name) {
    for (size_t i = p->np; i-- > 0;)
        if (!strcmp(p->projects[i], name)) return (uint32_t)i;
    if (p->np == p->pcap) {
        size_t nc = p->pcap ? p->pcap * 2 : 16;
        char **q = realloc(p->projects, nc * sizeof *q);
        if (!q) return (p->oom = 1), 0;
        p->projects = q;
        p->pcap = nc;
    }
    p->projects[p->np] = strdup(name);
    if (!p->projects[p->np]) p->oom = 1;
    return (uint32_t)p->np++;
}

static const char *meta_project(const char *md, char *buf, size_t cap) {
    json_t *o = md ? json_loads(md, 0, NULL) : NULL;
    snprintf(buf, cap, "%s", json_string_value(json_object_get(o, "projectID")) ?: "");
    json_decref(o);
    return buf;
}

static int collect(void *ctx, const store_row *r) {
    pass1 *p = ctx;
    if (!r->m.kind || strcmp(r->m.kind, EPISODE_KIND)) return 0;
    if (p->n == p->cap) {
        size_t nc = p->cap ? p->cap * 2 : 1024;
        ep *q = realloc(p->e, nc * sizeof *q);
        if (!q) return REMEM_ENOMEM;
        p->e = q;
        p->cap = nc;
    }
    char pb[256];
    p->e[p->n++] =
        (ep){r->rowid, r->m.created_at, intern(p, meta_project(r->m.metadata, pb, sizeof pb)), 0};
    return p->oom ? REMEM_ENOMEM : 0;
}

static int by_project_newest(const void *a, const void *b) {
    const ep *x = a, *y = b;
    if (x->project != y->project) return x->project < y->project ? -1 : 1;
    if (x->created != y->created) return x->created > y->created ? -1 : 1;
    return x->rowid > y->rowid ? -1 : x->rowid < y->rowid;
}

static int by_rowid(const void *a, const void *b) {
    const ep *x = a, *y = b;
    return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

/* ---- pass 2: clusters, through a window of rows with vectors ---- */

typedef struct wrow {
    int64_t rowid;
    uint32_t project;
    float *vec;
    int leader; /* index of its cluster's leader in the window, or -1 */
} wrow;

typedef struct cluster {
    int64_t *rowids;
    size_t n;
} cluster;

typedef struct pass2 {
    pass1 *p1; /* sorted by rowid: bsearch for each scanned row */
    double thr;
    int dim;
    wrow w[PRUNE_WINDOW];
    size_t wn;
    cluster *cl;
    size_t ncl, clcap;
    int oom;
} pass2;

static void window_flush(pass2 *s) {
    for (size_t i = 0; i < s->wn; i++) {
        if (s->w[i].leader != (int)i) continue;
        size_t m = 0;
        for (size_t j = i; j < s->wn; j++) m += s->w[j].leader == (int)i;
        if (m < 2) continue;
        if (s->ncl == s->clcap) {
            size_t nc = s->clcap ? s->clcap * 2 : 16;
            cluster *q = realloc(s->cl, nc * sizeof *q);
            if (!q) {
                s->oom = 1;
                break;
            }
            s->cl = q;
            s->clcap = nc;
        }
        cluster *c = &s->cl[s->ncl];
        c->rowids = malloc(m * sizeof *c->rowids);
        if (!c->rowids) {
            s->oom = 1;
            break;
        }
        c->n = 0;
        for (size_t j = i; j < s->wn; j++)
            if (s->w[j].leader == (int)i) c->rowids[c->n++] = s->w[j].rowid;
        s->ncl++;
    }
    for (size_t i = 0; i < s->wn; i++) free(s->w[i].vec);
    s->wn = 0;
}

/* Is a . b >= thr, decided as it always was (a double sum, in order)?
 * Every row is compared with up to PRUNE_WINDOW leaders, and episodes
 * that do not cluster compare with all of them, so the comparison is
 * prune's cost: a float SIMD dot (flat_dot) first, whose error for
 * vectors of length <= 1 is far below PRUNE_DOT_MARGIN, settles the
 * clear cases; only a dot within the margin of the threshold is summed
 * again the exact way. The decisions are those of the exact sum alone. */
#define PRUNE_DOT_MARGIN 1e-3

static int similar_enough(const float *a, const float *b, int dim, double thr) {
    if ((double)flat_dot(a, b, dim) < thr - PRUNE_DOT_MARGIN) return 0;
    double dot = 0;
    for (int d = 0; d < dim; d++) dot += (double)a[d] * b[d];
    return dot >= thr;
}

static int cluster_row(void *ctx, const store_row *r) {
    pass2 *s = ctx;
    ep key = {.rowid = r->rowid};
    ep *e = bsearch(&key, s->p1->e, s->p1->n, sizeof key, by_rowid);
    /* A scanned row's vector is r->m.vector (the store's, maybe unaligned). */
    if (!e || e->gone || !r->m.vector || r->m.dim != s->dim) return 0;
    wrow *w = &s->w[s->wn];
    w->rowid = r->rowid;
    w->project = e->project;
    w->vec = malloc((size_t)s->dim * sizeof(float));
    if (!w->vec) return REMEM_ENOMEM;
    memcpy(w->vec, r->m.vector, (size_t)s->dim * sizeof(float));
    w->leader = (int)s->wn;
    /* Greedy leader clustering: join the first leader of the same
     * project that is similar enough (vectors are unit length). */
    for (size_t i = 0; i < s->wn; i++) {
        if (s->w[i].leader != (int)i || s->w[i].project != w->project) continue;
        if (similar_enough(s->w[i].vec, w->vec, s->dim, s->thr)) {
            w->leader = (int)i;
            break;
        }
    }
    if (++s->wn == PRUNE_WINDOW) window_flush(s);
    return s->oom ? REMEM_ENOMEM : 0;
}

/* ---- the run ---- */

typedef struct prune_run {
    remem *db;
    const char *ns;
    maint_policy pol;
    int64_t now;
    int dry_run;
    size_t ids_limit;
    json_t *removed; /* the first ids_limit ids */
    json_t *summaries;
    FILE *all_ids; /* every id, for the report file (NULL: dry run) */
    int64_t n_removed, by_age, by_count, by_cluster, clusters;
    char fallback[64];
    char last_method[64]; /* the last cluster's summariser (memory.summarize) */
} prune_run;

static void note_ids(prune_run *pr, json_t *ids, int64_t n) {
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) {
        if ((size_t)json_array_size(pr->removed) < pr->ids_limit) json_array_append(pr->removed, v);
        if (pr->all_ids) fprintf(pr->all_ids, "%s\n", json_string_value(v));
    }
    pr->n_removed += n;
}

/* Archive the rows of p1 marked gone, in batches (dry run: list them). */
static int archive_marked(prune_run *pr, pass1 *p1, uint8_t which) {
    int64_t *batch = malloc(PRUNE_BATCH * sizeof *batch);
    if (!batch) return eng_fail(pr->db, REMEM_ENOMEM, "out of memory");
    size_t bn = 0;
    int rc = REMEM_OK;
    for (size_t i = 0; !rc && i <= p1->n; i++) {
        if (i < p1->n && p1->e[i].gone == which) batch[bn++] = p1->e[i].rowid;
        if (bn && (bn == PRUNE_BATCH || i == p1->n)) {
            json_t *ids = json_array();
            if (pr->dry_run) {
                for (size_t j = 0; j < bn; j++) {
                    store_row r;
                    if (!store_get_rowid(pr->db->st, batch[j], 0, &r))
                        json_array_append_new(ids, json_string(r.m.id));
                    store_row_clear(&r);
                }
            } else {
                rc = maint_archive_rows(pr->db, pr->pol.archive_location, pr->ns, batch, bn,
                                        pr->now, "prune", ids);
            }
            if (!rc) note_ids(pr, ids, (int64_t)json_array_size(ids));
            json_decref(ids);
            bn = 0;
        }
    }
    free(batch);
    return rc;
}

/* One cluster: its summary memory, then its members archived. */
static int summarise_cluster(prune_run *pr, const cluster *c, const char *project) {
    remem *db = pr->db;
    store_row *rows = calloc(c->n, sizeof *rows);
    const char **texts = calloc(c->n, sizeof *texts);
    const float **vecs = calloc(c->n, sizeof *vecs);
    json_t *members = json_array();
    int rc = rows && texts && vecs ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < c->n; i++) {
        if ((rc = store_get_rowid(db->st, c->rowids[i], 1, &rows[i]))) {
            eng_store_fail(db, rc);
            break;
        }
        texts[i] = rows[i].m.text;
        vecs[i] = rows[i].vec;
        json_array_append_new(members, json_string(rows[i].m.id));
    }
    char *summary = NULL, method[64] = "", why[512] = "";
    /* summarizationStrategy "llm": the model's summary when one is
     * configured and answers; "heuristic" (or the model absent or
     * failing): the extractive summary, named in the report. */
    int want_llm = strcmp(pr->pol.strategy, "llm") == 0;
    if (!rc && (rc = lc_summarise_texts(db, texts, c->n, want_llm, &summary, method, sizeof method,
                                        why, sizeof why))) {
        char detail[512]; /* eng_fail writes where remem_errmsg reads */
        snprintf(detail, sizeof detail, "%s", remem_errmsg(db));
        eng_fail(db, rc, "prune: summarising a cluster failed: %s", detail);
    }
    if (!rc && want_llm && strcmp(method, "llm") != 0)
        snprintf(pr->fallback, sizeof pr->fallback, "extractive (%.40s)", why);
    /* memory.summarize's modelUsedForSummarization: the model, or the
     * summariser that stood in for it */
    if (!rc) {
        const char *model = strcmp(method, "llm") == 0 ? llm_model(eng_llm(db)) : NULL;
        snprintf(pr->last_method, sizeof pr->last_method, "%s", model ? model : method);
    }
    if (!rc && !pr->dry_run) {
        json_t *md =
            json_pack("{s:b,s:s,s:O,s:s,s:i}", EPISODE_SUMMARY_KEY, 1, "projectID", project,
                      "members", members, "method", method, "episodes", (int)c->n);
        char *mdt = json_dumps(md, JSON_COMPACT), *links = json_dumps(members, JSON_COMPACT);
        json_decref(md);
        remem_memory m;
        remem_memory_init(&m);
        m.ns = pr->ns;
        m.kind = "summary";
        m.tier = "long";
        m.text = summary;
        m.metadata = mdt;
        m.links = links;
        char id[64];
        float *vec = malloc((size_t)db->emb->dim * sizeof *vec);
        int pending = 0;
        if (!mdt || !links || !vec)
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        else if (!(rc = eng_validate(db, &m)))
            rc = eng_embed_for_add(db, (const char *const *)&m.text, 1, vec, &pending);
        /* the summary and the archiving of its members: one transaction */
        json_t *ids = json_array();
        if (!rc)
            rc = maint_archive_rows_adding(db, pr->pol.archive_location, pr->ns, c->rowids, c->n,
                                           pr->now, "prune", ids, &m, pending ? NULL : vec, id,
                                           sizeof id);
        if (!rc) json_array_append_new(pr->summaries, json_string(id));
        free(vec);
        free(mdt);
        free(links);
        if (!rc) note_ids(pr, ids, (int64_t)json_array_size(ids));
        json_decref(ids);
    } else if (!rc) {
        note_ids(pr, members, (int64_t)c->n);
    }
    if (!rc) pr->by_cluster += (int64_t)c->n, pr->clusters++;
    free(summary);
    for (size_t i = 0; rows && i < c->n; i++) store_row_clear(&rows[i]);
    free(rows);
    free(texts);
    free(vecs);
    json_decref(members);
    return rc;
}

static int prune_ns(prune_run *pr) {
    remem *db = pr->db;
    pass1 p1 = {0};
    int rc = store_scan(db->st, pr->ns, 0, collect, &p1);
    if (rc) rc = rc == REMEM_ENOMEM ? eng_fail(db, rc, "out of memory") : eng_store_fail(db, rc);
    /* age and count: seed 003's retention enforcement, its own span */
    tm_span *ret = rc ? NULL : tm_span_start("memory.retention_enforce", TM_KIND_INTERNAL);
    uint64_t ret0 = ret ? tm_now_ns() : 0;
    if (!rc && pr->pol.retention_days > 0) {
        int64_t cut = pr->now - (int64_t)llround(pr->pol.retention_days * 86400000.0);
        for (size_t i = 0; i < p1.n; i++)
            if (p1.e[i].created < cut) p1.e[i].gone = 1, pr->by_age++;
    }
    /* count: newest first within each project */
    if (!rc && pr->pol.max_episodes_per_project > 0) {
        if (p1.n > 1) qsort(p1.e, p1.n, sizeof *p1.e, by_project_newest);
        int64_t kept = 0;
        for (size_t i = 0; i < p1.n; i++) {
            if (i == 0 || p1.e[i].project != p1.e[i - 1].project) kept = 0;
            if (p1.e[i].gone) continue;
            if (++kept > pr->pol.max_episodes_per_project) p1.e[i].gone = 2, pr->by_count++;
        }
    }
    if (p1.n > 1) qsort(p1.e, p1.n, sizeof *p1.e, by_rowid); /* e is NULL when n is 0 */
    if (!rc) rc = archive_marked(pr, &p1, 1);
    if (!rc) rc = archive_marked(pr, &p1, 2);
    if (ret) {
        tm_span_str(ret, "remem.namespace", pr->ns);
        /* the attribute names of seed 003's memory.retention_enforce */
        tm_span_int(ret, "episodesArchived", pr->dry_run ? 0 : pr->by_age + pr->by_count);
        tm_span_int(ret, "episodesDeleted", 0); /* remem archives, never deletes */
        tm_span_int(ret, "episodesByAge", pr->by_age);
        tm_span_int(ret, "episodesByCount", pr->by_count);
        tm_span_dbl(ret, "retentionDays", pr->pol.retention_days);
        tm_span_int(ret, "maxEpisodesPerProject", pr->pol.max_episodes_per_project);
        tm_span_bool(ret, "dryRun", pr->dry_run);
        tm_span_dbl(ret, "durationMs", (double)(tm_now_ns() - ret0) / 1e6);
        if (rc) tm_span_error(ret, pr->db->err);
        tm_span_end(ret);
    }
    /* clusters */
    if (!rc && strcmp(pr->pol.strategy, "none") != 0 && p1.n > 1) {
        pass2 *s = calloc(1, sizeof *s);
        if (!s) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        if (s) {
            s->p1 = &p1;
            s->thr = pr->pol.similarity_threshold;
            s->dim = db->emb->dim;
            rc = store_scan(db->st, pr->ns, 1, cluster_row, s);
            if (!rc) window_flush(s);
            if (rc || s->oom)
                rc = rc && rc != REMEM_ENOMEM ? eng_store_fail(db, rc)
                                              : eng_fail(db, REMEM_ENOMEM, "out of memory");
            for (size_t i = 0; i < s->wn; i++) free(s->w[i].vec);
            for (size_t i = 0; i < s->ncl; i++) {
                if (!rc) {
                    ep key = {.rowid = s->cl[i].rowids[0]};
                    ep *e = bsearch(&key, p1.e, p1.n, sizeof key, by_rowid);
                    const char *project = e ? p1.projects[e->project] : "";
                    tm_span *sum = tm_span_start("memory.summarize", TM_KIND_INTERNAL);
                    uint64_t sum0 = sum ? tm_now_ns() : 0;
                    rc = summarise_cluster(pr, &s->cl[i], project);
                    if (sum) {
                        tm_span_str(sum, "remem.namespace", pr->ns);
                        tm_span_str(sum, "projectID", project);
                        tm_span_int(sum, "episodesSummarizedCount", (int64_t)s->cl[i].n);
                        tm_span_dbl(sum, "summarizationTimeMs", (double)(tm_now_ns() - sum0) / 1e6);
                        tm_span_str(sum, "modelUsedForSummarization", pr->last_method);
                        tm_span_str(sum, "summarizationStrategy", pr->pol.strategy);
                        tm_span_bool(sum, "dryRun", pr->dry_run);
                        if (rc) tm_span_error(sum, pr->db->err);
                        tm_span_end(sum);
                    }
                }
                free(s->cl[i].rowids);
            }
            free(s->cl);
            free(s);
        }
    }
    for (size_t i = 0; i < p1.np; i++) free(p1.projects[i]);
    free(p1.projects);
    free(p1.e);
    return rc;
}

/* The policy of ns with the arguments' overrides. */
static void run_policy(remem *db, json_t *args, const char *ns, maint_policy *pol) {
    maint_policy_get(db, ns, pol);
    pol->max_episodes_per_project =
        (int)op_int(args, "max_episodes_per_project", pol->max_episodes_per_project);
    pol->retention_days = op_num(args, "retention_days", pol->retention_days);
    pol->similarity_threshold = op_num(args, "similarity_threshold", pol->similarity_threshold);
    snprintf(pol->strategy, sizeof pol->strategy, "%s", op_str(args, "strategy", pol->strategy));
    const char *loc = op_str(args, "archive_location", NULL);
    if (loc) snprintf(pol->archive_location, sizeof pol->archive_location, "%s", loc);
}

static int write_report(prune_run *pr, json_t *report, const char *ids_path, char *out,
                        size_t cap) {
    char dir[1200], iso[40];
    snprintf(dir, sizeof dir, "%s/reports", pr->pol.archive_location);
    if (arch_mkdirs(dir)) return eng_fail(pr->db, REMEM_EIO, "cannot create %s", dir);
    remem_format_time(pr->now, iso, sizeof iso);
    static atomic_uint counter; /* two reports of one millisecond */
    snprintf(out, cap, "%s/prune-%s-%d-%u.json", dir, iso, (int)getpid(),
             atomic_fetch_add(&counter, 1));
    FILE *f = fopen(out, "w");
    if (!f) return eng_fail(pr->db, REMEM_EIO, "cannot create %s", out);
    /* The full lists come from the id file, one id a line. */
    json_t *full = json_deep_copy(report);
    json_t *all = json_array();
    FILE *in = ids_path ? fopen(ids_path, "r") : NULL;
    char line[1024];
    while (in && fgets(line, sizeof line, in)) {
        line[strcspn(line, "\n")] = '\0';
        json_array_append_new(all, json_string(line));
    }
    if (in) fclose(in);
    json_object_set(full, "episodesRemoved", all);
    json_object_set_new(full, "episodesArchived", all);
    int rc = json_dumpf(full, f, JSON_INDENT(2)) || fputc('\n', f) == EOF;
    rc |= fflush(f) || fsync(fileno(f));
    fclose(f);
    json_decref(full);
    return rc ? eng_fail(pr->db, REMEM_EIO, "writing %s failed", out) : REMEM_OK;
}

/* A prune that writes: the archive folder's lock (held until the report
 * is written), recovery, and the file listing every removed id, under a
 * name of its own (two prunes never share one; recovery removes the list
 * of a prune that died). */
static int prune_begin(prune_run *pr, int *lk, char *ids_path, size_t cap) {
    const char *dir = pr->pol.archive_location;
    int rc = maint_archive_lock(pr->db, dir, 1, lk);
    if (!rc) rc = maint_archive_recover(pr->db, dir);
    int fd = -1;
    if (!rc) {
        snprintf(ids_path, cap, "%s/.prune-ids-%d-XXXXXX.part", dir, (int)getpid());
        fd = mkstemps(ids_path, 5);
        if (fd < 0 || !(pr->all_ids = fdopen(fd, "w+")))
            rc = eng_fail(pr->db, REMEM_EIO, "cannot create %s: %s", ids_path, strerror(errno));
    }
    if (rc) {
        if (fd >= 0) {
            close(fd);
            unlink(ids_path);
        }
        ids_path[0] = '\0';
        maint_archive_unlock(*lk);
        *lk = -1;
    }
    return rc;
}

static int op_prune(remem *db, json_t *args, json_t **result) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    prune_run pr = {.db = db,
                    .ns = op_str(args, "ns", NULL),
                    .dry_run = op_bool(args, "dry_run", 0),
                    .ids_limit = (size_t)op_int(args, "ids_limit", 10000)};
    run_policy(db, args, pr.ns, &pr.pol);
    pr.now = util_now_ms();
    const char *nowt = op_str(args, "now", NULL);
    char why[128];
    if (nowt && util_parse_time_why(nowt, &pr.now, why, sizeof why))
        return eng_fail(db, REMEM_EINVAL, "now: \"%s\" is not a valid time (%s)", nowt, why);
    if (!pr.dry_run && db->opt.read_only)
        return eng_fail(db, REMEM_EINVAL, "the store is open read-only");
    char ids_path[1300] = "";
    int lk = -1;
    if (!pr.dry_run && (rc = prune_begin(&pr, &lk, ids_path, sizeof ids_path))) return rc;
    pr.removed = json_array();
    pr.summaries = json_array();
    rc = prune_ns(&pr);
    if (pr.all_ids) fclose(pr.all_ids);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    char iso[40];
    remem_format_time(util_now_ms(), iso, sizeof iso);
    json_t *rep = NULL;
    if (!rc) {
        rep = json_pack("{s:s,s:O,s:O,s:I,s:f}", "timestamp", iso, "episodesRemoved", pr.removed,
                        "episodesArchived", pr.removed, "clustersCreated", (json_int_t)pr.clusters,
                        "durationMs", ms);
        json_object_set_new(rep, "ns", json_string(pr.ns));
        json_object_set_new(rep, "dryRun", json_boolean(pr.dry_run));
        json_object_set_new(rep, "removedCount", json_integer(pr.n_removed));
        json_object_set_new(rep, "reasons",
                            json_pack("{s:I,s:I,s:I}", "age", (json_int_t)pr.by_age, "count",
                                      (json_int_t)pr.by_count, "cluster",
                                      (json_int_t)pr.by_cluster));
        json_object_set_new(rep, "summaries", json_incref(pr.summaries));
        json_object_set_new(rep, "archiveLocation", json_string(pr.pol.archive_location));
        if ((int64_t)json_array_size(pr.removed) < pr.n_removed)
            json_object_set_new(rep, "idsTruncated", json_true());
        if (pr.fallback[0]) json_object_set_new(rep, "fallback", json_string(pr.fallback));
        char path[1400];
        /* maintain writes a report only when something happened. */
        int quiet = op_bool(args, "_maintain", 0) && !pr.n_removed && !pr.clusters;
        if (!pr.dry_run && !quiet && !(rc = write_report(&pr, rep, ids_path, path, sizeof path)))
            json_object_set_new(rep, "report", json_string(path));
        char text[300];
        snprintf(
            text, sizeof text,
            "%s%lld episodes %s (%lld by age, %lld by count, %lld in %lld clusters) in %.0f ms",
            pr.dry_run ? "dry run: " : "", (long long)pr.n_removed,
            pr.dry_run ? "would be archived" : "archived", (long long)pr.by_age,
            (long long)pr.by_count, (long long)pr.by_cluster, (long long)pr.clusters, ms);
        json_object_set_new(rep, "text", json_string(text));
    }
    if (ids_path[0]) unlink(ids_path);
    maint_archive_unlock(lk);
    json_decref(pr.removed);
    json_decref(pr.summaries);
    if (rc) {
        json_decref(rep);
        return rc;
    }
    *result = rep;
    return REMEM_OK;
}

int maint_prune(remem *db, json_t *args, json_t **result) { return op_prune(db, args, result); }

/* "maintain": prune every namespace holding episodes (or the one given),
 * once; what cron runs and what `remem serve` runs every
 * pruneIntervalHours. */
typedef struct ns_list {
    json_t *names;
} ns_list;

static int list_ns(void *ctx, const store_ns *n) {
    json_array_append_new(((ns_list *)ctx)->names, json_string(n->ns));
    return 0;
}

static int op_maintain(remem *db, json_t *args, json_t **result) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    ns_list l = {json_array()};
    const char *only = op_str(args, "ns", NULL);
    if (only)
        json_array_append_new(l.names, json_string(only));
    else if ((rc = store_namespaces(db->st, list_ns, &l))) {
        json_decref(l.names);
        return eng_store_fail(db, rc);
    }
    json_t *runs = json_array();
    size_t i;
    json_t *v;
    int64_t total = 0;
    json_array_foreach(l.names, i, v) {
        json_t *a = json_deep_copy(args);
        json_object_set(a, "ns", v);
        json_object_set_new(a, "ids_limit", json_integer(100));
        json_object_set_new(a, "_maintain", json_true()); /* internal: not in the schema */
        json_t *rep = NULL;
        /* each namespace's run is a memory.prune span, as a prune is */
        tm_span *span = eng_tm_call_begin("prune");
        rc = op_prune(db, a, &rep);
        eng_tm_call_end(db, span, "prune", a, rc ? NULL : rep, rc);
        json_decref(a);
        if (rc) break;
        total += json_integer_value(json_object_get(rep, "removedCount"));
        json_array_append_new(runs, rep);
    }
    json_decref(l.names);
    if (rc) {
        json_decref(runs);
        return rc;
    }
    char text[200];
    snprintf(text, sizeof text, "maintenance: %zu namespace%s, %lld episodes archived",
             json_array_size(runs), json_array_size(runs) == 1 ? "" : "s", (long long)total);
    *result =
        json_pack("{s:o,s:I,s:s}", "runs", runs, "removedCount", (json_int_t)total, "text", text);
    return REMEM_OK;
}

/* "maintain.schedule": how often `remem serve` runs maintain
 * (pruneIntervalHours of the policy of "*"), so that the server (a face,
 * which sees no configuration) asks the engine instead of reading it. */
static int op_maintain_schedule(remem *db, json_t *args, json_t **result) {
    (void)args;
    maint_policy pol;
    maint_policy_get(db, "*", &pol);
    *result = json_pack("{s:f}", "pruneIntervalHours", pol.prune_interval_hours);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

/* ---- prune.reports ---- */

static int cmp_name_desc(const void *a, const void *b) {
    return strcmp(*(char *const *)b, *(char *const *)a);
}

/* The report files' names in dir/reports ("prune-<ISO time>-...json", so
 * that name order is time order), newest first; *n of them. NULL when the
 * folder is missing or unreadable, or out of memory. */
static char **report_names(const char *dir, size_t *n) {
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char **v = NULL;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "prune-", 6) || len < 11 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        if (*n == cap) {
            char **g = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof *g);
            if (!g) break;
            v = g;
        }
        if (!(v[*n] = strdup(e->d_name))) break;
        (*n)++;
    }
    closedir(d);
    if (*n > 1) qsort(v, *n, sizeof *v, cmp_name_desc);
    return v;
}

/* One report as shown: the file's object without its id lists (counted in
 * removedCount), plus the file's path. */
static json_t *report_entry(const char *path) {
    json_t *r = json_load_file(path, 0, NULL);
    if (!json_is_object(r)) {
        json_decref(r);
        return NULL;
    }
    json_object_del(r, "episodesRemoved");
    json_object_del(r, "episodesArchived");
    json_object_set_new(r, "report", json_string(path));
    return r;
}

/* "prune.reports": the last PruneReports written for a namespace (by prune
 * and maintain, under the archive folder's reports/), newest first. */
static int op_prune_reports(remem *db, json_t *args, json_t **result) {
    int rc = eng_need_open(db);
    if (rc) return rc;
    const char *ns = op_str(args, "ns", NULL);
    size_t limit = (size_t)op_int(args, "limit", 5), n = 0;
    maint_policy pol;
    run_policy(db, args, ns, &pol);
    char dir[1200], path[1500];
    snprintf(dir, sizeof dir, "%s/reports", pol.archive_location);
    char **names = report_names(dir, &n);
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        json_t *r = json_array_size(list) < limit ? report_entry(path) : NULL;
        const char *of = r ? json_string_value(json_object_get(r, "ns")) : NULL;
        if (of && !strcmp(of, ns))
            json_array_append(list, r);
        json_decref(r);
        free(names[i]);
    }
    free(names);
    *result = json_pack("{s:s, s:s, s:o}", "ns", ns, "archiveLocation", pol.archive_location,
                        "reports", list);
    return *result ? REMEM_OK : eng_fail(db, REMEM_ENOMEM, "out of memory");
}

#define S_NS "\"ns\":{\"type\":\"string\",\"minLength\":1,\"description\":\"namespace\"}"
#define S_POLICY                                                                                   \
    "\"dry_run\":{\"type\":\"boolean\",\"description\":\"report what would go, change nothing\"}," \
    "\"max_episodes_per_project\":{\"type\":\"integer\",\"minimum\":0,\"description\":"            \
    "\"maxEpisodesPerProject (0: no limit; default from the config, else 1000)\"},"                \
    "\"retention_days\":{\"type\":\"number\",\"minimum\":0,\"description\":\"retentionDays (0: "   \
    "keep forever; default from the config, else 90)\"},"                                          \
    "\"similarity_threshold\":{\"type\":\"number\",\"minimum\":-1,\"maximum\":1,\"description\":"  \
    "\"similarityThreshold: cosine at which episodes cluster (default 0.7)\"},"                    \
    "\"strategy\":{\"enum\":[\"none\",\"heuristic\",\"llm\"],\"description\":"                     \
    "\"summarizationStrategy (none: no clustering)\"},"                                            \
    "\"archive_location\":{\"type\":\"string\",\"minLength\":1,\"x-local\":true,"                  \
    "\"description\":\"archiveLocation\"},"                                                        \
    "\"now\":{\"type\":\"string\",\"description\":\"the time ages are measured from (default "     \
    "now)\"}"

const engine_op maintenance_ops[] = {
    {{"prune", "write",
      "Enforce the retention policy on a namespace's episodes: age, count per project, "
      "near-duplicate clusters summarised; everything removed is archived. Returns a PruneReport.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" S_NS "," S_POLICY ","
      "\"ids_limit\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":1000000,\"description\":"
      "\"ids listed in the answer (the report file lists all; default 10000)\"}}}", REMEM_OP_DESTRUCTIVE, "admin"},
     op_prune},
    {{"maintain", "admin",
      "Run prune once over every namespace (or one): what cron and `remem serve` run.",
      "{\"type\":\"object\",\"properties\":{\"ns\":{\"type\":\"string\",\"minLength\":1,"
      "\"description\":\"only this namespace\"}," S_POLICY "}}", REMEM_OP_DESTRUCTIVE, "admin"},
     op_maintain},
    {{"maintain.schedule", "admin",
      "How often `remem serve` runs maintain: pruneIntervalHours of the configuration.",
      "{\"type\":\"object\",\"properties\":{}}", REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "admin"},
     op_maintain_schedule},
    {{"prune.reports", "read",
      "The last PruneReports of a namespace (what prune and maintain removed, archived and "
      "summarised, and why), newest first, without their id lists.",
      "{\"type\":\"object\",\"required\":[\"ns\"],\"properties\":{" S_NS ","
      "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"description\":"
      "\"how many reports (default 5)\"},"
      "\"archive_location\":{\"type\":\"string\",\"minLength\":1,\"x-local\":true,"
      "\"description\":\"archiveLocation\"}}}",
      REMEM_OP_READ_ONLY | REMEM_OP_IDEMPOTENT, "admin"},
     op_prune_reports},
};
const size_t maintenance_ops_n = sizeof maintenance_ops / sizeof maintenance_ops[0];
