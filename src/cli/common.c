/* common.c — what every subcommand shares: error lines, output folders, options (cli.h). */
#include "cli/cli.h"
#include "tokenize/tokenizer.h"
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The staging folder of the output being written and the folder the user
 * named: messages show the latter (cli_stage_open). */
static char stage_dir[4096], stage_target[4096];
static int quiet_warnings;

/* Writes s as one line: the staging folder shown as the user's folder, bytes
 * that are not UTF-8 as \xNN, control characters (newlines too) as spaces. */
static void put_clean(const char *s, FILE *f) {
    size_t sl = strlen(stage_dir);
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    while (*p) {
        if (sl && !strncmp((const char *)p, stage_dir, sl)) { fputs(stage_target, f); p += sl; continue; }
        int len = tokenizer_utf8_len(s, n, (size_t)(p - (const unsigned char *)s));
        if (!len) { fprintf(f, "\\x%02X", *p++); continue; }
        if (len == 1 && (*p < 0x20 || *p == 0x7F)) { fputc(' ', f); p++; continue; }
        fwrite(p, 1, (size_t)len, f);
        p += len;
    }
}

/* "attnviz: KIND: message" on stderr, one line. */
static void say(const char *kind, const char *fmt, va_list ap) {
    char buf[8192];
    vsnprintf(buf, sizeof buf, fmt, ap);
    fprintf(stderr, "attnviz: %s: ", kind);
    put_clean(buf, stderr);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    say("error", fmt, ap);
    va_end(ap);
}

void cli_set_quiet(int quiet) { quiet_warnings = quiet; }

void cli_warn(const char *fmt, ...) {
    if (quiet_warnings) return;
    va_list ap;
    va_start(ap, fmt);
    say("warning", fmt, ap);
    va_end(ap);
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

static int force_out;
void cli_set_force(int force) { force_out = force; }

int cli_check_out(const char *dir) {
    char err[1024];
    if (outdir_check(dir, force_out, err, sizeof err) != 0) { cli_error("%s", err); return -1; }
    return 0;
}

/* The staging folder open now: a SIGINT, SIGTERM or SIGHUP removes it (and the
 * parents it made), then ends the process as the signal would have. */
static OutStage *volatile live_stage;

static void on_signal(int sig) {
    outstage_abort_now(live_stage);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void watch_signals(OutStage *st) {
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    live_stage = st;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = st ? on_signal : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

int cli_stage_open(OutStage *st, const char *dir) {
    char err[1024];
    memset(st, 0, sizeof *st);
    watch_signals(st);   /* before the folder exists: mkdtemp fills st->dir in place */
    if (outstage_open(st, dir, force_out, err, sizeof err) != 0) {
        watch_signals(NULL);
        cli_error("%s%s", err, strstr(err, "--out") ? "" : " (choose another --out)");
        return -1;
    }
    snprintf(stage_dir, sizeof stage_dir, "%s", st->dir);
    snprintf(stage_target, sizeof stage_target, "%s", st->target);
    return 0;
}

int cli_stage_close(OutStage *st, int ok) {
    char err[1024];
    int rc = 0;
    if (ok) rc = outstage_commit(st, err, sizeof err);
    else outstage_abort(st);
    watch_signals(NULL);
    if (rc != 0) cli_error("%s", err);
    stage_dir[0] = stage_target[0] = '\0';
    return ok && rc == 0 ? 0 : -1;
}

int cli_is_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_target_language(const char **to) {
    if (!strcasecmp(*to, "fr") || !strcasecmp(*to, "vi")) {
        *to = tolower((unsigned char)**to) == 'f' ? "fr" : "vi";
        return 0;
    }
    cli_error("--to '%s' is not a target language this model knows (use fr or vi)", *to);
    return -1;
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

/* If argv[*i] is the option named name(k) for some k < n, its value into *val
 * and k is returned; -1: none of them; -2: the value is missing (printed). */
static int take_named(int argc, char **argv, int *i, const char *(*name)(const void *, int), const void *opts, int n,
                      const char *cmd, const char **val) {
    for (int k = 0; k < n; k++) {
        CliOption one = {name(opts, k), val};
        int taken = cli_take_option(argc, argv, i, &one, 1, cmd);
        if (taken) return taken < 0 ? -2 : k;
    }
    return -1;
}

static const char *long_name(const void *opts, int k) { return ((const CliLong *)opts)[k].name; }
static const char *double_name(const void *opts, int k) { return ((const CliDouble *)opts)[k].name; }

int cli_take_long(int argc, char **argv, int *i, const CliLong *opts, int n, const char *cmd) {
    const char *val = NULL;
    int k = take_named(argc, argv, i, long_name, opts, n, cmd, &val);
    if (k < 0) return k == -1 ? 0 : -1;
    return cli_parse_long(opts[k].name, val, opts[k].lo, opts[k].hi, opts[k].dst) ? -1 : 1;
}

int cli_take_double(int argc, char **argv, int *i, const CliDouble *opts, int n, const char *cmd) {
    const char *val = NULL;
    int k = take_named(argc, argv, i, double_name, opts, n, cmd, &val);
    if (k < 0) return k == -1 ? 0 : -1;
    return cli_parse_double(opts[k].name, val, opts[k].lo, opts[k].hi, opts[k].dst) ? -1 : 1;
}

int cli_unknown_option(const char *cmd, const char *arg) {
    if (arg[0] == '-') cli_error("unknown option '%s' for %s (see attnviz %s --help)", arg, cmd, cmd);
    else cli_error("unexpected argument '%s' for %s (see attnviz %s --help)", arg, cmd, cmd);
    return 2;
}
