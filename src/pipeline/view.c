/* view.c — see view.h. */
#include "pipeline/view.h"
#include "core/attention.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/safetensors.h"
#include "core/sizes.h"
#include "pipeline/links.h"
#include "tokenize/tokenizer.h"
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- tokens ---- */

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && !strcasecmp(s + n - k, tail);
}

static int push_token(ViewTokens *t, const char *s, size_t n, char *err, size_t errlen) {
    if (t->n == VIEW_MAX_TOKENS) return errmsg_set(err, errlen, "more than %d tokens", VIEW_MAX_TOKENS);
    char **g = realloc(t->tok, (size_t)(t->n + 1) * sizeof *g);
    if (!g) return errmsg_set(err, errlen, "out of memory");
    t->tok = g;
    if (!(g[t->n] = strndup(s, n))) return errmsg_set(err, errlen, "out of memory");
    t->n++;
    return 0;
}

static int tokens_json(ViewTokens *out, const char *text, const char *what, char *err, size_t errlen) {
    cJSON *j = cJSON_Parse(text), *e;
    int rc = cJSON_IsArray(j) ? 0 : errmsg_set(err, errlen, "%s is not a JSON list of strings", what);
    cJSON_ArrayForEach(e, j) {
        if (rc) break;
        if (!cJSON_IsString(e)) rc = errmsg_set(err, errlen, "%s: item %d is not a string", what, out->n);
        else rc = push_token(out, e->valuestring, strlen(e->valuestring), err, errlen);
    }
    cJSON_Delete(j);
    return rc;
}

int view_tokens(ViewTokens *out, const char *arg, const char *what, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    int file = (ends_with(arg, ".json") || ends_with(arg, ".txt")) && !strchr(arg, ' ');
    char *text = file ? file_read_all(arg, 16u << 20, NULL, err, errlen) : strdup(arg);
    if (!text) return file ? -1 : errmsg_set(err, errlen, "out of memory");
    int rc = tokenizer_check_utf8(text, strlen(text), NULL, 0) ? errmsg_set(err, errlen, "%s is not UTF-8 text", what) : 0;
    if (!rc && file && ends_with(arg, ".json")) rc = tokens_json(out, text, arg, err, errlen);
    else if (!rc && file) {   /* one token a line: a token may be a space */
        for (char *p = text; *p && !rc;) {
            size_t n = strcspn(p, "\n");
            rc = push_token(out, p, n && p[n - 1] == '\r' ? n - 1 : n, err, errlen);
            p += n + (p[n] == '\n');
        }
    } else {
        for (char *p = text; *p && !rc;) {
            p += strspn(p, " ");
            size_t n = strcspn(p, " ");
            if (n) rc = push_token(out, p, n, err, errlen);
            p += n;
        }
    }
    free(text);
    if (!rc && out->n == 0) rc = errmsg_set(err, errlen, "%s holds no token", what);
    if (rc) view_tokens_free(out);
    return rc;
}

void view_tokens_free(ViewTokens *t) {
    for (int i = 0; t && i < t->n; i++) free(t->tok[i]);
    if (t) { free(t->tok); memset(t, 0, sizeof *t); }
}

/* ---- reading the file ---- */

/* Nested JSON lists → shape (first pass: *nd dims) and values (second pass). */
static int json_shape(const cJSON *j, NpyArray *a, int depth, const char *what, char *err, size_t errlen) {
    if (cJSON_IsNumber(j)) {
        if (depth == 0) return errmsg_set(err, errlen, "%s is a number, not a list of rows", what);
        if (a->ndim == 0) a->ndim = depth;
        return a->ndim == depth ? 0 : errmsg_set(err, errlen, "%s: the nested lists are not all equally deep", what);
    }
    if (!cJSON_IsArray(j)) return errmsg_set(err, errlen, "%s: %s where a number or a list belongs", what,
                                             cJSON_IsNull(j) ? "null (NaN?)" : "a value that is not a number");
    if (depth == 4) return errmsg_set(err, errlen, "%s: more than 4 nested lists", what);
    long n = cJSON_GetArraySize(j);
    if (a->shape[depth] == 0 && n > 0) a->shape[depth] = n;
    if (n == 0 || n != a->shape[depth])
        return errmsg_set(err, errlen, "%s: rows of different lengths (%ld and %ld) at depth %d", what,
                          a->shape[depth], n, depth + 1);
    const cJSON *e;
    cJSON_ArrayForEach(e, j) if (json_shape(e, a, depth + 1, what, err, errlen)) return -1;
    return 0;
}

