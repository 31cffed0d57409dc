/* eval.c — the translation and attention metrics of `attnviz eval` (see eval.h). */
#include "train/eval.h"
#include "train/chrf.h"
#include "core/errmsg.h"
#include "core/strbuf.h"
#include "corpus/tsv.h"
#include "model/checkpoint.h"
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

#define EVAL_MAX_LEN 1024   /* the longest decoder input copy_sources handles */

/* Per-pair ids, kept for one batch. */
typedef struct {
    int tag, ns, nt;
    int *src, *tgt;   /* point into the batch buffers */
} Item;

/* One coreference link to score in every head of one attention kind: query
 * row q of batch item b, whose strongest key (the pronoun pr and special
 * tokens excluded) should be the antecedent an. */
typedef struct {
    const Model *m;
    int b, q, pr, an, ns, S;   /* S: keys per row */
    const unsigned char *skip;
} CorefLink;

/* Counts the link in t for the heads of `layers` layers of att (layers, B,
 * H, rows, S). */
static void count_coref(EvalCount t[EVAL_MAX_LAYERS][EVAL_MAX_HEADS], const float *att, int layers, int rows,
                        const CorefLink *k) {
    int B = k->m->B, H = k->m->config.n_heads;
    for (int l = 0; l < layers; l++)
        for (int h = 0; h < H; h++) {
            const float *row = att + ((((size_t)l * B + k->b) * H + h) * rows + k->q) * k->S;
            t[l][h].total++;
            t[l][h].hit += maps_argmax_link(row, k->ns, k->pr, k->skip) == k->an;
        }
}

/* The attention metrics of a batch after its teacher-forced forward:
 * coreference heads (encoder and cross) and alignment heads. */
