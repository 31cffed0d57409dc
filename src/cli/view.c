/* view.c — `attnviz view FILE --tokens TOKENS`: attention weights computed
 * anywhere (PyTorch, JAX, a notebook) drawn as `run` draws its own: per-head
 * heatmaps, the grids, trace.json and the interactive page
 * (pipeline/view.h).  Everything is read and checked before --out is
 * touched; the files go through a staging folder (core/outdir.h). */
#include "cli/cli.h"
#include "pipeline/view.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *file, *tokens, *keys, *out;
    const char *queries_of[VIEW_MAX_QUERIES_OF];
    int n_queries_of, causal, scores, quiet;
} ViewArgs;

static void view_usage(FILE *f) {
    fputs(
        "usage: attnviz view FILE --tokens TOKENS [options]\n\n"
        "Attention weights computed anywhere (PyTorch, JAX, TensorFlow, a notebook) drawn as\n"
        "`attnviz run` draws its own: a heatmap per head, the grid of every layer × head,\n"
        "trace.json and the interactive index.html.  attnviz runs no model: every picture\n"
        "says the weights came from outside.\n\n"
        "FILE\n"
        "  .npy          float32/float64, shape (layers, heads, queries, keys) → maps layer.0 …,\n"
        "                (heads, queries, keys) or (queries, keys) → map layer.0\n"
        "  .npz          numpy.savez: one array per map, the array's name is the map's id\n"
        "  .safetensors  the same (F32, F16, BF16, F64)\n"
        "  .json         nested lists, or an object {\"MAP\": nested lists, …}\n"
        "  A map id STACK.L.KIND (encoder.0.self, decoder.1.masked_self, decoder.1.cross)\n"
        "  is drawn as that kind of attention; any other id as plain attention.\n\n"
        "  --tokens T          the tokens: one space-separated string, or a .json list of\n"
        "                      strings, or a .txt file of one token per line\n"
        "  --keys T            the keys' tokens when they differ from the queries'\n"
        "  --queries-of MAP=T  one map's own query tokens (a decoder's maps); repeatable.\n"
        "                      A self-attention map's keys are then its queries; a\n"
        "                      cross-attention map's keys stay --tokens\n"
        "  --causal            the maps are causal: nothing above the diagonal (checked);\n"
        "                      without it a square map with nothing there is found causal\n"
        "  --scores            FILE holds scores before softmax (−∞ = masked): attnviz takes\n"
        "                      the softmax and keeps the scores as the `masked` step\n"
        "  --out DIR           where pictures and trace.json go (default output/view/)\n"
        "  --force             write into a folder that holds other files (kept, never\n"
        "                      removed), or into your home folder\n"
        "  --quiet             print nothing but errors\n\n"
        "Checked before anything is written (one line names map, head and row): the shape\n"
        "against the tokens, NaN and infinities, negative weights, rows that do not sum to 1\n"
        "within 0.001.  A row of zeros in every head (padding) is drawn as masked.\n\n"
        "Example (PyTorch):\n"
        "  _, w = mha(x, x, x, need_weights=True, average_attn_weights=False)   # (1, H, T, T)\n"
        "  numpy.save('attn.npy', w[0].detach().numpy())\n"
        "  attnviz view attn.npy --tokens 'the cat sat on the mat'\n",
        f);
}

/* 1: --help printed; 0: parsed; -1: usage error printed. */
static int parse_args(ViewArgs *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->out = "output/view";
    const char *q = NULL;
    CliOption opts[] = {{"--tokens", &a->tokens}, {"--keys", &a->keys}, {"--out", &a->out}, {"--queries-of", &q}};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) { view_usage(stdout); return 1; }
        int r = cli_take_option(argc, argv, &i, opts, 4, "view");
        if (r < 0) return -1;
        if (r > 0 && q) {
            if (a->n_queries_of == VIEW_MAX_QUERIES_OF) { cli_error("more than %d --queries-of", VIEW_MAX_QUERIES_OF); return -1; }
            a->queries_of[a->n_queries_of++] = q;
            q = NULL;
        }
        if (r > 0) continue;
        if (!strcmp(arg, "--causal")) a->causal = 1;
        else if (!strcmp(arg, "--scores")) a->scores = 1;
        else if (!strcmp(arg, "--force")) cli_set_force(1);
        else if (!strcmp(arg, "--quiet")) a->quiet = 1;
        else if ((arg[0] == '-' && arg[1]) || a->file) { cli_unknown_option("view", arg); return -1; }
        else a->file = arg;
    }
    if (!a->file) { cli_error("view needs a FILE of attention weights (see attnviz view --help)"); return -1; }
    if (!a->tokens) { cli_error("view needs --tokens: the tokens the weights are about (see attnviz view --help)"); return -1; }
    return 0;
}

