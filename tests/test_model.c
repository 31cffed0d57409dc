/* test_model.c — the Transformer: positional encoding, masks, padding, probe,
 * parameter table; gradient checks of the backward pass (central differences). */
#include "check.h"
#include "core/tensor.h"
#include "model/model.h"
#include "model/model_internal.h"
#include "trace/trace.h"
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* arch, V, C, H, F, E, L, max_len, prenorm */
static const ModelConfig TINY = { MODEL_ENC_DEC, 11, 8, 2, 12, 2, 2, 10, 0 };

/* floats_huge: zeroed when asked (after a block of the same size was dirtied and
 * freed, which the allocator may hand back), below and above the 2 MB where it
 * switches to 2 MB-aligned blocks, and aligned there. */
TEST(model_floats_huge) {
    size_t sizes[] = { 1, 1000, (2u << 20) / 4 - 1, (2u << 20) / 4, 3u << 20 };
    mallopt(M_MMAP_MAX, 0);                 /* freed blocks stay in the heap, dirty, */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);   /* for the next allocation to reuse      */
    for (int s = 0; s < 5; s++) {
        size_t n = sizes[s], nonzero = 0;
        float *q = floats_huge(n, 0);
        REQUIRE(q != NULL);
        for (size_t i = 0; i < n; i++) q[i] = 2.0f;
        free(q);
        float *p = floats_huge(n, 1);
        REQUIRE(p != NULL);
        for (size_t i = 0; i < n; i++) nonzero += p[i] != 0.0f;
        CHECK_INT((int)nonzero, 0);
        if (n * sizeof(float) >= (2u << 20)) CHECK_INT((int)((uintptr_t)p % (2u << 20)), 0);
        free(p);
    }
    mallopt(M_MMAP_MAX, 65536);             /* glibc's defaults again */
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
}

TEST(model_positional_encoding_values) {
    float pe[6 * 8];
    model_positional_encoding(pe, 6, 8);
    /* d_model 8: the angle of column pair i is pos / 10000^(2i/8) = pos / 10^i */
    CHECK_NEAR(pe[0 * 8 + 0], 0.0, 1e-7);                  /* sin(0)        */
    CHECK_NEAR(pe[0 * 8 + 1], 1.0, 1e-7);                  /* cos(0)        */
    CHECK_NEAR(pe[1 * 8 + 0], 0.8414709848, 1e-6);         /* sin(1)        */
    CHECK_NEAR(pe[1 * 8 + 1], 0.5403023059, 1e-6);         /* cos(1)        */
    CHECK_NEAR(pe[2 * 8 + 2], 0.1986693308, 1e-6);         /* sin(2/10)     */
    CHECK_NEAR(pe[3 * 8 + 3], 0.9553364891, 1e-6);         /* cos(3/10)     */
    CHECK_NEAR(pe[5 * 8 + 4], 0.0499791693, 1e-6);         /* sin(5/100)    */
    CHECK_NEAR(pe[5 * 8 + 6], 0.0049999792, 1e-7);         /* sin(5/1000)   */
    CHECK_NEAR(pe[5 * 8 + 7], 0.9999875000, 1e-6);         /* cos(5/1000)   */
    CHECK_NEAR(pe[4 * 8 + 1], -0.6536436209, 1e-6);        /* cos(4)        */
}

TEST(model_param_table_layout) {
    const ModelConfig cfgs[] = {
        TINY,
        { MODEL_ENC_DEC, 11, 8, 2, 12, 1, 3, 10, 1 },
        { MODEL_ENCODER_ONLY, 7, 8, 4, 12, 2, 0, 10, 0 },
        { MODEL_DECODER_ONLY, 7, 8, 4, 12, 0, 2, 10, 1 },
    };
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
        ModelParam tab[MODEL_MAX_TENSORS];
        int n = model_param_table(&cfgs[k], NULL, tab, MODEL_MAX_TENSORS);
        REQUIRE(n > 0 && n <= MODEL_MAX_TENSORS);
        size_t off = 0;
        for (int i = 0; i < n; i++) {
            CHECK_INT(tab[i].offset, off);
            size_t numel = 1;
            for (int d = 0; d < tab[i].ndim; d++) numel *= (size_t)tab[i].shape[d];
            CHECK_INT(tab[i].numel, numel);
            off += numel;
            for (int j = 0; j < i; j++) CHECK(strcmp(tab[i].name, tab[j].name) != 0);
        }
        CHECK_INT(off, model_num_params(&cfgs[k]));
    }
    /* hand count for TINY (post-norm, C 8, F 12, V 11, 2+2 layers) */
    size_t C = 8, F = 12, V = 11;
    size_t attn = 4 * (C * C + C), ffn = C * F + F + F * C + C, ln = 2 * C;
    size_t want = V * C + 2 * (attn + ln + ffn + ln) + 2 * (attn + ln + attn + ln + ffn + ln) + C * V + V;
    CHECK_INT(model_num_params(&TINY), want);
}

TEST(model_config_validation) {
    char err[256];
    ModelConfig c = TINY;
    CHECK(model_config_validate(&c, err, sizeof err) == 0);
    c.n_heads = 3;
    CHECK(model_config_validate(&c, err, sizeof err) == -1 && strstr(err, "multiple"));
    c = TINY; c.d_model = 0;
    CHECK(model_config_validate(&c, err, sizeof err) == -1);
    c = TINY; c.arch = MODEL_ENCODER_ONLY;       /* has decoder layers */
    CHECK(model_config_validate(&c, err, sizeof err) == -1);
    c = TINY; c.max_len = MODEL_MAX_LEN + 1;
    CHECK(model_config_validate(&c, err, sizeof err) == -1);
    char json[1024];
    model_config_json(&TINY, json, sizeof json);
    ModelConfig back;
    CHECK(model_config_from_json(&back, json, err, sizeof err) == 0);
    CHECK(memcmp(&back, &TINY, sizeof back) == 0);
    CHECK(strstr(json, "\"norm\":\"post\"") && strstr(json, "\"d_k\":4"));
    CHECK(model_config_from_json(&back, "{\"arch\":\"encoder-decoder\"}", err, sizeof err) == -1);
    CHECK(model_config_from_json(&back, "nonsense", err, sizeof err) == -1);
}

TEST(model_init_is_deterministic) {
    Model a, b, c;
    REQUIRE(model_init_random(&a, &TINY, 7) == 0);
    REQUIRE(model_init_random(&b, &TINY, 7) == 0);
    REQUIRE(model_init_random(&c, &TINY, 8) == 0);
    CHECK(memcmp(a.params_memory, b.params_memory, a.num_params * sizeof(float)) == 0);
    CHECK(memcmp(a.params_memory, c.params_memory, a.num_params * sizeof(float)) != 0);
    CHECK(a.params.dec_ln3.w[0] == 1.0f && a.params.dec_ln3.b[0] == 0.0f);
    model_free(&a); model_free(&b); model_free(&c);
}

/* Random biases/LayerNorm so every parameter matters. */
static void perturb(Model *m, uint64_t seed) {
    uint64_t s = seed * 2654435761u + 1;
    for (size_t i = 0; i < m->num_params; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        float u = (float)((s >> 40) * (1.0 / 16777216.0)) - 0.5f;
        m->params_memory[i] += 0.2f * u;
    }
}

static const int SRC[2 * 5] = { 4, 5, 6, 7, 8,   9, 10, 4, 0, 0 };
static const int SRC_LEN[2] = { 5, 3 };
static const int TGT[2 * 4] = { 2, 5, 6, 7,   2, 9, 0, 0 };
static const int TGT_LEN[2] = { 4, 2 };

