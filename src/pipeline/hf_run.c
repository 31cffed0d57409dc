/* hf_run.c — see hf_run.h. */
#include "pipeline/hf_run.h"
#include "core/errmsg.h"
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

int hf_run_check_size(const HfFile *f, int T, const HfRunSpec *spec, char *err, size_t errlen) {
    HfShape sh = hf_file_shape(f);
    char what[160];
    if (!spec->no_pictures && T > HF_RUN_PICTURE_MAX)
        return errmsg_set(err, errlen, "%d tokens: pictures are drawn for at most %d tokens (add --no-pictures, or "
                          "give a shorter text)", T, HF_RUN_PICTURE_MAX);
    double cells = (double)sh.n_layer * sh.n_head * T * T, bytes = cells * 4.0 * (spec->trace == HF_TRACE_STEPS ? 5 : 1);
    snprintf(what, sizeof what, "the maps of %d layers × %d heads over %d tokens%s", sh.n_layer, sh.n_head, T,
             spec->trace == HF_TRACE_STEPS ? " with every step" : "");
    return memory_check(bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)bytes, what,
                        "a shorter text, or --trace weights instead of steps", err, errlen);
}

int hf_run_forward(HfRun *r, HfFile *f, const HfRunSpec *spec, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    trace_init(&r->t);
    if (hf_file_encode(f, spec->text, &r->in, err, errlen) || hf_file_pad(f, &r->in, spec->pad_to, err, errlen))
        return -1;
    if (hf_run_check_size(f, r->in.n, spec, err, errlen)) return -1;
    HfSteps all = {1, -1, -1, 0};
    if (hf_file_forward(f, &r->in, &r->t, spec->trace == HF_TRACE_STEPS ? &all : NULL, err, errlen)) return -1;
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

int hf_run_pictures(HfRun *r, HfFile *f, PictureSpec *ps, PictureReport *rep, char *err, size_t errlen) {
    if (ps->focus_map < 0) links_focus(ps->links, ps->n_links, &ps->focus_map, &ps->focus_head);
    if (!ps->no_pictures && strip_steps(r, f, ps->focus_map, ps->focus_head, err, errlen)) return -1;
    return pictures_show_sentence(ps, &r->s, &r->t, rep, err, errlen);
}

void hf_run_free(HfRun *r) {
    if (!r) return;
    trace_free(&r->t);
    hf_input_free(&r->in);
    memset(r, 0, sizeof *r);
}
