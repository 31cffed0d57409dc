/* tokjson_text.h — text for the tokenizer.json reader (part of
 * tokenize/tokjson.h): the look-ups its readers make in the file's JSON tree
 * (cJSON's) and their one-line messages "FILE: WHERE: what is wrong"; UTF-8
 * text whose every byte remembers the input bytes it came from (TjStr), the
 * Unicode classes of the tokenizers library, GPT-2's byte-to-character map,
 * patterns (a string or an Oniguruma regex run by PCRE2) and the normalizers.
 * Every *_parse reads one JSON object into a zeroed struct (0, or -1 with a
 * message naming the file and the field); every *_free accepts a zeroed or
 * half-built one.  Functions that run on text return 0, or -1 when memory ran
 * out, a pattern gave up or a part grew the text too much; they say which in
 * a TjWhy (may be NULL) and the caller writes the message (tj_why_say). */
#ifndef ATTNVIZ_TOKJSON_TEXT_H
#define ATTNVIZ_TOKJSON_TEXT_H
#define PCRE2_CODE_UNIT_WIDTH 8
#include <cJSON.h>
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the file's JSON ---- */

typedef struct {
    const char *file;    /* the file's name, for messages */
    char *err;
    size_t errlen;
} TjCtx;

/* Member key of object o (NULL when absent, JSON null, or o no object). */
const cJSON *tj_get(const cJSON *o, const char *key);
/* "FILE: WHERE: message" into the context's buffer; returns -1. */
int tj_fail(const TjCtx *c, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A boolean member: dflt when absent or null, -1 when not a boolean. */
int tj_bool(const cJSON *o, const char *key, int dflt);
/* The string of member key, or NULL (absent, null or not a string). */
const char *tj_str(const cJSON *o, const char *key);
/* A copy of s (NULL stays NULL); *bad = 1 when memory ran out. */
char *tj_dup(const char *s, int *bad);

typedef struct { int start, end; } TjSpan;   /* bytes [start, end) of the input */

/* A text transform's bounds: a normalizer or pre-tokenizer (one, or a whole
 * Sequence) may make a text at most TJ_GROWTH times longer, plus
 * TJ_GROWTH_SLACK bytes (a prepended "▁" on one character, a compatibility
 * decomposition of U+FDFA), and never longer than TJ_TEXT_MAX bytes.  Every
 * real tokenizer stays far below (Metaspace's "▁" for " " is 3x); five nested
 * Replace normalizers that each multiply the text by 1000 would otherwise
 * take all memory. */
#define TJ_GROWTH 8
#define TJ_GROWTH_SLACK 256
#define TJ_TEXT_MAX (64 << 20)

/* Why running a part of the file on text failed. */
enum { TJ_WHY_MEMORY, TJ_WHY_MATCH_LIMIT, TJ_WHY_GROWTH };
typedef struct {
    int kind;            /* TJ_WHY_*                                        */
    const char *where;   /* the part ("normalizer.normalizers[2]"), or NULL */
    long from, to;       /* TJ_WHY_GROWTH: the text's bytes before and after */
} TjWhy;
/* The one-line reason ("WHERE: …") into err; returns -1. */
int tj_why_say(const TjWhy *w, char *err, size_t errlen);
/* The largest length a chain may grow a text of n bytes to. */
long tj_growth_limit(long n);

/* UTF-8 text where every byte knows the input bytes it came from. */
typedef struct {
    char *s;        /* (n + 1) NUL-terminated            */
    TjSpan *al;     /* (n) per byte                      */
    int n, cap;
} TjStr;

/* Appends k bytes p, each aligned to sp. */
int tjstr_put(TjStr *t, const char *p, int k, TjSpan sp);
/* Appends code point c aligned to sp. */
int tjstr_put_cp(TjStr *t, int32_t c, TjSpan sp);
/* out = in[a, b) (out zeroed before). */
int tjstr_slice(TjStr *out, const TjStr *in, int a, int b);
/* The span of the character at bytes [i, i + k). */
TjSpan tjstr_span(const TjStr *t, int i, int k);
void tjstr_free(TjStr *t);

/* A list of pieces of text. */
typedef struct { TjStr *v; int n, cap; } TjList;
/* Moves *s into the list (s is zeroed). */
int tjlist_take(TjList *l, TjStr *s);
void tjlist_free(TjList *l);

/* Code point at s[i] (n bytes in all) into *c; its length in bytes. */
int tj_utf8_next(const char *s, int n, int i, int32_t *c);
/* 1 when s[0, n) is valid UTF-8. */
int tj_utf8_valid(const char *s, size_t n);
/* The one code point of a one-character string, or -1. */
int32_t tj_one_char(const char *s);

/* ---- Unicode classes, as Rust's char and the tokenizers library say ---- */
int tj_is_space(int32_t c);      /* char::is_whitespace (White_Space)         */
int tj_is_punct(int32_t c);      /* ASCII punctuation or categories P*        */
int tj_is_digit(int32_t c);      /* char::is_numeric: categories N*           */
int tj_is_word(int32_t c);       /* regex \w: letters, marks, digits, Pc      */
/* ---- and as transformers' BertTokenizer (Python) says, Unicode of today ---- */
int tj_py_is_space(int32_t c);   /* str.isspace()                             */
int tj_py_is_punct(int32_t c);   /* ASCII punctuation or categories P*        */

/* ---- GPT-2's byte-to-character map ---- */
int32_t tj_byte_char(int b);     /* byte → its printable code point          */
int tj_char_byte(int32_t c);     /* code point → byte, or -1                 */

/* ---- patterns: {"String": s} or {"Regex": r} ---- */

typedef struct {
    char *lit;           /* String: the literal (NULL for a regex) */
    pcre2_code *re;      /* Regex: compiled with UTF, UCP          */
} TjPattern;

typedef struct { TjSpan *v; int n, cap; } TjSpans;

int tj_pattern_parse(TjPattern *p, const cJSON *j, const char *where, const TjCtx *c);
/* Compiles an Oniguruma pattern (\w, \W, \s rewritten to its classes). */
int tj_pattern_regex(TjPattern *p, const char *onig, const char *where, const TjCtx *c);
/* Every match in s[0, n), left to right, as Oniguruma's find_iter gives
 * them (an empty match right after the previous one skipped).  A regex has a
 * budget of PCRE2 steps for the text (1 million + 256 a byte, tokjson_text.c):
 * past it, -1 with why->kind TJ_WHY_MATCH_LIMIT. */
int tj_pattern_find(const TjPattern *p, const char *s, int n, TjSpans *out, TjWhy *why);
void tj_pattern_free(TjPattern *p);
int tjspans_add(TjSpans *l, int a, int b);

/* ---- normalizers ---- */

enum {
    TJ_NORM_NFC, TJ_NORM_NFD, TJ_NORM_NFKC, TJ_NORM_NFKD, TJ_NORM_LOWERCASE, TJ_NORM_STRIP_ACCENTS,
    TJ_NORM_BERT, TJ_NORM_REPLACE, TJ_NORM_PREPEND, TJ_NORM_STRIP, TJ_NORM_BYTE_LEVEL, TJ_NORM_SEQUENCE
};

typedef struct TjNorm {
    int kind;
    int clean, chinese, strip_accents, lowercase;   /* BertNormalizer        */
    int python;          /* BertNormalizer as transformers' BertTokenizer */
                         /* (Python) runs it, for a vocab.txt: NFC first, */
                         /* str.lower before the accents, today's tables  */
    int left, right;                                /* Strip                 */
    TjPattern pat;                                  /* Replace               */
    char *content;                                  /* Replace, Prepend      */
    struct TjNorm *sub;                             /* (n_sub) Sequence      */
    int n_sub;
    char *where;         /* its place in the file, for messages: "normalizer" */
} TjNorm;

int tj_norm_parse(TjNorm *nm, const cJSON *j, const char *where, const TjCtx *c);
/* Replaces *s by its normalized form; refused (TJ_WHY_GROWTH) when it would
 * grow past tj_growth_limit of its length. */
int tj_norm_apply(const TjNorm *nm, TjStr *s, TjWhy *why);
void tj_norm_free(TjNorm *nm);

#endif
