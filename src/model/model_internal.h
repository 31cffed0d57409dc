/* model_internal.h — helpers shared by model.c and model_backward.c (not public). */
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

/* Gradients of one attention head (model_backward.c): q, k, v, dq, dk, dv are the
 * head's columns of (T, C) activations, row stride ld; A and dA (Tq, Tk) contiguous;
 * dy (Tq rows, stride ld) = ∂loss/∂output.  t: NULL or (Tq, Tk) supervision targets
 * with coefficient cs.  Overwrites the head's columns of dq, dk, dv and all of dA.
 * _ref is the plain reference the fast one is tested against. */
void attention_head_backward(float *dq, float *dk, float *dv, float *dA, const float *dy,
                             const float *q, const float *k, const float *v, const float *A,
                             const float *t, float cs, float scale, int Tq, int Tk, int D, int ld);
void attention_head_backward_ref(float *dq, float *dk, float *dv, float *dA, const float *dy,
                                 const float *q, const float *k, const float *v, const float *A,
                                 const float *t, float cs, float scale, int Tq, int Tk, int D, int ld);

/* Linear layers of a training step over the non-pad rows only (pad_rows.c).
 * When the forward set m->pad_skip (m->training), the rows of item b at or past
 * len[b] (rows of (B, T, ·) with N = B·T) are left out of the product: the forward
 * writes 0 there, the backward adds nothing there and leaves them out of dw, dbias.
 * Without pad_skip or len, plain matmul_forward / matmul_backward.  The backward
 * ADDS to dinp, or with `set` overwrites it (0 at pad rows): a zeroed gradient
 * buffer is then neither cleared by the caller nor packed.  model_pad_prepare
 * sizes the packing scratch for a batch (B, S, T). */
int model_pad_prepare(Model *m, int B, int S, int T);
void model_linear_forward(const Model *m, const int *len, int T, float *out, const float *inp,
                          const float *w, const float *bias, int N, int K, int M);
void model_linear_backward(const Model *m, const int *len, int T, float *dinp, int set, float *dw, float *dbias,
                           float *wt, const float *dout, const float *inp, const float *w,
                           int N, int K, int M);
/* The same for n_out projections of one input, packed once (Q, K, V). */
void model_linear_forward_n(const Model *m, const int *len, int T, int n_out, float *const *out,
                            const float *inp, const float *const *w, const float *const *bias,
                            int N, int K, int M);
void model_linear_backward_n(const Model *m, const int *len, int T, int n_out, float *dinp, int set,
                             float *const *dw, float *const *dbias, float *wt, const float *const *dout,
                             const float *inp, const float *const *w, int N, int K, int M);
/* The feed-forward block relu(x·w1 + b1)·w2 + b2; its hidden h stays packed
 * (n rows of F) when the rows are, so only the model's own FFN code reads it. */
void model_ffn_forward(const Model *m, const int *len, int T, float *h, float *proj, const float *x,
                       const float *w1, const float *b1, const float *w2, const float *b2,
                       int N, int C, int F);
void model_ffn_backward(const Model *m, const int *len, int T, float *dx, int set, float *dh, float *wt,
                        const float *dproj, const float *h, const float *x,
                        const float *w1, float *gw1, float *gb1, const float *w2, float *gw2, float *gb2,
                        int N, int C, int F);

#endif
