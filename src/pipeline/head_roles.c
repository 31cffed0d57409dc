/* head_roles.c — see head_roles.h. */
#include "pipeline/head_roles.h"
#include "core/errmsg.h"
#include "core/rng.h"
#include "core/strbuf.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROBE_DRAWS_PER_TOKEN 400   /* draws at most per probe token before giving up */

static const char *const role_names[HEAD_ROLE_N] = {"previous token", "sink", "duplicate token", "induction", "local",
                                                    "diffuse", "focused"};
static const char *const role_keys[HEAD_ROLE_N] = {"previous_token", "first_token", "duplicate_token", "induction",
                                                   "local", "diffuse", "focused"};

const char *head_roles_name(HeadRole r) {
    return r >= 0 && r < HEAD_ROLE_N ? role_names[r] : "?";
}

const char *head_roles_key(HeadRole r) {
    return r >= 0 && r < HEAD_ROLE_N ? role_keys[r] : "?";
}

/* ---- the scores of one head ---- */

static int may_see(const TraceMap *m, int t, int j) {
    return !m->mask || m->mask[(size_t)t * m->Tk + j];
}

/* Tokens of the map that are real: at most n_real (0: all), and not the
 * trailing keys no row may see (padding). */
static int real_tokens(const TraceMap *m, int n_real) {
    int T = m->Tq < m->Tk ? m->Tq : m->Tk;
    if (n_real > 0 && n_real < T) T = n_real;
    while (T > 1) {
        int seen = 0;
        for (int t = 0; t < T && !seen; t++) seen = may_see(m, t, T - 1);
        if (seen) break;
        T--;
    }
    return T;
}

void head_roles_text_scores(const TraceMap *m, int h, int n_real, HeadRoleScores *out) {
    const float *w = m->heads[h].weights;   /* (Tq, Tk) */
    int T = real_tokens(m, n_real), rows = 0, erows = 0;
    double prev = 0, first = 0, local = 0, ent = 0;
    for (int t = 1; t < T; t++) {
        const float *row = w + (size_t)t * m->Tk;
        double e = 0;
        int seen = 0;
        prev += row[t - 1];
        first += row[0];
        for (int j = 0; j < T; j++) {
            if (!may_see(m, t, j)) continue;
            seen++;
            if (abs(j - t) <= HEAD_ROLES_WINDOW) local += row[j];
            if (row[j] > 0) e -= row[j] * log(row[j]);
        }
        rows++;
        if (seen > 1) { ent += e / log(seen); erows++; }
    }
    out->previous = rows ? (float)(prev / rows) : 0.0f;
    out->first = rows ? (float)(first / rows) : 0.0f;
    out->local = rows ? (float)(local / rows) : 0.0f;
    out->entropy = erows ? (float)(ent / erows) : 0.0f;
}

void head_roles_probe_scores(const TraceMap *m, int h, int offset, int n, HeadRoleScores *out) {
    const float *w = m->heads[h].weights;   /* (Tq, Tk) */
    double dup = 0, ind = 0;
    for (int i = 0; i < n; i++) {
        const float *row = w + (size_t)(offset + n + i) * m->Tk;
        dup += row[offset + i];
        ind += row[offset + i + 1];
    }
    out->duplicate = n ? (float)(dup / n) : 0.0f;
    out->induction = n ? (float)(ind / n) : 0.0f;
}

HeadRole head_roles_classify(const HeadRoleScores *s) {
    const float score[4] = {s->previous, s->first, s->duplicate, s->induction};
    const float min[4] = {HEAD_ROLES_MIN_PREVIOUS, HEAD_ROLES_MIN_FIRST, HEAD_ROLES_MIN_DUPLICATE, HEAD_ROLES_MIN_INDUCTION};
    int best = -1;
    for (int k = 0; k < 4; k++)
        if (score[k] >= min[k] && (best < 0 || score[k] > score[best])) best = k;
    if (best >= 0) return (HeadRole)best;
    if (s->local >= HEAD_ROLES_LOCAL_MIN) return HEAD_ROLE_LOCAL;
    return s->entropy >= HEAD_ROLES_DIFFUSE_MIN ? HEAD_ROLE_DIFFUSE : HEAD_ROLE_FOCUSED;
}

/* ---- the tables ---- */

