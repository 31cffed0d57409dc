/* llama_file.c — see llama_file.h. */
#include "family/llama_file.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "family/llama2c.h"
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    snprintf(f->tokenizer_kind, sizeof f->tokenizer_kind, "llama2.c tokenizer.bin, SentencePiece BPE");
    return 0;
}

/* tokenizer_config.json's add_bos_token (*add -1 when it does not say) and
 * the text of its bos_token and eos_token (a string or {"content": …}; ""
 * when absent).  A missing or unreadable file says nothing. */
static void tokenizer_config(const char *dir, int *add, char *bos, char *eos, size_t n) {
    char path[4200];
    *add = -1;
    bos[0] = eos[0] = '\0';
    snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
    char *text = access(path, R_OK) == 0 ? file_read_all(path, 64u << 20, NULL, NULL, 0) : NULL;
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *ab = cJSON_GetObjectItemCaseSensitive(j, "add_bos_token");
    if (cJSON_IsBool(ab)) *add = cJSON_IsTrue(ab);
    const char *key[2] = {"bos_token", "eos_token"};
    char *out[2] = {bos, eos};
    for (int i = 0; i < 2; i++) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, key[i]);
        if (cJSON_IsObject(t)) t = cJSON_GetObjectItemCaseSensitive(t, "content");
        if (cJSON_IsString(t)) snprintf(out[i], n, "%s", t->valuestring);
    }
    cJSON_Delete(j);
}

/* DIR/tokenizer.json and what says how a sentence starts.  0, or -1 with err. */
static int load_tokenizer_json(LlamaFile *f, const char *dir, char *err, size_t errlen) {
    if (path_join(f->tokenizer, sizeof f->tokenizer, dir, "tokenizer.json", err, errlen)) return -1;
    if (access(f->tokenizer, R_OK) != 0)
        return errmsg_set(err, errlen, "%s: a Llama-family folder needs its tokenizer.json (save it with "
                          "tokenizer.save_pretrained(DIR))", dir);
    if (!(f->tj = tokjson_load(f->tokenizer, err, errlen))) return -1;
    int V = f->m.c.n_vocab, add;
    if (tokjson_vocab_size(f->tj) > V)
        return errmsg_set(err, errlen, "%s has %d tokens but the model only %d (config.json vocab_size)", f->tokenizer,
                          tokjson_vocab_size(f->tj), V);
    char bos[256], eos[256];
    tokenizer_config(dir, &add, bos, eos, sizeof bos);
    f->bos_id = tokjson_bos_id(f->tj);
    if (f->bos_id < 0 && *bos) f->bos_id = tokjson_id(f->tj, bos);
    if (f->bos_id < 0 && f->m.c.bos_id >= 0 && f->m.c.bos_id < V) f->bos_id = f->m.c.bos_id;
    f->add_bos = f->bos_id >= 0 && (add >= 0 ? add : tokjson_bos_id(f->tj) >= 0);
    f->eos_id = tokjson_eos_id(f->tj);
    if (f->eos_id < 0 && *eos) f->eos_id = tokjson_id(f->tj, eos);
    snprintf(f->tokenizer_kind, sizeof f->tokenizer_kind, "tokenizer.json, %s", tokjson_model_type(f->tj));
    return 0;
}

int llama_file_load_dir(LlamaFile *f, const char *dir, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    f->bos_id = f->eos_id = -1;
    if (llama_model_load(&f->m, dir, err, errlen) != 0) return -1;
    if (load_tokenizer_json(f, dir, err, errlen) == 0) return 0;
    llama_file_free(f);
    return -1;
}

int llama_file_load_tokenizer(LlamaFile *f, const char *dir, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    f->bos_id = f->eos_id = -1;
    if (llama_config_load(&f->m.c, dir, err, errlen) == 0 && load_tokenizer_json(f, dir, err, errlen) == 0) return 0;
    llama_file_free(f);
    return -1;
}

int llama_file_token_ids(const LlamaFile *f, const char *text, int bos, int **ids, int *n, char *err, size_t errlen) {
    if (!f->tj) return llama2c_tok_encode(&f->tok, text, bos && f->add_bos, 0, ids, n, err, errlen);
    TokJsonEnc e = {0};
    if (tokjson_encode(f->tj, text, 0, &e, err, errlen) != 0) return -1;
    int b = bos && f->add_bos;
    *ids = malloc((size_t)(e.n + b + 1) * sizeof **ids);
    if (!*ids) { tokjson_enc_free(&e); return errmsg_set(err, errlen, "out of memory"); }
    if (b) (*ids)[0] = f->bos_id;
    memcpy(*ids + b, e.ids, (size_t)e.n * sizeof **ids);
    *n = e.n + b;
    tokjson_enc_free(&e);
    return 0;
}

/* s without the whitespace around it. */
static void trimmed(char *out, size_t n, const char *s) {
    while (*s == ' ' || *s == '\n' || *s == '\t') s++;
    size_t len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\n' || s[len - 1] == '\t')) len--;
    snprintf(out, n, "%.*s", (int)len, s);
}

/* 1 if s is printable UTF-8 text: no control character, no U+FFFD (the
 * decoder's mark for bytes that are not a whole character). */
static int printable(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (p[0] == 0xEF && p[1] == 0xBF && p[2] == 0xBD)) return 0;
    return 1;
}

/* A tokenizer.json token as a picture shows it. */
static void tokjson_text(const TokJson *tj, int id, char *out, size_t n) {
    char *s = NULL, err[128];
    const char *spelling = tokjson_token(tj, id);
    if (tokjson_decode(tj, &id, 1, 0, &s, err, sizeof err) == 0 && s && *s && printable(s))
        snprintf(out, n, "%s", s[0] == ' ' && s[1] ? s + 1 : s);
    else if (spelling)
        snprintf(out, n, "%s", spelling);
    else
        snprintf(out, n, "<%d>", id);
    free(s);
}

void llama_file_token_text(const LlamaFile *f, int id, char *out, size_t n) {
    if (f->tj) { tokjson_text(f->tj, id, out, n); return; }
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
    llama_model_free(&f->m);
    llama2c_tok_free(&f->tok);
    tokjson_free(f->tj);
    memset(f, 0, sizeof *f);
    f->bos_id = f->eos_id = -1;
}
