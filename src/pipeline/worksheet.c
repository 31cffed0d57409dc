/* worksheet.c — see worksheet.h.  An exercise becomes a list of matrices
 * (WsMatrix: the given Q, K, V and mask, then one matrix per step), each with
 * the text of its cells on the worksheet (blank) and in the key; the PNGs
 * (render/sheet.h) and the A4 page are drawn from that one list. */
#include "pipeline/worksheet.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/rng.h"
#include "core/strbuf.h"
#include "render/sheet.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WS_CELL 32                       /* bytes of one cell's text */
#define WS_MATRICES 9                    /* Q, K, V, M, 5 steps      */
#define N_MAX WORKSHEET_MAX_SIZE

/* The words of each language (static strings). */
typedef struct {
    const char *title, *key_title, *notes, *exercise, *tokens, *given, *steps, *q, *k, *v, *m, *m_none;
    const char *scores, *scaled, *masked, *weights, *output, *rounding, *html_key_note, *files;
    const char *words[N_MAX];
} WsText;

static const WsText ws_en = {
    "Attention by hand", "Attention by hand — answer key",
    "Fill every empty box.  Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k + M) · V, with d_k = 4, so √d_k = 2.\n"
    "Round the weights to 2 decimals; compute the output from them and round it to 2 decimals too.",
    "Exercise %d", "tokens", "Given", "Steps",
    "Q (queries)", "K (keys)", "V (values)", "M (mask: 0 = may look, −∞ = hidden)", "step 3 (mask) is skipped: no mask in this exercise, every query sees every key",
    "1. scores = Q·Kᵀ", "2. scaled = scores ÷ √d_k", "3. masked = scaled + M", "4. weights = softmax(row), 2 decimals",
    "5. output = weights · V",
    "The key's weights are the engine's, rounded to 2 decimals; its output is computed from the unrounded weights, so "
    "an answer from rounded weights may differ by 0.01–0.02.",
    "The answers below are computed by attnviz's attention engine (src/core/attention.c).", "Files",
    {"I", "saw", "a", "cat", "on", "the", "big", "mat"}};

static const WsText ws_vi = {
    "Tính attention bằng tay", "Tính attention bằng tay — đáp án",
    "Điền vào mọi ô trống.  Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k + M) · V, với d_k = 4, nên √d_k = 2.\n"
    "Làm tròn trọng số đến 2 chữ số thập phân; tính đầu ra từ các trọng số đó và cũng làm tròn đến 2 chữ số.",
    "Bài %d", "các token", "Cho trước", "Các bước",
    "Q (truy vấn)", "K (khóa)", "V (giá trị)", "M (mặt nạ: 0 = được nhìn, −∞ = bị che)",
    "bước 3 (mặt nạ) được bỏ qua: bài này không có mặt nạ, mọi truy vấn nhìn thấy mọi khóa",
    "1. điểm = Q·Kᵀ", "2. chia tỉ lệ = điểm ÷ √d_k", "3. che = chia tỉ lệ + M", "4. trọng số = softmax(hàng), 2 chữ số",
    "5. đầu ra = trọng số · V",
    "Trọng số trong đáp án là của bộ máy, làm tròn đến 2 chữ số; đầu ra được tính từ trọng số chưa làm tròn, nên "
    "kết quả tính từ trọng số đã làm tròn có thể lệch 0,01–0,02.",
    "Đáp án dưới đây do bộ máy attention của attnviz tính (src/core/attention.c).", "Tệp",
    {"tôi", "thấy", "một", "con", "mèo", "trên", "tấm", "thảm"}};

/* One matrix of an exercise, as the sheet and the key show it. */
typedef struct {
    const char *caption;
    int rows, cols, given;
    const char *const *row_labels, *const *col_labels;
    char sheet[N_MAX * N_MAX][WS_CELL];   /* (rows, cols) "" = a box to fill */
    char key[N_MAX * N_MAX][WS_CELL];
} WsMatrix;

