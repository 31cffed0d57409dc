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

/* 1 if v, not a whole number, prints as 0, 1 or −1 with d decimals (a weight
 * that reads 0.00 or 1.00; 123.4 may well read 123). */
static int reads_whole(double v, int d) {
    double scale = pow(10, d), r = round(v * scale) / scale;
    return v != floor(v) && r == floor(r) && fabs(r) <= 1;
}

FmtCells fmt_cells_choose(const float *values, long n, const unsigned char *mask) {
    FmtCells f = {2, 0};
    double amax = 0;
    int whole = 1, any = 0;
    for (long k = 0; k < n; k++) {
        double v = values[k];
        if ((mask && !mask[k]) || !isfinite(v)) continue;
        any = 1;
        if (fabs(v) > amax) amax = fabs(v);
        if (v != floor(v)) whole = 0;
    }
    if (!any) return f;
    if (amax >= 99999.5) { f.exponent = 1; return f; }
    if (whole) { f.decimals = 0; return f; }
    f.decimals = amax < 9.995 ? 2 : amax < 99.95 ? 1 : 0;
    for (int raise = 1; raise && f.decimals < 3;) {
        raise = 0;
        for (long k = 0; k < n && !raise; k++) {
            double v = values[k];
            if ((mask && !mask[k]) || !isfinite(v)) continue;
            raise = reads_whole(v, f.decimals);
        }
        if (raise) f.decimals++;
    }
    return f;
}

void fmt_cell(const FmtCells *f, char *out, size_t outlen, float fv) {
    double v = fv;
    if (isnan(v)) { snprintf(out, outlen, "NaN"); return; }
    if (isinf(v)) { snprintf(out, outlen, v < 0 ? MINUS INFTY : "+" INFTY); return; }
    if (f->exponent && v != 0) { fmt_exp(out, outlen, v); typographic_minus(out, outlen); return; }
    if (f->decimals > 0 && reads_whole(v, f->decimals)) {   /* ≈0.000, ≈1.000: not exactly */
        double r = round(v);
        snprintf(out, outlen, "\xE2\x89\x88%s%.*f", r < 0 ? MINUS : "", f->decimals, fabs(r));
        return;
    }
    if (f->decimals > 0 && fabs(v) == 1) {   /* exactly ±1 reads "1", so "1.000" never means "nearly" */
        snprintf(out, outlen, "%s1", v < 0 ? MINUS : "");
        return;
    }
    snprintf(out, outlen, "%.*f", f->decimals, v);
    if (out[0] == '-' && strspn(out + 1, "0.") == strlen(out + 1)) memmove(out, out + 1, strlen(out));   /* -0.00 */
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

/* The longest prefix of s[0..p) (those bytes known) that ends on a UTF-8
 * character boundary: p, or the start of the character cut at p. */
static size_t utf8_prefix(const char *s, size_t p) {
    if (p == 0) return 0;
    size_t j = p - 1;
    while (j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80) j--;   /* the last character's first byte */
    unsigned char c = (unsigned char)s[j];
    size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return j + len <= p ? p : j;
}

int fmt_fit(char *buf, size_t n, int written) {
    static const char ell[] = "\xE2\x80\xA6";   /* U+2026, and its NUL */
    if (written >= 0 && (size_t)written < n) return 0;
    if (n == 0) return 1;
    if (written < 0) { buf[0] = '\0'; return 1; }
    if (n >= sizeof ell) memcpy(buf + utf8_prefix(buf, n - sizeof ell), ell, sizeof ell);
    else buf[utf8_prefix(buf, n - 1)] = '\0';
    return 1;
}

const char *fmt_visible_token(const char *tok, char *buf, size_t n) {
    if (!*tok || tok[strspn(tok, " \n\t\r")] || n == 0) return tok;
    size_t k = 0;
    buf[0] = '\0';
    for (; *tok; tok++) {
        const char *g = *tok == ' ' ? "␣" : *tok == '\n' ? "↵" : *tok == '\t' ? "⇥" : "\\r";
        if (k + strlen(g) >= n) break;
        k += (size_t)snprintf(buf + k, n - k, "%s", g);
    }
    return buf;
}
