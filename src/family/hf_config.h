/* hf_config.h — the config.json of a Hugging Face model folder (GPT-2 or BERT,
 * as save_pretrained writes it), read into the stack's config (family/stack_config.h):
 * learned positions, LayerNorm with biases, one fused q | k | v product, the
 * output tied to the word embedding; GPT-2 pre-norm and causal, BERT post-norm
 * with token types and padding hidden.
 *
 * The family comes from "model_type" ("gpt2", "bert"), else from
 * "architectures" (GPT2LMHeadModel, GPT2Model, BertForMaskedLM, BertModel, …).
 *   GPT-2: n_embd, n_head, n_layer, n_positions (or n_ctx), vocab_size,
 *          n_inner (null → 4·n_embd), layer_norm_epsilon (1e-5),
 *          activation_function (gelu_new; gelu, gelu_pytorch_tanh, relu also read)
 *   BERT:  hidden_size, num_attention_heads, num_hidden_layers,
 *          intermediate_size, max_position_embeddings, vocab_size,
 *          type_vocab_size (2), layer_norm_eps (1e-12), hidden_act (gelu)
 * Options that change the computation in ways attnviz does not compute
 * (GPT-2's scale_attn_weights false, scale_attn_by_inverse_layer_idx,
 * add_cross_attention; BERT's relative position_embedding_type, is_decoder)
 * are refused with their name rather than drawn wrong.
 * Errors: -1 and one line naming the file and the key (core/errmsg.h). */
#ifndef ATTNVIZ_HF_CONFIG_H
#define ATTNVIZ_HF_CONFIG_H
#include <stddef.h>
#include "family/stack_config.h"

/* Reads DIR/config.json.  0, or -1 with err. */
int hf_config_load(StackConfig *c, const char *dir, char *err, size_t errlen);

/* The same from config.json's text; path is only for messages. */
int hf_config_parse(StackConfig *c, const char *text, const char *path, char *err, size_t errlen);

/* 1 when config.json's text is for this reader: it names GPT-2 or BERT (by
 * model_type, else architectures), or is no JSON object (then the reader
 * says what is wrong with it). */
int hf_config_claims(const char *text);

#endif
