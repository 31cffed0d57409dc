/* font.c — see font.h: finding the font files, loading the faces, UTF-8
 * decoding, the glyph cache, measuring and drawing. */
#include "render/font.h"
#include "render/render.h"
#include "core/errmsg.h"
#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_SYNTHESIS_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const font_dirs[] = {
    "/usr/share/fonts/truetype/dejavu/",   /* Debian, Ubuntu: fonts-dejavu-core */
    "/usr/share/fonts/TTF/",               /* Arch */
    "/usr/share/fonts/dejavu/",            /* Fedora */
    "/usr/share/fonts/dejavu-sans-fonts/",
    "/usr/local/share/fonts/",
    NULL,
};

typedef struct {
    uint32_t cp;
    unsigned short px;
    unsigned char style, used;
    unsigned int gindex;
    int left, top, w, h;
    long adv;              /* 26.6 */
    unsigned char *bmp;    /* w × h coverage */
} Glyph;

#define GCACHE_SIZE 4096   /* power of two */
#define GCACHE_PROBES 32

/* One per thread (pictures are drawn side by side, pipeline/pictures.c):
 * FreeType faces and the glyph cache are not safe to share. */
static _Thread_local struct {
    int loaded;
    FT_Library lib;
    FT_Face face[2];
    int fake_bold;         /* no bold file: embolden the regular face */
    int cur_px[2];
    char path[2][1024];
    Glyph cache[GCACHE_SIZE];
} F;

static int readable(const char *p) { return p && *p && access(p, R_OK) == 0; }

/* Finds the regular face into F.path[0] and the bold one into F.path[1] ("" if none). */
static int find_fonts(void) {
    const char *env = getenv("ATTNVIZ_FONT");
    F.path[0][0] = F.path[1][0] = '\0';
    if (env && *env) {
        if (!readable(env)) return -1;
        snprintf(F.path[0], sizeof F.path[0], "%s", env);
        const char *envb = getenv("ATTNVIZ_FONT_BOLD");
        if (readable(envb)) {
            snprintf(F.path[1], sizeof F.path[1], "%s", envb);
        } else {
            /* DejaVuSans.ttf → DejaVuSans-Bold.ttf next to it */
            size_t n = strlen(env);
            if (n > 4 && !strcmp(env + n - 4, ".ttf")) {
                char b[1024];
                snprintf(b, sizeof b, "%.*s-Bold.ttf", (int)(n - 4), env);
                if (readable(b)) snprintf(F.path[1], sizeof F.path[1], "%s", b);
            }
        }
        return 0;
    }
    for (int i = 0; font_dirs[i]; i++) {
        char r[1024], b[1024];
        snprintf(r, sizeof r, "%sDejaVuSans.ttf", font_dirs[i]);
        snprintf(b, sizeof b, "%sDejaVuSans-Bold.ttf", font_dirs[i]);
        if (readable(r)) {
            snprintf(F.path[0], sizeof F.path[0], "%s", r);
            if (readable(b)) snprintf(F.path[1], sizeof F.path[1], "%s", b);
            return 0;
        }
    }
    return -1;
}

const char *render_font_path(void) {
    if (F.loaded) return F.path[0];
    return find_fonts() == 0 ? F.path[0] : NULL;
}

int font_ensure(char *err, size_t errlen) {
    if (F.loaded) return 0;
    if (find_fonts() != 0) {
        const char *env = getenv("ATTNVIZ_FONT");
        if (env && *env)
            errmsg_set(err, errlen, "font not found: ATTNVIZ_FONT=%s is not a readable file "
                       "(point it to a .ttf file, or unset it to use DejaVu Sans)", env);
        else
            errmsg_set(err, errlen, "no font found: install DejaVu Sans (Debian: apt-get install "
                       "fonts-dejavu-core) or set ATTNVIZ_FONT to a .ttf file");
        return -1;
    }
    if (FT_Init_FreeType(&F.lib)) return errmsg_set(err, errlen, "cannot start FreeType");
    if (FT_New_Face(F.lib, F.path[0], 0, &F.face[0])) {
        errmsg_set(err, errlen, "cannot load font %s (is it a TrueType/OpenType file?)", F.path[0]);
        FT_Done_FreeType(F.lib);
        F.lib = NULL;
        return -1;
    }
    F.fake_bold = 1;
    if (F.path[1][0] && FT_New_Face(F.lib, F.path[1], 0, &F.face[1]) == 0) F.fake_bold = 0;
    if (F.fake_bold) F.face[1] = F.face[0];
    F.cur_px[0] = F.cur_px[1] = 0;
    F.loaded = 1;
    return 0;
}

