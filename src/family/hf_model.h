/* hf_model.h — GPT-2 and BERT from a Hugging Face folder, for inference only:
 * load the weights (safetensors.h), run the forward pass with every head
 * through the instrumented attention (core/attention.h), record each head in a
 * Trace as it is computed, and give the logits the heads lead to.
 *
 * Weights.  Names are read with or without the "transformer." / "bert." prefix,
 * LayerNorm parameters as weight/bias or gamma/beta, F32, F16 or BF16 (kept as
 * F32).  Every linear weight is kept as (in, out), the lesson's x·W + b
 * (tensor.h): GPT-2's Conv1D weights are stored so already, BERT's nn.Linear
 * weights (out, in) are transposed on load, and BERT's query, key and value are
 * put side by side like GPT-2's c_attn, so both families have one (C, 3C) qkv.
 * Buffers (attn.bias, attn.masked_bias, position_ids), the pooler and heads not
 * used are ignored.  The output embedding is tied to the word embedding; BERT's
 * masked-LM head (cls.predictions.*) is read when present (has_mlm).  Every
 * tensor a family reads is one row of its table in hf_model.c (name, per-layer
 * pattern, stored shape, where it goes), walked by one loader.
 *
 * Forward passes (B = 1, T tokens):
 *   GPT-2  x = wte[id] + wpe[t]; per layer (pre-norm)
 *            x += proj(attn(ln_1(x)), causal);  x += mlp(ln_2(x)), mlp = fc2(gelu_new(fc(·)))
 *          final ln_f; logits = x · wteᵀ
 *   BERT   x = LayerNorm(wte[id] + wpe[t] + wtt[0]); per layer (post-norm)
 *            x = LN(x + proj(attn(x), padding mask));  x = LN(x + fc2(gelu(fc(x))))
 *          MLM logits = LN(gelu(x·Wd + bd)) · wteᵀ + bias
 * Maps: "decoder.L.masked_self" (GPT-2) and "encoder.L.self" (BERT), every head,
 * with the step matrices when asked.
 *
 * Letters: T tokens, C d_model, H heads, D = C/H, F d_ff, V vocabulary, L layers.
 * Errors: -1 and one line in err.  hf_model_free accepts a zeroed or
 * half-loaded model. */
#ifndef ATTNVIZ_HF_MODEL_H
#define ATTNVIZ_HF_MODEL_H
#include <stddef.h>
#include "family/hf_config.h"
#include "core/safetensors.h"
#include "trace/trace.h"

/* One layer's weights. */
typedef struct {
    const float *ln1_w, *ln1_b;  /* (C) GPT-2 ln_1 / BERT attention.output.LayerNorm */
    const float *qkv_w;          /* (C, 3C)  q | k | v side by side                  */
    const float *qkv_b;          /* (3C)                                              */
    const float *proj_w;         /* (C, C)   attention output projection             */
    const float *proj_b;         /* (C)                                               */
    const float *ln2_w, *ln2_b;  /* (C) GPT-2 ln_2 / BERT output.LayerNorm           */
    const float *fc_w;           /* (C, F) */
    const float *fc_b;           /* (F)    */
    const float *fc2_w;          /* (F, C) */
    const float *fc2_b;          /* (C)    */
} HfLayer;

/* Every weight points into the model's block (converted, transposed or
 * joined on load) or, for a float32 tensor used as stored, straight into the
 * file mapped read-only: GPT-2's F32 weights are not copied at all. */
typedef struct {
    const float *wte;            /* (V, C)  word embedding, also the output embedding */
    const float *wpe;            /* (P, C)  learned positions                         */
    const float *wtt;            /* (n_type, C) BERT token types, or NULL             */
    const float *emb_ln_w, *emb_ln_b;  /* (C) BERT's embedding LayerNorm              */
    const float *lnf_w, *lnf_b;  /* (C) GPT-2 ln_f                                    */
    const float *mlm_w;          /* (C, C) BERT cls.predictions.transform.dense       */
    const float *mlm_b;          /* (C)     */
    const float *mlm_ln_w, *mlm_ln_b;  /* (C) */
    const float *mlm_bias;       /* (V) the decoder's bias */
    HfLayer *layer;              /* (L) */
} HfWeights;

