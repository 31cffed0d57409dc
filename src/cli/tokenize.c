/* tokenize.c — `attnviz tokenize`: a model folder's tokenizer (or a llama2.c
 * checkpoint's tokenizer.bin) on lines of stdin, one line of ids (or tokens)
 * out per line in.
 *
 *   attnviz tokenize --model DIR [--json] [--tokens] [--no-special] < lines
 *   attnviz tokenize --model FILE.bin --tokenizer TOK.bin [--json] [--tokens] [--no-special] < lines
 * DIR: a folder with tokenizer.json (any family; no weights or config.json
 * needed), or GPT-2's vocab.json + merges.txt or BERT's vocab.txt
 * (family/hf_file.h).  --json: each input line is a JSON string (so text may
 * hold newlines, tabs, any Unicode); without it a line is the text, its
 * newline left out.  The ids are those the model is given: BERT's
 * [CLS] … [SEP] and a Llama tokenizer's BOS (llama2.c's <s> too) included,
 * unless --no-special. */
#include "cli/cli.h"
#include "net/net.h"
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void tokenize_usage(FILE *f) {
    fputs("usage: attnviz tokenize --model DIR [--json] [--tokens] [--no-special] < LINES\n"
          "       attnviz tokenize --model FILE.bin --tokenizer TOK.bin [--json] [--tokens] [--no-special] < LINES\n\n"
          "Runs a model folder's tokenizer, or a llama2.c checkpoint's tokenizer.bin, on each\n"
          "line of stdin and prints that line's token ids, separated by spaces: the ids the\n"
          "model is given, with the special tokens around the text (BERT's [CLS] ... [SEP],\n"
          "a Llama tokenizer's <s>).\n"
          "DIR is a folder with tokenizer.json (GPT-2, BERT, Llama, Mistral, Qwen, Gemma, ...;\n"
          "no weights or config.json needed), or with GPT-2's vocab.json + merges.txt or\n"
          "BERT's vocab.txt (see attnviz run --help).  Special tokens written in the text\n"
          "(<|endoftext|>, [MASK], <s>) are one token.\n"
          "--model taught (or untaught, or an attnviz checkpoint) reads the translator's words:\n"
          "lowercased, <eos> last, an unknown word as <unk>'s id.\n"
          "  --tokenizer TOK.bin  the tokenizer.bin of a llama2.c checkpoint (--model FILE.bin)\n"
          "  --json        each input line is a JSON string (\"a\\nb\"), for text with newlines\n"
          "  --tokens      print the tokens as the pictures show them, separated by ' | ',\n"
          "                instead of ids\n"
          "  --no-special  leave out the special tokens put around the text\n", f);
}
/* One line of text → one line of output.  0, or -1 (printed). */
static int tokenize_line(const Net *n, const char *text, int tokens, int special, long lineno) {
    NetTokens in;
    char err[512];
    if (net_tokenize(n, text, special, &in, err, sizeof err) != 0) {
        cli_error("line %ld: %s", lineno, err);
        return -1;
    }
    for (int i = 0; i < in.n; i++) {
        if (tokens) printf("%s%s", i ? " | " : "", in.tokens[i]);
        else printf("%s%d", i ? " " : "", in.ids[i]);
    }
    putchar('\n');
    net_tokens_free(&in);
    return 0;
}

int cli_tokenize(int argc, char **argv) {
    const char *model = NULL, *tokenizer = NULL;
    int json = 0, tokens = 0, special = 1;
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--model", &model}, {"--tokenizer", &tokenizer}};
        int taken = cli_take_option(argc, argv, &i, opts, 2, "tokenize");
        if (taken < 0) return 2;
        if (taken) continue;
        if (cli_is_help(argv[i])) { tokenize_usage(stdout); return 0; }
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--tokens")) tokens = 1;
        else if (!strcmp(argv[i], "--no-special")) special = 0;
        else return cli_unknown_option("tokenize", argv[i]);
    }
    char err[1024];
    if (!model) {
        cli_error("tokenize needs --model DIR: a folder with tokenizer.json, or GPT-2/BERT vocabulary files "
                  "(vocab.json + merges.txt, vocab.txt); or --model FILE.bin --tokenizer TOK.bin (llama2.c)");
        return 2;
    }
    Net n;
    int rc = net_open(&n, model, tokenizer, NET_OPEN_TOKENIZER, err, sizeof err);
    if (rc != 0) {
        cli_error("%s", err);
        return rc == -2 ? 2 : 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    int status = 0;
    while (status == 0 && (len = getline(&line, &cap, stdin)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
        if (!json) { status = tokenize_line(&n, line, tokens, special, lineno); continue; }
        cJSON *j = cJSON_Parse(line);
        if (!cJSON_IsString(j)) { cli_error("line %ld is not a JSON string", lineno); status = 1; }
        else status = tokenize_line(&n, j->valuestring, tokens, special, lineno) ? 1 : 0;
        cJSON_Delete(j);
    }
    free(line);
    net_free(&n);
    return status ? 1 : 0;
}
