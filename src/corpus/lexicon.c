/* lexicon.c — reads the corpus lexicon (see lexicon.h and samples/corpus/README.md). */
#include "corpus/lexicon.h"
#include "core/errmsg.h"
#include "tokenize/tokenizer.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lex_src_err(const LexSrc *s, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return errmsg_set(s->err, s->errlen, "%s:%d: %s", s->path, s->line, msg);
}

/* Splits a line into whitespace-separated fields (in place); returns the count. */
static int split_fields(char *line, char **f, int max) {
    int n = 0;
    char *p = line;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        if (n == max) return max + 1;
        f[n++] = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        if (*p) *p++ = 0;
    }
    return n;
}

static char *dup_or_null(const char *s) {
    return strcmp(s, "-") ? strdup(s) : NULL;
}

int lex_class_bit(const Lexicon *lx, const char *name, ClassMask *bit) {
    for (int i = 0; i < lx->n_classes; i++)
        if (!strcmp(lx->class_name[i], name)) { *bit = (ClassMask)1 << i; return 0; }
    return -1;
}

static int class_add(Lexicon *lx, const char *name, const LexSrc *s, ClassMask *bit, int strict) {
    if (!lex_class_bit(lx, name, bit)) return 0;
    if (strict) return lex_src_err(s, "unknown class \"%s\" (no noun or adjective has it)", name);
    if (lx->n_classes == LEX_MAX_CLASSES) return lex_src_err(s, "more than %d classes", LEX_MAX_CLASSES);
    lx->class_name[lx->n_classes] = strdup(name);
    *bit = (ClassMask)1 << lx->n_classes++;
    return 0;
}

int lex_parse_classes(Lexicon *lx, const char *list, const LexSrc *s, ClassMask *mask, int strict) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    *mask = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",|", &save); t; t = strtok_r(NULL, ",|", &save)) {
        ClassMask b = 0;
        if (class_add(lx, t, s, &b, strict)) return -1;
        *mask |= b;
    }
    if (!*mask) return lex_src_err(s, "no class given");
    return 0;
}

int lex_read_lines(Lexicon *lx, const char *dir, const char *name, LexLineFn fn, char *err, size_t errlen) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "rb");
    if (!fp) return errmsg_set(err, errlen, "cannot open %s: %s (is --data the samples/corpus folder?)",
                               path, strerror(errno));
    LexSrc s = { path, 0, err, errlen };
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while (!rc && (len = getline(&line, &cap, fp)) >= 0) {
        s.line++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (tokenizer_check_utf8(line, (size_t)len, NULL, 0)) { rc = lex_src_err(&s, "invalid UTF-8"); break; }
        char *hash = line;
        while (*hash == ' ' || *hash == '\t') hash++;
        if (!*hash || *hash == '#') continue;
        char *f[64];
        int nf = split_fields(line, f, 63);
        if (nf > 63) { rc = lex_src_err(&s, "too many fields"); break; }
        rc = fn(lx, f, nf, &s);
    }
    free(line);
    fclose(fp);
    return rc;
}

int lex_grow(void **arr, int n, size_t elem) {
    if (n % 64) return 0;
    void *p = realloc(*arr, (size_t)(n + 64) * elem);
    if (!p) return -1;
    *arr = p;
    memset((char *)p + (size_t)n * elem, 0, 64 * elem);
    return 0;
}

/* Regular French feminine / plural of an adjective given in the masculine. */
static void fr_adj_forms(const char *spec, char *out[4]) {
    char buf[4][96];
    int n = 0;
    const char *p = spec;
    while (n < 4) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        snprintf(buf[n++], sizeof buf[0], "%.*s", (int)len, p);
        if (!bar) break;
        p = bar + 1;
    }
    if (n == 1) {
        size_t l = strlen(buf[0]);
        if (l && buf[0][l - 1] == 'e') snprintf(buf[1], sizeof buf[1], "%s", buf[0]);
        else snprintf(buf[1], sizeof buf[1], "%.90se", buf[0]);
        n = 2;
    }
    for (int k = 0; k < 2 && n < 4; k++, n++) {
        char b[96];
        memcpy(b, buf[k], sizeof b);
        size_t l = strlen(b);
        if (l && (b[l - 1] == 's' || b[l - 1] == 'x')) snprintf(buf[n], sizeof buf[n], "%s", b);
        else snprintf(buf[n], sizeof buf[n], "%.90ss", b);
    }
    for (int k = 0; k < 4; k++) out[k] = strdup(buf[k]);
}

