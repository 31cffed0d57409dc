/* eval.c — `attnviz eval`: measures a model on a corpus split (lesson/eval.h)
 * and prints the figures as text or one JSON object; --write-metadata stores
 * the best coreference head in the checkpoint, where `run` and `demo` read it.
 *
 *   attnviz eval [--model PATH] [--corpus DIR] [--split NAME] [--json] [--limit N] [--write-metadata]
 *                [--ablation] [--ablate MAP.H,…] */
#include "cli/cli.h"
#include "model/model.h"
#include "train/eval.h"
#include "train/meta.h"
#include "model/checkpoint.h"
#include "model/decode.h"
#include "net/model_file.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *model, *corpus, *split, *ablate;
    long limit;
    int as_json, write_meta, ablation, split_given, outputs, no_mask;
} EvalArgs;

#define EVAL_MAX_SPLITS 2

/* The splits one eval measures: --split NAME alone, or heldout and, when the
 * corpus has it, heldout-frames. */
typedef struct {
    int n;
    const char *name[EVAL_MAX_SPLITS];
    char path[EVAL_MAX_SPLITS][4096];
    EvalReport r[EVAL_MAX_SPLITS];
    StrBuf outputs[EVAL_MAX_SPLITS];      /* --outputs: each split's outputs (JSON array) */
    unsigned char *lang_tokens;           /* from DIR/train.tsv, or NULL (no purity)     */
    int n_vocab;                          /* entries of lang_tokens                       */
    int has_real;                         /* DIR/real-test.tsv is there (no --split)      */
    char real_path[4096];
    EvalReal real;                        /* its chrF and exact match (train/eval.h)      */
    StrBuf real_outputs;                  /* --outputs: its outputs (JSON array)          */
} EvalSplits;

/* What a split holds, as eval prints it. */
static const char *split_title(const char *name) {
    if (!strcmp(name, "heldout")) return "held-out word combinations";
    if (!strcmp(name, "heldout-frames")) return "held-out frames";
    if (!strcmp(name, "train")) return "training pairs";
    return name;
}

/* The best heads of a report, as eval prints them. */
typedef struct {
    int cl, ch, xl, xh, al, ah, wl, wh;   /* coref enc, coref cross, align, align with <eos> */
    double coref, coref_x, align, align_w;
    EvalCount pron;
} EvalBest;

static void eval_usage(FILE *f) {
    fprintf(f,
        "usage: attnviz eval [--model PATH] [--corpus DIR] [--split NAME] [--json] [--limit N] [--write-metadata]\n"
        "                    [--ablation] [--ablate MAP.H[,MAP.H…]] [--no-language-mask]\n\n"
        "Measures the model on DIR/heldout.tsv (held-out word combinations) and, when\n"
        "present, DIR/heldout-frames.tsv (held-out frames), per language: exact match\n"
        "(after the <unk> copy of names), pronoun accuracy overall, for cataphora and\n"
        "across sentences, and language purity (outputs free of tokens only the other\n"
        "language's training targets in DIR/train.tsv hold).  On the first split also\n"
        "translation exact match per language, pronoun accuracy, for every encoder\n"
        "self-attention and cross-attention head how often the pronoun's strongest link\n"
        "(excluding itself and <…> tokens) is its gold antecedent, and how often\n"
        "cross-attention's strongest link is the gold word alignment (teacher-forced).\n"
        "When DIR/real-test.tsv is there (attnviz corpus --real) and no --split is given,\n"
        "also per language on those real sentences: chrF (character 6-grams, beta 2,\n"
        "corpus level, the best of each English sentence's references) and exact match\n"
        "(the output equals one of its references).\n\n"
        "  --model PATH   checkpoint, or taught / untaught (the shipped models; default taught)\n"
        "  --corpus DIR   corpus folder (default build/corpus)\n"
        "  --split NAME   only DIR/NAME.tsv: heldout, heldout-frames or train\n"
        "  --limit N      only the first N pairs\n"
        "  --json         one JSON object on stdout (\"splits\": the per-language figures)\n"
        "  --outputs      with --json: every output too (\"outputs\": per split, words after\n"
        "                 the copy, in the order of the TSV)\n"
        "  --no-language-mask  measure the raw model: by default the decoder writes only\n"
        "                 tokens seen in the target language's training targets (the\n"
        "                 checkpoint's train_target_tokens_fr/_vi); \"language_mask\" in --json\n"
        "  --write-metadata  store the best encoder coreference head as\n"
        "                 \"coreference_head\" (and the figures as \"eval_heldout\") in the\n"
        "                 checkpoint's metadata, which `run` and `demo` read, and every\n"
        "                 split's per-language figures as \"eval_splits\" and the token sets of\n"
        "                 DIR/train.tsv's French and Vietnamese targets (the language mask,\n"
        "                 applied to this eval already) as \"train_target_tokens_fr\"/\"_vi\";\n"
        "                 needs --model;\n"
        "                 with --ablation, stores the knock-out table as \"eval_ablation\"\n"
        "  --ablate MAP.H[,MAP.H…]  knock these heads out (output zeroed before W_O), then measure\n"
        "  --ablation     knock out every head of every map alone and measure each: pronoun\n"
        "                 accuracy and exact match per language, most harmful first (with a\n"
        "                 progress bar on stderr; on the same pairs as eval, --limit included)\n");
}

