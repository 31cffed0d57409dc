/* test_render.c — the renderer, checked by reading its PNGs back with libpng and
 * looking at pixels: orientation (no transposition, no channel swap), colours
 * of viridis and the diverging map, masked cells, labels and diacritics, text
 * chunks, same bytes twice, failures that leave no file. */
#include "check.h"
#include "render/canvas.h"
#include "render/colorbar.h"
#include "render/fmt.h"
#include "render/font.h"
#include "render/html.h"
#include "render/png.h"
#include "render/render.h"
#include <dirent.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    int w, h;
    unsigned char *px;   /* (h, w, 3) */
} Img;

/* Reads an 8-bit RGB PNG; 0 on success.  Optionally returns the value of the
 * text chunk `key` (and its compression type) in text/textlen. */
static int img_read(const char *path, Img *im, const char *key, char *text, size_t textlen, int *comp) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    im->px = NULL;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(fp);
        free(im->px);
        im->px = NULL;
        return -1;
    }
    png_init_io(png, fp);
    png_read_info(png, info);
    im->w = (int)png_get_image_width(png, info);
    im->h = (int)png_get_image_height(png, info);
    if (png_get_color_type(png, info) != PNG_COLOR_TYPE_RGB || png_get_bit_depth(png, info) != 8)
        png_error(png, "not 8-bit RGB");
    im->px = malloc((size_t)im->w * im->h * 3);
    for (int y = 0; y < im->h; y++) png_read_row(png, im->px + (size_t)y * im->w * 3, NULL);
    png_read_end(png, info);
    if (key && text) {
        png_textp t;
        int n = 0;
        text[0] = '\0';
        png_get_text(png, info, &t, &n);
        for (int i = 0; i < n; i++)
            if (!strcmp(t[i].key, key)) {
                snprintf(text, textlen, "%s", t[i].text);
                if (comp) *comp = t[i].compression;
            }
    }
    png_destroy_read_struct(&png, &info, NULL);
    fclose(fp);
    return 0;
}

static const unsigned char *img_at(const Img *im, int x, int y) {
    return im->px + ((size_t)y * im->w + x) * 3;
}

static int rgb_near(const unsigned char *p, int r, int g, int b, int tol) {
    return abs(p[0] - r) <= tol && abs(p[1] - g) <= tol && abs(p[2] - b) <= tol;
}

/* Count of non-white pixels in a rectangle. */
static int ink(const Img *im, int x0, int y0, int x1, int y1) {
    int n = 0;
    for (int y = y0 < 0 ? 0 : y0; y < y1 && y < im->h; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x1 && x < im->w; x++) {
            const unsigned char *p = img_at(im, x, y);
            if (p[0] < 200 || p[1] < 200 || p[2] < 200) n++;
        }
    return n;
}

static void tmp_path(char *out, size_t n, const char *name) {
    snprintf(out, n, "%s/%s", check_tmpdir(), name);
}

static RenderHeatmap plain_heatmap(const float *v, int rows, int cols) {
    RenderHeatmap hm = {0};
    hm.values = v;
    hm.rows = rows;
    hm.cols = cols;
    hm.cmap = RENDER_CMAP_VIRIDIS;
    hm.vmin = 0;
    hm.vmax = 1;
    hm.show_values = 0;
    hm.highlight_row = -1;
    return hm;
}

static int read_file(const char *path, unsigned char **buf, long *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    fseek(fp, 0, SEEK_END);
    *len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    *buf = malloc((size_t)*len + 1);
    long got = (long)fread(*buf, 1, (size_t)*len, fp);
    fclose(fp);
    return got == *len ? 0 : -1;
}

TEST(render_colormap_endpoints) {
    unsigned char c[3];
    render_cmap_rgb(RENDER_CMAP_VIRIDIS, 0.0f, c);   /* #440154 */
    CHECK(rgb_near(c, 0x44, 0x01, 0x54, 2));
    render_cmap_rgb(RENDER_CMAP_VIRIDIS, 1.0f, c);   /* #FDE725 */
    CHECK(rgb_near(c, 0xFD, 0xE7, 0x25, 2));
    render_cmap_rgb(RENDER_CMAP_VIRIDIS, 0.5f, c);   /* matplotlib viridis(0.5) = #21918C */
    CHECK(rgb_near(c, 0x21, 0x91, 0x8C, 2));
    render_cmap_rgb(RENDER_CMAP_VIRIDIS, 2.0f, c);   /* clamped */
    CHECK(rgb_near(c, 0xFD, 0xE7, 0x25, 2));
    /* Monotone lightness: green channel rises across viridis. */
    unsigned char prev[3];
    render_cmap_rgb(RENDER_CMAP_VIRIDIS, 0.0f, prev);
    for (int k = 1; k <= 32; k++) {
        render_cmap_rgb(RENDER_CMAP_VIRIDIS, k / 32.0f, c);
        CHECK(c[1] >= prev[1]);
        memcpy(prev, c, 3);
    }
}

