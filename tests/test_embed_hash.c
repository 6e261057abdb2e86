/*
 * test_embed_hash.c: the hash embedder (src/embed/hash.c). Beyond the
 * contract (dimension, model id, unit length, zero vector for a text with no
 * features, bit-identical output across calls, batches, instances and
 * threads, no crash on any bytes), it checks the reason the embedder exists:
 * on paraphrase-ish pairs of the kind a memory is recalled by ("When did
 * Caroline go to the LGBTQ support group?" against "I went to a LGBTQ
 * support group yesterday"), the matching memory scores clearly above the
 * unrelated ones, and ranks better than the naive adler32 bag of words that
 * seed 000 used (re-implemented here as the baseline). It ends by printing
 * the throughput on ~100-character texts.
 */
#include "test.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "embed/embed.h"
#include "remem.h"
#include "text/analyse.h"

/* The checksums of test_vectors_pinned, from the code of 799127d. */
#define PIN_ONE 0x3801a67c35d1c9edULL
#define PIN_FIRST 0x6ab05ef9aa8b9b25ULL
#define PIN_ALL 0x95389d7a2c79cd9dULL
#define PIN_TERMS 0x006c65348e1f5078ULL
#define PIN_SNOWBALL 0xb8200f310f474d10ULL

static embedder *make(int dim) {
    embed_config cfg = {0};
    cfg.dim = dim;
    embedder *e = NULL;
    char err[256] = "";
    int rc = embed_hash_create(&cfg, &e, err, sizeof err);
    if (rc != REMEM_OK) fprintf(stderr, "  embed_hash_create: %s\n", err);
    return e;
}

/* Embeds one text into a fresh vector (caller frees). */
static float *vec(embedder *e, const char *text) {
    float *v = malloc((size_t)e->dim * sizeof *v);
    char err[256] = "";
    int rc = e->embed(e, &text, 1, v, err, sizeof err);
    if (rc != REMEM_OK) fprintf(stderr, "  embed: %s\n", err);
    return v;
}

static double dot(const float *a, const float *b, int dim) {
    double s = 0;
    for (int i = 0; i < dim; i++) s += (double)a[i] * b[i];
    return s;
}

static double cosine_of(embedder *e, const char *a, const char *b) {
    float *va = vec(e, a), *vb = vec(e, b);
    double c = dot(va, vb, e->dim);
    free(va);
    free(vb);
    return c;
}

/* Seed 000's fallback: adler32 of each lowercased whitespace token, one
 * count per bucket, here L2-normalised so cosines compare. */
static uint32_t adler32(const char *s, size_t n) {
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < n; i++) {
        a = (a + (unsigned char)s[i]) % 65521;
        b = (b + a) % 65521;
    }
    return (b << 16) | a;
}

static void naive_embed(const char *text, float *v, int dim) {
    memset(v, 0, (size_t)dim * sizeof *v);
    char tok[256];
    size_t n = 0;
    for (const char *p = text;; p++) {
        if (*p && *p != ' ' && *p != '\t' && *p != '\n') {
            if (n < sizeof tok) tok[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p | 0x20 : *p);
            continue;
        }
        if (n) v[adler32(tok, n) % (uint32_t)dim] += 1;
        n = 0;
        if (!*p) break;
    }
    double s = dot(v, v, dim);
    if (s > 0)
        for (int i = 0; i < dim; i++) v[i] /= (float)sqrt(s);
}

static void test_create_and_model_id(void) {
    embedder *e = make(0);
    CHECK(e != NULL);
    if (!e) return;
    CHECK_STR(e->name, "hash");
    CHECK_INT(e->dim, 384);
    CHECK_STR(e->model_id, "hash-v1-384");
    embed_destroy(e);

    e = make(64);
    CHECK(e != NULL);
    if (e) {
        CHECK_INT(e->dim, 64);
        CHECK_STR(e->model_id, "hash-v1-64");
    }
    embed_destroy(e);
    embed_destroy(NULL);
}

