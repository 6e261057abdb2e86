/*
 * cmd_memory.c: the commands on single memories: add, get, update,
 * invalidate, forget and history. Each parses its options, makes one
 * library call, and prints the memory (text, or JSON with --json).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"

static int bad_usage(const char *cmd, const char *arg) {
    cli_fail("%s: unexpected argument \"%s\" (remem %s --help)", cmd, arg, cmd);
    return 2;
}

static int parse_importance(const char *v, double *out) {
    char *end;
    double x = strtod(v, &end);
    if (*end || end == v || !(x >= 0 && x <= 1))
        return cli_fail("importance must be a number in [0,1], not \"%s\"", v);
    *out = x;
    return 0;
}

static int parse_ttl(const char *v, int64_t *expires) {
    /* A TTL: a number with a unit (s, m, h, d), or an absolute time. */
    char *end;
    double x = strtod(v, &end);
    double unit = 0;
    if (end != v) {
        if (!strcmp(end, "s"))
            unit = 1e3;
        else if (!strcmp(end, "m"))
            unit = 60e3;
        else if (!strcmp(end, "h"))
            unit = 3600e3;
        else if (!strcmp(end, "d"))
            unit = 86400e3;
    }
    if (unit > 0 && x > 0) {
        *expires = remem_now() + (int64_t)(x * unit);
        return 0;
    }
    if (remem_parse_time(v, expires) == REMEM_OK) return 0;
    return cli_fail("--ttl: \"%s\" is neither a duration (30s, 15m, 2h, 7d) nor a time", v);
}

/* A write's answer in --json: the library's rendering, the same shape as
 * HTTP and MCP give (docs/server.md, "Write answers"). Frees js. */
static void print_write(char *js) {
    puts(js ? js : "{}");
    remem_free(js);
}

/* Memory off (--no-memory, or the namespace's policy): the write was
 * accepted and dropped, and the answer says so. */
#define DROPPED_TEXT "memory is off: nothing was written"
static int dropped(const cli_env *env, remem *db, const char *op, const char *ns, const char *where,
                   const char *id) {
    if (!remem_memory_off(db, ns)) return 0;
    if (env->json)
        print_write(remem_write_result_json(op, where ? where : ns, id, REMEM_DROPPED, NULL));
    else
        puts(DROPPED_TEXT);
    return 1;
}

/* The namespace of id when the command names none (the CLI may look: the
 * user owns the store). ns itself when given; NULL when no memory has id
 * (the write then fails with the engine's message). */
static const char *ns_of(remem *db, const char *ns, const char *id, char *buf, size_t cap) {
    if (ns) return ns;
    remem_record *r = NULL;
    if (remem_get(db, NULL, id, &r) == REMEM_OK) {
        snprintf(buf, cap, "%s", remem_record_memory(r)->ns);
        ns = buf;
    }
    remem_record_free(r);
    return ns;
}

static void print_memory(const cli_env *env, const remem_memory *m) {
    char *js = remem_memory_to_json(m);
    if (env->json) {
        puts(js ? js : "{}");
    } else {
        char t[40];
        remem_format_time(m->created_at, t, sizeof t);
        printf("%s/%s  [%s, %s, importance %.2f, %s]\n  %s\n", m->ns, m->id, m->kind, m->tier,
               m->importance, t, m->text);
        if (m->metadata) printf("  metadata: %s\n", m->metadata);
        if (m->invalidated_at)
            printf("  invalidated%s%s\n", m->superseded_by ? ", superseded by " : "",
                   m->superseded_by ? m->superseded_by : "");
        if (m->duplicate_count) printf("  seen again %lld times\n", (long long)m->duplicate_count);
    }
    free(js);
}

