/* bpe.c — see bpe.h. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenize/bpe.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "tokenize/strmap.h"
#include <cJSON.h>
#include <pcre2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BPE_PATTERN "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

struct Bpe {
    const char **tokens;     /* (n_vocab) id → byte-level token, in text */
    char *text;              /* every token, NUL-terminated              */
    int *order;              /* (n_vocab) ids in vocab.json's order      */
    int n_vocab;
    char *merges;            /* the n_merges merges "a b", NUL-separated, in rank order */
    int n_merges;
    /* The lookup tables, built at the first lookup (tables()): a run given
     * token ids never looks a string up, and building them was about half of
     * GPT-2's tokenizer load (100,000 inserts into tables larger than the cache). */
    StrMap vocab;            /* byte-level token → id                */
    StrMap ranks;            /* "a b" → merge rank                   */
    pthread_mutex_t lock;
    atomic_int ready;        /* 0 not built, 1 built, -1 out of memory */
    char byte_enc[256][3];   /* byte → its character, UTF-8          */
    int byte_dec[512];       /* code point (< 512) → byte, or -1     */
    pcre2_code *re;
};

/* The byte-to-unicode map of encoder.py. */
static void byte_map(Bpe *b) {
    int n = 0;
    for (int i = 0; i < 512; i++) b->byte_dec[i] = -1;
    for (int x = 0; x < 256; x++) {
        int keep = (x >= 33 && x <= 126) || (x >= 161 && x <= 172) || (x >= 174 && x <= 255);
        int cp = keep ? x : 256 + n++;
        b->byte_dec[cp] = x;
        if (cp < 0x80) { b->byte_enc[x][0] = (char)cp; b->byte_enc[x][1] = 0; }
        else {
            b->byte_enc[x][0] = (char)(0xC0 | cp >> 6);
            b->byte_enc[x][1] = (char)(0x80 | (cp & 0x3F));
            b->byte_enc[x][2] = 0;
        }
    }
}

/* vocab.json: {token: id}, ids 0..n-1 each once. */
static int load_vocab(Bpe *b, const char *path, char *err, size_t errlen) {
    size_t len = 0;
    char *text = file_read_all(path, 64u << 20, &len, err, errlen);
    if (!text) return -1;
    cJSON *d = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *j = d;
    if (!cJSON_IsObject(j)) { cJSON_Delete(d); return errmsg_set(err, errlen, "%s is not a JSON object", path); }
    int n = cJSON_GetArraySize(j), rc = 0, k = 0;
    size_t bytes = 1, used = 0;
    for (const cJSON *e = j->child; e; e = e->next) bytes += strlen(e->string) + 1;
    b->tokens = calloc((size_t)(n > 0 ? n : 1), sizeof *b->tokens);
    b->order = malloc((size_t)(n > 0 ? n : 1) * sizeof *b->order);
    b->text = malloc(bytes);
    b->n_vocab = n;
    if (!b->tokens || !b->order || !b->text) rc = errmsg_set(err, errlen, "out of memory");
    for (const cJSON *e = j->child; e && rc == 0; e = e->next) {
        double v = cJSON_IsNumber(e) ? e->valuedouble : -1;
        int id = v >= 0 && v < n && v == (int)v ? (int)v : -1;
        if (id < 0 || b->tokens[id]) {
            rc = errmsg_set(err, errlen, "%s: token %s has id %.15g (ids must be 0..%d, each once)", path, e->string,
                            id < 0 ? v : (double)id, n - 1);
            break;
        }
        size_t size = strlen(e->string) + 1;
        b->tokens[id] = memcpy(b->text + used, e->string, size);
        used += size;
        b->order[k++] = id;
    }
    cJSON_Delete(d);
    return rc;
}

/* Checks every line and keeps the merges, NUL-separated, at the start of the
 * file's text (b->merges); their table is built at the first lookup. */
static int load_merges(Bpe *b, const char *path, char *err, size_t errlen) {
    char *text = file_read_all(path, 64u << 20, NULL, err, errlen);
    if (!text) return -1;
    int rank = 0, rc = 0;
    size_t kept = 0;
    for (char *line = text, *next; line && *line && rc == 0; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        if (len == 0 || !strncmp(line, "#version", 8)) continue;
        char *sp = strchr(line, ' ');
        if (!sp || sp == line || !sp[1] || strchr(sp + 1, ' ')) {
            rc = errmsg_set(err, errlen, "%s: line \"%.40s\" is not a merge \"A B\"", path, line);
            break;
        }
        memmove(text + kept, line, len + 1);   /* kept <= line: the text only shrinks */
        kept += len + 1;
        rank++;
    }
    if (rc) { free(text); return rc; }
    b->merges = text;
    b->n_merges = rank;
    return 0;
}

