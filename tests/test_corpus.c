/* test_corpus.c — the corpus generator and reader (src/corpus/corpus.h, tsv.h), checked
 * against the lexicon files themselves: determinism, the held-out split, gold
 * alignments and antecedents, the lesson sentences, re-tokenization; the
 * lexicon parser's errors.  The template expander is checked on a corpus of
 * templates only (--grammar-share 0); the grammar's pairs by
 * tests/test_corpus.py. */
#include "check.h"
#include "core/fileio.h"
#include "corpus/corpus.h"
#include "corpus/tsv.h"
#include "tokenize/tokenizer.h"
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DATA "samples/corpus"

/* ---- a small independent reader of nouns.txt / adjectives.txt ---- */
typedef struct { char en_sg[32], en_pl[32], fr_sg[32], fr_pl[32], vi[64], classes[96]; int fem; } TNoun;
typedef struct { char en[32], fr[96], vi[64], classes[96]; } TAdj;
static TNoun nouns[1024];
static int n_nouns;
static TAdj adjs[1024];
static int n_adjs;

static int load_lexicon(void) {
    if (n_nouns) return 0;
    FILE *f = fopen(DATA "/nouns.txt", "r");
    if (!f) return -1;
    char line[512];
    while (n_nouns < 1024 && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        TNoun *n = &nouns[n_nouns];
        char g[8];
        if (sscanf(line, "%31s %31s %31s %31s %7s %63s %95s", n->en_sg, n->en_pl, n->fr_sg, n->fr_pl, g, n->vi, n->classes) == 7) {
            n->fem = g[0] == 'f';
            n_nouns++;
        }
    }
    fclose(f);
    f = fopen(DATA "/adjectives.txt", "r");
    if (!f) return -1;
    while (n_adjs < 1024 && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        TAdj *a = &adjs[n_adjs];
        if (sscanf(line, "%31s %95s %63s %95s", a->en, a->fr, a->vi, a->classes) == 4) n_adjs++;
    }
    fclose(f);
    return n_nouns > 0 && n_adjs > 0 ? 0 : -1;
}

/* Lexicon noun of an English token (singular or plural), or NULL; *pl tells which. */
static const TNoun *noun_of(const char *en, int *pl) {
    for (int i = 0; i < n_nouns; i++) {
        if (!strcmp(nouns[i].en_sg, en)) { if (pl) *pl = 0; return &nouns[i]; }
        if (!strcmp(nouns[i].en_pl, en)) { if (pl) *pl = 1; return &nouns[i]; }
    }
    return NULL;
}

static const TAdj *adj_of(const char *en) {
    for (int i = 0; i < n_adjs; i++)
        if (!strcmp(adjs[i].en, en)) return &adjs[i];
    return NULL;
}

static int has_class(const char *list, const char *cls) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (!strcmp(t, cls)) return 1;
    return 0;
}

static int shares_class(const char *a, const char *b) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", a);
    char *save = NULL;   /* has_class tokenizes too: strtok_r */
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (has_class(b, t)) return 1;
    return 0;
}

/* ---- generation helpers ---- */
static int gen_share(const char *sub, uint64_t seed, int n_train, int n_held, int grammar_permille, char *dir, size_t n) {
    snprintf(dir, n, "%s/%s", check_tmpdir(), sub);
    mkdir(dir, 0777);
    CorpusOptions o;
    corpus_options_default(&o);
    o.seed = seed;
    o.n_train = n_train;
    o.n_heldout = n_held;
    o.n_heldout_frames = grammar_permille ? n_held : 0;
    o.grammar_permille = grammar_permille;
    o.data_dir = DATA;
    o.out_dir = dir;
    char err[512];
    if (corpus_generate(&o, NULL, err, sizeof err)) {
        fprintf(stderr, "  corpus_generate: %s\n", err);
        return -1;
    }
    return 0;
}

static char *slurp(const char *dir, const char *name, size_t *len) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    *len = 0;
    return file_read_all(p, 256u << 20, len, NULL, 0);   /* a generated corpus file */
}

