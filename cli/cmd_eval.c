/*
 * cmd_eval.c: `remem eval locomo FILE`, retrieval quality on a long-term
 * conversation benchmark in LoCoMo's format (Maharana et al., ACL 2024).
 *
 * Each conversation becomes its own namespace; each turn a memory (id =
 * dia_id, text = "speaker: text", plus " [image: caption]" when the turn
 * shared a picture, created_at = its session's date plus the turn's
 * position in seconds). Every question of categories 1-4 (5 is
 * adversarial: unanswerable, left out) is asked of its conversation's
 * namespace at the conversation's end, without touching, and the ranked ids
 * are compared with the question's evidence: recall@k = |top k ∩ evidence| /
 * |evidence|, averaged over questions; hit@k = share of questions with any
 * evidence in the top k.
 *
 * The loader survives the format's known quirks: more session dates than
 * sessions, malformed evidence ("D8:6; D9:17", "D:11:26"), evidence naming
 * turns that do not exist (dropped; a question left with none is skipped
 * and counted), questions without evidence, integer answers.
 */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "cli.h"
#include "progress.h"

#define NCAT 5
static const int report_k[] = {5, 10, 20};
#define NK 3

typedef struct tally {
    double recall[NK + 1]; /* @5 @10 @20 @k */
    double hit10;
    int n;
} tally;

/* "1:56 pm on 8 May, 2023" -> ms. */
static int parse_locomo_date(const char *s, int64_t *ms) {
    static const char *months[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                   "jul", "aug", "sep", "oct", "nov", "dec"};
    int h, mi, d, y;
    char ampm[3], mon[16];
    if (sscanf(s, "%d:%d %2s on %d %15[A-Za-z], %d", &h, &mi, ampm, &d, mon, &y) != 6) return -1;
    int m = -1;
    for (int i = 0; i < 12; i++)
        if (strncasecmp(mon, months[i], 3) == 0) m = i;
    if (m < 0 || h < 1 || h > 12 || mi < 0 || mi > 59) return -1;
    if (tolower((unsigned char)ampm[0]) == 'p' && h != 12) h += 12;
    if (tolower((unsigned char)ampm[0]) == 'a' && h == 12) h = 0;
    char iso[40];
    snprintf(iso, sizeof iso, "%04d-%02d-%02dT%02d:%02d:00Z", y, m + 1, d, h, mi);
    return remem_parse_time(iso, ms) == REMEM_OK ? 0 : -1;
}

/* Normalise one evidence token to "D<n>:<m>" or return 0. */
static int norm_evidence(const char *tok, char *out, size_t cap) {
    int a, b;
    const char *p = tok;
    while (*p && !isdigit((unsigned char)*p)) p++;
    if (sscanf(p, "%d:%d", &a, &b) != 2) return 0;
    snprintf(out, cap, "D%d:%d", a, b);
    return 1;
}

typedef struct conv {
    const char *sample_id;
    char ns[128];
    json_t **turn_ids; /* borrowed strings, for evidence checks */
    size_t n_turns;
    int64_t end;
} conv;

static int has_turn(const conv *c, const char *id) {
    for (size_t i = 0; i < c->n_turns; i++)
        if (strcmp(json_string_value(c->turn_ids[i]), id) == 0) return 1;
    return 0;
}

/* --ingest: the session's turns go through the "ingest" operation without
 * an LLM (each turn kept verbatim: "speaker: text" with the turn's id and
 * time), as an agent would hand remem its transcript, instead of being
 * added as memories directly. */
static int use_ingest;

