/*
 * test_safetensors.c: the safetensors reader and the loading of a BERT from
 * it. Files are built in memory, so each rule gets one small broken file:
 * short files, header lengths past the end, broken JSON, duplicate names,
 * unknown dtypes, byte counts that disagree with shapes, overlapping or
 * reversed ranges, absurd shapes; then the half-precision conversions, shape
 * checks on read, the encoder's config checks, and the embedder's messages
 * for a truncated, a corrupt and a wrong-shape weights file.
 */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "embed/minilm/bert.h"
#include "embed/embed.h"
#include "embed/minilm/safetensors.h"
#include "remem.h"
#include "test.h"

/* A file: 8-byte length, the header text, then data. Caller frees. */
static unsigned char *build(const char *header, const void *data, size_t data_len, size_t *len) {
    size_t h = strlen(header);
    *len = 8 + h + data_len;
    unsigned char *buf = malloc(*len ? *len : 1);
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(buf + 8, header, h);
    if (data_len) memcpy(buf + 8 + h, data, data_len);
    return buf;
}

/* Open header+data and expect failure with a message containing want. */
static void expect_error(const char *header, const void *data, size_t data_len, const char *want) {
    size_t len;
    unsigned char *buf = build(header, data, data_len, &len);
    st_file *f = NULL;
    char err[512] = "";
    CHECK_INT(st_open_buffer(buf, len, &f, err, sizeof err), REMEM_ECORRUPT);
    CHECK(f == NULL);
    CHECK_HAS(err, want);
    free(buf);
}

static const float DATA[6] = {1, 2, 3, 4, 5, 6};

static void test_reads_each_dtype(void) {
    unsigned char data[24 + 4 + 4 + 8];
    memcpy(data, DATA, 24);
    const uint16_t f16[2] = {0x3c00, 0xc000};  /* 1, -2 */
    const uint16_t bf16[2] = {0x3f80, 0x4049}; /* 1, 3.140625 */
    memcpy(data + 24, f16, 4);
    memcpy(data + 28, bf16, 4);
    const int64_t i64 = 7;
    memcpy(data + 32, &i64, 8);
    const char *header = "{\"__metadata__\":{\"format\":\"pt\"},"
                         "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                         "\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[24,28]},"
                         "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[28,32]},"
                         "\"i\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[32,40]},"
                         "\"empty\":{\"dtype\":\"F32\",\"shape\":[0,3],\"data_offsets\":[40,40]}}";
    size_t len;
    unsigned char *buf = build(header, data, sizeof data, &len);
    st_file *f = NULL;
    char err[512] = "";
    CHECK_INT(st_open_buffer(buf, len, &f, err, sizeof err), 0);
    if (!f) {
        fprintf(stderr, "  %s\n", err);
        free(buf);
        return;
    }
    CHECK_INT(st_count(f), 5);
    const st_tensor *a = st_find(f, "a"), *h = st_find(f, "h"), *b = st_find(f, "b"),
                    *i = st_find(f, "i");
    CHECK(a && h && b && i);
    CHECK(st_find(f, "__metadata__") == NULL);
    CHECK(st_find(f, "nope") == NULL);
    float out[6];
    CHECK_INT(st_read_f32(a, 2, (int64_t[]){2, 3}, out, err, sizeof err), 0);
    for (int k = 0; k < 6; k++) CHECK_NEAR(out[k], k + 1, 0);
    CHECK_INT(st_read_f32(h, 1, (int64_t[]){2}, out, err, sizeof err), 0);
    CHECK_NEAR(out[0], 1, 0);
    CHECK_NEAR(out[1], -2, 0);
    CHECK_INT(st_read_f32(b, 1, (int64_t[]){2}, out, err, sizeof err), 0);
    CHECK_NEAR(out[0], 1, 0);
    CHECK_NEAR(out[1], 3.140625, 0);
    /* The shape must be exactly the expected one. */
    CHECK_INT(st_read_f32(a, 2, (int64_t[]){3, 2}, out, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "tensor a has shape [2, 3], expected [3, 2]");
    CHECK_INT(st_read_f32(a, 1, (int64_t[]){6}, out, err, sizeof err), REMEM_ECORRUPT);
    /* Integer tensors are listed but not read as floats. */
    CHECK_INT(i->ndim, 0);
    CHECK_INT(st_read_f32(i, 0, NULL, out, err, sizeof err), REMEM_EUNSUPPORTED);
    CHECK_HAS(err, "I64");
    st_close(f);
    free(buf);
}

