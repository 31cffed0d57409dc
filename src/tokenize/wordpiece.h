/* wordpiece.h — BERT's tokenizer: the basic tokenizer, then WordPiece, as in
 * Google's tokenization.py and Hugging Face's BertTokenizer (vocab.txt).
 *
 * Basic tokenizer, in order:
 *   - the special tokens of the vocabulary written in the text ([MASK], [CLS],
 *     [SEP], [UNK], [PAD]) are kept whole;
 *   - clean: U+0000, U+FFFD and control characters (category C*, except tab,
 *     newline, carriage return) are dropped; those three and category Zs
 *     become spaces;
 *   - CJK ideographs get spaces around them;
 *   - NFC, then split on whitespace (Python's str.split());
 *   - uncased (lower = 1): lowercase (Python's str.lower(): İ → i̇, a final Σ
 *     → ς), then accents stripped: NFD and every mark of category Mn dropped
 *     (strip_accents on its own does the second step for a cased model);
 *   - punctuation (ASCII symbols and category P*) splits off as its own token.
 * WordPiece: greedy longest match first, pieces after the first spelled
 * "##piece"; a word with no split, or over 100 characters, is [UNK].
 * Unicode tables (categories, case, NFC/NFD) come from utf8proc.
 *
 * Errors: -1 and one line in err.  wordpiece_free accepts NULL. */
#ifndef ATTNVIZ_WORDPIECE_H
#define ATTNVIZ_WORDPIECE_H
#include <stddef.h>

#define WORDPIECE_MAX_CHARS 100

typedef struct Wordpiece Wordpiece;

/* Reads vocab.txt (one token a line, id = line number).  NULL with err. */
Wordpiece *wordpiece_load(const char *vocab_txt, int lower, int strip_accents, char *err, size_t errlen);

/* Ids of text (valid UTF-8), without [CLS]/[SEP], into *ids (malloc'd).
 * 0, or -1 with err. */
int wordpiece_encode(const Wordpiece *w, const char *text, int **ids, int *n, char *err, size_t errlen);

int wordpiece_vocab_size(const Wordpiece *w);
/* Id of a token, or -1. */
int wordpiece_id(const Wordpiece *w, const char *token);
/* The token of an id ("##ing"), or NULL. */
const char *wordpiece_token(const Wordpiece *w, int id);

void wordpiece_free(Wordpiece *w);

#endif
