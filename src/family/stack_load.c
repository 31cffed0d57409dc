/* stack_load.c — the families' tensor tables and the loader of the stack
 * (family/stack.h): stack_model_load, stack_model_ready, stack_model_free. */
#include "family/stack.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/sizes.h"
#include "core/tensor.h"
#include "family/hf_config.h"
#include "family/llama_config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- the families' tensor tables ---- */

/* The sizes a table names, read from the config. */
typedef enum { SD_NONE, SD_C, SD_QKV, SD_QD, SD_KD, SD_D, SD_F, SD_V, SD_P, SD_TYPE } StackDim;

static long dim_size(const StackConfig *c, StackDim d) {
    long QD = (long)c->n_head * c->head_dim, KD = (long)c->n_kv_head * c->head_dim;
    switch (d) {
    case SD_C: return c->d_model;
    case SD_QKV: return QD + 2 * KD;
    case SD_QD: return QD;
    case SD_KD: return KD;
    case SD_D: return c->head_dim;
    case SD_F: return c->d_ff;
    case SD_V: return c->n_vocab;
    case SD_P: return c->n_pos;
    case SD_TYPE: return c->n_type;
    default: return 0;
    }
}

/* When a tensor is read: always, or as a config flag says. */
typedef enum { IF_ALWAYS, IF_QKV_BIAS, IF_O_BIAS, IF_MLP_BIAS, IF_QK_NORM, IF_SANDWICH, IF_NOT_SANDWICH, IF_UNTIED } StackCond;

static int cond_holds(const StackConfig *c, StackCond k) {
    switch (k) {
    case IF_QKV_BIAS: return c->qkv_bias;
    case IF_O_BIAS: return c->o_bias;
    case IF_MLP_BIAS: return c->mlp_bias;
    case IF_QK_NORM: return c->qk_norm;
    case IF_SANDWICH: return c->sandwich;
    case IF_NOT_SANDWICH: return !c->sandwich;
    case IF_UNTIED: return !c->tie_embeddings;
    default: return 1;
    }
}

/* One weight: its name in the file, its stored shape, where it goes. */
typedef struct {
    const char *name;     /* after the section's prefix; %d is the layer in a per-layer section */
    const char *alt;      /* read instead when name is absent, or NULL */
    StackDim d0, d1;      /* stored shape (d0) or (d0, d1); d1 SD_NONE for a vector */
    int linear;           /* 1: `at` is a StackLinear (its weight, and layout as kept, set) */
    StackLayout layout;
    int transpose;        /* stored (d0, d1) kept as (d1, d0): BERT's nn.Linear (out, in) → (in, out) */
    int part;             /* part `part` of q | k | v joined side by side (BERT), or -1 */
    StackCond cond;
    size_t at;            /* offsetof(StackWeights, or StackLayer in a per-layer section, the pointer set) */
} StackTensor;

/* A run of weights with one name prefix and one group. */
typedef struct {
    const char *prefix;   /* tried before every name (names are also tried without it) */
    int group;            /* SG_LAYER (walked once per layer), SG_FINAL, SG_OUT, SG_INPUT */
    int optional;         /* 1: when its first tensor is absent, the whole section is (BERT's MLM head) */
    const StackTensor *p;
    int n;
} StackSection;
enum { SG_LAYER, SG_FINAL, SG_OUT, SG_INPUT };

#define WTS(f) offsetof(StackWeights, f)
#define LAY(f) offsetof(StackLayer, f)
#define VEC(name, d0, at) {name, NULL, d0, SD_NONE, 0, 0, 0, -1, IF_ALWAYS, at}
#define VEC_IF(name, d0, cond, at) {name, NULL, d0, SD_NONE, 0, 0, 0, -1, cond, at}
#define MAT(name, d0, d1, at) {name, NULL, d0, d1, 0, 0, 0, -1, IF_ALWAYS, at}
#define LIN(name, d0, d1, layout, tr, at) {name, NULL, d0, d1, 1, layout, tr, -1, IF_ALWAYS, at}
#define ROWS(a) a, (int)(sizeof a / sizeof a[0])

