/* train.c — batches, Adam, schedule, the training loop, checkpoints, resume and
 * snapshots (see train.h). */
#include "train/train.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/rng.h"
#include "core/tensor.h"
#include "core/threads.h"
#include "core/strbuf.h"
#include "model/checkpoint.h"
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_sec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ data */

void train_set_init(TrainSet *s) { memset(s, 0, sizeof *s); }

void train_set_free(TrainSet *s) {
    if (!s) return;
    free(s->src_seen);
    free(s->ex);
    free(s->ids);
    free(s->align);
    memset(s, 0, sizeof *s);
}

int train_set_add(TrainSet *s, int lang_tag, const int *src, int src_len,
                  const int *tgt, int tgt_len, char *err, size_t errlen) {
    if (src_len < 1 || tgt_len < 0) { errmsg_set(err, errlen, "empty sentence pair"); return -1; }
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 1024;
        TrainExample *e = realloc(s->ex, (size_t)cap * sizeof *e);
        if (!e) { errmsg_set(err, errlen, "out of memory"); return -1; }
        s->ex = e; s->cap = cap;
    }
    size_t need = s->n_ids + (size_t)src_len + (size_t)tgt_len;
    if (need > s->cap_ids) {
        size_t cap = s->cap_ids ? 2 * s->cap_ids : 65536;
        while (cap < need) cap *= 2;
        int *ids = realloc(s->ids, cap * sizeof *ids);
        if (!ids) { errmsg_set(err, errlen, "out of memory"); return -1; }
        /* re-point the examples into the moved block */
        for (int i = 0; i < s->n; i++) {
            s->ex[i].src = ids + (s->ex[i].src - s->ids);
            s->ex[i].tgt = ids + (s->ex[i].tgt - s->ids);
        }
        s->ids = ids; s->cap_ids = cap;
    }
    TrainExample *e = &s->ex[s->n++];
    e->lang_tag = lang_tag;
    e->src_len = src_len;
    e->tgt_len = tgt_len;
    e->coref_p = e->coref_a = -1;
    e->n_align = 0;
    e->align_off = s->n_align;
    e->src = s->ids + s->n_ids;
    memcpy(e->src, src, (size_t)src_len * sizeof(int));
    e->tgt = e->src + src_len;
    if (tgt_len) memcpy(e->tgt, tgt, (size_t)tgt_len * sizeof(int));
    s->n_ids = need;
    if (src_len > s->max_src) s->max_src = src_len;
    if (tgt_len > s->max_tgt) s->max_tgt = tgt_len;
    return 0;
}

