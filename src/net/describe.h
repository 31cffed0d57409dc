/* describe.h — what `info` prints of a model, for net.h's net_describe:
 *   own_describe     attnviz's own checkpoint: configuration, parameters,
 *                    training, held-out scores, the knock-out table and the
 *                    shipped models (verbose: every tensor and metadata field)
 *   family_describe  a foreign folder or llama2.c file: family, heads and
 *                    key/value heads, head size, RoPE, window, positions,
 *                    vocabulary, parameters, dtype and tensors
 * Both print to out and allocate nothing that outlives the call. */
#ifndef ATTNVIZ_DESCRIBE_H
#define ATTNVIZ_DESCRIBE_H
#include <stdio.h>
#include "family/hf_file.h"
#include "net/model_file.h"

void own_describe(const ModelFile *mf, int verbose, FILE *out);
void family_describe(const HfFile *f, FILE *out);

#endif
