/* templates.c — the lesson's templates: reading words.txt and templates.txt,
 * drawing slot values, rendering sentences (see templates.h and
 * samples/corpus/README.md). */
#include "corpus/templates.h"
#include "core/errmsg.h"
#include "core/rng.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const lang_name[N_LANG] = { "en", "fr", "vi" };

/* --------------------------------------------------------------- reading -- */

void tpl_free(Lexicon *lx) {
    if (!lx) return;
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
    if (nf - 2 > TPL_MAX_CODES) return lex_src_err(s, "more than %d forms", TPL_MAX_CODES);
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
    if (t->n_slots == TPL_MAX_SLOTS) return lex_src_err(s, "more than %d slots", TPL_MAX_SLOTS);
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
    if (t->n_toks[lang] == TPL_MAX_TOKS) return lex_src_err(s, "more than %d tokens", TPL_MAX_TOKS);
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
        if (lx->n_tpls == TPL_MAX_TEMPLATES) return lex_src_err(s, "more than %d templates", TPL_MAX_TEMPLATES);
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
        if (lx->n_lessons == TPL_MAX_LESSONS) return lex_src_err(s, "more than %d lessons", TPL_MAX_LESSONS);
        if (!lx->lessons && !(lx->lessons = calloc(TPL_MAX_LESSONS, sizeof *lx->lessons))) return lex_src_err(s, "out of memory");
        Lesson *ls = &lx->lessons[lx->n_lessons++];
        ls->tpl = -1;
        for (int i = 0; i < lx->n_tpls; i++)
            if (!strcmp(lx->tpls[i].id, f[1])) ls->tpl = i;
        if (ls->tpl < 0) return lex_src_err(s, "lesson names unknown template %s", f[1]);
        for (int i = 2; i < nf; i++) {
            char *eq = strchr(f[i], '=');
            if (!eq || ls->n == TPL_MAX_SLOTS) return lex_src_err(s, "lesson binding \"%s\" is not SLOT=value", f[i]);
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
        if (t->n_slots == TPL_MAX_SLOTS) return lex_src_err(s, "more than %d slots", TPL_MAX_SLOTS);
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
            if (nf - 3 > TPL_MAX_CODES) return lex_src_err(s, "too many codes");
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

int tpl_load(Lexicon *lx, const char *dir, char *err, size_t errlen) {
    memset(lx, 0, sizeof *lx);
    if (lexicon_read_words(lx, dir, err, errlen) ||
        lex_read_lines(lx, dir, "words.txt", word_line, err, errlen) ||
        lex_read_lines(lx, dir, "templates.txt", tpl_line, err, errlen) ||
        check_templates(lx, dir, err, errlen) || check_names(lx, dir, err, errlen)) {
        tpl_free(lx);
        return -1;
    }
    if (!lx->n_nouns || !lx->n_adjs || !lx->n_tpls) {
        tpl_free(lx);
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

int tpl_sample(const Lexicon *lx, const Template *t, int mode, const CorpusSplits *sp, uint64_t *rng, Bind *b) {
    int cand[1024];
    /* Drawn once, before the rejection loop, so that they stay balanced:
     * which candidate the pronoun refers to, and same or different gender. */
    int opt[2] = { 0, 0 };
    for (int r = 0; r < t->n_refs; r++) opt[r] = rng_splitmix_below(rng, t->refs[r].n);
    int want_same_gender = rng_splitmix_below(rng, 2);
    for (int attempt = 0; attempt < 4000; attempt++) {
        memset(b, 0, sizeof(Bind) * TPL_MAX_SLOTS);
        int forced_pl[TPL_MAX_SLOTS];
        for (int k = 0; k < TPL_MAX_SLOTS; k++) forced_pl[k] = -1;
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
            int h = splits_template_heldout(sp, b[t->heldout[0]].idx, b[t->heldout[1]].idx, b[t->heldout[2]].idx);
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

/* Appends s split at '_' (one token per piece); "-" or "" adds nothing. */
static int push(Rendered *r, const char *s, const char *key, int from_slot, int ctrl) {
    if (!s || !*s || !strcmp(s, "-")) return 0;
    while (*s) {
        const char *u = strchr(s, '_');
        size_t len = u ? (size_t)(u - s) : strlen(s);
        if (r->n == TPL_MAX_TOKS || len == 0 || len > TOKENIZER_MAX_TOKEN_BYTES) return -1;
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

int tpl_render(const Lexicon *lx, const Template *t, const Bind *b, int lang, Rendered *r, char *err, size_t errlen) {
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
                           t->id, TPL_MAX_TOKS, s ? s : "");
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
        if (!have && dst->n_keys < TPL_MAX_KEYS) dst->key[dst->n_keys++] = src->key[i];
    }
}

void tpl_fr_orthography(Rendered *r) {
    static const char *const el[][2] = { { "le", "l'" }, { "la", "l'" }, { "ne", "n'" }, { "que", "qu'" },
        { "de", "d'" }, { "je", "j'" }, { "se", "s'" }, { "ce", "c'" }, { "me", "m'" }, { "te", "t'" } };
    for (int i = 0; i + 1 < r->n; i++)
        for (size_t k = 0; k < sizeof el / sizeof *el; k++)
            if (!strcmp(r->tok[i].s, el[k][0]) && fr_elides(r->tok[i + 1].s)) {
                snprintf(r->tok[i].s, sizeof r->tok[i].s, "%s", el[k][1]);
                break;
            }
    for (int i = 0; i + 1 < r->n; i++) {
        const char *c = lexicon_fr_contraction(r->tok[i].s, r->tok[i + 1].s);
        if (!c) continue;
        snprintf(r->tok[i].s, sizeof r->tok[i].s, "%s", c);
        merge_keys(&r->tok[i], &r->tok[i + 1]);
        memmove(&r->tok[i + 1], &r->tok[i + 2], (size_t)(r->n - i - 2) * sizeof *r->tok);
        r->n--;
    }
}

/* --------------------------------------------------------------- lessons -- */

int tpl_lesson_bind(const Lexicon *lx, const Lesson *ls, Bind *b, char *err, size_t errlen) {
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

/* ------------------------------------------------------ drawing, counting -- */

int tpl_pick(const Lexicon *lx, uint64_t *rng, int coref_only) {
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

void tpl_count_combinations(const Lexicon *lx, const CorpusSplits *sp, int *n, int *n_heldout) {
    *n = *n_heldout = 0;
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
                    (*n)++;
                    *n_heldout += splits_template_heldout(sp, i, j, a);
                }
            }
        }
    }
}

