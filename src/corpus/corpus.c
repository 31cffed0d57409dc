/* corpus.c — corpus generator and TSV reader (see corpus.h and
 * samples/corpus/README.md for the data format). */
#include "corpus/corpus.h"
#include "corpus/grammar.h"
#include "corpus/lexicon.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "core/rng.h"
#include "tokenize/tokenizer.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const lang_name[N_LANG] = { "en", "fr", "vi" };

#define MAX_SLOTS 8
#define MAX_TOKS 40
#define MAX_KEYS 3
#define MAX_CODES 12
#define MAX_LESSONS 32

/* ----------------------------------------------------------------- model -- */


typedef struct Word {
    char *key;
    int lang;
    int n;
    char *code[MAX_CODES], *form[MAX_CODES];
} Word;

enum { TT_LIT, TT_SLOT, TT_WORD };
typedef struct {
    int kind;
    char *text;     /* literal, word key, or the slot's field ("" = main form) */
    int slot;       /* TT_SLOT: slot index                                     */
    int ctrl;       /* agreement controller slot, or -1                        */
    char *key;      /* alignment key                                           */
} TplTok;

enum { SK_NOUN, SK_ADJ, SK_VERB, SK_SUBJ, SK_PRON };
enum { NUM_SG = 0, NUM_PL = 1, NUM_ANY = 2 };
typedef struct {
    char name[8];
    int kind;
    ClassMask classes;
    int number;
    int describes;               /* adj: noun slot it must fit, or -1 */
    int n_codes;
    char code[MAX_CODES][8];     /* subj codes */
} Slot;

typedef struct {
    int pron;                    /* slot index of the pronoun       */
    int by;                      /* adjective slot, or -1 = pick    */
    int n;
    ClassMask tag[4];
    int target[4];
} Ref;

enum { CON_BALANCE_GENDER, CON_DIFFER_NUMBER, CON_DIFFER_GENDER };
typedef struct { int kind, a, b; } Constraint;

typedef struct Template {
    char id[32];
    int weight;
    int n_slots;
    Slot slots[MAX_SLOTS];
    int n_refs;
    Ref refs[2];
    int n_cons;
    Constraint cons[4];
    int heldout[3];              /* noun, noun, adj slots; [0] = -1 when none */
    int n_toks[N_LANG];
    TplTok toks[N_LANG][MAX_TOKS];
    int line;
} Template;

typedef struct Lesson {
    int tpl;
    int n;
    char name[MAX_SLOTS][8];
    char value[MAX_SLOTS][32];
} Lesson;


/* One slot's value in a sampled sentence. */
typedef struct {
    int idx;          /* noun / adj / verb index, subj code index */
    int pl;           /* nouns: plural                          */
    int ref;          /* pronouns: the noun slot referred to    */
} Bind;

/* One rendered token, before output. */
typedef struct {
    char s[TOKENIZER_MAX_TOKEN_BYTES + 1];
    const char *key[MAX_KEYS];
    int n_keys;
    int from_slot;    /* slot the token came from (TT_SLOT main form), or -1 */
    int ctrl;         /* controller of a TT_WORD token, or -1                */
} RTok;

static void lexicon_free(Lexicon *lx) {
    lexicon_free_words(lx);
    for (int i = 0; i < lx->n_words; i++) {
        free(lx->words[i].key);
        for (int k = 0; k < lx->words[i].n; k++) { free(lx->words[i].code[k]); free(lx->words[i].form[k]); }
    }
    for (int t = 0; t < lx->n_tpls; t++)
        for (int l = 0; l < N_LANG; l++)
            for (int k = 0; k < lx->tpls[t].n_toks[l]; k++) {
                free(lx->tpls[t].toks[l][k].text);
                free(lx->tpls[t].toks[l][k].key);
            }
    free(lx->words); free(lx->tpls); free(lx->lessons);
    memset(lx, 0, sizeof *lx);
}


static int lang_of(const char *s) {
    for (int l = 0; l < N_LANG; l++)
        if (!strcmp(s, lang_name[l])) return l;
    return -1;
}

static int word_line(Lexicon *lx, char **f, int nf, const LexSrc *s) {
    if (nf < 3) return lex_src_err(s, "a word needs: key lang CODE=form...");
    int lang = lang_of(f[1]);
    if (lang < 0) return lex_src_err(s, "language must be en, fr or vi, got \"%s\"", f[1]);
    if (nf - 2 > MAX_CODES) return lex_src_err(s, "more than %d forms", MAX_CODES);
    for (int i = 0; i < lx->n_words; i++)
        if (!strcmp(lx->words[i].key, f[0]) && lx->words[i].lang == lang)
            return lex_src_err(s, "word \"%s\" for %s defined twice", f[0], f[1]);
    if (lex_grow((void **)&lx->words, lx->n_words, sizeof *lx->words)) return lex_src_err(s, "out of memory");
    Word *w = &lx->words[lx->n_words++];
    w->key = strdup(f[0]);
    w->lang = lang;
    for (int i = 2; i < nf; i++) {
        char *eq = strchr(f[i], '=');
        if (!eq || eq == f[i] || !eq[1]) return lex_src_err(s, "form \"%s\" is not CODE=form", f[i]);
        *eq = 0;
        w->code[w->n] = strdup(f[i]);
        w->form[w->n] = strdup(eq + 1);
        w->n++;
    }
    return 0;
}

static const Word *find_word(const Lexicon *lx, const char *key, int lang) {
    for (int i = 0; i < lx->n_words; i++)
        if (lx->words[i].lang == lang && !strcmp(lx->words[i].key, key)) return &lx->words[i];
    return NULL;
}

static int find_slot(const Template *t, const char *name) {
    for (int i = 0; i < t->n_slots; i++)
        if (!strcmp(t->slots[i].name, name)) return i;
    return -1;
}

/* Adds a pronoun slot named name (created by a ref directive). */
static int add_pron_slot(Template *t, const char *name, const LexSrc *s) {
    if (find_slot(t, name) >= 0) return lex_src_err(s, "slot %s defined twice", name);
    if (t->n_slots == MAX_SLOTS) return lex_src_err(s, "more than %d slots", MAX_SLOTS);
    Slot *sl = &t->slots[t->n_slots];
    memset(sl, 0, sizeof *sl);
    snprintf(sl->name, sizeof sl->name, "%s", name);
    sl->kind = SK_PRON;
    sl->describes = -1;
    return t->n_slots++;
}

static int slot_of_kind(const Template *t, const char *name, int kind, const LexSrc *s) {
    int i = find_slot(t, name);
    if (i < 0) return lex_src_err(s, "unknown slot %s", name);
    if (t->slots[i].kind != kind) return lex_src_err(s, "slot %s has the wrong kind here", name);
    return i;
}

