/*
 * test_minilm.c: the minilm embedder against the PyTorch reference fixture
 * (tests/data/minilm, made by tools/minilm_reference.py: a 2-layer,
 * hidden-64 BERT with random weights and the real vocabulary): token ids
 * exactly, embeddings within 1e-4, in one batch and one by one, on one
 * thread and several. Then the model folder rules (verification marker,
 * model ids, refusal of unknown weights), and finally the real-weight checks
 * of REFERENCE.md, which run only when the real model is installed and are
 * reported as a skip (SKIP, counted by tests/run.sh) when it is not.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include "embed/minilm/bert.h"
#include "embed/embed.h"
#include "embed/minilm/minilm.h"
#include "embed/minilm/wordpiece.h"
#include "remem.h"
#include "test.h"

static char fixture[4096], model_dir[4200];
static json_t *expected;

typedef struct text_case {
    const char *name;
    char *bytes;
    size_t len;
    json_t *ids, *pooled, *embedding;
} text_case;
static text_case cases[128];
static size_t ncases;

static char *unhex(const char *hex, size_t *len) {
    size_t n = strlen(hex) / 2;
    char *out = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (char)v;
    }
    out[n] = 0;
    *len = n;
    return out;
}

static int load_fixture(void) {
    const char *root = getenv("REMEM_ROOT");
    snprintf(fixture, sizeof fixture, "%s/tests/data/minilm", root ? root : ".");
    snprintf(model_dir, sizeof model_dir, "%s/model", fixture);
    char path[4300];
    snprintf(path, sizeof path, "%s/expected.json", fixture);
    json_error_t jerr;
    expected = json_load_file(path, 0, &jerr);
    if (!expected) {
        fprintf(stderr, "cannot read %s: %s\n", path, jerr.text);
        return -1;
    }
    json_t *arr = json_object_get(expected, "cases"), *c;
    size_t i;
    json_array_foreach(arr, i, c) {
        if (ncases == 128) break;
        text_case *t = &cases[ncases++];
        t->name = json_string_value(json_object_get(c, "name"));
        t->bytes = unhex(json_string_value(json_object_get(c, "hex")), &t->len);
        t->ids = json_object_get(c, "ids");
        t->pooled = json_object_get(c, "pooled");
        t->embedding = json_object_get(c, "embedding");
    }
    return 0;
}

static void test_fixture_is_big_enough(void) {
    CHECK(ncases >= 30);
    int empty = 0, long_text = 0;
    for (size_t i = 0; i < ncases; i++) {
        empty += cases[i].len == 0;
        long_text += json_array_size(cases[i].ids) == 256;
    }
    CHECK(empty == 1);
    CHECK(long_text >= 2);
}

static void test_token_ids_match_reference(void) {
    char path[4300], err[512];
    wp_vocab *v = NULL;
    snprintf(path, sizeof path, "%s/vocab.txt", model_dir);
    CHECK_INT(wp_vocab_load_file(path, &v, err, sizeof err), 0);
    if (!v) return;
    CHECK_INT(wp_vocab_size(v), 30522);
    int32_t ids[256];
    for (size_t i = 0; i < ncases; i++) {
        int n = wp_tokenize(v, cases[i].bytes, cases[i].len, ids, 256);
        int same = n == (int)json_array_size(cases[i].ids);
        for (int k = 0; same && k < n; k++)
            same = ids[k] == json_integer_value(json_array_get(cases[i].ids, (size_t)k));
        if (!same) {
            fprintf(stderr, "  case \"%s\": got %d ids:", cases[i].name, n);
            for (int k = 0; k < n && k < 40; k++) fprintf(stderr, " %d", ids[k]);
            fprintf(stderr, "\n  expected %zu:", json_array_size(cases[i].ids));
            for (size_t k = 0; k < json_array_size(cases[i].ids) && k < 40; k++)
                fprintf(stderr, " %lld",
                        (long long)json_integer_value(json_array_get(cases[i].ids, k)));
            fprintf(stderr, "\n");
        }
        CHECK(same);
    }
    wp_vocab_free(v);
}

/* Largest |got - want| over one vector. */
static double max_diff(const float *got, json_t *want, int dim) {
    double worst = 0;
    for (int k = 0; k < dim; k++) {
        double d = fabs(got[k] - json_number_value(json_array_get(want, (size_t)k)));
        if (!(d <= worst)) worst = d; /* NaN counts as worst */
    }
    return worst;
}

