/* model_backward.c — gradients of the mean cross-entropy (plus optional
 * attention-supervision terms) w.r.t. every parameter (see model.h).  The pass walks the forward in reverse using the activations
 * the forward kept; it needs one layer's worth of scratch (bwd_memory). */
#include "model/model.h"
#include "core/errmsg.h"
#include "model/model_internal.h"
#include "core/tensor.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int model_zero_grad(Model *m) {
    if (!m->params_memory) return errmsg_set(m->err, sizeof m->err, "model_zero_grad: model not initialised");
    if (!m->grads_memory) {
        m->grads_memory = floats_huge(m->num_params, 1);
        if (!m->grads_memory) return errmsg_set(m->err, sizeof m->err, "out of memory for gradients");
        model_point_params(&m->config, m->grads_memory, &m->grads);
    } else {
        memset(m->grads_memory, 0, m->num_params * sizeof(float));
    }
    return 0;
}

/* Scratch of the backward pass, one layer's worth (Tm = max(S, T)). */
typedef struct {
    float *ds;      /* (B, Tm, C) ∂loss/∂stream, updated in place layer by layer */
    float *dres;    /* (B, Tm, C) ∂loss/∂(stream + sublayer)                      */
    float *dfin;    /* (B, Tm, C) ∂loss/∂(sub-layer input)                         */
    float *ddrop;   /* (B, Tm, C) ∂loss/∂(sub-layer output before dropout)          */
    float *dq;      /* (B, Tm, C)                                                  */
    float *dk;      /* (B, Tm, C)                                                  */
    float *dv;      /* (B, Tm, C)                                                  */
    float *datty;   /* (B, Tm, C)                                                  */
    float *dh;      /* (B, Tm, F)                                                  */
    float *datt;    /* (B, H, Tm, Tm) ∂loss/∂weights of one head                   */
    float *denc;    /* (B, S, C) ∂loss/∂(encoder output), summed over cross layers */
    float *dlogits; /* (B, To, V)                                                  */
    float *wt;      /* (max(C·C, C·F, C·V)) transposed weight for matmul_backward  */
    const ModelAttnSupervision *sup;   /* n_sup auxiliary attention losses (may be NULL) */
    int n_sup;
    const Model *m;  /* pad rows left out of the products when m->pad_skip (pad_rows.c) */
} Bwd;

static int bwd_prepare(Model *m, Bwd *w) {
    const ModelConfig *c = &m->config;
    size_t B = m->B, Tm = m->S > m->T ? m->S : m->T, C = c->d_model, F = c->d_ff;
    size_t H = c->n_heads, V = c->vocab_size, N = B * Tm;
    size_t nwt = C * C;
    if (C * F > nwt) nwt = C * F;
    if (C * V > nwt) nwt = C * V;
    size_t sizes[13] = { N * C, N * C, N * C, N * C, N * C, N * C, N * C, N * C, N * F,
                         B * H * Tm * Tm, B * (size_t)m->S * C, B * (size_t)m->To * V, nwt };
    size_t total = 0;
    for (int i = 0; i < 13; i++) total += sizes[i];
    if (total > m->bwd_cap) {
        free(m->bwd_memory);
        m->bwd_cap = 0;
        m->bwd_memory = floats_huge(total, 0);
        if (!m->bwd_memory) return errmsg_set(m->err, sizeof m->err, "out of memory for the backward pass");
        m->bwd_cap = total;
    }
    float **slots[13] = { &w->ds, &w->dres, &w->dfin, &w->ddrop, &w->dq, &w->dk, &w->dv, &w->datty, &w->dh,
                          &w->datt, &w->denc, &w->dlogits, &w->wt };
    float *p = m->bwd_memory;
    for (int i = 0; i < 13; i++) { *slots[i] = p; p += sizes[i]; }
    return 0;
}

/* Backward of one head of softmax(Q·Kᵀ·scale + M)·V (model_internal.h):
 *   dA = dY·Vᵀ,  dV = Aᵀ·dY,  dS = A ⊙ (dA − rowsum(A ⊙ dA)),
 *   dQ = dS·K·scale,  dK = dSᵀ·Q·scale.   Masked cells have A = 0, so dS = 0.
 * Supervised (t != NULL, (Tq,Tk) targets, coefficient cs = λ/rows): dA gains
 * −cs·t/A, whose softmax backward is cs·(A·Σt − t), added in that closed form.
 * The plain loops, the reference of attention_head_backward. */
