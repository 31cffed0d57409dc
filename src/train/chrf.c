/* chrf.c — chrF from its definition (chrf.h). */
#include "train/chrf.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void chrf_stats_init(ChrfStats *s) { memset(s, 0, sizeof *s); }

static int is_space(uint32_t c) {
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

/* The code points of text without white space, in a new array; -1 on bad UTF-8. */
static int code_points(const char *text, uint32_t **out) {
    size_t len = strlen(text);
    uint32_t *cp = malloc((len + 1) * sizeof *cp);
    if (!cp) return -1;
    int n = 0;
    const unsigned char *p = (const unsigned char *)text;
    while (*p) {
        uint32_t c;
        int k;
        if (p[0] < 0x80) { c = p[0]; k = 1; }
        else if ((p[0] & 0xE0) == 0xC0) { c = p[0] & 0x1F; k = 2; }
        else if ((p[0] & 0xF0) == 0xE0) { c = p[0] & 0x0F; k = 3; }
        else if ((p[0] & 0xF8) == 0xF0) { c = p[0] & 0x07; k = 4; }
        else { free(cp); return -1; }
        for (int i = 1; i < k; i++) {
            if ((p[i] & 0xC0) != 0x80) { free(cp); return -1; }
            c = (c << 6) | (p[i] & 0x3F);
        }
        p += k;
        if (!is_space(c)) cp[n++] = c;
    }
    *out = cp;
    return n;
}

static int cmp_two(const uint32_t *x, const uint32_t *y, int n) {
    for (int i = 0; i < n; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

/* n-grams given by their first code point in one text, for qsort_r. */
typedef struct { const uint32_t *text; int n; } GramOrder;
static int cmp_gram(const void *a, const void *b, void *ctx) {
    const GramOrder *g = ctx;
    return cmp_two(g->text + *(const int *)a, g->text + *(const int *)b, g->n);
}

/* Starts of every n-gram of t (length len), sorted; returns their count. */
static int sorted_grams(const uint32_t *t, int len, int n, int *starts) {
    int m = len - n + 1;
    if (m <= 0) return 0;
    for (int i = 0; i < m; i++) starts[i] = i;
    GramOrder g = {t, n};
    qsort_r(starts, m, sizeof *starts, cmp_gram, &g);
    return m;
}

/* hyp/ref/match counts of every order for one pair; -1 on allocation failure. */
static int pair_counts(const uint32_t *h, int nh, const uint32_t *r, int nr, double cnt[3][CHRF_ORDER + 1]) {
    int *sh = malloc(((size_t)nh + 1) * sizeof *sh), *sr = malloc(((size_t)nr + 1) * sizeof *sr);
    if (!sh || !sr) { free(sh); free(sr); return -1; }
    for (int n = 1; n <= CHRF_ORDER; n++) {
        int mh = sorted_grams(h, nh, n, sh), mr = sorted_grams(r, nr, n, sr);
        long match = 0;
        for (int i = 0, j = 0; i < mh && j < mr;) {      /* merge two sorted lists: min counts */
            int c = cmp_two(h + sh[i], r + sr[j], n);
            if (c < 0) i++;
            else if (c > 0) j++;
            else { match++; i++; j++; }
        }
        cnt[0][n] = mh;
        cnt[1][n] = mr;
        cnt[2][n] = (double)match;
    }
    free(sh);
    free(sr);
    return 0;
}

double chrf_score(const ChrfStats *s, double beta) {
    double p = 0, r = 0;
    int orders = 0;
    for (int n = 1; n <= CHRF_ORDER; n++) {
        if (s->hyp[n] <= 0 || s->ref[n] <= 0) continue;
        p += s->match[n] / s->hyp[n];
        r += s->match[n] / s->ref[n];
        orders++;
    }
    if (!orders) return 0;
    p /= orders;
    r /= orders;
    double b2 = beta * beta;
    return p + r > 0 ? 100.0 * (1 + b2) * p * r / (b2 * p + r) : 0;
}

int chrf_add(ChrfStats *s, const char *hyp, const char *const *refs, int n_refs) {
    uint32_t *h = NULL;
    int nh = code_points(hyp, &h), best = -1;
    double best_f = -1, best_cnt[3][CHRF_ORDER + 1];
    if (nh < 0) return -1;
    for (int k = 0; k < n_refs; k++) {
        uint32_t *r = NULL;
        int nr = code_points(refs[k], &r);
        double cnt[3][CHRF_ORDER + 1];
        if (nr < 0 || pair_counts(h, nh, r, nr, cnt) < 0) { free(r); free(h); return -1; }
        free(r);
        ChrfStats one;
        chrf_stats_init(&one);
        memcpy(one.hyp, cnt[0], sizeof one.hyp);
        memcpy(one.ref, cnt[1], sizeof one.ref);
        memcpy(one.match, cnt[2], sizeof one.match);
        double f = chrf_score(&one, 2.0);
        if (f > best_f) { best_f = f; best = k; memcpy(best_cnt, cnt, sizeof cnt); }
    }
    free(h);
    if (best < 0) return -1;
    for (int n = 1; n <= CHRF_ORDER; n++) {
        s->hyp[n] += best_cnt[0][n];
        s->ref[n] += best_cnt[1][n];
        s->match[n] += best_cnt[2][n];
    }
    s->sentences++;
    return best;
}