/* A corpus with the default share of grammar pairs. */
static int gen(const char *sub, uint64_t seed, int n_train, int n_held, char *dir, size_t n) {
    return gen_share(sub, seed, n_train, n_held, 800, dir, n);
}

/* Shared corpus of templates only for the read-only tests (generated once). */
static Corpus train_c, held_c;
static char shared_dir[600];
static int shared_ok = -1;

static int shared(void) {
    if (shared_ok >= 0) return shared_ok;
    shared_ok = 0;
    if (load_lexicon()) { fprintf(stderr, "  cannot read " DATA " (run the tests from the repository root)\n"); return 0; }
    if (gen_share("shared", 3, 12000, 1000, 0, shared_dir, sizeof shared_dir)) return 0;
    char p[700], err[512];
    snprintf(p, sizeof p, "%s/train.tsv", shared_dir);
    if (corpus_read_tsv(&train_c, p, err, sizeof err)) { fprintf(stderr, "  %s\n", err); return 0; }
    snprintf(p, sizeof p, "%s/heldout.tsv", shared_dir);
    if (corpus_read_tsv(&held_c, p, err, sizeof err)) { fprintf(stderr, "  %s\n", err); return 0; }
    shared_ok = 1;
    return 1;
}

static int is_coref_template(const char *id) {
    static const char *const ids[] = { "wino_cross", "wino_cross_with", "wino_danger", "wino_fit",
                                       "wino_carry", "num_see", "gen_told" };
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
        if (!strcmp(id, ids[i])) return 1;
    return 0;
}

/* The (noun, noun, adjective) key of a coreference pair, nouns as singular
 * English, the pair sorted; the "with the Z" distractor is not part of it. */
static void combo_key(const CorpusPair *p, char *key, size_t n) {
    const char *heads[4];
    int nh = 0;
    for (int i = 0; i + 1 < p->n_src; i++)
        if (!strcmp(p->src[i], "the") && !(i > 0 && !strcmp(p->src[i - 1], "with")) && nh < 4) {
            const TNoun *nn = noun_of(p->src[i + 1], NULL);
            heads[nh++] = nn ? nn->en_sg : p->src[i + 1];
        }
    const char *adj = p->src[p->n_src - 2];
    if (nh != 2) { snprintf(key, n, "?"); return; }
    const char *a = strcmp(heads[0], heads[1]) < 0 ? heads[0] : heads[1];
    const char *b = a == heads[0] ? heads[1] : heads[0];
    snprintf(key, n, "%s|%s|%s", a, b, adj);
}

static int find_line(const Corpus *c, const char *lang, const char *src, const char *tgt) {
    int want = !strcmp(lang, "fr") ? CORPUS_LANG_FR : CORPUS_LANG_VI;
    for (int i = 0; i < c->n; i++) {
        const CorpusPair *p = &c->pairs[i];
        if (p->lang != want) continue;
        char s[512] = "", t[512] = "";
        for (int k = 0; k < p->n_src; k++) { strcat(s, k ? " " : ""); strcat(s, p->src[k]); }
        if (strcmp(s, src)) continue;
        for (int k = 0; k < p->n_tgt; k++) { strcat(t, k ? " " : ""); strcat(t, p->tgt[k]); }
        if (!strcmp(t, tgt)) return i;
    }
    return -1;
}

/* Target index aligned to source index s, or -1. */
static int tgt_of(const CorpusPair *p, int s) {
    for (int q = 0; q < p->n_align; q++)
        if (p->align[2 * q + 1] == s) return p->align[2 * q];
    return -1;
}

/* ------------------------------------------------------------------ tests -- */

