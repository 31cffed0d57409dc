/* demo_snapshots.c — part 9 of `attnviz demo` (see demo.h): the coreference
 * head of part 6 at a few points of training, read from the snapshots file
 * that `attnviz train --snapshots` writes next to the model
 * (PATH minus .safetensors plus .snapshots.json).  Without that file, or with
 * one this version cannot read, the part is skipped with a warning. */
#include "demo/demo_snapshots.h"
#include "core/fileio.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SNAP_MAX_STEPS 8          /* columns: snapshots shown                 */
#define SNAP_MAX_SENT 2           /* rows: the sentences with "it"            */
#define SNAP_MAX_TOKENS 72        /* longest snapshot sentence read           */
#define SNAP_MAX_BYTES (256L << 20)

/* The snapshots of the chosen head: a grid of sentences × training steps. */
typedef struct {
    int nc, nr;                                   /* columns, rows           */
    int pick[SNAP_MAX_STEPS];                     /* snapshot of each column */
    int sentence[SNAP_MAX_SENT], it_row[SNAP_MAX_SENT], ntok[SNAP_MAX_SENT];
    char *toks[SNAP_MAX_SENT][SNAP_MAX_TOKENS];   /* borrowed from the JSON  */
    char rtitle[SNAP_MAX_SENT][96];
    char ctitle[SNAP_MAX_STEPS][48];
    char losses[512];                             /* "step N: loss, …"       */
    float *vals;                                  /* every cell's weights    */
    RenderHeatmap cells[SNAP_MAX_SENT * SNAP_MAX_STEPS];
} SnapGrid;

/* attnviz train writes the loss of step 0 as a bare nan, which is not JSON;
 * read any bare nan / -nan outside strings as null so such files still load. */
static char *nan_to_null(const char *in) {
    size_t n = strlen(in), k = 0;
    char *out = malloc(n + n / 3 + 2);
    if (!out) return NULL;
    int str = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = in[i];
        if (str) {
            out[k++] = ch;
            if (ch == '\\' && i + 1 < n) out[k++] = in[++i];
            else if (ch == '"') str = 0;
            continue;
        }
        if (ch == '"') str = 1;
        size_t skip = !strncmp(in + i, "-nan", 4) ? 4 : !strncmp(in + i, "nan", 3) ? 3 : 0;
        if (skip) { memcpy(out + k, "null", 4); k += 4; i += skip - 1; continue; }
        out[k++] = ch;
    }
    out[k] = '\0';
    return out;
}

static void snapshot_path(const Demo *d, char *buf, size_t n) {
    snprintf(buf, n, "%s", d->mf.path);
    size_t len = strlen(buf), ext = strlen(".safetensors");
    if (len > ext && !strcmp(buf + len - ext, ".safetensors")) buf[len - ext] = '\0';
    size_t l2 = strlen(buf);
    snprintf(buf + l2, n - l2, ".snapshots.json");
}

/* Says on the page and as a warning why part 9 is left out; returns 0. */
static int skip_part(Demo *d, const char *why_en, const char *why_vi) {
    html_raw(&d->page, "<p>");
    html_text(&d->page, why_en);
    html_raw(&d->page, "</p>\n<p lang=\"vi\">");
    html_text(&d->page, why_vi);
    html_raw(&d->page, "</p>\n");
    demo_warn(d, "part 9 skipped: %s", why_en);
    return 0;
}

/* The snapshots file as JSON, or NULL when it is missing or not one. */
static cJSON *load_snapshots(const char *path) {
    char why[512];
    char *text = file_read_all(path, SNAP_MAX_BYTES, NULL, why, sizeof why);
    if (!text) return NULL;
    char *clean = nan_to_null(text);
    free(text);
    cJSON *root = clean ? cJSON_Parse(clean) : NULL;
    free(clean);
    return root;
}

/* Columns: up to SNAP_MAX_STEPS snapshots spread over the list (first and last
 * kept).  Rows: the sentences containing "it" (at most SNAP_MAX_SENT). */
