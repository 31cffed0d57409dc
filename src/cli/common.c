/* common.c — what every subcommand shares: error lines, output folders, options (cli.h). */
#include "cli/cli.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_error(const char *fmt, ...) {
    va_list ap;
    fputs("attnviz: error: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_warn(const char *fmt, ...) {
    va_list ap;
    fputs("attnviz: warning: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* mkdir -p */
static int make_dirs(const char *dir) {
    char path[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) { errno = ENAMETOOLONG; return -1; }
    memcpy(path, dir, n + 1);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
    return 0;
}

int cli_prepare_outdir(const char *dir) {
    struct stat st;
    if (!dir || !*dir) { cli_error("--out needs a folder name"); return -1; }
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            cli_error("--out %s is a file, not a folder (choose another --out)", dir);
            return -1;
        }
    } else if (make_dirs(dir) != 0) {
        cli_error("cannot create output folder %s: %s (choose another --out)", dir, strerror(errno));
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        cli_error("cannot write to output folder %s: %s (choose another --out)", dir, strerror(errno));
        return -1;
    }
    return 0;
}

int cli_is_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_take_option(int argc, char **argv, int *i, const CliOption *opts, int n, const char *cmd) {
    const char *arg = argv[*i];
    for (int o = 0; o < n; o++) {
        size_t len = strlen(opts[o].name);
        if (strncmp(arg, opts[o].name, len) != 0) continue;
        if (arg[len] == '=') { *opts[o].dst = arg + len + 1; return 1; }
        if (arg[len] != '\0') continue;
        if (*i + 1 >= argc || !strncmp(argv[*i + 1], "--", 2)) {
            cli_error("%s needs a value (see attnviz %s --help)", opts[o].name, cmd);
            return -1;
        }
        *opts[o].dst = argv[++*i];
        return 1;
    }
    return 0;
}

int cli_parse_long(const char *opt, const char *s, long lo, long hi, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        cli_error("%s expects an integer in %ld..%ld, got '%s'", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        cli_error("%s expects a number in %g..%g, got '%s'", opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_take_long(int argc, char **argv, int *i, const CliLong *opts, int n, const char *cmd) {
    for (int o = 0; o < n; o++) {
        const char *val = NULL;
        CliOption one = {opts[o].name, &val};
        int taken = cli_take_option(argc, argv, i, &one, 1, cmd);
        if (taken <= 0) { if (taken < 0) return -1; continue; }
        return cli_parse_long(opts[o].name, val, opts[o].lo, opts[o].hi, opts[o].dst) ? -1 : 1;
    }
    return 0;
}

int cli_take_double(int argc, char **argv, int *i, const CliDouble *opts, int n, const char *cmd) {
    for (int o = 0; o < n; o++) {
        const char *val = NULL;
        CliOption one = {opts[o].name, &val};
        int taken = cli_take_option(argc, argv, i, &one, 1, cmd);
        if (taken <= 0) { if (taken < 0) return -1; continue; }
        return cli_parse_double(opts[o].name, val, opts[o].lo, opts[o].hi, opts[o].dst) ? -1 : 1;
    }
    return 0;
}

int cli_unknown_option(const char *cmd, const char *arg) {
    if (arg[0] == '-') cli_error("unknown option '%s' for %s (see attnviz %s --help)", arg, cmd, cmd);
    else cli_error("unexpected argument '%s' for %s (see attnviz %s --help)", arg, cmd, cmd);
    return 2;
}
