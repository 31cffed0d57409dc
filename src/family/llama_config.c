/* llama_config.c — see llama_config.h. */
#include "family/llama_config.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one parse holds: the object, the file (for messages), the error buffer. */
typedef struct {
    const cJSON *j;
    const char *path;
    char *err;
    size_t errlen;
} Cfg;

static const cJSON *member(const cJSON *j, const char *key) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    return it && !cJSON_IsNull(it) ? it : NULL;
}

/* An integer member >= lo, or dflt when absent or null (dflt < lo: required). */
static int get_int(const Cfg *g, const cJSON *j, const char *key, int dflt, int lo, int *out) {
    const cJSON *it = member(j, key);
    if (!it) {
        if (dflt < lo) return errmsg_set(g->err, g->errlen, "%s: \"%s\" is missing", g->path, key);
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < lo ||
        it->valuedouble > 1e9)
        return errmsg_set(g->err, g->errlen, "%s: \"%s\" must be an integer of at least %d", g->path, key, lo);
    *out = (int)it->valuedouble;
    return 0;
}

/* A positive number member, or dflt when absent (dflt <= 0: required). */
static int get_pos(const Cfg *g, const cJSON *j, const char *key, double dflt, double *out) {
    const cJSON *it = member(j, key);
    if (!it) {
        if (dflt <= 0) return errmsg_set(g->err, g->errlen, "%s: \"%s\" is missing", g->path, key);
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(it) || !(it->valuedouble > 0) || !isfinite(it->valuedouble))
        return errmsg_set(g->err, g->errlen, "%s: \"%s\" must be a positive number", g->path, key);
    *out = it->valuedouble;
    return 0;
}

static int get_bool(const Cfg *g, const char *key, int dflt, int *out) {
    const cJSON *it = member(g->j, key);
    if (!it) { *out = dflt; return 0; }
    if (!cJSON_IsBool(it)) return errmsg_set(g->err, g->errlen, "%s: \"%s\" must be true or false", g->path, key);
    *out = cJSON_IsTrue(it);
    return 0;
}

/* A member that must be absent, null or `usual` (its JSON text). */
static int refuse(const Cfg *g, const cJSON *j, const char *key, const char *usual) {
    const cJSON *it = member(j, key);
    if (!it) return 0;
    char *text = cJSON_PrintUnformatted(it);
    int same = text && !strcmp(text, usual);
    int rc = same ? 0 : errmsg_set(g->err, g->errlen, "%s: \"%s\" is %s; attnviz computes only %s", g->path, key,
                                   text ? text : "?", usual);
    free(text);
    return rc;
}

static const struct { const char *arch, *type; StackFamily a; } FAMILIES[] = {
    {"LlamaForCausalLM", "llama", STACK_LLAMA},       {"MistralForCausalLM", "mistral", STACK_MISTRAL},
    {"Qwen2ForCausalLM", "qwen2", STACK_QWEN2},       {"Qwen3ForCausalLM", "qwen3", STACK_QWEN3},
    {"Gemma3ForCausalLM", "gemma3_text", STACK_GEMMA3},
};
#define N_FAMILIES (int)(sizeof FAMILIES / sizeof FAMILIES[0])
#define FAMILY_LIST "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Gemma3ForCausalLM"

StackFamily llama_config_arch_of(const char *architecture, const char *model_type) {
    for (int i = 0; i < N_FAMILIES; i++)
        if (architecture ? !strcmp(architecture, FAMILIES[i].arch) : model_type && !strcmp(model_type, FAMILIES[i].type))
            return FAMILIES[i].a;
    return 0;
}

/* The family from "architectures", else from "model_type". */
static int family_of(const Cfg *g, StackConfig *c) {
    const cJSON *arch = member(g->j, "architectures");
    if (arch && (!cJSON_IsArray(arch) || !cJSON_IsString(arch->child)))
        return errmsg_set(g->err, g->errlen, "%s: \"architectures\" must be a list of names", g->path);
    if (arch) {
        const char *name = arch->child->valuestring;
        for (int i = 0; i < N_FAMILIES; i++)
            if (!strcmp(name, FAMILIES[i].arch)) {
                c->family = FAMILIES[i].a;
                snprintf(c->arch_name, sizeof c->arch_name, "%s", name);
                return 0;
            }
        return errmsg_set(g->err, g->errlen, "%s: \"architectures\" names %s, not one attnviz reads (%s)", g->path,
                          name, FAMILY_LIST);
    }
    const cJSON *mt = member(g->j, "model_type");
    if (!cJSON_IsString(mt))
        return errmsg_set(g->err, g->errlen, "%s: \"architectures\" and \"model_type\" are missing", g->path);
    for (int i = 0; i < N_FAMILIES; i++)
        if (!strcmp(mt->valuestring, FAMILIES[i].type)) {
            c->family = FAMILIES[i].a;
            snprintf(c->arch_name, sizeof c->arch_name, "%s", FAMILIES[i].arch);
            return 0;
        }
    return errmsg_set(g->err, g->errlen, "%s: \"model_type\" \"%s\" is not one attnviz reads (llama, mistral, qwen2, "
                      "qwen3, gemma3_text)", g->path, mt->valuestring);
}

