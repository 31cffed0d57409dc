/* test_train.c — training and eval pieces: Adam against a hand-computed step,
 * the schedule, clipping, the training set read strictly, batches, the data
 * order, a short run that must lower the loss, exact resume, and the eval
 * metric on hand-made attention rows, the checkpoint metadata's key order. */
#include "check.h"
#include "core/rng.h"
#include "core/threads.h"
#include "corpus/corpus.h"
#include "model/checkpoint.h"
#include "train/eval.h"
#include "train/meta.h"
#include "model/decode.h"
#include "model/model.h"
#include "tokenize/tokenizer.h"
#include "train/state.h"
#include "train/train.h"
#include "trace/maps.h"
#include "pipeline/world.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

TEST(train_adam_hand_step) {
    Adam a;
    REQUIRE(adam_init(&a, 2) == 0);
    float p[2] = {1.0f, -2.0f}, g[2] = {0.5f, -0.1f};
    /* t = 1: m = 0.1 g, v = 0.02 g²; m̂ = g, v̂ = g²; step = lr · g / (|g| + ε) = lr · sign(g) */
    adam_update(&a, p, g, 0.01f);
    CHECK_NEAR(p[0], 1.0 - 0.01, 1e-6);
    CHECK_NEAR(p[1], -2.0 + 0.01, 1e-6);
    CHECK_NEAR(a.m[0], 0.05, 1e-7);
    CHECK_NEAR(a.v[0], 0.02 * 0.25, 1e-8);
    /* t = 2 with g = (0.5, 0.3), computed by hand in double */
    float g2[2] = {0.5f, 0.3f};
    adam_update(&a, p, g2, 0.01f);
    double m1 = 0.9 * 0.05 + 0.1 * 0.5, v1 = 0.98 * 0.005 + 0.02 * 0.25;
    double mh = m1 / (1 - 0.81), vh = v1 / (1 - 0.98 * 0.98);
    CHECK_NEAR(p[0], 0.99 - 0.01 * mh / (sqrt(vh) + 1e-9), 1e-6);
    double m2 = 0.9 * -0.01 + 0.1 * 0.3, v2 = 0.98 * (0.02 * 0.01) + 0.02 * 0.09;
    CHECK_NEAR(p[1], -1.99 - 0.01 * (m2 / 0.19) / (sqrt(v2 / (1 - 0.9604)) + 1e-9), 1e-6);
    CHECK_INT(a.t, 2);
    adam_free(&a);
}

TEST(train_lr_schedule) {
    /* warm-up is linear up to the peak, then cosine down to the floor */
    CHECK_NEAR(train_lr(0, 1000, 1e-3, 100, 0.1), 1e-5, 1e-12);
    CHECK_NEAR(train_lr(99, 1000, 1e-3, 100, 0.1), 1e-3, 1e-12);
    CHECK_NEAR(train_lr(100, 1000, 1e-3, 100, 0.1), 1e-3, 1e-12);
    CHECK_NEAR(train_lr(999, 1000, 1e-3, 100, 0.1), 1e-4, 1e-12);
    double mid = train_lr(100 + 450, 1000, 1e-3, 100, 0.1);   /* p = 450/899 ≈ 0.5 */
    CHECK(mid > 5.4e-4 && mid < 5.6e-4);
    for (long s = 101; s < 1000; s++) CHECK(train_lr(s, 1000, 1e-3, 100, 0.1) <= train_lr(s - 1, 1000, 1e-3, 100, 0.1));
}

TEST(train_clip_norm) {
    float g[2] = {3.0f, 4.0f};
    CHECK_NEAR(train_clip_grad_norm(g, 2, 1.0), 5.0, 1e-9);
    CHECK_NEAR(g[0], 0.6, 1e-6);
    CHECK_NEAR(g[1], 0.8, 1e-6);
    float h[2] = {0.3f, 0.4f};
    train_clip_grad_norm(h, 2, 1.0);   /* below the limit: unchanged */
    CHECK(h[0] == 0.3f && h[1] == 0.4f);
}

/* The clip folded into Adam (adam_update_scaled with train_clip_factor, as a
 * training step does) against clipping the gradients first: the same bits, with
 * and without clipping. */
TEST(train_clip_inside_adam_is_clip_then_adam) {
    enum { N = 1000 };
    for (int big = 0; big < 2; big++) {
        float p1[N], p2[N], g[N], gc[N];
        Rng r = rng_from_state(77 + big);
        for (int i = 0; i < N; i++) {
            p1[i] = p2[i] = rng_float(&r) - 0.5f;
            g[i] = (rng_float(&r) - 0.5f) * (big ? 1.0f : 0.001f);
        }
        Adam a1, a2;
        REQUIRE(adam_init(&a1, N) == 0 && adam_init(&a2, N) == 0);
        for (int step = 0; step < 3; step++) {
            memcpy(gc, g, sizeof g);
            double n1 = train_clip_grad_norm(gc, N, 1.0);
            adam_update(&a1, p1, gc, 1e-3f);
            double n2 = train_grad_norm(g, N);
            float s = train_clip_factor(n2, 1.0);
            adam_update_scaled(&a2, p2, g, s, 1e-3f);
            CHECK(n1 == n2);
            CHECK(big ? s < 1.0f : s == 1.0f);
        }
        CHECK(memcmp(p1, p2, sizeof p1) == 0);
        CHECK(memcmp(a1.m, a2.m, N * sizeof(float)) == 0 && memcmp(a1.v, a2.v, N * sizeof(float)) == 0);
        adam_free(&a1); adam_free(&a2);
    }
}