void attention_head_backward_ref(float *dq, float *dk, float *dv, float *dA, const AttnHeadGrad *g) {
    const float *q = g->q, *k = g->k, *v = g->v, *A = g->A, *dy = g->dy, *t = g->t;
    float cs = g->cs, scale = g->scale;
    int Tq = g->Tq, Tk = g->Tk, D = g->D, ld = g->ld;
    for (int j = 0; j < Tk; j++)
        for (int d = 0; d < D; d++) dk[(size_t)j * ld + d] = dv[(size_t)j * ld + d] = 0.0f;
    for (int i = 0; i < Tq; i++) {
        const float *dyi = dy + (size_t)i * ld, *qi = q + (size_t)i * ld, *Ai = A + (size_t)i * Tk;
        float *dqi = dq + (size_t)i * ld, *dAi = dA + (size_t)i * Tk;
        float rowdot = 0.0f, tsum = 0.0f;
        for (int j = 0; j < Tk; j++) {
            float da = 0.0f;
            for (int d = 0; d < D; d++) da += dyi[d] * v[(size_t)j * ld + d];
            dAi[j] = da;
            rowdot += Ai[j] * da;
            for (int d = 0; d < D; d++) dv[(size_t)j * ld + d] += Ai[j] * dyi[d];
        }
        const float *ti = t ? t + (size_t)i * Tk : NULL;
        if (ti) for (int j = 0; j < Tk; j++) tsum += ti[j];
        float c = ti && tsum > 0.0f ? cs : 0.0f;
        for (int d = 0; d < D; d++) dqi[d] = 0.0f;
        for (int j = 0; j < Tk; j++) {
            float ds = Ai[j] * (dAi[j] - rowdot);
            if (c != 0.0f) ds += c * (Ai[j] * tsum - ti[j]);
            ds *= scale;
            for (int d = 0; d < D; d++) {
                dqi[d] += ds * k[(size_t)j * ld + d];
                dk[(size_t)j * ld + d] += ds * qi[d];
            }
        }
    }
}

#define TILE_STACK 4096   /* floats of each on-stack tile (64×64) */

/* The same gradients, faster, as small products over tiles of the head:
 * dA = dy·Vᵀ from a (D, Tkp) tile of Vᵀ (vecmat_tile, 4 rows × 16 keys in registers);
 * dS (Tq, Tk) kept in a tile with its transpose and Aᵀ, so that every gradient row
 * is one combine_rows: dQ_i = Σ_j dS_ij·K_j, dK_j = Σ_i dS_ij·Q_i, dV_j = Σ_i A_ij·dY_i
 * (zero coefficients — masked cells — skipped).  Overwrites the head's columns of
 * dq (Tq rows), dk and dv (Tk rows), stride ld, and dA. */
void attention_head_backward(float *dq, float *dk, float *dv, float *dA, const AttnHeadGrad *g) {
    const float *q = g->q, *k = g->k, *v = g->v, *A = g->A, *dy = g->dy, *t = g->t;
    float cs = g->cs, scale = g->scale;
    int Tq = g->Tq, Tk = g->Tk, D = g->D, ld = g->ld;
    int Tkp = tile_cols(Tk);
    size_t nv = (size_t)D * Tkp, ns = (size_t)Tq * Tk;
    float stack[3 * TILE_STACK];
    float *buf = nv <= TILE_STACK && ns <= TILE_STACK ? stack : malloc((nv + 2 * ns) * sizeof(float));
    if (!buf) { attention_head_backward_ref(dq, dk, dv, dA, g); return; }
    float *vt = buf, *dst = buf + (nv > TILE_STACK ? nv : TILE_STACK);   /* dSᵀ (Tk, Tq) */
    float *at = dst + (ns > TILE_STACK ? ns : TILE_STACK);                /* Aᵀ  (Tk, Tq) */
    pack_transposed(vt, v, ld, Tk, D, Tkp);
    vecmat_tile(dA, Tk, dy, ld, Tq, vt, D, Tk, Tkp);                  /* dA, every row */
    for (int i = 0; i < Tq; i++) {
        const float *Ai = A + (size_t)i * Tk, *ti = t ? t + (size_t)i * Tk : NULL;
        float *dAi = dA + (size_t)i * Tk;
        float rowdot = 0.0f, tsum = 0.0f;
        for (int j = 0; j < Tk; j++) rowdot += Ai[j] * dAi[j];
        if (ti) for (int j = 0; j < Tk; j++) tsum += ti[j];
        float c = ti && tsum > 0.0f ? cs : 0.0f;
        for (int j = 0; j < Tk; j++) {                                 /* dA row i → dS row i */
            float ds = Ai[j] * (dAi[j] - rowdot);
            if (c != 0.0f) ds += c * (Ai[j] * tsum - ti[j]);
            dAi[j] = ds * scale;
            dst[(size_t)j * Tq + i] = dAi[j];
            at[(size_t)j * Tq + i] = Ai[j];
        }
        combine_rows(dq + (size_t)i * ld, dAi, k, ld, Tk, D);
    }
    for (int j = 0; j < Tk; j++) {
        combine_rows(dk + (size_t)j * ld, dst + (size_t)j * Tq, q, ld, Tq, D);
        combine_rows(dv + (size_t)j * ld, at + (size_t)j * Tq, dy, ld, Tq, D);
    }
    if (buf != stack) free(buf);
}

