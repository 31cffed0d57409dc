/* generate.c — `attnviz generate`: a decoder writes text one token at a time
 * with a KV cache (pipeline/generate.h); each step's token, candidates and
 * new attention row go to the trace, the pictures and the page.
 *
 *   attnviz generate --model DIR "prompt" [--steps N] [--temperature T]
 *                    [--top-k K] [--seed S] [--head MAP.H] [--out DIR]
 *   attnviz generate --model FILE.bin --tokenizer TOK.bin "prompt" …
 *   attnviz generate ["sentence"] [--model taught|untaught|FILE.safetensors] [--to fr|vi]
 *                    the bundled translator's own greedy decoding
 * Prints the prompt and what was written, and tokens per second. */
#include "cli/cli.h"
#include "core/memory.h"
#include "render/render.h"
#include "net/net.h"
#include "pipeline/generate.h"
#include "pipeline/head_roles.h"
#include "pipeline/head_roles_show.h"
#include "pipeline/look.h"
#include "pipeline/pictures_generate.h"
#include "trace/trace.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void generate_usage(FILE *f) {
    fputs("usage: attnviz generate --model DIR \"PROMPT\" [options]\n"
          "       attnviz generate --model FILE.bin --tokenizer TOK.bin \"PROMPT\" [options]\n\n"
          "A decoder (GPT-2, a Llama-family folder, a llama2.c checkpoint) continues PROMPT one\n"
          "token at a time with a KV cache: each step computes only the newest query's row in\n"
          "every layer and head.  Writes trace.json (the maps and a \"generation\" section), the\n"
          "pictures and index.html to --out, and prints the text and tokens per second.\n"
          "Without --model (or with taught, untaught, FILE.safetensors): attnviz's own translator\n"
          "writes its translation of the sentence, and the timeline shows its decoder's masked\n"
          "self-attention and cross-attention rows, one per written word (--to fr|vi).\n"
          "  --steps N          tokens to write (default 20; stops early at end of text)\n"
          "  --temperature T    0: greedy, the most likely token (default); T > 0: sample\n"
          "  --top-k K          candidates recorded per step, and sampled among (default 5)\n"
          "  --seed S           the sampling's seed (default 1): a seed always writes the same text\n"
          "  --head MAP.H       the head of the timeline, e.g. decoder.1.masked_self.3 or 1.3\n"
          "                     (default: the head whose newest rows look furthest back)\n"
          "  --trace none       no trace.json\n"
          "  --no-pictures      no pictures and no index.html (with --trace none nothing is written:\n"
          "                     the text and the speed only, as make bench runs it)\n"
          "  --out DIR          output folder (default output/generate)\n"
          "  --max-memory SIZE  refuse, before the first step, a generation whose rows would take\n"
          "                     more than SIZE (800M, 2G; default: the memory free now)\n"
          "  --force           write into a folder that holds other files (kept, never\n"
          "                    removed), or into your home folder\n"
          "  --head-roles       name what each head does (head_roles.png, trace.json's head_roles):\n"
          "                     previous token and sink on the text written, duplicate token and\n"
          "                     induction on a probe of random tokens repeated twice (docs/guide.md)\n"
          "  --probe-length N   the probe's n (default 20, shrunk to fit the context)\n"
          "  --probe-seed S     the probe's seed (default 1)\n"
          "  --attribution      the first written token's logit split into each head's, each MLP's\n"
          "                     and the embedding's share (attribution.png, trace.json's attribution);\n"
          "                     the translator: the first word it writes, masked-self and cross heads\n"
          "  --slide            every picture exactly 1920 x 1080 (a 16:9 slide)\n"
          "  --quiet            print nothing but errors\n", f);
}

typedef struct {
    const char *model, *tokenizer, *prompt, *out, *head, *trace, *to, *max_memory;
    long steps, top_k, seed, probe_length, probe_seed;
    double temperature;
    int quiet, no_pictures, head_roles, attribution;
} GenArgs;

