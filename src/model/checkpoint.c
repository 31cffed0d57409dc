/* checkpoint.c — safetensors reader/writer for attnviz models (see checkpoint.h). */
#include "model/checkpoint.h"
#include "core/errmsg.h"
#include "core/fileio.h"
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

typedef struct { uint64_t begin, end; const char *name; } Span;
static int cmp_span(const void *a, const void *b) {
    const Span *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end < y->end ? -1 : x->end > y->end);
}

int checkpoint_load(const char *path, Model *out, char ***vocab_out, int *n_vocab_out,
                    char **metadata_json, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    *vocab_out = NULL;
    *n_vocab_out = 0;
    if (metadata_json) *metadata_json = NULL;
    int rc = -1, n_vocab = 0;
    char *header = NULL, **vocab = NULL;
    cJSON *root = NULL, *varr = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) { errmsg_set(err, errlen, "cannot open model %s: %s", path, strerror(errno)); return -1; }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        errmsg_set(err, errlen, "%s is not a regular file", path);
        goto done;
    }
    uint64_t fsize = (uint64_t)st.st_size;
    if (fsize < 8) {
        errmsg_set(err, errlen, "%s is too short (%llu bytes) to be a safetensors model file", path,
               (unsigned long long)fsize);
        goto done;
    }
    unsigned char len8[8];
    if (fread(len8, 1, 8, f) != 8) { errmsg_set(err, errlen, "cannot read %s", path); goto done; }
    uint64_t hlen = 0;
    for (int i = 0; i < 8; i++) hlen |= (uint64_t)len8[i] << (8 * i);
    if (hlen < 2 || hlen > fsize - 8 || hlen > CHECKPOINT_MAX_HEADER) {
        errmsg_set(err, errlen, "%s: header length %llu is impossible for a %llu-byte file "
               "(not a safetensors file, or truncated)", path, (unsigned long long)hlen,
               (unsigned long long)fsize);
        goto done;
    }
    header = malloc(hlen + 1);
    if (!header) { errmsg_set(err, errlen, "out of memory reading %s", path); goto done; }
    if (fread(header, 1, hlen, f) != hlen) { errmsg_set(err, errlen, "cannot read the header of %s", path); goto done; }
    header[hlen] = 0;
    uint64_t data_size = fsize - 8 - hlen;

    root = cJSON_ParseWithLength(header, hlen);
    if (!cJSON_IsObject(root)) {
        errmsg_set(err, errlen, "%s: the header is not valid JSON (damaged file?)", path);
        goto done;
    }
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    if (!cJSON_IsObject(meta)) {
        errmsg_set(err, errlen, "%s: no __metadata__ in the header: not an attnviz model "
               "(create one with `attnviz train` or `attnviz model-init`)", path);
        goto done;
    }
    for (const cJSON *it = meta->child; it; it = it->next)
        if (!cJSON_IsString(it)) {
            errmsg_set(err, errlen, "%s: __metadata__ value \"%s\" is not a string", path, it->string ? it->string : "?");
            goto done;
        }
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(meta, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(meta, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, CHECKPOINT_FORMAT)) {
        errmsg_set(err, errlen, "%s: format is \"%s\", expected \"%s\": not an attnviz model "
               "(create one with `attnviz train`)", path, cJSON_IsString(fmt) ? fmt->valuestring : "(none)",
               CHECKPOINT_FORMAT);
        goto done;
    }
    if (!cJSON_IsString(ver) || strcmp(ver->valuestring, CHECKPOINT_VERSION)) {
        errmsg_set(err, errlen, "%s: checkpoint version \"%s\" is not supported (this attnviz reads version %s; "
               "retrain or convert the model with this version)", path,
               cJSON_IsString(ver) ? ver->valuestring : "(none)", CHECKPOINT_VERSION);
        goto done;
    }
    const cJSON *cfgj = cJSON_GetObjectItemCaseSensitive(meta, "config");
    if (!cJSON_IsString(cfgj)) { errmsg_set(err, errlen, "%s: __metadata__ has no \"config\"", path); goto done; }
    ModelConfig cfg;
    char cerr[200];
    if (model_config_from_json(&cfg, cfgj->valuestring, cerr, sizeof cerr)) {
        errmsg_set(err, errlen, "%s: bad model %s", path, cerr);
        goto done;
    }
    const cJSON *vj = cJSON_GetObjectItemCaseSensitive(meta, "vocab");
    if (!cJSON_IsString(vj)) { errmsg_set(err, errlen, "%s: __metadata__ has no \"vocab\"", path); goto done; }
    varr = cJSON_Parse(vj->valuestring);
    if (!cJSON_IsArray(varr) || cJSON_GetArraySize(varr) != cfg.vocab_size) {
        errmsg_set(err, errlen, "%s: \"vocab\" must be a JSON array of %d strings (vocab_size)", path, cfg.vocab_size);
        goto done;
    }
    vocab = calloc((size_t)cfg.vocab_size, sizeof(char *));
    if (!vocab) { errmsg_set(err, errlen, "out of memory reading %s", path); goto done; }
    for (const cJSON *it = varr->child; it; it = it->next) {
        if (!cJSON_IsString(it)) { errmsg_set(err, errlen, "%s: vocab entry %d is not a string", path, n_vocab); goto done; }
        vocab[n_vocab] = strdup(it->valuestring);
        if (!vocab[n_vocab]) { errmsg_set(err, errlen, "out of memory reading %s", path); goto done; }
        n_vocab++;
    }

    /* Every expected tensor: dtype, shape, offsets. */
    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(&cfg, NULL, tab, MODEL_MAX_TENSORS);
    Span spans[MODEL_MAX_TENSORS];
    for (int t = 0; t < nt; t++) {
        const ModelParam *p = &tab[t];
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, p->name);
        if (!cJSON_IsObject(o)) { errmsg_set(err, errlen, "%s: tensor \"%s\" is missing", path, p->name); goto done; }
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(o, "dtype");
        if (!cJSON_IsString(dt) || strcmp(dt->valuestring, "F32")) {
            errmsg_set(err, errlen, "%s: tensor \"%s\" has dtype %s, expected F32", path, p->name,
                   cJSON_IsString(dt) ? dt->valuestring : "(none)");
            goto done;
        }
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
            goto done;
        }
        const cJSON *of = cJSON_GetObjectItemCaseSensitive(o, "data_offsets");
        uint64_t b0, b1;
        if (!cJSON_IsArray(of) || cJSON_GetArraySize(of) != 2 ||
            json_uint(cJSON_GetArrayItem(of, 0), 9007199254740992.0, &b0) ||
            json_uint(cJSON_GetArrayItem(of, 1), 9007199254740992.0, &b1)) {
            errmsg_set(err, errlen, "%s: tensor \"%s\" has no valid data_offsets [begin, end]", path, p->name);
            goto done;
        }
        if (b1 < b0 || b1 > data_size) {
            errmsg_set(err, errlen, "%s: tensor \"%s\" data_offsets [%llu, %llu] lie outside the %llu data bytes "
                   "(truncated or damaged file)", path, p->name, (unsigned long long)b0,
                   (unsigned long long)b1, (unsigned long long)data_size);
            goto done;
        }
        if (b1 - b0 != 4 * (uint64_t)p->numel) {
            errmsg_set(err, errlen, "%s: tensor \"%s\" holds %llu bytes, its shape needs %llu", path, p->name,
                   (unsigned long long)(b1 - b0), (unsigned long long)(4 * (uint64_t)p->numel));
            goto done;
        }
        spans[t].begin = b0; spans[t].end = b1; spans[t].name = p->name;
    }
    for (const cJSON *it = root->child; it; it = it->next) {
        if (!it->string || !strcmp(it->string, "__metadata__")) continue;
        int known = 0;
        for (int t = 0; t < nt && !known; t++) known = !strcmp(it->string, tab[t].name);
        if (!known) {
            errmsg_set(err, errlen, "%s: unexpected tensor \"%s\" for a %s model (wrong config or damaged file)",
                   path, it->string, model_arch_name(cfg.arch));
            goto done;
        }
    }
    qsort(spans, (size_t)nt, sizeof spans[0], cmp_span);
    for (int t = 1; t < nt; t++)
        if (spans[t].begin < spans[t - 1].end && spans[t].end > spans[t].begin) {
            errmsg_set(err, errlen, "%s: tensors \"%s\" and \"%s\" overlap in the file", path,
                   spans[t - 1].name, spans[t].name);
            goto done;
        }

    /* Trusted now: allocate and read. */
    if (model_alloc(out, &cfg)) {
        errmsg_set(err, errlen, "%s: %s", path, out->err);
        goto done;
    }
    model_param_table(&cfg, out->params_memory, tab, MODEL_MAX_TENSORS);
    for (int t = 0; t < nt; t++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, tab[t].name);
        uint64_t b0;
        json_uint(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "data_offsets"), 0), 9007199254740992.0, &b0);
        if (fseeko(f, (off_t)(8 + hlen + b0), SEEK_SET) != 0 ||
            fread(tab[t].ptr, sizeof(float), tab[t].numel, f) != tab[t].numel) {
            errmsg_set(err, errlen, "%s: cannot read tensor \"%s\"", path, tab[t].name);
            goto done;
        }
        swap_floats_if_big_endian(tab[t].ptr, tab[t].numel);
        for (size_t i = 0; i < tab[t].numel; i++)
            if (!isfinite(tab[t].ptr[i])) {
                errmsg_set(err, errlen, "%s: tensor \"%s\" holds a non-finite value (NaN or inf) at index %zu "
                       "(training diverged or the file is damaged)", path, tab[t].name, i);
                goto done;
            }
    }
    if (metadata_json) {
        *metadata_json = cJSON_PrintUnformatted(meta);
        if (!*metadata_json) { errmsg_set(err, errlen, "out of memory reading %s", path); goto done; }
    }
    rc = 0;
done:
    if (f) fclose(f);
    cJSON_Delete(root);
    cJSON_Delete(varr);
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