static embedder *fixture_embedder(void) {
    embed_config cfg = {0};
    cfg.model_dir = model_dir;
    embedder *e = NULL;
    char err[512] = "";
    int rc = embed_minilm_create(&cfg, &e, err, sizeof err);
    if (rc) fprintf(stderr, "  create: %s\n", err);
    CHECK_INT(rc, 0);
    return e;
}

static void check_embeddings(embedder *e, int one_by_one) {
    const int dim = e->dim;
    const char **texts = malloc(ncases * sizeof *texts);
    float *out = malloc(ncases * (size_t)dim * sizeof *out);
    char err[512];
    for (size_t i = 0; i < ncases; i++) texts[i] = cases[i].bytes;
    /* Texts with NUL bytes are passed up to the NUL, as a C caller would;
     * the fixture has none inside (a NUL case is covered in test_wordpiece). */
    if (one_by_one) {
        for (size_t i = 0; i < ncases; i++)
            CHECK_INT(e->embed(e, &texts[i], 1, out + i * (size_t)dim, err, sizeof err), 0);
    } else {
        CHECK_INT(e->embed(e, texts, ncases, out, err, sizeof err), 0);
    }
    double worst = 0;
    for (size_t i = 0; i < ncases; i++) {
        if (strlen(cases[i].bytes) != cases[i].len) continue;
        double d = max_diff(out + i * (size_t)dim, cases[i].embedding, dim);
        if (!(d <= 1e-4)) fprintf(stderr, "  case \"%s\": off by %g\n", cases[i].name, d);
        CHECK(d <= 1e-4);
        if (d > worst) worst = d;
        double norm = 0;
        for (int k = 0; k < dim; k++) norm += (double)out[i * dim + k] * out[i * dim + k];
        CHECK_NEAR(norm, 1.0, 1e-5);
    }
    fprintf(stderr, "  %s: largest difference from the reference %.2g\n",
            one_by_one ? "one by one" : "one batch", worst);
    free(texts);
    free(out);
}

static void test_embeddings_match_reference(void) {
    embedder *e = fixture_embedder();
    if (!e) return;
    CHECK_INT(e->dim, 64);
    CHECK_STR(e->name, "minilm");
    CHECK(strncmp(e->model_id, "minilm:sha256:", 14) == 0);
    CHECK(strcmp(e->model_id, MINILM_MODEL_ID) != 0);
    check_embeddings(e, 0);
    check_embeddings(e, 1);
    embed_destroy(e);
}

typedef struct concurrent_call {
    bert_model *m;
    const bert_seq *seqs;
    size_t n;
    float *out;
    int rc;
} concurrent_call;

static void *concurrent_main(void *arg) {
    concurrent_call *c = arg;
    char err[256];
    for (int i = 0; i < 5 && c->rc == 0; i++)
        c->rc = bert_encode(c->m, c->seqs, c->n, c->out, NULL, err, sizeof err);
    return NULL;
}

/* The encoder's own output (mean, before normalising) and its independence
 * from how a batch is cut over threads. */