static int get_act(const Cfg *g, StackConfig *c, const char *dflt) {
    const cJSON *it = member(g->j, "hidden_activation");
    const char *key = "hidden_activation";
    if (!it) { it = member(g->j, "hidden_act"); key = "hidden_act"; }
    if (it && !cJSON_IsString(it)) return errmsg_set(g->err, g->errlen, "%s: \"%s\" must be a name", g->path, key);
    const char *a = it ? it->valuestring : dflt;
    snprintf(c->act_name, sizeof c->act_name, "%s", a);
    if (!strcmp(a, "silu") || !strcmp(a, "swish")) c->act = STACK_ACT_SILU;
    else if (!strcmp(a, "gelu_pytorch_tanh") || !strcmp(a, "gelu_new") || !strcmp(a, "gelu_fast")) c->act = STACK_ACT_GELU_TANH;
    else if (!strcmp(a, "gelu")) c->act = STACK_ACT_GELU_ERF;
    else return errmsg_set(g->err, g->errlen, "%s: \"%s\" \"%s\" is not one attnviz computes (silu, gelu_pytorch_tanh, gelu)",
                           g->path, key, a);
    return 0;
}

/* One RoPE object (rope_scaling or rope_parameters): its type, scaling and,
 * when it has one, its base.  key names it in messages. */
static int parse_rope(const Cfg *g, const cJSON *o, const char *key, StackRope *r) {
    if (!cJSON_IsObject(o)) return errmsg_set(g->err, g->errlen, "%s: \"%s\" must be an object", g->path, key);
    const cJSON *t = member(o, "rope_type");
    if (!t) t = member(o, "type");
    const char *type = cJSON_IsString(t) ? t->valuestring : "default";
    if (t && !cJSON_IsString(t)) return errmsg_set(g->err, g->errlen, "%s: %s.rope_type must be a name", g->path, key);
    if (member(o, "rope_theta") && get_pos(g, o, "rope_theta", 1, &r->theta)) return -1;
    if (refuse(g, o, "partial_rotary_factor", "1")) return -1;   /* cJSON prints 1.0 as 1 */
    if (!strcmp(type, "default")) { r->type = STACK_ROPE_DEFAULT; return 0; }
    if (!strcmp(type, "linear")) {
        r->type = STACK_ROPE_LINEAR;
        return get_pos(g, o, "factor", 0, &r->factor);
    }
    if (!strcmp(type, "llama3")) {
        r->type = STACK_ROPE_LLAMA3;
        if (get_pos(g, o, "factor", 0, &r->factor) || get_pos(g, o, "low_freq_factor", 0, &r->low_freq_factor) ||
            get_pos(g, o, "high_freq_factor", 0, &r->high_freq_factor) ||
            get_pos(g, o, "original_max_position_embeddings", 0, &r->orig_max_pos))
            return -1;
        if (!(r->high_freq_factor > r->low_freq_factor))
            return errmsg_set(g->err, g->errlen, "%s: %s: high_freq_factor must be above low_freq_factor", g->path, key);
        return 0;
    }
    return errmsg_set(g->err, g->errlen, "%s: %s type \"%s\" is not one attnviz computes (default, linear, llama3)",
                      g->path, key, type);
}

/* rope[FULL] and rope[SLIDING] from rope_parameters, else rope_theta and
 * rope_scaling (Gemma 3: its local base, unscaled, for sliding layers). */
