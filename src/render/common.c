/* common.c — pieces shared by the layouts: the colour bar, masked cells.  See
 * draw.h. */
#include "render/draw.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

void draw_masked_cell(Canvas *c, int x, int y, int w, int h, int spacing) {
    canvas_fill_rect(c, x, y, w, h, COL_MASK);
    if (w >= 4 && h >= 4) canvas_hatch_rect(c, x, y, w, h, spacing, COL_HATCH);
}
