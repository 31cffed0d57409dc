/* ids.c — token ids through any model, as `attnviz forward` writes them (ids.h). */
#include "pipeline/ids.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/rng.h"
#include "core/threads.h"
#include "model/model.h"
#include "pipeline/look.h"
#include "trace/trace.h"
#include "trace/trace_bin.h"
#include "train/train.h"
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Parses "1 2 3;4 5" into a padded (B, T) id matrix + lengths. */
static int parse_ids(const char *s, int **ids, int **lens, int *B, int *T) {
    int b = 1, t = 0, maxt = 0;
    for (const char *p = s; *p; p++) if (*p == ';') b++;
    int *len = calloc((size_t)b, sizeof(int));
    if (!len) return -1;
    /* pass 1: lengths */
    int cur = 0;
    const char *p = s;
    while (1) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ';' || !*p) {
            len[cur] = t;
            if (t > maxt) maxt = t;
            t = 0;
            if (!*p) break;
            cur++; p++;
            continue;
        }
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0 || v > 100000000) { free(len); return -1; }
        t++;
        p = end;
    }
    if (maxt == 0) { free(len); return -1; }
    int *m = calloc((size_t)b * maxt, sizeof(int));
    if (!m) { free(len); return -1; }
    cur = 0; t = 0; p = s;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ';') { cur++; t = 0; p++; continue; }
        if (!*p) break;
        char *end;
        m[(size_t)cur * maxt + t++] = (int)strtol(p, &end, 10);
        p = end;
    }
    *ids = m; *lens = len; *B = b; *T = maxt;
    return 0;
}

/* CPU time of the process (all threads): steadier than wall time on a shared machine. */
static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Lengths of the benchmark's batch items: mean exactly `mean` (B even), spread
 * mean-2 … mean+2 like a length-bucketed batch; items 2k and 2k+1 differ in sign.
 * tests/bench_train.py builds the PyTorch batches with the same rule. */
static int bench_len(int b, int mean, int phase) {
    int dev = (b / 2 + phase) % 3;
    int len = mean + (b % 2 ? dev : -dev);
    return len > 1 ? len : 1;
}

/* Times N training steps on random tokens: forward, zero_grad, backward (label
 * smoothing 0.05), gradient-norm clip 1, Adam — the steps of `attnviz train`.
 * Tokens per step = Σ source lengths + Σ target lengths (non-pad positions; the
 * count `attnviz train` reports).  Prints one "train_bench" line for scripts. */
