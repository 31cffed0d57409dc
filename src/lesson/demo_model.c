/* demo_model.c — the parts of `attnviz demo` that run the model (see demo.h):
 * the decoder's mask and a padded batch (part 3), multi-head split/concat (4),
 * the three kinds of attention (5), coreference (6), the Vietnamese example (8)
 * and the training snapshots (9).  Each sentence is translated by greedy
 * decoding (decode.h) unless a target is given, then traced (model_trace). */
#include "cli/cli.h"
#include "model/decode.h"
#include "lesson/demo.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PAIR_MAX 72   /* tokens of a sentence + <eos>, of a translation + tag */

typedef struct {
    Tokens words;
    int src[PAIR_MAX], S;              /* ids + <eos>                      */
    const char *src_tok[PAIR_MAX];     /* words + "<eos>"                  */
    int tgt[PAIR_MAX], T;              /* decoder input: tag y1 … yn       */
    const char *tgt_tok[PAIR_MAX];
    char translation[512];             /* the model's own (greedy) output  */
} Pair;

static void pair_free(Pair *p) { tokens_free(&p->words); }

/* Tokenizes and encodes text; warns about unknown words.  0 or -1 (printed). */
static int pair_source(Demo *d, Pair *p, const char *text) {
    memset(p, 0, sizeof *p);
    if (tokenizer_split(&p->words, text, d->err, sizeof d->err) != 0) { cli_error("%s", d->err); return -1; }
    p->S = p->words.n + 1;
    if (p->S > PAIR_MAX || p->S > d->mf.m.config.max_len) {
        cli_error("\"%s\" is too long for this model (%d tokens)", text, p->words.n);
        return -1;
    }
    int unk[PAIR_MAX];
    int n_unk = vocab_encode(&d->mf.v, (const char *const *)p->words.tok, p->words.n, p->src, unk);
    p->src[p->words.n] = VOCAB_EOS;
    for (int i = 0; i < p->words.n; i++) p->src_tok[i] = p->words.tok[i];
    p->src_tok[p->words.n] = vocab_word(&d->mf.v, VOCAB_EOS);
    if (n_unk > 0) {
        cli_warn("\"%s\": '%s' is not in the model's vocabulary (read as <unk>)", text, p->words.tok[unk[0]]);
        d->n_warnings++;
    }
    return 0;
}

/* Translates (greedy) and, when target is given, runs the decoder on it instead
 * (teacher forcing).  Afterwards the model's activations are those of (src, tgt). */
static int pair_translate(Demo *d, Pair *p, int tag, const char *target) {
    int max_out = d->mf.m.config.max_len < PAIR_MAX - 1 ? d->mf.m.config.max_len : PAIR_MAX - 1;
    if (decode_greedy(&d->mf.m, p->src, p->S, tag, max_out, p->tgt, &p->T, d->err, sizeof d->err) != 0) {
        cli_error("%s", d->err);
        return -1;
    }
    if (vocab_decode(&d->mf.v, p->tgt, p->T, VOCAB_DECODE_SKIP_SPECIAL, p->translation, sizeof p->translation, d->err,
                     sizeof d->err) < 0)
        snprintf(p->translation, sizeof p->translation, "(too long to show)");
    if (target) {
        Tokens tt = {0};
        if (tokenizer_split(&tt, target, d->err, sizeof d->err) != 0) { cli_error("%s", d->err); return -1; }
        if (tt.n + 1 > max_out) { tokens_free(&tt); cli_error("target \"%s\" is too long", target); return -1; }
        p->tgt[0] = tag;
        int unk[PAIR_MAX];
        if (vocab_encode(&d->mf.v, (const char *const *)tt.tok, tt.n, p->tgt + 1, unk) > 0) {
            cli_warn("\"%s\": '%s' is not in the model's vocabulary (read as <unk>)", target, tt.tok[unk[0]]);
            d->n_warnings++;
        }
        p->T = tt.n + 1;
        tokens_free(&tt);
        int one = 1;
        if (model_forward(&d->mf.m, p->src, &p->S, p->S, p->tgt, &p->T, p->T, one) != 0) {
            cli_error("model: %s", d->mf.m.err);
            return -1;
        }
    }
    for (int t = 0; t < p->T; t++) p->tgt_tok[t] = vocab_word(&d->mf.v, p->tgt[t]);
    return 0;
}

