/* pictures_explain.c — the pictures that test what a map claims (pictures.h):
 * for one query token its raw weights beside norm-weighted attention and
 * rollout (model/aggregate.h), and head importance by knock-out
 * (pipeline/importance.h). */
#include "pipeline/pictures_explain.h"
#include "core/errmsg.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- raw weights | norm-weighted | rollout of query token q ---- */

/* The encoder self-attention maps of the trace, in layer order: their indices. */
static int encoder_maps(const Trace *t, int *idx, int cap) {
    int n = 0;
    for (int i = 0; i < t->n_maps && n < cap; i++)
        if (!strcmp(t->maps[i].stack, "encoder") && !strcmp(t->maps[i].kind, "self")) idx[n++] = i;
    return n;
}

int pictures_draw_aggregate(const char *path, const Trace *t, int q, const float *rollout, const char *ablated,
                            const char *title, const RenderMeta *meta, char *err, size_t errlen) {
    int idx[64], E = encoder_maps(t, idx, 64);
    if (!rollout || E == 0 || !t->maps[idx[0]].heads[0].norm_weighted || q < 0 || q >= t->maps[idx[0]].Tq)
        return errmsg_set(err, errlen, "no encoder maps with norm-weighted attention and rollout for token %d", q);
    int H = t->maps[idx[0]].n_heads, S = t->maps[idx[0]].Tk, R = E * H;
    float *raw = malloc((size_t)R * S * sizeof(float)), *nw = malloc((size_t)R * S * sizeof(float));
    float *ro = malloc((size_t)E * S * sizeof(float));
    unsigned char *mask = malloc((size_t)R * S);
    char (*lab)[32] = malloc((size_t)(R + E) * sizeof *lab);   /* "L%d h%d ✕": any two ints */
    const char **rl = malloc((size_t)(R + E) * sizeof(char *));
    if (!raw || !nw || !ro || !mask || !lab || !rl) {
        free(raw); free(nw); free(ro); free(mask); free(lab); free(rl);
        return errmsg_set(err, errlen, "out of memory");
    }
    for (int l = 0; l < E; l++) {
        const TraceMap *m = &t->maps[idx[l]];
        for (int h = 0; h < H; h++) {
            int r = l * H + h;
            double sum = 0;
            for (int j = 0; j < S; j++) sum += m->heads[h].norm_weighted[(size_t)q * S + j];
            for (int j = 0; j < S; j++) {
                raw[(size_t)r * S + j] = m->heads[h].weights[(size_t)q * S + j];
                nw[(size_t)r * S + j] = sum > 0 ? (float)(m->heads[h].norm_weighted[(size_t)q * S + j] / sum) : 0.0f;
                mask[(size_t)r * S + j] = m->mask ? m->mask[(size_t)q * S + j] : 1;
            }
            snprintf(lab[r], sizeof lab[r], "L%d h%d%s", l, h, pictures_list_has(ablated, m->id, h) ? " ✕" : "");
            rl[r] = lab[r];
        }
        for (int j = 0; j < S; j++) ro[(size_t)l * S + j] = rollout[((size_t)l * S + q) * S + j];
        snprintf(lab[R + l], sizeof lab[R + l], "after L%d", l);
        rl[R + l] = lab[R + l];
    }
    const TraceMap *m0 = &t->maps[idx[0]];
    RenderHeatmap p[3];
    const char *titles[3] = {"weights α (each encoder head)", "norm-weighted ‖α·f(x)‖, as shares of each row",
                             "rollout: ½A+½I, heads averaged, × layers"};
    const float *vals[3] = {raw, nw, ro};
    for (int k = 0; k < 3; k++) {
        p[k] = (RenderHeatmap){0};
        p[k].title = titles[k];
        p[k].values = vals[k];
        p[k].rows = k < 2 ? R : E;
        p[k].cols = S;
        p[k].row_labels = k < 2 ? rl : rl + R;
        p[k].col_labels = (const char *const *)m0->keys;
        p[k].row_axis = k < 2 ? "layer · head" : "rolled out";
        p[k].col_axis = "key";
        p[k].mask = k < 2 ? mask : NULL;
        p[k].mask_label = "0";
        p[k].cmap = RENDER_CMAP_VIRIDIS;
        p[k].vmin = 0; p[k].vmax = 1;
        p[k].show_values = -1;
        p[k].highlight_row = -1;
    }
    int rc = render_panels(path, title, p, 3, 0, meta, err, errlen);
    free(raw); free(nw); free(ro); free(mask); free(lab); free(rl);
    return rc;
}

