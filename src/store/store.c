/*
 * store.c: the registry that picks a backend by the URI's scheme. The row
 * helpers every backend uses are in row.c, apart, so that backends call
 * down into them and the registry calls down into the backends: no circle.
 *
 * A new backend is one file defining `const store_backend
 * store_<name>_backend` plus one X(<name>) line in STORE_BACKENDS below;
 * nothing else in remem changes.
 */
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The backends built in. The "file" scheme (plain paths, ":memory:") is
 * the embedded default. */
#define STORE_BACKENDS(X) X(sqlite) X(postgres)

#define STORE__DECLARE(name) extern const store_backend store_##name##_backend;
STORE_BACKENDS(STORE__DECLARE)
#undef STORE__DECLARE

#define STORE__ENTRY(name) &store_##name##_backend,
static const store_backend *const backends[] = {STORE_BACKENDS(STORE__ENTRY)};
#undef STORE__ENTRY
#define N_BACKENDS (sizeof backends / sizeof backends[0])

static const store_backend *by_scheme(const char *scheme, size_t len) {
    for (size_t i = 0; i < N_BACKENDS; i++)
        for (const char *const *s = backends[i]->schemes; *s; s++)
            if (strlen(*s) == len && strncmp(*s, scheme, len) == 0) return backends[i];
    return NULL;
}

/* The length of uri's scheme when it starts "scheme://", else 0. A
 * scheme is a letter then letters, digits, '+', '-' or '.' (RFC 3986), so
 * a file path such as "notes:v2.db" has none. */
static size_t scheme_length(const char *uri) {
    size_t n = 0;
    if (!((uri[0] >= 'a' && uri[0] <= 'z') || (uri[0] >= 'A' && uri[0] <= 'Z'))) return 0;
    while ((uri[n] >= 'a' && uri[n] <= 'z') || (uri[n] >= 'A' && uri[n] <= 'Z') ||
           (uri[n] >= '0' && uri[n] <= '9') || uri[n] == '+' || uri[n] == '-' || uri[n] == '.')
        n++;
    return strncmp(uri + n, "://", 3) == 0 ? n : 0;
}

int store_open(const char *uri, const store_config *cfg, store **out, char *err, size_t errcap) {
    *out = NULL;
    const store_backend *b;
    size_t n = scheme_length(uri);
    if (n == 0 || (n == 4 && strncmp(uri, "file", 4) == 0)) {
        /* A plain path, "file:PATH" or "file://PATH": the file store. */
        if (strncmp(uri, "file:", 5) == 0) uri += 5;
        b = by_scheme("file", 4);
    } else {
        b = by_scheme(uri, n);
    }
    if (!b) {
        char names[256] = "";
        size_t len = 0;
        for (size_t i = 0; i < N_BACKENDS && len < sizeof names; i++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "",
                                    backends[i]->name);
        snprintf(err, errcap, "%.*s:// stores are not built into this remem (built in: %s)",
                 (int)(n < 64 ? n : 64), uri, names);
        return REMEM_EUNSUPPORTED;
    }
    return b->open(uri, cfg, out, err, errcap);
}