/* 0 to go on, 1 after --help, 2 after a usage error (printed). */
static int parse_args(EvalArgs *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->corpus = "build/corpus";
    a->split = "heldout";
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const CliOption opts[] = {{"--model", &a->model}, {"--corpus", &a->corpus}, {"--split", &a->split},
                                  {"--ablate", &a->ablate}};
        const CliLong longs[] = {{"--limit", &a->limit, 1, INT_MAX}};
        int taken = cli_take_option(argc, argv, &i, opts, 4, "eval");
        if (!taken) taken = cli_take_long(argc, argv, &i, longs, 1, "eval");
        if (taken < 0) return 2;
        if (taken) continue;
        if (cli_is_help(arg)) { eval_usage(stdout); return 1; }
        if (!strcmp(arg, "--json")) a->as_json = 1;
        else if (!strcmp(arg, "--write-metadata")) a->write_meta = 1;
        else if (!strcmp(arg, "--ablation")) a->ablation = 1;
        else if (!strcmp(arg, "--outputs")) a->outputs = 1;
        else if (!strcmp(arg, "--no-language-mask")) a->no_mask = 1;
        else return cli_unknown_option("eval", arg);
    }
    if (a->ablation && a->ablate) { cli_error("--ablation knocks out one head at a time; give it without --ablate"); return 2; }
    if (a->write_meta && a->ablate) { cli_error("--write-metadata records the intact model; give it without --ablate"); return 2; }
    if (a->write_meta && !a->model) { cli_error("--write-metadata needs --model PATH (the checkpoint to update)"); return 2; }
    for (int i = 1; i < argc; i++) a->split_given |= !strcmp(argv[i], "--split") || !strncmp(argv[i], "--split=", 8);
    if (a->outputs && !a->as_json) { cli_error("--outputs adds the outputs to --json; give --json too"); return 2; }
    if (strchr(a->split, '/')) { cli_error("--split %s: give a split name such as heldout or train", a->split); return 2; }
    return 0;
}

static EvalBest best_heads(const EvalReport *r) {
    EvalBest b;
    int E = r->n_enc_layers, L = r->n_dec_layers, H = r->n_heads;
    b.coref = eval_best_head(r->coref_enc, E, H, &b.cl, &b.ch);
    b.coref_x = eval_best_head(r->coref_cross, L, H, &b.xl, &b.xh);
    b.align = eval_best_head(r->align, L, H, &b.al, &b.ah);
    b.align_w = eval_best_head(r->align_with_eos, L, H, &b.wl, &b.wh);
    b.pron = (EvalCount){r->pronoun[0].hit + r->pronoun[1].hit, r->pronoun[0].total + r->pronoun[1].total};
    return b;
}

