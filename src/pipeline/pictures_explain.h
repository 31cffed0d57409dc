/* pictures_explain.h — the pictures that test what a map claims: for one
 * query token its raw weights beside norm-weighted attention and rollout
 * (model/aggregate.h), and head importance by knock-out
 * (pipeline/importance.h).  pictures.c draws them into a sentence's page
 * (pictures_aggregate, pictures_importance); the demo draws them as single
 * pictures (pictures_draw_*).  Errors: -1 and a one-line message. */
#ifndef ATTNVIZ_PICTURES_EXPLAIN_H
#define ATTNVIZ_PICTURES_EXPLAIN_H
#include <stddef.h>
#include "pipeline/importance.h"
#include "pipeline/pictures_common.h"
#include "render/render.h"
#include "trace/trace.h"

/* Raw weights | norm-weighted | rollout of source token q, from a trace whose
 * encoder heads carry norm_weighted (importance_trace_aggregates) and the
 * rollout it returned; heads in `ablated` are marked ✕.  0, or -1 with err. */
int pictures_draw_aggregate(const char *path, const Trace *t, int q, const float *rollout, const char *ablated,
                            const char *title, const RenderMeta *meta, char *err, size_t errlen);
/* Per kind of attention a layers × heads grid of each head's importance
 * summary, one diverging scale centred on 0.  0, or -1 with err. */
int pictures_draw_importance(const char *path, const Importance *im, const char *title, const RenderMeta *meta,
                             char *err, size_t errlen);

/* In a sentence's page (w->ps->rollout given): explain.{q}-{tok}.png for query
 * token q, with its figure.  0 (also when there is nothing to draw), or -1. */
int pictures_aggregate(Show *w, int q);
/* In a sentence's page (w->ps->importance given): the importance section,
 * importance.png and importance.tokens.png.  0, or -1. */
int pictures_importance(Show *w);
/* In a sentence's page (w->ps->attribution given): the attribution section and
 * attribution.png.  0, or -1. */
int pictures_attribution(Show *w);

#endif