static void test_bad_dim(void) {
    int bad[] = {-1, 1, 1 << 20};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        embed_config cfg = {0};
        cfg.dim = bad[i];
        embedder *e = (embedder *)&cfg; /* must be reset to NULL */
        char err[256] = "";
        CHECK_INT(embed_hash_create(&cfg, &e, err, sizeof err), REMEM_EINVAL);
        CHECK(e == NULL);
        CHECK_HAS(err, "dim");
    }
}

/* The dim option really changes the vector length: nothing past dim floats
 * is written, and each row is unit length. */
static void test_dim_option_writes_dim_floats(void) {
    int dims[] = {2, 17, 64, 384, 1024};
    for (size_t d = 0; d < sizeof dims / sizeof *dims; d++) {
        embedder *e = make(dims[d]);
        CHECK(e != NULL);
        if (!e) continue;
        const char *texts[] = {"Melanie painted a lake sunrise last year",
                               "Caroline researched adoption agencies"};
        size_t n = 2, total = n * (size_t)e->dim + 8;
        float *out = malloc(total * sizeof *out);
        for (size_t i = 0; i < total; i++) out[i] = -12345.0f;
        char err[256] = "";
        CHECK_INT(e->embed(e, texts, n, out, err, sizeof err), REMEM_OK);
        for (size_t i = n * (size_t)e->dim; i < total; i++) CHECK(out[i] == -12345.0f);
        for (size_t r = 0; r < n; r++)
            CHECK_NEAR(dot(out + r * e->dim, out + r * e->dim, e->dim), 1.0, 1e-5);
        free(out);
        embed_destroy(e);
    }
}

static void test_unit_length_and_zero_vector(void) {
    embedder *e = make(0);
    if (!e) return;
    const char *texts[] = {
        "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
        "x",
        "2023",
        "paint paint paint paint paint paint paint paint",
        "",
        "   \t\n",
        "...!!! ??? --- ***",
        "the and of to it is was",
        "I'm what's you'll",
        "😀🎉👍",
    };
    size_t n = sizeof texts / sizeof *texts;
    float *out = malloc(n * (size_t)e->dim * sizeof *out);
    char err[256] = "";
    CHECK_INT(e->embed(e, texts, n, out, err, sizeof err), REMEM_OK);
    for (size_t i = 0; i < n; i++) {
        double norm2 = dot(out + i * e->dim, out + i * e->dim, e->dim);
        int expect_zero = i >= 4;
        if (expect_zero) {
            CHECK_NEAR(norm2, 0.0, 0.0);
            if (norm2 != 0) fprintf(stderr, "  text %zu \"%s\" not zero\n", i, texts[i]);
        } else {
            CHECK_NEAR(norm2, 1.0, 1e-5);
        }
    }
    /* Zero texts is fine and writes nothing. */
    CHECK_INT(e->embed(e, NULL, 0, NULL, err, sizeof err), REMEM_OK);
    free(out);
    embed_destroy(e);
}

static void test_null_text_is_an_error(void) {
    embedder *e = make(0);
    if (!e) return;
    const char *texts[] = {"fine", NULL};
    float out[2 * 384];
    char err[256] = "";
    CHECK_INT(e->embed(e, texts, 2, out, err, sizeof err), REMEM_EINVAL);
    CHECK_HAS(err, "text 1");
    embed_destroy(e);
}

/* Same text -> bit-identical vector: across calls, inside a batch next to
 * other texts (no state leaks from one text to the next), and across two
 * embedder instances. */
static void test_deterministic(void) {
    embedder *a = make(0), *b = make(0);
    if (!a || !b) goto out;
    const char *t = "Melanie: I painted that lake sunrise last year! It's special to me.";
    float *v1 = vec(a, t), *v2 = vec(a, t), *v3 = vec(b, t);
    CHECK(memcmp(v1, v2, 384 * sizeof *v1) == 0);
    CHECK(memcmp(v1, v3, 384 * sizeof *v1) == 0);
    /* Big texts first, so the scratch table has grown and must be cleared. */
    char *big = malloc(20000);
    size_t len = 0;
    while (len + 40 < 20000) len += (size_t)sprintf(big + len, "word%zu painted lake ", len);
    const char *batch[] = {big, t, "another text entirely", t};
    float *out = malloc(4 * 384 * sizeof *out);
    char err[256] = "";
    CHECK_INT(a->embed(a, batch, 4, out, err, sizeof err), REMEM_OK);
    CHECK(memcmp(out + 384, v1, 384 * sizeof *v1) == 0);
    CHECK(memcmp(out + 3 * 384, v1, 384 * sizeof *v1) == 0);
    free(big);
    free(out);
    free(v1);
    free(v2);
    free(v3);
out:
    embed_destroy(a);
    embed_destroy(b);
}