TEST(render_colormap_diverging) {
    unsigned char c[3];
    render_cmap_rgb(RENDER_CMAP_DIVERGING, render_cmap_position(RENDER_CMAP_DIVERGING, 0.0f, -3, 3), c);
    CHECK(c[0] >= 240 && c[1] >= 240 && c[2] >= 240);
    render_cmap_rgb(RENDER_CMAP_DIVERGING, render_cmap_position(RENDER_CMAP_DIVERGING, -2.0f, -3, 3), c);
    CHECK(c[2] > c[0] + 60);   /* blue */
    render_cmap_rgb(RENDER_CMAP_DIVERGING, render_cmap_position(RENDER_CMAP_DIVERGING, 2.0f, -3, 3), c);
    CHECK(c[0] > c[2] + 60);   /* red */
    /* 0 stays white on an asymmetric scale too */
    CHECK_NEAR(render_cmap_position(RENDER_CMAP_DIVERGING, 0.0f, -1, 10), 0.5, 1e-6);
}

/* One value in a picture of its own (the format a one-cell picture gets). */
static const char *one_cell(char *s, size_t n, float v) {
    FmtCells f = fmt_cells_choose(&v, 1, NULL);
    fmt_cell(&f, s, n, v);
    return s;
}

/* The cells of one picture: one format, chosen so no value misreads. */
static int cells_read(const float *v, long n, const char *const *want) {
    FmtCells f = fmt_cells_choose(v, n, NULL);
    for (long k = 0; k < n; k++) {
        char s[64];
        fmt_cell(&f, s, sizeof s, v[k]);
        if (strcmp(s, want[k])) { fprintf(stderr, "cell %ld: %s, want %s\n", k, s, want[k]); return 0; }
    }
    return 1;
}

TEST(render_colorbar_has_three_ticks) {
    /* one-row pictures (short bars) and narrow symmetric scales once got a lone "0" */
    const float lo[] = {-0.4f, -3.0f, 0.0f, -1e-3f, 2.0f, -10000.0f}, hi[] = {0.4f, 2.0f, 1.0f, 1e-3f, 2.2f, 0.0f};
    const int hs[] = {30, 60, 120, 360};
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 4; k++) {
            double t[32], step;
            int n = colorbar_ticks(lo[i], hi[i], hs[k], t, 32, &step);
            if (n < 3) check_fail(__FILE__, __LINE__, "[%g, %g] h %d: %d ticks", lo[i], hi[i], hs[k], n);
            for (int j = 0; j < n; j++)
                if (t[j] < lo[i] - 1e-6 || t[j] > hi[i] + 1e-6)
                    check_fail(__FILE__, __LINE__, "tick %g outside [%g, %g]", t[j], lo[i], hi[i]);
        }
}

TEST(render_value_format) {
    char s[64];
    CHECK(!strcmp(one_cell(s, sizeof s, 0.0474f), "0.05"));
    CHECK(!strcmp(one_cell(s, sizeof s, 14.0f), "14"));          /* whole numbers: no decimals */
    CHECK(!strcmp(one_cell(s, sizeof s, 14.5f), "14.5"));
    CHECK(!strcmp(one_cell(s, sizeof s, -10000.0f), "\xE2\x88\x92" "10000"));
    CHECK(!strcmp(one_cell(s, sizeof s, -1e9f), "\xE2\x88\x92" "1e9"));
    CHECK(!strcmp(one_cell(s, sizeof s, 123.4f), "123"));
    CHECK(!strcmp(one_cell(s, sizeof s, -0.001f), "\xE2\x88\x92" "0.001"));  /* never 0.00 */
    CHECK(!strcmp(one_cell(s, sizeof s, 0.0031f), "0.003"));
    CHECK(!strcmp(one_cell(s, sizeof s, 0.9969f), "0.997"));      /* never 1.00 */
    CHECK(!strcmp(one_cell(s, sizeof s, 1e-7f), "\xE2\x89\x88" "0.000"));       /* ≈0.000 */
    CHECK(!strcmp(one_cell(s, sizeof s, 0.99999f), "\xE2\x89\x88" "1.000"));    /* ≈1.000 */
    CHECK(!strcmp(one_cell(s, sizeof s, 0.9999992f), "\xE2\x89\x88" "1.000"));  /* the number */
    CHECK(!strcmp(one_cell(s, sizeof s, -0.9999992f), "\xE2\x89\x88\xE2\x88\x92" "1.000"));
    CHECK(!strcmp(one_cell(s, sizeof s, -INFINITY), "\xE2\x88\x92\xE2\x88\x9E"));
    /* one format per picture: "2" never sits beside "0.00", nor above "2.20" */
    const float w[] = {2.0f, 0.0f, 2.2f, 0.5f};
    const char *const ww[] = {"2.00", "0.00", "2.20", "0.50"};
    CHECK(cells_read(w, 4, ww));
    const float sc[] = {4.0f, 14.0f, -3.0f};                      /* the lesson's scores */
    const char *const ssc[] = {"4", "14", "\xE2\x88\x92" "3"};
    CHECK(cells_read(sc, 3, ssc));
    const float soft[] = {0.0031f, 0.9969f, 1.0f, 0.0f};          /* a sharp softmax row */
    const char *const ssoft[] = {"0.003", "0.997", "1", "0.000"};   /* "1": exactly 1 */
    CHECK(cells_read(soft, 4, ssoft));
    fmt_tick(s, sizeof s, 0.5, 0.25);
    CHECK(!strcmp(s, "0.5"));
    fmt_tick(s, sizeof s, 0.75, 0.25);
    CHECK(!strcmp(s, "0.75"));
    fmt_tick(s, sizeof s, 1.0, 0.25);
    CHECK(!strcmp(s, "1"));
    fmt_tick(s, sizeof s, -10.0, 5);
    CHECK(!strcmp(s, "\xE2\x88\x92" "10"));
}

