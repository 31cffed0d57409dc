/* pictures_generate.c — see pictures_generate.h. */
#include "pipeline/pictures_generate.h"
#include "render/page.h"
#include "core/errmsg.h"
#include "render/html.h"
#include "render/fmt.h"
#include "render/render.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pictures_generate_head(const Generation *g, const char *spec, int *layer, int *head, char *err, size_t errlen) {
    int l, h, end = 0;
    if (sscanf(spec, "decoder.%d.masked_self.%d%n", &l, &h, &end) != 2 || spec[end])
        if (end = 0, sscanf(spec, "%d.%d%n", &l, &h, &end) != 2 || spec[end])
            return errmsg_set(err, errlen, "--head '%s' is not MAP.H (e.g. decoder.1.masked_self.3, or 1.3)", spec);
    if (l < 0 || l >= g->L || h < 0 || h >= g->H)
        return errmsg_set(err, errlen, "--head '%s': this model has layers 0..%d and heads 0..%d", spec, g->L - 1,
                          g->H - 1);
    *layer = l; *head = h;
    return 0;
}

/* The head that looks furthest back over the written steps (the sink left out). */
static void default_head(const Generation *g, int *layer, int *head) {
    double best = -1;
    *layer = *head = 0;
    for (int l = 0; l < g->L; l++)
        for (int h = 0; h < g->H; h++) {
            double d = 0;
            for (int s = 0; s < g->n_steps; s++) {
                int q = g->n_prompt - 1 + s;
                const float *row = generate_row(g, l, h, q);
                for (int j = 1; j <= q; j++) d += row[j] * (double)(q - j);
            }
            if (d > best) { best = d; *layer = l; *head = h; }
        }
}

/* Frame k of the growing map: rows 0..last shown, the rest hidden; the
 * values and mask (n, n) are the caller's. */
static RenderHeatmap growing_frame(const Generation *g, int l, int h, int last, float *w, unsigned char *mask,
                                   const char **labels, const char *title, const char *subtitle) {
    int n = g->n;
    for (int i = 0; i < n; i++) labels[i] = i <= last ? g->tokens[i] : "";   /* no token shown before it is written */
    for (int q = 0; q < n; q++)
        for (int j = 0; j < n; j++) {
            int shown = q <= last && j <= q;
            w[(size_t)q * n + j] = shown ? generate_row(g, l, h, q)[j] : 0.0f;
            mask[(size_t)q * n + j] = (unsigned char)shown;
        }
    const char *const *tok = labels;
    return (RenderHeatmap){.title = title, .subtitle = subtitle, .values = w, .rows = n, .cols = n,
                           .row_labels = tok, .col_labels = tok, .row_axis = "query (one row per step)",
                           .col_axis = "key (in the cache)", .mask = mask, .mask_label = "future", .cmap = RENDER_CMAP_VIRIDIS,
                           .vmin = 0, .vmax = 1, .show_values = 0, .highlight_row = last};
}

static int add_image(GenPictureReport *rep, const char *name) {
    if (rep->n_images >= GEN_PICTURES_MAX) return -1;
    snprintf(rep->images[rep->n_images++], sizeof rep->images[0], "%s", name);
    return 0;
}

/* The page's section on --attribution (the first token written). */
static void attribution_section(HtmlPage *pg, const Attribution *at) {
    char cap[1024], capvi[1024], head[256];
    attribution_caption(at, cap, sizeof cap, capvi, sizeof capvi);
    snprintf(head, sizeof head, "Which heads wrote the first %s, “%s”? Direct logit attribution",
             at->kinds > 1 ? "word" : "token", at->token);
    html_section(pg, "attribution", head,
                 "The first written token's logit, split into what each head, MLP and the embedding add to the "
                 "residual stream (read again in one pass). Red pushes the token up, blue down.",
                 "Logit của token đầu tiên được viết, tách thành phần mà mỗi head, MLP và embedding cộng vào dòng dư "
                 "(đọc lại trong một lượt). Đỏ đẩy token lên, xanh kéo xuống.");
    html_figure(pg, "attribution.png", cap, capvi, NULL);
}

