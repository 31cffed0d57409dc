/* heatmap.c — one attention matrix as a labelled heatmap (render_heatmap) and
 * the step strip of several of them side by side (render_strip).
 *
 * Layout of one panel, left to right: margin, the row-axis caption (rotated),
 * query labels right-aligned, the matrix, the colour bar with its ticks,
 * margin.  Top to bottom: title, subtitle, key-axis caption, key labels
 * (horizontal when they fit a column, else at 45°), the matrix, the legend for
 * masked cells.  Cell size grows with the number of tokens down to 15 px (64
 * tokens → 960 px), then shrinks so the matrix stays about 1000 px. */
#include "render/heatmap.h"
#include "render/colorbar.h"
#include "render/colormap.h"
#include "render/fmt.h"
#include "render/font.h"
#include "render/label.h"
#include "render/png.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MASK_LABEL_DEFAULT "\xE2\x88\x92\xE2\x88\x9E"   /* −∞ */
#define LABEL_MAX_W 190
#define COS45 0.70710678

typedef struct {
    const RenderHeatmap *hm;
    float vmin, vmax;
    int margin;
    int cell, gap;
    int label_px, label_step, value_px, angled;
    int title_px, sub_px, axis_px, tick_px;
    int has_masked;
    int w, h;
    int title_base, sub_base, col_axis_base, row_axis_x;
    int row_lab_w;
    int mat_x, mat_y, mat_w, mat_h;
    int cbar_x, cbar_y, cbar_w, cbar_h;
    int legend_y;
} HmLayout;

static int auto_cell(int n) {
    if (n <= 0) return 64;
    if (n <= 68) {
        int c = 600 / n;
        return c > 72 ? 72 : c < 15 ? 15 : c;
    }
    int c = 1024 / n;
    return c < 1 ? 1 : c;
}

static int cell_masked(const RenderHeatmap *hm, long k) {
    return hm->mask && !hm->mask[k];
}

/* Text drawn in cell k, or NULL for none. */
static const char *cell_text(const RenderHeatmap *hm, long k, char *buf, size_t buflen) {
    if (cell_masked(hm, k)) return hm->mask_label ? hm->mask_label : MASK_LABEL_DEFAULT;
    fmt_value(buf, buflen, hm->values[k]);
    return buf;
}

/* Fills the rectangle of a masked (or non-finite) cell: grey, hatched when
 * it is big enough to show it. */
static void draw_masked_cell(Canvas *c, int x, int y, int w, int h, int spacing) {
    canvas_fill_rect(c, x, y, w, h, COL_MASK);
    if (w >= 4 && h >= 4) canvas_hatch_rect(c, x, y, w, h, spacing, COL_HATCH);
}

void heatmap_draw_cells(Canvas *c, const RenderHeatmap *hm, int x, int y, int cell, int gap,
                        float vmin, float vmax) {
    int spacing = cell >= 24 ? 7 : cell >= 8 ? 5 : 4;
    for (int i = 0; i < hm->rows; i++)
        for (int j = 0; j < hm->cols; j++) {
            long k = (long)i * hm->cols + j;
            float v = hm->values[k];
            int cx = x + j * cell, cy = y + i * cell;
            if (cell_masked(hm, k) || !isfinite(v)) draw_masked_cell(c, cx, cy, cell, cell, spacing);
            else canvas_fill_rect(c, cx, cy, cell, cell, cmap_value(hm->cmap, v, vmin, vmax));
        }
    if (gap) {
        for (int j = 1; j < hm->cols; j++) canvas_fill_rect(c, x + j * cell, y, gap, hm->rows * cell, COL_BG);
        for (int i = 1; i < hm->rows; i++) canvas_fill_rect(c, x, y + i * cell, hm->cols * cell, gap, COL_BG);
    }
    canvas_stroke_rect(c, x - 1, y - 1, hm->cols * cell + 2, hm->rows * cell + 2, 1, COL_FRAME);
}

static Rgb highlight_colour(RenderCmap cmap) {
    return cmap == RENDER_CMAP_VIRIDIS ? COL_HILITE : COL_HILITE_DIV;
}

