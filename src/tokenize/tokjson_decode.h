/* tokjson_decode.h — the decoders of tokenizer.json (part of
 * tokenize/tokjson.h): token strings back to printable text.
 * Every *_parse reads one JSON object into a zeroed struct (0, or -1 with a
 * message naming the file and the field); every *_free accepts a zeroed or
 * half-built one.  Functions that run on text return 0, or -1 when memory ran
 * out or a pattern gave up (the caller writes the message). */
#ifndef ATTNVIZ_TOKJSON_DECODE_H
#define ATTNVIZ_TOKJSON_DECODE_H
#include "tokenize/tokjson_text.h"

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

int tj_dec_parse(TjDec *d, const cJSON *j, const char *where, const TjCtx *c);
/* Replaces the strings by the decoder's output. */
int tj_dec_apply(const TjDec *d, TjWords *w);
void tj_dec_free(TjDec *d);
int tjwords_add(TjWords *w, char *s);   /* takes s; frees it on failure */
void tjwords_free(TjWords *w);

#endif
