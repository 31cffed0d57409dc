/* demo.h — the whole lesson as pictures, in order, + index.html (`attnviz demo`).
 *
 * demo_render renders the lesson's parts in order into d->out:
 *   1. attention step by step on the lesson's small examples  demo_steps_by_hand
 *   2. why divide by √d_k (a sampling experiment)              demo_why_sqrt_dk
 *   3. masking: causal mask and masked softmax by hand,        demo_masking_by_hand
 *      the model's decoder and a padded batch,                 demo_masking_in_model
 *      −∞ against −10000 and −1e9                              demo_mask_fill_values
 *   4. multi-head split/concat, every encoder head             demo_multi_head
 *   5. the three kinds of attention on one sentence pair       demo_three_kinds
 *   6. coreference: "it" → animal / street                     demo_coreference
 *   7. positional encoding                                     demo_positional_encoding
 *   8. the Vietnamese example "tôi đi học ."                   demo_vietnamese
 *   9. a head learning (training snapshots, when present)      demo_head_learning
 *  10. does attention explain? knock-outs, taught vs untaught   demo_does_attention_explain
 * The parts that need no model are in demo_by_hand.c, those that run the model
 * in demo_model.c (through the sentence pipeline, pipeline/sentence.h), part 9
 * in demo_snapshots.c, part 10 in demo_explain.c.  Every number in a caption is computed, never copied
 * from the notes.
 *
 * Every picture goes through demo_add(), which records it for the page
 * (caption EN + VI, the command that reproduces it) and the summary, in order.
 * Output names: pN-what.png for part N, pN[-what].trace.json for the numbers of
 * part N (docs/trace.schema.json), index.html.  Nothing depends on time or on
 * the output folder, so the same input gives the same bytes.
 *
 * Errors: -1 with a one-line message in d->err; warnings (an unknown word, a
 * part skipped) are collected in d->warnings for the caller to print.  Nothing
 * here prints or exits. */
#ifndef ATTNVIZ_DEMO_H
#define ATTNVIZ_DEMO_H
#include <stddef.h>
#include "pipeline/model_file.h"
#include "render/html.h"
#include "render/render.h"
#include "trace/trace.h"

#define DEMO_MAX_IMAGES 64

typedef struct {
    const char *out;            /* output folder (must exist)                    */
    const char *model_arg;      /* --model as given (NULL: the shipped model)    */
    ModelFile mf;               /* the model, its vocabulary, path and metadata  */
    HtmlPage page;
    int n_images;
    char images[DEMO_MAX_IMAGES][64];
    int n_traces;
    int n_warnings;
    char warnings[2048];        /* one per line                                  */
    char report[2048];          /* numbers for the terminal (the √d_k table)     */
    char err[1024];
    /* chosen in part 6, reused in part 9: the coreference head */
    int coref_layer, coref_head;
    char coref_how[768];        /* how it was chosen (caption text)              */
    int coref_taught;           /* 1 if training supervised that head            */
} Demo;

/* Loads the model (d->model_arg; NULL: the shipped model).  0, or -1 with d->err. */
int  demo_load(Demo *d);
/* Renders every part and index.html into d->out (an existing folder).  0, or -1 with d->err. */
int  demo_render(Demo *d);
/* Releases what demo_load loaded (accepts a zeroed Demo). */
void demo_free(Demo *d);

/* ---- shared by the parts (demo.c) ---- */

/* Records an error in d->err; returns -1. */
int  demo_fail(Demo *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records a warning line in d->warnings. */
void demo_warn(Demo *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "OUT/file" into buf. */
void demo_path(const Demo *d, const char *file, char *buf, size_t n);
/* A command that reproduces a picture, with " --model PATH" when one was given:
 * prefix + model option + suffix. */
void demo_cmd(const Demo *d, char *buf, size_t n, const char *prefix, const char *suffix);
/* Records a written picture: html figure + summary list.  0, or -1 (too many). */
int  demo_add(Demo *d, const char *file, const char *cap_en, const char *cap_vi, const char *cmd);
/* Renders one picture into OUT/file and demo_add()s it.  0, or -1 with d->err. */
int  demo_heatmap(Demo *d, const char *file, const RenderHeatmap *hm, const char *cap_en,
                  const char *cap_vi, const char *cmd);
int  demo_strip(Demo *d, const char *file, const char *title, const RenderHeatmap *p, int n,
                int arrows, const char *cap_en, const char *cap_vi, const char *cmd);
int  demo_grid(Demo *d, const char *file, const char *title, const RenderHeatmap *cells, int rows,
               int cols, const char *const *row_titles, const char *const *col_titles,
               const char *cap_en, const char *cap_vi, const char *cmd);
int  demo_lines(Demo *d, const char *file, const char *title, const char *const *left, int n_left,
                const char *const *right, int n_right, const float *w, const unsigned char *mask,
                int focus, const char *cap_en, const char *cap_vi, const char *cmd);
int  demo_plot(Demo *d, const char *file, const RenderPlot *p, const char *cap_en, const char *cap_vi,
               const char *cmd);
int  demo_table(Demo *d, const char *file, const char *title, const char *const *cells, int rows,
                int cols, const char *cap_en, const char *cap_vi, const char *cmd);
/* Writes OUT/file from t (images listed relative to OUT).  0, or -1 with d->err. */
int  demo_write_trace(Demo *d, Trace *t, const char *file);

/* ---- the parts, in lesson order; each 0, or -1 with d->err ---- */

/* demo_by_hand.c: the lesson's own small examples, no model. */
int demo_steps_by_hand(Demo *d);
int demo_why_sqrt_dk(Demo *d);
int demo_masking_by_hand(Demo *d, Trace *t);     /* adds its maps to t (p3.trace.json) */
int demo_mask_fill_values(Demo *d, Trace *t);
int demo_positional_encoding(Demo *d);
/* demo_model.c: the trained model on the lesson's sentences. */
int demo_masking_in_model(Demo *d);
int demo_multi_head(Demo *d);
int demo_three_kinds(Demo *d);
int demo_coreference(Demo *d);
int demo_vietnamese(Demo *d);
/* demo_snapshots.c: the coreference head during training. */
int demo_head_learning(Demo *d);
/* demo_explain.c: the taught head, its knock-out, the untaught model (needs the
 * shipped taught model, or skips with a warning). */
int demo_does_attention_explain(Demo *d);

#endif
