/* gif.c — animated GIFs of heatmaps (render_gif_heatmaps in render.h),
 * encoded with giflib into memory and written atomically (core/fileio.h).
 *
 * The palette (256 colours): 192 steps of the colour map's ramp, 56 greys
 * from black to white (text, frames, masked cells, their hatching), and the
 * accents of canvas.h.  Each pixel takes the nearest palette colour; the
 * nearest is looked up once per 15-bit colour (a 32768-entry table).
 * After the first frame, each frame holds only the rectangle that changed
 * (the rest of the previous frame stays: disposal "do not dispose"). */
#include "render/canvas.h"
#include "render/heatmap.h"
#include "render/render.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <gif_lib.h>
#include <stdlib.h>
#include <string.h>

#define RAMP 192
#define GREYS 56

typedef struct {
    GifColorType pal[256];
    short near[32768];   /* 15-bit colour → palette index, -1 until looked up */
} Palette;

static void palette_init(Palette *p, RenderCmap cmap) {
    for (int i = 0; i < RAMP; i++) {
        unsigned char c[3];
        render_cmap_rgb(cmap, (float)i / (RAMP - 1), c);
        p->pal[i] = (GifColorType){c[0], c[1], c[2]};
    }
    for (int i = 0; i < GREYS; i++) {
        unsigned char v = (unsigned char)(i * 255 / (GREYS - 1));
        p->pal[RAMP + i] = (GifColorType){v, v, v};
    }
    Rgb acc[8] = {COL_HILITE, COL_HILITE_DIV, COL_MASK, COL_HATCH, COL_FRAME, COL_TEXT, COL_MUTED, COL_GRIDLINE};
    for (int i = 0; i < 8; i++) p->pal[RAMP + GREYS + i] = (GifColorType){acc[i].r, acc[i].g, acc[i].b};
    memset(p->near, 0xff, sizeof p->near);
}

static int nearest(Palette *p, const unsigned char *px) {
    int key = (px[0] >> 3) << 10 | (px[1] >> 3) << 5 | px[2] >> 3;
    if (p->near[key] >= 0) return p->near[key];
    long best = -1;
    int bi = 0;
    for (int i = 0; i < 256; i++) {
        long dr = px[0] - p->pal[i].Red, dg = px[1] - p->pal[i].Green, db = px[2] - p->pal[i].Blue;
        long d = dr * dr + dg * dg + db * db;
        if (best < 0 || d < best) { best = d; bi = i; }
    }
    return p->near[key] = (short)bi;
}

typedef struct { unsigned char *buf; size_t len, cap; } MemOut;

static int mem_write(GifFileType *gif, const GifByteType *data, int n) {
    MemOut *m = gif->UserData;
    if (m->len + (size_t)n > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 65536;
        while (cap < m->len + (size_t)n) cap *= 2;
        unsigned char *b = realloc(m->buf, cap);
        if (!b) return 0;
        m->buf = b; m->cap = cap;
    }
    memcpy(m->buf + m->len, data, (size_t)n);
    m->len += (size_t)n;
    return n;
}

/* The rectangle where c differs from prev (all of c without prev; a
 * 1 × 1 corner when nothing changed). */
static void changed_rect(const Canvas *c, const Canvas *prev, int *x0, int *y0, int *w, int *h) {
    int minx = c->w, miny = c->h, maxx = -1, maxy = -1;
    if (!prev || !prev->px) { *x0 = *y0 = 0; *w = c->w; *h = c->h; return; }
    for (int y = 0; y < c->h; y++)
        for (int x = 0; x < c->w; x++) {
            size_t k = ((size_t)y * c->w + x) * 3;
            if (memcmp(c->px + k, prev->px + k, 3) == 0) continue;
            if (x < minx) minx = x;
            if (x > maxx) maxx = x;
            if (y < miny) miny = y;
            if (y > maxy) maxy = y;
        }
    if (maxx < 0) { *x0 = *y0 = 0; *w = *h = 1; return; }
    *x0 = minx; *y0 = miny; *w = maxx - minx + 1; *h = maxy - miny + 1;
}

/* One frame: its control block (delay) and, over the previous frame (kept:
 * DISPOSE_DO_NOT), the pixels that changed, through the palette. */
