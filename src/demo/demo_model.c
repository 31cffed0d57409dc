/* demo_model.c — the parts of `attnviz demo` that run the model (see demo.h):
 * the decoder's mask and a padded batch (part 3), multi-head split/concat (4),
 * the three kinds of attention (5), coreference (6) and the Vietnamese example
 * (8).  Each sentence goes through the sentence pipeline in one call
 * (pipeline/look.h): greedy translation, or teacher forcing where a target is
 * given, then the forward pass and its trace. */
#include "demo/demo_model.h"
#include "model/checkpoint.h"
#include "pipeline/look.h"
#include "render/fmt.h"
#include "render/mapview.h"
#include "trace/maps.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* text through the sentence pipeline (pipeline/look.h): translated greedily
 * into the language of tag and traced; an unknown word is a warning.  0, or -1
 * with d->err. */
static int demo_look(Demo *d, Look *L, const char *text, int tag) {
    LookSpec spec = {.want = LOOK_TRACE, .tag = tag};
    int rc = look_sentence(L, &d->mf, text, &spec, d->err, sizeof d->err);
    if (L->reached >= LOOK_PREPARED && L->s.n_unknown > 0)
        demo_warn(d, "\"%s\": %s not in the model's vocabulary (read as <unk>)", text, L->s.unknown);
    return rc;
}

static int find_tok(const char *const *tok, int n, const char *w) {
    for (int i = 0; i < n; i++)
        if (!strcmp(tok[i], w)) return i;
    return -1;
}

/* ------------------------------------------------------------ part 3: masking in the model */

/* The model's decoder masked self-attention on one sentence. */
static int decoder_mask(Demo *d) {
    static const char *const s_en = "i go to school .";
    Look L = {0};   /* the sentence, translated and traced */
    int rc = -1;
    char cap[1536], capvi[1536], cmd[1024], title[256], sub[600];
    if (demo_look(d, &L, s_en, VOCAB_2FR)) goto done;
    const TraceMap *m = trace_find_map(&L.t, "decoder.0.masked_self");
    if (!m) { demo_fail(d, "model has no decoder masked self-attention"); goto done; }
    snprintf(title, sizeof title, "decoder layer 0 · masked self-attention · head 0");
    fmt_fit(sub, sizeof sub, snprintf(sub, sizeof sub, "%s → %s", s_en, L.s.translation));
    RenderHeatmap hm = mapview_weights_heatmap(m, 0, title, sub, -1);
    hm.show_values = 1;
    snprintf(cap, sizeof cap,
             "The trained model's decoder translating “%s” → “%s”: every query row uses only itself and earlier "
             "tokens; the hatched cells above the diagonal are the future, masked with −∞, weight exactly 0.",
             s_en, L.s.translation);
    snprintf(capvi, sizeof capvi,
             "Decoder của mô hình khi dịch “%s” → “%s”: mỗi hàng query chỉ dùng chính nó và các token trước; các ô "
             "gạch chéo phía trên đường chéo là tương lai, bị che bằng −∞, trọng số đúng bằng 0.",
             s_en, L.s.translation);
    demo_cmd(d, cmd, sizeof cmd, "attnviz run", "--to fr \"i go to school .\"   (decoder.0.masked_self.h0.png)");
    if (demo_heatmap(d, "p3-decoder-masked.png", &hm, cap, capvi, cmd)) goto done;
    trace_add_image(&L.t, "p3-decoder-masked.png");
    rc = demo_write_trace(d, &L.t, "p3-decoder.trace.json");
done:
    look_free(&L);
    return rc;
}

/* Largest difference between sentence 2's encoder weights in the batch (mb,
 * S keys) and alone (ma), over its real rows and keys. */
static double batch_vs_alone(const TraceMap *mb, const TraceMap *ma, int S2, int S) {
    double diff = 0;
    for (int h = 0; h < mb->n_heads; h++)
        for (int i = 0; i < S2; i++)
            for (int j = 0; j < S; j++) {
                float wa = j < S2 ? ma->heads[h].weights[i * S2 + j] : 0.0f;
                double e = fabs((double)mb->heads[h].weights[i * S + j] - (double)wa);
                if (e > diff) diff = e;
            }
    return diff;
}