int cmd_add(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem add --ns NS --text TEXT [--id ID] [--kind K] [--tier T]\n"
             "                 [--importance X] [--meta JSON] [--links JSON] [--ttl 7d]\n"
             "                 [--created TIME]\n\n"
             "Adds one memory to namespace NS. With --id it is an upsert (the id names\n"
             "the memory; an existing one is replaced, its history kept). Without it an\n"
             "id is generated, and an exact duplicate of an existing text (same\n"
             "namespace, same normalised text) is counted on that memory instead.\n"
             "Prints the id; with --json {\"id\",\"ns\",\"outcome\"}, outcome added,\n"
             "upserted or duplicate (the same shape as HTTP and MCP).");
        return 0;
    }
    remem_memory m;
    remem_memory_init(&m);
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--ns")))
            m.ns = v;
        else if ((v = cli_opt(argc, argv, &i, "--text")))
            m.text = v;
        else if ((v = cli_opt(argc, argv, &i, "--id")))
            m.id = v;
        else if ((v = cli_opt(argc, argv, &i, "--kind")))
            m.kind = v;
        else if ((v = cli_opt(argc, argv, &i, "--tier")))
            m.tier = v;
        else if ((v = cli_opt(argc, argv, &i, "--meta")))
            m.metadata = v;
        else if ((v = cli_opt(argc, argv, &i, "--links")))
            m.links = v;
        else if ((v = cli_opt(argc, argv, &i, "--importance"))) {
            if (parse_importance(v, &m.importance)) return 1;
        } else if ((v = cli_opt(argc, argv, &i, "--ttl"))) {
            if (parse_ttl(v, &m.expires_at)) return 1;
        } else if ((v = cli_opt(argc, argv, &i, "--created"))) {
            char err[256]; /* the message of every other path with a bad time */
            if (remem_parse_time_field("created_at", v, &m.created_at, err, sizeof err))
                return cli_fail("add: --created: %s", err);
        } else
            return bad_usage("add", argv[i]);
    }
    if (!m.ns) return cli_fail("add: --ns is required");
    if (!m.text) return cli_fail("add: --text is required");
    remem *db = cli_open(env);
    if (!db) return 1;
    char id[300];
    int outcome = 0;
    int rc = remem_add(db, &m, id, sizeof id, &outcome);
    if (rc) {
        rc = cli_fail_db(db, rc, "add");
    } else if (env->json) {
        print_write(remem_write_result_json("add", m.ns, id, outcome, NULL));
    } else if (outcome == REMEM_DROPPED) {
        puts(DROPPED_TEXT);
    } else {
        printf("%s%s\n", id,
               outcome == REMEM_DUPLICATE  ? " (duplicate: counted on the existing memory)"
               : outcome == REMEM_UPSERTED ? " (updated)"
                                           : "");
    }
    remem_close(db);
    return rc;
}

/* Common "[--ns NS] ID" parsing. Returns 0, or an exit code. */
static int parse_key(const char *cmd, int argc, char **argv, int *i, const char **ns,
                     const char **id) {
    const char *v;
    if ((v = cli_opt(argc, argv, i, "--ns"))) {
        *ns = v;
        return 0;
    }
    if (argv[*i][0] == '-' && argv[*i][1]) return bad_usage(cmd, argv[*i]);
    if (*id) return bad_usage(cmd, argv[*i]);
    *id = argv[*i];
    return 0;
}

int cmd_get(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem get [--ns NS] ID\n\nPrints one memory. --ns is needed only when "
             "the id exists in several namespaces.");
        return 0;
    }
    const char *ns = NULL, *id = NULL;
    for (int i = 1; i < argc; i++) {
        int rc = parse_key("get", argc, argv, &i, &ns, &id);
        if (rc) return rc;
    }
    if (!id) return cli_fail("get: an ID is required");
    remem *db = cli_open(env);
    if (!db) return 1;
    remem_record *r = NULL;
    int rc = remem_get(db, ns, id, &r);
    if (rc)
        rc = cli_fail_db(db, rc, "get");
    else
        print_memory(env, remem_record_memory(r));
    remem_record_free(r);
    remem_close(db);
    return rc;
}

int cmd_update(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem update [--ns NS] ID [--text T] [--kind K] [--tier T]\n"
             "                    [--importance X] [--meta JSON] [--links JSON] [--ttl D]\n\n"
             "Changes the given fields of a memory; history keeps the before and after.\n"
             "A new text is re-embedded. --tier archived archives; another tier restores.\n"
             "Prints the memory; with --json {\"id\",\"ns\",\"outcome\":\"updated\"}.");
        return 0;
    }
    const char *ns = NULL, *id = NULL;
    remem_patch p;
    remem_patch_init(&p);
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--text")))
            p.text = v, p.fields |= REMEM_SET_TEXT;
        else if ((v = cli_opt(argc, argv, &i, "--kind")))
            p.kind = v, p.fields |= REMEM_SET_KIND;
        else if ((v = cli_opt(argc, argv, &i, "--tier")))
            p.tier = v, p.fields |= REMEM_SET_TIER;
        else if ((v = cli_opt(argc, argv, &i, "--meta")))
            p.metadata = v, p.fields |= REMEM_SET_METADATA;
        else if ((v = cli_opt(argc, argv, &i, "--links")))
            p.links = v, p.fields |= REMEM_SET_LINKS;
        else if ((v = cli_opt(argc, argv, &i, "--actor")))
            p.actor = v;
        else if ((v = cli_opt(argc, argv, &i, "--importance"))) {
            if (parse_importance(v, &p.importance)) return 1;
            p.fields |= REMEM_SET_IMPORTANCE;
        } else if ((v = cli_opt(argc, argv, &i, "--ttl"))) {
            if (!strcmp(v, "none"))
                p.expires_at = 0;
            else if (parse_ttl(v, &p.expires_at))
                return 1;
            p.fields |= REMEM_SET_EXPIRES;
        } else {
            int rc = parse_key("update", argc, argv, &i, &ns, &id);
            if (rc) return rc;
        }
    }
    if (!id) return cli_fail("update: an ID is required");
    if (!p.fields) return cli_fail("update: nothing to change (remem update --help)");
    remem *db = cli_open(env);
    if (!db) return 1;
    char nsbuf[1024];
    const char *where = ns_of(db, ns, id, nsbuf, sizeof nsbuf);
    int rc = remem_update(db, ns, id, &p);
    if (rc)
        rc = cli_fail_db(db, rc, "update");
    else if (dropped(env, db, "update", ns, where, id))
        ;
    else if (env->json)
        print_write(remem_write_result_json("update", where, id, 0, NULL));
    else {
        remem_record *r = NULL;
        if (remem_get(db, ns, id, &r) == REMEM_OK) print_memory(env, remem_record_memory(r));
        remem_record_free(r);
    }
    remem_close(db);
    return rc;
}

