/* hf_model.c — see hf_model.h. */
#include "family/hf_model.h"
#include "core/attention.h"
#include "core/errmsg.h"
#include "core/tensor.h"
#include "core/safetensors.h"
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- loading ---- */

/* Where copies land: the model's block, cut per weight (all layers of one
 * weight side by side).  Pages of it that no copy touches cost no memory. */
typedef struct {
    float *wte, *wpe, *wtt, *emb_ln_w, *emb_ln_b, *lnf_w, *lnf_b;
    float *mlm_w, *mlm_b, *mlm_ln_w, *mlm_ln_b, *mlm_bias;
    float *ln1_w, *ln1_b, *qkv_w, *qkv_b, *proj_w, *proj_b, *ln2_w, *ln2_b, *fc_w, *fc_b, *fc2_w, *fc2_b;
} Block;

/* What one load holds: the files, the folder (for messages), a scratch buffer
 * for tensors that are transposed or strided on their way in. */
typedef struct {
    SafeTensors *st;
    Block b;
    const char *dir;
    const char *prefix;      /* "transformer." or "bert." */
    float *scratch;
    size_t scratch_n;
    size_t n_params;
    char *err;
    size_t errlen;
} Loader;

/* name, or prefix + name, or with LayerNorm's gamma/beta for weight/bias. */
static const StTensor *find_tensor(const Loader *ld, const char *name) {
    char alt[512], full[600];
    snprintf(alt, sizeof alt, "%s", name);
    size_t n = strlen(alt);
    int is_ln = strstr(name, "LayerNorm") || strstr(name, "ln_");
    if (is_ln && n > 7 && !strcmp(alt + n - 7, ".weight")) strcpy(alt + n - 7, ".gamma");
    else if (is_ln && n > 5 && !strcmp(alt + n - 5, ".bias")) strcpy(alt + n - 5, ".beta");
    const char *cands[2] = {name, is_ln ? alt : NULL};
    for (int c = 0; c < 2; c++) {
        if (!cands[c]) continue;
        const StTensor *t = safetensors_find(ld->st, cands[c]);
        if (t) return t;
        snprintf(full, sizeof full, "%s%s", ld->prefix, cands[c]);
        if ((t = safetensors_find(ld->st, full))) return t;
    }
    return NULL;
}

static void shape_text(char *buf, size_t n, int ndim, const long *shape) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%ld", d ? ", " : "", shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Tensor `name` of shape (d0) or (d0, d1) → *field.  A float32 tensor used
 * as stored is not copied (*field points into the mapped file); otherwise it
 * is read into dst: transposed when `transpose` (stored (d0, d1) goes in as
 * (d1, d0)), rows ld floats apart.  field NULL: into dst only.  A missing
 * tensor is an error. */
static int load(Loader *ld, const char *name, int ndim, long d0, long d1, const float **field, float *dst,
                int transpose, long ldd) {
    const StTensor *t = find_tensor(ld, name);
    long want[2] = {d0, d1};
    char ws[64], hs[64];
    shape_text(ws, sizeof ws, ndim, want);
    if (!t)
        return errmsg_set(ld->err, ld->errlen, "%s: tensor %s%s is missing (expected shape %s)", ld->dir, ld->prefix,
                          name, ws);
    if (t->ndim != ndim || t->shape[0] != d0 || (ndim == 2 && t->shape[1] != d1)) {
        shape_text(hs, sizeof hs, t->ndim, t->shape);
        return errmsg_set(ld->err, ld->errlen, "%s: tensor %s has shape %s; expected %s", ld->dir, t->name, hs, ws);
    }
    ld->n_params += t->numel;
    long rows = ndim == 2 ? d0 : 1, cols = ndim == 2 ? d1 : d0;
    const float *mapped = field && !transpose && ldd == cols ? safetensors_map_f32(ld->st, t) : NULL;
    if (mapped) { *field = mapped; return 0; }
    if (field) *field = dst;
    if (!transpose && ldd == cols) return safetensors_read_f32(ld->st, t, dst, ld->err, ld->errlen);
    if (ld->scratch_n < t->numel) {
        free(ld->scratch);
        ld->scratch = malloc(t->numel * sizeof(float));
        ld->scratch_n = ld->scratch ? t->numel : 0;
        if (!ld->scratch) return errmsg_set(ld->err, ld->errlen, "out of memory loading %s", t->name);
    }
    if (safetensors_read_f32(ld->st, t, ld->scratch, ld->err, ld->errlen) != 0) return -1;
    for (long r = 0; r < rows; r++)
        for (long c = 0; c < cols; c++) {
            float v = ld->scratch[r * cols + c];
            if (transpose) dst[c * ldd + r] = v;
            else dst[r * ldd + c] = v;
        }
    return 0;
}