/* The supervised heads of one attention layer: targets (B, Tq, Tk) and
 * coefficient λ/rows per head (t[h] NULL: not supervised). */
typedef struct {
    const float *t[MODEL_MAX_HEADS];
    float c[MODEL_MAX_HEADS];
} HeadTargets;

/* Every (batch, head) of attention layer a; sup: NULL or its supervised heads.
 * dq (B,Tq,C), dk, dv (B,Tk,C) are overwritten; datty (B,Tq,C) = ∂loss/∂atty.
 * A training forward left the pad queries out (a->qrows): they are left out here
 * too — their dY rows are 0, so they add nothing to dK, dV — and their dq rows
 * are 0. */
static void attention_backward(float *dq, float *dk, float *dv, float *datt, const float *datty,
                               const AttnLayer *a, const HeadTargets *sup) {
    int B = a->B, Tq = a->Tq, Tk = a->Tk, C = a->C, H = a->H, D = C / H;
    float scale = 1.0f / sqrtf((float)D);
    OMP_PARALLEL_FOR2
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            size_t oq = (size_t)b * Tq * C + (size_t)h * D, ok = (size_t)b * Tk * C + (size_t)h * D;
            size_t oa = ((size_t)b * H + h) * Tq * Tk;
            const float *t = sup && sup->t[h] ? sup->t[h] + (size_t)b * Tq * Tk : NULL;
            int n = model_pad_rows_real(&a->qrows, b);
            AttnHeadGrad g = { .q = a->q + oq, .k = a->k + ok, .v = a->v + ok, .A = a->att + oa, .dy = datty + oq,
                               .t = t, .cs = t ? sup->c[h] : 0.0f, .scale = scale, .Tq = n, .Tk = Tk, .D = D, .ld = C };
            attention_head_backward(dq + oq, dk + ok, dv + ok, datt + oa, &g);
            for (int i = n; i < Tq; i++) memset(dq + oq + (size_t)i * C, 0, (size_t)D * sizeof(float));
        }
}

/* The supervisions of attention layer a among w->sup; 0 when none. */
static int head_targets(const Bwd *w, const AttnLayer *a, HeadTargets *sup) {
    int any = 0;
    for (int h = 0; h < a->H; h++) { sup->t[h] = NULL; sup->c[h] = 0.0f; }
    for (int i = 0; i < w->n_sup; i++) {
        const ModelAttnSupervision *s = &w->sup[i];
        if (s->kind != a->kind || s->layer != a->l || s->rows <= 0 || s->weight == 0.0f) continue;
        sup->t[s->head] = s->target;
        sup->c[s->head] = s->weight / (float)(s->norm_rows > 0 ? s->norm_rows : s->rows);
        any = 1;
    }
    return any;
}

/* Multi-head attention of layer l: dxq (B,Tq,C) = ∂/∂xq (overwritten), dxkv (B,Tk,C)
 * += ∂/∂xkv (the same buffer for self-attention: then = ∂/∂x), gradients of W_q… b_o
 * added to the model's. */