static int is_self(const TraceMap *m) {
    return !strcmp(m->kind, "self") || !strcmp(m->kind, "masked_self");
}

static HeadRoleTable *table_of(HeadRoles *r, const TraceMap *m) {
    for (int k = 0; k < r->n_tables; k++)
        if (!strcmp(r->tab[k].stack, m->stack) && !strcmp(r->tab[k].kind, m->kind)) return &r->tab[k];
    if (r->n_tables == 2) return NULL;
    HeadRoleTable *tb = &r->tab[r->n_tables++];
    snprintf(tb->stack, sizeof tb->stack, "%s", m->stack);
    snprintf(tb->kind, sizeof tb->kind, "%s", m->kind);
    tb->H = m->n_heads;
    return tb;
}

/* One table per kind of self-attention in the text's trace, with its text scores. */
static int tables_from_text(HeadRoles *r, const Trace *text, int n_real, char *err, size_t errlen) {
    for (int i = 0; i < text->n_maps; i++) {
        const TraceMap *m = &text->maps[i];
        if (!is_self(m)) continue;
        HeadRoleTable *tb = table_of(r, m);
        if (!tb) return errmsg_set(err, errlen, "head roles: more than two kinds of self-attention in the trace");
        if (m->layer + 1 > tb->L) tb->L = m->layer + 1;
    }
    if (r->n_tables == 0) return errmsg_set(err, errlen, "head roles: the trace holds no self-attention map");
    for (int k = 0; k < r->n_tables; k++) {
        HeadRoleTable *tb = &r->tab[k];
        tb->s = calloc((size_t)tb->L * tb->H, sizeof *tb->s);
        tb->role = calloc((size_t)tb->L * tb->H, sizeof *tb->role);
        if (!tb->s || !tb->role) return errmsg_set(err, errlen, "out of memory");
    }
    for (int i = 0; i < text->n_maps; i++) {
        const TraceMap *m = &text->maps[i];
        if (!is_self(m)) continue;
        HeadRoleTable *tb = table_of(r, m);
        for (int h = 0; h < m->n_heads && h < tb->H; h++)
            head_roles_text_scores(m, h, n_real, &tb->s[m->layer * tb->H + h]);
    }
    return 0;
}

/* The probe scores of every head of table tb from the probe's trace, then the roles. */
static int table_probe(HeadRoles *r, HeadRoleTable *tb, const Trace *probe, char *err, size_t errlen) {
    for (int l = 0; l < tb->L; l++) {
        char id[64];
        snprintf(id, sizeof id, "%s.%d.%s", tb->stack, l, tb->kind);
        const TraceMap *m = trace_find_map((Trace *)probe, id);
        if (!m || m->Tk < tb->probe_offset + 2 * r->probe_length || m->n_heads != tb->H)
            return errmsg_set(err, errlen, "head roles: the probe's forward pass gave no map %s of the probe's size", id);
        for (int h = 0; h < tb->H; h++) {
            HeadRoleScores *s = &tb->s[l * tb->H + h];
            head_roles_probe_scores(m, h, tb->probe_offset, r->probe_length, s);
            tb->role[l * tb->H + h] = head_roles_classify(s);
        }
    }
    return 0;
}

/* tb's probe: ids (n) and its offset, copied. */
static int table_set_input(HeadRoleTable *tb, const int *ids, int n, int offset) {
    tb->probe_input = malloc((size_t)n * sizeof(int));
    if (!tb->probe_input) return -1;
    memcpy(tb->probe_input, ids, (size_t)n * sizeof(int));
    tb->n_probe_input = n;
    tb->probe_offset = offset;
    return 0;
}

/* ---- the probe of a GPT-2, BERT or Llama-family model ---- */

/* 1 if id is an ordinary token: its text, tokenized again, is that one token. */
static int hf_ordinary(const HfFile *f, int id) {
    char text[256], spaced[260];
    hf_file_token_text(f, id, text, sizeof text);
    size_t len = strlen(text);
    if (len == 0 || (text[0] == '<' && text[len - 1] == '>') || (text[0] == '[' && text[len - 1] == ']')) return 0;
    snprintf(spaced, sizeof spaced, " %s", text);
    const char *tries[2] = {text, spaced};
    for (int k = 0; k < 2; k++) {
        int *ids = NULL, n = 0;
        char e[256];
        int ok = hf_file_token_ids(f, tries[k], &ids, &n, e, sizeof e) == 0 && n == 1 && ids[0] == id;
        free(ids);
        if (ok) return 1;
    }
    return 0;
}