/* Two threads embed through one embedder at once and get the same bits as
 * a single-threaded run. */
typedef struct thread_job {
    embedder *e;
    const char *const *texts;
    size_t n;
    float *out;
    int rc;
} thread_job;

static void *embed_in_thread(void *arg) {
    thread_job *job = arg;
    char err[256];
    for (int round = 0; round < 50 && job->rc == 0; round++)
        job->rc = job->e->embed(job->e, job->texts, job->n, job->out, err, sizeof err);
    return NULL;
}

static void test_thread_safe(void) {
    embedder *e = make(0);
    if (!e) return;
    const char *texts[] = {"Caroline joined a support group",
                           "Melanie ran a charity race for mental health",
                           "Caroline wants to adopt children", "Pottery class on Friday"};
    size_t n = 4;
    float *ref = malloc(n * 384 * sizeof *ref), *o1 = malloc(n * 384 * sizeof *o1),
          *o2 = malloc(n * 384 * sizeof *o2);
    char err[256];
    CHECK_INT(e->embed(e, texts, n, ref, err, sizeof err), REMEM_OK);
    thread_job j1 = {e, texts, n, o1, 0}, j2 = {e, texts, n, o2, 0};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, embed_in_thread, &j1);
    pthread_create(&t2, NULL, embed_in_thread, &j2);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK_INT(j1.rc, REMEM_OK);
    CHECK_INT(j2.rc, REMEM_OK);
    CHECK(memcmp(ref, o1, n * 384 * sizeof *ref) == 0);
    CHECK(memcmp(ref, o2, n * 384 * sizeof *ref) == 0);
    free(ref);
    free(o1);
    free(o2);
    embed_destroy(e);
}

/* --- the analysis behind it: embed_hash_terms */

typedef struct term_list {
    char buf[512];
    size_t len;
} term_list;

static void collect_term(const char *term, size_t len, void *ctx) {
    term_list *tl = ctx;
    CHECK(strlen(term) == len);
    if (tl->len + len + 2 < sizeof tl->buf) {
        if (tl->len) tl->buf[tl->len++] = ' ';
        memcpy(tl->buf + tl->len, term, len);
        tl->len += len;
        tl->buf[tl->len] = '\0';
    }
}

static const char *terms_of(term_list *tl, const char *text) {
    tl->len = 0;
    tl->buf[0] = '\0';
    embed_hash_terms(text, collect_term, tl);
    return tl->buf;
}

static void test_terms(void) {
    term_list tl;
    CHECK_STR(terms_of(&tl, "Painting painted PAINTS paint"), "paint paint paint paint");
    CHECK_STR(terms_of(&tl, "stories story studied studying happily happy"),
              "story story study study happy happy");
    CHECK_STR(terms_of(&tl, "running runs ran"), "run run ran");
    CHECK_STR(terms_of(&tl, "making makes make boxes box glasses glass"),
              "mak mak mak box box glass glass");
    /* Short words keep their endings; "need"/"needed"/"needs" still meet. */
    CHECK_STR(terms_of(&tl, "sing bed need needed needs"), "sing bed need need need");
    /* Stopwords, clitics (straight and curly apostrophes), digits kept. */
    CHECK_STR(terms_of(&tl, "When did Caroline's friend go to the group?"),
              "carolin friend go group");
    CHECK_STR(terms_of(&tl, "Caroline\xe2\x80\x99s friend"), "carolin friend");
    CHECK_STR(terms_of(&tl, "I'm sure you'll love it, don't worry"), "sur lov worry");
    CHECK_STR(terms_of(&tl, "On 7 May 2023 at 3pm"), "7 may 2023 3pm");
    /* Unicode: lowercased beyond ASCII; dashes and quotes separate words. */
    CHECK_STR(terms_of(&tl, "CAFÉ Café work\xe2\x80\x94life \xe2\x80\x9cquoted\xe2\x80\x9d"),
              "café café work lif quot");
    CHECK_INT(embed_hash_terms("the a an of", NULL, NULL), 0);
    CHECK_INT(embed_hash_terms("red green blue", NULL, NULL), 3);
    CHECK_INT(embed_hash_terms(NULL, NULL, NULL), 0);
}