TEST(model_masks_in_attention_weights) {
    for (int pre = 0; pre < 2; pre++) {
        ModelConfig cfg = TINY;
        cfg.prenorm = pre;
        Model m;
        REQUIRE(model_init_random(&m, &cfg, 3) == 0);
        perturb(&m, 3);
        REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
        int H = cfg.n_heads, B = 2, S = 5, T = 4, bad_causal = 0, bad_pad = 0, bad_sum = 0, positive = 0;
        for (int l = 0; l < 2; l++)
            for (int b = 0; b < B; b++)
                for (int h = 0; h < H; h++) {
                    const float *es = m.acts.enc_self.att + (((size_t)l * B + b) * H + h) * S * S;
                    const float *ds = m.acts.dec_self.att + (((size_t)l * B + b) * H + h) * T * T;
                    const float *cr = m.acts.dec_cross.att + (((size_t)l * B + b) * H + h) * T * S;
                    for (int i = 0; i < S; i++) {
                        double sum = 0;
                        for (int j = 0; j < S; j++) {
                            sum += es[i * S + j];
                            if (j >= SRC_LEN[b] && es[i * S + j] != 0.0f) bad_pad++;
                            if (j < SRC_LEN[b] && es[i * S + j] > 0.0f) positive++;
                        }
                        if (fabs(sum - 1) > 1e-5) bad_sum++;
                    }
                    for (int i = 0; i < T; i++) {
                        double sum = 0, sum2 = 0;
                        for (int j = 0; j < T; j++) {
                            sum += ds[i * T + j];
                            if (j > i && ds[i * T + j] != 0.0f) bad_causal++;
                            if (j >= TGT_LEN[b] && ds[i * T + j] != 0.0f) bad_pad++;
                        }
                        for (int j = 0; j < S; j++) {
                            sum2 += cr[i * S + j];
                            if (j >= SRC_LEN[b] && cr[i * S + j] != 0.0f) bad_pad++;
                        }
                        if (fabs(sum - 1) > 1e-5 || fabs(sum2 - 1) > 1e-5) bad_sum++;
                    }
                }
        CHECK_INT(bad_causal, 0);
        CHECK_INT(bad_pad, 0);
        CHECK_INT(bad_sum, 0);
        CHECK(positive > 0);
        /* mask arrays themselves */
        CHECK(m.acts.dec_mask[(size_t)0 * 16 + 0 * 4 + 1] == 0 && m.acts.dec_mask[3 * 4 + 3] == 1);
        CHECK(m.acts.cross_mask[(size_t)1 * T * S + 0 * S + 3] == 0 && m.acts.cross_mask[(size_t)1 * T * S + 3 * S + 2] == 1);
        model_free(&m);
    }
}

/* Padding must not change the real positions: item 1 alone, unpadded, gives the
 * same logits as inside the padded batch. */
TEST(model_padding_does_not_leak) {
    const int archs[3] = { MODEL_ENC_DEC, MODEL_ENCODER_ONLY, MODEL_DECODER_ONLY };
    for (int k = 0; k < 3; k++)
        for (int pre = 0; pre < 2; pre++) {
            ModelConfig cfg = TINY;
            cfg.arch = (ModelArch)archs[k];
            cfg.prenorm = pre;
            if (cfg.arch == MODEL_ENCODER_ONLY) cfg.n_dec_layers = 0;
            if (cfg.arch == MODEL_DECODER_ONLY) cfg.n_enc_layers = 0;
            Model m;
            REQUIRE(model_init_random(&m, &cfg, 11) == 0);
            perturb(&m, 5);
            REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
            int V = cfg.vocab_size, To = m.To, n = cfg.arch == MODEL_ENCODER_ONLY ? 3 : 2;
            float *batched = malloc(sizeof(float) * (size_t)n * V);
            memcpy(batched, m.acts.logits + (size_t)1 * To * V, sizeof(float) * (size_t)n * V);
            int one_src_len = 3, one_tgt_len = 2;
            REQUIRE(model_forward(&m, &(ModelBatch){SRC + 5, &one_src_len, 3, TGT + 4, &one_tgt_len, 2, 1}) == 0);
            CHECK_CLOSE("item 1 alone vs padded", m.acts.logits, batched, n * V, 1e-5, 1e-5);
            /* and a different pad id changes nothing either */
            int src2[10], tgt2[8];
            memcpy(src2, SRC, sizeof src2); memcpy(tgt2, TGT, sizeof tgt2);
            src2[8] = src2[9] = 3; tgt2[6] = tgt2[7] = 1;
            REQUIRE(model_forward(&m, &(ModelBatch){src2, SRC_LEN, 5, tgt2, TGT_LEN, 4, 2}) == 0);
            CHECK_CLOSE("other pad ids", m.acts.logits + (size_t)To * V, batched, n * V, 1e-6, 1e-6);
            free(batched);
            model_free(&m);
        }
}

TEST(model_forward_rejects_bad_input) {
    Model m;
    REQUIRE(model_init_random(&m, &TINY, 1) == 0);
    int bad[5] = { 1, 2, 11, 0, 0 }, len[1] = { 3 }, tl[1] = { 2 }, too_long[1] = { 6 };
    CHECK(model_forward(&m, &(ModelBatch){bad, len, 5, TGT, tl, 4, 1}) == -1 && strstr(m.err, "token id 11"));
    CHECK(model_forward(&m, &(ModelBatch){SRC, too_long, 5, TGT, tl, 4, 1}) == -1 && strstr(m.err, "length"));
    int big[11] = { 0 }, bl[1] = { 11 };
    CHECK(model_forward(&m, &(ModelBatch){big, bl, 11, TGT, tl, 4, 1}) == -1 && strstr(m.err, "max_len"));
    CHECK(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 0}) == -1);
    Model empty;
    memset(&empty, 0, sizeof empty);
    CHECK(model_forward(&empty, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == -1);
    /* a zero-length source: cross-attention rows fully masked -> zeros, no NaN */
    int zl[1] = { 0 };
    REQUIRE(model_forward(&m, &(ModelBatch){SRC, zl, 5, TGT, tl, 4, 1}) == 0);
    int nan = 0;
    for (int i = 0; i < 4 * TINY.vocab_size; i++) nan += !isfinite(m.acts.logits[i]);
    CHECK_INT(nan, 0);
    model_free(&m);
}

TEST(model_trace_maps) {
    Model m;
    REQUIRE(model_init_random(&m, &TINY, 2) == 0);
    REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
    Trace t;
    trace_init(&t);
    const char *src_tok[] = { "the", "cat", "sat" }, *tgt_tok[] = { "<2fr>", "le" };
    REQUIRE(model_trace(&m, 1, &t, src_tok, tgt_tok, 1) == 0);
    CHECK_INT(t.n_maps, 2 + 2 * 2);
    const char *ids[] = { "encoder.0.self", "encoder.1.self", "decoder.0.masked_self",
                          "decoder.0.cross", "decoder.1.masked_self", "decoder.1.cross" };
    for (int i = 0; i < t.n_maps && i < 6; i++) CHECK(!strcmp(t.maps[i].id, ids[i]));
    TraceMap *cr = trace_find_map(&t, "decoder.1.cross");
    REQUIRE(cr != NULL);
    CHECK(!strcmp(cr->kind, "cross") && cr->layer == 1 && cr->Tq == 4 && cr->Tk == 5 && cr->d_k == 4);
    CHECK(!strcmp(cr->keys[2], "sat") && !strcmp(cr->keys[3], "<pad>") && !strcmp(cr->queries[3], "<pad>"));
    CHECK(cr->mask[0 * 5 + 3] == 0 && cr->mask[0 * 5 + 2] == 1 && isinf(cr->mask_fill) && cr->mask_fill < 0);
    CHECK(cr->heads[1].masked && isinf(cr->heads[1].masked[4]) && cr->heads[1].weights[4] == 0.0f);
    /* the probe's weights are the forward's weights; its output is weights·V */
    const float *w = m.acts.dec_cross.att + (((size_t)1 * 2 + 1) * 2 + 1) * 4 * 5;
    CHECK_CLOSE("trace weights", cr->heads[1].weights, w, 20, 0, 0);
    CHECK_CLOSE("trace recomputed weights", cr->heads[1].weights, w, 20, 0, 0);
    TraceMap *ms = trace_find_map(&t, "decoder.0.masked_self");
    REQUIRE(ms != NULL);
    CHECK(ms->mask[0 * 4 + 1] == 0 && ms->heads[0].weights[0 * 4 + 1] == 0.0f && !strcmp(ms->queries[1], "le"));
    CHECK(t.n_source == 5 && t.n_target == 4 && !strcmp(t.source_tokens[4], "<pad>"));
    CHECK(t.json_model && strstr(t.json_model, "\"d_model\":8"));
    trace_free(&t);
    trace_init(&t);
    CHECK(model_trace(&m, 2, &t, NULL, NULL, 0) == -1);
    REQUIRE(model_trace(&m, 0, &t, NULL, NULL, 0) == 0);
    CHECK(!strcmp(t.maps[0].keys[0], "#4") && t.maps[0].heads[0].scores == NULL);
    trace_free(&t);
    model_free(&m);
}

