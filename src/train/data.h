/* data.h — the training set in id form, its batches, the order of an epoch and
 * the attention-supervision targets of a batch.
 *
 * A TrainSet holds sentence pairs as token ids (one Vocab for both sides):
 *   src  = English ids followed by <eos>                 (encoder input, length S_b)
 *   tgt  = target-language ids, WITHOUT <eos> or tag     (length n_b)
 * The set is built from the pairs of a corpus file read by the strict reader
 * (corpus_read_tsv, corpus/tsv.h), which has already refused any line off the
 * format (columns, languages, empty tokens, indices outside the sentences).
 * What training takes of each pair, every rule explicit:
 *   lang, source, target   the ids; a token missing from the vocabulary becomes
 *                          <unk> (id 1) when it is a word of the pair's source (a
 *                          name or number to copy, docs/corpus); any other
 *                          unknown target token is an error "PATH:LINE: ...";
 *   align                  every pair, in the file's order (TrainExample.n_align);
 *   coref                  the FIRST link only (coref_p, coref_a: the one
 *                          --supervise-coref supervises); the links after it are
 *                          counted in TrainSet.n_coref_unused;
 *   id                     not used.
 * A source or target longer than TRAIN_MAX_TOKENS tokens is an error
 * "PATH:LINE: ...", and so is a file without pairs.  (The corpus generator
 * writes at most CORPUS_MAX_LEN = 48 tokens a side and every column strictly.)
 *
 * A batch turns them into the decoder's teacher-forced input and targets:
 *   dec_in  = <2fr>|<2vi>, y_0 … y_{n-1}                 (T_b = n_b + 1)
 *   targets = y_0 … y_{n-1}, <eos>
 * padded with <pad> (id 0) to the longest item of the batch.
 *
 * Batches (train_epoch_batches) are bucketed by length: the examples are sorted by
 * (source length, target length, a seeded random key), cut into runs of B, and the
 * runs are shuffled; the order depends only on (seed, epoch), so step s of a run
 * always sees the same batch — that is what makes --resume exact.
 *
 * Errors: functions return 0 / -1 with one line in err; nothing exits.
 * Ownership: a TrainSet owns its ids and alignments, a Batch its buffers;
 * train_set_free and batch_free accept NULL and zeroed structs. */
#ifndef ATTNVIZ_TRAIN_DATA_H
#define ATTNVIZ_TRAIN_DATA_H
#include <stddef.h>
#include <stdint.h>
#include "corpus/tsv.h"
#include "tokenize/tokenizer.h"

#define TRAIN_MAX_TOKENS 511   /* tokens of a source (before <eos>) or a target */

typedef struct {
    int lang_tag;       /* VOCAB_2FR or VOCAB_2VI              */
    int src_len;        /* English tokens + <eos>              */
    int tgt_len;        /* target tokens (no tag, no <eos>)    */
    int *src;           /* src_len ids (points into TrainSet.ids) */
    int *tgt;           /* tgt_len ids                          */
    int coref_p, coref_a;  /* first gold pronoun → antecedent (source indices), or -1 */
    int n_align;           /* gold alignment pairs (target index, source index) …   */
    size_t align_off;      /* … at TrainSet.align + 2·align_off                      */
} TrainExample;

typedef struct {
    int n, cap;
    TrainExample *ex;
    int *ids; size_t n_ids, cap_ids;   /* storage of every src/tgt */
    int max_src, max_tgt;              /* longest src_len, tgt_len */
    int *align; size_t n_align, cap_align;   /* (n_align, 2) alignment pairs of every example */
    unsigned char *src_seen;           /* (n_vocab_seen) 1 if the id occurs in a source  */
    int n_vocab_seen;                  /* (train_set_from_corpus; <unk> counts when copied) */
    long n_coref_unused;               /* coref links after the first of their pair (not supervised) */
} TrainSet;

void train_set_init(TrainSet *s);
void train_set_free(TrainSet *s);
/* Appends one pair (copies the ids; src must already end with <eos>). 0 or -1. */
int  train_set_add(TrainSet *s, int lang_tag, const int *src, int src_len,
                   const int *tgt, int tgt_len, char *err, size_t errlen);
/* Appends the pairs of c, read from path (named in the errors with each
 * pair's line), as examples with the vocabulary v, by the rules above.
 * Marks src_seen. */
int  train_set_from_corpus(TrainSet *s, const Corpus *c, const char *path, const Vocab *v, char *err, size_t errlen);
/* The same from the file: corpus_read_tsv(path), then train_set_from_corpus. */
int  train_set_read_tsv(TrainSet *s, const char *path, const Vocab *v, char *err, size_t errlen);

/* A padded batch (buffers owned by the Batch, reused between calls). */
typedef struct {
    int B, S, T;
    int *src;       /* (B, S) */
    int *src_len;   /* (B)    */
    int *dec_in;    /* (B, T) */
    int *tgt_len;   /* (B)    = T_b = n_b + 1 */
    int *targets;   /* (B, T) */
    int cap_B, cap_S, cap_T;
    long n_tokens;  /* real source + target tokens in the batch */
} Batch;

void batch_free(Batch *b);
/* Fills b with examples idx[0..B).  0 or -1 (out of memory). */
int  batch_make(Batch *b, const TrainSet *s, const int *idx, int B);

/* Supervision targets of the batch b made from examples idx[0..b->B): coref
 * (B, S, S) zero except row coref_p of each item = one-hot on coref_a; align
 * (B, T, S) zero except, for each target token t with gold alignments, row t =
 * uniform over its gold source positions.  Either may be NULL.  *n_coref /
 * *n_align (may be NULL) receive the number of non-zero rows. */
void train_attn_targets(const TrainSet *s, const int *idx, const Batch *b, float *coref, float *align,
                        int *n_coref, int *n_align);

/* Order of one epoch: writes n_batches*batch indices… as runs of B (the last run may
 * be shorter); *starts gets n_batches+1 offsets into *order.  malloc'd, caller frees. */
int  train_epoch_batches(const TrainSet *s, int B, uint64_t seed, long epoch,
                         int **order, int **starts, int *n_batches);

#endif
