/* canvas.c — see canvas.h. */
#include "render/canvas.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

int canvas_init(Canvas *c, long w, long h, Rgb bg, char *err, size_t errlen) {
    c->w = c->h = 0;
    c->px = NULL;
    if (w < 1 || h < 1 || w > CANVAS_MAX_SIDE || h > CANVAS_MAX_SIDE || w * h > CANVAS_MAX_PIXELS)
        return errmsg_set(err, errlen, "picture would be %ld x %ld pixels, too large to draw "
                          "(draw fewer with --layers and --heads, or give a shorter text)", w, h);
    c->px = malloc((size_t)w * (size_t)h * 3);
    if (!c->px) return errmsg_set(err, errlen, "out of memory for a %ld x %ld picture", w, h);
    c->w = (int)w;
    c->h = (int)h;
    canvas_fill_rect(c, 0, 0, c->w, c->h, bg);
    return 0;
}

int canvas_init_named(Canvas *c, const char *path, long w, long h, Rgb bg, char *err, size_t errlen) {
    if (canvas_init(c, w, h, bg, err, errlen) == 0) return 0;
    const char *slash = path ? strrchr(path, '/') : NULL, *name = slash ? slash + 1 : path;
    if (name && err && errlen) {
        char why[512];
        snprintf(why, sizeof why, "%s", err);
        errmsg_set(err, errlen, "%s: %s", name, why);
    }
    return -1;
}

void canvas_free(Canvas *c) {
    if (!c) return;
    free(c->px);
    c->px = NULL;
    c->w = c->h = 0;
}

static inline void blend_px(Canvas *c, int x, int y, Rgb col, float a) {
    if (x < 0 || y < 0 || x >= c->w || y >= c->h || a <= 0.0f) return;
    unsigned char *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    if (a >= 1.0f) {
        p[0] = col.r; p[1] = col.g; p[2] = col.b;
        return;
    }
    p[0] = (unsigned char)lrintf(p[0] + (col.r - p[0]) * a);
    p[1] = (unsigned char)lrintf(p[1] + (col.g - p[1]) * a);
    p[2] = (unsigned char)lrintf(p[2] + (col.b - p[2]) * a);
}

/* Clips (x, y, w, h) to the canvas; 0 if nothing is left. */
static int clip_rect(const Canvas *c, int *x, int *y, int *w, int *h) {
    int x0 = *x < 0 ? 0 : *x, y0 = *y < 0 ? 0 : *y;
    int x1 = *x + *w > c->w ? c->w : *x + *w, y1 = *y + *h > c->h ? c->h : *y + *h;
    if (x1 <= x0 || y1 <= y0) return 0;
    *x = x0; *y = y0; *w = x1 - x0; *h = y1 - y0;
    return 1;
}

/* The first row pixel by pixel up to 16 pixels, then doubled by memcpy; every
 * other row a copy of it (three bytes at a time was 9% of a GPT-2 run's
 * picture time). */
void canvas_fill_rect(Canvas *c, int x, int y, int w, int h, Rgb col) {
    if (!clip_rect(c, &x, &y, &w, &h)) return;
    size_t row = (size_t)w * 3, done = 3 * (size_t)(w < 16 ? w : 16);
    unsigned char *first = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    for (size_t i = 0; i < done; i += 3) { first[i] = col.r; first[i + 1] = col.g; first[i + 2] = col.b; }
    while (done < row) {
        size_t n = done < row - done ? done : row - done;
        memcpy(first + done, first, n);
        done += n;
    }
    for (int j = 1; j < h; j++) memcpy(first + (size_t)j * (size_t)c->w * 3, first, row);
}

void canvas_blend_rect(Canvas *c, int x, int y, int w, int h, Rgb col, float alpha) {
    if (!clip_rect(c, &x, &y, &w, &h)) return;
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++) blend_px(c, i, j, col, alpha);
}

void canvas_stroke_rect(Canvas *c, int x, int y, int w, int h, int t, Rgb col) {
    if (w <= 0 || h <= 0 || t <= 0) return;
    if (2 * t >= w || 2 * t >= h) { canvas_fill_rect(c, x, y, w, h, col); return; }
    canvas_fill_rect(c, x, y, w, t, col);
    canvas_fill_rect(c, x, y + h - t, w, t, col);
    canvas_fill_rect(c, x, y + t, t, h - 2 * t, col);
    canvas_fill_rect(c, x + w - t, y + t, t, h - 2 * t, col);
}

/* The hatch's coverage at (i + j + 1) % spacing: lines x + y + 1 = k·spacing
 * ("/" on screen), from the distance of the pixel centre to the nearest line,
 * line width 1.3 px.  Returns the spacing used (3..64). */