static const StackTensor gpt2_embed[] = {MAT("wte.weight", SD_V, SD_C, WTS(embed))};
static const StackTensor gpt2_input[] = {MAT("wpe.weight", SD_P, SD_C, WTS(pos))};
static const StackTensor gpt2_layer[] = {   /* Conv1D weights are stored (in, out) */
    VEC("h.%d.ln_1.weight", SD_C, LAY(norm1.w)),
    VEC("h.%d.ln_1.bias", SD_C, LAY(norm1.b)),
    LIN("h.%d.attn.c_attn.weight", SD_C, SD_QKV, STACK_IN_OUT, 0, LAY(qkv)),
    VEC("h.%d.attn.c_attn.bias", SD_QKV, LAY(qkv.b)),
    LIN("h.%d.attn.c_proj.weight", SD_QD, SD_C, STACK_IN_OUT, 0, LAY(o)),
    VEC("h.%d.attn.c_proj.bias", SD_C, LAY(o.b)),
    VEC("h.%d.ln_2.weight", SD_C, LAY(norm2.w)),
    VEC("h.%d.ln_2.bias", SD_C, LAY(norm2.b)),
    LIN("h.%d.mlp.c_fc.weight", SD_C, SD_F, STACK_IN_OUT, 0, LAY(up)),
    VEC("h.%d.mlp.c_fc.bias", SD_F, LAY(up.b)),
    LIN("h.%d.mlp.c_proj.weight", SD_F, SD_C, STACK_IN_OUT, 0, LAY(down)),
    VEC("h.%d.mlp.c_proj.bias", SD_C, LAY(down.b)),
};
static const StackTensor gpt2_final[] = {VEC("ln_f.weight", SD_C, WTS(final_norm.w)),
                                         VEC("ln_f.bias", SD_C, WTS(final_norm.b))};
static const StackSection gpt2_tensors[] = {
    {"transformer.", SG_OUT, 0, ROWS(gpt2_embed)}, {"transformer.", SG_INPUT, 0, ROWS(gpt2_input)},
    {"transformer.", SG_LAYER, 0, ROWS(gpt2_layer)}, {"transformer.", SG_FINAL, 0, ROWS(gpt2_final)}, {NULL, 0, 0, NULL, 0}};

static const StackTensor bert_embed[] = {MAT("embeddings.word_embeddings.weight", SD_V, SD_C, WTS(embed))};
static const StackTensor bert_input[] = {
    MAT("embeddings.position_embeddings.weight", SD_P, SD_C, WTS(pos)),
    MAT("embeddings.token_type_embeddings.weight", SD_TYPE, SD_C, WTS(type)),
    VEC("embeddings.LayerNorm.weight", SD_C, WTS(embed_norm.w)),
    VEC("embeddings.LayerNorm.bias", SD_C, WTS(embed_norm.b)),
};
#define QKV_W(name, part) {name, NULL, SD_C, SD_C, 1, STACK_IN_OUT, 1, part, IF_ALWAYS, LAY(qkv)}
#define QKV_B(name, part) {name, NULL, SD_C, SD_NONE, 0, 0, 0, part, IF_ALWAYS, LAY(qkv.b)}
static const StackTensor bert_layer[] = {   /* nn.Linear weights are stored (out, in): kept (in, out) */
    QKV_W("encoder.layer.%d.attention.self.query.weight", 0),
    QKV_B("encoder.layer.%d.attention.self.query.bias", 0),
    QKV_W("encoder.layer.%d.attention.self.key.weight", 1),
    QKV_B("encoder.layer.%d.attention.self.key.bias", 1),
    QKV_W("encoder.layer.%d.attention.self.value.weight", 2),
    QKV_B("encoder.layer.%d.attention.self.value.bias", 2),
    LIN("encoder.layer.%d.attention.output.dense.weight", SD_C, SD_C, STACK_IN_OUT, 1, LAY(o)),
    VEC("encoder.layer.%d.attention.output.dense.bias", SD_C, LAY(o.b)),
    VEC("encoder.layer.%d.attention.output.LayerNorm.weight", SD_C, LAY(norm1.w)),
    VEC("encoder.layer.%d.attention.output.LayerNorm.bias", SD_C, LAY(norm1.b)),
    LIN("encoder.layer.%d.intermediate.dense.weight", SD_F, SD_C, STACK_IN_OUT, 1, LAY(up)),
    VEC("encoder.layer.%d.intermediate.dense.bias", SD_F, LAY(up.b)),
    LIN("encoder.layer.%d.output.dense.weight", SD_C, SD_F, STACK_IN_OUT, 1, LAY(down)),
    VEC("encoder.layer.%d.output.dense.bias", SD_C, LAY(down.b)),
    VEC("encoder.layer.%d.output.LayerNorm.weight", SD_C, LAY(norm2.w)),
    VEC("encoder.layer.%d.output.LayerNorm.bias", SD_C, LAY(norm2.b)),
};
static const StackTensor bert_mlm[] = {   /* the masked-LM head: all of it, or none */
    LIN("cls.predictions.transform.dense.weight", SD_C, SD_C, STACK_IN_OUT, 1, WTS(mlm)),
    VEC("cls.predictions.transform.dense.bias", SD_C, WTS(mlm.b)),
    VEC("cls.predictions.transform.LayerNorm.weight", SD_C, WTS(mlm_norm.w)),
    VEC("cls.predictions.transform.LayerNorm.bias", SD_C, WTS(mlm_norm.b)),
    {"cls.predictions.bias", "cls.predictions.decoder.bias", SD_V, SD_NONE, 0, 0, 0, -1, IF_ALWAYS, WTS(out.b)},
};
static const StackSection bert_tensors[] = {   /* the MLM head sits beside "bert.", not under it */
    {"bert.", SG_OUT, 0, ROWS(bert_embed)}, {"bert.", SG_INPUT, 0, ROWS(bert_input)},
    {"bert.", SG_LAYER, 0, ROWS(bert_layer)}, {"", SG_OUT, 1, ROWS(bert_mlm)}, {NULL, 0, 0, NULL, 0}};

