/* strmap.h — string → int hash table (open addressing, FNV-1a), for
 * llama2.c's pieces (tokenize/llama2c_tok.h) and the real corpus's words and
 * names (corpus/real.h); tokenizer.json's vocabulary has its own compact
 * table (TjVocab, tokenize/tokjson_model.h).
 *
 * Keys are copied into chunks of storage that never move (strmap_key gives
 * the stored copy, valid until strmap_free); lookups take a pointer and a
 * length so a piece of a longer string is looked up without copying.
 * strmap_free accepts a zeroed map. */
#ifndef ATTNVIZ_STRMAP_H
#define ATTNVIZ_STRMAP_H
#include <stddef.h>

typedef struct {
    char **keys;     /* cap slots, NULL = empty; keys live in chunks */
    int *vals;       /* cap values                                  */
    unsigned *hash;  /* cap hashes: compared before the keys        */
    int cap, n;      /* cap a power of two                          */
    char **chunks;   /* the keys' storage: never moves, freed whole */
    int n_chunks;
    size_t used;     /* bytes used in the last chunk                */
} StrMap;

/* Sets key → val (replacing an existing value).  0, or -1 out of memory. */
int strmap_put(StrMap *m, const char *key, size_t len, int val);
/* The same, giving the stored copy of the key (NULL out of memory): one lookup
 * where strmap_put + strmap_key took two. */
const char *strmap_put_key(StrMap *m, const char *key, size_t len, int val);
/* The value of key[0..len), or -1 when absent. */
int strmap_get(const StrMap *m, const char *key, size_t len);
/* The stored copy of key[0..len), or NULL when absent. */
const char *strmap_key(const StrMap *m, const char *key, size_t len);
void strmap_free(StrMap *m);

#endif
