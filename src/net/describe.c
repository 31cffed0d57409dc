/* describe.c — what `info` prints of a model (net.h's net_describe). */
#include "net/describe.h"
#include "model/checkpoint.h"
#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static void print_training(FILE *out, const cJSON *mj) {
    if (!cJSON_GetObjectItemCaseSensitive(mj, "train_steps")) return;
    fprintf(out, "trained:      %s steps on %s, %s s (%s tokens/s), final loss %s\n", meta_text(mj, "train_steps"),
           meta_text(mj, "train_data"), meta_text(mj, "train_seconds"), meta_text(mj, "train_tokens_per_second"),
           meta_text(mj, "train_final_loss"));
    cJSON *sup = meta_json(mj, "supervised_heads");
    fprintf(out, "taught heads: ");
    int n = 0;
    for (const cJSON *h = sup ? sup->child : NULL; h; h = h->next, n++) {
        const cJSON *map = cJSON_GetObjectItemCaseSensitive(h, "map"), *tg = cJSON_GetObjectItemCaseSensitive(h, "target");
        fprintf(out, "%s%s head %.0f → %s (weight %g)", n ? "; " : "", cJSON_IsString(map) ? map->valuestring : "?",
               num_at(h, "head", NULL), cJSON_IsString(tg) ? tg->valuestring : "?", num_at(h, "weight", NULL));
    }
    fprintf(out, "%s\n", n ? "" : "none (no head was told where to look)");
    cJSON_Delete(sup);
}

/* "held out:" from eval_heldout (attnviz eval --write-metadata). */
static void print_heldout(FILE *out, const cJSON *mj) {
    cJSON *e = meta_json(mj, "eval_heldout");
    if (!e) return;
    fprintf(out, "held out:     %.0f pairs: exact match fr %.3f, vi %.3f; pronoun accuracy %.3f", num_at(e, "pairs", NULL),
           num_at(e, "translation_exact_match", "fr"), num_at(e, "translation_exact_match", "vi"),
           num_at(e, "pronoun_accuracy", NULL));
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(e, "coreference_head");
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(ch, "map");
    if (cJSON_IsString(map))
        fprintf(out, "\ncoreference:  %s head %.0f links a pronoun to its antecedent in %.3f of held-out sentences",
               map->valuestring, num_at(ch, "head", NULL), num_at(ch, "accuracy", NULL));
    fprintf(out, "\n");
    cJSON_Delete(e);
}

/* One row of the knock-out table. */
static void ablation_row(FILE *out, const char *head, const cJSON *r) {
    fprintf(out, "  %-29s %8.3f %8.3f %8.3f %9.3f %9.3f\n", head, num_at(r, "pronoun_accuracy", NULL),
           num_at(cJSON_GetObjectItemCaseSensitive(r, "pronoun_accuracy_by_language"), "fr", NULL),
           num_at(cJSON_GetObjectItemCaseSensitive(r, "pronoun_accuracy_by_language"), "vi", NULL),
           num_at(r, "translation_exact_match", "fr"), num_at(r, "translation_exact_match", "vi"));
}

/* eval_ablation (attnviz eval --ablation) as a table, the most harmful knock-out first. */
static void print_ablation(FILE *out, const cJSON *mj) {
    cJSON *e = meta_json(mj, "eval_ablation");
    if (!e) return;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "knock_out");
    fprintf(out, "knock-outs:   one head at a time, its output %s before W_O, on %.0f held-out pairs (attnviz eval --ablation)\n",
           cJSON_IsString(k) && !strcmp(k->valuestring, "zero") ? "zeroed" : "replaced", num_at(e, "pairs", NULL));
    fprintf(out, "  %-29s %8s %8s %8s %9s %9s\n", "head knocked out", "pronoun", "fr", "vi", "exact fr", "exact vi");
    ablation_row(out, "none (the whole model)", cJSON_GetObjectItemCaseSensitive(e, "baseline"));
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(e, "ablation");
    for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next) {
        char head[64];
        const cJSON *map = cJSON_GetObjectItemCaseSensitive(r, "map");
        snprintf(head, sizeof head, "%s head %.0f", cJSON_IsString(map) ? map->valuestring : "?", num_at(r, "head", NULL));
        ablation_row(out, head, r);
    }
    cJSON_Delete(e);
}

/* Every metadata field as it is stored (--verbose); token bitmaps as counts. */
static void print_metadata(FILE *out, const ModelFile *mf, const cJSON *mj) {
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
            fprintf(out, "%s: %d of %d vocabulary words (hex bitmap)\n", it->string, n, mf->v.size);
            free(set);
            continue;
        }
        free(set);
        fprintf(out, "%s: %s\n", it->string, it->valuestring);
    }
}

