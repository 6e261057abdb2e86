/*
 * lexical.h: remem's own in-memory inverted index, one per namespace, and
 * BM25 top-k over it with pruning (lexical.c explains how and why).
 *
 * Documents are dense ids 0..lex_count()-1, the same numbers as the rows of
 * the engine's per-namespace cache: a new document is appended at the end,
 * an update replaces a document's terms in place, and a removal moves the
 * last document into the hole (lex_swap_remove, as flat_swap_remove does
 * for vectors), so the caller mirrors every move in its own per-row arrays.
 * A document is given as its analysed terms, repeats included: the index
 * counts term frequencies itself. Terms are NUL-terminated byte strings
 * compared byte for byte; the analyser (lower-casing, stemming) is the
 * caller's, and the same one must serve documents and queries.
 *
 * THE SCORE. For a query, each distinct known term t of it counts once
 * (a repeated query term counts once), and a document d scores
 *
 *   sum over t in d of  idf(t) * (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * dl / avgdl))
 *   idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))
 *
 * with k1 = 1.2, b = 0.4, tf the term's count in d (counted up to
 * LEX_MAX_TF; BM25 has long saturated by then), dl the number of terms of d
 * (repeats included), N the number of documents, avgdl their mean length
 * and df the number of documents holding t: the BM25 of SQLite FTS5 (whose
 * b is 0.75: memories are short, and a long one is not less about each of
 * its words; b = 0.4, Anserini's default, measured better on LoCoMo, see
 * docs/retrieval.md), here
 * positive and larger for better matches. The double is computed by exactly
 * that expression and summed over the query's terms in the order they first
 * appear in the query, so an independent scorer written the same way gets
 * the same bits. Hits come best first; equal scores come lower id first.
 *
 * QUERY LENGTH. Terms the index does not know are dropped; of the rest, at
 * most LEX_MAX_QUERY_TERMS distinct terms are kept: the rarest (lowest df;
 * among equal df, the earliest in the query). Common terms add little to
 * BM25 and most of the cost, so a pasted page costs what its 64 most
 * telling words cost.
 *
 * Threads: an index is not locked. Searches only read it (any number may
 * run at once); changes need the caller's exclusive access.
 */
#ifndef REMEM_LEXICAL_H
#define REMEM_LEXICAL_H

#include <stddef.h>
#include <stdint.h>

#define LEX_K1              1.2
#define LEX_B               0.4
/* Distinct query terms kept (the rarest). */
#define LEX_MAX_QUERY_TERMS 64
/* Term frequencies are counted up to this (they are kept as uint16). */
#define LEX_MAX_TF          65535

/* Results of the changing calls. */
enum { LEX_OK = 0, LEX_ENOMEM = -1, LEX_EINVAL = -2 };

typedef struct lex_index lex_index;

typedef struct lex_hit {
    uint32_t doc;
    double score;
} lex_hit;

/* A new empty index; NULL when out of memory. lex_free accepts NULL. */
lex_index *lex_new(void);
void lex_free(lex_index *ix);

/* Documents (N). */
size_t lex_count(const lex_index *ix);
/* Sum of the documents' lengths (terms, repeats included). */
uint64_t lex_total_length(const lex_index *ix);
/* Length of document doc (0 when doc >= lex_count). */
uint32_t lex_doc_length(const lex_index *ix, uint32_t doc);
/* Documents holding term (df); 0 for an unknown term. */
uint32_t lex_df(const lex_index *ix, const char *term);
/* Postings: (term, document) pairs, i.e. the sum of df over all terms. */
size_t lex_postings(const lex_index *ix);
/* Bytes the index holds on the heap: each block at capacity, as the
 * allocator holds it (util_heap_bytes); lists that lie in a loaded
 * buffer (lex_load with borrow) are the caller's and not counted. */
size_t lex_memory_bytes(const lex_index *ix);

/* Room for docs documents in the per-document arrays; LEX_OK or
 * LEX_ENOMEM (nothing changed). Loading a namespace of known size so saves
 * the copies of growing. */
int lex_reserve(lex_index *ix, size_t docs);
/* Give back the room kept for growth in the posting lists (up to a third
 * of their bytes); for after a namespace's load. The next addition to a
 * list grows it again. */
void lex_trim(lex_index *ix);
/* Append document doc, which must be lex_count(ix) (else LEX_EINVAL), with
 * its n analysed terms (terms[i] non-NULL; copied where needed, the caller
 * keeps them). LEX_OK, LEX_EINVAL, or LEX_ENOMEM; on an error the
 * documents, postings and statistics are unchanged (the dictionary may
 * keep spellings it met, with no postings). */
