/* compare.c — see compare.h. */
#include "pipeline/compare.h"
#include "render/page.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "pipeline/links.h"
#include "pipeline/pictures_common.h"
#include "render/html.h"
#include "render/mapview.h"
#include "render/render.h"
#include "render/side.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the differences ---- */

static int trace_map_index(const Trace *t, const char *id) {
    for (int i = 0; i < t->n_maps; i++)
        if (!strcmp(t->maps[i].id, id)) return i;
    return -1;
}

static void note_skipped(Comparison *c, const TraceMap *ma, const TraceMap *mb) {
    size_t len = strlen(c->skipped);
    if (mb)
        snprintf(c->skipped + len, sizeof c->skipped - len, "%s%s (A %d×%d, B %d×%d)", len ? ", " : "", ma->id,
                 ma->Tq, ma->Tk, mb->Tq, mb->Tk);
    else
        snprintf(c->skipped + len, sizeof c->skipped - len, "%s%s (not in B)", len ? ", " : "", ma->id);
    c->n_skipped++;
}

/* Head h of maps ma, mb (equal shapes): B − A and its largest |Δ|. */
static int head_diff(CompareHead *d, const TraceMap *ma, const TraceMap *mb, int h) {
    long n = (long)ma->Tq * ma->Tk;
    d->rows = ma->Tq;
    d->cols = ma->Tk;
    d->diff = malloc((size_t)n * sizeof *d->diff);
    if (!d->diff) return -1;
    const float *wa = ma->heads[h].weights, *wb = mb->heads[h].weights;
    d->max_abs = -1;
    for (long k = 0; k < n; k++) {
        d->diff[k] = wb[k] - wa[k];
        if (fabsf(d->diff[k]) > d->max_abs) {
            d->max_abs = fabsf(d->diff[k]);
            d->row = (int)(k / d->cols);
            d->col = (int)(k % d->cols);
        }
    }
    return 0;
}

int compare_traces(Comparison *c, const Trace *a, const Trace *b, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    int cap = 0;
    for (int i = 0; i < a->n_maps; i++) cap += a->maps[i].n_heads;
    c->heads = calloc(cap ? (size_t)cap : 1, sizeof *c->heads);
    if (!c->heads) return errmsg_set(err, errlen, "out of memory");
    for (int i = 0; i < a->n_maps; i++) {
        const TraceMap *ma = &a->maps[i];
        int j = trace_map_index(b, ma->id);
        const TraceMap *mb = j >= 0 ? &b->maps[j] : NULL;
        if (!mb || mb->Tq != ma->Tq || mb->Tk != ma->Tk || mb->n_heads != ma->n_heads) {
            note_skipped(c, ma, mb);
            continue;
        }
        for (int h = 0; h < ma->n_heads; h++) {
            CompareHead *d = &c->heads[c->n_heads];
            d->map_a = i;
            d->map_b = j;
            d->head = h;
            if (head_diff(d, ma, mb, h)) return errmsg_set(err, errlen, "out of memory");
            c->n_heads++;
            if (d->max_abs > c->scale) c->scale = d->max_abs;
        }
    }
    return 0;
}

void compare_free(Comparison *c) {
    if (!c) return;
    for (int i = 0; c->heads && i < c->n_heads; i++) free(c->heads[i].diff);
    free(c->heads);
    memset(c, 0, sizeof *c);
}

/* The position of the n-th occurrence (0-based) of word among m's queries, or -1. */
static int nth_query(const TraceMap *m, const char *word, int nth) {
    for (int q = 0; q < m->Tq; q++)
        if (!strcmp(m->queries[q], word) && nth-- == 0) return q;
    return -1;
}

int compare_pick_lines(const Trace *a, const Trace *b, const char *query, const CorefHead *coref, CompareLine *out,
                       int max) {
    if (a->n_maps == 0 || b->n_maps == 0) return 0;
    const TraceMap *ma = &a->maps[0], *mb = &b->maps[0];   /* the first layer's queries: the tokens read */
    int n = 0;
    for (int q = 0; q < ma->Tq && n < max; q++) {
        const char *w = ma->queries[q];
        int pronoun = links_is_pronoun(w);
        if (query ? strcmp(w, query) != 0 : !pronoun) continue;
        int nth = 0;
        for (int p = 0; p < q; p++) nth += !strcmp(ma->queries[p], w);
        int qb = nth_query(mb, w, nth);
        LinksView v = links_view(a, q, pronoun, coref, -1, 0);
        if (qb < 0 || v.link.map < 0 || trace_map_index(b, a->maps[v.link.map].id) < 0) continue;
        out[n++] = (CompareLine){q, qb, v.link.map, v.link.head};
    }
    return n;
}

