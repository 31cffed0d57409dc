/* label.c — see label.h. */
#include "render/label.h"
#include <stdio.h>
#include <string.h>

#define SMALL_GAP 6      /* between a label's two parts */
#define SMALL_MIN_W 18   /* narrower room than this: the small part is left out */
#define COL_SMALL RGB_HEX(0x6B6F73)

int label_small_px(int px) {
    int s = (px * 3 + 2) / 4;
    return s < 9 ? 9 : s;
}

int label_fit(FontStyle st, int px, const char *const *labels, int i, int max_w, char *out,
              size_t outlen) {
    char index[16];
    const char *s = labels ? labels[i] : NULL;
    if (!s) {
        snprintf(index, sizeof index, "%d", i);
        s = index;
    }
    const char *tab = strchr(s, '\t');
    if (!tab) return font_fit(st, px, s, max_w, out, outlen);
    char first[512], second[512], fa[512], fb[512];
    snprintf(first, sizeof first, "%.*s", (int)(tab - s), s);
    snprintf(second, sizeof second, "%s", tab + 1);
    int wa = font_fit(st, px, first, max_w, fa, sizeof fa), room = max_w - wa - SMALL_GAP;
    if (room < SMALL_MIN_W || !second[0]) {
        snprintf(out, outlen, "%s", fa);
        return wa;
    }
    int wb = font_fit(FONT_REGULAR, label_small_px(px), second, room, fb, sizeof fb);
    snprintf(out, outlen, "%s\t%s", fa, fb);
    return wa + SMALL_GAP + wb;
}

void label_draw_right(Canvas *c, FontStyle st, int px, int x_right, int baseline, const char *fitted, Rgb col) {
    const char *tab = strchr(fitted, '\t');
    if (!tab) {
        font_draw_right(c, st, px, x_right, baseline, fitted, col);
        return;
    }
    char first[512];
    snprintf(first, sizeof first, "%.*s", (int)(tab - fitted), fitted);
    font_draw_right(c, st, px, x_right, baseline, first, col);
    int wa = font_width(st, px, first);
    font_draw_right(c, FONT_REGULAR, label_small_px(px), x_right - wa - SMALL_GAP, baseline, tab + 1, COL_SMALL);
}

/* The next word of *p (up to a space or the end) into word; advances *p past
 * the spaces after it.  0 at the end of the text. */
static int next_word(const char **p, char *word, size_t n) {
    const char *s = *p;
    while (*s == ' ') s++;
    size_t len = strcspn(s, " ");
    if (!len) return 0;
    snprintf(word, n, "%.*s", (int)(len < n ? len : n - 1), s);
    *p = s + len;
    return 1;
}

/* Ends the last line with "…" (the text went on), cut to max_w. */
static void mark_cut(FontStyle st, int px, int max_w, LabelLines *out) {
    char with[600], fitted[512];
    char *last = out->line[out->n - 1];
    snprintf(with, sizeof with, "%s …", last);
    font_fit(st, px, with, max_w, fitted, sizeof fitted);
    snprintf(last, sizeof out->line[0], "%s", fitted);
}

int label_wrap(FontStyle st, int px, const char *text, int max_w, LabelLines *out) {
    memset(out, 0, sizeof *out);
    if (!text || !*text) return 0;
    if (max_w < 40) max_w = 40;
    const char *p = text;
    char word[512], cand[1100];
    while (next_word(&p, word, sizeof word)) {
        char *cur = out->n ? out->line[out->n - 1] : NULL;
        if (cur && cur[0]) {
            snprintf(cand, sizeof cand, "%s %s", cur, word);
            if (strlen(cand) < sizeof out->line[0] && font_width(st, px, cand) <= max_w) {
                snprintf(cur, sizeof out->line[0], "%s", cand);
                continue;
            }
        }
        if (out->n == LABEL_WRAP_LINES) {
            mark_cut(st, px, max_w, out);
            break;
        }
        font_fit(st, px, word, max_w, out->line[out->n], sizeof out->line[0]);
        out->n++;
    }
    for (int k = 0; k < out->n; k++) {
        int w = font_width(st, px, out->line[k]);
        if (w > out->w) out->w = w;
    }
    return out->n;
}

int label_draw_lines(Canvas *c, FontStyle st, int px, int x, int baseline, int pitch, const LabelLines *ls, Rgb col) {
    for (int k = 0; k < ls->n; k++, baseline += pitch) font_draw(c, st, px, x, baseline, ls->line[k], col);
    return baseline;
}