typedef struct {
    WsMatrix m[WS_MATRICES];
    int n;
    char heading[160];
    char heading_png[400];   /* the heading, then (no mask) the line on step 3 after a '\n' */
} WsExerciseView;

static const char *dim_labels[] = {"1", "2", "3", "4"};

static const WsText *ws_text(const Worksheet *w) { return w->spec.vi ? &ws_vi : &ws_en; }

/* A number as a student writes it: "3", "−1.5", "0.25"; decimals > 0 fixes
 * them ("0.50"); −∞ for a masked cell.  The minus is U+2212. */
static void ws_number(char *out, size_t n, float x, int decimals) {
    if (isinf(x)) { snprintf(out, n, "%s∞", x < 0 ? "−" : ""); return; }
    char tmp[24];
    if (decimals > 0) snprintf(tmp, sizeof tmp, "%.*f", decimals, (double)x);
    else snprintf(tmp, sizeof tmp, "%g", (double)x);
    if (!strcmp(tmp, "-0") || !strncmp(tmp, "-0.00", 6)) memmove(tmp, tmp + 1, strlen(tmp));
    if (tmp[0] == '-') snprintf(out, n, "−%s", tmp + 1);
    else snprintf(out, n, "%s", tmp);
}

/* 1 if some query row sees two keys or more and gives them all the same
 * score (a row of equal weights teaches little). */
static int has_flat_row(const WorksheetExercise *e) {
    for (int i = 0; i < e->n; i++) {
        int n_seen = 0, flat = 1;
        float first = 0;
        for (int j = 0; j < e->n; j++) {
            if (e->masked && !e->mask[i * e->n + j]) continue;
            float s = 0;
            for (int d = 0; d < WORKSHEET_DK; d++) s += e->q[i * WORKSHEET_DK + d] * e->k[j * WORKSHEET_DK + d];
            if (n_seen++ == 0) first = s;
            else if (s != first) flat = 0;
        }
        if (n_seen >= 2 && flat) return 1;
    }
    return 0;
}

/* Q and K in −1..1, V in 0..3; drawn again (up to 50 times) while a row is flat. */
static void draw_exercise(WorksheetExercise *e, uint64_t *state, int causal) {
    e->masked = causal;
    attn_causal_mask(e->mask, e->n, e->n);
    for (int tries = 0; tries < 50; tries++) {
        for (int i = 0; i < e->n * WORKSHEET_DK; i++) e->q[i] = (float)(rng_splitmix_below(state, 3) - 1);
        for (int i = 0; i < e->n * WORKSHEET_DK; i++) e->k[i] = (float)(rng_splitmix_below(state, 3) - 1);
        if (!has_flat_row(e)) break;
    }
    for (int i = 0; i < e->n * WORKSHEET_DV; i++) e->v[i] = (float)rng_splitmix_below(state, 4);
}

int worksheet_make(Worksheet *w, const WorksheetSpec *spec, char *err, size_t errlen) {
    memset(w, 0, sizeof *w);
    if (spec->size < 1 || spec->size > N_MAX)
        return errmsg_set(err, errlen, "worksheet size %d: use 1..%d tokens", spec->size, N_MAX);
    w->spec = *spec;
    uint64_t state = spec->seed ^ 0xA77E5EEDULL;   /* the worksheet's own stream of the seed */
    for (int x = 0; x < WORKSHEET_EXERCISES; x++) {
        WorksheetExercise *e = &w->ex[x];
        e->n = spec->size;
        for (int i = 0; i < e->n; i++) e->tokens[i] = ws_text(w)->words[(i + 3 * x) % N_MAX];
        draw_exercise(e, &state, spec->causal);
        float out[N_MAX * WORKSHEET_DV];
        if (attn_steps_alloc(&e->st, e->n, e->n, WORKSHEET_DV)) return errmsg_set(err, errlen, "out of memory");
        w->n_ex = x + 1;
        AttnHead a = {.q = e->q, .ldq = WORKSHEET_DK, .k = e->k, .ldk = WORKSHEET_DK, .v = e->v, .ldv = WORKSHEET_DV,
                      .mask = e->masked ? e->mask : NULL, .mask_fill = -INFINITY, .scale = 1.0f / sqrtf(WORKSHEET_DK),
                      .Tq = e->n, .Tk = e->n, .D = WORKSHEET_DK, .Dv = WORKSHEET_DV, .out = out, .ldo = WORKSHEET_DV,
                      .steps = &e->st};
        if (attention_forward(&a) < 0) return errmsg_set(err, errlen, "out of memory");
    }
    return 0;
}