static void test_pooled_and_threads(void) {
    char path[4300], err[512];
    bert_config c;
    st_file *st = NULL;
    bert_model *m = NULL;
    snprintf(path, sizeof path, "%s/config.json", model_dir);
    CHECK_INT(bert_config_load(path, &c, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/model.safetensors", model_dir);
    CHECK_INT(st_open(path, &st, err, sizeof err), 0);
    if (!st) return;
    CHECK_INT(bert_load(&c, st, &m, err, sizeof err), 0);
    st_close(st);
    if (!m) return;
    bert_seq *seqs = malloc(ncases * sizeof *seqs);
    int32_t *ids = malloc(ncases * 256 * sizeof *ids);
    size_t tokens = 0;
    for (size_t i = 0; i < ncases; i++) {
        size_t n = json_array_size(cases[i].ids);
        for (size_t k = 0; k < n; k++)
            ids[i * 256 + k] = (int32_t)json_integer_value(json_array_get(cases[i].ids, k));
        seqs[i] = (bert_seq){ids + i * 256, (int)n};
        tokens += n;
    }
    const size_t H = 64;
    float *ref = malloc(ncases * H * sizeof *ref), *out = malloc(ncases * H * sizeof *out);
    float *hidden = malloc(tokens * H * sizeof *hidden);
    bert_set_threads(m, 1);
    CHECK_INT(bert_encode(m, seqs, ncases, ref, hidden, err, sizeof err), 0);
    for (size_t i = 0; i < ncases; i++) CHECK(max_diff(ref + i * H, cases[i].pooled, 64) <= 1e-4);
    /* The hidden states of the first case average to its pooled vector. */
    for (size_t k = 0; k < H; k++) {
        double sum = 0;
        for (int p = 0; p < seqs[0].len; p++) sum += hidden[(size_t)p * H + k];
        CHECK_NEAR(sum / seqs[0].len, ref[k], 1e-5);
    }
    int counts[] = {2, 3, 7, 64};
    float *hidden2 = malloc(tokens * H * sizeof *hidden2);
    for (size_t t = 0; t < sizeof counts / sizeof *counts; t++) {
        bert_set_threads(m, counts[t]);
        CHECK_INT(bert_encode(m, seqs, ncases, out, hidden2, err, sizeof err), 0);
        double worst = 0, worst_hidden = 0;
        for (size_t i = 0; i < ncases * H; i++)
            if (fabs(out[i] - ref[i]) > worst) worst = fabs(out[i] - ref[i]);
        for (size_t i = 0; i < tokens * H; i++)
            if (fabs(hidden2[i] - hidden[i]) > worst_hidden)
                worst_hidden = fabs(hidden2[i] - hidden[i]);
        CHECK(worst <= 1e-5);
        CHECK(worst_hidden <= 1e-4);
    }
    free(hidden2);
    /* Two callers at once on one model: each gets the right answer (the
     * second works in its own memory while the first holds the model's). */
    concurrent_call calls[2];
    pthread_t tid[2];
    for (int k = 0; k < 2; k++) {
        calls[k] = (concurrent_call){m, seqs, ncases, malloc(ncases * H * sizeof(float)), 0};
        pthread_create(&tid[k], NULL, concurrent_main, &calls[k]);
    }
    for (int k = 0; k < 2; k++) {
        pthread_join(tid[k], NULL);
        CHECK_INT(calls[k].rc, 0);
        double worst = 0;
        for (size_t i = 0; i < ncases * H; i++)
            if (fabs(calls[k].out[i] - ref[i]) > worst) worst = fabs(calls[k].out[i] - ref[i]);
        CHECK(worst <= 1e-5);
        free(calls[k].out);
    }
    /* Ids outside the vocabulary and empty sequences are refused. */
    int32_t bad[] = {101, 40000, 102};
    bert_seq b = {bad, 3};
    CHECK_INT(bert_encode(m, &b, 1, out, NULL, err, sizeof err), REMEM_EINVAL);
    CHECK_HAS(err, "outside the vocabulary");
    b.len = 0;
    CHECK_INT(bert_encode(m, &b, 1, out, NULL, err, sizeof err), REMEM_EINVAL);
    double flops = bert_flops(&c, &seqs[0].len, 1);
    CHECK(flops > 0);
    free(seqs);
    free(ids);
    free(ref);
    free(out);
    free(hidden);
    bert_free(m);
}

/* ------------------------------------------------------------------ */
/* The model folder                                                     */
/* ------------------------------------------------------------------ */
static char tmpdir[256];

static int copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[65536];
    size_t n;
    int ok = in && out;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out) fclose(out);
    return ok ? 0 : -1;
}

static void copy_model(const char *dst, int with_decl) {
    const char *names[] = {"model.safetensors", "vocab.txt", "config.json", MINILM_TEST_DECL};
    mkdir(dst, 0755);
    for (int i = 0; i < (with_decl ? 4 : 3); i++) {
        char a[4400], b[4400];
        snprintf(a, sizeof a, "%s/%s", model_dir, names[i]);
        snprintf(b, sizeof b, "%s/%s", dst, names[i]);
        CHECK_INT(copy_file(a, b), 0);
    }
}

