/* info.c — `attnviz info`: a model file's configuration, parameter count,
 * tensors and metadata (or the configuration as one JSON object).
 *
 *   attnviz info [--model PATH] [--json] */
#include "cli/cli.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "family/hf_file.h"
#include "pipeline/model_file.h"
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void info_usage(FILE *f) {
    fprintf(f, "usage: attnviz info [--model NAME|PATH|DIR] [--json]\n\n"
               "Prints a model's configuration, parameter count, tensors and metadata,\n"
               "and lists the shipped models.\n"
               "  --model NAME|PATH|DIR  taught or untaught (the shipped models), a checkpoint\n"
               "                 (.safetensors) written by attnviz (default: taught),\n"
               "                 or a GPT-2 / BERT folder in the Hugging Face layout\n"
               "  --json         print the configuration as one JSON object\n");
}

static void print_info(const ModelFile *mf) {
    const ModelConfig *c = &mf->m.config;
    printf("model:        %s\n", mf->path);
    printf("format:       %s version %s\n", CHECKPOINT_FORMAT, CHECKPOINT_VERSION);
    printf("architecture: %s, %s-norm\n", model_arch_name(c->arch), c->prenorm ? "pre" : "post");
    printf("d_model:      %d   heads: %d   d_k: %d   d_ff: %d\n", c->d_model, c->n_heads, c->d_model / c->n_heads,
           c->d_ff);
    printf("layers:       encoder %d, decoder %d\n", c->n_enc_layers, c->n_dec_layers);
    printf("max_len:      %d\n", c->max_len);
    printf("vocabulary:   %d tokens\n", c->vocab_size);
    printf("parameters:   %zu\n", mf->m.num_params);
    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(c, NULL, tab, MODEL_MAX_TENSORS);
    printf("tensors:\n");
    for (int t = 0; t < nt; t++) {
        printf("  %-14s [", tab[t].name);
        for (int d = 0; d < tab[t].ndim; d++) printf("%s%d", d ? ", " : "", tab[t].shape[d]);
        printf("]\n");
    }
    cJSON *mj = cJSON_Parse(mf->metadata);
    for (const cJSON *it = mj ? mj->child : NULL; it; it = it->next) {
        if (!strcmp(it->string, "format") || !strcmp(it->string, "version") || !strcmp(it->string, "config") ||
            !strcmp(it->string, "vocab") || !cJSON_IsString(it))
            continue;
        unsigned char *set = NULL;   /* a token bitmap: say what it holds, not its 1,000 digits */
        if ((!strncmp(it->string, "train_source_tokens", 19) || !strncmp(it->string, "train_target_tokens", 19) ||
             !strcmp(it->string, "train_antecedent_tokens")) &&
            (set = malloc((size_t)mf->v.size + 1)) && checkpoint_token_hex_parse(it->valuestring, mf->v.size, set)) {
            int n = 0;
            for (int i = 0; i < mf->v.size; i++) n += set[i];
            printf("%s: %d of %d vocabulary words (hex bitmap)\n", it->string, n, mf->v.size);
            free(set);
            continue;
        }
        free(set);
        printf("%s: %s\n", it->string, it->valuestring);
    }
    cJSON_Delete(mj);
    printf("shipped models (--model NAME):\n");
    const char *name, *what;
    char path[4096];
    for (int i = 0; model_file_shipped(i, &name, &what, path, sizeof path) == 0; i++)
        printf("  %-9s %s\n            %s\n", name, *path ? path : "(not found: make model trains it)", what);
}

/* A GPT-2 / BERT folder: family, shapes, parameters, dtype, tokenizer. */
static int info_hf(const char *dir, int as_json) {
    HfFile f;
    char err[1024], js[1024];
    if (hf_file_load(&f, dir, err, sizeof err) != 0) { cli_error("%s", err); return 1; }
    const HfConfig *c = &f.m.c;
    hf_model_json(&f.m, js, sizeof js);
    if (as_json) {
        printf("%s\n", js);
    } else {
        int gpt = c->family == HF_GPT2;
        printf("model:        %s\n", f.dir);
        printf("format:       Hugging Face folder (config.json + safetensors)\n");
        printf("family:       %s, %s, %s-norm, %s\n", hf_family_name(c->family),
               gpt ? "decoder-only (masked self-attention)" : "encoder-only (self-attention)", gpt ? "pre" : "post",
               c->act_name);
        printf("d_model:      %d   heads: %d   d_k: %d   d_ff: %d\n", c->d_model, c->n_head, c->d_model / c->n_head, c->d_ff);
        printf("layers:       %d (maps %s.0.%s … %s.%d.%s)\n", c->n_layer, gpt ? "decoder" : "encoder",
               gpt ? "masked_self" : "self", gpt ? "decoder" : "encoder", c->n_layer - 1, gpt ? "masked_self" : "self");
        printf("positions:    %d\n", c->n_pos);
        printf("vocabulary:   %d tokens (%s)\n", c->n_vocab, hf_file_tokenizer_name(&f));
        printf("parameters:   %zu\n", f.m.n_params);
        printf("dtype:        %s (computed in float32)\n", f.m.dtype);
        printf("layernorm:    eps %g\n", (double)c->ln_eps);
        if (!gpt) printf("masked-LM:    %s\n", f.m.has_mlm ? "yes (run fills [MASK])" : "no (cls.predictions.* absent)");
        printf("tensors:      %d in %d file(s)\n", f.m.st.n, f.m.st.n_files);
        for (int i = 0; i < f.m.st.n; i++) {
            const StTensor *t = &f.m.st.t[i];
            printf("  %-52s %-5s [", t->name, t->dtype);
            for (int d = 0; d < t->ndim; d++) printf("%s%ld", d ? ", " : "", t->shape[d]);
            printf("]\n");
        }
    }
    hf_file_free(&f);
    return 0;
}

int cli_info(int argc, char **argv) {
    const char *path = NULL;
    int as_json = 0;
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--model", &path}};
        int taken = cli_take_option(argc, argv, &i, opts, 1, "info");
        if (taken < 0) return 2;
        if (taken) continue;
        if (cli_is_help(argv[i])) { info_usage(stdout); return 0; }
        if (!strcmp(argv[i], "--json")) as_json = 1;
        else return cli_unknown_option("info", argv[i]);
    }
    if (hf_file_is_dir(path)) return info_hf(path, as_json);
    ModelFile mf;
    char err[1024];
    if (model_file_load(&mf, path, err, sizeof err) != 0) { cli_error("%s", err); return 1; }
    if (as_json) {
        char cfg[1024];
        model_config_json(&mf.m.config, cfg, sizeof cfg);
        printf("%s\n", cfg);
    } else {
        print_info(&mf);
    }
    model_file_free(&mf);
    return 0;
}
