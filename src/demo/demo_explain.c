/* demo_explain.c — part 10 of `attnviz demo` (see demo.h): does attention
 * explain?  The taught model's coreference head draws "it → animal" because
 * training told it to; knocking it out shows the model uses it.  The untaught
 * model (same data and size) translates the pronoun just as well, yet none of
 * its encoder heads draws that arrow; knocking heads out shows where it decides.
 * Every figure in a caption is measured: on this sentence by the knock-outs
 * run here, over the held-out split by `attnviz eval --ablation` (read from
 * each checkpoint's metadata, "eval_ablation"). */
#include "demo/demo_explain.h"
#include "model/checkpoint.h"
#include "pipeline/links.h"
#include "pipeline/look.h"
#include "pipeline/pictures_explain.h"
#include "render/fmt.h"
#include "render/mapview.h"
#include "trace/maps.h"
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const SENTENCE = "the animal didn't cross the street because it was too tired .";

/* ---------------------------------------------- what eval --ablation measured */

/* French, Vietnamese and overall pronoun accuracy of one knock-out row (or the baseline). */
typedef struct { double fr, vi, all; char map[48]; int head; } Fall;

static int fall_of(const cJSON *o, Fall *f) {
    const cJSON *all = cJSON_GetObjectItem(o, "pronoun_accuracy");
    const cJSON *by = cJSON_GetObjectItem(o, "pronoun_accuracy_by_language");
    const cJSON *fr = cJSON_GetObjectItem(by, "fr"), *vi = cJSON_GetObjectItem(by, "vi");
    if (!cJSON_IsNumber(all) || !cJSON_IsNumber(fr)) return -1;
    f->all = all->valuedouble;
    f->fr = fr->valuedouble;
    f->vi = cJSON_IsNumber(vi) ? vi->valuedouble : f->all;
    const cJSON *m = cJSON_GetObjectItem(o, "map"), *h = cJSON_GetObjectItem(o, "head");
    snprintf(f->map, sizeof f->map, "%s", cJSON_IsString(m) ? m->valuestring : "");
    f->head = cJSON_IsNumber(h) ? h->valueint : -1;
    return 0;
}

/* From a model's metadata: the baseline, the row of (map, head) (map NULL: the
 * first row, the most harmful knock-out) and the pairs measured.  0, or -1 when
 * the model has no eval --ablation table. */
static int eval_fall(const char *metadata, const char *map, int head, Fall *base, Fall *row, int *pairs) {
    cJSON *meta = cJSON_Parse(metadata ? metadata : "");
    const cJSON *s = cJSON_GetObjectItem(meta, "eval_ablation");
    cJSON *ab = cJSON_IsString(s) ? cJSON_Parse(s->valuestring) : NULL;
    int rc = -1;
    const cJSON *rows = cJSON_GetObjectItem(ab, "ablation"), *n = cJSON_GetObjectItem(ab, "pairs");
    if (ab && fall_of(cJSON_GetObjectItem(ab, "baseline"), base) == 0 && cJSON_IsArray(rows) && cJSON_IsNumber(n)) {
        *pairs = n->valueint;
        for (const cJSON *r = rows->child; r; r = r->next) {
            if (fall_of(r, row) != 0) break;
            if (!map || (!strcmp(row->map, map) && row->head == head)) { rc = 0; break; }
        }
    }
    cJSON_Delete(ab);
    cJSON_Delete(meta);
    return rc;
}

/* ------------------------------------------------- one model on the sentence */

typedef struct {
    ModelFile *mf;
    Look look;           /* the sentence, its maps with the aggregate views, rollout, importance */
    int q;               /* position of "it" */
} Side;

/* One model's look at the sentence (pipeline/look.h): translated, its maps
 * with the aggregate views, then every head's importance (which runs other
 * forward passes). */