static void json_heads(FILE *f, const char *stack, const char *kind, int layers, int heads,
                       const EvalCount t[EVAL_MAX_LAYERS][EVAL_MAX_HEADS], int *first) {
    for (int l = 0; l < layers; l++) {
        fprintf(f, "%s\"%s.%d.%s\": [", *first ? "" : ", ", stack, l, kind);
        *first = 0;
        for (int h = 0; h < heads; h++) fprintf(f, "%s%.4f", h ? ", " : "", eval_rate(t[l][h]));
        fprintf(f, "]");
    }
}

static void print_json(const EvalReport *r, const EvalBest *b, const char *model, const char *path, const char *ablated,
                       int language_mask, const char *more) {
    int L = r->n_dec_layers, H = r->n_heads;
    printf("{\"model\": \"%s\", \"data\": \"%s\", \"pairs\": %ld, \"seconds\": %.2f,\n", model, path, r->n_pairs, r->seconds);
    printf(" \"ablated\": %s,\n", ablated);
    printf(" \"language_mask\": %s,\n", language_mask ? "true" : "false");
    printf(" \"translation_exact_match\": {\"fr\": %.4f, \"vi\": %.4f},\n", eval_rate(r->exact[0]), eval_rate(r->exact[1]));
    printf(" \"translation_pairs\": {\"fr\": %ld, \"vi\": %ld},\n", r->exact[0].total, r->exact[1].total);
    printf(" \"pronoun_accuracy\": %.4f,\n", eval_rate(b->pron));
    printf(" \"pronoun_accuracy_by_language\": {\"fr\": %.4f, \"vi\": %.4f},\n", eval_rate(r->pronoun[0]),
           eval_rate(r->pronoun[1]));
    printf(" \"pronoun_count\": %ld,\n", b->pron.total);
    printf(" \"coreference_head\": {\"map\": \"encoder.%d.self\", \"head\": %d, \"accuracy\": %.4f, \"count\": %ld},\n",
           b->cl, b->ch, b->coref, r->coref_enc[0][0].total);
    printf(" \"coreference_cross_head\": {\"map\": \"decoder.%d.cross\", \"head\": %d, \"accuracy\": %.4f, \"count\": %ld},\n",
           b->xl, b->xh, b->coref_x, r->coref_cross[0][0].total);
    printf(" \"coreference_heads\": {");
    int first = 1;
    json_heads(stdout, "encoder", "self", r->n_enc_layers, H, r->coref_enc, &first);
    json_heads(stdout, "decoder", "cross", L, H, r->coref_cross, &first);
    printf("},\n");
    printf(" \"alignment_accuracy\": {\"accuracy\": %.4f, \"map\": \"decoder.%d.cross\", \"head\": %d, "
           "\"head_average\": %.4f, \"count\": %ld, \"keys\": \"source words (<eos> excluded)\",\n",
           b->align, b->al, b->ah, eval_mean_heads(r->align, L, H), r->align[0][0].total);
    printf("   \"heads\": {");
    first = 1;
    json_heads(stdout, "decoder", "cross", L, H, r->align, &first);
    printf("},\n   \"with_eos\": {\"accuracy\": %.4f, \"map\": \"decoder.%d.cross\", \"head\": %d, \"head_average\": %.4f}}%s\n}\n",
           b->align_w, b->wl, b->wh, eval_mean_heads(r->align_with_eos, L, H), more);
}

