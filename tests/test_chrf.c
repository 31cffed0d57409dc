/* test_chrf.c — chrF (train/chrf.h) on cases computed by hand from the
 * definition: n-gram precision and recall per order, averaged over the orders
 * both texts have, then F with β = 2. */
#include "check.h"
#include "train/chrf.h"

static double one(const char *hyp, const char *ref) {
    ChrfStats s;
    chrf_stats_init(&s);
    const char *refs[1] = {ref};
    return chrf_add(&s, hyp, refs, 1) == 0 ? chrf_score(&s, 2.0) : -1;
}

TEST(chrf_hand_computed_sentences) {
    CHECK_NEAR(one("le chat", "le chat"), 100.0, 1e-9);
    CHECK_NEAR(one("l' école", "l'école"), 100.0, 1e-9);           /* white space is left out */
    /* abc/abd: P = R = (2/3 + 1/2 + 0) / 3 = 7/18 (orders 4-6 absent); F = P when P = R */
    CHECK_NEAR(one("abc", "abd"), 100.0 * 7 / 18, 1e-9);
    /* ab/abcd: P = (1 + 1)/2 = 1, R = (2/4 + 1/3)/2 = 5/12; F = 5PR/(4P+R) = 25/53 */
    CHECK_NEAR(one("ab", "abcd"), 100.0 * 25 / 53, 1e-9);
    /* aaa/aa: matches count min(times in hyp, times in ref): P = (2/3 + 1/2)/2, R = 1 */
    CHECK_NEAR(one("aaa", "aa"), 87.5, 1e-9);
    /* code points, not bytes: ă is not a, so ăn/an: P = R = (1/2 + 0)/2 */
    CHECK_NEAR(one("ăn", "an"), 25.0, 1e-9);
    CHECK_NEAR(one("xyz", "abc"), 0.0, 1e-12);
}

TEST(chrf_corpus_level_and_best_reference) {
    ChrfStats s;
    chrf_stats_init(&s);
    const char *r1[1] = {"abcd"}, *r2[1] = {"cd"};
    CHECK_INT(chrf_add(&s, "abcd", r1, 1), 0);
    CHECK_INT(chrf_add(&s, "ab", r2, 1), 0);
    /* counts summed first: order 1 4/6, order 2 3/4, orders 3 and 4 1/1 (5, 6 absent):
     * P = R = 41/48 — not the mean of the sentences' scores (50) */
    CHECK_NEAR(chrf_score(&s, 2.0), 100.0 * 41 / 48, 1e-9);
    CHECK_INT((int)s.sentences, 2);

    ChrfStats b;
    chrf_stats_init(&b);
    const char *refs[3] = {"xyz", "abd", "abx"};
    CHECK_INT(chrf_add(&b, "abc", refs, 3), 1);                  /* abd and abx tie: the first */
    CHECK_NEAR(chrf_score(&b, 2.0), 100.0 * 7 / 18, 1e-9);
    CHECK_NEAR(b.ref[1], 3.0, 0);
}

TEST(chrf_bad_input_adds_nothing) {
    ChrfStats s;
    chrf_stats_init(&s);
    const char *bad[1] = {"caf\xe9"};
    CHECK_INT(chrf_add(&s, "cafe", bad, 1), -1);
    CHECK_INT(chrf_add(&s, "cafe", bad, 0), -1);
    CHECK_INT((int)s.sentences, 0);
    CHECK_NEAR(chrf_score(&s, 2.0), 0.0, 0);
}
