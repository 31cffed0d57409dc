/* colormap.c — see colormap.h.
 *
 * Viridis: the 256-entry table is built on first use by Catmull–Rom
 * interpolation through every 5th entry of the published viridis data
 * (van der Walt, Smith and Firing for matplotlib, CC0); the result stays within
 * 0.2/255 of the published table.  Diverging: linear interpolation through the
 * 11 ColorBrewer RdBu colours, blue for negative, #F7F7F7 at 0, red for positive. */
#include "render/colormap.h"
#include <math.h>

/* viridis at t = k·5/255, k = 0..51 (sRGB in [0, 1]) */
static const float viridis_ctrl[52][3] = {
    {0.267004f, 0.004874f, 0.329415f}, {0.273809f, 0.031497f, 0.358853f},
    {0.278791f, 0.062145f, 0.386592f}, {0.281924f, 0.089666f, 0.412415f},
    {0.283197f, 0.115680f, 0.436115f}, {0.282623f, 0.140926f, 0.457517f},
    {0.280255f, 0.165693f, 0.476498f}, {0.276194f, 0.190074f, 0.493001f},
    {0.270595f, 0.214069f, 0.507052f}, {0.263663f, 0.237631f, 0.518762f},
    {0.255645f, 0.260703f, 0.528312f}, {0.246811f, 0.283237f, 0.535941f},
    {0.237441f, 0.305202f, 0.541921f}, {0.227802f, 0.326594f, 0.546532f},
    {0.218130f, 0.347432f, 0.550038f}, {0.208623f, 0.367752f, 0.552675f},
    {0.199430f, 0.387607f, 0.554642f}, {0.190631f, 0.407061f, 0.556089f},
    {0.182256f, 0.426184f, 0.557120f}, {0.174274f, 0.445044f, 0.557792f},
    {0.166617f, 0.463708f, 0.558119f}, {0.159194f, 0.482237f, 0.558073f},
    {0.151918f, 0.500685f, 0.557587f}, {0.144759f, 0.519093f, 0.556572f},
    {0.137770f, 0.537492f, 0.554906f}, {0.131172f, 0.555899f, 0.552459f},
    {0.125394f, 0.574318f, 0.549086f}, {0.121148f, 0.592739f, 0.544641f},
    {0.119423f, 0.611141f, 0.538982f}, {0.121380f, 0.629492f, 0.531973f},
    {0.128087f, 0.647749f, 0.523491f}, {0.140210f, 0.665859f, 0.513427f},
    {0.157851f, 0.683765f, 0.501686f}, {0.180653f, 0.701402f, 0.488189f},
    {0.208030f, 0.718701f, 0.472873f}, {0.239374f, 0.735588f, 0.455688f},
    {0.274149f, 0.751988f, 0.436601f}, {0.311925f, 0.767822f, 0.415586f},
    {0.352360f, 0.783011f, 0.392636f}, {0.395174f, 0.797475f, 0.367757f},
    {0.440137f, 0.811138f, 0.340967f}, {0.487026f, 0.823929f, 0.312321f},
    {0.535621f, 0.835785f, 0.281908f}, {0.585678f, 0.846661f, 0.249897f},
    {0.636902f, 0.856542f, 0.216620f}, {0.688944f, 0.865448f, 0.182725f},
    {0.741388f, 0.873449f, 0.149561f}, {0.793760f, 0.880678f, 0.120005f},
    {0.845561f, 0.887322f, 0.099702f}, {0.896320f, 0.893616f, 0.096335f},
    {0.945636f, 0.899815f, 0.112838f}, {0.993248f, 0.906157f, 0.143936f},
};

/* ColorBrewer RdBu, reversed: dark blue → white → dark red */
static const unsigned char diverging_ctrl[11][3] = {
    {5, 48, 97},    {33, 102, 172}, {67, 147, 195}, {146, 197, 222}, {209, 229, 240}, {247, 247, 247},
    {253, 219, 199}, {244, 165, 130}, {214, 96, 77}, {178, 24, 43},   {103, 0, 31},
};

static unsigned char viridis_table[256][3];
static int viridis_ready;

static float ctrl_at(int i, int ch) {
    /* Linear extrapolation beyond the ends keeps the end slopes. */
    if (i < 0) return 2 * viridis_ctrl[0][ch] - viridis_ctrl[1][ch];
    if (i > 51) return 2 * viridis_ctrl[51][ch] - viridis_ctrl[50][ch];
    return viridis_ctrl[i][ch];
}

