/* demo_model.h — the parts of the lesson that run the trained model on its
 * sentences (demo.h), through the sentence pipeline (pipeline/look.h).
 * Each 0, or -1 with d->err. */
#ifndef ATTNVIZ_DEMO_MODEL_H
#define ATTNVIZ_DEMO_MODEL_H
#include "demo/demo_common.h"

int demo_masking_in_model(Demo *d);   /* part 3: the decoder's mask, a padded batch            */
int demo_multi_head(Demo *d);         /* part 4: split/concat, every encoder head              */
int demo_three_kinds(Demo *d);        /* part 5: the three kinds of attention                  */
int demo_coreference(Demo *d);        /* part 6: "it" → animal / street; sets d->coref_*       */
int demo_vietnamese(Demo *d);         /* part 8: "tôi đi học ."                                */

#endif
