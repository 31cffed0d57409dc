/* model.c — config, parameters, forward pass and probe (see model.h).
 * The backward pass is in model_backward.c. */
#include "model/model.h"
#include "core/errmsg.h"
#include "model/model_internal.h"
#include "core/attention.h"
#include "core/rng.h"
#include "core/tensor.h"
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ config */

const char *model_arch_name(ModelArch a) {
    switch (a) {
    case MODEL_ENC_DEC: return "encoder-decoder";
    case MODEL_ENCODER_ONLY: return "encoder-only";
    case MODEL_DECODER_ONLY: return "decoder-only";
    }
    return "?";
}

int model_arch_parse(const char *s, ModelArch *out) {
    if (!s) return -1;
    if (!strcmp(s, "encoder-decoder")) { *out = MODEL_ENC_DEC; return 0; }
    if (!strcmp(s, "encoder-only") || !strcmp(s, "encoder")) { *out = MODEL_ENCODER_ONLY; return 0; }
    if (!strcmp(s, "decoder-only") || !strcmp(s, "decoder")) { *out = MODEL_DECODER_ONLY; return 0; }
    return -1;
}

/* Walks the tensors of a config in storage order.  For each, fills the table row
 * (when tab) and the ModelParams slot (when p).  Returns the number of tensors;
 * *total receives the number of floats. */
typedef struct {
    ModelParam *tab; int max, n;
    float *base;
    size_t off;
} Walk;

static void add(Walk *w, const char *name, float **slot, int ndim, int d0, int d1, int d2) {
    size_t numel = (size_t)d0 * (ndim > 1 ? (size_t)d1 : 1) * (ndim > 2 ? (size_t)d2 : 1);
    if (w->tab && w->n < w->max) {
        ModelParam *r = &w->tab[w->n];
        memset(r, 0, sizeof *r);
        snprintf(r->name, sizeof r->name, "%s", name);
        r->ndim = ndim;
        r->shape[0] = d0; r->shape[1] = ndim > 1 ? d1 : 0; r->shape[2] = ndim > 2 ? d2 : 0;
        r->numel = numel;
        r->offset = w->off;
        r->ptr = w->base ? w->base + w->off : NULL;
    }
    if (slot) *slot = w->base ? w->base + w->off : NULL;
    w->n++;
    w->off += numel;
}

static void add_attn(Walk *w, const char *pfx, AttnParams *a, int L, int C) {
    char n[32];
    AttnParams dummy, *p = a ? a : &dummy;
#define W(field, nm) snprintf(n, sizeof n, "%s.%s", pfx, nm); add(w, n, &p->field, 3, L, C, C)
#define Bv(field, nm) snprintf(n, sizeof n, "%s.%s", pfx, nm); add(w, n, &p->field, 2, L, C, 0)
    W(wq, "wq"); Bv(bq, "bq"); W(wk, "wk"); Bv(bk, "bk");
    W(wv, "wv"); Bv(bv, "bv"); W(wo, "wo"); Bv(bo, "bo");
#undef W
#undef Bv
}

static void add_norm(Walk *w, const char *pfx, NormParams *a, int L, int C) {
    char n[32];
    NormParams dummy, *p = a ? a : &dummy;
    snprintf(n, sizeof n, "%s.w", pfx); add(w, n, &p->w, 2, L, C, 0);
    snprintf(n, sizeof n, "%s.b", pfx); add(w, n, &p->b, 2, L, C, 0);
}

static void add_ffn(Walk *w, const char *pfx, FfnParams *a, int L, int C, int F) {
    char n[32];
    FfnParams dummy, *p = a ? a : &dummy;
    snprintf(n, sizeof n, "%s.w1", pfx); add(w, n, &p->w1, 3, L, C, F);
    snprintf(n, sizeof n, "%s.b1", pfx); add(w, n, &p->b1, 2, L, F, 0);
    snprintf(n, sizeof n, "%s.w2", pfx); add(w, n, &p->w2, 3, L, F, C);
    snprintf(n, sizeof n, "%s.b2", pfx); add(w, n, &p->b2, 2, L, C, 0);
}

static size_t walk_params(const ModelConfig *c, float *base, ModelParams *p, ModelParam *tab,
                          int max, int *count) {
    Walk w = { tab, max, 0, base, 0 };
    ModelParams dummy;
    if (!p) p = &dummy;
    memset(p, 0, sizeof *p);
    int C = c->d_model, F = c->d_ff, E = c->n_enc_layers, L = c->n_dec_layers;
    add(&w, "tok_emb", &p->tok_emb, 2, c->vocab_size, C, 0);
    if (c->arch != MODEL_DECODER_ONLY) {
        add_attn(&w, "enc.self", &p->enc_self, E, C);
        add_norm(&w, "enc.ln1", &p->enc_ln1, E, C);
        add_ffn(&w, "enc.ffn", &p->enc_ffn, E, C, F);
        add_norm(&w, "enc.ln2", &p->enc_ln2, E, C);
        if (c->prenorm) add_norm(&w, "enc.lnf", &p->enc_lnf, 1, C);
    }
    if (c->arch != MODEL_ENCODER_ONLY) {
        add_attn(&w, "dec.self", &p->dec_self, L, C);
        add_norm(&w, "dec.ln1", &p->dec_ln1, L, C);
        if (c->arch == MODEL_ENC_DEC) {
            add_attn(&w, "dec.cross", &p->dec_cross, L, C);
            add_norm(&w, "dec.ln2", &p->dec_ln2, L, C);
        }
        add_ffn(&w, "dec.ffn", &p->dec_ffn, L, C, F);
        add_norm(&w, "dec.ln3", &p->dec_ln3, L, C);
        if (c->prenorm) add_norm(&w, "dec.lnf", &p->dec_lnf, 1, C);
    }
    add(&w, "out.w", &p->out_w, 2, C, c->vocab_size, 0);
    add(&w, "out.b", &p->out_b, 1, c->vocab_size, 0, 0);
    if (count) *count = w.n;
    return w.off;
}

int model_param_table(const ModelConfig *c, float *base, ModelParam *tab, int max) {
    int n = 0;
    walk_params(c, base, NULL, tab, max, &n);
    return n;
}

size_t model_num_params(const ModelConfig *c) {
    return walk_params(c, NULL, NULL, NULL, 0, NULL);
}

void model_point_params(const ModelConfig *c, float *base, ModelParams *p) {
    walk_params(c, base, p, NULL, 0, NULL);
}