void render_shutdown(void) {
    for (int i = 0; i < GCACHE_SIZE; i++) {
        free(F.cache[i].bmp);
        F.cache[i].bmp = NULL;
        F.cache[i].used = 0;
    }
    if (F.loaded) {
        if (!F.fake_bold) FT_Done_Face(F.face[1]);
        FT_Done_Face(F.face[0]);
        FT_Done_FreeType(F.lib);
    }
    memset(&F, 0, sizeof F);
}

/* Next code point of UTF-8 text; malformed bytes become U+FFFD. */
static uint32_t utf8_next(const char **ps) {
    const unsigned char *s = (const unsigned char *)*ps;
    uint32_t cp;
    int n;
    if (s[0] < 0x80) { *ps += 1; return s[0]; }
    if ((s[0] & 0xE0) == 0xC0) { cp = s[0] & 0x1F; n = 1; }
    else if ((s[0] & 0xF0) == 0xE0) { cp = s[0] & 0x0F; n = 2; }
    else if ((s[0] & 0xF8) == 0xF0) { cp = s[0] & 0x07; n = 3; }
    else { *ps += 1; return 0xFFFD; }
    for (int i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80) { *ps += i; return 0xFFFD; }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    *ps += n + 1;
    return cp;
}

static FT_Face face_at(FontStyle st, int px) {
    int i = st == FONT_BOLD ? 1 : 0;
    FT_Face f = F.face[i];
    if (F.cur_px[i] != px || (F.fake_bold && F.cur_px[0] != px)) {
        FT_Set_Pixel_Sizes(f, 0, (FT_UInt)px);
        F.cur_px[i] = px;
        if (F.fake_bold) F.cur_px[0] = F.cur_px[1] = px;
    }
    return f;
}

/* Renders one glyph into slot g (not yet marked used).  0 or -1. */
static int glyph_render(Glyph *g, FontStyle st, int px, uint32_t cp) {
    FT_Face f = face_at(st, px);
    FT_UInt gi = FT_Get_Char_Index(f, cp);
    if (FT_Load_Glyph(f, gi, FT_LOAD_TARGET_LIGHT)) return -1;
    if (st == FONT_BOLD && F.fake_bold) FT_GlyphSlot_Embolden(f->glyph);
    if (FT_Render_Glyph(f->glyph, FT_RENDER_MODE_NORMAL)) return -1;
    FT_Bitmap *bm = &f->glyph->bitmap;
    g->cp = cp;
    g->px = (unsigned short)px;
    g->style = (unsigned char)st;
    g->gindex = gi;
    g->left = f->glyph->bitmap_left;
    g->top = f->glyph->bitmap_top;
    g->w = (int)bm->width;
    g->h = (int)bm->rows;
    g->adv = f->glyph->advance.x;
    g->bmp = NULL;
    if (g->w > 0 && g->h > 0) {
        g->bmp = malloc((size_t)g->w * (size_t)g->h);
        if (!g->bmp) return -1;
        for (int y = 0; y < g->h; y++)
            memcpy(g->bmp + (size_t)y * g->w, bm->buffer + (ptrdiff_t)y * bm->pitch, (size_t)g->w);
    }
    return 0;
}

static const Glyph *glyph_get(FontStyle st, int px, uint32_t cp) {
    uint32_t h = (cp * 2654435761u) ^ ((uint32_t)px * 40503u) ^ ((uint32_t)st * 97u);
    Glyph *slot = NULL;
    for (int k = 0; k < GCACHE_PROBES; k++) {
        Glyph *g = &F.cache[(h + (uint32_t)k) & (GCACHE_SIZE - 1)];
        if (!g->used) { slot = g; break; }
        if (g->cp == cp && g->px == px && g->style == st) return g;
    }
    if (!slot) {   /* neighbourhood full: evict the home slot */
        slot = &F.cache[h & (GCACHE_SIZE - 1)];
        free(slot->bmp);
        slot->bmp = NULL;
        slot->used = 0;
    }
    if (glyph_render(slot, st, px, cp)) return NULL;
    slot->used = 1;
    return slot;
}

static long kerning(FontStyle st, unsigned int prev, unsigned int gi) {
    FT_Face f = F.face[st == FONT_BOLD ? 1 : 0];
    if (!prev || !gi || !FT_HAS_KERNING(f)) return 0;
    FT_Vector d;
    if (FT_Get_Kerning(f, prev, gi, FT_KERNING_DEFAULT, &d)) return 0;
    return d.x;
}

/* Walks the text; with a canvas, draws it.  Returns the advance in 26.6. */
static long text_run(Canvas *c, FontStyle st, int px, int x, int baseline, const char *s, Rgb col) {
    if (!F.loaded || !s || px <= 0) return 0;
    long pen = 0;
    unsigned int prev = 0;
    while (*s) {
        uint32_t cp = utf8_next(&s);
        const Glyph *g = glyph_get(st, px, cp);
        if (!g) continue;
        face_at(st, px);
        pen += kerning(st, prev, g->gindex);
        if (c && g->bmp) {
            int gx = x + (int)((pen + 32) >> 6) + g->left;
            canvas_blend_mask(c, gx, baseline - g->top, g->bmp, g->w, g->h, g->w, col, 1.0f);
        }
        pen += g->adv;
        prev = g->gindex;
    }
    return pen;
}

