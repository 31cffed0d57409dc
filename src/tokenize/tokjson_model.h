/* tokjson_model.h — the models of tokenizer.json (part of
 * tokenize/tokjson.h): its vocabulary table, BPE with its merge table,
 * WordPiece, WordLevel; each turns one pre-token into ids.  They are read
 * from tokenizer.json's "model", or from the vocabulary files GPT-2 and BERT
 * shipped before it (vocab.json + merges.txt, vocab.txt).
 * Every *_parse reads one JSON object into a zeroed struct (0, or -1 with a
 * message naming the file and the field); every *_free accepts a zeroed or
 * half-built one.  Functions that run on text return 0, or -1 when memory ran
 * out or a pattern gave up (the caller writes the message). */
#ifndef ATTNVIZ_TOKJSON_MODEL_H
#define ATTNVIZ_TOKJSON_MODEL_H
#include "tokenize/tokjson_text.h"
#include <stddef.h>
#include <stdint.h>

enum { TJ_MODEL_BPE, TJ_MODEL_WORDPIECE, TJ_MODEL_WORDLEVEL };

/* (left id, right id) → merge rank and the merged token's id: one slot of
 * 16 bytes holds all three, so a look-up is one cache miss, not three. */
typedef struct {
    struct TjMerge { uint64_t key; int rank, id; } *slot;   /* (cap) key left << 32 | right, UINT64_MAX empty */
    int cap, n;
} TjMerges;

/* token → id: every token in one block of text, slots of 16 bytes (one
 * cache line holds four), so the 150,000 look-ups of loading stay fast. */
typedef struct {
    char *text;                /* (used) the tokens, each NUL-terminated      */
    size_t used, room;
    struct TjSlot { uint32_t hash, len, off; int id; } *slot;   /* (cap); id -1 empty */
    int cap, n;
} TjVocab;

/* Sets (a, b) → (rank, id); a later merge of the same pair replaces an
 * earlier one.  0, or -1 out of memory. */
int tj_merges_put(TjMerges *m, int a, int b, int rank, int id);
/* BPE's merge loop on the symbols ids[0, *n): the pair of lowest rank
 * first, the leftmost of equal ranks, until no pair has a merge (a priority
 * queue: n log n, the library's Word::merge_all); *n shrinks.  0, or -1 out
 * of memory (ids then unchanged).  The tokenizer.json models and llama2.c's
 * scored pieces (tokenize/llama2c_tok.h) merge with it. */
int tj_merges_apply(const TjMerges *m, int *ids, int *n);
void tj_merges_free(TjMerges *m);

/* Sets token s[0, n) → id (replacing an earlier id).  0, or -1 out of memory. */
int tjvocab_put(TjVocab *v, const char *s, size_t n, int id);
/* The id of s[0, n), or -1. */
int tjvocab_get(const TjVocab *v, const char *s, size_t n);
void tjvocab_free(TjVocab *v);

typedef struct {
    int kind;
    TjVocab vocab;             /* token → id                                  */
    const char **tok;          /* (n_ids) id → token (the map's copy) or NULL */
    int n_ids;                 /* largest id + 1                              */
    int unk;                   /* unk_token's id, -1 when none or not in vocab */
    char *unk_token;           /* NULL when none                              */
    char *prefix, *suffix;     /* continuing_subword_prefix, end_of_word_suffix */
    int fuse_unk, byte_fallback, ignore_merges;
    int max_chars;             /* WordPiece: longer words are unk             */
    TjMerges merges;           /* tokenizer.json's merges (and llama2.c's)      */
    char *merges_txt, *merges_path;   /* merges.txt read and cut into lines, or NULL */
    const char **merges_a, **merges_b;   /* (merges_n) each line's two tokens, in merges_txt */
    int merges_n;
    uint64_t *lines;           /* (lines_cap) merges.txt's lines by their text:
                                  hash << 32 | rank + 1, 0 empty; or NULL    */
    int lines_cap;
    char *merges_err;          /* a line that is not a merge, said at every encode; or NULL */
    int byte_id[256];          /* BPE byte_fallback: id of "<0xAB>", or -1    */
} TjModel;

typedef struct { int id, start, end; } TjTok;   /* bytes of the pre-token */
typedef struct { TjTok *v; int n, cap; } TjToks;

int tj_model_parse(TjModel *m, const cJSON *j, const TjCtx *c);
/* The tokens of one pre-token s[0, n), appended to out.  0, or -1 with err. */
int tj_model_tokenize(const TjModel *m, const char *s, int n, TjToks *out, char *err, size_t errlen);
/* GPT-2's vocab.json ({token: id}, ids 0..n-1 each once) into a zeroed
 * model, which becomes byte-level BPE without an unknown token; then its
 * merges.txt ("A B" a line, rank by rank; "#version" and empty lines
 * skipped).  0, or -1 with err naming the file.
 * tj_model_merges_txt reads the file, cuts it into lines and finds each line
 * again by its two tokens' text (m->lines); it touches no field
 * tj_model_vocab_json does, so the two may run side by side.  A merge is
 * looked up by its two strings, as transformers' GPT2Tokenizer (and OpenAI's
 * encoder.py) rank merges, when a text makes its pair, and the token it
 * joins into then: the (id, id) table's 150,000 vocabulary look-ups were a
 * third of loading GPT-2's files.  So a line whose tokens vocab.json lacks
 * is never met, and a join vocab.json lacks is refused by the encode that
 * merges it (tokenizer.json's merges are checked at load, as the library
 * does).  A line that is not "A B" is said by every encode. */
int tj_model_vocab_json(TjModel *m, const char *path, char *err, size_t errlen);
int tj_model_merges_txt(TjModel *m, const char *path, char *err, size_t errlen);
/* BERT's vocab.txt (a token a line, id = line number; an empty line ends
 * it) into a zeroed model, which becomes WordPiece ("##", [UNK], words of at
 * most 100 characters).  0, or -1 with err naming the file. */
int tj_model_vocab_txt(TjModel *m, const char *path, char *err, size_t errlen);
void tj_model_free(TjModel *m);
int tjtoks_add(TjToks *l, int id, int start, int end);
/* A tokenizer file (vocab.json, tokenizer.json) parsed by cJSON with its tree
 * in one arena of this thread's: freed whole by tj_json_free, never by
 * cJSON_Delete (malloc and free of 50,000 nodes were a third of the parse).
 * *end as cJSON_ParseWithLengthOpts's (may be NULL); NULL when the text is no
 * JSON or memory ran out (*oom 1, may be NULL). */
cJSON *tj_json_parse(const char *text, size_t len, const char **end, int *oom);
void tj_json_free(void);

#endif