static int own_bench(Model *m, int steps, int B, int src_mean, int tgt_mean, FILE *out, char *err, size_t errlen) {
    const ModelConfig *c = &m->config;
    int V = c->vocab_size, rc = -1;
    int S = src_mean + 2 < c->max_len ? src_mean + 2 : c->max_len;
    int T = tgt_mean + 2 < c->max_len ? tgt_mean + 2 : c->max_len;
    int *src = malloc(sizeof(int) * (size_t)B * S), *tgt = malloc(sizeof(int) * (size_t)B * T);
    int *y = malloc(sizeof(int) * (size_t)B * T), *sl = malloc(sizeof(int) * (size_t)B);
    int *tl = malloc(sizeof(int) * (size_t)B);
    Adam adam;
    memset(&adam, 0, sizeof adam);
    if (!src || !tgt || !y || !sl || !tl || adam_init(&adam, m->num_params)) { errmsg_set(err, errlen, "out of memory"); goto done; }
    Rng r = rng_from_state(88172645463325252ULL);
    for (int i = 0; i < B * S; i++) src[i] = (int)(rng_next(&r) % (uint64_t)V);
    for (int i = 0; i < B * T; i++) {
        tgt[i] = (int)(rng_next(&r) % (uint64_t)V);
        y[i] = (int)(rng_next(&r) % (uint64_t)V);
    }
    long ntok_src = 0, ntok_tgt = 0;
    for (int b = 0; b < B; b++) {
        sl[b] = bench_len(b, src_mean, 0) < S ? bench_len(b, src_mean, 0) : S;
        tl[b] = bench_len(b, tgt_mean, 1) < T ? bench_len(b, tgt_mean, 1) : T;
        ntok_src += sl[b];
        ntok_tgt += tl[b];
    }
    if (c->arch == MODEL_ENCODER_ONLY) ntok_tgt = 0;
    if (c->arch == MODEL_DECODER_ONLY) ntok_src = 0;
    double tf = 0, tu = 0, cpu0 = 0;
    ThreadTune tune;                               /* as train_run: threads by measurement */
    thread_tune_init(&tune);
    Model twin;                                    /* as train_run: two threads split the batch */
    memset(&twin, 0, sizeof twin);
    if (thread_tune_halves(&tune) && model_twin_init(&twin, m)) { errmsg_set(err, errlen, "%s", twin.err); goto done; }
    m->training = 1;                               /* as train_step: pad rows skipped (no dropout) */
    /* untimed: step 0 (allocations) and, with two threads, the tuner's first
     * measurement (THREADS_TUNE_STEPS steps with each setting), which training
     * repeats for 6 of every THREADS_TUNE_PERIOD steps */
    int warm = tune.max > 1 ? 1 + 2 * THREADS_TUNE_STEPS : 1;
    for (int it = 0; it < warm + steps; it++) {
        if (it == warm) cpu0 = cpu_seconds();
        thread_tune_before(&tune);
        double t0 = now_seconds();
        ModelBatch batch = {.src = src, .src_len = sl, .S = S, .tgt = tgt, .tgt_len = tl, .T = T, .B = B};
        if (model_zero_grad(m) || isnan(model_train_step(m, thread_tune_halves(&tune) ? &twin : NULL, &batch, y, 0.05f, NULL, 0))) {
            errmsg_set(err, errlen, "%s", m->err);
            model_free(&twin);
            goto done;
        }
        double t1 = now_seconds();
        float clip = train_clip_factor(train_grad_norm(m->grads_memory, m->num_params), 1.0);
        adam_update_scaled(&adam, m->params_memory, m->grads_memory, clip, 1e-4f);   /* as train_step */
        double t2 = now_seconds();
        thread_tune_after(&tune, t2 - t0);
        if (it >= warm) { tf += t1 - t0; tu += t2 - t1; }
    }
    thread_tune_end(&tune);
    model_free(&twin);
    m->training = 0;
    double cpu = (cpu_seconds() - cpu0) / steps;
    tf /= steps; tu /= steps;
    double step = tf + tu, ntok = (double)(ntok_src + ntok_tgt);
    fprintf(out, "model %s d_model %d heads %d layers %d+%d d_ff %d vocab %d (%zu parameters)\n",
           model_arch_name(c->arch), c->d_model, c->n_heads, c->n_enc_layers, c->n_dec_layers,
           c->d_ff, V, m->num_params);
    fprintf(out, "batch %d, source %d (mean %.2f), target %d (mean %.2f): forward+backward %.2f ms, "
           "clip+adam %.2f ms, step %.2f ms\n", B, S, (double)ntok_src / B, T, (double)ntok_tgt / B,
           tf * 1e3, tu * 1e3, step * 1e3);
    fprintf(out, "training: %.0f tokens/s (source+target), %.0f target tokens/s\n",
           ntok / step, (ntok_tgt ? ntok_tgt : ntok_src) / step);
    fprintf(out, "threads: up to %d, %d after measuring (src/core/threads.h)\n", tune.max, tune.best);
    fprintf(out, "train_bench tokens_per_step %.0f step_ms %.4f tokens_per_s %.1f cpu_ms %.4f\n", ntok, step * 1e3,
           ntok / step, cpu * 1e3);
    rc = 0;
done:
    adam_free(&adam);
    free(src); free(tgt); free(y); free(sl); free(tl);
    return rc;
}

/* One item's maps ({"maps": [...]}) and, with an encoder, its rollout. */
static cJSON *item_json(const Model *m, const Look *L) {
    cJSON *item = cJSON_CreateObject(), *maps = cJSON_AddArrayToObject(item, "maps");
    for (int k = 0; k < L->t.n_maps; k++) cJSON_AddItemToArray(maps, trace_map_cjson(&L->t.maps[k]));
    if (L->rollout) {
        cJSON *ro = cJSON_AddArrayToObject(item, "rollout");
        int E = model_attn_layers(&m->config, MODEL_ATTN_ENC_SELF);
        for (int l = 0; l < E; l++)
            cJSON_AddItemToArray(ro, trace_matrix_cjson(L->rollout + (size_t)l * m->S * m->S, m->S, m->S));
    }
    return item;
}

