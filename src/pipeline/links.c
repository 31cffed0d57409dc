/* links.c — see links.h. */
#include "pipeline/links.h"
#include "net/referents.h"
#include "core/errmsg.h"
#include "tokenize/tokenizer.h"
#include "trace/maps.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int links_is_pronoun(const char *w) {
    static const char *const p[] = {"it", "he", "she", "they", "him", "her", "them", "its", "his", NULL};
    for (int i = 0; p[i]; i++) if (!strcasecmp(w, p[i])) return 1;   /* "She" starts a sentence */
    return 0;
}

int links_is_target_pronoun(const char *w) {
    static const char *const p[] = {"il", "elle", "ils", "elles", "nó", "họ", "chúng", "anh", "cô", NULL};
    for (int i = 0; p[i]; i++) if (!strcmp(w, p[i])) return 1;
    return 0;
}

/* The kind of map a pronoun's link is looked for in: encoder self-attention,
 * or masked self-attention in a decoder-only model (GPT-2), which has none. */
static const char *link_kind(const Trace *t) {
    for (int i = 0; i < t->n_maps; i++)
        if (!strcmp(t->maps[i].kind, "self")) return "self";
    return "masked_self";
}

/* The strongest link of query q over every head of the link kind's maps
 * (maps_strongest_link's, the special keys found once a map, not a head). */
HeadLink links_strongest(const Trace *t, int q) {
    HeadLink best = {-1, -1, -1, -1};
    const char *kind = link_kind(t);
    unsigned char stack[256];
    for (int i = 0; i < t->n_maps; i++) {
        const TraceMap *m = &t->maps[i];
        if (strcmp(m->kind, kind) || trace_row_of(m, q) < 0) continue;
        unsigned char *skip = m->Tk <= 256 ? stack : malloc((size_t)m->Tk);
        if (skip) maps_special_keys(m, skip);
        for (int h = 0; skip && h < m->n_heads; h++) {
            const float *row = trace_weights_row(m, h, q);
            int k = row ? maps_argmax_link(row, m->Tk, q, skip) : -1;
            if (k >= 0 && row[k] > best.weight) best = (HeadLink){i, h, k, row[k]};
        }
        if (skip != stack) free(skip);
    }
    return best;
}

HeadLink links_for_query(const Trace *t, int q, const CorefHead *coref) {
    if (coref->layer >= 0) {
        char id[64];
        snprintf(id, sizeof id, "encoder.%d.self", coref->layer);
        for (int i = 0; i < t->n_maps; i++) {
            const TraceMap *m = &t->maps[i];
            if (strcmp(m->id, id) || trace_row_of(m, q) < 0 || coref->head >= m->n_heads) continue;
            float w;
            int k = maps_strongest_link(m, coref->head, q, &w);
            if (k >= 0) return (HeadLink){i, coref->head, k, w};
        }
    }
    return links_strongest(t, q);
}

/* 1 for a token made only of punctuation ("." "," "?!"). */
static int is_punct(const char *w) {
    if (!*w) return 0;
    for (const unsigned char *p = (const unsigned char *)w; *p; p++)
        if (!ispunct(*p)) return 0;
    return 1;
}

/* The word of a key labelled as typed, as the tokenizer reads it ("The" →
 * "the"; "<unk> Alice" → "alice", "<unk> “" → "\""), into buf. */
static const char *key_token(const char *key, char *buf, size_t n) {
    if (!strncmp(key, "<unk> ", 6)) key += 6;
    Tokens tk;
    if (tokenizer_split_max(&tk, key, 4, NULL, 0) != 0) return key;
    snprintf(buf, n, "%s", tk.n == 1 ? tk.tok[0] : key);
    tokens_free(&tk);
    return buf;
}

static int no_content(const char *key);

/* The source labels the rule reads for map m (an encoder self-attention map
 * whose keys are the source tokens), or NULL when it cannot judge there. */
static const char *const *rule_labels(const Trace *t, const TraceMap *m, const CorefHead *coref) {
    if (!coref->referents || strcmp(m->kind, "self") || m->Tk != t->n_source) return NULL;
    return (const char *const *)t->source_tokens;
}

/* 1 when key j of m is a word the rule takes for a possible antecedent of q;
 * *sure (may be NULL) 1 when it is known to be a noun or a name (referents_can_be). */
static int rule_takes(const Trace *t, const TraceMap *m, int q, int j, const CorefHead *coref, int *sure) {
    const char *const *labels = rule_labels(t, m, coref);
    if (sure) *sure = 0;
    if (j == q || no_content(m->keys[j])) return 0;
    return !labels || referents_can_be(coref->referents, labels, t->n_source, q, j, sure);
}