int model_config_validate(const ModelConfig *c, char *err, size_t errlen) {
#define BAD(...) do { errmsg_set(err, errlen, __VA_ARGS__); return -1; } while (0)
    if (c->arch != MODEL_ENC_DEC && c->arch != MODEL_ENCODER_ONLY && c->arch != MODEL_DECODER_ONLY)
        BAD("config: unknown architecture %d", (int)c->arch);
    if (c->vocab_size < 1 || c->vocab_size > MODEL_MAX_VOCAB)
        BAD("config: vocab_size %d out of range 1..%d", c->vocab_size, MODEL_MAX_VOCAB);
    if (c->d_model < 1 || c->d_model > MODEL_MAX_DIM)
        BAD("config: d_model %d out of range 1..%d", c->d_model, MODEL_MAX_DIM);
    if (c->n_heads < 1 || c->n_heads > MODEL_MAX_HEADS)
        BAD("config: n_heads %d out of range 1..%d", c->n_heads, MODEL_MAX_HEADS);
    if (c->d_model % c->n_heads)
        BAD("config: d_model %d is not a multiple of n_heads %d", c->d_model, c->n_heads);
    if (c->d_ff < 1 || c->d_ff > MODEL_MAX_DIM)
        BAD("config: d_ff %d out of range 1..%d", c->d_ff, MODEL_MAX_DIM);
    if (c->max_len < 1 || c->max_len > MODEL_MAX_LEN)
        BAD("config: max_len %d out of range 1..%d", c->max_len, MODEL_MAX_LEN);
    if (c->prenorm != 0 && c->prenorm != 1) BAD("config: prenorm must be 0 or 1");
    if (c->n_enc_layers < 0 || c->n_enc_layers > MODEL_MAX_LAYERS ||
        c->n_dec_layers < 0 || c->n_dec_layers > MODEL_MAX_LAYERS)
        BAD("config: layer counts must be 0..%d", MODEL_MAX_LAYERS);
    if (c->arch == MODEL_ENC_DEC && (c->n_enc_layers < 1 || c->n_dec_layers < 1))
        BAD("config: an encoder-decoder needs at least one encoder and one decoder layer");
    if (c->arch == MODEL_ENCODER_ONLY && (c->n_enc_layers < 1 || c->n_dec_layers != 0))
        BAD("config: an encoder-only model needs n_enc_layers >= 1 and n_dec_layers 0");
    if (c->arch == MODEL_DECODER_ONLY && (c->n_dec_layers < 1 || c->n_enc_layers != 0))
        BAD("config: a decoder-only model needs n_dec_layers >= 1 and n_enc_layers 0");
    size_t n = model_num_params(c);
    if (n > MODEL_MAX_PARAMS) BAD("config: %zu parameters is more than the limit %zu", n, MODEL_MAX_PARAMS);
    return 0;
#undef BAD
}

int model_config_json(const ModelConfig *c, char *buf, size_t n) {
    return snprintf(buf, n,
        "{\"arch\":\"%s\",\"vocab_size\":%d,\"d_model\":%d,\"n_heads\":%d,\"d_k\":%d,"
        "\"d_ff\":%d,\"n_enc_layers\":%d,\"n_dec_layers\":%d,"
        "\"layers\":{\"encoder\":%d,\"decoder\":%d},\"max_len\":%d,\"norm\":\"%s\","
        "\"parameters\":%zu,\"embedding_scale\":\"sqrt(d_model)\","
        "\"positional_encoding\":\"sinusoidal\",\"output_projection\":\"separate\","
        "\"activation\":\"relu\",\"layernorm_eps\":1e-05}",
        model_arch_name(c->arch), c->vocab_size, c->d_model, c->n_heads,
        c->n_heads > 0 ? c->d_model / c->n_heads : 0, c->d_ff, c->n_enc_layers,
        c->n_dec_layers, c->n_enc_layers, c->n_dec_layers, c->max_len,
        c->prenorm ? "pre" : "post", model_num_params(c));
}

static int json_int(const cJSON *o, const char *key, int *out, char *err, size_t errlen) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(it)) { errmsg_set(err, errlen, "config: \"%s\" missing or not a number", key); return -1; }
    double v = it->valuedouble;
    if (v != floor(v) || v < -1e9 || v > 1e9) {
        errmsg_set(err, errlen, "config: \"%s\" is not an integer", key);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int model_config_from_json(ModelConfig *c, const char *json, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    cJSON *o = cJSON_Parse(json);
    int rc = -1;
    if (!cJSON_IsObject(o)) { errmsg_set(err, errlen, "config: not a JSON object"); goto done; }
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(o, "arch");
    if (!cJSON_IsString(arch) || model_arch_parse(arch->valuestring, &c->arch)) {
        errmsg_set(err, errlen, "config: \"arch\" must be \"encoder-decoder\", \"encoder-only\" or \"decoder-only\"");
        goto done;
    }
    if (json_int(o, "vocab_size", &c->vocab_size, err, errlen) ||
        json_int(o, "d_model", &c->d_model, err, errlen) ||
        json_int(o, "n_heads", &c->n_heads, err, errlen) ||
        json_int(o, "d_ff", &c->d_ff, err, errlen) ||
        json_int(o, "n_enc_layers", &c->n_enc_layers, err, errlen) ||
        json_int(o, "n_dec_layers", &c->n_dec_layers, err, errlen) ||
        json_int(o, "max_len", &c->max_len, err, errlen)) goto done;
    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(o, "norm");
    if (!cJSON_IsString(norm) || (strcmp(norm->valuestring, "post") && strcmp(norm->valuestring, "pre"))) {
        errmsg_set(err, errlen, "config: \"norm\" must be \"post\" or \"pre\"");
        goto done;
    }
    c->prenorm = !strcmp(norm->valuestring, "pre");
    rc = model_config_validate(c, err, errlen);
done:
    cJSON_Delete(o);
    return rc;
}

/* ------------------------------------------------------------- parameters */

void model_positional_encoding(float *out, int T, int C) {
    for (int pos = 0; pos < T; pos++)
        for (int c = 0; c < C; c++) {
            int i2 = c - (c & 1);                    /* 2i */
            double angle = pos / pow(10000.0, (double)i2 / C);
            out[(size_t)pos * C + c] = (float)((c & 1) ? cos(angle) : sin(angle));
        }
}

int model_alloc(Model *m, const ModelConfig *c) {
    memset(m, 0, sizeof *m);
    if (model_config_validate(c, m->err, sizeof m->err)) return -1;
    m->config = *c;
    m->num_params = model_num_params(c);
    m->params_memory = floats_huge(m->num_params, 1);
    m->pe = malloc((size_t)c->max_len * c->d_model * sizeof(float));
    if (!m->params_memory || !m->pe) {
        free(m->params_memory); free(m->pe);
        memset(m, 0, sizeof *m);
        return errmsg_set(m->err, sizeof m->err, "out of memory for %zu parameters", model_num_params(c));
    }
    model_point_params(c, m->params_memory, &m->params);
    model_positional_encoding(m->pe, c->max_len, c->d_model);
    return 0;
}

void model_free(Model *m) {
    if (!m) return;
    if (!m->shares_params) { free(m->params_memory); free(m->pe); }
    free(m->grads_memory);
    free(m->acts_memory); free(m->mask_memory); free(m->tok_memory); free(m->bwd_memory);
    free(m->pack_memory);
    free(m->ablate); free(m->ablate_value);
    free(m->lang_mask[0]); free(m->lang_mask[1]);
    free(m->sentence_end);
    memset(m, 0, sizeof *m);
}

static void fill_uniform(Rng *r, float *x, size_t n, float a) {
    for (size_t i = 0; i < n; i++) x[i] = (2.0f * rng_float(r) - 1.0f) * a;
}

int model_init_random(Model *m, const ModelConfig *c, uint64_t seed) {
    if (model_alloc(m, c)) return -1;
    Rng r = rng_from_state(seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL);
    for (int i = 0; i < 4; i++) rng_next(&r);
    ModelParam tab[MODEL_MAX_TENSORS];
    int n = model_param_table(c, m->params_memory, tab, MODEL_MAX_TENSORS);
    for (int t = 0; t < n; t++) {
        ModelParam *p = &tab[t];
        const char *leaf = strrchr(p->name, '.');
        leaf = leaf ? leaf + 1 : p->name;
        if (!strcmp(p->name, "tok_emb")) {
            fill_uniform(&r, p->ptr, p->numel, sqrtf(3.0f / c->d_model));   /* std 1/√C */
        } else if (p->ndim == 3 || !strcmp(p->name, "out.w")) {             /* matrices */
            int fan_in = p->ndim == 3 ? p->shape[1] : p->shape[0];
            int fan_out = p->ndim == 3 ? p->shape[2] : p->shape[1];
            fill_uniform(&r, p->ptr, p->numel, sqrtf(6.0f / (fan_in + fan_out)));
        } else if (strstr(p->name, ".ln") && !strcmp(leaf, "w")) {          /* LayerNorm gain */
            for (size_t i = 0; i < p->numel; i++) p->ptr[i] = 1.0f;
        }                                                                   /* biases stay 0 */
    }
    return 0;
}

/* ------------------------------------------------------------ knock-outs */

int model_attn_layers(const ModelConfig *c, ModelAttnKind kind) {
    switch (kind) {
    case MODEL_ATTN_ENC_SELF: return c->arch == MODEL_DECODER_ONLY ? 0 : c->n_enc_layers;
    case MODEL_ATTN_DEC_SELF: return c->arch == MODEL_ENCODER_ONLY ? 0 : c->n_dec_layers;
    case MODEL_ATTN_CROSS:    return c->arch == MODEL_ENC_DEC ? c->n_dec_layers : 0;
    }
    return 0;
}

static const char *const attn_map_fmt[3] = {"encoder.%d.self", "decoder.%d.masked_self", "decoder.%d.cross"};

void model_attn_map_name(ModelAttnKind kind, int layer, char *buf, size_t n) {
    snprintf(buf, n, attn_map_fmt[kind], layer);
}

int model_attn_parse_map(const ModelConfig *c, const char *map, ModelAttnKind *kind, int *layer) {
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < model_attn_layers(c, (ModelAttnKind)k); l++) {
            char name[64];
            model_attn_map_name((ModelAttnKind)k, l, name, sizeof name);
            if (!strcmp(name, map)) { *kind = (ModelAttnKind)k; *layer = l; return 0; }
        }
    return -1;
}

