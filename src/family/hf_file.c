/* hf_file.c — see hf_file.h. */
#include "family/hf_file.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "family/llama2c.h"
#include "family/llama_config.h"
#include "tokenize/tokenizer.h"
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int hf_file_is_dir(const char *path) {
    struct stat sb;
    return path && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* do_lower_case and strip_accents of DIR/tokenizer_config.json (uncased when
 * absent).  0, or -1 with err when that path is too long. */
static int bert_case(const char *dir, int *lower, int *strip, char *err, size_t errlen) {
    char path[4096];
    *lower = 1;
    *strip = -1;
    if (path_join(path, sizeof path, dir, "tokenizer_config.json", err, errlen)) return -1;
    char *text = access(path, R_OK) == 0 ? file_read_all(path, 1u << 20, NULL, NULL, 0) : NULL;
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    const cJSON *lc = cJSON_GetObjectItemCaseSensitive(j, "do_lower_case");
    const cJSON *sa = cJSON_GetObjectItemCaseSensitive(j, "strip_accents");
    if (cJSON_IsBool(lc)) *lower = cJSON_IsTrue(lc);
    if (cJSON_IsBool(sa)) *strip = cJSON_IsTrue(sa);
    cJSON_Delete(j);
    free(text);
    return 0;
}

/* GPT-2's vocab.json + merges.txt or BERT's vocab.txt, as f->m.c.family
 * says; checked against the model's vocabulary when there is a model. */
static int load_vocab_files(HfFile *f, char *err, size_t errlen) {
    char a[4200], b[4200];
    int V = f->m.c.n_vocab;
    if (f->m.c.family == STACK_GPT2) {
        snprintf(a, sizeof a, "%s/vocab.json", f->dir);
        snprintf(b, sizeof b, "%s/merges.txt", f->dir);
        if (access(a, R_OK) != 0 || access(b, R_OK) != 0)
            return errmsg_set(err, errlen, "%s: a GPT-2 folder needs tokenizer.json, or vocab.json and merges.txt "
                              "(save the tokenizer with tokenizer.save_pretrained(DIR))", f->dir);
        f->tj = tokjson_load_gpt2(a, b, err, errlen);
        if (!f->tj) return -1;
        f->tok_from = HF_TOK_GPT2_FILES;
        f->tj_bos = f->tj_eos = -1;
        if (V > 0 && tokjson_vocab_size(f->tj) > V)
            return errmsg_set(err, errlen, "%s: vocab.json has %d tokens but the model only %d", f->dir,
                              tokjson_vocab_size(f->tj), V);
        return 0;
    }
    snprintf(a, sizeof a, "%s/vocab.txt", f->dir);
    if (access(a, R_OK) != 0)
        return errmsg_set(err, errlen, "%s: a BERT folder needs tokenizer.json or vocab.txt (save the tokenizer with "
                          "tokenizer.save_pretrained(DIR))", f->dir);
    int strip;
    if (bert_case(f->dir, &f->lower, &strip, err, errlen)) return -1;
    f->tj = tokjson_load_bert(a, f->lower, strip, err, errlen);
    if (!f->tj) return -1;
    f->tok_from = HF_TOK_BERT_FILES;
    f->tj_bos = f->tj_eos = -1;
    if (V > 0 && tokjson_vocab_size(f->tj) > V)
        return errmsg_set(err, errlen, "%s: vocab.txt has %d tokens but the model only %d", f->dir,
                          tokjson_vocab_size(f->tj), V);
    if (tokjson_id(f->tj, "[CLS]") < 0 || tokjson_id(f->tj, "[SEP]") < 0)
        return errmsg_set(err, errlen, "%s: vocab.txt has no [CLS] or [SEP]", f->dir);
    return 0;
}

/* 1 if DIR/name exists (readable or not: reading it then says why not). */
static int has_file(const char *dir, const char *name) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* The text of a special token in tokenizer_config.json: a string, or an
 * AddedToken object's "content"; dflt when the key is absent; NULL when null. */
static const char *config_token(const cJSON *j, const char *key, const char *dflt) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    if (!it) return dflt;
    if (cJSON_IsObject(it)) it = cJSON_GetObjectItemCaseSensitive(it, "content");
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* true/false of key, or -1 when absent or not a boolean. */
static int config_bool(const cJSON *j, const char *key) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsBool(it) ? cJSON_IsTrue(it) : -1;
}

