/* kvcache.c — see kvcache.h. */
#include "family/kvcache.h"
#include <string.h>

int kv_cache_init(KvCache *kv, const HfFile *f, int n_ctx, char *err, size_t errlen) {
    return stack_cache_init(&kv->c, &f->m, n_ctx, err, errlen);
}

int kv_cache_step(KvCache *kv, HfFile *f, int id, float *rows, float *logits, char *err, size_t errlen) {
    return stack_model_step(&f->m, &kv->c, id, rows, logits, err, errlen);
}

int kv_cache_length(const KvCache *kv) { return kv->c.T; }

void kv_cache_bytes(const HfFile *f, size_t *with_model, size_t *one_per_head) {
    HfShape s = hf_file_shape(f);
    size_t per_head = 2 * (size_t)s.n_layer * (size_t)s.head_dim * sizeof(float);
    *with_model = per_head * (size_t)s.n_kv_head;
    *one_per_head = per_head * (size_t)s.n_head;
}

void kv_cache_free(KvCache *kv) {
    if (kv) stack_cache_free(&kv->c);
}
