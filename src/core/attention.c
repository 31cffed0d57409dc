/* attention.c — see attention.h. Plain loops; the model calls this per head. */
#include "core/attention.h"
#include "core/tensor.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int attn_steps_alloc(AttnSteps *s, int Tq, int Tk, int Dv) {
    memset(s, 0, sizeof *s);
    s->Tq = Tq; s->Tk = Tk; s->Dv = Dv;
    size_t n = (size_t)Tq * Tk;
    s->scores  = calloc(n, sizeof(float));
    s->scaled  = calloc(n, sizeof(float));
    s->masked  = calloc(n, sizeof(float));
    s->weights = calloc(n, sizeof(float));
    s->output  = calloc((size_t)Tq * (Dv > 0 ? Dv : 1), sizeof(float));
    if (!s->scores || !s->scaled || !s->masked || !s->weights || !s->output) {
        attn_steps_free(s);
        return -1;
    }
    return 0;
}

void attn_steps_free(AttnSteps *s) {
    if (!s) return;
    free(s->scores); free(s->scaled); free(s->masked); free(s->weights); free(s->output);
    memset(s, 0, sizeof *s);
}

void attn_causal_mask(unsigned char *mask, int Tq, int Tk) {
    int offset = Tk - Tq;
    for (int i = 0; i < Tq; i++)
        for (int j = 0; j < Tk; j++)
            mask[i * Tk + j] = (unsigned char)(j <= i + offset);
}

