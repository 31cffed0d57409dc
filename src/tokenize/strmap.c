/* strmap.c — see strmap.h. */
#include "tokenize/strmap.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash_of(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* The slot holding key (hash h), or the empty slot where it would go. */
static int slot_of(const StrMap *m, const char *key, size_t len, uint32_t h) {
    uint32_t i = h & (uint32_t)(m->cap - 1);
    while (m->keys[i] && (m->hash[i] != h || strncmp(m->keys[i], key, len) != 0 || m->keys[i][len] != '\0'))
        i = (i + 1) & (uint32_t)(m->cap - 1);
    return (int)i;
}

/* To cap slots (a power of two, above twice the keys held). */
static int grow_to(StrMap *m, int cap) {
    StrMap g = {0};
    g.cap = cap;
    g.keys = calloc((size_t)g.cap, sizeof *g.keys);
    g.vals = calloc((size_t)g.cap, sizeof *g.vals);
    g.hash = calloc((size_t)g.cap, sizeof *g.hash);
    if (!g.keys || !g.vals || !g.hash) { free(g.keys); free(g.vals); free(g.hash); return -1; }
    for (int i = 0; i < m->cap; i++) {
        if (!m->keys[i]) continue;
        uint32_t s = m->hash[i] & (uint32_t)(g.cap - 1);   /* keys are distinct: the first empty slot */
        while (g.keys[s]) s = (s + 1) & (uint32_t)(g.cap - 1);
        g.keys[s] = m->keys[i];
        g.vals[s] = m->vals[i];
        g.hash[s] = m->hash[i];
    }
    g.n = m->n;
    g.chunks = m->chunks;   /* the keys stay where they are */
    g.n_chunks = m->n_chunks;
    g.used = m->used;
    free(m->keys); free(m->vals); free(m->hash);
    *m = g;
    return 0;
}

static int grow(StrMap *m) { return m->cap > (1 << 29) ? -1 : grow_to(m, m->cap ? m->cap * 2 : 1024); }

#define CHUNK (64u * 1024u)

/* Room for n bytes of key storage.  NULL out of memory. */
static char *key_room(StrMap *m, size_t n) {
    if (!m->n_chunks || m->used + n > CHUNK) {
        char **nc = realloc(m->chunks, (size_t)(m->n_chunks + 1) * sizeof *nc);
        if (!nc) return NULL;
        m->chunks = nc;
        if (!(nc[m->n_chunks] = malloc(n > CHUNK ? n : CHUNK))) return NULL;
        m->n_chunks++;
        m->used = 0;
    }
    char *p = m->chunks[m->n_chunks - 1] + m->used;
    m->used += n > CHUNK ? CHUNK : n;   /* an oversized key fills its own chunk */
    return p;
}

const char *strmap_put_key(StrMap *m, const char *key, size_t len, int val) {
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0) return NULL;
    uint32_t h = hash_of(key, len);
    int s = slot_of(m, key, len, h);
    if (!m->keys[s]) {
        char *k = key_room(m, len + 1);
        if (!k) return NULL;
        memcpy(k, key, len);
        k[len] = '\0';
        m->keys[s] = k;
        m->hash[s] = h;
        m->n++;
    }
    m->vals[s] = val;
    return m->keys[s];
}

int strmap_put(StrMap *m, const char *key, size_t len, int val) {
    return strmap_put_key(m, key, len, val) ? 0 : -1;
}

int strmap_get(const StrMap *m, const char *key, size_t len) {
    if (!m->cap) return -1;
    int s = slot_of(m, key, len, hash_of(key, len));
    return m->keys[s] ? m->vals[s] : -1;
}

const char *strmap_key(const StrMap *m, const char *key, size_t len) {
    if (!m->cap) return NULL;
    return m->keys[slot_of(m, key, len, hash_of(key, len))];
}

void strmap_free(StrMap *m) {
    if (!m) return;
    for (int i = 0; i < m->n_chunks; i++) free(m->chunks[i]);
    free(m->chunks); free(m->keys); free(m->vals); free(m->hash);
    memset(m, 0, sizeof *m);
}