/* The whole forward pass as JSON: sizes, logits, every item's maps. */
static cJSON *forward_json(const Model *m, const Look *looks, int B) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "B", B);
    cJSON_AddNumberToObject(root, "S", m->S);
    cJSON_AddNumberToObject(root, "T", m->T);
    cJSON *lg = cJSON_AddArrayToObject(root, "logits");
    for (int b = 0; b < B; b++)
        cJSON_AddItemToArray(lg, trace_matrix_cjson(m->acts.logits + (size_t)b * m->To * m->config.vocab_size, m->To,
                                                    m->config.vocab_size));
    cJSON *items = cJSON_AddArrayToObject(root, "items");
    for (int b = 0; b < B; b++) cJSON_AddItemToArray(items, item_json(m, &looks[b]));
    return root;
}

/* --src / --tgt as the model's architecture needs them, into ids.  0, or -1 (printed). */
static int own_ids(const Model *m, const IdsSpec *a, LookIds *ids, int **src, int **sl, int **tgt, int **tl, char *err,
                   size_t errlen) {
    int B = 0, S = 0, T = 0, B2 = 0;
    if (m->config.arch != MODEL_DECODER_ONLY && (!a->src || parse_ids(a->src, src, sl, &B, &S))) {
        return errmsg_set(err, errlen, "forward: --src needs ids like \"5 6 7;8 9\"");
    }
    if (m->config.arch != MODEL_ENCODER_ONLY) {
        if (!a->tgt || parse_ids(a->tgt, tgt, tl, &B2, &T)) return errmsg_set(err, errlen, "forward: --tgt needs ids like \"5 6 7;8 9\"");
        if (B && B2 != B) return errmsg_set(err, errlen, "forward: --src has %d items but --tgt has %d", B, B2);
        B = B2;
    }
    *ids = (LookIds){.src = *src, .src_len = *sl, .S = S, .tgt = *tgt, .tgt_len = *tl, .T = T, .B = B};
    return 0;
}

/* Every position's logits (T, V) as raw float32. */
static int write_logits(HfFile *f, int T, const char *path, char *err, size_t errlen) {
    int V = hf_file_shape(f).n_vocab;
    float *lg = malloc((size_t)T * V * sizeof *lg);
    if (!lg) return errmsg_set(err, errlen, "out of memory");
    int rc = 0;
    for (int t = 0; t < T && rc == 0; t++) rc = hf_file_logits(f, t, lg + (size_t)t * V, err, errlen);
    if (rc == 0) rc = file_write_atomic(path, lg, (size_t)T * V * sizeof *lg, err, errlen);
    free(lg);
    return rc;
}

/* err said again as "forward: …".  -1. */
static int forward_said(char *err, size_t errlen) {
    char why[1024];
    snprintf(why, sizeof why, "%s", err);
    return errmsg_set(err, errlen, "forward: %s", why);
}