int pictures_aggregate(Show *w, int q) {
    const Trace *t = w->t;
    int idx[64];
    if (!w->ps->rollout || encoder_maps(t, idx, 64) == 0 || !t->maps[idx[0]].heads[0].norm_weighted ||
        q >= t->maps[idx[0]].Tq)
        return 0;
    const char *word = t->maps[idx[0]].queries[q];
    char file[256], title[512], safe[32], cap[1024], capvi[1024], path[4096];
    pictures_safe_name(safe, sizeof safe, word);
    snprintf(file, sizeof file, "explain.%d-%s.png", q, safe);
    snprintf(title, sizeof title, "“%s” in the encoder: weights, what the vectors add, and rollout · %s", word, w->s->text);
    pictures_path(w, file, path, sizeof path);
    RenderMetaItem items[8];
    RenderMeta meta = pictures_meta(w, items, title, NULL, NULL, NULL);
    if (pictures_draw_aggregate(path, t, q, w->ps->rollout, w->ps->ablated, title, &meta, w->err, w->errlen) ||
        trace_add_image(w->t, file))
        return -1;
    snprintf(cap, sizeof cap,
             "Three answers to “what does %s look at?”. Left: each encoder head's weights α (what the maps show). Middle: "
             "norm-weighted attention ‖α·f(x)‖ (Kobayashi et al. 2020), the size of what each key really adds through the "
             "head, as a share of the row: a big weight on a key whose vector is small adds little. Right: attention rollout "
             "(Abnar & Zuidema 2020), the weights of all heads and layers multiplied through, with the residual path as ½I. "
             "None of the three says what the model needs; knock-outs (run --importance) test that.", word);
    snprintf(capvi, sizeof capvi,
             "Ba câu trả lời cho “%s nhìn vào đâu?”. Trái: trọng số α của từng head encoder. Giữa: chú ý theo chuẩn "
             "‖α·f(x)‖ (Kobayashi và cộng sự 2020), độ lớn phần mỗi key thực sự đóng góp, tính theo tỉ lệ của hàng. "
             "Phải: attention rollout (Abnar & Zuidema 2020), nhân trọng số qua mọi lớp, coi đường tắt (residual) là ½I. "
             "Cả ba đều chưa cho biết mô hình cần gì; loại bỏ head (run --importance) mới kiểm chứng được.", word);
    html_figure(w->pg, file, cap, capvi, NULL);
    return 0;
}

/* ---- head importance by knock-out ---- */

static const char *const kind_ids[3] = {"encoder self", "decoder masked self", "cross"};
static const char *const kind_short[3] = {"E", "D", "X"};

int pictures_draw_importance(const char *path, const Importance *im, const char *title, const RenderMeta *meta,
                             char *err, size_t errlen) {
    int H = im->H, n = 0;
    float *vals = malloc((size_t)3 * im->Lmax * H * sizeof(float));
    unsigned char *mask = malloc((size_t)3 * im->Lmax * H);
    char (*lab)[24] = malloc((size_t)(im->Lmax + H) * sizeof *lab);   /* "layer %d", "head %d": any int */
    const char **rl = malloc((size_t)(im->Lmax + H) * sizeof(char *));
    if (!vals || !mask || !lab || !rl) {
        free(vals); free(mask); free(lab); free(rl);
        return errmsg_set(err, errlen, "out of memory");
    }
    for (int l = 0; l < im->Lmax; l++) { snprintf(lab[l], sizeof lab[l], "layer %d", l); rl[l] = lab[l]; }
    for (int h = 0; h < H; h++) { snprintf(lab[im->Lmax + h], sizeof lab[0], "head %d", h); rl[im->Lmax + h] = lab[im->Lmax + h]; }
    float M = 1e-3f;
    RenderHeatmap p[3];
    for (int k = 0; k < 3; k++) {
        if (im->layers[k] == 0) continue;
        float *v = vals + (size_t)k * im->Lmax * H;
        unsigned char *mk = mask + (size_t)k * im->Lmax * H;
        for (int l = 0; l < im->layers[k]; l++)
            for (int h = 0; h < H; h++) {
                float d = importance_summary(im, (ModelAttnKind)k, l, h);
                v[l * H + h] = isfinite(d) ? d : 0.0f;
                mk[l * H + h] = (unsigned char)isfinite(d);
                if (isfinite(d) && fabsf(d) > M) M = fabsf(d);
            }
        p[n] = (RenderHeatmap){0};
        p[n].title = kind_ids[k];
        p[n].values = v;
        p[n].rows = im->layers[k];
        p[n].cols = H;
        p[n].row_labels = rl;
        p[n].col_labels = rl + im->Lmax;
        p[n].mask = mk;
        p[n].mask_label = "off";
        p[n].cmap = RENDER_CMAP_DIVERGING;
        p[n].show_values = 1;
        p[n].highlight_row = -1;
        n++;
    }
    for (int k = 0; k < n; k++) { p[k].vmin = -M; p[k].vmax = M; }
    int rc = render_panels(path, title, p, n, 0, meta, err, errlen);
    free(vals); free(mask); free(lab); free(rl);
    return rc;
}

