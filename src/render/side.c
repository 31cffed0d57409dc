/* side.c — see side.h.  libpng's simplified reader (png_image) reads each
 * picture as 8-bit RGB over white. */
#include "render/side.h"
#include "render/canvas.h"
#include "render/font.h"
#include "render/label.h"
#include "render/png.h"
#include "core/errmsg.h"
#include <png.h>
#include <stdlib.h>
#include <string.h>

#define MARGIN 24
#define GAP 32
#define TITLE_PX 22
#define SUB_PX 15
#define CAPTION_PX 17

typedef struct {
    int w, h;
    unsigned char *px;   /* (h, w, 3) */
} SideImage;

static int side_read(SideImage *im, const char *path, char *err, size_t errlen) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path))
        return errmsg_set(err, errlen, "cannot read %s: %s", path, img.message);
    img.format = PNG_FORMAT_RGB;
    if (img.width > CANVAS_MAX_SIDE || img.height > CANVAS_MAX_SIDE) {
        png_image_free(&img);
        return errmsg_set(err, errlen, "%s is %ux%u pixels, too large to join", path, img.width, img.height);
    }
    im->w = (int)img.width;
    im->h = (int)img.height;
    im->px = malloc(PNG_IMAGE_SIZE(img));
    png_color white = {255, 255, 255};
    if (!im->px || !png_image_finish_read(&img, &white, im->px, 0, NULL)) {
        png_image_free(&img);
        return errmsg_set(err, errlen, "cannot read %s: %s", path, im->px ? img.message : "out of memory");
    }
    return 0;
}

static int text_height(FontStyle st, int px) {
    int asc, desc;
    font_vmetrics(st, px, &asc, &desc);
    return asc + desc;
}

/* The title's first line bold, the rest (after '\n') smaller; returns the y below. */
static int draw_title(Canvas *c, const char *title, int *width) {
    const char *nl = strchr(title, '\n');
    char first[1024];
    snprintf(first, sizeof first, "%.*s", nl ? (int)(nl - title) : (int)strlen(title), title);
    int asc, desc, y = MARGIN;
    font_vmetrics(FONT_BOLD, TITLE_PX, &asc, &desc);
    if (c) font_draw(c, FONT_BOLD, TITLE_PX, MARGIN, y + asc, first, COL_TEXT);
    *width = font_width(FONT_BOLD, TITLE_PX, first);
    y += asc + desc + 6;
    if (nl) {
        font_vmetrics(FONT_REGULAR, SUB_PX, &asc, &desc);
        if (c) font_draw(c, FONT_REGULAR, SUB_PX, MARGIN, y + asc, nl + 1, COL_MUTED);
        int w2 = font_width(FONT_REGULAR, SUB_PX, nl + 1);
        if (w2 > *width) *width = w2;
        y += asc + desc + 6;
    }
    return y + 8;
}

/* Lays out (c NULL) or draws the title, captions and pictures; returns the size. */
static void side_walk(Canvas *c, const char *title, const SideImage *im, const char *const *captions, int n,
                      long *w, long *h) {
    int tw, top = draw_title(c, title, &tw), cap_h = 0, x = MARGIN, tallest = 0, pitch = text_height(FONT_BOLD, CAPTION_PX) + 2;
    LabelLines ls[RENDER_SIDE_MAX];
    for (int i = 0; captions && i < n; i++) {   /* folded to its picture's width, never cut */
        ls[i].n = 0;
        if (captions[i]) label_wrap(FONT_BOLD, CAPTION_PX, captions[i], im[i].w, &ls[i]);
        if (ls[i].n && ls[i].n * pitch + 6 > cap_h) cap_h = ls[i].n * pitch + 6;
    }
    for (int i = 0; i < n; i++) {
        if (c && captions && ls[i].n) {
            int asc, desc;
            font_vmetrics(FONT_BOLD, CAPTION_PX, &asc, &desc);
            label_draw_lines(c, FONT_BOLD, CAPTION_PX, x, top + asc, pitch, &ls[i], COL_TEXT);
        }
        for (int r = 0; c && r < im[i].h; r++)
            memcpy(c->px + ((size_t)(top + cap_h + r) * c->w + x) * 3, im[i].px + (size_t)r * im[i].w * 3,
                   (size_t)im[i].w * 3);
        if (c) canvas_stroke_rect(c, x - 1, top + cap_h - 1, im[i].w + 2, im[i].h + 2, 1, COL_GRIDLINE);
        x += im[i].w + GAP;
        if (im[i].h > tallest) tallest = im[i].h;
    }
    *w = x - GAP + MARGIN;
    if (MARGIN + tw + MARGIN > *w) *w = MARGIN + tw + MARGIN;
    *h = top + cap_h + tallest + MARGIN;
}

int render_side_by_side(const char *path, const char *title, const char *const *paths, const char *const *captions,
                        int n, const RenderMeta *meta, char *err, size_t errlen) {
    if (n < 1 || n > RENDER_SIDE_MAX || !paths || !title)
        return errmsg_set(err, errlen, "side by side: 1..%d pictures, got %d", RENDER_SIDE_MAX, n);
    if (font_ensure(err, errlen)) return -1;
    SideImage im[RENDER_SIDE_MAX] = {{0}};
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) rc = side_read(&im[i], paths[i], err, errlen);
    if (rc == 0) {
        long w, h;
        side_walk(NULL, title, im, captions, n, &w, &h);
        Canvas c;
        rc = canvas_init(&c, w, h, COL_BG, err, errlen);
        if (rc == 0) {
            side_walk(&c, title, im, captions, n, &w, &h);
            rc = png_write_canvas(path, &c, meta, err, errlen);
            canvas_free(&c);
        }
    }
    for (int i = 0; i < n; i++) free(im[i].px);
    return rc;
}
