/* llama_dump.c — command modes of the unit-test binary that let the Python
 * tests (tests/test_llama.py) compare the Llama forward pass and the llama2.c
 * tokenizer with their independent references: the model's own arrays
 * (logits, q and k per layer) that no attnviz command writes:
 *
 *   test_unit --llama-dump MODEL [--tokenizer TOK.bin] [--steps] [--out DIR]
 *             (--ids "1 2 3" | --text TEXT)
 *       MODEL is a Hugging Face folder or a llama2.c .bin; TEXT needs the
 *       tokenizer (llama2.c's, with BOS).  Prints {"ids": […], "tokens": […],
 *       "model": {…}} on stdout; with --out writes DIR/trace.json (the trace,
 *       every head), DIR/logits.f32 (T, V) and DIR/qk.f32: per layer q before
 *       RoPE (T, H·D), q after, k before (T, Hkv·D), k after, float32.
 *   test_unit --llama2c-encode TOK.bin
 *       every stdin line a JSON string; prints a JSON list of ids (with BOS)
 *       per line, or {"error": "…"}.
 * Errors: "error: …" on stderr and exit status 1. */
#include "family/stack.h"
#include "family/llama2c.h"
#include "tokenize/llama2c_tok.h"
#include "trace/trace.h"
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int llama_dump_main(int argc, char **argv);

static int fail(const char *msg) {
    fprintf(stderr, "error: %s\n", msg);
    return 1;
}

static int load_model(StackModel *m, const char *path, char *err, size_t n) {
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) return stack_model_load(m, path, err, n);
    return llama2c_load(m, path, err, n);
}

static int write_floats(const char *dir, const char *name, const float *const *parts, const size_t *counts, int n_parts) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    for (int i = 0; i < n_parts; i++) fwrite(parts[i], sizeof(float), counts[i], f);
    return fclose(f);
}

/* DIR/logits.f32 and DIR/qk.f32 of the last pass. */
static int write_arrays(StackModel *m, const char *dir, char *err, size_t errlen) {
    const StackConfig *c = &m->c;
    int T = m->a.T, V = c->n_vocab;
    float *lg = malloc((size_t)T * V * sizeof *lg);
    if (!lg) return -1;
    for (int t = 0; t < T; t++)
        if (stack_model_logits(m, t, lg + (size_t)t * V, err, errlen)) { free(lg); return -1; }
    const float *p1[1] = {lg};
    size_t n1[1] = {(size_t)T * V};
    int rc = write_floats(dir, "logits.f32", p1, n1, 1);
    free(lg);
    size_t QD = (size_t)T * c->n_head * c->head_dim, KD = (size_t)T * c->n_kv_head * c->head_dim;
    const float *parts[4 * STACK_MAX_LAYERS];
    size_t counts[4 * STACK_MAX_LAYERS];
    for (int l = 0; l < c->n_layer; l++) {
        parts[4 * l] = m->a.q_pre + l * QD; parts[4 * l + 1] = m->a.q_rot + l * QD;
        parts[4 * l + 2] = m->a.k_pre + l * KD; parts[4 * l + 3] = m->a.k_rot + l * KD;
        counts[4 * l] = counts[4 * l + 1] = QD;
        counts[4 * l + 2] = counts[4 * l + 3] = KD;
    }
    return rc || write_floats(dir, "qk.f32", parts, counts, 4 * c->n_layer) ? -1 : 0;
}

/* The ids of --ids "1 2 3" (malloc'd). */
static int parse_ids(const char *s, int **ids, int *n) {
    *n = 0;
    *ids = malloc((strlen(s) / 2 + 2) * sizeof **ids);
    if (!*ids) return -1;
    char *end;
    for (;;) {
        long v = strtol(s, &end, 10);
        if (end == s) break;
        (*ids)[(*n)++] = (int)v;
        s = end;
    }
    return *n > 0 ? 0 : -1;
}

static void print_result(const StackModel *m, const int *ids, char **tokens, int T) {
    cJSON *o = cJSON_CreateObject(), *ji = cJSON_AddArrayToObject(o, "ids"), *jt = cJSON_AddArrayToObject(o, "tokens");
    for (int t = 0; t < T; t++) {
        cJSON_AddItemToArray(ji, cJSON_CreateNumber(ids[t]));
        cJSON_AddItemToArray(jt, cJSON_CreateString(tokens[t]));
    }
    char mj[1024];
    stack_model_json(m, mj, sizeof mj);
    cJSON_AddItemToObject(o, "model", cJSON_Parse(mj));
    char *s = cJSON_PrintUnformatted(o);
    printf("%s\n", s);
    free(s);
    cJSON_Delete(o);
}