/* A tiny parallel corpus, written as a TSV so the loader is exercised too. */
static const char *TINY_TSV =
    "fr\tthe cat sleeps .\tle chat dort .\t0-0 1-1 2-2 3-3\t-\tt1\n"
    "fr\tthe dog sleeps .\tle chien dort .\t0-0 1-1 2-2 3-3\t-\tt1\n"
    "fr\tthe house is big .\tla maison est grande .\t0-0 1-1 2-2 3-3 4-4\t-\tt2\n"
    "fr\tthe cat is big .\tle chat est grand .\t0-0 1-1 2-2 3-3 4-4\t-\tt2\n"
    "vi\tthe cat sleeps .\tcon mèo ngủ .\t0-0 1-1 2-2 3-3\t-\tt1\n"
    "vi\tthe dog sleeps .\tcon chó ngủ .\t0-0 1-1 2-2 3-3\t-\tt1\n"
    "vi\tthe house is big .\tngôi nhà to .\t0-0 1-1 2-3 3-3\t-\tt2\n"
    "vi\tthe dog is big .\tcon chó to .\t0-0 1-1 2-3 3-3\t-\tt2\n";

static const char *TINY_WORDS[] = {
    "<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>", "the", "cat", "dog", "sleeps", ".",
    "house", "is", "big", "le", "la", "chat", "chien", "dort", "maison", "est", "grande",
    "grand", "con", "mèo", "chó", "ngủ", "ngôi", "nhà", "to"};

static int tiny_setup(Vocab *v, TrainSet *s, char *tsv_path, size_t n) {
    char err[256];
    snprintf(tsv_path, n, "%s/tiny-train.tsv", check_tmpdir());
    FILE *f = fopen(tsv_path, "w");
    if (!f) return -1;
    fputs(TINY_TSV, f);
    fclose(f);
    if (vocab_build(v, TINY_WORDS, (int)(sizeof TINY_WORDS / sizeof *TINY_WORDS), err, sizeof err)) return -1;
    train_set_init(s);
    if (train_set_read_tsv(s, tsv_path, v, err, sizeof err)) { fprintf(stderr, "%s\n", err); return -1; }
    return 0;
}

static ModelConfig tiny_config(int V) {
    ModelConfig c = {0};
    c.arch = MODEL_ENC_DEC; c.vocab_size = V; c.d_model = 16; c.n_heads = 2; c.d_ff = 32;
    c.n_enc_layers = 1; c.n_dec_layers = 1; c.max_len = 16; c.prenorm = 0;
    return c;
}

TEST(train_tsv_and_batch) {
    Vocab v = {0};
    TrainSet s;
    char path[1024];
    REQUIRE(tiny_setup(&v, &s, path, sizeof path) == 0);
    CHECK_INT(s.n, 8);
    CHECK_INT(s.ex[0].lang_tag, VOCAB_2FR);
    CHECK_INT(s.ex[4].lang_tag, VOCAB_2VI);
    CHECK_INT(s.ex[0].src_len, 5);            /* 4 words + <eos> */
    CHECK_INT(s.ex[0].src[4], VOCAB_EOS);
    CHECK_INT(s.ex[0].tgt_len, 4);
    int idx[2] = {0, 2};
    Batch b = {0};
    REQUIRE(batch_make(&b, &s, idx, 2) == 0);
    CHECK_INT(b.S, 6);
    CHECK_INT(b.T, 6);                        /* "la maison est grande ." + 1 */
    /* item 0: dec_in = <2fr> le chat dort . <pad>; targets = le chat dort . <eos> <pad> */
    CHECK_INT(b.dec_in[0], VOCAB_2FR);
    CHECK_INT(b.dec_in[1], vocab_id(&v, "le"));
    CHECK_INT(b.dec_in[5], VOCAB_PAD);
    CHECK_INT(b.targets[0], vocab_id(&v, "le"));
    CHECK_INT(b.targets[4], VOCAB_EOS);
    CHECK_INT(b.targets[5], VOCAB_PAD);
    CHECK_INT(b.tgt_len[0], 5);
    CHECK_INT(b.src[5], VOCAB_PAD);           /* source padding */
    CHECK_INT(b.src_len[1], 6);
    CHECK_INT(b.targets[6 + 5], VOCAB_EOS);
    batch_free(&b);

    /* an unknown target token that is no word of its source is an error with
     * the line number and the token (a source-only unknown word is <unk>) */
    char bad[1024], err[256];
    snprintf(bad, sizeof bad, "%s/bad.tsv", check_tmpdir());
    FILE *f = fopen(bad, "w");
    REQUIRE(f);
    fputs("fr\tthe cat sleeps .\tle chat dort .\t-\t-\tt\nfr\tthe zebra .\tle zèbre .\t-\t-\tt\n", f);
    fclose(f);
    TrainSet s2;
    train_set_init(&s2);
    CHECK(train_set_read_tsv(&s2, bad, &v, err, sizeof err) == -1);
    CHECK(strstr(err, ":2:") && strstr(err, "'zèbre'"));
    train_set_free(&s2);

    /* a name on both sides (spec C) is <unk> on both sides; src_seen marks the source ids */
    f = fopen(bad, "w");
    REQUIRE(f);
    fputs("fr\talice sleeps .\talice dort .\t-\t-\tg.x\n", f);
    fclose(f);
    train_set_init(&s2);
    REQUIRE(train_set_read_tsv(&s2, bad, &v, err, sizeof err) == 0);
    CHECK_INT(s2.ex[0].src[0], VOCAB_UNK);
    CHECK_INT(s2.ex[0].tgt[0], VOCAB_UNK);
    CHECK_INT(s2.ex[0].src[1], vocab_id(&v, "sleeps"));
    REQUIRE(s2.src_seen && s2.n_vocab_seen == v.size);
    CHECK(s2.src_seen[VOCAB_UNK] && s2.src_seen[vocab_id(&v, "sleeps")] && !s2.src_seen[vocab_id(&v, "dort")]);
    train_set_free(&s2);
    train_set_free(&s);
    vocab_free(&v);
}