/* Builds the vocabulary's and the merges' tables once, at the first lookup
 * (from any thread).  0, or -1 out of memory. */
static int tables(const Bpe *cb) {
    Bpe *b = (Bpe *)cb;   /* allocated writable by bpe_load; only these fields change */
    int ready = atomic_load_explicit(&b->ready, memory_order_acquire);
    if (ready) return ready > 0 ? 0 : -1;
    pthread_mutex_lock(&b->lock);
    if (!(ready = atomic_load_explicit(&b->ready, memory_order_relaxed))) {
        ready = strmap_reserve(&b->vocab, b->n_vocab) || strmap_reserve(&b->ranks, b->n_merges) ? -1 : 1;
        for (int i = 0; i < b->n_vocab && ready > 0; i++) {   /* vocab.json's order: a repeated token keeps its last id */
            const char *t = b->tokens[b->order[i]];
            if (strmap_put(&b->vocab, t, strlen(t), b->order[i])) ready = -1;
        }
        const char *m = b->merges;
        for (int r = 0; r < b->n_merges && ready > 0; r++) {
            size_t len = strlen(m);
            if (strmap_put(&b->ranks, m, len, r)) ready = -1;
            m += len + 1;
        }
        atomic_store_explicit(&b->ready, ready, memory_order_release);
    }
    pthread_mutex_unlock(&b->lock);
    return ready > 0 ? 0 : -1;
}

Bpe *bpe_load(const char *vocab_json, const char *merges_txt, char *err, size_t errlen) {
    Bpe *b = calloc(1, sizeof *b);
    if (!b) { errmsg_set(err, errlen, "out of memory"); return NULL; }
    byte_map(b);
    pthread_mutex_init(&b->lock, NULL);
    if (load_vocab(b, vocab_json, err, errlen) || load_merges(b, merges_txt, err, errlen)) { bpe_free(b); return NULL; }
    int code;
    PCRE2_SIZE at;
    b->re = pcre2_compile((PCRE2_SPTR)BPE_PATTERN, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &code, &at, NULL);
    if (!b->re) {
        errmsg_set(err, errlen, "PCRE2 cannot compile GPT-2's pattern (error %d at %zu)", code, (size_t)at);
        bpe_free(b);
        return NULL;
    }
    return b;
}

int bpe_vocab_size(const Bpe *b) { return b->n_vocab; }
int bpe_id(const Bpe *b, const char *token) { return tables(b) ? -1 : strmap_get(&b->vocab, token, strlen(token)); }

/* A word being merged: symbols are consecutive pieces [start, start+len) of s. */
typedef struct {
    const char *s;
    int *start, *len;
    int n;
} Word;

/* Rank of the pair (i, i+1), or -1. */
static int pair_rank(const Bpe *b, const Word *w, int i, char *key) {
    int la = w->len[i], lb = w->len[i + 1];
    memcpy(key, w->s + w->start[i], (size_t)la);
    key[la] = ' ';
    memcpy(key + la + 1, w->s + w->start[i + 1], (size_t)lb);
    return strmap_get(&b->ranks, key, (size_t)(la + lb + 1));
}

static int same(const Word *w, int i, int j) {
    return w->len[i] == w->len[j] && !memcmp(w->s + w->start[i], w->s + w->start[j], (size_t)w->len[i]);
}

/* Merges w until no adjacent pair has a rank (encoder.py's bpe()). */
static void merge_word(const Bpe *b, Word *w, char *key) {
    while (w->n > 1) {
        int best = -1, best_rank = -1;
        for (int i = 0; i + 1 < w->n; i++) {
            int r = pair_rank(b, w, i, key);
            if (r >= 0 && (best_rank < 0 || r < best_rank)) { best_rank = r; best = i; }
        }
        if (best < 0) break;
        int o = 0;   /* every occurrence of (first, second), left to right */
        for (int i = 0; i < w->n; i++) {
            if (i + 1 < w->n && same(w, i, best) && same(w, i + 1, best + 1)) {
                w->start[o] = w->start[i];
                w->len[o++] = w->len[i] + w->len[i + 1];
                i++;
            } else {
                w->start[o] = w->start[i];
                w->len[o++] = w->len[i];
            }
        }
        w->n = o;
    }
}

