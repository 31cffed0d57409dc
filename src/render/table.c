/* table.c — a table of text as a picture (the √d_k table of means, shape
 * diagrams): header row bold on a grey band, light rules, numbers
 * right-aligned, text left-aligned, long cells cut with "…". */
#include "render/canvas.h"
#include "render/font.h"
#include "render/png.h"
#include "render/render.h"
#include "core/errmsg.h"
#include <stdlib.h>
#include <string.h>

#define CELL_MAX_W 420
#define MARGIN 28
#define TEXT_PX 15
#define TITLE_PX 20
#define PAD_X 14          /* left and right of a cell's text */
#define COL_HEADER_BAND RGB_HEX(0xECEFF2)
#define COL_STRIPE      RGB_HEX(0xF7F8F9)   /* every other body row */
#define COL_RULE_STRONG RGB_HEX(0x8A8F96)   /* top, under the header, bottom */
#define COL_RULE        RGB_HEX(0xDADDE1)

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

typedef struct {
    const char *const *cells;  /* rows × cols, row 0 the header */
    int rows, cols;
    int *colw;                 /* (cols) widest text of each column (owned) */
    unsigned char *numeric;    /* (cols) 1 = a column of numbers, right-aligned (owned) */
    int row_h;
    int title_base, top;       /* title baseline, top of the table */
    long table_w, w, h;
} TableLayout;

static void table_free(TableLayout *T) {
    free(T->colw);
    free(T->numeric);
}

/* Column widths, numeric columns (every body cell a number; the header then
 * aligns with them), and the picture's size.  0, or -1 with err. */
static int table_layout(TableLayout *T, const char *title, char *err, size_t errlen) {
    T->colw = calloc((size_t)T->cols, sizeof *T->colw);
    T->numeric = calloc((size_t)T->cols, 1);
    if (!T->colw || !T->numeric) return errmsg_set(err, errlen, "out of memory");
    char buf[1024];
    for (int r = 0; r < T->rows; r++)
        for (int j = 0; j < T->cols; j++) {
            const char *s = T->cells[(long)r * T->cols + j];
            int w = font_fit(r == 0 ? FONT_BOLD : FONT_REGULAR, TEXT_PX, s ? s : "", CELL_MAX_W, buf, sizeof buf);
            if (w > T->colw[j]) T->colw[j] = w;
        }
    for (int j = 0; j < T->cols; j++) {
        T->numeric[j] = T->rows > 1;
        for (int r = 1; r < T->rows; r++)
            if (!looks_numeric(T->cells[(long)r * T->cols + j])) T->numeric[j] = 0;
    }
    int asc, desc;
    font_vmetrics(FONT_REGULAR, TEXT_PX, &asc, &desc);
    T->row_h = asc + desc + 14;
    for (int j = 0; j < T->cols; j++) T->table_w += T->colw[j] + 2 * PAD_X;
    int y = MARGIN;
    if (title && *title) {
        font_vmetrics(FONT_BOLD, TITLE_PX, &asc, &desc);
        T->title_base = y + asc;
        y += asc + desc + 14;
    }
    T->top = y;
    T->w = MARGIN + T->table_w + MARGIN;
    T->h = y + (long)T->rows * T->row_h + MARGIN;
    if (title && MARGIN + font_width(FONT_BOLD, TITLE_PX, title) + MARGIN > T->w)
        T->w = MARGIN + font_width(FONT_BOLD, TITLE_PX, title) + MARGIN;
    return 0;
}

/* Row r: its band, its cells (numbers right-aligned), the rule under it. */
static void table_draw_row(Canvas *c, const TableLayout *T, int r) {
    char buf[1024];
    int ry = T->top + r * T->row_h, tw = (int)T->table_w;
    if (r > 0 && r % 2 == 0) canvas_fill_rect(c, MARGIN, ry, tw, T->row_h, COL_STRIPE);
    int x = MARGIN;
    for (int j = 0; j < T->cols; j++) {
        const char *s = T->cells[(long)r * T->cols + j];
        FontStyle st = r == 0 ? FONT_BOLD : FONT_REGULAR;
        font_fit(st, TEXT_PX, s ? s : "", CELL_MAX_W, buf, sizeof buf);
        int base = font_center_baseline(TEXT_PX, ry + T->row_h / 2.0);
        if (T->numeric[j] || (r > 0 && looks_numeric(s)))
            font_draw_right(c, st, TEXT_PX, x + PAD_X + T->colw[j], base, buf, COL_TEXT);
        else
            font_draw(c, st, TEXT_PX, x + PAD_X, base, buf, COL_TEXT);
        x += T->colw[j] + 2 * PAD_X;
    }
    canvas_fill_rect(c, MARGIN, ry + T->row_h - 1, tw, 1, r == 0 ? COL_RULE_STRONG : COL_RULE);
}

static void table_draw(Canvas *c, const TableLayout *T, const char *title) {
    int tw = (int)T->table_w;
    if (T->title_base) font_draw(c, FONT_BOLD, TITLE_PX, MARGIN, T->title_base, title, COL_TEXT);
    canvas_fill_rect(c, MARGIN, T->top, tw, T->row_h, COL_HEADER_BAND);
    for (int r = 0; r < T->rows; r++) table_draw_row(c, T, r);
    canvas_fill_rect(c, MARGIN, T->top, tw, 1, COL_RULE_STRONG);
    canvas_fill_rect(c, MARGIN, T->top + T->rows * T->row_h - 1, tw, 1, COL_RULE_STRONG);
}

int render_table(const char *path, const char *title, const char *const *cells,
                 int rows, int cols, const RenderMeta *meta, char *err, size_t errlen) {
    if (!cells || rows < 1 || cols < 1 || (long)rows * cols > 100000)
        return errmsg_set(err, errlen, "table needs at least one cell (got %d x %d)", rows, cols);
    if (font_ensure(err, errlen)) return -1;
    TableLayout T = {.cells = cells, .rows = rows, .cols = cols};
    Canvas c;
    int status = table_layout(&T, title, err, errlen);
    if (status == 0) status = canvas_init(&c, T.w, T.h, COL_BG, err, errlen);
    if (status == 0) {
        table_draw(&c, &T, title);
        status = png_write_canvas(path, &c, meta, err, errlen);
        canvas_free(&c);
    }
    table_free(&T);
    return status;
}