/* The id of the special token key (bos_token, eos_token) that flag (add_bos_token,
 * …) asks for, into *id (-1 when not asked).  0, or -1 with err. */
static int config_special_id(const HfFile *f, const cJSON *j, const char *flag, int on, const char *key,
                             const char *dflt, int *id, const char *path, char *err, size_t errlen) {
    *id = -1;
    if (!on) return 0;
    const char *tok = config_token(j, key, dflt);
    if (!tok) return errmsg_set(err, errlen, "%s: %s is true but there is no %s", path, flag, key);
    *id = tokjson_id(f->tj, tok);
    if (*id < 0) return errmsg_set(err, errlen, "%s: %s \"%.60s\" is not a token of tokenizer.json", path, key, tok);
    return 0;
}

/* tokenizer_config.json, where transformers reads it beside or instead of
 * the post-processor (hf_file.h): sets tj_config, tj_bos, tj_eos. */
static int read_tokenizer_config(HfFile *f, char *err, size_t errlen) {
    char path[4200];
    f->tj_bos = f->tj_eos = -1;
    snprintf(path, sizeof path, "%s/tokenizer_config.json", f->dir);
    if (access(path, F_OK) != 0) return 0;
    char *text = file_read_all(path, 64u << 20, NULL, err, errlen);
    if (!text) return -1;
    const char *end = text;
    cJSON *j = cJSON_ParseWithOpts(text, &end, 0);
    if (!cJSON_IsObject(j)) {
        if (j) errmsg_set(err, errlen, "%s is not a JSON object", path);
        else errmsg_set(err, errlen, "%s is not valid JSON (cut short or damaged at byte %zu)", path, (size_t)(end - text));
        cJSON_Delete(j);
        free(text);
        return -1;
    }
    free(text);
    const cJSON *cls = cJSON_GetObjectItemCaseSensitive(j, "tokenizer_class");
    char name[64] = "";
    if (cJSON_IsString(cls)) snprintf(name, sizeof name, "%s", cls->valuestring);
    size_t k = strlen(name);
    if (k > 4 && !strcmp(name + k - 4, "Fast")) name[k - 4] = '\0';
    int gemma = !strcmp(name, "GemmaTokenizer"), llama = !strcmp(name, "LlamaTokenizer") ||
                                                          !strcmp(name, "CodeLlamaTokenizer");
    int bos = config_bool(j, "add_bos_token"), eos = config_bool(j, "add_eos_token");
    f->tj_config = llama || gemma;   /* these classes rebuild the template: BOS unless add_bos_token is false */
    if (f->tj_config) bos = bos != 0;
    else {                           /* others add only what the post-processor does not */
        bos = bos > 0 && tokjson_bos_id(f->tj) < 0;
        eos = eos > 0 && tokjson_eos_id(f->tj) < 0;
    }
    int rc = config_special_id(f, j, "add_bos_token", bos, "bos_token", llama ? "<s>" : gemma ? "<bos>" : NULL,
                               &f->tj_bos, path, err, errlen) ||
             config_special_id(f, j, "add_eos_token", eos > 0, "eos_token", llama ? "</s>" : gemma ? "<eos>" : NULL,
                               &f->tj_eos, path, err, errlen) ? -1 : 0;
    cJSON_Delete(j);
    return rc;
}

/* The folder's tokenizer.json if it has one, else its vocabulary files
 * (GPT-2, BERT; a Llama-family folder has no other). */