/* Layers per kind in the knock-out tables: (3, Lmax, H) modes, (3, Lmax, C) values. */
static int ablate_lmax(const ModelConfig *c) {
    return c->n_enc_layers > c->n_dec_layers ? c->n_enc_layers : c->n_dec_layers;
}

int model_ablate_head(Model *m, ModelAttnKind kind, int layer, int head, ModelAblateMode mode, const float *mean) {
    const ModelConfig *c = &m->config;
    if ((int)kind < 0 || kind > MODEL_ATTN_CROSS || layer < 0 || layer >= model_attn_layers(c, kind))
        return errmsg_set(m->err, sizeof m->err, "knock-out: no such map (kind %d, layer %d) in this model", (int)kind, layer);
    if (head < 0 || head >= c->n_heads)
        return errmsg_set(m->err, sizeof m->err, "knock-out: head %d out of range 0..%d", head, c->n_heads - 1);
    if (mode == MODEL_ABLATE_MEAN && !mean) return errmsg_set(m->err, sizeof m->err, "knock-out: mean mode needs the mean");
    int Lmax = ablate_lmax(c), H = c->n_heads, C = c->d_model;
    if (!m->ablate) {
        m->ablate = calloc((size_t)3 * Lmax * H, 1);
        m->ablate_value = calloc((size_t)3 * Lmax * C, sizeof(float));
        if (!m->ablate || !m->ablate_value) {
            free(m->ablate); free(m->ablate_value);
            m->ablate = NULL; m->ablate_value = NULL;
            return errmsg_set(m->err, sizeof m->err, "out of memory");
        }
    }
    unsigned char *slot = m->ablate + ((size_t)kind * Lmax + layer) * H + head;
    m->n_ablated += (mode != MODEL_ABLATE_NONE) - (*slot != MODEL_ABLATE_NONE);
    *slot = (unsigned char)mode;
    int D = C / H;
    float *val = m->ablate_value + ((size_t)kind * Lmax + layer) * C + (size_t)head * D;
    for (int d = 0; d < D; d++) val[d] = mode == MODEL_ABLATE_MEAN ? mean[d] : 0.0f;
    return 0;
}

void model_ablate_clear(Model *m) {
    const ModelConfig *c = &m->config;
    int Lmax = ablate_lmax(c);
    if (m->ablate) memset(m->ablate, 0, (size_t)3 * Lmax * c->n_heads);
    m->n_ablated = 0;
}

ModelAblateMode model_ablated(const Model *m, ModelAttnKind kind, int layer, int head) {
    const ModelConfig *c = &m->config;
    if (!m->ablate || (int)kind < 0 || kind > MODEL_ATTN_CROSS || layer < 0 || layer >= model_attn_layers(c, kind) ||
        head < 0 || head >= c->n_heads)
        return MODEL_ABLATE_NONE;
    int Lmax = ablate_lmax(c);
    return (ModelAblateMode)m->ablate[((size_t)kind * Lmax + layer) * c->n_heads + head];
}

/* "encoder.0-2.self, decoder.0-1.masked_self, …" for messages. */
static void attn_maps_list(const ModelConfig *c, char *buf, size_t n) {
    static const char *const fmt[3] = {"encoder.%s.self", "decoder.%s.masked_self", "decoder.%s.cross"};
    buf[0] = '\0';
    for (int k = 0; k < 3; k++) {
        int L = model_attn_layers(c, (ModelAttnKind)k);
        if (L == 0) continue;
        char range[32], one[64];
        if (L == 1) snprintf(range, sizeof range, "0");
        else snprintf(range, sizeof range, "0-%d", L - 1);
        snprintf(one, sizeof one, fmt[k], range);
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s", len ? ", " : "", one);
    }
}

