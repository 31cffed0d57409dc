/* main.c — attnviz command line: dispatches to the subcommands (cli.h). */
#include "cli/cli.h"
#include "core/tensor.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f) {
    fprintf(f,
        "attnviz %s — see how Transformer attention works\n\n"
        "usage: attnviz COMMAND [options]\n\n"
        "commands:\n"
        "  run     the model on your sentences: translation, every attention map, trace\n"
        "  demo    the whole lesson as pictures, in order, with index.html\n"
        "  generate  a decoder writes text token by token (KV cache): each step's attention row\n"
        "  steps   one attention computation, step by step (Q·Kᵀ, ÷√d_k, +mask, softmax, ·V)\n"
        "  info    a model file's configuration and parameters\n"
        "  tokenize  a model folder's tokenizer (tokenizer.json, or GPT-2/BERT vocabulary) on lines of stdin\n"
        "  model-init  write an untrained (random) model file\n"
        "  corpus  generate the training corpus (English→French/Vietnamese, gold alignments)\n"
        "  train   train the model on a corpus (checkpoint, resume, attention snapshots)\n"
        "  eval    measure the model: translation, pronouns, coreference heads, alignment\n"
        "  compare two sentences, two models, or a model with and without --ablate: maps side by side\n"
        "          and their differences\n"
        "  worksheet  printable attention exercises with blanks and the answer key\n"
        "  view    attention weights from any framework (.npy, .npz, .safetensors, JSON) drawn\n"
        "          as run draws its own\n"
        "  help    this text\n\n"
        "Every command takes --help.  Pictures and trace.json go to --out DIR (default output/ for\n"
        "demo, output/run/ and output/steps/ for run and steps).\n",
        ATTNVIZ_VERSION);
}

/* OpenMP threads (GNU libgomp) that wait for work spin for about 300,000 rounds
 * before sleeping.  On 2 shared cores a spinning thread takes the core the other
 * thread (or another program) needs, and a training step took 2x longer on two
 * threads than on one.  Unless the user chose a policy, attnviz starts again
 * once with GOMP_SPINCOUNT=10000 (libgomp reads it only at start-up): threads
 * spin a few microseconds, then sleep.  Measured with a busy core beside it:
 * 63 ms a step instead of 119 (one thread: 76).  Only where steps repeat
 * many times (train, eval, generate, forward --bench): a start costs about 8 ms
 * of CPU (OpenBLAS sets itself up), twice that with the second start, and a
 * 64-token forward of a GPT-2 folder takes about 150 ms in all. */
static void omp_short_spin(int argc, char **argv) {
#ifdef _OPENMP
    if (getenv("GOMP_SPINCOUNT") || getenv("OMP_WAIT_POLICY") || argc < 2) return;
    int repeats = !strcmp(argv[1], "train") || !strcmp(argv[1], "eval") || !strcmp(argv[1], "generate");
    for (int i = 2; i < argc && !repeats && !strcmp(argv[1], "forward"); i++) repeats = !strcmp(argv[i], "--bench");
    if (!repeats) return;
    if (setenv("GOMP_SPINCOUNT", "10000", 1)) return;
    execv("/proc/self/exe", argv);   /* returns only on failure: go on as we are */
#else
    (void)argc;
    (void)argv;
#endif
}

int main(int argc, char **argv) {
    omp_short_spin(argc, argv);
    tensor_blas_quiet();
    if (argc < 2) { usage(stderr); return 2; }
    /* A file over `ulimit -f` is then a write error we report and clean up
     * after, not a signal that kills us with half-written files behind. */
    signal(SIGXFSZ, SIG_IGN);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) { printf("attnviz %s\n", ATTNVIZ_VERSION); return 0; }
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) { usage(stdout); return 0; }
    if (!strcmp(cmd, "steps")) return cli_steps(argc - 1, argv + 1);
    if (!strcmp(cmd, "corpus")) return cli_corpus(argc - 1, argv + 1);
    if (!strcmp(cmd, "train")) return cli_train(argc - 1, argv + 1);
    if (!strcmp(cmd, "eval")) return cli_eval(argc - 1, argv + 1);
    if (!strcmp(cmd, "run")) return cli_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "demo")) return cli_demo(argc - 1, argv + 1);
    if (!strcmp(cmd, "info")) return cli_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "model-init")) return cli_model_init(argc - 1, argv + 1);
    if (!strcmp(cmd, "forward")) return cli_forward(argc - 1, argv + 1);   /* hidden: tests */
    if (!strcmp(cmd, "tokenize")) return cli_tokenize(argc - 1, argv + 1);
    if (!strcmp(cmd, "generate")) return cli_generate(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare")) return cli_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "worksheet")) return cli_worksheet(argc - 1, argv + 1);
    if (!strcmp(cmd, "view")) return cli_view(argc - 1, argv + 1);
    fprintf(stderr, "attnviz: error: unknown command '%s' (try: attnviz --help)\n", cmd);
    return 2;
}
