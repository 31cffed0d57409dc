/* bars.c — bar charts of candidates (render_bars in render.h): one row per
 * item, its title on the left, then k cells, each the candidate's label
 * over a bar whose length is its value (0..1) and the value as a percentage.
 * The chosen candidate's bar is in the accent colour, the others grey-blue. */
#include "render/canvas.h"
#include "render/font.h"
#include "render/png.h"
#include "render/render.h"
#include "core/errmsg.h"
#include <stdio.h>
#include <string.h>

#define MARGIN 24
#define TITLE_PX 18
#define SUB_PX 13
#define TEXT_PX 12
#define ROW_H 34
#define CELL_W 118
#define BAR_W 80
#define TITLE_MAX_W 230
#define COL_BAR    RGB_HEX(0x6B8EB8)
#define COL_CHOSEN RGB_HEX(0xF0521C)

static void draw_cell(Canvas *c, int x, int y, const char *label, float v, int chosen) {
    char buf[256], pct[32];
    font_fit(chosen ? FONT_BOLD : FONT_REGULAR, TEXT_PX, label ? label : "", CELL_W - 8, buf, sizeof buf);
    font_draw(c, chosen ? FONT_BOLD : FONT_REGULAR, TEXT_PX, x, y + 13, buf, COL_TEXT);
    float f = v < 0 ? 0 : v > 1 ? 1 : v;
    canvas_fill_rect(c, x, y + 18, BAR_W, 10, COL_GRIDLINE);
    canvas_fill_rect(c, x, y + 18, (int)(f * BAR_W + 0.5f), 10, chosen ? COL_CHOSEN : COL_BAR);
    snprintf(pct, sizeof pct, "%.0f%%", 100.0 * v);
    font_draw(c, FONT_REGULAR, TEXT_PX - 1, x + BAR_W + 4, y + 28, pct, COL_MUTED);
}

int render_bars(const char *path, const RenderBars *b, const RenderMeta *meta, char *err, size_t errlen) {
    if (!b || b->n < 1 || b->k < 1) return errmsg_set(err, errlen, "a bar chart needs at least one row and one bar");
    if (font_ensure(err, errlen)) return -1;
    char title[512], sub[512] = "";
    snprintf(title, sizeof title, "%s", b->title ? b->title : "");
    char *nl = strchr(title, '\n');
    if (nl) { *nl = '\0'; snprintf(sub, sizeof sub, "%s", nl + 1); }
    int top = MARGIN + TITLE_PX + (sub[0] ? SUB_PX + 8 : 0) + 14;
    long w = 2L * MARGIN + TITLE_MAX_W + (long)b->k * CELL_W, h = top + (long)b->n * ROW_H + MARGIN;
    Canvas c;
    if (canvas_init(&c, w, h, COL_BG, err, errlen)) return -1;
    font_draw(&c, FONT_BOLD, TITLE_PX, MARGIN, MARGIN + TITLE_PX, title, COL_TEXT);
    if (sub[0]) font_draw(&c, FONT_REGULAR, SUB_PX, MARGIN, MARGIN + TITLE_PX + SUB_PX + 6, sub, COL_MUTED);
    for (int r = 0; r < b->n; r++) {
        int y = top + r * ROW_H;
        char buf[256];
        if (r % 2) canvas_fill_rect(&c, MARGIN - 6, y - 2, (int)(w - 2 * MARGIN + 12), ROW_H, RGB_HEX(0xF7F8F9));
        font_fit(FONT_REGULAR, TEXT_PX + 1, b->row_titles ? b->row_titles[r] : "", TITLE_MAX_W - 10, buf, sizeof buf);
        font_draw(&c, FONT_REGULAR, TEXT_PX + 1, MARGIN, y + 20, buf, COL_TEXT);
        for (int j = 0; j < b->k; j++)
            draw_cell(&c, MARGIN + TITLE_MAX_W + j * CELL_W, y, b->labels[(long)r * b->k + j],
                      b->values[(long)r * b->k + j], b->chosen && b->chosen[r] == j);
    }
    int rc = png_write_canvas(path, &c, meta, err, errlen);
    canvas_free(&c);
    return rc;
}
