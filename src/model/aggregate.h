/* aggregate.h — two views of attention that aggregate more than one head's
 * weights, computed from the activations of the last forward pass:
 *
 *   rollout (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers")
 *     per layer, heads averaged and the residual connection added as identity:
 *       Ã_l = ½ · mean_h A_l^h + ½ · I,  rows renormalised to sum 1,
 *       R_0 = Ã_0,  R_l = Ã_l · R_{l−1}
 *     R_l[i, j]: how much of token j's input reaches position i after layer l,
 *     if information only flowed along attention and the residual.
 *
 *   norm-weighted attention (Kobayashi et al. 2020, "Attention is Not Only a
 *   Weight: Analyzing Transformers with Vector Norms")
 *       N^h[i, j] = ‖α^h_ij · f_h(x_j)‖ = α^h_ij · ‖(x_j W_V^h + b_V^h) W_O^h‖
 *     where W_V^h are head h's D columns of W_V and W_O^h its D rows of W_O:
 *     the size of the vector key j really adds to query i through head h.  A
 *     large weight on a key whose transformed vector is tiny adds little.
 *
 * Both read m->acts of batch item b (model_forward first) and write into
 * caller-owned arrays.  0, or -1 with m->err. */
#ifndef ATTNVIZ_AGGREGATE_H
#define ATTNVIZ_AGGREGATE_H
#include "model/model.h"

/* Rollout of the self-attention of kind (MODEL_ATTN_ENC_SELF, or DEC_SELF):
 * out (layers, T, T), T = S or the decoder length of the last forward; layer
 * l holds R_l. */
int aggregate_rollout(Model *m, ModelAttnKind kind, int b, float *out);

/* Norm-weighted attention of map (kind, layer): out (H, Tq, Tk).  A head
 * knocked out with zeros (model_ablate_head) adds nothing: its rows are 0. */
int aggregate_norm_weighted(Model *m, ModelAttnKind kind, int layer, int b, float *out);

#endif
