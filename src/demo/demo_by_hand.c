/* demo_by_hand.c — the parts of the lesson that need no model (see demo.h):
 * attention step by step on the lesson's small examples (part 1), why divide by
 * √d_k (2), masking by hand and the mask fill values (3), positional encoding (7). */
#include "demo/demo_by_hand.h"
#include "core/attention.h"
#include "core/rng.h"
#include "model/model.h"
#include "render/stepview.h"
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends printf text to a fixed buffer. */
static void cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t n, const char *fmt, ...) {
    size_t len = strlen(buf);
    if (len + 1 >= n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

/* "[a, b, c]" with 3 decimals. */
static void fmt_row(char *buf, size_t n, const float *x, int k) {
    buf[0] = '\0';
    cat(buf, n, "[");
    for (int j = 0; j < k; j++) cat(buf, n, "%s%.3f", j ? ", " : "", (double)x[j]);
    cat(buf, n, "]");
}

/* Adds one custom map with every step to a trace. */
static int trace_custom(Trace *t, const char *id, const char *const *ql, int Tq, const char *const *kl, int Tk,
                        int d_k, int scaled, const unsigned char *mask, float fill, const AttnSteps *s) {
    TraceMap *m = trace_add_map(t, &(TraceMapSpec){.id = id, .stack = "custom", .layer = 0, .kind = "custom",
                                                   .queries = ql, .Tq = Tq, .keys = kl, .Tk = Tk, .d_k = d_k,
                                                   .Dv = s->Dv, .mask = mask, .mask_fill = fill, .n_heads = 1});
    if (!m) return -1;
    m->scaled_by_sqrt_dk = scaled;
    return trace_set_head(m, 0, s->weights, s->scores, s->scaled, s->masked, s->Dv > 0 ? s->output : NULL);
}

/* ------------------------------------------------------------ part 1 */

int demo_steps_by_hand(Demo *d) {
    html_section(&d->page, "p1", "1. Scaled dot-product attention, step by step",
                 "Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V on the lesson's small examples. Every number "
                 "in the cells is computed by attnviz; the trace file p1.trace.json keeps them all.",
                 "Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k) · V trên các ví dụ nhỏ của bài học. Mọi con số "
                 "trong ô đều do attnviz tính; tệp p1.trace.json lưu toàn bộ.");
    int rc = -1;
    Trace t;
    trace_init(&t);
    AttnSteps s1 = {0}, s2 = {0};
    static const float Q[3] = {1, 2, 3}, K[6] = {2, 1, 0, 1, 2, 3}, V[4] = {1, 2, 3, 4};
    /* labelled as `attnviz steps` prints them (q0, k0 k1, d0 d1), the command the caption quotes */
    static const char *const ql[] = {"q0"}, *const kl[] = {"k0", "k1"}, *const vl[] = {"d0", "d1"};
    if (attn_steps_alloc(&s1, 1, 2, 2)) goto oom;
    AttnHead h1 = {.q = Q, .ldq = 3, .k = K, .ldk = 3, .v = V, .ldv = 2, .mask_fill = -INFINITY,
                   .scale = 1.0f / sqrtf(3.0f), .Tq = 1, .Tk = 2, .D = 3, .Dv = 2, .steps = &s1};
    attention_forward(&h1);

    char pre[2048] = "", a[128], b[128];
    cat(pre, sizeof pre, "Q = [[1, 2, 3]]   K = [[2, 1, 0], [1, 2, 3]]   V = [[1, 2], [3, 4]]   d_k = 3\n");
    cat(pre, sizeof pre, "1. Q·Kᵀ        = [1·2 + 2·1 + 3·0, 1·1 + 2·2 + 3·3] = [%g, %g]\n", (double)s1.scores[0],
        (double)s1.scores[1]);
    fmt_row(a, sizeof a, s1.scaled, 2);
    cat(pre, sizeof pre, "2. ÷ √3 (1.732) = %s\n", a);
    fmt_row(a, sizeof a, s1.weights, 2);
    cat(pre, sizeof pre, "3. no mask      (step 3, + M, is skipped)\n");
    cat(pre, sizeof pre, "4. softmax     = %s\n", a);
    fmt_row(b, sizeof b, s1.output, 2);
    cat(pre, sizeof pre, "5. · V         = %.3f·[1, 2] + %.3f·[3, 4] = %s\n", (double)s1.weights[0],
        (double)s1.weights[1], b);
    StepView sv = {.x = {s1.scores, s1.scaled, NULL, s1.weights, s1.output},
                   .title = {"1. scores = Q·Kᵀ", "2. scaled = ÷ √d_k", NULL, "4. weights = softmax(scaled)",
                             "5. output = weights · V"},
                   .subtitle = {NULL, "d_k = 3", NULL, "no mask: step 3 (+ M) skipped"}, .Tq = 1, .Tk = 2, .Dv = 2, .queries = ql, .keys = kl, .dims = vl,
                   .show_values = 1};
    RenderHeatmap p[STEP_COUNT];
    stepview_panels(&sv, p, NULL);
    char cap[1024], capvi[1024];
    snprintf(cap, sizeof cap,
             "One query q = [1, 2, 3] against two keys: scores [%g, %g], scaled by 1/√3, softmax gives %.3f and %.3f "
             "— almost all the weight on k1, the key that points the same way as q0 — and the output is that mix of "
             "the value rows.",
             (double)s1.scores[0], (double)s1.scores[1], (double)s1.weights[0], (double)s1.weights[1]);
    snprintf(capvi, sizeof capvi,
             "Một query q = [1, 2, 3] với hai key: điểm [%g, %g], chia cho √3, softmax cho %.3f và %.3f — gần như "
             "toàn bộ trọng số dồn vào k1, key cùng hướng với q0 — và đầu ra là tổ hợp tương ứng của các hàng V.",
             (double)s1.scores[0], (double)s1.scores[1], (double)s1.weights[0], (double)s1.weights[1]);
    if (demo_strip(d, "p1-qk-steps.png", "Q = [[1,2,3]], K = [[2,1,0],[1,2,3]], V = [[1,2],[3,4]]", p, 4, 1, cap, capvi,
                   "attnviz steps --q '[[1,2,3]]' --k '[[2,1,0],[1,2,3]]' --v '[[1,2],[3,4]]'"))
        goto done;
    html_pre(&d->page, pre);
    if (trace_custom(&t, "lesson.qk", ql, 1, kl, 2, 3, 1, NULL, -INFINITY, &s1)) goto oom;

    /* The 3×3 scores example (already scaled), with a V so the last step shows. */
    static const float S3[9] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f};
    static const float V3[6] = {1, 0, 0, 1, 1, 1};
    static const char *const tk[] = {"I", "am", "happy"};
    if (attn_steps_alloc(&s2, 3, 3, 2)) goto oom;
    AttnHead h2 = {.v = V3, .ldv = 2, .mask_fill = -INFINITY, .Tq = 3, .Tk = 3, .Dv = 2, .steps = &s2};
    attention_from_scores(&h2, S3);
    pre[0] = '\0';
    for (int i = 0; i < 3; i++) {
        fmt_row(a, sizeof a, s2.weights + 3 * i, 3);
        cat(pre, sizeof pre, "softmax(%.1f, %.1f, %.1f) = %s\n", (double)S3[3 * i], (double)S3[3 * i + 1],
            (double)S3[3 * i + 2], a);
    }
    char pre3[sizeof pre];
    snprintf(pre3, sizeof pre3, "%s", pre);
    StepView sv2 = {.x = {s2.scores, NULL, NULL, s2.weights, s2.output},
                    .title = {"1. scores (already scaled)", NULL, NULL, "2. weights = softmax",
                              "3. output = weights · V"},
                    .subtitle = {[STEP_OUTPUT] = "V = [[1,0],[0,1],[1,1]]"}, .Tq = 3, .Tk = 3, .Dv = 2, .queries = tk,
                    .keys = tk, .dims = vl, .show_values = 1};
    RenderHeatmap p2[STEP_COUNT];
    stepview_panels(&sv2, p2, NULL);
    fmt_row(a, sizeof a, s2.weights + 6, 3);
    snprintf(cap, sizeof cap,
             "The lesson's 3×3 scores without a mask. Every row gets the same weights %s: within a row the scores "
             "step by 0.1 each time, and softmax only sees differences (adding 0.3 or 0.6 to a whole row changes "
             "nothing). Each output row is that mix of V's rows.", a);
    snprintf(capvi, sizeof capvi,
             "Ma trận điểm 3×3 của bài học, chưa có mặt nạ. Mọi hàng có cùng trọng số %s: trong một hàng các điểm "
             "cách nhau 0.1, và softmax chỉ phụ thuộc vào hiệu số (cộng 0.3 hay 0.6 vào cả hàng không đổi gì). Mỗi "
             "hàng đầu ra là tổ hợp tương ứng của các hàng V.", a);
    if (demo_strip(d, "p1-3x3-steps.png", "scores 3×3 → softmax → · V", p2, 3, 1, cap, capvi,
                   "attnviz steps --scores '[[0.1,0.2,0.3],[0.4,0.5,0.6],[0.7,0.8,0.9]]' --v '[[1,0],[0,1],[1,1]]' "
                   "--tokens I,am,happy"))
        goto done;
    html_pre(&d->page, pre3);
    if (trace_custom(&t, "lesson.scores3x3", tk, 3, tk, 3, 0, 0, NULL, -INFINITY, &s2)) goto oom;
    trace_add_image(&t, "p1-qk-steps.png");
    trace_add_image(&t, "p1-3x3-steps.png");
    rc = demo_write_trace(d, &t, "p1.trace.json");
    goto done;
oom:
    demo_fail(d, "out of memory");
done:
    attn_steps_free(&s1);
    attn_steps_free(&s2);
    trace_free(&t);
    return rc;
}

/* ------------------------------------------------------------ part 2: √d_k */

#define SQ_N_DK 4
#define SQ_DRAWS 2000
#define SQ_KEYS 8
static const int sq_dk[SQ_N_DK] = {16, 64, 256, 512};

typedef struct {
    double std_raw, std_scaled;      /* standard deviation of q·k and of q·k/√d_k       */
    double max_raw, max_scaled;      /* mean largest softmax weight over SQ_KEYS keys     */
    double jac_raw, jac_scaled;      /* mean Frobenius norm of ∂softmax/∂scores           */
} SqRow;

/* softmax of x (n) into p; returns max p and sets *jac = ‖diag(p) − p·pᵀ‖_F. */
static double softmax_stats(const double *x, int n, double *jac) {
    double mx = x[0], sum = 0, p[SQ_KEYS], s2 = 0, s3 = 0, best = 0;
    for (int j = 1; j < n; j++) if (x[j] > mx) mx = x[j];
    for (int j = 0; j < n; j++) { p[j] = exp(x[j] - mx); sum += p[j]; }
    for (int j = 0; j < n; j++) {
        p[j] /= sum;
        s2 += p[j] * p[j];
        s3 += p[j] * p[j] * p[j];
        if (p[j] > best) best = p[j];
    }
    double f = s2 - 2 * s3 + s2 * s2;   /* Σ J_ij², J = diag(p) − p·pᵀ */
    *jac = sqrt(f > 0 ? f : 0);
    return best;
}

static void sqrt_dk_experiment(SqRow rows[SQ_N_DK]) {
    double *q = malloc(sizeof(double) * 512), *k = malloc(sizeof(double) * 512);
    for (int t = 0; t < SQ_N_DK; t++) {
        int D = sq_dk[t];
        Rng r = rng_from_state(0x9E3779B97F4A7C15ULL ^ (uint64_t)D);
        double s1 = 0, s2 = 0, mr = 0, ms = 0, jr = 0, js = 0, sc = 1.0 / sqrt(D);
        for (int n = 0; n < SQ_DRAWS; n++) {
            double raw[SQ_KEYS], scl[SQ_KEYS], jac;
            for (int i = 0; i < D; i++) q[i] = rng_normal(&r);
            for (int j = 0; j < SQ_KEYS; j++) {
                double dot = 0;
                for (int i = 0; i < D; i++) { k[i] = rng_normal(&r); dot += q[i] * k[i]; }
                raw[j] = dot;
                scl[j] = dot * sc;
                s1 += dot;
                s2 += dot * dot;
            }
            mr += softmax_stats(raw, SQ_KEYS, &jac); jr += jac;
            ms += softmax_stats(scl, SQ_KEYS, &jac); js += jac;
        }
        double cnt = (double)SQ_DRAWS * SQ_KEYS, mean = s1 / cnt, var = s2 / cnt - mean * mean;
        rows[t].std_raw = sqrt(var > 0 ? var : 0);
        rows[t].std_scaled = rows[t].std_raw * sc;
        rows[t].max_raw = mr / SQ_DRAWS;
        rows[t].max_scaled = ms / SQ_DRAWS;
        rows[t].jac_raw = jr / SQ_DRAWS;
        rows[t].jac_scaled = js / SQ_DRAWS;
    }
    free(q);
    free(k);
}

int demo_why_sqrt_dk(Demo *d) {
    SqRow R[SQ_N_DK];
    sqrt_dk_experiment(R);
    html_section(&d->page, "p2", "2. Why divide by √d_k",
                 "An experiment, not a single draw: for each d_k, 2000 queries q and 8 keys k per query with every "
                 "entry drawn from N(0, 1) (fixed seed). A dot product of d_k such terms has variance d_k, so its "
                 "spread grows like √d_k; softmax of such large scores puts almost all weight on one key, and its "
                 "gradient (the Jacobian diag(p) − p·pᵀ) shrinks towards zero, so training barely moves. Dividing by "
                 "√d_k brings the spread back to 1 for every d_k.",
                 "Một thí nghiệm, không phải một lần bốc ngẫu nhiên: với mỗi d_k, 2000 query q và 8 key cho mỗi "
                 "query, mọi phần tử lấy từ N(0, 1) (seed cố định). Tích vô hướng của d_k số hạng như vậy có phương "
                 "sai d_k, nên độ lớn tăng theo √d_k; softmax của điểm lớn dồn gần hết trọng số vào một key và "
                 "gradient (ma trận Jacobi diag(p) − p·pᵀ) tiến về 0, mô hình gần như không học được. Chia cho √d_k "
                 "đưa độ lệch chuẩn về 1 với mọi d_k.");
    /* The table: stdout, the page (pre) and a picture. */
    char text[2048] = "";
    cat(text, sizeof text, "√d_k experiment: %d draws per d_k, %d keys, q and k ~ N(0, 1), seeded\n", SQ_DRAWS, SQ_KEYS);
    cat(text, sizeof text, "%5s %11s %11s %11s %11s %11s %11s\n", "d_k", "std_raw", "std_scaled", "maxw_raw",
        "maxw_scaled", "jac_raw", "jac_scaled");
    for (int t = 0; t < SQ_N_DK; t++)
        cat(text, sizeof text, "%5d %11.4f %11.4f %11.4f %11.4f %11.3e %11.3e\n", sq_dk[t], R[t].std_raw, R[t].std_scaled,
            R[t].max_raw, R[t].max_scaled, R[t].jac_raw, R[t].jac_scaled);
    snprintf(d->report, sizeof d->report, "%s", text);
    html_pre(&d->page, text);

    float x[SQ_N_DK], y[6][SQ_N_DK], sq[SQ_N_DK], uni[SQ_N_DK];
    for (int t = 0; t < SQ_N_DK; t++) {
        x[t] = (float)sq_dk[t];
        y[0][t] = (float)R[t].std_raw; y[1][t] = (float)R[t].std_scaled;
        y[2][t] = (float)R[t].max_raw; y[3][t] = (float)R[t].max_scaled;
        y[4][t] = (float)R[t].jac_raw; y[5][t] = (float)R[t].jac_scaled;
        sq[t] = sqrtf(x[t]);
        uni[t] = 1.0f / SQ_KEYS;
    }
    const char *cmd = "attnviz demo   (part 2)";
    RenderSeries s_std[2] = {{"q·k (no scaling)", y[0]}, {"q·k / √d_k", y[1]}};
    RenderPlot p1 = {"How large the scores get: std of q·k grows like √d_k", "d_k (log scale)",
                     "standard deviation (log scale)", x, SQ_N_DK, s_std, 2, 1, 1, 1};
    char cap[1024], capvi[1024];
    snprintf(cap, sizeof cap,
             "Raw scores spread like √d_k: std %.2f at d_k = 16 (√16 = 4), %.2f at d_k = 512 (√512 = %.2f). After "
             "÷√d_k the spread stays about 1 (%.3f … %.3f).", R[0].std_raw, R[3].std_raw, (double)sq[3],
             R[0].std_scaled, R[3].std_scaled);
    snprintf(capvi, sizeof capvi,
             "Điểm thô có độ lệch chuẩn tăng như √d_k: %.2f khi d_k = 16 (√16 = 4), %.2f khi d_k = 512 (√512 = %.2f). "
             "Sau khi chia √d_k nó giữ quanh 1 (%.3f … %.3f).", R[0].std_raw, R[3].std_raw, (double)sq[3],
             R[0].std_scaled, R[3].std_scaled);
    if (demo_plot(d, "p2-sqrtdk-std.png", &p1, cap, capvi, cmd)) return -1;

    RenderSeries s_max[3] = {{"softmax(q·k)", y[2]}, {"softmax(q·k / √d_k)", y[3]}, {"uniform 1/8", uni}};
    RenderPlot p2 = {"How peaked softmax becomes: mean largest weight over 8 keys", "d_k (log scale)",
                     "mean largest weight", x, SQ_N_DK, s_max, 3, 1, 0, 1};
    snprintf(cap, sizeof cap,
             "Without scaling the largest of 8 weights is %.2f on average at d_k = 16 and %.2f at d_k = 512 — "
             "nearly one-hot; with scaling it stays at %.2f–%.2f whatever d_k.",
             R[0].max_raw, R[3].max_raw, R[0].max_scaled, R[3].max_scaled);
    snprintf(capvi, sizeof capvi,
             "Không chia, trọng số lớn nhất trong 8 trung bình là %.2f khi d_k = 16 và %.2f khi d_k = 512 — gần như "
             "one-hot; có chia, nó giữ ở %.2f–%.2f với mọi d_k.",
             R[0].max_raw, R[3].max_raw, R[0].max_scaled, R[3].max_scaled);
    if (demo_plot(d, "p2-sqrtdk-peaked.png", &p2, cap, capvi, cmd)) return -1;

    RenderSeries s_jac[2] = {{"no scaling", y[4]}, {"÷ √d_k", y[5]}};
    RenderPlot p3 = {"How small the gradient gets: mean ‖∂softmax/∂scores‖ (Frobenius)", "d_k (log scale)",
                     "mean Jacobian norm (log scale)", x, SQ_N_DK, s_jac, 2, 1, 1, 1};
    snprintf(cap, sizeof cap,
             "The softmax Jacobian diag(p) − p·pᵀ tells how much the weights move when a score moves. Unscaled its "
             "norm falls from %.3f (d_k = 16) to %.3f (d_k = 512); scaled it stays near %.2f.",
             R[0].jac_raw, R[3].jac_raw, R[3].jac_scaled);
    snprintf(capvi, sizeof capvi,
             "Ma trận Jacobi diag(p) − p·pᵀ của softmax cho biết trọng số thay đổi bao nhiêu khi điểm thay đổi. "
             "Không chia, chuẩn của nó giảm từ %.3f (d_k = 16) xuống %.3f (d_k = 512); có chia, nó giữ quanh %.2f.",
             R[0].jac_raw, R[3].jac_raw, R[3].jac_scaled);
    if (demo_plot(d, "p2-sqrtdk-gradient.png", &p3, cap, capvi, cmd)) return -1;

    /* Picture of the table of means. */
    enum { TC = 7 };
    char buf[SQ_N_DK][TC][32];
    const char *cells[(SQ_N_DK + 1) * TC] = {"d_k", "std q·k", "std q·k/√d_k", "max weight, raw", "max weight ÷√d_k",
                                             "‖J‖ raw", "‖J‖ ÷√d_k"};
    for (int t = 0; t < SQ_N_DK; t++) {
        snprintf(buf[t][0], 32, "%d", sq_dk[t]);
        snprintf(buf[t][1], 32, "%.2f", R[t].std_raw);
        snprintf(buf[t][2], 32, "%.3f", R[t].std_scaled);
        snprintf(buf[t][3], 32, "%.3f", R[t].max_raw);
        snprintf(buf[t][4], 32, "%.3f", R[t].max_scaled);
        snprintf(buf[t][5], 32, "%.2e", R[t].jac_raw);
        snprintf(buf[t][6], 32, "%.3f", R[t].jac_scaled);
        for (int c = 0; c < TC; c++) cells[(t + 1) * TC + c] = buf[t][c];
    }
    return demo_table(d, "p2-sqrtdk-table.png", "√d_k experiment: means over 2000 draws × 8 keys per d_k", cells,
                      SQ_N_DK + 1, TC,
                      "The same numbers as a table (also printed by attnviz demo). A different seed changes the "
                      "last digits, not the picture.",
                      "Cùng các số đó dạng bảng (attnviz demo cũng in ra). Seed khác chỉ đổi vài chữ số cuối, "
                      "không đổi bức tranh.",
                      cmd);
}

/* ------------------------------------------------------------ part 3: masking by hand */

int demo_masking_by_hand(Demo *d, Trace *t) {
    html_section(&d->page, "p3", "3. Masking",
                 "A mask says which keys a query may use. Masked scores are replaced by −∞ before softmax, so their "
                 "weight is exactly 0. Causal masks keep a decoder from reading the future; padding masks make "
                 "<pad> tokens invisible.",
                 "Mặt nạ (mask) cho biết query được phép nhìn những key nào. Điểm bị che được thay bằng −∞ trước "
                 "softmax nên trọng số đúng bằng 0. Mặt nạ nhân quả ngăn decoder nhìn tương lai; mặt nạ padding "
                 "làm token <pad> trở nên vô hình.");
    /* The causal mask itself. */
    static const char *const vt[] = {"<2vi>", "tôi", "đi", "học", "."};
    unsigned char cm[25];
    float cmf[25];
    attn_causal_mask(cm, 5, 5);
    for (int i = 0; i < 25; i++) cmf[i] = cm[i];
    RenderHeatmap hm = stepview_matrix("causal mask M (1 = may attend, 0 = masked)", "row i sees keys 0 … i", cmf, 5, 5, vt, vt,
                             RENDER_CMAP_VIRIDIS);
    hm.row_axis = "query (position i)";
    hm.col_axis = "key (position j)";
    if (demo_heatmap(d, "p3-causal-mask.png", &hm,
                     "The causal mask of a 5-token decoder input: 1 on and below the diagonal, 0 above it. A 0 "
                     "becomes −∞ added to the score, so position i never sees positions after i.",
                     "Mặt nạ nhân quả cho đầu vào decoder 5 token: các ô nằm trên đường chéo chính và các ô bên dưới "
                     "nó bằng 1 (hàng i được nhìn cột j khi j ≤ i); các ô phía trên đường chéo bằng 0. Số 0 trở "
                     "thành −∞ cộng vào điểm, nên vị trí i không bao giờ thấy các vị trí sau i.",
                     "attnviz demo   (part 3; the mask of: attnviz steps --mask causal)"))
        return -1;

    /* Masked softmax on the lesson's 3×3 scores. */
    static const float S3[9] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f};
    static const char *const tk[] = {"I", "am", "happy"};
    unsigned char m3[9];
    attn_causal_mask(m3, 3, 3);
    AttnSteps s = {0};
    int rc = -1;
    if (attn_steps_alloc(&s, 3, 3, 0)) goto oom;
    AttnHead hm3 = {.mask = m3, .mask_fill = -INFINITY, .Tq = 3, .Tk = 3, .steps = &s};
    attention_from_scores(&hm3, S3);
    char pre[1024] = "", a[128];
    cat(pre, sizeof pre, "row 0: softmax(0.1)           = [1.000, 0, 0]\n");
    fmt_row(a, sizeof a, s.weights + 3, 2);
    cat(pre, sizeof pre, "row 1: softmax(0.4, 0.5)      = %s, 0\n", a);
    fmt_row(a, sizeof a, s.weights + 6, 3);
    cat(pre, sizeof pre, "row 2: softmax(0.7, 0.8, 0.9) = %s\n", a);
    StepView sv = {.x = {s.scores, NULL, s.masked, s.weights, NULL},
                   .title = {"1. scores", NULL, "2. + mask", "3. softmax"},
                   .subtitle = {NULL, NULL, "future → −∞", "rows sum to 1"}, .Tq = 3, .Tk = 3, .queries = tk,
                   .keys = tk, .mask = m3, .show_values = 1};
    RenderHeatmap p[STEP_COUNT];
    stepview_panels(&sv, p, NULL);
    char cap[1024], capvi[1024];
    fmt_row(a, sizeof a, s.weights + 6, 3);
    snprintf(cap, sizeof cap,
             "Masked softmax on the lesson's 3×3 scores: each row is normalised over the keys it may see, so row 1 "
             "is softmax(0.4, 0.5) = [%.3f, %.3f] and row 2 is softmax(0.7, 0.8, 0.9) = %s.",
             (double)s.weights[3], (double)s.weights[4], a);
    snprintf(capvi, sizeof capvi,
             "Softmax có mặt nạ trên ma trận điểm 3×3 của bài học: mỗi hàng chuẩn hóa trên các key nó được nhìn, "
             "nên hàng 1 là softmax(0.4, 0.5) = [%.3f, %.3f] và hàng 2 là softmax(0.7, 0.8, 0.9) = %s.",
             (double)s.weights[3], (double)s.weights[4], a);
    if (demo_strip(d, "p3-masked-softmax.png", "masked softmax: scores + M → softmax", p, 3, 1, cap, capvi,
                   "attnviz steps --scores '[[0.1,0.2,0.3],[0.4,0.5,0.6],[0.7,0.8,0.9]]' --mask causal "
                   "--tokens I,am,happy"))
        goto done;
    html_pre(&d->page, pre);
    if (trace_custom(t, "lesson.causal3x3", tk, 3, tk, 3, 0, 0, m3, -INFINITY, &s)) goto oom;
    trace_add_image(t, "p3-causal-mask.png");
    trace_add_image(t, "p3-masked-softmax.png");
    rc = 0;
    goto done;
oom:
    demo_fail(d, "out of memory");
done:
    attn_steps_free(&s);
    return rc;
}

