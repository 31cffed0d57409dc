/* hf_config.c — see hf_config.h. */
#include "family/hf_config.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An integer member, or `dflt` when absent/null (dflt < 0: required). */
static int get_int(const cJSON *j, const char *key, int dflt, int *out, const char *path, char *err, size_t errlen) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!it || cJSON_IsNull(it)) {
        if (dflt < 0) return errmsg_set(err, errlen, "%s: \"%s\" is missing", path, key);
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < 1 || it->valuedouble > 1e8)
        return errmsg_set(err, errlen, "%s: \"%s\" must be a positive integer", path, key);
    *out = (int)it->valuedouble;
    return 0;
}

static int get_eps(const cJSON *j, const char *key, float dflt, float *out, const char *path, char *err, size_t errlen) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!it) { *out = dflt; return 0; }
    if (!cJSON_IsNumber(it) || !(it->valuedouble > 0 && it->valuedouble < 1))
        return errmsg_set(err, errlen, "%s: \"%s\" must be a small positive number", path, key);
    *out = (float)it->valuedouble;
    return 0;
}

static int get_act(StackConfig *c, const cJSON *j, const char *key, const char *dflt, const char *path, char *err,
                   size_t errlen) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    const char *a = cJSON_IsString(it) ? it->valuestring : dflt;
    snprintf(c->act_name, sizeof c->act_name, "%s", a);
    if (!strcmp(a, "gelu_new") || !strcmp(a, "gelu_pytorch_tanh") || !strcmp(a, "gelu_fast")) c->act = STACK_ACT_GELU_TANH;
    else if (!strcmp(a, "gelu")) c->act = STACK_ACT_GELU_ERF;
    else if (!strcmp(a, "relu")) c->act = STACK_ACT_RELU;
    else return errmsg_set(err, errlen, "%s: %s \"%s\" is not one attnviz computes (gelu_new, gelu, relu)", path, key, a);
    return 0;
}

/* The family from model_type, else from the architectures' names. */
static int family_of(const cJSON *j, StackFamily *f, const char *path, char *err, size_t errlen) {
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(j, "model_type");
    if (cJSON_IsString(mt)) {
        if (!strcmp(mt->valuestring, "gpt2")) { *f = STACK_GPT2; return 0; }
        if (!strcmp(mt->valuestring, "bert")) { *f = STACK_BERT; return 0; }
        return errmsg_set(err, errlen, "%s: model_type \"%s\" is not a family attnviz reads (gpt2, bert)", path,
                          mt->valuestring);
    }
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(j, "architectures");
    for (const cJSON *a = cJSON_IsArray(arch) ? arch->child : NULL; a; a = a->next) {
        if (!cJSON_IsString(a)) continue;
        if (!strncmp(a->valuestring, "GPT2", 4)) { *f = STACK_GPT2; return 0; }
        if (!strncmp(a->valuestring, "Bert", 4)) { *f = STACK_BERT; return 0; }
    }
    return errmsg_set(err, errlen, "%s: no model_type or architectures naming GPT-2 or BERT", path);
}

/* Options that change the computation and that attnviz does not compute: the
 * run stops rather than draw something the model does not do. */
static int refuse(const cJSON *j, const char *key, const char *usual, const char *path, char *err, size_t errlen) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!it || cJSON_IsNull(it)) return 0;
    char *text = cJSON_PrintUnformatted(it);
    int same = text && !strcmp(text, usual);
    int rc = same ? 0 : errmsg_set(err, errlen, "%s: %s is %s; attnviz computes only %s", path, key, text ? text : "?", usual);
    free(text);
    return rc;
}

