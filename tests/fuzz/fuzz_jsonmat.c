/* fuzz_jsonmat.c — libFuzzer harness for JSON matrices (core/jsonmat.h).
 *
 * Any bytes as the text of --q/--k/--v/--scores and of --mask: 0 or -1 with a
 * message, never a crash; a parsed matrix has rows, cols ≥ 1 and only finite
 * values, a parsed mask only 0 and 1.  Seed corpus: tests/fuzz/jsonmat/. */
#include "core/jsonmat.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 1 << 16) return 0;
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char err[512];
    JsonMat m = {0};
    if (jsonmat_parse_text(&m, text, "--q", err, sizeof err) == 0) {
        if (m.rows < 1 || m.cols < 1 || !m.data) abort();
        for (size_t i = 0; i < (size_t)m.rows * m.cols; i++) if (!isfinite(m.data[i])) abort();
        jsonmat_free(&m);
    }
    if (text[strspn(text, " \t\r\n")] == '[' && jsonmat_parse_mask(&m, text, "--mask", err, sizeof err) == 0) {
        for (size_t i = 0; i < (size_t)m.rows * m.cols; i++) if (m.data[i] != 0.0f && m.data[i] != 1.0f) abort();
        jsonmat_free(&m);
    }
    free(text);
    return 0;
}
