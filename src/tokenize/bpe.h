/* bpe.h — GPT-2's tokenizer: byte-level BPE, identical to OpenAI's encoder.py
 * and Hugging Face's GPT2Tokenizer on the same vocab.json and merges.txt.
 *
 *   1. pre-tokenisation: the text is cut by the pattern
 *        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *      run by PCRE2 with UTF and UCP (Unicode letters, numbers, spaces);
 *   2. each piece's UTF-8 bytes become printable characters by the
 *      byte-to-unicode map (bytes 33–126, 161–172, 174–255 stand for
 *      themselves, the other 68 bytes for U+0100 onwards: a space is "Ġ");
 *   3. the pair of adjacent symbols with the lowest rank in merges.txt is
 *      merged, every occurrence left to right, until no pair has a rank;
 *   4. each symbol is looked up in vocab.json.
 * "<|endoftext|>" in the text is not treated specially (it is text).
 *
 * Errors: -1 and one line in err.  bpe_free accepts NULL. */
#ifndef ATTNVIZ_BPE_H
#define ATTNVIZ_BPE_H
#include <stddef.h>

typedef struct Bpe Bpe;

/* Reads vocab.json and merges.txt.  NULL with err on failure. */
Bpe *bpe_load(const char *vocab_json, const char *merges_txt, char *err, size_t errlen);

/* Ids of text (valid UTF-8) into *ids (malloc'd, caller frees), *n of them.
 * 0, or -1 with err. */
int bpe_encode(const Bpe *b, const char *text, int **ids, int *n, char *err, size_t errlen);

int bpe_vocab_size(const Bpe *b);
/* Id of a token spelled as in vocab.json ("<|endoftext|>", "Ġit"), or -1. */
int bpe_id(const Bpe *b, const char *token);

/* The token's text: its bytes, as UTF-8 when they are whole characters, else
 * its byte-level spelling (e.g. "Ġ" pieces of a split emoji).  Writes a
 * NUL-terminated string into out. */
void bpe_token_text(const Bpe *b, int id, char *out, size_t n);

void bpe_free(Bpe *b);

#endif
