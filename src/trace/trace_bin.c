/* trace_bin.c — see trace_bin.h. */
#include "trace/trace_bin.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/safetensors.h"
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One stretch of the data part: bytes at ptr, written at a multiple of 64. */
typedef struct {
    const void *ptr;
    size_t bytes;
    int elem;          /* 4: float32 (swapped on a big-endian host), 1: bytes */
    int lower;         /* n > 0: an n x n float matrix written as its lower triangle */
    int f16;           /* float32 in memory, written as half precision (2 bytes a cell) */
} Piece;

/* The header being built and the data it describes, in order. */
typedef struct {
    Piece *p;
    int n, cap;
    size_t next;       /* offset of the next piece from the start of the data */
    int oom;
    const unsigned char *tri;  /* per head in order: weights, norm_weighted lower triangles (trace_check_finite_lower) */
    int head_no;
    int weights_f16;   /* TraceBinOptions */
} Plan;

/* The n strings s as a JSON array ([] when there are none). */
static cJSON *strings(char *const *s, int n) {
    return n > 0 && s ? cJSON_CreateStringArray((const char *const *)s, n) : cJSON_CreateArray();
}

static size_t align_up(size_t n) { return (n + TRACE_BIN_ALIGN - 1) / TRACE_BIN_ALIGN * TRACE_BIN_ALIGN; }

/* {"offset": O, "shape": [rows, cols]} for the next piece, which it adds;
 * with "layout": "lower" when tri (trace_check_finite_lower found the matrix square with
 * nothing but +0.0 above its diagonal: only row i's first i + 1 cells go). */
static cJSON *slot_as(Plan *pl, const void *ptr, int rows, int cols, int elem, int tri, int f16) {
    if (pl->n == pl->cap) {
        int cap = pl->cap ? 2 * pl->cap : 256;
        Piece *p = realloc(pl->p, (size_t)cap * sizeof *p);
        if (!p) { pl->oom = 1; return NULL; }
        pl->p = p;
        pl->cap = cap;
    }
    int lower = tri ? rows : 0;
    size_t cells = lower ? (size_t)rows * (rows + 1) / 2 : (size_t)rows * (size_t)cols;
    size_t bytes = cells * (f16 ? 2 : (size_t)elem);
    pl->p[pl->n++] = (Piece){ptr, bytes, elem, lower, f16};
    cJSON *o = cJSON_CreateObject(), *shape = cJSON_CreateArray();
    if (!o || !shape) { cJSON_Delete(o); cJSON_Delete(shape); pl->oom = 1; return NULL; }
    cJSON_AddNumberToObject(o, "offset", (double)pl->next);
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(rows));
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(cols));
    cJSON_AddItemToObject(o, "shape", shape);
    if (elem == 1) cJSON_AddStringToObject(o, "dtype", "u8");
    if (f16) cJSON_AddStringToObject(o, "dtype", "f16");
    if (lower) cJSON_AddStringToObject(o, "layout", "lower");
    pl->next = align_up(pl->next + bytes);
    return o;
}

static cJSON *slot(Plan *pl, const void *ptr, int rows, int cols, int elem) {
    return slot_as(pl, ptr, rows, cols, elem, 0, 0);
}

/* One head: every matrix it holds, in the JSON trace's order. */
static cJSON *head_json(Plan *pl, const TraceMap *m, const TraceHead *hd) {
    cJSON *o = cJSON_CreateObject();
    if (!o) { pl->oom = 1; return NULL; }
    cJSON_AddNumberToObject(o, "head", hd->head);
    TracePart parts[TRACE_HEAD_PARTS];
    trace_head_parts(m, hd, parts);
    const unsigned char *tri = pl->tri + 2 * (size_t)pl->head_no++;   /* weights, norm_weighted: 0 where masked */
    for (int i = 0; i < TRACE_HEAD_PARTS; i++)
        if (parts[i].x)
            cJSON_AddItemToObject(o, parts[i].name, slot_as(pl, parts[i].x, parts[i].rows, parts[i].cols, 4,
                                                            i == 0 ? tri[0] : i == 5 ? tri[1] : 0,
                                                            i == 0 && pl->weights_f16));
    return o;
}

