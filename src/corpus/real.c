/* real.c — the real sentence pairs: strict reading, tokens, the split by
 * English sentence, the names (see real.h). */
#include "corpus/real.h"
#include "core/errmsg.h"
#include "core/rng.h"
#include "corpus/tsv.h"
#include "tokenize/tokenizer.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const real_file_names[2] = {"fra-eng.tsv", "vie-eng.tsv"};

void real_free(RealData *rd) {
    if (!rd) return;
    for (int i = 0; i < rd->n; i++) { free(rd->pairs[i].src); free(rd->pairs[i].tgt); }
    free(rd->pairs);
    strmap_free(&rd->names);
    strmap_free(&rd->words);
    memset(rd, 0, sizeof *rd);
}

int real_tokens(const char *text, char *buf, const char **tok, int cap) {
    strcpy(buf, text);
    int n = 0;
    for (char *p = buf; *p && n < cap;) {
        tok[n++] = p;
        char *sp = strchr(p, ' ');
        if (!sp) break;
        *sp = '\0';
        p = sp + 1;
    }
    return n;
}

/* The tokens of t joined by single spaces, malloc'd; NULL out of memory. */
static char *join_tokens(const Tokens *t) {
    size_t len = 0;
    for (int i = 0; i < t->n; i++) len += strlen(t->tok[i]) + 1;
    char *s = malloc(len + 1), *p = s;
    if (!s) return NULL;
    for (int i = 0; i < t->n; i++) p += sprintf(p, "%s%s", i ? " " : "", t->tok[i]);
    *p = '\0';
    return s;
}

static uint64_t text_key(uint64_t seed, const char *s) {
    uint64_t h = 1469598103934665603ull;                 /* FNV-1a, then splitmix64 with the seed */
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    h ^= seed * 0x9E3779B97F4A7C15ull + 0x5EA1ull;
    return rng_splitmix64(&h);
}

/* ---------------------------------------------------------------- names -- */

/* Per lowercased English word: mid-sentence uses, of them capitalized; pairs
 * holding it, of them holding it in the translation too. */
typedef struct {
    StrMap idx;
    int (*count)[4];   /* (n, 4): mid, capital, pairs, in translation */
    int n, cap;
} NameStats;

static int *name_slot(NameStats *ns, const char *w, size_t len) {
    int i = strmap_get(&ns->idx, w, len);
    if (i >= 0) return ns->count[i];
    if (ns->n == ns->cap) {
        int cap = ns->cap ? 2 * ns->cap : 4096;
        int (*c)[4] = realloc(ns->count, (size_t)cap * sizeof *c);
        if (!c) return NULL;
        ns->count = c;
        ns->cap = cap;
    }
    if (strmap_put(&ns->idx, w, len, ns->n)) return NULL;
    memset(ns->count[ns->n], 0, sizeof ns->count[0]);
    return ns->count[ns->n++];
}

static int ascii_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* Counts the capitals of the raw English text's words away from a sentence's
 * start (ASCII words only).  0, or -1 (out of memory). */
static int count_capitals(NameStats *ns, const char *raw) {
    int start = 1;
    char w[TOKENIZER_MAX_TOKEN_BYTES + 1];
    for (const char *p = raw; *p;) {
        while (*p == ' ') p++;
        const char *e = p;
        while (*e && *e != ' ') e++;
        const char *a = p, *b = e;
        while (a < b && !ascii_alnum(*a) && (unsigned char)*a < 0x80) a++;
        while (b > a && !ascii_alnum(b[-1]) && (unsigned char)b[-1] < 0x80) b--;
        int ascii = b > a && (size_t)(b - a) <= TOKENIZER_MAX_TOKEN_BYTES;
        for (const char *q = a; ascii && q < b; q++) ascii = ascii_alnum(*q) || *q == '\'' || *q == '-';
        if (ascii && !start) {
            size_t len = (size_t)(b - a);
            for (size_t k = 0; k < len; k++) w[k] = (char)(a[k] >= 'A' && a[k] <= 'Z' ? a[k] + 32 : a[k]);
            int *c = name_slot(ns, w, len);
            if (!c) return -1;
            c[0]++;
            c[1] += *a >= 'A' && *a <= 'Z';
        }
        start = e > p && (e[-1] == '.' || e[-1] == '!' || e[-1] == '?');
        p = e;
    }
    return 0;
}