/* One bright cell at row 0, column 2 of a 2×3 map: it must appear top-right,
 * with viridis(1)'s exact RGB, every other cell viridis(0). */
TEST(render_heatmap_orientation) {
    float v[6] = {0, 0, 1, 0, 0, 0};
    RenderHeatmap hm = plain_heatmap(v, 2, 3);
    char path[1024], err[256];
    tmp_path(path, sizeof path, "orient.png");
    RenderHeatmapGeometry g;
    REQUIRE(render_heatmap_geometry(&hm, &g, err, sizeof err) == 0);
    REQUIRE(render_heatmap(path, &hm, NULL, err, sizeof err) == 0);
    Img im;
    REQUIRE(img_read(path, &im, NULL, NULL, 0, NULL) == 0);
    CHECK_INT(im.w, g.width);
    CHECK_INT(im.h, g.height);
    CHECK_INT(g.matrix.w, 3 * g.cell);   /* 3 columns across, 2 rows down */
    CHECK_INT(g.matrix.h, 2 * g.cell);
    unsigned char lo[3], hi[3];
    render_cmap_rgb(RENDER_CMAP_VIRIDIS, 0, lo);
    render_cmap_rgb(RENDER_CMAP_VIRIDIS, 1, hi);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            const unsigned char *p = img_at(&im, g.matrix.x + j * g.cell + g.cell / 2, g.matrix.y + i * g.cell + g.cell / 2);
            const unsigned char *want = (i == 0 && j == 2) ? hi : lo;
            if (!rgb_near(p, want[0], want[1], want[2], 0))
                check_fail(__FILE__, __LINE__, "cell (%d,%d) is #%02X%02X%02X, expected #%02X%02X%02X", i, j, p[0],
                           p[1], p[2], want[0], want[1], want[2]);
        }
    const unsigned char *p = img_at(&im, g.matrix.x + 2 * g.cell + g.cell / 2, g.matrix.y + g.cell / 2);
    CHECK(rgb_near(p, 0xFD, 0xE7, 0x25, 2));
    p = img_at(&im, g.matrix.x + g.cell / 2, g.matrix.y + g.cell + g.cell / 2);
    CHECK(rgb_near(p, 0x44, 0x01, 0x54, 2));
    /* colour bar: yellow at the top, purple at the bottom */
    p = img_at(&im, g.colorbar.x + g.colorbar.w / 2, g.colorbar.y);
    if (!rgb_near(p, 0xFD, 0xE7, 0x25, 2))
        check_fail(__FILE__, __LINE__, "colour bar top at (%d,%d) is #%02X%02X%02X", g.colorbar.x + g.colorbar.w / 2,
                   g.colorbar.y, p[0], p[1], p[2]);
    p = img_at(&im, g.colorbar.x + g.colorbar.w / 2, g.colorbar.y + g.colorbar.h - 1);
    CHECK(rgb_near(p, 0x44, 0x01, 0x54, 2));
    /* white background in the corner */
    CHECK(rgb_near(img_at(&im, 2, 2), 255, 255, 255, 0));
    free(im.px);
}

static int is_viridis(const unsigned char *p) {
    for (int k = 0; k < 256; k++) {
        unsigned char c[3];
        render_cmap_rgb(RENDER_CMAP_VIRIDIS, k / 255.0f, c);
        if (rgb_near(p, c[0], c[1], c[2], 6)) return 1;
    }
    return 0;
}