/* --- does it match what it should? */

static void test_morphology_and_typos(void) {
    embedder *e = make(0);
    if (!e) return;
    /* Same stem: identical vectors. */
    CHECK_NEAR(cosine_of(e, "painting", "painted"), 1.0, 1e-5);
    /* Typos and derived words meet through character n-grams ... */
    double typo = cosine_of(e, "education", "educaton");
    double derived = cosine_of(e, "supportive", "support");
    double unrelated = cosine_of(e, "education", "volcano");
    fprintf(stderr, "  cos: typo %.3f derived %.3f unrelated %.3f\n", typo, derived, unrelated);
    /* A lone word is the hardest case: its n-grams weigh 0.6 against the
     * word's 1, so a shared half of them gives ~0.15. */
    CHECK(typo > fabs(unrelated) + 0.1);
    CHECK(derived > fabs(unrelated) + 0.1);
    CHECK(fabs(unrelated) < 0.1);
    /* ... but numbers do not: 2022 and 2023 are different years. */
    CHECK(fabs(cosine_of(e, "2022", "2023")) < 0.1);
    embed_destroy(e);
}

/* Memories and questions in the style of a long chat (LoCoMo); question i is
 * answered by memory i. */
static const char *const MEMORIES[] = {
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: I painted that lake sunrise last year! It's special to me.",
    "Caroline: I'm researching adoption agencies, I want to give kids a loving home.",
    "Melanie: We went camping at the beach with the kids last weekend.",
    "Caroline: I'm keen on counseling, mental health work is what I want to pursue.",
    "Melanie: I ran a charity race for mental health on Saturday.",
    "Caroline: My grandma gave me this necklace; it reminds me of Sweden.",
    "Melanie: I signed up for a pottery class, making bowls is so calming.",
    "Caroline: I gave a talk at the school about my transition journey.",
    "Melanie: My daughter's birthday party had a unicorn cake.",
    "Caroline: The hiking trail near the waterfall was beautiful this morning.",
    "Melanie: I've been reading a book about playing the violin.",
};
static const char *const QUESTIONS[] = {
    "When did Caroline go to the LGBTQ support group?",
    "When did Melanie paint a sunrise?",
    "What did Caroline research?",
    "Where did Melanie camp with her kids?",
    "What career is Caroline pursuing in counselling?",
    "What race did Melanie run?",
    "What does Caroline's necklace remind her of?",
    "What class did Melanie sign up for?",
    "Where did Caroline give a talk about her transition?",
    "What cake was at Melanie's daughter's birthday?",
    "Where did Caroline hike?",
    "What book is Melanie reading?",
};
enum { NPAIRS = sizeof MEMORIES / sizeof *MEMORIES };

typedef struct ranking_stats {
    int top1;          /* questions whose own memory ranks first */
    double mean_match; /* mean cosine with its own memory */
    double mean_other; /* mean cosine with the others */
} ranking_stats;

static ranking_stats rank_pairs(embedder *e) {
    int dim = e ? e->dim : 384;
    float *m = malloc(NPAIRS * (size_t)dim * sizeof *m);
    float *q = malloc(NPAIRS * (size_t)dim * sizeof *q);
    char err[256];
    if (e) {
        CHECK_INT(e->embed(e, MEMORIES, NPAIRS, m, err, sizeof err), REMEM_OK);
        CHECK_INT(e->embed(e, QUESTIONS, NPAIRS, q, err, sizeof err), REMEM_OK);
    } else {
        for (int i = 0; i < NPAIRS; i++) {
            naive_embed(MEMORIES[i], m + i * dim, dim);
            naive_embed(QUESTIONS[i], q + i * dim, dim);
        }
    }
    ranking_stats st = {0};
    for (int i = 0; i < NPAIRS; i++) {
        double own = dot(q + i * dim, m + i * dim, dim), best_other = -2;
        for (int j = 0; j < NPAIRS; j++) {
            if (j == i) continue;
            double c = dot(q + i * dim, m + j * dim, dim);
            if (c > best_other) best_other = c;
            st.mean_other += c / (NPAIRS * (NPAIRS - 1));
        }
        st.mean_match += own / NPAIRS;
        st.top1 += own > best_other;
    }
    free(m);
    free(q);
    return st;
}

