/* meta.h — what a checkpoint's metadata records of its training and its
 * measurements, built here and nowhere else.  checkpoint_save (model/
 * checkpoint.h) stores it in __metadata__ as key → text pairs beside format,
 * version, config and vocab; `run`, `demo` and `info` read it back.
 *
 * A training run (TrainMeta) gathers its pairs as it goes, and
 * train_meta_pairs lists them in the order they are written:
 *   train_command            the command line ("attnviz train ARGS…")
 *   train_options            every option made explicit
 *   train_seed, train_steps  numbers as text
 *   train_data               "N pairs"
 *   train_seconds, train_tokens_per_second, train_final_loss
 *                            once train_meta_result has recorded the run
 *   supervised_heads         JSON text [{"map", "head", "target", "weight"}],
 *                            [] when no head was taught
 *   train_final_aux_loss     {"coreference": L, "alignment": L} (-1: off),
 *                            once train_meta_result has recorded the run
 *   train_max_source_len, train_source_tokens, train_target_tokens_fr,
 *   train_target_tokens_vi   what the sources and targets held (checkpoint.h)
 *   coreference_head, eval_quick   once train_meta_quick_eval has recorded
 *                            the eval after training (eval_metadata_json)
 * train_save_checkpoint (train.h) is the one place that writes a checkpoint
 * with them (TrainOptions.extra during training, every --checkpoint-every
 * steps; once at the end, after the quick eval).
 *
 * `eval --write-metadata` measures a checkpoint later: train_meta_eval_pairs lists
 * what it stores (checkpoint_rewrite_metadata replaces those keys):
 *   coreference_head, eval_heldout    the first split's (eval_metadata_json)
 *   eval_splits              every split's figures (a JSON array)
 *   eval_real_test           the real sentences' figures, when measured
 *   train_target_tokens_fr, train_target_tokens_vi, train_antecedent_tokens
 *                            the token sets of DIR/train.tsv, when read
 *
 * Ownership: a TrainMeta / TrainEvalMeta owns its texts (train_meta_free,
 * train_meta_eval_free accept a zeroed one); the pairs listed point into it.
 * Errors: -1 out of memory; nothing prints, nothing exits. */
#ifndef ATTNVIZ_TRAIN_META_H
#define ATTNVIZ_TRAIN_META_H
#include "model/model.h"
#include "train/data.h"
#include "train/eval.h"
#include "train/train.h"

/* Room for the NULL-terminated key, value list of either kind. */
#define TRAIN_META_MAX_PAIRS 20

typedef struct TrainMeta {
    char *command;                                 /* owned */
    char options[1024], seed[32], steps[32], data[64], supervised[512];
    char max_src[32], *src_hex, *tgt_hex[2];       /* hex owned: fr, vi */
    char seconds[32], tokens_per_sec[32], loss[32], aux[128];   /* "" until train_meta_result */
    char coref[256], eval[1024];                   /* "" until train_meta_quick_eval */
} TrainMeta;

/* The run before it starts: command (copied), the options o trains with, the
 * model's config c, the training set s and its targets' language flags
 * (eval_language_flags, o->n_vocab entries).  0, or -1 (memory). */
int  train_meta_describe(TrainMeta *tm, const char *command, const TrainOptions *o, const ModelConfig *c,
                         const TrainSet *s, const unsigned char *lang_flags);
/* What the run measured (train_run's result). */
void train_meta_result(TrainMeta *tm, const TrainResult *r);
/* The quick eval after training, on the held-out split. */
void train_meta_quick_eval(TrainMeta *tm, const EvalReport *r);
/* The pairs recorded so far into kv (2 · TRAIN_META_MAX_PAIRS + 1 entries),
 * NULL-terminated. */
void train_meta_pairs(const TrainMeta *tm, const char **kv);
void train_meta_free(TrainMeta *tm);

typedef struct {
    char coref[256], summary[1536];
    char *splits, *real;                           /* owned JSON texts; real NULL when not measured */
    char *hex[3];                                  /* owned: fr, vi, antecedent; NULL without train.tsv */
} TrainEvalMeta;

/* eval's measurements: r of the first split (named split), every split's
 * figures as a JSON array (splits, copied), the real sentences' (real, or
 * NULL) and the language flags of the training pairs (n entries, or NULL).
 * 0, or -1 (memory). */
int  train_meta_eval_build(TrainEvalMeta *em, const EvalReport *r, const char *split, const char *splits,
                           const EvalReal *real, const unsigned char *lang_flags, int n);
/* Its pairs into kv (2 · TRAIN_META_MAX_PAIRS + 1 entries), NULL-terminated. */
void train_meta_eval_pairs(const TrainEvalMeta *em, const char **kv);
void train_meta_eval_free(TrainEvalMeta *em);

#endif
