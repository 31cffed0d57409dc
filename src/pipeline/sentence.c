/* sentence.c — see sentence.h. */
#include "pipeline/sentence.h"
#include "core/errmsg.h"
#include "model/decode.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "'a', 'b'" for the words at positions idx[0..n) (cut to fit). */
static void quote_words(char *out, size_t n, char *const *tok, const int *idx, int count) {
    out[0] = '\0';
    for (int i = 0; i < count; i++) {
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s'%s'", i ? ", " : "", tok[idx[i]]);
    }
}

/* Encodes words into ids (unknown → <unk>) and lists the unknown ones. */
static int encode_words(const Vocab *v, const Tokens *w, int *ids, char *list, size_t n, char *err, size_t errlen) {
    int *unknown = malloc(sizeof(int) * (size_t)(w->n > 0 ? w->n : 1));
    if (!unknown) return errmsg_set(err, errlen, "out of memory");
    int n_unk = vocab_encode(v, (const char *const *)w->tok, w->n, ids, unknown);
    quote_words(list, n, w->tok, unknown, n_unk);
    free(unknown);
    return n_unk;
}

/* The code point at s[i] (valid UTF-8, tokenizer-checked) and its length. */
static int code_point(const char *s, size_t n, size_t i, uint32_t *cp) {
    int len = tokenizer_utf8_len(s, n, i);
    const unsigned char *u = (const unsigned char *)s + i;
    if (len <= 1) { *cp = u[0]; return 1; }
    uint32_t v = u[0] & (0x7F >> len);
    for (int k = 1; k < len; k++) v = (v << 6) | (u[k] & 0x3F);
    *cp = v;
    return len;
}

/* A typed code point as the tokenizer reads it: lowercased, curly quotes straight. */
static uint32_t as_read(uint32_t c) {
    if (c == 0x2019 || c == 0x2018 || c == 0x02BC) return '\'';
    if (c == 0x201C || c == 0x201D || c == 0x201E) return '"';
    return tokenizer_lower(c);
}

/* Length in bytes of the text at i that the tokenizer reads as tok, or 0. */
static size_t match_lower(const char *text, size_t n, size_t i, const char *tok) {
    size_t tn = strlen(tok), a = i, b = 0;
    while (b < tn) {
        if (a >= n) return 0;
        uint32_t x, y;
        a += (size_t)code_point(text, n, a, &x);
        b += (size_t)code_point(tok, tn, b, &y);
        if (as_read(x) != y) return 0;
    }
    return a - i;
}

/* raw[k]: token k as the user typed it, found in order in the text; a token
 * the text does not spell (’ read as ') keeps its lowercase form.  0 or -1. */
static int find_raw_words(Sentence *s) {
    size_t n = strlen(s->text), at = 0;
    s->raw = calloc((size_t)(s->words.n > 0 ? s->words.n : 1), sizeof(char *));
    if (!s->raw) return -1;
    for (int k = 0; k < s->words.n; k++) {
        size_t len = 0, i = at;
        while (i < n && !(len = match_lower(s->text, n, i, s->words.tok[k]))) i++;
        s->raw[k] = len ? strndup(s->text + i, len) : strdup(s->words.tok[k]);
        if (!s->raw[k]) return -1;
        if (len) at = i + len;
    }
    return 0;
}

