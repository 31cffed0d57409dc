/* net.c — one interface to every model (net.h).  The only place that knows
 * which implementation a Net holds: every function here is a switch on
 * n->own, nothing more. */
#include "net/net.h"
#include "core/errmsg.h"
#include "net/describe.h"
#include "tokenize/tokenizer.h"
#include <stdlib.h>
#include <string.h>

static NetShape own_shape(const ModelConfig *c) {
    int L = c->n_enc_layers > c->n_dec_layers ? c->n_enc_layers : c->n_dec_layers;
    return (NetShape){L, c->n_heads, c->n_heads, c->d_model / c->n_heads, c->vocab_size, c->max_len};
}

static NetShape family_shape(const HfFile *f) {
    HfShape s = hf_file_shape(f);
    return (NetShape){s.n_layer, s.n_head, s.n_kv_head, s.head_dim, s.n_vocab, s.n_pos};
}

/* attnviz's own checkpoint: only an encoder–decoder translates. */
static int open_own(Net *n, const char *model, char *err, size_t errlen) {
    if (model_file_load(&n->mf, model, err, errlen) != 0) return -1;
    n->own = 1;
    n->shape = own_shape(&n->mf.m.config);
    if (n->mf.m.config.arch == MODEL_ENC_DEC) n->caps = NET_TRANSLATES;
    return 0;
}

static int open_family(Net *n, const char *model, const char *tokenizer, int route, NetOpen how, char *err,
                       size_t errlen) {
    int rc = route == HF_ROUTE_FOLDER && how == NET_OPEN_TOKENIZER
                 ? hf_file_load_tokenizer(&n->fam, model, err, errlen)
                 : hf_file_open(&n->fam, model, tokenizer, err, errlen);
    if (rc != 0) return -1;
    if (how == NET_OPEN_TOKENIZER && route == HF_ROUTE_FOLDER) return 0;   /* no model: no shape, no caps */
    n->shape = family_shape(&n->fam);
    if (hf_file_causal(&n->fam)) n->caps = NET_GENERATES;
    else if (n->fam.m.has_mlm) n->caps = NET_FILLS_MASK;
    return 0;
}

int net_open(Net *n, const char *model, const char *tokenizer, NetOpen how, char *err, size_t errlen) {
    memset(n, 0, sizeof *n);
    int route = hf_file_route(model, tokenizer, err, errlen);
    if (route < 0) return -2;
    int rc = route == HF_ROUTE_OWN ? open_own(n, model, err, errlen)
                                   : open_family(n, model, tokenizer, route, how, err, errlen);
    if (rc != 0) net_free(n);
    return rc;
}

const char *net_path(const Net *n) { return n->own ? n->mf.path : n->fam.dir; }

const char *net_family(const Net *n) {
    return n->own ? "attnviz encoder–decoder" : hf_file_family_name(&n->fam);
}

void net_describe(const Net *n, int verbose, FILE *out) {
    if (n->own) own_describe(&n->mf, verbose, out);
    else family_describe(&n->fam, out);
}

int net_json(const Net *n, char *buf, size_t len) {
    return n->own ? model_config_json(&n->mf.m.config, buf, len) : hf_file_json(&n->fam, buf, len);
}

/* The translator's words as its vocabulary reads them: lowercased words,
 * then <eos> (add_special); an unknown word is <unk>'s id. */
static int own_tokenize(const Net *n, const char *text, int add_special, NetTokens *out, char *err, size_t errlen) {
    Tokens w;
    if (tokenizer_split(&w, text, err, errlen) != 0) return -1;
    int T = w.n + (add_special ? 1 : 0), rc = 0;
    out->ids = calloc((size_t)T + 1, sizeof *out->ids);
    out->tokens = calloc((size_t)T + 1, sizeof *out->tokens);
    if (!out->ids || !out->tokens) rc = errmsg_set(err, errlen, "out of memory");
    for (int i = 0; rc == 0 && i < T; i++) {
        const char *word = i < w.n ? w.tok[i] : "<eos>";
        out->ids[i] = vocab_id(&n->mf.v, word);
        if (out->ids[i] < 0) out->ids[i] = vocab_id(&n->mf.v, "<unk>");
        if (!(out->tokens[i] = strdup(word))) rc = errmsg_set(err, errlen, "out of memory");
        out->n = out->n_real = i + 1;
    }
    tokens_free(&w);
    if (rc != 0) hf_input_free(out);
    return rc;
}

int net_tokenize(const Net *n, const char *text, int add_special, NetTokens *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    return n->own ? own_tokenize(n, text, add_special, out, err, errlen)
                  : hf_file_tokenize(&n->fam, text, add_special, out, err, errlen);
}

void net_tokens_free(NetTokens *t) { hf_input_free(t); }

/* A foreign model's map of layer l: "decoder.L.masked_self" (a decoder),
 * "encoder.L.self" (BERT). */