static int has_class(const Lexicon *lx, ClassMask m, const char *name) {
    ClassMask b;
    return !lex_class_bit(lx, name, &b) && (m & b);
}

static int noun_line(Lexicon *lx, char **f, int nf, const LexSrc *s) {
    if (nf != 7) return lex_src_err(s, "a noun needs 7 fields (en_sg en_pl fr_sg fr_pl gender vi classes), got %d", nf);
    if (strcmp(f[4], "m") && strcmp(f[4], "f")) return lex_src_err(s, "gender must be m or f, got \"%s\"", f[4]);
    if (!strcmp(f[0], "-") && !strcmp(f[1], "-")) return lex_src_err(s, "noun with neither singular nor plural");
    if (!strcmp(f[0], "-") != !strcmp(f[2], "-") || !strcmp(f[1], "-") != !strcmp(f[3], "-"))
        return lex_src_err(s, "English and French must both have (or both lack) the singular and the plural");
    if (!strcmp(f[5], "-")) return lex_src_err(s, "noun without its Vietnamese");
    if (lex_grow((void **)&lx->nouns, lx->n_nouns, sizeof *lx->nouns)) return lex_src_err(s, "out of memory");
    Noun *n = &lx->nouns[lx->n_nouns++];
    n->en[0] = dup_or_null(f[0]); n->en[1] = dup_or_null(f[1]);
    n->fr[0] = dup_or_null(f[2]); n->fr[1] = dup_or_null(f[3]);
    n->fem = f[4][0] == 'f';
    n->vi = strdup(f[5]);
    if (lex_parse_classes(lx, f[6], s, &n->classes, 0)) return -1;
    n->human = has_class(lx, n->classes, "person");
    n->neutral = has_class(lx, n->classes, "neutral");
    return 0;
}

static int adj_line(Lexicon *lx, char **f, int nf, const LexSrc *s) {
    if (nf != 4) return lex_src_err(s, "an adjective needs 4 fields (en fr vi classes), got %d", nf);
    int bars = 0;
    for (const char *p = f[1]; *p; p++) bars += *p == '|';
    if (bars != 0 && bars != 3) return lex_src_err(s, "French forms: one, or four separated by | (m|f|mp|fp)");
    if (!strcmp(f[0], "-") || !strcmp(f[1], "-") || !strcmp(f[2], "-"))
        return lex_src_err(s, "an adjective needs its English, French and Vietnamese");
    if (lex_grow((void **)&lx->adjs, lx->n_adjs, sizeof *lx->adjs)) return lex_src_err(s, "out of memory");
    Adj *a = &lx->adjs[lx->n_adjs++];
    a->en = strdup(f[0]);
    a->vi = strdup(f[2]);
    fr_adj_forms(f[1], a->fr);
    if (lex_parse_classes(lx, f[3], s, &a->classes, 0)) return -1;
    a->pre = has_class(lx, a->classes, "pre");
    return 0;
}

/* sel: s:C|C o:C r:C d:C (noun classes, must exist) and bare template classes. */
static int verb_sel(Lexicon *lx, Verb *v, const char *sel, const LexSrc *s) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", sel);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        ClassMask m;
        if (t[0] && t[1] == ':') {
            ClassMask *dst = t[0] == 's' ? &v->s : t[0] == 'o' ? &v->o : t[0] == 'r' ? &v->r : t[0] == 'd' ? &v->d : NULL;
            if (!dst) return lex_src_err(s, "sel \"%s\": the prefix must be s: o: r: or d:", t);
            if (lex_parse_classes(lx, t + 2, s, &m, 1)) return -1;
            *dst |= m;
        } else if (strcmp(t, "-")) {
            if (lex_parse_classes(lx, t, s, &m, 0)) return -1;
            v->classes |= m;
        }
    }
    return 0;
}

