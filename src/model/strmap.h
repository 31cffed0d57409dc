/* strmap.h — string → int hash table (open addressing, FNV-1a), for the
 * vocabularies and merge ranks of the GPT-2 and BERT tokenizers.
 *
 * Keys are copied; lookups take a pointer and a length so a piece of a longer
 * string is looked up without copying.  strmap_free accepts a zeroed map. */
#ifndef ATTNVIZ_STRMAP_H
#define ATTNVIZ_STRMAP_H
#include <stddef.h>

typedef struct {
    char **keys;     /* cap slots, NULL = empty */
    int *vals;       /* cap values              */
    int cap, n;      /* cap a power of two      */
} StrMap;

/* Sets key → val (replacing an existing value).  0, or -1 out of memory. */
int strmap_put(StrMap *m, const char *key, size_t len, int val);
/* The value of key[0..len), or -1 when absent. */
int strmap_get(const StrMap *m, const char *key, size_t len);
void strmap_free(StrMap *m);

#endif