static void test_paraphrases_beat_unrelated(void) {
    embedder *e = make(0);
    if (!e) return;
    ranking_stats hash = rank_pairs(e), naive = rank_pairs(NULL);
    fprintf(stderr, "  hash:  top1 %d/%d, cos own %.3f others %.3f\n", hash.top1, NPAIRS,
            hash.mean_match, hash.mean_other);
    fprintf(stderr, "  naive: top1 %d/%d, cos own %.3f others %.3f\n", naive.top1, NPAIRS,
            naive.mean_match, naive.mean_other);
    CHECK(hash.top1 >= NPAIRS - 1);
    CHECK(hash.top1 > naive.top1);
    CHECK(hash.mean_match > 3 * hash.mean_other + 0.1);
    CHECK(hash.mean_match - hash.mean_other > naive.mean_match - naive.mean_other);
    embed_destroy(e);
}

/* --- hostile input */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void test_any_bytes_are_safe(void) {
    embedder *e = make(0);
    if (!e) return;
    char text[300];
    float v[384];
    char err[256];
    int nonzero = 0;
    for (int round = 0; round < 3000; round++) {
        size_t len = next_random() % (sizeof text - 1);
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)(next_random() & 0xff);
            /* Lean on the interesting bytes: lead and continuation bytes,
             * apostrophes, letters. */
            if (round % 3 == 1) c = (unsigned char)(0x80 | (c & 0x7f));
            if (round % 3 == 2 && (c & 7) == 0) c = '\'';
            text[i] = (char)(c ? c : 'a');
        }
        text[len] = '\0';
        const char *t = text;
        CHECK_INT(e->embed(e, &t, 1, v, err, sizeof err), REMEM_OK);
        double n2 = dot(v, v, 384);
        CHECK(n2 == 0 || fabs(n2 - 1) < 1e-4);
        nonzero += n2 != 0;
    }
    CHECK(nonzero > 2500); /* invalid bytes count as letters: not dropped */
    /* Truncated sequences at the very end, and a lone lead byte. */
    const char *edges[] = {"abc\xe2", "abc\xe2\x82", "\xf0\x9f\x98", "\xc3", "\xff"};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
        CHECK_INT(e->embed(e, &edges[i], 1, v, err, sizeof err), REMEM_OK);
        CHECK_NEAR(dot(v, v, 384), 1.0, 1e-5);
    }
    /* One enormous word and a long text. */
    size_t big = 1 << 20;
    char *huge = malloc(big + 1);
    memset(huge, 'q', big);
    huge[big] = '\0';
    const char *h = huge;
    CHECK_INT(e->embed(e, &h, 1, v, err, sizeof err), REMEM_OK);
    CHECK_NEAR(dot(v, v, 384), 1.0, 1e-5);
    for (size_t i = 0; i < big; i++) huge[i] = (char)("abcdefgh ijk\xc3\xa9"[next_random() % 14]);
    CHECK_INT(e->embed(e, &h, 1, v, err, sizeof err), REMEM_OK);
    CHECK_NEAR(dot(v, v, 384), 1.0, 1e-5);
    free(huge);
    embed_destroy(e);
}

/* Signed hashing spreads a text over many buckets with both signs. */
static void test_buckets_and_signs_spread(void) {
    embedder *e = make(0);
    if (!e) return;
    char text[4000];
    size_t len = 0;
    for (int i = 0; i < 150; i++) len += (size_t)sprintf(text + len, "w%dx%c ", i, 'a' + i % 26);
    float *v = vec(e, text);
    int pos = 0, neg = 0;
    for (int i = 0; i < 384; i++) {
        pos += v[i] > 0;
        neg += v[i] < 0;
    }
    CHECK(pos > 60);
    CHECK(neg > 60);
    free(v);
    embed_destroy(e);
}

