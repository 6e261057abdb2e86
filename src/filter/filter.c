/*
 * filter.c: Chroma-style JSON filters, parsed once into a tree of nodes and
 * then evaluated against memory records (the rules are in filter.h).
 *
 * Why it is shaped so: filter_match runs once per row of a vector scan, up to
 * a million times per query, so filter_parse does every piece of work that
 * does not depend on the record. Field names become an enum, numbers and ISO
 * dates become exact numbers, $in lists of core strings are sorted for a
 * binary search, $contains needles are lowercased, metadata paths are split
 * at their dots, and the children of $and/$or are ordered cheapest first.
 * filter_match is then a short recursive walk that never allocates. The
 * parsed JSON document lives as long as the filter, because metadata
 * operands and string operands point into it.
 *
 * The tricky parts: numbers compare exactly across int64 and double (a
 * count of 2^53 + 1 is not equal to the real 2^53); a missing metadata key
 * matches $ne and $nin only; and every parse error carries a JSON-path
 * location, built in a buffer while the parser descends.
 */
#include "filter/filter.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remem.h"
#include "util/time.h"

/* ------------------------------------------------------------------ */
/* The tree.                                                           */
/* ------------------------------------------------------------------ */

typedef enum {
    FIELD_ID,
    FIELD_NS,
    FIELD_KIND,
    FIELD_TIER,
    FIELD_TEXT,
    FIELD_IMPORTANCE,
    FIELD_CREATED_AT,
    FIELD_UPDATED_AT,
    FIELD_ACCESSED_AT,
    FIELD_EXPIRES_AT,
    FIELD_ACCESS_COUNT,
    FIELD_DUPLICATE_COUNT,
    FIELD_METADATA
} field_id;

/* What a core field's operand must be. */
typedef enum { TYPE_STRING, TYPE_NUMBER, TYPE_TIME, TYPE_ANY } field_type;

static const struct {
    const char *name;
    field_id id;
    field_type type;
} core_fields[] = {
    {"id", FIELD_ID, TYPE_STRING},
    {"ns", FIELD_NS, TYPE_STRING},
    {"kind", FIELD_KIND, TYPE_STRING},
    {"tier", FIELD_TIER, TYPE_STRING},
    {"text", FIELD_TEXT, TYPE_STRING},
    {"importance", FIELD_IMPORTANCE, TYPE_NUMBER},
    {"created_at", FIELD_CREATED_AT, TYPE_TIME},
    {"updated_at", FIELD_UPDATED_AT, TYPE_TIME},
    {"accessed_at", FIELD_ACCESSED_AT, TYPE_TIME},
    {"expires_at", FIELD_EXPIRES_AT, TYPE_TIME},
    {"access_count", FIELD_ACCESS_COUNT, TYPE_NUMBER},
    {"duplicate_count", FIELD_DUPLICATE_COUNT, TYPE_NUMBER},
};

typedef enum { OP_EQ, OP_NE, OP_GT, OP_GTE, OP_LT, OP_LTE, OP_IN, OP_NIN } op_kind;

static const struct {
    const char *name;
    op_kind op;
} operators[] = {
    {"$eq", OP_EQ}, {"$ne", OP_NE},   {"$gt", OP_GT}, {"$gte", OP_GTE},
    {"$lt", OP_LT}, {"$lte", OP_LTE}, {"$in", OP_IN}, {"$nin", OP_NIN},
};

/* An exact number: JSON integers stay int64, reals stay double. */
typedef struct {
    int is_int;
    int64_t i;
    double d;
} number;

typedef enum {
    NODE_AND,
    NODE_OR,
    NODE_NOT,
    NODE_CONTAINS,    /* case-folded substring of the text */
    NODE_CORE_STRING, /* a condition on id, ns, kind, tier or text */
    NODE_CORE_NUMBER, /* a condition on importance, a time or a count */
    NODE_METADATA     /* a condition on a metadata value */
} node_kind;

typedef struct node node;
struct node {
    node_kind kind;
    op_kind op;
    field_id field;
    union {
        struct {
            node **kids;
            size_t n;
        } list;    /* AND, OR */
        node *kid; /* NOT */
        struct {
            char *needle; /* lowercased copy */
            size_t len;
        } contains;
        struct {
            const char *value; /* single operand, into the document */
            const char **set;  /* $in/$nin: sorted, into the document */
            size_t n;
        } str;
        struct {
            number value;
            number *set; /* $in/$nin */
            size_t n;
        } num;
        struct {
            const char *whole; /* the key as given, minus "metadata." */
            char *segs_buf;    /* the key split at dots, NULs in between */
            const char **segs; /* NULL when the key has no dot */
            size_t nsegs;
            const json_t *operand; /* into the document */
        } meta;
    } u;
};