/* Cuts the block b out of base; counts floats when base is NULL. */
static size_t carve(const HfConfig *c, float *base, Block *b) {
    size_t C = (size_t)c->d_model, F = (size_t)c->d_ff, L = (size_t)c->n_layer, V = (size_t)c->n_vocab, off = 0;
#define TAKE(field, count) do { b->field = base ? base + off : NULL; off += (count); } while (0)
    TAKE(wte, V * C); TAKE(wpe, (size_t)c->n_pos * C);
    if (c->family == HF_BERT) { TAKE(wtt, (size_t)c->n_type * C); TAKE(emb_ln_w, C); TAKE(emb_ln_b, C); }
    TAKE(ln1_w, L * C); TAKE(ln1_b, L * C); TAKE(qkv_w, L * C * 3 * C); TAKE(qkv_b, L * 3 * C);
    TAKE(proj_w, L * C * C); TAKE(proj_b, L * C); TAKE(ln2_w, L * C); TAKE(ln2_b, L * C);
    TAKE(fc_w, L * C * F); TAKE(fc_b, L * F); TAKE(fc2_w, L * F * C); TAKE(fc2_b, L * C);
    if (c->family == HF_GPT2) { TAKE(lnf_w, C); TAKE(lnf_b, C); }
    else { TAKE(mlm_w, C * C); TAKE(mlm_b, C); TAKE(mlm_ln_w, C); TAKE(mlm_ln_b, C); TAKE(mlm_bias, V); }
#undef TAKE
    return off;
}

/* ---- the families' tensor tables ---- */

/* The sizes a table names, read from the config. */
typedef enum { HD_NONE, HD_C, HD_3C, HD_F, HD_V, HD_P, HD_TYPE } HfDim;

static long dim_size(const HfConfig *c, HfDim d) {
    switch (d) {
    case HD_C: return c->d_model;
    case HD_3C: return 3L * c->d_model;
    case HD_F: return c->d_ff;
    case HD_V: return c->n_vocab;
    case HD_P: return c->n_pos;
    case HD_TYPE: return c->n_type;
    default: return 0;
    }
}

/* One weight: its name in the file, its stored shape, where it goes. */
typedef struct {
    const char *name;   /* after the section's prefix; %d is the layer in a per-layer section */
    const char *alt;    /* read instead when name is absent, or NULL */
    HfDim d0, d1;       /* stored shape (d0) or (d0, d1); d1 HD_NONE for a vector */
    int transpose;      /* stored (d0, d1) kept as (d1, d0): nn.Linear's (out, in) → (in, out) */
    int join, part;     /* kept as part `part` of `join` side by side (BERT's q, k, v → qkv); else 1, 0 */
    size_t block;       /* offsetof(Block, where copies land; all layers of a weight side by side) */
    size_t field;       /* offsetof(HfWeights, or HfLayer in a per-layer section, the pointer set) */
} HfParam;

/* A run of weights with one name prefix. */
typedef struct {
    const char *prefix;   /* tried before every name (names are also tried without it) */
    int per_layer;        /* 1: walked once per layer */
    int optional;         /* 1: when its first tensor is absent, the whole section is (BERT's MLM head) */
    const HfParam *p;
    int n;
} HfSection;

#define BLK(f) offsetof(Block, f)
#define WTS(f) offsetof(HfWeights, f)
#define LAY(f) offsetof(HfLayer, f)
#define VEC(name, d0, b, w) {name, NULL, d0, HD_NONE, 0, 1, 0, BLK(b), w}
#define MAT(name, d0, d1, tr, b, w) {name, NULL, d0, d1, tr, 1, 0, BLK(b), w}

static const HfParam gpt2_embed[] = {
    MAT("wte.weight", HD_V, HD_C, 0, wte, WTS(wte)),
    MAT("wpe.weight", HD_P, HD_C, 0, wpe, WTS(wpe)),
};
static const HfParam gpt2_layer[] = {   /* Conv1D weights are stored (in, out) already */
    VEC("h.%d.ln_1.weight", HD_C, ln1_w, LAY(ln1_w)),
    VEC("h.%d.ln_1.bias", HD_C, ln1_b, LAY(ln1_b)),
    MAT("h.%d.attn.c_attn.weight", HD_C, HD_3C, 0, qkv_w, LAY(qkv_w)),
    VEC("h.%d.attn.c_attn.bias", HD_3C, qkv_b, LAY(qkv_b)),
    MAT("h.%d.attn.c_proj.weight", HD_C, HD_C, 0, proj_w, LAY(proj_w)),
    VEC("h.%d.attn.c_proj.bias", HD_C, proj_b, LAY(proj_b)),
    VEC("h.%d.ln_2.weight", HD_C, ln2_w, LAY(ln2_w)),
    VEC("h.%d.ln_2.bias", HD_C, ln2_b, LAY(ln2_b)),
    MAT("h.%d.mlp.c_fc.weight", HD_C, HD_F, 0, fc_w, LAY(fc_w)),
    VEC("h.%d.mlp.c_fc.bias", HD_F, fc_b, LAY(fc_b)),
    MAT("h.%d.mlp.c_proj.weight", HD_F, HD_C, 0, fc2_w, LAY(fc2_w)),
    VEC("h.%d.mlp.c_proj.bias", HD_C, fc2_b, LAY(fc2_b)),
};
static const HfParam gpt2_final[] = {
    VEC("ln_f.weight", HD_C, lnf_w, WTS(lnf_w)),
    VEC("ln_f.bias", HD_C, lnf_b, WTS(lnf_b)),
};
#define ROWS(a) a, (int)(sizeof a / sizeof a[0])
static const HfSection gpt2_tensors[] = {
    {"transformer.", 0, 0, ROWS(gpt2_embed)}, {"transformer.", 1, 0, ROWS(gpt2_layer)},
    {"transformer.", 0, 0, ROWS(gpt2_final)},
};

