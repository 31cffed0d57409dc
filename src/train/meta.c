/* meta.c — the checkpoint's metadata of a training run and of eval's
 * measurements (see meta.h). */
#include "train/meta.h"
#include "model/checkpoint.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The token sets of flags (n entries) holding each of the k bits, as the
 * checkpoint's hexadecimal text (eval_language_hex) into hex[0..k).  0, or -1
 * (memory; hex then holds NULLs and what was made, for the caller to free). */
static int token_sets(char **hex, const unsigned char *flags, int n, const int *bits, int k) {
    int rc = 0;
    for (int i = 0; i < k; i++) rc |= !(hex[i] = eval_language_hex(flags, n, bits[i]));
    return rc ? -1 : 0;
}

/* supervised_heads: the heads taught with gold targets, as JSON text. */
static void supervised_heads(char *buf, size_t n, const TrainOptions *o) {
    int k = snprintf(buf, n, "[");
    if (o->coref_weight > 0)
        k += snprintf(buf + k, n - k, "{\"map\":\"encoder.%d.self\",\"head\":%d,\"target\":\"coreference\",\"weight\":%g}",
                      o->coref_layer, o->coref_head, o->coref_weight);
    if (o->align_weight > 0)
        k += snprintf(buf + k, n - k, "%s{\"map\":\"decoder.%d.cross\",\"head\":%d,\"target\":\"alignment\",\"weight\":%g}",
                      o->coref_weight > 0 ? "," : "", o->align_layer, o->align_head, o->align_weight);
    snprintf(buf + k, n - k, "]");
}

int train_meta_describe(TrainMeta *tm, const char *command, const TrainOptions *o, const ModelConfig *c,
                        const TrainSet *s, const unsigned char *lang_flags) {
    memset(tm, 0, sizeof *tm);
    snprintf(tm->options, sizeof tm->options,
             "--seed %llu --steps %ld --batch %d --lr %g --min-lr-frac %g --warmup %ld --clip %g "
             "--label-smoothing %g --dropout %g --d-model %d --heads %d --enc-layers %d --dec-layers %d --d-ff %d "
             "--max-len %d%s --supervise-coref %g --coref-head encoder.%d.self.%d "
             "--supervise-align %g --align-head decoder.%d.cross.%d", (unsigned long long)o->seed, o->steps, o->batch,
             o->lr, o->min_lr_frac, o->warmup, o->clip, o->label_smoothing, o->dropout, c->d_model, c->n_heads,
             c->n_enc_layers, c->n_dec_layers, c->d_ff, c->max_len, c->prenorm ? " --prenorm" : "", o->coref_weight,
             o->coref_layer, o->coref_head, o->align_weight, o->align_layer, o->align_head);
    supervised_heads(tm->supervised, sizeof tm->supervised, o);
    snprintf(tm->seed, sizeof tm->seed, "%llu", (unsigned long long)o->seed);
    snprintf(tm->steps, sizeof tm->steps, "%ld", o->steps);
    snprintf(tm->data, sizeof tm->data, "%d pairs", s->n);
    snprintf(tm->max_src, sizeof tm->max_src, "%d", s->max_src - 1);   /* words, without <eos> */
    size_t hex_len = (size_t)o->n_vocab / 4 + 2;
    static const int bits[2] = {EVAL_IN_FR, EVAL_IN_VI};
    if (!(tm->command = strdup(command)) || !(tm->src_hex = malloc(hex_len)) ||
        token_sets(tm->tgt_hex, lang_flags, o->n_vocab, bits, 2))
        return -1;
    checkpoint_meta_source_hex(s->src_seen, s->n_vocab_seen, tm->src_hex, hex_len);
    return 0;
}

