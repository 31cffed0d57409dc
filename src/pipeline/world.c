/* world.c — see world.h. */
#include "pipeline/world.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define WORLD_SUGGESTIONS 3
#define WORLD_MAX_WORD 64

int world_edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > WORLD_MAX_WORD || m > WORLD_MAX_WORD) return (int)(n > m ? n : m);
    int row[WORLD_MAX_WORD + 1];
    for (size_t j = 0; j <= m; j++) row[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= m; j++) {
            int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[m];
}

static int all_digits(const char *w) {
    if (!*w) return 0;
    for (; *w; w++) if (*w < '0' || *w > '9') return 0;
    return 1;
}

/* 1 if raw (as typed) has an uppercase letter anywhere, also as the first
 * word of a sentence: "Alice saw the dog" is the commonest way to meet a name.
 * ASCII and Latin capitals: the byte differs from the lowercase token's. */
static int capitalized(const char *raw, const char *tok) {
    return strcmp(raw, tok) != 0;
}

/* English words that often open a sentence with a capital but are no names
 * ("Where is …", "Can you …"): an unknown one is an unknown word, not a name. */
static int sentence_opener(const char *tok) {
    static const char *const w[] = {
        "where", "what", "who", "whom", "whose", "when", "why", "how", "which", "can", "could", "would",
        "should", "shall", "may", "might", "must", "do", "does", "did", "is", "are", "was", "were", "will",
        "have", "has", "had", "there", "here", "this", "that", "these", "those", "please", "yes", "no",
        "hello", "hi", "let", "if", "then", "also", "not", "never", "always", "sometimes", "often", "every",
        "each", "some", "any", "all", "many", "much", "very", "so", "but", "and", "or", "yesterday", "today",
        "tomorrow", "now", "once", "after", "before", "maybe", "perhaps", "thank", "thanks", "look", "come",
        "i", "i'm", "i'll", "i've", "i'd", "it's", "let's", "that's", "there's", "here's", "what's", "he's",
        "she's", "we're", "they're", "you're", "don't", "doesn't", "didn't", "isn't", "aren't", "can't", "won't",
        "the", "a", "an", "my", "your", "our", "their", "his", "her", "its", "he", "she", "it", "we", "you", "they"};
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        if (!strcmp(tok, w[i])) return 1;
    return 0;
}

/* 1 for a token made of ASCII signs only ("!", "..."). */
static int all_signs(const char *w) {
    if (!*w) return 0;
    for (; *w; w++)
        if ((unsigned char)*w >= 0x80 || (*w >= 'a' && *w <= 'z') || (*w >= '0' && *w <= '9') || *w == '\'') return 0;
    return 1;
}

/* s->shown[k]: how a copy of word k is written — as typed, or "[word]" for an
 * ordinary unknown word (marked). */
static void set_shown(Sentence *s, int k, int marked) {
    if (!s->shown) return;
    free(s->shown[k]);
    size_t n = strlen(s->raw[k]) + 3;
    if ((s->shown[k] = malloc(n))) snprintf(s->shown[k], n, marked ? "[%s]" : "%s", s->raw[k]);
}

static int letters_only(const char *w) {
    for (; *w; w++) if (((unsigned char)*w < 0x80) && !(*w >= 'a' && *w <= 'z') && *w != '\'' && *w != '-') return 0;
    return 1;
}

