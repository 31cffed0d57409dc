/* trace.c — see trace.h.  The JSON is streamed by hand rather than built as a
 * cJSON tree: a 64×64×4-head map with every step would otherwise make ~100k
 * cJSON nodes, and core/floatfmt.h prints the shortest text that keeps each
 * float32 exactly, where cJSON prints %1.15g of the double.  Strings are escaped per RFC 8259. */
#include "trace/trace.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/floatfmt.h"
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void trace_init(Trace *t) { memset(t, 0, sizeof *t); }

static void free_strings(char **s, int n) {
    if (!s) return;
    for (int i = 0; i < n; i++) free(s[i]);
    free(s);
}

static char **copy_strings(const char *const *s, int n) {
    char **out = calloc(n > 0 ? n : 1, sizeof(char *));
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        out[i] = strdup(s && s[i] ? s[i] : "");
        if (!out[i]) { free_strings(out, i); return NULL; }
    }
    return out;
}

static float *copy_floats(const float *x, size_t n) {
    if (!x) return NULL;
    float *out = malloc(n * sizeof(float) + 1);
    if (out) memcpy(out, x, n * sizeof(float));
    return out;
}

void trace_drop_matrices(TraceMap *m) {
    free(m->mask);
    m->mask = NULL;
    for (int h = 0; h < m->n_heads && m->heads; h++) {
        TraceHead *hd = &m->heads[h];
        free(hd->weights); free(hd->scores); free(hd->scaled); free(hd->masked); free(hd->output);
        free(hd->norm_weighted);
        free(hd->q); free(hd->q_rot); free(hd->k); free(hd->k_rot);
        *hd = (TraceHead){.head = h};
    }
}

static void free_map(TraceMap *m) {
    free(m->id); free(m->stack); free(m->kind);
    free_strings(m->queries, m->Tq);
    free_strings(m->keys, m->Tk);
    free_strings(m->row_labels, m->Tq);
    free(m->row_pos);
    trace_drop_matrices(m);
    free(m->heads);
}

void trace_free(Trace *t) {
    if (!t) return;
    free(t->json_model);
    free_strings(t->source_tokens, t->n_source);
    free_strings(t->target_tokens, t->n_target);
    for (int i = 0; i < t->n_maps; i++) free_map(&t->maps[i]);
    free(t->maps);
    free_strings(t->images, t->n_images);
    free_strings(t->section_names, t->n_sections);
    free_strings(t->section_json, t->n_sections);
    memset(t, 0, sizeof *t);
}

/* Replaces the n_old strings *old by copies of the n given.  0, or -1 (memory; *old kept). */
static int replace_strings(char ***old, int *n_old, const char *const *tokens, int n) {
    char **c = copy_strings(tokens, n);
    if (!c) return -1;
    free_strings(*old, *n_old);
    *old = c; *n_old = n;
    return 0;
}

int trace_set_source(Trace *t, const char *const *tokens, int n) {
    return replace_strings(&t->source_tokens, &t->n_source, tokens, n);
}

int trace_set_target(Trace *t, const char *const *tokens, int n) {
    return replace_strings(&t->target_tokens, &t->n_target, tokens, n);
}

int trace_set_model_json(Trace *t, const char *json_object) {
    char *c = NULL;
    if (json_object && !(c = strdup(json_object))) return -1;
    free(t->json_model);
    t->json_model = c;
    return 0;
}