/* −∞ vs −10000 vs −1e9: the same weights for normal rows, a difference for a
 * fully masked row.  Runs after the model's masking pictures. */
int demo_mask_fill_values(Demo *d, Trace *t) {
    static const float S3[9] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f};
    static const char *const tk[] = {"I", "am", "happy"};
    static const float fills[3] = {-INFINITY, -10000.0f, -1e9f};
    static const char *const ftitle[3] = {"fill −∞", "fill −10000", "fill −1e9"};
    static const char *const fid[2][3] = {{"fill.causal.-inf", "fill.causal.-10000", "fill.causal.-1e9"},
                                          {"fill.fully_masked.-inf", "fill.fully_masked.-10000", "fill.fully_masked.-1e9"}};
    unsigned char mk[2][9];
    attn_causal_mask(mk[0], 3, 3);
    memcpy(mk[1], mk[0], 9);
    mk[1][0] = 0;   /* row 0 sees nothing */
    AttnSteps s[2][3];
    memset(s, 0, sizeof s);
    int rc = -1, full[2][3];
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 3; k++) {
            if (attn_steps_alloc(&s[c][k], 3, 3, 0)) { demo_fail(d, "out of memory"); goto done; }
            AttnHead hf = {.mask = mk[c], .mask_fill = fills[k], .Tq = 3, .Tk = 3, .steps = &s[c][k]};
            full[c][k] = attention_from_scores(&hf, S3);
        }
    /* Largest difference between the three fills on the rows that see at least one key. */
    double diff[2] = {0, 0};
    for (int c = 0; c < 2; c++)
        for (int k = 1; k < 3; k++)
            for (int i = c; i < 3; i++)       /* case 1: row 0 is the fully masked one */
                for (int j = 0; j < 3; j++) {
                    double e = fabs((double)s[c][k].weights[i * 3 + j] - (double)s[c][0].weights[i * 3 + j]);
                    if (e > diff[c]) diff[c] = e;
                }
    html_section(&d->page, "p3-fill", "3e. −∞, −10000 or −1e9?",
                 "The lesson's code fills masked scores with −10000 or −1e9; attnviz uses −∞ by default. For a row "
                 "that still sees a key they give the same float32 weights: exp(−10000 − max) is exactly 0. They "
                 "differ only when a row sees no key at all.",
                 "Code trong bài dùng −10000 hoặc −1e9 cho điểm bị che; attnviz mặc định dùng −∞. Với hàng vẫn còn "
                 "ít nhất một key, cả ba cho cùng trọng số float32: exp(−10000 − max) đúng bằng 0. Chúng chỉ khác "
                 "nhau khi một hàng không được nhìn key nào.");
    static const char *const files[2] = {"p3-fill-causal.png", "p3-fill-fully-masked.png"};
    for (int c = 0; c < 2; c++) {
        RenderHeatmap p[3];
        for (int k = 0; k < 3; k++) {
            p[k] = stepview_matrix(ftitle[k], c ? "row 0: every key masked" : "causal mask", s[c][k].weights, 3, 3, tk, tk,
                         RENDER_CMAP_VIRIDIS);
            if (c == 1) p[k].highlight_row = 0;
        }
        char cap[1024], capvi[1024], cmd[512], r0[3][128];
        if (c == 0) {
            snprintf(cap, sizeof cap,
                     "Causal mask, three fill values: the weights are identical (largest difference %g), because "
                     "exp of a score 10000 below the row's maximum underflows to exactly 0 in float32.", diff[0]);
            snprintf(capvi, sizeof capvi,
                     "Mặt nạ nhân quả với ba giá trị che: trọng số giống hệt nhau (sai khác lớn nhất %g), vì exp của "
                     "một điểm thấp hơn giá trị lớn nhất của hàng 10000 đơn vị bằng đúng 0 trong float32.", diff[0]);
            snprintf(cmd, sizeof cmd,
                     "attnviz steps --scores '[[0.1,0.2,0.3],[0.4,0.5,0.6],[0.7,0.8,0.9]]' --mask causal "
                     "--mask-fill -10000   (or -1e9, or -inf)");
        } else {
            for (int k = 0; k < 3; k++) fmt_row(r0[k], sizeof r0[k], s[c][k].weights, 3);
            snprintf(cap, sizeof cap,
                     "Row 0 has every key masked. With −∞ the softmax is 0/0, undefined; attnviz defines the row "
                     "as zeros %s (and warns: %d fully masked row). With −10000 or −1e9 every score in the row is "
                     "the same number, so softmax quietly returns the uniform %s / %s — weight on keys that should "
                     "be invisible. Rows 1–2 are unchanged (largest difference %g).",
                     r0[0], full[c][0], r0[1], r0[2], diff[1]);
            snprintf(capvi, sizeof capvi,
                     "Hàng 0 bị che toàn bộ key. Với −∞, softmax là 0/0, không xác định; attnviz quy ước cả hàng "
                     "bằng 0 %s (và cảnh báo: %d hàng bị che hết). Với −10000 hoặc −1e9 mọi điểm trong hàng bằng "
                     "nhau nên softmax âm thầm trả về phân phối đều %s / %s — đặt trọng số lên những key lẽ ra vô "
                     "hình. Hàng 1–2 không đổi (sai khác lớn nhất %g).",
                     r0[0], full[c][0], r0[1], r0[2], diff[1]);
            snprintf(cmd, sizeof cmd,
                     "attnviz steps --scores '[[0.1,0.2,0.3],[0.4,0.5,0.6],[0.7,0.8,0.9]]' --mask "
                     "'[[0,0,0],[1,1,0],[1,1,1]]' --mask-fill -1e9   (or -10000, or -inf)");
        }
        if (demo_strip(d, files[c], c ? "a fully masked row: −∞ vs −10000 vs −1e9" : "causal mask: −∞ vs −10000 vs −1e9",
                       p, 3, 0, cap, capvi, cmd))
            goto done;
        trace_add_image(t, files[c]);
        for (int k = 0; k < 3; k++)
            if (trace_custom(t, fid[c][k], tk, 3, tk, 3, 0, 0, mk[c], fills[k], &s[c][k])) {
                demo_fail(d, "out of memory");
                goto done;
            }
    }
    rc = 0;