struct filter {
    json_t *doc; /* owns every string and operand the nodes point into */
    node *root;  /* NULL: matches everything */
    int uses_metadata, uses_text, uses_kind;
};

static void node_free(node *n) {
    if (!n) return;
    switch (n->kind) {
    case NODE_AND:
    case NODE_OR:
        for (size_t i = 0; i < n->u.list.n; i++) node_free(n->u.list.kids[i]);
        free(n->u.list.kids);
        break;
    case NODE_NOT: node_free(n->u.kid); break;
    case NODE_CONTAINS: free(n->u.contains.needle); break;
    case NODE_CORE_STRING: free(n->u.str.set); break;
    case NODE_CORE_NUMBER: free(n->u.num.set); break;
    case NODE_METADATA:
        free(n->u.meta.segs_buf);
        free(n->u.meta.segs);
        break;
    }
    free(n);
}

/* ------------------------------------------------------------------ */
/* Exact comparisons.                                                  */
/* ------------------------------------------------------------------ */

/* Three-way results; UNORDERED when a NaN is involved. */
#define CMP_UNORDERED 2

static int cmp_int_real(int64_t i, double d) {
    if (isnan(d)) return CMP_UNORDERED;
    /* Outside [-2^63, 2^63) d is beyond every int64. */
    if (d >= 9223372036854775808.0) return -1;
    if (d < -9223372036854775808.0) return 1;
    int64_t t = (int64_t)d; /* truncation is exact in a double */
    if (i != t) return i < t ? -1 : 1;
    double whole = (double)t;
    return d > whole ? -1 : d < whole ? 1 : 0;
}

static int cmp_number(const number *a, const number *b) {
    if (a->is_int && b->is_int) return (a->i > b->i) - (a->i < b->i);
    if (a->is_int) return cmp_int_real(a->i, b->d);
    if (b->is_int) {
        int c = cmp_int_real(b->i, a->d);
        return c == CMP_UNORDERED ? c : -c;
    }
    if (isnan(a->d) || isnan(b->d)) return CMP_UNORDERED;
    return (a->d > b->d) - (a->d < b->d);
}

static number number_of_json(const json_t *v) {
    number n = {0, 0, 0.0};
    if (json_is_integer(v)) {
        n.is_int = 1;
        n.i = json_integer_value(v);
    } else {
        n.d = json_real_value(v);
    }
    return n;
}

/* Bytewise, like memcmp, with the shorter string first on a tie. */
static int cmp_bytes(const char *a, size_t alen, const char *b, size_t blen) {
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c) return c < 0 ? -1 : 1;
    return (alen > blen) - (alen < blen);
}

/* JSON equality with numbers compared by value (1 == 1.0). Recursion is
 * bounded by the operand's depth, which the parser limited. */
static int json_same(const json_t *a, const json_t *b) {
    if (json_is_number(a) && json_is_number(b)) {
        number x = number_of_json(a), y = number_of_json(b);
        return cmp_number(&x, &y) == 0;
    }
    if (json_typeof(a) != json_typeof(b)) return 0;
    switch (json_typeof(a)) {
    case JSON_STRING:
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    case JSON_ARRAY: {
        size_t n = json_array_size(a);
        if (n != json_array_size(b)) return 0;
        for (size_t i = 0; i < n; i++)
            if (!json_same(json_array_get(a, i), json_array_get(b, i))) return 0;
        return 1;
    }
    case JSON_OBJECT: {
        if (json_object_size(a) != json_object_size(b)) return 0;
        const char *key;
        json_t *va;
        json_object_foreach((json_t *)a, key, va) {
            const json_t *vb = json_object_get(b, key);
            if (!vb || !json_same(va, vb)) return 0;
        }
        return 1;
    }
    default: return 1; /* true, false, null: the type is the value */
    }
}

/* Whether a three-way comparison result satisfies an ordering operator. */
static int order_holds(op_kind op, int c) {
    if (c == CMP_UNORDERED) return op == OP_NE;
    switch (op) {
    case OP_EQ: return c == 0;
    case OP_NE: return c != 0;
    case OP_GT: return c > 0;
    case OP_GTE: return c >= 0;
    case OP_LT: return c < 0;
    case OP_LTE: return c <= 0;
    default: return 0;
    }
}

/* ------------------------------------------------------------------ */
/* Evaluation.                                                         */
/* ------------------------------------------------------------------ */

