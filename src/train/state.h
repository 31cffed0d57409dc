/* state.h — the training state file, for --resume: a safetensors file
 * PATH.state beside the checkpoint PATH, written at the same moments,
 * atomically (core/fileio.h):
 *   __metadata__ { "format": "attnviz-train-state", "version": "1",
 *                  "step": "N", "num_params": "P", "seed": "…", "total_steps": "…",
 *                  "adam_t": "…" }
 *   "adam.m" F32 (P)   first moments, in the layout of model_param_table
 *   "adam.v" F32 (P)   second moments
 * The parameters themselves come from the checkpoint PATH.
 *
 * Errors: 0 / -1 with one line in err; nothing exits.  train_state_load fills
 * an Adam of the model's size (adam_init) and refuses a state of another. */
#ifndef ATTNVIZ_TRAIN_STATE_H
#define ATTNVIZ_TRAIN_STATE_H
#include <stddef.h>
#include <stdint.h>
#include "train/optim.h"

/* Writes the moments of a, the step reached, the run's seed and length to path. */
int  train_state_save(const char *path, const Adam *a, long step, uint64_t seed, long total_steps,
                      char *err, size_t errlen);
/* Reads path into a (of a->n moments, adam_init) and *step. */
int  train_state_load(const char *path, Adam *a, long *step, char *err, size_t errlen);

#endif