static void choose_cells(SnapGrid *g, const cJSON *sents, int n_snap) {
    g->nc = n_snap < SNAP_MAX_STEPS ? n_snap : SNAP_MAX_STEPS;
    for (int k = 0; k < g->nc; k++) g->pick[k] = g->nc == 1 ? 0 : (int)((long)k * (n_snap - 1) / (g->nc - 1));
    for (int s = 0; s < cJSON_GetArraySize(sents) && g->nr < SNAP_MAX_SENT; s++) {
        const cJSON *tk = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(sents, s), "source_tokens");
        int n = cJSON_GetArraySize(tk), it = -1, r = g->nr;
        if (!cJSON_IsArray(tk) || n < 1 || n > SNAP_MAX_TOKENS) continue;
        for (int j = 0; j < n; j++) {
            const cJSON *w = cJSON_GetArrayItem(tk, j);
            g->toks[r][j] = cJSON_IsString(w) ? w->valuestring : "?";
            if (it < 0 && !strcmp(g->toks[r][j], "it")) it = j;
        }
        if (it < 0) continue;
        const char *last = n >= 3 ? g->toks[r][n - 3] : g->toks[r][0];   /* "… too tired ." <eos> */
        snprintf(g->rtitle[r], sizeof g->rtitle[r], "“…too %s”", last);
        g->ntok[r] = n;
        g->it_row[r] = it;
        g->sentence[g->nr++] = s;
    }
}

/* One cell: the head's weights on row r's sentence at column k's snapshot.  0, or -1 if absent. */
static int fill_cell(SnapGrid *g, const Demo *d, const cJSON *snaps, int r, int k) {
    const cJSON *sn = cJSON_GetArrayItem(snaps, g->pick[k]);
    const cJSON *ss = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sn, "sentences"), g->sentence[r]);
    const cJSON *mp = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ss, "maps"), d->coref_layer);
    const cJSON *hd = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(mp, "heads"), d->coref_head);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(hd, "weights");
    int n = g->ntok[r];
    float *v = g->vals + ((size_t)r * SNAP_MAX_STEPS + k) * SNAP_MAX_TOKENS * SNAP_MAX_TOKENS;
    if (cJSON_GetArraySize(w) != n) return -1;
    for (int i = 0; i < n; i++) {
        const cJSON *row = cJSON_GetArrayItem(w, i);
        if (cJSON_GetArraySize(row) != n) return -1;
        for (int j = 0; j < n; j++) {
            const cJSON *x = cJSON_GetArrayItem(row, j);
            v[i * n + j] = cJSON_IsNumber(x) ? (float)x->valuedouble : 0.0f;
        }
    }
    RenderHeatmap *c = &g->cells[r * g->nc + k];
    memset(c, 0, sizeof *c);
    c->values = v; c->rows = n; c->cols = n;
    c->row_labels = (const char *const *)g->toks[r]; c->col_labels = (const char *const *)g->toks[r];
    c->cmap = RENDER_CMAP_VIRIDIS; c->vmax = 1; c->show_values = 0; c->highlight_row = g->it_row[r];
    if (r == 0) {   /* the column's title and loss */
        const cJSON *step = cJSON_GetObjectItemCaseSensitive(sn, "step");
        const cJSON *loss = cJSON_GetObjectItemCaseSensitive(sn, "loss");
        snprintf(g->ctitle[k], sizeof g->ctitle[k], "step %ld", cJSON_IsNumber(step) ? (long)step->valuedouble : -1L);
        size_t len = strlen(g->losses);
        if (cJSON_IsNumber(loss) && isfinite(loss->valuedouble))
            snprintf(g->losses + len, sizeof g->losses - len, "%s%s: %.2f", len ? ", " : "", g->ctitle[k],
                     loss->valuedouble);
    }
    return 0;
}

/* Every cell; 0, or -1 when the file lacks the head or the sentences. */
static int fill_cells(SnapGrid *g, const Demo *d, const cJSON *snaps) {
    if (!g->vals || g->nr == 0) return -1;
    for (int r = 0; r < g->nr; r++)
        for (int k = 0; k < g->nc; k++)
            if (fill_cell(g, d, snaps, r, k)) return -1;
    return 0;
}

