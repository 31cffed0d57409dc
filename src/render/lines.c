/* lines.c — the lines view (as in BertViz): query tokens in a left column, key
 * tokens in a right column, one line per (query, key) pair whose opacity and
 * width follow the weight.  With a focus row only that query's lines are drawn,
 * its token is highlighted, the keys are shaded by weight, masked keys are
 * greyed out, and the strongest link carries its weight as a label.  Links
 * below LINK_MIN are not drawn, and a note under the columns says how many.
 *
 * Colours (Okabe & Ito's palette for colour-blind readers, checked under a
 * deuteranopia and protanopia simulation by tests/test_pictures_fit.py, which
 * reads the LINES_COL_ lines below): blue for every row's lines, vermillion
 * for one row in focus, greys for faint and masked tokens. */
#include "render/canvas.h"
#include "render/fmt.h"
#include "render/font.h"
#include "render/label.h"
#include "render/png.h"
#include "render/render.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdio.h>

#define LINES_COL_ALL 0x0072B2       /* Okabe–Ito blue: lines when no row is in focus */
#define LINES_COL_FOCUS 0xD55E00     /* Okabe–Ito vermillion: the focus row's lines */
#define LINES_COL_MASKED 0xC8C8C8    /* a masked key */
#define LINES_COL_FAINT 0xA0A4A8     /* query tokens out of focus (= COL_FAINT) */
#define LINES_COL_TEXT 0x1A1A1A      /* tokens (= COL_TEXT) */
#define LINK_MIN 0.005f              /* lighter links are not drawn (the note says how many) */
#define NOTE_PX 13
#define MARGIN 28
#define TITLE_PX 20
#define HEAD_PX 14        /* the "query" and "key" captions */
#define PAD 7             /* around a token inside its box */
#define TOKEN_MAX_W 200

typedef struct {
    const char *const *left, *const *right;   /* query and key tokens */
    int n_left, n_right;
    const float *weights;                     /* (n_left, n_right) */
    const unsigned char *mask;                /* (n_left, n_right), NULL = none */
    int focus_row;                            /* -1: every query */
    int best;                                 /* key of the focus row's strongest link, -1 none */
    Rgb strong;                               /* colour of the lines */
    int px, pitch;                            /* token font size, row pitch */
    int lx_right;                             /* right edge of the left tokens' text */
    int x_a, x_b;                             /* where the lines start and end */
    int rx;                                   /* left edge of the right tokens' text */
    int title_base, head_base, note_base;
    int dropped;                              /* links below LINK_MIN, not drawn */
    LabelLines title_ls;
    double ly0, ry0;                          /* centre y of the first left / right token */
    long w, h;
} LinesView;

static int lines_check(int n_left, int n_right, const float *weights, int focus_row, char *err, size_t errlen) {
    if (!weights || n_left < 1 || n_right < 1 || n_left > 4096 || n_right > 4096)
        return errmsg_set(err, errlen, "lines view needs weights and at least one token on each side");
    if (focus_row >= n_left)
        return errmsg_set(err, errlen, "focus row %d is out of range (there are %d query tokens)", focus_row, n_left);
    return 0;
}

static int is_masked(const LinesView *V, int i, int j) {
    return V->mask && !V->mask[(long)i * V->n_right + j];
}

static int widest_token(const char *const *labels, int n, int px) {
    char buf[512];
    int widest = 0;
    for (int i = 0; i < n; i++) {
        int w = label_fit(FONT_BOLD, px, labels, i, TOKEN_MAX_W, buf, sizeof buf);
        if (w > widest) widest = w;
    }
    return widest;
}

/* The focus row's strongest unmasked finite weight, -1 when there is none. */
static int strongest_key(const LinesView *V) {
    int best = -1;
    if (V->focus_row < 0) return best;
    const float *w = V->weights + (long)V->focus_row * V->n_right;
    for (int j = 0; j < V->n_right; j++) {
        if (is_masked(V, V->focus_row, j)) continue;
        if (isfinite(w[j]) && (best < 0 || w[j] > w[best])) best = j;
    }
    return best;
}