#define NNL(name, d0, d1, at) LIN(name, d0, d1, STACK_OUT_IN, 0, at)
static const StackTensor llama_embed[] = {MAT("embed_tokens.weight", SD_V, SD_C, WTS(embed))};
/* Llama's post_attention_layernorm is the norm before the feed-forward;
 * Gemma 3's is on the attention's output, pre_feedforward_layernorm before. */
static const StackTensor llama_layer[] = {   /* nn.Linear weights, used as stored (out, in) */
    VEC("layers.%d.input_layernorm.weight", SD_C, LAY(norm1.w)),
    NNL("layers.%d.self_attn.q_proj.weight", SD_QD, SD_C, LAY(q)),
    VEC_IF("layers.%d.self_attn.q_proj.bias", SD_QD, IF_QKV_BIAS, LAY(q.b)),
    NNL("layers.%d.self_attn.k_proj.weight", SD_KD, SD_C, LAY(k)),
    VEC_IF("layers.%d.self_attn.k_proj.bias", SD_KD, IF_QKV_BIAS, LAY(k.b)),
    NNL("layers.%d.self_attn.v_proj.weight", SD_KD, SD_C, LAY(v)),
    VEC_IF("layers.%d.self_attn.v_proj.bias", SD_KD, IF_QKV_BIAS, LAY(v.b)),
    NNL("layers.%d.self_attn.o_proj.weight", SD_C, SD_QD, LAY(o)),
    VEC_IF("layers.%d.self_attn.o_proj.bias", SD_C, IF_O_BIAS, LAY(o.b)),
    VEC_IF("layers.%d.self_attn.q_norm.weight", SD_D, IF_QK_NORM, LAY(q_norm.w)),
    VEC_IF("layers.%d.self_attn.k_norm.weight", SD_D, IF_QK_NORM, LAY(k_norm.w)),
    VEC_IF("layers.%d.post_attention_layernorm.weight", SD_C, IF_SANDWICH, LAY(post_attn_norm.w)),
    VEC_IF("layers.%d.post_attention_layernorm.weight", SD_C, IF_NOT_SANDWICH, LAY(norm2.w)),
    VEC_IF("layers.%d.pre_feedforward_layernorm.weight", SD_C, IF_SANDWICH, LAY(norm2.w)),
    VEC_IF("layers.%d.post_feedforward_layernorm.weight", SD_C, IF_SANDWICH, LAY(post_ffn_norm.w)),
    NNL("layers.%d.mlp.gate_proj.weight", SD_F, SD_C, LAY(gate)),
    VEC_IF("layers.%d.mlp.gate_proj.bias", SD_F, IF_MLP_BIAS, LAY(gate.b)),
    NNL("layers.%d.mlp.up_proj.weight", SD_F, SD_C, LAY(up)),
    VEC_IF("layers.%d.mlp.up_proj.bias", SD_F, IF_MLP_BIAS, LAY(up.b)),
    NNL("layers.%d.mlp.down_proj.weight", SD_C, SD_F, LAY(down)),
    VEC_IF("layers.%d.mlp.down_proj.bias", SD_C, IF_MLP_BIAS, LAY(down.b)),
};
static const StackTensor llama_final[] = {VEC("norm.weight", SD_C, WTS(final_norm.w))};
static const StackTensor llama_out[] = {
    {"lm_head.weight", NULL, SD_V, SD_C, 1, STACK_OUT_IN, 0, -1, IF_UNTIED, WTS(out)}};
