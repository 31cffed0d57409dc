/* corpus.c — `attnviz corpus`: writes the training corpus (corpus.h).
 *
 *   attnviz corpus [--seed N] [--train N] [--heldout N] [--heldout-frames N]
 *                  [--grammar-share P] [--french-share P] [--heldout-share P] [--lesson-copies N]
 *                  [--data DIR] [--out DIR]
 *                  [--real DIR [--real-max-len N] [--real-test FR,VI] [--real-valid FR,VI]
 *                   [--real-vi-copies N] [--unpunctuated P] [--vocab-max N] [--vocab-en N] [--min-count N]] */
#include "cli/cli.h"
#include "core/datadir.h"
#include "corpus/corpus.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef ATTNVIZ_DATADIR
#define ATTNVIZ_DATADIR "/usr/local/share/attnviz"
#endif

static void corpus_usage(FILE *f) {
    fprintf(f,
        "usage: attnviz corpus [options]\n\n"
        "Generates the English→French / English→Vietnamese corpus the model is trained\n"
        "on: most pairs composed by a grammar, the rest from the lesson's templates, over\n"
        "the lexicon in samples/corpus/ (see its README.md).  Same options, same bytes.\n\n"
        "options:\n"
        "  --seed N             random seed (default 1)\n"
        "  --train N            training pairs (default 200000)\n"
        "  --heldout N          held-out word combinations: pairs whose frame is trained but\n"
        "                       whose content words (grammar) or (noun, noun, adjective)\n"
        "                       (coreference templates) never occur in training (default 2000)\n"
        "  --heldout-frames N   pairs of held-out frames: grammar rule combinations never\n"
        "                       generated in training (default 2000)\n"
        "  --grammar-share P    share of training pairs from the grammar, 0..1 (default 0.8)\n"
        "  --french-share P     share of those pairs in French, the rest Vietnamese, 0..1\n"
        "                       (default 0.5; 0.65 with --real, where the grammar's French\n"
        "                       agreement needs the practice and real French pairs abound)\n"
        "  --heldout-share P    per mille of template combinations held out, 1..900 (default 100)\n"
        "  --lesson-copies N    copies of each lesson sentence per language (default 10)\n"
        "  --data DIR           lexicon and templates (default: the shipped samples/corpus,\n"
        "                       or PREFIX/share/attnviz/corpus when installed)\n"
        "  --out DIR            where train.tsv, heldout.tsv, heldout-frames.tsv, vocab.txt\n"
        "                       go (default build/corpus)\n\n"
        "real sentence pairs (the Tatoeba Project, tatoeba.org, as manythings.org packages them):\n"
        "  --real DIR           also read DIR/fra-eng.tsv and DIR/vie-eng.tsv (fra-eng.zip and\n"
        "                       vie-eng.zip from https://www.manythings.org/anki/, CC-BY 2.0 FR):\n"
        "                       split by English sentence into real-test.tsv, real-valid.tsv\n"
        "                       (every translation kept as a reference) and training pairs mixed\n"
        "                       into train.tsv; the vocabulary adds their words by frequency;\n"
        "                       --train then counts the grammar and template pairs (default 160000)\n"
        "  --real-max-len N     pairs with more tokens on a side are left out (default 30)\n"
        "  --real-test FR,VI    English sentences held out for the test (default 2000,500)\n"
        "  --real-valid FR,VI   and for validation (default 1000,250)\n"
        "  --real-vi-copies N   times each Vietnamese training pair is written (default 3)\n"
        "  --unpunctuated P     share of training sources written without their final . ! ?\n"
        "                       (the target keeps it), 0..1 (default 0.2 with --real, else 0)\n"
        "  --vocab-max N        vocabulary size limit, specials included (default 20000)\n"
        "  --vocab-en N         English words of the real pairs in it (default 9000)\n"
        "  --min-count N        fewest training uses of a real word in it (default 2)\n\n"
        "TSV columns: lang, source, target, align (t-s), coref (p-a), id (template, g.FRAME,\n"
        "or t.fr / t.vi for a real pair).\n");
}

/* The lexicon and templates: shipped with the binary (core/datadir.h), else
 * samples/corpus in the working folder. */
static const char *default_data_dir(char *buf, size_t n) {
    if (datadir_find("corpus/templates.txt", buf, n) == 0) {
        char *slash = strrchr(buf, '/');
        if (slash) *slash = '\0';
        return buf;
    }
    return "samples/corpus";
}

