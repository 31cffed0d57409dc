/* words.h — a subword model's pieces put back together into the words a
 * student reads ("b" "all" → "ball"; "g" "a" "ve" → "gave"), and its maps
 * merged to match, for the pronoun report and the lines views of run (--pieces
 * keeps the pieces).
 *
 * Which pieces make one word is decided from the text: a piece continues the
 * word of the piece before it when no space separates them (spans of the text,
 * HfInput start/end); without spans (llama2.c's tokenizer.bin) a piece whose
 * vocabulary text starts with a space or ▁ begins a word.  A piece made only of
 * punctuation is a word of its own, and so is the piece after it; a special
 * token (<s>, [CLS], a pad: a piece of no text) is always a word of its own.
 *
 * The merge rule (words_merge_trace): the weight word Q puts on word K is the
 * sum of the weights over K's pieces, averaged over Q's pieces,
 *     W[Q][K] = (1/|Q|) · Σ_{i∈Q} Σ_{j∈K} w[i][j],
 * so every word row still sums to 1; a word cell may be attended when any of
 * its piece cells may (a causal map's later pieces of a word see its earlier).
 * Only the weights are merged (the steps belong to the pieces).
 *
 * Ownership: a Words owns its arrays and labels; words_free accepts a zeroed
 * one.  The merged Trace is the caller's (trace_free). */
#ifndef ATTNVIZ_WORDS_H
#define ATTNVIZ_WORDS_H
#include <stddef.h>
#include "family/hf_file.h"
#include "trace/trace.h"

/* The rule, as captions and the terminal state it (EN, VI). */
#define WORDS_RULE "a word's weight on another is the sum over the other's pieces, averaged over its own pieces"
#define WORDS_RULE_VI "trọng số một từ đặt vào từ khác = tổng trên các mảnh của từ kia, lấy trung bình trên các mảnh của nó"

typedef struct {
    int n_pieces;     /* pieces grouped                                   */
    int n;            /* words                                            */
    int n_real;       /* words made of real pieces (before the padding)   */
    int *word_of;     /* (n_pieces) the word of each piece                */
    int *first;       /* (n + 1) the first piece of each word; first[n] = n_pieces */
    char **labels;    /* (n) each word's text ("ball"), a special's own   */
} Words;

/* The grouping from a flag per piece: begins[i] = 1 when piece i starts a
 * word (piece 0 always does); labels are the pieces' texts joined.  Pieces
 * from n_real on are padding (each a word).  0, or -1 with err. */
int words_from_begins(Words *w, const char *const *pieces, const unsigned char *begins, int n, int n_real, char *err,
                      size_t errlen);

/* The grouping of a model's input (the rule above): spans when the input has
 * them (a word's label is then its text, as typed), else the tokenizer's
 * word starts (hf_file_token_begins_word).  0, or -1 with err. */
int words_of_input(Words *w, const HfFile *f, const HfInput *in, const char *text, char *err, size_t errlen);

/* 1 when some word has more than one piece (the merge changes something). */
int words_merged(const Words *w);

/* out (trace_init'd by this call): every self-attention map of pieces whose
 * queries and keys are the pieces, merged into words by the rule above;
 * queries and keys are the labels.  0, or -1 with err. */
int words_merge_trace(const Words *w, const Trace *pieces, Trace *out, char *err, size_t errlen);

/* One map of pieces merged into a new map of out (words_merge_trace's step,
 * the heads on OpenMP's threads).  0, or -1 with err. */
int words_merge_map(const Words *w, const TraceMap *m, Trace *out, char *err, size_t errlen);

/* The same for a trace that keeps only some rows of each map (a long text's
 * pronoun rows, TraceMap.row_pos, pipeline/longtext.h): each kept row stays the
 * one piece it is (a word's row is its kept piece's), its keys merged into
 * words by the rule, and its position becomes its word's.  0, or -1 with err. */
int words_merge_rows(const Words *w, const Trace *rows, Trace *out, char *err, size_t errlen);

void words_free(Words *w);

#endif
