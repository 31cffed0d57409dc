/* cli.h — the subcommands of attnviz and the helpers they share.  Only this
 * layer prints errors and decides exit codes: one line on stderr,
 * "attnviz: error: WHAT (HOW TO FIX)", exit status 1 for bad input, 2 for usage. */
#ifndef ATTNVIZ_CLI_H
#define ATTNVIZ_CLI_H

#define ATTNVIZ_VERSION "0.1.0"

int cli_steps(int argc, char **argv);

/* Prints "attnviz: error: <fmt>" + newline on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Creates DIR (and parents) if missing and checks it is writable.  0 or -1 (message printed). */
int cli_prepare_outdir(const char *dir);

/* 1 if arg is --help or -h. */
int cli_is_help(const char *arg);

#endif
