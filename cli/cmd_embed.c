/*
 * cmd_embed.c: `remem embed`, the vectors (and, with --tokens, the token
 * ids) remem computes for some texts, so that they can be compared with
 * another implementation of the same model. It needs no store: the
 * embedder is opened on an in-memory one, with the global --embedder and
 * --model-dir options as for every other command.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Lines of stdin, when no text is given on the command line. */
static char **read_lines(size_t *n) {
    char **lines = NULL, *line = NULL;
    size_t cap = 0, len = 0, have = 0;
    ssize_t got;
    while ((got = getline(&line, &len, stdin)) >= 0) {
        if (got > 0 && line[got - 1] == '\n') line[--got] = 0;
        if (have == cap) {
            cap = cap ? cap * 2 : 16;
            char **more = realloc(lines, cap * sizeof *lines);
            if (!more) break;
            lines = more;
        }
        lines[have++] = strdup(line);
    }
    free(line);
    *n = have;
    return lines;
}

static json_t *tokens_of(const cli_env *env, const char *text, char *err, size_t errcap) {
    char *json = NULL;
    if (remem_model_tokenize(env->opt.model_dir, text, &json, err, errcap) != 0) return NULL;
    json_t *o = json_loads(json, 0, NULL);
    remem_free(json);
    return o;
}

int cmd_embed(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem [--embedder E] [--model-dir D] [--json] embed [--tokens] [TEXT...]\n\n"
             "Prints the vector of each TEXT (or of each line of stdin), one line of\n"
             "numbers per text; --json prints {\"embedder\",\"model\",\"dim\",\"items\":\n"
             "[{\"text\",\"vector\"}]}. --tokens adds the token ids and tokens the minilm\n"
             "embedder feeds its model ([CLS] ... [SEP]), to compare with another\n"
             "implementation. The model line goes to stderr (not with --quiet).");
        return 0;
    }
    int want_tokens = 0, first_text = 0;
    for (int i = 1; i < argc && !first_text; i++) {
        if (!strcmp(argv[i], "--tokens"))
            want_tokens = 1;
        else if (!strcmp(argv[i], "--"))
            first_text = i + 1;
        else if (!strncmp(argv[i], "--", 2) && argv[i][2])
            return cli_fail("embed: unknown option %s (remem embed --help)", argv[i]), 2;
        else
            first_text = i;
    }
    char **texts = NULL;
    size_t n = 0;
    int from_stdin = first_text == 0 || first_text >= argc;
    if (from_stdin) {
        texts = read_lines(&n);
    } else {
        n = (size_t)(argc - first_text);
        texts = argv + first_text;
    }
    remem *db = NULL;
    float *vec = NULL;
    json_t *out = NULL;
    int rc = remem_open(":memory:", &env->opt, &db), status = 1;
    if (rc) {
        cli_fail("%s", db ? remem_errmsg(db) : remem_strerror(rc));
        goto done;
    }
    const char *name = remem_embedder_name(db), *note = remem_embedder_note(db);
    const int dim = remem_embedder_dim(db);
    if (note && *note && !env->quiet) fprintf(stderr, "remem: note: %s\n", note);
    if (want_tokens && strcmp(name, "minilm") != 0) {
        cli_fail("embed: --tokens needs the minilm embedder (this is %s)", name);
        goto done;
    }
    vec = malloc((n ? n : 1) * (size_t)dim * sizeof *vec);
    if (!vec) {
        cli_fail("out of memory");
        goto done;
    }
    if (n && (rc = remem_embed(db, (const char *const *)texts, n, vec)) != 0) {
        cli_fail_db(db, rc, "embed");
        goto done;
    }
    if (!env->json && !env->quiet)
        fprintf(stderr, "remem: %s embedder, model %s, %d dimensions\n", name,
                remem_embedder_model(db), dim);
    out = json_pack("{s:s, s:s, s:i, s:[]}", "embedder", name, "model", remem_embedder_model(db),
                    "dim", dim, "items");
    for (size_t t = 0; t < n; t++) {
        json_t *item = json_object(), *tok = NULL;
        json_t *text = json_string(texts[t]);
        json_object_set_new(item, "text", text ? text : json_string("(invalid UTF-8)"));
        if (want_tokens) {
            char err[512] = "";
            if (!(tok = tokens_of(env, texts[t], err, sizeof err))) {
                cli_fail("embed: %s", err);
                json_decref(item);
                goto done;
            }
            json_object_set(item, "ids", json_object_get(tok, "ids"));
            json_object_set(item, "tokens", json_object_get(tok, "tokens"));
        }
        json_t *v = json_array();
        for (int k = 0; k < dim; k++)
            json_array_append_new(v, json_real(vec[t * (size_t)dim + (size_t)k]));
        json_object_set_new(item, "vector", v);
        json_array_append_new(json_object_get(out, "items"), item);
        if (!env->json) {
            if (tok) {
                json_t *x;
                size_t i;
                printf("ids:");
                json_array_foreach(json_object_get(tok, "ids"), i, x)
                    printf(" %lld", (long long)json_integer_value(x));
                printf("\ntokens:");
                json_array_foreach(json_object_get(tok, "tokens"), i, x)
                    printf(" %s", json_string_value(x));
                printf("\n");
            }
            for (int k = 0; k < dim; k++)
                printf("%s%.8g", k ? " " : "", vec[t * (size_t)dim + (size_t)k]);
            printf("\n");
        }
        json_decref(tok);
    }
    if (env->json) {
        char *s = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
        if (s) printf("%s\n", s);
        free(s);
    }
    status = 0;
done:
    json_decref(out);
    free(vec);
    remem_close(db);
    if (from_stdin) {
        for (size_t i = 0; i < n; i++) free(texts[i]);
        free(texts);
    }
    return status;
}