/* The padding mask of a 2-sentence batch beside sentence 2's attention in it. */
static int batch_picture(Demo *d, const Sentence *b1, const Sentence *b2, const TraceMap *mb, double diff,
                         const char *e1, const char *e2) {
    int S = b1->S > b2->S ? b1->S : b2->S;
    float *padm = malloc(sizeof(float) * 2 * (size_t)S);
    char *plab = malloc(12 * (size_t)S);   /* 12 bytes a label: any int */
    const char **pl = malloc(sizeof(char *) * (size_t)S);
    if (!padm || !plab || !pl) { free(padm); free(plab); free(pl); return demo_fail(d, "out of memory"); }
    for (int x = 0; x < S; x++) {
        snprintf(plab + 12 * x, 12, "%d", x);
        pl[x] = plab + 12 * x;
        padm[x] = x < b1->S;
        padm[S + x] = x < b2->S;
    }
    static const char *const rows[2] = {"sentence 1", "sentence 2"};
    RenderHeatmap pp[2];
    memset(pp, 0, sizeof pp);
    pp[0].title = "padding mask of the batch";
    pp[0].subtitle = "1 = real token, 0 = <pad>";
    pp[0].values = padm; pp[0].rows = 2; pp[0].cols = S;
    pp[0].row_labels = rows; pp[0].col_labels = pl;
    pp[0].row_axis = "batch"; pp[0].col_axis = "key position";
    pp[0].cmap = RENDER_CMAP_VIRIDIS; pp[0].vmax = 1; pp[0].show_values = 1; pp[0].highlight_row = -1;
    pp[1] = mapview_weights_heatmap(mb, 0, "sentence 2 · encoder layer 0 · head 0", "<pad> keys masked", -1);
    pp[1].show_values = 0;
    char cap[1536], capvi[1536], cmd[1024];
    snprintf(cap, sizeof cap,
             "Two sentences in one batch are padded to the same length (%d): “%s” (%d tokens with <eos>) and “%s” "
             "(%d + %d × <pad>). The padding mask hides the <pad> keys (hatched), so sentence 2's attention is the "
             "same as when it runs alone (largest difference %.1e). The <pad> query rows are computed but never "
             "used.",
             S, e1, b1->S, e2, b2->S, S - b2->S, diff);
    snprintf(capvi, sizeof capvi,
             "Hai câu trong một batch được đệm tới cùng độ dài (%d): “%s” (%d token kể cả <eos>) và “%s” (%d + %d × "
             "<pad>). Mặt nạ padding che các key <pad> (gạch chéo), nên attention của câu 2 giống hệt khi chạy "
             "riêng (sai khác lớn nhất %.1e). Các hàng query <pad> vẫn được tính nhưng không bao giờ được dùng.",
             S, e1, b1->S, e2, b2->S, S - b2->S, diff);
    demo_cmd(d, cmd, sizeof cmd, "attnviz run --batch", "\"the cat sat on the mat .\" \"i go to school .\"");
    int rc = demo_strip(d, "p3-padding-batch.png", "a padded batch: the mask hides <pad>", pp, 2, 0, cap, capvi, cmd);
    free(padm); free(plab); free(pl);
    return rc;
}

/* Two sentences of different lengths in one padded batch. */
static int padded_batch(Demo *d) {
    static const char *const e1 = "the cat sat on the mat .", *const e2 = "i go to school .";
    const char *const both[2] = {e1, e2};
    Look batch[2], alone = {0};   /* the two in one batch; the second alone */
    int rc = -1;
    LookSpec spec = {.want = LOOK_TRACE, .tag = VOCAB_2FR, .batch = 1};
    int lr = look_sentences(batch, &d->mf, both, 2, &spec, d->err, sizeof d->err);
    for (int k = 0; k < 2 && batch[k].reached >= LOOK_PREPARED; k++)
        if (batch[k].s.n_unknown > 0)
            demo_warn(d, "\"%s\": %s not in the model's vocabulary (read as <unk>)", both[k], batch[k].s.unknown);
    spec.batch = 0;
    if (lr != 0 || look_sentence(&alone, &d->mf, e2, &spec, d->err, sizeof d->err) != 0) goto done;
    const Sentence *b1 = &batch[0].s, *b2 = &batch[1].s;
    const TraceMap *mb = trace_find_map(&batch[1].t, "encoder.0.self"), *ma = trace_find_map(&alone.t, "encoder.0.self");
    if (!mb || !ma) { demo_fail(d, "model has no encoder self-attention"); goto done; }
    int S = b1->S > b2->S ? b1->S : b2->S;
    if (batch_picture(d, b1, b2, mb, batch_vs_alone(mb, ma, b2->S, S), e1, e2)) goto done;
    trace_add_image(&batch[1].t, "p3-padding-batch.png");
    rc = demo_write_trace(d, &batch[1].t, "p3-padding.trace.json");
done:
    look_free(&batch[0]); look_free(&batch[1]);
    look_free(&alone);
    return rc;
}