/* Heads in order of their largest |Δ|, largest first (ties: trace order). */
static void rank_heads(const Comparison *c, int *order) {
    for (int i = 0; i < c->n_heads; i++) order[i] = i;
    for (int i = 1; i < c->n_heads; i++)
        for (int j = i; j > 0 && c->heads[order[j]].max_abs > c->heads[order[j - 1]].max_abs; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
}

void compare_summary(const Comparison *c, const Trace *a, const Trace *b, int top, char *out, size_t n) {
    size_t len = 0;
    out[0] = '\0';
    int *order = malloc((c->n_heads ? (size_t)c->n_heads : 1) * sizeof *order);
    if (!order) return;
    rank_heads(c, order);
    len += snprintf(out + len, n - len, "where the maps differ most (Δ = B − A of the attention weights; each head's "
                    "largest |Δ|):\n");
    for (int i = 0; i < c->n_heads && i < top && len < n; i++) {
        const CompareHead *d = &c->heads[order[i]];
        const TraceMap *ma = &a->maps[d->map_a], *mb = &b->maps[d->map_b];
        char qw[160], kw[160];
        snprintf(qw, sizeof qw, strcmp(ma->queries[d->row], mb->queries[d->row]) ? "%s/%s" : "%s",
                 ma->queries[d->row], mb->queries[d->row]);
        snprintf(kw, sizeof kw, strcmp(ma->keys[d->col], mb->keys[d->col]) ? "%s/%s" : "%s", ma->keys[d->col],
                 mb->keys[d->col]);
        long k = (long)d->row * d->cols + d->col;
        len += snprintf(out + len, n - len, "  %-22s head %d  query “%s” (%d) → key “%s” (%d)  A %.2f  B %.2f  Δ %+.2f\n",
                        ma->id, d->head, qw, d->row, kw, d->col, (double)ma->heads[d->head].weights[k],
                        (double)mb->heads[d->head].weights[k], (double)d->diff[k]);
    }
    if (c->n_heads == 0 && len < n) len += snprintf(out + len, n - len, "  (no map of equal shape to compare)\n");
    if (c->n_heads > 0 && len < n) {   /* words that do not line up: say so */
        const TraceMap *ma = &a->maps[c->heads[0].map_a], *mb = &b->maps[c->heads[0].map_b];
        int differ = 0;
        for (int q = 0; q < ma->Tq; q++) differ += strcmp(ma->queries[q], mb->queries[q]) != 0;
        if (differ)
            len += snprintf(out + len, n - len, "cells pair A's and B's words by position: %s's queries differ at %d "
                            "of %d positions (written a/b)\n", ma->id, differ, ma->Tq);
    }
    if (c->n_skipped && len < n)
        snprintf(out + len, n - len, "not compared (shapes differ, so no cell pairs with another): %s\n", c->skipped);
    free(order);
}

/* ---- the pictures ---- */

/* Which writer is drawing: the spec, the comparison, the page, the count. */
typedef struct {
    const CompareSpec *s;
    const Comparison *c;
    const Trace *a, *b;
    HtmlPage *pg;
    int n_pictures;
    char *err;
    size_t errlen;
} CmpWrite;

static void map_title(const TraceMap *m, int h, char *buf, size_t n) {
    const char *what = !strcmp(m->kind, "self")          ? "self-attention"
                       : !strcmp(m->kind, "masked_self") ? "masked self-attention"
                       : !strcmp(m->kind, "cross")       ? "cross-attention"
                                                         : m->kind;
    snprintf(buf, n, "%s %s · layer %d · head %d", m->stack, what, m->layer, h);
}

/* s cut to at most max bytes at a character boundary, with "…" when cut. */
static void cut_end(const char *s, char *out, size_t n, size_t max) {
    if (strlen(s) <= max) { snprintf(out, n, "%s", s); return; }
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80) max--;
    snprintf(out, n, "%.*s…", (int)max, s);
}

