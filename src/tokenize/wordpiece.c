/* wordpiece.c — see wordpiece.h. */
#include "tokenize/wordpiece.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "tokenize/strmap.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

struct Wordpiece {
    StrMap vocab;      /* token → id      */
    const char **tokens;  /* (n) id → token (the vocab map's copy) */
    int n;
    int lower, strip_accents;
    int unk;           /* id of [UNK]     */
};

/* Code points of one piece of text. */
typedef struct { int32_t *cp; int n, cap; } Cps;

static int cps_push(Cps *c, int32_t x) {
    if (c->n == c->cap) {
        int nc = c->cap ? c->cap * 2 : 64;
        int32_t *p = realloc(c->cp, (size_t)nc * sizeof *p);
        if (!p) return -1;
        c->cp = p; c->cap = nc;
    }
    c->cp[c->n++] = x;
    return 0;
}

/* UTF-8 (len bytes) → code points appended to c.  0, or -1 (invalid / no memory). */
static int cps_from_utf8(Cps *c, const char *s, size_t len) {
    for (size_t i = 0; i < len;) {
        int32_t x;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(len - i), &x);
        if (k <= 0 || cps_push(c, x)) return -1;
        i += (size_t)k;
    }
    return 0;
}

/* Code points → NUL-terminated UTF-8 (malloc'd). */
static char *cps_to_utf8(const int32_t *cp, int n) {
    char *s = malloc((size_t)n * 4 + 1), *p = s;
    if (!s) return NULL;
    for (int i = 0; i < n; i++) p += utf8proc_encode_char(cp[i], (utf8proc_uint8_t *)p);
    *p = '\0';
    return s;
}

static int is_control(int32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return 0;
    utf8proc_category_t k = utf8proc_category(c);
    return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CN ||
           k == UTF8PROC_CATEGORY_CO || k == UTF8PROC_CATEGORY_CS;
}

static int is_bert_space(int32_t c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || utf8proc_category(c) == UTF8PROC_CATEGORY_ZS;
}

/* Python's str.isspace(). */
static int is_py_space(int32_t c) {
    return (c >= 9 && c <= 13) || (c >= 28 && c <= 32) || c == 0x85 || c == 0x2028 || c == 0x2029 ||
           utf8proc_category(c) == UTF8PROC_CATEGORY_ZS;
}

static int is_punct(int32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return 1;
    utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}

static int is_cjk(int32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

static int is_cased(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LL || k == UTF8PROC_CATEGORY_LT;
}

static int is_case_ignorable(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return c == '\'' || c == '.' || c == ':' || c == 0x2019 || c == 0xB7 || k == UTF8PROC_CATEGORY_MN ||
           k == UTF8PROC_CATEGORY_ME || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_LM ||
           k == UTF8PROC_CATEGORY_SK;
}

/* Σ at i is final: a cased letter before it and none after (case-ignorables skipped). */
static int final_sigma(const int32_t *cp, int n, int i) {
    int j = i - 1;
    while (j >= 0 && is_case_ignorable(cp[j])) j--;
    if (j < 0 || !is_cased(cp[j])) return 0;
    j = i + 1;
    while (j < n && is_case_ignorable(cp[j])) j++;
    return j >= n || !is_cased(cp[j]);
}

/* Python's str.lower() of one word. */
static int lower_word(Cps *out, const int32_t *cp, int n) {
    for (int i = 0; i < n; i++) {
        int32_t c = cp[i];
        if (c == 0x130) { if (cps_push(out, 'i') || cps_push(out, 0x307)) return -1; continue; }
        if (c == 0x3A3 && final_sigma(cp, n, i)) c = 0x3C2;
        else c = utf8proc_tolower(c);
        if (cps_push(out, c)) return -1;
    }
    return 0;
}

/* NFD, then marks of category Mn dropped. */
static int strip_accents(Cps *c) {
    char *s = cps_to_utf8(c->cp, c->n);
    if (!s) return -1;
    utf8proc_uint8_t *d = utf8proc_NFD((const utf8proc_uint8_t *)s);
    free(s);
    if (!d) return -1;
    c->n = 0;
    Cps all = {0};
    int rc = cps_from_utf8(&all, (const char *)d, strlen((const char *)d));
    for (int i = 0; i < all.n && rc == 0; i++)
        if (utf8proc_category(all.cp[i]) != UTF8PROC_CATEGORY_MN) rc = cps_push(c, all.cp[i]);
    free(all.cp);
    free(d);
    return rc;
}

static int push_id(int **ids, int *n, int *cap, int id) {
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 64, *p = realloc(*ids, (size_t)nc * sizeof *p);
        if (!p) return -1;
        *ids = p; *cap = nc;
    }
    (*ids)[(*n)++] = id;
    return 0;
}

