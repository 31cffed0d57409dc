/* floatfmt.c — see floatfmt.h.
 *
 * x = m·2^e exactly (m < 2^24).  Scaled by 10^k, x·10^k = num/den with
 *   num = m · 2^max(e,0) · 10^max(k,0),   den = 2^max(−e,0) · 10^max(−k,0),
 * which fit in 128 bits for 1e-10 ≤ |x| < 1e18 (below, in 256: tiny()).  p digits are D = x·10^k
 * rounded half to even, k = p − 1 − X, X the decimal exponent.  D·10^−k reads
 * back as x when it lies within half the gap to x's neighbours: with both
 * sides times den, 2·|D·den − num| < 2^max(e,0)·10^max(k,0) (the gap below a
 * power of two is half as wide; equal is enough when m is even, as strtof
 * rounds a tie to the even mantissa). */
#include "core/floatfmt.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

static const uint64_t POW10[20] = {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
    100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
    1000000000000000000ull, 10000000000000000000ull};

typedef struct { uint32_t m; int e, low_gap_half; } Bits;   /* x = m·2^e, x > 0 */

static Bits bits_of(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    int be = (int)(u >> 23 & 0xFF);
    uint32_t frac = u & 0x7FFFFF;
    Bits b = {be ? frac | 0x800000 : frac, (be ? be : 1) - 150, be > 1 && frac == 0};
    return b;
}

/* x·10^k = num/den; |k| ≤ 19. */
static void scaled(const Bits *b, int k, u128 *num, u128 *den) {
    *num = ((u128)b->m << (b->e > 0 ? b->e : 0)) * POW10[k > 0 ? k : 0];
    *den = ((u128)1 << (b->e < 0 ? -b->e : 0)) * POW10[k < 0 ? -k : 0];
}

/* x·10^k = (q + r/den)·… split once; then p digits (p ≤ P) are q / 10^(P−p)
 * rounded half to even, with the rest of q and r deciding the rounding. */
typedef struct { Bits b; u128 num, den, t; uint64_t q; u128 r; int P; } Scaled;

/* q / 10^j for q < 2^32 and j ≤ 8, by one multiply: with M = ⌈2^64 / 10^j⌉
 * the error e = M·10^j − 2^64 is below 10^j, so q·M / 2^64 exceeds q / 10^j
 * by q·e / (10^j·2^64) < 1 / 10^j, too little to reach the next integer.
 * (A switch over j, one constant division a case, mispredicted its jump.) */
static const uint64_t INV_POW10[9] = {0, 0x199999999999999Aull, 0x28F5C28F5C28F5Dull, 0x4189374BC6A7F0ull,
    0x68DB8BAC710CCull, 0xA7C5AC471B48ull, 0x10C6F7A0B5EEull, 0x1AD7F29ABCBull, 0x2AF31DC462ull};

static uint64_t div_pow10(uint64_t q, int j) {
    return j ? (uint64_t)(((u128)q * INV_POW10[j]) >> 64) : q;
}

/* The p digits, and whether they read back as x. */
static uint64_t digits(const Scaled *s, int p, int *ok) {
    uint64_t pw = POW10[s->P - p], D = div_pow10(s->q, s->P - p), rest = s->q - D * pw;
    u128 twice = 2 * ((u128)rest * s->den + s->r), half = (u128)pw * s->den;
    if (twice > half || (twice == half && (D & 1))) D++;
    u128 dd = (u128)D * pw * s->den, diff = dd > s->num ? dd - s->num : s->num - dd;
    u128 w = (dd < s->num && s->b.low_gap_half ? 4 : 2) * diff;
    *ok = w < s->t || (w == s->t && !(s->b.m & 1));
    return D;
}

/* A lower bound on the fewest digits that can read back, in one pass of
 * divisions by ten (den = 2^sh, k ≥ 0): p digits read back only if a multiple
 * of 10^(P−p) lies within half a gap of x·10^k, i.e. in the integers [L, H]
 * of the interval x·10^k ± t/(2·den) (the wider gap on both sides, ends
 * included, so the bound never overshoots).  Multiples of 10^(j+1) are
 * multiples of 10^j: drop digits while one still fits. */
static int fewest_in(uint64_t lo, uint64_t hi, int P) {   /* [L, H] = [lo, hi] */
    if (lo > hi) return P;
    int j = 0;
    while (j < P - 1 && hi / 10 >= (lo + 9) / 10) { hi /= 10; lo = (lo + 9) / 10; j++; }
    return P - j;
}

