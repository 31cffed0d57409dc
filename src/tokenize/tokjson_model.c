/* tokjson_model.c — the models of tokenizer.json (tokjson.h): BPE, WordPiece
 * and WordLevel, as the tokenizers library runs them on one pre-token.
 *
 * BPE merges with a priority queue (the pair of lowest rank first, the
 * leftmost among equals; stale entries skipped), so a word of n symbols costs
 * O(n log n) — the library's Word::merge_all, step for step. */
#include "tokenize/tokjson_model.h"
#include "core/sizes.h"
#include "tokenize/tokjson_text.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ID (1 << 24)   /* ids beyond 16M are refused (no vocabulary is near) */

/* ---- the merge table ---- */

static uint32_t mix(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (uint32_t)k;
}

/* The slots a table of n entries is made with at once: the power of two at
 * least 2n + 2 (1,024 at least), or -1 beyond 2^28 entries (8 GB of slots). */
static int table_cap(int n) {
    if (n < 0 || n > 1 << 28) return -1;
    int cap = 1024;
    while (cap < 2 * n + 2) cap *= 2;
    return cap;
}

/* The table with cap slots (a power of two, above 2n), its merges put again. */
static int merges_resize(TjMerges *m, int cap) {
    struct TjMerge *sl = malloc((size_t)cap * sizeof *sl);
    if (!sl) return -1;
    for (int i = 0; i < cap; i++) sl[i].key = UINT64_MAX;
    for (int i = 0; i < m->cap; i++) {
        if (m->slot[i].key == UINT64_MAX) continue;
        uint32_t s = mix(m->slot[i].key) & (uint32_t)(cap - 1);
        while (sl[s].key != UINT64_MAX) s = (s + 1) & (uint32_t)(cap - 1);
        sl[s] = m->slot[i];
    }
    free(m->slot);
    m->slot = sl;
    m->cap = cap;
    return 0;
}

static int merges_grow(TjMerges *m) {
    if (m->cap > INT_MAX / 2) return -1;   /* the doubling would wrap */
    return merges_resize(m, m->cap ? m->cap * 2 : 1024);
}

static uint64_t merge_key(int a, int b) { return (uint64_t)(uint32_t)a << 32 | (uint32_t)b; }

/* The slot of (a, b), or -1. */
static int merges_find(const TjMerges *m, int a, int b) {
    if (!m->cap) return -1;
    uint64_t k = merge_key(a, b);
    for (uint32_t s = mix(k) & (uint32_t)(m->cap - 1);; s = (s + 1) & (uint32_t)(m->cap - 1)) {
        if (m->slot[s].key == k) return (int)s;
        if (m->slot[s].key == UINT64_MAX) return -1;
    }
}

/* Sets (a, b) → (rank, id); a later merge of the same pair replaces an
 * earlier one, as the library's map does. */
int tj_merges_put(TjMerges *m, int a, int b, int rank, int id) {
    if ((m->n + 1) * 2 > m->cap && merges_grow(m)) return -1;
    uint64_t k = merge_key(a, b);
    uint32_t s = mix(k) & (uint32_t)(m->cap - 1);
    while (m->slot[s].key != UINT64_MAX && m->slot[s].key != k) s = (s + 1) & (uint32_t)(m->cap - 1);
    if (m->slot[s].key == UINT64_MAX) m->n++;
    m->slot[s] = (struct TjMerge){k, rank, id};
    return 0;
}

/* A hint that (a, b) is put soon: its first slot starts coming into the cache. */
static void merges_prefetch(const TjMerges *m, int a, int b) {
    if (m->cap) __builtin_prefetch(&m->slot[mix(merge_key(a, b)) & (uint32_t)(m->cap - 1)], 1);
}

void tj_merges_free(TjMerges *m) {
    if (!m) return;
    free(m->slot);
    memset(m, 0, sizeof *m);
}

