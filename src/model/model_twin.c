/* model_twin.c — a training step split between two threads (see model.h).
 *
 * On two cores the step's many small products and kernels, each cut between two
 * threads, meet at a barrier every few hundred microseconds; most of the second
 * core's time went to waiting.  Cutting the batch instead gives each thread a
 * whole forward and backward of its own (one barrier in the middle, one at the
 * end), and the halves' gradients are added.  The two halves see the same
 * parameters and divide by the whole batch's counts, so their sum is the whole
 * batch's gradient; only the order of the float sums differs. */
#include "model/model.h"
#include "core/errmsg.h"
#include "core/rng.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define TWIN_MAX_SUP 8   /* supervisions a split step handles (training uses two) */

int model_twin_init(Model *twin, const Model *m) {
    memset(twin, 0, sizeof *twin);
    if (!m->params_memory) return errmsg_set(twin->err, sizeof twin->err, "model_twin_init: model not initialised");
    twin->config = m->config;
    twin->params = m->params;
    twin->params_memory = m->params_memory;
    twin->num_params = m->num_params;
    twin->pe = m->pe;
    twin->shares_params = 1;
    return 0;
}

static long item_tokens(const int *src_len, const int *tgt_len, int b) {
    return (src_len ? src_len[b] : 0) + (tgt_len ? tgt_len[b] : 0);
}

/* The first item of the second half: the cut 1..B-1 whose halves' token counts
 * are closest. */
static int split_point(const int *src_len, const int *tgt_len, int B) {
    long total = 0, run = 0, best = -1;
    int cut = 1;
    for (int b = 0; b < B; b++) total += item_tokens(src_len, tgt_len, b);
    for (int b = 1; b < B; b++) {
        run += item_tokens(src_len, tgt_len, b - 1);
        long gap = labs(2 * run - total);
        if (best < 0 || gap < best) { best = gap; cut = b; }
    }
    return cut;
}

/* One half: its model, first item and size, its supervisions (targets offset to
 * its items), and what its pass returned. */
typedef struct {
    Model *m;
    int b0, nb;
    ModelAttnSupervision sup[TWIN_MAX_SUP];
    float loss;
    int rc;
} Half;

static void half_forward(Half *h, const ModelBatch *x) {
    int enc = h->m->config.arch != MODEL_DECODER_ONLY, dec = h->m->config.arch != MODEL_ENCODER_ONLY;
    size_t b0 = (size_t)h->b0;
    h->rc = model_forward(h->m, &(ModelBatch){enc ? x->src + b0 * x->S : NULL, enc ? x->src_len + b0 : NULL, x->S, dec ? x->tgt + b0 * x->T : NULL, dec ? x->tgt_len + b0 : NULL, x->T, h->nb});
}

static void half_backward(Half *h, const int *targets, int To, float eps, int n_sup) {
    h->rc = h->m->grads_memory ? 0 : model_zero_grad(h->m);   /* the twin's: zeroed after the sum */
    if (!h->rc) h->loss = model_backward_sup(h->m, targets + (size_t)h->b0 * To, eps, n_sup ? h->sup : NULL, n_sup);
    if (h->rc || isnan(h->loss)) h->rc = -1;
}

/* Rows and columns of a supervision's (B, Tq, Tk) targets. */
static size_t sup_item_size(ModelAttnKind kind, int S, int T) {
    return kind == MODEL_ATTN_ENC_SELF ? (size_t)S * S : kind == MODEL_ATTN_DEC_SELF ? (size_t)T * T : (size_t)T * S;
}

/* Each half's copy of the supervisions, then their rows in the whole batch. */
static int halves_supervise(Half *h, ModelAttnSupervision *sup, int n_sup, int S, int T) {
    for (int i = 0; i < n_sup; i++) {
        int rows = 0;
        for (int k = 0; k < 2; k++) {
            h[k].sup[i] = sup[i];
            h[k].sup[i].target = sup[i].target + h[k].b0 * sup_item_size(sup[i].kind, S, T);
            h[k].sup[i].norm_rows = 0;
            if (isnan(model_attn_sup_loss(h[k].m, &h[k].sup[i]))) return k;
            rows += h[k].sup[i].rows;
        }
        for (int k = 0; k < 2; k++) h[k].sup[i].norm_rows = rows;
    }
    return -1;
}