static int load_tokenizer(HfFile *f, char *err, size_t errlen) {
    if (!has_file(f->dir, "tokenizer.json") && f->family == HF_FILE_LLAMA)
        return errmsg_set(err, errlen, "%s: a Llama-family folder needs its tokenizer.json (save it with "
                          "tokenizer.save_pretrained(DIR))", f->dir);
    if (!has_file(f->dir, "tokenizer.json")) return load_vocab_files(f, err, errlen);
    char path[4200];
    snprintf(path, sizeof path, "%s/tokenizer.json", f->dir);
    f->tj = tokjson_load(path, err, errlen);
    return f->tj ? read_tokenizer_config(f, err, errlen) : -1;
}

/* The family config.json (at path) names: HF_FILE_LLAMA for a Llama-family
 * architecture; HF_FILE_GPT2 for GPT-2 or BERT, and when the file cannot be
 * read (hf_config then says what is wrong with it); -1 with err when it names
 * a model attnviz does not read. */
static int folder_family(const char *path, char *err, size_t errlen) {
    char *text = file_read_all(path, 4u << 20, NULL, NULL, 0);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(j, "model_type");
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(j, "architectures");
    const char *type = cJSON_IsString(mt) ? mt->valuestring : NULL;
    const char *first = cJSON_IsArray(arch) && cJSON_IsString(arch->child) ? arch->child->valuestring : NULL;
    int family = HF_FILE_GPT2, hf = type && (!strcmp(type, "gpt2") || !strcmp(type, "bert"));
    for (const cJSON *a = cJSON_IsArray(arch) ? arch->child : NULL; a && !type && !hf; a = a->next)
        hf = cJSON_IsString(a) && (!strncmp(a->valuestring, "GPT2", 4) || !strncmp(a->valuestring, "Bert", 4));
    if (!cJSON_IsObject(j) || hf) family = HF_FILE_GPT2;
    else if (first ? llama_config_arch_of(first, NULL) : llama_config_arch_of(NULL, type)) family = HF_FILE_LLAMA;
    else if (first)
        family = errmsg_set(err, errlen, "%s: \"architectures\" names %s, not a model attnviz reads (GPT-2, BERT, "
                            "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, "
                            "Gemma3ForCausalLM)", path, first);
    else if (type)
        family = errmsg_set(err, errlen, "%s: model_type \"%s\" is not a family attnviz reads (gpt2, bert, llama, "
                            "mistral, qwen2, qwen3, gemma3_text)", path, type);
    cJSON_Delete(j);
    return family;
}

int hf_file_load_tokenizer(HfFile *f, const char *dir, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    if (path_join(f->dir, sizeof f->dir, dir, "", err, errlen)) return -1;
    char path[4200], quiet[8];
    snprintf(path, sizeof path, "%s/config.json", dir);
    int rc = 0, tj = has_file(dir, "tokenizer.json");
    if (tj) {   /* any family, config.json or not: it only names the family */
        if (has_file(dir, "config.json") && folder_family(path, quiet, sizeof quiet) == HF_FILE_LLAMA)
            f->family = HF_FILE_LLAMA;
    } else if (has_file(dir, "config.json")) {
        int family = folder_family(path, err, errlen);
        if (family == HF_FILE_LLAMA) f->family = HF_FILE_LLAMA;   /* load_tokenizer says it needs tokenizer.json */
        else rc = family < 0 ? -1 : hf_config_load(&f->m.c, dir, err, errlen);
    } else {   /* no config.json: the vocabulary files say the family */
        f->m.c.family = has_file(dir, "vocab.json") && has_file(dir, "merges.txt") ? STACK_GPT2
                      : has_file(dir, "vocab.txt") ? STACK_BERT : 0;
        rc = f->m.c.family ? 0 : errmsg_set(err, errlen, "%s: no tokenizer.json, and no GPT-2 (vocab.json + merges.txt) "
                                            "or BERT (vocab.txt) vocabulary files", dir);
    }
    if (rc != 0 || load_tokenizer(f, err, errlen) != 0) {
        hf_file_free(f);
        return -1;
    }
    if (!f->family && f->m.c.family) f->family = f->m.c.family == STACK_GPT2 ? HF_FILE_GPT2 : HF_FILE_BERT;
    return 0;
}

