/* fuzz_safetensors.c — libFuzzer harness for the one safetensors reader and
 * writer (core/safetensors.h) that the checkpoint, the training state and the
 * GPT-2/BERT loaders use: any bytes as a .safetensors file.
 *
 * Opening returns 0 or -1 with a one-line message; every tensor it lists
 * reads (or is refused) without reading outside the file.  What opens is
 * written back (every readable tensor as F32, the metadata as it was) and
 * must read back the same: same names, shapes, bits and metadata, else the
 * harness aborts.  Seeds: tests/fuzz/safetensors/. */
#include "core/safetensors.h"
#include "fuzz_scratch.h"

#define FUZZ_MAX_FLOATS (1u << 16)   /* of one tensor, and of all written back */

/* Writes the readable tensors (values in vals, numel each) and the metadata of
 * st to path, opens it again and checks that it holds the same. */
static void round_trip(const SafeTensors *st, const int *pick, int n, float *const *vals, const char *path) {
    StWriteTensor *w = calloc((size_t)(n ? n : 1), sizeof *w);
    const char **meta = calloc((size_t)(2 * st->n_meta + 1), sizeof *meta);
    if (!w || !meta) abort();
    for (int k = 0; k < n; k++) {
        const StTensor *t = &st->t[pick[k]];
        w[k] = (StWriteTensor){.name = t->name, .dtype = "F32", .ndim = t->ndim, .data = vals[k]};
        memcpy(w[k].shape, t->shape, sizeof t->shape);
    }
    for (int i = 0; i < st->n_meta; i++) { meta[2 * i] = st->meta_key[i]; meta[2 * i + 1] = st->meta_value[i]; }
    char err[512];
    SafeTensors back;
    if (safetensors_write(path, w, n, meta, err, sizeof err) != 0 || safetensors_open(&back, path, err, sizeof err) != 0) {
        fprintf(stderr, "round trip failed: %s\n", err);
        abort();
    }
    if (back.n != n || back.n_meta != st->n_meta) abort();
    for (int i = 0; i < st->n_meta; i++)
        if (strcmp(back.meta_key[i], st->meta_key[i]) || strcmp(back.meta_value[i], st->meta_value[i])) abort();
    for (int k = 0; k < n; k++) {
        const StTensor *a = &st->t[pick[k]], *b = &back.t[k];
        if (strcmp(a->name, b->name) || a->ndim != b->ndim || a->numel != b->numel ||
            memcmp(a->shape, b->shape, sizeof a->shape))
            abort();
        float *x = malloc((b->numel ? b->numel : 1) * sizeof *x);
        if (!x || safetensors_read_f32(&back, b, x, err, sizeof err) != 0) abort();
        if (memcmp(x, vals[k], b->numel * sizeof *x)) abort();
        free(x);
    }
    safetensors_close(&back);
    free(w);
    free(meta);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[600], back[600], err[512];
    fuzz_write("model.safetensors", data, size, path, sizeof path);
    snprintf(back, sizeof back, "%s/back.safetensors", fuzz_scratch());
    SafeTensors st;
    memset(&st, 0, sizeof st);
    if (safetensors_open(&st, path, err, sizeof err) == 0) {
        int *pick = calloc((size_t)st.n + 1, sizeof *pick), n = 0;
        float **vals = calloc((size_t)st.n + 1, sizeof *vals);
        size_t total = 0, ok = pick && vals;
        for (int i = 0; ok && i < st.n; i++) {
            const StTensor *t = &st.t[i];
            if (!safetensors_dtype_size(t->dtype) || t->numel > FUZZ_MAX_FLOATS) continue;
            float *out = malloc((t->numel ? t->numel : 1) * sizeof *out);
            if (!out) continue;
            if (safetensors_read_f32(&st, t, out, err, sizeof err) != 0) {
                /* sizes and offsets are checked at open; an F64 value beyond float32's range only here */
                if (strcmp(t->dtype, "F64") != 0 || !strstr(err, "beyond float32's range")) abort();
                free(out);
                continue;
            }
            (void)safetensors_map_f32(&st, t);
            if (total + t->numel > FUZZ_MAX_FLOATS) { free(out); continue; }
            total += t->numel;
            pick[n] = i;
            vals[n++] = out;
        }
        if (ok) round_trip(&st, pick, n, vals, back);
        for (int k = 0; k < n; k++) free(vals[k]);
        free(pick);
        free(vals);
    }
    safetensors_close(&st);
    return 0;
}