/* ", 'girl', 'gift'" style: the nearest known source words of w, closest first. */
static void nearest(char *out, size_t n, const char *w, const Vocab *v, const unsigned char *known) {
    int best[WORLD_SUGGESTIONS], dist[WORLD_SUGGESTIONS], k = 0;
    int half = ((int)strlen(w) + 1) / 2, limit = half > 2 ? half : 2;
    for (int id = VOCAB_N_SPECIAL; id < v->size; id++) {
        if (!known[id] || letters_only(v->words[id]) != letters_only(w)) continue;   /* words for words, signs for signs */
        int d = world_edit_distance(w, v->words[id]);
        if (d > limit) continue;
        int at = k;   /* insertion sort by distance, then vocabulary order */
        while (at > 0 && dist[at - 1] > d) at--;
        if (at >= WORLD_SUGGESTIONS) continue;
        for (int j = (k < WORLD_SUGGESTIONS ? k : WORLD_SUGGESTIONS - 1); j > at; j--) { best[j] = best[j - 1]; dist[j] = dist[j - 1]; }
        best[at] = id; dist[at] = d;
        if (k < WORLD_SUGGESTIONS) k++;
    }
    if (k == 0) { snprintf(out, n, "'%s' (no near word)", w); return; }
    size_t len = (size_t)snprintf(out, n, "'%s' (nearest: ", w);
    for (int j = 0; j < k && len < n; j++) len += (size_t)snprintf(out + len, n - len, "%s'%s'", j ? ", " : "", v->words[best[j]]);
    if (len < n) snprintf(out + len, n - len, ")");
}

/* The number as typed that word k belongs to: "10:30" is read as 10, ":", 30
 * and "3.50" as 3, ".", 50; *first and *last are its words (k alone when it is
 * no such number), joined into out as typed.  Returns the number of words. */
static int typed_number(const Sentence *s, int k, int *first, int *last, char *out, size_t n) {
    if (k > 0 && k + 1 < s->words.n && strlen(s->raw[k]) == 1 && strchr(":.,", s->raw[k][0]) &&
        all_digits(s->raw[k - 1]) && all_digits(s->raw[k + 1]))
        k--;   /* the ':' of 10:30: the number it joins */
    int a = k, b = k;
    while (a >= 2 && all_digits(s->raw[a - 2]) && strlen(s->raw[a - 1]) == 1 && strchr(":.,", s->raw[a - 1][0]) &&
           all_digits(s->raw[a]))
        a -= 2;
    while (b + 2 < s->words.n && all_digits(s->raw[b]) && strlen(s->raw[b + 1]) == 1 && strchr(":.,", s->raw[b + 1][0]) &&
           all_digits(s->raw[b + 2]))
        b += 2;
    out[0] = '\0';
    size_t len = 0;
    for (int i = a; i <= b && len < n; i++) len += (size_t)snprintf(out + len, n - len, "%s", s->raw[i]);
    if (a < b && !strstr(s->text, out)) a = b = k;   /* "10 : 30" typed apart stays apart */
    if (a == b) snprintf(out, n, "%s", s->raw[k]);
    *first = a;
    *last = b;
    return b - a + 1;
}

static void append(char *buf, size_t n, const char *sep, const char *text) {
    size_t len = strlen(buf);
    if (len + strlen(sep) + strlen(text) + 4 >= n) {   /* cut with an ellipsis, once */
        if (len + 4 < n && (len < 3 || strcmp(buf + len - 3, "…"))) strcat(buf, "…");
        return;
    }
    snprintf(buf + len, n - len, "%s%s", len ? sep : "", text);
}

void world_check(WorldCheck *w, Sentence *s, const Vocab *v, const unsigned char *known, int max_words) {
    memset(w, 0, sizeof *w);
    w->words = s->words.n;
    w->max_words = max_words;
    if (!s->shown) s->shown = calloc((size_t)(s->words.n > 0 ? s->words.n : 1), sizeof(char *));
    for (int k = 0; k < s->words.n; k++) {
        const char *tok = s->words.tok[k];
        int id = s->src[k];
        if (id != VOCAB_UNK && id >= 0 && id < v->size && known[id]) {
            if (capitalized(s->raw[k], tok) && !sentence_opener(tok) && w->n_read_names < 64)
                w->read_name_pos[w->n_read_names++] = k;
            continue;
        }
        if (all_digits(tok) || all_signs(tok) || (capitalized(s->raw[k], tok) && !sentence_opener(tok))) {
            s->src[k] = VOCAB_UNK;
            if (w->n_names < 64) w->name_pos[w->n_names] = k;
            w->n_names++;
            int a, b;
            char num[128];
            typed_number(s, k, &a, &b, num, sizeof num);
            if (k == a) append(w->names, sizeof w->names, ", ", num);   /* "10:30" once, as typed */
            set_shown(s, k, 0);
        } else {
            set_shown(s, k, 1);
            int again = 0;   /* each unknown word named once */
            for (int j = 0; j < k && !again; j++) again = !strcmp(s->words.tok[j], tok);
            if (again) continue;
            char one[256];
            nearest(one, sizeof one, tok, v, known);
            if (w->n_unknown < 64) {
                w->unknown_pos[w->n_unknown] = k;
                w->unknown_in_vocab[w->n_unknown] = id != VOCAB_UNK;
            }
            w->n_unknown++;
            append(w->unknown, sizeof w->unknown, ", ", one);
        }
    }
    int too_long = max_words > 0 && w->words > max_words;
    if (!w->n_unknown && !too_long) return;
    char why[900] = "";
    if (w->n_unknown) snprintf(why, sizeof why, "%d word%s it never saw in training", w->n_unknown, w->n_unknown > 1 ? "s" : "");
    if (too_long) {
        size_t len = strlen(why);
        snprintf(why + len, sizeof why - len, "%s%d words, longer than any training sentence (%d)", len ? "; " : "",
                 w->words, max_words);
    }
    snprintf(w->outside, sizeof w->outside, "outside what the model was trained on: %s", why);
}

