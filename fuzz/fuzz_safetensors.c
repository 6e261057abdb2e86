/*
 * fuzz_safetensors.c: libFuzzer target for the safetensors reader
 * (src/embed/minilm/safetensors.c) and the BERT loader above it. Each input is a
 * whole file. A file that opens must describe only bytes inside itself:
 * every tensor is read back as float32 (when its dtype allows) with its own
 * shape, which must succeed, and with another shape, which must fail. Then
 * a tiny BERT config is loaded from it (names and shapes fuzzed too) and,
 * when that works, one short sequence is encoded.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embed/minilm/bert.h"
#include "embed/minilm/safetensors.h"
#include "remem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    st_file *f = NULL;
    char err[512];
    err[0] = 0;
    int rc = st_open_buffer(data, size, &f, err, sizeof err);
    if (rc) {
        assert(f == NULL && (rc == REMEM_ECORRUPT || rc == REMEM_ENOMEM));
        assert(memchr(err, 0, sizeof err) && err[0]);
        return 0;
    }
    for (size_t i = 0; i < st_count(f); i++) {
        const st_tensor *t = st_at(f, i);
        assert(t->data >= data && t->data + t->nbytes <= data + size);
        assert(st_find(f, t->name) == t);
        if (t->nbytes > (1u << 20)) continue;
        float *out = malloc(t->nbytes * 2 + 4);
        rc = st_read_f32(t, t->ndim, t->shape, out, err, sizeof err);
        assert(rc == 0 || rc == REMEM_EUNSUPPORTED);
        int64_t other[ST_MAX_DIMS + 1];
        memcpy(other, t->shape, sizeof t->shape);
        other[0] = t->ndim ? t->shape[0] ^ 1 : 1;
        assert(st_read_f32(t, t->ndim ? t->ndim : 1, other, out, err, sizeof err) != 0);
        free(out);
    }
    bert_config c = {8, 4, 1, 2, 8, 4, 2, 1e-12f};
    bert_model *m = NULL;
    if (bert_load(&c, f, &m, err, sizeof err) == 0) {
        int32_t ids[3] = {2, 7, 3};
        bert_seq s = {ids, 3};
        float pooled[4];
        assert(bert_encode(m, &s, 1, pooled, NULL, err, sizeof err) == 0);
        bert_free(m);
    }
    st_close(f);
    return 0;
}