int demo_masking_in_model(Demo *d) {
    return decoder_mask(d) || padded_batch(d) ? -1 : 0;
}

/* ------------------------------------------------------------ part 4: multi-head */

int demo_multi_head(Demo *d) {
    static const char *const s_en = "she ate the pizza with mushrooms .";
    const ModelConfig *c = &d->mf.m.config;
    Look L = {0};   /* the sentence, translated and traced */
    int rc = -1, H = c->n_heads, Dk = c->d_model / c->n_heads, C = c->d_model;
    char cap[1536], capvi[1536], cmd[1024];
    if (demo_look(d, &L, s_en, VOCAB_2FR)) goto done;
    int T = L.s.S;
    html_section(&d->page, "p4", "4. Multi-head attention: split, attend, concat",
                 "The model projects x into Q, K and V, splits d_model into H heads of d_k = d_model / H columns, "
                 "runs attention in every head at once, then concatenates the heads and mixes them with W_o.",
                 "Mô hình chiếu x thành Q, K, V, chia d_model thành H head, mỗi head d_k = d_model / H cột, chạy "
                 "attention ở mọi head cùng lúc, rồi nối các head lại và trộn bằng W_o.");
    enum { NC = 4, NR = 9 };
    char shp[NR][2][96];
    static const char *const step[NR] = {"step", "input x", "project", "split", "scores", "weights", "heads",
                                         "concat", "output"};
    static const char *const op[NR] = {"operation", "embedding·√d_model + PE", "Q = x·W_q + b_q (also K, V)",
                                       "view [B,T,H,d_k], transpose(1,2)", "Q·Kᵀ / √d_k (+ mask)",
                                       "softmax over the keys", "weights · V", "transpose(1,2), view",
                                       "concat · W_o + b_o"};
    static const char *const gen[NR] = {"shape", "[B, T, d_model]", "[B, T, d_model]", "[B, H, T, d_k]",
                                        "[B, H, T, T]", "[B, H, T, T]", "[B, H, T, d_k]", "[B, T, H·d_k = d_model]",
                                        "[B, T, d_model]"};
    snprintf(shp[0][0], 96, "this model, this sentence");
    snprintf(shp[1][0], 96, "[1, %d, %d]", T, C);
    snprintf(shp[2][0], 96, "[1, %d, %d] each", T, C);
    snprintf(shp[3][0], 96, "[1, %d, %d, %d]", H, T, Dk);
    snprintf(shp[4][0], 96, "[1, %d, %d, %d]", H, T, T);
    snprintf(shp[5][0], 96, "[1, %d, %d, %d]", H, T, T);
    snprintf(shp[6][0], 96, "[1, %d, %d, %d]", H, T, Dk);
    snprintf(shp[7][0], 96, "[1, %d, %d·%d = %d]", T, H, Dk, C);
    snprintf(shp[8][0], 96, "[1, %d, %d]", T, C);
    const char *cells[NR * NC];
    for (int r = 0; r < NR; r++) {
        cells[r * NC + 0] = step[r];
        cells[r * NC + 1] = op[r];
        cells[r * NC + 2] = gen[r];
        cells[r * NC + 3] = shp[r][0];
    }
    char title[256], path[4200];
    snprintf(title, sizeof title, "split and concat: d_model = %d, H = %d heads, d_k = %d, T = %d tokens", C, H, Dk, T);
    snprintf(cap, sizeof cap,
             "The shapes through one multi-head attention layer of this model (d_model = %d, H = %d, d_k = %d) "
             "for “%s” (T = %d tokens with <eos>, batch B = 1). Split and concat only move numbers; no "
             "information is lost.", C, H, Dk, s_en, T);
    snprintf(capvi, sizeof capvi,
             "Kích thước qua một lớp multi-head attention của mô hình này (d_model = %d, H = %d, d_k = %d) với "
             "“%s” (T = %d token kể cả <eos>, batch B = 1). Split và concat chỉ sắp xếp lại các số, không mất thông "
             "tin.", C, H, Dk, s_en, T);
    {
        RenderMetaItem it[3] = {{"Title", title}, {"Source", "attnviz demo"}, {"Model", d->mf.path}};
        RenderMeta meta = {it, 3};
        demo_path(d, "p4-split-concat.png", path, sizeof path);
        if (render_table(path, title, cells, NR, NC, &meta, d->err, sizeof d->err) != 0) {
            demo_fail(d, "p4-split-concat.png: %s", d->err);
            goto done;
        }
        demo_cmd(d, cmd, sizeof cmd, "attnviz info", NULL);
        if (demo_add(d, "p4-split-concat.png", cap, capvi, cmd)) goto done;
        trace_add_image(&L.t, "p4-split-concat.png");
    }
    /* Every head of every encoder layer ("model view"). */
    {
        int E = c->n_enc_layers;
        RenderHeatmap *cellv = calloc((size_t)E * H, sizeof *cellv);
        char (*rt)[24] = calloc((size_t)(E + H), 24);
        const char **rtp = calloc((size_t)(E + H), sizeof(char *));
        if (!cellv || !rt || !rtp) { free(cellv); free(rt); free(rtp); demo_fail(d, "out of memory"); goto done; }
        for (int l = 0; l < E; l++) {
            char id[32];
            snprintf(id, sizeof id, "encoder.%d.self", l);
            const TraceMap *m = trace_find_map(&L.t, id);
            snprintf(rt[l], 24, "layer %d", l);
            rtp[l] = rt[l];
            for (int h = 0; h < H && m; h++) cellv[l * H + h] = mapview_weights_heatmap(m, h, NULL, NULL, -1);
        }
        for (int h = 0; h < H; h++) { snprintf(rt[E + h], 24, "head %d", h); rtp[E + h] = rt[E + h]; }
        snprintf(title, sizeof title, "encoder self-attention, every layer × head: %s", s_en);
        snprintf(cap, sizeof cap,
                 "Every head of every encoder layer on “%s” (translation: “%s”). Each head has its own W_q, W_k, "
                 "W_v, so each draws a different pattern from the same sentence — the lesson's reason for several "
                 "heads. What a given head does is learned, not designed: read the patterns, don't assume them.",
                 s_en, L.s.translation);
        snprintf(capvi, sizeof capvi,
                 "Mọi head của mọi lớp encoder trên “%s” (bản dịch: “%s”). Mỗi head có W_q, W_k, W_v riêng nên mỗi "
                 "head vẽ một mẫu khác nhau từ cùng một câu — lý do bài học dùng nhiều head. Việc mỗi head làm là do "
                 "học mà có, không phải do thiết kế: hãy đọc mẫu, đừng giả định.",
                 s_en, L.s.translation);
        demo_cmd(d, cmd, sizeof cmd, "attnviz run", "\"she ate the pizza with mushrooms .\"   (grid.encoder.self.png)");
        int r = demo_grid(d, "p4-heads.png", title, cellv, E, H, rtp, rtp + E, cap, capvi, cmd);
        free(cellv); free(rt); free(rtp);
        if (r) goto done;
        trace_add_image(&L.t, "p4-heads.png");
    }
    rc = demo_write_trace(d, &L.t, "p4.trace.json");
done:
    look_free(&L);
    return rc;
}

