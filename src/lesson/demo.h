/* demo.h — `attnviz demo`: the whole lesson as pictures, in order, + index.html.
 *
 * cli_demo.c parses the command line, runs the parts in lesson order and writes
 * the page; the parts that need no model (the lesson's small examples, the √d_k
 * experiment, masking by hand, positional encoding) live there too, the parts
 * that run the model live in demo_model.c.  Every picture goes through
 * demo_add(), which records it for the page (caption EN + VI, the command that
 * reproduces it) and for the summary, in order.
 *
 * Output names: pN-what.png for part N, pN[-what].trace.json for the numbers of
 * part N (docs/trace.schema.json), index.html.  Nothing depends on time or on
 * the output folder, so the same input gives the same bytes. */
#ifndef ATTNVIZ_DEMO_H
#define ATTNVIZ_DEMO_H
#include <stddef.h>
#include "render/html.h"
#include "model/model.h"
#include "render/render.h"
#include "model/tokenizer.h"
#include "pipeline/model_file.h"
#include "trace/trace.h"
#include "render/mapview.h"
#include "trace/maps.h"

#define DEMO_MAX_IMAGES 64

typedef struct {
    const char *out;            /* output folder                                 */
    const char *model_arg;      /* --model as given (NULL: the shipped model)    */
    ModelFile mf;               /* the model, its vocabulary, path and metadata  */
    HtmlPage page;
    int quiet;
    int n_images;
    char images[DEMO_MAX_IMAGES][64];
    int n_traces;
    int n_warnings;
    char err[512];
    /* chosen in part 6, reused in part 9: the coreference head */
    int coref_layer, coref_head;
    char coref_how[768];        /* how it was chosen (caption text)              */
    int coref_taught;           /* 1 if training supervised that head            */
} Demo;

/* "PATH/file" into buf. */
void demo_path(const Demo *d, const char *file, char *buf, size_t n);
/* A command that reproduces a picture, with " --model PATH" when one was given:
 * prefix + model option + suffix. */
void demo_cmd(const Demo *d, char *buf, size_t n, const char *prefix, const char *suffix);
/* Records a written picture: html figure + summary list.  0, or -1 (too many). */
int  demo_add(Demo *d, const char *file, const char *cap_en, const char *cap_vi, const char *cmd);
/* Renders one heatmap / strip / grid / lines view into out/file and demo_add()s it.
 * 0, or -1 with the message already printed (cli_error). */
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
/* Writes out/file from t (images listed relative to out/).  0 or -1 (printed). */
int  demo_write_trace(Demo *d, Trace *t, const char *file);

/* demo_model.c: the parts that run the model (3c, 3d, 4, 5, 6, 8, 9). */
int demo_part3_model(Demo *d);
int demo_part4(Demo *d);
int demo_part5(Demo *d);
int demo_part6(Demo *d);
int demo_part8(Demo *d);
int demo_part9(Demo *d);

#endif