/* Splits text at spaces into words (at most cap); returns the count or -1 (too many). */
static int split_words(char *text, char **words, int cap) {
    int n = 0;
    for (char *save = NULL, *w = strtok_r(text, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (n == cap) return -1;
        words[n++] = w;
    }
    return n;
}

/* Encodes words into ids.  A word missing from the vocabulary becomes <unk>
 * (a name or number the model learns to copy, spec C) when it is one of the
 * pair's source words copy[0..n_copy); otherwise -1 and *bad names it. */
static int encode_words(const Vocab *v, char *const *words, int n, char *const *copy, int n_copy, int *ids,
                        const char **bad) {
    for (int i = 0; i < n; i++) {
        int id = vocab_id(v, words[i]);
        for (int j = 0; id < 0 && j < n_copy; j++)
            if (!strcmp(copy[j], words[i])) id = VOCAB_UNK;
        if (id < 0) { *bad = words[i]; return -1; }
        ids[i] = id;
    }
    return n;
}

/* s->src_seen covers at least n vocabulary ids (zeros added).  0 or -1. */
static int ensure_src_seen(TrainSet *s, int n) {
    if (n <= s->n_vocab_seen) return 0;
    unsigned char *p = realloc(s->src_seen, (size_t)n);
    if (!p) return -1;
    memset(p + s->n_vocab_seen, 0, (size_t)(n - s->n_vocab_seen));
    s->src_seen = p;
    s->n_vocab_seen = n;
    return 0;
}

int train_set_load_tsv(TrainSet *s, const char *path, const Vocab *v, char *err, size_t errlen) {
    FILE *f = fopen(path, "r");
    if (!f) { errmsg_set(err, errlen, "cannot open %s: %s", path, strerror(errno)); return -1; }
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int rc = -1;
    int src[512], tgt[512];
    char *sw[512], *tw[512];
    if (ensure_src_seen(s, v->size)) { errmsg_set(err, errlen, "out of memory"); goto done; }
    while (getline(&line, &cap, f) > 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#') continue;
        char *cols[5] = {0};
        char *p = line;
        for (int c = 0; c < 5; c++) {
            cols[c] = p;
            char *tab = p ? strchr(p, '\t') : NULL;
            if (tab) { *tab = '\0'; p = tab + 1; } else p = NULL;
        }
        if (lineno == 1 && !strcmp(cols[0], "lang")) continue;   /* header */
        if (!cols[1] || !cols[2]) { errmsg_set(err, errlen, "%s:%ld: expected tab-separated lang, source, target", path, lineno); goto done; }
        int tag = !strcmp(cols[0], "fr") ? VOCAB_2FR : !strcmp(cols[0], "vi") ? VOCAB_2VI : -1;
        if (tag < 0) { errmsg_set(err, errlen, "%s:%ld: unknown language '%s' (fr or vi)", path, lineno, cols[0]); goto done; }
        const char *bad = NULL;
        int ns = split_words(cols[1], sw, 511), nt = split_words(cols[2], tw, 511);
        if (ns < 0 || nt < 0) { errmsg_set(err, errlen, "%s:%ld: sentence too long (at most 511 tokens)", path, lineno); goto done; }
        if (encode_words(v, sw, ns, sw, ns, src, &bad) < 0) {   /* an unknown source word is its own copy */
            errmsg_set(err, errlen, "%s:%ld: source token '%s' is not in the vocabulary", path, lineno, bad); goto done;
        }
        src[ns++] = VOCAB_EOS;
        if (encode_words(v, tw, nt, sw, ns - 1, tgt, &bad) < 0) {
            errmsg_set(err, errlen, "%s:%ld: target token '%s' is neither in the vocabulary nor a word of the "
                       "source to copy", path, lineno, bad);
            goto done;
        }
        for (int i = 0; i < ns; i++) if (src[i] >= 0 && src[i] < s->n_vocab_seen) s->src_seen[src[i]] = 1;
        if (train_set_add(s, tag, src, ns, tgt, nt, err, errlen)) goto done;
        if (cols[3] && strcmp(cols[3], "-")) {
            TrainExample *e = &s->ex[s->n - 1];
            for (char *save = NULL, *w = strtok_r(cols[3], " ", &save); w; w = strtok_r(NULL, " ", &save)) {
                int at, as;
                if (sscanf(w, "%d-%d", &at, &as) != 2 || at < 0 || at >= nt || as < 0 || as >= ns) continue;
                if (s->n_align == s->cap_align) {
                    size_t c2 = s->cap_align ? 2 * s->cap_align : 65536;
                    int *al = realloc(s->align, c2 * 2 * sizeof(int));
                    if (!al) { errmsg_set(err, errlen, "out of memory"); goto done; }
                    s->align = al; s->cap_align = c2;
                }
                s->align[2 * s->n_align] = at;
                s->align[2 * s->n_align + 1] = as;
                s->n_align++;
                e->n_align++;
            }
        }
        int cp, ca;
        if (cols[4] && sscanf(cols[4], "%d-%d", &cp, &ca) == 2 && cp >= 0 && cp < ns && ca >= 0 && ca < ns) {
            s->ex[s->n - 1].coref_p = cp;
            s->ex[s->n - 1].coref_a = ca;
        }
    }
    if (s->n == 0) { errmsg_set(err, errlen, "%s has no sentence pairs", path); goto done; }
    rc = 0;
done:
    free(line);
    fclose(f);
    return rc;
}

void batch_free(Batch *b) {
    if (!b) return;
    free(b->src); free(b->src_len); free(b->dec_in); free(b->tgt_len); free(b->targets);
    memset(b, 0, sizeof *b);
}

int batch_make(Batch *b, const TrainSet *s, const int *idx, int B) {
    int S = 1, T = 1;
    for (int i = 0; i < B; i++) {
        const TrainExample *e = &s->ex[idx[i]];
        if (e->src_len > S) S = e->src_len;
        if (e->tgt_len + 1 > T) T = e->tgt_len + 1;
    }
    if (B > b->cap_B || (size_t)B * S > (size_t)b->cap_B * b->cap_S || (size_t)B * T > (size_t)b->cap_B * b->cap_T) {
        int cB = B > b->cap_B ? B : b->cap_B, cS = S > b->cap_S ? S : b->cap_S, cT = T > b->cap_T ? T : b->cap_T;
        int *a1 = realloc(b->src, (size_t)cB * cS * sizeof(int));
        if (a1) b->src = a1;
        int *a2 = realloc(b->src_len, (size_t)cB * sizeof(int));
        if (a2) b->src_len = a2;
        int *a3 = realloc(b->dec_in, (size_t)cB * cT * sizeof(int));
        if (a3) b->dec_in = a3;
        int *a4 = realloc(b->tgt_len, (size_t)cB * sizeof(int));
        if (a4) b->tgt_len = a4;
        int *a5 = realloc(b->targets, (size_t)cB * cT * sizeof(int));
        if (a5) b->targets = a5;
        if (!a1 || !a2 || !a3 || !a4 || !a5) return -1;
        b->cap_B = cB; b->cap_S = cS; b->cap_T = cT;
    }
    b->B = B; b->S = S; b->T = T; b->n_tokens = 0;
    for (int i = 0; i < B; i++) {
        const TrainExample *e = &s->ex[idx[i]];
        int *src = b->src + (size_t)i * S, *din = b->dec_in + (size_t)i * T, *tg = b->targets + (size_t)i * T;
        for (int j = 0; j < S; j++) src[j] = j < e->src_len ? e->src[j] : VOCAB_PAD;
        din[0] = e->lang_tag;
        for (int j = 1; j < T; j++) din[j] = j - 1 < e->tgt_len ? e->tgt[j - 1] : VOCAB_PAD;
        for (int j = 0; j < T; j++) tg[j] = j < e->tgt_len ? e->tgt[j] : j == e->tgt_len ? VOCAB_EOS : VOCAB_PAD;
        b->src_len[i] = e->src_len;
        b->tgt_len[i] = e->tgt_len + 1;
        b->n_tokens += e->src_len + e->tgt_len + 1;
    }
    return 0;
}

typedef struct { int a, b; uint64_t r; int i; } SortKey;
static int cmp_key(const void *x, const void *y) {
    const SortKey *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->r != q->r) return p->r < q->r ? -1 : 1;
    return p->i < q->i ? -1 : p->i > q->i;
}

