/* pictures.c — see pictures.h. */
#include "pipeline/pictures.h"
#include "pipeline/longtext.h"
#include "pipeline/pictures_explain.h"
#include "pipeline/head_roles_show.h"
#include "core/errmsg.h"
#include "model/checkpoint.h"
#include "pipeline/links.h"
#include "pipeline/words.h"
#include "render/fmt.h"
#include "render/mapview.h"
#include "render/page.h"
#include "render/render.h"
#include "render/stepview.h"
#include "trace/trace_bin.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SUBTITLE_CHARS 110    /* the sentence in a subtitle, clipped with "…" */
#define MAX_QUERY_VIEWS 6      /* pronouns (or --query tokens) drawn per sentence */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* "self-attention", "masked self-attention", "cross-attention (encoder–decoder)". */
static const char *kind_title(const char *kind) {
    if (!strcmp(kind, "self")) return "self-attention";
    if (!strcmp(kind, "masked_self")) return "masked self-attention";
    if (!strcmp(kind, "cross")) return "cross-attention (encoder–decoder)";
    if (!strcmp(kind, "custom")) return "attention";
    return kind;
}

static const char *kind_title_vi(const char *kind) {
    if (!strcmp(kind, "self")) return "tự chú ý (self-attention) của encoder";
    if (!strcmp(kind, "masked_self")) return "tự chú ý có che (masked self-attention) của decoder";
    if (!strcmp(kind, "cross")) return "chú ý encoder–decoder (cross-attention)";
    if (!strcmp(kind, "custom")) return "chú ý (trọng số từ bên ngoài)";
    return kind;
}

/* A stack as titles name it: "" for the maps of `view` that name none. */
static const char *stack_name(const char *stack) {
    return strcmp(stack, "custom") ? stack : "";
}

/* 1 when layer l / head h is chosen by the spec. */
static int layer_chosen(const PictureSpec *ps, int l) {
    return !ps->layer_on || (l >= 0 && l < ps->n_layer_on && ps->layer_on[l]);
}

static int head_chosen(const PictureSpec *ps, int h) {
    return !ps->head_on || (h >= 0 && h < ps->n_head_on && ps->head_on[h]);
}

/* ---- pictures drawn side by side ----
 * A picture whose texts are settled becomes a job: listed in the trace and on
 * the page at once, in order, and drawn by draw_jobs at the end with every
 * other job on the processors (each writes only its own PNG, its error in its
 * own err).  Kinds: a head's heatmap (row outlined when >= 0), the lines view
 * of query row q, a model view's grid (its cells owned by the job). */
enum { JOB_HEATMAP, JOB_LINES, JOB_GRID };

typedef struct {
    RenderHeatmap *cells;
    char **rt, **ct, *tb;
    int n, n_heads;
    char title[1600];
} GridJob;

struct PicJob {
    int kind;
    const TraceMap *m;
    int h, row;               /* the head; heatmap: the row outlined (-1 none); lines: the query row */
    const char *label_unit;   /* heatmap: RenderHeatmap.label_unit */
    char file[256], title[520], sub[1400], cap[1400];
    GridJob *grid;
    int rc;
    char err[512];
};

static void grid_job_free(GridJob *g) {
    if (!g) return;
    free(g->cells); free(g->rt); free(g->ct); free(g->tb); free(g);
}

static void jobs_free(Show *w) {
    for (int i = 0; i < w->n_jobs; i++) grid_job_free(w->jobs[i].grid);
    free(w->jobs);
    w->jobs = NULL;
    w->n_jobs = w->cap_jobs = 0;
}

/* A new job of the kind for file, listed in the trace (NULL: out of memory,
 * said).  The pointer holds until the next job_new. */
static PicJob *job_new(Show *w, int kind, const char *file) {
    if (w->n_jobs == w->cap_jobs) {
        int cap = w->cap_jobs ? 2 * w->cap_jobs : 32;
        PicJob *j = realloc(w->jobs, (size_t)cap * sizeof *j);
        if (!j) { errmsg_set(w->err, w->errlen, "out of memory"); return NULL; }
        w->jobs = j;
        w->cap_jobs = cap;
    }
    if (trace_add_image(w->t, file)) { errmsg_set(w->err, w->errlen, "out of memory"); return NULL; }
    PicJob *j = &w->jobs[w->n_jobs++];
    memset(j, 0, sizeof *j);
    j->kind = kind;
    j->row = -1;
    snprintf(j->file, sizeof j->file, "%s", file);
    return j;
}

/* 1 if training taught head h of map id where to look (train --supervise-*). */
static int is_taught(const Show *w, const char *id, int h) {
    return w->ps->metadata && checkpoint_meta_head_supervised(w->ps->metadata, id, h);
}

void pictures_copy_note(const Sentence *s, char *out, size_t n) {
    size_t len = 0;
    out[0] = '\0';
    for (int k = 0; k < s->n_copies && len + 1 < n; k++)
        len += (size_t)snprintf(out + len, n - len, "%s<unk> copied from '%s' (weight %.2f)", k ? ", " : "",
                                s->raw[s->copies[k].source], (double)s->copies[k].weight);
}

/* " · weights from FILE, computed outside attnviz …", then for map m (may be
 * NULL) " · causal: …" when nothing above its diagonal is attended and
 * " · N rows of zeros (padding) masked". */
static void origin_note(const char *origin, const TraceMap *m, char *buf, size_t n) {
    int causal = m && m->mask && m->Tq == m->Tk, zero = 0;
    for (int i = 0; m && m->mask && i < m->Tq; i++) {
        int z = 1;
        for (int j = 0; j < m->Tk; j++) {
            z &= !m->mask[(size_t)i * m->Tk + j];
            if (j > i && m->mask[(size_t)i * m->Tk + j]) causal = 0;
        }
        zero += z;
    }
    size_t k = (size_t)snprintf(buf, n, " · %s", origin);
    if (causal && k < n) k += (size_t)snprintf(buf + k, n - k, " · causal: no query sees a later key (hatched)");
    if (zero && k < n) snprintf(buf + k, n - k, " · %d row%s of zeros (padding) drawn as masked", zero, zero > 1 ? "s" : "");
}

/* What a row of the drawn maps is: a block of tokens for a long text pooled,
 * else NULL (a token). */
static const char *row_unit(const Show *w) {
    return w->ps->stream && w->ps->stream->win_from < 0 ? "block" : NULL;
}

/* What a picture of map m says besides its title: " · <unk> copied from …"
 * on the cross-attention map that chose the copies (grid: any cross map),
 * then " · outside what the model was trained on: …" (short: " · outside
 * training data"), or "". */
