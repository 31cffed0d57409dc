/* corpus.h — the generator of attnviz's training corpus (the driver: the
 * templates are templates.h's, what is held out splits.h's, the TSV lines
 * tsv.h's, which also reads the files back).
 *
 * corpus_generate composes English→French and English→Vietnamese pairs from
 * the lexicon of samples/corpus/ (nouns.txt, adjectives.txt, verbs.txt,
 * names.txt; lexicon.h) in two ways: most with the GRAMMAR (grammar.h), the
 * rest by expanding the lesson's templates (words.txt, templates.txt); format
 * and rules in samples/corpus/README.md.  Deterministic from a seed
 * (splitmix64 of core/rng.h).  It writes into the output folder (each file
 * atomically, core/fileio.h):
 *   train.tsv, heldout.tsv, heldout-frames.tsv   one pair a line, 6 TAB-separated columns:
 *       lang    "fr" or "vi"
 *       source  English tokens, space-separated (tokenized, lowercased; 1-3 sentences)
 *       target  target tokens, space-separated
 *       align   gold word alignment "t-s ..." (target index t is the
 *               translation of source index s; unaligned targets omitted), or "-"
 *       coref   "p-a ...": source pronoun p refers to the head noun (or name)
 *               at source index a (a > p: cataphora), or "-"
 *       id      the template id, or "g.FRAME" for grammar pairs
 *   vocab.txt  the 6 special tokens (tokenizer.h order), then every token of
 *              the three files except names (names.txt) and numbers, sorted
 *              bytewise, one per line.  Names and numbers are copied: a target
 *              name or number is aligned to the same token in its source.
 * With real pairs (real_dir, real.h) also:
 *   real-valid.tsv, real-test.tsv  every pair of the held-out English
 *              sentences (all their translations: the references), the same
 *              6 columns with align and coref "-" and id "t.fr" / "t.vi";
 *   train.tsv  after the grammar and template pairs, the real training pairs
 *              (id "t.fr" / "t.vi"; each Vietnamese one real_vi_copies times),
 *              except those with a target word outside the vocabulary that is
 *              no word of their source to copy (counted, real_dropped);
 *   vocab.txt  the grammar's tokens, then the words of the real training pairs
 *              by frequency (at least min_count uses; names and numbers never):
 *              up to vocab_en English words, every Vietnamese word, then French
 *              words until vocab_max tokens.
 * unpunct_permille of the training lines (grammar, templates and real alike,
 * decided by a seeded hash of the line's number) lose their source's final
 * ".", "!" or "?" while the target keeps it: the model learns to end a
 * sentence typed without one.
 * Held out:
 *   - heldout-frames.tsv: grammar pairs of held-out FRAMES (frame_permille of
 *     the rule combinations, seeded); training never has a pair of such a frame;
 *   - heldout.tsv: held-out WORD combinations of frames that are in training:
 *     grammar pairs whose seeded hash of the main clause's content words
 *     (subject, verb or adjective, object) falls in combo_permille, and
 *     template pairs of coreference templates whose (noun, noun, adjective)
 *     combination falls in heldout_permille (unordered over the two nouns).
 *     Training never contains a held-out combination.
 * Lesson sentences (`lesson` lines) are always in train, lesson_copies times
 * each per language.
 *
 * Errors: -1 with a one-line message in err (file:line for data errors); no
 * exit.  CorpusStats is filled for the CLI's summary.
 * Reading a written file back (training, eval, tests): corpus_read_tsv, tsv.h. */
#ifndef ATTNVIZ_CORPUS_H
#define ATTNVIZ_CORPUS_H
#include <stddef.h>
#include <stdint.h>

#define CORPUS_MAX_TEMPLATES 64         /* = TPL_MAX_TEMPLATES (templates.h) */
#define CORPUS_MAX_LEN 48          /* tokens per generated sentence (checked) */
#define CORPUS_MAX_KINDS (CORPUS_MAX_TEMPLATES + 32)   /* templates + grammar discourse kinds */