static void lines_layout(LinesView *V, const char *title) {
    int nmax = V->n_left > V->n_right ? V->n_left : V->n_right;
    V->px = nmax <= 40 ? 16 : 13;
    V->pitch = nmax <= 40 ? 32 : V->px + 7;
    int span = nmax <= 40 ? 300 : 360;

    /* Horizontal: left tokens, the lines, right tokens */
    int lw = widest_token(V->left, V->n_left, V->px), rw = widest_token(V->right, V->n_right, V->px);
    int qw = font_width(FONT_BOLD, HEAD_PX, "query"), kw = font_width(FONT_BOLD, HEAD_PX, "key");
    if (lw < qw) lw = qw;   /* the captions stay whole above short tokens */
    if (rw < kw) rw = kw;
    V->lx_right = MARGIN + lw + PAD;
    V->x_a = V->lx_right + PAD + 8;
    V->x_b = V->x_a + span;
    V->rx = V->x_b + 8 + PAD;
    V->w = V->rx + rw + PAD + MARGIN;

    /* Vertical: title, captions, the token rows */
    int asc, desc, y = MARGIN;
    if (label_wrap(FONT_BOLD, TITLE_PX, title, (int)V->w - 2 * MARGIN < 560 ? 560 : (int)V->w - 2 * MARGIN, &V->title_ls)) {
        font_vmetrics(FONT_BOLD, TITLE_PX, &asc, &desc);
        V->title_base = y + asc;
        y += V->title_ls.n * (asc + desc + 2) - 2 + 12;
        int tw = MARGIN + V->title_ls.w + MARGIN;
        if (tw > V->w) V->w = tw;
    }
    font_vmetrics(FONT_BOLD, HEAD_PX, &asc, &desc);
    V->head_base = y + asc;
    y += asc + desc + 10;
    int top = y;
    V->h = top + (long)nmax * V->pitch + MARGIN;
    if (V->dropped) {
        font_vmetrics(FONT_REGULAR, NOTE_PX, &asc, &desc);
        V->note_base = (int)V->h - MARGIN + 6 + asc;
        V->h += asc + desc + 6;
    }
    /* Shorter column centred against the longer one. */
    V->ly0 = top + (nmax - V->n_left) * V->pitch / 2.0 + V->pitch / 2.0;
    V->ry0 = top + (nmax - V->n_right) * V->pitch / 2.0 + V->pitch / 2.0;
}

/* Focus token box; key boxes shaded by weight. */
static void draw_focus_boxes(Canvas *c, const LinesView *V) {
    char buf[512];
    int px = V->px, pitch = V->pitch;
    int fw = label_fit(FONT_BOLD, px, V->left, V->focus_row, TOKEN_MAX_W, buf, sizeof buf);
    double fy = V->ly0 + V->focus_row * pitch;
    canvas_fill_round_rect(c, V->lx_right - fw - PAD, fy - pitch / 2.0 + 3, fw + 2 * PAD, pitch - 6, 5, V->strong, 0.22f);
    const float *w = V->weights + (long)V->focus_row * V->n_right;
    for (int j = 0; j < V->n_right; j++) {
        float v = w[j];
        if (is_masked(V, V->focus_row, j) || !isfinite(v) || v <= 0) continue;
        int kw = label_fit(FONT_REGULAR, px, V->right, j, TOKEN_MAX_W, buf, sizeof buf);
        double ky = V->ry0 + j * pitch;
        canvas_fill_round_rect(c, V->rx - PAD, ky - pitch / 2.0 + 3, kw + 2 * PAD, pitch - 6, 5, V->strong,
                               0.45f * (v > 1 ? 1 : v));
    }
}

/* Lines: faint first so strong ones end on top; a dot at each end. */
static void draw_links(Canvas *c, const LinesView *V) {
    int focus = V->focus_row;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < V->n_left; i++) {
            if (focus >= 0 && i != focus) continue;
            for (int j = 0; j < V->n_right; j++) {
                float v = V->weights[(long)i * V->n_right + j];
                if (is_masked(V, i, j) || !isfinite(v) || v < LINK_MIN) continue;
                if (v > 1) v = 1;
                if ((pass == 0) != (v < 0.3f)) continue;
                double y1 = V->ly0 + i * V->pitch, y2 = V->ry0 + j * V->pitch;
                /* focus: sqrt keeps the order of the weights but lets 0.1
                 * stay visible next to 0.5 */
                float alpha = focus >= 0 ? sqrtf(v) : 0.9f * v;
                double width = focus >= 0 ? 1.5 + 6.0 * v : 1.0 + 4.0 * v;
                canvas_line(c, V->x_a, y1, V->x_b, y2, width, V->strong, alpha);
            }
        }
    for (int i = 0; i < V->n_left; i++)
        canvas_fill_circle(c, V->x_a, V->ly0 + i * V->pitch, 3.0, focus < 0 || i == focus ? COL_AXIS : COL_FAINT, 1.0f);
    for (int j = 0; j < V->n_right; j++) canvas_fill_circle(c, V->x_b, V->ry0 + j * V->pitch, 3.0, COL_AXIS, 1.0f);
}

/* Query tokens (the focus bold, the others faint), key tokens (the strongest
 * bold, masked ones grey). */
