/* importance.c — head importance by knock-out (importance.h). */
#include "pipeline/importance.h"
#include "core/errmsg.h"
#include "core/strbuf.h"
#include "model/aggregate.h"
#include "pipeline/links.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void importance_pronoun(const Sentence *s, int *q_out, int *t_out) {
    int q = -1, t = -1;
    for (int i = 0; i < s->words.n && q < 0; i++)
        if (links_is_pronoun(s->words.tok[i])) q = i;
    for (int i = 0; q >= 0 && i + 1 < s->T && t < 0; i++)
        if (links_is_target_pronoun(s->tgt_tok[i + 1])) t = i;
    *q_out = q;
    *t_out = t;
}

int importance_compute(Importance *im, Model *m, const Sentence *s, char *err, size_t errlen) {
    memset(im, 0, sizeof *im);
    const ModelConfig *c = &m->config;
    for (int k = 0; k < 3; k++) {
        im->layers[k] = model_attn_layers(c, (ModelAttnKind)k);
        if (im->layers[k] > im->Lmax) im->Lmax = im->layers[k];
    }
    im->H = c->n_heads;
    im->n_targets = s->T;
    size_t nd = (size_t)3 * im->Lmax * im->H * s->T;
    im->targets = malloc((size_t)s->T * sizeof(char *));
    im->base = malloc((size_t)s->T * sizeof(float));
    im->delta = malloc(nd * sizeof(float));
    float *lp = malloc((size_t)s->T * sizeof(float));
    if (!im->targets || !im->base || !im->delta || !lp) {
        free(lp); importance_free(im);
        return errmsg_set(err, errlen, "out of memory");
    }
    for (int t = 0; t < s->T; t++) im->targets[t] = t + 1 < s->T ? s->tgt_tok[t + 1] : "<eos>";
    for (size_t i = 0; i < nd; i++) im->delta[i] = NAN;
    importance_pronoun(s, &im->pronoun_q, &im->pronoun_t);
    int S = s->S, T = s->T;
    if (model_forward(m, &(ModelBatch){s->src, &S, S, s->tgt, &T, T, 1}) != 0) goto fail;
    sentence_target_logp(m, 0, s, im->base);
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < im->layers[k]; l++)
            for (int h = 0; h < im->H; h++) {
                ModelAttnKind kind = (ModelAttnKind)k;
                if (model_ablated(m, kind, l, h) != MODEL_ABLATE_NONE) continue;
                if (model_ablate_head(m, kind, l, h, MODEL_ABLATE_ZERO, NULL) != 0) goto fail;
                int rc = model_forward(m, &(ModelBatch){s->src, &S, S, s->tgt, &T, T, 1});
                model_ablate_head(m, kind, l, h, MODEL_ABLATE_NONE, NULL);
                if (rc != 0) goto fail;
                sentence_target_logp(m, 0, s, lp);
                float *d = im->delta + (((size_t)k * im->Lmax + l) * im->H + h) * T;
                for (int t = 0; t < T; t++) d[t] = lp[t] - im->base[t];
            }
    free(lp);
    return 0;
fail:
    errmsg_set(err, errlen, "importance: %s", m->err);
    free(lp);
    importance_free(im);
    return -1;
}

/* ---- a foreign model: its predictions re-scored ---- */

/* log p of each target at its position, after the last forward pass (lg: V floats). */
static int stack_logp(HfFile *f, const int *pos, const int *ids, int n, float *lg, float *out, char *err, size_t errlen) {
    int V = hf_file_shape(f).n_vocab;
    for (int t = 0; t < n; t++) {
        if (hf_file_logits(f, pos[t], lg, err, errlen)) return -1;
        float mx = lg[0];
        for (int v = 1; v < V; v++) mx = lg[v] > mx ? lg[v] : mx;
        double sum = 0.0;
        for (int v = 0; v < V; v++) sum += exp((double)(lg[v] - mx));
        out[t] = (float)((double)(lg[ids[t]] - mx) - log(sum));
    }
    return 0;
}