typedef struct {
    uint64_t seed;            /* default 1                                        */
    int n_train;              /* pairs in train.tsv (default 200000)              */
    int n_heldout;            /* pairs in heldout.tsv (default 2000)              */
    int n_heldout_frames;     /* pairs in heldout-frames.tsv (default 2000)       */
    int heldout_permille;     /* share of template coref combinations held out (100) */
    int grammar_permille;     /* share of training pairs from the grammar (800)  */
    int french_permille;      /* share of training pairs in French (500): 500
                                 alternates fr, vi; others spread the French
                                 lines evenly (the CLI sets 650 with --real)      */
    int frame_permille;       /* share of grammar frames held out (80)            */
    int combo_permille;       /* share of grammar word combinations held out (50) */
    int lesson_copies;        /* copies of each lesson sentence per language (10) */
    const char *data_dir;     /* lexicon + templates (default: samples/corpus)    */
    const char *out_dir;      /* where the files go (default: build/corpus)       */
    /* real pairs (real.h); all unused when real_dir is NULL */
    const char *real_dir;     /* fra-eng.tsv and vie-eng.tsv, or NULL              */
    int real_max_len;         /* tokens a side; longer pairs left out (30)         */
    int real_test[2];         /* English sentences tested, [0] fr [1] vi (2000, 500) */
    int real_valid[2];        /* and validated (1000, 250)                         */
    int real_vi_copies;       /* times each Vietnamese training pair is written (3) */
    int vocab_max;            /* vocabulary size limit, specials included (20000)  */
    int vocab_en;             /* English words of the real pairs taken (9000)      */
    int min_count;            /* fewest training uses of a real word taken (2)     */
    int unpunct_permille;     /* training sources written without their final
                                 . ! ? (the target keeps it): 0 by default; the
                                 CLI sets 200 with --real                          */
} CorpusOptions;

void corpus_options_default(CorpusOptions *o);

typedef struct {
    int n_templates;                  /* kinds: the templates, then "g.DISCOURSE" */
    char template_id[CORPUS_MAX_KINDS][32];
    int train_per_template[CORPUS_MAX_KINDS];
    int heldout_per_template[CORPUS_MAX_KINDS];
    int heldout_frames_per_template[CORPUS_MAX_KINDS];
    int n_frames, n_frames_heldout;   /* grammar frames (valid), of them held out */
    int n_grammar_train, n_template_train;
    int n_cataphora, n_across, n_with_names;   /* grammar pairs, all files   */
    int n_fr, n_vi;                   /* over train + held-out                   */
    int vocab_size;                   /* including the 6 special tokens          */
    int src_len_hist[CORPUS_MAX_LEN + 1];  /* source lengths, train + held-out  */
    int tgt_len_hist[CORPUS_MAX_LEN + 1];  /* target lengths                    */
    int max_src_len, max_tgt_len;
    int n_nouns, n_adjectives, n_verbs, n_names;
    int n_coref_combinations, n_heldout_combinations;  /* over all coref templates */
    int n_train_lines;                /* lines of train.tsv                       */
    int n_unpunct;                    /* training sources without their final . ! ? */
    /* real pairs, [lang] 0 fr 1 vi */
    int real_read[2];                 /* pairs read                               */
    int real_pairs[5][2];             /* per split (real.h: train, valid, test, aside, too long) */
    int real_sent[5][2];              /* distinct English sentences (train, valid, test) */
    int real_dropped[2];              /* training pairs left out: a target word
                                         outside the vocabulary and not copied     */
    int real_lines[2];                /* training lines written (Vietnamese copies included) */
    int real_names;                   /* names found in the real English          */
    int vocab_en, vocab_fr, vocab_vi; /* words of the real training pairs in the vocabulary */
} CorpusStats;

/* Generates the corpus into o->out_dir (which must exist).  stats may be NULL. */
int corpus_generate(const CorpusOptions *o, CorpusStats *stats, char *err, size_t errlen);

#endif
