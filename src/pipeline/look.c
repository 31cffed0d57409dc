/* look.c — see look.h. */
#include "pipeline/look.h"
#include "core/errmsg.h"
#include "model/checkpoint.h"
#include "core/strbuf.h"
#include "model/decode.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void look_init(Look *L) {
    memset(L, 0, sizeof *L);
    trace_init(&L->t);
}

void look_free(Look *L) {
    if (!L) return;
    sentence_free(&L->s);
    trace_free(&L->t);
    free(L->rollout);
    importance_free(&L->imp);
    free(L->links);
    look_init(L);
}

/* 1 when the step `bit` was asked for. */
static int wants(const LookSpec *spec, unsigned bit) { return (spec->want & bit) != 0; }

/* ---- prepare and translate ---- */

/* Every sentence prepared, and checked against what training saw (LOOK_WORLD). */
static int prepare_all(Look *out, ModelFile *mf, const char *const *texts, int n, const LookSpec *spec, char *err,
                       size_t errlen) {
    unsigned char *known = NULL;   /* (vocab) 1 = a word seen in a training source */
    int max_words = -1;            /* the longest training source (-1: not recorded) */
    if (wants(spec, LOOK_WORLD)) {
        if (!(known = malloc((size_t)mf->v.size))) { out[0].failed = 1; return errmsg_set(err, errlen, "out of memory"); }
        checkpoint_meta_source_known(mf->metadata, mf->v.size, known, &max_words);
    }
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        Look *L = &out[i];
        rc = sentence_prepare(&L->s, texts[i], &mf->m, &mf->v, err, errlen);
        if (rc != 0) { L->failed = 1; break; }
        if (known) world_check(&L->world, &L->s, &mf->v, known, max_words);
        L->reached = LOOK_PREPARED;
    }
    free(known);
    return rc;
}

static int translate_all(Look *out, ModelFile *mf, int n, const LookSpec *spec, char *err, size_t errlen) {
    for (int i = 0; i < n; i++) {
        Look *L = &out[i];
        int rc = spec->target ? sentence_set_target(&L->s, &mf->v, spec->tag, spec->target, err, errlen)
                              : sentence_translate(&L->s, &mf->m, &mf->v, spec->tag, err, errlen);
        if (rc != 0) { L->failed = 1; return -1; }
        L->reached = LOOK_TRANSLATED;
    }
    return 0;
}

/* ---- what the trace records of the run ---- */

/* "ablated" (the knocked-out heads) and "language_mask" (the decoder chose the
 * words under the language mask; not with a given target). */
static int record_run(Trace *t, const Model *m, const LookSpec *spec, char *err, size_t errlen) {
    char json[2048];
    model_ablate_describe(m, 1, json, sizeof json);
    if (trace_set_section(t, "ablated", json) != 0) return errmsg_set(err, errlen, "out of memory");
    int masked = decode_has_lang_mask(m) && !spec->target;
    if (trace_set_section(t, "language_mask", masked ? "true" : "false") != 0)
        return errmsg_set(err, errlen, "out of memory");
    return 0;
}

/* "unk_copies": each <unk> replaced by a source word, [] when none. */
static int record_copies(Trace *t, const Sentence *s, const Model *m, char *err, size_t errlen) {
    char json[8192];
    size_t len = (size_t)snprintf(json, sizeof json, "[");
    for (int k = 0; k < s->n_copies && len < sizeof json; k++) {
        const DecodeCopy *c = &s->copies[k];
        len += (size_t)snprintf(json + len, sizeof json - len,
                                "%s{\"target\": %d, \"source\": %d, \"word\": \"", k ? ", " : "", c->target, c->source);
        for (const char *p = s->raw[c->source]; *p && len + 8 < sizeof json; p++) {   /* JSON string */
            if (*p == '"' || *p == '\\') json[len++] = '\\';
            if ((unsigned char)*p >= 0x20) json[len++] = *p;
        }
        len += (size_t)snprintf(json + len, sizeof json - len, "\", \"weight\": %.9g, \"map\": \"decoder.%d.cross\", \"heads\": [",
                                (double)c->weight, s->copy_layer);
        for (int h = 0; h < m->config.n_heads && len < sizeof json; h++)
            len += (size_t)snprintf(json + len, sizeof json - len, "%s%d", h ? ", " : "", h);
        len += (size_t)snprintf(json + len, sizeof json - len, "]}");
    }
    if (len + 2 >= sizeof json) return errmsg_set(err, errlen, "too many copies to record");
    strcat(json, "]");
    if (trace_set_section(t, "unk_copies", json) != 0) return errmsg_set(err, errlen, "out of memory");
    return 0;
}