typedef struct {
    HfConfig c;
    HfWeights w;
    float *params;          /* the block: room for every weight, touched only by copies */
    SafeTensors st;         /* the files, mapped while the model lives      */
    size_t n_params;        /* parameters counted as the checkpoint has them */
    char dtype[12];         /* dtype of the word embedding as stored         */
    int has_mlm;            /* BERT: the masked-LM head was found            */
    /* activations of the last forward pass, (T, …) */
    int T;
    float *x;               /* (T, C) final hidden states (after ln_f for GPT-2) */
    float *buf;             /* scratch: (T, 3C) + (T, C) + (T, F) + (T, C) + (T, T) */
    char err[512];
} HfModel;

/* Reads DIR/config.json and the weights of DIR (model.safetensors or its
 * shards).  0, or -1 with err (the model is then freed). */
int hf_model_load(HfModel *m, const char *dir, char *err, size_t errlen);

/* Which heads keep their step matrices (scores, scaled, masked, output) in
 * the trace: every head (all = 1), or the one head (layer, head).  upto = 1
 * (with one head) stops after that layer and leaves the model's states as the
 * last whole pass left them (the logits stay that pass's). */
typedef struct {
    int all;
    int layer, head;
    int upto;
} HfSteps;

/* Forward pass of ids (T of them, T <= n_pos), the last T - n_real of them
 * padding: the padding mask hides them as keys from every query (a batch
 * padded to one length, one item at a time).  When tr is given, every head's
 * weights are added as maps, with `tokens` (T strings) as queries and keys, and
 * the steps of the heads `steps` names (NULL: none).  0, or -1 with err. */
int hf_model_forward(HfModel *m, const int *ids, int T, int n_real, Trace *tr, const char *const *tokens,
                     const HfSteps *steps, char *err, size_t errlen);

/* The logits (V) at position t of the last forward pass: GPT-2's next token,
 * BERT's masked-LM prediction (requires has_mlm).  0, or -1 with err. */
int hf_model_logits(HfModel *m, int t, float *logits, char *err, size_t errlen);

/* A KV cache for GPT-2's generation: every layer's keys and values of the
 * positions read so far, so each new token computes only its own query row
 * (hf_model_step).  Ownership: hf_cache_init allocates, hf_cache_free
 * releases (accepts a zeroed cache). */
typedef struct {
    int n_ctx;       /* positions it has room for (<= n_pos)   */
    int T;           /* positions cached so far                */
    float *k, *v;    /* (L, n_ctx, C) keys, values, heads side by side */
    float *buf;      /* one token's scratch: x, y, att (C), qkv (3C), ff (F), wts (n_ctx) */
} HfCache;

/* Room for n_ctx positions of a GPT-2 model (BERT reads a whole sentence at
 * once: refused).  0, or -1 with err. */
int hf_cache_init(HfCache *kv, const HfModel *m, int n_ctx, char *err, size_t errlen);

/* Reads token id at position kv->T (then kv->T grows by one), the same
 * arithmetic as hf_model_forward's row of that position.  rows (L, H, n_ctx):
 * row (l, h) gets the new query's weights over keys 0..kv->T; NULL: not
 * wanted.  logits (V): the next token's, or NULL.  0, or -1 with err. */
int hf_model_step(const HfModel *m, HfCache *kv, int id, float *rows, float *logits, char *err, size_t errlen);

void hf_cache_free(HfCache *kv);

/* {"family": …, "d_model": …, "n_heads": …, "d_k": …, …} for the trace. */
int hf_model_json(const HfModel *m, char *buf, size_t n);

void hf_model_free(HfModel *m);

#endif