static int look_at(Demo *d, ModelFile *mf, Side *L) {
    L->mf = mf;
    LookSpec spec = {.want = LOOK_TRACE | LOOK_AGGREGATES | LOOK_IMPORTANCE, .tag = VOCAB_2FR};
    if (look_sentence(&L->look, mf, SENTENCE, &spec, d->err, sizeof d->err) != 0) return -1;
    L->q = -1;
    for (int i = 0; i < L->look.s.words.n; i++)
        if (!strcmp(L->look.s.words.tok[i], "it")) L->q = i;
    return L->q < 0 ? demo_fail(d, "\"it\" not found in \"%s\"", SENTENCE) : 0;
}

/* The head whose knock-out lowers log p of the pronoun's translation most. */
static void most_important(const Importance *im, char *map, size_t n, int *head, float *delta) {
    ImportanceRank rows[3 * 64];
    *head = -1;
    *delta = 0;
    snprintf(map, n, "?");
    if (importance_rank(im, rows, 3 * 64) == 0) return;
    model_attn_map_name(rows[0].kind, rows[0].layer, map, n);
    *head = rows[0].head;
    *delta = rows[0].summary;
}

/* Renders the importance grid of L into OUT/file and records it. */
static int importance_figure(Demo *d, const Side *L, const char *file, const char *title, const char *cap,
                             const char *capvi, const char *cmd) {
    char path[4200];
    RenderMetaItem items[] = {{"Title", title}, {"Source", "attnviz demo"}, {"Model", L->mf->path}};
    RenderMeta meta = {items, 3};
    demo_path(d, file, path, sizeof path);
    if (pictures_draw_importance(path, &L->look.imp, title, &meta, d->err, sizeof d->err)) return demo_fail(d, "%s: %s", file, d->err);
    return demo_add(d, file, cap, capvi, cmd);
}

/* ------------------------------------------------------------- the figures */