/* What the rule thinks of where the view's head looks in row q (v->odd,
 * odd_key, fit_key; none_fits and no_antecedent).  Never from a list of
 * training antecedents: agreement in the sentence alone (referents.h). */
static void judge(LinksView *v, const Trace *t, int q, const CorefHead *coref) {
    const TraceMap *m = &t->maps[v->link.map];
    v->odd = LINKS_FITS;
    v->odd_key = v->fit_key = -1;
    v->none_fits = coref->referents && q < t->n_source &&
                   !referents_possible(coref->referents, (const char *const *)t->source_tokens, t->n_source, q);
    v->no_antecedent = v->none_fits;
    if (v->top_key < 0) return;
    int maybe = -1, sure;   /* the nearest word it takes, a known noun or name first, the earlier on a tie */
    const unsigned char *mrow = trace_mask_row(m, q);
    for (int d = 1; v->fit_key < 0 && d < m->Tk; d++)
        for (int j = q - d; j <= q + d && v->fit_key < 0; j += 2 * d)
            if (j >= 0 && j < m->Tk && (!mrow || mrow[j]) &&
                rule_takes(t, m, q, j, coref, &sure)) {
                if (sure) v->fit_key = j;
                else if (maybe < 0) maybe = j;
            }
    if (v->fit_key < 0) v->fit_key = maybe;
    int k = v->top_key != v->link.key ? v->top_key : v->link.key;   /* where the head looks most */
    v->odd_key = k;
    if (k == q) v->odd = LINKS_ODD_SELF;
    else if (no_content(m->keys[k])) v->odd = LINKS_ODD_NO_WORD;
    else if (!rule_takes(t, m, q, k, coref, NULL)) v->odd = LINKS_ODD_DISAGREES;
    else v->odd_key = -1;
}

LinksView links_view(const Trace *t, int q, int is_pronoun, const CorefHead *coref, int focus_map, int focus_head) {
    LinksView v = {.link = {-1, -1, -1, -1}, .why = LINKS_BY_STRENGTH, .top_key = -1, .odd_key = -1, .fit_key = -1};
    const TraceMap *fm = focus_map >= 0 && focus_map < t->n_maps ? &t->maps[focus_map] : NULL;
    if (fm && strstr(fm->kind, "self") && trace_row_of(fm, q) >= 0 && focus_head >= 0 && focus_head < fm->n_heads) {
        float w;
        int k = maps_strongest_link(fm, focus_head, q, &w);
        if (k >= 0) { v.link = (HeadLink){focus_map, focus_head, k, w}; v.why = LINKS_BY_FOCUS; }
    }
    if (v.link.map < 0 && is_pronoun && coref->layer >= 0) {
        HeadLink L = links_for_query(t, q, coref);
        const TraceMap *m = L.map >= 0 ? &t->maps[L.map] : NULL;
        if (m && m->layer == coref->layer && L.head == coref->head && !strcmp(m->kind, "self")) {
            v.link = L;
            v.why = LINKS_BY_COREF;
        }
    }
    if (v.link.map < 0) v.link = links_strongest(t, q);
    if (v.link.map < 0) return v;
    const TraceMap *m = &t->maps[v.link.map];
    v.taught = coref->taught && !strcmp(m->stack, "encoder") && !strcmp(m->kind, "self") && m->layer == coref->layer &&
               v.link.head == coref->head;
    v.weak = v.link.weight < 0.5f;
    const float *row = trace_weights_row(m, v.link.head, q);
    const unsigned char *mrow = trace_mask_row(m, q);
    for (int j = 0; j < m->Tk; j++)
        if ((!mrow || mrow[j]) && (v.top_key < 0 || row[j] > v.top_weight)) {
            v.top_key = j;
            v.top_weight = row[j];
        }
    if (is_pronoun) judge(&v, t, q, coref);
    return v;
}

/* s[0..n) as a small non-negative integer (digits only, below 1000000); -1 if it is not one. */
static int small_index(const char *s, size_t n) {
    if (n == 0 || n > 6) return -1;
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = 10 * v + (s[i] - '0');
    }
    return v;
}

