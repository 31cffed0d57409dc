/* model.h — the Transformer of attnviz: config, weights, forward, probe, backward.
 *
 * Architecture (the lesson's, "Attention Is All You Need"):
 *   x      = tok_emb[token] · √d_model + PE[pos]          (one vocabulary, one table
 *            shared by encoder and decoder inputs; the √d_model scale is the paper's)
 *   PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(same angle)
 *   MHA(x) = concat_h( softmax(Q_h·K_hᵀ/√d_k + M) · V_h ) · W_o + b_o,
 *            Q = x·W_q + b_q (likewise K, V); head h = columns h·d_k … h·d_k+d_k-1,
 *            d_k = d_model / n_heads; one call of attention_forward per (batch, head)
 *   FFN(x) = max(0, x·W_1 + b_1) · W_2 + b_2
 *   post-norm (prenorm = 0, the paper):  x ← LayerNorm(x + Sublayer(x))
 *   pre-norm  (prenorm = 1):             x ← x + Sublayer(LayerNorm(x)),
 *                                        plus a final LayerNorm at the end of each stack
 *   logits = h · W_out + b_out   (a separate output projection, NOT tied to tok_emb)
 * Dropout (training only, off by default): when m->training and m->dropout = P > 0,
 *   Sublayer(x) above becomes Drop(Sublayer(x)) (attention output projection and FFN
 *   output, before the residual add) and x = Drop(tok_emb·√d_model + PE), in both
 *   stacks; Drop(y) = y ⊙ mask, mask = 0 with probability P, else 1/(1-P) (inverted
 *   dropout).  The masks are drawn from m->dropout_rng (set by model_dropout_seed) and
 *   kept in ModelActs so model_backward applies the same ones.  With training 0 or
 *   P = 0 the forward is exactly the one without dropout.
 * Every weight matrix is stored (in, out):  y = x·W + b.
 *
 * Architectures:
 *   MODEL_ENC_DEC       encoder self-attention; decoder masked self-attention and
 *                       cross-attention (queries: decoder, keys/values: encoder output);
 *                       logits (B, T, V) from the decoder.
 *   MODEL_ENCODER_ONLY  encoder only, logits (B, S, V) from the encoder states.
 *   MODEL_DECODER_ONLY  causal LM: decoder without cross-attention, input = tgt.
 *
 * Masks (1 = may attend) are on keys only: encoder self j < src_len; decoder self
 * j <= i and j < tgt_len; cross j < src_len.  Masked scores are -INFINITY.  Pad
 * query rows still see the real keys, so no row is fully masked unless a length is 0.
 *
 * Memory: all parameters live in one float block (params_memory) with named
 * pointers (ModelParams); gradients use the same layout (grads_memory).  The
 * forward pass keeps EVERY layer's activations in one block (ModelActs), sized on
 * demand for (B, S, T).  model_free releases everything, accepts NULL/half-built.
 * Dimension letters: B batch, S source length, T target length, C d_model,
 * H heads, D d_k, F d_ff, V vocabulary, E encoder layers, L decoder layers. */
#ifndef ATTNVIZ_MODEL_H
#define ATTNVIZ_MODEL_H
#include <stddef.h>
#include <stdint.h>
#include "trace/trace.h"

typedef enum { MODEL_ENC_DEC = 0, MODEL_ENCODER_ONLY = 1, MODEL_DECODER_ONLY = 2 } ModelArch;

/* Limits checked by model_config_validate (and so by the checkpoint loader). */
#define MODEL_MAX_DIM     8192      /* d_model, d_ff                */
#define MODEL_MAX_HEADS   256
#define MODEL_MAX_LAYERS  64        /* per stack                    */
#define MODEL_MAX_VOCAB   1000000
#define MODEL_MAX_LEN     8192
#define MODEL_MAX_PARAMS  ((size_t)1 << 28)   /* 256M floats = 1 GiB */

typedef struct {
    ModelArch arch;
    int vocab_size;    /* V, one vocabulary for source and target        */
    int d_model;       /* C                                              */
    int n_heads;       /* H; d_k = C / H                                 */
    int d_ff;          /* F                                              */
    int n_enc_layers;  /* E (0 for decoder-only)                         */
    int n_dec_layers;  /* L (0 for encoder-only)                         */
    int max_len;       /* longest sequence: rows of the PE table         */
    int prenorm;       /* 0 post-norm (paper), 1 pre-norm                */
} ModelConfig;

