/* render.h — the pictures of attnviz: heatmaps, step strips, grids, lines views
 * and plots, written as deterministic PNG files (libpng) with text drawn by
 * FreeType in a real font (DejaVu Sans), so UTF-8 labels with French and
 * Vietnamese diacritics ("tôi đi học", "était fatigué") render correctly.
 *
 * Every render_* function writes to `path` through a temporary file in the same
 * folder and renames it into place, so a failure never leaves a half-written
 * PNG.  They return 0 on success, or -1 with a one-line message in `err`
 * (never exit).  Same input, same bytes: no timestamps, fixed layout.
 *
 * Colour:  RENDER_CMAP_VIRIDIS with the fixed scale vmin=0, vmax=1 for weights;
 * RENDER_CMAP_DIVERGING (blue–white–red) centred on 0 for scores, whose scale is
 * symmetric ±max|finite value| when vmin == vmax.  Masked cells (mask[i]==0) are
 * drawn grey with diagonal hatching and the `mask_label` text ("−∞" by default).
 * Values are printed in cells when the cells are big enough (show_values < 0 =
 * automatic; 0 never; 1 always when they fit), with a text colour that contrasts
 * with the cell.  Non-finite values that are not masked are drawn like masked
 * cells labelled "−∞"/"+∞"/"NaN" so nothing is silently wrong.
 *
 * Every PNG carries tEXt chunks: "Software" = "attnviz", plus the caller's
 * RenderMeta key/value pairs (e.g. "Title", "Sentence", "Model", "Layer", "Head").
 *
 * Fonts: render_font_path() finds the font: $ATTNVIZ_FONT, then the DejaVu paths
 * of Debian's fonts-dejavu-core.  All text functions fail with a clear message if
 * no font is found. */
#ifndef ATTNVIZ_RENDER_H
#define ATTNVIZ_RENDER_H
#include <stddef.h>

typedef enum { RENDER_CMAP_VIRIDIS = 0, RENDER_CMAP_DIVERGING = 1 } RenderCmap;

typedef struct {
    const char *key, *value;     /* PNG tEXt chunk (Latin-1 keyword, UTF-8 text → iTXt) */
} RenderMetaItem;

typedef struct {
    const RenderMetaItem *items;
    int n;
} RenderMeta;

/* One matrix to draw as a heatmap (also a panel of a strip or a grid cell). */
typedef struct {
    const char *title;               /* e.g. "encoder layer 0 · head 2 · weights" */
    const char *subtitle;            /* optional smaller line, e.g. the formula    */
    const float *values;             /* (rows, cols) row-major                      */
    int rows, cols;
    const char *const *row_labels;   /* rows UTF-8 strings (queries), or NULL → 0.. */
    const char *const *col_labels;   /* cols UTF-8 strings (keys), or NULL → 0..    */
    const char *row_axis;            /* axis caption, e.g. "query" (NULL = none)   */
    const char *col_axis;            /* e.g. "key"                                  */
    const unsigned char *mask;       /* (rows, cols) 1 = visible, 0 = masked; NULL  */
    const char *mask_label;          /* text in masked cells; NULL → "−∞"           */
    RenderCmap cmap;
    float vmin, vmax;                /* colour scale; diverging with vmin==vmax → auto symmetric */
    int show_values;                 /* -1 auto, 0 never, 1 when they fit           */
    int highlight_row;               /* row to outline (e.g. the pronoun), -1 none  */
    int outline;                     /* 1: a thick frame around the whole matrix (a
                                        taught head in a grid)                      */
    int no_arrow;                    /* strip: no arrow from this panel to the next
                                        (two matrices side by side, not two steps)  */
    const char *label_unit;          /* what a row is, in the thinned-labels note:
                                        "block" (a long text pooled); NULL "token"  */
} RenderHeatmap;

/* A single heatmap with its colour bar. */
int render_heatmap(const char *path, const RenderHeatmap *hm, const RenderMeta *meta,
                   char *err, size_t errlen);

/* Where render_heatmap puts things, for tests and for callers that overlay or
 * link regions (e.g. an HTML image map).  Cell (i, j) covers the square
 * x = matrix.x + j*cell, y = matrix.y + i*cell, cell × cell pixels. */
typedef struct { int x, y, w, h; } RenderRect;
typedef struct {
    int width, height;      /* of the whole picture */
    RenderRect matrix;      /* all cells */
    int cell;               /* side of one cell in pixels */
    RenderRect colorbar;    /* the colour strip (top = vmax) */
    float vmin, vmax;       /* colour scale actually used */
} RenderHeatmapGeometry;

int render_heatmap_geometry(const RenderHeatmap *hm, RenderHeatmapGeometry *geo,
                            char *err, size_t errlen);

/* Panels side by side (the step strip Q·Kᵀ → ÷√d_k → +mask → softmax → ·V), each
 * with its own colour bar, arrows between panels (none after a panel with
 * no_arrow), an overall title on top.  A strip wider than a 1920-px slide is
 * laid out again: smaller cells (down to 14 px, every label kept) and/or
 * panels in rows; with render_set_slide(1), the rows drawn largest on 16:9. */
int render_strip(const char *path, const char *title, const RenderHeatmap *panels, int n,
                 const RenderMeta *meta, char *err, size_t errlen);