TraceMap *trace_add_map(Trace *t, const TraceMapSpec *spec) {
    int Tq = spec->Tq, Tk = spec->Tk, n_heads = spec->n_heads;
    const unsigned char *mask = spec->mask;
    if (t->n_maps == t->cap_maps) {
        int cap = t->cap_maps ? 2 * t->cap_maps : 8;
        TraceMap *m = realloc(t->maps, (size_t)cap * sizeof *m);
        if (!m) return NULL;
        t->maps = m; t->cap_maps = cap;
    }
    TraceMap *m = &t->maps[t->n_maps];
    memset(m, 0, sizeof *m);
    m->layer = spec->layer; m->Tq = Tq; m->Tk = Tk; m->d_k = spec->d_k; m->Dv = spec->Dv;
    m->mask_fill = spec->mask_fill; m->n_heads = n_heads; m->scaled_by_sqrt_dk = 1;
    m->n_kv_heads = spec->n_kv_heads > 0 ? spec->n_kv_heads : n_heads;
    m->score_scale = spec->score_scale;
    if (n_heads > 0 && (m->n_kv_heads > n_heads || n_heads % m->n_kv_heads)) return NULL;
    m->id = strdup(spec->id); m->stack = strdup(spec->stack); m->kind = strdup(spec->kind);
    m->queries = copy_strings(spec->queries, Tq);
    m->keys = copy_strings(spec->keys, Tk);
    m->heads = calloc(n_heads > 0 ? n_heads : 1, sizeof(TraceHead));
    if (mask) {
        m->mask = malloc((size_t)Tq * Tk + 1);
        if (m->mask) memcpy(m->mask, mask, (size_t)Tq * Tk);
    }
    if (spec->row_pos) {
        m->row_pos = malloc((size_t)(Tq > 0 ? Tq : 1) * sizeof *m->row_pos);
        if (m->row_pos) memcpy(m->row_pos, spec->row_pos, (size_t)Tq * sizeof *m->row_pos);
    }
    if (!m->id || !m->stack || !m->kind || !m->queries || !m->keys || !m->heads ||
        (mask && !m->mask) || (spec->row_pos && !m->row_pos)) {
        free_map(m);
        return NULL;
    }
    for (int h = 0; h < n_heads; h++) m->heads[h].head = h;
    t->n_maps++;
    return m;
}

int trace_row_of(const TraceMap *m, int q) {
    if (!m->row_pos) return q >= 0 && q < m->Tq ? q : -1;
    for (int r = 0; r < m->Tq; r++)
        if (m->row_pos[r] == q) return r;
    return -1;
}

const float *trace_weights_row(const TraceMap *m, int h, int q) {
    int r = trace_row_of(m, q);
    return r < 0 || h < 0 || h >= m->n_heads || !m->heads[h].weights ? NULL : m->heads[h].weights + (size_t)r * m->Tk;
}

const unsigned char *trace_mask_row(const TraceMap *m, int q) {
    int r = trace_row_of(m, q);
    return r < 0 || !m->mask ? NULL : m->mask + (size_t)r * m->Tk;
}

int trace_map_done(Trace *t, TraceMap *m) {
    if (!t->sink || !t->sink->map_done) return 0;
    t->sink->err[0] = 0;
    if (t->sink->map_done(t->sink, t, m) == 0) return 0;
    if (!t->sink->err[0]) snprintf(t->sink->err, sizeof t->sink->err, "out of memory");
    return -1;
}

int trace_set_row_labels(TraceMap *m, const char *const *labels) {
    free_strings(m->row_labels, m->Tq);
    m->row_labels = labels ? copy_strings(labels, m->Tq) : NULL;
    return labels && !m->row_labels ? -1 : 0;
}

const char *const *trace_row_labels(const TraceMap *m) {
    return (const char *const *)(m->row_labels ? m->row_labels : m->queries);
}

int trace_set_head(TraceMap *m, int head, const float *weights, const float *scores,
                   const float *scaled, const float *masked, const float *output) {
    if (head < 0 || head >= m->n_heads || !weights) return -1;
    TraceHead *h = &m->heads[head];
    size_t n = (size_t)m->Tq * m->Tk;
    free(h->weights); free(h->scores); free(h->scaled); free(h->masked); free(h->output);
    h->weights = copy_floats(weights, n);
    h->scores = copy_floats(scores, n);
    h->scaled = copy_floats(scaled, n);
    h->masked = copy_floats(masked, n);
    h->output = copy_floats(output, (size_t)m->Tq * m->Dv);
    if (!h->weights || (scores && !h->scores) || (scaled && !h->scaled) ||
        (masked && !h->masked) || (output && !h->output))
        return -1;
    return 0;
}