/* Weights of one multi-head attention sub-layer, stacked over the layers. */
typedef struct {
    float *wq, *wk, *wv, *wo;  /* (layers, C, C) */
    float *bq, *bk, *bv, *bo;  /* (layers, C)    */
} AttnParams;
typedef struct { float *w, *b; } NormParams;      /* (layers, C) each          */
typedef struct {
    float *w1;  /* (layers, C, F) */
    float *b1;  /* (layers, F)    */
    float *w2;  /* (layers, F, C) */
    float *b2;  /* (layers, C)    */
} FfnParams;

/* Named pointers into one contiguous block.  Tensors of a stack that the
 * architecture lacks are NULL (and absent from the parameter table). */
typedef struct {
    float *tok_emb;        /* (V, C)                                      */
    AttnParams enc_self;   /* E layers                                    */
    NormParams enc_ln1;    /* (E, C)  after (post) / before (pre) self-attention */
    FfnParams  enc_ffn;    /* E layers                                    */
    NormParams enc_ln2;    /* (E, C)  around the FFN                      */
    NormParams enc_lnf;    /* (1, C)  final LayerNorm, pre-norm only      */
    AttnParams dec_self;   /* L layers, masked self-attention             */
    NormParams dec_ln1;    /* (L, C)                                      */
    AttnParams dec_cross;  /* L layers, encoder-decoder only              */
    NormParams dec_ln2;    /* (L, C)  encoder-decoder only                */
    FfnParams  dec_ffn;    /* L layers                                    */
    NormParams dec_ln3;    /* (L, C)                                      */
    NormParams dec_lnf;    /* (1, C)  pre-norm only                       */
    float *out_w;          /* (C, V)  output projection                   */
    float *out_b;          /* (V)                                         */
} ModelParams;

/* One row of the parameter table (checkpoint names, optimizer). */
typedef struct {
    char name[32];     /* e.g. "enc.self.wq", "dec.ln3.b", "tok_emb" */
    int ndim;
    int shape[3];
    size_t numel;
    size_t offset;     /* in floats from the start of the block */
    float *ptr;        /* base + offset (NULL when the table was built without a base) */
} ModelParam;
#define MODEL_MAX_TENSORS 64

/* Activations of one attention sub-layer, all layers of a stack. */
typedef struct {
    float *q;     /* (layers, B, Tq, C) */
    float *k;     /* (layers, B, Tk, C) */
    float *v;     /* (layers, B, Tk, C) */
    float *att;   /* (layers, B, H, Tq, Tk) weights after softmax */
    float *atty;  /* (layers, B, Tq, C) heads' weights·V, concatenated */
    float *proj;  /* (layers, B, Tq, C) atty·W_o + b_o */
    float *drop;  /* (layers, B, Tq, C) dropout mask of proj: 0 or 1/(1-P); NULL when
                     the forward did not drop (the residual adds proj⊙drop) */
} AttnActs;
typedef struct {
    float *out;   /* (layers, B, T, C) */
    float *mean;  /* (layers, B, T)    */
    float *rstd;  /* (layers, B, T)    */
} NormActs;
typedef struct {
    float *h;     /* (layers, B, T, F) max(0, x·W_1 + b_1) */
    float *proj;  /* (layers, B, T, C) h·W_2 + b_2         */
    float *drop;  /* (layers, B, T, C) dropout mask of proj, or NULL (as AttnActs) */
} FfnActs;