/* attribution.png in dir: at drawn over text (prompt: the PNG's text chunk). */
static int attribution_png(const char *dir, const Attribution *at, const char *text, const char *prompt,
                           const char *model_name, GenPictureReport *rep, char *err, size_t errlen) {
    char path[4096], title[256], line[2400];
    snprintf(line, sizeof line, "%s", text);   /* the title is one line: "source\n→ translation" joined */
    for (char *p = line; *p; p++) if (*p == '\n') *p = ' ';
    snprintf(path, sizeof path, "%s/attribution.png", dir);
    snprintf(title, sizeof title, "Direct logit attribution of “%s”", at->token);
    RenderMetaItem items[] = {{"Title", title}, {"Prompt", prompt}, {"Model", model_name}};
    RenderMeta meta = {items, 3};
    if (attribution_draw(path, at, line, &meta, err, errlen)) return -1;
    return add_image(rep, "attribution.png") ? errmsg_set(err, errlen, "too many pictures") : 0;
}

/* timeline.png and growing.gif. */
static int draw_timeline(const Generation *g, const GenPictureSpec *ps, GenPictureReport *rep, char *err,
                         size_t errlen) {
    int n = g->n, l = rep->layer, h = rep->head, n_frames = g->n_steps + 1, rc = -1;
    float *w = malloc((size_t)n_frames * n * n * sizeof *w);
    unsigned char *mask = malloc((size_t)n_frames * n * n);
    RenderHeatmap *fr = calloc((size_t)n_frames, sizeof *fr);
    const char **labels = malloc((size_t)n_frames * n * sizeof *labels);
    char title[160], sub[256], path[4096];
    if (!w || !mask || !fr || !labels) { errmsg_set(err, errlen, "out of memory"); goto done; }
    snprintf(title, sizeof title, "generation · decoder layer %d · head %d", l, h);
    snprintf(sub, sizeof sub, "rows 0–%d: the prompt; then one row per written token; outlined: the newest row",
             g->n_prompt - 1);
    for (int k = 0; k < n_frames; k++)
        fr[k] = growing_frame(g, l, h, g->n_prompt - 1 + k, w + (size_t)k * n * n, mask + (size_t)k * n * n,
                              labels + (size_t)k * n, title, sub);
    RenderMetaItem it[2] = {{"Title", title}, {"Model", ps->model_name}};
    RenderMeta meta = {it, 2};
    snprintf(path, sizeof path, "%s/timeline.png", ps->dir);
    if (render_heatmap(path, &fr[n_frames - 1], &meta, err, errlen)) goto done;
    snprintf(path, sizeof path, "%s/growing.gif", ps->dir);
    if (render_gif_heatmaps(path, fr, n_frames, 60, err, errlen)) goto done;
    rc = add_image(rep, "timeline.png") || add_image(rep, "growing.gif") ? errmsg_set(err, errlen, "too many pictures") : 0;
done:
    free(w); free(mask); free(fr); free(labels);
    return rc;
}

/* last-row.png: the newest written token's query row in every layer and head. */
static int draw_last_row(const Generation *g, const GenPictureSpec *ps, GenPictureReport *rep, char *err,
                         size_t errlen) {
    int q = g->n - 1, LH = g->L * g->H, rc = -1;
    float *w = malloc((size_t)LH * (q + 1) * sizeof *w);
    char (*lab)[40] = malloc((size_t)LH * sizeof *lab);
    const char **rows = malloc((size_t)LH * sizeof *rows);
    char title[200], path[4096];
    if (!w || !lab || !rows) { errmsg_set(err, errlen, "out of memory"); goto done; }
    for (int l = 0; l < g->L; l++)
        for (int h = 0; h < g->H; h++) {
            int r = l * g->H + h;
            memcpy(w + (size_t)r * (q + 1), generate_row(g, l, h, q), (size_t)(q + 1) * sizeof *w);
            snprintf(lab[r], sizeof lab[r], "layer %d · head %d", l, h);
            rows[r] = lab[r];
        }
    snprintf(title, sizeof title, "the newest token \"%s\" (position %d): its row in every layer and head", g->tokens[q], q);
    RenderHeatmap hm = {.title = title, .subtitle = "one computation with the KV cache: only this row is new",
                        .values = w, .rows = LH, .cols = q + 1, .row_labels = rows,
                        .col_labels = (const char *const *)g->tokens, .row_axis = "layer · head", .col_axis = "key",
                        .cmap = RENDER_CMAP_VIRIDIS, .vmin = 0, .vmax = 1, .show_values = 0, .highlight_row = -1};
    RenderMetaItem it[2] = {{"Title", title}, {"Model", ps->model_name}};
    RenderMeta meta = {it, 2};
    snprintf(path, sizeof path, "%s/last-row.png", ps->dir);
    if (render_heatmap(path, &hm, &meta, err, errlen)) goto done;
    rc = add_image(rep, "last-row.png") ? errmsg_set(err, errlen, "too many pictures") : 0;
done:
    free(w); free(lab); free(rows);
    return rc;
}

