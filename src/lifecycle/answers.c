/*
 * answers.c: the readers of the model's answers to the lifecycle's prompts
 * (answers.h). Every value is checked for its type before it is read; a
 * citation is range-checked as a double before it becomes an index.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lifecycle/answers.h"
#include "llm/llm.h"
#include "util/util.h"

json_t *answer_questions(const char *answer, size_t max, char *err, size_t cap) {
    json_t *j = llm_answer_json(answer, err, cap);
    if (!j) return NULL;
    json_t *a = json_is_array(j) ? j : json_object_get(j, "questions");
    json_t *out = json_array();
    size_t i;
    json_t *q;
    json_array_foreach(a, i, q) {
        const char *s = json_is_string(q) ? json_string_value(q)
                                          : json_string_value(json_object_get(q, "question"));
        if (out && s && *s && json_array_size(out) < max)
            json_array_append_new(out, json_string(s));
    }
    json_decref(j);
    if (json_array_size(out) == 0) {
        snprintf(err, cap, "no question in the answer (expected {\"questions\": [\"...\"]})");
        json_decref(out);
        return NULL;
    }
    return out;
}

/* A citation: a number, or a string such as "2" or "#2". */
static int cited(json_t *v, double *out) {
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 1;
    }
    if (json_is_string(v)) {
        char *end;
        const char *s = json_string_value(v);
        while (*s == '#' || *s == ' ') s++;
        *out = strtod(s, &end);
        return end != s;
    }
    return 0;
}

void answer_insights_free(answer_insight *v, size_t n) {
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].text);
        free(v[i].cites);
    }
    free(v);
}

int answer_insights(const char *answer, size_t n_statements, size_t max, answer_insight **out,
                    size_t *n, int64_t *ignored, char *err, size_t cap) {
    *out = NULL;
    *n = 0;
    json_t *j = llm_answer_json(answer, err, cap);
    if (!j) return -1;
    json_t *arr = json_is_array(j) ? j : json_object_get(j, "insights");
    size_t total = json_array_size(arr), k;
    answer_insight *v = calloc(total ? total : 1, sizeof *v);
    if (!v) {
        json_decref(j);
        snprintf(err, cap, "out of memory");
        return -1;
    }
    json_t *it;
    json_array_foreach(arr, k, it) {
        if (*n >= max) break;
        const char *t = json_string_value(json_object_get(it, "insight"));
        if (!t) t = json_string_value(json_object_get(it, "text"));
        json_t *cites = json_object_get(it, "evidence");
        size_t nc = json_array_size(cites), c;
        answer_insight *x = &v[*n];
        x->cites = malloc((nc ? nc : 1) * sizeof *x->cites);
        if (!x->cites) break;
        json_t *cv;
        json_array_foreach(cites, c, cv) {
            double d;
            if (!cited(cv, &d) || !(d >= 1 && d <= (double)n_statements) || d != floor(d)) {
                (*ignored)++;
                continue;
            }
            size_t idx = (size_t)d - 1, z;
            for (z = 0; z < x->n_cites && x->cites[z] != idx; z++) {}
            if (z == x->n_cites) x->cites[x->n_cites++] = idx;
        }
        if (t && *t && x->n_cites && (x->text = strdup(t))) {
            (*n)++;
        } else {
            free(x->cites);
            memset(x, 0, sizeof *x);
        }
    }
    json_decref(j);
    *out = v;
    return 0;
}

/* The text of a list item, or NULL: "1. x", "2) x", "Step 3: x", "- x",
 * "* x", "• x" (leading blanks and markdown bold around the marker
 * allowed). */
static const char *list_item(const char *l) {
    while (*l == ' ' || *l == '\t') l++;
    while (*l == '*' && l[1] == '*') l += 2;
    const char *p = l;
    if (!strncasecmp(p, "step ", 5)) p += 5;
    if (*p >= '0' && *p <= '9') {
        while (*p >= '0' && *p <= '9') p++;
        if (*p != '.' && *p != ')' && *p != ':') return NULL;
        p++;
    } else if (p == l && (*p == '-' || *p == '*' || *p == '+')) {
        p++;
    } else if (p == l && !strncmp(p, "\xe2\x80\xa2", 3)) { /* U+2022 bullet */
        p += 3;
    } else {
        return NULL;
    }
    while (*p == '*') p++;
    if (*p != ' ' && *p != '\t') return NULL;
    while (*p == ' ' || *p == '\t') p++;
    return *p ? p : NULL;
}

/* A plan written as a list in prose (what small local models answer
 * instead of JSON): its items as a JSON array of strings, or NULL when
 * the answer holds no list item. */
static json_t *prose_steps(const char *answer) {
    json_t *a = json_array();
    const char *l = answer;
    while (a && l && *l) {
        const char *nl = strchr(l, '\n');
        size_t len = nl ? (size_t)(nl - l) : strlen(l);
        char *line = strndup(l, len);
        if (!line) break;
        size_t k = strlen(line);
        while (k && (line[k - 1] == '\r' || line[k - 1] == ' ')) line[--k] = 0;
        const char *t = list_item(line);
        if (t) json_array_append_new(a, json_string(t));
        free(line);
        l = nl ? nl + 1 : NULL;
    }
    if (json_array_size(a) == 0) {
        json_decref(a);
        return NULL;
    }
    return a;
}

char *answer_plan(const char *goal, const char *answer, char *err, size_t cap) {
    json_t *j = llm_answer_json(answer, err, cap);
    if (!j && !(j = prose_steps(answer ? answer : ""))) {
        snprintf(err, cap, "neither JSON ({\"plan\": [\"...\"]}) nor a numbered or bulleted "
                           "list of steps");
        return NULL;
    }
    json_t *plan = json_is_object(j) ? json_object_get(j, "plan") : j;
    if (!plan && json_is_object(j)) plan = json_object_get(j, "steps");
    strbuf b;
    sb_init(&b);
    sb_printf(&b, "Plan for: %s", goal);
    size_t n = 0;
    if (json_is_string(plan) && *json_string_value(plan)) {
        sb_printf(&b, "\n%s", json_string_value(plan));
        n = 1;
    }
    size_t i;
    json_t *s;
    json_array_foreach(plan, i, s) {
        const char *t = json_is_string(s) ? json_string_value(s)
                                          : json_string_value(json_object_get(s, "step"));
        if (t && *t) sb_printf(&b, "\n%zu. %s", ++n, t);
    }
    json_decref(j);
    if (n == 0) {
        sb_free(&b);
        snprintf(err, cap, "no step in the answer (expected {\"plan\": [\"...\"]})");
        return NULL;
    }
    char *out = sb_take(&b);
    if (!out) snprintf(err, cap, "out of memory");
    return out;
}

char *answer_summary(const char *answer, char *err, size_t cap) {
    json_t *j = llm_answer_json(answer, err, cap);
    if (!j) return NULL;
    const char *s = json_string_value(json_is_object(j) ? json_object_get(j, "summary") : j);
    char *out = s && *s ? strdup(s) : NULL;
    if (!out) snprintf(err, cap, s && *s ? "out of memory" : "no \"summary\" text in the answer");
    json_decref(j);
    return out;
}
