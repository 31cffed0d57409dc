/* model_file.h — finding and loading the model a sentence runs through: the
 * checkpoint (checkpoint.h), its vocabulary and its metadata in one object.
 *
 * Two models are shipped: "taught" (the default; one encoder head was trained
 * to point pronouns at their antecedent, one cross-attention head at the
 * aligned word) and "untaught" (same data and size, no head taught).  They are
 * looked for in samples/models/ next to the binary (build/attnviz or
 * build/x/attnviz in a checkout), then the installed data folder
 * (ATTNVIZ_DATADIR/models); $ATTNVIZ_MODEL replaces the default.
 *
 * model_file_load also reads the shipped corpus lexicon when it finds one
 * (referents.h: which words can be a pronoun's antecedent); without it, run
 * makes no such claim.
 *
 * Ownership: model_file_load fills a ModelFile that model_file_free releases
 * (accepts a zeroed or half-loaded one). */
#ifndef ATTNVIZ_MODEL_FILE_H
#define ATTNVIZ_MODEL_FILE_H
#include <stddef.h>
#include "core/datadir.h"
#include "model/model.h"
#include "net/referents.h"
#include "tokenize/tokenizer.h"

#define MODEL_FILE_DEFAULT_NAME "attnviz-en-fr-vi.safetensors"           /* "taught"   */
#define MODEL_FILE_UNTAUGHT_NAME "attnviz-en-fr-vi-untaught.safetensors"  /* "untaught" */

typedef struct {
    Model m;
    Vocab v;
    char path[4096];      /* the file loaded                                */
    char *metadata;       /* the checkpoint's __metadata__ JSON, or NULL    */
    Referents referents;  /* the shipped corpus lexicon (referents.h), when found */
} ModelFile;

/* The model's coreference head as `attnviz eval --write-metadata` recorded it
 * (the encoder self-attention head whose strongest link from a pronoun is most
 * often its antecedent), and whether training was told to point it there. */
typedef struct {
    int layer, head;      /* encoder.LAYER.self head HEAD; layer -1: none recorded */
    double accuracy;      /* its held-out accuracy (0..1), or -1                   */
    int taught;           /* 1 if train --supervise-coref taught it the link       */
    const Referents *referents; /* what can be a pronoun's antecedent (referents.h),
                             or NULL: not known                                   */
} CorefHead;

/* Path of the shipped model.  0, or -1 if none exists. */
int model_file_find_default(char *path, size_t n);

/* The i-th shipped model (0 taught, 1 untaught): its short name, what it is,
 * and its path ("" when not found).  0, or -1 past the last. */
int model_file_shipped(int i, const char **name, const char **what, char *path, size_t n);

/* Loads `given` — a path, a shipped model's short name (taught, untaught), or
 * NULL for the default (taught) — with its vocabulary and metadata, and the
 * target-language masks of its metadata (decode.h: train_target_tokens_fr/_vi).
 * 0, or -1 with a one-line message in err (the ModelFile is then freed). */
int model_file_load(ModelFile *f, const char *given, char *err, size_t errlen);

/* The coreference head recorded in f's metadata; 1 if there is one, else 0
 * (and out->layer = out->head = -1).  out->referents is f's lexicon either way. */
int model_file_coref_head(const ModelFile *f, CorefHead *out);

/* --no-language-mask: removes the target-language masks (the raw model decodes). */
void model_file_no_language_mask(ModelFile *f);

void model_file_free(ModelFile *f);

#endif
