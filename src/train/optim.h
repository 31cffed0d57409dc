/* optim.h — the optimizer and the learning-rate schedule of training.
 *
 * Optimizer: Adam (β1 0.9, β2 0.98, ε 1e-9) with bias correction, no weight decay;
 * the global gradient norm is clipped to clip_norm before the update.
 * Schedule (train_lr): linear warm-up from lr/warmup to lr over `warmup` steps,
 * then cosine decay to lr·min_lr_frac at the last step.
 *
 * Ownership: an Adam owns its moments; adam_free accepts NULL and zeroed structs. */
#ifndef ATTNVIZ_TRAIN_OPTIM_H
#define ATTNVIZ_TRAIN_OPTIM_H
#include <stddef.h>

typedef struct {
    float beta1, beta2, eps;
    size_t n;
    float *m, *v;   /* (n) moments */
    long t;         /* updates done */
} Adam;

int  adam_init(Adam *a, size_t n);      /* zeroed moments, β1 0.9, β2 0.98, ε 1e-9 */
void adam_free(Adam *a);
/* One step: t += 1; m = β1 m + (1-β1) g; v = β2 v + (1-β2) g²;
 * p -= lr · (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + ε). */
void adam_update(Adam *a, float *params, const float *grads, float lr);
/* The same with g = grads · grad_scale (the clip factor below, applied in the
 * same pass: the same bits as scaling grads first, one pass over them fewer). */
void adam_update_scaled(Adam *a, float *params, const float *grads, float grad_scale, float lr);

/* Scales g so that its L2 norm is at most max_norm (max_norm <= 0: no clipping).
 * Returns the norm before clipping. */
double train_clip_grad_norm(float *g, size_t n, double max_norm);
/* Its two halves: the norm, and the factor that brings it to max_norm (1 when
 * it is not above, or max_norm <= 0). */
double train_grad_norm(const float *g, size_t n);
float  train_clip_factor(double norm, double max_norm);

/* Learning rate at step (0-based) of total, see the schedule above. */
double train_lr(long step, long total, double lr, long warmup, double min_lr_frac);

#endif
