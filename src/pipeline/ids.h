/* ids.h — token ids through any model (net/net.h), as `attnviz forward`
 * writes them: a developer command for the tests and the benchmarks.
 *
 *   ids_forward  the translator (an attnviz checkpoint): --src / --tgt
 *                batches ("5 6 7;8 9", shorter items padded with id 0 and
 *                masked by their length) → one JSON of every item's maps, its
 *                norm-weighted views and rollout, and the logits; a foreign
 *                model: one list of ids (no special tokens added) → the trace
 *                of every head (a name ending in .bin: trace.bin), every
 *                position's logits as raw float32 (T, V), the stages' times
 *   ids_bench    N training steps of an attnviz checkpoint on random tokens
 *                (forward, backward, clip, Adam: train's steps), with the
 *                "train_bench" line the bench scripts read
 * What is printed (timings, the bench's lines) goes to out.  Errors: -1 and
 * one line in err ("forward: …"). */
#ifndef ATTNVIZ_IDS_H
#define ATTNVIZ_IDS_H
#include <stddef.h>
#include <stdio.h>
#include "net/net.h"

typedef struct {
    const char *src, *tgt;   /* ids: "5 6 7;8 9" (tgt: the translator's decoder input) */
    const char *out;         /* the JSON, or a foreign model's trace.json / trace.bin   */
    const char *logits;      /* a foreign model's logits file, or NULL                   */
    int steps;               /* keep every head's step matrices                          */
    int timing;              /* print the stages' milliseconds (a foreign model)         */
    double load_ms;          /* how long opening the model took, for that line           */
} IdsSpec;

int ids_forward(Net *n, const IdsSpec *spec, FILE *out, char *err, size_t errlen);
int ids_bench(Net *n, int steps, int B, int src_mean, int tgt_mean, FILE *out, char *err, size_t errlen);

#endif