int train_epoch_batches(const TrainSet *s, int B, uint64_t seed, long epoch,
                        int **order, int **starts, int *n_batches) {
    *order = NULL; *starts = NULL; *n_batches = 0;
    if (s->n < 1 || B < 1) return -1;
    uint64_t st = seed * 0x2545F4914F6CDD1Dull + (uint64_t)epoch * 0x9E3779B97F4A7C15ull + 1;
    SortKey *k = malloc((size_t)s->n * sizeof *k);
    int nb = (s->n + B - 1) / B;
    int *ord = malloc((size_t)s->n * sizeof *ord), *stt = malloc((size_t)(nb + 1) * sizeof *stt);
    int *perm = malloc((size_t)nb * sizeof *perm);
    if (!k || !ord || !stt || !perm) { free(k); free(ord); free(stt); free(perm); return -1; }
    for (int i = 0; i < s->n; i++) {
        k[i].a = s->ex[i].src_len; k[i].b = s->ex[i].tgt_len; k[i].r = rng_splitmix64(&st); k[i].i = i;
    }
    qsort(k, (size_t)s->n, sizeof *k, cmp_key);
    /* shuffle the runs (Fisher–Yates) */
    for (int i = 0; i < nb; i++) perm[i] = i;
    for (int i = nb - 1; i > 0; i--) {
        int j = (int)(rng_splitmix64(&st) % (uint64_t)(i + 1));
        int t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    int pos = 0;
    for (int r = 0; r < nb; r++) {
        stt[r] = pos;
        int begin = perm[r] * B, end = begin + B < s->n ? begin + B : s->n;
        for (int i = begin; i < end; i++) ord[pos++] = k[i].i;
    }
    stt[nb] = pos;
    free(k); free(perm);
    *order = ord; *starts = stt; *n_batches = nb;
    return 0;
}

/* ------------------------------------------------------------- optimizer */

int adam_init(Adam *a, size_t n) {
    memset(a, 0, sizeof *a);
    a->beta1 = 0.9f; a->beta2 = 0.98f; a->eps = 1e-9f;
    a->n = n;
    a->m = calloc(n ? n : 1, sizeof(float));
    a->v = calloc(n ? n : 1, sizeof(float));
    if (!a->m || !a->v) { adam_free(a); return -1; }
    return 0;
}

void adam_free(Adam *a) {
    if (!a) return;
    free(a->m); free(a->v);
    memset(a, 0, sizeof *a);
}

void adam_update(Adam *a, float *params, const float *grads, float lr) {
    adam_update_scaled(a, params, grads, 1.0f, lr);
}

void adam_update_scaled(Adam *a, float *params, const float *grads, float grad_scale, float lr) {
    a->t++;
    double bc1 = 1.0 - pow(a->beta1, (double)a->t), bc2 = 1.0 - pow(a->beta2, (double)a->t);
    float b1 = a->beta1, b2 = a->beta2, eps = a->eps;
    float step = (float)(lr / bc1), rbc2 = (float)(1.0 / bc2);
    float *restrict pm = params, *restrict am = a->m, *restrict av = a->v;
    const float *restrict gr = grads;
    OMP_PARALLEL_FOR_SIMD
    for (size_t i = 0; i < a->n; i++) {
        float g = gr[i] * grad_scale;
        float m = am[i] = b1 * am[i] + (1.0f - b1) * g;
        float v = av[i] = b2 * av[i] + (1.0f - b2) * g * g;
        pm[i] -= step * m / (sqrtf(v * rbc2) + eps);
    }
}

double train_grad_norm(const float *g, size_t n) {
    double ss = 0.0;
    OMP_SIMD_REDUCE(ss)
    for (size_t i = 0; i < n; i++) ss += (double)g[i] * g[i];
    return sqrt(ss);
}

float train_clip_factor(double norm, double max_norm) {
    return max_norm > 0 && norm > max_norm ? (float)(max_norm / (norm + 1e-12)) : 1.0f;
}

double train_clip_grad_norm(float *g, size_t n, double max_norm) {
    double norm = train_grad_norm(g, n);
    float s = train_clip_factor(norm, max_norm);
    if (s != 1.0f) {
        OMP_SIMD
        for (size_t i = 0; i < n; i++) g[i] *= s;
    }
    return norm;
}

double train_lr(long step, long total, double lr, long warmup, double min_lr_frac) {
    if (warmup > 0 && step < warmup) return lr * (double)(step + 1) / (double)warmup;
    long span = total - warmup;
    if (span <= 1) return lr;
    double p = (double)(step - warmup) / (double)(span - 1);
    if (p > 1) p = 1;
    double floor = lr * min_lr_frac;
    return floor + (lr - floor) * 0.5 * (1.0 + cos(M_PI * p));
}

/* ----------------------------------------------------- training state file */

static int write_all(FILE *f, const void *p, size_t n) { return fwrite(p, 1, n, f) == n ? 0 : -1; }

int train_state_save(const char *path, const Adam *a, long step, uint64_t seed, long total_steps,
                     char *err, size_t errlen) {
    char hdr[1024];
    size_t bytes = a->n * sizeof(float);
    int n = snprintf(hdr, sizeof hdr,
        "{\"__metadata__\":{\"format\":\"attnviz-train-state\",\"version\":\"1\",\"step\":\"%ld\","
        "\"num_params\":\"%zu\",\"seed\":\"%llu\",\"total_steps\":\"%ld\",\"adam_t\":\"%ld\"},"
        "\"adam.m\":{\"dtype\":\"F32\",\"shape\":[%zu],\"data_offsets\":[0,%zu]},"
        "\"adam.v\":{\"dtype\":\"F32\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}}",
        step, a->n, (unsigned long long)seed, total_steps, a->t, a->n, bytes, a->n, bytes, 2 * bytes);
    if (n < 0 || (size_t)n + 8 >= sizeof hdr) { errmsg_set(err, errlen, "state header too long"); return -1; }
    while (n % 8) hdr[n++] = ' ';
    hdr[n] = '\0';
    AtomicFile af;
    if (atomic_open(&af, path, err, errlen)) return -1;
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)(((uint64_t)n >> (8 * i)) & 0xff);
    /* floats are written in host order; attnviz targets little-endian hosts
     * (the checkpoint module converts; the state file is a local resume aid) */
    int bad = write_all(af.f, len8, 8) || write_all(af.f, hdr, (size_t)n) ||
              write_all(af.f, a->m, bytes) || write_all(af.f, a->v, bytes);
    if (bad) {
        errmsg_set(err, errlen, "cannot write %s: %s", path, strerror(errno));
        atomic_abort(&af);
        return -1;
    }
    return atomic_commit(&af, err, errlen);
}

