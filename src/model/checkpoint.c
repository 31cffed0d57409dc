/* checkpoint.c — safetensors reader/writer for attnviz models (see checkpoint.h). */
#include "model/checkpoint.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "tokenize/tokenizer.h"
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int host_is_little_endian(void) {
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Converts n floats between host order and little-endian, in place (no-op on LE hosts). */
static void swap_floats_if_big_endian(float *x, size_t n) {
    if (host_is_little_endian()) return;
    for (size_t i = 0; i < n; i++) {
        unsigned char *b = (unsigned char *)&x[i], t;
        t = b[0]; b[0] = b[3]; b[3] = t;
        t = b[1]; b[1] = b[2]; b[2] = t;
    }
}

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
    if (!m->params_memory) { errmsg_set(err, errlen, "cannot save: the model has no parameters"); return -1; }
    if (n_vocab != c->vocab_size) {
        errmsg_set(err, errlen, "cannot save: vocabulary has %d tokens but the model's vocab_size is %d",
               n_vocab, c->vocab_size);
        return -1;
    }
    int rc = -1;
    cJSON *root = cJSON_CreateObject(), *meta = cJSON_CreateObject();
    char *vtxt = vocab_json(vocab, n_vocab), *header = NULL;
    float *buf = NULL;
    char cfg[1024];
    model_config_json(c, cfg, sizeof cfg);
    if (!root || !meta || !vtxt) goto oom;
    cJSON_AddItemToObject(root, "__metadata__", meta);
    if (!cJSON_AddStringToObject(meta, "format", CHECKPOINT_FORMAT) ||
        !cJSON_AddStringToObject(meta, "version", CHECKPOINT_VERSION) ||
        !cJSON_AddStringToObject(meta, "config", cfg) ||
        !cJSON_AddStringToObject(meta, "vocab", vtxt)) goto oom;
    for (int i = 0; extra && extra[i] && extra[i + 1]; i += 2)
        if (!cJSON_AddStringToObject(meta, extra[i], extra[i + 1])) goto oom;

    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(c, m->params_memory, tab, MODEL_MAX_TENSORS);
    for (int t = 0; t < nt; t++) {
        cJSON *o = cJSON_CreateObject(), *shape = cJSON_CreateArray(), *offs = cJSON_CreateArray();
        if (!o || !shape || !offs) { cJSON_Delete(o); cJSON_Delete(shape); cJSON_Delete(offs); goto oom; }
        cJSON_AddItemToObject(root, tab[t].name, o);
        cJSON_AddStringToObject(o, "dtype", "F32");
        for (int d = 0; d < tab[t].ndim; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber(tab[t].shape[d]));
        cJSON_AddItemToObject(o, "shape", shape);
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(tab[t].offset * 4)));
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)((tab[t].offset + tab[t].numel) * 4)));
        cJSON_AddItemToObject(o, "data_offsets", offs);
    }
    header = cJSON_PrintUnformatted(root);
    if (!header) goto oom;
    size_t hlen = strlen(header), padded = (hlen + 7) / 8 * 8;

    AtomicFile af;
    if (atomic_open(&af, path, err, errlen)) goto done;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    int ok = fwrite(len8, 1, 8, af.f) == 8 && fwrite(header, 1, hlen, af.f) == hlen;
    for (size_t i = hlen; ok && i < padded; i++) ok = fputc(' ', af.f) != EOF;
    if (ok) {
        if (host_is_little_endian()) {
            ok = fwrite(m->params_memory, sizeof(float), m->num_params, af.f) == m->num_params;
        } else {
            buf = malloc(m->num_params * sizeof(float));
            if (!buf) { atomic_abort(&af); goto oom; }
            memcpy(buf, m->params_memory, m->num_params * sizeof(float));
            swap_floats_if_big_endian(buf, m->num_params);
            ok = fwrite(buf, sizeof(float), m->num_params, af.f) == m->num_params;
        }
    }
    if (!ok) { errmsg_set(err, errlen, "cannot write %s (disk full?)", path); atomic_abort(&af); goto done; }
    if (atomic_commit(&af, err, errlen)) goto done;
    rc = 0;
    goto done;