int tjtoks_add(TjToks *l, int id, int start, int end) {
    if (l->n == l->cap) {
        if (l->cap > INT_MAX / 2) return -1;   /* the doubling would wrap */
        int cap = l->cap ? l->cap * 2 : 64;
        TjTok *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (TjTok){id, start, end};
    return 0;
}

/* ---- the vocabulary ---- */

/* FNV-1a over s[0, n) after the bytes h was given for; fnv_end mixes it
 * so the low bits vary.  hash_of(s, n) = fnv_end(fnv_more(FNV_SEED, s, n)),
 * so a key in two parts hashes as the two joined. */
enum { FNV_SEED = 2166136261u };

static uint32_t fnv_more(uint32_t h, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static uint32_t fnv_end(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return h;
}

static uint32_t hash_of(const char *s, size_t n) {
    return fnv_end(fnv_more(FNV_SEED, s, n));
}

/* The slot of the token a[0, na) joined to b[0, nb) (nb may be 0), whose
 * hash is h, or the empty slot where it would go. */
static inline int vocab_slot_of(const TjVocab *v, const char *a, size_t na, const char *b, size_t nb, uint32_t h) {
    uint32_t i = h & (uint32_t)(v->cap - 1);
    while (v->slot[i].id >= 0 &&
           (v->slot[i].hash != h || v->slot[i].len != na + nb || memcmp(v->text + v->slot[i].off, a, na) != 0 ||
            (nb && memcmp(v->text + v->slot[i].off + na, b, nb) != 0)))
        i = (i + 1) & (uint32_t)(v->cap - 1);
    return (int)i;
}

/* The slot of s[0, n) with hash h, or the empty slot where it would go. */
static int vocab_slot(const TjVocab *v, const char *s, size_t n, uint32_t h) {
    return vocab_slot_of(v, s, n, NULL, 0, h);
}

/* The table with cap slots (a power of two, above 2n), its tokens put again. */
static int vocab_resize(TjVocab *v, int cap) {
    struct TjSlot *sl = malloc((size_t)cap * sizeof *sl);
    if (!sl) return -1;
    for (int i = 0; i < cap; i++) sl[i].id = -1;
    for (int i = 0; i < v->cap; i++) {
        if (v->slot[i].id < 0) continue;
        uint32_t k = v->slot[i].hash & (uint32_t)(cap - 1);
        while (sl[k].id >= 0) k = (k + 1) & (uint32_t)(cap - 1);
        sl[k] = v->slot[i];
    }
    free(v->slot);
    v->slot = sl;
    v->cap = cap;
    return 0;
}

static int vocab_grow(TjVocab *v) {
    if (v->cap > INT_MAX / 2) return -1;   /* the doubling would wrap */
    return vocab_resize(v, v->cap ? v->cap * 2 : 1024);
}

/* tjvocab_put of s[0, n) whose hash is h, giving the slot s went to (or -1). */
static int vocab_put_hashed(TjVocab *v, const char *s, size_t n, uint32_t h, int id) {
    if ((v->n + 1) * 2 > v->cap && vocab_grow(v)) return -1;
    if (n >= UINT32_MAX / 2) return -1;
    int k = vocab_slot(v, s, n, h);
    if (v->slot[k].id < 0) {
        size_t need;
        if (!size_add(&need, v->used, n) || !size_add(&need, need, 1)) return -1;
        if (need > v->room) {
            size_t room = v->room ? v->room : 1 << 16;
            while (room < need) room = room > SIZE_MAX / 2 ? need : room * 2;
            char *t = realloc(v->text, room);
            if (!t) return -1;
            v->text = t;
            v->room = room;
        }
        memcpy(v->text + v->used, s, n);
        v->text[v->used + n] = '\0';
        v->slot[k] = (struct TjSlot){h, (uint32_t)n, (uint32_t)v->used, id};
        v->used += n + 1;
        v->n++;
    }
    v->slot[k].id = id;
    return k;
}

int tjvocab_put(TjVocab *v, const char *s, size_t n, int id) {
    return vocab_put_hashed(v, s, n, hash_of(s, n), id) < 0 ? -1 : 0;
}

int tjvocab_get(const TjVocab *v, const char *s, size_t n) {
    if (!v->cap) return -1;
    return v->slot[vocab_slot(v, s, n, hash_of(s, n))].id;
}

/* The id of a[0, na) joined to b[0, nb), or -1, without joining them. */
static int vocab_get_joined(const TjVocab *v, const char *a, size_t na, const char *b, size_t nb) {
    if (!v->cap) return -1;
    return v->slot[vocab_slot_of(v, a, na, b, nb, fnv_end(fnv_more(fnv_more(FNV_SEED, a, na), b, nb)))].id;
}

/* Many look-ups at once.  In a table of GPT-2's size (50,000 tokens, 2 MB of
 * slots) a look-up is a cache miss on its slot, then one on the token's
 * text, and a miss waited for alone costs as much as the rest of the
 * look-up many times over; misses asked for together overlap.  So a batch
 * of keys is hashed and its slots asked for, then the texts, then looked up. */
enum { VOCAB_BATCH = 16 };
typedef struct { const char *s; size_t n; uint32_t h; } VocabKey;

static void vocab_fetch(const TjVocab *v, VocabKey *k, int count) {
    for (int i = 0; i < count; i++) {
        k[i].h = hash_of(k[i].s, k[i].n);
        if (v->cap) __builtin_prefetch(&v->slot[k[i].h & (uint32_t)(v->cap - 1)]);
    }
    for (int i = 0; i < count && v->cap; i++) {
        const struct TjSlot *sl = &v->slot[k[i].h & (uint32_t)(v->cap - 1)];
        if (sl->id >= 0 && sl->hash == k[i].h) __builtin_prefetch(v->text + sl->off);
    }
}

void tjvocab_free(TjVocab *v) {
    if (!v) return;
    free(v->text);
    free(v->slot);
    memset(v, 0, sizeof *v);
}

/* m->tok for ids 0..n_ids-1, and room for count tokens of text bytes in all
 * (NULs included): the tokens never move, so m->tok may point at them. */
static int vocab_reserve(TjModel *m, int count, size_t text) {
    m->tok = calloc((size_t)(m->n_ids ? m->n_ids : 1), sizeof *m->tok);
    m->vocab.text = malloc(text + 1);
    m->vocab.room = text + 1;
    if (!m->tok || !m->vocab.text) return -1;
    int cap = table_cap(count);
    if (cap < 0) return -1;
    return cap > m->vocab.cap ? vocab_resize(&m->vocab, cap) : 0;   /* at its size at once, not doubled 7 times */
}

/* Tokens k[i] → id[i] for i < count (at most VOCAB_BATCH), and id → the
 * stored token.  0, or -1 out of memory. */
static int vocab_set_batch(TjModel *m, VocabKey *k, const int *id, int count) {
    vocab_fetch(&m->vocab, k, count);
    for (int i = 0; i < count; i++) {
        int slot = vocab_put_hashed(&m->vocab, k[i].s, k[i].n, k[i].h, id[i]);
        if (slot < 0) return -1;
        m->tok[id[i]] = m->vocab.text + m->vocab.slot[slot].off;
    }
    return 0;
}

/* Gathers tokens to set into a batch, set when full (and by vocab_flush). */
typedef struct { VocabKey k[VOCAB_BATCH]; int id[VOCAB_BATCH], n; } VocabBatch;

static int vocab_add(TjModel *m, VocabBatch *b, const char *s, int id) {
    b->k[b->n] = (VocabKey){s, strlen(s), 0};
    b->id[b->n++] = id;
    if (b->n < VOCAB_BATCH) return 0;
    b->n = 0;
    return vocab_set_batch(m, b->k, b->id, VOCAB_BATCH);
}

static int vocab_flush(TjModel *m, VocabBatch *b) {
    int n = b->n;
    b->n = 0;
    return vocab_set_batch(m, b->k, b->id, n);
}

static int vocab_get(const TjModel *m, const char *s, size_t n) {
    return tjvocab_get(&m->vocab, s, n);
}

/* ---- BPE ---- */

/* A word being merged: symbols in a list with holes (len 0 = merged away). */
typedef struct {
    int *c, *len, *prev, *next;   /* (cap) */
    int n, cap;
} Word;

typedef struct { int rank, pos, id; } Merge;
typedef struct { Merge *v; int n, cap; } Heap;

static int merge_less(Merge a, Merge b) {
    return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos;
}

static int heap_push(Heap *h, Merge x) {
    if (h->n == h->cap) {
        if (h->cap > INT_MAX / 2) return -1;   /* the doubling would wrap */
        int cap = h->cap ? h->cap * 2 : 64;
        Merge *v = realloc(h->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        h->v = v;
        h->cap = cap;
    }
    int i = h->n++;
    while (i > 0 && merge_less(x, h->v[(i - 1) / 2])) { h->v[i] = h->v[(i - 1) / 2]; i = (i - 1) / 2; }
    h->v[i] = x;
    return 0;
}

static Merge heap_pop(Heap *h) {
    Merge top = h->v[0], x = h->v[--h->n];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        Merge best = x;
        if (l < h->n && merge_less(h->v[l], best)) { m = l; best = h->v[l]; }
        if (r < h->n && merge_less(h->v[r], best)) m = r;
        if (m == i) break;
        h->v[i] = h->v[m];
        i = m;
    }
    if (h->n > 0) h->v[i] = x;
    return top;
}

static int word_add(Word *w, int id, int len) {
    if (w->n == w->cap) {
        if (w->cap > INT_MAX / 2) return -1;   /* the doubling would wrap */
        int cap = w->cap ? w->cap * 2 : 32;
        int *c = realloc(w->c, (size_t)cap * sizeof *c);
        if (c) w->c = c;
        int *l = realloc(w->len, (size_t)cap * sizeof *l);
        if (l) w->len = l;
        int *p = realloc(w->prev, (size_t)cap * sizeof *p);
        if (p) w->prev = p;
        int *nx = realloc(w->next, (size_t)cap * sizeof *nx);
        if (nx) w->next = nx;
        if (!c || !l || !p || !nx) return -1;
        w->cap = cap;
    }
    w->c[w->n] = id;
    w->len[w->n] = len;
    w->prev[w->n] = w->n - 1;
    w->next[w->n] = -1;
    if (w->n > 0) w->next[w->n - 1] = w->n;
    w->n++;
    return 0;
}

static int line_pair(const TjModel *m, int x, int y, int *rank, int *id);

/* Where a pair's merge is looked up: the (id, id) table t, or merges.txt's
 * lines when m is given (line_pair). */
typedef struct { const TjMerges *t; const TjModel *m; } Pairs;

/* The merge of symbols x, y: 1 with its rank and the joined token's id (-1
 * only from merges.txt: a join vocab.json lacks), or 0 when none. */
static int pair_merge(const Pairs *p, int x, int y, int *rank, int *id) {
    if (p->m) return line_pair(p->m, x, y, rank, id);
    int s = merges_find(p->t, x, y);
    if (s < 0) return 0;
    *rank = p->t->slot[s].rank;
    *id = p->t->slot[s].id;
    return 1;
}

/* Pushes the merge of the symbol at pos with its next one, if any. */
static int push_pair(const Pairs *p, const Word *w, Heap *h, int pos) {
    int rank, id;
    if (pos < 0 || w->next[pos] < 0 || !pair_merge(p, w->c[pos], w->c[w->next[pos]], &rank, &id)) return 0;
    return heap_push(h, (Merge){rank, pos, id});
}

/* 0; -1 out of memory; 1 when the merge of rank *missing joins into a token
 * the vocabulary lacks (merges.txt's lines only). */
static int merge_all(const Pairs *p, Word *w, int *missing) {
    Heap h = {0};
    int rc = 0;
    for (int i = 0; i + 1 < w->n && rc == 0; i++) rc = push_pair(p, w, &h, i);
    while (h.n > 0 && rc == 0) {
        Merge top = heap_pop(&h);
        int pos = top.pos, nx = w->next[pos], rank, id;
        if (w->len[pos] == 0 || nx < 0) continue;
        if (!pair_merge(p, w->c[pos], w->c[nx], &rank, &id) || id != top.id) continue;   /* a stale entry */
        if (id < 0) { *missing = rank; rc = 1; break; }
        w->c[pos] = top.id;
        w->len[pos] += w->len[nx];
        w->next[pos] = w->next[nx];
        w->len[nx] = 0;
        if (w->next[nx] >= 0) w->prev[w->next[nx]] = pos;
        rc = push_pair(p, w, &h, w->prev[pos]) || push_pair(p, w, &h, pos);
    }
    free(h.v);
    return rc;
}

int tj_merges_apply(const TjMerges *m, int *ids, int *n) {
    Word w = {0};
    int rc = 0, k = 0;
    for (int i = 0; i < *n && rc == 0; i++) rc = word_add(&w, ids[i], 1);
    int missing;
    if (rc == 0) rc = merge_all(&(Pairs){m, NULL}, &w, &missing);
    for (int i = 0; i < w.n && rc == 0; i++)
        if (w.len[i]) ids[k++] = w.c[i];
    if (rc == 0) *n = k;
    free(w.c); free(w.len); free(w.prev); free(w.next);
    return rc;
}

/* The symbol of one character (with the subword prefix when not first, the
 * suffix when last), its bytes, or the unknown token. */
static int bpe_char(const TjModel *m, Word *w, const char *key, int klen, int clen, int *unk, int *unk_len,
                    char *err, size_t errlen) {
    int id = vocab_get(m, key, (size_t)klen);
    if (id >= 0) {
        if (*unk_len && word_add(w, *unk, *unk_len)) return -1;
        *unk_len = 0;
        return word_add(w, id, clen);
    }
    if (m->byte_fallback) {
        int all = 1;
        for (int i = 0; i < klen && all; i++) all = m->byte_id[(unsigned char)key[i]] >= 0;
        if (all) {
            for (int i = 0; i < klen; i++)
                if (word_add(w, m->byte_id[(unsigned char)key[i]], 1)) return -1;
            return 0;
        }
    }
    if (!m->unk_token) return 0;   /* no unknown token: the character is dropped */
    if (m->unk < 0) return errmsg_set(err, errlen, "the unknown token \"%.40s\" is not in the vocabulary", m->unk_token);
    if (*unk_len && m->fuse_unk) { *unk_len += clen; return 0; }
    if (*unk_len && word_add(w, *unk, *unk_len)) return -1;
    *unk = m->unk;
    *unk_len = clen;
    return 0;
}

static int bpe_tokenize(const TjModel *m, const char *s, int n, TjToks *out, char *err, size_t errlen) {
    if (m->ignore_merges) {
        int id = vocab_get(m, s, (size_t)n);
        if (id >= 0) return tjtoks_add(out, id, 0, n);
    }
    size_t plen = m->prefix ? strlen(m->prefix) : 0, slen = m->suffix ? strlen(m->suffix) : 0;
    char *key = malloc(plen + slen + 8);
    Word w = {0};
    int rc = key ? 0 : -1, unk = -1, unk_len = 0;
    for (int i = 0; i < n && rc == 0;) {
        int32_t c;
        int k = tj_utf8_next(s, n, i, &c), kl = 0;
        if (i > 0 && plen) { memcpy(key, m->prefix, plen); kl = (int)plen; }
        memcpy(key + kl, s + i, (size_t)k);
        kl += k;
        if (i + k >= n && slen) { memcpy(key + kl, m->suffix, slen); kl += (int)slen; }
        rc = bpe_char(m, &w, key, kl, k, &unk, &unk_len, err, errlen);
        i += k;
    }
    if (rc == 0 && unk_len) rc = word_add(&w, unk, unk_len);
    int missing = -1;
    if (rc == 0 && (rc = merge_all(&(Pairs){&m->merges, m->lines ? m : NULL}, &w, &missing)) > 0)
        rc = errmsg_set(err, errlen, "%s: merge %d (\"%.40s %.40s\"): the token \"%.40s%.40s\" is not in vocab.json",
                        m->merges_path, missing, m->merges_a[missing], m->merges_b[missing], m->merges_a[missing],
                        m->merges_b[missing]);
    for (int i = 0, at = 0; i < w.n && rc == 0; i++) {
        if (w.len[i] == 0) continue;
        int end = at + w.len[i] > n ? n : at + w.len[i];
        rc = tjtoks_add(out, w.c[i], at, end);
        at = end;
    }
    free(key);
    free(w.c); free(w.len); free(w.prev); free(w.next);
    return rc;
}

/* ---- WordPiece and WordLevel ---- */

static int unk_token(const TjModel *m, int n, TjToks *out, char *err, size_t errlen) {
    if (m->unk < 0)
        return errmsg_set(err, errlen, "the unknown token \"%.40s\" is not in the vocabulary",
                          m->unk_token ? m->unk_token : "");
    return tjtoks_add(out, m->unk, 0, n);
}

static int wordpiece_tokenize(const TjModel *m, const char *s, int n, TjToks *out, char *err, size_t errlen) {
    int chars = 0;
    for (int i = 0; i < n; i++) chars += ((unsigned char)s[i] & 0xC0) != 0x80;
    if (chars > m->max_chars) return unk_token(m, n, out, err, errlen);
    size_t plen = strlen(m->prefix);
    char *key = malloc(plen + (size_t)n + 1);
    if (!key) return -1;
    int first = out->n, rc = 0;
    for (int start = 0; start < n && rc == 0;) {
        size_t off = start > 0 ? plen : 0;
        int end = n, id = -1;
        memcpy(key, m->prefix, off);
        while (start < end) {   /* the longest piece in the vocabulary */
            memcpy(key + off, s + start, (size_t)(end - start));
            if ((id = vocab_get(m, key, off + (size_t)(end - start))) >= 0) break;
            end--;
            while (end > start && ((unsigned char)s[end] & 0xC0) == 0x80) end--;
        }
        if (id < 0) { out->n = first; rc = unk_token(m, n, out, err, errlen); break; }
        rc = tjtoks_add(out, id, start, end);
        start = end;
    }
    free(key);
    return rc;
}

int tj_model_tokenize(const TjModel *m, const char *s, int n, TjToks *out, char *err, size_t errlen) {
    if (n == 0) return 0;
    int rc;
    if (m->kind == TJ_MODEL_BPE) rc = bpe_tokenize(m, s, n, out, err, errlen);
    else if (m->kind == TJ_MODEL_WORDPIECE) rc = wordpiece_tokenize(m, s, n, out, err, errlen);
    else {
        int id = vocab_get(m, s, (size_t)n);
        rc = id >= 0 ? tjtoks_add(out, id, 0, n) : unk_token(m, n, out, err, errlen);
    }
    if (rc && err && errlen && !err[0]) errmsg_set(err, errlen, "out of memory");
    return rc;
}

/* ---- loading ---- */

static int parse_vocab(TjModel *m, const cJSON *v, const TjCtx *c) {
    if (!cJSON_IsObject(v)) {
        if (cJSON_IsArray(v)) return tj_fail(c, "model.vocab", "a list of [piece, score] is a Unigram model, which is not supported");
        return tj_fail(c, "model.vocab", "must be an object {token: id}");
    }
    size_t text = 0;
    int count = 0;
    for (const cJSON *e = v->child; e; e = e->next, count++) {
        double d = cJSON_IsNumber(e) ? e->valuedouble : -1;
        if (d < 0 || d >= MAX_ID || d != (int)d)
            return tj_fail(c, "model.vocab", "token \"%.40s\" has id %.40s (ids are whole numbers 0..%d)", e->string,
                           cJSON_IsNumber(e) ? "out of range" : "that is not a number", MAX_ID - 1);
        if ((int)d >= m->n_ids) m->n_ids = (int)d + 1;
        text += strlen(e->string) + 1;
    }
    if (vocab_reserve(m, count, text)) return tj_fail(c, "model.vocab", "out of memory");
    VocabBatch b = {.n = 0};
    for (const cJSON *e = v->child; e; e = e->next)
        if (vocab_add(m, &b, e->string, (int)e->valuedouble)) return tj_fail(c, "model.vocab", "out of memory");
    return vocab_flush(m, &b) ? tj_fail(c, "model.vocab", "out of memory") : 0;
}

/* Grows *buf to hold n bytes.  0, or -1 out of memory. */
static int room(char **buf, size_t *cap, size_t n) {
    if (n <= *cap) return 0;
    size_t want;
    if (!size_mul(&want, n, 2)) return -1;
    char *p = realloc(*buf, want);
    if (!p) return -1;
    *buf = p;
    *cap = want;
    return 0;
}

/* The bytes a merge's right token loses when joined: the continuing-subword
 * prefix's length, as the library drops it (at most the whole token). */
static size_t prefix_skip(const TjModel *m, size_t lb) {
    size_t plen = m->prefix ? strlen(m->prefix) : 0;
    return lb >= plen ? plen : lb;
}

/* The ids of the merges' tokens: ids[3i], ids[3i + 1], ids[3i + 2] of a[i],
 * b[i] and of what they join to (b's subword prefix dropped), -1 where the
 * vocabulary has none, for i < n.  The vocabulary is only read, so the
 * threads take a share each, and each share asks for its look-ups
 * VOCAB_BATCH at a time (vocab_fetch; GPT-2's 50,000 merges are 150,000
 * look-ups).  0, or -1 out of memory. */
static int merges_ids(const TjModel *m, const char *const *a, const char *const *b, int n, int *ids) {
    enum { PER = VOCAB_BATCH / 3 };   /* merges a batch */
    int nomem = 0, chunks = n / PER + (n % PER != 0);
#ifdef _OPENMP
    #pragma omp parallel if (n >= 4096) reduction(|:nomem)
#endif
    {
        char *joined[PER] = {0};
        size_t cap[PER] = {0};
        VocabKey k[3 * PER];
#ifdef _OPENMP
        #pragma omp for schedule(static)
#endif
        for (int c = 0; c < chunks; c++) {
            int i0 = c * PER, count = n - i0 < PER ? n - i0 : PER;
            for (int j = 0; j < count && !nomem; j++) {
                const char *x = a[i0 + j], *y = b[i0 + j];
                size_t la = strlen(x), lb = strlen(y), skip = prefix_skip(m, lb);
                if (room(&joined[j], &cap[j], la + lb + 1)) { nomem = 1; break; }
                memcpy(joined[j], x, la);
                memcpy(joined[j] + la, y + skip, lb - skip + 1);
                k[3 * j] = (VocabKey){x, la, 0};
                k[3 * j + 1] = (VocabKey){y, lb, 0};
                k[3 * j + 2] = (VocabKey){joined[j], la + lb - skip, 0};
            }
            if (nomem) continue;
            vocab_fetch(&m->vocab, k, 3 * count);
            for (int q = 0; q < 3 * count; q++)
                ids[3 * (size_t)i0 + q] = m->vocab.cap ? m->vocab.slot[vocab_slot(&m->vocab, k[q].s, k[q].n, k[q].h)].id : -1;
        }
        for (int j = 0; j < PER; j++) free(joined[j]);
    }
    return nomem ? -1 : 0;
}

/* Merge i as (ids[3i], ids[3i + 1]) → (rank i, ids[3i + 2]), for i < n, each
 * slot asked for a few merges ahead.  0; 1 + i for the first merge i with a
 * token the vocabulary lacks (an id of -1); -1 out of memory. */
static int merges_put(TjMerges *mt, const int *ids, int n) {
    enum { AHEAD = 32 };
    int cap = table_cap(n);
    if (cap < 0 || (cap > mt->cap && merges_resize(mt, cap))) return -1;   /* at its size at once: a doubling was 0.5 ms */
    for (int i = 0; i < n; i++) {
        const int *id = ids + 3 * (size_t)i;
        if (i + AHEAD < n) merges_prefetch(mt, id[3 * AHEAD], id[3 * AHEAD + 1]);
        if (id[0] < 0 || id[1] < 0 || id[2] < 0) return 1 + i;
        if (tj_merges_put(mt, id[0], id[1], i, id[2])) return -1;
    }
    return 0;
}

/* The token of merge (a, b) that the vocabulary lacks, given its ids: a, b,
 * or their join (written to buf). */
static const char *merge_missing(const TjModel *m, const char *a, const char *b, const int id[3], char *buf,
                                 size_t bufn) {
    if (id[0] < 0) return a;
    if (id[1] < 0) return b;
    snprintf(buf, bufn, "%s%s", a, b + prefix_skip(m, strlen(b)));
    return buf;
}

/* One merge: "a b" or ["a", "b"] → its two tokens, pointing into j, or for
 * the string form into text at *used (the string copied, cut at its space). */
static int merge_pair(const cJSON *e, char *text, size_t *used, const char **a, const char **b) {
    if (cJSON_IsString(e)) {
        const char *s = e->valuestring, *sp = strchr(s, ' ');
        if (!sp || strchr(sp + 1, ' ')) return -1;
        char *t = text + *used;
        memcpy(t, s, strlen(s) + 1);
        t[sp - s] = '\0';
        *a = t;
        *b = t + (sp - s) + 1;
        *used += strlen(s) + 1;
        return 0;
    }
    if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 || !cJSON_IsString(e->child) || !cJSON_IsString(e->child->next)) return -1;
    *a = e->child->valuestring;
    *b = e->child->next->valuestring;
    return 0;
}

static int parse_merges(TjModel *m, const cJSON *list, const TjCtx *c) {
    if (!list) return 0;
    if (!cJSON_IsArray(list)) return tj_fail(c, "model.merges", "must be a list");
    size_t bytes = 1, used = 0;
    int n = 0, rc = 0;
    for (const cJSON *e = list->child; e; e = e->next, n++)
        if (cJSON_IsString(e) && !size_add(&bytes, bytes, strlen(e->valuestring) + 1))
            return tj_fail(c, "model.merges", "out of memory");
    char *text = malloc(bytes), where[64], miss[128];   /* where, miss: written only for a message */
    const char **a = malloc((size_t)(n ? n : 1) * sizeof *a), **b = malloc((size_t)(n ? n : 1) * sizeof *b);
    int *ids = malloc((size_t)(n ? n : 1) * 3 * sizeof *ids);
#define WHERE(i) (snprintf(where, sizeof where, "model.merges[%d]", i), where)
    if (!text || !a || !b || !ids) rc = tj_fail(c, "model.merges", "out of memory");
    int i = 0;
    for (const cJSON *e = list->child; e && rc == 0; e = e->next, i++)
        if (merge_pair(e, text, &used, &a[i], &b[i])) rc = tj_fail(c, WHERE(i), "a merge is \"A B\" or [\"A\", \"B\"]");
    if (rc == 0 && merges_ids(m, a, b, n, ids)) rc = tj_fail(c, "model.merges", "out of memory");
    int r = rc ? 0 : merges_put(&m->merges, ids, n);
    if (r < 0) rc = tj_fail(c, "model.merges", "out of memory");
    else if (r > 0)
        rc = tj_fail(c, WHERE(r - 1), "the token \"%.40s\" is not in the vocabulary",
                     merge_missing(m, a[r - 1], b[r - 1], ids + 3 * (size_t)(r - 1), miss, sizeof miss));
#undef WHERE
    free(text);
    free(a);
    free(b);
    free(ids);
    return rc;
}

/* The model's type: "type", or inferred as the library does when absent. */
static int model_kind(const cJSON *j, const TjCtx *c) {
    const char *type = tj_str(j, "type");
    if (type) {
        if (!strcmp(type, "BPE")) return TJ_MODEL_BPE;
        if (!strcmp(type, "WordPiece")) return TJ_MODEL_WORDPIECE;
        if (!strcmp(type, "WordLevel")) return TJ_MODEL_WORDLEVEL;
        if (!strcmp(type, "Unigram")) return tj_fail(c, "model.type", "Unigram models are not supported");
        return tj_fail(c, "model.type", "the model \"%.40s\" is not supported", type);
    }
    if (tj_get(j, "merges")) return TJ_MODEL_BPE;
    if (cJSON_IsArray(tj_get(j, "vocab"))) return tj_fail(c, "model", "Unigram models are not supported");
    if (tj_get(j, "max_input_chars_per_word") || tj_str(j, "continuing_subword_prefix")) return TJ_MODEL_WORDPIECE;
    return TJ_MODEL_WORDLEVEL;
}

static int parse_options(TjModel *m, const cJSON *j, const TjCtx *c) {
    int bad = 0;
    m->unk_token = tj_dup(tj_str(j, "unk_token"), &bad);
    m->prefix = tj_dup(tj_str(j, "continuing_subword_prefix"), &bad);
    m->suffix = tj_dup(tj_str(j, "end_of_word_suffix"), &bad);
    if (bad) return tj_fail(c, "model", "out of memory");
    if (m->kind == TJ_MODEL_WORDPIECE) {
        if (!m->prefix && !(m->prefix = tj_dup("##", &bad))) return tj_fail(c, "model", "out of memory");
        if (!m->unk_token && !(m->unk_token = tj_dup("[UNK]", &bad))) return tj_fail(c, "model", "out of memory");
        const cJSON *mx = tj_get(j, "max_input_chars_per_word");
        if (mx && (!cJSON_IsNumber(mx) || mx->valuedouble < 0))
            return tj_fail(c, "model.max_input_chars_per_word", "must be a number >= 0");
        m->max_chars = mx ? (mx->valuedouble > 1e9 ? 1000000000 : (int)mx->valuedouble) : 100;
    }
    if (m->kind == TJ_MODEL_WORDLEVEL && !m->unk_token && !(m->unk_token = tj_dup("<unk>", &bad)))
        return tj_fail(c, "model", "out of memory");
    m->fuse_unk = tj_bool(j, "fuse_unk", 0);
    m->byte_fallback = tj_bool(j, "byte_fallback", 0);
    m->ignore_merges = tj_bool(j, "ignore_merges", 0);
    if (m->fuse_unk < 0 || m->byte_fallback < 0 || m->ignore_merges < 0)
        return tj_fail(c, "model", "fuse_unk, byte_fallback and ignore_merges must be true or false");
    const cJSON *drop = tj_get(j, "dropout");
    if (drop && (!cJSON_IsNumber(drop) || drop->valuedouble < 0 || drop->valuedouble > 1))
        return tj_fail(c, "model.dropout", "must be a number in [0, 1] or null");
    return 0;
}

/* byte_fallback's ids: "<0x00>" … "<0xFF>", -1 each when absent. */
static void byte_ids(TjModel *m) {
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        m->byte_id[b] = vocab_get(m, name, strlen(name));
    }
}