void worksheet_free(Worksheet *w) {
    if (!w) return;
    for (int x = 0; x < WORKSHEET_EXERCISES; x++) attn_steps_free(&w->ex[x].st);
    w->n_ex = 0;
}

/* ---- the matrices of an exercise ---- */

static WsMatrix *ws_add(WsExerciseView *V, const char *caption, int rows, int cols, int given) {
    WsMatrix *m = &V->m[V->n++];
    memset(m, 0, sizeof *m);
    m->caption = caption;
    m->rows = rows;
    m->cols = cols;
    m->given = given;
    return m;
}

/* values (rows, cols) into the key, and into the sheet too when it is given. */
static void ws_fill(WsMatrix *m, const float *values, int decimals) {
    for (int i = 0; i < m->rows * m->cols; i++) {
        ws_number(m->key[i], WS_CELL, values[i], decimals);
        if (m->given) memcpy(m->sheet[i], m->key[i], WS_CELL);
    }
}

static void ws_view(WsExerciseView *V, const Worksheet *w, int x) {
    const WsText *T = ws_text(w);
    const WorksheetExercise *e = &w->ex[x];
    int n = e->n;
    const char *const *tok = e->tokens;
    memset(V, 0, sizeof *V);
    int len = snprintf(V->heading, sizeof V->heading, T->exercise, x + 1);
    len += snprintf(V->heading + len, sizeof V->heading - len, " — %s:", T->tokens);
    for (int i = 0; i < n; i++) len += snprintf(V->heading + len, sizeof V->heading - len, " %s", tok[i]);
    snprintf(V->heading_png, sizeof V->heading_png, "%s%s%s", V->heading, e->masked ? "" : "\n",
             e->masked ? "" : T->m_none);
    WsMatrix *m = ws_add(V, T->q, n, WORKSHEET_DK, 1);
    m->row_labels = tok, m->col_labels = dim_labels, ws_fill(m, e->q, 0);
    m = ws_add(V, T->k, n, WORKSHEET_DK, 1);
    m->row_labels = tok, m->col_labels = dim_labels, ws_fill(m, e->k, 0);
    m = ws_add(V, T->v, n, WORKSHEET_DV, 1);
    m->row_labels = tok, m->col_labels = dim_labels, ws_fill(m, e->v, 0);
    if (e->masked) {
        float M[N_MAX * N_MAX];
        for (int i = 0; i < n * n; i++) M[i] = e->mask[i] ? 0.0f : -INFINITY;
        m = ws_add(V, T->m, n, n, 1);
        m->row_labels = tok, m->col_labels = tok, ws_fill(m, M, 0);
    }
    const char *steps[5] = {T->scores, T->scaled, T->masked, T->weights, T->output};
    const float *vals[5] = {e->st.scores, e->st.scaled, e->st.masked, e->st.weights, e->st.output};
    for (int s = 0; s < 5; s++) {
        if (s == 2 && !e->masked) continue;
        m = ws_add(V, steps[s], n, s == 4 ? WORKSHEET_DV : n, 0);
        m->row_labels = tok;
        m->col_labels = s == 4 ? dim_labels : tok;
        ws_fill(m, vals[s], s >= 3 ? 2 : 0);
    }
}

