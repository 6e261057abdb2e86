/*
 * filter.h: Chroma-style JSON filters over memories.
 *
 * A filter is a JSON object: {"field": value} (equality), {"field":
 * {"$op": value}} with $eq $ne $gt $gte $lt $lte $in $nin, combined with
 * {"$and": [...]}, {"$or": [...]}, {"$not": {...}}, and {"$contains": "s"}
 * on the text (case-insensitive substring). Several keys in one object mean
 * "and". A field is a core field (id, ns, kind, tier, text, importance,
 * created_at, updated_at, accessed_at, access_count, expires_at,
 * duplicate_count) or a metadata key (a plain key, or "metadata.key" to be
 * explicit; dots walk into nested objects). Time fields accept ISO 8601
 * strings or milliseconds.
 *
 * A filter is parsed once into a tree and then evaluated in memory against
 * records (filter_match); it never touches the store. Parse errors name the
 * offending part and where it is ("unknown operator $regexx at $.kind").
 *
 * THE RULES IN DETAIL (docs/filters.md is the users' version)
 *   - {"f": v} is {"f": {"$eq": v}}. An operator object may hold several
 *     operators, which must all hold: {"importance": {"$gte": 0.2,
 *     "$lt": 0.8}}. An object without a leading "$" key, or an empty one, is
 *     an error, not an equality test against an object (write {"$eq": {...}}).
 *   - $and and $or take a non-empty array of filters; $not takes one filter;
 *     $contains takes a string and may appear wherever a field may (top
 *     level, inside $and/$or/$not), not inside a field's operator object.
 *     The case folding of $contains is ASCII only; other bytes must match
 *     exactly. An empty needle matches every record.
 *   - Core fields are typed and the operand is checked at parse time: id, ns,
 *     kind, tier, text take strings; importance, access_count and
 *     duplicate_count take numbers; the *_at fields take numbers
 *     (milliseconds) or ISO 8601 strings ("2023-05-08", "2023-05-08T13:56Z",
 *     "2023-05-08T13:56:00.250+02:00"; no zone means UTC), converted to ms at
 *     parse time. Booleans and null are errors on core fields. A core string
 *     field whose record value is NULL counts as missing (see below).
 *   - Metadata keys: "metadata.k" and "k" name the same key (the prefix is how
 *     to reach a metadata key that shares a core field's name, e.g.
 *     "metadata.kind"). With dots, a top-level key spelled exactly so wins
 *     (flat metadata, as Chroma stores it); otherwise each dot steps into a
 *     nested object. The bare name "metadata" is an error.
 *   - Comparison: numbers with numbers (integers and reals alike, exactly,
 *     also beyond 2^53), strings with strings (bytewise, so ISO dates in one
 *     format order correctly), booleans only with $eq $ne $in $nin (a $gt
 *     with a boolean, null, array or object operand is a parse error). $eq
 *     and $ne are JSON equality (1 equals 1.0; arrays element by element;
 *     objects key by key); an array value is not searched, so {"tags":
 *     "x"} does not match "tags": ["x", "y"]. $in is membership of the value
 *     in the given list, by the same equality.
 *   - A metadata value of another type than the operand (a string against
 *     $gt 5) simply does not match; it is not an error.
 *   - A MISSING metadata key (or NULL metadata, or a path running through a
 *     non-object) matches $ne and $nin and nothing else: "not equal to x"
 *     holds for a memory that has no such key, as it does in SQL's
 *     "IS DISTINCT FROM" and in most users' intuition; $eq, $gt, ... and $in
 *     need a value to hold. So {"$not": {"k": {"$eq": 1}}} and {"k": {"$ne":
 *     1}} select the same memories.
 *   - Nesting is limited to FILTER_MAX_DEPTH levels of JSON objects and
 *     arrays, operands included.
 *
 * Error messages (err) read "<what is wrong> at <where>", where is a JSON
 * path into the filter ("$", "$.kind", "$.$and[1].importance.$gt") or, for
 * malformed JSON, "line L, column C". They carry no "filter: " prefix; the
 * engine adds it.
 *
 * A parsed filter is immutable: filter_match may run on one filter from
 * several threads at once. filter_match never allocates.
 */
#ifndef REMEM_FILTER_H
#define REMEM_FILTER_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* Deepest nesting of JSON objects and arrays a filter may have. */
#define FILTER_MAX_DEPTH 32

typedef struct filter filter;

/* The view of a memory a filter is evaluated against. metadata is the
 * parsed metadata object or NULL. */
typedef struct filter_record {
    const char *id, *ns, *kind, *tier, *text;
    double importance;
    int64_t created_at, updated_at, accessed_at, expires_at;
    int64_t access_count, duplicate_count;
    const json_t *metadata;
} filter_record;

/* Parse json (len bytes; need not be NUL-terminated). NULL or "" or "{}"
 * (or only white space) gives a filter that matches everything. Returns 0
 * and *out, or REMEM_EFILTER with err filled and *out = NULL (REMEM_ENOMEM
 * when memory runs out). err may be NULL; it is always NUL-terminated when
 * errcap > 0. The caller owns *out and frees it with filter_free. */
int filter_parse(const char *json, size_t len, filter **out, char *err, size_t errcap);
/* 1 if r matches f, 0 if not. f NULL matches everything. */
int filter_match(const filter *f, const filter_record *r);
/* 1 if evaluating f may read r->metadata (so callers can skip parsing it). */
int filter_uses_metadata(const filter *f);
/* 1 if f uses r->text ($contains, or a condition on the field "text"). */
int filter_uses_text(const filter *f);
/* 1 if f has a condition on the field "kind" (a caller asking for kinds by
 * name: the engine then shows its bookkeeping kinds too). */
int filter_uses_kind(const filter *f);
/* 1 if f is NULL or matches every record (the empty filter), so a caller
 * can skip evaluating it. */
int filter_matches_all(const filter *f);
void filter_free(filter *f);

#endif
