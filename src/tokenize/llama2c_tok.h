/* llama2c_tok.h — the tokenizer.bin of llama2.c (tokenizer.py's export of a
 * SentencePiece model, e.g. stories260K's tok512.bin or Llama 2's 32,000
 * pieces), its encoder and decoder exactly as llama2.c's run.c has them.
 *
 * Format (little-endian): int32 max_token_length, then for every token:
 * float32 score, int32 byte length, the bytes (no NUL).  Ids 0, 1, 2 are
 * <unk>, <s> (BOS), </s> (EOS) (fewer than 3 tokens: refused); ids 3..258 the
 * byte fallbacks <0x00>..<0xFF>.
 * Pieces spell SentencePiece's "▁" as a space.  A piece is a C string to the
 * encoder (run.c compares with strcmp): bytes after a NUL in it do not count.
 *
 * Encoding (llama2c_tok_encode):
 *   1. BOS (1) when asked; then, unless the text is empty, the piece " "
 *      (the dummy prefix; its byte fallback 32 + 3 when there is no such piece);
 *   2. each UTF-8 character (a lead byte and at most 3 continuation bytes) as
 *      its piece, or else each of its bytes as id byte + 3;
 *   3. repeatedly, the adjacent pair whose concatenation is a piece with the
 *      highest score (the leftmost of equal scores) is merged into that piece,
 *      until no pair is a piece; BOS takes part like any token.  This is
 *      BPE's merge loop (tj_merges_apply, tokenize/tokjson_model.h) on a
 *      table built at load: every pair of ids whose pieces join into a piece,
 *      ranked by that piece's score among the distinct scores, highest
 *      first (scores at or below run.c's floor, -1e10, never merge);
 *   4. EOS (2) when asked.
 * When a piece is in the file twice, the lower id is the one encoding finds.
 * Decoding (llama2c_tok_decode): the piece, without its leading space right
 * after BOS; pieces "<0xHH>" are the byte HH.
 *
 * Ownership: Llama2cTok owns everything; llama2c_tok_free accepts a zeroed
 * or half-loaded one.  Encoded ids are malloc'd for the caller.
 * Errors: -1 and one line in err naming the file (core/errmsg.h). */
#ifndef ATTNVIZ_LLAMA2C_TOK_H
#define ATTNVIZ_LLAMA2C_TOK_H
#include <stddef.h>
#include "tokenize/strmap.h"
#include "tokenize/tokjson_model.h"

#define LLAMA2C_BOS 1
#define LLAMA2C_EOS 2

typedef struct {
    int n;               /* tokens                                     */
    int max_len;         /* max_token_length as the file says it       */
    char **piece;        /* (n) NUL-terminated pieces, into `text`     */
    int *len;            /* (n) bytes of each piece as stored          */
    float *score;        /* (n)                                        */
    char *text;          /* the pieces' storage                        */
    StrMap map;          /* piece (to its first NUL) → lowest id       */
    TjMerges merges;     /* (id, id) whose pieces join into a piece →  */
                         /* that piece, ranked by its score (step 3)   */
    char bytes[512];     /* "b\0" for each byte b: decoded byte pieces */
} Llama2cTok;

/* Reads path.  n_vocab > 0: the file must hold exactly that many tokens (the
 * model's vocabulary); 0: as many as it holds.  0, or -1 with err. */
int llama2c_tok_load(Llama2cTok *t, const char *path, int n_vocab, char *err, size_t errlen);

/* The same from bytes in memory; path is only for messages. */
int llama2c_tok_parse(Llama2cTok *t, const unsigned char *data, size_t size, int n_vocab, const char *path, char *err,
                      size_t errlen);

/* text (NUL-terminated UTF-8) → *ids (malloc'd, *n of them).  0, or -1 with
 * err (a byte whose fallback id is outside a small vocabulary; out of memory). */
int llama2c_tok_encode(const Llama2cTok *t, const char *text, int bos, int eos, int **ids, int *n, char *err,
                       size_t errlen);

/* The text of token id after token prev (NUL-terminated, valid while t
 * lives), *len bytes.  An id outside the vocabulary gives "". */
const char *llama2c_tok_decode(const Llama2cTok *t, int prev, int id, size_t *len);

void llama2c_tok_free(Llama2cTok *t);

#endif
