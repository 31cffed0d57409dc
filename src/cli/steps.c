/* steps.c — `attnviz steps`: one attention computation, step by step.
 *
 *   scores = Q·Kᵀ → scaled = scores / √d_k → masked = scaled + M → weights =
 *   softmax(masked) → output = weights · V
 *
 * Prints each step as an aligned table under its formula, then writes one
 * picture per step, a strip of all steps, and trace.json into --out.  Every
 * input is checked before anything is written; the files are written into a
 * staging folder and moved into --out only when all are written (fileio.h). */
#include "core/attention.h"
#include "cli/cli.h"
#include "tokenize/tokenizer.h"
#include "core/jsonmat.h"
#include "render/render.h"
#include "render/stepview.h"
#include "trace/trace.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STEPS_MAX_TOKENS 4096
/* The pictures' limit (render's canvas cap is reached between 2048 and 3072
 * tokens), checked before any computation; the help text states it. */
#define STEPS_MAX_SIDE 2048
/* trace.json larger than this is announced before it is written. */
#define STEPS_TRACE_WARN_BYTES (100u << 20)

typedef struct {
    const char *q, *k, *v, *scores, *mask, *mask_fill, *tokens, *query_tokens, *out;
    int no_scale, quiet;
} StepsArgs;

static void steps_usage(FILE *f) {
    fputs(
        "usage: attnviz steps (--q Q --k K | --scores S) [--v V] [options]\n\n"
        "One attention computation, step by step:\n"
        "  softmax(Q·Kᵀ / √d_k + M) · V\n\n"
        "Matrices are inline JSON rows ('[[1,2,3]]') or a path to a JSON file.\n"
        "  --q Q             queries, Tq × d_k\n"
        "  --k K             keys, Tk × d_k\n"
        "  --v V             values, Tk × d_v (optional: without it the last step is skipped)\n"
        "  --scores S        already-scaled scores Tq × Tk (instead of --q/--k)\n"
        "  --mask M          none (default) | causal | a 0/1 JSON matrix Tq × Tk (1 = may attend)\n"
        "  --mask-fill F     value of masked scores: -inf (default) or a number, e.g. -10000 or -1e9\n"
        "  --no-scale        skip ÷√d_k (to see why we scale)\n"
        "  --tokens a,b,c    key labels (also query labels when Tq = Tk)\n"
        "  --query-tokens .. query labels when Tq ≠ Tk\n"
        "  --out DIR         where pictures and trace.json go (default output/steps/)\n"
        "  --force           write into a folder that holds other files (kept, never\n"
        "                    removed), or into your home folder\n"
        "  --quiet           do not print the tables (warnings and errors are still printed)\n\n"
        "Limits: at most 2048 queries, keys and value columns (the pictures' size), checked\n"
        "before computing; a trace.json over 100 MB (from about 1400 × 1400) is announced first.\n\n"
        "A row whose keys are all masked with -inf has no softmax (0/0): attnviz\n"
        "defines its weights and output as zeros and warns.\n\n"
        "Example (the lesson's causal 3×3):\n"
        "  attnviz steps --scores '[[0.1,0.2,0.3],[0.4,0.5,0.6],[0.7,0.8,0.9]]' --mask causal --tokens I,am,happy\n",
        f);
}