static const char *world_note(const Show *w, const TraceMap *m, int grid, int short_form, char *buf, size_t n) {
    char copy[600] = "";
    if (m && !strcmp(m->kind, "cross") && (grid || m->layer == w->s->copy_layer)) pictures_copy_note(w->s, copy, sizeof copy);
    const char *out = w->ps->outside && *w->ps->outside ? (short_form ? "outside training data" : w->ps->outside) : "";
    char from[900] = "", pool[300] = "";
    if (w->ps->origin) origin_note(w->ps->origin, grid ? NULL : m, from, sizeof from);
    const LongText *lt = w->ps->stream;
    if (lt && lt->win_from >= 0)
        snprintf(pool, sizeof pool, short_form ? " · tokens %d-%d of %d (--window)" :
                 " · tokens %d-%d of %d at full resolution (--window): a row's weights on the keys before the window "
                 "are not drawn, so it sums to less than 1 (every weight is in trace.bin)", lt->win_from, lt->win_to,
                 lt->T);
    else if (lt)
        snprintf(pool, sizeof pool, short_form ? " · %d tokens pooled in blocks of %d" :
                 " · %d tokens pooled in blocks of %d: a block's row is its tokens' rows averaged, each summed over "
                 "the other block's tokens (every weight is in trace.bin)", lt->T, lt->block);
    snprintf(buf, n, "%s%s%s%s%s%s", *copy ? " · " : "", copy, *out ? " · " : "", out, from, pool);
    return buf;
}

/* " · knocked out: encoder.2.self.0" for titles, or "". */
static const char *ablated_note(const Show *w, char *buf, size_t n) {
    if (!w->ps->ablated || !*w->ps->ablated) return "";
    snprintf(buf, n, " · knocked out: %s", w->ps->ablated);
    return buf;
}

/* ---- which head links the pronoun: the page's explanation ---- */

static void coref_section(Show *w) {
    const CorefHead *c = &w->ps->coref;
    char how_en[512], how_vi[512];
    if (c->layer >= 0) {
        snprintf(how_en, sizeof how_en,
                 "Each pronoun's strongest link (ignoring itself and special tokens) in encoder layer %d head %d: the model's "
                 "coreference head, which links a pronoun to its true antecedent in %.0f%% of held-out sentences (attnviz eval).%s",
                 c->layer, c->head, 100 * c->accuracy,
                 c->taught ? " This head was trained with the gold antecedent as a target (train --supervise-coref): "
                             "it was taught the link, it did not discover it; see docs/model-card.md." : "");
        snprintf(how_vi, sizeof how_vi,
                 "Liên kết mạnh nhất của mỗi đại từ (bỏ qua chính nó và token đặc biệt) ở encoder lớp %d head %d: head đồng "
                 "tham chiếu của mô hình, đúng tiền ngữ ở %.0f%% câu kiểm tra (attnviz eval).%s",
                 c->layer, c->head, 100 * c->accuracy,
                 c->taught ? " Head này được huấn luyện với tiền ngữ đúng làm mục tiêu (--supervise-coref): nó được "
                             "dạy liên kết này, không tự khám phá ra." : "");
    } else {
        int encoder = 0;
        for (int i = 0; i < w->t->n_maps; i++) encoder |= !strcmp(w->t->maps[i].kind, "self");
        snprintf(how_en, sizeof how_en, "For each pronoun, the %s head whose strongest link (ignoring the pronoun itself "
                 "and special tokens) is strongest, and where it points. This model records no coreference head, so "
                 "the strongest head is shown; strongest is not the same as right.",
                 encoder ? "encoder" : "masked self-attention (earlier tokens only)");
        snprintf(how_vi, sizeof how_vi, "Với mỗi đại từ: head %s có liên kết mạnh nhất (bỏ qua chính nó và token đặc "
                 "biệt), và nó chỉ tới đâu. Mạnh nhất chưa chắc là đúng.",
                 encoder ? "của encoder" : "masked self-attention (chỉ nhìn các token trước)");
    }
    if (c->layer < 0 && w->ps->link_heads) {
        snprintf(how_en, sizeof how_en, "For each pronoun, the head whose link to a word that can be its antecedent is "
                 "strongest (leaving out the pronoun itself, special tokens, punctuation and function words), every "
                 "head that links it to the same word, and where the strongest link of any head goes. This model "
                 "records no coreference head; strongest is not the same as right.");
        snprintf(how_vi, sizeof how_vi, "Với mỗi đại từ: head có liên kết mạnh nhất tới một từ có thể là tiền ngữ (bỏ qua "
                 "chính nó, token đặc biệt, dấu câu và hư từ), mọi head nối nó với cùng từ đó, và liên kết mạnh nhất "
                 "của mọi head. Mạnh nhất chưa chắc là đúng.");
    }
    html_section(w->pg, "coreference", "Which head links the pronoun to its antecedent?", how_en, how_vi);
}

/* ---- one query token: lines view + its head's heatmap, row outlined ---- */

/* The maps the links' positions count: merged into words (ps->words), or the trace's own. */
static const Trace *link_trace(const Show *w) {
    return w->ps->words ? w->ps->words : w->ps->stream ? &w->ps->stream->rows : w->t;
}

/* Query q as the links name it: its word, or the sentence's token q. */
static const char *query_word(const Show *w, int q) {
    const TraceMap *m = w->ps->words ? &w->ps->words->maps[0] : NULL;
    return m ? m->queries[trace_row_of(m, q)] : w->s->words.tok[q];
}

/* The sentence as a picture's subtitle: at most max characters, then "…". */
static const char *clip_text(char *out, size_t n, const char *text, int max) {
    size_t k = 0;
    int chars = 0;
    for (; text[k] && k + 4 < n; k++) {
        if (((unsigned char)text[k] & 0xC0) != 0x80 && chars++ == max) break;
    }
    while (k > 0 && ((unsigned char)text[k] & 0xC0) == 0x80) k--;   /* whole characters only */
    memcpy(out, text, k);
    strcpy(out + k, text[k] ? "…" : "");
    return out;
}

/* Lines view of query q in head h.  With lines_top = k (< keys) only q and
 * its k strongest keys are drawn, in sentence order, labelled with their
 * positions, so a long sentence stays one readable fan. */
static int draw_lines(const Show *w, const TraceMap *m, int h, int q, const char *path, const char *title,
                      const RenderMeta *meta, char *err, size_t errlen) {
    const float *row = trace_weights_row(m, h, q), *all = m->heads[h].weights;
    int k = w->ps->lines_top;
    if ((k <= 0 || k >= m->Tk) && !m->row_pos)
        return render_lines(path, title, trace_row_labels(m), m->Tq, (const char *const *)m->keys, m->Tk,
                            all, m->mask, q, meta, err, errlen);
    unsigned char *take = calloc((size_t)m->Tk, 1);
    float *wk = malloc((size_t)k * sizeof *wk);
    char (*lab)[80] = malloc((size_t)k * sizeof *lab);
    const char **keys = malloc((size_t)k * sizeof *keys);
    int rc = -1;
    if (!take || !wk || !lab || !keys) { errmsg_set(err, errlen, "out of memory"); goto done; }
    for (int i = 0; i < k; i++) {   /* the k largest, ties to the first */
        int best = -1;
        for (int j = 0; j < m->Tk; j++)
            if (!take[j] && (best < 0 || row[j] > row[best])) best = j;
        take[best] = 1;
    }
    for (int j = 0, n = 0; j < m->Tk; j++) {
        if (!take[j]) continue;
        snprintf(lab[n], sizeof lab[n], "%s (%d)", m->keys[j], j);
        keys[n] = lab[n];
        wk[n++] = row[j];
    }
    const char *left[1] = {trace_row_labels(m)[trace_row_of(m, q)]};
    char titled[700];   /* the picture says what it leaves out */
    fmt_fit(titled, sizeof titled, snprintf(titled, sizeof titled, "%s · only the %d strongest of %d links drawn", title,
                                            k, m->Tk));
    rc = render_lines(path, titled, left, 1, keys, k, wk, NULL, 0, meta, err, errlen);
done:
    free(take); free(wk); free(lab); free(keys);
    return rc;
}

