/* test_decode.c — greedy decoding never loops (model/decode.h): the stop rules
 * on hand-made outputs (a repeated n-gram, a token three times, as many
 * sentences as the source, <eos>), the warning's text, and random models whose
 * greedy outputs would loop, decoded to the end. */
#include "check.h"
#include "model/decode.h"
#include "model/model.h"
#include "tokenize/tokenizer.h"
#include <stdlib.h>
#include <string.h>

static const char *const WORDS[] = {"<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>", ".", "!", "?", "»",
                                    "le", "chat", "est", "heureux", "a", "b", "x", "y"};
enum { DOT = 6, BANG, QUEST, GUIL, LE, CHAT, EST, HEUREUX, A, B, X, Y };

/* A model with the vocabulary WORDS and its sentence ends (no weights needed for the rules). */
static int rules_model(Model *m, Vocab *v) {
    char err[128];
    memset(m, 0, sizeof *m);
    if (vocab_build(v, WORDS, (int)(sizeof WORDS / sizeof *WORDS), err, sizeof err)) return -1;
    m->config.vocab_size = v->size;
    return decode_set_sentence_ends(m, v);
}

TEST(decode_stop_repeated_ngrams) {
    Model m;
    Vocab v;
    REQUIRE(rules_model(&m, &v) == 0);
    const int src[] = {X, Y, DOT, VOCAB_EOS};
    DecodeStop st;
    /* le chat est heureux est + heureux: "est heureux" twice → keep "le chat est heureux" */
    const int o1[] = {LE, CHAT, EST, HEUREUX, EST};
    CHECK_INT(decode_stop_before(&m, src, 4, o1, 5, HEUREUX, &st), 1);
    CHECK_INT(st.why, DECODE_STOP_REPEAT);
    CHECK_INT(st.n, 2);
    CHECK_INT(st.at, 2);
    CHECK_INT(st.at + st.n, 4);
    CHECK_INT(decode_stop_before(&m, src, 4, o1, 4, EST, &st), 0);   /* "le chat est heureux est": no repeat yet */
    /* a b x a b + x: a 3-gram twice */
    const int o2[] = {A, B, X, A, B};
    CHECK_INT(decode_stop_before(&m, src, 4, o2, 5, X, &st), 1);
    CHECK_INT(st.n, 3);
    CHECK_INT(st.at, 0);
    /* one token: twice is fine, a third time stops and keeps two */
    const int o3[] = {LE, A, A};
    CHECK_INT(decode_stop_before(&m, src, 4, o3, 2, A, &st), 0);
    CHECK_INT(decode_stop_before(&m, src, 4, o3, 3, A, &st), 1);
    CHECK_INT(st.n, 1);
    CHECK_INT(st.at + st.n, 3);
    /* an 8-gram twice stops; nothing shorter in it repeats */
    int o4[16];
    for (int i = 0; i < 15; i++) o4[i] = (int[]){LE, CHAT, EST, HEUREUX, A, B, X, Y}[i % 8];
    CHECK_INT(decode_stop_before(&m, src, 4, o4, 14, o4[14], &st), 0);
    CHECK_INT(decode_stop_before(&m, src, 4, o4, 15, Y, &st), 1);
    CHECK_INT(st.n, 8);
    /* a whole sentence again is the sentence rule's, not a loop: x . b . b + . with 3 sentences in the source */
    const int src3[] = {X, DOT, Y, DOT, Y, DOT, VOCAB_EOS};
    const int o5[] = {X, DOT, B, DOT, B};
    CHECK_INT(decode_stop_before(&m, src3, 7, o5, 5, DOT, &st), 0);
    CHECK_INT(decode_stop_before(&m, src3, 7, o5, 5, VOCAB_EOS, &st), 1);
    CHECK_INT(st.why, DECODE_STOP_EOS);
    vocab_free(&v);
    model_free(&m);
}