TEST(corpus_deterministic_for_a_seed) {
    char d1[600], d2[600], d3[600];
    REQUIRE(gen("det1", 42, 3000, 200, d1, sizeof d1) == 0);
    REQUIRE(gen("det2", 42, 3000, 200, d2, sizeof d2) == 0);
    REQUIRE(gen("det3", 43, 3000, 200, d3, sizeof d3) == 0);
    const char *files[] = { "train.tsv", "heldout.tsv", "heldout-frames.tsv", "vocab.txt" };
    for (int i = 0; i < 4; i++) {
        size_t l1, l2, l3;
        char *a = slurp(d1, files[i], &l1), *b = slurp(d2, files[i], &l2), *c = slurp(d3, files[i], &l3);
        REQUIRE(a && b && c);
        CHECK(l1 == l2 && !memcmp(a, b, l1));
        if (i < 3) CHECK(l1 != l3 || memcmp(a, c, l1));   /* another seed, other sentences */
        CHECK(l1 > 0);
        free(a); free(b); free(c);
    }
    /* no temporary files (NAME.tmp-XXXXXX, core/fileio.h) left behind */
    DIR *d = opendir(d1);
    REQUIRE(d);
    int leftovers = 0;
    for (struct dirent *e; (e = readdir(d));) leftovers += strstr(e->d_name, ".tmp") != NULL;
    closedir(d);
    CHECK_INT(leftovers, 0);
}

TEST(corpus_sizes_languages_and_vocab) {
    REQUIRE(shared());
    CHECK_INT(train_c.n, 12000);
    CHECK_INT(held_c.n, 1000);
    int fr = 0;
    for (int i = 0; i < train_c.n; i++) fr += train_c.pairs[i].lang == CORPUS_LANG_FR;
    CHECK(fr >= 5900 && fr <= 6100);
    /* vocab.txt: the specials first, then every token of both files, no duplicates */
    char p[700], err[256];
    snprintf(p, sizeof p, "%s/vocab.txt", shared_dir);
    Vocab v;
    REQUIRE(vocab_load(&v, p, err, sizeof err) == 0);
    CHECK(v.size < 2500);   /* 1,740 with the 314-noun lexicon (templates only) */
    int missing = 0;
    const Corpus *cs[2] = { &train_c, &held_c };
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < cs[c]->n; i++) {
            const CorpusPair *q = &cs[c]->pairs[i];
            for (int k = 0; k < q->n_src; k++) missing += vocab_id(&v, q->src[k]) < VOCAB_N_SPECIAL;
            for (int k = 0; k < q->n_tgt; k++) missing += vocab_id(&v, q->tgt[k]) < VOCAB_N_SPECIAL;
        }
    CHECK_INT(missing, 0);
    vocab_free(&v);
}

TEST(corpus_heldout_combinations_never_in_train) {
    REQUIRE(shared());
    REQUIRE(held_c.n > 0);
    int n_keys = 0, leaks = 0, bad = 0;
    char (*keys)[128] = malloc((size_t)held_c.n * sizeof *keys);
    REQUIRE(keys);
    for (int i = 0; i < held_c.n; i++) {
        const CorpusPair *p = &held_c.pairs[i];
        if (!is_coref_template(p->template_id) || p->n_coref != 1) { bad++; continue; }
        combo_key(p, keys[n_keys], sizeof keys[0]);
        if (keys[n_keys][0] == '?') bad++;
        else n_keys++;
    }
    CHECK_INT(bad, 0);
    int train_coref = 0;
    for (int i = 0; i < train_c.n; i++) {
        const CorpusPair *p = &train_c.pairs[i];
        if (!is_coref_template(p->template_id)) continue;
        train_coref++;
        char k[128];
        combo_key(p, k, sizeof k);
        for (int j = 0; j < n_keys; j++)
            if (!strcmp(k, keys[j])) {
                if (leaks++ < 3) fprintf(stderr, "  held-out combination %s in train line %d\n", k, i + 1);
                break;
            }
    }
    CHECK_INT(leaks, 0);
    CHECK(train_coref > train_c.n / 3);   /* most of the data teaches coreference */
    free(keys);
}

