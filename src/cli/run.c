/* run.c — `attnviz run`: the model on the user's sentences → pictures + trace.
 *
 * The options, and what is printed.  One call runs the sentence pipeline
 * (pipeline/look.h): it prepares and translates each sentence (greedy
 * decoding, or the decoder is given --target), runs the instrumented forward
 * pass, finds each pronoun's link and the views that test the maps.  run then
 * prints the translation and, for each pronoun, the head that links it and
 * where it points, and draws every picture and writes trace.json and
 * index.html (pipeline/pictures.h).  Several sentences go to one subfolder
 * each (sentence-1/ …) with an index.html linking them; --batch runs them
 * together padded to one length, so each trace shows <pad> and its mask. */
#include "cli/cli.h"
#include "core/memory.h"
#include "net/net.h"
#include "pipeline/longtext.h"
#include "pipeline/reading.h"
#include "render/html.h"
#include "render/render.h"
#include "trace/trace.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUN_MAX_SENTENCES READING_MAX_SENTENCES
#define RUN_MAX_LIST 64              /* --layers / --heads indices 0..63 */

typedef struct {
    const char *model, *tokenizer, *to, *target, *out, *query, *focus, *trace_mode, *layers, *heads, *ablate, *max_memory;
    const char *trace_format, *trace_precision;
    long max_pictures, lines_top, probe_length, probe_seed, long_from;
    int max_pictures_given;
    const char *window;
    int win_from, win_to;
    int batch, quiet, no_pictures, timing, importance, attribution, no_mask, head_roles, slide, pieces;
    unsigned char layer_on[RUN_MAX_LIST], head_on[RUN_MAX_LIST];
    const char *sentences[RUN_MAX_SENTENCES];
    int n_sentences;
} RunArgs;

/* What one run holds: the model, its reading of the sentences, the times for --timing. */
typedef struct {
    const RunArgs *a;
    Net net;
    Reading rd;
    char command[2048];          /* the command line, shown on each page */
    double ms_model, ms_pictures, ms_trace;
    int n_pictures;
    char trace_file[16];         /* what the last sentence's trace went to */
    char err[1024];
} Run;

