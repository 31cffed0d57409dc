/* plot.c — line plots for the lesson's numbers (the √d_k experiment, positional
 * encodings): axes with nice ticks (or decades on a log axis), light grid,
 * one coloured curve per series with markers when points are few, a legend
 * to the right.  Non-finite values, and values <= 0 on a log axis, are skipped
 * and break the curve. */
#include "render/canvas.h"
#include "render/fmt.h"
#include "render/font.h"
#include "render/png.h"
#include "render/render.h"
#include "core/errmsg.h"
#include <math.h>

static const unsigned int palette[] = {0x1F77B4, 0xFF7F0E, 0x2CA02C, 0xD62728, 0x9467BD,
                                       0x8C564B, 0xE377C2, 0x7F7F7F, 0xBCBD22, 0x17BECF};
#define MAX_TICKS 40
#define MARGIN 28
#define TITLE_PX 20
#define LABEL_PX 15       /* axis captions */
#define TICK_PX 13
#define LEGEND_PX 14
#define PLOT_W 640        /* the plot area */
#define PLOT_H 400

typedef struct {
    int log;
    double lo, hi;             /* data units */
    double ticks[MAX_TICKS];
    int n;
    double step;               /* linear: tick step (for labels) */
} Axis;

static int usable(double v, int log) { return isfinite(v) && (!log || v > 0); }

static void axis_ticks(Axis *a, double mn, double mx, int target) {
    a->n = 0;
    if (a->log) {
        /* the data range padded by 6% of its width in log space; ticks at
         * decades, with 2 and 5 between them when there are few decades */
        if (!(mn > 0)) { mn = 1; mx = 10; }
        if (mx <= mn) { mn /= 3; mx *= 3; }
        double l0 = log10(mn), l1 = log10(mx), padl = (l1 - l0) * 0.06;
        a->lo = pow(10, l0 - padl);
        a->hi = pow(10, l1 + padl);
        int e0 = (int)floor(l0 - padl), e1 = (int)ceil(l1 + padl);
        int decades = e1 - e0, every = decades > 10 ? (decades + 9) / 10 : 1;
        if (l1 - l0 <= 2.5) decades = 3;   /* few decades: 1, 2, 5 ticks */
        static const double mult[3] = {1, 2, 5};
        for (int e = e0; e <= e1; e++)
            for (int m = 0; m < 3; m++) {
                if (m > 0 && decades > 3) continue;
                if (m == 0 && (e - e0) % every) continue;
                double v = mult[m] * pow(10, e);
                if (v >= a->lo * (1 - 1e-9) && v <= a->hi * (1 + 1e-9) && a->n < MAX_TICKS) a->ticks[a->n++] = v;
            }
        return;
    }
    if (!(mx > mn)) { mn -= 1; mx += 1; }
    double step = fmt_tick_step(mx - mn, target);
    a->lo = floor(mn / step + 1e-9) * step;
    a->hi = ceil(mx / step - 1e-9) * step;
    a->step = step;
    for (double k = round(a->lo / step); k * step <= a->hi + step * 1e-9 && a->n < MAX_TICKS; k++)
        a->ticks[a->n++] = k * step;
}

static double axis_frac(const Axis *a, double v) {
    if (a->log) return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
    return (v - a->lo) / (a->hi - a->lo);
}

static void tick_label(const Axis *a, double v, char *out, size_t n) {
    if (a->log) {
        double e = log10(v);
        if (v >= 1e-3 && v < 1e5) fmt_tick(out, n, v, pow(10, floor(e)));
        else fmt_tick(out, n, v, v);
    } else {
        fmt_tick(out, n, v, a->step);
    }
}

typedef struct {
    Axis ax, ay;
    int px0, py0;             /* top-left of the plot area */
    int leg_x;                /* left of the legend */
    int title_base;
    long w, h;
} PlotLayout;

static int plot_check(const RenderPlot *plot, char *err, size_t errlen) {
    if (!plot || !plot->x || plot->n_points < 1 || !plot->series || plot->n_series < 1)
        return errmsg_set(err, errlen, "plot needs x values, at least one point and one series");
    for (int s = 0; s < plot->n_series; s++)
        if (!plot->series[s].y) return errmsg_set(err, errlen, "plot series %d has no values", s);
    return 0;
}