/* The picture with its captions. */
static int draw_grid(Demo *d, const SnapGrid *g) {
    const char *ct[SNAP_MAX_STEPS], *rt[SNAP_MAX_SENT];
    for (int k = 0; k < g->nc; k++) ct[k] = g->ctitle[k];
    for (int r = 0; r < g->nr; r++) rt[r] = g->rtitle[r];
    char title[256], cap[2048], capvi[2048];
    snprintf(title, sizeof title, "encoder layer %d · head %d%s during training (row “it” outlined)", d->coref_layer,
             d->coref_head, d->coref_taught ? " (taught)" : "");
    snprintf(cap, sizeof cap,
             "The coreference head of part 6 (encoder layer %d, head %d) at %d points of training, on the two "
             "sentences; the row of “it” is outlined. At step 0 the weights are those of a random model. "
             "Training loss at those points: %s.%s",
             d->coref_layer, d->coref_head, g->nc, g->losses[0] ? g->losses : "not recorded",
             d->coref_taught ? " This head is trained with the gold antecedent as a target, so these pictures show it "
                               "being taught, and how fast the link becomes sharp." : "");
    snprintf(capvi, sizeof capvi,
             "Head đồng tham chiếu của phần 6 (encoder lớp %d, head %d) tại %d thời điểm huấn luyện, trên hai "
             "câu; hàng của “it” được viền. Ở bước 0 trọng số là của mô hình ngẫu nhiên. Loss huấn luyện tại các "
             "thời điểm đó: %s.%s",
             d->coref_layer, d->coref_head, g->nc, g->losses[0] ? g->losses : "không ghi lại",
             d->coref_taught ? " Head này được huấn luyện với tiền ngữ đúng làm mục tiêu, nên các hình cho thấy nó được "
                               "dạy, và liên kết sắc nét nhanh thế nào." : "");
    return demo_grid(d, "p9-training-snapshots.png", title, g->cells, g->nr, g->nc, rt, ct, cap, capvi,
                     "attnviz train --snapshots …   (see docs/model-card.md), then attnviz demo");
}

int demo_head_learning(Demo *d) {
    char path[4200], msg[4600];
    snapshot_path(d, path, sizeof path);
    html_section(&d->page, "p9", "9. Watching a head learn",
                 "While the model was trained, the encoder's attention on the coreference sentences was saved at "
                 "a few points; here is the coreference head of part 6 at each of them.",
                 "Trong lúc huấn luyện, attention của encoder trên các câu đồng tham chiếu được lưu lại ở vài thời "
                 "điểm; đây là head đồng tham chiếu của phần 6 tại mỗi thời điểm đó.");
    FILE *probe = fopen(path, "rb");
    if (!probe) {
        snprintf(msg, sizeof msg, "No training snapshots next to the model (%s); this part is skipped. They are "
                 "written by attnviz train --snapshots.", path);
        return skip_part(d, msg, "Không có ảnh chụp quá trình huấn luyện bên cạnh mô hình; phần này được bỏ qua. "
                                 "Chúng được ghi bởi attnviz train --snapshots.");
    }
    fclose(probe);
    cJSON *root = load_snapshots(path);
    const cJSON *sents = cJSON_GetObjectItemCaseSensitive(root, "sentences");
    const cJSON *snaps = cJSON_GetObjectItemCaseSensitive(root, "snapshots");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "attnviz-snapshots") || !cJSON_IsArray(sents) ||
        !cJSON_IsArray(snaps) || cJSON_GetArraySize(snaps) == 0) {
        cJSON_Delete(root);
        snprintf(msg, sizeof msg, "%s is not an attnviz-snapshots file this version reads; this part is skipped.", path);
        return skip_part(d, msg, "Tệp ảnh chụp huấn luyện không đọc được; phần này được bỏ qua.");
    }
    static SnapGrid g;   /* large (token pointers, titles); one per process */
    memset(&g, 0, sizeof g);
    choose_cells(&g, sents, cJSON_GetArraySize(snaps));
    g.vals = calloc((size_t)SNAP_MAX_SENT * SNAP_MAX_STEPS * SNAP_MAX_TOKENS * SNAP_MAX_TOKENS, sizeof(float));
    int rc;
    if (fill_cells(&g, d, snaps) != 0) {
        snprintf(msg, sizeof msg, "%s does not hold the coreference sentences with encoder layer %d head %d; this part "
                 "is skipped.", path, d->coref_layer, d->coref_head);
        rc = skip_part(d, msg, "Tệp ảnh chụp huấn luyện không có dữ liệu cần thiết; phần này được bỏ qua.");
    } else {
        rc = draw_grid(d, &g);
    }
    free(g.vals);
    cJSON_Delete(root);
    return rc;
}
