/* llama.c — see llama.h. */
#include "family/llama.h"
#include "core/attention.h"
#include "core/errmsg.h"
#include "core/tensor.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- loading a Hugging Face folder ---- */

/* What one load holds: the model, the folder (for messages), where the next
 * converted tensor goes in the block, the group of the tensors being taken. */
typedef struct {
    LlamaModel *m;
    const char *dir;
    float *next;
    int group;
    char *err;
    size_t errlen;
} Loader;

/* name, or "model." + name. */
static const StTensor *find_tensor(const Loader *ld, const char *name) {
    const StTensor *t = safetensors_find(&ld->m->st, name);
    if (t) return t;
    char full[300];
    snprintf(full, sizeof full, "model.%s", name);
    return safetensors_find(&ld->m->st, full);
}

static void shape_text(char *buf, size_t n, int ndim, const long *shape) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%ld", d ? ", " : "", shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Tensor `name` of shape (d0) (d1 = 0) or (d0, d1) → *field: in place when it
 * is mapped float32, else given a place in the block and left for
 * llama_model_ready_layer to convert (*field NULL until then).  A missing tensor is an
 * error unless optional (then *field stays NULL and 1 is returned). */
static int take(Loader *ld, const char *name, long d0, long d1, const float **field, int optional) {
    const StTensor *t = find_tensor(ld, name);
    int ndim = d1 ? 2 : 1;
    long want[2] = {d0, d1};
    char ws[64], hs[64];
    shape_text(ws, sizeof ws, ndim, want);
    if (!t) {
        if (optional) return 1;
        return errmsg_set(ld->err, ld->errlen, "%s: tensor model.%s is missing (expected shape %s)", ld->dir, name, ws);
    }
    if (t->ndim != ndim || t->shape[0] != d0 || (ndim == 2 && t->shape[1] != d1)) {
        shape_text(hs, sizeof hs, t->ndim, t->shape);
        return errmsg_set(ld->err, ld->errlen, "%s: tensor %s has shape %s; the config says %s", ld->dir, t->name, hs, ws);
    }
    if (!safetensors_dtype_size(t->dtype))
        return errmsg_set(ld->err, ld->errlen, "%s: tensor %s is %s; attnviz reads F32, F16 and BF16", ld->dir, t->name,
                          t->dtype);
    ld->m->n_params += t->numel;
    const float *mapped = safetensors_map_f32(&ld->m->st, t);
    if (mapped) { *field = mapped; return 0; }
    LlamaModel *m = ld->m;
    if (m->n_pending >= m->st.n) return errmsg_set(ld->err, ld->errlen, "%s: tensor %s taken twice", ld->dir, t->name);
    m->pending[m->n_pending++] = (LlamaPending){.field = field, .t = t, .dst = ld->next, .group = ld->group};
    m->ready[ld->group] = 0;
    *field = NULL;
    ld->next += t->numel;
    return 0;
}

/* A tensor the config says is there (want) or not (then *field = NULL). */
static int take_if(Loader *ld, int want, const char *name, long d0, long d1, const float **field) {
    *field = NULL;
    return want ? take(ld, name, d0, d1, field, 0) : 0;
}