/* Parses one token of a language line. */
static int parse_tok(Lexicon *lx, Template *t, int lang, const char *text, const LexSrc *s) {
    if (t->n_toks[lang] == MAX_TOKS) return lex_src_err(s, "more than %d tokens", MAX_TOKS);
    TplTok *tk = &t->toks[lang][t->n_toks[lang]];
    char body[128], key[160] = "";
    snprintf(body, sizeof body, "%s", text);
    char *after = body[0] == '{' ? strchr(body, '}') : body + 1;
    char *hash = after ? strchr(after, '#') : NULL;
    if (hash) {
        snprintf(key, sizeof key, "%s", hash + 1);
        *hash = 0;
        if (!key[0]) return lex_src_err(s, "empty #key in \"%s\"", text);
    }
    tk->slot = -1;
    tk->ctrl = -1;
    if (body[0] != '{') {
        tk->kind = TT_LIT;
        tk->text = strdup(body);
        tk->key = strdup(key[0] ? key : body);
    } else {
        size_t bl = strlen(body);
        if (bl < 3 || body[bl - 1] != '}') return lex_src_err(s, "unclosed { in \"%s\"", text);
        body[bl - 1] = 0;
        char *name = body + 1, *ctrl = strchr(name, ':'), *field = NULL;
        if (ctrl) *ctrl++ = 0;
        field = strchr(name, '.');
        if (field) *field++ = 0;
        int si = find_slot(t, name);
        if (ctrl) {
            tk->ctrl = find_slot(t, ctrl);
            if (tk->ctrl < 0) return lex_src_err(s, "unknown controller slot %s", ctrl);
            int ck = t->slots[tk->ctrl].kind;
            if (ck != SK_NOUN && ck != SK_SUBJ && ck != SK_PRON)
                return lex_src_err(s, "controller %s must be a noun, subj or pronoun slot", ctrl);
        }
        if (si >= 0) {
            int k = t->slots[si].kind;
            tk->kind = TT_SLOT;
            tk->slot = si;
            tk->text = strdup(field ? field : "");
            if (k == SK_SUBJ || k == SK_PRON)
                return lex_src_err(s, "write a pronoun slot as {it:%s}", name);
            if (k == SK_NOUN && field && strcmp(field, "det"))
                return lex_src_err(s, "noun slots have only the field .det, not .%s", field);
            if (k == SK_ADJ && field) return lex_src_err(s, "adjective slots have no fields");
            if (k == SK_VERB) {
                static const char *const ok[N_LANG][4] = {
                    { "base", "past", NULL, NULL }, { "inf", "pp", "pres", NULL }, { "base", NULL, NULL, NULL } };
                int good = 0;
                for (int q = 0; field && q < 4 && ok[lang][q]; q++) good |= !strcmp(field, ok[lang][q]);
                if (!good) return lex_src_err(s, "verb field .%s unknown in %s (en: base past; fr: inf pp pres; vi: base)",
                                          field ? field : "", lang_name[lang]);
                if (!strcmp(field, "pres") && tk->ctrl < 0) return lex_src_err(s, "{%s.pres} needs a controller: {%s.pres:X}", name, name);
            }
            if (!key[0]) {   /* default key: the slot, or SLOT.det for an article */
                int det = field && !strcmp(field, "det");
                snprintf(key, sizeof key, "%s%s", name, det ? ".det" : "");
            }
        } else {
            if (field) return lex_src_err(s, "unknown slot %s", name);
            if (!find_word(lx, name, lang))
                return lex_src_err(s, "no word \"%s\" for %s in words.txt (or no slot of that name)", name, lang_name[lang]);
            tk->kind = TT_WORD;
            tk->text = strdup(name);
            if (!key[0]) snprintf(key, sizeof key, "%s", name);
        }
        tk->key = strdup(key);
    }
    t->n_toks[lang]++;
    return 0;
}

static int tpl_line(Lexicon *lx, char **f, int nf, const LexSrc *s) {
    if (!strcmp(f[0], "template")) {
        if (nf != 2) return lex_src_err(s, "template needs an id");
        if (lx->n_tpls == CORPUS_MAX_TEMPLATES) return lex_src_err(s, "more than %d templates", CORPUS_MAX_TEMPLATES);
        for (int i = 0; i < lx->n_tpls; i++)
            if (!strcmp(lx->tpls[i].id, f[1])) return lex_src_err(s, "template %s defined twice", f[1]);
        if (lex_grow((void **)&lx->tpls, lx->n_tpls, sizeof *lx->tpls)) return lex_src_err(s, "out of memory");
        Template *t = &lx->tpls[lx->n_tpls++];
        snprintf(t->id, sizeof t->id, "%s", f[1]);
        t->weight = 1;
        t->heldout[0] = -1;
        t->line = s->line;
        return 0;
    }
    if (!strcmp(f[0], "lesson")) {
        if (nf < 2) return lex_src_err(s, "lesson needs a template id");
        if (lx->n_lessons == MAX_LESSONS) return lex_src_err(s, "more than %d lessons", MAX_LESSONS);
        if (!lx->lessons && !(lx->lessons = calloc(MAX_LESSONS, sizeof *lx->lessons))) return lex_src_err(s, "out of memory");
        Lesson *ls = &lx->lessons[lx->n_lessons++];
        ls->tpl = -1;
        for (int i = 0; i < lx->n_tpls; i++)
            if (!strcmp(lx->tpls[i].id, f[1])) ls->tpl = i;
        if (ls->tpl < 0) return lex_src_err(s, "lesson names unknown template %s", f[1]);
        for (int i = 2; i < nf; i++) {
            char *eq = strchr(f[i], '=');
            if (!eq || ls->n == MAX_SLOTS) return lex_src_err(s, "lesson binding \"%s\" is not SLOT=value", f[i]);
            *eq = 0;
            snprintf(ls->name[ls->n], 8, "%s", f[i]);
            snprintf(ls->value[ls->n], 32, "%s", eq + 1);
            ls->n++;
        }
        return 0;
    }
    if (!lx->n_tpls) return lex_src_err(s, "\"%s\" before the first template line", f[0]);
    Template *t = &lx->tpls[lx->n_tpls - 1];
    if (!strcmp(f[0], "weight")) {
        if (nf != 2 || (t->weight = atoi(f[1])) < 0 || t->weight > 100000) return lex_src_err(s, "weight must be 0..100000");
        return 0;
    }
    if (!strcmp(f[0], "slot")) {
        if (nf < 4) return lex_src_err(s, "slot NAME KIND CLASSES...");
        if (find_slot(t, f[1]) >= 0) return lex_src_err(s, "slot %s defined twice", f[1]);
        if (t->n_slots == MAX_SLOTS) return lex_src_err(s, "more than %d slots", MAX_SLOTS);
        if (strlen(f[1]) >= 8 || f[1][0] < 'A' || f[1][0] > 'Z') return lex_src_err(s, "slot names are short and start with a capital, got %s", f[1]);
        Slot *sl = &t->slots[t->n_slots];
        memset(sl, 0, sizeof *sl);
        snprintf(sl->name, sizeof sl->name, "%s", f[1]);
        sl->describes = -1;
        if (!strcmp(f[2], "noun")) {
            sl->kind = SK_NOUN;
            if (nf > 5) return lex_src_err(s, "slot NAME noun CLASSES [sg|pl|any]");
            if (lex_parse_classes(lx, f[3], s, &sl->classes, 0)) return -1;
            sl->number = NUM_SG;
            if (nf == 5) {
                if (!strcmp(f[4], "sg")) sl->number = NUM_SG;
                else if (!strcmp(f[4], "pl")) sl->number = NUM_PL;
                else if (!strcmp(f[4], "any")) sl->number = NUM_ANY;
                else return lex_src_err(s, "number must be sg, pl or any");
            }
        } else if (!strcmp(f[2], "adj")) {
            sl->kind = SK_ADJ;
            if (lex_parse_classes(lx, f[3], s, &sl->classes, 0)) return -1;
            if (nf == 5) {
                if (strncmp(f[4], "describes=", 10)) return lex_src_err(s, "expected describes=SLOT");
                if ((sl->describes = slot_of_kind(t, f[4] + 10, SK_NOUN, s)) < 0) return -1;
            } else if (nf > 5) return lex_src_err(s, "slot NAME adj CLASSES [describes=SLOT]");
        } else if (!strcmp(f[2], "verb")) {
            sl->kind = SK_VERB;
            if (nf != 4) return lex_src_err(s, "slot NAME verb CLASSES");
            if (lex_parse_classes(lx, f[3], s, &sl->classes, 0)) return -1;
        } else if (!strcmp(f[2], "subj")) {
            sl->kind = SK_SUBJ;
            if (nf - 3 > MAX_CODES) return lex_src_err(s, "too many codes");
            for (int i = 3; i < nf; i++) snprintf(sl->code[sl->n_codes++], 8, "%s", f[i]);
        } else return lex_src_err(s, "slot kind must be noun, adj, verb or subj, got %s", f[2]);
        t->n_slots++;
        return 0;
    }
    if (!strcmp(f[0], "ref")) {
        if (t->n_refs == 2) return lex_src_err(s, "at most 2 ref lines");
        if (nf < 4) return lex_src_err(s, "ref P by A TAG=SLOT... | ref P pick SLOT...");
        Ref *r = &t->refs[t->n_refs];
        memset(r, 0, sizeof *r);
        if ((r->pron = add_pron_slot(t, f[1], s)) < 0) return -1;
        if (!strcmp(f[2], "by")) {
            if ((r->by = slot_of_kind(t, f[3], SK_ADJ, s)) < 0) return -1;
            if (nf - 4 < 2 || nf - 4 > 4) return lex_src_err(s, "ref by needs 2..4 TAG=SLOT");
            for (int i = 4; i < nf; i++) {
                char *eq = strchr(f[i], '=');
                if (!eq) return lex_src_err(s, "\"%s\" is not TAG=SLOT", f[i]);
                *eq = 0;
                if (lex_parse_classes(lx, f[i], s, &r->tag[r->n], 0)) return -1;
                if ((r->target[r->n] = slot_of_kind(t, eq + 1, SK_NOUN, s)) < 0) return -1;
                r->n++;
            }
        } else if (!strcmp(f[2], "pick")) {
            r->by = -1;
            if (nf - 3 > 4) return lex_src_err(s, "ref pick takes at most 4 slots");
            for (int i = 3; i < nf; i++)
                if ((r->target[r->n++] = slot_of_kind(t, f[i], SK_NOUN, s)) < 0) return -1;
        } else return lex_src_err(s, "ref P by ... or ref P pick ...");
        t->n_refs++;
        return 0;
    }
    if (!strcmp(f[0], "balance") || !strcmp(f[0], "differ")) {
        if (nf != 4 || t->n_cons == 4) return lex_src_err(s, "%s WHAT X Y (at most 4 constraints)", f[0]);
        Constraint *c = &t->cons[t->n_cons];
        if (!strcmp(f[0], "balance") && !strcmp(f[1], "gender")) c->kind = CON_BALANCE_GENDER;
        else if (!strcmp(f[0], "differ") && !strcmp(f[1], "number")) c->kind = CON_DIFFER_NUMBER;
        else if (!strcmp(f[0], "differ") && !strcmp(f[1], "gender")) c->kind = CON_DIFFER_GENDER;
        else return lex_src_err(s, "unknown constraint %s %s (balance gender, differ number, differ gender)", f[0], f[1]);
        if ((c->a = slot_of_kind(t, f[2], SK_NOUN, s)) < 0 || (c->b = slot_of_kind(t, f[3], SK_NOUN, s)) < 0) return -1;
        if (c->kind == CON_DIFFER_NUMBER && (t->slots[c->a].number != NUM_ANY || t->slots[c->b].number != NUM_ANY))
            return lex_src_err(s, "differ number needs two noun slots of number any");
        t->n_cons++;
        return 0;
    }
    if (!strcmp(f[0], "heldout")) {
        if (nf != 4) return lex_src_err(s, "heldout NOUN NOUN ADJ");
        if ((t->heldout[0] = slot_of_kind(t, f[1], SK_NOUN, s)) < 0 ||
            (t->heldout[1] = slot_of_kind(t, f[2], SK_NOUN, s)) < 0 ||
            (t->heldout[2] = slot_of_kind(t, f[3], SK_ADJ, s)) < 0) return -1;
        return 0;
    }
    int lang = lang_of(f[0]);
    if (lang >= 0) {
        if (t->n_toks[lang]) return lex_src_err(s, "two %s lines in template %s", f[0], t->id);
        for (int i = 1; i < nf; i++)
            if (parse_tok(lx, t, lang, f[i], s)) return -1;
        if (!t->n_toks[lang]) return lex_src_err(s, "empty %s line", f[0]);
        if (lang == L_EN)   /* English keys must be unique: they name source positions */
            for (int i = 0; i < t->n_toks[L_EN]; i++)
                for (int j = 0; j < i; j++)
                    if (!strcmp(t->toks[L_EN][i].key, t->toks[L_EN][j].key))
                        return lex_src_err(s, "alignment key \"%s\" used twice in the English line (add #KEY)", t->toks[L_EN][i].key);
        return 0;
    }
    return lex_src_err(s, "unknown directive \"%s\"", f[0]);
}

