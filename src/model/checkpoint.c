/* checkpoint.c — attnviz models in safetensors files (see checkpoint.h); the
 * container itself is read and written by core/safetensors.h. */
#include "model/checkpoint.h"
#include "core/errmsg.h"
#include "core/safetensors.h"
#include "tokenize/tokenizer.h"
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ save */

static char *vocab_json(const char *const *vocab, int n) {
    cJSON *arr = cJSON_CreateArray();
    if (!arr) return NULL;
    for (int i = 0; i < n; i++) {
        cJSON *s = cJSON_CreateString(vocab[i] ? vocab[i] : "");
        if (!s) { cJSON_Delete(arr); return NULL; }
        cJSON_AddItemToArray(arr, s);
    }
    char *txt = cJSON_PrintUnformatted(arr);
    cJSON_Delete(arr);
    return txt;
}

int checkpoint_save(const char *path, const Model *m, const char *const *vocab, int n_vocab,
                    const char *const *extra, char *err, size_t errlen) {
    const ModelConfig *c = &m->config;
    if (!m->params_memory) return errmsg_set(err, errlen, "cannot save: the model has no parameters");
    if (n_vocab != c->vocab_size)
        return errmsg_set(err, errlen, "cannot save: vocabulary has %d tokens but the model's vocab_size is %d",
                          n_vocab, c->vocab_size);
    int n_extra = 0;
    while (extra && extra[2 * n_extra] && extra[2 * n_extra + 1]) n_extra++;
    char cfg[1024], *vtxt = vocab_json(vocab, n_vocab);
    const char **meta = malloc((size_t)(2 * n_extra + 9) * sizeof *meta);
    if (!vtxt || !meta) {
        cJSON_free(vtxt);
        free(meta);
        return errmsg_set(err, errlen, "out of memory while saving the checkpoint");
    }
    model_config_json(c, cfg, sizeof cfg);
    const char *ours[8] = {"format", CHECKPOINT_FORMAT, "version", CHECKPOINT_VERSION, "config", cfg, "vocab", vtxt};
    memcpy(meta, ours, sizeof ours);
    if (n_extra) memcpy(meta + 8, extra, (size_t)(2 * n_extra) * sizeof *meta);   /* extra may be NULL */
    meta[8 + 2 * n_extra] = NULL;

    ModelParam tab[MODEL_MAX_TENSORS];
    StWriteTensor wt[MODEL_MAX_TENSORS];
    int nt = model_param_table(c, m->params_memory, tab, MODEL_MAX_TENSORS);
    for (int t = 0; t < nt; t++) {
        wt[t] = (StWriteTensor){.name = tab[t].name, .dtype = "F32", .ndim = tab[t].ndim, .data = tab[t].ptr};
        for (int d = 0; d < tab[t].ndim; d++) wt[t].shape[d] = tab[t].shape[d];
    }
    int rc = safetensors_write(path, wt, nt, meta, err, errlen);
    cJSON_free(vtxt);
    free(meta);
    return rc;
}

/* ------------------------------------------------------------------ load */

void checkpoint_free_vocab(char **vocab, int n_vocab) {
    if (!vocab) return;
    for (int i = 0; i < n_vocab; i++) free(vocab[i]);
    free(vocab);
}

/* The special tokens <pad> <unk> <bos> <eos> <2fr> <2vi> are ids 0..5, in that
 * order, and nowhere else (tokenizer.h): decoding relies on it.  0, or -1 with err. */
static int check_specials(char *const *vocab, int n, const char *path, char *err, size_t errlen) {
    if (n < VOCAB_N_SPECIAL)
        return errmsg_set(err, errlen, "%s: the vocabulary has %d tokens, fewer than the %d special ones", path, n,
                          VOCAB_N_SPECIAL);
    for (int i = 0; i < n; i++) {
        int special = -1;
        for (int k = 0; k < VOCAB_N_SPECIAL && special < 0; k++) if (!strcmp(vocab[i], vocab_special[k])) special = k;
        if (i < VOCAB_N_SPECIAL && special != i)
            return errmsg_set(err, errlen, "%s: vocab entry %d is \"%s\", expected the special token %s there", path,
                              i, vocab[i], vocab_special[i]);
        if (i >= VOCAB_N_SPECIAL && special >= 0)
            return errmsg_set(err, errlen, "%s: the special token %s appears again as vocab entry %d (damaged file)",
                              path, vocab[i], i);
    }
    return 0;
}

/* __metadata__: format and version ours, a valid config and a vocabulary of
 * vocab_size strings (the container checked that every value is a string).
 * *vocab_out / *n_vocab_out receive the copied tokens.  0, or -1 with err
 * (then *vocab_out holds the n_vocab_out tokens copied so far, for the caller
 * to free). */