/* The taught head's map, then what its knock-out costs. */
static int taught_figures(Demo *d, Side *T, const CorefHead *c) {
    char id[32], title[256], sub[256], cap[2048], capvi[2048], cmd[1024], quoted[256];
    snprintf(id, sizeof id, "encoder.%d.self", c->layer);
    const TraceMap *m = trace_find_map(&T->look.t, id);
    float w;
    int key = maps_strongest_link(m, c->head, T->q, &w);
    snprintf(title, sizeof title, "taught model · encoder layer %d · head %d (TAUGHT) · row “it”", c->layer, c->head);
    fmt_fit(sub, sizeof sub, snprintf(sub, sizeof sub, "%s → %s", SENTENCE, T->look.s.translation));
    RenderHeatmap hm = mapview_weights_heatmap(m, c->head, title, sub, T->q);
    snprintf(cap, sizeof cap,
             "The taught model's coreference head: “it” → “%s” with weight %.2f. Over the held-out sentences its strongest "
             "link from a pronoun is the antecedent %.0f%% of the time (attnviz eval) — because training gave it the gold "
             "antecedent as a target (train --supervise-coref). A clear arrow, but drawn by the teacher.",
             key >= 0 ? m->keys[key] : "?", (double)w, 100 * c->accuracy);
    snprintf(capvi, sizeof capvi,
             "Head đồng tham chiếu của mô hình được dạy: “it” → “%s”, trọng số %.2f. Trên các câu kiểm tra, liên kết mạnh "
             "nhất từ đại từ đúng là tiền ngữ %.0f%% số lần (attnviz eval) — vì khi huấn luyện nó được cho tiền ngữ đúng "
             "làm mục tiêu. Mũi tên rõ ràng, nhưng do người dạy vẽ.",
             key >= 0 ? m->keys[key] : "?", (double)w, 100 * c->accuracy);
    snprintf(quoted, sizeof quoted, "--focus %d.%d \"%s\"", c->layer, c->head, SENTENCE);
    demo_cmd(d, cmd, sizeof cmd, "attnviz run", quoted);
    if (demo_heatmap(d, "p10-taught-head.png", &hm, cap, capvi, cmd)) return -1;

    Fall base, row;
    int pairs;
    char head_id[64];
    snprintf(head_id, sizeof head_id, "%s.%d", id, c->head);
    float dt = importance_summary(&T->look.imp, MODEL_ATTN_ENC_SELF, c->layer, c->head);
    char top_map[48];
    int top_head;
    float top_d;
    most_important(&T->look.imp, top_map, sizeof top_map, &top_head, &top_d);
    int top_taught = checkpoint_meta_head_supervised(d->mf.metadata, top_map, top_head);
    int top_is_it = !strcmp(top_map, id) && top_head == c->head;   /* the coreference head, not the alignment one */
    if (eval_fall(d->mf.metadata, id, c->head, &base, &row, &pairs) == 0)
        snprintf(cap, sizeof cap,
                 "Knock that head out (its output replaced by zeros before W_O): over %d held-out sentences French pronoun "
                 "accuracy falls from %.2f to %.2f (attnviz eval --ablation), so the model does use it. On this sentence "
                 "log p(“%s”) changes by %+.3f. The grid shows every head's knock-out on this sentence (blue = the head "
                 "helped): the largest fall is %s head %d (%+.3f)%s.",
                 pairs, base.fr, row.fr, T->look.imp.pronoun_t >= 0 ? T->look.imp.targets[T->look.imp.pronoun_t] : "?", (double)dt,
                 top_map, top_head, (double)top_d,
                 top_is_it ? ": the taught head itself"
                 : top_taught ? ", a head that was also taught (the alignment target, train --supervise-align)" : "");
    else
        snprintf(cap, sizeof cap, "Knock that head out: on this sentence log p of the pronoun changes by %+.3f "
                 "(this model file has no eval --ablation table; run attnviz eval --ablation --write-metadata).", (double)dt);
    snprintf(capvi, sizeof capvi,
             "Loại bỏ head đó (thay đầu ra bằng 0 trước W_O): trên các câu kiểm tra, độ chính xác đại từ tiếng Pháp giảm "
             "từ %.2f xuống %.2f (attnviz eval --ablation), nên mô hình có dùng nó. Ở câu này log p của đại từ đổi %+.3f. "
             "Lưới cho thấy tác động khi loại bỏ từng head ở câu này (xanh = head có giúp).",
             base.fr, row.fr, (double)dt);
    snprintf(title, sizeof title, "taught model: Δ log p of “il” when one head is knocked out · %s", SENTENCE);
    snprintf(quoted, sizeof quoted, "--importance \"%s\"", SENTENCE);
    demo_cmd(d, cmd, sizeof cmd, "attnviz run", quoted);
    return importance_figure(d, T, "p10-taught-knockout.png", title, cap, capvi, cmd);
}

