/* hf_file.h — a model of another project ready to read sentences: a Hugging
 * Face folder (as save_pretrained writes it) or a llama2.c checkpoint, with
 * its tokenizer.
 *   GPT-2, BERT   the model of family/hf_model.h; the tokenizer
 *                 tokenize/bpe.h (GPT-2's vocab.json + merges.txt) or
 *                 tokenize/wordpiece.h (BERT's vocab.txt, cased or not as
 *                 tokenizer_config.json's do_lower_case says; uncased when it
 *                 says nothing)
 *   Llama family  a folder whose config.json names Llama, Mistral, Qwen2,
 *                 Qwen3 or Gemma 3, or a llama2.c .bin with its tokenizer.bin
 *                 (family/llama_file.h)
 *
 *   hf_file_route    what --model (and --tokenizer) name: attnviz's own model,
 *                    a folder, or a llama2.c file (one line when they do not fit)
 *   hf_file_open     model (+ tokenizer) → model + tokenizer
 *   hf_file_encode   text → ids and display tokens; BERT gets [CLS] … [SEP],
 *                    the Llama family its BOS
 *   hf_file_forward  the forward pass with every head recorded
 *   hf_file_top      the k most likely tokens at a position (softmax of logits)
 *
 * Display tokens are the tokens' text: GPT-2's bytes as UTF-8 without the
 * leading space ("Ġit" → "it"), BERT's pieces as the vocabulary spells them,
 * the Llama family's as llama_file.h says.
 * Ownership: HfFile and HfInput own everything; their _free functions accept
 * zeroed or half-built ones.  Errors: -1 and one line in err. */
#ifndef ATTNVIZ_HF_FILE_H
#define ATTNVIZ_HF_FILE_H
#include <stddef.h>
#include "tokenize/bpe.h"
#include "family/hf_model.h"
#include "family/llama_file.h"
#include "tokenize/wordpiece.h"

/* Which model of an HfFile is in use (GPT-2 and BERT: m; the others: llama). */
typedef enum { HF_FILE_GPT2 = 1, HF_FILE_BERT = 2, HF_FILE_LLAMA = 3, HF_FILE_LLAMA2C = 4 } HfFileFamily;

/* Where --model and --tokenizer lead. */
typedef enum { HF_ROUTE_OWN = 0, HF_ROUTE_FOLDER = 1, HF_ROUTE_LLAMA2C = 2 } HfRoute;

typedef struct {
    HfFileFamily family;
    HfModel m;            /* GPT-2, BERT                                  */
    LlamaFile llama;      /* the Llama family: model and tokenizer        */
    Bpe *bpe;             /* GPT-2 */
    Wordpiece *wp;        /* BERT  */
    int lower;            /* BERT: uncased                 */
    char dir[4096];       /* the folder, or the llama2.c file             */
} HfFile;

/* The sizes the pipeline and the commands need, whatever the family. */
typedef struct {
    int n_layer, n_head, n_kv_head, head_dim, n_vocab, n_pos;
} HfShape;

typedef struct {
    int n;                /* tokens, padding included      */
    int n_real;           /* tokens before the padding     */
    int *ids;             /* (n)                           */
    char **tokens;        /* (n) display text              */
    int n_masks;          /* BERT: [MASK] tokens in ids    */
} HfInput;

typedef struct {
    int id;
    char text[64];
    float prob;
} HfCandidate;

/* 1 if path is a folder (then it is read as a Hugging Face folder). */
int hf_file_is_dir(const char *path);

/* HF_ROUTE_FOLDER for a folder; HF_ROUTE_LLAMA2C with a tokenizer (the
 * model then must be a file); HF_ROUTE_OWN otherwise (NULL model: the
 * shipped one).  -1 with err when they do not fit: --tokenizer with a folder
 * or without a model, a .bin model without --tokenizer (unless it sits in a
 * Hugging Face folder: attnviz's own loader then says to give the folder). */
int hf_file_route(const char *model, const char *tokenizer, char *err, size_t errlen);

/* A folder (tokenizer NULL) or a llama2.c checkpoint and its tokenizer.bin.
 * 0, or -1 with err. */
int hf_file_open(HfFile *f, const char *model, const char *tokenizer, char *err, size_t errlen);

int hf_file_load(HfFile *f, const char *dir, char *err, size_t errlen);
/* The configuration and the tokenizer only (no weights read). */
int hf_file_load_tokenizer(HfFile *f, const char *dir, char *err, size_t errlen);

/* Ids of the tokenizer alone (no [CLS]/[SEP]), for `attnviz tokenize`. */
int hf_file_token_ids(const HfFile *f, const char *text, int **ids, int *n, char *err, size_t errlen);

/* text → in.  At most the model's positions; more is an error naming the count. */
int hf_file_encode(const HfFile *f, const char *text, HfInput *in, char *err, size_t errlen);

/* Pads in to T tokens with [PAD] (BERT) or <|endoftext|> (GPT-2, which has
 * no pad token; the padding mask hides it anyway).  0, or -1 with err. */
int hf_file_pad(const HfFile *f, HfInput *in, int T, char *err, size_t errlen);

/* 1 for a causal model (GPT-2, the Llama family): it predicts the next token. */
int hf_file_causal(const HfFile *f);

HfShape hf_file_shape(const HfFile *f);

/* "gpt2", "bert", "llama", "mistral", "qwen2", "qwen3", "gemma3", "llama2.c". */
const char *hf_file_family_name(const HfFile *f);

/* The model's description for the trace and `info --json`. */
int hf_file_json(const HfFile *f, char *buf, size_t n);

/* Forward pass of in (its n_real tokens, then padding), every head into tr
 * (may be NULL), the steps of the heads steps names (NULL: none).  0, or -1. */
int hf_file_forward(HfFile *f, const HfInput *in, Trace *tr, const HfSteps *steps, char *err, size_t errlen);

/* The logits (n_vocab) at position pos of the last forward pass.  0, or -1. */
int hf_file_logits(HfFile *f, int pos, float *logits, char *err, size_t errlen);

/* The k most likely tokens at position pos after a forward pass (k <= 32). */
int hf_file_top(HfFile *f, int pos, int k, HfCandidate *out, char *err, size_t errlen);

/* The display text of token id. */
void hf_file_token_text(const HfFile *f, int id, char *out, size_t n);

void hf_input_free(HfInput *in);
void hf_file_free(HfFile *f);

#endif