/* Title and captions of the lines view of q (EN, VI), from what its head shows. */
static void query_texts(const Show *w, int q, const LinksView *v, char *title, size_t tn, char *cap, size_t cn,
                        char *capvi, size_t vn) {
    const TraceMap *m = &link_trace(w)->maps[v->link.map];
    const HeadLink *L = &v->link;
    const char *word = query_word(w, q), *taught = v->taught ? ", TAUGHT head" : "";
    char note[300], only[96] = "";
    if (w->ps->lines_top > 0 && w->ps->lines_top < m->Tk)
        snprintf(only, sizeof only, " Only the %d strongest links are drawn.", w->ps->lines_top);
    char why[256], whyvi[256];
    links_why(v, &w->ps->coref, why, sizeof why, whyvi, sizeof whyvi);
    if (v->no_antecedent) {
        snprintf(title, tn, "“%s”: no antecedent in the sentence (%s head %d%s: %.2f on “%s”)%s", word, m->id, L->head,
                 taught, (double)v->top_weight, m->keys[v->top_key], ablated_note(w, note, sizeof note));
        if (v->none_fits) {   /* nothing in the sentence can be what the pronoun refers to */
            snprintf(cap, cn, "Lines view of %s head %d (%s): no word of the sentence can be what “%s” refers to, so it "
                     "has no antecedent here; the head still puts %.2f on “%s”.%s", m->id, L->head, why, word,
                     (double)v->top_weight, m->keys[v->top_key], only);
            snprintf(capvi, vn, "Không từ nào trong câu có thể là cái mà “%s” chỉ tới, nên câu này không có tiền ngữ cho nó; "
                     "head vẫn dồn %.2f vào “%s” (%s, head %d).", word, (double)v->top_weight, m->keys[v->top_key], m->id,
                     L->head);
        }
        return;
    }
    char rule[600], rulevi[600], brief[160];   /* what the rule thinks, when the head looks elsewhere */
    links_rule_note(v, w->t, q, word, rule, sizeof rule, rulevi, sizeof rulevi, brief, sizeof brief);
    fmt_fit(title, tn, snprintf(title, tn, "“%s” → “%s”   (%s head %d, %.2f%s%s)%s%s%s", word, m->keys[L->key], m->id,
                                L->head, (double)L->weight, v->weak ? ", weak link" : "", taught, *brief ? " · " : "",
                                brief, ablated_note(w, note, sizeof note)));
    snprintf(cap, cn, "Lines view of %s head %d (%s): “%s” attends most to “%s” (weight %.2f%s).%s%s%s%s", m->id, L->head,
             why, word, m->keys[L->key], (double)L->weight, v->weak ? ", a weak link: below 0.5" : "",
             *rule ? " Not the word the rule expects: " : "", rule, *rule ? "." : "", only);
    snprintf(capvi, vn, "“%s” chú ý nhiều nhất tới “%s” (%s, head %d, trọng số %.2f%s): %s.%s%s%s", word, m->keys[L->key],
             m->id, L->head, (double)L->weight, v->weak ? ", liên kết yếu" : "", whyvi,
             *rulevi ? " Không phải từ mà quy tắc chờ đợi: " : "", rulevi, *rulevi ? "." : "");
}

/* Appends to the captions (ps->link_heads): every head that links q to the
 * same word as the view's head, and where the strongest link of any head
 * goes when that is elsewhere. */
static void link_heads_note(const Show *w, int q, const LinksView *v, char *cap, size_t cn, char *capvi, size_t vn) {
    const Trace *t = link_trace(w);
    HeadLink all[12];
    int n = links_content_heads(t, q, v->link.key, LINKS_HEADS_MIN, all, 12), shown = n < 12 ? n : 12, total = 0;
    for (int i = 0; i < t->n_maps; i++) total += t->maps[i].n_heads;
    const char *word = query_word(w, q), *key = t->maps[v->link.map].keys[v->link.key];
    size_t k = strlen(cap), kv = strlen(capvi);
    k += (size_t)snprintf(cap + k, k < cn ? cn - k : 0, " %d of %d heads put at least %.1f of “%s”'s weight on “%s”, "
                          "more than on any other word that can be an antecedent%s", n, total, (double)LINKS_HEADS_MIN,
                          word, key, n ? ":" : ".");
    for (int i = 0; i < shown && k < cn; i++)
        k += (size_t)snprintf(cap + k, cn - k, "%s %s head %d (%.2f)%s", i ? "," : "", t->maps[all[i].map].id,
                              all[i].head, (double)all[i].weight, i + 1 == shown && n == shown ? "." : "");
    if (k < cn && n > shown) k += (size_t)snprintf(cap + k, cn - k, " and %d more.", n - shown);
    kv += (size_t)snprintf(capvi + kv, kv < vn ? vn - kv : 0, " %d/%d head dồn ít nhất %.1f trọng số của “%s” vào “%s”.",
                           n, total, (double)LINKS_HEADS_MIN, word, key);
    HeadLink B = links_strongest(t, q);
    if (B.map >= 0 && B.key != v->link.key && k < cn) {
        const TraceMap *m = &t->maps[B.map];
        snprintf(cap + k, cn - k, " The strongest link of any head goes to “%s” (%s head %d, %.2f): heads of a causal "
                 "model often look at the token before or at punctuation.", m->keys[B.key], m->id, B.head,
                 (double)B.weight);
        if (kv < vn)
            snprintf(capvi + kv, vn - kv, " Liên kết mạnh nhất của mọi head là tới “%s” (%s head %d, %.2f).",
                     m->keys[B.key], m->id, B.head, (double)B.weight);
    }
    fmt_fit(cap, cn, (int)strlen(cap));
}

/* Appends the word rule to a title and the captions (ps->words). */
static void words_note(const Show *w, char *title, size_t tn, char *cap, size_t cn, char *capvi, size_t vn) {
    if (!w->ps->words) return;
    size_t k = strlen(title), kc = strlen(cap), kv = strlen(capvi);
    snprintf(title + k, tn - k, " · in words");
    snprintf(cap + kc, cn - kc, " In words, not pieces: %s (run --pieces draws the tokens).", WORDS_RULE);
    snprintf(capvi + kv, vn - kv, " Theo từ, không theo mảnh: %s (run --pieces vẽ theo token).", WORDS_RULE_VI);
}

