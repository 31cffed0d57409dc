/* sheet.c — see sheet.h.  One walk over the blocks computes every position;
 * it runs twice, first to measure the picture, then to draw it. */
#include "render/sheet.h"
#include "render/canvas.h"
#include "render/font.h"
#include "render/png.h"
#include "core/errmsg.h"
#include <stdio.h>
#include <string.h>

#define MARGIN 32
#define TITLE_PX 24
#define NOTE_PX 15
#define HEADING_PX 20
#define CAPTION_PX 16
#define CELL_PX 17         /* text in a cell */
#define LABEL_PX 13        /* row and column labels */
#define CELL_H 36
#define CELL_MIN_W 64
#define GAP_X 40           /* between matrices on a line */
#define GAP_Y 26           /* between lines of matrices */
#define COL_GIVEN RGB_HEX(0xEEF1F4)
#define COL_BOX RGB_HEX(0x3C3C3C)

typedef struct {
    Canvas *c;                 /* NULL: measure only */
    int cell_w;                /* every cell of the sheet is this wide */
    long w, h;                 /* the extent reached */
} SheetWalk;

static const char *cell_at(const RenderSheetBlock *b, long k) {
    return b->cells && b->cells[k] ? b->cells[k] : "";
}

static int line_height(int px) {
    int asc, desc;
    font_vmetrics(FONT_REGULAR, px, &asc, &desc);
    return asc + desc;
}

/* The widest cell text of the sheet, padded: one width for every cell. */
static int sheet_cell_width(const RenderSheetBlock *blocks, int n) {
    int w = 0;
    for (int i = 0; i < n; i++)
        for (long k = 0; k < (long)blocks[i].rows * blocks[i].cols; k++) {
            int tw = font_width(FONT_REGULAR, CELL_PX, cell_at(&blocks[i], k));
            if (tw > w) w = tw;
        }
    return w + 20 > CELL_MIN_W ? w + 20 : CELL_MIN_W;
}

static int row_label_width(const RenderSheetBlock *b) {
    int w = 0;
    for (int i = 0; b->row_labels && i < b->rows; i++) {
        int tw = font_width(FONT_REGULAR, LABEL_PX, b->row_labels[i] ? b->row_labels[i] : "");
        if (tw > w) w = tw;
    }
    return w ? w + 10 : 0;
}

static int block_width(const SheetWalk *S, const RenderSheetBlock *b) {
    int mw = row_label_width(b) + b->cols * S->cell_w, cw = font_width(FONT_BOLD, CAPTION_PX, b->caption ? b->caption : "");
    return mw > cw ? mw : cw;
}

static int block_height(const RenderSheetBlock *b) {
    return line_height(CAPTION_PX) + 8 + (b->col_labels ? line_height(LABEL_PX) + 4 : 0) + b->rows * CELL_H;
}

/* One matrix with its caption and labels, its top-left corner at (x, y). */
static void draw_block(Canvas *c, const SheetWalk *S, const RenderSheetBlock *b, int x, int y) {
    int asc, desc;
    font_vmetrics(FONT_BOLD, CAPTION_PX, &asc, &desc);
    font_draw(c, FONT_BOLD, CAPTION_PX, x, y + asc, b->caption ? b->caption : "", COL_TEXT);
    y += asc + desc + 8;
    int lw = row_label_width(b), mx = x + lw;
    if (b->col_labels) {
        font_vmetrics(FONT_REGULAR, LABEL_PX, &asc, &desc);
        for (int j = 0; j < b->cols; j++)
            font_draw_center(c, FONT_REGULAR, LABEL_PX, mx + j * S->cell_w + S->cell_w / 2, y + asc,
                             b->col_labels[j] ? b->col_labels[j] : "", COL_MUTED);
        y += asc + desc + 4;
    }
    for (int i = 0; i < b->rows; i++) {
        int cy = y + i * CELL_H;
        if (b->row_labels)
            font_draw_right(c, FONT_REGULAR, LABEL_PX, mx - 8, font_center_baseline(LABEL_PX, cy + CELL_H / 2.0),
                            b->row_labels[i] ? b->row_labels[i] : "", COL_MUTED);
        for (int j = 0; j < b->cols; j++) {
            int cx = mx + j * S->cell_w;
            if (b->given) canvas_fill_rect(c, cx, cy, S->cell_w, CELL_H, COL_GIVEN);
            canvas_stroke_rect(c, cx, cy, S->cell_w + 1, CELL_H + 1, 1, COL_BOX);
            font_draw_center(c, FONT_REGULAR, CELL_PX, cx + S->cell_w / 2, font_center_baseline(CELL_PX, cy + CELL_H / 2.0),
                             cell_at(b, (long)i * b->cols + j), COL_TEXT);
        }
    }
}