int sentence_prepare(Sentence *s, const char *text, const Model *m, const Vocab *v, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    s->text = text;
    /* the tokenizer's widest limit, so a long sentence hears the model's true limit below */
    if (tokenizer_split_max(&s->words, text, 4096, err, errlen) != 0) return -1;
    int max_len = m->config.max_len;
    if (s->words.n + 1 > max_len) {
        /* short: the numbers, how the text begins, and what to do */
        char start[96];
        int n = 0;
        for (int i = 0; i < s->words.n && i < 6 && n < (int)sizeof start - 40; i++)
            n += snprintf(start + n, sizeof start - (size_t)n, "%s%.30s", i ? " " : "", s->words.tok[i]);
        errmsg_set(err, errlen, "the sentence \"%s%s\" has %d tokens; this model reads at most %d (split it into "
                   "sentences of at most %d words, one argument each)", start, s->words.n > 6 ? " …" : "",
                   s->words.n, max_len - 1, max_len - 1);
        sentence_free(s);
        return -1;
    }
    s->S = s->words.n + 1;
    s->cap = max_len;
    s->src = malloc(sizeof(int) * (size_t)s->S);
    s->src_tok = malloc(sizeof(char *) * (size_t)s->S);
    s->tgt = malloc(sizeof(int) * (size_t)(s->cap + 1));
    s->tgt_tok = malloc(sizeof(char *) * (size_t)(s->cap + 1));
    s->copies = malloc(sizeof(DecodeCopy) * (size_t)(s->cap + 1));
    if (!s->src || !s->src_tok || !s->tgt || !s->tgt_tok || !s->copies) {
        sentence_free(s);
        return errmsg_set(err, errlen, "out of memory");
    }
    if (find_raw_words(s) != 0) { sentence_free(s); return errmsg_set(err, errlen, "out of memory"); }
    s->n_unknown = encode_words(v, &s->words, s->src, s->unknown, sizeof s->unknown, err, errlen);
    if (s->n_unknown < 0) { sentence_free(s); return -1; }
    s->src[s->words.n] = VOCAB_EOS;
    for (int i = 0; i < s->words.n; i++) s->src_tok[i] = s->words.tok[i];
    s->src_tok[s->words.n] = vocab_word(v, VOCAB_EOS);
    return 0;
}

const char *sentence_target_word(const Sentence *s, int t) {
    for (int k = 0; k < s->n_copies; k++)
        if (s->copies[k].target == t) {
            int j = s->copies[k].source;
            return s->shown && s->shown[j] ? s->shown[j] : s->raw[j];
        }
    return s->tgt_tok[t];
}

int sentence_copied(const Sentence *s, int k) {
    for (int c = 0; c < s->n_copies; c++)
        if (s->copies[c].source == k) return 1;
    return 0;
}

int sentence_labels(Sentence *s) {
    if (s->label) return 0;
    if (!(s->label = calloc((size_t)s->S, sizeof(char *)))) return -1;
    for (int k = 0; k < s->S; k++) {
        const char *typed = k < s->words.n ? s->raw[k] : s->src_tok[k];
        size_t n = strlen(typed) + 8;
        if (!(s->label[k] = malloc(n))) return -1;
        snprintf(s->label[k], n, "%s%s", k < s->words.n && s->src[k] == VOCAB_UNK ? "<unk> " : "", typed);
    }
    return 0;
}

/* tgt_tok and the translation text from tgt[0..T): the words, copies as typed. */
static void describe_target(Sentence *s, const Vocab *v) {
    for (int t = 0; t < s->T; t++) s->tgt_tok[t] = vocab_word(v, s->tgt[t]);
    size_t len = 0;
    s->translation[0] = '\0';
    for (int t = 1; t < s->T; t++) {
        if (s->tgt[t] < VOCAB_N_SPECIAL && s->tgt[t] != VOCAB_UNK) continue;
        const char *w = sentence_target_word(s, t);
        int k = snprintf(s->translation + len, sizeof s->translation - len, "%s%s", len ? " " : "", w ? w : "?");
        if (k < 0 || len + (size_t)k >= sizeof s->translation) {
            snprintf(s->translation, sizeof s->translation, "(too long to show)");
            return;
        }
        len += (size_t)k;
    }
}

/* After the decoder's last forward (B = 1): each <unk> it wrote replaced by
 * the source word the last decoder layer's cross-attention weighs most. */
static void copy_unknown(Sentence *s, const Model *m) {
    const ModelConfig *c = &m->config;
    s->n_copies = 0;
    s->copy_layer = c->n_dec_layers - 1;
    if (!s->copies || c->n_dec_layers < 1 || m->B != 1 || m->T != s->T) return;
    const float *att = m->acts.dec_cross.att + (size_t)s->copy_layer * c->n_heads * s->T * s->S;
    s->n_copies = decode_copy_unk(att, c->n_heads, s->T, s->S, s->src, s->tgt, s->copies);
}