/* ------------------------------------------------------- gradient checks */

/* Dropout masks of the gradient checks: the generator is reset to the same state
 * before every forward, so the +h and -h evaluations use the backward's masks. */
static void fix_dropout_masks(Model *m) {
    if (m->training) model_dropout_seed(m, 5, 4);
}

/* Signature of which FFN units the ReLU passes in the last forward (FNV-1a over the
 * on/off pattern of every layer of both stacks). */
static uint64_t relu_pattern(const Model *m) {
    const ModelConfig *c = &m->config;
    uint64_t hsh = 1469598103934665603ULL;
    const float *h[2] = { m->acts.enc_ffn.h, m->acts.dec_ffn.h };
    size_t n[2] = { (size_t)c->n_enc_layers * m->B * m->S * c->d_ff,
                    (size_t)c->n_dec_layers * m->B * m->T * c->d_ff };
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; h[k] && i < n[k]; i++) { hsh ^= (uint64_t)(h[k][i] > 0.0f); hsh *= 1099511628211ULL; }
    return hsh;
}

/* Loss at the current parameters (forward + model_loss). */
static double loss_at(Model *m, const int *targets, float eps) {
    fix_dropout_masks(m);
    if (model_forward(m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2})) return NAN;
    return model_loss(m, targets, eps);
}

/* Compares model_backward with central differences on a sample of every tensor;
 * dropout > 0: with dropout active and fixed masks (fix_dropout_masks). */
static void gradcheck_drop(const ModelConfig *cfg, float eps, float dropout, const char *label) {
    Model m;
    if (model_init_random(&m, cfg, 17)) { check_fail(__FILE__, __LINE__, "%s: init", label); return; }
    perturb(&m, 9);
    if (dropout > 0.0f) { m.training = 1; m.dropout = dropout; }
    fix_dropout_masks(&m);
    /* targets: next tokens, for the output positions of the architecture */
    int tg_dec[2 * 4] = { 5, 6, 7, 3, 9, 3, 0, 0 };
    int tg_enc[2 * 5] = { 1, 2, 3, 4, 5, 6, 7, 8, 0, 0 };
    const int *targets = cfg->arch == MODEL_ENCODER_ONLY ? tg_enc : tg_dec;
    if (model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) || model_zero_grad(&m)) {
        check_fail(__FILE__, __LINE__, "%s: forward: %s", label, m.err);
        model_free(&m);
        return;
    }
    float loss = model_backward(&m, targets, eps);
    CHECK(isfinite(loss) && loss > 0);
    uint64_t pattern = relu_pattern(&m);
    ModelParam tab[MODEL_MAX_TENSORS], gtab[MODEL_MAX_TENSORS];
    int nt = model_param_table(cfg, m.params_memory, tab, MODEL_MAX_TENSORS);
    model_param_table(cfg, m.grads_memory, gtab, MODEL_MAX_TENSORS);
    const float h = 2e-3f;
    int checked = 0, bad = 0, kinks = 0;
    uint64_t s = 99;
    for (int t = 0; t < nt; t++) {
        double gabs = 0;
        for (size_t i = 0; i < gtab[t].numel; i++) gabs += fabs(gtab[t].ptr[i]);
        /* The key bias has an exactly zero gradient (it shifts every score of a
         * row by the same q·b_k, and softmax ignores shifts); every other tensor
         * must receive gradient. */
        int is_bk = strstr(tab[t].name, ".bk") != NULL;
        if (!is_bk && !(gabs > 1e-6))
            check_fail(__FILE__, __LINE__, "%s: gradient of %s is all zero", label, tab[t].name);
        if (is_bk && gabs > 1e-4)
            check_fail(__FILE__, __LINE__, "%s: key bias %s has gradient %g", label, tab[t].name, gabs);
        for (int k = 0; k < 6; k++) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            size_t i = (size_t)(s % tab[t].numel);
            if (!strcmp(tab[t].name, "tok_emb")) {   /* a row of a token that occurs */
                static const int used[] = { 4, 5, 6, 9, 2, 10 };
                i = (size_t)used[k] * cfg->d_model + (size_t)(s >> 20) % cfg->d_model;
            }
            float keep = tab[t].ptr[i];
            tab[t].ptr[i] = keep + h;
            double lp = loss_at(&m, targets, eps);
            int kink = relu_pattern(&m) != pattern;
            tab[t].ptr[i] = keep - h;
            double lm = loss_at(&m, targets, eps);
            kink |= relu_pattern(&m) != pattern;
            tab[t].ptr[i] = keep;
            double fd = (lp - lm) / (2.0 * h), an = gtab[t].ptr[i];
            checked++;
            /* With dropout the point is not the one perturb() chose to lie clear of
             * ReLU kinks: a sample whose ±h evaluations switch a unit on or off has
             * no meaningful central difference and is counted apart. */
            if (dropout > 0.0f && kink) { kinks++; continue; }
            if (!(fabs(fd - an) <= 2e-4 + 2e-2 * fmax(fabs(fd), fabs(an)))) {
                if (bad++ < 10)
                    check_fail(__FILE__, __LINE__, "%s: d loss / d %s[%zu]: backward %.6g, central difference %.6g",
                               label, tab[t].name, i, an, fd);
            }
        }
    }
    if (bad) check_fail(__FILE__, __LINE__, "%s: %d of %d gradient samples differ", label, bad, checked);
    CHECK(nt >= 15 && checked == 6 * nt);
    if (kinks > checked / 5)
        check_fail(__FILE__, __LINE__, "%s: %d of %d samples straddle a ReLU kink", label, kinks, checked);
    if (dropout > 0.0f) fprintf(stderr, "  %s: %d samples, %d skipped at a ReLU kink\n", label, checked, kinks);
    if (dropout > 0.0f) CHECK(m.acts.dec_ffn.drop != NULL || m.acts.enc_ffn.drop != NULL);
    else CHECK(m.acts.enc_x_drop == NULL && m.acts.dec_ffn.drop == NULL);
    model_free(&m);
}

static void gradcheck(const ModelConfig *cfg, float eps, const char *label) {
    gradcheck_drop(cfg, eps, 0.0f, label);
}

TEST(model_gradcheck_encdec_postnorm) {
    ModelConfig c = TINY;
    gradcheck(&c, 0.0f, "encoder-decoder post-norm");
}

TEST(model_gradcheck_encdec_prenorm_smoothing) {
    ModelConfig c = TINY;
    c.prenorm = 1;
    gradcheck(&c, 0.1f, "encoder-decoder pre-norm, label smoothing 0.1");
}

TEST(model_gradcheck_encoder_only) {
    ModelConfig c = { MODEL_ENCODER_ONLY, 11, 8, 2, 12, 2, 0, 10, 1 };
    gradcheck(&c, 0.0f, "encoder-only pre-norm");
}

TEST(model_gradcheck_decoder_only) {
    ModelConfig c = { MODEL_DECODER_ONLY, 11, 8, 2, 12, 0, 2, 10, 0 };
    gradcheck(&c, 0.0f, "decoder-only post-norm");
}

/* Dropout 0.3 with the masks held fixed: every sub-layer output, the embeddings
 * of both stacks, through post-norm and pre-norm residuals. */
TEST(model_gradcheck_dropout_postnorm) {
    ModelConfig c = TINY;
    gradcheck_drop(&c, 0.0f, 0.3f, "encoder-decoder post-norm, dropout 0.3");
}

TEST(model_gradcheck_dropout_prenorm) {
    ModelConfig c = TINY;
    c.prenorm = 1;
    gradcheck_drop(&c, 0.05f, 0.3f, "encoder-decoder pre-norm, dropout 0.3, label smoothing 0.05");
}

TEST(model_gradcheck_dropout_decoder_only) {
    ModelConfig c = { MODEL_DECODER_ONLY, 11, 8, 2, 12, 0, 2, 10, 1 };
    gradcheck_drop(&c, 0.0f, 0.3f, "decoder-only pre-norm, dropout 0.3");
}

