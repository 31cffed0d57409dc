/* eval.h — measuring the model: greedy translation and what its attention does.
 *
 * Metrics on a held-out split (corpus.h's TSV with gold alignments and antecedents):
 *   translation exact match   greedy output == gold target, per target language;
 *   pronoun accuracy          for pairs with a coreference annotation p-a: every
 *                             target token aligned to the source pronoun p (gold
 *                             alignment) is reproduced at its position by the greedy
 *                             output (il/elle/ils/elles, the Vietnamese word);
 *   coreference heads         for every encoder self-attention head (row = the
 *                             pronoun p) and every cross-attention head (row = the
 *                             target position aligned to p, teacher-forced with the
 *                             gold target): the strongest link — argmax over keys,
 *                             excluding the pronoun itself and special <…> tokens
 *                             (Clark et al. 2019) — is the gold antecedent a;
 *   alignment accuracy        per cross-attention head, teacher-forced: for each
 *                             target token with gold alignment(s), the argmax over the
 *                             source words (special tokens excluded) is a gold source.
 * Teacher forcing: decoder input <2xx> y_0 … y_{n-1}; the cross-attention row t is
 * the one that produces y_t, so rows and gold target indices line up.
 *
 * Errors: 0 / -1 with one line in err.  EvalReport is plain data (no pointers). */
#ifndef ATTNVIZ_EVAL_H
#define ATTNVIZ_EVAL_H
#include <stddef.h>
#include "model/model.h"
#include "model/tokenizer.h"

#define EVAL_MAX_LAYERS 8
#define EVAL_MAX_HEADS  16

typedef struct { long hit, total; } EvalCount;

typedef struct {
    int n_enc_layers, n_dec_layers, n_heads;
    long n_pairs;
    EvalCount exact[2];                 /* [0] fr, [1] vi                          */
    EvalCount pronoun[2];               /* per language                             */
    EvalCount coref_enc[EVAL_MAX_LAYERS][EVAL_MAX_HEADS];
    EvalCount coref_cross[EVAL_MAX_LAYERS][EVAL_MAX_HEADS];
    EvalCount align[EVAL_MAX_LAYERS][EVAL_MAX_HEADS];          /* specials excluded */
    EvalCount align_with_eos[EVAL_MAX_LAYERS][EVAL_MAX_HEADS]; /* argmax over every key */
    double seconds;
} EvalReport;

typedef struct {
    int limit;          /* 0: all pairs; else the first `limit` pairs of the file */
    int batch;          /* sentences decoded together (default 64)                */
    int translation_only; /* 1: exact match and pronoun accuracy only (no
                           teacher-forced pass, the head tables stay empty)       */
} EvalOptions;

/* Evaluates m (with vocabulary v) on the TSV at path.  0, or -1 with err. */
int eval_run(Model *m, const Vocab *v, const char *path, const EvalOptions *o,
             EvalReport *r, char *err, size_t errlen);

/* Best head of a table: fills *layer, *head; returns its rate (0 when empty). */
double eval_best_head(const EvalCount t[EVAL_MAX_LAYERS][EVAL_MAX_HEADS], int layers, int heads,
                      int *layer, int *head);
/* Average rate over all heads of a table. */
double eval_mean_heads(const EvalCount t[EVAL_MAX_LAYERS][EVAL_MAX_HEADS], int layers, int heads);
/* The figures a checkpoint's metadata keeps (`run` and `demo` read them):
 * coref receives {"map":"encoder.L.self","head":H,"accuracy":A} of the best
 * encoder coreference head, summary the split's translation, pronoun,
 * coreference and alignment figures as one JSON object. */
void eval_metadata_json(const EvalReport *r, const char *split, char *coref, size_t coref_len, char *summary,
                        size_t summary_len);

/* ---- knock-outs: eval --ablation ----
 * Every head of every map knocked out alone (model_ablate_head, zero mode), the
 * split evaluated each time (translation_only): exact match and pronoun accuracy
 * per language, beside the baseline without a knock-out. */
typedef struct {
    ModelAttnKind kind;
    int layer, head;                   /* the head knocked out (baseline: unused)  */
    EvalCount exact[2], pronoun[2];    /* [0] fr, [1] vi                           */
} EvalAblationRow;

typedef struct {
    EvalAblationRow baseline;
    EvalAblationRow *rows;             /* n_rows, in map order until sorted        */
    int n_rows;
    long pairs;
    double seconds;
} EvalAblation;

/* Called before each knock-out (done of total, seconds so far) and at the end. */
typedef void (*EvalProgress)(void *ctx, int done, int total, double seconds);

int eval_ablation_run(Model *m, const Vocab *v, const char *path, const EvalOptions *o, EvalAblation *ab,
                      EvalProgress progress, void *ctx, char *err, size_t errlen);
/* Pronoun accuracy over both languages. */
double eval_ablation_pronoun(const EvalAblationRow *r);
/* Most harmful knock-out first (largest fall in pronoun accuracy, then exact match). */
void eval_ablation_sort(EvalAblation *ab);
/* {"split", "pairs", "seconds", "baseline": {…}, "ablation": [{"map", "head", …}, …]}
 * with the first `rows` rows (0: all); malloc'd, NULL out of memory. */
char *eval_ablation_json(const EvalAblation *ab, int rows, const char *split);
void eval_ablation_free(EvalAblation *ab);

static inline double eval_rate(EvalCount c) { return c.total ? (double)c.hit / (double)c.total : 0.0; }

#endif
