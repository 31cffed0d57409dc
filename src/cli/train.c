/* cli_train.c — `attnviz train` and `attnviz eval`: the model's life cycle.
 *
 *   attnviz train [--corpus DIR] [--out PATH] [--seed N] [--steps N | --epochs N] …
 *   attnviz eval  [--model PATH] [--corpus DIR] [--split NAME] [--json] [--limit N] [--write-metadata]
 *
 * Both only parse, call train.h / eval.h, and print. */
#include "cli/cli.h"
#include "model/checkpoint.h"
#include "lesson/eval.h"
#include "model/model.h"
#include "model/tokenizer.h"
#include "lesson/train.h"
#include "pipeline/model_file.h"
#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The two sentences of the lesson's coreference picture (snapshots). */
static const char *const SNAP_SENTENCES[] = {
    "the animal didn't cross the street because it was too tired .",
    "the animal didn't cross the street because it was too wide .",
};
#define N_SNAP_SENTENCES 2

static int parse_long(const char *opt, const char *s, long lo, long hi, long *out) {
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

static int parse_double(const char *opt, const char *s, double lo, double hi, double *out) {
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

static void train_usage(FILE *f) {
    fprintf(f,
        "usage: attnviz train [options]\n\n"
        "Trains the encoder-decoder model on a corpus written by `attnviz corpus`\n"
        "(DIR/train.tsv and DIR/vocab.txt) and writes a checkpoint (safetensors) plus\n"
        "PATH.state (Adam moments and step, for --resume).\n\n"
        "  --corpus DIR          corpus folder (default build/corpus)\n"
        "  --out PATH            checkpoint to write (default output/" MODEL_FILE_DEFAULT_NAME ")\n"
        "  --seed N              initialisation and data order (default 1)\n"
        "  --steps N | --epochs N  length of training (default 6000 steps)\n"
        "  --batch N             sentences per batch (default 64)\n"
        "  --lr X                peak learning rate (default 2e-3)\n"
        "  --min-lr-frac X       final learning rate as a fraction of --lr (default 0.05)\n"
        "  --warmup N            warm-up steps (default 300), then cosine decay\n"
        "  --clip X              gradient-norm clip (default 1; 0 = none)\n"
        "  --d-model N --heads N --layers N --d-ff N --prenorm\n"
        "                        model size (default 96, 4, 2, 256, post-norm);\n"
        "                        --enc-layers / --dec-layers set the stacks separately\n"
        "  --max-len N           longest sequence the model accepts (default 64)\n"
        "  --label-smoothing E   (default 0.05)\n"
        "  --dropout P           dropout rate, 0 <= P < 1 (default 0 = none): during\n"
        "                        training only, on every sub-layer output before the\n"
        "                        residual add and on embeddings + positional encoding\n"
        "                        (inverted: kept units scaled by 1/(1-P)); masks are\n"
        "                        seeded from --seed and the step\n"
        "  --resume PATH         continue from a checkpoint and PATH.state\n"
        "  --snapshots           record the encoder attention of the coreference\n"
        "                        sentences at 6 points into PATH minus .safetensors\n"
        "                        plus .snapshots.json\n"
        "  --checkpoint-every N  also write the checkpoint every N steps\n"
        "  --supervise-coref W   off by default (the documented fallback when no head\n"
        "                        learns the link): add W · mean -log(attention of the\n"
        "                        pronoun to its gold antecedent) on one encoder head,\n"
        "                        backpropagated through the whole network\n"
        "  --coref-head encoder.L.self.H   that head (default: last encoder layer, head 0)\n"
        "  --supervise-align W   off by default: add W · cross-entropy between one\n"
        "                        cross-attention head's row t and the uniform distribution\n"
        "                        over the gold source words of target token t (Garg et al. 2019)\n"
        "  --align-head decoder.L.cross.H  that head (default: last decoder layer, head 0)\n"
        "  --eval-limit N        after training, evaluate the first N pairs of\n"
        "                        DIR/heldout.tsv and record the best coreference head\n"
        "                        in the checkpoint (default 400; 0 = skip)\n"
        "  --quiet               no progress output\n");
}

/* "encoder.L.self.H" / "decoder.L.cross.H" → layer, head (range checked later). */
static int parse_head(const char *opt, const char *s, const char *stack, const char *kind, long *layer, long *head) {
    char fmt[64];
    int l, h, n = -1;
    snprintf(fmt, sizeof fmt, "%s.%%d.%s.%%d%%n", stack, kind);
    if (sscanf(s, fmt, &l, &h, &n) != 2 || n < 0 || s[n] || l < 0 || h < 0) {
        cli_error("%s expects %s.LAYER.%s.HEAD (e.g. %s.1.%s.0), got '%s'", opt, stack, kind, stack, kind, s);
        return -1;
    }
    *layer = l; *head = h;
    return 0;
}

static char *join_args(const char *first, int argc, char **argv) {
    size_t n = strlen(first) + 1;
    for (int i = 1; i < argc; i++) n += strlen(argv[i]) + 3;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    strcpy(s, first);
    for (int i = 1; i < argc; i++) {
        strcat(s, " ");
        if (strchr(argv[i], ' ')) { strcat(s, "'"); strcat(s, argv[i]); strcat(s, "'"); }
        else strcat(s, argv[i]);
    }
    return s;
}

int cli_train(int argc, char **argv) {
    const char *corpus = "build/corpus", *out = "output/" MODEL_FILE_DEFAULT_NAME, *resume = NULL;
    long seed = 1, steps = -1, epochs = -1, batch = 64, warmup = 300, ckpt_every = 0;
    long d_model = 96, heads = 4, enc_layers = 2, dec_layers = 2, d_ff = 256, max_len = 64;
    double lr = 2e-3, min_lr_frac = 0.05, clip = 1.0, ls = 0.05, dropout = 0, sup = 0, sup_align = 0;
    long coref_layer = -1, coref_head = 0, align_layer = -1, align_head = 0, eval_limit = 400;
    int prenorm = 0, snapshots = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int r = 0;
        if (cli_is_help(a)) { train_usage(stdout); return 0; }
#define OPT(name) (!strcmp(a, name) && (val ? 1 : (cli_error("%s needs a value (try: attnviz train --help)", name), r = -1, 0)))
        if (!strcmp(a, "--prenorm")) prenorm = 1;
        else if (!strcmp(a, "--postnorm")) prenorm = 0;
        else if (!strcmp(a, "--snapshots")) snapshots = 1;
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (OPT("--corpus")) { corpus = val; i++; }
        else if (OPT("--out")) { out = val; i++; }
        else if (OPT("--resume")) { resume = val; i++; }
        else if (OPT("--seed")) { r = parse_long(a, val, 0, LONG_MAX, &seed); i++; }
        else if (OPT("--steps")) { r = parse_long(a, val, 1, 100000000, &steps); i++; }
        else if (OPT("--epochs")) { r = parse_long(a, val, 1, 100000, &epochs); i++; }
        else if (OPT("--batch")) { r = parse_long(a, val, 1, 4096, &batch); i++; }
        else if (OPT("--warmup")) { r = parse_long(a, val, 0, 100000000, &warmup); i++; }
        else if (OPT("--checkpoint-every")) { r = parse_long(a, val, 1, 100000000, &ckpt_every); i++; }
        else if (OPT("--d-model")) { r = parse_long(a, val, 1, MODEL_MAX_DIM, &d_model); i++; }
        else if (OPT("--heads")) { r = parse_long(a, val, 1, MODEL_MAX_HEADS, &heads); i++; }
        else if (OPT("--layers")) { r = parse_long(a, val, 1, MODEL_MAX_LAYERS, &enc_layers); dec_layers = enc_layers; i++; }
        else if (OPT("--enc-layers")) { r = parse_long(a, val, 1, MODEL_MAX_LAYERS, &enc_layers); i++; }
        else if (OPT("--dec-layers")) { r = parse_long(a, val, 1, MODEL_MAX_LAYERS, &dec_layers); i++; }
        else if (OPT("--d-ff")) { r = parse_long(a, val, 1, MODEL_MAX_DIM, &d_ff); i++; }
        else if (OPT("--max-len")) { r = parse_long(a, val, 2, MODEL_MAX_LEN, &max_len); i++; }
        else if (OPT("--lr")) { r = parse_double(a, val, 1e-8, 10, &lr); i++; }
        else if (OPT("--min-lr-frac")) { r = parse_double(a, val, 0, 1, &min_lr_frac); i++; }
        else if (OPT("--clip")) { r = parse_double(a, val, 0, 1e9, &clip); i++; }
        else if (OPT("--label-smoothing")) { r = parse_double(a, val, 0, 0.99, &ls); i++; }
        else if (OPT("--dropout")) { r = parse_double(a, val, 0, 1, &dropout); i++; }
        else if (OPT("--supervise-coref")) { r = parse_double(a, val, 0, 100, &sup); i++; }
        else if (OPT("--supervise-align")) { r = parse_double(a, val, 0, 100, &sup_align); i++; }
        else if (OPT("--coref-head")) { r = parse_head(a, val, "encoder", "self", &coref_layer, &coref_head); i++; }
        else if (OPT("--align-head")) { r = parse_head(a, val, "decoder", "cross", &align_layer, &align_head); i++; }
        else if (OPT("--eval-limit")) { r = parse_long(a, val, 0, INT_MAX, &eval_limit); i++; }
        else if (r == 0) { cli_error("train: unknown option '%s' (try: attnviz train --help)", a); return 2; }
#undef OPT
        if (r) return 2;
    }
    if (dropout >= 1) { cli_error("--dropout %g: the rate must be below 1 (e.g. 0.1)", dropout); return 2; }
    if (steps > 0 && epochs > 0) { cli_error("give --steps or --epochs, not both"); return 2; }

    int rc = 1;
    char err[1024], path[4096];
    Vocab v = {0};
    TrainSet set;
    train_set_init(&set);
    Model m = {0};
    Adam adam = {0};
    char *cmd = NULL, *snap_path = NULL;
    char **ck_vocab = NULL;
    int ck_nvocab = 0;
    Tokens snap_tok[N_SNAP_SENTENCES] = {{0}};
    int *snap_ids[N_SNAP_SENTENCES] = {0};
    const char **snap_words[N_SNAP_SENTENCES] = {0};
    int snap_len[N_SNAP_SENTENCES] = {0};

    snprintf(path, sizeof path, "%s/vocab.txt", corpus);
    if (vocab_load(&v, path, err, sizeof err)) { cli_error("%s (run `attnviz corpus --out %s` first)", err, corpus); goto cleanup; }
    snprintf(path, sizeof path, "%s/train.tsv", corpus);
    if (train_set_load_tsv(&set, path, &v, err, sizeof err)) { cli_error("%s", err); goto cleanup; }

    long start = 0;
    if (resume) {
        char *meta = NULL;
        if (checkpoint_load(resume, &m, &ck_vocab, &ck_nvocab, &meta, err, sizeof err)) { cli_error("%s", err); goto cleanup; }
        free(meta);
        int same = ck_nvocab == v.size;
        for (int i = 0; same && i < v.size; i++) same = !strcmp(ck_vocab[i], v.words[i]);
        if (!same) { cli_error("--resume %s: its vocabulary differs from %s/vocab.txt (resume with the same corpus)", resume, corpus); goto cleanup; }
        if (adam_init(&adam, m.num_params)) { cli_error("out of memory"); goto cleanup; }
        snprintf(path, sizeof path, "%s.state", resume);
        if (train_state_load(path, &adam, &start, err, sizeof err)) { cli_error("%s", err); goto cleanup; }
    } else {
        ModelConfig c = {0};
        c.arch = MODEL_ENC_DEC; c.vocab_size = v.size; c.d_model = (int)d_model; c.n_heads = (int)heads;
        c.d_ff = (int)d_ff; c.n_enc_layers = (int)enc_layers; c.n_dec_layers = (int)dec_layers;
        c.max_len = (int)max_len; c.prenorm = prenorm;
        if (model_config_validate(&c, err, sizeof err)) { cli_error("%s", err); goto cleanup; }
        if (model_init_random(&m, &c, (uint64_t)seed)) { cli_error("%s", m.err); goto cleanup; }
        if (adam_init(&adam, m.num_params)) { cli_error("out of memory"); goto cleanup; }
    }
    if (coref_layer < 0) coref_layer = m.config.n_enc_layers - 1;
    if (align_layer < 0) align_layer = m.config.n_dec_layers - 1;
    if (coref_layer >= m.config.n_enc_layers || coref_head >= m.config.n_heads) {
        cli_error("--coref-head encoder.%ld.self.%ld: the model has %d encoder layers and %d heads (0-based)",
                  coref_layer, coref_head, m.config.n_enc_layers, m.config.n_heads);
        goto cleanup;
    }
    if (align_layer >= m.config.n_dec_layers || align_head >= m.config.n_heads) {
        cli_error("--align-head decoder.%ld.cross.%ld: the model has %d decoder layers and %d heads (0-based)",
                  align_layer, align_head, m.config.n_dec_layers, m.config.n_heads);
        goto cleanup;
    }
    long nb = (set.n + batch - 1) / batch;
    if (epochs > 0) steps = epochs * nb;
    if (steps < 0) steps = 6000;
    if (start >= steps) { cli_error("--resume: the checkpoint is at step %ld, nothing left to do for --steps %ld", start, steps); goto cleanup; }

    cmd = join_args("attnviz train", argc, argv);
    char opts[1024], sseed[32], ssteps[32], sdata[64], suph[512];
    snprintf(opts, sizeof opts,
             "--seed %ld --steps %ld --batch %ld --lr %g --min-lr-frac %g --warmup %ld --clip %g "
             "--label-smoothing %g --dropout %g --d-model %d --heads %d --enc-layers %d --dec-layers %d --d-ff %d "
             "--max-len %d%s --supervise-coref %g --coref-head encoder.%ld.self.%ld "
             "--supervise-align %g --align-head decoder.%ld.cross.%ld", seed, steps, batch, lr, min_lr_frac,
             warmup, clip, ls, dropout, m.config.d_model, m.config.n_heads, m.config.n_enc_layers, m.config.n_dec_layers,
             m.config.d_ff, m.config.max_len, m.config.prenorm ? " --prenorm" : "", sup, coref_layer, coref_head,
             sup_align, align_layer, align_head);
    /* supervised_heads: JSON text, [] when nothing was supervised */
    {
        int k = snprintf(suph, sizeof suph, "[");
        if (sup > 0)
            k += snprintf(suph + k, sizeof suph - k,
                          "{\"map\":\"encoder.%ld.self\",\"head\":%ld,\"target\":\"coreference\",\"weight\":%g}",
                          coref_layer, coref_head, sup);
        if (sup_align > 0)
            k += snprintf(suph + k, sizeof suph - k,
                          "%s{\"map\":\"decoder.%ld.cross\",\"head\":%ld,\"target\":\"alignment\",\"weight\":%g}",
                          sup > 0 ? "," : "", align_layer, align_head, sup_align);
        snprintf(suph + k, sizeof suph - k, "]");
    }
    snprintf(sseed, sizeof sseed, "%ld", seed);
    snprintf(ssteps, sizeof ssteps, "%ld", steps);
    snprintf(sdata, sizeof sdata, "%d pairs", set.n);
    const char *extra_run[] = {"train_command", cmd ? cmd : "", "train_options", opts,
                               "train_seed", sseed, "train_steps", ssteps, "train_data", sdata,
                               "supervised_heads", suph, NULL};

    TrainOptions o = {0};
    o.steps = steps; o.batch = (int)batch; o.lr = lr; o.min_lr_frac = min_lr_frac; o.warmup = warmup;
    o.clip = clip; o.label_smoothing = (float)ls; o.dropout = (float)dropout; o.seed = (uint64_t)seed; o.checkpoint_every = ckpt_every;
    o.out_path = out; o.vocab = (const char *const *)v.words; o.n_vocab = v.size; o.extra = extra_run;
    o.progress = quiet ? -1 : isatty(2) ? 1 : 0;
    o.coref_weight = (float)sup; o.coref_layer = (int)coref_layer; o.coref_head = (int)coref_head;
    o.align_weight = (float)sup_align; o.align_layer = (int)align_layer; o.align_head = (int)align_head;

    long snap_steps[6];
    if (snapshots) {
        size_t n = strlen(out);
        snap_path = malloc(n + 32);
        if (!snap_path) { cli_error("out of memory"); goto cleanup; }
        strcpy(snap_path, out);
        if (n > 12 && !strcmp(out + n - 12, ".safetensors")) snap_path[n - 12] = '\0';
        strcat(snap_path, ".snapshots.json");
        for (int k = 0; k < N_SNAP_SENTENCES; k++) {
            if (tokenizer_split(&snap_tok[k], SNAP_SENTENCES[k], err, sizeof err)) { cli_error("%s", err); goto cleanup; }
            int L = snap_tok[k].n + 1;
            snap_ids[k] = malloc((size_t)L * sizeof(int));
            snap_words[k] = malloc((size_t)L * sizeof(char *));
            if (!snap_ids[k] || !snap_words[k]) { cli_error("out of memory"); goto cleanup; }
            int unk = vocab_encode(&v, (const char *const *)snap_tok[k].tok, snap_tok[k].n, snap_ids[k], NULL);
            if (unk) { cli_error("--snapshots: the corpus vocabulary lacks words of \"%s\"", SNAP_SENTENCES[k]); goto cleanup; }
            snap_ids[k][L - 1] = VOCAB_EOS;
            for (int j = 0; j < L - 1; j++) snap_words[k][j] = snap_tok[k].tok[j];
            snap_words[k][L - 1] = "<eos>";
            snap_len[k] = L;
        }
        /* 6 points, denser early, when the heads form */
        const double frac[6] = {0, 1.0 / 32, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1};
        for (int k = 0; k < 6; k++) snap_steps[k] = (long)(frac[k] * steps);
        o.snapshot_path = snap_path; o.n_snap_steps = 6; o.snap_steps = snap_steps;
        o.n_snap_sent = N_SNAP_SENTENCES; o.snap_text = SNAP_SENTENCES;
        o.snap_src = (const int *const *)snap_ids; o.snap_len = snap_len;
        o.snap_tokens = (const char *const *const *)snap_words;
    }

    if (!quiet)
        fprintf(stderr, "train: %d pairs, vocab %d, model %zu parameters (d_model %d, %d heads, %d+%d layers, d_ff %d, %s), %ld steps of %ld%s\n",
                set.n, v.size, m.num_params, m.config.d_model, m.config.n_heads, m.config.n_enc_layers,
                m.config.n_dec_layers, m.config.d_ff, m.config.prenorm ? "pre-norm" : "post-norm", steps, batch,
                resume ? " (resumed)" : "");
    TrainResult res;
    if (train_run(&m, &adam, start, &set, &o, &res, err, sizeof err)) { cli_error("%s", err); goto cleanup; }
    char ssec[32], stps[32], sloss[32], saux[128], scoref[256] = "", seval[1024] = "";
    snprintf(ssec, sizeof ssec, "%.1f", res.seconds);
    snprintf(stps, sizeof stps, "%.0f", res.tokens_per_sec);
    snprintf(sloss, sizeof sloss, "%.4f", res.last_loss);
    snprintf(saux, sizeof saux, "{\"coreference\":%.4f,\"alignment\":%.4f}",
             isnan(res.coref_aux) ? -1.0 : res.coref_aux, isnan(res.align_aux) ? -1.0 : res.align_aux);
    if (eval_limit > 0) {
        /* quick held-out eval: the best coreference head for `run` and `demo` */
        snprintf(path, sizeof path, "%s/heldout.tsv", corpus);
        if (access(path, R_OK) == 0) {
            EvalOptions eo = {(int)eval_limit, 64};
            EvalReport er;
            if (eval_run(&m, &v, path, &eo, &er, err, sizeof err)) { cli_error("eval after training: %s", err); goto cleanup; }
            int cl, ch, al, ah;
            double cacc = eval_best_head(er.coref_enc, er.n_enc_layers, er.n_heads, &cl, &ch);
            double aacc = eval_best_head(er.align, er.n_dec_layers, er.n_heads, &al, &ah);
            EvalCount pron = {er.pronoun[0].hit + er.pronoun[1].hit, er.pronoun[0].total + er.pronoun[1].total};
            snprintf(scoref, sizeof scoref, "{\"map\":\"encoder.%d.self\",\"head\":%d,\"accuracy\":%.4f}", cl, ch, cacc);
            snprintf(seval, sizeof seval,
                     "{\"split\":\"heldout\",\"pairs\":%ld,\"translation_exact_match\":{\"fr\":%.4f,\"vi\":%.4f},"
                     "\"pronoun_accuracy\":%.4f,\"coreference_head\":%s,"
                     "\"alignment\":{\"map\":\"decoder.%d.cross\",\"head\":%d,\"accuracy\":%.4f}}",
                     er.n_pairs, eval_rate(er.exact[0]), eval_rate(er.exact[1]), eval_rate(pron), scoref, al, ah, aacc);
            if (!quiet) fprintf(stderr, "train: quick eval (%s, %ld pairs, %.1f s): %s\n", path, er.n_pairs, er.seconds, seval);
        } else if (!quiet) {
            fprintf(stderr, "train: no %s, so no quick eval and no coreference_head metadata\n", path);
        }
    }
    const char *extra_final[] = {"train_command", cmd ? cmd : "", "train_options", opts,
                                 "train_seed", sseed, "train_steps", ssteps, "train_data", sdata,
                                 "train_seconds", ssec, "train_tokens_per_second", stps,
                                 "train_final_loss", sloss, "supervised_heads", suph, "train_final_aux_loss", saux,
                                 scoref[0] ? "coreference_head" : NULL, scoref, "eval_quick", seval, NULL};
    if (train_save_checkpoint(&m, &adam, res.step_end, &o, extra_final, err, sizeof err)) { cli_error("%s", err); goto cleanup; }
    if (!quiet)
        fprintf(stderr, "train: done in %.1f s, %.0f tokens/s, loss %.4f -> %.4f; wrote %s (+ .state)%s%s\n",
                res.seconds, res.tokens_per_sec, res.first_loss, res.last_loss, out,
                snap_path ? " and " : "", snap_path ? snap_path : "");
    rc = 0;
cleanup:
    for (int k = 0; k < N_SNAP_SENTENCES; k++) { tokens_free(&snap_tok[k]); free(snap_ids[k]); free(snap_words[k]); }
    free(snap_path);
    free(cmd);
    checkpoint_free_vocab(ck_vocab, ck_nvocab);
    adam_free(&adam);
    model_free(&m);
    train_set_free(&set);
    vocab_free(&v);
    return rc;
}

/* ------------------------------------------------------------------ eval */

static void eval_usage(FILE *f) {
    fprintf(f,
        "usage: attnviz eval [--model PATH] [--corpus DIR] [--split NAME] [--json] [--limit N] [--write-metadata]\n\n"
        "Measures the model on DIR/NAME.tsv (default build/corpus/heldout.tsv):\n"
        "translation exact match per language, pronoun accuracy, for every encoder\n"
        "self-attention and cross-attention head how often the pronoun's strongest link\n"
        "(excluding itself and <…> tokens) is its gold antecedent, and how often\n"
        "cross-attention's strongest link is the gold word alignment (teacher-forced).\n\n"
        "  --model PATH   checkpoint (default: the shipped model)\n"
        "  --corpus DIR   corpus folder (default build/corpus)\n"
        "  --split NAME   heldout (default) or train\n"
        "  --limit N      only the first N pairs\n"
        "  --json         one JSON object on stdout\n"
        "  --write-metadata  store the best encoder coreference head as\n"
        "                 \"coreference_head\" (and the figures as \"eval_heldout\") in the\n"
        "                 checkpoint's metadata, which `run` and `demo` read; needs --model\n");
}

static void json_heads(FILE *f, const char *stack, const char *kind, int layers, int heads,
                       const EvalCount t[EVAL_MAX_LAYERS][EVAL_MAX_HEADS], int *first) {
    for (int l = 0; l < layers; l++) {
        fprintf(f, "%s\"%s.%d.%s\": [", *first ? "" : ", ", stack, l, kind);
        *first = 0;
        for (int h = 0; h < heads; h++) fprintf(f, "%s%.4f", h ? ", " : "", eval_rate(t[l][h]));
        fprintf(f, "]");
    }
}

static void print_table(const char *title, const char *stack, const char *kind, int layers, int heads,
                        const EvalCount t[EVAL_MAX_LAYERS][EVAL_MAX_HEADS]) {
    printf("\n%s\n  %-18s", title, "map");
    for (int h = 0; h < heads; h++) printf("  head %-3d", h);
    printf("\n");
    for (int l = 0; l < layers; l++) {
        char id[64];
        snprintf(id, sizeof id, "%s.%d.%s", stack, l, kind);
        printf("  %-18s", id);
        for (int h = 0; h < heads; h++) printf("  %7.1f%%", 100 * eval_rate(t[l][h]));
        printf("\n");
    }
}

/* Rewrites the checkpoint at path (temp file + rename, by checkpoint_save) with
 * its metadata plus key → value pairs (replacing existing keys).  0 or -1 with err. */
static int rewrite_metadata(const char *path, const char *const *kv, char *err, size_t errlen) {
    Model m = {0};
    char **vocab = NULL, *meta = NULL;
    int nv = 0, rc = -1, n = 0;
    const char **extra = NULL;
    cJSON *root = NULL;
    if (checkpoint_load(path, &m, &vocab, &nv, &meta, err, errlen)) return -1;
    root = cJSON_Parse(meta);
    int cap = cJSON_GetArraySize(root) * 2 + 16;
    extra = calloc((size_t)cap, sizeof *extra);
    if (!root || !extra) { snprintf(err, errlen, "%s: cannot read its metadata", path); goto done; }
    for (const cJSON *it = root->child; it; it = it->next) {
        if (!cJSON_IsString(it) || !strcmp(it->string, "format") || !strcmp(it->string, "version") ||
            !strcmp(it->string, "config") || !strcmp(it->string, "vocab")) continue;
        int replaced = 0;
        for (int k = 0; kv[k]; k += 2) replaced |= !strcmp(kv[k], it->string);
        if (replaced) continue;
        extra[n++] = it->string;
        extra[n++] = it->valuestring;
    }
    for (int k = 0; kv[k] && n + 2 < cap; k += 2) { extra[n++] = kv[k]; extra[n++] = kv[k + 1]; }
    extra[n] = NULL;
    rc = checkpoint_save(path, &m, (const char *const *)vocab, nv, extra, err, errlen);
done:
    cJSON_Delete(root);
    free(extra);
    free(meta);
    checkpoint_free_vocab(vocab, nv);
    model_free(&m);
    return rc;
}

int cli_eval(int argc, char **argv) {
    const char *model_path = NULL, *corpus = "build/corpus", *split = "heldout";
    long limit = 0;
    int as_json = 0, write_meta = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (cli_is_help(a)) { eval_usage(stdout); return 0; }
        if (!strcmp(a, "--json")) { as_json = 1; continue; }
        if (!strcmp(a, "--write-metadata")) { write_meta = 1; continue; }
        if (!strcmp(a, "--model") || !strcmp(a, "--corpus") || !strcmp(a, "--split") || !strcmp(a, "--limit")) {
            if (!val) { cli_error("%s needs a value (try: attnviz eval --help)", a); return 2; }
            i++;
            if (!strcmp(a, "--model")) model_path = val;
            else if (!strcmp(a, "--corpus")) corpus = val;
            else if (!strcmp(a, "--split")) split = val;
            else if (parse_long(a, val, 1, INT_MAX, &limit)) return 2;
            continue;
        }
        cli_error("eval: unknown option '%s' (try: attnviz eval --help)", a);
        return 2;
    }
    if (write_meta && !model_path) { cli_error("--write-metadata needs --model PATH (the checkpoint to update)"); return 2; }
    if (strchr(split, '/')) { cli_error("--split %s: give a split name such as heldout or train", split); return 2; }
    ModelFile mf;
    char path[4096], err[1024];
    if (model_file_load(&mf, model_path, err, sizeof err) != 0) { cli_error("%s", err); return 1; }
    const char *used = mf.path;
    snprintf(path, sizeof path, "%s/%s.tsv", corpus, split);
    if (access(path, R_OK) != 0) {
        cli_error("cannot read %s: %s (run `attnviz corpus --out %s` first, or give --corpus DIR)", path, strerror(errno), corpus);
        model_file_free(&mf);
        return 1;
    }
    EvalOptions o = {(int)limit, 64};
    EvalReport r;
    int rc = eval_run(&mf.m, &mf.v, path, &o, &r, err, sizeof err);
    if (rc) { cli_error("%s", err); model_file_free(&mf); return 1; }
    int E = r.n_enc_layers, L = r.n_dec_layers, H = r.n_heads;
    int cl, ch, xl, xh, al, ah, wl, wh;
    double coref = eval_best_head(r.coref_enc, E, H, &cl, &ch);
    double coref_x = eval_best_head(r.coref_cross, L, H, &xl, &xh);
    double align = eval_best_head(r.align, L, H, &al, &ah);
    double align_w = eval_best_head(r.align_with_eos, L, H, &wl, &wh);
    EvalCount pron = {r.pronoun[0].hit + r.pronoun[1].hit, r.pronoun[0].total + r.pronoun[1].total};
    long n_coref = r.coref_enc[0][0].total, n_align = r.align[0][0].total;
    if (write_meta) {
        char sc[256], se[1024];
        snprintf(sc, sizeof sc, "{\"map\":\"encoder.%d.self\",\"head\":%d,\"accuracy\":%.4f}", cl, ch, coref);
        snprintf(se, sizeof se,
                 "{\"split\":\"%s\",\"pairs\":%ld,\"translation_exact_match\":{\"fr\":%.4f,\"vi\":%.4f},"
                 "\"pronoun_accuracy\":%.4f,\"coreference_head\":%s,"
                 "\"alignment\":{\"map\":\"decoder.%d.cross\",\"head\":%d,\"accuracy\":%.4f}}",
                 split, r.n_pairs, eval_rate(r.exact[0]), eval_rate(r.exact[1]), eval_rate(pron), sc, al, ah, align);
        const char *kv[] = {"coreference_head", sc, "eval_heldout", se, NULL};
        if (rewrite_metadata(model_path, kv, err, sizeof err)) {
            cli_error("--write-metadata: %s", err); model_file_free(&mf); return 1;
        }
    }
    if (as_json) {
        printf("{\"model\": \"%s\", \"data\": \"%s\", \"pairs\": %ld, \"seconds\": %.2f,\n", used, path, r.n_pairs, r.seconds);
        printf(" \"translation_exact_match\": {\"fr\": %.4f, \"vi\": %.4f},\n", eval_rate(r.exact[0]), eval_rate(r.exact[1]));
        printf(" \"translation_pairs\": {\"fr\": %ld, \"vi\": %ld},\n", r.exact[0].total, r.exact[1].total);
        printf(" \"pronoun_accuracy\": %.4f,\n", eval_rate(pron));
        printf(" \"pronoun_accuracy_by_language\": {\"fr\": %.4f, \"vi\": %.4f},\n", eval_rate(r.pronoun[0]), eval_rate(r.pronoun[1]));
        printf(" \"pronoun_count\": %ld,\n", pron.total);
        printf(" \"coreference_head\": {\"map\": \"encoder.%d.self\", \"head\": %d, \"accuracy\": %.4f, \"count\": %ld},\n", cl, ch, coref, n_coref);
        printf(" \"coreference_cross_head\": {\"map\": \"decoder.%d.cross\", \"head\": %d, \"accuracy\": %.4f, \"count\": %ld},\n",
               xl, xh, coref_x, r.coref_cross[0][0].total);
        printf(" \"coreference_heads\": {");
        int first = 1;
        json_heads(stdout, "encoder", "self", E, H, r.coref_enc, &first);
        json_heads(stdout, "decoder", "cross", L, H, r.coref_cross, &first);
        printf("},\n");
        printf(" \"alignment_accuracy\": {\"accuracy\": %.4f, \"map\": \"decoder.%d.cross\", \"head\": %d, "
               "\"head_average\": %.4f, \"count\": %ld, \"keys\": \"source words (<eos> excluded)\",\n",
               align, al, ah, eval_mean_heads(r.align, L, H), n_align);
        printf("   \"heads\": {");
        first = 1;
        json_heads(stdout, "decoder", "cross", L, H, r.align, &first);
        printf("},\n   \"with_eos\": {\"accuracy\": %.4f, \"map\": \"decoder.%d.cross\", \"head\": %d, \"head_average\": %.4f}}\n}\n",
               align_w, wl, wh, eval_mean_heads(r.align_with_eos, L, H));
    } else {
        printf("eval: %s on %s (%ld pairs, %.1f s)\n\n", used, path, r.n_pairs, r.seconds);
        printf("  translation exact match   fr %.1f%% (%ld/%ld)   vi %.1f%% (%ld/%ld)\n",
               100 * eval_rate(r.exact[0]), r.exact[0].hit, r.exact[0].total,
               100 * eval_rate(r.exact[1]), r.exact[1].hit, r.exact[1].total);
        printf("  pronoun accuracy          %.1f%% (%ld/%ld; fr %.1f%%, vi %.1f%%)\n", 100 * eval_rate(pron),
               pron.hit, pron.total, 100 * eval_rate(r.pronoun[0]), 100 * eval_rate(r.pronoun[1]));
        printf("  best coreference head     encoder.%d.self head %d: %.1f%% of %ld pronouns link to their antecedent\n",
               cl, ch, 100 * coref, n_coref);
        printf("  best cross coref head     decoder.%d.cross head %d: %.1f%%\n", xl, xh, 100 * coref_x);
        printf("  alignment accuracy        decoder.%d.cross head %d: %.1f%% of %ld aligned words (head average %.1f%%)\n",
               al, ah, 100 * align, n_align, 100 * eval_mean_heads(r.align, L, H));
        print_table("coreference: pronoun -> antecedent (strongest link, self and <…> excluded)", "encoder", "self", E, H, r.coref_enc);
        print_table("coreference through cross-attention (row of the translated pronoun)", "decoder", "cross", L, H, r.coref_cross);
        print_table("alignment: cross-attention argmax = gold source word", "decoder", "cross", L, H, r.align);
    }
    model_file_free(&mf);
    return 0;
}