/* One item "MAP.HEAD" → kind, layer, head.  0, or -1 with m->err. */
static int ablate_item(Model *m, const char *item, ModelAttnKind *kind, int *layer, int *head) {
    const ModelConfig *c = &m->config;
    char maps[256], map[64];
    attn_maps_list(c, maps, sizeof maps);
    const char *dot = strrchr(item, '.');
    size_t len = dot ? (size_t)(dot - item) : 0;
    char *end = NULL;
    long h = dot ? strtol(dot + 1, &end, 10) : -1;
    if (!dot || dot[1] == '\0' || *end != '\0' || len == 0 || len >= sizeof map)
        return errmsg_set(m->err, sizeof m->err, "'%s' is not MAP.HEAD such as encoder.2.self.0 (maps: %s)", item, maps);
    memcpy(map, item, len);
    map[len] = '\0';
    if (model_attn_parse_map(c, map, kind, layer) != 0)
        return errmsg_set(m->err, sizeof m->err, "'%s': this model has no map %s (maps: %s)", item, map, maps);
    if (h < 0 || h >= c->n_heads)
        return errmsg_set(m->err, sizeof m->err, "'%s': head %s is out of range (heads 0-%d)", item, dot + 1, c->n_heads - 1);
    *head = (int)h;
    return 0;
}

int model_ablate_parse(Model *m, const char *spec) {
    char buf[1024];
    if (!spec || !*spec) return errmsg_set(m->err, sizeof m->err, "no head given (MAP.HEAD such as encoder.2.self.0)");
    if (strlen(spec) >= sizeof buf) return errmsg_set(m->err, sizeof m->err, "the list of heads is too long");
    /* check every item first, so a bad list changes nothing */
    for (int pass = 0; pass < 2; pass++) {
        snprintf(buf, sizeof buf, "%s", spec);
        for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
            ModelAttnKind kind = MODEL_ATTN_ENC_SELF;
            int layer = 0, head = 0;
            if (ablate_item(m, item, &kind, &layer, &head) != 0) return -1;
            if (pass == 1 && model_ablate_head(m, kind, layer, head, MODEL_ABLATE_ZERO, NULL) != 0) return -1;
        }
    }
    return 0;
}

int model_ablate_describe(const Model *m, int json, char *buf, size_t n) {
    const ModelConfig *c = &m->config;
    size_t len = 0;
    int first = 1;
    if (n) buf[0] = '\0';
    if (json) len += (size_t)snprintf(buf, n, "[");
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < model_attn_layers(c, (ModelAttnKind)k); l++)
            for (int h = 0; h < c->n_heads; h++) {
                ModelAblateMode mode = model_ablated(m, (ModelAttnKind)k, l, h);
                if (mode == MODEL_ABLATE_NONE) continue;
                char map[64];
                model_attn_map_name((ModelAttnKind)k, l, map, sizeof map);
                const char *sep = first ? "" : ", ";
                if (json)
                    len += (size_t)snprintf(buf + (len < n ? len : n), len < n ? n - len : 0,
                                            "%s{\"map\": \"%s\", \"head\": %d, \"mode\": \"%s\"}", sep, map, h,
                                            mode == MODEL_ABLATE_MEAN ? "mean" : "zero");
                else
                    len += (size_t)snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "%s%s.%d", sep, map, h);
                first = 0;
            }
    if (json) len += (size_t)snprintf(buf + (len < n ? len : n), len < n ? n - len : 0, "]");
    return (int)len;
}

/* -------------------------------------------------------------- forward */

void model_dropout_seed(Model *m, uint64_t seed, uint64_t step) {
    Rng r = rng_from_state(seed * 0x9E3779B97F4A7C15ULL + (step + 1) * 0xD1B54A32D192ED03ULL + 0x5DEECE66DULL);
    for (int i = 0; i < 4; i++) rng_next(&r);
    m->dropout_rng = r.s;
}

/* Lays out the activation block for (B, S, T); grows it when needed.  drop: also
 * lay out the dropout masks (all of them one contiguous run, see dropout_masks). */
static int acts_prepare(Model *m, int B, int S, int T, int drop) {
    const ModelConfig *c = &m->config;
    size_t C = c->d_model, F = c->d_ff, H = c->n_heads, V = c->vocab_size;
    size_t E = c->arch == MODEL_DECODER_ONLY ? 0 : c->n_enc_layers;
    size_t L = c->arch == MODEL_ENCODER_ONLY ? 0 : c->n_dec_layers;
    int enc = E > 0, dec = L > 0, cross = c->arch == MODEL_ENC_DEC;
    size_t BS = (size_t)B * S, BT = (size_t)B * T;
    size_t To = c->arch == MODEL_ENCODER_ONLY ? (size_t)S : (size_t)T;
    ModelActs *a = &m->acts;
    /* Two passes: the first counts (base NULL), the second assigns. */
    for (int pass = 0; pass < 2; pass++) {
        float *base = pass ? m->acts_memory : NULL;
        size_t off = 0;
#define TAKE(ptr, n) do { size_t n_ = (n); (ptr) = base ? base + off : NULL; off += n_; } while (0)
#define NORM(na, layers, rows) do { TAKE((na).out, (layers) * (rows) * C); \
        TAKE((na).mean, (layers) * (rows)); TAKE((na).rstd, (layers) * (rows)); } while (0)
#define ATTN(aa, layers, nq, nk, tq, tk) do { TAKE((aa).q, (layers) * (nq) * C); \
        TAKE((aa).k, (layers) * (nk) * C); TAKE((aa).v, (layers) * (nk) * C); \
        TAKE((aa).att, (layers) * B * H * (size_t)(tq) * (tk)); \
        TAKE((aa).atty, (layers) * (nq) * C); TAKE((aa).proj, (layers) * (nq) * C); } while (0)
#define FFN(fa, layers, rows) do { TAKE((fa).h, (layers) * (rows) * F); \
        TAKE((fa).proj, (layers) * (rows) * C); } while (0)
        memset(a, 0, offsetof(ModelActs, enc_mask));
        if (enc) {
            TAKE(a->enc_x, BS * C);
            NORM(a->enc_ln1, E, BS); ATTN(a->enc_self, E, BS, BS, S, S); TAKE(a->enc_res1, E * BS * C);
            NORM(a->enc_ln2, E, BS); FFN(a->enc_ffn, E, BS); TAKE(a->enc_res2, E * BS * C);
            if (c->prenorm) NORM(a->enc_lnf, 1, BS);
        }
        if (dec) {
            TAKE(a->dec_x, BT * C);
            NORM(a->dec_ln1, L, BT); ATTN(a->dec_self, L, BT, BT, T, T); TAKE(a->dec_res1, L * BT * C);
            if (cross) {
                NORM(a->dec_ln2, L, BT); ATTN(a->dec_cross, L, BT, BS, T, S); TAKE(a->dec_res2, L * BT * C);
            }
            NORM(a->dec_ln3, L, BT); FFN(a->dec_ffn, L, BT); TAKE(a->dec_res3, L * BT * C);
            if (c->prenorm) NORM(a->dec_lnf, 1, BT);
        }
        TAKE(a->logits, B * To * V);
        TAKE(a->probs, B * To * V);
        if (drop) {   /* contiguous from enc_x_drop (or dec_x_drop) to the last one */
            if (enc) {
                TAKE(a->enc_x_drop, BS * C);
                TAKE(a->enc_self.drop, E * BS * C); TAKE(a->enc_ffn.drop, E * BS * C);
            }
            if (dec) {
                TAKE(a->dec_x_drop, BT * C);
                TAKE(a->dec_self.drop, L * BT * C);
                if (cross) TAKE(a->dec_cross.drop, L * BT * C);
                TAKE(a->dec_ffn.drop, L * BT * C);
            }
        }
