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
        m->pack_memory = malloc(need * sizeof(float));
        if (!m->pack_memory) return errmsg_set(m->err, sizeof m->err, "out of memory for packed rows");
        m->pack_cap = need;
    }
    return 0;
}

static int row_len(const int *len, int b, int T) {
    return len[b] < 0 ? 0 : len[b] > T ? T : len[b];
}

/* dst (n, K) = the non-pad rows of src (B, T, K), in order; returns n. */
static int pack_rows(float *dst, const float *src, const int *len, int B, int T, int K) {
    size_t n = 0;
    for (int b = 0; b < B; b++) {
        int l = row_len(len, b, T);
        memcpy(dst + n * K, src + (size_t)b * T * K, (size_t)l * K * sizeof(float));
        n += (size_t)l;
    }
    return (int)n;
}

/* dst (B, T, M)'s non-pad rows = src's packed rows; its pad rows set to 0
 * when zero_pads (outputs), else untouched (gradients accumulated in place). */
static void unpack_rows(float *dst, const float *src, const int *len, int B, int T, int M, int zero_pads) {
    size_t n = 0;
    for (int b = 0; b < B; b++) {
        int l = row_len(len, b, T);
        float *d = dst + (size_t)b * T * M;
        memcpy(d, src + n * M, (size_t)l * M * sizeof(float));
        if (zero_pads) memset(d + (size_t)l * M, 0, (size_t)(T - l) * M * sizeof(float));
        n += (size_t)l;
    }
}

/* Packed only when the forward chose to (m->pad_skip) and some row is padding. */
static int packs(const Model *m, const int *len, int N, int T) {
    if (!m->pad_skip || !len || T < 1) return 0;
    for (int b = 0; b < N / T; b++)
        if (row_len(len, b, T) < T) return 1;
    return 0;
}

void model_linear_forward(const Model *m, const int *len, int T, float *out, const float *inp,
                          const float *w, const float *bias, int N, int K, int M) {
    model_linear_forward_n(m, len, T, 1, &out, inp, &w, &bias, N, K, M);
}

void model_linear_backward(const Model *m, const int *len, int T, float *dinp, int set, float *dw, float *dbias,
                           float *wt, const float *dout, const float *inp, const float *w,
                           int N, int K, int M) {
    model_linear_backward_n(m, len, T, 1, dinp, set, &dw, &dbias, wt, &dout, inp, &w, N, K, M);
}

/* Projections of one input (Q, K, V of self-attention; K, V of cross-attention):
 * out[i] = inp·w[i] + bias[i] for i < n_out, the input packed once. */
void model_linear_forward_n(const Model *m, const int *len, int T, int n_out, float *const *out,
                            const float *inp, const float *const *w, const float *const *bias,
                            int N, int K, int M) {
    if (!packs(m, len, N, T)) {
        for (int i = 0; i < n_out; i++) matmul_forward(out[i], inp, w[i], bias[i], N, K, M);
        return;
    }
    int B = N / T;
    size_t third = m->pack_cap / 3;
    float *pin = m->pack_memory, *pout = pin + third;
    int n = pack_rows(pin, inp, len, B, T, K);
    for (int i = 0; i < n_out; i++) {
        matmul_forward(pout, pin, w[i], bias[i], n, K, M);
        unpack_rows(out[i], pout, len, B, T, M, 1);
    }
}

/* Their backward: dinp += Σ_i dout[i]·w[i]ᵀ, or = with `set` (accumulated packed,
 * unpacked once; dinp NULL: not wanted), dw[i], dbias[i] += Σ over the non-pad rows. */