/* 1 if the joined tokens text holds token w. */
static int has_token(const char *text, const char *w, size_t len) {
    for (const char *p = text; (p = strstr(p, w)) != NULL; p++)
        if ((p == text || p[-1] == ' ') && (p[len] == ' ' || !p[len])) return 1;
    return 0;
}

/* The names: capitalized away from a sentence's start in at least 90% of at
 * least 5 uses, and copied into the translation in at least half its pairs. */
static int find_names(RealData *rd, NameStats *ns) {
    char buf[4096];
    const char *tok[TOKENIZER_MAX_TOKENS * 8];
    for (int i = 0; i < rd->n; i++) {
        const RealPair *p = &rd->pairs[i];
        if (p->split == REAL_TOO_LONG || strlen(p->src) >= sizeof buf) continue;
        int n = real_tokens(p->src, buf, tok, (int)(sizeof tok / sizeof *tok));
        for (int k = 0; k < n; k++) {
            int j = strmap_get(&ns->idx, tok[k], strlen(tok[k]));
            if (j < 0 || ns->count[j][0] < 5 || 10 * ns->count[j][1] < 9 * ns->count[j][0]) continue;
            int again = 0;
            for (int q = 0; q < k && !again; q++) again = !strcmp(tok[q], tok[k]);
            if (again) continue;
            ns->count[j][2]++;
            ns->count[j][3] += has_token(p->tgt, tok[k], strlen(tok[k]));
        }
    }
    for (int j = 0; j < ns->idx.cap; j++) {
        const char *w = ns->idx.keys[j];
        if (!w) continue;
        const int *c = ns->count[ns->idx.vals[j]];
        if (c[0] < 5 || 10 * c[1] < 9 * c[0] || !c[2] || 2 * c[3] < c[2] || !strcmp(w, "i")) continue;
        if (strmap_put(&rd->names, w, strlen(w), 1)) return -1;
        rd->n_names++;
    }
    return 0;
}

int real_is_name(const RealData *rd, const char *w) { return rd->names.n && strmap_get(&rd->names, w, strlen(w)) >= 0; }

/* -------------------------------------------------------------- reading -- */

static int add_pair(RealData *rd, int *cap, RealPair p) {
    if (rd->n == *cap) {
        int c = *cap ? 2 * *cap : 65536;
        RealPair *np = realloc(rd->pairs, (size_t)c * sizeof *np);
        if (!np) return -1;
        rd->pairs = np;
        *cap = c;
    }
    rd->pairs[rd->n++] = p;
    return 0;
}

/* One side of line ln tokenized and joined.  0, or -1 with err. */
static int side_tokens(const char *text, const char *path, int ln, const char *what, char **out, int *n, char *err,
                       size_t errlen) {
    Tokens t;
    char why[256];
    if (tokenizer_split_max(&t, text, 4096, why, sizeof why))
        return errmsg_set(err, errlen, "%s:%d: the %s does not tokenize: %s", path, ln, what, why);
    *n = t.n;
    *out = join_tokens(&t);
    tokens_free(&t);
    return *out ? 0 : errmsg_set(err, errlen, "out of memory");
}

