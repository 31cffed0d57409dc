/* corpus.c — the corpus generator's driver: lessons, template and grammar
 * pairs into the three splits, the vocabulary, the files (see corpus.h).
 * The templates are templates.c's, the held-out rules splits.c's, the TSV
 * lines tsv.c's. */
#include "corpus/corpus.h"
#include "corpus/grammar.h"
#include "corpus/lexicon.h"
#include "corpus/real.h"
#include "corpus/splits.h"
#include "corpus/templates.h"
#include "corpus/tsv.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/rng.h"
#include "core/strbuf.h"
#include "tokenize/tokenizer.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(CORPUS_MAX_TEMPLATES == TPL_MAX_TEMPLATES, "corpus.h counts the templates templates.h reads");

/* Token set for vocab.txt: a simple open-addressing set of strings. */
typedef struct {
    char **s;
    int n, cap;
} StrSet;

/* The first slot to try for w in a table of cap (a power of two) slots: FNV-1a. */
static int set_slot(const char *w, int cap) {
    uint32_t h = 2166136261u;
    for (const char *c = w; *c; c++) { h ^= (unsigned char)*c; h *= 16777619u; }
    return (int)(h & (uint32_t)(cap - 1));
}

static int set_add(StrSet *st, const char *w) {
    if (2 * (st->n + 1) > st->cap) {
        int cap = st->cap ? 2 * st->cap : 1024;
        char **ns = calloc((size_t)cap, sizeof *ns);
        if (!ns) return -1;
        for (int i = 0; i < st->cap; i++)
            if (st->s[i]) {
                int j = set_slot(st->s[i], cap);
                while (ns[j]) j = (j + 1) & (cap - 1);
                ns[j] = st->s[i];
            }
        free(st->s);
        st->s = ns;
        st->cap = cap;
    }
    int j = set_slot(w, st->cap);
    while (st->s[j]) {
        if (!strcmp(st->s[j], w)) return 0;
        j = (j + 1) & (st->cap - 1);
    }
    if (!(st->s[j] = strdup(w))) return -1;
    st->n++;
    return 0;
}

/* 1 if w is in the set. */
static int set_has(const StrSet *st, const char *w) {
    if (!st->cap) return 0;
    for (int j = set_slot(w, st->cap); st->s[j]; j = (j + 1) & (st->cap - 1))
        if (!strcmp(st->s[j], w)) return 1;
    return 0;
}

static void set_free(StrSet *st) {
    for (int i = 0; i < st->cap; i++) free(st->s[i]);
    free(st->s);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}


typedef struct {
    const CorpusOptions *o;
    const Lexicon *lx;
    CorpusStats *st;
    StrSet vocab;
    CorpusSplits sp;             /* what is held out (splits.h)                       */
    unsigned *noun_uses;         /* per noun: grammar pairs that used it (grammar_generate) */
    long n_lines;                /* training lines so far (the unpunctuated draw)      */
    char *err;
    size_t errlen;
} Gen;

/* Is w copied rather than learned: a name of names.txt or a number? */
static int is_copy_token(const Lexicon *lx, const char *w) {
    int digits = *w != 0;
    for (const char *p = w; *p; p++) digits &= *p >= '0' && *p <= '9';
    return digits || lexicon_find_name(lx, w) >= 0;
}

/* Checks that the tokens re-tokenize to themselves and adds them (but names
 * and numbers) to the vocabulary.  copy: per token, or NULL to look it up. */
static int check_side(Gen *g, const char *id, const char *const *tok, const int *copy, int n) {
    char line[4096] = "";
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof line; i++) len += (size_t)snprintf(line + len, sizeof line - len, "%s%s", i ? " " : "", tok[i]);
    Tokens tk;
    char e2[256];
    if (tokenizer_split_max(&tk, line, CORPUS_MAX_LEN, e2, sizeof e2))
        return errmsg_set(g->err, g->errlen, "%s: \"%s\" does not tokenize: %s", id, line, e2);
    int same = tk.n == n;
    for (int i = 0; same && i < n; i++) same = !strcmp(tk.tok[i], tok[i]);
    tokens_free(&tk);
    if (!same)
        return errmsg_set(g->err, g->errlen, "%s: \"%s\" does not re-tokenize to itself "
                          "(lexicon entries must be lowercase words)", id, line);
    for (int i = 0; i < n; i++) {
        int c = copy ? copy[i] : is_copy_token(g->lx, tok[i]);
        if (!c && set_add(&g->vocab, tok[i])) return errmsg_set(g->err, g->errlen, "out of memory");
    }
    return 0;
}