/* importance.png of the sentence: the grids, listed in the trace. */
static int importance_grids(Show *w, const Importance *im, const char *what) {
    char title[512], path[4096];
    snprintf(title, sizeof title, "Knock out one head at a time: Δ log p of %s · %s", what, w->s->text);
    pictures_path(w, "importance.png", path, sizeof path);
    RenderMetaItem items[8];
    RenderMeta meta = pictures_meta(w, items, title, NULL, NULL, NULL);
    if (pictures_draw_importance(path, im, title, &meta, w->err, w->errlen)) return -1;
    return trace_add_image(w->t, "importance.png");
}

/* Target tokens × every head: Δ log p of each token. */
static int importance_tokens(Show *w, const Importance *im) {
    int H = im->H, N = 0, T = im->n_targets;
    for (int k = 0; k < 3; k++) N += im->layers[k] * H;
    float *vals = malloc((size_t)T * N * sizeof(float));
    unsigned char *mask = malloc((size_t)T * N);
    char (*lab)[32] = malloc((size_t)N * sizeof *lab);   /* "E%d h%d": any two ints */
    const char **cl = malloc((size_t)N * sizeof(char *));
    if (!vals || !mask || !lab || !cl) {
        free(vals); free(mask); free(lab); free(cl);
        return errmsg_set(w->err, w->errlen, "out of memory");
    }
    float M = 1e-3f;
    int c = 0;
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < im->layers[k]; l++)
            for (int h = 0; h < H; h++, c++) {
                snprintf(lab[c], sizeof lab[c], "%s%d h%d", kind_short[k], l, h);
                cl[c] = lab[c];
                for (int t = 0; t < T; t++) {
                    float d = importance_delta(im, (ModelAttnKind)k, l, h, t);
                    vals[(size_t)t * N + c] = isfinite(d) ? d : 0.0f;
                    mask[(size_t)t * N + c] = (unsigned char)isfinite(d);
                    if (isfinite(d) && fabsf(d) > M) M = fabsf(d);
                }
            }
    RenderHeatmap hm = {0};
    char title[512];
    snprintf(title, sizeof title, "Δ log p of each target token when one head is knocked out · %s", w->s->text);
    hm.title = title;
    hm.subtitle = im->positions ? "each token the model predicted (rows); E1 h0 = layer 1 head 0; blue: the head helped"
                                : "E = encoder self, D = decoder masked self, X = cross; E2 h0 = layer 2 head 0; blue: the head helped";
    hm.values = vals;
    hm.rows = T; hm.cols = N;
    hm.row_labels = im->targets;
    hm.col_labels = cl;
    hm.row_axis = im->positions ? "predicted token" : "target token";
    hm.col_axis = "head knocked out";
    hm.mask = mask;
    hm.mask_label = "off";
    hm.cmap = RENDER_CMAP_DIVERGING;
    hm.vmin = -M; hm.vmax = M;
    hm.show_values = -1;
    hm.highlight_row = im->pronoun_t;
    char path[4096];
    pictures_path(w, "importance.tokens.png", path, sizeof path);
    RenderMetaItem items[8];
    RenderMeta meta = pictures_meta(w, items, title, NULL, NULL, NULL);
    int rc = render_heatmap(path, &hm, &meta, w->err, w->errlen) ? -1 : trace_add_image(w->t, "importance.tokens.png");
    free(vals); free(mask); free(lab); free(cl);
    return rc;
}