/* Writes text to DIR/name.tsv and reads it as a training set with the tiny
 * vocabulary: the return value of train_set_read_tsv, its message in err. */
static int read_text(const Vocab *v, TrainSet *s, const char *text, char *err, size_t errlen) {
    char p[1024];
    snprintf(p, sizeof p, "%s/strict.tsv", check_tmpdir());
    FILE *f = fopen(p, "w");
    if (!f) return -2;
    fputs(text, f);
    fclose(f);
    train_set_init(s);
    err[0] = 0;
    return train_set_read_tsv(s, p, v, err, errlen);
}

/* The training set comes from the strict corpus reader: every line the old
 * loader of train.c skipped or half-read (comments, a header, three columns,
 * alignments and antecedents outside the sentence or on <eos>, double spaces)
 * is an error naming the file and line. */
TEST(train_set_reads_strictly) {
    Vocab v = {0};
    TrainSet s;
    char path[1024], err[512];
    REQUIRE(tiny_setup(&v, &s, path, sizeof path) == 0);
    train_set_free(&s);
    static const char *const good = "fr\tthe cat sleeps .\tle chat dort .\t0-0 1-1\t-\tt\n";
    static const char *const bad[][2] = {
        { "# a comment\n", "columns" },
        { "fr\tthe cat sleeps .\tle chat dort .\n", "columns" },
        { "fr\tthe cat sleeps .\tle chat dort .\t0-0 9-9\t-\tt\n", "alignment" },
        { "fr\tthe cat sleeps .\tle chat dort .\t0-4\t-\tt\n", "alignment" },   /* 4: the <eos> */
        { "fr\tthe cat sleeps .\tle chat dort .\t0-0\t2-9\tt\n", "coref" },
        { "fr\tthe  cat sleeps .\tle chat dort .\t0-0\t-\tt\n", "source" },
        { "fr\tthe cat sleeps .\t\t-\t-\tt\n", "target" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s", good, bad[i][0]);
        CHECK_INT(read_text(&v, &s, text, err, sizeof err), -1);
        if (!strstr(err, "strict.tsv:2:") || !strstr(err, bad[i][1]))
            check_fail(__FILE__, __LINE__, "line %zu: message \"%s\" lacks \"strict.tsv:2:\" or \"%s\"", i, err, bad[i][1]);
        train_set_free(&s);
    }
    /* a header line is no exception either (the old loader skipped it on line 1) */
    CHECK_INT(read_text(&v, &s, "lang\tsource\ttarget\talign\tcoref\tid\n", err, sizeof err), -1);
    CHECK(strstr(err, "strict.tsv:1:") && strstr(err, "language"));
    train_set_free(&s);
    /* the line numbers count the empty lines the reader skips */
    CHECK_INT(read_text(&v, &s, "\n\nfr\tthe cat sleeps .\tle zèbre .\t-\t-\tt\n", err, sizeof err), -1);
    CHECK(strstr(err, "strict.tsv:3:") && strstr(err, "'zèbre'"));
    train_set_free(&s);
    /* no pairs at all */
    CHECK_INT(read_text(&v, &s, "\n", err, sizeof err), -1);
    CHECK(strstr(err, "no sentence pairs") != NULL);
    train_set_free(&s);

    /* the length rule: TRAIN_MAX_TOKENS tokens a side train, one more is an error with the line */
    static char text[8192];
    for (int extra = 0; extra < 2; extra++) {
        int n = 0;
        n += snprintf(text + n, sizeof text - n, "%s", good);
        n += snprintf(text + n, sizeof text - n, "fr\t");
        for (int k = 0; k < TRAIN_MAX_TOKENS + extra; k++) n += snprintf(text + n, sizeof text - n, "%scat", k ? " " : "");
        n += snprintf(text + n, sizeof text - n, "\tle chat\t-\t-\tt\n");
        int rc = read_text(&v, &s, text, err, sizeof err);
        if (!extra) {
            CHECK_INT(rc, 0);
            CHECK_INT(s.max_src, TRAIN_MAX_TOKENS + 1);
        } else {
            CHECK_INT(rc, -1);
            CHECK(strstr(err, "strict.tsv:2:") && strstr(err, "too long"));
        }
        train_set_free(&s);
    }

    /* which columns: every alignment pair; the first coreference link, the rest counted */
    REQUIRE(read_text(&v, &s, "fr\tthe cat is big .\tle chat est grand .\t0-0 1-1 1-0 4-4\t3-1 2-0 0-1\tt\n"
                      "vi\tthe dog sleeps .\tcon chó ngủ .\t-\t-\tt\n", err, sizeof err) == 0);
    CHECK_INT(s.n, 2);
    CHECK_INT(s.ex[0].n_align, 4);
    CHECK_INT(s.align[2 * 2], 1);
    CHECK_INT(s.align[2 * 2 + 1], 0);
    CHECK_INT(s.ex[0].coref_p, 3);
    CHECK_INT(s.ex[0].coref_a, 1);
    CHECK_INT(s.ex[1].n_align, 0);
    CHECK_INT(s.ex[1].coref_p, -1);
    CHECK_INT(s.n_coref_unused, 2);
    train_set_free(&s);
    vocab_free(&v);
}

/* What the generator writes always trains: every line of the three splits
 * becomes an example (none refused, none left out), within CORPUS_MAX_LEN. */
TEST(train_set_takes_every_generated_pair) {
    char dir[700], p[800], err[512];
    snprintf(dir, sizeof dir, "%s/gen-for-train", check_tmpdir());
    mkdir(dir, 0777);
    CorpusOptions o;
    corpus_options_default(&o);
    o.seed = 9; o.n_train = 3000; o.n_heldout = 300; o.n_heldout_frames = 300;
    o.data_dir = "samples/corpus"; o.out_dir = dir;
    REQUIRE(corpus_generate(&o, NULL, err, sizeof err) == 0);
    Vocab v = {0};
    snprintf(p, sizeof p, "%s/vocab.txt", dir);
    REQUIRE(vocab_load(&v, p, err, sizeof err) == 0);
    const char *split[3] = { "train", "heldout", "heldout-frames" };
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/%s.tsv", dir, split[k]);
        TrainSet s;
        train_set_init(&s);
        int rc = train_set_read_tsv(&s, p, &v, err, sizeof err);
        if (rc) fprintf(stderr, "  %s\n", err);
        CHECK_INT(rc, 0);
        int lines = 0, c;
        FILE *f = fopen(p, "r");
        REQUIRE(f);
        while ((c = fgetc(f)) != EOF) lines += c == '\n';
        fclose(f);
        CHECK_INT(s.n, lines);
        CHECK(s.max_src <= CORPUS_MAX_LEN + 1 && s.max_tgt <= CORPUS_MAX_LEN);
        train_set_free(&s);
    }
    vocab_free(&v);
}

