/* demo_common.c — the helpers the lesson's parts share (see demo_common.h). */
#include "demo/demo_common.h"
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

void demo_path(const Demo *d, const char *file, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s", d->out, file);
}

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

int demo_lines(Demo *d, const char *file, const char *title, const TraceMap *m, int head, int focus,
               const char *cap_en, const char *cap_vi, const char *cmd) {
    char path[4200];
    RenderMetaItem it[3];
    RenderMeta meta = meta_of(it, d, title);
    demo_path(d, file, path, sizeof path);
    int rc = render_lines(path, title, trace_row_labels(m), m->Tq, (const char *const *)m->keys, m->Tk,
                          m->heads[head].weights, m->mask, focus, &meta, d->err, sizeof d->err);
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
    if (page_data_add(&d->page_data, t, file, file, NULL, d->err, sizeof d->err) != 0) return -1;
    d->n_traces++;
    return 0;
}