static int hatch_coverage(int spacing, float cov_of[64]) {
    const float half = 0.65f;
    if (spacing < 3) spacing = 3;
    if (spacing > 64) spacing = 64;
    for (int t = 0; t < spacing; t++) {
        int k = t < spacing - t ? t : spacing - t;
        float cov = half + 0.5f - (float)k * 0.70710678f;
        cov_of[t] = cov > 1.0f ? 1.0f : cov;
    }
    return spacing;
}

void canvas_hatch_rect(Canvas *c, int x, int y, int w, int h, int spacing, Rgb col) {
    float cov_of[64];
    spacing = hatch_coverage(spacing, cov_of);
    if (!clip_rect(c, &x, &y, &w, &h)) return;
    for (int j = y; j < y + h; j++) {
        int t = (x + j + 1) % spacing;
        for (int i = x; i < x + w; i++, t = t + 1 == spacing ? 0 : t + 1)
            if (cov_of[t] > 0.0f) blend_px(c, i, j, col, cov_of[t]);
    }
}

void canvas_fill_hatched(Canvas *c, int x, int y, int w, int h, int spacing, Rgb bg, Rgb ink) {
    float cov_of[64];
    spacing = hatch_coverage(spacing, cov_of);
    if (!clip_rect(c, &x, &y, &w, &h)) return;
    /* One long row: pixel i has phase i % spacing; row j starts at phase (x + j + 1) % spacing. */
    Canvas one = {.w = w + spacing, .h = 1, .px = malloc(((size_t)w + spacing) * 3)};
    if (!one.px) {   /* out of memory: the slow way, same bytes */
        canvas_fill_rect(c, x, y, w, h, bg);
        canvas_hatch_rect(c, x, y, w, h, spacing, ink);
        return;
    }
    for (int i = 0; i < one.w; i++) {
        one.px[3 * i] = bg.r; one.px[3 * i + 1] = bg.g; one.px[3 * i + 2] = bg.b;
        if (cov_of[i % spacing] > 0.0f) blend_px(&one, i, 0, ink, cov_of[i % spacing]);
    }
    for (int j = y; j < y + h; j++)
        memcpy(c->px + ((size_t)j * (size_t)c->w + (size_t)x) * 3, one.px + (size_t)((x + j + 1) % spacing) * 3,
               (size_t)w * 3);
    free(one.px);
}

static double seg_dist(double px, double py, double x0, double y0, double dx, double dy, double len2) {
    double t = len2 > 0 ? ((px - x0) * dx + (py - y0) * dy) / len2 : 0.0;
    if (t < 0) t = 0;
    if (t > 1) t = 1;
    double ex = x0 + t * dx - px, ey = y0 + t * dy - py;
    return sqrt(ex * ex + ey * ey);
}

void canvas_line(Canvas *c, double x0, double y0, double x1, double y1, double width,
                 Rgb col, float alpha) {
    if (!(width > 0) || alpha <= 0) return;
    if (width < 1.0) { alpha *= (float)width; width = 1.0; }
    double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy, len = sqrt(len2);
    double hw = width / 2, r = hw + 1.0;
    int major_x = fabs(dx) >= fabs(dy);
    /* Walk along the major axis; on each step cover the band around the line. */
    double a0 = major_x ? fmin(x0, x1) : fmin(y0, y1), a1 = major_x ? fmax(x0, x1) : fmax(y0, y1);
    double dmaj = major_x ? dx : dy, dmin = major_x ? dy : dx;
    double span = fabs(dmaj) > 1e-9 ? r * len / fabs(dmaj) : r;
    int lo = (int)floor(a0 - r), hi = (int)ceil(a1 + r);
    int lim = major_x ? c->w : c->h;
    if (lo < 0) lo = 0;
    if (hi > lim - 1) hi = lim - 1;
    for (int a = lo; a <= hi; a++) {
        double ac = a + 0.5;
        double t = fabs(dmaj) > 1e-9 ? (ac - (major_x ? x0 : y0)) / dmaj : 0.0;
        if (t < 0) t = 0;
        if (t > 1) t = 1;
        double bc = (major_x ? y0 : x0) + t * dmin;
        int b0 = (int)floor(bc - span - 1), b1 = (int)ceil(bc + span + 1);
        for (int b = b0; b <= b1; b++) {
            double px = major_x ? ac : b + 0.5, py = major_x ? b + 0.5 : ac;
            double d = seg_dist(px, py, x0, y0, dx, dy, len2);
            double cov = hw + 0.5 - d;
            if (cov <= 0) continue;
            if (cov > 1) cov = 1;
            blend_px(c, major_x ? a : b, major_x ? b : a, col, (float)cov * alpha);
        }
    }
}

