/* demo.c — the lesson's driver and the helpers its parts share (see demo.h). */
#include "demo/demo.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- messages */

int demo_fail(Demo *d, const char *fmt, ...) {
    char msg[sizeof d->err];   /* fmt's arguments may point into d->err */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(d->err, msg, sizeof msg);
    return -1;
}

void demo_warn(Demo *d, const char *fmt, ...) {
    size_t len = strlen(d->warnings);
    va_list ap;
    va_start(ap, fmt);
    if (len + 2 < sizeof d->warnings) vsnprintf(d->warnings + len, sizeof d->warnings - len - 1, fmt, ap);
    va_end(ap);
    len = strlen(d->warnings);
    if (len + 1 < sizeof d->warnings) { d->warnings[len] = '\n'; d->warnings[len + 1] = '\0'; }
    d->n_warnings++;
}

/* ---------------------------------------------------------------- pictures */

void demo_path(const Demo *d, const char *file, char *buf, size_t n) { snprintf(buf, n, "%s/%s", d->out, file); }

void demo_cmd(const Demo *d, char *buf, size_t n, const char *prefix, const char *suffix) {
    if (d->model_arg) snprintf(buf, n, "%s --model %s%s%s", prefix, d->model_arg, suffix ? " " : "", suffix ? suffix : "");
    else snprintf(buf, n, "%s%s%s", prefix, suffix ? " " : "", suffix ? suffix : "");
}

int demo_add(Demo *d, const char *file, const char *cap_en, const char *cap_vi, const char *cmd) {
    if (d->n_images == DEMO_MAX_IMAGES) return demo_fail(d, "demo: too many pictures (internal limit %d)", DEMO_MAX_IMAGES);
    snprintf(d->images[d->n_images++], sizeof d->images[0], "%s", file);
    html_figure(&d->page, file, cap_en, cap_vi, cmd);
    return 0;
}

/* PNG text chunks of every demo picture: title, "attnviz demo", the model. */
static RenderMeta meta_of(RenderMetaItem *items, const Demo *d, const char *title) {
    items[0] = (RenderMetaItem){"Title", title ? title : ""};
    items[1] = (RenderMetaItem){"Source", "attnviz demo"};
    items[2] = (RenderMetaItem){"Model", d->mf.path};
    return (RenderMeta){items, 3};
}

/* After a render_* call into OUT/file: the error named with the file, or the picture recorded. */
static int rendered(Demo *d, int rc, const char *file, const char *cap_en, const char *cap_vi, const char *cmd) {
    if (rc != 0) return demo_fail(d, "%s: %s", file, d->err);
    return demo_add(d, file, cap_en, cap_vi, cmd);
}

int demo_heatmap(Demo *d, const char *file, const RenderHeatmap *hm, const char *cap_en, const char *cap_vi,
                 const char *cmd) {
    char path[4200];
    RenderMetaItem it[3];
    RenderMeta meta = meta_of(it, d, hm->title);
    demo_path(d, file, path, sizeof path);
    return rendered(d, render_heatmap(path, hm, &meta, d->err, sizeof d->err), file, cap_en, cap_vi, cmd);
}

int demo_strip(Demo *d, const char *file, const char *title, const RenderHeatmap *p, int n, int arrows,
               const char *cap_en, const char *cap_vi, const char *cmd) {
    char path[4200];
    RenderMetaItem it[3];
    RenderMeta meta = meta_of(it, d, title);
    demo_path(d, file, path, sizeof path);
    return rendered(d, render_panels(path, title, p, n, arrows, &meta, d->err, sizeof d->err), file, cap_en, cap_vi,
                    cmd);
}

int demo_grid(Demo *d, const char *file, const char *title, const RenderHeatmap *cells, int rows, int cols,
              const char *const *row_titles, const char *const *col_titles, const char *cap_en, const char *cap_vi,
              const char *cmd) {
    char path[4200];
    RenderMetaItem it[3];
    RenderMeta meta = meta_of(it, d, title);
    demo_path(d, file, path, sizeof path);
    int rc = render_grid(path, title, cells, rows, cols, row_titles, col_titles, &meta, d->err, sizeof d->err);
    return rendered(d, rc, file, cap_en, cap_vi, cmd);
}

