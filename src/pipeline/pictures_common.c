/* pictures_common.c — see pictures_common.h. */
#include "pipeline/pictures_common.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

void pictures_safe_name(char *out, size_t n, const char *tok) {
    size_t j = 0;
    for (const unsigned char *p = (const unsigned char *)tok; *p && j + 1 < n && j < 24; p++)
        out[j++] = (char)(isalnum(*p) ? tolower(*p) : '_');   /* one rule: lines.5-it beside explain.5-it */
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

/* "h" or "a–b": the query heads that read K/V head kv. */
static void kv_range(const TraceMap *m, int kv, char *buf, size_t n) {
    int group = m->n_heads / m->n_kv_heads, first = kv * group;
    if (group == 1) snprintf(buf, n, "%d", first);
    else snprintf(buf, n, "%d–%d", first, first + group - 1);
}

const char *pictures_kv_note(const TraceMap *m, int h, char *buf, size_t n) {
    buf[0] = '\0';
    if (m->n_kv_heads <= 0 || m->n_kv_heads >= m->n_heads) return buf;
    char heads[32];
    kv_range(m, trace_kv_head(m, h), heads, sizeof heads);
    if (m->n_kv_heads == 1) snprintf(buf, n, "K/V head 0, shared by all %d heads", m->n_heads);
    else snprintf(buf, n, "K/V head %d, shared by heads %s", trace_kv_head(m, h), heads);
    return buf;
}

const char *pictures_kv_groups(const TraceMap *m, char *buf, size_t n) {
    buf[0] = '\0';
    if (m->n_kv_heads <= 0 || m->n_kv_heads >= m->n_heads) return buf;
    if (m->n_kv_heads == 1) {
        snprintf(buf, n, "all %d heads share K/V head 0", m->n_heads);
        return buf;
    }
    size_t k = 0;
    for (int kv = 0; kv < m->n_kv_heads && k < n; kv++) {
        char heads[32];
        kv_range(m, kv, heads, sizeof heads);
        if (kv == 2 && m->n_kv_heads > 4) {   /* the first two, …, the last */
            k += (size_t)snprintf(buf + k, n - k, ", …");
            kv = m->n_kv_heads - 2;
            continue;
        }
        k += (size_t)snprintf(buf + k, n - k, kv == 0 ? "heads %s share K/V head %d" : ", %s K/V head %d", heads, kv);
    }
    return buf;
}

float pictures_sink(const PictureSpec *ps, const TraceMap *m, int h) {
    if (!ps->sinks || m->Tq < 2 || m->Tk < 1) return -1;
    double sum = 0;
    for (int t = 1; t < m->Tq; t++) sum += m->heads[h].weights[(size_t)t * m->Tk];
    float mean = (float)(sum / (m->Tq - 1));
    return mean > PICTURES_SINK_MIN ? mean : -1;
}

int pictures_window(const TraceMap *m) {
    if (!m->mask || m->Tq != m->Tk) return 0;
    int sliding = 0, widest = 0;
    for (int i = 0; i < m->Tq; i++) {
        int seen = 0, cut = 0;
        for (int j = 0; j < m->Tk; j++) {
            int on = m->mask[(size_t)i * m->Tk + j];
            seen += on;
            cut |= !on && j < i && m->mask[(size_t)j * m->Tk + j];
        }
        sliding |= cut && seen > 0;   /* a row that sees nothing is padding, not a window */
        if (seen > widest) widest = seen;
    }
    return sliding ? widest : 0;
}

int pictures_piece(const PictureSpec *ps, int q) {
    return ps->words && ps->word_first ? ps->word_first[q] : q;
}
