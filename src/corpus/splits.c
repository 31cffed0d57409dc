/* splits.c — held-out frames and word combinations of the corpus (see splits.h). */
#include "corpus/splits.h"
#include "core/errmsg.h"
#include "core/rng.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seeded_hash(uint64_t seed, uint64_t salt, uint64_t x) {
    uint64_t h = seed ^ salt;
    h ^= x * 0x9E3779B97F4A7C15ull;
    return rng_splitmix64(&h);
}

/* ---------------------------------------------------------------- frames -- */

/* Marks held-out (1) and invalid (2) frames; every single rule value (each
 * structure, tense, mood, discourse) must keep a frame in training. */
int splits_setup_frames(CorpusSplits *sp, int need_heldout, char *err, size_t errlen) {
    int nf = grammar_n_frames();
    if (!(sp->frame_held = calloc((size_t)nf, 1))) return errmsg_set(err, errlen, "out of memory");
    int seen[4][32] = { { 0 } };
    for (int f = 0; f < nf; f++) {
        if (!grammar_frame_valid(f)) { sp->frame_held[f] = 2; continue; }
        sp->n_frames++;
        if ((int)(seeded_hash(sp->seed, 0xF4A3E5ull, (uint64_t)f) % 1000) < sp->frame_permille) {
            sp->frame_held[f] = 1;
            sp->n_frames_heldout++;
            continue;
        }
        int p[4];
        grammar_frame_parts(f, &p[0], &p[1], &p[2], &p[3]);
        for (int k = 0; k < 4; k++) seen[k][p[k]] = 1;
    }
    int lim[4] = { 5, 3, 3, grammar_n_discourse() };
    for (int k = 0; k < 4; k++)
        for (int v = 0; v < lim[k]; v++)
            if (!seen[k][v]) return errmsg_set(err, errlen, "held-out frames leave no training frame for one rule value "
                                               "(lower the held-out frame share or change --seed)");
    if (need_heldout && !sp->n_frames_heldout)
        return errmsg_set(err, errlen, "no frame is held out (raise the held-out frame share)");
    return 0;
}

int splits_draw_frame(const CorpusSplits *sp, uint64_t *rng, int held) {
    static const int w[] = { 24, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 14, 6, 6 };
    int total = 0, nd = grammar_n_discourse();
    for (int d = 0; d < nd; d++) total += w[d];
    for (int attempt = 0; attempt < 100000; attempt++) {
        int x = rng_splitmix_below(rng, total), d = 0;
        while (x >= w[d]) x -= w[d++];
        int f = grammar_make_frame(rng_splitmix_below(rng, 5), rng_splitmix_below(rng, 3), rng_splitmix_below(rng, 3), d);
        if (sp->frame_held[f] == held) return f;
    }
    return -1;
}

/* ---- the content-word key of a grammar pair, read from its English ---- */

/* An English word form of the lexicon: cat 'N' noun, 'P' name, 'V' verb, 'A' adjective. */
typedef struct LexForm {
    char first[64];       /* its first token                        */
    const char *form;     /* the whole form, tokens joined by "_"   */
    const char *lemma;    /* singular noun, verb base, adjective    */
    char cat;
} LexForm;

static int cmp_form(const void *a, const void *b) {
    return strcmp(((const LexForm *)a)->first, ((const LexForm *)b)->first);
}

static int add_form(CorpusSplits *sp, const char *form, const char *lemma, char cat) {
    if (!form) return 0;
    if (lex_grow((void **)&sp->forms, sp->n_forms, sizeof *sp->forms)) return -1;
    LexForm *f = &sp->forms[sp->n_forms++];
    snprintf(f->first, sizeof f->first, "%.*s", (int)strcspn(form, "_"), form);
    f->form = form;
    f->lemma = lemma;
    f->cat = cat;
    return 0;
}

