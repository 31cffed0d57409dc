/* eval.h — measuring the model: greedy translation and what its attention does.
 *
 * Metrics on a held-out split (corpus.h's TSV with gold alignments and antecedents):
 *   translation exact match   greedy output == gold target, per target language,
 *                             compared as words after the <unk> copy (decode.h:
 *                             each <unk> the decoder writes becomes the source word
 *                             its last cross-attention layer weighs most);
 *   pronoun accuracy          for every coreference annotation p-a with gold
 *                             alignments: every target token aligned to the source
 *                             pronoun p is reproduced at its position by the greedy
 *                             output (il/elle/ils/elles, the Vietnamese word); also
 *                             for cataphora (a > p) and across sentences (a "." or
 *                             "?" token strictly between a and p);
 *   language purity           share of outputs with no token that occurs only in
 *                             the OTHER language's training targets (the token sets
 *                             of DIR/train.tsv, eval_language_flags); copied names
 *                             and numbers are no vocabulary tokens and never count;
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
#include "core/strbuf.h"
#include "corpus/tsv.h"
#include "model/model.h"
#include "tokenize/tokenizer.h"

#define EVAL_MAX_LAYERS 8
#define EVAL_MAX_HEADS  16

typedef struct { long hit, total; } EvalCount;

typedef struct {
    int n_enc_layers, n_dec_layers, n_heads;
    long n_pairs;
    EvalCount exact[2];                 /* [0] fr, [1] vi                          */
    EvalCount pronoun[2];               /* per language                             */
    EvalCount pronoun_cataphora[2];     /* antecedent after the pronoun             */
    EvalCount pronoun_across[2];        /* "." or "?" between antecedent and pronoun */
    EvalCount pure[2];                  /* outputs free of the other language       */
    int purity_measured;                /* 1 when EvalOptions.lang_tokens was given */
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
    const unsigned char *lang_tokens; /* (vocab size) EVAL_IN_FR | EVAL_IN_VI: the
                           languages whose training targets hold the token; NULL:
                           no purity                                               */
    StrBuf *outputs;        /* NULL, or receives the outputs as a JSON array of
                           strings (words after the copy, space-separated)         */
} EvalOptions;

#define EVAL_IN_FR 1
#define EVAL_IN_VI 2
#define EVAL_ANTECEDENT 4   /* a source token that is some pronoun's gold antecedent */
/* *flags = a malloc'd (v->size) array of EVAL_IN_FR | EVAL_IN_VI over the
 * vocabulary, from the targets of the training pairs cp, and EVAL_ANTECEDENT
 * from its gold antecedents (tokens missing from v, i.e. names and numbers, are
 * left out).  0, or -1 with err. */
int eval_language_flags(const Vocab *v, const Corpus *cp, unsigned char **flags, char *err, size_t errlen);
/* The same from the TSV at train_path (corpus_read_tsv). */
int eval_language_tokens(const Vocab *v, const char *train_path, unsigned char **flags, char *err, size_t errlen);
/* The tokens of flags (v->size, eval_language_tokens) that hold lang_bit
 * (EVAL_IN_FR, EVAL_IN_VI or EVAL_ANTECEDENT) as the checkpoint's hexadecimal
 * token set (checkpoint.h, train_target_tokens_fr/_vi, train_antecedent_tokens):
 * malloc'd text, or NULL (memory). */
char *eval_language_hex(const unsigned char *flags, int n, int lang_bit);
/* m decodes under the language masks of flags (n entries, eval_language_tokens):
 * <2fr> keeps to the EVAL_IN_FR tokens, <2vi> to the EVAL_IN_VI ones
 * (decode_set_lang_mask).  0, or -1 (out of memory). */
int eval_set_language_masks(Model *m, const unsigned char *flags, int n);
/* One split's figures per language as JSON text ({"split", "pairs", "fr": {"n",
 * "exact_match", "pronoun", "pronoun_cataphora", "pronoun_across" (each
 * {"accuracy", "n"}), "language_purity"}, "vi": …}) appended to b; accuracy
 * of an empty count and an unmeasured purity are null.  0, or -1. */
int eval_split_json(StrBuf *b, const EvalReport *r, const char *split);

/* Evaluates m (with vocabulary v) on the TSV at path.  0, or -1 with err. */
int eval_run(Model *m, const Vocab *v, const char *path, const EvalOptions *o,
             EvalReport *r, char *err, size_t errlen);

/* ---- real sentences (corpus/real.h: DIR/real-test.tsv) ----
 * The lines are grouped by (language, English sentence): each English sentence
 * is translated once (greedy, as `run`: the language mask and the stop rules of
 * decode.h; an <unk> written becomes the source word it copies) and scored
 * against all its lines' targets, the references:
 *   chrF        train/chrf.h, β = 2, corpus level, the best reference of each
 *               sentence (texts as the tokens joined by spaces; chrF ignores
 *               the spaces, so "l' école" scores as "l'école");
 *   exact match the output's tokens equal one reference's. */
typedef struct {
    long sentences[2];      /* English sentences, [0] fr, [1] vi       */
    long references[2];     /* lines (references)                      */
    EvalCount exact[2];     /* per sentence: equal to a reference      */
    double chrf[2];         /* 0..100                                   */
    double seconds;
} EvalReal;

/* Scores m on the real pairs of path (its first `limit` English sentences,
 * 0: all); outputs (NULL or a JSON array, as EvalOptions.outputs) receives
 * each sentence's output in the order of the sentences' first lines.  0, or
 * -1 with err. */
int eval_real_run(Model *m, const Vocab *v, const char *path, int limit, StrBuf *outputs, EvalReal *r, char *err,
                  size_t errlen);
/* {"sentences", "references", "chrf", "exact_match"} per language, as JSON
 * text appended to b: {"fr": {…}, "vi": {…}}; a language without sentences
 * has null figures.  0, or -1. */
int eval_real_json(StrBuf *b, const EvalReal *r);

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