int links_parse_focus(const char *focus, const Trace *t, int *map, int *head, char *err, size_t errlen) {
    char id[128];
    int l, h;
    const char *dot = strrchr(focus, '.');
    if (dot && strchr(focus, '.') == dot && (l = small_index(focus, (size_t)(dot - focus))) >= 0 &&
        (h = small_index(dot + 1, strlen(dot + 1))) >= 0) {
        snprintf(id, sizeof id, "encoder.%d.self", l);
    } else {
        if (!dot || dot == focus || (h = small_index(dot + 1, strlen(dot + 1))) < 0 ||
            (size_t)(dot - focus) >= sizeof id)
            return errmsg_set(err, errlen, "--focus '%s' is not L.H or MAP.H with small whole numbers (e.g. --focus "
                              "1.2 or --focus decoder.0.cross.3)", focus);
        memcpy(id, focus, (size_t)(dot - focus));
        id[dot - focus] = '\0';
    }
    for (int i = 0; i < t->n_maps; i++) {
        if (strcmp(t->maps[i].id, id)) continue;
        if (h < 0 || h >= t->maps[i].n_heads)
            return errmsg_set(err, errlen, "--focus '%s': head %d does not exist (heads 0..%d)", focus, h,
                              t->maps[i].n_heads - 1);
        *map = i;
        *head = h;
        return 0;
    }
    return errmsg_set(err, errlen, "--focus '%s': this model has no map %s (maps look like encoder.0.self, "
                      "decoder.1.cross)", focus, id);
}

int links_check_focus(const char *focus, const ModelConfig *c, char *err, size_t errlen) {
    Trace t;
    trace_init(&t);
    const char *tok[1] = {"x"};
    char id[64];
    int rc = 0, m, h;
    for (int l = 0; rc == 0 && l < c->n_enc_layers; l++) {
        snprintf(id, sizeof id, "encoder.%d.self", l);
        if (!trace_add_map(&t, &(TraceMapSpec){.id = id, .stack = "encoder", .layer = l, .kind = "self", .queries = tok,
                                               .Tq = 1, .keys = tok, .Tk = 1, .d_k = 1, .Dv = 1, .n_heads = c->n_heads}))
            rc = -1;
    }
    for (int l = 0; rc == 0 && l < c->n_dec_layers; l++) {
        snprintf(id, sizeof id, "decoder.%d.masked_self", l);
        if (!trace_add_map(&t, &(TraceMapSpec){.id = id, .stack = "decoder", .layer = l, .kind = "masked_self",
                                               .queries = tok, .Tq = 1, .keys = tok, .Tk = 1, .d_k = 1, .Dv = 1,
                                               .n_heads = c->n_heads}))
            rc = -1;
        snprintf(id, sizeof id, "decoder.%d.cross", l);
        if (rc == 0 && !trace_add_map(&t, &(TraceMapSpec){.id = id, .stack = "decoder", .layer = l, .kind = "cross",
                                                          .queries = tok, .Tq = 1, .keys = tok, .Tk = 1, .d_k = 1,
                                                          .Dv = 1, .n_heads = c->n_heads}))
            rc = -1;
    }
    if (rc != 0) errmsg_set(err, errlen, "out of memory");
    else rc = links_parse_focus(focus, &t, &m, &h, err, errlen);
    trace_free(&t);
    return rc;
}


/* 1 for a key that is no word an antecedent can be: a special token, a sign,
 * a function word (as the tokenizer reads it: "She" → "she"). */
static int no_content(const char *key) {
    char buf[TOKENIZER_MAX_TOKEN_BYTES + 1];
    const char *w = key_token(key, buf, sizeof buf);
    return maps_is_special(key) || is_punct(w) || referents_function_word(w);
}

/* no_content of every key of the maps last asked (one kind's maps share their
 * keys: the text's tokens), judged once, not once a map and query: a key is
 * tokenized again to judge it (a GPT-2 run of 400 tokens: 60 ms). */
typedef struct { const TraceMap *m; unsigned char *none; } ContentKeys;

/* 1 when m's keys are those ck judged. */
static int same_keys(const ContentKeys *ck, const TraceMap *m) {
    if (!ck->m || ck->m->Tk != m->Tk) return 0;
    for (int j = 0; j < m->Tk; j++)
        if (ck->m->keys[j] != m->keys[j] && strcmp(ck->m->keys[j], m->keys[j])) return 0;
    return 1;
}

/* skip[j] = 1 where key j of m cannot be an antecedent of q (no content, or
 * masked: a causal row has no later word): the same for every head of m.
 * Returns skip: stack (room for 256) or malloc'd; NULL out of memory. */
