/* test_words.c — pieces grouped into words and a map merged into them
 * (pipeline/words.h), against matrices merged by hand. */
#include "check.h"
#include "pipeline/links.h"
#include "pipeline/words.h"
#include <stdlib.h>
#include <string.h>

/* "<s> Lily b all . it": six pieces, five words (<s>, Lily, ball, ., it). */
static const char *const PIECES[6] = {"<s>", "Lily", "b", "all", ".", "it"};
static const float PIECE_W[6 * 6] = {   /* a causal head, rows sum to 1 */
    1.00f, 0,     0,     0,     0,     0,
    0.50f, 0.50f, 0,     0,     0,     0,
    0.20f, 0.30f, 0.50f, 0,     0,     0,
    0.10f, 0.20f, 0.30f, 0.40f, 0,     0,
    0.10f, 0.10f, 0.20f, 0.20f, 0.40f, 0,
    0.05f, 0.15f, 0.10f, 0.40f, 0.10f, 0.20f,
};

/* The piece trace: one causal map of one head. */
static void piece_trace(Trace *t) {
    unsigned char mask[36];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) mask[i * 6 + j] = j <= i;
    trace_init(t);
    trace_set_target(t, PIECES, 6);
    TraceMap *m = trace_add_map(t, &(TraceMapSpec){.id = "decoder.0.masked_self", .stack = "decoder", .layer = 0,
                                                  .kind = "masked_self", .queries = PIECES, .Tq = 6, .keys = PIECES,
                                                  .Tk = 6, .d_k = 2, .Dv = 2, .mask = mask, .n_heads = 1});
    trace_set_head(m, 0, PIECE_W, NULL, NULL, NULL, NULL);
}

TEST(words_merge_sums_key_pieces_and_averages_query_pieces) {
    const unsigned char begins[6] = {1, 1, 1, 0, 1, 1};
    Words w;
    char err[256];
    REQUIRE(words_from_begins(&w, PIECES, begins, 6, 6, err, sizeof err) == 0);
    CHECK_INT(w.n, 5);
    CHECK_INT(w.n_real, 5);
    CHECK(!strcmp(w.labels[2], "ball") && !strcmp(w.labels[3], ".") && !strcmp(w.labels[4], "it"));
    CHECK(w.word_of[2] == 2 && w.word_of[3] == 2 && w.first[3] == 4 && w.first[5] == 6);
    CHECK(words_merged(&w));
    Trace t, out;
    piece_trace(&t);
    REQUIRE(words_merge_trace(&w, &t, &out, err, sizeof err) == 0);
    REQUIRE(out.n_maps == 1 && out.maps[0].Tq == 5 && out.maps[0].Tk == 5);
    /* by hand: "ball" = (row b + row all) / 2 with "b"+"all" keys summed;
     * row b → .2 .3 .5 0 0; row all → .1 .2 (.3+.4) 0 0; mean .15 .25 .6 0 0.
     * "." → .1 .1 (.2+.2) .4 0; "it" → .05 .15 (.1+.4) .1 .2 */
    static const float want[25] = {
        1.00f, 0,     0,     0,     0,
        0.50f, 0.50f, 0,     0,     0,
        0.15f, 0.25f, 0.60f, 0,     0,
        0.10f, 0.10f, 0.40f, 0.40f, 0,
        0.05f, 0.15f, 0.50f, 0.10f, 0.20f,
    };
    CHECK_CLOSE("merged weights", out.maps[0].heads[0].weights, want, 25, 1e-6, 0);
    static const unsigned char want_mask[25] = {1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1};
    CHECK(!memcmp(out.maps[0].mask, want_mask, 25));   /* "ball" sees itself: "all" sees "b" */
    CHECK(!strcmp(out.maps[0].keys[2], "ball") && !strcmp(out.maps[0].queries[4], "it") && out.n_target == 5);
    /* the pronoun's link among words that can be antecedents: in pieces "all"
     * reads as a function word and "b" has 0.10, so it goes to "Lily" (0.15);
     * in words to "ball" (0.10 + 0.40) */
    LinksAsk ask = {.coref = &(CorefHead){.layer = -1, .head = -1, .accuracy = -1}, .focus_map = -1, .prefer_content = 1};
    LinksFound *f = NULL;
    REQUIRE(links_find(&t, PIECES, 6, &ask, &f) == 1);
    CHECK(f[0].q == 5 && f[0].view.link.key == 1);
    CHECK_NEAR(f[0].view.link.weight, 0.15, 1e-6);
    free(f);
    REQUIRE(links_find(&out, (const char *const *)w.labels, w.n, &ask, &f) == 1);
    CHECK(f[0].q == 4 && f[0].view.link.key == 2);
    CHECK_NEAR(f[0].view.link.weight, 0.50, 1e-6);
    free(f);
    trace_free(&out);
    trace_free(&t);
    words_free(&w);
}

TEST(words_of_input_reads_spaces_signs_and_specials_from_the_spans) {
    /* "Tom gave it,then ballroom." with <s> before and one pad after; " gave"
     * holds its space, "it" does not; "then" touches "," yet begins a word. */
    const char *text = "Tom gave it,then ballroom.";
    char *tokens[] = {"<s>", "Tom", "gave", "it", ",", "then", "ball", "room", ".", "<pad>"};
    int ids[10] = {0}, start[10] = {0, 0, 3, 9, 11, 12, 16, 21, 25, 26}, end[10] = {0, 3, 8, 11, 12, 16, 21, 25, 26, 26};
    HfInput in = {.n = 10, .n_real = 9, .ids = ids, .tokens = tokens, .start = start, .end = end};
    Words w;
    char err[256];
    REQUIRE(words_of_input(&w, NULL, &in, text, err, sizeof err) == 0);
    static const char *const want[] = {"<s>", "Tom", "gave", "it", ",", "then", "ballroom", ".", "<pad>"};
    CHECK_INT(w.n, 9);
    CHECK_INT(w.n_real, 8);
    for (int k = 0; k < w.n && k < 9; k++)
        if (strcmp(w.labels[k], want[k])) check_fail(__FILE__, __LINE__, "word %d is '%s', expected '%s'", k, w.labels[k], want[k]);
    CHECK(w.word_of[6] == 6 && w.word_of[7] == 6 && w.word_of[8] == 7 && w.word_of[9] == 8);
    words_free(&w);
}

TEST(words_merge_refuses_a_map_of_other_tokens) {
    const unsigned char begins[6] = {1, 1, 1, 0, 1, 1};
    Words w;
    char err[256] = "";
    REQUIRE(words_from_begins(&w, PIECES, begins, 5, 5, err, sizeof err) == 0);   /* five pieces, the map has six */
    Trace t, out;
    piece_trace(&t);
    CHECK(words_merge_trace(&w, &t, &out, err, sizeof err) == -1 && strstr(err, "not the 5 pieces"));
    trace_free(&t);
    words_free(&w);
}