/* Every mask value of one forward is 0 or 1/(1-P), in the order they are laid out. */
static void mask_stats(const Model *m, long *zeros, long *total, long *odd, float p) {
    const ModelActs *a = &m->acts;
    const ModelConfig *c = &m->config;
    size_t ns = (size_t)m->B * m->S * c->d_model, nt = (size_t)m->B * m->T * c->d_model;
    const float *parts[6] = { a->enc_x_drop, a->enc_self.drop, a->enc_ffn.drop,
                              a->dec_x_drop, a->dec_self.drop, a->dec_cross.drop };
    size_t sizes[6] = { ns, ns * c->n_enc_layers, ns * c->n_enc_layers,
                        nt, nt * c->n_dec_layers, nt * c->n_dec_layers };
    float keep = 1.0f / (1.0f - p);
    for (int k = 0; k < 7; k++) {
        const float *x = k < 6 ? parts[k] : a->dec_ffn.drop;
        size_t n = k < 6 ? sizes[k] : nt * c->n_dec_layers;
        if (!x) { (*odd)++; continue; }
        for (size_t i = 0; i < n; i++) {
            if (x[i] == 0.0f) (*zeros)++;
            else if (x[i] != keep) (*odd)++;
            (*total)++;
        }
    }
}

/* At P = 0.3 about 30% of the units are zeroed, the kept ones scaled by 1/(1-P) so
 * the expectation of the embeddings is preserved; the masks follow the seed. */
TEST(model_dropout_fraction_and_expectation) {
    const float p = 0.3f;
    Model m;
    REQUIRE(model_init_random(&m, &TINY, 21) == 0);
    perturb(&m, 4);
    REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
    size_t nx = (size_t)2 * 5 * TINY.d_model;
    float x0[2 * 5 * 8];
    memcpy(x0, m.acts.enc_x, sizeof x0);
    double *mean = calloc(nx, sizeof(double));
    REQUIRE(mean != NULL);
    m.training = 1;
    m.dropout = p;
    long zeros = 0, total = 0, odd = 0, exact_bad = 0;
    const int runs = 400;
    for (int r = 0; r < runs; r++) {
        model_dropout_seed(&m, 1, (uint64_t)r);
        REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
        mask_stats(&m, &zeros, &total, &odd, p);
        for (size_t i = 0; i < nx; i++) {
            mean[i] += m.acts.enc_x[i] / (double)runs;
            if (m.acts.enc_x[i] != x0[i] * m.acts.enc_x_drop[i]) exact_bad++;
        }
    }
    CHECK_INT(odd, 0);
    CHECK_INT(exact_bad, 0);
    double frac = (double)zeros / (double)total;   /* ~340 000 draws: σ ≈ 0.0008 */
    if (!(fabs(frac - p) < 0.01))
        check_fail(__FILE__, __LINE__, "dropped fraction %.4f, expected %.2f", frac, p);
    /* E[x ⊙ mask] = x: the regression slope of the mean on x0 is 1 */
    double xy = 0, xx = 0, dev = 0;
    for (size_t i = 0; i < nx; i++) { xy += mean[i] * x0[i]; xx += (double)x0[i] * x0[i]; }
    for (size_t i = 0; i < nx; i++) dev += fabs(mean[i] - x0[i]);
    if (!(fabs(xy / xx - 1.0) < 0.03))
        check_fail(__FILE__, __LINE__, "mean of dropped embeddings / undropped = %.4f, expected 1", xy / xx);
    CHECK(dev / nx < 0.15 * sqrt(xx / nx));
    /* the same (seed, step) gives the same masks; another step other masks */
    model_dropout_seed(&m, 1, 3);
    REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
    size_t nl = (size_t)2 * 4 * TINY.vocab_size;
    float *l1 = malloc(nl * sizeof(float));
    REQUIRE(l1 != NULL);
    memcpy(l1, m.acts.logits, nl * sizeof(float));
    model_dropout_seed(&m, 1, 3);
    REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
    CHECK(memcmp(l1, m.acts.logits, nl * sizeof(float)) == 0);
    model_dropout_seed(&m, 1, 4);
    REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
    CHECK(memcmp(l1, m.acts.logits, nl * sizeof(float)) != 0);
    free(l1);
    free(mean);
    model_free(&m);
}

/* Inference never drops: with the training flag off a model with P = 0.3 gives the
 * logits and gradients of P = 0, bit for bit, and keeps no masks.  Training with
 * P = 0 gives them too, except that a training forward leaves the pad rows out of
 * its products (pad_rows.c), so the pad rows of its logits are 0, and the products
 * then have fewer rows: a BLAS may round a row differently by how many rows share
 * the product (OpenBLAS 0.3.21's Haswell kernels do, on an AMD EPYC with AVX-512),
 * so the whole test runs twice: with the plain loops (every row computed alone)
 * bit for bit, then with BLAS, where training agrees to float rounding.
 * Training with P > 0 changes the logits. */
TEST(model_dropout_off_is_identical) {
    int had_blas = tensor_blas_enabled();
    for (int pass = 0; pass < 2 * (had_blas + 1); pass++) {
        int blas = pass / 2, pre = pass % 2;
        tensor_set_blas(blas);
        ModelConfig cfg = TINY;
        cfg.prenorm = pre;
        Model m;
        REQUIRE(model_init_random(&m, &cfg, 23) == 0);
        perturb(&m, 6);
        int tg[2 * 4] = { 5, 6, 7, 3, 9, 3, 0, 0 };
        size_t nl = (size_t)2 * 4 * cfg.vocab_size;
        float *l0 = malloc(nl * sizeof(float)), *g0 = malloc(m.num_params * sizeof(float));
        REQUIRE(l0 && g0);
        REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
        REQUIRE(model_zero_grad(&m) == 0);
        float loss0 = model_backward(&m, tg, 0.0f);
        memcpy(l0, m.acts.logits, nl * sizeof(float));
        memcpy(g0, m.grads_memory, m.num_params * sizeof(float));
        for (int variant = 0; variant < 2; variant++) {
            /* 0: P = 0.3, training off;  1: P = 0, training on */
            m.dropout = variant ? 0.0f : 0.3f;
            m.training = variant;
            model_dropout_seed(&m, 9, 1);
            REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
            CHECK(m.acts.enc_x_drop == NULL && m.acts.dec_x_drop == NULL && m.acts.enc_self.drop == NULL &&
                  m.acts.dec_cross.drop == NULL && m.acts.dec_ffn.drop == NULL);
            REQUIRE(model_zero_grad(&m) == 0);
            float loss = model_backward(&m, tg, 0.0f);
            int exact = !variant || !blas;
            if (exact) CHECK(memcmp(&loss, &loss0, sizeof loss) == 0);
            else CHECK_NEAR(loss, loss0, 1e-6 * fabs(loss0));
            for (int b = 0; b < 2; b++)
                for (int t = 0; t < 4; t++) {
                    size_t o = ((size_t)b * 4 + t) * cfg.vocab_size;
                    if (!variant || t < TGT_LEN[b]) {
                        if (exact) CHECK(memcmp(l0 + o, m.acts.logits + o, cfg.vocab_size * sizeof(float)) == 0);
                        else CHECK_CLOSE("training logits", m.acts.logits + o, l0 + o, cfg.vocab_size, 1e-6, 1e-5);
                    } else {
                        for (int v = 0; v < cfg.vocab_size; v++) CHECK(m.acts.logits[o + v] == 0.0f);
                    }
                }
            if (exact) CHECK(memcmp(g0, m.grads_memory, m.num_params * sizeof(float)) == 0);
            else CHECK_CLOSE("training gradients", m.grads_memory, g0, (int)m.num_params, 1e-6, 1e-4);
        }
        m.dropout = 0.3f;
        m.training = 1;
        model_dropout_seed(&m, 9, 1);
        REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
        CHECK(memcmp(l0, m.acts.logits, nl * sizeof(float)) != 0);
        /* back to inference after a dropped forward: the P = 0 logits again */
        m.training = 0;
        REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
        CHECK(memcmp(l0, m.acts.logits, nl * sizeof(float)) == 0);
        /* a rate of 1 or more is refused */
        m.training = 1;
        m.dropout = 1.0f;
        CHECK(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == -1);
        CHECK(strstr(m.err, "dropout") != NULL);
        free(l0); free(g0);
        model_free(&m);
    }
    tensor_set_blas(had_blas);
}

