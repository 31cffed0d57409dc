/* fuzz_llama2c.c — libFuzzer harness for llama2.c files: the checkpoint
 * reader (family/llama2c.h) and tokenizer.bin (tokenize/llama2c_tok.h).
 * Input: a little-endian uint32 n, then n bytes of checkpoint (fewer when the
 * input is shorter), the rest a tokenizer.bin.  Each loads (0) or is refused
 * (-1 with a message); a loaded tokenizer encodes and decodes a few texts
 * (ids always inside the vocabulary); a loaded small model runs a forward
 * pass over up to 3 tokens.  Seeds: tests/fuzz/llama2c/. */
#include "family/llama2c.h"
#include "tokenize/llama2c_tok.h"
#include "fuzz_scratch.h"

static void use_tokenizer(const Llama2cTok *t, const uint8_t *data, size_t size) {
    char text[64], err[512];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = '\0';
    const char *texts[3] = {"Once upon a time", "été 日本 🙂", text};
    for (int k = 0; k < 3; k++) {
        int *ids = NULL, m = 0;
        if (llama2c_tok_encode(t, texts[k], 1, 1, &ids, &m, err, sizeof err) == 0)
            for (int i = 0; i < m; i++) {
                if (ids[i] < 0 || ids[i] >= t->n) abort();
                size_t len;
                const char *p = llama2c_tok_decode(t, i ? ids[i - 1] : -1, ids[i], &len);
                if (!p || strlen(p) > len) abort();   /* a byte piece is 1 byte, maybe NUL */
            }
        free(ids);
    }
}

static void use_model(StackModel *m) {
    char err[512];
    if (m->n_params > 200000) return;
    int ids[3], T = m->c.n_pos < 3 ? m->c.n_pos : 3;
    for (int t = 0; t < T; t++) ids[t] = (t * 7) % m->c.n_vocab;
    float *lg = malloc((size_t)m->c.n_vocab * sizeof *lg);
    if (lg && stack_model_forward(m, ids, T, T, NULL, NULL, NULL, err, sizeof err) == 0)
        (void)stack_model_logits(m, T - 1, lg, err, sizeof err);
    free(lg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char mpath[600], tpath[600], err[512];
    uint32_t n = 0;
    if (size >= 4) { memcpy(&n, data, 4); data += 4; size -= 4; }
    if (n > size) n = (uint32_t)size;
    fuzz_write("model.bin", data, n, mpath, sizeof mpath);
    fuzz_write("tokenizer.bin", data + n, size - n, tpath, sizeof tpath);
    StackModel m;
    Llama2cTok t;
    int have_model = llama2c_load(&m, mpath, err, sizeof err) == 0;
    if (llama2c_tok_load(&t, tpath, 0, err, sizeof err) == 0) {
        use_tokenizer(&t, data + n, size - n);
        llama2c_tok_free(&t);
    }
    if (have_model) {
        if (llama2c_tok_load(&t, tpath, m.c.n_vocab, err, sizeof err) == 0) llama2c_tok_free(&t);
        use_model(&m);
    }
    stack_model_free(&m);
    return 0;
}