typedef struct { const char *model, *tok, *ids, *text, *out; int steps; } DumpArgs;

static int dump(const DumpArgs *d) {
    char err[1024];
    StackModel m;
    Llama2cTok tok = {0};
    Trace tr;
    trace_init(&tr);
    int *ids = NULL, T = 0, rc = 1;
    char **tokens = NULL;
    if (load_model(&m, d->model, err, sizeof err)) return fail(err);
    if (d->tok && llama2c_tok_load(&tok, d->tok, m.c.n_vocab, err, sizeof err)) { fail(err); goto done; }
    if (d->text && !d->tok) { fail("--text needs --tokenizer"); goto done; }
    if (d->text ? llama2c_tok_encode(&tok, d->text, 1, 0, &ids, &T, err, sizeof err)
                : !d->ids || parse_ids(d->ids, &ids, &T)) {
        fail(d->text ? err : "--ids needs numbers");
        goto done;
    }
    tokens = calloc((size_t)T, sizeof *tokens);
    for (int t = 0; tokens && t < T; t++) {
        char buf[64];
        size_t len;
        const char *p = d->tok ? llama2c_tok_decode(&tok, t ? ids[t - 1] : -1, ids[t], &len) : NULL;
        if (p) tokens[t] = strndup(p, len);
        else { snprintf(buf, sizeof buf, "%d", ids[t]); tokens[t] = strdup(buf); }
    }
    StackSteps steps = {.all = 1};
    m.keep_qk = 1;   /* qk.f32 holds every layer's */
    if (!tokens || stack_model_forward(&m, ids, T, T, d->out ? &tr : NULL, (const char *const *)tokens,
                                       d->steps ? &steps : NULL, err, sizeof err)) {
        fail(tokens ? err : "out of memory");
        goto done;
    }
    if (d->out) {
        char path[4200];
        snprintf(path, sizeof path, "%s/trace.json", d->out);
        if (trace_write_json(&tr, path, err, sizeof err) || write_arrays(&m, d->out, err, sizeof err)) {
            fail(err);
            goto done;
        }
    }
    print_result(&m, ids, tokens, T);
    rc = 0;
done:
    for (int t = 0; tokens && t < T; t++) free(tokens[t]);
    free(tokens); free(ids);
    trace_free(&tr);
    llama2c_tok_free(&tok);
    stack_model_free(&m);
    return rc;
}

static int encode_lines(const char *path) {
    char err[1024];
    Llama2cTok tok;
    if (llama2c_tok_load(&tok, path, 0, err, sizeof err)) return fail(err);
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        cJSON *s = cJSON_Parse(line), *out = NULL;
        int *ids = NULL, n = 0;
        if (!cJSON_IsString(s)) { out = cJSON_CreateObject(); cJSON_AddStringToObject(out, "error", "not a JSON string"); }
        else if (llama2c_tok_encode(&tok, s->valuestring, 1, 0, &ids, &n, err, sizeof err)) {
            out = cJSON_CreateObject();
            cJSON_AddStringToObject(out, "error", err);
        } else out = cJSON_CreateIntArray(ids, n);
        char *txt = cJSON_PrintUnformatted(out);
        printf("%s\n", txt);
        free(txt); free(ids);
        cJSON_Delete(out); cJSON_Delete(s);
    }
    free(line);
    llama2c_tok_free(&tok);
    return 0;
}

int llama_dump_main(int argc, char **argv) {
    if (!strcmp(argv[1], "--llama2c-encode")) return argc == 3 ? encode_lines(argv[2]) : fail("--llama2c-encode TOK.bin");
    if (argc < 3) return fail("--llama-dump MODEL [--tokenizer TOK] [--steps] [--out DIR] (--ids \"1 2\" | --text T)");
    DumpArgs d = {.model = argv[2]};
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--steps")) { d.steps = 1; continue; }
        if (!v) return fail("an option needs a value");
        if (!strcmp(a, "--tokenizer")) d.tok = v;
        else if (!strcmp(a, "--ids")) d.ids = v;
        else if (!strcmp(a, "--text")) d.text = v;
        else if (!strcmp(a, "--out")) d.out = v;
        else return fail("unknown option");
        i++;
    }
    return dump(&d);
}
