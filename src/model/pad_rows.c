/* pad_rows.c — the linear layers of a training step over the non-pad rows only
 * (see model_internal.h).  Batches are padded to their longest sentence; in
 * training the outputs at pad positions are never needed (their loss is masked,
 * as keys they are masked out, as queries their rows are discarded), and their
 * gradients are exactly zero, so the products run on the packed non-pad rows and
 * the pad rows of the outputs are set to 0. */
#include "model/model_internal.h"
#include "core/errmsg.h"
#include "core/tensor.h"
#include <stdlib.h>
#include <string.h>

int model_pad_prepare(Model *m, int B, int S, int T) {
    const ModelConfig *c = &m->config;
    size_t rows = (size_t)B * (S > T ? S : T), width = (size_t)c->d_model;
    if ((size_t)c->d_ff > width) width = (size_t)c->d_ff;
    if ((size_t)c->vocab_size > width) width = (size_t)c->vocab_size;
    size_t need = 3 * rows * width;
    if (need > m->pack_cap) {
        free(m->pack_memory);
        m->pack_cap = 0;
        m->pack_memory = floats_huge(need, 0);
        if (!m->pack_memory) return errmsg_set(m->err, sizeof m->err, "out of memory for packed rows");
        m->pack_cap = need;
    }
    return 0;
}

static int row_len(const int *len, int b, int T) {
    return len[b] < 0 ? 0 : len[b] > T ? T : len[b];
}

/* Packed only when the forward chose to (m->pad_skip) and some row is padding. */
PadRows model_pad_rows(const Model *m, const int *len, int B, int T) {
    PadRows r = { .len = len, .B = B, .T = T, .n = B * T };
    if (!m->pad_skip || !len || T < 1) return r;
    int n = 0;
    for (int b = 0; b < B; b++) n += row_len(len, b, T);
    if (n == B * T) return r;
    r.skip = 1;
    r.n = n;
    r.pack = m->pack_memory;
    r.slot = m->pack_cap / 3;
    return r;
}

int model_pad_rows_real(const PadRows *r, int b) {
    return r->skip ? row_len(r->len, b, r->T) : r->T;
}

/* dst (n, K) = the real rows of src (B, T, K), in order. */
static void pack_rows(float *dst, const float *src, const PadRows *r, int K) {
    size_t n = 0;
    for (int b = 0; b < r->B; b++) {
        int l = row_len(r->len, b, r->T);
        memcpy(dst + n * K, src + (size_t)b * r->T * K, (size_t)l * K * sizeof(float));
        n += (size_t)l;
    }
}

/* dst (B, T, M)'s real rows = src's packed rows; its pad rows set to 0
 * when zero_pads (outputs), else untouched (gradients accumulated in place). */
static void unpack_rows(float *dst, const float *src, const PadRows *r, int M, int zero_pads) {
    size_t n = 0;
    for (int b = 0; b < r->B; b++) {
        int l = row_len(r->len, b, r->T);
        float *d = dst + (size_t)b * r->T * M;
        memcpy(d, src + n * M, (size_t)l * M * sizeof(float));
        if (zero_pads) memset(d + (size_t)l * M, 0, (size_t)(r->T - l) * M * sizeof(float));
        n += (size_t)l;
    }
}

void model_linear_forward(const PadRows *r, float *out, const float *inp, const LinearLayer *w) {
    model_linear_forward_n(r, 1, &out, inp, w);
}

void model_linear_backward(const PadRows *r, float *dinp, int set, float *wt, const float *dout,
                           const float *inp, const LinearLayer *w) {
    model_linear_backward_n(r, 1, dinp, set, wt, &dout, inp, w);
}

/* Projections of one input (Q, K, V of self-attention; K, V of cross-attention):
 * out[i] (B·T, M) = inp (B·T, K)·w[i] + b[i] for i < n_out, the input packed once. */
void model_linear_forward_n(const PadRows *r, int n_out, float *const *out, const float *inp,
                            const LinearLayer *w) {
    int N = r->B * r->T, K = w[0].K;
    if (!r->skip) {
        for (int i = 0; i < n_out; i++) matmul_forward(out[i], inp, w[i].w, w[i].b, N, K, w[i].M);
        return;
    }
    float *pin = r->pack, *pout = pin + r->slot;
    pack_rows(pin, inp, r, K);
    for (int i = 0; i < n_out; i++) {
        matmul_forward(pout, pin, w[i].w, w[i].b, r->n, K, w[i].M);
        unpack_rows(out[i], pout, r, w[i].M, 1);
    }
}

