/* fuzz_gpt2_vocab.c — libFuzzer harness for GPT-2's vocab.json + merges.txt
 * read into the tokenizer engine (tokenize/tokjson.h, tokjson_load_gpt2).
 * Input: vocab.json NUL merges.txt NUL text.  Loading returns a tokenizer or
 * NULL with a message; encoding any text gives ids inside the vocabulary, each
 * with its bytes, or -1 with a message; decoding them gives text.
 * Seeds: tests/fuzz/gpt2_vocab/ (a small vocabulary). */
#include "tokenize/tokjson.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *p[3];
    size_t n[3];
    for (int k = 0; k < 3; k++) fuzz_part(data, size, k, &p[k], &n[k]);
    char vocab[600], merges[600], err[512];
    fuzz_write("vocab.json", p[0], n[0], vocab, sizeof vocab);
    fuzz_write("merges.txt", p[1], n[1], merges, sizeof merges);
    TokJson *t = tokjson_load_gpt2(vocab, merges, err, sizeof err);
    if (!t) return 0;
    char *text = malloc(n[2] + 1);
    if (text) {
        memcpy(text, p[2], n[2]);
        text[n[2]] = '\0';
        TokJsonEnc e = {0};
        if (tokjson_encode(t, text, 1, &e, err, sizeof err) == 0) {
            char bytes[256], *s = NULL;
            for (int i = 0; i < e.n; i++) {
                if (e.ids[i] < 0 || e.ids[i] >= tokjson_vocab_size(t) || !e.tokens[i]) abort();
                if (e.start[i] < 0 || e.end[i] < e.start[i] || e.end[i] > (int)n[2]) abort();
                tokjson_token_bytes(t, e.ids[i], bytes, sizeof bytes);
            }
            if (tokjson_decode(t, e.ids, e.n, 0, &s, err, sizeof err) == 0) free(s);
        }
        tokjson_enc_free(&e);
        free(text);
    }
    tokjson_free(t);
    return 0;
}
