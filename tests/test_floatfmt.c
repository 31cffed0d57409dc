/* test_floatfmt.c — core/floatfmt.h against the C library: for every P, the
 * text must be what "%.Pg" prints of the shortest "%.{p-1}e" (p ≤ P) that
 * strtof reads back as x, else "%.Pg" of x (the definition in floatfmt.h,
 * computed here the slow way, with glibc's correctly rounded conversions). */
#include "check.h"
#include "core/floatfmt.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void reference(float x, int P, char *out) {
    char buf[64];
    for (int p = 1; isfinite(x) && p <= P; p++) {
        snprintf(buf, sizeof buf, "%.*e", p - 1, (double)x);
        if (strtof(buf, NULL) == x) { snprintf(out, 64, "%.*g", P, strtod(buf, NULL)); return; }
    }
    snprintf(out, 64, "%.*g", P, (double)x);
}

static int differs(float x, int P) {
    char got[FLOAT_FORMAT_MAX], want[64];
    int n = float_format(x, P, got);
    reference(x, P, want);
    if (strcmp(got, want) == 0 && n == (int)strlen(got)) return 0;
    fprintf(stderr, "  x = %.9g (bits %08x), P = %d: got \"%s\", want \"%s\"\n", (double)x,
            (unsigned)(union { float f; uint32_t u; }){x}.u, P, got, want);
    return 1;
}

TEST(floatfmt_hand_values) {
    char b[FLOAT_FORMAT_MAX];
    static const struct { float x; int P; const char *want; } c[] = {
        {0.1f, 9, "0.1"},   {1.0f / 3, 9, "0.33333334"}, {1.0f / 3, 6, "0.333333"}, {100.0f, 9, "100"},
        {1e-5f, 9, "1e-05"}, {-2.5f, 9, "-2.5"},          {0.0f, 9, "0"},            {-0.0f, 9, "-0"},
        {123456792.0f, 9, "123456790"}, {1e9f, 9, "1e+09"}, {16777216.0f, 9, "16777216"},
        {0.000123f, 6, "0.000123"},  {1e-11f, 9, "1e-11"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        float_format(c[i].x, c[i].P, b);
        if (strcmp(b, c[i].want))
            check_fail(__FILE__, __LINE__, "%.9g at P=%d: \"%s\", want \"%s\"", (double)c[i].x, c[i].P, b, c[i].want);
    }
}

/* Shortest digits as numpy prints them (repr of np.float32) in the hand values. */
/* Every exponent, the mantissas next to powers of two and ten, and random bits. */
TEST(floatfmt_matches_the_c_library) {
    int bad = 0;
    for (uint32_t be = 0; be < 255 && bad < 5; be++)
        for (uint32_t f = 0; f < 16 && bad < 5; f++) {
            uint32_t lo = be << 23 | f, hi = be << 23 | (0x7FFFFF - f);
            float a, z;
            memcpy(&a, &lo, 4);
            memcpy(&z, &hi, 4);
            for (int P = 1; P <= 9; P++) bad += differs(a, P) + differs(-z, P);
        }
    for (int d = -12; d <= 19 && bad < 5; d++)   /* around powers of ten */
        for (int P = 1; P <= 9; P++) {
            float t = (float)pow(10, d);
            bad += differs(t, P) + differs(nextafterf(t, 0), P) + differs(nextafterf(t, INFINITY), P);
        }
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 100000 && bad < 5; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        uint32_t u = (uint32_t)s;
        float x;
        if (i % 2) memcpy(&x, &u, 4);
        else x = (float)((s >> 40) * (1.0 / 16777216.0));   /* weights: [0, 1) */
        if (isfinite(x)) bad += differs(x, 1 + (int)(s >> 60) % 9) + differs(x, 9);
    }
    if (bad) check_fail(__FILE__, __LINE__, "%d values printed differently from the C library's reference", bad);
}
