/* pictures.h — the second half of the sentence pipeline: one sentence's trace
 * (model_trace after a forward pass, sentence.h) → every picture, its page and
 * trace.json, in one folder:
 *
 *   {map}.h{H}.png          a heatmap per map and head (encoder.0.self.h2.png …)
 *   grid.{stack}.{kind}.png every layer × head of one kind ("model view")
 *   lines.{pos}-{tok}.png   lines view of each query token (pronouns by default,
 *                           the first 6)
 *   {map}.h{H}.q{pos}.png   that head as a heatmap with the query row outlined
 *   steps.{map}.h{H}.png    the step strip of the focus head
 *   explain.{pos}-{tok}.png raw weights, norm-weighted attention and rollout of
 *                           each query token side by side (when rollout is given)
 *   importance.png, importance.tokens.png  head importance by knock-out (--importance)
 *   trace.json, index.html
 *
 * Every picture is listed in the trace's images and on the page, in order.
 * Each <unk> the translation copied (sentence.h) is named where cross-attention
 * is drawn: "<unk> copied from 'Alice' (weight 0.83)" on the cross-attention
 * grid's second title line, the copy layer's heatmaps and the page.
 * For real models the spec chooses layers and heads (the grids and the
 * per-head heatmaps show only those), caps the per-head heatmaps, and keeps
 * only the strongest links of the lines views.
 * Errors: -1 and a one-line message; what was written before stays (the caller
 * owns the folder). */
#ifndef ATTNVIZ_PICTURES_H
#define ATTNVIZ_PICTURES_H
#include <stddef.h>
#include "pipeline/importance.h"
#include "pipeline/model_file.h"
#include "pipeline/sentence.h"
#include "render/html.h"
#include "render/render.h"
#include "trace/trace.h"

typedef struct {
    const char *dir;          /* the sentence's output folder                          */
    const char *model_path;   /* shown on the page and in PNG text chunks              */
    const char *command;      /* the command line that made it, shown on the page      */
    const char *query;        /* lines views for this source token; NULL: the pronouns */
    int focus_map, focus_head;/* the step strip's head (map index; -1: none)           */
    int focus_given;          /* 1: the user chose it (--focus): the lines views draw it
                                 too when it is a self-attention head (links_view)       */
    int keep_steps;           /* 1: trace.json keeps every head's step matrices;
                                 0: only the weights (the strip's head is drawn first) */
    int no_pictures;          /* 1: trace.json and index.html only                     */
    CorefHead coref;          /* the model's coreference head (layer -1: none)         */
    const char *ablated;      /* knocked-out heads "encoder.2.self.0, …" (NULL/"": none);
                                 named in titles and PNG text chunks                     */
    const Importance *importance; /* run --importance: the grids (NULL: none)            */
    const char *metadata;     /* the checkpoint's metadata JSON (NULL: none): which heads
                                 were taught (supervised_heads), marked in every picture */
    const float *rollout;     /* (E, S, S) encoder rollout (aggregate.h), or NULL: with the
                                 norm-weighted matrices in the trace, drawn beside the raw
                                 weights of each query token                             */
    /* Real models (12 layers × 12 heads, hundreds of tokens): */
    const unsigned char *layer_on; int n_layer_on;  /* 1 = draw layer l; NULL: every layer */
    const unsigned char *head_on;  int n_head_on;   /* 1 = draw head h; NULL: every head   */
    int max_heatmaps;         /* per-head heatmaps at most (in map order); 0: no cap   */
    int lines_top;            /* lines views: the query and its k strongest keys; 0: all */
    int no_trace;             /* 1: no trace.json (--trace none)                       */
    const char *outside;      /* "outside what the model was trained on: …" (world.h), or
                                 NULL/"": on the grids' second title line, the page, and
                                 marked on every heatmap's subtitle                      */
} PictureSpec;

typedef struct {
    int n_heatmaps_skipped;   /* selected heads left out by max_heatmaps */
    int n_pictures;
    double ms_pictures, ms_trace;   /* time spent drawing, and writing trace.json */
} PictureReport;

/* Draws every picture of sentence s from its trace t (which gains the image
 * list), then writes DIR/trace.json and DIR/index.html.  0, or -1 with err. */
int pictures_show_sentence(const PictureSpec *ps, const Sentence *s, Trace *t, PictureReport *rep,
                           char *err, size_t errlen);

/* "<unk> copied from 'Alice' (weight 0.83), …" for s's copies into out ("" none). */
void pictures_copy_note(const Sentence *s, char *out, size_t n);

/* 1 if "MAP.H" is an item of a list "encoder.2.self.0, decoder.1.cross.3". */
int pictures_list_has(const char *list, const char *map, int head);

/* The knock-out views as single pictures (the demo draws them too):
 * raw weights | norm-weighted | rollout of source token q, from a trace whose
 * encoder heads carry norm_weighted (importance_trace_aggregates) and the
 * rollout it returned; heads in `ablated` are marked ✕.  0, or -1 with err. */
int pictures_draw_aggregate(const char *path, const Trace *t, int q, const float *rollout, const char *ablated,
                            const char *title, const RenderMeta *meta, char *err, size_t errlen);
/* Per kind of attention a layers × heads grid of each head's importance
 * summary, one diverging scale centred on 0.  0, or -1 with err. */
int pictures_draw_importance(const char *path, const Importance *im, const char *title, const RenderMeta *meta,
                             char *err, size_t errlen);

#endif
