/*
 * wordpiece.c: BERT's uncased tokenizer and WordPiece (see wordpiece.h for
 * the steps). utf8proc supplies the Unicode tables (categories, canonical
 * decomposition, lowercase); nothing here knows a character by heart except
 * the CJK blocks and ASCII punctuation, which BERT itself defines by hand.
 *
 * The text is read once, left to right, as "chunks" (runs between white
 * space, or a single CJK ideograph); each chunk is normalised, cut at
 * punctuation into words, and each word WordPieced, until the token limit is
 * reached. Stopping early keeps a multi-megabyte text nearly as cheap as its
 * first 256 tokens (only a chunk in progress is read to its end).
 * Normalisation is per chunk because none of its steps can turn a character
 * into white space, so chunk boundaries stay where they were.
 */
#include "embed/minilm/wordpiece.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "remem.h"
#include "util/util.h"

/* ------------------------------------------------------------------ */
/* Vocabulary: tokens in one buffer, an open-addressing hash to ids.    */
/* ------------------------------------------------------------------ */
struct wp_vocab {
    char *text;       /* every token, NUL-terminated, back to back */
    uint32_t *offset; /* offset of token id in text */
    uint32_t *len;    /* its byte length */
    size_t n;         /* ids */
    int32_t *slots;   /* hash table of ids, -1 empty */
    size_t mask;      /* slots - 1 (a power of two) */
    int32_t pad, unk, cls, sep;
    int32_t literal[5]; /* ids of LITERALS, -1 when not in the vocabulary */
};

/* The special tokens the reference tokenizer recognises verbatim anywhere in
 * the raw text (before any normalisation): "a[SEP]b" is a, [SEP], b. */
static const char *const LITERALS[5] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

enum { VOCAB_MAX_IDS = 1 << 22 };

/* Errors go to the caller's buffer: util_errf. */
#define set_err util_errf

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 29);
}

int32_t wp_vocab_find(const wp_vocab *v, const char *tok, size_t len) {
    size_t i = hash_bytes(tok, len) & v->mask;
    for (;;) {
        int32_t id = v->slots[i];
        if (id < 0) return -1;
        if (v->len[id] == len && memcmp(v->text + v->offset[id], tok, len) == 0) return id;
        i = (i + 1) & v->mask;
    }
}

/* A token seen again keeps its last line's id, as the reference does. */
static void vocab_insert(wp_vocab *v, int32_t id) {
    const char *tok = v->text + v->offset[id];
    size_t i = hash_bytes(tok, v->len[id]) & v->mask;
    while (v->slots[i] >= 0) {
        int32_t other = v->slots[i];
        if (v->len[other] == v->len[id] &&
            memcmp(v->text + v->offset[other], tok, v->len[id]) == 0) {
            v->slots[i] = id;
            return;
        }
        i = (i + 1) & v->mask;
    }
    v->slots[i] = id;
}

void wp_vocab_free(wp_vocab *v) {
    if (!v) return;
    free(v->text);
    free(v->offset);
    free(v->len);
    free(v->slots);
    free(v);
}