int hf_file_load(HfFile *f, const char *dir, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (access(path, R_OK) != 0)
        return errmsg_set(err, errlen, "%s has no config.json: give a folder written by save_pretrained (GPT-2, "
                          "BERT or a Llama-family model), or an attnviz .safetensors file", dir);
    int family = folder_family(path, err, errlen);
    if (family < 0) return -1;
    f->family = family == HF_FILE_LLAMA ? HF_FILE_LLAMA : 0;
    if (stack_model_load(&f->m, dir, err, errlen) != 0 || load_tokenizer(f, err, errlen) != 0) {
        hf_file_free(f);
        return -1;
    }
    if (!f->family) f->family = f->m.c.family == STACK_GPT2 ? HF_FILE_GPT2 : HF_FILE_BERT;
    return 0;
}

static int load_llama2c(HfFile *f, const char *model, const char *tokenizer, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", model);
    f->family = HF_FILE_LLAMA2C;
    snprintf(f->l2c_path, sizeof f->l2c_path, "%s", tokenizer);
    if (llama2c_load(&f->m, model, err, errlen) == 0 && llama2c_tok_load(&f->l2c, tokenizer, f->m.c.n_vocab, err, errlen) == 0)
        return 0;
    hf_file_free(f);
    return -1;
}

int hf_file_open(HfFile *f, const char *model, const char *tokenizer, char *err, size_t errlen) {
    if (tokenizer) return load_llama2c(f, model, tokenizer, err, errlen);
    return hf_file_load(f, model, err, errlen);
}

/* 1 if path ends with suffix. */
static int ends_with(const char *path, const char *suffix) {
    size_t n = strlen(path), k = strlen(suffix);
    return n >= k && !strcmp(path + n - k, suffix);
}

int hf_file_route(const char *model, const char *tokenizer, char *err, size_t errlen) {
    int dir = hf_file_is_dir(model);
    if (tokenizer && !model)
        return errmsg_set(err, errlen, "--tokenizer %s goes with a llama2.c checkpoint: --model FILE.bin --tokenizer "
                          "%s", tokenizer, tokenizer);
    if (tokenizer && dir)
        return errmsg_set(err, errlen, "--tokenizer is for a llama2.c checkpoint (--model FILE.bin); the folder %s "
                          "brings its own tokenizer: leave --tokenizer out", model);
    if (tokenizer) return HF_ROUTE_LLAMA2C;
    if (dir) return HF_ROUTE_FOLDER;
    if (model && ends_with(model, ".bin")) {
        char cfg[4200];
        const char *slash = strrchr(model, '/');
        snprintf(cfg, sizeof cfg, "%.*s%sconfig.json", slash ? (int)(slash - model) : 0, model, slash ? "/" : "");
        if (access(cfg, R_OK) != 0)   /* beside a config.json: a Hugging Face file, which model_file names */
            return errmsg_set(err, errlen, "%s looks like a llama2.c checkpoint: give its tokenizer too, --tokenizer "
                              "tokenizer.bin (tok512.bin beside stories260K.bin)", model);
    }
    return HF_ROUTE_OWN;
}

/* ---- text → tokens ---- */

int hf_file_id(const HfFile *f, const char *token) {
    if (f->tj) return tokjson_id(f->tj, token);
    for (int i = 0; f->family == HF_FILE_LLAMA2C && i < f->l2c.n; i++)
        if (!strcmp(f->l2c.piece[i], token)) return i;
    return -1;
}

const char *hf_file_tokenizer_name(const HfFile *f) {
    if (f->tok_from == HF_TOK_GPT2_FILES) return "byte-level BPE: vocab.json + merges.txt";
    if (f->tok_from == HF_TOK_BERT_FILES) return f->lower ? "WordPiece, uncased: vocab.txt" : "WordPiece, cased: vocab.txt";
    if (f->tj) {
        const char *m = tokjson_model_type(f->tj);
        return !strcmp(m, "BPE") ? "tokenizer.json: BPE" : !strcmp(m, "WordPiece") ? "tokenizer.json: WordPiece"
                                                                                    : "tokenizer.json: WordLevel";
    }
    return f->family == HF_FILE_LLAMA2C ? "SentencePiece BPE: llama2.c tokenizer.bin" : "";
}

