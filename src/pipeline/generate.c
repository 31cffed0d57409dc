/* generate.c — see generate.h. */
#include "pipeline/generate.h"
#include "core/errmsg.h"
#include "core/rng.h"
#include "family/kvcache.h"
#include "core/memory.h"
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t which) {
    struct timespec ts;
    clock_gettime(which, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The tokens that end a text: up to 2 ids into stop, how many. */
static int stop_ids(const HfFile *f, int *stop) {
    int n = 0;
    if (f->family == HF_FILE_LLAMA2C) {
        stop[n++] = LLAMA2C_EOS;
        stop[n++] = LLAMA2C_BOS;   /* llama2.c's run.c stops at BOS */
    } else if (f->tj && f->tok_from != HF_TOK_GPT2_FILES) {
        int id = tokjson_eos_id(f->tj) >= 0 ? tokjson_eos_id(f->tj) : f->tj_eos;
        if (id >= 0) stop[n++] = id;
    } else {
        int id = hf_file_id(f, "<|endoftext|>");
        if (id >= 0) stop[n++] = id;
    }
    return n;
}

/* Probabilities (V) = softmax(logits), in double for the sum. */
static void softmax(const float *logits, int V, double *p) {
    double mx = -INFINITY, sum = 0;
    for (int v = 0; v < V; v++) if (logits[v] > mx) mx = logits[v];
    for (int v = 0; v < V; v++) sum += (p[v] = exp(logits[v] - mx));
    for (int v = 0; v < V; v++) p[v] /= sum;
}

/* idx (K): the K largest logits, largest first, the lower id first on a tie
 * (insertion into a sorted list: V·K comparisons at most). */
static void top_ids(const float *logits, int V, int K, int *idx) {
    int n = 0;
    for (int v = 0; v < V; v++) {
        if (n == K && !(logits[v] > logits[idx[K - 1]])) continue;
        int j = n < K ? n++ : K - 1;
        while (j > 0 && logits[v] > logits[idx[j - 1]]) { idx[j] = idx[j - 1]; j--; }
        idx[j] = v;
    }
}

/* The candidates of one step and the token chosen among them. */
static int choose(const HfFile *f, const float *logits, int V, const GenSpec *spec, Rng *rng, double *p, int *idx,
                  HfCandidate *top) {
    int K = spec->top_k;
    softmax(logits, V, p);
    top_ids(logits, V, K, idx);
    for (int i = 0; i < K; i++) {
        top[i].id = idx[i];
        top[i].prob = (float)p[idx[i]];
        hf_file_token_text(f, idx[i], top[i].text, sizeof top[i].text);
    }
    if (spec->temperature <= 0) return idx[0];
    double sum = 0, mx = logits[idx[0]];
    for (int i = 0; i < K; i++) sum += exp((logits[idx[i]] - mx) / spec->temperature);
    double r = rng_double(rng) * sum;
    for (int i = 0; i < K; i++) {
        r -= exp((logits[idx[i]] - mx) / spec->temperature);
        if (r <= 0) return idx[i];
    }
    return idx[K - 1];
}

/* The written tokens ids[from..n) as text, spaces and bytes as the
 * tokenizer's decoder gives them.  0, or -1 with err. */
static int decode_text(const HfFile *f, const int *ids, int from, int n, char **out, char *err, size_t errlen) {
    if (f->tj) return tokjson_decode(f->tj, ids + from, n - from, 1, out, err, errlen);
    StrBuf sb = {0};
    int rc = strbuf_printf(&sb, "%s", "");
    for (int i = from; i < n; i++) {   /* llama2.c's tokenizer.bin */
        size_t len;
        const char *s = llama2c_tok_decode(&f->l2c, ids[i - 1], ids[i], &len);
        rc |= strbuf_printf(&sb, "%.*s", (int)len, s);
    }
    if (rc) { free(sb.buf); return errmsg_set(err, errlen, "out of memory"); }
    *out = sb.buf;
    return 0;
}

static int check_spec(const HfFile *f, const GenSpec *spec, int n_prompt, char *err, size_t errlen) {
    HfShape s = hf_file_shape(f);
    if (spec->steps < 1) return errmsg_set(err, errlen, "--steps is %d; write at least 1 token", spec->steps);
    if (spec->top_k < 1 || spec->top_k > s.n_vocab)
        return errmsg_set(err, errlen, "--top-k is %d; this model's vocabulary has %d tokens (use 1 to %d)",
                          spec->top_k, s.n_vocab, s.n_vocab);
    if (spec->temperature < 0 || !isfinite(spec->temperature))
        return errmsg_set(err, errlen, "--temperature must be 0 (greedy) or positive");
    if (n_prompt > s.n_pos)
        return errmsg_set(err, errlen, "the prompt is %d tokens; this model's context is %d", n_prompt, s.n_pos);
    if (n_prompt + spec->steps > s.n_pos)
        return errmsg_set(err, errlen, "the prompt is %d tokens and --steps %d asks for %d more; this model's context "
                          "is %d (use --steps %d or fewer)", n_prompt, spec->steps, spec->steps, s.n_pos,
                          s.n_pos - n_prompt);
    double N = (double)n_prompt + spec->steps, bytes = 4.0 * s.n_layer * s.n_head * N * N   /* the maps' rows */
                                                     + 8.0 * s.n_layer * s.n_kv_head * s.head_dim * N;   /* the cache */
    char what[160];
    snprintf(what, sizeof what, "%.0f tokens of generation with every head's rows (%d layers × %d heads)", N, s.n_layer,
             s.n_head);
    return memory_check(bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)bytes, what, "fewer --steps, or a shorter prompt",
                        err, errlen);
}

/* g's buffers for a prompt of in->n tokens and spec->steps more. */
static int alloc_generation(Generation *g, const HfFile *f, const HfInput *in, const GenSpec *spec) {
    HfShape s = hf_file_shape(f);
    g->n_prompt = g->n = in->n;
    g->N = in->n + spec->steps;
    g->L = s.n_layer; g->H = s.n_head; g->Hkv = s.n_kv_head; g->D = s.head_dim;
    g->top_k = spec->top_k;
    g->temperature = spec->temperature;
    g->seed = spec->seed;
    if (!(g->prompt = strdup(spec->prompt))) return -1;
    size_t N = (size_t)g->N;
    g->ids = malloc(N * sizeof *g->ids);
    g->tokens = calloc(N, sizeof *g->tokens);
    g->top = calloc((size_t)spec->steps * (size_t)spec->top_k, sizeof *g->top);
    g->maps = calloc((size_t)g->L * g->H * N * N, sizeof *g->maps);
    if (!g->ids || !g->tokens || !g->top || !g->maps) return -1;
    for (int i = 0; i < in->n; i++) {
        g->ids[i] = in->ids[i];
        if (!(g->tokens[i] = strdup(in->tokens[i]))) return -1;
    }
    kv_cache_bytes(f, &g->kv_per_token, &g->kv_per_token_mha);
    return 0;
}

/* Reads token ids[q] into the cache, its rows into g->maps; logits when wanted. */
static int read_token(Generation *g, KvCache *kv, HfFile *f, int q, float *rows, float *logits, char *err,
                      size_t errlen) {
    if (kv_cache_step(kv, f, g->ids[q], rows, logits, err, errlen)) return -1;
    size_t N = (size_t)g->N;
    for (int lh = 0; lh < g->L * g->H; lh++)
        memcpy(g->maps + ((size_t)lh * N + q) * N, rows + (size_t)lh * N, (size_t)(q + 1) * sizeof *rows);
    return 0;
}

/* The steps after the prompt's first n_prompt - 1 tokens are in the cache. */
static int write_tokens(Generation *g, KvCache *kv, HfFile *f, const GenSpec *spec, float *rows, char *err,
                        size_t errlen) {
    HfShape s = hf_file_shape(f);
    int stop[2], n_stop = stop_ids(f, stop), rc = -1;
    float *logits = malloc((size_t)s.n_vocab * sizeof *logits);
    double *p = malloc((size_t)s.n_vocab * sizeof *p);
    int *idx = malloc((size_t)spec->top_k * sizeof *idx);
    Rng rng = rng_from_state(spec->seed);
    if (!logits || !p || !idx) { errmsg_set(err, errlen, "out of memory"); goto done; }
    double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    for (int step = 0; step < spec->steps && !g->stopped; step++) {
        int q = g->n - 1;
        if (read_token(g, kv, f, q, rows, logits, err, errlen)) goto done;
        int id = choose(f, logits, s.n_vocab, spec, &rng, p, idx, g->top + (size_t)step * spec->top_k);
        g->ids[g->n++] = id;
        g->n_steps++;
        for (int i = 0; i < n_stop; i++) g->stopped |= id == stop[i];
    }
    g->seconds = clock_s(CLOCK_MONOTONIC) - t0;
    g->cpu_seconds = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    rc = read_token(g, kv, f, g->n - 1, rows, NULL, err, errlen);   /* the last token's own row */
done:
    free(logits); free(p); free(idx);
    return rc;
}

int generate_run(Generation *g, Net *n, const GenSpec *spec, char *err, size_t errlen) {
    memset(g, 0, sizeof *g);
    if (n->own)
        return errmsg_set(err, errlen, "generate needs a decoder; %s is %s", n->mf.path,
                          model_arch_name(n->mf.m.config.arch));
    HfFile *f = &n->fam;
    HfInput in;
    if (hf_file_encode(f, spec->prompt, &in, err, errlen)) return -1;
    KvCache kv = {0};
    float *rows = NULL;
    int rc = -1;
    if (check_spec(f, spec, in.n, err, errlen)) goto done;
    if (alloc_generation(g, f, &in, spec)) { errmsg_set(err, errlen, "out of memory"); goto done; }
    if (kv_cache_init(&kv, f, g->N, err, errlen)) goto done;
    rows = malloc((size_t)g->L * g->H * g->N * sizeof *rows);
    if (!rows) { errmsg_set(err, errlen, "out of memory"); goto done; }
    for (int q = 0; q < g->n_prompt - 1; q++)
        if (read_token(g, &kv, f, q, rows, NULL, err, errlen)) goto done;
    if (write_tokens(g, &kv, f, spec, rows, err, errlen)) goto done;
    for (int i = g->n_prompt; i < g->n; i++) {
        char buf[256];
        hf_file_token_text(f, g->ids[i], buf, sizeof buf);
        if (!(g->tokens[i] = strdup(buf))) { errmsg_set(err, errlen, "out of memory"); goto done; }
    }
    rc = decode_text(f, g->ids, g->n_prompt, g->n, &g->text, err, errlen);
done:
    free(rows);
    kv_cache_free(&kv);
    hf_input_free(&in);
    if (rc) generation_free(g);
    return rc;
}

double generate_tokens_per_s(const Generation *g) {
    return g->seconds > 0 ? g->n_steps / g->seconds : 0.0;
}

size_t generate_kv_bytes(const Generation *g, int s) {
    return (size_t)(g->n_prompt + s) * g->kv_per_token;
}

const float *generate_row(const Generation *g, int l, int h, int q) {
    return g->maps + (((size_t)l * g->H + h) * g->N + q) * g->N;
}

void generation_free(Generation *g) {
    if (!g) return;
    if (g->tokens)
        for (int i = 0; i < g->N; i++) free(g->tokens[i]);
    free(g->tokens); free(g->ids); free(g->top); free(g->maps); free(g->text); free(g->prompt);
    memset(g, 0, sizeof *g);
}

/* Step s's rows: {"decoder.L.masked_self": [[head 0's row], …], …}. */
static int json_rows(const Generation *g, int q, StrBuf *sb) {
    int rc = strbuf_printf(sb, "{");
    for (int l = 0; l < g->L; l++) {
        rc |= strbuf_printf(sb, "%s\"decoder.%d.masked_self\":[", l ? "," : "", l);
        for (int h = 0; h < g->H; h++) {
            const float *row = generate_row(g, l, h, q);
            rc |= strbuf_printf(sb, "%s[", h ? "," : "");
            for (int j = 0; j <= q; j++) { rc |= strbuf_printf(sb, j ? "," : ""); rc |= strbuf_json_number(sb, row[j]); }
            rc |= strbuf_printf(sb, "]");
        }
        rc |= strbuf_printf(sb, "]");
    }
    return rc | strbuf_printf(sb, "}");
}

static int json_step(const Generation *g, int s, StrBuf *sb) {
    int q = g->n_prompt - 1 + s, id = g->ids[q + 1];
    const HfCandidate *top = g->top + (size_t)s * g->top_k;
    int rc = strbuf_printf(sb, "%s{\"step\":%d,\"query_position\":%d,\"query\":", s ? "," : "", s, q);
    rc |= strbuf_json_string(sb, g->tokens[q]);
    rc |= strbuf_printf(sb, ",\"id\":%d,\"token\":", id);
    rc |= strbuf_json_string(sb, g->tokens[q + 1]);
    rc |= strbuf_printf(sb, ",\"kv_cache_bytes\":%zu,\"top_k\":[", generate_kv_bytes(g, s));
    for (int i = 0; i < g->top_k; i++) {
        rc |= strbuf_printf(sb, "%s{\"id\":%d,\"token\":", i ? "," : "", top[i].id);
        rc |= strbuf_json_string(sb, top[i].text);
        rc |= strbuf_printf(sb, ",\"prob\":");
        rc |= strbuf_json_number(sb, top[i].prob);
        rc |= strbuf_printf(sb, "}");
    }
    rc |= strbuf_printf(sb, "],\"rows\":");
    rc |= json_rows(g, q, sb);
    return rc | strbuf_printf(sb, "}");
}

int generate_json(const Generation *g, StrBuf *sb) {
    int rc = strbuf_printf(sb, "{\"prompt\":");
    rc |= strbuf_json_string(sb, g->prompt);
    rc |= strbuf_printf(sb, ",\"prompt_tokens\":%d,\"decoding\":\"%s\",\"temperature\":%g,\"top_k\":%d,"
                        "\"seed\":%llu,\"text\":", g->n_prompt, g->temperature > 0 ? "sample" : "greedy",
                        g->temperature, g->top_k, g->seed);
    rc |= strbuf_json_string(sb, g->text ? g->text : "");
    rc |= strbuf_printf(sb, ",\"stopped_at_end_of_text\":%s,\"kv_cache\":{\"dtype\":\"float32\",\"n_layers\":%d,"
                        "\"n_heads\":%d,\"n_kv_heads\":%d,\"head_dim\":%d,\"bytes_per_token\":%zu,"
                        "\"bytes_per_token_without_gqa\":%zu,\"positions\":%d},\"steps\":[",
                        g->stopped ? "true" : "false", g->L, g->H, g->Hkv, g->D, g->kv_per_token,
                        g->kv_per_token_mha, g->n);
    for (int s = 0; s < g->n_steps; s++) rc |= json_step(g, s, sb);
    return rc | strbuf_printf(sb, "]}");
}

int generate_trace(const Generation *g, Trace *tr) {
    int n = g->n;
    unsigned char *mask = malloc((size_t)n * n);
    float *w = malloc((size_t)n * n * sizeof *w);
    StrBuf sb = {0};
    int rc = -1;
    if (!mask || !w) goto done;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) mask[(size_t)i * n + j] = (unsigned char)(j <= i);
    if (trace_set_source(tr, NULL, 0) || trace_set_target(tr, (const char *const *)g->tokens, n)) goto done;
    for (int l = 0; l < g->L; l++) {
        char id[64];
        snprintf(id, sizeof id, "decoder.%d.masked_self", l);
        const char *const *tok = (const char *const *)g->tokens;
        TraceMap *map = trace_add_map(tr, &(TraceMapSpec){.id = id, .stack = "decoder", .layer = l,
                                                          .kind = "masked_self", .queries = tok, .Tq = n, .keys = tok,
                                                          .Tk = n, .d_k = g->D, .Dv = g->D, .mask = mask,
                                                          .mask_fill = -INFINITY, .n_heads = g->H,
                                                          .n_kv_heads = g->Hkv});
        if (!map) goto done;
        for (int h = 0; h < g->H; h++) {
            for (int q = 0; q < n; q++) memcpy(w + (size_t)q * n, generate_row(g, l, h, q), (size_t)n * sizeof *w);
            if (trace_set_head(map, h, w, NULL, NULL, NULL, NULL)) goto done;
        }
    }
    if (generate_json(g, &sb) == 0) rc = trace_set_section(tr, "generation", sb.buf);
done:
    free(mask); free(w); free(sb.buf);
    return rc;
}

