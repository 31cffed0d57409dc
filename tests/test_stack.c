/* test_stack.c — the one Transformer stack (family/stack.h): knocking heads
 * out against an independent computation, and sizes from a file that must
 * not be trusted.
 *
 * Knock-out: zeroing head h's output before W_O is the same as zeroing the
 * part of W_O that reads head h (its rows in GPT-2's (in, out) c_proj, its
 * columns in nn.Linear's (out, in) o_proj / output.dense).  So every model
 * here is written twice, the second time with those weights zeroed, and the
 * first model with the heads knocked out must give the second's logits (and,
 * for decoders, the same through the KV-cache step), while without the
 * knock-out it must not (the test could not fail otherwise).  Models: a
 * random llama2.c file (grouped-query attention), random GPT-2 (pre-norm,
 * fused q|k|v, (in, out) weights) and BERT (post-norm, masked-LM head)
 * folders written here. */
#include "check.h"
#include "core/rng.h"
#include "core/safetensors.h"
#include "family/hf_file.h"
#include "family/kvcache.h"
#include "family/llama2c.h"
#include "family/stack.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The heads knocked out in every model here: (layer 0, head 1), (layer 1, head 3). */
static const int KO[2][2] = {{0, 1}, {1, 3}};

/* A llama2.c file (C 16, F 24, L 2, H 4, Hkv 2, V 40, P 32); zero_ko: wo's
 * columns of the knocked-out heads zeroed. */
static int write_llama2c(const char *path, int zero_ko) {
    int32_t h[7] = {16, 24, 2, 4, 2, 40, 32};
    long C = 16, F = 24, L = 2, V = 40, P = 32, KD = 8, D = 4;
    long wo = V * C + L * C + L * C * C + 2 * L * KD * C;   /* where wo (L, C, C) starts */
    long n = wo + L * C * C + L * C + 3 * L * F * C + C + P * D;
    FILE *fp = fopen(path, "wb");
    if (!fp) return -1;
    fwrite(h, sizeof h, 1, fp);
    Rng r = rng_from_state(11);
    for (long i = 0; i < n; i++) {
        float v = (float)(rng_normal(&r) * 0.5);
        long k = i - wo;   /* wo[l][row][col], col = head·D + d */
        for (int j = 0; zero_ko && j < 2 && k >= 0 && k < L * C * C; j++)
            if (k / (C * C) == KO[j][0] && (k % C) / D == KO[j][1]) v = 0;
        fwrite(&v, sizeof v, 1, fp);
    }
    return fclose(fp);
}

/* ---- GPT-2 and BERT folders: random tensors by name ---- */

#define C_ 16
#define H_ 4
#define D_ 4
#define F_ 32
#define V_ 50
#define P_ 16

typedef struct {
    char name[96];
    long d0, d1;      /* d1 0: a vector */
    int kind;         /* 0 random, 1 ones (a norm's weight), 2 the output projection whose heads are zeroed */
} Tensor;

/* Writes dir/config.json (text) and dir/model.safetensors of the n tensors,
 * random (seeded), the knocked-out heads' part of kind-2 tensors zeroed when
 * zero_ko; rows_are_heads: the heads index a kind-2 tensor's rows (GPT-2's
 * (in, out)) rather than its columns. */