static int fewest_at_least(const Scaled *s) {
    int sh = s->b.e < 0 ? -s->b.e : 0;
    u128 a = 2 * s->num - s->t, b = 2 * s->num + s->t, w = (u128)1 << (sh + 1);
    return fewest_in((uint64_t)((a + w - 1) >> (sh + 1)), (uint64_t)(b >> (sh + 1)), s->P);
}

/* The same steps in 64 bits, for x < 2^24 with 1 ≤ k ≤ 16 and 2^k dividing
 * den (every attention weight above 1e-8).  Both sides of each comparison
 * over 2^k: num = m·5^k < 2^24·5^16 < 2^62, den = 2^(sh−k), t = 5^k, and each
 * quantity below is at most 4·num.  The fewest digits p that read back and
 * their value.  (128-bit shifts and products were half of a number's time.) */
static uint64_t digits64(uint32_t m, int sh, int k, int P, int low_gap_half, int *p_out) {
    uint64_t t = POW10[k] >> k, num = (uint64_t)m * t;
    sh -= k;
    uint64_t q = num >> sh, r = num & ((1ull << sh) - 1);
    int p = fewest_in((2 * num - t + (2ull << sh) - 1) >> (sh + 1), (2 * num + t) >> (sh + 1), P);
    for (;; p++) {   /* as digits */
        uint64_t pw = POW10[P - p], D = div_pow10(q, P - p), rest = q - D * pw;
        uint64_t twice = 2 * ((rest << sh) + r), half = pw << sh;
        if (twice > half || (twice == half && (D & 1))) D++;
        uint64_t dd = (D * pw) << sh, diff = dd > num ? dd - num : num - dd;
        uint64_t w = (dd < num && low_gap_half ? 4 : 2) * diff;
        if (w < t || (w == t && !(m & 1)) || p >= P) { *p_out = p; return D; }
    }
}

/* digits (no trailing zeros) and exponent X as "%.Pg" lays them out. */
static int layout(const char *dg, int nd, int X, int P, char *out) {
    int n = 0;
    if (X < -4 || X >= P) {   /* "e-05", "e+18": two digits at least (sprintf's "%02d" was a fifth of a weight's text) */
        out[n++] = dg[0];
        if (nd > 1) { out[n++] = '.'; memcpy(out + n, dg + 1, (size_t)nd - 1); n += nd - 1; }
        int e = X < 0 ? -X : X;   /* at most 45 for a float */
        out[n++] = 'e';
        out[n++] = X < 0 ? '-' : '+';
        out[n++] = (char)('0' + e / 10);
        out[n++] = (char)('0' + e % 10);
        out[n] = '\0';
        return n;
    }
    if (X < 0) {
        out[n++] = '0'; out[n++] = '.';
        for (int i = 0; i < -X - 1; i++) out[n++] = '0';
        memcpy(out + n, dg, (size_t)nd); n += nd;
    } else {
        for (int i = 0; i <= X; i++) out[n++] = i < nd ? dg[i] : '0';
        if (nd > X + 1) { out[n++] = '.'; memcpy(out + n, dg + X + 1, (size_t)(nd - X - 1)); n += nd - X - 1; }
    }
    out[n] = '\0';
    return n;
}

