/* test_look.c — pipeline/look.h, the one call from sentences to what is shown
 * of them: it gives what the steps give when composed by hand (bit for bit),
 * a padded batch gives each sentence's own maps, token ids give the same
 * trace as the sentence, the links and the strip's head follow the rules of
 * links.h, and a failure says which sentence and which step. */
#include "check.h"
#include "model/model.h"
#include "pipeline/importance.h"
#include "pipeline/look.h"
#include "pipeline/sentence.h"
#include "tokenize/tokenizer.h"
#include "trace/trace.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *LOOK_WORDS[] = {
    "<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>", "the", "cat", "dog", "sleeps", ".", "it", "is",
    "big", "because", "le", "chat", "dort", "il", "est", "grand", "parce", "que"};

/* A random encoder–decoder (2 + 2 layers, 2 heads, max_len 12) with LOOK_WORDS. */
static int tiny_model(ModelFile *mf) {
    char err[256];
    memset(mf, 0, sizeof *mf);
    snprintf(mf->path, sizeof mf->path, "tiny");
    if (vocab_build(&mf->v, LOOK_WORDS, (int)(sizeof LOOK_WORDS / sizeof *LOOK_WORDS), err, sizeof err)) return -1;
    ModelConfig c = {0};
    c.arch = MODEL_ENC_DEC; c.vocab_size = mf->v.size; c.d_model = 16; c.n_heads = 2; c.d_ff = 32;
    c.n_enc_layers = 2; c.n_dec_layers = 2; c.max_len = 12; c.prenorm = 0;
    return model_init_random(&mf->m, &c, 23);
}

/* 1 when two traces hold the same maps with the same bits (weights, mask, norm-weighted). */
static int same_maps(const Trace *a, const Trace *b) {
    if (a->n_maps != b->n_maps) return 0;
    for (int i = 0; i < a->n_maps; i++) {
        const TraceMap *x = &a->maps[i], *y = &b->maps[i];
        if (strcmp(x->id, y->id) || x->Tq != y->Tq || x->Tk != y->Tk || x->n_heads != y->n_heads) return 0;
        size_t n = (size_t)x->Tq * x->Tk;
        if (memcmp(x->mask, y->mask, n)) return 0;
        for (int h = 0; h < x->n_heads; h++) {
            if (memcmp(x->heads[h].weights, y->heads[h].weights, n * sizeof(float))) return 0;
            if (!x->heads[h].norm_weighted != !y->heads[h].norm_weighted) return 0;
            if (x->heads[h].norm_weighted && memcmp(x->heads[h].norm_weighted, y->heads[h].norm_weighted, n * sizeof(float)))
                return 0;
        }
    }
    return 1;
}

