/* llama_config.h — the configuration of a Llama-architecture decoder: the
 * config.json of a Hugging Face folder (LlamaForCausalLM, MistralForCausalLM,
 * Qwen2ForCausalLM, Qwen3ForCausalLM, Gemma3ForCausalLM), or the header of a
 * llama2.c checkpoint (family/llama2c.h fills the same struct).
 *
 * What each family changes on the common decoder (family/llama.h has the pass):
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

#define LLAMA_MAX_LAYERS 512
#define LLAMA_MAX_HEAD_DIM 1024

typedef enum {
    LLAMA_ARCH_LLAMA = 1, LLAMA_ARCH_MISTRAL, LLAMA_ARCH_QWEN2, LLAMA_ARCH_QWEN3, LLAMA_ARCH_GEMMA3,
    LLAMA_ARCH_LLAMA2C   /* a llama2.c checkpoint (family/llama2c.h) */
} LlamaArch;

/* Which dimensions of a head RoPE rotates together. */
typedef enum {
    LLAMA_ROPE_HALF = 0,   /* (i, i + D/2): Hugging Face's rotate_half          */
    LLAMA_ROPE_PAIRS = 1   /* (2i, 2i + 1): llama2.c, Meta's original complex form */
} LlamaRopeLayout;

typedef enum { LLAMA_ROPE_DEFAULT = 0, LLAMA_ROPE_LINEAR = 1, LLAMA_ROPE_LLAMA3 = 2 } LlamaRopeType;

typedef enum { LLAMA_ACT_SILU = 0, LLAMA_ACT_GELU_TANH = 1, LLAMA_ACT_GELU_ERF = 2 } LlamaAct;

/* The two kinds of layer: full causal attention, or a sliding window. */
enum { LLAMA_LAYER_FULL = 0, LLAMA_LAYER_SLIDING = 1 };

/* One RoPE: frequencies theta^(-2i/D), then scaled as the type says. */
typedef struct {
    LlamaRopeType type;
    double theta;              /* base                                          */
    double factor;             /* linear, llama3: positions (or low frequencies) ÷ factor */
    double low_freq_factor;    /* llama3 */
    double high_freq_factor;   /* llama3 */
    double orig_max_pos;       /* llama3: original_max_position_embeddings      */
} LlamaRope;

typedef struct {
    LlamaArch arch;
    int n_layer, n_head, n_kv_head;   /* L, H query heads, Hkv key/value heads   */
    int d_model, head_dim, d_ff;      /* C, D (H·D need not be C), F             */
    int n_vocab, n_pos;               /* V, most positions                       */
    float rms_eps;
    int norm_plus_one;       /* 1: RMSNorm scales by (1 + w) (Gemma 3)          */
    int sandwich;            /* 1: norms after attention and feed-forward too (Gemma 3) */
    LlamaAct act;
    int qkv_bias, o_bias, mlp_bias;
    int qk_norm;             /* per-head RMSNorm of q and k before RoPE (Qwen3, Gemma 3) */
    int tie_embeddings;      /* the output embedding is the token embedding     */
    float embed_scale;       /* 1, or √C (Gemma 3)                              */
    float attn_scale;        /* 1/√D, or 1/√query_pre_attn_scalar (Gemma 3)     */
    float final_softcap;     /* logits = cap·tanh(logits/cap); 0: none          */
    LlamaRopeLayout rope_layout;
    LlamaRope rope[2];       /* [LLAMA_LAYER_FULL], [LLAMA_LAYER_SLIDING]        */
    int window;              /* sliding layers: query i sees keys i-window < j <= i */
    unsigned char layer_kind[LLAMA_MAX_LAYERS];   /* (L) LLAMA_LAYER_FULL or _SLIDING */
    int bos_id;              /* bos_token_id, or -1 when the config has none    */
    char arch_name[48];      /* "LlamaForCausalLM", …, "llama2.c"                */
    char act_name[32];       /* as config.json says it                          */
} LlamaConfig;

/* Reads DIR/config.json.  0, or -1 with err. */
int llama_config_load(LlamaConfig *c, const char *dir, char *err, size_t errlen);

/* The same from config.json's text; path is only for messages. */
int llama_config_parse(LlamaConfig *c, const char *text, const char *path, char *err, size_t errlen);

/* Checks the sizes every family shares (positive, heads dividing, D even,
 * at most LLAMA_MAX_LAYERS layers and heads of LLAMA_MAX_HEAD_DIM); what names the source in messages.
 * 0, or -1 with err. */
int llama_config_check(const LlamaConfig *c, const char *what, char *err, size_t errlen);

/* The inverse frequencies of a RoPE over head size D: inv_freq (D/2). */
void llama_rope_inv_freq(const LlamaRope *r, int D, double *inv_freq);

/* The family an "architectures" entry names (architecture not NULL), else
 * the one a "model_type" names; 0 when it names none attnviz reads. */
LlamaArch llama_config_arch_of(const char *architecture, const char *model_type);

/* "llama", "mistral", "qwen2", "qwen3", "gemma3", "llama2.c". */
const char *llama_arch_name(LlamaArch a);

#endif
