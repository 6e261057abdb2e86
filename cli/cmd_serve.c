/*
 * cmd_serve.c: `remem serve`, the HTTP/JSON and MCP server, and the two
 * helpers that make its API keys (--hash-key prints an entry for a secret
 * you chose; --new-key makes a secret, appends its entry to the keys file
 * and prints the secret once). The server itself is server/; this file only
 * reads options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "../server/server.h"
#include "cli.h"

static void serve_usage(FILE *f) {
    fprintf(f,
            "usage: remem serve [--db PATH] [--listen ADDR:PORT] [--keys FILE]\n"
            "                   [--threads N] [--max-body BYTES] [--timeout SECONDS]\n"
            "                   [--max-connections N] [--maintain-every HOURS]\n"
            "                   [--workers N] [--queue N] [--grace SECONDS]\n"
            "                   [--llm-deadline SECONDS]\n"
            "                   [--ingest-queue N] [--cache-mb MB]\n"
            "                   [--tools GROUP,...] [--no-ui]\n"
            "       remem serve --hash-key SECRET|- [--name NAME] [--ns PATTERN]...\n"
            "                   [--rights read,write,embed,admin]\n"
            "       remem serve --new-key --keys FILE [--name NAME] [--ns PATTERN]...\n"
            "                   [--rights read,write,embed,admin]\n\n"
            "Serves the store over HTTP/JSON (/v1/...), MCP (/mcp), /metrics,\n"
            "/healthz and /openapi.json until SIGINT or SIGTERM, then finishes\n"
            "the requests in flight and exits 0. docs/server.md has the routes.\n\n"
            "  --listen ADDR:PORT  default %s; port 0 picks a free one.\n"
            "                      Without --keys only loopback addresses.\n"
            "  --keys FILE         API keys: {\"keys\":[{\"name\",\"sha256\",\n"
            "                      \"namespaces\":[\"a:*\"],\"rights\":[\"read\"]}]}\n"
            "  --threads N         I/O threads, and workers kept running (default 2\n"
            "                      per core, at least 4)\n"
            "  --workers N         requests worked on at once; workers beyond\n"
            "                      --threads start when requests wait (default\n"
            "                      4 x --threads)\n"
            "  --queue N           requests waiting for a worker; more get 503\n"
            "                      with Retry-After (default %d)\n"
            "  --grace SECONDS     on SIGTERM, how long requests in flight may\n"
            "                      finish before they are cut (default %d)\n"
            "  --llm-deadline SECONDS  each request's LLM and embedder calls,\n"
            "                      retries included; past it 504 (default %d;\n"
            "                      0: none)\n"
            "  --cache-mb MB       memory for the namespace caches, shared by every\n"
            "                      thread; least recently used namespaces are\n"
            "                      evicted beyond it (default: cache.max_mb of the\n"
            "                      config, else a quarter of physical memory)\n"
            "  --max-body BYTES    larger request bodies get 413 (default %u)\n"
            "  --timeout SECONDS   idle connections are closed (default %d)\n"
            "  --max-connections N concurrent connections (default %d)\n"
            "  --maintain-every HOURS  run `remem maintain` (prune, retention,\n"
            "                      archive) this often in a background thread\n"
            "                      (default: pruneIntervalHours of the config;\n"
            "                      0: never)\n"
            "  --ingest-queue N    background ingests waiting at most; more get\n"
            "                      503 with Retry-After (default 256)\n"
            "  --tools GROUP,...   MCP tool groups /mcp offers besides the core ones:\n"
            "                      memory, lifecycle, lessons, experience, episodes,\n"
            "                      admin, or all (default: mcp.tools of the config)\n"
            "  --no-ui             no inspector page at /ui (docs/inspector.md)\n"
            "  --hash-key SECRET   print the keys-file entry for SECRET (- reads\n"
            "                      it from stdin) and exit\n"
            "  --new-key           make a random secret, append its entry to\n"
            "                      --keys FILE, print the secret and exit\n"
            "  --name, --ns, --rights  the entry's name, namespace patterns\n"
            "                      (repeat --ns; default \"*\") and rights\n"
            "                      (default read,write)\n",
            SERVE_DEFAULT_LISTEN, SERVE_DEFAULT_QUEUE, SERVE_DEFAULT_GRACE_S,
            SERVE_DEFAULT_LLM_DEADLINE_S, SERVE_DEFAULT_MAX_BODY, SERVE_DEFAULT_TIMEOUT_S,
            SERVE_DEFAULT_MAX_CONNECTIONS);
}

/* A positive integer option, or -1. */
static long long positive(const char *v) {
    char *end;
    long long n = strtoll(v, &end, 10);
    return *v && !*end && n > 0 ? n : -1;
}

