/* common.c — pieces shared by the layouts: number formatting, tick steps, the
 * colour bar, masked cells.  See draw.h. */
#include "render/draw.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MINUS "\xE2\x88\x92"       /* U+2212 */
#define INFTY "\xE2\x88\x9E"       /* U+221E */

/* Replaces a leading ASCII '-' by the typographic minus U+2212. */
static void typographic_minus(char *out, size_t outlen) {
    if (out[0] != '-') return;
    char tmp[64];
    snprintf(tmp, sizeof tmp, MINUS "%s", out + 1);
    snprintf(out, outlen, "%s", tmp);
}

/* "1.5e9" style: mantissa with at most 2 decimals, trailing zeros dropped. */
static void fmt_exp(char *out, size_t outlen, double v) {
    int e = (int)floor(log10(fabs(v)));
    double m = v / pow(10, e);
    if (fabs(m) >= 9.995) { m /= 10; e++; }
    char mant[32];
    snprintf(mant, sizeof mant, "%.2f", m);
    char *dot = strchr(mant, '.');
    if (dot) {
        char *end = mant + strlen(mant) - 1;
        while (end > dot && *end == '0') *end-- = '\0';
        if (end == dot) *end = '\0';
    }
    snprintf(out, outlen, "%se%d", mant, e);
}

void fmt_value(char *out, size_t outlen, float fv) {
    double v = fv;
    if (isnan(v)) { snprintf(out, outlen, "NaN"); return; }
    if (isinf(v)) { snprintf(out, outlen, v < 0 ? MINUS INFTY : "+" INFTY); return; }
    double a = fabs(v);
    /* Whole numbers of 2 and more (the lesson's scores 4 and 14) print as such;
     * weights (≤ 1) keep two decimals so a row reads evenly. */
    if (a >= 2 && a < 99999.5 && v == floor(v)) snprintf(out, outlen, "%.0f", v);
    else if (a < 9.995) snprintf(out, outlen, "%.2f", v);
    else if (a < 99.95) snprintf(out, outlen, "%.1f", v);
    else if (a < 99999.5) snprintf(out, outlen, "%.0f", v);
    else fmt_exp(out, outlen, v);
    if (!strcmp(out, "-0.00")) snprintf(out, outlen, "0.00");
    typographic_minus(out, outlen);
}

void fmt_tick(char *out, size_t outlen, double v, double step) {
    if (fabs(v) < step * 1e-6) v = 0;
    if (fabs(v) >= 1e5) {
        fmt_exp(out, outlen, v);
    } else {
        int dec = 0;
        double s = fabs(step);
        while (dec < 6 && fabs(s * pow(10, dec) - round(s * pow(10, dec))) > 1e-6 * pow(10, dec)) dec++;
        snprintf(out, outlen, "%.*f", dec, v);
        if (strchr(out, '.')) {   /* drop trailing zeros: 0.50 → 0.5, 1.00 → 1 */
            char *end = out + strlen(out) - 1;
            while (*end == '0') *end-- = '\0';
            if (*end == '.') *end = '\0';
        }
        if (!strcmp(out, "-0")) snprintf(out, outlen, "0");
    }
    typographic_minus(out, outlen);
}

double nice_step(double range, int target) {
    if (!(range > 0) || target < 1) return 1;
    double raw = range / target, p = pow(10, floor(log10(raw))), f = raw / p;
    double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
    return nice * p;
}

/* Ticks of a colour bar: 0, 0.25 … 1 for the weight scale, else a nice step
 * (through 0 when the scale straddles it) with at least `min_gap` px between. */
static int bar_ticks(float vmin, float vmax, int h, double *ticks, int max_ticks, double *step_out) {
    double lo = vmin, hi = vmax, range = hi - lo;
    if (!(range > 0)) return 0;
    int target = h / 36;
    if (target > 6) target = 6;
    if (target < 2) target = 2;
    double step = (lo == 0 && hi == 1) ? (h >= 120 ? 0.25 : 0.5) : nice_step(range, target);
    int n = 0;
    for (double k = ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9 && n < max_ticks; k++)
        ticks[n++] = k * step;
    *step_out = step;
    return n;
}

int colorbar_width(RenderCmap cmap, float vmin, float vmax, int bar_w, int h, int font_px) {
    double ticks[32], step;
    int n = bar_ticks(vmin, vmax, h, ticks, 32, &step), w = 0;
    (void)cmap;
    for (int i = 0; i < n; i++) {
        char s[64];
        fmt_tick(s, sizeof s, ticks[i], step);
        int tw = font_width(FONT_REGULAR, font_px, s);
        if (tw > w) w = tw;
    }
    return bar_w + 6 + 4 + w;
}

void colorbar_draw(Canvas *c, int x, int y, int bar_w, int h, RenderCmap cmap, float vmin,
                   float vmax, int font_px) {
    if (h < 2) return;
    for (int j = 0; j < h; j++) {
        float v = vmax - (vmax - vmin) * (float)j / (float)(h - 1);   /* ends exact */
        canvas_fill_rect(c, x, y + j, bar_w, 1, cmap_value(cmap, v, vmin, vmax));
    }
    canvas_stroke_rect(c, x - 1, y - 1, bar_w + 2, h + 2, 1, RGB_HEX(0x8A8A8A));
    double ticks[32], step;
    int n = bar_ticks(vmin, vmax, h, ticks, 32, &step);
    for (int i = 0; i < n; i++) {
        double f = (vmax - ticks[i]) / (vmax - vmin);
        int ty = y + (int)lround(f * (h - 1));
        char s[64];
        fmt_tick(s, sizeof s, ticks[i], step);
        canvas_fill_rect(c, x + bar_w, ty, 5, 1, COL_AXIS);
        font_draw(c, FONT_REGULAR, font_px, x + bar_w + 9, font_center_baseline(font_px, ty + 0.5), s, COL_TEXT);
    }
}

void draw_masked_cell(Canvas *c, int x, int y, int w, int h, int spacing) {
    canvas_fill_rect(c, x, y, w, h, COL_MASK);
    if (w >= 4 && h >= 4) canvas_hatch_rect(c, x, y, w, h, spacing, COL_HATCH);
}