static void rm_model(const char *dir) {
    const char *names[] = {"model.safetensors", "vocab.txt", "config.json", MINILM_TEST_DECL,
                           MINILM_MARKER};
    for (int i = 0; i < 5; i++) {
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    rmdir(dir);
}

static void test_folder_rules(void) {
    char why[512], err[512], dir[512];
    snprintf(tmpdir, sizeof tmpdir, "/tmp/remem-test-minilm-XXXXXX");
    CHECK(mkdtemp(tmpdir) != NULL);

    /* Nothing there: not available, and create says what is missing. */
    snprintf(dir, sizeof dir, "%s/empty", tmpdir);
    mkdir(dir, 0755);
    CHECK_INT(embed_minilm_available(dir, why, sizeof why), 0);
    CHECK_HAS(why, "model.safetensors missing");
    embed_config cfg = {0};
    cfg.model_dir = dir;
    embedder *e = NULL;
    CHECK_INT(embed_minilm_create(&cfg, &e, err, sizeof err), REMEM_ENOTFOUND);
    CHECK(e == NULL);
    rmdir(dir);

    /* Other weights without a declaration: refused, with the way out. */
    snprintf(dir, sizeof dir, "%s/undeclared", tmpdir);
    copy_model(dir, 0);
    cfg.model_dir = dir;
    CHECK_INT(embed_minilm_create(&cfg, &e, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "not the official");
    CHECK_HAS(err, MINILM_TEST_DECL);
    CHECK_INT(embed_minilm_available(dir, why, sizeof why), 0);

    /* Verified against a given checksum (as a pull from a mirror does):
     * usable, with a model id of its own, but never chosen automatically. */
    char sha[3][65], wpath[4400];
    const char *names[3] = {"model.safetensors", "vocab.txt", "config.json"};
    for (int i = 0; i < 3; i++) {
        char p[4400];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        CHECK_INT(minilm_sha256_file(p, sha[i], NULL, err, sizeof err), 0);
    }
    snprintf(wpath, sizeof wpath, "%s/model.safetensors", dir);
    const char *wrong[3] = {"00", NULL, NULL}, *right[3] = {sha[0], sha[1], sha[2]};
    CHECK_INT(minilm_verify_dir(dir, wrong, err, sizeof err), REMEM_ECORRUPT);
    CHECK_HAS(err, "model.safetensors: sha256");
    CHECK_INT(minilm_verify_dir(dir, NULL, err, sizeof err), REMEM_ECORRUPT);
    CHECK_INT(minilm_marker_ok(dir, why, sizeof why), 0);
    CHECK_INT(minilm_verify_dir(dir, right, err, sizeof err), 0);
    CHECK_INT(minilm_marker_ok(dir, why, sizeof why), 1);
    CHECK_INT(embed_minilm_available(dir, why, sizeof why), 0);
    CHECK_HAS(why, "other than the official");
    CHECK_INT(embed_minilm_create(&cfg, &e, err, sizeof err), 0);
    char id1[128] = "";
    if (e) {
        snprintf(id1, sizeof id1, "%s", e->model_id);
        CHECK(strncmp(e->model_id, "minilm:sha256:", 14) == 0);
        embed_destroy(e);
        e = NULL;
    }
    /* A changed file invalidates the marker (size and mtime are checked). */
    struct utimbuf when = {1000000000, 1000000000};
    CHECK_INT(utime(wpath, &when), 0);
    CHECK_INT(minilm_marker_ok(dir, why, sizeof why), 0);
    CHECK_HAS(why, "changed since it was verified");
    rm_model(dir);

    /* The declared test model and a copy of it get the same id; other
     * weights get another. */
    snprintf(dir, sizeof dir, "%s/declared", tmpdir);
    copy_model(dir, 1);
    cfg.model_dir = dir;
    CHECK_INT(embed_minilm_create(&cfg, &e, err, sizeof err), 0);
    if (e) {
        CHECK_STR(e->model_id, id1);
        embed_destroy(e);
        e = NULL;
    }
    /* Flip one byte of the weights' data: another id. */
    char dpath[4400];
    snprintf(dpath, sizeof dpath, "%s/model.safetensors", dir);
    FILE *f = fopen(dpath, "r+b");
    CHECK(f != NULL);
    if (f) {
        fseek(f, -3, SEEK_END);
        int c = fgetc(f);
        fseek(f, -3, SEEK_END);
        fputc(c ^ 1, f);
        fclose(f);
    }
    CHECK_INT(embed_minilm_create(&cfg, &e, err, sizeof err), 0);
    if (e) {
        CHECK(strcmp(e->model_id, id1) != 0);
        embed_destroy(e);
    }
    rm_model(dir);

    /* The default folder comes from REMEM_MODEL_DIR, then HOME. */
    char out[4096];
    setenv("REMEM_MODEL_DIR", "/x/y/", 1);
    CHECK_INT(minilm_resolve_dir(NULL, out, sizeof out, err, sizeof err), 0);
    CHECK_STR(out, "/x/y");
    unsetenv("REMEM_MODEL_DIR");
    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    setenv("HOME", "/home/u", 1);
    CHECK_INT(minilm_resolve_dir("", out, sizeof out, err, sizeof err), 0);
    CHECK_STR(out, "/home/u/.cache/remem/models/all-MiniLM-L6-v2");
    CHECK_INT(minilm_resolve_dir("/given", out, sizeof out, err, sizeof err), 0);
    CHECK_STR(out, "/given");
    if (home)
        setenv("HOME", home, 1);
    else
        unsetenv("HOME");
    free(home);
    rmdir(tmpdir);
}

/* ------------------------------------------------------------------ */
/* Real weights (REFERENCE.md), when installed                          */
/* ------------------------------------------------------------------ */
/* Values of a .snap file (a YAML list, nested lists flattened). */
static size_t read_snap(const char *path, float *out, size_t cap) {
    FILE *f = fopen(path, "r");
    char line[256];
    size_t n = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f) && n < cap) {
        char *dash = strrchr(line, '-');
        if (!dash || !strstr(line, "- ")) continue;
        char *num = strstr(line, "- ");
        while (num && num[2] == '-' && num[3] == ' ') num += 2; /* "- - -0.5" */
        if (!num) continue;
        char *end;
        double v = strtod(num + 2, &end);
        if (end != num + 2) out[n++] = (float)v;
    }
    fclose(f);
    return n;
}

