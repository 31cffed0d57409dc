/* draw.h — the rest of the renderer's private toolbox, being split into one
 * header per module (canvas.h, png.h, font.h, colormap.h, fmt.h so far):
 * the colour bar, masked cells.  Used only by the files of src/render/. */
#ifndef ATTNVIZ_RENDER_DRAW_H
#define ATTNVIZ_RENDER_DRAW_H
#include "render/canvas.h"
#include "render/colormap.h"
#include "render/fmt.h"
#include "render/font.h"
#include "render/png.h"
#include "render/render.h"
#include <stddef.h>

/* ---- common.c ---------------------------------------------------------- */
/* Colour bar: ticks for the scale; width needed including tick labels. */
int colorbar_width(RenderCmap cmap, float vmin, float vmax, int bar_w, int h, int font_px);
void colorbar_draw(Canvas *c, int x, int y, int bar_w, int h, RenderCmap cmap, float vmin,
                   float vmax, int font_px);
/* Fills the cell rectangle for a masked (or non-finite) cell. */
void draw_masked_cell(Canvas *c, int x, int y, int w, int h, int spacing);

/* ---- heatmap.c --------------------------------------------------------- */
/* The cells of a heatmap at (x, y), `cell` px each, white separators when
 * `gap`; masked and non-finite cells grey and hatched (no text). */
void hm_draw_cells(Canvas *c, const RenderHeatmap *hm, int x, int y, int cell, int gap,
                   float vmin, float vmax);
/* Label i of a list, or its index when the list (or the entry) is NULL. */
const char *hm_label(const char *const *labels, int i, char *buf, size_t buflen);

#endif