/* tokjson_encode; text that is not UTF-8 gets one message whatever the
 * tokenizer's files: where and what is wrong (tokenizer_check_utf8). */
static int tj_encode(const HfFile *f, const char *text, int add_special, TokJsonEnc *e, char *err, size_t errlen) {
    char why[200];
    if (tokenizer_check_utf8(text, strlen(text), why, sizeof why)) {
        memset(e, 0, sizeof *e);
        return errmsg_set(err, errlen, "%s", why);
    }
    return tokjson_encode(f->tj, text, add_special, e, err, errlen);
}

int hf_file_token_ids(const HfFile *f, const char *text, int **ids, int *n, char *err, size_t errlen) {
    if (f->family == HF_FILE_LLAMA2C) return llama2c_tok_encode(&f->l2c, text, 0, 0, ids, n, err, errlen);
    TokJsonEnc e;
    if (tj_encode(f, text, 0, &e, err, errlen)) return -1;
    *ids = e.ids;
    *n = e.n;
    e.ids = NULL;
    tokjson_enc_free(&e);
    return 0;
}

/* tokenizer.json's display text of id (hf_file.h). */
static void tj_token_text(const TokJson *tj, int id, char *out, size_t n) {
    const char *spell = tokjson_token(tj, id);
    if (!spell) { snprintf(out, n, "<%d>", id); return; }
    char *s = NULL, e[64];
    const char *t = tokjson_decode(tj, &id, 1, 0, &s, e, sizeof e) == 0 ? s : "";
    if (t[0] == ' ' && t[1]) t++;
    int control = 0;
    for (const char *c = t; *c && !control; c++) control = (unsigned char)*c < 0x20 || *c == 0x7F;
    if (!*t || control || (strstr(t, "\xEF\xBF\xBD") && !strstr(spell, "\xEF\xBF\xBD")))   /* U+FFFD: not whole */
        t = spell;
    snprintf(out, n, "%s", t);
    free(s);
}

/* 1 if s[0..n) is whole UTF-8 characters (by their lead and continuation
 * bytes only). */
static int whole_utf8(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n;) {
        int k = s[i] < 0x80 ? 1 : (s[i] & 0xE0) == 0xC0 ? 2 : (s[i] & 0xF0) == 0xE0 ? 3 : (s[i] & 0xF8) == 0xF0 ? 4 : 0;
        if (!k || i + (size_t)k > n) return 0;
        for (int j = 1; j < k; j++) if ((s[i + j] & 0xC0) != 0x80) return 0;
        i += (size_t)k;
    }
    return 1;
}

/* GPT-2's vocabulary files' display text of id (hf_file.h): its bytes when
 * they are whole characters, else its spelling; one leading space dropped. */
static void gpt2_token_text(const TokJson *tj, int id, char *out, size_t n) {
    char buf[256];
    const char *spell = tokjson_token(tj, id);
    if (!spell) { snprintf(out, n, "<%d>", id); return; }
    int k = tokjson_token_bytes(tj, id, buf, sizeof buf);
    if (k < 0 || !whole_utf8((const unsigned char *)buf, (size_t)k)) snprintf(buf, sizeof buf, "%s", spell);
    snprintf(out, n, "%s", buf[0] == ' ' && buf[1] ? buf + 1 : buf);
}

/* s without the whitespace around it. */
static void trimmed(char *out, size_t n, const char *s) {
    while (*s == ' ' || *s == '\n' || *s == '\t') s++;
    size_t len = strlen(s);
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\n' || s[len - 1] == '\t')) len--;
    snprintf(out, n, "%.*s", (int)len, s);
}

