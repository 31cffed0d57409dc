/* fit.h — the size every picture is written at (png_write_canvas calls
 * fit_canvas just before writing).
 *
 * By default a picture keeps the size its layout gave it; one that still has
 * a side over FIT_MAX_SIDE (3000 px) is scaled down to fit, keeping its
 * proportions (area averaging, so thin lines and text stay smooth).  The
 * layouts keep pictures within a slide's width (FIT_SLIDE_W) first: wrapped
 * titles, step strips in rows with smaller cells, a model view's heads in
 * rows (heatmap.c, grid.c), so this is a last resort for very long inputs.
 *
 * A slide page (render_set_slide(1), render.h; `--slide` on the command line)
 * makes every picture exactly FIT_SLIDE_W × FIT_SLIDE_H: scaled up or down
 * to the largest size that fits (bilinear up, area averaging down) and
 * centred on white, so small pictures get large labels.
 *
 * The setting is process-wide, like the font cache (not thread-safe).
 * Ownership: fit_canvas fills `out` (canvas_init); the caller frees it with
 * canvas_free.  Errors: -1 and a one-line message in err. */
#ifndef ATTNVIZ_RENDER_FIT_H
#define ATTNVIZ_RENDER_FIT_H
#include "render/canvas.h"
#include <stddef.h>

#define FIT_MAX_SIDE 3000
#define FIT_SLIDE_W 1920
#define FIT_SLIDE_H 1080

/* 1 when pictures are written as slides. */
int fit_is_slide(void);
void fit_set_slide(int on);

/* 1 when `in` must be rescaled before it is written (then fit_canvas fills out),
 * 0 when it is written as it is. */
int fit_needed(const Canvas *in);
/* `in` scaled (and for a slide, centred on a white page) into out.  0 or -1. */
int fit_canvas(const Canvas *in, Canvas *out, char *err, size_t errlen);

/* The scale a w × h picture is drawn at on the page (1 when it keeps its size). */
double fit_scale(long w, long h);

#endif