/* ------------------------------------------- attention supervision (aux loss) */

/* Targets of TINY's batch (S 5, T 4): encoder self-attention, one-hot
 * pronoun → antecedent rows; cross-attention, uniform over gold source words per
 * decoder row (row t predicts y_t), unaligned rows all zero. */
static void sup_targets(float *enc_t /* (2,5,5) */, float *cross_t /* (2,4,5) */) {
    memset(enc_t, 0, sizeof(float) * 2 * 5 * 5);
    memset(cross_t, 0, sizeof(float) * 2 * 4 * 5);
    enc_t[(0 * 5 + 3) * 5 + 1] = 1.0f;               /* item 0: query 3 → key 1 */
    enc_t[(1 * 5 + 2) * 5 + 0] = 1.0f;               /* item 1: query 2 → key 0 */
    cross_t[(0 * 4 + 0) * 5 + 0] = 0.5f;             /* item 0, row 0 → {0, 1}  */
    cross_t[(0 * 4 + 0) * 5 + 1] = 0.5f;
    cross_t[(0 * 4 + 1) * 5 + 2] = 1.0f;             /* row 1 → 2; row 2 none   */
    cross_t[(0 * 4 + 3) * 5 + 4] = 1.0f;             /* row 3 → <eos>-like 4    */
    cross_t[(1 * 4 + 0) * 5 + 1] = 1.0f;             /* item 1, row 0 → 1       */
}

/* CE + Σ λ·aux at the current parameters; aux_only: Σ λ·aux alone. */
static double sup_loss_at(Model *m, const int *targets, float eps, ModelAttnSupervision *sup, int n,
                          int aux_only) {
    if (model_forward(m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2})) return NAN;
    double l = aux_only ? 0.0 : model_loss(m, targets, eps);
    for (int i = 0; i < n; i++) l += sup[i].weight * model_attn_sup_loss(m, &sup[i]);
    return l;
}

/* model_backward_sup against central differences of CE + λ·aux, and the aux part
 * alone (grad with supervision − grad without) against central differences of
 * λ·aux: it must reach the layers BELOW the supervised heads. */
static void gradcheck_sup(const ModelConfig *cfg, float eps, const char *label) {
    Model m;
    if (model_init_random(&m, cfg, 17)) { check_fail(__FILE__, __LINE__, "%s: init", label); return; }
    perturb(&m, 9);   /* the plain gradcheck's point: no ReLU kink within ±h of a sample */
    int targets[2 * 4] = { 5, 6, 7, 3, 9, 3, 0, 0 };
    float enc_t[50], cross_t[40];
    sup_targets(enc_t, cross_t);
    ModelAttnSupervision sup[2] = {
        { MODEL_ATTN_ENC_SELF, 1, 1, 0.7f, enc_t, 0, 0, 0 },  /* encoder.1.self head 1 */
        { MODEL_ATTN_CROSS, 0, 0, 0.4f, cross_t, 0, 0, 0 },   /* decoder.0.cross head 0 */
    };
    float *g_ce = malloc(m.num_params * sizeof(float));
    REQUIRE(g_ce);
    if (model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) || model_zero_grad(&m)) {
        check_fail(__FILE__, __LINE__, "%s: forward: %s", label, m.err);
        free(g_ce); model_free(&m);
        return;
    }
    float ce = model_backward(&m, targets, eps);
    memcpy(g_ce, m.grads_memory, m.num_params * sizeof(float));
    REQUIRE(model_zero_grad(&m) == 0);
    float ce2 = model_backward_sup(&m, targets, eps, sup, 2);
    CHECK_NEAR(ce2, ce, 1e-6);              /* returns the cross-entropy alone */
    CHECK_INT(sup[0].rows, 2);
    CHECK_INT(sup[1].rows, 4);
    CHECK(isfinite(sup[0].loss) && sup[0].loss > 0 && isfinite(sup[1].loss) && sup[1].loss > 0);
    ModelParam tab[MODEL_MAX_TENSORS], gtab[MODEL_MAX_TENSORS];
    int nt = model_param_table(cfg, m.params_memory, tab, MODEL_MAX_TENSORS);
    model_param_table(cfg, m.grads_memory, gtab, MODEL_MAX_TENSORS);
    /* every tensor that feeds encoder.1.self or decoder.0.cross gets aux gradient;
     * the output projection does not */
    static const char *const fed[] = { "tok_emb", "enc.self.wq", "enc.self.wk", "enc.self.wv", "enc.self.wo",
                                       "enc.ffn.w1", "enc.ln1.w", "dec.self.wq", "dec.self.wv",
                                       "dec.cross.wq", "dec.cross.wk", "dec.ln1.w" };
    for (int t = 0; t < nt; t++) {
        double aux_abs = 0;
        for (size_t i = 0; i < gtab[t].numel; i++)
            aux_abs += fabs(gtab[t].ptr[i] - g_ce[gtab[t].offset + i]);
        int must = 0;
        for (size_t k = 0; k < sizeof fed / sizeof *fed; k++) must |= !strcmp(tab[t].name, fed[k]);
        if (must && !(aux_abs > 1e-6))
            check_fail(__FILE__, __LINE__, "%s: the aux loss gives no gradient to %s", label, tab[t].name);
        if (!strncmp(tab[t].name, "out.", 4) && aux_abs != 0.0)
            check_fail(__FILE__, __LINE__, "%s: the aux loss reaches %s (%g)", label, tab[t].name, aux_abs);
    }
    const float h = 2e-3f;
    int checked = 0, bad = 0, nonzero_aux = 0;
    uint64_t s = 7;
    for (int t = 0; t < nt; t++)
        for (int k = 0; k < 6; k++) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            size_t i = (size_t)(s % tab[t].numel);
            if (!strcmp(tab[t].name, "tok_emb")) {
                static const int used[] = { 4, 5, 6, 9, 2, 10 };
                i = (size_t)used[k] * cfg->d_model + (size_t)(s >> 20) % cfg->d_model;
            }
            for (int aux_only = 0; aux_only < 2; aux_only++) {
                float keep = tab[t].ptr[i];
                tab[t].ptr[i] = keep + h;
                double lp = sup_loss_at(&m, targets, eps, sup, 2, aux_only);
                tab[t].ptr[i] = keep - h;
                double lm = sup_loss_at(&m, targets, eps, sup, 2, aux_only);
                tab[t].ptr[i] = keep;
                double fd = (lp - lm) / (2.0 * h);
                double an = aux_only ? gtab[t].ptr[i] - g_ce[gtab[t].offset + i] : gtab[t].ptr[i];
                checked++;
                if (aux_only && fabs(an) > 1e-4) nonzero_aux++;
                if (!(fabs(fd - an) <= 2e-4 + 2e-2 * fmax(fabs(fd), fabs(an)))) {
                    if (bad++ < 10)
                        check_fail(__FILE__, __LINE__, "%s: d %s / d %s[%zu]: backward %.6g, central difference %.6g",
                                   label, aux_only ? "(λ·aux)" : "(CE + λ·aux)", tab[t].name, i, an, fd);
                }
            }
        }
    if (bad) check_fail(__FILE__, __LINE__, "%s: %d of %d gradient samples differ", label, bad, checked);
    CHECK(checked == 12 * nt);
    CHECK(nonzero_aux >= 20);    /* the aux samples were not all trivially zero */
    free(g_ce);
    model_free(&m);
}

TEST(model_gradcheck_attention_supervision_postnorm) {
    ModelConfig c = TINY;
    gradcheck_sup(&c, 0.0f, "supervised encoder.1.self h1 + decoder.0.cross h0, post-norm");
}

TEST(model_gradcheck_attention_supervision_prenorm) {
    ModelConfig c = TINY;
    c.prenorm = 1;
    gradcheck_sup(&c, 0.05f, "supervised encoder.1.self h1 + decoder.0.cross h0, pre-norm");
}