int tj_model_parse(TjModel *m, const cJSON *j, const TjCtx *c) {
    if (!cJSON_IsObject(j)) return tj_fail(c, "model", "is missing or not an object");
    int kind = model_kind(j, c);
    if (kind < 0) return -1;
    m->kind = kind;
    if (parse_options(m, j, c) || parse_vocab(m, tj_get(j, "vocab"), c)) return -1;
    m->unk = m->unk_token ? vocab_get(m, m->unk_token, strlen(m->unk_token)) : -1;
    byte_ids(m);
    return m->kind == TJ_MODEL_BPE ? parse_merges(m, tj_get(j, "merges"), c) : 0;
}

/* ---- GPT-2's vocab.json + merges.txt ---- */

/* ---- a tokenizer file's tree in one arena (tokjson_model.h) ----
 * cJSON allocates a node and a key for each of vocab.json's 50,000 entries,
 * and malloc and free were a third of the file's parse.  For the parse
 * cJSON's hooks allocate from chunks freed together (arena_free).  The arena
 * is per thread: on another thread the hooks are malloc and free as always,
 * so its cJSON is untouched while they are set. */
typedef struct ArenaChunk { struct ArenaChunk *next; size_t used, size; } ArenaChunk;
#define ARENA_CHUNK (1u << 20)
#define ARENA_HEAD ((sizeof(ArenaChunk) + 15) & ~(size_t)15)
static _Thread_local int arena_active, arena_oom;
static _Thread_local ArenaChunk *arena_chunks;   /* newest first */