/* Every layer's activations of the last forward pass (shapes use its B, S, T). */
typedef struct {
    float *enc_x;         /* (B, S, C) tok_emb·√C + PE (⊙ enc_x_drop), the encoder input */
    NormActs enc_ln1;     /* E layers                                      */
    AttnActs enc_self;    /* Tq = Tk = S                                   */
    float *enc_res1;      /* (E, B, S, C) stream + self-attention          */
    NormActs enc_ln2;
    FfnActs  enc_ffn;
    float *enc_res2;      /* (E, B, S, C) + FFN                            */
    NormActs enc_lnf;     /* (1, B, S, C) pre-norm only                    */
    float *dec_x;         /* (B, T, C)                                     */
    NormActs dec_ln1;
    AttnActs dec_self;    /* Tq = Tk = T                                   */
    float *dec_res1;      /* (L, B, T, C)                                  */
    NormActs dec_ln2;
    AttnActs dec_cross;   /* Tq = T, Tk = S                                */
    float *dec_res2;      /* (L, B, T, C)                                  */
    NormActs dec_ln3;
    FfnActs  dec_ffn;
    float *dec_res3;      /* (L, B, T, C)                                  */
    NormActs dec_lnf;     /* (1, B, T, C) pre-norm only                    */
    float *logits;        /* (B, To, V)  To = T, or S for encoder-only     */
    float *probs;         /* (B, To, V)  softmax, filled by model_loss     */
    float *enc_x_drop;    /* (B, S, C) dropout mask applied to enc_x, or NULL */
    float *dec_x_drop;    /* (B, T, C) dropout mask applied to dec_x, or NULL */
    unsigned char *enc_mask;   /* (B, S, S) 1 = may attend                 */
    unsigned char *dec_mask;   /* (B, T, T) causal and padding             */
    unsigned char *cross_mask; /* (B, T, S) padding of the source          */
} ModelActs;

typedef struct {
    ModelConfig config;
    ModelParams params;       /* pointers into params_memory                */
    float *params_memory;     /* (num_params)                               */
    size_t num_params;
    ModelParams grads;        /* pointers into grads_memory (same layout)   */
    float *grads_memory;      /* (num_params), NULL until first needed      */
    float *pe;                /* (max_len, C) sinusoidal positional encoding */
    /* last forward */
    int B, S, T, To;          /* batch, source len, target len, output len  */
    int *src, *tgt;           /* (B, S), (B, T) copies of the input tokens  */
    int *src_len, *tgt_len;   /* (B), (B)                                   */
    int *out_len;             /* = src_len (encoder-only) or tgt_len        */
    ModelActs acts;
    float *acts_memory; size_t acts_cap;     /* floats                      */
    unsigned char *mask_memory; size_t mask_cap;
    int *tok_memory; size_t tok_cap;
    float *bwd_memory; size_t bwd_cap;       /* backward scratch            */
    float *pack_memory; size_t pack_cap;     /* packed non-pad rows (pad_rows.c) */
    int pad_skip;             /* last forward skipped pad rows (training)   */
    long loss_count;          /* > 0: model_loss divides by this instead of the forward's
                                 own count of output tokens (a half of a split batch
                                 divides by the whole batch's, see model_train_step) */
    int shares_params;        /* a twin: params_memory and pe belong to another model */
    /* dropout (training only): model_forward drops when training && dropout > 0 */
    int training;             /* 0 (default): inference, never drops        */
    float dropout;            /* P, 0 <= P < 1                              */
    uint64_t dropout_rng;     /* xorshift64* state the masks are drawn from */
    /* knock-outs (inference only; see model_ablate_head) */
    unsigned char *ablate;    /* (3, Lmax, H) MODEL_ABLATE_* per (kind, layer, head), or NULL */
    float *ablate_value;      /* (3, Lmax, C) replacement outputs (mean mode), D per head    */
    int n_ablated;            /* heads knocked out                                           */
    /* constrained decoding (inference only; decode_set_lang_mask in decode.h) */
    unsigned char *lang_mask[2]; /* (V) each, [0] <2fr>, [1] <2vi>: 1 = the decoder may write
                                    the token; NULL: no mask for that language              */
    unsigned char *sentence_end; /* (V) DECODE_END / DECODE_AFTER_END per token (decode.h:
                                    decode_set_sentence_ends), or NULL: not known           */
    char err[256];            /* message of the last failed call            */
} Model;

/* ---- config ---- */
const char *model_arch_name(ModelArch a);         /* "encoder-decoder" | "encoder-only" | "decoder-only" */
int  model_arch_parse(const char *s, ModelArch *out); /* 0 ok, -1 unknown */
/* 0 if sane (positive sizes, d_model % n_heads == 0, limits, layer counts fit the
 * architecture), else -1 with a one-line message. */