typedef struct key_request {
    const char *secret; /* --hash-key */
    int make;           /* --new-key */
    const char *name;
    const char *patterns[64];
    size_t n_patterns;
    const char *rights;
} key_request;

static int key_command(const key_request *kr, const char *keys_path) {
    char secret_buf[256], hex[65], err[512];
    const char *secret = kr->secret;
    unsigned rights;
    if (serve_parse_rights(kr->rights ? kr->rights : "read,write", &rights, err, sizeof err) != 0)
        return cli_fail("--rights: %s", err);
    if (kr->make) {
        if (!keys_path) return cli_fail("--new-key needs --keys FILE to append to");
        unsigned char raw[24];
        if (getrandom(raw, sizeof raw, 0) != (ssize_t)sizeof raw)
            return cli_fail("no randomness for a new key");
        strcpy(secret_buf, "rk_");
        for (size_t i = 0; i < sizeof raw; i++) sprintf(secret_buf + 3 + 2 * i, "%02x", raw[i]);
        secret = secret_buf;
    } else if (!strcmp(secret, "-")) {
        if (!fgets(secret_buf, sizeof secret_buf, stdin))
            return cli_fail("--hash-key -: no secret on stdin");
        secret_buf[strcspn(secret_buf, "\r\n")] = 0;
        secret = secret_buf;
    }
    if (!*secret) return cli_fail("the secret is empty");
    serve_hash_secret(secret, hex);
    const char *all[] = {"*"};
    char *entry =
        serve_key_entry(kr->name ? kr->name : "key", hex, kr->n_patterns ? kr->patterns : all,
                        kr->n_patterns ? kr->n_patterns : 1, rights);
    if (!entry) return cli_fail("out of memory");
    int rc = 0;
    if (kr->make) {
        if (serve_keys_append(keys_path, entry, err, sizeof err) != 0)
            rc = cli_fail("%s", err);
        else
            printf("%s\n", secret); /* shown once: only its hash is kept */
        if (!rc)
            fprintf(stderr,
                    "remem: appended key \"%s\" to %s; the secret "
                    "above is not stored anywhere\n",
                    kr->name ? kr->name : "key", keys_path);
    } else {
        printf("%s\n", entry);
    }
    free(entry);
    return rc;
}

