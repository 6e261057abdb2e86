/*
 * fuzz_embed_http.c: libFuzzer target for the http embedder's answer parser
 * (embed_http_parse in src/embed/http.c), which reads JSON from a server
 * remem does not control. Each input is one answer body, parsed as the
 * answer to requests of 0 to 4 texts, first learning the dimension (out
 * NULL), then again into rows with that dimension, then with a dimension
 * one larger. The parser must agree with itself (what it learned it must
 * accept), write finite unit-length (or all-zero) rows, and on any failure
 * leave out untouched and say why.
 */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "remem.h"

static const float UNTOUCHED = 12345.0f;

static void check_failure(int rc, const char *err) {
    assert(rc == REMEM_EEMBED || rc == REMEM_EDIM || rc == REMEM_ENOMEM);
    assert(err[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *body = (const char *)data;
    char err[512];
    for (size_t n = 0; n <= 4; n++) {
        int dim = 0;
        err[0] = 0;
        int rc = embed_http_parse(body, size, "fuzz", n, &dim, NULL, NULL, err, sizeof err);
        if (rc) {
            check_failure(rc, err);
            continue;
        }
        assert(n == 0 ? dim == 0 : dim >= 1 && dim <= EMBED_HTTP_MAX_DIM);
        if (n == 0) continue;
        /* rows in reverse, as the embedder's rows may be any permutation */
        size_t rows[4];
        for (size_t i = 0; i < n; i++) rows[i] = n - 1 - i;
        size_t count = n * (size_t)(dim + 1);
        float *out = malloc(count * sizeof *out);
        for (size_t i = 0; i < count; i++) out[i] = UNTOUCHED;
        int again = dim;
        rc = embed_http_parse(body, size, "fuzz", n, &again, out, rows, err, sizeof err);
        assert(rc == REMEM_OK && again == dim);
        for (size_t r = 0; r < n; r++) {
            double norm = 0;
            for (int j = 0; j < dim; j++) {
                float v = out[r * (size_t)dim + (size_t)j];
                assert(isfinite(v));
                norm += (double)v * v;
            }
            assert(norm == 0 || fabs(norm - 1) < 1e-3);
        }
        /* A dimension the answer does not have: refused, nothing written. */
        for (size_t i = 0; i < count; i++) out[i] = UNTOUCHED;
        int other = dim + 1;
        err[0] = 0;
        rc = embed_http_parse(body, size, "fuzz", n, &other, out, NULL, err, sizeof err);
        assert(rc == REMEM_EDIM);
        check_failure(rc, err);
        for (size_t i = 0; i < count; i++) assert(out[i] == UNTOUCHED);
        free(out);
    }
    return 0;
}