int trace_own_head_weights(TraceMap *m, int head, float *weights) {
    if (head < 0 || head >= m->n_heads || !weights) return -1;
    TraceHead *h = &m->heads[head];
    free(h->weights); free(h->scores); free(h->scaled); free(h->masked); free(h->output);
    h->scores = h->scaled = h->masked = h->output = NULL;
    h->weights = weights;
    return 0;
}

int trace_add_image(Trace *t, const char *relpath) {
    if (t->n_images == t->cap_images) {
        int cap = t->cap_images ? 2 * t->cap_images : 16;
        char **p = realloc(t->images, (size_t)cap * sizeof *p);
        if (!p) return -1;
        t->images = p; t->cap_images = cap;
    }
    if (!(t->images[t->n_images] = strdup(relpath))) return -1;
    t->n_images++;
    return 0;
}

int trace_set_section(Trace *t, const char *name, const char *json) {
    return trace_take_section(t, name, strdup(json));
}

int trace_take_section(Trace *t, const char *name, char *j) {
    if (!j) return -1;
    for (int i = 0; i < t->n_sections; i++)
        if (!strcmp(t->section_names[i], name)) { free(t->section_json[i]); t->section_json[i] = j; return 0; }
    char **n2 = realloc(t->section_names, (size_t)(t->n_sections + 1) * sizeof *n2);
    if (n2) t->section_names = n2;
    char **j2 = n2 ? realloc(t->section_json, (size_t)(t->n_sections + 1) * sizeof *j2) : NULL;
    if (j2) t->section_json = j2;
    char *nm = j2 ? strdup(name) : NULL;
    if (!nm) { free(j); return -1; }
    t->section_names[t->n_sections] = nm;
    t->section_json[t->n_sections] = j;
    t->n_sections++;
    return 0;
}

const char *trace_section(const Trace *t, const char *name) {
    for (int i = 0; i < t->n_sections; i++)
        if (!strcmp(t->section_names[i], name)) return t->section_json[i];
    return NULL;
}

int trace_kv_head(const TraceMap *m, int h) {
    return m->n_kv_heads > 0 && m->n_kv_heads < m->n_heads ? h / (m->n_heads / m->n_kv_heads) : h;
}

int trace_set_rope(TraceMap *m, int head, const float *q, const float *q_rot, const float *k, const float *k_rot) {
    if (head < 0 || head >= m->n_heads || !q || !q_rot || !k || !k_rot) return -1;
    TraceHead *h = &m->heads[head];
    free(h->q); free(h->q_rot); free(h->k); free(h->k_rot);
    h->q = copy_floats(q, (size_t)m->Tq * m->d_k);
    h->q_rot = copy_floats(q_rot, (size_t)m->Tq * m->d_k);
    h->k = copy_floats(k, (size_t)m->Tk * m->d_k);
    h->k_rot = copy_floats(k_rot, (size_t)m->Tk * m->d_k);
    return h->q && h->q_rot && h->k && h->k_rot ? 0 : -1;
}

int trace_set_norm_weighted(TraceMap *m, int head, const float *values) {
    if (head < 0 || head >= m->n_heads) return -1;
    float *c = copy_floats(values, (size_t)m->Tq * m->Tk);
    if (!c) return -1;
    free(m->heads[head].norm_weighted);
    m->heads[head].norm_weighted = c;
    return 0;
}

void trace_head_parts(const TraceMap *m, const TraceHead *hd, TracePart parts[TRACE_HEAD_PARTS]) {
    const TracePart all[TRACE_HEAD_PARTS] = {
        {"weights", hd->weights, m->Tq, m->Tk}, {"scores", hd->scores, m->Tq, m->Tk},
        {"scaled", hd->scaled, m->Tq, m->Tk}, {"masked", hd->masked, m->Tq, m->Tk},
        {"output", hd->output, m->Tq, m->Dv}, {"norm_weighted", hd->norm_weighted, m->Tq, m->Tk},
        {"q", hd->q, m->Tq, m->d_k}, {"q_rotated", hd->q_rot, m->Tq, m->d_k},
        {"k", hd->k, m->Tk, m->d_k}, {"k_rotated", hd->k_rot, m->Tk, m->d_k}};
    memcpy(parts, all, sizeof all);
}

