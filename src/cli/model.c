/* cli_model.c — model-file subcommands:
 *   attnviz info --model PATH [--json]           config, parameter count, tensors
 *   attnviz model-init --config JSON|FILE --out PATH [--seed N] [--vocab FILE]
 *                                                a random-init checkpoint
 *   attnviz forward --model PATH --src IDS --tgt IDS --out FILE.json [--steps]
 *                                                (hidden, for tests) every attention
 *                                                map and the logits of a batch
 *   attnviz forward --model PATH --bench N [--batch B] [--len T]
 *                                                (hidden) times N forward+backward
 *                                                steps on random tokens: tokens/s
 * IDS: token ids separated by spaces, batch items separated by ';' ("5 6 7;8 9").
 * Shorter items are padded with id 0 (<pad>) and masked by their length. */
#include "cli/cli.h"
#include "pipeline/model_file.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "trace/trace.h"
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* Reads a whole file (NUL-terminated); NULL on error. */
static char *read_text(const char *path, size_t max) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap) break;
        if (cap >= max) { free(buf); buf = NULL; break; }
        char *nb = realloc(buf, cap * 2 + 1);
        if (!nb) { free(buf); buf = NULL; break; }
        buf = nb;
        cap *= 2;
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

/* ------------------------------------------------------------------ info */

int cli_info(int argc, char **argv) {
    const char *path = NULL;
    int as_json = 0;
    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: attnviz info --model PATH [--json]\n\n"
                   "Prints a model file's configuration, parameter count and tensors.\n"
                   "  --model PATH   a checkpoint (.safetensors) written by attnviz\n"
                   "                 (default: the shipped model, as attnviz run finds it)\n"
                   "  --json         print the configuration as one JSON object\n");
            return 0;
        } else if (!strcmp(argv[i], "--model") && i + 1 < argc) path = argv[++i];
        else if (!strcmp(argv[i], "--json")) as_json = 1;
        else { cli_error("info: unknown option '%s' (try: attnviz info --help)", argv[i]); return 2; }
    }
    char default_path[4096];
    if (!path) {
        if (model_file_find_default(default_path, sizeof default_path) != 0) {
            cli_error("info: no shipped model found; give --model PATH (try: attnviz info --help)");
            return 1;
        }
        path = default_path;
    }
    Model m;
    char **vocab = NULL, *meta = NULL, err[512];
    int nv = 0;
    if (checkpoint_load(path, &m, &vocab, &nv, &meta, err, sizeof err)) {
        cli_error("%s", err);
        return 1;
    }
    char cfg[1024];
    model_config_json(&m.config, cfg, sizeof cfg);
    if (as_json) {
        printf("%s\n", cfg);
    } else {
        const ModelConfig *c = &m.config;
        printf("model:        %s\n", path);
        printf("format:       %s version %s\n", CHECKPOINT_FORMAT, CHECKPOINT_VERSION);
        printf("architecture: %s, %s-norm\n", model_arch_name(c->arch), c->prenorm ? "pre" : "post");
        printf("d_model:      %d   heads: %d   d_k: %d   d_ff: %d\n", c->d_model, c->n_heads,
               c->d_model / c->n_heads, c->d_ff);
        printf("layers:       encoder %d, decoder %d\n", c->n_enc_layers, c->n_dec_layers);
        printf("max_len:      %d\n", c->max_len);
        printf("vocabulary:   %d tokens\n", c->vocab_size);
        printf("parameters:   %zu\n", m.num_params);
        ModelParam tab[MODEL_MAX_TENSORS];
        int nt = model_param_table(c, NULL, tab, MODEL_MAX_TENSORS);
        printf("tensors:\n");
        for (int t = 0; t < nt; t++) {
            printf("  %-14s [", tab[t].name);
            for (int d = 0; d < tab[t].ndim; d++) printf("%s%d", d ? ", " : "", tab[t].shape[d]);
            printf("]\n");
        }
        cJSON *mj = cJSON_Parse(meta);
        for (const cJSON *it = mj ? mj->child : NULL; it; it = it->next) {
            if (!strcmp(it->string, "format") || !strcmp(it->string, "version") ||
                !strcmp(it->string, "config") || !strcmp(it->string, "vocab")) continue;
            printf("%s: %s\n", it->string, it->valuestring);
        }
        cJSON_Delete(mj);
    }
    free(meta);
    checkpoint_free_vocab(vocab, nv);
    model_free(&m);
    return 0;
}