int sentence_translate(Sentence *s, Model *m, const Vocab *v, int tag, char *err, size_t errlen) {
    if (decode_greedy(m, s->src, s->S, tag, s->cap, s->tgt, &s->T, &s->stop, err, errlen) != 0) return -1;
    copy_unknown(s, m);
    describe_target(s, v);
    const char **words = malloc(sizeof(char *) * (size_t)(s->T > 0 ? s->T : 1));
    if (!words) return errmsg_set(err, errlen, "out of memory");
    for (int t = 1; t < s->T; t++) words[t - 1] = sentence_target_word(s, t);
    decode_stop_text(&s->stop, words, s->stop_warning, sizeof s->stop_warning);
    free(words);
    return 0;
}

int sentence_set_target(Sentence *s, const Vocab *v, int tag, const char *target, char *err, size_t errlen) {
    Tokens tt = {0};
    if (tokenizer_split_max(&tt, target, 4096, err, errlen) != 0) return -1;
    if (tt.n + 1 > s->cap) {
        errmsg_set(err, errlen, "the target has %d tokens; this model writes at most %d: \"%s\"", tt.n, s->cap - 1,
                   target);
        tokens_free(&tt);
        return -1;
    }
    s->tgt[0] = tag;
    s->n_copies = 0;   /* the user's words: nothing to copy */
    s->given = 1;
    s->stop = (DecodeStop){DECODE_STOP_EOS, 0, 0};
    s->stop_warning[0] = '\0';
    s->n_target_unknown = encode_words(v, &tt, s->tgt + 1, s->target_unknown, sizeof s->target_unknown, err, errlen);
    s->T = tt.n + 1;
    tokens_free(&tt);
    if (s->n_target_unknown < 0) return -1;
    describe_target(s, v);
    return 0;
}

int sentence_forward(Sentence *s, Model *m, char *err, size_t errlen) {
    return sentence_forward_batch(&s, 1, m, err, errlen);
}

int sentence_forward_batch(Sentence *const *s, int n, Model *m, char *err, size_t errlen) {
    int S = 0, T = 0;
    for (int b = 0; b < n; b++) {
        if (s[b]->S > S) S = s[b]->S;
        if (s[b]->T > T) T = s[b]->T;
    }
    int *src = malloc(sizeof(int) * (size_t)n * S), *tgt = malloc(sizeof(int) * (size_t)n * T);
    int *sl = malloc(sizeof(int) * (size_t)n), *tl = malloc(sizeof(int) * (size_t)n);
    int rc = -1;
    if (!src || !tgt || !sl || !tl) { errmsg_set(err, errlen, "out of memory"); goto done; }
    for (int b = 0; b < n; b++) {
        for (int x = 0; x < S; x++) src[b * S + x] = x < s[b]->S ? s[b]->src[x] : VOCAB_PAD;
        for (int x = 0; x < T; x++) tgt[b * T + x] = x < s[b]->T ? s[b]->tgt[x] : VOCAB_PAD;
        sl[b] = s[b]->S;
        tl[b] = s[b]->T;
    }
    if (model_forward(m, &(ModelBatch){src, sl, S, tgt, tl, T, n}) != 0) { errmsg_set(err, errlen, "model: %s", m->err); goto done; }
    rc = 0;
done:
    free(src); free(tgt); free(sl); free(tl);
    return rc;
}

void sentence_free(Sentence *s) {
    if (!s) return;
    for (int k = 0; s->raw && k < s->words.n; k++) free(s->raw[k]);
    for (int k = 0; s->shown && k < s->words.n; k++) free(s->shown[k]);
    for (int k = 0; s->label && k < s->S; k++) free(s->label[k]);
    free(s->raw);
    free(s->shown);
    free(s->label);
    free(s->copies);
    tokens_free(&s->words);
    free(s->src); free(s->src_tok); free(s->tgt); free(s->tgt_tok);
    memset(s, 0, sizeof *s);
}

void sentence_target_logp(const Model *m, int b, const Sentence *s, float *out) {
    int V = m->config.vocab_size;
    for (int t = 0; t < s->T; t++) {
        const float *z = m->acts.logits + ((size_t)b * m->To + t) * V;
        float mx = z[0];
        for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
        double sum = 0.0;
        for (int v = 0; v < V; v++) sum += exp((double)(z[v] - mx));
        int y = t + 1 < s->T ? s->tgt[t + 1] : VOCAB_EOS;
        out[t] = (float)((double)(z[y] - mx) - log(sum));
    }
}
