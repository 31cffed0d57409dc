/* grid.c — the "model view": every layer × head of one kind of attention as
 * thumbnails, row titles on the left ("layer 0"), column titles on top
 * ("head 0"), one shared colour bar; token labels on every thumbnail up to 24
 * tokens, beyond on the outer edges, thinned to every k-th token (a note under
 * the grid says so).  Titles fold to the grid's width; a grid wider than a
 * slide (1920 px) puts each layer's heads in several rows. */
#include "render/heatmap.h"
#include "render/colorbar.h"
#include "render/colormap.h"
#include "render/font.h"
#include "render/label.h"
#include "render/fit.h"
#include "render/png.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define COS45 0.70710678
#define MARGIN 28         /* around the picture */
#define SLOT_GAP 18       /* between thumbnails */
#define TITLE_PX 22
#define HEAD_PX 15        /* row and column titles */
#define TOKEN_PX 12
#define TOKEN_MAX_W 120
#define TICK_PX 13
#define CBAR_W 16

#define EACH_MAX 24       /* up to this many tokens every thumbnail is labelled */
#define EACH_CELL 16      /* ... with cells at least this large */
#define SUB_PX 15         /* the title's second line */
#define NOTE_PX 13
#define WRAP_MIN_W 560    /* titles fold at the grid's width, not narrower than this */
#define LAYER_GAP 30      /* more between layers than between the folded rows of one */

