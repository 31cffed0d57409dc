/* llama_config.h — the config.json of a Llama-architecture decoder
 * (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM,
 * Gemma3ForCausalLM), read into the stack's config (family/stack_config.h): RMSNorm
 * pre-norm, RoPE, grouped-query attention, a gated feed-forward, every linear
 * weight (out, in).  llama2.c checkpoints fill the same struct from their
 * header (family/llama2c.h).
 *
 * What each family changes on the common decoder (family/stack.h has the pass):
 *   Llama    RMSNorm, RoPE (rotate-half), grouped-query attention, SwiGLU;
 *            attention_bias (q, k, v, o), mlp_bias; rope_scaling llama3/linear
 *   Mistral  sliding_window on every layer (null: none; absent: 4096)
 *   Qwen2    biases on q, k, v; use_sliding_window with max_window_layers
 *   Qwen3    per-head RMSNorm of q and k (q_norm, k_norm), explicit head_dim
 *   Gemma 3  embeddings × √hidden_size, RMSNorm scaling by (1 + w), q/k norm,
 *            gelu_pytorch_tanh, norms before and after attention and the
 *            feed-forward, sliding and global layers (layer_types, else every
 *            sliding_window_pattern-th layer global) with their own RoPE bases
 *            (rope_local_base_freq, rope_theta), scores × query_pre_attn_scalar^-½
 * RoPE: rope_parameters (newer transformers; flat, or per layer type
 * "full_attention" / "sliding_attention") wins over rope_theta + rope_scaling
 * ("type" or "rope_type": default, linear, llama3).  The family comes from
 * "architectures", else from "model_type".
 *
 * Options that change the computation in ways attnviz does not compute (other
 * RoPE types such as yarn or dynamic, partial_rotary_factor, attention logit
 * soft-capping, bidirectional attention) are refused with their name.
 * Errors: -1 and one line naming the file and the key (core/errmsg.h). */
#ifndef ATTNVIZ_LLAMA_CONFIG_H
#define ATTNVIZ_LLAMA_CONFIG_H
#include <stddef.h>
#include "family/stack_config.h"

/* Reads DIR/config.json.  0, or -1 with err. */
int llama_config_load(StackConfig *c, const char *dir, char *err, size_t errlen);

/* The same from config.json's text; path is only for messages. */
int llama_config_parse(StackConfig *c, const char *text, const char *path, char *err, size_t errlen);

/* The family an "architectures" entry names (architecture not NULL), else
 * the one a "model_type" names; 0 when it names none attnviz reads. */
StackFamily llama_config_arch_of(const char *architecture, const char *model_type);

#endif
