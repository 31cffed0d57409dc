/* fuzz_tsv.c — libFuzzer harness for the corpus TSV reader (corpus/tsv.h):
 * any bytes as a corpus file; 0 with pairs whose every index lies inside its
 * sentence, or -1 with a one-line message "PATH:LINE: ...".  What reads is
 * written back line by line and must read back the same.  Seeds:
 * tests/fuzz/tsv/. */
#include "corpus/tsv.h"
#include "fuzz_scratch.h"

static void check_pair(const CorpusPair *p) {
    if (p->n_src < 1 || p->n_tgt < 1 || (p->lang != CORPUS_LANG_FR && p->lang != CORPUS_LANG_VI)) abort();
    for (int k = 0; k < p->n_align; k++)
        if (p->align[2 * k] < 0 || p->align[2 * k] >= p->n_tgt || p->align[2 * k + 1] < 0 ||
            p->align[2 * k + 1] >= p->n_src)
            abort();
    for (int k = 0; k < p->n_coref; k++)
        if (p->coref[2 * k] < 0 || p->coref[2 * k] >= p->n_src || p->coref[2 * k + 1] < 0 ||
            p->coref[2 * k + 1] >= p->n_src)
            abort();
    for (int k = 0; k < p->n_src; k++) if (!p->src[k][0]) abort();
    for (int k = 0; k < p->n_tgt; k++) if (!p->tgt[k][0]) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 1 << 16) return 0;
    char path[600], back[600], err[512];
    fuzz_write("corpus.tsv", data, size, path, sizeof path);
    Corpus c;
    if (corpus_read_tsv(&c, path, err, sizeof err) != 0) {
        if (!err[0] || strchr(err, '\n')) abort();
        return 0;
    }
    StrBuf out = {0};
    for (int i = 0; i < c.n; i++) {
        const CorpusPair *p = &c.pairs[i];
        check_pair(p);
        CorpusLine l = {p->lang, (const char *const *)p->src, p->n_src, (const char *const *)p->tgt, p->n_tgt,
                        p->align, p->n_align, p->coref, p->n_coref, p->template_id};
        if (corpus_append_tsv(&out, &l) != 0) abort();
    }
    fuzz_write("back.tsv", (const uint8_t *)out.buf, out.len, back, sizeof back);
    free(out.buf);
    Corpus b;
    if (corpus_read_tsv(&b, back, err, sizeof err) != 0) { fprintf(stderr, "read back: %s\n", err); abort(); }
    if (b.n != c.n) abort();
    for (int i = 0; i < c.n; i++) {   /* the same pairs: sentences, indices, template */
        const CorpusPair *x = &c.pairs[i], *y = &b.pairs[i];
        if (x->lang != y->lang || x->n_src != y->n_src || x->n_tgt != y->n_tgt || x->n_align != y->n_align ||
            x->n_coref != y->n_coref || strcmp(x->template_id, y->template_id))
            abort();
        for (int k = 0; k < x->n_src; k++) if (strcmp(x->src[k], y->src[k])) abort();
        for (int k = 0; k < x->n_tgt; k++) if (strcmp(x->tgt[k], y->tgt[k])) abort();
        if ((x->n_align && memcmp(x->align, y->align, 2 * sizeof(int) * (size_t)x->n_align)) ||
            (x->n_coref && memcmp(x->coref, y->coref, 2 * sizeof(int) * (size_t)x->n_coref)))
            abort();
    }
    corpus_free(&b);
    corpus_free(&c);
    return 0;
}
