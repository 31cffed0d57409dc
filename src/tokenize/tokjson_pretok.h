/* tokjson_pretok.h — the pre-tokenizers of tokenizer.json (part of
 * tokenize/tokjson.h): each normalized piece cut into the words the model
 * sees, with the library's five split behaviours.
 * Every *_parse reads one JSON object into a zeroed struct (0, or -1 with a
 * message naming the file and the field); every *_free accepts a zeroed or
 * half-built one.  Functions that run on text return 0, or -1 with the reason
 * in a TjWhy (the caller writes the message: tj_why_say). */
#ifndef ATTNVIZ_TOKJSON_PRETOK_H
#define ATTNVIZ_TOKJSON_PRETOK_H
#include "tokenize/tokjson_text.h"

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
    int python;                          /* BertPreTokenizer with transformers' */
                                         /* BertTokenizer's classes (vocab.txt) */
    int32_t delim;                       /* CharDelimiterSplit                 */
    struct TjPre *sub;                   /* (n_sub) Sequence                   */
    int n_sub;
    char *where;                         /* its place in the file: "pre_tokenizer" */
} TjPre;

int tj_pre_parse(TjPre *p, const cJSON *j, const char *where, const TjCtx *c);
/* GPT-2's own pre-tokenizer (vocab.json + merges.txt): ByteLevel without a
 * prefix space, its pattern compiled as PCRE2 reads it (UTF, UCP), as
 * OpenAI's encoder.py ran it, not rewritten to Oniguruma's classes. */
int tj_pre_gpt2(TjPre *p, const TjCtx *c);
/* Replaces the pieces by their pre-tokens; refused (TJ_WHY_GROWTH) when
 * their bytes would grow past tj_growth_limit of what they were. */
int tj_pre_apply(const TjPre *p, TjList *pieces, TjWhy *why);
void tj_pre_free(TjPre *p);

#endif
