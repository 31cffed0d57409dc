/* llama2c.h — checkpoints of Karpathy's llama2.c (run.c), the legacy
 * "version 0" export: stories15M/42M/110M, stories260K and the models people
 * train with llama2.c.  They load into the stack of family/stack.h.
 *
 * Format (little-endian):
 *   7 int32   dim C, hidden_dim F, n_layers L, n_heads H, n_kv_heads Hkv,
 *             vocab_size V (negative: the classifier is not the token
 *             embedding and is stored at the end), seq_len P
 *   float32   token_embedding (V, C); rms_att (L, C); wq (L, C, C);
 *             wk (L, Hkv·D, C); wv (L, Hkv·D, C); wo (L, C, C); rms_ffn (L, C);
 *             w1 (L, F, C); w2 (L, C, F); w3 (L, F, C); rms_final (C);
 *             P·D floats of an unused legacy RoPE table; [wcls (V, C)]
 * with D = C/H, every weight stored (out, in).  The model: RMSNorm eps 1e-5,
 * RoPE base 10000 on consecutive pairs (2i, 2i+1) of each head (not Hugging
 * Face's rotate-half), query head h with key/value head h / (H/Hkv), SwiGLU
 * w2(silu(w1 x) · w3 x), no biases.
 * The file is mapped read-only and the weights used in place.  Every count
 * made of the header is checked (core/sizes.h) before the length is compared.  Newer exports
 * (version 1 and 2, magic "ak42") are named and refused; the file must be
 * exactly as long as its header says.
 * Errors: -1 and one line naming the file and what is wrong. */
#ifndef ATTNVIZ_LLAMA2C_H
#define ATTNVIZ_LLAMA2C_H
#include <stddef.h>
#include "family/stack.h"

/* Reads the checkpoint at path into m.  0, or -1 with err (m is then freed). */
int llama2c_load(StackModel *m, const char *path, char *err, size_t errlen);

#endif
