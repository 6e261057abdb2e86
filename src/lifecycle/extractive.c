/*
 * extractive.c: the dominant cluster of some vectors and the extractive
 * summary of some texts (extractive.h). Quadratic in the number of items:
 * they run over the recent memories of one namespace or the sources of one
 * summary (tens to a few hundred), never over a whole store.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "lifecycle/extractive.h"
#include "util/util.h"

static double dot(const float *a, const float *b, int dim) {
    double s = 0;
    for (int i = 0; i < dim; i++) s += (double)a[i] * b[i];
    return s;
}

int extractive_cluster(const float *vecs, size_t n, int dim, double min_sim, size_t *members,
                       size_t *n_members, size_t *central) {
    *n_members = 0;
    *central = 0;
    if (n == 0) return 0;
    size_t *deg = calloc(n, sizeof *deg);
    if (!deg) return -1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (dot(vecs + i * dim, vecs + j * dim, dim) >= min_sim) {
                deg[i]++;
                deg[j]++;
            }
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (deg[i] >= deg[best]) best = i;
    size_t m = 0;
    for (size_t j = 0; j < n; j++)
        if (j == best || dot(vecs + best * dim, vecs + j * dim, dim) >= min_sim) members[m++] = j;
    free(deg);
    *n_members = m;
    /* The most central member: the highest mean cosine to the others. */
    double top = -INFINITY;
    for (size_t a = 0; a < m; a++) {
        double s = 0;
        for (size_t b = 0; b < m; b++)
            if (a != b) s += dot(vecs + members[a] * dim, vecs + members[b] * dim, dim);
        if (s >= top) {
            top = s;
            *central = members[a];
        }
    }
    return 0;
}

/* Append the sentences of t to the list (copies, trimmed, non-empty). */
static int split_sentences(const char *t, char ***list, size_t *n, size_t *cap) {
    const char *p = t;
    while (*p) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (!*p) break;
        const char *s = p;
        while (*p) {
            char c = *p++;
            if (c == '\n') break;
            if ((c == '.' || c == '!' || c == '?') && (!*p || isspace((unsigned char)*p))) break;
        }
        size_t len = (size_t)(p - s);
        while (len && isspace((unsigned char)s[len - 1])) len--;
        if (!len) continue;
        if (*n == *cap) {
            size_t c2 = *cap ? *cap * 2 : 32;
            char **l2 = realloc(*list, c2 * sizeof *l2);
            if (!l2) return -1;
            *list = l2;
            *cap = c2;
        }
        char *d = strndup(s, len);
        if (!d) return -1;
        (*list)[(*n)++] = d;
    }
    return 0;
}

typedef struct ranked_sentence {
    size_t i;
    double score;
} ranked_sentence;

static int by_score(const void *a, const void *b) {
    const ranked_sentence *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i; /* ties: the earlier sentence */
}

int extractive_summary(remem *db, const char *const *texts, size_t n, size_t max_sentences,
                       char **out) {
    *out = NULL;
    char **sent = NULL;
    size_t ns = 0, cap = 0;
    float *vecs = NULL;
    double *centroid = NULL;
    ranked_sentence *rank = NULL;
    char **norms = NULL;
    size_t *kept = NULL;
    int rc = REMEM_OK;
    for (size_t i = 0; i < n; i++)
        if (texts[i] && split_sentences(texts[i], &sent, &ns, &cap)) {
            rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
            goto done;
        }
    if (ns == 0) {
        rc = eng_fail(db, REMEM_EINVAL, "nothing to summarise: the texts hold no sentence");
        goto done;
    }
    int dim = remem_embedder_dim(db);
    vecs = malloc(ns * (size_t)dim * sizeof *vecs);
    centroid = calloc((size_t)dim, sizeof *centroid);
    rank = malloc(ns * sizeof *rank);
    norms = calloc(ns, sizeof *norms);
    kept = malloc(ns * sizeof *kept);
    if (!vecs || !centroid || !rank || !norms || !kept) {
        rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
        goto done;
    }
    if ((rc = remem_embed(db, (const char *const *)sent, ns, vecs))) goto done;
    for (size_t i = 0; i < ns; i++)
        for (int d = 0; d < dim; d++) centroid[d] += vecs[i * dim + d];
    for (size_t i = 0; i < ns; i++) {
        double s = 0;
        for (int d = 0; d < dim; d++) s += centroid[d] * vecs[i * dim + d];
        rank[i].i = i;
        rank[i].score = s;
    }
    if (ns > 1) qsort(rank, ns, sizeof *rank, by_score);
    size_t nk = 0;
    strbuf b;
    sb_init(&b);
    for (size_t r = 0; r < ns && nk < max_sentences; r++) {
        size_t i = rank[r].i;
        norms[i] = util_normalize_text(sent[i]);
        if (!norms[i]) {
            b.oom = 1; /* a summary missing a sentence is no summary */
            break;
        }
        int repeat = !norms[i][0];
        for (size_t k = 0; k < nk && !repeat; k++)
            repeat = !strcmp(norms[kept[k]], norms[i]) ||
                     dot(vecs + i * dim, vecs + kept[k] * dim, dim) >= 0.95;
        if (repeat) continue;
        if (nk) sb_puts(&b, " ");
        sb_puts(&b, sent[i]);
        kept[nk++] = i;
    }
    *out = sb_take(&b);
    if (!*out) rc = eng_fail(db, REMEM_ENOMEM, "out of memory");
done:
    for (size_t i = 0; i < ns; i++) {
        free(sent[i]);
        if (norms) free(norms[i]);
    }
    free(sent);
    free(vecs);
    free(centroid);
    free(rank);
    free(norms);
    free(kept);
    return rc;
}
