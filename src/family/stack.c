/* stack.c — see stack.h. */
#include "family/stack.h"
#include "core/attention.h"
#include "core/errmsg.h"
#include "core/sizes.h"
#include "core/tensor.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- kernels ---- */

/* out (T,C) = LayerNorm(inp) with weight w, bias b and epsilon eps. */
static void layernorm_eps(float *out, const float *inp, const float *w, const float *b, int T, int C, float eps) {
#ifdef _OPENMP
    #pragma omp parallel for schedule(static) if ((long)T * C >= 1L << 16)
#endif
    for (int t = 0; t < T; t++) {
        const float *x = inp + (size_t)t * C;
        double mean = 0, var = 0;   /* sums in double, in vector lanes (a chain of adds was the time) */
        OMP_SIMD_REDUCE(mean)
        for (int i = 0; i < C; i++) mean += x[i];
        mean /= C;
        OMP_SIMD_REDUCE(var)
        for (int i = 0; i < C; i++) var += (x[i] - mean) * (x[i] - mean);
        float rstd = (float)(1.0 / sqrt(var / C + eps));
        float *o = out + (size_t)t * C;
        OMP_SIMD
        for (int i = 0; i < C; i++) o[i] = (float)(x[i] - mean) * rstd * w[i] + b[i];
    }
}

/* out (T, C) = in / √(mean(in²) + eps) · (w or 1 + w); out may be in. */
static void rmsnorm(float *out, const float *in, const float *w, int T, int C, float eps, int plus_one) {
    float off = plus_one ? 1.0f : 0.0f;
#ifdef _OPENMP
    #pragma omp parallel for schedule(static) if ((long)T * C >= 1L << 16)
#endif
    for (int t = 0; t < T; t++) {
        const float *x = in + (size_t)t * C;
        double ss = 0;   /* in double, in vector lanes (a chain of adds was the time) */
        OMP_SIMD_REDUCE(ss)
        for (int i = 0; i < C; i++) ss += (double)x[i] * x[i];
        float r = (float)(1.0 / sqrt(ss / C + eps));
        float *o = out + (size_t)t * C;
        OMP_SIMD
        for (int i = 0; i < C; i++) o[i] = x[i] * r * (off + w[i]);
    }
}

/* out (T, C) = the config's norm of in with n; out may be in. */
static void norm(const StackConfig *c, float *out, const float *in, const StackNormW *n, int T, int C) {
    if (c->norm == STACK_NORM_LAYER) layernorm_eps(out, in, n->w, n->b, T, C, c->norm_eps);
    else rmsnorm(out, in, n->w, T, C, c->norm_eps, c->norm_plus_one);
}

/* out (T, M) = in (T, K) · W (+ b), W in the layout it is stored in:
 * OpenBLAS when the build has it (core/tensor.h), else plain loops; the
 * tied output embeddings of GPT-2 and BERT one dot product per row. */
static void linear(float *out, const float *in, const StackLinear *W, int T, int K, int M) {
    if (W->layout == STACK_IN_OUT) { matmul_forward(out, in, W->w, W->b, T, K, M); return; }
    if (W->layout == STACK_OUT_IN) { matmul_forward_t(out, in, W->w, W->b, T, K, M); return; }
    for (int t = 0; t < T; t++) {
        const float *h = in + (size_t)t * K;
        float *o = out + (size_t)t * M;
#ifdef _OPENMP
        #pragma omp parallel for schedule(static) if (M >= 4096)
#endif
        for (int v = 0; v < M; v++) {
            const float *e = W->w + (size_t)v * K;
            float sum = 0;
            OMP_SIMD_SUM
            for (int i = 0; i < K; i++) sum += h[i] * e[i];
            o[v] = sum + (W->b ? W->b[v] : 0.0f);
        }
    }
}

/* g (n) = act(g), or act(g) · up when up is given.  SiLU g·σ(g) and GELU's
 * tanh form 0.5·g·(1 + tanh(u)) = g·σ(2u) take σ from sigmoid_vec, a few
 * hundred values at a time (vectorised; expf or tanhf one value at a time
 * was 3% of a 512-token forward). */
