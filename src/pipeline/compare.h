/* compare.h — two traces side by side and their difference: two sentences
 * through one model, one sentence through two models (taught and untaught, two
 * folders of one family), or one model with and without knocked-out heads
 * (`attnviz compare`).
 *
 *   compare_traces   pairs the maps of A and B by id ("encoder.2.self") and,
 *                    for every head of a pair of equal shape, B − A of the
 *                    weights, cell by cell: position by position, so where the
 *                    two sides' words differ the labels say "tired/wide".
 *                    Maps of unequal shape (sentences of different lengths, two
 *                    translations of different lengths) are not differenced
 *                    and are listed with their shapes.
 *   compare_pick_lines  the query tokens whose lines views are drawn: each
 *                    pronoun of A (or the --query token) that B has too (its
 *                    n-th occurrence there), with the head links_view chooses
 *                    for A — drawn on both sides, so the same head is compared
 *   compare_summary  the heads whose maps differ most, one line each:
 *                    head, query word, key word, A, B and Δ
 *   compare_write    into DIR: {map}.h{H}.png (A beside B, weights on one 0–1
 *                    scale), {map}.h{H}.diff.png (B − A on the diverging map,
 *                    ColorBrewer RdBu, one symmetric scale ±max|Δ| for every
 *                    head, with its colour bar), lines.{pos}-{tok}.png (A's and
 *                    B's lines views of one head in one picture), trace-a.json,
 *                    trace-b.json (the trace format, docs/trace-format.md),
 *                    compare.json (every difference matrix) and index.html,
 *                    whose interactive views (render/page.h) open on the
 *                    difference B − A of the head whose largest |Δ| is largest
 *                    (compare_summary's first line), at that cell's query
 *
 * Ownership: a Comparison owns its difference matrices; compare_free releases
 * them (accepts a zeroed one).  The traces stay the caller's.  Errors: -1 and
 * one line in err. */
#ifndef ATTNVIZ_COMPARE_H
#define ATTNVIZ_COMPARE_H
#include <stddef.h>
#include "net/net.h"
#include "pipeline/hf_run.h"
#include "pipeline/look.h"
#include "trace/trace.h"

/* One side of a comparison: a sentence through a model (any model, net.h). */
typedef struct {
    Look look;            /* the translator's look (translation in look.s)      */
    HfRun run;            /* a foreign model's run                              */
    const Trace *t;       /* the side's trace: &look.t or &run.t                */
    const char *translation;  /* the translator's, or NULL                      */
    CorefHead coref;      /* the translator's coreference head, or none         */
} CompareSide;

/* text through n (the translator into `to`, fr or vi) into sd: the maps only,
 * no pictures.  Words outside training are said through warn.  0, or -1 with
 * err (a model that neither translates nor reads text; --to on a model that
 * does not translate). */
int compare_side(CompareSide *sd, Net *n, const char *text, const char *to, void (*warn)(const char *, ...),
                 char *err, size_t errlen);
void compare_side_free(CompareSide *sd);

typedef struct {
    int map_a, map_b, head;   /* map indices in A and B (same id), head            */
    int rows, cols;
    float *diff;              /* (rows, cols) B − A of the weights                  */
    float max_abs;            /* the largest |Δ| of the head, at (row, col)         */
    int row, col;
} CompareHead;

typedef struct {
    CompareHead *heads;       /* (n_heads) every head of the maps of equal shape    */
    int n_heads;
    float scale;              /* max |Δ| over every head: one scale for all         */
    int n_skipped;            /* maps of A not compared                             */
    char skipped[2048];       /* "decoder.0.cross (A 15×13, B 14×13), …"            */
} Comparison;

typedef struct {
    int q_a, q_b;             /* the query token's row in A's and B's map          */
    int map, head;            /* the head drawn on both sides (A's map index)       */
} CompareLine;

#define COMPARE_MAX_LINES 6

typedef struct {
    const char *dir;          /* the output folder (exists)                         */
    const char *command;      /* shown on the page                                  */
    const char *what;         /* "two sentences through taught", …                  */
    const char *label_a, *label_b;   /* "A: “the animal … tired .”", …              */
    const char *summary;      /* compare_summary's text, shown on the page          */
    const CompareLine *lines; /* (n_lines) from compare_pick_lines                  */
    int n_lines;
} CompareSpec;

/* B − A of every head of every pair of maps of equal shape.  0, or -1 (out of memory). */
int compare_traces(Comparison *c, const Trace *a, const Trace *b, char *err, size_t errlen);
/* Up to max lines views (query is the --query token, NULL: the pronouns);
 * coref and focus as links_view takes them.  Returns how many. */
int compare_pick_lines(const Trace *a, const Trace *b, const char *query, const CorefHead *coref, CompareLine *out,
                       int max);
/* The top heads by their largest |Δ| (at most top lines) and the maps not
 * compared, as text into out. */
void compare_summary(const Comparison *c, const Trace *a, const Trace *b, int top, char *out, size_t n);
/* Every file, as listed above; *n_pictures gets the PNGs written.  0, or -1 with err. */
int compare_write(const CompareSpec *s, const Comparison *c, const Trace *a, const Trace *b, int *n_pictures,
                  char *err, size_t errlen);
void compare_free(Comparison *c);

#endif
