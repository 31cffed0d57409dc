/* maps.c — see maps.h. */
#include "trace/maps.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int maps_is_special(const char *w) {
    size_t n = strlen(w);
    if (n >= 3 && w[0] == '<' && w[n - 1] == '>') return 1;
    return !strcmp(w, "[CLS]") || !strcmp(w, "[SEP]") || !strcmp(w, "[PAD]");   /* BERT's */
}

int maps_argmax_link(const float *row, int n, int exclude, const unsigned char *skip) {
    int best = -1;
    for (int j = 0; j < n; j++) {
        if (j == exclude || (skip && skip[j])) continue;
        if (best < 0 || row[j] > row[best]) best = j;
    }
    return best;
}

void maps_special_keys(const TraceMap *m, unsigned char *skip) {
    for (int j = 0; j < m->Tk; j++) skip[j] = (unsigned char)maps_is_special(m->keys[j]);
}

int maps_strongest_link(const TraceMap *m, int h, int q, float *w) {
    unsigned char stack_skip[256] = {0}, *skip = m->Tk <= 256 ? stack_skip : calloc((size_t)m->Tk, 1);
    const float *row = trace_weights_row(m, h, q);
    int best = -1;
    if (skip && row) {
        maps_special_keys(m, skip);
        best = maps_argmax_link(row, m->Tk, q, skip);
    }
    if (skip != stack_skip) free(skip);
    *w = best >= 0 ? row[best] : -1;
    return best;
}