#undef TAKE
#undef NORM
#undef ATTN
#undef FFN
        if (!pass && off > m->acts_cap) {
            free(m->acts_memory);
            m->acts_cap = 0;
            m->acts_memory = floats_huge(off, 0);
            if (!m->acts_memory) {
                errmsg_set(m->err, sizeof m->err, "out of memory for activations (%zu floats)", off);
                return -1;
            }
            m->acts_cap = off;
        }
    }
    size_t nmask = (size_t)B * S * S + (size_t)B * T * T + (size_t)B * T * S;
    if (nmask > m->mask_cap || !m->mask_memory) {
        free(m->mask_memory);
        m->mask_cap = 0;
        m->mask_memory = malloc(nmask ? nmask : 1);
        if (!m->mask_memory) return errmsg_set(m->err, sizeof m->err, "out of memory for masks");
        m->mask_cap = nmask;
    }
    a->enc_mask = m->mask_memory;
    a->dec_mask = a->enc_mask + (size_t)B * S * S;
    a->cross_mask = a->dec_mask + (size_t)B * T * T;
    size_t ntok = BS + BT + 3 * (size_t)B;
    if (ntok > m->tok_cap || !m->tok_memory) {
        free(m->tok_memory);
        m->tok_cap = 0;
        m->tok_memory = malloc(ntok * sizeof(int));
        if (!m->tok_memory) return errmsg_set(m->err, sizeof m->err, "out of memory for tokens");
        m->tok_cap = ntok;
    }
    m->src = m->tok_memory;
    m->tgt = m->src + BS;
    m->src_len = m->tgt + BT;
    m->tgt_len = m->src_len + B;
    m->out_len = m->tgt_len + B;
    return 0;
}

/* Fills n mask values from r: 0 with probability p, else 1/(1-p). */
static void dropout_masks(float *mask, size_t n, float p, Rng *r) {
    float keep = 1.0f / (1.0f - p);
    for (size_t i = 0; i < n; i++) mask[i] = rng_float(r) < p ? 0.0f : keep;
}

/* x (B,T,C) = tok_emb[tokens]·√C + PE[t] */
static void embed_forward(float *x, const int *tok, const float *emb, const float *pe,
                          int B, int T, int C) {
    float scale = sqrtf((float)C);
    for (int bt = 0; bt < B * T; bt++) {
        const float *e = emb + (size_t)tok[bt] * C, *p = pe + (size_t)(bt % T) * C;
        float *o = x + (size_t)bt * C;
        for (int c = 0; c < C; c++) o[c] = e[c] * scale + p[c];
    }
}

/* Knock-outs of one layer: ablate (H) modes, value (C) replacements.  Each
 * knocked-out head's D columns of atty (B·Tq rows) become 0 or its value. */
static void ablate_heads(float *atty, const unsigned char *ablate, const float *value, int N, int C, int H) {
    int D = C / H;
    for (int h = 0; h < H; h++) {
        if (ablate[h] == MODEL_ABLATE_NONE) continue;
        for (int n = 0; n < N; n++) {
            float *o = atty + (size_t)n * C + (size_t)h * D;
            for (int d = 0; d < D; d++) o[d] = ablate[h] == MODEL_ABLATE_MEAN ? value[h * D + d] : 0.0f;
        }
    }
}

/* The knock-out table of (kind, layer): H modes, or NULL when none is set. */
static const unsigned char *ablate_row(const Model *m, ModelAttnKind kind, int l) {
    if (!m->ablate || m->n_ablated == 0) return NULL;
    int Lmax = ablate_lmax(&m->config);
    return m->ablate + ((size_t)kind * Lmax + l) * m->config.n_heads;
}
static const float *ablate_values(const Model *m, ModelAttnKind kind, int l) {
    int Lmax = ablate_lmax(&m->config);
    return m->ablate_value + ((size_t)kind * Lmax + l) * m->config.d_model;
}

/* Multi-head attention of layer l: queries from xq (B,Tq,C), keys/values from
 * xkv (B,Tk,C); writes the layer's q, k, v, att, atty, proj.  The heads that are
 * knocked out (model_ablate_head) are replaced in atty before W_o. */
static void mha_forward(const Model *m, ModelAttnKind kind, int l, const float *xq, const float *xkv) {
    AttnLayer layer = model_attn_layer(m, kind, l), *a = &layer;
    int B = a->B, Tq = a->Tq, Tk = a->Tk, C = a->C, H = a->H, D = C / H;
    float *qkv[3] = { a->q, a->k, a->v };
    if (a->kind != MODEL_ATTN_CROSS) {          /* self-attention: x packed once for Q, K, V */
        model_linear_forward_n(&a->qrows, 3, qkv, xq, a->wqkv);
    } else {
        model_linear_forward(&a->qrows, a->q, xq, &a->wqkv[0]);
        model_linear_forward_n(&a->krows, 2, qkv + 1, xkv, a->wqkv + 1);
    }
    float scale = 1.0f / sqrtf((float)D);
    OMP_PARALLEL_FOR2
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            size_t qo = (size_t)b * Tq * C + (size_t)h * D, ko = (size_t)b * Tk * C + (size_t)h * D;
            float *wt = a->att + ((size_t)b * H + h) * Tq * Tk;
            /* a training forward leaves out the pad queries (their rows are never
             * used, pad_rows.c): weights and output rows there are 0 */
            int n = model_pad_rows_real(&a->qrows, b);
            AttnHead ah = {.q = a->q + qo, .ldq = C, .k = a->k + ko, .ldk = C, .v = a->v + ko, .ldv = C,
                           .mask = a->mask + (size_t)b * Tq * Tk, .mask_fill = -INFINITY, .scale = scale,
                           .Tq = n, .Tk = Tk, .D = D, .Dv = D, .out = a->atty + qo, .ldo = C, .weights = wt};
            if (n > 0) attention_forward_fast(&ah);
            memset(wt + (size_t)n * Tk, 0, (size_t)(Tq - n) * Tk * sizeof(float));
            for (int i = n; i < Tq; i++) memset(a->atty + qo + (size_t)i * C, 0, (size_t)D * sizeof(float));
        }
    const unsigned char *ab = ablate_row(m, a->kind, a->l);
    if (ab) ablate_heads(a->atty, ab, ablate_values(m, a->kind, a->l), B * Tq, C, H);
    model_linear_forward(&a->qrows, a->proj, a->atty, &a->wo);
}

