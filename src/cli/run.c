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
#include "family/hf_file.h"
#include "pipeline/head_roles.h"
#include "pipeline/hf_run.h"
#include "pipeline/links.h"
#include "pipeline/look.h"
#include "net/model_file.h"
#include "pipeline/pictures.h"
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

#define RUN_MAX_SENTENCES 64
#define RUN_MAX_LIST 64              /* --layers / --heads indices 0..63 */
#define RUN_TRACE_WARN_MB 50         /* a trace.json above this is announced */

typedef struct {
    const char *model, *tokenizer, *to, *target, *out, *query, *focus, *trace_mode, *layers, *heads, *ablate;
    long max_pictures, lines_top, probe_length, probe_seed;
    int batch, quiet, no_pictures, timing, importance, no_mask, head_roles, slide;
    unsigned char layer_on[RUN_MAX_LIST], head_on[RUN_MAX_LIST];
    const char *sentences[RUN_MAX_SENTENCES];
    int n_sentences;
} RunArgs;

/* What one run holds: the model, each sentence's look, the times for --timing. */
typedef struct {
    const RunArgs *a;
    ModelFile mf;
    CorefHead coref;
    char ablated[1024];          /* the knocked-out heads, "encoder.2.self.0, …" */
    Look look[RUN_MAX_SENTENCES];   /* each sentence, translated, traced, explained (pipeline/look.h) */
    char command[2048];          /* the command line, shown on each page */
    double ms_model, ms_pictures, ms_trace;
    int n_pictures;
    int hf_pad_to;               /* --batch on a foreign model: the longest sentence's tokens */
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
        "  --layers LIST     draw only these layers, e.g. 0,5-7 (default: all)\n"
        "  --heads LIST      draw only these heads, e.g. 0-3 (default: all)\n"
        "  --max-pictures N  at most N per-head heatmaps (default 64; 0: no cap)\n"
        "  --lines-top K     lines views draw each token's K strongest links (default: all;\n"
        "                    8 for GPT-2 / BERT folders)\n"
        "  --ablate MAP.H[,MAP.H…]  knock heads out: their output is replaced by zeros before\n"
        "                    W_O (e.g. encoder.2.self.0); the translation, every picture and\n"
        "                    the trace are those of the model without them\n"
        "  --importance      knock out each head alone and draw how much the log-probability\n"
        "                    of each translated word falls (importance.png)\n"
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
        "  --no-pictures     write only trace.json and index.html (no PNGs; faster)\n"
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
static void print_written(const RunArgs *a) {
    int trace = strcmp(a->trace_mode, "none") != 0;
    const char *what = !a->no_pictures && trace ? "pictures, trace.json and index.html"
                     : !a->no_pictures ? "pictures and index.html (no trace.json: --trace none)"
                     : trace ? "trace.json and index.html (no pictures: --no-pictures)"
                             : "index.html (no pictures: --no-pictures; no trace.json: --trace none)";
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
    a->max_pictures = 64;
    a->lines_top = -1;
    a->probe_seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const CliOption opts[] = {
            {"--model", &a->model}, {"--tokenizer", &a->tokenizer}, {"--to", &a->to}, {"--target", &a->target}, {"--out", &a->out},
            {"--query", &a->query}, {"--focus", &a->focus}, {"--trace", &a->trace_mode}, {"--layers", &a->layers},
            {"--heads", &a->heads}, {"--ablate", &a->ablate}};
        const CliLong longs[] = {{"--max-pictures", &a->max_pictures, 0, 100000}, {"--lines-top", &a->lines_top, 1, 4096},
                                 {"--probe-length", &a->probe_length, 2, 100000}, {"--probe-seed", &a->probe_seed, 0, 2147483647}};
        int taken = cli_take_option(argc, argv, &i, opts, (int)(sizeof opts / sizeof opts[0]), "run");
        if (!taken) taken = cli_take_long(argc, argv, &i, longs, 4, "run");
        if (taken < 0) return -1;
        if (taken) continue;
        if (!strcmp(arg, "--batch")) a->batch = 1;
        else if (!strcmp(arg, "--quiet")) { a->quiet = 1; cli_set_quiet(1); }
        else if (!strcmp(arg, "--no-pictures")) a->no_pictures = 1;
        else if (!strcmp(arg, "--slide")) { a->slide = 1; render_set_slide(1); }
        else if (!strcmp(arg, "--no-language-mask")) a->no_mask = 1;
        else if (!strcmp(arg, "--timing")) a->timing = 1;
        else if (!strcmp(arg, "--importance")) a->importance = 1;
        else if (!strcmp(arg, "--head-roles")) a->head_roles = 1;
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
    if (strcmp(a->trace_mode, "none") && strcmp(a->trace_mode, "weights") && strcmp(a->trace_mode, "steps")) {
        cli_error("--trace '%s' must be none, weights or steps", a->trace_mode);
        return -1;
    }
    if (parse_list("--layers", a->layers, a->layer_on) || parse_list("--heads", a->heads, a->head_on)) return -1;
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

/* Loads the model, applies --no-language-mask and --ablate, checks --focus.  0 or -1 (printed). */
static int load_model(Run *r) {
    const RunArgs *a = r->a;
    if (model_file_load(&r->mf, a->model, r->err, sizeof r->err) != 0) { cli_error("%s", r->err); return -1; }
    model_file_coref_head(&r->mf, &r->coref);
    if (a->no_mask) model_file_no_language_mask(&r->mf);
    if (r->mf.m.config.arch != MODEL_ENC_DEC) {
        cli_error("run needs an encoder–decoder model; %s is %s", r->mf.path, model_arch_name(r->mf.m.config.arch));
        return -1;
    }
    if (a->ablate) {
        if (model_ablate_parse(&r->mf.m, a->ablate) != 0) { cli_error("--ablate %s", r->mf.m.err); return -1; }
        model_ablate_describe(&r->mf.m, 0, r->ablated, sizeof r->ablated);
    }
    if (a->focus && links_check_focus(a->focus, &r->mf.m.config, r->err, sizeof r->err) != 0) {
        cli_error("%s", r->err);   /* before any sentence runs */
        return -1;
    }
    return 0;
}

/* The look's error for sentence i, said as run's options name it. */
static void look_error(const Run *r, int i) {
    const Look *L = &r->look[i];
    if (L->reached == LOOK_NONE && r->a->n_sentences > 1) cli_error("sentence %d: %s", i + 1, r->err);
    else if (L->reached == LOOK_PREPARED) cli_error("%s%s", r->a->target ? "--target: " : "", r->err);
    else cli_error("%s", r->err);
}

/* The words outside training (each prepared sentence), then those of --target. */
static void print_word_warnings(const Run *r) {
    int n = r->a->n_sentences;
    for (int i = 0; i < n && r->look[i].reached >= LOOK_PREPARED; i++) {
        char which[32] = "";
        if (n > 1) snprintf(which, sizeof which, "sentence %d: ", i + 1);
        if (r->look[i].world.n_unknown > 0)   /* names and numbers are copied, and only listed */
            cli_warn("%swords the model was not trained on, read as <unk>: %s", which, r->look[i].world.unknown);
    }
    for (int i = 0; i < n && r->look[i].reached >= LOOK_TRANSLATED; i++) {
        const Sentence *s = &r->look[i].s;
        if (s->n_target_unknown > 0)
            cli_warn("%d word(s) of --target not in the vocabulary, read as <unk>: %s", s->n_target_unknown,
                     s->target_unknown);
    }
}

/* Every sentence through the sentence pipeline (pipeline/look.h).  0; -1 after
 * a failure before the trace (printed); 1 when a sentence failed later (its
 * error is printed when the sentences before it have been shown). */
static int look_all(Run *r) {
    const RunArgs *a = r->a;
    unsigned want = LOOK_WORLD | LOOK_TRACE | LOOK_STEPS | LOOK_UNSURE | LOOK_FINITE | LOOK_LINKS | LOOK_AGGREGATES |
                    LOOK_RECORD | (a->importance ? LOOK_IMPORTANCE : 0);
    LookSpec spec = {.want = want, .tag = !strcmp(a->to, "vi") ? VOCAB_2VI : VOCAB_2FR, .target = a->target,
                     .batch = a->batch, .query = a->query, .focus = a->focus, .coref = &r->coref};
    int rc = look_sentences(r->look, &r->mf, a->sentences, a->n_sentences, &spec, r->err, sizeof r->err);
    print_word_warnings(r);
    if (rc == 0) return 0;
    for (int i = 0; i < a->n_sentences; i++)
        if (r->look[i].failed && r->look[i].reached < LOOK_TRANSLATED) { look_error(r, i); return -1; }
    return 1;
}

/* Why the drawn head was chosen, for the printed summary. */
static void why_text(const LinksView *v, const CorefHead *c, char *buf, size_t n) {
    if (v->why == LINKS_BY_FOCUS) snprintf(buf, n, "the --focus head");
    else if (v->why == LINKS_BY_STRENGTH) snprintf(buf, n, "the encoder head whose link from it is strongest");
    else if (c->taught) snprintf(buf, n, "the model's coreference head, TAUGHT with gold antecedents (train --supervise-coref)");
    else snprintf(buf, n, "the head eval found linking pronouns to antecedents most often (%.0f%%), not taught",
                  100 * c->accuracy);
}

/* The summary's lines on names copied through, on a sentence outside training
 * and on the words the model hesitated over. */
static void print_world(const Look *L, int given) {
    const WorldCheck *w = &L->world;
    const Sentence *s = &L->s;
    char missing[512], copy[600];
    if (w->n_names) {
        world_missing_names(w, s, missing, sizeof missing);
        printf("  copied through: %s%s%s%s\n", w->names, *missing ? "   (not in the translation: " : "", missing,
               *missing ? ")" : "");
    }
    for (int i = 0; i < w->n_unknown && i < 64; i++) {   /* never passed off as a word of the target language */
        int k = w->unknown_pos[i], copied = !given && sentence_copied(s, k) && s->shown && s->shown[k];
        printf("  unknown word: %s (%s)%s%s%s\n", s->raw[k],
               w->unknown_in_vocab[i] ? "the model never read it in training" : "not in the model's vocabulary",
               given ? "" : copied ? "; shown as " : "; left out of the translation", copied ? s->shown[k] : "",
               "");
    }
    pictures_copy_note(s, copy, sizeof copy);
    if (*copy) printf("  %s (decoder layer %d cross-attention, mean of its heads)\n", copy, s->copy_layer);
    if (w->outside[0]) printf("  %s\n", w->outside);
    if (!given && L->n_unsure > 0)
        printf("  unsure: %s (the model's probability of the word it wrote, below %.1f)\n", L->unsure, WORLD_UNSURE_P);
}

/* Prints each pronoun's (or the --query token's) link — the head the lines view
 * draws — and warns when the query is absent. */
static void print_links(const Run *r, const Look *L) {
    const RunArgs *a = r->a;
    const CorefHead *c = &r->coref;
    const Trace *t = &L->t;
    for (int k = 0; k < L->n_links && !a->quiet; k++) {
        const LinksView v = L->links[k].view;
        const HeadLink B = L->links[k].strongest;
        int q = L->links[k].q;
        const char *w = L->s.words.tok[q];
        const TraceMap *m = &t->maps[v.link.map];
        char why[256];
        why_text(&v, c, why, sizeof why);
        const char *out = model_ablated(&r->mf.m, MODEL_ATTN_ENC_SELF, m->layer, v.link.head) && !strcmp(m->stack, "encoder")
                              ? "; KNOCKED OUT: its output is not used" : "";
        if (v.none_fits)
            printf("  %s (position %d): no antecedent in the sentence — no word of it can be what “%s” refers to "
                   "(by the corpus lexicon's persons, genders and numbers); %s head %d (%s) still puts %.2f on “%s”, "
                   "which says where the head looks, not what the pronoun means%s\n", w, q, w, m->id, v.link.head, why,
                   (double)v.top_weight, m->keys[v.top_key], out);
        else if (v.no_antecedent && v.top_key != q)
            printf("  %s (position %d): no antecedent in the sentence — %s head %d (%s) puts %.2f on “%s”, a word that "
                   "is never an antecedent (a function word, a sign, or a word that was no pronoun's antecedent in training)%s\n", w, q, m->id, v.link.head, why,
                   (double)v.top_weight, m->keys[v.top_key], out);
        else if (v.no_antecedent)
            printf("  %s (position %d): no antecedent in the sentence — %s head %d (%s) puts %.2f on “%s”%s; its "
                   "strongest link to another word is “%s” (%.2f, weak link)%s\n", w, q, m->id, v.link.head, why,
                   (double)v.top_weight, m->keys[v.top_key], v.top_key == q ? " itself" : "", m->keys[v.link.key],
                   (double)v.link.weight, out);
        else
            printf("  %s (position %d) → %s (position %d): %s head %d, weight %.2f%s — %s%s\n", w, q, m->keys[v.link.key],
                   v.link.key, m->id, v.link.head, (double)v.link.weight, v.weak ? " (weak link: below 0.5)" : "", why, out);
        if (v.why != LINKS_BY_STRENGTH && B.map >= 0 && (B.map != v.link.map || B.head != v.link.head))
            printf("      strongest link of any encoder head: “%s” (%s head %d, weight %.2f)\n",
                   t->maps[B.map].keys[B.key], t->maps[B.map].id, B.head, (double)B.weight);
    }
    if (!L->n_links && a->query && !a->quiet) cli_warn("--query '%s' is not a token of \"%s\"", a->query, L->s.text);
}

/* Prints the heads whose knock-out costs the most (run --importance). */
static void print_importance(const Importance *im, const Sentence *s) {
    ImportanceRank rows[3 * 64];
    int n = importance_rank(im, rows, 3 * 64);
    if (im->pronoun_t >= 0)
        printf("  knock-outs: Δ log p of “%s” (translating “%s”) when one head is knocked out; the 5 that cost most:\n",
               im->targets[im->pronoun_t], s->words.tok[im->pronoun_q]);
    else
        printf("  knock-outs: mean Δ log p of the translation's tokens when one head is knocked out; the 5 that cost most:\n");
    for (int i = 0; i < n && i < 5; i++) {
        char map[64];
        model_attn_map_name(rows[i].kind, rows[i].layer, map, sizeof map);
        printf("      %-22s head %d  %+.3f  (p × %.3g)\n", map, rows[i].head, (double)rows[i].summary,
               exp((double)rows[i].summary));
    }
}

/* What the look of a sentence found, as far as it came: the translation and
 * the world, the links, the knock-outs. */
static void print_look(const Run *r, const Look *L) {
    const RunArgs *a = r->a;
    if (L->reached < LOOK_TRACED) return;
    if (!a->quiet) {
        printf("%s\n", L->s.text);
        printf("  → %s: %s%s\n", a->to, L->s.translation, a->target ? "   (given with --target)" : "");
        if (L->s.stop_warning[0]) printf("  warning: %s\n", L->s.stop_warning);
        print_world(L, a->target != NULL);
        if (r->ablated[0]) printf("  knocked out: %s (each head's output replaced by zeros before W_O)\n", r->ablated);
    }
    if (L->reached < LOOK_LINKED) return;
    print_links(r, L);
    if (L->reached >= LOOK_EXPLAINED && a->importance && !a->quiet) print_importance(&L->imp, &L->s);
}

/* The choices of --layers, --heads, --max-pictures and --lines-top. */
static void pictures_choose(PictureSpec *ps, const RunArgs *a) {
    if (a->layers) { ps->layer_on = a->layer_on; ps->n_layer_on = RUN_MAX_LIST; }
    if (a->heads) { ps->head_on = a->head_on; ps->n_head_on = RUN_MAX_LIST; }
    ps->max_heatmaps = (int)a->max_pictures;
    ps->lines_top = a->lines_top > 0 ? (int)a->lines_top : 0;
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

/* The top heads of each role (run --head-roles). */
static void print_head_roles(const HeadRoles *roles, const RunArgs *a) {
    if (a->quiet) return;
    char text[4096];
    head_roles_summary(roles, 3, text, sizeof text);
    printf("  head roles (the 3 highest scores of each; head_roles.png):\n%s", text);
}

/* Sentence i: what its look found, printed, then its pictures, trace.json and index.html in dir. */
static int show_sentence(Run *r, int i, const char *dir) {
    const RunArgs *a = r->a;
    Look *L = &r->look[i];
    print_look(r, L);
    if (L->failed) { look_error(r, i); return -1; }
    PictureSpec ps = {.dir = dir, .model_path = r->mf.path, .command = r->command, .query = a->query,
                      .focus_map = L->focus_map, .focus_head = L->focus_head, .keep_steps = !strcmp(a->trace_mode, "steps"),
                      .no_pictures = a->no_pictures, .focus_given = a->focus != NULL, .coref = r->coref, .no_trace = !strcmp(a->trace_mode, "none"),
                      .ablated = r->ablated, .metadata = r->mf.metadata, .importance = a->importance ? &L->imp : NULL,
                      .rollout = L->rollout, .outside = L->world.outside};
    pictures_choose(&ps, a);
    HeadRoles roles = {0};
    if (a->head_roles) {
        if (head_roles_measure_model(&roles, &r->mf, &L->t, (uint64_t)a->probe_seed, (int)a->probe_length, r->err,
                                     sizeof r->err)) {
            cli_error("--head-roles: %s", r->err);
            return -1;
        }
        print_head_roles(&roles, a);
        ps.head_roles = &roles;
    }
    PictureReport rep;
    int rc = pictures_show_sentence(&ps, &L->s, &L->t, &rep, r->err, sizeof r->err);
    head_roles_free(&roles);
    r->ms_pictures += rep.ms_pictures;
    r->ms_trace += rep.ms_trace;
    r->n_pictures += rep.n_pictures;
    if (rc != 0) cli_error("%s", r->err);
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
        if (cli_prepare_outdir(dir) != 0 || show_sentence(r, i, dir) != 0) { html_page_free(&top); return -1; }
        snprintf(href, sizeof href, "sentence-%d/index.html", i + 1);
        snprintf(text, sizeof text, "%d. %s → %s", i + 1, r->look[i].s.text, r->look[i].s.translation);
        html_link(&top, href, text);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/index.html", a->out);
    if (html_page_write(&top, path, r->err, sizeof r->err) != 0) { cli_error("%s", r->err); return -1; }
    return 0;
}

/* ---- a foreign model: a GPT-2, BERT or Llama-family folder, a llama2.c file ---- */

static void print_candidates(const char *what, const HfCandidate *c) {
    printf("  %s", what);
    for (int i = 0; i < HF_RUN_TOP; i++) printf("%s “%s” %.3f", i ? "," : "", c[i].text, (double)c[i].prob);
    printf("\n");
}

/* What the model says: GPT-2's next token, BERT's [MASK] fillings. */
static void print_hf_predictions(const HfRun *h, const HfFile *f) {
    printf("%s\n  tokens (%d):", h->s.text, h->in.n);
    for (int t = 0; t < h->in.n && t < 40; t++) printf(" %s", h->in.tokens[t]);
    printf("%s\n", h->in.n > 40 ? " …" : "");
    if (hf_file_causal(f)) { print_candidates("next token:", h->next); return; }
    if (!h->has_predictions) {
        if (h->in.n_masks > 0) cli_warn("%s has no masked-LM head (cls.predictions.*): [MASK] is not filled", f->dir);
        return;
    }
    if (h->n_masks == 0) printf("  (no [MASK] in the sentence: write [MASK] where BERT should guess a word)\n");
    for (int m = 0; m < h->n_masks; m++) {
        char what[64];
        snprintf(what, sizeof what, "[MASK] at %d →", h->mask_pos[m]);
        print_candidates(what, h->fill[m]);
    }
}

/* The Llama family: each pronoun's (or the --query token's) link as the
 * lines view draws it, every head that puts at least LINKS_HEADS_MIN of its
 * weight on the same word, and the strongest link of any head. */
static void print_hf_links(const HfRun *h, const RunArgs *a) {
    const Trace *t = &h->t;
    int total = 0;
    for (int i = 0; i < t->n_maps; i++) total += t->maps[i].n_heads;
    for (int q = 0, shown = 0; q < h->in.n_real && shown < 6; q++) {
        const char *w = h->in.tokens[q];
        if (a->query ? strcmp(w, a->query) != 0 : !links_is_pronoun(w)) continue;
        CorefHead none = {.layer = -1, .head = -1, .accuracy = -1};
        LinksView v = links_view(t, q, 1, &none, -1, 0);
        links_prefer_content(&v, t, q);
        if (v.link.map < 0) continue;
        shown++;
        if (v.why != LINKS_BY_CONTENT) {
            printf("  %s (position %d): no earlier word that can be an antecedent\n", w, q);
            continue;
        }
        const TraceMap *m = &t->maps[v.link.map];
        printf("  %s (position %d) → %s (position %d): %s head %d, weight %.2f%s\n", w, q, m->keys[v.link.key],
               v.link.key, m->id, v.link.head, (double)v.link.weight, v.weak ? " (weak link: below 0.5)" : "");
        HeadLink all[64];
        int n = links_content_heads(t, q, v.link.key, LINKS_HEADS_MIN, all, 64);
        printf("      heads putting at least %.1f of its weight on “%s” (%d of %d):", (double)LINKS_HEADS_MIN,
               m->keys[v.link.key], n, total);
        for (int i = 0; i < n && i < 64; i++)
            printf("%s %s head %d %.2f", i ? "," : "", t->maps[all[i].map].id, all[i].head, (double)all[i].weight);
        printf("%s\n", n > 64 ? ", …" : "");
        HeadLink B = links_strongest(t, q);
        if (B.map >= 0 && B.key != v.link.key)
            printf("      strongest link of any head: “%s” (position %d; %s head %d, weight %.2f)\n",
                   t->maps[B.map].keys[B.key], B.key, t->maps[B.map].id, B.head, (double)B.weight);
    }
}

/* One sentence through a GPT-2/BERT folder into dir. */
static int show_hf_sentence(Run *r, HfFile *f, int i, const char *dir) {
    const RunArgs *a = r->a;
    HfTraceMode tm = !strcmp(a->trace_mode, "none") ? HF_TRACE_NONE : !strcmp(a->trace_mode, "steps") ? HF_TRACE_STEPS
                                                                                                       : HF_TRACE_WEIGHTS;
    HfRunSpec spec = {a->sentences[i], tm, a->no_pictures, r->hf_pad_to};
    HfRun h;
    HeadRoles roles = {0};
    double t0 = now_ms();
    int rc = -1;
    if (hf_run_forward(&h, f, &spec, r->err, sizeof r->err)) { cli_error("%s", r->err); goto done; }
    if (a->head_roles && head_roles_measure_hf(&roles, f, &h.t, h.in.n_real, (uint64_t)a->probe_seed, (int)a->probe_length,
                                               r->err, sizeof r->err)) {   /* after the predictions: the probe is a pass of its own */
        cli_error("--head-roles: %s", r->err);
        goto done;
    }
    r->ms_model += now_ms() - t0;
    if (cli_prepare_outdir(dir) != 0) goto done;   /* only once the sentence has gone through */
    if (!a->quiet) print_hf_predictions(&h, f);
    if (!a->quiet && f->family >= HF_FILE_LLAMA) print_hf_links(&h, a);
    size_t bytes = hf_run_trace_bytes(&h);
    if (tm != HF_TRACE_NONE && bytes > (size_t)RUN_TRACE_WARN_MB << 20)
        cli_warn("trace.json will be about %zu MB (%d maps × %d heads × %d² weights); --trace none skips it",
                 bytes >> 20, h.t.n_maps, hf_file_shape(f).n_head, h.in.n);
    PictureSpec ps = {.dir = dir, .model_path = f->dir, .command = r->command, .query = a->query, .focus_map = -1,
                      .keep_steps = tm == HF_TRACE_STEPS, .no_pictures = a->no_pictures, .no_trace = tm == HF_TRACE_NONE,
                      .coref = {-1, -1, -1, 0}};
    pictures_choose(&ps, a);
    if (a->lines_top < 0) ps.lines_top = 8;
    ps.sinks = ps.link_heads = f->family >= HF_FILE_LLAMA;   /* the Llama family's pages (GPT-2's kept as they were) */
    if (a->focus && links_parse_focus(a->focus, &h.t, &ps.focus_map, &ps.focus_head, r->err, sizeof r->err)) {
        cli_error("%s", r->err);
        goto done;
    }
    if (a->head_roles) {
        print_head_roles(&roles, a);
        ps.head_roles = &roles;
    }
    PictureReport rep = {0};
    rc = hf_run_pictures(&h, f, &ps, &rep, r->err, sizeof r->err);
    r->ms_pictures += rep.ms_pictures;
    r->ms_trace += rep.ms_trace;
    r->n_pictures += rep.n_pictures;
    if (rc != 0) cli_error("%s", r->err);
    else if (rep.n_heatmaps_skipped > 0 && !a->quiet)
        printf("  %d heads not drawn as heatmaps (at most %ld; --max-pictures, --layers, --heads); the grid shows "
               "them all\n", rep.n_heatmaps_skipped, a->max_pictures);
done:
    head_roles_free(&roles);
    hf_run_free(&h);
    return rc;
}

/* run --model DIR (or FILE.bin --tokenizer TOK): every sentence through a foreign model. */
static int run_hf(Run *r) {
    const RunArgs *a = r->a;
    if (a->target || strcmp(a->to, "fr")) {
        cli_error("--target and --to are for attnviz's translation model, not a GPT-2, BERT or Llama-family model");
        return -1;
    }
    HfFile f;
    double t0 = now_ms();
    if (hf_file_open(&f, a->model, a->tokenizer, r->err, sizeof r->err)) { cli_error("%s", r->err); return -1; }
    r->ms_model += now_ms() - t0;
    int rc = check_choice(a, hf_file_shape(&f).n_layer, hf_file_shape(&f).n_head);
    for (int i = 0; a->batch && i < a->n_sentences && rc == 0; i++) {   /* a batch is padded to its longest */
        HfInput in;
        rc = hf_file_encode(&f, a->sentences[i], &in, r->err, sizeof r->err);
        if (rc != 0) cli_error("sentence %d: %s", i + 1, r->err);
        else if (in.n > r->hf_pad_to) r->hf_pad_to = in.n;
        hf_input_free(&in);
    }
    HtmlPage top;
    html_page_begin(&top, "attnviz run", "One page per sentence.");
    for (int i = 0; i < a->n_sentences && rc == 0; i++) {
        char dir[4096], href[64];
        if (a->n_sentences == 1) snprintf(dir, sizeof dir, "%s", a->out);
        else snprintf(dir, sizeof dir, "%s/sentence-%d", a->out, i + 1);
        rc = show_hf_sentence(r, &f, i, dir);
        snprintf(href, sizeof href, "sentence-%d/index.html", i + 1);
        html_link(&top, href, a->sentences[i]);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/index.html", a->out);
    if (rc == 0 && a->n_sentences > 1 && html_page_write(&top, path, r->err, sizeof r->err) != 0) {
        cli_error("%s", r->err);
        rc = -1;
    } else if (rc != 0 || a->n_sentences == 1) {
        html_page_free(&top);
    }
    hf_file_free(&f);
    return rc;
}

int cli_run(int argc, char **argv) {
    static Run r;   /* large (sentences, paths); one per process */
    RunArgs a;
    int rc = parse_args(&a, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    if (cli_check_out(a.out) != 0) return 1;   /* before loading a model */
#ifdef _OPENMP
    /* One sentence's matrices are tiny: waiting OpenMP threads cost more than
     * they save (the same measurement as demo's). */
    omp_set_num_threads(1);
#endif
    memset(&r, 0, sizeof r);
    r.a = &a;
    command_line(r.command, sizeof r.command, argc, argv);
    int status = 1;
    double t0 = now_ms();
    int route = hf_file_route(a.model, a.tokenizer, r.err, sizeof r.err), hf = route > HF_ROUTE_OWN;
    if (route < 0) {
        cli_error("%s", r.err);
        goto cleanup;
    }
#ifdef _OPENMP
    /* A foreign folder's products are big (768 x 2304 at GPT-2's size): every
     * processor, as the pictures use, unless OMP_NUM_THREADS says. */
    if (hf && !getenv("OMP_NUM_THREADS")) omp_set_num_threads(omp_get_num_procs());
#endif
    if (hf) {
        if (a.ablate || a.importance) {   /* knock-outs live in attnviz's own model for now */
            cli_error("%s works on attnviz's own models (taught, untaught, a .safetensors checkpoint), not yet on "
                      "GPT-2, BERT or Llama-family models", a.ablate ? "--ablate" : "--importance");
            goto cleanup;
        }
    } else {
        const ModelConfig *c = &r.mf.m.config;
        if (load_model(&r) != 0 || look_all(&r) < 0 ||
            check_choice(&a, c->n_enc_layers > c->n_dec_layers ? c->n_enc_layers : c->n_dec_layers, c->n_heads) != 0)
            goto cleanup;
        r.ms_model += now_ms() - t0;
    }
    OutStage stage;   /* every file goes to a staging folder first: a failure leaves --out as it was */
    if (cli_stage_open(&stage, a.out) != 0) goto cleanup;
    const char *out = a.out;
    a.out = stage.dir;
    int shown = (hf ? run_hf(&r) : show_all(&r)) == 0;
    a.out = out;
    if (cli_stage_close(&stage, shown) != 0) goto cleanup;
    if (!a.quiet) print_written(&a);
    if (a.timing)
        printf("timing: model %.1f ms (load, decode, forward, probe), pictures %.1f ms (%d pictures, %.0f/s), "
               "trace %.1f ms\n", r.ms_model, r.ms_pictures, r.n_pictures,
               r.ms_pictures > 0 ? r.n_pictures * 1e3 / r.ms_pictures : 0.0, r.ms_trace);
    status = 0;
cleanup:
    for (int i = 0; i < a.n_sentences; i++) look_free(&r.look[i]);
    model_file_free(&r.mf);
    return status;
}