/* n different ordinary ids drawn with the seed (ordinary(ctx, id) says which
 * are), into r->probe_ids.  0, or -1 with err. */
static int draw_probe(HeadRoles *r, int V, int (*ordinary)(const void *, int), const void *ctx, char *err,
                      size_t errlen) {
    int n = r->probe_length, got = 0;
    uint64_t state = r->seed;
    r->probe_ids = malloc((size_t)n * sizeof(int));
    r->probe_tokens = calloc((size_t)n, sizeof(char *));
    if (!r->probe_ids || !r->probe_tokens) return errmsg_set(err, errlen, "out of memory");
    for (long draw = 0; got < n && draw < (long)PROBE_DRAWS_PER_TOKEN * n; draw++) {
        int id = rng_splitmix_below(&state, V), dup = 0;
        for (int k = 0; k < got && !dup; k++) dup = r->probe_ids[k] == id;
        if (!dup && ordinary(ctx, id)) r->probe_ids[got++] = id;
    }
    if (got < n)
        return errmsg_set(err, errlen, "head roles: found only %d ordinary tokens in %d draws from a vocabulary of %d "
                          "(the probe needs %d different ones)", got, PROBE_DRAWS_PER_TOKEN * n, V, n);
    return 0;
}

static int hf_ordinary_cb(const void *f, int id) {
    return hf_ordinary((const HfFile *)f, id);
}

/* The tokens the model is given around a text: before (BOS, [CLS]) and after ([SEP]). */
static int hf_around(const HfFile *f, int *before, int *after, char *err, size_t errlen) {
    HfInput in = {0};
    int *ids = NULL, n = 0, rc = -1;
    if (hf_file_tokenize(f, "a", 1, &in, err, errlen) || hf_file_token_ids(f, "a", &ids, &n, err, errlen)) goto done;
    for (int s = 0; s + n <= in.n; s++)
        if (!memcmp(in.ids + s, ids, (size_t)n * sizeof(int))) {
            *before = s;
            *after = in.n - s - n;
            rc = 0;
            break;
        }
    if (rc) errmsg_set(err, errlen, "head roles: cannot tell which tokens the tokenizer puts around a text");
done:
    hf_input_free(&in);
    free(ids);
    return rc;
}

/* The probe's length: n, or the default shrunk to fit P positions with `extra` around it. */
static int probe_length(int n, int extra, int P, char *err, size_t errlen) {
    char around[48] = "";
    if (extra) snprintf(around, sizeof around, " and %d around them", extra);
    if (n > 0) {
        if (n < 2)   /* one token: its "next" would be the query itself */
            return errmsg_set(err, errlen, "the head-role probe needs at least 2 random tokens (got %d)", n);
        if (2 * n + extra > P)
            return errmsg_set(err, errlen, "the head-role probe of 2 × %d random tokens%s needs %d positions; this model "
                              "reads at most %d (use a probe of at most %d tokens)", n, around, 2 * n + extra, P,
                              (P - extra) / 2);
        return n;
    }
    n = (P - extra) / 2 < HEAD_ROLES_PROBE_DEFAULT ? (P - extra) / 2 : HEAD_ROLES_PROBE_DEFAULT;
    if (n < HEAD_ROLES_PROBE_MIN)
        return errmsg_set(err, errlen, "the head-role probe needs at least 2 × %d random tokens%s = %d positions; this "
                          "model reads at most %d", HEAD_ROLES_PROBE_MIN, around, 2 * HEAD_ROLES_PROBE_MIN + extra, P);
    return n;
}

/* The probe as the model reads it: `before` tokens of "a"'s encoding, the two
 * copies, `after` tokens, into in (display tokens too). */
