/* labelgrid.c — see labelgrid.h. */
#include "render/labelgrid.h"
#include "core/errmsg.h"
#include "render/canvas.h"
#include "render/font.h"
#include "render/label.h"
#include "render/png.h"
#include <stdio.h>

#define MARGIN 24
#define TITLE_PX 20
#define SUB_PX 14
#define NAME_PX 13
#define VALUE_PX 13
#define NOTE_PX 13
#define HEAD_PX 13
#define CELL_MIN_W 96
#define CELL_H 46
#define GAP 3
#define ROW_TITLE_MAX 160
#define MAX_CELLS 20000

typedef struct {
    int cell_w, row_title_w;
    int title_base, sub_base, head_base, grid_top, notes_top;
    long w, h;
} GridLayout;

static int widest(FontStyle st, int px, const char *const *s, int n, int min) {
    int w = min;
    for (int i = 0; s && i < n; i++) {
        int x = s[i] ? font_width(st, px, s[i]) : 0;
        if (x > w) w = x;
    }
    return w;
}

static void grid_layout(GridLayout *L, const RenderLabelGrid *g) {
    L->cell_w = CELL_MIN_W;
    for (int i = 0; i < g->rows * g->cols; i++) {
        const RenderLabelCell *c = &g->cells[i];
        int w = font_width(FONT_BOLD, NAME_PX, c->name ? c->name : "") + 12;
        if (c->value && font_width(FONT_REGULAR, VALUE_PX, c->value) + 12 > w) w = font_width(FONT_REGULAR, VALUE_PX, c->value) + 12;
        if (w > L->cell_w) L->cell_w = w;
    }
    L->row_title_w = widest(FONT_BOLD, HEAD_PX, g->row_titles, g->rows, 40) + 12;
    if (L->row_title_w > ROW_TITLE_MAX) L->row_title_w = ROW_TITLE_MAX;
    long grid_w = (long)L->row_title_w + (long)g->cols * (L->cell_w + GAP);
    long text_w = font_width(FONT_BOLD, TITLE_PX, g->title ? g->title : "");
    if (g->subtitle && font_width(FONT_REGULAR, SUB_PX, g->subtitle) > text_w) text_w = font_width(FONT_REGULAR, SUB_PX, g->subtitle);
    long notes_w = widest(FONT_REGULAR, NOTE_PX, g->notes, g->n_notes, 0);
    if (notes_w > text_w) text_w = notes_w;
    L->w = 2 * MARGIN + (grid_w > text_w ? grid_w : text_w);
    L->title_base = MARGIN + TITLE_PX;
    L->sub_base = L->title_base + (g->subtitle ? SUB_PX + 8 : 0);
    L->head_base = L->sub_base + 10 + HEAD_PX + 6;
    L->grid_top = L->head_base + 8;
    L->notes_top = L->grid_top + g->rows * (CELL_H + GAP) + 12;
    L->h = L->notes_top + (long)g->n_notes * (NOTE_PX + 7) + MARGIN;
}

static void draw_cell(Canvas *c, const RenderLabelCell *cell, int x, int y, int w) {
    Rgb full = {cell->rgb[0], cell->rgb[1], cell->rgb[2]};
    float s = cell->strength < 0 ? 0 : cell->strength > 1 ? 1 : cell->strength;
    canvas_blend_rect(c, x, y, w, CELL_H, full, s);
    canvas_stroke_rect(c, x, y, w, CELL_H, 1, COL_FRAME);
    /* the blended colour's lightness decides the text's colour */
    double lum = 0;
    const double k[3] = {0.299, 0.587, 0.114};
    for (int i = 0; i < 3; i++) lum += k[i] * (255 - s * (255 - cell->rgb[i]));
    Rgb ink = lum < 140 ? COL_BG : COL_TEXT;
    char buf[128];
    font_fit(FONT_BOLD, NAME_PX, cell->name ? cell->name : "", w - 8, buf, sizeof buf);
    font_draw_center(c, FONT_BOLD, NAME_PX, x + w / 2, y + 19, buf, ink);
    if (cell->value) font_draw_center(c, FONT_REGULAR, VALUE_PX, x + w / 2, y + 37, cell->value, ink);
}

static void grid_draw(Canvas *c, const GridLayout *L, const RenderLabelGrid *g) {
    char buf[256];
    if (g->title) font_draw(c, FONT_BOLD, TITLE_PX, MARGIN, L->title_base, g->title, COL_TEXT);
    if (g->subtitle) font_draw(c, FONT_REGULAR, SUB_PX, MARGIN, L->sub_base, g->subtitle, COL_MUTED);
    int x0 = MARGIN + L->row_title_w;
    for (int j = 0; j < g->cols; j++) {
        label_fit(FONT_BOLD, HEAD_PX, g->col_titles, j, L->cell_w, buf, sizeof buf);
        font_draw_center(c, FONT_BOLD, HEAD_PX, x0 + j * (L->cell_w + GAP) + L->cell_w / 2, L->head_base, buf, COL_AXIS);
    }
    for (int i = 0; i < g->rows; i++) {
        int y = L->grid_top + i * (CELL_H + GAP);
        label_fit(FONT_BOLD, HEAD_PX, g->row_titles, i, L->row_title_w - 10, buf, sizeof buf);
        font_draw_right(c, FONT_BOLD, HEAD_PX, x0 - 10, font_center_baseline(HEAD_PX, y + CELL_H / 2.0), buf, COL_AXIS);
        for (int j = 0; j < g->cols; j++)
            draw_cell(c, &g->cells[i * g->cols + j], x0 + j * (L->cell_w + GAP), y, L->cell_w);
    }
    for (int k = 0; k < g->n_notes; k++)
        if (g->notes[k])
            font_draw(c, FONT_REGULAR, NOTE_PX, MARGIN, L->notes_top + NOTE_PX + k * (NOTE_PX + 7), g->notes[k], COL_TEXT);
}

int render_label_grid(const char *path, const RenderLabelGrid *g, const RenderMeta *meta, char *err, size_t errlen) {
    if (!g->cells || g->rows < 1 || g->cols < 1 || (long)g->rows * g->cols > MAX_CELLS)
        return errmsg_set(err, errlen, "a grid of named cells needs 1 to %d cells (got %d x %d)", MAX_CELLS, g->rows, g->cols);
    if (font_ensure(err, errlen)) return -1;
    GridLayout L;
    grid_layout(&L, g);
    Canvas c;
    if (canvas_init_named(&c, path, L.w, L.h, COL_BG, err, errlen)) return -1;
    grid_draw(&c, &L, g);
    int rc = png_write_canvas(path, &c, meta, err, errlen);
    canvas_free(&c);
    return rc;
}