int lex_add(lex_index *ix, uint32_t doc, const char *const *terms, size_t n);
/* Append count documents at once, ids first .. first + count - 1 (first
 * must be lex_count(ix)): document i has the lens[i] terms that follow
 * those of document i - 1 in terms. The same index as count lex_add
 * calls, built term by term (each posting list's tail written once per
 * call, not once per document): what loading a namespace wants, in
 * batches of a few thousand documents. Same results as lex_add; on an
 * error nothing is added. */
int lex_add_many(lex_index *ix, uint32_t first, const char *const *terms, const uint32_t *lens,
                 size_t count);
/* Replace the terms of document doc (< lex_count) by these n; same results
 * and guarantees as lex_add. */
int lex_set(lex_index *ix, uint32_t doc, const char *const *terms, size_t n);
/* Remove document doc (< lex_count, else LEX_EINVAL) by moving the last
 * document into its place (its id becomes doc). Never allocates, never
 * fails otherwise. */
int lex_swap_remove(lex_index *ix, uint32_t doc);

/* The up to k best documents for the query's n terms (analysed like the
 * documents, repeats allowed) among those allowed by allow (NULL: all;
 * else a bitmap of lex_count() bits, 64 per word, bit d set = document d
 * may be returned), best first, into out (room for k). Returns how many
 * (fewer than k when fewer documents match). Documents matching no query
 * term are never returned. Never allocates (it uses about 12 KB of
 * stack); cost grows with the postings of the query's terms that can
 * still reach the top k, not with all of them. The same hits, order and
 * score bits as lex_search_exhaustive. */
size_t lex_search(const lex_index *ix, const char *const *terms, size_t n, size_t k,
                  const uint64_t *allow, lex_hit *out);

/* What one search did; for tests and benchmarks. */
typedef struct lex_trace {
    size_t terms;    /* distinct known query terms used */
    size_t postings; /* postings of those terms (what an exhaustive scorer reads) */
    size_t scored;   /* documents whose full score was computed */
    int by_term;     /* 1: scored term at a time into the scratch (lex_search_with) */
} lex_trace;

/* lex_search, also filling *trace (may be NULL). */
size_t lex_search_traced(const lex_index *ix, const char *const *terms, size_t n, size_t k,
                         const uint64_t *allow, lex_hit *out, lex_trace *trace);

/* A searcher's own accumulator (a double per document, and the list of
 * documents it touched), kept from one search to the next so that a
 * search never pays for allocating and zeroing it. One per thread: a
 * handle of the engine keeps one. */
typedef struct lex_scratch lex_scratch;
lex_scratch *lex_scratch_new(void);
void lex_scratch_free(lex_scratch *s);
size_t lex_scratch_bytes(const lex_scratch *s);

/* Queries of at least this many distinct known terms are scored term at
 * a time by lex_search_with. Document at a time, each document visited
 * costs a look at every essential term's cursor, and with k = 50 (what
 * the engine asks) the threshold rises late, so on chat-like memories
 * the pruned walk loses as soon as a few terms share the work: on
 * memories composed of LoCoMo turns (k = 50, one thread) a 64-term
 * passage took 13.3 ms pruned and 4.0 ms term at a time at 100k, and the
 * dev questions 0.27 against 0.20 ms at 10k (even at 100k). One- and
 * two-term queries keep the pruned walk, whose block bounds skip most of
 * a common term's list. bench/README.md has the runs. */
#define LEX_BY_TERM_MIN_TERMS 3

/* lex_search choosing its method: with s (non-NULL) and at least
 * LEX_BY_TERM_MIN_TERMS distinct known terms, every posting is scored term
 * at a time into s (grown to the index's size; when that fails, the
 * pruned walk runs instead), else the pruned walk. Either way the same
 * hits, order and score bits as lex_search_exhaustive. trace may be NULL. */
size_t lex_search_with(const lex_index *ix, const char *const *terms, size_t n, size_t k,
                       const uint64_t *allow, lex_hit *out, lex_scratch *s, lex_trace *trace);

/* A query whose terms count unequally: term i's share of a score is
 * multiplied by weights[i] (> 0; a repeated term has the weight of its
 * first occurrence), e.g. 1 for the query's own words and less for
 * words added to it (the WordNet expansion). Otherwise as
 * lex_search_with (the same terms kept, the same score expression),
 * always scored term at a time into s (non-NULL). With every weight 1
 * the hits and scores are those of lex_search. Returns the number of
 * hits, or -1 when s cannot grow to the index's size or holds kept sums. */