int  model_config_validate(const ModelConfig *c, char *err, size_t errlen);
size_t model_num_params(const ModelConfig *c);
/* The "model" JSON object for the trace and the checkpoint: arch, vocab_size,
 * d_model, n_heads, d_k, d_ff, n_enc_layers, n_dec_layers, layers {encoder,decoder},
 * max_len, norm "post"|"pre", parameters, and the conventions used.  Returns the
 * length written (like snprintf; >= n means truncated). */
int  model_config_json(const ModelConfig *c, char *buf, size_t n);
/* Reads a config from that JSON text (extra members ignored) and validates it. */
int  model_config_from_json(ModelConfig *c, const char *json, char *err, size_t errlen);

/* ---- parameters ---- */
/* Fills tab (up to max rows) with name, shape, offset and base+offset; returns the
 * number of tensors.  base may be params_memory or grads_memory (same layout) or NULL. */
int  model_param_table(const ModelConfig *c, float *base, ModelParam *tab, int max);

/* Allocates zeroed parameters for a valid config (no grads, no activations).
 * 0, or -1 with m->err.  m must be zeroed or freed before. */
int  model_alloc(Model *m, const ModelConfig *c);
/* model_alloc + deterministic init (xorshift64*, seed): Glorot-uniform weight
 * matrices, zero biases, LayerNorm gain 1 / bias 0, tok_emb uniform with std
 * 1/√d_model (so tok_emb·√d_model has unit scale, like PE). */
int  model_init_random(Model *m, const ModelConfig *c, uint64_t seed);
void model_free(Model *m);   /* accepts NULL, zeroed, half-built; leaves m zeroed */

/* PE(pos, 2i) = sin(pos / 10000^(2i/C)), PE(pos, 2i+1) = cos(…): out (T, C). */
void model_positional_encoding(float *out, int T, int C);

/* ---- forward ---- */
/* One batch as model_forward takes it, caller-owned: a sentence's ids, a
 * decoding step's, a training step's input.  Encoder-decoder: src (B,S) +
 * src_len (B) and tgt (B,T) + tgt_len (B); encoder-only: src only (tgt NULL,
 * T 0); decoder-only: tgt only (src NULL, S 0).  Lengths 0..S / 0..T;
 * positions beyond are padding (any valid token id; masked as keys). */
typedef struct {
    const int *src;       /* (B, S) source tokens; NULL, S 0 for decoder-only    */
    const int *src_len;   /* (B)                                                 */
    int S;
    const int *tgt;       /* (B, T) decoder input; NULL, T 0 for encoder-only    */
    const int *tgt_len;   /* (B)                                                 */
    int T;
    int B;
} ModelBatch;

/* Runs the model on a batch.  Afterwards m->acts holds every layer's
 * activations and m->acts.logits (B, m->To, V).  0, or -1 with m->err (bad ids,
 * lengths, sizes > max_len, out of memory). */
int  model_forward(Model *m, const ModelBatch *batch);

/* Sets the dropout generator from (seed, step): the masks of the next forward are a
 * function of them alone (train calls it before each step's forward; a gradient check
 * calls it before each evaluation to keep the masks fixed). */
void model_dropout_seed(Model *m, uint64_t seed, uint64_t step);

/* Mean cross-entropy over non-pad output positions (t < out_len[b]) of the last
 * forward against targets (B, To), with label smoothing eps (0 = none: target
 * distribution (1-eps)·onehot + eps/V).  Fills m->acts.probs.  Returns the loss,
 * or NAN with m->err when a target id is out of range. */
float model_loss(Model *m, const int *targets, float label_smoothing);

/* ---- backward ---- */
/* Sets every gradient to zero (allocates grads_memory on first use). 0 or -1. */
int  model_zero_grad(Model *m);
/* After model_forward: computes model_loss and ADDS ∂loss/∂θ to m->grads (call
 * model_zero_grad first).  Returns the loss, or NAN with m->err. */
float model_backward(Model *m, const int *targets, float label_smoothing);