void heatmap_draw_highlight(Canvas *c, const RenderHeatmap *hm, int x, int y, int cell, int t) {
    if (hm->highlight_row < 0 || hm->highlight_row >= hm->rows) return;
    canvas_stroke_rect(c, x - t, y + hm->highlight_row * cell - t, hm->cols * cell + 2 * t, cell + 2 * t, t,
                       highlight_colour(hm->cmap));
}

/* Computes the layout; forced_mat_y > 0 pushes the matrix down to that y (strip
 * panels align their matrices). */
static void hm_layout(HmLayout *L, const RenderHeatmap *hm, int cell, int title_px, int margin,
                      int forced_mat_y) {
    memset(L, 0, sizeof *L);
    L->hm = hm;
    cmap_scale(hm, 1, &L->vmin, &L->vmax);
    L->margin = margin;
    int n = hm->rows > hm->cols ? hm->rows : hm->cols;
    L->cell = cell > 0 ? cell : auto_cell(n);
    L->gap = L->cell >= 20 ? 1 : 0;
    L->label_px = L->cell >= 18 ? 15 : 13;
    L->label_step = L->cell >= 14 ? 1 : (int)ceil(15.0 / L->cell);
    L->title_px = title_px;
    L->sub_px = title_px >= 20 ? 15 : 14;
    L->axis_px = 14;
    L->tick_px = 13;
    long ncell = (long)hm->rows * hm->cols;
    for (long k = 0; k < ncell; k++)
        if (cell_masked(hm, k)) { L->has_masked = 1; break; }

    /* Values in cells: the largest font whose widest text fits with a margin. */
    if (hm->show_values != 0) {
        int minc = hm->show_values < 0 ? 34 : 22, lowest = hm->show_values < 0 ? 12 : 10;
        int px = L->cell >= 60 ? 15 : L->cell >= 44 ? 14 : L->cell >= 34 ? 13 : 12;
        for (; L->cell >= minc && px >= lowest; px--) {
            int maxw = 0;
            char buf[64];
            for (long k = 0; k < ncell; k++) {
                int w = font_width(FONT_REGULAR, px, cell_text(hm, k, buf, sizeof buf));
                if (w > maxw) maxw = w;
            }
            if (maxw + 6 <= L->cell && px * 1.25 <= L->cell) { L->value_px = px; break; }
        }
    }

    int asc, desc;
    char buf[512];
    /* Row labels */
    for (int i = 0; i < hm->rows; i += L->label_step) {
        FontStyle st = i == hm->highlight_row ? FONT_BOLD : FONT_REGULAR;
        int w = label_fit(st, L->label_px, hm->row_labels, i, LABEL_MAX_W, buf, sizeof buf);
        if (w > L->row_lab_w) L->row_lab_w = w;
    }
    /* Column labels: horizontal if every one fits its column. */
    int col_w = 0;
    for (int j = 0; j < hm->cols; j += L->label_step) {
        int w = label_fit(FONT_REGULAR, L->label_px, hm->col_labels, j, LABEL_MAX_W,
                         buf, sizeof buf);
        if (w > col_w) col_w = w;
    }
    font_vmetrics(FONT_REGULAR, L->label_px, &asc, &desc);
    /* 45° reads best, but neighbours overlap when columns are narrower than
     * about 1.5 line heights; then the labels stand upright (90°). */
    int pitch = L->cell * L->label_step;
    L->angled = col_w <= L->cell - 6 ? 0 : pitch * COS45 >= (asc + desc) * 1.05 ? 45 : 90;
    int col_lab_h = L->angled == 45 ? (int)ceil((col_w + asc) * COS45) + 12
                  : L->angled == 90 ? col_w + 12 : asc + desc + 8;

    /* Horizontal */
    int x = margin;
    if (hm->row_axis) {
        int a, d;
        font_vmetrics(FONT_REGULAR, L->axis_px, &a, &d);
        L->row_axis_x = x + a;
        x += a + d + 8;
    }
    L->mat_x = x + L->row_lab_w + 10;
    L->mat_w = hm->cols * L->cell;
    L->cbar_w = 18;
    L->cbar_x = L->mat_x + L->mat_w + 24;
    int right = L->cbar_x;   /* colour bar width added once its height is known */

    /* Vertical */
    int y = margin;
    if (hm->title && *hm->title) {
        font_vmetrics(FONT_BOLD, title_px, &asc, &desc);
        L->title_base = y + asc;
        y += asc + desc + 4;
    }
    if (hm->subtitle && *hm->subtitle) {
        font_vmetrics(FONT_REGULAR, L->sub_px, &asc, &desc);
        L->sub_base = y + asc;
        y += asc + desc + 4;
    }
    y += 8;
    if (hm->col_axis && *hm->col_axis) {
        font_vmetrics(FONT_REGULAR, L->axis_px, &asc, &desc);
        L->col_axis_base = y + asc;
        y += asc + desc + 6;
    }
    y += col_lab_h;
    L->mat_y = y > forced_mat_y ? y : forced_mat_y;
    L->mat_h = hm->rows * L->cell;
    L->cbar_y = L->mat_y;
    L->cbar_h = L->mat_h < 120 ? 120 : L->mat_h > 480 ? 480 : L->mat_h;
    right += colorbar_width(L->vmin, L->vmax, L->cbar_w, L->cbar_h, L->tick_px);
    int bottom = L->mat_y + (L->mat_h > L->cbar_h ? L->mat_h : L->cbar_h);
    int legend_right = 0;
    if (L->has_masked) {
        L->legend_y = L->mat_y + L->mat_h + 16;
        if (L->legend_y + 18 > bottom) bottom = L->legend_y + 18;
        char lab[256];
        snprintf(lab, sizeof lab, "masked (%s)", hm->mask_label ? hm->mask_label : MASK_LABEL_DEFAULT);
        legend_right = L->mat_x + 26 + font_width(FONT_REGULAR, 14, lab);
    }
    if (L->angled == 45) {   /* labels of the last columns reach right of the matrix */
        for (int j = 0; j < hm->cols; j += L->label_step) {
            int w = label_fit(FONT_REGULAR, L->label_px, hm->col_labels, j, LABEL_MAX_W,
                             buf, sizeof buf);
            int r = L->mat_x + j * L->cell + L->cell / 2 + (int)ceil((w + asc) * COS45) + 4;
            if (r > right) right = r;
        }
    }
    if (legend_right > right) right = legend_right;
    int tw = hm->title ? font_width(FONT_BOLD, title_px, hm->title) : 0;
    int sw = hm->subtitle ? font_width(FONT_REGULAR, L->sub_px, hm->subtitle) : 0;
    if (margin + tw > right) right = margin + tw;
    if (margin + sw > right) right = margin + sw;
    L->w = right + margin;
    L->h = bottom + margin;
}

