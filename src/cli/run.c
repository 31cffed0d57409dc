/* cli_run.c — `attnviz run`: the model on the user's sentences → pictures + trace.
 *
 * For each sentence: tokenize, translate (greedy decoding, or the decoder is
 * given --target), run the instrumented forward pass, then write
 *   {map}.h{H}.png          a heatmap per map and head (encoder.0.self.h2.png …)
 *   grid.{stack}.{kind}.png every layer × head of one kind ("model view")
 *   lines.{pos}-{tok}.png   lines view of the query token (pronouns by default)
 *   steps.{map}.h{H}.png    step strip of the --focus head
 *   trace.json, index.html
 * and print the translation and, for each pronoun, the head whose strongest
 * link is strongest and where it points.  Several sentences go to one subfolder
 * each (sentence-1/ …) with an index.html linking them; --batch runs them
 * together padded to one length, so each trace shows <pad> and its mask. */
#include "cli/cli.h"
#include "model/decode.h"
#include "render/html.h"
#include "render/mapview.h"
#include "trace/maps.h"
#include "model/model.h"
#include "render/render.h"
#include "model/tokenizer.h"
#include "pipeline/model_file.h"
#include "trace/trace.h"
#include <ctype.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUN_MAX_SENTENCES 64
#define RUN_MAX_OUT 48          /* longest translation, in tokens */

typedef struct {
    const char *model, *to, *target, *out, *query, *focus, *trace_mode;
    int batch, quiet, no_pictures, timing;
    const char *sentences[RUN_MAX_SENTENCES];
    int n_sentences;
} RunArgs;

typedef struct {
    Tokens words;        /* the sentence's tokens                          */
    char **src_tok;      /* words + "<eos>" (S_b strings, borrowed + const) */
    int *src;            /* ids, S_b = words.n + 1                          */
    int S;
    int *tgt;            /* decoder input: tag, y1..yn                      */
    int T;
    char **tgt_tok;      /* T strings (borrowed from the vocab)             */
    char translation[1024];
} RunSentence;

static void run_usage(FILE *f) {
    fputs(
        "usage: attnviz run [options] \"SENTENCE\" [\"SENTENCE\" ...]\n\n"
        "Runs the model on English sentences, translates them, and draws every\n"
        "attention map: per-head heatmaps, a grid per kind, a lines view of the\n"
        "pronouns, a step strip, trace.json and index.html.\n\n"
        "  --model PATH      checkpoint (default: the shipped model, see attnviz info)\n"
        "  --to fr|vi        target language (default fr)\n"
        "  --target TEXT     give the decoder this translation instead of decoding\n"
        "  --query TOKEN     draw the lines view for this source token (default: pronouns)\n"
        "  --focus L.H       step strip for encoder layer L head H, or MAP.H such as\n"
        "                    decoder.1.cross.2 (default: the head that links the first\n"
        "                    pronoun most strongly, else encoder.0.self.0)\n"
        "  --trace weights|steps  steps also keeps scores, scaled, masked, output in trace.json\n"
        "  --batch           run all sentences as one padded batch (shows <pad> and its mask)\n"
        "  --out DIR         output folder (default output/)\n"
        "  --quiet           print only errors\n"
        "  --timing          print how long the model, the pictures and the trace took\n\n"
        "Example:\n"
        "  attnviz run \"the animal didn't cross the street because it was too tired .\"\n",
        f);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int is_pronoun(const char *w) {
    static const char *const p[] = {"it", "he", "she", "they", "him", "her", "them", "its", "his", NULL};
    for (int i = 0; p[i]; i++) if (!strcmp(w, p[i])) return 1;
    return 0;
}

static int parse_args(RunArgs *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->out = "output";
    a->to = "fr";
    a->trace_mode = "weights";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const CliOption opts[] = {
            {"--model", &a->model}, {"--to", &a->to}, {"--target", &a->target}, {"--out", &a->out},
            {"--query", &a->query}, {"--focus", &a->focus}, {"--trace", &a->trace_mode}};
        int taken = cli_take_option(argc, argv, &i, opts, (int)(sizeof opts / sizeof opts[0]), "run");
        if (taken < 0) return -1;
        if (taken) continue;
        if (!strcmp(arg, "--batch")) a->batch = 1;
        else if (!strcmp(arg, "--quiet")) a->quiet = 1;
        else if (!strcmp(arg, "--no-pictures")) a->no_pictures = 1;
        else if (!strcmp(arg, "--timing")) a->timing = 1;
        else if (cli_is_help(arg)) { run_usage(stdout); return 1; }
        else if (arg[0] == '-' && arg[1] == '-') {
            cli_error("unknown option '%s' for run (see attnviz run --help)", arg);
            return -1;
        } else {
            if (a->n_sentences == RUN_MAX_SENTENCES) {
                cli_error("too many sentences (at most %d per run)", RUN_MAX_SENTENCES);
                return -1;
            }
            a->sentences[a->n_sentences++] = arg;
        }
    }
    if (a->n_sentences == 0) {
        cli_error("run needs a sentence, e.g. attnviz run \"the cat sat on the mat .\"");
        return -1;
    }
    if (strcmp(a->to, "fr") && strcmp(a->to, "vi")) {
        cli_error("--to '%s' is not a target language this model knows (use fr or vi)", a->to);
        return -1;
    }
    if (strcmp(a->trace_mode, "weights") && strcmp(a->trace_mode, "steps")) {
        cli_error("--trace '%s' must be weights or steps", a->trace_mode);
        return -1;
    }
    if (a->target && a->n_sentences != 1) {
        cli_error("--target gives the translation of one sentence; run one sentence with it");
        return -1;
    }
    return 0;
}