/* FFN of layer l on x (rows: which of its rows are real). */
static void ffn_forward(const PadRows *rows, FfnActs *a, int l, const float *x, const FfnParams *p, int C, int F) {
    size_t N = (size_t)rows->B * rows->T;
    FfnLayer f = model_ffn_layer(p, NULL, l, C, F);
    model_ffn_forward(rows, a->h + l * N * F, a->proj + l * N * C, x, &f);
}

/* Residual sub-layer, first half: the input of the sub-layer's function.
 * Post-norm: the stream itself.  Pre-norm: LayerNorm(stream) into na[l]. */
static const float *sub_begin(int prenorm, const NormActs *na, const NormParams *np, int l,
                              const float *stream, int N, int C) {
    if (!prenorm) return stream;
    float *out = na->out + (size_t)l * N * C;
    layernorm_forward(out, na->mean + (size_t)l * N, na->rstd + (size_t)l * N, stream,
                      np->w + (size_t)l * C, np->b + (size_t)l * C, N, C);
    return out;
}

/* Second half: res = stream + f (⊙ drop_all[l] when drop_all); returns the next
 * stream (post-norm: LayerNorm(res)). */
static const float *sub_end(int prenorm, float *res_all, const float *f, const float *drop_all,
                            const NormActs *na, const NormParams *np, int l, const float *stream,
                            int N, int C) {
    float *res = res_all + (size_t)l * N * C;
    if (drop_all) {
        const float *mask = drop_all + (size_t)l * N * C;
        for (size_t i = 0; i < (size_t)N * C; i++) res[i] = stream[i] + f[i] * mask[i];
    } else {
        residual_forward(res, stream, f, (size_t)N * C);
    }
    if (prenorm) return res;
    float *out = na->out + (size_t)l * N * C;
    layernorm_forward(out, na->mean + (size_t)l * N, na->rstd + (size_t)l * N, res,
                      np->w + (size_t)l * C, np->b + (size_t)l * C, N, C);
    return out;
}

const float *model_encoder_output(const Model *m) {
    const ModelConfig *c = &m->config;
    const ModelActs *a = &m->acts;
    int E = c->n_enc_layers;
    size_t NC = (size_t)m->B * m->S * c->d_model;
    if (c->prenorm) return a->enc_lnf.out;
    return a->enc_ln2.out + (size_t)(E - 1) * NC;
}

const float *model_decoder_stream(const Model *m) {
    const ModelConfig *c = &m->config;
    const ModelActs *a = &m->acts;
    int L = c->n_dec_layers;
    size_t NC = (size_t)m->B * m->T * c->d_model;
    return c->prenorm ? a->dec_res3 + (size_t)(L - 1) * NC : a->dec_ln3.out + (size_t)(L - 1) * NC;
}

const float *model_encoder_stream(const Model *m) {
    const ModelConfig *c = &m->config;
    const ModelActs *a = &m->acts;
    int E = c->n_enc_layers;
    size_t NC = (size_t)m->B * m->S * c->d_model;
    return c->prenorm ? a->enc_res2 + (size_t)(E - 1) * NC : a->enc_ln2.out + (size_t)(E - 1) * NC;
}

static int check_tokens(Model *m, const char *what, const int *tok, const int *len, int B, int T) {
    int V = m->config.vocab_size;
    if (!tok || !len) return errmsg_set(m->err, sizeof m->err, "model_forward: %s tokens or lengths missing", what);
    for (int b = 0; b < B; b++) {
        if (len[b] < 0 || len[b] > T) {
            errmsg_set(m->err, sizeof m->err, "model_forward: %s length %d of item %d is outside 0..%d", what, len[b], b, T);
            return -1;
        }
        for (int t = 0; t < T; t++) {
            int id = tok[(size_t)b * T + t];
            if (id < 0 || id >= V) {
                errmsg_set(m->err, sizeof m->err, "model_forward: %s token id %d at (%d,%d) is outside 0..%d",
                           what, id, b, t, V - 1);
                return -1;
            }
        }
    }
    return 0;
}