static const HfParam bert_embed[] = {
    MAT("embeddings.word_embeddings.weight", HD_V, HD_C, 0, wte, WTS(wte)),
    MAT("embeddings.position_embeddings.weight", HD_P, HD_C, 0, wpe, WTS(wpe)),
    MAT("embeddings.token_type_embeddings.weight", HD_TYPE, HD_C, 0, wtt, WTS(wtt)),
    VEC("embeddings.LayerNorm.weight", HD_C, emb_ln_w, WTS(emb_ln_w)),
    VEC("embeddings.LayerNorm.bias", HD_C, emb_ln_b, WTS(emb_ln_b)),
};
#define QKV(name, d1, part, b, w) {name, NULL, HD_C, d1, d1 != HD_NONE, 3, part, BLK(b), LAY(w)}
static const HfParam bert_layer[] = {   /* nn.Linear weights are stored (out, in): transposed */
    QKV("encoder.layer.%d.attention.self.query.weight", HD_C, 0, qkv_w, qkv_w),
    QKV("encoder.layer.%d.attention.self.query.bias", HD_NONE, 0, qkv_b, qkv_b),
    QKV("encoder.layer.%d.attention.self.key.weight", HD_C, 1, qkv_w, qkv_w),
    QKV("encoder.layer.%d.attention.self.key.bias", HD_NONE, 1, qkv_b, qkv_b),
    QKV("encoder.layer.%d.attention.self.value.weight", HD_C, 2, qkv_w, qkv_w),
    QKV("encoder.layer.%d.attention.self.value.bias", HD_NONE, 2, qkv_b, qkv_b),
    MAT("encoder.layer.%d.attention.output.dense.weight", HD_C, HD_C, 1, proj_w, LAY(proj_w)),
    VEC("encoder.layer.%d.attention.output.dense.bias", HD_C, proj_b, LAY(proj_b)),
    VEC("encoder.layer.%d.attention.output.LayerNorm.weight", HD_C, ln1_w, LAY(ln1_w)),
    VEC("encoder.layer.%d.attention.output.LayerNorm.bias", HD_C, ln1_b, LAY(ln1_b)),
    MAT("encoder.layer.%d.intermediate.dense.weight", HD_F, HD_C, 1, fc_w, LAY(fc_w)),
    VEC("encoder.layer.%d.intermediate.dense.bias", HD_F, fc_b, LAY(fc_b)),
    MAT("encoder.layer.%d.output.dense.weight", HD_C, HD_F, 1, fc2_w, LAY(fc2_w)),
    VEC("encoder.layer.%d.output.dense.bias", HD_C, fc2_b, LAY(fc2_b)),
    VEC("encoder.layer.%d.output.LayerNorm.weight", HD_C, ln2_w, LAY(ln2_w)),
    VEC("encoder.layer.%d.output.LayerNorm.bias", HD_C, ln2_b, LAY(ln2_b)),
};
static const HfParam bert_mlm[] = {     /* the masked-LM head: all of it, or none */
    MAT("cls.predictions.transform.dense.weight", HD_C, HD_C, 1, mlm_w, WTS(mlm_w)),
    VEC("cls.predictions.transform.dense.bias", HD_C, mlm_b, WTS(mlm_b)),
    VEC("cls.predictions.transform.LayerNorm.weight", HD_C, mlm_ln_w, WTS(mlm_ln_w)),
    VEC("cls.predictions.transform.LayerNorm.bias", HD_C, mlm_ln_b, WTS(mlm_ln_b)),
    {"cls.predictions.bias", "cls.predictions.decoder.bias", HD_V, HD_NONE, 0, 1, 0, BLK(mlm_bias), WTS(mlm_bias)},
};
static const HfSection bert_tensors[] = {   /* the MLM head sits beside "bert.", not under it */
    {"bert.", 0, 0, ROWS(bert_embed)}, {"bert.", 1, 0, ROWS(bert_layer)}, {"", 0, 1, ROWS(bert_mlm)},
};
#define N_SECTIONS(a) (int)(sizeof a / sizeof a[0])
#undef ROWS
#undef QKV
#undef MAT
#undef VEC

