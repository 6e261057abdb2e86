/*
 * wordnet.c: the WordNet reader of wordnet.h. Four parts of speech, each
 * with three files: index.POS (one line per lemma, sorted: "lemma pos
 * synset_cnt p_cnt [ptr]... sense_cnt tagsense_cnt offset..."), data.POS
 * (one line per synset, found by its byte offset: "offset lexfile type
 * w_cnt(hex) word lex_id ... p_cnt(3 digits) sym offset pos st ... | gloss")
 * and POS.exc (sorted: "inflected base..."). All are mapped once (a
 * pthread_once) and only read, so lookups run in parallel. Lines are found
 * by binary search over byte offsets: from the middle, forward to the next
 * line start, compare its first field; the files' comment lines (before
 * the first lemma) begin with two spaces, which sort before any letter.
 */
#include "text/wordnet.h"

#include <fcntl.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { POS_NOUN, POS_VERB, POS_ADJ, POS_ADV, N_POS };

typedef struct wn_file {
    const char *p;
    size_t len;
} wn_file;

static struct {
    wn_file index[N_POS], data[N_POS], exc[N_POS];
    int ok;
    char dir[256];
} wn;

static pthread_once_t wn_once = PTHREAD_ONCE_INIT;

static const char *const POS_NAME[N_POS] = {"noun", "verb", "adj", "adv"};

static int map_file(const char *dir, const char *name, wn_file *f) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    void *p = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size > 0)
        p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return -1;
    f->p = p;
    f->len = (size_t)st.st_size;
    return 0;
}

static void wn_init(void) {
    const char *d = getenv("REMEM_WORDNET_DIR");
    snprintf(wn.dir, sizeof wn.dir, "%s", d && *d ? d : "/usr/share/wordnet");
    char name[32];
    for (int i = 0; i < N_POS; i++) {
        snprintf(name, sizeof name, "index.%s", POS_NAME[i]);
        if (map_file(wn.dir, name, &wn.index[i])) return;
        snprintf(name, sizeof name, "data.%s", POS_NAME[i]);
        if (map_file(wn.dir, name, &wn.data[i])) return;
        snprintf(name, sizeof name, "%s.exc", POS_NAME[i]);
        map_file(wn.dir, name, &wn.exc[i]); /* optional: adv.exc is tiny */
    }
    wn.ok = 1;
}

int wn_available(void) {
    pthread_once(&wn_once, wn_init);
    return wn.ok;
}

const char *wn_dir(void) {
    pthread_once(&wn_once, wn_init);
    return wn.dir;
}

/* Compare key (len bytes) with the first field of the line at p. */
static int cmp_line(const char *key, size_t len, const char *p, const char *end) {
    size_t i = 0;
    for (; i < len && p + i < end && p[i] != ' ' && p[i] != '\n'; i++)
        if (key[i] != p[i]) return (unsigned char)key[i] < (unsigned char)p[i] ? -1 : 1;
    if (i < len) return 1; /* the line's field is a prefix of key */
    return (p + i < end && p[i] != ' ' && p[i] != '\n') ? -1 : 0;
}

/* The line of f whose first field is key; NULL when none. */
static const char *find_line(const wn_file *f, const char *key, size_t len) {
    size_t lo = 0, hi = f->len; /* the line sought starts in [lo, hi) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2, s = mid;
        while (s > lo && f->p[s - 1] != '\n') s--; /* start of mid's line */
        const char *line = f->p + s;
        int c = cmp_line(key, len, line, f->p + f->len);
        if (c == 0) return line;
        if (c < 0) {
            hi = s;
        } else {
            const char *nl = memchr(line, '\n', f->len - s);
            if (!nl) return NULL;
            lo = (size_t)(nl - f->p) + 1;
        }
    }
    return NULL;
}

/* The next space-separated field of a line: [*p, returned end). */
static const char *field(const char **p, const char *end, size_t *n) {
    const char *s = *p;
    while (s < end && *s == ' ') s++;
    const char *e = s;
    while (e < end && *e != ' ' && *e != '\n') e++;
    *n = (size_t)(e - s);
    *p = e;
    return s;
}

static const char *line_end(const wn_file *f, const char *line) {
    const char *nl = memchr(line, '\n', (size_t)(f->p + f->len - line));
    return nl ? nl : f->p + f->len;
}

/* WordNet's detachment rules (morph.c), by part of speech. */
typedef struct rule {
    const char *suffix, *ending;
} rule;
static const rule RULES_NOUN[] = {{"s", ""},     {"ses", "s"},  {"xes", "x"},   {"zes", "z"},
                                  {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}};
static const rule RULES_VERB[] = {{"s", ""},  {"ies", "y"}, {"es", "e"},  {"es", ""},
                                  {"ed", "e"}, {"ed", ""},  {"ing", "e"}, {"ing", ""}};
static const rule RULES_ADJ[] = {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}};

/* The base form of word in part of speech pos, into base (cap bytes);
 * its index line, or NULL when WordNet has none. */