static void ffn_act(float *gate, const float *up, size_t n, StackAct act) {
    const float s = 0.7978845608028654f;   /* sqrt(2/pi) */
    enum { CHUNK = 256 };
#ifdef _OPENMP
    #pragma omp parallel for schedule(static) if (n >= 1u << 16)
#endif
    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t k = n - i0 < CHUNK ? n - i0 : CHUNK;
        float *g = gate + i0, z[CHUNK];
        const float *u = up ? up + i0 : NULL;
        if (act == STACK_ACT_GELU_ERF) {
            if (u) for (size_t i = 0; i < k; i++) g[i] = 0.5f * g[i] * (1.0f + erff(g[i] * 0.70710678118654752f)) * u[i];
            else for (size_t i = 0; i < k; i++) g[i] = 0.5f * g[i] * (1.0f + erff(g[i] * 0.70710678118654752f));
            continue;
        }
        if (act == STACK_ACT_RELU) {
            for (size_t i = 0; i < k; i++) g[i] = g[i] > 0 ? g[i] : 0;
            continue;
        }
        if (act == STACK_ACT_SILU) {
            sigmoid_vec(z, g, k);
        } else {
            OMP_SIMD
            for (size_t i = 0; i < k; i++) z[i] = 2.0f * s * (g[i] + 0.044715f * g[i] * g[i] * g[i]);
            sigmoid_vec(z, z, k);
        }
        if (u) {
            OMP_SIMD
            for (size_t i = 0; i < k; i++) g[i] = g[i] * z[i] * u[i];
        } else {
            OMP_SIMD
            for (size_t i = 0; i < k; i++) g[i] *= z[i];
        }
    }
}

/* cos, sin (T, D/2) of a RoPE at positions t0 .. t0 + T - 1. */
static void rope_table(const StackRope *r, int D, int t0, int T, float *cs, float *sn) {
    int half = D / 2;
    double inv[STACK_MAX_HEAD_DIM / 2];
    stack_rope_inv_freq(r, D, inv);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < half; i++) {
            double a = (t0 + t) * inv[i];
            cs[(size_t)t * half + i] = (float)cos(a);
            sn[(size_t)t * half + i] = (float)sin(a);
        }
}

/* x (T, n·D), row stride n·D: every head rotated at its position. */
static void rope_apply(float *x, int T, int n, int D, const float *cs, const float *sn, StackRopeLayout layout) {
    int half = D / 2;
    for (int t = 0; t < T; t++)
        for (int h = 0; h < n; h++) {
            float *v = x + ((size_t)t * n + h) * D;
            for (int i = 0; i < half; i++) {
                float c = cs[(size_t)t * half + i], s = sn[(size_t)t * half + i];
                int a = layout == STACK_ROPE_PAIRS ? 2 * i : i, b = layout == STACK_ROPE_PAIRS ? 2 * i + 1 : i + half;
                float x0 = v[a], x1 = v[b];
                v[a] = x0 * c - x1 * s;
                v[b] = x0 * s + x1 * c;
            }
        }
}

/* Zeroes the outputs (T rows of stride ld) of layer l's knocked-out heads. */
static void ablate_heads(const StackModel *m, int l, float *att, int T, int ld) {
    int H = m->c.n_head, D = m->c.head_dim;
    for (int h = 0; m->ablate && h < H; h++)
        if (m->ablate[(size_t)l * H + h])
            for (int t = 0; t < T; t++) memset(att + (size_t)t * ld + (size_t)h * D, 0, (size_t)D * sizeof *att);
}

/* ---- forward ---- */

/* Where layer l's q and k lie in a's (qk_layers, T, ·) arrays. */
static size_t qk_at(const StackActs *a, int l) { return a->qk_layers > 1 ? (size_t)l : 0; }

/* Query head h of layer l with the key/value head it shares, weights into w. */
static AttnHead head_of(const StackModel *m, int l, int h, int T, float *w) {
    const StackConfig *c = &m->c;
    const StackActs *a = &m->a;
    int D = c->head_dim, QD = c->n_head * D, KD = c->n_kv_head * D, kv = h / (c->n_head / c->n_kv_head);
    AttnHead hd = {.mask = a->use_mask ? a->mask + (size_t)c->layer_kind[l] * T * T : NULL, .mask_fill = -INFINITY,
                   .scale = c->attn_scale, .Tq = T, .Tk = T, .D = D, .Dv = D, .out = a->att + h * D, .ldo = QD,
                   .weights = w};
    if (c->fused_qkv) {
        int ld = QD + 2 * KD;
        hd.q = a->qkv + h * D; hd.k = a->qkv + QD + kv * D; hd.v = a->qkv + QD + KD + kv * D;
        hd.ldq = hd.ldk = hd.ldv = ld;
    } else {
        size_t at = qk_at(a, l);
        hd.q = a->q_rot + at * T * QD + h * D; hd.ldq = QD;
        hd.k = a->k_rot + at * T * KD + kv * D; hd.ldk = KD;
        hd.v = a->v + kv * D; hd.ldv = KD;
    }
    return hd;
}