int pictures_importance(Show *w) {
    const Importance *im = w->ps->importance;
    if (!im) return 0;
    char what[256], cap[1024], capvi[1024];
    if (im->pronoun_t >= 0)
        snprintf(what, sizeof what, "“%s” (the translation of “%s”)", im->targets[im->pronoun_t],
                 w->s->words.tok[im->pronoun_q]);
    else
        importance_what(im, what, sizeof what);
    if (im->positions)
        html_section(w->pg, "importance", "Does this head matter? Knock-outs",
                     "Each head is knocked out alone (its output replaced by zeros before W_O) and the same text is read "
                     "again; the token the model predicted is scored again where it predicted it. The number is the change "
                     "in its log-probability: blue (negative) means the head helped; white means the model did not need it.",
                     "Loại bỏ từng head một (thay đầu ra của nó bằng 0 trước W_O) rồi đọc lại đúng văn bản đó và chấm lại "
                     "token mà mô hình đã đoán. Con số là thay đổi của log xác suất: xanh (âm) nghĩa là head đó có giúp; "
                     "trắng nghĩa là mô hình không cần nó.");
    else
        html_section(w->pg, "importance", "Does this head matter? Knock-outs",
                 "Each head is knocked out alone (its output replaced by zeros before W_O) and the model's own "
                 "translation is scored again, teacher-forced. The number is the change in log-probability: "
                 "blue (negative) means the head helped; white means the model did not need it. A head can look at "
                 "the right word and not matter, or matter without looking anywhere striking.",
                 "Loại bỏ từng head một (thay đầu ra của nó bằng 0 trước W_O) rồi chấm lại bản dịch của chính mô hình. "
                 "Con số là thay đổi của log xác suất: xanh (âm) nghĩa là head đó có giúp; trắng nghĩa là mô hình không cần nó.");
    if (!w->ps->no_pictures) {
        int per_token = !im->positions || im->n_targets > 1;   /* one predicted token: the grid says it all */
        if (importance_grids(w, im, what) || (per_token && importance_tokens(w, im))) return -1;
        snprintf(cap, sizeof cap, "Δ log p of %s per head, one grid per kind of attention (layers × heads).", what);
        snprintf(capvi, sizeof capvi, "Δ log p của %s theo từng head, mỗi loại chú ý một lưới (lớp × head).", what);
        html_figure(w->pg, "importance.png", cap, capvi, NULL);
        if (per_token) html_figure(w->pg, "importance.tokens.png", "Δ log p of every target token (rows) per knocked-out head (columns).",
                    "Δ log p của từng token đích (hàng) khi loại bỏ từng head (cột).", NULL);
    }
    return 0;
}

/* ---- direct logit attribution ---- */

int pictures_attribution(Show *w) {
    const Attribution *at = w->ps->attribution;
    if (!at) return 0;
    char cap[1024], capvi[1024], path[4096], head[256], text[2200];
    snprintf(head, sizeof head, "Which heads wrote “%s”? Direct logit attribution", at->token);
    if (at->every_norm)   /* the translator, post-norm: a LayerNorm after every sublayer */
        html_section(w->pg, "attribution", head,
                     "The logit of the word the decoder writes is a sum: its stream is the embedding plus every head's "
                     "(masked self and cross) and every MLP's output, and once every LayerNorm's scale 1/σ is frozen at "
                     "this pass's value, each norm is affine and each part goes through it on its own; its share is then "
                     "its dot product with the word's column of W_out. Red pushes the word up, blue down.",
                     "Logit của từ mà decoder viết là một tổng: dòng của nó là embedding cộng đầu ra của mọi head (tự chú "
                     "ý có mặt nạ và chú ý chéo) và mọi MLP; khi giữ cố định hệ số 1/σ của mọi LayerNorm ở giá trị của "
                     "lượt này, mỗi lớp chuẩn hoá là một phép afin và từng phần đi qua nó riêng; phần của mỗi thành phần "
                     "là tích vô hướng của nó với cột W_out của từ. Đỏ đẩy từ lên, xanh kéo xuống.");
    else
        html_section(w->pg, "attribution", head,
                 "The logit of the predicted token is a sum: the residual stream is the embedding plus every head's and "
                 "every MLP's output, and once the final norm's scale is frozen at this pass's value, each part's share "
                 "is its dot product with the token's unembedding row. Red pushes the token up, blue down.",
                 "Logit của token được đoán là một tổng: dòng dư (residual) là embedding cộng đầu ra của mọi head và mọi "
                 "MLP; khi giữ cố định hệ số của lớp chuẩn hoá cuối, phần của mỗi thành phần là tích vô hướng của nó với "
                 "hàng unembedding của token. Đỏ đẩy token lên, xanh kéo xuống.");
    if (w->ps->no_pictures) return 0;
    pictures_path(w, "attribution.png", path, sizeof path);
    char title[256];
    snprintf(title, sizeof title, "Direct logit attribution of “%s”", at->token);
    if (w->s->translation[0]) snprintf(text, sizeof text, "%s → %s", w->s->text, w->s->translation);
    else snprintf(text, sizeof text, "%s", w->s->text);
    RenderMetaItem items[8];
    RenderMeta meta = pictures_meta(w, items, title, NULL, NULL, NULL);
    if (attribution_draw(path, at, text, &meta, w->err, w->errlen) || trace_add_image(w->t, "attribution.png"))
        return -1;
    attribution_caption(at, cap, sizeof cap, capvi, sizeof capvi);
    html_figure(w->pg, "attribution.png", cap, capvi, NULL);
    return 0;
}
