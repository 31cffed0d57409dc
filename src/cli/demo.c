/* demo.c — `attnviz demo`: the whole lesson as pictures, in order, + index.html.
 * The lesson itself is demo/demo.h; this file reads the options, prepares
 * the folder, prints the warnings, the error or the summary. */
#include "cli/cli.h"
#include "demo/demo.h"
#include "render/render.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static void demo_usage(FILE *f) {
    fputs("usage: attnviz demo [--out DIR] [--force] [--model PATH] [--slide] [--quiet]\n\n"
          "Renders the whole lesson into DIR (default output/), in order, with an\n"
          "index.html that shows every picture with its caption (English and\n"
          "Vietnamese) and the attnviz command that reproduces it:\n"
          "  1 attention step by step   2 why divide by √d_k   3 masking\n"
          "  4 multi-head split/concat  5 the three kinds of attention\n"
          "  6 coreference (it → animal / street)   7 positional encoding\n"
          "  8 the Vietnamese example   9 a head learning (training snapshots)\n\n"
          "  --model PATH   checkpoint (default: the shipped model, see attnviz info)\n"
          "  --out DIR      output folder (default output/)\n"
          "  --force        write into a folder that holds other files (kept, never\n"
          "                 removed), or into your home folder\n"
          "  --slide        every picture exactly 1920 x 1080 (a 16:9 slide), scaled to fit\n"
          "  --quiet        print only warnings and errors\n",
          f);
}

/* 0 to go on, 1 after --help, -1 after an error (printed). */
static int parse_args(Demo *d, int *quiet, int argc, char **argv) {
    d->out = "output";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const CliOption opts[] = {{"--out", &d->out}, {"--model", &d->model_arg}};
        int taken = cli_take_option(argc, argv, &i, opts, 2, "demo");
        if (taken < 0) return -1;
        if (taken) continue;
        if (cli_is_help(a)) { demo_usage(stdout); return 1; }
        if (!strcmp(a, "--quiet")) { *quiet = 1; continue; }
        if (!strcmp(a, "--force")) { cli_set_force(1); continue; }
        if (!strcmp(a, "--slide")) { render_set_slide(1); continue; }
        cli_error("unknown %s '%s' for demo (see attnviz demo --help)", a[0] == '-' ? "option" : "argument", a);
        return -1;
    }
    return 0;
}

/* Each collected warning as "attnviz: warning: …". */
static void print_warnings(const Demo *d) {
    const char *p = d->warnings;
    while (*p) {
        const char *nl = strchr(p, '\n');
        int len = nl ? (int)(nl - p) : (int)strlen(p);
        cli_warn("%.*s", len, p);
        p += len + (nl ? 1 : 0);
    }
}

/* What was written, part by part. */
static void print_summary(const Demo *d, double sec) {
    fputs(d->report, stdout);
    printf("demo: %d pictures, %d trace files and index.html in %s/ (%.2f s)\n", d->n_images, d->n_traces, d->out, sec);
    int part = 0;
    for (int i = 0; i < d->n_images; i++) {
        int p = atoi(d->images[i] + 1);   /* "p10-…" → 10 */
        if (p != part) { printf("%s  part %d:", part ? "\n" : "", p); part = p; }
        printf(" %s", d->images[i]);
    }
    printf("\n  open %s/index.html in a browser\n", d->out);
    if (d->n_warnings) printf("  %d warning(s) above\n", d->n_warnings);
}

int cli_demo(int argc, char **argv) {
    static Demo d;   /* large (image list, paths); one per process */
    memset(&d, 0, sizeof d);
    int quiet = 0;
    int rc = parse_args(&d, &quiet, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    if (cli_check_out(d.out) != 0) return 1;   /* before loading a model */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
#ifdef _OPENMP
    /* Every matrix of the demo is tiny (one sentence, d_model ≤ a few hundred):
     * OpenMP's waiting threads cost more than they save (measured on 2 busy
     * cores: 2.0 s with threads, 0.55 s without). */
    omp_set_num_threads(1);
#endif
    int status = 1;
    if (demo_load(&d) != 0) { cli_error("%s", d.err); goto cleanup; }
    OutStage stage;   /* every file goes to a staging folder first: a failure leaves --out as it was */
    if (cli_stage_open(&stage, d.out) != 0) goto cleanup;
    const char *out = d.out;
    d.out = stage.dir;
    int r = demo_render(&d);
    d.out = out;
    print_warnings(&d);
    if (r != 0) cli_error("%s", d.err);
    if (cli_stage_close(&stage, r == 0) != 0) goto cleanup;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (!quiet) print_summary(&d, (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    status = 0;
cleanup:
    demo_free(&d);
    return status;
}