/* Lines of text separated by '\n' from y on; returns the y below them. */
static int draw_notes(SheetWalk *S, const char *notes, int y) {
    int asc, desc;
    font_vmetrics(FONT_REGULAR, NOTE_PX, &asc, &desc);
    for (const char *p = notes; p && *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char line[1024];
        if (len >= sizeof line) len = sizeof line - 1;
        memcpy(line, p, len);
        line[len] = '\0';
        long right = MARGIN + font_width(FONT_REGULAR, NOTE_PX, line) + MARGIN;
        if (right > S->w) S->w = right;
        if (S->c) font_draw(S->c, FONT_REGULAR, NOTE_PX, MARGIN, y + asc, line, COL_TEXT);
        y += asc + desc + 6;
        p = e ? e + 1 : p + len;
    }
    return y;
}

/* A heading at y: its first line bold, a line after '\n' (a note on the
 * exercise) smaller; widens the sheet to hold them.  Returns the y below. */
static int draw_heading(SheetWalk *S, const char *caption, int y) {
    int asc, desc;
    const char *nl = strchr(caption, '\n');
    char first[512];
    snprintf(first, sizeof first, "%.*s", nl ? (int)(nl - caption) : (int)strlen(caption), caption);
    font_vmetrics(FONT_BOLD, HEADING_PX, &asc, &desc);
    if (S->c) font_draw(S->c, FONT_BOLD, HEADING_PX, MARGIN, y + asc, first, COL_TEXT);
    long right = MARGIN + font_width(FONT_BOLD, HEADING_PX, first) + MARGIN;
    y += asc + desc + 10;
    if (nl) {
        font_vmetrics(FONT_REGULAR, NOTE_PX, &asc, &desc);
        if (S->c) font_draw(S->c, FONT_REGULAR, NOTE_PX, MARGIN, y - 4 + asc, nl + 1, COL_TEXT);
        long r2 = MARGIN + font_width(FONT_REGULAR, NOTE_PX, nl + 1) + MARGIN;
        if (r2 > right) right = r2;
        y += asc + desc + 8;
    }
    if (right > S->w) S->w = right;
    return y;
}

/* Places (and with S->c draws) the title, notes and every block. */
static void sheet_walk(SheetWalk *S, const char *title, const char *notes, const RenderSheetBlock *blocks, int n) {
    int asc, desc, y = MARGIN, x = MARGIN, line_h = 0;
    font_vmetrics(FONT_BOLD, TITLE_PX, &asc, &desc);
    if (S->c) font_draw(S->c, FONT_BOLD, TITLE_PX, MARGIN, y + asc, title, COL_TEXT);
    S->w = MARGIN + font_width(FONT_BOLD, TITLE_PX, title) + MARGIN;
    y = draw_notes(S, notes, y + asc + desc + 10) + 8;
    for (int i = 0; i < n; i++) {
        const RenderSheetBlock *b = &blocks[i];
        if (b->rows <= 0) {   /* a heading on its own line */
            y += line_h + (line_h ? GAP_Y : 0) + 10;
            x = MARGIN;
            line_h = 0;
            y = draw_heading(S, b->caption ? b->caption : "", y);
            continue;
        }
        int bw = block_width(S, b), bh = block_height(b);
        if (x > MARGIN && (b->new_line || x + bw + MARGIN > RENDER_SHEET_MAX_W)) {
            y += line_h + GAP_Y;
            x = MARGIN;
            line_h = 0;
        }
        if (S->c) draw_block(S->c, S, b, x, y);
        if (x + bw + MARGIN > S->w) S->w = x + bw + MARGIN;
        x += bw + GAP_X;
        if (bh > line_h) line_h = bh;
    }
    S->h = y + line_h + MARGIN;
}

int render_sheet(const char *path, const char *title, const char *notes, const RenderSheetBlock *blocks,
                 int n, const RenderMeta *meta, char *err, size_t errlen) {
    if (!title || n < 0 || (n > 0 && !blocks)) return errmsg_set(err, errlen, "worksheet picture: nothing to draw");
    for (int i = 0; i < n; i++)
        if (blocks[i].rows > 64 || blocks[i].cols > 64 || (blocks[i].rows > 0 && blocks[i].cols < 1))
            return errmsg_set(err, errlen, "worksheet picture: matrix %d is %d x %d (1..64 a side)", i + 1,
                              blocks[i].rows, blocks[i].cols);
    if (font_ensure(err, errlen)) return -1;
    SheetWalk S = {.cell_w = sheet_cell_width(blocks, n)};
    sheet_walk(&S, title, notes, blocks, n);
    Canvas c;
    if (canvas_init_named(&c, path, S.w, S.h, COL_BG, err, errlen)) return -1;
    S.c = &c;
    sheet_walk(&S, title, notes, blocks, n);
    int rc = png_write_canvas(path, &c, meta, err, errlen);
    canvas_free(&c);
    return rc;
}