/* Axes over the usable data (a decade, or [0, 1], when there is none). */
static void plot_axes(const RenderPlot *plot, Axis *ax, Axis *ay) {
    double xmn = INFINITY, xmx = -INFINITY, ymn = INFINITY, ymx = -INFINITY;
    for (int i = 0; i < plot->n_points; i++) {
        double x = plot->x[i];
        if (!usable(x, plot->log_x)) continue;
        if (x < xmn) xmn = x;
        if (x > xmx) xmx = x;
        for (int s = 0; s < plot->n_series; s++) {
            double y = plot->series[s].y[i];
            if (!usable(y, plot->log_y)) continue;
            if (y < ymn) ymn = y;
            if (y > ymx) ymx = y;
        }
    }
    if (!isfinite(xmn)) { xmn = plot->log_x ? 1 : 0; xmx = plot->log_x ? 10 : 1; }
    if (!isfinite(ymn)) { ymn = plot->log_y ? 1 : 0; ymx = plot->log_y ? 10 : 1; }
    *ax = (Axis){.log = plot->log_x};
    *ay = (Axis){.log = plot->log_y};
    axis_ticks(ax, xmn, xmx, 8);
    axis_ticks(ay, ymn, ymx, 6);
    if (plot->x_ticks_at_x) {   /* the values measured, in order, each once */
        ax->n = 0;
        for (int i = 0; i < plot->n_points && ax->n < MAX_TICKS; i++) {
            double x = plot->x[i];
            if (usable(x, plot->log_x) && (ax->n == 0 || x > ax->ticks[ax->n - 1])) ax->ticks[ax->n++] = x;
        }
    }
}

/* Left to right: y caption, y tick labels, the plot area, the legend; top to
 * bottom: title, the plot area, x tick labels, x caption. */
static void plot_layout(PlotLayout *L, const RenderPlot *plot) {
    int asc, desc;
    char buf[64];
    int ytw = 0;
    for (int k = 0; k < L->ay.n; k++) {
        tick_label(&L->ay, L->ay.ticks[k], buf, sizeof buf);
        int w = font_width(FONT_REGULAR, TICK_PX, buf);
        if (w > ytw) ytw = w;
    }
    font_vmetrics(FONT_REGULAR, LABEL_PX, &asc, &desc);
    int lab_h = asc + desc;
    L->px0 = MARGIN + (plot->y_label ? lab_h + 10 : 0) + ytw + 10;
    int y = MARGIN;
    if (plot->title && *plot->title) {
        font_vmetrics(FONT_BOLD, TITLE_PX, &asc, &desc);
        L->title_base = y + asc;
        y += asc + desc + 16;
    }
    L->py0 = y;
    int leg_w = 0;
    for (int s = 0; s < plot->n_series; s++) {
        int w = plot->series[s].label ? font_width(FONT_REGULAR, LEGEND_PX, plot->series[s].label) : 0;
        if (w > leg_w) leg_w = w;
    }
    L->leg_x = L->px0 + PLOT_W + 24;
    L->w = L->leg_x + 34 + leg_w + MARGIN;
    font_vmetrics(FONT_REGULAR, TICK_PX, &asc, &desc);
    L->h = L->py0 + PLOT_H + 8 + asc + desc + (plot->x_label ? lab_h + 12 : 0) + MARGIN;
    if (plot->title && MARGIN + font_width(FONT_BOLD, TITLE_PX, plot->title) + MARGIN > L->w)
        L->w = MARGIN + font_width(FONT_BOLD, TITLE_PX, plot->title) + MARGIN;
}

/* Pixel centre of the data point (xv, yv). */
static double to_px_x(const PlotLayout *L, double xv) {
    return L->px0 + axis_frac(&L->ax, xv) * (PLOT_W - 1) + 0.5;
}

static double to_px_y(const PlotLayout *L, double yv) {
    return L->py0 + PLOT_H - 1 - axis_frac(&L->ay, yv) * (PLOT_H - 1) + 0.5;
}