static int hf_probe_input(const HeadRoles *r, const HfFile *f, int before, int after, HfInput *in, char *err,
                          size_t errlen) {
    HfInput a = {0};
    int n = r->probe_length, T = before + 2 * n + after;
    if (hf_file_tokenize(f, "a", 1, &a, err, errlen)) return -1;
    in->n = in->n_real = T;
    in->ids = malloc((size_t)T * sizeof(int));
    in->tokens = calloc((size_t)T, sizeof(char *));
    for (int t = 0; in->ids && in->tokens && t < T; t++) {
        int id = t < before ? a.ids[t] : t < before + 2 * n ? r->probe_ids[(t - before) % n] : a.ids[a.n - (T - t)];
        char text[256];
        hf_file_token_text(f, id, text, sizeof text);
        in->ids[t] = id;
        in->tokens[t] = strdup(text);
        if (!in->tokens[t]) break;
    }
    int ok = in->ids && in->tokens && in->tokens[T - 1];
    hf_input_free(&a);
    return ok ? 0 : errmsg_set(err, errlen, "out of memory");
}

/* The display text of every probe token. */
static int probe_names(HeadRoles *r, const char *const *shown) {
    for (int i = 0; i < r->probe_length; i++)
        if (!(r->probe_tokens[i] = strdup(shown[i] ? shown[i] : ""))) return -1;
    return 0;
}

static int measure_family(HeadRoles *r, HfFile *f, const Trace *text, int n_real, uint64_t seed, int n,
                          char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    r->seed = seed;
    HfInput in = {0};
    Trace probe;
    trace_init(&probe);
    int before = 0, after = 0, rc = -1;
    HfShape sh = hf_file_shape(f);
    if (hf_around(f, &before, &after, err, errlen)) goto done;
    if ((r->probe_length = probe_length(n, before + after, sh.n_pos, err, errlen)) < 0) goto done;
    if (tables_from_text(r, text, n_real, err, errlen) ||
        draw_probe(r, sh.n_vocab, hf_ordinary_cb, f, err, errlen) ||
        hf_probe_input(r, f, before, after, &in, err, errlen))
        goto done;
    if (probe_names(r, (const char *const *)in.tokens + before)) { errmsg_set(err, errlen, "out of memory"); goto done; }
    if (hf_file_forward(f, &in, &probe, NULL, err, errlen)) goto done;
    for (int k = 0; k < r->n_tables; k++) {
        if (table_set_input(&r->tab[k], in.ids, in.n, before)) { errmsg_set(err, errlen, "out of memory"); goto done; }
        if (table_probe(r, &r->tab[k], &probe, err, errlen)) goto done;
    }
    rc = 0;
done:
    hf_input_free(&in);
    trace_free(&probe);
    return rc;
}

/* ---- the probe of the bundled encoder–decoder ---- */

/* A vocabulary word of ASCII letters only. */
static int model_ordinary_cb(const void *v, int id) {
    const char *w = id >= VOCAB_N_SPECIAL ? vocab_word((const Vocab *)v, id) : NULL;
    if (!w || !*w) return 0;
    for (const char *p = w; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) return 0;
    return 1;
}

/* src = a b … a b … <eos>, tgt = <2fr> a b … a b …, and their words. */
static void model_probe_input(const HeadRoles *r, const Vocab *v, int *src, int *tgt, const char **sw, const char **tw) {
    int n = r->probe_length;
    for (int t = 0; t < 2 * n; t++) {
        src[t] = tgt[t + 1] = r->probe_ids[t % n];
        sw[t] = tw[t + 1] = vocab_word(v, src[t]);
    }
    src[2 * n] = VOCAB_EOS;
    tgt[0] = VOCAB_2FR;
    sw[2 * n] = vocab_word(v, VOCAB_EOS);
    tw[0] = vocab_word(v, VOCAB_2FR);
}

