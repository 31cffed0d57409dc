/* words.c — see words.h. */
#include "pipeline/words.h"
#include "core/errmsg.h"
#include "core/strbuf.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* 1 when s[0..n) is one or more signs and nothing else (spaces aside): "." "," "?!". */
static int only_punct(const char *s, size_t n) {
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isspace(c)) continue;
        if (!ispunct(c)) return 0;
        any = 1;
    }
    return any;
}

static int words_alloc(Words *w, int n, char *err, size_t errlen) {
    memset(w, 0, sizeof *w);
    size_t k = (size_t)(n > 0 ? n : 1);
    w->word_of = malloc(k * sizeof *w->word_of);
    w->first = malloc((k + 1) * sizeof *w->first);
    w->labels = calloc(k, sizeof *w->labels);
    if (!w->word_of || !w->first || !w->labels) { words_free(w); return errmsg_set(err, errlen, "out of memory"); }
    w->n_pieces = n;
    return 0;
}

/* Fills word_of, first, n and n_real from begins (piece 0 and pads always begin). */
static void group(Words *w, const unsigned char *begins, int n_real) {
    w->n = w->n_real = 0;
    for (int i = 0; i < w->n_pieces; i++) {
        if (i == 0 || begins[i] || i >= n_real) w->first[w->n++] = i;
        w->word_of[i] = w->n - 1;
        if (i < n_real) w->n_real = w->n;
    }
    w->first[w->n] = w->n_pieces;
}

int words_from_begins(Words *w, const char *const *pieces, const unsigned char *begins, int n, int n_real, char *err,
                      size_t errlen) {
    if (words_alloc(w, n, err, errlen)) return -1;
    group(w, begins, n_real);
    for (int k = 0; k < w->n; k++) {
        StrBuf s = {0};
        int rc = strbuf_printf(&s, "%s", "");
        for (int i = w->first[k]; i < w->first[k + 1]; i++) rc |= strbuf_printf(&s, "%s", pieces[i]);
        w->labels[k] = s.buf;
        if (rc) { words_free(w); return errmsg_set(err, errlen, "out of memory"); }
    }
    return 0;
}

/* begins[i] from the spans: a piece of no text (a special, a pad) is a word;
 * so is one that a space or another piece's end separates from the one before,
 * a sign, or the piece after a sign. */
static void begins_from_spans(const HfInput *in, const char *text, unsigned char *begins) {
    for (int i = 0; i < in->n; i++) {
        int s = in->start[i], e = in->end[i];
        int empty = s >= e, prev_empty = i == 0 || in->start[i - 1] >= in->end[i - 1];
        begins[i] = (unsigned char)(i == 0 || empty || prev_empty || s > in->end[i - 1] || isspace((unsigned char)text[s]) ||
                                    only_punct(text + s, (size_t)(e - s)) ||
                                    only_punct(text + in->start[i - 1], (size_t)(in->end[i - 1] - in->start[i - 1])));
    }
}

/* A span's text without its spaces, as a label. */
static char *span_label(const char *text, int s, int e) {
    while (s < e && isspace((unsigned char)text[s])) s++;
    while (e > s && isspace((unsigned char)text[e - 1])) e--;
    return strndup(text + s, (size_t)(e - s));
}