/* A side's label ("A: “…”") cut to about max bytes (a label that quotes no
 * sentence is kept whole); when it is longer, the
 * part that differs from `other` is kept: after the "A:", a "…" and the text
 * from a few words before the first byte where the two differ. */
static void short_label(const char *s, const char *other, char *out, size_t n, size_t max) {
    if (!strstr(s, "“")) {   /* a model's label ("B: model taught with decoder.0.masked_self.1 knocked out"):
                                whole, the picture folds it (it was cut to "…masked_self.1 kno…") */
        snprintf(out, n, "%s", s);
        return;
    }
    size_t len = strlen(s), from = 0, p, head;
    for (head = 0; s[head] && s[head] != ' '; head++) {}
    for (p = head; s[p] && strlen(other) > p && s[p] == other[p]; p++) {}
    if (len > max && p > max / 2) {
        from = p - max / 2;
        while (from < p && s[from] != ' ') from++;   /* at a word */
        if (from <= head) from = 0;
    }
    if (!from) { cut_end(s, out, n, max); return; }
    char tail[160];
    cut_end(s + from + 1, tail, sizeof tail, max > head + 4 ? max - head - 4 : 1);
    snprintf(out, n, "%.*s …%s", (int)(head < 16 ? head : 16), s, tail);
}

static int cmp_path(const CmpWrite *W, const char *file, char *path, size_t n) {
    return path_join(path, n, W->s->dir, file, W->err, W->errlen);
}

/* The query row to outline in head h of map index map_a: a lines view's. */
static int outlined_row(const CmpWrite *W, int map_a, int h, int side_b) {
    for (int i = 0; i < W->s->n_lines; i++)
        if (W->s->lines[i].map == map_a && W->s->lines[i].head == h)
            return side_b ? W->s->lines[i].q_b : W->s->lines[i].q_a;
    return -1;
}

/* A's and B's weights of one head side by side, one 0–1 scale. */
static int draw_side(CmpWrite *W, int ia, int ib, int h, const char *file) {
    const TraceMap *ma = &W->a->maps[ia], *mb = &W->b->maps[ib];
    char title[256], la[400], lb[400], path[4096], head[16];
    map_title(ma, h, title, sizeof title);
    short_label(W->s->label_a, W->s->label_b, la, sizeof la, 56);
    short_label(W->s->label_b, W->s->label_a, lb, sizeof lb, 56);
    RenderHeatmap p[2] = {mapview_weights_heatmap(ma, h, la, NULL, outlined_row(W, ia, h, 0)),
                          mapview_weights_heatmap(mb, h, lb, NULL, outlined_row(W, ia, h, 1))};
    char full[400];
    snprintf(full, sizeof full, "%s — A beside B (weights, one colour scale 0–1 for both)", title);
    snprintf(head, sizeof head, "%d", h);
    RenderMetaItem items[] = {{"Title", full}, {"Map", ma->id}, {"Head", head}, {"A", W->s->label_a},
                              {"B", W->s->label_b}};
    RenderMeta meta = {items, 5};
    if (cmp_path(W, file, path, sizeof path) || render_panels(path, full, p, 2, 0, &meta, W->err, W->errlen))
        return -1;
    W->n_pictures++;
    return 0;
}

/* "tired/wide" where A's and B's labels differ (n strings, malloc'd; NULL out of memory). */
static char **pair_labels(char *const *a, char *const *b, int n) {
    char **out = calloc((size_t)n, sizeof *out);
    for (int i = 0; out && i < n; i++) {
        size_t len = strlen(a[i]) + strlen(b[i]) + 2;
        if (!(out[i] = malloc(len))) break;
        snprintf(out[i], len, strcmp(a[i], b[i]) ? "%s/%s" : "%s", a[i], b[i]);
    }
    return out;
}

static void free_labels(char **l, int n) {
    for (int i = 0; l && i < n; i++) free(l[i]);
    free(l);
}