static int ingest_turns(remem *db, const char *ns, const remem_memory *ms, size_t n) {
    json_t *msgs = json_array();
    for (size_t i = 0; i < n; i++) {
        const char *colon = strstr(ms[i].text, ": ");
        json_t *m = json_pack("{s:s, s:s, s:I, s:s}", "role", "user", "content",
                              colon ? colon + 2 : ms[i].text, "created_at",
                              (json_int_t)ms[i].created_at, "id", ms[i].id);
        if (colon) json_object_set_new(m, "name", json_stringn(ms[i].text, colon - ms[i].text));
        json_array_append_new(msgs, m);
    }
    json_t *args = json_pack("{s:s, s:o, s:s}", "ns", ns, "messages", msgs, "extract", "none");
    char *text = args ? json_dumps(args, JSON_COMPACT) : NULL;
    json_decref(args);
    if (!text) return REMEM_ENOMEM;
    char *out = NULL;
    int rc = remem_call(db, "ingest", text, strlen(text), &out);
    free(text);
    remem_free(out);
    return rc;
}

/* Load one conversation as memories. */
static int load_conv(remem *db, json_t *sample, conv *c, int quiet) {
    json_t *cv = json_object_get(sample, "conversation");
    if (!json_is_object(cv)) return cli_fail("eval: sample %s has no conversation", c->sample_id);
    size_t cap = 0;
    for (int s = 1; s < 1000; s++) {
        char key[64];
        snprintf(key, sizeof key, "session_%d", s);
        json_t *turns = json_object_get(cv, key);
        if (!turns) {
            if (s > 1 && !json_object_get(cv, key)) {
                /* Sessions may be numbered with gaps in principle; stop after a
                 * run of missing ones. */
                int more = 0;
                for (int t = s + 1; t < s + 5; t++) {
                    snprintf(key, sizeof key, "session_%d", t);
                    more |= json_object_get(cv, key) != NULL;
                }
                if (!more) break;
            }
            continue;
        }
        if (!json_is_array(turns)) continue;
        snprintf(key, sizeof key, "session_%d_date_time", s);
        int64_t t0 = 0;
        const char *date = json_string_value(json_object_get(cv, key));
        if (!date || parse_locomo_date(date, &t0)) {
            if (!quiet)
                fprintf(stderr, "remem: eval: %s session %d: no readable date\n", c->sample_id, s);
            t0 = c->end;
        }
        size_t n = json_array_size(turns);
        remem_memory *ms = calloc(n ? n : 1, sizeof *ms);
        char **texts = calloc(n ? n : 1, sizeof *texts);
        if (!ms || !texts) {
            free(ms);
            free(texts);
            return cli_fail("out of memory");
        }
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            json_t *t = json_array_get(turns, i);
            const char *id = json_string_value(json_object_get(t, "dia_id"));
            const char *sp = json_string_value(json_object_get(t, "speaker"));
            const char *tx = json_string_value(json_object_get(t, "text"));
            const char *cap_s = json_string_value(json_object_get(t, "blip_caption"));
            if (!id || !tx) continue;
            size_t len = strlen(tx) + (sp ? strlen(sp) : 0) + (cap_s ? strlen(cap_s) : 0) + 32;
            texts[k] = malloc(len);
            if (!texts[k]) break;
            snprintf(texts[k], len, "%s%s%s%s%s%s", sp ? sp : "", sp ? ": " : "", tx,
                     cap_s ? " [image: " : "", cap_s ? cap_s : "", cap_s ? "]" : "");
            remem_memory_init(&ms[k]);
            ms[k].ns = c->ns;
            ms[k].id = id;
            ms[k].text = texts[k];
            ms[k].created_at = t0 + (int64_t)i * 1000;
            if (ms[k].created_at > c->end) c->end = ms[k].created_at;
            if (c->n_turns == cap) {
                cap = cap ? cap * 2 : 512;
                json_t **ids = realloc(c->turn_ids, cap * sizeof *ids);
                if (!ids) break;
                c->turn_ids = ids;
            }
            c->turn_ids[c->n_turns++] = json_object_get(t, "dia_id");
            k++;
        }
        long bad;
        int rc = !k ? 0 : use_ingest ? ingest_turns(db, c->ns, ms, k) : remem_add_batch(db, ms, k, NULL, 0, &bad);
        for (size_t i = 0; i < k; i++) free(texts[i]);
        free(texts);
        free(ms);
        if (rc) return cli_fail_db(db, rc, "eval: loading turns");
    }
    return 0;
}