/* ---- the vectors themselves, pinned ----
 * A stored vector stays valid only while the same text gives the same bits
 * (the model id "hash-v1-384" promises it): a speed-up of the analyser or
 * the embedder that moves one bit must fail here. The checksums below were
 * computed by the code of 799127d; they are FNV-1a over the float bits of
 * each vector, and over the analyser's terms (text, flags) of each text. */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

typedef struct term_sum {
    uint64_t h;
} term_sum;

static void sum_term(const char *term, size_t len, int has_digit, int sentence_start, void *ctx) {
    term_sum *t = ctx;
    unsigned char flags = (unsigned char)(has_digit * 2 + sentence_start);
    t->h = fnv(t->h, term, len + 1); /* with its NUL: "ab","c" != "a","bc" */
    t->h = fnv(t->h, &flags, 1);
}

/* Texts made of every stopword, words just beside them ("thes", "ours1",
 * "yourselve"), clitics, digits, Unicode, repeats and long words, drawn
 * from a fixed generator, so that each comparison and branch of the
 * analyser and the embedder is taken. */
static const char *const PIN_WORDS[] = {
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "aren", "arent", "as", "at", "be", "because", "been", "before", "being", "below",
    "between", "both", "but", "by", "can", "cant", "could", "couldnt", "did", "didnt", "do",
    "does", "doesnt", "doing", "dont", "down", "during", "each", "even", "ever", "few", "for",
    "from", "further", "had", "hadnt", "has", "hasnt", "have", "havent", "having", "he", "her",
    "here", "hers", "herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is",
    "isnt", "it", "its", "itself", "just", "me", "more", "most", "much", "my", "myself", "no",
    "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "our", "ours",
    "ourselves", "out", "over", "own", "same", "shall", "she", "should", "shouldnt", "so", "some",
    "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there",
    "these", "they", "this", "those", "through", "to", "too", "under", "until", "up", "us",
    "very", "was", "wasnt", "we", "were", "werent", "what", "when", "where", "which", "while",
    "who", "whom", "why", "will", "with", "wont", "would", "wouldnt", "you", "your", "yours",
    "yourself", "yourselves", "thes", "ours1", "yourselve", "yourselvess", "whos", "b", "aa",
    "zz", "abouts", "The", "YOU", "Don't", "I'm", "Caroline's", "we'll", "they've", "you're",
    "it\xe2\x80\x99s", "o'clock", "2022", "2023-05-08", "v2", "caf\xc3\xa9", "na\xc3\xafve",
    "\xd0\x9c\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0", "\xe6\x9d\xb1\xe4\xba\xac",
    "\xf0\x9f\x98\x80", "painting", "painted", "paints", "running", "agreed", "studies",
    "happily", "boxes", "support", "supportive", "educaton", "education", "LGBTQ", "group",
    "yesterday", "sunrise", "lake", "pottery", "camping", "kids", "!", ".", "?", ";", ",", "\n",
    "'", "\xff", "supercalifragilisticexpialidocious",
    "pneumonoultramicroscopicsilicovolcanoconiosispneumonoultramicroscopicsilicovolcanoconiosis"
    "pneumonoultramicroscopicsilicovolcanoconiosis",
};

static uint64_t pin_state;
static uint64_t pin_next(void) {
    pin_state = pin_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return pin_state >> 33;
}

enum { PIN_TEXTS = 600 };

/* Text i of the pinned set, into buf. */
static void pin_text(int i, char *buf, size_t cap) {
    size_t len = 0, words = 1 + (size_t)(i % 40);
    buf[0] = '\0';
    for (size_t w = 0; w < words && len + 200 < cap; w++) {
        const char *word = PIN_WORDS[pin_next() % (sizeof PIN_WORDS / sizeof *PIN_WORDS)];
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", word, pin_next() % 5 ? " " : "");
    }
}

