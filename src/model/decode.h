/* decode.h — greedy decoding with the encoder–decoder model.
 *
 * The decoder input starts with the target-language tag (<2fr> or <2vi>); at
 * each step the model runs on (source, prefix) and the most probable next token
 * is appended, until <eos> or max_len tokens.  Special tokens other than <eos>
 * (<pad>, <unk>, <bos>, the tags) are never chosen.  `run`, `demo` and `eval`
 * all use this search, so `eval` measures what `run` shows.
 *
 * Target-language mask (constrained decoding): when the model holds a mask for
 * the tag's language (m->lang_mask, set from the checkpoint's
 * train_target_tokens_fr/_vi by model_file_load), every word token outside it
 * gets logit −∞: a French output only holds tokens seen in French training
 * targets.  <eos> and <unk> (under its own rule) are never masked.
 *
 * The search never loops (decode_stop_before, checked before every token it
 * would write; eval's shortcut checks the same rules on the gold path):
 *   DECODE_STOP_EOS        the model wrote <eos>;
 *   DECODE_STOP_SENTENCES  as many sentences have ended as the source has (a
 *                          run of . ! ? … ends one; a source that does not end
 *                          with one counts its last sentence too) and the next
 *                          token would start another (closing quotes and
 *                          brackets may still follow an end): it stops there,
 *                          when the model knows its sentence ends
 *                          (decode_set_sentence_ends);
 *   DECODE_STOP_REPEAT     the next token would make the output end with the
 *                          same n tokens twice in a row (n = 2 to
 *                          DECODE_MAX_REPEAT: "est heureux est heureux"; an
 *                          n-gram holding a sentence's end is left to the
 *                          sentence rule, "it burns . it burns ." is no loop):
 *                          the second copy is not
 *                          written; or one token a third time ("! ! !"): the
 *                          third is not; the caller warns;
 *   DECODE_STOP_LENGTH     max_len tokens written. */
#ifndef ATTNVIZ_DECODE_H
#define ATTNVIZ_DECODE_H
#include <stddef.h>
#include "model/model.h"
#include "tokenize/tokenizer.h"

/* The search's choice from one row of logits z (V): the most probable of the
 * word tokens and <eos> (the first one on ties, <eos> before words). */
int decode_pick(const float *z, int V);
/* The same, with <unk> a candidate too when allow_unk (ties: <eos>, then <unk>,
 * then words).  decode_pick(z, V) == decode_pick_unk(z, V, 0). */
int decode_pick_unk(const float *z, int V, int allow_unk);
/* The same, with allowed (V) NULL or 1 for the word tokens that may be chosen
 * (the others count as −∞).  decode_pick_unk(z, V, u) == decode_pick_masked(z, V, u, NULL). */
int decode_pick_masked(const float *z, int V, int allow_unk, const unsigned char *allowed);
/* The model's mask for decoder tag (VOCAB_2FR / VOCAB_2VI), or NULL (no mask). */
const unsigned char *decode_lang_mask(const Model *m, int tag);
/* Sets (a copy of allowed (V)) or, with allowed NULL, removes the mask of tag's
 * language; model_free frees it.  0, or -1 (unknown tag, out of memory). */
int decode_set_lang_mask(Model *m, int tag, const unsigned char *allowed);
/* 1 if the model holds a mask for either language. */
int decode_has_lang_mask(const Model *m);
/* 1 if src[0..n) holds VOCAB_UNK: the decoder may then write <unk> (a copy). */
int decode_src_has_unk(const int *src, int n);

/* ---- <unk> copy (Luong et al. 2015) ----
 * Every <unk> the decoder wrote is replaced by the source word at the source
 * <unk> position its cross-attention weighs most at the step that wrote it.
 * att: (H, Tq, S) cross-attention weights of one sentence in one decoder layer
 * (attnviz uses the last: the layer nearest the output); tgt (Tq): the decoder
 * input tag, y1 … yn, so y_t (tgt[t], t >= 1) was written by query row t − 1.
 * The weight of source j is the mean over the H heads of row t − 1.  For each
 * tgt[t] == VOCAB_UNK with a source <unk>, out[k] = {t, j, weight}; a target
 * <unk> with no source <unk> is left out.  Returns how many (at most Tq). */
typedef struct {
    int target;      /* index into tgt (the decoder input: 0 is the tag)      */
    int source;      /* index into src of the word copied                     */
    float weight;    /* mean over heads of att[h][target − 1][source]         */
} DecodeCopy;
int decode_copy_unk(const float *att, int H, int Tq, int S, const int *src, const int *tgt, DecodeCopy *out);

/* ---- when the search stops ---- */
typedef enum { DECODE_STOP_EOS, DECODE_STOP_SENTENCES, DECODE_STOP_REPEAT, DECODE_STOP_LENGTH } DecodeStopWhy;
typedef struct {
    DecodeStopWhy why;
    int n;           /* REPEAT: the repeated n-gram's length                 */
    int at;          /* REPEAT: where its first copy starts in the output    */
} DecodeStop;

enum { DECODE_END = 1, DECODE_AFTER_END = 2 };   /* m->sentence_end values */
#define DECODE_MAX_REPEAT 8   /* the longest n-gram whose repeat stops the search */
/* m learns which tokens of v end a sentence (. ! ? … and runs of them as in
 * "?!") and which may follow an end (closing quotes and brackets " » ) ] ').
 * 0, or -1 (out of memory). */
int decode_set_sentence_ends(Model *m, const Vocab *v);
/* Would the search stop before writing `next` after out[0..n), for the source
 * src (src_len ids, ending in <eos>)?  1 with *why filled (the output then
 * keeps out[0..n) for SENTENCES and EOS, out[0..why->at + why->n) for REPEAT),
 * else 0.  LENGTH is the caller's. */
int decode_stop_before(const Model *m, const int *src, int src_len, const int *out, int n, int next, DecodeStop *why);
/* "the output began to repeat “est heureux”; the search stopped there" (REPEAT),
 * from the output's words (out_words, n of them); "" for the other stops. */
void decode_stop_text(const DecodeStop *st, const char *const *out_words, char *buf, size_t len);

/* src (S) ids ending in <eos>; out receives the decoder input tag, y1 … yn
 * (without <eos>; capacity max_len + 1), *T = n + 1.  After the call the model's
 * activations are those of the forward pass on exactly that decoder input.
 * 0, or -1 with err. */
int decode_greedy(Model *m, const int *src, int S, int tag, int max_len, int *out, int *T,
                  DecodeStop *stop, char *err, size_t errlen);

/* Greedy decoding of one sentence: src (src_len ids, ending in <eos>), target tag
 * lang_tag (VOCAB_2FR / VOCAB_2VI).  out receives the target ids without tag and
 * without <eos> (capacity max_len), *out_len their number.  Only word tokens and
 * <eos> can be chosen.  0, or -1 with err. */
int decode_greedy_ids(Model *m, const int *src, int src_len, int lang_tag, int max_len,
                      int *out, int *out_len, char *err, size_t errlen);

/* The same for B sentences at once (src (B, S) padded, src_len (B), tags (B));
 * out (B, max_len), out_len (B); stop (B) receives why each stopped, or NULL. */
int decode_greedy_batch(Model *m, const int *src, const int *src_len, int S, const int *tags,
                        int B, int max_len, int *out, int *out_len, DecodeStop *stop, char *err, size_t errlen);

#endif
