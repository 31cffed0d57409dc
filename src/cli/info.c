/* info.c — `attnviz info`: a model file's configuration, parameter count,
 * tensors and metadata (or the configuration as one JSON object).
 *
 *   attnviz info [--model PATH|DIR] [--tokenizer TOK.bin] [--json] */
#include "cli/cli.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "family/hf_file.h"
#include "pipeline/model_file.h"
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void info_usage(FILE *f) {
    fprintf(f, "usage: attnviz info [--model NAME|PATH|DIR] [--tokenizer TOK.bin] [--json] [--verbose]\n\n"
               "Prints a model's configuration and parameter count, how it was trained, its\n"
               "held-out scores and knock-out table, and lists the shipped models.\n"
               "  --model NAME|PATH|DIR  taught or untaught (the shipped models), a checkpoint\n"
               "                 (.safetensors) written by attnviz (default: taught), a folder\n"
               "                 in the Hugging Face layout (GPT-2, BERT, Llama, Mistral, Qwen2,\n"
               "                 Qwen3, Gemma 3), or a llama2.c FILE.bin with --tokenizer\n"
               "  --tokenizer TOK.bin  the tokenizer.bin of a llama2.c checkpoint\n"
               "  --json         print the configuration as one JSON object\n"
               "  --verbose      attnviz's own models: every tensor and metadata field as stored\n"
               "A Llama-family model shows its query and key/value heads, head size, RoPE base\n"
               "and scaling, sliding window, vocabulary and parameters.\n");
}

/* The metadata string `key` parsed as JSON (NULL when absent or not JSON); the caller deletes it. */
static cJSON *meta_json(const cJSON *mj, const char *key) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(mj, key);
    return cJSON_IsString(it) ? cJSON_Parse(it->valuestring) : NULL;
}

/* A number at a path of objects ("a", "b" → o.a.b), or NAN. */
static double num_at(const cJSON *o, const char *a, const char *b) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

/* A metadata string, or "?" */
static const char *meta_text(const cJSON *mj, const char *key) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(mj, key);
    return cJSON_IsString(it) ? it->valuestring : "?";
}

/* "trained:" and "taught heads:" from the training metadata. */
static void print_training(const cJSON *mj) {
    if (!cJSON_GetObjectItemCaseSensitive(mj, "train_steps")) return;
    printf("trained:      %s steps on %s, %s s (%s tokens/s), final loss %s\n", meta_text(mj, "train_steps"),
           meta_text(mj, "train_data"), meta_text(mj, "train_seconds"), meta_text(mj, "train_tokens_per_second"),
           meta_text(mj, "train_final_loss"));
    cJSON *sup = meta_json(mj, "supervised_heads");
    printf("taught heads: ");
    int n = 0;
    for (const cJSON *h = sup ? sup->child : NULL; h; h = h->next, n++) {
        const cJSON *map = cJSON_GetObjectItemCaseSensitive(h, "map"), *tg = cJSON_GetObjectItemCaseSensitive(h, "target");
        printf("%s%s head %.0f → %s (weight %g)", n ? "; " : "", cJSON_IsString(map) ? map->valuestring : "?",
               num_at(h, "head", NULL), cJSON_IsString(tg) ? tg->valuestring : "?", num_at(h, "weight", NULL));
    }
    printf("%s\n", n ? "" : "none (no head was told where to look)");
    cJSON_Delete(sup);
}

/* "held out:" from eval_heldout (attnviz eval --write-metadata). */
static void print_heldout(const cJSON *mj) {
    cJSON *e = meta_json(mj, "eval_heldout");
    if (!e) return;
    printf("held out:     %.0f pairs: exact match fr %.3f, vi %.3f; pronoun accuracy %.3f", num_at(e, "pairs", NULL),
           num_at(e, "translation_exact_match", "fr"), num_at(e, "translation_exact_match", "vi"),
           num_at(e, "pronoun_accuracy", NULL));
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(e, "coreference_head");
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(ch, "map");
    if (cJSON_IsString(map))
        printf("\ncoreference:  %s head %.0f links a pronoun to its antecedent in %.3f of held-out sentences",
               map->valuestring, num_at(ch, "head", NULL), num_at(ch, "accuracy", NULL));
    printf("\n");
    cJSON_Delete(e);
}

/* One row of the knock-out table. */
static void ablation_row(const char *head, const cJSON *r) {
    printf("  %-29s %8.3f %8.3f %8.3f %9.3f %9.3f\n", head, num_at(r, "pronoun_accuracy", NULL),
           num_at(cJSON_GetObjectItemCaseSensitive(r, "pronoun_accuracy_by_language"), "fr", NULL),
           num_at(cJSON_GetObjectItemCaseSensitive(r, "pronoun_accuracy_by_language"), "vi", NULL),
           num_at(r, "translation_exact_match", "fr"), num_at(r, "translation_exact_match", "vi"));
}

