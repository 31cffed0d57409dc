/* kvcache.h — generation one token at a time for any decoder of hf_file.h
 * (GPT-2, the Llama family, llama2.c checkpoints): a KV cache holds every
 * layer's keys and values of the positions read so far, so a new token
 * computes only its own query row in every layer and head.
 *
 *   kv_cache_init   room for n_ctx positions of f's model
 *   kv_cache_step   one token in: every head's new weight row, the next logits
 *   kv_cache_bytes  what the keys and values of one position take, with the
 *                   model's key/value heads and as if every query head had
 *                   its own (what grouped-query attention saves)
 *
 * The step is family/stack.h's stack_model_step, one for every decoder: the
 * same arithmetic as the full forward pass's row of that position
 * (tests/test_generate.c checks it within 1e-5), knocked-out heads included.
 * Ownership: KvCache owns its buffers; kv_cache_free accepts a zeroed one.
 * The HfFile is borrowed and must outlive the cache.  Errors: -1 and one line
 * in err. */
#ifndef ATTNVIZ_KVCACHE_H
#define ATTNVIZ_KVCACHE_H
#include <stddef.h>
#include "family/hf_file.h"

typedef struct {
    StackCache c;
} KvCache;

/* 0, or -1 with err (BERT, or n_ctx outside 1..n_pos). */
int kv_cache_init(KvCache *kv, const HfFile *f, int n_ctx, char *err, size_t errlen);

/* Token id at the next position.  rows (L, H, n_ctx) as stack_model_step;
 * logits (V) or NULL.  0, or -1 with err. */
int kv_cache_step(KvCache *kv, HfFile *f, int id, float *rows, float *logits, char *err, size_t errlen);

/* Positions cached so far. */
int kv_cache_length(const KvCache *kv);

/* Bytes of float32 keys and values one position adds, over every layer:
 * *with_model = 2·L·Hkv·D·4 (the model's key/value heads), *one_per_head =
 * 2·L·H·D·4 (a key/value head per query head, no grouping). */
void kv_cache_bytes(const HfFile *f, size_t *with_model, size_t *one_per_head);

void kv_cache_free(KvCache *kv);

#endif
