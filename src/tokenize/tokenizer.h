/* tokenizer.h — UTF-8 word-level tokenizer and the vocabulary of attnviz's model.
 *
 * tokenizer_split turns one sentence into lowercased word tokens:
 *   - the input must be valid UTF-8 (no overlong forms, surrogates, truncated or
 *     stray continuation bytes, nothing above U+10FFFF); otherwise -1 and a
 *     message naming the byte offset;
 *   - letters are lowercased: ASCII, Latin-1 (À-Þ), Latin Extended-A (Œ, Ā…),
 *     Ơ Ư (U+01A0, U+01AF), Latin Extended Additional (U+1E00-U+1EF9, every
 *     Vietnamese letter with a tone mark: Ạ Ả Ấ … Ỹ), Đ → đ;
 *   - ’ ‘ ʼ become ' ; “ ” become " ;
 *   - punctuation . , ! ? ; : " ( ) [ ] « » … ¿ ¡ – — and every other ASCII
 *     symbol is a token of its own ("..." stays one token);
 *   - an apostrophe inside a word keeps it whole (English contractions: "didn't",
 *     "wasn't", "it's"), except French elisions: a word that starts with l' qu'
 *     n' d' j' s' c' m' t' jusqu' lorsqu' puisqu' is split after the apostrophe
 *     ("l'animal" → "l'" "animal"; "qu'il" → "qu'" "il"); the elided article
 *     on its own ("l'") stays one token, so tokens joined by spaces re-tokenize
 *     to themselves; any other leading/trailing apostrophe is a token "'";
 *   - hyphens and digits inside a word stay in it ("grand-mère");
 *   - Vietnamese is written with spaces between syllables, so tokens are
 *     syllables with their diacritics ("Tôi đi học" → "tôi" "đi" "học").
 *     Text is expected precomposed (NFC, as typed on common keyboards); a
 *     combining mark (U+0300…) stays inside its word but is not composed.
 * Limits: at most TOKENIZER_MAX_TOKENS tokens (64) and TOKENIZER_MAX_TOKEN_BYTES
 * bytes per token; beyond either, -1 with a message.  An empty or
 * whitespace-only sentence is an error too.
 *
 * Vocab maps tokens to ids with its own hash table.  Ids 0..5 are the special
 * tokens <pad> <unk> <bos> <eos> <2fr> <2vi> (the decoder starts with <2fr> or
 * <2vi>; the encoder input is the English tokens followed by <eos>), then words.
 *
 * Errors: every function that can fail returns -1 and writes a one-line
 * message into err (errlen bytes; err may be NULL); nothing here exits.
 * Ownership: Tokens and Vocab own their strings; tokens_free / vocab_free
 * release them, accept NULL and zeroed structs, and leave the struct zeroed. */
#ifndef ATTNVIZ_TOKENIZER_H
#define ATTNVIZ_TOKENIZER_H
#include <stddef.h>
#include <stdint.h>

#define TOKENIZER_MAX_TOKENS     64
#define TOKENIZER_MAX_TOKEN_BYTES 64

typedef struct {
    int n;         /* number of tokens                            */
    char **tok;    /* n NUL-terminated lowercased UTF-8 strings    */
} Tokens;

/* Splits text (NUL-terminated) into at most TOKENIZER_MAX_TOKENS tokens.
 * out is overwritten; on -1 it is left empty (n 0, tok NULL).  tokens_free releases it. */
int tokenizer_split(Tokens *out, const char *text, char *err, size_t errlen);
/* Same with an explicit limit (1..4096). */
int tokenizer_split_max(Tokens *out, const char *text, int max_tokens,
                        char *err, size_t errlen);
void tokens_free(Tokens *t);

/* Length in bytes (1..4) of the valid UTF-8 sequence at s[i] (n bytes in all),
 * or 0 when the bytes there are not valid UTF-8 (same rules as below). */
int tokenizer_utf8_len(const char *s, size_t n, size_t i);
/* Checks that s[0..n) is valid UTF-8.  0, or -1 with "invalid UTF-8 at byte N: ...". */
int tokenizer_check_utf8(const char *s, size_t n, char *err, size_t errlen);
/* Lowercase of one code point (identity when it has none we know of). */
uint32_t tokenizer_lower(uint32_t cp);

/* ---- vocabulary ---- */
enum {
    VOCAB_PAD = 0, VOCAB_UNK = 1, VOCAB_BOS = 2, VOCAB_EOS = 3,
    VOCAB_2FR = 4, VOCAB_2VI = 5, VOCAB_N_SPECIAL = 6
};
extern const char *const vocab_special[VOCAB_N_SPECIAL]; /* "<pad>" … "<2vi>" */

typedef struct {
    int size;        /* number of ids                              */
    char **words;    /* size strings: words[id]                    */
    int *slots;      /* hash table, cap entries: id, or -1 = empty */
    int cap;         /* power of two, > 2 * size                   */
} Vocab;

/* Builds from n words.  If words[0..5] are the special tokens in order they are
 * taken as they are; otherwise the specials are put first and words follow.
 * A special token elsewhere, an empty word, a word with whitespace or a
 * duplicate is an error. */
int vocab_build(Vocab *v, const char *const *words, int n, char *err, size_t errlen);
/* Reads one token per line (vocab.txt as written by `attnviz corpus`). */
int vocab_load(Vocab *v, const char *path, char *err, size_t errlen);
/* Writes one token per line, atomically (core/fileio.h). */
int vocab_save(const Vocab *v, const char *path, char *err, size_t errlen);
void vocab_free(Vocab *v);

/* Id of word, or -1 when it is not in the vocabulary. */
int vocab_id(const Vocab *v, const char *word);
/* Word of id, or NULL when id is out of range. */
const char *vocab_word(const Vocab *v, int id);

/* Maps n tokens to ids; an unknown token becomes VOCAB_UNK and its position is
 * stored in unknown[] (capacity n, may be NULL).  Returns how many were unknown. */
int vocab_encode(const Vocab *v, const char *const *tokens, int n, int *ids, int *unknown);

#define VOCAB_DECODE_SKIP_SPECIAL 1  /* leave out <pad> <bos> <2fr> <2vi>, stop at <eos> */
/* Writes the words of ids[0..n) separated by single spaces into buf (NUL-terminated).
 * Returns the length written, or -1 (id out of range, or buf too small). */
int vocab_decode(const Vocab *v, const int *ids, int n, int flags, char *buf,
                 size_t buflen, char *err, size_t errlen);

#endif