oom:
    errmsg_set(err, errlen, "out of memory while saving the checkpoint");
done:
    if (!cJSON_GetObjectItem(root, "__metadata__")) cJSON_Delete(meta);
    cJSON_Delete(root);
    cJSON_free(vtxt); cJSON_free(header);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------ load */

void checkpoint_free_vocab(char **vocab, int n_vocab) {
    if (!vocab) return;
    for (int i = 0; i < n_vocab; i++) free(vocab[i]);
    free(vocab);
}

/* A JSON number that is an integer in [0, max]. */
static int json_uint(const cJSON *it, double max, uint64_t *out) {
    if (!cJSON_IsNumber(it)) return -1;
    double v = it->valuedouble;
    if (!(v >= 0 && v <= max) || v != floor(v)) return -1;
    *out = (uint64_t)v;
    return 0;
}

/* Largest integer a JSON double holds exactly (2^53): the bound of data_offsets. */
#define JSON_MAX_OFFSET 9007199254740992.0

typedef struct { uint64_t begin, end; const char *name; } Span;
static int cmp_span(const void *a, const void *b) {
    const Span *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end < y->end ? -1 : x->end > y->end);
}

/* Opens path and reads its length-prefixed JSON header: *f stays open for the
 * data, *hlen and *data_size give the header's and the data's byte counts.
 * Returns the header (NUL-terminated, malloc'd), or NULL with err. */
static char *read_header(const char *path, FILE **f_out, uint64_t *hlen_out, uint64_t *data_size,
                         char *err, size_t errlen) {
    *f_out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) { errmsg_set(err, errlen, "cannot open model %s: %s", path, strerror(errno)); return NULL; }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        errmsg_set(err, errlen, "%s is not a regular file", path);
        goto fail;
    }
    uint64_t fsize = (uint64_t)st.st_size;
    if (fsize < 8) {
        errmsg_set(err, errlen, "%s is too short (%llu bytes) to be a safetensors model file", path,
                   (unsigned long long)fsize);
        goto fail;
    }
    unsigned char len8[8];
    if (fread(len8, 1, 8, f) != 8) { errmsg_set(err, errlen, "cannot read %s", path); goto fail; }
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++) hlen |= (uint64_t)len8[i] << (8 * i);
    if (hlen > CHECKPOINT_MAX_HEADER && hlen <= fsize - 8) {
        errmsg_set(err, errlen, "%s: the header is %llu bytes; the limit is %u (8 MB): not an attnviz model", path,
                   (unsigned long long)hlen, CHECKPOINT_MAX_HEADER);
        goto fail;
    }
    if (hlen < 2 || hlen > fsize - 8 || hlen > CHECKPOINT_MAX_HEADER) {
        errmsg_set(err, errlen, "%s: header length %llu is impossible for a %llu-byte file "
                   "(not a safetensors file, or truncated)", path, (unsigned long long)hlen,
                   (unsigned long long)fsize);
        goto fail;
    }
    char *header = malloc(hlen + 1);
    if (!header) { errmsg_set(err, errlen, "out of memory reading %s", path); goto fail; }
    if (fread(header, 1, hlen, f) != hlen) {
        errmsg_set(err, errlen, "cannot read the header of %s", path);
        free(header);
        goto fail;
    }
    header[hlen] = 0;
    *f_out = f;
    *hlen_out = hlen;
    *data_size = fsize - 8 - hlen;
    return header;
fail:
    fclose(f);
    return NULL;
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

/* __metadata__: every value a string, format and version ours, a valid config
 * and a vocabulary of vocab_size strings.  On success *meta_out points into
 * root and *vocab_out / *n_vocab_out hold the copied tokens.  0, or -1 with err
 * (then *vocab_out holds the n_vocab_out tokens copied so far, for the caller
 * to free). */
