/* test_slide_fit.c — slide-ready pictures (issue 27): titles folded to a width
 * (render/label.h label_wrap) keep every word in order and no line is wider
 * than asked; two-part labels ("sister\tma") fit their width; the page
 * (render/fit.h) scales a picture by area averaging (checked against sums by
 * hand) and a slide is exactly 1920 x 1080 with the picture centred; a step
 * strip of a map without a mask, or with one that hides nothing, has no step 3
 * and says so; a worksheet heading's second line is drawn and widens the sheet. */
#include "check.h"
#include "render/canvas.h"
#include "render/font.h"
#include "render/label.h"
#include "render/fit.h"
#include "render/stepview.h"
#include "render/sheet.h"
#include "trace/trace.h"
#include <stdio.h>
#include <string.h>

TEST(slide_wrap_keeps_words_and_width) {
    char err[256];
    REQUIRE(font_ensure(err, sizeof err) == 0);
    const char *text = "the animal didn't cross the street because it was too tired and the old man who "
                       "lived in the small house near the river said that the dog was very happy today";
    LabelLines ls;
    int n = label_wrap(FONT_BOLD, 20, text, 400, &ls);
    CHECK(n >= 3 && n <= LABEL_WRAP_LINES);
    char joined[2048] = "";
    for (int k = 0; k < n; k++) {
        int w = font_width(FONT_BOLD, 20, ls.line[k]);
        if (w > 400) check_fail(__FILE__, __LINE__, "line %d is %d px wide: \"%s\"", k, w, ls.line[k]);
        if (k) strcat(joined, " ");
        strcat(joined, ls.line[k]);
    }
    CHECK(!strcmp(joined, text));                       /* every word, in order, none cut */
    /* a short text stays one line; an empty one is no line */
    CHECK_INT(label_wrap(FONT_BOLD, 20, "head 0", 400, &ls), 1);
    CHECK(!strcmp(ls.line[0], "head 0"));
    CHECK_INT(label_wrap(FONT_BOLD, 20, "", 400, &ls), 0);
    /* too long for LABEL_WRAP_LINES lines: the last says the text went on */
    char longer[8000] = "";
    for (int k = 0; k < 60; k++) strcat(longer, "attention weights sum to one ");
    CHECK_INT(label_wrap(FONT_REGULAR, 14, longer, 300, &ls), LABEL_WRAP_LINES);
    const char *last = ls.line[LABEL_WRAP_LINES - 1];
    CHECK(strlen(last) >= 3 && !strcmp(last + strlen(last) - 3, "\xE2\x80\xA6"));
}

TEST(slide_two_part_labels_fit) {
    char err[256], out[512];
    REQUIRE(font_ensure(err, sizeof err) == 0);
    const char *labels[] = {"sister\tma", "plain"};
    int w = label_fit(FONT_REGULAR, 15, labels, 0, 190, out, sizeof out);
    CHECK(!strcmp(out, "sister\tma"));
    CHECK_INT(w, font_width(FONT_REGULAR, 15, "sister") + 6 + font_width(FONT_REGULAR, label_small_px(15), "ma"));
    /* no room for the small part: only the word written */
    w = label_fit(FONT_REGULAR, 15, labels, 0, font_width(FONT_REGULAR, 15, "sister") + 10, out, sizeof out);
    CHECK(!strcmp(out, "sister"));
    w = label_fit(FONT_REGULAR, 15, labels, 1, 190, out, sizeof out);
    CHECK(!strcmp(out, "plain") && w == font_width(FONT_REGULAR, 15, "plain"));
}

/* A 4000 x 10 canvas of 4-pixel stripes (4 black, 4 white, …) scaled into 3000
 * px: each output pixel covers 4/3 source pixels, its value the area-weighted
 * mean computed here by hand. */
TEST(slide_scales_down_by_area_and_slides_centre) {
    char err[256];
    Canvas c, out;
    REQUIRE(canvas_init(&c, 4000, 10, COL_BG, err, sizeof err) == 0);
    for (int x = 0; x < 4000; x += 8) canvas_fill_rect(&c, x, 0, 4, 10, RGB_HEX(0x000000));
    fit_set_slide(0);
    CHECK(fit_needed(&c));
    REQUIRE(fit_canvas(&c, &out, err, sizeof err) == 0);
    CHECK_INT(out.w, 3000);
    CHECK_INT(out.h, 8);   /* 10 × 0.75 rounded */
    double worst = 0;
    for (int ox = 0; ox < 3000; ox++) {
        double a = ox * 4.0 / 3.0, b = (ox + 1) * 4.0 / 3.0, sum = 0;
        for (int x = (int)a; x < b; x++) {
            double lo = x > a ? x : a, hi = x + 1 < b ? x + 1 : b;
            sum += (hi - lo) * ((x / 4) % 2 ? 255.0 : 0.0);
        }
        double want = sum / (b - a), got = out.px[(size_t)(3 * out.w + ox) * 3];
        if (got - want > worst) worst = got - want;
        if (want - got > worst) worst = want - got;
    }
    if (worst > 1.0) check_fail(__FILE__, __LINE__, "area average off by %.2f", worst);
    canvas_free(&out);
    canvas_free(&c);
    /* a slide: exactly 1920 x 1080, a 100 x 100 black square scaled 10.8× in the middle */
    REQUIRE(canvas_init(&c, 100, 100, RGB_HEX(0x000000), err, sizeof err) == 0);
    fit_set_slide(1);
    CHECK(fit_needed(&c));
    REQUIRE(fit_canvas(&c, &out, err, sizeof err) == 0);
    fit_set_slide(0);
    CHECK_INT(out.w, 1920);
    CHECK_INT(out.h, 1080);
    CHECK_INT(out.px[(540 * 1920 + 960) * 3], 0);                 /* the picture */
    CHECK_INT(out.px[(540 * 1920 + 100) * 3], 255);               /* white page beside it */
    CHECK_INT(out.px[(540 * 1920 + 420) * 3], 0);                 /* 1080 px wide from x = 420 */
    CHECK_INT(out.px[(540 * 1920 + 419) * 3], 255);
    canvas_free(&out);
    canvas_free(&c);
    /* a small picture off a slide is left as it is */
    REQUIRE(canvas_init(&c, 300, 200, COL_BG, err, sizeof err) == 0);
    CHECK(!fit_needed(&c));
    canvas_free(&c);
}