/* Checks what can only be checked once a template is complete. */
static int check_templates(const Lexicon *lx, const char *dir, char *err, size_t errlen) {
    for (int i = 0; i < lx->n_tpls; i++) {
        const Template *t = &lx->tpls[i];
        char path[1024];
        snprintf(path, sizeof path, "%s/templates.txt", dir);
        LexSrc s = { path, t->line, err, errlen };
        for (int l = 0; l < N_LANG; l++)
            if (!t->n_toks[l]) return lex_src_err(&s, "template %s has no %s line", t->id, lang_name[l]);
        for (int r = 0; r < t->n_refs; r++) {
            int found = 0;
            for (int k = 0; k < t->n_toks[L_EN]; k++)
                found |= t->toks[L_EN][k].kind == TT_WORD && t->toks[L_EN][k].ctrl == t->refs[r].pron;
            if (!found) return lex_src_err(&s, "template %s: pronoun %s never appears in English", t->id, t->slots[t->refs[r].pron].name);
        }
        for (int k = 0; k < t->n_slots; k++) {     /* every noun slot has its head in English */
            if (t->slots[k].kind != SK_NOUN) continue;
            int found = 0;
            for (int q = 0; q < t->n_toks[L_EN]; q++)
                found |= t->toks[L_EN][q].kind == TT_SLOT && t->toks[L_EN][q].slot == k && !t->toks[L_EN][q].text[0];
            if (!found) return lex_src_err(&s, "template %s: noun %s never appears in English", t->id, t->slots[k].name);
        }
    }
    for (int i = 0; i < lx->n_lessons; i++) {
        const Lesson *ls = &lx->lessons[i];
        const Template *t = &lx->tpls[ls->tpl];
        for (int k = 0; k < ls->n; k++)
            if (find_slot(t, ls->name[k]) < 0)
                return errmsg_set(err, errlen, "%s/templates.txt: lesson %d names unknown slot %s of %s",
                               dir, i + 1, ls->name[k], t->id);
    }
    return 0;
}

/* A name must not be a word of words.txt or templates.txt either (spec A). */
static int check_names(const Lexicon *lx, const char *dir, char *err, size_t errlen) {
    for (int i = 0; i < lx->n_words; i++)
        for (int k = 0; k < lx->words[i].n; k++)
            if (lexicon_find_name(lx, lx->words[i].form[k]) >= 0)
                return errmsg_set(err, errlen, "%s/names.txt: name \"%s\" is also a word of words.txt", dir, lx->words[i].form[k]);
    for (int t = 0; t < lx->n_tpls; t++)
        for (int l = 0; l < N_LANG; l++)
            for (int k = 0; k < lx->tpls[t].n_toks[l]; k++) {
                const TplTok *tk = &lx->tpls[t].toks[l][k];
                if (tk->kind == TT_LIT && lexicon_find_name(lx, tk->text) >= 0)
                    return errmsg_set(err, errlen, "%s/names.txt: name \"%s\" is also a word of templates.txt", dir, tk->text);
            }
    return 0;
}

static int lexicon_load(Lexicon *lx, const char *dir, char *err, size_t errlen) {
    memset(lx, 0, sizeof *lx);
    if (lexicon_read_words(lx, dir, err, errlen) ||
        lex_read_lines(lx, dir, "words.txt", word_line, err, errlen) ||
        lex_read_lines(lx, dir, "templates.txt", tpl_line, err, errlen) ||
        check_templates(lx, dir, err, errlen) || check_names(lx, dir, err, errlen)) {
        lexicon_free(lx);
        return -1;
    }
    if (!lx->n_nouns || !lx->n_adjs || !lx->n_tpls) {
        lexicon_free(lx);
        return errmsg_set(err, errlen, "%s: no nouns, adjectives or templates", dir);
    }
    return 0;
}

/* -------------------------------------------------------------- sampling -- */

static int noun_has(const Noun *n, int pl) { return n->en[pl] != NULL; }

/* Agreement code of slot k ("3s.f.h", "1s"...), for pronouns that of their referent. */
static void slot_code(const Template *t, const Bind *b, const Lexicon *lx, int k, char *out, size_t n) {
    if (t->slots[k].kind == SK_PRON) k = b[k].ref;
    if (t->slots[k].kind == SK_SUBJ) { snprintf(out, n, "%s", t->slots[k].code[b[k].idx]); return; }
    const Noun *nn = &lx->nouns[b[k].idx];
    snprintf(out, n, "3%c.%c%s", b[k].pl ? 'p' : 's', nn->fem ? 'f' : 'm', nn->human ? ".h" : "");
}

static int code_fem(const char *c) { return strstr(c, ".f") != NULL; }
static int code_pl(const char *c) { return c[0] && c[1] == 'p'; }

/* Is the (unordered noun pair, adjective) combination held out? */
static int combo_heldout(const CorpusOptions *o, const Lexicon *lx, const uint64_t *pinned,
                         int n_pinned, int n1, int n2, int a) {
    int lo = n1 < n2 ? n1 : n2, hi = n1 < n2 ? n2 : n1;
    uint64_t key = ((uint64_t)lo << 40) | ((uint64_t)hi << 20) | (uint64_t)a;
    for (int i = 0; i < n_pinned; i++)
        if (pinned[i] == key) return 0;
    uint64_t h = o->seed ^ 0x5EEDC0FFEEull;
    h ^= key * 0x9E3779B97F4A7C15ull;
    (void)lx;
    return (int)(rng_splitmix64(&h) % 1000) < o->heldout_permille;
}