static int read_metadata(const cJSON *root, const char *path, const cJSON **meta_out, ModelConfig *cfg,
                         char ***vocab_out, int *n_vocab_out, char *err, size_t errlen) {
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    if (!cJSON_IsObject(meta))
        return errmsg_set(err, errlen, "%s: no __metadata__ in the header: not an attnviz model "
                          "(create one with `attnviz train` or `attnviz model-init`)", path);
    for (const cJSON *it = meta->child; it; it = it->next)
        if (!cJSON_IsString(it))
            return errmsg_set(err, errlen, "%s: __metadata__ value \"%s\" is not a string", path,
                              it->string ? it->string : "?");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(meta, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(meta, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, CHECKPOINT_FORMAT))
        return errmsg_set(err, errlen, "%s: format is \"%s\", expected \"%s\": not an attnviz model "
                          "(create one with `attnviz train`)", path, cJSON_IsString(fmt) ? fmt->valuestring : "(none)",
                          CHECKPOINT_FORMAT);
    if (!cJSON_IsString(ver) || strcmp(ver->valuestring, CHECKPOINT_VERSION))
        return errmsg_set(err, errlen, "%s: checkpoint version \"%s\" is not supported (this attnviz reads version %s; "
                          "retrain or convert the model with this version)", path,
                          cJSON_IsString(ver) ? ver->valuestring : "(none)", CHECKPOINT_VERSION);
    const cJSON *cfgj = cJSON_GetObjectItemCaseSensitive(meta, "config");
    if (!cJSON_IsString(cfgj)) return errmsg_set(err, errlen, "%s: __metadata__ has no \"config\"", path);
    char cerr[200];
    if (model_config_from_json(cfg, cfgj->valuestring, cerr, sizeof cerr))
        return errmsg_set(err, errlen, "%s: bad model %s", path, cerr);
    if (cfg->max_len < 2)   /* one token and <eos> at least; a smaller model cannot translate anything */
        return errmsg_set(err, errlen, "%s: max_len %d is below 2, too short for any sentence (retrain with "
                          "--max-len 2 or more)", path, cfg->max_len);

    const cJSON *vj = cJSON_GetObjectItemCaseSensitive(meta, "vocab");
    if (!cJSON_IsString(vj)) return errmsg_set(err, errlen, "%s: __metadata__ has no \"vocab\"", path);
    int rc = -1;
    cJSON *varr = cJSON_Parse(vj->valuestring);
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
    *meta_out = meta;
    rc = 0;
done:
    cJSON_Delete(varr);
    return rc;
}

/* One tensor entry of the header: dtype F32, the shape the config needs and
 * data_offsets inside the data_size bytes that hold exactly its floats. */
static int check_tensor_entry(const cJSON *root, const ModelParam *p, uint64_t data_size, const char *path,
                              Span *span, char *err, size_t errlen) {
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, p->name);
    if (!cJSON_IsObject(o)) return errmsg_set(err, errlen, "%s: tensor \"%s\" is missing", path, p->name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(o, "dtype");
    if (!cJSON_IsString(dt) || strcmp(dt->valuestring, "F32"))
        return errmsg_set(err, errlen, "%s: tensor \"%s\" has dtype %s, expected F32", path, p->name,
                          cJSON_IsString(dt) ? dt->valuestring : "(none)");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(o, "shape");
    int shape_ok = cJSON_IsArray(sh) && cJSON_GetArraySize(sh) == p->ndim;
    for (int d = 0; shape_ok && d < p->ndim; d++) {
        uint64_t v;
        shape_ok = !json_uint(cJSON_GetArrayItem(sh, d), 1e12, &v) && v == (uint64_t)p->shape[d];
    }
    if (!shape_ok) {
        char want[64];
        if (p->ndim == 1) snprintf(want, sizeof want, "[%d]", p->shape[0]);
        else if (p->ndim == 2) snprintf(want, sizeof want, "[%d,%d]", p->shape[0], p->shape[1]);
        else snprintf(want, sizeof want, "[%d,%d,%d]", p->shape[0], p->shape[1], p->shape[2]);
        char *got = sh ? cJSON_PrintUnformatted(sh) : NULL;
        errmsg_set(err, errlen, "%s: tensor \"%s\" has shape %s, the config needs %s", path, p->name,
                   got ? got : "(none)", want);
        cJSON_free(got);
        return -1;
    }
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(o, "data_offsets");
    uint64_t b0, b1;
    if (!cJSON_IsArray(of) || cJSON_GetArraySize(of) != 2 ||
        json_uint(cJSON_GetArrayItem(of, 0), JSON_MAX_OFFSET, &b0) ||
        json_uint(cJSON_GetArrayItem(of, 1), JSON_MAX_OFFSET, &b1))
        return errmsg_set(err, errlen, "%s: tensor \"%s\" has no valid data_offsets [begin, end]", path, p->name);
    if (b1 < b0 || b1 > data_size)
        return errmsg_set(err, errlen, "%s: tensor \"%s\" data_offsets [%llu, %llu] lie outside the %llu data bytes "
                          "(truncated or damaged file)", path, p->name, (unsigned long long)b0,
                          (unsigned long long)b1, (unsigned long long)data_size);
    if (b1 - b0 != 4 * (uint64_t)p->numel)
        return errmsg_set(err, errlen, "%s: tensor \"%s\" holds %llu bytes, its shape needs %llu", path, p->name,
                          (unsigned long long)(b1 - b0), (unsigned long long)(4 * (uint64_t)p->numel));
    span->begin = b0; span->end = b1; span->name = p->name;
    return 0;
}

