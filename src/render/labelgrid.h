/* labelgrid.h — a grid of named cells as a picture: each cell a filled box
 * with two lines of text (a name and a number, e.g. a head's role and its
 * score), row titles on the left ("layer 0"), column titles on top
 * ("head 0"), a title, and note lines under the grid (a legend, the
 * thresholds).  The fill's strength is the caller's: `strength` in [0, 1]
 * blends the cell's colour over white (1 = full colour), and the text turns
 * white on a dark fill.
 *
 * Writes PATH atomically (png.h); the same input gives the same bytes.
 * Everything stays the caller's.  Errors: -1 and a one-line message in err. */
#ifndef ATTNVIZ_RENDER_LABELGRID_H
#define ATTNVIZ_RENDER_LABELGRID_H
#include <stddef.h>
#include "render/render.h"

typedef struct {
    const char *name;           /* first line, bold ("induction")            */
    const char *value;          /* second line ("0.83"), or NULL              */
    unsigned char rgb[3];       /* the cell's colour at full strength         */
    float strength;             /* 0 … 1: how much of it over white           */
} RenderLabelCell;

typedef struct {
    const char *title;          /* top line, bold                             */
    const char *subtitle;       /* a smaller line under it, or NULL           */
    const RenderLabelCell *cells;   /* (rows, cols) row-major                 */
    int rows, cols;
    const char *const *row_titles;  /* rows strings, or NULL → "0", "1", …   */
    const char *const *col_titles;  /* cols strings, or NULL                  */
    const char *const *notes;   /* lines under the grid                       */
    int n_notes;
} RenderLabelGrid;

int render_label_grid(const char *path, const RenderLabelGrid *g, const RenderMeta *meta, char *err, size_t errlen);

#endif