static unsigned char *content_skip(const TraceMap *m, int q, unsigned char *stack, ContentKeys *ck) {
    if (!same_keys(ck, m)) {
        free(ck->none);
        ck->m = m;
        if (!(ck->none = malloc((size_t)(m->Tk > 0 ? m->Tk : 1)))) { ck->m = NULL; return NULL; }
        for (int j = 0; j < m->Tk; j++) ck->none[j] = (unsigned char)no_content(m->keys[j]);
    }
    unsigned char *skip = m->Tk <= 256 ? stack : malloc((size_t)m->Tk);
    const unsigned char *mrow = trace_mask_row(m, q);
    for (int j = 0; skip && j < m->Tk; j++) skip[j] = (unsigned char)(ck->none[j] || (mrow && !mrow[j]));
    return skip;
}

/* Head h's strongest link from q to a key skip leaves; -1 if none. */
static int content_link(const TraceMap *m, int h, int q, const unsigned char *skip, float *w) {
    const float *row = trace_weights_row(m, h, q);
    int best = maps_argmax_link(row, m->Tk, q, skip);
    *w = best >= 0 ? row[best] : -1;
    return best;
}

/* Every head of link_kind's maps that reads row q, with what content_link
 * finds there: each(arg, map, head, key, weight) for the heads that link.
 * The skip list is made once a map (it was once a head: 10 ms of GPT-2's run). */
static void content_links(const Trace *t, int q, void (*each)(void *, int, int, int, float), void *arg) {
    const char *kind = link_kind(t);
    unsigned char stack[256];
    ContentKeys ck = {NULL, NULL};
    for (int i = 0; i < t->n_maps; i++) {
        const TraceMap *m = &t->maps[i];
        if (strcmp(m->kind, kind) || trace_row_of(m, q) < 0) continue;
        unsigned char *skip = content_skip(m, q, stack, &ck);
        for (int h = 0; skip && h < m->n_heads; h++) {
            float w;
            int k = content_link(m, h, q, skip, &w);
            if (k >= 0) each(arg, i, h, k, w);
        }
        if (skip != stack) free(skip);
    }
    free(ck.none);
}

static void keep_strongest(void *arg, int map, int head, int key, float w) {
    HeadLink *best = arg;
    if (w > best->weight) *best = (HeadLink){map, head, key, w};
}

HeadLink links_content_strongest(const Trace *t, int q) {
    HeadLink best = {-1, -1, -1, -1};
    content_links(t, q, keep_strongest, &best);
    return best;
}

typedef struct { int key; float min_weight; HeadLink *out; int max, n; } ContentHeads;

static void keep_heads(void *arg, int map, int head, int key, float w) {
    ContentHeads *c = arg;
    if (key != c->key || w < c->min_weight) return;
    int at = c->n < c->max ? c->n : c->max;   /* insertion, strongest first; the weakest falls off the end */
    while (at > 0 && c->out[at - 1].weight < w) {
        if (at < c->max) c->out[at] = c->out[at - 1];
        at--;
    }
    if (at < c->max) c->out[at] = (HeadLink){map, head, key, w};
    c->n++;
}

int links_content_heads(const Trace *t, int q, int key, float min_weight, HeadLink *out, int max) {
    ContentHeads c = {key, min_weight, out, max, 0};
    content_links(t, q, keep_heads, &c);
    return c.n;
}

void links_prefer_content(LinksView *v, const Trace *t, int q) {
    if (v->why != LINKS_BY_STRENGTH) return;
    HeadLink L = links_content_strongest(t, q);
    if (L.map < 0) return;
    const TraceMap *m = &t->maps[L.map];
    v->link = L;
    v->why = LINKS_BY_CONTENT;
    v->weak = L.weight < 0.5f;
    v->odd = LINKS_FITS;   /* a word that can be an antecedent, by construction */
    v->odd_key = -1;
    const float *row = trace_weights_row(m, L.head, q);
    const unsigned char *mrow = trace_mask_row(m, q);
    v->top_key = -1;
    for (int j = 0; j < m->Tk; j++)
        if ((!mrow || mrow[j]) && (v->top_key < 0 || row[j] > v->top_weight)) {
            v->top_key = j;
            v->top_weight = row[j];
        }
}

