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
 * (the explain and importance pictures are drawn by pictures_explain.h; what
 * to draw, PictureSpec, is in pictures_common.h).
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
#include "pipeline/pictures_common.h"
#include "pipeline/sentence.h"
#include "trace/trace.h"


typedef struct {
    int n_heatmaps_skipped;   /* selected heads left out by max_heatmaps */
    int n_pictures;
    double ms_pictures, ms_trace;   /* time spent drawing, and writing the trace */
    char trace_file[16];      /* "trace.json", "trace.bin", or "" (--trace none) */
    int trace_switched;       /* 1: trace.bin because trace.json would pass TRACE_JSON_MAX_BYTES */
    size_t trace_json_bytes;  /* trace_json_estimate of this trace when it chose (auto), else 0 */
    int links_heads_only;     /* 1: heatmaps of the links' heads only (a long text)     */
    int long_tokens;          /* a long text's tokens (its maps streamed, longtext.h), else 0 */
    int long_block;           /* and the tokens a pooled block holds                 */
    int long_from, long_to;   /* the --window drawn whole, or -1                      */
} PictureReport;

/* Draws every picture of sentence s from its trace t (which gains the image
 * list), then writes DIR/trace.json (or trace.bin: PictureSpec's trace_format)
 * and DIR/index.html.  0, or -1 with err. */
int pictures_show_sentence(const PictureSpec *ps, const Sentence *s, Trace *t, PictureReport *rep,
                           char *err, size_t errlen);

/* "<unk> copied from 'Alice' (weight 0.83), …" for s's copies into out ("" none). */
void pictures_copy_note(const Sentence *s, char *out, size_t n);

#endif
