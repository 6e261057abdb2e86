/*
 * row.c: the store_row helpers every backend shares: a row owns its
 * strings and vector, whatever store filled it, so clearing and copying
 * one is the same code for all of them.
 */
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

void store_row_clear(store_row *r) {
    if (!r) return;
    free((char *)r->m.ns);
    free((char *)r->m.id);
    free((char *)r->m.kind);
    free((char *)r->m.tier);
    free((char *)r->m.text);
    free((char *)r->m.superseded_by);
    free((char *)r->m.metadata);
    free((char *)r->m.links);
    free((char *)r->m.model);
    free(r->vec);
    memset(r, 0, sizeof *r);
}

static int dup_into(const char **dst, const char *src) {
    *dst = NULL;
    if (!src) return 0;
    return (*dst = strdup(src)) ? 0 : -1;
}

int store_row_copy(store_row *dst, const store_row *src) {
    memset(dst, 0, sizeof *dst);
    dst->rowid = src->rowid;
    dst->m = src->m;
    const remem_memory *m = &src->m;
    remem_memory *d = &dst->m;
    d->vector = NULL;
    int bad = dup_into(&d->ns, m->ns) | dup_into(&d->id, m->id) | dup_into(&d->kind, m->kind) |
              dup_into(&d->tier, m->tier) | dup_into(&d->text, m->text) |
              dup_into(&d->superseded_by, m->superseded_by) | dup_into(&d->metadata, m->metadata) |
              dup_into(&d->links, m->links) | dup_into(&d->model, m->model);
    if (!bad && m->vector && m->dim > 0) {
        dst->vec = malloc((size_t)m->dim * sizeof *dst->vec);
        if (dst->vec) {
            memcpy(dst->vec, m->vector, (size_t)m->dim * sizeof *dst->vec);
            d->vector = dst->vec;
        } else {
            bad = 1;
        }
    }
    if (bad) {
        store_row_clear(dst);
        return -1;
    }
    return 0;
}