TEST(render_heatmap_masked_cells_hatched) {
    float v[9] = {1, 0, 0, 0.5f, 0.5f, 0, 0.2f, 0.3f, 0.5f};
    unsigned char mask[9] = {1, 0, 0, 1, 1, 0, 1, 1, 1};
    RenderHeatmap hm = plain_heatmap(v, 3, 3);
    hm.mask = mask;
    hm.show_values = 1;
    char path[1024], err[256];
    tmp_path(path, sizeof path, "masked.png");
    RenderHeatmapGeometry g;
    REQUIRE(render_heatmap_geometry(&hm, &g, err, sizeof err) == 0);
    REQUIRE(render_heatmap(path, &hm, NULL, err, sizeof err) == 0);
    Img im;
    REQUIRE(img_read(path, &im, NULL, NULL, 0, NULL) == 0);
    /* cell (0, 2): grey fill and darker hatch lines, all neutral grey */
    int grey = 0, hatch = 0, coloured = 0;
    int x0 = g.matrix.x + 2 * g.cell + 2, y0 = g.matrix.y + 2;
    for (int y = y0; y < y0 + g.cell / 4; y++)   /* a corner, away from the "−∞" text */
        for (int x = x0; x < x0 + g.cell / 4; x++) {
            const unsigned char *p = img_at(&im, x, y);
            if (p[0] != p[1] || p[1] != p[2]) coloured++;
            if (p[0] >= 185 && p[0] <= 205) grey++;
            if (p[0] < 160) hatch++;
            if (is_viridis(p)) coloured++;
        }
    CHECK(grey > 0);
    CHECK(hatch > 0);
    CHECK_INT(coloured, 0);
    /* the "−∞" label is drawn in the middle of the masked cell: dark text pixels */
    int dark = 0;
    for (int y = g.matrix.y + g.cell / 2 - 4; y < g.matrix.y + g.cell / 2 + 4; y++)
        for (int x = g.matrix.x + 2 * g.cell + g.cell / 2 - 8; x < g.matrix.x + 2 * g.cell + g.cell / 2 + 8; x++)
            if (img_at(&im, x, y)[0] < 90) dark++;
    CHECK(dark > 3);
    /* an unmasked cell is not grey: its corner has viridis colour */
    CHECK(is_viridis(img_at(&im, g.matrix.x + 3, g.matrix.y + g.cell + 3)));
    free(im.px);
}

/* Labels left of each row and above each column; the highlighted row outlined. */
TEST(render_heatmap_labels_present) {
    float v[12] = {0.1f, 0.2f, 0.3f, 0.4f, 0.4f, 0.3f, 0.2f, 0.1f, 0.25f, 0.25f, 0.25f, 0.25f};
    const char *q[] = {"tôi", "đi", "học"};
    const char *k[] = {"The", "animal", "was", "tired"};
    RenderHeatmap hm = plain_heatmap(v, 3, 4);
    hm.row_labels = q;
    hm.col_labels = k;
    hm.row_axis = "query";
    hm.col_axis = "key";
    hm.title = "labels";
    hm.show_values = -1;
    hm.highlight_row = 1;
    char path[1024], err[256];
    tmp_path(path, sizeof path, "labels.png");
    RenderHeatmapGeometry g;
    REQUIRE(render_heatmap_geometry(&hm, &g, err, sizeof err) == 0);
    REQUIRE(render_heatmap(path, &hm, NULL, err, sizeof err) == 0);
    Img im;
    REQUIRE(img_read(path, &im, NULL, NULL, 0, NULL) == 0);
    for (int i = 0; i < 3; i++) {
        int n = ink(&im, g.matrix.x - 120, g.matrix.y + i * g.cell + 4, g.matrix.x - 6, g.matrix.y + (i + 1) * g.cell - 4);
        if (n < 10) check_fail(__FILE__, __LINE__, "row %d label: %d ink pixels", i, n);
    }
    for (int j = 0; j < 4; j++) {
        int n = ink(&im, g.matrix.x + j * g.cell + 2, g.matrix.y - 40, g.matrix.x + (j + 1) * g.cell - 2, g.matrix.y - 5);
        if (n < 10) check_fail(__FILE__, __LINE__, "column %d label: %d ink pixels", j, n);
    }
    /* highlighted row 1: outline in the highlight colour just outside the matrix */
    const unsigned char *p = img_at(&im, g.matrix.x - 2, g.matrix.y + g.cell + g.cell / 2);
    Rgb h = COL_HILITE;
    CHECK(rgb_near(p, h.r, h.g, h.b, 0));
    /* values: white text on dark cells (0.1 at (0,0)), black on bright (none here > 0.4,
     * so check that a dark cell has light text pixels) */
    int light = 0;
    for (int y = g.matrix.y + g.cell / 2 - 5; y < g.matrix.y + g.cell / 2 + 5; y++)
        for (int x = g.matrix.x + 4; x < g.matrix.x + g.cell - 4; x++)
            if (img_at(&im, x, y)[0] > 200) light++;
    CHECK(light > 5);
    free(im.px);
}

/* Diacritics: "ô" has ink above "o", "đ" differs from "d", and none of
 * "tôi đi học" falls back to the missing-glyph box. */