static void add_tally(tally *t, const tally *q) {
    for (int i = 0; i <= NK; i++) t->recall[i] += q->recall[i];
    t->hit10 += q->hit10;
    t->n += q->n;
}

typedef struct run {
    tally cat[NCAT + 1], all;
    int skipped;
    double ms;
} run;

static remem_query overrides;

static int eval_profile(remem *db, json_t *root, conv *convs, size_t nconv, const char *profile,
                        int k, int quiet, run *out) {
    memset(out, 0, sizeof *out);
    int maxk = k > 20 ? k : 20;
    size_t total = 0;
    for (size_t c = 0; c < nconv; c++)
        total += json_array_size(json_object_get(json_array_get(root, c), "qa"));
    progress pg;
    progress_start(&pg, profile ? profile : "default", (int64_t)total, quiet);
    size_t done = 0;
    for (size_t c = 0; c < nconv; c++) {
        json_t *qa = json_object_get(json_array_get(root, c), "qa");
        size_t i;
        json_t *item;
        json_array_foreach(qa, i, item) {
            progress_update(&pg, (int64_t)++done);
            int cat = (int)json_integer_value(json_object_get(item, "category"));
            if (cat < 1 || cat > 4) continue;
            const char *question = json_string_value(json_object_get(item, "question"));
            if (!question) continue;
            /* The evidence, normalised and restricted to turns that exist. */
            char ev[64][32];
            int nev = 0;
            size_t j;
            json_t *e;
            json_array_foreach(json_object_get(item, "evidence"), j, e) {
                const char *s = json_string_value(e);
                if (!s) continue;
                char buf[256];
                snprintf(buf, sizeof buf, "%s", s);
                for (char *tok = strtok(buf, ";, "); tok && nev < 64; tok = strtok(NULL, ";, ")) {
                    char id[32];
                    if (!norm_evidence(tok, id, sizeof id) || !has_turn(&convs[c], id)) continue;
                    int dup = 0;
                    for (int d = 0; d < nev; d++) dup |= !strcmp(ev[d], id);
                    if (!dup) snprintf(ev[nev++], sizeof ev[0], "%s", id);
                }
            }
            if (nev == 0) {
                out->skipped++;
                continue;
            }
            remem_query q = overrides;
            const char *ns[] = {convs[c].ns};
            q.namespaces = ns;
            q.n_namespaces = 1;
            q.text = question;
            q.profile = profile;
            q.k = maxk;
            q.now = convs[c].end + 24LL * 3600 * 1000;
            q.no_touch = 1;
            /* Rank everything: thresholds would only cut the list. The
             * query's numbers must be finite (eng_query_check), so the
             * lowest finite double stands for "no threshold". */
            q.min_score = -DBL_MAX;
            q.min_similarity = -DBL_MAX;
            remem_result *r = NULL;
            int rc = remem_recall(db, &q, &r);
            if (rc) {
                progress_done(&pg);
                return cli_fail_db(db, rc, "eval: recall");
            }
            out->ms += r->took_ms;
            tally t = {0};
            t.n = 1;
            int ks[NK + 1] = {report_k[0], report_k[1], report_k[2], k};
            for (int x = 0; x <= NK; x++) {
                int found = 0;
                for (int d = 0; d < nev; d++)
                    for (size_t h = 0; h < r->n && (int)h < ks[x]; h++)
                        if (!strcmp(r->hits[h].mem.id, ev[d])) {
                            found++;
                            break;
                        }
                t.recall[x] = (double)found / nev;
                if (ks[x] == 10) t.hit10 = found > 0;
            }
            remem_result_free(r);
            add_tally(&out->cat[cat], &t);
            add_tally(&out->all, &t);
        }
    }
    progress_done(&pg);
    return 0;
}

