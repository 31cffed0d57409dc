/* longtext.h — a long text's maps in bounded memory.  Past LONGTEXT_FROM
 * tokens `run` does not keep every map whole (30 layers × 9 heads × 2,000² is
 * 4.3 GB as float32): the forward pass hands each map to a LongText the
 * moment its heads are complete (trace.h's TraceSink), which
 *   1. writes it to trace.bin (trace_bin_add_map: every weight, causal maps
 *      as lower triangles, f16 when asked),
 *   2. pools it for the pictures and the page: T tokens in blocks of
 *      `block` consecutive tokens, block = ⌈T / LONGTEXT_CELLS⌉, by the rule
 *      of merged words (words.h): a block's weight on another is the sum over
 *      the other's tokens, averaged over its own, so each pooled row still
 *      sums to 1,
 *   3. keeps the rows of the tokens the links are asked of (the pronouns, or
 *      the --query token; LONGTEXT_ROWS at most) whole, in a trace of its own
 *      whose maps name each row's position (TraceMap.row_pos),
 *   4. sums up each head at full resolution (LongHeadSummary),
 * and then frees the map's matrices.  Steps 1–4 run on a thread of their own
 * while the forward pass computes the next layer (trace.bin's 2 GB at 2,000
 * tokens take seconds to write); longtext_wait waits for the last.  Memory:
 * two layers' maps, the pooled maps (at most LONGTEXT_CELLS² a head), the kept
 * rows.  trace.bin holds the
 * same bytes as when the whole trace is written at the end (tested).
 *
 * Ownership: a LongText owns its traces, blocks and writer; longtext_free
 * accepts a zeroed one and aborts an unfinished trace.bin.  Errors: -1 and
 * one line in err. */
#ifndef ATTNVIZ_LONGTEXT_H
#define ATTNVIZ_LONGTEXT_H
#include <pthread.h>
#include <stddef.h>
#include "pipeline/words.h"
#include "trace/trace.h"
#include "trace/trace_bin.h"

#define LONGTEXT_FROM 256    /* tokens: a longer text is streamed and pooled      */
#define LONGTEXT_CELLS 128   /* rows (and columns) of a pooled map at most         */
#define LONGTEXT_ROWS 64     /* query rows kept whole for the links at most        */

/* One head over the whole text, each an average over its real query rows:
 *   distance  Σ_j w_ij · |i − j|: how far back (or away) it reads, in tokens
 *   entropy   −Σ_j w_ij · ln w_ij, in nats: 0 for one key, ln n for n keys alike
 *   sink      w_i0: the share of its weight on the first token */
typedef struct {
    float distance, entropy, sink;
} LongHeadSummary;

typedef struct LongText {
    TraceSink sink;          /* first member: the forward pass calls it            */
    TraceBinWriter bin;
    int writing;             /* 1 while trace.bin is open                          */
    int T, n_real, block;    /* tokens, tokens before padding, tokens a block      */
    Words blocks;            /* token → block, labels "12-23 the"                  */
    Trace pooled;            /* every map pooled into blocks                       */
    Trace rows;              /* every map, the kept rows only (row_pos)            */
    int win_from, win_to;    /* --window: tokens win_from … win_to kept whole; -1: none */
    Trace window;            /* every map's square of the window's rows and keys   */
    int keep[LONGTEXT_ROWS]; /* positions whose rows are kept                      */
    int n_keep;
    LongHeadSummary *summary;/* (n_maps_cap × H) in map order                      */
    int n_summary, cap_summary;
    pthread_t worker;        /* taking the last map handed over, while busy         */
    int busy;
    TraceMap job;            /* that map: its matrices, and names borrowed from the trace's */
    int job_rc;
    char job_err[512];
} LongText;

/* Starts streaming the maps the forward pass will add to t (sets t->sink):
 * tokens (T, n_real before padding) label the blocks; keep[0..n_keep) the
 * positions whose rows stay whole (the first LONGTEXT_ROWS are kept, n_keep
 * may be more); trace_path NULL writes no trace.  0, or -1 with err. */
int longtext_begin(LongText *lt, Trace *t, const char *const *tokens, int T, int n_real, const int *keep, int n_keep,
                   const char *trace_path, const TraceBinOptions *o, char *err, size_t errlen);

/* Keeps tokens from … to (0 <= from <= to < T, at most LONGTEXT_WINDOW of them)
 * whole in lt->window: each map's rows and keys of the window, which the
 * pictures and the page then draw instead of the pooled maps (a row's weights
 * on the keys before the window are left out).  Before the forward pass.
 * 0, or -1 with err. */
#define LONGTEXT_WINDOW 512
int longtext_set_window(LongText *lt, int from, int to, char *err, size_t errlen);

/* What the pictures and the page draw: the window when one is set, else the
 * pooled maps; and the row of those maps that holds position q (its block,
 * or q − from in the window; -1 outside the window). */
Trace *longtext_drawn(LongText *lt);
int longtext_row(const LongText *lt, int q);

/* Waits until the last map handed over is taken.  0, or -1 with err (what
 * went wrong taking it).  Call it after the forward pass, before reading
 * pooled, rows or summary. */
int longtext_wait(LongText *lt, char *err, size_t errlen);

/* Finishes trace.bin (when one is being written): its header gets the members
 * of `members` (model, tokens, sections) and the images of `images`.  0, or
 * -1 with err (trace.bin is then not written). */
int longtext_end(LongText *lt, const Trace *members, const Trace *images, char *err, size_t errlen);

/* The summaries as a JSON section {"rule": …, "heads": [{"map", "head",
 * "distance", "entropy", "sink"}, …]}, malloc'd; NULL out of memory. */
char *longtext_summary_json(const LongText *lt);

/* The passage the page shows for a long text ("passage" section): the
 * tokens, and for each of the n heads asked (map index, head; 6 at most, a
 * label each) every row's LONGTEXT_TOP strongest keys and their weights, read
 * back from trace.bin:
 *   {"k": K, "query": the row the page opens on, "tokens": [...],
 *    "heads": [{"map": id, "head": h, "label": …,
 *    "top": [row 0's K keys, row 1's, …], "w": [their weights, %.4g]}]}
 * a row's keys strongest first (fewer than K where fewer are not masked).
 * malloc'd; NULL with err (no trace.bin written: --trace none). */
#define LONGTEXT_TOP 16
char *longtext_passage_json(LongText *lt, const int *maps, const int *heads, const char *const *labels, int n,
                            int query, char *err, size_t errlen);

void longtext_free(LongText *lt);

#endif
