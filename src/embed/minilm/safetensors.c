/*
 * safetensors.c: maps a .safetensors file and checks its header before
 * trusting it (see safetensors.h). The JSON header is parsed with jansson
 * from exactly the N bytes the length prefix announces, rejecting duplicate
 * names; each tensor's byte range must lie inside the data section, match
 * its shape times its element size (computed with overflow checks) and not
 * overlap another tensor. Errors say which tensor and which rule.
 */
#include "embed/minilm/safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remem.h"
#include "util/util.h"

/* A header larger than this is not a weights file we can use. */
#define ST_MAX_HEADER (100u << 20)

struct st_file {
    void *map; /* the mapping (NULL for a caller's buffer) */
    size_t map_len;
    json_t *header; /* owns the tensor names */
    st_tensor *t;
    size_t n;
};

static const struct {
    const char *name;
    st_dtype type;
    size_t size;
} dtypes[] = {
    {"F32", ST_F32, 4},   {"F16", ST_F16, 2},         {"BF16", ST_BF16, 2},
    {"F64", ST_F64, 8},   {"I64", ST_I64, 8},         {"I32", ST_I32, 4},
    {"I16", ST_I16, 2},   {"I8", ST_I8, 1},           {"U8", ST_U8, 1},
    {"U16", ST_U16, 2},   {"U32", ST_U32, 4},         {"U64", ST_U64, 8},
    {"BOOL", ST_BOOL, 1}, {"F8_E4M3", ST_F8_E4M3, 1}, {"F8_E5M2", ST_F8_E5M2, 1},
};

/* Errors go to the caller's buffer: util_errf. */
#define set_err util_errf

const char *st_dtype_name(st_dtype t) {
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (dtypes[i].type == t) return dtypes[i].name;
    return "?";
}

void st_close(st_file *f) {
    if (!f) return;
    if (f->map) munmap(f->map, f->map_len);
    json_decref(f->header);
    free(f->t);
    free(f);
}

static int by_offset(const void *a, const void *b) {
    const st_tensor *x = a, *y = b;
    return x->data < y->data ? -1 : x->data > y->data;
}

/* Fill t from one header entry; data is the start of the data section. */
static int parse_tensor(const char *name, json_t *e, const unsigned char *data, size_t data_len,
                        st_tensor *t, char *err, size_t errcap) {
    if (!json_is_object(e))
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "safetensors: tensor %s: header entry is not an object", name);
    const char *dt = json_string_value(json_object_get(e, "dtype"));
    json_t *shape = json_object_get(e, "shape");
    json_t *offs = json_object_get(e, "data_offsets");
    if (!dt || !json_is_array(shape) || !json_is_array(offs) || json_array_size(offs) != 2)
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "safetensors: tensor %s: needs dtype, shape and data_offsets [begin, end]",
                       name);
    size_t elsize = 0;
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++)
        if (strcmp(dtypes[i].name, dt) == 0) {
            t->dtype = dtypes[i].type;
            elsize = dtypes[i].size;
        }
    if (!elsize)
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "safetensors: tensor %s: unknown dtype \"%.32s\"", name, dt);
    if (json_array_size(shape) > ST_MAX_DIMS)
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "safetensors: tensor %s: %zu dimensions (at most %d)", name,
                       json_array_size(shape), ST_MAX_DIMS);
    t->name = name;
    t->ndim = (int)json_array_size(shape);
    size_t count = 1;
    for (int d = 0; d < t->ndim; d++) {
        json_t *v = json_array_get(shape, (size_t)d);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return set_err(err, errcap, REMEM_ECORRUPT,
                           "safetensors: tensor %s: shape[%d] is not a size", name, d);
        t->shape[d] = json_integer_value(v);
        if (t->shape[d] && count > SIZE_MAX / (size_t)t->shape[d])
            return set_err(err, errcap, REMEM_ECORRUPT, "safetensors: tensor %s: shape too large",
                           name);
        count *= (size_t)t->shape[d];
    }
    if (count > SIZE_MAX / elsize)
        return set_err(err, errcap, REMEM_ECORRUPT, "safetensors: tensor %s: shape too large",
                       name);
    json_t *b = json_array_get(offs, 0), *e2 = json_array_get(offs, 1);
    if (!json_is_integer(b) || !json_is_integer(e2) || json_integer_value(b) < 0 ||
        json_integer_value(e2) < json_integer_value(b))
        return set_err(err, errcap, REMEM_ECORRUPT, "safetensors: tensor %s: bad data_offsets",
                       name);
    uint64_t begin = (uint64_t)json_integer_value(b), end = (uint64_t)json_integer_value(e2);
    if (end > data_len)
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "safetensors: tensor %s: data ends at byte %llu of a %zu-byte data "
                       "section (file truncated?)",
                       name, (unsigned long long)end, data_len);
    if (end - begin != count * elsize)
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "safetensors: tensor %s: %llu bytes for %zu %s values (%zu bytes)", name,
                       (unsigned long long)(end - begin), count, dt, count * elsize);
    t->data = data + begin;
    t->nbytes = count * elsize;
    return 0;
}