/* q, k, v of layer l from h: one fused product, or three with q/k norm and RoPE. */
static void qkv_forward(StackModel *m, int l, int T, const float *h) {
    const StackConfig *c = &m->c;
    const StackLayer *y = &m->w.layer[l];
    StackActs *a = &m->a;
    int C = c->d_model, D = c->head_dim, QD = c->n_head * D, KD = c->n_kv_head * D, half = D / 2;
    if (c->fused_qkv) { linear(a->qkv, h, &y->qkv, T, C, QD + 2 * KD); return; }
    size_t at = qk_at(a, l);
    float *qp = a->q_pre + at * T * QD, *qr = a->q_rot + at * T * QD;
    float *kp = a->k_pre + at * T * KD, *kr = a->k_rot + at * T * KD;
    linear(qp, h, &y->q, T, C, QD);
    linear(kp, h, &y->k, T, C, KD);
    linear(a->v, h, &y->v, T, C, KD);
    if (y->q_norm.w) rmsnorm(qp, qp, y->q_norm.w, T * c->n_head, D, c->norm_eps, c->norm_plus_one);
    if (y->k_norm.w) rmsnorm(kp, kp, y->k_norm.w, T * c->n_kv_head, D, c->norm_eps, c->norm_plus_one);
    memcpy(qr, qp, (size_t)T * QD * sizeof *qr);
    memcpy(kr, kp, (size_t)T * KD * sizeof *kr);
    if (!c->rotary) return;
    size_t kind = c->layer_kind[l];
    const float *cs = a->cos + kind * T * half, *sn = a->sin + kind * T * half;
    rope_apply(qr, T, c->n_head, D, cs, sn, c->rope_layout);
    rope_apply(kr, T, c->n_kv_head, D, cs, sn, c->rope_layout);
}

/* What the trace records as score_scale: the factor scores were multiplied
 * by when it is not 1/√D (Gemma 3's query_pre_attn_scalar^-½), else 0. */
static float score_scale(const StackConfig *c) {
    float usual = (float)(1.0 / sqrt((double)c->head_dim));
    return fabsf(c->attn_scale - usual) > 1e-6f * usual ? c->attn_scale : 0.0f;
}

/* Query head h of layer l and the key/value head it reads, before and after
 * RoPE, into the trace (the step strip's RoPE panels).  0, or -1 out of memory. */
static int record_rope(const StackModel *m, TraceMap *map, int l, int h, int T) {
    const StackConfig *c = &m->c;
    const StackActs *a = &m->a;
    int D = c->head_dim, QD = c->n_head * D, KD = c->n_kv_head * D, kv = trace_kv_head(map, h);
    float *buf = malloc(4 * (size_t)T * D * sizeof *buf);   /* (4, T, D): q, q_rot, k, k_rot */
    if (!buf) return -1;
    size_t at = qk_at(a, l);
    const float *src[4] = {a->q_pre + at * T * QD + h * D, a->q_rot + at * T * QD + h * D,
                           a->k_pre + at * T * KD + kv * D, a->k_rot + at * T * KD + kv * D};
    for (int i = 0; i < 4; i++)
        for (int t = 0; t < T; t++)
            memcpy(buf + ((size_t)i * T + t) * D, src[i] + (size_t)t * (i < 2 ? QD : KD), (size_t)D * sizeof *buf);
    size_t n = (size_t)T * D;
    int rc = trace_set_rope(map, h, buf, buf + n, buf + 2 * n, buf + 3 * n);
    free(buf);
    return rc;
}

/* Layer l's heads side by side over the threads, each into weights of its own
 * that the map then owns (no copy), or that are freed without a map. */
static int heads_in_parallel(StackModel *m, int l, int T, TraceMap *map) {
    int H = m->c.n_head;
    AttnHead *hd = calloc((size_t)H, sizeof *hd);
    int rc = hd ? 0 : -1;
    for (int h = 0; h < H && !rc; h++) {
        float *w = malloc((size_t)T * T * sizeof *w);
        if (!w) { rc = -1; break; }
        hd[h] = head_of(m, l, h, T, w);
    }
    if (!rc) rc = attention_heads_fast(hd, H);
    for (int h = 0; hd && h < H; h++)
        if (hd[h].weights && (rc || !map || trace_own_head_weights(map, h, hd[h].weights))) free(hd[h].weights);
    free(hd);
    return rc;
}

/* Every query head of layer l with the key/value head it shares, outputs
 * into a.att, weights into the trace as map "decoder.l.masked_self" or
 * "encoder.l.self". */
