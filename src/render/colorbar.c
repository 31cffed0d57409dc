/* colorbar.c — see colorbar.h. */
#include "render/colorbar.h"
#include "render/colormap.h"
#include "render/fmt.h"
#include "render/font.h"
#include <math.h>

/* Ticks of a colour bar of height h: 0, 0.25 … 1 (0.5 steps below 120 px)
 * for the weight scale, else a round step (through 0 when the scale straddles
 * it) giving about one tick per 36 px, 2 to 6 intervals — and never fewer than
 * three ticks, so even a one-row picture's bar has a scale to read. */
int colorbar_ticks(float vmin, float vmax, int h, double *ticks, int max_ticks, double *step_out) {
    double lo = vmin, hi = vmax, range = hi - lo;
    if (!(range > 0)) return 0;
    int target = h / 36;
    if (target > 6) target = 6;
    if (target < 2) target = 2;
    int n = 0;
    for (;; target++) {
        double step = (lo == 0 && hi == 1) ? (h >= 120 ? 0.25 : 0.5) : fmt_tick_step(range, target);
        n = 0;
        for (double k = ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9 && n < max_ticks; k++)
            ticks[n++] = k * step;
        *step_out = step;
        if (n >= 3 || target >= 12) break;
    }
    return n;
}

int colorbar_width(float vmin, float vmax, int bar_w, int h, int font_px) {
    double ticks[32], step;
    int n = colorbar_ticks(vmin, vmax, h, ticks, 32, &step), w = 0;
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
    int n = colorbar_ticks(vmin, vmax, h, ticks, 32, &step);
    for (int i = 0; i < n; i++) {
        double f = (vmax - ticks[i]) / (vmax - vmin);
        int ty = y + (int)lround(f * (h - 1));
        char s[64];
        fmt_tick(s, sizeof s, ticks[i], step);
        canvas_fill_rect(c, x + bar_w, ty, 5, 1, COL_AXIS);
        font_draw(c, FONT_REGULAR, font_px, x + bar_w + 9, font_center_baseline(font_px, ty + 0.5), s, COL_TEXT);
    }
}
