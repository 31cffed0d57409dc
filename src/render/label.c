/* label.c — see label.h. */
#include "render/label.h"
#include <stdio.h>

int label_fit(FontStyle st, int px, const char *const *labels, int i, int max_w, char *out,
              size_t outlen) {
    char index[16];
    const char *s = labels ? labels[i] : NULL;
    if (!s) {
        snprintf(index, sizeof index, "%d", i);
        s = index;
    }
    return font_fit(st, px, s, max_w, out, outlen);
}