static void sentence_free(RunSentence *s) {
    tokens_free(&s->words);
    free(s->src_tok); free(s->src); free(s->tgt); free(s->tgt_tok);
    memset(s, 0, sizeof *s);
}

/* Tokenizes and encodes one sentence (source + <eos>); warns about unknown words. */
static int prepare_source(RunSentence *s, const char *text, const Vocab *v, int index, int n_total) {
    char err[512];
    if (tokenizer_split(&s->words, text, err, sizeof err) != 0) {
        if (n_total > 1) cli_error("sentence %d: %s", index + 1, err);
        else cli_error("%s", err);
        return -1;
    }
    s->S = s->words.n + 1;
    s->src = malloc(sizeof(int) * s->S);
    s->src_tok = malloc(sizeof(char *) * s->S);
    int *unknown = malloc(sizeof(int) * s->S);
    if (!s->src || !s->src_tok || !unknown) { free(unknown); cli_error("out of memory"); return -1; }
    int n_unk = vocab_encode(v, (const char *const *)s->words.tok, s->words.n, s->src, unknown);
    s->src[s->words.n] = VOCAB_EOS;
    for (int i = 0; i < s->words.n; i++) s->src_tok[i] = s->words.tok[i];
    s->src_tok[s->words.n] = (char *)vocab_word(v, VOCAB_EOS);
    if (n_unk > 0) {
        char list[512] = "";
        for (int i = 0; i < n_unk; i++) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s'%s'", i ? ", " : "", s->words.tok[unknown[i]]);
        }
        cli_warn("%d word(s) not in the model's vocabulary, read as <unk>: %s (it knows %d words, those of the "
                 "lexicon in samples/corpus/; expect a poor translation)", n_unk, list, v->size);
    }
    free(unknown);
    return 0;
}

static int set_target_tokens(RunSentence *s, const Vocab *v) {
    s->tgt_tok = malloc(sizeof(char *) * (s->T > 0 ? s->T : 1));
    if (!s->tgt_tok) return -1;
    for (int t = 0; t < s->T; t++) s->tgt_tok[t] = (char *)vocab_word(v, s->tgt[t]);
    char err[128];
    if (vocab_decode(v, s->tgt, s->T, VOCAB_DECODE_SKIP_SPECIAL, s->translation, sizeof s->translation,
                     err, sizeof err) < 0)
        snprintf(s->translation, sizeof s->translation, "(too long to show)");
    return 0;
}

/* ---- pictures ---- */

static void safe_name(char *out, size_t n, const char *tok) {
    size_t j = 0;
    for (const unsigned char *p = (const unsigned char *)tok; *p && j + 1 < n && j < 24; p++)
        out[j++] = (char)(isalnum(*p) ? *p : '_');
    out[j] = '\0';
}

static const char *kind_title(const char *kind) {
    if (!strcmp(kind, "self")) return "self-attention";
    if (!strcmp(kind, "masked_self")) return "masked self-attention";
    if (!strcmp(kind, "cross")) return "cross-attention (encoder–decoder)";
    return kind;
}

static const char *kind_title_vi(const char *kind) {
    if (!strcmp(kind, "self")) return "tự chú ý (self-attention) của encoder";
    if (!strcmp(kind, "masked_self")) return "tự chú ý có che (masked self-attention) của decoder";
    if (!strcmp(kind, "cross")) return "chú ý encoder–decoder (cross-attention)";
    return kind;
}

