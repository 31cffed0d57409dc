/* links.h — which head links a query token to which key: the answer `run`
 * prints and draws for each pronoun ("it → animal: encoder.2.self head 0,
 * weight 0.98"), and the --focus head of the step strip.
 *
 * A link is a head's strongest key for one query row, leaving out the query
 * itself and special <…> tokens (maps_strongest_link, trace/maps.h). */
#ifndef ATTNVIZ_LINKS_H
#define ATTNVIZ_LINKS_H
#include <stddef.h>
#include "net/model_file.h"
#include "trace/trace.h"

typedef struct {
    int map, head;     /* index into the trace's maps, head; map -1: none */
    int key;           /* the key it points at                            */
    float weight;      /* its weight                                      */
} HeadLink;

/* 1 for the English pronouns run looks at (it, he, she, they, him, her, them,
 * its, his), in any case ("She" starting a sentence of a cased model). */
int links_is_pronoun(const char *word);

/* 1 for a target word that translates a pronoun: il, elle, ils, elles (fr);
 * nó, họ, chúng, anh, cô (vi; the first word of "anh ấy", "cô ấy", "chúng nó"). */
int links_is_target_pronoun(const char *word);

/* Over every encoder self-attention head (a decoder-only model's masked
 * self-attention heads when it has none): the one whose strongest link from
 * query q is strongest. */
HeadLink links_strongest(const Trace *t, int q);

/* The link the pictures show for query q: the model's coreference head when
 * its metadata names one (that head is what eval measured), else the
 * strongest (links_strongest). */
HeadLink links_for_query(const Trace *t, int q, const CorefHead *coref);

/* Which head a lines view and the printed summary show for query token q,
 * and what its row says:
 *   --focus given (focus_map >= 0) on a self-attention map that has row q:
 *                  that head (LINKS_BY_FOCUS);
 *   a pronoun, and the model records a coreference head (eval): that head,
 *                  the one eval measured (LINKS_BY_COREF);
 *   otherwise      the head whose strongest link from q is strongest
 *                  (links_strongest, LINKS_BY_STRENGTH; links_prefer_content
 *                  turns it into LINKS_BY_CONTENT).
 * link is that head's strongest link (q itself and <…> tokens left out);
 * weak: its weight is below 0.5.  For a pronoun the view also says what the
 * rule thinks (referents.h: agreement in person, gender and number read from
 * the sentence, never a list of training antecedents):
 *   none_fits      (when coref->referents is known) no word of the sentence
 *                  can be what it refers to ("she reads a book"), wherever the
 *                  head looks; then and only then no_antecedent is 1 and `run`
 *                  says "no antecedent in the sentence";
 *   odd, odd_key   where the head looks most is not a word the rule takes:
 *                  the pronoun itself (LINKS_ODD_SELF), a sign, a special token
 *                  or a function word (LINKS_ODD_NO_WORD), or a word that does
 *                  not agree with it (LINKS_ODD_DISAGREES: "day" for "they");
 *                  the link is still shown, with links_rule_note;
 *   fit_key        the nearest word the rule takes (the earlier on a tie), -1: none. */
typedef enum { LINKS_BY_FOCUS, LINKS_BY_COREF, LINKS_BY_STRENGTH, LINKS_BY_CONTENT } LinksWhy;
typedef enum { LINKS_FITS, LINKS_ODD_SELF, LINKS_ODD_NO_WORD, LINKS_ODD_DISAGREES } LinksOdd;
typedef struct {
    HeadLink link;
    LinksWhy why;
    int taught;            /* training taught this head the antecedent (train --supervise-coref) */
    int weak;              /* link.weight < 0.5                                                  */
    int no_antecedent;     /* none_fits: the sentence offers the pronoun no antecedent            */
    int none_fits;         /* a pronoun that no word of the sentence can refer to (coref->referents,
                              referents.h: "she reads a book"), wherever the head looks          */
    LinksOdd odd;          /* what the rule thinks of the key the head looks at most              */
    int odd_key;           /* that key when odd != LINKS_FITS, else -1                            */
    int fit_key;           /* the nearest key the rule takes for the antecedent, or -1            */
    int top_key;           /* the head's strongest key over all keys of row q                    */
    float top_weight;
} LinksView;