static int read_rope(const Cfg *g, StackConfig *c) {
    int gemma = c->family == STACK_GEMMA3;
    StackRope *full = &c->rope[STACK_LAYER_FULL], *slide = &c->rope[STACK_LAYER_SLIDING];
    memset(c->rope, 0, sizeof c->rope);
    if (get_pos(g, g->j, "rope_theta", gemma ? 1e6 : 1e4, &full->theta) ||
        get_pos(g, g->j, "rope_local_base_freq", 1e4, &slide->theta) ||
        refuse(g, g->j, "partial_rotary_factor", "1"))
        return -1;
    if (!gemma) slide->theta = full->theta;
    const cJSON *p = member(g->j, "rope_parameters");
    if (p) {
        const cJSON *pf = member(p, "full_attention"), *ps = member(p, "sliding_attention");
        if (pf || ps)
            return (pf && parse_rope(g, pf, "rope_parameters.full_attention", full)) ||
                   (ps && parse_rope(g, ps, "rope_parameters.sliding_attention", slide)) ? -1 : 0;
        if (parse_rope(g, p, "rope_parameters", full)) return -1;
        if (!gemma) *slide = *full;
        return 0;
    }
    const cJSON *s = member(g->j, "rope_scaling");
    if (s && parse_rope(g, s, "rope_scaling", full)) return -1;
    if (!gemma) *slide = *full;
    return 0;
}

/* Which layers are sliding-window layers, and the window. */
static int read_layers(const Cfg *g, StackConfig *c) {
    int L = c->n_layer, window = 0, on = 1, first = 0, pattern = 0;
    memset(c->layer_kind, STACK_LAYER_FULL, sizeof c->layer_kind);
    if (L > STACK_MAX_LAYERS)
        return errmsg_set(g->err, g->errlen, "%s: \"num_hidden_layers\" %d is more than attnviz reads (%d)", g->path, L,
                          STACK_MAX_LAYERS);
    int dflt = c->family == STACK_GEMMA3 ? 4096 : c->family == STACK_MISTRAL ? 4096 : 0;
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(g->j, "sliding_window");
    if (sw && cJSON_IsNull(sw)) dflt = 0;                 /* null: no window */
    if (get_int(g, g->j, "sliding_window", dflt, 0, &window)) return -1;
    const cJSON *types = member(g->j, "layer_types");
    if (c->family == STACK_LLAMA) window = 0;
    else if (types) {
        if (!cJSON_IsArray(types) || cJSON_GetArraySize(types) != L)
            return errmsg_set(g->err, g->errlen, "%s: \"layer_types\" must list %d layer types", g->path, L);
        int l = 0;
        for (const cJSON *t = types->child; t; t = t->next, l++) {
            int slide = cJSON_IsString(t) && !strcmp(t->valuestring, "sliding_attention");
            if (!slide && !(cJSON_IsString(t) && !strcmp(t->valuestring, "full_attention")))
                return errmsg_set(g->err, g->errlen, "%s: \"layer_types\"[%d] must be \"full_attention\" or "
                                  "\"sliding_attention\"", g->path, l);
            c->layer_kind[l] = (unsigned char)slide;
        }
    } else if (c->family == STACK_MISTRAL) {
        memset(c->layer_kind, window > 0, (size_t)L);
    } else if (c->family == STACK_QWEN2 || c->family == STACK_QWEN3) {
        if (get_bool(g, "use_sliding_window", 0, &on) || get_int(g, g->j, "max_window_layers", 28, 0, &first)) return -1;
        for (int l = first; on && window > 0 && l < L; l++) c->layer_kind[l] = STACK_LAYER_SLIDING;
    } else if (c->family == STACK_GEMMA3) {
        const char *key = member(g->j, "sliding_window_pattern") ? "sliding_window_pattern" : "_sliding_window_pattern";
        if (get_int(g, g->j, key, 6, 1, &pattern)) return -1;
        for (int l = 0; l < L; l++) c->layer_kind[l] = (unsigned char)((l + 1) % pattern != 0);
    }
    int any = 0;
    for (int l = 0; l < L; l++) any |= c->layer_kind[l];
    if (any && window < 1)
        return errmsg_set(g->err, g->errlen, "%s: sliding-window layers need \"sliding_window\" of at least 1", g->path);
    c->window = any ? window : 0;
    return 0;
}

