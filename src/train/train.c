/* train.c — the training loop: batches in order, a step (forward, backward
 * with the attention supervisions, clip, Adam), progress, checkpoints with
 * their state file, snapshots (see train.h). */
#include "train/train.h"
#include "train/state.h"
#include "core/errmsg.h"
#include "core/threads.h"
#include "core/strbuf.h"
#include "model/checkpoint.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ loop */

int train_save_checkpoint(Model *m, const Adam *a, long step, const TrainOptions *o,
                          const char *const *extra, char *err, size_t errlen) {
    char state[4096];
    if (!o->out_path) return 0;
    if (checkpoint_save(o->out_path, m, o->vocab, o->n_vocab, extra, err, errlen)) return -1;
    snprintf(state, sizeof state, "%s.state", o->out_path);
    return train_state_save(state, a, step, o->seed, o->steps, err, errlen);
}

/* The loss the progress line shows is an exponential moving average over
 * about 1/(1 − LOSS_EMA_DECAY) = 50 steps:
 *     ema = LOSS_EMA_DECAY·ema + LOSS_EMA_WEIGHT·loss
 * LOSS_EMA_WEIGHT is 1 − LOSS_EMA_DECAY written out as 0.02: in double,
 * 1 − 0.98 is 0.020000000000000018, and the averages stay as they always were. */
#define LOSS_EMA_DECAY  0.98
#define LOSS_EMA_WEIGHT 0.02
/* TrainResult's first_loss, last_loss and aux losses are means over this many
 * steps at the start and at the end of the run (train.h). */
#define LOSS_WINDOW_STEPS 50

/* One loss as the progress line and TrainResult see it. */
typedef struct {
    double ema;                  /* NAN until the first value            */
    double first_sum, last_sum;  /* over the first / last LOSS_WINDOW_STEPS */
    long first_n, last_n;
} LossStats;

static void loss_stats_add(LossStats *r, double x, long step, long start_step, long steps) {
    r->ema = isnan(r->ema) ? x : LOSS_EMA_DECAY * r->ema + LOSS_EMA_WEIGHT * x;
    if (step - start_step < LOSS_WINDOW_STEPS) { r->first_sum += x; r->first_n++; }
    if (steps - step <= LOSS_WINDOW_STEPS) { r->last_sum += x; r->last_n++; }
}

/* What the loop keeps from one step to the next. */
typedef struct {
    Batch batch;                       /* reused buffers                              */
    int *order, *starts, n_batches;    /* this epoch's batches (train_epoch_batches)  */
    long epoch;                        /* the epoch of order; -1 before the first     */
    StrBuf snapshots;                  /* the snapshot objects recorded so far        */
    int next_snap;                     /* next index into o->snapshots.steps          */
    float *coref_target, *align_target;   /* supervision targets (B,S,S) and (B,T,S)  */
    size_t coref_cap, align_cap;       /* their capacities in floats                  */
    double t0;                         /* seconds (now_sec)                           */
    long tokens;                       /* source + target tokens seen                 */
    double lr, last_loss;              /* of the last step done                       */
    LossStats loss, coref_aux, align_aux;
    ThreadTune tune;                   /* OpenMP threads per step, by measurement     */
    Model twin;                        /* the second half of a two-thread step        */
} TrainLoop;

static void loop_init(TrainLoop *L, const TrainOptions *o, long start_step) {
    memset(L, 0, sizeof *L);
    L->epoch = -1;
    L->t0 = now_sec();
    L->last_loss = NAN;
    L->loss.ema = L->coref_aux.ema = L->align_aux.ema = NAN;
    while (L->next_snap < o->snapshots.n_steps && o->snapshots.steps[L->next_snap] < start_step) L->next_snap++;
    thread_tune_init(&L->tune);
}

static void loop_free(TrainLoop *L) {
    thread_tune_end(&L->tune);
    model_free(&L->twin);
    free(L->coref_target); free(L->align_target);
    batch_free(&L->batch);
    free(L->order); free(L->starts); free(L->snapshots.buf);
}

/* The options train_run cannot work with.  0, or -1 with err. */
static int check_run_options(const Model *m, const TrainSet *s, const TrainOptions *o, char *err, size_t errlen) {
    if (o->batch < 1 || o->steps < 0) return errmsg_set(err, errlen, "batch and steps must be positive");
    float dropout = (float)o->dropout;   /* as the model computes with it */
    if (!(dropout >= 0.0f && dropout < 1.0f))
        return errmsg_set(err, errlen, "dropout %g must be in 0..1 (excluded)", dropout);
    if (s->max_src > m->config.max_len || s->max_tgt + 1 > m->config.max_len)
        return errmsg_set(err, errlen, "a sentence is longer than the model's max_len %d", m->config.max_len);
    return 0;
}

/* At the snapshot steps, records the model as it is before the update of
 * `step` (step == steps: the final model) and rewrites the snapshot file.
 * 0, or -1 with err. */
