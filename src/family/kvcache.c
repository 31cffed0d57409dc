/* kvcache.c — see kvcache.h. */
#include "family/kvcache.h"
#include "core/errmsg.h"
#include <string.h>

static int is_llama(HfFileFamily fam) {
    return fam == HF_FILE_LLAMA || fam == HF_FILE_LLAMA2C;
}

int kv_cache_init(KvCache *kv, const HfFile *f, int n_ctx, char *err, size_t errlen) {
    memset(kv, 0, sizeof *kv);
    kv->family = f->family;
    if (is_llama(f->family)) return llama_cache_init(&kv->llama, &f->llama.m, n_ctx, err, errlen);
    if (f->family == HF_FILE_GPT2) return hf_cache_init(&kv->gpt2, &f->m, n_ctx, err, errlen);
    return errmsg_set(err, errlen, "%s reads a whole sentence at once; generation needs a decoder (GPT-2, the Llama "
                      "family, a llama2.c checkpoint)", hf_file_family_name(f));
}

int kv_cache_step(KvCache *kv, HfFile *f, int id, float *rows, float *logits, char *err, size_t errlen) {
    if (is_llama(kv->family)) return llama_model_step(&f->llama.m, &kv->llama, id, rows, logits, err, errlen);
    return hf_model_step(&f->m, &kv->gpt2, id, rows, logits, err, errlen);
}

int kv_cache_length(const KvCache *kv) {
    return is_llama(kv->family) ? kv->llama.T : kv->gpt2.T;
}

void kv_cache_bytes(const HfFile *f, size_t *with_model, size_t *one_per_head) {
    HfShape s = hf_file_shape(f);
    size_t per_head = 2 * (size_t)s.n_layer * (size_t)s.head_dim * sizeof(float);
    *with_model = per_head * (size_t)s.n_kv_head;
    *one_per_head = per_head * (size_t)s.n_head;
}

void kv_cache_free(KvCache *kv) {
    if (!kv) return;
    llama_cache_free(&kv->llama);
    hf_cache_free(&kv->gpt2);
}
