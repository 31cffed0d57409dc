/* model_attrib.c — direct logit attribution of one decoder token of the last
 * forward pass (model.h's model_attribution).  The decoder's stream at one
 * position is kept as a sum of parts; every LayerNorm the stream goes through
 * (post-norm: one after each sublayer; pre-norm: the final one) is affine once
 * its 1/σ is frozen at the pass's value, so each part goes through it alone
 * (its gain times the part minus the part's mean, times 1/σ) and the norm's β
 * joins the bias part.  At the end each part is dotted with the token's column
 * of W_out. */
#include "model/model.h"
#include "core/errmsg.h"
#include <stdlib.h>
#include <string.h>

/* The parts' rows in one (n, C) block of doubles. */
enum { PART_EMBED = 0, PART_BIAS = 1, PART_FIRST = 2 };

typedef struct {
    const Model *m;
    double *p;       /* (n, C) the parts                       */
    int n, C, H, D, L;
    size_t row;      /* b·T + pos: the position's row in (B, T, ·) activations */
} Parts;

/* Parts of head h of (kind, layer l) and of the MLP of layer l: rows after the two fixed ones. */
static int head_row(const Parts *P, int kind, int l, int h) { return PART_FIRST + (kind * P->L + l) * P->H + h; }
static int mlp_row(const Parts *P, int l) { return PART_FIRST + 2 * P->L * P->H + l; }

/* Every head's output of one attention layer through its rows of W_O, and b_O into the bias. */
static void add_attention(Parts *P, const AttnActs *a, const AttnParams *w, int kind, int l) {
    int C = P->C, D = P->D;
    size_t NC = (size_t)P->m->B * P->m->T * C;
    const float *y = a->atty + (size_t)l * NC + P->row * C;
    const float *wo = w->wo + (size_t)l * C * C, *bo = w->bo + (size_t)l * C;
    for (int h = 0; h < P->H; h++) {
        double *part = P->p + (size_t)head_row(P, kind, l, h) * C;
        for (int d = 0; d < D; d++) {
            double v = y[h * D + d];
            const float *r = wo + (size_t)(h * D + d) * C;
            for (int c = 0; c < C; c++) part[c] += v * r[c];
        }
    }
    for (int c = 0; c < C; c++) P->p[(size_t)PART_BIAS * C + c] += bo[c];
}

/* LayerNorm (layer l of np, 1/σ from na) with its scale frozen, on every part. */
static void through_norm(Parts *P, const NormActs *na, const NormParams *np, int l) {
    int C = P->C;
    size_t N = (size_t)P->m->B * P->m->T;
    double rstd = na->rstd[(size_t)l * N + P->row];
    const float *g = np->w + (size_t)l * C, *b = np->b + (size_t)l * C;
    for (int i = 0; i < P->n; i++) {
        double *part = P->p + (size_t)i * C, mean = 0;
        for (int c = 0; c < C; c++) mean += part[c];
        mean /= C;
        for (int c = 0; c < C; c++) part[c] = g[c] * (part[c] - mean) * rstd;
    }
    for (int c = 0; c < C; c++) P->p[(size_t)PART_BIAS * C + c] += b[c];
}

static int check(const Model *m, int b, int pos, int token, char *err, size_t errlen) {
    const ModelConfig *c = &m->config;
    if (c->arch == MODEL_ENCODER_ONLY) return errmsg_set(err, errlen, "attribution: the model has no decoder");
    if (m->B < 1 || !m->acts.logits || m->T < 1) return errmsg_set(err, errlen, "attribution: no forward pass yet");
    if (m->training || m->pad_skip) return errmsg_set(err, errlen, "attribution: the last pass was a training pass");
    if (b < 0 || b >= m->B || pos < 0 || pos >= m->tgt_len[b])
        return errmsg_set(err, errlen, "attribution: no decoder position %d in item %d", pos, b);
    if (token < 0 || token >= c->vocab_size)
        return errmsg_set(err, errlen, "attribution: token id %d outside 0..%d", token, c->vocab_size - 1);
    return 0;
}

int model_attribution(const Model *m, int b, int pos, int token, ModelAttribution *out, char *err, size_t errlen) {
    if (check(m, b, pos, token, err, errlen)) return -1;
    const ModelConfig *c = &m->config;
    const ModelParams *w = &m->params;
    const ModelActs *a = &m->acts;
    int C = c->d_model, H = c->n_heads, L = c->n_dec_layers, V = c->vocab_size, cross = c->arch == MODEL_ENC_DEC;
    Parts P = {.m = m, .n = PART_FIRST + 2 * L * H + L, .C = C, .H = H, .D = C / H, .L = L,
               .row = (size_t)b * m->T + pos};
    P.p = calloc((size_t)P.n * C, sizeof *P.p);
    if (!P.p) return errmsg_set(err, errlen, "out of memory");
    size_t NC = (size_t)m->B * m->T * C;
    for (int i = 0; i < C; i++) P.p[i] = a->dec_x[P.row * C + i];   /* tok_emb·√C + PE */
    for (int l = 0; l < L; l++) {
        add_attention(&P, &a->dec_self, &w->dec_self, 0, l);
        if (!c->prenorm) through_norm(&P, &a->dec_ln1, &w->dec_ln1, l);
        if (cross) {
            add_attention(&P, &a->dec_cross, &w->dec_cross, 1, l);
            if (!c->prenorm) through_norm(&P, &a->dec_ln2, &w->dec_ln2, l);
        }
        double *mlp = P.p + (size_t)mlp_row(&P, l) * C;
        const float *f = a->dec_ffn.proj + (size_t)l * NC + P.row * C;   /* h·W_2 + b_2 */
        for (int i = 0; i < C; i++) mlp[i] += f[i];
        if (!c->prenorm) through_norm(&P, &a->dec_ln3, &w->dec_ln3, l);
    }
    if (c->prenorm) through_norm(&P, &a->dec_lnf, &w->dec_lnf, 0);
    for (int i = 0; i < P.n; i++) {   /* each part onto the token's column of W_out, in place */
        double s = 0;
        for (int k = 0; k < C; k++) s += P.p[(size_t)i * C + k] * w->out_w[(size_t)k * V + token];
        P.p[i] = s;
    }
    out->embedding = (float)P.p[PART_EMBED];
    out->bias = (float)(P.p[PART_BIAS] + w->out_b[token]);
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++)
                out->heads[(k * L + l) * H + h] = k == 1 && !cross ? 0.0f : (float)P.p[head_row(&P, k, l, h)];
    for (int l = 0; l < L; l++) out->mlp[l] = (float)P.p[mlp_row(&P, l)];
    out->logit = a->logits[((size_t)b * m->To + pos) * V + token];
    free(P.p);
    return 0;
}
