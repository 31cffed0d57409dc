/* reading.h — sentences read by any model (net/net.h), the one sequence of
 * calls `run` makes whatever the model:
 *
 *   reading_begin     the options that need the model checked, then what
 *                     comes before any sentence is shown: the bundled
 *                     translator prepares, translates and traces every sentence
 *                     (look.h) and warns about words outside training; a
 *                     foreign model encodes a --batch to find its longest
 *   reading_sentence  sentence i's forward pass when it was not run yet (a
 *                     foreign model, one sentence at a time) and its head roles
 *                     (--head-roles)
 *   reading_print     what the model made of sentence i, for the terminal: the
 *                     translation, copied names, unknown words and each
 *                     pronoun's link with why its head was chosen (translator);
 *                     the tokens, the next token or each [MASK]'s fillings and
 *                     each pronoun's link (foreign models); knock-outs and head
 *                     roles as asked
 *   reading_pictures  sentence i's pictures, trace.json and index.html
 *   reading_end       frees everything
 * What the model can do decides what is printed and drawn (net.h's NetCap),
 * never its name.  Warnings go through spec->warn (one line each); errors are
 * one line in err, said as run's options name them ("sentence 2: …",
 * "--target: …").
 * Ownership: a Reading owns its looks, the current foreign sentence and its
 * head roles; reading_end accepts a zeroed or half-begun one. */
#ifndef ATTNVIZ_READING_H
#define ATTNVIZ_READING_H
#include <stddef.h>
#include <stdio.h>
#include "net/net.h"
#include "pipeline/attribution.h"
#include "pipeline/head_roles.h"
#include "pipeline/hf_run.h"
#include "pipeline/look.h"
#include "pipeline/pictures.h"
#include "pipeline/words.h"

#define READING_MAX_SENTENCES 64
#define READING_TRACE_WARN_MB 50     /* a trace.json above this is announced */

typedef struct {
    const char *to;            /* fr or vi: the translator's target language          */
    const char *target;        /* the translation given (teacher forcing), or NULL    */
    int batch;                 /* 1: the sentences padded to one length, together     */
    const char *query;         /* links of this token; NULL: the pronouns             */
    const char *focus;         /* the strip's head, "L.H" or "MAP.H"; NULL: chosen    */
    int importance;            /* head importance by knock-out                        */
    int attribution;           /* direct logit attribution of a decoder's next token
                                  (the translator: the pronoun's translation, else the
                                  first word it writes)                               */
    int head_roles;            /* what each head does (head_roles.h)                  */
    unsigned long long probe_seed;
    int probe_length;
    HfTraceMode trace;         /* none, weights or steps                              */
    int trace_format;          /* PICTURES_TRACE_AUTO, _JSON or _BIN (pictures_common.h) */
    int trace_f16;             /* trace.bin's weights in half precision               */
    int long_from;             /* a text past this many tokens is streamed (longtext.h); 0: never */
    int window, win_from, win_to; /* --window FROM:TO (window 1): a streamed text drawn whole there */
    int no_pictures;
    int no_language_mask;      /* the translator decodes without its language masks  */
    const char *ablate;        /* heads to knock out, "MAP.H[,MAP.H…]", or NULL       */
    int quiet;                 /* print nothing but what warn says                    */
    int pieces;                /* a foreign model's links and lines views in its
                                  subword pieces; 0: in words (words.h)               */
    void (*warn)(const char *fmt, ...);
} ReadSpec;

typedef struct {
    Net *net;
    const ReadSpec *spec;
    const char *const *texts;
    int n;
    CorefHead coref;           /* the translator's coreference head (or none)         */
    Look look[READING_MAX_SENTENCES];   /* the translator: each sentence          */
    int pad_to;                /* a foreign --batch: its longest sentence's tokens    */
    HfRun hf;                  /* a foreign model: the current sentence               */
    int hf_ready;              /* 1: hf holds the current sentence, read whole        */
    Words words;               /* a foreign model: its pieces grouped into words      */
    Trace wt;                  /* ... and its maps merged into them (words.h)         */
    int has_words;             /* 1: the links and lines views are read in words      */
    LinksFound *links;         /* a foreign model: the current sentence's links       */
    int n_links;
    int focus_map, focus_head; /* a foreign model: --focus on the current sentence    */
    Importance imp;            /* a foreign model: --importance of the current sentence */
    int has_imp;
    Attribution attr;          /* --attribution of the current sentence               */
    int has_attr;
    HeadRoles roles;           /* --head-roles of the current sentence                */
    int has_roles;
    double ms_model;           /* time in the model (load aside): decode, forward, probe */
    char why[1024];            /* the pipeline's own message, before run words it     */
} Reading;

/* 0; -1 with err when nothing can be shown; 1 when a sentence failed after
 * the ones before it were read (reading_sentence then says which). */
int reading_begin(Reading *rd, Net *net, const char *const *texts, int n, const ReadSpec *spec, char *err,
                  size_t errlen);

/* Sentence i, read; a long text (longtext.h) writes its trace.bin into dir as
 * it is read.  0, or -1 with err (sentence i failed). */
int reading_sentence(Reading *rd, int i, const char *dir, char *err, size_t errlen);

/* The terminal's summary of sentence i (nothing with spec->quiet but warnings). */
void reading_print(const Reading *rd, int i, FILE *out);

/* ps->dir, command, and the drawing choices (layers, heads, caps) are the
 * caller's; the rest comes from the reading.  0, or -1 with err. */
int reading_pictures(Reading *rd, int i, PictureSpec *ps, PictureReport *rep, char *err, size_t errlen);

/* The link text of sentence i on a page of several ("2. text → translation"). */
void reading_title(const Reading *rd, int i, char *buf, size_t n);

void reading_end(Reading *rd);

#endif
