/* longtext.c — see longtext.h. */
#include "pipeline/longtext.h"
#include "core/errmsg.h"
#include "core/strbuf.h"
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* 8 floats side by side (GCC's and clang's vector extension): an AVX2 build
 * where the machine has it (picked at each call, as core/tensor.c's kernels),
 * else the same source on 16-byte registers.  Each lane does the same
 * operations in the same order either way (no fused multiply-add:
 * -ffp-contract=off), so the sums are the same bits on every machine. */
typedef float F8 __attribute__((vector_size(32)));
typedef int I8 __attribute__((vector_size(32)));

/* Σ x, Σ x·j and Σ x·ln x over x = row[j], j in [from, to), in 8 lanes
 * summed at the end in lane order (x ≤ 1e-30 adds 0 to the last; the last
 * 1–7 keys go in one more vector padded with zeros).  out: the three sums.
 * ln x for x > 0 normal, to about 1e-6: x = 2^e · m, m in [1, 2), and
 * ln m = 2·atanh(u) = 2(u + u³/3 + u⁵/5 + …), u = (m − 1)/(m + 1) ≤ 1/3,
 * nine terms (libm's logf is not vectorised). */
#define ROW_SUMS_BODY                                                             \
    F8 s0 = {0}, s1 = {0}, h = {0};                                               \
    const F8 lane = {0, 1, 2, 3, 4, 5, 6, 7};                                     \
    const F8 tiny = {1e-30f, 1e-30f, 1e-30f, 1e-30f, 1e-30f, 1e-30f, 1e-30f, 1e-30f}; \
    for (int j = from; j < to; j += 8) {                                          \
        F8 x = {0};                                                               \
        memcpy(&x, row + j, (size_t)(to - j < 8 ? to - j : 8) * sizeof(float));   \
        I8 big = x > tiny;                                                        \
        I8 b = (big & (I8)x) | (~big & (I8)tiny);   /* x, or tiny where x is not above it */ \
        I8 e = ((b >> 23) & 0xff) - 127;                                          \
        F8 m = (F8)((b & 0x007fffff) | 0x3f800000);                               \
        F8 u = (m - 1.0f) / (m + 1.0f), u2 = u * u;                               \
        F8 p = u2 * (1.0f / 17) + 1.0f / 15;                                      \
        p = p * u2 + 1.0f / 13; p = p * u2 + 1.0f / 11; p = p * u2 + 1.0f / 9; p = p * u2 + 1.0f / 7; \
        p = p * u2 + 1.0f / 5; p = p * u2 + 1.0f / 3; p = p * u2 + 1.0f;        \
        F8 ln = __builtin_convertvector(e, F8) * 0.69314718f + 2.0f * u * p;      \
        s0 += x;                                                                  \
        s1 += x * (lane + (float)j);                                              \
        h += (F8)(big & (I8)(x * ln));                                            \
    }                                                                             \
    out[0] = out[1] = out[2] = 0;                                                 \
    for (int l = 0; l < 8; l++) out[0] += s0[l], out[1] += s1[l], out[2] += h[l];

static void row_sums_plain(const float *row, int from, int to, float out[3]) { ROW_SUMS_BODY }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("avx2"))) static void row_sums_avx2(const float *row, int from, int to, float out[3]) {
    ROW_SUMS_BODY
}
static void row_sums(const float *row, int from, int to, float out[3]) {
    if (__builtin_cpu_supports("avx2")) row_sums_avx2(row, from, to, out);
    else row_sums_plain(row, from, to, out);
}
#else
static void row_sums(const float *row, int from, int to, float out[3]) { row_sums_plain(row, from, to, out); }
#endif
#undef ROW_SUMS_BODY

/* One head's summary over its first n_real rows (weights T × T; causal: a
 * row's keys past its own position are 0 and not read).  Row i's distance
 * Σ_j w_ij |i − j| is i·Σw − Σw·j over the keys before it and Σw·j − i·Σw
 * over the keys from it on. */
