/* train.h — training the model: data in id form, batches, Adam, schedule, loop,
 * checkpoints, resume and attention snapshots.
 *
 * Data.  A TrainSet holds sentence pairs as token ids (one Vocab for both sides):
 *   src  = English ids followed by <eos>                 (encoder input, length S_b)
 *   tgt  = target-language ids, WITHOUT <eos> or tag     (length n_b)
 * A batch turns them into the decoder's teacher-forced input and targets:
 *   dec_in  = <2fr>|<2vi>, y_0 … y_{n-1}                 (T_b = n_b + 1)
 *   targets = y_0 … y_{n-1}, <eos>
 * padded with <pad> (id 0) to the longest item of the batch.
 *
 * Batches (train_epoch_batches) are bucketed by length: the examples are sorted by
 * (source length, target length, a seeded random key), cut into runs of B, and the
 * runs are shuffled; the order depends only on (seed, epoch), so step s of a run
 * always sees the same batch — that is what makes --resume exact.
 *
 * Optimizer: Adam (β1 0.9, β2 0.98, ε 1e-9) with bias correction, no weight decay;
 * the global gradient norm is clipped to clip_norm before the update.
 * Schedule (train_lr): linear warm-up from lr/warmup to lr over `warmup` steps,
 * then cosine decay to lr·min_lr_frac at the last step.
 *
 * Training state (for --resume): a safetensors file PATH.state beside the
 * checkpoint PATH, written at the same moments, atomically (core/fileio.h):
 *   __metadata__ { "format": "attnviz-train-state", "version": "1",
 *                  "step": "N", "num_params": "P", "seed": "…", "total_steps": "…" }
 *   "adam.m" F32 (P)   first moments, in the layout of model_param_table
 *   "adam.v" F32 (P)   second moments
 * The parameters themselves come from the checkpoint PATH.
 *
 * Errors: functions return 0 / -1 (or NULL) with one line in err; nothing exits.
 * Ownership: *_free functions accept NULL and zeroed structs. */
#ifndef ATTNVIZ_TRAIN_H
#define ATTNVIZ_TRAIN_H
#include <stddef.h>
#include <stdint.h>
#include "model/model.h"
#include "tokenize/tokenizer.h"

/* ---- data ---- */
typedef struct {
    int lang_tag;       /* VOCAB_2FR or VOCAB_2VI              */
    int src_len;        /* English tokens + <eos>              */
    int tgt_len;        /* target tokens (no tag, no <eos>)    */
    int *src;           /* src_len ids (points into TrainSet.ids) */
    int *tgt;           /* tgt_len ids                          */
    int coref_p, coref_a;  /* first gold pronoun → antecedent (source indices), or -1 */
    int n_align;           /* gold alignment pairs (target index, source index) …   */
    size_t align_off;      /* … at TrainSet.align + 2·align_off                      */
} TrainExample;

typedef struct {
    int n, cap;
    TrainExample *ex;
    int *ids; size_t n_ids, cap_ids;   /* storage of every src/tgt */
    int max_src, max_tgt;              /* longest src_len, tgt_len */
    int *align; size_t n_align, cap_align;   /* (n_align, 2) alignment pairs of every example */
    unsigned char *src_seen;           /* (n_vocab_seen) 1 if the id occurs in a source  */
    int n_vocab_seen;                  /* (train_set_load_tsv; <unk> counts when copied) */
} TrainSet;

void train_set_init(TrainSet *s);
void train_set_free(TrainSet *s);
/* Appends one pair (copies the ids; src must already end with <eos>). 0 or -1. */
int  train_set_add(TrainSet *s, int lang_tag, const int *src, int src_len,
                   const int *tgt, int tgt_len, char *err, size_t errlen);
/* Reads DIR/train.tsv (or another split: "heldout") with the vocabulary v:
 * lang column "fr"/"vi", space-separated source and target tokens, the gold
 * alignment "t-s …" (pairs out of range are dropped) and the first coreference
 * "p-a".  A token missing from v becomes <unk> (id 1) when it is a word of
 * the pair's source (a name or number to copy, docs/corpus); any other unknown
 * token is an error naming file:line and token.  Marks src_seen. */
int  train_set_load_tsv(TrainSet *s, const char *path, const Vocab *v, char *err, size_t errlen);

/* A padded batch (buffers owned by the Batch, reused between calls). */
typedef struct {
    int B, S, T;
    int *src;       /* (B, S) */
    int *src_len;   /* (B)    */
    int *dec_in;    /* (B, T) */
    int *tgt_len;   /* (B)    = T_b = n_b + 1 */
    int *targets;   /* (B, T) */
    int cap_B, cap_S, cap_T;
    long n_tokens;  /* real source + target tokens in the batch */
} Batch;

void batch_free(Batch *b);
/* Fills b with examples idx[0..B).  0 or -1 (out of memory). */
int  batch_make(Batch *b, const TrainSet *s, const int *idx, int B);

/* Supervision targets of the batch b made from examples idx[0..b->B): coref
 * (B, S, S) zero except row coref_p of each item = one-hot on coref_a; align
 * (B, T, S) zero except, for each target token t with gold alignments, row t =
 * uniform over its gold source positions.  Either may be NULL.  *n_coref /
 * *n_align (may be NULL) receive the number of non-zero rows. */
void train_attn_targets(const TrainSet *s, const int *idx, const Batch *b, float *coref, float *align,
                        int *n_coref, int *n_align);

/* Order of one epoch: writes n_batches*batch indices… as runs of B (the last run may
 * be shorter); *starts gets n_batches+1 offsets into *order.  malloc'd, caller frees. */
int  train_epoch_batches(const TrainSet *s, int B, uint64_t seed, long epoch,
                         int **order, int **starts, int *n_batches);

/* ---- optimizer ---- */
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

/* ---- training state file ---- */
int  train_state_save(const char *path, const Adam *a, long step, uint64_t seed, long total_steps,
                      char *err, size_t errlen);
int  train_state_load(const char *path, Adam *a, long *step, char *err, size_t errlen);

/* ---- the loop ---- */
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
    float label_smoothing;
    float dropout;           /* P, 0 <= P < 1 (0: none): the model drops during each
                                step's forward only, masks seeded from (seed, step) */
    uint64_t seed;           /* data order (the model is initialised by the caller) */
    long checkpoint_every;   /* 0: only at the end                              */
    const char *out_path;    /* checkpoint written there (+ .state)             */
    const char *const *vocab; int n_vocab;   /* saved into the checkpoint        */
    const char *const *extra;                /* more metadata pairs (NULL-terminated) */
    /* snapshots: at the given steps (sorted, may include 0 and `steps`), the
     * encoder self-attention of each snapshot sentence is recorded */
    const char *snapshot_path;               /* NULL: no snapshots               */
    int n_snap_steps; const long *snap_steps;
    int n_snap_sent; const char *const *snap_text;   /* the sentences (English)  */
    const int *const *snap_src; const int *snap_len; /* their ids (+ <eos>)      */
    const char *const *const *snap_tokens;           /* their tokens (+ "<eos>") */
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
    float coref_weight; int coref_layer, coref_head;
    float align_weight; int align_layer, align_head;
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

/* Writes the checkpoint o->out_path (with the metadata pairs extra) and its
 * training state o->out_path.state at `step`.  0, or -1 with err. */
int train_save_checkpoint(Model *m, const Adam *a, long step, const TrainOptions *o,
                          const char *const *extra, char *err, size_t errlen);

#endif