/* The untaught model's maps of "it" (no arrow), then where it decides. */
static int untaught_figures(Demo *d, Side *U, const CorefHead *uc) {
    char title[512], cap[2048], capvi[2048], path[4200];
    const char *cmd = "attnviz run --model untaught --importance \"the animal didn't cross the street because it was too "
                      "tired .\"";
    HeadLink L = links_strongest(&U->look.t, U->q);   /* over every encoder head */
    const TraceMap *lm = &U->look.t.maps[L.map >= 0 ? L.map : 0];
    int E = model_attn_layers(&U->mf->m.config, MODEL_ATTN_ENC_SELF), S = U->look.t.maps[0].Tk, animal = 0;
    while (animal + 1 < U->look.s.words.n && strcmp(U->look.s.words.tok[animal], "animal")) animal++;
    float ro = U->look.rollout[((size_t)(E - 1) * S + U->q) * S + animal];
    snprintf(title, sizeof title, "untaught model: “it” in the encoder — weights, norm-weighted, rollout · %s", SENTENCE);
    /* What the pictures show is measured, not assumed: an untaught head may link
     * "it" to "animal" by itself on this sentence, and the caption says which. */
    int found = L.map >= 0 && L.key == animal;
    for (int mi = 0; mi < U->look.t.n_maps && !found; mi++) {   /* any encoder head whose top link is "animal" */
        const TraceMap *m = &U->look.t.maps[mi];
        if (strcmp(m->stack, "encoder") || strcmp(m->kind, "self")) continue;
        for (int h = 0; h < m->n_heads && !found; h++) {
            float w;
            if (maps_strongest_link(m, h, U->q, &w) == animal) { L = (HeadLink){mi, h, animal, w}; lm = m; found = 1; }
        }
    }
    char link[512], linkvi[512];
    if (found) {
        snprintf(link, sizeof link, "An encoder head's strongest link from “it” does land on “animal” (%s head %d, "
                 "%.2f), learned without being taught: the arrow alone cannot tell a taught head from a learned one",
                 lm->id, L.head, (double)L.weight);
        snprintf(linkvi, sizeof linkvi, "Liên kết mạnh nhất từ “it” của một head encoder đúng là “animal” (%s head %d, %.2f), "
                 "tự học chứ không được dạy: chỉ nhìn mũi tên thì không phân biệt được head được dạy với head tự học",
                 lm->id, L.head, (double)L.weight);
    } else {
        snprintf(link, sizeof link, "No encoder head's strongest link from “it” is “animal”; the strongest of all "
                 "is “%s” (%s head %d, %.2f)", L.map >= 0 ? lm->keys[L.key] : "?", lm->id, L.head, (double)L.weight);
        snprintf(linkvi, sizeof linkvi, "Không head encoder nào có liên kết mạnh nhất từ “it” tới “animal”; mạnh nhất trong tất "
                 "cả là “%s” (%s head %d, %.2f)", L.map >= 0 ? lm->keys[L.key] : "?", lm->id, L.head, (double)L.weight);
    }
    snprintf(cap, sizeof cap,
             "The untaught model (same data, size and recipe; no head taught) translates “%s”. %s; over the held-out "
             "sentences its best encoder head links a pronoun to its antecedent %.0f%% of the time (attnviz eval). "
             "Norm-weighted attention (middle) and rollout (right: “animal” gets %.2f after the last layer) are two more "
             "views of the same sentence.",
             U->look.s.translation, link, 100 * uc->accuracy, (double)ro);
    snprintf(capvi, sizeof capvi,
             "Mô hình không được dạy (cùng dữ liệu, kích thước, công thức) dịch “%s”. %s; trên các câu kiểm tra, head "
             "encoder tốt nhất của nó chỉ đúng tiền ngữ %.0f%% số lần. Chú ý theo chuẩn (giữa) và rollout (phải: “animal” "
             "được %.2f) là hai cách nhìn khác vào cùng câu.",
             U->look.s.translation, linkvi, 100 * uc->accuracy, (double)ro);
    RenderMetaItem items[] = {{"Title", title}, {"Source", "attnviz demo"}, {"Model", U->mf->path}};
    RenderMeta meta = {items, 3};
    demo_path(d, "p10-untaught-maps.png", path, sizeof path);
    if (pictures_draw_aggregate(path, &U->look.t, U->q, U->look.rollout, NULL, title, &meta, d->err, sizeof d->err))
        return demo_fail(d, "p10-untaught-maps.png: %s", d->err);
    if (demo_add(d, "p10-untaught-maps.png", cap, capvi, cmd)) return -1;

    char map[48];
    int head, pairs;
    float dl;
    most_important(&U->look.imp, map, sizeof map, &head, &dl);
    Fall base, top;
    int have = eval_fall(U->mf->metadata, NULL, 0, &base, &top, &pairs) == 0;
    snprintf(cap, sizeof cap,
             "Where the untaught model decides: each head knocked out alone. On this sentence the largest fall of log p(il) "
             "is %s head %d (%+.3f). Over %d held-out sentences the most harmful knock-out is %s head %d: pronoun "
             "accuracy %.2f → %.2f in French, %.2f → %.2f in Vietnamese (attnviz eval --ablation). A map shows where a head looks; a knock-out shows whether "
             "the model needs it. Attention weights alone are not an explanation (Jain & Wallace 2019, “Attention is not "
             "Explanation”); whether they can be depends on what you test (Wiegreffe & Pinter 2019, “Attention is not not "
             "Explanation”) — a knock-out is such a test.",
             map, head, (double)dl, have ? pairs : 0, have ? top.map : "?", have ? top.head : -1, have ? base.fr : 0,
             have ? top.fr : 0, have ? base.vi : 0, have ? top.vi : 0);
    snprintf(capvi, sizeof capvi,
             "Mô hình không được dạy quyết định ở đâu: loại bỏ từng head. Ở câu này log p(il) giảm nhiều nhất khi bỏ %s head %d "
             "(%+.3f). Trên %d câu kiểm tra, bỏ %s head %d làm độ chính xác đại từ giảm %.2f → %.2f ở tiếng Pháp, "
             "%.2f → %.2f ở tiếng Việt (attnviz eval --ablation). Bản đồ cho thấy head nhìn vào đâu; loại bỏ head cho thấy mô hình có cần nó không. Trọng số attention tự nó chưa là "
             "lời giải thích (Jain & Wallace 2019); có thể là hay không tùy cách kiểm chứng (Wiegreffe & Pinter 2019) — "
             "loại bỏ head là một cách kiểm chứng.",
             map, head, (double)dl, have ? pairs : 0, have ? top.map : "?", have ? top.head : -1, have ? base.fr : 0,
             have ? top.fr : 0, have ? base.vi : 0, have ? top.vi : 0);
    if (!have) demo_warn(d, "part 10: %s has no eval --ablation table (run attnviz eval --ablation --write-metadata)",
                         U->mf->path);
    snprintf(title, sizeof title, "untaught model: Δ log p of “il” when one head is knocked out · %s", SENTENCE);
    return importance_figure(d, U, "p10-untaught-knockout.png", title, cap, capvi, cmd);
}

