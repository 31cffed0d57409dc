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
#include <unistd.h>

static size_t align_up(size_t n) { return (n + TRACE_BIN_ALIGN - 1) / TRACE_BIN_ALIGN * TRACE_BIN_ALIGN; }

/* The n strings s as a JSON array ([] when there are none). */
static cJSON *strings(char *const *s, int n) {
    return n > 0 && s ? cJSON_CreateStringArray((const char *const *)s, n) : cJSON_CreateArray();
}

static int host_is_little_endian(void) {
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* One matrix of the data part as written: elem 4 float32 (swapped on a
 * big-endian host) or 1 byte a cell; lower n > 0 an n x n float matrix written
 * as its lower triangle; f16 float32 in memory written as half precision. */
typedef struct {
    const void *ptr;
    size_t bytes;      /* as written */
    int elem, lower, f16;
} Piece;

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
    } else if (p->elem == 1 || host_is_little_endian()) {
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

/* Writes the next matrix and returns its slot {"offset": O, "shape": [rows,
 * cols]} (with "dtype", "layout" as it is written); NULL (w->failed set) when
 * out of memory or the write failed. */
static cJSON *slot(TraceBinWriter *w, const void *ptr, int rows, int cols, int elem, int tri, int f16) {
    int lower = tri ? rows : 0;
    size_t cells = lower ? (size_t)rows * (rows + 1) / 2 : (size_t)rows * (size_t)cols;
    Piece p = {ptr, cells * (f16 ? 2 : (size_t)elem), elem, lower, f16};
    if (lower && cells > w->tri_cap) {
        float *t = realloc(w->tri, cells * sizeof *t);
        if (!t) { w->failed = 1; return NULL; }
        w->tri = t;
        w->tri_cap = cells;
    }
    cJSON *o = cJSON_CreateObject(), *shape = cJSON_CreateArray();
    if (!o || !shape || write_piece(w->af.f, &p, w->tri)) {
        cJSON_Delete(o); cJSON_Delete(shape); w->failed = 1; return NULL;
    }
    cJSON_AddNumberToObject(o, "offset", (double)w->next);
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(rows));
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(cols));
    cJSON_AddItemToObject(o, "shape", shape);
    if (elem == 1) cJSON_AddStringToObject(o, "dtype", "u8");
    if (f16) cJSON_AddStringToObject(o, "dtype", "f16");
    if (lower) cJSON_AddStringToObject(o, "layout", "lower");
    w->next += align_up(p.bytes);
    return o;
}

/* One head: every matrix it holds, in the JSON trace's order; tri its two
 * triangle flags (weights, norm_weighted: 0 above the diagonal). */
static cJSON *head_json(TraceBinWriter *w, const TraceMap *m, const TraceHead *hd, const unsigned char *tri) {
    cJSON *o = cJSON_CreateObject();
    if (!o) { w->failed = 1; return NULL; }
    cJSON_AddNumberToObject(o, "head", hd->head);
    TracePart parts[TRACE_HEAD_PARTS];
    trace_head_parts(m, hd, parts);
    for (int i = 0; i < TRACE_HEAD_PARTS && !w->failed; i++)
        if (parts[i].x)
            cJSON_AddItemToObject(o, parts[i].name, slot(w, parts[i].x, parts[i].rows, parts[i].cols, 4,
                                                         i == 0 ? tri[0] : i == 5 ? tri[1] : 0,
                                                         i == 0 && w->weights_f16));
    return o;
}

static cJSON *map_json(TraceBinWriter *w, const TraceMap *m, const unsigned char *tri) {
    cJSON *o = cJSON_CreateObject(), *heads = cJSON_CreateArray();
    if (!o || !heads) { cJSON_Delete(o); cJSON_Delete(heads); w->failed = 1; return NULL; }
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
    cJSON_AddItemToObject(o, "mask", m->mask ? slot(w, m->mask, m->Tq, m->Tk, 1, 0, 0) : cJSON_CreateNull());
    if (isinf(m->mask_fill) && m->mask_fill < 0) cJSON_AddStringToObject(o, "mask_fill", "-inf");
    else cJSON_AddNumberToObject(o, "mask_fill", m->mask_fill);
    for (int h = 0; h < m->n_heads && !w->failed; h++)
        cJSON_AddItemToArray(heads, head_json(w, m, &m->heads[h], tri + 2 * (size_t)h));
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

/* A member holding a JSON text, parsed (out of memory when it does not parse). */
static void add_json_text(cJSON *o, const char *name, const char *text, TraceBinWriter *w) {
    cJSON *v = text ? cJSON_Parse(text) : NULL;
    if (text && !v) w->failed = 1;
    if (v) cJSON_AddItemToObject(o, name, v);
}

int trace_path_is_bin(const char *path) {
    size_t n = path ? strlen(path) : 0;
    return n >= 4 && !strcmp(path + n - 4, ".bin");
}

int trace_bin_begin(TraceBinWriter *w, const char *path, const TraceBinOptions *o, char *err, size_t errlen) {
    static const unsigned char zeros[TRACE_BIN_DATA];
    memset(w, 0, sizeof *w);
    w->weights_f16 = o && o->weights_f16;
    w->maps = cJSON_CreateArray();
    if (!w->maps) return errmsg_set(err, errlen, "out of memory writing %s", path);
    if (atomic_open(&w->af, path, err, errlen)) { cJSON_Delete(w->maps); w->maps = NULL; return -1; }
    if (fwrite(zeros, 1, sizeof zeros, w->af.f) != sizeof zeros) {   /* the preamble, filled in by trace_bin_end */
        errmsg_set(err, errlen, "cannot write %s: %s", w->af.path, strerror(errno));
        trace_bin_abort(w);
        return -1;
    }
    return 0;
}

int trace_bin_add_map(TraceBinWriter *w, const TraceMap *m, char *err, size_t errlen) {
    unsigned char *tri = calloc(2 * (size_t)(m->n_heads > 0 ? m->n_heads : 1), 1);
    if (!tri) return errmsg_set(err, errlen, "out of memory writing %s", w->af.path);
    if (trace_check_map_lower(m, tri, err, errlen)) { free(tri); return -1; }
    cJSON *o = map_json(w, m, tri);
    free(tri);
    if (o) cJSON_AddItemToArray(w->maps, o);
    if (!o || w->failed)
        return errmsg_set(err, errlen, "cannot write %s: %s", w->af.path, errno ? strerror(errno) : "out of memory");
    return 0;
}

/* The header: t's members, the maps the writer wrote (handed to root). */
static char *header_text(TraceBinWriter *w, const Trace *t) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "format", "attnviz-trace-bin");
    cJSON_AddNumberToObject(root, "version", TRACE_BIN_VERSION);
    add_json_text(root, "model", t->json_model, w);
    cJSON_AddItemToObject(root, "source_tokens", strings(t->source_tokens, t->n_source));
    cJSON_AddItemToObject(root, "target_tokens", strings(t->target_tokens, t->n_target));
    cJSON_AddItemToObject(root, "maps", w->maps);
    w->maps = NULL;
    for (int i = 0; i < t->n_sections; i++) add_json_text(root, t->section_names[i], t->section_json[i], w);
    cJSON_AddItemToObject(root, "images", strings(t->images, t->n_images));
    char *txt = w->failed ? NULL : cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return txt;
}