TEST(corpus_antecedents_and_pronoun_gender) {
    REQUIRE(shared());
    const Corpus *cs[2] = { &train_c, &held_c };
    int checked_fr = 0, checked_vi = 0, errors = 0;
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < cs[c]->n; i++) {
            const CorpusPair *p = &cs[c]->pairs[i];
            for (int k = 0; k < p->n_coref; k++) {
                int pi = p->coref[2 * k], ai = p->coref[2 * k + 1];
                const char *pron = p->src[pi];
                int pl = 0;
                const TNoun *n = noun_of(p->src[ai], &pl);
                int human = n && has_class(n->classes, "person");
                int ok = n != NULL && pi > ai - 20;
                if (n && !strcmp(n->en_sg, n->en_pl)) pl = !strcmp(pron, "they");   /* sheep, fish */
                /* English pronoun agrees with the antecedent */
                if (ok) {
                    if (pl) ok = !strcmp(pron, "they");
                    else if (human) ok = !strcmp(pron, n->fem ? "she" : "he");
                    else ok = !strcmp(pron, "it");
                }
                /* the target pronoun aligned to it */
                int t = tgt_of(p, pi);
                if (ok && t < 0) ok = 0;
                if (ok && p->lang == CORPUS_LANG_FR) {
                    const char *want = pl ? (n->fem ? "elles" : "ils") : (n->fem ? "elle" : "il");
                    ok = !strcmp(p->tgt[t], want);
                    checked_fr++;
                } else if (ok) {
                    const char *want = pl ? (human ? "họ" : "chúng") : human ? (n->fem ? "cô" : "anh") : "nó";
                    ok = !strcmp(p->tgt[t], want);
                    checked_vi++;
                }
                if (!ok && errors++ < 5) {
                    fprintf(stderr, "  bad coreference %d-%d in \"%s ... %s\" (%s)\n", pi, ai, p->src[ai], pron, p->template_id);
                }
            }
        }
    CHECK_INT(errors, 0);
    CHECK(checked_fr > 1000);
    CHECK(checked_vi > 1000);
}

TEST(corpus_meaning_selects_the_antecedent) {
    REQUIRE(shared());
    int n = 0, first = 0, same_gender = 0, errors = 0, fem_heuristic = 0;
    for (int i = 0; i < train_c.n; i++) {
        const CorpusPair *p = &train_c.pairs[i];
        if (strcmp(p->template_id, "wino_cross") && strcmp(p->template_id, "wino_cross_with") &&
            strcmp(p->template_id, "wino_danger"))
            continue;
        REQUIRE(p->n_coref == 1);
        int ai = p->coref[1];
        const TAdj *a = adj_of(p->src[p->n_src - 2]);
        /* the two candidates: the nouns after "the", without the "with the" person */
        int cand[2], nc = 0;
        for (int k = 0; k + 1 < p->n_src; k++)
            if (!strcmp(p->src[k], "the") && !(k && !strcmp(p->src[k - 1], "with")) && nc < 2) cand[nc++] = k + 1;
        REQUIRE(nc == 2 && a);
        int other = cand[0] == ai ? cand[1] : cand[0];
        const TNoun *na = noun_of(p->src[ai], NULL), *no = noun_of(p->src[other], NULL);
        REQUIRE(na && no);
        /* the adjective describes the antecedent and not the other noun */
        if (!shares_class(a->classes, na->classes) || shares_class(a->classes, no->classes)) {
            if (errors++ < 3) fprintf(stderr, "  \"%s\" does not single out %s over %s\n", a->en, na->en_sg, no->en_sg);
        }
        n++;
        first += ai == cand[0];
        same_gender += na->fem == no->fem;
        /* "the pronoun is elle iff some candidate is feminine, and then it's that one" */
        const TNoun *n0 = noun_of(p->src[cand[0]], NULL);
        int guess = na->fem == no->fem ? cand[0] : n0->fem ? cand[0] : cand[1];
        fem_heuristic += guess == ai;
    }
    CHECK_INT(errors, 0);
    REQUIRE(n > 500);
    double pf = (double)first / n, ps = (double)same_gender / n, ph = (double)fem_heuristic / n;
    if (pf < 0.4 || pf > 0.6) check_fail(__FILE__, __LINE__, "antecedent is the first noun in %.2f of the pairs", pf);
    if (ps < 0.4 || ps > 0.6) check_fail(__FILE__, __LINE__, "same-gender pairs: %.2f", ps);
    if (ph > 0.65) check_fail(__FILE__, __LINE__, "\"attend to the feminine noun\" is right %.2f of the time", ph);
}