int links_find(const Trace *t, const char *const *words, int n, const LinksAsk *ask, LinksFound **out) {
    *out = malloc(sizeof **out * (size_t)(n > 0 ? n : 1));
    if (!*out) return -1;
    int found = 0;
    for (int q = 0; q < n; q++) {
        const char *w = words[q];
        if (ask->query ? strcmp(w, ask->query) != 0 : !links_is_pronoun(w)) continue;
        LinksView v = links_view(t, q, links_is_pronoun(w), ask->coref, ask->focus_map, ask->focus_head);
        if (ask->prefer_content) links_prefer_content(&v, t, q);
        if (v.link.map < 0) continue;
        (*out)[found++] = (LinksFound){q, v, links_strongest(t, q)};
    }
    return found;
}

void links_focus(const LinksFound *found, int n, int *map, int *head) {
    *map = n > 0 ? found[0].view.link.map : 0;
    *head = n > 0 ? found[0].view.link.head : 0;
}

void links_why(const LinksView *v, const CorefHead *c, char *en, size_t en_len, char *vi, size_t vi_len) {
    switch (v->why) {
    case LINKS_BY_FOCUS:
        snprintf(en, en_len, "the --focus head");
        snprintf(vi, vi_len, "head do --focus chọn");
        break;
    case LINKS_BY_COREF:
        if (c->taught) {
            snprintf(en, en_len, "the model's coreference head, TAUGHT with gold antecedents by train --supervise-coref");
            snprintf(vi, vi_len, "head đồng tham chiếu của mô hình, được DẠY bằng tiền ngữ chuẩn qua train --supervise-coref");
        } else {
            snprintf(en, en_len, "the head attnviz eval found linking pronouns to antecedents most often (%.0f%% of "
                     "held-out sentences), not taught", 100 * c->accuracy);
            snprintf(vi, vi_len, "head mà attnviz eval thấy nối đại từ với tiền ngữ thường nhất (%.0f%% câu giữ lại), "
                     "không được dạy", 100 * c->accuracy);
        }
        break;
    case LINKS_BY_CONTENT:
        snprintf(en, en_len, "the head whose link from it to a word that can be an antecedent is strongest: "
                 "punctuation and function words left out");
        snprintf(vi, vi_len, "head có liên kết mạnh nhất từ nó tới một từ có thể là tiền ngữ, không kể dấu câu và hư từ");
        break;
    default:
        snprintf(en, en_len, "the head whose link from it is strongest");
        snprintf(vi, vi_len, "head có liên kết mạnh nhất từ nó");
    }
}

void links_rule_note(const LinksView *v, const Trace *t, int q, const char *word, char *en, size_t en_len, char *vi,
                     size_t vi_len, char *brief, size_t brief_len) {
    en[0] = vi[0] = brief[0] = '\0';
    if (v->odd == LINKS_FITS || v->link.map < 0) return;
    const TraceMap *m = &t->maps[v->link.map];
    const char *k = m->keys[v->odd_key], *fit = v->fit_key >= 0 ? m->keys[v->fit_key] : NULL;
    char take[160] = "", takevi[160] = "", can[160] = "";
    if (fit) {
        snprintf(take, sizeof take, "; the word the rule takes for it is “%s”", fit);
        snprintf(takevi, sizeof takevi, "; từ mà quy tắc chọn là “%s”", fit);
        snprintf(can, sizeof can, "; it takes “%s”", fit);
    }
    switch (v->odd) {
    case LINKS_ODD_SELF:
        snprintf(en, en_len, "the head puts %.2f on “%s” itself%s", (double)v->top_weight, word, take);
        snprintf(vi, vi_len, "head dồn %.2f vào chính “%s”%s", (double)v->top_weight, word, takevi);
        snprintf(brief, brief_len, "%.2f on itself%s", (double)v->top_weight, can);
        break;
    case LINKS_ODD_NO_WORD:
        snprintf(en, en_len, "the head puts %.2f on “%s”, a sign, special token or function word, which the rule never "
                 "takes for an antecedent%s", (double)v->top_weight, k, take);
        snprintf(vi, vi_len, "head dồn %.2f vào “%s”, một dấu, token đặc biệt hoặc hư từ, mà quy tắc không bao giờ coi là "
                 "tiền ngữ%s", (double)v->top_weight, k, takevi);
        snprintf(brief, brief_len, "rule: “%s” is no antecedent%s", k, can);
        break;
    default:
        snprintf(en, en_len, "by the corpus lexicon's persons, genders and numbers, “%s” cannot be what “%s” refers "
                 "to%s", k, word, take);
        snprintf(vi, vi_len, "theo người, giống và số của từ vựng corpus, “%s” không thể là cái mà “%s” chỉ tới%s", k, word,
                 takevi);
        snprintf(brief, brief_len, "rule: “%s” cannot be “%s”%s", k, word, can);
    }
}