static void *arena_malloc(size_t n) {
    if (!arena_active) return malloc(n);
    n = (n + 15) & ~(size_t)15;
    ArenaChunk *c = arena_chunks;
    if (!c || c->size - c->used < n) {
        size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        if (size > SIZE_MAX - ARENA_HEAD || !(c = malloc(ARENA_HEAD + size))) { arena_oom = 1; return NULL; }
        *c = (ArenaChunk){arena_chunks, 0, size};
        arena_chunks = c;
    }
    void *p = (unsigned char *)c + ARENA_HEAD + c->used;
    c->used += n;
    return p;
}

static void arena_free_one(void *p) {
    if (!arena_active) free(p);   /* the arena's go all at once */
}

static void arena_free(void) {
    while (arena_chunks) {
        ArenaChunk *next = arena_chunks->next;
        free(arena_chunks);
        arena_chunks = next;
    }
}

cJSON *tj_json_parse(const char *text, size_t len, const char **end, int *oom) {
    cJSON_Hooks hooks = {arena_malloc, arena_free_one};
    arena_active = 1;
    arena_oom = 0;
    cJSON_InitHooks(&hooks);
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, end, 0);
    cJSON_InitHooks(NULL);
    arena_active = 0;
    if (oom) *oom = arena_oom;
    return arena_oom ? NULL : j;
}

