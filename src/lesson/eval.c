/* eval.c — the translation and attention metrics of `attnviz eval` (see eval.h). */
#include "lesson/eval.h"
#include "core/errmsg.h"
#include "lesson/corpus.h"
#include "model/decode.h"
#include "trace/maps.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------- metrics */

double eval_best_head(const EvalCount t[EVAL_MAX_LAYERS][EVAL_MAX_HEADS], int layers, int heads,
                      int *layer, int *head) {
    double best = -1;
    *layer = 0; *head = 0;
    for (int l = 0; l < layers; l++)
        for (int h = 0; h < heads; h++)
            if (t[l][h].total && eval_rate(t[l][h]) > best) { best = eval_rate(t[l][h]); *layer = l; *head = h; }
    return best < 0 ? 0.0 : best;
}

double eval_mean_heads(const EvalCount t[EVAL_MAX_LAYERS][EVAL_MAX_HEADS], int layers, int heads) {
    double s = 0;
    int n = 0;
    for (int l = 0; l < layers; l++)
        for (int h = 0; h < heads; h++)
            if (t[l][h].total) { s += eval_rate(t[l][h]); n++; }
    return n ? s / n : 0.0;
}

/* Per-pair ids, kept for one batch. */
typedef struct {
    int tag, ns, nt;
    int *src, *tgt;   /* point into the batch buffers */
} Item;

static void score_batch(Model *m, const Corpus *cp, int first, int B, const Item *it, int S,
                        const int *dec_out, const int *dec_len, int max_len, EvalReport *r,
                        unsigned char *skip) {
    const ModelConfig *c = &m->config;
    int H = c->n_heads, E = c->n_enc_layers, L = c->n_dec_layers, T = m->T;
    for (int b = 0; b < B; b++) {
        const CorpusPair *p = &cp->pairs[first + b];
        const Item *x = &it[b];
        int li = p->lang == CORPUS_LANG_VI ? 1 : 0;
        /* exact match */
        const int *o = dec_out + (size_t)b * max_len;
        int same = dec_len[b] == x->nt;
        for (int t = 0; same && t < x->nt; t++) same = o[t] == x->tgt[t];
        r->exact[li].total++;
        r->exact[li].hit += same;
        for (int j = 0; j < x->ns; j++) skip[j] = x->src[j] < VOCAB_N_SPECIAL;
        /* coreference */
        for (int k = 0; k < p->n_coref; k++) {
            int pr = p->coref[2 * k], an = p->coref[2 * k + 1];
            int any = 0, ok = 1;
            for (int q = 0; q < p->n_align; q++) {
                int t = p->align[2 * q], s = p->align[2 * q + 1];
                if (s != pr || t >= x->nt) continue;
                any = 1;
                if (t >= dec_len[b] || o[t] != x->tgt[t]) ok = 0;
                for (int l = 0; l < L; l++)
                    for (int h = 0; h < H; h++) {
                        const float *row = m->acts.dec_cross.att +
                            ((((size_t)l * m->B + b) * H + h) * T + t) * S;
                        int j = maps_argmax_link(row, x->ns, pr, skip);
                        r->coref_cross[l][h].total++;
                        r->coref_cross[l][h].hit += j == an;
                    }
            }
            if (any) { r->pronoun[li].total++; r->pronoun[li].hit += ok; }
            for (int l = 0; l < E; l++)
                for (int h = 0; h < H; h++) {
                    const float *row = m->acts.enc_self.att +
                        ((((size_t)l * m->B + b) * H + h) * S + pr) * S;
                    int j = maps_argmax_link(row, x->ns, pr, skip);
                    r->coref_enc[l][h].total++;
                    r->coref_enc[l][h].hit += j == an;
                }
        }
        /* alignment: every target token with at least one gold source */
        for (int t = 0; t < x->nt; t++) {
            int has = 0;
            for (int q = 0; q < p->n_align; q++) if (p->align[2 * q] == t) { has = 1; break; }
            if (!has) continue;
            for (int l = 0; l < L; l++)
                for (int h = 0; h < H; h++) {
                    const float *row = m->acts.dec_cross.att + ((((size_t)l * m->B + b) * H + h) * T + t) * S;
                    int j1 = maps_argmax_link(row, x->ns, -1, skip);
                    int j2 = maps_argmax_link(row, x->ns, -1, NULL);
                    int h1 = 0, h2 = 0;
                    for (int q = 0; q < p->n_align; q++) {
                        if (p->align[2 * q] != t) continue;
                        h1 |= p->align[2 * q + 1] == j1;
                        h2 |= p->align[2 * q + 1] == j2;
                    }
                    r->align[l][h].total++; r->align[l][h].hit += h1;
                    r->align_with_eos[l][h].total++; r->align_with_eos[l][h].hit += h2;
                }
        }
    }
}

static int encode(const Vocab *v, char **tok, int n, int *ids) {
    int unk = 0;
    for (int i = 0; i < n; i++) {
        ids[i] = vocab_id(v, tok[i]);
        if (ids[i] < 0) { ids[i] = VOCAB_UNK; unk++; }
    }
    return unk;
}