static int attention_layer(StackModel *m, int l, int T, Trace *tr, const char *const *tokens, const StackSteps *want,
                           AttnSteps *st) {
    const StackConfig *c = &m->c;
    StackActs *a = &m->a;
    int H = c->n_head, D = c->head_dim;
    TraceMap *map = NULL;
    if (tr) {
        char id[64];
        snprintf(id, sizeof id, c->causal ? "decoder.%d.masked_self" : "encoder.%d.self", l);
        map = trace_add_map(tr, &(TraceMapSpec){.id = id, .stack = c->causal ? "decoder" : "encoder", .layer = l,
                                                .kind = c->causal ? "masked_self" : "self", .queries = tokens, .Tq = T,
                                                .keys = tokens, .Tk = T, .d_k = D, .Dv = D,
                                                .mask = a->use_mask ? a->mask + (size_t)c->layer_kind[l] * T * T : NULL,
                                                .mask_fill = -INFINITY, .n_heads = H, .n_kv_heads = c->n_kv_head,
                                                .score_scale = score_scale(c)});
        if (!map) return -1;
    }
    if (!want || (!want->all && want->layer != l)) {
        /* a sink's failure keeps its message in tr->sink->err (stack_model_forward) */
        return heads_in_parallel(m, l, T, map) || (map && trace_map_done(tr, map)) ? -1 : 0;
    }
    for (int h = 0; h < H; h++) {
        int steps = want->all || want->head == h;
        AttnHead hd = head_of(m, l, h, T, a->wts);
        hd.steps = steps ? st : NULL;
        if ((steps ? attention_forward : attention_forward_fast)(&hd) < 0) return -1;   /* same bits */
        if (map && trace_set_head(map, h, a->wts, steps ? st->scores : NULL, steps ? st->scaled : NULL,
                                  steps ? st->masked : NULL, steps ? st->output : NULL))
            return -1;
        if (map && steps && c->rotary && record_rope(m, map, l, h, T)) return -1;
    }
    return map && trace_map_done(tr, map) ? -1 : 0;
}

/* x (T, C) → x after layer l. */
static int block_forward(StackModel *m, int l, int T, Trace *tr, const char *const *tokens, const StackSteps *steps,
                         AttnSteps *st) {
    const StackConfig *c = &m->c;
    const StackLayer *y = &m->w.layer[l];
    StackActs *a = &m->a;
    int C = c->d_model, F = c->d_ff, QD = c->n_head * c->head_dim, post = c->post_norm;
    size_t n = (size_t)T * C;
    if (!post) norm(c, a->h, a->x, &y->norm1, T, C);
    qkv_forward(m, l, T, post ? a->x : a->h);
    if (attention_layer(m, l, T, tr, tokens, steps, st)) return -1;
    ablate_heads(m, l, a->att, T, QD);
    if (m->tap) memcpy(m->tap->att + (size_t)l * QD, a->att + (size_t)m->tap->pos * QD, (size_t)QD * sizeof *a->att);
    linear(a->y, a->att, &y->o, T, QD, C);
    if (y->post_attn_norm.w) norm(c, a->y, a->y, &y->post_attn_norm, T, C);
    for (size_t i = 0; i < n; i++) a->x[i] += a->y[i];
    if (post) norm(c, a->x, a->x, &y->norm1, T, C);
    else norm(c, a->h, a->x, &y->norm2, T, C);
    const float *in = post ? a->x : a->h;
    float *f = a->up;
    linear(a->up, in, &y->up, T, C, F);
    if (c->gated) {
        linear(a->gate, in, &y->gate, T, C, F);
        f = a->gate;
    }
    ffn_act(f, c->gated ? a->up : NULL, (size_t)T * F, c->act);
    linear(a->y, f, &y->down, T, F, C);
    if (m->tap) memcpy(m->tap->mlp + (size_t)l * C, a->y + (size_t)m->tap->pos * C, (size_t)C * sizeof *a->y);
    if (y->post_ffn_norm.w) norm(c, a->y, a->y, &y->post_ffn_norm, T, C);
    for (size_t i = 0; i < n; i++) a->x[i] += a->y[i];
    if (post) norm(c, a->x, a->x, &y->norm2, T, C);
    return 0;
}

/* x (T, C) = the embedding rows of ids · embed_scale: from the converted
 * table, else read row by row from the file (the table waits for the
 * logits); then the positions t0 … and token type 0 added, and normed. */
static int embed_rows(StackModel *m, const int *ids, int T, int t0, float *out, char *err, size_t errlen) {
    const StackConfig *c = &m->c;
    int C = c->d_model;
    const StTensor *t = NULL;
    if (stack_model_ready(m, STACK_GROUP_INPUT(c->n_layer), err, errlen)) return -1;
    for (int i = 0; i < m->n_pending && !m->w.embed && !t; i++)
        if (m->pending[i].field == &m->w.embed) t = m->pending[i].t;
    for (int i = 0; i < T; i++) {
        float *x = out + (size_t)i * C;
        if (m->w.embed) memcpy(x, m->w.embed + (size_t)ids[i] * C, (size_t)C * sizeof *x);
        else if (!t || safetensors_read_rows_f32(&m->st, t, (size_t)ids[i], 1, x, err, errlen) != 0)
            return t ? -1 : errmsg_set(err, errlen, "%s: the token embedding is gone", m->source);
        if (c->embed_scale != 1.0f)
            for (int k = 0; k < C; k++) x[k] *= c->embed_scale;
        if (m->w.pos)
            for (int k = 0; k < C; k++) x[k] += m->w.pos[(size_t)(t0 + i) * C + k];
        if (m->w.type)
            for (int k = 0; k < C; k++) x[k] += m->w.type[k];   /* token type 0 */
    }
    if (m->w.embed_norm.w) norm(c, out, out, &m->w.embed_norm, T, C);
    return 0;
}

