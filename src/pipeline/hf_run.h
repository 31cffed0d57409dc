/* hf_run.h — the sentence pipeline for a model of another project (hf_file.h:
 * a GPT-2, BERT or Llama-family folder, a llama2.c file): the sentence →
 * tokens → forward pass with every head recorded → what the model predicts →
 * pictures (pictures.h) + trace.json + index.html.
 *
 * Two halves, so the caller can speak between them (print the predictions,
 * warn about a large trace before it is written):
 *   hf_run_forward   tokens, forward pass, trace, predictions: the most likely
 *                    next tokens of a causal model (GPT-2, the Llama family);
 *                    BERT's candidates for each [MASK]
 *   hf_run_pictures  the pictures the spec asks for, trace.json unless
 *                    --trace none, index.html
 * The step strip's head is --focus, else the head of ps->links' first link
 * (links_focus), else layer 0 head 0; its steps (and,
 * for a RoPE model, its q and k before and after the rotation) come from a
 * second forward pass of that one head (skipped over HF_RUN_STRIP_MAX tokens).
 * Errors: -1 and one line in err.  hf_run_free accepts a zeroed HfRun. */
#ifndef ATTNVIZ_HF_RUN_H
#define ATTNVIZ_HF_RUN_H
#include <stddef.h>
#include "family/hf_file.h"
#include "pipeline/longtext.h"
#include "pipeline/pictures.h"
#include "pipeline/sentence.h"
#include "trace/trace.h"

#define HF_RUN_TOP 5            /* candidates printed per prediction */
#define HF_RUN_MAX_MASKS 16
#define HF_RUN_STRIP_MAX 128    /* tokens at most for a step strip   */
#define HF_RUN_PICTURE_MAX 4096 /* tokens at most for pictures (render/heatmap.h) */

typedef enum { HF_TRACE_NONE = 0, HF_TRACE_WEIGHTS = 1, HF_TRACE_STEPS = 2 } HfTraceMode;

typedef struct {
    const char *text;
    HfTraceMode trace;
    int no_pictures;
    int pad_to;                  /* pad to this many tokens (a batch's longest); 0: none */
    const char *stream_dir;      /* a text past LONGTEXT_FROM tokens streams its maps
                                    (longtext.h) and writes DIR/trace.bin as it goes;
                                    NULL: every map stays whole (trace.json asked)      */
    int trace_f16;               /* trace.bin's weights in half precision              */
    const char *query;           /* the token whose rows a long text keeps; NULL: pronouns */
    int long_from;               /* streamed past this many tokens (LONGTEXT_FROM); 0: never */
    int window, win_from, win_to;/* --window FROM:TO (window 1): streamed, drawn whole there */
} HfRunSpec;

typedef struct {
    HfInput in;
    Trace t;
    Sentence s;                  /* text, tokens and the prediction, as pictures.h reads them */
    HfCandidate next[HF_RUN_TOP];              /* GPT-2: after the last token  */
    int n_masks;
    int mask_pos[HF_RUN_MAX_MASKS];            /* BERT: positions of [MASK]    */
    HfCandidate fill[HF_RUN_MAX_MASKS][HF_RUN_TOP];
    int has_predictions;         /* 0: BERT without its masked-LM head        */
    int is_long;                 /* 1: the maps were streamed (lt); t keeps their
                                    names, tokens and sections but no matrices    */
    LongText lt;
} HfRun;

/* Before a forward pass of T tokens: pictures are asked of a text kept whole
 * and T is over HF_RUN_PICTURE_MAX, or the maps kept at once (every layer's,
 * or two layers' when streamed) would not fit in the memory free now
 * (core/memory.h): -1 with err saying what helps; else 0. */
int hf_run_check_size(const HfFile *f, int T, const HfRunSpec *spec, int streamed, char *err, size_t errlen);

/* Encodes spec->text, checks its size (hf_run_check_size) and runs the
 * forward pass.  0, or -1 with err. */
int hf_run_forward(HfRun *r, HfFile *f, const HfRunSpec *spec, char *err, size_t errlen);


/* The pictures, trace.json and index.html in ps->dir.  ps->focus_map < 0
 * lets the pipeline choose the strip's head.  0, or -1 with err. */
int hf_run_pictures(HfRun *r, HfFile *f, PictureSpec *ps, PictureReport *rep, char *err, size_t errlen);

void hf_run_free(HfRun *r);

#endif