TraceMap *trace_find_map(Trace *t, const char *id) {
    for (int i = 0; i < t->n_maps; i++)
        if (strcmp(t->maps[i].id, id) == 0) return &t->maps[i];
    return NULL;
}

/* ---- JSON writing ---- */

static void put_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"':  fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20) fprintf(f, "\\u%04x", *p);
            else fputc(*p, f);
        }
    }
    fputc('"', f);
}

/* x as the trace writes it into out (FLOAT_FORMAT_MAX bytes): the fewest
 * digits that read back, −0 as 0, and null for −∞ (masked; JSON has no
 * infinity, and NaN never gets here).  Returns the length. */
static int number_text(float x, char *out) {
    if (!isfinite(x)) { memcpy(out, "null", 5); return 4; }
    return float_format(x == 0 ? 0.0f : x, 9, out);
}

static void put_number(FILE *f, float x) {
    char buf[FLOAT_FORMAT_MAX];
    fwrite(buf, 1, (size_t)number_text(x, buf), f);
}

static void put_strings(FILE *f, char *const *s, int n) {
    fputc('[', f);
    for (int i = 0; i < n; i++) { if (i) fputs(", ", f); put_string(f, s[i]); }
    fputc(']', f);
}

/* Rows of numbers as put_number writes them, each row built in memory and
 * written at once (a stdio call per number was a third of the writing). */
static void put_matrix(FILE *f, const float *x, int rows, int cols, const char *indent) {
    size_t in = strlen(indent), cap = in + 4 + (size_t)cols * (FLOAT_FORMAT_MAX + 2) + 2;
    char *row = malloc(cap);
    fputc('[', f);
    for (int i = 0; i < rows; i++) {
        const float *r = x + (size_t)i * cols;
        if (!row) {   /* out of memory: slower, the same text */
            fprintf(f, "%s\n%s [", i ? "," : "", indent);
            for (int j = 0; j < cols; j++) { if (j) fputs(", ", f); put_number(f, r[j]); }
            fputc(']', f);
            continue;
        }
        size_t n = 0;   /* ",\n" indent " [" numbers "]" */
        if (i) row[n++] = ',';
        row[n++] = '\n';
        memcpy(row + n, indent, in);
        n += in;
        row[n++] = ' ';
        row[n++] = '[';
        for (int j = 0; j < cols; j++) {
            if (j) { row[n++] = ','; row[n++] = ' '; }
            n += (size_t)number_text(r[j], row + n);
        }
        row[n++] = ']';
        fwrite(row, 1, n, f);
    }
    fputc(']', f);
    free(row);
}

static void put_mask(FILE *f, const unsigned char *m, int rows, int cols) {
    if (!m) { fputs("null", f); return; }
    char *row = malloc(2 * (size_t)cols + 2);   /* "[1,0,…]" built, then written at once */
    fputc('[', f);
    for (int i = 0; i < rows; i++) {
        if (i) fputs(", ", f);
        fputc('[', f);
        for (int j = 0; j < cols; j++) {
            if (row) { row[2 * j] = ','; row[2 * j + 1] = m[(size_t)i * cols + j] ? '1' : '0'; }
            else fprintf(f, "%s%d", j ? "," : "", m[(size_t)i * cols + j] ? 1 : 0);
        }
        if (row && cols > 0) fwrite(row + 1, 1, 2 * (size_t)cols - 1, f);
        fputc(']', f);
    }
    fputc(']', f);
    free(row);
}

