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

#endif