/* Number of code points in a UTF-8 string (display width for our tables). */
static int utf8_width(const char *s) {
    int n = 0;
    for (; *s; s++) if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

/* Splits "a,b,c" into n labels (malloc'd array of malloc'd strings). */
static char **split_tokens(const char *arg, int *n, const char *flag) {
    *n = 0;
    if (tokenizer_check_utf8(arg, strlen(arg), NULL, 0) != 0) {
        cli_error("%s is not valid UTF-8 text (check the terminal's encoding)", flag);
        return NULL;
    }
    int cap = 1;
    for (const char *p = arg; *p; p++) cap += *p == ',';
    if (cap > STEPS_MAX_TOKENS) { cli_error("%s has more than %d labels", flag, STEPS_MAX_TOKENS); return NULL; }
    char **out = calloc((size_t)cap, sizeof *out);
    if (!out) { cli_error("out of memory"); return NULL; }
    const char *start = arg;
    for (int i = 0; i < cap; i++) {
        const char *end = strchr(start, ',');
        size_t len = end ? (size_t)(end - start) : strlen(start);
        out[i] = strndup(start, len);
        if (!out[i]) { cli_error("out of memory"); *n = i; return out; }
        start = end ? end + 1 : start + len;
    }
    *n = cap;
    return out;
}

static void free_tokens(char **t, int n) {
    if (!t) return;
    for (int i = 0; i < n; i++) free(t[i]);
    free(t);
}

static char **default_labels(const char *prefix, int n) {
    char **out = calloc((size_t)(n > 0 ? n : 1), sizeof *out);
    if (!out) return NULL;
    for (int i = 0; i < n; i++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%s%d", prefix, i);
        out[i] = strdup(buf);
        if (!out[i]) { free_tokens(out, i); return NULL; }
    }
    return out;
}

static void format_value(char *buf, size_t n, float x) {
    if (isinf(x)) snprintf(buf, n, "%s", x < 0 ? "-inf" : "inf");
    else if (isnan(x)) snprintf(buf, n, "nan");
    else {
        snprintf(buf, n, "%.6g", (double)x);
        if (strcmp(buf, "-0") == 0) snprintf(buf, n, "0");
    }
}

/* Prints one step: its heading, formula and the matrix as an aligned table. */
static void print_table(const char *heading, const char *formula, const float *x, int rows,
                        int cols, char *const *row_labels, char *const *col_labels) {
    char buf[48];
    int lw = 0, cw = 0;
    for (int i = 0; i < rows; i++) if (utf8_width(row_labels[i]) > lw) lw = utf8_width(row_labels[i]);
    for (int j = 0; j < cols; j++) if (utf8_width(col_labels[j]) > cw) cw = utf8_width(col_labels[j]);
    for (size_t i = 0; i < (size_t)rows * cols; i++) {
        format_value(buf, sizeof buf, x[i]);
        if ((int)strlen(buf) > cw) cw = (int)strlen(buf);
    }
    printf("%s   %s   (%d×%d)\n", heading, formula, rows, cols);
    printf("%*s", lw, "");
    for (int j = 0; j < cols; j++)
        printf("  %*s%s", cw - utf8_width(col_labels[j]), "", col_labels[j]);
    putchar('\n');
    for (int i = 0; i < rows; i++) {
        printf("%s%*s", row_labels[i], lw - utf8_width(row_labels[i]), "");
        for (int j = 0; j < cols; j++) {
            format_value(buf, sizeof buf, x[(size_t)i * cols + j]);
            printf("  %*s", cw, buf);
        }
        putchar('\n');
    }
    putchar('\n');
}

static int parse_fill(const char *s, float *fill) {
    if (!strcmp(s, "-inf") || !strcmp(s, "-infinity") || !strcmp(s, "-Inf") || !strcmp(s, "-INF")) {
        *fill = -INFINITY;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(d) || !isfinite((float)d)) {
        cli_error("--mask-fill '%s' is not -inf or a finite number (e.g. --mask-fill -10000)", s);
        return -1;
    }
    *fill = (float)d;
    if (d > 0)
        cli_warn("--mask-fill %s is positive: masked cells get more weight than the others, not less (the lesson "
                 "uses -10000 or -1e9)", s);
    return 0;
}

static int parse_args(StepsArgs *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->out = "output/steps";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const CliOption opts[] = {
            {"--q", &a->q}, {"--k", &a->k}, {"--v", &a->v}, {"--scores", &a->scores},
            {"--mask", &a->mask}, {"--mask-fill", &a->mask_fill}, {"--tokens", &a->tokens},
            {"--query-tokens", &a->query_tokens}, {"--out", &a->out}};
        int taken = cli_take_option(argc, argv, &i, opts, (int)(sizeof opts / sizeof opts[0]), "steps");
        if (taken < 0) return -1;
        if (taken) continue;
        if (!strcmp(arg, "--no-scale")) a->no_scale = 1;
        else if (!strcmp(arg, "--quiet")) a->quiet = 1;
        else if (!strcmp(arg, "--force")) cli_set_force(1);
        else if (cli_is_help(arg)) { steps_usage(stdout); return 1; }
        else {
            cli_error("unknown option '%s' for steps (see attnviz steps --help)", arg);
            return -1;
        }
    }
    if (a->scores && (a->q || a->k)) {
        cli_error("--scores replaces --q and --k; give either --scores or --q with --k");
        return -1;
    }
    if (!a->scores && (!a->q || !a->k)) {
        cli_error("steps needs --q and --k (or --scores); see attnviz steps --help");
        return -1;
    }
    if (a->scores && a->no_scale) {
        cli_error("--no-scale has no effect with --scores (the scores are already scaled); drop one of them");
        return -1;
    }
    return 0;
}