/* The arrays of a foreign model's Importance: n targets, its one kind of map. */
static int stack_alloc(Importance *im, const HfFile *f, int n, const char *const *labels, const int *pos) {
    HfShape sh = hf_file_shape(f);
    ModelAttnKind kind = hf_file_causal(f) ? MODEL_ATTN_DEC_SELF : MODEL_ATTN_ENC_SELF;
    im->layers[kind] = im->Lmax = sh.n_layer;
    im->H = sh.n_head;
    im->n_targets = n;
    im->pronoun_t = im->pronoun_q = -1;
    size_t nd = (size_t)3 * im->Lmax * im->H * (size_t)n;
    size_t k = n > 0 ? (size_t)n : 1;
    im->targets = malloc(k * sizeof(char *));
    im->base = malloc(k * sizeof(float));
    im->positions = malloc(k * sizeof(int));
    im->delta = malloc((nd ? nd : 1) * sizeof(float));
    if (!im->targets || !im->base || !im->positions || !im->delta) return -1;
    for (int t = 0; t < n; t++) { im->targets[t] = labels[t]; im->positions[t] = pos[t]; }
    for (size_t i = 0; i < nd; i++) im->delta[i] = NAN;
    return 0;
}

int importance_compute_stack(Importance *im, HfFile *f, const HfInput *in, const int *pos, const int *ids,
                             const char *const *labels, int n, const unsigned char *knocked, char *err, size_t errlen) {
    memset(im, 0, sizeof *im);
    HfShape sh = hf_file_shape(f);
    size_t cells = (size_t)sh.n_layer * sh.n_head;
    ModelAttnKind kind = hf_file_causal(f) ? MODEL_ATTN_DEC_SELF : MODEL_ATTN_ENC_SELF;
    unsigned char *mask = calloc(cells ? cells : 1, 1);
    float *lg = malloc((size_t)sh.n_vocab * sizeof(float)), *lp = malloc((size_t)(n ? n : 1) * sizeof(float));
    int rc = -1;
    if (!mask || !lg || !lp || stack_alloc(im, f, n, labels, pos)) { errmsg_set(err, errlen, "out of memory"); goto done; }
    if (knocked) memcpy(mask, knocked, cells);
    if (hf_file_forward(f, in, NULL, NULL, err, errlen) || stack_logp(f, pos, ids, n, lg, im->base, err, errlen)) goto done;
    for (size_t c = 0; c < cells; c++) {
        if (mask[c]) continue;
        mask[c] = 1;
        int bad = hf_file_set_ablation(f, mask, err, errlen) || hf_file_forward(f, in, NULL, NULL, err, errlen) ||
                  stack_logp(f, pos, ids, n, lg, lp, err, errlen);
        mask[c] = 0;
        if (bad) goto done;
        float *d = im->delta + (((size_t)kind * im->Lmax) * im->H + c) * (size_t)n;
        for (int t = 0; t < n; t++) d[t] = lp[t] - im->base[t];
    }
    rc = 0;
done:   /* the knock-outs as they were, and the activations of the text read with them */
    if (hf_file_set_ablation(f, knocked, err, errlen) || hf_file_forward(f, in, NULL, NULL, err, errlen)) rc = -1;
    if (rc) importance_free(im);
    free(mask); free(lg); free(lp);
    return rc;
}

void importance_what(const Importance *im, char *buf, size_t len) {
    if (!im->positions) { snprintf(buf, len, "the translation (mean over its tokens)"); return; }
    if (im->layers[MODEL_ATTN_DEC_SELF] > 0 && im->n_targets == 1) {
        snprintf(buf, len, "the predicted next token “%s”", im->targets[0]);
        return;
    }
    size_t k = (size_t)snprintf(buf, len, "%s", im->n_targets == 1 ? "the [MASK] filled with" : "the [MASK] fillings (mean over");
    for (int t = 0; t < im->n_targets && k < len; t++)
        k += (size_t)snprintf(buf + k, len - k, "%s “%s”", t ? "," : "", im->targets[t]);
    if (im->n_targets > 1 && k < len) snprintf(buf + k, len - k, ")");
}