static void print_tensors(FILE *out, const ModelConfig *c) {
    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(c, NULL, tab, MODEL_MAX_TENSORS);
    fprintf(out, "tensors:\n");
    for (int t = 0; t < nt; t++) {
        fprintf(out, "  %-14s [", tab[t].name);
        for (int d = 0; d < tab[t].ndim; d++) fprintf(out, "%s%d", d ? ", " : "", tab[t].shape[d]);
        fprintf(out, "]\n");
    }
}

/* A summary: configuration, training, held-out scores, the knock-out table;
 * verbose adds the tensors and every metadata field as stored. */
void own_describe(const ModelFile *mf, int verbose, FILE *out) {
    const ModelConfig *c = &mf->m.config;
    fprintf(out, "model:        %s\n", mf->path);
    fprintf(out, "format:       %s version %s\n", CHECKPOINT_FORMAT, CHECKPOINT_VERSION);
    fprintf(out, "architecture: %s, %s-norm\n", model_arch_name(c->arch), c->prenorm ? "pre" : "post");
    fprintf(out, "d_model:      %d   heads: %d   d_k: %d   d_ff: %d\n", c->d_model, c->n_heads, c->d_model / c->n_heads,
           c->d_ff);
    fprintf(out, "layers:       encoder %d, decoder %d\n", c->n_enc_layers, c->n_dec_layers);
    fprintf(out, "max_len:      %d\n", c->max_len);
    fprintf(out, "vocabulary:   %d tokens\n", c->vocab_size);
    fprintf(out, "parameters:   %zu%s\n", mf->m.num_params, verbose ? "" : "   (--verbose lists the tensors and every metadata field)");
    cJSON *mj = cJSON_Parse(mf->metadata);
    if (verbose) {
        print_tensors(out, c);
        print_metadata(out, mf, mj);
    } else {
        print_training(out, mj);
        print_heldout(out, mj);
        print_ablation(out, mj);
    }
    cJSON_Delete(mj);
    fprintf(out, "shipped models (--model NAME):\n");
    const char *name, *what;
    char path[4096];
    for (int i = 0; model_file_shipped(i, &name, &what, path, sizeof path) == 0; i++)
        fprintf(out, "  %-9s %s\n            %s\n", name, *path ? path : "(not found: make model trains it)", what);
}

/* "base 10000, no scaling", "base 500000, llama3 scaling: factor 32, …". */
static void rope_text(const StackRope *r, char *buf, size_t n) {
    if (r->type == STACK_ROPE_LINEAR)
        snprintf(buf, n, "base %g, linear scaling: positions ÷ %g", r->theta, r->factor);
    else if (r->type == STACK_ROPE_LLAMA3)
        snprintf(buf, n, "base %g, llama3 scaling: factor %g, low_freq_factor %g, high_freq_factor %g, original "
                 "context %g", r->theta, r->factor, r->low_freq_factor, r->high_freq_factor, r->orig_max_pos);
    else
        snprintf(buf, n, "base %g, no scaling", r->theta);
}