/* One file's pairs appended to rd (lang), its English capitals into ns. */
static int read_file(RealData *rd, int *cap, NameStats *ns, const char *dir, int lang, const RealOptions *o,
                     char *err, size_t errlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, real_file_names[lang]);
    FILE *f = fopen(path, "rb");
    if (!f)
        return errmsg_set(err, errlen, "cannot open %s: %s (the real pairs are %s and %s: fra-eng.zip and vie-eng.zip "
                          "from https://www.manythings.org/anki/, sentences of tatoeba.org, unzipped into %s)", path,
                          strerror(errno), real_file_names[0], real_file_names[1], dir);
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    int ln = 0, rc = 0;
    const char *lname = lang == CORPUS_LANG_FR ? "French" : "Vietnamese";
    while (!rc && (len = getline(&line, &lcap, f)) >= 0) {
        ln++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (!len) continue;
        char why[200];
        if (tokenizer_check_utf8(line, (size_t)len, why, sizeof why)) { rc = errmsg_set(err, errlen, "%s:%d: %s", path, ln, why); break; }
        char *col[4];
        int nc = 0;
        for (char *p = line; nc < 4;) {
            col[nc++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = 0;
            p = tab + 1;
        }
        if (nc < 2 || nc > 3) {
            rc = errmsg_set(err, errlen, "%s:%d: expected 2 or 3 tab-separated columns (English, %s, attribution), got %d",
                            path, ln, lname, nc);
            break;
        }
        if (!*col[0] || !*col[1]) { rc = errmsg_set(err, errlen, "%s:%d: an empty %s", path, ln, *col[0] ? lname : "English"); break; }
        RealPair p = {.lang = lang, .line = ln};
        if (side_tokens(col[0], path, ln, "English", &p.src, &p.n_src, err, errlen) ||
            side_tokens(col[1], path, ln, lname, &p.tgt, &p.n_tgt, err, errlen)) {
            free(p.src);
            rc = -1;
            break;
        }
        p.key = text_key(o->seed, p.src);
        p.split = p.n_src > o->max_len || p.n_tgt > o->max_len ? REAL_TOO_LONG : REAL_TRAIN;
        if ((p.split != REAL_TOO_LONG && count_capitals(ns, col[0])) || add_pair(rd, cap, p)) {
            free(p.src);
            free(p.tgt);
            rc = errmsg_set(err, errlen, "out of memory");
            break;
        }
        rd->n_read[lang]++;
    }
    if (!rc && ferror(f)) rc = errmsg_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
    free(line);
    fclose(f);
    return rc;
}