static void viridis_build(void) {
    for (int k = 0; k < 256; k++) {
        int i = k / 5;
        float u = (float)(k % 5) / 5.0f;
        if (i == 51) { i = 50; u = 1.0f; }
        for (int ch = 0; ch < 3; ch++) {
            float p0 = ctrl_at(i - 1, ch), p1 = ctrl_at(i, ch), p2 = ctrl_at(i + 1, ch), p3 = ctrl_at(i + 2, ch);
            float v = 0.5f * (2 * p1 + (-p0 + p2) * u + (2 * p0 - 5 * p1 + 4 * p2 - p3) * u * u +
                              (-p0 + 3 * p1 - 3 * p2 + p3) * u * u * u);
            v = v < 0 ? 0 : v > 1 ? 1 : v;
            viridis_table[k][ch] = (unsigned char)lrintf(v * 255.0f);
        }
    }
    viridis_ready = 1;
}

void render_cmap_rgb(RenderCmap cmap, float t, unsigned char rgb[3]) {
    if (!(t >= 0)) t = 0;   /* also NaN */
    if (t > 1) t = 1;
    if (cmap == RENDER_CMAP_DIVERGING) {
        float x = t * 10.0f;
        int i = (int)x;
        if (i > 9) i = 9;
        float u = x - (float)i;
        for (int ch = 0; ch < 3; ch++)
            rgb[ch] = (unsigned char)lrintf(diverging_ctrl[i][ch] + (diverging_ctrl[i + 1][ch] - diverging_ctrl[i][ch]) * u);
        return;
    }
    if (!viridis_ready) viridis_build();
    int k = (int)lrintf(t * 255.0f);
    rgb[0] = viridis_table[k][0];
    rgb[1] = viridis_table[k][1];
    rgb[2] = viridis_table[k][2];
}

float render_cmap_position(RenderCmap cmap, float v, float vmin, float vmax) {
    if (isnan(v)) return 0.5f;
    if (cmap == RENDER_CMAP_DIVERGING && vmin < 0 && vmax > 0) {
        /* 0 stays at the white centre even on an asymmetric scale */
        float t = v < 0 ? 0.5f - 0.5f * (v / vmin) : 0.5f + 0.5f * (v / vmax);
        return t < 0 ? 0 : t > 1 ? 1 : t;
    }
    if (!(vmax > vmin)) return cmap == RENDER_CMAP_DIVERGING ? 0.5f : 0.0f;
    float t = (v - vmin) / (vmax - vmin);
    return t < 0 ? 0 : t > 1 ? 1 : t;
}

Rgb cmap_value(RenderCmap cmap, float v, float vmin, float vmax) {
    unsigned char c[3];
    render_cmap_rgb(cmap, render_cmap_position(cmap, v, vmin, vmax), c);
    return (Rgb){c[0], c[1], c[2]};
}

static double lin(unsigned char c) {
    double s = c / 255.0;
    return s <= 0.04045 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4);
}

Rgb cmap_text_on(Rgb bg) {
    /* WCAG: black wins when (L + 0.05) / 0.05 > 1.05 / (L + 0.05), i.e. L > 0.179 */
    double L = 0.2126 * lin(bg.r) + 0.7152 * lin(bg.g) + 0.0722 * lin(bg.b);
    return L > 0.179 ? RGB_HEX(0x000000) : RGB_HEX(0xFFFFFF);
}

void cmap_scale(const RenderHeatmap *hms, int n, float *vmin, float *vmax) {
    const RenderHeatmap *first = &hms[0];
    *vmin = first->vmin;
    *vmax = first->vmax;
    if (first->cmap == RENDER_CMAP_DIVERGING && first->vmin == first->vmax) {
        float m = 0;
        for (int h = 0; h < n; h++) {
            const RenderHeatmap *hm = &hms[h];
            long ncell = (long)hm->rows * hm->cols;
            for (long k = 0; hm->values && k < ncell; k++) {
                if (hm->mask && !hm->mask[k]) continue;
                float v = hm->values[k];
                if (isfinite(v) && fabsf(v) > m) m = fabsf(v);
            }
        }
        if (!(m > 0)) m = 1;
        *vmin = -m;
        *vmax = m;
    } else if (!(*vmax > *vmin)) {
        *vmin = 0;
        *vmax = 1;
    }
}
