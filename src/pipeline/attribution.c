/* attribution.c — direct logit attribution of a predicted token (attribution.h). */
#include "pipeline/attribution.h"
#include "core/errmsg.h"
#include "core/strbuf.h"
#include "pipeline/importance.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int attribution_compute(Attribution *at, HfFile *f, const HfInput *in, int pos, int token, char *err, size_t errlen) {
    memset(at, 0, sizeof *at);
    HfShape sh = hf_file_shape(f);
    at->kinds = 1;
    at->L = sh.n_layer;
    at->H = sh.n_head;
    at->position = pos;
    at->token_id = token;
    at->step = -1;
    snprintf(at->map_fmt[0], sizeof at->map_fmt[0], "%s", hf_file_causal(f) ? "decoder.%d.masked_self" : "encoder.%d.self");
    hf_file_token_text(f, token, at->token, sizeof at->token);
    at->heads = calloc((size_t)at->L * at->H + 1, sizeof *at->heads);
    at->mlp = calloc((size_t)at->L + 1, sizeof *at->mlp);
    if (!at->heads || !at->mlp) { attribution_free(at); return errmsg_set(err, errlen, "out of memory"); }
    StackAttribution sa = {.heads = at->heads, .mlp = at->mlp};
    if (hf_file_attribution(f, in, pos, token, &sa, err, errlen)) { attribution_free(at); return -1; }
    at->logit = sa.logit;
    at->embedding = sa.embedding;
    at->bias = sa.bias;
    return 0;
}

/* The word the teacher expects when none is given: the translation of the
 * first pronoun, else the first word written.  Sets at->what, at->what_vi. */
static int chosen_word(Attribution *at, const Sentence *s) {
    int q, t;
    importance_pronoun(s, &q, &t);
    if (t >= 0) {
        snprintf(at->what, sizeof at->what, "the translation of “%s”", s->words.tok[q]);
        snprintf(at->what_vi, sizeof at->what_vi, "bản dịch của “%s”", s->words.tok[q]);
        return t;
    }
    snprintf(at->what, sizeof at->what, "%s", s->given ? "the first word of the translation given" : "the first word written");
    snprintf(at->what_vi, sizeof at->what_vi, "%s", s->given ? "từ đầu tiên của bản dịch cho trước" : "từ đầu tiên được viết");
    return 0;
}

int attribution_compute_model(Attribution *at, Model *m, const Sentence *s, int t, char *err, size_t errlen) {
    memset(at, 0, sizeof *at);
    const ModelConfig *c = &m->config;
    if (c->arch == MODEL_ENCODER_ONLY) return errmsg_set(err, errlen, "--attribution: the model has no decoder");
    if (t < 0) {
        t = chosen_word(at, s);
    } else {
        snprintf(at->what, sizeof at->what, "the word written at decoder position %d", t);
        snprintf(at->what_vi, sizeof at->what_vi, "từ được viết ở vị trí %d của decoder", t);
    }
    if (t >= s->T) return errmsg_set(err, errlen, "--attribution: the translation has no decoder position %d", t);
    at->kinds = c->arch == MODEL_ENC_DEC ? 2 : 1;
    at->L = c->n_dec_layers;
    at->H = c->n_heads;
    at->position = t;
    at->token_id = t + 1 < s->T ? s->tgt[t + 1] : VOCAB_EOS;
    at->step = -1;
    at->every_norm = !c->prenorm;
    snprintf(at->token, sizeof at->token, "%s", t + 1 < s->T ? s->tgt_tok[t + 1] : "<eos>");
    snprintf(at->map_fmt[0], sizeof at->map_fmt[0], "decoder.%%d.masked_self");
    snprintf(at->map_fmt[1], sizeof at->map_fmt[1], "decoder.%%d.cross");
    at->heads = calloc((size_t)2 * at->L * at->H, sizeof *at->heads);
    at->mlp = calloc((size_t)at->L, sizeof *at->mlp);
    if (!at->heads || !at->mlp) { attribution_free(at); return errmsg_set(err, errlen, "out of memory"); }
    int S = s->S, T = s->T;
    ModelAttribution ma = {.heads = at->heads, .mlp = at->mlp};
    if (model_forward(m, &(ModelBatch){s->src, &S, S, s->tgt, &T, T, 1})) {
        errmsg_set(err, errlen, "--attribution: %s", m->err);
        attribution_free(at);
        return -1;
    }
    if (model_attribution(m, 0, t, at->token_id, &ma, err, errlen)) { attribution_free(at); return -1; }
    at->logit = ma.logit;
    at->embedding = ma.embedding;
    at->bias = ma.bias;
    return 0;
}

static double sum_of(const float *v, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += v[i];
    return s;
}

int attribution_top(const Attribution *at, int *idx, int k) {
    int n = 0, N = at->kinds * at->L * at->H;
    for (int i = 0; i < N && k > 0; i++) {   /* the k largest, sorted; map order among equals */
        int j;
        if (n < k) j = n++;
        else if (at->heads[i] > at->heads[idx[k - 1]]) j = k - 1;
        else continue;
        for (; j > 0 && at->heads[idx[j - 1]] < at->heads[i]; j--) idx[j] = idx[j - 1];
        idx[j] = i;
    }
    return n;
}

