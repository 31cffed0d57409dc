/* train.c — `attnviz train`: trains the encoder–decoder model on a corpus
 * (train/train.h) and writes the checkpoint, its .state and, with
 * --snapshots, the coreference sentences' attention at a few points.  Reads
 * like its steps: parse, load the corpus, start or resume the model, describe
 * the run for the checkpoint's metadata (train/meta.h), train, a quick
 * held-out eval, save.
 *
 *   attnviz train [--corpus DIR] [--out PATH] [--seed N] [--steps N | --epochs N] … */
#include "cli/cli.h"
#include "core/fileio.h"
#include "corpus/tsv.h"
#include "train/eval.h"
#include "train/meta.h"
#include "train/state.h"
#include "train/train.h"
#include "model/checkpoint.h"
#include "model/decode.h"
#include "model/model.h"
#include "tokenize/tokenizer.h"
#include "net/model_file.h"
#include "pipeline/sentence.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The two sentences of the lesson's coreference picture (snapshots). */
static const char *const SNAP_SENTENCES[] = {
    "the animal didn't cross the street because it was too tired .",
    "the animal didn't cross the street because it was too wide .",
};
#define N_SNAP_SENTENCES 2
#define N_SNAP_STEPS 6

typedef struct {
    const char *corpus, *out, *resume, *coref_head_arg, *align_head_arg;
    long seed, steps, epochs, batch, warmup, ckpt_every;
    long d_model, heads, layers, enc_layers, dec_layers, d_ff, max_len, eval_limit;
    double lr, min_lr_frac, clip, label_smoothing, dropout, coref_weight, align_weight;
    long coref_layer, coref_head, align_layer, align_head;
    int prenorm, snapshots, quiet;
} TrainArgs;

/* What training works on and keeps, released in one place. */
typedef struct {
    Vocab v;
    TrainSet set;
    unsigned char *lang_flags;                   /* (v.size) target languages of each token (eval.h) */
    Model m;
    Adam adam;
    long start;                                  /* first step (after --resume)    */
    char *cmd, *snap_path;
    Sentence snap[N_SNAP_SENTENCES];             /* the snapshot sentences, prepared */
    const int *snap_ids[N_SNAP_SENTENCES];
    const char *const *snap_words[N_SNAP_SENTENCES];
    int snap_len[N_SNAP_SENTENCES];
    long snap_steps[N_SNAP_STEPS];
    TrainMeta meta;                              /* the checkpoint's metadata (train/meta.h) */
    const char *meta_kv[2 * TRAIN_META_MAX_PAIRS + 1];   /* its pairs as saved */
    char err[1024];
} Training;