/* eval_ablation (attnviz eval --ablation) as a table, the most harmful knock-out first. */
static void print_ablation(const cJSON *mj) {
    cJSON *e = meta_json(mj, "eval_ablation");
    if (!e) return;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "knock_out");
    printf("knock-outs:   one head at a time, its output %s before W_O, on %.0f held-out pairs (attnviz eval --ablation)\n",
           cJSON_IsString(k) && !strcmp(k->valuestring, "zero") ? "zeroed" : "replaced", num_at(e, "pairs", NULL));
    printf("  %-29s %8s %8s %8s %9s %9s\n", "head knocked out", "pronoun", "fr", "vi", "exact fr", "exact vi");
    ablation_row("none (the whole model)", cJSON_GetObjectItemCaseSensitive(e, "baseline"));
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(e, "ablation");
    for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next) {
        char head[64];
        const cJSON *map = cJSON_GetObjectItemCaseSensitive(r, "map");
        snprintf(head, sizeof head, "%s head %.0f", cJSON_IsString(map) ? map->valuestring : "?", num_at(r, "head", NULL));
        ablation_row(head, r);
    }
    cJSON_Delete(e);
}

/* Every metadata field as it is stored (--verbose); token bitmaps as counts. */
static void print_metadata(const ModelFile *mf, const cJSON *mj) {
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
}

static void print_tensors(const ModelConfig *c) {
    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(c, NULL, tab, MODEL_MAX_TENSORS);
    printf("tensors:\n");
    for (int t = 0; t < nt; t++) {
        printf("  %-14s [", tab[t].name);
        for (int d = 0; d < tab[t].ndim; d++) printf("%s%d", d ? ", " : "", tab[t].shape[d]);
        printf("]\n");
    }
}

/* A summary: configuration, training, held-out scores, the knock-out table;
 * verbose adds the tensors and every metadata field as stored. */
static void print_info(const ModelFile *mf, int verbose) {
    const ModelConfig *c = &mf->m.config;
    printf("model:        %s\n", mf->path);
    printf("format:       %s version %s\n", CHECKPOINT_FORMAT, CHECKPOINT_VERSION);
    printf("architecture: %s, %s-norm\n", model_arch_name(c->arch), c->prenorm ? "pre" : "post");
    printf("d_model:      %d   heads: %d   d_k: %d   d_ff: %d\n", c->d_model, c->n_heads, c->d_model / c->n_heads,
           c->d_ff);
    printf("layers:       encoder %d, decoder %d\n", c->n_enc_layers, c->n_dec_layers);
    printf("max_len:      %d\n", c->max_len);
    printf("vocabulary:   %d tokens\n", c->vocab_size);
    printf("parameters:   %zu%s\n", mf->m.num_params, verbose ? "" : "   (--verbose lists the tensors and every metadata field)");
    cJSON *mj = cJSON_Parse(mf->metadata);
    if (verbose) {
        print_tensors(c);
        print_metadata(mf, mj);
    } else {
        print_training(mj);
        print_heldout(mj);
        print_ablation(mj);
    }
    cJSON_Delete(mj);
    printf("shipped models (--model NAME):\n");
    const char *name, *what;
    char path[4096];
    for (int i = 0; model_file_shipped(i, &name, &what, path, sizeof path) == 0; i++)
        printf("  %-9s %s\n            %s\n", name, *path ? path : "(not found: make model trains it)", what);
}

/* "base 10000, no scaling", "base 500000, llama3 scaling: factor 32, …". */
static void rope_text(const LlamaRope *r, char *buf, size_t n) {
    if (r->type == LLAMA_ROPE_LINEAR)
        snprintf(buf, n, "base %g, linear scaling: positions ÷ %g", r->theta, r->factor);
    else if (r->type == LLAMA_ROPE_LLAMA3)
        snprintf(buf, n, "base %g, llama3 scaling: factor %g, low_freq_factor %g, high_freq_factor %g, original "
                 "context %g", r->theta, r->factor, r->low_freq_factor, r->high_freq_factor, r->orig_max_pos);
    else
        snprintf(buf, n, "base %g, no scaling", r->theta);
}