/* Bad supervision is refused with a message, not a crash. */
TEST(model_attention_supervision_errors) {
    Model m;
    REQUIRE(model_init_random(&m, &TINY, 4) == 0);
    int targets[8] = { 5, 6, 7, 3, 9, 3, 0, 0 };
    float enc_t[50], cross_t[40];
    sup_targets(enc_t, cross_t);
    REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
    REQUIRE(model_zero_grad(&m) == 0);
    ModelAttnSupervision s = { MODEL_ATTN_ENC_SELF, 2, 0, 1.0f, enc_t, 0, 0, 0 };   /* layer 2 of 2 */
    CHECK(isnan(model_backward_sup(&m, targets, 0, &s, 1)) && strstr(m.err, "out of range"));
    s.layer = 0;
    enc_t[(1 * 5 + 2) * 5 + 4] = 0.5f;       /* item 1 has 3 source tokens: key 4 is padding */
    CHECK(isnan(model_attn_sup_loss(&m, &s)) && strstr(m.err, "masked"));
    sup_targets(enc_t, cross_t);
    ModelAttnSupervision two[2] = { s, s };
    CHECK(isnan(model_backward_sup(&m, targets, 0, two, 2)) && strstr(m.err, "twice"));
    /* a perfectly matched one-hot target has loss -log(1) = 0 only if att = 1: here > 0 */
    CHECK(model_attn_sup_loss(&m, &s) > 0.0f);
    model_free(&m);
}

/* Gradients accumulate across calls (zero_grad resets) and do not depend on
 * the pad positions' token ids. */
TEST(model_backward_accumulates) {
    Model m;
    REQUIRE(model_init_random(&m, &TINY, 4) == 0);
    int targets[8] = { 5, 6, 7, 3, 9, 3, 0, 0 };
    REQUIRE(model_forward(&m, &(ModelBatch){SRC, SRC_LEN, 5, TGT, TGT_LEN, 4, 2}) == 0);
    REQUIRE(model_zero_grad(&m) == 0);
    float l1 = model_backward(&m, targets, 0);
    float *once = malloc(m.num_params * sizeof(float));
    memcpy(once, m.grads_memory, m.num_params * sizeof(float));
    float l2 = model_backward(&m, targets, 0);
    CHECK_NEAR(l1, l2, 0);
    for (size_t i = 0; i < m.num_params; i++) once[i] *= 2;
    CHECK_CLOSE("two backward calls add up", m.grads_memory, once, (int)m.num_params, 1e-7, 1e-6);
    for (size_t i = 0; i < m.num_params; i++) once[i] /= 2;
    int src2[10], tgt2[8], targets2[8];
    memcpy(src2, SRC, sizeof src2); memcpy(tgt2, TGT, sizeof tgt2); memcpy(targets2, targets, sizeof targets2);
    src2[8] = 7; tgt2[7] = 8; targets2[6] = 1;
    REQUIRE(model_forward(&m, &(ModelBatch){src2, SRC_LEN, 5, tgt2, TGT_LEN, 4, 2}) == 0);
    REQUIRE(model_zero_grad(&m) == 0);
    model_backward(&m, targets2, 0);
    /* everything but the pad tokens' own embedding rows is identical */
    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(&TINY, m.grads_memory, tab, MODEL_MAX_TENSORS);
    for (int t = 1; t < nt; t++)
        CHECK_CLOSE(tab[t].name, tab[t].ptr, once + tab[t].offset, (int)tab[t].numel, 1e-6, 1e-4);
    int bad_target[8] = { 5, 6, 7, 3, 9, 11, 0, 0 };
    CHECK(isnan(model_backward(&m, bad_target, 0)) && strstr(m.err, "target id 11"));
    free(once);
    model_free(&m);
}

/* ------------------------------------------------------------- kernels */

static void fill_test(float *x, size_t n, uint64_t seed, int with_zeros) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 7;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        x[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2 - 1);
        if (with_zeros && i % 3 == 0) x[i] = 0.0f;          /* like relu outputs */
    }
}

/* matmul_forward / matmul_backward (BLAS when built with it, and the plain loops)
 * against a double-precision triple loop, on odd sizes. */
TEST(model_kernels_matmul) {
    const int sizes[][3] = { { 1, 1, 1 }, { 7, 13, 5 }, { 33, 17, 65 }, { 64, 128, 96 } };
    for (int use = 0; use < 2; use++) {
        int saved = tensor_blas_enabled();
        if (!use) tensor_set_blas(0);
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            int N = sizes[k][0], K = sizes[k][1], M = sizes[k][2];
            float *x = malloc(sizeof(float) * N * K), *w = malloc(sizeof(float) * K * M), *b = malloc(sizeof(float) * M);
            float *y = malloc(sizeof(float) * N * M), *want = malloc(sizeof(float) * N * M);
            float *dy = malloc(sizeof(float) * N * M), *dx = malloc(sizeof(float) * N * K), *dw = malloc(sizeof(float) * K * M);
            float *db = malloc(sizeof(float) * M), *wdx = malloc(sizeof(float) * N * K), *wdw = malloc(sizeof(float) * K * M);
            float *wdb = malloc(sizeof(float) * M), *scratch = malloc(sizeof(float) * K * M);
            fill_test(x, (size_t)N * K, 1 + k, 1); fill_test(w, (size_t)K * M, 2 + k, 0);
            fill_test(b, (size_t)M, 3 + k, 0); fill_test(dy, (size_t)N * M, 4 + k, 0);
            for (int i = 0; i < N; i++)
                for (int j = 0; j < M; j++) {
                    double acc = b[j];
                    for (int t = 0; t < K; t++) acc += (double)x[i * K + t] * w[t * M + j];
                    want[i * M + j] = (float)acc;
                }
            /* gradients start at 0.5 to check they accumulate */
            for (int i = 0; i < N * K; i++) { dx[i] = 0.5f; wdx[i] = 0.5f; }
            for (int i = 0; i < K * M; i++) { dw[i] = 0.5f; wdw[i] = 0.5f; }
            for (int j = 0; j < M; j++) { db[j] = 0.5f; wdb[j] = 0.5f; }
            for (int i = 0; i < N; i++)
                for (int t = 0; t < K; t++) {
                    double acc = 0;
                    for (int j = 0; j < M; j++) acc += (double)dy[i * M + j] * w[t * M + j];
                    wdx[i * K + t] += (float)acc;
                }
            for (int t = 0; t < K; t++)
                for (int j = 0; j < M; j++) {
                    double acc = 0;
                    for (int i = 0; i < N; i++) acc += (double)x[i * K + t] * dy[i * M + j];
                    wdw[t * M + j] += (float)acc;
                }
            for (int j = 0; j < M; j++) for (int i = 0; i < N; i++) wdb[j] += dy[i * M + j];
            matmul_forward(y, x, w, b, N, K, M);
            matmul_backward(dx, dw, db, scratch, dy, x, w, N, K, M);
            char what[64];
            snprintf(what, sizeof what, "%s matmul %dx%dx%d", use ? "blas" : "plain", N, K, M);
            CHECK_CLOSE(what, y, want, N * M, 1e-5, 1e-5);
            CHECK_CLOSE("dinp", dx, wdx, N * K, 1e-5, 1e-5);
            CHECK_CLOSE("dw", dw, wdw, K * M, 1e-5, 1e-5);
            CHECK_CLOSE("dbias", db, wdb, M, 1e-5, 1e-5);
            free(x); free(w); free(b); free(y); free(want); free(dy); free(dx); free(dw); free(db);
            free(wdx); free(wdw); free(wdb); free(scratch);
        }
        tensor_set_blas(saved);
    }
}

/* layernorm_forward against its formula; layernorm_backward against central
 * differences of  L = Σ dout ⊙ LN(x). */