static void print_table(const char *title, const char *stack, const char *kind, int layers, int heads,
                        const EvalCount t[EVAL_MAX_LAYERS][EVAL_MAX_HEADS]) {
    printf("\n%s\n  %-18s", title, "map");
    for (int h = 0; h < heads; h++) printf("  head %-3d", h);
    printf("\n");
    for (int l = 0; l < layers; l++) {
        char id[64];
        snprintf(id, sizeof id, "%s.%d.%s", stack, l, kind);
        printf("  %-18s", id);
        for (int h = 0; h < heads; h++) printf("  %7.1f%%", 100 * eval_rate(t[l][h]));
        printf("\n");
    }
}

static void print_text(const EvalReport *r, const EvalBest *b, const char *model, const char *path, const char *ablated,
                       int language_mask) {
    int E = r->n_enc_layers, L = r->n_dec_layers, H = r->n_heads;
    printf("eval: %s on %s (%ld pairs, %.1f s)\n", model, path, r->n_pairs, r->seconds);
    printf("  language mask: %s\n", language_mask ? "on (the decoder writes only tokens of the target language's "
           "training targets)" : "off (the raw model)");
    if (*ablated) printf("  knocked out: %s (output zeroed before W_O)\n", ablated);
    printf("\n");
    printf("  translation exact match   fr %.1f%% (%ld/%ld)   vi %.1f%% (%ld/%ld)\n",
           100 * eval_rate(r->exact[0]), r->exact[0].hit, r->exact[0].total,
           100 * eval_rate(r->exact[1]), r->exact[1].hit, r->exact[1].total);
    printf("  pronoun accuracy          %.1f%% (%ld/%ld; fr %.1f%%, vi %.1f%%)\n", 100 * eval_rate(b->pron),
           b->pron.hit, b->pron.total, 100 * eval_rate(r->pronoun[0]), 100 * eval_rate(r->pronoun[1]));
    printf("  best coreference head     encoder.%d.self head %d: %.1f%% of %ld pronouns link to their antecedent\n",
           b->cl, b->ch, 100 * b->coref, r->coref_enc[0][0].total);
    printf("  best cross coref head     decoder.%d.cross head %d: %.1f%%\n", b->xl, b->xh, 100 * b->coref_x);
    printf("  alignment accuracy        decoder.%d.cross head %d: %.1f%% of %ld aligned words (head average %.1f%%)\n",
           b->al, b->ah, 100 * b->align, r->align[0][0].total, 100 * eval_mean_heads(r->align, L, H));
    print_table("coreference: pronoun -> antecedent (strongest link, self and <…> excluded)", "encoder", "self", E, H,
                r->coref_enc);
    print_table("coreference through cross-attention (row of the translated pronoun)", "decoder", "cross", L, H,
                r->coref_cross);
    print_table("alignment: cross-attention argmax = gold source word", "decoder", "cross", L, H, r->align);
}

/* A progress bar on stderr: [#####.....] 12/28 heads, 40 s, about 53 s left. */
static void ablation_progress(void *ctx, int done, int total, double seconds) {
    (void)ctx;
    int w = 30, fill = total ? done * w / total : w;
    char bar[64];
    for (int i = 0; i < w; i++) bar[i] = i < fill ? '#' : '.';
    bar[w] = '\0';
    if (done < total && done > 0)
        fprintf(stderr, "\rknock-outs [%s] %d/%d heads, %.0f s, about %.0f s left ", bar, done, total, seconds,
                seconds / done * (total - done));
    else
        fprintf(stderr, "\rknock-outs [%s] %d/%d heads, %.0f s%s", bar, done, total, seconds,
                done == total ? "                    \n" : " ");
    fflush(stderr);
}

