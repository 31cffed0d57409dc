/* aggregate.c — attention rollout and norm-weighted attention (aggregate.h). */
#include "model/aggregate.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The activations and weights of one kind: Tq, Tk, the stack's AttnActs and params. */
static int kind_parts(Model *m, ModelAttnKind kind, int layer, const AttnActs **a, const AttnParams **p,
                      int *Tq, int *Tk) {
    if (m->B == 0) return errmsg_set(m->err, sizeof m->err, "aggregate: no forward pass yet");
    if (layer < 0 || layer >= model_attn_layers(&m->config, kind))
        return errmsg_set(m->err, sizeof m->err, "aggregate: no such map (kind %d, layer %d)", (int)kind, layer);
    switch (kind) {
    case MODEL_ATTN_ENC_SELF: *a = &m->acts.enc_self;  *p = &m->params.enc_self;  *Tq = m->S; *Tk = m->S; break;
    case MODEL_ATTN_DEC_SELF: *a = &m->acts.dec_self;  *p = &m->params.dec_self;  *Tq = m->T; *Tk = m->T; break;
    case MODEL_ATTN_CROSS:    *a = &m->acts.dec_cross; *p = &m->params.dec_cross; *Tq = m->T; *Tk = m->S; break;
    }
    return 0;
}

int aggregate_rollout(Model *m, ModelAttnKind kind, int b, float *out) {
    const AttnActs *a;
    const AttnParams *p;
    int T, Tk;
    if (kind == MODEL_ATTN_CROSS) return errmsg_set(m->err, sizeof m->err, "rollout: only self-attention rolls out");
    if (b < 0 || b >= m->B) return errmsg_set(m->err, sizeof m->err, "rollout: batch item %d out of range", b);
    if (kind_parts(m, kind, 0, &a, &p, &T, &Tk)) return -1;
    int L = model_attn_layers(&m->config, kind), H = m->config.n_heads, B = m->B;
    size_t TT = (size_t)T * T;
    float *At = malloc(TT * sizeof(float));
    if (!At) return errmsg_set(m->err, sizeof m->err, "out of memory");
    for (int l = 0; l < L; l++) {
        /* Ã_l = ½ mean_h A + ½ I, rows renormalised */
        memset(At, 0, TT * sizeof(float));
        for (int h = 0; h < H; h++) {
            const float *A = a->att + (((size_t)l * B + b) * H + h) * TT;
            for (size_t x = 0; x < TT; x++) At[x] += A[x] / (float)H;
        }
        for (int i = 0; i < T; i++) {
            float *row = At + (size_t)i * T, sum = 0;
            for (int j = 0; j < T; j++) { row[j] = 0.5f * row[j] + (i == j ? 0.5f : 0.0f); sum += row[j]; }
            for (int j = 0; j < T; j++) row[j] /= sum;
        }
        /* R_l = Ã_l · R_{l-1} */
        float *R = out + (size_t)l * TT;
        if (l == 0) { memcpy(R, At, TT * sizeof(float)); continue; }
        const float *P = R - TT;
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++) {
                double s = 0;
                for (int k = 0; k < T; k++) s += (double)At[(size_t)i * T + k] * P[(size_t)k * T + j];
                R[(size_t)i * T + j] = (float)s;
            }
    }
    free(At);
    return 0;
}

int aggregate_norm_weighted(Model *m, ModelAttnKind kind, int layer, int b, float *out) {
    const AttnActs *a;
    const AttnParams *p;
    int Tq, Tk;
    if (b < 0 || b >= m->B) return errmsg_set(m->err, sizeof m->err, "norm-weighted: batch item %d out of range", b);
    if (kind_parts(m, kind, layer, &a, &p, &Tq, &Tk)) return -1;
    int C = m->config.d_model, H = m->config.n_heads, D = C / H, B = m->B;
    const float *v = a->v + (((size_t)layer * B + b) * Tk) * C;   /* (Tk, C): x W_V + b_V */
    const float *wo = p->wo + (size_t)layer * C * C;               /* (C, C) stored (in, out) */
    float *fn = malloc((size_t)Tk * sizeof(float));
    if (!fn) return errmsg_set(m->err, sizeof m->err, "out of memory");
    for (int h = 0; h < H; h++) {
        /* ‖f_h(x_j)‖ = ‖v_j[hD : hD+D] · W_O[hD : hD+D, :]‖ */
        for (int j = 0; j < Tk; j++) {
            double ss = 0;
            for (int c = 0; c < C; c++) {
                double y = 0;
                for (int d = 0; d < D; d++) y += (double)v[(size_t)j * C + h * D + d] * wo[(size_t)(h * D + d) * C + c];
                ss += y * y;
            }
            fn[j] = (float)sqrt(ss);
        }
        /* a head knocked out with zeros adds nothing */
        if (model_ablated(m, kind, layer, h) == MODEL_ABLATE_ZERO) for (int j = 0; j < Tk; j++) fn[j] = 0.0f;
        const float *A = a->att + (((size_t)layer * B + b) * H + h) * Tq * Tk;
        for (int i = 0; i < Tq; i++)
            for (int j = 0; j < Tk; j++) out[((size_t)h * Tq + i) * Tk + j] = A[(size_t)i * Tk + j] * fn[j];
    }
    free(fn);
    return 0;
}
