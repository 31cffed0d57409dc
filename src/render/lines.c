/* lines.c — the lines view (as in BertViz): query tokens in a left column, key
 * tokens in a right column, one line per (query, key) pair whose opacity and
 * width follow the weight.  With a focus row only that query's lines are drawn,
 * its token is highlighted, the keys are shaded by weight, masked keys are
 * greyed out, and the strongest link carries its weight as a label. */
#include "render/canvas.h"
#include "render/fmt.h"
#include "render/font.h"
#include "render/label.h"
#include "render/png.h"
#include "render/render.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define COL_LINE_ALL RGB_HEX(0x2F6DB5)

int render_lines(const char *path, const char *title, const char *const *left,
                 int n_left, const char *const *right, int n_right,
                 const float *weights, const unsigned char *mask, int focus_row,
                 const RenderMeta *meta, char *err, size_t errlen) {
    Canvas c = {0};
    int status = -1;
    if (!weights || n_left < 1 || n_right < 1 || n_left > 4096 || n_right > 4096)
        return errmsg_set(err, errlen, "lines view needs weights and at least one token on each side");
    if (focus_row >= n_left)
        return errmsg_set(err, errlen, "focus row %d is out of range (there are %d query tokens)", focus_row, n_left);
    if (font_ensure(err, errlen)) return -1;

    int nmax = n_left > n_right ? n_left : n_right;
    const int M = 28, title_px = 20, head_px = 14;
    int px = nmax <= 40 ? 16 : 13, pitch = nmax <= 40 ? 32 : px + 7, span = nmax <= 40 ? 300 : 360;
    const int pad = 7;   /* around a token inside its box */
    int asc, desc;
    char buf[512];

    int lw = 0, rw = 0;
    for (int i = 0; i < n_left; i++) {
        int w = label_fit(FONT_BOLD, px, left, i, 200, buf, sizeof buf);
        if (w > lw) lw = w;
    }
    for (int j = 0; j < n_right; j++) {
        int w = label_fit(FONT_BOLD, px, right, j, 200, buf, sizeof buf);
        if (w > rw) rw = w;
    }
    int lx_right = M + lw + pad;          /* right edge of the left tokens' text */
    int x_a = lx_right + pad + 8;         /* lines start */
    int x_b = x_a + span;                 /* lines end   */
    int rx = x_b + 8 + pad;               /* left edge of the right tokens' text */
    long W = rx + rw + pad + M;

    int y = M, title_base = 0;
    if (title && *title) {
        font_vmetrics(FONT_BOLD, title_px, &asc, &desc);
        title_base = y + asc;
        y += asc + desc + 12;
        int tw = M + font_width(FONT_BOLD, title_px, title) + M;
        if (tw > W) W = tw;
    }
    font_vmetrics(FONT_BOLD, head_px, &asc, &desc);
    int head_base = y + asc;
    y += asc + desc + 10;
    int top = y;
    long H = top + (long)nmax * pitch + M;
    if (canvas_init(&c, W, H, COL_BG, err, errlen)) goto cleanup;

    /* Shorter column centred against the longer one. */
    double ly0 = top + (nmax - n_left) * pitch / 2.0 + pitch / 2.0;
    double ry0 = top + (nmax - n_right) * pitch / 2.0 + pitch / 2.0;
    Rgb strong = focus_row >= 0 ? COL_HILITE : COL_LINE_ALL;

    if (title_base) font_draw(&c, FONT_BOLD, title_px, M, title_base, title, COL_TEXT);
    font_draw_right(&c, FONT_BOLD, head_px, lx_right, head_base, "query", COL_MUTED);
    font_draw(&c, FONT_BOLD, head_px, rx, head_base, "key", COL_MUTED);

    int best = -1;
    if (focus_row >= 0) {
        const float *w = weights + (long)focus_row * n_right;
        for (int j = 0; j < n_right; j++) {
            if (mask && !mask[(long)focus_row * n_right + j]) continue;
            if (isfinite(w[j]) && (best < 0 || w[j] > w[best])) best = j;
        }
        /* Focus token box; key boxes shaded by weight. */
        int fw = label_fit(FONT_BOLD, px, left, focus_row, 200, buf, sizeof buf);
        double fy = ly0 + focus_row * pitch;
        canvas_fill_round_rect(&c, lx_right - fw - pad, fy - pitch / 2.0 + 3, fw + 2 * pad, pitch - 6, 5, strong, 0.22f);
        for (int j = 0; j < n_right; j++) {
            float v = w[j];
            if ((mask && !mask[(long)focus_row * n_right + j]) || !isfinite(v) || v <= 0) continue;
            int kw = label_fit(FONT_REGULAR, px, right, j, 200, buf, sizeof buf);
            double ky = ry0 + j * pitch;
            canvas_fill_round_rect(&c, rx - pad, ky - pitch / 2.0 + 3, kw + 2 * pad, pitch - 6, 5, strong,
                                   0.45f * (v > 1 ? 1 : v));
        }
    }

    /* Lines: faint first so strong ones end on top. */
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n_left; i++) {
            if (focus_row >= 0 && i != focus_row) continue;
            for (int j = 0; j < n_right; j++) {
                long k = (long)i * n_right + j;
                float v = weights[k];
                if ((mask && !mask[k]) || !isfinite(v) || v < 0.005f) continue;
                if (v > 1) v = 1;
                if ((pass == 0) != (v < 0.3f)) continue;
                double y1 = ly0 + i * pitch, y2 = ry0 + j * pitch;
                /* focus: sqrt keeps the order of the weights but lets 0.1
                 * stay visible next to 0.5 */
                float alpha = focus_row >= 0 ? sqrtf(v) : 0.9f * v;
                double width = focus_row >= 0 ? 1.5 + 6.0 * v : 1.0 + 4.0 * v;
                canvas_line(&c, x_a, y1, x_b, y2, width, strong, alpha);
            }
        }
    /* Line ends: a dot per token. */
    for (int i = 0; i < n_left; i++)
        canvas_fill_circle(&c, x_a, ly0 + i * pitch, 3.0, focus_row < 0 || i == focus_row ? COL_AXIS : COL_FAINT, 1.0f);
    for (int j = 0; j < n_right; j++) canvas_fill_circle(&c, x_b, ry0 + j * pitch, 3.0, COL_AXIS, 1.0f);

    for (int i = 0; i < n_left; i++) {
        int is_focus = i == focus_row;
        FontStyle st = is_focus ? FONT_BOLD : FONT_REGULAR;
        label_fit(st, px, left, i, 200, buf, sizeof buf);
        font_draw_right(&c, st, px, lx_right, font_center_baseline(px, ly0 + i * pitch), buf,
                        focus_row < 0 || is_focus ? COL_TEXT : COL_FAINT);
    }
    for (int j = 0; j < n_right; j++) {
        int masked = focus_row >= 0 && mask && !mask[(long)focus_row * n_right + j];
        FontStyle st = j == best ? FONT_BOLD : FONT_REGULAR;
        label_fit(st, px, right, j, 200, buf, sizeof buf);
        font_draw(&c, st, px, rx, font_center_baseline(px, ry0 + j * pitch), buf, masked ? RGB_HEX(0xC8C8C8) : COL_TEXT);
    }

    if (best >= 0) {
        /* the weight of the strongest link, on the line near its key end */
        double y1 = ly0 + focus_row * pitch, y2 = ry0 + best * pitch, t = 0.74;
        double lxm = x_a + t * (x_b - x_a), lym = y1 + t * (y2 - y1);
        char s[32];
        fmt_value(s, sizeof s, weights[(long)focus_row * n_right + best]);
        int sw = font_width(FONT_BOLD, 14, s);
        canvas_fill_round_rect(&c, lxm - sw / 2.0 - 6, lym - 11, sw + 12, 22, 6, COL_BG, 1.0f);
        canvas_fill_round_rect(&c, lxm - sw / 2.0 - 6, lym - 11, sw + 12, 22, 6, strong, 0.15f);
        font_draw_center(&c, FONT_BOLD, 14, (int)lround(lxm), font_center_baseline(14, lym), s, COL_TEXT);
    }

    if (png_write_canvas(path, &c, meta, err, errlen)) goto cleanup;
    status = 0;
cleanup:
    canvas_free(&c);
    return status;
}