/* ---- attention supervision (auxiliary loss on attention weights) ----
 * An optional extra loss on one head's attention weights, backpropagated through
 * the WHOLE network by model_backward_sup (Garg et al. 2019, "Jointly Learning to
 * Align and Translate with Transformer Models"; also coreference supervision):
 *   aux = mean over supervised rows r of  −Σ_j target[r, j] · log att[r, j]
 * where a row (b, i) is supervised when Σ_j target[b, i, j] > 0.  The caller
 * gives normalised target distributions: one-hot (query = pronoun, key = gold
 * antecedent) or uniform over the gold keys (alignment: decoder row t, the row
 * that predicts y_t, over the source words aligned to y_t).  Total loss =
 * cross-entropy + weight · aux.  Targets must be >= 0 and 0 on masked keys.
 * The gradient λ·∂aux/∂att enters the head's attention-weights gradient before
 * the softmax backward (there written in closed form, weight/rows · (A·Σt − t),
 * so a tiny attention weight cannot overflow -t/A). */
typedef enum {
    MODEL_ATTN_ENC_SELF = 0,   /* "encoder.L.self"         Tq = Tk = S */
    MODEL_ATTN_DEC_SELF = 1,   /* "decoder.L.masked_self"  Tq = Tk = T */
    MODEL_ATTN_CROSS    = 2    /* "decoder.L.cross"        Tq = T, Tk = S */
} ModelAttnKind;

typedef struct {
    ModelAttnKind kind;
    int layer, head;
    float weight;           /* λ (0: the term is computed but adds no gradient)   */
    const float *target;    /* (B, Tq, Tk) of the last forward, caller-owned       */
    /* filled by model_attn_sup_loss / model_backward_sup: */
    float loss;             /* aux (without λ); 0 when no row is supervised        */
    int rows;               /* supervised rows                                     */
    int norm_rows;          /* > 0: aux and its gradient divide by this instead of rows
                               (a half of a split batch divides by the whole batch's) */
} ModelAttnSupervision;

/* aux of the last forward for one supervision (also stored in sup->loss, rows in
 * sup->rows).  NAN with m->err on a bad kind/layer/head, a negative target or
 * mass on a masked key. */
float model_attn_sup_loss(Model *m, ModelAttnSupervision *sup);

/* model_backward plus n_sup attention supervisions (sup may be NULL when n_sup is
 * 0): ADDS ∂(CE + Σ weight·aux)/∂θ to m->grads.  Returns the cross-entropy alone
 * (each aux in sup[i].loss), or NAN with m->err. */
float model_backward_sup(Model *m, const int *targets, float label_smoothing,
                         ModelAttnSupervision *sup, int n_sup);

/* ---- a training step on two threads (model_twin.c) ----
 * model_twin_init makes `twin` share m's parameters (m keeps owning them) with
 * activations, gradients and scratch of its own; free it with model_free.
 * model_train_step is model_forward of the batch then model_backward_sup against
 * targets (B, To) on the whole batch: gradients ADDED to m->grads, m->training and
 * m->dropout as the caller set them, the cross-entropy returned (NAN with m->err),
 * each sup's loss and rows filled.
 * With twin != NULL, m->training and B >= 2 it cuts the batch into two halves of
 * about equal tokens: m runs the first, twin the second, each on one thread, side
 * by side when OpenMP gives 2 or more threads, else one after the other (the same
 * bits either way), and twin's gradients are added into m's.  Both halves divide
 * by the whole batch's counts (loss_count, norm_rows), so the sum is the whole
 * batch's gradient up to the order of float sums; the second half's dropout masks
 * come from another stream.  Afterwards m's activations are its half's only.
 * With twin NULL or B = 1 it is exactly the two calls on m. */
int   model_twin_init(Model *twin, const Model *m);
float model_train_step(Model *m, Model *twin, const ModelBatch *batch, const int *targets,
                       float label_smoothing, ModelAttnSupervision *sup, int n_sup);

/* ---- knock-outs (does this head matter?) ----
 * A knocked-out head's output — its D columns of the concatenated heads'
 * weights·V, before the output projection W_o — is replaced for every query
 * position: by zeros (MODEL_ABLATE_ZERO, the same as zeroing the head's columns of
 * W_V and its slice of b_V, because each weights row sums to 1) or by a fixed
 * vector, e.g. the head's mean output over a data set (MODEL_ABLATE_MEAN).  The
 * weights themselves are untouched (the maps still show what the head looked at);
 * everything after W_o sees the change.  Inference only: model_backward refuses
 * while a head is knocked out.  The map names are the trace's: kind
 * MODEL_ATTN_ENC_SELF = "encoder.L.self", DEC_SELF = "decoder.L.masked_self",
 * CROSS = "decoder.L.cross". */
