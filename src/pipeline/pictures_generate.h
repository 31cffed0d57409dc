/* pictures_generate.h — the pictures of a generation (pipeline/generate.h)
 * and their page, in one folder:
 *   timeline.png     the chosen head's map, one row added per step (the prompt's
 *                    rows first), the newest row outlined
 *   growing.gif      the same map growing, one frame per step, for slides
 *   last-row.png     the newest query's row in every layer and head
 *   top-k.png        each step's candidates as bars, the chosen one in colour
 *   kv-cache.png     the cache's bytes per step, with the model's key/value
 *                    heads and as if each query head had its own
 *   index.html       the pictures in order, captions in English and Vietnamese,
 *                    under the interactive views (render/page.h), which open
 *                    on the Generation tab at the timeline's head
 * The head: --head MAP.H ("decoder.1.masked_self.3" or "1.3"); by default the
 * head whose written steps look furthest back (the largest mean over steps of
 * Σ_{j>=1} w_j·(q − j): the distance of what it reads, the first token — the
 * attention sink — left out).
 * Errors: -1 and one line in err (a bad --head, a picture that cannot be
 * written). */
#ifndef ATTNVIZ_PICTURES_GENERATE_H
#define ATTNVIZ_PICTURES_GENERATE_H
#include <stddef.h>
#include "pipeline/generate.h"
#include "trace/trace.h"

#define GEN_PICTURES_MAX 8

typedef struct {
    const char *dir;          /* the output folder (exists)            */
    const char *head;         /* --head, or NULL: the default head     */
    const char *model_name;   /* for captions and the PNG metadata     */
    int head_roles;           /* the caller drew head_roles.png: on the page too */
    const Trace *trace;       /* embedded in the interactive page (render/page.h), or NULL */
    const Attribution *attribution;  /* --attribution: attribution.png and its section; NULL: none */
} GenPictureSpec;

typedef struct {
    int layer, head;                        /* the timeline's head     */
    int n_images;
    char images[GEN_PICTURES_MAX][64];      /* relative to dir         */
} GenPictureReport;

/* Parses --head against g's shape into *layer, *head.  0, or -1 with err. */
int pictures_generate_head(const Generation *g, const char *spec, int *layer, int *head, char *err, size_t errlen);

/* The bundled translator's own greedy decoding (`generate` with attnviz's
 * model): its trace t (pipeline/look.h, the decoder reading its own output)
 * holds "decoder.L.masked_self" (T × T) and "decoder.L.cross" (T × S); the
 * decoder is causal, so row q of each is what the step that read its q-th
 * token computed (tests/test_generate.py checks it against teacher-forced
 * prefixes).  Writes timeline-self.png and timeline-cross.png (layer `layer`,
 * heads self_head and cross_head, one row per written word, the newest
 * outlined), growing.gif (the cross-attention map growing), attribution.png
 * when asked, and index.html with `text` (source → translation).  0, or -1 with err. */
typedef struct {
    const char *dir, *model_name, *text;
    int layer, self_head, cross_head;
    int head_roles;           /* the caller drew head_roles.png: on the page too */
    const Trace *trace;       /* embedded in the interactive page (render/page.h), or NULL */
    const Attribution *attribution;  /* --attribution of the first word written: attribution.png
                                        and its section; NULL: none                          */
} GenTranslationSpec;
int pictures_generate_translation(Trace *t, const GenTranslationSpec *ts, GenPictureReport *rep, char *err,
                                  size_t errlen);

/* Every picture and index.html into ps->dir.  0, or -1 with err. */
int pictures_generate(const Generation *g, const GenPictureSpec *ps, GenPictureReport *rep, char *err, size_t errlen);

#endif