static long meta_long(const cJSON *meta, const char *key, int *ok) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(meta, key);
    if (!cJSON_IsString(it)) { *ok = 0; return 0; }
    char *end;
    long v = strtol(it->valuestring, &end, 10);
    if (*end || end == it->valuestring) *ok = 0;
    return v;
}

int train_state_load(const char *path, Adam *a, long *step, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) { errmsg_set(err, errlen, "cannot open training state %s: %s (it is written beside the checkpoint)", path, strerror(errno)); return -1; }
    int rc = -1;
    char *hdr = NULL;
    cJSON *root = NULL;
    unsigned char len8[8];
    if (fread(len8, 1, 8, f) != 8) { errmsg_set(err, errlen, "%s: truncated", path); goto done; }
    uint64_t n = 0;
    for (int i = 0; i < 8; i++) n |= (uint64_t)len8[i] << (8 * i);
    if (n == 0 || n > 65536) { errmsg_set(err, errlen, "%s: not a training-state file (header length %llu)", path, (unsigned long long)n); goto done; }
    hdr = malloc(n + 1);
    if (!hdr || fread(hdr, 1, n, f) != n) { errmsg_set(err, errlen, "%s: truncated header", path); goto done; }
    hdr[n] = '\0';
    root = cJSON_Parse(hdr);
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "__metadata__");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(meta, "format");
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(meta, "version");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "attnviz-train-state")) {
        errmsg_set(err, errlen, "%s: not an attnviz training-state file", path); goto done;
    }
    if (!cJSON_IsString(ver) || strcmp(ver->valuestring, "1")) {
        errmsg_set(err, errlen, "%s: training-state version %s, this attnviz reads 1", path,
               cJSON_IsString(ver) ? ver->valuestring : "?"); goto done;
    }
    int ok = 1;
    long st = meta_long(meta, "step", &ok), np = meta_long(meta, "num_params", &ok), t = meta_long(meta, "adam_t", &ok);
    if (!ok || st < 0 || np < 0 || t < 0) { errmsg_set(err, errlen, "%s: bad metadata", path); goto done; }
    if ((size_t)np != a->n) {
        errmsg_set(err, errlen, "%s holds %ld optimizer values but the model has %zu parameters (state of another model?)", path, np, a->n);
        goto done;
    }
    size_t bytes = a->n * sizeof(float);
    if (fread(a->m, 1, bytes, f) != bytes || fread(a->v, 1, bytes, f) != bytes) {
        errmsg_set(err, errlen, "%s: truncated data", path); goto done;
    }
    a->t = t;
    *step = st;
    rc = 0;