static void put_map(FILE *f, const TraceMap *m) {
    fputs("    {\"id\": ", f); put_string(f, m->id);
    fputs(", \"stack\": ", f); put_string(f, m->stack);
    fprintf(f, ", \"layer\": %d, \"kind\": ", m->layer); put_string(f, m->kind);
    fputs(",\n     \"queries\": ", f); put_strings(f, m->queries, m->Tq);
    fputs(",\n     \"keys\": ", f); put_strings(f, m->keys, m->Tk);
    fprintf(f, ",\n     \"d_k\": %d, \"scaled\": %s", m->d_k, m->scaled_by_sqrt_dk ? "true" : "false");
    if (m->score_scale > 0) { fputs(", \"score_scale\": ", f); put_number(f, m->score_scale); }
    if (m->n_kv_heads > 0 && m->n_kv_heads < m->n_heads) fprintf(f, ", \"kv_heads\": %d", m->n_kv_heads);
    fputs(",\n     \"mask\": ", f); put_mask(f, m->mask, m->Tq, m->Tk);
    fputs(", \"mask_fill\": ", f);
    if (isinf(m->mask_fill) && m->mask_fill < 0) fputs("\"-inf\"", f);
    else put_number(f, m->mask_fill);
    fputs(",\n     \"heads\": [", f);
    for (int h = 0; h < m->n_heads; h++) {
        const TraceHead *hd = &m->heads[h];
        fprintf(f, "%s\n      {\"head\": %d", h ? "," : "", hd->head);
        TracePart parts[TRACE_HEAD_PARTS];
        trace_head_parts(m, hd, parts);
        for (int p = 0; p < TRACE_HEAD_PARTS; p++) {
            if (!parts[p].x) continue;
            fprintf(f, ",\n       \"%s\": ", parts[p].name);
            put_matrix(f, parts[p].x, parts[p].rows, parts[p].cols, "       ");
        }
        fputc('}', f);
    }
    fputs("]}", f);
}

/* 1 when x[0..n) holds no infinity and no NaN: the exponent bits all set
 * (an integer test the compiler vectorises; isfinite one float at a time
 * was 96 ms of a 512-token GPT-2 trace's 147 MB). */
static int all_finite(const float *x, size_t n) {
    uint32_t bad = 0;
#ifdef _OPENMP
    _Pragma("omp simd reduction(|:bad)")   /* vectorised: GCC's -O2 does not on its own */
#endif
    for (size_t i = 0; i < n; i++) {
        uint32_t b;
        memcpy(&b, x + i, sizeof b);
        bad |= (b & 0x7F800000u) + 0x00800000u;   /* bit 31 only when the exponent is all ones */
    }
    return (bad & 0x80000000u) == 0;
}

/* all_finite of a square n × n matrix, and in the same pass *upper_zero: 1 when
 * every cell above the diagonal is +0.0 bit for bit (a causal map's weights,
 * where the mask hid those keys; trace.bin then stores the lower triangle). */
static int square_finite(const float *x, int n, int *upper_zero) {
    uint32_t bad = 0, any = 0;
    int ok = 1;
    for (int i = 0; i < n; i++) {
        const float *r = x + (size_t)i * n;
        ok &= all_finite(r, (size_t)i + 1);
#ifdef _OPENMP
        _Pragma("omp simd reduction(|:bad, any)")
#endif
        for (int j = i + 1; j < n; j++) {
            uint32_t b;
            memcpy(&b, r + j, sizeof b);
            bad |= (b & 0x7F800000u) + 0x00800000u;   /* all_finite's test */
            any |= b;
        }
    }
    *upper_zero = any == 0;
    return ok && (bad & 0x80000000u) == 0;
}

/* The first cell of x (rows × cols) that is NaN or ±inf, except the −∞ of a
 * masked cell when allow_masked; -1 when every cell is finite.  *lower (when
 * not NULL, and x is a square of 2 rows or more): the square's upper_zero flag
 * (square_finite), found in the same pass; left as it is otherwise. */
static long first_nonfinite(const float *x, int rows, int cols, const TraceMap *m, int allow_masked,
                            unsigned char *lower) {
    if (!x) return -1;
    if (lower && rows == cols && rows >= 2) {
        int upper_zero;
        int ok = square_finite(x, rows, &upper_zero);
        *lower = (unsigned char)upper_zero;
        if (ok) return -1;
    } else if (all_finite(x, (size_t)rows * cols)) {
        return -1;
    }
    for (size_t i = 0; i < (size_t)rows * cols; i++) {
        if (isfinite(x[i])) continue;
        if (allow_masked && m->mask && !m->mask[i] && isinf(m->mask_fill) && x[i] == m->mask_fill) continue;
        return (long)i;
    }
    return -1;
}