static void mha_backward(Bwd *w, ModelAttnKind kind, int l, float *dxq, float *dxkv, const float *dproj,
                         const float *xq, const float *xkv) {
    AttnLayer a = model_attn_layer(w->m, kind, l);
    HeadTargets sup;
    int any = head_targets(w, &a, &sup);
    model_linear_backward(&a.qrows, w->datty, 1, w->wt, dproj, a.atty, &a.wo);
    attention_backward(w->dq, w->dk, w->dv, w->datt, w->datty, &a, any ? &sup : NULL);
    const float *dout[3] = { w->dq, w->dk, w->dv };
    if (kind != MODEL_ATTN_CROSS) {     /* self-attention: one input, packed once */
        model_linear_backward_n(&a.qrows, 3, dxq, 1, w->wt, dout, xq, a.wqkv);
    } else {
        model_linear_backward(&a.qrows, dxq, 1, w->wt, dout[0], xq, &a.wqkv[0]);
        model_linear_backward_n(&a.krows, 2, dxkv, 0, w->wt, dout + 1, xkv, a.wqkv + 1);
    }
}

/* FFN of layer l: w->dfin = ∂/∂x (overwritten); rows: which rows of x are real. */
static void ffn_backward(Bwd *w, const PadRows *rows, const float *dproj, const FfnActs *a,
                         const FfnParams *p, FfnParams *g, int l, const float *x) {
    const ModelConfig *c = &w->m->config;
    size_t nf = (size_t)rows->B * rows->T * c->d_ff;
    FfnLayer f = model_ffn_layer(p, g, l, c->d_model, c->d_ff);
    model_ffn_backward(rows, w->dfin, w->dh, w->wt, dproj, a->h + l * nf, x, &f);
}

/* Residual sub-layer backward, first half.  On entry w->ds = ∂loss/∂(stream after).
 * Returns ∂loss/∂(sub-layer output); the sub-layer then overwrites w->dfin.
 *   post-norm: after = LN(res), res = before + f(before)  → dproj = LN'ᵀ·ds
 *   pre-norm:  after = before + f(LN(before))              → dproj = ds
 * With dropout (drop_all: the forward's masks) f is proj ⊙ mask, so dproj ⊙ mask
 * is returned (in w->ddrop; the residual path keeps the unmasked gradient). */
static const float *sub_back_begin(Bwd *w, int pre, const float *res_all, const float *drop_all,
                                   const NormActs *na, const NormParams *np, NormParams *gn,
                                   int l, int N, int C) {
    size_t nc = (size_t)N * C;
    const float *d = w->ds;
    if (!pre) {
        memset(w->dres, 0, nc * sizeof(float));
        layernorm_backward(w->dres, gn->w + (size_t)l * C, gn->b + (size_t)l * C, w->ds, res_all + l * nc,
                           np->w + (size_t)l * C, na->mean + (size_t)l * N, na->rstd + (size_t)l * N, N, C);
        d = w->dres;
    }
    if (!drop_all) return d;
    const float *mask = drop_all + l * nc;
    for (size_t i = 0; i < nc; i++) w->ddrop[i] = d[i] * mask[i];
    return w->ddrop;
}

/* ∂loss/∂(embedding sum) from ∂loss/∂x when x = sum ⊙ mask (mask NULL: no dropout). */
static void embed_drop_backward(float *dx, const float *mask, size_t n) {
    if (mask) for (size_t i = 0; i < n; i++) dx[i] *= mask[i];
}

/* Second half: w->dfin holds ∂loss/∂(sub-layer input); leaves ∂loss/∂(stream before) in w->ds. */
static void sub_back_end(Bwd *w, int pre, const float *before, const NormActs *na,
                         const NormParams *np, NormParams *gn, int l, int N, int C) {
    size_t nc = (size_t)N * C;
    if (!pre) {
        for (size_t i = 0; i < nc; i++) w->ds[i] = w->dres[i] + w->dfin[i];
        return;
    }
    layernorm_backward(w->ds, gn->w + (size_t)l * C, gn->b + (size_t)l * C, w->dfin, before,
                       np->w + (size_t)l * C, na->mean + (size_t)l * N, na->rstd + (size_t)l * N, N, C);
}

/* The sub-layer's input: the stream (post-norm) or LayerNorm(stream) (pre-norm). */
static const float *sub_input(int pre, const NormActs *na, int l, const float *before, size_t nc) {
    return pre ? na->out + l * nc : before;
}
/* The stream after a sub-layer: LN output (post-norm) or the residual sum (pre-norm). */
static const float *stream_after(int pre, const NormActs *na, const float *res_all, int l, size_t nc) {
    return pre ? res_all + l * nc : na->out + l * nc;
}