static void acts_free(StackActs *a) {
    free(a->block);
    free(a->mask);
    memset(a, 0, sizeof *a);
}

/* Sizes the activations for T tokens (n_real of them not padding): one
 * block of floats, one of masks, every size checked. */
static int acts_alloc(StackModel *m, int T, int n_real, int every_layer_qk) {
    const StackConfig *c = &m->c;
    StackActs *a = &m->a;
    size_t Tz = (size_t)T, L = every_layer_qk && c->rotary ? (size_t)c->n_layer : 1, C = (size_t)c->d_model;
    size_t F = (size_t)c->d_ff, QD = (size_t)c->n_head * c->head_dim, KD = (size_t)c->n_kv_head * c->head_dim;
    size_t half = (size_t)c->head_dim / 2, sep = !c->fused_qkv, rot = (size_t)c->rotary;
    size_t rows[15] = {C, c->fused_qkv ? QD + 2 * KD : 0, sep * L * QD, sep * L * QD, sep * L * KD, sep * L * KD,
                       sep * KD, C, QD, C, F, c->gated ? F : 0, Tz, rot * 2 * half, rot * 2 * half};
    float **field[15] = {&a->x, &a->qkv, &a->q_pre, &a->q_rot, &a->k_pre, &a->k_rot, &a->v, &a->h,
                         &a->att, &a->y, &a->up, &a->gate, &a->wts, &a->cos, &a->sin};
    size_t sizes[15], total = 0, masks;
    for (int i = 0; i < 15; i++)
        if (!size_mul(&sizes[i], rows[i], Tz) || !size_add(&total, total, sizes[i])) return -1;
    if (!size_mul3(&masks, 2, Tz, Tz) || total > SIZE_MAX / sizeof(float)) return -1;
    acts_free(a);
    a->block = malloc(total * sizeof(float));
    a->mask = malloc(masks);
    if (!a->block || !a->mask) { acts_free(a); return -1; }
    float *p = a->block;
    for (int i = 0; i < 15; i++) { *field[i] = sizes[i] ? p : NULL; p += sizes[i]; }
    a->T = T;
    a->qk_layers = (int)L;
    unsigned char *full = a->mask, *slide = a->mask + Tz * Tz;
    if (c->causal) attn_causal_mask(full, T, T);
    else memset(full, 1, Tz * Tz);
    for (int i = 0; i < T; i++)   /* the window: keys i - window < j <= i */
        for (int j = 0; j < T; j++) slide[(size_t)i * T + j] = (unsigned char)(j <= i && i - j < c->window);
    int pad = c->mask_padding && n_real < T;
    for (size_t i = 0; pad && i < 2 * Tz; i++)   /* the padding mask: no query sees a pad */
        memset(a->mask + i * Tz + n_real, 0, Tz - (size_t)n_real);
    a->use_mask = c->causal || pad;
    if (c->rotary) {
        rope_table(&c->rope[STACK_LAYER_FULL], c->head_dim, 0, T, a->cos, a->sin);
        rope_table(&c->rope[STACK_LAYER_SLIDING], c->head_dim, 0, T, a->cos + Tz * half, a->sin + Tz * half);
    }
    return 0;
}

