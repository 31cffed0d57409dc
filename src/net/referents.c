/* referents.c — see referents.h. */
#include "net/referents.h"
#include "core/datadir.h"
#include "core/errmsg.h"
#include "tokenize/tokenizer.h"
#include <stdio.h>
#include <string.h>

enum { FIT_HE = 1, FIT_SHE = 2, FIT_IT = 4, FIT_PLURAL = 8, FIT_ANY = 15 };

int referents_load(Referents *r, const char *dir, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    if (lexicon_read_words(&r->lx, dir, err, errlen)) {
        lexicon_free_words(&r->lx);
        memset(r, 0, sizeof *r);
        return -1;
    }
    r->loaded = 1;
    return 0;
}

int referents_load_shipped(Referents *r, char *err, size_t errlen) {
    char path[4200];
    memset(r, 0, sizeof *r);
    if (datadir_find("corpus/nouns.txt", path, sizeof path) != 0)
        return errmsg_set(err, errlen, "no corpus lexicon found (corpus/nouns.txt)");
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0';
    return referents_load(r, path, err, errlen);
}

void referents_free(Referents *r) {
    if (!r) return;
    if (r->loaded) lexicon_free_words(&r->lx);
    memset(r, 0, sizeof *r);
}

int referents_function_word(const char *w) {
    static const char *const fw[] = {
        "the", "a", "an", "my", "your", "his", "her", "hers", "its", "our", "their", "theirs", "this", "that", "these",
        "those", "i", "you", "he", "she", "it", "we", "they", "me", "him", "us", "them", "who", "which", "with", "to",
        "in", "on", "under", "near", "behind", "front", "of", "at", "for", "from", "by", "about", "into", "and",
        "but", "so", "because", "when", "while", "although", "or", "if", "too", "is", "are", "am", "was", "were",
        "be", "been", "do", "does", "did", "don't", "doesn't", "didn't", "won't", "isn't", "aren't", "wasn't",
        "weren't", "couldn't", "will", "would", "can", "could", "has", "have", "had", "not", "no", "very", "there",
        "here", "what", "where", "how", "why", "i'm", "it's", "he's", "she's", "they're", "we're", "you're",
        "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "many", "some", "all"};
    for (size_t i = 0; i < sizeof fw / sizeof *fw; i++)
        if (!strcmp(w, fw[i])) return 1;
    return 0;
}

/* 1 if w is one of the "_"-joined pieces of form ("ice_cream" holds "cream"). */
static int form_has(const char *form, const char *w) {
    if (!form) return 0;
    size_t n = strlen(w);
    for (const char *p = form; *p;) {
        size_t k = strcspn(p, "_");
        if (k == n && !strncmp(p, w, n)) return 1;
        p += k;
        if (*p) p++;
    }
    return 0;
}

/* 1 for a token without letters (signs, numbers). */
static int no_letters(const char *w) {
    for (; *w; w++)
        if ((unsigned char)*w >= 0x80 || (*w >= 'a' && *w <= 'z')) return 0;
    return 1;
}

/* The pronouns each word can be the antecedent of (FIT_* bits). */
static int word_fits(const Referents *r, const char *w) {
    if (no_letters(w) || referents_function_word(w)) return 0;
    const Lexicon *lx = &r->lx;
    for (int i = 0; i < lx->n_names; i++)
        if (!strcmp(lx->names[i].name, w))
            return lx->names[i].kind == NAME_M ? FIT_HE : lx->names[i].kind == NAME_F ? FIT_SHE : FIT_IT;
    int fits = 0, other = 0;
    for (int i = 0; i < lx->n_nouns; i++) {
        const Noun *n = &lx->nouns[i];
        if (form_has(n->en[0], w))
            fits |= !n->human ? FIT_IT : ((!n->fem || n->neutral) ? FIT_HE : 0) | ((n->fem || n->neutral) ? FIT_SHE : 0);
        if (form_has(n->en[1], w)) fits |= FIT_PLURAL;
    }
    for (int i = 0; !fits && !other && i < lx->n_verbs; i++) {
        const Verb *v = &lx->verbs[i];
        other = form_has(v->en_base, w) || form_has(v->en_3s, w) || form_has(v->en_past, w);
    }
    for (int i = 0; !fits && !other && i < lx->n_adjs; i++) other = form_has(lx->adjs[i].en, w);
    return fits ? fits : other ? 0 : FIT_ANY;   /* a word the lexicon does not hold may be anything */
}

int referents_is_sign(const char *text) {
    Tokens tk;
    if (tokenizer_split_max(&tk, text, 16, NULL, 0) != 0) return 0;
    int signs = 1;
    for (int i = 0; i < tk.n && signs; i++) signs = no_letters(tk.tok[i]) && !(tk.tok[i][0] >= '0' && tk.tok[i][0] <= '9');
    tokens_free(&tk);
    return signs;
}

/* The fits of a label: "<eos>" nothing, else its word's ("<unk> Alice": "alice",
 * which the lexicon does not hold, may be anyone; "<unk> very" nothing). */
static int label_fits(const Referents *r, const char *label) {
    size_t n = strlen(label);
    if (!strncmp(label, "<unk> ", 6)) label += 6;
    else if (n >= 2 && label[0] == '<' && label[n - 1] == '>') return 0;
    Tokens tk;
    if (tokenizer_split_max(&tk, label, 4, NULL, 0) != 0) return FIT_ANY;
    int fits = tk.n == 1 ? word_fits(r, tk.tok[0]) : FIT_ANY;
    tokens_free(&tk);
    return fits;
}

/* The word of a label as the tokenizer reads it ("My" → "my"), into w; "" when
 * it is no single word. */
static const char *label_word(const char *label, char *w, size_t n) {
    Tokens tk;
    w[0] = '\0';
    if (!strncmp(label, "<unk> ", 6)) label += 6;
    if (tokenizer_split_max(&tk, label, 4, NULL, 0) != 0) return w;
    if (tk.n == 1) snprintf(w, n, "%s", tk.tok[0]);
    tokens_free(&tk);
    return w;
}

/* 1 for an adjective of the lexicon. */
static int is_adj(const Referents *r, const char *w) {
    for (int i = 0; *w && i < r->lx.n_adjs; i++)
        if (form_has(r->lx.adjs[i].en, w)) return 1;
    return 0;
}

/* 1 if w is one of list's words. */
static int one_of(const char *w, const char *const *list) {
    for (; *list; list++)
        if (!strcmp(w, *list)) return 1;
    return 0;
}

/* The fits of labels[j] read with the word before it, for a word the lexicon
 * does not hold: after a determiner it is a noun, plural when it ends in -s ("my
 * parents", "all day"); after a subject pronoun, a form of be, "to", "very" or
 * "not" it is a verb or an adjective ("they worked", "was late"), and so is a
 * word in -ed or -ly; a word written with a capital is a name (or a noun
 * starting the sentence).  Otherwise it may be anything.  *sure: 1 when a noun or a name is known
 * (lexicon or context), 0 when the word is only possibly one. */
static int fits_at(const Referents *r, const char *const *labels, int n, int j, int *sure) {
    static const char *const det[] = {"the", "a", "an", "my", "your", "his", "her", "its", "our", "their", "this",
                                      "that", "these", "those", "some", "all", "every", "each", "many", "several",
                                      "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", NULL};
    static const char *const before_verb[] = {"i", "you", "he", "she", "it", "we", "they", "is", "are", "am", "was",
                                              "were", "be", "been", "to", "very", "too", "not", "will", "would", "can",
                                              "could", "did", "do", "does", NULL};
    int fits = label_fits(r, labels[j]);
    *sure = fits && fits != FIT_ANY;
    if (fits != FIT_ANY) return fits;
    char w[TOKENIZER_MAX_TOKEN_BYTES + 1], prev[TOKENIZER_MAX_TOKEN_BYTES + 1] = "";
    label_word(labels[j], w, sizeof w);
    for (int i = j - 1; i >= 0; i--)   /* the word before, past adjectives: "a difficult test" */
        if (!is_adj(r, label_word(labels[i], prev, sizeof prev))) break;
    size_t len = strlen(w);
    const char *typed = strncmp(labels[j], "<unk> ", 6) ? labels[j] : labels[j] + 6;
    if (one_of(prev, det)) {
        *sure = 1;
        return len > 2 && w[len - 1] == 's' && w[len - 2] != 's' ? FIT_PLURAL : FIT_HE | FIT_SHE | FIT_IT;
    }
    if (one_of(prev, before_verb)) return 0;
    if (len > 3 && (!strcmp(w + len - 2, "ed") || !strcmp(w + len - 2, "ly"))) return 0;
    if (typed[0] >= 'A' && typed[0] <= 'Z') *sure = 1;   /* "Minh and Lan", "John said" */
    return FIT_ANY;
}

/* What the pronoun at label needs, or 0 when it is no he/she/it/they pronoun. */
static int pronoun_needs(const char *label) {
    static const struct { const char *w; int need; } p[] = {
        {"he", FIT_HE}, {"him", FIT_HE}, {"his", FIT_HE}, {"she", FIT_SHE}, {"her", FIT_SHE}, {"hers", FIT_SHE},
        {"it", FIT_IT}, {"its", FIT_IT}, {"they", FIT_PLURAL}, {"them", FIT_PLURAL}, {"their", FIT_PLURAL},
        {"theirs", FIT_PLURAL}};
    char w[16];
    size_t n = strlen(label);
    if (n >= sizeof w) return 0;
    for (size_t i = 0; i <= n; i++) w[i] = (char)(label[i] >= 'A' && label[i] <= 'Z' ? label[i] + 32 : label[i]);
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        if (!strcmp(w, p[i].w)) return p[i].need;
    return 0;
}

/* 1 if labels[j] can be the antecedent of the pronoun at q (needing need);
 * *sure as fits_at's. */
static int can_be(const Referents *r, const char *const *labels, int n, int q, int need, int j, int *sure) {
    int fits = fits_at(r, labels, n, j, sure), other;
    if (fits & need) return 1;
    if (need != FIT_PLURAL || !(fits & (FIT_HE | FIT_SHE | FIT_IT))) return 0;
    char w[16] = "";   /* "X and Y … they": j joined by "and" to another singular */
    for (int d = -2; d <= 2; d++) {
        int a = j + d, i = d < 0 ? a - 1 : a + 1;   /* "and" at a, the other noun at i or one further */
        if (!d || a < 0 || a >= n || strcmp(label_word(labels[a], w, sizeof w), "and")) continue;
        for (int e = 0; e < 2; e++, i += d < 0 ? -1 : 1)
            if (i >= 0 && i < n && i != q && i != j && (fits_at(r, labels, n, i, &other) & (FIT_HE | FIT_SHE | FIT_IT)))
                return 1;
    }
    return 0;
}

int referents_can_be(const Referents *r, const char *const *labels, int n, int q, int j, int *sure) {
    int dummy;
    if (!sure) sure = &dummy;
    *sure = 0;
    if (!r || !r->loaded || q < 0 || q >= n || j < 0 || j >= n) return 1;
    int need = pronoun_needs(labels[q]);
    if (!need) return 1;
    return j != q && can_be(r, labels, n, q, need, j, sure);
}

int referents_possible(const Referents *r, const char *const *labels, int n, int q) {
    if (!r || !r->loaded || q < 0 || q >= n || !pronoun_needs(labels[q])) return 1;
    for (int j = 0; j < n; j++)
        if (j != q && referents_can_be(r, labels, n, q, j, NULL)) return 1;
    return 0;
}