static void embed_backward(float *dtok, const float *dx, const int *tok, int N, int C) {
    float scale = sqrtf((float)C);
    for (int i = 0; i < N; i++) {
        float *g = dtok + (size_t)tok[i] * C;
        const float *d = dx + (size_t)i * C;
        for (int c = 0; c < C; c++) g[c] += d[c] * scale;
    }
}

/* Final pre-norm LayerNorm of a stack: ds ← LN'ᵀ·ds (uses dres as scratch). */
static void lnf_backward(Bwd *w, const NormActs *na, const NormParams *np, NormParams *gn,
                         const float *inp, int N, int C) {
    size_t nc = (size_t)N * C;
    memset(w->dres, 0, nc * sizeof(float));
    layernorm_backward(w->dres, gn->w, gn->b, w->ds, inp, np->w, na->mean, na->rstd, N, C);
    memcpy(w->ds, w->dres, nc * sizeof(float));
}

static void decoder_backward(Model *m, Bwd *w) {
    const ModelConfig *c = &m->config;
    const ModelActs *a = &m->acts;
    const ModelParams *p = &m->params;
    ModelParams *g = &m->grads;
    int B = m->B, S = m->S, T = m->T, C = c->d_model, pre = c->prenorm;
    int N = B * T, L = c->n_dec_layers, cross = c->arch == MODEL_ENC_DEC;
    size_t nc = (size_t)N * C;
    PadRows rows = model_pad_rows(m, m->tgt_len, B, T);
    if (pre) lnf_backward(w, &a->dec_lnf, &p->dec_lnf, &g->dec_lnf, model_decoder_stream(m), N, C);
    const float *enc_out = cross ? model_encoder_output(m) : NULL;
    if (cross) memset(w->denc, 0, sizeof(float) * (size_t)B * S * C);
    for (int l = L - 1; l >= 0; l--) {
        const float *before_self = l == 0 ? a->dec_x : stream_after(pre, &a->dec_ln3, a->dec_res3, l - 1, nc);
        const float *before_cross = stream_after(pre, &a->dec_ln1, a->dec_res1, l, nc);
        const float *before_ffn = cross ? stream_after(pre, &a->dec_ln2, a->dec_res2, l, nc) : before_cross;
        /* FFN */
        const float *dproj = sub_back_begin(w, pre, a->dec_res3, a->dec_ffn.drop, &a->dec_ln3, &p->dec_ln3, &g->dec_ln3, l, N, C);
        ffn_backward(w, &rows, dproj, &a->dec_ffn, &p->dec_ffn, &g->dec_ffn, l, sub_input(pre, &a->dec_ln3, l, before_ffn, nc));
        sub_back_end(w, pre, before_ffn, &a->dec_ln3, &p->dec_ln3, &g->dec_ln3, l, N, C);
        /* cross-attention: queries from the decoder, keys/values from the encoder */
        if (cross) {
            dproj = sub_back_begin(w, pre, a->dec_res2, a->dec_cross.drop, &a->dec_ln2, &p->dec_ln2, &g->dec_ln2, l, N, C);
            mha_backward(w, MODEL_ATTN_CROSS, l, w->dfin, w->denc, dproj,
                         sub_input(pre, &a->dec_ln2, l, before_cross, nc), enc_out);
            sub_back_end(w, pre, before_cross, &a->dec_ln2, &p->dec_ln2, &g->dec_ln2, l, N, C);
        }
        /* masked self-attention */
        dproj = sub_back_begin(w, pre, a->dec_res1, a->dec_self.drop, &a->dec_ln1, &p->dec_ln1, &g->dec_ln1, l, N, C);
        const float *in = sub_input(pre, &a->dec_ln1, l, before_self, nc);
        mha_backward(w, MODEL_ATTN_DEC_SELF, l, w->dfin, w->dfin, dproj, in, in);
        sub_back_end(w, pre, before_self, &a->dec_ln1, &p->dec_ln1, &g->dec_ln1, l, N, C);
    }
    embed_drop_backward(w->ds, a->dec_x_drop, nc);
    embed_backward(g->tok_emb, w->ds, m->tgt, N, C);
}

