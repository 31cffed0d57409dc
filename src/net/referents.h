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
 *   they / them / their  a plural noun, or any two that fit he, she or it
 *                        ("the cat and the dog … they");
 * and, whatever the pronoun, a word the lexicon does not hold (an unknown
 * word, a name written with a capital, a noun of the larger vocabulary): it
 * may be anything, so it counts as a possible antecedent.  Never one: the
 * pronoun itself, signs, numbers, special tokens, function words (articles,
 * pronouns, prepositions, conjunctions, auxiliaries), and the lexicon's verbs
 * and adjectives.
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

#endif