typedef struct {
    const char *dir;           /* output folder of this sentence */
    const char *sentence;
    const char *model_path;
    Trace *trace;
    HtmlPage *page;
    const char *cmd;           /* the command line, for captions */
    int quiet;
    int coref_layer, coref_head; /* the model's coreference head (metadata), or -1 */
    double coref_acc;            /* its held-out accuracy per attnviz eval, or -1 */
    int coref_supervised;        /* 1 if that head was trained with gold antecedents */
} PicCtx;

static int write_png_heatmap(PicCtx *c, const char *file, const RenderHeatmap *hm, const char *map_id,
                             int head) {
    char path[4096], err[512], layer[16], headtxt[16];
    snprintf(path, sizeof path, "%s/%s", c->dir, file);
    snprintf(headtxt, sizeof headtxt, "%d", head);
    const TraceMap *m = trace_find_map(c->trace, map_id);
    snprintf(layer, sizeof layer, "%d", m ? m->layer : 0);
    RenderMetaItem items[] = {{"Title", hm->title}, {"Sentence", c->sentence}, {"Model", c->model_path},
                              {"Map", map_id}, {"Layer", layer}, {"Head", headtxt}};
    RenderMeta meta = {items, 6};
    if (render_heatmap(path, hm, &meta, err, sizeof err) != 0) { cli_error("%s", err); return -1; }
    return trace_add_image(c->trace, file);
}

typedef struct { int map, head, key; float weight; } Link;

/* Over every encoder self-attention head: the one whose strongest link from q is strongest. */
static Link best_link(const Trace *t, int q) {
    Link best = {-1, -1, -1, -1};
    for (int i = 0; i < t->n_maps; i++) {
        const TraceMap *m = &t->maps[i];
        if (strcmp(m->kind, "self") || q >= m->Tq) continue;
        for (int h = 0; h < m->n_heads; h++) {
            float w;
            int k = maps_strongest_link(m, h, q, &w);
            if (k >= 0 && w > best.weight) best = (Link){i, h, k, w};
        }
    }
    return best;
}

/* The link the pictures show for query q: the model's coreference head when
 * its metadata names one (that head is what eval measured), else the encoder
 * head whose strongest link is strongest. */
static Link pronoun_link(const Trace *t, int q, int coref_layer, int coref_head) {
    if (coref_layer >= 0) {
        char id[64];
        snprintf(id, sizeof id, "encoder.%d.self", coref_layer);
        for (int i = 0; i < t->n_maps; i++) {
            const TraceMap *m = &t->maps[i];
            if (strcmp(m->id, id) || q >= m->Tq || coref_head >= m->n_heads) continue;
            float w;
            int k = maps_strongest_link(m, coref_head, q, &w);
            if (k >= 0) return (Link){i, coref_head, k, w};
        }
    }
    return best_link(t, q);
}

static int parse_focus(const char *focus, const Trace *t, int *map, int *head) {
    char id[128];
    int l, h;
    if (sscanf(focus, "%d.%d", &l, &h) == 2 && strchr(focus, '.') == strrchr(focus, '.')) {
        snprintf(id, sizeof id, "encoder.%d.self", l);
    } else {
        const char *dot = strrchr(focus, '.');
        if (!dot || dot == focus || sscanf(dot + 1, "%d", &h) != 1 || (size_t)(dot - focus) >= sizeof id) {
            cli_error("--focus '%s' is not L.H or MAP.H (e.g. --focus 1.2 or --focus decoder.0.cross.3)", focus);
            return -1;
        }
        memcpy(id, focus, (size_t)(dot - focus));
        id[dot - focus] = '\0';
    }
    for (int i = 0; i < t->n_maps; i++) {
        if (strcmp(t->maps[i].id, id)) continue;
        if (h < 0 || h >= t->maps[i].n_heads) {
            cli_error("--focus '%s': head %d does not exist (heads 0..%d)", focus, h, t->maps[i].n_heads - 1);
            return -1;
        }
        *map = i;
        *head = h;
        return 0;
    }
    cli_error("--focus '%s': this model has no map %s (maps look like encoder.0.self, decoder.1.cross)", focus, id);
    return -1;
}