/* ------------------------------------------------------------ model-init */

int cli_model_init(int argc, char **argv) {
    const char *config = NULL, *out = NULL, *vocab_path = NULL;
    unsigned long long seed = 1;
    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: attnviz model-init --config JSON|FILE --out PATH [--seed N] [--vocab FILE]\n\n"
                   "Writes an untrained (randomly initialised) model checkpoint.\n"
                   "  --config   JSON text or a file holding it: {\"arch\": \"encoder-decoder\"|\"encoder-only\"|\n"
                   "             \"decoder-only\", \"vocab_size\", \"d_model\", \"n_heads\", \"d_ff\",\n"
                   "             \"n_enc_layers\", \"n_dec_layers\", \"max_len\", \"norm\": \"post\"|\"pre\"}\n"
                   "  --seed N   random seed (default 1); same seed, same bytes\n"
                   "  --vocab    one token per line (vocab_size lines); default <pad> <unk> <bos>\n"
                   "             <eos> <2fr> <2vi> w6 w7 ...\n");
            return 0;
        } else if (!strcmp(argv[i], "--config") && i + 1 < argc) config = argv[++i];
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--vocab") && i + 1 < argc) vocab_path = argv[++i];
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            char *end;
            errno = 0;
            seed = strtoull(argv[++i], &end, 10);
            if (errno || *end || !*argv[i]) { cli_error("model-init: --seed needs a non-negative integer"); return 2; }
        } else { cli_error("model-init: unknown option '%s' (try: attnviz model-init --help)", argv[i]); return 2; }
    }
    if (!config || !out) { cli_error("model-init: --config and --out are required (try: attnviz model-init --help)"); return 2; }
    char *text = NULL;
    const char *p = config;
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (*p != '{') {
        text = read_text(config, 1 << 20);
        if (!text) { cli_error("model-init: cannot read config file %s: %s", config, strerror(errno)); return 1; }
        p = text;
    }
    ModelConfig cfg;
    char err[512];
    if (model_config_from_json(&cfg, p, err, sizeof err)) {
        free(text);
        cli_error("model-init: %s", err);
        return 1;
    }
    free(text);
    int rc = 1, nv = 0;
    char **vocab = calloc((size_t)cfg.vocab_size, sizeof(char *));
    char *vtext = NULL;
    Model m;
    memset(&m, 0, sizeof m);
    if (!vocab) { cli_error("out of memory"); goto done; }
    if (vocab_path) {
        vtext = read_text(vocab_path, 256u << 20);
        if (!vtext) { cli_error("model-init: cannot read vocabulary %s: %s", vocab_path, strerror(errno)); goto done; }
        for (char *line = vtext, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next) *next++ = 0;
            size_t len = strlen(line);
            if (len && line[len - 1] == '\r') line[len - 1] = 0;
            if (nv == cfg.vocab_size) { nv++; break; }
            vocab[nv++] = line;
        }
        if (nv != cfg.vocab_size) {
            cli_error("model-init: %s has %s%d tokens but vocab_size is %d", vocab_path,
                      nv > cfg.vocab_size ? "more than " : "", nv > cfg.vocab_size ? cfg.vocab_size : nv,
                      cfg.vocab_size);
            nv = 0;
            goto done;
        }
    } else {
        static const char *special[] = { "<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>" };
        vtext = malloc((size_t)cfg.vocab_size * 16);
        if (!vtext) { cli_error("out of memory"); goto done; }
        for (nv = 0; nv < cfg.vocab_size; nv++) {
            vocab[nv] = vtext + (size_t)nv * 16;
            if (nv < 6) snprintf(vocab[nv], 16, "%s", special[nv]);
            else snprintf(vocab[nv], 16, "w%d", nv);
        }
    }
    if (model_init_random(&m, &cfg, (uint64_t)seed)) { cli_error("model-init: %s", m.err); goto done; }
    char seedtxt[32];
    snprintf(seedtxt, sizeof seedtxt, "%llu", seed);
    const char *extra[] = { "init", "random", "seed", seedtxt, NULL };
    if (checkpoint_save(out, &m, (const char *const *)vocab, nv, extra, err, sizeof err)) {
        cli_error("model-init: %s", err);
        goto done;
    }
    printf("wrote %s (%s, %zu parameters)\n", out, model_arch_name(cfg.arch), m.num_params);
    rc = 0;