/* Samples slot values for template t.  mode: 0 train (no held-out combo),
 * 1 held-out (only held-out combos), -1 ignore.  Returns 0 or -1 (no luck). */
static int sample(const CorpusOptions *o, const Lexicon *lx, const Template *t, int mode,
                  const uint64_t *pinned, int n_pinned, uint64_t *rng, Bind *b) {
    int cand[1024];
    /* Drawn once, before the rejection loop, so that they stay balanced:
     * which candidate the pronoun refers to, and same or different gender. */
    int opt[2] = { 0, 0 };
    for (int r = 0; r < t->n_refs; r++) opt[r] = rng_splitmix_below(rng, t->refs[r].n);
    int want_same_gender = rng_splitmix_below(rng, 2);
    for (int attempt = 0; attempt < 4000; attempt++) {
        memset(b, 0, sizeof(Bind) * MAX_SLOTS);
        int forced_pl[MAX_SLOTS];
        for (int k = 0; k < MAX_SLOTS; k++) forced_pl[k] = -1;
        for (int c = 0; c < t->n_cons; c++)
            if (t->cons[c].kind == CON_DIFFER_NUMBER) {
                forced_pl[t->cons[c].a] = rng_splitmix_below(rng, 2);
                forced_pl[t->cons[c].b] = !forced_pl[t->cons[c].a];
            }
        int ok = 1;
        for (int k = 0; ok && k < t->n_slots; k++) {
            const Slot *sl = &t->slots[k];
            int n = 0;
            switch (sl->kind) {
            case SK_NOUN: {
                int need_pl = forced_pl[k] >= 0 ? forced_pl[k] : sl->number == NUM_PL ? 1 : sl->number == NUM_SG ? 0 : -1;
                for (int i = 0; i < lx->n_nouns && n < 1024; i++) {
                    const Noun *nn = &lx->nouns[i];
                    if (!(nn->classes & sl->classes)) continue;
                    if (need_pl >= 0 && !noun_has(nn, need_pl)) continue;
                    int dup = 0;
                    for (int q = 0; q < k; q++) dup |= t->slots[q].kind == SK_NOUN && b[q].idx == i;
                    if (!dup) cand[n++] = i;
                }
                if (!n) { ok = 0; break; }
                b[k].idx = cand[rng_splitmix_below(rng, n)];
                const Noun *nn = &lx->nouns[b[k].idx];
                if (need_pl >= 0) b[k].pl = need_pl;
                else if (noun_has(nn, 0) && noun_has(nn, 1)) b[k].pl = rng_splitmix_below(rng, 3) == 0;
                else b[k].pl = noun_has(nn, 1) && !noun_has(nn, 0);
                break;
            }
            case SK_ADJ: {
                ClassMask need = 0, forbid = 0;
                for (int r = 0; r < t->n_refs; r++)
                    if (t->refs[r].by == k) {
                        need = t->refs[r].tag[opt[r]];
                        for (int q = 0; q < t->refs[r].n; q++)
                            if (q != opt[r]) forbid |= t->refs[r].tag[q];
                    }
                for (int i = 0; i < lx->n_adjs && n < 1024; i++) {
                    const Adj *a = &lx->adjs[i];
                    if (!(a->classes & sl->classes)) continue;
                    if (need && !(a->classes & need)) continue;
                    if (a->classes & forbid) continue;
                    if (sl->describes >= 0 && !(a->classes & lx->nouns[b[sl->describes].idx].classes)) continue;
                    cand[n++] = i;
                }
                if (!n) { ok = 0; break; }
                b[k].idx = cand[rng_splitmix_below(rng, n)];
                break;
            }
            case SK_VERB:
                for (int i = 0; i < lx->n_verbs && n < 1024; i++)
                    if (lx->verbs[i].classes & sl->classes) cand[n++] = i;
                if (!n) { ok = 0; break; }
                b[k].idx = cand[rng_splitmix_below(rng, n)];
                break;
            case SK_SUBJ:
                b[k].idx = rng_splitmix_below(rng, sl->n_codes);
                break;
            case SK_PRON:
                break;
            }
        }
        if (!ok) continue;
        for (int r = 0; r < t->n_refs; r++) b[t->refs[r].pron].ref = t->refs[r].target[opt[r]];
        for (int c = 0; ok && c < t->n_cons; c++) {
            const Noun *na = &lx->nouns[b[t->cons[c].a].idx], *nb = &lx->nouns[b[t->cons[c].b].idx];
            if (t->cons[c].kind == CON_BALANCE_GENDER) ok = (na->fem == nb->fem) == want_same_gender;
            if (t->cons[c].kind == CON_DIFFER_GENDER) ok = na->fem != nb->fem;
        }
        if (!ok) continue;
        if (mode >= 0 && t->heldout[0] >= 0) {
            int h = combo_heldout(o, lx, pinned, n_pinned, b[t->heldout[0]].idx, b[t->heldout[1]].idx,
                                  b[t->heldout[2]].idx);
            if (h != mode) continue;
        }
        return 0;
    }
    return -1;
}

/* ------------------------------------------------------------- rendering -- */

/* Looks a word form up by code with fallbacks 3s.f.h → 3s.f → 3s.h → 3s → *. */
static const char *word_form(const Word *w, const char *code) {
    char tries[5][16];
    int n = 0;
    snprintf(tries[n++], 16, "%s", code);
    if (code[0] == '3' && strlen(code) > 2) {
        int h = strstr(code, ".h") != NULL;
        char g = strlen(code) > 3 ? code[3] : 0;
        if (h && g) snprintf(tries[n++], 16, "%.2s.%c", code, g);
        if (h) snprintf(tries[n++], 16, "%.2s.h", code);
        snprintf(tries[n++], 16, "%.2s", code);
    }
    snprintf(tries[n++], 16, "*");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < w->n; k++)
            if (!strcmp(w->code[k], tries[i])) return w->form[k];
    return NULL;
}

typedef struct {
    RTok tok[MAX_TOKS];
    int n;
} Rendered;

/* Appends s split at '_' (one token per piece); "-" or "" adds nothing. */
static int push(Rendered *r, const char *s, const char *key, int from_slot, int ctrl) {
    if (!s || !*s || !strcmp(s, "-")) return 0;
    while (*s) {
        const char *u = strchr(s, '_');
        size_t len = u ? (size_t)(u - s) : strlen(s);
        if (r->n == MAX_TOKS || len == 0 || len > TOKENIZER_MAX_TOKEN_BYTES) return -1;
        RTok *t = &r->tok[r->n++];
        memcpy(t->s, s, len);
        t->s[len] = 0;
        t->key[0] = key;
        t->n_keys = 1;
        t->from_slot = from_slot;
        t->ctrl = ctrl;
        s += len;
        if (*s == '_') s++;
    }
    return 0;
}

static int render(const Lexicon *lx, const Template *t, const Bind *b, int lang, Rendered *r,
                  char *err, size_t errlen) {
    r->n = 0;
    for (int i = 0; i < t->n_toks[lang]; i++) {
        const TplTok *tk = &t->toks[lang][i];
        char code[16] = "*";
        if (tk->ctrl >= 0) slot_code(t, b, lx, tk->ctrl, code, sizeof code);
        const char *s = NULL;
        int from = -1;
        if (tk->kind == TT_LIT) s = tk->text;
        else if (tk->kind == TT_WORD) {
            s = word_form(find_word(lx, tk->text, lang), code);
            if (!s) return errmsg_set(err, errlen, "template %s: word %s has no %s form for %s",
                                   t->id, tk->text, lang_name[lang], code);
        } else {
            const Slot *sl = &t->slots[tk->slot];
            const Bind *bb = &b[tk->slot];
            if (sl->kind == SK_NOUN) {
                const Noun *n = &lx->nouns[bb->idx];
                if (!strcmp(tk->text, "det")) {
                    s = lang == L_EN ? "the" : lang == L_FR ? (bb->pl ? "les" : n->fem ? "la" : "le")
                                                            : (bb->pl ? "những" : "");
                } else {
                    s = lang == L_EN ? n->en[bb->pl] : lang == L_FR ? n->fr[bb->pl] : n->vi;
                    from = tk->slot;
                }
            } else if (sl->kind == SK_ADJ) {
                const Adj *a = &lx->adjs[bb->idx];
                s = lang == L_EN ? a->en : lang == L_VI ? a->vi
                                 : a->fr[(code_pl(code) ? 2 : 0) + (code_fem(code) ? 1 : 0)];
            } else if (sl->kind == SK_VERB) {
                const Verb *v = &lx->verbs[bb->idx];
                if (lang == L_VI) s = v->vi;
                else if (lang == L_EN) s = !strcmp(tk->text, "past") ? v->en_past : v->en_base;
                else if (!strcmp(tk->text, "inf")) s = v->fr_inf;
                else if (!strcmp(tk->text, "pp")) s = v->fr_pp;
                else s = code_pl(code) ? v->fr_pres[5] : v->fr_pres[2];
            }
        }
        if (push(r, s, tk->key, from, tk->kind == TT_WORD ? tk->ctrl : -1))
            return errmsg_set(err, errlen, "template %s: sentence longer than %d tokens or bad token \"%s\"",
                           t->id, MAX_TOKS, s ? s : "");
    }
    return 0;
}

