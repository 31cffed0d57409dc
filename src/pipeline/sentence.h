/* sentence.h — one sentence through the model: the first half of the sentence
 * pipeline (sentence → tokens → translation → the forward pass the pictures
 * show).  `run`, `demo` and everything that shows a sentence prepare it here,
 * so a sentence is read, capped and translated by one set of rules:
 *
 *   sentence_prepare   words (tokenizer.h) → ids + <eos>; unknown words are read
 *                      as <unk> and listed; at most the model's max_len - 1 words
 *   sentence_translate greedy decoding (decode.h), tag first: <2fr> or <2vi>;
 *                      the translation has at most the model's max_len - 1 words
 *                      and never loops (decode_stop_before: a repeat stops it
 *                      with stop_warning);
 *                      every <unk> it writes is replaced by the source word its
 *                      last decoder layer's cross-attention weighs most
 *                      (decode_copy_unk), as the user typed it ("Alice")
 *   sentence_set_target  the decoder reads a given translation instead
 *   sentence_forward   the forward pass of (source, decoder input), B = 1;
 *   sentence_forward_batch  several sentences padded to one length
 *
 * The one cap is the model's own max_len (64 for the shipped model), for the
 * source and the translation alike: the model cannot read more, and a smaller
 * fixed cap would cut translations of sentences it can read.
 *
 * After sentence_translate, sentence_forward or sentence_forward_batch the
 * model's activations are those of that forward pass, ready for model_trace.
 * Ownership: a Sentence owns its arrays; sentence_free releases them (accepts
 * a zeroed or half-prepared one).  src_tok and tgt_tok borrow their strings
 * from the words and the vocabulary.  Errors: -1 and a one-line message. */
#ifndef ATTNVIZ_SENTENCE_H
#define ATTNVIZ_SENTENCE_H
#include <stddef.h>
#include "model/decode.h"
#include "model/model.h"
#include "tokenize/tokenizer.h"

typedef struct {
    const char *text;        /* as given (borrowed)                               */
    Tokens words;            /* its lowercased words                              */
    int S;                   /* words + <eos>                                     */
    int *src;                /* (S) ids                                           */
    const char **src_tok;    /* (S) the words, then "<eos>"                       */
    char **raw;              /* (S - 1) each word as typed (case kept: "Alice")   */
    char **shown;            /* (S - 1) how a copy of the word is written into the
                                translation: as typed for a name or number, "[zorblax]"
                                for an ordinary unknown word; NULL until world_check
                                (then every copy is written as typed)             */
    char **label;            /* (S) how pictures and trace show each source token:
                                as typed ("Alice", "Don't"), a <unk> as "<unk> Alice",
                                then "<eos>"; NULL until sentence_labels           */
    int T;                   /* decoder input length: tag + translation           */
    int *tgt;                /* (cap + 1) decoder input: tag, y1 … yn             */
    const char **tgt_tok;    /* (cap + 1) its tokens                              */
    int cap;                 /* capacity of tgt: the model's max_len              */
    char translation[1024];  /* y1 … yn as text, special tokens left out, each
                                copied <unk> replaced by its source word as typed */
    int n_copies;            /* <unk>s of the translation replaced by a copy      */
    DecodeCopy *copies;      /* (cap) target, source, weight (decode.h)           */
    int copy_layer;          /* the decoder layer whose cross-attention chose them */
    int n_unknown;           /* source words read as <unk>                        */
    char unknown[512];       /* them, quoted and comma-separated: 'zebra', 'okapi' */
    int n_target_unknown;    /* the same for a given target                       */
    char target_unknown[512];
    int given;               /* 1: the translation was given (sentence_set_target) */
    DecodeStop stop;         /* why the greedy search stopped (decode.h)           */
    char stop_warning[512];  /* "the output began to repeat “…”; …", or ""         */
} Sentence;

/* Tokenizes and encodes text for model m with vocabulary v.  0, or -1 with err. */
int sentence_prepare(Sentence *s, const char *text, const Model *m, const Vocab *v, char *err, size_t errlen);

/* Greedy translation into the language of tag (VOCAB_2FR / VOCAB_2VI).  Fills
 * tgt, tgt_tok, T and translation.  0, or -1 with err. */
int sentence_translate(Sentence *s, Model *m, const Vocab *v, int tag, char *err, size_t errlen);

/* The decoder input becomes tag + the words of target (teacher forcing); the
 * translation text becomes target's words.  Runs no forward pass.  0, or -1. */
int sentence_set_target(Sentence *s, const Vocab *v, int tag, const char *target, char *err, size_t errlen);

/* The word of the translation at decoder-input index t (1..T-1): for a copied
 * <unk> the source word as shown (as typed, or "[zorblax]"), else the
 * vocabulary token. */
const char *sentence_target_word(const Sentence *s, int t);
/* 1 if the translation holds a copy of source word k. */
int sentence_copied(const Sentence *s, int k);

/* s->label from the words as typed and the ids the model reads (after
 * world_check, which turns names into <unk>).  0, or -1 (out of memory). */
int sentence_labels(Sentence *s);

/* Forward pass of (src, tgt) alone.  0, or -1 with err. */
int sentence_forward(Sentence *s, Model *m, char *err, size_t errlen);

/* Forward pass of n sentences as one batch, each padded with <pad> to the
 * longest source and decoder input; row b of the activations is s[b].  0, or -1. */
int sentence_forward_batch(Sentence *const *s, int n, Model *m, char *err, size_t errlen);

/* From the last forward pass (batch item b, teacher-forced on s's decoder
 * input), out[t] = log p(y_t | x, y_<t) of every written token y_1 … y_n and
 * the end (<eos>) at t = T-1: log softmax(logits_t)[y_t], T = s->T values. */
void sentence_target_logp(const Model *m, int b, const Sentence *s, float *out);

void sentence_free(Sentence *s);

#endif