static int write_folder(const char *dir, const char *config, const Tensor *t, int n, int zero_ko, int rows_are_heads) {
    char path[4200], err[256];
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *fp = fopen(path, "w");
    if (!fp) return -1;
    fputs(config, fp);
    fclose(fp);
    StWriteTensor *w = calloc((size_t)n, sizeof *w);
    float **data = calloc((size_t)n, sizeof *data);
    Rng r = rng_from_state(5);
    int rc = w && data ? 0 : -1;
    for (int i = 0; i < n && !rc; i++) {
        long cnt = t[i].d0 * (t[i].d1 ? t[i].d1 : 1);
        if (!(data[i] = malloc((size_t)cnt * sizeof **data))) { rc = -1; break; }
        int layer = -1;
        sscanf(strpbrk(t[i].name, "0123456789") ? strpbrk(t[i].name, "0123456789") : "", "%d", &layer);
        for (long k = 0; k < cnt; k++) {
            float v = t[i].kind == 1 ? (float)(1 + 0.1 * rng_normal(&r)) : (float)(rng_normal(&r) * 0.3);
            long head = t[i].kind != 2 ? -1 : (rows_are_heads ? k / t[i].d1 : k % t[i].d1) / D_;
            for (int j = 0; zero_ko && t[i].kind == 2 && j < 2; j++)
                if (KO[j][0] == layer && KO[j][1] == head) v = 0;
            data[i][k] = v;
        }
        w[i] = (StWriteTensor){.name = t[i].name, .dtype = "F32", .ndim = t[i].d1 ? 2 : 1,
                               .shape = {t[i].d0, t[i].d1}, .data = data[i]};
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (!rc) rc = safetensors_write(path, w, n, NULL, err, sizeof err);
    for (int i = 0; data && i < n; i++) free(data[i]);
    free(data); free(w);
    return rc;
}

static int gpt2_tensors(Tensor *t) {
    int n = 0;
    t[n++] = (Tensor){"transformer.wte.weight", V_, C_, 0};
    t[n++] = (Tensor){"transformer.wpe.weight", P_, C_, 0};
    for (int l = 0; l < 2; l++) {
        const struct { const char *s; long d0, d1; int kind; } p[] = {
            {"ln_1.weight", C_, 0, 1}, {"ln_1.bias", C_, 0, 0}, {"attn.c_attn.weight", C_, 3 * C_, 0},
            {"attn.c_attn.bias", 3 * C_, 0, 0}, {"attn.c_proj.weight", C_, C_, 2}, {"attn.c_proj.bias", C_, 0, 0},
            {"ln_2.weight", C_, 0, 1}, {"ln_2.bias", C_, 0, 0}, {"mlp.c_fc.weight", C_, F_, 0},
            {"mlp.c_fc.bias", F_, 0, 0}, {"mlp.c_proj.weight", F_, C_, 0}, {"mlp.c_proj.bias", C_, 0, 0}};
        for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
            t[n] = (Tensor){"", p[i].d0, p[i].d1, p[i].kind};
            snprintf(t[n++].name, sizeof t[0].name, "transformer.h.%d.%s", l, p[i].s);
        }
    }
    t[n++] = (Tensor){"transformer.ln_f.weight", C_, 0, 1};
    t[n++] = (Tensor){"transformer.ln_f.bias", C_, 0, 0};
    return n;
}

static int bert_tensors(Tensor *t) {
    int n = 0;
    t[n++] = (Tensor){"bert.embeddings.word_embeddings.weight", V_, C_, 0};
    t[n++] = (Tensor){"bert.embeddings.position_embeddings.weight", P_, C_, 0};
    t[n++] = (Tensor){"bert.embeddings.token_type_embeddings.weight", 2, C_, 0};
    t[n++] = (Tensor){"bert.embeddings.LayerNorm.weight", C_, 0, 1};
    t[n++] = (Tensor){"bert.embeddings.LayerNorm.bias", C_, 0, 0};
    for (int l = 0; l < 2; l++) {
        const struct { const char *s; long d0, d1; int kind; } p[] = {
            {"attention.self.query.weight", C_, C_, 0}, {"attention.self.query.bias", C_, 0, 0},
            {"attention.self.key.weight", C_, C_, 0}, {"attention.self.key.bias", C_, 0, 0},
            {"attention.self.value.weight", C_, C_, 0}, {"attention.self.value.bias", C_, 0, 0},
            {"attention.output.dense.weight", C_, C_, 2}, {"attention.output.dense.bias", C_, 0, 0},
            {"attention.output.LayerNorm.weight", C_, 0, 1}, {"attention.output.LayerNorm.bias", C_, 0, 0},
            {"intermediate.dense.weight", F_, C_, 0}, {"intermediate.dense.bias", F_, 0, 0},
            {"output.dense.weight", C_, F_, 0}, {"output.dense.bias", C_, 0, 0},
            {"output.LayerNorm.weight", C_, 0, 1}, {"output.LayerNorm.bias", C_, 0, 0}};
        for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
            t[n] = (Tensor){"", p[i].d0, p[i].d1, p[i].kind};
            snprintf(t[n++].name, sizeof t[0].name, "bert.encoder.layer.%d.%s", l, p[i].s);
        }
    }
    t[n++] = (Tensor){"cls.predictions.transform.dense.weight", C_, C_, 0};
    t[n++] = (Tensor){"cls.predictions.transform.dense.bias", C_, 0, 0};
    t[n++] = (Tensor){"cls.predictions.transform.LayerNorm.weight", C_, 0, 1};
    t[n++] = (Tensor){"cls.predictions.transform.LayerNorm.bias", C_, 0, 0};
    t[n++] = (Tensor){"cls.predictions.bias", V_, 0, 0};
    return n;
}

/* ---- the comparison ---- */

/* Every position's logits (T, V) of a forward pass over ids (malloc'd), or NULL. */
static float *all_logits(StackModel *m, const int *ids, int T) {
    char err[512];
    float *lg = malloc((size_t)T * m->c.n_vocab * sizeof *lg);
    int ok = lg && stack_model_forward(m, ids, T, T, NULL, NULL, NULL, err, sizeof err) == 0;
    for (int t = 0; ok && t < T; t++) ok = stack_model_logits(m, t, lg + (size_t)t * m->c.n_vocab, err, sizeof err) == 0;
    if (!ok) { check_fail(__FILE__, __LINE__, "forward: %s", lg ? err : "out of memory"); free(lg); return NULL; }
    return lg;
}

