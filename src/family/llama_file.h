/* llama_file.h — a Llama-family model ready to read sentences: the model
 * (family/llama.h) with its tokenizer, from either of the two ways people get
 * one:
 *   llama_file_load_llama2c  a llama2.c checkpoint (family/llama2c.h) and the
 *                            tokenizer.bin llama2.c exports beside it
 *                            (tokenize/llama2c_tok.h); BOS <s> (id 1) first
 *   llama_file_load_dir      a Hugging Face folder whose config.json names a
 *                            Llama-family architecture (Llama, Mistral, Qwen2,
 *                            Qwen3, Gemma 3): its safetensors and its
 *                            tokenizer.json (tokenize/tokjson.h)
 *   llama_file_load_tokenizer  the same folder's config.json and tokenizer only
 *
 * The BOS a folder's sentences start with: tokenizer_config.json's
 * add_bos_token when it says (true or false), else the one the
 * tokenizer.json's post-processor puts first (TinyLlama's and Llama 3's
 * <s> / <|begin_of_text|>; Qwen2's none); its id the post-processor's, else
 * tokenizer_config.json's bos_token, else config.json's bos_token_id.
 *
 *   llama_file_token_ids     text → ids (with or without the BOS the
 *                            tokenizer puts first)
 *   llama_file_token_text    an id as a picture shows it: the token decoded
 *                            alone without the space that starts a word
 *                            (" She" → "She", as GPT-2's "Ġit" → "it"),
 *                            specials as "<s>"; a byte fallback or part of a
 *                            character as its spelling ("<0xE6>")
 *   llama_file_pad_id        the token a batch is padded with (EOS)
 *
 * Ownership: LlamaFile owns the model and the tokenizer; llama_file_free
 * accepts a zeroed or half-loaded one.  Ids are malloc'd for the caller.
 * Errors: -1 and one line in err naming the file. */
#ifndef ATTNVIZ_LLAMA_FILE_H
#define ATTNVIZ_LLAMA_FILE_H
#include <stddef.h>
#include "family/llama.h"
#include "tokenize/llama2c_tok.h"
#include "tokenize/tokjson.h"

typedef struct {
    LlamaModel m;
    Llama2cTok tok;          /* llama2.c's tokenizer.bin                        */
    TokJson *tj;             /* a folder's tokenizer.json (NULL for llama2.c)   */
    int add_bos;             /* 1: sentences start with bos_id                  */
    int bos_id;              /* the token put before the text, or -1            */
    int eos_id;              /* the end-of-text token (pads a batch), or -1      */
    char tokenizer[4096];    /* the tokenizer's file, for messages and `info`    */
    char tokenizer_kind[64]; /* "llama2.c tokenizer.bin (SentencePiece BPE)", … */
} LlamaFile;

/* model: a llama2.c .bin; tokenizer: its tokenizer.bin, which must hold the
 * model's vocabulary.  0, or -1 with err (f is then freed). */
int llama_file_load_llama2c(LlamaFile *f, const char *model, const char *tokenizer, char *err, size_t errlen);

/* DIR: config.json, the weights and the tokenizer.  0, or -1 with err. */
int llama_file_load_dir(LlamaFile *f, const char *dir, char *err, size_t errlen);
/* DIR: config.json and the tokenizer, no weights (`attnviz tokenize`). */
int llama_file_load_tokenizer(LlamaFile *f, const char *dir, char *err, size_t errlen);

/* text → *ids (*n of them), BOS first when bos and the model's sentences start with one.
 * 0, or -1 with err. */
int llama_file_token_ids(const LlamaFile *f, const char *text, int bos, int **ids, int *n, char *err, size_t errlen);

/* The display text of id (see above) into out. */
void llama_file_token_text(const LlamaFile *f, int id, char *out, size_t n);

/* EOS, else BOS, else 0. */
int llama_file_pad_id(const LlamaFile *f);

void llama_file_free(LlamaFile *f);

#endif
