/* model_internal.h — helpers shared by model.c, model_backward.c, pad_rows.c and
 * model_layers.c (not public).  The kernels take one layer as structs that carry
 * their shapes (llm.c's `(out, inp, weight, B, T, C)`, ggml's shaped tensors):
 * PadRows (which rows of a batch are real), LinearLayer and FfnLayer (a layer's
 * weights with their gradients and sizes), AttnLayer (an attention layer's
 * activations with their shapes) and AttnHeadGrad (one head's backward). */
#ifndef ATTNVIZ_MODEL_INTERNAL_H
#define ATTNVIZ_MODEL_INTERNAL_H
#include "model/model.h"

/* Points p's fields into base following the layout of model_param_table. */
void model_point_params(const ModelConfig *c, float *base, ModelParams *p);
/* Streams of the last forward: the last encoder layer's output (before the final
 * pre-norm LayerNorm), the encoder output seen by cross-attention / logits, the
 * last decoder layer's output (before the final LayerNorm). */
const float *model_encoder_stream(const Model *m);
const float *model_encoder_output(const Model *m);
const float *model_decoder_stream(const Model *m);

/* model_loss that also writes ∂loss/∂logits (B, To, V) into dlogits (when not NULL)
 * in the same pass over the logits: (softmax − target distribution) / count at
 * non-pad positions, 0 at pad positions. */
float model_loss_grad(Model *m, const int *targets, float label_smoothing, float *dlogits);

/* ---- which rows are real (pad_rows.c) ----
 * Batches are padded to their longest sentence: item b of a (B, T, ·) activation
 * has len[b] real rows, then padding.  A training forward (m->pad_skip) leaves the
 * pad rows out of the products when some row is padding (skip): the n real rows
 * are packed into the model's scratch (pack: 3 slots of `slot` floats), multiplied,
 * and unpacked.  model_pad_prepare sizes that scratch for a batch (B, S, T);
 * model_pad_rows makes the plan of one (B, T) activation. */
typedef struct {
    const int *len;   /* (B) real rows of each item, or NULL: every row          */
    int B, T;         /* items and padded length: the activation has B·T rows     */
    int skip;         /* 1: the pad rows are left out (training, some padding)    */
    int n;            /* rows the products run on: Σ len[b] when skip, else B·T   */
    float *pack;      /* (3, slot) packing scratch, Model.pack_memory, when skip  */
    size_t slot;
} PadRows;
int model_pad_prepare(Model *m, int B, int S, int T);
PadRows model_pad_rows(const Model *m, const int *len, int B, int T);
/* The rows of item b that are computed: len[b] (within 0..T) when skip, else T. */
int model_pad_rows_real(const PadRows *r, int b);

/* ---- one layer's weights and their gradients (model_layers.c) ---- */
/* y = x·w + b over K inputs and M outputs; the backward ADDS to dw, db. */
typedef struct {
    const float *w;   /* (K, M)                                        */
    const float *b;   /* (M)                                           */
    float *dw;        /* (K, M) ∂loss/∂w, or NULL (no gradients, a forward) */
    float *db;        /* (M)    ∂loss/∂b, or NULL                      */
    int K, M;
} LinearLayer;
/* The feed-forward block relu(x·w1 + b1)·w2 + b2 of one layer. */
typedef struct {
    LinearLayer fc1;  /* x·w1 + b1: C → F */
    LinearLayer fc2;  /* h·w2 + b2: F → C */
} FfnLayer;
/* Layer l of a stack's FFN weights p and gradients g (NULL: none). */
FfnLayer model_ffn_layer(const FfnParams *p, const FfnParams *g, int l, int C, int F);

/* Layer l of one kind of attention in the last forward: its slices of AttnActs
 * with their shapes, its mask, which query and key rows are real, and its
 * weights with their gradients (when m->grads_memory exists). */
typedef struct {
    ModelAttnKind kind;
    int l;                      /* layer                                        */
    int B, Tq, Tk, C, H;        /* D = C / H                                    */
    float *q;                   /* (B, Tq, C)                                   */
    float *k, *v;               /* (B, Tk, C)                                   */
    float *att;                 /* (B, H, Tq, Tk) weights after softmax         */
    float *atty;                /* (B, Tq, C) heads' weights·V, concatenated    */
    float *proj;                /* (B, Tq, C) atty·W_o + b_o                    */
    const unsigned char *mask;  /* (B, Tq, Tk) 1 = may attend                   */
    PadRows qrows, krows;       /* real rows of the queries (B, Tq), keys (B, Tk) */
    LinearLayer wqkv[3];        /* W_q, W_k, W_v (C → C)                        */
    LinearLayer wo;             /* W_o (C → C)                                  */
} AttnLayer;
AttnLayer model_attn_layer(const Model *m, ModelAttnKind kind, int l);

/* ---- kernels over the real rows (pad_rows.c) ----
 * Without rows->skip: plain matmul_forward / matmul_backward.  With it, the rows
 * of item b at or past len[b] are left out: the forward writes 0 there, the
 * backward adds nothing there and leaves them out of dw, db.  The backward ADDS
 * to dinp, or with `set` overwrites it (0 at pad rows): a zeroed gradient buffer
 * is then neither cleared by the caller nor packed.  wt: matmul_backward's
 * scratch for a transposed weight. */
void model_linear_forward(const PadRows *r, float *out, const float *inp, const LinearLayer *w);
void model_linear_backward(const PadRows *r, float *dinp, int set, float *wt, const float *dout,
                           const float *inp, const LinearLayer *w);
/* The same for n_out projections w[i] of one input, packed once (Q, K, V). */
void model_linear_forward_n(const PadRows *r, int n_out, float *const *out, const float *inp,
                            const LinearLayer *w);
void model_linear_backward_n(const PadRows *r, int n_out, float *dinp, int set, float *wt,
                             const float *const *dout, const float *inp, const LinearLayer *w);
/* The feed-forward block; its hidden h stays packed (n rows of F) when the rows
 * are, so only the model's own FFN code reads it.  The backward overwrites dx. */
void model_ffn_forward(const PadRows *r, float *h, float *proj, const float *x, const FfnLayer *f);
void model_ffn_backward(const PadRows *r, float *dx, float *dh, float *wt, const float *dproj,
                        const float *h, const float *x, const FfnLayer *f);

/* ---- one attention head's gradients (model_backward.c) ---- */
/* What the backward of one head reads: q, k, v and dy are the head's columns of
 * (T, C) activations with row stride ld, A its weights. */
typedef struct {
    const float *q;     /* (Tq rows, stride ld)                          */
    const float *k, *v; /* (Tk rows, stride ld)                          */
    const float *A;     /* (Tq, Tk) contiguous, weights after softmax    */
    const float *dy;    /* (Tq rows, stride ld) ∂loss/∂output            */
    const float *t;     /* (Tq, Tk) supervision targets, or NULL         */
    float cs;           /* their coefficient λ/rows                      */
    float scale;        /* of the scores, 1/√D                           */
    int Tq, Tk, D, ld;
} AttnHeadGrad;
/* Overwrites the head's columns of dq (Tq rows), dk and dv (Tk rows), stride
 * ld, and all of dA (Tq, Tk).  _ref is the plain reference the fast one is
 * tested against. */
void attention_head_backward(float *dq, float *dk, float *dv, float *dA, const AttnHeadGrad *g);
void attention_head_backward_ref(float *dq, float *dk, float *dv, float *dA, const AttnHeadGrad *g);

#endif
