/* cli.h — the subcommands of attnviz and the helpers they share.  Only this
 * layer prints errors and decides exit codes: one line on stderr,
 * "attnviz: error: WHAT (HOW TO FIX)", exit status 1 for bad input, 2 for usage. */
#ifndef ATTNVIZ_CLI_H
#define ATTNVIZ_CLI_H
#include <stddef.h>

#define ATTNVIZ_VERSION "0.1.0"

int cli_steps(int argc, char **argv);
/* cli_train.c: training and evaluation of the model. */
int cli_train(int argc, char **argv);
int cli_eval(int argc, char **argv);
/* cli_corpus.c: generates the training corpus (corpus.h). */
int cli_corpus(int argc, char **argv);
int cli_run(int argc, char **argv);
/* cli_demo.c (+ demo_model.c): the whole lesson as pictures + index.html. */
int cli_demo(int argc, char **argv);
/* cli_model.c: model files — info, model-init, and the hidden forward (tests). */
int cli_info(int argc, char **argv);
int cli_model_init(int argc, char **argv);
int cli_forward(int argc, char **argv);

/* Prints "attnviz: error: <fmt>" + newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Creates DIR (and parents) if missing and checks it is writable.  0 or -1 (message printed). */
int cli_prepare_outdir(const char *dir);

/* An option that takes a value: --name VALUE or --name=VALUE. */
typedef struct { const char *name; const char **dst; } CliOption;
/* If argv[*i] is one of opts, stores its value (advancing *i past it) and
 * returns 1; 0 if it is none of them; -1 after printing an error when the
 * value is missing (a following "--flag" does not count as a value). */
int cli_take_option(int argc, char **argv, int *i, const CliOption *opts, int n, const char *cmd);

/* 1 if arg is --help or -h. */
int cli_is_help(const char *arg);

#endif