/* m's gradients += the twin's; the twin's back to 0 for its next step. */
static void add_twin_grads(Model *m, Model *twin) {
    float *g = m->grads_memory, *t = twin->grads_memory;
    long n = (long)m->num_params;
#ifdef _OPENMP
    #pragma omp parallel for schedule(static)
#endif
    for (long i = 0; i < n; i++) { g[i] += t[i]; t[i] = 0.0f; }
}

static void copy_err(Model *m, const Model *from) {
    if (from != m) errmsg_set(m->err, sizeof m->err, "%s", from->err);
}

/* Inside a half: the products and kernels run on this thread only. */
static void one_thread_inside(void) {
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
}

static float split_step(Model *m, Model *twin, const ModelBatch *x, const int *targets,
                        float eps, ModelAttnSupervision *sup, int n_sup) {
    int cut = split_point(m->config.arch != MODEL_DECODER_ONLY ? x->src_len : NULL,
                          m->config.arch != MODEL_ENCODER_ONLY ? x->tgt_len : NULL, x->B);
    Half h[2] = { { .m = m, .b0 = 0, .nb = cut }, { .m = twin, .b0 = cut, .nb = x->B - cut } };
#ifdef _OPENMP
    int par = omp_get_max_threads() >= 2;   /* the halves side by side, or one after the other */
#endif
    twin->training = m->training;
    twin->dropout = m->dropout;
    Rng r = rng_from_state(m->dropout_rng ^ 0x632BE59BD9B4E019ULL);   /* the second half's masks */
    rng_next(&r);
    twin->dropout_rng = r.s;
#ifdef _OPENMP
    #pragma omp parallel for num_threads(2) schedule(static, 1) if (par)
#endif
    for (int k = 0; k < 2; k++) { one_thread_inside(); half_forward(&h[k], x); }
    for (int k = 0; k < 2; k++)
        if (h[k].rc) { copy_err(m, h[k].m); return NAN; }
    long count = 0;                    /* output tokens of the whole batch */
    for (int k = 0; k < 2; k++)
        for (int b = 0; b < h[k].nb; b++) count += h[k].m->out_len[b];
    m->loss_count = twin->loss_count = count;
    int bad = halves_supervise(h, sup, n_sup, x->S, x->T);
    if (bad >= 0) { copy_err(m, h[bad].m); m->loss_count = twin->loss_count = 0; return NAN; }
    int To = m->To;
#ifdef _OPENMP
    #pragma omp parallel for num_threads(2) schedule(static, 1) if (par)
#endif
    for (int k = 0; k < 2; k++) { one_thread_inside(); half_backward(&h[k], targets, To, eps, n_sup); }
    m->loss_count = twin->loss_count = 0;
    for (int k = 0; k < 2; k++)
        if (h[k].rc) { copy_err(m, h[k].m); model_zero_grad(twin); return NAN; }
    add_twin_grads(m, twin);
    for (int i = 0; i < n_sup; i++) {   /* both halves divided by the whole batch's rows */
        sup[i].loss = h[0].sup[i].loss + h[1].sup[i].loss;
        sup[i].rows = h[0].sup[i].rows + h[1].sup[i].rows;
    }
    return h[0].loss + h[1].loss;
}

float model_train_step(Model *m, Model *twin, const ModelBatch *x, const int *targets,
                       float eps, ModelAttnSupervision *sup, int n_sup) {
    if (!twin || x->B < 2 || n_sup > TWIN_MAX_SUP || n_sup < 0 || (n_sup > 0 && !sup) ||
        m->n_ablated > 0 || !m->training) {
        if (model_forward(m, x)) return NAN;
        return model_backward_sup(m, targets, eps, sup, n_sup);
    }
    if (twin->params_memory != m->params_memory || twin->num_params != m->num_params) {
        errmsg_set(m->err, sizeof m->err, "model_train_step: the twin does not share this model's parameters");
        return NAN;
    }
    return split_step(m, twin, x, targets, eps, sup, n_sup);
}