done:
    model_free(&m);
    free(vocab);
    free(vtext);
    return rc;
}

/* --------------------------------------------------------------- forward */

/* Parses "1 2 3;4 5" into a padded (B, T) id matrix + lengths. */
static int parse_ids(const char *s, int **ids, int **lens, int *B, int *T) {
    int b = 1, t = 0, maxt = 0;
    for (const char *p = s; *p; p++) if (*p == ';') b++;
    int *len = calloc((size_t)b, sizeof(int));
    if (!len) return -1;
    /* pass 1: lengths */
    int cur = 0;
    const char *p = s;
    while (1) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ';' || !*p) {
            len[cur] = t;
            if (t > maxt) maxt = t;
            t = 0;
            if (!*p) break;
            cur++; p++;
            continue;
        }
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0 || v > 100000000) { free(len); return -1; }
        t++;
        p = end;
    }
    if (maxt == 0) { free(len); return -1; }
    int *m = calloc((size_t)b * maxt, sizeof(int));
    if (!m) { free(len); return -1; }
    cur = 0; t = 0; p = s;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ';') { cur++; t = 0; p++; continue; }
        if (!*p) break;
        char *end;
        m[(size_t)cur * maxt + t++] = (int)strtol(p, &end, 10);
        p = end;
    }
    *ids = m; *lens = len; *B = b; *T = maxt;
    return 0;
}

static cJSON *matrix_json(const float *x, int rows, int cols) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < rows; i++) {
        cJSON *r = cJSON_CreateArray();
        if (!r) { cJSON_Delete(a); return NULL; }
        for (int j = 0; j < cols; j++) {
            float v = x[(size_t)i * cols + j];
            cJSON_AddItemToArray(r, isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull());
        }
        cJSON_AddItemToArray(a, r);
    }
    return a;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Times forward and forward+backward on random tokens (lengths T, T-1, T-2, T-3 to
 * include padding). */
static int forward_bench(Model *m, int steps, int B, int T) {
    const ModelConfig *c = &m->config;
    int V = c->vocab_size, rc = 1;
    if (T > c->max_len) T = c->max_len;
    int *src = malloc(sizeof(int) * (size_t)B * T), *tgt = malloc(sizeof(int) * (size_t)B * T);
    int *y = malloc(sizeof(int) * (size_t)B * T), *sl = malloc(sizeof(int) * (size_t)B);
    int *tl = malloc(sizeof(int) * (size_t)B);
    if (!src || !tgt || !y || !sl || !tl) { cli_error("out of memory"); goto done; }
    uint64_t s = 88172645463325252ULL;
    for (int i = 0; i < B * T; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17; src[i] = (int)(s % (uint64_t)V);
        s ^= s << 13; s ^= s >> 7; s ^= s << 17; tgt[i] = (int)(s % (uint64_t)V);
        s ^= s << 13; s ^= s >> 7; s ^= s << 17; y[i] = (int)(s % (uint64_t)V);
    }
    long ntok_src = 0, ntok_tgt = 0;
    for (int b = 0; b < B; b++) {
        sl[b] = tl[b] = T - b % 4 > 0 ? T - b % 4 : 1;
        ntok_src += sl[b];
        ntok_tgt += tl[b];
    }
    if (c->arch == MODEL_ENCODER_ONLY) ntok_tgt = 0;
    if (c->arch == MODEL_DECODER_ONLY) ntok_src = 0;
    double tf = 0, tb = 0;
    for (int it = 0; it <= steps; it++) {          /* step 0 warms up (allocations) */
        double t0 = now_seconds();
        if (model_forward(m, src, sl, T, tgt, tl, T, B)) { cli_error("%s", m->err); goto done; }
        double t1 = now_seconds();
        if (model_zero_grad(m) || isnan(model_backward(m, y, 0.1f))) { cli_error("%s", m->err); goto done; }
        double t2 = now_seconds();
        if (it) { tf += t1 - t0; tb += t2 - t1; }
    }
    tf /= steps; tb /= steps;
    printf("model %s d_model %d heads %d layers %d+%d d_ff %d vocab %d (%zu parameters)\n",
           model_arch_name(c->arch), c->d_model, c->n_heads, c->n_enc_layers, c->n_dec_layers,
           c->d_ff, V, m->num_params);
    printf("batch %d x %d tokens: forward %.1f ms, backward %.1f ms, step %.1f ms\n",
           B, T, tf * 1e3, tb * 1e3, (tf + tb) * 1e3);
    printf("training: %.0f tokens/s (source+target), %.0f target tokens/s; forward only: %.0f tokens/s\n",
           (ntok_src + ntok_tgt) / (tf + tb), (ntok_tgt ? ntok_tgt : ntok_src) / (tf + tb),
           (ntok_src + ntok_tgt) / tf);
    rc = 0;
done:
    free(src); free(tgt); free(y); free(sl); free(tl);
    return rc;
}

