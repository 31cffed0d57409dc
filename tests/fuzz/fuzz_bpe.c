/* fuzz_bpe.c — libFuzzer harness for GPT-2's byte-level BPE (model/bpe.h).
 * Input: vocab.json NUL merges.txt NUL text.  Loading returns a tokenizer or
 * NULL with a message; encoding any text gives ids inside the vocabulary or
 * -1 with a message.  Seeds: tests/fuzz/bpe/ (a small vocabulary). */
#include "tokenize/bpe.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *p[3];
    size_t n[3];
    for (int k = 0; k < 3; k++) fuzz_part(data, size, k, &p[k], &n[k]);
    char vocab[600], merges[600], err[512];
    fuzz_write("vocab.json", p[0], n[0], vocab, sizeof vocab);
    fuzz_write("merges.txt", p[1], n[1], merges, sizeof merges);
    Bpe *b = bpe_load(vocab, merges, err, sizeof err);
    if (!b) return 0;
    char *text = malloc(n[2] + 1);
    if (text) {
        memcpy(text, p[2], n[2]);
        text[n[2]] = '\0';
        int *ids = NULL, m = 0;
        if (bpe_encode(b, text, &ids, &m, err, sizeof err) == 0) {
            char tok[256];
            for (int i = 0; i < m; i++) {
                if (ids[i] < 0 || ids[i] >= bpe_vocab_size(b)) abort();
                bpe_token_text(b, ids[i], tok, sizeof tok);
            }
        }
        free(ids);
        free(text);
    }
    bpe_free(b);
    return 0;
}