/* WordPiece of one word (code points without whitespace or punctuation splits). */
static int wordpiece_word(const Wordpiece *w, const int32_t *cp, int n, int **ids, int *count, int *cap) {
    if (n > WORDPIECE_MAX_CHARS) return push_id(ids, count, cap, w->unk);
    char *s = cps_to_utf8(cp, n), *key = malloc((size_t)n * 4 + 3);
    int *off = malloc(((size_t)n + 1) * sizeof *off), rc = 0, first = *count;
    if (!s || !key || !off) { rc = -1; goto done; }
    for (int i = 0, b = 0; i <= n; i++) { off[i] = b; if (i < n) b += utf8proc_encode_char(cp[i], (utf8proc_uint8_t *)key); }
    for (int start = 0; start < n && rc == 0;) {
        int end = n, id = -1;
        for (; end > start; end--) {   /* the longest piece in the vocabulary */
            size_t k = 0, len = (size_t)(off[end] - off[start]);
            if (start > 0) { key[0] = '#'; key[1] = '#'; k = 2; }
            memcpy(key + k, s + off[start], len);
            if ((id = strmap_get(&w->vocab, key, k + len)) >= 0) break;
        }
        if (id < 0) { *count = first; rc = push_id(ids, count, cap, w->unk); break; }
        rc = push_id(ids, count, cap, id);
        start = end;
    }
done:
    free(s); free(key); free(off);
    return rc;
}

/* One whitespace-separated token: case, accents, punctuation splits, WordPiece. */
static int encode_token(const Wordpiece *w, const int32_t *cp, int n, int **ids, int *count, int *cap) {
    Cps t = {0};
    int rc = 0;
    if (w->lower) rc = lower_word(&t, cp, n);
    else for (int i = 0; i < n && rc == 0; i++) rc = cps_push(&t, cp[i]);
    if (rc == 0 && (w->lower ? w->strip_accents != 0 : w->strip_accents > 0)) rc = strip_accents(&t);
    int start = 0;
    for (int i = 0; i <= t.n && rc == 0; i++) {
        if (i < t.n && !is_punct(t.cp[i])) continue;
        if (i > start) rc = wordpiece_word(w, t.cp + start, i - start, ids, count, cap);
        if (i < t.n && rc == 0) rc = wordpiece_word(w, t.cp + i, 1, ids, count, cap);
        start = i + 1;
    }
    free(t.cp);
    return rc;
}

/* Clean and space CJK of s[0..len) → UTF-8 text (malloc'd), ready for NFC. */
static char *clean_text(const char *s, size_t len) {
    Cps in = {0}, out = {0};
    char *r = NULL;
    if (cps_from_utf8(&in, s, len) == 0) {
        int rc = 0;
        for (int i = 0; i < in.n && rc == 0; i++) {
            int32_t c = in.cp[i];
            if (c == 0 || c == 0xFFFD || is_control(c)) continue;
            if (is_bert_space(c)) rc = cps_push(&out, ' ');
            else if (is_cjk(c)) rc = cps_push(&out, ' ') || cps_push(&out, c) || cps_push(&out, ' ');
            else rc = cps_push(&out, c);
        }
        if (rc == 0) r = cps_to_utf8(out.cp, out.n);
    }
    free(in.cp); free(out.cp);
    return r;
}