int cmd_invalidate(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem invalidate [--ns NS] ID [--by NEW_ID] [--reason TEXT]\n\n"
             "Hides a memory from recall and keeps it, e.g. a fact that a newer one\n"
             "replaced (--by names the newer memory). With --json:\n"
             "{\"id\",\"ns\",\"outcome\":\"invalidated\",\"superseded_by\"}.");
        return 0;
    }
    const char *ns = NULL, *id = NULL, *by = NULL, *reason = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if ((v = cli_opt(argc, argv, &i, "--by")))
            by = v;
        else if ((v = cli_opt(argc, argv, &i, "--reason")))
            reason = v;
        else {
            int rc = parse_key("invalidate", argc, argv, &i, &ns, &id);
            if (rc) return rc;
        }
    }
    if (!id) return cli_fail("invalidate: an ID is required");
    remem *db = cli_open(env);
    if (!db) return 1;
    char nsbuf[1024];
    const char *where = ns_of(db, ns, id, nsbuf, sizeof nsbuf);
    int rc = remem_invalidate(db, ns, id, by, reason);
    if (rc)
        rc = cli_fail_db(db, rc, "invalidate");
    else if (dropped(env, db, "invalidate", ns, where, id))
        ;
    else if (env->json)
        print_write(remem_write_result_json("invalidate", where, id, 0, by));
    else
        printf("invalidated %s\n", id);
    remem_close(db);
    return rc;
}

int cmd_forget(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem forget [--ns NS] ID [--purge]\n\n"
             "Without --purge the memory moves to the archived tier (out of recall,\n"
             "restorable with `remem update ID --tier long`). With --purge it is deleted\n"
             "with its vector, and its history keeps rows without the text. With --json:\n"
             "{\"id\",\"ns\",\"outcome\":\"archived\"|\"purged\",\"purged\"}.");
        return 0;
    }
    const char *ns = NULL, *id = NULL;
    int purge = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--purge"))
            purge = 1;
        else {
            int rc = parse_key("forget", argc, argv, &i, &ns, &id);
            if (rc) return rc;
        }
    }
    if (!id) return cli_fail("forget: an ID is required");
    remem *db = cli_open(env);
    if (!db) return 1;
    char nsbuf[1024];
    const char *where = ns_of(db, ns, id, nsbuf, sizeof nsbuf);
    int rc = remem_forget(db, ns, id, purge);
    if (rc)
        rc = cli_fail_db(db, rc, "forget");
    else if (dropped(env, db, "forget", ns, where, id))
        ;
    else if (env->json)
        print_write(remem_write_result_json("forget", where, id, purge, NULL));
    else
        printf("%s %s\n", purge ? "purged" : "archived", id);
    remem_close(db);
    return rc;
}

int cmd_history(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        puts("usage: remem history [--ns NS] ID\n\nEvery change made to a memory, oldest first "
             "(add, update, duplicate, invalidate, archive, delete), with before and after.");
        return 0;
    }
    const char *ns = NULL, *id = NULL;
    for (int i = 1; i < argc; i++) {
        int rc = parse_key("history", argc, argv, &i, &ns, &id);
        if (rc) return rc;
    }
    if (!id) return cli_fail("history: an ID is required");
    remem *db = cli_open(env);
    if (!db) return 1;
    char *json = NULL;
    int rc = remem_history(db, ns, id, &json);
    if (rc)
        rc = cli_fail_db(db, rc, "history");
    else if (env->json)
        puts(json);
    else {
        /* One line per change: seq, time, op, actor. */
        json_t *arr = json_loads(json, 0, NULL);
        size_t i;
        json_t *h;
        json_array_foreach(arr, i, h) {
            /* The engine keeps an invalidation's reason in the row's actor
             * field: it is a reason, not someone, and reads as one. */
            const char *actor = json_string_value(json_object_get(h, "actor"));
            const char *op = json_string_value(json_object_get(h, "op"));
            int is_reason = op && !strcmp(op, "invalidate");
            printf("#%-5lld %s  %s%s%s\n", (long long)json_integer_value(json_object_get(h, "seq")),
                   json_string_value(json_object_get(h, "at")), op ? op : "?",
                   !actor      ? ""
                   : is_reason ? "  reason: "
                               : "  by ",
                   actor ? actor : "");
        }
        json_decref(arr);
    }
    remem_free(json);
    remem_close(db);
    return rc;
}
