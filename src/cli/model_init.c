/* model_init.c — `attnviz model-init`: writes an untrained (randomly
 * initialised) checkpoint, the tests' way to make models of any shape.
 *
 *   attnviz model-init --config JSON|FILE --out PATH [--seed N] [--vocab FILE] */
#include "cli/cli.h"
#include "core/fileio.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIG_MAX_BYTES (1L << 20)
#define VOCAB_MAX_BYTES (256L << 20)

static void model_init_usage(FILE *f) {
    fprintf(f, "usage: attnviz model-init --config JSON|FILE --out PATH [--seed N] [--vocab FILE]\n\n"
               "Writes an untrained (randomly initialised) model checkpoint.\n"
               "  --config   JSON text or a file holding it: {\"arch\": \"encoder-decoder\"|\"encoder-only\"|\n"
               "             \"decoder-only\", \"vocab_size\", \"d_model\", \"n_heads\", \"d_ff\",\n"
               "             \"n_enc_layers\", \"n_dec_layers\", \"max_len\", \"norm\": \"post\"|\"pre\"}\n"
               "  --seed N   random seed (default 1); same seed, same bytes\n"
               "  --vocab    one token per line (vocab_size lines); default <pad> <unk> <bos>\n"
               "             <eos> <2fr> <2vi> w6 w7 ...\n");
}

/* --config as JSON text, or the file it names.  0, or -1 (printed). */
static int read_config(const char *config, ModelConfig *cfg) {
    char err[512], *text = NULL;
    const char *p = config;
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (*p != '{') {
        text = file_read_all(config, CONFIG_MAX_BYTES, NULL, err, sizeof err);
        if (!text) { cli_error("model-init: config file: %s", err); return -1; }
        p = text;
    }
    int rc = model_config_from_json(cfg, p, err, sizeof err);
    free(text);
    if (rc) cli_error("model-init: %s", err);
    return rc ? -1 : 0;
}

/* The vocabulary: n lines of a file (*text keeps them), or the default names.  0, or -1 (printed). */
static int read_vocab(const char *path, int n, char **vocab, char **text) {
    char err[512];
    if (!path) {
        static const char *special[] = {"<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>"};
        *text = malloc((size_t)n * 16);
        if (!*text) { cli_error("out of memory"); return -1; }
        for (int i = 0; i < n; i++) {
            vocab[i] = *text + (size_t)i * 16;
            if (i < 6) snprintf(vocab[i], 16, "%s", special[i]);
            else snprintf(vocab[i], 16, "w%d", i);
        }
        return 0;
    }
    *text = file_read_all(path, VOCAB_MAX_BYTES, NULL, err, sizeof err);
    if (!*text) { cli_error("model-init: vocabulary: %s", err); return -1; }
    int nv = 0;
    for (char *line = *text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r') line[len - 1] = 0;
        if (nv == n) { nv++; break; }
        vocab[nv++] = line;
    }
    if (nv != n) {
        cli_error("model-init: %s has %s%d tokens but vocab_size is %d", path, nv > n ? "more than " : "",
                  nv > n ? n : nv, n);
        return -1;
    }
    return 0;
}

int cli_model_init(int argc, char **argv) {
    const char *config = NULL, *out = NULL, *vocab_path = NULL;
    long seed = 1;
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--config", &config}, {"--out", &out}, {"--vocab", &vocab_path}};
        const CliLong longs[] = {{"--seed", &seed, 0, 0x7fffffffffffffffL}};
        int taken = cli_take_option(argc, argv, &i, opts, 3, "model-init");
        if (!taken) taken = cli_take_long(argc, argv, &i, longs, 1, "model-init");
        if (taken < 0) return 2;
        if (taken) continue;
        if (cli_is_help(argv[i])) { model_init_usage(stdout); return 0; }
        return cli_unknown_option("model-init", argv[i]);
    }
    if (!config || !out) { cli_error("model-init: --config and --out are required (try: attnviz model-init --help)"); return 2; }
    ModelConfig cfg;
    if (read_config(config, &cfg)) return 1;
    int rc = 1;
    char **vocab = calloc((size_t)cfg.vocab_size, sizeof(char *)), *vtext = NULL, err[512];
    Model m;
    memset(&m, 0, sizeof m);
    if (!vocab) { cli_error("out of memory"); goto done; }
    if (read_vocab(vocab_path, cfg.vocab_size, vocab, &vtext)) goto done;
    if (model_init_random(&m, &cfg, (uint64_t)seed)) { cli_error("model-init: %s", m.err); goto done; }
    char seedtxt[32];
    snprintf(seedtxt, sizeof seedtxt, "%ld", seed);
    const char *extra[] = {"init", "random", "seed", seedtxt, NULL};
    if (checkpoint_save(out, &m, (const char *const *)vocab, cfg.vocab_size, extra, err, sizeof err)) {
        cli_error("model-init: %s", err);
        goto done;
    }
    printf("wrote %s (%s, %zu parameters)\n", out, model_arch_name(cfg.arch), m.num_params);
    rc = 0;
done:
    model_free(&m);
    free(vocab);
    free(vtext);
    return rc;
}
