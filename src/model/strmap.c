/* strmap.c — see strmap.h. */
#include "model/strmap.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static int slot_of(const StrMap *m, const char *key, size_t len) {
    uint32_t i = hash(key, len) & (uint32_t)(m->cap - 1);
    while (m->keys[i] && (strncmp(m->keys[i], key, len) != 0 || m->keys[i][len] != '\0'))
        i = (i + 1) & (uint32_t)(m->cap - 1);
    return (int)i;
}

static int grow(StrMap *m) {
    StrMap g = {0};
    g.cap = m->cap ? m->cap * 2 : 1024;
    g.keys = calloc((size_t)g.cap, sizeof *g.keys);
    g.vals = calloc((size_t)g.cap, sizeof *g.vals);
    if (!g.keys || !g.vals) { free(g.keys); free(g.vals); return -1; }
    for (int i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            int s = slot_of(&g, m->keys[i], strlen(m->keys[i]));
            g.keys[s] = m->keys[i];
            g.vals[s] = m->vals[i];
        }
    g.n = m->n;
    free(m->keys); free(m->vals);
    *m = g;
    return 0;
}

int strmap_put(StrMap *m, const char *key, size_t len, int val) {
    if ((m->n + 1) * 2 > m->cap && grow(m) != 0) return -1;
    int s = slot_of(m, key, len);
    if (!m->keys[s]) {
        char *k = malloc(len + 1);
        if (!k) return -1;
        memcpy(k, key, len);
        k[len] = '\0';
        m->keys[s] = k;
        m->n++;
    }
    m->vals[s] = val;
    return 0;
}

int strmap_get(const StrMap *m, const char *key, size_t len) {
    if (!m->cap) return -1;
    int s = slot_of(m, key, len);
    return m->keys[s] ? m->vals[s] : -1;
}

void strmap_free(StrMap *m) {
    if (!m) return;
    for (int i = 0; i < m->cap; i++) free(m->keys ? m->keys[i] : NULL);
    free(m->keys); free(m->vals);
    memset(m, 0, sizeof *m);
}
