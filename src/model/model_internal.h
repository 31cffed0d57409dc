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

#endif
