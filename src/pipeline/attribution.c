/* attribution.c — direct logit attribution of a predicted token (attribution.h). */
#include "pipeline/attribution.h"
#include "core/errmsg.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int attribution_compute(Attribution *at, HfFile *f, const HfInput *in, int pos, int token, char *err, size_t errlen) {
    memset(at, 0, sizeof *at);
    HfShape sh = hf_file_shape(f);
    at->L = sh.n_layer;
    at->H = sh.n_head;
    at->position = pos;
    at->token_id = token;
    at->step = -1;
    snprintf(at->map_fmt, sizeof at->map_fmt, "%s", hf_file_causal(f) ? "decoder.%d.masked_self" : "encoder.%d.self");
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

static double sum_of(const float *v, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += v[i];
    return s;
}

double attribution_sum(const Attribution *at) {
    return sum_of(at->heads, at->L * at->H) + sum_of(at->mlp, at->L) + at->embedding + at->bias;
}

int attribution_top(const Attribution *at, int *idx, int k) {
    int n = 0, N = at->L * at->H;
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

void attribution_top_text(const Attribution *at, int k, int brief, char *buf, size_t len) {
    int idx[16], n = attribution_top(at, idx, k < 16 ? k : 16);
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && w < len; i++) {
        char map[48];
        snprintf(map, sizeof map, at->map_fmt, idx[i] / at->H);
        if (brief)
            w += (size_t)snprintf(buf + w, len - w, "%sL%d h%d %+.2f", i ? ", " : "", idx[i] / at->H, idx[i] % at->H,
                                  (double)at->heads[idx[i]]);
        else
            w += (size_t)snprintf(buf + w, len - w, "%s%s head %d %+.3f", i ? ", " : "", map, idx[i] % at->H,
                                  (double)at->heads[idx[i]]);
    }
}

void attribution_print(const Attribution *at, FILE *out) {
    char top[1024];
    attribution_top_text(at, 5, 0, top, sizeof top);
    fprintf(out, "  attribution of “%s” (logit %.3f at position %d) = heads %+.3f + MLPs %+.3f + embedding %+.3f + "
            "bias %+.3f\n", at->token, (double)at->logit, at->position, sum_of(at->heads, at->L * at->H),
            sum_of(at->mlp, at->L), (double)at->embedding, (double)at->bias);
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
    int bad = strbuf_printf(&b, "{\"method\": \"direct logit attribution: each part of the residual stream through the "
                            "final norm (its scale frozen at the forward pass's value) onto the unembedding row of the "
                            "token; heads + mlp + embedding + bias = logit\",\n   \"position\": %d, \"token_id\": %d, "
                            "\"token\": ", at->position, at->token_id);
    bad |= strbuf_json_string(&b, at->token);
    bad |= strbuf_printf(&b, ", \"logit\": ");
    bad |= strbuf_json_number(&b, at->logit);
    bad |= strbuf_printf(&b, ",\n   \"heads\": [");
    for (int l = 0; l < at->L; l++) {
        bad |= strbuf_printf(&b, "%s\n    ", l ? "," : "");
        bad |= json_row(&b, at->heads + (size_t)l * at->H, at->H);
    }
    bad |= strbuf_printf(&b, "],\n   \"mlp\": ");
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
    double heads = sum_of(at->heads, at->L * at->H), mlp = sum_of(at->mlp, at->L);
    snprintf(en, nen, "Each head's share of the logit of “%s” (%.2f): its output through W_O, the final norm frozen, onto "
             "the token's unembedding row. Heads %+.2f + MLPs %+.2f + embedding %+.2f + bias %+.2f = the logit. "
             "Linear bookkeeping, not a causal claim; knock-outs (--importance) test what the model needs.",
             at->token, (double)at->logit, heads, mlp, (double)at->embedding, (double)at->bias);
    snprintf(vi, nvi, "Phần của mỗi head trong logit của “%s” (%.2f): đầu ra của head qua W_O, chuẩn hoá cuối giữ cố định, "
             "chiếu lên hàng unembedding của token. Head %+.2f + MLP %+.2f + embedding %+.2f + bias %+.2f = logit. "
             "Đây là phép cộng tuyến tính, không phải kết luận nhân quả; loại bỏ head (--importance) mới kiểm chứng.",
             at->token, (double)at->logit, heads, mlp, (double)at->embedding, (double)at->bias);
}

int attribution_draw(const char *path, const Attribution *at, const char *text, const RenderMeta *meta, char *err,
                     size_t errlen) {
    int L = at->L, H = at->H;
    char (*lab)[24] = malloc((size_t)(L + H) * sizeof *lab);   /* "layer %d", "head %d": any int */
    const char **rl = malloc((size_t)(L + H) * sizeof(char *));
    if (!lab || !rl) { free(lab); free(rl); return errmsg_set(err, errlen, "out of memory"); }
    for (int l = 0; l < L; l++) { snprintf(lab[l], sizeof lab[l], "layer %d", l); rl[l] = lab[l]; }
    for (int h = 0; h < H; h++) { snprintf(lab[L + h], sizeof lab[0], "head %d", h); rl[L + h] = lab[L + h]; }
    float M = 1e-3f;
    for (int i = 0; i < L * H; i++) M = fabsf(at->heads[i]) > M ? fabsf(at->heads[i]) : M;
    char title[768], sub[1536], top[1024];
    snprintf(title, sizeof title, "Which heads wrote “%s”? Direct logit attribution · %s", at->token, text);
    attribution_top_text(at, 5, 1, top, sizeof top);
    snprintf(sub, sizeof sub, "top five (layer L head h): %s · heads %+.2f + MLPs %+.2f + embedding %+.2f + bias %+.2f = "
             "logit %.2f (final norm's scale frozen) · linear bookkeeping, not a causal claim: knock-outs (--importance) "
             "are", top,
             sum_of(at->heads, L * H), sum_of(at->mlp, L), (double)at->embedding, (double)at->bias, (double)at->logit);
    RenderHeatmap hm = {0};
    hm.title = title;
    hm.subtitle = sub;
    hm.values = at->heads;
    hm.rows = L;
    hm.cols = H;
    hm.row_labels = rl;
    hm.col_labels = rl + L;
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