/* The lengths and language of one pair written, in the stats. */
static void count_pair(CorpusStats *st, int lang, int n_src, int n_tgt) {
    if (lang == L_FR) st->n_fr++;
    else st->n_vi++;
    st->src_len_hist[n_src]++;
    st->tgt_len_hist[n_tgt]++;
    if (n_src > st->max_src_len) st->max_src_len = n_src;
    if (n_tgt > st->max_tgt_len) st->max_tgt_len = n_tgt;
}

/* A training line: its source loses its final . ! ? in unpunct_permille of
 * the lines (a seeded hash of the line's number), with the alignments to it. */
static void unpunctuate(Gen *g, int *n_src, const char *const *src, int *align, int *n_al) {
    uint64_t h = g->o->seed * 0xD1B54A32D192ED03ull + (uint64_t)g->n_lines++ * 0x9E3779B97F4A7C15ull + 0x0E0Full;
    g->st->n_train_lines++;
    if (g->o->unpunct_permille <= 0 || *n_src < 2) return;
    const char *last = src[*n_src - 1];
    if ((strcmp(last, ".") && strcmp(last, "!") && strcmp(last, "?")) ||
        (int)(rng_splitmix64(&h) % 1000) >= g->o->unpunct_permille)
        return;
    (*n_src)--;
    int k = 0;
    for (int q = 0; align && q < *n_al; q++)
        if (align[2 * q + 1] != *n_src) { align[2 * k] = align[2 * q]; align[2 * k + 1] = align[2 * q + 1]; k++; }
    if (align) *n_al = k;
    g->st->n_unpunct++;
}

/* Renders one template pair and appends its TSV line; checks that every token
 * is what the tokenizer makes of it. */
static int emit_pair(Gen *g, StrBuf *out, int ti, const Bind *b, int lang, int heldout) {
    const Lexicon *lx = g->lx;
    const Template *t = &lx->tpls[ti];
    Rendered src, tgt;
    if (tpl_render(lx, t, b, L_EN, &src, g->err, g->errlen) || tpl_render(lx, t, b, lang, &tgt, g->err, g->errlen))
        return -1;
    if (lang == L_FR) tpl_fr_orthography(&tgt);
    if (src.n > CORPUS_MAX_LEN || tgt.n > CORPUS_MAX_LEN)
        return errmsg_set(g->err, g->errlen, "template %s makes a sentence of more than %d tokens", t->id, CORPUS_MAX_LEN);
    const char *tok[2][TPL_MAX_TOKS];
    for (int side = 0; side < 2; side++) {
        const Rendered *r = side ? &tgt : &src;
        for (int i = 0; i < r->n; i++) tok[side][i] = r->tok[i].s;
        if (check_side(g, t->id, tok[side], NULL, r->n)) return -1;
    }
    /* a target token is aligned to the first source token of each of its keys */
    int align[2 * TPL_MAX_TOKS * TPL_MAX_KEYS], n_al = 0;
    for (int i = 0; i < tgt.n; i++)
        for (int k = 0; k < tgt.tok[i].n_keys; k++)
            for (int s = 0; s < src.n; s++)
                if (!strcmp(src.tok[s].key[0], tgt.tok[i].key[k])) {
                    align[2 * n_al] = i;
                    align[2 * n_al + 1] = s;
                    n_al++;
                    break;
                }
    int coref[2 * 2];   /* a template has at most 2 refs */
    for (int r = 0; r < t->n_refs; r++) {
        int p = -1, a = -1;
        for (int s = 0; s < src.n; s++) {
            if (p < 0 && src.tok[s].ctrl == t->refs[r].pron) p = s;
            if (a < 0 && src.tok[s].from_slot == b[t->refs[r].pron].ref) a = s;
        }
        if (p < 0 || a < 0) return errmsg_set(g->err, g->errlen, "template %s: pronoun or antecedent not found", t->id);
        coref[2 * r] = p;
        coref[2 * r + 1] = a;
    }
    int n_src = src.n;
    if (!heldout) unpunctuate(g, &n_src, tok[0], align, &n_al);
    CorpusLine line = { lang == L_FR ? CORPUS_LANG_FR : CORPUS_LANG_VI, tok[0], n_src, tok[1], tgt.n,
                        align, n_al, coref, t->n_refs, t->id };
    if (corpus_append_tsv(out, &line)) return errmsg_set(g->err, g->errlen, "out of memory");
    if (heldout) g->st->heldout_per_template[ti]++;
    else g->st->train_per_template[ti]++;
    count_pair(g->st, lang, n_src, tgt.n);
    return 0;
}

