/* llama2c.c — see llama2c.h. */
#include "family/llama2c.h"
#include "core/errmsg.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LLAMA2C_HEADER 28
#define LLAMA2C_MAGIC 0x616b3432u   /* "ak42": the version 1 and 2 exports */

/* The header's seven numbers, checked; the config they make. */
static int read_header(LlamaConfig *c, const int32_t h[7], const char *path, char *err, size_t errlen) {
    static const char *name[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
    if ((uint32_t)h[0] == LLAMA2C_MAGIC)
        return errmsg_set(err, errlen, "%s is a llama2.c version %d export (magic \"ak42\"); attnviz reads the legacy "
                          "version 0 (export.py --version 0)", path, h[1]);
    for (int i = 0; i < 7; i++)
        if (i == 5 ? h[i] == 0 || h[i] == INT32_MIN : h[i] <= 0)
            return errmsg_set(err, errlen, "%s: header field %s is %d; it must be %s (is this a llama2.c checkpoint?)",
                              path, name[i], (int)h[i], i == 5 ? "non-zero" : "positive");
    if (h[0] % h[3])
        return errmsg_set(err, errlen, "%s: header dim %d is not a multiple of n_heads %d", path, (int)h[0], (int)h[3]);
    if (h[4] > h[3] || h[3] % h[4])
        return errmsg_set(err, errlen, "%s: header n_heads %d is not a multiple of n_kv_heads %d", path, (int)h[3],
                          (int)h[4]);
    memset(c, 0, sizeof *c);
    c->arch = LLAMA_ARCH_LLAMA2C;
    snprintf(c->arch_name, sizeof c->arch_name, "llama2.c");
    snprintf(c->act_name, sizeof c->act_name, "silu");
    c->d_model = h[0]; c->d_ff = h[1]; c->n_layer = h[2]; c->n_head = h[3]; c->n_kv_head = h[4];
    c->n_vocab = h[5] < 0 ? -h[5] : h[5]; c->n_pos = h[6];
    c->head_dim = h[0] / h[3];
    c->tie_embeddings = h[5] > 0;
    c->rms_eps = 1e-5f;
    c->act = LLAMA_ACT_SILU;
    c->embed_scale = 1.0f;
    c->attn_scale = 1.0f / sqrtf((float)c->head_dim);
    c->rope_layout = LLAMA_ROPE_PAIRS;
    c->rope[LLAMA_LAYER_FULL].theta = c->rope[LLAMA_LAYER_SLIDING].theta = 10000.0;
    c->bos_id = 1;
    return llama_config_check(c, path, err, errlen);
}

/* Floats of the file after the header: every array in order. */
static double floats_in_file(const LlamaConfig *c) {
    double C = c->d_model, F = c->d_ff, L = c->n_layer, V = c->n_vocab, KD = (double)c->n_kv_head * c->head_dim;
    return V * C + L * C + L * C * C + 2 * L * KD * C + L * C * C + L * C + 3 * L * F * C + C +
           (double)c->n_pos * c->head_dim + (c->tie_embeddings ? 0 : V * C);
}

/* Points every weight of m into the mapped floats p. */
static void point_weights(LlamaModel *m, const float *p) {
    const LlamaConfig *c = &m->c;
    size_t C = (size_t)c->d_model, F = (size_t)c->d_ff, L = (size_t)c->n_layer, V = (size_t)c->n_vocab;
    size_t KD = (size_t)c->n_kv_head * c->head_dim;
    const float *emb = p, *rms_att = emb + V * C, *wq = rms_att + L * C, *wk = wq + L * C * C, *wv = wk + L * KD * C;
    const float *wo = wv + L * KD * C, *rms_ffn = wo + L * C * C, *w1 = rms_ffn + L * C, *w2 = w1 + L * F * C;
    const float *w3 = w2 + L * C * F, *rms_final = w3 + L * F * C, *freq = rms_final + C;
    const float *wcls = freq + (size_t)c->n_pos * c->head_dim;
    m->w.embed = emb;
    m->w.final_norm = rms_final;
    m->w.out = c->tie_embeddings ? emb : wcls;
    for (size_t l = 0; l < L; l++) {
        LlamaLayer *y = &m->w.layer[l];
        y->attn_norm = rms_att + l * C;
        y->wq = wq + l * C * C;
        y->wk = wk + l * KD * C;
        y->wv = wv + l * KD * C;
        y->wo = wo + l * C * C;
        y->ffn_norm = rms_ffn + l * C;
        y->w_gate = w1 + l * F * C;
        y->w_down = w2 + l * C * F;
        y->w_up = w3 + l * F * C;
    }
    m->n_params = (size_t)(floats_in_file(c) - (double)c->n_pos * c->head_dim);
}

int llama2c_load(LlamaModel *m, const char *path, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    snprintf(m->source, sizeof m->source, "%s", path);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return errmsg_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
    struct stat sb;
    int32_t h[7];
    int rc = -1;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        errmsg_set(err, errlen, "cannot read %s: not a regular file", path);
        goto done;
    }
    if (sb.st_size < LLAMA2C_HEADER || pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h) {
        errmsg_set(err, errlen, "%s is %lld bytes; a llama2.c checkpoint starts with a %d-byte header", path,
                   (long long)sb.st_size, LLAMA2C_HEADER);
        goto done;
    }
    if (read_header(&m->c, h, path, err, errlen) != 0) goto done;
    double want = LLAMA2C_HEADER + 4 * floats_in_file(&m->c);
    if ((double)sb.st_size != want) {
        errmsg_set(err, errlen, "%s is %lld bytes; a llama2.c checkpoint of dim %d, hidden_dim %d, %d layers, %d/%d heads, "
                   "vocabulary %d (%s), seq_len %d is %.0f bytes%s", path, (long long)sb.st_size, m->c.d_model,
                   m->c.d_ff, m->c.n_layer, m->c.n_head, m->c.n_kv_head, m->c.n_vocab,
                   m->c.tie_embeddings ? "shared classifier" : "own classifier", m->c.n_pos, want,
                   (double)sb.st_size < want ? " (truncated)" : "");
        goto done;
    }
    m->map_len = (size_t)sb.st_size;
    m->map = mmap(NULL, m->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m->map == MAP_FAILED) {
        m->map = NULL;
        errmsg_set(err, errlen, "cannot map %s: %s", path, strerror(errno));
        goto done;
    }
    madvise(m->map, m->map_len, MADV_HUGEPAGE);   /* 2 MB pages, as safetensors_map_f32 says why */
    m->w.layer = calloc((size_t)m->c.n_layer, sizeof *m->w.layer);
    if (!m->w.layer) { errmsg_set(err, errlen, "out of memory"); goto done; }
    point_weights(m, (const float *)((const char *)m->map + LLAMA2C_HEADER));
    snprintf(m->dtype, sizeof m->dtype, "F32");
    rc = 0;
done:
    close(fd);
    if (rc != 0) llama_model_free(m);
    return rc;
}