TEST(train_epoch_order_is_a_permutation) {
    Vocab v = {0};
    TrainSet s;
    char path[1024];
    REQUIRE(tiny_setup(&v, &s, path, sizeof path) == 0);
    int *o1, *st1, nb1, *o2, *st2, nb2, *o3, *st3, nb3;
    REQUIRE(train_epoch_batches(&s, 3, 7, 0, &o1, &st1, &nb1) == 0);
    REQUIRE(train_epoch_batches(&s, 3, 7, 0, &o2, &st2, &nb2) == 0);
    REQUIRE(train_epoch_batches(&s, 3, 7, 1, &o3, &st3, &nb3) == 0);
    CHECK_INT(nb1, 3);
    CHECK_INT(st1[nb1], 8);
    int seen[8] = {0};
    for (int i = 0; i < 8; i++) { REQUIRE(o1[i] >= 0 && o1[i] < 8); seen[o1[i]]++; }
    for (int i = 0; i < 8; i++) CHECK_INT(seen[i], 1);
    CHECK(memcmp(o1, o2, 8 * sizeof(int)) == 0);   /* same seed and epoch: same order */
    /* bucketing: within a batch the source lengths differ by at most the spread of the set */
    free(o1); free(st1); free(o2); free(st2); free(o3); free(st3);
    train_set_free(&s);
    vocab_free(&v);
}

static TrainOptions tiny_options(const Vocab *v, long steps) {
    TrainOptions o = {0};
    o.steps = steps; o.batch = 4; o.lr = 1e-2; o.min_lr_frac = 0.1; o.warmup = 10; o.clip = 1.0;
    o.label_smoothing = 0.0f; o.seed = 3; o.vocab = (const char *const *)v->words; o.n_vocab = v->size;
    o.on_progress = NULL;   /* train_run never prints */
    return o;
}