/* The checked inputs of one computation. */
typedef struct {
    JsonMat Q, K, V, S, M;
    int Tq, Tk, D, Dv;
    unsigned char *mask;     /* (Tq, Tk), all ones when there is none */
    int has_mask;
    float fill;
    char **qlab, **klab, **vlab;
    int nq, nk;
    char fill_text[32];      /* "−∞" or the number                     */
} StepsInput;

/* Q, K (or the scores) and V, with their shapes checked.  0, or -1 (printed). */
static int read_matrices(const StepsArgs *a, StepsInput *in) {
    char err[512];
    if (a->scores) {
        if (jsonmat_parse_arg(&in->S, a->scores, "--scores", err, sizeof err)) { cli_error("%s", err); return -1; }
    } else {
        if (jsonmat_parse_arg(&in->Q, a->q, "--q", err, sizeof err)) { cli_error("%s", err); return -1; }
        if (jsonmat_parse_arg(&in->K, a->k, "--k", err, sizeof err)) { cli_error("%s", err); return -1; }
        if (in->Q.cols != in->K.cols) {
            cli_error("--q rows have %d values but --k rows have %d; queries and keys need the same width d_k",
                      in->Q.cols, in->K.cols);
            return -1;
        }
    }
    in->Tq = a->scores ? in->S.rows : in->Q.rows;
    in->Tk = a->scores ? in->S.cols : in->K.rows;
    in->D = a->scores ? 0 : in->Q.cols;
    if (a->v) {
        if (jsonmat_parse_arg(&in->V, a->v, "--v", err, sizeof err)) { cli_error("%s", err); return -1; }
        if (in->V.rows != in->Tk) {
            cli_error("--v has %d rows but there are %d keys; V needs one row per key", in->V.rows, in->Tk);
            return -1;
        }
    }
    in->Dv = a->v ? in->V.cols : 0;
    if (in->Tq > STEPS_MAX_SIDE || in->Tk > STEPS_MAX_SIDE || in->Dv > STEPS_MAX_SIDE) {
        cli_error("%d queries × %d keys%s is too large to draw: steps takes at most %d of each", in->Tq, in->Tk,
                  a->v ? " (and V's columns)" : "", STEPS_MAX_SIDE);
        return -1;
    }
    /* weights, scores, scaled, masked (Tq × Tk) and output (Tq × Dv), ~12 bytes a number */
    double trace_bytes = 12.0 * in->Tq * (4.0 * in->Tk + in->Dv);
    if (trace_bytes > STEPS_TRACE_WARN_BYTES)
        cli_warn("trace.json will be about %.0f MB (%d × %d)", trace_bytes / (1 << 20), in->Tq, in->Tk);
    return 0;
}

