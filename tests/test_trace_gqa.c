/* test_trace_gqa.c — what the trace records of the modern families: grouped-query
 * heads (kv_heads, trace_kv_head), a score scale other than 1/√d_k, and each
 * head's queries and keys before and after RoPE, written and read back. */
#include "check.h"
#include "core/fileio.h"
#include "trace/trace.h"
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static TraceMap *add(Trace *t, int heads, int kv, float scale) {
    static const char *tok[3] = {"Lily", "had", "a"};
    return trace_add_map(t, &(TraceMapSpec){.id = "decoder.0.masked_self", .stack = "decoder", .layer = 0,
                                            .kind = "masked_self", .queries = tok, .Tq = 3, .keys = tok, .Tk = 3,
                                            .d_k = 2, .Dv = 2, .mask_fill = -INFINITY, .n_heads = heads,
                                            .n_kv_heads = kv, .score_scale = scale});
}

TEST(trace_kv_heads_map_query_heads_to_their_group) {
    Trace t;
    trace_init(&t);
    TraceMap *m = add(&t, 8, 4, 0);
    REQUIRE(m);
    int want[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    for (int h = 0; h < 8; h++) CHECK_INT(trace_kv_head(m, h), want[h]);
    m = add(&t, 4, 0, 0);                    /* 0: every head its own */
    REQUIRE(m);
    CHECK_INT(m->n_kv_heads, 4);
    CHECK_INT(trace_kv_head(m, 3), 3);
    CHECK(add(&t, 6, 4, 0) == NULL);         /* 4 does not divide 6 */
    CHECK(add(&t, 2, 4, 0) == NULL);
    CHECK_INT(t.n_maps, 2);
    trace_free(&t);
}

TEST(trace_rope_and_groups_in_json) {
    Trace t;
    trace_init(&t);
    TraceMap *m = add(&t, 2, 1, 0.0625f);
    REQUIRE(m);
    float w[9] = {1, 0, 0, .5f, .5f, 0, .25f, .25f, .5f};
    float q[6] = {1, 2, 3, 4, 5, 6}, qr[6] = {1, 2, -4, 3, -6.5f, 5}, k[6] = {0, 1, 1, 0, 2, 2}, kr[6] = {0, 1, 0, 1, -2, 2};
    for (int h = 0; h < 2; h++) REQUIRE(trace_set_head(m, h, w, NULL, NULL, NULL, NULL) == 0);
    CHECK(trace_set_rope(m, 1, q, qr, k, kr) == 0);
    CHECK(trace_set_rope(m, 2, q, qr, k, kr) == -1);
    CHECK(trace_set_rope(m, 0, q, NULL, k, kr) == -1);
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/gqa.json", check_tmpdir());
    REQUIRE(trace_write_json(&t, path, err, sizeof err) == 0);
    size_t len;
    char *text = file_read_all(path, 1 << 20, &len, err, sizeof err);
    REQUIRE(text);
    cJSON *root = cJSON_Parse(text);
    free(text);
    REQUIRE(root);
    const cJSON *map = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "maps"), 0);
    CHECK_INT(cJSON_GetObjectItem(map, "kv_heads")->valueint, 1);
    CHECK_NEAR(cJSON_GetObjectItem(map, "score_scale")->valuedouble, 0.0625, 0);
    const cJSON *h0 = cJSON_GetArrayItem(cJSON_GetObjectItem(map, "heads"), 0);
    const cJSON *h1 = cJSON_GetArrayItem(cJSON_GetObjectItem(map, "heads"), 1);
    CHECK(!cJSON_GetObjectItem(h0, "q_rotated"));           /* not recorded for head 0 */
    const cJSON *qrot = cJSON_GetObjectItem(h1, "q_rotated"), *krot = cJSON_GetObjectItem(h1, "k");
    REQUIRE(qrot && krot);
    CHECK_INT(cJSON_GetArraySize(qrot), 3);
    CHECK_NEAR(cJSON_GetArrayItem(cJSON_GetArrayItem(qrot, 2), 0)->valuedouble, -6.5, 0);
    CHECK_NEAR(cJSON_GetArrayItem(cJSON_GetArrayItem(krot, 2), 1)->valuedouble, 2, 0);
    cJSON_Delete(root);

    /* a map without groups or scale writes neither member */
    Trace u;
    trace_init(&u);
    TraceMap *plain = add(&u, 2, 2, 0);
    REQUIRE(plain && trace_set_head(plain, 0, w, NULL, NULL, NULL, NULL) == 0 &&
            trace_set_head(plain, 1, w, NULL, NULL, NULL, NULL) == 0);
    REQUIRE(trace_write_json(&u, path, err, sizeof err) == 0);
    text = file_read_all(path, 1 << 20, &len, err, sizeof err);
    REQUIRE(text);
    CHECK(!strstr(text, "kv_heads") && !strstr(text, "score_scale") && !strstr(text, "q_rotated"));
    free(text);
    trace_free(&u);

    /* a non-finite rotated key is named */
    kr[3] = NAN;
    REQUIRE(trace_set_rope(m, 1, q, qr, k, kr) == 0);
    CHECK(trace_check_finite(&t, err, sizeof err) == -1 && strstr(err, "rotated keys"));
    trace_free(&t);
}