int wp_vocab_load(const char *data, size_t len, wp_vocab **out, char *err, size_t errcap) {
    *out = NULL;
    if (len == 0) return set_err(err, errcap, REMEM_ECORRUPT, "vocab: empty");
    if (len >= UINT32_MAX)
        return set_err(err, errcap, REMEM_ECORRUPT, "vocab: too large (%zu bytes)", len);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++) {
        if (!data[i])
            return set_err(err, errcap, REMEM_ECORRUPT, "vocab: NUL byte on line %zu", lines + 1);
        lines += data[i] == '\n';
    }
    if (data[len - 1] != '\n') lines++;
    if (lines > VOCAB_MAX_IDS)
        return set_err(err, errcap, REMEM_ECORRUPT, "vocab: too many lines (%zu)", lines);

    wp_vocab *v = calloc(1, sizeof *v);
    size_t nslots = 16;
    while (nslots < 2 * lines) nslots <<= 1;
    if (v) {
        v->text = malloc(len + 1);
        v->offset = malloc(lines * sizeof *v->offset);
        v->len = malloc(lines * sizeof *v->len);
        v->slots = malloc(nslots * sizeof *v->slots);
    }
    if (!v || !v->text || !v->offset || !v->len || !v->slots) {
        wp_vocab_free(v);
        return set_err(err, errcap, REMEM_ENOMEM, "vocab: out of memory");
    }
    memset(v->slots, 0xff, nslots * sizeof *v->slots);
    v->mask = nslots - 1;
    memcpy(v->text, data, len);
    v->text[len] = 0;
    size_t start = 0;
    for (size_t id = 0; id < lines; id++) {
        size_t end = start;
        while (end < len && v->text[end] != '\n') end++;
        size_t stop = end; /* trailing white space is not part of a token */
        while (stop > start &&
               (v->text[stop - 1] == '\r' || v->text[stop - 1] == ' ' || v->text[stop - 1] == '\t'))
            stop--;
        v->text[stop] = 0;
        v->offset[id] = (uint32_t)start;
        v->len[id] = (uint32_t)(stop - start);
        v->n = id + 1;
        vocab_insert(v, (int32_t)id);
        start = end + 1;
    }
    struct {
        const char *name;
        int32_t *id;
    } specials[] = {{"[PAD]", &v->pad}, {"[UNK]", &v->unk}, {"[CLS]", &v->cls}, {"[SEP]", &v->sep}};
    for (size_t i = 0; i < sizeof specials / sizeof *specials; i++) {
        *specials[i].id = wp_vocab_find(v, specials[i].name, strlen(specials[i].name));
        if (*specials[i].id < 0) {
            wp_vocab_free(v);
            return set_err(err, errcap, REMEM_ECORRUPT, "vocab: no %s token", specials[i].name);
        }
    }
    for (int i = 0; i < 5; i++) v->literal[i] = wp_vocab_find(v, LITERALS[i], strlen(LITERALS[i]));
    *out = v;
    return 0;
}

int wp_vocab_load_file(const char *path, wp_vocab **out, char *err, size_t errcap) {
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return set_err(err, errcap, errno == ENOENT ? REMEM_ENOTFOUND : REMEM_EIO, "%s: %s", path,
                       strerror(errno));
    strbuf buf;
    sb_init(&buf);
    int rc = 0;
    for (;;) { /* read in 256 KiB steps into util's growable buffer */
        if (buf.len > (size_t)1 << 30) {
            rc = set_err(err, errcap, REMEM_ECORRUPT, "%s: larger than 1 GiB", path);
            break;
        }
        if (sb_reserve(&buf, (size_t)1 << 18)) {
            rc = set_err(err, errcap, REMEM_ENOMEM, "vocab: out of memory");
            break;
        }
        size_t got = fread(buf.data + buf.len, 1, buf.cap - buf.len - 1, f);
        buf.len += got;
        buf.data[buf.len] = '\0';
        if (got == 0) break;
    }
    if (!rc && ferror(f)) rc = set_err(err, errcap, REMEM_EIO, "%s: read error", path);
    fclose(f);
    if (!rc) {
        rc = wp_vocab_load(buf.data, buf.len, out, err, errcap);
        if (rc && err && errcap) { /* name the file */
            char detail[256];
            snprintf(detail, sizeof detail, "%s", err);
            snprintf(err, errcap, "%s: %s", path, detail);
        }
    }
    sb_free(&buf);
    return rc;
}

size_t wp_vocab_size(const wp_vocab *v) { return v->n; }
int32_t wp_vocab_pad_id(const wp_vocab *v) { return v->pad; }

int32_t wp_vocab_max_id(const wp_vocab *v) { return (int32_t)v->n - 1; }

const char *wp_vocab_token(const wp_vocab *v, int32_t id) {
    return id >= 0 && (size_t)id < v->n ? v->text + v->offset[id] : NULL;
}

/* ------------------------------------------------------------------ */
/* Character classes, as BERT defines them.                             */
/* ------------------------------------------------------------------ */
/* Control characters: the categories Cc, Cf, Co (and Cs, which valid UTF-8
 * never yields). Unassigned code points (Cn) are kept, as the reference keeps
 * them: its category tables come from UnicodeData.txt, which lists no Cn. */
static int is_control(int32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return 0;
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CS: return 1;
    default: return 0;
    }
}

