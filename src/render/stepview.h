/* stepview.h — the step strip, built once: one head's attention as the panels
 *
 *   1. scores = Q·Kᵀ → 2. scaled = scores / √d_k → 3. masked = scaled + M
 *   → 4. weights = softmax → 5. output = weights · V
 *
 * that render_strip / render_panels draw side by side (`steps`, `run`'s focus
 * head, the demo's lesson examples).  A step whose matrix is NULL is left out,
 * and the panels keep their order.  Scores, scaled, masked and output use the
 * diverging colour map centred on 0 (its range from the values); weights use
 * viridis on a fixed 0–1 scale.  The masked panel shows the mask's cells with
 * mask_label, the weights panel with "0" (their weight is exactly 0).  A
 * model with rotary position embeddings (RoPE) has a step before 1: q and k
 * before and after the rotation (stepview_rope_panels).
 * Nothing is allocated: the panels point into the caller's matrices and labels. */
#ifndef ATTNVIZ_STEPVIEW_H
#define ATTNVIZ_STEPVIEW_H
#include "render/render.h"
#include "trace/trace.h"

typedef enum { STEP_SCORES, STEP_SCALED, STEP_MASKED, STEP_WEIGHTS, STEP_OUTPUT, STEP_COUNT } StepKind;

typedef struct {
    const float *x[STEP_COUNT];          /* (Tq, Tk) each, output (Tq, Dv); NULL: no panel   */
    const char *title[STEP_COUNT];       /* NULL: the standard title, e.g. "1. scores = Q·Kᵀ" */
    const char *subtitle[STEP_COUNT];    /* NULL: none                                       */
    int Tq, Tk, Dv;
    const char *const *queries;          /* Tq row labels                                    */
    const char *const *keys;             /* Tk column labels                                 */
    const char *const *dims;             /* Dv column labels of the output                   */
    const unsigned char *mask;           /* (Tq, Tk), 1 = may attend; NULL: none             */
    const char *mask_label;              /* in the masked panel's masked cells; NULL: "−∞"   */
    int axes;                            /* 1: axis captions query / key / value dimension   */
    int show_values;                     /* as RenderHeatmap.show_values, for every panel    */
} StepView;

/* Fills out[] with the panels of the steps present, in order, and kinds[] (may
 * be NULL) with which step each is.  Returns the number of panels. */
int stepview_panels(const StepView *sv, RenderHeatmap out[STEP_COUNT], StepKind kinds[STEP_COUNT]);

/* The steps of head h of a trace map (its step matrices, row labels as
 * trace_row_labels gives them, keys and mask); a map without a mask, or with
 * one that hides no cell (an encoder's padding mask of a single sentence), has
 * no step 3, and the weights panel's subtitle says it was skipped;
 * dims receives the output's column labels "0" … (capacity Dv, each
 * STEPVIEW_DIM_LABEL bytes: room for any int; pointed to by dim_labels).
 * other titles, subtitles, axes and show_values are the caller's to set. */
#define STEPVIEW_DIM_LABEL 12
StepView stepview_of_head(const TraceMap *m, int h, char (*dims)[STEPVIEW_DIM_LABEL], const char **dim_labels);

/* RoPE's step before Q·Kᵀ (a model with rotary position embeddings): head h's
 * queries and the keys it reads, before and after the rotation, as four
 * panels q → q rotated, k → k rotated (no arrow between the pairs), rows the
 * tokens, columns the d_k dimensions (dim_labels, as stepview_of_head fills
 * them), diverging colours.  0 when the trace holds no RoPE for the head. */
#define STEPVIEW_ROPE_PANELS 4
int stepview_rope_panels(const TraceMap *m, int h, const char *const *dim_labels,
                         RenderHeatmap out[STEPVIEW_ROPE_PANELS]);

/* One small matrix panel: title, subtitle, values, labels, colour map (viridis
 * fixed 0–1, diverging centred on 0); values printed when they fit. */
RenderHeatmap stepview_matrix(const char *title, const char *subtitle, const float *x, int rows, int cols,
                              const char *const *row_labels, const char *const *col_labels, RenderCmap cmap);

#endif