/* ---------------------------------------------------------------- split -- */

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Position of key in the sorted keys k[0..n), or -1. */
static long find_key(const uint64_t *k, long n, uint64_t key) {
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (k[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && k[lo] == key ? lo : -1;
}

/* Test, validation, train by the order of the English sentences' keys; then
 * training pairs whose English the other language holds out are set aside. */
static int split_pairs(RealData *rd, const RealOptions *o) {
    uint64_t *keys[2] = {NULL, NULL};
    long nk[2] = {0, 0};
    int rc = 0;
    for (int L = 0; L < 2 && !rc; L++) {
        if (!(keys[L] = malloc(sizeof(uint64_t) * (size_t)(rd->n > 0 ? rd->n : 1)))) { rc = -1; break; }
        for (int i = 0; i < rd->n; i++)
            if (rd->pairs[i].lang == L && rd->pairs[i].split != REAL_TOO_LONG) keys[L][nk[L]++] = rd->pairs[i].key;
        qsort(keys[L], (size_t)nk[L], sizeof(uint64_t), cmp_u64);
        long u = 0;
        for (long i = 0; i < nk[L]; i++)
            if (!u || keys[L][i] != keys[L][u - 1]) keys[L][u++] = keys[L][i];
        nk[L] = u;
    }
    for (int i = 0; i < rd->n && !rc; i++) {
        RealPair *p = &rd->pairs[i];
        if (p->split == REAL_TOO_LONG) continue;
        int L = p->lang;
        long at = find_key(keys[L], nk[L], p->key);
        p->split = at < o->n_test[L] ? REAL_TEST : at < (long)o->n_test[L] + o->n_valid[L] ? REAL_VALID : REAL_TRAIN;
        long other = p->split == REAL_TRAIN ? find_key(keys[1 - L], nk[1 - L], p->key) : -1;
        if (other >= 0 && other < (long)o->n_test[1 - L] + o->n_valid[1 - L]) p->split = REAL_ASIDE;
    }
    for (int L = 0; L < 2 && !rc; L++) {   /* distinct English sentences per split */
        long held = (long)o->n_test[L] + o->n_valid[L];
        rd->n_sent[REAL_TEST][L] = (int)(nk[L] < o->n_test[L] ? nk[L] : o->n_test[L]);
        rd->n_sent[REAL_VALID][L] = (int)(nk[L] < held ? nk[L] - rd->n_sent[REAL_TEST][L] : o->n_valid[L]);
    }
    for (int i = 0; i < rd->n; i++) rd->n_pairs[rd->pairs[i].split][rd->pairs[i].lang]++;
    free(keys[0]);
    free(keys[1]);
    return rc;
}

/* Distinct English sentences of the training pairs, per language. */
static void count_train_sentences(RealData *rd) {
    for (int L = 0; L < 2; L++) {
        uint64_t *k = malloc(sizeof(uint64_t) * (size_t)(rd->n > 0 ? rd->n : 1));
        if (!k) return;
        long n = 0, u = 0;
        for (int i = 0; i < rd->n; i++)
            if (rd->pairs[i].lang == L && rd->pairs[i].split == REAL_TRAIN) k[n++] = rd->pairs[i].key;
        qsort(k, (size_t)n, sizeof *k, cmp_u64);
        for (long i = 0; i < n; i++) u += !i || k[i] != k[i - 1];
        rd->n_sent[REAL_TRAIN][L] = (int)u;
        free(k);
    }
}

int real_read(RealData *rd, const char *dir, const RealOptions *o, char *err, size_t errlen) {
    memset(rd, 0, sizeof *rd);
    NameStats ns = {0};
    int cap = 0, rc = 0;
    for (int L = 0; L < 2 && !rc; L++) rc = read_file(rd, &cap, &ns, dir, L, o, err, errlen);
    if (!rc && (split_pairs(rd, o) || find_names(rd, &ns))) rc = errmsg_set(err, errlen, "out of memory");
    if (!rc) count_train_sentences(rd);
    strmap_free(&ns.idx);
    free(ns.count);
    if (rc) real_free(rd);
    return rc;
}

/* ---------------------------------------------------------------- words -- */

static int all_digits(const char *w) {
    if (!*w) return 0;
    for (; *w; w++) if (*w < '0' || *w > '9') return 0;
    return 1;
}

static int cmp_word(const void *a, const void *b) {
    const RealWord *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->word, y->word);
}

int real_words(RealData *rd, int side, RealWord **out, int *n, char *err, size_t errlen) {
    *out = NULL;
    *n = 0;
    RealWord *w = NULL;
    int cap = 0, nw = 0;
    char buf[4096];
    const char *tok[TOKENIZER_MAX_TOKENS * 8];
    StrMap idx = {0};
    for (int i = 0; i < rd->n; i++) {
        const RealPair *p = &rd->pairs[i];
        if (p->split != REAL_TRAIN || (side == 1 && p->lang != CORPUS_LANG_FR) || (side == 2 && p->lang != CORPUS_LANG_VI))
            continue;
        const char *text = side ? p->tgt : p->src;
        if (strlen(text) >= sizeof buf) continue;
        int k = real_tokens(text, buf, tok, (int)(sizeof tok / sizeof *tok));
        for (int j = 0; j < k; j++) {
            size_t len = strlen(tok[j]);
            if (all_digits(tok[j]) || real_is_name(rd, tok[j])) continue;
            int at = strmap_get(&idx, tok[j], len);
            if (at >= 0) { w[at].count++; continue; }
            if (nw == cap) {
                cap = cap ? 2 * cap : 8192;
                RealWord *nwp = realloc(w, (size_t)cap * sizeof *nwp);
                if (!nwp) goto oom;
                w = nwp;
            }
            if (strmap_put(&idx, tok[j], len, nw) || strmap_put(&rd->words, tok[j], len, 0)) goto oom;
            w[nw++] = (RealWord){strmap_key(&rd->words, tok[j], len), 1};
        }
    }
    strmap_free(&idx);
    if (nw) qsort(w, (size_t)nw, sizeof *w, cmp_word);
    *out = w;
    *n = nw;
    return 0;
oom:
    strmap_free(&idx);
    free(w);
    return errmsg_set(err, errlen, "out of memory");
}
