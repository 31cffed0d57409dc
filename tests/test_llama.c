/* test_llama.c — the Llama family's C side: the llama2.c tokenizer on files
 * written here (encoding rules, byte fallback, merges by score, decoding),
 * config.json errors naming the file and key, llama2.c files that are
 * truncated or inconsistent, and stories260K's greedy text (the README of
 * /work/shared/models, skipped with a reason when the folder is absent).
 * The forward pass against independent references: tests/test_llama.py. */
#include "check.h"
#include "family/stack.h"
#include "family/llama2c.h"
#include "family/llama_config.h"
#include "core/tensor.h"
#include "tokenize/llama2c_tok.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORIES "/work/shared/models/stories260K"

/* Greedy decoding over the growing prefix (no cache): n tokens after the prompt. */
static char *greedy(StackModel *m, const Llama2cTok *tok, const char *prompt, int n) {
    char err[512];
    int *ids = NULL, T = 0;
    if (llama2c_tok_encode(tok, prompt, 1, 0, &ids, &T, err, sizeof err)) return NULL;
    int *all = realloc(ids, (size_t)(T + n) * sizeof *all);
    float *lg = malloc((size_t)m->c.n_vocab * sizeof *lg);
    char *text = calloc(1, 64 * (size_t)(T + n) + 1);
    if (!all || !lg || !text) { free(all); free(lg); free(text); return NULL; }
    for (int i = 0; i < n; i++) {
        if (stack_model_forward(m, all, T, T, NULL, NULL, NULL, err, sizeof err) ||
            stack_model_logits(m, T - 1, lg, err, sizeof err))
            break;
        int best = 0;
        for (int v = 1; v < m->c.n_vocab; v++)
            if (lg[v] > lg[best]) best = v;
        if (best == LLAMA2C_EOS) break;
        all[T++] = best;
    }
    for (int t = 1; t < T; t++) {
        size_t len;
        const char *p = llama2c_tok_decode(tok, all[t - 1], all[t], &len);
        strncat(text, p, len);
    }
    free(all); free(lg);
    return text;
}

TEST(llama2c_stories260k_greedy) {
    if (access(STORIES "/stories260K.bin", R_OK) != 0) {
        printf("     skip: %s is absent (the real stories260K weights)\n", STORIES);
        return;
    }
    char err[512];
    StackModel m;
    Llama2cTok tok;
    REQUIRE(llama2c_load(&m, STORIES "/stories260K.bin", err, sizeof err) == 0);
    REQUIRE(llama2c_tok_load(&tok, STORIES "/tok512.bin", m.c.n_vocab, err, sizeof err) == 0);
    CHECK_INT(m.n_params, 260032);
    char *text = greedy(&m, &tok, "Once upon a time", 80);
    const char *known = "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. "
                        "One day, she saw a big, red ball. She wanted to play with it, but it was too high.";
    REQUIRE(text);
    if (strncmp(text, known, strlen(known)) != 0) check_fail(__FILE__, __LINE__, "greedy text:\n  %s\nexpected:\n  %s", text, known);
    free(text);
    llama2c_tok_free(&tok);
    stack_model_free(&m);
}

#define HF_REAL "/work/shared/hf"