/* "FR,VI" → two counts in 0..10000000.  0, or -1 (printed). */
static int parse_two(const char *opt, const char *s, int *out) {
    char *end = NULL;
    long a = strtol(s, &end, 10), b = -1;
    if (end != s && *end == ',') {
        const char *p = end + 1;
        b = strtol(p, &end, 10);
        if (end == p) b = -1;
    }
    if (a < 0 || b < 0 || a > 10000000 || b > 10000000 || *end) {
        cli_error("%s %s: give two counts FR,VI (e.g. %s 2000,500)", opt, s, opt);
        return -1;
    }
    out[0] = (int)a;
    out[1] = (int)b;
    return 0;
}

/* A share 0..1 as per mille.  0, or -1 (printed). */
static int parse_share(const char *opt, const char *s, int *permille) {
    char *end = NULL;
    double p = strtod(s, &end);
    if (!end || *end || end == s || !(p >= 0 && p <= 1)) {
        cli_error("%s %s: give a share between 0 and 1 (e.g. 0.2)", opt, s);
        return -1;
    }
    *permille = (int)(p * 1000 + 0.5);
    return 0;
}

/* The options into o.  0 to go on, 1 after --help, 2 after a usage error (printed). */
static int parse_corpus_args(CorpusOptions *o, const char **data, int argc, char **argv) {
    long seed = (long)o->seed, n_train = -1, n_heldout = o->n_heldout, share = o->heldout_permille,
         copies = o->lesson_copies, n_frames = o->n_heldout_frames, max_len = o->real_max_len,
         vi_copies = o->real_vi_copies, vmax = o->vocab_max, ven = o->vocab_en, minc = o->min_count;
    const char *gshare = NULL, *fshare = NULL, *unpunct = NULL, *test = NULL, *valid = NULL;
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--data", data}, {"--out", &o->out_dir}, {"--grammar-share", &gshare},
                                  {"--french-share", &fshare}, {"--real", &o->real_dir}, {"--unpunctuated", &unpunct}, {"--real-test", &test},
                                  {"--real-valid", &valid}};
        const CliLong longs[] = {{"--seed", &seed, 0, 0x7fffffffffffffffL}, {"--train", &n_train, 0, 10000000},
                                 {"--heldout", &n_heldout, 0, 10000000}, {"--heldout-share", &share, 1, 900},
                                 {"--lesson-copies", &copies, 0, 100000}, {"--heldout-frames", &n_frames, 0, 10000000},
                                 {"--real-max-len", &max_len, 1, CORPUS_MAX_LEN}, {"--real-vi-copies", &vi_copies, 1, 100},
                                 {"--vocab-max", &vmax, 7, 1000000}, {"--vocab-en", &ven, 0, 1000000},
                                 {"--min-count", &minc, 1, 1000000}};
        int taken = cli_take_option(argc, argv, &i, opts, 8, "corpus");
        if (!taken) taken = cli_take_long(argc, argv, &i, longs, 11, "corpus");
        if (taken < 0) return 2;
        if (taken) continue;
        if (cli_is_help(argv[i])) { corpus_usage(stdout); return 1; }
        return cli_unknown_option("corpus", argv[i]);
    }
    o->seed = (uint64_t)seed;
    o->n_train = n_train >= 0 ? (int)n_train : o->real_dir ? 160000 : o->n_train;
    o->n_heldout = (int)n_heldout;
    o->heldout_permille = (int)share;
    o->lesson_copies = (int)copies;
    o->n_heldout_frames = (int)n_frames;
    o->real_max_len = (int)max_len;
    o->real_vi_copies = (int)vi_copies;
    o->vocab_max = (int)vmax;
    o->vocab_en = (int)ven;
    o->min_count = (int)minc;
    o->unpunct_permille = o->real_dir ? 200 : 0;
    o->french_permille = o->real_dir ? 650 : 500;
    if ((gshare && parse_share("--grammar-share", gshare, &o->grammar_permille)) ||
        (fshare && parse_share("--french-share", fshare, &o->french_permille)) ||
        (unpunct && parse_share("--unpunctuated", unpunct, &o->unpunct_permille)) ||
        (test && parse_two("--real-test", test, o->real_test)) || (valid && parse_two("--real-valid", valid, o->real_valid)))
        return 2;
    if (!o->real_dir && (test || valid)) {
        cli_error("--real-test and --real-valid split the real pairs; give --real DIR too");
        return 2;
    }
    return 0;
}

