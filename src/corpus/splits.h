/* splits.h — what the corpus holds out of training (corpus.h, "Held out"),
 * decided by seeded hashes so that the same seed gives the same split:
 *   - grammar FRAMES: frame_permille of the valid rule combinations
 *     (grammar.h) are held out; their pairs go only to heldout-frames.tsv, and
 *     every single rule value keeps a frame in training;
 *   - grammar WORD COMBINATIONS: the content-word key of a pair's English
 *     (splits_combo_text, e.g. "dog|chase|cat"; tests/test_corpus.c and
 *     tests/test_corpus.py recompute it) falling in combo_permille sends the
 *     pair to heldout.tsv only;
 *   - template COREFERENCE COMBINATIONS: an unordered (noun, noun, adjective)
 *     of a template's heldout line falling in heldout_permille is held out,
 *     except the lesson sentences' combinations, pinned to training.
 *
 * The caller fills the options (seed and the three shares) of a zeroed
 * CorpusSplits, then calls splits_setup_frames and splits_build_forms.
 * Ownership: splits_free releases what those allocated (NULL-safe, accepts a
 * half-built one).  Errors: -1 with one line in err; nothing exits. */
#ifndef ATTNVIZ_CORPUS_SPLITS_H
#define ATTNVIZ_CORPUS_SPLITS_H
#include "corpus/grammar.h"
#include "corpus/lexicon.h"
#include <stddef.h>
#include <stdint.h>

struct LexForm;

typedef struct {
    /* options */
    uint64_t seed;
    int frame_permille;          /* share of grammar frames held out          */
    int combo_permille;          /* share of grammar word combinations        */
    int heldout_permille;        /* share of template coreference combinations */
    /* state */
    unsigned char *frame_held;   /* (grammar_n_frames()) 0 train, 1 held out, 2 invalid */
    int n_frames, n_frames_heldout;   /* valid frames, of them held out        */
    uint64_t *pinned;            /* (n_pinned) template combinations kept in train */
    int n_pinned;
    struct LexForm *forms;       /* (n_forms) English word forms, sorted by first token */
    int n_forms;
} CorpusSplits;

/* Marks held-out and invalid frames; an error when a rule value would lose
 * every training frame, or when need_heldout and no frame is held out. */
int  splits_setup_frames(CorpusSplits *sp, int need_heldout, char *err, size_t errlen);
/* Draws a frame: discourse kind by weight, then structure, tense and mood;
 * held 0 a training frame, 1 a held-out frame.  -1 when none is found. */
int  splits_draw_frame(const CorpusSplits *sp, uint64_t *rng, int held);
/* The English word forms of lx, for the content-word key. */
int  splits_build_forms(CorpusSplits *sp, const Lexicon *lx, char *err, size_t errlen);
/* The key: the first noun or name of the English, then the first verb or
 * adjective after it, then the first noun or name after that (lemmas, "-" if
 * none), e.g. "dog|chase|cat". */
void splits_combo_text(const CorpusSplits *sp, const GrSide *src, char *out, size_t n);
/* 1 if the word combination of the English src is held out. */
int  splits_combo_heldout(const CorpusSplits *sp, const GrSide *src);
/* Keeps the template combination (n1, n2, adjective a) in training.  0 or -1. */
int  splits_pin(CorpusSplits *sp, int n1, int n2, int a);
/* 1 if the template combination (nouns n1, n2 in either order, adjective a)
 * is held out. */
int  splits_template_heldout(const CorpusSplits *sp, int n1, int n2, int a);
void splits_free(CorpusSplits *sp);

#endif