int cmd_serve(const cli_env *env, int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        serve_usage(stdout);
        return 0;
    }
    serve_config cfg;
    serve_config_init(&cfg);
    cfg.db_path = env->db_path;
    cfg.opt = env->opt;
    cfg.quiet = env->quiet;
    key_request kr;
    memset(&kr, 0, sizeof kr);
    for (int i = 1; i < argc; i++) {
        const char *v;
        long long n = 0;
        if ((v = cli_opt(argc, argv, &i, "--db")))
            cfg.db_path = v;
        else if ((v = cli_opt(argc, argv, &i, "--listen")))
            cfg.listen = v;
        else if ((v = cli_opt(argc, argv, &i, "--keys")))
            cfg.keys_path = v;
        else if ((v = cli_opt(argc, argv, &i, "--tools")))
            cfg.mcp_tools = v;
        else if ((v = cli_opt(argc, argv, &i, "--threads"))) {
            if ((n = positive(v)) < 0 || n > 256)
                return cli_fail("--threads: expected 1..256, got %s", v), 2;
            cfg.threads = (int)n;
        } else if ((v = cli_opt(argc, argv, &i, "--cache-mb"))) {
            if ((n = positive(v)) < 0 || n > (16 << 20))
                return cli_fail("--cache-mb: expected megabytes (1..16777216), got %s", v), 2;
            cfg.opt.cache_mb = (int)n;
        } else if ((v = cli_opt(argc, argv, &i, "--max-body"))) {
            if ((n = positive(v)) < 0)
                return cli_fail("--max-body: expected a byte count, got %s", v), 2;
            cfg.max_body = (size_t)n;
        } else if ((v = cli_opt(argc, argv, &i, "--timeout"))) {
            if ((n = positive(v)) < 0 || n > 86400)
                return cli_fail("--timeout: expected seconds, got %s", v), 2;
            cfg.timeout_s = (int)n;
        } else if ((v = cli_opt(argc, argv, &i, "--workers"))) {
            if ((n = positive(v)) < 0 || n > 1024)
                return cli_fail("--workers: expected 1..1024, got %s", v), 2;
            cfg.workers = (int)n;
        } else if ((v = cli_opt(argc, argv, &i, "--queue"))) {
            if ((n = positive(v)) < 0 || n > 1000000)
                return cli_fail("--queue: expected 1..1000000, got %s", v), 2;
            cfg.queue = (int)n;
        } else if ((v = cli_opt(argc, argv, &i, "--grace"))) {
            if ((n = positive(v)) < 0 || n > 86400)
                return cli_fail("--grace: expected seconds (1..86400), got %s", v), 2;
            cfg.grace_s = (int)n;
        } else if ((v = cli_opt(argc, argv, &i, "--llm-deadline"))) {
            if (!strcmp(v, "0"))
                cfg.llm_deadline_s = 0;
            else if ((n = positive(v)) < 0 || n > 86400)
                return cli_fail("--llm-deadline: expected seconds (0..86400), got %s", v), 2;
            else
                cfg.llm_deadline_s = (int)n;
        } else if ((v = cli_opt(argc, argv, &i, "--maintain-every"))) {
            char *end;
            cfg.maintain_every_hours = strtod(v, &end);
            if (!*v || *end || cfg.maintain_every_hours < 0)
                return cli_fail("--maintain-every: expected hours (a number >= 0), got %s", v), 2;
        } else if ((v = cli_opt(argc, argv, &i, "--ingest-queue"))) {
            if ((n = positive(v)) < 0 || n > 1000000)
                return cli_fail("--ingest-queue: expected a count, got %s", v), 2;
            cfg.ingest_queue = (int)n;
        } else if ((v = cli_opt(argc, argv, &i, "--max-connections"))) {
            if ((n = positive(v)) < 0 || n > 100000)
                return cli_fail("--max-connections: expected a count, got %s", v), 2;
            cfg.max_connections = (int)n;
        } else if ((v = cli_opt(argc, argv, &i, "--hash-key")))
            kr.secret = v;
        else if (!strcmp(argv[i], "--no-ui"))
            cfg.no_ui = 1;
        else if (!strcmp(argv[i], "--new-key"))
            kr.make = 1;
        else if ((v = cli_opt(argc, argv, &i, "--name")))
            kr.name = v;
        else if ((v = cli_opt(argc, argv, &i, "--rights")))
            kr.rights = v;
        else if ((v = cli_opt(argc, argv, &i, "--ns"))) {
            if (!*v)
                return cli_fail("--ns: an empty pattern matches no namespace (\"*\" is all)"), 2;
            if (kr.n_patterns == sizeof kr.patterns / sizeof kr.patterns[0])
                return cli_fail("too many --ns patterns"), 2;
            kr.patterns[kr.n_patterns++] = v;
        } else {
            cli_fail("serve: unexpected argument \"%s\" (remem serve --help)", argv[i]);
            return 2;
        }
    }
    if (kr.secret || kr.make) return key_command(&kr, cfg.keys_path);
    if (kr.name || kr.rights || kr.n_patterns)
        return cli_fail("--name, --ns and --rights go with --hash-key or "
                        "--new-key"),
               2;
    return serve_run(&cfg, stdout);
}