int stack_model_forward(StackModel *m, const int *ids, int T, int n_real, Trace *tr, const char *const *tokens,
                        const StackSteps *steps, char *err, size_t errlen) {
    const StackConfig *c = &m->c;
    if (T < 1 || T > c->n_pos)
        return errmsg_set(err, errlen, "%d tokens; this %s model reads 1 to %d", T, stack_family_name(c->family), c->n_pos);
    if (n_real < 1 || n_real > T) return errmsg_set(err, errlen, "%d tokens are not padding, of %d", n_real, T);
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= c->n_vocab)
            return errmsg_set(err, errlen, "token id %d at position %d is outside the vocabulary (0..%d)", ids[t], t,
                              c->n_vocab - 1);
    AttnSteps st = {0};
    int upto = steps && steps->upto && !steps->all;
    int last = upto ? steps->layer : c->n_layer - 1;
    StackActs keep = m->a;   /* upto: the whole pass's states, put back at the end */
    if (upto) memset(&m->a, 0, sizeof m->a);
    int rc = -1;
    if (acts_alloc(m, T, n_real, steps || m->keep_qk) != 0 ||
        (steps && attn_steps_alloc(&st, T, T, c->head_dim) != 0)) {
        errmsg_set(err, errlen, "out of memory for %d tokens", T);
        goto done;   /* (upto: the whole pass's states go back) */
    }
    if (tr) {
        char mj[1024];
        stack_model_json(m, mj, sizeof mj);
        if (trace_set_model_json(tr, mj) || trace_set_source(tr, tokens, c->causal ? 0 : T) ||
            trace_set_target(tr, tokens, c->causal ? T : 0)) {
            errmsg_set(err, errlen, "out of memory (trace)");
            goto done;
        }
    }
    if (embed_rows(m, ids, T, 0, m->a.x, err, errlen)) goto done;
    if (m->tap) memcpy(m->tap->embed, m->a.x + (size_t)m->tap->pos * c->d_model, (size_t)c->d_model * sizeof *m->a.x);
    for (int l = 0; l <= last; l++) {
        if (stack_model_ready(m, l, err, errlen)) goto done;
        if (block_forward(m, l, T, tr, tokens, steps, &st)) {
            if (tr && tr->sink && tr->sink->err[0]) errmsg_set(err, errlen, "%s", tr->sink->err);
            else errmsg_set(err, errlen, "out of memory (trace of %d tokens)", T);
            goto done;
        }
    }
    if (upto) { rc = 0; goto done; }
    if (stack_model_ready(m, STACK_GROUP_FINAL(c->n_layer), err, errlen)) goto done;
    if (m->tap) memcpy(m->tap->resid, m->a.x + (size_t)m->tap->pos * c->d_model, (size_t)c->d_model * sizeof *m->a.x);
    if (m->w.final_norm.w) norm(c, m->a.x, m->a.x, &m->w.final_norm, T, c->d_model);
    rc = 0;
done:
    attn_steps_free(&st);
    if (upto) {
        acts_free(&m->a);
        m->a = keep;
    }
    return rc;
}

/* logits (V) of the final hidden state h (C): an encoder's masked-LM head
 * first (into tmp, C), then the output embedding, soft-capped. */
static int logits_of(StackModel *m, const float *h, float *tmp, float *logits, char *err, size_t errlen) {
    const StackConfig *c = &m->c;
    int C = c->d_model, V = c->n_vocab;
    if (stack_model_ready(m, STACK_GROUP_OUT(c->n_layer), err, errlen)) return -1;
    if (!c->causal) {
        if (!m->has_mlm) return errmsg_set(err, errlen, "this BERT checkpoint has no masked-LM head (cls.predictions)");
        linear(tmp, h, &m->w.mlm, 1, C, C);
        ffn_act(tmp, NULL, (size_t)C, c->act);
        norm(c, tmp, tmp, &m->w.mlm_norm, 1, C);
        h = tmp;
    }
    linear(logits, h, &m->w.out, 1, C, V);
    if (c->final_softcap > 0)
        for (int v = 0; v < V; v++) logits[v] = c->final_softcap * tanhf(logits[v] / c->final_softcap);
    return 0;
}

int stack_model_logits(StackModel *m, int t, float *logits, char *err, size_t errlen) {
    int C = m->c.d_model;
    if (!m->a.x || t < 0 || t >= m->a.T) return errmsg_set(err, errlen, "no forward pass covers position %d", t);
    float *tmp = malloc((size_t)C * sizeof *tmp);
    if (!tmp) return errmsg_set(err, errlen, "out of memory");
    int rc = logits_of(m, m->a.x + (size_t)t * C, tmp, logits, err, errlen);
    free(tmp);
    return rc;
}

int stack_model_set_ablation(StackModel *m, const unsigned char *mask, char *err, size_t errlen) {
    size_t n = (size_t)m->c.n_layer * (size_t)m->c.n_head;
    int any = 0;
    for (size_t i = 0; mask && i < n; i++) any |= mask[i] != 0;
    free(m->ablate);
    m->ablate = NULL;
    if (!any) return 0;
    if (!(m->ablate = malloc(n))) return errmsg_set(err, errlen, "out of memory");
    for (size_t i = 0; i < n; i++) m->ablate[i] = mask[i] != 0;
    return 0;
}

/* snprintf appended at *k (kept within n). */
static void put(char *buf, size_t n, size_t *k, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + (*k < n ? *k : n), *k < n ? n - *k : 0, fmt, ap);
    va_end(ap);
    if (w > 0) *k += (size_t)w;
}

