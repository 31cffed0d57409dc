/* test_page.c — the interactive page's writer (render/page.h): the embedded
 * JSON reads back with cJSON (an independent parser) to the trace's numbers,
 * tokens cannot close the <script> block, matrices decode (base64 by hand) to
 * the trace's exact floats, and the views land at
 * the offset given, between the gallery's header and its pictures. */
#include "check.h"
#include "core/fileio.h"
#include "render/page.h"
#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A 2×2 custom map whose tokens try to break out of the page. */
static TraceMap *tricky_map(Trace *t) {
    static const char *const q[2] = {"</script><b>", "a\"b&\\"};
    static const char *const k[2] = {"x", "\xc3\xa9t\xc3\xa9"};
    static const unsigned char mask[4] = {1, 0, 1, 1};
    TraceMapSpec spec = {.id = "custom", .stack = "custom", .kind = "custom", .queries = q, .Tq = 2,
                         .keys = k, .Tk = 2, .d_k = 4, .Dv = 3, .mask = mask, .mask_fill = -INFINITY, .n_heads = 1};
    TraceMap *m = trace_add_map(t, &spec);
    const float w[4] = {1.0f, 0.0f, 0.123456789f, 0.876543211f};
    const float sc[4] = {2.0f, 5.0f, -1.5f, 0.25f};
    const float ms[4] = {1.0f, -INFINITY, -0.75f, 0.125f};
    const float out[6] = {1, 2, 3, 4, 5, 6};
    if (m && trace_set_head(m, 0, w, sc, sc, ms, out) != 0) return NULL;
    return m;
}

/* A matrix the page embeds, {rows, cols, f32: base64 of little-endian
 * float32}, decoded here by RFC 4648's table into x (rows × cols); with
 * "lower": true the values are row r's first r + 1, the rest 0.  0, or -1
 * when its shape or text is not that. */
static int matrix_of(const cJSON *j, int rows, int cols, float *x) {
    static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const cJSON *s = cJSON_GetObjectItem(j, "f32");
    if (!cJSON_IsString(s) || cJSON_GetObjectItem(j, "rows")->valueint != rows ||
        cJSON_GetObjectItem(j, "cols")->valueint != cols)
        return -1;
    unsigned char bytes[64];
    size_t n = 0, len = strlen(s->valuestring);
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len && s->valuestring[i] != '='; i++) {
        const char *at = strchr(A, s->valuestring[i]);
        if (!at || !*at) return -1;
        acc = acc << 6 | (unsigned)(at - A);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (n == sizeof bytes) return -1;
            bytes[n++] = (unsigned char)(acc >> bits);
        }
    }
    int lower = cJSON_IsTrue(cJSON_GetObjectItem(j, "lower"));
    if (lower && rows != cols) return -1;
    if (n != (lower ? (size_t)rows * (rows + 1) / 2 : (size_t)rows * cols) * 4) return -1;
    for (int i = 0, k = 0; i < rows * cols; i++) {
        if (lower && i % cols > i / cols) { x[i] = 0.0f; continue; }
        uint32_t u = bytes[4 * k] | (uint32_t)bytes[4 * k + 1] << 8 | (uint32_t)bytes[4 * k + 2] << 16 |
                     (uint32_t)bytes[4 * k + 3] << 24;
        memcpy(&x[i], &u, 4);
        k++;
    }
    return 0;
}

TEST(page_data_reads_back_with_cjson) {
    Trace t;
    trace_init(&t);
    REQUIRE(tricky_map(&t) != NULL);
    PageData pd;
    page_data_init(&pd);
    char err[256] = "";
    PageFocus f = {0, 0, 1};
    REQUIRE(page_data_add(&pd, &t, "t.json", NULL, &f, err, sizeof err) == 0);
    REQUIRE(pd.n == 1);
    CHECK(strstr(pd.json[0], "</") == NULL);   /* cannot close the <script> block */
    cJSON *d = cJSON_Parse(pd.json[0]);
    REQUIRE(d != NULL);
    cJSON *m = cJSON_GetArrayItem(cJSON_GetObjectItem(d, "maps"), 0);
    CHECK(!strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "queries"), 0)->valuestring, "</script><b>"));
    CHECK(!strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "queries"), 1)->valuestring, "a\"b&\\"));
    CHECK(!strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "keys"), 1)->valuestring, "\xc3\xa9t\xc3\xa9"));
    CHECK(!strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(m, "mask"), 0)->valuestring, "10"));
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(d, "trace_file")));
    CHECK_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(d, "focus"), "query")->valueint, 1);
    cJSON *h = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "heads"), 0);
    float w[4], ms[4], out[6];
    cJSON *wj = cJSON_GetObjectItem(h, "weights");
    /* 1.0f is the bytes 00 00 80 3F: base64 "AACA" by hand; the weights' upper
     * cell is 0, so only the lower half is embedded (1, 0.123…, 0.876…) */
    CHECK(!strncmp(cJSON_GetObjectItem(wj, "f32")->valuestring, "AACA", 4));
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(wj, "lower")));
    CHECK(strlen(cJSON_GetObjectItem(wj, "f32")->valuestring) == 16);   /* 12 bytes */
    CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(h, "masked"), "lower") == NULL);   /* its upper cell is −∞ */
    CHECK(matrix_of(wj, 2, 2, w) == 0);
    CHECK(w[0] == 1.0f && w[1] == 0.0f && w[2] == 0.123456789f && w[3] == 0.876543211f);   /* exact */
    CHECK(matrix_of(cJSON_GetObjectItem(h, "masked"), 2, 2, ms) == 0);
    CHECK(ms[0] == 1.0f && isinf(ms[1]) && ms[1] < 0 && ms[2] == -0.75f);
    CHECK(matrix_of(cJSON_GetObjectItem(h, "output"), 2, 3, out) == 0 && out[5] == 6.0f);
    CHECK_INT(cJSON_GetObjectItem(d, "maps_left_out")->valueint, 0);
    cJSON_Delete(d);
    page_data_free(&pd);
    page_data_free(&pd);   /* twice: a freed PageData is a zeroed one */
    trace_free(&t);
}

