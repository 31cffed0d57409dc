/* test_generate.c — generation with a KV cache (family/kvcache.h,
 * stack_model_step) against the full forward pass: for every
 * prefix 0..t of a token sequence, the step that reads token t gives, in every
 * layer and head, the same attention row as row t of a full forward pass over
 * ids[0..t], and the same logits (rows within 1e-5, logits within 1e-4).
 * Models: stories260K (skipped with a reason when ../shared is absent), a
 * random llama2.c file written here (grouped-query attention, 4 query heads on
 * 2 key/value heads), and any folders named in $ATTNVIZ_GEN_FOLDERS (colon
 * separated; tests/test_generate.py writes tiny random GPT-2, Qwen3 and
 * Gemma 3 folders, the last with sliding-window layers, and runs this test
 * with them). */
#include "check.h"
#include "core/rng.h"
#include "family/hf_file.h"
#include "family/kvcache.h"
#include "family/llama2c.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORIES "/work/shared/models/stories260K"

/* The step rows (L, H, n_ctx) and logits of position t against a full
 * forward over ids[0..t] (trace tr's maps, logits lg of row t). */
static void compare_rows(const Trace *tr, const float *rows, int n_ctx, int H, int t, const char *what) {
    for (int l = 0; l < tr->n_maps; l++) {
        const TraceMap *m = &tr->maps[l];
        for (int h = 0; h < H; h++) {
            char name[160];
            snprintf(name, sizeof name, "%s: position %d, layer %d head %d", what, t, l, h);
            if (!check_close_f(__FILE__, __LINE__, name, rows + ((size_t)l * H + h) * n_ctx,
                               m->heads[h].weights + (size_t)t * m->Tk, t + 1, 1e-5, 0))
                return;
        }
    }
}

/* Every prefix of ids (T tokens) through f: the cache's steps against full passes. */
static void check_file(HfFile *f, const int *ids, int T, const char *what) {
    char err[512];
    HfShape s = hf_file_shape(f);
    KvCache kv;
    REQUIRE(kv_cache_init(&kv, f, T, err, sizeof err) == 0);
    float *rows = calloc((size_t)s.n_layer * s.n_head * T, sizeof *rows);
    float *lg = malloc((size_t)s.n_vocab * sizeof *lg), *lf = malloc((size_t)s.n_vocab * sizeof *lf);
    char **tok = calloc((size_t)T, sizeof *tok);
    REQUIRE(rows && lg && lf && tok);
    for (int t = 0; t < T; t++) tok[t] = "x";
    for (int t = 0; t < T; t++) {
        REQUIRE(kv_cache_step(&kv, f, ids[t], rows, lg, err, sizeof err) == 0);
        CHECK_INT(kv_cache_length(&kv), t + 1);
        HfInput in = {.n = t + 1, .n_real = t + 1, .ids = (int *)ids, .tokens = tok};
        Trace tr;
        trace_init(&tr);
        REQUIRE(hf_file_forward(f, &in, &tr, NULL, err, sizeof err) == 0);
        REQUIRE(tr.n_maps == s.n_layer);
        compare_rows(&tr, rows, T, s.n_head, t, what);
        REQUIRE(hf_file_logits(f, t, lf, err, sizeof err) == 0);
        char name[160];
        snprintf(name, sizeof name, "%s: logits at position %d", what, t);
        check_close_f(__FILE__, __LINE__, name, lg, lf, s.n_vocab, 1e-4, 1e-5);
        trace_free(&tr);
    }
    CHECK(kv_cache_step(&kv, f, ids[0], rows, lg, err, sizeof err) == -1);   /* full */
    CHECK(strstr(err, "full") != NULL);
    free(rows); free(lg); free(lf); free(tok);
    kv_cache_free(&kv);
}

/* A llama2.c model in an HfFile without its tokenizer (the steps need none). */
static int open_llama2c(HfFile *f, const char *path, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    f->family = HF_FILE_LLAMA2C;
    return llama2c_load(&f->m, path, err, errlen);
}

TEST(generate_kv_cache_stories260k) {
    if (access(STORIES "/stories260K.bin", R_OK) != 0) {
        printf("     skip: %s is absent (the real stories260K weights)\n", STORIES);
        return;
    }
    char err[512];
    HfFile f;
    REQUIRE(open_llama2c(&f, STORIES "/stories260K.bin", err, sizeof err) == 0);
    int ids[24] = {1, 403, 407, 261, 378, 1, 2, 300, 17, 99, 45, 260, 410, 511, 0, 3, 77, 77, 77, 250, 12, 9, 400, 1};
    check_file(&f, ids, 24, "stories260K");
    hf_file_free(&f);
}

/* A random llama2.c checkpoint: dim 16, hidden 24, 2 layers, 4 heads on 2
 * key/value heads, vocabulary 40, 32 positions, shared classifier. */
static int write_random_llama2c(const char *path) {
    int32_t h[7] = {16, 24, 2, 4, 2, 40, 32};
    long C = 16, F = 24, L = 2, V = 40, P = 32, KD = 2 * 4, D = 4;
    long n = V * C + L * C + L * C * C + 2 * L * KD * C + L * C * C + L * C + 3 * L * F * C + C + P * D;
    FILE *fp = fopen(path, "wb");
    if (!fp) return -1;
    fwrite(h, sizeof h, 1, fp);
    Rng r = rng_from_state(7);
    for (long i = 0; i < n; i++) {
        float v = (float)(rng_normal(&r) * 0.5);
        fwrite(&v, sizeof v, 1, fp);
    }
    return fclose(fp);
}

TEST(generate_kv_cache_random_llama2c_gqa) {
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/gen-random.bin", check_tmpdir());
    REQUIRE(write_random_llama2c(path) == 0);
    HfFile f;
    REQUIRE(open_llama2c(&f, path, err, sizeof err) == 0);
    CHECK_INT(hf_file_shape(&f).n_kv_head, 2);
    int ids[32];
    for (int i = 0; i < 32; i++) ids[i] = (i * 7 + 3) % 40;
    check_file(&f, ids, 32, "random llama2.c");
    KvCache kv;   /* a cache longer than the context is refused */
    CHECK(kv_cache_init(&kv, &f, 33, err, sizeof err) == -1);
    hf_file_free(&f);
}

/* Folders from $ATTNVIZ_GEN_FOLDERS (tests/test_generate.py); skipped without. */
TEST(generate_kv_cache_folders) {
    const char *env = getenv("ATTNVIZ_GEN_FOLDERS");
    if (!env || !*env) {
        printf("     skip: $ATTNVIZ_GEN_FOLDERS is not set (tests/test_generate.py sets it)\n");
        return;
    }
    char list[8192], err[512];
    snprintf(list, sizeof list, "%s", env);
    for (char *save = NULL, *dir = strtok_r(list, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        HfFile f;
        if (hf_file_open(&f, dir, NULL, err, sizeof err) != 0) { check_fail(__FILE__, __LINE__, "%s", err); continue; }
        HfShape s = hf_file_shape(&f);
        int T = s.n_pos < 40 ? s.n_pos : 40, ids[40];
        for (int i = 0; i < T; i++) ids[i] = (i * 131 + 5) % s.n_vocab;
        check_file(&f, ids, T, dir);
        hf_file_free(&f);
    }
}