static void json_values(const cJSON *j, float *out, size_t *k) {
    if (cJSON_IsNumber(j)) { out[(*k)++] = (float)j->valuedouble; return; }
    const cJSON *e;
    cJSON_ArrayForEach(e, j) json_values(e, out, k);
}

static int json_array(NpyArray *a, const cJSON *j, const char *name, const char *what, char *err, size_t errlen) {
    memset(a, 0, sizeof *a);
    char label[600];
    snprintf(label, sizeof label, "%s%s%s", what, name ? ", array " : "", name ? name : "");
    if (json_shape(j, a, 0, label, err, errlen)) return -1;
    size_t n = 1, k = 0;
    for (int d = 0; d < a->ndim; d++)
        if (!size_mul(&n, n, (size_t)a->shape[d]) || n > NPY_MAX_FLOATS)
            return errmsg_set(err, errlen, "%s holds too many values", label);
    if (!(a->data = malloc(n * sizeof *a->data)) || (name && !(a->name = strdup(name)))) {
        npy_free(a);
        return errmsg_set(err, errlen, "out of memory");
    }
    a->numel = n;
    json_values(j, a->data, &k);
    return 0;
}

static int read_json(ViewArrays *va, const char *text, const char *path, char *err, size_t errlen) {
    cJSON *j = cJSON_Parse(text);
    if (!j) return errmsg_set(err, errlen, "%s is not valid JSON (or is truncated)", path);
    int rc = 0, n = cJSON_IsObject(j) ? cJSON_GetArraySize(j) : 1;
    va->a = calloc((size_t)(n ? n : 1), sizeof *va->a);
    if (!va->a) rc = errmsg_set(err, errlen, "out of memory");
    else if (!cJSON_IsObject(j)) { va->lone = 1; rc = json_array(&va->a[0], j, NULL, path, err, errlen); va->n = !rc; }
    else {
        const cJSON *e;
        cJSON_ArrayForEach(e, j) {
            if (rc) break;
            rc = json_array(&va->a[va->n], e, e->string, path, err, errlen);
            if (!rc) va->n++;
        }
    }
    cJSON_Delete(j);
    if (!rc && va->n == 0) rc = errmsg_set(err, errlen, "%s holds no array", path);
    return rc;
}

static int read_safetensors(ViewArrays *va, const char *path, char *err, size_t errlen) {
    SafeTensors st;
    memset(&st, 0, sizeof st);
    int rc = safetensors_open(&st, path, err, errlen);
    if (!rc && st.n == 0) rc = errmsg_set(err, errlen, "%s holds no tensor", path);
    if (!rc && !(va->a = calloc((size_t)st.n, sizeof *va->a))) rc = errmsg_set(err, errlen, "out of memory");
    for (int i = 0; !rc && i < st.n; i++) {
        const StTensor *t = &st.t[i];
        NpyArray *a = &va->a[i];
        if (t->ndim > NPY_MAX_DIMS || t->numel > NPY_MAX_FLOATS) {
            rc = errmsg_set(err, errlen, "%s: tensor %s is too large", path, t->name);
            break;
        }
        a->ndim = t->ndim;
        a->numel = t->numel;
        for (int d = 0; d < t->ndim; d++) a->shape[d] = t->shape[d];
        if (!(a->name = strdup(t->name)) || !(a->data = malloc((t->numel ? t->numel : 1) * sizeof(float))))
            rc = errmsg_set(err, errlen, "out of memory");
        else rc = safetensors_read_f32(&st, t, a->data, err, errlen);
        va->n = i + 1;
    }
    safetensors_close(&st);
    return rc;
}