static void print_ablation_text(const EvalAblation *ab, const char *model, const char *path) {
    const EvalAblationRow *b = &ab->baseline;
    printf("eval --ablation: %s on %s (%ld pairs; %d heads knocked out one at a time, %.1f s)\n\n", model, path, ab->pairs,
           ab->n_rows, ab->seconds);
    printf("  %-22s %5s  %8s %8s %8s  %8s %8s\n", "knocked out", "head", "pronoun", "fr", "vi", "exact fr", "exact vi");
    printf("  %-22s %5s  %7.1f%% %7.1f%% %7.1f%%  %7.1f%% %7.1f%%\n", "none (baseline)", "", 100 * eval_ablation_pronoun(b),
           100 * eval_rate(b->pronoun[0]), 100 * eval_rate(b->pronoun[1]), 100 * eval_rate(b->exact[0]),
           100 * eval_rate(b->exact[1]));
    for (int i = 0; i < ab->n_rows; i++) {
        const EvalAblationRow *r = &ab->rows[i];
        char map[64];
        model_attn_map_name(r->kind, r->layer, map, sizeof map);
        printf("  %-22s %5d  %7.1f%% %7.1f%% %7.1f%%  %7.1f%% %7.1f%%   (pronoun %+.1f points)\n", map, r->head,
               100 * eval_ablation_pronoun(r), 100 * eval_rate(r->pronoun[0]), 100 * eval_rate(r->pronoun[1]),
               100 * eval_rate(r->exact[0]), 100 * eval_rate(r->exact[1]),
               100 * (eval_ablation_pronoun(r) - eval_ablation_pronoun(b)));
    }
    printf("\nMost harmful first.  A head whose knock-out costs nothing was not needed for these\n"
           "sentences, whatever its map looks like.\n");
}

/* eval --ablation: the table, printed or as JSON, and stored with --write-metadata. */
static int run_ablation(const EvalArgs *a, ModelFile *mf, const char *path, const EvalOptions *o) {
    EvalAblation ab;
    char err[1024];
    if (eval_ablation_run(&mf->m, &mf->v, path, o, &ab, ablation_progress, NULL, err, sizeof err)) {
        fprintf(stderr, "\n");
        cli_error("%s", err);
        return 1;
    }
    eval_ablation_sort(&ab);
    char *json = eval_ablation_json(&ab, 0, a->split);
    int rc = 1;
    if (!json) { cli_error("out of memory"); goto done; }
    if (a->write_meta) {
        const char *kv[] = {"eval_ablation", json, NULL};
        if (checkpoint_rewrite_metadata(a->model, kv, err, sizeof err)) { cli_error("--write-metadata: %s", err); goto done; }
    }
    if (a->as_json) printf("%s\n", json);
    else print_ablation_text(&ab, mf->path, path);
    rc = 0;
done:
    free(json);
    eval_ablation_free(&ab);
    return rc;
}

/* One figure of the per-split table: "97.5% (40)" or "-" when nothing was counted. */
static void print_rate(EvalCount c) {
    char buf[32];
    if (c.total) snprintf(buf, sizeof buf, "%.1f%% (%ld)", 100 * eval_rate(c), c.total);
    else snprintf(buf, sizeof buf, "-");
    printf("  %-14s", buf);
}

static void print_splits_text(const EvalSplits *sp) {
    static const char *const lang[2] = {"fr", "vi"};
    for (int k = 0; k < sp->n; k++) {
        const EvalReport *r = &sp->r[k];
        printf("\n%s (%s, %ld pairs)\n  %-4s  %-14s  %-14s  %-14s  %-14s  %-14s\n", split_title(sp->name[k]), sp->path[k],
               r->n_pairs, "", "exact match", "pronoun", "cataphora", "across sent.", "purity");
        for (int li = 0; li < 2; li++) {
            printf("  %-4s", lang[li]);
            print_rate(r->exact[li]);
            print_rate(r->pronoun[li]);
            print_rate(r->pronoun_cataphora[li]);
            print_rate(r->pronoun_across[li]);
            if (r->purity_measured) print_rate(r->pure[li]);
            else printf("  %-14s", "(no train.tsv)");
            printf("\n");
        }
    }
}