static int snapshot_if_due(TrainLoop *L, Model *m, const TrainOptions *o, long step, long start_step,
                           char *err, size_t errlen) {
    if (!o->snapshots.path || L->next_snap >= o->snapshots.n_steps || o->snapshots.steps[L->next_snap] != step) return 0;
    double loss = step == start_step ? NAN : L->last_loss;
    if (snapshot_record(&L->snapshots, m, &o->snapshots, step, loss, L->lr, err, errlen)) return -1;
    if (snapshot_write(&L->snapshots, m, &o->snapshots, err, errlen)) return -1;
    while (L->next_snap < o->snapshots.n_steps && o->snapshots.steps[L->next_snap] <= step) L->next_snap++;
    return 0;
}

/* Makes L->batch the batch of `step` (its epoch's order computed when the
 * epoch changes).  Returns the indices of its examples, or NULL with err. */
static const int *next_batch(TrainLoop *L, const TrainSet *s, const TrainOptions *o, long step,
                             char *err, size_t errlen) {
    if (!L->order || L->epoch < 0) {   /* batches per epoch does not depend on the epoch */
        free(L->order); free(L->starts);
        if (train_epoch_batches(s, o->batch, o->seed, 0, &L->order, &L->starts, &L->n_batches)) goto oom;
        L->epoch = 0;
    }
    long epoch = step / L->n_batches, pos = step % L->n_batches;
    if (epoch != L->epoch) {
        free(L->order); free(L->starts); L->order = L->starts = NULL;
        if (train_epoch_batches(s, o->batch, o->seed, epoch, &L->order, &L->starts, &L->n_batches)) goto oom;
        L->epoch = epoch;
    }
    const int *idx = L->order + L->starts[pos];
    if (batch_make(&L->batch, s, idx, L->starts[pos + 1] - L->starts[pos])) goto oom;
    return idx;
oom:
    errmsg_set(err, errlen, "out of memory");
    return NULL;
}

/* Makes *buf hold at least need floats (contents not kept).  0 or -1. */
static int reserve_floats(float **buf, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    free(*buf);
    *cap = 0;
    if (!(*buf = malloc(need * sizeof(float)))) return -1;
    *cap = need;
    return 0;
}

/* The attention supervisions asked for (each on when its weight > 0) with
 * their targets for the current batch, made of examples idx.  Fills sup and
 * the positions of the coreference and alignment terms in it (-1: off).
 * Returns how many, or -1 out of memory. */
static int batch_supervisions(TrainLoop *L, const TrainSet *s, const TrainOptions *o, const int *idx,
                              ModelAttnSupervision sup[2], int *coref_i, int *align_i) {
    const Batch *b = &L->batch;
    int n = 0;
    float cw = (float)o->coref_weight, aw = (float)o->align_weight;   /* the weights the model computes with */
    *coref_i = *align_i = -1;
    if (!(cw > 0 || aw > 0)) return 0;
    if (cw > 0 && reserve_floats(&L->coref_target, &L->coref_cap, (size_t)b->B * b->S * b->S)) return -1;
    if (aw > 0 && reserve_floats(&L->align_target, &L->align_cap, (size_t)b->B * b->T * b->S)) return -1;
    train_attn_targets(s, idx, b, cw > 0 ? L->coref_target : NULL,
                       aw > 0 ? L->align_target : NULL, NULL, NULL);
    if (cw > 0) {
        *coref_i = n;
        sup[n++] = (ModelAttnSupervision){ MODEL_ATTN_ENC_SELF, o->coref_layer, o->coref_head,
                                           cw, L->coref_target, 0, 0, 0 };
    }
    if (aw > 0) {
        *align_i = n;
        sup[n++] = (ModelAttnSupervision){ MODEL_ATTN_CROSS, o->align_layer, o->align_head,
                                           aw, L->align_target, 0, 0, 0 };
    }
    return n;
}

/* One optimizer step on L->batch (examples idx): forward, zero the gradients,
 * backward with the supervisions, clip, Adam; then the loss statistics.
 * 0, or -1 with err. */
