/* pictures_common.c — see pictures_common.h. */
#include "pipeline/pictures_common.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

void pictures_safe_name(char *out, size_t n, const char *tok) {
    size_t j = 0;
    for (const unsigned char *p = (const unsigned char *)tok; *p && j + 1 < n && j < 24; p++)
        out[j++] = (char)(isalnum(*p) ? *p : '_');
    out[j] = '\0';
}

void pictures_path(const Show *w, const char *file, char *path, size_t n) {
    snprintf(path, n, "%s/%s", w->ps->dir, file);
}

/* The PNG text chunks of a picture: title, sentence, model, then any of map,
 * layer, head (NULL: left out), the knocked-out heads when there are some and
 * why the sentence lies outside training when it does (at most 8 items). */
RenderMeta pictures_meta(const Show *w, RenderMetaItem items[8], const char *title, const char *map,
                         const char *layer, const char *head) {
    int n = 0;
    items[n++] = (RenderMetaItem){"Title", title};
    items[n++] = (RenderMetaItem){"Sentence", w->s->text};
    items[n++] = (RenderMetaItem){"Model", w->ps->model_path};
    if (map) items[n++] = (RenderMetaItem){"Map", map};
    if (layer) items[n++] = (RenderMetaItem){"Layer", layer};
    if (head) items[n++] = (RenderMetaItem){"Head", head};
    if (w->ps->ablated && *w->ps->ablated) items[n++] = (RenderMetaItem){"Knocked out", w->ps->ablated};
    if (w->ps->outside && *w->ps->outside) items[n++] = (RenderMetaItem){"Outside training", w->ps->outside};
    return (RenderMeta){items, n};
}

int pictures_list_has(const char *list, const char *id, int h) {
    char item[96];
    snprintf(item, sizeof item, "%s.%d", id, h);
    size_t n = strlen(item);
    for (const char *p = list; p && (p = strstr(p, item)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ',')) return 1;
    return 0;
}
