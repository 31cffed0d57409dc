/* test_referents.c — could anything in the sentence be the pronoun's antecedent
 * (net/referents.h), with the shipped lexicon of samples/corpus. */
#include "check.h"
#include "net/referents.h"
#include <string.h>

static int possible(const Referents *r, const char *const *labels, int q) {
    int n = 0;
    while (labels[n]) n++;
    return referents_possible(r, labels, n, q);
}

TEST(referents_who_can_be_she_he_it_they) {
    Referents r;
    char err[256];
    REQUIRE(referents_load(&r, "samples/corpus", err, sizeof err) == 0);
    const char *book[] = {"She", "reads", "a", "book", ".", "<eos>", NULL};
    CHECK_INT(possible(&r, book, 0), 0);                      /* a book is no "she" */
    const char *girl[] = {"The", "girl", "said", "she", "was", "tired", ".", "<eos>", NULL};
    CHECK_INT(possible(&r, girl, 3), 1);
    const char *boy[] = {"the", "girl", "saw", "him", ".", "<eos>", NULL};
    CHECK_INT(possible(&r, boy, 3), 0);                       /* "girl" is female */
    const char *animal[] = {"the", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired",
                            ".", "<eos>", NULL};
    CHECK_INT(possible(&r, animal, 7), 1);
    const char *pizza[] = {"she", "ate", "the", "pizza", "with", "mushrooms", ".", "<eos>", NULL};
    CHECK_INT(possible(&r, pizza, 0), 0);
    const char *they1[] = {"the", "cat", "ran", "because", "they", "were", "scared", ".", "<eos>", NULL};
    CHECK_INT(possible(&r, they1, 4), 0);                     /* one cat is no "they" */
    const char *they2[] = {"the", "cat", "and", "the", "dog", "ran", "because", "they", "were", "scared", ".", NULL};
    CHECK_INT(possible(&r, they2, 7), 1);                     /* two are */
    const char *cats[] = {"the", "cats", "ran", "because", "they", "were", "scared", ".", NULL};
    CHECK_INT(possible(&r, cats, 4), 1);
    const char *name[] = {"<unk> Zoe", "said", "she", "was", "tired", ".", NULL};
    CHECK_INT(possible(&r, name, 2), 1);                      /* a name may be anyone */
    const char *sign[] = {"<unk> “", "she", "reads", "a", "book", ".", NULL};
    CHECK_INT(possible(&r, sign, 1), 0);                      /* a sign the model never read is still a sign */
    const char *unknown[] = {"she", "met", "the", "nurse", ".", NULL};
    CHECK_INT(possible(&r, unknown, 0), 1);                   /* a word the lexicon lacks may be anything */
    const char *none[] = {"the", "cat", "sleeps", ".", NULL};
    CHECK_INT(possible(&r, none, 1), 1);                      /* no pronoun: nothing to claim */
    /* issue 39: agreement read from the sentence, no list of training antecedents */
    const char *parents[] = {"My", "parents", "are", "tired", "because", "they", "worked", "all", "day", ".", NULL};
    CHECK_INT(possible(&r, parents, 5), 1);
    int sure = 0;
    CHECK_INT(referents_can_be(&r, parents, 10, 5, 1, &sure), 1);   /* after "My", in -s: a plural noun */
    CHECK_INT(sure, 1);
    CHECK_INT(referents_can_be(&r, parents, 10, 5, 8, NULL), 0);    /* "all day": one day */
    CHECK_INT(referents_can_be(&r, parents, 10, 5, 6, NULL), 0);    /* "they worked": a verb */
    CHECK_INT(referents_can_be(&r, parents, 10, 5, 5, NULL), 0);    /* itself */
    const char *late[] = {"she", "was", "late", ".", NULL};
    CHECK_INT(possible(&r, late, 0), 0);                      /* after "was": no noun */
    const char *test[] = {"The", "teacher", "gave", "them", "a", "difficult", "test", ".", NULL};
    CHECK_INT(possible(&r, test, 3), 0);                      /* two singulars not joined by "and" */
    const char *minh[] = {"<unk> Minh", "and", "<unk> Lan", "went", "home", "because", "they", "were", "tired", NULL};
    CHECK_INT(referents_can_be(&r, minh, 9, 6, 0, &sure), 1);
    CHECK_INT(sure, 1);                                       /* a name, written with a capital */
    CHECK(referents_function_word("the") && referents_function_word("they") && !referents_function_word("cat"));
    CHECK(referents_is_sign("“") && referents_is_sign("...") && !referents_is_sign("a") && !referents_is_sign("3"));
    referents_free(&r);
    referents_free(&r);   /* twice: a zeroed one is fine */
}