void tj_json_free(void) { arena_free(); }

int tj_model_vocab_json(TjModel *m, const char *path, char *err, size_t errlen) {
    size_t len = 0, bytes = 0;
    char *text = file_read_all(path, 64u << 20, &len, err, errlen);
    if (!text) return -1;
    int oom = 0;
    const char *end = text;
    cJSON *j = tj_json_parse(text, len, &end, &oom);
    size_t at = end ? (size_t)(end - text) : 0;
    free(text);
    if (!cJSON_IsObject(j)) {
        arena_free();
        return oom ? errmsg_set(err, errlen, "out of memory reading %s", path)
               : j ? errmsg_set(err, errlen, "%s is not a JSON object", path)
                   : errmsg_set(err, errlen, "%s is not valid JSON (cut short or damaged at byte %zu)", path, at);
    }
    int n = 0, rc = 0;
    for (const cJSON *e = j->child; e; e = e->next, n++) bytes += strlen(e->string) + 1;
    m->kind = TJ_MODEL_BPE;
    m->n_ids = n;
    unsigned char *seen = calloc((size_t)(n ? n : 1), 1);
    if (!seen || vocab_reserve(m, n, bytes)) rc = errmsg_set(err, errlen, "out of memory");
    VocabBatch b = {.n = 0};
    for (const cJSON *e = rc ? NULL : j->child; e && rc == 0; e = e->next) {
        double v = cJSON_IsNumber(e) ? e->valuedouble : -1;
        int id = v >= 0 && v < n && v == (int)v ? (int)v : -1;
        if (id < 0 || seen[id])   /* a token given twice keeps its last id, as Python's json does */
            rc = errmsg_set(err, errlen, "%s: token %s has id %.15g (ids must be 0..%d, each once)", path, e->string,
                            id < 0 ? v : (double)id, n - 1);
        else if (vocab_add(m, &b, e->string, id)) rc = errmsg_set(err, errlen, "out of memory");
        else seen[id] = 1;
    }
    if (rc == 0 && vocab_flush(m, &b)) rc = errmsg_set(err, errlen, "out of memory");
    free(seen);
    arena_free();
    m->unk = -1;
    byte_ids(m);
    return rc;
}