TEST(render_text_diacritics) {
    char err[256];
    REQUIRE(font_ensure(err, sizeof err) == 0);
    REQUIRE(render_font_path() != NULL);
    Canvas c;
    REQUIRE(canvas_init(&c, 200, 60, COL_BG, err, sizeof err) == 0);
    int top[2] = {99, 99};
    const char *s[2] = {"o", "\xC3\xB4"};   /* o, ô */
    for (int t = 0; t < 2; t++) {
        canvas_fill_rect(&c, 0, 0, 200, 60, COL_BG);
        font_draw(&c, FONT_REGULAR, 24, 10, 40, s[t], COL_TEXT);
        for (int y = 0; y < 60 && top[t] == 99; y++)
            for (int x = 0; x < 200; x++)
                if (c.px[(y * 200 + x) * 3] < 128) { top[t] = y; break; }
    }
    CHECK(top[1] < top[0] - 3);
    /* đ vs d: different pixels */
    Canvas d;
    REQUIRE(canvas_init(&d, 200, 60, COL_BG, err, sizeof err) == 0);
    canvas_fill_rect(&c, 0, 0, 200, 60, COL_BG);
    font_draw(&c, FONT_REGULAR, 24, 10, 40, "d", COL_TEXT);
    font_draw(&d, FONT_REGULAR, 24, 10, 40, "\xC4\x91", COL_TEXT);
    CHECK(memcmp(c.px, d.px, 200 * 60 * 3) != 0);
    /* the whole phrase draws ink, and its width differs from a string of
     * missing glyphs of the same length */
    canvas_fill_rect(&c, 0, 0, 200, 60, COL_BG);
    font_draw(&c, FONT_REGULAR, 18, 5, 40, "t\xC3\xB4i \xC4\x91i h\xE1\xBB\x8D" "c", COL_TEXT);
    int n = 0;
    for (int i = 0; i < 200 * 60; i++) n += c.px[i * 3] < 128;
    CHECK(n > 60);
    CHECK(font_width(FONT_REGULAR, 18, "t\xC3\xB4i \xC4\x91i h\xE1\xBB\x8D" "c") ==
          font_width(FONT_REGULAR, 18, "toi di hoc"));   /* DejaVu: same advances */
    canvas_free(&c);
    canvas_free(&d);
}

TEST(render_text_truncates_with_ellipsis) {
    char err[256], out[256];
    REQUIRE(font_ensure(err, sizeof err) == 0);
    int w = font_fit(FONT_REGULAR, 15, "antidisestablishmentarianism", 80, out, sizeof out);
    CHECK(w <= 80);
    size_t n = strlen(out);
    CHECK(n > 3 && !strcmp(out + n - 3, "\xE2\x80\xA6"));
    w = font_fit(FONT_REGULAR, 15, "it", 80, out, sizeof out);
    CHECK(!strcmp(out, "it"));
    /* cut at a character boundary: no broken UTF-8 before the ellipsis */
    font_fit(FONT_REGULAR, 15, "\xC4\x91\xC4\x91\xC4\x91\xC4\x91\xC4\x91\xC4\x91\xC4\x91\xC4\x91", 40, out, sizeof out);
    n = strlen(out);
    CHECK(n >= 3 && (n - 3) % 2 == 0);
}

TEST(render_heatmap_same_bytes_and_text_chunks) {
    float v[4] = {0.9f, 0.1f, 0.3f, 0.7f};
    const char *tok[] = {"tôi", "học"};
    RenderHeatmap hm = plain_heatmap(v, 2, 2);
    hm.row_labels = tok;
    hm.col_labels = tok;
    hm.title = "encoder layer 0 · head 1";
    hm.show_values = -1;
    RenderMetaItem items[] = {{"Title", "encoder layer 0 head 1"}, {"Sentence", "tôi đi học"}, {"Layer", "0"}};
    RenderMeta meta = {items, 3};
    char a[1024], b[1024], err[256];
    tmp_path(a, sizeof a, "same-a.png");
    tmp_path(b, sizeof b, "same-b.png");
    REQUIRE(render_heatmap(a, &hm, &meta, err, sizeof err) == 0);
    REQUIRE(render_heatmap(b, &hm, &meta, err, sizeof err) == 0);
    unsigned char *ba = NULL, *bb = NULL;
    long la = 0, lb = 0;
    REQUIRE(read_file(a, &ba, &la) == 0 && read_file(b, &bb, &lb) == 0);
    CHECK(la == lb && la > 100 && memcmp(ba, bb, (size_t)la) == 0);
    /* no tIME chunk */
    int has_time = 0;
    for (long i = 0; i + 4 <= la; i++)
        if (!memcmp(ba + i, "tIME", 4)) has_time = 1;
    CHECK(!has_time);
    free(ba);
    free(bb);

    Img im;
    char text[256];
    int comp = -99;
    REQUIRE(img_read(a, &im, "Software", text, sizeof text, &comp) == 0);
    CHECK(!strcmp(text, "attnviz"));
    CHECK_INT(comp, PNG_TEXT_COMPRESSION_NONE);
    free(im.px);
    REQUIRE(img_read(a, &im, "Sentence", text, sizeof text, &comp) == 0);
    CHECK(!strcmp(text, "tôi đi học"));
    CHECK_INT(comp, PNG_ITXT_COMPRESSION_NONE);   /* UTF-8 goes to iTXt */
    free(im.px);
    REQUIRE(img_read(a, &im, "Layer", text, sizeof text, &comp) == 0);
    CHECK(!strcmp(text, "0"));
    free(im.px);
}

