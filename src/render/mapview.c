/* mapview.c — see mapview.h. */
#include "render/mapview.h"

RenderHeatmap mapview_weights_heatmap(const TraceMap *m, int h, const char *title,
                                      const char *subtitle, int highlight_row) {
    RenderHeatmap hm = {0};
    hm.title = title;
    hm.subtitle = subtitle;
    hm.values = m->heads[h].weights;
    hm.rows = m->Tq;
    hm.cols = m->Tk;
    hm.row_labels = trace_row_labels(m);
    hm.col_labels = (const char *const *)m->keys;
    hm.row_axis = "query";
    hm.col_axis = "key";
    hm.mask = m->mask;
    hm.mask_label = "0";
    hm.cmap = RENDER_CMAP_VIRIDIS;
    hm.vmin = 0;
    hm.vmax = 1;
    hm.show_values = -1;
    hm.highlight_row = highlight_row;
    return hm;
}