static void merges_txt_free(TjModel *m) {
    free(m->lines);
    m->lines = NULL;
    m->lines_cap = 0;
    free(m->merges_txt);
    free(m->merges_path);
    free(m->merges_a);
    free(m->merges_b);
    free(m->merges_err);
    m->merges_txt = m->merges_path = m->merges_err = NULL;
    m->merges_a = m->merges_b = NULL;
    m->merges_n = 0;
}

/* merges.txt's lines as (A, B) pairs cut in text: a[i], b[i] for rank i.
 * Returns how many, or -1 with err (a line that is not "A B"; out of memory). */
static int merge_lines(char *text, const char *path, const char ***a, const char ***b, char *err, size_t errlen) {
    int n = 0, lines = 1;
    for (const char *p = text; (p = strchr(p, '\n')); p++) lines++;   /* room for every line, at once */
    *a = malloc((size_t)lines * sizeof **a);
    *b = malloc((size_t)lines * sizeof **b);
    if (!*a || !*b) return errmsg_set(err, errlen, "out of memory");
    for (char *line = text, *next; line && *line; line = next) {   /* a NUL ends the list */
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        if (len == 0 || !strncmp(line, "#version", 8)) continue;
        char *sp = strchr(line, ' ');
        if (!sp || sp == line || !sp[1] || strchr(sp + 1, ' '))
            return errmsg_set(err, errlen, "%s: line \"%.40s\" is not a merge \"A B\"", path, line);
        *sp = '\0';
        (*a)[n] = line;
        (*b)[n] = sp + 1;
        n++;
    }
    return n;
}