/* First source token with alignment key k, or -1. */
static int src_with_key(const GrSide *src, int k) {
    for (int s = 0; s < src->n; s++)
        for (int q = 0; q < src->t[s].n_keys; q++)
            if (src->t[s].key[q] == k) return s;
    return -1;
}


/* Appends a grammar pair's TSV line (split: 0 train, 1 held-out words, 2
 * held-out frames); 1 when a side is too long (the caller draws again). */
static int emit_grammar(Gen *g, StrBuf *out, const GrPair *gp, int lang, int split) {
    const GrSide *src = &gp->side[L_EN], *tgt = &gp->side[lang];
    char id[80] = "g.";
    grammar_frame_name(gp->frame, id + 2, sizeof id - 2);
    if (src->n > CORPUS_MAX_LEN || tgt->n > CORPUS_MAX_LEN) return 1;   /* too long: the caller draws again */
    const char *tok[2][GR_MAX_TOK];
    for (int side = 0; side < 2; side++) {
        const GrSide *r = side ? tgt : src;
        int copy[GR_MAX_TOK];
        for (int i = 0; i < r->n; i++) { tok[side][i] = r->t[i].s; copy[i] = r->t[i].copy; }
        if (check_side(g, id, tok[side], copy, r->n)) return -1;
    }
    int align[2 * GR_MAX_TOK * GR_MAX_KEYS], n_al = 0;
    for (int i = 0; i < tgt->n; i++) {
        int copied = 0;
        for (int k = 0; k < tgt->t[i].n_keys; k++) {
            int s = src_with_key(src, tgt->t[i].key[k]);
            if (s < 0) continue;
            copied |= !strcmp(src->t[s].s, tgt->t[i].s);
            align[2 * n_al] = i;
            align[2 * n_al + 1] = s;
            n_al++;
        }
        if (tgt->t[i].copy && !copied)
            return errmsg_set(g->err, g->errlen, "%s: copied token \"%s\" is not aligned to itself", id, tgt->t[i].s);
    }
    int coref[2 * GR_MAX_COREF], cata = 0, across = 0;
    for (int c = 0; c < gp->n_coref; c++) {
        int p = src_with_key(src, gp->coref_key[c][0]), a = src_with_key(src, gp->coref_key[c][1]);
        if (p < 0 || a < 0) return errmsg_set(g->err, g->errlen, "%s: pronoun or antecedent not in the source", id);
        coref[2 * c] = p;
        coref[2 * c + 1] = a;
        cata |= a > p;
        for (int q = (p < a ? p : a); q < (p < a ? a : p); q++)
            across |= !strcmp(src->t[q].s, ".") || !strcmp(src->t[q].s, "?");
    }
    int n_src = src->n;
    if (split == 0) unpunctuate(g, &n_src, tok[0], align, &n_al);
    CorpusLine line = { lang == L_FR ? CORPUS_LANG_FR : CORPUS_LANG_VI, tok[0], n_src, tok[1], tgt->n,
                        align, n_al, coref, gp->n_coref, id };
    if (corpus_append_tsv(out, &line)) return errmsg_set(g->err, g->errlen, "out of memory");
    CorpusStats *st = g->st;
    int kind = st->n_templates + grammar_frame_discourse(gp->frame);
    if (split == 0) st->train_per_template[kind]++, st->n_grammar_train++;
    else if (split == 1) st->heldout_per_template[kind]++;
    else st->heldout_frames_per_template[kind]++;
    st->n_cataphora += cata;
    st->n_across += across;
    st->n_with_names += gp->has_name;
    count_pair(st, lang, n_src, tgt->n);
    return 0;
}

static int write_file(const char *dir, const char *name, const char *data, size_t len, char *err, size_t errlen) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return file_write_atomic(path, data, len, err, errlen);
}

