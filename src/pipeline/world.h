/* world.h — is a sentence inside what the model was trained on?  (`run`)
 *
 * A source word is KNOWN when it is a vocabulary word that occurred in a
 * training source (the checkpoint's "train_source_tokens", checkpoint.h; an
 * older checkpoint without it: every vocabulary word).  Every other word is
 * read as <unk>, and is one of:
 *   a NAME or NUMBER  made of digits ("3", "1990") or of signs ("!" for a
 *                     model that never read one), or written by the user
 *                     with a capital letter anywhere, also as the first word
 *                     of a sentence ("Alice saw the dog", "iPhone"), so a
 *                     capitalized unknown word is not warned about: it is
 *                     listed as copied through instead — unless it is one of a
 *                     few words that open English sentences ("Where", "Can",
 *                     "Yesterday", "It's", "Let's": world.c's sentence_opener), which stay
 *                     unknown words;
 *                     copied through: the decoder writes <unk>, which becomes
 *                     the word (decode_copy_unk), so no warning;
 *   an UNKNOWN word   anything else ("giraffe"): named in one warning line
 *                     with up to 3 nearest known source words by edit
 *                     distance (Levenshtein on bytes, at most max(2, len/2));
 *                     the decoder may still write <unk> for it, but the
 *                     translation then shows it marked as unknown,
 *                     "[giraffe]", never as a word of the target language
 *                     (s->shown; a name's copy is shown as typed).
 * A sentence with unknown words, or longer than the longest training source
 * ("train_max_source_len"), lies OUTSIDE what the model was trained on; world
 * writes why in one line for the summary and the pictures.
 *
 * world_check also turns every name's id into <unk> (a vocabulary word never
 * seen in a source would otherwise be read as that untrained word), so call it
 * between sentence_prepare and sentence_translate.  Plain data, no
 * allocation; texts are cut to fit. */
#ifndef ATTNVIZ_WORLD_H
#define ATTNVIZ_WORLD_H
#include "pipeline/sentence.h"

typedef struct {
    int n_names;             /* names and numbers (copied through)                    */
    int name_pos[64];        /* their source positions (the first 64)                 */
    char names[512];         /* them as typed: "Alice, 3"                             */
    int n_unknown;           /* other words the model was not trained on (distinct)   */
    char unknown[1024];      /* "'giraffe' (nearest: 'girl', 'gift'), 'zorp' (no near word)" */
    int unknown_pos[64];     /* each one's first source position (the first 64)       */
    unsigned char unknown_in_vocab[64]; /* 1: a vocabulary word no training source held */
    int n_read_names;        /* known words written with a capital that open no
                                sentence ("Minh"): names the model reads as its word  */
    int read_name_pos[64];   /* their source positions (the first 64)                 */
    int words, max_words;    /* the sentence's words; the longest training source (-1: not recorded) */
    char outside[1024];      /* "" or "outside what the model was trained on: …"      */
} WorldCheck;

/* Checks s (prepared, not yet translated) against vocabulary v, whose ids
 * known[id] (v->size entries) are the known source words, and the longest
 * training source max_words (-1: not recorded).  Rewrites s->src for names. */
void world_check(WorldCheck *w, Sentence *s, const Vocab *v, const unsigned char *known, int max_words);

/* "Alice, 3" → the names of w that the translation does not hold (after the
 * copy), as typed, into out ("" when every name came through). */
void world_missing_names(const WorldCheck *w, const Sentence *s, char *out, size_t n);

/* The names of w the model read as one of its words ("Minh" as "minh") that
 * a target language writes unchanged (fr[id] or vi[id], the decoder's language
 * masks: a name passes through; "English" is written "anglais", "tiếng anh")
 * and the translation does not hold, as typed, into out ("" when none): they
 * would vanish without a word, where an unknown word gets its "left out of the
 * translation" line. */
void world_names_left_out(const WorldCheck *w, const Sentence *s, const unsigned char *fr, const unsigned char *vi,
                          int n_words, char *out, size_t n);

/* Where the model hesitated over its own translation: from the last forward
 * (teacher-forced on s's translation, batch item b), the probability the raw
 * model (no language mask) gave each written token y_1 … y_n and the end,
 *     p(y_t | x, y_<t) = softmax(z_t)[y_t]   (sentence_target_logp),
 * and into out "'fils' 0.06, 'à' 0.03, (end) 0.02" for those below
 * WORLD_UNSURE_P (at most 6, in order); "" when there is none.  Returns how
 * many tokens are below.  A sure translation can still be wrong ("I don't like
 * apples" → "je n' aime pas ."), and an unsure one right: this says where the
 * model hesitated, not whether it erred. */
#define WORLD_UNSURE_P 0.2
int world_unsure(const Model *m, int b, const Sentence *s, char *out, size_t n);

/* The edit distance between a and b (bytes).  For tests. */
int world_edit_distance(const char *a, const char *b);

#endif
