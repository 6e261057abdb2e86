/*
 * extractive.h: remem's deterministic stand-ins for what an LLM would
 * write, used when no LLM is configured (and by maintenance's pruning
 * clusters, seed 003). They only ever select what was written, by the
 * vectors of the texts: they never invent a sentence.
 *
 *   extractive_cluster   the dominant cluster of a set of vectors and its
 *                        most central member (reflection's fallback:
 *                        the theme most recent memories share);
 *   extractive_summary   the most central sentences of some texts, without
 *                        repetition (summaries' fallback).
 *
 * Both are pure over their inputs except extractive_summary, which embeds
 * the sentences with the handle's embedder.
 */
#ifndef REMEM_LIFECYCLE_EXTRACTIVE_H
#define REMEM_LIFECYCLE_EXTRACTIVE_H

#include <stddef.h>

#include "remem.h"

/* The dominant cluster of n unit vectors of dimension dim (row-major in
 * vecs): every vector's neighbours are those with cosine >= min_sim; the
 * vector with the most neighbours (ties: the later one, i.e. the more
 * recent when the rows are in written order) and its neighbours form the
 * cluster. members (n slots) receives the cluster's row numbers in
 * increasing order, *n_members their count (1 when no two vectors are
 * that similar), *central the member with the highest mean cosine to the
 * other members (ties: the later one). n = 0 gives *n_members = 0.
 * Returns 0, or -1 when out of memory. */
int extractive_cluster(const float *vecs, size_t n, int dim, double min_sim, size_t *members,
                       size_t *n_members, size_t *central);

/* An extractive summary of texts[0..n): the texts are split into
 * sentences (at '.', '!', '?' or a newline followed by space or the end),
 * the sentences are embedded with db's embedder, and the ones closest to
 * the centroid of all of them are kept, at most max_sentences, skipping a
 * sentence whose normalised text was already kept or whose cosine to a
 * kept one is >= 0.95 (no repetition). They are joined with a space, in
 * the order of their closeness. *out is malloc'd.
 * Returns REMEM_OK; REMEM_EINVAL (no sentence at all); REMEM_EEMBED (the
 * embedder failed; remem_errmsg(db) says why); REMEM_ENOMEM. */
int extractive_summary(remem *db, const char *const *texts, size_t n, size_t max_sentences,
                       char **out);

#endif
