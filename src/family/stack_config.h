/* stack_config.h — the configuration of the one Transformer stack
 * (family/stack.h): its sizes and every way the families differ, as numbers
 * and flags.  Filled by the readers of config.json (family/hf_config.h for
 * GPT-2 and BERT, family/llama_config.h for the Llama family) and of a
 * llama2.c header (family/llama2c.h); checked once by stack_config_check.
 * Letters as in family/stack.h.  Errors: -1 and one line in err. */
#ifndef ATTNVIZ_STACK_CONFIG_H
#define ATTNVIZ_STACK_CONFIG_H
#include <stddef.h>

#define STACK_MAX_LAYERS 512
#define STACK_MAX_HEAD_DIM 1024

typedef enum {
    STACK_GPT2 = 1, STACK_BERT = 2, STACK_LLAMA, STACK_MISTRAL, STACK_QWEN2, STACK_QWEN3, STACK_GEMMA3,
    STACK_LLAMA2C   /* a llama2.c checkpoint (family/llama2c.h) */
} StackFamily;

typedef enum { STACK_NORM_LAYER = 0, STACK_NORM_RMS = 1 } StackNorm;

/* The feed-forward's activation; gated (SwiGLU, GeGLU) when the config says. */
typedef enum { STACK_ACT_GELU_TANH = 0, STACK_ACT_GELU_ERF, STACK_ACT_RELU, STACK_ACT_SILU } StackAct;

/* Which dimensions of a head RoPE rotates together. */
typedef enum {
    STACK_ROPE_HALF = 0,   /* (i, i + D/2): Hugging Face's rotate_half             */
    STACK_ROPE_PAIRS = 1   /* (2i, 2i + 1): llama2.c, Meta's original complex form */
} StackRopeLayout;

typedef enum { STACK_ROPE_DEFAULT = 0, STACK_ROPE_LINEAR = 1, STACK_ROPE_LLAMA3 = 2 } StackRopeType;

/* The two kinds of layer: full attention, or a sliding window. */
enum { STACK_LAYER_FULL = 0, STACK_LAYER_SLIDING = 1 };

/* One RoPE: frequencies theta^(-2i/D), then scaled as the type says. */
typedef struct {
    StackRopeType type;
    double theta;              /* base                                                    */
    double factor;             /* linear, llama3: positions (or low frequencies) ÷ factor */
    double low_freq_factor;    /* llama3 */
    double high_freq_factor;   /* llama3 */
    double orig_max_pos;       /* llama3: original_max_position_embeddings                */
} StackRope;

typedef struct {
    StackFamily family;
    int n_layer, n_head, n_kv_head;   /* L, H query heads, Hkv key/value heads      */
    int d_model, head_dim, d_ff;      /* C, D (H·D need not be C), F                */
    int n_vocab, n_pos, n_type;       /* V, P, BERT's token types (0: none)         */
    StackNorm norm;
    float norm_eps;
    int norm_plus_one;       /* 1: RMSNorm scales by (1 + w) (Gemma 3)                  */
    int post_norm;           /* 1: norms after the residual adds (BERT); else before   */
    int sandwich;            /* 1: norms on the attention's and feed-forward's outputs too (Gemma 3) */
    StackAct act;
    int gated;               /* 1: act(gate(h)) · up(h) (SwiGLU, GeGLU); 0: act(up(h))  */
    int fused_qkv;           /* 1: q, k, v from one (C, QD + 2·KD) product (GPT-2, BERT) */
    int qkv_bias, o_bias, mlp_bias, norm_bias;   /* which biases the layers have           */
    int qk_norm;             /* per-head RMSNorm of q and k before RoPE (Qwen3, Gemma 3) */
    int tie_embeddings;      /* the output embedding is the token embedding            */
    int causal;              /* 1: a decoder (masked self-attention)                   */
    int mask_padding;        /* 1: padding after the text is hidden as keys (GPT-2, BERT) */
    int rotary;              /* 1: RoPE; 0: learned positions (pos (P, C))             */
    float embed_scale;       /* 1, or √C (Gemma 3)                                     */
    float attn_scale;        /* 1/√D, or 1/√query_pre_attn_scalar (Gemma 3)            */
    float final_softcap;     /* logits = cap·tanh(logits/cap); 0: none                 */
    StackRopeLayout rope_layout;
    StackRope rope[2];       /* [STACK_LAYER_FULL], [STACK_LAYER_SLIDING]               */
    int window;              /* sliding layers: query i sees keys i-window < j <= i    */
    unsigned char layer_kind[STACK_MAX_LAYERS];   /* (L) STACK_LAYER_FULL or _SLIDING  */
    int bos_id;              /* bos_token_id, or -1 when the config has none           */
    char arch_name[48];      /* "LlamaForCausalLM", …, "llama2.c"; "" for GPT-2, BERT  */
    char act_name[32];       /* as config.json says it                                 */
} StackConfig;

/* Checks the sizes every family shares (positive, heads dividing, D even
 * with RoPE, at most STACK_MAX_LAYERS layers and STACK_MAX_HEAD_DIM, no
 * product of them wrapping or above 40 billion weights per layer); what
 * names the source in messages.  0, or -1 with err. */
int stack_config_check(const StackConfig *c, const char *what, char *err, size_t errlen);

/* The inverse frequencies of a RoPE over head size D: inv_freq (D/2). */
void stack_rope_inv_freq(const StackRope *r, int D, double *inv_freq);

/* "gpt2", "bert", "llama", "mistral", "qwen2", "qwen3", "gemma3", "llama2.c". */
const char *stack_family_name(StackFamily f);

#endif
