/* llama_file.h — a llama2.c checkpoint ready to read sentences: the model
 * (family/llama2c.h, into the stack of family/stack.h) and the tokenizer.bin
 * llama2.c exports beside it (tokenize/llama2c_tok.h); BOS <s> (id 1) first.
 * A Llama-family Hugging Face folder is read by family/hf_file.h, as every
 * folder is (its tokenizer.json with transformers' BOS rules).
 *
 *   llama_file_load_llama2c  the checkpoint and its tokenizer.bin
 *   llama_file_token_ids     llama2.c: text → ids (with or without the BOS)
 *   llama_file_token_text    llama2.c: an id as a picture shows it, without
 *                            the space that starts a word (" She" → "She", as
 *                            GPT-2's "Ġit" → "it"), specials as "<s>"
 *   llama_file_pad_id        llama2.c: the token a batch is padded with (EOS)
 *
 * Ownership: LlamaFile owns the model and the tokenizer; llama_file_free
 * accepts a zeroed or half-loaded one.  Ids are malloc'd for the caller.
 * Errors: -1 and one line in err naming the file. */
#ifndef ATTNVIZ_LLAMA_FILE_H
#define ATTNVIZ_LLAMA_FILE_H
#include <stddef.h>
#include "family/llama_config.h"
#include "family/stack.h"
#include "tokenize/llama2c_tok.h"

typedef struct {
    StackModel m;            /* the model (in an HfFile, the same one as HfFile.m) */
    Llama2cTok tok;          /* llama2.c's tokenizer.bin                         */
    int add_bos;             /* llama2.c: 1, sentences start with bos_id         */
    int bos_id;              /* llama2.c: the token put before the text, or -1   */
    int eos_id;              /* llama2.c: the end-of-text token, or -1           */
    char tokenizer[4096];    /* llama2.c: the tokenizer.bin, for messages and `info` */
} LlamaFile;

/* model: a llama2.c .bin; tokenizer: its tokenizer.bin, which must hold the
 * model's vocabulary.  0, or -1 with err (f is then freed). */
int llama_file_load_llama2c(LlamaFile *f, const char *model, const char *tokenizer, char *err, size_t errlen);

/* text → *ids (*n of them), BOS first when bos and the model's sentences start with one.
 * 0, or -1 with err. */
int llama_file_token_ids(const LlamaFile *f, const char *text, int bos, int **ids, int *n, char *err, size_t errlen);

/* The display text of id (see above) into out. */
void llama_file_token_text(const LlamaFile *f, int id, char *out, size_t n);

/* EOS, else BOS, else 0. */
int llama_file_pad_id(const LlamaFile *f);

void llama_file_free(LlamaFile *f);

#endif
