/* look.h — one call from sentences to everything shown of them: the first
 * half of the sentence pipeline as a single step, which `run`, `forward` and
 * the demo call (the second half, pictures.h, draws what it returns).
 *
 * look_sentences reads n sentences as typed, with the model of a ModelFile:
 *   prepare     words → ids (sentence.h); with LOOK_WORLD each is checked
 *               against what training saw (world.h: names copied through,
 *               unknown words, a sentence outside training)
 *   translate   greedy decoding into spec->tag's language, or the decoder
 *               reads spec->target instead (teacher forcing, one sentence)
 * every sentence is prepared first, then every one translated.  With any
 * want beyond LOOK_WORLD, then for each sentence in order:
 *   forward     the forward pass its pictures show: the sentence alone, or
 *               with spec->batch all n padded to one length (run once, and
 *               again for each sentence when LOOK_IMPORTANCE ran other passes)
 *   trace       model_trace of its batch item (LOOK_STEPS: with the step
 *               matrices: scores, scaled, masked, output)
 *   unsure      LOOK_UNSURE, greedy only: the written words the model gave a
 *               probability below WORLD_UNSURE_P (world_unsure)
 *   finite      LOOK_FINITE: NaN or infinite weights are an error, never drawn
 *   links       LOOK_LINKS: the step strip's head (spec->focus, else the head
 *               of the first query token, else encoder.0.self head 0) and, for
 *               each pronoun (or spec->query token), the head its lines view
 *               draws and that head's link (links_view), beside the strongest
 *               link of any encoder head (links_strongest)
 *   record      LOOK_RECORD: the trace's "ablated" and "language_mask"
 *   aggregates  LOOK_AGGREGATES: every head's norm-weighted matrix and the
 *               encoder's rollout, in the trace and in rollout (importance.h)
 *   importance  LOOK_IMPORTANCE: head importance by knock-out (importance.h),
 *               with LOOK_RECORD also the trace's "importance"
 *   record      LOOK_RECORD: the trace's "unk_copies" (each <unk> the
 *               translation copied, sentence.h), "decode" (why the search
 *               stopped: {"stop", "warning", "repeat"}, decode.h), "source_read"
 *               (the token the model read at each source position, while the
 *               maps' labels show the words as typed: sentence_labels) and
 *               "unknown_words" (ordinary words outside training, and how the
 *               translation shows them: "[zorblax]" or null)
 * The trace's sections come in that order: ablated, language_mask, rollout,
 * importance, unk_copies, decode, source_read, unknown_words.
 *
 * look_ids does the same from the forward pass on for token ids as they are
 * (`attnviz forward`): one forward pass of the whole padded batch, then each
 * item's trace (LOOK_STEPS) and aggregates (LOOK_AGGREGATES); the steps that
 * need a sentence (unsure, links, importance, record) are left out.
 *
 * Each Look says how far it came (reached) and whether its next step failed,
 * so a caller can show what there is before it reports the error; the looks
 * after the failing one are left empty.  Afterwards the model's activations
 * are those of the last forward pass (LOOK_IMPORTANCE runs many).
 * Ownership: a Look owns its sentence, trace, rollout, importance and links;
 * look_free releases them (accepts a zeroed or half-filled Look).  Errors:
 * -1 and a one-line message in err. */
#ifndef ATTNVIZ_LOOK_H
#define ATTNVIZ_LOOK_H
#include <stddef.h>
#include "model/model.h"
#include "pipeline/importance.h"
#include "pipeline/links.h"
#include "net/model_file.h"
#include "pipeline/sentence.h"
#include "pipeline/world.h"
#include "trace/trace.h"

/* What to compute beyond the prepared, translated sentence (bits of LookSpec.want).
 * Every bit but LOOK_WORLD needs the trace, and implies LOOK_TRACE. */