static int read_metadata(const SafeTensors *st, const char *path, ModelConfig *cfg, char ***vocab_out,
                         int *n_vocab_out, char *err, size_t errlen) {
    if (st->n_meta == 0)
        return errmsg_set(err, errlen, "%s: no __metadata__ in the header: not an attnviz model "
                          "(create one with `attnviz train` or `attnviz model-init`)", path);
    const char *fmt = safetensors_meta(st, "format"), *ver = safetensors_meta(st, "version");
    if (!fmt || strcmp(fmt, CHECKPOINT_FORMAT))
        return errmsg_set(err, errlen, "%s: format is \"%s\", expected \"%s\": not an attnviz model "
                          "(create one with `attnviz train`)", path, fmt ? fmt : "(none)", CHECKPOINT_FORMAT);
    if (!ver || strcmp(ver, CHECKPOINT_VERSION))
        return errmsg_set(err, errlen, "%s: checkpoint version \"%s\" is not supported (this attnviz reads version %s; "
                          "retrain or convert the model with this version)", path, ver ? ver : "(none)",
                          CHECKPOINT_VERSION);
    const char *cfgj = safetensors_meta(st, "config");
    if (!cfgj) return errmsg_set(err, errlen, "%s: __metadata__ has no \"config\"", path);
    char cerr[200];
    if (model_config_from_json(cfg, cfgj, cerr, sizeof cerr))
        return errmsg_set(err, errlen, "%s: bad model %s", path, cerr);
    if (cfg->max_len < 2)   /* one token and <eos> at least; a smaller model cannot translate anything */
        return errmsg_set(err, errlen, "%s: max_len %d is below 2, too short for any sentence (retrain with "
                          "--max-len 2 or more)", path, cfg->max_len);

    const char *vj = safetensors_meta(st, "vocab");
    if (!vj) return errmsg_set(err, errlen, "%s: __metadata__ has no \"vocab\"", path);
    int rc = -1;
    cJSON *varr = cJSON_Parse(vj);
    if (!cJSON_IsArray(varr) || cJSON_GetArraySize(varr) != cfg->vocab_size) {
        errmsg_set(err, errlen, "%s: \"vocab\" must be a JSON array of %d strings (vocab_size)", path, cfg->vocab_size);
        goto done;
    }
    char **vocab = *vocab_out = calloc((size_t)cfg->vocab_size, sizeof(char *));
    if (!vocab) { errmsg_set(err, errlen, "out of memory reading %s", path); goto done; }
    for (const cJSON *it = varr->child; it; it = it->next) {
        int i = *n_vocab_out;
        if (!cJSON_IsString(it)) { errmsg_set(err, errlen, "%s: vocab entry %d is not a string", path, i); goto done; }
        vocab[i] = strdup(it->valuestring);
        if (!vocab[i]) { errmsg_set(err, errlen, "out of memory reading %s", path); goto done; }
        (*n_vocab_out)++;
    }
    if (check_specials(vocab, *n_vocab_out, path, err, errlen)) goto done;
    rc = 0;
done:
    cJSON_Delete(varr);
    return rc;
}

/* "[13,16]" */
static void shape_text(char *buf, size_t n, int ndim, const long *shape) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int d = 0; d < ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%ld", d ? "," : "", shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

/* Every tensor the config needs is there as F32 of its shape, and no other
 * tensor is (offsets, sizes, repeats and overlaps the container checked).
 * 0, or -1 with err. */
static int check_tensor_table(const SafeTensors *st, const ModelConfig *cfg, const char *path, char *err,
                              size_t errlen) {
    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(cfg, NULL, tab, MODEL_MAX_TENSORS);
    for (int k = 0; k < nt; k++) {
        const ModelParam *p = &tab[k];
        const StTensor *t = safetensors_find(st, p->name);
        if (!t) return errmsg_set(err, errlen, "%s: tensor \"%s\" is missing", path, p->name);
        if (strcmp(t->dtype, "F32"))
            return errmsg_set(err, errlen, "%s: tensor \"%s\" has dtype %s, expected F32", path, p->name, t->dtype);
        long want[3] = {p->shape[0], p->shape[1], p->shape[2]};
        int same = t->ndim == p->ndim;
        for (int d = 0; same && d < p->ndim; d++) same = t->shape[d] == want[d];
        if (!same) {
            char got[200], need[64];
            shape_text(got, sizeof got, t->ndim, t->shape);
            shape_text(need, sizeof need, p->ndim, want);
            return errmsg_set(err, errlen, "%s: tensor \"%s\" has shape %s, the config needs %s", path, p->name, got,
                              need);
        }
    }
    for (int i = 0; i < st->n; i++) {
        int known = 0;
        for (int k = 0; k < nt && !known; k++) known = !strcmp(st->t[i].name, tab[k].name);
        if (!known)
            return errmsg_set(err, errlen, "%s: unexpected tensor \"%s\" for a %s model (wrong config or damaged file)",
                              path, st->t[i].name, model_arch_name(cfg->arch));
    }
    return 0;
}