void corpus_options_default(CorpusOptions *o) {
    memset(o, 0, sizeof *o);
    o->seed = 1;
    o->n_train = 200000;
    o->n_heldout = 2000;
    o->n_heldout_frames = 2000;
    o->heldout_permille = 100;
    o->grammar_permille = 800;
    o->french_permille = 500;
    o->frame_permille = 80;
    o->combo_permille = 50;
    o->lesson_copies = 10;
    o->data_dir = "samples/corpus";
    o->out_dir = "build/corpus";
    o->real_max_len = 30;
    o->real_test[0] = 2000;
    o->real_test[1] = 500;
    o->real_valid[0] = 1000;
    o->real_valid[1] = 250;
    o->real_vi_copies = 3;
    o->vocab_max = 20000;
    o->vocab_en = 9000;
    o->min_count = 2;
}

/* One template pair: a training pair (heldout 0) or a held-out coreference combination. */
static int template_pair(Gen *g, StrBuf *out, uint64_t *rng, int lang, int heldout) {
    const Lexicon *lx = g->lx;
    Bind b[TPL_MAX_SLOTS];
    int ti = tpl_pick(lx, rng, heldout);
    if (ti < 0) return errmsg_set(g->err, g->errlen, heldout ? "no coreference template (with a heldout line) to hold out"
                                                             : "all template weights are 0");
    if (tpl_sample(lx, &lx->tpls[ti], heldout, &g->sp, rng, b))
        return errmsg_set(g->err, g->errlen, heldout ? "template %s: found no held-out combination (raise --heldout-share)"
                          : "template %s: no slot values satisfy its constraints (check its classes)", lx->tpls[ti].id);
    return emit_pair(g, out, ti, b, lang, heldout);
}

/* Frames and word forms of the splits; the grammar's noun counts. */
static int setup_splits(Gen *g) {
    if (!(g->noun_uses = calloc((size_t)g->lx->n_nouns + 1, sizeof *g->noun_uses)))
        return errmsg_set(g->err, g->errlen, "out of memory");
    int rc = splits_setup_frames(&g->sp, g->o->n_heldout_frames != 0, g->err, g->errlen);
    g->st->n_frames = g->sp.n_frames;
    g->st->n_frames_heldout = g->sp.n_frames_heldout;
    return rc ? rc : splits_build_forms(&g->sp, g->lx, g->err, g->errlen);
}

/* One grammar pair; split 0 train, 1 held-out word combination, 2 held-out frame. */
static int grammar_pair(Gen *g, StrBuf *out, uint64_t *rng, int lang, int split) {
    for (int attempt = 0; attempt < 20000; attempt++) {
        int f = splits_draw_frame(&g->sp, rng, split == 2);
        if (f < 0) break;
        GrPair gp;
        if (grammar_generate(g->lx, f, rng, g->noun_uses, &gp, g->err, g->errlen)) return -1;
        if (split != 2 && splits_combo_heldout(&g->sp, &gp.side[L_EN]) != (split == 1)) continue;
        int rc = emit_grammar(g, out, &gp, lang, split);
        if (rc <= 0) return rc;
    }
    return errmsg_set(g->err, g->errlen, "grammar: no pair found for split %d (lexicon too small?)", split);
}

/* Binds the lesson sentences and pins their coreference combinations to train. */
static int bind_lessons(Gen *g, Bind (*lesson_b)[TPL_MAX_SLOTS]) {
    const Lexicon *lx = g->lx;
    for (int i = 0; i < lx->n_lessons; i++) {
        memset(lesson_b[i], 0, sizeof lesson_b[i]);
        if (tpl_lesson_bind(lx, &lx->lessons[i], lesson_b[i], g->err, g->errlen)) return -1;
        const Template *t = &lx->tpls[lx->lessons[i].tpl];
        if (t->heldout[0] >= 0 && splits_pin(&g->sp, lesson_b[i][t->heldout[0]].idx, lesson_b[i][t->heldout[1]].idx,
                                             lesson_b[i][t->heldout[2]].idx))
            return errmsg_set(g->err, g->errlen, "out of memory");
    }
    return 0;
}

/* Grammar or template?  Shares 0 and 1 draw nothing, so that --grammar-share 0
 * with --train 60000 --heldout-frames 0 writes the corpus of before the grammar. */
