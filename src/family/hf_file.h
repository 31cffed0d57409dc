/* hf_file.h — a model of another project ready to read sentences: a Hugging
 * Face folder (as save_pretrained writes it) or a llama2.c checkpoint, with
 * its tokenizer; and the tokenizer alone for a folder with no weights.
 * Every family is one model, the stack of family/stack.h: GPT-2, BERT, a
 * folder whose config.json names Llama, Mistral, Qwen2, Qwen3 or Gemma 3, or
 * a llama2.c .bin (family/llama2c.h) with its tokenizer.bin.
 *
 * The tokenizer of a folder, one engine for all (tokenize/tokjson.h, f->tj):
 * its tokenizer.json when it has one, for every family (special tokens typed
 * in the text are one token, "<|endoftext|>" is 50256; a Llama-family folder
 * must have one); else GPT-2's vocab.json + merges.txt (tokjson_load_gpt2:
 * "<|endoftext|>" in the text is text) or BERT's vocab.txt
 * (tokjson_load_bert, cased or not as tokenizer_config.json's do_lower_case
 * says, uncased when it says nothing; its strip_accents), read into the same
 * structures; f->tok_from says which file.  A llama2.c checkpoint's: its
 * tokenizer.bin (tokenize/llama2c_tok.h), BOS <s> first.
 * What the model is given around a text, as transformers gives it: with
 * tokenizer.json, its post-processor (BERT's [CLS] … [SEP], TinyLlama's and
 * Llama 3's BOS), and tokenizer_config.json where transformers reads it: a
 * Llama or Gemma tokenizer class (LlamaTokenizerFast, GemmaTokenizerFast)
 * replaces the post-processor's tokens by its bos_token unless add_bos_token
 * is false, and its eos_token when add_eos_token is true; any other class
 * keeps them and adds bos_token first when add_bos_token is true and the
 * post-processor puts nothing before the text (eos_token likewise after it).
 * Without tokenizer.json: BERT's [CLS] … [SEP], nothing for GPT-2.
 * Invalid UTF-8 gives one line whatever the files: "invalid UTF-8 at byte 2
 * (0xC3): it starts a 2-byte character but byte 3 (0x28) does not continue it
 * (save the text as UTF-8)".
 *
 *   hf_file_route           what --model (and --tokenizer) name: attnviz's own
 *                           model, a folder, or a llama2.c file (one line when
 *                           they do not fit)
 *   hf_file_open            model (+ tokenizer) → model + tokenizer
 *   hf_file_load            folder → model + tokenizer (one line naming what is wrong)
 *   hf_file_load_tokenizer  the tokenizer alone (tokenizer.json, or the vocabulary
 *                           files with config.json or without it)
 *   hf_file_tokenize        text → ids, display tokens, byte offsets, with or
 *                           without the special tokens around it; any family
 *   hf_file_encode          the same as the model sees it, checked against the model
 *   hf_file_forward         the forward pass with every head recorded
 *   hf_file_top             the k most likely tokens at a position (softmax of logits)
 *   hf_file_set_ablation    knock heads out: their outputs zeroed before W_O in
 *                           every later forward pass and KV-cache step
 *
 * Display tokens are the tokens' text, as the pictures show them: the
 * tokenizer's decoder on the one token ("Ġit" → "it", "▁Lily" → "Lily",
 * "<0x41>" → "A"), one leading space dropped; the spelling itself when that
 * gives nothing, a control character ("<0x0A>", GPT-2's "Ċ" for a newline) or
 * bytes that are no whole character ("<0xF0>", a byte-level piece of an
 * emoji).  Without tokenizer.json: GPT-2's bytes as UTF-8 (control characters
 * too: a newline shows as one) without the leading space, BERT's pieces as the vocabulary spells them ("##ing"), llama2.c's
 * pieces without the space that starts a word (" She" → "She"), its specials as "<s>".
 * Ownership: HfFile and HfInput own everything; their _free functions accept
 * zeroed or half-built ones.  Errors: -1 and one line in err. */
#ifndef ATTNVIZ_HF_FILE_H
#define ATTNVIZ_HF_FILE_H
#include <stddef.h>
#include "family/hf_config.h"
#include "family/llama_config.h"
#include "family/stack.h"
#include "tokenize/llama2c_tok.h"
#include "tokenize/tokjson.h"

/* What an HfFile was read from (the tokenizer's kind follows from it). */
typedef enum { HF_FILE_GPT2 = 1, HF_FILE_BERT = 2, HF_FILE_LLAMA = 3, HF_FILE_LLAMA2C = 4 } HfFileFamily;

/* Where a folder's tokenizer came from: its tokenizer.json, or the
 * vocabulary files read into the same engine (tokenize/tokjson.h). */
typedef enum { HF_TOK_JSON = 0, HF_TOK_GPT2_FILES = 1, HF_TOK_BERT_FILES = 2 } HfTokFrom;

