/* tsv.h — the corpus files' lines: reading a TSV of sentence pairs back
 * (training, eval, tests) and writing one pair as a line (the generator).
 *
 * One pair a line, 6 TAB-separated columns (corpus.h says what the generator
 * puts in them):
 *   lang    "fr" or "vi"
 *   source  tokens separated by single spaces (at least one)
 *   target  tokens separated by single spaces (at least one)
 *   align   "t-s ..." pairs of target index t and source index s, or "-"
 *   coref   "p-a ..." pairs of source indices, or "-"
 *   id      the template id, or "g.FRAME" for grammar pairs
 *
 * corpus_read_tsv is strict: a line may end in "\n" or "\r\n", empty lines are
 * skipped, and anything else off this format — another number of columns, an
 * unknown language, an empty token, an index outside its sentence, invalid
 * UTF-8 — is an error "PATH:LINE: ..." (no comment or header lines).  There is
 * no limit on the number of tokens here; a reader that has one (train/data.h)
 * says so with the pair's line.
 *
 * Ownership: a Corpus owns its pairs and their strings; corpus_free releases
 * them and accepts NULL and an emptied Corpus.  corpus_append_tsv borrows its
 * CorpusLine.  Errors: -1 with a one-line message in err; nothing exits. */
#ifndef ATTNVIZ_CORPUS_TSV_H
#define ATTNVIZ_CORPUS_TSV_H
#include "core/strbuf.h"
#include <stddef.h>

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
    int line;              /* line of the file it was read from (1-based)   */
} CorpusPair;

typedef struct {
    int n;
    CorpusPair *pairs;     /* n pairs in file order */
} Corpus;

/* Reads a TSV written by corpus_generate; checks every column (indices in
 * range, valid UTF-8).  On -1 (message "PATH:LINE: ..."), c is left empty. */
int corpus_read_tsv(Corpus *c, const char *path, char *err, size_t errlen);
void corpus_free(Corpus *c);

/* One pair to write, borrowed from the caller (the columns above). */
typedef struct {
    int lang;                          /* CORPUS_LANG_FR or CORPUS_LANG_VI */
    const char *const *src; int n_src;
    const char *const *tgt; int n_tgt;
    const int *align; int n_align;     /* (n_align, 2), written in this order */
    const int *coref; int n_coref;     /* (n_coref, 2)                       */
    const char *id;
} CorpusLine;

/* Appends l as one TSV line (with its "\n") to out.  0, or -1 (out of memory). */
int corpus_append_tsv(StrBuf *out, const CorpusLine *l);

#endif
