/* hf_file.c — see hf_file.h. */
#include "family/hf_file.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "family/llama_config.h"
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

static int load_tokenizer(HfFile *f, char *err, size_t errlen) {
    char a[4200], b[4200];
    if (f->m.c.family == HF_GPT2) {
        snprintf(a, sizeof a, "%s/vocab.json", f->dir);
        snprintf(b, sizeof b, "%s/merges.txt", f->dir);
        if (access(a, R_OK) != 0 || access(b, R_OK) != 0)
            return errmsg_set(err, errlen, "%s: a GPT-2 folder needs vocab.json and merges.txt (save the tokenizer "
                              "with tokenizer.save_pretrained(DIR))", f->dir);
        f->bpe = bpe_load(a, b, err, errlen);
        if (!f->bpe) return -1;
        if (bpe_vocab_size(f->bpe) > f->m.c.n_vocab)
            return errmsg_set(err, errlen, "%s: vocab.json has %d tokens but the model only %d", f->dir,
                              bpe_vocab_size(f->bpe), f->m.c.n_vocab);
        return 0;
    }
    snprintf(a, sizeof a, "%s/vocab.txt", f->dir);
    if (access(a, R_OK) != 0)
        return errmsg_set(err, errlen, "%s: a BERT folder needs vocab.txt (save the tokenizer with "
                          "tokenizer.save_pretrained(DIR))", f->dir);
    int strip;
    if (bert_case(f->dir, &f->lower, &strip, err, errlen)) return -1;
    f->wp = wordpiece_load(a, f->lower, strip, err, errlen);
    if (!f->wp) return -1;
    if (wordpiece_vocab_size(f->wp) > f->m.c.n_vocab)
        return errmsg_set(err, errlen, "%s: vocab.txt has %d tokens but the model only %d", f->dir,
                          wordpiece_vocab_size(f->wp), f->m.c.n_vocab);
    if (wordpiece_id(f->wp, "[CLS]") < 0 || wordpiece_id(f->wp, "[SEP]") < 0)
        return errmsg_set(err, errlen, "%s: vocab.txt has no [CLS] or [SEP]", f->dir);
    return 0;
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
    snprintf(f->dir, sizeof f->dir, "%s", dir);
    char path[4200];
    snprintf(path, sizeof path, "%s/config.json", dir);
    int family = folder_family(path, err, errlen);
    if (family < 0) return -1;
    if (family == HF_FILE_LLAMA) {
        f->family = HF_FILE_LLAMA;
        if (llama_file_load_tokenizer(&f->llama, dir, err, errlen) == 0) return 0;
        hf_file_free(f);
        return -1;
    }
    if (hf_config_load(&f->m.c, dir, err, errlen) != 0 || load_tokenizer(f, err, errlen) != 0) {
        hf_file_free(f);
        return -1;
    }
    f->family = f->m.c.family == HF_GPT2 ? HF_FILE_GPT2 : HF_FILE_BERT;
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
    if (family == HF_FILE_LLAMA) {
        f->family = HF_FILE_LLAMA;
        if (llama_file_load_dir(&f->llama, dir, err, errlen) == 0) return 0;
        hf_file_free(f);
        return -1;
    }
    if (hf_model_load(&f->m, dir, err, errlen) != 0 || load_tokenizer(f, err, errlen) != 0) {
        hf_file_free(f);
        return -1;
    }
    f->family = f->m.c.family == HF_GPT2 ? HF_FILE_GPT2 : HF_FILE_BERT;
    return 0;
}

static int is_llama(const HfFile *f) { return f->family == HF_FILE_LLAMA || f->family == HF_FILE_LLAMA2C; }