/* Basic tokenizer + WordPiece of plain text s[0..len) (no special tokens in it). */
static int encode_plain(const Wordpiece *w, const char *s, size_t len, int **ids, int *count, int *cap) {
    char *clean = clean_text(s, len);
    if (!clean) return -1;
    utf8proc_uint8_t *nfc = utf8proc_NFC((const utf8proc_uint8_t *)clean);
    free(clean);
    if (!nfc) return -1;
    Cps c = {0};
    int rc = cps_from_utf8(&c, (const char *)nfc, strlen((const char *)nfc));
    free(nfc);
    for (int i = 0; i < c.n && rc == 0;) {
        while (i < c.n && is_py_space(c.cp[i])) i++;
        int j = i;
        while (j < c.n && !is_py_space(c.cp[j])) j++;
        if (j > i) rc = encode_token(w, c.cp + i, j - i, ids, count, cap);
        i = j;
    }
    free(c.cp);
    return rc;
}

/* Length of the special token at s ([MASK], [CLS], …) in the vocabulary, else 0. */
static size_t special_at(const Wordpiece *w, const char *s) {
    static const char *const sp[] = {"[MASK]", "[CLS]", "[SEP]", "[UNK]", "[PAD]"};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) {
        size_t n = strlen(sp[i]);
        if (!strncmp(s, sp[i], n) && strmap_get(&w->vocab, sp[i], n) >= 0) return n;
    }
    return 0;
}

int wordpiece_encode(const Wordpiece *w, const char *text, int **ids, int *n, char *err, size_t errlen) {
    *ids = NULL;
    *n = 0;
    int cap = 0, rc = 0;
    size_t len = strlen(text), from = 0;
    for (size_t i = 0; i <= len && rc == 0; i++) {
        size_t sp = i < len && text[i] == '[' ? special_at(w, text + i) : 0;
        if (i < len && !sp) continue;
        if (i > from) rc = encode_plain(w, text + from, i - from, ids, n, &cap);
        if (sp && rc == 0) rc = push_id(ids, n, &cap, strmap_get(&w->vocab, text + i, sp));
        if (sp) i += sp - 1;
        from = i + 1;
    }
    if (rc != 0) {
        free(*ids); *ids = NULL; *n = 0;
        return errmsg_set(err, errlen, "cannot tokenize the text (invalid UTF-8, or out of memory)");
    }
    return 0;
}

Wordpiece *wordpiece_load(const char *vocab_txt, int lower, int strip, char *err, size_t errlen) {
    char *text = file_read_all(vocab_txt, 64u << 20, NULL, err, errlen);
    if (!text) return NULL;
    Wordpiece *w = calloc(1, sizeof *w);
    int cap = 0;
    for (char *line = text, *next; w && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        if (w->n == cap) {
            cap = cap ? cap * 2 : 32768;
            const char **nt = realloc(w->tokens, (size_t)cap * sizeof *nt);
            if (!nt) { wordpiece_free(w); w = NULL; break; }
            w->tokens = nt;
        }
        if (strmap_put(&w->vocab, line, len, w->n) || !(w->tokens[w->n] = strmap_key(&w->vocab, line, len))) {
            wordpiece_free(w);
            w = NULL;
            break;
        }
        w->n++;
    }
    free(text);
    if (!w) { errmsg_set(err, errlen, "out of memory reading %s", vocab_txt); return NULL; }
    w->lower = lower;
    w->strip_accents = strip;
    w->unk = strmap_get(&w->vocab, "[UNK]", 5);
    if (w->unk < 0) {
        errmsg_set(err, errlen, "%s has no [UNK] token (is it a BERT vocab.txt?)", vocab_txt);
        wordpiece_free(w);
        return NULL;
    }
    return w;
}

int wordpiece_vocab_size(const Wordpiece *w) { return w->n; }
int wordpiece_id(const Wordpiece *w, const char *token) { return strmap_get(&w->vocab, token, strlen(token)); }
const char *wordpiece_token(const Wordpiece *w, int id) { return id >= 0 && id < w->n ? w->tokens[id] : NULL; }

void wordpiece_free(Wordpiece *w) {
    if (!w) return;
    strmap_free(&w->vocab);
    free(w->tokens);
    free(w);
}