int view_read(ViewArrays *va, const char *path, char *err, size_t errlen) {
    memset(va, 0, sizeof *va);
    int rc;
    if (ends_with(path, ".safetensors")) rc = read_safetensors(va, path, err, errlen);
    else if (!ends_with(path, ".npy") && !ends_with(path, ".npz") && !ends_with(path, ".json"))
        return errmsg_set(err, errlen, "%s: attnviz view reads .npy, .npz, .safetensors and .json files", path);
    else {
        size_t n;
        char *buf = file_read_all(path, VIEW_MAX_FILE, &n, err, errlen);
        if (!buf) return -1;
        if (ends_with(path, ".json")) rc = read_json(va, buf, path, err, errlen);
        else if (ends_with(path, ".npz")) rc = npz_parse(&va->a, &va->n, (unsigned char *)buf, n, path, err, errlen);
        else {
            rc = (va->a = calloc(1, sizeof *va->a)) ? npy_parse(va->a, (unsigned char *)buf, n, path, err, errlen)
                                                   : errmsg_set(err, errlen, "out of memory");
            va->n = !rc;
            va->lone = 1;
        }
        free(buf);
    }
    if (rc) view_arrays_free(va);
    return rc;
}

void view_arrays_free(ViewArrays *va) {
    if (!va) return;
    npz_free(va->a, va->n);
    memset(va, 0, sizeof *va);
}

/* ---- the maps ---- */

/* One map to add: its id, a (heads, Tq, Tk) block of an array. */
typedef struct {
    char id[300];
    const float *x;
    int H, Tq, Tk;
} ViewMap;

/* "encoder.2.self" → stack, layer, kind; anything else: custom, the first
 * number in the id (else index). */
static void parse_id(const char *id, int index, char *stack, int *layer, char *kind) {
    char st[32], kd[32], tail;
    int l;
    if (sscanf(id, "%31[a-z].%d.%31[a-z_]%c", st, &l, kd, &tail) == 3 && l >= 0 &&
        (!strcmp(st, "encoder") || !strcmp(st, "decoder")) &&
        (!strcmp(kd, "self") || !strcmp(kd, "masked_self") || !strcmp(kd, "cross"))) {
        strcpy(stack, st);
        strcpy(kind, kd);
        *layer = l;
        return;
    }
    strcpy(stack, "custom");
    strcpy(kind, "custom");
    const char *d = strpbrk(id, "0123456789");
    *layer = d && strlen(d) < 9 ? atoi(d) : index;
}

static const ViewTokens *queries_for(const ViewSpec *sp, const char *id) {
    for (int i = 0; i < sp->n_queries_of; i++)
        if (!strcmp(sp->qmap[i], id)) return &sp->qtok[i];
    return &sp->tokens;
}

static void shape_text(const NpyArray *a, char *buf, size_t n) {
    size_t k = (size_t)snprintf(buf, n, "(");
    for (int d = 0; d < a->ndim && k < n; d++) k += (size_t)snprintf(buf + k, n - k, "%s%ld", d ? ", " : "", a->shape[d]);
    if (k < n) snprintf(buf + k, n - k, ")");
}

/* The maps of one array, into maps (*n grows).  0, or -1. */
static int array_maps(const NpyArray *a, int lone, ViewMap *maps, int *n, int cap, char *err, size_t errlen) {
    char sh[200];
    shape_text(a, sh, sizeof sh);
    const char *name = lone ? "layer" : a->name;
    if (a->ndim < 2 || a->ndim > 4)
        return errmsg_set(err, errlen, "%s has shape %s; attnviz view reads (layers, heads, queries, keys), (heads, "
                          "queries, keys) or (queries, keys)", lone ? "the array" : a->name, sh);
    int L = a->ndim == 4 ? (int)a->shape[0] : 1, H = a->ndim >= 3 ? (int)a->shape[a->ndim - 3] : 1;
    int Tq = (int)a->shape[a->ndim - 2], Tk = (int)a->shape[a->ndim - 1];
    if (a->numel == 0 || Tq > VIEW_MAX_TOKENS || Tk > VIEW_MAX_TOKENS || H > 1024 || L > 1024)
        return errmsg_set(err, errlen, "%s has shape %s: empty, or more than %d tokens (or 1024 layers or heads)", name,
                          sh, VIEW_MAX_TOKENS);
    for (int l = 0; l < L; l++) {
        if (*n == cap) return errmsg_set(err, errlen, "more than %d maps", cap);
        ViewMap *m = &maps[(*n)++];
        if (a->ndim == 4 || lone) snprintf(m->id, sizeof m->id, "%s.%d", name, l);
        else snprintf(m->id, sizeof m->id, "%s", name);
        m->x = a->data + (size_t)l * H * Tq * Tk;
        m->H = H;
        m->Tq = Tq;
        m->Tk = Tk;
    }
    return 0;
}

