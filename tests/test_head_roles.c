/* test_head_roles.c — head roles (pipeline/head_roles.h) on a crafted 5-token
 * causal map whose scores are computed by hand below, padding left out, the
 * role chosen by the thresholds, and the trace member written as JSON. */
#include "check.h"
#include "pipeline/head_roles.h"
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows t = 0 … 4, keys 0 … 4, causal (row t sees keys 0 … t). */
static const float W[25] = {
    1.0f, 0, 0, 0, 0,
    0.5f, 0.5f, 0, 0, 0,
    0.2f, 0.6f, 0.2f, 0, 0,
    0.1f, 0.1f, 0.7f, 0.1f, 0,
    0.4f, 0.1f, 0.1f, 0.3f, 0.1f,
};

static TraceMap *crafted(Trace *t, int Tk_pad) {
    static const char *tok[6] = {"<s>", "a", "b", "a", "b", "<pad>"};
    int T = 5 + Tk_pad;
    unsigned char mask[64];
    float w[64] = {0};
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            mask[i * T + j] = j <= i && j < 5;   /* a pad key is hidden from every row */
            if (i < 5 && j < 5) w[i * T + j] = W[i * 5 + j];
        }
    for (int i = 5; i < T; i++) w[i * T + 0] = 1.0f;
    TraceMap *m = trace_add_map(t, &(TraceMapSpec){.id = "decoder.0.masked_self", .stack = "decoder", .layer = 0,
                                                   .kind = "masked_self", .queries = tok, .Tq = T, .keys = tok, .Tk = T,
                                                   .d_k = 2, .Dv = 2, .mask = mask, .mask_fill = -INFINITY, .n_heads = 1});
    if (m && trace_set_head(m, 0, w, NULL, NULL, NULL, NULL)) return NULL;
    return m;
}

/* By hand, over rows 1 … 4:
 *   previous  (0.5 + 0.6 + 0.7 + 0.3) / 4 = 0.525
 *   first     (0.5 + 0.2 + 0.1 + 0.4) / 4 = 0.3
 *   local     keys |j − t| <= 2: (1.0 + 1.0 + 0.9 + 0.5) / 4 = 0.85
 *   entropy   H/log(t+1): row 1 ln2/ln2 = 1; row 2 0.950271/ln3 = 0.864974;
 *             row 3 0.940448/ln4 = 0.678390; row 4 1.418484/ln5 = 0.881353
 *             mean 0.856179
 * Probe [BOS] a b a b (offset 1, n 2), rows 3 and 4:
 *   duplicate (W[3][1] + W[4][2]) / 2 = (0.1 + 0.1) / 2 = 0.1
 *   induction (W[3][2] + W[4][3]) / 2 = (0.7 + 0.3) / 2 = 0.5 */
TEST(head_roles_scores_of_a_crafted_map_by_hand) {
    for (int pad = 0; pad <= 1; pad++) {   /* a padded key changes nothing */
        Trace t;
        trace_init(&t);
        TraceMap *m = crafted(&t, pad);
        REQUIRE(m);
        HeadRoleScores s = {0};
        head_roles_text_scores(m, 0, 0, &s);
        CHECK_NEAR(s.previous, 0.525, 1e-6);
        CHECK_NEAR(s.first, 0.3, 1e-6);
        CHECK_NEAR(s.local, 0.85, 1e-6);
        CHECK_NEAR(s.entropy, 0.856179, 1e-5);
        head_roles_probe_scores(m, 0, 1, 2, &s);
        CHECK_NEAR(s.duplicate, 0.1, 1e-6);
        CHECK_NEAR(s.induction, 0.5, 1e-6);
        /* induction reaches 0.4, previous token 0.525 is higher: it wins */
        CHECK_INT(head_roles_classify(&s), HEAD_ROLE_PREVIOUS);
        trace_free(&t);
    }
}

TEST(head_roles_n_real_cuts_the_text) {
    Trace t;
    trace_init(&t);
    TraceMap *m = crafted(&t, 0);
    REQUIRE(m);
    HeadRoleScores s = {0};
    head_roles_text_scores(m, 0, 3, &s);   /* rows 1, 2 over keys 0 … 2 */
    CHECK_NEAR(s.previous, (0.5 + 0.6) / 2, 1e-6);
    CHECK_NEAR(s.first, (0.5 + 0.2) / 2, 1e-6);
    trace_free(&t);
}

TEST(head_roles_classify_by_threshold) {
    HeadRoleScores s = {.previous = 0.39f, .first = 0.49f, .duplicate = 0.39f, .induction = 0.39f, .local = 0.7f,
                        .entropy = 0.4f};
    CHECK_INT(head_roles_classify(&s), HEAD_ROLE_LOCAL);      /* none reached, 0.7 within the window */
    s.local = 0.69f;
    CHECK_INT(head_roles_classify(&s), HEAD_ROLE_DIFFUSE);    /* spread: entropy 0.4 of its most */
    s.entropy = 0.39f;
    CHECK_INT(head_roles_classify(&s), HEAD_ROLE_FOCUSED);    /* a few keys beyond the window */
    s.first = 0.5f;
    CHECK_INT(head_roles_classify(&s), HEAD_ROLE_FIRST);      /* at the threshold counts */
    s.induction = 0.6f;
    CHECK_INT(head_roles_classify(&s), HEAD_ROLE_INDUCTION);  /* the highest passing score */
    s.duplicate = 0.61f;
    CHECK_INT(head_roles_classify(&s), HEAD_ROLE_DUPLICATE);
    CHECK(!strcmp(head_roles_key(HEAD_ROLE_FIRST), "first_token"));
    CHECK(!strcmp(head_roles_name(HEAD_ROLE_FIRST), "sink"));
}
