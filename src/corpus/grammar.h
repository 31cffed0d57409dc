/* grammar.h — the corpus grammar: composes an English sentence (1–3 sentences
 * in one input) together with its French and Vietnamese translation, gold word
 * alignments and gold pronoun antecedents, from the lexicon (lexicon.h).
 *
 * Every generated pair has a FRAME: its structural rule choices,
 *   structure (intr tr ditr dest be) × tense (pres past fut)
 *   × mood (pos neg q) × discourse (one clause, X and/but/so/because/when/
 *   while/although Y, fronted "because/when/while/although Y , X", two
 *   sentences, subject relative, object relative),
 * written "STRUCT.TENSE.MOOD.DISC" (e.g. "tr.past.neg.because").  Questions
 * are only made in one-clause and two-sentence frames.  The frame's structure,
 * tense and mood are those of the MAIN clause: the first clause, except in
 * two-sentence frames where it is the second sentence (the one with the
 * pronoun).  Which frames and word combinations are held out is the caller's
 * business (splits.c): grammar_generate makes a pair of the frame asked for.
 *
 * Deterministic: all choices come from the caller's splitmix64 state.
 * Conventions (French agreement, Vietnamese markers, pronouns, commas) are
 * documented in samples/corpus/README.md. */
#ifndef ATTNVIZ_GRAMMAR_H
#define ATTNVIZ_GRAMMAR_H
#include "corpus/lexicon.h"
#include <stddef.h>
#include <stdint.h>

#define GR_MAX_TOK 80
#define GR_MAX_KEYS 3
#define GR_MAX_COREF 6

typedef struct {
    char s[64];
    int key[GR_MAX_KEYS];      /* alignment keys; a target token is aligned to the
                                  first source token that has one of its keys */
    int n_keys;
    int copy;                  /* a name or a number: copied, not in vocab.txt */
} GrTok;

typedef struct {
    int n;
    GrTok t[GR_MAX_TOK];
} GrSide;

typedef struct {
    GrSide side[N_LANG];       /* L_EN, L_FR, L_VI                           */
    int n_coref;
    int coref_key[GR_MAX_COREF][2];   /* pronoun key, antecedent head key    */
    int frame;
    int has_name;              /* a name of names.txt occurs */
} GrPair;

int grammar_n_frames(void);
/* 1 if frame f is a valid rule combination (questions only in one-clause and
 * two-sentence frames). */
int grammar_frame_valid(int f);
void grammar_frame_name(int f, char *out, size_t n);
/* The frame's discourse kind (0..grammar_n_discourse()-1) and its name
 * ("one", "because", "f_when", "two", "rels"...). */
int grammar_frame_discourse(int f);
int grammar_n_discourse(void);
const char *grammar_discourse_name(int d);
/* Index of the frame's structure, tense and mood (for tests and weights). */
void grammar_frame_parts(int f, int *structure, int *tense, int *mood, int *discourse);
int grammar_make_frame(int structure, int tense, int mood, int discourse);
/* Generates one pair of frame f.  0, or -1 when the lexicon cannot fill the
 * frame (after many tries; message in err).  uses: per noun of lx, how often
 * earlier pairs used it (updated here; nouns are picked to even it out), or
 * NULL for plain random picks. */
int grammar_generate(const Lexicon *lx, int f, uint64_t *rng, unsigned *uses, GrPair *out, char *err, size_t errlen);

#endif