/* "decode": why the search stopped ("eos", "sentences", "repeat", "length";
 * "given" for a --target), and the repeat's warning, or null. */
static int record_decode(Trace *t, const Sentence *s, char *err, size_t errlen) {
    static const char *const why[] = {"eos", "sentences", "repeat", "length"};
    StrBuf b = {0};
    int bad = strbuf_printf(&b, "{\"stop\": \"%s\", \"warning\": ", s->given ? "given" : why[s->stop.why]);
    bad |= s->stop_warning[0] ? strbuf_json_string(&b, s->stop_warning) : strbuf_printf(&b, "null");
    if (!s->given && s->stop.why == DECODE_STOP_REPEAT)
        bad |= strbuf_printf(&b, ", \"repeat\": {\"at\": %d, \"n\": %d}", s->stop.at + 1, s->stop.n);
    bad |= strbuf_printf(&b, "}");
    int rc = bad || trace_set_section(t, "decode", b.buf) != 0 ? errmsg_set(err, errlen, "out of memory") : 0;
    free(b.buf);
    return rc;
}

/* "source_read": the token the model read at each source position (the
 * labels show the words as typed); "unknown_words": the ordinary words it was
 * not trained on and how the translation shows their copy (null: left out). */
static int record_words(Trace *t, const Sentence *s, const WorldCheck *w, const Vocab *v, char *err, size_t errlen) {
    StrBuf b = {0};
    int bad = strbuf_printf(&b, "[");
    for (int k = 0; k < s->S; k++) {
        const char *tok = vocab_word(v, s->src[k]);
        bad |= strbuf_printf(&b, "%s", k ? ", " : "") | strbuf_json_string(&b, tok ? tok : "?");
    }
    bad |= strbuf_printf(&b, "]");
    bad |= trace_set_section(t, "source_read", b.buf ? b.buf : "[]") != 0;
    b.len = 0;
    bad |= strbuf_printf(&b, "[");
    for (int i = 0; i < w->n_unknown && i < 64; i++) {
        int k = w->unknown_pos[i], copied = sentence_copied(s, k);
        bad |= strbuf_printf(&b, "%s{\"source\": %d, \"word\": ", i ? ", " : "", k) | strbuf_json_string(&b, s->raw[k]);
        bad |= strbuf_printf(&b, ", \"shown\": ");
        bad |= copied && s->shown && s->shown[k] ? strbuf_json_string(&b, s->shown[k]) : strbuf_printf(&b, "null");
        bad |= strbuf_printf(&b, "}");
    }
    bad |= strbuf_printf(&b, "]");
    bad |= trace_set_section(t, "unknown_words", b.buf ? b.buf : "[]") != 0;
    free(b.buf);
    return bad ? errmsg_set(err, errlen, "out of memory") : 0;
}

/* ---- links ---- */

/* The step strip's head: spec->focus, else the first query token's drawn head,
 * else encoder.0.self head 0.  Then each query token's link (links_find). */
static int find_links(Look *L, const LookSpec *spec, char *err, size_t errlen) {
    static const CorefHead none = {-1, -1, -1, 0, NULL};
    LinksAsk ask = {.query = spec->query, .coref = spec->coref ? spec->coref : &none, .focus_map = -1};
    L->focus_map = -1;
    L->focus_head = 0;
    if (spec->focus && links_parse_focus(spec->focus, &L->t, &L->focus_map, &L->focus_head, err, errlen) != 0) return -1;
    if (spec->focus) ask.focus_map = L->focus_map, ask.focus_head = L->focus_head;
    L->n_links = links_find(&L->t, (const char *const *)L->s.words.tok, L->s.words.n, &ask, &L->links);
    if (L->n_links < 0) { L->n_links = 0; return errmsg_set(err, errlen, "out of memory"); }
    if (!spec->focus) links_focus(L->links, L->n_links, &L->focus_map, &L->focus_head);
    return 0;
}