/* 1 where either side may attend (a cell both sides mask stays masked). */
static unsigned char *either_mask(const TraceMap *ma, const TraceMap *mb) {
    if (!ma->mask || !mb->mask) return NULL;
    long n = (long)ma->Tq * ma->Tk;
    unsigned char *m = malloc((size_t)n);
    for (long k = 0; m && k < n; k++) m[k] = ma->mask[k] || mb->mask[k];
    return m;
}

/* B − A of one head on the diverging map, the comparison's one symmetric scale. */
static int draw_diff(CmpWrite *W, const CompareHead *d, const char *file) {
    const TraceMap *ma = &W->a->maps[d->map_a], *mb = &W->b->maps[d->map_b];
    char title[256], full[400], sub[400], path[4096], head[16];
    map_title(ma, d->head, title, sizeof title);
    snprintf(full, sizeof full, "%s — difference B − A", title);
    float S = W->c->scale > 0 ? W->c->scale : 1.0f;
    snprintf(sub, sizeof sub, "red: B puts more weight · blue: A puts more · one scale for every head: ±%.2f · "
             "cells compared position by position (a/b: A's and B's words differ)", (double)S);
    char **rows = pair_labels(ma->queries, mb->queries, ma->Tq), **cols = pair_labels(ma->keys, mb->keys, ma->Tk);
    unsigned char *mask = either_mask(ma, mb);
    int rc = -1;
    if (!rows || !cols || ((ma->mask && mb->mask) && !mask)) {
        errmsg_set(W->err, W->errlen, "out of memory");
        goto done;
    }
    RenderHeatmap hm = {.title = full, .subtitle = sub, .values = d->diff, .rows = d->rows, .cols = d->cols,
                        .row_labels = (const char *const *)rows, .col_labels = (const char *const *)cols,
                        .row_axis = "query", .col_axis = "key", .mask = mask, .mask_label = "0",
                        .cmap = RENDER_CMAP_DIVERGING, .vmin = -S, .vmax = S, .show_values = 1,
                        .highlight_row = outlined_row(W, d->map_a, d->head, 0)};
    snprintf(head, sizeof head, "%d", d->head);
    RenderMetaItem items[] = {{"Title", full}, {"Map", ma->id}, {"Head", head}, {"A", W->s->label_a},
                              {"B", W->s->label_b}};
    RenderMeta meta = {items, 5};
    if (cmp_path(W, file, path, sizeof path) == 0 && render_heatmap(path, &hm, &meta, W->err, W->errlen) == 0) {
        W->n_pictures++;
        rc = 0;
    }
done:
    free_labels(rows, ma->Tq);
    free_labels(cols, ma->Tk);
    free(mask);
    return rc;
}

/* Line i's lines views, A's and B's, in one picture (the two halves are drawn
 * to files of their own first, then joined and removed). */
static int draw_lines(CmpWrite *W, const CompareLine *L, char *file, size_t n) {
    const TraceMap *ma = &W->a->maps[L->map], *mb = &W->b->maps[trace_map_index(W->b, ma->id)];
    char tok[64], ta[300], tb[300], pa[4096], pb[4096], path[4096], title[600], ca[400], cb[400], head[16];
    pictures_safe_name(tok, sizeof tok, ma->queries[L->q_a]);
    snprintf(file, n, "lines.%d-%s.png", L->q_a, tok);
    snprintf(ta, sizeof ta, "A: %s head %d — “%s”", ma->id, L->head, ma->queries[L->q_a]);
    snprintf(tb, sizeof tb, "B: %s head %d — “%s”", mb->id, L->head, mb->queries[L->q_b]);
    snprintf(title, sizeof title, "“%s”: %s head %d on both sides, A beside B\nthe head chosen for A's “%s” "
             "(the model's coreference head when it records one, else the strongest link), drawn for B too",
             ma->queries[L->q_a], ma->id, L->head, ma->queries[L->q_a]);
    short_label(W->s->label_a, W->s->label_b, ca, sizeof ca, 48);
    short_label(W->s->label_b, W->s->label_a, cb, sizeof cb, 48);
    snprintf(head, sizeof head, "%d", L->head);
    RenderMetaItem items[] = {{"Title", title}, {"Map", ma->id}, {"Head", head}, {"A", W->s->label_a},
                              {"B", W->s->label_b}};
    RenderMeta meta = {items, 5};
    if (cmp_path(W, ".lines-a.png", pa, sizeof pa) || cmp_path(W, ".lines-b.png", pb, sizeof pb) ||
        cmp_path(W, file, path, sizeof path))
        return -1;
    const char *parts[2] = {pa, pb}, *caps[2] = {ca, cb};
    int rc = render_lines(pa, ta, (const char *const *)ma->queries, ma->Tq, (const char *const *)ma->keys, ma->Tk,
                          ma->heads[L->head].weights, ma->mask, L->q_a, &meta, W->err, W->errlen) ||
             render_lines(pb, tb, (const char *const *)mb->queries, mb->Tq, (const char *const *)mb->keys, mb->Tk,
                          mb->heads[L->head].weights, mb->mask, L->q_b, &meta, W->err, W->errlen) ||
             render_side_by_side(path, title, parts, caps, 2, &meta, W->err, W->errlen);
    unlink(pa);
    unlink(pb);
    if (rc == 0) W->n_pictures++;
    return rc ? -1 : 0;
}