static void draw_tokens(Canvas *c, const LinesView *V) {
    char buf[512];
    int px = V->px, focus = V->focus_row;
    for (int i = 0; i < V->n_left; i++) {
        int is_focus = i == focus;
        FontStyle st = is_focus ? FONT_BOLD : FONT_REGULAR;
        label_fit(st, px, V->left, i, TOKEN_MAX_W, buf, sizeof buf);
        label_draw_right(c, st, px, V->lx_right, font_center_baseline(px, V->ly0 + i * V->pitch), buf,
                         focus < 0 || is_focus ? RGB_HEX(LINES_COL_TEXT) : RGB_HEX(LINES_COL_FAINT));
    }
    for (int j = 0; j < V->n_right; j++) {
        int masked = focus >= 0 && is_masked(V, focus, j);
        FontStyle st = j == V->best ? FONT_BOLD : FONT_REGULAR;
        label_fit(st, px, V->right, j, TOKEN_MAX_W, buf, sizeof buf);
        font_draw(c, st, px, V->rx, font_center_baseline(px, V->ry0 + j * V->pitch), buf,
                  masked ? RGB_HEX(LINES_COL_MASKED) : COL_TEXT);
    }
}

/* Links not drawn because they are lighter than LINK_MIN (masked ones are
 * not links). */
static int count_dropped(const LinesView *V) {
    int n = 0;
    for (int i = 0; i < V->n_left; i++) {
        if (V->focus_row >= 0 && i != V->focus_row) continue;
        for (int j = 0; j < V->n_right; j++) {
            float v = V->weights[(long)i * V->n_right + j];
            if (!is_masked(V, i, j) && isfinite(v) && v < LINK_MIN) n++;
        }
    }
    return n;
}

/* "3 links below 0.005 not drawn", under the columns. */
static void draw_note(Canvas *c, const LinesView *V) {
    char s[128];
    snprintf(s, sizeof s, "%d link%s below 0.005 not drawn", V->dropped, V->dropped == 1 ? "" : "s");
    font_draw(c, FONT_REGULAR, NOTE_PX, MARGIN, V->note_base, s, COL_MUTED);
}

/* The weight of the strongest link, on the line near its key end. */
static void draw_best_weight(Canvas *c, const LinesView *V) {
    double y1 = V->ly0 + V->focus_row * V->pitch, y2 = V->ry0 + V->best * V->pitch, t = 0.74;
    double lxm = V->x_a + t * (V->x_b - V->x_a), lym = y1 + t * (y2 - y1);
    char s[32];
    float w = V->weights[(long)V->focus_row * V->n_right + V->best];
    FmtCells f = fmt_cells_choose(&w, 1, NULL);
    fmt_cell(&f, s, sizeof s, w);
    int sw = font_width(FONT_BOLD, 14, s);
    canvas_fill_round_rect(c, lxm - sw / 2.0 - 6, lym - 11, sw + 12, 22, 6, COL_BG, 1.0f);
    canvas_fill_round_rect(c, lxm - sw / 2.0 - 6, lym - 11, sw + 12, 22, 6, V->strong, 0.15f);
    font_draw_center(c, FONT_BOLD, 14, (int)lround(lxm), font_center_baseline(14, lym), s, COL_TEXT);
}

int render_lines(const char *path, const char *title, const char *const *left,
                 int n_left, const char *const *right, int n_right,
                 const float *weights, const unsigned char *mask, int focus_row,
                 const RenderMeta *meta, char *err, size_t errlen) {
    if (lines_check(n_left, n_right, weights, focus_row, err, errlen) || font_ensure(err, errlen)) return -1;
    LinesView V = {.left = left, .right = right, .n_left = n_left, .n_right = n_right, .weights = weights,
                   .mask = mask, .focus_row = focus_row};
    V.strong = focus_row >= 0 ? RGB_HEX(LINES_COL_FOCUS) : RGB_HEX(LINES_COL_ALL);
    V.best = strongest_key(&V);
    V.dropped = count_dropped(&V);
    lines_layout(&V, title);

    Canvas c;
    if (canvas_init_named(&c, path, V.w, V.h, COL_BG, err, errlen)) return -1;
    int asc, desc;
    font_vmetrics(FONT_BOLD, TITLE_PX, &asc, &desc);
    if (V.title_base) label_draw_lines(&c, FONT_BOLD, TITLE_PX, MARGIN, V.title_base, asc + desc + 2, &V.title_ls, COL_TEXT);
    if (V.note_base) draw_note(&c, &V);
    font_draw_right(&c, FONT_BOLD, HEAD_PX, V.lx_right, V.head_base, "query", COL_MUTED);
    font_draw(&c, FONT_BOLD, HEAD_PX, V.rx, V.head_base, "key", COL_MUTED);
    if (focus_row >= 0) draw_focus_boxes(&c, &V);
    draw_links(&c, &V);
    draw_tokens(&c, &V);
    if (V.best >= 0) draw_best_weight(&c, &V);
    int status = png_write_canvas(path, &c, meta, err, errlen);
    canvas_free(&c);
    return status;
}
