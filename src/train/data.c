/* data.c — the training set in id form, its batches, the order of an epoch
 * and the attention-supervision targets of a batch (see data.h). */
#include "train/data.h"
#include "core/errmsg.h"
#include "core/rng.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void train_set_init(TrainSet *s) { memset(s, 0, sizeof *s); }

void train_set_free(TrainSet *s) {
    if (!s) return;
    free(s->src_seen);
    free(s->ex);
    free(s->ids);
    free(s->align);
    memset(s, 0, sizeof *s);
}

int train_set_add(TrainSet *s, int lang_tag, const int *src, int src_len,
                  const int *tgt, int tgt_len, char *err, size_t errlen) {
    if (src_len < 1 || tgt_len < 0) { errmsg_set(err, errlen, "empty sentence pair"); return -1; }
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 1024;
        TrainExample *e = realloc(s->ex, (size_t)cap * sizeof *e);
        if (!e) { errmsg_set(err, errlen, "out of memory"); return -1; }
        s->ex = e; s->cap = cap;
    }
    size_t need = s->n_ids + (size_t)src_len + (size_t)tgt_len;
    if (need > s->cap_ids) {
        size_t cap = s->cap_ids ? 2 * s->cap_ids : 65536;
        while (cap < need) cap *= 2;
        int *ids = realloc(s->ids, cap * sizeof *ids);
        if (!ids) { errmsg_set(err, errlen, "out of memory"); return -1; }
        /* re-point the examples into the moved block */
        for (int i = 0; i < s->n; i++) {
            s->ex[i].src = ids + (s->ex[i].src - s->ids);
            s->ex[i].tgt = ids + (s->ex[i].tgt - s->ids);
        }
        s->ids = ids; s->cap_ids = cap;
    }
    TrainExample *e = &s->ex[s->n++];
    e->lang_tag = lang_tag;
    e->src_len = src_len;
    e->tgt_len = tgt_len;
    e->coref_p = e->coref_a = -1;
    e->n_align = 0;
    e->align_off = s->n_align;
    e->src = s->ids + s->n_ids;
    memcpy(e->src, src, (size_t)src_len * sizeof(int));
    e->tgt = e->src + src_len;
    if (tgt_len) memcpy(e->tgt, tgt, (size_t)tgt_len * sizeof(int));
    s->n_ids = need;
    if (src_len > s->max_src) s->max_src = src_len;
    if (tgt_len > s->max_tgt) s->max_tgt = tgt_len;
    return 0;
}

/* Encodes words into ids.  A word missing from the vocabulary becomes <unk>
 * (a name or number the model learns to copy, spec C) when it is one of the
 * pair's source words copy[0..n_copy); otherwise -1 and *bad names it. */
static int encode_words(const Vocab *v, char *const *words, int n, char *const *copy, int n_copy, int *ids,
                        const char **bad) {
    for (int i = 0; i < n; i++) {
        int id = vocab_id(v, words[i]);
        for (int j = 0; id < 0 && j < n_copy; j++)
            if (!strcmp(copy[j], words[i])) id = VOCAB_UNK;
        if (id < 0) { *bad = words[i]; return -1; }
        ids[i] = id;
    }
    return n;
}

/* s->src_seen covers at least n vocabulary ids (zeros added).  0 or -1. */
static int ensure_src_seen(TrainSet *s, int n) {
    if (n <= s->n_vocab_seen) return 0;
    unsigned char *p = realloc(s->src_seen, (size_t)n);
    if (!p) return -1;
    memset(p + s->n_vocab_seen, 0, (size_t)(n - s->n_vocab_seen));
    s->src_seen = p;
    s->n_vocab_seen = n;
    return 0;
}

/* Appends the alignment pairs al (n, 2) to s for its last example. 0 or -1. */
static int add_align(TrainSet *s, const int *al, int n) {
    TrainExample *e = &s->ex[s->n - 1];
    for (int q = 0; q < n; q++) {
        if (s->n_align == s->cap_align) {
            size_t c2 = s->cap_align ? 2 * s->cap_align : 65536;
            int *a = realloc(s->align, c2 * 2 * sizeof(int));
            if (!a) return -1;
            s->align = a; s->cap_align = c2;
        }
        s->align[2 * s->n_align] = al[2 * q];
        s->align[2 * s->n_align + 1] = al[2 * q + 1];
        s->n_align++;
        e->n_align++;
    }
    return 0;
}