/* White space: tab, newline, return, and the Unicode White_Space characters
 * that survive control removal (the space separators, U+2028, U+2029). */
static int is_space(int32_t c) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return 1;
    utf8proc_category_t cat = utf8proc_category(c);
    return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL ||
           cat == UTF8PROC_CATEGORY_ZP;
}

/* BERT counts every non-alphanumeric printable ASCII character as
 * punctuation ($, +, ^, ...), plus the Unicode P* categories. */
static int is_punct(int32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
        (c >= 123 && c <= 126))
        return 1;
    switch (utf8proc_category(c)) {
    case UTF8PROC_CATEGORY_PC:
    case UTF8PROC_CATEGORY_PD:
    case UTF8PROC_CATEGORY_PS:
    case UTF8PROC_CATEGORY_PE:
    case UTF8PROC_CATEGORY_PI:
    case UTF8PROC_CATEGORY_PF:
    case UTF8PROC_CATEGORY_PO: return 1;
    default: return 0;
    }
}

/* The CJK Unified Ideograph blocks (not Hangul, Hiragana or Katakana), as
 * the reference lists them: its fifth range starts at U+2B920, not at
 * U+2B820 where Extension E begins, so the first 256 characters of
 * Extension E are not set apart. Matching the reference matters more. */
static int is_cjk(int32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* ------------------------------------------------------------------ */
/* Tokenizing                                                           */
/* ------------------------------------------------------------------ */
typedef struct cpbuf {
    int32_t *cp;
    size_t n, cap;
} cpbuf;

static int cp_reserve(cpbuf *b, size_t more) {
    if (b->n + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + more) cap *= 2;
    int32_t *p = realloc(b->cp, cap * sizeof *p);
    if (!p) return REMEM_ENOMEM;
    b->cp = p;
    b->cap = cap;
    return 0;
}

typedef struct tok_state {
    const wp_vocab *v;
    int32_t *ids;
    int n, limit; /* limit: ids available for pieces (max_tokens - 1) */
    cpbuf norm;   /* the chunk after normalisation */
    char piece[WP_MAX_WORD_CHARS * 4 + 3];
} tok_state;

static int full(const tok_state *t) { return t->n >= t->limit; }

/* WordPiece one word (already normalised; n codepoints) and append its
 * pieces while room remains. The whole word is matched before anything is
 * appended: a word that cannot be covered is one [UNK] even when the limit
 * falls inside it, as when the reference truncates after tokenizing. */
static void wordpiece_word(tok_state *t, const int32_t *w, size_t n) {
    if (n == 0 || full(t)) return;
    if (n > WP_MAX_WORD_CHARS) {
        t->ids[t->n++] = t->v->unk;
        return;
    }
    /* The word's UTF-8 sits two bytes into t->piece, so that "##" can be
     * written just before any continuation (over bytes already matched). */
    char *utf8 = t->piece + 2;
    size_t off[WP_MAX_WORD_CHARS + 1];
    int32_t pieces[WP_MAX_WORD_CHARS];
    size_t npieces = 0;
    off[0] = 0;
    for (size_t i = 0; i < n; i++)
        off[i + 1] = off[i] + (size_t)utf8proc_encode_char(w[i], (uint8_t *)utf8 + off[i]);
    for (size_t start = 0; start < n;) {
        int32_t found = -1;
        size_t end = n;
        const char *s = start ? utf8 + off[start] - 2 : utf8;
        if (start) memcpy(utf8 + off[start] - 2, "##", 2);
        for (; end > start; end--) {
            found = wp_vocab_find(t->v, s, off[end] - off[start] + (start ? 2 : 0));
            if (found >= 0) break;
        }
        if (found < 0) {
            pieces[0] = t->v->unk;
            npieces = 1;
            break;
        }
        pieces[npieces++] = found;
        start = end;
    }
    for (size_t i = 0; i < npieces && !full(t); i++) t->ids[t->n++] = pieces[i];
}

/* Normalise one chunk (NFD, drop accents, lowercase) into t->norm, then cut
 * it at punctuation and WordPiece the words. */
static int chunk_done(tok_state *t, const int32_t *cp, size_t n) {
    t->norm.n = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t dec[8];
        int boundclass = 0;
        utf8proc_ssize_t k =
            utf8proc_decompose_char(cp[i], dec, 8, UTF8PROC_DECOMPOSE, &boundclass);
        if (k < 0 || k > 8) {
            dec[0] = cp[i];
            k = 1;
        }
        if (cp_reserve(&t->norm, (size_t)k)) return REMEM_ENOMEM;
        for (utf8proc_ssize_t j = 0; j < k; j++) t->norm.cp[t->norm.n++] = dec[j];
    }
    /* Canonical ordering of combining marks (a stable sort by combining
     * class within each run of non-starters), as NFD requires. */
    int32_t *s = t->norm.cp;
    for (size_t i = 1; i < t->norm.n; i++) {
        int32_t c = s[i];
        int cc = utf8proc_get_property(c)->combining_class;
        if (!cc) continue;
        size_t j = i;
        while (j > 0) {
            int pc = utf8proc_get_property(s[j - 1])->combining_class;
            if (pc <= cc) break;
            s[j] = s[j - 1];
            j--;
        }
        s[j] = c;
    }
    size_t m = 0;
    for (size_t i = 0; i < t->norm.n; i++) {
        if (utf8proc_category(s[i]) == UTF8PROC_CATEGORY_MN) continue;
        s[m++] = utf8proc_tolower(s[i]);
    }
    t->norm.n = m;
    size_t word = 0;
    for (size_t i = 0; i < m && !full(t); i++) {
        if (!is_punct(s[i])) continue;
        wordpiece_word(t, s + word, i - word);
        wordpiece_word(t, s + i, 1);
        word = i + 1;
    }
    /* Guarded: a chunk that normalises to nothing may have left s NULL,
     * and NULL + 0 is undefined behaviour (the fuzzers found it). */
    if (word < m) wordpiece_word(t, s + word, m - word);
    return 0;
}

