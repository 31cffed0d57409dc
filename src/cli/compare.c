/* compare.c — `attnviz compare`: two sentences through one model, one
 * sentence through two models (--model2), or one model with and without
 * knocked-out heads (--ablate).  Each side is a model opened by net/net.h and
 * a sentence through it (pipeline/compare.h's compare_side), whatever the
 * model; pipeline/compare.h differences the traces and draws them.
 * Everything is written through a staging folder. */
#include "cli/cli.h"
#include "render/render.h"
#include "net/net.h"
#include "pipeline/compare.h"
#include "trace/trace.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *model, *model2, *ablate, *to, *query, *out;
    const char *sentences[2];
    int n_sentences, quiet;
} CompareArgs;

/* One side: its model, the sentence through it, its label. */
typedef struct {
    Net net;
    Net *n;               /* &net, or the other side's when both read one model */
    CompareSide side;
    const Trace *t;
    char label[1400];
} Side;

static void compare_usage(FILE *f) {
    fputs(
        "usage: attnviz compare [options] \"SENTENCE A\" \"SENTENCE B\"\n"
        "       attnviz compare --model2 MODEL [options] \"SENTENCE\"\n"
        "       attnviz compare --ablate MAP.H[,MAP.H…] [options] \"SENTENCE\"\n\n"
        "Two attention pictures of the same kind side by side and their difference: two\n"
        "sentences through one model, one sentence through two models (taught and untaught,\n"
        "or two folders of one family), or one model with and without knocked-out heads.\n"
        "Writes for every head A beside B ({map}.h{H}.png, one 0–1 scale) and B − A\n"
        "({map}.h{H}.diff.png, a diverging colour-blind-safe map, one symmetric scale for all\n"
        "heads); lines views of the pronouns (or --query) A beside B; trace-a.json,\n"
        "trace-b.json, compare.json and index.html; and prints where the maps differ most.\n"
        "Maps are differenced cell by cell at the same positions, and only when their shapes\n"
        "agree (sentences of different lengths: those maps are shown side by side only).\n\n"
        "  --model PATH      model A (default: the shipped taught model; a checkpoint, a shipped\n"
        "                    name such as untaught, or a GPT-2 / BERT / Llama-family folder)\n"
        "  --model2 PATH     model B (the same kind as A: both attnviz models or both folders)\n"
        "  --ablate LIST     B is model A with these heads knocked out (MAP.H: encoder.2.self.0,\n"
        "                    decoder.3.masked_self.5 on a GPT-2 or Llama-family model)\n"
        "  --to fr|vi        target language of attnviz's models (default fr)\n"
        "  --query TOKEN     draw the lines views for this token (default: the pronouns)\n"
        "  --out DIR         output folder (default output/compare/)\n"
        "  --force           write into a folder that holds other files (kept, never\n"
        "                    removed), or into your home folder\n"
        "  --slide           every picture exactly 1920 x 1080 (a 16:9 slide)\n"
        "  --quiet           print only errors\n\n"
        "Examples:\n"
        "  attnviz compare \"the animal didn't cross the street because it was too tired .\" \\\n"
        "                  \"the animal didn't cross the street because it was too wide .\"\n"
        "  attnviz compare --model taught --model2 untaught \"the cat sat on the mat because it was tired .\"\n"
        "  attnviz compare --ablate encoder.2.self.0 \"the animal didn't cross the street because it was too tired .\"\n",
        f);
}

/* 0 to go on, 1 after --help, -1 after an error (printed). */
static int parse_args(CompareArgs *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->to = "fr";
    a->out = "output/compare";
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--model", &a->model}, {"--model2", &a->model2}, {"--ablate", &a->ablate},
                                  {"--to", &a->to}, {"--query", &a->query}, {"--out", &a->out}};
        int taken = cli_take_option(argc, argv, &i, opts, 6, "compare");
        if (taken < 0) return -1;
        if (taken) continue;
        if (cli_is_help(argv[i])) { compare_usage(stdout); return 1; }
        if (!strcmp(argv[i], "--slide")) { render_set_slide(1); continue; }
        if (!strcmp(argv[i], "--quiet")) { a->quiet = 1; cli_set_quiet(1); continue; }
        if (!strcmp(argv[i], "--force")) { cli_set_force(1); continue; }
        if (argv[i][0] == '-' && argv[i][1] == '-') { cli_unknown_option("compare", argv[i]); return -1; }
        if (a->n_sentences == 2) {
            cli_error("compare takes at most two sentences (A and B)");
            return -1;
        }
        a->sentences[a->n_sentences++] = argv[i];
    }
    int other = (a->model2 != NULL) + (a->ablate != NULL);
    if (other > 1) {
        cli_error("choose one comparison: --model2 or --ablate, not both");
        return -1;
    }
    if (a->n_sentences + other != 2) {
        cli_error("compare needs two sentences, or one sentence with --model2 MODEL or --ablate MAP.H (see attnviz "
                  "compare --help)");
        return -1;
    }
    if (cli_target_language(&a->to)) return -1;
    return 0;
}

static void side_free(Side *sd) {
    compare_side_free(&sd->side);
    net_free(&sd->net);
}