/* ---- worksheet.png and key.png ---- */

static int ws_write_png(const Worksheet *w, const WsExerciseView *views, int key, const char *path, char *err,
                        size_t errlen) {
    const WsText *T = ws_text(w);
    RenderSheetBlock blocks[WORKSHEET_EXERCISES * (WS_MATRICES + 1)];
    const char *cells[WORKSHEET_EXERCISES][WS_MATRICES][N_MAX * N_MAX];
    int nb = 0;
    for (int x = 0; x < w->n_ex; x++) {
        const WsExerciseView *V = &views[x];
        blocks[nb++] = (RenderSheetBlock){.caption = V->heading_png};
        for (int i = 0; i < V->n; i++) {
            const WsMatrix *m = &V->m[i];
            for (int c = 0; c < m->rows * m->cols; c++) cells[x][i][c] = key ? m->key[c] : m->sheet[c];
            blocks[nb++] = (RenderSheetBlock){m->caption, m->rows, m->cols, cells[x][i], m->row_labels,
                                              m->col_labels, m->given, i > 0 && !m->given && V->m[i - 1].given};
        }
    }
    char notes[1024];
    snprintf(notes, sizeof notes, "%s%s%s", T->notes, key ? "\n" : "", key ? T->rounding : "");
    RenderMetaItem items[] = {{"Title", key ? T->key_title : T->title}, {"Command", w->spec.command ? w->spec.command : ""}};
    RenderMeta meta = {items, 2};
    return render_sheet(path, key ? T->key_title : T->title, notes, blocks, nb, &meta, err, errlen);
}

/* ---- worksheet.html ---- */

static void html_escape(StrBuf *s, const char *t) {
    for (; t && *t; t++) {
        if (*t == '<') strbuf_printf(s, "&lt;");
        else if (*t == '>') strbuf_printf(s, "&gt;");
        else if (*t == '&') strbuf_printf(s, "&amp;");
        else if (*t == '"') strbuf_printf(s, "&quot;");
        else strbuf_printf(s, "%c", *t);
    }
}

static void html_matrix(StrBuf *s, const WsMatrix *m, int key) {
    strbuf_printf(s, "<table class=\"m\"><caption>");
    html_escape(s, m->caption);
    strbuf_printf(s, "</caption>\n<tr><th></th>");
    for (int j = 0; j < m->cols; j++) {
        strbuf_printf(s, "<th>");
        html_escape(s, m->col_labels[j]);
        strbuf_printf(s, "</th>");
    }
    strbuf_printf(s, "</tr>\n");
    for (int i = 0; i < m->rows; i++) {
        strbuf_printf(s, "<tr><th>");
        html_escape(s, m->row_labels[i]);
        strbuf_printf(s, "</th>");
        for (int j = 0; j < m->cols; j++) {
            const char *c = key ? m->key[i * m->cols + j] : m->sheet[i * m->cols + j];
            strbuf_printf(s, "<td%s>", m->given ? " class=\"given\"" : *c ? "" : " class=\"blank\"");
            html_escape(s, c);
            strbuf_printf(s, "</td>");
        }
        strbuf_printf(s, "</tr>\n");
    }
    strbuf_printf(s, "</table>\n");
}