/* The sizes and what each family adds. */
static int read_sizes(const Cfg *g, StackConfig *c) {
    const cJSON *j = g->j;
    StackFamily a = c->family;
    int gemma = a == STACK_GEMMA3, qwen3 = a == STACK_QWEN3;
    double eps = 1e-6, qpas = 0;
    if (get_int(g, j, "hidden_size", -1, 1, &c->d_model) || get_int(g, j, "num_attention_heads", -1, 1, &c->n_head) ||
        get_int(g, j, "num_hidden_layers", -1, 1, &c->n_layer) || get_int(g, j, "intermediate_size", -1, 1, &c->d_ff) ||
        get_int(g, j, "vocab_size", -1, 1, &c->n_vocab) ||
        get_int(g, j, "num_key_value_heads", c->n_head, 1, &c->n_kv_head) ||
        get_int(g, j, "head_dim", gemma ? 256 : qwen3 ? 128 : c->d_model / c->n_head, 1, &c->head_dim) ||
        get_int(g, j, "max_position_embeddings", gemma ? 131072 : a == STACK_LLAMA ? 2048 : 32768, 1, &c->n_pos) ||
        get_pos(g, j, "rms_norm_eps", 1e-6, &eps) || get_act(g, c, gemma ? "gelu_pytorch_tanh" : "silu") ||
        get_bool(g, "attention_bias", a == STACK_QWEN2, &c->qkv_bias) || get_bool(g, "mlp_bias", 0, &c->mlp_bias) ||
        get_bool(g, "tie_word_embeddings", gemma, &c->tie_embeddings) ||
        get_pos(g, j, "query_pre_attn_scalar", gemma ? 256 : 1, &qpas))
        return -1;
    const cJSON *bos = member(j, "bos_token_id");   /* only a hint for the tokenizer: never an error */
    c->bos_id = cJSON_IsNumber(bos) && bos->valuedouble >= 0 && bos->valuedouble < 1e9 ? (int)bos->valuedouble : -1;
    if (!(eps < 1)) return errmsg_set(g->err, g->errlen, "%s: \"rms_norm_eps\" must be below 1", g->path);
    c->norm_eps = (float)eps;
    c->o_bias = a == STACK_QWEN2 ? 0 : c->qkv_bias;   /* Qwen2: q, k, v only */
    if (a == STACK_QWEN2) c->qkv_bias = 1;
    c->qk_norm = gemma || qwen3;
    c->norm_plus_one = c->sandwich = gemma;
    c->embed_scale = gemma ? sqrtf((float)c->d_model) : 1.0f;
    c->attn_scale = (float)(1.0 / sqrt(gemma ? qpas : (double)c->head_dim));
    c->rope_layout = STACK_ROPE_HALF;
    c->norm = STACK_NORM_RMS;
    c->gated = c->causal = c->rotary = 1;
    double cap = 0;
    if (gemma && get_pos(g, j, "final_logit_softcapping", 1e30, &cap)) return -1;
    c->final_softcap = cap < 1e30 ? (float)cap : 0.0f;
    return refuse(g, j, "attn_logit_softcapping", "null") || refuse(g, j, "use_bidirectional_attention", "false") ||
           refuse(g, j, "use_mrope", "false") ? -1 : 0;
}

int llama_config_parse(StackConfig *c, const char *text, const char *path, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    const char *end = text;
    cJSON *j = cJSON_ParseWithOpts(text, &end, 0);
    Cfg g = {j, path, err, errlen};
    int rc = -1;
    if (!j) errmsg_set(err, errlen, "%s is not valid JSON (cut short or damaged at byte %zu)", path, (size_t)(end - text));
    else if (!cJSON_IsObject(j)) errmsg_set(err, errlen, "%s is not a JSON object", path);
    else if (family_of(&g, c) == 0 && read_sizes(&g, c) == 0 && read_rope(&g, c) == 0 && read_layers(&g, c) == 0)
        rc = 0;
    cJSON_Delete(j);
    if (rc == 0 && c->n_head % c->n_kv_head)
        return errmsg_set(err, errlen, "%s: \"num_attention_heads\" %d is not a multiple of \"num_key_value_heads\" %d",
                          path, c->n_head, c->n_kv_head);
    if (rc == 0 && c->head_dim % 2)
        return errmsg_set(err, errlen, "%s: \"head_dim\" %d is odd; RoPE rotates pairs", path, c->head_dim);
    return rc == 0 ? stack_config_check(c, path, err, errlen) : -1;
}

int llama_config_load(StackConfig *c, const char *dir, char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *text = file_read_all(path, 4u << 20, NULL, err, errlen);
    if (!text) return -1;
    int rc = llama_config_parse(c, text, path, err, errlen);
    free(text);
    return rc;
}