static unsigned char ascii_lower(unsigned char c) {
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

/* needle is already lowercased and has no NUL in its first len bytes.
 * Candidates are found with strchr (vectorised in libc), once for each case
 * of the needle's first letter, each search resumed only when passed, so
 * the text is scanned about once whatever it holds. */
static int contains_folded(const char *text, const char *needle, size_t len) {
    if (len == 0) return 1;
    if (!text) return 0;
    const unsigned char *nd = (const unsigned char *)needle;
    char first = (char)nd[0];
    char first_upper = first >= 'a' && first <= 'z' ? (char)(first - 32) : first;
    const char *next_lower = strchr(text, first);
    const char *next_upper = first_upper != first ? strchr(text, first_upper) : NULL;
    while (next_lower || next_upper) {
        const char *p =
            !next_upper || (next_lower && next_lower < next_upper) ? next_lower : next_upper;
        const unsigned char *q = (const unsigned char *)p;
        size_t k = 1;
        while (k < len && ascii_lower(q[k]) == nd[k]) k++;
        if (k == len) return 1;
        if (!q[k]) return 0; /* the rest of the text is shorter than needle */
        if (p == next_lower)
            next_lower = strchr(p + 1, first);
        else
            next_upper = strchr(p + 1, first_upper);
    }
    return 0;
}

static const char *core_string(const filter_record *r, field_id f) {
    switch (f) {
    case FIELD_ID: return r->id;
    case FIELD_NS: return r->ns;
    case FIELD_KIND: return r->kind;
    case FIELD_TIER: return r->tier;
    default: return r->text;
    }
}

static number core_number(const filter_record *r, field_id f) {
    number n = {1, 0, 0.0};
    switch (f) {
    case FIELD_IMPORTANCE:
        n.is_int = 0;
        n.d = r->importance;
        break;
    case FIELD_CREATED_AT: n.i = r->created_at; break;
    case FIELD_UPDATED_AT: n.i = r->updated_at; break;
    case FIELD_ACCESSED_AT: n.i = r->accessed_at; break;
    case FIELD_EXPIRES_AT: n.i = r->expires_at; break;
    case FIELD_ACCESS_COUNT: n.i = r->access_count; break;
    default: n.i = r->duplicate_count; break;
    }
    return n;
}

static int compare_strings_qsort(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int string_in_set(const char *s, const char **set, size_t n) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s, set[mid]);
        if (c == 0) return 1;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return 0;
}

static int match_core_string(const node *n, const char *s) {
    if (!s) return n->op == OP_NE || n->op == OP_NIN;
    if (n->op == OP_IN) return string_in_set(s, n->u.str.set, n->u.str.n);
    if (n->op == OP_NIN) return !string_in_set(s, n->u.str.set, n->u.str.n);
    int c = strcmp(s, n->u.str.value);
    return order_holds(n->op, (c > 0) - (c < 0));
}

static int number_in_set(const number *x, const number *set, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (cmp_number(x, &set[i]) == 0) return 1;
    return 0;
}

static int match_core_number(const node *n, const number *x) {
    if (n->op == OP_IN) return number_in_set(x, n->u.num.set, n->u.num.n);
    if (n->op == OP_NIN) return !number_in_set(x, n->u.num.set, n->u.num.n);
    return order_holds(n->op, cmp_number(x, &n->u.num.value));
}

/* The metadata value a node names, or NULL when it is missing. */
static const json_t *metadata_lookup(const node *n, const json_t *md) {
    if (!json_is_object(md)) return NULL;
    const json_t *v = json_object_get(md, n->u.meta.whole);
    if (v || !n->u.meta.segs) return v;
    v = md;
    for (size_t i = 0; i < n->u.meta.nsegs; i++) {
        if (!json_is_object(v)) return NULL;
        v = json_object_get(v, n->u.meta.segs[i]);
        if (!v) return NULL;
    }
    return v;
}

static int json_in_list(const json_t *v, const json_t *list) {
    size_t n = json_array_size(list);
    for (size_t i = 0; i < n; i++)
        if (json_same(v, json_array_get(list, i))) return 1;
    return 0;
}

static int match_metadata(const node *n, const json_t *md) {
    const json_t *v = metadata_lookup(n, md), *operand = n->u.meta.operand;
    if (!v) return n->op == OP_NE || n->op == OP_NIN;
    switch (n->op) {
    case OP_EQ: return json_same(v, operand);
    case OP_NE: return !json_same(v, operand);
    case OP_IN: return json_in_list(v, operand);
    case OP_NIN: return !json_in_list(v, operand);
    default: break;
    }
    /* Ordering: the parser allowed only numbers and strings as operands. */
    if (json_is_number(operand)) {
        if (!json_is_number(v)) return 0;
        number x = number_of_json(v), y = number_of_json(operand);
        int c = cmp_number(&x, &y);
        return c != CMP_UNORDERED && order_holds(n->op, c);
    }
    if (!json_is_string(v)) return 0;
    return order_holds(n->op, cmp_bytes(json_string_value(v), json_string_length(v),
                                        json_string_value(operand), json_string_length(operand)));
}