/* Says on the page and as a warning why part 10 is left out; returns 0. */
static int skip_part(Demo *d, const char *why) {
    html_raw(&d->page, "<p>");
    html_text(&d->page, why);
    html_raw(&d->page, "</p>\n");
    demo_warn(d, "part 10 skipped: %s", why);
    return 0;
}

int demo_does_attention_explain(Demo *d) {
    html_section(&d->page, "p10", "10. Does attention explain? Knock-outs",
                 "A heatmap shows where a head looks, not whether the model needs it. Two models with the same data, size "
                 "and recipe: in the taught one, training told one encoder head to point pronouns at their antecedent; in "
                 "the untaught one, nothing did. Knocking a head out (its output set to zero) and measuring what falls "
                 "tests what the pictures claim.",
                 "Bản đồ nhiệt cho thấy head nhìn vào đâu, không cho biết mô hình có cần nó không. Hai mô hình cùng dữ "
                 "liệu, kích thước và công thức: ở mô hình được dạy, một head encoder được huấn luyện để chỉ từ đại từ tới "
                 "tiền ngữ; ở mô hình kia thì không. Loại bỏ một head (đặt đầu ra bằng 0) rồi đo xem cái gì giảm là cách "
                 "kiểm chứng điều các hình khẳng định.");
    CorefHead c, uc;
    if (!model_file_coref_head(&d->mf, &c) || !c.taught)
        return skip_part(d, "this part compares the shipped taught and untaught models; the model given has no taught "
                            "coreference head");
    ModelFile um;
    char why[1024];
    if (model_file_load(&um, "untaught", why, sizeof why) != 0) return skip_part(d, why);
    model_file_coref_head(&um, &uc);
    Side T = {0}, U = {0};
    int rc = look_at(d, &d->mf, &T);
    if (rc == 0) rc = look_at(d, &um, &U);
    if (rc == 0) rc = taught_figures(d, &T, &c);
    if (rc == 0) rc = untaught_figures(d, &U, &uc);
    look_free(&T.look);
    look_free(&U.look);
    model_file_free(&um);
    return rc;
}
