/* fit.c — see fit.h. */
#include "render/fit.h"
#include "render/render.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdlib.h>

static int slide_on;

int fit_is_slide(void) { return slide_on; }
void fit_set_slide(int on) { slide_on = on != 0; }

double fit_scale(long w, long h) {
    if (w < 1 || h < 1) return 1.0;
    if (slide_on) {
        double sx = (double)FIT_SLIDE_W / w, sy = (double)FIT_SLIDE_H / h;
        return sx < sy ? sx : sy;
    }
    long side = w > h ? w : h;
    return side > FIT_MAX_SIDE ? (double)FIT_MAX_SIDE / side : 1.0;
}

int fit_needed(const Canvas *in) {
    if (slide_on) return in->w != FIT_SLIDE_W || in->h != FIT_SLIDE_H;
    return in->w > FIT_MAX_SIDE || in->h > FIT_MAX_SIDE;
}

/* Weights of the source pixels that output pixel o covers along one axis,
 * scale s = out/in: area averaging when s < 1 (the source interval
 * [o/s, (o+1)/s)), bilinear when s >= 1.  Up to PAGE_TAPS taps. */
#define PAGE_TAPS 64
typedef struct { int first, n; float w[PAGE_TAPS]; } Taps;

static void taps_of(Taps *t, int o, double s, int n_in) {
    t->n = 0;
    if (s >= 1.0) {   /* bilinear: centre of o in source coordinates */
        double c = (o + 0.5) / s - 0.5;
        int i0 = (int)floor(c);
        double f = c - i0;
        if (i0 < 0) { i0 = 0; f = 0; }
        if (i0 >= n_in - 1) { i0 = n_in - 1; f = 0; }
        t->first = i0;
        t->w[t->n++] = (float)(1 - f);
        if (f > 0) t->w[t->n++] = (float)f;
        return;
    }
    double a = o / s, b = (o + 1) / s;
    if (b > n_in) b = n_in;
    int i0 = (int)floor(a);
    t->first = i0;
    for (int i = i0; i < b && t->n < PAGE_TAPS; i++) {
        double lo = i > a ? i : a, hi = i + 1 < b ? i + 1 : b;
        t->w[t->n++] = (float)((hi - lo) * s);
    }
    float sum = 0;
    for (int k = 0; k < t->n; k++) sum += t->w[k];
    for (int k = 0; k < t->n && sum > 0; k++) t->w[k] /= sum;
}

/* in (w, h) scaled to (ow, oh) and written at (ox, oy) of out.  Both passes
 * walk rows (the taps of every column found once): column by column, the
 * horizontal pass read a 3,000-px picture one pixel per row and was a quarter
 * of a GPT-2 run's picture time. */
static int resample(const Canvas *in, Canvas *out, int ox, int oy, int ow, int oh) {
    double sx = (double)ow / in->w, sy = (double)oh / in->h;
    float *mid = malloc((size_t)ow * (size_t)in->h * 3 * sizeof *mid);   /* (h, ow, 3) after the horizontal pass */
    Taps *tx = malloc((size_t)ow * sizeof *tx);                           /* (ow) the taps of each output column */
    if (!mid || !tx) { free(mid); free(tx); return -1; }
    for (int x = 0; x < ow; x++) taps_of(&tx[x], x, sx, in->w);
    for (int y = 0; y < in->h; y++) {
        const unsigned char *row = in->px + (size_t)y * in->w * 3;
        float *m = mid + (size_t)y * ow * 3;
        for (int x = 0; x < ow; x++) {
            const Taps *t = &tx[x];
            const unsigned char *p = row + (size_t)t->first * 3;
            float a0 = 0, a1 = 0, a2 = 0;
            for (int k = 0; k < t->n; k++, p += 3) { a0 += t->w[k] * p[0]; a1 += t->w[k] * p[1]; a2 += t->w[k] * p[2]; }
            m[3 * x] = a0; m[3 * x + 1] = a1; m[3 * x + 2] = a2;
        }
    }
    free(tx);
    for (int y = 0; y < oh; y++) {
        Taps t;
        taps_of(&t, y, sy, in->h);
        unsigned char *dst = out->px + ((size_t)(oy + y) * out->w + ox) * 3;
        for (int x = 0; x < ow * 3; x++) {
            float acc = 0;
            for (int k = 0; k < t.n; k++) acc += t.w[k] * mid[(size_t)(t.first + k) * ow * 3 + x];
            dst[x] = (unsigned char)(acc < 0 ? 0 : acc > 255 ? 255 : lrintf(acc));
        }
    }
    free(mid);
    return 0;
}

int fit_canvas(const Canvas *in, Canvas *out, char *err, size_t errlen) {
    double s = fit_scale(in->w, in->h);
    long ow = lround(in->w * s), oh = lround(in->h * s);
    if (ow < 1) ow = 1;
    if (oh < 1) oh = 1;
    long pw = slide_on ? FIT_SLIDE_W : ow, ph = slide_on ? FIT_SLIDE_H : oh;
    if (ow > pw) ow = pw;
    if (oh > ph) oh = ph;
    if (canvas_init(out, pw, ph, COL_BG, err, errlen)) return -1;
    if (resample(in, out, (int)((pw - ow) / 2), (int)((ph - oh) / 2), (int)ow, (int)oh)) {
        canvas_free(out);
        return errmsg_set(err, errlen, "out of memory scaling a %d x %d picture", in->w, in->h);
    }
    return 0;
}

void render_set_slide(int on) { fit_set_slide(on); }
