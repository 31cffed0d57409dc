/* train.h — the training loop: trains the model on a TrainSet (data.h) with
 * Adam and the schedule (optim.h), writes checkpoints with their metadata
 * (made by meta.h) and their state file for --resume (state.h), and
 * attention snapshots (snapshot.h).
 *
 * A step: the batch of the step in the epoch's order, a training forward
 * (dropout seeded from (seed, step), pad rows skipped), the loss with label
 * smoothing and the attention supervisions asked for, backward, the global
 * gradient norm clipped inside Adam's update at the schedule's rate.
 *
 * Errors: functions return 0 / -1 with one line in err; nothing exits, nothing
 * prints (progress goes to TrainOptions.on_progress). */
#ifndef ATTNVIZ_TRAIN_H
#define ATTNVIZ_TRAIN_H
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"
#include "train/data.h"
#include "train/optim.h"
#include "train/snapshot.h"

/* Where training stands after a step (TrainOptions.on_progress). */
typedef struct TrainProgress {
    long step, steps;        /* steps done (1-based), of how many                */
    long done_steps;         /* steps done in this run (after --resume)          */
    double loss_ema;         /* moving average of the loss over about 50 steps   */
    double lr;               /* learning rate of the step                        */
    double tokens_per_sec;   /* since this run started                           */
    double elapsed, eta;     /* seconds since the start, estimated seconds left  */
    double coref_aux, align_aux;   /* moving averages, NAN when not supervised  */
} TrainProgress;

typedef struct {
    long steps;              /* total optimizer steps                          */
    int batch;               /* sentences per batch                            */
    double lr, min_lr_frac;  /* peak learning rate; floor as a fraction of it  */
    long warmup;
    double clip;             /* global gradient-norm clip (0: none)            */
    double label_smoothing;  /* the options as given (train_meta_describe records
                                them); the model computes with them as float  */
    double dropout;          /* P, 0 <= P < 1 (0: none): the model drops during each
                                step's forward only, masks seeded from (seed, step) */
    uint64_t seed;           /* data order (the model is initialised by the caller) */
    long checkpoint_every;   /* 0: only at the end                              */
    const char *out_path;    /* checkpoint written there (+ .state)             */
    const char *const *vocab; int n_vocab;   /* saved into the checkpoint        */
    const char *const *extra;                /* its metadata pairs (NULL-terminated,
                                                train_meta_pairs of meta.h), or NULL */
    /* snapshots: at the given steps (sorted, may include 0 and `steps`), the
     * encoder self-attention of each snapshot sentence is recorded (path NULL: none) */
    TrainSnapshots snapshots;
    /* Called after every step with where training stands (NULL: nothing);
     * the caller decides what to show.  train_run itself never prints. */
    void (*on_progress)(const struct TrainProgress *p, void *ctx);
    void *progress_ctx;
    /* Attention supervision (model_backward_sup; each off unless its weight > 0),
     * gradients through the whole network:
     * --supervise-coref: coref_weight · mean over items with a gold antecedent of
     *   −log att[pronoun → antecedent] in encoder.coref_layer.self, head coref_head;
     * --supervise-align: align_weight · mean over aligned target tokens t of the
     *   cross-entropy between decoder.align_layer.cross head align_head's row t
     *   (the row that predicts y_t) and the uniform distribution over the gold
     *   source words of y_t (Garg et al. 2019); unaligned tokens add nothing. */
    double coref_weight; int coref_layer, coref_head;
    double align_weight; int align_layer, align_head;
} TrainOptions;

typedef struct {
    long step_begin, step_end;
    double first_loss, last_loss;   /* mean over the first / last 50 steps      */
    double seconds;
    double tokens_per_sec;          /* (source + target tokens) per second       */
    long tokens;
    double coref_aux, align_aux;    /* mean aux loss of the last 50 steps (NAN: off) */
} TrainResult;

/* Trains m (initialised or loaded; adam moments in *adam, starting at
 * start_step) on s.  Writes checkpoints, state and snapshots as asked.
 * 0, or -1 with err. */
int train_run(Model *m, Adam *adam, long start_step, const TrainSet *s, const TrainOptions *o,
              TrainResult *res, char *err, size_t errlen);

/* Writes the checkpoint o->out_path with the metadata pairs extra (those of
 * o->extra during training; train_meta_pairs, meta.h) and its training state
 * o->out_path.state at `step`: the one place a training writes them.  0, or
 * -1 with err. */
int train_save_checkpoint(Model *m, const Adam *a, long step, const TrainOptions *o,
                          const char *const *extra, char *err, size_t errlen);

#endif