int world_unsure(const Model *m, int b, const Sentence *s, char *out, size_t n) {
    int count = 0, shown = 0;
    out[0] = '\0';
    float *lp = malloc((size_t)(s->T > 0 ? s->T : 1) * sizeof(float));
    if (!lp) return 0;
    sentence_target_logp(m, b, s, lp);
    for (int t = 0; t < s->T; t++) {
        int last = t + 1 >= s->T;
        double p = exp((double)lp[t]);
        if (p >= WORLD_UNSURE_P) continue;
        count++;
        if (shown++ == 6) { append(out, n, ", ", "…"); continue; }
        if (shown > 6) continue;
        char one[160];
        if (last) snprintf(one, sizeof one, "(end) %.2f", p);
        else snprintf(one, sizeof one, "'%s' %.2f", sentence_target_word(s, t + 1), p);
        append(out, n, ", ", one);
    }
    free(lp);
    return count;
}

void world_missing_names(const WorldCheck *w, const Sentence *s, char *out, size_t n) {
    out[0] = '\0';
    if (!w->n_names) return;
    for (int i = 0; i < w->n_names && i < 64; i++) {
        int k = w->name_pos[i], a, b, missing = 0, parts = 0;
        char num[128], kept[128] = "", one[300];
        typed_number(s, k, &a, &b, num, sizeof num);
        if (k != a && a != b) continue;   /* a number typed as one is said once, at its first word */
        for (int j = a; j <= b; j += 2) {   /* its digit groups (k alone, or 10 and 30 of 10:30) */
            int copied = 0;
            for (int c = 0; c < s->n_copies; c++) copied |= s->copies[c].source == j;
            parts++;
            if (!copied) missing++;
            else append(kept, sizeof kept, ", ", s->raw[j]);
        }
        if (!missing) continue;
        if (missing < parts) snprintf(one, sizeof one, "%s (only %s came through)", num, kept);
        else snprintf(one, sizeof one, "%s", num);
        append(out, n, ", ", one);
    }
}

/* 1 if the translation holds word (any case) as one of its words. */
static int in_translation(const Sentence *s, const char *word) {
    size_t n = strlen(word);
    for (const char *p = s->translation; *p;) {
        size_t k = strcspn(p, " ");
        if (k == n && !strncasecmp(p, word, n)) return 1;
        p += k;
        if (*p) p++;
    }
    return 0;
}

void world_names_left_out(const WorldCheck *w, const Sentence *s, const unsigned char *fr, const unsigned char *vi,
                          int n_words, char *out, size_t n) {
    out[0] = '\0';
    for (int i = 0; i < w->n_read_names; i++) {
        int k = w->read_name_pos[i], id = s->src[k];
        if (id < 0 || id >= n_words || !((fr && fr[id]) || (vi && vi[id]))) continue;   /* "English" → "anglais" */
        if (!in_translation(s, s->raw[k]) && !in_translation(s, s->words.tok[k])) append(out, n, ", ", s->raw[k]);
    }
}
