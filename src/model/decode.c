/* decode.c — greedy decoding (see decode.h): one search for `run`, `demo` and
 * `eval`, so eval measures exactly what the pictures show. */
#include "model/decode.h"
#include "core/errmsg.h"
#include "tokenize/tokenizer.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int decode_pick_masked(const float *z, int V, int allow_unk, const unsigned char *allowed) {
    int best = VOCAB_EOS;
    if (allow_unk && z[VOCAB_UNK] > z[best]) best = VOCAB_UNK;
    for (int v = VOCAB_N_SPECIAL; v < V; v++)
        if ((!allowed || allowed[v]) && z[v] > z[best]) best = v;   /* outside the mask: logit −∞ */
    return best;
}

int decode_pick_unk(const float *z, int V, int allow_unk) { return decode_pick_masked(z, V, allow_unk, NULL); }

int decode_pick(const float *z, int V) { return decode_pick_unk(z, V, 0); }

const unsigned char *decode_lang_mask(const Model *m, int tag) {
    return tag == VOCAB_2FR ? m->lang_mask[0] : tag == VOCAB_2VI ? m->lang_mask[1] : NULL;
}

int decode_set_lang_mask(Model *m, int tag, const unsigned char *allowed) {
    int k = tag == VOCAB_2FR ? 0 : tag == VOCAB_2VI ? 1 : -1;
    if (k < 0) return -1;
    free(m->lang_mask[k]);
    m->lang_mask[k] = NULL;
    if (!allowed) return 0;
    int V = m->config.vocab_size;
    if (!(m->lang_mask[k] = malloc((size_t)V))) return -1;
    memcpy(m->lang_mask[k], allowed, (size_t)V);
    return 0;
}

int decode_has_lang_mask(const Model *m) { return m->lang_mask[0] || m->lang_mask[1]; }

int decode_src_has_unk(const int *src, int n) {
    for (int i = 0; i < n; i++) if (src[i] == VOCAB_UNK) return 1;
    return 0;
}

int decode_copy_unk(const float *att, int H, int Tq, int S, const int *src, const int *tgt, DecodeCopy *out) {
    int n = 0;
    for (int t = 1; t < Tq; t++) {
        if (tgt[t] != VOCAB_UNK) continue;
        int best = -1;
        float best_w = -1.0f;
        for (int j = 0; j < S; j++) {
            if (src[j] != VOCAB_UNK) continue;
            float w = 0.0f;
            for (int h = 0; h < H; h++) w += att[((size_t)h * Tq + (t - 1)) * S + j];
            w /= (float)H;
            if (w > best_w) { best_w = w; best = j; }
        }
        if (best >= 0) out[n++] = (DecodeCopy){t, best, best_w};
    }
    return n;
}

/* ---- when the search stops ---- */

int decode_set_sentence_ends(Model *m, const Vocab *v) {
    static const char *const ends[] = {".", "!", "?", "...", "…", "。", "？", "！"};
    static const char *const after[] = {"\"", "»", ")", "]", "'", "”", "’"};
    int V = m->config.vocab_size;
    free(m->sentence_end);
    if (!(m->sentence_end = calloc((size_t)(V > 0 ? V : 1), 1))) return -1;
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        int id = vocab_id(v, ends[i]);
        if (id >= 0 && id < V) m->sentence_end[id] = DECODE_END;
    }
    for (size_t i = 0; i < sizeof after / sizeof *after; i++) {
        int id = vocab_id(v, after[i]);
        if (id >= 0 && id < V) m->sentence_end[id] = DECODE_AFTER_END;
    }
    return 0;
}

/* Sentences ended in ids[0..n): runs of end tokens. */
static int count_ends(const unsigned char *end, int V, const int *ids, int n) {
    int k = 0;
    for (int i = 0; i < n; i++)
        k += ids[i] >= 0 && ids[i] < V && end[ids[i]] == DECODE_END &&
             !(i > 0 && ids[i - 1] >= 0 && ids[i - 1] < V && end[ids[i - 1]] == DECODE_END);
    return k;
}

/* The source's sentences: its ends, and its last words when no end follows them. */
static int source_sentences(const Model *m, const int *src, int src_len) {
    int V = m->config.vocab_size, n = src_len > 0 && src[src_len - 1] == VOCAB_EOS ? src_len - 1 : src_len;
    int last = n - 1;
    while (last >= 0 && src[last] >= 0 && src[last] < V && m->sentence_end[src[last]] == DECODE_AFTER_END) last--;
    int open = last >= 0 && !(src[last] >= 0 && src[last] < V && m->sentence_end[src[last]] == DECODE_END);
    return count_ends(m->sentence_end, V, src, n) + open;
}