TEST(page_write_puts_the_views_between_header_and_pictures) {
    Trace t;
    trace_init(&t);
    REQUIRE(tricky_map(&t) != NULL);
    PageData pd;
    page_data_init(&pd);
    char err[256] = "", path[4200];
    REQUIRE(page_data_add(&pd, &t, "t.json", "t.json", NULL, err, sizeof err) == 0);
    HtmlPage g;
    html_page_begin(&g, "title", NULL);
    html_raw(&g, "<p>HEADER</p>\n");
    size_t at = g.len;
    html_raw(&g, "<figure>PICTURES</figure>\n");
    snprintf(path, sizeof path, "%s/page.html", check_tmpdir());
    REQUIRE(page_write(&g, at, &pd, path, err, sizeof err) == 0);
    size_t n = 0;
    char *html = file_read_all(path, 1u << 24, &n, err, sizeof err);
    REQUIRE(html != NULL);
    const char *a = strstr(html, "HEADER"), *b = strstr(html, "id=\"attnviz-app\""),
               *c = strstr(html, "id=\"attnviz-data-0\""), *e = strstr(html, "PICTURES");
    CHECK(a && b && c && e && a < b && b < c && c < e);
    CHECK(strstr(html, "</html>") != NULL && strstr(html, "http") == NULL);
    free(html);
    /* an offset past the end is refused, the gallery freed */
    html_page_begin(&g, "title", NULL);
    CHECK(page_write(&g, g.len + 1, &pd, path, err, sizeof err) == -1);
    CHECK(g.buf == NULL);
    page_data_free(&pd);
    trace_free(&t);
}

/* The page's own block: the colour maps as hex, 256 viridis colours from
 * #440154 to #FDE725 (the published ends) and 1021 diverging ones whose every
 * 102nd is one of ColorBrewer RdBu's eleven; a comparison's sides and scale; no
 * focus row unless one is given. */
TEST(page_block_carries_the_pictures_colour_maps) {
    Trace t;
    trace_init(&t);
    REQUIRE(tricky_map(&t) != NULL);
    PageData pd;
    page_data_init(&pd);
    char err[256] = "", path[4200];
    REQUIRE(page_data_add(&pd, &t, "A", NULL, NULL, err, sizeof err) == 0);
    REQUIRE(page_data_add(&pd, &t, "B", NULL, NULL, err, sizeof err) == 0);
    page_data_compare(&pd, 0.5f);
    HtmlPage g;
    html_page_begin(&g, "title", NULL);
    snprintf(path, sizeof path, "%s/page-block.html", check_tmpdir());
    REQUIRE(page_write(&g, g.len, &pd, path, err, sizeof err) == 0);
    size_t n = 0;
    char *html = file_read_all(path, 1u << 24, &n, err, sizeof err);
    REQUIRE(html != NULL);
    char *at = strstr(html, "<script type=\"application/json\" id=\"attnviz-page\">");
    REQUIRE(at != NULL);
    at = strchr(at, '>') + 1;
    char *end = strstr(at, "</script>");
    REQUIRE(end != NULL);
    *end = '\0';
    cJSON *b = cJSON_Parse(at);
    REQUIRE(b != NULL);
    cJSON *cm = cJSON_GetObjectItem(b, "colormaps");
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(cm, "viridis"));
    const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(cm, "diverging"));
    REQUIRE(v && d);
    CHECK_INT((int)strlen(v), 256 * 6);
    CHECK_INT((int)strlen(d), 1021 * 6);
    CHECK(!strncmp(v, "440154", 6) && !strncmp(v + 255 * 6, "fde725", 6));
    static const char *const rdbu[11] = {"053061", "2166ac", "4393c3", "92c5de", "d1e5f0", "f7f7f7",
                                         "fddbc7", "f4a582", "d6604d", "b2182b", "67001f"};
    for (int i = 0; i < 11; i++) CHECK(!strncmp(d + 102 * i * 6, rdbu[i], 6));
    cJSON *c = cJSON_GetObjectItem(b, "compare");
    REQUIRE(c != NULL);
    CHECK_INT(cJSON_GetObjectItem(c, "a")->valueint, 0);
    CHECK_INT(cJSON_GetObjectItem(c, "b")->valueint, 1);
    CHECK_NEAR(cJSON_GetObjectItem(c, "scale")->valuedouble, 0.5, 1e-9);
    cJSON_Delete(b);
    cJSON *d0 = cJSON_Parse(pd.json[0]);
    REQUIRE(d0 != NULL);
    CHECK_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(d0, "focus"), "query")->valueint, -1);
    cJSON_Delete(d0);
    free(html);
    page_data_free(&pd);
    trace_free(&t);
}