static int query_views(Show *w, int q, const LinksView *v) {
    const HeadLink *L = &v->link;
    const TraceMap *m = &link_trace(w)->maps[L->map];
    const char *word = query_word(w, q);
    char file[256], title[512], sub[900], cap[1400], capvi[1400], safe[32];
    pictures_safe_name(safe, sizeof safe, word);
    snprintf(file, sizeof file, "lines.%d-%s.png", q, safe);
    query_texts(w, q, v, title, sizeof title, cap, sizeof cap, capvi, sizeof capvi);
    const char *outside = w->ps->origin ? " · weights computed outside attnviz" : "";
    strncat(title, outside, sizeof title - strlen(title) - 1);
    if (w->ps->link_heads && !v->no_antecedent) link_heads_note(w, q, v, cap, sizeof cap, capvi, sizeof capvi);
    words_note(w, title, sizeof title, cap, sizeof cap, capvi, sizeof capvi);
    PicJob *j = job_new(w, JOB_LINES, file);
    if (!j) return -1;
    j->m = m;
    j->h = L->head;
    j->row = q;
    snprintf(j->title, sizeof j->title, "%s", title);
    html_figure(w->pg, file, cap, capvi, NULL);

    snprintf(file, sizeof file, "%s.h%d.q%d.png", m->id, L->head, q);
    snprintf(title, sizeof title, "%s · %s · head %d%s", m->id, kind_title(m->kind), L->head,
             v->taught ? " · TAUGHT" : "");
    char clip[400];
    snprintf(sub, sizeof sub, "row “%s” outlined%s%s · %s%s", word, v->taught ? " · this head was taught with gold antecedents" : "",
             w->ps->words && !w->ps->stream ? " · in words: pieces merged" : "", clip_text(clip, sizeof clip, w->s->text, SUBTITLE_CHARS), outside);
    const TraceMap *hm_map = m;
    int hm_row = q;
    if (w->ps->stream) {   /* the kept rows are no heatmap: the drawn head (pooled, or the window), q's row outlined */
        char pool[300];
        hm_map = &w->t->maps[L->map];
        hm_row = longtext_row(w->ps->stream, pictures_piece(w->ps, q));
        if (hm_row < 0) return 0;   /* outside the --window: its lines view says it all */
        size_t k = strlen(sub);
        snprintf(sub + k, sizeof sub - k, "%s", world_note(w, hm_map, 0, 1, pool, sizeof pool));
    }
    if (!(j = job_new(w, JOB_HEATMAP, file))) return -1;
    j->m = hm_map;
    j->h = L->head;
    j->row = hm_row;
    j->label_unit = hm_map != m ? row_unit(w) : NULL;
    snprintf(j->title, sizeof j->title, "%s", title);
    snprintf(j->sub, sizeof j->sub, "%s", sub);
    if (w->ps->stream && w->ps->stream->win_from >= 0)
        html_figure(w->pg, file, "The same head over the --window's tokens, the token's row outlined.",
                    "Cùng head đó trên các token của --window, hàng của token được viền.", NULL);
    else if (w->ps->stream)
        html_figure(w->pg, file, "The same head pooled into blocks of tokens, the block of the token's row outlined.",
                    "Cùng head đó gộp thành khối token, khối chứa hàng của token được viền.", NULL);
    else if (w->ps->words)
        html_figure(w->pg, file, "The same head as a heatmap in words (the same merge), the word's row outlined.",
                    "Cùng head đó dạng bản đồ nhiệt theo từ (cùng cách gộp), hàng của từ được viền.", NULL);
    else
        html_figure(w->pg, file, "The same head as a heatmap, the token's row outlined.",
                    "Cùng head đó dạng bản đồ nhiệt, hàng của token được viền.", NULL);
    return 0;
}

/* The pronouns (or the --query token): a lines view and a heatmap each, of
 * the links the spec gives (links_find decided them). */
static int all_query_views(Show *w) {
    if (w->ps->origin && !w->ps->n_links) return 0;   /* view: no pronoun links are looked for */
    coref_section(w);
    int any = 0;
    for (int k = 0; k < w->ps->n_links && any < MAX_QUERY_VIEWS; k++, any++) {
        int q = w->ps->links[k].q;
        if (!w->ps->no_pictures && (query_views(w, q, &w->ps->links[k].view) || pictures_aggregate(w, q))) return -1;
    }
    if (!any) {
        html_raw(w->pg, "<p>");
        html_text(w->pg, w->ps->query ? "The --query token is not in this sentence." : "No pronoun in this sentence.");
        html_raw(w->pg, "</p>\n");
    }
    return 0;
}

/* ---- the focus head, step by step ---- */

static int step_strip(Show *w) {
    if (w->ps->focus_map < 0) return 0;
    const TraceMap *m = &w->t->maps[w->ps->focus_map];
    int head = w->ps->focus_head, nd = m->Dv > m->d_k ? m->Dv : m->d_k;
    if (!m->heads[head].scores) return 0;
    char formula[64], file[256], title[256], (*dims)[STEPVIEW_DIM_LABEL] = malloc((size_t)nd * sizeof *dims);
    const char **dim_labels = malloc(sizeof(char *) * (size_t)nd);
    if (!dims || !dim_labels) { free(dims); free(dim_labels); return errmsg_set(w->err, w->errlen, "out of memory"); }
    StepView sv = stepview_of_head(m, head, dims, dim_labels);
    for (int d = m->Dv; d < nd; d++) { snprintf(dims[d], sizeof dims[d], "%d", d); dim_labels[d] = dims[d]; }
    if (m->score_scale > 0) snprintf(formula, sizeof formula, "× %.4g, not ÷ √%d (the model's own scale)",
                                     (double)m->score_scale, m->d_k);
    else snprintf(formula, sizeof formula, "÷ √d_k = ÷ √%d", m->d_k);
    sv.subtitle[STEP_SCALED] = formula;
    sv.axes = 1;
    sv.show_values = 0;
    RenderHeatmap p[STEPVIEW_ROPE_PANELS + STEP_COUNT];
    int rope = stepview_rope_panels(m, head, dim_labels, p);
    if (rope) sv.subtitle[STEP_SCORES] = "rotated q · rotated k";
    int n = rope + stepview_panels(&sv, p + rope, NULL);
    snprintf(file, sizeof file, "steps.%s.h%d.png", m->id, head);
    char note[300], kv[96], kvs[100] = "";
    if (*pictures_kv_note(m, head, kv, sizeof kv)) snprintf(kvs, sizeof kvs, " (%s)", kv);
    fmt_fit(title, sizeof title, snprintf(title, sizeof title, "%s head %d%s step by step: %ssoftmax(Q·Kᵀ / √d_k%s) · V%s",
                                          m->id, head, kvs, rope ? "RoPE, then " : "", m->mask ? " + M" : "",
                                          ablated_note(w, note, sizeof note)));
    char path[4096];
    pictures_path(w, file, path, sizeof path);
    RenderMetaItem items[8];
    RenderMeta meta = pictures_meta(w, items, title, NULL, NULL, NULL);
    int r = render_strip(path, title, p, n, &meta, w->err, w->errlen);
    free(dims); free(dim_labels);
    if (r) return -1;
    trace_add_image(w->t, file);
    if (rope)
        html_section(w->pg, "steps", "One head, step by step",
                     "RoPE (rotary position embeddings) first: each query and key is turned by an angle that grows with "
                     "its position, so Q·Kᵀ sees how far apart two tokens are; then Q·Kᵀ → scale → + mask → softmax → "
                     "·V for one head.",
                     "Trước hết là RoPE (mã hoá vị trí bằng phép quay): mỗi query và key được quay một góc tăng theo vị "
                     "trí, nên Q·Kᵀ thấy hai token cách nhau bao xa; rồi Q·Kᵀ → chia tỉ lệ → + mặt nạ → softmax → ·V.");
    else
        html_section(w->pg, "steps", "One head, step by step", "Q·Kᵀ → ÷√d_k → + mask → softmax → ·V for one head.",
                     "Từng bước của một head: Q·Kᵀ → ÷√d_k → + mặt nạ → softmax → ·V.");
    html_figure(w->pg, file, title, NULL, NULL);
    return 0;
}

