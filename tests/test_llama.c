/* test_llama.c — the Llama family's C side: the llama2.c tokenizer on files
 * written here (encoding rules, byte fallback, merges by score, decoding),
 * config.json errors naming the file and key, llama2.c files that are
 * truncated or inconsistent, and stories260K's greedy text (the README of
 * /work/shared/models, skipped with a reason when the folder is absent).
 * The forward pass against independent references: tests/test_llama.py. */
#include "check.h"
#include "family/llama.h"
#include "family/llama2c.h"
#include "family/llama_config.h"
#include "tokenize/llama2c_tok.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STORIES "/work/shared/models/stories260K"

/* Greedy decoding over the growing prefix (no cache): n tokens after the prompt. */
static char *greedy(LlamaModel *m, const Llama2cTok *tok, const char *prompt, int n) {
    char err[512];
    int *ids = NULL, T = 0;
    if (llama2c_tok_encode(tok, prompt, 1, 0, &ids, &T, err, sizeof err)) return NULL;
    int *all = realloc(ids, (size_t)(T + n) * sizeof *all);
    float *lg = malloc((size_t)m->c.n_vocab * sizeof *lg);
    char *text = calloc(1, 64 * (size_t)(T + n) + 1);
    if (!all || !lg || !text) { free(all); free(lg); free(text); return NULL; }
    for (int i = 0; i < n; i++) {
        if (llama_model_forward(m, all, T, NULL, NULL, NULL, err, sizeof err) ||
            llama_model_logits(m, T - 1, lg, err, sizeof err))
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
    LlamaModel m;
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
    llama_model_free(&m);
}
