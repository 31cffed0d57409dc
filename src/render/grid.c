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

#define COS45 0.70710678
#define MARGIN 28         /* around the picture */
#define SLOT_GAP 18       /* between thumbnails */
#define TITLE_PX 22
#define HEAD_PX 15        /* row and column titles */
#define TOKEN_PX 13
#define TOKEN_MAX_W 120
#define TICK_PX 13
#define CBAR_W 16

typedef struct {
    const RenderHeatmap *cells;          /* rows × cols thumbnails */
    int rows, cols;
    const char *const *row_titles, *const *col_titles;
    float vmin, vmax;                    /* the shared colour scale */
    int p;                               /* pixels per cell in a thumbnail */
    int slot_w, slot_h;                  /* room of one thumbnail */
    int tokens;                          /* token labels on the outer edges */
    int angle;                           /* of the key labels: 0, 45 or 90 */
    int row_tok_w, col_tok_w, col_tok_h;
    int title_base, head_base;           /* baselines of the title and column titles */
    int x0, y0;                          /* top-left of the first slot */
    int cbar_x, cbar_h;
    long w, h;
} GridLayout;

static int grid_check(const RenderHeatmap *cells, int rows, int cols, char *err, size_t errlen) {
    if (!cells || rows < 1 || cols < 1 || (long)rows * cols > 4096)
        return errmsg_set(err, errlen, "grid needs at least one cell (got %d x %d)", rows, cols);
    for (int k = 0; k < rows * cols; k++) {
        const RenderHeatmap *hm = &cells[k];
        if (!hm->values || hm->rows < 1 || hm->cols < 1 || hm->rows > 4096 || hm->cols > 4096)
            return errmsg_set(err, errlen, "grid cell %d (row %d, column %d) has no values", k, k / cols, k % cols);
    }
    return 0;
}

/* Pixels per cell: about 180 px for the most tokens, 2 to 30 px (1 beyond 128 tokens). */
static int thumb_cell(int nmax) {
    int p = 180 / nmax;
    if (p > 30) p = 30;
    if (p < 2) p = nmax > 128 ? 1 : 2;
    return p;
}

/* Token labels only when a cell is at least a text line high: query labels
 * left of the first column, key labels above the first row, standing at 45°
 * or upright when they are wider than a cell. */
static void grid_measure_tokens(GridLayout *L) {
    int asc, desc;
    char buf[512];
    font_vmetrics(FONT_REGULAR, TOKEN_PX, &asc, &desc);
    L->tokens = L->p >= asc + desc - 1;
    if (!L->tokens) return;
    for (int r = 0; r < L->rows; r++) {
        const RenderHeatmap *hm = &L->cells[r * L->cols];
        for (int i = 0; i < hm->rows; i++) {
            int w = label_fit(FONT_REGULAR, TOKEN_PX, hm->row_labels, i, TOKEN_MAX_W, buf, sizeof buf);
            if (w > L->row_tok_w) L->row_tok_w = w;
        }
    }
    for (int cc = 0; cc < L->cols; cc++) {
        const RenderHeatmap *hm = &L->cells[cc];
        for (int j = 0; j < hm->cols; j++) {
            int w = label_fit(FONT_REGULAR, TOKEN_PX, hm->col_labels, j, TOKEN_MAX_W, buf, sizeof buf);
            if (w > L->col_tok_w) L->col_tok_w = w;
        }
    }
    int p = L->p;
    L->angle = L->col_tok_w <= p - 4 ? 0 : p * COS45 >= (asc + desc) * 1.05 ? 45 : 90;
    L->col_tok_h = L->angle == 0 ? asc + desc + 6
                 : L->angle == 45 ? (int)ceil((L->col_tok_w + asc) * COS45) + 10 : L->col_tok_w + 10;
}