/* One pair of a corpus as an example (data.h's rules).  0, or -1 with err. */
static int add_pair(TrainSet *s, const CorpusPair *p, const char *path, const Vocab *v, char *err, size_t errlen) {
    int src[TRAIN_MAX_TOKENS + 1], tgt[TRAIN_MAX_TOKENS];
    const char *bad = NULL;
    if (p->n_src > TRAIN_MAX_TOKENS || p->n_tgt > TRAIN_MAX_TOKENS)
        return errmsg_set(err, errlen, "%s:%d: sentence too long (at most %d tokens)", path, p->line, TRAIN_MAX_TOKENS);
    encode_words(v, p->src, p->n_src, p->src, p->n_src, src, &bad);   /* an unknown source word is its own copy */
    int ns = p->n_src;
    src[ns++] = VOCAB_EOS;
    if (encode_words(v, p->tgt, p->n_tgt, p->src, p->n_src, tgt, &bad) < 0)
        return errmsg_set(err, errlen, "%s:%d: target token '%s' is neither in the vocabulary nor a word of the "
                          "source to copy", path, p->line, bad);
    for (int i = 0; i < ns; i++) if (src[i] >= 0 && src[i] < s->n_vocab_seen) s->src_seen[src[i]] = 1;
    if (train_set_add(s, p->lang == CORPUS_LANG_VI ? VOCAB_2VI : VOCAB_2FR, src, ns, tgt, p->n_tgt, err, errlen))
        return -1;
    if (add_align(s, p->align, p->n_align)) return errmsg_set(err, errlen, "out of memory");
    if (p->n_coref > 0) {
        s->ex[s->n - 1].coref_p = p->coref[0];
        s->ex[s->n - 1].coref_a = p->coref[1];
        s->n_coref_unused += p->n_coref - 1;
    }
    return 0;
}

int train_set_from_corpus(TrainSet *s, const Corpus *c, const char *path, const Vocab *v, char *err, size_t errlen) {
    if (ensure_src_seen(s, v->size)) return errmsg_set(err, errlen, "out of memory");
    for (int i = 0; i < c->n; i++)
        if (add_pair(s, &c->pairs[i], path, v, err, errlen)) return -1;
    if (s->n == 0) return errmsg_set(err, errlen, "%s has no sentence pairs", path);
    return 0;
}

int train_set_read_tsv(TrainSet *s, const char *path, const Vocab *v, char *err, size_t errlen) {
    Corpus c;
    if (corpus_read_tsv(&c, path, err, errlen)) return -1;
    int rc = train_set_from_corpus(s, &c, path, v, err, errlen);
    corpus_free(&c);
    return rc;
}

void batch_free(Batch *b) {
    if (!b) return;
    free(b->src); free(b->src_len); free(b->dec_in); free(b->tgt_len); free(b->targets);
    memset(b, 0, sizeof *b);
}

int batch_make(Batch *b, const TrainSet *s, const int *idx, int B) {
    int S = 1, T = 1;
    for (int i = 0; i < B; i++) {
        const TrainExample *e = &s->ex[idx[i]];
        if (e->src_len > S) S = e->src_len;
        if (e->tgt_len + 1 > T) T = e->tgt_len + 1;
    }
    if (B > b->cap_B || (size_t)B * S > (size_t)b->cap_B * b->cap_S || (size_t)B * T > (size_t)b->cap_B * b->cap_T) {
        int cB = B > b->cap_B ? B : b->cap_B, cS = S > b->cap_S ? S : b->cap_S, cT = T > b->cap_T ? T : b->cap_T;
        int *a1 = realloc(b->src, (size_t)cB * cS * sizeof(int));
        if (a1) b->src = a1;
        int *a2 = realloc(b->src_len, (size_t)cB * sizeof(int));
        if (a2) b->src_len = a2;
        int *a3 = realloc(b->dec_in, (size_t)cB * cT * sizeof(int));
        if (a3) b->dec_in = a3;
        int *a4 = realloc(b->tgt_len, (size_t)cB * sizeof(int));
        if (a4) b->tgt_len = a4;
        int *a5 = realloc(b->targets, (size_t)cB * cT * sizeof(int));
        if (a5) b->targets = a5;
        if (!a1 || !a2 || !a3 || !a4 || !a5) return -1;
        b->cap_B = cB; b->cap_S = cS; b->cap_T = cT;
    }
    b->B = B; b->S = S; b->T = T; b->n_tokens = 0;
    for (int i = 0; i < B; i++) {
        const TrainExample *e = &s->ex[idx[i]];
        int *src = b->src + (size_t)i * S, *din = b->dec_in + (size_t)i * T, *tg = b->targets + (size_t)i * T;
        for (int j = 0; j < S; j++) src[j] = j < e->src_len ? e->src[j] : VOCAB_PAD;
        din[0] = e->lang_tag;
        for (int j = 1; j < T; j++) din[j] = j - 1 < e->tgt_len ? e->tgt[j - 1] : VOCAB_PAD;
        for (int j = 0; j < T; j++) tg[j] = j < e->tgt_len ? e->tgt[j] : j == e->tgt_len ? VOCAB_EOS : VOCAB_PAD;
        b->src_len[i] = e->src_len;
        b->tgt_len[i] = e->tgt_len + 1;
        b->n_tokens += e->src_len + e->tgt_len + 1;
    }
    return 0;
}