int eval_run(Model *m, const Vocab *v, const char *path, const EvalOptions *o,
             EvalReport *r, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    const ModelConfig *c = &m->config;
    if (c->arch != MODEL_ENC_DEC) { errmsg_set(err, errlen, "eval needs an encoder-decoder model"); return -1; }
    if (c->n_enc_layers > EVAL_MAX_LAYERS || c->n_dec_layers > EVAL_MAX_LAYERS || c->n_heads > EVAL_MAX_HEADS) {
        errmsg_set(err, errlen, "eval handles at most %d layers and %d heads", EVAL_MAX_LAYERS, EVAL_MAX_HEADS);
        return -1;
    }
    if (v->size != c->vocab_size) { errmsg_set(err, errlen, "vocabulary (%d) does not match the model (%d)", v->size, c->vocab_size); return -1; }
    r->n_enc_layers = c->n_enc_layers; r->n_dec_layers = c->n_dec_layers; r->n_heads = c->n_heads;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    Corpus cp = {0};
    if (corpus_read_tsv(&cp, path, err, errlen)) return -1;
    int n = cp.n;
    if (o->limit > 0 && o->limit < n) n = o->limit;
    int BB = o->batch > 0 ? o->batch : 64;
    int rc = -1;
    int maxS = 1, maxT = 1;
    for (int i = 0; i < n; i++) {
        if (cp.pairs[i].n_src + 1 > maxS) maxS = cp.pairs[i].n_src + 1;
        if (cp.pairs[i].n_tgt + 1 > maxT) maxT = cp.pairs[i].n_tgt + 1;
    }
    if (maxS > c->max_len || maxT > c->max_len) {
        errmsg_set(err, errlen, "%s has a sentence longer than the model's max_len %d", path, c->max_len);
        corpus_free(&cp);
        return -1;
    }
    int max_dec = maxT + 8 < c->max_len - 1 ? maxT + 8 : c->max_len - 1;
    Item *it = malloc((size_t)BB * sizeof *it);
    int *sbuf = malloc((size_t)BB * maxS * sizeof(int)), *tbuf = malloc((size_t)BB * maxT * sizeof(int));
    int *src = malloc((size_t)BB * maxS * sizeof(int)), *slen = malloc((size_t)BB * sizeof(int));
    int *tags = malloc((size_t)BB * sizeof(int)), *dout = malloc((size_t)BB * max_dec * sizeof(int));
    int *dlen = malloc((size_t)BB * sizeof(int)), *din = malloc((size_t)BB * maxT * sizeof(int));
    int *tlen = malloc((size_t)BB * sizeof(int));
    unsigned char *skip = malloc((size_t)maxS);
    if (!it || !sbuf || !tbuf || !src || !slen || !tags || !dout || !dlen || !din || !tlen || !skip) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    for (int first = 0; first < n; first += BB) {
        int B = n - first < BB ? n - first : BB, S = 1, T = 1;
        for (int b = 0; b < B; b++) {
            const CorpusPair *p = &cp.pairs[first + b];
            Item *x = &it[b];
            x->tag = p->lang == CORPUS_LANG_VI ? VOCAB_2VI : VOCAB_2FR;
            x->src = sbuf + (size_t)b * maxS; x->tgt = tbuf + (size_t)b * maxT;
            encode(v, p->src, p->n_src, x->src);
            x->src[p->n_src] = VOCAB_EOS;
            x->ns = p->n_src + 1;
            encode(v, p->tgt, p->n_tgt, x->tgt);
            x->nt = p->n_tgt;
            if (x->ns > S) S = x->ns;
            if (x->nt + 1 > T) T = x->nt + 1;
        }
        for (int b = 0; b < B; b++) {
            for (int j = 0; j < S; j++) src[(size_t)b * S + j] = j < it[b].ns ? it[b].src[j] : VOCAB_PAD;
            slen[b] = it[b].ns;
            tags[b] = it[b].tag;
        }
        if (decode_greedy_batch(m, src, slen, S, tags, B, max_dec, dout, dlen, err, errlen)) goto done;
        /* teacher-forced pass for the attention metrics */
        for (int b = 0; b < B; b++) {
            int *d = din + (size_t)b * T;
            d[0] = it[b].tag;
            for (int t = 1; t < T; t++) d[t] = t - 1 < it[b].nt ? it[b].tgt[t - 1] : VOCAB_PAD;
            tlen[b] = it[b].nt + 1;
        }
        if (model_forward(m, src, slen, S, din, tlen, T, B)) { errmsg_set(err, errlen, "%s", m->err); goto done; }
        score_batch(m, &cp, first, B, it, S, dout, dlen, max_dec, r, skip);
    }
    r->n_pairs = n;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    rc = 0;
done:
    free(it); free(sbuf); free(tbuf); free(src); free(slen); free(tags); free(dout); free(dlen);
    free(din); free(tlen); free(skip);
    corpus_free(&cp);
    return rc;
}

void eval_metadata_json(const EvalReport *r, const char *split, char *coref, size_t coref_len, char *summary,
                        size_t summary_len) {
    int cl, ch, al, ah;
    double cacc = eval_best_head(r->coref_enc, r->n_enc_layers, r->n_heads, &cl, &ch);
    double aacc = eval_best_head(r->align, r->n_dec_layers, r->n_heads, &al, &ah);
    EvalCount pron = {r->pronoun[0].hit + r->pronoun[1].hit, r->pronoun[0].total + r->pronoun[1].total};
    snprintf(coref, coref_len, "{\"map\":\"encoder.%d.self\",\"head\":%d,\"accuracy\":%.4f}", cl, ch, cacc);
    snprintf(summary, summary_len,
             "{\"split\":\"%s\",\"pairs\":%ld,\"translation_exact_match\":{\"fr\":%.4f,\"vi\":%.4f},"
             "\"pronoun_accuracy\":%.4f,\"coreference_head\":%s,"
             "\"alignment\":{\"map\":\"decoder.%d.cross\",\"head\":%d,\"accuracy\":%.4f}}",
             split, r->n_pairs, eval_rate(r->exact[0]), eval_rate(r->exact[1]), eval_rate(pron), coref, al, ah, aacc);
}