TEST(corpus_alignments_point_at_translations) {
    REQUIRE(shared());
    int errors = 0, checked = 0;
    for (int i = 0; i < train_c.n; i++) {
        const CorpusPair *p = &train_c.pairs[i];
        for (int q = 0; q < p->n_align; q++) {
            int t = p->align[2 * q], s = p->align[2 * q + 1];
            int pl;
            const TNoun *n = noun_of(p->src[s], &pl);
            if (!n || !strcmp(p->template_id, "go_school")) continue;  /* "go to school" → "đi học" */
            int ok;
            if (p->lang == CORPUS_LANG_FR) {   /* a word of the French noun (terrain_de_jeux); sheep: either number */
                ok = 0;
                for (int k = 0; k < 2; k++) {
                    if (k != pl && strcmp(n->en_sg, n->en_pl)) continue;
                    char fr[64];
                    snprintf(fr, sizeof fr, "%s", k ? n->fr_pl : n->fr_sg);
                    char *save = NULL;
                    for (char *w = strtok_r(fr, "_", &save); w; w = strtok_r(NULL, "_", &save)) ok |= !strcmp(w, p->tgt[t]);
                }
            } else {   /* a syllable of the Vietnamese noun */
                char vi[64];
                snprintf(vi, sizeof vi, "%s", n->vi);
                ok = 0;
                for (char *sy = strtok(vi, "_"); sy; sy = strtok(NULL, "_")) ok |= !strcmp(sy, p->tgt[t]);
            }
            checked++;
            if (!ok && errors++ < 5)
                fprintf(stderr, "  line %d: source \"%s\" aligned to \"%s\"\n", i + 1, p->src[s], p->tgt[t]);
        }
    }
    CHECK_INT(errors, 0);
    CHECK(checked > 10000);
}

TEST(corpus_lesson_sentences_present) {
    REQUIRE(shared());
    static const char *const want[][3] = {
        { "fr", "the animal didn't cross the street because it was too tired .",
          "l' animal n' a pas traversé la rue parce qu' il était trop fatigué ." },
        { "fr", "the animal didn't cross the street because it was too wide .",
          "l' animal n' a pas traversé la rue parce qu' elle était trop large ." },
        { "vi", "the animal didn't cross the street because it was too tired .",
          "con vật đã không băng qua con đường vì nó quá mệt ." },
        { "vi", "the animal didn't cross the street because it was too wide .",
          "con vật đã không băng qua con đường vì nó quá rộng ." },
        { "fr", "the cat sat on the mat .", "le chat s' est assis sur le tapis ." },
        { "vi", "the cat sat on the mat .", "con mèo ngồi trên tấm thảm ." },
        { "fr", "she ate the pizza with mushrooms .", "elle a mangé la pizza aux champignons ." },
        { "fr", "i am happy .", "je suis heureux ." },
        { "fr", "i go to school .", "je vais à l' école ." },
        { "vi", "i go to school .", "tôi đi học ." },
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        int at = find_line(&train_c, want[i][0], want[i][1], want[i][2]);
        if (at < 0) check_fail(__FILE__, __LINE__, "lesson pair missing: %s | %s | %s", want[i][0], want[i][1], want[i][2]);
    }
    /* gold annotations of the famous pair */
    int a = find_line(&train_c, "fr", want[0][1], want[0][2]);
    int b = find_line(&train_c, "fr", want[1][1], want[1][2]);
    REQUIRE(a >= 0 && b >= 0);
    const CorpusPair *pa = &train_c.pairs[a], *pb = &train_c.pairs[b];
    CHECK_INT(pa->n_coref, 1);
    CHECK_INT(pa->coref[0], 7);   /* it     */
    CHECK_INT(pa->coref[1], 1);   /* animal */
    CHECK_INT(pb->coref[1], 5);   /* street */
    CHECK_INT(tgt_of(pa, 1), 1);  /* animal → animal */
    CHECK(!strcmp(pa->tgt[tgt_of(pa, 5)], "rue"));
    CHECK(!strcmp(pa->tgt[tgt_of(pa, 7)], "il"));
    CHECK(!strcmp(pb->tgt[tgt_of(pb, 7)], "elle"));
    CHECK(!strcmp(pa->tgt[tgt_of(pa, 3)], "traversé"));
    /* the held-out split never holds a lesson sentence */
    CHECK_INT(find_line(&held_c, "fr", want[0][1], want[0][2]), -1);
}

