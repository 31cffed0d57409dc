/* demo_by_hand.h — the parts of the lesson that need no model (demo.h): the
 * lesson's own small examples.  Each 0, or -1 with d->err. */
#ifndef ATTNVIZ_DEMO_BY_HAND_H
#define ATTNVIZ_DEMO_BY_HAND_H
#include "demo/demo_common.h"

int demo_steps_by_hand(Demo *d);                  /* part 1: attention step by step        */
int demo_why_sqrt_dk(Demo *d);                    /* part 2: why divide by √d_k             */
int demo_masking_by_hand(Demo *d, Trace *t);      /* part 3: adds its maps to t (p3.trace.json) */
int demo_mask_fill_values(Demo *d, Trace *t);     /* part 3: −∞ against −10000 and −1e9     */
int demo_positional_encoding(Demo *d);            /* part 7                                 */

#endif
