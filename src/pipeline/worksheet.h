/* worksheet.h — printable exercises on scaled dot-product attention, with the
 * answer key computed by the engine (core/attention.h):
 *
 *   scores = Q·Kᵀ → scaled = scores ÷ √d_k → masked = scaled + M →
 *   weights = softmax (2 decimals) → output = weights · V
 *
 * Each exercise draws small integers from the seed: Q and K in −1..1 (N × 4,
 * so √d_k = 2 and the scaled scores stay in −2..2), V in 0..3 (N × 2), N the
 * --size (1..WORKSHEET_MAX_SIZE tokens).  The same seed, size, mask and
 * language give the same files, byte for byte.
 *
 * worksheet_write puts into DIR:
 *   worksheet.png, key.png   the exercises with empty boxes, and the key
 *   worksheet.html           both, print-ready on A4 (CSS @page; blanks as
 *                            empty boxes; the key on a page of its own)
 *   worksheet.json           {"exercises": [{"tokens", "d_k", "q", "k", "v",
 *                            "mask" (null or 0/1 rows), "answers": {"scores",
 *                            "scaled", "weights", "output"}}]} with every
 *                            number at float32 precision (masked cells'
 *                            weights are 0)
 * Ownership: worksheet_make fills a Worksheet that worksheet_free releases
 * (accepts a zeroed or half-made one).  Errors: -1 and one line in err. */
#ifndef ATTNVIZ_WORKSHEET_H
#define ATTNVIZ_WORKSHEET_H
#include <stddef.h>
#include <stdint.h>
#include "core/attention.h"

#define WORKSHEET_MAX_SIZE 8
#define WORKSHEET_EXERCISES 2
#define WORKSHEET_DK 4
#define WORKSHEET_DV 2

typedef struct {
    uint64_t seed;
    int size;                 /* tokens N, 1..WORKSHEET_MAX_SIZE */
    int causal;               /* 1: the causal mask (a query sees itself and earlier tokens) */
    int vi;                   /* 1: Vietnamese text, 0: English */
    const char *command;      /* shown on the page (NULL: none) */
} WorksheetSpec;

typedef struct {
    int n;                             /* tokens                                   */
    const char *tokens[WORKSHEET_MAX_SIZE];   /* the labels (static strings)       */
    float q[WORKSHEET_MAX_SIZE * WORKSHEET_DK];   /* (n, d_k) small integers       */
    float k[WORKSHEET_MAX_SIZE * WORKSHEET_DK];   /* (n, d_k)                      */
    float v[WORKSHEET_MAX_SIZE * WORKSHEET_DV];   /* (n, d_v)                      */
    unsigned char mask[WORKSHEET_MAX_SIZE * WORKSHEET_MAX_SIZE];  /* (n, n) 1 = may attend */
    int masked;                        /* 1: mask applies                          */
    AttnSteps st;                      /* the engine's answers (n, n) and (n, d_v) */
} WorksheetExercise;

typedef struct {
    WorksheetSpec spec;
    WorksheetExercise ex[WORKSHEET_EXERCISES];
    int n_ex;
} Worksheet;

/* Draws the exercises and computes their answers.  0, or -1 with err (a bad
 * size, out of memory). */
int worksheet_make(Worksheet *w, const WorksheetSpec *spec, char *err, size_t errlen);
/* Writes the four files into dir (which exists).  0, or -1 with err. */
int worksheet_write(const Worksheet *w, const char *dir, char *err, size_t errlen);
void worksheet_free(Worksheet *w);

#endif
