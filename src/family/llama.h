/* llama.h — Llama-architecture decoders (Llama, Mistral, Qwen2, Qwen3,
 * Gemma 3, and llama2.c checkpoints), for inference only: load the weights,
 * run the forward pass with every head through the instrumented attention
 * (core/attention.h), record each head in a Trace as it is computed, and give
 * the logits the heads lead to.
 *
 * Weights.  From a Hugging Face folder (llama_model_load): model.safetensors
 * or its shards, F32, F16 or BF16 (kept as F32), names with or without the
 * "model." prefix:
 *   embed_tokens.weight (V, C); norm.weight (C); lm_head.weight (V, C) unless
 *   tie_word_embeddings; per layer layers.L.:
 *   self_attn.q_proj (H·D, C), k_proj, v_proj (Hkv·D, C), o_proj (C, H·D)
 *     [.bias when the config says], self_attn.q_norm / k_norm (D),
 *   input_layernorm, post_attention_layernorm (C) [Gemma 3 also
 *     pre_feedforward_layernorm, post_feedforward_layernorm],
 *   mlp.gate_proj, up_proj (F, C), down_proj (C, F).
 * Every linear weight stays as nn.Linear stores it, (out, in), so float32
 * tensors are used in place from the read-only mapped file (no copy);
 * others (F16, BF16, unaligned F32) are converted into the model's block when
 * first needed, one layer at a time (llama_model_ready_layer): loading reads
 * only the headers, a forward pass converts the layers it runs, the token
 * embedding is read row by row for the tokens given, and the output
 * embedding is converted on the first llama_model_logits.  A field of
 * LlamaWeights is NULL until its group is ready.  llama2.c checkpoints
 * (family/llama2c.h) fill the same struct, pointing into their mapped file.
 *
 * Forward pass (B = 1, T tokens, causal):
 *   x = embed[id] · embed_scale
 *   per layer:  h = norm(x);  q = h·Wqᵀ (+bq), k, v likewise;
 *               q, k per head: [q_norm / k_norm], then RoPE at position t;
 *               every query head h attends with key/value head h / (H/Hkv)
 *               (causal, or the sliding window of the layer), scale attn_scale;
 *               a = heads·Woᵀ (+bo);  [Gemma 3: a = post_attention_norm(a)];  x += a
 *               h = norm(x);  f = down(act(gate(h)) · up(h));  [Gemma 3: post norm];  x += f
 *   x = norm(x);  logits = x·Woutᵀ  [Gemma 3: soft-capped when configured]
 * norm(x) = x / √(mean(x²) + eps) · w   (Gemma 3: · (1 + w)), sums in double.
 * RoPE rotates the pairs (i, i + D/2) with frequency inv_freq[i] (Hugging
 * Face), or (2i, 2i + 1) (llama2.c); llama_config.h says how inv_freq is made.
 * Maps: "decoder.L.masked_self", every query head, with the step matrices of
 * the heads asked for.
 *
 * Letters: T tokens, C d_model, H query heads, Hkv key/value heads, D head
 * size, F d_ff, V vocabulary, L layers.
 * Errors: -1 and one line in err.  llama_model_free accepts a zeroed or
 * half-loaded model. */
#ifndef ATTNVIZ_LLAMA_H
#define ATTNVIZ_LLAMA_H
#include <stddef.h>
#include "family/llama_config.h"
#include "core/safetensors.h"
#include "trace/trace.h"

/* One layer's weights; NULL where the family has none. */
typedef struct {
    const float *attn_norm;      /* (C) input_layernorm                          */
    const float *wq, *bq;        /* (H·D, C), (H·D)                              */
    const float *wk, *bk;        /* (Hkv·D, C), (Hkv·D)                          */
    const float *wv, *bv;        /* (Hkv·D, C), (Hkv·D)                          */
    const float *wo, *bo;        /* (C, H·D), (C)                                */
    const float *q_norm, *k_norm;/* (D) per-head norms (Qwen3, Gemma 3)          */
    const float *post_attn_norm; /* (C) Gemma 3: on the attention's output       */
    const float *ffn_norm;       /* (C) before the feed-forward (Llama's post_attention_layernorm) */
    const float *post_ffn_norm;  /* (C) Gemma 3: on the feed-forward's output    */
    const float *w_gate, *b_gate;/* (F, C), (F)  llama2.c's w1                   */
    const float *w_up, *b_up;    /* (F, C), (F)  llama2.c's w3                   */
    const float *w_down, *b_down;/* (C, F), (C)  llama2.c's w2                   */
} LlamaLayer;

typedef struct {
    const float *embed;          /* (V, C) token embedding                       */
    const float *final_norm;     /* (C)                                          */
    const float *out;            /* (V, C) output embedding (= embed when tied)  */
    LlamaLayer *layer;           /* (L) */
} LlamaWeights;

/* Activations of the last forward pass.  q and k before and after RoPE are
 * kept for every layer (qk_layers = L) when the pass records steps or
 * LlamaModel.keep_qk asks; otherwise one layer's room is used again by each
 * layer (qk_layers = 1: a 512-token SmolLM2 pass touched 94 MB less). */