int words_of_input(Words *w, const HfFile *f, const HfInput *in, const char *text, char *err, size_t errlen) {
    unsigned char *begins = malloc((size_t)(in->n > 0 ? in->n : 1));
    if (!begins) return errmsg_set(err, errlen, "out of memory");
    int rc;
    if (in->start) {
        begins_from_spans(in, text, begins);
        rc = words_from_begins(w, (const char *const *)in->tokens, begins, in->n, in->n_real, err, errlen);
        for (int k = 0; rc == 0 && k < w->n; k++) {   /* the word as typed; a special keeps its own name */
            int s = in->start[w->first[k]], e = in->end[w->first[k + 1] - 1];
            if (s >= e) continue;
            char *typed = span_label(text, s, e);
            if (!typed) { words_free(w); rc = errmsg_set(err, errlen, "out of memory"); break; }
            free(w->labels[k]);
            w->labels[k] = typed;
        }
    } else {
        for (int i = 0; i < in->n; i++) {
            const char *p = in->tokens[i], *q = i ? in->tokens[i - 1] : "";
            begins[i] = (unsigned char)(i == 0 || hf_file_token_begins_word(f, in->ids[i]) ||
                                        hf_file_token_begins_word(f, in->ids[i - 1]) < 0 ||
                                        hf_file_token_begins_word(f, in->ids[i]) < 0 || only_punct(p, strlen(p)) ||
                                        only_punct(q, strlen(q)));
        }
        rc = words_from_begins(w, (const char *const *)in->tokens, begins, in->n, in->n_real, err, errlen);
    }
    free(begins);
    return rc;
}

int words_merged(const Words *w) {
    return w->n < w->n_pieces;
}

/* One head's weights (T, T) merged into words (n, n).  A word's pieces are
 * consecutive, so each row is summed a word's span at a time; ends[i] (or
 * NULL: T) is where row i's keys stop being attended: the keys from there on
 * are masked, 0, and not read (a long causal map: half of them). */
static void merge_weights(const Words *w, const float *a, const int *ends, float *out) {
    int T = w->n_pieces, n = w->n;
    memset(out, 0, (size_t)n * n * sizeof *out);
    for (int i = 0; i < T; i++) {
        const float *row = a + (size_t)i * T;
        int last = ends ? ends[i] : T;
        float *o = out + (size_t)w->word_of[i] * n;
        for (int K = 0; K < n && w->first[K] < last; K++) {
            int end = w->first[K + 1] < last ? w->first[K + 1] : last;
            float sum = 0;
            for (int j = w->first[K]; j < end; j++) sum += row[j];
            o[K] += sum;
        }
    }
    for (int Q = 0; Q < n; Q++) {
        float pieces = (float)(w->first[Q + 1] - w->first[Q]);
        for (int K = 0; K < n; K++) out[(size_t)Q * n + K] /= pieces;
    }
}

static void merge_mask(const Words *w, const unsigned char *a, unsigned char *out) {
    int T = w->n_pieces, n = w->n;
    memset(out, 0, (size_t)n * n);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) out[(size_t)w->word_of[i] * n + w->word_of[j]] |= a[(size_t)i * T + j];
}

/* A map being merged: its new map's heads' buffers (handed to the trace when
 * filled) and where each row's attended keys end. */
typedef struct { const TraceMap *m; float **buf; int *ends; } MergeJob;

static void job_free(MergeJob *j) {
    for (int h = 0; j->buf && h < j->m->n_heads; h++) free(j->buf[h]);
    free(j->buf);
    free(j->ends);
    j->buf = NULL;
    j->ends = NULL;
}

/* m's new map added to out, mask merged, and its buffers made; the weights
 * are merged later (merge_weights), on the threads.  0, or -1 with err. */