static int pair_trace(Demo *d, Pair *p, Trace *t, int with_steps) {
    if (model_trace(&d->mf.m, 0, t, p->src_tok, p->tgt_tok, with_steps) != 0) {
        cli_error("model: %s", d->mf.m.err);
        return -1;
    }
    return 0;
}

static int find_tok(const char *const *tok, int n, const char *w) {
    for (int i = 0; i < n; i++)
        if (!strcmp(tok[i], w)) return i;
    return -1;
}

/* ------------------------------------------------------------ part 3 (model) */

int demo_part3_model(Demo *d) {
    Pair p, b1, b2;
    memset(&p, 0, sizeof p); memset(&b1, 0, sizeof b1); memset(&b2, 0, sizeof b2);
    Trace t, tb, ta;
    trace_init(&t); trace_init(&tb); trace_init(&ta);
    int rc = -1;
    char cap[1536], capvi[1536], cmd[1024], title[256];

    /* The model's decoder masked self-attention. */
    static const char *const s_en = "i go to school .";
    if (pair_source(d, &p, s_en) || pair_translate(d, &p, VOCAB_2FR, NULL) || pair_trace(d, &p, &t, 0)) goto done;
    const TraceMap *m = trace_find_map(&t, "decoder.0.masked_self");
    if (!m) { cli_error("model has no decoder masked self-attention"); goto done; }
    snprintf(title, sizeof title, "decoder layer 0 · masked self-attention · head 0");
    char sub[600];
    snprintf(sub, sizeof sub, "%s → %s", s_en, p.translation);
    RenderHeatmap hm = mapview_weights_heatmap(m, 0, title, sub, -1);
    hm.show_values = 1;
    snprintf(cap, sizeof cap,
             "The trained model's decoder translating “%s” → “%s”: every query row uses only itself and earlier "
             "tokens; the hatched cells above the diagonal are the future, masked with −∞, weight exactly 0.",
             s_en, p.translation);
    snprintf(capvi, sizeof capvi,
             "Decoder của mô hình khi dịch “%s” → “%s”: mỗi hàng query chỉ dùng chính nó và các token trước; các ô "
             "gạch chéo phía trên đường chéo là tương lai, bị che bằng −∞, trọng số đúng bằng 0.",
             s_en, p.translation);
    demo_cmd(d, cmd, sizeof cmd, "attnviz run", "--to fr \"i go to school .\"   (decoder.0.masked_self.h0.png)");
    if (demo_heatmap(d, "p3-decoder-masked.png", &hm, cap, capvi, cmd)) goto done;
    trace_add_image(&t, "p3-decoder-masked.png");
    if (demo_write_trace(d, &t, "p3-decoder.trace.json")) goto done;

    /* A padded batch: two sentences of different lengths. */
    static const char *const e1 = "the cat sat on the mat .", *const e2 = "i go to school .";
    if (pair_source(d, &b1, e1) || pair_translate(d, &b1, VOCAB_2FR, NULL)) goto done;
    if (pair_source(d, &b2, e2) || pair_translate(d, &b2, VOCAB_2FR, NULL) || pair_trace(d, &b2, &ta, 0)) goto done;
    int S = b1.S > b2.S ? b1.S : b2.S, T = b1.T > b2.T ? b1.T : b2.T;
    int src[2 * PAIR_MAX], tgt[2 * PAIR_MAX], sl[2] = {b1.S, b2.S}, tl[2] = {b1.T, b2.T};
    const Pair *bp[2] = {&b1, &b2};
    for (int r = 0; r < 2; r++) {
        for (int x = 0; x < S; x++) src[r * S + x] = x < bp[r]->S ? bp[r]->src[x] : VOCAB_PAD;
        for (int x = 0; x < T; x++) tgt[r * T + x] = x < bp[r]->T ? bp[r]->tgt[x] : VOCAB_PAD;
    }
    if (model_forward(&d->mf.m, src, sl, S, tgt, tl, T, 2) != 0) { cli_error("model: %s", d->mf.m.err); goto done; }
    if (model_trace(&d->mf.m, 1, &tb, b2.src_tok, b2.tgt_tok, 0) != 0) { cli_error("model: %s", d->mf.m.err); goto done; }
    const TraceMap *mb = trace_find_map(&tb, "encoder.0.self"), *ma = trace_find_map(&ta, "encoder.0.self");
    if (!mb || !ma) { cli_error("model has no encoder self-attention"); goto done; }
    /* Same weights as the sentence alone? (real rows and keys) */
    double diff = 0;
    for (int h = 0; h < mb->n_heads; h++)
        for (int i = 0; i < b2.S; i++)
            for (int j = 0; j < S; j++) {
                float wa = j < b2.S ? ma->heads[h].weights[i * b2.S + j] : 0.0f;
                double e = fabs((double)mb->heads[h].weights[i * S + j] - (double)wa);
                if (e > diff) diff = e;
            }
    float padm[2 * PAIR_MAX];
    char plab[PAIR_MAX][8];
    const char *pl[PAIR_MAX];
    for (int x = 0; x < S; x++) {
        snprintf(plab[x], sizeof plab[x], "%d", x);
        pl[x] = plab[x];
        padm[x] = x < b1.S;
        padm[S + x] = x < b2.S;
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
    snprintf(cap, sizeof cap,
             "Two sentences in one batch are padded to the same length (%d): “%s” (%d tokens with <eos>) and “%s” "
             "(%d + %d × <pad>). The padding mask hides the <pad> keys (hatched), so sentence 2's attention is the "
             "same as when it runs alone (largest difference %.1e). The <pad> query rows are computed but never "
             "used.",
             S, e1, b1.S, e2, b2.S, S - b2.S, diff);
    snprintf(capvi, sizeof capvi,
             "Hai câu trong một batch được đệm tới cùng độ dài (%d): “%s” (%d token kể cả <eos>) và “%s” (%d + %d × "
             "<pad>). Mặt nạ padding che các key <pad> (gạch chéo), nên attention của câu 2 giống hệt khi chạy "
             "riêng (sai khác lớn nhất %.1e). Các hàng query <pad> vẫn được tính nhưng không bao giờ được dùng.",
             S, e1, b1.S, e2, b2.S, S - b2.S, diff);
    demo_cmd(d, cmd, sizeof cmd, "attnviz run --batch", "\"the cat sat on the mat .\" \"i go to school .\"");
    if (demo_strip(d, "p3-padding-batch.png", "a padded batch: the mask hides <pad>", pp, 2, 0, cap, capvi, cmd)) goto done;
    trace_add_image(&tb, "p3-padding-batch.png");
    if (demo_write_trace(d, &tb, "p3-padding.trace.json")) goto done;
    rc = 0;
done:
    pair_free(&p); pair_free(&b1); pair_free(&b2);
    trace_free(&t); trace_free(&tb); trace_free(&ta);
    return rc;
}

/* ------------------------------------------------------------ part 4 */

int demo_part4(Demo *d) {
    static const char *const s_en = "she ate the pizza with mushrooms .";
    const ModelConfig *c = &d->mf.m.config;
    Pair p;
    Trace t;
    trace_init(&t);
    int rc = -1, H = c->n_heads, Dk = c->d_model / c->n_heads, C = c->d_model;
    char cap[1536], capvi[1536], cmd[1024];
    if (pair_source(d, &p, s_en) || pair_translate(d, &p, VOCAB_2FR, NULL) || pair_trace(d, &p, &t, 0)) goto done;
    int T = p.S;
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
            cli_error("p4-split-concat.png: %s", d->err);
            goto done;
        }
        demo_cmd(d, cmd, sizeof cmd, "attnviz info", NULL);
        if (demo_add(d, "p4-split-concat.png", cap, capvi, cmd)) goto done;
        trace_add_image(&t, "p4-split-concat.png");
    }
    /* Every head of every encoder layer ("model view"). */
    {
        int E = c->n_enc_layers;
        RenderHeatmap *cellv = calloc((size_t)E * H, sizeof *cellv);
        char (*rt)[24] = calloc((size_t)(E + H), 24);
        const char **rtp = calloc((size_t)(E + H), sizeof(char *));
        if (!cellv || !rt || !rtp) { free(cellv); free(rt); free(rtp); cli_error("out of memory"); goto done; }
        for (int l = 0; l < E; l++) {
            char id[32];
            snprintf(id, sizeof id, "encoder.%d.self", l);
            const TraceMap *m = trace_find_map(&t, id);
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
                 s_en, p.translation);
        snprintf(capvi, sizeof capvi,
                 "Mọi head của mọi lớp encoder trên “%s” (bản dịch: “%s”). Mỗi head có W_q, W_k, W_v riêng nên mỗi "
                 "head vẽ một mẫu khác nhau từ cùng một câu — lý do bài học dùng nhiều head. Việc mỗi head làm là do "
                 "học mà có, không phải do thiết kế: hãy đọc mẫu, đừng giả định.",
                 s_en, p.translation);
        demo_cmd(d, cmd, sizeof cmd, "attnviz run", "\"she ate the pizza with mushrooms .\"   (grid.encoder.self.png)");
        int r = demo_grid(d, "p4-heads.png", title, cellv, E, H, rtp, rtp + E, cap, capvi, cmd);
        free(cellv); free(rt); free(rtp);
        if (r) goto done;
        trace_add_image(&t, "p4-heads.png");
    }
    rc = demo_write_trace(d, &t, "p4.trace.json");