static int fr_elides(const char *w) {
    static const char *const v[] = { "a", "e", "i", "o", "u", "h", "à", "â", "é", "è", "ê", "ë",
                                     "î", "ï", "ô", "û", "ù", "ü", "œ" };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (!strncmp(w, v[i], strlen(v[i]))) return 1;
    return 0;
}

static void merge_keys(RTok *dst, const RTok *src) {
    for (int i = 0; i < src->n_keys; i++) {
        int have = 0;
        for (int k = 0; k < dst->n_keys; k++) have |= !strcmp(dst->key[k], src->key[i]);
        if (!have && dst->n_keys < MAX_KEYS) dst->key[dst->n_keys++] = src->key[i];
    }
}

/* French orthography: elision (le → l', que → qu' before a vowel or mute h)
 * then contraction (à le → au, à les → aux, de le → du, de les → des). */
static void fr_orthography(Rendered *r) {
    static const char *const el[][2] = { { "le", "l'" }, { "la", "l'" }, { "ne", "n'" }, { "que", "qu'" },
        { "de", "d'" }, { "je", "j'" }, { "se", "s'" }, { "ce", "c'" }, { "me", "m'" }, { "te", "t'" } };
    for (int i = 0; i + 1 < r->n; i++)
        for (size_t k = 0; k < sizeof el / sizeof *el; k++)
            if (!strcmp(r->tok[i].s, el[k][0]) && fr_elides(r->tok[i + 1].s)) {
                snprintf(r->tok[i].s, sizeof r->tok[i].s, "%s", el[k][1]);
                break;
            }
    static const char *const co[][3] = { { "à", "le", "au" }, { "à", "les", "aux" },
                                         { "de", "le", "du" }, { "de", "les", "des" } };
    for (int i = 0; i + 1 < r->n; i++)
        for (size_t k = 0; k < sizeof co / sizeof *co; k++)
            if (!strcmp(r->tok[i].s, co[k][0]) && !strcmp(r->tok[i + 1].s, co[k][1])) {
                snprintf(r->tok[i].s, sizeof r->tok[i].s, "%s", co[k][2]);
                merge_keys(&r->tok[i], &r->tok[i + 1]);
                memmove(&r->tok[i + 1], &r->tok[i + 2], (size_t)(r->n - i - 2) * sizeof *r->tok);
                r->n--;
                break;
            }
}

/* ------------------------------------------------------------ generating -- */

typedef struct {
    char *buf;
    size_t len, cap;
} Buf;

static int buf_add(Buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (b->len + n + 1 > cap) cap *= 2;
        char *p = realloc(b->buf, cap);
        if (!p) return -1;
        b->buf = p;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, s, n);
    b->len += n;
    b->buf[b->len] = 0;
    return 0;
}

static int buf_str(Buf *b, const char *s) { return buf_add(b, s, strlen(s)); }

