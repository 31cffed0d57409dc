/* corpus.c — `attnviz corpus`: writes the training corpus (corpus.h).
 *
 *   attnviz corpus [--seed N] [--train N] [--heldout N] [--heldout-frames N]
 *                  [--grammar-share P] [--heldout-share P] [--lesson-copies N]
 *                  [--data DIR] [--out DIR] */
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
        "  --train N            training pairs, half French half Vietnamese (default 200000)\n"
        "  --heldout N          held-out word combinations: pairs whose frame is trained but\n"
        "                       whose content words (grammar) or (noun, noun, adjective)\n"
        "                       (coreference templates) never occur in training (default 2000)\n"
        "  --heldout-frames N   pairs of held-out frames: grammar rule combinations never\n"
        "                       generated in training (default 2000)\n"
        "  --grammar-share P    share of training pairs from the grammar, 0..1 (default 0.8)\n"
        "  --heldout-share P    per mille of template combinations held out, 1..900 (default 100)\n"
        "  --lesson-copies N    copies of each lesson sentence per language (default 10)\n"
        "  --data DIR           lexicon and templates (default: the shipped samples/corpus,\n"
        "                       or PREFIX/share/attnviz/corpus when installed)\n"
        "  --out DIR            where train.tsv, heldout.tsv, heldout-frames.tsv, vocab.txt\n"
        "                       go (default build/corpus)\n\n"
        "TSV columns: lang, source, target, align (t-s), coref (p-a), id (template or g.FRAME).\n");
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

int cli_corpus(int argc, char **argv) {
    CorpusOptions o;
    corpus_options_default(&o);
    char data_buf[4200];
    const char *data = NULL;
    long seed = (long)o.seed, n_train = o.n_train, n_heldout = o.n_heldout, share = o.heldout_permille,
         copies = o.lesson_copies, n_frames = o.n_heldout_frames;
    const char *gshare = NULL;
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--data", &data}, {"--out", &o.out_dir}, {"--grammar-share", &gshare}};
        const CliLong longs[] = {{"--seed", &seed, 0, 0x7fffffffffffffffL}, {"--train", &n_train, 0, 10000000},
                                 {"--heldout", &n_heldout, 0, 10000000}, {"--heldout-share", &share, 1, 900},
                                 {"--lesson-copies", &copies, 0, 100000}, {"--heldout-frames", &n_frames, 0, 10000000}};
        int taken = cli_take_option(argc, argv, &i, opts, 3, "corpus");
        if (!taken) taken = cli_take_long(argc, argv, &i, longs, 6, "corpus");
        if (taken < 0) return 2;
        if (taken) continue;
        if (cli_is_help(argv[i])) { corpus_usage(stdout); return 0; }
        return cli_unknown_option("corpus", argv[i]);
    }
    o.seed = (uint64_t)seed;
    o.n_train = (int)n_train;
    o.n_heldout = (int)n_heldout;
    o.heldout_permille = (int)share;
    o.lesson_copies = (int)copies;
    o.n_heldout_frames = (int)n_frames;
    if (gshare) {
        char *end = NULL;
        double p = strtod(gshare, &end);
        if (!end || *end || end == gshare || !(p >= 0 && p <= 1)) {
            cli_error("--grammar-share %s: give a share between 0 and 1 (e.g. 0.8)", gshare);
            return 2;
        }
        o.grammar_permille = (int)(p * 1000 + 0.5);
    }
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
    char err[512];
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
    printf("corpus: %d train + %d held-out pairs + %d held-out-frame pairs (%d fr, %d vi) in %s, vocabulary %d tokens\n",
           o.n_train, o.n_heldout, o.n_heldout_frames, st->n_fr, st->n_vi, o.out_dir, st->vocab_size);
    printf("train: %d grammar pairs, %d template pairs; grammar frames %d, held out %d; "
           "cataphora %d, across sentences %d, with names %d\n",
           st->n_grammar_train, st->n_template_train, st->n_frames, st->n_frames_heldout,
           st->n_cataphora, st->n_across, st->n_with_names);
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