static const StackSection llama_tensors[] = {
    {"model.", SG_OUT, 0, ROWS(llama_embed)}, {"model.", SG_LAYER, 0, ROWS(llama_layer)},
    {"model.", SG_FINAL, 0, ROWS(llama_final)}, {"", SG_OUT, 0, ROWS(llama_out)}, {NULL, 0, 0, NULL, 0}};
#undef LIN
#undef NNL
#undef QKV_W
#undef QKV_B
#undef MAT
#undef VEC
#undef VEC_IF
#undef ROWS

/* Each family's table, and how its output embedding is multiplied when it
 * is the token embedding (GPT-2's and BERT's as they always were). */
static const struct {
    StackFamily family;   /* 0: every other (the Llama family) */
    const StackSection *tensors;
    StackLayout tied;
} TABLES[] = {{STACK_GPT2, gpt2_tensors, STACK_ROWS}, {STACK_BERT, bert_tensors, STACK_ROWS},
              {0, llama_tensors, STACK_OUT_IN}};

static const StackSection *family_tensors(const StackConfig *c, StackLayout *tied) {
    int i = 0;
    while (TABLES[i].family && TABLES[i].family != c->family) i++;
    *tied = TABLES[i].tied;
    return TABLES[i].tensors;
}

/* ---- loading a Hugging Face folder ---- */

/* What one load holds: the model, the folder (for messages), where the next
 * converted tensor goes in the block, the current section. */
typedef struct {
    StackModel *m;
    const char *dir;
    const char *prefix;
    float *next;
    float *join[2];   /* the places of the q | k | v biases [0] and weights [1] being joined */
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
        const StTensor *t = safetensors_find(&ld->m->st, cands[c]);
        if (t) return t;
        snprintf(full, sizeof full, "%s%s", ld->prefix, cands[c]);
        if ((t = safetensors_find(&ld->m->st, full))) return t;
    }
    return NULL;
}

static void shape_text(char *buf, size_t n, int ndim, const long *shape) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%ld", d ? ", " : "", shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Weight p (of layer l in a per-layer section, group g) → its field: in
 * place when it is mapped float32 kept as stored, else given a place in the
 * block and left for stack_model_ready to convert (NULL until then). */
