/* demo_explain.h — part 10 of the lesson (demo.h): does attention explain?
 * The taught head, its knock-out, the untaught model (needs the shipped taught
 * model, or skips with a warning).  0, or -1 with d->err. */
#ifndef ATTNVIZ_DEMO_EXPLAIN_H
#define ATTNVIZ_DEMO_EXPLAIN_H
#include "demo/demo_common.h"

int demo_does_attention_explain(Demo *d);

#endif
