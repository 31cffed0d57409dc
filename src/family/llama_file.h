/* llama_file.h — a Llama-family model ready to read sentences, from either
 * of the two ways people get one:
 *   llama_file_load_llama2c  a llama2.c checkpoint (family/llama2c.h) and the
 *                            tokenizer.bin llama2.c exports beside it
 *                            (tokenize/llama2c_tok.h); BOS <s> (id 1) first
 *   llama_file_load_dir      a Hugging Face folder whose config.json names a
 *                            Llama-family architecture (Llama, Mistral, Qwen2,
 *                            Qwen3, Gemma 3): its safetensors.  Its
 *                            tokenizer.json is read by family/hf_file.h, as
 *                            every folder's is (one tokenizer.json path for
 *                            every family, with transformers' BOS rules)
 *
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
#include "family/llama.h"
#include "tokenize/llama2c_tok.h"

typedef struct {
    LlamaModel m;
    Llama2cTok tok;          /* llama2.c's tokenizer.bin (empty for a folder)   */
    int add_bos;             /* llama2.c: 1, sentences start with bos_id         */
    int bos_id;              /* llama2.c: the token put before the text, or -1   */
    int eos_id;              /* llama2.c: the end-of-text token, or -1           */
    char tokenizer[4096];    /* llama2.c: the tokenizer.bin, for messages and `info` */
} LlamaFile;

/* model: a llama2.c .bin; tokenizer: its tokenizer.bin, which must hold the
 * model's vocabulary.  0, or -1 with err (f is then freed). */
int llama_file_load_llama2c(LlamaFile *f, const char *model, const char *tokenizer, char *err, size_t errlen);

/* DIR: config.json and the weights (no tokenizer).  0, or -1 with err. */
int llama_file_load_dir(LlamaFile *f, const char *dir, char *err, size_t errlen);

/* text → *ids (*n of them), BOS first when bos and the model's sentences start with one.
 * 0, or -1 with err. */
int llama_file_token_ids(const LlamaFile *f, const char *text, int bos, int **ids, int *n, char *err, size_t errlen);

/* The display text of id (see above) into out. */
void llama_file_token_text(const LlamaFile *f, int id, char *out, size_t n);

/* EOS, else BOS, else 0. */
int llama_file_pad_id(const LlamaFile *f);

void llama_file_free(LlamaFile *f);

#endif
