/* demo.c — the lesson's driver (see demo.h): loads the model, renders the
 * parts in order (their headers: demo_by_hand.h, demo_model.h,
 * demo_snapshots.h, demo_explain.h) and writes index.html. */
#include "demo/demo.h"
#include "demo/demo_by_hand.h"
#include "demo/demo_explain.h"
#include "demo/demo_model.h"
#include "demo/demo_snapshots.h"
#include <stdio.h>

int demo_load(Demo *d) {
    if (model_file_load(&d->mf, d->model_arg, d->err, sizeof d->err) != 0) return -1;
    if (d->mf.m.config.arch != MODEL_ENC_DEC)
        return demo_fail(d, "demo needs an encoder–decoder model; %s is %s", d->mf.path,
                         model_arch_name(d->mf.m.config.arch));
    return 0;
}

/* Every part, in lesson order.  Part 3 keeps one trace for its by-hand maps. */
static int all_parts(Demo *d) {
    Trace t3;
    trace_init(&t3);
    int rc = -1;
    if (demo_steps_by_hand(d) || demo_why_sqrt_dk(d)) goto done;
    if (demo_masking_by_hand(d, &t3) || demo_masking_in_model(d) || demo_mask_fill_values(d, &t3)) goto done;
    if (demo_write_trace(d, &t3, "p3.trace.json")) goto done;
    if (demo_multi_head(d) || demo_three_kinds(d) || demo_coreference(d)) goto done;
    if (demo_positional_encoding(d) || demo_vietnamese(d) || demo_head_learning(d)) goto done;
    if (demo_does_attention_explain(d)) goto done;
    rc = 0;
done:
    trace_free(&t3);
    return rc;
}

int demo_render(Demo *d) {
    html_page_begin(&d->page, "attnviz — the attention lesson in pictures",
                    "Bài học về attention qua hình ảnh. Every picture: caption in English and Vietnamese, and the "
                    "attnviz command that makes it.");
    html_raw(&d->page, "<p>Model: <code>");
    html_text(&d->page, d->mf.path);
    html_raw(&d->page, "</code>. Made by <code>attnviz demo</code>.</p>\n");
    size_t views_at = d->page.len;   /* the interactive views go under the header */
    if (all_parts(d) != 0) {
        html_page_free(&d->page);
        return -1;
    }
    char path[4200];
    demo_path(d, "index.html", path, sizeof path);
    return page_write(&d->page, views_at, &d->page_data, path, d->err, sizeof d->err);
}

void demo_free(Demo *d) {
    model_file_free(&d->mf);
    page_data_free(&d->page_data);
}