static LongHeadSummary summarize(const float *w, int T, int n_real, int causal) {
    double dist = 0, ent = 0, sink = 0;
    for (int i = 0; i < n_real; i++) {
        const float *r = w + (size_t)i * T;
        float before[3], after[3] = {0, 0, 0};
        row_sums(r, 0, i, before);
        if (causal) row_sums(r, i, i + 1, after);
        else row_sums(r, i, T, after);
        float fi = (float)i;
        dist += (double)(fi * before[0] - before[1]) + (double)(after[1] - fi * after[0]);
        ent -= (double)before[2] + (double)after[2];
        sink += r[0];
    }
    float n = (float)(n_real > 0 ? n_real : 1);
    return (LongHeadSummary){(float)(dist / n), (float)(ent / n), (float)(sink / n)};
}

/* Rows rows[0..R) of m, keys k0 … k0 + nk − 1, as a new map of out (its
 * heads' weights and mask cut the same way); row_pos as TraceMapSpec's.  The
 * kept rows of the links and the --window's square both come from here. */
static int add_part(Trace *out, const TraceMap *m, const int *rows, int R, int k0, int nk, const int *row_pos) {
    const char *q[LONGTEXT_WINDOW];
    int T = m->Tk;
    for (int r = 0; r < R; r++) q[r] = m->queries[rows[r]];
    unsigned char *mask = m->mask ? malloc((size_t)(R > 0 ? R : 1) * nk) : NULL;
    float *buf = malloc((size_t)(R > 0 ? R : 1) * nk * sizeof *buf);
    if ((m->mask && !mask) || !buf) { free(mask); free(buf); return -1; }
    for (int r = 0; mask && r < R; r++) memcpy(mask + (size_t)r * nk, m->mask + (size_t)rows[r] * T + k0, (size_t)nk);
    TraceMap *o = trace_add_map(out, &(TraceMapSpec){.id = m->id, .stack = m->stack, .layer = m->layer,
                                                     .kind = m->kind, .queries = q, .Tq = R,
                                                     .keys = (const char *const *)m->keys + k0, .Tk = nk,
                                                     .d_k = m->d_k, .Dv = m->Dv, .mask = mask,
                                                     .mask_fill = m->mask_fill, .n_heads = m->n_heads,
                                                     .n_kv_heads = m->n_kv_heads, .score_scale = m->score_scale,
                                                     .row_pos = row_pos});
    int rc = o ? 0 : -1;
    for (int h = 0; h < m->n_heads && rc == 0; h++) {
        for (int r = 0; r < R; r++)
            memcpy(buf + (size_t)r * nk, m->heads[h].weights + (size_t)rows[r] * T + k0, (size_t)nk * sizeof *buf);
        rc = trace_set_head(o, h, buf, NULL, NULL, NULL, NULL);
    }
    free(mask);
    free(buf);
    return rc;
}

static int summarize_map(LongText *lt, const TraceMap *m) {
    int H = m->n_heads;
    if (lt->n_summary + H > lt->cap_summary) {
        int cap = 2 * (lt->cap_summary + H);
        LongHeadSummary *s = realloc(lt->summary, (size_t)cap * sizeof *s);
        if (!s) return -1;
        lt->summary = s;
        lt->cap_summary = cap;
    }
    LongHeadSummary *out = lt->summary + lt->n_summary;
    int causal = !strcmp(m->kind, "masked_self");
#ifdef _OPENMP
    #pragma omp parallel for schedule(dynamic, 1) if (H > 1)
#endif
    for (int h = 0; h < H; h++) out[h] = summarize(m->heads[h].weights, m->Tk, lt->n_real, causal);
    lt->n_summary += H;
    return 0;
}

/* On the first map: the trace's members that the pooled and kept traces
 * share (the forward pass sets them after longtext_begin). */
static int take_members(LongText *lt, const Trace *t) {
    const char *const *lab = (const char *const *)lt->blocks.labels;
    int nb = lt->blocks.n, a = lt->win_from, n = lt->win_to - a + 1;
    if (a >= 0 && (trace_set_model_json(&lt->window, t->json_model) ||
                   (t->n_source && trace_set_source(&lt->window, (const char *const *)t->source_tokens + a, n)) ||
                   (t->n_target && trace_set_target(&lt->window, (const char *const *)t->target_tokens + a, n))))
        return -1;
    return trace_set_model_json(&lt->pooled, t->json_model) ||
           trace_set_source(&lt->pooled, lab, t->n_source ? nb : 0) ||
           trace_set_target(&lt->pooled, lab, t->n_target ? nb : 0) ||
           trace_set_source(&lt->rows, (const char *const *)t->source_tokens, t->n_source) ||
           trace_set_target(&lt->rows, (const char *const *)t->target_tokens, t->n_target);
}