/* ---- one grid per kind of attention ("model view") ---- */

/* "Attention sinks: …" under the grid: which of the maps' heads park more
 * than PICTURES_SINK_MIN of their weight on the first token (ps->sinks). */
static void sink_paragraph(Show *w, const int *idx, int n) {
    char list[2048] = "";
    size_t k = 0;
    int count = 0, total = 0;
    for (int r = 0; r < n; r++) {
        const TraceMap *m = &w->t->maps[idx[r]];
        int first = 1;
        for (int h = 0; h < m->n_heads; h++) {
            total++;
            if (pictures_sink(w->ps, m, h) < 0) continue;
            count++;
            if (k + 1 < sizeof list && first)
                k += (size_t)snprintf(list + k, sizeof list - k, "%slayer %d: %d", k ? "; " : "", m->layer, h);
            else if (k + 1 < sizeof list)
                k += (size_t)snprintf(list + k, sizeof list - k, ", %d", h);
            first = 0;
        }
    }
    if (!w->ps->sinks || n == 0) return;
    const TraceMap *m0 = &w->t->maps[idx[0]];
    char text[3000], vi[600];
    if (count == 0)
        snprintf(text, sizeof text, "Attention sinks: no head puts more than %.1f of its weight, on average over rows 1 "
                 "… %d, on the first token “%s”.", (double)PICTURES_SINK_MIN, m0->Tq - 1, m0->keys[0]);
    else
        fmt_fit(text, sizeof text, snprintf(text, sizeof text, "Attention sinks: %d of %d heads put more than %.1f of "
                "their weight, on average over rows 1 … %d, on the first token “%s” (heads by layer — %s). The first token is seen by "
                "every row, so a head with nothing to look for parks its weight there: a bright first column in its "
                "heatmap is a sink, not a link (Xiao et al. 2023, “Efficient streaming language models with attention "
                "sinks”).", count, total, (double)PICTURES_SINK_MIN, m0->Tq - 1, m0->keys[0], list));
    snprintf(vi, sizeof vi, "“Attention sink” (chỗ trút chú ý): %d/%d head dồn trung bình hơn %.1f trọng số vào token "
             "đầu tiên “%s”; cột đầu sáng là chỗ trút, không phải liên kết.", count, total, (double)PICTURES_SINK_MIN,
             m0->keys[0]);
    html_raw(w->pg, "<p>");
    html_text(w->pg, text);
    html_raw(w->pg, "</p>\n<p lang=\"vi\">");
    html_text(w->pg, vi);
    html_raw(w->pg, "</p>\n");
}

static int kind_grid(Show *w, const char *stack, const char *kind) {
    const Trace *t = w->t;
    int idx[64], n = 0, n_heads = 0, hidx[64], all_heads = t->n_maps ? t->maps[0].n_heads : 0, taught = 0;
    for (int i = 0; i < t->n_maps && n < 64; i++)
        if (!strcmp(t->maps[i].kind, kind) && layer_chosen(w->ps, t->maps[i].layer)) idx[n++] = i;
    for (int h = 0; h < all_heads && n_heads < 64; h++)
        if (head_chosen(w->ps, h)) hidx[n_heads++] = h;
    if (n == 0 || n_heads == 0) return 0;
    GridJob *g = calloc(1, sizeof *g);
    RenderHeatmap *cells = calloc((size_t)n * n_heads, sizeof *cells);
    char **rt = calloc(n, sizeof(char *)), **ct = calloc(n_heads, sizeof(char *));
    char *tb = calloc((size_t)(n + n_heads), 24);
    if (!g || !cells || !rt || !ct || !tb) {
        free(g); free(cells); free(rt); free(ct); free(tb);
        return errmsg_set(w->err, w->errlen, "out of memory");
    }
    *g = (GridJob){cells, rt, ct, tb, n, n_heads, ""};
    for (int r = 0; r < n; r++) {
        rt[r] = tb + 24 * r;
        int win = pictures_window(&t->maps[idx[r]]);
        if (win) snprintf(rt[r], 24, "layer %d, window %d", t->maps[idx[r]].layer, win);
        else snprintf(rt[r], 24, "layer %d", t->maps[idx[r]].layer);
        for (int h = 0; h < n_heads; h++) {
            cells[r * n_heads + h] = mapview_weights_heatmap(&t->maps[idx[r]], hidx[h], NULL, NULL, -1);
            cells[r * n_heads + h].label_unit = row_unit(w);
            cells[r * n_heads + h].outline = is_taught(w, t->maps[idx[r]].id, hidx[h]);
            taught |= cells[r * n_heads + h].outline;
        }
    }
    const TraceMap *m0 = &t->maps[idx[0]];
    for (int h = 0; h < n_heads; h++) {
        ct[h] = tb + 24 * (n + h);
        if (m0->n_kv_heads > 0 && m0->n_kv_heads < m0->n_heads)   /* grouped-query: which K/V head it reads */
            snprintf(ct[h], 24, "head %d · kv %d", hidx[h], trace_kv_head(m0, hidx[h]));
        else
            snprintf(ct[h], 24, "head %d", hidx[h]);
    }
    char file[256], title[512], sub[512], cap[1024], groups[256], gq[300] = "";
    if (*pictures_kv_groups(m0, groups, sizeof groups)) snprintf(gq, sizeof gq, " · %s", groups);
    snprintf(file, sizeof file, "grid.%s.%s.png", stack, kind);
    char note[300], *title2 = g->title;
    fmt_fit(title, sizeof title, snprintf(title, sizeof title, "%s %s: %s layer × head%s%s", stack_name(stack), kind_title(kind),
                                          w->ps->layer_on || w->ps->head_on ? "chosen" : "every", gq,
                                          ablated_note(w, note, sizeof note)));
    /* the sentence on a second line, and what the outline means */
    char world[1200];
    world_note(w, &t->maps[idx[0]], 1, 0, world, sizeof world);
    char clip[400];
    const char *text = w->ps->stream ? clip_text(clip, sizeof clip, w->s->text, SUBTITLE_CHARS) : w->s->text;
    fmt_fit(title2, sizeof g->title, snprintf(title2, sizeof g->title, "%s\n%s%s%s%s%s%s", title, text,
                                            *w->s->translation ? " → " : "", w->s->translation, world,
                                            m0->row_labels ? " · rows: the word each writes (small: the word it reads)"
                                                           : "",
                                            taught ? "   (outlined: a head training taught where to look)" : ""));
    PicJob *j = job_new(w, JOB_GRID, file);
    if (!j) { grid_job_free(g); return -1; }
    j->grid = g;
    snprintf(sub, sizeof sub, "%s %s", stack_name(stack), kind_title(kind));
    html_section(w->pg, kind, sub, NULL, kind_title_vi(kind));
    if (*groups)
        fmt_fit(cap, sizeof cap, snprintf(cap, sizeof cap, "Model view: %s, every layer (rows) × head (columns). "
                                          "Grouped-query attention: %s (“kv” above each column): heads that share a "
                                          "K/V head compare their own queries with the same keys and mix the same "
                                          "values.", sub, groups));
    else
        fmt_fit(cap, sizeof cap, snprintf(cap, sizeof cap, "Model view: %s, every layer (rows) × head (columns).", sub));
    int win = 0;
    for (int i = 0; i < n && !win; i++) win = pictures_window(&t->maps[idx[i]]);
    if (win) {
        size_t k = strlen(cap);
        snprintf(cap + k, sizeof cap - k, " Rows marked “window %d” are sliding-window layers: each token sees only "
                 "the last %d tokens, the band along the diagonal; the others see every earlier token.", win, win);
        fmt_fit(cap, sizeof cap, (int)strlen(cap));
    }
    html_figure(w->pg, file, cap,
                *groups ? "Toàn cảnh: mỗi hàng là một lớp, mỗi cột là một head; các head ghi cùng “kv” dùng chung một "
                          "head key/value."
                        : "Toàn cảnh: mỗi hàng là một lớp, mỗi cột là một head.", NULL);
    sink_paragraph(w, idx, n);
    return 0;
}