/* ---- compare.json ---- */

static void json_head(StrBuf *s, const CompareHead *d, const TraceMap *ma, const TraceMap *mb) {
    strbuf_printf(s, "  {\"map\": ");
    strbuf_json_string(s, ma->id);
    strbuf_printf(s, ", \"head\": %d, \"rows\": %d, \"cols\": %d, \"max_abs\": ", d->head, d->rows, d->cols);
    strbuf_json_number(s, d->max_abs);
    strbuf_printf(s, ", \"row\": %d, \"col\": %d, \"query_a\": ", d->row, d->col);
    strbuf_json_string(s, ma->queries[d->row]);
    strbuf_printf(s, ", \"query_b\": ");
    strbuf_json_string(s, mb->queries[d->row]);
    strbuf_printf(s, ", \"key_a\": ");
    strbuf_json_string(s, ma->keys[d->col]);
    strbuf_printf(s, ", \"key_b\": ");
    strbuf_json_string(s, mb->keys[d->col]);
    strbuf_printf(s, ",\n   \"diff\": [");
    for (int i = 0; i < d->rows; i++) {
        strbuf_printf(s, "%s[", i ? ", " : "");
        for (int j = 0; j < d->cols; j++) {
            if (j) strbuf_printf(s, ", ");
            strbuf_json_number(s, d->diff[(long)i * d->cols + j]);
        }
        strbuf_printf(s, "]");
    }
    strbuf_printf(s, "]}");
}

static int write_json(CmpWrite *W) {
    const Comparison *c = W->c;
    StrBuf s = {0};
    strbuf_printf(&s, "{\"format\": \"attnviz-compare\", \"version\": 1, \"what\": ");
    strbuf_json_string(&s, W->s->what);
    strbuf_printf(&s, ",\n \"a\": {\"label\": ");
    strbuf_json_string(&s, W->s->label_a);
    strbuf_printf(&s, ", \"trace\": \"trace-a.json\"},\n \"b\": {\"label\": ");
    strbuf_json_string(&s, W->s->label_b);
    strbuf_printf(&s, ", \"trace\": \"trace-b.json\"},\n \"diff\": \"b - a of the weights, cell by cell\", \"scale\": ");
    strbuf_json_number(&s, c->scale);
    strbuf_printf(&s, ",\n \"not_compared\": ");
    strbuf_json_string(&s, c->skipped);
    strbuf_printf(&s, ",\n \"heads\": [\n");
    for (int i = 0; i < c->n_heads; i++) {
        json_head(&s, &c->heads[i], &W->a->maps[c->heads[i].map_a], &W->b->maps[c->heads[i].map_b]);
        strbuf_printf(&s, "%s\n", i + 1 < c->n_heads ? "," : "");
    }
    int bad = strbuf_printf(&s, " ]\n}\n");
    char path[4096];
    int rc = bad ? errmsg_set(W->err, W->errlen, "out of memory")
                 : cmp_path(W, "compare.json", path, sizeof path) ? -1
                                                                   : file_write_atomic(path, s.buf, s.len, W->err, W->errlen);
    free(s.buf);
    return rc;
}

/* ---- the page ---- */

static const CompareHead *compared_head(const Comparison *c, int map_a, int h) {
    for (int i = 0; i < c->n_heads; i++)
        if (c->heads[i].map_a == map_a && c->heads[i].head == h) return &c->heads[i];
    return NULL;
}

