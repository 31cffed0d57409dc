/* fuzz_wordpiece.c — libFuzzer harness for BERT's WordPiece tokenizer
 * (model/wordpiece.h).  Input: one flag byte (bit 0 lower, bit 1 strip
 * accents), vocab.txt NUL text.  Ids stay inside the vocabulary, or -1 with a
 * message.  Seeds: tests/fuzz/wordpiece/. */
#include "tokenize/wordpiece.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int flags = data[0];
    const uint8_t *p[2];
    size_t n[2];
    for (int k = 0; k < 2; k++) fuzz_part(data + 1, size - 1, k, &p[k], &n[k]);
    char vocab[600], err[512];
    fuzz_write("vocab.txt", p[0], n[0], vocab, sizeof vocab);
    Wordpiece *w = wordpiece_load(vocab, flags & 1, (flags >> 1) & 1, err, sizeof err);
    if (!w) return 0;
    char *text = malloc(n[1] + 1);
    if (text) {
        memcpy(text, p[1], n[1]);
        text[n[1]] = '\0';
        int *ids = NULL, m = 0;
        if (wordpiece_encode(w, text, &ids, &m, err, sizeof err) == 0) {
            for (int i = 0; i < m; i++) {
                if (ids[i] < 0 || ids[i] >= wordpiece_vocab_size(w)) abort();
                if (!wordpiece_token(w, ids[i])) abort();
            }
        }
        free(ids);
        free(text);
    }
    wordpiece_free(w);
    return 0;
}