/* Reads every tensor of the checked file into the allocated model m; each
 * value must be finite.  0, or -1 with err. */
static int read_tensor_data(const SafeTensors *st, Model *m, const char *path, char *err, size_t errlen) {
    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(&m->config, m->params_memory, tab, MODEL_MAX_TENSORS);
    char why[512];
    for (int t = 0; t < nt; t++) {
        if (safetensors_read_f32(st, safetensors_find(st, tab[t].name), tab[t].ptr, why, sizeof why))
            return errmsg_set(err, errlen, "%s: cannot read tensor \"%s\"", path, tab[t].name);
        for (size_t i = 0; i < tab[t].numel; i++)
            if (!isfinite(tab[t].ptr[i]))
                return errmsg_set(err, errlen, "%s: tensor \"%s\" holds a non-finite value (NaN or inf) at index %zu "
                                  "(training diverged or the file is damaged)", path, tab[t].name, i);
    }
    return 0;
}

/* The checkpoint at path, open in st (its metadata stays there), read into
 * out with its vocabulary.  On error everything is released, out and st
 * zeroed, *vocab_out NULL; -1 with err. */
static int checkpoint_open(const char *path, SafeTensors *st, Model *out, char ***vocab_out, int *n_vocab_out,
                           char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    *vocab_out = NULL;
    *n_vocab_out = 0;
    if (safetensors_open_limit(st, path, CHECKPOINT_MAX_HEADER, err, errlen)) return -1;
    ModelConfig cfg;
    if (read_metadata(st, path, &cfg, vocab_out, n_vocab_out, err, errlen) ||
        check_tensor_table(st, &cfg, path, err, errlen))
        goto fail;
    if (model_alloc(out, &cfg)) {
        errmsg_set(err, errlen, "%s: %s", path, out->err);
        goto fail;
    }
    if (read_tensor_data(st, out, path, err, errlen)) goto fail;
    return 0;
fail:
    model_free(out);
    checkpoint_free_vocab(*vocab_out, *n_vocab_out);
    *vocab_out = NULL;
    *n_vocab_out = 0;
    safetensors_close(st);
    return -1;
}

int checkpoint_load(const char *path, Model *out, char ***vocab_out, int *n_vocab_out,
                    char **metadata_json, char *err, size_t errlen) {
    if (metadata_json) *metadata_json = NULL;
    SafeTensors st;
    if (checkpoint_open(path, &st, out, vocab_out, n_vocab_out, err, errlen)) return -1;
    if (metadata_json && !(*metadata_json = safetensors_meta_json(&st))) {
        errmsg_set(err, errlen, "out of memory reading %s", path);
        model_free(out);
        checkpoint_free_vocab(*vocab_out, *n_vocab_out);
        *vocab_out = NULL;
        *n_vocab_out = 0;
        safetensors_close(&st);
        return -1;
    }
    safetensors_close(&st);
    return 0;
}

int checkpoint_rewrite_metadata(const char *path, const char *const *kv, char *err, size_t errlen) {
    Model m;
    SafeTensors st;
    char **vocab = NULL;
    int nv = 0, n = 0, n_kv = 0;
    if (checkpoint_open(path, &st, &m, &vocab, &nv, err, errlen)) return -1;
    while (kv[2 * n_kv]) n_kv++;
    const char **extra = calloc((size_t)(2 * st.n_meta + 2 * n_kv + 1), sizeof *extra);
    int rc = extra ? 0 : errmsg_set(err, errlen, "out of memory rewriting %s", path);
    for (int i = 0; rc == 0 && i < st.n_meta; i++) {
        const char *key = st.meta_key[i];
        int replaced = !strcmp(key, "format") || !strcmp(key, "version") || !strcmp(key, "config") ||
                       !strcmp(key, "vocab");
        for (int k = 0; kv[k]; k += 2) replaced |= !strcmp(kv[k], key);
        if (replaced) continue;
        extra[n++] = key;
        extra[n++] = st.meta_value[i];
    }
    for (int k = 0; rc == 0 && kv[k]; k += 2) { extra[n++] = kv[k]; extra[n++] = kv[k + 1]; }
    if (rc == 0) rc = checkpoint_save(path, &m, (const char *const *)vocab, nv, extra, err, errlen);
    free(extra);
    safetensors_close(&st);
    checkpoint_free_vocab(vocab, nv);
    model_free(&m);
    return rc;
}

