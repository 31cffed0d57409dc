/* cli.h — the subcommands of attnviz and the helpers they share.
 *
 * One leaf file per subcommand (run.c, steps.c, demo.c, corpus.c, train.c,
 * eval.c, info.c, model_init.c, forward.c); main.c dispatches to their entry
 * points and nothing else calls into them.  Only this layer prints errors and
 * decides exit codes: one line on stderr, "attnviz: error: WHAT (HOW TO FIX)",
 * exit status 1 for bad input, 2 for usage.
 *
 * Every subcommand reads its options the same way: cli_is_help for --help/-h,
 * cli_take_option for "--name VALUE" / "--name=VALUE", cli_take_long and
 * cli_take_double for numbers with their range, cli_unknown_option for
 * anything else. */
#ifndef ATTNVIZ_CLI_H
#define ATTNVIZ_CLI_H
#include "core/fileio.h"
#include "core/outdir.h"
#include <stddef.h>

#define ATTNVIZ_VERSION "0.1.0"

int cli_run(int argc, char **argv);         /* run.c: the model on your sentences     */
int cli_steps(int argc, char **argv);       /* steps.c: one attention, step by step   */
int cli_demo(int argc, char **argv);        /* demo.c: the lesson in pictures         */
int cli_corpus(int argc, char **argv);      /* corpus.c: the training corpus          */
int cli_train(int argc, char **argv);       /* train.c: training                      */
int cli_eval(int argc, char **argv);        /* eval.c: measuring a model              */
int cli_info(int argc, char **argv);        /* info.c: a model file's configuration   */
int cli_model_init(int argc, char **argv);  /* model_init.c: an untrained model file  */
int cli_forward(int argc, char **argv);     /* forward.c: the raw forward (tests)     */
int cli_tokenize(int argc, char **argv);    /* tokenize.c: a GPT-2/BERT tokenizer     */
int cli_generate(int argc, char **argv);    /* generate.c: a decoder writes, KV cache */
int cli_compare(int argc, char **argv);     /* compare.c: two sentences or models     */
int cli_worksheet(int argc, char **argv);   /* worksheet.c: exercises with a key      */
int cli_view(int argc, char **argv);        /* view.c: weights computed anywhere      */

/* Prints "attnviz: error: <fmt>" + newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Creates DIR (and parents) if missing and checks it is writable.  0 or -1 (message printed). */
int cli_prepare_outdir(const char *dir);

/* Output written through a staging folder (fileio.h's OutStage): checks DIR
 * like cli_prepare_outdir and opens the stage; write under st->dir.  While it
 * is open, messages name DIR instead of the staging folder.  0 or -1 (printed). */
int cli_stage_open(OutStage *st, const char *dir);
/* --out DIR checked before any work (core/outdir.h's outdir_check: not a
 * file, not "/", not the home folder or a folder holding files attnviz did
 * not write unless --force, not a link to nowhere).  0, or -1 (printed);
 * cli_stage_open checks it again.  While a stage is open, SIGINT, SIGTERM and
 * SIGHUP remove it before the process ends. */
int cli_check_out(const char *dir);
/* --force: write into a folder that holds other files (never removing them)
 * or into the home folder. */
void cli_set_force(int force);
/* ok: moves the staged files into DIR; else removes them (nothing new is
 * left).  0 when committed, -1 otherwise (an error while committing is printed). */
int cli_stage_close(OutStage *st, int ok);

/* --quiet: warnings are not printed either (errors always are). */
void cli_set_quiet(int quiet);

/* 1 if arg is --help or -h. */
int cli_is_help(const char *arg);
/* --to LANG in any case ("FR", "Vi"): *to becomes "fr" or "vi".  0, or -1
 * after cli_error naming the languages. */
int cli_target_language(const char **to);

/* An option that takes a value: --name VALUE or --name=VALUE. */
typedef struct { const char *name; const char **dst; } CliOption;
/* If argv[*i] is one of opts, stores its value (advancing *i past it) and
 * returns 1; 0 if it is none of them; -1 after printing an error when the
 * value is missing (a following "--flag" does not count as a value). */
int cli_take_option(int argc, char **argv, int *i, const CliOption *opts, int n, const char *cmd);

/* Numeric options, range-checked: "--name expects an integer in LO..HI, got 'X'". */
typedef struct { const char *name; long *dst; long lo, hi; } CliLong;
typedef struct { const char *name; double *dst; double lo, hi; } CliDouble;
/* As cli_take_option, then the value is converted into *dst; -1 (printed) when it is not a number in range. */
int cli_take_long(int argc, char **argv, int *i, const CliLong *opts, int n, const char *cmd);
int cli_take_double(int argc, char **argv, int *i, const CliDouble *opts, int n, const char *cmd);
/* The conversions themselves.  0, or -1 after printing the error. */
int cli_parse_long(const char *opt, const char *s, long lo, long hi, long *out);
int cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out);

/* Prints "unknown option 'ARG' for CMD (see attnviz CMD --help)" (or "unexpected
 * argument" when ARG is not an option) and returns 2, the usage exit status. */
int cli_unknown_option(const char *cmd, const char *arg);

#endif
