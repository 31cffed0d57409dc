/* sheet.h — a printable worksheet as a picture: headings and small matrices
 * of boxed cells laid out left to right (a new line when the next matrix does
 * not fit, or when it asks for one), each cell holding its text or left as an
 * empty box for the student to fill.  `attnviz worksheet` draws its exercises
 * and its answer key with it (pipeline/worksheet.h).
 *
 * Everything given stays the caller's; render_sheet writes the PNG atomically
 * like every render_* (render.h).  Errors: -1 and a one-line message in err. */
#ifndef ATTNVIZ_RENDER_SHEET_H
#define ATTNVIZ_RENDER_SHEET_H
#include "render/render.h"
#include <stddef.h>

/* One piece of the sheet: a heading line (rows == 0: caption drawn large, on a
 * line of its own; a second line after a '\n' drawn smaller under it) or a
 * matrix of rows × cols boxed cells under its caption. */
typedef struct {
    const char *caption;               /* bold line above the matrix, or the heading */
    int rows, cols;                    /* rows 0: a heading                          */
    const char *const *cells;          /* (rows, cols) UTF-8; NULL or "": an empty box
                                          (the whole array NULL: every box empty)     */
    const char *const *row_labels;     /* (rows) left of the rows, or NULL           */
    const char *const *col_labels;     /* (cols) above the columns, or NULL          */
    int given;                         /* 1: data the student starts from (grey fill) */
    int new_line;                      /* 1: starts a new line of matrices           */
} RenderSheetBlock;

/* Title (bold), then the lines of `notes` ('\n' separates them), then the
 * blocks in order.  At most RENDER_SHEET_MAX_W pixels wide unless a single
 * matrix is wider.  0, or -1 with err. */
#define RENDER_SHEET_MAX_W 1600
int render_sheet(const char *path, const char *title, const char *notes, const RenderSheetBlock *blocks,
                 int n, const RenderMeta *meta, char *err, size_t errlen);

#endif
