/* referents.h — can anything in a sentence be what a pronoun refers to?
 * Read from the English words alone, with the corpus lexicon (samples/corpus,
 * corpus/lexicon.h): which nouns are people and of which gender, singular and
 * plural forms, names and their kind, verbs and adjectives.  `run` says "no
 * antecedent in the sentence" when nothing fits, whatever a head points at
 * ("she reads a book": a book is no "she").
 *
 * A word can be the antecedent of
 *   he / him / his       a singular person noun that is male or either
 *                        (the lexicon's gender; `neutral` persons), a male name;
 *   she / her / hers     the same, female;
 *   it / its             a singular noun that is no person, a city;
 *   they / them / their  a plural noun, or a noun that fits he, she or it
 *                        joined by "and" to another ("the cat and the dog …
 *                        they"; in "the teacher gave them a test", nothing);
 * A word the lexicon does not hold is read with the word before it: after a
 * determiner (the, my, all, two…) it is a noun, plural when it ends in -s
 * ("my parents … they", "all day" is no "they"); after a subject pronoun, a
 * form of be, "to", "very" or "not" it is a verb or an adjective ("they
 * worked", "was late"), and so is a word in -ed or -ly; otherwise (a name
 * written with a capital, a noun of the larger vocabulary) it may be
 * anything, so it counts as a possible antecedent.  Never one: the pronoun
 * itself, signs, numbers, special tokens, function words (articles,
 * pronouns, prepositions, conjunctions, auxiliaries), and the lexicon's verbs
 * and adjectives.  Nothing comes from a list of training antecedents.
 *
 * Ownership: referents_load fills a Referents that referents_free releases
 * (accepts a zeroed one).  Errors: -1 with one line in err; nothing exits. */
#ifndef ATTNVIZ_REFERENTS_H
#define ATTNVIZ_REFERENTS_H
#include "corpus/lexicon.h"
#include <stddef.h>

typedef struct Referents {
    Lexicon lx;
    int loaded;
} Referents;

/* Reads the lexicon of dir (nouns, adjectives, verbs, names). */
int referents_load(Referents *r, const char *dir, char *err, size_t errlen);
/* The shipped lexicon (core/datadir.h: corpus/nouns.txt beside the binary or
 * installed); 0, or -1 when there is none or it does not read. */
int referents_load_shipped(Referents *r, char *err, size_t errlen);
void referents_free(Referents *r);

/* 1 for an English closed-class word: never anyone's antecedent. */
int referents_function_word(const char *w);
/* 1 for text made of signs only, as the tokenizer reads it ("!", "“", "..."). */
int referents_is_sign(const char *text);

/* 1 if some token of labels[0..n) other than q can be the antecedent of the
 * pronoun at q.  labels are the source tokens as pictures show them: words as
 * typed ("Book" is "book"), a word read as <unk> as "<unk> Alice", specials
 * such as "<eos>".  A q that is no he/she/it/they pronoun gives 1. */
int referents_possible(const Referents *r, const char *const *labels, int n, int q);
/* 1 if labels[j] can be the antecedent of the pronoun at q by the rules above
 * (agreement in person, gender and number): what the rule thinks of a head's
 * link.  j == q gives 0; a q that is no he/she/it/they pronoun, or no
 * lexicon, gives 1.  *sure (may be NULL): 1 when j is known to be a noun or a
 * name, 0 when it only may be one. */
int referents_can_be(const Referents *r, const char *const *labels, int n, int q, int j, int *sure);

#endif