/* --mask none | causal | a 0/1 matrix (inline or a file).  0, or -1 (printed). */
static int build_mask(const StepsArgs *a, StepsInput *in) {
    int Tq = in->Tq, Tk = in->Tk;
    char err[512];
    if (!(in->mask = malloc((size_t)Tq * Tk))) { cli_error("out of memory"); return -1; }
    in->has_mask = 1;
    if (!a->mask || !strcmp(a->mask, "none")) {
        in->has_mask = 0;
        memset(in->mask, 1, (size_t)Tq * Tk);
        if (a->mask_fill) cli_warn("--mask-fill has no effect without --mask");
        return 0;
    }
    if (!strcmp(a->mask, "causal")) {
        if (Tq > Tk) {
            cli_error("--mask causal needs at least as many keys as queries (%d queries, %d keys)", Tq, Tk);
            return -1;
        }
        attn_causal_mask(in->mask, Tq, Tk);
        return 0;
    }
    const char *p = a->mask;
    while (*p == ' ') p++;
    if (*p != '[' && access(a->mask, F_OK) != 0) {
        cli_error("--mask '%s' is not none, causal, a JSON 0/1 matrix or an existing file", a->mask);
        return -1;
    }
    if (jsonmat_parse_mask(&in->M, a->mask, "--mask", err, sizeof err)) { cli_error("%s", err); return -1; }
    if (in->M.rows != Tq || in->M.cols != Tk) {
        cli_error("--mask is %d×%d but the scores are %d×%d (queries × keys)", in->M.rows, in->M.cols, Tq, Tk);
        return -1;
    }
    for (size_t i = 0; i < (size_t)Tq * Tk; i++) in->mask[i] = in->M.data[i] != 0.0f;
    return 0;
}

/* Key, query and value-dimension labels: given, or k0…, q0…, d0….  0, or -1 (printed). */
static int build_labels(const StepsArgs *a, StepsInput *in) {
    if (a->tokens) {
        if (!(in->klab = split_tokens(a->tokens, &in->nk, "--tokens"))) return -1;
        if (in->nk != in->Tk) {
            cli_error("--tokens has %d labels but there are %d keys (one label per key, comma-separated)", in->nk,
                      in->Tk);
            return -1;
        }
    } else if (!(in->klab = default_labels("k", in->nk = in->Tk))) { cli_error("out of memory"); return -1; }
    if (a->query_tokens) {
        if (!(in->qlab = split_tokens(a->query_tokens, &in->nq, "--query-tokens"))) return -1;
        if (in->nq != in->Tq) {
            cli_error("--query-tokens has %d labels but there are %d queries", in->nq, in->Tq);
            return -1;
        }
    } else if (a->tokens && in->Tq == in->Tk) {
        if (!(in->qlab = split_tokens(a->tokens, &in->nq, "--tokens"))) return -1;
    } else if (!(in->qlab = default_labels("q", in->nq = in->Tq))) { cli_error("out of memory"); return -1; }
    if (!(in->vlab = default_labels("d", in->Dv > 0 ? in->Dv : 1))) { cli_error("out of memory"); return -1; }
    return 0;
}