static int node_match(const node *n, const filter_record *r) {
    switch (n->kind) {
    case NODE_AND:
        for (size_t i = 0; i < n->u.list.n; i++)
            if (!node_match(n->u.list.kids[i], r)) return 0;
        return 1;
    case NODE_OR:
        for (size_t i = 0; i < n->u.list.n; i++)
            if (node_match(n->u.list.kids[i], r)) return 1;
        return 0;
    case NODE_NOT: return !node_match(n->u.kid, r);
    case NODE_CONTAINS: return contains_folded(r->text, n->u.contains.needle, n->u.contains.len);
    case NODE_CORE_STRING: return match_core_string(n, core_string(r, n->field));
    case NODE_CORE_NUMBER: {
        number x = core_number(r, n->field);
        return match_core_number(n, &x);
    }
    case NODE_METADATA: return match_metadata(n, r->metadata);
    }
    return 0;
}

int filter_match(const filter *f, const filter_record *r) {
    if (!f || !f->root) return 1;
    return node_match(f->root, r);
}

int filter_uses_metadata(const filter *f) { return f ? f->uses_metadata : 0; }
int filter_uses_text(const filter *f) { return f ? f->uses_text : 0; }
int filter_uses_kind(const filter *f) { return f ? f->uses_kind : 0; }
int filter_matches_all(const filter *f) { return !f || !f->root; }

void filter_free(filter *f) {
    if (!f) return;
    node_free(f->root);
    json_decref(f->doc);
    free(f);
}

/* ------------------------------------------------------------------ */
/* Parse context: the error buffer and the JSON path of where we are.  */
/* ------------------------------------------------------------------ */

#define PATH_CAP 256

typedef struct {
    char *err;
    size_t errcap;
    char path[PATH_CAP];
    size_t pathlen;
    int path_cut;       /* the path ends in "..." and takes no more */
    size_t path_cut_at; /* where the "..." starts */
    filter *f;
} parse_ctx;

/* Copy s into buf for a message: at most max bytes (cut on a UTF-8
 * boundary, "..." added), control characters shown as '?'. */
static void describe_string(char *buf, size_t cap, const char *s, size_t max) {
    size_t n = strlen(s), o = 0;
    int cut = n > max;
    if (cut) {
        n = max;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    }
    for (size_t i = 0; i < n && o + 4 < cap; i++)
        buf[o++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    if (cut && o + 4 < cap) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = 0;
}

/* "string \"high\"", "number 5", "true", "an array", ... */
static void describe_json(char *buf, size_t cap, const json_t *v) {
    char s[80];
    switch (json_typeof(v)) {
    case JSON_STRING:
        describe_string(s, sizeof s, json_string_value(v), 40);
        snprintf(buf, cap, "string \"%s\"", s);
        break;
    case JSON_INTEGER:
        snprintf(buf, cap, "number %" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL: snprintf(buf, cap, "number %.15g", json_real_value(v)); break;
    case JSON_TRUE: snprintf(buf, cap, "true"); break;
    case JSON_FALSE: snprintf(buf, cap, "false"); break;
    case JSON_NULL: snprintf(buf, cap, "null"); break;
    case JSON_ARRAY: snprintf(buf, cap, "an array"); break;
    default: snprintf(buf, cap, "an object"); break;
    }
}

static int fail(parse_ctx *c, const char *fmt, ...) {
    if (c->err && c->errcap) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(c->err, c->errcap, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < c->errcap)
            snprintf(c->err + n, c->errcap - (size_t)n, " at %s", c->path);
    }
    return REMEM_EFILTER;
}

static int fail_nomem(parse_ctx *c) {
    if (c->err && c->errcap) snprintf(c->err, c->errcap, "out of memory");
    return REMEM_ENOMEM;
}

/* Append text to the path; once it is full, end it with "..." and ignore
 * the rest (the start of a path says more than its end). */
static void path_append(parse_ctx *c, const char *text) {
    if (c->path_cut) return;
    size_t n = strlen(text);
    /* Every append leaves room for "..." and the NUL after it. */
    if (c->pathlen + n + 4 >= PATH_CAP) {
        memcpy(c->path + c->pathlen, "...", 4);
        c->path_cut = 1;
        c->path_cut_at = c->pathlen;
        c->pathlen += 3;
        return;
    }
    memcpy(c->path + c->pathlen, text, n + 1);
    c->pathlen += n;
}

static int key_is_plain(const char *k) {
    if (!*k) return 0;
    for (const char *p = k; *p; p++) {
        char ch = *p;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '$' || ch == '.' || ch == '-'))
            return 0;
    }
    return 1;
}

/* Push an object key (".kind", or ["odd key"] when it has other
 * characters); returns the length to restore with path_pop. */
static size_t path_push_key(parse_ctx *c, const char *key) {
    size_t saved = c->pathlen;
    char buf[96];
    if (key_is_plain(key) && strlen(key) < 64) {
        snprintf(buf, sizeof buf, ".%s", key);
    } else {
        char shown[80];
        describe_string(shown, sizeof shown, key, 48);
        size_t o = 0;
        buf[o++] = '[';
        buf[o++] = '"';
        for (const char *p = shown; *p && o + 4 < sizeof buf; p++) {
            if (*p == '"' || *p == '\\') buf[o++] = '\\';
            buf[o++] = *p;
        }
        buf[o++] = '"';
        buf[o++] = ']';
        buf[o] = 0;
    }
    path_append(c, buf);
    return saved;
}

