/* fuzz_tokenizer.c — libFuzzer harness for the word tokenizer (model/tokenizer.h).
 *
 * Any bytes as a sentence: tokenizer_split must return 0 or -1 with a message,
 * never crash; when it succeeds, the tokens joined by spaces must re-tokenize
 * to themselves (the property tokenizer.h promises and run's --target uses).
 * Built and run by `make fuzz` (seed corpus: tests/fuzz/tokenizer/). */
#include "tokenize/tokenizer.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char err[256];
    Tokens t;
    if (tokenizer_split(&t, text, err, sizeof err) == 0) {
        size_t n = 1;
        for (int i = 0; i < t.n; i++) n += strlen(t.tok[i]) + 1;
        char *joined = calloc(n, 1);
        for (int i = 0; joined && i < t.n; i++) {
            if (i) strcat(joined, " ");
            strcat(joined, t.tok[i]);
        }
        Tokens again;
        if (joined && tokenizer_split(&again, joined, err, sizeof err) == 0) {
            int same = again.n == t.n;
            for (int i = 0; same && i < t.n; i++) same = !strcmp(again.tok[i], t.tok[i]);
            if (!same) {
                fprintf(stderr, "round trip broken: \"%s\" gives %d tokens, \"%s\" gives %d\n", text, t.n, joined,
                        again.n);
                abort();
            }
            tokens_free(&again);
        }
        free(joined);
        tokens_free(&t);
    }
    free(text);
    return 0;
}