/* Weight p (of layer l in a per-layer section) → its place in the block, and
 * the model's pointer to it (load() says when that is the mapped file). */
static int load_param(Loader *ld, HfModel *m, const HfParam *p, int per_layer, int l) {
    const HfConfig *c = &m->c;
    char name[160];
    if (per_layer) snprintf(name, sizeof name, p->name, l);
    else snprintf(name, sizeof name, "%s", p->name);
    if (p->alt && !find_tensor(ld, name)) snprintf(name, sizeof name, "%s", p->alt);
    int ndim = p->d1 == HD_NONE ? 1 : 2;
    long d0 = dim_size(c, p->d0), d1 = dim_size(c, p->d1);
    long rows = ndim == 1 ? 1 : p->transpose ? d1 : d0, cols = ndim == 1 ? d0 : p->transpose ? d0 : d1;
    size_t slot = (size_t)(rows * cols * p->join);   /* floats of one layer in the block */
    float *base = *(float *const *)((const char *)&ld->b + p->block) + (per_layer ? (size_t)l * slot : 0);
    const float **field = (const float **)((char *)(per_layer ? (void *)&m->w.layer[l] : (void *)&m->w) + p->field);
    if (p->join > 1) {   /* a part of a joined weight: the pointer names the whole */
        if (p->part == 0) *field = base;
        field = NULL;
    }
    return load(ld, name, ndim, d0, d1, field, base + p->part * cols, p->transpose, ndim == 1 ? cols : cols * p->join);
}

/* Every section of a family's table, in order; an optional section whose
 * first tensor is absent is skipped.  0, or -1 with err. */
static int load_tables(Loader *ld, HfModel *m, const HfSection *s, int n_sections) {
    for (int k = 0; k < n_sections; k++, s++) {
        ld->prefix = s->prefix;
        if (s->optional && !find_tensor(ld, s->p[0].name)) continue;
        for (int l = 0; l < (s->per_layer ? m->c.n_layer : 1); l++)
            for (int i = 0; i < s->n; i++)
                if (load_param(ld, m, &s->p[i], s->per_layer, l)) return -1;
    }
    return 0;
}

int hf_model_load(HfModel *m, const char *dir, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    if (hf_config_load(&m->c, dir, err, errlen) != 0) return -1;
    Loader ld = {.st = &m->st, .dir = dir, .err = err, .errlen = errlen};
    size_t n = carve(&m->c, NULL, &ld.b);
    m->params = floats_huge(n, 0);   /* 2 MB pages: spares the copies a quarter of a million page faults */
    m->w.layer = calloc((size_t)m->c.n_layer, sizeof *m->w.layer);
    if (!m->params || !m->w.layer) {
        hf_model_free(m);
        return errmsg_set(err, errlen, "out of memory: %s needs %zu MB of weights", dir, n * 4 >> 20);
    }
    carve(&m->c, m->params, &ld.b);
    int rc = safetensors_open_dir(&m->st, dir, err, errlen);
    if (rc == 0 && m->c.family == HF_GPT2) rc = load_tables(&ld, m, gpt2_tensors, N_SECTIONS(gpt2_tensors));
    if (rc == 0 && m->c.family == HF_BERT) {
        rc = load_tables(&ld, m, bert_tensors, N_SECTIONS(bert_tensors));
        m->has_mlm = m->w.mlm_w != NULL;
    }
    if (rc == 0) {
        int gpt = m->c.family == HF_GPT2;
        ld.prefix = gpt ? "transformer." : "bert.";
        const StTensor *t = find_tensor(&ld, gpt ? "wte.weight" : "embeddings.word_embeddings.weight");
        snprintf(m->dtype, sizeof m->dtype, "%s", t ? t->dtype : "F32");
        m->n_params = ld.n_params;
    }
    free(ld.scratch);
    if (rc != 0) hf_model_free(m);
    return rc;
}

/* ---- forward ---- */

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

/* GELU's tanh form 0.5·x·(1 + tanh(u)) is x·σ(2u), the same number: σ by
 * sigmoid_vec, a few hundred values at a time (vectorised; expf or tanhf one
 * value at a time was 3.5% of a 512-token GPT-2 forward). */
