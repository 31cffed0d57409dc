/* fmt.c — see fmt.h. */
#include "render/fmt.h"
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

double fmt_tick_step(double range, int target) {
    if (!(range > 0) || target < 1) return 1;
    double raw = range / target, p = pow(10, floor(log10(raw))), f = raw / p;
    double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
    return nice * p;
}