/* The window's square of m into lt->window. */
static int keep_window(LongText *lt, const TraceMap *m) {
    int rows[LONGTEXT_WINDOW], n = lt->win_to - lt->win_from + 1;
    for (int i = 0; i < n; i++) rows[i] = lt->win_from + i;
    return add_part(&lt->window, m, rows, n, lt->win_from, n, NULL);
}

/* A map's work, on the worker thread while the forward pass computes the
 * next layer: written, pooled, its kept rows copied, summed up, freed. */
static int take_map(LongText *lt, TraceMap *m) {
    if (lt->writing && trace_bin_add_map(&lt->bin, m, lt->job_err, sizeof lt->job_err)) return -1;
    if (words_merge_map(&lt->blocks, m, &lt->pooled, lt->job_err, sizeof lt->job_err)) return -1;
    if (add_part(&lt->rows, m, lt->keep, lt->n_keep, 0, m->Tk, lt->keep) || summarize_map(lt, m) ||
        (lt->win_from >= 0 && keep_window(lt, m)))
        return errmsg_set(lt->job_err, sizeof lt->job_err, "out of memory");
    return 0;
}

static void *job_main(void *arg) {
    LongText *lt = arg;
#ifdef _OPENMP
    omp_set_num_threads(1);   /* this thread's own regions: one thread beside the forward pass's */
#endif
    lt->job_rc = take_map(lt, &lt->job);
    trace_drop_matrices(&lt->job);
    free(lt->job.heads);
    lt->job.heads = NULL;
    return NULL;
}

int longtext_wait(LongText *lt, char *err, size_t errlen) {
    if (lt->busy) {
        pthread_join(lt->worker, NULL);
        lt->busy = 0;
    }
    if (lt->job_rc) return errmsg_set(err, errlen, "%s", lt->job_err[0] ? lt->job_err : "out of memory");
    return 0;
}

/* The sink: m is complete.  Its matrices go to the worker thread (the map
 * keeps its names and tokens, which stay put until the trace is freed); the
 * map before it must be done first, so at most two layers' maps are alive. */
static int map_done(TraceSink *s, Trace *t, TraceMap *m) {
    LongText *lt = (LongText *)s;
    if (longtext_wait(lt, s->err, sizeof s->err)) return -1;
    if (lt->pooled.n_maps == 0 && take_members(lt, t)) return errmsg_set(s->err, sizeof s->err, "out of memory");
    if (m->Tq != lt->T || m->Tk != lt->T)
        return errmsg_set(s->err, sizeof s->err, "map %s is %d × %d, not the text's %d tokens", m->id, m->Tq, m->Tk, lt->T);
    TraceHead *fresh = calloc((size_t)(m->n_heads > 0 ? m->n_heads : 1), sizeof *fresh);
    if (!fresh) return errmsg_set(s->err, sizeof s->err, "out of memory");
    for (int h = 0; h < m->n_heads; h++) fresh[h].head = h;
    lt->job = *m;                /* its matrices and mask now the job's */
    m->heads = fresh;
    m->mask = NULL;
    lt->job.row_labels = NULL;   /* the map's own, not the job's to free */
    lt->job_rc = 0;
    lt->job_err[0] = 0;
    if (pthread_create(&lt->worker, NULL, job_main, lt) != 0) {   /* no thread: here, now */
        job_main(lt);
        return longtext_wait(lt, s->err, sizeof s->err);
    }
    lt->busy = 1;
    return 0;
}

