/* stack_attrib.c — direct logit attribution of one predicted token
 * (stack.h's stack_model_attribution): one forward pass that taps the
 * residual stream's parts at one position, then each part's share of the
 * logit through the final norm frozen at that pass's scale. */
#include "family/stack.h"
#include "core/errmsg.h"
#include "core/sizes.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The families whose logit is a sum of the stream's parts once the final
 * norm's scale is frozen.  0, or -1 with err saying why not. */
static int attributable(const StackModel *m, char *err, size_t errlen) {
    const StackConfig *c = &m->c;
    if (!c->causal || c->post_norm)
        return errmsg_set(err, errlen, "--attribution splits a decoder's next-token logit (GPT-2, the Llama family, "
                          "llama2.c); %s predicts a [MASK] through norms after each residual add", stack_family_name(c->family));
    for (int l = 0; l < c->n_layer; l++)
        if (m->w.layer[l].post_attn_norm.w || m->w.layer[l].post_ffn_norm.w)
            return errmsg_set(err, errlen, "--attribution: this model norms each sublayer's output before adding it to "
                              "the residual stream (Gemma 3), so the parts would not add up to the logit");
    if (c->final_softcap > 0)
        return errmsg_set(err, errlen, "--attribution: this model soft-caps its logits (tanh), so the parts would not "
                          "add up to the logit");
    if (!m->w.final_norm.w) return errmsg_set(err, errlen, "--attribution: this model has no final norm");
    return 0;
}

/* g (C): the direction a part p is dotted with, Σ_c p_c·g_c = its share of
 * the logit; *bias: the norm's bias and the output bias along the row. */
static void direction(const StackModel *m, const float *resid, int token, double *g, double *bias) {
    const StackConfig *c = &m->c;
    int C = c->d_model, V = c->n_vocab, layer = c->norm == STACK_NORM_LAYER;
    const StackLinear *U = &m->w.out;
    double mean = 0, ss = 0;
    for (int i = 0; i < C; i++) mean += resid[i];
    mean /= C;
    for (int i = 0; i < C; i++) ss += layer ? (resid[i] - mean) * (resid[i] - mean) : (double)resid[i] * resid[i];
    double scale = 1.0 / sqrt(ss / C + c->norm_eps), ubar = 0;   /* frozen: 1/σ or 1/rms */
    *bias = U->b ? U->b[token] : 0.0;
    for (int i = 0; i < C; i++) {
        double u = U->layout == STACK_IN_OUT ? U->w[(size_t)i * V + token] : U->w[(size_t)token * C + i];
        const StackNormW *n = &m->w.final_norm;
        g[i] = u * (c->norm_plus_one ? 1.0 + n->w[i] : n->w[i]);
        if (n->b) *bias += u * n->b[i];
        ubar += g[i];
    }
    ubar /= C;
    for (int i = 0; i < C; i++) g[i] = (g[i] - (layer ? ubar : 0.0)) * scale;
}

static double dot(const float *p, const double *g, int C) {
    double s = 0;
    for (int i = 0; i < C; i++) s += p[i] * g[i];
    return s;
}

/* Head h of layer l: its output a (D) through its slice of W_O, dotted with g. */
static double head_share(const StackModel *m, int l, int h, const float *att, const double *g) {
    const StackConfig *c = &m->c;
    const StackLinear *o = &m->w.layer[l].o;
    int C = c->d_model, D = c->head_dim, QD = c->n_head * D;
    double s = 0;
    for (int d = 0; d < D; d++) {
        int i = h * D + d;
        double a = att[i], row = 0;
        if (a == 0) continue;
        for (int k = 0; k < C; k++)
            row += (o->layout == STACK_IN_OUT ? o->w[(size_t)i * C + k] : o->w[(size_t)k * QD + i]) * g[k];
        s += a * row;
    }
    return s;
}

/* The tap's arrays, cut from one block: embed, resid (C), att (L, QD), mlp (L, C). */
static float *tap_alloc(const StackConfig *c, StackTap *tap) {
    size_t C = (size_t)c->d_model, QD = (size_t)c->n_head * c->head_dim, per, all;
    if (!size_add(&per, QD, C) || !size_mul(&all, per, (size_t)c->n_layer) || !size_add(&all, all, 2 * C)) return NULL;
    float *b = malloc(all * sizeof *b);
    if (!b) return NULL;
    tap->embed = b;
    tap->resid = b + C;
    tap->att = b + 2 * C;
    tap->mlp = tap->att + (size_t)c->n_layer * QD;
    return b;
}

int stack_model_attribution(StackModel *m, const int *ids, int T, int pos, int token, StackAttribution *out, char *err,
                            size_t errlen) {
    const StackConfig *c = &m->c;
    int C = c->d_model, L = c->n_layer, H = c->n_head, QD = H * c->head_dim;
    if (attributable(m, err, errlen)) return -1;
    if (pos < 0 || pos >= T || token < 0 || token >= c->n_vocab)
        return errmsg_set(err, errlen, "--attribution: no token %d at position %d", token, pos);
    StackTap tap = {.pos = pos};
    float *block = tap_alloc(c, &tap), *logits = malloc((size_t)c->n_vocab * sizeof *logits);
    double *g = malloc((size_t)C * sizeof *g), bias = 0;
    int rc = -1;
    if (!block || !logits || !g) { errmsg_set(err, errlen, "out of memory"); goto done; }
    m->tap = &tap;
    rc = stack_model_forward(m, ids, T, T, NULL, NULL, NULL, err, errlen);
    m->tap = NULL;
    if (rc || (rc = stack_model_logits(m, pos, logits, err, errlen))) goto done;
    direction(m, tap.resid, token, g, &bias);
    for (int l = 0; l < L; l++) {
        const float *ob = m->w.layer[l].o.b;
        for (int h = 0; h < H; h++) out->heads[(size_t)l * H + h] = (float)head_share(m, l, h, tap.att + (size_t)l * QD, g);
        out->mlp[l] = (float)dot(tap.mlp + (size_t)l * C, g, C);
        if (ob) bias += dot(ob, g, C);
    }
    out->embedding = (float)dot(tap.embed, g, C);
    out->bias = (float)bias;
    out->logit = logits[token];
done:
    free(block); free(logits); free(g);
    return rc;
}