static void run_usage(FILE *f) {
    fputs(
        "usage: attnviz run [options] \"SENTENCE\" [\"SENTENCE\" ...]\n\n"
        "Runs the model on English sentences, translates them, and draws every\n"
        "attention map: per-head heatmaps, a grid per kind, a lines view of the\n"
        "pronouns, a step strip, trace.json and index.html.  Names and numbers the model\n"
        "never saw are copied through (<unk> → the source word cross-attention weighs\n"
        "most); other unknown words get one warning with the nearest known words, and\n"
        "a sentence outside training is marked so in the summary and the pictures;\n"
        "\"unsure:\" lists the written words the model gave a probability below 0.2.\n\n"
        "  --model PATH      checkpoint (default: the shipped model, see attnviz info), a folder in\n"
        "                    the Hugging Face layout (GPT-2, BERT, Llama, Mistral, Qwen2, Qwen3,\n"
        "                    Gemma 3; docs/own-model.md), or a llama2.c FILE.bin with --tokenizer:\n"
        "                    GPT-2 and the Llama family predict the next token, BERT fills each [MASK]\n"
        "  --tokenizer FILE  the tokenizer.bin of a llama2.c checkpoint (--model FILE.bin)\n"
        "  --to fr|vi        target language (default fr)\n"
        "  --target TEXT     give the decoder this translation instead of decoding\n"
        "  --query TOKEN     draw the lines view for this source token (default: pronouns)\n"
        "  --focus L.H       the head of the step strip and, for a self-attention head, of the\n"
        "                    lines views: encoder layer L head H, or MAP.H such as\n"
        "                    decoder.1.cross.2 (default: a pronoun's head is the model's\n"
        "                    coreference head when eval recorded one, else the encoder head\n"
        "                    whose link from the token is strongest)\n"
        "  --trace none|weights|steps  none writes no trace.json; steps also keeps scores,\n"
        "                    scaled, masked, output (a trace over 50 MB is announced first)\n"
        "  --trace-format auto|json|bin  auto (default): trace.json up to about 16 MB of JSON,\n"
        "                    trace.bin past it (binary, read with NumPy: docs/trace-format.md)\n"
        "  --trace-precision f32|f16  f16: trace.bin's weights in half precision (half the\n"
        "                    bytes; a weight off by at most 2^-12)\n"
        "  --long-from N     a text of more than N tokens (default 256; 0: never) is streamed:\n"
        "                    each layer's maps go to trace.bin as they are made, and the\n"
        "                    pictures and the page pool them into blocks (128 a side at most)\n"
        "  --window FROM:TO  draw tokens FROM to TO of a long text whole, instead of pooled (at\n"
        "                    most 512; a row's weights on keys before FROM are left out)\n"
        "  --layers LIST     draw only these layers, e.g. 0,5-7 (default: all)\n"
        "  --heads LIST      draw only these heads, e.g. 0-3 (default: all)\n"
        "  --max-pictures N  at most N per-head heatmaps (default 64; 0: no cap; a long text draws\n"
        "                    only its links' heads unless this, --layers or --heads is given)\n"
        "  --lines-top K     lines views draw each token's K strongest links (default: all;\n"
        "                    8 for GPT-2 / BERT folders)\n"
        "  --pieces          a subword model's pronoun report and lines views in its tokens\n"
        "                    (\"b\" \"all\"); by default in words (\"ball\"): a word's weight on\n"
        "                    another is the sum over the other's pieces, averaged over its own;\n"
        "                    --query then names a word (the translator's tokens are words)\n"
        "  --ablate MAP.H[,MAP.H…]  knock heads out: their output is replaced by zeros before\n"
        "                    W_O (e.g. encoder.2.self.0); the translation, every picture and\n"
        "                    the trace are those of the model without them\n"
        "  --importance      knock out each head alone and draw how much the log-probability\n"
        "                    of each translated word (a GPT-2, BERT or Llama-family model: of its\n"
        "                    predicted next token, of each [MASK]'s filling) falls (importance.png)\n"
        "  --attribution     a decoder's predicted next token: each head's, each MLP's and the\n"
        "                    embedding's share of its logit (direct logit attribution;\n"
        "                    attribution.png, trace.json's attribution); the translator: the\n"
        "                    translation of the first pronoun, else the first word it writes\n"
        "  --head-roles      name what each self-attention head does (head_roles.png, trace.json's\n"
        "                    head_roles): previous token, sink (first token) on the text; duplicate\n"
        "                    token and induction on a probe of random tokens repeated twice; else\n"
        "                    local or diffuse (thresholds: docs/guide.md)\n"
        "  --probe-length N  the probe's random tokens (default 20, fewer when the context is short)\n"
        "  --probe-seed S    the probe's seed (default 1)\n"
        "  --batch           run all sentences as one padded batch (shows <pad>, [PAD] and the\n"
        "                    padding mask)\n"
        "  --out DIR         output folder (default output/run/); files an earlier run wrote\n"
        "                    there and this one does not are removed, yours are kept\n"
        "  --force           write into a folder that holds other files (kept, never\n"
        "                    removed), or into your home folder\n"
        "  --no-pictures     write only trace.json and index.html (no PNGs; faster)\n"
        "  --max-memory SIZE refuse, before the forward pass, a run whose maps would take more than\n"
        "                    SIZE (800M, 2G; default: the memory free now)\n"
        "  --slide           every picture exactly 1920 x 1080 (a 16:9 slide), scaled to\n"
        "                    fit with large labels (default: each picture its own size, at\n"
        "                    most 3000 px a side)\n"
        "  --no-language-mask  show the raw model: by default the decoder writes only tokens\n"
        "                    seen in the target language's training targets (the checkpoint's\n"
        "                    train_target_tokens_fr/_vi), never a Vietnamese word in French;\n"
        "                    trace.json's \"language_mask\" says whether it was applied\n"
        "  --quiet           print only errors (no translation, links or warnings)\n"
        "  --timing          print how long the model, the pictures and the trace took\n\n"
        "Examples:\n"
        "  attnviz run \"the animal didn't cross the street because it was too tired .\"\n"
        "  attnviz run --model ~/gpt2 --layers 0,11 \"The animal didn't cross the street because it\"\n"
        "  attnviz run --model stories260K.bin --tokenizer tok512.bin \"Lily had a red ball. She gave it to Tom.\"\n",
        f);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* "0,3-5" → on[0] = on[3] = on[4] = on[5] = 1.  NULL: nothing to do.  0, or -1 (printed). */
static int parse_list(const char *opt, const char *s, unsigned char *on) {
    if (!s) return 0;
    memset(on, 0, RUN_MAX_LIST);
    for (const char *p = s; *p;) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (end == p) break;
        if (*end == '-') { p = end + 1; hi = strtol(p, &end, 10); if (end == p) break; }
        if (lo < 0 || hi < lo || hi >= RUN_MAX_LIST) break;
        for (long k = lo; k <= hi; k++) on[k] = 1;
        p = end;
        if (*p == ',') p++;
        else if (*p) break;
        if (!*p) return 0;
    }
    cli_error("%s '%s' is not a list of indices such as 0,2,5-7 (0..%d)", opt, s, RUN_MAX_LIST - 1);
    return -1;
}