static void train_usage(FILE *f) {
    fprintf(f,
        "usage: attnviz train [options]\n\n"
        "Trains the encoder-decoder model on a corpus written by `attnviz corpus`\n"
        "(DIR/train.tsv and DIR/vocab.txt) and writes a checkpoint (safetensors) plus\n"
        "PATH.state (Adam moments and step, for --resume).  A token missing from\n"
        "vocab.txt is read as <unk> on both sides when it is a word of the pair's\n"
        "source (a name or number the model learns to copy); otherwise it is an error.\n"
        "The checkpoint records the source words seen and the longest source, which\n"
        "`run` uses to say when a sentence lies outside training.\n\n"
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

/* 0 to go on, 1 after --help, 2 after a usage error (printed). */
static int parse_args(TrainArgs *a, int argc, char **argv) {
    *a = (TrainArgs){.corpus = "build/corpus", .out = "output/" MODEL_FILE_DEFAULT_NAME, .seed = 1, .steps = -1,
                     .epochs = -1, .batch = 64, .warmup = 300, .d_model = 96, .heads = 4, .layers = -1,
                     .enc_layers = 2, .dec_layers = 2, .d_ff = 256, .max_len = 64, .eval_limit = 400, .lr = 2e-3,
                     .min_lr_frac = 0.05, .clip = 1.0, .label_smoothing = 0.05, .coref_layer = -1, .align_layer = -1};
    const CliOption strs[] = {{"--corpus", &a->corpus}, {"--out", &a->out}, {"--resume", &a->resume},
                              {"--coref-head", &a->coref_head_arg}, {"--align-head", &a->align_head_arg}};
    const CliLong longs[] = {
        {"--seed", &a->seed, 0, LONG_MAX}, {"--steps", &a->steps, 1, 100000000}, {"--epochs", &a->epochs, 1, 100000},
        {"--batch", &a->batch, 1, 4096}, {"--warmup", &a->warmup, 0, 100000000},
        {"--checkpoint-every", &a->ckpt_every, 1, 100000000}, {"--d-model", &a->d_model, 1, MODEL_MAX_DIM},
        {"--heads", &a->heads, 1, MODEL_MAX_HEADS}, {"--layers", &a->layers, 1, MODEL_MAX_LAYERS},
        {"--enc-layers", &a->enc_layers, 1, MODEL_MAX_LAYERS}, {"--dec-layers", &a->dec_layers, 1, MODEL_MAX_LAYERS},
        {"--d-ff", &a->d_ff, 1, MODEL_MAX_DIM}, {"--max-len", &a->max_len, 2, MODEL_MAX_LEN},
        {"--eval-limit", &a->eval_limit, 0, INT_MAX}};
    const CliDouble doubles[] = {
        {"--lr", &a->lr, 1e-8, 10}, {"--min-lr-frac", &a->min_lr_frac, 0, 1}, {"--clip", &a->clip, 0, 1e9},
        {"--label-smoothing", &a->label_smoothing, 0, 0.99}, {"--dropout", &a->dropout, 0, 1},
        {"--supervise-coref", &a->coref_weight, 0, 100}, {"--supervise-align", &a->align_weight, 0, 100}};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int taken = cli_take_option(argc, argv, &i, strs, (int)(sizeof strs / sizeof strs[0]), "train");
        if (!taken) taken = cli_take_long(argc, argv, &i, longs, (int)(sizeof longs / sizeof longs[0]), "train");
        if (!taken) taken = cli_take_double(argc, argv, &i, doubles, (int)(sizeof doubles / sizeof doubles[0]), "train");
        if (taken < 0) return 2;
        if (taken) {
            /* --layers sets both stacks where it stands; a later --enc-layers / --dec-layers overrides one */
            if (!strncmp(arg, "--layers", 8)) a->enc_layers = a->dec_layers = a->layers;
            continue;
        }
        if (cli_is_help(arg)) { train_usage(stdout); return 1; }
        if (!strcmp(arg, "--prenorm")) a->prenorm = 1;
        else if (!strcmp(arg, "--postnorm")) a->prenorm = 0;
        else if (!strcmp(arg, "--snapshots")) a->snapshots = 1;
        else if (!strcmp(arg, "--quiet")) a->quiet = 1;
        else return cli_unknown_option("train", arg);
    }
    if (a->coref_head_arg &&
        parse_head("--coref-head", a->coref_head_arg, "encoder", "self", &a->coref_layer, &a->coref_head))
        return 2;
    if (a->align_head_arg &&
        parse_head("--align-head", a->align_head_arg, "decoder", "cross", &a->align_layer, &a->align_head))
        return 2;
    if (a->dropout >= 1) { cli_error("--dropout %g: the rate must be below 1 (e.g. 0.1)", a->dropout); return 2; }
    if (a->steps > 0 && a->epochs > 0) { cli_error("give --steps or --epochs, not both"); return 2; }
    return 0;
}

/* The progress on stderr: a bar redrawn at most every PROGRESS_REDRAW_SEC
 * seconds on a terminal, else about PROGRESS_LINES plain lines per run. */
#define PROGRESS_REDRAW_SEC 0.2
#define PROGRESS_LINES 40
#define PROGRESS_BAR_WIDTH 24

typedef struct {
    int mode;               /* 1: \r bar, 0: plain lines, -1: nothing */
    double last_draw;       /* elapsed seconds at the last bar        */
} Progress;

/* "1m05s", "2h03m". */
static void fmt_time(char *buf, size_t n, double s) {
    long t = (long)(s + 0.5);
    if (t >= 3600) snprintf(buf, n, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else snprintf(buf, n, "%ldm%02lds", t / 60, t % 60);
}

static void show_progress(const TrainProgress *p, void *ctx) {
    Progress *pr = ctx;
    long print_every = p->steps / PROGRESS_LINES > 0 ? p->steps / PROGRESS_LINES : 1;
    char eta[32];
    fmt_time(eta, sizeof eta, p->eta);
    if (pr->mode == 1 && (p->elapsed - pr->last_draw > PROGRESS_REDRAW_SEC || p->step == p->steps)) {
        char bar[PROGRESS_BAR_WIDTH + 1];
        int fill = (int)((double)p->step / p->steps * PROGRESS_BAR_WIDTH);
        for (int i = 0; i < PROGRESS_BAR_WIDTH; i++) bar[i] = i < fill ? '#' : '.';
        bar[PROGRESS_BAR_WIDTH] = '\0';
        fprintf(stderr, "\rtrain [%s] %ld/%ld  loss %.4f  lr %.2e  %.0f tok/s  left %s   ", bar, p->step, p->steps,
                p->loss_ema, p->lr, p->tokens_per_sec, eta);
        fflush(stderr);
        pr->last_draw = p->elapsed;
    } else if (pr->mode == 0 && (p->step % print_every == 0 || p->step == p->steps)) {
        fprintf(stderr, "train: step %ld/%ld loss %.4f lr %.2e %.0f tok/s elapsed %.0fs left %s", p->step, p->steps,
                p->loss_ema, p->lr, p->tokens_per_sec, p->elapsed, eta);
        if (!isnan(p->coref_aux)) fprintf(stderr, " coref-aux %.3f", p->coref_aux);
        if (!isnan(p->align_aux)) fprintf(stderr, " align-aux %.3f", p->align_aux);
        fputc('\n', stderr);
        fflush(stderr);
    }
}

/* "attnviz train ARGS…", arguments with spaces in single quotes. */
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

/* --out must name a file we can create beside its folder's other files: not a
 * folder, not a dangling symlink, in an existing writable folder.  Checked
 * before training, which may take hours.  0, or -1 (printed). */
static int check_out_path(const char *out) {
    struct stat st;
    if (lstat(out, &st) == 0) {
        if (S_ISLNK(st.st_mode) && stat(out, &st) != 0) {
            cli_error("--out %s is a symbolic link to nothing (remove it or choose another --out)", out);
            return -1;
        }
        if (S_ISDIR(st.st_mode)) {
            cli_error("--out %s is a folder; give a file name, e.g. %s/model.safetensors", out, out);
            return -1;
        }
    }
    AtomicFile probe;   /* the temporary the checkpoint will be written through, created and removed */
    char err[1024];
    if (atomic_open(&probe, out, err, sizeof err)) { cli_error("--out: %s", err); return -1; }
    atomic_abort(&probe);
    return 0;
}

/* Every line of a TSV checked as strictly as eval reads it (corpus_read_tsv),
 * before any training.  0, or -1 (printed). */
static int check_tsv(const char *path) {
    Corpus c;
    char err[1024];
    if (corpus_read_tsv(&c, path, err, sizeof err)) { cli_error("%s", err); return -1; }
    corpus_free(&c);
    return 0;
}

/* DIR/train.tsv read once, strictly (corpus_read_tsv): the training set and
 * the token sets of its targets (the language mask) are made from it.
 * DIR/heldout.tsv is checked as strictly before any training.  The errors
 * come in this order: train.tsv's lines, heldout.tsv's, vocab.txt, then a
 * train.tsv that cannot be read, then what the training set refuses
 * (train/data.h).  0, or -1 (printed). */
static int load_corpus(Training *tr, const TrainArgs *a) {
    char train[4096], path[4096];
    Corpus c = {0};
    int rc = -1;
    snprintf(train, sizeof train, "%s/train.tsv", a->corpus);
    int readable = access(train, R_OK) == 0;
    if (readable && corpus_read_tsv(&c, train, tr->err, sizeof tr->err)) { cli_error("%s", tr->err); return -1; }
    snprintf(path, sizeof path, "%s/heldout.tsv", a->corpus);
    if (a->eval_limit > 0 && access(path, R_OK) == 0 && check_tsv(path)) goto done;
    snprintf(path, sizeof path, "%s/vocab.txt", a->corpus);
    if (vocab_load(&tr->v, path, tr->err, sizeof tr->err)) {
        cli_error("%s (run `attnviz corpus --out %s` first)", tr->err, a->corpus);
        goto done;
    }
    if ((!readable && corpus_read_tsv(&c, train, tr->err, sizeof tr->err)) ||
        train_set_from_corpus(&tr->set, &c, train, &tr->v, tr->err, sizeof tr->err) ||
        eval_language_flags(&tr->v, &c, &tr->lang_flags, tr->err, sizeof tr->err)) {
        cli_error("%s", tr->err);
        goto done;
    }
    rc = 0;
done:
    corpus_free(&c);
    return rc;
}

/* --resume: the checkpoint, its vocabulary (must be the corpus's) and its Adam state. */
static int resume_model(Training *tr, const TrainArgs *a) {
    char **ck_vocab = NULL, *meta = NULL, path[4096];
    int ck_nvocab = 0, rc = -1;
    if (checkpoint_load(a->resume, &tr->m, &ck_vocab, &ck_nvocab, &meta, tr->err, sizeof tr->err)) {
        cli_error("%s", tr->err);
        return -1;
    }
    free(meta);
    int same = ck_nvocab == tr->v.size;
    for (int i = 0; same && i < tr->v.size; i++) same = !strcmp(ck_vocab[i], tr->v.words[i]);
    if (!same) {
        cli_error("--resume %s: its vocabulary differs from %s/vocab.txt (resume with the same corpus)", a->resume,
                  a->corpus);
        goto done;
    }
    if (adam_init(&tr->adam, tr->m.num_params)) { cli_error("out of memory"); goto done; }
    snprintf(path, sizeof path, "%s.state", a->resume);
    if (train_state_load(path, &tr->adam, &tr->start, tr->err, sizeof tr->err)) { cli_error("%s", tr->err); goto done; }
    rc = 0;
done:
    checkpoint_free_vocab(ck_vocab, ck_nvocab);
    return rc;
}

/* A new model of the asked size, randomly initialised from --seed. */
static int new_model(Training *tr, const TrainArgs *a) {
    ModelConfig c = {0};
    c.arch = MODEL_ENC_DEC; c.vocab_size = tr->v.size; c.d_model = (int)a->d_model; c.n_heads = (int)a->heads;
    c.d_ff = (int)a->d_ff; c.n_enc_layers = (int)a->enc_layers; c.n_dec_layers = (int)a->dec_layers;
    c.max_len = (int)a->max_len; c.prenorm = a->prenorm;
    if (model_config_validate(&c, tr->err, sizeof tr->err)) { cli_error("%s", tr->err); return -1; }
    if (model_init_random(&tr->m, &c, (uint64_t)a->seed)) { cli_error("%s", tr->m.err); return -1; }
    if (adam_init(&tr->adam, tr->m.num_params)) { cli_error("out of memory"); return -1; }
    return 0;
}

/* The supervised heads default to the last layer and must exist; the length in steps. */
static int check_plan(Training *tr, TrainArgs *a) {
    const ModelConfig *c = &tr->m.config;
    if (a->coref_layer < 0) a->coref_layer = c->n_enc_layers - 1;
    if (a->align_layer < 0) a->align_layer = c->n_dec_layers - 1;
    if (a->coref_layer >= c->n_enc_layers || a->coref_head >= c->n_heads) {
        cli_error("--coref-head encoder.%ld.self.%ld: the model has %d encoder layers and %d heads (0-based)",
                  a->coref_layer, a->coref_head, c->n_enc_layers, c->n_heads);
        return -1;
    }
    if (a->align_layer >= c->n_dec_layers || a->align_head >= c->n_heads) {
        cli_error("--align-head decoder.%ld.cross.%ld: the model has %d decoder layers and %d heads (0-based)",
                  a->align_layer, a->align_head, c->n_dec_layers, c->n_heads);
        return -1;
    }
    long nb = (tr->set.n + a->batch - 1) / a->batch;
    if (a->epochs > 0) a->steps = a->epochs * nb;
    if (a->steps < 0) a->steps = 6000;
    if (tr->start >= a->steps) {
        cli_error("--resume: the checkpoint is at step %ld, nothing left to do for --steps %ld", tr->start, a->steps);
        return -1;
    }
    return 0;
}

/* The model decodes under the language mask it is saved with (the token sets
 * of the training targets, load_corpus; decode.h) in the snapshots and the
 * quick eval.  0, or -1 (printed). */
static int language_masks(Training *tr) {
    if (eval_set_language_masks(&tr->m, tr->lang_flags, tr->v.size) != 0 ||
        decode_set_sentence_ends(&tr->m, &tr->v) != 0) {
        cli_error("out of memory");
        return -1;
    }
    return 0;
}

static TrainOptions train_options(Training *tr, const TrainArgs *a, Progress *pr) {
    TrainOptions o = {0};
    o.steps = a->steps; o.batch = (int)a->batch; o.lr = a->lr; o.min_lr_frac = a->min_lr_frac; o.warmup = a->warmup;
    o.clip = a->clip; o.label_smoothing = a->label_smoothing; o.dropout = a->dropout;
    o.seed = (uint64_t)a->seed; o.checkpoint_every = a->ckpt_every;
    o.out_path = a->out; o.vocab = (const char *const *)tr->v.words; o.n_vocab = tr->v.size; o.extra = tr->meta_kv;
    pr->mode = a->quiet ? -1 : isatty(2) ? 1 : 0;
    o.on_progress = show_progress;
    o.progress_ctx = pr;
    o.coref_weight = a->coref_weight; o.coref_layer = (int)a->coref_layer; o.coref_head = (int)a->coref_head;
    o.align_weight = a->align_weight; o.align_layer = (int)a->align_layer; o.align_head = (int)a->align_head;
    return o;
}

/* --snapshots: the coreference sentences, encoded, and 6 points of training. */
static int prepare_snapshots(Training *tr, const TrainArgs *a, TrainOptions *o) {
    size_t n = strlen(a->out);
    tr->snap_path = malloc(n + 32);
    if (!tr->snap_path) { cli_error("out of memory"); return -1; }
    strcpy(tr->snap_path, a->out);
    if (n > 12 && !strcmp(a->out + n - 12, ".safetensors")) tr->snap_path[n - 12] = '\0';
    strcat(tr->snap_path, ".snapshots.json");
    for (int k = 0; k < N_SNAP_SENTENCES; k++) {   /* the sentence pipeline's preparation */
        Sentence *s = &tr->snap[k];
        if (sentence_prepare(s, SNAP_SENTENCES[k], &tr->m, &tr->v, tr->err, sizeof tr->err)) {
            cli_error("--snapshots: %s", tr->err);
            return -1;
        }
        if (s->n_unknown) {
            cli_error("--snapshots: the corpus vocabulary lacks words of \"%s\"", SNAP_SENTENCES[k]);
            return -1;
        }
        tr->snap_ids[k] = s->src;
        tr->snap_words[k] = s->src_tok;
        tr->snap_len[k] = s->S;
    }
    /* 6 points, denser early, when the heads form */
    const double frac[N_SNAP_STEPS] = {0, 1.0 / 32, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1};
    for (int k = 0; k < N_SNAP_STEPS; k++) tr->snap_steps[k] = (long)(frac[k] * a->steps);
    o->snapshots = (TrainSnapshots){.path = tr->snap_path, .n_steps = N_SNAP_STEPS, .steps = tr->snap_steps,
                                    .n_sent = N_SNAP_SENTENCES, .text = SNAP_SENTENCES, .src = tr->snap_ids,
                                    .len = tr->snap_len, .tokens = tr->snap_words};
    return 0;
}

/* After training: a held-out eval of the first --eval-limit pairs, whose best
 * coreference head `run` and `demo` read from the checkpoint. */
static int quick_eval(Training *tr, const TrainArgs *a) {
    if (a->eval_limit <= 0) return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/heldout.tsv", a->corpus);
    if (access(path, R_OK) != 0) {
        if (!a->quiet) fprintf(stderr, "train: no %s, so no quick eval and no coreference_head metadata\n", path);
        return 0;
    }
    EvalOptions eo = {.limit = (int)a->eval_limit, .batch = 64};
    EvalReport er;
    if (eval_run(&tr->m, &tr->v, path, &eo, &er, tr->err, sizeof tr->err)) {
        cli_error("eval after training: %s", tr->err);
        return -1;
    }
    train_meta_quick_eval(&tr->meta, &er);
    if (!a->quiet)
        fprintf(stderr, "train: quick eval (%s, %ld pairs, %.1f s): %s\n", path, er.n_pairs, er.seconds, tr->meta.eval);
    return 0;
}

static void training_free(Training *tr) {
    for (int k = 0; k < N_SNAP_SENTENCES; k++) sentence_free(&tr->snap[k]);
    free(tr->snap_path);
    free(tr->cmd);
    train_meta_free(&tr->meta);
    free(tr->lang_flags);
    adam_free(&tr->adam);
    model_free(&tr->m);
    train_set_free(&tr->set);
    vocab_free(&tr->v);
}

int cli_train(int argc, char **argv) {
    TrainArgs a;
    int rc = parse_args(&a, argc, argv);
    if (rc) return rc == 1 ? 0 : rc;
    static Training tr;   /* large (metadata text); one per process */
    memset(&tr, 0, sizeof tr);
    train_set_init(&tr.set);
    int status = 1;
    if (check_out_path(a.out) || load_corpus(&tr, &a)) goto cleanup;
    if (a.resume ? resume_model(&tr, &a) : new_model(&tr, &a)) goto cleanup;
    if (check_plan(&tr, &a)) goto cleanup;
    Progress progress = {0};
    TrainOptions o = train_options(&tr, &a, &progress);
    tr.cmd = join_args("attnviz train", argc, argv);
    if (!tr.cmd || train_meta_describe(&tr.meta, tr.cmd, &o, &tr.m.config, &tr.set, tr.lang_flags)) {
        cli_error("out of memory");
        goto cleanup;
    }
    train_meta_pairs(&tr.meta, tr.meta_kv);   /* the run's, for the checkpoints during training */
    if (language_masks(&tr)) goto cleanup;
    if (a.snapshots && prepare_snapshots(&tr, &a, &o)) goto cleanup;
    const ModelConfig *c = &tr.m.config;
    if (!a.quiet)
        fprintf(stderr, "train: %d pairs, vocab %d, model %zu parameters (d_model %d, %d heads, %d+%d layers, d_ff %d, "
                "%s), %ld steps of %ld%s\n", tr.set.n, tr.v.size, tr.m.num_params, c->d_model, c->n_heads,
                c->n_enc_layers, c->n_dec_layers, c->d_ff, c->prenorm ? "pre-norm" : "post-norm", a.steps, a.batch,
                a.resume ? " (resumed)" : "");
    TrainResult res;
    int trained = train_run(&tr.m, &tr.adam, tr.start, &tr.set, &o, &res, tr.err, sizeof tr.err);
    if (progress.mode == 1) fputc('\n', stderr);   /* below the bar */
    if (trained != 0) { cli_error("%s", tr.err); goto cleanup; }
    train_meta_result(&tr.meta, &res);
    /* saved once, after the quick eval, whose head it records; saved as well
     * when that eval fails, so a failing eval loses no training */
    int evaluated = quick_eval(&tr, &a);
    train_meta_pairs(&tr.meta, tr.meta_kv);
    if (train_save_checkpoint(&tr.m, &tr.adam, res.step_end, &o, tr.meta_kv, tr.err, sizeof tr.err)) {
        cli_error("%s", tr.err);
        goto cleanup;
    }
    if (evaluated != 0) goto cleanup;
    if (!a.quiet)
        fprintf(stderr, "train: done in %.1f s, %.0f tokens/s, loss %.4f -> %.4f; wrote %s (+ .state)%s%s\n",
                res.seconds, res.tokens_per_sec, res.first_loss, res.last_loss, a.out,
                tr.snap_path ? " and " : "", tr.snap_path ? tr.snap_path : "");
    status = 0;
cleanup:
    training_free(&tr);
    return status;
}