static void hm_draw(Canvas *c, const HmLayout *L, int ox, int oy) {
    const RenderHeatmap *hm = L->hm;
    int mx = ox + L->mat_x, my = oy + L->mat_y, cell = L->cell;
    char buf[512];
    int asc, desc;

    if (L->title_base) font_draw(c, FONT_BOLD, L->title_px, ox + L->margin, oy + L->title_base, hm->title, COL_TEXT);
    if (L->sub_base) font_draw(c, FONT_REGULAR, L->sub_px, ox + L->margin, oy + L->sub_base, hm->subtitle, COL_MUTED);

    /* Matrix, frame, values */
    heatmap_draw_cells(c, hm, mx, my, cell, L->gap, L->vmin, L->vmax);
    if (L->value_px) {
        for (int i = 0; i < hm->rows; i++)
            for (int j = 0; j < hm->cols; j++) {
                long k = (long)i * hm->cols + j;
                float v = hm->values[k];
                const char *s = cell_text(hm, k, buf, sizeof buf);
                int cx = mx + j * cell + cell / 2, base = font_center_baseline(L->value_px, my + i * cell + cell / 2.0);
                Rgb fg;
                if (cell_masked(hm, k) || !isfinite(v)) {
                    int w = font_width(FONT_REGULAR, L->value_px, s);
                    canvas_fill_round_rect(c, cx - w / 2.0 - 4, my + i * cell + cell / 2.0 - L->value_px * 0.62,
                                           w + 8, L->value_px * 1.24, 3, COL_MASK, 1.0f);
                    fg = RGB_HEX(0x303030);
                } else {
                    fg = cmap_text_on(cmap_value(hm->cmap, v, L->vmin, L->vmax));
                }
                font_draw_center(c, FONT_REGULAR, L->value_px, cx, base, s, fg);
            }
    }
    heatmap_draw_highlight(c, hm, mx, my, cell, cell >= 12 ? 3 : 2);

    /* Row labels and caption */
    for (int i = 0; i < hm->rows; i += L->label_step) {
        int hi = i == hm->highlight_row;
        FontStyle st = hi ? FONT_BOLD : FONT_REGULAR;
        label_fit(st, L->label_px, hm->row_labels, i, LABEL_MAX_W, buf, sizeof buf);
        font_draw_right(c, st, L->label_px, mx - 10, font_center_baseline(L->label_px, my + i * cell + cell / 2.0),
                        buf, hi ? highlight_colour(hm->cmap) : COL_TEXT);
    }
    if (L->row_axis_x) {
        int w = font_width(FONT_REGULAR, L->axis_px, hm->row_axis);
        font_draw_rotated(c, FONT_REGULAR, L->axis_px, ox + L->row_axis_x, my + L->mat_h / 2.0 + w / 2.0, 90,
                          hm->row_axis, COL_MUTED);
    }

    /* Column labels and caption */
    font_vmetrics(FONT_REGULAR, L->label_px, &asc, &desc);
    for (int j = 0; j < hm->cols; j += L->label_step) {
        label_fit(FONT_REGULAR, L->label_px, hm->col_labels, j, LABEL_MAX_W, buf, sizeof buf);
        double cx = mx + j * cell + cell / 2.0;
        if (L->angled == 45) {
            /* baseline from just above the column, up and to the right; shifted
             * so the text's middle line passes over the column's centre */
            double sh = 0.30 * L->label_px * COS45;
            font_draw_rotated(c, FONT_REGULAR, L->label_px, cx + sh - 2, my - 8 + sh, 45, buf, COL_TEXT);
        } else if (L->angled == 90) {
            font_draw_rotated(c, FONT_REGULAR, L->label_px, cx + 0.34 * L->label_px, my - 8, 90, buf, COL_TEXT);
        } else {
            font_draw_center(c, FONT_REGULAR, L->label_px, (int)lround(cx), my - 8 - desc, buf, COL_TEXT);
        }
    }
    if (L->col_axis_base)
        font_draw_center(c, FONT_REGULAR, L->axis_px, mx + L->mat_w / 2, oy + L->col_axis_base, hm->col_axis, COL_MUTED);

    colorbar_draw(c, ox + L->cbar_x, oy + L->cbar_y, L->cbar_w, L->cbar_h, hm->cmap, L->vmin, L->vmax, L->tick_px);

    if (L->legend_y) {
        int ly = oy + L->legend_y;
        draw_masked_cell(c, mx, ly, 18, 18, 6);
        canvas_stroke_rect(c, mx, ly, 18, 18, 1, COL_FRAME);
        snprintf(buf, sizeof buf, "masked (%s)", hm->mask_label ? hm->mask_label : MASK_LABEL_DEFAULT);
        font_draw(c, FONT_REGULAR, 14, mx + 26, font_center_baseline(14, ly + 9), buf, COL_MUTED);
    }
}