TEST(model_kernels_layernorm) {
    enum { N = 3, C = 10 };
    float x[N * C], w[C], b[C], y[N * C], mean[N], rstd[N], dout[N * C];
    fill_test(x, N * C, 11, 0); fill_test(w, C, 12, 0); fill_test(b, C, 13, 0); fill_test(dout, N * C, 14, 0);
    for (int i = 0; i < N * C; i++) x[i] = 3 * x[i] + 1;
    layernorm_forward(y, mean, rstd, x, w, b, N, C);
    for (int i = 0; i < N; i++) {
        double m = 0, v = 0;
        for (int c = 0; c < C; c++) m += x[i * C + c];
        m /= C;
        for (int c = 0; c < C; c++) v += (x[i * C + c] - m) * (x[i * C + c] - m);
        v /= C;
        for (int c = 0; c < C; c++)
            CHECK_NEAR(y[i * C + c], (x[i * C + c] - m) / sqrt(v + 1e-5) * w[c] + b[c], 1e-5);
    }
    float dx[N * C] = { 0 }, dw[C] = { 0 }, db[C] = { 0 };
    layernorm_backward(dx, dw, db, dout, x, w, mean, rstd, N, C);
    for (int k = 0; k < N * C; k++) {
        double h = 1e-3, lp = 0, lm = 0;
        float keep = x[k], yy[N * C], mm[N], rr[N];
        x[k] = keep + (float)h;
        layernorm_forward(yy, mm, rr, x, w, b, N, C);
        for (int i = 0; i < N * C; i++) lp += (double)dout[i] * yy[i];
        x[k] = keep - (float)h;
        layernorm_forward(yy, mm, rr, x, w, b, N, C);
        for (int i = 0; i < N * C; i++) lm += (double)dout[i] * yy[i];
        x[k] = keep;
        CHECK_NEAR(dx[k], (lp - lm) / (2 * h), 2e-3);
    }
    for (int c = 0; c < C; c++) {
        double sw = 0, sb = 0;
        for (int i = 0; i < N; i++) {
            sw += dout[i * C + c] * (y[i * C + c] - b[c]) / w[c];
            sb += dout[i * C + c];
        }
        CHECK_NEAR(dw[c], sw, 1e-4);
        CHECK_NEAR(db[c], sb, 1e-5);
    }
}

/* attention_head_backward against attention_head_backward_ref (the plain loops):
 * one head's columns inside wider rows, a causal+padding mask (masked cells A = 0),
 * with and without a supervision target, a tile too big for the stack.  The other
 * heads' columns of dq, dk, dv must stay untouched. */
static void head_backward_case(int Tq, int Tk, int D, int supervised, uint64_t seed) {
    int ld = 2 * D + 3;
    size_t nq = (size_t)Tq * ld, nk = (size_t)Tk * ld, na = (size_t)Tq * Tk;
    float *q = malloc(nq * 4), *dy = malloc(nq * 4), *k = malloc(nk * 4), *v = malloc(nk * 4);
    float *A = malloc(na * 4), *t = calloc(na, 4), *dA1 = malloc(na * 4), *dA2 = malloc(na * 4);
    float *g1 = malloc((2 * nq + 4 * nk) * 4), *g2 = malloc((2 * nq + 4 * nk) * 4);
    REQUIRE(q && dy && k && v && A && t && dA1 && dA2 && g1 && g2);
    fill_test(q, nq, seed, 0); fill_test(dy, nq, seed + 1, 0);
    fill_test(k, nk, seed + 2, 0); fill_test(v, nk, seed + 3, 0);
    fill_test(g1, 2 * nq + 4 * nk, seed + 4, 0);
    memcpy(g2, g1, (2 * nq + 4 * nk) * 4);
    for (int i = 0; i < Tq; i++) {                  /* softmax rows over keys j <= i, j < Tk-1 */
        double sum = 0;
        for (int j = 0; j < Tk; j++) {
            int ok = j <= i && j < Tk - 1;
            A[(size_t)i * Tk + j] = ok ? (float)exp(q[(size_t)i * ld + j % D]) : 0.0f;
            sum += A[(size_t)i * Tk + j];
        }
        for (int j = 0; j < Tk; j++) A[(size_t)i * Tk + j] = (float)(A[(size_t)i * Tk + j] / sum);
        if (supervised && i % 2 == 0) t[(size_t)i * Tk] = 1.0f;      /* gold key 0 */
    }
    float *dq1 = g1 + D, *dk1 = g1 + nq + D, *dv1 = g1 + nq + nk + D;
    float *dq2 = g2 + D, *dk2 = g2 + nq + D, *dv2 = g2 + nq + nk + D;
    float scale = 1.0f / sqrtf((float)D), cs = supervised ? 0.25f : 0.0f;
    AttnHeadGrad hg = { .q = q + D, .k = k + D, .v = v + D, .A = A, .dy = dy + D, .t = supervised ? t : NULL,
                        .cs = cs, .scale = scale, .Tq = Tq, .Tk = Tk, .D = D, .ld = ld };
    attention_head_backward_ref(dq1, dk1, dv1, dA1, &hg);
    attention_head_backward(dq2, dk2, dv2, dA2, &hg);
    CHECK_CLOSE("head backward dq, dk, dv and the other columns", g2, g1, (int)(2 * nq + 4 * nk), 1e-6, 1e-5);
    double norm = 0;
    for (size_t i = 0; i < 2 * nq + 4 * nk; i++) norm += fabs(g1[i]);
    CHECK(norm > 0);
    free(q); free(dy); free(k); free(v); free(A); free(t); free(dA1); free(dA2); free(g1); free(g2);
}

TEST(model_kernels_attention_head_backward) {
    head_backward_case(14, 14, 24, 0, 21);    /* decoder self-attention shape */
    head_backward_case(13, 14, 32, 1, 22);    /* cross-attention, supervised   */
    head_backward_case(3, 5, 1, 1, 23);
    head_backward_case(70, 90, 64, 0, 24);    /* tiles on the heap             */
}

/* exp_shifted (the loss's vectorised exp) against expf over its whole range. */
TEST(model_kernels_exp_shifted) {
    enum { N = 4001 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = -90.0f + 90.0f * (float)i / (N - 1) + 3.0f;   /* x − 3 in [−90, 0] */
    exp_shifted(y, x, 3.0f, N);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        float v = x[i] - 3.0f;
        if (v < -87.0f) { CHECK(y[i] == 0.0f); continue; }   /* underflow: 0, as a masked score needs */
        double want = (double)expf(v);
        double rel = fabs(y[i] - want) / want;
        if (rel > worst) worst = rel;
    }
    CHECK(worst < 4 * 1.2e-7);          /* within ~2 ulp of expf */
    CHECK(y[N - 1] == 1.0f);            /* exp(0) exactly */
    float z[5] = {0.0f, -INFINITY, -10000.0f, -1.0f, -87.5f};
    exp_shifted(z, z, 0.0f, 5);         /* in place */
    CHECK(z[0] == 1.0f && z[1] == 0.0f && z[2] == 0.0f && z[4] == 0.0f);
    CHECK(fabsf(z[3] - expf(-1.0f)) <= 2 * 1.2e-7f * expf(-1.0f));
    /* a NaN stays NaN in the vector lanes and in the one-lane tail (a model whose
     * weights overflowed: the trace's finite check names it); nothing past the
     * domain is undefined behaviour (the fuzzer's llama2c input with NaN scores) */
    float q[6] = {NAN, -1.0f, 100.0f, -2.0f, 3e38f, NAN};
    exp_shifted(q, q, 0.0f, 6);
    CHECK(isnan(q[0]) && isnan(q[5]) && q[1] > 0.36f && q[1] < 0.37f && isfinite(q[2]) && isfinite(q[4]));
    /* the machine's widest build (8 lanes with AVX2) and the 4-lane one give the
     * same bits, at every length's tail (n % 8 of 0..7) */
    float p8[N], p4[N];
    for (int n = N - 8; n <= N; n++) {
        exp_shifted(p8, x, 3.0f, n);
        exp_shifted_plain(p4, x, 3.0f, n);
        CHECK(memcmp(p8, p4, (size_t)n * sizeof *p8) == 0);
    }
}

/* model_train_step with a twin and two threads (each half of the batch on its own
 * thread, gradients added) against model_forward + model_backward_sup on the whole
 * batch: the same cross-entropy, supervision losses and rows, and gradients up to
 * the order of float sums; every architecture, with smoothing and supervision. */
