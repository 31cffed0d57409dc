/* canvas.h — an RGB picture in memory with the few anti-aliased primitives the
 * pictures need: rectangles, hatching, thick lines, triangles, circles, rounded
 * rectangles, arrows, and coverage-mask blits (font.h draws text with them);
 * and the palette every picture shares.
 *
 * Coordinates are pixels, x to the right, y down, (0,0) the top-left corner of
 * the top-left pixel; a pixel's centre is (x+0.5, y+0.5).  Everything clips to
 * the canvas, so callers may draw partly outside it.  `alpha` is an opacity in
 * [0, 1] blended over what is already there.
 *
 * Size: layouts pass the size they computed (as long, before any cast to int)
 * to canvas_init, which refuses pictures over CANVAS_MAX_SIDE a side or
 * CANVAS_MAX_PIXELS in all.
 *
 * Ownership: canvas_init allocates the pixels, canvas_free releases them
 * (accepts a zeroed or already freed canvas).  Errors: -1 and a one-line
 * message in err (core/errmsg.h); nothing prints or exits. */
#ifndef ATTNVIZ_RENDER_CANVAS_H
#define ATTNVIZ_RENDER_CANVAS_H
#include <stddef.h>

typedef struct { unsigned char r, g, b; } Rgb;

#define RGB_HEX(h) ((Rgb){(unsigned char)((h) >> 16), (unsigned char)((h) >> 8), (unsigned char)(h)})

/* Palette shared by every picture. */
#define COL_BG        RGB_HEX(0xFFFFFF)
#define COL_TEXT      RGB_HEX(0x1A1A1A)
#define COL_MUTED     RGB_HEX(0x5F6368)
#define COL_FAINT     RGB_HEX(0xA0A4A8)
#define COL_AXIS      RGB_HEX(0x3C3C3C)
#define COL_GRIDLINE  RGB_HEX(0xE4E6E8)
#define COL_FRAME     RGB_HEX(0x9A9A9A)   /* around a matrix */
#define COL_MASK      RGB_HEX(0xC4C4C4)   /* masked cell fill  */
#define COL_HATCH     RGB_HEX(0x7E7E7E)   /* its diagonal hatch */
#define COL_HILITE    RGB_HEX(0xF0521C)   /* highlighted row on viridis */
#define COL_HILITE_DIV RGB_HEX(0x111111)  /* highlighted row on the diverging map */

typedef struct {
    int w, h;
    unsigned char *px;   /* (h, w, 3) RGB, row-major */
} Canvas;

#define CANVAS_MAX_SIDE 16384
#define CANVAS_MAX_PIXELS (40L * 1000 * 1000)

/* A w × h canvas filled with bg.  0, or -1 with err: "picture would be W x H
 * pixels, too large to draw (draw fewer with --layers and --heads, or give a
 * shorter text)" or out of memory; c is then empty. */
int canvas_init(Canvas *c, long w, long h, Rgb bg, char *err, size_t errlen);
/* The same for the picture at path: its error names the file ("grid.decoder.
 * masked_self.png: picture would be …"). */
int canvas_init_named(Canvas *c, const char *path, long w, long h, Rgb bg, char *err, size_t errlen);
void canvas_free(Canvas *c);

void canvas_fill_rect(Canvas *c, int x, int y, int w, int h, Rgb col);
void canvas_blend_rect(Canvas *c, int x, int y, int w, int h, Rgb col, float alpha);
/* Outline of thickness t drawn inside the rectangle (x, y, w, h). */
void canvas_stroke_rect(Canvas *c, int x, int y, int w, int h, int t, Rgb col);
/* Diagonal "/" hatching over the rectangle, aligned to the canvas so that
 * neighbouring hatched rectangles join into one pattern. */
void canvas_hatch_rect(Canvas *c, int x, int y, int w, int h, int spacing, Rgb col);
/* The same bytes as canvas_fill_rect(bg) then canvas_hatch_rect(ink), a
 * row at a time: the hatch over one colour has `spacing` colours, and each
 * row is the one above moved by a pixel (the masked cells of a causal map). */
void canvas_fill_hatched(Canvas *c, int x, int y, int w, int h, int spacing, Rgb bg, Rgb ink);
/* Anti-aliased segment of the given width (round caps), opacity alpha. */
void canvas_line(Canvas *c, double x0, double y0, double x1, double y1, double width,
                 Rgb col, float alpha);
void canvas_fill_triangle(Canvas *c, double x0, double y0, double x1, double y1,
                          double x2, double y2, Rgb col, float alpha);
void canvas_fill_circle(Canvas *c, double cx, double cy, double r, Rgb col, float alpha);
void canvas_fill_round_rect(Canvas *c, double x, double y, double w, double h, double r,
                            Rgb col, float alpha);
/* Arrow from (x0,y0) to (x1,y1) with a filled head of length `head`. */
void canvas_arrow(Canvas *c, double x0, double y0, double x1, double y1, double width,
                  double head, Rgb col);
/* Blends an 8-bit coverage mask (mw × mh, `pitch` bytes a row) at (x, y). */
void canvas_blend_mask(Canvas *c, int x, int y, const unsigned char *mask, int mw, int mh,
                       int pitch, Rgb col, float alpha);

#endif