static void activation_forward(float *x, size_t n, HfAct act) {
    const float s = 0.7978845608028654f;   /* sqrt(2/pi) */
    enum { CHUNK = 256 };
#ifdef _OPENMP
    #pragma omp parallel for schedule(static) if (n >= 1u << 16)
#endif
    for (size_t i0 = 0; i0 < n; i0 += CHUNK) {
        size_t k = n - i0 < CHUNK ? n - i0 : CHUNK;
        float *v = x + i0, z[CHUNK];
        if (act == HF_ACT_GELU_TANH) {
            OMP_SIMD
            for (size_t i = 0; i < k; i++) z[i] = 2.0f * s * (v[i] + 0.044715f * v[i] * v[i] * v[i]);
            sigmoid_vec(z, z, k);
            OMP_SIMD
            for (size_t i = 0; i < k; i++) v[i] *= z[i];
        } else if (act == HF_ACT_GELU_ERF) {
            for (size_t i = 0; i < k; i++) v[i] = 0.5f * v[i] * (1.0f + erff(v[i] * 0.70710678118654752f));
        } else {
            for (size_t i = 0; i < k; i++) v[i] = v[i] > 0 ? v[i] : 0;
        }
    }
}

/* Scratch of one forward pass, cut from m->buf. */
typedef struct {
    float *qkv;    /* (T, 3C) */
    float *att;    /* (T, C)  heads' outputs side by side */
    float *ff;     /* (T, F)  */
    float *y;      /* (T, C)  a sublayer's output, or the normed input */
    float *wts;    /* (T, T)  one head's weights */
    unsigned char *mask;   /* (T, T) causal (GPT-2) and padding: keys n_real… hidden */
    int use_mask;          /* 0: nothing is masked (BERT, no padding)               */
    AttnSteps st;  /* one head's steps when asked */
} Scratch;

/* Head h of the layer whose q, k, v are in s->qkv, weights into w. */
static AttnHead head_of(const Scratch *s, int h, int C, int D, int T, float *w) {
    return (AttnHead){.q = s->qkv + h * D, .ldq = 3 * C, .k = s->qkv + C + h * D, .ldk = 3 * C,
                      .v = s->qkv + 2 * C + h * D, .ldv = 3 * C, .mask = s->use_mask ? s->mask : NULL,
                      .mask_fill = -INFINITY, .scale = 1.0f / sqrtf((float)D), .Tq = T, .Tk = T, .D = D, .Dv = D,
                      .out = s->att + h * D, .ldo = C, .weights = w};
}

/* A layer's H heads side by side over the threads, each into weights of its
 * own that the map then owns (no copy), or that are freed without a map. */
static int heads_in_parallel(Scratch *s, TraceMap *map, int C, int H, int T) {
    AttnHead *a = calloc((size_t)H, sizeof *a);
    int rc = a ? 0 : -1;
    for (int h = 0; h < H && !rc; h++) {
        float *w = malloc((size_t)T * T * sizeof *w);
        if (!w) { rc = -1; break; }
        a[h] = head_of(s, h, C, C / H, T, w);
    }
    if (!rc) rc = attention_heads_fast(a, H);
    for (int h = 0; a && h < H; h++)
        if (a[h].weights && (rc || !map || trace_own_head_weights(map, h, a[h].weights))) free(a[h].weights);
    free(a);
    return rc;
}

/* Every head of layer l: q, k, v from qkv, outputs into att, weights into
 * the trace as map "decoder.l.masked_self" / "encoder.l.self". */
static int attention_layer(HfModel *m, Scratch *s, int l, int T, Trace *tr, const char *const *tokens,
                           const HfSteps *want) {
    const HfConfig *c = &m->c;
    int C = c->d_model, H = c->n_head, D = C / H;
    int gpt = c->family == HF_GPT2;
    TraceMap *map = NULL;
    if (tr) {
        char id[64];
        snprintf(id, sizeof id, gpt ? "decoder.%d.masked_self" : "encoder.%d.self", l);
        map = trace_add_map(tr, &(TraceMapSpec){.id = id, .stack = gpt ? "decoder" : "encoder", .layer = l,
                                                .kind = gpt ? "masked_self" : "self", .queries = tokens, .Tq = T,
                                                .keys = tokens, .Tk = T, .d_k = D, .Dv = D,
                                                .mask = s->use_mask ? s->mask : NULL, .mask_fill = -INFINITY,
                                                .n_heads = H});
        if (!map) return -1;
    }
    if (!want || (!want->all && want->layer != l)) return heads_in_parallel(s, map, C, H, T);
    for (int h = 0; h < H; h++) {
        int steps = want->all || want->head == h;
        AttnHead a = head_of(s, h, C, D, T, s->wts);
        a.steps = steps ? &s->st : NULL;
        if ((steps ? attention_forward : attention_forward_fast)(&a) < 0) return -1;   /* same bits */
        if (map && trace_set_head(map, h, s->wts, steps ? s->st.scores : NULL, steps ? s->st.scaled : NULL,
                                  steps ? s->st.masked : NULL, steps ? s->st.output : NULL))
            return -1;
    }
    return 0;
}