static cJSON *map_json(Plan *pl, const TraceMap *m) {
    cJSON *o = cJSON_CreateObject(), *heads = cJSON_CreateArray();
    if (!o || !heads) { cJSON_Delete(o); cJSON_Delete(heads); pl->oom = 1; return NULL; }
    cJSON_AddStringToObject(o, "id", m->id);
    cJSON_AddStringToObject(o, "stack", m->stack);
    cJSON_AddNumberToObject(o, "layer", m->layer);
    cJSON_AddStringToObject(o, "kind", m->kind);
    cJSON_AddItemToObject(o, "queries", strings(m->queries, m->Tq));
    cJSON_AddItemToObject(o, "keys", strings(m->keys, m->Tk));
    cJSON_AddNumberToObject(o, "d_k", m->d_k);
    cJSON_AddBoolToObject(o, "scaled", m->scaled_by_sqrt_dk);
    if (m->score_scale > 0) cJSON_AddNumberToObject(o, "score_scale", m->score_scale);
    if (m->n_kv_heads > 0 && m->n_kv_heads < m->n_heads) cJSON_AddNumberToObject(o, "kv_heads", m->n_kv_heads);
    cJSON_AddItemToObject(o, "mask", m->mask ? slot(pl, m->mask, m->Tq, m->Tk, 1) : cJSON_CreateNull());
    if (isinf(m->mask_fill) && m->mask_fill < 0) cJSON_AddStringToObject(o, "mask_fill", "-inf");
    else cJSON_AddNumberToObject(o, "mask_fill", m->mask_fill);
    for (int h = 0; h < m->n_heads; h++) cJSON_AddItemToArray(heads, head_json(pl, m, &m->heads[h]));
    cJSON_AddItemToObject(o, "heads", heads);
    return o;
}

cJSON *trace_matrix_cjson(const float *x, int rows, int cols) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < rows; i++) {
        cJSON *r = cJSON_CreateArray();
        if (!r) { cJSON_Delete(a); return NULL; }
        for (int j = 0; j < cols; j++) {
            float v = x[(size_t)i * cols + j];
            cJSON_AddItemToArray(r, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
        }
        cJSON_AddItemToArray(a, r);
    }
    return a;
}

cJSON *trace_map_cjson(const TraceMap *m) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "id", m->id);
    cJSON_AddNumberToObject(o, "d_k", m->d_k);
    cJSON_AddItemToObject(o, "queries", strings(m->queries, m->Tq));
    cJSON_AddItemToObject(o, "keys", strings(m->keys, m->Tk));
    cJSON *mask = m->mask ? cJSON_AddArrayToObject(o, "mask") : NULL;
    if (!m->mask) cJSON_AddNullToObject(o, "mask");
    for (int i = 0; mask && i < m->Tq; i++) {
        cJSON *r = cJSON_CreateArray();
        for (int j = 0; j < m->Tk; j++) cJSON_AddItemToArray(r, cJSON_CreateNumber(m->mask[(size_t)i * m->Tk + j]));
        cJSON_AddItemToArray(mask, r);
    }
    cJSON *heads = cJSON_AddArrayToObject(o, "heads");
    for (int h = 0; h < m->n_heads; h++) {
        TracePart parts[TRACE_HEAD_PARTS];
        trace_head_parts(m, &m->heads[h], parts);
        cJSON *ho = cJSON_CreateObject();
        cJSON_AddItemToArray(heads, ho);
        for (int i = 0; i < TRACE_HEAD_PARTS; i++)
            if (parts[i].x)
                cJSON_AddItemToObject(ho, parts[i].name, trace_matrix_cjson(parts[i].x, parts[i].rows, parts[i].cols));
    }
    return o;
}

/* A member holding a JSON text, parsed (null when it does not parse). */
static void add_json_text(cJSON *o, const char *name, const char *text, Plan *pl) {
    cJSON *v = text ? cJSON_Parse(text) : NULL;
    if (text && !v) pl->oom = 1;
    if (v) cJSON_AddItemToObject(o, name, v);
}

/* The header text (cJSON_free it), with pl listing the data; NULL when out of memory. */
static char *header_text(const Trace *t, Plan *pl) {
    cJSON *root = cJSON_CreateObject(), *maps = cJSON_CreateArray();
    if (!root || !maps) { cJSON_Delete(root); cJSON_Delete(maps); return NULL; }
    cJSON_AddStringToObject(root, "format", "attnviz-trace-bin");
    cJSON_AddNumberToObject(root, "version", TRACE_BIN_VERSION);
    add_json_text(root, "model", t->json_model, pl);
    cJSON_AddItemToObject(root, "source_tokens", strings(t->source_tokens, t->n_source));
    cJSON_AddItemToObject(root, "target_tokens", strings(t->target_tokens, t->n_target));
    for (int i = 0; i < t->n_maps && !pl->oom; i++) cJSON_AddItemToArray(maps, map_json(pl, &t->maps[i]));
    cJSON_AddItemToObject(root, "maps", maps);
    for (int i = 0; i < t->n_sections; i++) add_json_text(root, t->section_names[i], t->section_json[i], pl);
    cJSON_AddItemToObject(root, "images", strings(t->images, t->n_images));
    char *txt = pl->oom ? NULL : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return txt;
}

static int host_is_little_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* bytes of p, little-endian, then zeros up to a multiple of 64.  0, or -1.
 * A lower triangle is gathered into tri (room for it) first. */
