/* model_file.c — see model_file.h. */
#include "net/model_file.h"
#include "core/datadir.h"
#include "core/errmsg.h"
#include "model/checkpoint.h"
#include "model/decode.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The shipped models' short names (run --model taught) and file names. */
static const struct { const char *name, *file, *what; } shipped[] = {
    {"taught", MODEL_FILE_DEFAULT_NAME, "one encoder head and one cross-attention head taught with gold links"},
    {"untaught", MODEL_FILE_UNTAUGHT_NAME, "same data and size, no head taught"},
};

/* A shipped model file, where core/datadir.h looks.  0 or -1. */
static int find_shipped(const char *file, char *path, size_t n) {
    char rel[256];
    snprintf(rel, sizeof rel, "models/%s", file);
    return datadir_find(rel, path, n);
}

int model_file_find_default(char *path, size_t n) {
    const char *env = getenv("ATTNVIZ_MODEL");
    if (env && *env) { snprintf(path, n, "%s", env); return 0; }
    return find_shipped(MODEL_FILE_DEFAULT_NAME, path, n);
}

int model_file_shipped(int i, const char **name, const char **what, char *path, size_t n) {
    if (i < 0 || i >= (int)(sizeof shipped / sizeof shipped[0])) return -1;
    *name = shipped[i].name;
    *what = shipped[i].what;
    if (find_shipped(shipped[i].file, path, n) != 0) path[0] = '\0';
    return 0;
}

/* The target-language masks (decode.h) from the metadata's
 * train_target_tokens_fr/_vi, for each language that has one.  0, or -1. */
static int load_language_mask(ModelFile *f) {
    static const char *const lang[2] = {"fr", "vi"};
    static const int tag[2] = {VOCAB_2FR, VOCAB_2VI};
    int V = f->m.config.vocab_size, rc = 0;
    unsigned char *set = malloc((size_t)(V > 0 ? V : 1));
    if (!set) return -1;
    for (int k = 0; k < 2 && !rc; k++)
        if (checkpoint_meta_target_tokens(f->metadata, lang[k], V, set)) rc = decode_set_lang_mask(&f->m, tag[k], set);
    free(set);
    return rc;
}

void model_file_no_language_mask(ModelFile *f) {
    decode_set_lang_mask(&f->m, VOCAB_2FR, NULL);
    decode_set_lang_mask(&f->m, VOCAB_2VI, NULL);
}

/* "no model 'X' (no such file or folder); shipped models: taught, untaught …". */
static int no_such_model(const char *given, char *err, size_t errlen) {
    char names[256] = "";
    size_t k = 0;
    for (int i = 0; i < (int)(sizeof shipped / sizeof shipped[0]) && k < sizeof names; i++)
        k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", i ? ", " : "", shipped[i].name);
    return errmsg_set(err, errlen, "no model '%s' (no such file or folder); shipped models: %s (attnviz info), or "
                      "give a .safetensors file or a model folder", given, names);
}

int model_file_load(ModelFile *f, const char *given, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    int named = -1;
    for (int i = 0; given && i < (int)(sizeof shipped / sizeof shipped[0]); i++)
        if (!strcmp(given, shipped[i].name)) named = i;
    if (named >= 0) {
        if (find_shipped(shipped[named].file, f->path, sizeof f->path) != 0)
            return errmsg_set(err, errlen, "the shipped model '%s' (%s) is not in samples/models/ next to the binary nor "
                              "in %s/models; run `make model` to train it", given, shipped[named].file, ATTNVIZ_DATADIR);
    } else if (given && access(given, F_OK) != 0) {
        return no_such_model(given, err, errlen);
    } else if (given) snprintf(f->path, sizeof f->path, "%s", given);
    else if (model_file_find_default(f->path, sizeof f->path) != 0)
        return errmsg_set(err, errlen, "no model found (looked in $ATTNVIZ_MODEL, samples/models/ next to the binary "
                          "and %s/models); give --model PATH", ATTNVIZ_DATADIR);
    char **words = NULL;
    int n_words = 0;
    if (checkpoint_load(f->path, &f->m, &words, &n_words, &f->metadata, err, errlen) != 0) {
        char dir[4096], cfg[4200];
        snprintf(dir, sizeof dir, "%s", f->path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        snprintf(cfg, sizeof cfg, "%s/config.json", slash ? dir : ".");
        if (access(cfg, R_OK) == 0)   /* a Hugging Face file given instead of its folder */
            errmsg_set(err, errlen, "%s is not an attnviz model; it sits in a Hugging Face folder: give the folder "
                       "(--model %s)", f->path, slash ? dir : ".");
        model_file_free(f);
        return -1;
    }
    char why[512];
    int rc = vocab_build(&f->v, (const char *const *)words, n_words, why, sizeof why);
    checkpoint_free_vocab(words, n_words);
    if (rc != 0) {
        errmsg_set(err, errlen, "model %s: bad vocabulary: %s", f->path, why);
        model_file_free(f);
        return -1;
    }
    char lex_err[256];
    if (referents_load_shipped(&f->referents, lex_err, sizeof lex_err) != 0) referents_free(&f->referents);
    if (load_language_mask(f) != 0 || decode_set_sentence_ends(&f->m, &f->v) != 0) {
        errmsg_set(err, errlen, "out of memory");
        model_file_free(f);
        return -1;
    }
    return 0;
}

int model_file_coref_head(const ModelFile *f, CorefHead *out) {
    out->layer = out->head = -1;
    out->accuracy = -1;
    out->taught = 0;
    out->referents = f->referents.loaded ? &f->referents : NULL;
    if (!checkpoint_meta_coref_head(f->metadata, f->m.config.n_enc_layers, f->m.config.n_heads, &out->layer,
                                    &out->head, &out->accuracy)) {
        out->layer = out->head = -1;
        return 0;
    }
    char id[64];
    snprintf(id, sizeof id, "encoder.%d.self", out->layer);
    out->taught = checkpoint_meta_head_supervised(f->metadata, id, out->head);
    return 1;
}

void model_file_free(ModelFile *f) {
    if (!f) return;
    vocab_free(&f->v);
    model_free(&f->m);
    free(f->metadata);
    f->metadata = NULL;
    referents_free(&f->referents);
}