/* All pictures of one sentence's trace.  Returns 0 or -1 (message printed). */
static int draw_sentence(PicCtx *c, RunSentence *s, const RunArgs *a, int focus_map, int focus_head) {
    Trace *t = c->trace;
    HtmlPage *pg = c->page;
    char file[256], title[256], sub[512], cap[512], capvi[512];
    int n_heads = t->n_maps ? t->maps[0].n_heads : 0;

    /* Pronouns (or --query): lines views + printed answer. */
    char how_en[512], how_vi[512];
    if (c->coref_layer >= 0) {
        snprintf(how_en, sizeof how_en,
                 "Each pronoun's strongest link (ignoring itself and special tokens) in encoder layer %d head %d: the model's "
                 "coreference head, which links a pronoun to its true antecedent in %.0f%% of held-out sentences (attnviz eval).%s",
                 c->coref_layer, c->coref_head, 100 * c->coref_acc,
                 c->coref_supervised ? " This head was trained with the gold antecedent as a target (train --supervise-coref): "
                                       "it was taught the link, it did not discover it; see docs/model-card.md." : "");
        snprintf(how_vi, sizeof how_vi,
                 "Liên kết mạnh nhất của mỗi đại từ (bỏ qua chính nó và token đặc biệt) ở encoder lớp %d head %d: head đồng "
                 "tham chiếu của mô hình, đúng tiền ngữ ở %.0f%% câu kiểm tra (attnviz eval).%s",
                 c->coref_layer, c->coref_head, 100 * c->coref_acc,
                 c->coref_supervised ? " Head này được huấn luyện với tiền ngữ đúng làm mục tiêu (--supervise-coref): nó được "
                                       "dạy liên kết này, không tự khám phá ra." : "");
    } else {
        snprintf(how_en, sizeof how_en, "For each pronoun, the encoder head whose strongest link (ignoring the pronoun itself "
                 "and special tokens) is strongest, and where it points. This model records no coreference head, so "
                 "the strongest head is shown; strongest is not the same as right.");
        snprintf(how_vi, sizeof how_vi, "Với mỗi đại từ: head của encoder có liên kết mạnh nhất (bỏ qua chính nó và token đặc "
                 "biệt), và nó chỉ tới đâu. Mạnh nhất chưa chắc là đúng.");
    }
    html_section(pg, "coreference", "Which head links the pronoun to its antecedent?", how_en, how_vi);
    int any_query = 0;
    for (int q = 0; q < s->words.n; q++) {
        const char *w = s->words.tok[q];
        if (a->query ? strcmp(w, a->query) != 0 : !is_pronoun(w)) continue;
        Link L = pronoun_link(t, q, c->coref_layer, c->coref_head);
        if (L.map < 0) continue;
        any_query = 1;
        const TraceMap *m = &t->maps[L.map];
        if (!c->quiet) {
            printf("  %s (position %d) → %s (position %d): %s head %d, weight %.2f%s\n", w, q, m->keys[L.key], L.key,
                   m->id, L.head, (double)L.weight,
                   c->coref_layer < 0 ? "" : c->coref_supervised ? "  (the model's coreference head, trained with gold antecedents)"
                                                                 : "  (the model's coreference head)");
            Link B = best_link(t, q);
            if (c->coref_layer >= 0 && B.map >= 0 && (B.map != L.map || B.head != L.head))
                printf("      strongest link of any encoder head: %s (%s head %d, weight %.2f)\n",
                       t->maps[B.map].keys[B.key], t->maps[B.map].id, B.head, (double)B.weight);
        }
        char safe[32];
        safe_name(safe, sizeof safe, w);
        snprintf(file, sizeof file, "lines.%d-%s.png", q, safe);
        int taught = c->coref_supervised && L.head == c->coref_head && m->layer == c->coref_layer;
        snprintf(title, sizeof title, "“%s” → “%s”   (%s head %d, %.2f%s)", w, m->keys[L.key], m->id, L.head,
                 (double)L.weight, taught ? ", taught head" : "");
        char path[4096], err[512], headtxt[16];
        snprintf(path, sizeof path, "%s/%s", c->dir, file);
        snprintf(headtxt, sizeof headtxt, "%d", L.head);
        RenderMetaItem items[] = {{"Title", title}, {"Sentence", c->sentence}, {"Model", c->model_path},
                                  {"Map", m->id}, {"Head", headtxt}};
        RenderMeta meta = {items, 5};
        if (!a->no_pictures) {
            if (render_lines(path, title, (const char *const *)m->queries, m->Tq, (const char *const *)m->keys, m->Tk,
                             m->heads[L.head].weights, m->mask, q, &meta, err, sizeof err) != 0) {
                cli_error("%s", err);
                return -1;
            }
            trace_add_image(t, file);
            snprintf(cap, sizeof cap, "Lines view: “%s” attends most to “%s” in %s head %d (weight %.2f).%s", w,
                     m->keys[L.key], m->id, L.head, (double)L.weight,
                     taught ? " This head was trained with gold antecedents." : "");
            snprintf(capvi, sizeof capvi, "“%s” chú ý nhiều nhất tới “%s” (%s, head %d, trọng số %.2f).", w,
                     m->keys[L.key], m->id, L.head, (double)L.weight);
            html_figure(pg, file, cap, capvi, NULL);
            /* The heatmap of that head with the pronoun's row outlined. */
            snprintf(file, sizeof file, "%s.h%d.q%d.png", m->id, L.head, q);
            snprintf(title, sizeof title, "%s · %s · head %d", m->id, kind_title(m->kind), L.head);
            snprintf(sub, sizeof sub, "row “%s” outlined%s · %s", w,
                     taught ? " · this head was taught with gold antecedents" : "", c->sentence);
            RenderHeatmap hm = mapview_weights_heatmap(m, L.head, title, sub, q);
            if (write_png_heatmap(c, file, &hm, m->id, L.head)) return -1;
            html_figure(pg, file, "The same head as a heatmap, the pronoun's row outlined.",
                        "Cùng head đó dạng bản đồ nhiệt, hàng của đại từ được viền.", NULL);
        }
    }
    if (!any_query) {
        html_raw(pg, "<p>");
        html_text(pg, a->query ? "The --query token is not in this sentence." : "No pronoun in this sentence.");
        html_raw(pg, "</p>\n");
        if (a->query && !c->quiet) cli_warn("--query '%s' is not a token of \"%s\"", a->query, c->sentence);
    }
    if (a->no_pictures) return 0;

    /* Step strip of the focus head (its steps are in the trace). */
    if (focus_map >= 0) {
        const TraceMap *m = &t->maps[focus_map];
        const TraceHead *hd = &m->heads[focus_head];
        if (hd->scores) {
            char stitle[5][64], formula[64];
            snprintf(formula, sizeof formula, "÷ √d_k = ÷ √%d", m->d_k);
            RenderHeatmap p[5];
            const float *x[5] = {hd->scores, hd->scaled, hd->masked, hd->weights, hd->output};
            const char *names[5] = {"1. scores = Q·Kᵀ", "2. scaled = scores / √d_k", "3. masked = scaled + M",
                                    "4. weights = softmax", "5. output = weights · V"};
            char **dims = malloc(sizeof(char *) * m->Dv);
            char *dimbuf = malloc((size_t)m->Dv * 8);
            if (!dims || !dimbuf) { free(dims); free(dimbuf); cli_error("out of memory"); return -1; }
            for (int d = 0; d < m->Dv; d++) { dims[d] = dimbuf + d * 8; snprintf(dims[d], 8, "%d", d); }
            for (int i = 0; i < 5; i++) {
                snprintf(stitle[i], sizeof stitle[i], "%s", names[i]);
                p[i] = mapview_weights_heatmap(m, focus_head, stitle[i], i == 1 ? formula : NULL, -1);
                p[i].values = x[i];
                p[i].mask = (i == 2 || i == 3) ? m->mask : NULL;
                p[i].mask_label = i == 2 ? "−∞" : "0";
                p[i].show_values = 0;
                if (i != 3) { p[i].cmap = RENDER_CMAP_DIVERGING; p[i].vmin = p[i].vmax = 0; }
            }
            p[4].cols = m->Dv;
            p[4].col_labels = (const char *const *)dims;
            p[4].col_axis = "value dimension";
            snprintf(file, sizeof file, "steps.%s.h%d.png", m->id, focus_head);
            snprintf(title, sizeof title, "%s head %d step by step: softmax(Q·Kᵀ / √d_k + M) · V", m->id, focus_head);
            char path[4096], err[512];
            snprintf(path, sizeof path, "%s/%s", c->dir, file);
            RenderMetaItem items[] = {{"Title", title}, {"Sentence", c->sentence}, {"Model", c->model_path}};
            RenderMeta meta = {items, 3};
            int r = render_strip(path, title, p, 5, &meta, err, sizeof err);
            free(dims); free(dimbuf);
            if (r) { cli_error("%s", err); return -1; }
            trace_add_image(t, file);
            html_section(pg, "steps", "One head, step by step", "Q·Kᵀ → ÷√d_k → + mask → softmax → ·V for one head.",
                         "Từng bước của một head: Q·Kᵀ → ÷√d_k → + mặt nạ → softmax → ·V.");
            html_figure(pg, file, title, NULL, NULL);
        }
    }

    /* Grids, one per kind, then every head. */
    const char *stacks[3] = {"encoder", "decoder", "decoder"};
    const char *kinds[3] = {"self", "masked_self", "cross"};
    for (int k = 0; k < 3; k++) {
        int idx[64], n = 0;
        for (int i = 0; i < t->n_maps && n < 64; i++)
            if (!strcmp(t->maps[i].kind, kinds[k])) idx[n++] = i;
        if (n == 0) continue;
        RenderHeatmap *cells = calloc((size_t)n * n_heads, sizeof *cells);
        char **rt = calloc(n, sizeof(char *)), **ct = calloc(n_heads, sizeof(char *));
        char *tb = calloc((size_t)(n + n_heads), 24);
        if (!cells || !rt || !ct || !tb) { free(cells); free(rt); free(ct); free(tb); cli_error("out of memory"); return -1; }
        for (int r = 0; r < n; r++) {
            rt[r] = tb + 24 * r;
            snprintf(rt[r], 24, "layer %d", t->maps[idx[r]].layer);
            for (int h = 0; h < n_heads; h++)
                cells[r * n_heads + h] = mapview_weights_heatmap(&t->maps[idx[r]], h, NULL, NULL, -1);
        }
        for (int h = 0; h < n_heads; h++) { ct[h] = tb + 24 * (n + h); snprintf(ct[h], 24, "head %d", h); }
        snprintf(file, sizeof file, "grid.%s.%s.png", stacks[k], kinds[k]);
        snprintf(title, sizeof title, "%s %s: every layer × head", stacks[k], kind_title(kinds[k]));
        char path[4096], err[512];
        snprintf(path, sizeof path, "%s/%s", c->dir, file);
        RenderMetaItem items[] = {{"Title", title}, {"Sentence", c->sentence}, {"Model", c->model_path}};
        RenderMeta meta = {items, 3};
        int r = render_grid(path, title, cells, n, n_heads, (const char *const *)rt, (const char *const *)ct, &meta,
                            err, sizeof err);
        free(cells); free(rt); free(ct); free(tb);
        if (r) { cli_error("%s", err); return -1; }
        trace_add_image(t, file);
        snprintf(sub, sizeof sub, "%s %s", stacks[k], kind_title(kinds[k]));
        html_section(pg, kinds[k], sub, NULL, kind_title_vi(kinds[k]));
        snprintf(cap, sizeof cap, "Model view: %s, every layer (rows) × head (columns).", sub);
        html_figure(pg, file, cap, "Toàn cảnh: mỗi hàng là một lớp, mỗi cột là một head.", NULL);
    }

    html_section(pg, "heads", "Every head", "One heatmap per map and head: queries down the left, keys along the top.",
                 "Mỗi head một bản đồ nhiệt: query ở bên trái, key ở phía trên.");
    for (int i = 0; i < t->n_maps; i++) {
        const TraceMap *m = &t->maps[i];
        for (int h = 0; h < m->n_heads; h++) {
            snprintf(file, sizeof file, "%s.h%d.png", m->id, h);
            snprintf(title, sizeof title, "%s layer %d · %s · head %d", m->stack, m->layer, kind_title(m->kind), h);
            /* A decoder row is the position that writes the NEXT target word. */
            if (!strcmp(m->stack, "decoder"))
                snprintf(sub, sizeof sub, "rows: decoder input, each writes the next word · %s", c->sentence);
            else
                snprintf(sub, sizeof sub, "%s", c->sentence);
            RenderHeatmap hm = mapview_weights_heatmap(m, h, title, sub, -1);
            if (write_png_heatmap(c, file, &hm, m->id, h)) return -1;
            html_figure(pg, file, title, NULL, NULL);
        }
    }
    return 0;
}