/* Map ia of A: a section, each head's side-by-side picture and, when the
 * shapes agree, its difference. */
static int draw_map(CmpWrite *W, int ia) {
    const TraceMap *ma = &W->a->maps[ia];
    int ib = trace_map_index(W->b, ma->id);
    const TraceMap *mb = ib >= 0 ? &W->b->maps[ib] : NULL;
    char note[400] = "", note_vi[400] = "";
    if (!mb || mb->n_heads != ma->n_heads) {
        html_section(W->pg, ma->id, ma->id, "B has no such map (or other heads): not drawn.",
                     "B không có bản đồ này (hoặc số đầu khác): không vẽ.");
        return 0;
    }
    int same = mb->Tq == ma->Tq && mb->Tk == ma->Tk;
    if (!same) {
        snprintf(note, sizeof note, "Side by side only, no difference: A is %d×%d, B is %d×%d, so a cell of one has no "
                 "cell of the other at the same words.", ma->Tq, ma->Tk, mb->Tq, mb->Tk);
        snprintf(note_vi, sizeof note_vi, "Chỉ đặt cạnh nhau, không có hiệu: A là %d×%d, B là %d×%d, nên một ô của "
                 "bên này không có ô tương ứng ở cùng các từ bên kia.", ma->Tq, ma->Tk, mb->Tq, mb->Tk);
    }
    html_section(W->pg, ma->id, ma->id, note, note_vi);
    for (int h = 0; h < ma->n_heads; h++) {
        char file[200], dfile[200], cap[400];
        snprintf(file, sizeof file, "%s.h%d.png", ma->id, h);
        if (draw_side(W, ia, ib, h, file)) return -1;
        html_figure(W->pg, file, "A beside B: the weights of this head, both on the scale 0–1.",
                    "A bên cạnh B: trọng số của đầu này, cùng thang 0–1.", NULL);
        const CompareHead *d = same ? compared_head(W->c, ia, h) : NULL;
        if (!d) continue;
        snprintf(dfile, sizeof dfile, "%s.h%d.diff.png", ma->id, h);
        if (draw_diff(W, d, dfile)) return -1;
        snprintf(cap, sizeof cap, "B − A, cell by cell at the same positions (labels a/b where the words differ); "
                 "red: B puts more weight, blue: A; one scale ±%.2f for every head. Largest here: %+.2f.",
                 (double)(W->c->scale > 0 ? W->c->scale : 1), (double)d->diff[(long)d->row * d->cols + d->col]);
        html_figure(W->pg, dfile, cap, "B − A, từng ô ở cùng vị trí (nhãn a/b khi hai từ khác nhau); đỏ: B đặt "
                    "nhiều trọng số hơn, xanh: A; một thang đối xứng cho mọi đầu.", NULL);
    }
    return 0;
}

static void page_top(CmpWrite *W) {
    const CompareSpec *s = W->s;
    char sides[1200];
    snprintf(sides, sizeof sides, "%s — %s", s->label_a, s->label_b);
    html_section(W->pg, "sides", "The two sides", sides, NULL);
    html_pre(W->pg, s->summary);
    html_link(W->pg, "trace-a.json", "trace-a.json: every map of A (the trace format)");
    html_link(W->pg, "trace-b.json", "trace-b.json: every map of B");
    html_link(W->pg, "compare.json", "compare.json: every difference matrix B − A");
    if (s->command) html_pre(W->pg, s->command);
}

static int write_traces(CmpWrite *W) {
    char path[4096];
    return cmp_path(W, "trace-a.json", path, sizeof path) || trace_write_json(W->a, path, W->err, W->errlen) ||
                   cmp_path(W, "trace-b.json", path, sizeof path) || trace_write_json(W->b, path, W->err, W->errlen)
               ? -1
               : 0;
}

/* Where the page opens on each side: the head whose largest |Δ| is largest
 * (the summary's first line), at that cell's query row; none compared: the
 * first map and head. */