int attn_softmax_row(float *x, int n) {
    float mx[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    int j = 0;
    for (; j + 8 <= n; j += 8)            /* 8 lanes (vectorised); a NaN is passed over, as one by one */
        for (int k = 0; k < 8; k++) mx[k] = x[j + k] > mx[k] ? x[j + k] : mx[k];
    for (; j < n; j++) mx[0] = x[j] > mx[0] ? x[j] : mx[0];
    float max = mx[0];
    for (int k = 1; k < 8; k++) max = mx[k] > max ? mx[k] : max;
    if (max == -INFINITY) {               /* every key masked: defined as zeros */
        for (j = 0; j < n; j++) x[j] = 0.0f;
        return 1;
    }
    exp_shifted(x, x, max, n);            /* vectorised expf; a masked −∞ gives 0 */
    double s[4] = {0.0, 0.0, 0.0, 0.0};   /* four sums in a fixed order: not one long chain */
    j = 0;
    for (; j + 4 <= n; j += 4)
        for (int k = 0; k < 4; k++) s[k] += x[j + k];
    for (; j < n; j++) s[0] += x[j];
    float inv = (float)(1.0 / ((s[0] + s[1]) + (s[2] + s[3])));
    for (j = 0; j < n; j++) x[j] *= inv;
    return 0;
}

/* Row i: weights <- softmax(masked scores), out <- weights · V.  `row` is a
 * scratch row of Tk floats holding the scaled scores of query i on entry.
 * Returns 1 if the row was fully masked with -inf, else 0. */
static int softmax_and_values(const AttnHead *a, int i, float *row) {
    int Tk = a->Tk, Dv = a->Dv;
    AttnSteps *steps = a->steps;
    for (int j = 0; j < Tk; j++)
        if (a->mask && !a->mask[(size_t)i * Tk + j]) row[j] = a->mask_fill;
    if (steps) memcpy(steps->masked + (size_t)i * Tk, row, Tk * sizeof(float));
    int empty = attn_softmax_row(row, Tk);
    if (a->weights) memcpy(a->weights + (size_t)i * Tk, row, Tk * sizeof(float));
    if (steps) memcpy(steps->weights + (size_t)i * Tk, row, Tk * sizeof(float));
    if (a->v && (a->out || steps)) {
        /* output row = Σ_j weights[j] · V[j], walking V row by row (contiguous) */
        float *o = a->out ? a->out + (size_t)i * a->ldo : steps->output + (size_t)i * Dv;
        for (int d = 0; d < Dv; d++) o[d] = 0.0f;
        for (int j = 0; j < Tk; j++) {
            float w = row[j];
            if (w == 0.0f) continue;
            const float *vj = a->v + (size_t)j * a->ldv;
            for (int d = 0; d < Dv; d++) o[d] += w * vj[d];
        }
        if (a->out && steps) memcpy(steps->output + (size_t)i * Dv, o, Dv * sizeof(float));
    }
    return empty;
}

int attention_forward(const AttnHead *a) {
    int Tq = a->Tq, Tk = a->Tk, D = a->D;
    float stack_row[256];
    float *row = Tk <= 256 ? stack_row : malloc((size_t)Tk * sizeof(float));
    if (!row) return -1;
    int empty_rows = 0;
    for (int i = 0; i < Tq; i++) {
        const float *qi = a->q + (size_t)i * a->ldq;
        for (int j = 0; j < Tk; j++) {                 /* scores = Q·Kᵀ */
            const float *kj = a->k + (size_t)j * a->ldk;
            float dot = 0.0f;
            for (int d = 0; d < D; d++) dot += qi[d] * kj[d];
            if (a->steps) a->steps->scores[(size_t)i * Tk + j] = dot;
            row[j] = dot * a->scale;                   /* ÷ √d_k */
            if (a->steps) a->steps->scaled[(size_t)i * Tk + j] = row[j];
        }
        empty_rows += softmax_and_values(a, i, row);
    }
    if (row != stack_row) free(row);
    return empty_rows;
}

#define KT_STACK 4096   /* floats of the on-stack K tile (D·Tkp up to 64×64) */

/* 1 + the last key query i may attend, when masked cells are −∞: they weigh
 * exactly 0 (expf(−∞) = 0 adds nothing to the row's sum and combine_rows skips
 * them), so the columns past it need no score.  Tk when the fill is finite or
 * the row is fully masked (the usual path defines those). */
static int row_extent(const AttnHead *a, int i) {
    if (!a->mask || !(isinf(a->mask_fill) && a->mask_fill < 0)) return a->Tk;
    const unsigned char *mk = a->mask + (size_t)i * a->Tk;
    int hi = a->Tk;
    uint64_t w[8];   /* masked keys 64, then 8 at a time (a causal row ends in Tk − i − 1 of them) */
    for (; hi >= 64 && (memcpy(w, mk + hi - 64, 64), !(w[0] | w[1] | w[2] | w[3] | w[4] | w[5] | w[6] | w[7])); ) hi -= 64;
    for (; hi >= 8 && (memcpy(w, mk + hi - 8, 8), w[0] == 0); ) hi -= 8;
    while (hi > 0 && !mk[hi - 1]) hi--;
    return hi > 0 ? hi : a->Tk;
}

#define ROW_BLOCK 16   /* query rows whose scores one vecmat_tile call computes */

int attention_forward_fast(const AttnHead *a) {
    int Tq = a->Tq, Tk = a->Tk, D = a->D, Tkp = tile_cols(Tk);
    float kt_stack[KT_STACK];
    float *kt = (size_t)D * Tkp <= KT_STACK ? kt_stack : malloc((size_t)D * Tkp * sizeof(float));
    if (!kt) return -1;
    pack_transposed(kt, a->k, a->ldk, Tk, D, Tkp);       /* kt (D, Tkp) = this head's Kᵀ */
    int empty_rows = 0;
    int p0 = -1, phi = 0;   /* long rows p0.. waiting for one weights · V product, their last key */
    for (int i0 = 0; i0 < Tq; i0 += ROW_BLOCK) {
        int n = Tq - i0 < ROW_BLOCK ? Tq - i0 : ROW_BLOCK, ext[ROW_BLOCK], hi = 0;
        for (int r = 0; r < n; r++) {
            ext[r] = row_extent(a, i0 + r);
            if (ext[r] > hi) hi = ext[r];
        }
        /* Q·Kᵀ of these rows, up to the last key any of them attends */
        vecmat_tile(a->weights + (size_t)i0 * Tk, Tk, a->q + (size_t)i0 * a->ldq, a->ldq, n, kt, D, hi, Tkp);
        for (int r = 0; r < n; r++) {
            int i = i0 + r, e = ext[r];
            float *row = a->weights + (size_t)i * Tk;
            const unsigned char *mk = a->mask ? a->mask + (size_t)i * Tk : NULL;
            float scale = a->scale, fill = a->mask_fill;
            if (mk) {
                uint32_t fb;
                memcpy(&fb, &fill, sizeof fb);
                OMP_SIMD
                for (int j = 0; j < e; j++) {   /* a select by bits (vectorised), not a branch */
                    float v = row[j] * scale;
                    uint32_t b, keep = 0u - (uint32_t)(mk[j] != 0);
                    memcpy(&b, &v, sizeof b);
                    b = (b & keep) | (fb & ~keep);
                    memcpy(row + j, &b, sizeof b);
                }
            } else {
                OMP_SIMD
                for (int j = 0; j < e; j++) row[j] *= scale;
            }
            empty_rows += attn_softmax_row(row, e);
            for (int j = e; j < Tk; j++) row[j] = 0.0f;
            if (a->v && a->out && hi < COMBINE_BLOCK_MIN)
                combine_rows(a->out + (size_t)i * a->ldo, row, a->v, a->ldv, e, a->Dv);
        }
        if (a->v && a->out && hi >= COMBINE_BLOCK_MIN) {   /* long rows: up to 128 of them in one product */
            if (p0 < 0) p0 = i0;
            if (hi > phi) phi = hi;
            if (i0 + n - p0 >= 8 * ROW_BLOCK || i0 + n == Tq) {   /* (V packed once per 128 rows, not 16) */
                combine_block(a->out + (size_t)p0 * a->ldo, a->ldo, a->weights + (size_t)p0 * Tk, Tk, i0 + n - p0,
                              a->v, a->ldv, phi, a->Dv);
                p0 = -1;
                phi = 0;
            }
        }
    }
    if (kt != kt_stack) free(kt);
    return empty_rows;
}

/* Rows are independent: from 64 queries on, each head goes in two parts, rows
 * [0, r) and [r, Tq) with r near 0.7·Tq (a causal row i costs i + 1 keys, so the
 * two hold about the same work), so that 9 heads on 2 threads do not leave one
 * thread waiting for the ninth (SmolLM2 on 512 tokens). */
int attention_heads_fast(const AttnHead *a, int n) {
    int failed = 0;
#ifdef _OPENMP
    #pragma omp parallel for schedule(dynamic) reduction(|:failed)
#endif
    for (int k = 0; k < 2 * n; k++) {
        const AttnHead *h = &a[k / 2];
        int r = h->Tq >= 64 ? (int)(0.7 * h->Tq) / ROW_BLOCK * ROW_BLOCK : h->Tq;
        int r0 = k % 2 ? r : 0, r1 = k % 2 ? h->Tq : r;
        if (r1 <= r0) continue;
        AttnHead part = *h;
        part.q += (size_t)r0 * h->ldq;
        part.Tq = r1 - r0;
        if (part.mask) part.mask += (size_t)r0 * h->Tk;
        if (part.out) part.out += (size_t)r0 * h->ldo;
        part.weights += (size_t)r0 * h->Tk;
        failed |= attention_forward_fast(&part) < 0;
    }
    return failed ? -1 : 0;
}

int attention_from_scores(const AttnHead *a, const float *scores) {
    int Tk = a->Tk;
    float *row = malloc((size_t)(Tk > 0 ? Tk : 1) * sizeof(float));
    if (!row) return -1;
    int empty_rows = 0;
    for (int i = 0; i < a->Tq; i++) {
        memcpy(row, scores + (size_t)i * Tk, Tk * sizeof(float));
        if (a->steps) {
            memcpy(a->steps->scores + (size_t)i * Tk, row, Tk * sizeof(float));
            memcpy(a->steps->scaled + (size_t)i * Tk, row, Tk * sizeof(float));
        }
        empty_rows += softmax_and_values(a, i, row);
    }
    free(row);
    return empty_rows;
}
