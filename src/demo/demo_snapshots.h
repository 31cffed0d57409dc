/* demo_snapshots.h — part 9 of the lesson (demo.h): the coreference head of
 * part 6 during training, from the snapshots file next to the model (skipped
 * with a warning without one).  0, or -1 with d->err. */
#ifndef ATTNVIZ_DEMO_SNAPSHOTS_H
#define ATTNVIZ_DEMO_SNAPSHOTS_H
#include "demo/demo_common.h"

int demo_head_learning(Demo *d);

#endif