static size_t path_push_index(parse_ctx *c, size_t i) {
    size_t saved = c->pathlen;
    char buf[32];
    snprintf(buf, sizeof buf, "[%zu]", i);
    path_append(c, buf);
    return saved;
}

static void path_pop(parse_ctx *c, size_t saved) {
    c->pathlen = saved;
    c->path[saved] = 0;
    if (c->path_cut && saved <= c->path_cut_at) c->path_cut = 0;
}

/* ------------------------------------------------------------------ */
/* Parsing.                                                            */
/* ------------------------------------------------------------------ */

/* Every object and array must sit at most FILTER_MAX_DEPTH deep; checked
 * before anything else, so the builder and json_same recurse boundedly. */
static int check_depth(parse_ctx *c, const json_t *v, int depth) {
    if (!json_is_object(v) && !json_is_array(v)) return 0;
    if (depth > FILTER_MAX_DEPTH)
        return fail(c, "filter nests deeper than %d levels", FILTER_MAX_DEPTH);
    int rc = 0;
    if (json_is_object(v)) {
        const char *key;
        json_t *kid;
        json_object_foreach((json_t *)v, key, kid) {
            size_t saved = path_push_key(c, key);
            rc = check_depth(c, kid, depth + 1);
            path_pop(c, saved);
            if (rc) return rc;
        }
    } else {
        for (size_t i = 0; i < json_array_size(v); i++) {
            size_t saved = path_push_index(c, i);
            rc = check_depth(c, json_array_get(v, i), depth + 1);
            path_pop(c, saved);
            if (rc) return rc;
        }
    }
    return 0;
}

static node *node_new(parse_ctx *c, node_kind kind) {
    node *n = calloc(1, sizeof *n);
    if (n)
        n->kind = kind;
    else
        fail_nomem(c);
    return n;
}

/* How much a node costs per record, to try cheap conditions first. */
static int node_cost(const node *n) {
    switch (n->kind) {
    case NODE_CORE_NUMBER: return 0;
    case NODE_CORE_STRING: return n->field == FIELD_TEXT ? 2 : 1;
    case NODE_CONTAINS: return 2;
    case NODE_METADATA: return 3;
    case NODE_NOT: return node_cost(n->u.kid);
    default: {
        int worst = 0;
        for (size_t i = 0; i < n->u.list.n; i++) {
            int k = node_cost(n->u.list.kids[i]);
            if (k > worst) worst = k;
        }
        return worst;
    }
    }
}

/* Turn kids[0..n) into one node: the kid itself when n == 1, else an
 * AND/OR whose kids are ordered cheapest first (stable, so equal costs keep
 * the user's order). Takes ownership of kids. */
static int combine(parse_ctx *c, node_kind kind, node **kids, size_t n, node **out) {
    if (n == 1) {
        *out = kids[0];
        free(kids);
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        node *k = kids[i];
        int cost = node_cost(k);
        size_t j = i;
        for (; j > 0 && node_cost(kids[j - 1]) > cost; j--) kids[j] = kids[j - 1];
        kids[j] = k;
    }
    node *parent = node_new(c, kind);
    if (!parent) {
        for (size_t i = 0; i < n; i++) node_free(kids[i]);
        free(kids);
        return REMEM_ENOMEM;
    }
    parent->u.list.kids = kids;
    parent->u.list.n = n;
    *out = parent;
    return 0;
}

static int parse_filter_object(parse_ctx *c, const json_t *obj, node **out);

/* A field, resolved: a core field, or a metadata key split at its dots. */
typedef struct {
    field_id id;
    field_type type;
    const char *name;  /* as written, for messages */
    const char *whole; /* metadata: the key without "metadata." */
} field_ref;

static int resolve_field(parse_ctx *c, const char *key, field_ref *fr) {
    fr->name = key;
    for (size_t i = 0; i < sizeof core_fields / sizeof core_fields[0]; i++) {
        if (strcmp(key, core_fields[i].name) == 0) {
            fr->id = core_fields[i].id;
            fr->type = core_fields[i].type;
            fr->whole = NULL;
            return 0;
        }
    }
    fr->id = FIELD_METADATA;
    fr->type = TYPE_ANY;
    fr->whole = strncmp(key, "metadata.", 9) == 0 ? key + 9 : key;
    if (!*key) return fail(c, "empty field name");
    if (strcmp(key, "metadata") == 0)
        return fail(c, "metadata is not a field; name a key in it, as in "
                       "\"metadata.project\" or just \"project\"");
    const char *w = fr->whole;
    size_t n = strlen(w);
    if (n == 0 || w[0] == '.' || w[n - 1] == '.' || strstr(w, ".."))
        return fail(c, "empty key between dots in field name");
    return 0;
}