static int leftovers(const char *dir) {
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp-")) n++;
    closedir(d);
    return n;
}

TEST(render_write_failure_leaves_nothing) {
    float v[1] = {0.5f};
    RenderHeatmap hm = plain_heatmap(v, 1, 1);
    char path[1024], err[256] = "";
    tmp_path(path, sizeof path, "no-such-dir/x.png");
    CHECK_INT(render_heatmap(path, &hm, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "no-such-dir") != NULL);
    CHECK(access(path, F_OK) != 0);
    /* rename onto a directory fails after the data is written: the temporary
     * file must be gone too */
    char dir[1024];
    tmp_path(dir, sizeof dir, "fail-dir");
    mkdir(dir, 0755);
    char inner[1100];
    snprintf(inner, sizeof inner, "%s/occupied.png", dir);
    mkdir(inner, 0755);
    err[0] = '\0';
    CHECK_INT(render_heatmap(inner, &hm, NULL, err, sizeof err), -1);
    CHECK(err[0] != '\0');
    CHECK_INT(leftovers(dir), 0);
    CHECK_INT(leftovers(check_tmpdir()), 0);
    /* bad input */
    RenderHeatmap empty = plain_heatmap(NULL, 0, 0);
    err[0] = '\0';
    CHECK_INT(render_heatmap(path, &empty, NULL, err, sizeof err), -1);
    CHECK(err[0] != '\0');
}

/* canvas_init is the one size check: too large or empty pictures are refused
 * with a message and leave the canvas empty. */
TEST(render_canvas_refuses_bad_sizes) {
    char err[256] = "";
    Canvas c;
    CHECK_INT(canvas_init(&c, CANVAS_MAX_SIDE + 1L, 10, COL_BG, err, sizeof err), -1);
    CHECK(strstr(err, "too large to draw") != NULL);
    CHECK(c.px == NULL && c.w == 0 && c.h == 0);
    err[0] = '\0';
    CHECK_INT(canvas_init(&c, 10000, 10000, COL_BG, err, sizeof err), -1);   /* over CANVAS_MAX_PIXELS */
    CHECK(strstr(err, "10000 x 10000") != NULL);
    CHECK_INT(canvas_init(&c, 0, 10, COL_BG, err, sizeof err), -1);
    REQUIRE(canvas_init(&c, 3, 2, RGB_HEX(0x102030), err, sizeof err) == 0);
    CHECK(c.w == 3 && c.h == 2 && c.px[15] == 0x10 && c.px[16] == 0x20 && c.px[17] == 0x30);
    canvas_free(&c);
    canvas_free(&c);   /* twice is fine */
}

/* canvas_fill_hatched is fill then hatch, byte for byte: every spacing the
 * heatmaps use and out-of-range ones, rectangles at odd places and cut by
 * the canvas's edges. */
TEST(render_fill_hatched_same_bytes_as_fill_then_hatch) {
    char err[256] = "";
    Canvas a, b;
    REQUIRE(canvas_init(&a, 97, 61, COL_BG, err, sizeof err) == 0);
    REQUIRE(canvas_init(&b, 97, 61, COL_BG, err, sizeof err) == 0);
    int rects[][4] = {{3, 5, 27, 27}, {-4, 10, 20, 9}, {80, 50, 40, 30}, {11, -3, 5, 70}, {0, 0, 97, 61}};
    int spacings[] = {1, 4, 5, 6, 7, 13, 100};
    for (int r = 0; r < 5; r++)
        for (int s = 0; s < 7; s++) {
            int *q = rects[r];
            canvas_fill_rect(&a, q[0], q[1], q[2], q[3], COL_MASK);
            canvas_hatch_rect(&a, q[0], q[1], q[2], q[3], spacings[s], COL_HATCH);
            canvas_fill_hatched(&b, q[0], q[1], q[2], q[3], spacings[s], COL_MASK, COL_HATCH);
            CHECK(memcmp(a.px, b.px, (size_t)a.w * a.h * 3) == 0);
        }
    canvas_free(&a);
    canvas_free(&b);
}

/* png_write_canvas's pixels come back exactly through libpng's reader, which
 * checks every chunk's CRC and the zlib stream's Adler-32: flat areas (long
 * matches), noise that deflate cannot shrink (stored blocks, the most the
 * output buffer must hold), and one odd width. */
TEST(render_png_roundtrip_exact) {
    char path[1024], err[256] = "";
    tmp_path(path, sizeof path, "roundtrip.png");
    int sizes[][2] = {{640, 480}, {333, 7}, {1, 1}};
    unsigned x = 12345u;
    for (int s = 0; s < 3; s++) {
        Canvas c;
        REQUIRE(canvas_init(&c, sizes[s][0], sizes[s][1], COL_BG, err, sizeof err) == 0);
        size_t n = (size_t)c.w * c.h * 3;
        for (size_t i = 0; i < n; i++) {
            x = x * 1664525u + 1013904223u;
            int row = (int)(i / ((size_t)c.w * 3));
            if (row % 3 != 0) c.px[i] = (unsigned char)(x >> 24);   /* noise; every third row flat */
        }
        REQUIRE(png_write_canvas(path, &c, NULL, err, sizeof err) == 0);
        Img im;
        REQUIRE(img_read(path, &im, NULL, NULL, 0, NULL) == 0);
        CHECK(im.w == c.w && im.h == c.h);
        CHECK(memcmp(im.px, c.px, n) == 0);
        free(im.px);
        canvas_free(&c);
    }
    remove(path);
}