static int take(Loader *ld, const StackTensor *p, int l, int g, void *base) {
    StackModel *m = ld->m;
    const StackConfig *c = &m->c;
    char name[160], ws[64], hs[64];
    snprintf(name, sizeof name, p->name, l);
    if (p->alt && !find_tensor(ld, name)) snprintf(name, sizeof name, "%s", p->alt);
    const StTensor *t = find_tensor(ld, name);
    int ndim = p->d1 == SD_NONE ? 1 : 2;
    long want[2] = {dim_size(c, p->d0), dim_size(c, p->d1)};
    shape_text(ws, sizeof ws, ndim, want);
    if (!t)
        return errmsg_set(ld->err, ld->errlen, "%s: tensor %s%s is missing (expected shape %s%s)", ld->dir, ld->prefix,
                          name, ws, p->cond == IF_UNTIED ? "; config.json says tie_word_embeddings false" : "");
    if (t->ndim != ndim || t->shape[0] != want[0] || (ndim == 2 && t->shape[1] != want[1])) {
        shape_text(hs, sizeof hs, t->ndim, t->shape);
        return errmsg_set(ld->err, ld->errlen, "%s: tensor %s has shape %s; the config says %s", ld->dir, t->name, hs, ws);
    }
    if (!safetensors_dtype_size(t->dtype))
        return errmsg_set(ld->err, ld->errlen, "%s: tensor %s is %s; attnviz reads F32, F16 and BF16", ld->dir, t->name,
                          t->dtype);
    m->n_params += t->numel;
    const float **field = (const float **)((char *)base + p->at);
    if (p->at == WTS(embed) && base == &m->w) snprintf(m->dtype, sizeof m->dtype, "%s", t->dtype);
    if (p->linear) ((StackLinear *)((char *)base + p->at))->layout = p->layout;   /* field is its .w */
    long rows = ndim == 2 ? t->shape[0] : 1, cols = ndim == 2 ? t->shape[1] : t->shape[0];
    long kept_cols = p->transpose ? rows : cols;
    const float *mapped = p->part < 0 && !p->transpose ? safetensors_map_f32(&m->st, t) : NULL;
    if (mapped) { *field = mapped; return 0; }
    if (m->n_pending >= m->st.n) return errmsg_set(ld->err, ld->errlen, "%s: tensor %s taken twice", ld->dir, t->name);
    float *dst = ld->next;
    long ldd = kept_cols;
    if (p->part >= 0) {   /* q | k | v side by side: one place for the three */
        if (p->part == 0) { ld->join[ndim - 1] = ld->next; ld->next += 3 * t->numel; }
        dst = ld->join[ndim - 1] + p->part * kept_cols;
        ldd = ndim == 2 ? 3 * kept_cols : kept_cols;
    } else {
        ld->next += t->numel;
    }
    m->pending[m->n_pending++] = (StackPending){.field = p->part > 0 ? NULL : field, .t = t, .dst = dst, .rows = rows,
                                                .cols = cols, .ld = ldd, .transpose = p->transpose, .group = g};
    m->ready[g] = 0;
    *field = NULL;
    return 0;
}

/* Every section of the family's table, in order; an optional section whose
 * first tensor is absent is skipped, a tensor the config does not ask for too. */
static int load_tables(Loader *ld) {
    StackModel *m = ld->m;
    const StackConfig *c = &m->c;
    int L = c->n_layer;
    StackLayout tied;
    const StackSection *s = family_tensors(c, &tied);
    for (; s->p; s++) {
        ld->prefix = s->prefix;
        if (s->optional && !find_tensor(ld, s->p[0].name)) continue;
        if (s->optional) m->has_mlm = 1;   /* the one optional section: BERT's masked-LM head */
        int groups[] = {0, STACK_GROUP_FINAL(L), STACK_GROUP_OUT(L), STACK_GROUP_INPUT(L)};
        for (int l = 0; l < (s->group == SG_LAYER ? L : 1); l++)
            for (int i = 0; i < s->n; i++) {
                if (!cond_holds(c, s->p[i].cond)) continue;
                void *base = s->group == SG_LAYER ? (void *)&m->w.layer[l] : (void *)&m->w;
                if (take(ld, &s->p[i], l, s->group == SG_LAYER ? l : groups[s->group], base)) return -1;
            }
    }
    if (c->tie_embeddings) {
        m->w.out.w = m->w.embed;
        m->w.out.layout = tied;
    }
    return 0;
}

/* The block for converted tensors: room for every float tensor of the files
 * (a join's three parts take their three rooms side by side); pages no conversion touches cost no memory.
 * The list of tensors waiting, and the groups, every one ready until a tensor
 * of it waits. */