static int verb_line(Lexicon *lx, char **f, int nf, const LexSrc *s) {
    if (nf != 14) return lex_src_err(s, "a verb needs 14 fields (en_base en_3s en_past fr_inf fr_pres fr_pp fr_aux "
                                     "fr_fut vi frames en_prep fr_prep vi_prep sel), got %d", nf);
    for (int k = 0; k < 10; k++)
        if (!strcmp(f[k], "-")) return lex_src_err(s, "verb field %d is empty (-): every verb needs its three languages", k + 1);
    if (strcmp(f[6], "a") && strcmp(f[6], "e")) return lex_src_err(s, "fr_aux must be a (avoir) or e (être), got \"%s\"", f[6]);
    size_t fl = strlen(f[7]);
    if (fl < 2 || f[7][fl - 1] != 'a') return lex_src_err(s, "fr_fut \"%s\" must be the 3rd person singular (ending in a)", f[7]);
    if (lex_grow((void **)&lx->verbs, lx->n_verbs, sizeof *lx->verbs)) return lex_src_err(s, "out of memory");
    Verb *v = &lx->verbs[lx->n_verbs++];
    v->en_base = strdup(f[0]); v->en_3s = strdup(f[1]); v->en_past = strdup(f[2]); v->fr_inf = strdup(f[3]);
    char pres[512];
    snprintf(pres, sizeof pres, "%s", f[4]);
    int np = 0;
    char *save = NULL;
    for (char *t = strtok_r(pres, "|", &save); t && np < 6; t = strtok_r(NULL, "|", &save)) v->fr_pres[np++] = strdup(t);
    if (np != 6 || strtok_r(NULL, "|", &save)) return lex_src_err(s, "fr_pres needs 6 forms je|tu|il|nous|vous|ils");
    v->fr_pp = strdup(f[5]);
    v->fr_etre = f[6][0] == 'e';
    v->fr_fut = strdup(f[7]);
    v->vi = strdup(f[8]);
    char fr[128];
    snprintf(fr, sizeof fr, "%s", f[9]);
    save = NULL;
    for (char *t = strtok_r(fr, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "intr")) v->frames |= VF_INTR;
        else if (!strcmp(t, "tr")) v->frames |= VF_TR;
        else if (!strcmp(t, "ditr")) v->frames |= VF_DITR;
        else if (!strcmp(t, "dest")) v->frames |= VF_DEST;
        else return lex_src_err(s, "unknown verb frame \"%s\" (intr, tr, ditr, dest)", t);
    }
    v->en_prep = dup_or_null(f[10]); v->fr_prep = dup_or_null(f[11]); v->vi_prep = dup_or_null(f[12]);
    return verb_sel(lx, v, f[13], s);
}