/* Where --model and --tokenizer lead. */
typedef enum { HF_ROUTE_OWN = 0, HF_ROUTE_FOLDER = 1, HF_ROUTE_LLAMA2C = 2 } HfRoute;

typedef struct {
    HfFileFamily family;  /* 0 for a tokenizer alone that says no family      */
    StackModel m;         /* the model, every family                          */
    Llama2cTok l2c;       /* llama2.c's tokenizer.bin (HF_FILE_LLAMA2C): BOS <s>
                             (LLAMA2C_BOS) before a text, EOS </s> ends one   */
    char l2c_path[4096];  /* that tokenizer.bin, for messages and `info`      */
    int lower;            /* BERT's vocab.txt: uncased     */
    TokJson *tj;          /* a folder's tokenizer (NULL for llama2.c's)  */
    HfTokFrom tok_from;   /* the file tj was read from                   */
    int tj_config;        /* 1: tokenizer_config.json's tj_bos, tj_eos replace the
                             post-processor's tokens (Llama, Gemma classes) */
    int tj_bos, tj_eos;   /* ids tokenizer_config.json puts before and after a
                             text, or -1                                     */
    char dir[4096];       /* the folder, or the llama2.c file             */
} HfFile;

/* Which heads keep their step matrices in the trace (family/stack.h). */
typedef StackSteps HfSteps;

/* The sizes the pipeline and the commands need, whatever the family. */
typedef struct {
    int n_layer, n_head, n_kv_head, head_dim, n_vocab, n_pos;
} HfShape;

typedef struct {
    int n;                /* tokens, padding included      */
    int n_real;           /* tokens before the padding     */
    int *ids;             /* (n)                           */
    char **tokens;        /* (n) display text              */
    int *start, *end;     /* (n) bytes of the text a token came from,
                             text[start, end); empty for a token put around
                             the text or a pad; NULL for llama2.c's tokenizer.bin */
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
/* The tokenizer only (no weights read): tokenizer.json when the folder has
 * one (no config.json needed); else the vocabulary files config.json's family
 * needs, or without config.json the ones present (vocab.json + merges.txt,
 * vocab.txt).  The model part of f stays zeroed but for the family. */
int hf_file_load_tokenizer(HfFile *f, const char *dir, char *err, size_t errlen);

/* Ids of the tokenizer alone (no [CLS]/[SEP], no BOS); *ids malloc'd. */
int hf_file_token_ids(const HfFile *f, const char *text, int **ids, int *n, char *err, size_t errlen);

/* text (UTF-8) → in, with no model needed and no limit on length.
 * add_special: 1 puts the special tokens the model is given around the text
 * (see above), 0 leaves them out.  0, or -1 with err. */
int hf_file_tokenize(const HfFile *f, const char *text, int add_special, HfInput *in, char *err, size_t errlen);

/* text → in as the model sees it.  At most the model's positions (more is an
 * error naming the count), every id within its embeddings. */
int hf_file_encode(const HfFile *f, const char *text, HfInput *in, char *err, size_t errlen);

/* The id of a token spelled as the tokenizer spells it ("[MASK]",
 * "<|endoftext|>"), or -1. */
int hf_file_id(const HfFile *f, const char *token);

/* What reads the text, for `info`: "tokenizer.json: BPE",
 * "byte-level BPE: vocab.json + merges.txt", "WordPiece, uncased: vocab.txt",
 * "SentencePiece BPE: llama2.c tokenizer.bin", … */
const char *hf_file_tokenizer_name(const HfFile *f);

/* Pads in to T tokens with [PAD] (BERT), <|endoftext|> (GPT-2, which has no
 * pad token; the padding mask hides it anyway) or the Llama family's EOS.
 * 0, or -1 with err. */
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

/* Knocks heads out: mask (L, H), 1 = that head's output is zeroed before
 * W_O, in every later hf_file_forward and kv_cache_step; NULL: none.  The
 * maps still show the head's weights.  0, or -1 with err. */
int hf_file_set_ablation(HfFile *f, const unsigned char *mask, char *err, size_t errlen);

/* Direct logit attribution of token at position pos of in's real tokens
 * (family/stack.h's stack_model_attribution; out->heads (L, H) and out->mlp (L)
 * are the caller's).  Leaves the model's activations those of in's real
 * tokens.  0, or -1 with err (BERT, Gemma 3: the parts would not add up). */
int hf_file_attribution(HfFile *f, const HfInput *in, int pos, int token, StackAttribution *out, char *err,
                        size_t errlen);

/* For a tokenizer whose input has no spans (llama2.c's tokenizer.bin): 1 when
 * token id begins a word (its vocabulary text starts with a space or ▁), 0
 * when it continues one, -1 for a control token (<unk>, <s>, </s>), a word of
 * its own.  -1 for every id of a tokenizer with spans (they decide instead). */
int hf_file_token_begins_word(const HfFile *f, int id);

/* The display text of token id. */
void hf_file_token_text(const HfFile *f, int id, char *out, size_t n);

void hf_input_free(HfInput *in);
void hf_file_free(HfFile *f);

#endif