#define TOP_SHOWN 8   /* candidates drawn per step (the trace keeps all top_k) */

/* top-k.png: each step's candidates, the chosen one in colour. */
static int draw_top_k(const Generation *g, const GenPictureSpec *ps, GenPictureReport *rep, char *err, size_t errlen) {
    int n = g->n_steps, k = g->top_k < TOP_SHOWN ? g->top_k : TOP_SHOWN, rc = -1;
    char (*rt)[96] = malloc((size_t)n * sizeof *rt), (*vis)[40] = malloc((size_t)n * k * sizeof *vis), one[40];
    const char **rows = malloc((size_t)n * sizeof *rows), **labels = malloc((size_t)n * k * sizeof *labels);
    float *v = malloc((size_t)n * k * sizeof *v);
    int *chosen = malloc((size_t)n * sizeof *chosen);
    char title[300], path[4096];
    if (!rt || !vis || !rows || !labels || !v || !chosen) { errmsg_set(err, errlen, "out of memory"); goto done; }
    for (int s = 0; s < n; s++) {
        int q = g->n_prompt - 1 + s;
        const HfCandidate *top = g->top + (size_t)s * g->top_k;
        snprintf(rt[s], sizeof rt[s], "step %d: after \"%s\"", s, fmt_visible_token(g->tokens[q], one, sizeof one));
        rows[s] = rt[s];
        chosen[s] = -1;
        for (int j = 0; j < k; j++) {
            labels[(size_t)s * k + j] = fmt_visible_token(top[j].text, vis[(size_t)s * k + j], sizeof vis[0]);
            v[(size_t)s * k + j] = top[j].prob;
            if (top[j].id == g->ids[q + 1]) chosen[s] = j;
        }
    }
    snprintf(title, sizeof title, "the %d most likely next tokens at each step (%s)\nbar: the model's probability "
             "(softmax of the logits, temperature 1); orange: the token written", k,
             g->temperature > 0 ? "sampled" : "greedy: the first is written");
    RenderBars b = {.title = title, .n = n, .k = k, .row_titles = rows, .labels = labels, .values = v, .chosen = chosen};
    RenderMetaItem it[1] = {{"Model", ps->model_name}};
    RenderMeta meta = {it, 1};
    snprintf(path, sizeof path, "%s/top-k.png", ps->dir);
    if (render_bars(path, &b, &meta, err, errlen)) goto done;
    rc = add_image(rep, "top-k.png") ? errmsg_set(err, errlen, "too many pictures") : 0;
done:
    free(rt); free(vis); free(rows); free(labels); free(v); free(chosen);
    return rc;
}

/* kv-cache.png: bytes in the cache after each step. */
static int draw_kv_cache(const Generation *g, const GenPictureSpec *ps, GenPictureReport *rep, char *err,
                         size_t errlen) {
    int n = g->n_steps, rc = -1;
    float *x = malloc((size_t)n * 3 * sizeof *x), *gqa = x ? x + n : NULL, *mha = x ? x + 2 * n : NULL;
    char title[300], lab_gqa[96], lab_mha[96], path[4096];
    if (!x) return errmsg_set(err, errlen, "out of memory");
    for (int s = 0; s < n; s++) {
        x[s] = (float)s;
        gqa[s] = (float)(generate_kv_bytes(g, s) / 1024.0);
        mha[s] = (float)((double)(g->n_prompt + s) * g->kv_per_token_mha / 1024.0);
    }
    size_t end = generate_kv_bytes(g, n - 1);
    snprintf(title, sizeof title, "KV cache: %zu bytes per token%s · %zu bytes (%.2f KiB) after the last step",
             g->kv_per_token, g->Hkv < g->H ? ", grouped-query attention" : " (every head has its own keys and values)",
             end, end / 1024.0);
    snprintf(lab_gqa, sizeof lab_gqa, "this model: %d key/value heads", g->Hkv);
    snprintf(lab_mha, sizeof lab_mha, "without grouping: %d key/value heads", g->H);
    RenderSeries se[2] = {{lab_gqa, gqa}, {lab_mha, mha}};
    RenderPlot p = {.title = title, .x_label = "step (positions cached = prompt + step)",
                    .y_label = "KiB of keys and values (float32)", .x = x, .n_points = n, .series = se,
                    .n_series = g->Hkv < g->H ? 2 : 1};
    RenderMetaItem it[2] = {{"Title", title}, {"Model", ps->model_name}};
    RenderMeta meta = {it, 2};
    snprintf(path, sizeof path, "%s/kv-cache.png", ps->dir);
    if (render_plot(path, &p, &meta, err, errlen) == 0)
        rc = add_image(rep, "kv-cache.png") ? errmsg_set(err, errlen, "too many pictures") : 0;
    free(x);
    return rc;
}

