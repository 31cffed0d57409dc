/* maps.c — see maps.h. */
#include "trace/maps.h"
#include <stdio.h>
#include <string.h>

int maps_is_special(const char *w) {
    size_t n = strlen(w);
    return n >= 3 && w[0] == '<' && w[n - 1] == '>';
}

int maps_strongest_link(const TraceMap *m, int h, int q, float *w) {
    int best = -1;
    float bw = -1;
    for (int j = 0; j < m->Tk; j++) {
        if (j == q || maps_is_special(m->keys[j])) continue;
        float x = m->heads[h].weights[(size_t)q * m->Tk + j];
        if (x > bw) { bw = x; best = j; }
    }
    *w = bw;
    return best;
}