static void test_vectors_pinned(void) {
    embedder *e = make(0);
    if (!e) return;
    static char buf[PIN_TEXTS][1024];
    const char *texts[PIN_TEXTS];
    pin_state = 19;
    for (int i = 0; i < PIN_TEXTS; i++) pin_text(i, buf[i], sizeof buf[i]), texts[i] = buf[i];
    float *out = malloc((size_t)PIN_TEXTS * 384 * sizeof *out);
    char err[256];
    CHECK_INT(e->embed(e, texts, PIN_TEXTS, out, err, sizeof err), REMEM_OK);
    uint64_t vh = 0xcbf29ce484222325ULL, first = 0;
    term_sum terms = {0xcbf29ce484222325ULL}, snow = {0xcbf29ce484222325ULL};
    text_stemmer *st = text_stemmer_new(); /* the lexical lane's stemmer */
    CHECK(st != NULL);
    for (int i = 0; i < PIN_TEXTS; i++) {
        vh = fnv(vh, out + (size_t)i * 384, 384 * sizeof *out);
        if (i == 0) first = vh;
        text_analyse(texts[i], sum_term, &terms);
        if (st) text_analyse_with(texts[i], st, sum_term, &snow);
    }
    text_stemmer_free(st);
    /* One text alone, as a failure is easier to read with it. */
    const char *one = "Melanie: I painted that lake sunrise last year! It's special to me.";
    float v[384];
    CHECK_INT(e->embed(e, &one, 1, v, err, sizeof err), REMEM_OK);
    uint64_t oh = fnv(0xcbf29ce484222325ULL, v, sizeof v);
    fprintf(stderr,
            "  pinned: one %016llx, first %016llx, all %016llx, terms %016llx, snowball %016llx\n",
            (unsigned long long)oh, (unsigned long long)first, (unsigned long long)vh,
            (unsigned long long)terms.h, (unsigned long long)snow.h);
    CHECK(oh == PIN_ONE);
    CHECK(first == PIN_FIRST);
    CHECK(vh == PIN_ALL);
    CHECK(terms.h == PIN_TERMS);
    CHECK(snow.h == PIN_SNOWBALL);
    free(out);
    embed_destroy(e);
}

static void test_throughput(void) {
    embedder *e = make(0);
    if (!e) return;
    enum { N = 2000 };
    static char store[N][128];
    const char *texts[N];
    const char *words[] = {"Caroline",  "went", "to",      "the",     "support", "group",
                           "yesterday", "and",  "painted", "a",       "lake",    "sunrise",
                           "with",      "her",  "kids",    "camping", "beach",   "pottery"};
    for (int i = 0; i < N; i++) {
        size_t len = 0;
        while (len < 95) {
            const char *w = words[next_random() % (sizeof words / sizeof *words)];
            len += (size_t)snprintf(store[i] + len, sizeof store[i] - len, "%s ", w);
        }
        texts[i] = store[i];
    }
    float *out = malloc((size_t)N * 384 * sizeof *out);
    char err[256];
    struct timespec t0, t1;
    int rounds = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        CHECK_INT(e->embed(e, texts, N, out, err, sizeof err), REMEM_OK);
        rounds++;
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9 < 0.5);
    double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    double rate = rounds * (double)N / secs;
    fprintf(stderr, "  hash embedder: %.0f texts/s (~100-char texts, dim 384)\n", rate);
    CHECK(rate > 1000); /* even under sanitizers; a failure means a blow-up */
    free(out);
    embed_destroy(e);
}

int main(int argc, char **argv) {
    TEST_INIT(argc, argv);
    RUN(test_create_and_model_id);
    RUN(test_bad_dim);
    RUN(test_dim_option_writes_dim_floats);
    RUN(test_unit_length_and_zero_vector);
    RUN(test_null_text_is_an_error);
    RUN(test_deterministic);
    RUN(test_thread_safe);
    RUN(test_terms);
    RUN(test_morphology_and_typos);
    RUN(test_paraphrases_beat_unrelated);
    RUN(test_any_bytes_are_safe);
    RUN(test_buckets_and_signs_spread);
    RUN(test_vectors_pinned);
    RUN(test_throughput);
    return TEST_EXIT();
}