int decode_stop_before(const Model *m, const int *src, int src_len, const int *out, int n, int next, DecodeStop *why) {
    *why = (DecodeStop){DECODE_STOP_EOS, 0, 0};
    if (next == VOCAB_EOS) return 1;
    /* the same n-gram twice in a row (n = 2..DECODE_MAX_REPEAT), or one token three times */
    if (n >= 2 && out[n - 1] == next && out[n - 2] == next) {
        *why = (DecodeStop){DECODE_STOP_REPEAT, 1, n - 1};   /* keeps its two copies */
        return 1;
    }
    for (int k = 2; k <= DECODE_MAX_REPEAT && 2 * k <= n + 1; k++) {
        int same = out[n - k] == next;   /* candidate c = out + next: c[n+1-k..n] vs c[n+1-2k..n-k] */
        for (int i = 0; same && i < k - 1; i++) same = out[n + 1 - k + i] == out[n + 1 - 2 * k + i];
        for (int i = 0; same && m->sentence_end && i < k; i++) {   /* a whole sentence again: the sentence rule's */
            int id = out[n + 1 - 2 * k + i];
            same = !(id >= 0 && id < m->config.vocab_size && m->sentence_end[id] == DECODE_END);
        }
        if (same) {
            *why = (DecodeStop){DECODE_STOP_REPEAT, k, n + 1 - 2 * k};
            return 1;
        }
    }
    int V = m->config.vocab_size;
    if (m->sentence_end && n > 0 && next >= 0 && next < V && !m->sentence_end[next] &&
        count_ends(m->sentence_end, V, out, n) >= source_sentences(m, src, src_len)) {
        *why = (DecodeStop){DECODE_STOP_SENTENCES, 0, 0};
        return 1;
    }
    return 0;
}