static int load_layer(Loader *ld, int l) {
    const LlamaConfig *c = &ld->m->c;
    LlamaLayer *y = &ld->m->w.layer[l];
    long C = c->d_model, F = c->d_ff, D = c->head_dim, QD = (long)c->n_head * D, KD = (long)c->n_kv_head * D;
    char n[20][96];
    const char *part[20] = {"input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.q_proj.bias",
                            "self_attn.k_proj.weight", "self_attn.k_proj.bias", "self_attn.v_proj.weight",
                            "self_attn.v_proj.bias", "self_attn.o_proj.weight", "self_attn.o_proj.bias",
                            "self_attn.q_norm.weight", "self_attn.k_norm.weight", "post_attention_layernorm.weight",
                            "pre_feedforward_layernorm.weight", "post_feedforward_layernorm.weight",
                            "mlp.gate_proj.weight", "mlp.gate_proj.bias", "mlp.up_proj.weight", "mlp.up_proj.bias",
                            "mlp.down_proj.weight", "mlp.down_proj.bias"};
    for (int i = 0; i < 20; i++) snprintf(n[i], sizeof n[i], "layers.%d.%s", l, part[i]);
    int g = c->sandwich, b = c->mlp_bias;
    /* Llama's post_attention_layernorm is the norm before the feed-forward;
     * Gemma 3's is on the attention's output, pre_feedforward_layernorm before. */
    return take(ld, n[0], C, 0, &y->attn_norm, 0) || take(ld, n[1], QD, C, &y->wq, 0) ||
           take_if(ld, c->qkv_bias, n[2], QD, 0, &y->bq) || take(ld, n[3], KD, C, &y->wk, 0) ||
           take_if(ld, c->qkv_bias, n[4], KD, 0, &y->bk) || take(ld, n[5], KD, C, &y->wv, 0) ||
           take_if(ld, c->qkv_bias, n[6], KD, 0, &y->bv) || take(ld, n[7], C, QD, &y->wo, 0) ||
           take_if(ld, c->o_bias, n[8], C, 0, &y->bo) || take_if(ld, c->qk_norm, n[9], D, 0, &y->q_norm) ||
           take_if(ld, c->qk_norm, n[10], D, 0, &y->k_norm) ||
           take(ld, n[11], C, 0, g ? &y->post_attn_norm : &y->ffn_norm, 0) ||
           (g && take(ld, n[12], C, 0, &y->ffn_norm, 0)) || take_if(ld, g, n[13], C, 0, &y->post_ffn_norm) || take(ld, n[14], F, C, &y->w_gate, 0) ||
           take_if(ld, b, n[15], F, 0, &y->b_gate) || take(ld, n[16], F, C, &y->w_up, 0) ||
           take_if(ld, b, n[17], F, 0, &y->b_up) || take(ld, n[18], C, F, &y->w_down, 0) ||
           take_if(ld, b, n[19], C, 0, &y->b_down)
               ? -1 : 0;
}

static int load_weights(Loader *ld) {
    LlamaModel *m = ld->m;
    const LlamaConfig *c = &m->c;
    long C = c->d_model, V = c->n_vocab;
    ld->group = LLAMA_GROUP_OUT(c->n_layer);
    if (take(ld, "embed_tokens.weight", V, C, &m->w.embed, 0)) return -1;
    for (int l = 0; l < c->n_layer; l++) {
        ld->group = l;
        if (load_layer(ld, l)) return -1;
    }
    ld->group = LLAMA_GROUP_FINAL(c->n_layer);
    if (take(ld, "norm.weight", C, 0, &m->w.final_norm, 0)) return -1;
    ld->group = LLAMA_GROUP_OUT(c->n_layer);
    if (c->tie_embeddings) { m->w.out = m->w.embed; return 0; }
    if (safetensors_find(&m->st, "lm_head.weight")) return take(ld, "lm_head.weight", V, C, &m->w.out, 0);
    return errmsg_set(ld->err, ld->errlen, "%s: tensor lm_head.weight is missing (expected shape [%ld, %ld]; "
                      "config.json says tie_word_embeddings false)", ld->dir, V, C);
}

/* The block for converted tensors: room for every float tensor of the files;
 * pages no conversion touches cost no memory.  The list of tensors waiting,
 * and the groups, every one ready until a tensor of it waits. */
static int alloc_params(LlamaModel *m, const char *dir, char *err, size_t errlen) {
    m->pending = malloc((size_t)(m->st.n ? m->st.n : 1) * sizeof *m->pending);
    m->ready = malloc((size_t)m->c.n_layer + 2);
    if (!m->pending || !m->ready) return errmsg_set(err, errlen, "out of memory");
    memset(m->ready, 1, (size_t)m->c.n_layer + 2);
    size_t n = 0;
    for (int i = 0; i < m->st.n; i++)
        if (safetensors_dtype_size(m->st.t[i].dtype)) n += m->st.t[i].numel;
    float *p = n ? floats_huge(n, 0) : NULL;
    if (n && !p) return errmsg_set(err, errlen, "out of memory: %s needs %zu MB of weights", dir, n * 4 >> 20);
    m->params = p;
    return 0;
}

int llama_model_load(LlamaModel *m, const char *dir, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    snprintf(m->source, sizeof m->source, "%s", dir);
    if (llama_config_load(&m->c, dir, err, errlen) != 0) return -1;
    m->w.layer = calloc((size_t)m->c.n_layer, sizeof *m->w.layer);
    if (!m->w.layer) return errmsg_set(err, errlen, "out of memory");
    Loader ld = {.m = m, .dir = dir, .err = err, .errlen = errlen};
    int rc = safetensors_open_dir(&m->st, dir, err, errlen);
    if (rc == 0) rc = alloc_params(m, dir, err, errlen);
    ld.next = m->params;
    if (rc == 0) rc = load_weights(&ld);
    if (rc == 0) {
        const StTensor *t = find_tensor(&ld, "embed_tokens.weight");
        snprintf(m->dtype, sizeof m->dtype, "%s", t ? t->dtype : "F32");
    }
    if (rc != 0) llama_model_free(m);
    return rc;
}