/* html_page_write goes through the atomic writer: the whole page or nothing,
 * no temporary left behind, "cannot write PATH: …" when the folder is missing. */
TEST(render_html_page_written_atomically) {
    char dir[1024], path[1100], err[256] = "";
    tmp_path(dir, sizeof dir, "html-out");
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/index.html", dir);
    HtmlPage page;
    html_page_begin(&page, "a <b> & c", NULL);
    html_figure(&page, "p1.png", "caption", NULL, NULL);
    REQUIRE(html_page_write(&page, path, err, sizeof err) == 0);
    unsigned char *buf;
    long len;
    REQUIRE(read_file(path, &buf, &len) == 0);
    buf[len] = '\0';
    CHECK(!strncmp((char *)buf, "<!DOCTYPE html>", 15));
    CHECK(strstr((char *)buf, "a &lt;b&gt; &amp; c") != NULL);
    CHECK(len > 8 && !strcmp((char *)buf + len - 8, "</html>\n"));
    free(buf);
    CHECK_INT(leftovers(dir), 0);

    snprintf(path, sizeof path, "%s/no-such-dir/index.html", dir);
    html_page_begin(&page, "t", NULL);
    CHECK_INT(html_page_write(&page, path, err, sizeof err), -1);
    CHECK(strstr(err, "cannot write") != NULL && strstr(err, "no-such-dir") != NULL);
    CHECK(page.buf == NULL);   /* freed either way */
}

