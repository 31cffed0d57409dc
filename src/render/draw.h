/* draw.h — the rest of the renderer's private toolbox, being split into one
 * header per module (the canvas and palette: canvas.h; the PNG writer: png.h): text through
 * FreeType, colour maps, number formatting and the colour bar.
 * Used only by the files of src/render/.  The font library and glyph cache
 * are process-wide, loaded on first use, released by render_shutdown(). */
#ifndef ATTNVIZ_RENDER_DRAW_H
#define ATTNVIZ_RENDER_DRAW_H
#include "render/canvas.h"
#include "render/png.h"
#include "render/render.h"
#include <stddef.h>

/* ---- font.c ------------------------------------------------------------ */
typedef enum { FONT_REGULAR = 0, FONT_BOLD = 1 } FontStyle;

/* Loads FreeType and the faces on first call.  0, or -1 and `err`. */
int font_ensure(char *err, size_t errlen);
/* Advance width of the UTF-8 text in pixels. */
int font_width(FontStyle st, int px, const char *s);
/* Ascender (>0) and descender (>0, below the baseline) of the face at px. */
void font_vmetrics(FontStyle st, int px, int *ascent, int *descent);
/* Text with its baseline's left end at (x, baseline). */
void font_draw(Canvas *c, FontStyle st, int px, int x, int baseline, const char *s, Rgb col);
/* Horizontal helpers: right-aligned at x_right, centred on cx. */
void font_draw_right(Canvas *c, FontStyle st, int px, int x_right, int baseline, const char *s, Rgb col);
void font_draw_center(Canvas *c, FontStyle st, int px, int cx, int baseline, const char *s, Rgb col);
/* Text rotated counter-clockwise by `degrees` about its baseline origin (x, y). */
void font_draw_rotated(Canvas *c, FontStyle st, int px, double x, double y, double degrees,
                       const char *s, Rgb col);
/* Copies s into out, cut at a character boundary and ended with "…" when it is
 * wider than max_w pixels.  Returns the width of the result. */
int font_fit(FontStyle st, int px, const char *s, int max_w, char *out, size_t outlen);
/* Baseline that centres lowercase-and-capital text vertically on cy. */
int font_center_baseline(int px, double cy);

/* ---- colormap.c -------------------------------------------------------- */
/* Colour of value v on the scale [vmin, vmax] (clamped). */
Rgb cmap_value(RenderCmap cmap, float v, float vmin, float vmax);
/* Black or white, whichever contrasts more with the background. */
Rgb cmap_text_on(Rgb bg);
/* The scale actually used for a heatmap: diverging with vmin == vmax → symmetric
 * ±max|finite unmasked value| (1 if there is none); otherwise as given. */
void cmap_scale(const RenderHeatmap *hm, float *vmin, float *vmax);

/* ---- common.c ---------------------------------------------------------- */
/* A cell value: 2 decimals below 10, 3 significant digits above, integers up to
 * 99999, then compact exponent ("-1e9"); "−∞", "+∞", "NaN" for non-finite. */
void fmt_value(char *out, size_t outlen, float v);
/* A tick label: shortest form with the decimals the step needs ("0.25", "1", "-10"). */
void fmt_tick(char *out, size_t outlen, double v, double step);
/* Nice tick step for the range divided into about `target` intervals. */
double nice_step(double range, int target);
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