static void write_page_figures(HtmlPage *pg, const Generation *g, const GenPictureReport *rep) {
    char cap[600];
    snprintf(cap, sizeof cap, "Layer %d, head %d: the prompt's rows, then one row per step. With a KV cache each step "
             "computes only the newest row (outlined); the keys and values of earlier tokens are read from the cache.",
             rep->layer, rep->head);
    html_figure(pg, "timeline.png", cap, "Mỗi bước chỉ tính một hàng mới (có viền); khóa và giá trị cũ lấy từ bộ nhớ đệm KV.",
                NULL);
    html_figure(pg, "growing.gif", "The same map growing, one frame per step (for slides).",
                "Cùng bản đồ lớn dần, mỗi bước một khung hình.", NULL);
    html_figure(pg, "last-row.png", "The newest token's row in every layer and head.",
                "Hàng của token mới nhất ở mọi lớp và mọi đầu.", NULL);
    html_figure(pg, "top-k.png", "Each step's most likely next tokens; orange: the one written.",
                "Các token có xác suất cao nhất ở mỗi bước; màu cam: token được viết.", NULL);
    snprintf(cap, sizeof cap, "Bytes of keys and values in the cache after each step: %zu per token with %d key/value "
             "heads; %zu if each of the %d query heads had its own.", g->kv_per_token, g->Hkv, g->kv_per_token_mha, g->H);
    html_figure(pg, "kv-cache.png", cap, "Kích thước bộ nhớ đệm KV sau mỗi bước, có và không có grouped-query attention.",
                NULL);
}

/* index.html: the gallery page pg, with the interactive views of trace (when
 * given) under its header at byte `at`, opening on the timeline's head: map
 * map_id, head (its newest row).  Frees pg.  0, or -1 with err. */
static int finish_page(HtmlPage *pg, size_t at, const Trace *trace, const char *map_id, int head, const char *dir,
                       char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof path, "%s/index.html", dir);
    if (!trace) return html_page_write(pg, path, err, errlen);
    PageData pd;
    page_data_init(&pd);
    PageFocus focus = {-1, head, -1};
    for (int i = 0; i < trace->n_maps; i++)
        if (!strcmp(trace->maps[i].id, map_id)) focus = (PageFocus){i, head, trace->maps[i].Tq - 1};
    int rc = page_data_add(&pd, trace, "trace.json", "trace.json", &focus, err, errlen);
    if (rc == 0) rc = page_write(pg, at, &pd, path, err, errlen);
    else html_page_free(pg);
    page_data_free(&pd);
    return rc;
}

/* The head roles' section (the caller drew head_roles.png). */
static void head_roles_section(HtmlPage *pg) {
    html_section(pg, "head-roles", "What each head does",
                 "Each self-attention head named for what it measurably does on this text (previous token, sink) and "
                 "on a probe of random tokens repeated twice (duplicate token, induction); thresholds in the picture, "
                 "numbers in trace.json under head_roles.",
                 "Mỗi head tự chú ý được đặt tên theo việc nó làm, đo trên văn bản này (token trước, sink) và trên một "
                 "đoạn thử gồm các token ngẫu nhiên lặp lại hai lần (token trùng, induction); ngưỡng ghi trong hình, số "
                 "liệu trong trace.json, mục head_roles.");
    html_figure(pg, "head_roles.png", "Head roles, measured (--head-roles).", "Vai trò của các head, đo được.", NULL);
}

