/*
 * cmd_recall.c: `remem recall`, the command agents and people use most: a
 * query in, the memories that matter out, ranked, each with the components
 * of its score. Every profile field can be overridden from the command
 * line, and --now makes a recall reproducible.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int num(const char *opt, const char *v, double *out) {
    char *end;
    double x = strtod(v, &end);
    if (*end || end == v || !isfinite(x)) return cli_fail("%s: not a number: \"%s\"", opt, v);
    *out = x;
    return 0;
}

static void print_text(const remem_result *r) {
    printf("%zu of %zu candidates, profile %s, %.2f ms\n", r->n, r->candidates, r->profile,
           r->took_ms);
    for (size_t i = 0; i < r->n; i++) {
        const remem_hit *h = &r->hits[i];
        printf("%2zu. %.4f  %s/%s [%s, %s]\n", i + 1, h->score, h->mem.ns, h->mem.id, h->mem.kind,
               h->mem.tier);
        printf("    relevance %.3f (cos %.3f)  lexical %.3f  recency %.3f  importance %.2f\n",
               h->relevance, isnan(h->similarity) ? 0.0 : h->similarity, h->lexical, h->recency,
               h->importance);
        int len = (int)strlen(h->mem.text);
        printf("    %.*s%s\n", len > 200 ? 200 : len, h->mem.text, len > 200 ? "..." : "");
    }
}

int cmd_recall(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem recall --ns NS [--ns NS2 ...] --query TEXT [--k N]\n"
             "                    [--profile P] [--filter JSON] [--now TIME]\n"
             "                    [--w-relevance X] [--w-lexical X] [--w-recency X]\n"
             "                    [--w-importance X] [--w-context X] [--min-similarity X]\n"
             "                    [--min-score X]\n"
             "                    [--half-life HOURS] [--recency-base K] [--normalize 0|1]\n"
             "                    [--candidates N] [--tiers static,short,long]\n"
             "                    [--no-touch] [--include-invalid]\n\n"
             "Ranks the memories of the namespaces for the query and prints the best k,\n"
             "each with its score and components (relevance, lexical, recency,\n"
             "importance). Profiles: remem profiles. --filter takes Chroma-style JSON,\n"
             "e.g. '{\"kind\":\"decision\",\"importance\":{\"$gte\":0.5}}'. --now fixes the\n"
             "time (ISO 8601 or ms) so a recall can be replayed. Returned memories are\n"
             "touched (accessed_at, access_count) unless --no-touch.");
        return 0;
    }
    remem_query q;
    remem_query_init(&q);
    const char *ns[64];
    size_t nns = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        double x;
        if ((v = cli_opt(argc, argv, &i, "--ns"))) {
            if (nns == 64) return cli_fail("recall: at most 64 namespaces");
            ns[nns++] = v;
        } else if ((v = cli_opt(argc, argv, &i, "--query")) || (v = cli_opt(argc, argv, &i, "-q")))
            q.text = v;
        else if ((v = cli_opt(argc, argv, &i, "--profile")))
            q.profile = v;
        else if ((v = cli_opt(argc, argv, &i, "--filter")))
            q.filter = v;
        else if ((v = cli_opt(argc, argv, &i, "--tiers")))
            q.tiers = v;
        else if ((v = cli_opt(argc, argv, &i, "--now"))) {
            if (remem_parse_time(v, &q.now)) return cli_fail("--now: not a time: \"%s\"", v);
        } else if ((v = cli_opt(argc, argv, &i, "--k"))) {
            if (num("--k", v, &x) || x < 1 || x > 1000) return cli_fail("--k must be 1..1000");
            q.k = (int)x;
        } else if ((v = cli_opt(argc, argv, &i, "--candidates"))) {
            if (num("--candidates", v, &x) || x < 1) return cli_fail("--candidates must be >= 1");
            q.candidates = (int)x;
        } else if ((v = cli_opt(argc, argv, &i, "--normalize"))) {
            if (num("--normalize", v, &x)) return 1;
            q.normalize = x != 0;
        }
#define W(opt, field)                              \
    else if ((v = cli_opt(argc, argv, &i, opt))) { \
        if (num(opt, v, &q.field)) return 1;       \
    }
        W("--w-relevance", w_relevance)
        W("--w-lexical", w_lexical)
        W("--w-recency", w_recency)
        W("--w-importance", w_importance)
        W("--w-context", w_context)
        W("--min-similarity", min_similarity)
        W("--min-score", min_score)
        W("--half-life", half_life_hours)
        W("--recency-base", recency_base)
#undef W
        else if (!strcmp(argv[i], "--no-touch")) q.no_touch = 1;
        else if (!strcmp(argv[i], "--include-invalid")) q.include_invalid = 1;
        else if (!q.text && argv[i][0] != '-') q.text = argv[i];
        else {
            cli_fail("recall: unexpected argument \"%s\" (remem recall --help)", argv[i]);
            return 2;
        }
    }
    if (nns == 0) return cli_fail("recall: --ns is required");
    if (!q.text) return cli_fail("recall: --query is required");
    q.namespaces = ns;
    q.n_namespaces = nns;
    remem *db = cli_open(env);
    if (!db) return 1;
    remem_result *r = NULL;
    int rc = remem_recall(db, &q, &r);
    if (rc)
        rc = cli_fail_db(db, rc, "recall");
    else if (env->json) {
        char *js = remem_result_to_json(r);
        puts(js ? js : "{}");
        remem_free(js);
    } else {
        print_text(r);
    }
    remem_result_free(r);
    remem_close(db);
    return rc;
}