/* Every tensor the config needs is described correctly, no other tensor is
 * there, and no two overlap.  0, or -1 with err. */
static int check_tensor_table(const cJSON *root, const ModelConfig *cfg, uint64_t data_size, const char *path,
                              char *err, size_t errlen) {
    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(cfg, NULL, tab, MODEL_MAX_TENSORS);
    Span spans[MODEL_MAX_TENSORS];
    for (int t = 0; t < nt; t++)
        if (check_tensor_entry(root, &tab[t], data_size, path, &spans[t], err, errlen)) return -1;
    int seen[MODEL_MAX_TENSORS] = {0}, seen_meta = 0;
    for (const cJSON *it = root->child; it; it = it->next) {
        if (!it->string) continue;
        if (!strcmp(it->string, "__metadata__")) {
            if (seen_meta++) return errmsg_set(err, errlen, "%s: __metadata__ appears twice in the header", path);
            continue;
        }
        int known = -1;
        for (int t = 0; t < nt && known < 0; t++) if (!strcmp(it->string, tab[t].name)) known = t;
        if (known < 0)
            return errmsg_set(err, errlen, "%s: unexpected tensor \"%s\" for a %s model (wrong config or damaged file)",
                              path, it->string, model_arch_name(cfg->arch));
        if (seen[known]++)   /* cJSON keeps both; which one would be read is arbitrary */
            return errmsg_set(err, errlen, "%s: tensor \"%s\" appears twice in the header (damaged file)", path,
                              it->string);
    }
    qsort(spans, (size_t)nt, sizeof spans[0], cmp_span);
    for (int t = 1; t < nt; t++)
        if (spans[t].begin < spans[t - 1].end && spans[t].end > spans[t].begin)
            return errmsg_set(err, errlen, "%s: tensors \"%s\" and \"%s\" overlap in the file", path,
                              spans[t - 1].name, spans[t].name);
    return 0;
}

/* Reads every tensor of the checked header into the allocated model m; each
 * value must be finite.  0, or -1 with err. */
static int read_tensor_data(FILE *f, uint64_t hlen, const cJSON *root, Model *m, const char *path,
                            char *err, size_t errlen) {
    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(&m->config, m->params_memory, tab, MODEL_MAX_TENSORS);
    for (int t = 0; t < nt; t++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, tab[t].name);
        uint64_t b0 = 0;   /* checked by check_tensor_entry */
        json_uint(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "data_offsets"), 0), JSON_MAX_OFFSET, &b0);
        if (fseeko(f, (off_t)(8 + hlen + b0), SEEK_SET) != 0 ||
            fread(tab[t].ptr, sizeof(float), tab[t].numel, f) != tab[t].numel)
            return errmsg_set(err, errlen, "%s: cannot read tensor \"%s\"", path, tab[t].name);
        swap_floats_if_big_endian(tab[t].ptr, tab[t].numel);
        for (size_t i = 0; i < tab[t].numel; i++)
            if (!isfinite(tab[t].ptr[i]))
                return errmsg_set(err, errlen, "%s: tensor \"%s\" holds a non-finite value (NaN or inf) at index %zu "
                                  "(training diverged or the file is damaged)", path, tab[t].name, i);
    }
    return 0;
}

