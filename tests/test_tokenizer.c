/* test_tokenizer.c — the tokenizer and vocabulary (src/tokenizer.h). */
#include "check.h"
#include "tokenize/tokenizer.h"
#include <stdlib.h>
#include <string.h>

/* Splits text and compares with the expected tokens (a NULL-terminated list);
 * prints both on mismatch. */
static void check_split(const char *file, int line, const char *text, const char *const *want) {
    Tokens t;
    char err[256] = "";
    int n = 0;
    while (want[n]) n++;
    if (tokenizer_split(&t, text, err, sizeof err)) {
        check_fail(file, line, "split(\"%s\") failed: %s", text, err);
        return;
    }
    int same = t.n == n;
    for (int i = 0; same && i < n; i++) same = !strcmp(t.tok[i], want[i]);
    if (!same) {
        char got[1024] = "", exp[1024] = "";
        for (int i = 0; i < t.n; i++) { strncat(got, "[", 1000 - strlen(got)); strncat(got, t.tok[i], 1000 - strlen(got)); strncat(got, "]", 1000 - strlen(got)); }
        for (int i = 0; i < n; i++) { strncat(exp, "[", 1000 - strlen(exp)); strncat(exp, want[i], 1000 - strlen(exp)); strncat(exp, "]", 1000 - strlen(exp)); }
        check_fail(file, line, "split(\"%s\") = %s, expected %s", text, got, exp);
    }
    tokens_free(&t);
}
#define SPLIT(text, ...) do { const char *const w_[] = { __VA_ARGS__, NULL }; \
    check_split(__FILE__, __LINE__, text, w_); } while (0)

/* Expects failure and a message containing `needle`. */
static void check_split_fails(const char *file, int line, const char *text, const char *needle) {
    Tokens t = { 5, (char **)1 };  /* garbage: split must overwrite it */
    char err[256] = "";
    int rc = tokenizer_split(&t, text, err, sizeof err);
    if (rc != -1) check_fail(file, line, "split of a bad sentence returned %d, expected -1", rc);
    else if (!strstr(err, needle)) check_fail(file, line, "message \"%s\" lacks \"%s\"", err, needle);
    if (rc == -1 && (t.n != 0 || t.tok != NULL)) check_fail(file, line, "failed split left tokens behind");
    if (rc == 0) tokens_free(&t);
}
#define SPLIT_FAILS(text, needle) check_split_fails(__FILE__, __LINE__, text, needle)