static int job_begin(const Words *w, const TraceMap *m, Trace *out, MergeJob *j, char *err, size_t errlen) {
    *j = (MergeJob){m, NULL, NULL};
    if (m->Tq != w->n_pieces || m->Tk != w->n_pieces)
        return errmsg_set(err, errlen, "map %s is %d × %d, not the %d pieces grouped into words", m->id, m->Tq, m->Tk,
                          w->n_pieces);
    size_t cells = (size_t)(w->n > 0 ? w->n : 1) * (size_t)(w->n > 0 ? w->n : 1);   /* n ≤ pieces, already in memory */
    int H = m->n_heads;
    j->buf = calloc((size_t)(H > 0 ? H : 1), sizeof *j->buf);   /* each head's, handed to the trace */
    int nomem = !j->buf;
    for (int h = 0; j->buf && h < H; h++) nomem |= !(j->buf[h] = malloc(cells * sizeof **j->buf));
    unsigned char *mbuf = m->mask ? malloc(cells) : NULL;
    j->ends = m->mask ? malloc((size_t)(m->Tq > 0 ? m->Tq : 1) * sizeof *j->ends) : NULL;
    if (nomem || (m->mask && (!mbuf || !j->ends))) {
        free(mbuf);
        job_free(j);
        return errmsg_set(err, errlen, "out of memory");
    }
    if (m->mask) merge_mask(w, m->mask, mbuf);
    for (int i = 0; j->ends && i < m->Tq; i++)   /* once a map: every head shares the mask */
        for (j->ends[i] = m->Tk; j->ends[i] > 0 && !m->mask[(size_t)i * m->Tk + j->ends[i] - 1];) j->ends[i]--;
    const char *const *lab = (const char *const *)w->labels;
    TraceMap *o = trace_add_map(out, &(TraceMapSpec){.id = m->id, .stack = m->stack, .layer = m->layer, .kind = m->kind,
                                                    .queries = lab, .Tq = w->n, .keys = lab, .Tk = w->n, .d_k = m->d_k,
                                                    .Dv = m->Dv, .mask = mbuf, .mask_fill = m->mask_fill,
                                                    .n_heads = H, .n_kv_heads = m->n_kv_heads,
                                                    .score_scale = m->score_scale});
    free(mbuf);
    if (!o) {
        job_free(j);
        return errmsg_set(err, errlen, "out of memory");
    }
    return 0;
}

/* The merged heads of jobs[0, n), whose maps are out's last n, on the
 * threads a head each (GPT-2's 144 at once, not 12 a map: a map's dozen heads
 * of a short text were too little to share); each buffer becomes the trace's,
 * not copied.  Frees the jobs.  0, or -1 with err. */
static int jobs_finish(const Words *w, MergeJob *jobs, int n, Trace *out, char *err, size_t errlen) {
    int total = 0, rc = 0;
    for (int k = 0; k < n; k++) total += jobs[k].m->n_heads;
#ifdef _OPENMP
    #pragma omp parallel for schedule(dynamic, 4) if (total > 1 && (size_t)total * w->n_pieces * w->n_pieces >= 65536)
#endif
    for (int i = 0; i < total; i++) {
        int k = 0, h = i;
        while (h >= jobs[k].m->n_heads) h -= jobs[k++].m->n_heads;
        merge_weights(w, jobs[k].m->heads[h].weights, jobs[k].ends, jobs[k].buf[h]);
    }
    for (int k = 0; k < n; k++) {
        TraceMap *o = &out->maps[out->n_maps - n + k];
        for (int h = 0; h < jobs[k].m->n_heads; h++) {
            if (rc == 0 && trace_own_head_weights(o, h, jobs[k].buf[h]) == 0) jobs[k].buf[h] = NULL;
            else if (rc == 0) rc = errmsg_set(err, errlen, "map %s has no head %d", o->id, h);
        }
        job_free(&jobs[k]);
    }
    return rc;
}

int words_merge_map(const Words *w, const TraceMap *m, Trace *out, char *err, size_t errlen) {
    MergeJob j;
    return job_begin(w, m, out, &j, err, errlen) ? -1 : jobs_finish(w, &j, 1, out, err, errlen);
}

/* One kept-rows map (a long text's, TraceMap.row_pos) with its keys merged
 * into words: each row stays the one piece it is. */