/* ------------------------------------------------------------ part 5: three kinds */

int demo_three_kinds(Demo *d) {
    static const char *const s_en = "the cat sat on the mat .";
    Look P = {0};   /* the sentence, translated and traced */
    int rc = -1;
    char cap[1536], capvi[1536], cmd[1024], title[600];
    if (demo_look(d, &P, s_en, VOCAB_2FR)) goto done;
    if (!P.s.translation[0]) snprintf(P.s.translation, sizeof P.s.translation, "(nothing: the model stops at once)");
    int L = d->mf.m.config.n_dec_layers - 1, E = d->mf.m.config.n_enc_layers - 1;
    char id[3][40];
    snprintf(id[0], 40, "encoder.%d.self", E);
    snprintf(id[1], 40, "decoder.%d.masked_self", L);
    snprintf(id[2], 40, "decoder.%d.cross", L);
    static const char *const names[3] = {"encoder self-attention", "decoder masked self-attention",
                                         "encoder–decoder (cross) attention"};
    static const char *const sub[3] = {"Q, K, V: English", "Q, K, V: French so far", "Q: French · K, V: English"};
    RenderHeatmap pn[3];
    char ttl[3][128];
    int taught[3];
    for (int k = 0; k < 3; k++) {
        const TraceMap *m = trace_find_map(&P.t, id[k]);
        if (!m) { demo_fail(d, "model has no map %s", id[k]); goto done; }
        taught[k] = checkpoint_meta_head_supervised(d->mf.metadata, id[k], 0);
        snprintf(ttl[k], sizeof ttl[k], "%s (layer %d, head 0%s)", names[k], m->layer, taught[k] ? ", TAUGHT" : "");
        pn[k] = mapview_weights_heatmap(m, 0, ttl[k], sub[k], -1);
        pn[k].show_values = 0;
    }
    html_section(&d->page, "p5", "5. Three kinds of attention",
                 "One formula, three uses: the encoder's self-attention (every English word sees every English "
                 "word), the decoder's masked self-attention (a French word sees only the French words before it), "
                 "and cross-attention (a French word looks at the English sentence).",
                 "Một công thức, ba cách dùng: self-attention của encoder (mỗi từ tiếng Anh nhìn mọi từ tiếng Anh), "
                 "masked self-attention của decoder (một từ tiếng Pháp chỉ nhìn các từ tiếng Pháp đứng trước), và "
                 "cross-attention (một từ tiếng Pháp nhìn câu tiếng Anh).");
    fmt_fit(title, sizeof title,
            snprintf(title, sizeof title, "three kinds of attention: “%s” → “%s”", s_en, P.s.translation));
    snprintf(cap, sizeof cap,
             "“%s” → “%s”, head 0 of the last layer of each kind. Left: square, nothing masked. Middle: square, "
             "the future hatched. Right: rectangular — rows are French (decoder) positions, columns English "
             "(encoder) words; this is where the translation reads the source.%s", s_en, P.s.translation,
             taught[2] ? " This cross-attention head was TAUGHT the word alignment during training (train "
                         "--supervise-align): its clean diagonal was a target, not a discovery; the grid of "
                         "attnviz run shows the other heads." : "");
    fmt_fit(capvi, sizeof capvi, snprintf(capvi, sizeof capvi,
             "“%s” → “%s”, head 0 của lớp cuối mỗi loại. Trái: ma trận vuông, không che gì. Giữa: vuông, phần tương "
             "lai bị gạch chéo. Phải: hình chữ nhật — hàng là vị trí tiếng Pháp (decoder), cột là từ tiếng Anh "
             "(encoder); đây là nơi bản dịch đọc câu nguồn.%s", s_en, P.s.translation,
             taught[2] ? " Head cross-attention này được DẠY căn chỉnh từ khi huấn luyện (--supervise-align): đường "
                         "chéo gọn gàng của nó là mục tiêu được cho trước, không phải tự tìm ra." : ""));
    demo_cmd(d, cmd, sizeof cmd, "attnviz run", "\"the cat sat on the mat .\"   (grid.*.png, one per kind)");
    if (demo_strip(d, "p5-three-kinds.png", title, pn, 3, 0, cap, capvi, cmd)) goto done;
    trace_add_image(&P.t, "p5-three-kinds.png");
    rc = demo_write_trace(d, &P.t, "p5.trace.json");
done:
    look_free(&P);
    return rc;
}