/* Every step into st, with a warning for rows that see no key.  0, or -1 (printed). */
static int compute(const StepsArgs *a, const StepsInput *in, AttnSteps *st) {
    int Tq = in->Tq, Tk = in->Tk, Dv = in->Dv;
    if (attn_steps_alloc(st, Tq, Tk, Dv)) { cli_error("out of memory"); return -1; }
    float scale = a->no_scale || a->scores ? 1.0f : 1.0f / sqrtf((float)in->D);
    const unsigned char *mask = in->has_mask ? in->mask : NULL;
    AttnHead head = {.q = in->Q.data, .ldq = in->D, .k = in->K.data, .ldk = in->D, .v = a->v ? in->V.data : NULL,
                     .ldv = Dv, .mask = mask, .mask_fill = in->fill, .scale = scale, .Tq = Tq, .Tk = Tk, .D = in->D,
                     .Dv = Dv, .steps = st};
    int empty = a->scores ? attention_from_scores(&head, in->S.data) : attention_forward(&head);
    if (empty < 0) { cli_error("out of memory"); return -1; }
    if (empty > 0 && isinf(in->fill))
        cli_warn("%d query row(s) have every key masked; softmax is undefined there (0/0), so attnviz sets their "
                 "weights and output to 0", empty);
    for (int i = 0; i < Tq && in->has_mask && !isinf(in->fill); i++) {
        int any = 0;
        for (int j = 0; j < Tk; j++) any |= in->mask[(size_t)i * Tk + j];
        if (!any) {
            cli_warn("query row %d has every key masked; with a finite --mask-fill its weights are uniform", i);
            break;
        }
    }
    return 0;
}

/* The first step holding NaN or ±∞ (a masked cell's −∞ excepted), named with
 * its cell: inputs near float32's limit (3.4e38) overflow.  0, or -1 (printed). */
static int check_finite(const StepsArgs *a, const StepsInput *in, const AttnSteps *st) {
    struct { const char *name; const float *x; int cols; } steps[] = {
        {a->scores ? "the given scores" : "step 1 (scores = Q·Kᵀ)", st->scores, in->Tk},
        {"step 2 (scaled = scores / √d_k)", a->scores ? NULL : st->scaled, in->Tk},
        {"step 3 (masked = scaled + M)", in->has_mask ? st->masked : NULL, in->Tk},
        {"step 4 (weights = softmax)", st->weights, in->Tk},
        {"step 5 (output = weights · V)", a->v ? st->output : NULL, in->Dv}};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        const float *x = steps[s].x;
        for (size_t i = 0; x && i < (size_t)in->Tq * steps[s].cols; i++) {
            if (isfinite(x[i]) || (x == st->masked && !in->mask[i] && x[i] == in->fill)) continue;
            cli_error("%s gives %s at row %zu, column %zu: the inputs are too large for float32 (|x| < 3.4e38, "
                      "products too); scale them down", steps[s].name, isnan(x[i]) ? "NaN" : "infinity",
                      i / steps[s].cols, i % steps[s].cols);
            return -1;
        }
    }
    return 0;
}

/* Every step as an aligned table under its formula. */
static void print_steps(const StepsArgs *a, const StepsInput *in, const AttnSteps *st) {
    int Tq = in->Tq, Tk = in->Tk, D = in->D;
    char scale_formula[128], mask_formula[96];
    if (a->no_scale) snprintf(scale_formula, sizeof scale_formula, "scaled = scores (--no-scale: not divided)");
    else snprintf(scale_formula, sizeof scale_formula, "scaled = scores / √d_k = scores / √%d = scores × %.6g", D,
                  (double)(1.0f / sqrtf((float)D)));
    snprintf(mask_formula, sizeof mask_formula, "masked = scaled + M   (masked cells = %s)", in->fill_text);
    printf("Attention(Q, K, V) = softmax(Q·Kᵀ / √d_k + M) · V      Tq=%d Tk=%d d_k=%d%s\n\n", Tq, Tk, D,
           a->v ? "" : "  (no V given: the last step is skipped)");
    if (a->scores) {
        print_table("given", "scores (already scaled)", st->scores, Tq, Tk, in->qlab, in->klab);
    } else {
        print_table("Step 1", "scores = Q·Kᵀ", st->scores, Tq, Tk, in->qlab, in->klab);
        print_table("Step 2", scale_formula, st->scaled, Tq, Tk, in->qlab, in->klab);
    }
    if (in->has_mask) print_table("Step 3", mask_formula, st->masked, Tq, Tk, in->qlab, in->klab);
    else printf("Step 3   no mask (--mask none): masked = scaled\n\n");
    print_table("Step 4", in->has_mask ? "weights = softmax(masked), row by row" : "weights = softmax(scaled), row by row",
                st->weights, Tq, Tk, in->qlab, in->klab);
    if (a->v) print_table("Step 5", "output = weights · V", st->output, Tq, in->Dv, in->qlab, in->vlab);
}