int llama_model_ready_layer(LlamaModel *m, int g, char *err, size_t errlen) {
    if (!m->ready || g < 0 || g > LLAMA_GROUP_OUT(m->c.n_layer) || m->ready[g]) return 0;
    for (int i = 0; i < m->n_pending; i++) {
        LlamaPending *p = &m->pending[i];
        if (p->group != g || *p->field) continue;
        if (safetensors_read_f32(&m->st, p->t, p->dst, err, errlen) != 0) return -1;
        *p->field = p->dst;
    }
    if (g == LLAMA_GROUP_OUT(m->c.n_layer) && m->c.tie_embeddings) m->w.out = m->w.embed;
    m->ready[g] = 1;
    return 0;
}

/* x (T, C) = the embedding rows of ids · embed_scale: from the converted
 * table, else read row by row from the file (the table waits for the logits). */
static int embed_rows(LlamaModel *m, const int *ids, int T, float *out, char *err, size_t errlen) {
    const LlamaConfig *c = &m->c;
    int C = c->d_model;
    const StTensor *t = NULL;
    for (int i = 0; i < m->n_pending && !m->w.embed && !t; i++)
        if (m->pending[i].field == &m->w.embed) t = m->pending[i].t;
    for (int i = 0; i < T; i++) {
        float *x = out + (size_t)i * C;
        if (m->w.embed) memcpy(x, m->w.embed + (size_t)ids[i] * C, (size_t)C * sizeof *x);
        else if (!t || safetensors_read_rows_f32(&m->st, t, (size_t)ids[i], 1, x, err, errlen) != 0)
            return t ? -1 : errmsg_set(err, errlen, "%s: the token embedding is gone", m->source);
        for (int k = 0; k < C; k++) x[k] *= c->embed_scale;
    }
    return 0;
}

/* ---- forward ---- */

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

/* out (T, M) = in (T, K) · Wᵀ + b, W (M, K) as nn.Linear stores it; b may be
 * NULL.  OpenBLAS when the build has it (core/tensor.h), else plain loops. */
static void linear(float *out, const float *in, const float *W, const float *b, int T, int K, int M) {
    matmul_forward_t(out, in, W, b, T, K, M);
}

/* The cos and sin tables (T, D/2) of both kinds of layer. */
static void rope_tables(const LlamaModel *m, int T) {
    const LlamaConfig *c = &m->c;
    int D = c->head_dim, half = D / 2;
    double inv[LLAMA_MAX_HEAD_DIM / 2];
    for (int kind = 0; kind < 2; kind++) {
        llama_rope_inv_freq(&c->rope[kind], D, inv);
        for (int t = 0; t < T; t++)
            for (int i = 0; i < half; i++) {
                double a = t * inv[i];
                size_t at = ((size_t)kind * T + t) * half + i;
                m->a.cos[at] = (float)cos(a);
                m->a.sin[at] = (float)sin(a);
            }
    }
}

/* x (T, n·D), row stride n·D: every head rotated at its position. */
static void rope_apply(float *x, int T, int n, int D, const float *cs, const float *sn, LlamaRopeLayout layout) {
    int half = D / 2;
    for (int t = 0; t < T; t++)
        for (int h = 0; h < n; h++) {
            float *v = x + ((size_t)t * n + h) * D;
            for (int i = 0; i < half; i++) {
                float c = cs[(size_t)t * half + i], s = sn[(size_t)t * half + i];
                int a = layout == LLAMA_ROPE_PAIRS ? 2 * i : i, b = layout == LLAMA_ROPE_PAIRS ? 2 * i + 1 : i + half;
                float x0 = v[a], x1 = v[b];
                v[a] = x0 * c - x1 * s;
                v[b] = x0 * s + x1 * c;
            }
        }
}

/* gate (n) = act(gate) · up.  SiLU g·σ(g) and GELU's tanh form g·σ(2u) take σ
 * from sigmoid_vec, a few hundred values at a time (vectorised; expf one value
 * at a time was 3% of a 512-token SmolLM2 forward). */
