/* longtext.c — see longtext.h. */
#include "pipeline/longtext.h"
#include "core/errmsg.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ln x for x > 0 normal, to about 1e-6: x = 2^e · m, m in [1, 2), and
 * ln m = 2·atanh(u) = 2(u + u³/3 + u⁵/5 + …), u = (m − 1)/(m + 1) ≤ 1/3, nine
 * terms.  A plain loop the compiler vectorises (libm's logf does not). */
static inline float ln_fast(float x) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    int e = (int)((b >> 23) & 0xff) - 127;
    b = (b & 0x007fffffu) | 0x3f800000u;
    float m;
    memcpy(&m, &b, sizeof m);
    float u = (m - 1.0f) / (m + 1.0f), u2 = u * u;
    float s = 1.0f / 17;
    s = s * u2 + 1.0f / 15; s = s * u2 + 1.0f / 13; s = s * u2 + 1.0f / 11; s = s * u2 + 1.0f / 9;
    s = s * u2 + 1.0f / 7; s = s * u2 + 1.0f / 5; s = s * u2 + 1.0f / 3; s = s * u2 + 1.0f;
    return (float)e * 0.69314718f + 2.0f * u * s;
}

/* One head's summary over its first n_real rows (weights T × T). */
static LongHeadSummary summarize(const float *w, int T, int n_real) {
    double dist = 0, ent = 0, sink = 0;
    for (int i = 0; i < n_real; i++) {
        const float *r = w + (size_t)i * T;
        float d = 0, h = 0;
        for (int j = 0; j < T; j++) {
            float x = r[j];
            d += x * (float)(i > j ? i - j : j - i);
            h -= x > 1e-30f ? x * ln_fast(x) : 0.0f;
        }
        dist += d;
        ent += h;
        sink += r[0];
    }
    float n = (float)(n_real > 0 ? n_real : 1);
    return (LongHeadSummary){(float)(dist / n), (float)(ent / n), (float)(sink / n)};
}

/* The rows of m the links keep, into lt->rows. */
static int keep_rows(LongText *lt, const TraceMap *m) {
    int R = lt->n_keep, Tk = m->Tk;
    const char *q[LONGTEXT_ROWS];
    for (int r = 0; r < R; r++) q[r] = m->queries[lt->keep[r]];
    unsigned char *mask = NULL;
    if (m->mask && R > 0) {
        if (!(mask = malloc((size_t)R * Tk))) return -1;
        for (int r = 0; r < R; r++) memcpy(mask + (size_t)r * Tk, m->mask + (size_t)lt->keep[r] * Tk, (size_t)Tk);
    }
    TraceMap *o = trace_add_map(&lt->rows, &(TraceMapSpec){.id = m->id, .stack = m->stack, .layer = m->layer,
                                                           .kind = m->kind, .queries = q, .Tq = R,
                                                           .keys = (const char *const *)m->keys, .Tk = Tk,
                                                           .d_k = m->d_k, .Dv = m->Dv, .mask = mask,
                                                           .mask_fill = m->mask_fill, .n_heads = m->n_heads,
                                                           .n_kv_heads = m->n_kv_heads, .score_scale = m->score_scale,
                                                           .row_pos = lt->keep});
    free(mask);
    if (!o) return -1;
    float *buf = malloc((size_t)(R > 0 ? R : 1) * Tk * sizeof *buf);
    if (!buf) return -1;
    int rc = 0;
    for (int h = 0; h < m->n_heads && rc == 0; h++) {
        for (int r = 0; r < R; r++)
            memcpy(buf + (size_t)r * Tk, m->heads[h].weights + (size_t)lt->keep[r] * Tk, (size_t)Tk * sizeof *buf);
        rc = trace_set_head(o, h, buf, NULL, NULL, NULL, NULL);
    }
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
#ifdef _OPENMP
    #pragma omp parallel for schedule(dynamic, 1) if (H > 1)
#endif
    for (int h = 0; h < H; h++) out[h] = summarize(m->heads[h].weights, m->Tk, lt->n_real);
    lt->n_summary += H;
    return 0;
}