/* ------------------------------------------------------------ part 6: coreference */

/* Part 6's head (kept for part 9): the eval's best as the model file records
 * it, else the encoder head whose strongest links from "it" (row q[k] of
 * L[k]'s trace) are strongest on the two sentences together.  Says how in coref_how. */
static void choose_coref_head(Demo *d, Look L[2], const int q[2]) {
    const ModelConfig *c = &d->mf.m.config;
    CorefHead recorded;
    if (model_file_coref_head(&d->mf, &recorded)) {
        d->coref_layer = recorded.layer;
        d->coref_head = recorded.head;
        d->coref_taught = recorded.taught;
        double acc = recorded.accuracy;
        snprintf(d->coref_how, sizeof d->coref_how,
                 "encoder layer %d head %d, the best coreference head of attnviz eval on held-out sentences "
                 "(its strongest link from the pronoun is the antecedent %.0f%% of the time)%s",
                 d->coref_layer, d->coref_head, 100 * acc,
                 d->coref_taught ? ". This head was TAUGHT the link: training gave it the gold antecedent as a target "
                                   "(train --supervise-coref, see docs/model-card.md); no head found it unsupervised"
                                 : "");
    } else {
        float best = -1;
        for (int l = 0; l < c->n_enc_layers; l++)
            for (int h = 0; h < c->n_heads; h++) {
                char id[32];
                snprintf(id, sizeof id, "encoder.%d.self", l);
                float sum = 0, w;
                for (int k = 0; k < 2; k++) {
                    maps_strongest_link(trace_find_map(&L[k].t, id), h, q[k], &w);
                    sum += w;
                }
                if (sum > best) { best = sum; d->coref_layer = l; d->coref_head = h; }
            }
        snprintf(d->coref_how, sizeof d->coref_how,
                 "encoder layer %d head %d, chosen as the head whose strongest link from “it” (itself and <…> "
                 "excluded) is strongest on these two sentences together (the model file records no eval result); "
                 "it is chosen by strength, not by being right",
                 d->coref_layer, d->coref_head);
    }
}