done:
    cJSON_Delete(root);
    free(hdr);
    fclose(f);
    return rc;
}

/* ------------------------------------------------------------- snapshots */

/* Appends one snapshot object: every encoder layer/head's attention for each sentence. */
static int snapshot_record(StrBuf *s, Model *m, const TrainOptions *o, long step, double loss, double lr,
                           char *err, size_t errlen) {
    const ModelConfig *c = &m->config;
    int H = c->n_heads;
    char ltxt[32];
    if (isnan(loss)) snprintf(ltxt, sizeof ltxt, "null");   /* no step done yet */
    else snprintf(ltxt, sizeof ltxt, "%.6g", loss);
    if (strbuf_printf(s, "%s\n  {\"step\": %ld, \"loss\": %s, \"lr\": %.6g, \"sentences\": [",
                   s->len > 0 && s->buf[s->len - 1] == '}' ? "," : "", step, ltxt, lr)) goto oom;
    for (int k = 0; k < o->n_snap_sent; k++) {
        int S = o->snap_len[k];
        int tgt = VOCAB_2FR, one = 1;
        if (model_forward(m, o->snap_src[k], &S, S, &tgt, &one, 1, 1)) {
            errmsg_set(err, errlen, "snapshot: %s", m->err); return -1;
        }
        if (strbuf_printf(s, "%s\n    {\"maps\": [", k ? "," : "")) goto oom;
        for (int l = 0; l < c->n_enc_layers; l++) {
            if (strbuf_printf(s, "%s\n      {\"id\": \"encoder.%d.self\", \"stack\": \"encoder\", \"layer\": %d, "
                           "\"kind\": \"self\", \"d_k\": %d, \"heads\": [", l ? "," : "", l, l, c->d_model / H)) goto oom;
            for (int h = 0; h < H; h++) {
                const float *att = m->acts.enc_self.att + ((size_t)l * H + h) * S * S;  /* B = 1 */
                if (strbuf_printf(s, "%s\n        {\"head\": %d, \"weights\": [", h ? "," : "", h)) goto oom;
                for (int i = 0; i < S; i++) {
                    if (strbuf_printf(s, "%s[", i ? "," : "")) goto oom;
                    for (int j = 0; j < S; j++)
                        if (strbuf_printf(s, "%s%.5g", j ? "," : "", att[(size_t)i * S + j])) goto oom;
                    if (strbuf_printf(s, "]")) goto oom;
                }
                if (strbuf_printf(s, "]}")) goto oom;
            }
            if (strbuf_printf(s, "]}")) goto oom;
        }
        if (strbuf_printf(s, "]}")) goto oom;
    }
    if (strbuf_printf(s, "]}")) goto oom;
    return 0;
oom:
    errmsg_set(err, errlen, "out of memory");
    return -1;
}

static int snapshot_write(const StrBuf *body, const Model *m, const TrainOptions *o, char *err, size_t errlen) {
    char cfg[1024];
    model_config_json(&m->config, cfg, sizeof cfg);
    StrBuf s = {0};
    int bad = strbuf_printf(&s, "{\"format\": \"attnviz-snapshots\", \"version\": 1,\n \"model\": %s,\n \"sentences\": [", cfg);
    for (int k = 0; k < o->n_snap_sent && !bad; k++) {
        bad |= strbuf_printf(&s, "%s\n  {\"text\": ", k ? "," : "");
        bad |= strbuf_json_string(&s, o->snap_text[k]);
        bad |= strbuf_printf(&s, ", \"source_tokens\": [");
        for (int j = 0; j < o->snap_len[k]; j++) {
            bad |= strbuf_printf(&s, "%s", j ? "," : "");
            bad |= strbuf_json_string(&s, o->snap_tokens[k][j]);
        }
        bad |= strbuf_printf(&s, "]}");
    }
    bad |= strbuf_printf(&s, "],\n \"snapshots\": [%s\n ]}\n", body->buf ? body->buf : "");
    if (bad) { free(s.buf); errmsg_set(err, errlen, "out of memory"); return -1; }
    int rc = file_write_atomic(o->snapshot_path, s.buf, s.len, err, errlen);
    free(s.buf);
    return rc;
}

/* ------------------------------------------------- attention supervision */