/* The first non-finite cell of head hd: its matrix (*name for messages, *x,
 * *cols) and its index in that matrix (the return); -1 when there is none.
 * lower (or NULL): the triangle flags of its weights and its norm_weighted. */
static long head_nonfinite(const TraceMap *m, const TraceHead *hd, const char **name, const float **x, int *cols,
                           unsigned char *lower) {
    /* the steps in the order they are computed (trace_head_parts' indices), so
     * the message names the first that overflowed, in words */
    static const int order[TRACE_HEAD_PARTS] = {1, 2, 3, 0, 4, 5, 6, 7, 8, 9};
    static const char *const said[TRACE_HEAD_PARTS] = {
        "weights", "scores", "scaled scores", "masked scores", "output", "norm-weighted attention",
        "queries before RoPE", "rotated queries", "keys before RoPE", "rotated keys"};
    TracePart parts[TRACE_HEAD_PARTS];
    trace_head_parts(m, hd, parts);
    if (lower) lower[0] = lower[1] = 0;
    for (int k = 0; k < TRACE_HEAD_PARTS; k++) {
        int p = order[k];
        unsigned char *flag = !lower ? NULL : p == 0 ? lower : p == 5 ? lower + 1 : NULL;   /* weights, norm_weighted */
        long at = first_nonfinite(parts[p].x, parts[p].rows, parts[p].cols, m, p == 3, flag);
        if (at < 0) continue;
        *name = said[p], *x = parts[p].x, *cols = parts[p].cols;
        return at;
    }
    return -1;
}

int trace_n_heads(const Trace *t) {
    int n = 0;
    for (int i = 0; i < t->n_maps; i++) n += t->maps[i].n_heads;
    return n;
}

/* Map and head of the k-th head in order (0 <= k < trace_n_heads). */
static void head_at(const Trace *t, int k, int *map, int *head) {
    int i = 0;
    while (k >= t->maps[i].n_heads) k -= t->maps[i++].n_heads;
    *map = i;
    *head = k;
}

/* The message naming head h of m's first non-finite cell. */
static int nonfinite_error(const TraceMap *m, int h, char *err, size_t errlen) {
    int cols;
    const char *name;
    const float *x;
    long at = head_nonfinite(m, &m->heads[h], &name, &x, &cols, NULL);
    return errmsg_set(err, errlen, "%s head %d: the %s hold a non-finite value (%s) at row %ld, column %ld: the "
                      "numbers overflowed float32 in or before this layer", m->id, m->heads[h].head, name,
                      isnan(x[at]) ? "NaN" : "infinity", at / cols, at % cols);
}

/* Every head is tested on OpenMP's threads (a 512-token SmolLM2 trace holds
 * 280 MB); the message names the first bad head in order. */
int trace_check_finite_lower(const Trace *t, unsigned char *lower, char *err, size_t errlen) {
    int n = trace_n_heads(t), first = n;
#ifdef _OPENMP
    #pragma omp parallel for schedule(dynamic, 4) reduction(min:first) if (n >= 16)
#endif
    for (int k = 0; k < n; k++) {
        int i, h, cols;
        const char *name;
        const float *x;
        head_at(t, k, &i, &h);
        if (k < first && head_nonfinite(&t->maps[i], &t->maps[i].heads[h], &name, &x, &cols,
                                        lower ? lower + 2 * (size_t)k : NULL) >= 0)
            first = k;
    }
    if (first == n) return 0;
    int i, h;
    head_at(t, first, &i, &h);
    return nonfinite_error(&t->maps[i], h, err, errlen);
}

int trace_check_map_lower(const TraceMap *m, unsigned char *lower, char *err, size_t errlen) {
    int n = m->n_heads, first = n;
#ifdef _OPENMP
    #pragma omp parallel for schedule(dynamic, 1) reduction(min:first) if (n >= 4)
#endif
    for (int h = 0; h < n; h++) {
        int cols;
        const char *name;
        const float *x;
        if (h < first && head_nonfinite(m, &m->heads[h], &name, &x, &cols, lower ? lower + 2 * (size_t)h : NULL) >= 0)
            first = h;
    }
    return first == n ? 0 : nonfinite_error(m, first, err, errlen);
}