/* ---- one sentence from its forward pass on ---- */

/* The forward pass sentence i's pictures show: alone, or (at i = 0, and after
 * knock-outs ran other passes) the whole batch. */
static int forward_for(Look *out, int n, int i, Model *m, const LookSpec *spec, char *err, size_t errlen) {
    if (spec->batch && i > 0 && !wants(spec, LOOK_IMPORTANCE)) return 0;
    int k = spec->batch ? n : 1;
    Sentence **batch = malloc(sizeof *batch * (size_t)k);
    if (!batch) return errmsg_set(err, errlen, "out of memory");
    for (int j = 0; j < k; j++) batch[j] = &out[spec->batch ? j : i].s;
    int rc = sentence_forward_batch(batch, k, m, err, errlen);
    free(batch);
    return rc;
}

/* "written\tinput" into out (cut on a character boundary). */
static void fmt_written(char *out, size_t n, const char *written, const char *input) {
    snprintf(out, n, "%.250s\t%.250s", written ? written : "", input ? input : "");
}

/* The decoder maps' rows labelled with the word each writes, the input word
 * it reads small beside it ("sister\tma", render/label.h): row i writes
 * input i + 1, the last row the end of the sentence when the search stopped
 * there (or the target was given), else what came next is not known ("…"). */
static int label_written_rows(Trace *t, const Sentence *s) {
    const char **lab = calloc((size_t)(s->T > 0 ? s->T : 1), sizeof *lab);
    char *buf = malloc((size_t)(s->T > 0 ? s->T : 1) * 600);
    int rc = !lab || !buf ? -1 : 0;
    for (int i = 0; rc == 0 && i < s->T; i++) {
        const char *next = i + 1 < s->T ? s->tgt_tok[i + 1]
                         : s->given || s->stop.why == DECODE_STOP_EOS ? "<eos>" : "…";
        fmt_written(buf + (size_t)i * 600, 600, next, s->tgt_tok[i]);
        lab[i] = buf + (size_t)i * 600;
    }
    for (int k = 0; rc == 0 && k < t->n_maps; k++)
        if (!strcmp(t->maps[k].stack, "decoder") && t->maps[k].Tq == s->T)
            rc = trace_set_row_labels(&t->maps[k], lab);
    free(lab);
    free(buf);
    return rc;
}

/* The trace of batch item b, and the words the model hesitated over. */
static int trace_sentence(Look *L, int b, ModelFile *mf, const LookSpec *spec, char *err, size_t errlen) {
    Model *m = &mf->m;
    if (sentence_labels(&L->s) != 0) return errmsg_set(err, errlen, "out of memory");
    if (model_trace(m, b, &L->t, (const char *const *)L->s.label, L->s.tgt_tok, wants(spec, LOOK_STEPS)) != 0)
        return errmsg_set(err, errlen, "model: %s", m->err);
    if (label_written_rows(&L->t, &L->s) != 0) return errmsg_set(err, errlen, "out of memory");
    if (wants(spec, LOOK_UNSURE) && !spec->target) L->n_unsure = world_unsure(m, b, &L->s, L->unsure, sizeof L->unsure);
    L->reached = LOOK_TRACED;
    char why[512];
    if (wants(spec, LOOK_FINITE) && trace_check_finite(&L->t, why, sizeof why) != 0)
        return errmsg_set(err, errlen, "model %s on \"%s\": %s", mf->path, L->s.text, why);
    if (wants(spec, LOOK_LINKS) && find_links(L, spec, err, errlen) != 0) return -1;
    L->reached = LOOK_LINKED;
    return 0;
}