static void gated_act(float *gate, const float *up, size_t n, LlamaAct act) {
    const float s = 0.7978845608028654f;   /* sqrt(2/pi) */
    enum { CHUNK = 256 };
#ifdef _OPENMP
    #pragma omp parallel for schedule(static) if (n >= 1u << 16)
#endif
    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t k = n - i0 < CHUNK ? n - i0 : CHUNK;
        float *g = gate + i0, z[CHUNK];
        const float *u = up + i0;
        if (act == LLAMA_ACT_GELU_ERF) {
            for (size_t i = 0; i < k; i++) g[i] = 0.5f * g[i] * (1.0f + erff(g[i] * 0.70710678118654752f)) * u[i];
            continue;
        }
        if (act == LLAMA_ACT_SILU) {
            sigmoid_vec(z, g, k);
        } else {
            OMP_SIMD
            for (size_t i = 0; i < k; i++) z[i] = 2.0f * s * (g[i] + 0.044715f * g[i] * g[i] * g[i]);
            sigmoid_vec(z, z, k);
        }
        OMP_SIMD
        for (size_t i = 0; i < k; i++) g[i] = g[i] * z[i] * u[i];
    }
}

/* Where layer l's q and k lie in a's (qk_layers, T, ·) arrays. */
static size_t qk_at(const LlamaActs *a, int l) { return a->qk_layers > 1 ? (size_t)l : 0; }

/* q and k of layer l, before and after RoPE, and v. */
static void qkv_forward(LlamaModel *m, int l, int T) {
    const LlamaConfig *c = &m->c;
    const LlamaLayer *y = &m->w.layer[l];
    LlamaActs *a = &m->a;
    int C = c->d_model, D = c->head_dim, QD = c->n_head * D, KD = c->n_kv_head * D, half = D / 2;
    size_t at = qk_at(a, l);
    float *qp = a->q_pre + at * T * QD, *qr = a->q_rot + at * T * QD;
    float *kp = a->k_pre + at * T * KD, *kr = a->k_rot + at * T * KD;
    linear(qp, a->h, y->wq, y->bq, T, C, QD);
    linear(kp, a->h, y->wk, y->bk, T, C, KD);
    linear(a->v, a->h, y->wv, y->bv, T, C, KD);
    if (y->q_norm) rmsnorm(qp, qp, y->q_norm, T * c->n_head, D, c->rms_eps, c->norm_plus_one);
    if (y->k_norm) rmsnorm(kp, kp, y->k_norm, T * c->n_kv_head, D, c->rms_eps, c->norm_plus_one);
    memcpy(qr, qp, (size_t)T * QD * sizeof *qr);
    memcpy(kr, kp, (size_t)T * KD * sizeof *kr);
    size_t kind = c->layer_kind[l];
    const float *cs = a->cos + kind * T * half, *sn = a->sin + kind * T * half;
    rope_apply(qr, T, c->n_head, D, cs, sn, c->rope_layout);
    rope_apply(kr, T, c->n_kv_head, D, cs, sn, c->rope_layout);
}

/* What the trace records as score_scale: the factor scores were multiplied
 * by when it is not 1/√D (Gemma 3's query_pre_attn_scalar^-½), else 0. */
static float score_scale(const LlamaConfig *c) {
    float usual = (float)(1.0 / sqrt((double)c->head_dim));
    return fabsf(c->attn_scale - usual) > 1e-6f * usual ? c->attn_scale : 0.0f;
}

/* Query head h of layer l and the key/value head it reads, before and after
 * RoPE, into the trace (the step strip's RoPE panels).  0, or -1 out of memory. */
