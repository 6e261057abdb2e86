/*
 * qterms.c: what recall's lexical and entity lanes look for, made from a
 * query's text: its terms as the one analyser makes them for memories
 * (cache_terms), then, when the profile expands queries and WordNet's
 * files are there, the terms of the words WordNet relates to the query's
 * words, each with its weight (the query's own 1, the added ones
 * w_expand, so they count less); or the query's entity keys
 * (src/text/entities.h), the same function the entity index ran over the
 * memories.
 *
 * The expansion (src/text/wordnet.h): for each of the query's first
 * EXPAND_WORDS words without a digit, as written (text_words: unstemmed,
 * stopwords dropped), the synonyms, hypernyms and first hyponyms of its
 * most frequent sense in each part of speech, at most EXPAND_PER_WORD of
 * them, each analysed as a memory's text is. A query of w words thus
 * gains at most 6w terms and never depends on the namespace, so the
 * same query expands the same way everywhere.
 */
#include <stdlib.h>

#include "engine/engine.h"
#include "text/analyse.h"
#include "text/wordnet.h"

enum { EXPAND_PER_WORD = 6, EXPAND_WORDS = 16, EXPAND_SENSES = 1, EXPAND_HYPONYMS = 3 };
enum { ENTITY_KEYS = 16 };

typedef struct expand_ctx {
    remem *db;
    qterms *q;
    size_t words;
    int oom;
} expand_ctx;

static void expand_word(const char *word, size_t len, unsigned flags, void *vctx) {
    expand_ctx *e = vctx;
    if ((flags & TEXT_WORD_DIGIT) || e->words >= EXPAND_WORDS || e->oom) return;
    e->words++;
    wn_word rel[EXPAND_PER_WORD];
    size_t nr = wn_related(word, len, EXPAND_SENSES, EXPAND_HYPONYMS, rel, EXPAND_PER_WORD);
    for (size_t i = 0; i < nr; i++)
        if (cache_terms(e->db->stem, rel[i].word, &e->q->buf, &e->q->offs, &e->q->n,
                        &e->q->cap) < 0)
            e->oom = 1;
}

/* Point q->v and q->w at the terms gathered; own: how many are the
 * query's own (weight 1), the rest weigh w_extra. */
static int finish(qterms *q, double w_extra) {
    if (q->n == 0) return 0;
    if (!(q->v = malloc(q->n * sizeof *q->v)) || !(q->w = malloc(q->n * sizeof *q->w))) return -1;
    for (size_t i = 0; i < q->n; i++) {
        q->v[i] = q->buf.data + q->offs[i];
        q->w[i] = i < q->own ? 1.0 : w_extra;
    }
    return 0;
}

int qterms_lexical(remem *db, const char *text, double w_expand, qterms *q) {
    if (cache_terms(db->stem, text, &q->buf, &q->offs, &q->n, &q->cap) < 0) return -1;
    q->own = q->n;
    if (q->n && w_expand > 0 && wn_available()) {
        expand_ctx e = {db, q, 0, 0};
        text_words(text, expand_word, &e);
        if (e.oom) return -1;
    }
    return finish(q, w_expand);
}

int qterms_entities(const char *text, qterms *q) {
    if (cache_entity_keys(text, &q->buf, &q->offs, &q->n, &q->cap) < 0) return -1;
    /* A long query (a pasted page) keeps its first ENTITY_KEYS keys: the
     * lane's cost grows with them, its use does not. */
    if (q->n > ENTITY_KEYS) q->n = ENTITY_KEYS;
    q->own = q->n;
    return finish(q, 1);
}

void qterms_free(qterms *q) {
    if (!q) return;
    sb_free(&q->buf);
    free(q->offs);
    free(q->v);
    free(q->w);
}
