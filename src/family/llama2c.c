/* llama2c.c — see llama2c.h. */
#include "family/llama2c.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/sizes.h"
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
static int read_header(StackConfig *c, const int32_t h[7], const char *path, char *err, size_t errlen) {
    static const char *name[7] = {"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"};
    if ((uint32_t)h[0] == LLAMA2C_MAGIC)
        return errmsg_set(err, errlen, "%s is a newer llama2.c export (magic \"ak42\"); attnviz reads the legacy "
                          "version 0 (export.py --version 0)", path);
    for (int i = 0; i < 7; i++)
        if (i == 5 ? h[i] == 0 || h[i] == INT32_MIN : h[i] <= 0)
            return errmsg_set(err, errlen, "%s: header field %s must be %s (is this a llama2.c checkpoint?)", path,
                              name[i], i == 5 ? "non-zero" : "positive");
    if (h[0] % h[3])
        return errmsg_set(err, errlen, "%s: header dim is not a multiple of n_heads (is this a llama2.c checkpoint?)",
                          path);
    if (h[4] > h[3] || h[3] % h[4])
        return errmsg_set(err, errlen, "%s: header n_heads is not a multiple of n_kv_heads (is this a llama2.c "
                          "checkpoint?)", path);
    memset(c, 0, sizeof *c);
    c->family = STACK_LLAMA2C;
    snprintf(c->arch_name, sizeof c->arch_name, "llama2.c");
    snprintf(c->act_name, sizeof c->act_name, "silu");
    c->d_model = h[0]; c->d_ff = h[1]; c->n_layer = h[2]; c->n_head = h[3]; c->n_kv_head = h[4];
    c->n_vocab = h[5] < 0 ? -h[5] : h[5]; c->n_pos = h[6];
    c->head_dim = h[0] / h[3];
    c->tie_embeddings = h[5] > 0;
    c->norm_eps = 1e-5f;
    c->norm = STACK_NORM_RMS;
    c->act = STACK_ACT_SILU;
    c->gated = c->causal = c->rotary = 1;
    c->embed_scale = 1.0f;
    c->attn_scale = 1.0f / sqrtf((float)c->head_dim);
    c->rope_layout = STACK_ROPE_PAIRS;
    c->rope[STACK_LAYER_FULL].theta = c->rope[STACK_LAYER_SLIDING].theta = 10000.0;
    c->bos_id = 1;
    return stack_config_check(c, path, err, errlen);
}

/* Floats of the file after the header, every array in order, into *n:
 * 1, or 0 when the count does not fit a size_t. */
static int floats_in_file(const StackConfig *c, size_t *n) {
    size_t C = (size_t)c->d_model, F = (size_t)c->d_ff, L = (size_t)c->n_layer, V = (size_t)c->n_vocab;
    size_t KD = (size_t)c->n_kv_head * c->head_dim, emb, norms, attn, kv, ffn, rope;
    return size_mul(&emb, V, C) && size_mul(&norms, 2 * L + 1, C) && size_mul3(&attn, 2 * L, C, C) &&
           size_mul3(&kv, 2 * L, KD, C) && size_mul3(&ffn, 3 * L, F, C) &&
           size_mul(&rope, (size_t)c->n_pos, (size_t)c->head_dim) && size_add(n, emb, norms) && size_add(n, *n, attn) &&
           size_add(n, *n, kv) && size_add(n, *n, ffn) && size_add(n, *n, rope) &&
           (c->tie_embeddings || size_add(n, *n, emb)) && *n <= (SIZE_MAX - LLAMA2C_HEADER) / 4;
}

/* Points every weight of m into the mapped floats p (n of them), each
 * linear weight (out, in) as stored. */
static void point_weights(StackModel *m, const float *p, size_t n) {
    const StackConfig *c = &m->c;
    size_t C = (size_t)c->d_model, F = (size_t)c->d_ff, L = (size_t)c->n_layer, V = (size_t)c->n_vocab;
    size_t KD = (size_t)c->n_kv_head * c->head_dim;
    const float *emb = p, *rms_att = emb + V * C, *wq = rms_att + L * C, *wk = wq + L * C * C, *wv = wk + L * KD * C;
    const float *wo = wv + L * KD * C, *rms_ffn = wo + L * C * C, *w1 = rms_ffn + L * C, *w2 = w1 + L * F * C;
    const float *w3 = w2 + L * C * F, *rms_final = w3 + L * F * C, *freq = rms_final + C;
    const float *wcls = freq + (size_t)c->n_pos * c->head_dim;
    m->w.embed = emb;
    m->w.final_norm.w = rms_final;
    m->w.out = (StackLinear){c->tie_embeddings ? emb : wcls, NULL, STACK_OUT_IN};
    for (size_t l = 0; l < L; l++) {
        StackLayer *y = &m->w.layer[l];
        y->norm1.w = rms_att + l * C;
        y->q = (StackLinear){wq + l * C * C, NULL, STACK_OUT_IN};
        y->k = (StackLinear){wk + l * KD * C, NULL, STACK_OUT_IN};
        y->v = (StackLinear){wv + l * KD * C, NULL, STACK_OUT_IN};
        y->o = (StackLinear){wo + l * C * C, NULL, STACK_OUT_IN};
        y->norm2.w = rms_ffn + l * C;
        y->gate = (StackLinear){w1 + l * F * C, NULL, STACK_OUT_IN};
        y->down = (StackLinear){w2 + l * C * F, NULL, STACK_OUT_IN};
        y->up = (StackLinear){w3 + l * F * C, NULL, STACK_OUT_IN};
    }
    m->n_params = n - (size_t)c->n_pos * c->head_dim;
}

int llama2c_load(StackModel *m, const char *path, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    snprintf(m->source, sizeof m->source, "%s", path);
    int fd = file_open_regular(path, err, errlen);   /* a FIFO or device never hangs the open */
    if (fd < 0) return -1;
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
    size_t n;
    if (!floats_in_file(&m->c, &n)) {
        errmsg_set(err, errlen, "%s: the header's sizes overflow (is this a llama2.c checkpoint?)", path);
        goto done;
    }
    double want = LLAMA2C_HEADER + 4.0 * (double)n;
    if ((double)sb.st_size != want) {   /* the header's numbers are not echoed: the file may be anything */
        errmsg_set(err, errlen, "%s is %lld bytes; the sizes its header gives need %s%s", path, (long long)sb.st_size,
                   (double)sb.st_size < want ? "more (truncated, or not a llama2.c checkpoint)" : "fewer",
                   (double)sb.st_size < want ? "" : " (not a llama2.c checkpoint, or extra bytes at its end)");
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
    point_weights(m, (const float *)((const char *)m->map + LLAMA2C_HEADER), n);
    snprintf(m->dtype, sizeof m->dtype, "F32");
    rc = 0;
done:
    close(fd);
    if (rc != 0) stack_model_free(m);
    return rc;
}
