/* attention.c — see attention.h. Plain loops; the model calls this per head. */
#include "core/attention.h"
#include <math.h>
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
    float max = -INFINITY;
    for (int j = 0; j < n; j++) if (x[j] > max) max = x[j];
    if (max == -INFINITY) {               /* every key masked: defined as zeros */
        for (int j = 0; j < n; j++) x[j] = 0.0f;
        return 1;
    }
    double sum = 0.0;
    for (int j = 0; j < n; j++) { x[j] = expf(x[j] - max); sum += x[j]; }
    float inv = (float)(1.0 / sum);
    for (int j = 0; j < n; j++) x[j] *= inv;
    return 0;
}

/* weights (Tq,Tk) <- softmax(masked scores), out <- weights · V.  `row` is a
 * scratch row of Tk floats holding the scaled scores of one query on entry. */
static int softmax_and_values(float *out, int ldo, float *w_row, AttnSteps *steps, int i,
                              float *row, const float *v, int ldv,
                              const unsigned char *mask, float mask_fill, int Tk, int Dv) {
    for (int j = 0; j < Tk; j++)
        if (mask && !mask[(size_t)i * Tk + j]) row[j] = mask_fill;
    if (steps) memcpy(steps->masked + (size_t)i * Tk, row, Tk * sizeof(float));
    int empty = attn_softmax_row(row, Tk);
    if (w_row) memcpy(w_row, row, Tk * sizeof(float));
    if (steps) memcpy(steps->weights + (size_t)i * Tk, row, Tk * sizeof(float));
    if (v && (out || steps)) {
        /* output row = Σ_j weights[j] · V[j], walking V row by row (contiguous) */
        float *o = out ? out + (size_t)i * ldo : steps->output + (size_t)i * Dv;
        for (int d = 0; d < Dv; d++) o[d] = 0.0f;
        for (int j = 0; j < Tk; j++) {
            float w = row[j];
            if (w == 0.0f) continue;
            const float *vj = v + (size_t)j * ldv;
            for (int d = 0; d < Dv; d++) o[d] += w * vj[d];
        }
        if (out && steps) memcpy(steps->output + (size_t)i * Dv, o, Dv * sizeof(float));
    }
    return empty;
}

int attention_forward(float *out, int ldo, float *weights, AttnSteps *steps,
                      const float *q, int ldq, const float *k, int ldk,
                      const float *v, int ldv, const unsigned char *mask,
                      float mask_fill, float scale, int Tq, int Tk, int D, int Dv) {
    float stack_row[256];
    float *row = Tk <= 256 ? stack_row : malloc((size_t)Tk * sizeof(float));
    if (!row) return -1;
    int empty_rows = 0;
    for (int i = 0; i < Tq; i++) {
        const float *qi = q + (size_t)i * ldq;
        for (int j = 0; j < Tk; j++) {                 /* scores = Q·Kᵀ */
            const float *kj = k + (size_t)j * ldk;
            float dot = 0.0f;
            for (int d = 0; d < D; d++) dot += qi[d] * kj[d];
            if (steps) steps->scores[(size_t)i * Tk + j] = dot;
            row[j] = dot * scale;                      /* ÷ √d_k */
            if (steps) steps->scaled[(size_t)i * Tk + j] = row[j];
        }
        empty_rows += softmax_and_values(out, ldo, weights ? weights + (size_t)i * Tk : NULL,
                                         steps, i, row, v, ldv, mask, mask_fill, Tk, Dv);
    }
    if (row != stack_row) free(row);
    return empty_rows;
}

int attention_from_scores(float *out, int ldo, float *weights, AttnSteps *steps,
                          const float *scores, const float *v, int ldv,
                          const unsigned char *mask, float mask_fill,
                          int Tq, int Tk, int Dv) {
    float *row = malloc((size_t)(Tk > 0 ? Tk : 1) * sizeof(float));
    if (!row) return -1;
    int empty_rows = 0;
    for (int i = 0; i < Tq; i++) {
        memcpy(row, scores + (size_t)i * Tk, Tk * sizeof(float));
        if (steps) {
            memcpy(steps->scores + (size_t)i * Tk, row, Tk * sizeof(float));
            memcpy(steps->scaled + (size_t)i * Tk, row, Tk * sizeof(float));
        }
        empty_rows += softmax_and_values(out, ldo, weights ? weights + (size_t)i * Tk : NULL,
                                         steps, i, row, v, ldv, mask, mask_fill, Tk, Dv);
    }
    free(row);
    return empty_rows;
}
