/* stack.h — one configurable Transformer stack for every foreign family
 * (GPT-2, BERT, Llama, Mistral, Qwen2, Qwen3, Gemma 3, llama2.c checkpoints),
 * for inference only: load the weights, run the forward pass with every head
 * through the instrumented attention (core/attention.h), record each head in
 * a Trace as it is computed, give the logits, step one token at a time with a
 * KV cache, and knock heads out.  The families differ only by data: the
 * config (family/stack_config.h: filled by family/hf_config.h,
 * family/llama_config.h or family/llama2c.h) and a table of tensor names per
 * family (stack_load.c, which also holds the loader and stack_model_free), as
 * llama2.c's one forward makes grouped-query attention a number (kv_mul).
 *
 * The pass (B = 1, T tokens; [ ] only where the config says):
 *   x = embed[id] · embed_scale  [+ pos[t]]  [+ type[0]; LayerNorm]      (embedding)
 *   per layer, pre-norm (GPT-2, the Llama family):
 *     h = norm1(x);  q, k, v = h·W (+b)  (one fused product, or three)
 *     q, k per head: [q_norm / k_norm], [RoPE at position t]
 *     query head h attends with key/value head h / (H/Hkv), scale attn_scale,
 *     causal (or the layer's sliding window), or every key (BERT) but padding
 *     [knocked-out heads: output zeroed]
 *     a = heads·Wo (+bo);  [a = post_attn_norm(a)];  x += a
 *     h = norm2(x);  f = down(act(gate(h)) · up(h)) or down(act(up(h)));
 *     [f = post_ffn_norm(f)];  x += f
 *   post-norm (BERT): x = norm1(x + a);  x = norm2(x + f)
 *   x = final_norm(x) (pre-norm);  logits = x·Woutᵀ (+ bias)
 *   [BERT's masked-LM head first: LayerNorm(act(x·Wd + bd))]  [soft-capping]
 * norm: LayerNorm (weight, bias) or RMSNorm x/√(mean(x²)+eps)·w (Gemma: ·(1+w)),
 * sums in double.  RoPE rotates the pairs (i, i + D/2) (Hugging Face's
 * rotate-half) or (2i, 2i + 1) (llama2.c) with the frequencies StackRope
 * describes (default, linear, llama3 scaling).
 * Maps: "decoder.L.masked_self" (causal) or "encoder.L.self", every query
 * head, with the step matrices (and RoPE's before/after) of the heads asked.
 *
 * Weights.  Every linear weight keeps the layout it is stored in, a flag of
 * the weight read by one linear(): GPT-2's Conv1D (in, out), nn.Linear's
 * (out, in); BERT's q, k, v are joined into one (C, 3C) (in, out) product on
 * their way in, as GPT-2's c_attn is.  Float32 tensors are used in place from
 * the file mapped read-only (2 MB pages, MADV_HUGEPAGE); F16, BF16 and
 * unaligned F32 are converted into the model's block when first needed, one
 * group at a time (stack_model_ready): a layer, the final norm, the output
 * embeddings, the input's positions.  Loading reads only the headers; the
 * token embedding is read row by row until the logits need the whole table.
 * A field of StackWeights is NULL until its group is ready.
 *
 * Sizes.  Every count made from a file goes through core/sizes.h and is
 * compared with the limits below before anything is allocated.
 * Letters: T tokens, C d_model, H query heads, Hkv key/value heads, D head
 * size, F d_ff, V vocabulary, P positions, L layers; QD = H·D, KD = Hkv·D.
 * Ownership: the model owns its block, files and activations; stack_model_free
 * and stack_cache_free accept zeroed or half-built ones.
 * Errors: -1 and one line in err. */
#ifndef ATTNVIZ_STACK_H
#define ATTNVIZ_STACK_H
#include <stddef.h>
#include "core/safetensors.h"
#include "family/stack_config.h"
#include "trace/trace.h"

