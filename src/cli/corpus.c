/* cli_corpus.c — `attnviz corpus`: writes the training corpus (corpus.h).
 *
 *   attnviz corpus [--seed N] [--train N] [--heldout N] [--heldout-share P]
 *                  [--lesson-copies N] [--data DIR] [--out DIR] */
#include "cli/cli.h"
#include "lesson/corpus.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef ATTNVIZ_DATADIR
#define ATTNVIZ_DATADIR "/usr/local/share/attnviz"
#endif

static void corpus_usage(FILE *f) {
    fprintf(f,
        "usage: attnviz corpus [options]\n\n"
        "Generates the English→French / English→Vietnamese corpus the model is trained\n"
        "on, from the lexicon and templates in samples/corpus/ (see its README.md).\n"
        "Same options, same bytes.\n\n"
        "options:\n"
        "  --seed N            random seed (default 1)\n"
        "  --train N           training pairs, half French half Vietnamese (default 60000)\n"
        "  --heldout N         held-out pairs: coreference sentences whose (noun, noun,\n"
        "                      adjective) combinations never occur in training (default 2000)\n"
        "  --heldout-share P   per mille of the combinations held out, 1..900 (default 100)\n"
        "  --lesson-copies N   copies of each lesson sentence per language (default 10)\n"
        "  --data DIR          lexicon and templates (default samples/corpus)\n"
        "  --out DIR           where train.tsv, heldout.tsv, vocab.txt go (default build/corpus)\n\n"
        "train.tsv / heldout.tsv columns: lang, source, target, align (t-s), coref (p-a), template.\n");
}

static int parse_num(const char *flag, const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) {
        cli_error("%s expects a whole number from %ld to %ld, got '%s'", flag, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int file_exists(const char *dir, const char *name) {
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, R_OK) == 0;
}

/* samples/corpus in the current folder, next to the binary (../samples/corpus
 * from build/), or in the installed data folder. */
static const char *default_data_dir(char *buf, size_t n) {
    if (file_exists("samples/corpus", "templates.txt")) return "samples/corpus";
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(buf, n, "%s/../samples/corpus", exe);
            if (file_exists(buf, "templates.txt")) return buf;
        }
    }
    snprintf(buf, n, "%s/corpus", ATTNVIZ_DATADIR);
    if (file_exists(buf, "templates.txt")) return buf;
    return "samples/corpus";
}

int cli_corpus(int argc, char **argv) {
    CorpusOptions o;
    corpus_options_default(&o);
    char data_buf[4200];
    const char *data = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) { corpus_usage(stdout); return 0; }
        if (a[0] != '-' || a[1] != '-') {
            cli_error("unexpected argument '%s' (attnviz corpus takes only options; see --help)", a);
            return 2;
        }
        if (i + 1 >= argc) { cli_error("%s needs a value (see attnviz corpus --help)", a); return 2; }
        const char *v = argv[++i];
        long n;
        if (!strcmp(a, "--seed")) {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 10);
            if (!*v || *end || errno || v[0] == '-') { cli_error("--seed expects a whole number >= 0, got '%s'", v); return 2; }
            o.seed = s;
        } else if (!strcmp(a, "--train")) {
            if (parse_num(a, v, 0, 10000000, &n)) return 2;
            o.n_train = (int)n;
        } else if (!strcmp(a, "--heldout")) {
            if (parse_num(a, v, 0, 10000000, &n)) return 2;
            o.n_heldout = (int)n;
        } else if (!strcmp(a, "--heldout-share")) {
            if (parse_num(a, v, 1, 900, &n)) return 2;
            o.heldout_permille = (int)n;
        } else if (!strcmp(a, "--lesson-copies")) {
            if (parse_num(a, v, 0, 100000, &n)) return 2;
            o.lesson_copies = (int)n;
        } else if (!strcmp(a, "--data")) {
            data = v;
        } else if (!strcmp(a, "--out")) {
            o.out_dir = v;
        } else {
            cli_error("unknown option '%s' for attnviz corpus (see attnviz corpus --help)", a);
            return 2;
        }
    }
    o.data_dir = data ? data : default_data_dir(data_buf, sizeof data_buf);
    if (cli_prepare_outdir(o.out_dir)) return 1;
    CorpusStats *st = calloc(1, sizeof *st);
    if (!st) { cli_error("out of memory"); return 1; }
    char err[512];
    if (corpus_generate(&o, st, err, sizeof err)) {
        cli_error("%s", err);
        free(st);
        return 1;
    }
    int total = 0;
    for (int i = 0; i < st->n_templates; i++) total += st->train_per_template[i] + st->heldout_per_template[i];
    printf("corpus: %d train + %d held-out pairs (%d fr, %d vi) in %s, vocabulary %d tokens\n",
           o.n_train, o.n_heldout, st->n_fr, st->n_vi, o.out_dir, st->vocab_size);
    printf("lexicon: %d nouns, %d adjectives, %d verbs; coreference combinations %d, held out %d\n",
           st->n_nouns, st->n_adjectives, st->n_verbs, st->n_coref_combinations, st->n_heldout_combinations);
    printf("%-18s %8s %8s\n", "template", "train", "heldout");
    for (int i = 0; i < st->n_templates; i++)
        printf("%-18s %8d %8d\n", st->template_id[i], st->train_per_template[i], st->heldout_per_template[i]);
    double ms = 0, mt = 0;
    for (int l = 0; l <= CORPUS_MAX_LEN; l++) { ms += (double)l * st->src_len_hist[l]; mt += (double)l * st->tgt_len_hist[l]; }
    if (total)
        printf("length: source mean %.1f max %d, target mean %.1f max %d tokens\n",
               ms / total, st->max_src_len, mt / total, st->max_tgt_len);
    free(st);
    return 0;
}