static int load_llama2c(HfFile *f, const char *model, const char *tokenizer, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s", model);
    f->family = HF_FILE_LLAMA2C;
    if (llama_file_load_llama2c(&f->llama, model, tokenizer, err, errlen) == 0) return 0;
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

int hf_file_token_ids(const HfFile *f, const char *text, int **ids, int *n, char *err, size_t errlen) {
    if (is_llama(f)) return llama_file_token_ids(&f->llama, text, 0, ids, n, err, errlen);
    return f->bpe ? bpe_encode(f->bpe, text, ids, n, err, errlen) : wordpiece_encode(f->wp, text, ids, n, err, errlen);
}

void hf_file_token_text(const HfFile *f, int id, char *out, size_t n) {
    if (is_llama(f)) {
        llama_file_token_text(&f->llama, id, out, n);
    } else if (f->bpe) {
        char buf[256];
        bpe_token_text(f->bpe, id, buf, sizeof buf);
        snprintf(out, n, "%s", buf[0] == ' ' && buf[1] ? buf + 1 : buf);
    } else {
        const char *t = wordpiece_token(f->wp, id);
        if (t) snprintf(out, n, "%s", t);
        else snprintf(out, n, "<%d>", id);
    }
}

int hf_file_encode(const HfFile *f, const char *text, HfInput *in, char *err, size_t errlen) {
    memset(in, 0, sizeof *in);
    int *raw = NULL, n = 0, bos = is_llama(f) && f->llama.bos_id >= 0;   /* the Llama family: BOS first */
    if ((is_llama(f) ? llama_file_token_ids(&f->llama, text, 1, &raw, &n, err, errlen)
                     : hf_file_token_ids(f, text, &raw, &n, err, errlen)) != 0)
        return -1;
    int bert = f->wp != NULL, total = n + (bert ? 2 : 0), n_pos = hf_file_shape(f).n_pos;
    if (n == bos) { free(raw); return errmsg_set(err, errlen, "the sentence has no tokens"); }
    if (total > n_pos) {
        free(raw);
        return errmsg_set(err, errlen, "the sentence is %d tokens; this model reads at most %d", total, n_pos);
    }
    in->ids = malloc((size_t)total * sizeof *in->ids);
    in->tokens = calloc((size_t)total, sizeof *in->tokens);
    if (!in->ids || !in->tokens) { free(raw); hf_input_free(in); return errmsg_set(err, errlen, "out of memory"); }
    int k = 0, mask = bert ? wordpiece_id(f->wp, "[MASK]") : -2;
    if (bert) in->ids[k++] = wordpiece_id(f->wp, "[CLS]");
    for (int i = 0; i < n; i++) in->ids[k++] = raw[i];
    if (bert) in->ids[k++] = wordpiece_id(f->wp, "[SEP]");
    free(raw);
    in->n = in->n_real = total;
    for (int i = 0; i < total; i++) {
        char buf[256];
        hf_file_token_text(f, in->ids[i], buf, sizeof buf);
        if (!(in->tokens[i] = strdup(buf))) { hf_input_free(in); return errmsg_set(err, errlen, "out of memory"); }
        in->n_masks += in->ids[i] == mask;
    }
    return 0;
}

int hf_file_pad(const HfFile *f, HfInput *in, int T, char *err, size_t errlen) {
    if (T <= in->n) return 0;
    int n_pos = hf_file_shape(f).n_pos;
    if (T > n_pos) return errmsg_set(err, errlen, "padding to %d tokens: the model reads at most %d", T, n_pos);
    char eos[256] = "";
    if (is_llama(f)) llama_file_token_text(&f->llama, llama_file_pad_id(&f->llama), eos, sizeof eos);
    const char *pad = is_llama(f) ? eos : f->bpe ? "<|endoftext|>" : "[PAD]";
    int id = is_llama(f) ? llama_file_pad_id(&f->llama) : f->bpe ? bpe_id(f->bpe, pad) : wordpiece_id(f->wp, pad);
    if (id < 0) return errmsg_set(err, errlen, "%s: the vocabulary has no %s to pad with", f->dir, pad);
    int *ids = realloc(in->ids, (size_t)T * sizeof *ids);
    if (ids) in->ids = ids;
    char **tok = ids ? realloc(in->tokens, (size_t)T * sizeof *tok) : NULL;
    if (tok) in->tokens = tok;
    if (!ids || !tok) return errmsg_set(err, errlen, "out of memory");
    for (; in->n < T; in->n++) {
        in->ids[in->n] = id;
        if (!(in->tokens[in->n] = strdup(pad))) return errmsg_set(err, errlen, "out of memory");
    }
    return 0;
}

int hf_file_causal(const HfFile *f) { return f->family != HF_FILE_BERT; }

HfShape hf_file_shape(const HfFile *f) {
    if (is_llama(f)) {
        const LlamaConfig *c = &f->llama.m.c;
        return (HfShape){c->n_layer, c->n_head, c->n_kv_head, c->head_dim, c->n_vocab, c->n_pos};
    }
    const HfConfig *c = &f->m.c;
    return (HfShape){c->n_layer, c->n_head, c->n_head, c->n_head ? c->d_model / c->n_head : 0, c->n_vocab, c->n_pos};
}

const char *hf_file_family_name(const HfFile *f) {
    return is_llama(f) ? llama_arch_name(f->llama.m.c.arch) : hf_family_name(f->m.c.family);
}

int hf_file_json(const HfFile *f, char *buf, size_t n) {
    return is_llama(f) ? llama_model_json(&f->llama.m, buf, n) : hf_model_json(&f->m, buf, n);
}

int hf_file_forward(HfFile *f, const HfInput *in, Trace *tr, const HfSteps *steps, char *err, size_t errlen) {
    const char *const *tokens = (const char *const *)in->tokens;
    if (!is_llama(f)) return hf_model_forward(&f->m, in->ids, in->n, in->n_real, tr, tokens, steps, err, errlen);
    LlamaSteps ls = steps ? (LlamaSteps){steps->all, steps->layer, steps->head} : (LlamaSteps){0, -1, -1};
    /* causal: the padding after the sentence changes none of its tokens */
    return llama_model_forward(&f->llama.m, in->ids, in->n, tr, tokens, steps ? &ls : NULL, err, errlen);
}

int hf_file_logits(HfFile *f, int pos, float *logits, char *err, size_t errlen) {
    return is_llama(f) ? llama_model_logits(&f->llama.m, pos, logits, err, errlen)
                       : hf_model_logits(&f->m, pos, logits, err, errlen);
}

int hf_file_top(HfFile *f, int pos, int k, HfCandidate *out, char *err, size_t errlen) {
    int V = hf_file_shape(f).n_vocab;
    float *lg = malloc((size_t)V * sizeof *lg);
    if (!lg) return errmsg_set(err, errlen, "out of memory");
    if (hf_file_logits(f, pos, lg, err, errlen) != 0) { free(lg); return -1; }
    float mx = -INFINITY;
    for (int v = 0; v < V; v++) if (lg[v] > mx) mx = lg[v];
    double z = 0;
    for (int v = 0; v < V; v++) z += exp((double)lg[v] - mx);
    for (int i = 0; i < k; i++) {   /* k passes: k is small */
        int best = -1;
        for (int v = 0; v < V; v++) {
            int taken = 0;
            for (int j = 0; j < i && !taken; j++) taken = out[j].id == v;
            if (!taken && (best < 0 || lg[v] > lg[best])) best = v;
        }
        out[i].id = best;
        out[i].prob = (float)(exp((double)lg[best] - mx) / z);
        hf_file_token_text(f, best, out[i].text, sizeof out[i].text);
    }
    free(lg);
    return 0;
}

void hf_input_free(HfInput *in) {
    if (!in) return;
    for (int i = 0; i < in->n && in->tokens; i++) free(in->tokens[i]);
    free(in->tokens); free(in->ids);
    memset(in, 0, sizeof *in);
}

void hf_file_free(HfFile *f) {
    if (!f) return;
    hf_model_free(&f->m);
    llama_file_free(&f->llama);
    bpe_free(f->bpe);
    wordpiece_free(f->wp);
    f->bpe = NULL;
    f->wp = NULL;
}