/* x (T,C) → x after layer l. */
static int block_forward(HfModel *m, Scratch *s, float *x, int l, int T, Trace *tr, const char *const *tokens,
                         const HfSteps *steps) {
    const HfConfig *c = &m->c;
    const HfLayer *y = &m->w.layer[l];
    int C = c->d_model, F = c->d_ff;
    size_t n = (size_t)T * C;
    int pre = c->family == HF_GPT2;
    const float *in = x;
    if (pre) { layernorm_eps(s->y, x, y->ln1_w, y->ln1_b, T, C, c->ln_eps); in = s->y; }
    matmul_forward(s->qkv, in, y->qkv_w, y->qkv_b, T, C, 3 * C);
    if (attention_layer(m, s, l, T, tr, tokens, steps)) return -1;
    matmul_forward(s->y, s->att, y->proj_w, y->proj_b, T, C, C);
    for (size_t i = 0; i < n; i++) x[i] += s->y[i];
    if (!pre) layernorm_eps(x, x, y->ln1_w, y->ln1_b, T, C, c->ln_eps);
    in = x;
    if (pre) { layernorm_eps(s->y, x, y->ln2_w, y->ln2_b, T, C, c->ln_eps); in = s->y; }
    matmul_forward(s->ff, in, y->fc_w, y->fc_b, T, C, F);
    activation_forward(s->ff, (size_t)T * F, c->act);
    matmul_forward(s->y, s->ff, y->fc2_w, y->fc2_b, T, F, C);
    for (size_t i = 0; i < n; i++) x[i] += s->y[i];
    if (!pre) layernorm_eps(x, x, y->ln2_w, y->ln2_b, T, C, c->ln_eps);
    return 0;
}

/* x (T,C) = the embeddings of ids. */
static void embed(HfModel *m, float *x, const int *ids, int T) {
    const HfConfig *c = &m->c;
    const HfWeights *w = &m->w;
    int C = c->d_model;
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C; i++) {
            float v = w->wte[(size_t)ids[t] * C + i] + w->wpe[(size_t)t * C + i];
            x[(size_t)t * C + i] = c->family == HF_BERT ? v + w->wtt[i] : v;   /* token type 0 */
        }
    if (c->family == HF_BERT) layernorm_eps(x, x, w->emb_ln_w, w->emb_ln_b, T, C, c->ln_eps);
}

/* Sizes m->x and m->buf for T tokens (n_real of them not padding) and cuts the scratch. */
static int scratch_for(HfModel *m, Scratch *s, int T, int n_real, const HfSteps *steps) {
    size_t C = (size_t)m->c.d_model, F = (size_t)m->c.d_ff, Tz = (size_t)T;
    size_t nf = Tz * 3 * C + Tz * C + Tz * F + Tz * C + Tz * Tz;
    free(m->x); free(m->buf);
    m->x = malloc(Tz * C * sizeof(float));
    m->buf = malloc(nf * sizeof(float) + Tz * Tz);
    memset(s, 0, sizeof *s);
    if (!m->x || !m->buf) return -1;
    s->qkv = m->buf; s->att = s->qkv + Tz * 3 * C; s->ff = s->att + Tz * C; s->y = s->ff + Tz * F;
    s->wts = s->y + Tz * C;
    s->mask = (unsigned char *)(s->wts + Tz * Tz);
    int gpt = m->c.family == HF_GPT2;
    if (gpt) attn_causal_mask(s->mask, T, T);
    else memset(s->mask, 1, Tz * Tz);
    for (size_t i = 0; i < Tz; i++)   /* the padding mask: no query sees a pad */
        memset(s->mask + i * Tz + n_real, 0, Tz - (size_t)n_real);
    s->use_mask = gpt || n_real < T;
    m->T = T;
    return steps ? attn_steps_alloc(&s->st, T, T, (int)C / m->c.n_head) : 0;
}

