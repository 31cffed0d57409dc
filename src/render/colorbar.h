/* colorbar.h — the colour bar beside a heatmap or grid: a vertical strip of
 * the colour map, vmax at the top and vmin at the bottom, in a grey frame,
 * with tick marks and labels to its right (0, 0.25 … 1 for the weight scale,
 * else a round step, about one tick per 36 px, never fewer than 3 ticks).
 *
 * A layout asks colorbar_width for the room the bar and its labels take, then
 * draws it with colorbar_draw at the same bar width, height and font size.
 * Needs the font loaded (font_ensure, font.h).  Nothing allocates. */
#ifndef ATTNVIZ_RENDER_COLORBAR_H
#define ATTNVIZ_RENDER_COLORBAR_H
#include "render/canvas.h"
#include "render/render.h"

/* Width in pixels of a bar_w × h bar on [vmin, vmax] with its tick labels at
 * font_px. */
int colorbar_width(float vmin, float vmax, int bar_w, int h, int font_px);
/* The tick values of a bar of height h on [vmin, vmax] (at most max_ticks) and
 * their step; returns how many (0 for an empty scale, else at least 3). */
int colorbar_ticks(float vmin, float vmax, int h, double *ticks, int max_ticks, double *step);
/* The bar with its top-left corner at (x, y). */
void colorbar_draw(Canvas *c, int x, int y, int bar_w, int h, RenderCmap cmap, float vmin,
                   float vmax, int font_px);

#endif