static int put_frame(GifFileType *gif, Palette *p, const Canvas *c, const Canvas *prev, int delay_cs,
                     GifByteType *line) {
    GraphicsControlBlock gcb = {.DisposalMode = DISPOSE_DO_NOT, .UserInputFlag = 0, .DelayTime = delay_cs,
                                .TransparentColor = NO_TRANSPARENT_COLOR};
    GifByteType ext[4];
    int x0, y0, w, h;
    changed_rect(c, prev, &x0, &y0, &w, &h);
    EGifGCBToExtension(&gcb, ext);
    if (EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, 4, ext) == GIF_ERROR) return -1;
    if (EGifPutImageDesc(gif, x0, y0, w, h, false, NULL) == GIF_ERROR) return -1;
    for (int y = y0; y < y0 + h; y++) {
        for (int x = x0; x < x0 + w; x++)
            line[x - x0] = (GifByteType)nearest(p, c->px + ((size_t)y * c->w + x) * 3);
        if (EGifPutLine(gif, line, w) == GIF_ERROR) return -1;
    }
    return 0;
}

/* The NETSCAPE2.0 block: loop forever. */
static int put_loop(GifFileType *gif) {
    static const GifByteType app[11] = {'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0'};
    static const GifByteType loop[3] = {1, 0, 0};
    return EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_ERROR ||
           EGifPutExtensionBlock(gif, 11, app) == GIF_ERROR || EGifPutExtensionBlock(gif, 3, loop) == GIF_ERROR ||
           EGifPutExtensionTrailer(gif) == GIF_ERROR ? -1 : 0;
}

/* The largest frame's size: every frame is drawn at the top left of a
 * white screen of that size.  0, or -1 with err. */
static int screen_size(const RenderHeatmap *frames, int n, int *W, int *H, char *err, size_t errlen) {
    *W = *H = 0;
    for (int i = 0; i < n; i++) {
        RenderHeatmapGeometry geo;
        if (render_heatmap_geometry(&frames[i], &geo, err, errlen)) return -1;
        if (geo.width > *W) *W = geo.width;
        if (geo.height > *H) *H = geo.height;
    }
    return 0;
}

/* Frame i drawn on a W × H canvas (the caller frees it).  0, or -1 with err. */
static int frame_canvas(Canvas *out, const RenderHeatmap *hm, int W, int H, char *err, size_t errlen) {
    Canvas c;
    if (heatmap_draw_canvas(&c, hm, err, errlen)) return -1;
    if (canvas_init(out, W, H, COL_BG, err, errlen)) { canvas_free(&c); return -1; }
    for (int y = 0; y < c.h && y < H; y++)
        memcpy(out->px + (size_t)y * W * 3, c.px + (size_t)y * c.w * 3, (size_t)(c.w < W ? c.w : W) * 3);
    canvas_free(&c);
    return 0;
}

/* Frames into m.  0, or -1 with err. */
static int encode(MemOut *m, const RenderHeatmap *frames, int n, int delay_cs, char *err, size_t errlen) {
    int e = 0, rc = -1, W, H;
    Canvas prev = {0};
    if (screen_size(frames, n, &W, &H, err, errlen)) return -1;
    Palette *p = malloc(sizeof *p);
    GifByteType *line = malloc((size_t)W);
    GifFileType *gif = EGifOpen(m, mem_write, &e);
    ColorMapObject *cm = GifMakeMapObject(256, NULL);
    if (!p || !line || !gif || !cm) { errmsg_set(err, errlen, "out of memory (GIF)"); goto done; }
    palette_init(p, frames[0].cmap);
    memcpy(cm->Colors, p->pal, sizeof p->pal);
    EGifSetGifVersion(gif, true);
    if (EGifPutScreenDesc(gif, W, H, 8, 0, cm) == GIF_ERROR || put_loop(gif)) {
        errmsg_set(err, errlen, "GIF: cannot write the header (out of memory)");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        Canvas c;
        if (frame_canvas(&c, &frames[i], W, H, err, errlen)) goto done;
        int fail = put_frame(gif, p, &c, i ? &prev : NULL, i == n - 1 ? 3 * delay_cs : delay_cs, line);
        canvas_free(&prev);
        prev = c;
        if (fail) { errmsg_set(err, errlen, "GIF: cannot write frame %d (out of memory)", i); goto done; }
    }
    rc = 0;
done:
    canvas_free(&prev);
    if (gif && EGifCloseFile(gif, &e) == GIF_ERROR && rc == 0) rc = errmsg_set(err, errlen, "GIF: cannot finish the file");
    GifFreeMapObject(cm);
    free(line); free(p);
    return rc;
}

int render_gif_heatmaps(const char *path, const RenderHeatmap *frames, int n, int delay_cs, char *err,
                        size_t errlen) {
    if (n < 1) return errmsg_set(err, errlen, "a GIF needs at least one frame");
    MemOut m = {0};
    int rc = encode(&m, frames, n, delay_cs, err, errlen);
    if (rc == 0) rc = file_write_atomic(path, m.buf, m.len, err, errlen);
    free(m.buf);
    return rc;
}