void train_meta_result(TrainMeta *tm, const TrainResult *r) {
    snprintf(tm->seconds, sizeof tm->seconds, "%.1f", r->seconds);
    snprintf(tm->tokens_per_sec, sizeof tm->tokens_per_sec, "%.0f", r->tokens_per_sec);
    snprintf(tm->loss, sizeof tm->loss, "%.4f", r->last_loss);
    snprintf(tm->aux, sizeof tm->aux, "{\"coreference\":%.4f,\"alignment\":%.4f}",
             isnan(r->coref_aux) ? -1.0 : r->coref_aux, isnan(r->align_aux) ? -1.0 : r->align_aux);
}

void train_meta_quick_eval(TrainMeta *tm, const EvalReport *r) {
    eval_metadata_json(r, "heldout", tm->coref, sizeof tm->coref, tm->eval, sizeof tm->eval);
}

/* Appends key = value to the list kv at *k (value NULL: nothing). */
static void pair(const char **kv, int *k, const char *key, const char *value) {
    if (!value) return;
    kv[(*k)++] = key;
    kv[(*k)++] = value;
}

void train_meta_pairs(const TrainMeta *tm, const char **kv) {
    int k = 0, done = tm->seconds[0] != '\0';
    pair(kv, &k, "train_command", tm->command);
    pair(kv, &k, "train_options", tm->options);
    pair(kv, &k, "train_seed", tm->seed);
    pair(kv, &k, "train_steps", tm->steps);
    pair(kv, &k, "train_data", tm->data);
    pair(kv, &k, "train_seconds", done ? tm->seconds : NULL);
    pair(kv, &k, "train_tokens_per_second", done ? tm->tokens_per_sec : NULL);
    pair(kv, &k, "train_final_loss", done ? tm->loss : NULL);
    pair(kv, &k, "supervised_heads", tm->supervised);
    pair(kv, &k, "train_final_aux_loss", done ? tm->aux : NULL);
    pair(kv, &k, "train_max_source_len", tm->max_src);
    pair(kv, &k, "train_source_tokens", tm->src_hex);
    pair(kv, &k, "train_target_tokens_fr", tm->tgt_hex[0]);
    pair(kv, &k, "train_target_tokens_vi", tm->tgt_hex[1]);
    pair(kv, &k, "coreference_head", tm->coref[0] ? tm->coref : NULL);
    pair(kv, &k, "eval_quick", tm->coref[0] ? tm->eval : NULL);
    kv[k] = NULL;
}

void train_meta_free(TrainMeta *tm) {
    free(tm->command);
    free(tm->src_hex);
    free(tm->tgt_hex[0]);
    free(tm->tgt_hex[1]);
    memset(tm, 0, sizeof *tm);
}

int train_meta_eval_build(TrainEvalMeta *em, const EvalReport *r, const char *split, const char *splits,
                          const EvalReal *real, const unsigned char *lang_flags, int n) {
    memset(em, 0, sizeof *em);
    eval_metadata_json(r, split, em->coref, sizeof em->coref, em->summary, sizeof em->summary);
    if (!(em->splits = strdup(splits))) return -1;
    StrBuf b = {0};
    if (real && eval_real_json(&b, real)) { free(b.buf); return -1; }
    em->real = b.buf;
    static const int bits[3] = {EVAL_IN_FR, EVAL_IN_VI, EVAL_ANTECEDENT};
    return lang_flags ? token_sets(em->hex, lang_flags, n, bits, 3) : 0;
}

void train_meta_eval_pairs(const TrainEvalMeta *em, const char **kv) {
    int k = 0;
    pair(kv, &k, "coreference_head", em->coref);
    pair(kv, &k, "eval_heldout", em->summary);
    pair(kv, &k, "eval_splits", em->splits);
    pair(kv, &k, "eval_real_test", em->real);
    pair(kv, &k, "train_target_tokens_fr", em->hex[0]);
    pair(kv, &k, "train_target_tokens_vi", em->hex[1]);
    pair(kv, &k, "train_antecedent_tokens", em->hex[2]);
    kv[k] = NULL;
}

void train_meta_eval_free(TrainEvalMeta *em) {
    free(em->splits);
    free(em->real);
    for (int i = 0; i < 3; i++) free(em->hex[i]);
    memset(em, 0, sizeof *em);
}
