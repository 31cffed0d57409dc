/* llama_file.c — see llama_file.h. */
#include "family/llama_file.h"
#include "core/errmsg.h"
#include "family/llama2c.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int llama_file_load_llama2c(LlamaFile *f, const char *model, const char *tokenizer, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    f->bos_id = f->eos_id = -1;
    snprintf(f->tokenizer, sizeof f->tokenizer, "%s", tokenizer);
    if (llama2c_load(&f->m, model, err, errlen) != 0) return -1;
    if (llama2c_tok_load(&f->tok, tokenizer, f->m.c.n_vocab, err, errlen) != 0) {
        llama_file_free(f);
        return -1;
    }
    f->bos_id = LLAMA2C_BOS;
    f->eos_id = LLAMA2C_EOS;
    f->add_bos = 1;
    return 0;
}

int llama_file_token_ids(const LlamaFile *f, const char *text, int bos, int **ids, int *n, char *err, size_t errlen) {
    return llama2c_tok_encode(&f->tok, text, bos && f->add_bos, 0, ids, n, err, errlen);
}

/* s without the whitespace around it. */
static void trimmed(char *out, size_t n, const char *s) {
    while (*s == ' ' || *s == '\n' || *s == '\t') s++;
    size_t len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\n' || s[len - 1] == '\t')) len--;
    snprintf(out, n, "%.*s", (int)len, s);
}

void llama_file_token_text(const LlamaFile *f, int id, char *out, size_t n) {
    if (id < 0 || id >= f->tok.n) { snprintf(out, n, "<%d>", id); return; }
    const char *p = f->tok.piece[id];
    if (id < 3) trimmed(out, n, p);   /* <unk>, "\n<s>\n", "\n</s>\n" */
    else snprintf(out, n, "%s", p[0] == ' ' && p[1] ? p + 1 : p);
}

int llama_file_pad_id(const LlamaFile *f) {
    return f->eos_id >= 0 ? f->eos_id : f->bos_id >= 0 ? f->bos_id : 0;
}

void llama_file_free(LlamaFile *f) {
    if (!f) return;
    stack_model_free(&f->m);
    llama2c_tok_free(&f->tok);
    memset(f, 0, sizeof *f);
    f->bos_id = f->eos_id = -1;
}