/* The Llama family (a folder or a llama2.c file): what `info` prints. */
static void print_llama(FILE *out, const HfFile *f) {
    const StackConfig *c = &f->m.c;
    int n_slide = 0, groups = c->n_head / c->n_kv_head;
    for (int l = 0; l < c->n_layer; l++) n_slide += c->layer_kind[l] == STACK_LAYER_SLIDING;
    char rope[256], rope2[256];
    rope_text(&c->rope[STACK_LAYER_FULL], rope, sizeof rope);
    rope_text(&c->rope[STACK_LAYER_SLIDING], rope2, sizeof rope2);
    fprintf(out, "model:        %s\n", f->dir);
    if (f->family == HF_FILE_LLAMA2C) fprintf(out, "format:       llama2.c checkpoint (version 0), F32\n");
    else fprintf(out, "format:       Hugging Face folder (config.json + safetensors)\n");
    fprintf(out, "family:       %s (%s), decoder-only (masked self-attention), RMSNorm pre-norm%s, %s feed-forward (%s)\n",
           stack_family_name(c->family), c->family == STACK_LLAMA2C ? "the Llama architecture" : c->arch_name,
           c->sandwich ? " and post-norm" : "",
           c->act == STACK_ACT_SILU ? "SwiGLU" : "GeGLU", c->act_name);
    fprintf(out, "layers:       %d (maps decoder.0.masked_self … decoder.%d.masked_self)\n", c->n_layer, c->n_layer - 1);
    fprintf(out, "heads:        %d query, %d key/value (%s)\n", c->n_head, c->n_kv_head,
           c->n_kv_head == c->n_head ? "every head its own: multi-head attention"
           : c->n_kv_head == 1        ? "all share one: multi-query attention"
                                      : "grouped-query attention");
    for (int kv = 0; c->n_kv_head < c->n_head && kv < c->n_kv_head; kv++) {
        if (kv == 3 && c->n_kv_head > 4) { fprintf(out, ", …"); kv = c->n_kv_head - 2; continue; }
        if (groups == 1) continue;
        fprintf(out, kv ? ", %d–%d K/V head %d" : "              heads %d–%d share K/V head %d", kv * groups,
               kv * groups + groups - 1, kv);
    }
    if (c->n_kv_head < c->n_head) fprintf(out, "\n");
    fprintf(out, "head size:    %d   d_model: %d   d_ff: %d%s\n", c->head_dim, c->d_model, c->d_ff,
           c->qk_norm ? "   q/k RMSNorm per head" : "");
    fprintf(out, "RoPE:         %s; %s\n", rope,
           c->rope_layout == STACK_ROPE_PAIRS ? "pairs (2i, 2i+1) turned together (llama2.c)"
                                              : "pairs (i, i + head size/2) turned together (rotate-half)");
    if (n_slide) fprintf(out, "window:       %d tokens on %d of %d layers (sliding-window attention; their RoPE: %s)\n",
                        c->window, n_slide, c->n_layer, rope2);
    else fprintf(out, "window:       none (every token sees all earlier tokens)\n");
    fprintf(out, "positions:    %d\n", c->n_pos);
    if (f->family == HF_FILE_LLAMA2C)
        fprintf(out, "vocabulary:   %d tokens (%s, %s)\n", c->n_vocab, hf_file_tokenizer_name(f), f->l2c_path);
    else fprintf(out, "vocabulary:   %d tokens (%s)\n", c->n_vocab, hf_file_tokenizer_name(f));
    fprintf(out, "parameters:   %zu\n", f->m.n_params);
    fprintf(out, "dtype:        %s (computed in float32)\n", f->m.dtype);
    fprintf(out, "rmsnorm:      eps %g%s\n", (double)c->norm_eps, c->norm_plus_one ? ", scaled by 1 + w" : "");
    fprintf(out, "output:       %s\n", c->tie_embeddings ? "tied to the token embedding" : "its own matrix");
    if (f->family == HF_FILE_LLAMA2C) return;
    fprintf(out, "tensors:      %d in %d file(s)\n", f->m.st.n, f->m.st.n_files);
    for (int i = 0; i < f->m.st.n; i++) {
        const StTensor *t = &f->m.st.t[i];
        fprintf(out, "  %-52s %-5s [", t->name, t->dtype);
        for (int d = 0; d < t->ndim; d++) fprintf(out, "%s%ld", d ? ", " : "", t->shape[d]);
        fprintf(out, "]\n");
    }
}

void family_describe(const HfFile *f, FILE *out) {
    const StackConfig *c = &f->m.c;
    if (f->family >= HF_FILE_LLAMA) {
        print_llama(out, f);
        return;
    }
    int gpt = c->family == STACK_GPT2;
    fprintf(out, "model:        %s\n", f->dir);
    fprintf(out, "format:       Hugging Face folder (config.json + safetensors)\n");
    fprintf(out, "family:       %s, %s, %s-norm, %s\n", stack_family_name(c->family),
           gpt ? "decoder-only (masked self-attention)" : "encoder-only (self-attention)", gpt ? "pre" : "post",
           c->act_name);
    fprintf(out, "d_model:      %d   heads: %d   d_k: %d   d_ff: %d\n", c->d_model, c->n_head, c->d_model / c->n_head, c->d_ff);
    fprintf(out, "layers:       %d (maps %s.0.%s … %s.%d.%s)\n", c->n_layer, gpt ? "decoder" : "encoder",
           gpt ? "masked_self" : "self", gpt ? "decoder" : "encoder", c->n_layer - 1, gpt ? "masked_self" : "self");
    fprintf(out, "positions:    %d\n", c->n_pos);
    fprintf(out, "vocabulary:   %d tokens (%s)\n", c->n_vocab, hf_file_tokenizer_name(f));
    fprintf(out, "parameters:   %zu\n", f->m.n_params);
    fprintf(out, "dtype:        %s (computed in float32)\n", f->m.dtype);
    fprintf(out, "layernorm:    eps %g\n", (double)c->norm_eps);
    if (!gpt) fprintf(out, "masked-LM:    %s\n", f->m.has_mlm ? "yes (run fills [MASK])" : "no (cls.predictions.* absent)");
    fprintf(out, "tensors:      %d in %d file(s)\n", f->m.st.n, f->m.st.n_files);
    for (int i = 0; i < f->m.st.n; i++) {
        const StTensor *t = &f->m.st.t[i];
        fprintf(out, "  %-52s %-5s [", t->name, t->dtype);
        for (int d = 0; d < t->ndim; d++) fprintf(out, "%s%ld", d ? ", " : "", t->shape[d]);
        fprintf(out, "]\n");
    }
}