/* The real config.json files, unshrunk: every quirk read as the family means it. */
TEST(llama_config_real_files) {
    if (access(HF_REAL "/gemma-3-270m-it/config.json", R_OK) != 0) {
        printf("     skip: %s is absent (the real config.json files)\n", HF_REAL);
        return;
    }
    char err[512];
    StackConfig c;
    REQUIRE(llama_config_load(&c, HF_REAL "/tinyllama-1.1b-chat-v1.0", err, sizeof err) == 0);
    CHECK_INT(c.family, STACK_LLAMA);
    CHECK(c.n_head == 32 && c.n_kv_head == 4 && c.head_dim == 64 && c.n_layer == 22 && !c.tie_embeddings);
    CHECK(c.rope[0].type == STACK_ROPE_DEFAULT && c.rope[0].theta == 10000 && c.window == 0 && c.norm_eps == 1e-5f);
    CHECK_INT(c.bos_id, 1);
    REQUIRE(llama_config_load(&c, HF_REAL "/llama-3.2-1b", err, sizeof err) == 0);
    CHECK(c.rope[0].type == STACK_ROPE_LLAMA3 && c.rope[0].factor == 32 && c.rope[0].orig_max_pos == 8192);
    CHECK(c.rope[0].theta == 500000 && c.tie_embeddings && c.head_dim == 64 && c.n_kv_head == 8);
    REQUIRE(llama_config_load(&c, HF_REAL "/qwen2.5-0.5b", err, sizeof err) == 0);
    CHECK(c.family == STACK_QWEN2 && c.qkv_bias && !c.o_bias && c.tie_embeddings && c.window == 0);
    CHECK(c.n_head == 14 && c.n_kv_head == 2 && c.head_dim == 64 && c.rope[0].theta == 1e6);
    REQUIRE(llama_config_load(&c, HF_REAL "/gemma-3-270m-it", err, sizeof err) == 0);
    CHECK(c.family == STACK_GEMMA3 && c.qk_norm && c.sandwich && c.norm_plus_one && c.tie_embeddings);
    CHECK(c.act == STACK_ACT_GELU_TANH && c.head_dim == 256 && c.n_kv_head == 1 && c.window == 512);
    CHECK_NEAR(c.attn_scale, 1.0 / 16, 1e-9);
    CHECK_NEAR(c.embed_scale, sqrt(640.0), 1e-5);
    CHECK(c.rope[STACK_LAYER_FULL].theta == 1e6 && c.rope[STACK_LAYER_SLIDING].theta == 1e4);
    for (int l = 0; l < c.n_layer; l++) CHECK_INT(c.layer_kind[l], (l + 1) % 6 != 0);
}

static int parse(StackConfig *c, const char *json, char *err) {
    return llama_config_parse(c, json, "x/config.json", err, 512);
}

/* Defaults of the config classes, and errors naming the file and the key. */
TEST(llama_config_defaults_and_errors) {
    char err[512];
    StackConfig c;
#define SIZES "\"hidden_size\": 64, \"num_attention_heads\": 4, \"num_hidden_layers\": 3, " \
              "\"intermediate_size\": 96, \"vocab_size\": 100"
    REQUIRE(parse(&c, "{\"architectures\": [\"MistralForCausalLM\"], " SIZES "}", err) == 0);
    CHECK(c.window == 4096 && c.layer_kind[0] == STACK_LAYER_SLIDING && c.layer_kind[2] == STACK_LAYER_SLIDING);
    REQUIRE(parse(&c, "{\"architectures\": [\"MistralForCausalLM\"], \"sliding_window\": null, " SIZES "}", err) == 0);
    CHECK(c.window == 0 && c.layer_kind[0] == STACK_LAYER_FULL);
    REQUIRE(parse(&c, "{\"model_type\": \"qwen3\", " SIZES "}", err) == 0);
    CHECK(c.family == STACK_QWEN3 && c.head_dim == 128 && c.qk_norm && !c.qkv_bias && c.n_kv_head == 4);
    REQUIRE(parse(&c, "{\"model_type\": \"qwen2\", \"use_sliding_window\": true, \"sliding_window\": 8, "
                      "\"max_window_layers\": 2, " SIZES "}", err) == 0);
    CHECK(c.layer_kind[1] == STACK_LAYER_FULL && c.layer_kind[2] == STACK_LAYER_SLIDING && c.window == 8);
    REQUIRE(parse(&c, "{\"model_type\": \"llama\", \"rope_parameters\": {\"rope_type\": \"linear\", \"factor\": 2, "
                      "\"rope_theta\": 5e5}, " SIZES "}", err) == 0);
    CHECK(c.rope[0].type == STACK_ROPE_LINEAR && c.rope[0].factor == 2 && c.rope[0].theta == 5e5 && c.rope[1].theta == 5e5);
    struct { const char *json, *want; } bad[] = {
        {"[1]", "x/config.json is not a JSON object"},
        {"{\"model_type\": \"llama\", \"hidden_", "x/config.json is not valid JSON (cut short or damaged at byte 25)"},
        {"{\"architectures\": [\"GPT2LMHeadModel\"], " SIZES "}", "x/config.json: \"architectures\" names GPT2LMHeadModel"},
        {"{\"model_type\": \"phi3\", " SIZES "}", "x/config.json: \"model_type\" \"phi3\" is not one"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 64}", "x/config.json: \"num_attention_heads\" is missing"},
        {"{\"model_type\": \"llama\", \"num_key_value_heads\": 3, " SIZES "}", "\"num_attention_heads\" 4 is not a multiple"},
        {"{\"model_type\": \"llama\", \"head_dim\": 7, " SIZES "}", "x/config.json: \"head_dim\" 7 is odd"},
        {"{\"model_type\": \"llama\", \"rms_norm_eps\": \"small\", " SIZES "}", "\"rms_norm_eps\" must be a positive number"},
        {"{\"model_type\": \"llama\", \"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2}, " SIZES "}",
         "rope_scaling type \"dynamic\" is not one"},
        {"{\"model_type\": \"llama\", \"partial_rotary_factor\": 0.5, " SIZES "}", "\"partial_rotary_factor\" is 0.5"},
        {"{\"model_type\": \"gemma3_text\", \"attn_logit_softcapping\": 50, " SIZES "}", "\"attn_logit_softcapping\" is 50"},
        {"{\"model_type\": \"llama\", \"hidden_act\": \"relu2\", " SIZES "}", "\"hidden_act\" \"relu2\" is not one"},
        {"{\"model_type\": \"llama\", \"num_hidden_layers\": 600, \"hidden_size\": 64, \"num_attention_heads\": 4, "
         "\"intermediate_size\": 96, \"vocab_size\": 100}", "600 is more than attnviz reads"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK_INT(parse(&c, bad[i].json, err), -1);
        if (!strstr(err, bad[i].want)) check_fail(__FILE__, __LINE__, "%s\n  gave \"%s\"\n  expected \"%s\"", bad[i].json, err, bad[i].want);
        CHECK(!strchr(err, '\n'));
    }
}