/* A linear map's weight in the layout it is stored in, and its bias. */
typedef enum {
    STACK_IN_OUT = 0,   /* (in, out): x·W, GPT-2's Conv1D, BERT's after the join */
    STACK_OUT_IN = 1,   /* (out, in): x·Wᵀ, nn.Linear as stored                   */
    STACK_ROWS = 2      /* (out, in), one dot product per output on the threads:
                           GPT-2's and BERT's tied output embedding              */
} StackLayout;

typedef struct {
    const float *w;     /* (in, out) or (out, in) as layout says */
    const float *b;     /* (out), or NULL                        */
    StackLayout layout;
} StackLinear;

typedef struct {
    const float *w, *b;  /* (C) or (D); b NULL for RMSNorm */
} StackNormW;

/* One layer's weights; NULL where the family has none. */
typedef struct {
    StackNormW norm1;      /* before attention (pre-norm) or after its add (post-norm)  */
    StackLinear qkv;       /* (C, QD + 2·KD) fused q | k | v (GPT-2, BERT)                 */
    StackLinear q, k, v;   /* (QD, C), (KD, C), (KD, C) otherwise                         */
    StackLinear o;         /* (C, QD) or (QD, C)                                          */
    StackNormW q_norm, k_norm;   /* (D) per-head norms (Qwen3, Gemma 3)                   */
    StackNormW post_attn_norm;   /* (C) Gemma 3: on the attention's output                */
    StackNormW norm2;      /* before the feed-forward (pre-norm) or after its add          */
    StackNormW post_ffn_norm;    /* (C) Gemma 3: on the feed-forward's output             */
    StackLinear gate;      /* (F, C) gated feed-forwards (llama2.c's w1), else unused      */
    StackLinear up;        /* (F, C) or (C, F): GPT-2's c_fc, llama2.c's w3               */
    StackLinear down;      /* (C, F) or (F, C): GPT-2's mlp.c_proj, llama2.c's w2         */
} StackLayer;

typedef struct {
    const float *embed;    /* (V, C) token embedding                          */
    const float *pos;      /* (P, C) learned positions, or NULL (RoPE)        */
    const float *type;     /* (n_type, C) BERT's token types, or NULL         */
    StackNormW embed_norm; /* (C) BERT's embedding LayerNorm                  */
    StackNormW final_norm; /* (C) pre-norm stacks                             */
    StackLinear mlm;       /* (C, C) BERT's cls.predictions.transform.dense   */
    StackNormW mlm_norm;   /* (C) */
    StackLinear out;       /* (V, C) output embedding (= embed when tied), BERT's decoder bias */
    StackLayer *layer;     /* (L) */
} StackWeights;

/* What a forward pass copies out at one position for direct logit
 * attribution (stack_model_attribution), when StackModel.tap is set. */
typedef struct {
    int pos;         /* the position tapped                                           */
    float *embed;    /* (C) the embedding row: token · embed_scale + position          */
    float *att;      /* (L, QD) each layer's heads' outputs before W_O (knocked out: 0) */
    float *mlp;      /* (L, C) each layer's feed-forward output, its bias included     */
    float *resid;    /* (C) the residual stream before the final norm                  */
} StackTap;

/* Activations of the last forward pass.  With RoPE, q and k before and after
 * it are kept for every layer (qk_layers = L) when the pass records steps or
 * StackModel.keep_qk asks; otherwise one layer's room is used again by each
 * (qk_layers = 1: a 512-token SmolLM2 pass touched 94 MB less). */
