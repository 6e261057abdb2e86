/*
 * keys.c: API keys for remem serve. A keys file is JSON:
 *
 *   {"keys": [{"name": "agent-a",
 *              "sha256": "<hex SHA-256 of the secret>",
 *              "namespaces": ["a:*"],
 *              "rights": ["read", "write"]}]}
 *
 * Only hashes are kept at rest: a leaked keys file does not leak a secret.
 * A request's "Authorization: Bearer SECRET" is hashed and compared with
 * every entry in constant time, so neither the match nor the timing says
 * which entry came close. Namespace patterns are fnmatch(3) globs, where
 * "*" also matches ':' and '/' (so "a:*" covers "a:x/y"). "admin" implies
 * "write", "read" and "embed"; "write" does not imply "read" (a write-only
 * ingest key cannot read back what others wrote). "embed" (POST /v1/embed)
 * is a right of its own, namespace-free: it spends the server's CPU
 * without touching a memory.
 */
#include <errno.h>
#include <fnmatch.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "serverInt.h"

static const struct {
    const char *name;
    unsigned bits;
} right_names[] = {{"read", SERVE_READ},
                   {"write", SERVE_WRITE},
                   {"embed", SERVE_EMBED},
                   {"admin", SERVE_ADMIN | SERVE_WRITE | SERVE_READ | SERVE_EMBED}};

static int right_bits(const char *name, size_t len, unsigned *bits) {
    for (size_t i = 0; i < sizeof right_names / sizeof right_names[0]; i++)
        if (strlen(right_names[i].name) == len && memcmp(right_names[i].name, name, len) == 0) {
            *bits |= right_names[i].bits;
            return 0;
        }
    return -1;
}

int serve_parse_rights(const char *list, unsigned *rights, char *err, size_t errcap) {
    *rights = 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n > 0 && right_bits(p, n, rights) != 0) {
            snprintf(err, errcap, "unknown right \"%.*s\" (read, write, embed, admin)", (int)n, p);
            return -1;
        }
        p += n;
        if (*p == ',') p++;
    }
    if (*rights == 0) {
        snprintf(err, errcap, "no rights given (read, write, embed, admin)");
        return -1;
    }
    return 0;
}

static void sha256(const char *s, unsigned char out[32]) {
    unsigned int n = 32;
    EVP_Digest(s, strlen(s), out, &n, EVP_sha256(), NULL);
}

void serve_hash_secret(const char *secret, char hex[65]) {
    unsigned char h[32];
    sha256(secret, h);
    for (int i = 0; i < 32; i++) sprintf(hex + 2 * i, "%02x", h[i]);
    hex[64] = 0;
}

static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int parse_hash(const char *hex, unsigned char out[32]) {
    if (strlen(hex) != 64) return -1;
    for (int i = 0; i < 32; i++) {
        int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

static void key_clear(api_key *k) {
    free(k->name);
    for (size_t i = 0; i < k->n_patterns; i++) free(k->patterns[i]);
    free(k->patterns);
    memset(k, 0, sizeof *k);
}

void keys_free(key_table *t) {
    if (!t) return;
    for (size_t i = 0; i < t->n; i++) key_clear(&t->keys[i]);
    free(t->keys);
    t->keys = NULL;
    t->n = 0;
}

/* One entry of the "keys" array into k; err names the entry. */
static int load_entry(json_t *e, size_t index, api_key *k, char *err, size_t errcap) {
    static const char *const known[] = {"name",   "sha256",  "namespaces",
                                        "rights", "comment", "created_at"};
    if (!json_is_object(e)) {
        snprintf(err, errcap, "keys[%zu] is not an object", index);
        return -1;
    }
    const char *field;
    json_t *v;
    json_object_foreach(e, field, v) {
        size_t i = 0;
        while (i < sizeof known / sizeof known[0] && strcmp(known[i], field)) i++;
        if (i == sizeof known / sizeof known[0]) {
            snprintf(err, errcap, "keys[%zu]: unknown field \"%s\"", index, field);
            return -1;
        }
    }
    const char *name = json_string_value(json_object_get(e, "name"));
    const char *hash = json_string_value(json_object_get(e, "sha256"));
    json_t *nss = json_object_get(e, "namespaces");
    json_t *rights = json_object_get(e, "rights");
    if (!hash || parse_hash(hash, k->hash) != 0) {
        snprintf(err, errcap,
                 "keys[%zu]: \"sha256\" must be 64 hex digits (the hash of "
                 "the secret; remem serve --hash-key SECRET makes one)",
                 index);
        return -1;
    }
    if (!json_is_array(nss) || json_array_size(nss) == 0) {
        snprintf(err, errcap,
                 "keys[%zu]: \"namespaces\" must be a non-empty array of "
                 "patterns (\"a:*\", \"*\")",
                 index);
        return -1;
    }
    if (!json_is_array(rights) || json_array_size(rights) == 0) {
        snprintf(err, errcap,
                 "keys[%zu]: \"rights\" must be a non-empty array of "
                 "\"read\", \"write\", \"embed\", \"admin\"",
                 index);
        return -1;
    }
    char tmp[32];
    snprintf(tmp, sizeof tmp, "key%zu", index);
    k->name = strdup(name ? name : tmp);
    k->patterns = calloc(json_array_size(nss), sizeof *k->patterns);
    if (!k->name || !k->patterns) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    size_t i;
    json_array_foreach(nss, i, v) {
        const char *pat = json_string_value(v);
        if (!pat || !*pat) {
            snprintf(err, errcap, "keys[%zu].namespaces[%zu] is not a pattern", index, i);
            return -1;
        }
        if (!(k->patterns[k->n_patterns++] = strdup(pat))) {
            snprintf(err, errcap, "out of memory");
            return -1;
        }
        if (strcmp(pat, "*") == 0) k->all_namespaces = 1;
    }
    json_array_foreach(rights, i, v) {
        const char *r = json_string_value(v);
        if (!r || right_bits(r, strlen(r), &k->rights) != 0) {
            snprintf(err, errcap,
                     "keys[%zu].rights[%zu]: expected \"read\", \"write\", \"embed\" or "
                     "\"admin\"",
                     index, i);
            return -1;
        }
    }
    return 0;
}

int keys_load(const char *path, key_table *out, char *err, size_t errcap) {
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errcap, "keys file %s: %s (line %d)", path, je.text, je.line);
        return -1;
    }
    int rc = -1;
    json_t *arr = json_object_get(root, "keys");
    if (!json_is_array(arr)) {
        snprintf(err, errcap, "keys file %s: expected {\"keys\": [...]}", path);
        goto done;
    }
    if (json_array_size(arr) == 0) {
        /* With --keys every route but two needs a key: none would make a
         * server nobody can use. */
        snprintf(err, errcap,
                 "keys file %s holds no keys, so nobody could use the server: add one "
                 "(remem serve --new-key --keys %s --name NAME --ns 'PATTERN') or leave "
                 "out --keys to serve loopback only",
                 path, path);
        goto done;
    }
    out->keys = calloc(json_array_size(arr) + 1, sizeof *out->keys);
    if (!out->keys) {
        snprintf(err, errcap, "out of memory");
        goto done;
    }
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        out->n = i + 1;
        char why[256];
        if (load_entry(e, i, &out->keys[i], why, sizeof why) != 0) {
            snprintf(err, errcap, "keys file %s: %s", path, why);
            goto done;
        }
        for (size_t j = 0; j < i; j++)
            if (memcmp(out->keys[j].hash, out->keys[i].hash, 32) == 0) {
                snprintf(err, errcap,
                         "keys file %s: keys[%zu] and keys[%zu] have the same "
                         "secret",
                         path, j, i);
                goto done;
            }
    }
    rc = 0;