TEST(look_sentence_is_the_steps_composed_by_hand) {
    ModelFile mf;
    REQUIRE(tiny_model(&mf) == 0);
    static const char *text = "the cat sleeps because it is big .";
    char err[512];
    /* by hand: prepare, translate, forward, trace, aggregates, importance */
    Sentence s;
    Trace t;
    trace_init(&t);
    float *rollout = NULL;
    Importance imp = {0};
    REQUIRE(sentence_prepare(&s, text, &mf.m, &mf.v, err, sizeof err) == 0);
    REQUIRE(sentence_translate(&s, &mf.m, &mf.v, VOCAB_2FR, err, sizeof err) == 0);
    REQUIRE(sentence_forward(&s, &mf.m, err, sizeof err) == 0);
    REQUIRE(sentence_labels(&s) == 0);   /* the words as typed label the maps */
    REQUIRE(model_trace(&mf.m, 0, &t, (const char *const *)s.label, s.tgt_tok, 0) == 0);
    REQUIRE(importance_trace_aggregates(&mf.m, 0, &t, &rollout, err, sizeof err) == 0);
    REQUIRE(importance_compute(&imp, &mf.m, &s, err, sizeof err) == 0);
    /* one call */
    Look L;
    LookSpec spec = {.want = LOOK_TRACE | LOOK_AGGREGATES | LOOK_IMPORTANCE | LOOK_RECORD, .tag = VOCAB_2FR};
    int rc = look_sentence(&L, &mf, text, &spec, err, sizeof err);
    if (rc) fprintf(stderr, "  look: %s\n", err);
    REQUIRE(rc == 0);
    CHECK_INT(L.reached, LOOK_DONE);
    CHECK_INT(L.failed, 0);
    CHECK(!strcmp(L.s.translation, s.translation));
    CHECK_INT(L.s.T, s.T);
    CHECK(same_maps(&L.t, &t));
    int E = mf.m.config.n_enc_layers, S = s.S;
    REQUIRE(L.rollout != NULL);
    CHECK(!memcmp(L.rollout, rollout, (size_t)E * S * S * sizeof(float)));
    REQUIRE(L.imp.n_targets == imp.n_targets);
    CHECK(!memcmp(L.imp.base, imp.base, (size_t)imp.n_targets * sizeof(float)));
    size_t nd = (size_t)3 * imp.Lmax * imp.H * imp.n_targets;
    int same = 1;
    for (size_t i = 0; i < nd; i++)   /* NAN for heads not measured: compare as bits */
        same &= !memcmp(&L.imp.delta[i], &imp.delta[i], sizeof(float));
    CHECK(same);
    /* the trace records what ran, in the order trace.json shows it */
    static const char *const order[] = {"ablated", "language_mask", "rollout", "importance", "unk_copies", "decode",
                                        "source_read", "unknown_words"};
    REQUIRE(L.t.n_sections == 8);
    for (int k = 0; k < 8; k++) CHECK(!strcmp(L.t.section_names[k], order[k]));
    look_free(&L);
    look_free(&L);   /* a freed look is a zeroed one */
    sentence_free(&s);
    trace_free(&t);
    free(rollout);
    importance_free(&imp);
    model_file_free(&mf);
}

TEST(look_translation_only_runs_no_trace) {
    ModelFile mf;
    REQUIRE(tiny_model(&mf) == 0);
    char err[512];
    Look L;
    LookSpec spec = {.tag = VOCAB_2FR, .target = "le chat dort ."};
    REQUIRE(look_sentence(&L, &mf, "the cat sleeps .", &spec, err, sizeof err) == 0);
    CHECK_INT(L.reached, LOOK_DONE);
    CHECK_INT(L.t.n_maps, 0);
    CHECK(!strcmp(L.s.translation, "le chat dort ."));
    CHECK_INT(L.s.T, 5);   /* <2fr> + 4 words */
    look_free(&L);
    model_file_free(&mf);
}

TEST(look_batch_gives_each_sentence_its_own_maps) {
    ModelFile mf;
    REQUIRE(tiny_model(&mf) == 0);
    const char *const texts[2] = {"the dog is big because it sleeps .", "the cat sleeps ."};
    char err[512];
    Look batch[2], alone;
    LookSpec spec = {.want = LOOK_TRACE, .tag = VOCAB_2FR, .batch = 1};
    REQUIRE(look_sentences(batch, &mf, texts, 2, &spec, err, sizeof err) == 0);
    spec.batch = 0;
    REQUIRE(look_sentence(&alone, &mf, texts[1], &spec, err, sizeof err) == 0);
    /* the short sentence in the batch: padded keys masked, its own rows as alone */
    const TraceMap *mb = trace_find_map(&batch[1].t, "encoder.0.self"), *ma = trace_find_map(&alone.t, "encoder.0.self");
    REQUIRE(mb && ma);
    int S2 = alone.s.S, S = batch[0].s.S;
    REQUIRE(S > S2 && mb->Tk == S && ma->Tk == S2);
    CHECK(!strcmp(mb->keys[S - 1], "<pad>"));
    CHECK_INT(mb->mask[S - 1], 0);
    float worst = 0;
    for (int h = 0; h < mb->n_heads; h++)
        for (int i = 0; i < S2; i++)
            for (int j = 0; j < S; j++) {
                float a = j < S2 ? ma->heads[h].weights[i * S2 + j] : 0.0f, d = mb->heads[h].weights[i * S + j] - a;
                if (d < 0) d = -d;
                if (d > worst) worst = d;
            }
    CHECK(worst < 1e-5f);
    CHECK(!strcmp(batch[1].s.translation, alone.s.translation));
    /* without --batch each sentence runs alone: the same bits as one look at it */
    Look two[2];
    REQUIRE(look_sentences(two, &mf, texts, 2, &spec, err, sizeof err) == 0);
    CHECK(same_maps(&two[1].t, &alone.t));
    CHECK_INT(trace_find_map(&two[0].t, "encoder.0.self")->Tk, S);
    look_free(&two[0]); look_free(&two[1]);
    look_free(&batch[0]); look_free(&batch[1]); look_free(&alone);
    model_file_free(&mf);
}