/* Removes step matrices from every head but the focus one (trace "weights" mode). */
static void strip_steps(Trace *t, int keep_map, int keep_head) {
    for (int i = 0; i < t->n_maps; i++)
        for (int h = 0; h < t->maps[i].n_heads; h++) {
            if (i == keep_map && h == keep_head) continue;
            TraceHead *hd = &t->maps[i].heads[h];
            free(hd->scores); free(hd->scaled); free(hd->masked); free(hd->output);
            hd->scores = hd->scaled = hd->masked = hd->output = NULL;
        }
}

int cli_run(int argc, char **argv) {
    RunArgs a;
    int rc = parse_args(&a, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
#ifdef _OPENMP
    /* One sentence's matrices are tiny: waiting OpenMP threads cost more than
     * they save (the same measurement as demo's). */
    omp_set_num_threads(1);
#endif

    ModelFile mf = {0};
    RunSentence sent[RUN_MAX_SENTENCES];
    memset(sent, 0, sizeof sent);
    int status = 1, n = a.n_sentences;
    int *bsrc = NULL, *btgt = NULL, *bsl = NULL, *btl = NULL;
    char err[512];

    double t_model = 0, t_pics = 0, t_trace = 0, t0 = now_ms();
    int n_pictures = 0;
    if (model_file_load(&mf, a.model, err, sizeof err) != 0) { cli_error("%s", err); goto cleanup; }
    Model *const mp = &mf.m;
    const Vocab *const vp = &mf.v;
    const char *const model_path = mf.path, *const metadata = mf.metadata;
    int coref_layer = -1, coref_head = -1;
    double coref_acc = -1;
    if (!maps_coref_head_from_metadata(metadata, mp->config.n_enc_layers, mp->config.n_heads, &coref_layer, &coref_head,
                                       &coref_acc))
        coref_layer = coref_head = -1;
    char coref_id[64];
    snprintf(coref_id, sizeof coref_id, "encoder.%d.self", coref_layer);
    int coref_supervised = coref_layer >= 0 && maps_head_supervised(metadata, coref_id, coref_head);
    if (mp->config.arch != MODEL_ENC_DEC) {
        cli_error("run needs an encoder–decoder model; %s is %s", model_path, model_arch_name(mp->config.arch));
        goto cleanup;
    }
    int tag = !strcmp(a.to, "vi") ? VOCAB_2VI : VOCAB_2FR;
    for (int i = 0; i < n; i++)
        if (prepare_source(&sent[i], a.sentences[i], vp, i, n) != 0) goto cleanup;

    /* Translate: the given --target, or greedy decoding. */
    for (int i = 0; i < n; i++) {
        RunSentence *s = &sent[i];
        if (s->S > mp->config.max_len) {
            cli_error("sentence %d has %d tokens; this model reads at most %d", i + 1, s->S - 1, mp->config.max_len - 1);
            goto cleanup;
        }
        s->tgt = malloc(sizeof(int) * (RUN_MAX_OUT + 2));
        if (!s->tgt) { cli_error("out of memory"); goto cleanup; }
        if (a.target) {
            Tokens tt = {0};
            if (tokenizer_split(&tt, a.target, err, sizeof err) != 0) { cli_error("--target: %s", err); goto cleanup; }
            if (tt.n + 1 > RUN_MAX_OUT || tt.n + 1 > mp->config.max_len) {
                cli_error("--target has %d tokens; at most %d", tt.n, RUN_MAX_OUT - 1);
                tokens_free(&tt);
                goto cleanup;
            }
            s->tgt[0] = tag;
            int *unk = malloc(sizeof(int) * tt.n);
            int n_unk = unk ? vocab_encode(vp, (const char *const *)tt.tok, tt.n, s->tgt + 1, unk) : 0;
            if (n_unk > 0) cli_warn("%d word(s) of --target not in the vocabulary, read as <unk> (first: '%s')", n_unk,
                                    tt.tok[unk[0]]);
            free(unk);
            s->T = tt.n + 1;
            tokens_free(&tt);
        } else {
            int max_out = mp->config.max_len < RUN_MAX_OUT ? mp->config.max_len : RUN_MAX_OUT;
            if (decode_greedy(mp, s->src, s->S, tag, max_out, s->tgt, &s->T, err, sizeof err) != 0) {
                cli_error("%s", err);
                goto cleanup;
            }
        }
        if (set_target_tokens(s, vp) != 0) { cli_error("out of memory"); goto cleanup; }
    }

    t_model += now_ms() - t0;
    if (cli_prepare_outdir(a.out) != 0) goto cleanup;

    /* The forward pass that the pictures show: each sentence alone, or one padded batch. */
    int S = 0, T = 0, B = a.batch ? n : 1;
    for (int i = 0; i < n; i++) {
        if (sent[i].S > S) S = sent[i].S;
        if (sent[i].T > T) T = sent[i].T;
    }
    bsrc = calloc((size_t)B * S, sizeof(int)); btgt = calloc((size_t)B * T, sizeof(int));
    bsl = calloc(B, sizeof(int)); btl = calloc(B, sizeof(int));
    if (!bsrc || !btgt || !bsl || !btl) { cli_error("out of memory"); goto cleanup; }

    HtmlPage top;
    int top_open = n > 1;
    if (top_open) html_page_begin(&top, "attnviz run", "One page per sentence.");
    char cmdline[2048] = "attnviz";
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(cmdline);
        int quote = strchr(argv[i], ' ') || strchr(argv[i], '\'');
        snprintf(cmdline + len, sizeof cmdline - len, quote ? " \"%s\"" : " %s", argv[i]);
    }

    for (int i = 0; i < n; i++) {
        RunSentence *s = &sent[i];
        int b = a.batch ? i : 0;
        t0 = now_ms();
        if (!a.batch || i == 0) {
            int first = a.batch ? 0 : i, last = a.batch ? n : i + 1;
            int SS = a.batch ? S : s->S, TT = a.batch ? T : s->T;
            for (int j = first; j < last; j++) {
                int r = j - first;
                for (int x = 0; x < SS; x++) bsrc[r * SS + x] = x < sent[j].S ? sent[j].src[x] : VOCAB_PAD;
                for (int x = 0; x < TT; x++) btgt[r * TT + x] = x < sent[j].T ? sent[j].tgt[x] : VOCAB_PAD;
                bsl[r] = sent[j].S;
                btl[r] = sent[j].T;
            }
            if (model_forward(mp, bsrc, bsl, SS, btgt, btl, TT, last - first) != 0) {
                cli_error("model: %s", mp->err);
                goto cleanup_top;
            }
        }
        char dir[4096];
        if (n > 1) {
            snprintf(dir, sizeof dir, "%s/sentence-%d", a.out, i + 1);
            if (cli_prepare_outdir(dir) != 0) goto cleanup_top;
        } else {
            snprintf(dir, sizeof dir, "%s", a.out);
        }
        Trace t;
        trace_init(&t);
        if (model_trace(mp, b, &t, (const char *const *)s->src_tok, (const char *const *)s->tgt_tok, 1) != 0) {
            cli_error("model: %s", mp->err);
            trace_free(&t);
            goto cleanup_top;
        }
        if (!a.quiet) {
            printf("%s\n", a.sentences[i]);
            printf("  → %s: %s%s\n", a.to, s->translation, a.target ? "   (given with --target)" : "");
        }
        int fmap = -1, fhead = 0;
        if (a.focus) {
            if (parse_focus(a.focus, &t, &fmap, &fhead) != 0) { trace_free(&t); goto cleanup_top; }
        } else {
            for (int q = 0; q < s->words.n && fmap < 0; q++)
                if (a.query ? !strcmp(s->words.tok[q], a.query) : is_pronoun(s->words.tok[q])) {
                    Link L = pronoun_link(&t, q, coref_layer, coref_head);
                    fmap = L.map; fhead = L.head;
                }
            if (fmap < 0) fmap = 0, fhead = 0;
        }
        t_model += now_ms() - t0;
        int keep_steps = !strcmp(a.trace_mode, "steps");
        if (!keep_steps) strip_steps(&t, fmap, fhead);   /* only the strip needs them */

        HtmlPage pg;
        char heading[1200];
        snprintf(heading, sizeof heading, "%s → %s", a.sentences[i], s->translation);
        html_page_begin(&pg, heading, NULL);
        html_raw(&pg, "<p>Model: <code>");
        html_text(&pg, model_path);
        html_raw(&pg, "</code> · command: <code>");
        html_text(&pg, cmdline);
        html_raw(&pg, "</code> · numbers: <a href=\"trace.json\">trace.json</a></p>\n");
        PicCtx ctx = {dir, a.sentences[i], model_path, &t, &pg, cmdline, a.quiet, coref_layer, coref_head, coref_acc,
                      coref_supervised};
        t0 = now_ms();
        int r = draw_sentence(&ctx, s, &a, fmap, fhead);
        t_pics += now_ms() - t0;
        n_pictures += t.n_images;
        t0 = now_ms();
        if (!keep_steps) strip_steps(&t, -1, -1);
        if (r == 0) {
            char path[4096];
            snprintf(path, sizeof path, "%s/trace.json", dir);
            if (trace_write_json(&t, path, err, sizeof err) != 0) { cli_error("%s", err); r = -1; }
        }
        t_trace += now_ms() - t0;
        char path[4096];
        snprintf(path, sizeof path, "%s/index.html", dir);
        if (r == 0) r = html_page_write(&pg, path, err, sizeof err) == 0 ? 0 : (cli_error("%s", err), -1);
        else html_page_free(&pg);
        trace_free(&t);
        if (r != 0) goto cleanup_top;
        if (top_open) {
            char href[64], text[1200];
            snprintf(href, sizeof href, "sentence-%d/index.html", i + 1);
            snprintf(text, sizeof text, "%d. %s → %s", i + 1, a.sentences[i], s->translation);
            html_link(&top, href, text);
        }
    }
    if (top_open) {
        char path[4096];
        snprintf(path, sizeof path, "%s/index.html", a.out);
        top_open = 0;
        if (html_page_write(&top, path, err, sizeof err) != 0) { cli_error("%s", err); goto cleanup; }
    }
    if (!a.quiet) printf("pictures, trace.json and index.html in %s/\n", a.out);
    if (a.timing)
        printf("timing: model %.1f ms (load, decode, forward, probe), pictures %.1f ms (%d pictures, %.0f/s), "
               "trace %.1f ms\n", t_model, t_pics, n_pictures, t_pics > 0 ? n_pictures * 1e3 / t_pics : 0.0, t_trace);
    status = 0;
cleanup_top:
    if (top_open) html_page_free(&top);
cleanup:
    for (int i = 0; i < n; i++) sentence_free(&sent[i]);
    free(bsrc); free(btgt); free(bsl); free(btl);
    model_file_free(&mf);
    return status;
}
