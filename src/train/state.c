/* state.c — the training state file beside a checkpoint, for --resume (see
 * state.h), written and read through the one safetensors module. */
#include "train/state.h"
#include "core/errmsg.h"
#include "core/safetensors.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int train_state_save(const char *path, const Adam *a, long step, uint64_t seed, long total_steps,
                     char *err, size_t errlen) {
    char s_step[24], s_np[24], s_seed[24], s_total[24], s_t[24];
    snprintf(s_step, sizeof s_step, "%ld", step);
    snprintf(s_np, sizeof s_np, "%zu", a->n);
    snprintf(s_seed, sizeof s_seed, "%llu", (unsigned long long)seed);
    snprintf(s_total, sizeof s_total, "%ld", total_steps);
    snprintf(s_t, sizeof s_t, "%ld", a->t);
    const char *meta[] = {"format", "attnviz-train-state", "version", "1", "step", s_step,
                          "num_params", s_np, "seed", s_seed, "total_steps", s_total,
                          "adam_t", s_t, NULL};
    StWriteTensor t[2] = {
        {.name = "adam.m", .dtype = "F32", .ndim = 1, .shape = {(long)a->n}, .data = a->m},
        {.name = "adam.v", .dtype = "F32", .ndim = 1, .shape = {(long)a->n}, .data = a->v},
    };
    return safetensors_write(path, t, 2, meta, err, errlen);
}

static int meta_long(const SafeTensors *st, const char *key, long *out) {
    const char *s = safetensors_meta(st, key);
    if (!s || !*s) return -1;
    char *end;
    *out = strtol(s, &end, 10);
    return *end || *out < 0 ? -1 : 0;
}

/* Reads moment tensor name (a->n floats) into dst. */
static int read_moments(const SafeTensors *st, const char *path, const char *name, size_t n, float *dst,
                        char *err, size_t errlen) {
    const StTensor *t = safetensors_find(st, name);
    if (!t || strcmp(t->dtype, "F32") || t->numel != n) {
        errmsg_set(err, errlen, "%s: tensor %s missing or not F32 (%zu)", path, name, n);
        return -1;
    }
    return safetensors_read_f32(st, t, dst, err, errlen);
}

int train_state_load(const char *path, Adam *a, long *step, char *err, size_t errlen) {
    SafeTensors st;
    char why[400];
    if (safetensors_open_limit(&st, path, 65536, why, sizeof why)) {
        errmsg_set(err, errlen, "cannot read training state %s (it is written beside the checkpoint): %s", path, why);
        return -1;
    }
    int rc = -1;
    const char *fmt = safetensors_meta(&st, "format"), *ver = safetensors_meta(&st, "version");
    long s = 0, np = 0, t = 0;
    if (!fmt || strcmp(fmt, "attnviz-train-state")) {
        errmsg_set(err, errlen, "%s: not an attnviz training-state file", path);
    } else if (!ver || strcmp(ver, "1")) {
        errmsg_set(err, errlen, "%s: training-state version %s, this attnviz reads 1", path, ver ? ver : "?");
    } else if (meta_long(&st, "step", &s) || meta_long(&st, "num_params", &np) || meta_long(&st, "adam_t", &t)) {
        errmsg_set(err, errlen, "%s: bad metadata", path);
    } else if ((size_t)np != a->n) {
        errmsg_set(err, errlen, "%s holds %ld optimizer values but the model has %zu parameters (state of another model?)",
                   path, np, a->n);
    } else if (!read_moments(&st, path, "adam.m", a->n, a->m, err, errlen) &&
               !read_moments(&st, path, "adam.v", a->n, a->v, err, errlen)) {
        a->t = t;
        *step = s;
        rc = 0;
    }
    safetensors_close(&st);
    return rc;
}