/* What was written, only that: pictures unless --no-pictures, trace.json
 * unless --trace none, always index.html; one folder per sentence when
 * there are several (the top folder holds only index.html). */
static void print_written(const RunArgs *a, const char *trace_file) {
    int trace = strcmp(a->trace_mode, "none") != 0;
    char what[160];
    if (!a->no_pictures && trace) snprintf(what, sizeof what, "pictures, %s and index.html", trace_file);
    else if (!a->no_pictures) snprintf(what, sizeof what, "pictures and index.html (no trace.json: --trace none)");
    else if (trace) snprintf(what, sizeof what, "%s and index.html (no pictures: --no-pictures)", trace_file);
    else snprintf(what, sizeof what, "index.html (no pictures: --no-pictures; no trace.json: --trace none)");
    if (a->n_sentences > 1)
        printf("index.html in %s/, and %s in one folder per sentence (sentence-1/ … sentence-%d/)\n", a->out, what,
               a->n_sentences);
    else printf("%s in %s/%s\n", what, a->out, a->slide ? " (pictures 1920 x 1080: --slide)" : "");
}

/* 0 to go on, 1 after --help, -1 after an error (printed). */
static int parse_args(RunArgs *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->out = "output/run";   /* its own folder: the demo's lesson in output/ stays */
    a->to = "fr";
    a->trace_mode = "weights";
    a->trace_format = "auto";
    a->trace_precision = "f32";
    a->max_pictures = 64;
    a->lines_top = -1;
    a->probe_seed = 1;
    a->long_from = LONGTEXT_FROM;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const CliOption opts[] = {
            {"--model", &a->model}, {"--tokenizer", &a->tokenizer}, {"--to", &a->to}, {"--target", &a->target}, {"--out", &a->out},
            {"--query", &a->query}, {"--focus", &a->focus}, {"--trace", &a->trace_mode}, {"--layers", &a->layers},
            {"--heads", &a->heads}, {"--ablate", &a->ablate}, {"--max-memory", &a->max_memory},
            {"--trace-format", &a->trace_format}, {"--trace-precision", &a->trace_precision}, {"--window", &a->window}};
        const CliLong longs[] = {{"--max-pictures", &a->max_pictures, 0, 100000}, {"--lines-top", &a->lines_top, 1, 4096},
                                 {"--probe-length", &a->probe_length, 2, 100000}, {"--probe-seed", &a->probe_seed, 0, 2147483647},
                                 {"--long-from", &a->long_from, 0, 1000000}};
        if (!strcmp(arg, "--max-pictures")) a->max_pictures_given = 1;
        int taken = cli_take_option(argc, argv, &i, opts, (int)(sizeof opts / sizeof opts[0]), "run");
        if (!taken) taken = cli_take_long(argc, argv, &i, longs, 5, "run");
        if (taken < 0) return -1;
        if (taken) continue;
        if (!strcmp(arg, "--batch")) a->batch = 1;
        else if (!strcmp(arg, "--quiet")) { a->quiet = 1; cli_set_quiet(1); }
        else if (!strcmp(arg, "--force")) cli_set_force(1);
        else if (!strcmp(arg, "--no-pictures")) a->no_pictures = 1;
        else if (!strcmp(arg, "--slide")) { a->slide = 1; render_set_slide(1); }
        else if (!strcmp(arg, "--no-language-mask")) a->no_mask = 1;
        else if (!strcmp(arg, "--timing")) a->timing = 1;
        else if (!strcmp(arg, "--importance")) a->importance = 1;
        else if (!strcmp(arg, "--attribution")) a->attribution = 1;
        else if (!strcmp(arg, "--head-roles")) a->head_roles = 1;
        else if (!strcmp(arg, "--pieces")) a->pieces = 1;
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
    if (cli_target_language(&a->to)) return -1;
    if (strcmp(a->trace_mode, "none") && strcmp(a->trace_mode, "weights") && strcmp(a->trace_mode, "steps")) {
        cli_error("--trace '%s' must be none, weights or steps", a->trace_mode);
        return -1;
    }
    if (strcmp(a->trace_format, "auto") && strcmp(a->trace_format, "json") && strcmp(a->trace_format, "bin")) {
        cli_error("--trace-format '%s' must be auto, json or bin", a->trace_format);
        return -1;
    }
    if (strcmp(a->trace_precision, "f32") && strcmp(a->trace_precision, "f16")) {
        cli_error("--trace-precision '%s' must be f32 or f16", a->trace_precision);
        return -1;
    }
    if (!strcmp(a->trace_precision, "f16") && !strcmp(a->trace_format, "json")) {
        cli_error("--trace-precision f16 halves trace.bin; trace.json keeps every float32 (drop one of the two)");
        return -1;
    }
    if (a->window) {
        int n = 0;
        if (sscanf(a->window, "%d:%d%n", &a->win_from, &a->win_to, &n) != 2 || a->window[n] || a->win_from < 0 ||
            a->win_to < a->win_from) {
            cli_error("--window '%s' must be FROM:TO, two token positions with FROM <= TO (e.g. 120:180)", a->window);
            return -1;
        }
        if (!strcmp(a->trace_format, "json")) {
            cli_error("--window draws a text streamed to trace.bin; leave out --trace-format json");
            return -1;
        }
    }
    if (parse_list("--layers", a->layers, a->layer_on) || parse_list("--heads", a->heads, a->head_on)) return -1;
    char err[256];
    if (a->max_memory && memory_set_limit(a->max_memory, err, sizeof err)) { cli_error("%s", err); return -1; }
    if (a->probe_length && !a->head_roles) {
        cli_error("--probe-length sets the probe of --head-roles; add --head-roles");
        return -1;
    }
    if (a->target && a->n_sentences != 1) {
        cli_error("--target gives the translation of one sentence; run one sentence with it");
        return -1;
    }
    return 0;
}