static int hm_check(const RenderHeatmap *hm, char *err, size_t errlen) {
    if (!hm || !hm->values || hm->rows < 1 || hm->cols < 1)
        return errmsg_set(err, errlen, "heatmap has no values (rows and cols must be >= 1)");
    if (hm->rows > 4096 || hm->cols > 4096)
        return errmsg_set(err, errlen, "heatmap of %d x %d is too large to draw (at most 4096 tokens)", hm->rows, hm->cols);
    return 0;
}

int render_heatmap(const char *path, const RenderHeatmap *hm, const RenderMeta *meta,
                   char *err, size_t errlen) {
    Canvas c = {0};
    HmLayout L;
    int status = -1;
    if (hm_check(hm, err, errlen) || font_ensure(err, errlen)) return -1;
    hm_layout(&L, hm, 0, 20, 28, 0);
    if (canvas_init(&c, L.w, L.h, COL_BG, err, errlen)) goto cleanup;
    hm_draw(&c, &L, 0, 0);
    if (png_write_canvas(path, &c, meta, err, errlen)) goto cleanup;
    status = 0;
cleanup:
    canvas_free(&c);
    return status;
}

int render_heatmap_geometry(const RenderHeatmap *hm, RenderHeatmapGeometry *geo,
                            char *err, size_t errlen) {
    HmLayout L;
    if (hm_check(hm, err, errlen) || font_ensure(err, errlen)) return -1;
    hm_layout(&L, hm, 0, 20, 28, 0);
    geo->width = L.w;
    geo->height = L.h;
    geo->matrix = (RenderRect){L.mat_x, L.mat_y, L.mat_w, L.mat_h};
    geo->cell = L.cell;
    geo->colorbar = (RenderRect){L.cbar_x, L.cbar_y, L.cbar_w, L.cbar_h};
    geo->vmin = L.vmin;
    geo->vmax = L.vmax;
    return 0;
}

