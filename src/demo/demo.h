/* demo.h — the whole lesson as pictures, in order, + index.html (`attnviz demo`).
 *
 * demo_render renders the lesson's parts in order into d->out:
 *   1. attention step by step on the lesson's small examples  demo_steps_by_hand
 *   2. why divide by √d_k (a sampling experiment)              demo_why_sqrt_dk
 *   3. masking: causal mask and masked softmax by hand,        demo_masking_by_hand
 *      the model's decoder and a padded batch,                 demo_masking_in_model
 *      −∞ against −10000 and −1e9                              demo_mask_fill_values
 *   4. multi-head split/concat, every encoder head             demo_multi_head
 *   5. the three kinds of attention on one sentence pair       demo_three_kinds
 *   6. coreference: "it" → animal / street                     demo_coreference
 *   7. positional encoding                                     demo_positional_encoding
 *   8. the Vietnamese example "tôi đi học ."                   demo_vietnamese
 *   9. a head learning (training snapshots, when present)      demo_head_learning
 *  10. does attention explain? knock-outs, taught vs untaught   demo_does_attention_explain
 * The parts that need no model are in demo_by_hand.c, those that run the model
 * in demo_model.c (through the sentence pipeline, pipeline/look.h), part 9 in
 * demo_snapshots.c, part 10 in demo_explain.c, each with a header naming its
 * entry points; what they share (the Demo, writing and recording a picture) is
 * demo_common.h.  Every number in a caption is computed, never copied from the
 * notes.
 *
 * Errors: -1 with a one-line message in d->err; warnings are collected in
 * d->warnings for the caller to print (demo_common.h).  Nothing here prints or
 * exits. */
#ifndef ATTNVIZ_DEMO_H
#define ATTNVIZ_DEMO_H
#include "demo/demo_common.h"

/* Loads the model (d->model_arg; NULL: the shipped model).  0, or -1 with d->err. */
int  demo_load(Demo *d);
/* Renders every part and index.html into d->out (an existing folder).  0, or -1 with d->err. */
int  demo_render(Demo *d);
/* Releases what demo_load loaded (accepts a zeroed Demo). */
void demo_free(Demo *d);

#endif