/* On the first map: the trace's members that the pooled and kept traces
 * share (the forward pass sets them after longtext_begin). */
static int take_members(LongText *lt, const Trace *t) {
    const char *const *lab = (const char *const *)lt->blocks.labels;
    int nb = lt->blocks.n;
    return trace_set_model_json(&lt->pooled, t->json_model) ||
           trace_set_source(&lt->pooled, lab, t->n_source ? nb : 0) ||
           trace_set_target(&lt->pooled, lab, t->n_target ? nb : 0) ||
           trace_set_source(&lt->rows, (const char *const *)t->source_tokens, t->n_source) ||
           trace_set_target(&lt->rows, (const char *const *)t->target_tokens, t->n_target);
}

/* The sink: m is complete.  Written, pooled, its kept rows copied, summed up,
 * then its matrices freed. */
static int map_done(TraceSink *s, Trace *t, TraceMap *m) {
    LongText *lt = (LongText *)s;
    if (lt->pooled.n_maps == 0 && take_members(lt, t)) return errmsg_set(s->err, sizeof s->err, "out of memory");
    if (m->Tq != lt->T || m->Tk != lt->T)
        return errmsg_set(s->err, sizeof s->err, "map %s is %d × %d, not the text's %d tokens", m->id, m->Tq, m->Tk, lt->T);
    if (lt->writing && trace_bin_add_map(&lt->bin, m, s->err, sizeof s->err)) return -1;
    if (words_merge_map(&lt->blocks, m, &lt->pooled, s->err, sizeof s->err)) return -1;
    if (keep_rows(lt, m) || summarize_map(lt, m)) return errmsg_set(s->err, sizeof s->err, "out of memory");
    trace_drop_matrices(m);   /* the mask too, T² bytes a map: the pooled and kept maps have theirs */
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
    lt->sink.map_done = map_done;
    lt->T = T;
    lt->n_real = n_real;
    lt->block = (T + LONGTEXT_CELLS - 1) / LONGTEXT_CELLS;
    lt->n_wanted = n_keep;
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

int longtext_end(LongText *lt, const Trace *members, const Trace *images, char *err, size_t errlen) {
    if (!lt->writing) return 0;
    Trace h = *members;   /* members' own, with images' list: nothing is copied or freed */
    h.images = images->images;
    h.n_images = images->n_images;
    lt->writing = 0;
    return trace_bin_end(&lt->bin, &h, err, errlen);
}

const LongHeadSummary *longtext_summary(const LongText *lt, int k) {
    return k >= 0 && k < lt->n_summary ? &lt->summary[k] : NULL;
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

/* The JSON text of s with quotes, backslashes and controls escaped. */
static int put_json_string(StrBuf *b, const char *s) {
    int rc = strbuf_printf(b, "\"");
    for (; *s && rc == 0; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') rc = strbuf_printf(b, "\\%c", c);
        else if (c < 0x20) rc = strbuf_printf(b, "\\u%04x", c);
        else rc = strbuf_printf(b, "%c", c);
    }
    return rc | strbuf_printf(b, "\"");
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
        rc |= put_json_string(&b, lt->rows.n_maps ? lt->rows.maps[0].keys[i] : "");
    }
    rc |= strbuf_printf(&b, "],\"heads\":[");
    for (int k = 0; k < n && rc == 0; k++) {
        if (maps[k] < 0 || maps[k] >= lt->pooled.n_maps) continue;
        if (trace_bin_read_weights(&lt->bin, maps[k], heads[k], w, err, errlen)) { free(w); free(b.buf); return NULL; }
        const TraceMap *m = &lt->pooled.maps[maps[k]];
        int causal = !strcmp(m->kind, "masked_self");
        rc |= strbuf_printf(&b, "%s{\"map\":\"%s\",\"head\":%d,\"label\":", k ? "," : "", m->id, heads[k]);
        rc |= put_json_string(&b, labels[k]);
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
    if (lt->writing) trace_bin_abort(&lt->bin);
    free(lt->bin.tri);
    words_free(&lt->blocks);
    trace_free(&lt->pooled);
    trace_free(&lt->rows);
    free(lt->summary);
    memset(lt, 0, sizeof *lt);
}