int trace_bin_end(TraceBinWriter *w, const Trace *t, char *err, size_t errlen) {
    char *hdr = header_text(w, t);
    if (!hdr) { errmsg_set(err, errlen, "out of memory writing %s", w->af.path); trace_bin_abort(w); return -1; }
    uint64_t n = strlen(hdr), at = TRACE_BIN_DATA + (uint64_t)w->next;
    unsigned char pre[TRACE_BIN_DATA] = TRACE_BIN_MAGIC;
    pre[8] = TRACE_BIN_VERSION;
    for (int i = 0; i < 8; i++) {
        pre[16 + i] = (unsigned char)(at >> (8 * i));
        pre[24 + i] = (unsigned char)(n >> (8 * i));
    }
    int ok = fwrite(hdr, 1, n, w->af.f) == n && fseek(w->af.f, 0, SEEK_SET) == 0 &&
             fwrite(pre, 1, sizeof pre, w->af.f) == sizeof pre;
    cJSON_free(hdr);
    if (!ok) {
        errmsg_set(err, errlen, "cannot write %s: %s", w->af.path, strerror(errno));
        trace_bin_abort(w);
        return -1;
    }
    free(w->tri);
    w->tri = NULL;
    return atomic_commit(&w->af, err, errlen);
}

int trace_bin_read_weights(TraceBinWriter *w, int map, int head, float *out, char *err, size_t errlen) {
    const cJSON *m = cJSON_GetArrayItem(w->maps, map);
    const cJSON *hd = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "heads"), head);
    const cJSON *slot = cJSON_GetObjectItemCaseSensitive(hd, "weights");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(slot, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(slot, "offset");
    if (!w->af.f || !cJSON_IsNumber(off) || cJSON_GetArraySize(shape) != 2)
        return errmsg_set(err, errlen, "trace.bin has no head %d of map %d written", head, map);
    int rows = cJSON_GetArrayItem(shape, 0)->valueint, cols = cJSON_GetArrayItem(shape, 1)->valueint;
    int lower = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(slot, "layout"));
    int f16 = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(slot, "dtype"));
    size_t cells = lower ? (size_t)rows * (rows + 1) / 2 : (size_t)rows * cols, size = f16 ? 2 : 4;
    unsigned char *buf = malloc(cells * size + 1);
    if (!buf) return errmsg_set(err, errlen, "out of memory");
    long at = TRACE_BIN_DATA + (long)off->valuedouble;
    int ok = fflush(w->af.f) == 0 && pread(fileno(w->af.f), buf, cells * size, at) == (ssize_t)(cells * size);
    if (!ok) { free(buf); return errmsg_set(err, errlen, "cannot read back %s: %s", w->af.path, strerror(errno)); }
    size_t k = 0;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            float v = 0;
            if (!lower || j <= i) {
                const unsigned char *b = buf + size * k++;
                if (f16) v = safetensors_f16_to_f32((unsigned short)(b[0] | b[1] << 8));
                else {
                    uint32_t u = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
                    memcpy(&v, &u, sizeof v);
                }
            }
            out[(size_t)i * cols + j] = v;
        }
    free(buf);
    return 0;
}

void trace_bin_abort(TraceBinWriter *w) {
    atomic_abort(&w->af);
    cJSON_Delete(w->maps);
    free(w->tri);
    memset(w, 0, sizeof *w);
}

int trace_write_bin(const Trace *t, const char *path, char *err, size_t errlen) {
    return trace_write_bin_with(t, path, NULL, err, errlen);
}

int trace_write_bin_with(const Trace *t, const char *path, const TraceBinOptions *o, char *err, size_t errlen) {
    TraceBinWriter w;
    if (trace_bin_begin(&w, path, o, err, errlen)) return -1;
    for (int i = 0; i < t->n_maps; i++)
        if (trace_bin_add_map(&w, &t->maps[i], err, errlen)) { trace_bin_abort(&w); return -1; }
    return trace_bin_end(&w, t, err, errlen);
}