/* "attnviz run …" as typed, arguments with spaces or quotes in double quotes. */
static void command_line(char *buf, size_t n, int argc, char **argv) {
    snprintf(buf, n, "attnviz");
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(buf);
        int quote = strchr(argv[i], ' ') || strchr(argv[i], '\'');
        snprintf(buf + len, n - len, quote ? " \"%s\"" : " %s", argv[i]);
    }
}

/* The choices of --layers, --heads, --max-pictures and --lines-top. */
static void pictures_choose(PictureSpec *ps, const RunArgs *a) {
    if (a->layers) { ps->layer_on = a->layer_on; ps->n_layer_on = RUN_MAX_LIST; }
    if (a->heads) { ps->head_on = a->head_on; ps->n_head_on = RUN_MAX_LIST; }
    ps->max_heatmaps = (int)a->max_pictures;
    ps->chosen_heads = a->layers || a->heads || a->max_pictures_given;   /* else a long text draws its links' heads */
    ps->lines_top = a->lines_top > 0 ? (int)a->lines_top : -1;   /* -1: the model's default */
}

/* --layers / --heads must name layers and heads the model has. */
static int check_choice(const RunArgs *a, int n_layers, int n_heads) {
    for (int k = 0; k < RUN_MAX_LIST; k++) {
        if (a->layers && a->layer_on[k] && k >= n_layers) {
            cli_error("--layers %s: this model has layers 0..%d", a->layers, n_layers - 1);
            return -1;
        }
        if (a->heads && a->head_on[k] && k >= n_heads) {
            cli_error("--heads %s: this model has heads 0..%d", a->heads, n_heads - 1);
            return -1;
        }
    }
    return 0;
}