float importance_delta(const Importance *im, ModelAttnKind kind, int layer, int head, int t) {
    return im->delta[(((size_t)kind * im->Lmax + layer) * im->H + head) * im->n_targets + t];
}

float importance_summary(const Importance *im, ModelAttnKind kind, int layer, int head) {
    if (im->pronoun_t >= 0) return importance_delta(im, kind, layer, head, im->pronoun_t);
    double s = 0;
    for (int t = 0; t < im->n_targets; t++) s += importance_delta(im, kind, layer, head, t);
    return im->n_targets ? (float)(s / im->n_targets) : 0.0f;
}

char *importance_json(const Importance *im) {
    StrBuf b = {0};
    int bad = strbuf_printf(&b, "{\"method\": \"knock-out: each head's output zeroed before W_O, alone; %s\",\n"
                            "   \"measure\": \"delta log p\", \"targets\": [", im->positions
                            ? "the model's prediction (its most likely token at each position) re-scored on the same text"
                            : "the model's translation re-scored teacher-forced");
    for (int t = 0; t < im->n_targets; t++) {
        bad |= t ? strbuf_printf(&b, ", ") : 0;
        bad |= strbuf_json_string(&b, im->targets[t]);
    }
    bad |= strbuf_printf(&b, "],\n   \"base_log_p\": [");
    for (int t = 0; t < im->n_targets; t++) {
        bad |= t ? strbuf_printf(&b, ", ") : 0;
        bad |= strbuf_json_number(&b, im->base[t]);
    }
    for (int t = 0; im->positions && t < im->n_targets; t++)
        bad |= strbuf_printf(&b, "%s%d", t ? ", " : "],\n   \"positions\": [", im->positions[t]);
    bad |= strbuf_printf(&b, "],\n   \"pronoun_target\": %d, \"pronoun_source\": %d,\n   \"heads\": [",
                         im->pronoun_t, im->pronoun_q);
    int first = 1;
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < im->layers[k]; l++)
            for (int h = 0; h < im->H; h++) {
                char map[64];
                model_attn_map_name((ModelAttnKind)k, l, map, sizeof map);
                bad |= strbuf_printf(&b, "%s\n    {\"map\": \"%s\", \"head\": %d, \"summary\": ", first ? "" : ",", map, h);
                bad |= strbuf_json_number(&b, importance_summary(im, (ModelAttnKind)k, l, h));
                bad |= strbuf_printf(&b, ", \"delta_log_p\": [");
                for (int t = 0; t < im->n_targets; t++) {
                    bad |= t ? strbuf_printf(&b, ", ") : 0;
                    bad |= strbuf_json_number(&b, importance_delta(im, (ModelAttnKind)k, l, h, t));
                }
                bad |= strbuf_printf(&b, "]}");
                first = 0;
            }
    bad |= strbuf_printf(&b, "]}");
    if (bad) { free(b.buf); return NULL; }
    return b.buf;
}

void importance_free(Importance *im) {
    if (!im) return;
    free(im->targets); free(im->base); free(im->delta); free(im->positions);
    memset(im, 0, sizeof *im);
}

int importance_rank(const Importance *im, ImportanceRank *rows, int cap) {
    int n = 0;
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < im->layers[k]; l++)
            for (int h = 0; h < im->H && n < cap; h++) {
                float d = importance_summary(im, (ModelAttnKind)k, l, h);
                if (isfinite(d)) rows[n++] = (ImportanceRank){(ModelAttnKind)k, l, h, d};
            }
    for (int i = 1; i < n; i++)   /* insertion sort, stable: map order among equals */
        for (int j = i; j > 0 && rows[j].summary < rows[j - 1].summary; j--) {
            ImportanceRank x = rows[j];
            rows[j] = rows[j - 1];
            rows[j - 1] = x;
        }
    return n;
}