static void test_half_precision(void) {
    CHECK_NEAR(st_f16_to_f32(0x7bff), 65504, 0);
    CHECK_NEAR(st_f16_to_f32(0x0001), ldexp(1, -24), 0); /* smallest subnormal */
    CHECK_NEAR(st_f16_to_f32(0x03ff), ldexp(1023, -24), 0);
    CHECK_NEAR(st_f16_to_f32(0x0400), ldexp(1, -14), 0); /* smallest normal */
    CHECK(isinf(st_f16_to_f32(0x7c00)) && st_f16_to_f32(0x7c00) > 0);
    CHECK(isinf(st_f16_to_f32(0xfc00)) && st_f16_to_f32(0xfc00) < 0);
    CHECK(isnan(st_f16_to_f32(0x7e00)));
    CHECK(signbit(st_f16_to_f32(0x8000)) && st_f16_to_f32(0x8000) == 0);
    CHECK_NEAR(st_f16_to_f32(0x3555), 0.333251953125, 0);
    CHECK_NEAR(st_bf16_to_f32(0xc2f7), -123.5, 0);
    CHECK(isinf(st_bf16_to_f32(0x7f80)));
}

static void test_broken_headers(void) {
    st_file *f = NULL;
    char err[512] = "";
    unsigned char tiny[5] = {1, 2, 3, 4, 5};
    CHECK_INT(st_open_buffer(tiny, 5, &f, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "too short");
    /* A length prefix that points past the end of the file. */
    unsigned char past[16] = {0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}'};
    CHECK_INT(st_open_buffer(past, 16, &f, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "truncated");
    unsigned char huge[16] = {0, 0, 0, 0, 0, 0, 0, 0x80};
    CHECK_INT(st_open_buffer(huge, 16, &f, err, sizeof err), REMEM_ECORRUPT);
    expect_error("{\"a\":", NULL, 0, "not valid JSON");
    expect_error("[1,2]", NULL, 0, "not a JSON object");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                 "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                 DATA, 8, "not valid JSON"); /* duplicate names */
    expect_error("{\"__metadata__\":[1]}", NULL, 0, "__metadata__");
    expect_error("{\"a\":3}", NULL, 0, "tensor a: header entry is not an object");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", DATA, 4, "data_offsets");
    expect_error("{\"a\":{\"dtype\":\"Q4\",\"shape\":[1],\"data_offsets\":[0,4]}}", DATA, 4,
                 "unknown dtype \"Q4\"");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", DATA, 4,
                 "shape[0] is not a size");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", DATA, 4,
                 "shape[0] is not a size");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}",
                 DATA, 4, "dimensions");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],"
                 "\"data_offsets\":[0,4]}}",
                 DATA, 4, "too large");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", DATA, 8,
                 "4 bytes for 2 F32 values (8 bytes)");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", DATA, 8,
                 "bad data_offsets");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", DATA, 8,
                 "bad data_offsets");
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                 DATA, 12, "overlap");
    /* The data section ends before a tensor does: a truncated file. */
    expect_error("{\"a\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]}}", DATA, 20,
                 "tensor a: data ends at byte 24 of a 20-byte data section (file truncated?)");
}

