/* hf_file.h — a Hugging Face model folder (GPT-2 or BERT, as save_pretrained
 * writes it) ready to read sentences: the model (model/hf_model.h) and its
 * tokenizer (model/bpe.h for GPT-2's vocab.json + merges.txt, model/wordpiece.h
 * for BERT's vocab.txt, cased or not as tokenizer_config.json's do_lower_case
 * says; uncased when it says nothing).
 *
 *   hf_file_load     folder → model + tokenizer (one line naming what is wrong)
 *   hf_file_encode   text → ids and display tokens; BERT gets [CLS] … [SEP]
 *   hf_file_top      the k most likely tokens at a position (softmax of logits)
 *
 * Display tokens are the tokens' text: GPT-2's bytes as UTF-8 without the
 * leading space ("Ġit" → "it"), BERT's pieces as the vocabulary spells them.
 * Ownership: HfFile and HfInput own everything; their _free functions accept
 * zeroed or half-built ones.  Errors: -1 and one line in err. */
#ifndef ATTNVIZ_HF_FILE_H
#define ATTNVIZ_HF_FILE_H
#include <stddef.h>
#include "tokenize/bpe.h"
#include "family/hf_model.h"
#include "tokenize/wordpiece.h"

typedef struct {
    HfModel m;
    Bpe *bpe;             /* GPT-2 */
    Wordpiece *wp;        /* BERT  */
    int lower;            /* BERT: uncased                 */
    char dir[4096];
} HfFile;

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

/* The k most likely tokens at position pos after a forward pass (k <= 32). */
int hf_file_top(HfFile *f, int pos, int k, HfCandidate *out, char *err, size_t errlen);

/* The display text of token id. */
void hf_file_token_text(const HfFile *f, int id, char *out, size_t n);

void hf_input_free(HfInput *in);
void hf_file_free(HfFile *f);

#endif
