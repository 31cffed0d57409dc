/* pictures_internal.h — what pictures.c shares with pictures_explain.c (not public). */
#ifndef ATTNVIZ_PICTURES_INTERNAL_H
#define ATTNVIZ_PICTURES_INTERNAL_H
#include "pipeline/pictures.h"
#include "render/render.h"

/* One sentence being drawn: its spec, sentence, trace (gains the image list), page. */
typedef struct {
    const PictureSpec *ps;
    const Sentence *s;
    Trace *t;
    HtmlPage *pg;
    char *err;
    size_t errlen;
    int skipped;         /* heatmaps left out by the cap (max_heatmaps) */
} Show;

/* "self-attention", "masked self-attention", "cross-attention (encoder–decoder)". */
const char *pictures_kind_title(const char *kind);
/* A token as part of a file name: letters and digits, others '_', at most 24. */
void pictures_safe_name(char *out, size_t n, const char *tok);
/* DIR/file. */
void pictures_path(const Show *w, const char *file, char *path, size_t n);
/* The PNG text chunks of a picture: title, sentence, model, then map, layer
 * and head when not NULL, the knocked-out heads when there are some, and why
 * the sentence lies outside training when it does.  items must hold 8. */
RenderMeta pictures_meta(const Show *w, RenderMetaItem items[8], const char *title, const char *map,
                         const char *layer, const char *head);

/* The knock-out views (pictures_explain.c): for query token q, raw weights,
 * norm-weighted attention and rollout side by side; and the importance grids. */
int pictures_aggregate(Show *w, int q);
int pictures_importance(Show *w);

#endif