/* The Llama family (a folder or a llama2.c file): what `info` prints. */
static void print_llama(const HfFile *f) {
    const LlamaFile *lf = &f->llama;
    const LlamaConfig *c = &lf->m.c;
    int n_slide = 0, groups = c->n_head / c->n_kv_head;
    for (int l = 0; l < c->n_layer; l++) n_slide += c->layer_kind[l] == LLAMA_LAYER_SLIDING;
    char rope[256], rope2[256];
    rope_text(&c->rope[LLAMA_LAYER_FULL], rope, sizeof rope);
    rope_text(&c->rope[LLAMA_LAYER_SLIDING], rope2, sizeof rope2);
    printf("model:        %s\n", f->dir);
    if (f->family == HF_FILE_LLAMA2C) printf("format:       llama2.c checkpoint (version 0), F32\n");
    else printf("format:       Hugging Face folder (config.json + safetensors)\n");
    printf("family:       %s (%s), decoder-only (masked self-attention), RMSNorm pre-norm%s, %s feed-forward (%s)\n",
           llama_arch_name(c->arch), c->arch == LLAMA_ARCH_LLAMA2C ? "the Llama architecture" : c->arch_name,
           c->sandwich ? " and post-norm" : "",
           c->act == LLAMA_ACT_SILU ? "SwiGLU" : "GeGLU", c->act_name);
    printf("layers:       %d (maps decoder.0.masked_self … decoder.%d.masked_self)\n", c->n_layer, c->n_layer - 1);
    printf("heads:        %d query, %d key/value (%s)\n", c->n_head, c->n_kv_head,
           c->n_kv_head == c->n_head ? "every head its own: multi-head attention"
           : c->n_kv_head == 1        ? "all share one: multi-query attention"
                                      : "grouped-query attention");
    for (int kv = 0; c->n_kv_head < c->n_head && kv < c->n_kv_head; kv++) {
        if (kv == 3 && c->n_kv_head > 4) { printf(", …"); kv = c->n_kv_head - 2; continue; }
        if (groups == 1) continue;
        printf(kv ? ", %d–%d K/V head %d" : "              heads %d–%d share K/V head %d", kv * groups,
               kv * groups + groups - 1, kv);
    }
    if (c->n_kv_head < c->n_head) printf("\n");
    printf("head size:    %d   d_model: %d   d_ff: %d%s\n", c->head_dim, c->d_model, c->d_ff,
           c->qk_norm ? "   q/k RMSNorm per head" : "");
    printf("RoPE:         %s; %s\n", rope,
           c->rope_layout == LLAMA_ROPE_PAIRS ? "pairs (2i, 2i+1) turned together (llama2.c)"
                                              : "pairs (i, i + head size/2) turned together (rotate-half)");
    if (n_slide) printf("window:       %d tokens on %d of %d layers (sliding-window attention; their RoPE: %s)\n",
                        c->window, n_slide, c->n_layer, rope2);
    else printf("window:       none (every token sees all earlier tokens)\n");
    printf("positions:    %d\n", c->n_pos);
    if (f->family == HF_FILE_LLAMA2C)
        printf("vocabulary:   %d tokens (%s, %s)\n", c->n_vocab, hf_file_tokenizer_name(f), lf->tokenizer);
    else printf("vocabulary:   %d tokens (%s)\n", c->n_vocab, hf_file_tokenizer_name(f));
    printf("parameters:   %zu\n", lf->m.n_params);
    printf("dtype:        %s (computed in float32)\n", lf->m.dtype);
    printf("rmsnorm:      eps %g%s\n", (double)c->rms_eps, c->norm_plus_one ? ", scaled by 1 + w" : "");
    printf("output:       %s\n", c->tie_embeddings ? "tied to the token embedding" : "its own matrix");
    if (f->family == HF_FILE_LLAMA2C) return;
    printf("tensors:      %d in %d file(s)\n", lf->m.st.n, lf->m.st.n_files);
    for (int i = 0; i < lf->m.st.n; i++) {
        const StTensor *t = &lf->m.st.t[i];
        printf("  %-52s %-5s [", t->name, t->dtype);
        for (int d = 0; d < t->ndim; d++) printf("%s%ld", d ? ", " : "", t->shape[d]);
        printf("]\n");
    }
}

/* A foreign model: family, shapes, parameters, dtype, tokenizer. */
static int info_hf(const char *model, const char *tokenizer, int as_json) {
    HfFile f;
    char err[1024], js[1024];
    if (hf_file_open(&f, model, tokenizer, err, sizeof err) != 0) { cli_error("%s", err); return 1; }
    const HfConfig *c = &f.m.c;
    hf_file_json(&f, js, sizeof js);
    if (as_json) {
        printf("%s\n", js);
    } else if (f.family >= HF_FILE_LLAMA) {
        print_llama(&f);
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
    const char *path = NULL, *tokenizer = NULL;
    int as_json = 0, verbose = 0;
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--model", &path}, {"--tokenizer", &tokenizer}};
        int taken = cli_take_option(argc, argv, &i, opts, 2, "info");
        if (taken < 0) return 2;
        if (taken) continue;
        if (cli_is_help(argv[i])) { info_usage(stdout); return 0; }
        if (!strcmp(argv[i], "--json")) as_json = 1;
        else if (!strcmp(argv[i], "--verbose")) verbose = 1;
        else return cli_unknown_option("info", argv[i]);
    }
    char err[1024];
    int route = hf_file_route(path, tokenizer, err, sizeof err);
    if (route < 0) { cli_error("%s", err); return 1; }
    if (route != HF_ROUTE_OWN) return info_hf(path, tokenizer, as_json);
    ModelFile mf;
    if (model_file_load(&mf, path, err, sizeof err) != 0) { cli_error("%s", err); return 1; }
    if (as_json) {
        char cfg[1024];
        model_config_json(&mf.m.config, cfg, sizeof cfg);
        printf("%s\n", cfg);
    } else {
        print_info(&mf, verbose);
    }
    model_file_free(&mf);
    return 0;
}