/* merges.txt's line "a b" (h: line_hash): its rank, or -1; *at: the slot it
 * is in, or the empty one where it would go. */
static int line_find(const TjModel *m, const char *a, size_t la, const char *b, size_t lb, uint32_t h, uint32_t *at) {
    uint32_t mask = (uint32_t)m->lines_cap - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        uint64_t e = m->lines[i];
        *at = i;
        if (!e) return -1;
        int r = (int)(uint32_t)e - 1;
        if ((uint32_t)(e >> 32) == h && !strncmp(m->merges_a[r], a, la) && !m->merges_a[r][la] &&
            !strncmp(m->merges_b[r], b, lb) && !m->merges_b[r][lb])
            return r;
    }
}

static uint32_t line_hash(const char *a, size_t la, const char *b, size_t lb) {
    return fnv_end(fnv_more(fnv_more(fnv_more(FNV_SEED, a, la), " ", 1), b, lb));
}

/* Every line of merges.txt in m->lines by its text; a pair met again takes
 * the later line's rank, as the library's map keeps.  0, or -1 out of memory. */
static int lines_index(TjModel *m) {
    int cap = table_cap(m->merges_n);
    if (cap < 0 || !(m->lines = calloc((size_t)cap, sizeof *m->lines))) return -1;
    m->lines_cap = cap;
    for (int r = 0; r < m->merges_n; r++) {
        const char *a = m->merges_a[r], *b = m->merges_b[r];
        size_t la = strlen(a), lb = strlen(b);
        uint32_t h = line_hash(a, la, b, lb), at;
        line_find(m, a, la, b, lb, h, &at);
        m->lines[at] = (uint64_t)h << 32 | (uint32_t)(r + 1);
    }
    return 0;
}

