/* side.h — pictures already written (PNG files) put side by side in one
 * picture under a title, each with a caption above it: two lines views of a
 * comparison, A beside B, on one slide.  The pictures are read back with
 * libpng and copied pixel for pixel (no scaling); shorter ones are aligned to
 * the top.  The paths stay the caller's; the result is written atomically
 * like every render_* (render.h).  Errors: -1 and a one-line message in err
 * ("cannot read PATH: …", a picture too large to join). */
#ifndef ATTNVIZ_RENDER_SIDE_H
#define ATTNVIZ_RENDER_SIDE_H
#include "render/render.h"
#include <stddef.h>

#define RENDER_SIDE_MAX 4
/* n (1..RENDER_SIDE_MAX) PNG files in paths, left to right, each under its
 * caption (NULL: none), a title over all ('\n' starts a second, smaller line). */
int render_side_by_side(const char *path, const char *title, const char *const *paths, const char *const *captions,
                        int n, const RenderMeta *meta, char *err, size_t errlen);

#endif