static int split_metadata_key(parse_ctx *c, node *n, const char *whole) {
    n->u.meta.whole = whole;
    if (!strchr(whole, '.')) return 0;
    size_t len = strlen(whole), parts = 1;
    for (const char *p = whole; *p; p++) parts += *p == '.';
    n->u.meta.segs_buf = malloc(len + 1);
    n->u.meta.segs = malloc(parts * sizeof *n->u.meta.segs);
    if (!n->u.meta.segs_buf || !n->u.meta.segs) return fail_nomem(c);
    memcpy(n->u.meta.segs_buf, whole, len + 1);
    char *seg = n->u.meta.segs_buf;
    size_t i = 0;
    n->u.meta.segs[i++] = seg;
    for (char *p = seg; *p; p++) {
        if (*p == '.') {
            *p = 0;
            n->u.meta.segs[i++] = p + 1;
        }
    }
    n->u.meta.nsegs = parts;
    return 0;
}

/* Convert one operand of a core number or time field (ISO dates to ms). */
static int core_number_operand(parse_ctx *c, const field_ref *fr, const json_t *v, number *out) {
    char got[128];
    if (json_is_number(v)) {
        *out = number_of_json(v);
        return 0;
    }
    if (fr->type == TYPE_TIME && json_is_string(v)) {
        /* remem's one time parser, and its message, so a date refused here
         * reads as it does in an import or a recall's "now". */
        char msg[384];
        int64_t ms;
        if (util_parse_time_field(fr->name, json_string_value(v), &ms, msg, sizeof msg) == 0) {
            out->is_int = 1;
            out->i = ms;
            out->d = 0;
            return 0;
        }
        return fail(c, "%s", msg);
    }
    describe_json(got, sizeof got, v);
    if (fr->type == TYPE_TIME)
        return fail(c, "%s needs milliseconds or an ISO 8601 date string, got %s", fr->name, got);
    return fail(c, "%s needs a number, got %s", fr->name, got);
}

static int core_string_operand(parse_ctx *c, const field_ref *fr, const json_t *v,
                               const char **out) {
    if (json_is_string(v)) {
        *out = json_string_value(v);
        return 0;
    }
    char got[128];
    describe_json(got, sizeof got, v);
    return fail(c, "%s needs a string, got %s", fr->name, got);
}

/* Check the operand of an $in/$nin: an array, each element of the right
 * type for a core field. Fills the node's set. */
static int build_set(parse_ctx *c, const field_ref *fr, const char *opname, const json_t *list,
                     node *n) {
    char got[128];
    if (!json_is_array(list)) {
        describe_json(got, sizeof got, list);
        return fail(c, "%s needs an array, got %s", opname, got);
    }
    size_t count = json_array_size(list);
    if (fr->id == FIELD_METADATA) {
        n->u.meta.operand = list;
        return 0;
    }
    size_t alloc = count ? count : 1;
    if (n->kind == NODE_CORE_STRING) {
        n->u.str.set = malloc(alloc * sizeof *n->u.str.set);
        if (!n->u.str.set) return fail_nomem(c);
    } else {
        n->u.num.set = malloc(alloc * sizeof *n->u.num.set);
        if (!n->u.num.set) return fail_nomem(c);
    }
    for (size_t i = 0; i < count; i++) {
        size_t saved = path_push_index(c, i);
        const json_t *v = json_array_get(list, i);
        int rc = n->kind == NODE_CORE_STRING ? core_string_operand(c, fr, v, &n->u.str.set[i])
                                             : core_number_operand(c, fr, v, &n->u.num.set[i]);
        path_pop(c, saved);
        if (rc) return rc;
    }
    if (n->kind == NODE_CORE_STRING) {
        n->u.str.n = count;
        qsort(n->u.str.set, count, sizeof *n->u.str.set, compare_strings_qsort);
    } else {
        n->u.num.n = count;
    }
    return 0;
}