TEST(train_short_run_lowers_loss) {
    Vocab v = {0};
    TrainSet s;
    char path[1024], err[256];
    REQUIRE(tiny_setup(&v, &s, path, sizeof path) == 0);
    Model m = {0};
    ModelConfig c = tiny_config(v.size);
    REQUIRE(model_init_random(&m, &c, 11) == 0);
    Adam a;
    REQUIRE(adam_init(&a, m.num_params) == 0);
    TrainOptions o = tiny_options(&v, 200);
    TrainResult r;
    /* loss of the whole set, as one batch, before and after */
    int all[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    Batch b = {0};
    REQUIRE(batch_make(&b, &s, all, 8) == 0);
    REQUIRE(model_forward(&m, &(ModelBatch){b.src, b.src_len, b.S, b.dec_in, b.tgt_len, b.T, b.B}) == 0);
    float before = model_loss(&m, b.targets, 0.0f);
    int rc = train_run(&m, &a, 0, &s, &o, &r, err, sizeof err);
    if (rc) fprintf(stderr, "%s\n", err);
    REQUIRE(rc == 0);
    REQUIRE(model_forward(&m, &(ModelBatch){b.src, b.src_len, b.S, b.dec_in, b.tgt_len, b.T, b.B}) == 0);
    float after = model_loss(&m, b.targets, 0.0f);
    /* from about ln(30) = 3.4 to a memorised corpus: at least 80% lower in 200 steps */
    CHECK(before > 2.5);
    CHECK(after < 0.2f * before);
    CHECK(r.last_loss < r.first_loss);
    CHECK_INT(r.step_end, 200);
    batch_free(&b);
    /* and greedy decoding reproduces a training pair */
    int out[16], n = 0;
    REQUIRE(decode_greedy_ids(&m, s.ex[1].src, s.ex[1].src_len, VOCAB_2FR, 12, out, &n, err, sizeof err) == 0);
    CHECK_INT(n, s.ex[1].tgt_len);
    for (int i = 0; i < n && i < s.ex[1].tgt_len; i++) CHECK_INT(out[i], s.ex[1].tgt[i]);
    adam_free(&a);
    model_free(&m);
    train_set_free(&s);
    vocab_free(&v);
}

TEST(train_resume_equals_uninterrupted) {
    Vocab v = {0};
    TrainSet s;
    char path[1024], err[256], ck[1024], state[1100];
    REQUIRE(tiny_setup(&v, &s, path, sizeof path) == 0);
    ModelConfig c = tiny_config(v.size);
    TrainResult r;

    /* uninterrupted: 30 steps, checkpoint (and state) also written at step 15 */
    Model m1 = {0};
    Adam a1;
    REQUIRE(model_init_random(&m1, &c, 5) == 0);
    REQUIRE(adam_init(&a1, m1.num_params) == 0);
    snprintf(ck, sizeof ck, "%s/resume.safetensors", check_tmpdir());
    TrainOptions o = tiny_options(&v, 30);
    o.out_path = ck; o.checkpoint_every = 15;
    REQUIRE(train_run(&m1, &a1, 0, &s, &o, &r, err, sizeof err) == 0);

    /* resumed: load the step-15 checkpoint and state, run to 30 */
    Model m2 = {0};
    char **words = NULL;
    int nw = 0;
    REQUIRE(checkpoint_load(ck, &m2, &words, &nw, NULL, err, sizeof err) == 0);
    checkpoint_free_vocab(words, nw);
    Adam a2;
    REQUIRE(adam_init(&a2, m2.num_params) == 0);
    long step = -1;
    snprintf(state, sizeof state, "%s.state", ck);
    REQUIRE(train_state_load(state, &a2, &step, err, sizeof err) == 0);
    CHECK_INT(step, 15);
    CHECK_INT(a2.t, 15);
    TrainOptions o2 = tiny_options(&v, 30);
    REQUIRE(train_run(&m2, &a2, step, &s, &o2, &r, err, sizeof err) == 0);
    CHECK_INT(r.step_begin, 15);
    REQUIRE(m1.num_params == m2.num_params);
    CHECK_CLOSE("resumed parameters", m2.params_memory, m1.params_memory, (int)m1.num_params, 1e-6, 1e-5);
    CHECK_CLOSE("resumed adam.v", a2.v, a1.v, (int)m1.num_params, 1e-12, 1e-5);

    /* a state file of another size is refused with a message */
    Adam small;
    REQUIRE(adam_init(&small, 3) == 0);
    CHECK(train_state_load(state, &small, &step, err, sizeof err) == -1);
    CHECK(strstr(err, "parameters") != NULL);
    adam_free(&small);
    adam_free(&a1); adam_free(&a2);
    model_free(&m1); model_free(&m2);
    train_set_free(&s);
    vocab_free(&v);
}

/* --dropout: the run is reproducible (masks from seed and step), differs from the
 * run without dropout, still learns, and leaves the model in inference mode; a
 * rate of 1 is refused. */
TEST(train_dropout_reproducible) {
    Vocab v = {0};
    TrainSet s;
    char path[1024], err[256];
    REQUIRE(tiny_setup(&v, &s, path, sizeof path) == 0);
    ModelConfig c = tiny_config(v.size);
    Model m[3];
    memset(m, 0, sizeof m);
    Adam a[3];
    TrainResult r[3];
    for (int k = 0; k < 3; k++) {   /* 0, 1: dropout 0.2; 2: none */
        REQUIRE(model_init_random(&m[k], &c, 5) == 0);
        REQUIRE(adam_init(&a[k], m[k].num_params) == 0);
        TrainOptions o = tiny_options(&v, 60);
        o.dropout = k < 2 ? 0.2f : 0.0f;
        int rc = train_run(&m[k], &a[k], 0, &s, &o, &r[k], err, sizeof err);
        if (rc) fprintf(stderr, "%s\n", err);
        REQUIRE(rc == 0);
        CHECK_INT(m[k].training, 0);
        CHECK(r[k].last_loss < r[k].first_loss);
    }
    CHECK(memcmp(m[0].params_memory, m[1].params_memory, m[0].num_params * sizeof(float)) == 0);
    CHECK(memcmp(m[0].params_memory, m[2].params_memory, m[0].num_params * sizeof(float)) != 0);
    TrainOptions bad = tiny_options(&v, 5);
    bad.dropout = 1.0f;
    CHECK(train_run(&m[2], &a[2], 0, &s, &bad, &r[2], err, sizeof err) == -1);
    CHECK(strstr(err, "dropout") != NULL);
    for (int k = 0; k < 3; k++) { adam_free(&a[k]); model_free(&m[k]); }
    train_set_free(&s);
    vocab_free(&v);
}

/* Mean attention mass on the gold keys over the supervised rows of the whole set
 * (one batch): encoder.layer.self head h with the coref targets, or
 * decoder.layer.cross head h with the alignment targets. */
static double gold_mass(Model *m, const TrainSet *s, int kind_cross, int layer, int h) {
    int idx[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    Batch b = {0};
    double sum = 0;
    int rows = 0;
    if (batch_make(&b, s, idx, s->n) || model_forward(m, &(ModelBatch){b.src, b.src_len, b.S, b.dec_in, b.tgt_len, b.T, b.B})) {
        batch_free(&b);
        return -1;
    }
    int B = b.B, S = b.S, T = b.T, H = m->config.n_heads, Tq = kind_cross ? T : S;
    float *t = calloc((size_t)B * T * S + (size_t)B * S * S, sizeof(float));
    train_attn_targets(s, idx, &b, kind_cross ? NULL : t, kind_cross ? t : NULL, NULL, NULL);
    const float *att = (kind_cross ? m->acts.dec_cross.att : m->acts.enc_self.att) + (size_t)layer * B * H * Tq * S;
    for (int i = 0; i < B; i++)
        for (int q = 0; q < Tq; q++) {
            const float *tr = t + ((size_t)i * Tq + q) * S, *ar = att + (((size_t)i * H + h) * Tq + q) * S;
            double ts = 0, mass = 0;
            for (int j = 0; j < S; j++) { ts += tr[j]; mass += tr[j] > 0 ? ar[j] : 0; }
            if (ts > 0) { sum += mass; rows++; }
        }
    free(t);
    batch_free(&b);
    return rows ? sum / rows : -1;
}

/* --supervise-coref / --supervise-align: the same 80 steps from the same start,
 * with and without supervision; the supervised heads must put clearly more
 * weight on the gold keys, and translation must still be learned. */
TEST(train_attention_supervision_raises_gold_weight) {
    Vocab v = {0};
    TrainSet s;
    char path[1024], err[256];
    REQUIRE(tiny_setup(&v, &s, path, sizeof path) == 0);
    /* gold "antecedents" for the encoder head: sleeps/is → the noun */
    for (int i = 0; i < s.n; i++) { s.ex[i].coref_p = 2; s.ex[i].coref_a = 1; }
    /* the alignments came from the TSV (the last item: 4 pairs) */
    CHECK_INT(s.ex[7].n_align, 4);
    CHECK_INT(s.align[2 * (s.ex[7].align_off + 2)], 2);
    CHECK_INT(s.align[2 * (s.ex[7].align_off + 2) + 1], 3);
    ModelConfig c = tiny_config(v.size);
    c.n_enc_layers = 2;
    double mass[2][2], loss[2];
    for (int supervised = 0; supervised < 2; supervised++) {
        Model m = {0};
        Adam a;
        REQUIRE(model_init_random(&m, &c, 11) == 0);
        REQUIRE(adam_init(&a, m.num_params) == 0);
        TrainOptions o = tiny_options(&v, 80);
        if (supervised) {
            o.coref_weight = 1.0f; o.coref_layer = 1; o.coref_head = 1;
            o.align_weight = 1.0f; o.align_layer = 0; o.align_head = 0;
        }
        TrainResult r;
        int rc = train_run(&m, &a, 0, &s, &o, &r, err, sizeof err);
        if (rc) fprintf(stderr, "%s\n", err);
        REQUIRE(rc == 0);
        mass[supervised][0] = gold_mass(&m, &s, 0, 1, 1);
        mass[supervised][1] = gold_mass(&m, &s, 1, 0, 0);
        loss[supervised] = r.last_loss;
        if (supervised) CHECK(isfinite(r.coref_aux) && isfinite(r.align_aux));
        else CHECK(isnan(r.coref_aux) && isnan(r.align_aux));
        adam_free(&a);
        model_free(&m);
    }
    fprintf(stderr, "  gold weight: encoder.1.self h1 %.3f -> %.3f, decoder.0.cross h0 %.3f -> %.3f; loss %.3f / %.3f\n",
            mass[0][0], mass[1][0], mass[0][1], mass[1][1], loss[0], loss[1]);
    CHECK(mass[1][0] >= 0.9 && mass[1][0] >= mass[0][0] + 0.5);
    CHECK(mass[1][1] >= 0.9 && mass[1][1] >= mass[0][1] + 0.5);
    CHECK(loss[1] < 0.5);            /* still translates the tiny set */
    train_set_free(&s);
    vocab_free(&v);
}

TEST(maps_argmax_link_rules) {
    /* keys: the animal didn't cross the street because it ... <eos> */
    const float row[6] = {0.05f, 0.20f, 0.10f, 0.40f, 0.05f, 0.20f};
    const unsigned char skip[6] = {0, 0, 0, 0, 0, 1};   /* key 5 is <eos> */
    CHECK_INT(maps_argmax_link(row, 6, -1, NULL), 3);
    CHECK_INT(maps_argmax_link(row, 6, 3, NULL), 1);    /* the pronoun itself (3) excluded; tie 1/5 → first */
    CHECK_INT(maps_argmax_link(row, 6, 3, skip), 1);
    const float row2[4] = {0.1f, 0.1f, 0.1f, 0.7f};
    const unsigned char skip2[4] = {0, 0, 0, 1};
    CHECK_INT(maps_argmax_link(row2, 4, -1, skip2), 0); /* the <eos> sink does not count; ties → first */
    CHECK_INT(maps_argmax_link(row2, 4, 0, skip2), 1);
    const unsigned char all[2] = {1, 1};
    CHECK_INT(maps_argmax_link(row2, 2, -1, all), -1);
    CHECK_INT(maps_argmax_link(row2, 1, 0, NULL), -1);

    EvalCount t[EVAL_MAX_LAYERS][EVAL_MAX_HEADS] = {{{0}}};
    t[0][0] = (EvalCount){1, 4};
    t[1][2] = (EvalCount){9, 10};
    t[1][3] = (EvalCount){3, 10};
    int l, h;
    CHECK_NEAR(eval_best_head(t, 2, 4, &l, &h), 0.9, 1e-12);
    CHECK_INT(l, 1);
    CHECK_INT(h, 2);
    CHECK_NEAR(eval_mean_heads(t, 2, 4), (0.25 + 0.9 + 0.3) / 3, 1e-12);
}

/* The thread tuner: untimed first step, THREADS_TUNE_STEPS with the upper bound,
 * as many with one thread, then the faster (by its fastest step) until the next
 * measurement. */
TEST(train_thread_tune_picks_the_faster) {
    ThreadTune t;
    thread_tune_init(&t);
    t.max = t.best = 2;                       /* as if OpenMP offered two threads */
    int seen[2 + 2 * THREADS_TUNE_STEPS];
    for (int i = 0; i < 1 + 2 * THREADS_TUNE_STEPS; i++) {
        seen[i] = thread_tune_threads(&t);
        thread_tune_after(&t, seen[i] == 1 ? 0.5 : (i == 2 ? 0.1 : 1.0));   /* one lucky 2-thread step */
    }
    CHECK_INT(seen[0], 2);                                  /* warm-up, untimed */
    for (int i = 1; i <= THREADS_TUNE_STEPS; i++) CHECK_INT(seen[i], 2);
    for (int i = 1; i <= THREADS_TUNE_STEPS; i++) CHECK_INT(seen[THREADS_TUNE_STEPS + i], 1);
    CHECK_INT(t.best, 2);                                   /* 0.1 s beat 0.5 s */
    for (long s = t.step; s < THREADS_TUNE_PERIOD + 1; s++) {
        CHECK_INT(thread_tune_threads(&t), 2);
        thread_tune_after(&t, 1.0);
    }
    for (int i = 0; i < 2 * THREADS_TUNE_STEPS; i++)           /* second measurement: one wins */
        thread_tune_after(&t, thread_tune_threads(&t) == 1 ? 0.5 : 1.0);
    CHECK_INT(t.best, 1);
    CHECK_INT(thread_tune_threads(&t), 1);   /* (thread_tune_before never ran: OpenMP untouched) */
}

/* <unk> copy on a crafted cross-attention (H 2, Tq 4, S 5): the source is
 * "<unk>a the <unk>b sees <eos>", the decoder input "<2fr> <unk> voit <unk>";
 * row 0 (writes y1) leans to source 2 on average, row 2 (writes y3) to 0 —
 * though head 0 alone would pick 0 for row 0: the mean over heads decides. */
TEST(decode_copy_unk_follows_mean_cross_attention) {
    const int src[5] = {VOCAB_UNK, 6, VOCAB_UNK, 7, VOCAB_EOS};
    const int tgt[4] = {VOCAB_2FR, VOCAB_UNK, 9, VOCAB_UNK};
    float att[2][4][5] = {{{0.6f, 0.0f, 0.1f, 0.2f, 0.1f}, {0.2f, 0.2f, 0.2f, 0.2f, 0.2f}, {0.8f, 0.1f, 0.0f, 0.0f, 0.1f},
                           {0.2f, 0.2f, 0.2f, 0.2f, 0.2f}},
                          {{0.0f, 0.0f, 0.9f, 0.0f, 0.1f}, {0.2f, 0.2f, 0.2f, 0.2f, 0.2f}, {0.5f, 0.0f, 0.4f, 0.0f, 0.1f},
                           {0.2f, 0.2f, 0.2f, 0.2f, 0.2f}}};
    /* row 0: source 0 mean 0.30, source 2 mean 0.50 → 2; row 2: source 0 mean 0.65, source 2 mean 0.20 → 0 */
    DecodeCopy c[4];
    int n = decode_copy_unk(&att[0][0][0], 2, 4, 5, src, tgt, c);
    CHECK_INT(n, 2);
    CHECK_INT(c[0].target, 1);
    CHECK_INT(c[0].source, 2);
    CHECK_NEAR(c[0].weight, 0.5, 1e-6);
    CHECK_INT(c[1].target, 3);
    CHECK_INT(c[1].source, 0);
    CHECK_NEAR(c[1].weight, 0.65, 1e-6);
    /* a source without <unk>: nothing to copy */
    const int src2[5] = {6, 7, 6, 7, VOCAB_EOS};
    CHECK_INT(decode_copy_unk(&att[0][0][0], 2, 4, 5, src2, tgt, c), 0);
    /* <unk> is a candidate of the search only when allowed */
    float z[8] = {0, 5, 0, 1, 0, 0, 2, 3};
    CHECK_INT(decode_pick(z, 8), 7);
    CHECK_INT(decode_pick_unk(z, 8, 1), VOCAB_UNK);
    /* the language mask: a token outside it is never chosen; <eos> and <unk> stay */
    unsigned char allow[8] = {0, 0, 0, 0, 0, 0, 1, 0}, none[8] = {0};
    CHECK_INT(decode_pick_masked(z, 8, 0, allow), 6);
    CHECK_INT(decode_pick_masked(z, 8, 1, allow), VOCAB_UNK);
    CHECK_INT(decode_pick_masked(z, 8, 0, none), VOCAB_EOS);
    CHECK_INT(decode_pick_masked(z, 8, 0, NULL), 7);
    CHECK_INT(decode_src_has_unk(src, 5), 1);
    CHECK_INT(decode_src_has_unk(src2, 5), 0);
}

TEST(world_edit_distance_levenshtein) {
    CHECK_INT(world_edit_distance("giraffe", "girl"), 4);
    CHECK_INT(world_edit_distance("giraffe", "gift"), 4);
    CHECK_INT(world_edit_distance("dig", "dog"), 1);
    CHECK_INT(world_edit_distance("", "abc"), 3);
    CHECK_INT(world_edit_distance("kitten", "sitting"), 3);
    CHECK_INT(world_edit_distance("same", "same"), 0);
}

/* The checkpoint's metadata keys come in the order checkpoints have always
 * held them: the run's during training, the result's once recorded (around
 * supervised_heads), the quick eval's last and only once there is a head. */
static int keys_are(const char *const *kv, const char *const *want) {
    int i = 0;
    for (; want[i]; i++)
        if (!kv[2 * i] || strcmp(kv[2 * i], want[i]) || !kv[2 * i + 1]) return 0;
    return kv[2 * i] == NULL;
}

TEST(train_meta_pairs_keep_the_key_order) {
    static TrainMeta tm;
    memset(&tm, 0, sizeof tm);
    static char command[] = "attnviz train", src[] = "3", fr[] = "1", vi[] = "2";
    tm.command = command; tm.src_hex = src; tm.tgt_hex[0] = fr; tm.tgt_hex[1] = vi;
    const char *kv[2 * TRAIN_META_MAX_PAIRS + 1];
    train_meta_pairs(&tm, kv);
    static const char *const run[] = {"train_command", "train_options", "train_seed", "train_steps", "train_data",
                                      "supervised_heads", "train_max_source_len", "train_source_tokens",
                                      "train_target_tokens_fr", "train_target_tokens_vi", NULL};
    CHECK(keys_are(kv, run));
    TrainResult r = {.seconds = 1.5, .tokens_per_sec = 10, .last_loss = 2, .coref_aux = NAN, .align_aux = 0.5};
    train_meta_result(&tm, &r);
    CHECK(!strcmp(tm.aux, "{\"coreference\":-1.0000,\"alignment\":0.5000}"));
    train_meta_pairs(&tm, kv);
    static const char *const done[] = {"train_command", "train_options", "train_seed", "train_steps", "train_data",
                                       "train_seconds", "train_tokens_per_second", "train_final_loss",
                                       "supervised_heads", "train_final_aux_loss", "train_max_source_len",
                                       "train_source_tokens", "train_target_tokens_fr", "train_target_tokens_vi",
                                       NULL};
    CHECK(keys_are(kv, done));
    snprintf(tm.coref, sizeof tm.coref, "{}");
    train_meta_pairs(&tm, kv);
    static const char *const evaluated[] = {"train_command", "train_options", "train_seed", "train_steps", "train_data",
                                            "train_seconds", "train_tokens_per_second", "train_final_loss",
                                            "supervised_heads", "train_final_aux_loss", "train_max_source_len",
                                            "train_source_tokens", "train_target_tokens_fr", "train_target_tokens_vi",
                                            "coreference_head", "eval_quick", NULL};
    CHECK(keys_are(kv, evaluated));
}