static int buf_fmt(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int buf_fmt(Buf *b, const char *fmt, ...) {
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return buf_add(b, tmp, (size_t)n);
}

/* Token set for vocab.txt: a simple open-addressing set of strings. */
typedef struct {
    char **s;
    int n, cap;
} StrSet;

static int set_add(StrSet *st, const char *w) {
    if (2 * (st->n + 1) > st->cap) {
        int cap = st->cap ? 2 * st->cap : 1024;
        char **ns = calloc((size_t)cap, sizeof *ns);
        if (!ns) return -1;
        for (int i = 0; i < st->cap; i++)
            if (st->s[i]) {
                uint32_t h = 2166136261u;
                for (const char *c = st->s[i]; *c; c++) { h ^= (unsigned char)*c; h *= 16777619u; }
                int j = (int)(h & (uint32_t)(cap - 1));
                while (ns[j]) j = (j + 1) & (cap - 1);
                ns[j] = st->s[i];
            }
        free(st->s);
        st->s = ns;
        st->cap = cap;
    }
    uint32_t h = 2166136261u;
    for (const char *c = w; *c; c++) { h ^= (unsigned char)*c; h *= 16777619u; }
    int j = (int)(h & (uint32_t)(st->cap - 1));
    while (st->s[j]) {
        if (!strcmp(st->s[j], w)) return 0;
        j = (j + 1) & (st->cap - 1);
    }
    if (!(st->s[j] = strdup(w))) return -1;
    st->n++;
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
    uint64_t *pinned;
    int n_pinned;
    char *err;
    size_t errlen;
    unsigned char *frame_held;   /* per grammar frame: 1 held out, 2 invalid */
    unsigned *noun_uses;         /* per noun: grammar pairs that used it (grammar_generate) */
    struct LexForm *forms;       /* English word forms, sorted by first token */
    int n_forms;
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

/* Renders one pair and appends its TSV line; checks that every token is what
 * the tokenizer makes of it. */
static int emit_pair(Gen *g, Buf *out, int ti, const Bind *b, int lang, int heldout) {
    const Lexicon *lx = g->lx;
    const Template *t = &lx->tpls[ti];
    Rendered src, tgt;
    if (render(lx, t, b, L_EN, &src, g->err, g->errlen) || render(lx, t, b, lang, &tgt, g->err, g->errlen))
        return -1;
    if (lang == L_FR) fr_orthography(&tgt);
    if (src.n > CORPUS_MAX_LEN || tgt.n > CORPUS_MAX_LEN)
        return errmsg_set(g->err, g->errlen, "template %s makes a sentence of more than %d tokens", t->id, CORPUS_MAX_LEN);
    for (int side = 0; side < 2; side++) {
        const Rendered *r = side ? &tgt : &src;
        const char *tok[MAX_TOKS + 8];
        for (int i = 0; i < r->n; i++) tok[i] = r->tok[i].s;
        if (check_side(g, t->id, tok, NULL, r->n)) return -1;
    }
    if (buf_str(out, lang == L_FR ? "fr\t" : "vi\t")) goto oom;
    for (int i = 0; i < src.n; i++)
        if (buf_str(out, i ? " " : "") || buf_str(out, src.tok[i].s)) goto oom;
    if (buf_str(out, "\t")) goto oom;
    for (int i = 0; i < tgt.n; i++)
        if (buf_str(out, i ? " " : "") || buf_str(out, tgt.tok[i].s)) goto oom;
    if (buf_str(out, "\t")) goto oom;
    int n_al = 0;
    for (int i = 0; i < tgt.n; i++)
        for (int k = 0; k < tgt.tok[i].n_keys; k++)
            for (int s = 0; s < src.n; s++)
                if (!strcmp(src.tok[s].key[0], tgt.tok[i].key[k])) {
                    if (buf_fmt(out, "%s%d-%d", n_al++ ? " " : "", i, s)) goto oom;
                    break;
                }
    if (!n_al && buf_str(out, "-")) goto oom;
    if (buf_str(out, "\t")) goto oom;
    int n_co = 0;
    for (int r = 0; r < t->n_refs; r++) {
        int p = -1, a = -1;
        for (int s = 0; s < src.n; s++) {
            if (p < 0 && src.tok[s].ctrl == t->refs[r].pron) p = s;
            if (a < 0 && src.tok[s].from_slot == b[t->refs[r].pron].ref) a = s;
        }
        if (p < 0 || a < 0) return errmsg_set(g->err, g->errlen, "template %s: pronoun or antecedent not found", t->id);
        if (buf_fmt(out, "%s%d-%d", n_co++ ? " " : "", p, a)) goto oom;
    }
    if (!n_co && buf_str(out, "-")) goto oom;
    if (buf_str(out, "\t") || buf_str(out, t->id) || buf_str(out, "\n")) goto oom;
    CorpusStats *st = g->st;
    if (heldout) st->heldout_per_template[ti]++;
    else st->train_per_template[ti]++;
    if (lang == L_FR) st->n_fr++;
    else st->n_vi++;
    st->src_len_hist[src.n]++;
    st->tgt_len_hist[tgt.n]++;
    if (src.n > st->max_src_len) st->max_src_len = src.n;
    if (tgt.n > st->max_tgt_len) st->max_tgt_len = tgt.n;
    return 0;
oom:
    return errmsg_set(g->err, g->errlen, "out of memory");
}

/* First source token with alignment key k, or -1. */
static int src_with_key(const GrSide *src, int k) {
    for (int s = 0; s < src->n; s++)
        for (int q = 0; q < src->t[s].n_keys; q++)
            if (src->t[s].key[q] == k) return s;
    return -1;
}

/* Appends a grammar pair's TSV line (split: 0 train, 1 held-out words, 2 held-out frames). */
static int emit_grammar(Gen *g, Buf *out, const GrPair *gp, int lang, int split) {
    const GrSide *src = &gp->side[L_EN], *tgt = &gp->side[lang];
    char id[80] = "g.";
    grammar_frame_name(gp->frame, id + 2, sizeof id - 2);
    if (src->n > CORPUS_MAX_LEN || tgt->n > CORPUS_MAX_LEN) return 1;   /* too long: the caller draws again */
    for (int side = 0; side < 2; side++) {
        const GrSide *r = side ? tgt : src;
        const char *tok[GR_MAX_TOK];
        int copy[GR_MAX_TOK];
        for (int i = 0; i < r->n; i++) { tok[i] = r->t[i].s; copy[i] = r->t[i].copy; }
        if (check_side(g, id, tok, copy, r->n)) return -1;
    }
    if (buf_str(out, lang == L_FR ? "fr\t" : "vi\t")) goto oom;
    for (int i = 0; i < src->n; i++)
        if (buf_str(out, i ? " " : "") || buf_str(out, src->t[i].s)) goto oom;
    if (buf_str(out, "\t")) goto oom;
    for (int i = 0; i < tgt->n; i++)
        if (buf_str(out, i ? " " : "") || buf_str(out, tgt->t[i].s)) goto oom;
    if (buf_str(out, "\t")) goto oom;
    int n_al = 0;
    for (int i = 0; i < tgt->n; i++) {
        int copied = 0;
        for (int k = 0; k < tgt->t[i].n_keys; k++) {
            int s = src_with_key(src, tgt->t[i].key[k]);
            if (s < 0) continue;
            copied |= !strcmp(src->t[s].s, tgt->t[i].s);
            if (buf_fmt(out, "%s%d-%d", n_al++ ? " " : "", i, s)) goto oom;
        }
        if (tgt->t[i].copy && !copied)
            return errmsg_set(g->err, g->errlen, "%s: copied token \"%s\" is not aligned to itself", id, tgt->t[i].s);
    }
    if (!n_al && buf_str(out, "-")) goto oom;
    if (buf_str(out, "\t")) goto oom;
    CorpusStats *st = g->st;
    int cata = 0, across = 0;
    for (int c = 0; c < gp->n_coref; c++) {
        int p = src_with_key(src, gp->coref_key[c][0]), a = src_with_key(src, gp->coref_key[c][1]);
        if (p < 0 || a < 0) return errmsg_set(g->err, g->errlen, "%s: pronoun or antecedent not in the source", id);
        if (buf_fmt(out, "%s%d-%d", c ? " " : "", p, a)) goto oom;
        cata |= a > p;
        for (int q = (p < a ? p : a); q < (p < a ? a : p); q++)
            across |= !strcmp(src->t[q].s, ".") || !strcmp(src->t[q].s, "?");
    }
    if (!gp->n_coref && buf_str(out, "-")) goto oom;
    if (buf_str(out, "\t") || buf_str(out, id) || buf_str(out, "\n")) goto oom;
    int kind = st->n_templates + grammar_frame_discourse(gp->frame);
    if (split == 0) st->train_per_template[kind]++, st->n_grammar_train++;
    else if (split == 1) st->heldout_per_template[kind]++;
    else st->heldout_frames_per_template[kind]++;
    st->n_cataphora += cata;
    st->n_across += across;
    st->n_with_names += gp->has_name;
    if (lang == L_FR) st->n_fr++;
    else st->n_vi++;
    st->src_len_hist[src->n]++;
    st->tgt_len_hist[tgt->n]++;
    if (src->n > st->max_src_len) st->max_src_len = src->n;
    if (tgt->n > st->max_tgt_len) st->max_tgt_len = tgt->n;
    return 0;
oom:
    return errmsg_set(g->err, g->errlen, "out of memory");
}

/* Binds a lesson's SLOT=value list; unbound slots stay for sample() to fill. */
static int lesson_bind(const Lexicon *lx, const Lesson *ls, Bind *b, char *err, size_t errlen) {
    const Template *t = &lx->tpls[ls->tpl];
    for (int k = 0; k < ls->n; k++) {
        int si = find_slot(t, ls->name[k]);
        const Slot *sl = &t->slots[si];
        const char *v = ls->value[k];
        int found = 0;
        if (sl->kind == SK_NOUN) {
            for (int i = 0; !found && i < lx->n_nouns; i++)
                for (int pl = 0; pl < 2 && !found; pl++)
                    if (lx->nouns[i].en[pl] && !strcmp(lx->nouns[i].en[pl], v)) { b[si].idx = i; b[si].pl = pl; found = 1; }
        } else if (sl->kind == SK_ADJ) {
            for (int i = 0; !found && i < lx->n_adjs; i++)
                if (!strcmp(lx->adjs[i].en, v)) { b[si].idx = i; found = 1; }
        } else if (sl->kind == SK_VERB) {
            for (int i = 0; !found && i < lx->n_verbs; i++)
                if (!strcmp(lx->verbs[i].en_base, v)) { b[si].idx = i; found = 1; }
        } else if (sl->kind == SK_SUBJ) {
            for (int i = 0; !found && i < sl->n_codes; i++)
                if (!strcmp(sl->code[i], v)) { b[si].idx = i; found = 1; }
        }
        if (!found) return errmsg_set(err, errlen, "lesson for %s: no %s \"%s\" for slot %s", t->id,
                                   sl->kind == SK_NOUN ? "noun" : sl->kind == SK_ADJ ? "adjective" : sl->kind == SK_VERB ? "verb" : "code",
                                   v, ls->name[k]);
    }
    /* pronouns: the referent the adjective's meaning selects */
    for (int r = 0; r < t->n_refs; r++) {
        const Ref *rf = &t->refs[r];
        int target = rf->target[0];
        if (rf->by >= 0)
            for (int q = 0; q < rf->n; q++)
                if (lx->adjs[b[rf->by].idx].classes & rf->tag[q]) target = rf->target[q];
        b[rf->pron].ref = target;
    }
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
    o->frame_permille = 80;
    o->combo_permille = 50;
    o->lesson_copies = 10;
    o->data_dir = "samples/corpus";
    o->out_dir = "build/corpus";
}

/* Picks a template index by weight among those allowed. */
static int pick_template(const Lexicon *lx, uint64_t *rng, int coref_only) {
    int total = 0;
    for (int i = 0; i < lx->n_tpls; i++)
        if (!coref_only || lx->tpls[i].heldout[0] >= 0) total += lx->tpls[i].weight;
    if (!total) return -1;
    int x = rng_splitmix_below(rng, total);
    for (int i = 0; i < lx->n_tpls; i++) {
        if (coref_only && lx->tpls[i].heldout[0] < 0) continue;
        if (x < lx->tpls[i].weight) return i;
        x -= lx->tpls[i].weight;
    }
    return -1;
}

/* One template pair: a training pair (heldout 0) or a held-out coreference combination. */
static int template_pair(Gen *g, Buf *out, uint64_t *rng, int lang, int heldout) {
    const Lexicon *lx = g->lx;
    Bind b[MAX_SLOTS];
    int ti = pick_template(lx, rng, heldout);
    if (ti < 0) return errmsg_set(g->err, g->errlen, heldout ? "no coreference template (with a heldout line) to hold out"
                                                             : "all template weights are 0");
    if (sample(g->o, lx, &lx->tpls[ti], heldout, g->pinned, g->n_pinned, rng, b))
        return errmsg_set(g->err, g->errlen, heldout ? "template %s: found no held-out combination (raise --heldout-share)"
                          : "template %s: no slot values satisfy its constraints (check its classes)", lx->tpls[ti].id);
    return emit_pair(g, out, ti, b, lang, heldout);
}

static uint64_t seeded_hash(uint64_t seed, uint64_t salt, uint64_t x) {
    uint64_t h = seed ^ salt;
    h ^= x * 0x9E3779B97F4A7C15ull;
    return rng_splitmix64(&h);
}

/* Marks held-out (1) and invalid (2) frames; every single rule value (each
 * structure, tense, mood, discourse) must keep a frame in training. */
static int setup_frames(Gen *g) {
    int nf = grammar_n_frames();
    if (!(g->frame_held = calloc((size_t)nf, 1)) || !(g->noun_uses = calloc((size_t)g->lx->n_nouns + 1, sizeof *g->noun_uses)))
        return errmsg_set(g->err, g->errlen, "out of memory");
    int seen[4][32] = { { 0 } };
    for (int f = 0; f < nf; f++) {
        if (!grammar_frame_valid(f)) { g->frame_held[f] = 2; continue; }
        g->st->n_frames++;
        if ((int)(seeded_hash(g->o->seed, 0xF4A3E5ull, (uint64_t)f) % 1000) < g->o->frame_permille) {
            g->frame_held[f] = 1;
            g->st->n_frames_heldout++;
            continue;
        }
        int p[4];
        grammar_frame_parts(f, &p[0], &p[1], &p[2], &p[3]);
        for (int k = 0; k < 4; k++) seen[k][p[k]] = 1;
    }
    int lim[4] = { 5, 3, 3, grammar_n_discourse() };
    for (int k = 0; k < 4; k++)
        for (int v = 0; v < lim[k]; v++)
            if (!seen[k][v]) return errmsg_set(g->err, g->errlen, "held-out frames leave no training frame for one rule value "
                                               "(lower the held-out frame share or change --seed)");
    if (g->o->n_heldout_frames && !g->st->n_frames_heldout)
        return errmsg_set(g->err, g->errlen, "no frame is held out (raise the held-out frame share)");
    return 0;
}

/* Draws a frame: discourse kind by weight, then structure, tense and mood;
 * held 0 a training frame, 1 a held-out frame. */
static int draw_frame(Gen *g, uint64_t *rng, int held) {
    static const int w[] = { 24, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 14, 6, 6 };
    int total = 0, nd = grammar_n_discourse();
    for (int d = 0; d < nd; d++) total += w[d];
    for (int attempt = 0; attempt < 100000; attempt++) {
        int x = rng_splitmix_below(rng, total), d = 0;
        while (x >= w[d]) x -= w[d++];
        int f = grammar_make_frame(rng_splitmix_below(rng, 5), rng_splitmix_below(rng, 3), rng_splitmix_below(rng, 3), d);
        if (g->frame_held[f] == held) return f;
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

static int add_form(Gen *g, const char *form, const char *lemma, char cat) {
    if (!form) return 0;
    if (lex_grow((void **)&g->forms, g->n_forms, sizeof *g->forms)) return -1;
    LexForm *f = &g->forms[g->n_forms++];
    snprintf(f->first, sizeof f->first, "%.*s", (int)strcspn(form, "_"), form);
    f->form = form;
    f->lemma = lemma;
    f->cat = cat;
    return 0;
}

static int build_forms(Gen *g) {
    const Lexicon *lx = g->lx;
    int rc = 0;
    for (int i = 0; i < lx->n_nouns; i++) {
        const Noun *n = &lx->nouns[i];
        const char *lemma = n->en[0] ? n->en[0] : n->en[1];
        rc |= add_form(g, n->en[0], lemma, 'N') | add_form(g, n->en[1], lemma, 'N');
    }
    for (int i = 0; i < lx->n_names; i++) rc |= add_form(g, lx->names[i].name, lx->names[i].name, 'P');
    for (int i = 0; i < lx->n_verbs; i++) {
        const Verb *v = &lx->verbs[i];
        rc |= add_form(g, v->en_base, v->en_base, 'V') | add_form(g, v->en_3s, v->en_base, 'V') |
              add_form(g, v->en_past, v->en_base, 'V');
    }
    for (int i = 0; i < lx->n_adjs; i++) rc |= add_form(g, lx->adjs[i].en, lx->adjs[i].en, 'A');
    if (rc) return errmsg_set(g->err, g->errlen, "out of memory");
    qsort(g->forms, (size_t)g->n_forms, sizeof *g->forms, cmp_form);
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

/* The key: the first noun or name of the English, then the first verb or
 * adjective after it, then the first noun or name after that (lemmas, "-" if
 * none), e.g. "dog|chase|cat".  tests/test_corpus.c recomputes it. */
static void combo_text(const Gen *g, const GrSide *src, char *out, size_t n) {
    const char *want[3] = { "NP", "VA", "NP" };
    const char *got[3] = { "-", "-", "-" };
    int slot = 0;
    for (int i = 0; i < src->n && slot < 3; i++) {
        LexForm key;
        snprintf(key.first, sizeof key.first, "%s", src->t[i].s);
        const LexForm *f = bsearch(&key, g->forms, (size_t)g->n_forms, sizeof *g->forms, cmp_form);
        if (!f) continue;
        while (f > g->forms && !strcmp(f[-1].first, key.first)) f--;
        int best = 0;
        const LexForm *hit = NULL;
        for (; f < g->forms + g->n_forms && !strcmp(f->first, key.first); f++) {
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

/* One grammar pair; split 0 train, 1 held-out word combination, 2 held-out frame. */
static int grammar_pair(Gen *g, Buf *out, uint64_t *rng, int lang, int split) {
    for (int attempt = 0; attempt < 20000; attempt++) {
        int f = draw_frame(g, rng, split == 2);
        if (f < 0) break;
        GrPair gp;
        if (grammar_generate(g->lx, f, rng, g->noun_uses, &gp, g->err, g->errlen)) return -1;
        char key[256];
        combo_text(g, &gp.side[L_EN], key, sizeof key);
        if (split != 2 && ((int)(seeded_hash(g->o->seed, 0xC0B0ull, fnv64(key)) % 1000) < g->o->combo_permille) != (split == 1))
            continue;
        int rc = emit_grammar(g, out, &gp, lang, split);
        if (rc <= 0) return rc;
    }
    return errmsg_set(g->err, g->errlen, "grammar: no pair found for split %d (lexicon too small?)", split);
}

/* Binds the lesson sentences and pins their coreference combinations to train. */
static int bind_lessons(Gen *g, Bind (*lesson_b)[MAX_SLOTS]) {
    const Lexicon *lx = g->lx;
    g->pinned = calloc(MAX_LESSONS, sizeof *g->pinned);
    if (!g->pinned) return errmsg_set(g->err, g->errlen, "out of memory");
    for (int i = 0; i < lx->n_lessons; i++) {
        memset(lesson_b[i], 0, sizeof lesson_b[i]);
        if (lesson_bind(lx, &lx->lessons[i], lesson_b[i], g->err, g->errlen)) return -1;
        const Template *t = &lx->tpls[lx->lessons[i].tpl];
        if (t->heldout[0] >= 0) {
            int n1 = lesson_b[i][t->heldout[0]].idx, n2 = lesson_b[i][t->heldout[1]].idx, a = lesson_b[i][t->heldout[2]].idx;
            int lo = n1 < n2 ? n1 : n2, hi = n1 < n2 ? n2 : n1;
            g->pinned[g->n_pinned++] = ((uint64_t)lo << 40) | ((uint64_t)hi << 20) | (uint64_t)a;
        }
    }
    return 0;
}

/* Counts the template coreference combinations and how many are held out. */
static void count_combinations(Gen *g) {
    const Lexicon *lx = g->lx;
    for (int ti = 0; ti < lx->n_tpls; ti++) {
        const Template *t = &lx->tpls[ti];
        if (t->heldout[0] < 0) continue;
        const Slot *s1 = &t->slots[t->heldout[0]], *s2 = &t->slots[t->heldout[1]], *sa = &t->slots[t->heldout[2]];
        for (int i = 0; i < lx->n_nouns; i++) {
            if (!(lx->nouns[i].classes & s1->classes)) continue;
            for (int j = 0; j < lx->n_nouns; j++) {
                if (j == i || !(lx->nouns[j].classes & s2->classes)) continue;
                for (int a = 0; a < lx->n_adjs; a++) {
                    if (!(lx->adjs[a].classes & sa->classes)) continue;
                    g->st->n_coref_combinations++;
                    g->st->n_heldout_combinations += combo_heldout(g->o, lx, g->pinned, g->n_pinned, i, j, a);
                }
            }
        }
    }
}

/* Grammar or template?  Shares 0 and 1 draw nothing, so that --grammar-share 0
 * with --train 60000 --heldout-frames 0 writes the corpus of before the grammar. */
static int draw_grammar(const CorpusOptions *o, uint64_t *rng) {
    if (o->grammar_permille <= 0 || o->grammar_permille >= 1000) return o->grammar_permille >= 1000;
    return rng_splitmix_below(rng, 1000) < o->grammar_permille;
}

/* train.tsv, heldout.tsv, heldout-frames.tsv into the three buffers. */
static int generate_pairs(Gen *g, Buf *train, Buf *held, Buf *frames, Bind (*lesson_b)[MAX_SLOTS]) {
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
        int lang = (i & 1) ? L_VI : L_FR;
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
static int write_vocab(Gen *g, Buf *voc) {
    char **words = malloc((size_t)(g->vocab.n + 1) * sizeof *words);
    if (!words) return errmsg_set(g->err, g->errlen, "out of memory");
    int nw = 0;
    for (int i = 0; i < g->vocab.cap; i++)
        if (g->vocab.s[i]) words[nw++] = g->vocab.s[i];
    qsort(words, (size_t)nw, sizeof *words, cmp_str);
    int rc = 0;
    for (int i = 0; i < VOCAB_N_SPECIAL && !rc; i++) rc = buf_str(voc, vocab_special[i]) || buf_str(voc, "\n");
    for (int i = 0; i < nw && !rc; i++) rc = buf_str(voc, words[i]) || buf_str(voc, "\n");
    free(words);
    g->st->vocab_size = nw + VOCAB_N_SPECIAL;
    return rc ? errmsg_set(g->err, g->errlen, "out of memory") : 0;
}

int corpus_generate(const CorpusOptions *o, CorpusStats *stats, char *err, size_t errlen) {
    CorpusStats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (o->n_train < 0 || o->n_heldout < 0 || o->n_heldout_frames < 0 || o->heldout_permille < 1 ||
        o->heldout_permille > 900 || o->lesson_copies < 0 || o->grammar_permille < 0 || o->grammar_permille > 1000 ||
        o->frame_permille < 0 || o->frame_permille > 500 || o->combo_permille < 0 || o->combo_permille > 500)
        return errmsg_set(err, errlen, "corpus options out of range (train, heldout >= 0; heldout share 1..900 permille; "
                          "grammar share 0..1)");
    Lexicon lx;
    if (lexicon_load(&lx, o->data_dir, err, errlen)) return -1;
    Gen g = { o, &lx, stats, { 0 }, NULL, 0, err, errlen, NULL, NULL, NULL, 0 };
    Buf train = { 0 }, held = { 0 }, frames = { 0 }, voc = { 0 };
    Bind lesson_b[MAX_LESSONS][MAX_SLOTS];
    int rc = -1;
    stats->n_templates = lx.n_tpls;
    for (int i = 0; i < lx.n_tpls; i++) snprintf(stats->template_id[i], 32, "%s", lx.tpls[i].id);
    for (int d = 0; d < grammar_n_discourse(); d++)
        snprintf(stats->template_id[lx.n_tpls + d], 32, "g.%s", grammar_discourse_name(d));
    stats->n_nouns = lx.n_nouns;
    stats->n_adjectives = lx.n_adjs;
    stats->n_verbs = lx.n_verbs;
    stats->n_names = lx.n_names;
    if (bind_lessons(&g, lesson_b) || setup_frames(&g) || build_forms(&g)) goto cleanup;
    count_combinations(&g);
    if (generate_pairs(&g, &train, &held, &frames, lesson_b) || write_vocab(&g, &voc)) goto cleanup;
    if (write_file(o->out_dir, "train.tsv", train.buf ? train.buf : "", train.len, err, errlen) ||
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
    free(g.pinned);
    free(g.frame_held);
    free(g.noun_uses);
    free(g.forms);
    set_free(&g.vocab);
    lexicon_free(&lx);
    return rc;
}

/* --------------------------------------------------------------- reading -- */

static void pair_free(CorpusPair *p) {
    for (int i = 0; i < p->n_src; i++) free(p->src[i]);
    for (int i = 0; i < p->n_tgt; i++) free(p->tgt[i]);
    free(p->src); free(p->tgt); free(p->align); free(p->coref); free(p->template_id);
    memset(p, 0, sizeof *p);
}

void corpus_free(Corpus *c) {
    if (!c) return;
    for (int i = 0; i < c->n; i++) pair_free(&c->pairs[i]);
    free(c->pairs);
    c->pairs = NULL;
    c->n = 0;
}

/* Splits s at single spaces into fresh strings. */
static int split_tokens(const char *s, char ***out, int *n) {
    *out = NULL;
    *n = 0;
    int cap = 0;
    while (*s) {
        const char *e = strchr(s, ' ');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (!len) return -1;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **p = realloc(*out, (size_t)cap * sizeof *p);
            if (!p) return -1;
            *out = p;
        }
        if (!((*out)[*n] = strndup(s, len))) return -1;
        (*n)++;
        s += len;
        if (*s == ' ' && !*++s) return -1;
    }
    return *n ? 0 : -1;
}

/* Parses "a-b a-b" (or "-") into pairs checked against limits. */
static int parse_pairs(const char *s, int **out, int *n, int lim0, int lim1) {
    *out = NULL;
    *n = 0;
    if (!strcmp(s, "-")) return 0;
    int cap = 0;
    while (*s) {
        char *e;
        long a = strtol(s, &e, 10);
        if (e == s || *e != '-') return -1;
        s = e + 1;
        long b = strtol(s, &e, 10);
        if (e == s || (*e && *e != ' ')) return -1;
        if (a < 0 || a >= lim0 || b < 0 || b >= lim1) return -1;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            int *p = realloc(*out, (size_t)cap * 2 * sizeof *p);
            if (!p) return -1;
            *out = p;
        }
        (*out)[2 * *n] = (int)a;
        (*out)[2 * *n + 1] = (int)b;
        (*n)++;
        s = *e ? e + 1 : e;
    }
    return 0;
}

int corpus_read_tsv(Corpus *c, const char *path, char *err, size_t errlen) {
    c->n = 0;
    c->pairs = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return errmsg_set(err, errlen, "cannot open %s: %s (run attnviz corpus first)", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int ln = 0, pcap = 0, rc = 0;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) {
        ln++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (!len) continue;
        if (tokenizer_check_utf8(line, (size_t)len, NULL, 0)) { rc = errmsg_set(err, errlen, "%s:%d: invalid UTF-8", path, ln); break; }
        char *col[7];
        int nc = 0;
        char *p = line;
        while (nc < 7) {
            col[nc++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = 0;
            p = tab + 1;
        }
        if (nc != 6) { rc = errmsg_set(err, errlen, "%s:%d: expected 6 tab-separated columns, got %d", path, ln, nc); break; }
        if (c->n == pcap) {
            pcap = pcap ? 2 * pcap : 1024;
            CorpusPair *np = realloc(c->pairs, (size_t)pcap * sizeof *np);
            if (!np) { rc = errmsg_set(err, errlen, "out of memory"); break; }
            c->pairs = np;
        }
        CorpusPair *pr = &c->pairs[c->n++];
        memset(pr, 0, sizeof *pr);
        if (!strcmp(col[0], "fr")) pr->lang = CORPUS_LANG_FR;
        else if (!strcmp(col[0], "vi")) pr->lang = CORPUS_LANG_VI;
        else { rc = errmsg_set(err, errlen, "%s:%d: language \"%s\" is neither fr nor vi", path, ln, col[0]); break; }
        if (split_tokens(col[1], &pr->src, &pr->n_src)) { rc = errmsg_set(err, errlen, "%s:%d: bad source column", path, ln); break; }
        if (split_tokens(col[2], &pr->tgt, &pr->n_tgt)) { rc = errmsg_set(err, errlen, "%s:%d: bad target column", path, ln); break; }
        if (parse_pairs(col[3], &pr->align, &pr->n_align, pr->n_tgt, pr->n_src)) {
            rc = errmsg_set(err, errlen, "%s:%d: bad alignment \"%s\" (t-s pairs within the sentences)", path, ln, col[3]);
            break;
        }
        if (parse_pairs(col[4], &pr->coref, &pr->n_coref, pr->n_src, pr->n_src)) {
            rc = errmsg_set(err, errlen, "%s:%d: bad coref \"%s\" (p-a pairs of source indices)", path, ln, col[4]);
            break;
        }
        if (!(pr->template_id = strdup(col[5]))) { rc = errmsg_set(err, errlen, "out of memory"); break; }
    }
    free(line);
    fclose(f);
    if (rc) corpus_free(c);
    return rc;
}