/* A foreign model on one list of ids: trace (JSON, or trace.bin), logits, timings. */
static int family_forward(Net *n, const IdsSpec *a, FILE *out, char *err, size_t errlen) {
    HfFile *f = &n->fam;
    int *ids = NULL, *lens = NULL, B = 0, T = 0, rc = -1;
    double t1 = now_seconds();
    Trace tr;
    trace_init(&tr);
    char **tok = NULL;
    if (!a->src || parse_ids(a->src, &ids, &lens, &B, &T) != 0 || B != 1) {
        errmsg_set(err, errlen, "forward: --src needs one list of token ids, e.g. --src \"464 3290 318\"");
        goto done;
    }
    tok = calloc((size_t)T, sizeof *tok);
    for (int t = 0; tok && t < T; t++) {
        char buf[256];
        hf_file_token_text(f, ids[t], buf, sizeof buf);
        tok[t] = strdup(buf);
    }
    HfSteps all = {1, -1, -1, 0};
    HfInput in = {.n = T, .n_real = T, .ids = ids, .tokens = tok};   /* borrowed: not hf_input_free'd */
    int fr = tok ? hf_file_forward(f, &in, &tr, a->steps ? &all : NULL, err, errlen)
                 : errmsg_set(err, errlen, "out of memory");
    if (fr != 0) { forward_said(err, errlen); goto done; }
    double t2 = now_seconds();
    if (a->out && (trace_path_is_bin(a->out) ? trace_write_bin : trace_write_json)(&tr, a->out, err, errlen)) goto fail;
    double t3 = now_seconds();
    if (a->logits && write_logits(f, T, a->logits, err, errlen)) goto fail;
    if (a->timing)
        fprintf(out, "load_ms %.1f forward_trace_ms %.1f maps %d trace_write_ms %.1f\n", a->load_ms, (t2 - t1) * 1e3,
                tr.n_maps * (tr.n_maps ? tr.maps[0].n_heads : 0), (t3 - t2) * 1e3);
    rc = 0;
    goto done;
fail:
    forward_said(err, errlen);
done:
    for (int t = 0; tok && t < T; t++) free(tok[t]);
    free(tok);
    trace_free(&tr);
    free(ids); free(lens);
    return rc;
}

/* The translator (or any attnviz checkpoint) on batches of ids: the JSON of
 * every item's maps, aggregates and the logits. */
static int own_forward(Net *n, const IdsSpec *a, char *err, size_t errlen) {
    Model *m = &n->mf.m;
    char *txt = NULL;
    int rc = -1, *src = NULL, *sl = NULL, *tgt = NULL, *tl = NULL, nv = n->mf.v.size;
    cJSON *root = NULL;
    LookIds ids = {0};
    Look *looks = NULL;   /* (B) each item's trace with its aggregate views (pipeline/look.h) */
    char **vocab = calloc((size_t)(nv > 0 ? nv : 1), sizeof *vocab);
    for (int i = 0; vocab && i < nv; i++) vocab[i] = (char *)vocab_word(&n->mf.v, i);
    if (!vocab) { errmsg_set(err, errlen, "out of memory"); goto done; }
    if (own_ids(m, a, &ids, &src, &sl, &tgt, &tl, err, errlen) != 0) goto done;
    ids.words = vocab;
    ids.n_words = nv;
    LookSpec spec = {.want = LOOK_TRACE | LOOK_AGGREGATES | (a->steps ? LOOK_STEPS : 0)};
    if (!(looks = calloc((size_t)ids.B, sizeof *looks))) { errmsg_set(err, errlen, "out of memory"); goto done; }
    if (look_ids(looks, m, &ids, &spec, err, errlen) != 0) goto done;
    root = forward_json(m, looks, ids.B);
    txt = root ? cJSON_PrintUnformatted(root) : NULL;
    if (!txt) { errmsg_set(err, errlen, "out of memory"); goto done; }
    if (file_write_atomic(a->out, txt, strlen(txt), err, errlen)) { forward_said(err, errlen); goto done; }
    rc = 0;
done:
    cJSON_Delete(root);
    free(txt);
    for (int b = 0; looks && b < ids.B; b++) look_free(&looks[b]);
    free(looks);
    free(src); free(sl); free(tgt); free(tl);
    free(vocab);
    return rc;
}

int ids_forward(Net *n, const IdsSpec *spec, FILE *out, char *err, size_t errlen) {
    if (n->own && !spec->out) return errmsg_set(err, errlen, "forward: --model and --out (or --bench N) are required");
    return n->own ? own_forward(n, spec, err, errlen) : family_forward(n, spec, out, err, errlen);
}

int ids_bench(Net *n, int steps, int B, int src_mean, int tgt_mean, FILE *out, char *err, size_t errlen) {
    if (!n->own) return errmsg_set(err, errlen, "forward --bench times attnviz's own training; %s is a %s model",
                                   net_path(n), net_family(n));
    return own_bench(&n->mf.m, steps, B, src_mean, tgt_mean, out, err, errlen);
}