/* One condition: field, operator, operand. The path points at the operand. */
static int build_condition(parse_ctx *c, const field_ref *fr, op_kind op, const char *opname,
                           const json_t *operand, node **out) {
    node_kind kind = fr->id == FIELD_METADATA  ? NODE_METADATA
                     : fr->type == TYPE_STRING ? NODE_CORE_STRING
                                               : NODE_CORE_NUMBER;
    node *n = node_new(c, kind);
    if (!n) return REMEM_ENOMEM;
    n->op = op;
    n->field = fr->id;
    int rc = 0;
    if (kind == NODE_METADATA) {
        c->f->uses_metadata = 1;
        rc = split_metadata_key(c, n, fr->whole);
    } else if (fr->id == FIELD_TEXT) {
        c->f->uses_text = 1;
    } else if (fr->id == FIELD_KIND) {
        c->f->uses_kind = 1;
    }
    if (rc) goto done;
    if (op == OP_IN || op == OP_NIN) {
        rc = build_set(c, fr, opname, operand, n);
    } else if (kind == NODE_CORE_STRING) {
        rc = core_string_operand(c, fr, operand, &n->u.str.value);
    } else if (kind == NODE_CORE_NUMBER) {
        rc = core_number_operand(c, fr, operand, &n->u.num.value);
    } else if (op == OP_EQ || op == OP_NE || json_is_number(operand) || json_is_string(operand)) {
        n->u.meta.operand = operand;
    } else {
        char got[128];
        describe_json(got, sizeof got, operand);
        rc = fail(c, "%s needs a number or a string, got %s", opname, got);
    }
done:
    if (rc) {
        node_free(n);
        return rc;
    }
    *out = n;
    return 0;
}

static int lookup_operator(const char *name, op_kind *op) {
    for (size_t i = 0; i < sizeof operators / sizeof operators[0]; i++) {
        if (strcmp(name, operators[i].name) == 0) {
            *op = operators[i].op;
            return 1;
        }
    }
    return 0;
}

/* {"field": value} or {"field": {"$op": operand, ...}}. The path points at
 * the field. */
static int parse_field(parse_ctx *c, const char *key, const json_t *val, node **out) {
    field_ref fr;
    int rc = resolve_field(c, key, &fr);
    if (rc) return rc;
    if (!json_is_object(val)) return build_condition(c, &fr, OP_EQ, "$eq", val, out);

    size_t count = json_object_size(val);
    if (count == 0)
        return fail(c, "empty operator object; give an operator such as "
                       "{\"$eq\": ...}");
    node **kids = calloc(count, sizeof *kids);
    if (!kids) return fail_nomem(c);
    size_t n = 0;
    const char *opname;
    json_t *operand;
    char shown[80];
    json_object_foreach((json_t *)val, opname, operand) {
        op_kind op;
        describe_string(shown, sizeof shown, opname, 40);
        if (opname[0] != '$') {
            rc = fail(c,
                      "expected an operator such as $eq or $gt, got key \"%s\" "
                      "(to compare with an object, write {\"$eq\": {...}})",
                      shown);
        } else if (!lookup_operator(opname, &op)) {
            int logical =
                !strcmp(opname, "$and") || !strcmp(opname, "$or") || !strcmp(opname, "$not");
            const char *hint = logical ? " for a field (it goes where fields go, as in "
                                         "{\"$or\": [{\"kind\": \"a\"}, {\"kind\": \"b\"}]})"
                               : !strcmp(opname, "$contains")
                                   ? " for a field ($contains searches the text and goes where "
                                     "fields go: {\"$contains\": \"...\"})"
                                   : "";
            rc = fail(c, "unknown operator %s%s", shown, hint);
        } else {
            size_t saved = path_push_key(c, opname);
            rc = build_condition(c, &fr, op, opname, operand, &kids[n]);
            path_pop(c, saved);
            if (!rc) n++;
        }
        if (rc) break;
    }
    if (rc) {
        for (size_t i = 0; i < n; i++) node_free(kids[i]);
        free(kids);
        return rc;
    }
    return combine(c, NODE_AND, kids, n, out);
}

/* $and / $or: a non-empty array of filter objects. Path points at it. */
static int parse_list(parse_ctx *c, const char *opname, node_kind kind, const json_t *val,
                      node **out) {
    if (!json_is_array(val) || json_array_size(val) == 0) {
        char got[128];
        describe_json(got, sizeof got, val);
        if (json_is_array(val)) snprintf(got, sizeof got, "an empty array");
        return fail(c, "%s needs a non-empty array of filters, got %s", opname, got);
    }
    size_t count = json_array_size(val), n = 0;
    node **kids = calloc(count, sizeof *kids);
    if (!kids) return fail_nomem(c);
    int rc = 0;
    for (size_t i = 0; i < count && !rc; i++) {
        size_t saved = path_push_index(c, i);
        const json_t *item = json_array_get(val, i);
        if (!json_is_object(item)) {
            char got[128];
            describe_json(got, sizeof got, item);
            rc = fail(c, "%s items must be filter objects, got %s", opname, got);
        } else {
            rc = parse_filter_object(c, item, &kids[n]);
            if (!rc) n++;
        }
        path_pop(c, saved);
    }
    if (rc) {
        for (size_t i = 0; i < n; i++) node_free(kids[i]);
        free(kids);
        return rc;
    }
    /* A kid of NULL is an empty filter {}: true. It makes an AND drop it and
     * an OR true as a whole. */
    size_t kept = 0;
    int any_true = 0;
    for (size_t i = 0; i < n; i++) {
        if (kids[i])
            kids[kept++] = kids[i];
        else
            any_true = 1;
    }
    if (any_true && (kind == NODE_OR || kept == 0)) {
        for (size_t i = 0; i < kept; i++) node_free(kids[i]);
        free(kids);
        *out = NULL;
        return 0;
    }
    return combine(c, kind, kids, kept, out);
}