typedef struct {
    const RenderHeatmap *cells;          /* rows × cols thumbnails */
    int rows, cols;
    const char *title;                   /* first line of the title */
    char subtitle[1024];                 /* its second line ("" none) */
    const char *const *row_titles, *const *col_titles;
    float vmin, vmax;                    /* the shared colour scale */
    int p;                               /* pixels per cell in a thumbnail */
    int each;                            /* token labels on every thumbnail */
    int edge_queries;                    /* ... but the query labels only left of the first column */
    int edge_only;                       /* labels on the outer edges only, whatever the size */
    int p_max;                           /* cells no larger than this (0: thumb_cell's) */
    int step;                            /* label every step-th token (outer edges) */
    int slot_w, slot_h;                  /* room of one thumbnail with its labels */
    int angle;                           /* of the key labels: 0, 45 or 90 */
    int row_tok_w, col_tok_w, col_tok_h;
    int title_base, sub_base, head_base; /* baselines of the title lines and column titles */
    int x0, y0;                          /* top-left of the first slot */
    int cbar_x, cbar_y, cbar_h;
    LabelLines title_ls, sub_ls;         /* the title lines folded to the grid's width */
    int note_base;                       /* "token labels: every 4th …" under the grid, 0 none */
    int fold, dcols, row_gap;            /* a layer's heads in `fold` rows of dcols (a grid
                                            wider than a slide folds), the gap between rows */
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

/* Pixels per cell: about 180 px for the most tokens, 2 to 30 px (1 beyond
 * 128 tokens); at least EACH_CELL up to EACH_MAX tokens, to carry labels. */
static int thumb_cell(int nmax) {
    int p = 180 / nmax;
    if (p > 30) p = 30;
    if (nmax <= EACH_MAX && p < EACH_CELL) p = EACH_CELL;
    if (p < 2) p = nmax > 128 ? 1 : 2;
    return p;
}

/* Widths of the query and key labels (every step-th), the angle of the key
 * labels (horizontal when they fit a cell, 45° when neighbours don't touch,
 * else upright) and the height they take. */
static void grid_measure_tokens(GridLayout *L) {
    int asc, desc;
    char buf[512];
    font_vmetrics(FONT_REGULAR, TOKEN_PX, &asc, &desc);
    int line = asc + desc;
    L->step = L->p >= line - 1 ? 1 : (int)ceil((double)line / L->p);
    for (int r = 0; r < L->rows; r++) {
        const RenderHeatmap *hm = &L->cells[r * L->cols];
        for (int i = 0; i < hm->rows; i += L->step) {
            int w = label_fit(FONT_REGULAR, TOKEN_PX, hm->row_labels, i, TOKEN_MAX_W, buf, sizeof buf);
            if (w > L->row_tok_w) L->row_tok_w = w;
        }
    }
    for (int cc = 0; cc < L->cols; cc++) {
        const RenderHeatmap *hm = &L->cells[cc];
        for (int j = 0; j < hm->cols; j += L->step) {
            int w = label_fit(FONT_REGULAR, TOKEN_PX, hm->col_labels, j, TOKEN_MAX_W, buf, sizeof buf);
            if (w > L->col_tok_w) L->col_tok_w = w;
        }
    }
    int pitch = L->p * L->step;
    L->angle = L->col_tok_w <= pitch - 4 ? 0 : pitch * COS45 >= line * 1.05 ? 45 : 90;
    L->col_tok_h = L->angle == 0 ? line + 6
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

/* Title lines, then column titles: their baselines; returns the y below them. */
static int grid_layout_titles(GridLayout *L, int y) {
    int asc, desc;
    if (L->title_ls.n) {
        font_vmetrics(FONT_BOLD, TITLE_PX, &asc, &desc);
        L->title_base = y + asc;
        y += L->title_ls.n * (asc + desc + 2) - 2 + (L->sub_ls.n ? 4 : 14);
    }
    if (L->sub_ls.n) {
        font_vmetrics(FONT_REGULAR, SUB_PX, &asc, &desc);
        L->sub_base = y + asc;
        y += L->sub_ls.n * (asc + desc + 2) - 2 + 12;
    }
    font_vmetrics(FONT_BOLD, HEAD_PX, &asc, &desc);
    L->head_base = y + asc;
    return y + (L->col_titles ? asc + desc + 8 : 0);
}

/* Thumbnails: one cell size for the largest map; a slot holds a thumbnail
 * (and, when every thumbnail is labelled, its labels), at least as wide as the
 * column titles so narrow thumbnails don't run the titles together; x0 after
 * the row titles and the query tokens of the outer edge. */
static void grid_layout_cells(GridLayout *L) {
    int rmax = 0, cmax = 0;
    for (int k = 0; k < L->rows * L->cols; k++) {
        if (L->cells[k].rows > rmax) rmax = L->cells[k].rows;
        if (L->cells[k].cols > cmax) cmax = L->cells[k].cols;
    }
    int nmax = rmax > cmax ? rmax : cmax;
    L->p = thumb_cell(nmax);
    if (L->p_max && L->p > L->p_max) L->p = L->p_max;
    grid_measure_tokens(L);
    L->each = !L->edge_only && nmax <= EACH_MAX && L->step == 1;
    L->slot_w = cmax * L->p + (L->each && !L->edge_queries ? L->row_tok_w + 8 : 0);
    L->slot_h = rmax * L->p + (L->each ? L->col_tok_h : 0);
    int col_title_w = widest_title(L->col_titles, L->cols);
    if (col_title_w > L->slot_w) L->slot_w = col_title_w;
    int row_title_w = widest_title(L->row_titles, L->rows);
    L->x0 = MARGIN + (row_title_w ? row_title_w + 16 : 0) + (L->each && !L->edge_queries ? 0 : L->row_tok_w + 8);
}

/* Top of display row dr: a layer's `fold` rows lie row_gap apart, layers a
 * little further (LAYER_GAP more) once they fold, so a layer reads as one block. */
static int grid_row_top(const GridLayout *L, int dr) {
    int layer = dr / L->fold;
    return L->y0 + dr * (L->slot_h + L->row_gap) + (L->fold > 1 ? layer * LAYER_GAP : 0);
}

/* Everything that depends on how many display rows a layer's heads take
 * (fold): the titles folded to the grid's width, the colour bar, w and h. */
static void grid_layout_place(GridLayout *L, int fold) {
    int asc, desc;
    L->dcols = (L->cols + fold - 1) / fold;
    L->fold = (L->cols + L->dcols - 1) / L->dcols;   /* no empty rows */
    font_vmetrics(FONT_BOLD, HEAD_PX, &asc, &desc);
    L->row_gap = SLOT_GAP + (L->fold > 1 ? asc + desc + 8 : 0);   /* room for the head titles */
    int grid_w = L->dcols * L->slot_w + (L->dcols - 1) * SLOT_GAP;
    /* Vertical: title lines (folded to the grid's width), column titles, key
     * tokens (outer edge), the slots */
    int room = L->x0 + grid_w + 28 + CBAR_W - MARGIN;
    if (room < WRAP_MIN_W) room = WRAP_MIN_W;
    label_wrap(FONT_BOLD, TITLE_PX, L->title, room, &L->title_ls);
    label_wrap(FONT_REGULAR, SUB_PX, L->subtitle, room, &L->sub_ls);
    L->note_base = 0;
    L->y0 = grid_layout_titles(L, MARGIN) + (L->each ? 0 : L->col_tok_h);

    int drows = L->rows * L->fold;
    int grid_h = grid_row_top(L, drows - 1) + L->slot_h - L->y0;
    L->cbar_x = L->x0 + grid_w + 28;
    L->cbar_y = L->y0 + (L->each ? L->col_tok_h : 0);
    L->cbar_h = grid_h < 120 ? 120 : grid_h > 360 ? 360 : grid_h;
    L->w = L->cbar_x + colorbar_width(L->vmin, L->vmax, CBAR_W, L->cbar_h, TICK_PX) + MARGIN;
    if (L->angle == 45) {   /* the last column's key labels reach right of it */
        long r = L->x0 + (L->dcols - 1) * (L->slot_w + SLOT_GAP) + L->slot_w + (long)ceil((L->col_tok_w + TOKEN_PX) * COS45) + 4;
        if (r + MARGIN > L->w) L->w = r + MARGIN;
    }
    int tw = L->title_ls.w, sw = L->sub_ls.w;
    if (MARGIN + (tw > sw ? tw : sw) + MARGIN > L->w) L->w = MARGIN + (tw > sw ? tw : sw) + MARGIN;
    L->h = L->y0 + (grid_h > L->cbar_h + (L->cbar_y - L->y0) ? grid_h : L->cbar_h + (L->cbar_y - L->y0)) + MARGIN;
    if (L->step > 1) {   /* thinned labels: the picture says so */
        font_vmetrics(FONT_REGULAR, NOTE_PX, &asc, &desc);
        L->note_base = (int)L->h - MARGIN + 8 + asc;
        L->h += asc + desc + 8;
    }
}

/* How many display rows a layer's heads take.  By default all heads in one
 * row, unless the grid would be wider than a slide (FIT_SLIDE_W): then the
 * query labels only once, left of each row (a row's thumbnails share them),
 * and if that is still too wide, the fewest rows of fully labelled thumbnails
 * that make it fit.  On a slide (--slide) the fold that lets the grid be drawn
 * largest on 1920 x 1080 (wide grids fold, a tall one stays). */
/* Labels on the outer edges only and cells as large as a slide's width allows
 * (not below 2 px), one display row per layer: many layers of labelled
 * thumbnails folded into rows grew too tall (GPT-2's 12 x 12 heads at 22
 * tokens: 1915 x 16845 px). */
static void grid_layout_edges(GridLayout *L) {
    L->edge_only = 1;
    L->edge_queries = 0;
    L->p_max = 0;
    grid_layout_cells(L);
    grid_layout_place(L, 1);
    while (L->w > FIT_SLIDE_W && L->p > 2) {
        L->p_max = L->p - 1;
        grid_layout_cells(L);
        grid_layout_place(L, 1);
    }
}

/* The scale at which L fits a 1920 x 1080 slide. */
static double grid_slide_scale(const GridLayout *L) {
    double sx = (double)FIT_SLIDE_W / L->w, sy = (double)FIT_SLIDE_H / L->h;
    return sx < sy ? sx : sy;
}

static void grid_layout_folds(GridLayout *L);
static int grid_drawable(const GridLayout *L);

/* grid_layout_folds, then, when it is taller than FIT_MAX_SIDE (or drawn
 * smaller on a slide) with every thumbnail labelled, grid_layout_edges. */
/* 1 when a canvas of L's size can be made (canvas.h's limits). */
static int grid_drawable(const GridLayout *L) {
    return L->w <= CANVAS_MAX_SIDE && L->h <= CANVAS_MAX_SIDE && (long)L->w * L->h <= CANVAS_MAX_PIXELS;
}

static void grid_layout(GridLayout *L) {
    grid_layout_folds(L);
    if (!L->each) return;
    long w = L->w, h = L->h;
    double sc = grid_slide_scale(L);
    if (!fit_is_slide() && h <= FIT_MAX_SIDE) return;
    GridLayout e = *L;
    grid_layout_edges(&e);
    if (fit_is_slide() ? grid_slide_scale(&e) > sc : (e.h < h && e.w <= (w > FIT_SLIDE_W ? w : FIT_SLIDE_W))) *L = e;
    /* many heads with long column titles (TinyLlama's 22 x 32 at 14 tokens folded
     * to 1703 x 51270): labels on the edges, wider than a slide, is still a
     * picture (fit.h scales it to FIT_MAX_SIDE) where the folded one is none */
    else if (!grid_drawable(L) && grid_drawable(&e)) *L = e;
}

/* Long maps (more than SMALL_CELLS_FROM tokens or blocks: 1 or 2 px a cell
 * already): cells down to 1 px keep a layer's heads on one row within a
 * slide's width, before folding them into several rows.  GPT-2's 12 x 12
 * heads at 400 tokens (100 blocks): 1,738 x 1,707 px, a layer × head grid
 * drawn as it is, where the fold to 2 px cells made a picture over 5,000 px
 * tall, scaled down to 3,000 (thumbnails no larger, and a resample). */
#define SMALL_CELLS_FROM 64
static int grid_layout_small_cells(GridLayout *L) {
    int nmax = 0;
    for (int k = 0; k < L->rows * L->cols; k++) {
        if (L->cells[k].rows > nmax) nmax = L->cells[k].rows;
        if (L->cells[k].cols > nmax) nmax = L->cells[k].cols;
    }
    if (nmax <= SMALL_CELLS_FROM || L->each) return 0;
    for (int p = L->p - 1; p >= 1; p--) {
        L->p_max = p;
        grid_layout_cells(L);
        grid_layout_place(L, 1);
        if (L->w <= FIT_SLIDE_W) return 1;
    }
    L->p_max = 0;
    grid_layout_cells(L);
    return 0;
}

static void grid_layout_folds(GridLayout *L) {
    grid_layout_cells(L);
    int best = 1, slide = fit_is_slide();
    double best_scale = 0;
    if (!slide) {
        grid_layout_place(L, 1);
        if (L->w <= FIT_SLIDE_W || grid_layout_small_cells(L)) return;
        if (L->each) {
            L->edge_queries = 1;
            grid_layout_cells(L);
            grid_layout_place(L, 1);
            if (L->w <= FIT_SLIDE_W) return;
            L->edge_queries = 0;
            grid_layout_cells(L);
        }
    }
    for (int fold = 1; fold <= L->cols; fold++) {
        if (fold > 1 && (L->cols + fold - 1) / fold == (L->cols + fold - 2) / (fold - 1)) continue;   /* same dcols */
        grid_layout_place(L, fold);
        if (!slide) {
            best = fold;
            if (L->w <= FIT_SLIDE_W) break;
            continue;
        }
        double sx = (double)FIT_SLIDE_W / L->w, sy = (double)FIT_SLIDE_H / L->h, sc = sx < sy ? sx : sy;
        if (sc > best_scale * 1.02) { best = fold; best_scale = sc; }
    }
    grid_layout_place(L, best);
    if (grid_drawable(L)) return;
    /* folded to a slide's width it grew too tall to draw (GPT-2's 12 x 12 heads at
     * 400 tokens: 1503 x 21914): the fold whose longer side is shortest among those
     * that draw; fit.h then scales it to FIT_MAX_SIDE */
    int pick = 0;
    long side = 0;
    for (int fold = 1; fold <= L->cols; fold++) {
        if (fold > 1 && (L->cols + fold - 1) / fold == (L->cols + fold - 2) / (fold - 1)) continue;
        grid_layout_place(L, fold);
        long s = L->w > L->h ? L->w : L->h;
        if (grid_drawable(L) && (!pick || s < side)) { pick = fold; side = s; }
    }
    grid_layout_place(L, pick ? pick : best);
}

/* Query labels right-aligned left of a thumbnail at (x, y), every step-th. */
static void draw_query_tokens(Canvas *c, const RenderHeatmap *hm, int x, int y, int p, int step) {
    char buf[512];
    for (int i = 0; i < hm->rows; i += step) {
        label_fit(FONT_REGULAR, TOKEN_PX, hm->row_labels, i, TOKEN_MAX_W, buf, sizeof buf);
        label_draw_right(c, FONT_REGULAR, TOKEN_PX, x - 6, font_center_baseline(TOKEN_PX, y + i * p + p / 2.0), buf,
                         i == hm->highlight_row ? COL_HILITE : COL_TEXT);
    }
}

/* Key labels above a thumbnail at (x, y), every step-th, at `angle` degrees. */
static void draw_key_tokens(Canvas *c, const RenderHeatmap *hm, int x, int y, int p, int step, int angle) {
    char buf[512];
    for (int j = 0; j < hm->cols; j += step) {
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

/* Thumbnail (r, cc) in its slot, with its labels (every thumbnail's, or
 * those on the grid's outer edges), its titles and its outline. */
static void grid_draw_thumbnail(Canvas *c, const GridLayout *L, int r, int cc) {
    const RenderHeatmap *hm = &L->cells[r * L->cols + cc];
    int dr = r * L->fold + cc / L->dcols, dc = cc % L->dcols;   /* where it is drawn */
    int p = L->p, lab = L->each && !L->edge_queries ? L->row_tok_w + 8 : 0, top = grid_row_top(L, dr);
    int x = L->x0 + dc * (L->slot_w + SLOT_GAP) + lab + (L->slot_w - lab - hm->cols * p) / 2;
    int y = top + (L->each ? L->col_tok_h : 0);
    heatmap_draw_cells(c, hm, x, y, p, p >= 12 ? 1 : 0, L->vmin, L->vmax);
    heatmap_draw_highlight(c, hm, x, y, p, p >= 8 ? 2 : 1);
    if (hm->outline) canvas_stroke_rect(c, x - 5, y - 5, hm->cols * p + 10, hm->rows * p + 10, 3, COL_HILITE);
    if ((L->each && !L->edge_queries) || dc == 0) draw_query_tokens(c, hm, x, y, p, L->step);
    if (L->each || dr == 0) draw_key_tokens(c, hm, x, y, p, L->step, L->angle);
    if ((dr == 0 || L->fold > 1) && L->col_titles && L->col_titles[cc])
        font_draw_center(c, FONT_BOLD, HEAD_PX, x + hm->cols * p / 2, dr == 0 ? L->head_base : top - 8,
                         L->col_titles[cc], COL_TEXT);
    if (cc == 0 && L->row_titles && L->row_titles[r]) {   /* beside the middle of the layer's rows */
        double mid = (y + grid_row_top(L, dr + L->fold - 1) + L->slot_h - (L->slot_h - hm->rows * p - (y - top))) / 2.0;
        font_draw(c, FONT_BOLD, HEAD_PX, MARGIN, font_center_baseline(HEAD_PX, mid), L->row_titles[r], COL_TEXT);
    }
}

int render_grid(const char *path, const char *title, const RenderHeatmap *cells,
                int rows, int cols, const char *const *row_titles,
                const char *const *col_titles, const RenderMeta *meta,
                char *err, size_t errlen) {
    if (grid_check(cells, rows, cols, err, errlen) || font_ensure(err, errlen)) return -1;
    GridLayout L = {.cells = cells, .rows = rows, .cols = cols, .row_titles = row_titles, .col_titles = col_titles};
    char first[1024] = "";
    if (title) {   /* "first line\nsecond line" */
        const char *nl = strchr(title, '\n');
        snprintf(first, sizeof first, "%.*s", nl ? (int)(nl - title) : (int)strlen(title), title);
        if (nl) snprintf(L.subtitle, sizeof L.subtitle, "%s", nl + 1);
        L.title = first;
    }
    /* Shared scale: cells[0]'s; a diverging auto scale covers every cell. */
    cmap_scale(cells, rows * cols, &L.vmin, &L.vmax);
    grid_layout(&L);

    Canvas c;
    if (canvas_init_named(&c, path, L.w, L.h, COL_BG, err, errlen)) return -1;
    int asc, desc;
    font_vmetrics(FONT_BOLD, TITLE_PX, &asc, &desc);
    if (L.title_base) label_draw_lines(&c, FONT_BOLD, TITLE_PX, MARGIN, L.title_base, asc + desc + 2, &L.title_ls, COL_TEXT);
    font_vmetrics(FONT_REGULAR, SUB_PX, &asc, &desc);
    if (L.sub_base) label_draw_lines(&c, FONT_REGULAR, SUB_PX, MARGIN, L.sub_base, asc + desc + 2, &L.sub_ls, COL_MUTED);
    for (int r = 0; r < rows; r++)
        for (int cc = 0; cc < cols; cc++) grid_draw_thumbnail(&c, &L, r, cc);
    colorbar_draw(&c, L.cbar_x, L.cbar_y, CBAR_W, L.cbar_h, cells[0].cmap, L.vmin, L.vmax, TICK_PX);
    if (L.note_base) {
        char note[160];
        const char *unit = cells[0].label_unit ? cells[0].label_unit : "token";
        snprintf(note, sizeof note, "%s labels: every %d%s %s on the edges (every row and column is drawn)", unit, L.step,
                 L.step == 2 ? "nd" : L.step == 3 ? "rd" : "th", unit);
        font_draw(&c, FONT_REGULAR, NOTE_PX, MARGIN, L.note_base, note, COL_MUTED);
    }
    int status = png_write_canvas(path, &c, meta, err, errlen);
    canvas_free(&c);
    return status;
}