int model_forward(Model *m, const ModelBatch *batch) {
    const int *src = batch->src, *src_len = batch->src_len, *tgt = batch->tgt, *tgt_len = batch->tgt_len;
    int S = batch->S, T = batch->T, B = batch->B;
    const ModelConfig *c = &m->config;
    if (!m->params_memory) return errmsg_set(m->err, sizeof m->err, "model_forward: model not initialised");
    int enc = c->arch != MODEL_DECODER_ONLY, dec = c->arch != MODEL_ENCODER_ONLY;
    if (!enc) S = 0;
    if (!dec) T = 0;
    if (B < 1) return errmsg_set(m->err, sizeof m->err, "model_forward: batch size %d < 1", B);
    if ((enc && (S < 1 || S > c->max_len)) || (dec && (T < 1 || T > c->max_len))) {
        errmsg_set(m->err, sizeof m->err, "model_forward: sequence length (source %d, target %d) must be 1..%d (max_len)",
                   S, T, c->max_len);
        return -1;
    }
    if (enc && check_tokens(m, "source", src, src_len, B, S)) return -1;
    if (dec && check_tokens(m, "target", tgt, tgt_len, B, T)) return -1;
    int drop = m->training && m->dropout > 0.0f;
    if (drop && !(m->dropout < 1.0f)) {
        errmsg_set(m->err, sizeof m->err, "model_forward: dropout %g must be in 0..1 (excluded)", m->dropout);
        return -1;
    }
    if (acts_prepare(m, B, S, T, drop)) return -1;
    m->pad_skip = m->training;   /* pad rows left out of the products (pad_rows.c) */
    if (m->pad_skip && model_pad_prepare(m, B, S, T)) return -1;
    m->B = B; m->S = S; m->T = T; m->To = enc && !dec ? S : T;
    if (enc) { memcpy(m->src, src, (size_t)B * S * sizeof(int)); memcpy(m->src_len, src_len, (size_t)B * sizeof(int)); }
    else memset(m->src_len, 0, (size_t)B * sizeof(int));
    if (dec) { memcpy(m->tgt, tgt, (size_t)B * T * sizeof(int)); memcpy(m->tgt_len, tgt_len, (size_t)B * sizeof(int)); }
    else memset(m->tgt_len, 0, (size_t)B * sizeof(int));
    memcpy(m->out_len, dec ? m->tgt_len : m->src_len, (size_t)B * sizeof(int));

    ModelActs *a = &m->acts;
    const ModelParams *p = &m->params;
    int C = c->d_model, F = c->d_ff, V = c->vocab_size, pre = c->prenorm;
    int NS = B * S, NT = B * T;

    /* masks (1 = may attend), keys only */
    for (int b = 0; b < B; b++) {
        for (int i = 0; i < S; i++)
            for (int j = 0; j < S; j++)
                a->enc_mask[((size_t)b * S + i) * S + j] = (unsigned char)(j < m->src_len[b]);
        for (int i = 0; i < T; i++) {
            for (int j = 0; j < T; j++)
                a->dec_mask[((size_t)b * T + i) * T + j] = (unsigned char)(j <= i && j < m->tgt_len[b]);
            for (int j = 0; j < S; j++)
                a->cross_mask[((size_t)b * T + i) * S + j] = (unsigned char)(j < m->src_len[b]);
        }
    }

    if (drop) {   /* every mask of this forward, in layout order, from one generator */
        Rng r = rng_from_state(m->dropout_rng);
        float *first = enc ? a->enc_x_drop : a->dec_x_drop;
        float *last = dec ? a->dec_ffn.drop + (size_t)c->n_dec_layers * NT * C
                          : a->enc_ffn.drop + (size_t)c->n_enc_layers * NS * C;
        dropout_masks(first, (size_t)(last - first), m->dropout, &r);
        m->dropout_rng = r.s;
    }

    const float *enc_out = NULL;
    if (enc) {
        embed_forward(a->enc_x, m->src, p->tok_emb, m->pe, B, S, C);
        if (drop) for (size_t i = 0; i < (size_t)NS * C; i++) a->enc_x[i] *= a->enc_x_drop[i];
        const float *s = a->enc_x;
        PadRows rows = model_pad_rows(m, m->src_len, B, S);
        for (int l = 0; l < c->n_enc_layers; l++) {
            const float *in = sub_begin(pre, &a->enc_ln1, &p->enc_ln1, l, s, NS, C);
            mha_forward(m, MODEL_ATTN_ENC_SELF, l, in, in);
            s = sub_end(pre, a->enc_res1, a->enc_self.proj + (size_t)l * NS * C, a->enc_self.drop, &a->enc_ln1, &p->enc_ln1, l, s, NS, C);
            in = sub_begin(pre, &a->enc_ln2, &p->enc_ln2, l, s, NS, C);
            ffn_forward(&rows, &a->enc_ffn, l, in, &p->enc_ffn, C, F);
            s = sub_end(pre, a->enc_res2, a->enc_ffn.proj + (size_t)l * NS * C, a->enc_ffn.drop, &a->enc_ln2, &p->enc_ln2, l, s, NS, C);
        }
        if (pre) {
            layernorm_forward(a->enc_lnf.out, a->enc_lnf.mean, a->enc_lnf.rstd, s, p->enc_lnf.w, p->enc_lnf.b, NS, C);
            s = a->enc_lnf.out;
        }
        enc_out = s;
    }
    const float *final = enc_out;
    if (dec) {
        embed_forward(a->dec_x, m->tgt, p->tok_emb, m->pe, B, T, C);
        if (drop) for (size_t i = 0; i < (size_t)NT * C; i++) a->dec_x[i] *= a->dec_x_drop[i];
        const float *s = a->dec_x;
        PadRows rows = model_pad_rows(m, m->tgt_len, B, T);
        for (int l = 0; l < c->n_dec_layers; l++) {
            const float *in = sub_begin(pre, &a->dec_ln1, &p->dec_ln1, l, s, NT, C);
            mha_forward(m, MODEL_ATTN_DEC_SELF, l, in, in);
            s = sub_end(pre, a->dec_res1, a->dec_self.proj + (size_t)l * NT * C, a->dec_self.drop, &a->dec_ln1, &p->dec_ln1, l, s, NT, C);
            if (enc) {
                in = sub_begin(pre, &a->dec_ln2, &p->dec_ln2, l, s, NT, C);
                mha_forward(m, MODEL_ATTN_CROSS, l, in, enc_out);
                s = sub_end(pre, a->dec_res2, a->dec_cross.proj + (size_t)l * NT * C, a->dec_cross.drop, &a->dec_ln2, &p->dec_ln2, l, s, NT, C);
            }
            in = sub_begin(pre, &a->dec_ln3, &p->dec_ln3, l, s, NT, C);
            ffn_forward(&rows, &a->dec_ffn, l, in, &p->dec_ffn, C, F);
            s = sub_end(pre, a->dec_res3, a->dec_ffn.proj + (size_t)l * NT * C, a->dec_ffn.drop, &a->dec_ln3, &p->dec_ln3, l, s, NT, C);
        }
        if (pre) {
            layernorm_forward(a->dec_lnf.out, a->dec_lnf.mean, a->dec_lnf.rstd, s, p->dec_lnf.w, p->dec_lnf.b, NT, C);
            s = a->dec_lnf.out;
        }
        final = s;
    }
    PadRows out_rows = model_pad_rows(m, m->out_len, B, m->To);
    LinearLayer out = { .w = p->out_w, .b = p->out_b, .K = C, .M = V };
    model_linear_forward(&out_rows, a->logits, final, &out);
    return 0;
}

/* Softmax, loss and (dlogits != NULL) ∂loss/∂logits of one output row in one pass
 * over its V logits after the max: p = exp(z − max) (exp_shifted), sums in double.
 * Adds the row's nll to *total when it counts (t < out_len). */
static void loss_row(float *p, float *dlogits, const float *z, int y, int counts, int V, float eps,
                     float inv_count, double *total) {
    float mx = -INFINITY;
    for (int v = 0; v < V; v++) mx = z[v] > mx ? z[v] : mx;
    exp_shifted(p, z, mx, V);
    double sum = 0.0, zsum = 0.0;
    OMP_SIMD_REDUCE(sum)
    for (int v = 0; v < V; v++) sum += p[v];
    float inv = (float)(1.0 / sum);
    OMP_SIMD
    for (int v = 0; v < V; v++) p[v] *= inv;
    if (!counts) {
        if (dlogits) memset(dlogits, 0, (size_t)V * sizeof(float));
        return;
    }
    if (dlogits) {   /* (softmax − target distribution) / count, target = (1−eps)·onehot + eps/V */
        float off = eps / V;
        OMP_SIMD
        for (int v = 0; v < V; v++) dlogits[v] = (p[v] - off) * inv_count;
        dlogits[y] -= (1.0f - eps) * inv_count;
    }
    double logsum = log(sum);
    double nll = -((double)z[y] - mx - logsum);
    if (eps > 0.0f) {
        OMP_SIMD_REDUCE(zsum)
        for (int v = 0; v < V; v++) zsum += z[v];
        double mean_logp = zsum / V - mx - logsum;    /* mean over v of log p[v] */
        nll = (1.0 - eps) * nll - eps * mean_logp;
    }
    *total += nll;
}