typedef struct {
    int T;
    int qk_layers;   /* L or 1: layer l's q, k are at index (qk_layers > 1 ? l : 0) */
    float *x;        /* (T, C) the residual stream; after the pass, final-normed     */
    float *q_pre;    /* (qk_layers, T, H·D)   queries before RoPE (after bias and q_norm) */
    float *q_rot;    /* (qk_layers, T, H·D)   queries after RoPE, as attention used them  */
    float *k_pre;    /* (qk_layers, T, Hkv·D) keys before RoPE (after bias and k_norm)    */
    float *k_rot;    /* (qk_layers, T, Hkv·D) keys after RoPE                            */
    float *v;        /* (T, Hkv·D) values of the current layer                       */
    float *h;        /* (T, C) normed input of a sublayer                            */
    float *att;      /* (T, H·D) the heads' outputs side by side                     */
    float *y;        /* (T, C) a sublayer's output                                   */
    float *gate;     /* (T, F) */
    float *up;       /* (T, F) */
    float *wts;      /* (T, T) one head's weights                                    */
    float *cos, *sin;/* (2, T, D/2) RoPE of [LLAMA_LAYER_FULL] and [_SLIDING] layers  */
    unsigned char *mask;  /* (2, T, T) [LLAMA_LAYER_FULL] causal, [_SLIDING] window  */
    float *block;    /* the one allocation the floats above are cut from             */
} LlamaActs;

/* A tensor waiting to be converted: where it goes, which group it belongs
 * to (a layer 0..L-1, LLAMA_GROUP_FINAL(L) for the final norm,
 * LLAMA_GROUP_OUT(L) for the embeddings). */
typedef struct {
    const float **field;         /* the LlamaWeights field it fills              */
    const StTensor *t;           /* in LlamaModel.st                             */
    float *dst;                  /* its place in LlamaModel.params               */
    int group;
} LlamaPending;
#define LLAMA_GROUP_FINAL(L) (L)
#define LLAMA_GROUP_OUT(L) ((L) + 1)

typedef struct {
    LlamaConfig c;
    LlamaWeights w;
    LlamaPending *pending;  /* (n_pending) tensors converted when first needed  */
    int n_pending;
    unsigned char *ready;   /* (L + 2) 1 when a group's tensors are all in place */
    float *params;          /* converted weights (F16/BF16, or unaligned F32)   */
    SafeTensors st;         /* a folder's files, mapped while the model lives    */
    void *map;              /* a llama2.c file mapped read-only, or NULL         */
    size_t map_len;
    size_t n_params;        /* parameters as the checkpoint holds them           */
    char dtype[12];         /* of the token embedding as stored                  */
    char source[4096];      /* the folder or file, for messages                  */
    LlamaActs a;
    int keep_qk;            /* 1: every layer's q and k stay in a after a pass (tests/llama_dump.c) */
} LlamaModel;

/* Which heads keep their step matrices (scores, scaled, masked, output) in
 * the trace: every head (all = 1), or the one head (layer, head). */
typedef struct {
    int all;
    int layer, head;
    int upto;   /* stop after `layer`, m->a as the last whole pass left it (hf_model.h) */
} LlamaSteps;

/* Reads DIR/config.json and the weights of DIR.  0, or -1 with err (the
 * model is then freed). */
int llama_model_load(LlamaModel *m, const char *dir, char *err, size_t errlen);

/* Forward pass of ids (T of them, 1 <= T <= n_pos).  When tr is given, every
 * head's weights are added as maps with `tokens` (T strings) as queries and
 * keys, and the steps of the heads `steps` names (NULL: none).  Fills m->a.
 * 0, or -1 with err. */
int llama_model_forward(LlamaModel *m, const int *ids, int T, Trace *tr, const char *const *tokens,
                        const LlamaSteps *steps, char *err, size_t errlen);

/* The logits (V) of the token after position t of the last forward pass.
 * 0, or -1 with err. */
int llama_model_logits(LlamaModel *m, int t, float *logits, char *err, size_t errlen);

/* Converts the tensors of group g (a layer, LLAMA_GROUP_FINAL or
 * LLAMA_GROUP_OUT) that are not yet in place; a no-op once done (and for
 * llama2.c files and mapped F32 folders).  Every function that reads a
 * layer's weights calls it first.  0, or -1 with err. */
int llama_model_ready_layer(LlamaModel *m, int g, char *err, size_t errlen);

/* A KV cache for generation: the keys (after RoPE) and values of every
 * position read so far, per layer, so each new token computes only its own
 * query row (llama_model_step).  Ownership: llama_cache_init allocates,
 * llama_cache_free releases (accepts a zeroed cache). */
typedef struct {
    int n_ctx;       /* positions it has room for (<= n_pos)                 */
    int T;           /* positions cached so far                              */
    float *k, *v;    /* (L, n_ctx, Hkv·D) keys after RoPE, values            */
    float *buf;      /* one token's scratch: x, h, q, att, y (C or H·D each),
                        gate, up (F), cos, sin (D/2)                          */
    unsigned char *mask;  /* (n_ctx) the sliding window's row                 */
} LlamaCache;

/* Room for n_ctx positions (1 <= n_ctx <= n_pos).  0, or -1 with err. */
int llama_cache_init(LlamaCache *kv, const LlamaModel *m, int n_ctx, char *err, size_t errlen);

/* Reads token id at position kv->T (then kv->T grows by one): the same
 * arithmetic as llama_model_forward's row of that position, computed from the
 * cached keys and values.  rows (L, H, n_ctx): row (l, h) gets the new query's
 * weights over keys 0..kv->T (the rest untouched); NULL: not wanted.
 * logits (V): the next token's.  0, or -1 with err (cache full, bad id). */
int llama_model_step(LlamaModel *m, LlamaCache *kv, int id, float *rows, float *logits, char *err,
                     size_t errlen);

void llama_cache_free(LlamaCache *kv);

/* {"family": …, "n_heads": …, "n_kv_heads": …, "head_dim": …, …} for the trace. */
int llama_model_json(const LlamaModel *m, char *buf, size_t n);

void llama_model_free(LlamaModel *m);

#endif