/* One pre-token (bytes p[0..n)) → ids appended to *ids. */
static int encode_piece(const Bpe *b, const unsigned char *p, size_t n, int **ids, int *count, int *cap, char *err,
                        size_t errlen) {
    char *s = malloc(n * 2 + 1), *key = malloc(n * 2 + 2);
    int *start = malloc(n * sizeof(int)), *len = malloc(n * sizeof(int)), rc = 0;
    if (!s || !key || !start || !len) { rc = errmsg_set(err, errlen, "out of memory"); goto done; }
    Word w = {s, start, len, (int)n};
    int k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *c = b->byte_enc[p[i]];
        start[i] = k;
        len[i] = (int)strlen(c);
        memcpy(s + k, c, (size_t)len[i]);
        k += len[i];
    }
    merge_word(b, &w, key);
    for (int i = 0; i < w.n && rc == 0; i++) {
        int id = strmap_get(&b->vocab, s + start[i], (size_t)len[i]);
        if (id < 0) { rc = errmsg_set(err, errlen, "vocab.json has no token %.*s", len[i], s + start[i]); break; }
        if (*count == *cap) {
            int nc = *cap ? *cap * 2 : 64, *ni = realloc(*ids, (size_t)nc * sizeof(int));
            if (!ni) { rc = errmsg_set(err, errlen, "out of memory"); break; }
            *ids = ni; *cap = nc;
        }
        (*ids)[(*count)++] = id;
    }
done:
    free(s); free(key); free(start); free(len);
    return rc;
}

int bpe_encode(const Bpe *b, const char *text, int **ids, int *n, char *err, size_t errlen) {
    *ids = NULL;
    *n = 0;
    int cap = 0, rc = 0;
    size_t len = strlen(text), off = 0;
    if (tables(b)) return errmsg_set(err, errlen, "out of memory");
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(b->re, NULL);
    if (!md) return errmsg_set(err, errlen, "out of memory");
    uint32_t opts = 0;
    while (off < len && rc == 0) {
        int r = pcre2_match(b->re, (PCRE2_SPTR)text, len, off, opts, md, NULL);
        opts = PCRE2_NO_UTF_CHECK;   /* checked once, on the first match */
        if (r == PCRE2_ERROR_NOMATCH) break;
        if (r < 0) {
            PCRE2_UCHAR msg[120];
            pcre2_get_error_message(r, msg, sizeof msg);
            rc = errmsg_set(err, errlen, "cannot tokenize the text: %s", (char *)msg);
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        if (ov[1] <= ov[0]) break;   /* the pattern never matches empty; guard anyway */
        rc = encode_piece(b, (const unsigned char *)text + ov[0], ov[1] - ov[0], ids, n, &cap, err, errlen);
        off = ov[1];
    }
    pcre2_match_data_free(md);
    if (rc != 0) { free(*ids); *ids = NULL; *n = 0; }
    return rc;
}

/* 1 if s[0..n) is whole UTF-8 characters. */
static int whole_utf8(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        int k = s[i] < 0x80 ? 1 : (s[i] & 0xE0) == 0xC0 ? 2 : (s[i] & 0xF0) == 0xE0 ? 3 : (s[i] & 0xF8) == 0xF0 ? 4 : 0;
        if (!k || i + (size_t)k > n) return 0;
        for (int j = 1; j < k; j++) if ((s[i + j] & 0xC0) != 0x80) return 0;
        i += (size_t)k;
    }
    return 1;
}

void bpe_token_text(const Bpe *b, int id, char *out, size_t n) {
    if (n == 0) return;
    out[0] = '\0';
    if (id < 0 || id >= b->n_vocab || !b->tokens[id]) { snprintf(out, n, "<%d>", id); return; }
    const unsigned char *t = (const unsigned char *)b->tokens[id];
    size_t k = 0;
    for (size_t i = 0; t[i] && k + 1 < n;) {   /* byte-level characters → bytes */
        if (t[i] >= 0xE0 || (t[i] >= 0x80 && !t[i + 1])) { snprintf(out, n, "%s", b->tokens[id]); return; }
        int cp = t[i] < 0x80 ? t[i] : ((t[i] & 0x1F) << 6) | (t[i + 1] & 0x3F);
        i += t[i] < 0x80 ? 1 : 2;
        int byte = cp < 512 ? b->byte_dec[cp] : -1;
        if (byte < 0) { snprintf(out, n, "%s", b->tokens[id]); return; }
        out[k++] = (char)byte;
    }
    out[k] = '\0';
    if (!whole_utf8((const unsigned char *)out, k)) snprintf(out, n, "%s", b->tokens[id]);
}

void bpe_free(Bpe *b) {
    if (!b) return;
    strmap_free(&b->vocab);
    strmap_free(&b->ranks);
    pthread_mutex_destroy(&b->lock);
    free(b->tokens); free(b->text); free(b->order); free(b->merges);
    if (b->re) pcre2_code_free(b->re);
    free(b);
}