TEST(slide_strip_skips_the_mask_step_without_a_mask) {
    Trace t;
    trace_init(&t);
    const char *tok[] = {"a", "b"};
    const unsigned char causal[4] = {1, 0, 1, 1};
    const float w[4] = {0.5f, 0.5f, 0.5f, 0.5f}, x[4] = {1, 2, 3, 4};
    REQUIRE(trace_add_map(&t, &(TraceMapSpec){.id = "e", .stack = "encoder", .kind = "self", .queries = tok, .Tq = 2,
                                              .keys = tok, .Tk = 2, .d_k = 2, .Dv = 2, .n_heads = 1}));
    REQUIRE(trace_add_map(&t, &(TraceMapSpec){.id = "d", .stack = "decoder", .kind = "masked_self", .queries = tok,
                                              .Tq = 2, .keys = tok, .Tk = 2, .d_k = 2, .Dv = 2, .mask = causal,
                                              .n_heads = 1}));
    for (int k = 0; k < 2; k++) REQUIRE(trace_set_head(&t.maps[k], 0, w, x, x, x, x) == 0);
    char dims[2][STEPVIEW_DIM_LABEL];
    const char *dl[2];
    RenderHeatmap p[STEP_COUNT];
    StepKind kinds[STEP_COUNT];
    StepView sv = stepview_of_head(&t.maps[0], 0, dims, dl);
    CHECK_INT(stepview_panels(&sv, p, kinds), 4);
    CHECK(kinds[2] == STEP_WEIGHTS && !strcmp(p[2].subtitle, "no mask: step 3 (+ M) skipped"));
    sv = stepview_of_head(&t.maps[1], 0, dims, dl);
    CHECK_INT(stepview_panels(&sv, p, kinds), 5);
    CHECK(kinds[2] == STEP_MASKED && p[3].subtitle == NULL);
    /* a mask that hides no cell (an encoder's padding mask of one sentence) is no step 3 either */
    const unsigned char all[4] = {1, 1, 1, 1};
    REQUIRE(trace_add_map(&t, &(TraceMapSpec){.id = "p", .stack = "encoder", .kind = "self", .queries = tok, .Tq = 2,
                                              .keys = tok, .Tk = 2, .d_k = 2, .Dv = 2, .mask = all, .n_heads = 1}));
    REQUIRE(trace_set_head(&t.maps[2], 0, w, x, x, x, x) == 0);
    sv = stepview_of_head(&t.maps[2], 0, dims, dl);
    CHECK_INT(stepview_panels(&sv, p, kinds), 4);
    CHECK(kinds[2] == STEP_WEIGHTS && sv.mask == NULL);
    CHECK(!strcmp(p[2].subtitle, "the mask hides nothing here: step 3 (+ M) skipped"));
    trace_free(&t);
}

/* Width and height from a PNG's IHDR; 0 when unreadable. */
static int png_header_size(const char *path, long *w, long *h) {
    unsigned char b[24];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(b, 1, sizeof b, f);
    fclose(f);
    if (n != sizeof b || memcmp(b + 12, "IHDR", 4)) return 0;
    *w = ((long)b[16] << 24) | (b[17] << 16) | (b[18] << 8) | b[19];
    *h = ((long)b[20] << 24) | (b[21] << 16) | (b[22] << 8) | b[23];
    return 1;
}

/* A worksheet heading's second line (after '\n': "step 3 (mask) is skipped …")
 * is drawn under it: the sheet grows by a line and is wide enough for it. */
TEST(slide_sheet_heading_note) {
    char err[256];
    REQUIRE(font_ensure(err, sizeof err) == 0);
    const char *note = "step 3 (mask) is skipped: no mask in this exercise, every query sees every key, "
                       "every query sees every key, every query sees every key";
    char with[512];
    snprintf(with, sizeof with, "Exercise 1\n%s", note);
    const char *cells[1] = {"1"};
    RenderSheetBlock b[2] = {{.caption = "Exercise 1"}, {"Q", 1, 1, cells, NULL, NULL, 1, 0}};
    const char *pa = "/tmp/attnviz_test_sheet_a.png", *pb = "/tmp/attnviz_test_sheet_b.png";
    REQUIRE(render_sheet(pa, "T", "", b, 2, NULL, err, sizeof err) == 0);
    b[0].caption = with;
    REQUIRE(render_sheet(pb, "T", "", b, 2, NULL, err, sizeof err) == 0);
    long wa, ha, wb, hb;
    REQUIRE(png_header_size(pa, &wa, &ha) && png_header_size(pb, &wb, &hb));
    int nw = font_width(FONT_REGULAR, 15, note);
    CHECK(nw > 800);
    CHECK(wb >= nw + 2 * 28 && wa < nw);   /* the note sets the width; without it the sheet is narrow */
    CHECK(hb >= ha + 15 && hb <= ha + 40);  /* one more line of text */
    remove(pa);
    remove(pb);
}