static double cosine(const float *a, const float *b, size_t n) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    return ab / sqrt(aa * bb);
}

/* The snapshot files the real-weight checks read parse as they should, so
 * that those checks mean something on a machine that has the model. */
static void test_reference_snapshots_parse(void) {
    const char *root = getenv("REMEM_ROOT") ? getenv("REMEM_ROOT") : ".";
    char snap[4400];
    static float v[384 * 8];
    snprintf(snap, sizeof snap, "%s/tests/data/minilm/real/bert_single.snap", root);
    CHECK_INT(read_snap(snap, v, 384 * 8), 384);
    CHECK_NEAR(v[0], -0.59059864, 1e-7);
    CHECK_NEAR(v[4], -0.11783009, 1e-7);
    double norm = 0;
    for (int i = 0; i < 384; i++) norm += (double)v[i] * v[i];
    CHECK_NEAR(sqrt(norm), 7.5809, 1e-3); /* as REFERENCE.md says */
    snprintf(snap, sizeof snap, "%s/tests/data/minilm/real/bert_single_raw.snap", root);
    CHECK_INT(read_snap(snap, v, 384 * 8), 384 * 7);
    snprintf(snap, sizeof snap, "%s/tests/data/minilm/real/bert_batch.snap", root);
    CHECK_INT(read_snap(snap, v, 384 * 8), 384 * 3);
    /* Rows 0 and 2 are the same sentence. */
    CHECK(cosine(v, v + 768, 384) > 0.99999);
    CHECK(cosine(v, v + 384, 384) < 0.999);
    /* The 7 hidden states are those of these 7 tokens. */
    char path[4300], err[256];
    wp_vocab *voc = NULL;
    snprintf(path, sizeof path, "%s/vocab.txt", model_dir);
    CHECK_INT(wp_vocab_load_file(path, &voc, err, sizeof err), 0);
    if (voc) {
        int32_t ids[16];
        const char *q = "What is Deep Learning?";
        const int32_t want[7] = {101, 2054, 2003, 2784, 4083, 1029, 102};
        CHECK_INT(wp_tokenize(voc, q, strlen(q), ids, 16), 7);
        for (int i = 0; i < 7; i++) CHECK_INT(ids[i], want[i]);
        wp_vocab_free(voc);
    }
}