typedef struct {
    int T;
    int qk_layers;   /* L or 1: layer l's q, k are at index (qk_layers > 1 ? l : 0) */
    float *x;        /* (T, C) the residual stream; after the pass, final-normed        */
    float *qkv;      /* (T, QD + 2·KD) a fused product's q | k | v (GPT-2, BERT)        */
    float *q_pre;    /* (qk_layers, T, QD) queries before RoPE (after bias and q_norm)  */
    float *q_rot;    /* (qk_layers, T, QD) queries after RoPE, as attention used them   */
    float *k_pre;    /* (qk_layers, T, KD) keys before RoPE (after bias and k_norm)     */
    float *k_rot;    /* (qk_layers, T, KD) keys after RoPE                              */
    float *v;        /* (T, KD) values of the current layer                             */
    float *h;        /* (T, C) normed input of a sublayer                               */
    float *att;      /* (T, QD) the heads' outputs side by side                         */
    float *y;        /* (T, C) a sublayer's output                                      */
    float *gate;     /* (T, F) */
    float *up;       /* (T, F) */
    float *wts;      /* (T, T) one head's weights                                       */
    float *cos, *sin;/* (2, T, D/2) RoPE of [STACK_LAYER_FULL] and [_SLIDING] layers    */
    unsigned char *mask;  /* (2, T, T) [FULL] causal or padding, [SLIDING] the window   */
    int use_mask;    /* 0: nothing is masked (BERT without padding): maps say null      */
    float *block;    /* the one allocation the floats above are cut from                */
} StackActs;

/* A tensor waiting to be converted: where it goes, how, which group. */
typedef struct {
    const float **field;   /* the StackWeights pointer it fills, or NULL (a join's later part) */
    const StTensor *t;     /* in StackModel.st */
    float *dst;            /* its place in StackModel.params */
    long rows, cols;       /* as stored */
    long ld;               /* row stride in dst */
    int transpose;         /* stored (rows, cols) kept as (cols, rows) */
    int group;
} StackPending;
#define STACK_GROUP_FINAL(L) (L)
#define STACK_GROUP_OUT(L) ((L) + 1)
#define STACK_GROUP_INPUT(L) ((L) + 2)

typedef struct {
    StackConfig c;
    StackWeights w;
    StackPending *pending;  /* (n_pending) tensors converted when first needed     */
    int n_pending;
    unsigned char *ready;   /* (L + 3) 1 when a group's tensors are all in place    */
    float *params;          /* converted weights (F16/BF16, transposed, unaligned)  */
    SafeTensors st;         /* a folder's files, mapped while the model lives       */
    void *map;              /* a llama2.c file mapped read-only, or NULL            */
    size_t map_len;
    size_t n_params;        /* parameters as the checkpoint holds them              */
    char dtype[12];         /* of the token embedding as stored                     */
    int has_mlm;            /* BERT: the masked-LM head was found                   */
    char source[4096];      /* the folder or file, for messages                     */
    unsigned char *ablate;  /* (L, H) 1 = the head's output is zeroed; NULL: none   */
    StackActs a;
    int keep_qk;            /* 1: every layer's q and k stay in a after a pass (tests/llama_dump.c) */
    StackTap *tap;          /* set by stack_model_attribution during its pass; else NULL */
} StackModel;

/* Which heads keep their step matrices (scores, scaled, masked, output) in
 * the trace: every head (all = 1), or the one head (layer, head).  upto = 1
 * (with one head) stops after that layer and leaves the model's states as the
 * last whole pass left them (the logits stay that pass's). */
typedef struct {
    int all;
    int layer, head;
    int upto;
} StackSteps;

/* DIR/config.json (GPT-2, BERT or a Llama-family architecture) and the
 * weights of DIR (model.safetensors or its shards).  0, or -1 with err (the
 * model is then freed). */
int stack_model_load(StackModel *m, const char *dir, char *err, size_t errlen);

/* Forward pass of ids (T of them, 1 <= T <= n_pos), the last T - n_real of
 * them padding (hidden as keys when config.mask_padding).  When tr is given,
 * every head's weights are added as maps with `tokens` (T strings) as
 * queries and keys, and the steps of the heads `steps` names (NULL: none).
 * Fills m->a.  0, or -1 with err. */
int stack_model_forward(StackModel *m, const int *ids, int T, int n_real, Trace *tr, const char *const *tokens,
                        const StackSteps *steps, char *err, size_t errlen);