/* The tokens q and k of map m agree with its shape.  0, or -1. */
static int check_tokens(const ViewMap *m, const ViewTokens *q, const ViewTokens *k, const ViewSpec *sp, char *err,
                        size_t errlen) {
    const char *qf = q == &sp->tokens ? "--tokens" : "--queries-of", *kf = k == &sp->keys ? "--keys" :
                                                                         k == &sp->tokens ? "--tokens" : "--queries-of";
    if (m->Tq != q->n)
        return errmsg_set(err, errlen, "map %s has %d queries but %s gives %d tokens (give a map its own queries with "
                          "--queries-of %s=TOKENS)", m->id, m->Tq, qf, q->n, m->id);
    if (m->Tk != k->n)
        return errmsg_set(err, errlen, "map %s has %d keys but %s gives %d tokens (--keys gives the keys when they "
                          "differ from the queries)", m->id, m->Tk, kf, k->n);
    return 0;
}

static const ViewTokens *keys_for(const ViewSpec *sp, const char *id, const char *kind) {
    if (sp->keys.n) return &sp->keys;
    const ViewTokens *q = queries_for(sp, id);
    return strcmp(kind, "cross") && q != &sp->tokens ? q : &sp->tokens;
}

/* Row i of head h of m: every number checked.  *zero: every weight is 0 (or
 * every score −∞).  0, or -1 naming map, head and row. */
static int check_row(const ViewMap *m, const ViewSpec *sp, int h, int i, const char *qtok, int *zero, char *err,
                     size_t errlen) {
    const float *r = m->x + ((size_t)h * m->Tq + i) * m->Tk;
    double sum = 0;
    *zero = 1;
    for (int j = 0; j < m->Tk; j++) {
        float v = r[j];
        if (isnan(v) || (isinf(v) && (!sp->scores || v > 0)))
            return errmsg_set(err, errlen, "map %s head %d row %d (“%s”): %s at key %d", m->id, h, i, qtok,
                              isnan(v) ? "NaN" : "an infinity", j);
        if (!sp->scores && v < 0)
            return errmsg_set(err, errlen, "map %s head %d row %d (“%s”): weight %g at key %d is negative; attention "
                              "weights are ≥ 0 (if these are scores before softmax, add --scores)", m->id, h, i, qtok,
                              (double)v, j);
        *zero &= sp->scores ? isinf(v) : v == 0;
        sum += v;
    }
    if (!sp->scores && !*zero && fabs(sum - 1) > VIEW_ROW_TOLERANCE)
        return errmsg_set(err, errlen, "map %s head %d row %d (“%s”): the weights sum to %.6g, not 1 (within %g); "
                          "attention weights come after softmax (if these are scores before softmax, add --scores)",
                          m->id, h, i, qtok, sum, VIEW_ROW_TOLERANCE);
    return 0;
}

/* The cells of m that hold nothing in every head: above the diagonal (causal)
 * and whole rows (padding).  mask (Tq·Tk): 1 = may attend.  Returns how many
 * cells are masked, or -1 (--causal broken, named in err). */