/* Sentence i: read, what the model made of it printed, then its pictures,
 * trace.json and index.html in dir. */
static int show_sentence(Run *r, int i, const char *dir) {
    const RunArgs *a = r->a;
    if (a->n_sentences > 1 && cli_prepare_outdir(dir)) return -1;   /* a long text writes trace.bin as it is read */
    int rc = reading_sentence(&r->rd, i, dir, r->err, sizeof r->err);
    reading_print(&r->rd, i, stdout);
    if (rc != 0) {
        if (rc == -1) cli_error("%s", r->err);
        return -1;
    }
    PictureSpec ps = {.dir = dir, .command = r->command};
    pictures_choose(&ps, a);
    PictureReport rep = {0};
    rc = reading_pictures(&r->rd, i, &ps, &rep, r->err, sizeof r->err);
    r->ms_pictures += rep.ms_pictures;
    r->ms_trace += rep.ms_trace;
    r->n_pictures += rep.n_pictures;
    snprintf(r->trace_file, sizeof r->trace_file, "%s", rep.trace_file);
    if (rc == 0 && rep.long_tokens && !a->quiet && rep.long_from >= 0)
        printf("  long text (%d tokens): each layer's maps went to %s as they were made; the pictures and the "
               "page draw tokens %d-%d whole (--window)\n", rep.long_tokens,
               *rep.trace_file ? rep.trace_file : "the drawn maps only (--trace none)", rep.long_from, rep.long_to);
    else if (rc == 0 && rep.long_tokens && !a->quiet)
        printf("  long text (%d tokens): each layer's maps went to %s as they were made; the pictures and the "
               "page pool them in blocks of %d tokens (--long-from 0 keeps them whole)\n", rep.long_tokens,
               *rep.trace_file ? rep.trace_file : "the pooled maps only (--trace none)", rep.long_block);
    if (rc == 0 && rep.trace_switched && !a->quiet)
        printf("  trace.bin, not trace.json: about %zu MB of JSON (past %zu MB the trace is binary, lower triangles of "
               "float32); NumPy reads it as docs/trace-format.md shows; --trace-format json writes JSON anyway\n",
               rep.trace_json_bytes >> 20, TRACE_JSON_MAX_BYTES >> 20);
    if (rc != 0) cli_error("%s", r->err);
    else if (rep.n_heatmaps_skipped > 0 && !a->quiet && rep.links_heads_only)
        printf("  %d heads not drawn as heatmaps: a long text draws its links' heads (the grid, head_summary.png and "
               "the page show every head; --max-pictures N draws the first N)\n", rep.n_heatmaps_skipped);
    else if (rep.n_heatmaps_skipped > 0 && !a->quiet)
        printf("  %d heads not drawn as heatmaps (at most %ld; --max-pictures, --layers, --heads); the grid shows "
               "them all\n", rep.n_heatmaps_skipped, a->max_pictures);
    return rc;
}