static int name_line(Lexicon *lx, char **f, int nf, const LexSrc *s) {
    if (nf != 2) return lex_src_err(s, "a name needs 2 fields (name kind), got %d", nf);
    int kind = !strcmp(f[1], "m") ? NAME_M : !strcmp(f[1], "f") ? NAME_F : !strcmp(f[1], "city") ? NAME_CITY : -1;
    if (kind < 0) return lex_src_err(s, "name kind must be m, f or city, got \"%s\"", f[1]);
    for (const char *p = f[0]; *p; p++)
        if ((*p >= 'A' && *p <= 'Z') || *p == '_' || (*p >= '0' && *p <= '9'))
            return lex_src_err(s, "name \"%s\" must be one lowercase word", f[0]);
    if (lexicon_find_name(lx, f[0]) >= 0) return lex_src_err(s, "name \"%s\" listed twice", f[0]);
    for (int i = 0; i < lx->n_nouns; i++)
        for (int k = 0; k < 2; k++)
            if ((lx->nouns[i].en[k] && !strcmp(lx->nouns[i].en[k], f[0])) || (lx->nouns[i].fr[k] && !strcmp(lx->nouns[i].fr[k], f[0])))
                return lex_src_err(s, "name \"%s\" is also a noun of nouns.txt", f[0]);
    for (int i = 0; i < lx->n_adjs; i++)
        if (!strcmp(lx->adjs[i].en, f[0]) || !strcmp(lx->adjs[i].fr[0], f[0]))
            return lex_src_err(s, "name \"%s\" is also an adjective of adjectives.txt", f[0]);
    for (int i = 0; i < lx->n_verbs; i++) {
        const Verb *v = &lx->verbs[i];
        if (!strcmp(v->en_base, f[0]) || !strcmp(v->en_3s, f[0]) || !strcmp(v->en_past, f[0]) || !strcmp(v->fr_inf, f[0]))
            return lex_src_err(s, "name \"%s\" is also a verb of verbs.txt", f[0]);
    }
    if (lex_grow((void **)&lx->names, lx->n_names, sizeof *lx->names)) return lex_src_err(s, "out of memory");
    Name *nm = &lx->names[lx->n_names++];
    nm->name = strdup(f[0]);
    nm->kind = kind;
    return 0;
}

int lexicon_find_name(const Lexicon *lx, const char *w) {
    for (int i = 0; i < lx->n_names; i++)
        if (!strcmp(lx->names[i].name, w)) return i;
    return -1;
}

const char *lexicon_fr_contraction(const char *a, const char *b) {
    static const char *const co[][3] = { { "à", "le", "au" }, { "à", "les", "aux" },
                                         { "de", "le", "du" }, { "de", "les", "des" } };
    for (size_t k = 0; k < sizeof co / sizeof *co; k++)
        if (!strcmp(a, co[k][0]) && !strcmp(b, co[k][1])) return co[k][2];
    return NULL;
}

int lexicon_read_words(Lexicon *lx, const char *dir, char *err, size_t errlen) {
    if (lex_read_lines(lx, dir, "nouns.txt", noun_line, err, errlen) ||
        lex_read_lines(lx, dir, "adjectives.txt", adj_line, err, errlen) ||
        lex_read_lines(lx, dir, "verbs.txt", verb_line, err, errlen))
        return -1;
    char path[1024];
    snprintf(path, sizeof path, "%s/names.txt", dir);
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;      /* names are optional */
    fclose(fp);
    return lex_read_lines(lx, dir, "names.txt", name_line, err, errlen);
}

void lexicon_free_words(Lexicon *lx) {
    for (int i = 0; i < lx->n_classes; i++) free(lx->class_name[i]);
    for (int i = 0; i < lx->n_nouns; i++) {
        Noun *n = &lx->nouns[i];
        free(n->en[0]); free(n->en[1]); free(n->fr[0]); free(n->fr[1]); free(n->vi);
    }
    for (int i = 0; i < lx->n_adjs; i++) {
        Adj *a = &lx->adjs[i];
        free(a->en); free(a->vi);
        for (int k = 0; k < 4; k++) free(a->fr[k]);
    }
    for (int i = 0; i < lx->n_verbs; i++) {
        Verb *v = &lx->verbs[i];
        free(v->en_base); free(v->en_3s); free(v->en_past); free(v->fr_inf); free(v->fr_pp); free(v->fr_fut); free(v->vi);
        for (int k = 0; k < 6; k++) free(v->fr_pres[k]);
        free(v->en_prep); free(v->fr_prep); free(v->vi_prep);
    }
    for (int i = 0; i < lx->n_names; i++) free(lx->names[i].name);
    free(lx->nouns); free(lx->adjs); free(lx->verbs); free(lx->names);
    lx->class_name[0] = NULL;
    lx->n_classes = 0;
    lx->nouns = NULL; lx->adjs = NULL; lx->verbs = NULL; lx->names = NULL;
    lx->n_nouns = lx->n_adjs = lx->n_verbs = lx->n_names = 0;
}
