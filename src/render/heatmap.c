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
#include "render/fit.h"
#include "render/png.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MASK_LABEL_DEFAULT "\xE2\x88\x92\xE2\x88\x9E"   /* −∞ */
#define LABEL_MAX_W 190
#define COS45 0.70710678
#define HEATMAP_MARGIN 28     /* a single heatmap: around it */
#define HEATMAP_TITLE_PX 20
#define STRIP_MARGIN 20       /* a strip: around each panel */
#define STRIP_GAP 40          /* between panels */
#define STRIP_TITLE_PX 22     /* the strip's own title */
#define STRIP_TITLE_INSET 28  /* its left inset, and its room on either side */
#define PANEL_TITLE_PX 16
#define STRIP_MIN_CELL 14     /* a strip folds or shrinks to a slide's width down to this cell (every label kept) */
#define LEGEND_PX 14
#define WRAP_MIN_W 560        /* titles fold at the content's width, not narrower than this */

typedef struct {
    const RenderHeatmap *hm;
    FmtCells fmt;            /* one number format for every cell */
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
    int note_y;                    /* "token labels: every 3rd …" (thinned labels), 0 none */
    LabelLines title_ls, sub_ls;   /* title and subtitle folded to the picture's width */
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

/* Text drawn in cell k: the mask label for a masked cell, else its value. */
static const char *cell_text(const HmLayout *L, long k, char *buf, size_t buflen) {
    const RenderHeatmap *hm = L->hm;
    if (cell_masked(hm, k)) return hm->mask_label ? hm->mask_label : MASK_LABEL_DEFAULT;
    fmt_cell(&L->fmt, buf, buflen, hm->values[k]);
    return buf;
}

/* Fills the rectangle of a masked (or non-finite) cell: grey, hatched when
 * it is big enough to show it. */
static void draw_masked_cell(Canvas *c, int x, int y, int w, int h, int spacing) {
    if (w >= 4 && h >= 4) canvas_fill_hatched(c, x, y, w, h, spacing, COL_MASK, COL_HATCH);
    else canvas_fill_rect(c, x, y, w, h, COL_MASK);
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

/* "masked (−∞)": the legend under a matrix with masked cells. */
static void legend_text(const RenderHeatmap *hm, char *out, size_t outlen) {
    snprintf(out, outlen, "masked (%s)", hm->mask_label ? hm->mask_label : MASK_LABEL_DEFAULT);
}

/* Values in cells: the largest font whose widest text fits with a margin,
 * 0 for no values. */
static int value_font_px(const HmLayout *L) {
    const RenderHeatmap *hm = L->hm;
    if (hm->show_values == 0) return 0;
    long ncell = (long)hm->rows * hm->cols;
    int minc = hm->show_values < 0 ? 34 : 22, lowest = hm->show_values < 0 ? 12 : 10;
    int px = L->cell >= 60 ? 15 : L->cell >= 44 ? 14 : L->cell >= 34 ? 13 : 12;
    for (; L->cell >= minc && px >= lowest; px--) {
        int maxw = 0;
        char buf[64];
        for (long k = 0; k < ncell; k++) {
            int w = font_width(FONT_REGULAR, px, cell_text(L, k, buf, sizeof buf));
            if (w > maxw) maxw = w;
        }
        if (maxw + 6 <= L->cell && px * 1.25 <= L->cell) return px;
    }
    return 0;
}

/* Widths of the query labels and orientation of the key labels: horizontal
 * if every one fits its column; 45° reads best, but neighbours overlap when
 * columns are narrower than about 1.5 line heights, then they stand upright
 * (90°).  Returns the height the key labels take. */
static int hm_measure_labels(HmLayout *L) {
    const RenderHeatmap *hm = L->hm;
    char buf[512];
    for (int i = 0; i < hm->rows; i += L->label_step) {
        FontStyle st = i == hm->highlight_row ? FONT_BOLD : FONT_REGULAR;
        int w = label_fit(st, L->label_px, hm->row_labels, i, LABEL_MAX_W, buf, sizeof buf);
        if (w > L->row_lab_w) L->row_lab_w = w;
    }
    int col_w = 0, asc, desc;
    for (int j = 0; j < hm->cols; j += L->label_step) {
        int w = label_fit(FONT_REGULAR, L->label_px, hm->col_labels, j, LABEL_MAX_W, buf, sizeof buf);
        if (w > col_w) col_w = w;
    }
    font_vmetrics(FONT_REGULAR, L->label_px, &asc, &desc);
    int pitch = L->cell * L->label_step;
    L->angled = col_w <= L->cell - 6 ? 0 : pitch * COS45 >= (asc + desc) * 1.05 ? 45 : 90;
    return L->angled == 45 ? (int)ceil((col_w + asc) * COS45) + 12 : L->angled == 90 ? col_w + 12 : asc + desc + 8;
}

/* Left to right: margin, row-axis caption, query labels, the matrix, the
 * colour bar. */
static void hm_layout_across(HmLayout *L) {
    const RenderHeatmap *hm = L->hm;
    int x = L->margin;
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
}

/* Top to bottom: margin, title, subtitle, key-axis caption, key labels
 * (col_lab_h), the matrix (at forced_mat_y if that is lower) beside its
 * colour bar, the legend, margin. */
static void hm_layout_down(HmLayout *L, int col_lab_h, int forced_mat_y) {
    const RenderHeatmap *hm = L->hm;
    int asc, desc, y = L->margin;
    if (L->title_ls.n) {
        font_vmetrics(FONT_BOLD, L->title_px, &asc, &desc);
        L->title_base = y + asc;
        y += L->title_ls.n * (asc + desc + 2) + 2;
    }
    if (L->sub_ls.n) {
        font_vmetrics(FONT_REGULAR, L->sub_px, &asc, &desc);
        L->sub_base = y + asc;
        y += L->sub_ls.n * (asc + desc + 2) + 2;
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
    int bottom = L->mat_y + (L->mat_h > L->cbar_h ? L->mat_h : L->cbar_h);
    if (L->has_masked) {
        L->legend_y = L->mat_y + L->mat_h + 16;
        if (L->legend_y + 18 > bottom) bottom = L->legend_y + 18;
    }
    if (L->label_step > 1) {
        L->note_y = (L->legend_y ? L->legend_y + 18 : L->mat_y + L->mat_h) + 10;
        if (L->note_y + 18 > bottom) bottom = L->note_y + 18;
    }
    L->h = bottom + L->margin;
}

/* The ascender with which the reach of 45° key labels is estimated: that of
 * the last line stacked above them (key-axis caption, else subtitle, else
 * title, else the labels' own), as the layout has always measured it. */
static int reach_ascender(const HmLayout *L) {
    const RenderHeatmap *hm = L->hm;
    int asc, desc;
    if (hm->col_axis && *hm->col_axis) font_vmetrics(FONT_REGULAR, L->axis_px, &asc, &desc);
    else if (hm->subtitle && *hm->subtitle) font_vmetrics(FONT_REGULAR, L->sub_px, &asc, &desc);
    else if (hm->title && *hm->title) font_vmetrics(FONT_BOLD, L->title_px, &asc, &desc);
    else font_vmetrics(FONT_REGULAR, L->label_px, &asc, &desc);
    return asc;
}

/* Right edge of the content: the colour bar with its ticks, or further right
 * 45° key labels, the legend, the title or the subtitle. */
static int hm_right_edge(const HmLayout *L) {
    const RenderHeatmap *hm = L->hm;
    char buf[512];
    int right = L->cbar_x + colorbar_width(L->vmin, L->vmax, L->cbar_w, L->cbar_h, L->tick_px);
    if (L->angled == 45) {   /* labels of the last columns reach right of the matrix */
        int asc = reach_ascender(L);
        for (int j = 0; j < hm->cols; j += L->label_step) {
            int w = label_fit(FONT_REGULAR, L->label_px, hm->col_labels, j, LABEL_MAX_W, buf, sizeof buf);
            int r = L->mat_x + j * L->cell + L->cell / 2 + (int)ceil((w + asc) * COS45) + 4;
            if (r > right) right = r;
        }
    }
    if (L->has_masked) {
        char lab[256];
        legend_text(hm, lab, sizeof lab);
        int legend_right = L->mat_x + 26 + font_width(FONT_REGULAR, LEGEND_PX, lab);
        if (legend_right > right) right = legend_right;
    }
    if (L->label_step > 1) {   /* the note on thinned labels, at most this wide */
        int note_right = L->mat_x + font_width(FONT_REGULAR, LEGEND_PX, "labels: every 99th token (every row and column is drawn)");
        if (note_right > right) right = note_right;
    }
    if (L->margin + L->title_ls.w > right) right = L->margin + L->title_ls.w;
    if (L->margin + L->sub_ls.w > right) right = L->margin + L->sub_ls.w;
    return right;
}

/* Title and subtitle folded to the width of what lies under them (the labels,
 * matrix and colour bar), at least WRAP_MIN_W. */
static void hm_wrap_titles(HmLayout *L) {
    L->mat_h = L->hm->rows * L->cell;
    L->cbar_h = L->mat_h < 120 ? 120 : L->mat_h > 480 ? 480 : L->mat_h;
    int room = hm_right_edge(L) - L->margin;
    if (room < WRAP_MIN_W) room = WRAP_MIN_W;
    label_wrap(FONT_BOLD, L->title_px, L->hm->title, room, &L->title_ls);
    label_wrap(FONT_REGULAR, L->sub_px, L->hm->subtitle, room, &L->sub_ls);
}

/* Computes the layout; forced_mat_y > 0 pushes the matrix down to that y (strip
 * panels align their matrices). */
static void hm_layout(HmLayout *L, const RenderHeatmap *hm, int cell, int title_px, int margin,
                      int forced_mat_y) {
    memset(L, 0, sizeof *L);
    L->hm = hm;
    L->fmt = fmt_cells_choose(hm->values, (long)hm->rows * hm->cols, hm->mask);
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
    for (long k = 0; k < (long)hm->rows * hm->cols; k++)
        if (cell_masked(hm, k)) { L->has_masked = 1; break; }
    L->value_px = value_font_px(L);
    int col_lab_h = hm_measure_labels(L);
    hm_layout_across(L);
    hm_wrap_titles(L);
    hm_layout_down(L, col_lab_h, forced_mat_y);
    L->w = hm_right_edge(L) + margin;
}

/* Values in the cells, in a text colour that contrasts with each; masked and
 * non-finite cells get their label on a grey pill. */
static void hm_draw_values(Canvas *c, const HmLayout *L, int mx, int my) {
    const RenderHeatmap *hm = L->hm;
    int cell = L->cell;
    char buf[512];
    for (int i = 0; i < hm->rows; i++)
        for (int j = 0; j < hm->cols; j++) {
            long k = (long)i * hm->cols + j;
            float v = hm->values[k];
            const char *s = cell_text(L, k, buf, sizeof buf);
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

/* Query labels right-aligned left of the matrix (the highlighted one bold, in
 * the highlight colour) and the row-axis caption. */
static void hm_draw_row_labels(Canvas *c, const HmLayout *L, int ox, int mx, int my) {
    const RenderHeatmap *hm = L->hm;
    int cell = L->cell;
    char buf[512];
    for (int i = 0; i < hm->rows; i += L->label_step) {
        int hi = i == hm->highlight_row;
        FontStyle st = hi ? FONT_BOLD : FONT_REGULAR;
        label_fit(st, L->label_px, hm->row_labels, i, LABEL_MAX_W, buf, sizeof buf);
        label_draw_right(c, st, L->label_px, mx - 10, font_center_baseline(L->label_px, my + i * cell + cell / 2.0),
                         buf, hi ? highlight_colour(hm->cmap) : COL_TEXT);
    }
    if (L->row_axis_x) {
        int w = font_width(FONT_REGULAR, L->axis_px, hm->row_axis);
        font_draw_rotated(c, FONT_REGULAR, L->axis_px, ox + L->row_axis_x, my + L->mat_h / 2.0 + w / 2.0, 90,
                          hm->row_axis, COL_MUTED);
    }
}

/* Key labels above the matrix at the layout's angle, and the key-axis caption. */
static void hm_draw_col_labels(Canvas *c, const HmLayout *L, int oy, int mx, int my) {
    const RenderHeatmap *hm = L->hm;
    char buf[512];
    int asc, desc;
    font_vmetrics(FONT_REGULAR, L->label_px, &asc, &desc);
    for (int j = 0; j < hm->cols; j += L->label_step) {
        label_fit(FONT_REGULAR, L->label_px, hm->col_labels, j, LABEL_MAX_W, buf, sizeof buf);
        double cx = mx + j * L->cell + L->cell / 2.0;
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
}

/* A hatched sample cell and "masked (…)" under the matrix. */
static void hm_draw_legend(Canvas *c, const HmLayout *L, int oy, int mx) {
    char buf[512];
    int ly = oy + L->legend_y;
    draw_masked_cell(c, mx, ly, 18, 18, 6);
    canvas_stroke_rect(c, mx, ly, 18, 18, 1, COL_FRAME);
    legend_text(L->hm, buf, sizeof buf);
    font_draw(c, FONT_REGULAR, LEGEND_PX, mx + 26, font_center_baseline(LEGEND_PX, ly + 9), buf, COL_MUTED);
}

/* The heatmap laid out by L, with its top-left corner at (ox, oy). */
static void hm_draw(Canvas *c, const HmLayout *L, int ox, int oy) {
    const RenderHeatmap *hm = L->hm;
    int mx = ox + L->mat_x, my = oy + L->mat_y;
    int asc, desc;
    font_vmetrics(FONT_BOLD, L->title_px, &asc, &desc);
    if (L->title_base)
        label_draw_lines(c, FONT_BOLD, L->title_px, ox + L->margin, oy + L->title_base, asc + desc + 2, &L->title_ls, COL_TEXT);
    font_vmetrics(FONT_REGULAR, L->sub_px, &asc, &desc);
    if (L->sub_base)
        label_draw_lines(c, FONT_REGULAR, L->sub_px, ox + L->margin, oy + L->sub_base, asc + desc + 2, &L->sub_ls, COL_MUTED);
    heatmap_draw_cells(c, hm, mx, my, L->cell, L->gap, L->vmin, L->vmax);
    if (L->value_px) hm_draw_values(c, L, mx, my);
    heatmap_draw_highlight(c, hm, mx, my, L->cell, L->cell >= 12 ? 3 : 2);
    hm_draw_row_labels(c, L, ox, mx, my);
    hm_draw_col_labels(c, L, oy, mx, my);
    colorbar_draw(c, ox + L->cbar_x, oy + L->cbar_y, L->cbar_w, L->cbar_h, hm->cmap, L->vmin, L->vmax, L->tick_px);
    if (L->legend_y) hm_draw_legend(c, L, oy, mx);
    if (L->note_y) {
        char note[160];
        snprintf(note, sizeof note, "labels: every %d%s %s (every row and column is drawn)", L->label_step,
                 L->label_step == 2 ? "nd" : L->label_step == 3 ? "rd" : "th", hm->label_unit ? hm->label_unit : "token");
        font_draw(c, FONT_REGULAR, LEGEND_PX, mx, font_center_baseline(LEGEND_PX, oy + L->note_y + 9), note, COL_MUTED);
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
    HmLayout L;
    if (hm_check(hm, err, errlen) || font_ensure(err, errlen)) return -1;
    hm_layout(&L, hm, 0, HEATMAP_TITLE_PX, HEATMAP_MARGIN, 0);
    Canvas c;
    if (canvas_init_named(&c, path, L.w, L.h, COL_BG, err, errlen)) return -1;
    hm_draw(&c, &L, 0, 0);
    int status = png_write_canvas(path, &c, meta, err, errlen);
    canvas_free(&c);
    return status;
}

int heatmap_draw_canvas(Canvas *c, const RenderHeatmap *hm, char *err, size_t errlen) {
    HmLayout L;
    if (hm_check(hm, err, errlen) || font_ensure(err, errlen)) return -1;
    hm_layout(&L, hm, 0, HEATMAP_TITLE_PX, HEATMAP_MARGIN, 0);
    if (canvas_init(c, L.w, L.h, COL_BG, err, errlen)) return -1;
    hm_draw(c, &L, 0, 0);
    return 0;
}

int render_heatmap_geometry(const RenderHeatmap *hm, RenderHeatmapGeometry *geo,
                            char *err, size_t errlen) {
    HmLayout L;
    if (hm_check(hm, err, errlen) || font_ensure(err, errlen)) return -1;
    hm_layout(&L, hm, 0, HEATMAP_TITLE_PX, HEATMAP_MARGIN, 0);
    geo->width = L.w;
    geo->height = L.h;
    geo->matrix = (RenderRect){L.mat_x, L.mat_y, L.mat_w, L.mat_h};
    geo->cell = L.cell;
    geo->colorbar = (RenderRect){L.cbar_x, L.cbar_y, L.cbar_w, L.cbar_h};
    geo->vmin = L.vmin;
    geo->vmax = L.vmax;
    return 0;
}

/* Panels in rows (one row unless the strip would be too wide for the page),
 * the matrices of a row at one height; the strip's title above them all,
 * folded to the strip's width. */
typedef struct {
    HmLayout *panel;          /* n layouts (owned) */
    int *x, *y;               /* n top-left corners of the panels (owned) */
    int n, rows;
    int top;                  /* where the first row starts */
    LabelLines title_ls;
    long w, h;
} StripLayout;

static int strip_check(const RenderHeatmap *panels, int n, char *err, size_t errlen) {
    if (!panels || n < 1) return errmsg_set(err, errlen, "step strip has no panels");
    for (int p = 0; p < n; p++)
        if (hm_check(&panels[p], err, errlen)) return -1;
    return 0;
}

/* One cell size for every panel, so the matrices compare at a glance: the
 * single heatmap's size for the most tokens, at most 56 px, shrunk so that
 * all columns together stay about 1600 px (not below 15 px unless needed). */
static int strip_cell(const RenderHeatmap *panels, int n) {
    int nmax = 0, sum_cols = 0;
    for (int p = 0; p < n; p++) {
        int m = panels[p].rows > panels[p].cols ? panels[p].rows : panels[p].cols;
        if (m > nmax) nmax = m;
        sum_cols += panels[p].cols;
    }
    int cell = auto_cell(nmax), budget = 1600 / (sum_cols > 0 ? sum_cols : 1);
    if (cell > 56) cell = 56;
    if (cell > budget) cell = budget < 15 ? (auto_cell(nmax) < 15 ? auto_cell(nmax) : 15) : budget;
    return cell;
}

/* First panel of row k when n panels are cut into `rows` rows (the first rows
 * one longer when they do not divide evenly). */
static int row_start(int n, int rows, int k) {
    int base = n / rows, extra = n % rows;
    return k * base + (k < extra ? k : extra);
}

/* Places the panels in `rows` rows: each row's matrices aligned (panels laid
 * out again with the row's mat_y); fills x, y, w and h below S->top. */
static void strip_place(StripLayout *S, const RenderHeatmap *panels, int cell, int rows) {
    long y = S->top, w = 0;
    for (int k = 0; k < rows; k++) {
        int a = row_start(S->n, rows, k), b = row_start(S->n, rows, k + 1), mat_y = 0, h = 0;
        for (int p = a; p < b; p++) {
            hm_layout(&S->panel[p], &panels[p], cell, PANEL_TITLE_PX, STRIP_MARGIN, 0);
            if (S->panel[p].mat_y > mat_y) mat_y = S->panel[p].mat_y;
        }
        long x = 0;
        for (int p = a; p < b; p++) {
            hm_layout(&S->panel[p], &panels[p], cell, PANEL_TITLE_PX, STRIP_MARGIN, mat_y);
            S->x[p] = (int)x;
            S->y[p] = (int)y;
            x += S->panel[p].w + STRIP_GAP;
            if (S->panel[p].h > h) h = S->panel[p].h;
        }
        if (x - STRIP_GAP > w) w = x - STRIP_GAP;
        y += h;
    }
    S->rows = rows;
    S->w = w;
    S->h = y;
}

/* The rows and cell of a strip on a slide (--slide): at the standard cell,
 * the number of rows that lets it be drawn largest on 1920 x 1080 (a strip
 * too wide for one row folds into two, not into a tall column). */
static int strip_rows_slide(StripLayout *S, const RenderHeatmap *panels, int cell) {
    int best = 1;
    double best_scale = 0;
    for (int r = 1; r <= S->n; r++) {
        strip_place(S, panels, cell, r);
        double sx = (double)FIT_SLIDE_W / S->w, sy = (double)FIT_SLIDE_H / S->h, sc = sx < sy ? sx : sy;
        if (sc > best_scale * 1.02) { best = r; best_scale = sc; }
    }
    return best;
}

/* The rows and cell of a strip: one row at the standard cell if it is no
 * wider than a slide (FIT_SLIDE_W).  Else, for every number of rows, the
 * largest cell down to STRIP_MIN_CELL (every token still labelled) that
 * keeps it that narrow and at most FIT_MAX_SIDE high; of those the layout
 * drawn largest on a 1920 x 1080 slide.  When none fits, the slide's choice
 * (and fit.c scales the picture down to FIT_MAX_SIDE). */
static int strip_rows(StripLayout *S, const RenderHeatmap *panels, int *cell) {
    if (fit_is_slide()) return strip_rows_slide(S, panels, *cell);
    strip_place(S, panels, *cell, 1);
    if (S->w <= FIT_SLIDE_W) return 1;
    int best = 0, best_cell = *cell, low = *cell < STRIP_MIN_CELL ? *cell : STRIP_MIN_CELL;
    double best_scale = 0;
    for (int r = 1; r <= S->n; r++) {
        int lo = low, hi = *cell;   /* the largest cell in [lo, hi] that fits: the width grows with the cell */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            strip_place(S, panels, mid, r);
            if (S->w <= FIT_SLIDE_W) lo = mid;
            else hi = mid - 1;
        }
        int c = lo;
        strip_place(S, panels, c, r);
        if (S->w > FIT_SLIDE_W || S->h > FIT_MAX_SIDE) continue;
        double sx = (double)FIT_SLIDE_W / S->w, sy = (double)FIT_SLIDE_H / S->h, sc = sx < sy ? sx : sy;
        if (sc > best_scale * 1.02) { best = r; best_cell = c; best_scale = sc; }
    }
    if (!best) return strip_rows_slide(S, panels, *cell);
    *cell = best_cell;
    return best;
}

static void strip_layout(StripLayout *S, const RenderHeatmap *panels, const char *title) {
    int cell = strip_cell(panels, S->n), asc, desc;
    S->top = STRIP_MARGIN;
    if (title && *title) {   /* one line while the rows are chosen, then as folded */
        font_vmetrics(FONT_BOLD, STRIP_TITLE_PX, &asc, &desc);
        S->top += asc + desc + 10;
    }
    int rows = strip_rows(S, panels, &cell);
    strip_place(S, panels, cell, rows);
    int room = (int)S->w - 2 * STRIP_TITLE_INSET;
    label_wrap(FONT_BOLD, STRIP_TITLE_PX, title, room < WRAP_MIN_W ? WRAP_MIN_W : room, &S->title_ls);
    if (S->title_ls.n > 1) {
        S->top += (S->title_ls.n - 1) * (asc + desc + 2);
        strip_place(S, panels, cell, rows);
    }
    long tw = S->title_ls.n ? S->title_ls.w + 2 * STRIP_TITLE_INSET : 0;
    if (tw > S->w) S->w = tw;
}

/* The title, then each panel followed by the arrow from its end to the start
 * of the next in its row (when `arrows`). */
static void strip_draw(Canvas *c, const StripLayout *S, int arrows) {
    const HmLayout *L = S->panel;
    if (S->title_ls.n) {
        int asc, desc;
        font_vmetrics(FONT_BOLD, STRIP_TITLE_PX, &asc, &desc);
        label_draw_lines(c, FONT_BOLD, STRIP_TITLE_PX, STRIP_TITLE_INSET, STRIP_MARGIN + asc, asc + desc + 2,
                         &S->title_ls, COL_TEXT);
    }
    for (int p = 0; p < S->n; p++) {
        hm_draw(c, &L[p], S->x[p], S->y[p]);
        if (arrows && p + 1 < S->n && S->y[p + 1] == S->y[p] && !L[p].hm->no_arrow) {
            double ay = S->y[p] + L[p].mat_y + (L[p].mat_h < L[p + 1].mat_h ? L[p].mat_h : L[p + 1].mat_h) / 2.0;
            /* 8 px clear of the colour bar's ticks and of the next panel's labels */
            double x0 = S->x[p] + L[p].w - STRIP_MARGIN + 8, x1 = S->x[p] + L[p].w + STRIP_GAP + STRIP_MARGIN - 8;
            canvas_arrow(c, x0, ay, x1, ay, 3.0, 13.0, RGB_HEX(0x707070));
        }
    }
}

int render_strip(const char *path, const char *title, const RenderHeatmap *panels, int n,
                 const RenderMeta *meta, char *err, size_t errlen) {
    return render_panels(path, title, panels, n, 1, meta, err, errlen);
}

int render_panels(const char *path, const char *title, const RenderHeatmap *panels, int n,
                  int arrows, const RenderMeta *meta, char *err, size_t errlen) {
    if (strip_check(panels, n, err, errlen) || font_ensure(err, errlen)) return -1;
    StripLayout S = {.panel = calloc((size_t)n, sizeof *S.panel), .x = calloc((size_t)n, sizeof *S.x),
                     .y = calloc((size_t)n, sizeof *S.y), .n = n};
    int status = -1;
    if (!S.panel || !S.x || !S.y) errmsg_set(err, errlen, "out of memory");
    else {
        strip_layout(&S, panels, title);
        Canvas c;
        status = canvas_init(&c, S.w, S.h, COL_BG, err, errlen);
        if (status == 0) {
            strip_draw(&c, &S, arrows);
            status = png_write_canvas(path, &c, meta, err, errlen);
            canvas_free(&c);
        }
    }
    free(S.panel);
    free(S.x);
    free(S.y);
    return status;
}
