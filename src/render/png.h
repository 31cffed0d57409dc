/* png.h — a Canvas (canvas.h) written as a PNG file with libpng.
 *
 * The file is 8-bit RGB without row filters (flat colour areas compress well
 * that way, and fast), the pixels deflated by Intel's ISA-L (igzip level 1)
 * when the build found libisal, else by libpng's zlib at level 2; libpng
 * writes every chunk.  A "Software" = "attnviz" text chunk comes first,
 * then the caller's RenderMeta items: ASCII values as tEXt, others as
 * UTF-8 iTXt, keywords cleaned to valid PNG keywords.  No time chunk, so the
 * same canvas and meta give the same bytes.
 *
 * Writing is atomic (core/fileio.h): a temporary file beside PATH renamed
 * into place, so a failure leaves PATH as it was.  The canvas and meta stay
 * the caller's.  Errors: -1 and a one-line message in err, e.g. "cannot write
 * PATH: reason"; nothing prints or exits.
 *
 * Size: the canvas is written at the page's size (page.h): as it is, or
 * scaled down when a side is over 3000 px, or onto a 1920 x 1080 slide. */
#ifndef ATTNVIZ_RENDER_PNG_H
#define ATTNVIZ_RENDER_PNG_H
#include "render/canvas.h"
#include "render/render.h"
#include <stddef.h>

/* meta may be NULL (only the Software chunk). */
int png_write_canvas(const char *path, const Canvas *c, const RenderMeta *meta,
                     char *err, size_t errlen);

#endif
