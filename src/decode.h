/* decode.h — greedy decoding with the encoder–decoder model.
 *
 * The decoder input starts with the target-language tag (<2fr> or <2vi>); at
 * each step the model runs on (source, prefix) and the most probable next token
 * is appended, until <eos> or max_len tokens.  Special tokens other than <eos>
 * (<pad>, <unk>, <bos>, the tags) are never chosen.  The search is
 * eval_greedy_decode's (eval.h), so `eval` measures what `run` shows. */
#ifndef ATTNVIZ_DECODE_H
#define ATTNVIZ_DECODE_H
#include <stddef.h>
#include "model.h"

/* src (S) ids ending in <eos>; out receives the decoder input tag, y1 … yn
 * (without <eos>; capacity max_len + 1), *T = n + 1.  After the call the model's
 * activations are those of the forward pass on exactly that decoder input.
 * 0, or -1 with err. */
int decode_greedy(Model *m, const int *src, int S, int tag, int max_len, int *out, int *T,
                  char *err, size_t errlen);

#endif