int demo_coreference(Demo *d) {
    static const char *const sent[2] = {"the animal didn't cross the street because it was too tired .",
                                        "the animal didn't cross the street because it was too wide ."};
    static const char *const gold[2] = {"animal", "street"}, *const pron[2] = {"il", "elle"};
    static const char *const tag[2] = {"tired", "wide"};
    Look L[2];   /* each sentence, translated and traced */
    memset(L, 0, sizeof L);
    int rc = -1, q[2];
    char cap[2048], capvi[2048], cmd[1024], title[256], file[64];
    for (int k = 0; k < 2; k++) {
        if (demo_look(d, &L[k], sent[k], VOCAB_2FR)) goto done;
        q[k] = find_tok(L[k].s.src_tok, L[k].s.S, "it");
        if (q[k] < 0) { demo_fail(d, "\"it\" not found in \"%s\"", sent[k]); goto done; }
    }
    choose_coref_head(d, L, q);
    html_section(&d->page, "p6", "6. Coreference: what does “it” refer to?",
                 "“The animal didn't cross the street because it was too tired” — it is the animal; “… too wide” — "
                 "it is the street. French must choose il (l'animal, masculine) or elle (la rue, feminine), so the "
                 "model has to resolve “it”. Below: the translations, then the encoder head that links “it” to a noun.",
                 "“The animal didn't cross the street because it was too tired” — it là con vật; “… too wide” — it là "
                 "con đường. Tiếng Pháp phải chọn il (l'animal, giống đực) hoặc elle (la rue, giống cái), nên mô hình "
                 "phải hiểu “it” chỉ gì. Dưới đây: bản dịch, rồi head của encoder nối “it” với một danh từ.");
    char pre[2048] = "";
    int right_pron[2], right_link[2], key[2];
    float kw[2];
    char id[32];
    snprintf(id, sizeof id, "encoder.%d.self", d->coref_layer);
    for (int k = 0; k < 2; k++) {
        right_pron[k] = find_tok(L[k].s.tgt_tok, L[k].s.T, pron[k]) >= 0 &&
                        find_tok(L[k].s.tgt_tok, L[k].s.T, pron[1 - k]) < 0;
        const TraceMap *m = trace_find_map(&L[k].t, id);
        key[k] = maps_strongest_link(m, d->coref_head, q[k], &kw[k]);
        right_link[k] = key[k] >= 0 && !strcmp(m->keys[key[k]], gold[k]);
        size_t len = strlen(pre);
        snprintf(pre + len, sizeof pre - len, "%s\n  → fr: %s   (expected pronoun: %s — %s)\n", sent[k], L[k].s.translation,
                 pron[k], right_pron[k] ? "right" : "WRONG");
    }
    html_pre(&d->page, pre);
    for (int k = 0; k < 2; k++) {
        const TraceMap *m = trace_find_map(&L[k].t, id);
        const char *got = key[k] >= 0 ? m->keys[key[k]] : "?";
        snprintf(title, sizeof title, "encoder layer %d · head %d%s · “it” (…too %s)", d->coref_layer, d->coref_head,
                 d->coref_taught ? " (taught)" : "", tag[k]);
        snprintf(cap, sizeof cap,
                 "“…because it was too %s”: the strongest link of “it” is “%s” (weight %.2f); the antecedent is "
                 "“%s”, so this head is %s here. The translation “%s” uses %s. Head: %s.",
                 tag[k], got, (double)kw[k], gold[k], right_link[k] ? "right" : "WRONG", L[k].s.translation,
                 right_pron[k] ? (k ? "elle, as it should" : "il, as it should") : "the wrong pronoun (or none)",
                 d->coref_how);
        snprintf(capvi, sizeof capvi,
                 "“…because it was too %s”: liên kết mạnh nhất của “it” là “%s” (trọng số %.2f); tiền ngữ đúng là "
                 "“%s”, nên head này %s ở đây. Bản dịch “%s” dùng %s. Head: encoder lớp %d head %d (%s).",
                 tag[k], got, (double)kw[k], gold[k], right_link[k] ? "đúng" : "SAI", L[k].s.translation,
                 right_pron[k] ? (k ? "elle, đúng" : "il, đúng") : "sai đại từ (hoặc không có)", d->coref_layer,
                 d->coref_head,
                 d->coref_taught ? "head tốt nhất theo attnviz eval; head này được DẠY liên kết với tiền ngữ đúng khi huấn "
                                   "luyện (--supervise-coref), không tự tìm ra"
                 : strstr(d->coref_how, "attnviz eval") ? "head tốt nhất theo attnviz eval"
                                                      : "head có liên kết từ “it” mạnh nhất trên hai câu này; chọn theo "
                                                        "độ mạnh, không theo đúng sai");
        char quoted[256];
        snprintf(quoted, sizeof quoted, "--focus %d.%d \"%s\"", d->coref_layer, d->coref_head, sent[k]);
        demo_cmd(d, cmd, sizeof cmd, "attnviz run", quoted);
        snprintf(file, sizeof file, "p6-coref-%s-lines.png", tag[k]);
        if (demo_lines(d, file, title, m, d->coref_head, q[k], cap, capvi, cmd))
            goto done;
        trace_add_image(&L[k].t, file);
        char sub[256];
        snprintf(sub, sizeof sub, "row “it” outlined · %s", sent[k]);
        RenderHeatmap hm = mapview_weights_heatmap(m, d->coref_head, title, sub, q[k]);
        snprintf(file, sizeof file, "p6-coref-%s-heatmap.png", tag[k]);
        if (demo_heatmap(d, file, &hm, "The same head as a heatmap; the row of “it” is outlined.",
                         "Cùng head đó dạng bản đồ nhiệt; hàng của “it” được viền.", cmd))
            goto done;
        trace_add_image(&L[k].t, file);
        snprintf(file, sizeof file, "p6-%s.trace.json", tag[k]);
        if (demo_write_trace(d, &L[k].t, file)) goto done;
    }
    rc = 0;
done:
    look_free(&L[0]); look_free(&L[1]);
    return rc;
}

