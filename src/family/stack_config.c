/* stack_config.c — see stack_config.h. */
#include "family/stack_config.h"
#include "core/errmsg.h"
#include "core/sizes.h"
#include <math.h>

const char *stack_family_name(StackFamily f) {
    static const char *name[] = {"unknown", "gpt2", "bert", "llama", "mistral", "qwen2", "qwen3", "gemma3", "llama2.c"};
    return f >= STACK_GPT2 && f <= STACK_LLAMA2C ? name[f] : name[0];
}

int stack_config_check(const StackConfig *c, const char *what, char *err, size_t errlen) {
    if (c->n_layer < 1 || c->n_head < 1 || c->n_kv_head < 1 || c->d_model < 1 || c->head_dim < 1 || c->d_ff < 1 ||
        c->n_vocab < 1 || c->n_pos < 1 || c->n_type < 0)
        return errmsg_set(err, errlen, "%s: every size must be positive", what);
    if (c->n_layer > STACK_MAX_LAYERS)
        return errmsg_set(err, errlen, "%s: %d layers is more than attnviz reads (%d)", what, c->n_layer, STACK_MAX_LAYERS);
    if (c->n_head % c->n_kv_head)
        return errmsg_set(err, errlen, "%s: the %d query heads are not a multiple of the %d key/value heads", what,
                          c->n_head, c->n_kv_head);
    if (c->rotary && c->head_dim % 2)
        return errmsg_set(err, errlen, "%s: the head size %d is odd; RoPE rotates pairs", what, c->head_dim);
    if (c->head_dim > STACK_MAX_HEAD_DIM)
        return errmsg_set(err, errlen, "%s: the head size %d is more than attnviz reads (%d)", what, c->head_dim,
                          STACK_MAX_HEAD_DIM);
    /* the weights of one layer and the embeddings, every product checked */
    size_t C = (size_t)c->d_model, QD, KD, attn, ffn, emb, pos, all;
    int ok = size_mul(&QD, (size_t)c->n_head, (size_t)c->head_dim) &&
             size_mul(&KD, (size_t)c->n_kv_head, (size_t)c->head_dim) && size_mul(&attn, QD + KD, C) &&
             size_mul(&ffn, 3 * C, (size_t)c->d_ff) && size_mul(&emb, (size_t)c->n_vocab, C) &&
             size_mul(&pos, (size_t)c->n_pos + (size_t)c->n_type, C) && size_add(&all, attn, ffn) &&
             size_add(&all, all, emb) && size_add(&all, all, pos);
    if (!ok || all > (size_t)4e10)
        return errmsg_set(err, errlen, "%s: the sizes ask for more than 40 billion weights per layer", what);
    return 0;
}

void stack_rope_inv_freq(const StackRope *r, int D, double *inv_freq) {
    for (int i = 0; i < D / 2; i++) {
        double f = pow(r->theta, -2.0 * i / D);
        if (r->type == STACK_ROPE_LINEAR) f /= r->factor;
        else if (r->type == STACK_ROPE_LLAMA3) {   /* long wavelengths ÷ factor, short kept, a ramp between */
            double wavelen = 2 * M_PI / f;
            double low_wl = r->orig_max_pos / r->low_freq_factor, high_wl = r->orig_max_pos / r->high_freq_factor;
            if (wavelen > low_wl) f /= r->factor;
            else if (wavelen >= high_wl) {
                double s = (r->orig_max_pos / wavelen - r->low_freq_factor) / (r->high_freq_factor - r->low_freq_factor);
                f = (1 - s) * f / r->factor + s * f;
            }
        }
        inv_freq[i] = f;
    }
}