/* Every sentence, in its own subfolder with a linking index.html when several. */
static int show_all(Run *r) {
    const RunArgs *a = r->a;
    int n = a->n_sentences;
    if (n == 1) return show_sentence(r, 0, a->out);
    HtmlPage top;
    html_page_begin(&top, "attnviz run", "One page per sentence.");
    for (int i = 0; i < n; i++) {
        char dir[4096], href[64], text[1200];
        snprintf(dir, sizeof dir, "%s/sentence-%d", a->out, i + 1);
        if (show_sentence(r, i, dir) != 0) { html_page_free(&top); return -1; }
        snprintf(href, sizeof href, "sentence-%d/index.html", i + 1);
        reading_title(&r->rd, i, text, sizeof text);
        html_link(&top, href, text);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/index.html", a->out);
    if (html_page_write(&top, path, r->err, sizeof r->err) != 0) { cli_error("%s", r->err); return -1; }
    return 0;
}

int cli_run(int argc, char **argv) {
    static Run r;   /* large (sentences, paths); one per process */
    RunArgs a;
    int rc = parse_args(&a, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    if (cli_check_out(a.out) != 0) return 1;   /* before loading a model */
    memset(&r, 0, sizeof r);
    r.a = &a;
    command_line(r.command, sizeof r.command, argc, argv);
    int status = 1;
    double t0 = now_ms();
#ifdef _OPENMP
    /* A real model's products are big (768 x 2304 at GPT-2's size): every
     * processor, as the pictures use, unless OMP_NUM_THREADS says; the
     * translator's are tiny and go back to one thread once it is open. */
    if (!getenv("OMP_NUM_THREADS")) omp_set_num_threads(omp_get_num_procs());
#endif
    if (net_open(&r.net, a.model, a.tokenizer, NET_OPEN_MODEL, r.err, sizeof r.err)) {
        cli_error("%s", r.err);
        goto cleanup;
    }
#ifdef _OPENMP
    if (r.net.caps & NET_TRANSLATES) omp_set_num_threads(1);
#endif
    r.ms_model += now_ms() - t0;
    ReadSpec spec = {.to = a.to, .target = a.target, .batch = a.batch, .query = a.query, .focus = a.focus,
                     .importance = a.importance, .attribution = a.attribution, .head_roles = a.head_roles, .probe_seed = (unsigned long long)a.probe_seed,
                     .probe_length = (int)a.probe_length, .no_pictures = a.no_pictures,
                     .no_language_mask = a.no_mask, .ablate = a.ablate, .quiet = a.quiet, .pieces = a.pieces, .warn = cli_warn,
                     .trace_format = !strcmp(a.trace_format, "json") ? PICTURES_TRACE_JSON
                                   : !strcmp(a.trace_format, "bin") ? PICTURES_TRACE_BIN : PICTURES_TRACE_AUTO,
                     .trace_f16 = !strcmp(a.trace_precision, "f16"), .long_from = (int)a.long_from,
                     .window = a.window != NULL, .win_from = a.win_from, .win_to = a.win_to,
                     .trace = !strcmp(a.trace_mode, "none") ? HF_TRACE_NONE : !strcmp(a.trace_mode, "steps") ? HF_TRACE_STEPS
                                                                                                      : HF_TRACE_WEIGHTS};
    if (check_choice(&a, r.net.shape.n_layer, r.net.shape.n_head) != 0) goto cleanup;
    if (reading_begin(&r.rd, &r.net, a.sentences, a.n_sentences, &spec, r.err, sizeof r.err) < 0) {
        cli_error("%s", r.err);
        goto cleanup;
    }
    OutStage stage;   /* every file goes to a staging folder first: a failure leaves --out as it was */
    if (cli_stage_open(&stage, a.out) != 0) goto cleanup;
    const char *out = a.out;
    a.out = stage.dir;
    int shown = show_all(&r) == 0;
    a.out = out;
    if (cli_stage_close(&stage, shown) != 0) goto cleanup;
    if (!a.quiet) print_written(&a, r.trace_file);
    r.ms_model += r.rd.ms_model;
    if (a.timing)
        printf("timing: model %.1f ms (load, decode, forward, probe), pictures %.1f ms (%d pictures, %.0f/s), "
               "trace %.1f ms\n", r.ms_model, r.ms_pictures, r.n_pictures,
               r.ms_pictures > 0 ? r.n_pictures * 1e3 / r.ms_pictures : 0.0, r.ms_trace);
    status = 0;
cleanup:
    reading_end(&r.rd);
    net_free(&r.net);
    return status;
}