int stack_model_json(const StackModel *m, char *buf, size_t n) {
    const StackConfig *c = &m->c;
    const StackRope *r = &c->rope[STACK_LAYER_FULL];
    static const char *rope_type[] = {"default", "linear", "llama3"};
    int rms = c->norm == STACK_NORM_RMS;
    size_t k = 0;
    put(buf, n, &k, "{\"family\":\"%s\",", stack_family_name(c->family));
    if (c->rotary) put(buf, n, &k, "\"architecture\":\"%s\",", c->arch_name);
    put(buf, n, &k, "\"d_model\":%d,\"n_heads\":%d,", c->d_model, c->n_head);
    if (c->rotary) put(buf, n, &k, "\"n_kv_heads\":%d,", c->n_kv_head);
    put(buf, n, &k, "\"d_k\":%d,\"n_layers\":%d,\"d_ff\":%d,\"vocab_size\":%d,\"max_positions\":%d,\"norm\":\"%s\","
        "\"activation\":\"%s\",\"%s\":%g,", c->head_dim, c->n_layer, c->d_ff, c->n_vocab, c->n_pos,
        rms ? "rms" : c->post_norm ? "post" : "pre", c->act_name, rms ? "rms_eps" : "layernorm_eps", (double)c->norm_eps);
    if (c->rotary)
        put(buf, n, &k, "\"rope_theta\":%g,\"rope_scaling\":\"%s\",\"rope_layout\":\"%s\",\"sliding_window\":%d,"
            "\"tied_embeddings\":%s,", r->theta, rope_type[r->type],
            c->rope_layout == STACK_ROPE_PAIRS ? "pairs" : "rotate_half", c->window, c->tie_embeddings ? "true" : "false");
    put(buf, n, &k, "\"parameters\":%zu,\"dtype\":\"%s\"}", m->n_params, m->dtype);
    return (int)k;
}

/* ---- one token at a time, with a KV cache ---- */

int stack_cache_init(StackCache *kv, const StackModel *m, int n_ctx, char *err, size_t errlen) {
    const StackConfig *c = &m->c;
    memset(kv, 0, sizeof *kv);
    if (!c->causal)
        return errmsg_set(err, errlen, "%s reads a whole sentence at once; generation needs a decoder (GPT-2, the Llama "
                          "family, a llama2.c checkpoint)", stack_family_name(c->family));
    if (n_ctx < 1 || n_ctx > c->n_pos)
        return errmsg_set(err, errlen, "a cache of %d positions; this model reads 1 to %d", n_ctx, c->n_pos);
    size_t KD = (size_t)c->n_kv_head * c->head_dim, QD = (size_t)c->n_head * c->head_dim;
    size_t C = (size_t)c->d_model, F = (size_t)c->d_ff, per, nbuf = 3 * C + 3 * QD + 2 * KD + 2 * F + (size_t)c->head_dim;
    if (!size_mul3(&per, (size_t)c->n_layer, (size_t)n_ctx, KD) || per > SIZE_MAX / (2 * sizeof(float)))
        return errmsg_set(err, errlen, "a cache of %d positions is too large", n_ctx);
    kv->k = malloc(2 * per * sizeof *kv->k);
    kv->buf = malloc((nbuf + (size_t)n_ctx) * sizeof *kv->buf);
    kv->mask = malloc((size_t)n_ctx);
    if (!kv->k || !kv->buf || !kv->mask) {
        stack_cache_free(kv);
        return errmsg_set(err, errlen, "out of memory for a cache of %d positions", n_ctx);
    }
    kv->v = kv->k + per;
    kv->n_ctx = n_ctx;
    return 0;
}

void stack_cache_free(StackCache *kv) {
    if (!kv) return;
    free(kv->k); free(kv->buf); free(kv->mask);
    memset(kv, 0, sizeof *kv);
}

/* One token's activations, cut from kv->buf. */
typedef struct {
    float *x, *h, *y, *q, *att, *qkv, *gate, *up, *cs, *sn;
    float *wts;   /* (n_ctx) one head's weights when no rows are wanted */
} StepActs;

static StepActs step_acts(const StackModel *m, const StackCache *kv) {
    const StackConfig *c = &m->c;
    size_t C = (size_t)c->d_model, F = (size_t)c->d_ff, QD = (size_t)c->n_head * c->head_dim;
    size_t KD = (size_t)c->n_kv_head * c->head_dim;
    StepActs s;
    s.x = kv->buf; s.h = s.x + C; s.y = s.h + C; s.q = s.y + C; s.att = s.q + QD; s.qkv = s.att + QD;
    s.gate = s.qkv + QD + 2 * KD; s.up = s.gate + F; s.cs = s.up + F; s.sn = s.cs + c->head_dim / 2;
    s.wts = s.sn + c->head_dim / 2;
    return s;
}

/* Query heads of layer l for the token at position t, input s->h: its q, k
 * and v, the k and v into the cache, every head's weights into rows (L, H,
 * n_ctx), the outputs into s->att. */