static int write_piece(FILE *f, const Piece *p, float *tri) {
    static const unsigned char zeros[TRACE_BIN_ALIGN];
    if (p->lower) {
        const float *x = p->ptr;
        size_t at = 0;
        for (int i = 0; i < p->lower; i++, at += (size_t)i)
            memcpy(tri + at, x + (size_t)i * p->lower, ((size_t)i + 1) * sizeof *tri);
        Piece whole = {tri, p->bytes, 4, 0, p->f16};
        return write_piece(f, &whole, NULL);
    }
    if (p->f16) {   /* each cell rounded to the nearest half, little-endian */
        unsigned char buf[4096];
        const float *x = p->ptr;
        for (size_t done = 0; done < p->bytes; done += sizeof buf) {
            size_t k = p->bytes - done < sizeof buf ? p->bytes - done : sizeof buf;
            for (size_t i = 0; i < k; i += 2) {
                unsigned short h = safetensors_f32_to_f16(x[(done + i) / 2]);
                buf[i] = (unsigned char)(h & 0xff);
                buf[i + 1] = (unsigned char)(h >> 8);
            }
            if (fwrite(buf, 1, k, f) != k) return -1;
        }
        size_t pad = align_up(p->bytes) - p->bytes;
        return pad && fwrite(zeros, 1, pad, f) != pad ? -1 : 0;
    }
    if (p->elem == 1 || host_is_little_endian()) {
        if (p->bytes && fwrite(p->ptr, 1, p->bytes, f) != p->bytes) return -1;
    } else {
        unsigned char buf[4096];
        const unsigned char *s = p->ptr;
        for (size_t done = 0; done < p->bytes; done += sizeof buf) {
            size_t k = p->bytes - done < sizeof buf ? p->bytes - done : sizeof buf;
            for (size_t i = 0; i < k; i += 4)
                for (int b = 0; b < 4; b++) buf[i + (size_t)b] = s[done + i + 3 - (size_t)b];
            if (fwrite(buf, 1, k, f) != k) return -1;
        }
    }
    size_t pad = align_up(p->bytes) - p->bytes;
    return pad && fwrite(zeros, 1, pad, f) != pad ? -1 : 0;
}

int trace_path_is_bin(const char *path) {
    size_t n = path ? strlen(path) : 0;
    return n >= 4 && !strcmp(path + n - 4, ".bin");
}

int trace_write_bin(const Trace *t, const char *path, char *err, size_t errlen) {
    return trace_write_bin_with(t, path, NULL, err, errlen);
}

int trace_write_bin_with(const Trace *t, const char *path, const TraceBinOptions *o, char *err, size_t errlen) {
    Plan pl = {0};
    pl.weights_f16 = o && o->weights_f16;
    int n_heads = trace_n_heads(t);
    unsigned char *flags = calloc(2 * (size_t)(n_heads > 0 ? n_heads : 1), 1);
    if (!flags) return errmsg_set(err, errlen, "out of memory writing %s", path);
    if (trace_check_finite_lower(t, flags, err, errlen)) { free(flags); return -1; }
    pl.tri = flags;
    char *hdr = header_text(t, &pl);
    free(flags);
    if (!hdr) { free(pl.p); return errmsg_set(err, errlen, "out of memory writing %s", path); }
    size_t n = strlen(hdr), start = align_up(24 + n);
    unsigned char head[24] = TRACE_BIN_MAGIC;
    head[8] = TRACE_BIN_VERSION;
    for (int i = 0; i < 8; i++) head[16 + i] = (unsigned char)((uint64_t)n >> (8 * i));
    static const unsigned char zeros[TRACE_BIN_ALIGN];
    int rc = -1;
    float *tri = NULL;
    AtomicFile af;
    if (atomic_open(&af, path, err, errlen)) goto done;
    size_t tri_bytes = 0;
    for (int i = 0; i < pl.n; i++) {   /* the gathered triangle is float32 whatever it is written as */
        size_t need = (size_t)pl.p[i].lower * ((size_t)pl.p[i].lower + 1) / 2 * sizeof(float);
        if (need > tri_bytes) tri_bytes = need;
    }
    tri = tri_bytes ? malloc(tri_bytes) : NULL;
    if (tri_bytes && !tri) { errmsg_set(err, errlen, "out of memory writing %s", path); atomic_abort(&af); goto done; }
    int ok = fwrite(head, 1, 24, af.f) == 24 && fwrite(hdr, 1, n, af.f) == n &&
             fwrite(zeros, 1, start - 24 - n, af.f) == start - 24 - n;
    for (int i = 0; ok && i < pl.n; i++) ok = write_piece(af.f, &pl.p[i], tri) == 0;
    if (!ok) {
        errmsg_set(err, errlen, "cannot write %s: %s", path, strerror(errno));
        atomic_abort(&af);
        goto done;
    }
    rc = atomic_commit(&af, err, errlen);
done:
    cJSON_free(hdr);
    free(pl.p);
    free(tri);
    return rc;
}
