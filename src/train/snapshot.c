/* snapshot.c — the encoder attention of a few sentences at chosen steps of
 * training, as JSON (see snapshot.h). */
#include "train/snapshot.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "tokenize/tokenizer.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int snapshot_record(StrBuf *s, Model *m, const TrainSnapshots *sn, long step, double loss, double lr,
                    char *err, size_t errlen) {
    const ModelConfig *c = &m->config;
    int H = c->n_heads;
    char ltxt[32];
    if (isnan(loss)) snprintf(ltxt, sizeof ltxt, "null");   /* no step done yet */
    else snprintf(ltxt, sizeof ltxt, "%.6g", loss);
    if (strbuf_printf(s, "%s\n  {\"step\": %ld, \"loss\": %s, \"lr\": %.6g, \"sentences\": [",
                   s->len > 0 && s->buf[s->len - 1] == '}' ? "," : "", step, ltxt, lr)) goto oom;
    for (int k = 0; k < sn->n_sent; k++) {
        int S = sn->len[k];
        int tgt = VOCAB_2FR, one = 1;
        if (model_forward(m, &(ModelBatch){sn->src[k], &S, S, &tgt, &one, 1, 1})) {
            errmsg_set(err, errlen, "snapshot: %s", m->err); return -1;
        }
        if (strbuf_printf(s, "%s\n    {\"maps\": [", k ? "," : "")) goto oom;
        for (int l = 0; l < c->n_enc_layers; l++) {
            if (strbuf_printf(s, "%s\n      {\"id\": \"encoder.%d.self\", \"stack\": \"encoder\", \"layer\": %d, "
                           "\"kind\": \"self\", \"d_k\": %d, \"heads\": [", l ? "," : "", l, l, c->d_model / H)) goto oom;
            for (int h = 0; h < H; h++) {
                const float *att = m->acts.enc_self.att + ((size_t)l * H + h) * S * S;  /* B = 1 */
                if (strbuf_printf(s, "%s\n        {\"head\": %d, \"weights\": [", h ? "," : "", h)) goto oom;
                for (int i = 0; i < S; i++) {
                    if (strbuf_printf(s, "%s[", i ? "," : "")) goto oom;
                    for (int j = 0; j < S; j++)
                        if (strbuf_printf(s, "%s%.5g", j ? "," : "", att[(size_t)i * S + j])) goto oom;
                    if (strbuf_printf(s, "]")) goto oom;
                }
                if (strbuf_printf(s, "]}")) goto oom;
            }
            if (strbuf_printf(s, "]}")) goto oom;
        }
        if (strbuf_printf(s, "]}")) goto oom;
    }
    if (strbuf_printf(s, "]}")) goto oom;
    return 0;
oom:
    errmsg_set(err, errlen, "out of memory");
    return -1;
}

int snapshot_write(const StrBuf *body, const Model *m, const TrainSnapshots *sn, char *err, size_t errlen) {
    char cfg[1024];
    model_config_json(&m->config, cfg, sizeof cfg);
    StrBuf s = {0};
    int bad = strbuf_printf(&s, "{\"format\": \"attnviz-snapshots\", \"version\": 1,\n \"model\": %s,\n \"sentences\": [", cfg);
    for (int k = 0; k < sn->n_sent && !bad; k++) {
        bad |= strbuf_printf(&s, "%s\n  {\"text\": ", k ? "," : "");
        bad |= strbuf_json_string(&s, sn->text[k]);
        bad |= strbuf_printf(&s, ", \"source_tokens\": [");
        for (int j = 0; j < sn->len[k]; j++) {
            bad |= strbuf_printf(&s, "%s", j ? "," : "");
            bad |= strbuf_json_string(&s, sn->tokens[k][j]);
        }
        bad |= strbuf_printf(&s, "]}");
    }
    bad |= strbuf_printf(&s, "],\n \"snapshots\": [%s\n ]}\n", body->buf ? body->buf : "");
    if (bad) { free(s.buf); errmsg_set(err, errlen, "out of memory"); return -1; }
    int rc = file_write_atomic(sn->path, s.buf, s.len, err, errlen);
    free(s.buf);
    return rc;
}