done:
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 3; k++) attn_steps_free(&s[c][k]);
    return rc;
}

/* ------------------------------------------------------------ part 7: positional encoding */

int demo_positional_encoding(Demo *d) {
    int P = d->mf.m.config.max_len < 50 ? d->mf.m.config.max_len : 50, C = d->mf.m.config.d_model;
    float *pe = malloc(sizeof(float) * P * C), *sim = malloc(sizeof(float) * P * P);
    char **pl = malloc(sizeof(char *) * (P > C ? P : C)), *lb = malloc(12 * (size_t)(P > C ? P : C));   /* 12 bytes a label: any int */
    int rc = -1;
    if (!pe || !sim || !pl || !lb) { demo_fail(d, "out of memory"); goto done; }
    for (int i = 0; i < (P > C ? P : C); i++) { pl[i] = lb + 12 * i; snprintf(pl[i], 12, "%d", i); }
    model_positional_encoding(pe, P, C);
    for (int i = 0; i < P; i++)
        for (int j = 0; j < P; j++) {
            double dot = 0, ni = 0, nj = 0;
            for (int c = 0; c < C; c++) {
                dot += (double)pe[i * C + c] * pe[j * C + c];
                ni += (double)pe[i * C + c] * pe[i * C + c];
                nj += (double)pe[j * C + c] * pe[j * C + c];
            }
            sim[i * P + j] = (float)(dot / sqrt(ni * nj));
        }
    html_section(&d->page, "p7", "7. Positional encoding",
                 "Attention itself ignores word order, so the model adds a position vector to every token "
                 "embedding: PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / "
                 "10000^(2i/d_model)).",
                 "Bản thân attention không biết thứ tự từ, nên mô hình cộng một vector vị trí vào embedding của mỗi "
                 "token: PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).");
    char title[256], cap[1024], capvi[1024];
    snprintf(title, sizeof title, "positional encoding, %d positions × d_model = %d", P, C);
    RenderHeatmap hm = {0};
    hm.title = title;
    hm.subtitle = "sin on even dimensions, cos on odd ones";
    hm.values = pe;
    hm.rows = P;
    hm.cols = C;
    hm.row_labels = (const char *const *)pl;
    hm.col_labels = (const char *const *)pl;
    hm.row_axis = "position";
    hm.col_axis = "dimension";
    hm.cmap = RENDER_CMAP_DIVERGING;
    hm.vmin = -1;
    hm.vmax = 1;
    hm.show_values = 0;
    hm.highlight_row = -1;
    snprintf(cap, sizeof cap,
             "This model's sinusoids (d_model = %d): the first dimensions oscillate fast with the position, the "
             "later ones slowly (wavelengths from 2π to 10000·2π), so every position gets a distinct pattern.", C);
    snprintf(capvi, sizeof capvi,
             "Các sóng sin/cos của mô hình này (d_model = %d): các chiều đầu dao động nhanh theo vị trí, các chiều "
             "sau dao động chậm (bước sóng từ 2π đến 10000·2π), nên mỗi vị trí có một mẫu riêng.", C);
    if (demo_heatmap(d, "p7-pe-matrix.png", &hm, cap, capvi, "attnviz demo   (part 7)")) goto done;
    snprintf(title, sizeof title, "cosine similarity of positions: PE·PEᵀ / (‖PE_i‖‖PE_j‖)");
    RenderHeatmap hs = hm;
    hs.title = title;
    hs.subtitle = NULL;
    hs.values = sim;
    hs.cols = P;
    hs.col_axis = "position";
    snprintf(cap, sizeof cap,
             "Similarity of every pair of positions: 1 on the diagonal, high for neighbours and falling with the "
             "distance |i − j| — the same along every diagonal, which is what lets attention use relative "
             "positions. (Position 0 vs 1: %.3f, 0 vs 10: %.3f, 0 vs %d: %.3f.)",
             (double)sim[1], (double)sim[10 < P ? 10 : P - 1], P - 1, (double)sim[P - 1]);
    snprintf(capvi, sizeof capvi,
             "Độ tương đồng của mọi cặp vị trí: 1 trên đường chéo, cao với vị trí kề bên và giảm theo khoảng cách "
             "|i − j| — như nhau dọc mỗi đường chéo, nhờ đó attention dùng được vị trí tương đối. (Vị trí 0 và 1: "
             "%.3f, 0 và 10: %.3f, 0 và %d: %.3f.)",
             (double)sim[1], (double)sim[10 < P ? 10 : P - 1], P - 1, (double)sim[P - 1]);
    if (demo_heatmap(d, "p7-pe-similarity.png", &hs, cap, capvi, "attnviz demo   (part 7)")) goto done;
    rc = 0;
done:
    free(pe); free(sim); free(pl); free(lb);
    return rc;
}