static void split_case(ModelArch arch, int prenorm) {
    enum { B = 5, S = 6, T = 5 };
    ModelConfig cfg = TINY;
    cfg.arch = arch;
    cfg.prenorm = prenorm;
    if (arch == MODEL_ENCODER_ONLY) cfg.n_dec_layers = 0;
    if (arch == MODEL_DECODER_ONLY) cfg.n_enc_layers = 0;
    const int sl[B] = { 6, 3, 5, 2, 4 }, tl[B] = { 5, 2, 4, 3, 1 };
    int src[B * S], tgt[B * T], y[B * S];    /* targets (B, S) for encoder-only */
    float enc_t[B * S * S] = { 0 }, cross_t[B * T * S] = { 0 };
    for (int i = 0; i < B * S; i++) src[i] = 3 + (i * 7) % 8;
    for (int i = 0; i < B * T; i++) tgt[i] = 3 + (i * 5) % 8;
    for (int i = 0; i < B * S; i++) y[i] = 1 + (i * 3) % 10;
    for (int b = 0; b < B; b++) {
        enc_t[((size_t)b * S + sl[b] - 1) * S + b % sl[b]] = 1.0f;     /* last source word → one key */
        cross_t[((size_t)b * T + 0) * S + 0] = 0.5f;                    /* first target row → keys 0, last */
        cross_t[((size_t)b * T + 0) * S + sl[b] - 1] += 0.5f;
    }
    static float dec_t[B * T * T];                                    /* decoder-only: (B, T, T) */
    memset(dec_t, 0, sizeof dec_t);
    for (int b = 0; b < B; b++) dec_t[((size_t)b * T + tl[b] - 1) * T + 0] = 1.0f;   /* last row → key 0 */
    int dec_only = arch == MODEL_DECODER_ONLY;
    ModelAttnSupervision sup[2] = {
        { dec_only ? MODEL_ATTN_DEC_SELF : MODEL_ATTN_ENC_SELF, 1, 1, 0.7f, dec_only ? dec_t : enc_t, 0, 0, 0 },
        { MODEL_ATTN_CROSS, 0, 0, 0.4f, cross_t, 0, 0, 0 } };
    int n_sup = arch == MODEL_ENC_DEC ? 2 : 1;
    Model m, twin;
    REQUIRE(model_init_random(&m, &cfg, 31) == 0);
    perturb(&m, 8);
    m.training = 1;
    REQUIRE(model_forward(&m, &(ModelBatch){src, sl, S, tgt, tl, T, B}) == 0);
    REQUIRE(model_zero_grad(&m) == 0);
    float loss0 = model_backward_sup(&m, y, 0.1f, sup, n_sup);
    if (isnan(loss0)) fprintf(stderr, "arch %d pre %d: %s\n", (int)arch, prenorm, m.err);
    REQUIRE(!isnan(loss0));
    float aux0[2] = { sup[0].loss, sup[1].loss };
    int rows0[2] = { sup[0].rows, sup[1].rows };
    float *g0 = malloc(m.num_params * sizeof(float));
    REQUIRE(g0);
    memcpy(g0, m.grads_memory, m.num_params * sizeof(float));

    REQUIRE(model_twin_init(&twin, &m) == 0);
    const ModelBatch batch = { .src = src, .src_len = sl, .S = S, .tgt = tgt, .tgt_len = tl, .T = T, .B = B };
    float *g2 = malloc(m.num_params * sizeof(float));
    REQUIRE(g2);
#ifdef _OPENMP
    int threads = omp_get_max_threads();
#endif
    for (int rep = 0; rep < 2; rep++) {   /* side by side (2 threads), then one after the other */
#ifdef _OPENMP
        omp_set_num_threads(rep ? 1 : 2);
#endif
        REQUIRE(model_zero_grad(&m) == 0);
        float loss = model_train_step(&m, &twin, &batch, y, 0.1f, sup, n_sup);
        CHECK(m.B > 0 && m.B < B);                 /* m ran one half only */
        CHECK_NEAR(loss, loss0, 1e-6);
        for (int i = 0; i < n_sup; i++) {
            CHECK(sup[i].rows == rows0[i]);
            CHECK_NEAR(sup[i].loss, aux0[i], 1e-6);
        }
        CHECK_CLOSE("two halves' gradients", m.grads_memory, g0, (int)m.num_params, 1e-7, 1e-5);
        if (rep == 0) memcpy(g2, m.grads_memory, m.num_params * sizeof(float));
        else CHECK(memcmp(g2, m.grads_memory, m.num_params * sizeof(float)) == 0);   /* the same bits */
    }
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    free(g2);
    /* a bad token in the second half: NAN and the twin's message in m->err */
    tgt[4 * T] = src[4 * S] = cfg.vocab_size + 3;
    m.err[0] = 0;
    float bad = model_train_step(&m, &twin, &batch, y, 0.1f, sup, n_sup);
    CHECK(isnan(bad) && m.err[0] != 0);
    CHECK(m.loss_count == 0 && twin.loss_count == 0);
    model_free(&twin);
    CHECK(m.params_memory != NULL);            /* the twin freed its own memory only */
    free(g0);
    model_free(&m);
}

TEST(model_train_step_two_halves_are_the_whole_batch) {
    split_case(MODEL_ENC_DEC, 0);
    split_case(MODEL_ENC_DEC, 1);
    split_case(MODEL_ENCODER_ONLY, 0);
    split_case(MODEL_DECODER_ONLY, 1);
}

/* sigmoid_vec against 1 / (1 + exp(−z)) in double, over both signs and the
 * tails where e^−z overflows float (σ → 0) or vanishes (σ → 1); in place. */
TEST(model_kernels_sigmoid_vec) {
    enum { N = 2003 };
    float z[N], y[N];
    for (int i = 0; i < N; i++) z[i] = -120.0f + 240.0f * (float)i / (N - 1);
    sigmoid_vec(y, z, N);
    double worst = 0;
    for (int i = 0; i < N; i++) {
        double want = 1.0 / (1.0 + exp(-(double)z[i]));
        if (want < 1e-37) { CHECK(y[i] >= 0.0f && y[i] < 1e-37f); continue; }
        double rel = fabs(y[i] - want) / want;
        if (rel > worst) worst = rel;
    }
    CHECK(worst < 6 * 1.2e-7);   /* a few ulp */
    float w[3] = {0.0f, 1000.0f, -1000.0f};
    sigmoid_vec(w, w, 3);
    CHECK(w[0] == 0.5f && w[1] == 1.0f && w[2] == 0.0f);
    float y4[N];   /* the widest build and the 4-lane one: the same bits */
    for (size_t n = N - 8; n <= N; n++) {
        sigmoid_vec(y, z, n);
        sigmoid_vec_plain(y4, z, n);
        CHECK(memcmp(y, y4, n * sizeof *y) == 0);
    }
}

/* Direct logit attribution (model_attrib.c) on every decoder the model can be,
 * post-norm and pre-norm, with random biases and LayerNorm parameters: at
 * every real position of a padded batch of 2, the parts (heads of both kinds,
 * MLPs, embedding, bias) add up to the forward pass's own logit, and a
 * decoder-only model has no cross share. */
TEST(model_attribution_parts_add_up_to_the_logit) {
    for (int arch = 0; arch < 2; arch++)
        for (int pre = 0; pre < 2; pre++) {
            ModelConfig cfg = TINY;
            cfg.prenorm = pre;
            if (arch) { cfg.arch = MODEL_DECODER_ONLY; cfg.n_enc_layers = 0; }
            Model m;
            REQUIRE(model_init_random(&m, &cfg, 41) == 0);
            perturb(&m, 5);
            REQUIRE(model_forward(&m, &(ModelBatch){arch ? NULL : SRC, arch ? NULL : SRC_LEN, arch ? 0 : 5, TGT, TGT_LEN,
                                                    4, 2}) == 0);
            float heads[2 * 2 * 2], mlp[2];
            ModelAttribution at = {.heads = heads, .mlp = mlp};
            char err[256];
            int bad = 0, cross = 0;
            for (int b = 0; b < 2; b++)
                for (int pos = 0; pos < TGT_LEN[b]; pos++) {
                    int token = (3 * pos + b + 1) % cfg.vocab_size;
                    REQUIRE(model_attribution(&m, b, pos, token, &at, err, sizeof err) == 0);
                    double sum = at.embedding + at.bias + mlp[0] + mlp[1];
                    for (int i = 0; i < 8; i++) sum += heads[i];
                    float logit = m.acts.logits[((size_t)b * 4 + pos) * cfg.vocab_size + token];
                    if (at.logit != logit || fabs(sum - logit) > 1e-4 * (1 + fabs(logit))) bad++;
                    for (int i = 4; i < 8; i++) cross += heads[i] != 0.0f;
                }
            CHECK(bad == 0);
            CHECK(arch ? cross == 0 : cross > 0);
            CHECK(model_attribution(&m, 1, 2, 0, &at, err, sizeof err) == -1);   /* a pad position */
            model_free(&m);
        }
}