static int widest_title(const char *const *titles, int n) {
    int widest = 0;
    for (int k = 0; titles && k < n; k++) {
        int w = titles[k] ? font_width(FONT_BOLD, HEAD_PX, titles[k]) : 0;
        if (w > widest) widest = w;
    }
    return widest;
}

static void grid_layout(GridLayout *L, const char *title) {
    /* Thumbnails: one cell size for the largest map, slots as wide as the
     * column titles so narrow thumbnails (many queries, few keys) don't run
     * the titles together. */
    int rmax = 0, cmax = 0;
    for (int k = 0; k < L->rows * L->cols; k++) {
        if (L->cells[k].rows > rmax) rmax = L->cells[k].rows;
        if (L->cells[k].cols > cmax) cmax = L->cells[k].cols;
    }
    L->p = thumb_cell(rmax > cmax ? rmax : cmax);
    L->slot_w = cmax * L->p;
    L->slot_h = rmax * L->p;
    int col_title_w = widest_title(L->col_titles, L->cols);
    if (col_title_w > L->slot_w) L->slot_w = col_title_w;
    grid_measure_tokens(L);

    /* Horizontal: row titles, query tokens, the slots, the colour bar */
    int row_title_w = widest_title(L->row_titles, L->rows);
    L->x0 = MARGIN + (row_title_w ? row_title_w + 16 : 0) + (L->tokens ? L->row_tok_w + 8 : 0);

    /* Vertical: title, column titles, key tokens, the slots */
    int asc, desc, y = MARGIN;
    font_vmetrics(FONT_BOLD, HEAD_PX, &asc, &desc);
    int head_h = L->col_titles ? asc + desc + 8 : 0, head_asc = asc;
    if (title && *title) {
        font_vmetrics(FONT_BOLD, TITLE_PX, &asc, &desc);
        L->title_base = y + asc;
        y += asc + desc + 14;
    }
    L->head_base = y + head_asc;
    y += head_h;
    L->y0 = y + L->col_tok_h;

    /* Picture size */
    int grid_w = L->cols * L->slot_w + (L->cols - 1) * SLOT_GAP;
    int grid_h = L->rows * L->slot_h + (L->rows - 1) * SLOT_GAP;
    L->cbar_x = L->x0 + grid_w + 28;
    L->cbar_h = grid_h < 120 ? 120 : grid_h > 360 ? 360 : grid_h;
    L->w = L->cbar_x + colorbar_width(L->vmin, L->vmax, CBAR_W, L->cbar_h, TICK_PX) + MARGIN;
    if (L->tokens && L->angle == 45) {   /* the last column's key labels reach right of it */
        long r = L->x0 + (L->cols - 1) * (L->slot_w + SLOT_GAP) + (L->cells[L->cols - 1].cols - 1) * L->p + L->p / 2 +
                 (long)ceil((L->col_tok_w + TOKEN_PX) * COS45) + 4;
        if (r + MARGIN > L->w) L->w = r + MARGIN;
    }
    if (title && MARGIN + font_width(FONT_BOLD, TITLE_PX, title) + MARGIN > L->w)
        L->w = MARGIN + font_width(FONT_BOLD, TITLE_PX, title) + MARGIN;
    L->h = L->y0 + (grid_h > L->cbar_h ? grid_h : L->cbar_h) + MARGIN;
}

/* Query labels right-aligned left of a thumbnail at (x, y). */
static void draw_query_tokens(Canvas *c, const RenderHeatmap *hm, int x, int y, int p) {
    char buf[512];
    for (int i = 0; i < hm->rows; i++) {
        label_fit(FONT_REGULAR, TOKEN_PX, hm->row_labels, i, TOKEN_MAX_W, buf, sizeof buf);
        font_draw_right(c, FONT_REGULAR, TOKEN_PX, x - 6, font_center_baseline(TOKEN_PX, y + i * p + p / 2.0), buf,
                        i == hm->highlight_row ? COL_HILITE : COL_TEXT);
    }
}