/* The rollout as the trace's "rollout" member. */
static char *rollout_json(const float *R, int E, int S, const TraceMap *m0) {
    StrBuf b = {0};
    int bad = strbuf_printf(&b, "{\"stack\": \"encoder\", \"kind\": \"self\", \"method\": \"Abnar & Zuidema 2020: "
                            "per layer 0.5*mean_h(A) + 0.5*I, rows renormalised, multiplied through the layers\",\n"
                            "   \"queries\": [");
    for (int i = 0; i < S; i++) { bad |= i ? strbuf_printf(&b, ", ") : 0; bad |= strbuf_json_string(&b, m0->queries[i]); }
    bad |= strbuf_printf(&b, "],\n   \"layers\": [");
    for (int l = 0; l < E; l++) {
        bad |= strbuf_printf(&b, "%s\n    [", l ? "," : "");
        for (int i = 0; i < S; i++) {
            bad |= strbuf_printf(&b, "%s[", i ? ", " : "");
            for (int j = 0; j < S; j++) {
                bad |= j ? strbuf_printf(&b, ", ") : 0;
                bad |= strbuf_json_number(&b, R[((size_t)l * S + i) * S + j]);
            }
            bad |= strbuf_printf(&b, "]");
        }
        bad |= strbuf_printf(&b, "]");
    }
    bad |= strbuf_printf(&b, "]}");
    if (bad) { free(b.buf); return NULL; }
    return b.buf;
}

int importance_trace_aggregates(Model *m, int b, Trace *t, float **rollout, char *err, size_t errlen) {
    *rollout = NULL;
    const ModelConfig *c = &m->config;
    int H = c->n_heads;
    for (int k = 0; k < 3; k++)
        for (int l = 0; l < model_attn_layers(c, (ModelAttnKind)k); l++) {
            char id[64];
            model_attn_map_name((ModelAttnKind)k, l, id, sizeof id);
            TraceMap *tm = trace_find_map(t, id);
            if (!tm) continue;
            float *nw = malloc((size_t)H * tm->Tq * tm->Tk * sizeof(float));
            if (!nw) return errmsg_set(err, errlen, "out of memory");
            /* the trace's rows are the forward's, trimmed to this item's lengths */
            int Tk = k == MODEL_ATTN_DEC_SELF ? m->T : m->S, Tq = k == MODEL_ATTN_ENC_SELF ? m->S : m->T;
            float *full = malloc((size_t)H * Tq * Tk * sizeof(float));
            if (!full || aggregate_norm_weighted(m, (ModelAttnKind)k, l, b, full) != 0) {
                free(nw); free(full);
                return errmsg_set(err, errlen, "%s", full ? m->err : "out of memory");
            }
            int rc = 0;
            for (int h = 0; h < H && !rc; h++) {
                for (int i = 0; i < tm->Tq; i++)
                    for (int j = 0; j < tm->Tk; j++)
                        nw[(size_t)i * tm->Tk + j] = full[((size_t)h * Tq + i) * Tk + j];
                rc = trace_set_norm_weighted(tm, h, nw);
            }
            free(nw); free(full);
            if (rc) return errmsg_set(err, errlen, "out of memory");
        }
    int E = model_attn_layers(c, MODEL_ATTN_ENC_SELF), S = m->S;
    TraceMap *m0 = trace_find_map(t, "encoder.0.self");
    if (E == 0 || !m0) return 0;
    float *R = malloc((size_t)E * S * S * sizeof(float));
    if (!R) return errmsg_set(err, errlen, "out of memory");
    if (aggregate_rollout(m, MODEL_ATTN_ENC_SELF, b, R) != 0) { free(R); return errmsg_set(err, errlen, "%s", m->err); }
    char *json = rollout_json(R, E, m0->Tq < S ? m0->Tq : S, m0);
    if (trace_take_section(t, "rollout", json)) { free(R); return errmsg_set(err, errlen, "out of memory"); }
    *rollout = R;
    return 0;
}