static const char *base_form(int pos, const char *word, size_t len, char *base, size_t cap) {
    const char *line;
    if (wn.exc[pos].p && (line = find_line(&wn.exc[pos], word, len))) {
        const char *end = line_end(&wn.exc[pos], line), *p = line;
        size_t n;
        field(&p, end, &n);
        const char *b = field(&p, end, &n);
        if (n > 0 && n < cap && (line = find_line(&wn.index[pos], b, n))) {
            memcpy(base, b, n);
            base[n] = '\0';
            return line;
        }
    }
    if (len < cap && (line = find_line(&wn.index[pos], word, len))) {
        memcpy(base, word, len);
        base[len] = '\0';
        return line;
    }
    const rule *r = pos == POS_NOUN ? RULES_NOUN : pos == POS_VERB ? RULES_VERB : RULES_ADJ;
    size_t nr = pos == POS_NOUN   ? sizeof RULES_NOUN / sizeof *r
                : pos == POS_VERB ? sizeof RULES_VERB / sizeof *r
                : pos == POS_ADJ  ? sizeof RULES_ADJ / sizeof *r
                                  : 0;
    for (size_t i = 0; i < nr; i++) {
        size_t sl = strlen(r[i].suffix), el = strlen(r[i].ending);
        if (len <= sl || memcmp(word + len - sl, r[i].suffix, sl) != 0) continue;
        size_t bl = len - sl + el;
        if (bl >= cap) continue;
        memcpy(base, word, len - sl);
        memcpy(base + len - sl, r[i].ending, el);
        base[bl] = '\0';
        if ((line = find_line(&wn.index[pos], base, bl))) return line;
    }
    return NULL;
}

typedef struct sink {
    wn_word *out;
    size_t n, max;
    const char *self;
    size_t self_len;
} sink;

/* Add word w (n bytes, WordNet's spelling) unless it is many words, too
 * long, the word asked about, or given already. */
static void put(sink *s, const char *w, size_t n, int relation) {
    const char *paren = memchr(w, '(', n); /* adjective markers: "big(a)" */
    if (paren) n = (size_t)(paren - w);
    if (s->n >= s->max || n == 0 || n > WN_WORD_MAX || memchr(w, '_', n)) return;
    char low[WN_WORD_MAX + 1];
    for (size_t i = 0; i < n; i++) low[i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] | 0x20 : w[i]);
    low[n] = '\0';
    if (n == s->self_len && memcmp(low, s->self, n) == 0) return;
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->out[i].word, low) == 0) return;
    memcpy(s->out[s->n].word, low, n + 1);
    s->out[s->n++].relation = relation;
}

static int pos_of(char c) {
    return c == 'n' ? POS_NOUN : c == 'v' ? POS_VERB : (c == 'a' || c == 's') ? POS_ADJ : POS_ADV;
}

/* The synset at offset (a decimal field) of part of speech pos: its words
 * (all of them, or only the first when first_only) as relation, and, when
 * follow, its hypernyms' first words and its first `hyponyms` hyponyms'. */
static void synset(sink *s, int pos, const char *off, size_t off_len, int relation,
                   int first_only, int follow, int hyponyms);

static void pointers(sink *s, const char *p, const char *end, int hyponyms) {
    size_t n;
    const char *f = field(&p, end, &n);
    long count = strtol(f, NULL, 10);
    int hypo = 0;
    for (long i = 0; i < count && p < end; i++) {
        const char *sym = field(&p, end, &n);
        size_t sym_n = n;
        const char *off = field(&p, end, &n);
        size_t off_n = n;
        const char *ps = field(&p, end, &n);
        field(&p, end, &n); /* source/target */
        int hyper = sym_n >= 1 && sym[0] == '@';
        int down = sym_n >= 1 && sym[0] == '~';
        if (hyper) synset(s, pos_of(ps[0]), off, off_n, WN_HYPERNYM, 1, 0, 0);
        if (down && hypo++ < hyponyms) synset(s, pos_of(ps[0]), off, off_n, WN_HYPONYM, 1, 0, 0);
    }
}

static void synset(sink *s, int pos, const char *off, size_t off_len, int relation,
                   int first_only, int follow, int hyponyms) {
    char num[16];
    if (off_len == 0 || off_len >= sizeof num) return;
    memcpy(num, off, off_len);
    num[off_len] = '\0';
    size_t at = strtoul(num, NULL, 10);
    const wn_file *d = &wn.data[pos];
    if (at >= d->len || (at > 0 && d->p[at - 1] != '\n')) return;
    const char *p = d->p + at, *end = line_end(d, p);
    size_t n;
    for (int i = 0; i < 3; i++) field(&p, end, &n); /* offset, lexfile, type */
    const char *f = field(&p, end, &n);
    long words = strtol(f, NULL, 16);
    for (long i = 0; i < words && p < end; i++) {
        const char *w = field(&p, end, &n);
        size_t wn_len = n;
        field(&p, end, &n); /* lex_id */
        if (!first_only || i == 0) put(s, w, wn_len, relation);
    }
    if (follow) pointers(s, p, end, hyponyms);
}

size_t wn_related(const char *word, size_t len, int senses, int hyponyms, wn_word *out,
                  size_t max) {
    if (!word || !len || !max || !wn_available()) return 0;
    sink s = {out, 0, max, word, len};
    char base[128];
    for (int pos = 0; pos < N_POS; pos++) {
        const char *line = base_form(pos, word, len, base, sizeof base);
        if (!line) continue;
        const char *end = line_end(&wn.index[pos], line), *p = line;
        size_t n;
        field(&p, end, &n); /* lemma */
        field(&p, end, &n); /* pos */
        long synsets = strtol(field(&p, end, &n), NULL, 10);
        long ptrs = strtol(field(&p, end, &n), NULL, 10);
        for (long i = 0; i < ptrs; i++) field(&p, end, &n);
        field(&p, end, &n); /* sense_cnt */
        field(&p, end, &n); /* tagsense_cnt */
        for (long i = 0; i < synsets && i < senses; i++) {
            const char *off = field(&p, end, &n);
            synset(&s, pos, off, n, WN_SYNONYM, 0, 1, hyponyms);
        }
    }
    return s.n;
}