static json_t *tally_json(const tally *t, int k) {
    json_t *o = json_object();
    double n = t->n ? t->n : 1;
    json_object_set_new(o, "questions", json_integer(t->n));
    for (int i = 0; i < NK; i++) {
        char key[32];
        snprintf(key, sizeof key, "recall@%d", report_k[i]);
        json_object_set_new(o, key, json_real(t->recall[i] / n));
    }
    char key[32];
    snprintf(key, sizeof key, "recall@%d", k);
    json_object_set_new(o, key, json_real(t->recall[NK] / n));
    json_object_set_new(o, "hit@10", json_real(t->hit10 / n));
    return o;
}

static void print_run(const char *profile, const run *r, int k) {
    static const char *names[] = {"", "multi-hop", "temporal", "open-domain", "single-hop"};
    printf("profile %s: %d questions (%d without usable evidence skipped), %.3f ms per recall\n",
           profile, r->all.n, r->skipped, r->all.n ? r->ms / r->all.n : 0);
    printf("  %-12s %9s %9s %9s %9s %9s\n", "category", "recall@5", "recall@10", "recall@20",
           "hit@10", "questions");
    for (int c = 0; c <= NCAT; c++) {
        const tally *t = c == 0 ? &r->all : &r->cat[c];
        if (c > 0 && (c > 4 || t->n == 0)) continue;
        double n = t->n ? t->n : 1;
        printf("  %-12s %9.3f %9.3f %9.3f %9.3f %9d\n", c == 0 ? "all" : names[c], t->recall[0] / n,
               t->recall[1] / n, t->recall[2] / n, t->hit10 / n, t->n);
    }
    if (k != 5 && k != 10 && k != 20)
        printf("  recall@%d = %.3f\n", k, r->all.n ? r->all.recall[NK] / r->all.n : 0);
}