TEST(render_heatmap_diverging_centred) {
    float v[3] = {-2, 0, 2};
    RenderHeatmap hm = plain_heatmap(v, 1, 3);
    hm.cmap = RENDER_CMAP_DIVERGING;
    hm.vmin = hm.vmax = 0;   /* auto symmetric */
    char path[1024], err[256];
    tmp_path(path, sizeof path, "diverging.png");
    RenderHeatmapGeometry g;
    REQUIRE(render_heatmap_geometry(&hm, &g, err, sizeof err) == 0);
    CHECK_NEAR(g.vmin, -2, 1e-6);
    CHECK_NEAR(g.vmax, 2, 1e-6);
    REQUIRE(render_heatmap(path, &hm, NULL, err, sizeof err) == 0);
    Img im;
    REQUIRE(img_read(path, &im, NULL, NULL, 0, NULL) == 0);
    int cy = g.matrix.y + g.cell / 2;
    const unsigned char *neg = img_at(&im, g.matrix.x + g.cell / 2, cy);
    const unsigned char *zero = img_at(&im, g.matrix.x + g.cell + g.cell / 2, cy);
    const unsigned char *pos = img_at(&im, g.matrix.x + 2 * g.cell + g.cell / 2, cy);
    CHECK(zero[0] >= 240 && zero[1] >= 240 && zero[2] >= 240);
    CHECK(neg[2] > neg[0] + 60);
    CHECK(pos[0] > pos[2] + 60);
    free(im.px);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

TEST(render_heatmap_64_tokens_fast) {
    static float v[64 * 64];
    static char lab[64][24];
    const char *l[64];
    for (int i = 0; i < 64; i++) {
        snprintf(lab[i], sizeof lab[i], "token%d", i);
        l[i] = lab[i];
        for (int j = 0; j < 64; j++) v[i * 64 + j] = (i == j) ? 1.0f : 0.0f;
    }
    RenderHeatmap hm = plain_heatmap(v, 64, 64);
    hm.row_labels = l;
    hm.col_labels = l;
    hm.show_values = -1;
    char path[1024], err[256];
    tmp_path(path, sizeof path, "big.png");
    double t0 = now_s();
    REQUIRE(render_heatmap(path, &hm, NULL, err, sizeof err) == 0);
    double dt = now_s() - t0;
    if (dt > 2.0) check_fail(__FILE__, __LINE__, "64x64 heatmap took %.2f s", dt);
    RenderHeatmapGeometry g;
    REQUIRE(render_heatmap_geometry(&hm, &g, err, sizeof err) == 0);
    CHECK(g.cell >= 14);
    CHECK(g.width <= 1600 && g.height <= 1600);
    Img im;
    REQUIRE(img_read(path, &im, NULL, NULL, 0, NULL) == 0);
    /* the diagonal is bright, next to it dark */
    CHECK(rgb_near(img_at(&im, g.matrix.x + 40 * g.cell + g.cell / 2, g.matrix.y + 40 * g.cell + g.cell / 2), 0xFD, 0xE7, 0x25, 2));
    CHECK(rgb_near(img_at(&im, g.matrix.x + 41 * g.cell + g.cell / 2, g.matrix.y + 40 * g.cell + g.cell / 2), 0x44, 0x01, 0x54, 2));
    free(im.px);
}

/* The other layouts: a valid PNG with ink, same bytes twice. */
static void check_png_ok(const char *path, int min_w, int min_h) {
    Img im;
    if (img_read(path, &im, NULL, NULL, 0, NULL) != 0) {
        check_fail(__FILE__, __LINE__, "%s is not a readable PNG", path);
        return;
    }
    CHECK(im.w >= min_w && im.h >= min_h);
    CHECK(ink(&im, 0, 0, im.w, im.h) > 500);
    CHECK(rgb_near(img_at(&im, 1, 1), 255, 255, 255, 0));
    free(im.px);
}

static int same_bytes(const char *a, const char *b) {
    unsigned char *ba = NULL, *bb = NULL;
    long la = 0, lb = 0;
    int same = read_file(a, &ba, &la) == 0 && read_file(b, &bb, &lb) == 0 && la == lb && !memcmp(ba, bb, (size_t)la);
    free(ba);
    free(bb);
    return same;
}

TEST(render_strip_grid_lines_plot_table) {
    const char *tok[] = {"The", "animal", "was", "tired"};
    float w[16] = {1, 0, 0, 0, 0.4f, 0.6f, 0, 0, 0.2f, 0.5f, 0.3f, 0, 0.1f, 0.6f, 0.1f, 0.2f};
    unsigned char m[16] = {1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1};
    char path[1024], path2[1024], err[256];

    RenderHeatmap panels[2];
    panels[0] = plain_heatmap(w, 4, 4);
    panels[0].cmap = RENDER_CMAP_DIVERGING;
    panels[0].vmax = 0;
    panels[0].mask = m;
    panels[0].title = "masked";
    panels[1] = plain_heatmap(w, 4, 4);
    panels[1].title = "weights";
    panels[0].row_labels = panels[0].col_labels = panels[1].row_labels = panels[1].col_labels = tok;
    tmp_path(path, sizeof path, "strip.png");
    REQUIRE(render_strip(path, "step by step", panels, 2, NULL, err, sizeof err) == 0);
    check_png_ok(path, 400, 200);

    RenderHeatmap cells[6];
    for (int i = 0; i < 6; i++) { cells[i] = plain_heatmap(w, 4, 4); cells[i].row_labels = cells[i].col_labels = tok; }
    const char *rt[] = {"layer 0", "layer 1"}, *ct[] = {"head 0", "head 1", "head 2"};
    tmp_path(path, sizeof path, "grid.png");
    tmp_path(path2, sizeof path2, "grid2.png");
    REQUIRE(render_grid(path, "model view", cells, 2, 3, rt, ct, NULL, err, sizeof err) == 0);
    REQUIRE(render_grid(path2, "model view", cells, 2, 3, rt, ct, NULL, err, sizeof err) == 0);
    check_png_ok(path, 300, 200);
    CHECK(same_bytes(path, path2));

    tmp_path(path, sizeof path, "lines.png");
    REQUIRE(render_lines(path, "lines", tok, 4, tok, 4, w, m, 3, NULL, err, sizeof err) == 0);
    check_png_ok(path, 200, 100);
    tmp_path(path, sizeof path, "lines-all.png");
    REQUIRE(render_lines(path, "lines", tok, 4, tok, 4, w, NULL, -1, NULL, err, sizeof err) == 0);
    check_png_ok(path, 200, 100);

    float x[4] = {1, 10, 100, 1000}, y1[4] = {1, 3.2f, 10, 31.6f}, y2[4] = {1, 1, 1, 1};
    RenderSeries se[2] = {{"unscaled", y1}, {"scaled", y2}};
    RenderPlot pl = {"plot", "d_k", "std", x, 4, se, 2, 1, 1, 0};
    tmp_path(path, sizeof path, "plot.png");
    REQUIRE(render_plot(path, &pl, NULL, err, sizeof err) == 0);
    check_png_ok(path, 300, 200);

    const char *tc[] = {"d_k", "std", "4", "2.0", "64", "8.0"};
    tmp_path(path, sizeof path, "table.png");
    REQUIRE(render_table(path, "table", tc, 3, 2, NULL, err, sizeof err) == 0);
    check_png_ok(path, 100, 80);
    CHECK_INT(leftovers(check_tmpdir()), 0);
}

TEST(too_large_picture_names_itself_and_the_option) {
    Canvas c;
    char err[300];
    CHECK_INT(canvas_init_named(&c, "/tmp/o/grid.decoder.masked_self.png", 20000, 10, COL_BG, err, sizeof err), -1);
    CHECK(!strncmp(err, "grid.decoder.masked_self.png: picture would be 20000 x 10 pixels", 64));
    CHECK(strstr(err, "--layers and --heads") != NULL);
    CHECK(c.px == NULL);
}