int checkpoint_meta_coref_head(const char *metadata_json, int n_layers, int n_heads,
                               int *layer, int *head, double *acc) {
    int found = 0, l;
    cJSON *root = metadata_json ? cJSON_Parse(metadata_json) : NULL;
    const cJSON *v = root ? cJSON_GetObjectItemCaseSensitive(root, "coreference_head") : NULL;
    cJSON *obj = cJSON_IsString(v) ? cJSON_Parse(v->valuestring) : NULL;
    const cJSON *mp = obj ? cJSON_GetObjectItemCaseSensitive(obj, "map") : NULL;
    const cJSON *hd = obj ? cJSON_GetObjectItemCaseSensitive(obj, "head") : NULL;
    const cJSON *ac = obj ? cJSON_GetObjectItemCaseSensitive(obj, "accuracy") : NULL;
    if (cJSON_IsString(mp) && cJSON_IsNumber(hd) && sscanf(mp->valuestring, "encoder.%d.self", &l) == 1 &&
        l >= 0 && l < n_layers && hd->valueint >= 0 && hd->valueint < n_heads) {
        *layer = l;
        *head = hd->valueint;
        *acc = cJSON_IsNumber(ac) ? ac->valuedouble : -1;
        found = 1;
    }
    cJSON_Delete(obj);
    cJSON_Delete(root);
    return found;
}

int checkpoint_meta_head_supervised(const char *metadata_json, const char *map_id, int head) {
    int found = 0;
    cJSON *root = metadata_json ? cJSON_Parse(metadata_json) : NULL;
    const cJSON *v = root ? cJSON_GetObjectItemCaseSensitive(root, "supervised_heads") : NULL;
    cJSON *list = cJSON_IsString(v) ? cJSON_Parse(v->valuestring) : NULL;
    const cJSON *it;
    cJSON_ArrayForEach(it, list) {
        const cJSON *mp = cJSON_GetObjectItemCaseSensitive(it, "map");
        const cJSON *hd = cJSON_GetObjectItemCaseSensitive(it, "head");
        if (cJSON_IsString(mp) && cJSON_IsNumber(hd) && !strcmp(mp->valuestring, map_id) && hd->valueint == head)
            found = 1;
    }
    cJSON_Delete(list);
    cJSON_Delete(root);
    return found;
}

void checkpoint_meta_source_hex(const unsigned char *seen, int n, char *out, size_t outlen) {
    size_t k = 0;
    for (int i = 0; i < n && k + 1 < outlen; i += 4, k++) {
        int d = 0;
        for (int b = 0; b < 4 && i + b < n; b++) d |= (seen[i + b] ? 1 : 0) << b;
        out[k] = "0123456789abcdef"[d];
    }
    if (outlen) out[k < outlen ? k : outlen - 1] = '\0';
}

int checkpoint_token_hex_parse(const char *hex, int n, unsigned char *set) {
    if (strlen(hex) != (size_t)(n + 3) / 4) return 0;
    for (int k = 0; hex[k]; k++) {
        char c = hex[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return 0;
        for (int b = 0; b < 4 && 4 * k + b < n; b++) set[4 * k + b] = (unsigned char)((d >> b) & 1);
    }
    return 1;
}

int checkpoint_meta_source_known(const char *metadata_json, int n, unsigned char *known, int *max_len) {
    *max_len = -1;
    cJSON *root = metadata_json ? cJSON_Parse(metadata_json) : NULL;
    const cJSON *hx = root ? cJSON_GetObjectItemCaseSensitive(root, "train_source_tokens") : NULL;
    const cJSON *ml = root ? cJSON_GetObjectItemCaseSensitive(root, "train_max_source_len") : NULL;
    int ok = cJSON_IsString(hx) && cJSON_IsString(ml);
    char *end = NULL;
    long len = ok ? strtol(ml->valuestring, &end, 10) : -1;
    ok = ok && end && !*end && len > 0 && len < 100000 && checkpoint_token_hex_parse(hx->valuestring, n, known);
    if (!ok) for (int i = 0; i < n; i++) known[i] = 1;
    else *max_len = (int)len;
    cJSON_Delete(root);
    return ok;
}

int checkpoint_meta_target_tokens(const char *metadata_json, const char *lang, int n, unsigned char *set) {
    char key[64];
    snprintf(key, sizeof key, "train_target_tokens_%s", lang);
    return checkpoint_meta_token_set(metadata_json, key, n, set);
}

int checkpoint_meta_token_set(const char *metadata_json, const char *key, int n, unsigned char *set) {
    cJSON *root = metadata_json ? cJSON_Parse(metadata_json) : NULL;
    const cJSON *hx = root ? cJSON_GetObjectItemCaseSensitive(root, key) : NULL;
    int ok = cJSON_IsString(hx) && checkpoint_token_hex_parse(hx->valuestring, n, set);
    if (!ok) memset(set, 0, (size_t)(n > 0 ? n : 0));
    cJSON_Delete(root);
    return ok;
}