/* index.html: the text, then the pictures. */
static int write_page(const Generation *g, const GenPictureSpec *ps, const GenPictureReport *rep, char *err,
                      size_t errlen) {
    HtmlPage pg;
    html_page_begin(&pg, "attnviz generate", ps->model_name);
    size_t views_at = pg.len;
    html_section(&pg, "text", "What the model wrote", g->temperature > 0 ? "Sampled (see the seed in trace.json)."
                 : "Greedy: the most likely token at each step.", "Mỗi bước chọn token có xác suất cao nhất (greedy).");
    StrBuf sb = {0};
    strbuf_printf(&sb, "%s", g->prompt);
    strbuf_printf(&sb, "%s%s", g->text[0] == ' ' ? "" : " ", g->text);
    html_pre(&pg, sb.buf ? sb.buf : "");
    free(sb.buf);
    write_page_figures(&pg, g, rep);
    if (ps->attribution) attribution_section(&pg, ps->attribution);
    if (ps->head_roles) head_roles_section(&pg);
    char id[64];
    snprintf(id, sizeof id, "decoder.%d.masked_self", rep->layer);
    return finish_page(&pg, views_at, ps->trace, id, rep->head, ps->dir, err, errlen);
}

/* attribution.png: the first written token's logit, split by head (--attribution). */
static int draw_attribution(const Generation *g, const GenPictureSpec *ps, GenPictureReport *rep, char *err,
                            size_t errlen) {
    if (!ps->attribution) return 0;
    char text[1200];
    snprintf(text, sizeof text, "%s …", g->prompt);
    return attribution_png(ps->dir, ps->attribution, text, g->prompt, ps->model_name, rep, err, errlen);
}

int pictures_generate(const Generation *g, const GenPictureSpec *ps, GenPictureReport *rep, char *err, size_t errlen) {
    memset(rep, 0, sizeof *rep);
    if (ps->head) {
        if (pictures_generate_head(g, ps->head, &rep->layer, &rep->head, err, errlen)) return -1;
    } else {
        default_head(g, &rep->layer, &rep->head);
    }
    if (draw_timeline(g, ps, rep, err, errlen) || draw_last_row(g, ps, rep, err, errlen) ||
        draw_top_k(g, ps, rep, err, errlen) || draw_kv_cache(g, ps, rep, err, errlen) ||
        draw_attribution(g, ps, rep, err, errlen))
        return -1;
    return write_page(g, ps, rep, err, errlen);
}

/* ---- the bundled translator's decoding ---- */

/* Frame `last` of head h of map m growing (rows 0..last shown); w, mask
 * (Tq, Tk) and rows (Tq labels) are the caller's. */
static RenderHeatmap map_frame(const TraceMap *m, int h, int last, float *w, unsigned char *mask, const char **rows,
                               const char *title, const char *sub) {
    int causal = !strcmp(m->kind, "masked_self");
    for (int q = 0; q < m->Tq; q++) {
        rows[q] = q <= last ? m->queries[q] : "";
        for (int j = 0; j < m->Tk; j++) {
            int shown = q <= last && (!causal || j <= q);
            w[(size_t)q * m->Tk + j] = shown ? m->heads[h].weights[(size_t)q * m->Tk + j] : 0.0f;
            mask[(size_t)q * m->Tk + j] = (unsigned char)shown;
        }
    }
    return (RenderHeatmap){.title = title, .subtitle = sub, .values = w, .rows = m->Tq, .cols = m->Tk,
                           .row_labels = rows, .col_labels = (const char *const *)m->keys,
                           .row_axis = "decoder query (one row per written word)",
                           .col_axis = causal ? "key (the words written so far)" : "key (the source sentence)",
                           .mask = mask, .mask_label = "future", .cmap = RENDER_CMAP_VIRIDIS, .vmin = 0, .vmax = 1,
                           .show_values = -1, .highlight_row = last};
}