/* The index in LITERALS of the special token text starts with, or -1. */
static int literal_at(const wp_vocab *v, const char *text, size_t len) {
    for (int i = 0; i < 5; i++) {
        size_t n = strlen(LITERALS[i]);
        if (v->literal[i] >= 0 && len >= n && memcmp(text, LITERALS[i], n) == 0) return i;
    }
    return -1;
}

int wp_tokenize(const wp_vocab *v, const char *text, size_t len, int32_t *ids, int max_tokens) {
    if (max_tokens < 2 || (!text && len)) return REMEM_EINVAL;
    tok_state t = {.v = v, .ids = ids, .n = 0, .limit = max_tokens - 1};
    cpbuf chunk = {0};
    int rc = 0;
    ids[t.n++] = v->cls;
    const uint8_t *p = (const uint8_t *)text;
    size_t i = 0;
    while (i < len && !full(&t)) {
        if (p[i] == '[') {
            int lit = literal_at(v, text + i, len - i);
            if (lit >= 0) {
                if ((rc = chunk_done(&t, chunk.cp, chunk.n))) goto out;
                chunk.n = 0;
                if (!full(&t)) t.ids[t.n++] = v->literal[lit];
                i += strlen(LITERALS[lit]);
                continue;
            }
        }
        int32_t c;
        utf8proc_ssize_t k = utf8proc_iterate(p + i, (utf8proc_ssize_t)(len - i), &c);
        if (k < 0) { /* an invalid byte: dropped, like U+FFFD */
            i++;
            continue;
        }
        i += (size_t)k;
        if (c == 0 || c == 0xFFFD || is_control(c)) continue;
        if (is_space(c) || is_cjk(c)) {
            if ((rc = chunk_done(&t, chunk.cp, chunk.n))) goto out;
            chunk.n = 0;
            if (is_cjk(c) && (rc = chunk_done(&t, &c, 1))) goto out;
            continue;
        }
        if ((rc = cp_reserve(&chunk, 1))) goto out;
        chunk.cp[chunk.n++] = c;
    }
    rc = chunk_done(&t, chunk.cp, chunk.n);
out:
    free(chunk.cp);
    free(t.norm.cp);
    if (rc) return rc;
    ids[t.n++] = v->sep;
    return t.n;
}