static long map_mask(const ViewMap *m, const ViewSpec *sp, const char *const *qtok, unsigned char *mask, char *err,
                     size_t errlen) {
    int square = m->Tq == m->Tk && m->Tq > 1, causal = square;
    unsigned char *zero_row = calloc((size_t)m->Tq, 1);
    if (!zero_row) return errmsg_set(err, errlen, "out of memory");
    memset(zero_row, 1, (size_t)m->Tq);
    for (int h = 0; h < m->H; h++)
        for (int i = 0; i < m->Tq; i++) {
            int z;
            if (check_row(m, sp, h, i, qtok[i], &z, err, errlen)) { free(zero_row); return -1; }
            zero_row[i] &= (unsigned char)z;
            const float *r = m->x + ((size_t)h * m->Tq + i) * m->Tk;
            for (int j = i + 1; causal && j < m->Tk; j++)
                if (sp->scores ? !isinf(r[j]) : r[j] != 0) {
                    if (sp->causal && !sp->scores) {
                        free(zero_row);
                        return errmsg_set(err, errlen, "map %s head %d row %d (“%s”): weight %g at key %d above the "
                                          "diagonal, but --causal says no query sees a later key", m->id, h, i, qtok[i],
                                          (double)r[j], j);
                    }
                    causal = 0;
                }
        }
    causal |= square && sp->causal;
    long masked = 0;
    for (int i = 0; i < m->Tq; i++)
        for (int j = 0; j < m->Tk; j++) {
            mask[(size_t)i * m->Tk + j] = !zero_row[i] && !(causal && j > i);
            masked += !mask[(size_t)i * m->Tk + j];
        }
    free(zero_row);
    return masked;
}

/* Head h of map tm from m: the weights as given, or softmax of the scores
 * (masked cells −∞) with the scores kept as the `masked` step. */
static int set_head(TraceMap *tm, const ViewMap *m, const ViewSpec *sp, int h, char *err, size_t errlen) {
    size_t n = (size_t)m->Tq * m->Tk;
    const float *x = m->x + (size_t)h * n;
    if (!sp->scores) return trace_set_head(tm, h, x, NULL, NULL, NULL, NULL) ? errmsg_set(err, errlen, "out of memory") : 0;
    float *masked = malloc(n * sizeof *masked), *w = malloc(n * sizeof *w);
    int rc = masked && w ? 0 : errmsg_set(err, errlen, "out of memory");
    for (size_t c = 0; !rc && c < n; c++) masked[c] = tm->mask && !tm->mask[c] ? -INFINITY : x[c];
    if (!rc) memcpy(w, masked, n * sizeof *w);
    for (int i = 0; !rc && i < m->Tq; i++) attn_softmax_row(w + (size_t)i * m->Tk, m->Tk);
    if (!rc && trace_set_head(tm, h, w, NULL, NULL, masked, NULL)) rc = errmsg_set(err, errlen, "out of memory");
    free(masked);
    free(w);
    return rc;
}

static int add_map(Trace *t, const ViewMap *m, const ViewSpec *sp, int index, char *err, size_t errlen) {
    char stack[32], kind[32];
    int layer;
    parse_id(m->id, index, stack, &layer, kind);
    const ViewTokens *q = queries_for(sp, m->id), *k = keys_for(sp, m->id, kind);
    if (check_tokens(m, q, k, sp, err, errlen)) return -1;
    unsigned char *mask = malloc((size_t)m->Tq * m->Tk);
    if (!mask) return errmsg_set(err, errlen, "out of memory");
    long masked = map_mask(m, sp, (const char *const *)q->tok, mask, err, errlen);
    TraceMap *tm = NULL;
    if (masked >= 0) {
        TraceMapSpec ms = {.id = m->id, .stack = stack, .layer = layer, .kind = kind,
                           .queries = (const char *const *)q->tok, .Tq = m->Tq, .keys = (const char *const *)k->tok,
                           .Tk = m->Tk, .mask = masked ? mask : NULL, .mask_fill = -INFINITY, .n_heads = m->H};
        tm = trace_add_map(t, &ms);
        if (!tm) errmsg_set(err, errlen, "out of memory");
    }
    free(mask);
    for (int h = 0; tm && h < m->H; h++)
        if (set_head(tm, m, sp, h, err, errlen)) return -1;
    return tm ? 0 : -1;
}

