/* optim.c — Adam, gradient-norm clipping and the learning-rate schedule (see optim.h). */
#include "train/optim.h"
#include "core/tensor.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int adam_init(Adam *a, size_t n) {
    memset(a, 0, sizeof *a);
    a->beta1 = 0.9f; a->beta2 = 0.98f; a->eps = 1e-9f;
    a->n = n;
    a->m = floats_huge(n, 1);   /* read and written every step */
    a->v = floats_huge(n, 1);
    if (!a->m || !a->v) { adam_free(a); return -1; }
    return 0;
}

void adam_free(Adam *a) {
    if (!a) return;
    free(a->m); free(a->v);
    memset(a, 0, sizeof *a);
}

void adam_update(Adam *a, float *params, const float *grads, float lr) {
    adam_update_scaled(a, params, grads, 1.0f, lr);
}

void adam_update_scaled(Adam *a, float *params, const float *grads, float grad_scale, float lr) {
    a->t++;
    double bc1 = 1.0 - pow(a->beta1, (double)a->t), bc2 = 1.0 - pow(a->beta2, (double)a->t);
    float b1 = a->beta1, b2 = a->beta2, eps = a->eps;
    float step = (float)(lr / bc1), rbc2 = (float)(1.0 / bc2);
    float *restrict pm = params, *restrict am = a->m, *restrict av = a->v;
    const float *restrict gr = grads;
    OMP_PARALLEL_FOR_SIMD
    for (size_t i = 0; i < a->n; i++) {
        float g = gr[i] * grad_scale;
        float m = am[i] = b1 * am[i] + (1.0f - b1) * g;
        float v = av[i] = b2 * av[i] + (1.0f - b2) * g * g;
        pm[i] -= step * m / (sqrtf(v * rbc2) + eps);
    }
}

double train_grad_norm(const float *g, size_t n) {
    double ss = 0.0;
    OMP_SIMD_REDUCE(ss)
    for (size_t i = 0; i < n; i++) ss += (double)g[i] * g[i];
    return sqrt(ss);
}

float train_clip_factor(double norm, double max_norm) {
    return max_norm > 0 && norm > max_norm ? (float)(max_norm / (norm + 1e-12)) : 1.0f;
}

double train_clip_grad_norm(float *g, size_t n, double max_norm) {
    double norm = train_grad_norm(g, n);
    float s = train_clip_factor(norm, max_norm);
    if (s != 1.0f) {
        OMP_SIMD
        for (size_t i = 0; i < n; i++) g[i] *= s;
    }
    return norm;
}

double train_lr(long step, long total, double lr, long warmup, double min_lr_frac) {
    if (warmup > 0 && step < warmup) return lr * (double)(step + 1) / (double)warmup;
    long span = total - warmup;
    if (span <= 1) return lr;
    double p = (double)(step - warmup) / (double)(span - 1);
    if (p > 1) p = 1;
    double floor = lr * min_lr_frac;
    return floor + (lr - floor) * 0.5 * (1.0 + cos(M_PI * p));
}