/* The panels of the pictures: one per step present (stepview.h). */
static int step_panels(const StepsArgs *a, const StepsInput *in, const AttnSteps *st, char *scale_caption,
                       size_t scale_len, char *mask_caption, size_t mask_len, RenderHeatmap *p, StepKind *kinds) {
    if (a->no_scale) snprintf(scale_caption, scale_len, "scores used as they are");
    else snprintf(scale_caption, scale_len, "÷ √%d = × %.4g", in->D, (double)(1.0f / sqrtf((float)in->D)));
    snprintf(mask_caption, mask_len, "masked cells get %s", in->fill_text);
    StepView sv = {0};
    sv.x[STEP_SCORES] = st->scores;
    sv.x[STEP_SCALED] = a->scores ? NULL : st->scaled;
    sv.x[STEP_MASKED] = in->has_mask ? st->masked : NULL;
    sv.x[STEP_WEIGHTS] = st->weights;
    sv.x[STEP_OUTPUT] = a->v ? st->output : NULL;
    sv.title[STEP_SCORES] = a->scores ? "scores (given, already scaled)" : NULL;
    sv.subtitle[STEP_SCORES] = a->scores ? "from --scores" : "dot product of each query with each key";
    sv.title[STEP_SCALED] = a->no_scale ? "2. not scaled (--no-scale)" : NULL;
    sv.subtitle[STEP_SCALED] = scale_caption;
    sv.subtitle[STEP_MASKED] = mask_caption;
    /* the formula's step numbers everywhere (tables, panels, files): without a
       mask step 3 is skipped, and the weights panel says why 3 is missing */
    sv.title[STEP_WEIGHTS] = in->has_mask ? "4. weights = softmax(masked)" : "4. weights = softmax(scaled)";
    sv.subtitle[STEP_WEIGHTS] = in->has_mask ? "each row sums to 1" : "no mask: step 3 (+ M) skipped; rows sum to 1";
    sv.subtitle[STEP_OUTPUT] = "weighted sum of V rows";
    sv.Tq = in->Tq; sv.Tk = in->Tk; sv.Dv = in->Dv;
    sv.queries = (const char *const *)in->qlab;
    sv.keys = (const char *const *)in->klab;
    sv.dims = (const char *const *)in->vlab;
    sv.mask = in->has_mask ? in->mask : NULL;
    sv.mask_label = in->fill_text;
    sv.axes = 1;
    sv.show_values = -1;
    return stepview_panels(&sv, p, kinds);
}