enum {
    LOOK_WORLD = 1 << 0,       /* world_check against the training sources           */
    LOOK_TRACE = 1 << 1,       /* the forward pass and its trace                      */
    LOOK_STEPS = 1 << 2,       /* the trace keeps every head's step matrices          */
    LOOK_UNSURE = 1 << 3,      /* the words the model hesitated over (greedy only)    */
    LOOK_FINITE = 1 << 4,      /* refuse NaN or infinite weights                      */
    LOOK_LINKS = 1 << 5,       /* the strip's head and each query token's link        */
    LOOK_AGGREGATES = 1 << 6,  /* norm-weighted attention and rollout                 */
    LOOK_IMPORTANCE = 1 << 7,  /* head importance by knock-out                        */
    LOOK_RECORD = 1 << 8       /* the trace records what ran (sections above)         */
};

typedef struct {
    unsigned want;            /* LOOK_* bits                                               */
    int tag;                  /* VOCAB_2FR or VOCAB_2VI: the language to translate into    */
    const char *target;       /* the translation given (teacher forcing), or NULL: greedy  */
    int batch;                /* 1: the sentences' forward pass is one padded batch        */
    const char *query;        /* LOOK_LINKS: links of this source token; NULL: the pronouns */
    const char *focus;        /* LOOK_LINKS: the strip's head, "L.H" or "MAP.H"; NULL: chosen
                                 (and the lines views draw their own heads)                  */
    const CorefHead *coref;   /* LOOK_LINKS: the model's coreference head; NULL: none       */
} LookSpec;

/* Token ids instead of sentences (look_ids). */
typedef struct {
    const int *src, *src_len; /* (B, S) source ids, padded, and each item's length; NULL: none */
    int S;
    const int *tgt, *tgt_len; /* (B, T) decoder input, padded, and lengths; NULL: none      */
    int T;
    int B;
    char *const *words;       /* (n_words) the token of each id                             */
    int n_words;
} LookIds;

/* How far a look came: each step done, in order. */
typedef enum {
    LOOK_NONE,                /* nothing yet                                         */
    LOOK_PREPARED,            /* s prepared (and world checked)                      */
    LOOK_TRANSLATED,          /* s translated, or its target set                     */
    LOOK_TRACED,              /* t holds its maps; unsure is set                     */
    LOOK_LINKED,              /* the weights are finite; focus and links are set     */
    LOOK_EXPLAINED,           /* records, aggregates and importance are done         */
    LOOK_DONE                 /* everything asked                                    */
} LookStage;

typedef LinksFound LookLink;   /* a query token's link (links.h) */

typedef struct {
    LookStage reached;        /* the last step done                                     */
    int failed;               /* 1: the step after `reached` failed (the call's error)  */
    Sentence s;               /* prepared and translated (zeroed for look_ids)          */
    WorldCheck world;         /* LOOK_WORLD                                             */
    Trace t;                  /* LOOK_TRACE: every map of its batch item                */
    int n_unsure;             /* LOOK_UNSURE: the written words below WORLD_UNSURE_P    */
    char unsure[512];         /*   "'fils' 0.06, (end) 0.02" ("" none)                   */
    int focus_map, focus_head;/* LOOK_LINKS: the step strip's head (map index, head)    */
    int n_links;              /* LOOK_LINKS: query tokens with a link                   */
    LookLink *links;          /* (n_links) in source order                              */
    float *rollout;           /* LOOK_AGGREGATES: (E, S, S) encoder rollout, or NULL    */
    Importance imp;           /* LOOK_IMPORTANCE                                        */
} Look;

/* Looks at n sentences (texts, borrowed until look_free) with mf's model and
 * vocabulary into out[0..n).  0, or -1 with err. */
int look_sentences(Look *out, ModelFile *mf, const char *const *texts, int n, const LookSpec *spec, char *err,
                   size_t errlen);
/* The same for one sentence. */
int look_sentence(Look *out, ModelFile *mf, const char *text, const LookSpec *spec, char *err, size_t errlen);
/* Looks at ids->B items of token ids with model m into out[0..B).  0, or -1 with err. */
int look_ids(Look *out, Model *m, const LookIds *ids, const LookSpec *spec, char *err, size_t errlen);

void look_free(Look *L);

#endif