static int draw_grammar(const CorpusOptions *o, uint64_t *rng) {
    if (o->grammar_permille <= 0 || o->grammar_permille >= 1000) return o->grammar_permille >= 1000;
    return rng_splitmix_below(rng, 1000) < o->grammar_permille;
}

/* The language of training pair i: alternating at 500 per mille (the corpora
 * of before --french-share, byte for byte), else French for pair i when
 * floor((i + 1) p / 1000) steps past floor(i p / 1000), an even spread. */
static int train_lang(const CorpusOptions *o, int i) {
    if (o->french_permille == 500) return (i & 1) ? L_VI : L_FR;
    long long p = o->french_permille;
    return ((long long)(i + 1) * p) / 1000 > ((long long)i * p) / 1000 ? L_FR : L_VI;
}

/* train.tsv, heldout.tsv, heldout-frames.tsv into the three buffers. */
static int generate_pairs(Gen *g, StrBuf *train, StrBuf *held, StrBuf *frames, Bind (*lesson_b)[TPL_MAX_SLOTS]) {
    const CorpusOptions *o = g->o;
    const Lexicon *lx = g->lx;
    uint64_t rng = o->seed * 0x2545F4914F6CDD1Dull + 0x1234567ull;
    for (int i = 0; i < lx->n_lessons; i++)         /* lessons first, in both languages */
        for (int c = 0; c < o->lesson_copies; c++)
            for (int lang = L_FR; lang <= L_VI; lang++)
                if (emit_pair(g, train, lx->lessons[i].tpl, lesson_b[i], lang, 0)) return -1;
    int n_lesson_pairs = lx->n_lessons * o->lesson_copies * 2;
    g->st->n_template_train = n_lesson_pairs;
    for (int i = n_lesson_pairs; i < o->n_train; i++) {
        int lang = train_lang(o, i);
        int use_grammar = draw_grammar(o, &rng);
        if (use_grammar ? grammar_pair(g, train, &rng, lang, 0) : template_pair(g, train, &rng, lang, 0)) return -1;
        if (!use_grammar) g->st->n_template_train++;
    }
    for (int i = 0; i < o->n_heldout; i++) {
        int lang = (i & 1) ? L_VI : L_FR;
        int use_grammar = draw_grammar(o, &rng);
        if (use_grammar ? grammar_pair(g, held, &rng, lang, 1) : template_pair(g, held, &rng, lang, 1)) return -1;
    }
    for (int i = 0; i < o->n_heldout_frames; i++)
        if (grammar_pair(g, frames, &rng, (i & 1) ? L_VI : L_FR, 2)) return -1;
    return 0;
}

/* vocab.txt: the specials, then every token sorted bytewise. */
static int write_vocab(Gen *g, StrBuf *voc) {
    char **words = malloc((size_t)(g->vocab.n + 1) * sizeof *words);
    if (!words) return errmsg_set(g->err, g->errlen, "out of memory");
    int nw = 0;
    for (int i = 0; i < g->vocab.cap; i++)
        if (g->vocab.s[i]) words[nw++] = g->vocab.s[i];
    qsort(words, (size_t)nw, sizeof *words, cmp_str);
    int rc = 0;
    for (int i = 0; i < VOCAB_N_SPECIAL && !rc; i++) rc = strbuf_printf(voc, "%s\n", vocab_special[i]);
    for (int i = 0; i < nw && !rc; i++) rc = strbuf_printf(voc, "%s\n", words[i]);
    free(words);
    g->st->vocab_size = nw + VOCAB_N_SPECIAL;
    return rc ? errmsg_set(g->err, g->errlen, "out of memory") : 0;
}

/* ---------------------------------------------------------- real pairs -- */

/* Takes the words of list (most frequent first) with at least min_count uses
 * into the vocabulary, names and numbers never: at most `most` of them
 * (counting those already in), or, with most < 0, until the vocabulary holds
 * vocab_max tokens.  Returns how many of the list's words the vocabulary holds. */
static int take_words(Gen *g, const RealWord *list, int n, int most) {
    int held = 0;
    for (int i = 0; i < n && list[i].count >= g->o->min_count; i++) {
        if (is_copy_token(g->lx, list[i].word)) continue;
        if (set_has(&g->vocab, list[i].word)) { held++; continue; }
        if (most >= 0 ? held >= most : g->vocab.n + VOCAB_N_SPECIAL >= g->o->vocab_max) continue;
        if (set_add(&g->vocab, list[i].word)) return -1;
        held++;
    }
    return held;
}