int generate_translator_head(const Net *n, const char *spec, int *layer, int *head, char *err, size_t errlen) {
    const ModelConfig *c = &n->mf.m.config;
    *layer = c->n_dec_layers - 1;
    *head = 0;
    if (!spec) return 0;
    int end = 0;
    if (sscanf(spec, "%d.%d%n", layer, head, &end) != 2 || spec[end] || *layer < 0 || *layer >= c->n_dec_layers ||
        *head < 0 || *head >= c->n_heads)
        return errmsg_set(err, errlen, "--head '%s': the translator's decoder has layers 0..%d and heads 0..%d (give L.H)",
                          spec, c->n_dec_layers - 1, c->n_heads - 1);
    return 0;
}

int generate_translation(Look *L, Net *n, const char *sentence, int vi, char *err, size_t errlen) {
    LookSpec spec = {.want = LOOK_TRACE | LOOK_FINITE | LOOK_RECORD, .tag = vi ? VOCAB_2VI : VOCAB_2FR};
    return look_sentence(L, &n->mf, sentence, &spec, err, errlen);
}

int generate_translation_attribution(Attribution *at, Net *n, Look *L, char *err, size_t errlen) {
    memset(at, 0, sizeof *at);
    if (!n->own) return errmsg_set(err, errlen, "--attribution: not the translator");
    if (L->s.T < 2) return errmsg_set(err, errlen, "--attribution: no word was written");
    if (attribution_compute_model(at, &n->mf.m, &L->s, 0, err, errlen)) return -1;
    snprintf(at->what, sizeof at->what, "the first word written");
    snprintf(at->what_vi, sizeof at->what_vi, "từ đầu tiên được viết");
    at->step = 0;
    return trace_take_section(&L->t, "attribution", attribution_json(at)) ? errmsg_set(err, errlen, "out of memory") : 0;
}

int generate_attribution(Attribution *at, Net *n, const Generation *g, char *err, size_t errlen) {
    memset(at, 0, sizeof *at);
    if (n->own || !(n->caps & NET_GENERATES))
        return errmsg_set(err, errlen, "--attribution: this model writes no text one token at a time");
    if (g->n_steps < 1) return errmsg_set(err, errlen, "--attribution: no token was written");
    HfInput in = {.n = g->n_prompt, .n_real = g->n_prompt, .ids = g->ids, .tokens = g->tokens};
    if (attribution_compute(at, &n->fam, &in, g->n_prompt - 1, g->ids[g->n_prompt], err, errlen)) return -1;
    at->step = 0;
    return 0;
}