void train_attn_targets(const TrainSet *s, const int *idx, const Batch *b, float *coref, float *align,
                        int *n_coref, int *n_align) {
    int B = b->B, S = b->S, T = b->T, nc = 0, na = 0;
    if (coref) memset(coref, 0, sizeof(float) * (size_t)B * S * S);
    if (align) memset(align, 0, sizeof(float) * (size_t)B * T * S);
    for (int i = 0; i < B; i++) {
        const TrainExample *e = &s->ex[idx[i]];
        if (coref && e->coref_p >= 0 && e->coref_p < S && e->coref_a < S) {
            coref[((size_t)i * S + e->coref_p) * S + e->coref_a] = 1.0f;
            nc++;
        }
        if (!align) continue;
        const int *al = s->align + 2 * e->align_off;
        for (int t = 0; t < e->tgt_len && t < T; t++) {
            int k = 0;
            for (int q = 0; q < e->n_align; q++) k += al[2 * q] == t;
            if (!k) continue;
            float *row = align + ((size_t)i * T + t) * S;
            for (int q = 0; q < e->n_align; q++)
                if (al[2 * q] == t) row[al[2 * q + 1]] += 1.0f / (float)k;
            na++;
        }
    }
    if (n_coref) *n_coref = nc;
    if (n_align) *n_align = na;
}

/* ------------------------------------------------------------------ loop */

int train_save_checkpoint(Model *m, const Adam *a, long step, const TrainOptions *o,
                          const char *const *extra, char *err, size_t errlen) {
    char state[4096];
    if (!o->out_path) return 0;
    if (checkpoint_save(o->out_path, m, o->vocab, o->n_vocab, extra, err, errlen)) return -1;
    snprintf(state, sizeof state, "%s.state", o->out_path);
    return train_state_save(state, a, step, o->seed, o->steps, err, errlen);
}

/* The loss the progress line shows is an exponential moving average over
 * about 1/(1 − LOSS_EMA_DECAY) = 50 steps:
 *     ema = LOSS_EMA_DECAY·ema + LOSS_EMA_WEIGHT·loss
 * LOSS_EMA_WEIGHT is 1 − LOSS_EMA_DECAY written out as 0.02: in double,
 * 1 − 0.98 is 0.020000000000000018, and the averages stay as they always were. */
#define LOSS_EMA_DECAY  0.98
#define LOSS_EMA_WEIGHT 0.02
/* TrainResult's first_loss, last_loss and aux losses are means over this many
 * steps at the start and at the end of the run (train.h). */
#define LOSS_WINDOW_STEPS 50

/* One loss as the progress line and TrainResult see it. */
typedef struct {
    double ema;                  /* NAN until the first value            */
    double first_sum, last_sum;  /* over the first / last LOSS_WINDOW_STEPS */
    long first_n, last_n;
} LossStats;

static void loss_stats_add(LossStats *r, double x, long step, long start_step, long steps) {
    r->ema = isnan(r->ema) ? x : LOSS_EMA_DECAY * r->ema + LOSS_EMA_WEIGHT * x;
    if (step - start_step < LOSS_WINDOW_STEPS) { r->first_sum += x; r->first_n++; }
    if (steps - step <= LOSS_WINDOW_STEPS) { r->last_sum += x; r->last_n++; }
}

/* What the loop keeps from one step to the next. */
typedef struct {
    Batch batch;                       /* reused buffers                              */
    int *order, *starts, n_batches;    /* this epoch's batches (train_epoch_batches)  */
    long epoch;                        /* the epoch of order; -1 before the first     */
    StrBuf snapshots;                     /* the snapshot objects recorded so far        */
    int next_snap;                     /* next index into o->snap_steps               */
    float *coref_target, *align_target;   /* supervision targets (B,S,S) and (B,T,S)  */
    size_t coref_cap, align_cap;       /* their capacities in floats                  */
    double t0;                         /* seconds (now_sec)                           */
    long tokens;                       /* source + target tokens seen                 */
    double lr, last_loss;              /* of the last step done                       */
    LossStats loss, coref_aux, align_aux;
    ThreadTune tune;                   /* OpenMP threads per step, by measurement     */
    Model twin;                        /* the second half of a two-thread step        */
} TrainLoop;

static void loop_init(TrainLoop *L, const TrainOptions *o, long start_step) {
    memset(L, 0, sizeof *L);
    L->epoch = -1;
    L->t0 = now_sec();
    L->last_loss = NAN;
    L->loss.ema = L->coref_aux.ema = L->align_aux.ema = NAN;
    while (L->next_snap < o->n_snap_steps && o->snap_steps[L->next_snap] < start_step) L->next_snap++;
    thread_tune_init(&L->tune);
}

static void loop_free(TrainLoop *L) {
    thread_tune_end(&L->tune);
    model_free(&L->twin);
    free(L->coref_target); free(L->align_target);
    batch_free(&L->batch);
    free(L->order); free(L->starts); free(L->snapshots.buf);
}

/* The options train_run cannot work with.  0, or -1 with err. */
static int check_run_options(const Model *m, const TrainSet *s, const TrainOptions *o, char *err, size_t errlen) {
    if (o->batch < 1 || o->steps < 0) return errmsg_set(err, errlen, "batch and steps must be positive");
    if (!(o->dropout >= 0.0f && o->dropout < 1.0f))
        return errmsg_set(err, errlen, "dropout %g must be in 0..1 (excluded)", o->dropout);
    if (s->max_src > m->config.max_len || s->max_tgt + 1 > m->config.max_len)
        return errmsg_set(err, errlen, "a sentence is longer than the model's max_len %d", m->config.max_len);
    return 0;
}