/* The logits (V) at position t of the last forward pass: a decoder's next
 * token, BERT's masked-LM prediction (requires has_mlm).  0, or -1 with err. */
int stack_model_logits(StackModel *m, int t, float *logits, char *err, size_t errlen);

/* Knocks out heads: mask (L, H), 1 = that head's output is zeroed before
 * W_O in every later forward pass and step; NULL: none.  0, or -1 with err. */
int stack_model_set_ablation(StackModel *m, const unsigned char *mask, char *err, size_t errlen);

/* Converts the tensors of group g (a layer, STACK_GROUP_FINAL, _OUT or
 * _INPUT) that are not yet in place; a no-op once done.  0, or -1 with err. */
int stack_model_ready(StackModel *m, int g, char *err, size_t errlen);

/* {"family": …, "d_model": …, "n_heads": …, "d_k": …, …} for the trace. */
int stack_model_json(const StackModel *m, char *buf, size_t n);

void stack_model_free(StackModel *m);

/* Direct logit attribution (stack_attrib.c) of token at position pos of ids
 * (T tokens, none padding): the logit is split into the parts the residual
 * stream adds up before the final norm, each projected through that norm with
 * its scale (1/σ, or 1/rms) frozen at the pass's value onto the unembedding
 * row of token:
 *     logit = Σ_l Σ_h heads[l][h] + Σ_l mlp[l] + embedding + bias
 * heads: head h's output through its slice of W_O (no bias); mlp: the
 * feed-forward's output with its biases; embedding: the token's row (· scale)
 * plus its learned position; bias: the attention output biases, the final
 * LayerNorm's bias and the output bias (0 for Llama-family models).  LayerNorm
 * centring is linear, so each part is centred with the mean of its own.  A
 * pre-norm decoder whose sublayers add to the stream as they are (GPT-2, the
 * Llama family but Gemma 3, llama2.c) and no soft-capping: else -1 with err.
 * heads (L·H) and mlp (L) are the caller's.  Knocked-out heads stay out (0). */
typedef struct {
    float logit;       /* the model's logit of token at pos                          */
    float *heads;      /* (L, H) */
    float *mlp;        /* (L) */
    float embedding;
    float bias;
} StackAttribution;
int stack_model_attribution(StackModel *m, const int *ids, int T, int pos, int token, StackAttribution *out, char *err,
                            size_t errlen);

/* A KV cache for a decoder: the keys (after RoPE) and values of every
 * position read so far, per layer, so each new token computes only its own
 * query row (stack_model_step).  stack_cache_init allocates, stack_cache_free
 * releases. */
typedef struct {
    int n_ctx;       /* positions it has room for (<= n_pos)                  */
    int T;           /* positions cached so far                               */
    float *k, *v;    /* (L, n_ctx, KD) keys after RoPE, values                */
    float *buf;      /* one token's scratch: x, h, y (C), q, att (QD), qkv (QD + 2·KD),
                        gate, up (F), cos, sin (D/2), wts (n_ctx)              */
    unsigned char *mask;  /* (n_ctx) the sliding window's row                  */
} StackCache;

/* Room for n_ctx positions (1 <= n_ctx <= n_pos) of a decoder (an encoder
 * reads a whole sentence at once: refused).  0, or -1 with err. */
int stack_cache_init(StackCache *kv, const StackModel *m, int n_ctx, char *err, size_t errlen);

/* Reads token id at position kv->T (then kv->T grows by one): the same
 * arithmetic as stack_model_forward's row of that position, from the cached
 * keys and values.  rows (L, H, n_ctx): row (l, h) gets the new query's
 * weights over keys 0..kv->T (the rest untouched); NULL: not wanted.
 * logits (V): the next token's, or NULL.  0, or -1 with err. */
int stack_model_step(StackModel *m, StackCache *kv, int id, float *rows, float *logits, char *err, size_t errlen);

void stack_cache_free(StackCache *kv);

#endif