/* The (L, H) mask of KO (malloc'd). */
static unsigned char *ko_mask(const StackModel *m) {
    unsigned char *mask = calloc((size_t)m->c.n_layer * m->c.n_head, 1);
    for (int j = 0; mask && j < 2; j++) mask[KO[j][0] * m->c.n_head + KO[j][1]] = 1;
    return mask;
}

/* a with KO knocked out against b (KO's weights zeroed): forward logits, and
 * for a decoder every step's; without the knock-out they must differ. */
static void check_knockout(StackModel *a, StackModel *b, const char *what) {
    char err[512], name[160];
    int T = 10, V = a->c.n_vocab, ids[10];
    for (int t = 0; t < T; t++) ids[t] = (t * 7 + 3) % V;
    float *plain = all_logits(a, ids, T), *zeroed = all_logits(b, ids, T);
    REQUIRE(plain && zeroed);
    double diff = 0;
    for (size_t i = 0; i < (size_t)T * V; i++) diff = fmax(diff, fabs((double)plain[i] - zeroed[i]));
    if (!(diff > 1e-3)) check_fail(__FILE__, __LINE__, "%s: the zeroed weights change nothing (%g)", what, diff);
    unsigned char *mask = ko_mask(a);
    REQUIRE(mask && stack_model_set_ablation(a, mask, err, sizeof err) == 0);
    float *knocked = all_logits(a, ids, T);
    REQUIRE(knocked);
    snprintf(name, sizeof name, "%s: forward logits, heads knocked out against W_O zeroed", what);
    check_close_f(__FILE__, __LINE__, name, knocked, zeroed, T * V, 1e-5, 1e-5);
    if (a->c.causal) {
        StackCache ka, kb;
        float *la = malloc((size_t)V * sizeof *la), *lb = malloc((size_t)V * sizeof *lb);
        REQUIRE(la && lb && stack_cache_init(&ka, a, T, err, sizeof err) == 0);
        REQUIRE(stack_cache_init(&kb, b, T, err, sizeof err) == 0);
        for (int t = 0; t < T; t++) {
            REQUIRE(stack_model_step(a, &ka, ids[t], NULL, la, err, sizeof err) == 0);
            REQUIRE(stack_model_step(b, &kb, ids[t], NULL, lb, err, sizeof err) == 0);
            snprintf(name, sizeof name, "%s: step %d logits, knocked out against zeroed", what, t);
            check_close_f(__FILE__, __LINE__, name, la, lb, V, 1e-5, 1e-5);
        }
        stack_cache_free(&ka); stack_cache_free(&kb);
        free(la); free(lb);
    }
    REQUIRE(stack_model_set_ablation(a, NULL, err, sizeof err) == 0);   /* and back */
    float *again = all_logits(a, ids, T);
    REQUIRE(again);
    snprintf(name, sizeof name, "%s: logits after the knock-out is lifted", what);
    check_close_f(__FILE__, __LINE__, name, again, plain, T * V, 0, 0);
    free(plain); free(zeroed); free(knocked); free(again); free(mask);
}

TEST(stack_knockout_llama2c_against_zeroed_wo) {
    char pa[4096], pb[4096], err[512];
    snprintf(pa, sizeof pa, "%s/ko-a.bin", check_tmpdir());
    snprintf(pb, sizeof pb, "%s/ko-b.bin", check_tmpdir());
    REQUIRE(write_llama2c(pa, 0) == 0 && write_llama2c(pb, 1) == 0);
    StackModel a, b;
    REQUIRE(llama2c_load(&a, pa, err, sizeof err) == 0);
    REQUIRE(llama2c_load(&b, pb, err, sizeof err) == 0);
    check_knockout(&a, &b, "llama2.c");
    stack_model_free(&a); stack_model_free(&b);
}

TEST(stack_knockout_gpt2_against_zeroed_c_proj) {
    char da[4096], db[4096], err[512];
    snprintf(da, sizeof da, "%s/ko-gpt2-a", check_tmpdir());
    snprintf(db, sizeof db, "%s/ko-gpt2-b", check_tmpdir());
    const char *cfg = "{\"model_type\": \"gpt2\", \"n_embd\": 16, \"n_head\": 4, \"n_layer\": 2, \"n_positions\": 16, "
                      "\"n_inner\": 32, \"vocab_size\": 50}";
    Tensor t[40];
    int n = gpt2_tensors(t);
    REQUIRE(write_folder(da, cfg, t, n, 0, 1) == 0 && write_folder(db, cfg, t, n, 1, 1) == 0);
    StackModel a, b;
    REQUIRE(stack_model_load(&a, da, err, sizeof err) == 0);
    REQUIRE(stack_model_load(&b, db, err, sizeof err) == 0);
    check_knockout(&a, &b, "GPT-2");
    stack_model_free(&a); stack_model_free(&b);
}