/* 0 go on, 1 --help printed, -1 error printed (usage: 2). */
static int parse_args(GenArgs *a, int argc, char **argv) {
    memset(a, 0, sizeof *a);
    a->out = "output/generate";
    a->trace = "weights";
    a->to = "fr";
    a->steps = 20; a->top_k = 5; a->seed = 1; a->probe_seed = 1;
    for (int i = 1; i < argc; i++) {
        const CliOption opts[] = {{"--model", &a->model}, {"--tokenizer", &a->tokenizer}, {"--out", &a->out},
                                  {"--head", &a->head}, {"--trace", &a->trace}, {"--to", &a->to},
                                  {"--max-memory", &a->max_memory}};
        const CliLong longs[] = {{"--steps", &a->steps, 1, 1000000}, {"--top-k", &a->top_k, 1, 100000000},
                                 {"--seed", &a->seed, 0, 0x7fffffffffffffffL},
                                 {"--probe-length", &a->probe_length, 2, 100000},
                                 {"--probe-seed", &a->probe_seed, 0, 2147483647}};
        const CliDouble dbls[] = {{"--temperature", &a->temperature, 0, 1e6}};
        int taken = cli_take_option(argc, argv, &i, opts, 7, "generate");
        if (!taken) taken = cli_take_long(argc, argv, &i, longs, 5, "generate");
        if (!taken) taken = cli_take_double(argc, argv, &i, dbls, 1, "generate");
        if (taken < 0) return -1;
        if (taken) continue;
        if (cli_is_help(argv[i])) { generate_usage(stdout); return 1; }
        if (!strcmp(argv[i], "--quiet")) a->quiet = 1;
        else if (!strcmp(argv[i], "--force")) cli_set_force(1);
        else if (!strcmp(argv[i], "--no-pictures")) a->no_pictures = 1;
        else if (!strcmp(argv[i], "--slide")) render_set_slide(1);
        else if (!strcmp(argv[i], "--head-roles")) a->head_roles = 1;
        else if (!strcmp(argv[i], "--attribution")) a->attribution = 1;
        else if (argv[i][0] == '-' && argv[i][1]) { cli_unknown_option("generate", argv[i]); return -1; }
        else if (a->prompt) { cli_error("generate takes one prompt; got a second: '%s' (quote the prompt)", argv[i]); return -1; }
        else a->prompt = argv[i];
    }
    char err[256];
    if (a->max_memory && memory_set_limit(a->max_memory, err, sizeof err)) { cli_error("%s", err); return -1; }
    if (!a->prompt) { cli_error("generate needs a prompt: attnviz generate --model DIR \"Once upon a time\""); return -1; }
    if (cli_target_language(&a->to)) return -1;
    if (a->probe_length && !a->head_roles) {
        cli_error("--probe-length sets the probe of --head-roles; add --head-roles");
        return -1;
    }
    if (strcmp(a->trace, "weights") && strcmp(a->trace, "none")) {
        cli_error("--trace is 'weights' or 'none', got '%s'", a->trace);
        return -1;
    }
    return 0;
}

/* --head-roles, once measured: into tr, head_roles.png (what: the text) and
 * stdout.  0, or -1 (printed). */