/* Key labels above a thumbnail at (x, y), at `angle` degrees. */
static void draw_key_tokens(Canvas *c, const RenderHeatmap *hm, int x, int y, int p, int angle) {
    char buf[512];
    for (int j = 0; j < hm->cols; j++) {
        label_fit(FONT_REGULAR, TOKEN_PX, hm->col_labels, j, TOKEN_MAX_W, buf, sizeof buf);
        double cx = x + j * p + p / 2.0;
        if (angle == 0)
            font_draw_center(c, FONT_REGULAR, TOKEN_PX, (int)lround(cx), y - 6 - 3, buf, COL_TEXT);
        else if (angle == 45)
            font_draw_rotated(c, FONT_REGULAR, TOKEN_PX, cx + 0.3 * TOKEN_PX * COS45 - 2, y - 6 + 0.3 * TOKEN_PX * COS45,
                              45, buf, COL_TEXT);
        else
            font_draw_rotated(c, FONT_REGULAR, TOKEN_PX, cx + 0.34 * TOKEN_PX, y - 6, 90, buf, COL_TEXT);
    }
}

/* Thumbnail (r, cc), centred in its slot, with the labels and titles that
 * stand beside it on the grid's outer edges. */
static void grid_draw_thumbnail(Canvas *c, const GridLayout *L, int r, int cc) {
    const RenderHeatmap *hm = &L->cells[r * L->cols + cc];
    int p = L->p;
    int x = L->x0 + cc * (L->slot_w + SLOT_GAP) + (L->slot_w - hm->cols * p) / 2;
    int y = L->y0 + r * (L->slot_h + SLOT_GAP);
    heatmap_draw_cells(c, hm, x, y, p, p >= 12 ? 1 : 0, L->vmin, L->vmax);
    heatmap_draw_highlight(c, hm, x, y, p, p >= 8 ? 2 : 1);
    if (L->tokens && cc == 0) draw_query_tokens(c, hm, x, y, p);
    if (L->tokens && r == 0) draw_key_tokens(c, hm, x, y, p, L->angle);
    if (r == 0 && L->col_titles && L->col_titles[cc])
        font_draw_center(c, FONT_BOLD, HEAD_PX, x + hm->cols * p / 2, L->head_base, L->col_titles[cc], COL_TEXT);
    if (cc == 0 && L->row_titles && L->row_titles[r])
        font_draw(c, FONT_BOLD, HEAD_PX, MARGIN, font_center_baseline(HEAD_PX, y + hm->rows * p / 2.0), L->row_titles[r],
                  COL_TEXT);
}

int render_grid(const char *path, const char *title, const RenderHeatmap *cells,
                int rows, int cols, const char *const *row_titles,
                const char *const *col_titles, const RenderMeta *meta,
                char *err, size_t errlen) {
    if (grid_check(cells, rows, cols, err, errlen) || font_ensure(err, errlen)) return -1;
    GridLayout L = {.cells = cells, .rows = rows, .cols = cols, .row_titles = row_titles, .col_titles = col_titles};
    /* Shared scale: cells[0]'s; a diverging auto scale covers every cell. */
    cmap_scale(cells, rows * cols, &L.vmin, &L.vmax);
    grid_layout(&L, title);

    Canvas c;
    if (canvas_init(&c, L.w, L.h, COL_BG, err, errlen)) return -1;
    if (L.title_base) font_draw(&c, FONT_BOLD, TITLE_PX, MARGIN, L.title_base, title, COL_TEXT);
    for (int r = 0; r < rows; r++)
        for (int cc = 0; cc < cols; cc++) grid_draw_thumbnail(&c, &L, r, cc);
    colorbar_draw(&c, L.cbar_x, L.y0, CBAR_W, L.cbar_h, cells[0].cmap, L.vmin, L.vmax, TICK_PX);
    int status = png_write_canvas(path, &c, meta, err, errlen);
    canvas_free(&c);
    return status;
}
