/*
 * prompt.h: rendering recalled memories into a block for an LLM's prompt.
 * Every format is one row of a table of templates (prompt.c), so a new
 * format (seed 000's few-shot block, say) is one new row and no new code
 * path. The "context" operation (src/lifecycle/context.c) recalls and
 * hands the hits here.
 *
 * A format has a header, an item template for ordinary memories, and a
 * reflection template; when split_reflections is set, reflections come
 * after the other memories, each in its own block (seed 004's layout),
 * otherwise every memory uses the item template in rank order. Templates
 * use these placeholders:
 *   {text}      the memory's text; in a reflection template, a text of
 *               several lines keeps the template's indent on each line
 *   {datetime}  "November 2, 2025 at 02:30 PM"   (UTC + the item's offset)
 *   {date}      "November 3, 2025"               (UTC + the item's offset)
 *   {iso}       "2025-11-02T14:30:00.000Z"
 *   {kind} {tier} {id}
 *   {score}     the recall score, 3 decimals
 * An empty list renders as "" (no header): an agent with no memories sees
 * no block at all.
 */
#ifndef REMEM_PROMPT_H
#define REMEM_PROMPT_H

#include <stddef.h>
#include <stdint.h>

typedef struct prompt_item {
    const char *id, *text, *kind, *tier;
    int64_t created_at; /* ms since the epoch */
    double score;
    int utc_offset_s; /* the configured zone's offset at created_at (0: UTC) */
} prompt_item;

typedef struct prompt_format {
    const char *name;
    const char *description;
    const char *header;     /* once, before everything */
    const char *group_open; /* before the first ordinary item */
    const char *item;
    const char *reflection; /* used when split_reflections */
    int split_reflections;
} prompt_format;

/* The formats, in a fixed order; *n their count. */
const prompt_format *prompt_formats(size_t *n);
/* The format called name, or NULL. */
const prompt_format *prompt_find(const char *name);
/* The block for items[0..n) (in rank order), malloc'd; NULL when out of
 * memory. */
char *prompt_render(const prompt_format *f, const prompt_item *items, size_t n);

#endif