/* merges.txt's merge of symbols x and y (pair_merge): found by the two
 * tokens' text, and the joined token looked up only then. */
static int line_pair(const TjModel *m, int x, int y, int *rank, int *id) {
    const char *a = x >= 0 && x < m->n_ids ? m->tok[x] : NULL, *b = y >= 0 && y < m->n_ids ? m->tok[y] : NULL;
    if (!a || !b) return 0;
    size_t la = strlen(a), lb = strlen(b);
    uint32_t at;
    int r = line_find(m, a, la, b, lb, line_hash(a, la, b, lb), &at);
    if (r < 0) return 0;
    *rank = r;
    *id = vocab_get_joined(&m->vocab, a, la, b, lb);
    return 1;
}

int tj_model_merges_txt(TjModel *m, const char *path, char *err, size_t errlen) {
    if (!(m->merges_txt = file_read_all(path, 64u << 20, NULL, err, errlen))) return -1;
    if (!(m->merges_path = strdup(path))) return errmsg_set(err, errlen, "out of memory");
    char why[512];
    int n = merge_lines(m->merges_txt, path, &m->merges_a, &m->merges_b, why, sizeof why);
    if (n < 0) return (m->merges_err = strdup(why)) ? 0 : errmsg_set(err, errlen, "out of memory");
    m->merges_n = n;
    return lines_index(m) ? errmsg_set(err, errlen, "out of memory") : 0;
}

/* ---- BERT's vocab.txt ---- */

int tj_model_vocab_txt(TjModel *m, const char *path, char *err, size_t errlen) {
    size_t len = 0;
    char *text = file_read_all(path, 64u << 20, &len, err, errlen);
    if (!text) return -1;
    char **line = NULL;
    int n = 0, cap = 0, rc = 0;
    for (char *l = text, *next; l && *l && rc == 0; l = next) {   /* an empty line ends the list */
        next = strchr(l, '\n');
        if (next) *next++ = '\0';
        size_t k = strlen(l);
        if (k && l[k - 1] == '\r') l[k - 1] = '\0';
        if (n == cap) {
            cap = cap ? cap * 2 : 32768;
            char **nl = realloc(line, (size_t)cap * sizeof *nl);
            if (!nl) { rc = -1; break; }
            line = nl;
        }
        line[n++] = l;
    }
    m->kind = TJ_MODEL_WORDPIECE;
    m->n_ids = n;
    m->max_chars = 100;
    int bad = 0;
    m->prefix = tj_dup("##", &bad);
    m->unk_token = tj_dup("[UNK]", &bad);
    if (rc || bad || vocab_reserve(m, n, len + 1)) rc = -1;
    VocabBatch b = {.n = 0};
    for (int i = 0; i < n && rc == 0; i++) rc = vocab_add(m, &b, line[i], i);   /* id = line number */
    if (rc == 0) rc = vocab_flush(m, &b);
    free(line);
    free(text);
    if (rc) return errmsg_set(err, errlen, "out of memory reading %s", path);
    m->unk = vocab_get(m, "[UNK]", 5);
    byte_ids(m);
    if (m->unk < 0) return errmsg_set(err, errlen, "%s has no [UNK] token (is it a BERT vocab.txt?)", path);
    return 0;
}

void tj_model_free(TjModel *m) {
    if (!m) return;
    tjvocab_free(&m->vocab);
    free(m->tok);
    free(m->unk_token);
    free(m->prefix);
    free(m->suffix);
    tj_merges_free(&m->merges);
    merges_txt_free(m);
    memset(m, 0, sizeof *m);
}