/* The exercises once: as the sheet (key 0) or the answer key (key 1). */
static void html_part(StrBuf *s, const Worksheet *w, const WsExerciseView *views, int key) {
    const WsText *T = ws_text(w);
    strbuf_printf(s, "<section class=\"%s\">\n<h1>", key ? "key" : "sheet");
    html_escape(s, key ? T->key_title : T->title);
    strbuf_printf(s, "</h1>\n<p class=\"notes\">");
    html_escape(s, T->notes);
    if (key) {
        strbuf_printf(s, "<br>");
        html_escape(s, T->rounding);
        strbuf_printf(s, "<br>");
        html_escape(s, T->html_key_note);
    }
    strbuf_printf(s, "</p>\n");
    for (int x = 0; x < w->n_ex; x++) {
        const WsExerciseView *V = &views[x];
        strbuf_printf(s, "<div class=\"ex\"><h2>");
        html_escape(s, V->heading);
        strbuf_printf(s, "</h2>\n");
        if (!w->ex[x].masked) {   /* before the steps, so 1, 2, 4, 5 read as meant */
            strbuf_printf(s, "<p class=\"notes\">");
            html_escape(s, T->m_none);
            strbuf_printf(s, "</p>\n");
        }
        strbuf_printf(s, "<div class=\"row\">");
        for (int i = 0; i < V->n; i++) {
            if (i > 0 && !V->m[i].given && V->m[i - 1].given) strbuf_printf(s, "</div>\n<div class=\"row\">");
            html_matrix(s, &V->m[i], key);
        }
        strbuf_printf(s, "</div></div>\n");
    }
    strbuf_printf(s, "</section>\n");
}

static int ws_write_html(const Worksheet *w, const WsExerciseView *views, const char *path, char *err, size_t errlen) {
    const WsText *T = ws_text(w);
    StrBuf s = {0};
    int bad = strbuf_printf(&s, "<!DOCTYPE html>\n<html lang=\"%s\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
                            w->spec.vi ? "vi" : "en");
    html_escape(&s, T->title);
    bad |= strbuf_printf(&s, "</title>\n<style>\n"
        "@page{size:A4;margin:14mm}\n"
        "body{font-family:'DejaVu Sans',Verdana,sans-serif;font-size:10.5pt;color:#111;max-width:182mm;margin:1em auto}\n"
        "h1{font-size:16pt;margin:0 0 .3em} h2{font-size:12pt;margin:1em 0 .4em}\n"
        ".notes{margin:.3em 0 .6em}\n"
        ".row{margin:.2em 0}\n"
        "table.m{display:inline-table;border-collapse:collapse;margin:0 1.2em .8em 0;vertical-align:top}\n"
        "table.m caption{caption-side:top;text-align:left;font-weight:bold;padding-bottom:.2em;white-space:nowrap}\n"
        "table.m th{font-weight:normal;color:#555;font-size:8.5pt;padding:0 .3em}\n"
        "table.m td{border:1px solid #222;width:3.1em;height:1.75em;text-align:center;padding:0}\n"
        "td.given{background:#eef1f4}\n"
        "table.m{break-inside:avoid;page-break-inside:avoid} h2{break-after:avoid;page-break-after:avoid}\n"
        ".key{break-before:page;page-break-before:always}\n"
        ".files{margin-top:2em;color:#555} @media print{.files{display:none}}\n"
        "</style>\n</head>\n<body>\n");
    html_part(&s, w, views, 0);
    html_part(&s, w, views, 1);
    bad |= strbuf_printf(&s, "<p class=\"files\">%s: <a href=\"worksheet.png\">worksheet.png</a> · "
                         "<a href=\"key.png\">key.png</a> · <a href=\"worksheet.json\">worksheet.json</a>", T->files);
    if (w->spec.command) {
        bad |= strbuf_printf(&s, " · <code>");
        html_escape(&s, w->spec.command);
        bad |= strbuf_printf(&s, "</code>");
    }
    bad |= strbuf_printf(&s, "</p>\n</body>\n</html>\n");
    int rc = bad ? errmsg_set(err, errlen, "out of memory") : file_write_atomic(path, s.buf, s.len, err, errlen);
    free(s.buf);
    return rc;
}

/* ---- worksheet.json ---- */

static void json_matrix(StrBuf *s, const float *x, int rows, int cols) {
    strbuf_printf(s, "[");
    for (int i = 0; i < rows; i++) {
        strbuf_printf(s, "%s[", i ? ", " : "");
        for (int j = 0; j < cols; j++) {
            if (j) strbuf_printf(s, ", ");
            strbuf_json_number(s, x[i * cols + j]);
        }
        strbuf_printf(s, "]");
    }
    strbuf_printf(s, "]");
}