/* The tokens of every option into spec.  0, or -1 (printed). */
static int read_tokens(ViewSpec *spec, const ViewArgs *a, char *err, size_t errlen) {
    memset(spec, 0, sizeof *spec);
    spec->file = a->file;
    spec->causal = a->causal;
    spec->scores = a->scores;
    if (view_tokens(&spec->tokens, a->tokens, "--tokens", err, errlen)) return -1;
    if (a->keys && view_tokens(&spec->keys, a->keys, "--keys", err, errlen)) return -1;
    for (int i = 0; i < a->n_queries_of; i++) {
        const char *eq = strchr(a->queries_of[i], '=');
        if (!eq || eq == a->queries_of[i]) {
            snprintf(err, errlen, "--queries-of expects MAP=TOKENS (e.g. decoder.0.cross='le chat'), got '%s'",
                     a->queries_of[i]);
            return -1;
        }
        static char names[VIEW_MAX_QUERIES_OF][300];
        snprintf(names[i], sizeof names[i], "%.*s", (int)(eq - a->queries_of[i]), a->queries_of[i]);
        spec->qmap[i] = names[i];
        spec->n_queries_of = i + 1;
        if (view_tokens(&spec->qtok[i], eq + 1, "--queries-of", err, errlen)) return -1;
    }
    return 0;
}

static void free_spec(ViewSpec *spec) {
    view_tokens_free(&spec->tokens);
    view_tokens_free(&spec->keys);
    for (int i = 0; i < spec->n_queries_of; i++) view_tokens_free(&spec->qtok[i]);
}

static void command_line(char *buf, size_t n, int argc, char **argv) {
    snprintf(buf, n, "attnviz");
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, strchr(argv[i], ' ') || strchr(argv[i], '\'') ? " \"%s\"" : " %s", argv[i]);
    }
}

static void print_summary(const Trace *t, const ViewArgs *a, const PictureReport *rep) {
    ViewSummary s = view_summary(t);
    printf("read %d map%s, %d heads, from %s (weights computed outside attnviz)\n", s.n_maps, s.n_maps > 1 ? "s" : "",
           s.n_heads, a->file);
    if (s.n_causal) printf("causal: %d map%s with nothing above the diagonal (drawn hatched)\n", s.n_causal,
                           s.n_causal > 1 ? "s" : "");
    if (s.n_padded_rows) printf("padding: %d row%s of zeros drawn as masked\n", s.n_padded_rows, s.n_padded_rows > 1 ? "s" : "");
    printf("wrote %d pictures, trace.json and index.html to %s/\n", rep->n_pictures, a->out);
}

int cli_view(int argc, char **argv) {
    ViewArgs a;
    int rc = parse_args(&a, argc, argv);
    if (rc) return rc > 0 ? 0 : 2;
    if (cli_check_out(a.out) != 0) return 1;
    static char err[1024], command[4096];
    command_line(command, sizeof command, argc, argv);
    ViewSpec spec;
    ViewArrays va;
    memset(&va, 0, sizeof va);
    Trace t;
    trace_init(&t);
    int status = 1;
    if (read_tokens(&spec, &a, err, sizeof err) || view_read(&va, a.file, err, sizeof err) ||
        view_trace(&t, &va, &spec, err, sizeof err)) {
        cli_error("%s", err);
        goto done;
    }
    view_arrays_free(&va);
    OutStage stage;
    if (cli_stage_open(&stage, a.out) != 0) goto done;
    PictureReport rep;
    int ok = view_pictures(&t, &spec, stage.dir, command, &rep, err, sizeof err) == 0;
    if (!ok) cli_error("%s", err);
    if (cli_stage_close(&stage, ok) != 0 || !ok) goto done;
    if (!a.quiet) print_summary(&t, &a, &rep);
    status = 0;
done:
    view_arrays_free(&va);
    free_spec(&spec);
    trace_free(&t);
    return status;
}
