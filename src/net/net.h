/* net.h — one interface to every model attnviz runs.  Every command opens
 * its model here and asks it what it can do; none of them names a model's
 * kind.  Two implementations sit behind it:
 *   the bundled encoder–decoder   attnviz's own translator ("taught",
 *                                 "untaught", or a checkpoint it wrote:
 *                                 net/model_file.h, model/model.h)
 *   the foreign families          one Transformer stack for a Hugging Face
 *                                 folder (GPT-2, BERT, Llama, Mistral, Qwen2,
 *                                 Qwen3, Gemma 3) or a llama2.c file with its
 *                                 tokenizer.bin (family/hf_file.h)
 * What a model can do is a set of flags (NetCap), never its name:
 *   NET_TRANSLATES   reads a sentence and writes a translation (greedy
 *                    decoding, or a given target), three kinds of attention
 *   NET_FILLS_MASK   fills each [MASK] of a text (BERT with its masked-LM head)
 *   NET_GENERATES    predicts the next token; a KV cache steps it one token at
 *                    a time (GPT-2, the Llama family, llama2.c)
 * Every model: describe (what `info` prints), its shape, encode text into ids
 * with the labels pictures show, a forward pass of token ids into a trace of
 * every map, and knock-outs (a head's output zeroed before W_O).
 *
 * Ownership: Net owns its model; net_free accepts a zeroed or half-opened
 * one.  Errors: -1 and one line in err (what is wrong, how to fix it). */
#ifndef ATTNVIZ_NET_H
#define ATTNVIZ_NET_H
#include <stddef.h>
#include <stdio.h>
#include "family/hf_file.h"
#include "net/model_file.h"
#include "trace/trace.h"

typedef enum {
    NET_TRANSLATES = 1 << 0,
    NET_FILLS_MASK = 1 << 1,
    NET_GENERATES = 1 << 2
} NetCap;

/* How net_open reads the model. */
typedef enum {
    NET_OPEN_MODEL = 0,        /* the whole model                                      */
    NET_OPEN_TOKENIZER = 1     /* a folder's tokenizer only (no weights, no config.json
                                  needed); the other kinds are opened whole           */
} NetOpen;

/* The sizes commands check their options against, whatever the model. */
typedef struct {
    int n_layer;      /* layers of the deepest stack                          */
    int n_head;       /* query heads a layer                                  */
    int n_kv_head;    /* key/value heads a layer (n_head without grouping)    */
    int head_dim;     /* d_k                                                  */
    int n_vocab;
    int n_pos;        /* positions the model reads at most                    */
} NetShape;

typedef struct {
    unsigned caps;           /* NetCap bits                                       */
    NetShape shape;
    int own;                 /* 1: the bundled encoder–decoder (mf); 0: a foreign
                                family (fam).  Read only inside net/.             */
    ModelFile mf;
    HfFile fam;
    unsigned char *knocked;  /* foreign: (n_layer, n_head) 1 = knocked out, or NULL */
    char ablated[1024];      /* the knocked-out heads, "encoder.2.self.0, …" ("" none) */
} Net;

/* Text as the model reads it: ids and the labels pictures show (tokens),
 * byte offsets into the text when the tokenizer gives them (else NULL). */
typedef HfInput NetTokens;

/* Opens what --model (and --tokenizer) name: NULL or a shipped name
 * (taught, untaught) or an attnviz checkpoint → the bundled translator; a
 * folder → its family; FILE.bin with --tokenizer TOK.bin → llama2.c.
 * 0; -2 with err when --model and --tokenizer do not fit together (a usage
 * error); -1 with err when the model cannot be read.  Nothing to free after
 * an error. */
int net_open(Net *n, const char *model, const char *tokenizer, NetOpen how, char *err, size_t errlen);

/* The model's file or folder, as given or found. */
const char *net_path(const Net *n);

/* "attnviz encoder–decoder", "gpt2", "bert", "llama", "qwen3", "gemma3",
 * "llama2.c", … (for messages and the trace; never for decisions). */
const char *net_family(const Net *n);

/* What `info` prints: configuration, parameters, tensors, tokenizer, and for
 * the bundled model its training and held-out measurements (verbose: every
 * tensor and metadata field as stored). */
void net_describe(const Net *n, int verbose, FILE *out);

/* The configuration as one JSON object (`info --json`, the trace's "model"). */
int net_json(const Net *n, char *buf, size_t len);

/* text → tokens: the ids the model is given and their labels.  add_special 1
 * puts the model's special tokens around the text (BERT's [CLS] … [SEP], a
 * BOS, the translator's <eos>), 0 leaves them out.  0, or -1 with err. */
int net_tokenize(const Net *n, const char *text, int add_special, NetTokens *out, char *err, size_t errlen);
void net_tokens_free(NetTokens *t);

/* Knocks out the heads spec names, "MAP.H[,MAP.H…]" (encoder.2.self.0,
 * decoder.1.masked_self.3): their output is replaced by zeros before W_O in
 * every later forward pass and KV-cache step.  NULL clears.  0, or -1 with err
 * naming the item that is wrong and the maps and heads the model has. */
int net_ablate(Net *n, const char *spec, char *err, size_t errlen);

/* The knocked-out heads as the trace's "ablated" member:
 * [{"map": "decoder.1.masked_self", "head": 3, "mode": "zero"}, …] ("[]" none).
 * Returns the length written, like snprintf. */
int net_ablated_json(const Net *n, char *buf, size_t len);

void net_free(Net *n);

#endif
