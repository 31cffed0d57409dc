/* demo_common.h — what the parts of the lesson share (demo.h runs them): the
 * lesson being rendered (Demo) and the helpers that write and record its
 * pictures and traces.
 *
 * Every picture goes through demo_add(), which records it for the page
 * (caption EN + VI, the command that reproduces it) and the summary, in order.
 * Output names: pN-what.png for part N, pN[-what].trace.json for the numbers of
 * part N (docs/trace.schema.json), index.html.  Nothing depends on time or on
 * the output folder, so the same input gives the same bytes.
 *
 * Errors: -1 with a one-line message in d->err; warnings (an unknown word, a
 * part skipped) are collected in d->warnings for the caller to print.  Nothing
 * here prints or exits.  The Demo owns its model and page (demo.h frees them). */
#ifndef ATTNVIZ_DEMO_COMMON_H
#define ATTNVIZ_DEMO_COMMON_H
#include <stddef.h>
#include "net/model_file.h"
#include "render/html.h"
#include "render/page.h"
#include "render/render.h"
#include "trace/trace.h"

#define DEMO_MAX_IMAGES 64

typedef struct {
    const char *out;            /* output folder (must exist)                    */
    const char *model_arg;      /* --model as given (NULL: the shipped model)    */
    ModelFile mf;               /* the model, its vocabulary, path and metadata  */
    HtmlPage page;
    PageData page_data;         /* every trace written, for the page's views     */
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
/* The lines view of one head of map m: query row `focus` to every key it may see. */
int  demo_lines(Demo *d, const char *file, const char *title, const TraceMap *m, int head, int focus,
                const char *cap_en, const char *cap_vi, const char *cmd);
int  demo_plot(Demo *d, const char *file, const RenderPlot *p, const char *cap_en, const char *cap_vi,
               const char *cmd);
int  demo_table(Demo *d, const char *file, const char *title, const char *const *cells, int rows,
                int cols, const char *cap_en, const char *cap_vi, const char *cmd);
/* Writes OUT/file from t (images listed relative to OUT) and adds t to the
 * page's data (render/page.h).  0, or -1 with d->err. */
int  demo_write_trace(Demo *d, Trace *t, const char *file);

#endif