static int alloc_params(StackModel *m, const char *dir, char *err, size_t errlen) {
    int groups = m->c.n_layer + 3;
    m->pending = malloc((size_t)(m->st.n ? m->st.n : 1) * sizeof *m->pending);
    m->ready = malloc((size_t)groups);
    m->w.layer = calloc((size_t)m->c.n_layer, sizeof *m->w.layer);
    if (!m->pending || !m->ready || !m->w.layer) return errmsg_set(err, errlen, "out of memory");
    memset(m->ready, 1, (size_t)groups);
    size_t n = 0;
    for (int i = 0; i < m->st.n; i++)
        if (safetensors_dtype_size(m->st.t[i].dtype) && !size_add(&n, n, m->st.t[i].numel))
            return errmsg_set(err, errlen, "%s: the tensors' sizes overflow", dir);
    if (n > SIZE_MAX / sizeof(float)) return errmsg_set(err, errlen, "%s: the tensors' sizes overflow", dir);
    m->params = n ? floats_huge(n, 0) : NULL;   /* 2 MB pages: spares the copies page faults */
    if (n && !m->params) return errmsg_set(err, errlen, "out of memory: %s needs %zu MB of weights", dir, n * 4 >> 20);
    return 0;
}

/* GPT-2 and BERT by family/hf_config.h; every other config.json by
 * family/llama_config.h, which names what it does not read. */
static int config_load(StackConfig *c, const char *dir, char *err, size_t errlen) {
    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *text = file_read_all(path, 4u << 20, NULL, err, errlen);
    if (!text) return -1;
    int rc = hf_config_claims(text) ? hf_config_parse(c, text, path, err, errlen)
                                    : llama_config_parse(c, text, path, err, errlen);
    free(text);
    return rc;
}

int stack_model_load(StackModel *m, const char *dir, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    snprintf(m->source, sizeof m->source, "%s", dir);
    if (config_load(&m->c, dir, err, errlen) != 0) return -1;
    Loader ld = {.m = m, .dir = dir, .err = err, .errlen = errlen};
    int rc = safetensors_open_dir(&m->st, dir, err, errlen);
    if (rc == 0) rc = alloc_params(m, dir, err, errlen);
    ld.next = m->params;
    if (rc == 0) rc = load_tables(&ld);
    if (rc == 0 && !m->dtype[0]) snprintf(m->dtype, sizeof m->dtype, "F32");
    if (rc != 0) stack_model_free(m);
    return rc;
}

/* Pending tensor p into its place: read as float32, transposed or strided
 * through a scratch copy when it is not kept as stored. */
static int convert(StackModel *m, const StackPending *p, char *err, size_t errlen) {
    if (!p->transpose && p->ld == p->cols) return safetensors_read_f32(&m->st, p->t, p->dst, err, errlen);
    float *tmp = malloc(p->t->numel * sizeof *tmp);
    if (!tmp) return errmsg_set(err, errlen, "out of memory loading %s", p->t->name);
    int rc = safetensors_read_f32(&m->st, p->t, tmp, err, errlen);
    for (long r = 0; rc == 0 && r < p->rows; r++)
        for (long k = 0; k < p->cols; k++) {
            float v = tmp[r * p->cols + k];
            if (p->transpose) p->dst[k * p->ld + r] = v;
            else p->dst[r * p->ld + k] = v;
        }
    free(tmp);
    return rc;
}

int stack_model_ready(StackModel *m, int g, char *err, size_t errlen) {
    if (!m->ready || g < 0 || g > STACK_GROUP_INPUT(m->c.n_layer) || m->ready[g]) return 0;
    for (int i = 0; i < m->n_pending; i++)
        if (m->pending[i].group == g && convert(m, &m->pending[i], err, errlen) != 0) return -1;
    for (int i = 0; i < m->n_pending; i++)   /* the pointers once every part is in */
        if (m->pending[i].group == g && m->pending[i].field) *m->pending[i].field = m->pending[i].dst;
    if (g == STACK_GROUP_OUT(m->c.n_layer) && m->c.tie_embeddings) m->w.out.w = m->w.embed;
    m->ready[g] = 1;
    return 0;
}

void stack_model_free(StackModel *m) {
    if (!m) return;
    free(m->params);
    free(m->pending);
    free(m->ready);
    free(m->w.layer);
    free(m->ablate);
    safetensors_close(&m->st);
    if (m->map) munmap(m->map, m->map_len);
    free(m->a.block);
    free(m->a.mask);
    memset(m, 0, sizeof *m);
}
