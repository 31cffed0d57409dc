/* eval.c — the translation and attention metrics of `attnviz eval` (see eval.h). */
#include "lesson/eval.h"
#include "core/errmsg.h"
#include "core/strbuf.h"
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
                        unsigned char *skip, int attn, int trans) {
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
        if (trans) { r->exact[li].total++; r->exact[li].hit += same; }
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
                for (int l = 0; l < L && attn; l++)
                    for (int h = 0; h < H; h++) {
                        const float *row = m->acts.dec_cross.att +
                            ((((size_t)l * m->B + b) * H + h) * T + t) * S;
                        int j = maps_argmax_link(row, x->ns, pr, skip);
                        r->coref_cross[l][h].total++;
                        r->coref_cross[l][h].hit += j == an;
                    }
            }
            if (any && trans) { r->pronoun[li].total++; r->pronoun[li].hit += ok; }
            for (int l = 0; l < E && attn; l++)
                for (int h = 0; h < H; h++) {
                    const float *row = m->acts.enc_self.att +
                        ((((size_t)l * m->B + b) * H + h) * S + pr) * S;
                    int j = maps_argmax_link(row, x->ns, pr, skip);
                    r->coref_enc[l][h].total++;
                    r->coref_enc[l][h].hit += j == an;
                }
        }
        /* alignment: every target token with at least one gold source */
        for (int t = 0; t < x->nt && attn; t++) {
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

/* The greedy outputs of a batch (B, max_dec) after its teacher-forced forward.
 * Greedy search reproduces the gold target exactly when, given the gold
 * prefix, its choice (decode_pick) is the gold token at every position and
 * <eos> after it; those pairs are read off the teacher-forced logits, and only
 * the others are decoded (decode_greedy_batch) — the same outputs, fewer passes. */
static int greedy_outputs(Model *m, const Item *it, int B, const int *src, const int *slen, int S, const int *tags,
                          int max_dec, int *dout, int *dlen, char *err, size_t errlen) {
    int V = m->config.vocab_size, T = m->T, n = 0;
    int *idx = malloc((size_t)B * sizeof(int)), *s2 = malloc((size_t)B * S * sizeof(int));
    int *l2 = malloc((size_t)B * sizeof(int)), *t2 = malloc((size_t)B * sizeof(int));
    int *o2 = malloc((size_t)B * max_dec * sizeof(int)), *n2 = malloc((size_t)B * sizeof(int));
    int rc = -1;
    if (!idx || !s2 || !l2 || !t2 || !o2 || !n2) { errmsg_set(err, errlen, "out of memory"); goto done; }
    for (int b = 0; b < B; b++) {
        const Item *x = &it[b];
        int ok = x->nt < max_dec;
        for (int t = 0; ok && t <= x->nt; t++)
            ok = decode_pick(m->acts.logits + ((size_t)b * T + t) * V, V) == (t < x->nt ? x->tgt[t] : VOCAB_EOS);
        if (ok) {
            memcpy(dout + (size_t)b * max_dec, x->tgt, (size_t)x->nt * sizeof(int));
            dlen[b] = x->nt;
            continue;
        }
        memcpy(s2 + (size_t)n * S, src + (size_t)b * S, (size_t)S * sizeof(int));
        l2[n] = slen[b]; t2[n] = tags[b]; idx[n++] = b;
    }
    if (n > 0 && decode_greedy_batch(m, s2, l2, S, t2, n, max_dec, o2, n2, err, errlen)) goto done;
    for (int k = 0; k < n; k++) {
        memcpy(dout + (size_t)idx[k] * max_dec, o2 + (size_t)k * max_dec, (size_t)max_dec * sizeof(int));
        dlen[idx[k]] = n2[k];
    }
    rc = 0;
done:
    free(idx); free(s2); free(l2); free(t2); free(o2); free(n2);
    return rc;
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
        /* teacher-forced pass: the attention metrics, and the pairs greedy search gets right */
        for (int b = 0; b < B; b++) {
            int *d = din + (size_t)b * T;
            d[0] = it[b].tag;
            for (int t = 1; t < T; t++) d[t] = t - 1 < it[b].nt ? it[b].tgt[t - 1] : VOCAB_PAD;
            tlen[b] = it[b].nt + 1;
        }
        if (model_forward(m, src, slen, S, din, tlen, T, B)) { errmsg_set(err, errlen, "%s", m->err); goto done; }
        if (!o->translation_only) score_batch(m, &cp, first, B, it, S, dout, dlen, max_dec, r, skip, 1, 0);
        if (greedy_outputs(m, it, B, src, slen, S, tags, max_dec, dout, dlen, err, errlen)) goto done;
        score_batch(m, &cp, first, B, it, S, dout, dlen, max_dec, r, skip, 0, 1);
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

/* ------------------------------------------------------------- knock-outs */

int eval_ablation_run(Model *m, const Vocab *v, const char *path, const EvalOptions *o, EvalAblation *ab,
                      EvalProgress progress, void *ctx, char *err, size_t errlen) {
    memset(ab, 0, sizeof *ab);
    const ModelConfig *c = &m->config;
    if (m->n_ablated > 0) return errmsg_set(err, errlen, "eval --ablation knocks out one head at a time; give no --ablate");
    int total = 0;
    for (int k = 0; k < 3; k++) total += model_attn_layers(c, (ModelAttnKind)k) * c->n_heads;
    ab->rows = calloc((size_t)total, sizeof *ab->rows);
    if (!ab->rows) return errmsg_set(err, errlen, "out of memory");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    EvalOptions oo = *o;
    oo.translation_only = 1;
    EvalReport r;
    if (eval_run(m, v, path, &oo, &r, err, errlen)) goto fail;
    ab->pairs = r.n_pairs;
    memcpy(ab->baseline.exact, r.exact, sizeof r.exact);
    memcpy(ab->baseline.pronoun, r.pronoun, sizeof r.pronoun);
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < model_attn_layers(c, (ModelAttnKind)k); l++)
            for (int h = 0; h < c->n_heads; h++) {
                clock_gettime(CLOCK_MONOTONIC, &t1);
                if (progress) progress(ctx, ab->n_rows, total, (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9);
                EvalAblationRow *row = &ab->rows[ab->n_rows];
                row->kind = (ModelAttnKind)k; row->layer = l; row->head = h;
                if (model_ablate_head(m, row->kind, l, h, MODEL_ABLATE_ZERO, NULL)) { errmsg_set(err, errlen, "%s", m->err); goto fail; }
                int rc = eval_run(m, v, path, &oo, &r, err, errlen);
                model_ablate_clear(m);
                if (rc) goto fail;
                memcpy(row->exact, r.exact, sizeof r.exact);
                memcpy(row->pronoun, r.pronoun, sizeof r.pronoun);
                ab->n_rows++;
            }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ab->seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (progress) progress(ctx, total, total, ab->seconds);
    return 0;
fail:
    eval_ablation_free(ab);
    return -1;
}

double eval_ablation_pronoun(const EvalAblationRow *r) {
    return eval_rate((EvalCount){r->pronoun[0].hit + r->pronoun[1].hit, r->pronoun[0].total + r->pronoun[1].total});
}

/* Most harmful first: the larger fall in pronoun accuracy, then in exact match. */
static int row_cmp(const void *a, const void *b) {
    const EvalAblationRow *x = a, *y = b;
    double px = eval_ablation_pronoun(x), py = eval_ablation_pronoun(y);
    if (px != py) return px < py ? -1 : 1;
    double ex = eval_rate(x->exact[0]) + eval_rate(x->exact[1]), ey = eval_rate(y->exact[0]) + eval_rate(y->exact[1]);
    if (ex != ey) return ex < ey ? -1 : 1;
    if (x->kind != y->kind) return x->kind - y->kind;
    if (x->layer != y->layer) return x->layer - y->layer;
    return x->head - y->head;
}

void eval_ablation_sort(EvalAblation *ab) { qsort(ab->rows, (size_t)ab->n_rows, sizeof *ab->rows, row_cmp); }

/* The fields of one row (or the baseline) as JSON members. */
static int row_json(StrBuf *b, const EvalAblationRow *r) {
    return strbuf_printf(b, "\"pronoun_accuracy\": %.4f, \"pronoun_accuracy_by_language\": {\"fr\": %.4f, \"vi\": %.4f}, "
                         "\"translation_exact_match\": {\"fr\": %.4f, \"vi\": %.4f}",
                         eval_ablation_pronoun(r), eval_rate(r->pronoun[0]), eval_rate(r->pronoun[1]),
                         eval_rate(r->exact[0]), eval_rate(r->exact[1]));
}

char *eval_ablation_json(const EvalAblation *ab, int rows, const char *split) {
    StrBuf b = {0};
    int bad = strbuf_printf(&b, "{\"split\": \"%s\", \"pairs\": %ld, \"seconds\": %.1f, \"knock_out\": \"zero\",\n"
                            " \"baseline\": {", split, ab->pairs, ab->seconds);
    bad |= row_json(&b, &ab->baseline);
    bad |= strbuf_printf(&b, "},\n \"ablation\": [");
    for (int i = 0; i < ab->n_rows && (rows <= 0 || i < rows); i++) {
        char map[64];
        model_attn_map_name(ab->rows[i].kind, ab->rows[i].layer, map, sizeof map);
        bad |= strbuf_printf(&b, "%s\n  {\"map\": \"%s\", \"head\": %d, ", i ? "," : "", map, ab->rows[i].head);
        bad |= row_json(&b, &ab->rows[i]);
        bad |= strbuf_printf(&b, "}");
    }
    bad |= strbuf_printf(&b, "]}");
    if (bad) { free(b.buf); return NULL; }
    return b.buf;
}

void eval_ablation_free(EvalAblation *ab) {
    if (!ab) return;
    free(ab->rows);
    memset(ab, 0, sizeof *ab);
}