/* Blocks of lt->block tokens labelled "FIRST-LAST first-token". */
static int make_blocks(LongText *lt, const char *const *tokens, char *err, size_t errlen) {
    int T = lt->T;
    unsigned char *begins = malloc((size_t)T);
    if (!begins) return errmsg_set(err, errlen, "out of memory");
    for (int i = 0; i < T; i++) begins[i] = (unsigned char)(i % lt->block == 0);
    /* n_real = T: pads are pooled like any token */
    int rc = words_from_begins(&lt->blocks, tokens, begins, T, T, err, errlen);
    free(begins);
    for (int k = 0; rc == 0 && k < lt->blocks.n; k++) {   /* "0-15 The", not the tokens joined */
        char buf[96];
        snprintf(buf, sizeof buf, "%d-%d %.40s", lt->blocks.first[k], lt->blocks.first[k + 1] - 1,
                 tokens[lt->blocks.first[k]]);
        free(lt->blocks.labels[k]);
        if (!(lt->blocks.labels[k] = strdup(buf))) rc = errmsg_set(err, errlen, "out of memory");
    }
    return rc;
}

int longtext_begin(LongText *lt, Trace *t, const char *const *tokens, int T, int n_real, const int *keep, int n_keep,
                   const char *trace_path, const TraceBinOptions *o, char *err, size_t errlen) {
    memset(lt, 0, sizeof *lt);
    trace_init(&lt->pooled);
    trace_init(&lt->rows);
    trace_init(&lt->window);
    lt->win_from = lt->win_to = -1;
    lt->sink.map_done = map_done;
    lt->T = T;
    lt->n_real = n_real;
    lt->block = (T + LONGTEXT_CELLS - 1) / LONGTEXT_CELLS;
    lt->n_keep = n_keep < LONGTEXT_ROWS ? n_keep : LONGTEXT_ROWS;
    for (int r = 0; r < lt->n_keep; r++) {
        if (keep[r] < 0 || keep[r] >= T) return errmsg_set(err, errlen, "row %d is outside the %d tokens", keep[r], T);
        lt->keep[r] = keep[r];
    }
    if (make_blocks(lt, tokens, err, errlen)) return -1;
    if (trace_path) {
        if (trace_bin_begin(&lt->bin, trace_path, o, err, errlen)) return -1;
        lt->writing = 1;
    }
    t->sink = &lt->sink;
    return 0;
}

int longtext_set_window(LongText *lt, int from, int to, char *err, size_t errlen) {
    if (from < 0 || to < from || to >= lt->T)
        return errmsg_set(err, errlen, "--window %d:%d is outside the text's %d tokens (0 to %d)", from, to, lt->T,
                          lt->T - 1);
    if (to - from + 1 > LONGTEXT_WINDOW)
        return errmsg_set(err, errlen, "--window %d:%d holds %d tokens; a window draws at most %d", from, to,
                          to - from + 1, LONGTEXT_WINDOW);
    lt->win_from = from;
    lt->win_to = to;
    return 0;
}

Trace *longtext_drawn(LongText *lt) {
    return lt->win_from >= 0 ? &lt->window : &lt->pooled;
}

int longtext_row(const LongText *lt, int q) {
    if (lt->win_from < 0) return q / lt->block;
    return q >= lt->win_from && q <= lt->win_to ? q - lt->win_from : -1;
}

int longtext_end(LongText *lt, const Trace *members, const Trace *images, char *err, size_t errlen) {
    if (!lt->writing) return 0;
    Trace h = *members;   /* members' own, with images' list: nothing is copied or freed */
    h.images = images->images;
    h.n_images = images->n_images;
    lt->writing = 0;
    return trace_bin_end(&lt->bin, &h, err, errlen);
}

char *longtext_summary_json(const LongText *lt) {
    StrBuf b = {0};
    int rc = strbuf_printf(&b, "{\"rule\":\"per head, averaged over its query rows: distance = sum_j w_ij |i - j| "
                               "(tokens), entropy = -sum_j w_ij ln w_ij (nats), sink = w_i0\",\"heads\":[");
    int k = 0;
    for (int i = 0; i < lt->pooled.n_maps; i++)
        for (int h = 0; h < lt->pooled.maps[i].n_heads && k < lt->n_summary; h++, k++)
            rc |= strbuf_printf(&b, "%s{\"map\":\"%s\",\"head\":%d,\"distance\":%.4g,\"entropy\":%.4g,\"sink\":%.4g}",
                                k ? "," : "", lt->pooled.maps[i].id, h, (double)lt->summary[k].distance,
                                (double)lt->summary[k].entropy, (double)lt->summary[k].sink);
    rc |= strbuf_printf(&b, "]}");
    if (rc) { free(b.buf); return NULL; }
    return b.buf;
}