/* name.png (the last frame) and, when gif, growing.gif of head h of map m. */
static int draw_map_growing(const TraceMap *m, int h, const GenTranslationSpec *ts, const char *name, int gif,
                            GenPictureReport *rep, char *err, size_t errlen) {
    int n = m->Tq, cells = m->Tq * m->Tk, rc = -1;
    float *w = malloc((size_t)n * cells * sizeof *w);
    unsigned char *mask = malloc((size_t)n * cells);
    const char **rows = malloc((size_t)n * n * sizeof *rows);
    RenderHeatmap *fr = calloc((size_t)n, sizeof *fr);
    char title[200], path[4096], file[64];
    if (!w || !mask || !rows || !fr) { errmsg_set(err, errlen, "out of memory"); goto done; }
    snprintf(title, sizeof title, "the translator writing · %s · head %d", m->id, h);
    const char *sub = "row q: the query that wrote the next word; outlined: the newest row";
    for (int k = 0; k < n; k++)
        fr[k] = map_frame(m, h, k, w + (size_t)k * cells, mask + (size_t)k * cells, rows + (size_t)k * n, title, sub);
    RenderMetaItem it[2] = {{"Title", title}, {"Model", ts->model_name}};
    RenderMeta meta = {it, 2};
    snprintf(file, sizeof file, "%s.png", name);
    snprintf(path, sizeof path, "%s/%s", ts->dir, file);
    if (render_heatmap(path, &fr[n - 1], &meta, err, errlen) || add_image(rep, file)) goto done;
    if (gif) {
        snprintf(path, sizeof path, "%s/growing.gif", ts->dir);
        if (render_gif_heatmaps(path, fr, n, 80, err, errlen) || add_image(rep, "growing.gif")) goto done;
    }
    rc = 0;
done:
    free(w); free(mask); free(rows); free(fr);
    return rc;
}

int pictures_generate_translation(Trace *t, const GenTranslationSpec *ts, GenPictureReport *rep, char *err,
                                  size_t errlen) {
    memset(rep, 0, sizeof *rep);
    char id[2][64];
    snprintf(id[0], sizeof id[0], "decoder.%d.masked_self", ts->layer);
    snprintf(id[1], sizeof id[1], "decoder.%d.cross", ts->layer);
    const TraceMap *self = trace_find_map(t, id[0]), *cross = trace_find_map(t, id[1]);
    if (!self || !cross) return errmsg_set(err, errlen, "the trace has no %s or %s", id[0], id[1]);
    if (ts->self_head >= self->n_heads || ts->cross_head >= cross->n_heads)
        return errmsg_set(err, errlen, "--head: this model has heads 0..%d", self->n_heads - 1);
    rep->layer = ts->layer;
    rep->head = ts->cross_head;
    if (draw_map_growing(self, ts->self_head, ts, "timeline-self", 0, rep, err, errlen) ||
        draw_map_growing(cross, ts->cross_head, ts, "timeline-cross", 1, rep, err, errlen) ||
        (ts->attribution && attribution_png(ts->dir, ts->attribution, ts->text, ts->text, ts->model_name, rep, err,
                                            errlen)))
        return -1;
    HtmlPage pg;
    html_page_begin(&pg, "attnviz generate — the translator writing", ts->model_name);
    size_t views_at = pg.len;
    html_section(&pg, "text", "What the model wrote", "Greedy decoding, one word per step.",
                 "Giải mã tham lam, mỗi bước một từ.");
    html_pre(&pg, ts->text);
    html_figure(&pg, "timeline-self.png", "Masked self-attention of the decoder: each written word reads the words "
                "written before it; one row per step, the newest outlined. Rows are those of the pass over the "
                "finished translation: the decoder is causal, so each equals what its step computed.",
                "Tự chú ý có che của decoder: mỗi từ đã viết đọc các từ viết trước nó; mỗi bước một hàng.", NULL);
    html_figure(&pg, "timeline-cross.png", "Cross-attention: at each step, which source words the decoder reads "
                "to write the next word.", "Chú ý chéo: ở mỗi bước, decoder đọc những từ nguồn nào để viết từ tiếp theo.",
                NULL);
    html_figure(&pg, "growing.gif", "The cross-attention map growing, one frame per written word (for slides).",
                "Bản đồ chú ý chéo lớn dần, mỗi từ một khung hình.", NULL);
    if (ts->attribution) attribution_section(&pg, ts->attribution);
    if (ts->head_roles) head_roles_section(&pg);
    return finish_page(&pg, views_at, ts->trace, id[1], ts->cross_head, ts->dir, err, errlen);
}