TEST(look_ids_trace_the_sentence_they_spell) {
    ModelFile mf;
    REQUIRE(tiny_model(&mf) == 0);
    char err[512];
    Look L, I;
    LookSpec spec = {.want = LOOK_TRACE | LOOK_STEPS | LOOK_AGGREGATES, .tag = VOCAB_2FR};
    REQUIRE(look_sentence(&L, &mf, "the cat is big .", &spec, err, sizeof err) == 0);
    char **words = malloc(sizeof(char *) * (size_t)mf.v.size);
    REQUIRE(words);
    for (int i = 0; i < mf.v.size; i++) words[i] = (char *)vocab_word(&mf.v, i);
    LookIds ids = {.src = L.s.src, .src_len = &L.s.S, .S = L.s.S, .tgt = L.s.tgt, .tgt_len = &L.s.T, .T = L.s.T, .B = 1,
                   .words = words, .n_words = mf.v.size};
    REQUIRE(look_ids(&I, &mf.m, &ids, &spec, err, sizeof err) == 0);
    CHECK_INT(I.reached, LOOK_DONE);
    CHECK(same_maps(&I.t, &L.t));
    REQUIRE(I.t.n_maps > 0 && I.t.maps[0].heads[0].scores);   /* LOOK_STEPS kept the steps */
    CHECK(!strcmp(I.t.maps[0].keys[0], "the"));
    int E = mf.m.config.n_enc_layers, S = L.s.S;
    REQUIRE(I.rollout && L.rollout);
    CHECK(!memcmp(I.rollout, L.rollout, (size_t)E * S * S * sizeof(float)));
    look_free(&L); look_free(&I);
    free(words);
    model_file_free(&mf);
}

TEST(look_links_and_the_strip_head) {
    ModelFile mf;
    REQUIRE(tiny_model(&mf) == 0);
    char err[512];
    static const char *text = "the dog sleeps because it is big .";
    Look L;
    LookSpec spec = {.want = LOOK_TRACE | LOOK_LINKS, .tag = VOCAB_2FR};
    REQUIRE(look_sentence(&L, &mf, text, &spec, err, sizeof err) == 0);
    REQUIRE(L.n_links == 1);   /* the one pronoun */
    CHECK_INT(L.links[0].q, 4);
    CorefHead none = {-1, -1, -1, 0, NULL};
    LinksView v = links_view(&L.t, 4, 1, &none, -1, 0);
    CHECK_INT(L.links[0].view.link.map, v.link.map);
    CHECK_INT(L.links[0].view.link.head, v.link.head);
    CHECK_INT(L.focus_map, v.link.map);     /* no --focus: the pronoun's head */
    CHECK_INT(L.focus_head, v.link.head);
    HeadLink B = links_strongest(&L.t, 4);
    CHECK_INT(L.links[0].strongest.map, B.map);
    CHECK_INT(L.links[0].strongest.head, B.head);
    look_free(&L);
    /* --focus names the strip's head; a --query with no token gives no link */
    spec.focus = "1.1";
    spec.query = "zebra";
    REQUIRE(look_sentence(&L, &mf, text, &spec, err, sizeof err) == 0);
    CHECK(!strcmp(L.t.maps[L.focus_map].id, "encoder.1.self"));
    CHECK_INT(L.focus_head, 1);
    CHECK_INT(L.n_links, 0);
    look_free(&L);
    model_file_free(&mf);
}