static int record_rope(const LlamaModel *m, TraceMap *map, int l, int h, int T) {
    const LlamaConfig *c = &m->c;
    const LlamaActs *a = &m->a;
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

/* Query head h of layer l with the key/value head it shares, weights into w. */
static AttnHead head_of(const LlamaModel *m, int l, int h, int T, float *w) {
    const LlamaConfig *c = &m->c;
    const LlamaActs *a = &m->a;
    int D = c->head_dim, QD = c->n_head * D, KD = c->n_kv_head * D, kv = h / (c->n_head / c->n_kv_head);
    size_t at = qk_at(a, l);
    return (AttnHead){.q = a->q_rot + at * T * QD + h * D, .ldq = QD,
                      .k = a->k_rot + at * T * KD + kv * D, .ldk = KD, .v = a->v + kv * D, .ldv = KD,
                      .mask = a->mask + (size_t)c->layer_kind[l] * T * T, .mask_fill = -INFINITY,
                      .scale = c->attn_scale, .Tq = T, .Tk = T, .D = D, .Dv = D, .out = a->att + h * D, .ldo = QD,
                      .weights = w};
}

/* Layer l's heads side by side over the threads, each into weights of its own
 * that the map then owns (no copy), or that are freed without a map. */
static int heads_in_parallel(LlamaModel *m, int l, int T, TraceMap *map) {
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
 * into a.att, weights into the trace as map "decoder.l.masked_self". */
static int attention_layer(LlamaModel *m, int l, int T, Trace *tr, const char *const *tokens, const LlamaSteps *want,
                           AttnSteps *st) {
    const LlamaConfig *c = &m->c;
    LlamaActs *a = &m->a;
    int H = c->n_head, D = c->head_dim;
    const unsigned char *mask = a->mask + (size_t)c->layer_kind[l] * T * T;
    TraceMap *map = NULL;
    if (tr) {
        char id[64];
        snprintf(id, sizeof id, "decoder.%d.masked_self", l);
        map = trace_add_map(tr, &(TraceMapSpec){.id = id, .stack = "decoder", .layer = l, .kind = "masked_self",
                                                .queries = tokens, .Tq = T, .keys = tokens, .Tk = T, .d_k = D,
                                                .Dv = D, .mask = mask, .mask_fill = -INFINITY, .n_heads = H,
                                                .n_kv_heads = c->n_kv_head, .score_scale = score_scale(c)});
        if (!map) return -1;
    }
    if (!want || (!want->all && want->layer != l)) return heads_in_parallel(m, l, T, map);
    for (int h = 0; h < H; h++) {
        int steps = want->all || want->head == h;
        AttnHead hd = head_of(m, l, h, T, a->wts);
        hd.steps = steps ? st : NULL;
        if ((steps ? attention_forward : attention_forward_fast)(&hd) < 0) return -1;   /* same bits */
        if (map && trace_set_head(map, h, a->wts, steps ? st->scores : NULL, steps ? st->scaled : NULL,
                                  steps ? st->masked : NULL, steps ? st->output : NULL))
            return -1;
        if (map && steps && record_rope(m, map, l, h, T)) return -1;
    }
    return 0;
}

/* x (T, C) → x after layer l. */
static int block_forward(LlamaModel *m, int l, int T, Trace *tr, const char *const *tokens, const LlamaSteps *steps,
                         AttnSteps *st) {
    const LlamaConfig *c = &m->c;
    const LlamaLayer *y = &m->w.layer[l];
    LlamaActs *a = &m->a;
    int C = c->d_model, F = c->d_ff, QD = c->n_head * c->head_dim;
    size_t n = (size_t)T * C;
    rmsnorm(a->h, a->x, y->attn_norm, T, C, c->rms_eps, c->norm_plus_one);
    qkv_forward(m, l, T);
    if (attention_layer(m, l, T, tr, tokens, steps, st)) return -1;
    linear(a->y, a->att, y->wo, y->bo, T, QD, C);
    if (y->post_attn_norm) rmsnorm(a->y, a->y, y->post_attn_norm, T, C, c->rms_eps, c->norm_plus_one);
    for (size_t i = 0; i < n; i++) a->x[i] += a->y[i];
    rmsnorm(a->h, a->x, y->ffn_norm, T, C, c->rms_eps, c->norm_plus_one);
    linear(a->gate, a->h, y->w_gate, y->b_gate, T, C, F);
    linear(a->up, a->h, y->w_up, y->b_up, T, C, F);
    gated_act(a->gate, a->up, (size_t)T * F, c->act);
    linear(a->y, a->gate, y->w_down, y->b_down, T, F, C);
    if (y->post_ffn_norm) rmsnorm(a->y, a->y, y->post_ffn_norm, T, C, c->rms_eps, c->norm_plus_one);
    for (size_t i = 0; i < n; i++) a->x[i] += a->y[i];
    return 0;
}

static void acts_free(LlamaActs *a) {
    free(a->block);
    free(a->mask);
    memset(a, 0, sizeof *a);
}

/* Sizes the activations for T tokens: one block of floats, one of masks. */
static int acts_alloc(LlamaModel *m, int T, int every_layer_qk) {
    const LlamaConfig *c = &m->c;
    LlamaActs *a = &m->a;
    size_t Tz = (size_t)T, L = every_layer_qk ? (size_t)c->n_layer : 1, C = (size_t)c->d_model, F = (size_t)c->d_ff;
    size_t QD = (size_t)c->n_head * c->head_dim, KD = (size_t)c->n_kv_head * c->head_dim, half = (size_t)c->head_dim / 2;
    size_t sizes[14] = {Tz * C, L * Tz * QD, L * Tz * QD, L * Tz * KD, L * Tz * KD, Tz * KD, Tz * C,
                        Tz * QD, Tz * C, Tz * F, Tz * F, Tz * Tz, 2 * Tz * half, 2 * Tz * half};
    float **field[14] = {&a->x, &a->q_pre, &a->q_rot, &a->k_pre, &a->k_rot, &a->v, &a->h,
                         &a->att, &a->y, &a->gate, &a->up, &a->wts, &a->cos, &a->sin};
    size_t total = 0;
    for (int i = 0; i < 14; i++) total += sizes[i];
    acts_free(a);
    a->block = malloc(total * sizeof(float));
    a->mask = malloc(2 * Tz * Tz);
    if (!a->block || !a->mask) { acts_free(a); return -1; }
    float *p = a->block;
    for (int i = 0; i < 14; i++) { *field[i] = p; p += sizes[i]; }
    a->T = T;
    a->qk_layers = (int)L;
    unsigned char *full = a->mask, *slide = a->mask + Tz * Tz;
    attn_causal_mask(full, T, T);
    for (int i = 0; i < T; i++)   /* the window: keys i - window < j <= i */
        for (int j = 0; j < T; j++) slide[(size_t)i * T + j] = (unsigned char)(j <= i && i - j < c->window);
    return 0;
}

int llama_model_forward(LlamaModel *m, const int *ids, int T, Trace *tr, const char *const *tokens,
                        const LlamaSteps *steps, char *err, size_t errlen) {
    const LlamaConfig *c = &m->c;
    if (T < 1 || T > c->n_pos) return errmsg_set(err, errlen, "%d tokens; this model reads 1 to %d", T, c->n_pos);
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= c->n_vocab)
            return errmsg_set(err, errlen, "token id %d at position %d is outside the vocabulary (0..%d)", ids[t], t,
                              c->n_vocab - 1);
    AttnSteps st = {0};
    int upto = steps && steps->upto && !steps->all;
    int last = upto ? steps->layer : c->n_layer - 1;
    LlamaActs keep = m->a;   /* upto: the whole pass's states, put back at the end */
    if (upto) memset(&m->a, 0, sizeof m->a);
    int rc = -1;
    if (acts_alloc(m, T, steps || m->keep_qk) != 0 || (steps && attn_steps_alloc(&st, T, T, c->head_dim) != 0)) {
        errmsg_set(err, errlen, "out of memory for %d tokens", T);
        goto done;   /* (upto: the whole pass's states go back) */
    }
    if (tr) {
        char mj[1024];
        llama_model_json(m, mj, sizeof mj);
        if (trace_set_model_json(tr, mj) || trace_set_source(tr, tokens, 0) || trace_set_target(tr, tokens, T)) {
            errmsg_set(err, errlen, "out of memory (trace)");
            goto done;
        }
    }
    rope_tables(m, T);
    int C = c->d_model;
    if (embed_rows(m, ids, T, m->a.x, err, errlen)) goto done;
    for (int l = 0; l <= last; l++) {
        if (llama_model_ready_layer(m, l, err, errlen)) goto done;
        if (block_forward(m, l, T, tr, tokens, steps, &st)) {
            errmsg_set(err, errlen, "out of memory (trace of %d tokens)", T);
            goto done;
        }
    }
    if (upto) { rc = 0; goto done; }
    if (llama_model_ready_layer(m, LLAMA_GROUP_FINAL(c->n_layer), err, errlen)) goto done;
    rmsnorm(m->a.x, m->a.x, m->w.final_norm, T, C, c->rms_eps, c->norm_plus_one);
    rc = 0;
done:
    attn_steps_free(&st);
    if (upto) {
        acts_free(&m->a);
        m->a = keep;
    }
    return rc;
}

int llama_model_logits(LlamaModel *m, int t, float *logits, char *err, size_t errlen) {
    const LlamaConfig *c = &m->c;
    int C = c->d_model, V = c->n_vocab;
    if (!m->a.x || t < 0 || t >= m->a.T) return errmsg_set(err, errlen, "no forward pass covers position %d", t);
    if (llama_model_ready_layer(m, LLAMA_GROUP_OUT(c->n_layer), err, errlen)) return -1;
    linear(logits, m->a.x + (size_t)t * C, m->w.out, NULL, 1, C, V);
    if (c->final_softcap > 0)
        for (int v = 0; v < V; v++) logits[v] = c->final_softcap * tanhf(logits[v] / c->final_softcap);
    return 0;
}

int llama_model_json(const LlamaModel *m, char *buf, size_t n) {
    const LlamaConfig *c = &m->c;
    const LlamaRope *r = &c->rope[LLAMA_LAYER_FULL];
    static const char *rope_type[] = {"default", "linear", "llama3"};
    return snprintf(buf, n,
                    "{\"family\":\"%s\",\"architecture\":\"%s\",\"d_model\":%d,\"n_heads\":%d,\"n_kv_heads\":%d,"
                    "\"d_k\":%d,\"n_layers\":%d,\"d_ff\":%d,\"vocab_size\":%d,\"max_positions\":%d,\"norm\":\"rms\","
                    "\"activation\":\"%s\",\"rms_eps\":%g,\"rope_theta\":%g,\"rope_scaling\":\"%s\","
                    "\"rope_layout\":\"%s\",\"sliding_window\":%d,\"tied_embeddings\":%s,\"parameters\":%zu,"
                    "\"dtype\":\"%s\"}",
                    llama_arch_name(c->arch), c->arch_name, c->d_model, c->n_head, c->n_kv_head, c->head_dim,
                    c->n_layer, c->d_ff, c->n_vocab, c->n_pos, c->act_name, (double)c->rms_eps, r->theta,
                    rope_type[r->type], c->rope_layout == LLAMA_ROPE_PAIRS ? "pairs" : "rotate_half", c->window,
                    c->tie_embeddings ? "true" : "false", m->n_params, m->dtype);
}

void llama_model_free(LlamaModel *m) {
    if (!m) return;
    free(m->params);
    free(m->pending);
    free(m->ready);
    free(m->w.layer);
    safetensors_close(&m->st);
    if (m->map) munmap(m->map, m->map_len);
    acts_free(&m->a);
    memset(m, 0, sizeof *m);
}

/* ---- one token at a time, with a KV cache ---- */

int llama_cache_init(LlamaCache *kv, const LlamaModel *m, int n_ctx, char *err, size_t errlen) {
    const LlamaConfig *c = &m->c;
    memset(kv, 0, sizeof *kv);
    if (n_ctx < 1 || n_ctx > c->n_pos)
        return errmsg_set(err, errlen, "a cache of %d positions; this model reads 1 to %d", n_ctx, c->n_pos);
    size_t KD = (size_t)c->n_kv_head * c->head_dim, QD = (size_t)c->n_head * c->head_dim;
    size_t C = (size_t)c->d_model, F = (size_t)c->d_ff, per = (size_t)c->n_layer * n_ctx * KD;
    size_t nbuf = 3 * C + 2 * QD + 2 * F + (size_t)c->head_dim + (size_t)n_ctx;
    kv->k = malloc(2 * per * sizeof *kv->k);
    kv->buf = malloc(nbuf * sizeof *kv->buf);
    kv->mask = malloc((size_t)n_ctx);
    if (!kv->k || !kv->buf || !kv->mask) {
        llama_cache_free(kv);
        return errmsg_set(err, errlen, "out of memory for a cache of %d positions", n_ctx);
    }
    kv->v = kv->k + per;
    kv->n_ctx = n_ctx;
    return 0;
}

void llama_cache_free(LlamaCache *kv) {
    if (!kv) return;
    free(kv->k); free(kv->buf); free(kv->mask);
    memset(kv, 0, sizeof *kv);
}

/* One token's activations, cut from kv->buf. */
typedef struct {
    float *x, *h, *q, *att, *y, *gate, *up, *cs, *sn;
    float *wts;   /* (n_ctx) one head's weights when no rows are wanted */
} StepActs;

static StepActs step_acts(const LlamaModel *m, const LlamaCache *kv) {
    const LlamaConfig *c = &m->c;
    size_t C = (size_t)c->d_model, F = (size_t)c->d_ff, QD = (size_t)c->n_head * c->head_dim;
    StepActs s;
    s.x = kv->buf; s.h = s.x + C; s.q = s.h + C; s.att = s.q + QD; s.y = s.att + QD;
    s.gate = s.y + C; s.up = s.gate + F; s.cs = s.up + F; s.sn = s.cs + c->head_dim / 2;
    s.wts = s.sn + c->head_dim / 2;
    return s;
}

/* Query heads of layer l for the token at position t: its q, k and v, the
 * k and v into the cache, every head's weights into rows (L, H, n_ctx). */
static int step_attention(const LlamaModel *m, LlamaCache *kv, const StepActs *s, int l, int t, float *rows) {
    const LlamaConfig *c = &m->c;
    const LlamaLayer *y = &m->w.layer[l];
    int C = c->d_model, H = c->n_head, D = c->head_dim, QD = H * D, KD = c->n_kv_head * D, half = D / 2;
    float *kl = kv->k + (size_t)l * kv->n_ctx * KD, *vl = kv->v + (size_t)l * kv->n_ctx * KD;
    float *k = kl + (size_t)t * KD, *v = vl + (size_t)t * KD;
    linear(s->q, s->h, y->wq, y->bq, 1, C, QD);
    linear(k, s->h, y->wk, y->bk, 1, C, KD);
    linear(v, s->h, y->wv, y->bv, 1, C, KD);
    if (y->q_norm) rmsnorm(s->q, s->q, y->q_norm, H, D, c->rms_eps, c->norm_plus_one);
    if (y->k_norm) rmsnorm(k, k, y->k_norm, c->n_kv_head, D, c->rms_eps, c->norm_plus_one);
    double inv[LLAMA_MAX_HEAD_DIM / 2];
    int kind = c->layer_kind[l];
    llama_rope_inv_freq(&c->rope[kind], D, inv);
    for (int i = 0; i < half; i++) {
        double a = t * inv[i];
        s->cs[i] = (float)cos(a);
        s->sn[i] = (float)sin(a);
    }
    rope_apply(s->q, 1, H, D, s->cs, s->sn, c->rope_layout);
    rope_apply(k, 1, c->n_kv_head, D, s->cs, s->sn, c->rope_layout);
    for (int j = 0; j <= t; j++) kv->mask[j] = (unsigned char)(kind == LLAMA_LAYER_FULL || t - j < c->window);
    for (int h = 0; h < H; h++) {
        float *wts = rows ? rows + ((size_t)l * H + h) * kv->n_ctx : s->wts;
        AttnHead hd = {.q = s->q + h * D, .ldq = QD, .k = kl + (h / (H / c->n_kv_head)) * D, .ldk = KD,
                       .v = vl + (h / (H / c->n_kv_head)) * D, .ldv = KD, .mask = kind == LLAMA_LAYER_FULL ? NULL : kv->mask,
                       .mask_fill = -INFINITY, .scale = c->attn_scale, .Tq = 1, .Tk = t + 1, .D = D, .Dv = D,
                       .out = s->att + h * D, .ldo = QD, .weights = wts, .steps = NULL};
        if (attention_forward(&hd) < 0) return -1;
    }
    return 0;
}

int llama_model_step(LlamaModel *m, LlamaCache *kv, int id, float *rows, float *logits, char *err,
                     size_t errlen) {
    const LlamaConfig *c = &m->c;
    int t = kv->T, C = c->d_model, F = c->d_ff, QD = c->n_head * c->head_dim;
    if (t >= kv->n_ctx) return errmsg_set(err, errlen, "the cache is full (%d positions)", kv->n_ctx);
    if (id < 0 || id >= c->n_vocab)
        return errmsg_set(err, errlen, "token id %d is outside the vocabulary (0..%d)", id, c->n_vocab - 1);
    StepActs s = step_acts(m, kv);
    if (embed_rows(m, &id, 1, s.x, err, errlen)) return -1;   /* F16/BF16: converted when first needed */
    for (int l = 0; l < c->n_layer; l++) {
        if (llama_model_ready_layer(m, l, err, errlen)) return -1;
        const LlamaLayer *y = &m->w.layer[l];
        rmsnorm(s.h, s.x, y->attn_norm, 1, C, c->rms_eps, c->norm_plus_one);
        if (step_attention(m, kv, &s, l, t, rows)) return errmsg_set(err, errlen, "out of memory");
        linear(s.y, s.att, y->wo, y->bo, 1, QD, C);
        if (y->post_attn_norm) rmsnorm(s.y, s.y, y->post_attn_norm, 1, C, c->rms_eps, c->norm_plus_one);
        for (int i = 0; i < C; i++) s.x[i] += s.y[i];
        rmsnorm(s.h, s.x, y->ffn_norm, 1, C, c->rms_eps, c->norm_plus_one);
        linear(s.gate, s.h, y->w_gate, y->b_gate, 1, C, F);
        linear(s.up, s.h, y->w_up, y->b_up, 1, C, F);
        gated_act(s.gate, s.up, (size_t)F, c->act);
        linear(s.y, s.gate, y->w_down, y->b_down, 1, F, C);
        if (y->post_ffn_norm) rmsnorm(s.y, s.y, y->post_ffn_norm, 1, C, c->rms_eps, c->norm_plus_one);
        for (int i = 0; i < C; i++) s.x[i] += s.y[i];
    }
    kv->T = t + 1;
    if (!logits) return 0;
    if (llama_model_ready_layer(m, LLAMA_GROUP_FINAL(c->n_layer), err, errlen) ||
        llama_model_ready_layer(m, LLAMA_GROUP_OUT(c->n_layer), err, errlen))
        return -1;
    rmsnorm(s.x, s.x, m->w.final_norm, 1, C, c->rms_eps, c->norm_plus_one);
    linear(logits, s.x, m->w.out, NULL, 1, C, c->n_vocab);
    if (c->final_softcap > 0)
        for (int v = 0; v < c->n_vocab; v++) logits[v] = c->final_softcap * tanhf(logits[v] / c->final_softcap);
    return 0;
}
