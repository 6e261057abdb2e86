/*
 * safetensors.h: a reader for .safetensors weight files (internal).
 *
 * The format: 8 bytes little-endian header length N, N bytes of JSON
 * ({"name": {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]},
 * optionally "__metadata__": {...}}), then the data, offsets relative to its
 * start. The file is mapped read-only; everything the header says is checked
 * against the file before any byte of data is trusted (lengths, offsets,
 * shapes times element sizes, overlaps), so a truncated or corrupt file gives
 * an error that names the problem and never a read out of bounds. Tensors of
 * any dtype are listed; F32, F16 and BF16 can be read as float32.
 */
#ifndef REMEM_EMBED_SAFETENSORS_H
#define REMEM_EMBED_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define ST_MAX_DIMS 8

typedef enum st_dtype {
    ST_F32,
    ST_F16,
    ST_BF16,
    ST_F64,
    ST_I64,
    ST_I32,
    ST_I16,
    ST_I8,
    ST_U8,
    ST_U16,
    ST_U32,
    ST_U64,
    ST_BOOL,
    ST_F8_E4M3,
    ST_F8_E5M2
} st_dtype;

typedef struct st_tensor {
    const char *name; /* valid until st_close */
    st_dtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    const unsigned char *data; /* inside the mapping; no alignment promised */
    size_t nbytes;
} st_tensor;

typedef struct st_file st_file;

/* Map and check path. Returns 0, REMEM_ENOTFOUND, REMEM_EIO, REMEM_ECORRUPT
 * (with what is wrong and where) or REMEM_ENOMEM. */
int st_open(const char *path, st_file **out, char *err, size_t errcap);
/* The same over a buffer the caller keeps alive until st_close. */
int st_open_buffer(const void *data, size_t len, st_file **out, char *err, size_t errcap);
void st_close(st_file *f);

size_t st_count(const st_file *f);
const st_tensor *st_at(const st_file *f, size_t i);
/* The tensor called name, or NULL. */
const st_tensor *st_find(const st_file *f, const char *name);
const char *st_dtype_name(st_dtype t);

/* Convert tensor t to float32 into dst (product of its shape floats) after
 * checking that its shape is exactly shape[0..ndim). REMEM_ECORRUPT names the
 * tensor and both shapes; REMEM_EUNSUPPORTED names an unreadable dtype. */
int st_read_f32(const st_tensor *t, int ndim, const int64_t *shape, float *dst, char *err,
                size_t errcap);

/* Half-precision conversions (exposed for the tests). */
float st_f16_to_f32(uint16_t h);
float st_bf16_to_f32(uint16_t h);

#endif
