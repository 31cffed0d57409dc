/* decode.c — see decode.h.  Re-runs the whole forward pass per step: sentences
 * are short (≤ 64 tokens), and it keeps one code path for the pictures. */
#include "decode.h"
#include "tokenizer.h"
#include <stdio.h>

int decode_greedy(Model *m, const int *src, int S, int tag, int max_len, int *out, int *T,
                  char *err, size_t errlen) {
    int V = m->config.vocab_size;
    if (max_len > m->config.max_len) max_len = m->config.max_len;
    if (max_len < 1) { snprintf(err, errlen, "max_len must be at least 1"); return -1; }
    out[0] = tag;
    int n = 1;
    for (;;) {
        if (model_forward(m, src, &S, S, out, &n, n, 1) != 0) {
            snprintf(err, errlen, "model: %s", m->err);
            return -1;
        }
        if (n >= max_len) break;
        const float *logits = m->acts.logits + (size_t)(n - 1) * V;
        int best = -1;
        for (int v = 0; v < V; v++) {
            if (v < VOCAB_N_SPECIAL && v != VOCAB_EOS) continue;
            if (best < 0 || logits[v] > logits[best]) best = v;
        }
        if (best == VOCAB_EOS || best < 0) break;
        out[n++] = best;
    }
    *T = n;
    return 0;
}
