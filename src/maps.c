/* maps.c — see maps.h. */
#include "maps.h"
#include <string.h>

int maps_is_special(const char *w) {
    size_t n = strlen(w);
    return n >= 3 && w[0] == '<' && w[n - 1] == '>';
}

RenderHeatmap maps_weights_heatmap(const TraceMap *m, int h, const char *title,
                                   const char *subtitle, int highlight_row) {
    RenderHeatmap hm = {0};
    hm.title = title;
    hm.subtitle = subtitle;
    hm.values = m->heads[h].weights;
    hm.rows = m->Tq;
    hm.cols = m->Tk;
    hm.row_labels = (const char *const *)m->queries;
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

int maps_strongest_link(const TraceMap *m, int h, int q, float *w) {
    int best = -1;
    float bw = -1;
    for (int j = 0; j < m->Tk; j++) {
        if (j == q || maps_is_special(m->keys[j])) continue;
        float x = m->heads[h].weights[(size_t)q * m->Tk + j];
        if (x > bw) { bw = x; best = j; }
    }
    *w = bw;
    return best;
}
