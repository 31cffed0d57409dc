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

#endif
