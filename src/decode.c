/* decode.c — see decode.h.  The search itself is eval's (eval_greedy_decode),
 * so `run`, `demo` and `eval` translate by one rule; this adds the tag in front
 * and leaves the activations of exactly the decoder input the pictures show. */
#include "decode.h"
#include "errmsg.h"
#include "eval.h"

int decode_greedy(Model *m, const int *src, int S, int tag, int max_len, int *out, int *T,
                  char *err, size_t errlen) {
    /* out holds the tag too, and eval caps its output at the model's max_len - 1 */
    if (max_len > m->config.max_len) max_len = m->config.max_len;
    if (max_len < 2) return errmsg_set(err, errlen, "max_len must be at least 2 (the tag and one word)");
    int n = 0;
    out[0] = tag;
    if (eval_greedy_decode(m, src, S, tag, max_len - 1, out + 1, &n, err, errlen) != 0) return -1;
    *T = n + 1;
    if (model_forward(m, src, &S, S, out, T, *T, 1) != 0)
        return errmsg_set(err, errlen, "model: %s", m->err);
    return 0;
}
