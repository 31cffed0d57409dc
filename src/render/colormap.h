/* colormap.h — the colours of values: viridis (perceptually uniform, for
 * weights in [0, 1]) and a blue–white–red diverging map centred on 0 (for
 * scores); the scale a heatmap is drawn on; a readable text colour on a cell.
 *
 * The public halves live in render.h: render_cmap_rgb (the colour at a
 * position in [0, 1]) and render_cmap_position (where a value sits on a
 * scale).  Nothing here allocates; the viridis table is built on first use. */
#ifndef ATTNVIZ_RENDER_COLORMAP_H
#define ATTNVIZ_RENDER_COLORMAP_H
#include "render/canvas.h"
#include "render/render.h"

/* Colour of value v on the scale [vmin, vmax] (clamped). */
Rgb cmap_value(RenderCmap cmap, float v, float vmin, float vmax);
/* Black or white, whichever contrasts more with the background. */
Rgb cmap_text_on(Rgb bg);
/* The scale for n heatmaps drawn together with hms[0]'s map and scale:
 * diverging with vmin == vmax → symmetric ±max|finite unmasked value| over
 * all n (1 if there is none); an empty scale → [0, 1]; otherwise as given. */
void cmap_scale(const RenderHeatmap *hms, int n, float *vmin, float *vmax);

#endif