void decode_stop_text(const DecodeStop *st, const char *const *out_words, char *buf, size_t len) {
    buf[0] = '\0';
    if (!st || st->why != DECODE_STOP_REPEAT || len < 64) return;
    size_t k = (size_t)snprintf(buf, len, "the output began to repeat “");
    for (int i = 0; i < st->n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%s", i ? " " : "", out_words[st->at + i] ? out_words[st->at + i] : "?");
    if (k < len) snprintf(buf + k, len - k, "”; the search stopped there (a loop, not the model's own end)");
}

static int any_nonfinite(const float *x, size_t n) {
    if (!x) return 0;
    for (size_t i = 0; i < n; i++) if (!isfinite(x[i])) return 1;
    return 0;
}

/* After a forward of (B, S) sources and (B, T) targets: 0 if its logits are
 * finite, else -1 with a message naming the first layer whose output holds NaN
 * or infinity (weights too large for float32 make a silent empty translation). */
static int check_finite_forward(const Model *m, int B, int S, int T, char *err, size_t errlen) {
    const ModelConfig *c = &m->config;
    const ModelActs *a = &m->acts;
    size_t C = (size_t)c->d_model, es = (size_t)B * S * C, ds = (size_t)B * T * C;
    if (!any_nonfinite(a->logits, (size_t)B * T * c->vocab_size)) return 0;
    const char *what = NULL;
    char buf[96];
    if (any_nonfinite(a->enc_x, es)) what = "the encoder's input (token embedding × √d_model + positions)";
    for (int l = 0; !what && l < c->n_enc_layers; l++) {
        const char *step = any_nonfinite(a->enc_res1 + l * es, es) ? "self-attention" :
                           any_nonfinite(a->enc_res2 + l * es, es) ? "feed-forward" : NULL;
        if (step) { snprintf(buf, sizeof buf, "encoder layer %d (%s)", l, step); what = buf; }
    }
    if (!what && any_nonfinite(a->dec_x, ds)) what = "the decoder's input (token embedding + positions)";
    for (int l = 0; !what && l < c->n_dec_layers; l++) {
        const char *step = any_nonfinite(a->dec_res1 + l * ds, ds) ? "masked self-attention" :
                           any_nonfinite(a->dec_res2 + l * ds, ds) ? "cross-attention" :
                           any_nonfinite(a->dec_res3 + l * ds, ds) ? "feed-forward" : NULL;
        if (step) { snprintf(buf, sizeof buf, "decoder layer %d (%s)", l, step); what = buf; }
    }
    return errmsg_set(err, errlen, "non-finite numbers (NaN or infinity) from %s: the model's numbers overflowed "
                      "float32 (are its weights damaged or far too large?)", what ? what : "the output layer (logits)");
}

int decode_greedy_batch(Model *m, const int *src, const int *src_len, int S, const int *tags,
                             int B, int max_len, int *out, int *out_len, DecodeStop *stop, char *err, size_t errlen) {
    const ModelConfig *c = &m->config;
    if (c->arch != MODEL_ENC_DEC) { errmsg_set(err, errlen, "greedy decoding needs an encoder-decoder model"); return -1; }
    if (max_len < 1 || max_len > c->max_len - 1 || B < 1) {
        errmsg_set(err, errlen, "greedy decoding: max_len %d must be 1..%d (the model's max_len - 1)",
               max_len, c->max_len - 1);
        return -1;
    }
    int Tcap = max_len + 1, V = c->vocab_size;
    int *dec = malloc((size_t)B * Tcap * sizeof(int)), *tl = malloc((size_t)B * sizeof(int));
    unsigned char *done = calloc((size_t)B, 1);
    if (!dec || !tl || !done) { free(dec); free(tl); free(done); errmsg_set(err, errlen, "out of memory"); return -1; }
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < Tcap; t++) dec[(size_t)b * Tcap + t] = VOCAB_PAD;
        dec[(size_t)b * Tcap] = tags[b];
        out_len[b] = max_len;
        if (stop) stop[b] = (DecodeStop){DECODE_STOP_LENGTH, 0, 0};
    }
    int rc = 0, left = B;
    for (int t = 0; t < max_len && left > 0; t++) {
        int T = t + 1;
        /* the forward wants (B, T) contiguous: compact the prefix rows */
        int *in = malloc((size_t)B * T * sizeof(int));
        if (!in) { errmsg_set(err, errlen, "out of memory"); rc = -1; break; }
        for (int b = 0; b < B; b++) {
            memcpy(in + (size_t)b * T, dec + (size_t)b * Tcap, (size_t)T * sizeof(int));
            tl[b] = T;
        }
        int f = model_forward(m, &(ModelBatch){src, src_len, S, in, tl, T, B});
        free(in);
        if (f) { errmsg_set(err, errlen, "%s", m->err); rc = -1; break; }
        if (check_finite_forward(m, B, S, T, err, errlen)) { rc = -1; break; }
        for (int b = 0; b < B; b++) {
            if (done[b]) continue;
            const float *z = m->acts.logits + ((size_t)b * T + t) * V;
            int best = decode_pick_masked(z, V, decode_src_has_unk(src + (size_t)b * S, src_len[b]),
                                          decode_lang_mask(m, tags[b]));
            DecodeStop why;
            if (decode_stop_before(m, src + (size_t)b * S, src_len[b], out + (size_t)b * max_len, t, best, &why)) {
                done[b] = 1;
                out_len[b] = why.why == DECODE_STOP_REPEAT ? why.at + why.n : t;
                if (stop) stop[b] = why;
                left--;
                continue;
            }
            out[(size_t)b * max_len + t] = best;
            dec[(size_t)b * Tcap + t + 1] = best;
        }
    }
    free(dec); free(tl); free(done);
    return rc;
}

int decode_greedy_ids(Model *m, const int *src, int src_len, int lang_tag, int max_len,
                       int *out, int *out_len, char *err, size_t errlen) {
    return decode_greedy_batch(m, src, &src_len, src_len, &lang_tag, 1, max_len, out, out_len, NULL,
                                    err, errlen);
}

int decode_greedy(Model *m, const int *src, int S, int tag, int max_len, int *out, int *T,
                  DecodeStop *stop, char *err, size_t errlen) {
    /* out holds the tag too, and the search caps its output at the model's max_len - 1 */
    if (max_len > m->config.max_len) max_len = m->config.max_len;
    if (max_len < 2) return errmsg_set(err, errlen, "max_len must be at least 2 (the tag and one word)");
    int n = 0;
    out[0] = tag;
    if (decode_greedy_batch(m, src, &S, S, &tag, 1, max_len - 1, out + 1, &n, stop, err, errlen) != 0) return -1;
    *T = n + 1;
    if (model_forward(m, &(ModelBatch){src, &S, S, out, T, *T, 1}) != 0)
        return errmsg_set(err, errlen, "model: %s", m->err);
    return 0;
}
