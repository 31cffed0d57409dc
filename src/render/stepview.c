/* stepview.c — see stepview.h. */
#include "render/stepview.h"
#include <stdio.h>

static const char *const step_title[STEP_COUNT] = {
    "1. scores = Q·Kᵀ", "2. scaled = scores / √d_k", "3. masked = scaled + M", "4. weights = softmax",
    "5. output = weights · V"};

RenderHeatmap stepview_matrix(const char *title, const char *subtitle, const float *x, int rows, int cols,
                              const char *const *row_labels, const char *const *col_labels, RenderCmap cmap) {
    RenderHeatmap p = {0};
    p.title = title;
    p.subtitle = subtitle;
    p.values = x;
    p.rows = rows;
    p.cols = cols;
    p.row_labels = row_labels;
    p.col_labels = col_labels;
    p.cmap = cmap;
    if (cmap == RENDER_CMAP_VIRIDIS) p.vmax = 1;   /* weights: fixed 0..1; diverging: auto ±max */
    p.show_values = 1;
    p.highlight_row = -1;
    return p;
}

int stepview_panels(const StepView *sv, RenderHeatmap out[STEP_COUNT], StepKind kinds[STEP_COUNT]) {
    int n = 0;
    for (int k = 0; k < STEP_COUNT; k++) {
        if (!sv->x[k]) continue;
        int is_out = k == STEP_OUTPUT, is_w = k == STEP_WEIGHTS;
        RenderHeatmap p = stepview_matrix(sv->title[k] ? sv->title[k] : step_title[k], sv->subtitle[k], sv->x[k],
                                          sv->Tq, is_out ? sv->Dv : sv->Tk, sv->queries, is_out ? sv->dims : sv->keys,
                                          is_w ? RENDER_CMAP_VIRIDIS : RENDER_CMAP_DIVERGING);
        if (sv->axes) {
            p.row_axis = "query";
            p.col_axis = is_out ? "value dimension" : "key";
        }
        if (k == STEP_MASKED) { p.mask = sv->mask; p.mask_label = sv->mask_label; }
        if (is_w && sv->mask) { p.mask = sv->mask; p.mask_label = "0"; }
        p.show_values = sv->show_values;
        if (kinds) kinds[n] = (StepKind)k;
        out[n++] = p;
    }
    return n;
}

/* 1 when the map's mask hides at least one (query, key) cell. */
static int mask_hides_any(const TraceMap *m) {
    if (!m->mask) return 0;
    for (long k = 0; k < (long)m->Tq * m->Tk; k++)
        if (!m->mask[k]) return 1;
    return 0;
}

StepView stepview_of_head(const TraceMap *m, int h, char (*dims)[STEPVIEW_DIM_LABEL], const char **dim_labels) {
    const TraceHead *hd = &m->heads[h];
    for (int d = 0; d < m->Dv; d++) {
        snprintf(dims[d], sizeof dims[d], "%d", d);
        dim_labels[d] = dims[d];
    }
    StepView sv = {0};
    sv.x[STEP_SCORES] = hd->scores;
    sv.x[STEP_SCALED] = hd->scaled;
    int masks = mask_hides_any(m);
    sv.x[STEP_MASKED] = masks ? hd->masked : NULL;   /* no mask, or one that lets every key through: + M changes nothing */
    sv.x[STEP_WEIGHTS] = hd->weights;
    sv.x[STEP_OUTPUT] = hd->output;
    sv.Tq = m->Tq;
    sv.Tk = m->Tk;
    sv.Dv = m->Dv;
    sv.queries = trace_row_labels(m);
    sv.keys = (const char *const *)m->keys;
    sv.dims = dim_labels;
    sv.mask = masks ? m->mask : NULL;
    if (!m->mask) sv.subtitle[STEP_WEIGHTS] = "no mask: step 3 (+ M) skipped";
    else if (!masks) sv.subtitle[STEP_WEIGHTS] = "the mask hides nothing here: step 3 (+ M) skipped";
    return sv;
}

int stepview_rope_panels(const TraceMap *m, int h, const char *const *dim_labels,
                         RenderHeatmap out[STEPVIEW_ROPE_PANELS]) {
    const TraceHead *hd = &m->heads[h];
    if (!hd->q || !hd->q_rot || !hd->k || !hd->k_rot) return 0;
    static const char *const title[STEPVIEW_ROPE_PANELS] = {"q before RoPE", "q after RoPE", "k before RoPE",
                                                            "k after RoPE"};
    static const char *const sub[STEPVIEW_ROPE_PANELS] = {
        "this head's queries", "row t: pair i of dims turned by t·θᵢ, pair 0 fastest", "the keys it reads",
        "turned the same way: q·k then depends on t_q − t_k"};
    const float *x[STEPVIEW_ROPE_PANELS] = {hd->q, hd->q_rot, hd->k, hd->k_rot};
    for (int i = 0; i < STEPVIEW_ROPE_PANELS; i++) {
        int is_q = i < 2;
        out[i] = stepview_matrix(title[i], sub[i], x[i], is_q ? m->Tq : m->Tk, m->d_k,
                                 (const char *const *)(is_q ? m->queries : m->keys), dim_labels, RENDER_CMAP_DIVERGING);
        out[i].row_axis = is_q ? "query" : "key";
        out[i].col_axis = "dimension";
        out[i].no_arrow = i == 1;   /* q rotated and k are side by side, not one step */
    }
    return STEPVIEW_ROPE_PANELS;
}
