/* hf_config.h — the config.json of a Hugging Face model folder (GPT-2 or BERT,
 * as save_pretrained writes it), read into the few numbers attnviz needs.
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

typedef enum { HF_GPT2 = 1, HF_BERT = 2 } HfFamily;

/* Activation of the feed-forward layer. */
typedef enum { HF_ACT_GELU_TANH = 0, HF_ACT_GELU_ERF = 1, HF_ACT_RELU = 2 } HfAct;

typedef struct {
    HfFamily family;
    int n_layer, n_head, d_model, d_ff;   /* C = d_model, D = d_model / n_head */
    int n_vocab, n_pos, n_type;            /* n_type: BERT's token types       */
    float ln_eps;
    HfAct act;
    char act_name[32];                      /* as config.json says it          */
} HfConfig;

/* Reads DIR/config.json.  0, or -1 with err. */
int hf_config_load(HfConfig *c, const char *dir, char *err, size_t errlen);

/* "gpt2" or "bert". */
const char *hf_family_name(HfFamily f);

#endif