static void encoder_backward(Model *m, Bwd *w) {
    const ModelConfig *c = &m->config;
    const ModelActs *a = &m->acts;
    const ModelParams *p = &m->params;
    ModelParams *g = &m->grads;
    int B = m->B, S = m->S, C = c->d_model, pre = c->prenorm;
    int N = B * S, E = c->n_enc_layers;
    size_t nc = (size_t)N * C;
    PadRows rows = model_pad_rows(m, m->src_len, B, S);
    if (pre) lnf_backward(w, &a->enc_lnf, &p->enc_lnf, &g->enc_lnf, model_encoder_stream(m), N, C);
    for (int l = E - 1; l >= 0; l--) {
        const float *before_self = l == 0 ? a->enc_x : stream_after(pre, &a->enc_ln2, a->enc_res2, l - 1, nc);
        const float *before_ffn = stream_after(pre, &a->enc_ln1, a->enc_res1, l, nc);
        const float *dproj = sub_back_begin(w, pre, a->enc_res2, a->enc_ffn.drop, &a->enc_ln2, &p->enc_ln2, &g->enc_ln2, l, N, C);
        ffn_backward(w, &rows, dproj, &a->enc_ffn, &p->enc_ffn, &g->enc_ffn, l, sub_input(pre, &a->enc_ln2, l, before_ffn, nc));
        sub_back_end(w, pre, before_ffn, &a->enc_ln2, &p->enc_ln2, &g->enc_ln2, l, N, C);
        dproj = sub_back_begin(w, pre, a->enc_res1, a->enc_self.drop, &a->enc_ln1, &p->enc_ln1, &g->enc_ln1, l, N, C);
        const float *in = sub_input(pre, &a->enc_ln1, l, before_self, nc);
        mha_backward(w, MODEL_ATTN_ENC_SELF, l, w->dfin, w->dfin, dproj, in, in);
        sub_back_end(w, pre, before_self, &a->enc_ln1, &p->enc_ln1, &g->enc_ln1, l, N, C);
    }
    embed_drop_backward(w->ds, a->enc_x_drop, nc);
    embed_backward(g->tok_emb, w->ds, m->src, N, C);
}

/* The head's weights, mask and sizes in the last forward; -1 with m->err if absent. */
static int sup_locate(Model *m, const ModelAttnSupervision *s, const float **att,
                      const unsigned char **mask, int *Tq, int *Tk) {
    const ModelConfig *c = &m->config;
    int layers, H = c->n_heads;
    const AttnActs *a;
    if (s->kind == MODEL_ATTN_ENC_SELF && c->arch != MODEL_DECODER_ONLY) {
        layers = c->n_enc_layers; a = &m->acts.enc_self; *Tq = *Tk = m->S; *mask = m->acts.enc_mask;
    } else if (s->kind == MODEL_ATTN_DEC_SELF && c->arch != MODEL_ENCODER_ONLY) {
        layers = c->n_dec_layers; a = &m->acts.dec_self; *Tq = *Tk = m->T; *mask = m->acts.dec_mask;
    } else if (s->kind == MODEL_ATTN_CROSS && c->arch == MODEL_ENC_DEC) {
        layers = c->n_dec_layers; a = &m->acts.dec_cross; *Tq = m->T; *Tk = m->S; *mask = m->acts.cross_mask;
    } else {
        errmsg_set(m->err, sizeof m->err, "attention supervision: the model has no attention of kind %d",
                   (int)s->kind);
        return -1;
    }
    if (s->layer < 0 || s->layer >= layers || s->head < 0 || s->head >= H) {
        errmsg_set(m->err, sizeof m->err, "attention supervision: layer %d head %d out of range (%d layers, %d heads)",
                   s->layer, s->head, layers, H);
        return -1;
    }
    if (!s->target || !a->att || m->B < 1) {
        errmsg_set(m->err, sizeof m->err, "attention supervision: no target or no forward");
        return -1;
    }
    *att = a->att + (size_t)s->layer * m->B * H * *Tq * *Tk;
    return 0;
}