static int merge_rows_map(const Words *w, const TraceMap *m, Trace *out, char *err, size_t errlen) {
    int R = m->Tq, n = w->n;
    if (m->Tk != w->n_pieces || !m->row_pos)
        return errmsg_set(err, errlen, "map %s keeps no rows of the %d pieces grouped into words", m->id, w->n_pieces);
    int *pos = malloc((size_t)(R > 0 ? R : 1) * sizeof *pos);
    const char **q = malloc((size_t)(R > 0 ? R : 1) * sizeof *q);
    float *buf = malloc((size_t)(R > 0 ? R : 1) * (size_t)(n > 0 ? n : 1) * sizeof *buf);
    unsigned char *mask = m->mask ? calloc((size_t)(R > 0 ? R : 1) * (size_t)n, 1) : NULL;
    int rc = pos && q && buf && (!m->mask || mask) ? 0 : errmsg_set(err, errlen, "out of memory");
    for (int r = 0; rc == 0 && r < R; r++) {
        pos[r] = w->word_of[m->row_pos[r]];
        q[r] = w->labels[pos[r]];
        for (int j = 0; mask && j < m->Tk; j++) mask[(size_t)r * n + w->word_of[j]] |= m->mask[(size_t)r * m->Tk + j];
    }
    const char *const *lab = (const char *const *)w->labels;
    TraceMap *o = rc ? NULL : trace_add_map(out, &(TraceMapSpec){.id = m->id, .stack = m->stack, .layer = m->layer,
                                                                .kind = m->kind, .queries = q, .Tq = R, .keys = lab,
                                                                .Tk = n, .d_k = m->d_k, .Dv = m->Dv, .mask = mask,
                                                                .mask_fill = m->mask_fill, .n_heads = m->n_heads,
                                                                .n_kv_heads = m->n_kv_heads,
                                                                .score_scale = m->score_scale, .row_pos = pos});
    if (rc == 0 && !o) rc = errmsg_set(err, errlen, "out of memory");
    for (int h = 0; rc == 0 && h < m->n_heads; h++) {
        memset(buf, 0, (size_t)R * n * sizeof *buf);
        for (int r = 0; r < R; r++)
            for (int j = 0; j < m->Tk; j++) buf[(size_t)r * n + w->word_of[j]] += m->heads[h].weights[(size_t)r * m->Tk + j];
        if (trace_set_head(o, h, buf, NULL, NULL, NULL, NULL)) rc = errmsg_set(err, errlen, "out of memory");
    }
    free(pos); free(q); free(buf); free(mask);
    return rc;
}

int words_merge_rows(const Words *w, const Trace *rows, Trace *out, char *err, size_t errlen) {
    trace_init(out);
    int rc = 0;
    const char *const *lab = (const char *const *)w->labels;
    if ((rows->n_source && trace_set_source(out, lab, w->n)) || (rows->n_target && trace_set_target(out, lab, w->n)))
        rc = errmsg_set(err, errlen, "out of memory");
    for (int i = 0; rc == 0 && i < rows->n_maps; i++) rc = merge_rows_map(w, &rows->maps[i], out, err, errlen);
    if (rc) trace_free(out);
    return rc;
}

int words_merge_trace(const Words *w, const Trace *pieces, Trace *out, char *err, size_t errlen) {
    trace_init(out);
    int rc = 0;
    const char *const *lab = (const char *const *)w->labels;   /* where the pieces' trace keeps its tokens */
    if ((pieces->n_source && trace_set_source(out, lab, w->n)) || (pieces->n_target && trace_set_target(out, lab, w->n)))
        rc = errmsg_set(err, errlen, "out of memory");
    int n = 0;
    MergeJob *jobs = calloc((size_t)(pieces->n_maps > 0 ? pieces->n_maps : 1), sizeof *jobs);
    if (!jobs && rc == 0) rc = errmsg_set(err, errlen, "out of memory");
    for (; rc == 0 && n < pieces->n_maps; n++)
        if (job_begin(w, &pieces->maps[n], out, &jobs[n], err, errlen)) rc = -1;
    if (rc == 0) rc = jobs_finish(w, jobs, n, out, err, errlen);
    else
        for (int k = 0; k < n; k++) job_free(&jobs[k]);
    free(jobs);
    if (rc) trace_free(out);
    return rc;
}

void words_free(Words *w) {
    if (!w) return;
    for (int k = 0; w->labels && k < w->n; k++) free(w->labels[k]);
    free(w->labels);
    free(w->word_of);
    free(w->first);
    memset(w, 0, sizeof *w);
}
