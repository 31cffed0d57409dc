/* tokenize.c — `attnviz tokenize`: a GPT-2 or BERT folder's tokenizer (or a
 * llama2.c checkpoint's tokenizer.bin) on lines of stdin, one line of ids (or
 * tokens) out per line in.
 *
 *   attnviz tokenize --model DIR [--json] [--tokens] < lines
 *   attnviz tokenize --model FILE.bin --tokenizer TOK.bin [--json] [--tokens] < lines
 * --json: each input line is a JSON string (so text may hold newlines, tabs,
 * any Unicode); without it a line is the text, its newline left out.
 * The ids are the tokenizer's alone: BERT's [CLS]/[SEP] and llama2.c's BOS
 * are not added. */
#include "cli/cli.h"
#include "family/hf_file.h"
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void tokenize_usage(FILE *f) {
    fputs("usage: attnviz tokenize --model DIR [--json] [--tokens] < LINES\n"
          "       attnviz tokenize --model FILE.bin --tokenizer TOK.bin [--json] [--tokens] < LINES\n\n"
          "Runs a GPT-2 or BERT folder's tokenizer, or a llama2.c checkpoint's tokenizer.bin\n"
          "(see attnviz run --help), on each line of stdin and prints that line's token ids,\n"
          "separated by spaces (no [CLS]/[SEP] or BOS added).\n"
          "  --json     each input line is a JSON string (\"a\\nb\"), for text with newlines\n"
          "  --tokens   print the tokens' text, separated by ' | ', instead of ids\n", f);
}

/* One line of text → one line of output.  0, or -1 (printed). */
static int tokenize_line(const HfFile *f, const char *text, int tokens, long lineno) {
    int *ids = NULL, n = 0;
    char err[512];
    if (hf_file_token_ids(f, text, &ids, &n, err, sizeof err) != 0) {
        cli_error("line %ld: %s", lineno, err);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (tokens) {
            char buf[256];
            hf_file_token_text(f, ids[i], buf, sizeof buf);
            printf("%s%s", i ? " | " : "", buf);
        } else {
            printf("%s%d", i ? " " : "", ids[i]);
        }
    }
    putchar('\n');
    free(ids);
    return 0;
}

int cli_tokenize(int argc, char **argv) {
    const char *model = NULL, *tokenizer = NULL;
    int json = 0, tokens = 0;
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--model", &model}, {"--tokenizer", &tokenizer}};
        int taken = cli_take_option(argc, argv, &i, opts, 2, "tokenize");
        if (taken < 0) return 2;
        if (taken) continue;
        if (cli_is_help(argv[i])) { tokenize_usage(stdout); return 0; }
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--tokens")) tokens = 1;
        else return cli_unknown_option("tokenize", argv[i]);
    }
    char err[1024];
    int route = hf_file_route(model, tokenizer, err, sizeof err);
    if (route < 0) { cli_error("%s", err); return 2; }
    if (route == HF_ROUTE_OWN) {
        cli_error("tokenize needs --model DIR, a GPT-2 or BERT folder (config.json, vocab files), or --model FILE.bin "
                  "--tokenizer TOK.bin (llama2.c)");
        return 2;
    }
    HfFile f;
    if ((route == HF_ROUTE_LLAMA2C ? hf_file_open(&f, model, tokenizer, err, sizeof err)
                                   : hf_file_load_tokenizer(&f, model, err, sizeof err)) != 0) {
        cli_error("%s", err);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    int status = 0;
    while (status == 0 && (len = getline(&line, &cap, stdin)) >= 0) {
        lineno++;
        if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
        if (!json) { status = tokenize_line(&f, line, tokens, lineno); continue; }
        cJSON *j = cJSON_Parse(line);
        if (!cJSON_IsString(j)) { cli_error("line %ld is not a JSON string", lineno); status = 1; }
        else status = tokenize_line(&f, j->valuestring, tokens, lineno) ? 1 : 0;
        cJSON_Delete(j);
    }
    free(line);
    hf_file_free(&f);
    return status ? 1 : 0;
}