/* What tests the maps' claim: the records, the aggregate views, importance. */
static int explain_sentence(Look *L, int b, ModelFile *mf, const LookSpec *spec, char *err, size_t errlen) {
    Model *m = &mf->m;
    int record = wants(spec, LOOK_RECORD);
    if (record && record_run(&L->t, m, spec, err, errlen) != 0) return -1;
    if (wants(spec, LOOK_AGGREGATES) && importance_trace_aggregates(m, b, &L->t, &L->rollout, err, errlen) != 0)
        return -1;
    if (wants(spec, LOOK_IMPORTANCE)) {
        if (importance_compute(&L->imp, m, &L->s, err, errlen) != 0) return -1;
        if (record && trace_take_section(&L->t, "importance", importance_json(&L->imp)))
            return errmsg_set(err, errlen, "out of memory");
    }
    L->reached = LOOK_EXPLAINED;
    if (record && (record_copies(&L->t, &L->s, m, err, errlen) != 0 || record_decode(&L->t, &L->s, err, errlen) != 0 ||
                   record_words(&L->t, &L->s, &L->world, &mf->v, err, errlen) != 0))
        return -1;
    L->reached = LOOK_DONE;
    return 0;
}

int look_sentences(Look *out, ModelFile *mf, const char *const *texts, int n, const LookSpec *spec, char *err,
                   size_t errlen) {
    for (int i = 0; i < n; i++) look_init(&out[i]);
    if (n < 1) return errmsg_set(err, errlen, "no sentence to look at");
    if (prepare_all(out, mf, texts, n, spec, err, errlen) != 0 || translate_all(out, mf, n, spec, err, errlen) != 0)
        return -1;
    if (!(spec->want & ~(unsigned)LOOK_WORLD)) {   /* the translation is all that was asked */
        for (int i = 0; i < n; i++) out[i].reached = LOOK_DONE;
        return 0;
    }
    for (int i = 0; i < n; i++) {
        Look *L = &out[i];
        int b = spec->batch ? i : 0;
        if (forward_for(out, n, i, &mf->m, spec, err, errlen) != 0 || trace_sentence(L, b, mf, spec, err, errlen) != 0 ||
            explain_sentence(L, b, mf, spec, err, errlen) != 0) {
            L->failed = 1;
            return -1;
        }
    }
    return 0;
}

int look_sentence(Look *out, ModelFile *mf, const char *text, const LookSpec *spec, char *err, size_t errlen) {
    return look_sentences(out, mf, &text, 1, spec, err, errlen);
}

/* ---- token ids ---- */

/* Item b of the ids' forward pass: its trace and aggregate views. */
static int look_item(Look *L, Model *m, int b, const LookIds *ids, const LookSpec *spec, char *err, size_t errlen) {
    const char **stok = calloc((size_t)(m->S + 1), sizeof(char *));
    const char **ttok = calloc((size_t)(m->T + 1), sizeof(char *));
    for (int t = 0; stok && t < m->S; t++) {
        int id = m->src[(size_t)b * m->S + t];
        stok[t] = id >= 0 && id < ids->n_words ? ids->words[id] : NULL;
    }
    for (int t = 0; ttok && t < m->T; t++) {
        int id = m->tgt[(size_t)b * m->T + t];
        ttok[t] = id >= 0 && id < ids->n_words ? ids->words[id] : NULL;
    }
    int rc = !stok || !ttok ? errmsg_set(err, errlen, "out of memory") : 0;
    if (rc == 0 && model_trace(m, b, &L->t, stok, ttok, wants(spec, LOOK_STEPS)) != 0)
        rc = errmsg_set(err, errlen, "model: %s", m->err);
    free(stok);
    free(ttok);
    if (rc != 0) return -1;
    L->reached = LOOK_TRACED;
    if (wants(spec, LOOK_AGGREGATES) && importance_trace_aggregates(m, b, &L->t, &L->rollout, err, errlen) != 0)
        return -1;
    L->reached = LOOK_DONE;
    return 0;
}

int look_ids(Look *out, Model *m, const LookIds *ids, const LookSpec *spec, char *err, size_t errlen) {
    for (int b = 0; b < ids->B; b++) look_init(&out[b]);
    if (ids->B < 1) return errmsg_set(err, errlen, "no token ids to look at");
    if (model_forward(m, &(ModelBatch){ids->src, ids->src_len, ids->S, ids->tgt, ids->tgt_len, ids->T, ids->B}) != 0) {
        out[0].failed = 1;
        return errmsg_set(err, errlen, "%s", m->err);
    }
    for (int b = 0; b < ids->B; b++)
        if (look_item(&out[b], m, b, ids, spec, err, errlen) != 0) {
            out[b].failed = 1;
            return -1;
        }
    return 0;
}