typedef struct { int a, b; uint64_t r; int i; } SortKey;
static int cmp_key(const void *x, const void *y) {
    const SortKey *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->r != q->r) return p->r < q->r ? -1 : 1;
    return p->i < q->i ? -1 : p->i > q->i;
}

int train_epoch_batches(const TrainSet *s, int B, uint64_t seed, long epoch,
                        int **order, int **starts, int *n_batches) {
    *order = NULL; *starts = NULL; *n_batches = 0;
    if (s->n < 1 || B < 1) return -1;
    uint64_t st = seed * 0x2545F4914F6CDD1Dull + (uint64_t)epoch * 0x9E3779B97F4A7C15ull + 1;
    SortKey *k = malloc((size_t)s->n * sizeof *k);
    int nb = (s->n + B - 1) / B;
    int *ord = malloc((size_t)s->n * sizeof *ord), *stt = malloc((size_t)(nb + 1) * sizeof *stt);
    int *perm = malloc((size_t)nb * sizeof *perm);
    if (!k || !ord || !stt || !perm) { free(k); free(ord); free(stt); free(perm); return -1; }
    for (int i = 0; i < s->n; i++) {
        k[i].a = s->ex[i].src_len; k[i].b = s->ex[i].tgt_len; k[i].r = rng_splitmix64(&st); k[i].i = i;
    }
    qsort(k, (size_t)s->n, sizeof *k, cmp_key);
    /* shuffle the runs (Fisher–Yates) */
    for (int i = 0; i < nb; i++) perm[i] = i;
    for (int i = nb - 1; i > 0; i--) {
        int j = (int)(rng_splitmix64(&st) % (uint64_t)(i + 1));
        int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    int pos = 0;
    for (int r = 0; r < nb; r++) {
        stt[r] = pos;
        int begin = perm[r] * B, end = begin + B < s->n ? begin + B : s->n;
        for (int i = begin; i < end; i++) ord[pos++] = k[i].i;
    }
    stt[nb] = pos;
    free(k); free(perm);
    *order = ord; *starts = stt; *n_batches = nb;
    return 0;
}

/* ------------------------------------------------- attention supervision */

void train_attn_targets(const TrainSet *s, const int *idx, const Batch *b, float *coref, float *align,
                        int *n_coref, int *n_align) {
    int B = b->B, S = b->S, T = b->T, nc = 0, na = 0;
    if (coref) memset(coref, 0, sizeof(float) * (size_t)B * S * S);
    if (align) memset(align, 0, sizeof(float) * (size_t)B * T * S);
    for (int i = 0; i < B; i++) {
        const TrainExample *e = &s->ex[idx[i]];
        if (coref && e->coref_p >= 0 && e->coref_p < S && e->coref_a < S) {
            coref[((size_t)i * S + e->coref_p) * S + e->coref_a] = 1.0f;
            nc++;
        }
        if (!align) continue;
        const int *al = s->align + 2 * e->align_off;
        for (int t = 0; t < e->tgt_len && t < T; t++) {
            int k = 0;
            for (int q = 0; q < e->n_align; q++) k += al[2 * q] == t;
            if (!k) continue;
            float *row = align + ((size_t)i * T + t) * S;
            for (int q = 0; q < e->n_align; q++)
                if (al[2 * q] == t) row[al[2 * q + 1]] += 1.0f / (float)k;
            na++;
        }
    }
    if (n_coref) *n_coref = nc;
    if (n_align) *n_align = na;
}