void model_linear_backward_n(const Model *m, const int *len, int T, int n_out, float *dinp, int set,
                             float *const *dw, float *const *dbias, float *wt, const float *const *dout,
                             const float *inp, const float *const *w, int N, int K, int M) {
    if (!packs(m, len, N, T)) {
        if (dinp && set) memset(dinp, 0, (size_t)N * K * sizeof(float));
        for (int i = 0; i < n_out; i++) matmul_backward(dinp, dw[i], dbias[i], wt, dout[i], inp, w[i], N, K, M);
        return;
    }
    int B = N / T;
    size_t third = m->pack_cap / 3;
    float *pd = m->pack_memory, *pin = pd + third, *pdin = pin + third;
    int n = pack_rows(pin, inp, len, B, T, K);
    if (dinp && set) memset(pdin, 0, (size_t)n * K * sizeof(float));
    else if (dinp) pack_rows(pdin, dinp, len, B, T, K);   /* accumulate onto dinp's own rows, in */
    for (int i = 0; i < n_out; i++) {                     /* the order of the unpacked products */
        pack_rows(pd, dout[i], len, B, T, M);
        matmul_backward(dinp ? pdin : NULL, dw[i], dbias[i], wt, pd, pin, w[i], n, K, M);
    }
    if (dinp) unpack_rows(dinp, pdin, len, B, T, K, set);
}

/* Feed-forward block proj = relu(x·w1 + b1)·w2 + b2 with x, proj (N, C).  When
 * the rows are packed, the hidden h (N·F floats) holds only the n packed rows
 * (n, F): it never goes back to the padded layout, so the widest tensor of the
 * layer is not copied at all.  model_ffn_backward reads h in the same layout. */
void model_ffn_forward(const Model *m, const int *len, int T, float *h, float *proj, const float *x,
                       const float *w1, const float *b1, const float *w2, const float *b2,
                       int N, int C, int F) {
    if (!packs(m, len, N, T)) {
        matmul_forward(h, x, w1, b1, N, C, F);
        relu_forward(h, h, (size_t)N * F);
        matmul_forward(proj, h, w2, b2, N, F, C);
        return;
    }
    int B = N / T;
    size_t third = m->pack_cap / 3;
    float *pin = m->pack_memory, *pout = pin + third;
    int n = pack_rows(pin, x, len, B, T, C);
    matmul_forward(h, pin, w1, b1, n, C, F);
    relu_forward(h, h, (size_t)n * F);
    matmul_forward(pout, h, w2, b2, n, F, C);
    unpack_rows(proj, pout, len, B, T, C, 1);
}

/* dx (N, C) += ∂/∂x (= with `set`), gradients of w1 b1 w2 b2 added; dh: scratch of N·F floats. */
void model_ffn_backward(const Model *m, const int *len, int T, float *dx, int set, float *dh, float *wt,
                        const float *dproj, const float *h, const float *x,
                        const float *w1, float *gw1, float *gb1, const float *w2, float *gw2, float *gb2,
                        int N, int C, int F) {
    int packed = packs(m, len, N, T), B = N / T, n = N;
    size_t third = m->pack_cap / 3;
    float *pd = packed ? m->pack_memory : NULL, *pin = pd ? pd + third : NULL, *pdx = pin ? pin + third : NULL;
    if (packed) {
        n = pack_rows(pd, dproj, len, B, T, C);
        pack_rows(pin, x, len, B, T, C);
        if (set) memset(pdx, 0, (size_t)n * C * sizeof(float));
        else pack_rows(pdx, dx, len, B, T, C);
    } else if (set) {
        memset(dx, 0, (size_t)N * C * sizeof(float));
    }
    size_t nf = (size_t)n * F;
    memset(dh, 0, nf * sizeof(float));
    matmul_backward(dh, gw2, gb2, wt, packed ? pd : dproj, h, w2, n, F, C);
    OMP_SIMD
    for (size_t i = 0; i < nf; i++) dh[i] = h[i] > 0.0f ? dh[i] : 0.0f;   /* relu */
    matmul_backward(packed ? pdx : dx, gw1, gb1, wt, dh, packed ? pin : x, w1, n, C, F);
    if (packed) unpack_rows(dx, pdx, len, B, T, C, set);
}