static void family_map(const Net *n, int l, char *buf, size_t len) {
    if (hf_file_causal(&n->fam)) snprintf(buf, len, "decoder.%d.masked_self", l);
    else snprintf(buf, len, "encoder.%d.self", l);
}

/* One item "MAP.H" of a foreign model's --ablate list into mask.  0, or -1 with err. */
static int family_item(const Net *n, const char *item, unsigned char *mask, char *err, size_t errlen) {
    char first[64], last[64], map[64];
    const NetShape *s = &n->shape;
    family_map(n, 0, first, sizeof first);
    family_map(n, s->n_layer - 1, last, sizeof last);
    const char *dot = strrchr(item, '.');
    char *end = NULL;
    long h = dot && dot[1] ? strtol(dot + 1, &end, 10) : -1;
    if (!dot || !end || *end || dot == item)
        return errmsg_set(err, errlen, "'%s' is not MAP.HEAD such as %s.0 (maps: %s … %s)", item, first, first, last);
    for (int l = 0; l < s->n_layer; l++) {
        family_map(n, l, map, sizeof map);
        if (strlen(map) != (size_t)(dot - item) || strncmp(item, map, (size_t)(dot - item))) continue;
        if (h < 0 || h >= s->n_head)
            return errmsg_set(err, errlen, "'%s': head %s is out of range (heads 0-%d)", item, dot + 1, s->n_head - 1);
        mask[(size_t)l * s->n_head + h] = 1;
        return 0;
    }
    return errmsg_set(err, errlen, "'%s': this model has no map %.*s (maps: %s … %s)", item, (int)(dot - item), item,
                      first, last);
}

/* --ablate on a foreign model: every item checked first, so a bad list changes nothing. */
static int family_ablate(Net *n, const char *spec, char *err, size_t errlen) {
    const NetShape *s = &n->shape;
    size_t cells = (size_t)s->n_layer * s->n_head;
    free(n->knocked);
    n->knocked = NULL;
    if (!spec) return hf_file_set_ablation(&n->fam, NULL, err, errlen);
    char buf[1024];
    if (!*spec) return errmsg_set(err, errlen, "no head given (MAP.HEAD)");
    if (strlen(spec) >= sizeof buf) return errmsg_set(err, errlen, "the list of heads is too long");
    if (!(n->knocked = calloc(cells ? cells : 1, 1))) return errmsg_set(err, errlen, "out of memory");
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if (family_item(n, item, n->knocked, err, errlen)) { free(n->knocked); n->knocked = NULL; return -1; }
    if (hf_file_set_ablation(&n->fam, n->knocked, err, errlen)) return -1;
    size_t len = 0;
    for (size_t c = 0; c < cells; c++) {
        if (!n->knocked[c]) continue;
        char map[64];
        family_map(n, (int)(c / (size_t)s->n_head), map, sizeof map);
        len += (size_t)snprintf(n->ablated + (len < sizeof n->ablated ? len : sizeof n->ablated),
                                len < sizeof n->ablated ? sizeof n->ablated - len : 0, "%s%s.%d", len ? ", " : "", map,
                                (int)(c % (size_t)s->n_head));
    }
    return 0;
}

int net_ablate(Net *n, const char *spec, char *err, size_t errlen) {
    n->ablated[0] = '\0';
    if (n->own) {
        if (!spec) { model_ablate_clear(&n->mf.m); return 0; }
        if (model_ablate_parse(&n->mf.m, spec) != 0) return errmsg_set(err, errlen, "%s", n->mf.m.err);
        model_ablate_describe(&n->mf.m, 0, n->ablated, sizeof n->ablated);
        return 0;
    }
    return family_ablate(n, spec, err, errlen);
}

int net_ablated_json(const Net *n, char *buf, size_t len) {
    if (n->own) return model_ablate_describe(&n->mf.m, 1, buf, len);
    size_t k = (size_t)snprintf(buf, len, "[");
    size_t cells = n->knocked ? (size_t)n->shape.n_layer * n->shape.n_head : 0;
    for (size_t c = 0, first = 1; c < cells; c++) {
        if (!n->knocked[c]) continue;
        char map[64];
        family_map(n, (int)(c / (size_t)n->shape.n_head), map, sizeof map);
        k += (size_t)snprintf(buf + (k < len ? k : len), k < len ? len - k : 0,
                              "%s{\"map\": \"%s\", \"head\": %d, \"mode\": \"zero\"}", first ? "" : ", ", map,
                              (int)(c % (size_t)n->shape.n_head));
        first = 0;
    }
    k += (size_t)snprintf(buf + (k < len ? k : len), k < len ? len - k : 0, "]");
    return (int)k;
}

void net_free(Net *n) {
    if (n->own) model_file_free(&n->mf);
    else hf_file_free(&n->fam);
    free(n->knocked);
    memset(n, 0, sizeof *n);
}