/* One picture per step, the strip of all, then trace.json, into dir (the staging folder). */
static int write_outputs(const StepsArgs *a, const char *dir, const StepsInput *in, const AttnSteps *st, Trace *trace) {
    static const char *const files[STEP_COUNT] = {"steps-1-scores.png", "steps-2-scaled.png", "steps-3-masked.png",
                                                  "steps-4-weights.png", "steps-5-output.png"};
    char scale_caption[64], mask_caption[64], err[512], tokens_text[1024] = "";
    RenderHeatmap hms[STEP_COUNT];
    StepKind kinds[STEP_COUNT];
    int np = step_panels(a, in, st, scale_caption, sizeof scale_caption, mask_caption, sizeof mask_caption, hms, kinds);
    for (int j = 0; j < in->Tk; j++) {
        size_t len = strlen(tokens_text);
        snprintf(tokens_text + len, sizeof tokens_text - len, "%s%s", j ? " " : "", in->klab[j]);
    }
    for (int p = 0; p <= np; p++) {
        const char *file = p < np ? files[kinds[p]] : "steps-strip.png";
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) {
            cli_error("--out path is too long");
            return -1;
        }
        RenderMetaItem items[] = {
            {"Title", p < np ? hms[p].title : "attention step by step"},
            {"Formula", "softmax(Q·Kᵀ / √d_k + M) · V"},
            {"Tokens", tokens_text},
            {"Mask", in->has_mask ? (a->mask && !strcmp(a->mask, "causal") ? "causal" : "matrix") : "none"},
            {"MaskFill", in->fill_text},
        };
        RenderMeta meta = {items, (int)(sizeof items / sizeof items[0])};
        int r = p < np ? render_heatmap(path, &hms[p], &meta, err, sizeof err)
                       : render_strip(path, "Attention step by step: softmax(Q·Kᵀ / √d_k + M) · V", hms, np, &meta,
                                      err, sizeof err);
        if (r != 0) { cli_error("%s", err); return -1; }
        trace_add_image(trace, file);
    }
    TraceMap *m = trace_add_map(trace, &(TraceMapSpec){.id = "custom", .stack = "custom", .layer = 0, .kind = "custom",
                                                       .queries = (const char *const *)in->qlab, .Tq = in->Tq,
                                                       .keys = (const char *const *)in->klab, .Tk = in->Tk,
                                                       .d_k = in->D, .Dv = in->Dv, .mask = in->has_mask ? in->mask : NULL,
                                                       .mask_fill = in->fill, .n_heads = 1});
    if (!m || trace_set_head(m, 0, st->weights, st->scores, st->scaled, st->masked, a->v ? st->output : NULL)) {
        cli_error("out of memory");
        return -1;
    }
    m->scaled_by_sqrt_dk = !(a->no_scale || a->scores);
    trace_set_source(trace, (const char *const *)in->klab, in->Tk);
    trace_set_target(trace, (const char *const *)in->qlab, in->Tq);
    char path[4096];
    if (path_join(path, sizeof path, dir, "trace.json", err, sizeof err) ||
        trace_write_json(trace, path, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    return np + 1;
}

static void input_free(StepsInput *in) {
    jsonmat_free(&in->Q); jsonmat_free(&in->K); jsonmat_free(&in->V); jsonmat_free(&in->S); jsonmat_free(&in->M);
    free_tokens(in->qlab, in->nq); free_tokens(in->klab, in->nk); free_tokens(in->vlab, in->Dv > 0 ? in->Dv : 1);
    free(in->mask);
}

int cli_steps(int argc, char **argv) {
    StepsArgs a;
    int rc = parse_args(&a, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    StepsInput in;
    memset(&in, 0, sizeof in);
    in.fill = -INFINITY;
    AttnSteps st = {0};
    Trace trace;
    trace_init(&trace);
    int status = 1;
    if (cli_check_out(a.out) != 0) goto cleanup;   /* before the work, not after it */
    if (a.mask_fill && parse_fill(a.mask_fill, &in.fill) != 0) goto cleanup;
    if (isinf(in.fill)) snprintf(in.fill_text, sizeof in.fill_text, "−∞");
    else format_value(in.fill_text, sizeof in.fill_text, in.fill);
    if (read_matrices(&a, &in) || build_mask(&a, &in) || build_labels(&a, &in)) goto cleanup;
    if (compute(&a, &in, &st) || check_finite(&a, &in, &st)) goto cleanup;
    if (!a.quiet) print_steps(&a, &in, &st);
    OutStage stage;
    if (cli_stage_open(&stage, a.out) != 0) goto cleanup;
    int n_pictures = write_outputs(&a, stage.dir, &in, &st, &trace);
    if (cli_stage_close(&stage, n_pictures > 0) != 0) goto cleanup;
    if (!a.quiet) printf("wrote %d pictures and trace.json to %s/\n", n_pictures, a.out);
    status = 0;
cleanup:
    input_free(&in);
    attn_steps_free(&st);
    trace_free(&trace);
    return status;
}
