/* model_layers.c — one layer of the model as the kernels take it (see
 * model_internal.h): a layer's slice of the stacked weights and of their
 * gradients, with the sizes, and an attention layer's slices of the last
 * forward's activations, with their shapes and which rows are real. */
#include "model/model_internal.h"
#include <stddef.h>

/* Layer l of weights w (layers, K, M) and bias b (layers, M); gradients from
 * dw, db when given (else NULL). */
static LinearLayer linear_layer(const float *w, const float *b, float *dw, float *db, int l, int K, int M) {
    size_t kw = (size_t)l * K * M, kb = (size_t)l * M;
    LinearLayer y = { .w = w + kw, .b = b + kb, .K = K, .M = M };
    if (dw) { y.dw = dw + kw; y.db = db + kb; }
    return y;
}

FfnLayer model_ffn_layer(const FfnParams *p, const FfnParams *g, int l, int C, int F) {
    FfnLayer f = {
        .fc1 = linear_layer(p->w1, p->b1, g ? g->w1 : NULL, g ? g->b1 : NULL, l, C, F),
        .fc2 = linear_layer(p->w2, p->b2, g ? g->w2 : NULL, g ? g->b2 : NULL, l, F, C) };
    return f;
}

/* The activations, weights and mask of a kind of attention. */
static void attn_kind(const Model *m, ModelAttnKind kind, const AttnActs **a, const AttnParams **p,
                      const AttnParams **g, const unsigned char **mask) {
    const ModelActs *acts = &m->acts;
    const ModelParams *gr = m->grads_memory ? &m->grads : NULL;
    if (kind == MODEL_ATTN_ENC_SELF) {
        *a = &acts->enc_self; *p = &m->params.enc_self; *g = gr ? &gr->enc_self : NULL; *mask = acts->enc_mask;
    } else if (kind == MODEL_ATTN_DEC_SELF) {
        *a = &acts->dec_self; *p = &m->params.dec_self; *g = gr ? &gr->dec_self : NULL; *mask = acts->dec_mask;
    } else {
        *a = &acts->dec_cross; *p = &m->params.dec_cross; *g = gr ? &gr->dec_cross : NULL; *mask = acts->cross_mask;
    }
}

AttnLayer model_attn_layer(const Model *m, ModelAttnKind kind, int l) {
    const AttnActs *a;
    const AttnParams *p, *g;
    const unsigned char *mask;
    attn_kind(m, kind, &a, &p, &g, &mask);
    int B = m->B, C = m->config.d_model, H = m->config.n_heads;
    int Tq = kind == MODEL_ATTN_ENC_SELF ? m->S : m->T, Tk = kind == MODEL_ATTN_DEC_SELF ? m->T : m->S;
    const int *qlen = kind == MODEL_ATTN_ENC_SELF ? m->src_len : m->tgt_len;
    const int *klen = kind == MODEL_ATTN_DEC_SELF ? m->tgt_len : m->src_len;
    size_t nq = (size_t)B * Tq * C, nk = (size_t)B * Tk * C;
    AttnLayer y = { .kind = kind, .l = l, .B = B, .Tq = Tq, .Tk = Tk, .C = C, .H = H,
                    .q = a->q + l * nq, .k = a->k + l * nk, .v = a->v + l * nk,
                    .att = a->att + (size_t)l * B * H * Tq * Tk, .atty = a->atty + l * nq, .proj = a->proj + l * nq,
                    .mask = mask, .qrows = model_pad_rows(m, qlen, B, Tq), .krows = model_pad_rows(m, klen, B, Tk) };
    y.wqkv[0] = linear_layer(p->wq, p->bq, g ? g->wq : NULL, g ? g->bq : NULL, l, C, C);
    y.wqkv[1] = linear_layer(p->wk, p->bk, g ? g->wk : NULL, g ? g->bk : NULL, l, C, C);
    y.wqkv[2] = linear_layer(p->wv, p->bv, g ? g->wv : NULL, g ? g->bv : NULL, l, C, C);
    y.wo = linear_layer(p->wo, p->bo, g ? g->wo : NULL, g ? g->bo : NULL, l, C, C);
    return y;
}