TEST(decode_stop_after_the_sources_sentences) {
    Model m;
    Vocab v;
    REQUIRE(rules_model(&m, &v) == 0);
    DecodeStop st;
    const int one[] = {LE, CHAT, DOT, VOCAB_EOS};          /* one sentence, ended */
    const int open[] = {LE, CHAT, VOCAB_EOS};              /* one sentence typed without a full stop */
    const int two[] = {A, DOT, B, QUEST, BANG, VOCAB_EOS}; /* two: "?!" ends one */
    const int out[] = {LE, CHAT, DOT, GUIL, LE};
    CHECK_INT(decode_stop_before(&m, one, 4, out, 3, LE, &st), 1);
    CHECK_INT(st.why, DECODE_STOP_SENTENCES);
    CHECK_INT(decode_stop_before(&m, open, 3, out, 3, LE, &st), 1);
    CHECK_INT(decode_stop_before(&m, one, 4, out, 3, GUIL, &st), 0);   /* a closing quote may follow */
    CHECK_INT(decode_stop_before(&m, one, 4, out, 3, BANG, &st), 0);   /* "." then "!" is one end */
    CHECK_INT(decode_stop_before(&m, one, 4, out, 4, LE, &st), 1);
    CHECK_INT(decode_stop_before(&m, two, 6, out, 3, LE, &st), 0);     /* the second sentence may start */
    CHECK_INT(decode_stop_before(&m, open, 3, out, 2, DOT, &st), 0);
    CHECK_INT(decode_stop_before(&m, open, 3, out, 0, LE, &st), 0);
    /* a model that does not know its sentence ends keeps only the repeat rule */
    free(m.sentence_end);
    m.sentence_end = NULL;
    CHECK_INT(decode_stop_before(&m, one, 4, out, 3, LE, &st), 0);
    vocab_free(&v);
    model_free(&m);
}

TEST(decode_stop_warning_text) {
    const char *words[] = {"le", "chat", "est", "heureux"};
    DecodeStop st = {DECODE_STOP_REPEAT, 2, 2};
    char buf[256];
    decode_stop_text(&st, words, buf, sizeof buf);
    CHECK(strstr(buf, "began to repeat “est heureux”") != NULL);
    st.why = DECODE_STOP_EOS;
    decode_stop_text(&st, words, buf, sizeof buf);
    CHECK(buf[0] == '\0');
}

/* Random models: their greedy outputs repeat at once; decoded to the end, no
 * output ends in a loop, and the reported stop matches what was kept. */
TEST(decode_greedy_random_models_never_loop) {
    Vocab v;
    char err[256];
    REQUIRE(vocab_build(&v, WORDS, (int)(sizeof WORDS / sizeof *WORDS), err, sizeof err) == 0);
    int repeats = 0;
    for (int seed = 1; seed <= 12; seed++) {
        Model m;
        ModelConfig c = {0};
        c.arch = MODEL_ENC_DEC; c.vocab_size = v.size; c.d_model = 16; c.n_heads = 2; c.d_ff = 32;
        c.n_enc_layers = 1; c.n_dec_layers = 1; c.max_len = 40;
        REQUIRE(model_init_random(&m, &c, (uint64_t)seed) == 0);
        REQUIRE(decode_set_sentence_ends(&m, &v) == 0);
        const int src[2 * 5] = {LE, CHAT, EST, HEUREUX, VOCAB_EOS, A, B, VOCAB_EOS, VOCAB_PAD, VOCAB_PAD};
        const int len[2] = {5, 3}, tags[2] = {VOCAB_2FR, VOCAB_2VI};
        int out[2 * 39], n[2];
        DecodeStop st[2];
        REQUIRE(decode_greedy_batch(&m, src, len, 5, tags, 2, 39, out, n, st, err, sizeof err) == 0);
        for (int b = 0; b < 2; b++) {
            const int *o = out + b * 39;
            DecodeStop again;
            for (int t = 0; t < n[b]; t++) CHECK_INT(decode_stop_before(&m, src + b * 5, len[b], o, t, o[t], &again), 0);
            for (int t = 2; t < n[b]; t++) CHECK(!(o[t] == o[t - 1] && o[t] == o[t - 2]));
            if (st[b].why == DECODE_STOP_REPEAT) { CHECK_INT(n[b], st[b].at + st[b].n); repeats++; }
            CHECK(st[b].why != DECODE_STOP_LENGTH);
        }
        model_free(&m);
    }
    CHECK(repeats > 0);   /* the rule was needed */
    vocab_free(&v);
}