static double edge(double ax, double ay, double bx, double by, double px, double py) {
    return (bx - ax) * (py - ay) - (by - ay) * (px - ax);
}

void canvas_fill_triangle(Canvas *c, double x0, double y0, double x1, double y1,
                          double x2, double y2, Rgb col, float alpha) {
    double area = edge(x0, y0, x1, y1, x2, y2);
    if (fabs(area) < 1e-9) return;
    double s = area > 0 ? 1.0 : -1.0;
    int xa = (int)floor(fmin(x0, fmin(x1, x2))), xb = (int)ceil(fmax(x0, fmax(x1, x2)));
    int ya = (int)floor(fmin(y0, fmin(y1, y2))), yb = (int)ceil(fmax(y0, fmax(y1, y2)));
    for (int y = ya; y <= yb; y++)
        for (int x = xa; x <= xb; x++) {
            int hits = 0;   /* 4 × 4 samples per pixel */
            for (int sy = 0; sy < 4; sy++)
                for (int sx = 0; sx < 4; sx++) {
                    double px = x + (sx + 0.5) / 4, py = y + (sy + 0.5) / 4;
                    if (s * edge(x0, y0, x1, y1, px, py) >= 0 && s * edge(x1, y1, x2, y2, px, py) >= 0 &&
                        s * edge(x2, y2, x0, y0, px, py) >= 0)
                        hits++;
                }
            if (hits) blend_px(c, x, y, col, alpha * (float)hits / 16.0f);
        }
}

void canvas_fill_circle(Canvas *c, double cx, double cy, double r, Rgb col, float alpha) {
    int xa = (int)floor(cx - r - 1), xb = (int)ceil(cx + r + 1);
    int ya = (int)floor(cy - r - 1), yb = (int)ceil(cy + r + 1);
    for (int y = ya; y <= yb; y++)
        for (int x = xa; x <= xb; x++) {
            double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
            double cov = r + 0.5 - sqrt(dx * dx + dy * dy);
            if (cov > 0) blend_px(c, x, y, col, alpha * (float)(cov > 1 ? 1 : cov));
        }
}

void canvas_fill_round_rect(Canvas *c, double x, double y, double w, double h, double r,
                            Rgb col, float alpha) {
    if (w <= 0 || h <= 0) return;
    if (r > w / 2) r = w / 2;
    if (r > h / 2) r = h / 2;
    int xa = (int)floor(x), xb = (int)ceil(x + w), ya = (int)floor(y), yb = (int)ceil(y + h);
    double cx = x + w / 2, cy = y + h / 2, hx = w / 2 - r, hy = h / 2 - r;
    for (int j = ya; j < yb; j++)
        for (int i = xa; i < xb; i++) {
            /* Signed distance to the rounded box, evaluated at the pixel centre. */
            double qx = fabs(i + 0.5 - cx) - hx, qy = fabs(j + 0.5 - cy) - hy;
            double ox = qx > 0 ? qx : 0, oy = qy > 0 ? qy : 0;
            double d = sqrt(ox * ox + oy * oy) + fmin(fmax(qx, qy), 0.0) - r;
            double cov = 0.5 - d;
            if (cov > 0) blend_px(c, i, j, col, alpha * (float)(cov > 1 ? 1 : cov));
        }
}

void canvas_arrow(Canvas *c, double x0, double y0, double x1, double y1, double width,
                  double head, Rgb col) {
    double dx = x1 - x0, dy = y1 - y0, len = sqrt(dx * dx + dy * dy);
    if (len < 1e-6) return;
    double ux = dx / len, uy = dy / len;
    double bx = x1 - ux * head, by = y1 - uy * head;   /* base of the head */
    canvas_line(c, x0, y0, bx + ux * 1.0, by + uy * 1.0, width, col, 1.0f);
    double hw = head * 0.55;
    canvas_fill_triangle(c, x1, y1, bx - uy * hw, by + ux * hw, bx + uy * hw, by - ux * hw, col, 1.0f);
}

void canvas_blend_mask(Canvas *c, int x, int y, const unsigned char *mask, int mw, int mh,
                       int pitch, Rgb col, float alpha) {
    for (int j = 0; j < mh; j++) {
        int yy = y + j;
        if (yy < 0 || yy >= c->h) continue;
        const unsigned char *m = mask + (size_t)j * (size_t)pitch;
        for (int i = 0; i < mw; i++) {
            if (!m[i]) continue;
            blend_px(c, x + i, yy, col, alpha * (float)m[i] / 255.0f);
        }
    }
}