void hf_file_token_text(const HfFile *f, int id, char *out, size_t n) {
    if (f->tok_from == HF_TOK_GPT2_FILES) {
        gpt2_token_text(f->tj, id, out, n);
    } else if (f->tok_from == HF_TOK_BERT_FILES) {   /* the vocabulary's spelling ("##ing") */
        const char *t = tokjson_token(f->tj, id);
        if (t) snprintf(out, n, "%s", t);
        else snprintf(out, n, "<%d>", id);
    } else if (f->tj) {
        tj_token_text(f->tj, id, out, n);
    } else if (id < 0 || id >= f->l2c.n) {   /* llama2.c's tokenizer.bin */
        snprintf(out, n, "<%d>", id);
    } else {
        const char *p = f->l2c.piece[id];
        if (id < 3) trimmed(out, n, p);   /* <unk>, "\n<s>\n", "\n</s>\n" */
        else snprintf(out, n, "%s", p[0] == ' ' && p[1] ? p + 1 : p);
    }
}

int hf_file_token_begins_word(const HfFile *f, int id) {
    if (f->tj || id < 3 || id >= f->l2c.n) return -1;   /* 0 <unk>, 1 <s>, 2 </s> */
    const char *p = f->l2c.piece[id];
    return p[0] == ' ' || !strncmp(p, "\xe2\x96\x81", 3);
}

/* in->ids, tokens (zeroed), and start/end when offsets: n of each. */
static int input_alloc(HfInput *in, int n, int offsets, char *err, size_t errlen) {
    in->ids = malloc((size_t)(n > 0 ? n : 1) * sizeof *in->ids);
    in->tokens = calloc((size_t)(n > 0 ? n : 1), sizeof *in->tokens);
    if (offsets) {
        in->start = malloc((size_t)(n > 0 ? n : 1) * sizeof *in->start);
        in->end = malloc((size_t)(n > 0 ? n : 1) * sizeof *in->end);
    }
    if (!in->ids || !in->tokens || (offsets && (!in->start || !in->end))) return errmsg_set(err, errlen, "out of memory");
    in->n = in->n_real = n;
    return 0;
}

/* tokenizer.json: ids and offsets; *n_text: the tokens of the text itself. */
static int tj_tokenize(const HfFile *f, const char *text, int add_special, HfInput *in, int *n_text, char *err,
                       size_t errlen) {
    TokJsonEnc e;
    if (tj_encode(f, text, add_special && !f->tj_config, &e, err, errlen)) return -1;
    int bos = add_special ? f->tj_bos : -1, eos = add_special ? f->tj_eos : -1;
    int len = (int)strlen(text), k = 0;
    if (input_alloc(in, e.n + (bos >= 0) + (eos >= 0), 1, err, errlen)) { tokjson_enc_free(&e); return -1; }
    *n_text = 0;
    if (bos >= 0) { in->ids[k] = bos; in->start[k] = in->end[k] = 0; k++; }
    for (int i = 0; i < e.n; i++, k++) {
        in->ids[k] = e.ids[i];
        in->start[k] = e.start[i];
        in->end[k] = e.end[i];
        *n_text += !(e.special[i] && e.start[i] == e.end[i]);   /* not one the post-processor added */
    }
    if (eos >= 0) { in->ids[k] = eos; in->start[k] = in->end[k] = len; }
    tokjson_enc_free(&e);
    return 0;
}

/* llama2.c's tokenizer.bin: ids; with add_special, its BOS. */
static int llama2c_tokenize(const HfFile *f, const char *text, int add_special, HfInput *in, int *n_text, char *err,
                            size_t errlen) {
    int *raw = NULL, n = 0, k = 0;
    if (hf_file_token_ids(f, text, &raw, &n, err, errlen) != 0) return -1;
    int bos = add_special ? LLAMA2C_BOS : -1;
    if (input_alloc(in, n + (bos >= 0), 0, err, errlen)) { free(raw); return -1; }
    if (bos >= 0) in->ids[k++] = bos;
    for (int i = 0; i < n; i++) in->ids[k++] = raw[i];
    free(raw);
    *n_text = n;
    return 0;
}