TEST(stack_knockout_bert_against_zeroed_output_dense) {
    char da[4096], db[4096], err[512];
    snprintf(da, sizeof da, "%s/ko-bert-a", check_tmpdir());
    snprintf(db, sizeof db, "%s/ko-bert-b", check_tmpdir());
    const char *cfg = "{\"model_type\": \"bert\", \"hidden_size\": 16, \"num_attention_heads\": 4, "
                      "\"num_hidden_layers\": 2, \"intermediate_size\": 32, \"max_position_embeddings\": 16, "
                      "\"vocab_size\": 50}";
    Tensor t[48];
    int n = bert_tensors(t);
    REQUIRE(write_folder(da, cfg, t, n, 0, 0) == 0 && write_folder(db, cfg, t, n, 1, 0) == 0);
    StackModel a, b;
    REQUIRE(stack_model_load(&a, da, err, sizeof err) == 0);
    REQUIRE(stack_model_load(&b, db, err, sizeof err) == 0);
    REQUIRE(a.has_mlm);
    check_knockout(&a, &b, "BERT");
    stack_model_free(&a); stack_model_free(&b);
}

/* Through hf_file.h and kvcache.h: the same knock-out, the per-head rows of
 * the step unchanged in the knocked-out layer itself (only later layers see it). */
TEST(stack_knockout_through_hf_file_and_kv_cache) {
    char pa[4096], pb[4096], err[512];
    snprintf(pa, sizeof pa, "%s/ko-hf-a.bin", check_tmpdir());
    snprintf(pb, sizeof pb, "%s/ko-hf-b.bin", check_tmpdir());
    REQUIRE(write_llama2c(pa, 0) == 0 && write_llama2c(pb, 1) == 0);
    HfFile f, g;
    memset(&f, 0, sizeof f);
    memset(&g, 0, sizeof g);
    f.family = g.family = HF_FILE_LLAMA2C;
    REQUIRE(llama2c_load(&f.m, pa, err, sizeof err) == 0 && llama2c_load(&g.m, pb, err, sizeof err) == 0);
    unsigned char *mask = ko_mask(&f.m);
    REQUIRE(mask && hf_file_set_ablation(&f, mask, err, sizeof err) == 0);
    KvCache kf, kg;
    int T = 8, V = 40, L = 2, H = 4;
    REQUIRE(kv_cache_init(&kf, &f, T, err, sizeof err) == 0 && kv_cache_init(&kg, &g, T, err, sizeof err) == 0);
    float *rf = calloc((size_t)L * H * T, sizeof *rf), *rg = calloc((size_t)L * H * T, sizeof *rg);
    float *lf = malloc(V * sizeof *lf), *lg = malloc(V * sizeof *lg);
    REQUIRE(rf && rg && lf && lg);
    for (int t = 0; t < T; t++) {
        REQUIRE(kv_cache_step(&kf, &f, (t * 5 + 1) % V, rf, lf, err, sizeof err) == 0);
        REQUIRE(kv_cache_step(&kg, &g, (t * 5 + 1) % V, rg, lg, err, sizeof err) == 0);
        check_close_f(__FILE__, __LINE__, "hf_file knock-out: step logits", lf, lg, V, 1e-5, 1e-5);
        check_close_f(__FILE__, __LINE__, "hf_file knock-out: step rows", rf, rg, L * H * T, 1e-5, 1e-5);
    }
    kv_cache_free(&kf); kv_cache_free(&kg);
    free(rf); free(rg); free(lf); free(lg); free(mask);
    hf_file_free(&f); hf_file_free(&g);
}

/* ---- sizes a file gives ---- */

/* A llama2.c header whose sizes multiply past a size_t's room or the limits:
 * one message, no allocation. */
TEST(stack_llama2c_header_sizes_checked) {
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/huge.bin", check_tmpdir());
    const int32_t heads[][7] = {{1 << 30, 1 << 30, 512, 1 << 20, 1 << 20, 1 << 30, 1 << 30},
                                {1 << 16, 1 << 16, 300000, 1 << 10, 1 << 10, 1, 1 << 20},
                                {131072, 58378083, 500, 2, 2, 1, 99572001}};
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
        FILE *fp = fopen(path, "wb");
        REQUIRE(fp);
        fwrite(heads[i], sizeof heads[i], 1, fp);
        float z[64] = {0};
        fwrite(z, sizeof z, 1, fp);
        fclose(fp);
        StackModel m;
        CHECK(llama2c_load(&m, path, err, sizeof err) == -1);
        CHECK(strstr(err, path) != NULL && strchr(err, '\n') == NULL);
    }
}