static void test_files(void) {
    char path[] = "/tmp/remem-test-st-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    size_t len;
    unsigned char *buf =
        build("{\"w\":{\"dtype\":\"F32\",\"shape\":[6],\"data_offsets\":[0,24]}}", DATA, 24, &len);
    CHECK_INT(write(fd, buf, len), (long long)len);
    close(fd);
    st_file *f = NULL;
    char err[512] = "";
    CHECK_INT(st_open(path, &f, err, sizeof err), 0);
    if (f) {
        float out[6];
        CHECK_INT(st_read_f32(st_find(f, "w"), 1, (int64_t[]){6}, out, err, sizeof err), 0);
        CHECK_NEAR(out[5], 6, 0);
        st_close(f);
    }
    /* Cut the file short: the error names the file and the problem. */
    CHECK_INT(truncate(path, (off_t)len - 5), 0);
    CHECK_INT(st_open(path, &f, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, path);
    CHECK_HAS(err, "truncated");
    CHECK_INT(truncate(path, 0), 0);
    CHECK_INT(st_open(path, &f, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "too short");
    unlink(path);
    CHECK_INT(st_open(path, &f, err, sizeof err), REMEM_ENOTFOUND);
    CHECK_INT(st_open("/tmp", &f, err, sizeof err), REMEM_EIO);
    CHECK_HAS(err, "not a regular file");
    free(buf);
}

static void test_config_checks(void) {
    bert_config c;
    char err[512];
    const char *good = "{\"vocab_size\":10,\"hidden_size\":8,\"num_hidden_layers\":1,"
                       "\"num_attention_heads\":2,\"intermediate_size\":16,"
                       "\"max_position_embeddings\":4}";
    CHECK_INT(bert_config_parse(good, strlen(good), &c, err, sizeof err), 0);
    CHECK_INT(c.type_vocab, 2);
    CHECK_NEAR(c.ln_eps, 1e-12, 1e-18);
    const char *odd = "{\"vocab_size\":10,\"hidden_size\":9,\"num_hidden_layers\":1,"
                      "\"num_attention_heads\":2,\"intermediate_size\":16,"
                      "\"max_position_embeddings\":4}";
    CHECK_INT(bert_config_parse(odd, strlen(odd), &c, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "not a multiple");
    const char *relu = "{\"vocab_size\":10,\"hidden_size\":8,\"num_hidden_layers\":1,"
                       "\"num_attention_heads\":2,\"intermediate_size\":16,"
                       "\"max_position_embeddings\":4,\"hidden_act\":\"relu\"}";
    CHECK_INT(bert_config_parse(relu, strlen(relu), &c, err, sizeof err), REMEM_EUNSUPPORTED);
    CHECK_HAS(err, "relu");
    const char *missing = "{\"vocab_size\":10}";
    CHECK_INT(bert_config_parse(missing, strlen(missing), &c, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "hidden_size");
    CHECK_INT(bert_config_parse("[", 1, &c, err, sizeof err), REMEM_ECORRUPT);
}

/* A whole tiny BERT, written tensor by tensor, with names under "bert.". */
typedef struct tiny {
    char header[16384];
    size_t hlen;
    float data[4096];
    size_t n;
} tiny;

/* Returns where the tensor's floats start in t->data. */
static size_t add(tiny *t, const char *name, int d0, int d1, float value) {
    size_t start = t->n, count = (size_t)d0 * (size_t)(d1 ? d1 : 1);
    t->hlen += (size_t)snprintf(t->header + t->hlen, sizeof t->header - t->hlen,
                                "%s\"bert.%s\":{\"dtype\":\"F32\",\"shape\":[%d%s%.0d],"
                                "\"data_offsets\":[%zu,%zu]}",
                                t->hlen > 1 ? "," : "", name, d0, d1 ? "," : "", d1, t->n * 4,
                                (t->n + count) * 4);
    for (size_t i = 0; i < count; i++) t->data[t->n++] = value * (float)((i % 7) + 1) / 7;
    return start;
}

static void test_tiny_model_with_prefix(void) {
    tiny *t = calloc(1, sizeof *t);
    t->header[0] = '{';
    t->hlen = 1;
    const int V = 10, H = 8, F = 16, P = 4;
    add(t, "embeddings.word_embeddings.weight", V, H, 0.5f);
    add(t, "embeddings.position_embeddings.weight", P, H, 0.1f);
    add(t, "embeddings.token_type_embeddings.weight", 2, H, 0.1f);
    add(t, "embeddings.LayerNorm.weight", H, 0, 1);
    add(t, "embeddings.LayerNorm.bias", H, 0, 0);
    const char *sq[] = {"query", "key", "value"};
    char name[128];
    for (int k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "encoder.layer.0.attention.self.%s.weight", sq[k]);
        add(t, name, H, H, 0.3f);
        snprintf(name, sizeof name, "encoder.layer.0.attention.self.%s.bias", sq[k]);
        add(t, name, H, 0, 0.1f);
    }
    add(t, "encoder.layer.0.attention.output.dense.weight", H, H, 0.2f);
    add(t, "encoder.layer.0.attention.output.dense.bias", H, 0, 0);
    add(t, "encoder.layer.0.attention.output.LayerNorm.weight", H, 0, 1);
    add(t, "encoder.layer.0.attention.output.LayerNorm.bias", H, 0, 0);
    size_t inter = add(t, "encoder.layer.0.intermediate.dense.weight", F, H, 0.2f);
    add(t, "encoder.layer.0.intermediate.dense.bias", F, 0, 0);
    add(t, "encoder.layer.0.output.dense.weight", H, F, 0.2f);
    add(t, "encoder.layer.0.output.dense.bias", H, 0, 0);
    add(t, "encoder.layer.0.output.LayerNorm.weight", H, 0, 1);
    t->hlen += (size_t)snprintf(t->header + t->hlen, sizeof t->header - t->hlen, "}");
    size_t len;
    unsigned char *buf = build(t->header, t->data, t->n * 4, &len);
    st_file *f = NULL;
    char err[512] = "";
    CHECK_INT(st_open_buffer(buf, len, &f, err, sizeof err), 0);
    bert_config c = {V, H, 1, 2, F, P, 2, 1e-12f};
    bert_model *m = NULL;
    /* One tensor is missing: the error names it. */
    CHECK_INT(bert_load(&c, f, &m, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "no tensor bert.encoder.layer.0.output.LayerNorm.bias");
    st_close(f);
    free(buf);

    t->hlen--; /* reopen the object and add the last tensor */
    t->header[t->hlen] = 0;
    add(t, "encoder.layer.0.output.LayerNorm.bias", H, 0, 0);
    t->hlen += (size_t)snprintf(t->header + t->hlen, sizeof t->header - t->hlen, "}");
    buf = build(t->header, t->data, t->n * 4, &len);
    CHECK_INT(st_open_buffer(buf, len, &f, err, sizeof err), 0);
    CHECK_INT(bert_load(&c, f, &m, err, sizeof err), 0);
    st_close(f);
    free(buf);
    if (m) {
        int32_t ids[4] = {2, 5, 9, 3};
        bert_seq s = {ids, 4};
        float pooled[8];
        CHECK_INT(bert_encode(m, &s, 1, pooled, NULL, err, sizeof err), 0);
        for (int k = 0; k < H; k++) CHECK(isfinite(pooled[k]));
        s.len = 5; /* more than max_position_embeddings */
        CHECK_INT(bert_encode(m, &s, 1, pooled, NULL, err, sizeof err), REMEM_EINVAL);
        bert_free(m);
    }
    /* The same file read with a config that disagrees: the shape error. */
    buf = build(t->header, t->data, t->n * 4, &len);
    CHECK_INT(st_open_buffer(buf, len, &f, err, sizeof err), 0);
    c.hidden = 4;
    CHECK_INT(bert_load(&c, f, &m, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "embeddings.word_embeddings.weight has shape [10, 8], expected [10, 4]");
    st_close(f);
    free(buf);

    /* Non-finite weights are refused at load, naming the tensor: a NaN used
     * to reach a float-to-int conversion in exp (undefined behaviour). */
    c.hidden = H;
    const float poison[2] = {NAN, INFINITY};
    const char *says[2] = {"NaN", "infinity"};
    for (int p = 0; p < 2; p++) {
        t->data[inter + 5] = poison[p];
        buf = build(t->header, t->data, t->n * 4, &len);
        CHECK_INT(st_open_buffer(buf, len, &f, err, sizeof err), 0);
        m = NULL;
        CHECK_INT(bert_load(&c, f, &m, err, sizeof err), REMEM_ECORRUPT);
        CHECK(m == NULL);
        CHECK_HAS(err, "tensor bert.encoder.layer.0.intermediate.dense.weight");
        CHECK_HAS(err, says[p]);
        CHECK_HAS(err, "element 5");
        bert_free(m);
        st_close(f);
        free(buf);
    }
    free(t);
}

/* ------------------------------------------------------------------ */
/* What the embedder says about broken weights files                    */
/* ------------------------------------------------------------------ */
static int copy_file(const char *from, const char *to, long keep) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int c, ok = in && out;
    long n = 0;
    while (ok && (keep < 0 || n < keep) && (c = fgetc(in)) != EOF) {
        fputc(c, out);
        n++;
    }
    if (in) fclose(in);
    if (out) fclose(out);
    return ok ? 0 : -1;
}

static void embedder_error(const char *dir, int want_rc, const char *want) {
    embed_config cfg = {0};
    cfg.model_dir = dir;
    embedder *e = NULL;
    char err[1024] = "";
    CHECK_INT(embed_minilm_create(&cfg, &e, err, sizeof err), want_rc);
    CHECK(e == NULL);
    CHECK_HAS(err, want);
    embed_destroy(e);
}

static void test_embedder_messages(void) {
    const char *root = getenv("REMEM_ROOT") ? getenv("REMEM_ROOT") : ".";
    char src[4096], dir[] = "/tmp/remem-test-broken-XXXXXX", a[4200], b[4200];
    snprintf(src, sizeof src, "%s/tests/data/minilm/model", root);
    CHECK(mkdtemp(dir) != NULL);
    const char *names[] = {"vocab.txt", "config.json", "remem-model.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(a, sizeof a, "%s/%s", src, names[i]);
        snprintf(b, sizeof b, "%s/%s", dir, names[i]);
        CHECK_INT(copy_file(a, b, -1), 0);
    }
    snprintf(a, sizeof a, "%s/model.safetensors", src);
    snprintf(b, sizeof b, "%s/model.safetensors", dir);
    struct stat st;
    CHECK_INT(stat(a, &st), 0);

    /* Truncated: half the file. */
    CHECK_INT(copy_file(a, b, (long)st.st_size / 2), 0);
    embedder_error(dir, REMEM_ECORRUPT, "truncated");
    /* Corrupt: the header's JSON broken. */
    CHECK_INT(copy_file(a, b, -1), 0);
    FILE *f = fopen(b, "r+b");
    fseek(f, 9, SEEK_SET);
    fputs("@@@@", f);
    fclose(f);
    embedder_error(dir, REMEM_ECORRUPT, "not valid JSON");
    /* Wrong shape: a config that does not match the weights. */
    CHECK_INT(copy_file(a, b, -1), 0);
    snprintf(a, sizeof a, "%s/config.json", dir);
    f = fopen(a, "w");
    fputs("{\"vocab_size\":30522,\"hidden_size\":32,\"num_hidden_layers\":2,"
          "\"num_attention_heads\":4,\"intermediate_size\":128,"
          "\"max_position_embeddings\":512,\"hidden_act\":\"gelu\"}",
          f);
    fclose(f);
    embedder_error(dir, REMEM_ECORRUPT, "has shape [30522, 64], expected [30522, 32]");
    /* More layers than the file has. */
    f = fopen(a, "w");
    fputs("{\"vocab_size\":30522,\"hidden_size\":64,\"num_hidden_layers\":3,"
          "\"num_attention_heads\":4,\"intermediate_size\":128,"
          "\"max_position_embeddings\":512}",
          f);
    fclose(f);
    embedder_error(dir, REMEM_ECORRUPT, "no tensor encoder.layer.2.");
    const char *rm[] = {"vocab.txt", "config.json", "remem-model.json", "model.safetensors"};
    for (int i = 0; i < 4; i++) {
        snprintf(a, sizeof a, "%s/%s", dir, rm[i]);
        unlink(a);
    }
    rmdir(dir);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_reads_each_dtype);
    RUN(test_half_precision);
    RUN(test_broken_headers);
    RUN(test_files);
    RUN(test_config_checks);
    RUN(test_tiny_model_with_prefix);
    RUN(test_embedder_messages);
    return TEST_EXIT();
}