/* The same layout for panels that are compared, not steps: arrows = 0 draws
 * none (render_strip is render_panels with arrows = 1). */
int render_panels(const char *path, const char *title, const RenderHeatmap *panels, int n,
                  int arrows, const RenderMeta *meta, char *err, size_t errlen);

/* "Model view": a rows × cols grid of small heatmaps (cells[r*cols+c]) with row
 * titles on the left (e.g. "layer 0") and column titles on top ("head 0"), one
 * shared colour bar (taken from cells[0]'s cmap and scale), an overall title;
 * a second line after a '\n' in title is drawn smaller (e.g. the sentence).
 * Thumbnails carry no per-cell text.  Up to 24 tokens every thumbnail has its
 * query and key labels; beyond, the outer edges carry them, thinned to every
 * k-th token so they stay legible (a note under the grid says so).  A cell
 * with outline set gets a thick frame.  Titles fold to the grid's width; a
 * grid wider than a 1920-px slide puts each layer's heads in several rows,
 * every thumbnail then with its head title. */
int render_grid(const char *path, const char *title, const RenderHeatmap *cells,
                int rows, int cols, const char *const *row_titles,
                const char *const *col_titles, const RenderMeta *meta,
                char *err, size_t errlen);

/* Lines view: query tokens in a left column, key tokens in a right column, one
 * line from each query to each key with opacity (and width) by weight.
 * weights (n_left, n_right).  focus_row >= 0 draws only that query's lines, in
 * strong colour, and dims the other tokens; -1 draws all rows.  mask as above.
 * The strongest link of the focus row is labelled with its weight. */
int render_lines(const char *path, const char *title, const char *const *left,
                 int n_left, const char *const *right, int n_right,
                 const float *weights, const unsigned char *mask, int focus_row,
                 const RenderMeta *meta, char *err, size_t errlen);

/* Line plot: n_series curves over shared x values, with axes, ticks, a legend,
 * optional log scale on y (log_y != 0; values <= 0 are skipped). */
typedef struct {
    const char *label;
    const float *y;                  /* n_points values */
} RenderSeries;

typedef struct {
    const char *title, *x_label, *y_label;
    const float *x;                  /* n_points x values (shared) */
    int n_points;
    const RenderSeries *series;
    int n_series;
    int log_x, log_y;
    int x_ticks_at_x;                /* 1: the x ticks are the x values themselves (the
                                        d_k measured), not round numbers */
} RenderPlot;

int render_plot(const char *path, const RenderPlot *plot, const RenderMeta *meta,
                char *err, size_t errlen);

/* A picture of a table of text (e.g. the √d_k table of means, shape diagrams):
 * cells[r*cols+c] UTF-8, first row drawn as a header. */
int render_table(const char *path, const char *title, const char *const *cells,
                 int rows, int cols, const RenderMeta *meta, char *err, size_t errlen);

/* Bar charts of candidates (bars.c): one row per item (e.g. a generation
 * step), its title on the left, then its k candidates as labelled horizontal
 * bars of length value (0..1, a probability), the chosen one drawn in the
 * accent colour.  labels (n, k), values (n, k), chosen (n): index 0..k-1 or -1. */
typedef struct {
    const char *title;               /* overall, a '\n' starts a smaller second line */
    int n, k;
    const char *const *row_titles;   /* (n) */
    const char *const *labels;       /* (n, k) */
    const float *values;             /* (n, k) in [0, 1] */
    const int *chosen;               /* (n) or NULL */
} RenderBars;

int render_bars(const char *path, const RenderBars *b, const RenderMeta *meta, char *err, size_t errlen);

/* An animated GIF (gif.c, giflib) of heatmaps drawn as render_heatmap draws
 * them, one frame each, `delay_cs` hundredths of a second apart (the last
 * frame three times as long), looping.  Each frame is drawn at the top left
 * of a white screen the size of the largest frame.  Colours are mapped
 * to one 256-colour palette: the colour map's ramp plus greys and the accents. */
int render_gif_heatmaps(const char *path, const RenderHeatmap *frames, int n, int delay_cs, char *err,
                        size_t errlen);

/* Slides: on = 1 writes every picture exactly 1920 x 1080 (scaled to fit,
 * centred on white); 0 (the default) keeps each picture's own size, scaled
 * down only when a side would be over 3000 px (render/fit.h). */
void render_set_slide(int on);

/* Path of the font in use, or NULL if none is found. */
const char *render_font_path(void);

/* Colour of the map at position t in [0, 1] (clamped): viridis from #440154 (0)
 * to #FDE725 (1); diverging from dark blue (0) through #F7F7F7 (0.5) to dark
 * red (1).  Exactly the colour a cell gets (tests compare pixels with it). */
void render_cmap_rgb(RenderCmap cmap, float t, unsigned char rgb[3]);

/* Position in [0, 1] of value v on the scale [vmin, vmax]; for the diverging
 * map with vmin < 0 < vmax, 0 is always at 0.5 (white). */
float render_cmap_position(RenderCmap cmap, float v, float vmin, float vmax);

/* Releases the font library and glyph cache (optional, e.g. before a leak
 * check); the next render_* call loads them again. */
void render_shutdown(void);

#endif