static void json_exercise(StrBuf *s, const WorksheetExercise *e) {
    int n = e->n;
    strbuf_printf(s, "    {\"tokens\": [");
    for (int i = 0; i < n; i++) {
        if (i) strbuf_printf(s, ", ");
        strbuf_json_string(s, e->tokens[i]);
    }
    strbuf_printf(s, "], \"d_k\": %d,\n     \"q\": ", WORKSHEET_DK);
    json_matrix(s, e->q, n, WORKSHEET_DK);
    strbuf_printf(s, ",\n     \"k\": ");
    json_matrix(s, e->k, n, WORKSHEET_DK);
    strbuf_printf(s, ",\n     \"v\": ");
    json_matrix(s, e->v, n, WORKSHEET_DV);
    strbuf_printf(s, ",\n     \"mask\": ");
    if (!e->masked) strbuf_printf(s, "null");
    for (int i = 0; e->masked && i < n; i++) {
        strbuf_printf(s, "%s", i ? ", [" : "[[");
        for (int j = 0; j < n; j++) strbuf_printf(s, "%s%d", j ? ", " : "", e->mask[i * n + j]);
        strbuf_printf(s, "]%s", i == n - 1 ? "]" : "");
    }
    strbuf_printf(s, ",\n     \"answers\": {\"scores\": ");
    json_matrix(s, e->st.scores, n, n);
    strbuf_printf(s, ",\n                 \"scaled\": ");
    json_matrix(s, e->st.scaled, n, n);
    strbuf_printf(s, ",\n                 \"weights\": ");
    json_matrix(s, e->st.weights, n, n);
    strbuf_printf(s, ",\n                 \"output\": ");
    json_matrix(s, e->st.output, n, WORKSHEET_DV);
    strbuf_printf(s, "}}");
}

static int ws_write_json(const Worksheet *w, const char *path, char *err, size_t errlen) {
    StrBuf s = {0};
    strbuf_printf(&s, "{\"format\": \"attnviz-worksheet\", \"version\": 1, \"seed\": %llu, \"size\": %d, "
                  "\"mask\": \"%s\", \"lang\": \"%s\",\n \"exercises\": [\n", (unsigned long long)w->spec.seed,
                  w->spec.size, w->spec.causal ? "causal" : "none", w->spec.vi ? "vi" : "en");
    for (int x = 0; x < w->n_ex; x++) {
        json_exercise(&s, &w->ex[x]);
        strbuf_printf(&s, "%s\n", x + 1 < w->n_ex ? "," : "");
    }
    int bad = strbuf_printf(&s, " ]\n}\n");
    int rc = bad ? errmsg_set(err, errlen, "out of memory") : file_write_atomic(path, s.buf, s.len, err, errlen);
    free(s.buf);
    return rc;
}

int worksheet_write(const Worksheet *w, const char *dir, char *err, size_t errlen) {
    WsExerciseView *views = calloc(WORKSHEET_EXERCISES, sizeof *views);
    if (!views) return errmsg_set(err, errlen, "out of memory");
    for (int x = 0; x < w->n_ex; x++) ws_view(&views[x], w, x);
    char path[4096];
    int rc = path_join(path, sizeof path, dir, "worksheet.png", err, errlen) ||
             ws_write_png(w, views, 0, path, err, errlen) || path_join(path, sizeof path, dir, "key.png", err, errlen) ||
             ws_write_png(w, views, 1, path, err, errlen) ||
             path_join(path, sizeof path, dir, "worksheet.html", err, errlen) ||
             ws_write_html(w, views, path, err, errlen) ||
             path_join(path, sizeof path, dir, "worksheet.json", err, errlen) || ws_write_json(w, path, err, errlen);
    free(views);
    return rc ? -1 : 0;
}