int trace_check_finite(const Trace *t, char *err, size_t errlen) {
    return trace_check_finite_lower(t, NULL, err, errlen);
}

size_t trace_json_estimate(const Trace *t) {
    size_t bytes = 0;   /* a number "%.9g, " about 15 bytes; a masked weight "0, " 3; a mask cell "1," 2 */
    for (int i = 0; i < t->n_maps; i++) {
        const TraceMap *m = &t->maps[i];
        size_t n = (size_t)m->Tq * m->Tk, masked = 0;
        for (size_t k = 0; m->mask && k < n; k++) masked += !m->mask[k];
        if (m->mask) bytes += 2 * n;
        for (int h = 0; h < m->n_heads; h++) {
            const TraceHead *hd = &m->heads[h];
            if (hd->weights) bytes += (n - masked) * 15 + masked * 3;
            if (hd->norm_weighted) bytes += (n - masked) * 15 + masked * 3;
            bytes += n * 15 * (size_t)(!!hd->scores + !!hd->scaled + !!hd->masked);
            if (hd->output) bytes += (size_t)m->Tq * m->Dv * 15;
            if (hd->q) bytes += 2 * (size_t)(m->Tq + m->Tk) * m->d_k * 15;
        }
    }
    return bytes;
}

/* Every map's text made side by side on the threads, each in a buffer of its
 * own, and written in order the moment the maps before it are: a buffer is
 * freed as soon as it is written, so the next map reuses its memory (holding
 * every map's text first touched 9 MB of new pages for SmolLM2's 64 tokens,
 * each page a fault).  0, or -1 out of memory. */
static int put_maps(FILE *f, const Trace *t) {
    int n = t->n_maps, bad = 0;
    if (n < 4) {
        for (int i = 0; i < n; i++) {
            if (i) fputs(",\n", f);
            put_map(f, &t->maps[i]);
        }
        return 0;
    }
#ifdef _OPENMP
    #pragma omp parallel for schedule(static, 1) ordered
#endif
    for (int i = 0; i < n; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (m) {
            put_map(m, &t->maps[i]);
            if (fclose(m) != 0) { free(buf); buf = NULL; }
        }
#ifdef _OPENMP
        #pragma omp ordered
#endif
        {
            if (!buf) bad = 1;   /* touched in order only: no race */
            else if (!bad) {
                if (i) fputs(",\n", f);
                fwrite(buf, 1, len, f);
            }
        }
        free(buf);
    }
    return bad ? -1 : 0;
}

int trace_write_json(const Trace *t, const char *path, char *err, size_t errlen) {
    if (trace_check_finite(t, err, errlen)) return -1;   /* null means −∞ (masked) and nothing else */
    AtomicFile af;
    if (atomic_open(&af, path, err, errlen)) return -1;
    FILE *f = af.f;
    fputs("{\"format\": \"attnviz-trace\", \"version\": 1,\n", f);
    if (t->json_model) fprintf(f, " \"model\": %s,\n", t->json_model);
    fputs(" \"source_tokens\": ", f); put_strings(f, t->source_tokens, t->n_source);
    fputs(",\n \"target_tokens\": ", f); put_strings(f, t->target_tokens, t->n_target);
    fputs(",\n \"maps\": [\n", f);
    if (put_maps(f, t) != 0) {
        atomic_abort(&af);
        return errmsg_set(err, errlen, "out of memory writing %s", path);
    }
    fputs("]", f);
    for (int i = 0; i < t->n_sections; i++) {
        fputs(",\n ", f); put_string(f, t->section_names[i]);
        fprintf(f, ": %s", t->section_json[i]);
    }
    fputs(",\n \"images\": ", f); put_strings(f, t->images, t->n_images);
    fputs("}\n", f);
    return atomic_commit(&af, err, errlen);
}
