/* draw.h — the rest of the renderer's private toolbox, being split into one
 * header per module (canvas.h, png.h, font.h, colormap.h, fmt.h, colorbar.h
 * so far): masked cells, heatmap cells.  Used only by the files of src/render/. */
#ifndef ATTNVIZ_RENDER_DRAW_H
#define ATTNVIZ_RENDER_DRAW_H
#include "render/canvas.h"
#include "render/colorbar.h"
#include "render/colormap.h"
#include "render/fmt.h"
#include "render/font.h"
#include "render/png.h"
#include "render/render.h"
#include <stddef.h>

/* ---- common.c ---------------------------------------------------------- */
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
