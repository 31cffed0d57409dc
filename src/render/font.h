/* font.h — text on a canvas through FreeType, in DejaVu Sans regular and bold
 * (a missing bold file is replaced by emboldening the regular face).
 *
 * Strings are UTF-8; malformed bytes draw as U+FFFD, so French and Vietnamese
 * diacritics ("tôi đi học") and typographic signs ("−∞", "…") come out right.
 * Sizes are in pixels (`px`, the em size).  Horizontal text is kerned, drawn
 * from a glyph cache with its baseline's left end at (x, baseline); rotated
 * text goes through FreeType's transform.
 *
 * Lifetime: the FreeType library, the faces and the glyph cache are
 * process-wide.  font_ensure loads them on first use (every render_* calls it
 * before measuring anything); render_shutdown() (render.h) releases them.
 * Before font_ensure, widths are 0 and nothing is drawn.  Not thread-safe.
 * The font file is found as render_font_path() (render.h) says.
 *
 * Errors: font_ensure returns -1 with a one-line message in err that says how
 * to get a font; nothing prints or exits. */
#ifndef ATTNVIZ_RENDER_FONT_H
#define ATTNVIZ_RENDER_FONT_H
#include "render/canvas.h"
#include <stddef.h>

typedef enum { FONT_REGULAR = 0, FONT_BOLD = 1 } FontStyle;

/* Loads FreeType and the faces on first call.  0, or -1 and `err`. */
int font_ensure(char *err, size_t errlen);
/* Advance width of the UTF-8 text in pixels. */
int font_width(FontStyle st, int px, const char *s);
/* Ascender (>0) and descender (>0, below the baseline) of the face at px. */
void font_vmetrics(FontStyle st, int px, int *ascent, int *descent);
/* Baseline that centres lowercase-and-capital text vertically on cy. */
int font_center_baseline(int px, double cy);

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

#endif
