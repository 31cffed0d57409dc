/* maps.h — small helpers over a trace's attention maps, shared by `run` and
 * `demo`: the standard weights heatmap of one head, and the "strongest link"
 * rule used to answer "which head links `it` to its antecedent?" (the argmax
 * over keys, leaving out the query itself and special <…> tokens, as Clark et
 * al. 2019 score BERT's heads; eval.c applies the same rule). */
#ifndef ATTNVIZ_MAPS_H
#define ATTNVIZ_MAPS_H
#include "render/render.h"
#include "trace.h"

/* 1 if the token is a special token such as <eos>, <pad>, <2fr>. */
int maps_is_special(const char *token);

/* Heatmap of head h's weights: queries down the left, keys on top, viridis on
 * a fixed 0–1 scale, masked cells hatched and labelled 0, values when they fit.
 * The strings and matrices stay owned by the map. */
RenderHeatmap maps_weights_heatmap(const TraceMap *m, int h, const char *title,
                                   const char *subtitle, int highlight_row);

/* Key index of query row q's strongest link in head h (not q itself, not a
 * special token) and its weight in *w; -1 if there is none. */
int maps_strongest_link(const TraceMap *m, int h, int q, float *w);

#endif