/* Grid lines and ticks, the zero line, the axes and their captions. */
static void draw_axes(Canvas *c, const PlotLayout *L, const RenderPlot *plot) {
    const Axis *ax = &L->ax, *ay = &L->ay;
    int px0 = L->px0, py0 = L->py0, asc, desc;
    char buf[64];
    font_vmetrics(FONT_REGULAR, TICK_PX, &asc, &desc);
    for (int k = 0; k < ax->n; k++) {
        int x = px0 + (int)lround(axis_frac(ax, ax->ticks[k]) * (PLOT_W - 1));
        canvas_fill_rect(c, x, py0, 1, PLOT_H, COL_GRIDLINE);
        canvas_fill_rect(c, x, py0 + PLOT_H, 1, 5, COL_AXIS);
        tick_label(ax, ax->ticks[k], buf, sizeof buf);
        font_draw_center(c, FONT_REGULAR, TICK_PX, x, py0 + PLOT_H + 7 + asc, buf, COL_TEXT);
    }
    for (int k = 0; k < ay->n; k++) {
        int yy = py0 + PLOT_H - 1 - (int)lround(axis_frac(ay, ay->ticks[k]) * (PLOT_H - 1));
        canvas_fill_rect(c, px0, yy, PLOT_W, 1, COL_GRIDLINE);
        canvas_fill_rect(c, px0 - 5, yy, 5, 1, COL_AXIS);
        tick_label(ay, ay->ticks[k], buf, sizeof buf);
        font_draw_right(c, FONT_REGULAR, TICK_PX, px0 - 8, font_center_baseline(TICK_PX, yy + 0.5), buf, COL_TEXT);
    }
    /* zero line on a linear axis that straddles 0 */
    if (!ay->log && ay->lo < 0 && ay->hi > 0)
        canvas_fill_rect(c, px0, py0 + PLOT_H - 1 - (int)lround(axis_frac(ay, 0) * (PLOT_H - 1)), PLOT_W, 1,
                         RGB_HEX(0xB0B0B0));
    canvas_fill_rect(c, px0, py0 + PLOT_H - 1, PLOT_W, 1, COL_AXIS);   /* x axis */
    canvas_fill_rect(c, px0, py0, 1, PLOT_H, COL_AXIS);                /* y axis */
    int lab_asc, lab_desc;
    font_vmetrics(FONT_REGULAR, LABEL_PX, &lab_asc, &lab_desc);
    if (plot->x_label)
        font_draw_center(c, FONT_REGULAR, LABEL_PX, px0 + PLOT_W / 2,
                         py0 + PLOT_H + 8 + asc + desc + 6 + (lab_asc + lab_desc) - 4, plot->x_label, COL_TEXT);
    if (plot->y_label) {
        int w = font_width(FONT_REGULAR, LABEL_PX, plot->y_label);
        font_draw_rotated(c, FONT_REGULAR, LABEL_PX, MARGIN + lab_asc, py0 + PLOT_H / 2.0 + w / 2.0, 90, plot->y_label,
                          COL_TEXT);
    }
}

/* Series s: its curve (broken where a value is unusable), markers when the
 * points are few, its legend entry. */
static void draw_series(Canvas *c, const PlotLayout *L, const RenderPlot *plot, int s) {
    Rgb col = RGB_HEX(palette[s % 10]);
    const float *yv = plot->series[s].y;
    int markers = plot->n_points <= 40;
    int have = 0;
    double lx = 0, ly = 0;
    for (int i = 0; i < plot->n_points; i++) {
        double xv = plot->x[i], v = yv[i];
        if (!usable(xv, L->ax.log) || !usable(v, L->ay.log)) { have = 0; continue; }
        double X = to_px_x(L, xv), Y = to_px_y(L, v);
        if (have) canvas_line(c, lx, ly, X, Y, 2.5, col, 1.0f);
        lx = X;
        ly = Y;
        have = 1;
    }
    if (markers)
        for (int i = 0; i < plot->n_points; i++) {
            double xv = plot->x[i], v = yv[i];
            if (!usable(xv, L->ax.log) || !usable(v, L->ay.log)) continue;
            double X = to_px_x(L, xv), Y = to_px_y(L, v);
            canvas_fill_circle(c, X, Y, 4.0, COL_BG, 1.0f);
            canvas_fill_circle(c, X, Y, 3.2, col, 1.0f);
        }
    int ly0 = L->py0 + 8 + s * 26;
    canvas_line(c, L->leg_x, ly0 + 9, L->leg_x + 26, ly0 + 9, 2.5, col, 1.0f);
    if (markers) canvas_fill_circle(c, L->leg_x + 13, ly0 + 9, 3.2, col, 1.0f);
    if (plot->series[s].label)
        font_draw(c, FONT_REGULAR, LEGEND_PX, L->leg_x + 34, font_center_baseline(LEGEND_PX, ly0 + 9),
                  plot->series[s].label, COL_TEXT);
}

int render_plot(const char *path, const RenderPlot *plot, const RenderMeta *meta,
                char *err, size_t errlen) {
    if (plot_check(plot, err, errlen) || font_ensure(err, errlen)) return -1;
    PlotLayout L = {0};
    plot_axes(plot, &L.ax, &L.ay);
    plot_layout(&L, plot);

    Canvas c;
    if (canvas_init(&c, L.w, L.h, COL_BG, err, errlen)) return -1;
    if (L.title_base) font_draw(&c, FONT_BOLD, TITLE_PX, MARGIN, L.title_base, plot->title, COL_TEXT);
    draw_axes(&c, &L, plot);
    for (int s = 0; s < plot->n_series; s++) draw_series(&c, &L, plot, s);
    int status = png_write_canvas(path, &c, meta, err, errlen);
    canvas_free(&c);
    return status;
}