/* Their backward: dinp += Σ_i dout[i]·w[i]ᵀ, or = with `set` (accumulated packed,
 * unpacked once; dinp NULL: not wanted), dw[i], db[i] += Σ over the real rows. */
void model_linear_backward_n(const PadRows *r, int n_out, float *dinp, int set, float *wt,
                             const float *const *dout, const float *inp, const LinearLayer *w) {
    int N = r->B * r->T, K = w[0].K;
    if (!r->skip) {
        if (dinp && set) memset(dinp, 0, (size_t)N * K * sizeof(float));
        for (int i = 0; i < n_out; i++)
            matmul_backward(dinp, w[i].dw, w[i].db, wt, dout[i], inp, w[i].w, N, K, w[i].M);
        return;
    }
    float *pd = r->pack, *pin = pd + r->slot, *pdin = pin + r->slot;
    pack_rows(pin, inp, r, K);
    if (dinp && set) memset(pdin, 0, (size_t)r->n * K * sizeof(float));
    else if (dinp) pack_rows(pdin, dinp, r, K);         /* accumulate onto dinp's own rows, in */
    for (int i = 0; i < n_out; i++) {                   /* the order of the unpacked products */
        pack_rows(pd, dout[i], r, w[i].M);
        matmul_backward(dinp ? pdin : NULL, w[i].dw, w[i].db, wt, pd, pin, w[i].w, r->n, K, w[i].M);
    }
    if (dinp) unpack_rows(dinp, pdin, r, K, set);
}

/* Feed-forward block proj = relu(x·w1 + b1)·w2 + b2 with x, proj (B·T, C).  When
 * the rows are packed, the hidden h (B·T·F floats) holds only the n packed rows
 * (n, F): it never goes back to the padded layout, so the widest tensor of the
 * layer is not copied at all.  model_ffn_backward reads h in the same layout. */
void model_ffn_forward(const PadRows *r, float *h, float *proj, const float *x, const FfnLayer *f) {
    int N = r->B * r->T, C = f->fc1.K, F = f->fc1.M;
    if (!r->skip) {
        matmul_forward(h, x, f->fc1.w, f->fc1.b, N, C, F);
        relu_forward(h, h, (size_t)N * F);
        matmul_forward(proj, h, f->fc2.w, f->fc2.b, N, F, C);
        return;
    }
    float *pin = r->pack, *pout = pin + r->slot;
    pack_rows(pin, x, r, C);
    matmul_forward(h, pin, f->fc1.w, f->fc1.b, r->n, C, F);
    relu_forward(h, h, (size_t)r->n * F);
    matmul_forward(pout, h, f->fc2.w, f->fc2.b, r->n, F, C);
    unpack_rows(proj, pout, r, C, 1);
}

/* dx (B·T, C) = ∂/∂x (overwritten), gradients of w1 b1 w2 b2 added; dh: scratch of B·T·F floats. */
void model_ffn_backward(const PadRows *r, float *dx, float *dh, float *wt, const float *dproj,
                        const float *h, const float *x, const FfnLayer *f) {
    int n = r->n, C = f->fc1.K, F = f->fc1.M;
    float *pd = r->skip ? r->pack : NULL, *pin = pd ? pd + r->slot : NULL, *pdx = pin ? pin + r->slot : NULL;
    if (r->skip) {
        pack_rows(pd, dproj, r, C);
        pack_rows(pin, x, r, C);
        memset(pdx, 0, (size_t)n * C * sizeof(float));
    } else {
        memset(dx, 0, (size_t)n * C * sizeof(float));
    }
    size_t nf = (size_t)n * F;
    memset(dh, 0, nf * sizeof(float));
    matmul_backward(dh, f->fc2.dw, f->fc2.db, wt, r->skip ? pd : dproj, h, f->fc2.w, n, F, C);
    OMP_SIMD
    for (size_t i = 0; i < nf; i++) dh[i] = h[i] > 0.0f ? dh[i] : 0.0f;   /* relu */
    matmul_backward(r->skip ? pdx : dx, f->fc1.dw, f->fc1.db, wt, dh, r->skip ? pin : x, f->fc1.w, n, C, F);
    if (r->skip) unpack_rows(dx, pdx, r, C, 1);
}
