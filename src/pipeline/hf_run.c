/* hf_run.c — see hf_run.h. */
#include "pipeline/hf_run.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/memory.h"
#include <stdint.h>
#include "pipeline/links.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "next: “the” 0.12, “a” 0.08 …" or "[MASK] → cat 0.31, dog 0.12 …" for the page. */
static void prediction_text(HfRun *r, int gpt) {
    char *p = r->s.translation;
    size_t n = sizeof r->s.translation, k = 0;
    if (!r->has_predictions) { snprintf(p, n, "(no masked-LM head: nothing to fill)"); return; }
    if (gpt) {
        k += (size_t)snprintf(p + k, n - k, "next token:");
        for (int i = 0; i < HF_RUN_TOP && k < n; i++)
            k += (size_t)snprintf(p + k, n - k, "%s “%s” %.2f", i ? "," : "", r->next[i].text, (double)r->next[i].prob);
        return;
    }
    if (r->n_masks == 0) { snprintf(p, n, "(no [MASK] to fill)"); return; }
    for (int m = 0; m < r->n_masks && k < n; m++)
        k += (size_t)snprintf(p + k, n - k, "%s[MASK] → %s %.2f", m ? "; " : "", r->fill[m][0].text,
                              (double)r->fill[m][0].prob);
}

static int predict(HfRun *r, HfFile *f, char *err, size_t errlen) {
    int gpt = hf_file_causal(f);
    r->has_predictions = gpt || f->m.has_mlm;
    if (gpt) {
        if (hf_file_top(f, r->in.n_real - 1, HF_RUN_TOP, r->next, err, errlen)) return -1;
    } else if (r->has_predictions) {
        int mask = hf_file_id(f, "[MASK]");
        for (int t = 0; t < r->in.n_real && r->n_masks < HF_RUN_MAX_MASKS; t++) {
            if (r->in.ids[t] != mask) continue;
            r->mask_pos[r->n_masks] = t;
            if (hf_file_top(f, t, HF_RUN_TOP, r->fill[r->n_masks++], err, errlen)) return -1;
        }
    }
    prediction_text(r, gpt);
    return 0;
}

int hf_run_check_size(const HfFile *f, int T, const HfRunSpec *spec, int streamed, char *err, size_t errlen) {
    HfShape sh = hf_file_shape(f);
    char what[160];
    if (!streamed && !spec->no_pictures && T > HF_RUN_PICTURE_MAX)
        return errmsg_set(err, errlen, "%d tokens: pictures are drawn for at most %d tokens (add --no-pictures, or "
                          "give a shorter text)", T, HF_RUN_PICTURE_MAX);
    int layers = streamed && sh.n_layer > 2 ? 2 : sh.n_layer;   /* streamed: one written while the next is made */
    double cells = (double)layers * sh.n_head * T * T, bytes = cells * 4.0 * (spec->trace == HF_TRACE_STEPS ? 5 : 1);
    snprintf(what, sizeof what, "the maps of %d layer%s × %d heads over %d tokens%s", layers, layers > 1 ? "s" : "",
             sh.n_head, T, spec->trace == HF_TRACE_STEPS ? " with every step" : "");
    return memory_check(bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)bytes, what,
                        "a shorter text, or --trace weights instead of steps", err, errlen);
}

/* A long text: its maps go to r->lt as the forward pass makes them, the rows
 * of the pronouns (or the --query token) kept whole.  0, or -1 with err. */
static int stream_begin(HfRun *r, Trace *t, const HfRunSpec *spec, char *err, size_t errlen) {
    int n = r->in.n, *keep = malloc((size_t)n * sizeof *keep), n_keep = 0;
    if (!keep) return errmsg_set(err, errlen, "out of memory");
    for (int q = 0; q < n; q++)
        if (spec->query ? !strcmp(r->in.tokens[q], spec->query) : links_is_pronoun(r->in.tokens[q])) keep[n_keep++] = q;
    char path[4096];
    int rc = 0;
    if (spec->trace != HF_TRACE_NONE && path_join(path, sizeof path, spec->stream_dir, "trace.bin", err, errlen)) rc = -1;
    TraceBinOptions o = {.weights_f16 = spec->trace_f16};
    if (rc == 0)
        rc = longtext_begin(&r->lt, t, (const char *const *)r->in.tokens, n, r->in.n_real, keep, n_keep,
                            spec->trace != HF_TRACE_NONE ? path : NULL, &o, err, errlen);
    free(keep);
    return rc;
}

