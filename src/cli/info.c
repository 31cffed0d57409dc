/* info.c — `attnviz info`: a model file's configuration, parameter count,
 * tensors and metadata (or the configuration as one JSON object).
 *
 *   attnviz info [--model PATH|DIR] [--tokenizer TOK.bin] [--json] */
#include "cli/cli.h"
#include "net/net.h"
#include <stdio.h>
#include <string.h>

static void info_usage(FILE *f) {
    fprintf(f, "usage: attnviz info [--model NAME|PATH|DIR] [--tokenizer TOK.bin] [--json] [--verbose]\n\n"
               "Prints a model's configuration and parameter count, how it was trained, its\n"
               "held-out scores and knock-out table, and lists the shipped models.\n"
               "  --model NAME|PATH|DIR  taught or untaught (the shipped models), a checkpoint\n"
               "                 (.safetensors) written by attnviz (default: taught), a folder\n"
               "                 in the Hugging Face layout (GPT-2, BERT, Llama, Mistral, Qwen2,\n"
               "                 Qwen3, Gemma 3), or a llama2.c FILE.bin with --tokenizer\n"
               "  --tokenizer TOK.bin  the tokenizer.bin of a llama2.c checkpoint\n"
               "  --json         print the configuration as one JSON object\n"
               "  --verbose      attnviz's own models: every tensor and metadata field as stored\n"
               "A Llama-family model shows its query and key/value heads, head size, RoPE base\n"
               "and scaling, sliding window, vocabulary and parameters.\n");
}

int cli_info(int argc, char **argv) {
    const char *path = NULL, *tokenizer = NULL;
    int as_json = 0, verbose = 0;
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--model", &path}, {"--tokenizer", &tokenizer}};
        int taken = cli_take_option(argc, argv, &i, opts, 2, "info");
        if (taken < 0) return 2;
        if (taken) continue;
        if (cli_is_help(argv[i])) { info_usage(stdout); return 0; }
        if (!strcmp(argv[i], "--json")) as_json = 1;
        else if (!strcmp(argv[i], "--verbose")) verbose = 1;
        else return cli_unknown_option("info", argv[i]);
    }
    char err[1024], js[1024];
    Net n;
    if (net_open(&n, path, tokenizer, NET_OPEN_MODEL, err, sizeof err) != 0) { cli_error("%s", err); return 1; }
    if (as_json) {
        net_json(&n, js, sizeof js);
        printf("%s\n", js);
    } else {
        net_describe(&n, verbose, stdout);
    }
    net_free(&n);
    return 0;
}
