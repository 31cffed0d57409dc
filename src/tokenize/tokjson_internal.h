/* tokjson_internal.h — the parts of the tokenizer.json reader (tokjson.h),
 * shared by its files:
 *   tokjson.c         loading the file, added tokens, the encode driver, the
 *                     post-processor, the public calls;
 *   tokjson_text.c    text that remembers where each byte came from (TjStr),
 *                     Unicode classes, patterns (string or regex), normalizers;
 *   tokjson_pretok.c  split behaviours and the pre-tokenizers;
 *   tokjson_model.c   BPE, WordPiece, WordLevel;
 *   tokjson_decode.c  the decoders.
 * Every *_parse reads one JSON object into a zeroed struct (0, or -1 with a
 * message naming the file and the field); every *_free accepts a zeroed or
 * half-built one.  Functions that run on text return 0, or -1 when memory ran
 * out (the caller writes the message). */
#ifndef ATTNVIZ_TOKJSON_INTERNAL_H
#define ATTNVIZ_TOKJSON_INTERNAL_H
#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenize/tokjson.h"
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

/* ---- JSON (tokjson_json.c) ---- */

enum { TJ_JSON_NULL, TJ_JSON_FALSE, TJ_JSON_TRUE, TJ_JSON_NUMBER, TJ_JSON_STRING, TJ_JSON_ARRAY, TJ_JSON_OBJECT };
#define TJ_JSON_DEPTH 200

/* One value; an array's items and an object's members are a list from
 * child along next (members carry their key in string). */
typedef struct TjJson {
    int type;                  /* TJ_JSON_*                                  */
    int size;                  /* items or members                           */
    struct TjJson *child, *next;
    const char *string;        /* the key, for an object's member; else NULL */
    const char *valuestring;   /* TJ_JSON_STRING                             */
    double valuedouble;        /* TJ_JSON_NUMBER                             */
} TjJson;

typedef struct TjJsonDoc TjJsonDoc;

/* The tree of text[0, len).  NULL when it is not JSON (*fail_at: the byte
 * where reading stopped, (size_t)-1 out of memory). */
TjJsonDoc *tj_json_parse(const char *text, size_t len, size_t *fail_at);
const TjJson *tj_json_root(const TjJsonDoc *d);
void tj_json_free(TjJsonDoc *d);
/* Member key of object o (NULL when absent, JSON null, or o no object). */
const TjJson *tj_get(const TjJson *o, const char *key);
static inline int tj_is(const TjJson *j, int type) { return j && j->type == type; }
static inline int tj_size(const TjJson *j) { return j ? j->size : 0; }

/* ---- loading: where a message points ---- */

typedef struct {
    const char *file;    /* the tokenizer.json's name      */
    char *err;
    size_t errlen;
} TjCtx;

/* "FILE: WHERE: message" into the context's buffer; returns -1. */
int tj_fail(const TjCtx *c, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A boolean member: dflt when absent or null, -1 when not a boolean. */
int tj_bool(const TjJson *o, const char *key, int dflt);
/* The string of member key, or NULL (absent, null or not a string). */
const char *tj_str(const TjJson *o, const char *key);
/* A copy of s (NULL stays NULL); *bad = 1 when memory ran out. */
char *tj_dup(const char *s, int *bad);
/* The one code point of a one-character string, or -1. */
int32_t tj_one_char(const char *s);

/* ---- text with alignments ---- */

typedef struct { int start, end; } TjSpan;   /* bytes [start, end) of the input */

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

/* ---- Unicode classes, as Rust's char and the tokenizers library say ---- */
int tj_is_space(int32_t c);      /* char::is_whitespace (White_Space)         */
int tj_is_punct(int32_t c);      /* ASCII punctuation or categories P*        */
int tj_is_digit(int32_t c);      /* char::is_numeric: categories N*           */
int tj_is_word(int32_t c);       /* regex \w: letters, marks, digits, Pc      */

/* ---- GPT-2's byte-to-character map ---- */
int32_t tj_byte_char(int b);     /* byte → its printable code point          */
int tj_char_byte(int32_t c);     /* code point → byte, or -1                 */

/* ---- patterns: {"String": s} or {"Regex": r} ---- */

typedef struct {
    char *lit;           /* String: the literal (NULL for a regex) */
    pcre2_code *re;      /* Regex: compiled with UTF, UCP          */
} TjPattern;

typedef struct { TjSpan *v; int n, cap; } TjSpans;

int tj_pattern_parse(TjPattern *p, const TjJson *j, const char *where, const TjCtx *c);
/* Compiles an Oniguruma pattern (\w, \W, \s rewritten to its classes). */
int tj_pattern_regex(TjPattern *p, const char *onig, const char *where, const TjCtx *c);
/* Every match in s[0, n), left to right, as Oniguruma's find_iter gives
 * them (an empty match right after the previous one skipped). */
int tj_pattern_find(const TjPattern *p, const char *s, int n, TjSpans *out);
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
    int left, right;                                /* Strip                 */
    TjPattern pat;                                  /* Replace               */
    char *content;                                  /* Replace, Prepend      */
    struct TjNorm *sub;                             /* (n_sub) Sequence      */
    int n_sub;
} TjNorm;

int tj_norm_parse(TjNorm *nm, const TjJson *j, const char *where, const TjCtx *c);
/* Replaces *s by its normalized form. */
int tj_norm_apply(const TjNorm *nm, TjStr *s);
void tj_norm_free(TjNorm *nm);

/* ---- pre-tokenizers ---- */

