/* attribution.h — which heads wrote this next token?  Direct logit
 * attribution (Elhage et al. 2021; TransformerLens's decompose_resid) of the
 * token a decoder predicts after a text: the logit is split into what each
 * part of the residual stream adds — every head's output through its slice of
 * W_O, every MLP's output, the embedding, and the biases — each projected
 * through the final norm with its scale frozen at the forward pass's value
 * onto the unembedding row of that token (family/stack.h's
 * stack_model_attribution).  The translator (a post-norm encoder–decoder)
 * is split the same way for the word its decoder writes, with two kinds of
 * heads (masked self and cross) and every LayerNorm after a sublayer frozen
 * (model/model.h's model_attribution).  The parts sum to the logit.  It is linear
 * bookkeeping of one forward pass, not a causal claim: a head with a large
 * share may be replaceable, and a knock-out (run --importance) is what tests
 * that.
 *
 * Ownership: an Attribution owns its arrays; attribution_free accepts a
 * zeroed one.  Errors: -1 and one line in err. */
#ifndef ATTNVIZ_ATTRIBUTION_H
#define ATTNVIZ_ATTRIBUTION_H
#include <stddef.h>
#include <stdio.h>
#include "family/hf_file.h"
#include "model/model.h"
#include "pipeline/sentence.h"
#include "render/render.h"

typedef struct {
    int kinds;               /* kinds of decoder heads: 1 (a foreign decoder), or 2
                                (the translator: masked self, then cross)          */
    int L, H;
    int position;            /* the position whose logits predict the token      */
    int token_id;
    char token[64];          /* its display text                                 */
    float logit;             /* the model's logit of token_id there              */
    float *heads;            /* (kinds, L, H) each head's share                  */
    float *mlp;              /* (L) each MLP's share                             */
    float embedding;         /* the token's embedding (and position)             */
    float bias;              /* attention output biases, the norms' and output bias */
    char map_fmt[2][32];     /* per kind, "decoder.%d.masked_self": the maps' names */
    int every_norm;          /* 1: every LayerNorm frozen (post-norm translator);
                                0: the final norm                                */
    char what[160];          /* which token, for captions: "“nó”, the translation of
                                “it”" ("" a foreign model's next token)          */
    char what_vi[160];
    int step;                /* generate: the step that wrote the token; -1: run  */
} Attribution;

/* The attribution of token (its id) predicted at position pos of in.  0, or -1. */
int attribution_compute(Attribution *at, HfFile *f, const HfInput *in, int pos, int token, char *err, size_t errlen);

/* The translator (model/model.h's model_attribution): the word its decoder
 * writes at position t of sentence s (tgt_tok[t + 1], or <eos> after the last),
 * read again alone in one forward pass; t < 0: the word the teacher expects —
 * the translation of the sentence's first pronoun (the word --importance
 * scores), else the first word written.  0, or -1 with err. */
int attribution_compute_model(Attribution *at, Model *m, const Sentence *s, int t, char *err, size_t errlen);


/* Heads by share, largest first: idx (at most k) of (kind·L + l)·H + h.  Returns how many. */
int attribution_top(const Attribution *at, int *idx, int k);

/* "decoder.1.masked_self head 3 +0.812, …" of the top k heads (brief: "L1 h3 +0.81, …",
 * with two kinds "decoder.1.cross h3 +0.81, …"). */
void attribution_top_text(const Attribution *at, int k, int brief, char *buf, size_t len);

/* The terminal's lines (two-space indent). */
void attribution_print(const Attribution *at, FILE *out);

/* The trace's "attribution" member as JSON text (malloc'd), or NULL. */
char *attribution_json(const Attribution *at);

/* The heads grid (layers × heads, diverging colours centred on 0, the value in
 * each cell; with two kinds the masked-self rows above the cross rows, each row
 * named by its map), the top five named and the caption under the title.  0, or -1. */
int attribution_draw(const char *path, const Attribution *at, const char *text, const RenderMeta *meta, char *err,
                     size_t errlen);

/* The caption, EN and VI: what the parts are, that they sum to the logit,
 * and that this is bookkeeping, not a causal claim. */
void attribution_caption(const Attribution *at, char *en, size_t nen, char *vi, size_t nvi);

void attribution_free(Attribution *at);

#endif