/* trace_check_finite finds every kind of non-finite float wherever it lies (the
 * whole-matrix test goes by exponent bits): NaN, +∞ and −∞ at the first, a
 * middle and the last cell; the largest float and denormals pass; −∞ passes in
 * the masked scores only where the mask hides the cell. */
TEST(trace_check_finite_finds_each_nonfinite_cell) {
    static const char *tok[37];
    for (int i = 0; i < 37; i++) tok[i] = "x";
    Trace t;
    trace_init(&t);
    TraceMap *m = trace_add_map(&t, &(TraceMapSpec){.id = "decoder.0.masked_self", .stack = "decoder", .layer = 0,
                                                    .kind = "masked_self", .queries = tok, .Tq = 37, .keys = tok,
                                                    .Tk = 37, .d_k = 2, .Dv = 2, .mask_fill = -INFINITY,
                                                    .n_heads = 1});
    REQUIRE(m);
    size_t n = 37 * 37;
    float *w = calloc(n, sizeof *w);
    REQUIRE(w);
    w[5] = 3.4028235e38f;   /* FLT_MAX */
    w[6] = 1e-45f;          /* a denormal */
    REQUIRE(trace_set_head(m, 0, w, NULL, NULL, NULL, NULL) == 0);
    char err[256];
    CHECK_INT(trace_check_finite(&t, err, sizeof err), 0);
    float bad[3] = {NAN, INFINITY, -INFINITY};
    size_t at[3] = {0, 37 * 20 + 17, n - 1};
    for (int b = 0; b < 3; b++)
        for (int a = 0; a < 3; a++) {
            m->heads[0].weights[at[a]] = bad[b];
            err[0] = '\0';
            CHECK_INT(trace_check_finite(&t, err, sizeof err), -1);
            char where[64];
            snprintf(where, sizeof where, "at row %zu, column %zu", at[a] / 37, at[a] % 37);
            CHECK(strstr(err, "weights") && strstr(err, where));
            m->heads[0].weights[at[a]] = 0.0f;
        }
    /* the same pass flags a weights matrix with +0.0, bit for bit, in every cell
     * above its diagonal (trace.bin's triangles), and still finds a bad cell
     * there or below it */
    unsigned char lower[2] = {9, 9};
    float *hw = m->heads[0].weights;
    CHECK_INT(trace_check_finite_lower(&t, lower, err, sizeof err), 0);
    CHECK(lower[0] == 0 && lower[1] == 0);           /* w[5], w[6] lie above the diagonal */
    hw[5] = hw[6] = 0.0f;
    CHECK_INT(trace_check_finite_lower(&t, lower, err, sizeof err), 0);
    CHECK(lower[0] == 1 && lower[1] == 0);           /* no norm_weighted: not a triangle */
    hw[37 * 3 + 30] = -0.0f;
    CHECK_INT(trace_check_finite_lower(&t, lower, err, sizeof err), 0);
    CHECK(lower[0] == 0);
    const float upper_bad[3] = {NAN, INFINITY, -INFINITY};
    for (int b = 0; b < 3; b++) {
        hw[37 * 3 + 30] = upper_bad[b];
        CHECK_INT(trace_check_finite_lower(&t, lower, err, sizeof err), -1);
        CHECK(strstr(err, "at row 3, column 30") != NULL);
    }
    hw[37 * 3 + 30] = 0.0f;
    hw[37 * 30 + 3] = NAN;                           /* below the diagonal, the upper part all +0.0 */
    CHECK_INT(trace_check_finite_lower(&t, lower, err, sizeof err), -1);
    CHECK(strstr(err, "at row 30, column 3") != NULL);
    free(w);
    trace_free(&t);
}