float model_attn_sup_loss(Model *m, ModelAttnSupervision *s) {
    const float *att;
    const unsigned char *mask;
    int Tq, Tk, H = m->config.n_heads;
    s->loss = 0.0f;
    s->rows = 0;
    if (sup_locate(m, s, &att, &mask, &Tq, &Tk)) return NAN;
    const int *qlen = s->kind == MODEL_ATTN_ENC_SELF ? m->src_len : m->tgt_len;
    double sum = 0.0;
    int rows = 0;
    for (int b = 0; b < m->B; b++)
        for (int i = 0; i < Tq; i++) {
            const float *t = s->target + ((size_t)b * Tq + i) * Tk;
            const float *A = att + (((size_t)b * H + s->head) * Tq + i) * Tk;
            const unsigned char *mk = mask + ((size_t)b * Tq + i) * Tk;
            double row = 0.0, tsum = 0.0;
            for (int j = 0; j < Tk; j++) {
                if (!(t[j] >= 0.0f)) {
                    errmsg_set(m->err, sizeof m->err, "attention supervision: negative or NaN target");
                    return NAN;
                }
                if (t[j] == 0.0f) continue;
                if (!mk[j]) {
                    errmsg_set(m->err, sizeof m->err,
                               "attention supervision: target on a masked key (item %d, query %d, key %d)", b, i, j);
                    return NAN;
                }
                tsum += t[j];
                row -= t[j] * log(A[j] > 1e-30f ? (double)A[j] : 1e-30);
            }
            if (tsum > 0.0 && m->pad_skip && i >= qlen[b]) {   /* that row was left out (pad_rows.c) */
                errmsg_set(m->err, sizeof m->err,
                           "attention supervision: target on a pad query (item %d, query %d) of a training forward", b, i);
                return NAN;
            }
            if (tsum > 0.0) { sum += row; rows++; }
        }
    s->rows = rows;
    int norm = s->norm_rows > 0 ? s->norm_rows : rows;   /* a half of a split batch (model_twin.c) */
    s->loss = rows ? (float)(sum / norm) : 0.0f;
    return s->loss;
}

float model_backward(Model *m, const int *targets, float eps) {
    return model_backward_sup(m, targets, eps, NULL, 0);
}

float model_backward_sup(Model *m, const int *targets, float eps, ModelAttnSupervision *sup, int n_sup) {
    if (m->n_ablated > 0) {   /* the forward replaced heads' outputs: its gradient would be another model's */
        errmsg_set(m->err, sizeof m->err, "model_backward: %d head(s) are knocked out (inference only)", m->n_ablated);
        return NAN;
    }
    if (n_sup < 0 || (n_sup > 0 && !sup)) {
        errmsg_set(m->err, sizeof m->err, "model_backward_sup: bad supervision list");
        return NAN;
    }
    for (int i = 0; i < n_sup; i++) {
        if (isnan(model_attn_sup_loss(m, &sup[i]))) return NAN;
        for (int k = 0; k < i; k++)
            if (sup[k].kind == sup[i].kind && sup[k].layer == sup[i].layer && sup[k].head == sup[i].head) {
                errmsg_set(m->err, sizeof m->err, "attention supervision: the same head is supervised twice");
                return NAN;
            }
    }
    if (!m->grads_memory && model_zero_grad(m)) return NAN;
    Bwd w;
    if (bwd_prepare(m, &w)) return NAN;
    w.sup = sup;
    w.n_sup = n_sup;
    w.m = m;
    float loss = model_loss_grad(m, targets, eps, w.dlogits);   /* fills w.dlogits */
    if (isnan(loss)) return NAN;
    const ModelConfig *c = &m->config;
    int B = m->B, To = m->To, V = c->vocab_size, C = c->d_model;
    int dec = c->arch != MODEL_ENCODER_ONLY, enc = c->arch != MODEL_DECODER_ONLY;
    const float *final;
    if (dec) final = c->prenorm ? m->acts.dec_lnf.out : model_decoder_stream(m);
    else final = model_encoder_output(m);
    PadRows rows = model_pad_rows(m, m->out_len, B, To);
    LinearLayer out = { .w = m->params.out_w, .b = m->params.out_b, .dw = m->grads.out_w, .db = m->grads.out_b,
                        .K = C, .M = V };
    model_linear_backward(&rows, w.ds, 1, w.wt, w.dlogits, final, &out);
    if (dec) {
        decoder_backward(m, &w);
        if (enc) memcpy(w.ds, w.denc, sizeof(float) * (size_t)B * m->S * C);
    }
    if (enc) encoder_backward(m, &w);
    return loss;
}