static int head_roles_out(const HeadRoles *roles, const GenArgs *a, const char *dir, Trace *tr, const char *model,
                          const char *what) {
    char err[1024], path[4096];
    if (trace_take_section(tr, "head_roles", head_roles_json(roles))) {
        cli_error("out of memory (head roles)");
        return -1;
    }
    if (!a->quiet) {
        char text[4096];
        head_roles_summary(roles, 3, text, sizeof text);
        printf("head roles (the 3 highest scores of each; head_roles.png):\n%s", text);
    }
    if (a->no_pictures) return 0;
    RenderMetaItem items[] = {{"Title", "head roles"}, {"Model", model}, {"Sentence", what}};
    RenderMeta meta = {items, 3};
    if (path_join(path, sizeof path, dir, "head_roles.png", err, sizeof err) ||
        head_roles_draw(path, roles, what, &meta, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    if (trace_add_image(tr, "head_roles.png")) { cli_error("out of memory (trace)"); return -1; }
    return 0;
}

/* --head-roles of a decoder: measured on the written text's maps (tr) and on
 * the probe (a pass of its own, after generation).  0, or -1 (printed). */
static int add_head_roles(HeadRoles *roles, const Generation *g, Net *n, const GenArgs *a, const char *dir,
                          Trace *tr) {
    char err[1024];
    if (head_roles_measure(roles, n, tr, g->n, (uint64_t)a->probe_seed, (int)a->probe_length, err, sizeof err)) {
        cli_error("--head-roles: %s", err);
        return -1;
    }
    char what[1200];   /* the maps are of the prompt and what was written */
    snprintf(what, sizeof what, "%s … (+ the %d tokens written)", g->prompt, g->n_steps);
    return head_roles_out(roles, a, dir, tr, net_path(n), what);
}

/* The trace, pictures and page into dir.  0, or -1 (printed). */
static int write_outputs(const Generation *g, Net *n, const GenArgs *a, const Attribution *at, const char *dir) {
    char err[1024], path[4096], mj[2048];
    Trace tr;
    trace_init(&tr);
    HeadRoles roles = {0};
    int rc = -1;
    net_json(n, mj, sizeof mj);
    if (trace_set_model_json(&tr, mj) || generate_trace(g, &tr)) { cli_error("out of memory (trace)"); goto done; }
    if (a->head_roles && add_head_roles(&roles, g, n, a, dir, &tr)) goto done;
    if (at && trace_take_section(&tr, "attribution", attribution_json(at))) { cli_error("out of memory (trace)"); goto done; }
    GenPictureSpec ps = {.dir = dir, .head = a->head, .model_name = net_path(n), .head_roles = a->head_roles,
                          .trace = &tr, .attribution = at};
    GenPictureReport rep = {0};
    if (!a->no_pictures && pictures_generate(g, &ps, &rep, err, sizeof err)) { cli_error("%s", err); goto done; }
    if (!strcmp(a->trace, "none")) { rc = 0; goto done; }
    rc = 0;
    for (int i = 0; !rc && i < rep.n_images; i++) rc = trace_add_image(&tr, rep.images[i]);
    if (rc) cli_error("out of memory (trace)");
    else if ((rc = path_join(path, sizeof path, dir, "trace.json", err, sizeof err))) cli_error("%s", err);
    else if ((rc = trace_write_json(&tr, path, err, sizeof err))) cli_error("%s", err);
done:
    head_roles_free(&roles);
    trace_free(&tr);
    return rc ? -1 : 0;
}

static void print_generation(const Generation *g) {
    printf("prompt (%d tokens): %s\n", g->n_prompt, g->prompt);
    printf("written (%d tokens, %s%s):%s%s\n", g->n_steps, g->temperature > 0 ? "sampled" : "greedy",
           g->stopped ? ", stopped at end of text" : "", g->text[0] == ' ' ? "" : " ", g->text);
    printf("speed: %.1f tokens/s (%d steps with a KV cache, %.2f ms each; CPU time %.1f tokens/s)\n",
           generate_tokens_per_s(g), g->n_steps, g->n_steps ? g->seconds * 1e3 / g->n_steps : 0.0,
           g->cpu_seconds > 0 ? g->n_steps / g->cpu_seconds : 0.0);
    size_t end = generate_kv_bytes(g, g->n_steps > 0 ? g->n_steps - 1 : 0);   /* kv-cache.png's last point */
    printf("KV cache: %zu bytes per token (%zu without grouped-query attention), %zu bytes (%.2f KiB) after the last "
           "step\n", g->kv_per_token, g->kv_per_token_mha, end, end / 1024.0);
}

/* The translator's pictures, page and trace into dir.  0, or -1 (printed). */
static int write_translation(Look *L, Net *n, const GenArgs *a, const Attribution *at, const char *dir, int layer,
                             int head) {
    char err[1024], text[2200], path[4096];
    snprintf(text, sizeof text, "%s\n→ %s", a->prompt, L->s.translation);
    GenTranslationSpec ts = {.dir = dir, .model_name = net_path(n), .text = text, .layer = layer, .self_head = head,
                             .cross_head = head, .head_roles = a->head_roles,
                             .trace = &L->t, .attribution = at};
    GenPictureReport rep;
    if (a->head_roles) {   /* after the translation: the probe is a pass of its own */
        HeadRoles roles = {0};
        int bad = head_roles_measure(&roles, n, &L->t, 0, (uint64_t)a->probe_seed, (int)a->probe_length, err,
                                           sizeof err);
        if (bad) cli_error("--head-roles: %s", err);
        else bad = head_roles_out(&roles, a, dir, &L->t, net_path(n), a->prompt);
        head_roles_free(&roles);
        if (bad) return -1;
    }
    if (pictures_generate_translation(&L->t, &ts, &rep, err, sizeof err)) { cli_error("%s", err); return -1; }
    if (!strcmp(a->trace, "none")) return 0;
    int rc = 0;
    for (int i = 0; !rc && i < rep.n_images; i++) rc = trace_add_image(&L->t, rep.images[i]);
    if (rc) { cli_error("out of memory (trace)"); return -1; }
    if (path_join(path, sizeof path, dir, "trace.json", err, sizeof err) ||
        trace_write_json(&L->t, path, err, sizeof err)) {
        cli_error("%s", err);
        return -1;
    }
    return 0;
}

/* The translator writing its greedy translation, drawn as a timeline. */
static int generate_translator(const GenArgs *a, Net *n) {
    Look L;
    char err[1024];
    int status = 1, layer, head;
    memset(&L, 0, sizeof L);
    Attribution at = {0};
    if (generate_translator_head(n, a->head, &layer, &head, err, sizeof err)) { cli_error("%s", err); goto done; }
    if (generate_translation(&L, n, a->prompt, !strcmp(a->to, "vi"), err, sizeof err)) { cli_error("%s", err); goto done; }
    if (a->attribution && generate_translation_attribution(&at, n, &L, err, sizeof err)) { cli_error("%s", err); goto done; }
    OutStage stage;
    if (cli_stage_open(&stage, a->out) != 0) goto done;
    int ok = write_translation(&L, n, a, a->attribution ? &at : NULL, stage.dir, layer, head) == 0;
    if (cli_stage_close(&stage, ok) != 0 || !ok) goto done;
    if (!a->quiet) {
        printf("source: %s\nwritten (greedy, one word per step): %s\n", a->prompt, L.s.translation);
        printf("timeline of decoder layer %d head %d (masked self-attention and cross-attention) in %s/\n", layer,
               head, a->out);
        if (a->attribution) attribution_print(&at, stdout);
    }
    status = 0;
done:
    attribution_free(&at);
    look_free(&L);
    return status;
}

/* A decoder writing one token at a time with a KV cache. */
static int generate_decoder(const GenArgs *a, Net *n) {
    char err[1024];
    GenSpec spec = {.prompt = a->prompt, .steps = (int)a->steps, .temperature = a->temperature, .top_k = (int)a->top_k,
                    .seed = (unsigned long long)a->seed};
    Generation g;
    Attribution at = {0};
    int status = 1;
    if (generate_run(&g, n, &spec, err, sizeof err)) { cli_error("%s", err); goto done; }
    if (a->attribution && generate_attribution(&at, n, &g, err, sizeof err)) { cli_error("%s", err); goto done; }
    int writes = !a->no_pictures || strcmp(a->trace, "none") || a->head_roles;
    if (writes) {
        OutStage stage;   /* a failure leaves --out as it was */
        if (cli_stage_open(&stage, a->out) != 0) goto done;
        int ok = write_outputs(&g, n, a, a->attribution ? &at : NULL, stage.dir) == 0;
        if (cli_stage_close(&stage, ok) != 0 || !ok) goto done;
    }
    if (!a->quiet) {
        print_generation(&g);
        if (a->attribution) attribution_print(&at, stdout);
        if (writes)
            printf("%s%s in %s/\n", a->no_pictures ? "" : "pictures and index.html",
                   strcmp(a->trace, "none") ? (a->no_pictures ? "trace.json" : ", trace.json") : "", a->out);
    }
    status = 0;
done:
    attribution_free(&at);
    generation_free(&g);
    return status;
}

int cli_generate(int argc, char **argv) {
    GenArgs a;
    int p = parse_args(&a, argc, argv);
    if (p) return p > 0 ? 0 : 2;
    char err[1024];
    Net n;
    int rc = net_open(&n, a.model, a.tokenizer, NET_OPEN_MODEL, err, sizeof err);
    if (rc) { cli_error("%s", err); return rc == -2 ? 2 : 1; }
    int status = n.caps & NET_TRANSLATES ? generate_translator(&a, &n) : generate_decoder(&a, &n);
    net_free(&n);
    return status;
}
