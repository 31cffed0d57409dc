/* worksheet.c — `attnviz worksheet`: printable exercises on attention with
 * their answer key (pipeline/worksheet.h), into --out through a staging
 * folder, so a failure leaves the folder as it was. */
#include "cli/cli.h"
#include "render/render.h"
#include "pipeline/worksheet.h"
#include <stdio.h>
#include <string.h>

typedef struct {
    long seed, size;
    const char *mask, *lang, *out;
    int quiet;
} WorksheetArgs;

static void worksheet_usage(FILE *f) {
    fputs(
        "usage: attnviz worksheet [--seed S] [--size N] [--mask none|causal] [--lang en|vi] [--out DIR]\n\n"
        "Printable exercises on scaled dot-product attention with small integers:\n"
        "  scores = Q·Kᵀ, scaled = ÷√d_k (d_k = 4), + mask, softmax to 2 decimals, · V\n"
        "with empty boxes to fill, and the answer key computed by attnviz's attention engine.\n\n"
        "  --seed S          which exercises (default 1); the same seed gives the same files\n"
        "  --size N          tokens per exercise, 1..8 (default 3)\n"
        "  --mask M          none (default) or causal (a query sees itself and earlier tokens)\n"
        "  --lang L          en (default) or vi\n"
        "  --out DIR         output folder (default output/worksheet/)\n"
        "  --force           write into a folder that holds other files (kept, never\n"
        "                    removed), or into your home folder\n"
        "  --slide           every picture exactly 1920 x 1080 (a 16:9 slide)\n"
        "  --quiet           print only errors\n\n"
        "Writes worksheet.png, key.png, worksheet.html (A4, the key on its own page; print\n"
        "it from a browser) and worksheet.json (q, k, v, mask and the answers of each exercise).\n\n"
        "Example:\n"
        "  attnviz worksheet --seed 7 --size 4 --mask causal --lang vi\n",
        f);
}

/* 0 to go on, 1 after --help, -1 after an error (printed). */
static int parse_args(WorksheetArgs *a, int argc, char **argv) {
    *a = (WorksheetArgs){.seed = 1, .size = 3, .mask = "none", .lang = "en", .out = "output/worksheet"};
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--mask", &a->mask}, {"--lang", &a->lang}, {"--out", &a->out}};
        const CliLong longs[] = {{"--seed", &a->seed, 0, 4294967295L}, {"--size", &a->size, 1, WORKSHEET_MAX_SIZE}};
        int taken = cli_take_option(argc, argv, &i, opts, 3, "worksheet");
        if (!taken) taken = cli_take_long(argc, argv, &i, longs, 2, "worksheet");
        if (taken < 0) return -1;
        if (taken) continue;
        if (cli_is_help(argv[i])) { worksheet_usage(stdout); return 1; }
        if (!strcmp(argv[i], "--slide")) { render_set_slide(1); continue; }
        if (!strcmp(argv[i], "--quiet")) { a->quiet = 1; continue; }
        if (!strcmp(argv[i], "--force")) { cli_set_force(1); continue; }
        cli_unknown_option("worksheet", argv[i]);
        return -1;
    }
    if (strcmp(a->mask, "none") && strcmp(a->mask, "causal")) {
        cli_error("--mask '%s' must be none or causal", a->mask);
        return -1;
    }
    if (strcmp(a->lang, "en") && strcmp(a->lang, "vi")) {
        cli_error("--lang '%s' must be en or vi", a->lang);
        return -1;
    }
    return 0;
}

int cli_worksheet(int argc, char **argv) {
    WorksheetArgs a;
    int rc = parse_args(&a, argc, argv);
    if (rc != 0) return rc > 0 ? 0 : 2;
    char command[512], err[1024];
    snprintf(command, sizeof command, "attnviz worksheet --seed %ld --size %ld --mask %s --lang %s", a.seed, a.size,
             a.mask, a.lang);
    WorksheetSpec spec = {.seed = (uint64_t)a.seed, .size = (int)a.size, .causal = !strcmp(a.mask, "causal"),
                          .vi = !strcmp(a.lang, "vi"), .command = command};
    static Worksheet w;
    if (worksheet_make(&w, &spec, err, sizeof err) != 0) {
        cli_error("%s", err);
        worksheet_free(&w);
        return 1;
    }
    OutStage stage;
    int status = 1;
    if (cli_stage_open(&stage, a.out) == 0) {
        int ok = worksheet_write(&w, stage.dir, err, sizeof err) == 0;
        if (!ok) cli_error("%s", err);
        if (cli_stage_close(&stage, ok) == 0 && ok) status = 0;
    }
    if (status == 0 && !a.quiet)
        printf("worksheet (%d exercises, %ld tokens, mask %s, %s): worksheet.png, key.png, worksheet.html, "
               "worksheet.json in %s/\n", w.n_ex, a.size, a.mask, a.lang, a.out);
    worksheet_free(&w);
    return status;
}
