/* importance.h — does this head matter for this sentence?  Head importance by
 * knock-out (Michel et al. 2019 measure it the same way over a data set):
 * every head of every map is knocked out alone (model_ablate_head, zero mode),
 * the model's own translation is re-scored teacher-forced, and the change in
 * log-probability of every target token is recorded:
 *
 *     Δ_t(head) = log p(y_t | x, y_<t ; head knocked out) − log p(y_t | x, y_<t)
 *
 * for t over y_1 … y_n and <eos>.  Negative: the head helped that token;
 * 0: the token did not need it.  Heads already knocked out (run --ablate) stay
 * out and get no row.  The summary of a head is its Δ at the translation of
 * the sentence's first pronoun (the first target pronoun, il/elle/ils/elles or
 * nó/họ/chúng/anh/cô, links_is_target_pronoun), or the mean over the target
 * tokens when there is none.
 *
 * importance_compute runs 1 + (number of heads) forward passes; afterwards the
 * model's activations are those of the last one (run the forward again before
 * reading them).
 *
 * A foreign model (family/hf_file.h: GPT-2, BERT, the Llama family, llama2.c)
 * has no translation: its targets are what it predicts, the most likely token
 * after the text (a decoder) or in each [MASK] (BERT), each scored at its
 * position with the same text read again:
 *
 *     Δ_t(head) = log p(ŷ_t | text ; head knocked out) − log p(ŷ_t | text)
 *
 * and the summary of a head is the mean over those targets (one for a
 * decoder).  importance_compute_stack leaves the model's activations those of
 * the text read without a new knock-out.
 * Ownership: importance_free releases the arrays. */
#ifndef ATTNVIZ_IMPORTANCE_H
#define ATTNVIZ_IMPORTANCE_H
#include <stddef.h>
#include "family/hf_file.h"
#include "model/model.h"
#include "pipeline/sentence.h"
#include "trace/trace.h"

typedef struct {
    int layers[3];           /* per kind (ModelAttnKind): maps of that kind       */
    int H, Lmax;
    int n_targets;           /* y_1 … y_n, <eos>                                   */
    const char **targets;    /* (n_targets) their tokens (borrowed)                */
    float *base;             /* (n_targets) log p without a new knock-out          */
    float *delta;            /* (3, Lmax, H, n_targets) Δ log p; NAN: not measured */
    int pronoun_t;           /* index in targets of the pronoun's translation, -1  */
    int pronoun_q;           /* its source pronoun's position, -1                  */
    int *positions;          /* a foreign model: (n_targets) where each is predicted;
                                NULL: the translator's targets                     */
} Importance;

int importance_compute(Importance *im, Model *m, const Sentence *s, char *err, size_t errlen);

/* A foreign model: the n targets ids, predicted at positions pos and shown as
 * labels (borrowed, they must outlive im), of the text in; the heads already in
 * knocked ((n_layer, n_head), or NULL) stay out and get no row; the knock-outs
 * are put back as knocked says afterwards.  0, or -1 with err. */
int importance_compute_stack(Importance *im, HfFile *f, const HfInput *in, const int *pos, const int *ids,
                             const char *const *labels, int n, const unsigned char *knocked, char *err, size_t errlen);

/* The sentence's first source pronoun (*q, its word position) and the first
 * target pronoun of its translation (*t: the decoder position that writes it,
 * tgt_tok[t + 1]); -1 when none (no *t without a *q). */
void importance_pronoun(const Sentence *s, int *q, int *t);

/* What the summary measures, for titles: "the predicted next token “said”",
 * "the [MASK] filled with “cat”", "the [MASK] fillings (mean over “a”, “b”)",
 * or the translator's "the translation (mean over its tokens)". */
void importance_what(const Importance *im, char *buf, size_t len);

/* Δ of one head at target token t. */
float importance_delta(const Importance *im, ModelAttnKind kind, int layer, int head, int t);
/* The head's summary: Δ at pronoun_t, or the mean Δ over the targets. */
float importance_summary(const Importance *im, ModelAttnKind kind, int layer, int head);

/* Every measured head, the knock-out that costs most first (lowest summary). */
typedef struct { ModelAttnKind kind; int layer, head; float summary; } ImportanceRank;
/* Fills rows (at most cap) and returns how many. */
int importance_rank(const Importance *im, ImportanceRank *rows, int cap);

/* The trace's "importance" member as JSON text (malloc'd), or NULL out of memory. */
char *importance_json(const Importance *im);

void importance_free(Importance *im);

/* The aggregate views beside the raw weights (model/aggregate.h), from the last
 * forward's batch item b: every head of every map of t gains its norm-weighted
 * matrix, and t gains a "rollout" member (encoder self-attention, one matrix per
 * layer).  *rollout receives the (E, S, S) rollout (malloc'd, the caller frees;
 * NULL for a model without an encoder).  0, or -1 with err. */
int importance_trace_aggregates(Model *m, int b, Trace *t, float **rollout, char *err, size_t errlen);

#endif