/* Row r's K strongest keys of w (T × T) into top, weights into wt; how many
 * (keys with weight 0 above a causal row's diagonal are not taken). */
static int row_top(const float *row, int T, int r, int K, int causal, int *top, float *wt) {
    int n = 0, last = causal ? r : T - 1;
    for (int j = 0; j <= last; j++) {
        float v = row[j];
        if (n == K && v <= wt[K - 1]) continue;
        int at = n < K ? n++ : K - 1;
        while (at > 0 && wt[at - 1] < v) { top[at] = top[at - 1]; wt[at] = wt[at - 1]; at--; }
        top[at] = j;
        wt[at] = v;
    }
    return n;
}

char *longtext_passage_json(LongText *lt, const int *maps, const int *heads, const char *const *labels, int n,
                            int query, char *err, size_t errlen) {
    if (!lt->writing) { errmsg_set(err, errlen, "no trace.bin to read the heads back from"); return NULL; }
    int T = lt->T, K = LONGTEXT_TOP;
    float *w = malloc((size_t)T * T * sizeof *w);
    StrBuf b = {0};
    int rc = w ? strbuf_printf(&b, "{\"k\":%d,\"query\":%d,\"tokens\":[", K, query >= 0 && query < T ? query : 0) : -1;
    for (int i = 0; i < T && rc == 0; i++) {
        if (i) rc |= strbuf_printf(&b, ",");
        rc |= strbuf_json_string(&b, lt->rows.n_maps ? lt->rows.maps[0].keys[i] : "");
    }
    rc |= strbuf_printf(&b, "],\"heads\":[");
    for (int k = 0; k < n && rc == 0; k++) {
        if (maps[k] < 0 || maps[k] >= lt->pooled.n_maps) continue;
        if (trace_bin_read_weights(&lt->bin, maps[k], heads[k], w, err, errlen)) { free(w); free(b.buf); return NULL; }
        const TraceMap *m = &lt->pooled.maps[maps[k]];
        int causal = !strcmp(m->kind, "masked_self");
        rc |= strbuf_printf(&b, "%s{\"map\":\"%s\",\"head\":%d,\"label\":", k ? "," : "", m->id, heads[k]);
        rc |= strbuf_json_string(&b, labels[k]);
        StrBuf wt = {0};
        rc |= strbuf_printf(&b, ",\"top\":[") | strbuf_printf(&wt, "%s", "");
        for (int r = 0; r < T && rc == 0; r++) {
            int top[LONGTEXT_TOP];
            float v[LONGTEXT_TOP];
            int got = row_top(w + (size_t)r * T, T, r, K, causal, top, v);
            rc |= strbuf_printf(&b, r ? ",[" : "[") | strbuf_printf(&wt, r ? ",[" : "[");
            for (int i = 0; i < got && rc == 0; i++)
                rc |= strbuf_printf(&b, i ? ",%d" : "%d", top[i]) | strbuf_printf(&wt, i ? ",%.4g" : "%.4g", (double)v[i]);
            rc |= strbuf_printf(&b, "]") | strbuf_printf(&wt, "]");
        }
        rc |= strbuf_printf(&b, "],\"w\":[%s]}", wt.buf ? wt.buf : "");
        free(wt.buf);
    }
    rc |= strbuf_printf(&b, "]}");
    free(w);
    if (rc) { free(b.buf); errmsg_set(err, errlen, "out of memory"); return NULL; }
    return b.buf;
}

void longtext_free(LongText *lt) {
    if (!lt) return;
    char err[8];
    longtext_wait(lt, err, sizeof err);
    if (lt->writing) trace_bin_abort(&lt->bin);
    words_free(&lt->blocks);
    trace_free(&lt->pooled);
    trace_free(&lt->rows);
    trace_free(&lt->window);
    free(lt->summary);
    memset(lt, 0, sizeof *lt);
}