/* hf_file_tokenize, also saying how many tokens came from the text itself. */
static int tokenize_counted(const HfFile *f, const char *text, int add_special, HfInput *in, int *n_text, char *err,
                            size_t errlen) {
    memset(in, 0, sizeof *in);
    int rc = f->tj ? tj_tokenize(f, text, add_special, in, n_text, err, errlen)
                   : llama2c_tokenize(f, text, add_special, in, n_text, err, errlen);
    int mask = f->m.c.family == STACK_BERT ? hf_file_id(f, "[MASK]") : -2;
    for (int i = 0; rc == 0 && i < in->n; i++) {
        char buf[256];
        hf_file_token_text(f, in->ids[i], buf, sizeof buf);
        if (!(in->tokens[i] = strdup(buf))) rc = errmsg_set(err, errlen, "out of memory");
        in->n_masks += in->ids[i] == mask;
    }
    if (rc) hf_input_free(in);
    return rc;
}

int hf_file_tokenize(const HfFile *f, const char *text, int add_special, HfInput *in, char *err, size_t errlen) {
    int n_text;
    return tokenize_counted(f, text, add_special, in, &n_text, err, errlen);
}

int hf_file_encode(const HfFile *f, const char *text, HfInput *in, char *err, size_t errlen) {
    int n_text;
    /* a byte-level tokenizer would read any bytes; a sentence must be text */
    char why[200];
    if (tokenizer_check_utf8(text, strlen(text), why, sizeof why))
        return errmsg_set(err, errlen, "the sentence is not valid text: %s", why);
    if (tokenize_counted(f, text, 1, in, &n_text, err, errlen)) return -1;
    HfShape sh = hf_file_shape(f);
    int rc = 0;
    if (n_text == 0) rc = errmsg_set(err, errlen, "the sentence has no tokens");
    else if (in->n > sh.n_pos)
        rc = errmsg_set(err, errlen, "the text is %d tokens; this model reads at most %d (shorten it, or run its "
                        "parts one by one)", in->n, sh.n_pos);
    for (int i = 0; rc == 0 && i < in->n; i++)
        if (in->ids[i] < 0 || in->ids[i] >= sh.n_vocab)
            rc = errmsg_set(err, errlen, "%s: the token \"%s\" has id %d, outside the model's %d embeddings "
                            "(config.json vocab_size)", f->dir, in->tokens[i], in->ids[i], sh.n_vocab);
    if (rc) hf_input_free(in);
    return rc;
}

/* The Llama family pads with its end-of-text token (the causal mask hides it
 * anyway): EOS, else BOS, else 0; -1 for GPT-2 and BERT. */
static int llama_pad_id(const HfFile *f) {
    if (f->family == HF_FILE_LLAMA2C) return LLAMA2C_EOS;
    if (f->family != HF_FILE_LLAMA || !f->tj) return -1;
    int id = tokjson_eos_id(f->tj) >= 0 ? tokjson_eos_id(f->tj) : f->tj_eos;
    if (id < 0) id = tokjson_bos_id(f->tj) >= 0 ? tokjson_bos_id(f->tj) : f->tj_bos;
    return id >= 0 ? id : 0;
}

int hf_file_pad(const HfFile *f, HfInput *in, int T, char *err, size_t errlen) {
    if (T <= in->n) return 0;
    int n_pos = hf_file_shape(f).n_pos;
    if (T > n_pos) return errmsg_set(err, errlen, "padding to %d tokens: the model reads at most %d", T, n_pos);
    char eos[256] = "";
    int id = llama_pad_id(f);
    if (id >= 0) hf_file_token_text(f, id, eos, sizeof eos);
    const char *pad = id >= 0 ? eos : f->m.c.family == STACK_GPT2 ? "<|endoftext|>" : "[PAD]";
    if (id < 0) id = hf_file_id(f, pad);
    if (id < 0) return errmsg_set(err, errlen, "%s: the vocabulary has no %s to pad with", f->dir, pad);
    int *ids = realloc(in->ids, (size_t)T * sizeof *ids);
    if (ids) in->ids = ids;
    char **tok = ids ? realloc(in->tokens, (size_t)T * sizeof *tok) : NULL;
    if (tok) in->tokens = tok;
    if (!ids || !tok) return errmsg_set(err, errlen, "out of memory");
    for (int k = 0; k < 2 && in->start; k++) {   /* a pad spans nothing, after the text */
        int **v = k ? &in->end : &in->start, *p = realloc(*v, (size_t)T * sizeof *p);
        if (!p) return errmsg_set(err, errlen, "out of memory");
        *v = p;
    }
    for (; in->n < T; in->n++) {
        in->ids[in->n] = id;
        if (in->start) in->start[in->n] = in->end[in->n] = in->n ? in->end[in->n - 1] : 0;
        if (!(in->tokens[in->n] = strdup(pad))) return errmsg_set(err, errlen, "out of memory");
    }
    return 0;
}