/* The map of head index i ((kind·L + l)·H + h). */
static void map_of(const Attribution *at, int i, char *map, size_t n) {
    int kl = i / at->H;
    snprintf(map, n, at->map_fmt[kl / at->L], kl % at->L);
}

void attribution_top_text(const Attribution *at, int k, int brief, char *buf, size_t len) {
    int idx[16], n = attribution_top(at, idx, k < 16 ? k : 16);
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && w < len; i++) {
        char map[48];
        map_of(at, idx[i], map, sizeof map);
        double v = at->heads[idx[i]];
        int h = idx[i] % at->H;
        if (brief && at->kinds == 1)
            w += (size_t)snprintf(buf + w, len - w, "%sL%d h%d %+.2f", i ? ", " : "", idx[i] / at->H, h, v);
        else if (brief)
            w += (size_t)snprintf(buf + w, len - w, "%s%s h%d %+.2f", i ? ", " : "", map, h, v);
        else
            w += (size_t)snprintf(buf + w, len - w, "%s%s head %d %+.3f", i ? ", " : "", map, h, v);
    }
}

/* "heads +1.234" or "masked-self heads +1.234 + cross heads +0.567" (vi: in Vietnamese). */
static void heads_sum_text(const Attribution *at, int vi, const char *fmt, char *buf, size_t len) {
    int LH = at->L * at->H;
    char a[32], b[32];
    snprintf(a, sizeof a, fmt, sum_of(at->heads, LH));
    if (at->kinds == 1) { snprintf(buf, len, "%s %s", vi ? "Head" : "heads", a); return; }
    snprintf(b, sizeof b, fmt, sum_of(at->heads + LH, LH));
    snprintf(buf, len, vi ? "Head tự chú ý có mặt nạ %s + head chú ý chéo %s" : "masked-self heads %s + cross heads %s",
             a, b);
}

void attribution_print(const Attribution *at, FILE *out) {
    char top[1024], heads[128], where[256] = "";
    attribution_top_text(at, 5, 0, top, sizeof top);
    heads_sum_text(at, 0, "%+.3f", heads, sizeof heads);
    if (at->what[0]) snprintf(where, sizeof where, "%s; ", at->what);
    fprintf(out, "  attribution of “%s” (%slogit %.3f at %sposition %d) = %s + MLPs %+.3f + embedding %+.3f + "
            "bias %+.3f\n", at->token, where, (double)at->logit, at->what[0] ? "decoder " : "", at->position, heads,
            sum_of(at->mlp, at->L), (double)at->embedding, (double)at->bias);
    if (at->every_norm)
        fprintf(out, "      every LayerNorm after a sublayer frozen at this pass's scale (1/σ), so each part goes "
                "through it alone\n");
    fprintf(out, "      heads that push it up most: %s\n", top);
    fprintf(out, "      (linear bookkeeping of one forward pass, not a causal claim: --importance knocks heads out)\n");
}

static int json_row(StrBuf *b, const float *v, int n) {
    int bad = strbuf_printf(b, "[");
    for (int i = 0; i < n; i++) {
        bad |= i ? strbuf_printf(b, ", ") : 0;
        bad |= strbuf_json_number(b, v[i]);
    }
    return bad | strbuf_printf(b, "]");
}

char *attribution_json(const Attribution *at) {
    StrBuf b = {0};
    int bad = strbuf_printf(&b, "{\"method\": \"direct logit attribution: each part of the residual stream through %s "
                            "(its scale frozen at the forward pass's value) onto the unembedding row of the token; heads%s "
                            "+ mlp + embedding + bias = logit\",\n   \"position\": %d, \"token_id\": %d, \"token\": ",
                            at->every_norm ? "every LayerNorm after it" : "the final norm",
                            at->kinds > 1 ? " + cross_heads" : "", at->position, at->token_id);
    bad |= strbuf_json_string(&b, at->token);
    bad |= strbuf_printf(&b, ", \"logit\": ");
    bad |= strbuf_json_number(&b, at->logit);
    if (at->what[0]) {
        bad |= strbuf_printf(&b, ", \"what\": ");
        bad |= strbuf_json_string(&b, at->what);
    }
    for (int k = 0; k < at->kinds; k++) {
        bad |= strbuf_printf(&b, ",\n   \"%s\": [", k ? "cross_heads" : "heads");
        for (int l = 0; l < at->L; l++) {
            bad |= strbuf_printf(&b, "%s\n    ", l ? "," : "");
            bad |= json_row(&b, at->heads + ((size_t)k * at->L + l) * at->H, at->H);
        }
        bad |= strbuf_printf(&b, "]");
    }
    bad |= strbuf_printf(&b, ",\n   \"mlp\": ");
    bad |= json_row(&b, at->mlp, at->L);
    bad |= strbuf_printf(&b, ", \"embedding\": ");
    bad |= strbuf_json_number(&b, at->embedding);
    bad |= strbuf_printf(&b, ", \"bias\": ");
    bad |= strbuf_json_number(&b, at->bias);
    if (at->step >= 0) bad |= strbuf_printf(&b, ", \"step\": %d", at->step);
    bad |= strbuf_printf(&b, "}");
    if (bad) { free(b.buf); return NULL; }
    return b.buf;
}