/* At the snapshot steps, records the model as it is before the update of
 * `step` (step == steps: the final model) and rewrites the snapshot file.
 * 0, or -1 with err. */
static int snapshot_if_due(TrainLoop *L, Model *m, const TrainOptions *o, long step, long start_step,
                           char *err, size_t errlen) {
    if (!o->snapshot_path || L->next_snap >= o->n_snap_steps || o->snap_steps[L->next_snap] != step) return 0;
    double loss = step == start_step ? NAN : L->last_loss;
    if (snapshot_record(&L->snapshots, m, o, step, loss, L->lr, err, errlen)) return -1;
    if (snapshot_write(&L->snapshots, m, o, err, errlen)) return -1;
    while (L->next_snap < o->n_snap_steps && o->snap_steps[L->next_snap] <= step) L->next_snap++;
    return 0;
}

/* Makes L->batch the batch of `step` (its epoch's order computed when the
 * epoch changes).  Returns the indices of its examples, or NULL with err. */
static const int *next_batch(TrainLoop *L, const TrainSet *s, const TrainOptions *o, long step,
                             char *err, size_t errlen) {
    if (!L->order || L->epoch < 0) {   /* batches per epoch does not depend on the epoch */
        free(L->order); free(L->starts);
        if (train_epoch_batches(s, o->batch, o->seed, 0, &L->order, &L->starts, &L->n_batches)) goto oom;
        L->epoch = 0;
    }
    long epoch = step / L->n_batches, pos = step % L->n_batches;
    if (epoch != L->epoch) {
        free(L->order); free(L->starts); L->order = L->starts = NULL;
        if (train_epoch_batches(s, o->batch, o->seed, epoch, &L->order, &L->starts, &L->n_batches)) goto oom;
        L->epoch = epoch;
    }
    const int *idx = L->order + L->starts[pos];
    if (batch_make(&L->batch, s, idx, L->starts[pos + 1] - L->starts[pos])) goto oom;
    return idx;
oom:
    errmsg_set(err, errlen, "out of memory");
    return NULL;
}

/* Makes *buf hold at least need floats (contents not kept).  0 or -1. */
static int reserve_floats(float **buf, size_t *cap, size_t need) {
    if (need <= *cap) return 0;
    free(*buf);
    *cap = 0;
    if (!(*buf = malloc(need * sizeof(float)))) return -1;
    *cap = need;
    return 0;
}

/* The attention supervisions asked for (each on when its weight > 0) with
 * their targets for the current batch, made of examples idx.  Fills sup and
 * the positions of the coreference and alignment terms in it (-1: off).
 * Returns how many, or -1 out of memory. */
static int batch_supervisions(TrainLoop *L, const TrainSet *s, const TrainOptions *o, const int *idx,
                              ModelAttnSupervision sup[2], int *coref_i, int *align_i) {
    const Batch *b = &L->batch;
    int n = 0;
    *coref_i = *align_i = -1;
    if (!(o->coref_weight > 0 || o->align_weight > 0)) return 0;
    if (o->coref_weight > 0 && reserve_floats(&L->coref_target, &L->coref_cap, (size_t)b->B * b->S * b->S)) return -1;
    if (o->align_weight > 0 && reserve_floats(&L->align_target, &L->align_cap, (size_t)b->B * b->T * b->S)) return -1;
    train_attn_targets(s, idx, b, o->coref_weight > 0 ? L->coref_target : NULL,
                       o->align_weight > 0 ? L->align_target : NULL, NULL, NULL);
    if (o->coref_weight > 0) {
        *coref_i = n;
        sup[n++] = (ModelAttnSupervision){ MODEL_ATTN_ENC_SELF, o->coref_layer, o->coref_head,
                                           o->coref_weight, L->coref_target, 0, 0, 0 };
    }
    if (o->align_weight > 0) {
        *align_i = n;
        sup[n++] = (ModelAttnSupervision){ MODEL_ATTN_CROSS, o->align_layer, o->align_head,
                                           o->align_weight, L->align_target, 0, 0, 0 };
    }
    return n;
}

/* One optimizer step on L->batch (examples idx): forward, zero the gradients,
 * backward with the supervisions, clip, Adam; then the loss statistics.
 * 0, or -1 with err. */