/* ---- every head of every map ---- */

/* The texts of the heatmap job j of every_head (its map and head set). */
static void head_job_texts(const Show *w, PicJob *j) {
    const TraceMap *m = j->m;
    int h = j->h;
    char clip[400], kv[96], kvs[100] = "", sink[200] = "";
    if (*pictures_kv_note(m, h, kv, sizeof kv)) snprintf(kvs, sizeof kvs, " · %s", kv);
    float sw = pictures_sink(w->ps, m, h);
    if (sw >= 0) snprintf(sink, sizeof sink, " · attention sink (bright first column): rows put %.2f on “%s” "
                          "on average", (double)sw, m->keys[0]);
    char win[48] = "";
    if (pictures_window(m)) snprintf(win, sizeof win, " (window %d)", pictures_window(m));
    snprintf(j->title, sizeof j->title, "%s%slayer %d · %s%s · head %d%s%s%s", stack_name(m->stack), *stack_name(m->stack) ? " " : "",
             m->layer, kind_title(m->kind),
             win, h, kvs, is_taught(w, m->id, h) ? " · TAUGHT (trained with gold links)" : "",
             pictures_list_has(w->ps->ablated, m->id, h) ? " · KNOCKED OUT (output zeroed before W_O)" : "");
    /* A decoder row is the position that writes the NEXT target word. */
    char world[800];
    world_note(w, m, 0, 1, world, sizeof world);
    if (!strcmp(m->stack, "decoder") && !w->ps->origin)
        snprintf(j->sub, sizeof j->sub, "%s%s · %s%s",
                 m->row_labels ? "rows: the word each row writes (small, left: the word it reads)"
                               : "rows: decoder input, each writes the next word", sink,
                 clip_text(clip, sizeof clip, w->s->text, SUBTITLE_CHARS), world);
    else
        snprintf(j->sub, sizeof j->sub, "%s%s%s", clip_text(clip, sizeof clip, w->s->text, SUBTITLE_CHARS), sink, world);
    if (sw >= 0)
        snprintf(j->cap, sizeof j->cap, "%s. Attention sink: rows 1 … %d put %.2f of their weight on the first token "
                 "“%s” on average (above %.1f): this head parks its weight there when it has nothing to look "
                 "for.", j->title, m->Tq - 1, (double)sw, m->keys[0], (double)PICTURES_SINK_MIN);
    else
        snprintf(j->cap, sizeof j->cap, "%s%s", j->title, w->ps->origin ? world : "");
    if (w->ps->stream) {   /* the page says the pooling rule in full */
        char pool[800];
        size_t k = strlen(j->cap);
        snprintf(j->cap + k, sizeof j->cap - k, "%s", world_note(w, NULL, 1, 0, pool, sizeof pool));
    }
}

/* Draws job j's PNG (no trace or page change: safe beside other jobs). */
static void job_draw(const Show *w, PicJob *j) {
    char path[4096], layer[16], headtxt[16];
    pictures_path(w, j->file, path, sizeof path);
    RenderMetaItem items[8];
    if (j->kind == JOB_GRID) {
        GridJob *g = j->grid;
        RenderMeta meta = pictures_meta(w, items, g->title, NULL, NULL, NULL);
        j->rc = render_grid(path, g->title, g->cells, g->n, g->n_heads, (const char *const *)g->rt,
                            (const char *const *)g->ct, &meta, j->err, sizeof j->err);
        return;
    }
    snprintf(headtxt, sizeof headtxt, "%d", j->h);
    snprintf(layer, sizeof layer, "%d", j->m->layer);
    if (j->kind == JOB_LINES) {
        RenderMeta meta = pictures_meta(w, items, j->title, j->m->id, NULL, headtxt);
        j->rc = draw_lines(w, j->m, j->h, j->row, path, j->title, &meta, j->err, sizeof j->err);
        return;
    }
    RenderHeatmap hm = mapview_weights_heatmap(j->m, j->h, j->title, j->sub, j->row);
    hm.label_unit = j->label_unit;
    RenderMeta meta = pictures_meta(w, items, hm.title, j->m->id, layer, headtxt);
    j->rc = render_heatmap(path, &hm, &meta, j->err, sizeof j->err);
}

#ifdef _OPENMP
/* Threads for drawing: OMP_NUM_THREADS when set, else every processor (run
 * keeps one thread for the model; drawing files is coarse work). */
static int picture_threads(void) {
    const char *env = getenv("OMP_NUM_THREADS");
    int n = env && atoi(env) > 0 ? atoi(env) : omp_get_num_procs();
    return n > 0 ? n : 1;
}
#endif

/* A long text with no heads chosen draws the heatmaps of its links' heads and
 * the strip's only: pooled, the others add little the grid does not show. */
static int links_heads_only(const PictureSpec *ps) { return ps->stream && !ps->chosen_heads; }

static int link_head(const PictureSpec *ps, int map, int head) {
    if (ps->focus_map == map && ps->focus_head == head) return 1;
    for (int k = 0; k < ps->n_links; k++)
        if (ps->links[k].view.link.map == map && ps->links[k].view.link.head == head) return 1;
    return 0;
}

/* Every chosen head's heatmap up to the cap (--max-pictures; the rest counted
 * in w->skipped), a job each, listed in the trace and on the page in map and
 * head order. */