static int measure_own(HeadRoles *r, ModelFile *mf, const Trace *text, uint64_t seed, int n,
                             char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    r->seed = seed;
    Model *m = &mf->m;
    Trace probe;
    trace_init(&probe);
    int rc = -1, *src = NULL, *tgt = NULL;
    const char **sw = NULL, **tw = NULL;
    if ((r->probe_length = probe_length(n, 1, m->config.max_len, err, errlen)) < 0) goto done;
    int L = 2 * r->probe_length + 1;
    if (tables_from_text(r, text, 0, err, errlen) ||
        draw_probe(r, m->config.vocab_size, model_ordinary_cb, &mf->v, err, errlen))
        goto done;
    src = malloc((size_t)L * sizeof(int));
    tgt = malloc((size_t)L * sizeof(int));
    sw = calloc((size_t)L, sizeof(char *));
    tw = calloc((size_t)L, sizeof(char *));
    if (!src || !tgt || !sw || !tw) { errmsg_set(err, errlen, "out of memory"); goto done; }
    model_probe_input(r, &mf->v, src, tgt, sw, tw);
    if (probe_names(r, sw)) { errmsg_set(err, errlen, "out of memory"); goto done; }
    if (model_forward(m, &(ModelBatch){src, &L, L, tgt, &L, L, 1}) || model_trace(m, 0, &probe, sw, tw, 0)) {
        errmsg_set(err, errlen, "head roles: the probe's forward pass: %s", m->err);
        goto done;
    }
    for (int k = 0; k < r->n_tables; k++) {
        int enc = !strcmp(r->tab[k].stack, "encoder");
        if (table_set_input(&r->tab[k], enc ? src : tgt, L, enc ? 0 : 1)) { errmsg_set(err, errlen, "out of memory"); goto done; }
        if (table_probe(r, &r->tab[k], &probe, err, errlen)) goto done;
    }
    rc = 0;
done:
    free(src); free(tgt); free(sw); free(tw);
    trace_free(&probe);
    return rc;
}

/* ---- the trace and the summary ---- */

/* "name": [[…], …] of one score of every head. */
static void json_table(StrBuf *b, const HeadRoleTable *tb, const char *name, size_t field) {
    strbuf_printf(b, ", \"%s\": [", name);
    for (int l = 0; l < tb->L; l++) {
        strbuf_printf(b, "%s[", l ? ", " : "");
        for (int h = 0; h < tb->H; h++) {
            const float *v = (const float *)((const char *)&tb->s[l * tb->H + h] + field);
            strbuf_printf(b, "%s", h ? ", " : "");
            strbuf_json_number(b, *v);
        }
        strbuf_printf(b, "]");
    }
    strbuf_printf(b, "]");
}

static void json_ints(StrBuf *b, const char *name, const int *v, int n) {
    strbuf_printf(b, "\"%s\": [", name);
    for (int i = 0; i < n; i++) strbuf_printf(b, "%s%d", i ? ", " : "", v[i]);
    strbuf_printf(b, "]");
}

static void json_one_table(StrBuf *b, const HeadRoleTable *tb) {
    strbuf_printf(b, "{\"stack\": \"%s\", \"kind\": \"%s\", \"layers\": %d, \"heads\": %d, \"probe_offset\": %d, ",
                  tb->stack, tb->kind, tb->L, tb->H, tb->probe_offset);
    json_ints(b, "probe_input", tb->probe_input, tb->n_probe_input);
    json_table(b, tb, "previous_token", offsetof(HeadRoleScores, previous));
    json_table(b, tb, "first_token", offsetof(HeadRoleScores, first));
    json_table(b, tb, "duplicate_token", offsetof(HeadRoleScores, duplicate));
    json_table(b, tb, "induction", offsetof(HeadRoleScores, induction));
    json_table(b, tb, "local", offsetof(HeadRoleScores, local));
    json_table(b, tb, "entropy", offsetof(HeadRoleScores, entropy));
    strbuf_printf(b, ", \"role\": [");
    for (int l = 0; l < tb->L; l++) {
        strbuf_printf(b, "%s[", l ? ", " : "");
        for (int h = 0; h < tb->H; h++)
            strbuf_printf(b, "%s\"%s\"", h ? ", " : "", head_roles_key(tb->role[l * tb->H + h]));
        strbuf_printf(b, "]");
    }
    strbuf_printf(b, "]}");
}

char *head_roles_json(const HeadRoles *r) {
    StrBuf b = {0};
    strbuf_printf(&b, "{\"thresholds\": {\"previous_token\": %.9g, \"first_token\": %.9g, \"duplicate_token\": %.9g, "
                  "\"induction\": %.9g, \"local\": %.9g, \"local_window\": %d, \"diffuse\": %.9g}, \"seed\": %llu, "
                  "\"probe_length\": %d, ",
                  (double)HEAD_ROLES_MIN_PREVIOUS, (double)HEAD_ROLES_MIN_FIRST, (double)HEAD_ROLES_MIN_DUPLICATE,
                  (double)HEAD_ROLES_MIN_INDUCTION, (double)HEAD_ROLES_LOCAL_MIN, HEAD_ROLES_WINDOW,
                  (double)HEAD_ROLES_DIFFUSE_MIN,
                  (unsigned long long)r->seed, r->probe_length);
    json_ints(&b, "probe_ids", r->probe_ids, r->probe_length);
    strbuf_printf(&b, ", \"probe_tokens\": [");
    for (int i = 0; i < r->probe_length; i++) {
        strbuf_printf(&b, "%s", i ? ", " : "");
        strbuf_json_string(&b, r->probe_tokens[i]);
    }
    strbuf_printf(&b, "], \"tables\": [");
    for (int k = 0; k < r->n_tables; k++) {
        strbuf_printf(&b, "%s", k ? ", " : "");
        json_one_table(&b, &r->tab[k]);
    }
    if (strbuf_printf(&b, "]}")) { free(b.buf); return NULL; }
    return b.buf;
}