int view_trace(Trace *t, const ViewArrays *va, const ViewSpec *sp, char *err, size_t errlen) {
    int cap = 0, n = 0, rc = 0;
    for (int i = 0; i < va->n; i++) cap += va->a[i].ndim == 4 ? (int)(va->a[i].shape[0] > 1024 ? 1025 : va->a[i].shape[0]) : 1;
    ViewMap *maps = malloc((size_t)(cap ? cap : 1) * sizeof *maps);
    if (!maps) return errmsg_set(err, errlen, "out of memory");
    for (int i = 0; !rc && i < va->n; i++) rc = array_maps(&va->a[i], va->lone, maps, &n, cap, err, errlen);
    for (int i = 0; !rc && i < sp->n_queries_of; i++) {
        int found = 0;
        for (int k = 0; k < n; k++) found |= !strcmp(maps[k].id, sp->qmap[i]);
        if (!found) rc = errmsg_set(err, errlen, "--queries-of names map %s, which %s does not hold (it holds %s%s)",
                                    sp->qmap[i], sp->file, n ? maps[0].id : "none", n > 1 ? ", …" : "");
    }
    for (int i = 1; !rc && i < n; i++)
        if (maps[i].H != maps[0].H)
            rc = errmsg_set(err, errlen, "map %s has %d heads but map %s has %d: attnviz draws maps of one number of "
                            "heads (give the others in another file)", maps[i].id, maps[i].H, maps[0].id, maps[0].H);
    for (int i = 0; !rc && i < n; i++)
        if (trace_find_map(t, maps[i].id)) rc = errmsg_set(err, errlen, "map %s is given twice", maps[i].id);
        else rc = add_map(t, &maps[i], sp, i, err, errlen);
    if (!rc) rc = trace_set_source(t, (const char *const *)sp->tokens.tok, sp->tokens.n) ? errmsg_set(err, errlen, "out of memory") : 0;
    free(maps);
    return rc;
}

ViewSummary view_summary(const Trace *t) {
    ViewSummary s = {t->n_maps, 0, 0, 0};
    for (int i = 0; i < t->n_maps; i++) {
        const TraceMap *m = &t->maps[i];
        s.n_heads += m->n_heads;
        int causal = m->mask && m->Tq == m->Tk;
        for (int r = 0; m->mask && r < m->Tq; r++) {
            int row_zero = 1;
            for (int j = 0; j < m->Tk; j++) {
                row_zero &= !m->mask[(size_t)r * m->Tk + j];
                if (j > r && m->mask[(size_t)r * m->Tk + j]) causal = 0;
            }
            s.n_padded_rows += row_zero;
        }
        s.n_causal += causal;
    }
    return s;
}

int view_pictures(Trace *t, const ViewSpec *spec, const char *dir, const char *command, PictureReport *rep,
                  char *err, size_t errlen) {
    const char *base = strrchr(spec->file, '/') ? strrchr(spec->file, '/') + 1 : spec->file;
    char origin[600], model[700];
    snprintf(origin, sizeof origin, "weights from %s, computed outside attnviz (attnviz does not know the model)%s",
             base, spec->scores ? "; softmax of the given scores by attnviz" : "");
    snprintf(model, sizeof model, "none: weights computed outside attnviz, read from %s", spec->file);
    Sentence s;
    memset(&s, 0, sizeof s);
    size_t len = 0;
    char *text = calloc(1, 1);
    for (int i = 0; text && i < spec->tokens.n; i++) {   /* the tokens, space-separated, as the sentence */
        size_t k = strlen(spec->tokens.tok[i]);
        char *g = realloc(text, len + k + 2);
        if (!g) { free(text); text = NULL; break; }
        text = g;
        memcpy(text + len, spec->tokens.tok[i], k);
        len += k;
        text[len++] = i + 1 < spec->tokens.n ? ' ' : '\0';
        text[len] = '\0';
    }
    if (!text) return errmsg_set(err, errlen, "out of memory");
    s.text = text;
    s.words.n = spec->tokens.n;
    s.words.tok = spec->tokens.tok;
    s.copy_layer = -1;
    PictureSpec ps = {.dir = dir, .model_path = model, .command = command, .focus_map = -1, .focus_head = 0,
                      .keep_steps = 1, .coref = {.layer = -1}, .origin = origin};
    /* the pronouns' lines views, as run draws them, from the self-attention maps */
    LinksAsk ask = {.coref = &ps.coref, .focus_map = -1};
    LinksFound *found = NULL;
    int n = links_find(t, (const char *const *)spec->tokens.tok, spec->tokens.n, &ask, &found);
    ps.links = found;
    ps.n_links = n > 0 ? n : 0;
    int rc = n < 0 ? errmsg_set(err, errlen, "out of memory") : pictures_show_sentence(&ps, &s, t, rep, err, errlen);
    free(found);
    free(text);
    return rc;
}
