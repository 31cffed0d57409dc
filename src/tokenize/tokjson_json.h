/* tokjson_json.h — the JSON of a tokenizer.json (part of tokenize/tokjson.h):
 * a tree read in one pass into a few large blocks (tokjson_json.c), the
 * look-ups the readers of its parts use, and their one-line messages
 * "FILE: WHERE: what is wrong".  A TjJsonDoc owns its nodes and strings;
 * tj_json_free accepts NULL. */
#ifndef ATTNVIZ_TOKJSON_JSON_H
#define ATTNVIZ_TOKJSON_JSON_H
#include <stddef.h>

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
/* 1 if j is a value of that type (TJ_JSON_*); 0 for NULL. */
int tj_is(const TjJson *j, int type);
/* Items or members of j; 0 for NULL. */
int tj_size(const TjJson *j);

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

#endif
