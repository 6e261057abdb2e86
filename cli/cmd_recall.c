/*
 * cmd_recall.c: `remem recall`, the command agents and people use most: a
 * query in, the memories that matter out, ranked, each with the components
 * of its score. Every profile field can be overridden from the command
 * line, and --now makes a recall reproducible. The flags are laid into the
 * JSON object HTTP and MCP take and read by the library's one query parser
 * (remem_query_parse), so the command refuses exactly what they refuse.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

/* The flags that carry one field of the query, and how to read the value. */
enum flag_kind { F_STRING, F_NUMBER, F_BOOL };
static const struct {
    const char *flag, *field;
    enum flag_kind kind;
} flags_[] = {
    {"--profile", "profile", F_STRING},
    {"--filter", "filter", F_STRING},
    {"--tiers", "tiers", F_STRING},
    {"--now", "now", F_STRING},
    {"--k", "k", F_NUMBER},
    {"--candidates", "candidates", F_NUMBER},
    {"--normalize", "normalize", F_BOOL},
    {"--w-relevance", "w_relevance", F_NUMBER},
    {"--w-lexical", "w_lexical", F_NUMBER},
    {"--w-recency", "w_recency", F_NUMBER},
    {"--w-importance", "w_importance", F_NUMBER},
    {"--w-context", "w_context", F_NUMBER},
    {"--min-similarity", "min_similarity", F_NUMBER},
    {"--min-score", "min_score", F_NUMBER},
    {"--half-life", "half_life_hours", F_NUMBER},
    {"--recency-base", "recency_base", F_NUMBER},
};
#define N_FLAGS (sizeof flags_ / sizeof flags_[0])

static size_t flag_index(int argc, char **argv, int *i, const char **v) {
    for (size_t f = 0; f < N_FLAGS; f++)
        if ((*v = cli_opt(argc, argv, i, flags_[f].flag))) return f;
    return N_FLAGS;
}

/* A flag's text as the JSON value a client would send: a number when it
 * reads as one, true/false for 1/0/true/false; otherwise the text itself,
 * which the parser then refuses with its usual "FIELD: must be ..." message. */
static json_t *flag_value(enum flag_kind kind, const char *v) {
    if (kind == F_NUMBER) {
        char *end;
        double x = strtod(v, &end);
        if (end != v && !*end && isfinite(x))
            return x == floor(x) && fabs(x) < 9e15 ? json_integer((json_int_t)x) : json_real(x);
    } else if (kind == F_BOOL) {
        if (!strcmp(v, "1") || !strcmp(v, "true")) return json_true();
        if (!strcmp(v, "0") || !strcmp(v, "false")) return json_false();
    }
    return json_string(v);
}

/* The query text to parse: --query-json as given when no other flag is
 * there (so its errors are exactly the server's), else the flags laid over
 * it. malloc'd, NULL when out of memory. */
static char *query_text(const char *base, int flags, json_t *o) {
    if (base && flags == 0) return strdup(base);
    if (base) {
        json_t *b = json_loads(base, JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(b)) { /* the parser will say what is wrong */
            json_decref(b);
            return strdup(base);
        }
        json_object_update(b, o);
        char *t = json_dumps(b, JSON_COMPACT);
        json_decref(b);
        return t;
    }
    return json_dumps(o, JSON_COMPACT);
}

static void print_text(const remem_result *r) {
    if (r->memory_off == 1) {
        puts("memory is off: recall returns nothing");
        return;
    }
    if (r->memory_off == 2) puts("memory is off for some namespaces: they were left out");
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

/* The whole of FILE (- for stdin) as the query's text: a query may be
 * megabytes (REMEM_QUERY_TEXT_MAX), more than one argument can carry. */
static json_t *text_of_file(const char *path) {
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        cli_fail("recall: --query-file %s: cannot open it", path);
        return NULL;
    }
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap && len <= (size_t)REMEM_QUERY_TEXT_MAX) {
            char *more = realloc(buf, cap * 2);
            if (!more) free(buf);
            buf = more;
            cap *= 2;
        } else if (len == cap) {
            break; /* over the limit: the library names it */
        }
    }
    int bad = !buf || ferror(f);
    if (f != stdin) fclose(f);
    json_t *v = bad ? NULL : json_stringn(buf, len);
    free(buf);
    if (!v)
        cli_fail(bad ? "recall: --query-file %s: cannot read it"
                     : "recall: --query-file %s: not valid UTF-8 text",
                 path);
    return v;
}