int hf_run_forward(HfRun *r, HfFile *f, const HfRunSpec *spec, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    trace_init(&r->t);
    if (hf_file_encode(f, spec->text, &r->in, err, errlen) || hf_file_pad(f, &r->in, spec->pad_to, err, errlen))
        return -1;
    r->is_long = spec->stream_dir && ((spec->long_from > 0 && r->in.n > spec->long_from) || spec->window);
    if (hf_run_check_size(f, r->in.n, spec, r->is_long, err, errlen)) return -1;
    if (r->is_long && (stream_begin(r, &r->t, spec, err, errlen) ||
                       (spec->window && longtext_set_window(&r->lt, spec->win_from, spec->win_to, err, errlen))))
        return -1;
    HfSteps all = {1, -1, -1, 0};
    int rc = hf_file_forward(f, &r->in, &r->t, spec->trace == HF_TRACE_STEPS ? &all : NULL, err, errlen);
    r->t.sink = NULL;
    if (rc == 0 && r->is_long) rc = longtext_wait(&r->lt, err, errlen);   /* the last layer's maps taken */
    if (rc) return -1;
    if (r->is_long) {
        char *js = longtext_summary_json(&r->lt);
        if (trace_take_section(&r->t, "head_summary", js)) return errmsg_set(err, errlen, "out of memory");
    }
    r->s.text = spec->text;
    r->s.words.n = r->in.n;
    r->s.words.tok = r->in.tokens;   /* borrowed: the Sentence is never sentence_free'd */
    return predict(r, f, err, errlen);
}

/* Runs the forward pass again up to the layer of (map, head), keeping that
 * head's steps, and swaps the head into the trace: its weights are the same
 * bits, and the model's states (the logits) stay the whole pass's. */
static int strip_steps(HfRun *r, HfFile *f, int map, int head, char *err, size_t errlen) {
    if (r->t.maps[map].heads[head].scores || r->in.n > HF_RUN_STRIP_MAX) return 0;
    Trace t2;
    trace_init(&t2);
    HfSteps one = {0, r->t.maps[map].layer, head, 1};
    int rc = hf_file_forward(f, &r->in, &t2, &one, err, errlen);
    if (rc == 0 && (t2.n_maps <= map || strcmp(t2.maps[map].id, r->t.maps[map].id) != 0))
        rc = errmsg_set(err, errlen, "the second pass has no map %s", r->t.maps[map].id);
    if (rc == 0) {
        TraceHead h = r->t.maps[map].heads[head];
        r->t.maps[map].heads[head] = t2.maps[map].heads[head];
        t2.maps[map].heads[head] = h;
    }
    trace_free(&t2);
    return rc;
}

/* A long text's passage for the page (longtext_passage_json): the heads of
 * the links (the first is the focus) and the focus head, each whole. */
static int passage(HfRun *r, const PictureSpec *ps, char *err, size_t errlen) {
    enum { MAX = 6 };
    int maps[MAX], heads[MAX], n = 0;
    char lab[MAX][160];
    const char *labels[MAX];
    for (int k = 0; k <= ps->n_links && n < MAX; k++) {   /* the links' heads, then the focus head */
        int last = k == ps->n_links;
        int m = last ? ps->focus_map : ps->links[k].view.link.map, h = last ? ps->focus_head : ps->links[k].view.link.head;
        int seen = m < 0;
        for (int i = 0; i < n; i++) seen |= maps[i] == m && heads[i] == h;
        if (seen) continue;
        if (last) snprintf(lab[n], sizeof lab[n], "%s", ps->focus_given ? "the --focus head" : "the step strip's head");
        else {
            int at = pictures_piece(ps, ps->links[k].q);   /* the passage counts tokens */
            snprintf(lab[n], sizeof lab[n], "the link of “%s” (position %d)", r->in.tokens[at], at);
        }
        maps[n] = m, heads[n] = h, labels[n] = lab[n], n++;
    }
    int query = ps->n_links > 0 ? pictures_piece(ps, ps->links[0].q) : 0;
    char *js = longtext_passage_json(&r->lt, maps, heads, labels, n, query, err, errlen);
    return js ? trace_take_section(longtext_drawn(&r->lt), "passage", js) ? errmsg_set(err, errlen, "out of memory") : 0
              : -1;
}

int hf_run_pictures(HfRun *r, HfFile *f, PictureSpec *ps, PictureReport *rep, char *err, size_t errlen) {
    if (ps->focus_map < 0) links_focus(ps->links, ps->n_links, &ps->focus_map, &ps->focus_head);
    if (!r->is_long) {
        if (!ps->no_pictures && strip_steps(r, f, ps->focus_map, ps->focus_head, err, errlen)) return -1;
        return pictures_show_sentence(ps, &r->s, &r->t, rep, err, errlen);
    }
    /* a long text: pictures and the page of the pooled maps (or the --window), trace.bin finished with t's members */
    Trace *p = longtext_drawn(&r->lt);
    for (int i = 0; i < r->t.n_sections; i++)
        if (trace_set_section(p, r->t.section_names[i], r->t.section_json[i])) return errmsg_set(err, errlen, "out of memory");
    if (r->lt.writing && passage(r, ps, err, errlen)) return -1;
    ps->stream = &r->lt;
    ps->stream_members = &r->t;
    ps->sinks = 0;   /* a pooled first column is a block, not the first token: the summary says the sink */
    return pictures_show_sentence(ps, &r->s, p, rep, err, errlen);
}

void hf_run_free(HfRun *r) {
    if (!r) return;
    longtext_free(&r->lt);
    trace_free(&r->t);
    hf_input_free(&r->in);
    memset(r, 0, sizeof *r);
}
