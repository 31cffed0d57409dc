/* pictures_common.h — what the picture modules of a sentence share: what to
 * draw (PictureSpec, filled by the caller of pictures.h), the sentence being
 * drawn (Show) and the helpers every picture uses for its file name, path and
 * PNG text chunks.  pictures.c draws the maps, pictures_explain.c the views
 * that test them; callers use pictures.h (which includes this) and
 * pictures_explain.h.  Nothing here allocates. */
#ifndef ATTNVIZ_PICTURES_COMMON_H
#define ATTNVIZ_PICTURES_COMMON_H
#include <stddef.h>
#include "pipeline/attribution.h"
#include "pipeline/importance.h"
#include "pipeline/links.h"
#include "net/model_file.h"
#include "pipeline/sentence.h"
#include "render/html.h"
#include "render/render.h"
#include "trace/trace.h"

enum { PICTURES_TRACE_AUTO = 0, PICTURES_TRACE_JSON, PICTURES_TRACE_BIN };

typedef struct {
    const char *dir;          /* the sentence's output folder                          */
    const char *model_path;   /* shown on the page and in PNG text chunks              */
    const char *command;      /* the command line that made it, shown on the page      */
    const char *query;        /* lines views for this source token; NULL: the pronouns */
    int focus_map, focus_head;/* the step strip's head (map index; -1: none)           */
    int focus_given;          /* 1: the user chose it (--focus)                        */
    const LinksFound *links;  /* each query token's link, as decided (links_find): one
                                 lines view and heatmap each, nothing decided again      */
    int n_links;
    const Trace *words;       /* the maps merged into words (words.h) that links' positions
                                 count, drawn by the lines views and their heatmaps;
                                 NULL: the trace's own tokens                            */
    const int *word_first;    /* with words: each word's first piece (words.h), the position
                                 a long text's pooled maps and passage count             */
    int keep_steps;           /* 1: trace.json keeps every head's step matrices;
                                 0: only the weights (the strip's head is drawn first) */
    int no_pictures;          /* 1: trace.json and index.html only                     */
    CorefHead coref;          /* the model's coreference head (layer -1: none)         */
    const char *ablated;      /* knocked-out heads "encoder.2.self.0, …" (NULL/"": none);
                                 named in titles and PNG text chunks                     */
    const Importance *importance; /* run --importance: the grids (NULL: none)            */
    const Attribution *attribution; /* run/generate --attribution: attribution.png (NULL: none) */
    const char *metadata;     /* the checkpoint's metadata JSON (NULL: none): which heads
                                 were taught (supervised_heads), marked in every picture */
    const float *rollout;     /* (E, S, S) encoder rollout (aggregate.h), or NULL: with the
                                 norm-weighted matrices in the trace, drawn beside the raw
                                 weights of each query token                             */
    /* Real models (12 layers × 12 heads, hundreds of tokens): */
    const unsigned char *layer_on; int n_layer_on;  /* 1 = draw layer l; NULL: every layer */
    const unsigned char *head_on;  int n_head_on;   /* 1 = draw head h; NULL: every head   */
    int max_heatmaps;         /* per-head heatmaps at most (in map order); 0: no cap   */
    int chosen_heads;         /* 1: --layers, --heads or --max-pictures was given; 0: a
                                 long text (stream) draws only the heatmaps of its links'
                                 heads and the strip's (the grid shows every head)        */
    int lines_top;            /* lines views: the query and its k strongest keys; 0: all */
    int no_trace;             /* 1: no trace.json (--trace none)                       */
    int trace_format;         /* PICTURES_TRACE_AUTO: trace.json up to TRACE_JSON_MAX_BYTES
                                 of JSON, trace.bin past it; _JSON, _BIN: that one        */
    int trace_f16;            /* trace.bin's weights in half precision (trace_bin.h)     */
    const char *outside;      /* "outside what the model was trained on: …" (world.h), or
                                 NULL/"": on the grids' second title line, the page, and
                                 marked on every heatmap's subtitle                      */
    int sinks;                /* 1: caption a first-token "attention sink" (pictures_sink)
                                 on heatmaps, the grid's page section and index.html      */
    int link_heads;           /* 1: under each pronoun's lines view, every head whose
                                 strongest link from it goes to a content word            */
    const struct HeadRoles *head_roles; /* run --head-roles (head_roles.h): the trace's
                                 head_roles and head_roles.png; NULL: none                */
    struct LongText *stream;   /* a long text (longtext.h): t holds its maps pooled,
                                 rows the kept rows the links' positions count; the
                                 trace.bin it streamed is finished with stream_members'
                                 members and t's images; NULL: t is the whole trace    */
    const Trace *stream_members;
    const char *origin;       /* attnviz view: "weights from FILE, computed outside attnviz …"
                                 on every heatmap's subtitle, the grids and the page, with
                                 each map's causal mask and padded rows said (NULL: run) */
} PictureSpec;

/* The piece position of link position q (a word's first piece when the links
 * count words, ps->word_first; else q itself). */
int pictures_piece(const PictureSpec *ps, int q);

/* One sentence being drawn: its spec, sentence, trace (gains the image list),
 * page, and the pictures waiting to be drawn side by side (pictures.c). */
typedef struct PicJob PicJob;
typedef struct {
    const PictureSpec *ps;
    const Sentence *s;
    Trace *t;
    HtmlPage *pg;
    char *err;
    size_t errlen;
    int skipped;         /* heatmaps left out by the cap (max_heatmaps) */
    PicJob *jobs;
    int n_jobs, cap_jobs;
} Show;

/* A token as part of a file name: letters (lowercased: "It" → "it") and
 * digits, others '_', at most 24. */
void pictures_safe_name(char *out, size_t n, const char *tok);
/* DIR/file. */
void pictures_path(const Show *w, const char *file, char *path, size_t n);
/* The PNG text chunks of a picture: title, sentence, model, then map, layer
 * and head when not NULL, the knocked-out heads when there are some, and why
 * the sentence lies outside training when it does.  items must hold 8. */
RenderMeta pictures_meta(const Show *w, RenderMetaItem items[8], const char *title, const char *map,
                         const char *layer, const char *head);
/* What the modern families add to a picture's text, "" (or -1) for a map
 * without it:
 *   pictures_kv_note    "K/V head 1, shared with heads 2–3" for head h of a map
 *                       with grouped-query attention (n_kv_heads < n_heads)
 *   pictures_kv_groups  "heads 0–1 share K/V head 0, 2–3 K/V head 1, …"
 *   pictures_sink       the mean weight rows 1 … Tq−1 of head h put on key 0
 *                       (the first token), when the spec asks for sinks and it
 *                       is above PICTURES_SINK_MIN: an "attention sink", where a
 *                       head with nothing to look for parks its weight; else -1 */
#define PICTURES_SINK_MIN 0.5f
/*   pictures_window     the most keys a query row sees when the map is a
 *                       sliding-window layer (some row cannot see an earlier key
 *                       that sees itself: not padding), else 0 */
const char *pictures_kv_note(const TraceMap *m, int h, char *buf, size_t n);
int pictures_window(const TraceMap *m);
const char *pictures_kv_groups(const TraceMap *m, char *buf, size_t n);
float pictures_sink(const PictureSpec *ps, const TraceMap *m, int h);

/* 1 if "MAP.H" is an item of a list "encoder.2.self.0, decoder.1.cross.3". */
int pictures_list_has(const char *list, const char *map, int head);

#endif