int cli_forward(int argc, char **argv) {
    const char *path = NULL, *src_s = NULL, *tgt_s = NULL, *out = NULL;
    int steps = 0, bench = 0, bench_b = 32, bench_t = 20;
    for (int i = 1; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: attnviz forward --model PATH [--src IDS] [--tgt IDS] --out FILE.json [--steps]\n\n"
                   "Runs the model on token ids and writes every attention map and the logits\n"
                   "(a developer command used by the tests).  IDS: \"5 6 7;8 9\" — ids separated by\n"
                   "spaces, batch items by ';'; shorter items are padded with id 0 and masked.\n"
                   "  --bench N [--batch B] [--len T]   time N training steps (forward+backward)\n"
                   "                                    on random tokens instead (default 32 x 20)\n");
            return 0;
        } else if (!strcmp(argv[i], "--model") && i + 1 < argc) path = argv[++i];
        else if (!strcmp(argv[i], "--src") && i + 1 < argc) src_s = argv[++i];
        else if (!strcmp(argv[i], "--tgt") && i + 1 < argc) tgt_s = argv[++i];
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--steps")) steps = 1;
        else if (!strcmp(argv[i], "--bench") && i + 1 < argc) bench = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) bench_b = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--len") && i + 1 < argc) bench_t = atoi(argv[++i]);
        else { cli_error("forward: unknown option '%s' (try: attnviz forward --help)", argv[i]); return 2; }
    }
    if (!path || (!out && bench <= 0)) { cli_error("forward: --model and --out (or --bench N) are required"); return 2; }
    if (bench > 0 && (bench_b < 1 || bench_b > 4096 || bench_t < 1)) { cli_error("forward: --batch 1..4096, --len >= 1"); return 2; }
    Model m;
    char **vocab = NULL, err[512];
    int nv = 0, rc = 1;
    int *src = NULL, *sl = NULL, *tgt = NULL, *tl = NULL, B = 0, S = 0, T = 0, B2 = 0;
    cJSON *root = NULL;
    char *txt = NULL;
    if (checkpoint_load(path, &m, &vocab, &nv, NULL, err, sizeof err)) { cli_error("%s", err); return 1; }
    if (bench > 0) {
        rc = forward_bench(&m, bench, bench_b, bench_t);
        goto done;
    }
    if (m.config.arch != MODEL_DECODER_ONLY) {
        if (!src_s || parse_ids(src_s, &src, &sl, &B, &S)) { cli_error("forward: --src needs ids like \"5 6 7;8 9\""); goto done; }
    }
    if (m.config.arch != MODEL_ENCODER_ONLY) {
        if (!tgt_s || parse_ids(tgt_s, &tgt, &tl, &B2, &T)) { cli_error("forward: --tgt needs ids like \"5 6 7;8 9\""); goto done; }
        if (B && B2 != B) { cli_error("forward: --src has %d items but --tgt has %d", B, B2); goto done; }
        B = B2;
    }
    if (model_forward(&m, src, sl, S, tgt, tl, T, B)) { cli_error("%s", m.err); goto done; }
    root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "B", B);
    cJSON_AddNumberToObject(root, "S", m.S);
    cJSON_AddNumberToObject(root, "T", m.T);
    cJSON *lg = cJSON_AddArrayToObject(root, "logits");
    for (int b = 0; b < B; b++)
        cJSON_AddItemToArray(lg, matrix_json(m.acts.logits + (size_t)b * m.To * m.config.vocab_size,
                                             m.To, m.config.vocab_size));
    cJSON *items = cJSON_AddArrayToObject(root, "items");
    for (int b = 0; b < B; b++) {
        Trace tr;
        trace_init(&tr);
        const char **stok = NULL, **ttok = NULL;
        stok = calloc((size_t)(m.S + 1), sizeof(char *));
        ttok = calloc((size_t)(m.T + 1), sizeof(char *));
        for (int t = 0; stok && t < m.S; t++) stok[t] = vocab[m.src[(size_t)b * m.S + t]];
        for (int t = 0; ttok && t < m.T; t++) ttok[t] = vocab[m.tgt[(size_t)b * m.T + t]];
        int trc = !stok || !ttok ? -1 : model_trace(&m, b, &tr, stok, ttok, steps);
        free(stok); free(ttok);
        if (trc) { trace_free(&tr); cli_error("%s", m.err); goto done; }
        cJSON *item = cJSON_CreateObject(), *maps = cJSON_AddArrayToObject(item, "maps");
        cJSON_AddItemToArray(items, item);
        for (int k = 0; k < tr.n_maps; k++) {
            const TraceMap *mp = &tr.maps[k];
            cJSON *mo = cJSON_CreateObject();
            cJSON_AddItemToArray(maps, mo);
            cJSON_AddStringToObject(mo, "id", mp->id);
            cJSON_AddNumberToObject(mo, "d_k", mp->d_k);
            cJSON *q = cJSON_AddArrayToObject(mo, "queries"), *kk = cJSON_AddArrayToObject(mo, "keys");
            for (int i = 0; i < mp->Tq; i++) cJSON_AddItemToArray(q, cJSON_CreateString(mp->queries[i]));
            for (int j = 0; j < mp->Tk; j++) cJSON_AddItemToArray(kk, cJSON_CreateString(mp->keys[j]));
            cJSON *mk = cJSON_AddArrayToObject(mo, "mask");
            for (int i = 0; i < mp->Tq; i++) {
                cJSON *r = cJSON_CreateArray();
                for (int j = 0; j < mp->Tk; j++) cJSON_AddItemToArray(r, cJSON_CreateNumber(mp->mask[(size_t)i * mp->Tk + j]));
                cJSON_AddItemToArray(mk, r);
            }
            cJSON *hs = cJSON_AddArrayToObject(mo, "heads");
            for (int h = 0; h < mp->n_heads; h++) {
                const TraceHead *th = &mp->heads[h];
                cJSON *ho = cJSON_CreateObject();
                cJSON_AddItemToArray(hs, ho);
                cJSON_AddItemToObject(ho, "weights", matrix_json(th->weights, mp->Tq, mp->Tk));
                if (th->scores) cJSON_AddItemToObject(ho, "scores", matrix_json(th->scores, mp->Tq, mp->Tk));
                if (th->scaled) cJSON_AddItemToObject(ho, "scaled", matrix_json(th->scaled, mp->Tq, mp->Tk));
                if (th->masked) cJSON_AddItemToObject(ho, "masked", matrix_json(th->masked, mp->Tq, mp->Tk));
                if (th->output) cJSON_AddItemToObject(ho, "output", matrix_json(th->output, mp->Tq, mp->Dv));
            }
        }
        trace_free(&tr);
    }
    txt = cJSON_PrintUnformatted(root);
    if (!txt) { cli_error("out of memory"); goto done; }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", out);
    FILE *f = fopen(tmp, "wb");
    if (!f) { cli_error("forward: cannot write %s: %s", tmp, strerror(errno)); goto done; }
    int ok = fputs(txt, f) >= 0;
    if (fclose(f) || !ok || rename(tmp, out)) {
        remove(tmp);
        cli_error("forward: cannot write %s", out);
        goto done;
    }
    rc = 0;
done:
    cJSON_Delete(root);
    free(txt);
    free(src); free(sl); free(tgt); free(tl);
    checkpoint_free_vocab(vocab, nv);
    model_free(&m);
    return rc;
}
