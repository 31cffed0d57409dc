/* heatmap.h — the parts of a heatmap that other layouts reuse (the grid draws
 * its thumbnails with them).  The pictures themselves, render_heatmap,
 * render_strip and render_panels, are declared in render.h.
 *
 * A matrix of hm->rows × hm->cols cells is drawn with its top-left corner at
 * (x, y), `cell` pixels a cell: cell (i, j) covers x + j·cell, y + i·cell.
 * The heatmap and its arrays stay the caller's; nothing allocates. */
#ifndef ATTNVIZ_RENDER_HEATMAP_H
#define ATTNVIZ_RENDER_HEATMAP_H
#include "render/canvas.h"
#include "render/render.h"

/* The cells coloured on the scale [vmin, vmax], 1 px white separators when
 * `gap`, a grey frame just outside; masked and non-finite cells grey and
 * hatched, without text. */
void heatmap_draw_cells(Canvas *c, const RenderHeatmap *hm, int x, int y, int cell, int gap,
                        float vmin, float vmax);
/* Outline of thickness t around row hm->highlight_row (none when it is out of
 * range), in the highlight colour of hm's map. */
void heatmap_draw_highlight(Canvas *c, const RenderHeatmap *hm, int x, int y, int cell, int t);

/* The whole picture render_heatmap writes, drawn on a new canvas c (the
 * caller frees it with canvas_free): for frames of an animation.  0, or -1
 * with err (c then empty). */
int heatmap_draw_canvas(Canvas *c, const RenderHeatmap *hm, char *err, size_t errlen);

#endif