enum { TJ_SPLIT_REMOVED, TJ_SPLIT_ISOLATED, TJ_SPLIT_MERGED_PREV, TJ_SPLIT_MERGED_NEXT, TJ_SPLIT_CONTIGUOUS };
enum {
    TJ_PRE_BYTE_LEVEL, TJ_PRE_SPLIT, TJ_PRE_WHITESPACE, TJ_PRE_WHITESPACE_SPLIT, TJ_PRE_BERT, TJ_PRE_METASPACE,
    TJ_PRE_PUNCTUATION, TJ_PRE_DIGITS, TJ_PRE_CHAR_DELIMITER, TJ_PRE_SEQUENCE
};
enum { TJ_PREPEND_ALWAYS, TJ_PREPEND_FIRST, TJ_PREPEND_NEVER };

typedef struct TjPre {
    int kind;
    int add_prefix_space, use_regex;     /* ByteLevel                          */
    TjPattern pat;                       /* Split, Whitespace, ByteLevel regex */
    int behavior, invert;                /* Split, Punctuation                 */
    int32_t repl;                        /* Metaspace's replacement            */
    int prepend, split;                  /* Metaspace: TJ_PREPEND_*, split      */
    int individual;                      /* Digits                             */
    int32_t delim;                       /* CharDelimiterSplit                 */
    struct TjPre *sub;                   /* (n_sub) Sequence                   */
    int n_sub;
} TjPre;

int tj_pre_parse(TjPre *p, const TjJson *j, const char *where, const TjCtx *c);
/* Replaces the pieces by their pre-tokens. */
int tj_pre_apply(const TjPre *p, TjList *pieces);
void tj_pre_free(TjPre *p);

/* ---- models ---- */

enum { TJ_MODEL_BPE, TJ_MODEL_WORDPIECE, TJ_MODEL_WORDLEVEL };

/* (left id, right id) → merge rank and the merged token's id. */
typedef struct {
    uint64_t *key;       /* (cap) left << 32 | right, UINT64_MAX = empty */
    int *rank, *id;      /* (cap)                                        */
    int cap, n;
} TjMerges;

/* token → id: every token in one block of text, slots of 16 bytes (one
 * cache line holds four), so the 150,000 look-ups of loading stay fast. */
typedef struct {
    char *text;                /* (used) the tokens, each NUL-terminated      */
    size_t used, room;
    struct TjSlot { uint32_t hash, len, off; int id; } *slot;   /* (cap); id -1 empty */
    int cap, n;
} TjVocab;

/* Sets token s[0, n) → id (replacing an earlier id).  0, or -1 out of memory. */
int tjvocab_put(TjVocab *v, const char *s, size_t n, int id);
/* The id of s[0, n), or -1. */
int tjvocab_get(const TjVocab *v, const char *s, size_t n);
/* The stored copy of s[0, n), or NULL (valid until the next put). */
const char *tjvocab_key(const TjVocab *v, const char *s, size_t n);
void tjvocab_free(TjVocab *v);

typedef struct {
    int kind;
    TjVocab vocab;             /* token → id                                  */
    const char **tok;          /* (n_ids) id → token (the map's copy) or NULL */
    int n_ids;                 /* largest id + 1                              */
    int unk;                   /* unk_token's id, -1 when none or not in vocab */
    char *unk_token;           /* NULL when none                              */
    char *prefix, *suffix;     /* continuing_subword_prefix, end_of_word_suffix */
    int fuse_unk, byte_fallback, ignore_merges;
    int max_chars;             /* WordPiece: longer words are unk             */
    TjMerges merges;
    int byte_id[256];          /* BPE byte_fallback: id of "<0xAB>", or -1    */
} TjModel;

typedef struct { int id, start, end; } TjTok;   /* bytes of the pre-token */
typedef struct { TjTok *v; int n, cap; } TjToks;

int tj_model_parse(TjModel *m, const TjJson *j, const TjCtx *c);
/* The tokens of one pre-token s[0, n), appended to out.  0, or -1 with err. */
int tj_model_tokenize(const TjModel *m, const char *s, int n, TjToks *out, char *err, size_t errlen);
void tj_model_free(TjModel *m);
int tjtoks_add(TjToks *l, int id, int start, int end);

/* ---- decoders ---- */

enum {
    TJ_DEC_BYTE_LEVEL, TJ_DEC_METASPACE, TJ_DEC_WORDPIECE, TJ_DEC_BYTE_FALLBACK, TJ_DEC_FUSE, TJ_DEC_STRIP,
    TJ_DEC_REPLACE, TJ_DEC_BPE, TJ_DEC_SEQUENCE
};

typedef struct TjDec {
    int kind;
    char *text;                /* WordPiece prefix, BPEDecoder suffix, Replace content */
    int cleanup;               /* WordPiece                                    */
    int32_t ch;                /* Metaspace replacement, Strip content         */
    int prepend_never;         /* Metaspace                                    */
    int start, stop;           /* Strip                                        */
    TjPattern pat;             /* Replace                                      */
    struct TjDec *sub;         /* (n_sub) Sequence                             */
    int n_sub;
} TjDec;

/* A list of token strings being decoded (each malloc'd). */
typedef struct { char **v; int n, cap; } TjWords;

int tj_dec_parse(TjDec *d, const TjJson *j, const char *where, const TjCtx *c);
/* Replaces the strings by the decoder's output. */
int tj_dec_apply(const TjDec *d, TjWords *w);
void tj_dec_free(TjDec *d);
int tjwords_add(TjWords *w, char *s);   /* takes s; frees it on failure */
void tjwords_free(TjWords *w);

#endif