/* The nd digits of d at out (two a division). */
static void put_digits(uint32_t d, int nd, char *out) {
    static const char PAIRS[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "4041424344454647484950515253545556575859606162636465666768697071727374757677787980"
                                "81828384858687888990919293949596979899";
    int i = nd;
    for (; i >= 2; i -= 2, d /= 100) memcpy(out + i - 2, PAIRS + 2 * (d % 100), 2);
    if (i) out[0] = (char)('0' + d);
}

/* D, p digits with decimal exponent X, as text: 9.99… rounded up to 10.0
 * gains an exponent, trailing zeros go, then layout.  A number below one
 * that "%.Pg" writes without an exponent (most attention weights) is
 * written in place: the digits' copy and layout's calls were a third of a
 * weight's time. */
static int text(uint64_t D, int p, int X, int P, char *out) {
    if (D == POW10[p]) { D /= 10; X++; }   /* 9.99… rounded up to 10.0 */
    int nd = p;
    uint32_t d = (uint32_t)D;   /* p ≤ 9 digits */
    while (nd > 1 && d % 10 == 0) { d /= 10; nd--; }   /* no trailing zeros */
    if (X < 0 && X >= -4) {   /* 0.000ddd */
        int n = 1 - X;
        memcpy(out, "0.000000", 8);   /* a fixed 8 bytes (FLOAT_FORMAT_MAX ≥ 16), the digits then over the rest */
        put_digits(d, nd, out + n);
        out[n + nd] = '\0';
        return n + nd;
    }
    char dg[16];
    put_digits(d, nd, dg);
    dg[nd] = '\0';
    return layout(dg, nd, X, P, out);
}

/* ---- below 1e-10: the same in 256 bits ----
 * Down to the smallest subnormal (2^-149), x·10^k = num/2^sh with k ≤ 53 and
 * sh ≤ 149: num < 2^24·10^53 < 2^201.  Every quantity of the fast path is
 * then a 256-bit integer (four 64-bit limbs, lowest first); den is a power of
 * two, so every division is a shift.  Attention weights of trained models
 * reach 1e-30 and below (stories260K: 6% of a trace's numbers), where the
 * C library's loop of up to nine printf + strtof pairs was most of trace.json's time. */
typedef struct { uint64_t w[4]; } U256;

static U256 u256(uint64_t x) { return (U256){{x, 0, 0, 0}}; }

static U256 u256_shl(U256 a, int n) {   /* n < 256; what passes the top is lost (never here) */
    U256 r = {{0, 0, 0, 0}};
    int q = n / 64, b = n % 64;
    for (int i = 3; i >= q; i--) {
        uint64_t v = a.w[i - q] << b;
        if (b && i - q - 1 >= 0) v |= a.w[i - q - 1] >> (64 - b);
        r.w[i] = v;
    }
    return r;
}

static U256 u256_shr(U256 a, int n) {
    U256 r = {{0, 0, 0, 0}};
    int q = n / 64, b = n % 64;
    for (int i = 0; i + q < 4; i++) {
        uint64_t v = a.w[i + q] >> b;
        if (b && i + q + 1 < 4) v |= a.w[i + q + 1] << (64 - b);
        r.w[i] = v;
    }
    return r;
}

static U256 u256_add(U256 a, U256 b) {
    U256 r;
    unsigned carry = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t s = a.w[i] + b.w[i];
        unsigned c1 = s < a.w[i];
        r.w[i] = s + carry;
        carry = c1 | (r.w[i] < s);
    }
    return r;
}

static U256 u256_sub(U256 a, U256 b) {   /* a ≥ b */
    U256 r;
    unsigned borrow = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t d = a.w[i] - b.w[i];
        unsigned b1 = a.w[i] < b.w[i];
        r.w[i] = d - borrow;
        borrow = b1 | (d < borrow);
    }
    return r;
}

static int u256_cmp(U256 a, U256 b) {
    for (int i = 3; i >= 0; i--)
        if (a.w[i] != b.w[i]) return a.w[i] < b.w[i] ? -1 : 1;
    return 0;
}

static U256 u256_mul(U256 a, uint64_t m) {   /* m < 2^32 */
    U256 r;
    uint64_t carry = 0;
    for (int i = 0; i < 4; i++) {
        u128 p = (u128)a.w[i] * m + carry;
        r.w[i] = (uint64_t)p;
        carry = (uint64_t)(p >> 64);
    }
    return r;
}

static U256 u256_pow10_times(uint64_t m, int k) {   /* m·10^k, k ≥ 0 */
    U256 r = u256(m);
    for (; k >= 9; k -= 9) r = u256_mul(r, 1000000000u);
    return u256_mul(r, POW10[k]);
}