/* ------------------------------------------------------------ part 8: Vietnamese */

int demo_vietnamese(Demo *d) {
    static const char *const s_en = "i go to school .", *const s_vi = "tôi đi học .";
    Look G = {0}, L = {0};   /* the model's own translation; the right one read by the decoder */
    int rc = -1;
    char cap[2048], capvi[2048], cmd[1024], title[256], greedy[sizeof G.s.translation];
    /* The model's own translation, then the decoder reads the right one (teacher forcing). */
    LookSpec own = {.tag = VOCAB_2VI}, taught = {.want = LOOK_TRACE, .tag = VOCAB_2VI, .target = s_vi};
    int gr = look_sentence(&G, &d->mf, s_en, &own, d->err, sizeof d->err);
    if (G.reached >= LOOK_PREPARED && G.s.n_unknown > 0)
        demo_warn(d, "\"%s\": %s not in the model's vocabulary (read as <unk>)", s_en, G.s.unknown);
    if (gr != 0) goto done;
    snprintf(greedy, sizeof greedy, "%s", G.s.translation);
    int tr = look_sentence(&L, &d->mf, s_en, &taught, d->err, sizeof d->err);
    if (L.reached >= LOOK_TRANSLATED && L.s.n_target_unknown > 0)
        demo_warn(d, "\"%s\": %s not in the model's vocabulary (read as <unk>)", s_vi, L.s.target_unknown);
    if (tr != 0) goto done;
    int row = find_tok(L.s.tgt_tok, L.s.T, "học");
    const TraceMap *m = trace_find_map(&L.t, "decoder.0.masked_self");
    if (row < 0 || !m) { demo_fail(d, "\"học\" is not in the model's vocabulary or no decoder map"); goto done; }
    html_section(&d->page, "p8", "8. The Vietnamese example: “tôi đi học .”",
                 "Translating “i go to school .” into Vietnamese. The decoder reads <2vi> tôi đi học . (teacher "
                 "forcing with the correct translation); what may “học” look at?",
                 "Dịch “i go to school .” sang tiếng Việt. Decoder đọc <2vi> tôi đi học . (teacher forcing với bản "
                 "dịch đúng); “học” được phép nhìn những gì?");
    char seen[256] = "", hidden[256] = "";
    for (int j = 0; j < m->Tk; j++) {
        char *dst = m->mask[row * m->Tk + j] ? seen : hidden;
        size_t len = strlen(dst);
        snprintf(dst + len, 256 - len, "%s%s", len ? ", " : "", m->keys[j]);
    }
    const char *written = row + 1 < L.s.T ? L.s.tgt_tok[row + 1] : "<eos>";   /* the row's big label */
    snprintf(title, sizeof title, "decoder layer 0 · masked self-attention · head 0 · row reading “học”, writing “%s”",
             written);
    char sub[256];
    snprintf(sub, sizeof sub, "%s → %s", s_en, s_vi);
    RenderHeatmap hm = mapview_weights_heatmap(m, 0, title, sub, row);
    hm.show_values = 1;
    fmt_fit(cap, sizeof cap, snprintf(cap, sizeof cap,
             "The row that reads “học” and writes “%s” (outlined; labelled with the word it writes, the word it "
             "reads small beside it) may use %s — “học” and what came before — and not %s, which is masked "
             "(−∞ → weight 0). At this row the decoder has read up to “học” and predicts the next word, so seeing "
             "“%s” would be cheating. The model's own greedy translation is “%s”.",
             written, seen, hidden[0] ? hidden : "(nothing)", hidden[0] ? hidden : "", greedy));
    fmt_fit(capvi, sizeof capvi, snprintf(capvi, sizeof capvi,
             "Hàng đọc “học” và viết “%s” (được viền; nhãn là từ nó viết, từ nó đọc ghi nhỏ bên cạnh) được dùng %s "
             "— “học” và những gì đứng trước — và không được dùng %s, bị "
             "che (−∞ → trọng số 0). Ở hàng này decoder đã đọc tới “học” và dự đoán từ tiếp theo, nên nhìn thấy "
             "“%s” là gian lận. Bản dịch greedy của chính mô hình là “%s”.",
             written, seen, hidden[0] ? hidden : "(không có)", hidden[0] ? hidden : "", greedy));
    demo_cmd(d, cmd, sizeof cmd, "attnviz run", "--to vi --target \"tôi đi học .\" \"i go to school .\"");
    if (demo_heatmap(d, "p8-vi-decoder-hoc.png", &hm, cap, capvi, cmd)) goto done;
    trace_add_image(&L.t, "p8-vi-decoder-hoc.png");
    char lines_title[256];
    snprintf(lines_title, sizeof lines_title, "what the row reading “học” (writing “%s”) sees: decoder layer 0 · head 0",
             written);
    if (demo_lines(d, "p8-vi-lines-hoc.png", lines_title,
                   m, 0, row,
                   "The same row as lines: one line from “học” to each key it may see, thicker for more weight; the "
                   "masked future has no line.",
                   "Cùng hàng đó dạng đường nối: một đường từ “học” tới mỗi key nó được nhìn, càng đậm càng nhiều "
                   "trọng số; tương lai bị che không có đường nào.",
                   cmd))
        goto done;
    trace_add_image(&L.t, "p8-vi-lines-hoc.png");
    rc = demo_write_trace(d, &L.t, "p8.trace.json");
done:
    look_free(&G);
    look_free(&L);
    return rc;
}
