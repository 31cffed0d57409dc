/* real.h — sentence pairs written by people, for the corpus: the Tatoeba
 * Project's English–French and English–Vietnamese pairs as manythings.org
 * packages them (fra-eng.zip, vie-eng.zip from https://www.manythings.org/anki/;
 * CC-BY 2.0 FR, attribution "www.manythings.org/anki and tatoeba.org"), read
 * strictly, tokenized, split by English sentence.
 *
 * Files: DIR/fra-eng.tsv and DIR/vie-eng.tsv, UTF-8, one pair a line:
 *     English TAB translation [TAB attribution]
 * Two or three columns (the attribution is not used); a line may end in "\n"
 * or "\r\n"; empty lines are skipped.  Anything else — another number of
 * columns, an empty side, invalid UTF-8, a side the tokenizer refuses (a
 * control character, a word over 64 bytes) — is an error "PATH:LINE: ...".
 * A missing file is an error naming both files and where to download them.
 *
 * Both sides are tokenized by tokenizer.h (lowercased words and punctuation,
 * French elisions split), exactly as `run` reads a sentence.  Pairs with more
 * than max_len tokens on a side are left out of every split (REAL_TOO_LONG).
 *
 * Split by English sentence, so every translation of one English sentence
 * lands in one split and every reference is kept for evaluation: per language,
 * the distinct tokenized English sentences are ordered by a seeded 64-bit hash
 * of their text; the first n_test are test, the next n_valid validation, the
 * rest train.  An English sentence held out (test or validation) in one
 * language is kept out of the other language's training too (REAL_ASIDE), so
 * the encoder never trains on a sentence it is tested on.
 *
 * Names: an English word is a NAME (like names.txt's) when, away from the
 * start of a sentence, it is written with a capital letter at least 90% of at
 * least 5 times, and the pairs that hold it hold it in their translation too at
 * least half the time ("Tom" → "Tom").  Names never enter the vocabulary: the
 * model reads them as <unk> and learns to copy them.
 *
 * Ownership: a RealData owns its pairs, texts and word tables; real_free
 * releases them and accepts a zeroed or half-filled one.  Errors: -1 with one
 * line in err; nothing exits. */
#ifndef ATTNVIZ_CORPUS_REAL_H
#define ATTNVIZ_CORPUS_REAL_H
#include "tokenize/strmap.h"
#include <stddef.h>
#include <stdint.h>

enum { REAL_TRAIN, REAL_VALID, REAL_TEST, REAL_ASIDE, REAL_TOO_LONG, REAL_N_SPLITS };

typedef struct {
    int lang;           /* CORPUS_LANG_FR or CORPUS_LANG_VI (corpus/tsv.h)   */
    int split;          /* REAL_*                                             */
    int n_src, n_tgt;   /* tokens of each side                                */
    char *src, *tgt;    /* the tokens joined by single spaces                 */
    uint64_t key;       /* seeded hash of src: decides the split              */
    int line;           /* line of its file (1-based)                         */
} RealPair;

typedef struct {
    uint64_t seed;
    int max_len;        /* tokens a side; longer pairs are left out           */
    int n_test[2];      /* English sentences in the test split: [0] fr, [1] vi */
    int n_valid[2];     /* and in the validation split                        */
} RealOptions;

typedef struct { const char *word; int count; } RealWord;

typedef struct {
    int n;
    RealPair *pairs;                   /* n, French file first, in file order  */
    int n_read[2];                     /* pairs read per language              */
    int n_pairs[REAL_N_SPLITS][2];     /* pairs per split and language          */
    int n_sent[REAL_N_SPLITS][2];      /* distinct English sentences (train, valid, test) */
    StrMap names;                      /* name → 1                              */
    int n_names;
    StrMap words;                      /* the word tables' storage (real_words) */
} RealData;

/* The two file names, for messages: "fra-eng.tsv and vie-eng.tsv". */
extern const char *const real_file_names[2];

/* Reads DIR's two files, tokenizes, splits and finds the names.  On -1 rd is
 * released. */
int real_read(RealData *rd, const char *dir, const RealOptions *o, char *err, size_t errlen);
/* 1 if w is a name found in the data. */
int real_is_name(const RealData *rd, const char *w);
/* The words of the TRAINING pairs with their counts, most frequent first (ties
 * bytewise): side 0 the English of both files, 1 the French, 2 the Vietnamese;
 * names and numbers (digits) left out.  *out is malloc'd (caller frees); its
 * words live in rd.  0, or -1 (out of memory). */
int real_words(RealData *rd, int side, RealWord **out, int *n, char *err, size_t errlen);
/* Splits a pair's joined text into tok (capacity cap) — the text is copied
 * into buf (capacity at least strlen + 1).  Returns the number of tokens. */
int real_tokens(const char *text, char *buf, const char **tok, int cap);
void real_free(RealData *rd);

#endif