/* The vocabulary's real words: English up to vocab_en, every Vietnamese word,
 * then French up to vocab_max. */
static int real_vocabulary(Gen *g, RealData *rd) {
    RealWord *w[3] = {NULL, NULL, NULL};
    int n[3], rc = 0, *held[3] = {&g->st->vocab_en, &g->st->vocab_vi, &g->st->vocab_fr};
    const int side[3] = {0, 2, 1};
    for (int k = 0; k < 3 && !rc; k++) {
        rc = real_words(rd, side[k], &w[k], &n[k], g->err, g->errlen);
        if (!rc && (*held[k] = take_words(g, w[k], n[k], k == 0 ? g->o->vocab_en : k == 1 ? INT_MAX : -1)) < 0)
            rc = errmsg_set(g->err, g->errlen, "out of memory");
    }
    for (int k = 0; k < 3; k++) free(w[k]);
    return rc;
}

/* 1 when every target token is in the vocabulary or a source word to copy. */
static int target_known(const Gen *g, const char *const *src, int ns, const char *const *tgt, int nt) {
    for (int t = 0; t < nt; t++) {
        int ok = set_has(&g->vocab, tgt[t]);
        for (int j = 0; !ok && j < ns; j++) ok = !strcmp(src[j], tgt[t]);
        if (!ok) return 0;
    }
    return 1;
}

/* One real pair's TSV line(s) into its split's buffer: a training pair
 * real_vi_copies times for Vietnamese, each line maybe unpunctuated. */
static int emit_real(Gen *g, const RealPair *p, StrBuf *train, StrBuf *valid, StrBuf *test) {
    char sbuf[4096], tbuf[4096];
    const char *src[CORPUS_MAX_LEN + 1], *tgt[CORPUS_MAX_LEN + 1];
    if (strlen(p->src) >= sizeof sbuf || strlen(p->tgt) >= sizeof tbuf) return 0;
    int ns = real_tokens(p->src, sbuf, src, CORPUS_MAX_LEN + 1), nt = real_tokens(p->tgt, tbuf, tgt, CORPUS_MAX_LEN + 1);
    CorpusLine line = {p->lang, src, ns, tgt, nt, NULL, 0, NULL, 0, p->lang == CORPUS_LANG_FR ? "t.fr" : "t.vi"};
    if (p->split == REAL_VALID || p->split == REAL_TEST)
        return corpus_append_tsv(p->split == REAL_TEST ? test : valid, &line) ? errmsg_set(g->err, g->errlen, "out of memory") : 0;
    if (!target_known(g, src, ns, tgt, nt)) { g->st->real_dropped[p->lang]++; return 0; }
    int copies = p->lang == CORPUS_LANG_VI ? g->o->real_vi_copies : 1;
    for (int c = 0; c < copies; c++) {
        line.n_src = ns;
        unpunctuate(g, &line.n_src, src, NULL, NULL);
        if (corpus_append_tsv(train, &line)) return errmsg_set(g->err, g->errlen, "out of memory");
        count_pair(g->st, p->lang == CORPUS_LANG_FR ? L_FR : L_VI, line.n_src, nt);
        g->st->real_lines[p->lang]++;
    }
    return 0;
}

/* The real pairs: read and split (real.h), their words into the vocabulary,
 * the training pairs appended to train, the held-out ones to valid and test. */
static int add_real(Gen *g, StrBuf *train, StrBuf *valid, StrBuf *test) {
    const CorpusOptions *o = g->o;
    RealOptions ro = {o->seed, o->real_max_len, {o->real_test[0], o->real_test[1]}, {o->real_valid[0], o->real_valid[1]}};
    RealData rd;
    if (real_read(&rd, o->real_dir, &ro, g->err, g->errlen)) return -1;
    CorpusStats *st = g->st;
    memcpy(st->real_read, rd.n_read, sizeof st->real_read);
    memcpy(st->real_pairs, rd.n_pairs, sizeof st->real_pairs);
    memcpy(st->real_sent, rd.n_sent, sizeof st->real_sent);
    st->real_names = rd.n_names;
    int rc = real_vocabulary(g, &rd);
    for (int i = 0; i < rd.n && !rc; i++)
        if (rd.pairs[i].split <= REAL_TEST) rc = emit_real(g, &rd.pairs[i], train, valid, test);
    real_free(&rd);
    return rc;
}