int hf_file_causal(const HfFile *f) { return f->family != HF_FILE_BERT; }

HfShape hf_file_shape(const HfFile *f) {
    const StackConfig *c = &f->m.c;
    return (HfShape){c->n_layer, c->n_head, c->n_kv_head, c->head_dim, c->n_vocab, c->n_pos};
}

const char *hf_file_family_name(const HfFile *f) { return stack_family_name(f->m.c.family); }

int hf_file_json(const HfFile *f, char *buf, size_t n) { return stack_model_json(&f->m, buf, n); }

int hf_file_forward(HfFile *f, const HfInput *in, Trace *tr, const HfSteps *steps, char *err, size_t errlen) {
    return stack_model_forward(&f->m, in->ids, in->n, in->n_real, tr, (const char *const *)in->tokens, steps, err,
                               errlen);
}

int hf_file_logits(HfFile *f, int pos, float *logits, char *err, size_t errlen) {
    return stack_model_logits(&f->m, pos, logits, err, errlen);
}

int hf_file_attribution(HfFile *f, const HfInput *in, int pos, int token, StackAttribution *out, char *err,
                        size_t errlen) {
    return stack_model_attribution(&f->m, in->ids, in->n_real, pos, token, out, err, errlen);
}

int hf_file_set_ablation(HfFile *f, const unsigned char *mask, char *err, size_t errlen) {
    return stack_model_set_ablation(&f->m, mask, err, errlen);
}

int hf_file_top(HfFile *f, int pos, int k, HfCandidate *out, char *err, size_t errlen) {
    int V = hf_file_shape(f).n_vocab;
    float *lg = malloc((size_t)V * sizeof *lg);
    if (!lg) return errmsg_set(err, errlen, "out of memory");
    if (hf_file_logits(f, pos, lg, err, errlen) != 0) { free(lg); return -1; }
    if (k > V) k = V;
    if (k <= 0) { free(lg); return 0; }
    int n = 0;   /* out[0, n): the best so far, best first; a tie keeps the lower id */
    for (int v = 0; v < V; v++) {
        if (n == k && !(lg[v] > lg[out[k - 1].id])) continue;   /* one compare for most words */
        int at = n < k ? n++ : k - 1;
        while (at > 0 && lg[v] > lg[out[at - 1].id]) { out[at] = out[at - 1]; at--; }
        out[at].id = v;
    }
    float mx = lg[out[0].id];
    double z = 0;
    for (int v = 0; v < V; v++) z += exp((double)lg[v] - mx);
    for (int i = 0; i < k; i++) {
        out[i].prob = (float)(exp((double)lg[out[i].id] - mx) / z);
        hf_file_token_text(f, out[i].id, out[i].text, sizeof out[i].text);
    }
    free(lg);
    return 0;
}

void hf_input_free(HfInput *in) {
    if (!in) return;
    for (int i = 0; i < in->n && in->tokens; i++) free(in->tokens[i]);
    free(in->tokens); free(in->ids);
    free(in->start); free(in->end);
    memset(in, 0, sizeof *in);
}

void hf_file_free(HfFile *f) {
    if (!f) return;
    stack_model_free(&f->m);
    llama2c_tok_free(&f->l2c);
    tokjson_free(f->tj);
    f->tj = NULL;
}
