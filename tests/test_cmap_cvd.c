/* test_cmap_cvd.c — the diverging colour map (difference maps of `attnviz
 * compare`, scores of the step strip) read by a deuteranope: every colour is
 * passed through the deuteranopia simulation of Machado, Oliveira and
 * Fernandes (2009, severity 1.0, on linear RGB) and measured in CIELAB (D65).
 * The two ends, and any two values of opposite sign, stay distinguishable (a
 * blue side and a yellow-brown side: b* of opposite signs, ΔE well above the
 * ~2.3 of a just-noticeable difference), and lightness rises monotonically
 * from each end to the centre, with and without the simulation, so the size of
 * a difference reads from lightness alone. */
#include "check.h"
#include "render/render.h"
#include <math.h>

static const double machado_deutan[3][3] = {
    {0.367322, 0.860646, -0.227968},
    {0.280085, 0.672501, 0.047413},
    {-0.011820, 0.042940, 0.968881},
};

static double srgb_to_linear(unsigned char c) {
    double s = c / 255.0;
    return s <= 0.04045 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4);
}

static double lab_f(double t) {
    const double d = 6.0 / 29.0;
    return t > d * d * d ? cbrt(t) : t / (3 * d * d) + 4.0 / 29.0;
}

/* CIELAB of the diverging map at t, seen with (cvd 1) or without deuteranopia. */
static void cmap_lab(float t, int cvd, double lab[3]) {
    unsigned char rgb[3];
    render_cmap_rgb(RENDER_CMAP_DIVERGING, t, rgb);
    double l[3] = {srgb_to_linear(rgb[0]), srgb_to_linear(rgb[1]), srgb_to_linear(rgb[2])}, s[3];
    for (int i = 0; i < 3; i++) {
        s[i] = cvd ? machado_deutan[i][0] * l[0] + machado_deutan[i][1] * l[1] + machado_deutan[i][2] * l[2] : l[i];
        s[i] = s[i] < 0 ? 0 : s[i] > 1 ? 1 : s[i];
    }
    double X = 0.4124 * s[0] + 0.3576 * s[1] + 0.1805 * s[2], Y = 0.2126 * s[0] + 0.7152 * s[1] + 0.0722 * s[2],
           Z = 0.0193 * s[0] + 0.1192 * s[1] + 0.9505 * s[2];
    double fx = lab_f(X / 0.95047), fy = lab_f(Y), fz = lab_f(Z / 1.08883);
    lab[0] = 116 * fy - 16;
    lab[1] = 500 * (fx - fy);
    lab[2] = 200 * (fy - fz);
}

static double delta_e(const double a[3], const double b[3]) {
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

TEST(cmap_diverging_deuteranopia_ends_stay_apart) {
    for (int k = 0; k <= 45; k += 5) {   /* values ±(1 − k/50) of the scale: opposite signs, same size */
        double neg[3], pos[3];
        cmap_lab(k / 100.0f, 1, neg);
        cmap_lab(1 - k / 100.0f, 1, pos);
        double de = delta_e(neg, pos), want = k <= 25 ? 40 : k <= 40 ? 20 : 10;
        if (!(de >= want)) check_fail(__FILE__, __LINE__, "t = %.2f vs %.2f: ΔE %.1f under deuteranopia < %.0f",
                                      k / 100.0, 1 - k / 100.0, de, want);
        if (!(neg[2] < 0 && pos[2] > 0))   /* the blue side stays blue, the red side turns yellow-brown */
            check_fail(__FILE__, __LINE__, "t = %.2f: b* %.1f (negative side) and %.1f (positive) do not differ in sign",
                       k / 100.0, neg[2], pos[2]);
    }
}

TEST(cmap_diverging_lightness_monotone_from_the_centre) {
    for (int cvd = 0; cvd <= 1; cvd++) {
        double prev[3], cur[3];
        cmap_lab(0, cvd, prev);
        for (int k = 1; k <= 100; k++) {
            cmap_lab(k / 100.0f, cvd, cur);
            double step = cur[0] - prev[0];   /* rises up to the centre (t = 0.5), falls after it */
            if (k <= 50 ? step < -1e-9 : step > 1e-9)
                check_fail(__FILE__, __LINE__, "%s: L* %.2f → %.2f between t = %.2f and %.2f is not monotone from the "
                           "centre", cvd ? "deuteranopia" : "normal vision", prev[0], cur[0], (k - 1) / 100.0, k / 100.0);
            prev[0] = cur[0];
        }
    }
    unsigned char mid[3];
    render_cmap_rgb(RENDER_CMAP_DIVERGING, 0.5f, mid);   /* 0 is the neutral #F7F7F7 of RdBu */
    CHECK_INT(mid[0], 247);
    CHECK_INT(mid[1], 247);
    CHECK_INT(mid[2], 247);
}