void attribution_caption(const Attribution *at, char *en, size_t nen, char *vi, size_t nvi) {
    char heads[128], headsvi[160], which[200] = "", whichvi[200] = "";
    heads_sum_text(at, 0, "%+.2f", heads, sizeof heads);
    heads_sum_text(at, 1, "%+.2f", headsvi, sizeof headsvi);
    heads[0] = (char)toupper((unsigned char)heads[0]);
    if (at->what[0]) {
        snprintf(which, sizeof which, ", %s", at->what);
        snprintf(whichvi, sizeof whichvi, ", %s", at->what_vi);
    }
    const char *norm = at->every_norm ? "every LayerNorm after a sublayer frozen at this pass's scale"
                                      : "the final norm frozen";
    const char *normvi = at->every_norm ? "mọi LayerNorm sau mỗi lớp con giữ cố định hệ số của lượt này"
                                        : "chuẩn hoá cuối giữ cố định";
    snprintf(en, nen, "Each head's share of the logit of “%s”%s (%.2f): its output through W_O, %s, onto "
             "the token's unembedding row. %s + MLPs %+.2f + embedding %+.2f + bias %+.2f = the logit. "
             "Linear bookkeeping, not a causal claim; knock-outs (--importance) test what the model needs.",
             at->token, which, (double)at->logit, norm, heads, sum_of(at->mlp, at->L), (double)at->embedding,
             (double)at->bias);
    snprintf(vi, nvi, "Phần của mỗi head trong logit của “%s”%s (%.2f): đầu ra của head qua W_O, %s, "
             "chiếu lên hàng unembedding của token. %s + MLP %+.2f + embedding %+.2f + bias %+.2f = logit. "
             "Đây là phép cộng tuyến tính, không phải kết luận nhân quả; loại bỏ head (--importance) mới kiểm chứng.",
             at->token, whichvi, (double)at->logit, normvi, headsvi, sum_of(at->mlp, at->L), (double)at->embedding,
             (double)at->bias);
}

int attribution_draw(const char *path, const Attribution *at, const char *text, const RenderMeta *meta, char *err,
                     size_t errlen) {
    int R = at->kinds * at->L, H = at->H;   /* rows: each kind's layers, one kind after the other */
    char (*lab)[40] = malloc((size_t)(R + H) * sizeof *lab);   /* "layer %d", a map name, "head %d" */
    const char **rl = malloc((size_t)(R + H) * sizeof(char *));
    if (!lab || !rl) { free(lab); free(rl); return errmsg_set(err, errlen, "out of memory"); }
    for (int r = 0; r < R; r++) {
        if (at->kinds == 1) snprintf(lab[r], sizeof lab[r], "layer %d", r);
        else map_of(at, r * H, lab[r], sizeof lab[r]);
        rl[r] = lab[r];
    }
    for (int h = 0; h < H; h++) { snprintf(lab[R + h], sizeof lab[0], "head %d", h); rl[R + h] = lab[R + h]; }
    float M = 1e-3f;
    for (int i = 0; i < R * H; i++) M = fabsf(at->heads[i]) > M ? fabsf(at->heads[i]) : M;
    char title[768], sub[1800], top[1024], heads[128], which[256] = "";
    snprintf(title, sizeof title, "Which heads wrote “%s”? Direct logit attribution · %s", at->token, text);
    attribution_top_text(at, 5, 1, top, sizeof top);
    heads_sum_text(at, 0, "%+.2f", heads, sizeof heads);
    if (at->what[0]) snprintf(which, sizeof which, "“%s” is %s · ", at->token, at->what);
    snprintf(sub, sizeof sub, "%stop five (%s): %s · %s + MLPs %+.2f + embedding %+.2f + bias %+.2f = logit %.2f (%s) · "
             "linear bookkeeping, not a causal claim: knock-outs (--importance) test it", which,
             at->kinds == 1 ? "layer L head h" : "map, head h", top, heads, sum_of(at->mlp, at->L),
             (double)at->embedding, (double)at->bias, (double)at->logit,
             at->every_norm ? "every LayerNorm after a sublayer frozen at this pass's scale" : "final norm's scale frozen");
    RenderHeatmap hm = {0};
    hm.title = title;
    hm.subtitle = sub;
    hm.values = at->heads;
    hm.rows = R;
    hm.cols = H;
    hm.row_labels = rl;
    hm.col_labels = rl + R;
    hm.cmap = RENDER_CMAP_DIVERGING;
    hm.vmin = -M;
    hm.vmax = M;
    hm.show_values = -1;
    hm.highlight_row = -1;
    int rc = render_heatmap(path, &hm, meta, err, errlen);
    free(lab); free(rl);
    return rc;
}

void attribution_free(Attribution *at) {
    if (!at) return;
    free(at->heads); free(at->mlp);
    memset(at, 0, sizeof *at);
}