long lex_search_weighted(const lex_index *ix, const char *const *terms, const double *weights,
                         size_t n, size_t k, const uint64_t *allow, lex_hit *out,
                         lex_scratch *s);

/* lex_search_with (weights NULL) or lex_search_weighted, scored term at
 * a time, with every touched document's sum left in s afterwards, so
 * that a caller scoring other documents for the same terms reads them
 * (lex_scratch_sums) instead of scoring them again. Until
 * lex_scratch_release, s serves no other search. Returns the number of
 * hits (the same hits, order and bits as the call it stands for), or -1
 * when it declines and keeps nothing: without weights, fewer than
 * LEX_BY_TERM_MIN_TERMS known terms (the pruned walk is faster there),
 * or s cannot grow to the index's size. */
long lex_search_kept(const lex_index *ix, const char *const *terms, const double *weights,
                     size_t n, size_t k, const uint64_t *allow, lex_hit *out, lex_scratch *s);

/* The sums lex_search_kept left in s of the m documents docs[] (in any
 * order, each < the index's lex_count), into scores[j]: for a document
 * it was allowed to score, the same bits lex_score_docs gives (0 when it
 * holds none of the terms). */
void lex_scratch_sums(const lex_scratch *s, const uint32_t *docs, size_t m, double *scores);

/* Zero what lex_search_kept left in s (NULL, or nothing kept: a no-op). */
void lex_scratch_release(lex_scratch *s);

/* The distinct terms of document doc (< lex_count, else none), at most
 * max of them, as spellings: out[i] points at lens[i] bytes (not
 * NUL-terminated) that stay valid until the index changes, and (dfs not
 * NULL) dfs[i] is the term's lex_df. Returns how many. What a caller
 * needs to follow a document's terms without analysing its text again
 * or looking each up. */
size_t lex_doc_terms(const lex_index *ix, uint32_t doc, const char **out, uint32_t *lens,
                     uint32_t *dfs, size_t max);

/* The scores of the m documents docs[] (ids >= lex_count score 0) for
 * the query's n terms, weighted as lex_search_weighted (weights NULL:
 * all 1), into scores[j]: the score lex_search would give docs[j] (0
 * when it holds none of the terms), summed in the same order, so the
 * same bits. For scoring candidates another lane found; fastest with
 * docs strictly ascending (then, for each term, the shorter of its list
 * and docs is walked and looked up in the other). Never allocates;
 * returns 0. */
int lex_score_docs(const lex_index *ix, const char *const *terms, const double *weights,
                   size_t n, const uint32_t *docs, size_t m, double *scores);

/* The plain scorer: every posting of every query term is scored (term at a
 * time, into an accumulator per document), then the top k are selected;
 * the baseline of the benchmark and what FTS5 does. Returns the number of
 * hits, or -1 when out of memory. */
long lex_search_exhaustive(const lex_index *ix, const char *const *terms, size_t n, size_t k,
                           const uint64_t *allow, lex_hit *out);

/* SAVING AND LOADING, for the engine's cache snapshots (src/engine/
 * snapshot.c). lex_save writes the whole index through write (called with
 * consecutive pieces; it returns 0, or non-zero to stop: lex_save then
 * returns that value), in the layout described in lexical.c: the
 * dictionary's spellings, each term's list and bounds, every document's
 * length and distinct terms, the postings. Nothing is analysed again on
 * loading: lex_load copies each array into its place and rebuilds only
 * the hash table of spellings and the block bounds. The bytes are this
 * build's own (native byte order and sizes): the caller checks that the
 * writer was alike, and a checksum over them; lex_load still refuses any
 * buffer whose counts, offsets, ids or order are inconsistent
 * (LEX_EINVAL, never a crash nor an index that breaks later), and
 * LEX_ENOMEM when out of memory. On success *out is a new index (lex_free
 * it) that answers every search as the saved one did. */
typedef int (*lex_write_fn)(void *ctx, const void *bytes, size_t n);
int lex_save(const lex_index *ix, lex_write_fn write, void *ctx);
/* buf must be 8-byte aligned. borrow 0: buf is only read, and may go once
 * lex_load returns. borrow 1: the posting and forward lists stay in buf,
 * which the index then also writes (an update or removal moves postings
 * in place; a list that must grow moves to memory of its own): buf must
 * stay writable and mapped until lex_free (a private writable mmap of a
 * file, say, whose pages are then copied only where written). */
int lex_load(void *buf, size_t len, int borrow, lex_index **out);

/* For tests only: multiply every term's upper bound by scale (1 is the
 * truth; below 1 the bounds are wrong and the search may miss documents).
 * Not thread-safe against running searches. */
void lex_set_bound_scale(double scale);

#endif
