/* grid.c — the "model view": every layer × head of one kind of attention as
 * thumbnails, row titles on the left ("layer 0"), column titles on top
 * ("head 0"), one shared colour bar, token labels on the outer edges when the
 * thumbnails' cells are large enough to carry them. */
#include "render/heatmap.h"
#include "render/colorbar.h"
#include "render/colormap.h"
#include "render/font.h"
#include "render/label.h"
#include "render/png.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COS45 0.70710678

int render_grid(const char *path, const char *title, const RenderHeatmap *cells,
                int rows, int cols, const char *const *row_titles,
                const char *const *col_titles, const RenderMeta *meta,
                char *err, size_t errlen) {
    Canvas c = {0};
    int status = -1;
    if (!cells || rows < 1 || cols < 1 || (long)rows * cols > 4096)
        return errmsg_set(err, errlen, "grid needs at least one cell (got %d x %d)", rows, cols);
    int rmax = 0, cmax = 0;
    for (int k = 0; k < rows * cols; k++) {
        const RenderHeatmap *hm = &cells[k];
        if (!hm->values || hm->rows < 1 || hm->cols < 1 || hm->rows > 4096 || hm->cols > 4096)
            return errmsg_set(err, errlen, "grid cell %d (row %d, column %d) has no values", k, k / cols, k % cols);
        if (hm->rows > rmax) rmax = hm->rows;
        if (hm->cols > cmax) cmax = hm->cols;
    }
    if (font_ensure(err, errlen)) return -1;

    /* Shared scale: cells[0]'s; a diverging auto scale covers every cell. */
    float vmin, vmax;
    cmap_scale(cells, rows * cols, &vmin, &vmax);

    int nmax = rmax > cmax ? rmax : cmax;
    int p = 180 / nmax;                 /* pixels per cell in a thumbnail */
    if (p > 30) p = 30;
    if (p < 2) p = nmax > 128 ? 1 : 2;
    int tw = cmax * p, th = rmax * p;   /* thumbnail slot */
    const int M = 28, G = 18, title_px = 22, head_px = 15, tok_px = 13, tick_px = 13;
    int asc, desc;
    char buf[512];
    /* A slot is at least as wide as its column title, so narrow thumbnails
     * (many queries, few keys) don't run the titles together. */
    for (int cc = 0; col_titles && cc < cols; cc++) {
        int w = col_titles[cc] ? font_width(FONT_BOLD, head_px, col_titles[cc]) : 0;
        if (w > tw) tw = w;
    }

    /* Token labels only when a cell is at least a text line high. */
    font_vmetrics(FONT_REGULAR, tok_px, &asc, &desc);
    int tokens = p >= asc + desc - 1;
    int row_tok_w = 0, col_tok_w = 0, angle = 0;
    if (tokens) {
        const RenderHeatmap *first = &cells[0];
        for (int r = 0; r < rows; r++) {
            const RenderHeatmap *hm = &cells[r * cols];
            for (int i = 0; i < hm->rows; i++) {
                int w = label_fit(FONT_REGULAR, tok_px, hm->row_labels, i, 120, buf, sizeof buf);
                if (w > row_tok_w) row_tok_w = w;
            }
        }
        for (int j = 0; j < first->cols; j++) {
            int w = label_fit(FONT_REGULAR, tok_px, first->col_labels, j, 120, buf, sizeof buf);
            if (w > col_tok_w) col_tok_w = w;
        }
        for (int cc = 1; cc < cols; cc++)
            for (int j = 0; j < cells[cc].cols; j++) {
                int w = label_fit(FONT_REGULAR, tok_px, cells[cc].col_labels, j, 120, buf, sizeof buf);
                if (w > col_tok_w) col_tok_w = w;
            }
        angle = col_tok_w <= p - 4 ? 0 : p * COS45 >= (asc + desc) * 1.05 ? 45 : 90;
    }
    int col_tok_h = !tokens ? 0 : angle == 0 ? asc + desc + 6 : angle == 45 ? (int)ceil((col_tok_w + asc) * COS45) + 10
                                                                             : col_tok_w + 10;

    int row_title_w = 0, head_h;
    for (int r = 0; row_titles && r < rows; r++) {
        int w = row_titles[r] ? font_width(FONT_BOLD, head_px, row_titles[r]) : 0;
        if (w > row_title_w) row_title_w = w;
    }
    font_vmetrics(FONT_BOLD, head_px, &asc, &desc);
    head_h = col_titles ? asc + desc + 8 : 0;
    int head_asc = asc;

    int x0 = M + (row_title_w ? row_title_w + 16 : 0) + (tokens ? row_tok_w + 8 : 0);
    int y = M, title_base = 0;
    if (title && *title) {
        font_vmetrics(FONT_BOLD, title_px, &asc, &desc);
        title_base = y + asc;
        y += asc + desc + 14;
    }
    int head_base = y + head_asc;
    y += head_h;
    int y0 = y + col_tok_h;
    int grid_w = cols * tw + (cols - 1) * G, grid_h = rows * th + (rows - 1) * G;
    int cbar_x = x0 + grid_w + 28, cbar_h = grid_h < 120 ? 120 : grid_h > 360 ? 360 : grid_h;
    long W = cbar_x + colorbar_width(vmin, vmax, 16, cbar_h, tick_px) + M;
    if (tokens && angle == 45) {
        long r = x0 + (cols - 1) * (tw + G) + (cells[cols - 1].cols - 1) * p + p / 2 + (long)ceil((col_tok_w + 13) * COS45) + 4;
        if (r + M > W) W = r + M;
    }
    if (title && M + font_width(FONT_BOLD, title_px, title) + M > W) W = M + font_width(FONT_BOLD, title_px, title) + M;
    long H = y0 + (grid_h > cbar_h ? grid_h : cbar_h) + M;
    if (canvas_init(&c, W, H, COL_BG, err, errlen)) goto cleanup;

    if (title_base) font_draw(&c, FONT_BOLD, title_px, M, title_base, title, COL_TEXT);
    for (int r = 0; r < rows; r++)
        for (int cc = 0; cc < cols; cc++) {
            const RenderHeatmap *hm = &cells[r * cols + cc];
            int x = x0 + cc * (tw + G) + (tw - hm->cols * p) / 2, ty = y0 + r * (th + G);
            heatmap_draw_cells(&c, hm, x, ty, p, p >= 12 ? 1 : 0, vmin, vmax);
            heatmap_draw_highlight(&c, hm, x, ty, p, p >= 8 ? 2 : 1);
            if (tokens && cc == 0)
                for (int i = 0; i < hm->rows; i++) {
                    label_fit(FONT_REGULAR, tok_px, hm->row_labels, i, 120, buf, sizeof buf);
                    font_draw_right(&c, FONT_REGULAR, tok_px, x - 6, font_center_baseline(tok_px, ty + i * p + p / 2.0), buf,
                                    i == hm->highlight_row ? COL_HILITE : COL_TEXT);
                }
            if (tokens && r == 0)
                for (int j = 0; j < hm->cols; j++) {
                    label_fit(FONT_REGULAR, tok_px, hm->col_labels, j, 120, buf, sizeof buf);
                    double cx = x + j * p + p / 2.0;
                    if (angle == 0)
                        font_draw_center(&c, FONT_REGULAR, tok_px, (int)lround(cx), ty - 6 - 3, buf, COL_TEXT);
                    else if (angle == 45)
                        font_draw_rotated(&c, FONT_REGULAR, tok_px, cx + 0.3 * tok_px * COS45 - 2, ty - 6 + 0.3 * tok_px * COS45,
                                          45, buf, COL_TEXT);
                    else
                        font_draw_rotated(&c, FONT_REGULAR, tok_px, cx + 0.34 * tok_px, ty - 6, 90, buf, COL_TEXT);
                }
            if (r == 0 && col_titles && col_titles[cc])
                font_draw_center(&c, FONT_BOLD, head_px, x + hm->cols * p / 2, head_base, col_titles[cc], COL_TEXT);
            if (cc == 0 && row_titles && row_titles[r])
                font_draw(&c, FONT_BOLD, head_px, M, font_center_baseline(head_px, ty + hm->rows * p / 2.0), row_titles[r],
                          COL_TEXT);
        }
    colorbar_draw(&c, cbar_x, y0, 16, cbar_h, cells[0].cmap, vmin, vmax, tick_px);
    if (png_write_canvas(path, &c, meta, err, errlen)) goto cleanup;
    status = 0;
cleanup:
    canvas_free(&c);
    return status;
}