/* The real pairs' figures (--real). */
static void print_real(const CorpusStats *st) {
    static const char *const lang[2] = {"fr", "vi"};
    for (int L = 0; L < 2; L++)
        printf("real %s: %d pairs read; train %d pairs (%d English sentences), %d lines written, %d left out "
               "(a target word outside the vocabulary); valid %d pairs (%d sentences); test %d pairs (%d sentences); "
               "%d set aside (held out in the other language); %d too long\n",
               lang[L], st->real_read[L], st->real_pairs[0][L] - st->real_dropped[L], st->real_sent[0][L],
               st->real_lines[L], st->real_dropped[L], st->real_pairs[1][L], st->real_sent[1][L], st->real_pairs[2][L],
               st->real_sent[2][L], st->real_pairs[3][L], st->real_pairs[4][L]);
    printf("vocabulary: %d tokens; words of the real training pairs in it: English %d, French %d, Vietnamese %d; "
           "%d names found in the real English (copied, never in the vocabulary)\n",
           st->vocab_size, st->vocab_en, st->vocab_fr, st->vocab_vi, st->real_names);
}

int cli_corpus(int argc, char **argv) {
    CorpusOptions o;
    corpus_options_default(&o);
    char data_buf[4200];
    const char *data = NULL;
    int prc = parse_corpus_args(&o, &data, argc, argv);
    if (prc) return prc == 1 ? 0 : prc;
    o.data_dir = data ? data : default_data_dir(data_buf, sizeof data_buf);
    struct stat ds;
    char nouns[4200];
    snprintf(nouns, sizeof nouns, "%s/nouns.txt", data ? data : ".");
    if (data && (stat(data, &ds) != 0 || !S_ISDIR(ds.st_mode) || access(nouns, R_OK) != 0)) {
        cli_error("--data %s is not a folder with the corpus lexicon (nouns.txt, verbs.txt, templates.txt, …; "
                  "e.g. samples/corpus)", data);
        return 1;
    }
    CorpusStats *st = calloc(1, sizeof *st);
    if (!st) { cli_error("out of memory"); return 1; }
    OutStage stage;   /* written into a staging folder, moved into --out when complete */
    if (cli_stage_open(&stage, o.out_dir)) { free(st); return 1; }
    const char *out = o.out_dir;
    o.out_dir = stage.dir;
    char err[1024];
    int made = corpus_generate(&o, st, err, sizeof err) == 0;
    o.out_dir = out;
    if (!made) cli_error("%s", err);
    if (cli_stage_close(&stage, made) != 0) {
        free(st);
        return 1;
    }
    int total = 0, n_kinds = st->n_templates + 32;
    for (int i = 0; i < n_kinds && i < CORPUS_MAX_KINDS; i++)
        total += st->train_per_template[i] + st->heldout_per_template[i] + st->heldout_frames_per_template[i];
    total += st->real_lines[0] + st->real_lines[1];
    printf("corpus: %d train + %d held-out pairs + %d held-out-frame pairs (%d fr, %d vi) in %s, vocabulary %d tokens\n",
           st->n_train_lines, o.n_heldout, o.n_heldout_frames, st->n_fr, st->n_vi, o.out_dir, st->vocab_size);
    printf("train: %d grammar pairs, %d template pairs%s; grammar frames %d, held out %d; "
           "cataphora %d, across sentences %d, with names %d\n",
           st->n_grammar_train, st->n_template_train, o.real_dir ? ", real pairs below" : "", st->n_frames,
           st->n_frames_heldout, st->n_cataphora, st->n_across, st->n_with_names);
    if (o.real_dir) print_real(st);
    if (o.unpunct_permille)
        printf("unpunctuated: %d of %d training sources written without their final . ! ? (the target keeps it)\n",
               st->n_unpunct, st->n_train_lines);
    printf("lexicon: %d nouns, %d adjectives, %d verbs, %d names; template coreference combinations %d, held out %d\n",
           st->n_nouns, st->n_adjectives, st->n_verbs, st->n_names, st->n_coref_combinations, st->n_heldout_combinations);
    printf("%-18s %8s %8s %8s\n", "kind", "train", "heldout", "h-frames");
    for (int i = 0; i < n_kinds && i < CORPUS_MAX_KINDS; i++)
        if (st->template_id[i][0])
            printf("%-18s %8d %8d %8d\n", st->template_id[i], st->train_per_template[i], st->heldout_per_template[i],
                   st->heldout_frames_per_template[i]);
    double ms = 0, mt = 0;
    for (int l = 0; l <= CORPUS_MAX_LEN; l++) { ms += (double)l * st->src_len_hist[l]; mt += (double)l * st->tgt_len_hist[l]; }
    if (total)
        printf("length: source mean %.1f max %d, target mean %.1f max %d tokens\n",
               ms / total, st->max_src_len, mt / total, st->max_tgt_len);
    free(st);
    return 0;
}