typedef enum { MODEL_ABLATE_NONE = 0, MODEL_ABLATE_ZERO = 1, MODEL_ABLATE_MEAN = 2 } ModelAblateMode;

/* Knocks out one head; mean (D floats) is required for MODEL_ABLATE_MEAN and
 * ignored otherwise; MODEL_ABLATE_NONE restores the head.  0, or -1 with m->err
 * (kind, layer or head out of range, out of memory). */
int  model_ablate_head(Model *m, ModelAttnKind kind, int layer, int head, ModelAblateMode mode, const float *mean);
/* Restores every head. */
void model_ablate_clear(Model *m);
/* The mode of one head (MODEL_ABLATE_NONE when out of range). */
ModelAblateMode model_ablated(const Model *m, ModelAttnKind kind, int layer, int head);
/* Layers of a kind in this model (0 when the architecture lacks it). */
int  model_attn_layers(const ModelConfig *c, ModelAttnKind kind);
/* "encoder.L.self" etc. → kind and layer; 0, or -1 if the text is no map of c. */
int  model_attn_parse_map(const ModelConfig *c, const char *map, ModelAttnKind *kind, int *layer);
/* The map name of (kind, layer): "encoder.2.self". */
void model_attn_map_name(ModelAttnKind kind, int layer, char *buf, size_t n);
/* Knocks out (zero mode) every head of a list "MAP.HEAD[,MAP.HEAD…]", e.g.
 * "encoder.2.self.0,decoder.1.cross.3".  0, or -1 with m->err naming the item
 * that is wrong and the maps and heads the model has (nothing is changed then). */
int  model_ablate_parse(Model *m, const char *spec);
/* The knocked-out heads as "encoder.2.self.0, decoder.1.cross.3" (json 0), or
 * a JSON array [{"map":"encoder.2.self","head":0,"mode":"zero"},…] (json 1);
 * "" / "[]" when none.  Returns the length written, like snprintf. */
int  model_ablate_describe(const Model *m, int json, char *buf, size_t n);

/* ---- direct logit attribution (model_attrib.c) ----
 * Which parts of the decoder wrote the logit of `token` at decoder position pos
 * of batch item b in the last forward pass (inference, no dropout)?  The stream
 * is kept as a sum of parts: the input tok_emb·√C + PE (embedding), each head's
 * output through its rows of W_o (masked self and cross), each FFN's output (b_2
 * included), and a bias part (every b_o, every LayerNorm's β, b_out).  Every
 * LayerNorm the stream passes through (post-norm: after each sublayer;
 * pre-norm: the final one) is affine once its 1/σ is frozen at the pass's
 * value, LN(y) = g ⊙ (y − mean(y))/σ + β, so each part goes through it on its
 * own.  At the end each part is dotted with W_out's column of the token.  The
 * parts add up to the logit (up to float rounding). */
typedef struct {
    float *heads;      /* (2, L, H) caller's: [0] masked self, [1] cross (0 without) */
    float *mlp;        /* (L) caller's                                               */
    float embedding, bias;
    float logit;       /* the model's logit of the token there                       */
} ModelAttribution;
/* 0, or -1 with err (no decoder, no forward, a training pass, pos or token out of range). */
int  model_attribution(const Model *m, int b, int pos, int token, ModelAttribution *out, char *err, size_t errlen);

/* ---- probe ---- */
/* Adds batch item b's maps of the last forward to the trace: "encoder.L.self",
 * "decoder.L.masked_self", "decoder.L.cross" with every head's weights, the mask,
 * mask_fill -inf and d_k; with_steps adds scores (Q·Kᵀ), scaled, masked and
 * output (weights·V, Dv = d_k), recomputed by attention_forward from the stored
 * Q, K, V.  src_tokens holds at least src_len[b] strings (NULL: "#id"); positions
 * from src_len[b] to S-1 are labelled "<pad>" (likewise tgt_tokens).  Also sets the
 * trace's source/target tokens (padded rows) and its "model" object.
 * 0, or -1 with m->err (out of memory, b out of range, no forward yet). */
int  model_trace(Model *m, int b, Trace *t, const char *const *src_tokens,
                 const char *const *tgt_tokens, int with_steps);

#endif