static int every_head(Show *w) {
    html_section(w->pg, "heads", "Every head", "One heatmap per map and head: queries down the left, keys along the top.",
                 "Mỗi head một bản đồ nhiệt: query ở bên trái, key ở phía trên.");
    int n = 0;
    for (int i = 0; i < w->t->n_maps; i++) {
        const TraceMap *m = &w->t->maps[i];
        if (!layer_chosen(w->ps, m->layer)) continue;
        for (int h = 0; h < m->n_heads; h++) {
            if (!head_chosen(w->ps, h)) continue;
            if (w->ps->max_heatmaps > 0 && n >= w->ps->max_heatmaps) { w->skipped++; continue; }
            if (links_heads_only(w->ps) && !link_head(w->ps, i, h)) { w->skipped++; continue; }
            char file[256];
            snprintf(file, sizeof file, "%s.h%d.png", m->id, h);
            PicJob *j = job_new(w, JOB_HEATMAP, file);
            if (!j) return -1;
            j->m = m;
            j->h = h;
            j->label_unit = row_unit(w);
            head_job_texts(w, j);
            html_figure(w->pg, j->file, j->cap, NULL, NULL);
            n++;
        }
    }
    if (w->skipped > 0) {
        char note[320];
        if (links_heads_only(w->ps))
            snprintf(note, sizeof note, "%d more heads were not drawn: a long text draws the heatmaps of its links' "
                     "heads (the grid, head_summary.png and the interactive views show every head; --max-pictures N "
                     "draws the first N).", w->skipped);
        else
            snprintf(note, sizeof note, "%d more heads were not drawn: at most %d heatmaps per run (--max-pictures; "
                     "--layers and --heads choose which).", w->skipped, w->ps->max_heatmaps);
        html_raw(w->pg, "<p>");
        html_text(w->pg, note);
        html_raw(w->pg, "</p>\n");
    }
    return 0;
}

/* Every job drawn side by side on the processors, the grids first (the
 * longest); the first failure in job order is the run's. */
static int draw_jobs(Show *w) {
    int n = w->n_jobs, rc = 0, *order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order), k = 0;
    if (!order) return errmsg_set(w->err, w->errlen, "out of memory");
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < n; i++)
            if ((w->jobs[i].kind == JOB_GRID) == (pass == 0)) order[k++] = i;
    unsigned char warm[3];
    render_cmap_rgb(RENDER_CMAP_VIRIDIS, 0.5f, warm);   /* builds the colour table before the threads share it */
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(picture_threads()) if (n > 1)
#endif
    for (int i = 0; i < n; i++) job_draw(w, &w->jobs[order[i]]);
    free(order);
    for (int i = 0; i < n && rc == 0; i++)
        if (w->jobs[i].rc != 0) rc = errmsg_set(w->err, w->errlen, "%s", w->jobs[i].err);
    jobs_free(w);
    return rc;
}

/* Removes step matrices (and RoPE's) from every head but (keep_map, keep_head). */
static void strip_steps(Trace *t, int keep_map, int keep_head) {
    for (int i = 0; i < t->n_maps; i++)
        for (int h = 0; h < t->maps[i].n_heads; h++) {
            if (i == keep_map && h == keep_head) continue;
            TraceHead *hd = &t->maps[i].heads[h];
            free(hd->scores); free(hd->scaled); free(hd->masked); free(hd->output);
            hd->scores = hd->scaled = hd->masked = hd->output = NULL;
            free(hd->q); free(hd->q_rot); free(hd->k); free(hd->k_rot);   /* RoPE's step goes with them */
            hd->q = hd->q_rot = hd->k = hd->k_rot = NULL;
        }
}

static void page_header(HtmlPage *pg, const PictureSpec *ps, const Sentence *s, const char *trace_file) {
    char heading[1600], text[400], command[700];   /* a long text's page opens on its start, not all of it */
    snprintf(heading, sizeof heading, "%s%s%s", clip_text(text, sizeof text, s->text, 160), *s->translation ? " → " : "",
             s->translation);
    html_page_begin(pg, heading, NULL);
    html_raw(pg, "<p>Model: <code>");
    html_text(pg, ps->model_path);
    html_raw(pg, "</code> · command: <code>");
    html_text(pg, clip_text(command, sizeof command, ps->command, 400));
    if (ps->no_trace) html_raw(pg, "</code> · no trace.json (--trace none)</p>\n");
    else if (!strcmp(trace_file, "trace.bin"))
        html_raw(pg, "</code> · numbers: <a href=\"trace.bin\">trace.bin</a> (binary: docs/trace-format.md reads it "
                     "with NumPy)</p>\n");
    else html_raw(pg, "</code> · numbers: <a href=\"trace.json\">trace.json</a></p>\n");
    char copy[600];
    pictures_copy_note(s, copy, sizeof copy);
    if (*copy) { html_raw(pg, "<p>"); html_text(pg, copy); html_raw(pg, "</p>\n"); }
    if (ps->outside && *ps->outside) { html_raw(pg, "<p><strong>"); html_text(pg, ps->outside); html_raw(pg, "</strong></p>\n"); }
    if (ps->origin) { html_raw(pg, "<p><strong>"); html_text(pg, ps->origin); html_raw(pg, "</strong></p>\n"); }
}

/* Every picture, in page order. */
/* A long text: each head summed up at full resolution (longtext.h), three
 * layer × head panels with their numbers: how far it reads, how spread its
 * weight is, how much goes to the first token.  What the pooled thumbnails
 * cannot show, in one picture. */
static int head_summary(Show *w) {
    const LongText *lt = w->ps->stream;
    const Trace *t = w->t;
    int L = t->n_maps, H = L ? t->maps[0].n_heads : 0;
    if (!lt || L == 0 || H == 0 || L * H != lt->n_summary) return 0;
    size_t n = (size_t)L * H;
    float *v = malloc(3 * n * sizeof *v);
    char (*lab)[16] = malloc((size_t)(L + H) * sizeof *lab);
    const char **rl = malloc((size_t)(L + H) * sizeof *rl);
    if (!v || !lab || !rl) { free(v); free(lab); free(rl); return errmsg_set(w->err, w->errlen, "out of memory"); }
    float top = 1;
    for (size_t k = 0; k < n; k++) {
        v[k] = lt->summary[k].distance;
        v[n + k] = lt->summary[k].entropy;
        v[2 * n + k] = lt->summary[k].sink;
        if (v[k] > top) top = v[k];
    }
    for (int l = 0; l < L; l++) { snprintf(lab[l], sizeof lab[l], "%d", t->maps[l].layer); rl[l] = lab[l]; }
    for (int h = 0; h < H; h++) { snprintf(lab[L + h], sizeof lab[L + h], "%d", h); rl[L + h] = lab[L + h]; }
    static const char *const titles[3] = {"how far back it reads (tokens)", "how spread (entropy, nats)",
                                          "share on the first token"};
    float vmax[3] = {top, logf((float)lt->T), 1};
    RenderHeatmap p[3];
    for (int k = 0; k < 3; k++)
        p[k] = (RenderHeatmap){.title = titles[k], .values = v + (size_t)k * n, .rows = L, .cols = H, .row_labels = rl,
                               .col_labels = rl + L, .row_axis = "layer", .col_axis = "head", .cmap = RENDER_CMAP_VIRIDIS,
                               .vmin = 0, .vmax = vmax[k], .show_values = -1, .highlight_row = -1};
    char title[600], path[4096], clip[400];
    snprintf(title, sizeof title, "Every head over all %d tokens, at full resolution · %s", lt->T,
             clip_text(clip, sizeof clip, w->s->text, SUBTITLE_CHARS));
    pictures_path(w, "head_summary.png", path, sizeof path);
    RenderMetaItem items[8];
    RenderMeta meta = pictures_meta(w, items, title, NULL, NULL, NULL);
    int rc = render_panels(path, title, p, 3, 0, &meta, w->err, w->errlen);
    free(v); free(lab); free(rl);
    if (rc) return -1;
    trace_add_image(w->t, "head_summary.png");
    char cap[900];
    snprintf(cap, sizeof cap, "Each head summed up over every one of the %d tokens (the pooled pictures average blocks; "
             "these do not): left, how many tokens back a row reads on average (Σ w·|i − j|); middle, how spread its "
             "weight is (entropy −Σ w ln w: 0 is one key, %.1f is every key alike); right, the share on the first "
             "token (an attention sink when large). trace.bin's head_summary holds the numbers.", lt->T,
             (double)logf((float)lt->T));
    html_figure(w->pg, "head_summary.png", cap,
                "Tóm tắt từng head trên toàn bộ văn bản (không gộp khối): trái, trung bình mỗi hàng đọc lùi bao nhiêu "
                "token; giữa, trọng số trải rộng đến đâu (entropy); phải, phần dồn vào token đầu tiên.", NULL);
    return 0;
}