/* The splits to measure and the language token sets.  0, or -1 (printed). */
static int find_splits(const EvalArgs *a, const Vocab *v, EvalSplits *sp) {
    const char *names[EVAL_MAX_SPLITS] = {a->split, "heldout-frames"};
    int want = a->split_given ? 1 : EVAL_MAX_SPLITS;
    for (int k = 0; k < want; k++) {
        snprintf(sp->path[sp->n], sizeof sp->path[0], "%s/%s.tsv", a->corpus, names[k]);
        if (access(sp->path[sp->n], R_OK) != 0) {
            if (k > 0) continue;   /* a corpus from before held-out frames */
            cli_error("cannot read %s: %s (run `attnviz corpus --out %s` first, or give --corpus DIR)", sp->path[0],
                      strerror(errno), a->corpus);
            return -1;
        }
        sp->name[sp->n++] = names[k];
    }
    char path[4096], err[1024];
    snprintf(sp->real_path, sizeof sp->real_path, "%s/real-test.tsv", a->corpus);
    sp->has_real = !a->split_given && !a->ablation && access(sp->real_path, R_OK) == 0;
    snprintf(path, sizeof path, "%s/train.tsv", a->corpus);
    sp->n_vocab = v->size;
    if (access(path, R_OK) == 0 && eval_language_tokens(v, path, &sp->lang_tokens, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

/* Every split's per-language figures as JSON: "[{…}, {…}]" (as_object 0) or
 * "\"splits\": {\"heldout\": {…}, …}" plus the outputs (1).  malloc'd, NULL out of memory. */
static char *splits_json(const EvalSplits *sp, int as_object, int outputs) {
    StrBuf b = {0};
    int bad = strbuf_printf(&b, as_object ? ",\n \"splits\": {" : "[");
    for (int k = 0; k < sp->n; k++) {
        bad |= strbuf_printf(&b, "%s", k ? ", " : "");
        if (as_object) bad |= strbuf_printf(&b, "\"%s\": ", sp->name[k]);
        bad |= eval_split_json(&b, &sp->r[k], sp->name[k]);
    }
    bad |= strbuf_printf(&b, as_object ? "}" : "]");
    for (int k = 0; outputs && k < sp->n; k++)
        bad |= strbuf_printf(&b, "%s\"%s\": %s", k ? ", " : ",\n \"outputs\": {", sp->name[k],
                             sp->outputs[k].buf ? sp->outputs[k].buf : "[]");
    if (outputs && sp->has_real)
        bad |= strbuf_printf(&b, "%s\"real-test\": %s", sp->n ? ", " : ",\n \"outputs\": {",
                             sp->real_outputs.buf ? sp->real_outputs.buf : "[]");
    if (outputs && (sp->n || sp->has_real)) bad |= strbuf_printf(&b, "}");
    if (as_object && sp->has_real) bad |= strbuf_printf(&b, ",\n \"real_test\": ") | eval_real_json(&b, &sp->real);
    if (bad) { free(b.buf); return NULL; }
    return b.buf;
}

/* The real sentences' figures (eval_real_run), as text. */
static void print_real_text(const EvalSplits *sp) {
    static const char *const lang[2] = {"fr", "vi"};
    const EvalReal *r = &sp->real;
    printf("\nreal sentences (%s: %ld fr + %ld vi English sentences, %ld references, %.1f s)\n", sp->real_path,
           r->sentences[0], r->sentences[1], r->references[0] + r->references[1], r->seconds);
    for (int li = 0; li < 2; li++) {
        if (!r->sentences[li]) { printf("  %-4s  -\n", lang[li]); continue; }
        printf("  %-4s  chrF %5.1f   exact match %.1f%% (%ld/%ld)\n", lang[li], r->chrf[li], 100 * eval_rate(r->exact[li]),
               r->exact[li].hit, r->exact[li].total);
    }
}

/* The language mask eval decodes with: --write-metadata uses the sets it is
 * about to store (DIR/train.tsv), so its figures are those of the masked model;
 * --no-language-mask removes it.  0, or -1 (printed). */
static int set_language_mask(const EvalArgs *a, ModelFile *mf, const EvalSplits *sp) {
    if (a->no_mask) { model_file_no_language_mask(mf); return 0; }
    if (!a->write_meta || !sp->lang_tokens) return 0;
    if (eval_set_language_masks(&mf->m, sp->lang_tokens, sp->n_vocab) == 0) return 0;
    cli_error("out of memory");
    return -1;
}

/* --write-metadata: the first split's best head and figures, every split's,
 * the real sentences' and the token sets (train/meta.h). */
static int write_metadata(const EvalArgs *a, const EvalSplits *sp) {
    char err[1024], *all = splits_json(sp, 0, 0);
    TrainEvalMeta em = {0};
    const char *kv[2 * TRAIN_META_MAX_PAIRS + 1];
    if (!all || train_meta_eval_build(&em, &sp->r[0], a->split, all, sp->has_real ? &sp->real : NULL, sp->lang_tokens,
                                      sp->n_vocab)) {
        free(all);
        train_meta_eval_free(&em);
        cli_error("out of memory");
        return -1;
    }
    train_meta_eval_pairs(&em, kv);
    int rc = checkpoint_rewrite_metadata(a->model, kv, err, sizeof err);
    free(all);
    train_meta_eval_free(&em);
    if (rc) cli_error("--write-metadata: %s", err);
    return rc;
}

int cli_eval(int argc, char **argv) {
    EvalArgs a;
    int rc = parse_args(&a, argc, argv);
    if (rc) return rc == 1 ? 0 : rc;
    ModelFile mf;
    char err[1024];
    if (model_file_load(&mf, a.model, err, sizeof err) != 0) { cli_error("%s", err); return 1; }
    int status = 1;
    static EvalSplits sp;   /* large (reports); one per process */
    memset(&sp, 0, sizeof sp);
    char *more = NULL;
    if (find_splits(&a, &mf.v, &sp) || set_language_mask(&a, &mf, &sp)) goto done;
    EvalOptions o = {.limit = (int)a.limit, .batch = 64, .lang_tokens = sp.lang_tokens};
    if (a.ablation) { status = run_ablation(&a, &mf, sp.path[0], &o); goto done; }
    if (a.ablate && model_ablate_parse(&mf.m, a.ablate) != 0) { cli_error("--ablate %s", mf.m.err); goto done; }
    for (int k = 0; k < sp.n; k++) {
        o.outputs = a.outputs ? &sp.outputs[k] : NULL;
        if (eval_run(&mf.m, &mf.v, sp.path[k], &o, &sp.r[k], err, sizeof err)) { cli_error("%s", err); goto done; }
    }
    if (sp.has_real && eval_real_run(&mf.m, &mf.v, sp.real_path, (int)a.limit, a.outputs ? &sp.real_outputs : NULL,
                                     &sp.real, err, sizeof err)) {
        cli_error("%s", err);
        goto done;
    }
    EvalBest b = best_heads(&sp.r[0]);
    if (a.write_meta && write_metadata(&a, &sp)) goto done;
    char abl[2048];
    model_ablate_describe(&mf.m, a.as_json, abl, sizeof abl);
    if (a.as_json) {
        if (!(more = splits_json(&sp, 1, a.outputs))) { cli_error("out of memory"); goto done; }
        print_json(&sp.r[0], &b, mf.path, sp.path[0], abl, decode_has_lang_mask(&mf.m), more);
    } else {
        print_text(&sp.r[0], &b, mf.path, sp.path[0], abl, decode_has_lang_mask(&mf.m));
        print_splits_text(&sp);
        if (sp.has_real) print_real_text(&sp);
    }
    status = 0;
done:
    free(more);
    for (int k = 0; k < EVAL_MAX_SPLITS; k++) free(sp.outputs[k].buf);
    free(sp.real_outputs.buf);
    free(sp.lang_tokens);
    model_file_free(&mf);
    return status;
}