/* matmul_forward_t (weights stored (out, in), the Llama forward's products)
 * against a float64 loop, through cblas_sgemm and through the plain loops. */
TEST(llama_matmul_forward_t_blas_and_plain) {
    /* the last two on 4 threads: a 2 x 2 grid of blocks and 4 blocks of columns */
    const int sizes[][3] = {{1, 1, 1}, {1, 64, 512}, {7, 13, 5}, {33, 17, 65}, {64, 128, 96}, {200, 64, 300}, {64, 48, 1000}};
    int saved = tensor_blas_enabled();
#ifdef _OPENMP
    int threads = omp_get_max_threads();
#endif
    for (int use = 0; use < 4; use++) {   /* plain loops; BLAS on this machine's threads, on 2, on 4 */
        tensor_set_blas(use > 0);
#ifdef _OPENMP
        omp_set_num_threads(use < 2 ? threads : 2 * (use - 1));
#endif
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            int N = sizes[s][0], K = sizes[s][1], M = sizes[s][2];
            float *x = malloc(sizeof(float) * N * K), *w = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * M);
            float *y = malloc(sizeof(float) * N * M), *want = malloc(sizeof(float) * N * M);
            float *y0 = malloc(sizeof(float) * N * M), *want0 = malloc(sizeof(float) * N * M);
            REQUIRE(x && w && b && y && want && y0 && want0);
            uint32_t r = 12345u + (uint32_t)s;
            for (int i = 0; i < N * K; i++) { r = r * 1664525u + 1013904223u; x[i] = (float)(r >> 8) / (1 << 24) - 0.5f; }
            for (int i = 0; i < M * K; i++) { r = r * 1664525u + 1013904223u; w[i] = (float)(r >> 8) / (1 << 24) - 0.5f; }
            for (int j = 0; j < M; j++) b[j] = 0.25f * (float)(j % 7) - 0.5f;
            for (int i = 0; i < N; i++)
                for (int j = 0; j < M; j++) {
                    double acc = 0;
                    for (int k = 0; k < K; k++) acc += (double)x[i * K + k] * w[j * K + k];
                    want0[i * M + j] = (float)acc;
                    want[i * M + j] = (float)(acc + b[j]);
                }
            for (int i = 0; i < N * M; i++) y[i] = y0[i] = 99.0f;   /* overwritten, not accumulated */
            matmul_forward_t(y, x, w, b, N, K, M);
            matmul_forward_t(y0, x, w, NULL, N, K, M);
            char what[64];
            snprintf(what, sizeof what, "%s matmul_forward_t %dx%dx%d", use ? "blas" : "plain", N, K, M);
            CHECK_CLOSE(what, y, want, N * M, 1e-5, 1e-5);
            CHECK_CLOSE(what, y0, want0, N * M, 1e-5, 1e-5);
            free(x); free(w); free(b); free(y); free(want); free(y0); free(want0);
        }
    }
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    tensor_set_blas(saved);
}