/* 0 < a < 1e-10: the digits of float_format's fast path, exactly. */
static int tiny(float a, int P, char *out) {
    Bits b = bits_of(a);
    int sh = -b.e;   /* 57 … 149: den = 2^sh */
    int bits = 32 - __builtin_clz(b.m);   /* 24, fewer for a subnormal */
    int X = ((b.e + bits - 1) * 78913) >> 18;   /* ⌊log10 of x's leading power of two⌋: X or X − 1 */
    if (u256_cmp(u256_pow10_times(b.m, -X), u256_shl(u256(10), sh)) >= 0) X++;
    int k = P - 1 - X;   /* > 0 */
    U256 num = u256_pow10_times(b.m, k), t = u256_pow10_times(1, k);
    uint64_t q = u256_shr(num, sh).w[0];   /* < 10^P */
    U256 r = u256_sub(num, u256_shl(u256(q), sh));
    /* the fewest digits that can read back: fewest_at_least's interval in 256 bits */
    U256 lo2 = u256_sub(u256_shl(num, 1), t), hi2 = u256_add(u256_shl(num, 1), t);
    U256 w1 = u256_sub(u256_shl(u256(1), sh + 1), u256(1));
    int p = fewest_in(u256_shr(u256_add(lo2, w1), sh + 1).w[0], u256_shr(hi2, sh + 1).w[0], P);
    uint64_t D;
    for (;; p++) {   /* digits() in 256 bits */
        uint64_t pw = POW10[P - p], rest = q % pw;
        D = q / pw;
        U256 twice = u256_shl(u256_add(u256_shl(u256(rest), sh), r), 1), half = u256_shl(u256(pw), sh);
        int c = u256_cmp(twice, half);
        if (c > 0 || (c == 0 && (D & 1))) D++;
        U256 dd = u256_shl(u256(D * pw), sh);
        int below = u256_cmp(dd, num) < 0;
        U256 diff = below ? u256_sub(num, dd) : u256_sub(dd, num);
        U256 wd = u256_shl(diff, below && b.low_gap_half ? 2 : 1);
        int ct = u256_cmp(wd, t);
        if (ct < 0 || (ct == 0 && !(b.m & 1)) || p >= P) break;
    }
    return text(D, p, X, P, out);
}

/* The same through the C library: slow, for 1e18 and above. */
static int slow(float x, int P, char *out) {
    char buf[FLOAT_FORMAT_MAX];
    if (isfinite(x))
        for (int p = 1; p <= P; p++) {
            snprintf(buf, sizeof buf, "%.*e", p - 1, (double)x);
            if (strtof(buf, NULL) == x) return snprintf(out, FLOAT_FORMAT_MAX, "%.*g", P, strtod(buf, NULL));
        }
    return snprintf(out, FLOAT_FORMAT_MAX, "%.*g", P, (double)x);
}

int float_format(float x, int P, char *out) {
    if (P < 1) P = 1;
    if (P > 9) P = 9;
    float a = fabsf(x);
    if (!(a >= 1e-10f && a < 1e18f)) {
        if (a == 0) {   /* half of a causal map's cells: no library call */
            int n = 0;
            if (signbit(x)) out[n++] = '-';
            out[n++] = '0';
            out[n] = '\0';
            return n;
        }
        if (a < 1e-10f) {   /* subnormals too */
            int n = 0;
            if (x < 0) out[n++] = '-';
            return n + tiny(a, P, out + n);
        }
        return slow(x, P, out);
    }
    int n = 0;
    if (x < 0) out[n++] = '-';
    Scaled s;   /* every field set below: a {…} initializer's zeroing of 100 bytes was a sixth of the time */
    s.b = bits_of(a);
    s.P = P;
    int X = ((s.b.e + 23) * 78913) >> 18;   /* ⌊(e + 23)·log10 2⌋: x < 10^X is impossible, 10^(X+1) ≤ x possible */
    int k = P - 1 - X, p;
    uint64_t D;
    if (k >= 2 && k <= 16 && -s.b.e >= k) {
        if (((uint64_t)s.b.m * (POW10[k] >> k)) >> (-s.b.e - k) >= POW10[P]) { X++; k--; }   /* x ≥ 10^(X+1) */
        D = digits64(s.b.m, -s.b.e, k, P, s.b.low_gap_half, &p);
    } else {   /* 128 bits */
        scaled(&s.b, k, &s.num, &s.den);
        if (s.num >= POW10[P] * s.den) {   /* x ≥ 10^(X+1): one digit more before the point */
            X++;
            scaled(&s.b, --k, &s.num, &s.den);
        }
        if (k >= 0) {   /* den is a power of two: a shift, not a 128-bit division */
            int sh = s.b.e < 0 ? -s.b.e : 0;
            s.q = (uint64_t)(s.num >> sh);   /* < 10^P */
            s.r = s.num & (s.den - 1);
        } else {
            s.q = (uint64_t)(s.num / s.den);
            s.r = s.num % s.den;
        }
        s.t = ((u128)1 << (s.b.e > 0 ? s.b.e : 0)) * POW10[k > 0 ? k : 0];
        int ok;
        p = k >= 0 ? fewest_at_least(&s) : 1;
        D = digits(&s, p, &ok);   /* the fewest digits that read back; P when none do */
        while (!ok && p < P) D = digits(&s, ++p, &ok);
    }
    return n + text(D, p, X, P, out + n);
}
