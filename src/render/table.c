/* table.c — a table of text as a picture (the √d_k table of means, shape
 * diagrams): header row bold on a grey band, light rules, numbers
 * right-aligned, text left-aligned, long cells cut with "…". */
#include "render/canvas.h"
#include "render/font.h"
#include "render/png.h"
#include "render/render.h"
#include "core/errmsg.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CELL_MAX_W 420

/* A cell that reads as a number ("12", "-0.5", "−3.2e4", "1.5%") is right-aligned. */
static int looks_numeric(const char *s) {
    if (!s || !*s) return 0;
    if (!strncmp(s, "\xE2\x88\x92", 3)) s += 3;   /* U+2212 minus */
    else if (*s == '-' || *s == '+') s++;
    char *end;
    strtod(s, &end);
    if (end == s) return 0;
    if (*end == '%') end++;
    return *end == '\0';
}

int render_table(const char *path, const char *title, const char *const *cells,
                 int rows, int cols, const RenderMeta *meta, char *err, size_t errlen) {
    Canvas c = {0};
    int status = -1, *colw = NULL;
    unsigned char *numeric = NULL;
    if (!cells || rows < 1 || cols < 1 || (long)rows * cols > 100000)
        return errmsg_set(err, errlen, "table needs at least one cell (got %d x %d)", rows, cols);
    if (font_ensure(err, errlen)) return -1;
    colw = calloc((size_t)cols, sizeof *colw);
    if (!colw) return errmsg_set(err, errlen, "out of memory");

    const int M = 28, px = 15, title_px = 20, padx = 14;
    int asc, desc;
    char buf[1024];
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < cols; j++) {
            const char *s = cells[(long)r * cols + j];
            int w = font_fit(r == 0 ? FONT_BOLD : FONT_REGULAR, px, s ? s : "", CELL_MAX_W, buf, sizeof buf);
            if (w > colw[j]) colw[j] = w;
        }
    /* a column whose body cells are all numbers is right-aligned, header too */
    numeric = calloc((size_t)cols, 1);
    if (!numeric) { errmsg_set(err, errlen, "out of memory"); goto cleanup; }
    for (int j = 0; j < cols; j++) {
        numeric[j] = rows > 1;
        for (int r = 1; r < rows; r++)
            if (!looks_numeric(cells[(long)r * cols + j])) numeric[j] = 0;
    }
    font_vmetrics(FONT_REGULAR, px, &asc, &desc);
    int row_h = asc + desc + 14;
    long tw = 0;
    for (int j = 0; j < cols; j++) tw += colw[j] + 2 * padx;
    int y = M, title_base = 0, tasc, tdesc;
    if (title && *title) {
        font_vmetrics(FONT_BOLD, title_px, &tasc, &tdesc);
        title_base = y + tasc;
        y += tasc + tdesc + 14;
    }
    long W = M + tw + M, H = y + (long)rows * row_h + M;
    if (title && M + font_width(FONT_BOLD, title_px, title) + M > W) W = M + font_width(FONT_BOLD, title_px, title) + M;
    if (canvas_init(&c, W, H, COL_BG, err, errlen)) goto cleanup;

    if (title_base) font_draw(&c, FONT_BOLD, title_px, M, title_base, title, COL_TEXT);
    canvas_fill_rect(&c, M, y, (int)tw, row_h, RGB_HEX(0xECEFF2));
    for (int r = 0; r < rows; r++) {
        int ry = y + r * row_h;
        if (r > 0 && r % 2 == 0) canvas_fill_rect(&c, M, ry, (int)tw, row_h, RGB_HEX(0xF7F8F9));
        int x = M;
        for (int j = 0; j < cols; j++) {
            const char *s = cells[(long)r * cols + j];
            FontStyle st = r == 0 ? FONT_BOLD : FONT_REGULAR;
            font_fit(st, px, s ? s : "", CELL_MAX_W, buf, sizeof buf);
            int base = font_center_baseline(px, ry + row_h / 2.0);
            if (numeric[j] || (r > 0 && looks_numeric(s))) font_draw_right(&c, st, px, x + padx + colw[j], base, buf, COL_TEXT);
            else font_draw(&c, st, px, x + padx, base, buf, COL_TEXT);
            x += colw[j] + 2 * padx;
        }
        canvas_fill_rect(&c, M, ry + row_h - 1, (int)tw, 1, r == 0 ? RGB_HEX(0x8A8F96) : RGB_HEX(0xDADDE1));
    }
    canvas_fill_rect(&c, M, y, (int)tw, 1, RGB_HEX(0x8A8F96));
    canvas_fill_rect(&c, M, y + rows * row_h - 1, (int)tw, 1, RGB_HEX(0x8A8F96));

    if (png_write_canvas(path, &c, meta, err, errlen)) goto cleanup;
    status = 0;
cleanup:
    canvas_free(&c);
    free(colw);
    free(numeric);
    return status;
}