TEST(tokenizer_basic_lowercase_and_punctuation) {
    SPLIT("The animal didn't cross the street because it was too tired.",
          "the", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired", ".");
    SPLIT("Hello, world! Really? Yes; no: (maybe) \"quoted\"",
          "hello", ",", "world", "!", "really", "?", "yes", ";", "no", ":", "(", "maybe", ")", "\"", "quoted", "\"");
    SPLIT("wait... what…", "wait", "...", "what", "…");
    SPLIT("  I   am\thappy .\n", "i", "am", "happy", ".");
    SPLIT("«Bonjour»", "«", "bonjour", "»");
}

TEST(tokenizer_contractions) {
    SPLIT("It's fine, it wasn't me, I didn't.", "it's", "fine", ",", "it", "wasn't", "me", ",", "i", "didn't", ".");
    SPLIT("They're here; don't go.", "they're", "here", ";", "don't", "go", ".");
    /* curly apostrophes (’ U+2019, ‘ U+2018) are normalised to ' */
    SPLIT("The animal didn\xE2\x80\x99t cross", "the", "animal", "didn't", "cross");
    SPLIT("it\xE2\x80\x98s", "it's");
    /* curly double quotes become " */
    SPLIT("\xE2\x80\x9Chi\xE2\x80\x9D", "\"", "hi", "\"");
}

TEST(tokenizer_french_elisions) {
    SPLIT("L'animal n'a pas traversé la rue parce qu'il était trop fatigué.",
          "l'", "animal", "n'", "a", "pas", "traversé", "la", "rue", "parce", "qu'", "il", "était",
          "trop", "fatigué", ".");
    SPLIT("J'ai dit qu'elle s'est assise, c'est l\xE2\x80\x99\xC3\xA9l\xC3\xA8ve d'Anne.",
          "j'", "ai", "dit", "qu'", "elle", "s'", "est", "assise", ",", "c'", "est", "l'", "élève",
          "d'", "anne", ".");
    /* already tokenized text re-tokenizes to itself */
    SPLIT("l' animal n' a pas traversé", "l'", "animal", "n'", "a", "pas", "traversé");
    SPLIT("jusqu'à", "jusqu'", "à");
    /* stray apostrophes are their own token */
    SPLIT("'hello' dogs'", "'", "hello", "'", "dogs", "'");
    SPLIT("grand-mère - oui", "grand-mère", "-", "oui");
}

TEST(tokenizer_diacritics_and_vietnamese) {
    SPLIT("Tôi đi học.", "tôi", "đi", "học", ".");
    /* uppercase Vietnamese: Đ Ư Ơ, and precomposed tone-marked capitals U+1EA0..U+1EF9 */
    SPLIT("\xC4\x90I H\xE1\xBB\x8C" "C", "đi", "học");                 /* ĐI HỌC */
    SPLIT("\xC6\xAF\xC6\xA0 \xE1\xBB\xB8 \xE1\xBA\xA0", "\xC6\xB0\xC6\xA1", "\xE1\xBB\xB9", "\xE1\xBA\xA1"); /* ƯƠ Ỹ Ạ */
    SPLIT("CON V\xE1\xBA\xACT N\xC3\x93 M\xE1\xBB\x86T", "con", "v\xE1\xBA\xAD" "t", "n\xC3\xB3", "m\xE1\xBB\x87t"); /* CON VẬT NÓ MỆT */
    SPLIT("ÉLÈVE À ŒUF ÇA ÜBER", "élève", "à", "œuf", "ça", "über");
    SPLIT("Je suis HEUREUX", "je", "suis", "heureux");
    CHECK_INT(tokenizer_lower(0x1EF8), 0x1EF9);  /* Ỹ → ỹ */
    CHECK_INT(tokenizer_lower(0x1EA0), 0x1EA1);  /* Ạ → ạ */
    CHECK_INT(tokenizer_lower(0x1EA1), 0x1EA1);
    CHECK_INT(tokenizer_lower(0x0110), 0x0111);  /* Đ → đ */
    CHECK_INT(tokenizer_lower(0x01AF), 0x01B0);  /* Ư → ư */
    CHECK_INT(tokenizer_lower(0x01A0), 0x01A1);  /* Ơ → ơ */
    CHECK_INT(tokenizer_lower(0x00D7), 0x00D7);  /* × is no letter */
    CHECK_INT(tokenizer_lower(0x0178), 0x00FF);  /* Ÿ → ÿ */
    CHECK_INT(tokenizer_lower(0x0152), 0x0153);  /* Œ → œ */
}

TEST(tokenizer_invalid_utf8) {
    SPLIT_FAILS("ab\x80" "cd", "byte 2");                 /* lone continuation byte */
    SPLIT_FAILS("ab\x80" "cd", "continuation");
    SPLIT_FAILS("x \xC0\xAF", "overlong");                /* overlong '/' */
    SPLIT_FAILS("\xE0\x80\xAF", "overlong");              /* overlong 3-byte */
    SPLIT_FAILS("\xF0\x80\x80\xAF", "overlong");          /* overlong 4-byte */
    SPLIT_FAILS("abc \xC3", "byte 4");                    /* truncated at the end */
    SPLIT_FAILS("\xE1\xBB x", "byte 2 (0x20) does not continue it");   /* cut short in the middle */
    SPLIT_FAILS("\xED\xA0\x80", "surrogate");             /* U+D800 */
    SPLIT_FAILS("\xF4\x90\x80\x80", "U+10FFFF");
    SPLIT_FAILS("\xFF", "byte 0");
    char err[128];
    CHECK_INT(tokenizer_check_utf8("h\xC3\xA9", 3, err, sizeof err), 0);
    CHECK_INT(tokenizer_check_utf8("h\xC3\xA9", 2, err, sizeof err), -1);
}

TEST(tokenizer_empty_and_limits) {
    SPLIT_FAILS("", "empty");
    SPLIT_FAILS("   \t\n ", "empty");
    SPLIT_FAILS("a\x01" "b", "control character");
    /* exactly 64 tokens pass, 65 fail */
    char buf[400] = "";
    for (int i = 0; i < 64; i++) strcat(buf, "ab ");
    Tokens t;
    char err[256];
    CHECK_INT(tokenizer_split(&t, buf, err, sizeof err), 0);
    CHECK_INT(t.n, 64);
    tokens_free(&t);
    strcat(buf, "x");
    SPLIT_FAILS(buf, "more than 64 tokens");
    CHECK_INT(tokenizer_split_max(&t, "a b c", 2, err, sizeof err), -1);
    CHECK_INT(tokenizer_split_max(&t, "a b", 2, err, sizeof err), 0);
    tokens_free(&t);
    /* a word longer than the byte limit */
    char longw[200];
    memset(longw, 'z', 150);
    longw[150] = 0;
    SPLIT_FAILS(longw, "longer than 64 bytes");
    memset(longw, 'z', 64);
    longw[64] = 0;
    CHECK_INT(tokenizer_split(&t, longw, err, sizeof err), 0);
    tokens_free(&t);
    tokens_free(NULL);
    tokens_free(&t);  /* twice is fine */
}

TEST(tokenizer_vocab_build_lookup) {
    const char *words[] = { "the", "animal", "l'", "élève", "nó" };
    Vocab v;
    char err[256];
    REQUIRE(vocab_build(&v, words, 5, err, sizeof err) == 0);
    CHECK_INT(v.size, VOCAB_N_SPECIAL + 5);
    CHECK_INT(vocab_id(&v, "<pad>"), 0);
    CHECK_INT(vocab_id(&v, "<unk>"), 1);
    CHECK_INT(vocab_id(&v, "<bos>"), 2);
    CHECK_INT(vocab_id(&v, "<eos>"), 3);
    CHECK_INT(vocab_id(&v, "<2fr>"), 4);
    CHECK_INT(vocab_id(&v, "<2vi>"), 5);
    CHECK_INT(vocab_id(&v, "the"), 6);
    CHECK_INT(vocab_id(&v, "élève"), 9);
    CHECK_INT(vocab_id(&v, "nó"), 10);
    CHECK_INT(vocab_id(&v, "zebra"), -1);
    CHECK(vocab_word(&v, 7) && !strcmp(vocab_word(&v, 7), "animal"));
    CHECK(vocab_word(&v, 11) == NULL);
    CHECK(vocab_word(&v, -1) == NULL);
    vocab_free(&v);
    vocab_free(&v);
    vocab_free(NULL);

    /* many words: the hash table must keep all of them */
    enum { N = 3000 };
    char **many = malloc(N * sizeof *many);
    for (int i = 0; i < N; i++) { many[i] = malloc(16); snprintf(many[i], 16, "w%d", i); }
    REQUIRE(vocab_build(&v, (const char *const *)many, N, err, sizeof err) == 0);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += vocab_id(&v, many[i]) != VOCAB_N_SPECIAL + i;
    CHECK_INT(bad, 0);
    vocab_free(&v);
    for (int i = 0; i < N; i++) free(many[i]);
    free(many);
}

TEST(tokenizer_vocab_errors) {
    Vocab v;
    char err[256] = "";
    const char *dup[] = { "a", "b", "a" };
    CHECK_INT(vocab_build(&v, dup, 3, err, sizeof err), -1);
    CHECK(strstr(err, "duplicate") != NULL);
    CHECK_INT(v.size, 0);
    const char *late[] = { "a", "<eos>" };
    CHECK_INT(vocab_build(&v, late, 2, err, sizeof err), -1);
    CHECK(strstr(err, "special") != NULL);
    const char *sp[] = { "a b" };
    CHECK_INT(vocab_build(&v, sp, 1, err, sizeof err), -1);
    CHECK(strstr(err, "whitespace") != NULL);
    const char *empty[] = { "" };
    CHECK_INT(vocab_build(&v, empty, 1, err, sizeof err), -1);
    /* a list that already starts with the specials is taken as it is */
    const char *full[] = { "<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>", "x" };
    REQUIRE(vocab_build(&v, full, 7, err, sizeof err) == 0);
    CHECK_INT(v.size, 7);
    CHECK_INT(vocab_id(&v, "x"), 6);
    vocab_free(&v);
}

TEST(tokenizer_vocab_encode_unknown_decode) {
    const char *words[] = { "the", "cat", "sat", "on", "mat", "." };
    Vocab v;
    char err[256];
    REQUIRE(vocab_build(&v, words, 6, err, sizeof err) == 0);
    Tokens t;
    REQUIRE(tokenizer_split(&t, "The dog sat on the rug.", err, sizeof err) == 0);
    int ids[16], unk[16];
    int nu = vocab_encode(&v, (const char *const *)t.tok, t.n, ids, unk);
    CHECK_INT(nu, 2);
    CHECK_INT(unk[0], 1);   /* dog */
    CHECK_INT(unk[1], 5);   /* rug */
    CHECK_INT(ids[1], VOCAB_UNK);
    CHECK_INT(ids[0], vocab_id(&v, "the"));
    CHECK_INT(ids[6], vocab_id(&v, "."));
    CHECK_INT(vocab_encode(&v, (const char *const *)t.tok, t.n, ids, NULL), 2);
    char buf[128];
    int len = vocab_decode(&v, ids, t.n, 0, buf, sizeof buf, err, sizeof err);
    CHECK(len > 0 && !strcmp(buf, "the <unk> sat on the <unk> ."));
    CHECK_INT(len, (long)strlen("the <unk> sat on the <unk> ."));
    int with_specials[] = { VOCAB_2FR, ids[0], VOCAB_PAD, ids[2], VOCAB_EOS, ids[3] };
    CHECK(vocab_decode(&v, with_specials, 6, VOCAB_DECODE_SKIP_SPECIAL, buf, sizeof buf, err, sizeof err) > 0);
    CHECK(!strcmp(buf, "the sat"));
    CHECK(vocab_decode(&v, with_specials, 6, 0, buf, sizeof buf, err, sizeof err) > 0);
    CHECK(!strcmp(buf, "<2fr> the <pad> sat <eos> on"));
    int bad[] = { 6, 99 };
    CHECK_INT(vocab_decode(&v, bad, 2, 0, buf, sizeof buf, err, sizeof err), -1);
    CHECK(strstr(err, "99") != NULL);
    CHECK_INT(vocab_decode(&v, ids, t.n, 0, buf, 8, err, sizeof err), -1);
    tokens_free(&t);
    vocab_free(&v);
}

TEST(tokenizer_vocab_save_load) {
    const char *words[] = { "tôi", "đi", "học", "l'" };
    Vocab v, w;
    char err[256], path[600];
    REQUIRE(vocab_build(&v, words, 4, err, sizeof err) == 0);
    snprintf(path, sizeof path, "%s/vocab.txt", check_tmpdir());
    REQUIRE(vocab_save(&v, path, err, sizeof err) == 0);
    REQUIRE(vocab_load(&w, path, err, sizeof err) == 0);
    CHECK_INT(w.size, v.size);
    for (int i = 0; i < v.size && i < w.size; i++) CHECK(!strcmp(v.words[i], w.words[i]));
    vocab_free(&w);
    vocab_free(&v);
    /* a file without the specials is refused */
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fputs("a\nb\nc\nd\ne\nf\ng\n", f);
    fclose(f);
    CHECK_INT(vocab_load(&w, path, err, sizeof err), -1);
    CHECK(strstr(err, "<pad>") != NULL);
    CHECK_INT(vocab_load(&w, "/nonexistent/vocab.txt", err, sizeof err), -1);
}

/* Issue 14: a hyphen right after an apostrophe is its own token, so the tokens
 * joined by spaces re-tokenize to themselves (found by fuzz_tokenizer's property). */
TEST(tokenizer_hyphen_after_apostrophe_round_trips) {
    const char *cases[][4] = {{"'-s", "'", "-", "s"}, {"l'-a", "l'", "-", "a"}};
    for (int c = 0; c < 2; c++) {
        Tokens t, again;
        char err[256];
        REQUIRE(tokenizer_split(&t, cases[c][0], err, sizeof err) == 0);
        CHECK(t.n == 3);
        for (int i = 0; i < 3 && i < t.n; i++) CHECK(!strcmp(t.tok[i], cases[c][i + 1]));
        char joined[64] = "";
        for (int i = 0; i < t.n; i++) { if (i) strcat(joined, " "); strcat(joined, t.tok[i]); }
        REQUIRE(tokenizer_split(&again, joined, err, sizeof err) == 0);
        CHECK(again.n == t.n);
        for (int i = 0; i < t.n && i < again.n; i++) CHECK(!strcmp(t.tok[i], again.tok[i]));
        tokens_free(&t);
        tokens_free(&again);
    }
    Tokens g;
    char err[256];
    REQUIRE(tokenizer_split(&g, "grand-mère", err, sizeof err) == 0);
    CHECK(g.n == 1);
    tokens_free(&g);
}
