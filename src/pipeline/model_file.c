/* model_file.c — see model_file.h. */
#include "pipeline/model_file.h"
#include "core/errmsg.h"
#include "model/checkpoint.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int model_file_find_default(char *path, size_t n) {
    const char *env = getenv("ATTNVIZ_MODEL");
    if (env && *env) { snprintf(path, n, "%s", env); return 0; }
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        const char *rel[] = {"/../samples/models/" MODEL_FILE_DEFAULT_NAME,
                             "/../../samples/models/" MODEL_FILE_DEFAULT_NAME,
                             "/../share/attnviz/models/" MODEL_FILE_DEFAULT_NAME};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char candidate[PATH_MAX + 64], real[PATH_MAX];
            snprintf(candidate, sizeof candidate, "%s%s", exe, rel[i]);
            if (access(candidate, R_OK) != 0) continue;
            snprintf(path, n, "%s", realpath(candidate, real) ? real : candidate);
            return 0;
        }
    }
    snprintf(path, n, "%s/models/%s", ATTNVIZ_DATADIR, MODEL_FILE_DEFAULT_NAME);
    if (access(path, R_OK) == 0) return 0;
    return -1;
}

int model_file_load(ModelFile *f, const char *given, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    if (given) snprintf(f->path, sizeof f->path, "%s", given);
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
    return 0;
}

int model_file_coref_head(const ModelFile *f, CorefHead *out) {
    out->layer = out->head = -1;
    out->accuracy = -1;
    out->taught = 0;
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
}