int demo_lines(Demo *d, const char *file, const char *title, const char *const *left, int n_left,
               const char *const *right, int n_right, const float *w, const unsigned char *mask, int focus,
               const char *cap_en, const char *cap_vi, const char *cmd) {
    char path[4200];
    RenderMetaItem it[3];
    RenderMeta meta = meta_of(it, d, title);
    demo_path(d, file, path, sizeof path);
    int rc = render_lines(path, title, left, n_left, right, n_right, w, mask, focus, &meta, d->err, sizeof d->err);
    return rendered(d, rc, file, cap_en, cap_vi, cmd);
}

int demo_plot(Demo *d, const char *file, const RenderPlot *p, const char *cap_en, const char *cap_vi,
              const char *cmd) {
    char path[4200];
    RenderMetaItem it[3];
    RenderMeta meta = meta_of(it, d, p->title);
    demo_path(d, file, path, sizeof path);
    return rendered(d, render_plot(path, p, &meta, d->err, sizeof d->err), file, cap_en, cap_vi, cmd);
}

int demo_table(Demo *d, const char *file, const char *title, const char *const *cells, int rows, int cols,
               const char *cap_en, const char *cap_vi, const char *cmd) {
    char path[4200];
    RenderMetaItem it[3];
    RenderMeta meta = meta_of(it, d, title);
    demo_path(d, file, path, sizeof path);
    return rendered(d, render_table(path, title, cells, rows, cols, &meta, d->err, sizeof d->err), file, cap_en,
                    cap_vi, cmd);
}

int demo_write_trace(Demo *d, Trace *t, const char *file) {
    char path[4200];
    demo_path(d, file, path, sizeof path);
    if (trace_write_json(t, path, d->err, sizeof d->err) != 0) return -1;
    d->n_traces++;
    return 0;
}

/* ------------------------------------------------------------------ driver */

int demo_load(Demo *d) {
    if (model_file_load(&d->mf, d->model_arg, d->err, sizeof d->err) != 0) return -1;
    if (d->mf.m.config.arch != MODEL_ENC_DEC)
        return demo_fail(d, "demo needs an encoder–decoder model; %s is %s", d->mf.path,
                         model_arch_name(d->mf.m.config.arch));
    return 0;
}

/* Every part, in lesson order.  Part 3 keeps one trace for its by-hand maps. */
static int all_parts(Demo *d) {
    Trace t3;
    trace_init(&t3);
    int rc = -1;
    if (demo_steps_by_hand(d) || demo_why_sqrt_dk(d)) goto done;
    if (demo_masking_by_hand(d, &t3) || demo_masking_in_model(d) || demo_mask_fill_values(d, &t3)) goto done;
    if (demo_write_trace(d, &t3, "p3.trace.json")) goto done;
    if (demo_multi_head(d) || demo_three_kinds(d) || demo_coreference(d)) goto done;
    if (demo_positional_encoding(d) || demo_vietnamese(d) || demo_head_learning(d)) goto done;
    if (demo_does_attention_explain(d)) goto done;
    rc = 0;
done:
    trace_free(&t3);
    return rc;
}

int demo_render(Demo *d) {
    html_page_begin(&d->page, "attnviz — the attention lesson in pictures",
                    "Bài học về attention qua hình ảnh. Every picture: caption in English and Vietnamese, and the "
                    "attnviz command that makes it.");
    html_raw(&d->page, "<p>Model: <code>");
    html_text(&d->page, d->mf.path);
    html_raw(&d->page, "</code>. Made by <code>attnviz demo</code>.</p>\n");
    if (all_parts(d) != 0) {
        html_page_free(&d->page);
        return -1;
    }
    char path[4200];
    demo_path(d, "index.html", path, sizeof path);
    return html_page_write(&d->page, path, d->err, sizeof d->err);
}

void demo_free(Demo *d) {
    model_file_free(&d->mf);
}
