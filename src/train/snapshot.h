/* snapshot.h — attention snapshots during training: at chosen steps, every
 * encoder self-attention map of a few sentences (the lesson's coreference
 * pair), which the demo plays back (demo/demo_snapshots.c).  The file, rewritten
 * atomically at every snapshot step (core/fileio.h):
 *   {"format": "attnviz-snapshots", "version": 1, "model": {config},
 *    "sentences": [{"text", "source_tokens"}, …],
 *    "snapshots": [{"step", "loss" (null before the first step), "lr",
 *                   "sentences": [{"maps": [{"id": "encoder.L.self", "stack",
 *                   "layer", "kind", "d_k", "heads": [{"head", "weights"}]}]}]}]}
 *
 * Errors: 0 / -1 with one line in err; nothing exits.  The caller owns the
 * StrBuf that collects the snapshot objects (free its buf). */
#ifndef ATTNVIZ_TRAIN_SNAPSHOT_H
#define ATTNVIZ_TRAIN_SNAPSHOT_H
#include <stddef.h>
#include "core/strbuf.h"
#include "model/model.h"

/* What to record and where (all borrowed from the caller). */
typedef struct {
    const char *path;                        /* the JSON file; NULL: no snapshots          */
    int n_steps; const long *steps;          /* sorted, may include 0 and the last step    */
    int n_sent; const char *const *text;     /* the sentences (English)                    */
    const int *const *src; const int *len;   /* their ids (+ <eos>)                        */
    const char *const *const *tokens;        /* their tokens (+ "<eos>")                   */
} TrainSnapshots;

/* Appends one snapshot object to s: the model m as it is at `step`, with the
 * loss (NAN before any step) and learning rate of the step before. */
int snapshot_record(StrBuf *s, Model *m, const TrainSnapshots *sn, long step, double loss, double lr,
                    char *err, size_t errlen);
/* Writes the file sn->path: the sentences and the objects collected in body. */
int snapshot_write(const StrBuf *body, const Model *m, const TrainSnapshots *sn, char *err, size_t errlen);

#endif
