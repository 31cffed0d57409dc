/* maps.h — small helpers over a trace's attention maps, shared by `run`
 * and `demo`: the "strongest link"
 * rule used to answer "which head links `it` to its antecedent?" (the argmax
 * over keys, leaving out the query itself and special <…> tokens, as Clark et
 * al. 2019 score BERT's heads; eval.c applies the same rule). */
#ifndef ATTNVIZ_MAPS_H
#define ATTNVIZ_MAPS_H
#include "trace/trace.h"

/* 1 if the token is a special token such as <eos>, <pad>, <2fr>. */
int maps_is_special(const char *token);

/* Key index of query row q's strongest link in head h (not q itself, not a
 * special token) and its weight in *w; -1 if there is none. */
int maps_strongest_link(const TraceMap *m, int h, int q, float *w);

/* The eval's best coreference head, when the checkpoint's metadata JSON (the
 * __metadata__ object) records it as "coreference_head":
 * "{\"map\": \"encoder.L.self\", \"head\": H, \"accuracy\": A}".  Fills
 * layer, head and acc (-1 when absent) and returns 1 if it names a head of a
 * model with n_layers encoder layers and n_heads heads; else 0. */
int maps_coref_head_from_metadata(const char *metadata_json, int n_layers, int n_heads,
                                  int *layer, int *head, double *acc);

/* 1 if the checkpoint's metadata lists (map_id, head) in "supervised_heads"
 * (JSON text: [{"map": …, "head": H, "target": "coreference"|"alignment", …}]),
 * i.e. the head was trained with gold targets rather than discovered; else 0. */
int maps_head_supervised(const char *metadata_json, const char *map_id, int head);

#endif