int hf_model_forward(HfModel *m, const int *ids, int T, int n_real, Trace *tr, const char *const *tokens,
                     const HfSteps *with_steps, char *err, size_t errlen) {
    const HfConfig *c = &m->c;
    if (T < 1 || T > c->n_pos)
        return errmsg_set(err, errlen, "%d tokens; this %s model reads 1 to %d", T, hf_family_name(c->family), c->n_pos);
    if (n_real < 1 || n_real > T) return errmsg_set(err, errlen, "%d tokens are not padding, of %d", n_real, T);
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= c->n_vocab)
            return errmsg_set(err, errlen, "token id %d at position %d is outside the vocabulary (0..%d)", ids[t], t,
                              c->n_vocab - 1);
    Scratch s;
    int rc = -1;
    int upto = with_steps && with_steps->upto && !with_steps->all;
    int last = upto ? with_steps->layer : c->n_layer - 1, keep_T = m->T;
    float *keep_x = m->x;   /* upto: the whole pass's states, put back at the end */
    if (upto) m->x = NULL;
    if (scratch_for(m, &s, T, n_real, with_steps) != 0) { errmsg_set(err, errlen, "out of memory for %d tokens", T); goto done; }
    if (tr) {
        char mj[512];
        hf_model_json(m, mj, sizeof mj);
        int gpt = c->family == HF_GPT2;
        if (trace_set_model_json(tr, mj) || trace_set_source(tr, tokens, gpt ? 0 : T) ||
            trace_set_target(tr, tokens, gpt ? T : 0)) { errmsg_set(err, errlen, "out of memory (trace)"); goto done; }
    }
    embed(m, m->x, ids, T);
    for (int l = 0; l <= last; l++)
        if (block_forward(m, &s, m->x, l, T, tr, tokens, with_steps)) {
            errmsg_set(err, errlen, "out of memory (trace of %d tokens)", T);
            goto done;
        }
    if (c->family == HF_GPT2 && !upto) layernorm_eps(m->x, m->x, m->w.lnf_w, m->w.lnf_b, T, c->d_model, c->ln_eps);
    rc = 0;
done:
    attn_steps_free(&s.st);
    if (upto) {
        free(m->x);
        m->x = keep_x;
        m->T = keep_T;
    }
    return rc;
}

int hf_model_logits(HfModel *m, int t, float *logits, char *err, size_t errlen) {
    const HfConfig *c = &m->c;
    int C = c->d_model, V = c->n_vocab;
    if (!m->x || t < 0 || t >= m->T) return errmsg_set(err, errlen, "no forward pass covers position %d", t);
    const float *h = m->x + (size_t)t * C;
    float *tmp = NULL;
    if (c->family == HF_BERT) {
        if (!m->has_mlm) return errmsg_set(err, errlen, "this BERT checkpoint has no masked-LM head (cls.predictions)");
        tmp = malloc((size_t)C * sizeof *tmp);
        if (!tmp) return errmsg_set(err, errlen, "out of memory");
        matmul_forward(tmp, h, m->w.mlm_w, m->w.mlm_b, 1, C, C);
        activation_forward(tmp, (size_t)C, c->act);
        layernorm_eps(tmp, tmp, m->w.mlm_ln_w, m->w.mlm_ln_b, 1, C, c->ln_eps);
        h = tmp;
    }
    /* · wteᵀ, the tied output embedding: 154 MB read for GPT-2, over the threads
     * (each logit summed the same way on any of them) */
#ifdef _OPENMP
    #pragma omp parallel for schedule(static) if (V >= 4096)
#endif
    for (int v = 0; v < V; v++) {
        const float *e = m->w.wte + (size_t)v * C;
        float sum = 0;
        OMP_SIMD_SUM
        for (int i = 0; i < C; i++) sum += h[i] * e[i];
        logits[v] = sum + (c->family == HF_BERT ? m->w.mlm_bias[v] : 0.0f);
    }
    free(tmp);
    return 0;
}

int hf_model_json(const HfModel *m, char *buf, size_t n) {
    const HfConfig *c = &m->c;
    return snprintf(buf, n,
                    "{\"family\":\"%s\",\"d_model\":%d,\"n_heads\":%d,\"d_k\":%d,\"n_layers\":%d,\"d_ff\":%d,"
                    "\"vocab_size\":%d,\"max_positions\":%d,\"norm\":\"%s\",\"activation\":\"%s\","
                    "\"layernorm_eps\":%g,\"parameters\":%zu,\"dtype\":\"%s\"}",
                    hf_family_name(c->family), c->d_model, c->n_head, c->d_model / c->n_head, c->n_layer, c->d_ff,
                    c->n_vocab, c->n_pos, c->family == HF_GPT2 ? "pre" : "post", c->act_name, (double)c->ln_eps,
                    m->n_params, m->dtype);
}

void hf_model_free(HfModel *m) {
    if (!m) return;
    free(m->params); free(m->w.layer); free(m->x); free(m->buf);
    safetensors_close(&m->st);
    memset(m, 0, sizeof *m);
}

/* ---- one token at a time, with a KV cache ---- */