static int train_step(TrainLoop *L, Model *m, Adam *adam, const TrainSet *s, const TrainOptions *o,
                      const int *idx, long step, long start_step, char *err, size_t errlen) {
    const Batch *b = &L->batch;
    if (model_zero_grad(m)) return errmsg_set(err, errlen, "%s", m->err);
    ModelAttnSupervision supervisions[2];
    int coref_i, align_i;
    int n_sup = batch_supervisions(L, s, o, idx, supervisions, &coref_i, &align_i);
    if (n_sup < 0) return errmsg_set(err, errlen, "out of memory");
    /* a training forward: pad rows left out of the products, and dropout only in
     * this forward (snapshots and evaluation never drop); the backward applies
     * the masks this forward stored.  When OpenMP may use two threads, each half
     * of the batch has its own (model_train_step, the twin L->twin,
     * thread_tune_halves); the step cuts the batch in two even when the thread
     * tuner picks one, so the result does not depend on that timing-based choice. */
    m->training = 1;
    float dropout = (float)o->dropout;
    m->dropout = dropout > 0.0f ? dropout : 0.0f;
    if (dropout > 0.0f) model_dropout_seed(m, o->seed, (uint64_t)step);
    float loss = model_train_step(m, thread_tune_halves(&L->tune) ? &L->twin : NULL,
                                  &(ModelBatch){.src = b->src, .src_len = b->src_len, .S = b->S, .tgt = b->dec_in,
                                                .tgt_len = b->tgt_len, .T = b->T, .B = b->B},
                                  b->targets, (float)o->label_smoothing, n_sup ? supervisions : NULL, n_sup);
    m->training = 0;
    if (isnan(loss))
        return errmsg_set(err, errlen, "step %ld: %s", step, m->err[0] ? m->err : "loss is NaN (lower --lr?)");

    float clip = train_clip_factor(train_grad_norm(m->grads_memory, m->num_params), o->clip);
    L->lr = train_lr(step, o->steps, o->lr, o->warmup, o->min_lr_frac);
    adam_update_scaled(adam, m->params_memory, m->grads_memory, clip, (float)L->lr);

    if (coref_i >= 0 && supervisions[coref_i].rows > 0)
        loss_stats_add(&L->coref_aux, supervisions[coref_i].loss, step, start_step, o->steps);
    if (align_i >= 0 && supervisions[align_i].rows > 0)
        loss_stats_add(&L->align_aux, supervisions[align_i].loss, step, start_step, o->steps);
    loss_stats_add(&L->loss, loss, step, start_step, o->steps);
    L->tokens += b->n_tokens;
    L->last_loss = loss;
    return 0;
}

/* Tells o->on_progress where training stands after `step`. */
static void report_progress(const TrainLoop *L, const TrainOptions *o, long step, long start_step) {
    if (!o->on_progress) return;
    TrainProgress p;
    p.step = step + 1;
    p.steps = o->steps;
    p.done_steps = step + 1 - start_step;
    p.elapsed = now_sec() - L->t0;
    p.tokens_per_sec = L->tokens / (p.elapsed > 0 ? p.elapsed : 1e-9);
    p.eta = p.elapsed / p.done_steps * (o->steps - step - 1);
    p.loss_ema = L->loss.ema;
    p.lr = L->lr;
    p.coref_aux = L->coref_aux.ema;
    p.align_aux = L->align_aux.ema;
    o->on_progress(&p, o->progress_ctx);
}

int train_run(Model *m, Adam *adam, long start_step, const TrainSet *s, const TrainOptions *o,
              TrainResult *res, char *err, size_t errlen) {
    memset(res, 0, sizeof *res);
    res->step_begin = res->step_end = start_step;
    res->coref_aux = res->align_aux = NAN;
    if (check_run_options(m, s, o, err, errlen)) return -1;
    if (model_zero_grad(m)) return errmsg_set(err, errlen, "%s", m->err);
    TrainLoop L;
    loop_init(&L, o, start_step);
    int rc = -1;
    if (thread_tune_halves(&L.tune) && model_twin_init(&L.twin, m)) { errmsg_set(err, errlen, "%s", L.twin.err); goto done; }
    for (long step = start_step; step <= o->steps; step++) {
        if (snapshot_if_due(&L, m, o, step, start_step, err, errlen)) goto done;
        if (step == o->steps) break;
        const int *idx = next_batch(&L, s, o, step, err, errlen);
        if (!idx) goto done;
        thread_tune_before(&L.tune);
        double t_step = now_sec();
        if (train_step(&L, m, adam, s, o, idx, step, start_step, err, errlen)) goto done;
        thread_tune_after(&L.tune, now_sec() - t_step);
        report_progress(&L, o, step, start_step);
        if (o->checkpoint_every > 0 && (step + 1) % o->checkpoint_every == 0 && step + 1 < o->steps) {
            if (train_save_checkpoint(m, adam, step + 1, o, o->extra, err, errlen)) goto done;
        }
        res->step_end = step + 1;
    }

    /* the result */
    res->seconds = now_sec() - L.t0;
    res->tokens = L.tokens;
    res->tokens_per_sec = res->seconds > 0 ? L.tokens / res->seconds : 0;
    res->first_loss = L.loss.first_n ? L.loss.first_sum / L.loss.first_n : NAN;
    res->last_loss = L.loss.last_n ? L.loss.last_sum / L.loss.last_n : L.last_loss;
    if (L.coref_aux.last_n) res->coref_aux = L.coref_aux.last_sum / L.coref_aux.last_n;
    if (L.align_aux.last_n) res->align_aux = L.align_aux.last_sum / L.align_aux.last_n;
    rc = 0;
done:
    loop_free(&L);
    return rc;
}