TEST(corpus_tokens_retokenize_to_themselves) {
    REQUIRE(shared());
    int errors = 0;
    const Corpus *cs[2] = { &train_c, &held_c };
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < cs[c]->n; i++) {
            const CorpusPair *p = &cs[c]->pairs[i];
            for (int side = 0; side < 2; side++) {
                char *const *tok = side ? p->tgt : p->src;
                int n = side ? p->n_tgt : p->n_src;
                char line[1024] = "";
                for (int k = 0; k < n; k++) { strcat(line, k ? " " : ""); strcat(line, tok[k]); }
                Tokens t;
                char err[256];
                int ok = tokenizer_split(&t, line, err, sizeof err) == 0 && t.n == n;
                for (int k = 0; ok && k < n; k++) ok = !strcmp(t.tok[k], tok[k]);
                tokens_free(&t);
                if (!ok && errors++ < 3) fprintf(stderr, "  does not re-tokenize: %s\n", line);
            }
            if (p->n_src > 16 && errors++ < 3) fprintf(stderr, "  source longer than 16 tokens (%d)\n", p->n_src);
        }
    CHECK_INT(errors, 0);
}

TEST(corpus_read_tsv_rejects_bad_lines) {
    char p[700], err[512];
    snprintf(p, sizeof p, "%s/bad.tsv", check_tmpdir());
    static const char *const bad[][2] = {
        { "fr\ta b\tc d\t0-0\t-\n", "columns" },
        { "de\ta b\tc d\t0-0\t-\tt\n", "language" },
        { "fr\ta b\tc d\t0-5\t-\tt\n", "alignment" },
        { "fr\ta b\tc d\t0-0\t1-2\tt\n", "coref" },
        { "fr\ta  b\tc d\t0-0\t-\tt\n", "source" },
        { "fr\ta b\t\t-\t-\tt\n", "target" },
        { "fr\ta b\tc d\t0-0\t-\tt\rx\n", "control character" },
        { "fr\ta b\tc\x01d\t0-0\t-\tt\n", "control character" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        FILE *f = fopen(p, "w");
        REQUIRE(f);
        fputs("vi\tx y\tz\t0-1\t1-0\tok\n", f);
        fputs(bad[i][0], f);
        fclose(f);
        Corpus c = { 0 };
        err[0] = 0;
        CHECK_INT(corpus_read_tsv(&c, p, err, sizeof err), -1);
        if (!strstr(err, bad[i][1]) || !strstr(err, ":2:"))
            check_fail(__FILE__, __LINE__, "message \"%s\" lacks \"%s\" or the line number", err, bad[i][1]);
        CHECK_INT(c.n, 0);
        CHECK(c.pairs == NULL);
    }
    {   /* a NUL ended the line early: the rest of it was silently dropped */
        static const char nul[] = "fr\ta b\tc d\t0-0\t-\tt\0\tjunk\n";
        FILE *g = fopen(p, "w");
        REQUIRE(g);
        fwrite(nul, 1, sizeof nul - 1, g);
        fclose(g);
        Corpus c0 = { 0 };
        CHECK_INT(corpus_read_tsv(&c0, p, err, sizeof err), -1);
        CHECK(strstr(err, ":1: a control character") != NULL);
    }
    FILE *f = fopen(p, "w");
    REQUIRE(f);
    fputs("vi\tx y\tz\t0-1\t1-0\tok\nfr\ta\tb c\t-\t-\tt2\n", f);
    fclose(f);
    Corpus c;
    REQUIRE(corpus_read_tsv(&c, p, err, sizeof err) == 0);
    CHECK_INT(c.n, 2);
    CHECK_INT(c.pairs[0].lang, CORPUS_LANG_VI);
    CHECK_INT(c.pairs[0].n_align, 1);
    CHECK_INT(c.pairs[0].align[1], 1);
    CHECK_INT(c.pairs[0].coref[0], 1);
    CHECK_INT(c.pairs[1].n_tgt, 2);
    CHECK_INT(c.pairs[1].n_align, 0);
    CHECK(!strcmp(c.pairs[1].template_id, "t2"));
    corpus_free(&c);
    corpus_free(&c);
    corpus_free(NULL);
    CHECK_INT(corpus_read_tsv(&c, "/nonexistent/x.tsv", err, sizeof err), -1);
}

/* corpus_append_tsv writes what corpus_read_tsv reads back: the columns, "-"
 * for no pairs, pairs in their order; a pair keeps the line it came from
 * (empty lines skipped but counted), which the training set's errors name. */
TEST(corpus_tsv_line_round_trip) {
    const char *src[] = { "the", "cat", "sleeps", "." }, *tgt[] = { "con", "mèo", "ngủ", "." };
    const int align[] = { 1, 1, 0, 1, 3, 3 }, coref[] = { 2, 1, 0, 3 };
    CorpusLine l1 = { CORPUS_LANG_VI, src, 4, tgt, 4, align, 3, coref, 2, "g.tr.past.pos.one" };
    CorpusLine l2 = { CORPUS_LANG_FR, src, 1, tgt, 2, NULL, 0, NULL, 0, "t" };
    StrBuf b = { 0 };
    REQUIRE(corpus_append_tsv(&b, &l1) == 0 && corpus_append_tsv(&b, &l2) == 0);
    CHECK(!strcmp(b.buf, "vi\tthe cat sleeps .\tcon mèo ngủ .\t1-1 0-1 3-3\t2-1 0-3\tg.tr.past.pos.one\n"
                         "fr\tthe\tcon mèo\t-\t-\tt\n"));
    char p[700], err[512];
    snprintf(p, sizeof p, "%s/roundtrip.tsv", check_tmpdir());
    FILE *f = fopen(p, "w");
    REQUIRE(f);
    fputs("\n", f);
    fputs(b.buf, f);
    fclose(f);
    free(b.buf);
    Corpus c;
    REQUIRE(corpus_read_tsv(&c, p, err, sizeof err) == 0);
    REQUIRE(c.n == 2);
    CHECK_INT(c.pairs[0].line, 2);
    CHECK_INT(c.pairs[1].line, 3);
    CHECK_INT(c.pairs[0].lang, CORPUS_LANG_VI);
    CHECK_INT(c.pairs[0].n_align, 3);
    for (int i = 0; i < 6; i++) CHECK_INT(c.pairs[0].align[i], align[i]);
    CHECK_INT(c.pairs[0].n_coref, 2);
    CHECK_INT(c.pairs[0].coref[3], 3);
    CHECK(!strcmp(c.pairs[0].tgt[1], "mèo") && !strcmp(c.pairs[0].template_id, "g.tr.past.pos.one"));
    CHECK_INT(c.pairs[1].lang, CORPUS_LANG_FR);
    CHECK_INT(c.pairs[1].n_src, 1);
    CHECK_INT(c.pairs[1].n_align + c.pairs[1].n_coref, 0);
    corpus_free(&c);
}

/* Copies the real data into DIR, appending extra to file `which` (or replacing
 * it when replace), then runs the generator: its return value, message in err. */
static int gen_with(const char *dir, const char *which, const char *extra, int replace, char *err, size_t errlen) {
    const char *files[] = { "nouns.txt", "adjectives.txt", "verbs.txt", "words.txt", "templates.txt", "names.txt" };
    mkdir(dir, 0777);
    for (int i = 0; i < 6; i++) {
        size_t n;
        char *s = slurp(DATA, files[i], &n), p[700];
        if (!s) return -2;
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        FILE *f = fopen(p, "wb");
        if (!f) { free(s); return -2; }
        int mine = !strcmp(files[i], which);
        if (!(mine && replace)) fwrite(s, 1, n, f);
        if (mine) fputs(extra, f);
        fclose(f);
        free(s);
    }
    CorpusOptions o;
    corpus_options_default(&o);
    o.data_dir = dir;
    o.out_dir = dir;
    o.n_train = 300;
    o.n_heldout = 10;
    o.n_heldout_frames = 10;
    err[0] = 0;
    return corpus_generate(&o, NULL, err, errlen);
}

TEST(corpus_lexicon_entries_need_three_languages_and_a_gender) {
    char dir[600], err[512];
    static const char *const bad[][3] = {
        { "nouns.txt", "zebra zebras zèbre zèbres x con_ngựa_vằn animal\n", "gender" },
        { "nouns.txt", "zebra zebras zèbre zèbres m - animal\n", "Vietnamese" },
        { "nouns.txt", "zebra zebras - zèbres m con_ngựa_vằn animal\n", "singular" },
        { "adjectives.txt", "green vert - object\n", "Vietnamese" },
        { "adjectives.txt", "green vert|verte xanh object\n", "four" },
        { "verbs.txt", "jump jumps jumped sauter saute|sautes|saute|sautons|sautez|sautent sauté a sautera nhảy intr - -\n", "14 fields" },
        { "verbs.txt", "jump jumps jumped sauter saute|sautes|saute sauté a sautera nhảy intr - - - -\n", "6 forms" },
        { "verbs.txt", "jump jumps jumped sauter saute|sautes|saute|sautons|sautez|sautent sauté x sautera nhảy intr - - - -\n", "fr_aux" },
        { "verbs.txt", "jump jumps jumped sauter saute|sautes|saute|sautons|sautez|sautent sauté a sautera - intr - - - -\n", "empty" },
        { "verbs.txt", "jump jumps jumped sauter saute|sautes|saute|sautons|sautez|sautent sauté a sautera nhảy intr - - - s:martian\n", "unknown class" },
        { "verbs.txt", "jump jumps jumped sauter saute|sautes|saute|sautons|sautez|sautent sauté a sautera nhảy fly - - - -\n", "frame" },
        { "names.txt", "dog m\n", "also a noun" },
        { "names.txt", "tired f\n", "also an adjective" },
        { "names.txt", "zoe x\n", "kind" },
        { "names.txt", "alice f\n", "twice" },
        { "names.txt", "because m\n", "templates.txt" },
        { "names.txt", "elle f\n", "words.txt" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(dir, sizeof dir, "%s/badlex%zu", check_tmpdir(), i);
        CHECK_INT(gen_with(dir, bad[i][0], bad[i][1], 0, err, sizeof err), -1);
        char where[64];
        snprintf(where, sizeof where, "%s:", bad[i][0]);
        if (!strstr(err, where) || !strstr(err, bad[i][2]))
            check_fail(__FILE__, __LINE__, "bad %s line: message \"%s\" lacks \"%s\" or FILE:LINE", bad[i][0], err, bad[i][2]);
    }
    /* the shipped files pass, and every entry there has its languages and gender (else they would not) */
    snprintf(dir, sizeof dir, "%s/goodlex", check_tmpdir());
    CHECK_INT(gen_with(dir, "names.txt", "", 0, err, sizeof err), 0);
}

TEST(corpus_bad_data_is_reported_with_file_and_line) {
    char dir[600], err[512];
    snprintf(dir, sizeof dir, "%s/baddata", check_tmpdir());
    /* the real data with a bad gender appended to nouns.txt */
    CHECK_INT(gen_with(dir, "nouns.txt", "zebra zebras zèbre zèbres x con_ngựa_vằn animal\n", 0, err, sizeof err), -1);
    CHECK(strstr(err, "nouns.txt:") != NULL && strstr(err, "gender") != NULL);
    CorpusOptions o;
    corpus_options_default(&o);
    o.out_dir = dir;
    o.n_train = 100;
    o.n_heldout = 10;
    o.data_dir = "/nonexistent";
    CHECK_INT(corpus_generate(&o, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "nouns.txt") != NULL);
}