int hf_cache_init(HfCache *kv, const HfModel *m, int n_ctx, char *err, size_t errlen) {
    const HfConfig *c = &m->c;
    memset(kv, 0, sizeof *kv);
    if (c->family != HF_GPT2)
        return errmsg_set(err, errlen, "%s reads a whole sentence at once; generation needs a decoder (GPT-2, the "
                          "Llama family)", hf_family_name(c->family));
    if (n_ctx < 1 || n_ctx > c->n_pos)
        return errmsg_set(err, errlen, "a cache of %d positions; this model reads 1 to %d", n_ctx, c->n_pos);
    size_t C = (size_t)c->d_model, per = (size_t)c->n_layer * n_ctx * C;
    kv->k = malloc(2 * per * sizeof *kv->k);
    kv->buf = malloc((6 * C + (size_t)c->d_ff + (size_t)n_ctx) * sizeof *kv->buf);
    if (!kv->k || !kv->buf) {
        hf_cache_free(kv);
        return errmsg_set(err, errlen, "out of memory for a cache of %d positions", n_ctx);
    }
    kv->v = kv->k + per;
    kv->n_ctx = n_ctx;
    return 0;
}

void hf_cache_free(HfCache *kv) {
    if (!kv) return;
    free(kv->k); free(kv->buf);
    memset(kv, 0, sizeof *kv);
}

/* Layer l's heads for the token at position t: qkv (3C) of the normed
 * input; k and v into the cache; outputs into att (C), weights into rows. */
static int step_heads(const HfModel *m, HfCache *kv, const float *qkv, float *att, float *wts, int l, int t,
                      float *rows) {
    const HfConfig *c = &m->c;
    int C = c->d_model, H = c->n_head, D = C / H;
    float *kl = kv->k + (size_t)l * kv->n_ctx * C, *vl = kv->v + (size_t)l * kv->n_ctx * C;
    memcpy(kl + (size_t)t * C, qkv + C, (size_t)C * sizeof *kl);
    memcpy(vl + (size_t)t * C, qkv + 2 * C, (size_t)C * sizeof *vl);
    for (int h = 0; h < H; h++) {
        AttnHead a = {.q = qkv + h * D, .ldq = 3 * C, .k = kl + h * D, .ldk = C, .v = vl + h * D, .ldv = C,
                      .mask = NULL, .mask_fill = -INFINITY, .scale = 1.0f / sqrtf((float)D), .Tq = 1, .Tk = t + 1,
                      .D = D, .Dv = D, .out = att + h * D, .ldo = C,
                      .weights = rows ? rows + ((size_t)l * H + h) * kv->n_ctx : wts, .steps = NULL};
        if (attention_forward(&a) < 0) return -1;
    }
    return 0;
}

int hf_model_step(const HfModel *m, HfCache *kv, int id, float *rows, float *logits, char *err, size_t errlen) {
    const HfConfig *c = &m->c;
    int t = kv->T, C = c->d_model, F = c->d_ff;
    if (t >= kv->n_ctx) return errmsg_set(err, errlen, "the cache is full (%d positions)", kv->n_ctx);
    if (id < 0 || id >= c->n_vocab)
        return errmsg_set(err, errlen, "token id %d is outside the vocabulary (0..%d)", id, c->n_vocab - 1);
    float *x = kv->buf, *y = x + C, *att = y + C, *qkv = att + C, *ff = qkv + 3 * C, *wts = ff + F;
    for (int i = 0; i < C; i++) x[i] = m->w.wte[(size_t)id * C + i] + m->w.wpe[(size_t)t * C + i];
    for (int l = 0; l < c->n_layer; l++) {
        const HfLayer *w = &m->w.layer[l];
        layernorm_eps(y, x, w->ln1_w, w->ln1_b, 1, C, c->ln_eps);
        matmul_forward(qkv, y, w->qkv_w, w->qkv_b, 1, C, 3 * C);
        if (step_heads(m, kv, qkv, att, wts, l, t, rows)) return errmsg_set(err, errlen, "out of memory");
        matmul_forward(y, att, w->proj_w, w->proj_b, 1, C, C);
        for (int i = 0; i < C; i++) x[i] += y[i];
        layernorm_eps(y, x, w->ln2_w, w->ln2_b, 1, C, c->ln_eps);
        matmul_forward(ff, y, w->fc_w, w->fc_b, 1, C, F);
        activation_forward(ff, (size_t)F, c->act);
        matmul_forward(y, ff, w->fc2_w, w->fc2_b, 1, F, C);
        for (int i = 0; i < C; i++) x[i] += y[i];
    }
    kv->T = t + 1;
    if (!logits) return 0;
    layernorm_eps(x, x, m->w.lnf_w, m->w.lnf_b, 1, C, c->ln_eps);
    for (int v = 0; v < c->n_vocab; v++) {   /* · wteᵀ: the tied output embedding */
        const float *e = m->w.wte + (size_t)v * C;
        float sum = 0;
        OMP_SIMD_SUM
        for (int i = 0; i < C; i++) sum += x[i] * e[i];
        logits[v] = sum;
    }
    return 0;
}