static int parse(st_file *f, const unsigned char *buf, size_t len, char *err, size_t errcap) {
    if (len < 8)
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "safetensors: file of %zu bytes is too short for a header", len);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    if (hlen > len - 8)
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "safetensors: header of %llu bytes but only %zu bytes follow "
                       "(file truncated or not safetensors)",
                       (unsigned long long)hlen, len - 8);
    if (hlen > ST_MAX_HEADER || hlen < 2)
        return set_err(err, errcap, REMEM_ECORRUPT, "safetensors: implausible header length %llu",
                       (unsigned long long)hlen);
    json_error_t jerr;
    f->header = json_loadb((const char *)buf + 8, (size_t)hlen, JSON_REJECT_DUPLICATES, &jerr);
    if (!f->header)
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "safetensors: header is not valid JSON (byte %d: %s)", jerr.position,
                       jerr.text);
    if (!json_is_object(f->header))
        return set_err(err, errcap, REMEM_ECORRUPT, "safetensors: header is not a JSON object");
    const unsigned char *data = buf + 8 + hlen;
    size_t data_len = len - 8 - (size_t)hlen;
    f->t = calloc(json_object_size(f->header) + 1, sizeof *f->t);
    if (!f->t) return set_err(err, errcap, REMEM_ENOMEM, "safetensors: out of memory");
    const char *name;
    json_t *e;
    json_object_foreach(f->header, name, e) {
        if (strcmp(name, "__metadata__") == 0) {
            if (!json_is_object(e))
                return set_err(err, errcap, REMEM_ECORRUPT,
                               "safetensors: __metadata__ is not an object");
            continue;
        }
        int rc = parse_tensor(name, e, data, data_len, &f->t[f->n], err, errcap);
        if (rc) return rc;
        f->n++;
    }
    /* No two tensors may share bytes (an empty tensor shares nothing). */
    st_tensor *sorted = malloc((f->n + 1) * sizeof *sorted);
    if (!sorted) return set_err(err, errcap, REMEM_ENOMEM, "safetensors: out of memory");
    memcpy(sorted, f->t, f->n * sizeof *sorted);
    qsort(sorted, f->n, sizeof *sorted, by_offset);
    int rc = 0;
    const st_tensor *prev = NULL;
    for (size_t i = 0; i < f->n && !rc; i++) {
        if (!sorted[i].nbytes) continue;
        if (prev && sorted[i].data < prev->data + prev->nbytes)
            rc = set_err(err, errcap, REMEM_ECORRUPT, "safetensors: tensors %s and %s overlap",
                         prev->name, sorted[i].name);
        prev = &sorted[i];
    }
    free(sorted);
    return rc;
}

int st_open_buffer(const void *data, size_t len, st_file **out, char *err, size_t errcap) {
    *out = NULL;
    st_file *f = calloc(1, sizeof *f);
    if (!f) return set_err(err, errcap, REMEM_ENOMEM, "safetensors: out of memory");
    int rc = parse(f, data, len, err, errcap);
    if (rc) {
        st_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

int st_open(const char *path, st_file **out, char *err, size_t errcap) {
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return set_err(err, errcap, errno == ENOENT ? REMEM_ENOTFOUND : REMEM_EIO, "%s: %s", path,
                       strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return set_err(err, errcap, REMEM_EIO, "%s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (map == MAP_FAILED)
        return set_err(err, errcap, REMEM_EIO, "%s: cannot map: %s", path, strerror(errno));
    st_file *f = calloc(1, sizeof *f);
    if (!f) {
        if (map) munmap(map, len);
        return set_err(err, errcap, REMEM_ENOMEM, "safetensors: out of memory");
    }
    f->map = map;
    f->map_len = len;
    int rc = parse(f, map, len, err, errcap);
    if (rc) {
        if (err && errcap) { /* name the file */
            char detail[512];
            snprintf(detail, sizeof detail, "%s", err);
            snprintf(err, errcap, "%s: %s", path, detail);
        }
        st_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

size_t st_count(const st_file *f) { return f->n; }
const st_tensor *st_at(const st_file *f, size_t i) { return i < f->n ? &f->t[i] : NULL; }

const st_tensor *st_find(const st_file *f, const char *name) {
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->t[i].name, name) == 0) return &f->t[i];
    return NULL;
}

float st_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) { /* inf, nan */
        bits = sign | 0x7f800000u | man << 13;
    } else if (exp) {
        bits = sign | (exp + 112) << 23 | man << 13;
    } else if (!man) {
        bits = sign;
    } else { /* subnormal: normalise */
        exp = 113;
        while (!(man & 0x400)) {
            man <<= 1;
            exp--;
        }
        bits = sign | exp << 23 | (man & 0x3ff) << 13;
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

float st_bf16_to_f32(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static void shape_str(char *buf, size_t cap, int ndim, const int64_t *shape) {
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int d = 0; d < ndim && n < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "", (long long)shape[d]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

int st_read_f32(const st_tensor *t, int ndim, const int64_t *shape, float *dst, char *err,
                size_t errcap) {
    int same = t->ndim == ndim;
    for (int d = 0; same && d < ndim; d++) same = t->shape[d] == shape[d];
    if (!same) {
        char want[128], got[128];
        shape_str(want, sizeof want, ndim, shape);
        shape_str(got, sizeof got, t->ndim, t->shape);
        return set_err(err, errcap, REMEM_ECORRUPT,
                       "safetensors: tensor %s has shape %s, expected %s", t->name, got, want);
    }
    size_t n = t->nbytes;
    const unsigned char *p = t->data;
    switch (t->dtype) {
    case ST_F32: memcpy(dst, p, n); break;
    case ST_F16:
    case ST_BF16:
        for (size_t i = 0; i < n / 2; i++) {
            uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
            dst[i] = t->dtype == ST_F16 ? st_f16_to_f32(h) : st_bf16_to_f32(h);
        }
        break;
    default:
        return set_err(err, errcap, REMEM_EUNSUPPORTED,
                       "safetensors: tensor %s is %s; only F32, F16 and BF16 are read", t->name,
                       st_dtype_name(t->dtype));
    }
    return 0;
}