TEST(look_says_which_sentence_and_step_failed) {
    ModelFile mf;
    REQUIRE(tiny_model(&mf) == 0);
    char err[512];
    const char *const texts[3] = {"the cat sleeps .", "the cat is big because the dog is big because it sleeps .",
                                  "the dog sleeps ."};
    Look L[3];
    LookSpec spec = {.want = LOOK_WORLD | LOOK_TRACE, .tag = VOCAB_2FR};
    CHECK(look_sentences(L, &mf, texts, 3, &spec, err, sizeof err) == -1);
    CHECK(strstr(err, "this model reads at most 11") != NULL);
    CHECK_INT(L[0].reached, LOOK_PREPARED);   /* prepared, not translated: all are prepared first */
    CHECK_INT(L[0].failed, 0);
    CHECK_INT(L[1].reached, LOOK_NONE);
    CHECK_INT(L[1].failed, 1);
    CHECK_INT(L[2].reached, LOOK_NONE);
    CHECK_INT(L[2].failed, 0);
    for (int i = 0; i < 3; i++) look_free(&L[i]);
    /* a target too long fails at the translation */
    spec.target = "le chat est grand parce que le chat est grand parce que il dort .";
    CHECK(look_sentence(&L[0], &mf, texts[0], &spec, err, sizeof err) == -1);
    CHECK(strstr(err, "this model writes at most") != NULL);
    CHECK_INT(L[0].reached, LOOK_PREPARED);
    CHECK_INT(L[0].failed, 1);
    look_free(&L[0]);
    model_file_free(&mf);
}

/* The decoder maps' rows are labelled with the word each writes and, after a
 * tab, the word it reads (render/label.h): row i writes decoder input i + 1,
 * the last row <eos> when the search stopped there; the encoder's are not,
 * and the trace's queries stay the decoder input. */
TEST(look_decoder_rows_labelled_with_the_written_word) {
    ModelFile mf;
    REQUIRE(tiny_model(&mf) == 0);
    char err[512], want[600];
    Look L;
    LookSpec spec = {.want = LOOK_TRACE, .tag = VOCAB_2FR};
    REQUIRE(look_sentence(&L, &mf, "the cat sleeps .", &spec, err, sizeof err) == 0);
    int decoder = 0;
    for (int k = 0; k < L.t.n_maps; k++) {
        const TraceMap *m = &L.t.maps[k];
        if (strcmp(m->stack, "decoder")) {
            CHECK(m->row_labels == NULL && trace_row_labels(m) == (const char *const *)m->queries);
            continue;
        }
        decoder++;
        REQUIRE(m->row_labels != NULL);
        CHECK(!strcmp(m->queries[0], "<2fr>"));
        for (int i = 0; i < m->Tq; i++) {
            const char *next = i + 1 < m->Tq ? m->queries[i + 1]
                             : L.s.stop.why == DECODE_STOP_EOS ? "<eos>" : "\xE2\x80\xA6";
            snprintf(want, sizeof want, "%s\t%s", next, m->queries[i]);
            if (strcmp(trace_row_labels(m)[i], want))
                check_fail(__FILE__, __LINE__, "%s row %d: \"%s\", want \"%s\"", m->id, i, trace_row_labels(m)[i], want);
        }
    }
    CHECK_INT(decoder, 4);   /* 2 layers × (masked self, cross) */
    look_free(&L);
    model_file_free(&mf);
}