int checkpoint_load(const char *path, Model *out, char ***vocab_out, int *n_vocab_out,
                    char **metadata_json, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    *vocab_out = NULL;
    *n_vocab_out = 0;
    if (metadata_json) *metadata_json = NULL;
    int rc = -1, n_vocab = 0;
    char **vocab = NULL;
    cJSON *root = NULL;
    FILE *f = NULL;
    uint64_t hlen = 0, data_size = 0;

    /* The header: length, JSON, metadata and config, tensor table. */
    char *header = read_header(path, &f, &hlen, &data_size, err, errlen);
    if (!header) return -1;
    root = cJSON_ParseWithLength(header, hlen);
    if (!cJSON_IsObject(root)) {
        errmsg_set(err, errlen, "%s: the header is not valid JSON (damaged file?)", path);
        goto done;
    }
    const cJSON *meta = NULL;
    ModelConfig cfg;
    if (read_metadata(root, path, &meta, &cfg, &vocab, &n_vocab, err, errlen)) goto done;
    if (check_tensor_table(root, &cfg, data_size, path, err, errlen)) goto done;

    /* Trusted now: allocate and read. */
    if (model_alloc(out, &cfg)) {
        errmsg_set(err, errlen, "%s: %s", path, out->err);
        goto done;
    }
    if (read_tensor_data(f, hlen, root, out, path, err, errlen)) goto done;
    if (metadata_json) {
        *metadata_json = cJSON_PrintUnformatted(meta);
        if (!*metadata_json) { errmsg_set(err, errlen, "out of memory reading %s", path); goto done; }
    }
    rc = 0;
done:
    fclose(f);
    cJSON_Delete(root);
    free(header);
    if (rc) {
        model_free(out);
        checkpoint_free_vocab(vocab, n_vocab);
        if (metadata_json && *metadata_json) { cJSON_free(*metadata_json); *metadata_json = NULL; }
    } else {
        *vocab_out = vocab;
        *n_vocab_out = n_vocab;
    }
    return rc;
}

int checkpoint_rewrite_metadata(const char *path, const char *const *kv, char *err, size_t errlen) {
    Model m = {0};
    char **vocab = NULL, *meta = NULL;
    int nv = 0, rc = -1, n = 0;
    const char **extra = NULL;
    cJSON *root = NULL;
    if (checkpoint_load(path, &m, &vocab, &nv, &meta, err, errlen)) return -1;
    root = cJSON_Parse(meta);
    int cap = cJSON_GetArraySize(root) * 2 + 16;
    extra = calloc((size_t)cap, sizeof *extra);
    if (!root || !extra) { errmsg_set(err, errlen, "%s: cannot read its metadata", path); goto done; }
    for (const cJSON *it = root->child; it; it = it->next) {
        if (!cJSON_IsString(it) || !strcmp(it->string, "format") || !strcmp(it->string, "version") ||
            !strcmp(it->string, "config") || !strcmp(it->string, "vocab")) continue;
        int replaced = 0;
        for (int k = 0; kv[k]; k += 2) replaced |= !strcmp(kv[k], it->string);
        if (replaced) continue;
        extra[n++] = it->string;
        extra[n++] = it->valuestring;
    }
    for (int k = 0; kv[k] && n + 2 < cap; k += 2) { extra[n++] = kv[k]; extra[n++] = kv[k + 1]; }
    extra[n] = NULL;
    rc = checkpoint_save(path, &m, (const char *const *)vocab, nv, extra, err, errlen);
done:
    cJSON_Delete(root);
    free(extra);
    free(meta);
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