static void page_focus_most(const Comparison *c, PageFocus *fa, PageFocus *fb) {
    *fa = *fb = (PageFocus){0, 0, -1};
    const CompareHead *best = NULL;
    for (int i = 0; i < c->n_heads; i++)   /* ties: trace order, as rank_heads */
        if (!best || c->heads[i].max_abs > best->max_abs) best = &c->heads[i];
    if (!best) return;
    *fa = (PageFocus){best->map_a, best->head, best->row};
    *fb = (PageFocus){best->map_b, best->head, best->row};
}

int compare_write(const CompareSpec *s, const Comparison *c, const Trace *a, const Trace *b, int *n_pictures,
                  char *err, size_t errlen) {
    HtmlPage pg;
    html_page_begin(&pg, "attnviz compare", s->what);
    CmpWrite W = {s, c, a, b, &pg, 0, err, errlen};
    page_top(&W);
    size_t views_at = pg.len;   /* the interactive views (render/page.h) go under the top */
    int rc = 0;
    if (s->n_lines > 0)
        html_section(&pg, "lines", "Lines views, A beside B", "The same head on both sides: the query word's "
                     "lines, thicker and darker for more weight.", "Cùng một đầu ở hai bên: các đường của từ truy "
                     "vấn, càng đậm càng nhiều trọng số.");
    for (int i = 0; i < s->n_lines && rc == 0; i++) {
        char file[200];
        rc = draw_lines(&W, &s->lines[i], file, sizeof file);
        if (rc == 0) html_figure(&pg, file, "A's lines view beside B's, one head.", "Đường nối của A cạnh B, một đầu.",
                                 NULL);
    }
    for (int i = 0; i < a->n_maps && rc == 0; i++) rc = draw_map(&W, i);
    if (rc == 0) rc = write_traces(&W);
    if (rc == 0) rc = write_json(&W);
    char path[4096];
    if (rc == 0 && cmp_path(&W, "index.html", path, sizeof path) == 0) {
        PageData pd;
        page_data_init(&pd);
        PageFocus fa, fb;
        page_focus_most(c, &fa, &fb);
        rc = page_data_add(&pd, a, "A", "trace-a.json", &fa, err, errlen) ||
             page_data_add(&pd, b, "B", "trace-b.json", &fb, err, errlen);
        if (c->n_heads > 0) page_data_compare(&pd, c->scale);   /* no map of equal shape: no difference tab */
        if (rc == 0) rc = page_write(&pg, views_at, &pd, path, err, errlen);
        else html_page_free(&pg);
        page_data_free(&pd);
    } else {
        html_page_free(&pg);
        rc = -1;
    }
    *n_pictures = W.n_pictures;
    return rc;
}

int compare_side(CompareSide *sd, Net *n, const char *text, const char *to, void (*warn)(const char *, ...),
                 char *err, size_t errlen) {
    memset(sd, 0, sizeof *sd);
    sd->coref = (CorefHead){.layer = -1, .head = -1, .accuracy = -1};
    if (!n->own) {
        if (strcmp(to, "fr"))
            return errmsg_set(err, errlen, "--to is for attnviz's translation models, not a GPT-2, BERT or Llama-family "
                              "model");
        HfRunSpec spec = {.text = text, .trace = HF_TRACE_WEIGHTS, .no_pictures = 1};
        if (hf_run_forward(&sd->run, &n->fam, &spec, err, errlen)) return -1;
        sd->t = &sd->run.t;
        return 0;
    }
    if (!(n->caps & NET_TRANSLATES))
        return errmsg_set(err, errlen, "compare needs an encoder–decoder model; %s is %s", n->mf.path,
                          model_arch_name(n->mf.m.config.arch));
    model_file_coref_head(&n->mf, &sd->coref);
    LookSpec spec = {.want = LOOK_WORLD | LOOK_TRACE | LOOK_FINITE | LOOK_RECORD,
                     .tag = !strcmp(to, "vi") ? VOCAB_2VI : VOCAB_2FR, .coref = &sd->coref};
    if (look_sentence(&sd->look, &n->mf, text, &spec, err, errlen)) return -1;
    if (sd->look.world.n_unknown > 0) warn("words the model was not trained on, read as <unk>: %s", sd->look.world.unknown);
    sd->t = &sd->look.t;
    sd->translation = sd->look.s.translation;
    return 0;
}

void compare_side_free(CompareSide *sd) {
    look_free(&sd->look);
    hf_run_free(&sd->run);
}
