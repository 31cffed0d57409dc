/* maps.h — the "strongest link" rule that answers "which head links `it` to
 * its antecedent?": the argmax over keys, leaving out the query itself and
 * special <…> tokens, as Clark et al. 2019 score BERT's heads.  `run`, `demo`
 * and `eval` all use it, so what eval measures is what the pictures show. */
#ifndef ATTNVIZ_MAPS_H
#define ATTNVIZ_MAPS_H
#include "trace/trace.h"

/* 1 if the token is a special token such as <eos>, <pad>, <2fr>, <|endoftext|>,
 * or BERT's [CLS], [SEP], [PAD]. */
int maps_is_special(const char *token);

/* Strongest link of one attention row: argmax over keys 0..n-1 skipping
 * `exclude` (-1: none) and keys with skip[j] != 0 (skip may be NULL).  Ties:
 * the first.  -1 when no key is left. */
int maps_argmax_link(const float *row, int n, int exclude, const unsigned char *skip);

/* Key index of query row q's strongest link in head h (not q itself, not a
 * special token) and its weight in *w; -1 if there is none. */
int maps_strongest_link(const TraceMap *m, int h, int q, float *w);
/* skip[j] (m->Tk of them) = 1 where key j is a special token: what
 * maps_strongest_link leaves out, for a caller reading many heads of m. */
void maps_special_keys(const TraceMap *m, unsigned char *skip);

#endif