static int step_attention(const StackModel *m, StackCache *kv, const StepActs *s, int l, int t, float *rows) {
    const StackConfig *c = &m->c;
    const StackLayer *y = &m->w.layer[l];
    int C = c->d_model, H = c->n_head, D = c->head_dim, QD = H * D, KD = c->n_kv_head * D, ldq = QD;
    float *kl = kv->k + (size_t)l * kv->n_ctx * KD, *vl = kv->v + (size_t)l * kv->n_ctx * KD;
    float *k = kl + (size_t)t * KD, *v = vl + (size_t)t * KD, *q = s->q;
    int kind = c->layer_kind[l];
    if (c->fused_qkv) {
        linear(s->qkv, s->h, &y->qkv, 1, C, QD + 2 * KD);
        memcpy(k, s->qkv + QD, (size_t)KD * sizeof *k);
        memcpy(v, s->qkv + QD + KD, (size_t)KD * sizeof *v);
        q = s->qkv;
        ldq = QD + 2 * KD;
    } else {
        linear(q, s->h, &y->q, 1, C, QD);
        linear(k, s->h, &y->k, 1, C, KD);
        linear(v, s->h, &y->v, 1, C, KD);
        if (y->q_norm.w) rmsnorm(q, q, y->q_norm.w, H, D, c->norm_eps, c->norm_plus_one);
        if (y->k_norm.w) rmsnorm(k, k, y->k_norm.w, c->n_kv_head, D, c->norm_eps, c->norm_plus_one);
    }
    if (c->rotary) {
        rope_table(&c->rope[kind], D, t, 1, s->cs, s->sn);
        rope_apply(q, 1, H, D, s->cs, s->sn, c->rope_layout);
        rope_apply(k, 1, c->n_kv_head, D, s->cs, s->sn, c->rope_layout);
    }
    for (int j = 0; j <= t; j++) kv->mask[j] = (unsigned char)(kind == STACK_LAYER_FULL || t - j < c->window);
    for (int h = 0; h < H; h++) {
        int g = h / (H / c->n_kv_head);
        float *wts = rows ? rows + ((size_t)l * H + h) * kv->n_ctx : s->wts;
        AttnHead hd = {.q = q + h * D, .ldq = ldq, .k = kl + g * D, .ldk = KD, .v = vl + g * D, .ldv = KD,
                       .mask = kind == STACK_LAYER_FULL ? NULL : kv->mask, .mask_fill = -INFINITY,
                       .scale = c->attn_scale, .Tq = 1, .Tk = t + 1, .D = D, .Dv = D, .out = s->att + h * D,
                       .ldo = QD, .weights = wts, .steps = NULL};
        if (attention_forward(&hd) < 0) return -1;
    }
    ablate_heads(m, l, s->att, 1, QD);
    return 0;
}

int stack_model_step(StackModel *m, StackCache *kv, int id, float *rows, float *logits, char *err, size_t errlen) {
    const StackConfig *c = &m->c;
    int t = kv->T, C = c->d_model, F = c->d_ff, QD = c->n_head * c->head_dim;
    if (t >= kv->n_ctx) return errmsg_set(err, errlen, "the cache is full (%d positions)", kv->n_ctx);
    if (id < 0 || id >= c->n_vocab)
        return errmsg_set(err, errlen, "token id %d is outside the vocabulary (0..%d)", id, c->n_vocab - 1);
    StepActs s = step_acts(m, kv);
    if (embed_rows(m, &id, 1, t, s.x, err, errlen)) return -1;   /* F16/BF16: converted when first needed */
    for (int l = 0; l < c->n_layer; l++) {
        if (stack_model_ready(m, l, err, errlen)) return -1;
        const StackLayer *y = &m->w.layer[l];
        norm(c, s.h, s.x, &y->norm1, 1, C);
        if (step_attention(m, kv, &s, l, t, rows)) return errmsg_set(err, errlen, "out of memory");
        linear(s.y, s.att, &y->o, 1, QD, C);
        if (y->post_attn_norm.w) norm(c, s.y, s.y, &y->post_attn_norm, 1, C);
        for (int i = 0; i < C; i++) s.x[i] += s.y[i];
        norm(c, s.h, s.x, &y->norm2, 1, C);
        float *f = s.up;
        linear(s.up, s.h, &y->up, 1, C, F);
        if (c->gated) {
            linear(s.gate, s.h, &y->gate, 1, C, F);
            f = s.gate;
        }
        ffn_act(f, c->gated ? s.up : NULL, (size_t)F, c->act);
        linear(s.y, f, &y->down, 1, F, C);
        if (y->post_ffn_norm.w) norm(c, s.y, s.y, &y->post_ffn_norm, 1, C);
        for (int i = 0; i < C; i++) s.x[i] += s.y[i];
    }
    kv->T = t + 1;
    if (!logits) return 0;
    if (stack_model_ready(m, STACK_GROUP_FINAL(c->n_layer), err, errlen)) return -1;
    if (m->w.final_norm.w) norm(c, s.x, s.x, &m->w.final_norm, 1, C);
    return logits_of(m, s.x, s.h, logits, err, errlen);
}