static int draw_all(Show *w) {
    if (all_query_views(w) || pictures_importance(w) || pictures_attribution(w)) return -1;
    if (w->ps->no_pictures) return head_roles_show(w);
    if (step_strip(w)) return -1;
    static const char *const stacks[4] = {"encoder", "decoder", "decoder", "custom"};
    static const char *const kinds[4] = {"self", "masked_self", "cross", "custom"};
    for (int k = 0; k < 4; k++)
        if (kind_grid(w, stacks[k], kinds[k])) return -1;
    if (head_summary(w) || head_roles_show(w) || every_head(w)) return -1;
    return draw_jobs(w);
}

/* The row the page opens on in the focus map: the first query token the
 * terminal and the pictures show (links_find's first: the --query token, else
 * the first pronoun, whatever its case: "It", "She"), where the focus map
 * reads it (a word of the merged words: its piece of the same text); else
 * the first --query token or pronoun there; -1: none. */
static int page_query_row(const PictureSpec *ps, const Trace *t) {
    if (ps->focus_map < 0 || ps->focus_map >= t->n_maps) return -1;
    const TraceMap *m = &t->maps[ps->focus_map];
    const LinksFound *f = ps->n_links > 0 ? &ps->links[0] : NULL;
    if (ps->stream) return f ? longtext_row(ps->stream, pictures_piece(ps, f->q)) : -1;   /* its block, or its window row */
    const Trace *lt = ps->words ? ps->words : t;   /* the links count words when the pieces were merged */
    if (f && f->view.link.map >= 0 && f->view.link.map < lt->n_maps && f->q < lt->maps[f->view.link.map].Tq) {
        const char *word = lt->maps[f->view.link.map].queries[f->q];
        if (!ps->words && f->q < m->Tq && !strcmp(m->queries[f->q], word)) return f->q;
        for (int i = 0; i < m->Tq; i++)
            if (!strcmp(m->queries[i], word)) return i;
    }
    for (int i = 0; i < m->Tq; i++)
        if (ps->query ? !strcmp(m->queries[i], ps->query) : links_is_pronoun(m->queries[i])) return i;
    return -1;
}

/* trace.json or trace.bin (rep->trace_file, "" for --trace none): as asked,
 * else JSON while it stays under TRACE_JSON_MAX_BYTES (rep->trace_switched
 * when it would not). */
static void choose_trace_file(const PictureSpec *ps, const Trace *t, PictureReport *rep) {
    int choose = !ps->no_trace && ps->trace_format == PICTURES_TRACE_AUTO && !ps->trace_f16 && !ps->stream;
    rep->trace_json_bytes = choose ? trace_json_estimate(t) : 0;   /* a pass over every mask: only to choose */
    rep->trace_switched = choose && rep->trace_json_bytes > TRACE_JSON_MAX_BYTES;
    int bin = ps->trace_format == PICTURES_TRACE_BIN || ps->trace_f16 || rep->trace_switched || ps->stream;
    snprintf(rep->trace_file, sizeof rep->trace_file, "%s", ps->no_trace ? "" : bin ? "trace.bin" : "trace.json");
}

int pictures_show_sentence(const PictureSpec *ps, const Sentence *s, Trace *t, PictureReport *rep,
                           char *err, size_t errlen) {
    HtmlPage pg;
    PageData pd;
    page_data_init(&pd);
    Show w = {ps, s, t, &pg, err, errlen, 0, NULL, 0, 0};
    if (!ps->keep_steps) strip_steps(t, ps->focus_map, ps->focus_head);   /* only the strip needs them */
    choose_trace_file(ps, t, rep);
    page_header(&pg, ps, s, rep->trace_file);
    size_t views_at = pg.len;   /* the interactive views go under the header */
    double t0 = now_ms();
    int r = draw_all(&w);
    jobs_free(&w);   /* drawn, or left when a step failed */
    rep->ms_pictures = now_ms() - t0;
    rep->n_pictures = t->n_images;
    rep->n_heatmaps_skipped = w.skipped;
    rep->links_heads_only = links_heads_only(ps);
    /* the page keeps the focus head's steps too, for its step-through */
    PageFocus focus = {ps->focus_map, ps->focus_head, page_query_row(ps, t)};
    const char *file = ps->no_trace ? "trace.json" : rep->trace_file;
    if (r == 0) r = page_data_add(&pd, t, file, ps->no_trace ? NULL : file, &focus, err, errlen);
    t0 = now_ms();
    if (!ps->keep_steps) strip_steps(t, -1, -1);
    char path[4096];
    if (r == 0 && ps->stream) {
        rep->long_tokens = ps->stream->T;
        rep->long_block = ps->stream->block;
        rep->long_from = ps->stream->win_from;
        rep->long_to = ps->stream->win_to;
        r = longtext_end(ps->stream, ps->stream_members, t, err, errlen);
    } else if (r == 0 && !ps->no_trace) {
        snprintf(path, sizeof path, "%s/%s", ps->dir, file);
        TraceBinOptions bo = {.weights_f16 = ps->trace_f16};
        r = strcmp(file, "trace.bin") ? trace_write_json(t, path, err, errlen)
                                      : trace_write_bin_with(t, path, &bo, err, errlen);
    }
    rep->ms_trace = now_ms() - t0;
    if (r != 0) { html_page_free(&pg); page_data_free(&pd); return -1; }
    snprintf(path, sizeof path, "%s/index.html", ps->dir);
    r = page_write(&pg, views_at, &pd, path, err, errlen);
    page_data_free(&pd);
    return r;
}
