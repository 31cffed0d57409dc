/* fuzz_bert_vocab.c — libFuzzer harness for BERT's vocab.txt read into the
 * tokenizer engine (tokenize/tokjson.h, tokjson_load_bert).  Input: one flag
 * byte (bit 0 lower; bits 1-2 strip_accents: 0 no, 1 yes, 2 or 3 as lower),
 * vocab.txt NUL text.  Ids stay inside the vocabulary, each with its token
 * and offsets inside the text, or -1 with a message; decoding them gives
 * text.  Seeds: tests/fuzz/bert_vocab/. */
#include "tokenize/tokjson.h"
#include "fuzz_scratch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int flags = data[0], strip = (flags >> 1) & 3;
    const uint8_t *p[2];
    size_t n[2];
    for (int k = 0; k < 2; k++) fuzz_part(data + 1, size - 1, k, &p[k], &n[k]);
    char vocab[600], err[512];
    fuzz_write("vocab.txt", p[0], n[0], vocab, sizeof vocab);
    TokJson *t = tokjson_load_bert(vocab, flags & 1, strip >= 2 ? -1 : strip, err, sizeof err);
    if (!t) return 0;
    char *text = malloc(n[1] + 1);
    if (text) {
        memcpy(text, p[1], n[1]);
        text[n[1]] = '\0';
        TokJsonEnc e = {0};
        if (tokjson_encode(t, text, 1, &e, err, sizeof err) == 0) {
            char *s = NULL;
            for (int i = 0; i < e.n; i++) {
                if (e.ids[i] < 0 || e.ids[i] >= tokjson_vocab_size(t) || !e.tokens[i]) abort();
                if (e.start[i] < 0 || e.end[i] < e.start[i] || e.end[i] > (int)n[1]) abort();
            }
            if (tokjson_decode(t, e.ids, e.n, 1, &s, err, sizeof err) == 0) free(s);
        }
        tokjson_enc_free(&e);
        free(text);
    }
    tokjson_free(t);
    return 0;
}