int render_strip(const char *path, const char *title, const RenderHeatmap *panels, int n,
                 const RenderMeta *meta, char *err, size_t errlen) {
    return render_panels(path, title, panels, n, 1, meta, err, errlen);
}

int render_panels(const char *path, const char *title, const RenderHeatmap *panels, int n,
                  int arrows, const RenderMeta *meta, char *err, size_t errlen) {
    Canvas c = {0};
    HmLayout *L = NULL;
    int status = -1;
    if (!panels || n < 1) return errmsg_set(err, errlen, "step strip has no panels");
    for (int p = 0; p < n; p++)
        if (hm_check(&panels[p], err, errlen)) return -1;
    if (font_ensure(err, errlen)) return -1;
    L = calloc((size_t)n, sizeof *L);
    if (!L) return errmsg_set(err, errlen, "out of memory");

    /* One cell size for every panel, so the matrices compare at a glance. */
    int nmax = 0, sum_cols = 0;
    for (int p = 0; p < n; p++) {
        int m = panels[p].rows > panels[p].cols ? panels[p].rows : panels[p].cols;
        if (m > nmax) nmax = m;
        sum_cols += panels[p].cols;
    }
    int cell = auto_cell(nmax), budget = 1600 / (sum_cols > 0 ? sum_cols : 1);
    if (cell > 56) cell = 56;
    if (cell > budget) cell = budget < 15 ? (auto_cell(nmax) < 15 ? auto_cell(nmax) : 15) : budget;

    const int margin = 20, gap = 40, top_px = 22;
    int asc, desc, top = margin, mat_y = 0;
    if (title && *title) {
        font_vmetrics(FONT_BOLD, top_px, &asc, &desc);
        top += asc + desc + 10;
    }
    for (int p = 0; p < n; p++) {
        hm_layout(&L[p], &panels[p], cell, 16, margin, 0);
        if (L[p].mat_y > mat_y) mat_y = L[p].mat_y;
    }
    long w = 0, h = 0;
    for (int p = 0; p < n; p++) {
        hm_layout(&L[p], &panels[p], cell, 16, margin, mat_y);
        w += L[p].w + (p ? gap : 0);
        if (L[p].h > h) h = L[p].h;
    }
    h += top;
    long tw = title ? font_width(FONT_BOLD, top_px, title) + 2 * 28 : 0;
    if (tw > w) w = tw;
    if (canvas_init(&c, w, h, COL_BG, err, errlen)) goto cleanup;
    if (title && *title) {
        font_vmetrics(FONT_BOLD, top_px, &asc, &desc);
        font_draw(&c, FONT_BOLD, top_px, 28, margin + asc, title, COL_TEXT);
    }
    int x = 0;
    for (int p = 0; p < n; p++) {
        hm_draw(&c, &L[p], x, top);
        if (arrows && p + 1 < n) {
            /* arrow from the end of this panel to the start of the next */
            double ay = top + mat_y + (L[p].mat_h < L[p + 1].mat_h ? L[p].mat_h : L[p + 1].mat_h) / 2.0;
            double x0 = x + L[p].w - margin + 2, x1 = x + L[p].w + gap + margin - 2;
            canvas_arrow(&c, x0, ay, x1, ay, 3.0, 13.0, RGB_HEX(0x707070));
        }
        x += L[p].w + gap;
    }
    if (png_write_canvas(path, &c, meta, err, errlen)) goto cleanup;
    status = 0;
cleanup:
    canvas_free(&c);
    free(L);
    return status;
}