static int train_step(TrainLoop *L, Model *m, Adam *adam, const TrainSet *s, const TrainOptions *o,
                      const int *idx, long step, long start_step, char *err, size_t errlen) {
    const Batch *b = &L->batch;
    if (model_zero_grad(m)) return errmsg_set(err, errlen, "%s", m->err);
    ModelAttnSupervision supervisions[2];
    int coref_i, align_i;
    int n_sup = batch_supervisions(L, s, o, idx, supervisions, &coref_i, &align_i);
    if (n_sup < 0) return errmsg_set(err, errlen, "out of memory");
    /* a training forward: pad rows left out of the products, and dropout only in
     * this forward (snapshots and evaluation never drop); the backward applies
     * the masks this forward stored.  When OpenMP may use two threads, each half
     * of the batch has its own (model_train_step, the twin L->twin,
     * thread_tune_halves); the step cuts the batch in two even when the thread
     * tuner picks one, so the result does not depend on that timing-based choice. */
    m->training = 1;
    m->dropout = o->dropout > 0.0f ? o->dropout : 0.0f;
    if (o->dropout > 0.0f) model_dropout_seed(m, o->seed, (uint64_t)step);
    float loss = model_train_step(m, thread_tune_halves(&L->tune) ? &L->twin : NULL,
                                  &(ModelBatch){.src = b->src, .src_len = b->src_len, .S = b->S, .tgt = b->dec_in,
                                                .tgt_len = b->tgt_len, .T = b->T, .B = b->B},
                                  b->targets, o->label_smoothing, n_sup ? supervisions : NULL, n_sup);
    m->training = 0;
    if (isnan(loss))
        return errmsg_set(err, errlen, "step %ld: %s", step, m->err[0] ? m->err : "loss is NaN (lower --lr?)");

    float clip = train_clip_factor(train_grad_norm(m->grads_memory, m->num_params), o->clip);
    L->lr = train_lr(step, o->steps, o->lr, o->warmup, o->min_lr_frac);
    adam_update_scaled(adam, m->params_memory, m->grads_memory, clip, (float)L->lr);

    if (coref_i >= 0 && supervisions[coref_i].rows > 0)
        loss_stats_add(&L->coref_aux, supervisions[coref_i].loss, step, start_step, o->steps);
    if (align_i >= 0 && supervisions[align_i].rows > 0)
        loss_stats_add(&L->align_aux, supervisions[align_i].loss, step, start_step, o->steps);
    loss_stats_add(&L->loss, loss, step, start_step, o->steps);
    L->tokens += b->n_tokens;
    L->last_loss = loss;
    return 0;
}

/* Tells o->on_progress where training stands after `step`. */
static void report_progress(const TrainLoop *L, const TrainOptions *o, long step, long start_step) {
    if (!o->on_progress) return;
    TrainProgress p;
    p.step = step + 1;
    p.steps = o->steps;
    p.done_steps = step + 1 - start_step;
    p.elapsed = now_sec() - L->t0;
    p.tokens_per_sec = L->tokens / (p.elapsed > 0 ? p.elapsed : 1e-9);
    p.eta = p.elapsed / p.done_steps * (o->steps - step - 1);
    p.loss_ema = L->loss.ema;
    p.lr = L->lr;
    p.coref_aux = L->coref_aux.ema;
    p.align_aux = L->align_aux.ema;
    o->on_progress(&p, o->progress_ctx);
}

int train_run(Model *m, Adam *adam, long start_step, const TrainSet *s, const TrainOptions *o,
              TrainResult *res, char *err, size_t errlen) {
    memset(res, 0, sizeof *res);
    res->step_begin = res->step_end = start_step;
    res->coref_aux = res->align_aux = NAN;
    if (check_run_options(m, s, o, err, errlen)) return -1;
    if (model_zero_grad(m)) return errmsg_set(err, errlen, "%s", m->err);
    TrainLoop L;
    loop_init(&L, o, start_step);
    int rc = -1;
    if (thread_tune_halves(&L.tune) && model_twin_init(&L.twin, m)) { errmsg_set(err, errlen, "%s", L.twin.err); goto done; }
    for (long step = start_step; step <= o->steps; step++) {
        if (snapshot_if_due(&L, m, o, step, start_step, err, errlen)) goto done;
        if (step == o->steps) break;
        const int *idx = next_batch(&L, s, o, step, err, errlen);
        if (!idx) goto done;
        thread_tune_before(&L.tune);
        double t_step = now_sec();
        if (train_step(&L, m, adam, s, o, idx, step, start_step, err, errlen)) goto done;
        thread_tune_after(&L.tune, now_sec() - t_step);
        report_progress(&L, o, step, start_step);
        if (o->checkpoint_every > 0 && (step + 1) % o->checkpoint_every == 0 && step + 1 < o->steps) {
            if (train_save_checkpoint(m, adam, step + 1, o, o->extra, err, errlen)) goto done;
        }
        res->step_end = step + 1;
    }

    /* the result */
    res->seconds = now_sec() - L.t0;
    res->tokens = L.tokens;
    res->tokens_per_sec = res->seconds > 0 ? L.tokens / res->seconds : 0;
    res->first_loss = L.loss.first_n ? L.loss.first_sum / L.loss.first_n : NAN;
    res->last_loss = L.loss.last_n ? L.loss.last_sum / L.loss.last_n : L.last_loss;
    if (L.coref_aux.last_n) res->coref_aux = L.coref_aux.last_sum / L.coref_aux.last_n;
    if (L.align_aux.last_n) res->align_aux = L.align_aux.last_sum / L.align_aux.last_n;
    rc = 0;
done:
    loop_free(&L);
    return rc;
}