int cmd_recall(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem recall --ns NS [--ns NS2 ...] (--query TEXT | --query-file FILE) [--k "
             "N]\n"
             "                    [--profile P] [--filter JSON] [--now TIME]\n"
             "                    [--w-relevance X] [--w-lexical X] [--w-recency X]\n"
             "                    [--w-importance X] [--w-context X] [--min-similarity X]\n"
             "                    [--min-score X]\n"
             "                    [--half-life HOURS] [--recency-base K] [--normalize 0|1]\n"
             "                    [--candidates N] [--tiers static,short,long]\n"
             "                    [--no-touch] [--include-invalid]\n"
             "       remem recall --query-json '{\"namespaces\":[\"NS\"],\"text\":\"...\"}'\n\n"
             "Ranks the memories of the namespaces for the query and prints the best k,\n"
             "each with its score and components (relevance, lexical, recency,\n"
             "importance). Profiles: remem profiles. --filter takes Chroma-style JSON,\n"
             "e.g. '{\"kind\":\"decision\",\"importance\":{\"$gte\":0.5}}'. --now fixes the\n"
             "time (ISO 8601 or ms) so a recall can be replayed. Returned memories are\n"
             "touched (accessed_at, access_count) unless --no-touch.\n\n"
             "--query-file reads the query's text from FILE (- for stdin): a query may be\n"
             "up to 4 MiB, of which the first 32 KiB are read (docs/storage.md).\n"
             "--query-json takes the query as POST /v1/recall takes it (docs/server.md);\n"
             "flags given beside it override its fields. Flags and JSON go through the\n"
             "same parser as the server and MCP, so they take and refuse the same queries.");
        return 0;
    }
    /* The flags become the JSON object the server and MCP take, and go
     * through the library's one parser (remem_query_parse): what the
     * command accepts and refuses, and the messages, are theirs. */
    json_t *o = json_object(), *nss = json_array();
    const char *base = NULL;
    int flags = 0;
    for (int i = 1; i < argc; i++) {
        const char *v;
        size_t f;
        if ((v = cli_opt(argc, argv, &i, "--ns"))) {
            json_array_append_new(nss, json_string(v));
        } else if ((v = cli_opt(argc, argv, &i, "--query-json"))) {
            base = v;
            flags--;
        } else if ((v = cli_opt(argc, argv, &i, "--query")) ||
                   (v = cli_opt(argc, argv, &i, "-q"))) {
            json_object_set_new(o, "text", json_string(v));
        } else if ((v = cli_opt(argc, argv, &i, "--query-file"))) {
            json_t *t = text_of_file(v);
            if (!t) {
                json_decref(o);
                json_decref(nss);
                return 2;
            }
            json_object_set_new(o, "text", t);
        } else if ((f = flag_index(argc, argv, &i, &v)) < N_FLAGS)
            json_object_set_new(o, flags_[f].field, flag_value(flags_[f].kind, v));
        else if (!strcmp(argv[i], "--no-touch"))
            json_object_set_new(o, "touch", json_false());
        else if (!strcmp(argv[i], "--include-invalid"))
            json_object_set_new(o, "include_invalid", json_true());
        else if (!json_object_get(o, "text") && argv[i][0] != '-')
            json_object_set_new(o, "text", json_string(argv[i]));
        else {
            json_decref(o);
            json_decref(nss);
            cli_fail("recall: unexpected argument \"%s\" (remem recall --help)", argv[i]);
            return 2;
        }
        flags++;
    }
    if (!base && json_array_size(nss) == 0) {
        json_decref(o);
        json_decref(nss);
        return cli_fail("recall: --ns is required");
    }
    if (!base && !json_object_get(o, "text")) {
        json_decref(o);
        json_decref(nss);
        return cli_fail("recall: --query is required");
    }
    if (json_array_size(nss)) json_object_set(o, "namespaces", nss);
    json_decref(nss);
    char *text = query_text(base, flags, o);
    json_decref(o);
    if (!text) return cli_fail("recall: out of memory");
    char err[512];
    remem_query_json *pq = NULL;
    int rc = remem_query_parse(text, strlen(text), &pq, err, sizeof err);
    free(text);
    if (rc) return cli_fail("recall: %s", err);
    remem *db = cli_open(env);
    if (!db) {
        remem_query_json_free(pq);
        return 1;
    }
    remem_result *r = NULL;
    rc = remem_recall(db, remem_query_json_get(pq), &r);
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
    remem_query_json_free(pq);
    remem_close(db);
    return rc;
}