static void score_attention(Model *m, const Corpus *cp, int first, int B, const Item *it, int S, EvalReport *r,
                            unsigned char *skip) {
    const ModelConfig *c = &m->config;
    int H = c->n_heads, E = c->n_enc_layers, L = c->n_dec_layers, T = m->T;
    for (int b = 0; b < B; b++) {
        const CorpusPair *p = &cp->pairs[first + b];
        const Item *x = &it[b];
        for (int j = 0; j < x->ns; j++) skip[j] = x->src[j] < VOCAB_N_SPECIAL;
        /* coreference */
        for (int k = 0; k < p->n_coref; k++) {
            CorefLink link = {m, b, 0, p->coref[2 * k], p->coref[2 * k + 1], x->ns, S, skip};
            for (int q = 0; q < p->n_align; q++) {   /* cross: the target rows aligned to the pronoun */
                link.q = p->align[2 * q];
                if (p->align[2 * q + 1] == link.pr && link.q < x->nt)
                    count_coref(r->coref_cross, m->acts.dec_cross.att, L, T, &link);
            }
            link.q = link.pr;                        /* encoder: the pronoun's row */
            count_coref(r->coref_enc, m->acts.enc_self.att, E, S, &link);
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

/* The word an output token stands for: a copied <unk> is the TSV's source
 * word at its copy position (src_at >= 0), else the vocabulary token. */
static const char *output_word(const Vocab *v, const CorpusPair *p, int id, int src_at) {
    if (id == VOCAB_UNK && src_at >= 0 && src_at < p->n_src) return p->src[src_at];
    return vocab_word(v, id);
}

/* 1 if a "." or "?" source token lies strictly between positions a and b. */
static int across_sentences(const CorpusPair *p, int a, int b) {
    int lo = a < b ? a : b, hi = a < b ? b : a;
    for (int j = lo + 1; j < hi && j < p->n_src; j++)
        if (!strcmp(p->src[j], ".") || !strcmp(p->src[j], "?")) return 1;
    return 0;
}

static void count(EvalCount *c, int ok) { c->total++; c->hit += ok != 0; }

/* The translation metrics of one pair from its greedy output o (n tokens,
 * copy sources cs): exact match, pronoun accuracy (overall, cataphora, across
 * sentences), purity; the output's words appended to outputs. */
static void score_translation(const Vocab *v, const CorpusPair *p, const int *o, const int *cs, int n,
                              const EvalOptions *opt, EvalReport *r) {
    int li = p->lang == CORPUS_LANG_VI ? 1 : 0;
    int same = n == p->n_tgt;
    for (int t = 0; same && t < n; t++) same = !strcmp(output_word(v, p, o[t], cs[t]), p->tgt[t]);
    count(&r->exact[li], same);
    for (int k = 0; k < p->n_coref; k++) {
        int pr = p->coref[2 * k], an = p->coref[2 * k + 1], any = 0, ok = 1;
        for (int q = 0; q < p->n_align; q++) {
            int t = p->align[2 * q];
            if (p->align[2 * q + 1] != pr || t >= p->n_tgt) continue;
            any = 1;
            if (t >= n || strcmp(output_word(v, p, o[t], cs[t]), p->tgt[t])) ok = 0;
        }
        if (!any) continue;
        count(&r->pronoun[li], ok);
        if (an > pr) count(&r->pronoun_cataphora[li], ok);
        if (across_sentences(p, an, pr)) count(&r->pronoun_across[li], ok);
    }
    if (opt->lang_tokens) {
        int other = li ? EVAL_IN_FR : EVAL_IN_VI, mine = li ? EVAL_IN_VI : EVAL_IN_FR, pure = 1;
        for (int t = 0; t < n; t++)
            if (o[t] >= VOCAB_N_SPECIAL && o[t] < v->size && (opt->lang_tokens[o[t]] & (other | mine)) == other) pure = 0;
        count(&r->pure[li], pure);
    }
    if (opt->outputs) {
        StrBuf line = {0};
        int bad = 0;
        for (int t = 0; t < n; t++) bad |= strbuf_printf(&line, "%s%s", t ? " " : "", output_word(v, p, o[t], cs[t]));
        if (!bad) {
            strbuf_printf(opt->outputs, "%s", r->exact[0].total + r->exact[1].total > 1 ? ", " : "");
            strbuf_json_string(opt->outputs, line.buf ? line.buf : "");
        }
        free(line.buf);
    }
}

/* The copy sources of rows b of the last forward's cross-attention (last
 * decoder layer, (m->B, H, m->T, m->S)): for decoder input tag + out[0..n),
 * cs[t] = the source index copied into output t (an <unk>), else -1. */
static void copy_sources(const Model *m, int b, int tag, const int *src, const int *out, int n, int *cs) {
    const ModelConfig *c = &m->config;
    int T = m->T, S = m->S, H = c->n_heads, L = c->n_dec_layers;
    for (int t = 0; t < n; t++) cs[t] = -1;
    if (L < 1 || T < 1) return;
    int tgt[EVAL_MAX_LEN + 1];
    DecodeCopy cp[EVAL_MAX_LEN + 1];
    if (T > EVAL_MAX_LEN + 1) return;
    tgt[0] = tag;
    for (int t = 1; t < T; t++) tgt[t] = t - 1 < n ? out[t - 1] : VOCAB_PAD;
    const float *att = m->acts.dec_cross.att + (((size_t)(L - 1) * m->B + b) * H) * T * S;
    int k = decode_copy_unk(att, H, T, S, src, tgt, cp);
    for (int i = 0; i < k; i++) cs[cp[i].target - 1] = cp[i].source;
}

/* Where greedy_outputs writes a batch's outputs. */
typedef struct {
    int max_dec;    /* longest output                                      */
    int *tok;       /* (B, max_dec) output tokens                          */
    int *len;       /* (B) output lengths                                  */
    int *copy;      /* (B, max_dec) copy source of each token (copy_sources) */
} Greedy;

/* The greedy outputs of a batch (B, max_dec) after its teacher-forced forward.
 * Greedy search reproduces the gold target exactly when, given the gold
 * prefix, its choice (decode_pick_masked, with the same language mask) is the gold token at every position and
 * <eos> after it, and no stop of decode_stop_before falls on that path; those
 * pairs are read off the teacher-forced logits, and only
 * the others are decoded (decode_greedy_batch) — the same outputs, fewer passes.
 * g->copy receives each output token's copy source (copy_sources). */
static int greedy_outputs(Model *m, const Item *it, int B, const int *src, const int *slen, int S, const int *tags,
                          const Greedy *g, char *err, size_t errlen) {
    int V = m->config.vocab_size, T = m->T, n = 0;
    int max_dec = g->max_dec, *dout = g->tok, *dlen = g->len, *dcs = g->copy;
    int *idx = malloc((size_t)B * sizeof(int)), *s2 = malloc((size_t)B * S * sizeof(int));
    int *l2 = malloc((size_t)B * sizeof(int)), *t2 = malloc((size_t)B * sizeof(int));
    int *o2 = malloc((size_t)B * max_dec * sizeof(int)), *n2 = malloc((size_t)B * sizeof(int));
    int rc = -1;
    if (!idx || !s2 || !l2 || !t2 || !o2 || !n2) { errmsg_set(err, errlen, "out of memory"); goto done; }
    for (int b = 0; b < B; b++) {
        const Item *x = &it[b];
        int ok = x->nt < max_dec, unk = decode_src_has_unk(x->src, x->ns);
        for (int t = 0; ok && t <= x->nt; t++)
            ok = decode_pick_masked(m->acts.logits + ((size_t)b * T + t) * V, V, unk, decode_lang_mask(m, x->tag)) ==
                 (t < x->nt ? x->tgt[t] : VOCAB_EOS);
        DecodeStop why;   /* the search's stops (a repeat, the source's sentences) apply on the gold path too */
        for (int t = 0; ok && t < x->nt; t++) ok = !decode_stop_before(m, x->src, x->ns, x->tgt, t, x->tgt[t], &why);
        if (ok) {
            memcpy(dout + (size_t)b * max_dec, x->tgt, (size_t)x->nt * sizeof(int));
            dlen[b] = x->nt;
            copy_sources(m, b, x->tag, src + (size_t)b * S, x->tgt, x->nt, dcs + (size_t)b * max_dec);
            continue;
        }
        memcpy(s2 + (size_t)n * S, src + (size_t)b * S, (size_t)S * sizeof(int));
        l2[n] = slen[b]; t2[n] = tags[b]; idx[n++] = b;
    }
    if (n > 0 && decode_greedy_batch(m, s2, l2, S, t2, n, max_dec, o2, n2, NULL, err, errlen)) goto done;
    for (int k = 0; k < n; k++) {
        memcpy(dout + (size_t)idx[k] * max_dec, o2 + (size_t)k * max_dec, (size_t)max_dec * sizeof(int));
        dlen[idx[k]] = n2[k];
        copy_sources(m, k, t2[k], s2 + (size_t)k * S, o2 + (size_t)k * max_dec, n2[k], dcs + (size_t)idx[k] * max_dec);
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
    r->purity_measured = o->lang_tokens != NULL;
    if (o->outputs && strbuf_printf(o->outputs, "[")) return errmsg_set(err, errlen, "out of memory");
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
    if (maxS > c->max_len || maxT > c->max_len || c->max_len > EVAL_MAX_LEN) {
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
    int *tlen = malloc((size_t)BB * sizeof(int)), *dcs = malloc((size_t)BB * max_dec * sizeof(int));
    unsigned char *skip = malloc((size_t)maxS);
    if (!it || !sbuf || !tbuf || !src || !slen || !tags || !dout || !dlen || !din || !tlen || !skip || !dcs) {
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
        if (model_forward(m, &(ModelBatch){src, slen, S, din, tlen, T, B})) { errmsg_set(err, errlen, "%s", m->err); goto done; }
        if (!o->translation_only) score_attention(m, &cp, first, B, it, S, r, skip);
        Greedy g = {max_dec, dout, dlen, dcs};
        if (greedy_outputs(m, it, B, src, slen, S, tags, &g, err, errlen)) goto done;
        for (int b = 0; b < B; b++)
            score_translation(v, &cp.pairs[first + b], dout + (size_t)b * max_dec, dcs + (size_t)b * max_dec, dlen[b],
                              o, r);
    }
    if (o->outputs && strbuf_printf(o->outputs, "]")) { errmsg_set(err, errlen, "out of memory"); goto done; }
    r->n_pairs = n;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    rc = 0;
done:
    free(it); free(sbuf); free(tbuf); free(src); free(slen); free(tags); free(dout); free(dlen);
    free(din); free(tlen); free(skip); free(dcs);
    corpus_free(&cp);
    return rc;
}

/* ------------------------------------------------------ real sentences */

/* One English sentence of a real split: its first line and its lines. */
typedef struct { int first, n; int *lines; } RealGroup;

static int cmp_group_line(const void *a, const void *b, void *ctx) {
    const Corpus *cp = ctx;
    const CorpusPair *x = &cp->pairs[*(const int *)a], *y = &cp->pairs[*(const int *)b];
    if (x->lang != y->lang) return x->lang - y->lang;
    if (x->n_src != y->n_src) return x->n_src - y->n_src;
    for (int i = 0; i < x->n_src; i++) {
        int c = strcmp(x->src[i], y->src[i]);
        if (c) return c;
    }
    return *(const int *)a - *(const int *)b;
}

static int cmp_group_first(const void *a, const void *b) {
    return ((const RealGroup *)a)->first - ((const RealGroup *)b)->first;
}

/* The lines of cp grouped by (language, English), groups in the order of their
 * first lines.  *order (cp->n) holds the lines group after group.  Returns the
 * number of groups, or -1 (out of memory). */
static int group_by_source(const Corpus *cp, int **order, RealGroup **groups) {
    int *o = malloc(sizeof(int) * (size_t)(cp->n > 0 ? cp->n : 1));
    RealGroup *g = malloc(sizeof *g * (size_t)(cp->n > 0 ? cp->n : 1));
    if (!o || !g) { free(o); free(g); return -1; }
    for (int i = 0; i < cp->n; i++) o[i] = i;
    qsort_r(o, (size_t)cp->n, sizeof *o, cmp_group_line, (void *)cp);
    int ng = 0;
    for (int i = 0; i < cp->n; i++) {
        int a = o[i];
        int same = i > 0;
        if (same) {
            const CorpusPair *x = &cp->pairs[o[i - 1]], *y = &cp->pairs[a];
            same = x->lang == y->lang && x->n_src == y->n_src;
            for (int k = 0; same && k < x->n_src; k++) same = !strcmp(x->src[k], y->src[k]);
        }
        if (same) { g[ng - 1].n++; continue; }
        g[ng++] = (RealGroup){a, 1, o + i};
    }
    qsort(g, (size_t)ng, sizeof *g, cmp_group_first);   /* in the order of their first lines */
    *order = o;
    *groups = g;
    return ng;
}

/* The output of group member k as text (tokens after the copy, joined by spaces). */
static int output_text(const Vocab *v, const CorpusPair *p, const int *o, const int *cs, int n, StrBuf *out) {
    out->len = 0;
    int bad = strbuf_printf(out, "%s", "");
    for (int t = 0; t < n; t++) bad |= strbuf_printf(out, "%s%s", t ? " " : "", output_word(v, p, o[t], cs[t]));
    return bad;
}

/* Scores one decoded group: chrF against its references, exact match. */
static int score_real(const Vocab *v, const Corpus *cp, const RealGroup *g, const int *o, const int *cs, int n,
                      ChrfStats *st, EvalReal *r, StrBuf *outputs, long *n_out) {
    const CorpusPair *p = &cp->pairs[g->first];
    StrBuf hyp = {0}, ref = {0};
    char **refs = calloc((size_t)g->n, sizeof(char *));
    int bad = !refs || output_text(v, p, o, cs, n, &hyp), li = p->lang == CORPUS_LANG_VI, same = 0;
    for (int k = 0; !bad && k < g->n; k++) {
        const CorpusPair *q = &cp->pairs[g->lines[k]];
        ref.len = 0;
        bad |= strbuf_printf(&ref, "%s", "");
        for (int t = 0; t < q->n_tgt; t++) bad |= strbuf_printf(&ref, "%s%s", t ? " " : "", q->tgt[t]);
        if (!bad && !(refs[k] = strdup(ref.buf))) bad = 1;
        same |= !bad && !strcmp(refs[k], hyp.buf);
    }
    if (!bad && chrf_add(&st[li], hyp.buf, (const char *const *)refs, g->n) < 0) bad = 1;
    if (!bad) {
        count(&r->exact[li], same);
        r->sentences[li]++;
        r->references[li] += g->n;
        if (outputs) bad |= strbuf_printf(outputs, "%s", (*n_out)++ ? ", " : "") | strbuf_json_string(outputs, hyp.buf);
    }
    for (int k = 0; refs && k < g->n; k++) free(refs[k]);
    free(refs);
    free(hyp.buf);
    free(ref.buf);
    return bad ? -1 : 0;
}

/* Greedy outputs of groups g[0..B) into o (B, max_dec), their lengths and copy sources. */
static int decode_groups(Model *m, const Vocab *v, const Corpus *cp, const RealGroup *g, int B, int max_dec,
                         const Greedy *out, char *err, size_t errlen) {
    int S = 1;
    for (int b = 0; b < B; b++)
        if (cp->pairs[g[b].first].n_src + 1 > S) S = cp->pairs[g[b].first].n_src + 1;
    int *src = malloc(sizeof(int) * (size_t)B * S), *len = malloc(sizeof(int) * (size_t)B);
    int *tags = malloc(sizeof(int) * (size_t)B), rc = -1;
    if (!src || !len || !tags) { errmsg_set(err, errlen, "out of memory"); goto done; }
    for (int b = 0; b < B; b++) {
        const CorpusPair *p = &cp->pairs[g[b].first];
        int *row = src + (size_t)b * S;
        encode(v, p->src, p->n_src, row);
        row[p->n_src] = VOCAB_EOS;
        for (int j = p->n_src + 1; j < S; j++) row[j] = VOCAB_PAD;
        len[b] = p->n_src + 1;
        tags[b] = p->lang == CORPUS_LANG_VI ? VOCAB_2VI : VOCAB_2FR;
    }
    if (decode_greedy_batch(m, src, len, S, tags, B, max_dec, out->tok, out->len, NULL, err, errlen)) goto done;
    for (int b = 0; b < B; b++)
        copy_sources(m, b, tags[b], src + (size_t)b * S, out->tok + (size_t)b * max_dec, out->len[b],
                     out->copy + (size_t)b * max_dec);
    rc = 0;
done:
    free(src); free(len); free(tags);
    return rc;
}

int eval_real_run(Model *m, const Vocab *v, const char *path, int limit, StrBuf *outputs, EvalReal *r, char *err,
                  size_t errlen) {
    memset(r, 0, sizeof *r);
    const ModelConfig *c = &m->config;
    if (c->arch != MODEL_ENC_DEC) return errmsg_set(err, errlen, "eval needs an encoder-decoder model");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    Corpus cp = {0};
    if (corpus_read_tsv(&cp, path, err, errlen)) return -1;
    int *order = NULL, longest = 1, rc = -1;
    RealGroup *g = NULL;
    int ng = group_by_source(&cp, &order, &g);
    if (ng < 0) { errmsg_set(err, errlen, "out of memory"); goto done; }
    if (limit > 0 && limit < ng) ng = limit;
    for (int i = 0; i < cp.n; i++) {
        if (cp.pairs[i].n_src + 1 > c->max_len || cp.pairs[i].n_tgt + 1 > c->max_len) {
            errmsg_set(err, errlen, "%s:%d: a sentence longer than the model's max_len %d", path, cp.pairs[i].line, c->max_len);
            goto done;
        }
        if (cp.pairs[i].n_tgt > longest) longest = cp.pairs[i].n_tgt;
    }
    int BB = 64, max_dec = longest + 8 < c->max_len - 1 ? longest + 8 : c->max_len - 1;
    Greedy out = {max_dec, malloc(sizeof(int) * (size_t)BB * max_dec), malloc(sizeof(int) * (size_t)BB),
                  malloc(sizeof(int) * (size_t)BB * max_dec)};
    ChrfStats st[2];
    chrf_stats_init(&st[0]);
    chrf_stats_init(&st[1]);
    long n_out = 0;
    int bad = !out.tok || !out.len || !out.copy || (outputs && strbuf_printf(outputs, "["));
    if (bad) errmsg_set(err, errlen, "out of memory");
    for (int first = 0; !bad && first < ng; first += BB) {
        int B = ng - first < BB ? ng - first : BB;
        bad = decode_groups(m, v, &cp, g + first, B, max_dec, &out, err, errlen);
        for (int b = 0; !bad && b < B; b++)
            if (score_real(v, &cp, &g[first + b], out.tok + (size_t)b * max_dec, out.copy + (size_t)b * max_dec,
                           out.len[b], st, r, outputs, &n_out))
                bad = errmsg_set(err, errlen, "out of memory");
    }
    if (!bad && outputs && strbuf_printf(outputs, "]")) bad = errmsg_set(err, errlen, "out of memory");
    free(out.tok); free(out.len); free(out.copy);
    if (bad) goto done;
    for (int li = 0; li < 2; li++) r->chrf[li] = chrf_score(&st[li], 2.0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    rc = 0;
done:
    free(order);
    free(g);
    corpus_free(&cp);
    return rc;
}

int eval_real_json(StrBuf *b, const EvalReal *r) {
    static const char *const lang[2] = {"fr", "vi"};
    int bad = strbuf_printf(b, "{");
    for (int li = 0; li < 2; li++) {
        bad |= strbuf_printf(b, "%s\"%s\": {\"sentences\": %ld, \"references\": %ld, ", li ? ", " : "", lang[li],
                             r->sentences[li], r->references[li]);
        bad |= r->sentences[li] ? strbuf_printf(b, "\"chrf\": %.4f, \"exact_match\": %.4f}", r->chrf[li],
                                                eval_rate(r->exact[li]))
                                : strbuf_printf(b, "\"chrf\": null, \"exact_match\": null}");
    }
    bad |= strbuf_printf(b, "}");
    return bad ? -1 : 0;
}

int eval_language_flags(const Vocab *v, const Corpus *cp, unsigned char **flags, char *err, size_t errlen) {
    *flags = NULL;
    unsigned char *f = calloc((size_t)(v->size > 0 ? v->size : 1), 1);
    if (!f) return errmsg_set(err, errlen, "out of memory");
    for (int i = 0; i < cp->n; i++) {
        const CorpusPair *p = &cp->pairs[i];
        for (int t = 0; t < p->n_tgt; t++) {
            int id = vocab_id(v, p->tgt[t]);
            if (id >= VOCAB_N_SPECIAL) f[id] |= p->lang == CORPUS_LANG_VI ? EVAL_IN_VI : EVAL_IN_FR;
        }
        for (int c = 0; c < p->n_coref; c++) {      /* the gold antecedents */
            int a = p->coref[2 * c + 1];
            int id = a >= 0 && a < p->n_src ? vocab_id(v, p->src[a]) : -1;
            if (id >= VOCAB_N_SPECIAL) f[id] |= EVAL_ANTECEDENT;
        }
    }
    *flags = f;
    return 0;
}

int eval_language_tokens(const Vocab *v, const char *train_path, unsigned char **flags, char *err, size_t errlen) {
    *flags = NULL;
    Corpus cp = {0};
    if (corpus_read_tsv(&cp, train_path, err, errlen)) return -1;
    int rc = eval_language_flags(v, &cp, flags, err, errlen);
    corpus_free(&cp);
    return rc;
}

char *eval_language_hex(const unsigned char *flags, int n, int lang_bit) {
    unsigned char *seen = malloc((size_t)(n > 0 ? n : 1));
    char *hex = malloc((size_t)n / 4 + 2);
    if (seen && hex) {
        for (int i = 0; i < n; i++) seen[i] = (flags[i] & lang_bit) != 0;
        checkpoint_meta_source_hex(seen, n, hex, (size_t)n / 4 + 2);
    } else { free(hex); hex = NULL; }
    free(seen);
    return hex;
}

int eval_set_language_masks(Model *m, const unsigned char *flags, int n) {
    int V = m->config.vocab_size;
    unsigned char *set = calloc((size_t)(V > 0 ? V : 1), 1);
    if (!set) return -1;
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++) {
        for (int i = 0; i < V; i++) set[i] = i < n && (flags[i] & (k ? EVAL_IN_VI : EVAL_IN_FR));
        rc = decode_set_lang_mask(m, k ? VOCAB_2VI : VOCAB_2FR, set);
    }
    free(set);
    return rc;
}

/* {"accuracy": A or null, "n": N} */
static int count_json(StrBuf *b, const char *key, EvalCount c) {
    if (!c.total) return strbuf_printf(b, ", \"%s\": {\"accuracy\": null, \"n\": 0}", key);
    return strbuf_printf(b, ", \"%s\": {\"accuracy\": %.4f, \"n\": %ld}", key, eval_rate(c), c.total);
}

int eval_split_json(StrBuf *b, const EvalReport *r, const char *split) {
    static const char *const lang[2] = {"fr", "vi"};
    int bad = strbuf_printf(b, "{\"split\": \"%s\", \"pairs\": %ld", split, r->n_pairs);
    for (int li = 0; li < 2; li++) {
        bad |= strbuf_printf(b, ", \"%s\": {\"n\": %ld, \"exact_match\": ", lang[li], r->exact[li].total);
        bad |= r->exact[li].total ? strbuf_printf(b, "%.4f", eval_rate(r->exact[li])) : strbuf_printf(b, "null");
        bad |= count_json(b, "pronoun", r->pronoun[li]);
        bad |= count_json(b, "pronoun_cataphora", r->pronoun_cataphora[li]);
        bad |= count_json(b, "pronoun_across", r->pronoun_across[li]);
        bad |= strbuf_printf(b, ", \"language_purity\": ");
        bad |= r->purity_measured && r->pure[li].total ? strbuf_printf(b, "%.4f}", eval_rate(r->pure[li]))
                                                       : strbuf_printf(b, "null}");
    }
    bad |= strbuf_printf(b, "}");
    return bad ? -1 : 0;
}

void eval_metadata_json(const EvalReport *r, const char *split, char *coref, size_t coref_len, char *summary,
                        size_t summary_len) {
    int cl, ch, al, ah;
    double cacc = eval_best_head(r->coref_enc, r->n_enc_layers, r->n_heads, &cl, &ch);
    double aacc = eval_best_head(r->align, r->n_dec_layers, r->n_heads, &al, &ah);
    EvalCount pron = {r->pronoun[0].hit + r->pronoun[1].hit, r->pronoun[0].total + r->pronoun[1].total};
    EvalCount cata = {r->pronoun_cataphora[0].hit + r->pronoun_cataphora[1].hit,
                      r->pronoun_cataphora[0].total + r->pronoun_cataphora[1].total};
    EvalCount across = {r->pronoun_across[0].hit + r->pronoun_across[1].hit,
                        r->pronoun_across[0].total + r->pronoun_across[1].total};
    snprintf(coref, coref_len, "{\"map\":\"encoder.%d.self\",\"head\":%d,\"accuracy\":%.4f}", cl, ch, cacc);
    snprintf(summary, summary_len,
             "{\"split\":\"%s\",\"pairs\":%ld,\"translation_exact_match\":{\"fr\":%.4f,\"vi\":%.4f},"
             "\"pronoun_accuracy\":%.4f,\"pronoun_accuracy_cataphora\":%.4f,\"pronoun_accuracy_across\":%.4f,"
             "\"coreference_head\":%s,"
             "\"alignment\":{\"map\":\"decoder.%d.cross\",\"head\":%d,\"accuracy\":%.4f}}",
             split, r->n_pairs, eval_rate(r->exact[0]), eval_rate(r->exact[1]), eval_rate(pron), eval_rate(cata),
             eval_rate(across), coref, al, ah, aacc);
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
