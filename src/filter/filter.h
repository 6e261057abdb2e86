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
 */
#ifndef REMEM_FILTER_H
#define REMEM_FILTER_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

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
 * gives a filter that matches everything. Returns 0 and *out, or
 * REMEM_EFILTER with err filled and *out = NULL. */
int filter_parse(const char *json, size_t len, filter **out, char *err,
                 size_t errcap);
/* 1 if r matches f, 0 if not. f NULL matches everything. */
int filter_match(const filter *f, const filter_record *r);
/* 1 if evaluating f may read r->metadata (so callers can skip parsing it). */
int filter_uses_metadata(const filter *f);
/* 1 if f uses r->text ($contains). */
int filter_uses_text(const filter *f);
void filter_free(filter *f);

#endif
