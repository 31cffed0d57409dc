/* lexicon.h — the corpus lexicon: nouns, adjectives, verbs and names of
 * samples/corpus/ (format in samples/corpus/README.md), read into one Lexicon
 * that the template expander (templates.c) and the grammar (grammar.c) share.
 *
 * lexicon_read_words reads nouns.txt, adjectives.txt, verbs.txt and names.txt
 * of a folder and checks them: every entry has its three languages and a
 * French gender, verbs have their 14 columns, a name is not also a word of the
 * lexicon.  Errors: -1 and "FILE:LINE: message" in err; nothing exits.
 * Ownership: the Lexicon owns every string; lexicon_free_words releases the
 * word lists (tpl_free, templates.h, frees the templates first, then calls it).
 * The line reader, class parser and French contractions are shared with
 * templates.c. */
#ifndef ATTNVIZ_LEXICON_H
#define ATTNVIZ_LEXICON_H
#include <stddef.h>
#include <stdint.h>

#define LEX_MAX_CLASSES 64
typedef uint64_t ClassMask;

enum { L_EN = 0, L_FR = 1, L_VI = 2, N_LANG = 3 };

typedef struct {
    char *en[2], *fr[2], *vi;   /* [0] singular, [1] plural; NULL = none */
    int fem, human, neutral;    /* neutral: a person English calls he or she */
    ClassMask classes;
} Noun;

typedef struct {
    char *en, *fr[4], *vi;      /* fr: m, f, mp, fp */
    int pre;                    /* French adjective before the noun (class pre) */
    ClassMask classes;
} Adj;

enum { VF_INTR = 1, VF_TR = 2, VF_DITR = 4, VF_DEST = 8 };
typedef struct {
    char *en_base, *en_3s, *en_past, *fr_inf, *fr_pres[6], *fr_pp, *fr_fut, *vi;
    char *en_prep, *fr_prep, *vi_prep;   /* NULL = none */
    int fr_etre;                /* fr_aux e: passé composé with être */
    int frames;                 /* VF_* bits */
    ClassMask s, o, r, d;       /* subject, object, recipient, destination classes (0 = any) */
    ClassMask classes;          /* template classes (cross, perceive, carry, handle) */
} Verb;

enum { NAME_M = 0, NAME_F = 1, NAME_CITY = 2 };
typedef struct {
    char *name;
    int kind;
} Name;

struct Word;
struct Template;
struct Lesson;

typedef struct {
    char *class_name[LEX_MAX_CLASSES];
    int n_classes;
    Noun *nouns; int n_nouns;
    Adj *adjs; int n_adjs;
    Verb *verbs; int n_verbs;
    Name *names; int n_names;
    struct Word *words; int n_words;          /* templates.c: words.txt      */
    struct Template *tpls; int n_tpls;        /* templates.c: templates.txt  */
    struct Lesson *lessons; int n_lessons;    /* templates.c: lesson lines   */
} Lexicon;

/* Where a line came from, for "FILE:LINE: message". */
typedef struct {
    const char *path;
    int line;
    char *err;
    size_t errlen;
} LexSrc;

int lex_src_err(const LexSrc *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
typedef int (*LexLineFn)(Lexicon *lx, char **f, int nf, const LexSrc *s);
/* Calls fn for every non-comment line of DIR/NAME, split into fields. */
int lex_read_lines(Lexicon *lx, const char *dir, const char *name, LexLineFn fn, char *err, size_t errlen);
/* "a,b" or "a|b" → mask; unknown names are added (strict = 0) or an error (strict = 1). */
int lex_parse_classes(Lexicon *lx, const char *list, const LexSrc *s, ClassMask *mask, int strict);
int lex_class_bit(const Lexicon *lx, const char *name, ClassMask *bit);   /* -1 if unknown */
/* Grows an array by 64 zeroed elements when n is a multiple of 64. */
int lex_grow(void **arr, int n, size_t elem);

/* Reads nouns, adjectives, verbs (and names.txt when present) of dir. */
int lexicon_read_words(Lexicon *lx, const char *dir, char *err, size_t errlen);
void lexicon_free_words(Lexicon *lx);

/* Is w a name of names.txt?  Index or -1. */
int lexicon_find_name(const Lexicon *lx, const char *w);

/* The French contraction of tokens a b (à le → au, à les → aux, de le → du,
 * de les → des), or NULL when they do not contract: the one table the
 * grammar's and the templates' French orthography share. */
const char *lexicon_fr_contraction(const char *a, const char *b);

#endif