int font_width(FontStyle st, int px, const char *s) {
    return (int)((text_run(NULL, st, px, 0, 0, s, COL_TEXT) + 32) >> 6);
}

void font_vmetrics(FontStyle st, int px, int *ascent, int *descent) {
    if (!F.loaded) { *ascent = px; *descent = px / 4; return; }
    FT_Face f = face_at(st, px);
    *ascent = (int)((f->size->metrics.ascender + 63) >> 6);
    *descent = (int)((-f->size->metrics.descender + 63) >> 6);
}

void font_draw(Canvas *c, FontStyle st, int px, int x, int baseline, const char *s, Rgb col) {
    text_run(c, st, px, x, baseline, s, col);
}

void font_draw_right(Canvas *c, FontStyle st, int px, int x_right, int baseline, const char *s, Rgb col) {
    text_run(c, st, px, x_right - font_width(st, px, s), baseline, s, col);
}

void font_draw_center(Canvas *c, FontStyle st, int px, int cx, int baseline, const char *s, Rgb col) {
    text_run(c, st, px, cx - font_width(st, px, s) / 2, baseline, s, col);
}

int font_center_baseline(int px, double cy) { return (int)lround(cy + 0.34 * px); }

void font_draw_rotated(Canvas *c, FontStyle st, int px, double x, double y, double degrees,
                       const char *s, Rgb col) {
    if (!F.loaded || !s || px <= 0) return;
    if (degrees == 0) { text_run(c, st, px, (int)lround(x), (int)lround(y), s, col); return; }
    FT_Face f = face_at(st, px);
    double a = degrees * M_PI / 180.0, ca = cos(a), sa = sin(a);
    FT_Matrix m = {(FT_Fixed)lround(ca * 65536), (FT_Fixed)lround(-sa * 65536),
                   (FT_Fixed)lround(sa * 65536), (FT_Fixed)lround(ca * 65536)};
    double penx = x, peny = y;
    while (*s) {
        uint32_t cp = utf8_next(&s);
        double ix = floor(penx), iy = floor(peny);
        /* FreeType's y axis points up, the canvas's down. */
        FT_Vector delta = {(FT_Pos)lround((penx - ix) * 64), (FT_Pos)lround(-(peny - iy) * 64)};
        FT_Set_Transform(f, &m, &delta);
        FT_UInt gi = FT_Get_Char_Index(f, cp);
        if (FT_Load_Glyph(f, gi, FT_LOAD_NO_HINTING)) continue;
        if (st == FONT_BOLD && F.fake_bold) FT_GlyphSlot_Embolden(f->glyph);
        if (FT_Render_Glyph(f->glyph, FT_RENDER_MODE_NORMAL)) continue;
        FT_Bitmap *bm = &f->glyph->bitmap;
        if (bm->width > 0 && bm->rows > 0 && bm->pitch > 0)
            canvas_blend_mask(c, (int)ix + f->glyph->bitmap_left, (int)iy - f->glyph->bitmap_top,
                              bm->buffer, (int)bm->width, (int)bm->rows, bm->pitch, col, 1.0f);
        penx += f->glyph->advance.x / 64.0;
        peny -= f->glyph->advance.y / 64.0;
    }
    FT_Set_Transform(f, NULL, NULL);
}

int font_fit(FontStyle st, int px, const char *s, int max_w, char *out, size_t outlen) {
    if (!outlen) return 0;
    snprintf(out, outlen, "%s", s ? s : "");
    int w = font_width(st, px, out);
    if (w <= max_w) return w;
    static const char ell[] = "\xE2\x80\xA6";   /* … */
    int ew = font_width(st, px, ell);
    /* Longest prefix (at a character boundary) that fits with the ellipsis. */
    size_t best = 0, n = strlen(out);
    const char *p = out;
    while ((size_t)(p - out) < n) {
        const char *q = p;
        utf8_next(&q);
        size_t len = (size_t)(q - out);
        char tmp[512];
        if (len >= sizeof tmp) break;
        memcpy(tmp, out, len);
        tmp[len] = '\0';
        if (font_width(st, px, tmp) + ew > max_w) break;
        best = len;
        p = q;
    }
    while (best > 0 && out[best - 1] == ' ') best--;
    if (best + sizeof ell > outlen) best = outlen - sizeof ell;
    memcpy(out + best, ell, sizeof ell);
    return font_width(st, px, out);
}
