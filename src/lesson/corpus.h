/* corpus.h — the generator of attnviz's training corpus, and its reader.
 *
 * corpus_generate expands the lexicon and sentence templates of
 * samples/corpus/ (nouns.txt, adjectives.txt, verbs.txt, words.txt,
 * templates.txt; format in samples/corpus/README.md) into English→French and
 * English→Vietnamese pairs, deterministically from a seed (splitmix64 of
 * core/rng.h), and writes into the output folder (each file atomically, core/fileio.h):
 *   train.tsv, heldout.tsv   one pair a line, 6 TAB-separated columns:
 *       lang    "fr" or "vi"
 *       source  English tokens, space-separated (tokenized, lowercased)
 *       target  target tokens, space-separated
 *       align   gold word alignment "t-s ..." (target index t is the
 *               translation of source index s; unaligned targets omitted), or "-"
 *       coref   "p-a ...": source pronoun p refers to the head noun at source
 *               index a, or "-"
 *       template  the template id
 *   vocab.txt  the 6 special tokens (tokenizer.h order), then every token of
 *              train + held-out, sorted bytewise, one per line.
 * Coreference templates (those with a `heldout` directive) key each pair by
 * its (noun, noun, adjective) combination, taken unordered over the two nouns;
 * a seeded hash puts heldout_permille of the combinations in the held-out
 * split.  Training never contains a held-out combination, and held-out pairs
 * come only from held-out combinations of coreference templates.  Lesson
 * sentences (`lesson` lines) are always in train, lesson_copies times each
 * per language.
 *
 * Errors: -1 with a one-line message in err (file:line for data errors); no
 * exit.  CorpusStats is filled for the CLI's summary. */
#ifndef ATTNVIZ_CORPUS_H
#define ATTNVIZ_CORPUS_H
#include <stddef.h>
#include <stdint.h>

#define CORPUS_MAX_TEMPLATES 64
#define CORPUS_MAX_LEN 32          /* tokens per generated sentence (checked) */

typedef struct {
    uint64_t seed;            /* default 1                                        */
    int n_train;              /* pairs in train.tsv (default 60000)               */
    int n_heldout;            /* pairs in heldout.tsv (default 2000)              */
    int heldout_permille;     /* share of coreference combinations held out (100) */
    int lesson_copies;        /* copies of each lesson sentence per language (10) */
    const char *data_dir;     /* lexicon + templates (default: samples/corpus)    */
    const char *out_dir;      /* where the files go (default: build/corpus)       */
} CorpusOptions;

void corpus_options_default(CorpusOptions *o);

typedef struct {
    int n_templates;
    char template_id[CORPUS_MAX_TEMPLATES][32];
    int train_per_template[CORPUS_MAX_TEMPLATES];
    int heldout_per_template[CORPUS_MAX_TEMPLATES];
    int n_fr, n_vi;                   /* over train + held-out                   */
    int vocab_size;                   /* including the 6 special tokens          */
    int src_len_hist[CORPUS_MAX_LEN + 1];  /* source lengths, train + held-out  */
    int tgt_len_hist[CORPUS_MAX_LEN + 1];  /* target lengths                    */
    int max_src_len, max_tgt_len;
    int n_nouns, n_adjectives, n_verbs;
    int n_coref_combinations, n_heldout_combinations;  /* over all coref templates */
} CorpusStats;

/* Generates the corpus into o->out_dir (which must exist).  stats may be NULL. */
int corpus_generate(const CorpusOptions *o, CorpusStats *stats, char *err, size_t errlen);

/* ---- reading a TSV back (training, eval, tests) ---- */
enum { CORPUS_LANG_FR = 0, CORPUS_LANG_VI = 1 };

typedef struct {
    int lang;              /* CORPUS_LANG_FR or CORPUS_LANG_VI              */
    int n_src, n_tgt;
    char **src;            /* n_src English tokens                          */
    char **tgt;            /* n_tgt target tokens                           */
    int n_align;
    int *align;            /* (n_align, 2): target index, source index      */
    int n_coref;
    int *coref;            /* (n_coref, 2): pronoun index, antecedent index */
    char *template_id;
} CorpusPair;

typedef struct {
    int n;
    CorpusPair *pairs;     /* n pairs in file order */
} Corpus;

/* Reads a TSV written by corpus_generate; checks every column (indices in
 * range, valid UTF-8).  On -1 (message "PATH:LINE: ..."), c is left empty. */
int corpus_read_tsv(Corpus *c, const char *path, char *err, size_t errlen);
void corpus_free(Corpus *c);

#endif