LinksView links_view(const Trace *t, int q, int is_pronoun, const CorefHead *coref, int focus_map, int focus_head);

/* A pronoun's link among the words that can be its antecedent: per head (of
 * the maps links_strongest looks at), the strongest key of row q leaving out
 * q itself, masked keys, special tokens, punctuation and function words.  A causal model's
 * heads often look hardest at the token before or at a full stop, which hides
 * the link a reader asks about ("She" → "Lily").
 *   links_content_strongest  the strongest such link of any head (map -1: none)
 *   links_content_heads      every head whose such link goes to key with at
 *                            least min_weight, strongest first: at most max into
 *                            out; returns how many there are
 *   links_prefer_content     makes a LINKS_BY_STRENGTH view show the strongest
 *                            such link instead (LINKS_BY_CONTENT), when there is one */
#define LINKS_HEADS_MIN 0.1f   /* a head "links" two words when the weight is at least this */
HeadLink links_content_strongest(const Trace *t, int q);
int links_content_heads(const Trace *t, int q, int key, float min_weight, HeadLink *out, int max);
void links_prefer_content(LinksView *v, const Trace *t, int q);

/* Why the view's head was chosen, in English (en) and Vietnamese (vi), the
 * one wording the terminal and the page both give: "the --focus head", "the
 * model's coreference head, TAUGHT with gold antecedents by train
 * --supervise-coref", "the head attnviz eval found linking pronouns to
 * antecedents most often (63% of held-out sentences), not taught", "the head
 * whose link from it is strongest", and for a causal model's content link "the
 * head whose link from it to a word that can be an antecedent is strongest:
 * punctuation and function words left out". */
void links_why(const LinksView *v, const CorefHead *c, char *en, size_t en_len, char *vi, size_t vi_len);

/* What the rule thinks when the head of v looks most at a word it does not
 * take (v->odd), the one wording the terminal, the picture and the page give:
 * en/vi a clause ("by the corpus lexicon's persons, genders and numbers, “day”
 * cannot be what “they” refers to; the word the rule takes for it is
 * “parents”"), brief a title's few words ("rule: “day” cannot be “they”; “parents” can").
 * All three "" when the rule takes that word. */
void links_rule_note(const LinksView *v, const Trace *t, int q, const char *word, char *en, size_t en_len, char *vi,
                     size_t vi_len, char *brief, size_t brief_len);

/* A query token's link, decided once for the terminal, the pictures and the
 * page (none of them decides again). */
typedef struct {
    int q;                 /* the query token's position                             */
    LinksView view;        /* the head its lines view draws, its link and why        */
    HeadLink strongest;    /* the strongest link from q of any head links_strongest
                              looks at                                               */
} LinksFound;

/* What links_find looks for. */
typedef struct {
    const char *query;         /* links of this token; NULL: the pronouns             */
    const CorefHead *coref;    /* the model's coreference head (layer -1: none)       */
    int focus_map, focus_head; /* --focus (map index), or focus_map -1                */
    int prefer_content;        /* 1: among the words that can be antecedents
                                  (links_prefer_content), as causal models need       */
} LinksAsk;

/* Every query token of words[0..n) that has a link, in order: links_view, then
 * links_prefer_content when asked, beside links_strongest.  *out is malloc'd
 * (the caller frees it); returns how many, or -1 out of memory. */
int links_find(const Trace *t, const char *const *words, int n, const LinksAsk *ask, LinksFound **out);

/* The head a step strip shows when --focus names none: the first link's, else
 * map 0 head 0. */
void links_focus(const LinksFound *found, int n, int *map, int *head);

/* --focus L.H (encoder layer L head H) or MAP.H (decoder.1.cross.2) → map
 * index and head.  0, or -1 with err naming what is wrong. */
int links_parse_focus(const char *focus, const Trace *t, int *map, int *head, char *err, size_t errlen);
/* The same check against an encoder–decoder model's config alone (its maps
 * encoder.L.self, decoder.L.masked_self, decoder.L.cross), so a bad --focus is
 * refused before the model runs.  0, or -1 with err. */
int links_check_focus(const char *focus, const ModelConfig *c, char *err, size_t errlen);

#endif