/* What is compared, and each side's label. */
static void describe(const CompareArgs *a, Side *A, Side *B, char *what, size_t n) {
    const char *ma = a->model ? a->model : "taught";
    if (a->n_sentences == 2) {
        snprintf(what, n, "two sentences through one model (%s)", ma);
        snprintf(A->label, sizeof A->label, "A: “%s”", a->sentences[0]);
        snprintf(B->label, sizeof B->label, "B: “%s”", a->sentences[1]);
    } else if (a->model2) {
        snprintf(what, n, "“%s” through two models", a->sentences[0]);
        snprintf(A->label, sizeof A->label, "A: model %s", ma);
        snprintf(B->label, sizeof B->label, "B: model %s", a->model2);
    } else {
        snprintf(what, n, "“%s” through %s, with and without knocked-out heads (a knocked-out head still computes "
                 "its weights, so its own map stays the same; its output is replaced by zeros, and what comes after "
                 "it changes)", a->sentences[0], ma);
        snprintf(A->label, sizeof A->label, "A: model %s", ma);
        snprintf(B->label, sizeof B->label, "B: model %s with %s knocked out", ma, a->ablate);
    }
}

/* A side's model: its own, or (B with no --model2 and no --ablate) A's.  0, or -1 (printed). */
static int side_open(Side *sd, const char *model, Side *from) {
    char err[1024];
    if (from) { sd->n = from->n; return 0; }
    if (net_open(&sd->net, model, NULL, NET_OPEN_MODEL, err, sizeof err)) { cli_error("%s", err); return -1; }
    sd->n = &sd->net;
    return 0;
}

/* Both sides through their models.  0, or -1 (printed). */
static int run_sides(const CompareArgs *a, Side *A, Side *B, CorefHead *coref) {
    char err[1024];
    const char *sb = a->sentences[a->n_sentences - 1];
    if (side_open(A, a->model, NULL) || side_open(B, a->model2 ? a->model2 : a->model, a->model2 || a->ablate ? NULL : A))
        return -1;
    if ((A->n->caps & NET_TRANSLATES) != (B->n->caps & NET_TRANSLATES)) {
        cli_error("--model and --model2 must both be attnviz models or both folders of one family");
        return -1;
    }
    if (a->ablate && net_ablate(B->n, a->ablate, err, sizeof err)) { cli_error("--ablate %s", err); return -1; }
    if (compare_side(&A->side, A->n, a->sentences[0], a->to, cli_warn, err, sizeof err) ||
        compare_side(&B->side, B->n, sb, a->to, cli_warn, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    A->t = A->side.t;
    B->t = B->side.t;
    *coref = A->side.coref;
    return 0;
}

static void print_sides(const CompareArgs *a, const Side *A, const Side *B) {
    const Side *s[2] = {A, B};
    for (int i = 0; i < 2; i++) {
        printf("%s\n", s[i]->label);
        if (s[i]->side.translation && a->n_sentences == 2) printf("   → %s: %s\n", a->to, s[i]->side.translation);
        else if (s[i]->side.translation)
            printf("   “%s” → %s: %s\n", a->sentences[0], a->to, s[i]->side.translation);
    }
}

int cli_compare(int argc, char **argv) {
    CompareArgs a;
    int rc = parse_args(&a, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
#ifdef _OPENMP
    omp_set_num_threads(1);   /* one sentence's matrices are tiny (as run) */
#endif
    static Side A, B;
    static char summary[8192], what[1400], command[4096], err[1024];
    memset(&A, 0, sizeof A);
    memset(&B, 0, sizeof B);
    Comparison c = {0};
    CorefHead coref;
    int status = 1;
    if (run_sides(&a, &A, &B, &coref) != 0) goto cleanup;
    if (compare_traces(&c, A.t, B.t, err, sizeof err)) { cli_error("%s", err); goto cleanup; }
    describe(&a, &A, &B, what, sizeof what);
    compare_summary(&c, A.t, B.t, 8, summary, sizeof summary);
    CompareLine lines[COMPARE_MAX_LINES];
    int n_lines = compare_pick_lines(A.t, B.t, a.query, &coref, lines, COMPARE_MAX_LINES);
    if (a.query && n_lines == 0) cli_warn("--query '%s' is not a token of both A and B: no lines view drawn", a.query);
    size_t len = (size_t)snprintf(command, sizeof command, "attnviz");
    for (int i = 0; i < argc && len < sizeof command; i++)
        len += (size_t)snprintf(command + len, sizeof command - len, strchr(argv[i], ' ') ? " \"%s\"" : " %s", argv[i]);
    CompareSpec spec = {.command = command, .what = what, .label_a = A.label, .label_b = B.label,
                        .summary = summary, .lines = lines, .n_lines = n_lines};
    OutStage stage;
    if (cli_stage_open(&stage, a.out) != 0) goto cleanup;
    spec.dir = stage.dir;
    int n_pictures = 0, ok = compare_write(&spec, &c, A.t, B.t, &n_pictures, err, sizeof err) == 0;
    if (!ok) cli_error("%s", err);
    if (cli_stage_close(&stage, ok) != 0 || !ok) goto cleanup;
    if (!a.quiet) {
        printf("compare: %s\n", what);
        print_sides(&a, &A, &B);
        fputs(summary, stdout);
        printf("compare: %d pictures, trace-a.json, trace-b.json, compare.json and index.html in %s/\n", n_pictures,
               a.out);
    }
    status = 0;
cleanup:
    compare_free(&c);
    side_free(&A);
    side_free(&B);
    return status;
}