/* A key of a filter object with its value: a field, $and, $or, $not or
 * $contains. The path points at the key. *out NULL means "true". */
static int parse_clause(parse_ctx *c, const char *key, const json_t *val, node **out) {
    *out = NULL;
    if (!strcmp(key, "$and")) return parse_list(c, key, NODE_AND, val, out);
    if (!strcmp(key, "$or")) return parse_list(c, key, NODE_OR, val, out);
    if (!strcmp(key, "$not")) {
        if (!json_is_object(val)) {
            char got[128];
            describe_json(got, sizeof got, val);
            return fail(c, "$not needs a filter object, got %s", got);
        }
        node *kid;
        int rc = parse_filter_object(c, val, &kid);
        if (rc) return rc;
        node *n = node_new(c, NODE_NOT);
        if (!n) {
            node_free(kid);
            return REMEM_ENOMEM;
        }
        if (!kid) { /* $not of the empty filter: nothing matches */
            n->kind = NODE_OR;
            *out = n;
            return 0;
        }
        n->u.kid = kid;
        *out = n;
        return 0;
    }
    if (!strcmp(key, "$contains")) {
        if (!json_is_string(val)) {
            char got[128];
            describe_json(got, sizeof got, val);
            return fail(c, "$contains needs a string, got %s", got);
        }
        node *n = node_new(c, NODE_CONTAINS);
        if (!n) return REMEM_ENOMEM;
        size_t len = json_string_length(val);
        n->u.contains.needle = malloc(len + 1);
        if (!n->u.contains.needle) {
            node_free(n);
            return fail_nomem(c);
        }
        const char *s = json_string_value(val);
        for (size_t i = 0; i < len; i++)
            n->u.contains.needle[i] = (char)ascii_lower((unsigned char)s[i]);
        n->u.contains.needle[len] = 0;
        n->u.contains.len = len;
        c->f->uses_text = 1;
        *out = n;
        return 0;
    }
    if (key[0] == '$') {
        char shown[80];
        describe_string(shown, sizeof shown, key, 40);
        return fail(c,
                    "unknown operator %s (expected $and, $or, $not, $contains "
                    "or a field name)",
                    shown);
    }
    return parse_field(c, key, val, out);
}

/* A filter object: its keys are and-ed. *out NULL means "true" ({}). */
static int parse_filter_object(parse_ctx *c, const json_t *obj, node **out) {
    *out = NULL;
    size_t count = json_object_size(obj), n = 0;
    if (count == 0) return 0;
    node **kids = calloc(count, sizeof *kids);
    if (!kids) return fail_nomem(c);
    int rc = 0;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        size_t saved = path_push_key(c, key);
        rc = parse_clause(c, key, val, &kids[n]);
        path_pop(c, saved);
        if (rc) break;
        if (kids[n]) n++;
    }
    if (rc || n == 0) {
        for (size_t i = 0; i < n; i++) node_free(kids[i]);
        free(kids);
        return rc;
    }
    return combine(c, NODE_AND, kids, n, out);
}

static int all_space(const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') return 0;
    return 1;
}

int filter_parse(const char *json, size_t len, filter **out, char *err, size_t errcap) {
    parse_ctx c = {.err = err, .errcap = errcap, .path = "$", .pathlen = 1};
    if (err && errcap) err[0] = 0;
    *out = NULL;
    filter *f = calloc(1, sizeof *f);
    if (!f) return fail_nomem(&c);
    c.f = f;
    if (!json || all_space(json, len)) {
        *out = f;
        return 0;
    }
    json_error_t jerr;
    f->doc = json_loadb(json, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    int rc;
    if (!f->doc) {
        if (err && errcap)
            snprintf(err, errcap, "malformed JSON: %s at line %d, column %d", jerr.text, jerr.line,
                     jerr.column);
        rc = REMEM_EFILTER;
    } else if (!json_is_object(f->doc)) {
        char got[128];
        describe_json(got, sizeof got, f->doc);
        rc = fail(&c, "a filter must be a JSON object, got %s", got);
    } else {
        rc = check_depth(&c, f->doc, 1);
        if (!rc) rc = parse_filter_object(&c, f->doc, &f->root);
    }
    if (rc) {
        filter_free(f);
        return rc;
    }
    if (!f->root) { /* {} or only empty clauses: nothing to keep */
        json_decref(f->doc);
        f->doc = NULL;
        f->uses_metadata = f->uses_text = 0;
    }
    *out = f;
    return 0;
}