int splits_build_forms(CorpusSplits *sp, const Lexicon *lx, char *err, size_t errlen) {
    int rc = 0;
    for (int i = 0; i < lx->n_nouns; i++) {
        const Noun *n = &lx->nouns[i];
        const char *lemma = n->en[0] ? n->en[0] : n->en[1];
        rc |= add_form(sp, n->en[0], lemma, 'N') | add_form(sp, n->en[1], lemma, 'N');
    }
    for (int i = 0; i < lx->n_names; i++) rc |= add_form(sp, lx->names[i].name, lx->names[i].name, 'P');
    for (int i = 0; i < lx->n_verbs; i++) {
        const Verb *v = &lx->verbs[i];
        rc |= add_form(sp, v->en_base, v->en_base, 'V') | add_form(sp, v->en_3s, v->en_base, 'V') |
              add_form(sp, v->en_past, v->en_base, 'V');
    }
    for (int i = 0; i < lx->n_adjs; i++) rc |= add_form(sp, lx->adjs[i].en, lx->adjs[i].en, 'A');
    if (rc) return errmsg_set(err, errlen, "out of memory");
    qsort(sp->forms, (size_t)sp->n_forms, sizeof *sp->forms, cmp_form);
    return 0;
}

/* Does form ("a_b") match the tokens at src[i...]?  Number of tokens, or 0. */
static int form_at(const char *form, const GrSide *src, int i) {
    int k = 0;
    const char *p = form;
    while (*p) {
        size_t l = strcspn(p, "_");
        if (i + k >= src->n || strlen(src->t[i + k].s) != l || strncmp(src->t[i + k].s, p, l)) return 0;
        k++;
        p += l;
        if (*p) p++;
    }
    return k;
}

void splits_combo_text(const CorpusSplits *sp, const GrSide *src, char *out, size_t n) {
    const char *want[3] = { "NP", "VA", "NP" };
    const char *got[3] = { "-", "-", "-" };
    int slot = 0;
    for (int i = 0; i < src->n && slot < 3; i++) {
        LexForm key;
        snprintf(key.first, sizeof key.first, "%s", src->t[i].s);
        const LexForm *f = bsearch(&key, sp->forms, (size_t)sp->n_forms, sizeof *sp->forms, cmp_form);
        if (!f) continue;
        while (f > sp->forms && !strcmp(f[-1].first, key.first)) f--;
        int best = 0;
        const LexForm *hit = NULL;
        for (; f < sp->forms + sp->n_forms && !strcmp(f->first, key.first); f++) {
            int k = strchr(want[slot], f->cat) ? form_at(f->form, src, i) : 0;
            if (k > best) { best = k; hit = f; }
        }
        if (!hit) continue;
        got[slot++] = hit->lemma;
        i += best - 1;
    }
    snprintf(out, n, "%s|%s|%s", got[0], got[1], got[2]);
}

static uint64_t fnv64(const char *s) {
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
    return h;
}

int splits_combo_heldout(const CorpusSplits *sp, const GrSide *src) {
    char key[256];
    splits_combo_text(sp, src, key, sizeof key);
    return (int)(seeded_hash(sp->seed, 0xC0B0ull, fnv64(key)) % 1000) < sp->combo_permille;
}

/* ------------------------------------------- template coreference combos -- */

static uint64_t combo_key(int n1, int n2, int a) {
    int lo = n1 < n2 ? n1 : n2, hi = n1 < n2 ? n2 : n1;
    return ((uint64_t)lo << 40) | ((uint64_t)hi << 20) | (uint64_t)a;
}

int splits_pin(CorpusSplits *sp, int n1, int n2, int a) {
    uint64_t *p = realloc(sp->pinned, (size_t)(sp->n_pinned + 1) * sizeof *p);
    if (!p) return -1;
    sp->pinned = p;
    sp->pinned[sp->n_pinned++] = combo_key(n1, n2, a);
    return 0;
}

int splits_template_heldout(const CorpusSplits *sp, int n1, int n2, int a) {
    uint64_t key = combo_key(n1, n2, a);
    for (int i = 0; i < sp->n_pinned; i++)
        if (sp->pinned[i] == key) return 0;
    uint64_t h = sp->seed ^ 0x5EEDC0FFEEull;
    h ^= key * 0x9E3779B97F4A7C15ull;
    return (int)(rng_splitmix64(&h) % 1000) < sp->heldout_permille;
}

void splits_free(CorpusSplits *sp) {
    if (!sp) return;
    free(sp->frame_held);
    free(sp->pinned);
    free(sp->forms);
    sp->frame_held = NULL;
    sp->pinned = NULL;
    sp->forms = NULL;
    sp->n_pinned = sp->n_forms = 0;
}
