/* test_links.c — what `run` says of a pronoun's link (pipeline/links.h): "no
 * antecedent in the sentence" only when no word of it can be one by agreement
 * (net/referents.h), never from a list of training antecedents; a head that
 * looks at a word the rule does not take still shows its link, and the rule's
 * word is named.  The heads here are written by hand, so the truth is known. */
#include "check.h"
#include "pipeline/links.h"
#include <string.h>

/* A trace of one encoder.0.self map with one head whose row q puts all its
 * weight on key k (every other row uniform). */
static void one_link(Trace *t, const char *const *tok, int n, int q, int k) {
    trace_init(t);
    trace_set_source(t, tok, n);
    TraceMap *m = trace_add_map(t, &(TraceMapSpec){.id = "encoder.0.self", .stack = "encoder", .layer = 0,
                                                   .kind = "self", .queries = tok, .Tq = n, .keys = tok, .Tk = n,
                                                   .d_k = 1, .Dv = 1, .n_heads = 1});
    float w[32 * 32];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) w[i * n + j] = i == q ? (j == k ? 1.0f : 0.0f) : 1.0f / (float)n;
    trace_set_head(m, 0, w, NULL, NULL, NULL, NULL);
}

static LinksView view(const char *const *tok, int q, int k, const Referents *r) {
    int n = 0;
    while (tok[n]) n++;
    Trace t;
    one_link(&t, tok, n, q, k);
    CorefHead c = {.layer = 0, .head = 0, .accuracy = 0.9, .taught = 1, .referents = r};
    LinksView v = links_view(&t, q, 1, &c, -1, 0);
    trace_free(&t);
    return v;
}

TEST(links_no_antecedent_only_when_nothing_agrees) {
    Referents r;
    char err[256];
    REQUIRE(referents_load(&r, "samples/corpus", err, sizeof err) == 0);
    /* the sentences of issue 39: the head points at the antecedent, which no
     * training list named; it is shown as a link */
    const char *parents[] = {"My", "parents", "are", "tired", "because", "they", "worked", "all", "day", ".", "<eos>", NULL};
    LinksView v = view(parents, 5, 1, &r);
    CHECK_INT(v.no_antecedent, 0);
    CHECK_INT(v.odd, LINKS_FITS);
    CHECK_INT(v.link.key, 1);
    CHECK_INT(v.fit_key, 1);
    const char *friends[] = {"My", "friends", "are", "happy", "because", "they", "won", "the", "game", ".", NULL};
    v = view(friends, 5, 1, &r);
    CHECK_INT(v.no_antecedent, 0);
    CHECK_INT(v.odd, LINKS_FITS);
    const char *neighbors[] = {"Our", "neighbors", "were", "angry", "because", "they", "heard", "a", "noise", ".", NULL};
    v = view(neighbors, 5, 1, &r);
    CHECK_INT(v.no_antecedent, 0);
    CHECK_INT(v.odd, LINKS_FITS);
    /* the head looks at a word that does not agree: the link is shown, the rule says why */
    v = view(parents, 5, 8, &r);   /* "all day": one day is no "they" */
    CHECK_INT(v.no_antecedent, 0);
    CHECK_INT(v.odd, LINKS_ODD_DISAGREES);
    CHECK_INT(v.link.key, 8);
    CHECK_INT(v.odd_key, 8);
    CHECK_INT(v.fit_key, 1);
    v = view(parents, 5, 6, &r);   /* "they worked": a verb */
    CHECK_INT(v.odd, LINKS_ODD_DISAGREES);
    v = view(parents, 5, 9, &r);   /* a sign */
    CHECK_INT(v.no_antecedent, 0);
    CHECK_INT(v.odd, LINKS_ODD_NO_WORD);
    v = view(parents, 5, 5, &r);   /* itself */
    CHECK_INT(v.no_antecedent, 0);
    CHECK_INT(v.odd, LINKS_ODD_SELF);
    CHECK_INT(v.fit_key, 1);
    /* names: "Minh and Lan … they", the nearer of the two joined by "and" */
    const char *names[] = {"<unk> Minh", "and", "<unk> Lan", "went", "to", "the", "market", "because", "they", "were",
                           "hungry", ".", NULL};
    v = view(names, 8, 10, &r);
    CHECK_INT(v.no_antecedent, 0);
    CHECK_INT(v.odd, LINKS_ODD_DISAGREES);
    CHECK_INT(v.fit_key, 2);
    /* nothing agrees: then, and only then, no antecedent */
    const char *book[] = {"She", "reads", "a", "book", ".", "<eos>", NULL};
    v = view(book, 0, 3, &r);
    CHECK_INT(v.no_antecedent, 1);
    CHECK_INT(v.none_fits, 1);
    CHECK_INT(v.fit_key, -1);
    const char *late[] = {"she", "was", "late", ".", NULL};
    v = view(late, 0, 2, &r);
    CHECK_INT(v.no_antecedent, 1);
    referents_free(&r);
}

TEST(links_rule_note_names_the_word) {
    Referents r;
    char err[256], en[600], vi[600], brief[160];
    REQUIRE(referents_load(&r, "samples/corpus", err, sizeof err) == 0);
    const char *tok[] = {"My", "parents", "are", "tired", "because", "they", "worked", "all", "day", ".", NULL};
    Trace t;
    one_link(&t, tok, 10, 5, 8);
    CorefHead c = {.layer = 0, .head = 0, .accuracy = 0.9, .taught = 1, .referents = &r};
    LinksView v = links_view(&t, 5, 1, &c, -1, 0);
    links_rule_note(&v, &t, 5, "they", en, sizeof en, vi, sizeof vi, brief, sizeof brief);
    CHECK(strstr(en, "“day” cannot be what “they” refers to") && strstr(en, "“parents”"));
    CHECK(strstr(vi, "“parents”") != NULL);
    CHECK(strstr(brief, "day") != NULL);
    trace_free(&t);
    one_link(&t, tok, 10, 5, 1);
    v = links_view(&t, 5, 1, &c, -1, 0);
    links_rule_note(&v, &t, 5, "they", en, sizeof en, vi, sizeof vi, brief, sizeof brief);
    CHECK(!en[0] && !vi[0] && !brief[0]);   /* the rule takes "parents": nothing to add */
    trace_free(&t);
    referents_free(&r);
}
