/* fuzz_tokjson.c — libFuzzer harness for the tokenizer.json reader
 * (tokenize/tokjson.h).  Input: tokenizer.json NUL text.  Loading returns a
 * tokenizer or NULL with a message; encoding any text (with and without the
 * post-processor) gives ids inside the vocabulary, a spelling for each, and
 * offsets inside the text, or -1 with a message; decoding the ids works.
 * Seeds: tests/fuzz/tokjson/ (small files of every kind of part). */
#include "tokenize/tokjson.h"
#include "fuzz_scratch.h"

static void encode_and_check(const TokJson *t, const char *text, int special) {
    char err[512];
    TokJsonEnc e = {0};
    if (tokjson_encode(t, text, special, &e, err, sizeof err) != 0) {
        if (!err[0] || e.n != 0 || e.ids) abort();
        return;
    }
    int len = (int)strlen(text);
    for (int i = 0; i < e.n; i++) {
        if (e.ids[i] < 0 || e.ids[i] >= tokjson_vocab_size(t) || !e.tokens[i]) abort();
        if (e.start[i] < 0 || e.start[i] > e.end[i] || e.end[i] > len) abort();
    }
    char *s = NULL;
    if (tokjson_decode(t, e.ids, e.n, special, &s, err, sizeof err) == 0) free(s);
    tokjson_enc_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *p[2];
    size_t n[2];
    for (int k = 0; k < 2; k++) fuzz_part(data, size, k, &p[k], &n[k]);
    char err[512];
    TokJson *t = tokjson_parse((const char *)p[0], n[0], "fuzz.json", err, sizeof err);
    if (!t) {
        if (!err[0] || strchr(err, '\n')) abort();   /* one line, always */
        return 0;
    }
    char *text = malloc(n[1] + 1);
    if (text) {
        memcpy(text, p[1], n[1]);
        text[n[1]] = '\0';
        encode_and_check(t, text, 0);
        encode_and_check(t, text, 1);
        free(text);
    }
    tokjson_free(t);
    return 0;
}
