/* forward.c — `attnviz forward` (hidden, for tests and benchmarks): runs the
 * model on token ids and writes every attention map (with its norm-weighted
 * matrices and the encoder's rollout, pipeline/look.h) and the logits as JSON,
 * or times training steps on random tokens.
 *
 *   attnviz forward --model PATH --src IDS --tgt IDS --out FILE.json [--steps] [--ablate MAP.H,…]
 *   attnviz forward --model PATH --bench N [--batch B] [--len S] [--tgt-len T]
 * IDS: token ids separated by spaces, batch items separated by ';' ("5 6 7;8 9").
 * Shorter items are padded with id 0 (<pad>) and masked by their length. */
#include "cli/cli.h"
#include "net/net.h"
#include "pipeline/ids.h"
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char *model, *tokenizer, *src, *tgt, *out, *logits, *ablate;
    int steps, timing;
    long bench, batch, len, tgt_len;
} ForwardArgs;

static void forward_usage(FILE *f) {
    fprintf(f, "usage: attnviz forward --model PATH [--src IDS] [--tgt IDS] --out FILE.json [--steps]\n"
               "       attnviz forward --model HF_DIR --src IDS [--out TRACE.json|TRACE.bin] [--logits FILE] [--steps] [--timing]\n\n"
               "Runs the model on token ids and writes every attention map and the logits\n"
               "(a developer command used by the tests).  IDS: \"5 6 7;8 9\" — ids separated by\n"
               "spaces, batch items by ';'; shorter items are padded with id 0 and masked.\n"
               "  --ablate MAP.H[,MAP.H…]           knock these heads out (output zeroed before W_O)\n"
               "  --bench N [--batch B] [--len S] [--tgt-len T]\n"
               "        time N training steps (forward, backward, clip, Adam) on random tokens\n"
               "        instead; mean source/target lengths S and T (default 32 items, 12 / 11)\n"
               "For a GPT-2/BERT/Llama-family folder (or a llama2.c FILE.bin with --tokenizer TOK.bin):\n"
               "--src is the token ids (no [CLS]/[SEP] or BOS added), --out the\n"
               "trace of every head (a name ending in .bin: the compact binary trace of\n"
               "docs/trace-format.md, for long texts), --logits every position's logits as raw float32 (T, V)\n"
               "(BERT: the masked-LM head's), --timing the milliseconds of each stage.\n");
}

/* 0 to go on, 1 after --help, 2 after a usage error (printed). */
static int parse_args(ForwardArgs *a, int argc, char **argv) {
    *a = (ForwardArgs){.batch = 32, .len = 12, .tgt_len = 11};
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--model", &a->model}, {"--src", &a->src}, {"--tgt", &a->tgt}, {"--out", &a->out},
                                  {"--logits", &a->logits}, {"--ablate", &a->ablate}, {"--tokenizer", &a->tokenizer}};
        const CliLong longs[] = {{"--bench", &a->bench, 1, 1000000}, {"--batch", &a->batch, 1, 4096},
                                 {"--len", &a->len, 1, 100000}, {"--tgt-len", &a->tgt_len, 1, 100000}};
        int taken = cli_take_option(argc, argv, &i, opts, (int)(sizeof opts / sizeof opts[0]), "forward");
        if (!taken) taken = cli_take_long(argc, argv, &i, longs, 4, "forward");
        if (taken < 0) return 2;
        if (taken) continue;
        if (cli_is_help(argv[i])) { forward_usage(stdout); return 1; }
        if (!strcmp(argv[i], "--steps")) a->steps = 1;
        else if (!strcmp(argv[i], "--timing")) a->timing = 1;
        else return cli_unknown_option("forward", argv[i]);
    }
    if (!a->model) { cli_error("forward: --model and --out (or --bench N) are required"); return 2; }
    return 0;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int cli_forward(int argc, char **argv) {
    ForwardArgs a;
    int rc = parse_args(&a, argc, argv);
    if (rc) return rc == 1 ? 0 : rc;
#ifdef _OPENMP
    if (!getenv("OMP_NUM_THREADS")) omp_set_num_threads(omp_get_num_procs());   /* as run on a folder */
#endif
    char err[1024];
    Net n;
    double t0 = now_ms();
    rc = net_open(&n, a.model, a.tokenizer, NET_OPEN_MODEL, err, sizeof err);
    if (rc) { cli_error("%s", err); return rc == -2 ? 2 : 1; }
    IdsSpec spec = {.src = a.src, .tgt = a.tgt, .out = a.out, .logits = a.logits, .steps = a.steps, .timing = a.timing,
                    .load_ms = now_ms() - t0};
    rc = 1;
    if (a.ablate && net_ablate(&n, a.ablate, err, sizeof err)) cli_error("--ablate %s", err);
    else if (a.bench > 0 && ids_bench(&n, (int)a.bench, (int)a.batch, (int)a.len, (int)a.tgt_len, stdout, err,
                                      sizeof err))
        cli_error("%s", err);
    else if (a.bench <= 0 && ids_forward(&n, &spec, stdout, err, sizeof err)) cli_error("%s", err);
    else rc = 0;
    net_free(&n);
    return rc;
}