int corpus_generate(const CorpusOptions *o, CorpusStats *stats, char *err, size_t errlen) {
    CorpusStats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (o->n_train < 0 || o->n_heldout < 0 || o->n_heldout_frames < 0 || o->heldout_permille < 1 ||
        o->heldout_permille > 900 || o->lesson_copies < 0 || o->grammar_permille < 0 || o->grammar_permille > 1000 ||
        o->french_permille < 0 || o->french_permille > 1000 || o->frame_permille < 0 || o->frame_permille > 500 || o->combo_permille < 0 || o->combo_permille > 500)
        return errmsg_set(err, errlen, "corpus options out of range (train, heldout >= 0; heldout share 1..900 permille; "
                          "grammar and French shares 0..1)");
    if (o->real_max_len < 1 || o->real_max_len > CORPUS_MAX_LEN || o->real_vi_copies < 1 || o->vocab_max < 1 ||
        o->vocab_en < 0 || o->min_count < 1 || o->unpunct_permille < 0 || o->unpunct_permille > 1000 ||
        o->real_test[0] < 0 || o->real_test[1] < 0 || o->real_valid[0] < 0 || o->real_valid[1] < 0)
        return errmsg_set(err, errlen, "corpus options out of range (real max length 1..%d, copies >= 1, "
                          "unpunctuated share 0..1)", CORPUS_MAX_LEN);
    Lexicon lx;
    if (tpl_load(&lx, o->data_dir, err, errlen)) return -1;
    Gen g = { .o = o, .lx = &lx, .st = stats, .err = err, .errlen = errlen,
              .sp = { .seed = o->seed, .frame_permille = o->frame_permille, .combo_permille = o->combo_permille,
                      .heldout_permille = o->heldout_permille } };
    StrBuf train = { 0 }, held = { 0 }, frames = { 0 }, voc = { 0 }, rvalid = { 0 }, rtest = { 0 };
    Bind lesson_b[TPL_MAX_LESSONS][TPL_MAX_SLOTS];
    int rc = -1;
    stats->n_templates = lx.n_tpls;
    for (int i = 0; i < lx.n_tpls; i++) snprintf(stats->template_id[i], 32, "%s", lx.tpls[i].id);
    for (int d = 0; d < grammar_n_discourse(); d++)
        snprintf(stats->template_id[lx.n_tpls + d], 32, "g.%s", grammar_discourse_name(d));
    stats->n_nouns = lx.n_nouns;
    stats->n_adjectives = lx.n_adjs;
    stats->n_verbs = lx.n_verbs;
    stats->n_names = lx.n_names;
    if (bind_lessons(&g, lesson_b) || setup_splits(&g)) goto cleanup;
    tpl_count_combinations(&lx, &g.sp, &stats->n_coref_combinations, &stats->n_heldout_combinations);
    if (generate_pairs(&g, &train, &held, &frames, lesson_b) || (o->real_dir && add_real(&g, &train, &rvalid, &rtest)) ||
        write_vocab(&g, &voc))
        goto cleanup;
    if ((o->real_dir && (write_file(o->out_dir, "real-valid.tsv", rvalid.buf ? rvalid.buf : "", rvalid.len, err, errlen) ||
                         write_file(o->out_dir, "real-test.tsv", rtest.buf ? rtest.buf : "", rtest.len, err, errlen))) ||
        write_file(o->out_dir, "train.tsv", train.buf ? train.buf : "", train.len, err, errlen) ||
        write_file(o->out_dir, "heldout.tsv", held.buf ? held.buf : "", held.len, err, errlen) ||
        write_file(o->out_dir, "heldout-frames.tsv", frames.buf ? frames.buf : "", frames.len, err, errlen) ||
        write_file(o->out_dir, "vocab.txt", voc.buf, voc.len, err, errlen))
        goto cleanup;
    rc = 0;
cleanup:
    free(train.buf);
    free(held.buf);
    free(frames.buf);
    free(voc.buf);
    free(rvalid.buf);
    free(rtest.buf);
    splits_free(&g.sp);
    free(g.noun_uses);
    set_free(&g.vocab);
    tpl_free(&lx);
    return rc;
}