done:
    pair_free(&p);
    trace_free(&t);
    return rc;
}

/* ------------------------------------------------------------ part 5 */

int demo_part5(Demo *d) {
    static const char *const s_en = "the cat sat on the mat .";
    Pair p;
    Trace t;
    trace_init(&t);
    int rc = -1;
    char cap[1536], capvi[1536], cmd[1024], title[600];
    if (pair_source(d, &p, s_en) || pair_translate(d, &p, VOCAB_2FR, NULL) || pair_trace(d, &p, &t, 0)) goto done;
    if (!p.translation[0]) snprintf(p.translation, sizeof p.translation, "(nothing: the model stops at once)");
    int L = d->mf.m.config.n_dec_layers - 1, E = d->mf.m.config.n_enc_layers - 1;
    char id[3][40];
    snprintf(id[0], 40, "encoder.%d.self", E);
    snprintf(id[1], 40, "decoder.%d.masked_self", L);
    snprintf(id[2], 40, "decoder.%d.cross", L);
    static const char *const names[3] = {"encoder self-attention", "decoder masked self-attention",
                                         "encoder–decoder (cross) attention"};
    static const char *const sub[3] = {"Q, K, V: English", "Q, K, V: French so far", "Q: French · K, V: English"};
    RenderHeatmap pn[3];
    char ttl[3][96];
    for (int k = 0; k < 3; k++) {
        const TraceMap *m = trace_find_map(&t, id[k]);
        if (!m) { cli_error("model has no map %s", id[k]); goto done; }
        snprintf(ttl[k], sizeof ttl[k], "%s (layer %d, head 0)", names[k], m->layer);
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
    snprintf(title, sizeof title, "three kinds of attention: “%s” → “%s”", s_en, p.translation);
    snprintf(cap, sizeof cap,
             "“%s” → “%s”, head 0 of the last layer of each kind. Left: square, nothing masked. Middle: square, "
             "the future hatched. Right: rectangular — rows are French (decoder) positions, columns English "
             "(encoder) words; this is where the translation reads the source.", s_en, p.translation);
    snprintf(capvi, sizeof capvi,
             "“%s” → “%s”, head 0 của lớp cuối mỗi loại. Trái: ma trận vuông, không che gì. Giữa: vuông, phần tương "
             "lai bị gạch chéo. Phải: hình chữ nhật — hàng là vị trí tiếng Pháp (decoder), cột là từ tiếng Anh "
             "(encoder); đây là nơi bản dịch đọc câu nguồn.", s_en, p.translation);
    demo_cmd(d, cmd, sizeof cmd, "attnviz run", "\"the cat sat on the mat .\"   (grid.*.png, one per kind)");
    if (demo_strip(d, "p5-three-kinds.png", title, pn, 3, 0, cap, capvi, cmd)) goto done;
    trace_add_image(&t, "p5-three-kinds.png");
    rc = demo_write_trace(d, &t, "p5.trace.json");
done:
    pair_free(&p);
    trace_free(&t);
    return rc;
}

/* ------------------------------------------------------------ part 6 */

int demo_part6(Demo *d) {
    static const char *const sent[2] = {"the animal didn't cross the street because it was too tired .",
                                        "the animal didn't cross the street because it was too wide ."};
    static const char *const gold[2] = {"animal", "street"}, *const pron[2] = {"il", "elle"};
    static const char *const tag[2] = {"tired", "wide"};
    Pair p[2];
    Trace t[2];
    memset(p, 0, sizeof p);
    trace_init(&t[0]); trace_init(&t[1]);
    int rc = -1, q[2];
    char cap[2048], capvi[2048], cmd[1024], title[256], file[64];
    for (int k = 0; k < 2; k++) {
        if (pair_source(d, &p[k], sent[k]) || pair_translate(d, &p[k], VOCAB_2FR, NULL) || pair_trace(d, &p[k], &t[k], 0))
            goto done;
        q[k] = find_tok(p[k].src_tok, p[k].S, "it");
        if (q[k] < 0) { cli_error("\"it\" not found in \"%s\"", sent[k]); goto done; }
    }
    /* Which head: the eval's best (metadata), else the strongest on these two sentences. */
    const ModelConfig *c = &d->mf.m.config;
    double acc;
    if (maps_coref_head_from_metadata(d->mf.metadata, d->mf.m.config.n_enc_layers, d->mf.m.config.n_heads, &d->coref_layer, &d->coref_head, &acc)) {
        char id[32];
        snprintf(id, sizeof id, "encoder.%d.self", d->coref_layer);
        d->coref_taught = maps_head_supervised(d->mf.metadata, id, d->coref_head);
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
                    maps_strongest_link(trace_find_map(&t[k], id), h, q[k], &w);
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
        right_pron[k] = find_tok(p[k].tgt_tok, p[k].T, pron[k]) >= 0 &&
                        find_tok(p[k].tgt_tok, p[k].T, pron[1 - k]) < 0;
        const TraceMap *m = trace_find_map(&t[k], id);
        key[k] = maps_strongest_link(m, d->coref_head, q[k], &kw[k]);
        right_link[k] = key[k] >= 0 && !strcmp(m->keys[key[k]], gold[k]);
        size_t len = strlen(pre);
        snprintf(pre + len, sizeof pre - len, "%s\n  → fr: %s   (expected pronoun: %s — %s)\n", sent[k], p[k].translation,
                 pron[k], right_pron[k] ? "right" : "WRONG");
    }
    html_pre(&d->page, pre);
    for (int k = 0; k < 2; k++) {
        const TraceMap *m = trace_find_map(&t[k], id);
        const char *got = key[k] >= 0 ? m->keys[key[k]] : "?";
        snprintf(title, sizeof title, "encoder layer %d · head %d%s · “it” (…too %s)", d->coref_layer, d->coref_head,
                 d->coref_taught ? " (taught)" : "", tag[k]);
        snprintf(cap, sizeof cap,
                 "“…because it was too %s”: the strongest link of “it” is “%s” (weight %.2f); the antecedent is "
                 "“%s”, so this head is %s here. The translation “%s” uses %s. Head: %s.",
                 tag[k], got, (double)kw[k], gold[k], right_link[k] ? "right" : "WRONG", p[k].translation,
                 right_pron[k] ? (k ? "elle, as it should" : "il, as it should") : "the wrong pronoun (or none)",
                 d->coref_how);
        snprintf(capvi, sizeof capvi,
                 "“…because it was too %s”: liên kết mạnh nhất của “it” là “%s” (trọng số %.2f); tiền ngữ đúng là "
                 "“%s”, nên head này %s ở đây. Bản dịch “%s” dùng %s. Head: encoder lớp %d head %d (%s).",
                 tag[k], got, (double)kw[k], gold[k], right_link[k] ? "đúng" : "SAI", p[k].translation,
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
        if (demo_lines(d, file, title, (const char *const *)m->queries, m->Tq, (const char *const *)m->keys, m->Tk,
                       m->heads[d->coref_head].weights, m->mask, q[k], cap, capvi, cmd))
            goto done;
        trace_add_image(&t[k], file);
        char sub[256];
        snprintf(sub, sizeof sub, "row “it” outlined · %s", sent[k]);
        RenderHeatmap hm = mapview_weights_heatmap(m, d->coref_head, title, sub, q[k]);
        snprintf(file, sizeof file, "p6-coref-%s-heatmap.png", tag[k]);
        if (demo_heatmap(d, file, &hm, "The same head as a heatmap; the row of “it” is outlined.",
                         "Cùng head đó dạng bản đồ nhiệt; hàng của “it” được viền.", cmd))
            goto done;
        trace_add_image(&t[k], file);
        snprintf(file, sizeof file, "p6-%s.trace.json", tag[k]);
        if (demo_write_trace(d, &t[k], file)) goto done;
    }
    rc = 0;
done:
    pair_free(&p[0]); pair_free(&p[1]);
    trace_free(&t[0]); trace_free(&t[1]);
    return rc;
}

/* ------------------------------------------------------------ part 8 */

int demo_part8(Demo *d) {
    static const char *const s_en = "i go to school .", *const s_vi = "tôi đi học .";
    Pair p;
    Trace t;
    trace_init(&t);
    int rc = -1;
    char cap[2048], capvi[2048], cmd[1024], title[256];
    if (pair_source(d, &p, s_en) || pair_translate(d, &p, VOCAB_2VI, s_vi) || pair_trace(d, &p, &t, 0)) goto done;
    int row = find_tok(p.tgt_tok, p.T, "học");
    const TraceMap *m = trace_find_map(&t, "decoder.0.masked_self");
    if (row < 0 || !m) { cli_error("\"học\" is not in the model's vocabulary or no decoder map"); goto done; }
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
    snprintf(title, sizeof title, "decoder layer 0 · masked self-attention · head 0 · row “học”");
    char sub[256];
    snprintf(sub, sizeof sub, "%s → %s", s_en, s_vi);
    RenderHeatmap hm = mapview_weights_heatmap(m, 0, title, sub, row);
    hm.show_values = 1;
    snprintf(cap, sizeof cap,
             "The row of “học” (outlined) may use %s — itself and what came before — and not %s, which is masked "
             "(−∞ → weight 0). At this row the decoder has read up to “học” and predicts the next word, so seeing "
             "“%s” would be cheating. The model's own greedy translation is “%s”.",
             seen, hidden[0] ? hidden : "(nothing)", hidden[0] ? hidden : "", p.translation);
    snprintf(capvi, sizeof capvi,
             "Hàng của “học” (được viền) được dùng %s — chính nó và những gì đứng trước — và không được dùng %s, bị "
             "che (−∞ → trọng số 0). Ở hàng này decoder đã đọc tới “học” và dự đoán từ tiếp theo, nên nhìn thấy "
             "“%s” là gian lận. Bản dịch greedy của chính mô hình là “%s”.",
             seen, hidden[0] ? hidden : "(không có)", hidden[0] ? hidden : "", p.translation);
    demo_cmd(d, cmd, sizeof cmd, "attnviz run", "--to vi --target \"tôi đi học .\" \"i go to school .\"");
    if (demo_heatmap(d, "p8-vi-decoder-hoc.png", &hm, cap, capvi, cmd)) goto done;
    trace_add_image(&t, "p8-vi-decoder-hoc.png");
    if (demo_lines(d, "p8-vi-lines-hoc.png", "what “học” sees: decoder layer 0 · head 0",
                   (const char *const *)m->queries, m->Tq, (const char *const *)m->keys, m->Tk, m->heads[0].weights,
                   m->mask, row,
                   "The same row as lines: one line from “học” to each key it may see, thicker for more weight; the "
                   "masked future has no line.",
                   "Cùng hàng đó dạng đường nối: một đường từ “học” tới mỗi key nó được nhìn, càng đậm càng nhiều "
                   "trọng số; tương lai bị che không có đường nào.",
                   cmd))
        goto done;
    trace_add_image(&t, "p8-vi-lines-hoc.png");
    rc = demo_write_trace(d, &t, "p8.trace.json");
done:
    pair_free(&p);
    trace_free(&t);
    return rc;
}

/* ------------------------------------------------------------ part 9 */

/* Reads a whole file (NUL-terminated), or NULL. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && n < (1L << 30) && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
            if (fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
            else buf[n] = '\0';
        }
    }
    fclose(f);
    return buf;
}

/* Snapshot file of the model: PATH minus .safetensors plus .snapshots.json. */
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

static int part9_skip(Demo *d, const char *why_en, const char *why_vi) {
    html_raw(&d->page, "<p>");
    html_text(&d->page, why_en);
    html_raw(&d->page, "</p>\n<p lang=\"vi\">");
    html_text(&d->page, why_vi);
    html_raw(&d->page, "</p>\n");
    cli_warn("part 9 skipped: %s", why_en);
    d->n_warnings++;
    return 0;
}

#define SNAP_MAX_STEPS 8
#define SNAP_MAX_SENT 2

int demo_part9(Demo *d) {
    char path[4200], msg[4600];
    snapshot_path(d, path, sizeof path);
    html_section(&d->page, "p9", "9. Watching a head learn",
                 "While the model was trained, the encoder's attention on the coreference sentences was saved at "
                 "a few points; here is the coreference head of part 6 at each of them.",
                 "Trong lúc huấn luyện, attention của encoder trên các câu đồng tham chiếu được lưu lại ở vài thời "
                 "điểm; đây là head đồng tham chiếu của phần 6 tại mỗi thời điểm đó.");
    char *text = slurp(path);
    if (!text) {
        snprintf(msg, sizeof msg, "No training snapshots next to the model (%s); this part is skipped. They are "
                 "written by attnviz train --snapshots.", path);
        return part9_skip(d, msg, "Không có ảnh chụp quá trình huấn luyện bên cạnh mô hình; phần này được bỏ qua. "
                                  "Chúng được ghi bởi attnviz train --snapshots.");
    }
    char *clean = nan_to_null(text);
    free(text);
    cJSON *root = clean ? cJSON_Parse(clean) : NULL;
    free(clean);
    const cJSON *sents = root ? cJSON_GetObjectItemCaseSensitive(root, "sentences") : NULL;
    const cJSON *snaps = root ? cJSON_GetObjectItemCaseSensitive(root, "snapshots") : NULL;
    const cJSON *fmt = root ? cJSON_GetObjectItemCaseSensitive(root, "format") : NULL;
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "attnviz-snapshots") || !cJSON_IsArray(sents) ||
        !cJSON_IsArray(snaps) || cJSON_GetArraySize(snaps) == 0) {
        cJSON_Delete(root);
        snprintf(msg, sizeof msg, "%s is not an attnviz-snapshots file this version reads; this part is skipped.", path);
        return part9_skip(d, msg, "Tệp ảnh chụp huấn luyện không đọc được; phần này được bỏ qua.");
    }
    /* Columns: up to SNAP_MAX_STEPS snapshots spread over the list (first and last kept). */
    int n_snap = cJSON_GetArraySize(snaps), nc = n_snap < SNAP_MAX_STEPS ? n_snap : SNAP_MAX_STEPS;
    int pick[SNAP_MAX_STEPS];
    for (int k = 0; k < nc; k++) pick[k] = nc == 1 ? 0 : (int)((long)k * (n_snap - 1) / (nc - 1));
    /* Rows: the sentences containing "it" (at most two). */
    int rows_s[SNAP_MAX_SENT], it_row[SNAP_MAX_SENT], nr = 0;
    char *toks[SNAP_MAX_SENT][PAIR_MAX];
    int ntok[SNAP_MAX_SENT];
    char rtitle[SNAP_MAX_SENT][96];
    for (int s = 0; s < cJSON_GetArraySize(sents) && nr < SNAP_MAX_SENT; s++) {
        const cJSON *st = cJSON_GetArrayItem(sents, s);
        const cJSON *tk = cJSON_GetObjectItemCaseSensitive(st, "source_tokens");
        int n = cJSON_GetArraySize(tk), it = -1;
        if (!cJSON_IsArray(tk) || n < 1 || n > PAIR_MAX) continue;
        for (int j = 0; j < n; j++) {
            const cJSON *w = cJSON_GetArrayItem(tk, j);
            toks[nr][j] = cJSON_IsString(w) ? w->valuestring : "?";
            if (it < 0 && !strcmp(toks[nr][j], "it")) it = j;
        }
        if (it < 0) continue;
        const char *last = n >= 3 ? toks[nr][n - 3] : toks[nr][0];   /* "… too tired ." <eos> */
        snprintf(rtitle[nr], sizeof rtitle[nr], "“…too %s”", last);
        ntok[nr] = n;
        it_row[nr] = it;
        rows_s[nr++] = s;
    }
    float *vals = calloc((size_t)SNAP_MAX_SENT * SNAP_MAX_STEPS * PAIR_MAX * PAIR_MAX, sizeof(float));
    RenderHeatmap cells[SNAP_MAX_SENT * SNAP_MAX_STEPS];
    char ctitle[SNAP_MAX_STEPS][48], losses[512] = "";
    const char *ct[SNAP_MAX_STEPS], *rt[SNAP_MAX_SENT];
    int ok = vals && nr > 0;
    for (int r = 0; r < nr && ok; r++) {
        rt[r] = rtitle[r];
        for (int k = 0; k < nc && ok; k++) {
            const cJSON *sn = cJSON_GetArrayItem(snaps, pick[k]);
            const cJSON *ss = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sn, "sentences"), rows_s[r]);
            const cJSON *mp = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ss, "maps"), d->coref_layer);
            const cJSON *hd = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(mp, "heads"), d->coref_head);
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(hd, "weights");
            int n = ntok[r];
            float *v = vals + ((size_t)r * SNAP_MAX_STEPS + k) * PAIR_MAX * PAIR_MAX;
            if (cJSON_GetArraySize(w) != n) { ok = 0; break; }
            for (int i = 0; i < n && ok; i++) {
                const cJSON *row = cJSON_GetArrayItem(w, i);
                if (cJSON_GetArraySize(row) != n) { ok = 0; break; }
                for (int j = 0; j < n; j++) {
                    const cJSON *x = cJSON_GetArrayItem(row, j);
                    v[i * n + j] = cJSON_IsNumber(x) ? (float)x->valuedouble : 0.0f;
                }
            }
            RenderHeatmap *c = &cells[r * nc + k];
            memset(c, 0, sizeof *c);
            c->values = v; c->rows = n; c->cols = n;
            c->row_labels = (const char *const *)toks[r]; c->col_labels = (const char *const *)toks[r];
            c->cmap = RENDER_CMAP_VIRIDIS; c->vmax = 1; c->show_values = 0; c->highlight_row = it_row[r];
            if (r == 0) {
                const cJSON *step = cJSON_GetObjectItemCaseSensitive(sn, "step");
                const cJSON *loss = cJSON_GetObjectItemCaseSensitive(sn, "loss");
                snprintf(ctitle[k], sizeof ctitle[k], "step %ld", cJSON_IsNumber(step) ? (long)step->valuedouble : -1L);
                ct[k] = ctitle[k];
                size_t len = strlen(losses);
                if (cJSON_IsNumber(loss) && isfinite(loss->valuedouble))
                    snprintf(losses + len, sizeof losses - len, "%s%s: %.2f", len ? ", " : "", ctitle[k], loss->valuedouble);
            }
        }
    }
    int rc = 0;
    if (!ok) {
        snprintf(msg, sizeof msg, "%s does not hold the coreference sentences with encoder layer %d head %d; this part "
                 "is skipped.", path, d->coref_layer, d->coref_head);
        rc = part9_skip(d, msg, "Tệp ảnh chụp huấn luyện không có dữ liệu cần thiết; phần này được bỏ qua.");
    } else {
        char title[256], cap[2048], capvi[2048];
        snprintf(title, sizeof title, "encoder layer %d · head %d%s during training (row “it” outlined)", d->coref_layer,
                 d->coref_head, d->coref_taught ? " (taught)" : "");
        snprintf(cap, sizeof cap,
                 "The coreference head of part 6 (encoder layer %d, head %d) at %d points of training, on the two "
                 "sentences; the row of “it” is outlined. At step 0 the weights are those of a random model. "
                 "Training loss at those points: %s.%s",
                 d->coref_layer, d->coref_head, nc, losses[0] ? losses : "not recorded",
                 d->coref_taught ? " This head is trained with the gold antecedent as a target, so these pictures show it "
                                   "being taught, and how fast the link becomes sharp." : "");
        snprintf(capvi, sizeof capvi,
                 "Head đồng tham chiếu của phần 6 (encoder lớp %d, head %d) tại %d thời điểm huấn luyện, trên hai "
                 "câu; hàng của “it” được viền. Ở bước 0 trọng số là của mô hình ngẫu nhiên. Loss huấn luyện tại các "
                 "thời điểm đó: %s.%s",
                 d->coref_layer, d->coref_head, nc, losses[0] ? losses : "không ghi lại",
                 d->coref_taught ? " Head này được huấn luyện với tiền ngữ đúng làm mục tiêu, nên các hình cho thấy nó được "
                                   "dạy, và liên kết sắc nét nhanh thế nào." : "");
        rc = demo_grid(d, "p9-training-snapshots.png", title, cells, nr, nc, rt, ct, cap, capvi,
                       "attnviz train --snapshots …   (see docs/model-card.md), then attnviz demo");
    }
    free(vals);
    cJSON_Delete(root);
    return rc;
}