static float score_of(const HeadRoleScores *s, HeadRole role) {
    const float v[HEAD_ROLE_N] = {s->previous, s->first, s->duplicate, s->induction, s->local, s->entropy, s->entropy};
    return v[role];
}

/* "  previous token (>= 0.4): decoder.1 head 3 0.91, …" for one of the four measured roles. */
static size_t summary_role(const HeadRoles *r, HeadRole role, int top, char *buf, size_t n) {
    const float min[4] = {HEAD_ROLES_MIN_PREVIOUS, HEAD_ROLES_MIN_FIRST, HEAD_ROLES_MIN_DUPLICATE, HEAD_ROLES_MIN_INDUCTION};
    size_t k = (size_t)snprintf(buf, n, "  %s (named at >= %.2f):", head_roles_name(role), (double)min[role]);
    unsigned char used[2][4096] = {{0}};
    for (int i = 0; i < top && k < n; i++) {
        int bt = -1, bi = -1;
        for (int t = 0; t < r->n_tables; t++)
            for (int x = 0; x < r->tab[t].L * r->tab[t].H && x < 4096; x++)
                if (!used[t][x] && (bt < 0 || score_of(&r->tab[t].s[x], role) > score_of(&r->tab[bt].s[bi], role))) {
                    bt = t;
                    bi = x;
                }
        if (bt < 0) break;
        used[bt][bi] = 1;
        const HeadRoleTable *tb = &r->tab[bt];
        float v = score_of(&tb->s[bi], role);
        k += (size_t)snprintf(buf + k, n - k, "%s %s.%d.%s head %d %.2f%s", i ? "," : "", tb->stack, bi / tb->H, tb->kind,
                              bi % tb->H, (double)v, v >= min[role] ? "" : " (below)");
    }
    if (k < n) k += (size_t)snprintf(buf + k, n - k, "\n");
    return k < n ? k : n;
}

void head_roles_summary(const HeadRoles *r, int top, char *buf, size_t n) {
    size_t k = 0;
    int count[HEAD_ROLE_N] = {0}, total = 0;
    buf[0] = '\0';
    for (int role = 0; role < 4 && k < n; role++) k += summary_role(r, (HeadRole)role, top, buf + k, n - k);
    for (int t = 0; t < r->n_tables; t++)
        for (int x = 0; x < r->tab[t].L * r->tab[t].H; x++, total++) count[r->tab[t].role[x]]++;
    if (k < n)
        snprintf(buf + k, n - k, "  roles of the %d heads: previous token %d, sink %d, duplicate token %d, induction %d, "
                 "local %d, diffuse %d, focused %d (probe: %d random tokens twice, seed %llu)\n", total, count[0], count[1],
                 count[2], count[3], count[4], count[5], count[6], r->probe_length, (unsigned long long)r->seed);
}

void head_roles_free(HeadRoles *r) {
    if (!r) return;
    for (int k = 0; k < 2; k++) {
        free(r->tab[k].s);
        free(r->tab[k].role);
        free(r->tab[k].probe_input);
    }
    for (int i = 0; r->probe_tokens && i < r->probe_length; i++) free(r->probe_tokens[i]);
    free(r->probe_tokens);
    free(r->probe_ids);
    memset(r, 0, sizeof *r);
}

int head_roles_measure(HeadRoles *r, Net *n, const Trace *text, int n_real, uint64_t seed, int probe, char *err,
                       size_t errlen) {
    return n->own ? measure_own(r, &n->mf, text, seed, probe, err, errlen)
                  : measure_family(r, &n->fam, text, n_real, seed, probe, err, errlen);
}
