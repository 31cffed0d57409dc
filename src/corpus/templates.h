/* templates.h — the lesson's templates: words.txt and templates.txt of
 * samples/corpus/ (format in samples/corpus/README.md) read into the Lexicon
 * beside its word lists (lexicon.h), slot values drawn for a template,
 * sentences rendered from them in English, French and Vietnamese.
 *
 * tpl_load reads the whole lexicon of a folder: the word lists, words.txt,
 * templates.txt (templates and `lesson` lines), and checks what can only be
 * checked once a template is complete (every language line, every pronoun and
 * noun in the English, lesson slots) and that no name is also a word.
 * Deterministic: every draw comes from the caller's splitmix64 state.
 *
 * Ownership: the Lexicon owns every string; tpl_free releases the templates,
 * words and lessons, then the word lists (lexicon_free_words), and leaves it
 * zeroed.  Rendered tokens point into the Lexicon (keys) or are copied (text).
 * Errors: -1 with a one-line message in err ("FILE:LINE: ..." for data
 * errors); nothing exits. */
#ifndef ATTNVIZ_CORPUS_TEMPLATES_H
#define ATTNVIZ_CORPUS_TEMPLATES_H
#include "corpus/lexicon.h"
#include "corpus/splits.h"
#include "tokenize/tokenizer.h"
#include <stddef.h>
#include <stdint.h>

#define TPL_MAX_TEMPLATES 64
#define TPL_MAX_SLOTS 8
#define TPL_MAX_TOKS 40
#define TPL_MAX_KEYS 3
#define TPL_MAX_CODES 12
#define TPL_MAX_LESSONS 32

/* A word of words.txt: its forms by agreement code ("3s.f", "*"...). */
typedef struct Word {
    char *key;
    int lang;
    int n;
    char *code[TPL_MAX_CODES], *form[TPL_MAX_CODES];
} Word;

/* One token of a template's language line: a literal, a {SLOT...} or a {word:CTRL}. */
enum { TT_LIT, TT_SLOT, TT_WORD };
typedef struct {
    int kind;
    char *text;     /* literal, word key, or the slot's field ("" = main form) */
    int slot;       /* TT_SLOT: slot index                                     */
    int ctrl;       /* agreement controller slot, or -1                        */
    char *key;      /* alignment key                                           */
} TplTok;

/* A slot line (pronoun slots come from ref lines). */
enum { SK_NOUN, SK_ADJ, SK_VERB, SK_SUBJ, SK_PRON };
enum { NUM_SG = 0, NUM_PL = 1, NUM_ANY = 2 };
typedef struct {
    char name[8];
    int kind;
    ClassMask classes;
    int number;
    int describes;               /* adj: noun slot it must fit, or -1 */
    int n_codes;
    char code[TPL_MAX_CODES][8]; /* subj codes */
} Slot;

/* A ref line: which noun slot the pronoun refers to (decided by an adjective's class, or picked). */
typedef struct {
    int pron;                    /* slot index of the pronoun       */
    int by;                      /* adjective slot, or -1 = pick    */
    int n;
    ClassMask tag[4];
    int target[4];
} Ref;

/* A balance / differ line. */
enum { CON_BALANCE_GENDER, CON_DIFFER_NUMBER, CON_DIFFER_GENDER };
typedef struct { int kind, a, b; } Constraint;

/* One template of templates.txt. */
typedef struct Template {
    char id[32];
    int weight;
    int n_slots;
    Slot slots[TPL_MAX_SLOTS];
    int n_refs;
    Ref refs[2];
    int n_cons;
    Constraint cons[4];
    int heldout[3];              /* noun, noun, adj slots; [0] = -1 when none */
    int n_toks[N_LANG];
    TplTok toks[N_LANG][TPL_MAX_TOKS];
    int line;                    /* of its template line */
} Template;

/* A lesson line: a template with some slots bound by English words. */
typedef struct Lesson {
    int tpl;                     /* index into Lexicon.tpls */
    int n;
    char name[TPL_MAX_SLOTS][8];
    char value[TPL_MAX_SLOTS][32];
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
    const char *key[TPL_MAX_KEYS];
    int n_keys;
    int from_slot;    /* slot the token came from (TT_SLOT main form), or -1 */
    int ctrl;         /* controller of a TT_WORD token, or -1                */
} RTok;

/* A rendered sentence. */
typedef struct {
    RTok tok[TPL_MAX_TOKS];
    int n;
} Rendered;

/* Reads the lexicon of dir with its templates (above).  On -1, lx is freed. */
int  tpl_load(Lexicon *lx, const char *dir, char *err, size_t errlen);
void tpl_free(Lexicon *lx);
/* Index of a template drawn by weight (only those with a heldout line when
 * coref_only), or -1 when every weight is 0. */
int  tpl_pick(const Lexicon *lx, uint64_t *rng, int coref_only);
/* Samples slot values b[TPL_MAX_SLOTS] for template t.  mode: 0 train (no
 * held-out combination, splits.h), 1 held-out (only held-out combinations),
 * -1 ignore.  0, or -1 when no values satisfy t (after many tries). */
int  tpl_sample(const Lexicon *lx, const Template *t, int mode, const CorpusSplits *sp, uint64_t *rng, Bind *b);
/* Binds a lesson's SLOT=value list into b (unbound slots stay for tpl_sample
 * to fill) and its pronouns to the referent the adjective's meaning selects. */
int  tpl_lesson_bind(const Lexicon *lx, const Lesson *ls, Bind *b, char *err, size_t errlen);
/* Counts the coreference combinations of every template with a heldout line
 * and how many of them sp holds out. */
void tpl_count_combinations(const Lexicon *lx, const CorpusSplits *sp, int *n, int *n_heldout);
/* Renders template t with values b in language lang (L_EN, L_FR, L_VI). */
int  tpl_render(const Lexicon *lx, const Template *t, const Bind *b, int lang, Rendered *r, char *err, size_t errlen);
/* French orthography: elision (le → l', que → qu' before a vowel or mute h)
 * then contraction (à le → au, à les → aux, de le → du, de les → des). */
void tpl_fr_orthography(Rendered *r);

#endif
