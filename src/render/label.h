/* label.h — token labels of the pictures' axes and columns, and titles folded
 * to a picture's width.
 *
 * A token label is entry i of a list of UTF-8 strings, or its index ("0", "1",
 * …) when the list or the entry is NULL, cut to a width with "…" (font_fit,
 * font.h).  A label may carry a second, smaller part after a tab,
 * "sister\tma": the word a decoder row writes, then the input word it reads;
 * label_draw_right draws that part small and muted left of the first.
 *
 * label_wrap folds a title or caption at spaces into lines no wider than a
 * width (a word wider than the width alone is cut with "…"), at most
 * LABEL_WRAP_LINES lines, the last ended with "…" when the text needs more.
 *
 * Everything stays the caller's: results go into the caller's buffers. */
#ifndef ATTNVIZ_RENDER_LABEL_H
#define ATTNVIZ_RENDER_LABEL_H
#include "render/font.h"
#include <stddef.h>

/* Label i of labels, fitted into max_w pixels, into out ("main\tsmall" when
 * the label has a second part and there is room for it).  Returns its width. */
int label_fit(FontStyle st, int px, const char *const *labels, int i, int max_w, char *out,
              size_t outlen);

/* A label fitted by label_fit, its right end at x_right: the first part in
 * style st and colour col, the second (after a tab) smaller and muted. */
void label_draw_right(Canvas *c, FontStyle st, int px, int x_right, int baseline, const char *fitted, Rgb col);

/* Size of the second part of a label drawn at px. */
int label_small_px(int px);

#define LABEL_WRAP_LINES 8
typedef struct {
    int n;                                   /* lines used (0 for an empty text) */
    int w;                                   /* width of the widest line          */
    char line[LABEL_WRAP_LINES][512];
} LabelLines;

/* text folded into lines of at most max_w pixels at style st and size px.
 * Returns out->n. */
int label_wrap(FontStyle st, int px, const char *text, int max_w, LabelLines *out);

/* Lines of a wrapped text, the first baseline at `baseline`, one line every
 * `pitch` pixels, left-aligned at x.  Returns the baseline after the last. */
int label_draw_lines(Canvas *c, FontStyle st, int px, int x, int baseline, int pitch, const LabelLines *ls, Rgb col);

#endif