static void test_real_weights_reference(void) {
    char dir[4096], why[512], err[512];
    if (minilm_resolve_dir(NULL, dir, sizeof dir, err, sizeof err) ||
        !embed_minilm_available(dir, why, sizeof why)) {
        char msg[1024];
        snprintf(msg, sizeof msg,
                 "the real-weight checks of REFERENCE.md need the official all-MiniLM-L6-v2 "
                 "(%s); install it with `remem model pull` (or point REMEM_MODEL_DIR at a "
                 "verified copy) to run them",
                 why);
        SKIP(msg);
    }
    fprintf(stderr, "  real model found in %s: running the REFERENCE.md checks\n", dir);
    embed_config cfg = {0};
    cfg.model_dir = dir;
    embedder *e = NULL;
    CHECK_INT(embed_minilm_create(&cfg, &e, err, sizeof err), 0);
    if (!e) return;
    CHECK_INT(e->dim, 384);
    CHECK_STR(e->model_id, MINILM_MODEL_ID);
    minilm_model_view view;
    CHECK_INT(minilm_view(e, &view), 0);

    /* "hello world", normalised: first five values (fastembed, 1e-3). */
    const char *hello = "hello world";
    float v[384];
    CHECK_INT(e->embed(e, &hello, 1, v, err, sizeof err), 0);
    const float hw[5] = {-0.034478f, 0.03102f, 0.00673f, 0.02611f, -0.039362f};
    for (int i = 0; i < 5; i++) CHECK_NEAR(v[i], hw[i], 1e-3);

    /* Mean pooled, not normalised (spring-ai, 5 decimals). */
    struct {
        const char *text;
        float first, last;
    } pooled[] = {
        {"Hello world", -0.19744634628295898f, 0.17298996448516846f},
        {"World is big", 0.4293745160102844f, 0.05501303821802139f},
    };
    for (int k = 0; k < 2; k++) {
        float p[384];
        CHECK_INT(minilm_pooled(&view, pooled[k].text, p, NULL, err, sizeof err), 0);
        CHECK_NEAR(p[0], pooled[k].first, 1e-4);
        CHECK_NEAR(p[383], pooled[k].last, 1e-4);
    }

    /* text-embeddings-inference's snapshots (cosine > 0.999 there; we ask
     * every value to 1e-3 as well). */
    char snap[4400];
    const char *root = getenv("REMEM_ROOT");
    float want[384 * 8], got[384 * 8];
    snprintf(snap, sizeof snap, "%s/tests/data/minilm/real/bert_single.snap", root ? root : ".");
    CHECK_INT(read_snap(snap, want, 384), 384);
    CHECK_INT(minilm_pooled(&view, "What is Deep Learning?", got, NULL, err, sizeof err), 0);
    CHECK(cosine(got, want, 384) > 0.9999);
    for (int i = 0; i < 384; i++) CHECK_NEAR(got[i], want[i], 1e-3);

    snprintf(snap, sizeof snap, "%s/tests/data/minilm/real/bert_single_raw.snap",
             root ? root : ".");
    CHECK_INT(read_snap(snap, want, 384 * 7), 384 * 7);
    float pooled_unused[384];
    CHECK_INT(minilm_pooled(&view, "What is Deep Learning?", pooled_unused, got, err, sizeof err),
              0);
    for (int t = 0; t < 7; t++) CHECK(cosine(got + t * 384, want + t * 384, 384) > 0.999);

    snprintf(snap, sizeof snap, "%s/tests/data/minilm/real/bert_batch.snap", root ? root : ".");
    CHECK_INT(read_snap(snap, want, 384 * 3), 384 * 3);
    const char *batch[3] = {"What is Deep Learning?", "Deep Learning is...",
                            "What is Deep Learning?"};
    for (int k = 0; k < 3; k++) {
        CHECK_INT(minilm_pooled(&view, batch[k], got, NULL, err, sizeof err), 0);
        CHECK(cosine(got, want + k * 384, 384) > 0.9999);
    }
    embed_destroy(e);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    if (load_fixture()) return 1;
    RUN(test_fixture_is_big_enough);
    RUN(test_token_ids_match_reference);
    RUN(test_embeddings_match_reference);
    RUN(test_pooled_and_threads);
    RUN(test_folder_rules);
    RUN(test_reference_snapshots_parse);
    RUN(test_real_weights_reference);
    for (size_t i = 0; i < ncases; i++) free(cases[i].bytes);
    json_decref(expected);
    return TEST_EXIT();
}
