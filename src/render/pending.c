/* pending.c — placeholders for the layouts still being written. */
#include "render/draw.h"
#include <stdio.h>

int render_grid(const char *path, const char *title, const RenderHeatmap *cells, int rows, int cols,
                const char *const *row_titles, const char *const *col_titles, const RenderMeta *meta,
                char *err, size_t errlen) {
    snprintf(err, errlen, "render_grid: not implemented yet");
    return -1;
}
int render_lines(const char *path, const char *title, const char *const *left, int n_left,
                 const char *const *right, int n_right, const float *weights, const unsigned char *mask,
                 int focus_row, const RenderMeta *meta, char *err, size_t errlen) {
    snprintf(err, errlen, "render_lines: not implemented yet");
    return -1;
}
int render_plot(const char *path, const RenderPlot *plot, const RenderMeta *meta, char *err, size_t errlen) {
    snprintf(err, errlen, "render_plot: not implemented yet");
    return -1;
}
int render_table(const char *path, const char *title, const char *const *cells, int rows, int cols,
                 const RenderMeta *meta, char *err, size_t errlen) {
    snprintf(err, errlen, "render_table: not implemented yet");
    return -1;
}
