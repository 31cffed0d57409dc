/* attention.h — scaled dot-product attention, written to read like the formula
 *
 *     Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k + M) · V
 *
 * One call computes one head: Q (Tq, D), K (Tk, D), V (Tk, Dv) -> out (Tq, Dv).
 * Every matrix is row-major with its own row stride (elements between rows), so
 * the model can pass one head's columns of a (T, d_model) activation in place.
 *
 * Mask: `mask` is (Tq, Tk) bytes, 1 = may attend, 0 = masked; NULL means none.
 * A masked cell's score becomes `mask_fill`: -INFINITY (the default of the tool)
 * or a finite number such as the lesson's -10000 or -1e9.
 *
 * Fully masked rows (every key masked) with a -INFINITY fill have no defined
 * softmax (0/0).  attnviz defines their weights as all zeros, so the output row
 * is the zero vector, and returns how many such rows there were so the caller
 * can warn.  With a finite fill, softmax is computed as usual (uniform weights).
 *
 * Softmax subtracts the row maximum before exp.
 * AttnSteps, when given, receives a copy of every intermediate matrix; the
 * caller owns its buffers (attn_steps_alloc / attn_steps_free). */
#ifndef ATTNVIZ_ATTENTION_H
#define ATTNVIZ_ATTENTION_H
#include <stddef.h>

typedef struct {
    int Tq, Tk, Dv;
    float *scores;  /* (Tq, Tk)  Q·Kᵀ                                 */
    float *scaled;  /* (Tq, Tk)  Q·Kᵀ · scale                          */
    float *masked;  /* (Tq, Tk)  scaled with masked cells = mask_fill  */
    float *weights; /* (Tq, Tk)  softmax of masked, rows sum to 1      */
    float *output;  /* (Tq, Dv)  weights · V (zeros when V is absent)  */
} AttnSteps;

int  attn_steps_alloc(AttnSteps *s, int Tq, int Tk, int Dv); /* 0 ok, -1 out of memory */
void attn_steps_free(AttnSteps *s);                            /* accepts half-built / zeroed */

/* The causal mask: mask[i*Tk + j] = (j <= i + offset), offset = Tk - Tq
 * (a query sees every key up to its own position). */
void attn_causal_mask(unsigned char *mask, int Tq, int Tk);

/* Row-wise softmax in place over n columns, subtracting the row max.
 * Returns 1 if the row was all -inf (then it is set to zeros), else 0. */
int attn_softmax_row(float *x, int n);

/* One head of attention: what goes in and where the results go (llm.c's layer
 * functions take few arguments; this is their struct).  Rows have their own
 * stride, so a head's columns of a (T, d_model) activation are used in place. */
typedef struct {
    const float *q; int ldq;         /* (Tq, D) queries, row stride ldq                 */
    const float *k; int ldk;         /* (Tk, D) keys                                    */
    const float *v; int ldv;         /* (Tk, Dv) values, or NULL: no output step        */
    const unsigned char *mask;       /* (Tq, Tk), 1 = may attend; NULL: none            */
    float mask_fill;                 /* masked scores: -INFINITY or a finite number     */
    float scale;                     /* 1/sqrt(D) normally; 1 for the unscaled variant  */
    int Tq, Tk, D, Dv;
    float *out; int ldo;             /* (Tq, Dv) stride ldo; may be NULL when v is      */
    float *weights;                  /* (Tq, Tk) contiguous, or NULL (then steps)       */
    AttnSteps *steps;                /* optional full record (sized Tq, Tk, Dv)         */
} AttnHead;

/* softmax(Q·Kᵀ · scale + M) · V for one head.  Returns the number of fully
 * masked rows (>= 0), or -1 when out of memory. */
int attention_forward(const AttnHead *a);

/* The same head as attention_forward, for the model's every-layer forward (training
 * and inference): identical arithmetic (each score summed over d in order, scaled,
 * masked, attn_softmax_row, then weights·V in key order), so identical bits, but
 * the scores of 4–16 keys advance together: K's head columns are first copied into
 * a (D, Tk) tile, the transpose a GEMM kernel packs, one head at a time.  Rows of
 * 16 queries reaching COMBINE_BLOCK_MIN (128) keys or more take weights·V as one
 * product (combine_block): the weights stay the same bits, the output may differ
 * in the last bit.  Needs `weights` (contiguous (Tq, Tk)); `steps` is ignored
 * (use attention_forward for the record).  Same return value. */
int attention_forward_fast(const AttnHead *a);

/* The n heads a[0..n) by attention_forward_fast, spread over OpenMP's threads
 * (each head writes only its own weights and output columns).  0, or -1 when
 * one of them ran out of memory. */
int attention_heads_fast(const AttnHead *a, int n);

/* Softmax + ·V starting from already-scaled scores (Tq, Tk) — the `--scores`
 * path of `attnviz steps`; q, k, D and scale are not used.  The steps'
 * `scores` and `scaled` both receive the given scores. */
int attention_from_scores(const AttnHead *a, const float *scores);

#endif