float model_loss_grad(Model *m, const int *targets, float eps, float *dlogits) {
    if (!m->acts.logits || m->B < 1) { errmsg_set(m->err, sizeof m->err, "model_loss: no forward pass yet"); return NAN; }
    int V = m->config.vocab_size, To = m->To, B = m->B;
    long count = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < m->out_len[b]; t++) {
            int y = targets[(size_t)b * To + t];
            if (y < 0 || y >= V) {
                errmsg_set(m->err, sizeof m->err, "model_loss: target id %d at (%d,%d) is outside 0..%d", y, b, t, V - 1);
                return NAN;
            }
            count++;
        }
    if (m->loss_count > 0) count = m->loss_count;   /* a half of a split batch (model_twin.c) */
    float inv_count = count ? 1.0f / (float)count : 0.0f;
    double total = 0.0;
    OMP_PARALLEL_FOR_SUM(total)
    for (int bt = 0; bt < B * To; bt++) {
        int counts = bt % To < m->out_len[bt / To];
        size_t o = (size_t)bt * V;
        loss_row(m->acts.probs + o, dlogits ? dlogits + o : NULL, m->acts.logits + o,
                 counts ? targets[bt] : 0, counts, V, eps, inv_count, &total);
    }
    return count ? (float)(total / count) : 0.0f;
}

float model_loss(Model *m, const int *targets, float eps) {
    return model_loss_grad(m, targets, eps, NULL);
}

/* ----------------------------------------------------------------- probe */

static int trace_tokens(char ***out, char *storage, size_t cap, const char *const *names,
                        const int *ids, int len, int T) {
    char **v = malloc((size_t)(T > 0 ? T : 1) * sizeof(char *));
    if (!v) return -1;
    size_t used = 0;
    for (int t = 0; t < T; t++) {
        if (t >= len) { v[t] = "<pad>"; continue; }
        if (names && names[t]) { v[t] = (char *)names[t]; continue; }
        v[t] = storage + used;
        int k = snprintf(storage + used, cap - used, "#%d", ids[t]);
        used += (size_t)k + 1;
    }
    *out = v;
    return 0;
}

/* Adds map "<stack>.<l>.<kind>" (model_attn_map_name) of batch item b; st is NULL
 * or sized (Tq, Tk, D). */
static int trace_layer(Model *m, Trace *tr, int b, ModelAttnKind kind, int l, char **qtok, char **ktok,
                       AttnSteps *st) {
    static const char *const stack[3] = {"encoder", "decoder", "decoder"};
    static const char *const kinds[3] = {"self", "masked_self", "cross"};
    AttnLayer a = model_attn_layer(m, kind, l);
    int H = a.H, C = a.C, D = C / H, Tq = a.Tq, Tk = a.Tk;
    char id[64];
    model_attn_map_name(kind, l, id, sizeof id);
    const unsigned char *mk = a.mask + (size_t)b * Tq * Tk;
    TraceMap *map = trace_add_map(tr, &(TraceMapSpec){.id = id, .stack = stack[kind], .layer = l, .kind = kinds[kind],
                                                      .queries = (const char *const *)qtok, .Tq = Tq,
                                                      .keys = (const char *const *)ktok, .Tk = Tk, .d_k = D, .Dv = D,
                                                      .mask = mk, .mask_fill = -INFINITY, .n_heads = H});
    if (!map) return -1;
    for (int h = 0; h < H; h++) {
        const float *w = a.att + ((size_t)b * H + h) * Tq * Tk;
        int rc;
        if (st) {
            size_t qo = (size_t)b * Tq * C + (size_t)h * D, ko = (size_t)b * Tk * C + (size_t)h * D;
            AttnHead ah = {.q = a.q + qo, .ldq = C, .k = a.k + ko, .ldk = C, .v = a.v + ko, .ldv = C,
                           .mask = mk, .mask_fill = -INFINITY, .scale = 1.0f / sqrtf((float)D),
                           .Tq = Tq, .Tk = Tk, .D = D, .Dv = D, .steps = st};
            attention_forward(&ah);
            rc = trace_set_head(map, h, w, st->scores, st->scaled, st->masked, st->output);
        } else {
            rc = trace_set_head(map, h, w, NULL, NULL, NULL, NULL);
        }
        if (rc) return -1;
    }
    return 0;
}

int model_trace(Model *m, int b, Trace *tr, const char *const *src_tokens,
                const char *const *tgt_tokens, int with_steps) {
    const ModelConfig *c = &m->config;
    if (m->B < 1 || !m->acts.logits) return errmsg_set(m->err, sizeof m->err, "model_trace: no forward pass yet");
    if (b < 0 || b >= m->B) return errmsg_set(m->err, sizeof m->err, "model_trace: batch item %d outside 0..%d", b, m->B - 1);
    int S = m->S, T = m->T, rc = -1;
    size_t cap = (size_t)(S + T + 2) * 32;
    char *storage = malloc(cap);
    AttnSteps st_enc, st_dec, st_cross;
    memset(&st_enc, 0, sizeof st_enc); memset(&st_dec, 0, sizeof st_dec); memset(&st_cross, 0, sizeof st_cross);
    char **stok = NULL, **ttok = NULL;
    char mj[1024];
    if (!storage || trace_tokens(&stok, storage, cap / 2, src_tokens, m->src + (size_t)b * S, m->src_len[b], S) ||
        trace_tokens(&ttok, storage + cap / 2, cap / 2, tgt_tokens, m->tgt + (size_t)b * T, m->tgt_len[b], T)) {
        errmsg_set(m->err, sizeof m->err, "out of memory (trace)");
        goto done;
    }
    model_config_json(c, mj, sizeof mj);
    if (trace_set_model_json(tr, mj) || trace_set_source(tr, (const char *const *)stok, S) ||
        trace_set_target(tr, (const char *const *)ttok, T)) {
        errmsg_set(m->err, sizeof m->err, "out of memory (trace)");
        goto done;
    }
    int D = c->d_model / c->n_heads;
    if (c->arch != MODEL_DECODER_ONLY) {
        if (with_steps && attn_steps_alloc(&st_enc, S, S, D)) goto oom;
        for (int l = 0; l < c->n_enc_layers; l++)
            if (trace_layer(m, tr, b, MODEL_ATTN_ENC_SELF, l, stok, stok, with_steps ? &st_enc : NULL)) goto oom;
    }
    if (c->arch != MODEL_ENCODER_ONLY) {
        if (with_steps && attn_steps_alloc(&st_dec, T, T, D)) goto oom;
        if (with_steps && c->arch == MODEL_ENC_DEC && attn_steps_alloc(&st_cross, T, S, D)) goto oom;
        for (int l = 0; l < c->n_dec_layers; l++) {   /* in the order data flows */
            if (trace_layer(m, tr, b, MODEL_ATTN_DEC_SELF, l, ttok, ttok, with_steps ? &st_dec : NULL)) goto oom;
            if (c->arch == MODEL_ENC_DEC &&
                trace_layer(m, tr, b, MODEL_ATTN_CROSS, l, ttok, stok, with_steps ? &st_cross : NULL)) goto oom;
        }
    }
    rc = 0;
    goto done;
oom:
    errmsg_set(m->err, sizeof m->err, "out of memory (trace)");
done:
    attn_steps_free(&st_enc); attn_steps_free(&st_dec); attn_steps_free(&st_cross);
    free(stok); free(ttok); free(storage);
    return rc;
}
