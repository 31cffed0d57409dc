/* label.h — token labels of the pictures' axes and columns: entry i of a list
 * of UTF-8 strings, or its index ("0", "1", …) when the list or the entry is
 * NULL, cut to a width with "…" (font_fit, font.h).  The list stays the
 * caller's; the result goes into the caller's buffer. */
#ifndef ATTNVIZ_RENDER_LABEL_H
#define ATTNVIZ_RENDER_LABEL_H
#include "render/font.h"
#include <stddef.h>

/* Label i of labels, fitted into max_w pixels, into out.  Returns its width. */
int label_fit(FontStyle st, int px, const char *const *labels, int i, int max_w, char *out,
              size_t outlen);

#endif
