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

/* The first source pronoun and the first target pronoun (its translation). */
static void find_pronoun(Importance *im, const Sentence *s) {
    im->pronoun_q = im->pronoun_t = -1;
    for (int q = 0; q < s->words.n && im->pronoun_q < 0; q++)
        if (links_is_pronoun(s->words.tok[q])) im->pronoun_q = q;
    if (im->pronoun_q < 0) return;
    for (int t = 0; t + 1 < s->T && im->pronoun_t < 0; t++)
        if (links_is_target_pronoun(s->tgt_tok[t + 1])) im->pronoun_t = t;
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
    find_pronoun(im, s);
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
    int bad = strbuf_printf(&b, "{\"method\": \"knock-out: each head's output zeroed before W_O, alone; "
                            "the model's translation re-scored teacher-forced\",\n   \"measure\": \"delta log p\", "
                            "\"targets\": [");
    for (int t = 0; t < im->n_targets; t++) {
        bad |= t ? strbuf_printf(&b, ", ") : 0;
        bad |= strbuf_json_string(&b, im->targets[t]);
    }
    bad |= strbuf_printf(&b, "],\n   \"base_log_p\": [");
    for (int t = 0; t < im->n_targets; t++) {
        bad |= t ? strbuf_printf(&b, ", ") : 0;
        bad |= strbuf_json_number(&b, im->base[t]);
    }
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
    free(im->targets); free(im->base); free(im->delta);
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
    if (!json || trace_set_section(t, "rollout", json) != 0) { free(json); free(R); return errmsg_set(err, errlen, "out of memory"); }
    free(json);
    *rollout = R;
    return 0;
}