int cmd_eval(const cli_env *env, int argc, char **argv) {
    /* Benchmarks the library runs itself are operations ("eval.lessons"). */
    int words = 0;
    const remem_op_info *op = argc >= 2 ? cli_find_op(argc, argv, &words) : NULL;
    if (op && words == 2) return cli_run_op(env, op, argc - words, argv + words);
    if (cli_wants_help(argc, argv) || argc < 2) {
        puts("usage: remem eval lessons [--json]   (the lessons benchmark: remem eval lessons "
             "--help)\n"
             "       remem eval locomo FILE [--k N] [--profile P | --all-profiles]\n"
             "                 [--store PATH] [--json] [--w-relevance X] [--w-lexical X]\n"
             "                 [--w-recency X] [--w-importance X] [--w-context X]\n"
             "                 [--candidates N] [--normalize 0|1] [--ingest]\n\n"
             "Loads a benchmark file in LoCoMo's format into a store (in memory unless\n"
             "--store), asks every question of categories 1-4 and prints recall@5, @10,\n"
             "@20 (and @N) and hit@10, overall and per category. The weight options\n"
             "override the profile's, to study the fusion. --ingest feeds each session\n"
             "through the ingest operation (turns kept verbatim) instead of adding them.");
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "locomo") != 0)
        return cli_fail("eval: unknown benchmark \"%s\" (locomo, lessons)", argv[1]);
    const char *file = NULL, *profile = NULL, *store = ":memory:";
    int k = 10, all = 0;
    remem_query_init(&overrides);
    for (int i = 2; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--w-relevance")))
            overrides.w_relevance = atof(v);
        else if ((v = cli_opt(argc, argv, &i, "--w-lexical")))
            overrides.w_lexical = atof(v);
        else if ((v = cli_opt(argc, argv, &i, "--w-recency")))
            overrides.w_recency = atof(v);
        else if ((v = cli_opt(argc, argv, &i, "--w-importance")))
            overrides.w_importance = atof(v);
        else if ((v = cli_opt(argc, argv, &i, "--w-context")))
            overrides.w_context = atof(v);
        else if ((v = cli_opt(argc, argv, &i, "--candidates")))
            overrides.candidates = atoi(v);
        else if ((v = cli_opt(argc, argv, &i, "--normalize")))
            overrides.normalize = atoi(v);
        else if ((v = cli_opt(argc, argv, &i, "--k"))) {
            k = atoi(v);
            if (k < 1 || k > 1000) return cli_fail("--k must be 1..1000");
        } else if ((v = cli_opt(argc, argv, &i, "--profile")))
            profile = v;
        else if ((v = cli_opt(argc, argv, &i, "--store")))
            store = v;
        else if (!strcmp(argv[i], "--all-profiles"))
            all = 1;
        else if (!strcmp(argv[i], "--ingest"))
            use_ingest = 1;
        else if (!file && argv[i][0] != '-')
            file = argv[i];
        else {
            cli_fail("eval: unexpected argument \"%s\"", argv[i]);
            return 2;
        }
    }
    if (!file) return cli_fail("eval: a FILE is required");
    json_error_t e;
    json_t *root = json_load_file(file, 0, &e);
    if (!root) return cli_fail("eval: %s: %s (line %d)", file, e.text, e.line);
    if (!json_is_array(root)) {
        json_decref(root);
        return cli_fail("eval: %s: expected a list of samples", file);
    }
    cli_env local = *env;
    local.db_path = store;
    remem *db = cli_open(&local);
    if (!db) {
        json_decref(root);
        return 1;
    }
    size_t nconv = json_array_size(root);
    conv *convs = calloc(nconv ? nconv : 1, sizeof *convs);
    int rc = convs ? 0 : cli_fail("out of memory");
    for (size_t c = 0; c < nconv && !rc; c++) {
        json_t *s = json_array_get(root, c);
        const char *sid = json_string_value(json_object_get(s, "sample_id"));
        char fallback[32];
        snprintf(fallback, sizeof fallback, "sample-%zu", c);
        convs[c].sample_id = sid ? sid : fallback;
        snprintf(convs[c].ns, sizeof convs[c].ns, "locomo:%s", sid ? sid : fallback);
        remem_clear(db, convs[c].ns, NULL);
        rc = load_conv(db, s, &convs[c], env->quiet);
    }
    const char *const *names = remem_profiles();
    json_t *out = json_object();
    for (size_t p = 0; !rc && (all ? names[p] != NULL : p == 0); p++) {
        const char *prof = all ? names[p] : (profile ? profile : "default");
        run r;
        rc = eval_profile(db, root, convs, nconv, prof, k, env->quiet, &r);
        if (rc) break;
        if (env->json) {
            json_t *o = tally_json(&r.all, k);
            json_t *per = json_object();
            for (int cat = 1; cat <= 4; cat++) {
                char key[16];
                snprintf(key, sizeof key, "%d", cat);
                json_object_set_new(per, key, tally_json(&r.cat[cat], k));
            }
            json_object_set_new(o, "by_category", per);
            json_object_set_new(o, "skipped", json_integer(r.skipped));
            json_object_set_new(o, "ms_per_recall", json_real(r.all.n ? r.ms / r.all.n : 0));
            json_object_set_new(out, prof, o);
        } else {
            print_run(prof, &r, k);
        }
    }
    if (!rc && env->json) {
        json_t *wrap = json_object();
        json_object_set_new(wrap, "benchmark", json_string("locomo"));
        json_object_set_new(wrap, "file", json_string(file));
        json_object_set_new(wrap, "embedder", json_string(remem_embedder_model(db)));
        json_object_set_new(wrap, "profiles", out);
        out = NULL;
        char *s = json_dumps(wrap, JSON_INDENT(2) | JSON_REAL_PRECISION(4));
        puts(s);
        free(s);
        json_decref(wrap);
    }
    json_decref(out);
    for (size_t c = 0; convs && c < nconv; c++) free(convs[c].turn_ids);
    free(convs);
    remem_close(db);
    json_decref(root);
    return rc;
}
