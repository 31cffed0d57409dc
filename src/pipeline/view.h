/* view.h — attention weights computed anywhere (PyTorch, JAX, a notebook) →
 * the pictures, trace.json and page `run` writes (pictures.h), for
 * `attnviz view`.  attnviz runs no model here: it reads the numbers, checks
 * them and draws them, and every picture says they came from outside.
 *
 *   view_read   FILE → named arrays: .npy (one array), .npz and .safetensors
 *               (one array per map, named by its id), .json (nested lists, or
 *               an object of them); core/npy.h, core/safetensors.h, cJSON
 *   view_trace  the arrays → a Trace, one map per (layers, heads, queries,
 *               keys) slice: (L,H,Q,K) gives NAME.0 … NAME.L-1 ("layer.N" for
 *               a lone array), (H,Q,K) and (Q,K) give one map NAME.  An id
 *               STACK.L.KIND (encoder|decoder, self|masked_self|cross) keeps
 *               its stack, layer and kind; any other is stack and kind "custom".
 *               Checked, first fault named by map, head and row: the shape
 *               against the tokens, NaN and ±∞, negative weights, rows that do
 *               not sum to 1 within VIEW_ROW_TOLERANCE (--scores suggested).
 *               A square map with nothing above the diagonal (or --causal) gets
 *               the causal mask; rows that are zero in every head (padding) are
 *               masked.  With scores (spec->scores) the numbers are what
 *               softmax takes: attnviz computes the weights, the numbers are
 *               kept as the head's `masked` step.
 *   view_pictures  pictures_show_sentence with the file named as the weights'
 *               origin on every picture and the page, and each pronoun's lines
 *               view from the self-attention maps (links_find, as run).
 * Ownership: a ViewArrays owns its arrays (view_arrays_free); the Trace owns
 * what view_trace adds.  Errors: -1 and one line in err. */
#ifndef ATTNVIZ_VIEW_H
#define ATTNVIZ_VIEW_H
#include <stddef.h>
#include "core/npy.h"
#include "pipeline/pictures.h"
#include "trace/trace.h"

#define VIEW_ROW_TOLERANCE 1e-3
#define VIEW_MAX_TOKENS 4096        /* the pictures' limit (render/heatmap.h) */
#define VIEW_MAX_FILE ((size_t)1 << 31)
#define VIEW_MAX_QUERIES_OF 64

typedef struct {
    NpyArray *a;
    int n;
    int lone;                       /* 1: one unnamed array (.npy, a JSON list) */
} ViewArrays;

/* Tokens: an argument's words. */
typedef struct {
    char **tok;
    int n;
} ViewTokens;

typedef struct {
    const char *file;
    ViewTokens tokens, keys;        /* keys.n == 0: the tokens            */
    const char *qmap[VIEW_MAX_QUERIES_OF];   /* --queries-of MAP=TOKENS    */
    ViewTokens qtok[VIEW_MAX_QUERIES_OF];
    int n_queries_of;
    int causal, scores;
} ViewSpec;

/* TOKENS as given: a path to a .json list of strings or a .txt file of one
 * token per line, else the words of the text split at spaces.  0, or -1. */
int view_tokens(ViewTokens *out, const char *arg, const char *what, char *err, size_t errlen);
void view_tokens_free(ViewTokens *t);

int view_read(ViewArrays *va, const char *path, char *err, size_t errlen);
void view_arrays_free(ViewArrays *va);

/* The maps of va, checked, into t (source tokens: spec->tokens).  0, or -1. */
int view_trace(Trace *t, const ViewArrays *va, const ViewSpec *spec, char *err, size_t errlen);

/* What view_trace found, for the command to print: maps, heads, causal maps, masked rows. */
typedef struct {
    int n_maps, n_heads, n_causal, n_padded_rows;
} ViewSummary;
ViewSummary view_summary(const Trace *t);

/* Every picture, trace.json and index.html of t into dir.  0, or -1. */
int view_pictures(Trace *t, const ViewSpec *spec, const char *dir, const char *command, PictureReport *rep,
                  char *err, size_t errlen);

#endif