static int read_gpt2(StackConfig *c, const cJSON *j, const char *path, char *err, size_t errlen) {
    int ctx = 0;
    if (refuse(j, "scale_attn_weights", "true", path, err, errlen) ||
        refuse(j, "scale_attn_by_inverse_layer_idx", "false", path, err, errlen) ||
        refuse(j, "add_cross_attention", "false", path, err, errlen))
        return -1;
    if (get_int(j, "n_embd", -1, &c->d_model, path, err, errlen) || get_int(j, "n_head", -1, &c->n_head, path, err, errlen) ||
        get_int(j, "n_layer", -1, &c->n_layer, path, err, errlen) || get_int(j, "vocab_size", -1, &c->n_vocab, path, err, errlen) ||
        get_int(j, "n_ctx", 1024, &ctx, path, err, errlen) || get_int(j, "n_positions", ctx, &c->n_pos, path, err, errlen) ||
        get_int(j, "n_inner", 4 * c->d_model, &c->d_ff, path, err, errlen) ||
        get_eps(j, "layer_norm_epsilon", 1e-5f, &c->norm_eps, path, err, errlen) ||
        get_act(c, j, "activation_function", "gelu_new", path, err, errlen))
        return -1;
    c->n_type = 0;
    return 0;
}

static int read_bert(StackConfig *c, const cJSON *j, const char *path, char *err, size_t errlen) {
    if (refuse(j, "position_embedding_type", "\"absolute\"", path, err, errlen) ||
        refuse(j, "is_decoder", "false", path, err, errlen))
        return -1;
    if (get_int(j, "hidden_size", -1, &c->d_model, path, err, errlen) ||
        get_int(j, "num_attention_heads", -1, &c->n_head, path, err, errlen) ||
        get_int(j, "num_hidden_layers", -1, &c->n_layer, path, err, errlen) ||
        get_int(j, "vocab_size", -1, &c->n_vocab, path, err, errlen) ||
        get_int(j, "intermediate_size", -1, &c->d_ff, path, err, errlen) ||
        get_int(j, "max_position_embeddings", 512, &c->n_pos, path, err, errlen) ||
        get_int(j, "type_vocab_size", 2, &c->n_type, path, err, errlen) ||
        get_eps(j, "layer_norm_eps", 1e-12f, &c->norm_eps, path, err, errlen) ||
        get_act(c, j, "hidden_act", "gelu", path, err, errlen))
        return -1;
    return 0;
}

/* What GPT-2 and BERT share, as the stack's flags. */
static void stack_flags(StackConfig *c) {
    int gpt = c->family == STACK_GPT2;
    c->n_kv_head = c->n_head;
    c->head_dim = c->d_model / c->n_head;
    c->norm = STACK_NORM_LAYER;
    c->post_norm = !gpt;
    c->fused_qkv = c->qkv_bias = c->o_bias = c->mlp_bias = c->norm_bias = 1;
    c->tie_embeddings = 1;
    c->causal = gpt;
    c->mask_padding = 1;
    c->embed_scale = 1.0f;
    c->attn_scale = 1.0f / sqrtf((float)c->head_dim);
    c->bos_id = -1;
}

int hf_config_claims(const char *text) {
    cJSON *j = cJSON_Parse(text);
    StackFamily f;
    char quiet[8];
    int mine = !cJSON_IsObject(j) || family_of(j, &f, "", quiet, sizeof quiet) == 0;
    cJSON_Delete(j);
    return mine;
}

int hf_config_parse(StackConfig *c, const char *text, const char *path, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    const char *end = text;
    cJSON *j = cJSON_ParseWithOpts(text, &end, 0);
    int rc = -1;
    if (!j) errmsg_set(err, errlen, "%s is not valid JSON (cut short or damaged at byte %zu)", path, (size_t)(end - text));
    else if (!cJSON_IsObject(j)) errmsg_set(err, errlen, "%s is not a JSON object", path);
    else if (family_of(j, &c->family, path, err, errlen) == 0)
        rc = c->family == STACK_GPT2 ? read_gpt2(c, j, path, err, errlen) : read_bert(c, j, path, err, errlen);
    cJSON_Delete(j);
    if (rc == 0 && c->d_model % c->n_head != 0)
        return errmsg_set(err, errlen, "%s: the width %d is not a multiple of the %d heads", path, c->d_model, c->n_head);
    if (rc != 0) return -1;
    stack_flags(c);
    return stack_config_check(c, path, err, errlen);
}

int hf_config_load(StackConfig *c, const char *dir, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    char *text = file_read_all(path, 4u << 20, NULL, err, errlen);
    if (!text) return -1;
    int rc = hf_config_parse(c, text, path, err, errlen);
    free(text);
    return rc;
}