done:
    json_decref(root);
    if (rc != 0) keys_free(out);
    return rc;
}

const api_key *keys_find(const key_table *t, const char *secret) {
    unsigned char h[32];
    sha256(secret, h);
    const api_key *found = NULL;
    for (size_t i = 0; i < t->n; i++)
        if (CRYPTO_memcmp(h, t->keys[i].hash, 32) == 0) found = &t->keys[i];
    return found;
}

/* The one access decision of the server: every route and every MCP tool
 * (mcp_route.c's callback) asks this. ns NULL means every namespace (an
 * operation or view that names none): only a pattern that is exactly "*"
 * covers that, never a glob that happens to match the text "*" ("?",
 * "[!b]*"). */
int key_allows(const api_key *key, const char *ns, unsigned right) {
    if (!key) return 1;
    if ((key->rights & right) != right) return 0;
    if (!ns) return key->all_namespaces;
    for (size_t i = 0; i < key->n_patterns; i++)
        if (fnmatch(key->patterns[i], ns, 0) == 0) return 1;
    return 0;
}

int key_allows_all(const api_key *key, unsigned right) { return key_allows(key, NULL, right); }

char *serve_key_entry(const char *name, const char *hash_hex, const char *const *patterns,
                      size_t n_patterns, unsigned rights) {
    json_t *e = json_object(), *nss = json_array(), *rs = json_array();
    for (size_t i = 0; i < n_patterns; i++) json_array_append_new(nss, json_string(patterns[i]));
    if (rights & SERVE_ADMIN)
        json_array_append_new(rs, json_string("admin"));
    else {
        if (rights & SERVE_READ) json_array_append_new(rs, json_string("read"));
        if (rights & SERVE_WRITE) json_array_append_new(rs, json_string("write"));
        if (rights & SERVE_EMBED) json_array_append_new(rs, json_string("embed"));
    }
    json_object_set_new(e, "name", json_string(name));
    json_object_set_new(e, "sha256", json_string(hash_hex));
    json_object_set_new(e, "namespaces", nss);
    json_object_set_new(e, "rights", rs);
    char *text = json_dumps(e, JSON_COMPACT);
    json_decref(e);
    return text;
}

int serve_keys_append(const char *path, const char *entry_json, char *err, size_t errcap) {
    json_error_t je;
    json_t *entry = json_loads(entry_json, 0, &je), *root = NULL;
    char *tmp = NULL;
    int rc = -1;
    if (!entry) {
        snprintf(err, errcap, "bad key entry: %s", je.text);
        goto done;
    }
    if (access(path, F_OK) == 0) {
        root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
        if (!root || !json_is_array(json_object_get(root, "keys"))) {
            snprintf(err, errcap, "keys file %s: %s", path,
                     root ? "expected {\"keys\": [...]}" : je.text);
            goto done;
        }
    } else {
        root = json_pack("{s:[]}", "keys");
    }
    json_array_append(json_object_get(root, "keys"), entry);
    if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) < 0) {
        tmp = NULL;
        snprintf(err, errcap, "out of memory");
        goto done;
    }
    if (json_dump_file(root, tmp, JSON_INDENT(2)) != 0 || rename(tmp, path) != 0) {
        snprintf(err, errcap, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        goto done;
    }
    rc = 0;
done:
    free(tmp);
    json_decref(entry);
    json_decref(root);
    return rc;
}
