/* tokjson_decode.c — the decoders of tokenizer.json (tokjson.h): token
 * strings back to printable text, each step as the tokenizers library's
 * decode_chain (a list of strings in, a list out). */
#include "tokenize/tokjson_decode.h"
#include "core/sizes.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tjwords_add(TjWords *w, char *s) {
    if (!s) return -1;
    if (w->n == w->cap) {
        if (w->cap > INT_MAX / 2) return -1;   /* the doubling would wrap */
        int cap = w->cap ? w->cap * 2 : 32;
        char **v = realloc(w->v, (size_t)cap * sizeof *v);
        if (!v) { free(s); return -1; }
        w->v = v;
        w->cap = cap;
    }
    w->v[w->n++] = s;
    return 0;
}

void tjwords_free(TjWords *w) {
    if (!w) return;
    for (int i = 0; i < w->n; i++) free(w->v[i]);
    free(w->v);
    memset(w, 0, sizeof *w);
}

/* A growing byte buffer. */
typedef struct { char *s; size_t n, cap; } Buf;

static int buf_put(Buf *b, const void *p, size_t k) {
    size_t need;
    if (!size_add(&need, b->n, k) || !size_add(&need, need, 1)) return -1;
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        char *s = realloc(b->s, cap);
        if (!s) return -1;
        b->s = s;
        b->cap = cap;
    }
    memcpy(b->s + b->n, p, k);
    b->n += k;
    b->s[b->n] = '\0';
    return 0;
}

static int buf_cp(Buf *b, int32_t c) {
    TjStr t = {0};
    TjSpan sp = {0, 0};
    int rc = tjstr_put_cp(&t, c, sp) || buf_put(b, t.s, (size_t)t.n);
    tjstr_free(&t);
    return rc;
}

/* The length of the valid UTF-8 character at s[0, n), or 0. */
static int valid_char(const unsigned char *s, size_t n) {
    int k = s[0] < 0x80 ? 1 : s[0] >= 0xC2 && s[0] <= 0xDF ? 2 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
          : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
    if (!k || (size_t)k > n) return 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (s[0] == 0xE0) lo = 0xA0;
    if (s[0] == 0xED) hi = 0x9F;
    if (s[0] == 0xF0) lo = 0x90;
    if (s[0] == 0xF4) hi = 0x8F;
    if (k > 1 && (s[1] < lo || s[1] > hi)) return 0;
    for (int i = 2; i < k; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return k;
}

/* The bytes s[0, n) as text, each maximal invalid part one U+FFFD (Rust's
 * String::from_utf8_lossy).  malloc'd, or NULL. */
static char *lossy(const char *p, size_t n) {
    const unsigned char *s = (const unsigned char *)p;
    Buf b = {0};
    int rc = buf_put(&b, "", 0);
    for (size_t i = 0; i < n && rc == 0;) {
        int k = valid_char(s + i, n - i);
        if (k) { rc = buf_put(&b, s + i, (size_t)k); i += (size_t)k; continue; }
        size_t j = i + 1;   /* the longest prefix that could have begun a character */
        int want = s[i] >= 0xE0 && s[i] <= 0xEF ? 3 : s[i] >= 0xF0 && s[i] <= 0xF4 ? 4 : s[i] >= 0xC2 && s[i] <= 0xDF ? 2 : 1;
        while (j < n && (int)(j - i) < want) {
            unsigned char t[4] = {0x80, 0x80, 0x80, 0x80};
            memcpy(t, s + i, j - i + 1);
            if (!valid_char(t, 4)) break;
            j++;
        }
        rc = buf_cp(&b, 0xFFFD);
        i = j;
    }
    if (rc) { free(b.s); return NULL; }
    return b.s;
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The byte of a "<0xAB>" token, or -1. */
static int fallback_byte(const char *t) {
    if (strlen(t) != 6 || strncmp(t, "<0x", 3) || t[5] != '>') return -1;
    int hi = hex_digit(t[3]), lo = hex_digit(t[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

static int dec_byte_level(TjWords *w) {
    Buf b = {0};
    int rc = buf_put(&b, "", 0);
    for (int i = 0; i < w->n && rc == 0; i++) {
        const char *t = w->v[i];
        int n = (int)strlen(t), all = 1;
        size_t at = b.n;
        for (int j = 0; j < n && all && rc == 0;) {
            int32_t c;
            j += tj_utf8_next(t, n, j, &c);
            int byte = tj_char_byte(c);
            if (byte < 0) all = 0;
            else { unsigned char x = (unsigned char)byte; rc = buf_put(&b, &x, 1); }
        }
        if (!all && rc == 0) { b.n = at; rc = buf_put(&b, t, (size_t)n); }
    }
    char *s = rc ? NULL : lossy(b.s, b.n);
    free(b.s);
    if (!s) return -1;
    tjwords_free(w);
    return tjwords_add(w, s);
}

static int dec_byte_fallback(TjWords *w) {
    TjWords out = {0};
    Buf bytes = {0};
    int rc = 0;
    for (int i = 0; i <= w->n && rc == 0; i++) {
        int x = i < w->n ? fallback_byte(w->v[i]) : -1;
        if (x >= 0) { unsigned char c = (unsigned char)x; rc = buf_put(&bytes, &c, 1); continue; }
        if (bytes.n) {   /* the bytes so far: their text, or one U+FFFD each */
            if (tj_utf8_valid(bytes.s, bytes.n)) rc = tjwords_add(&out, strdup(bytes.s));
            for (size_t k = 0; k < bytes.n && rc == 0 && !tj_utf8_valid(bytes.s, bytes.n); k++)
                rc = tjwords_add(&out, strdup("\xEF\xBF\xBD"));
            bytes.n = 0;
        }
        if (i < w->n && rc == 0) { rc = tjwords_add(&out, w->v[i]); w->v[i] = NULL; }
    }
    free(bytes.s);
    if (rc) { tjwords_free(&out); return -1; }
    tjwords_free(w);
    *w = out;
    return 0;
}

static int dec_fuse(TjWords *w) {
    Buf b = {0};
    int rc = buf_put(&b, "", 0);
    for (int i = 0; i < w->n && rc == 0; i++) rc = buf_put(&b, w->v[i], strlen(w->v[i]));
    if (rc) { free(b.s); return -1; }
    tjwords_free(w);
    return tjwords_add(w, b.s);
}

/* Token i rewritten character by character: the Metaspace replacement → " "
 * (dropped in the first token unless prepend_scheme is never), Strip's
 * leading and trailing content characters cut. */
static char *dec_chars(const TjDec *d, const char *t, int i) {
    int n = (int)strlen(t), m = 0;
    int32_t *cp = malloc(((size_t)n + 1) * sizeof *cp);
    if (!cp) return NULL;
    for (int j = 0; j < n;) j += tj_utf8_next(t, n, j, &cp[m++]);
    int a = 0, b = m;
    if (d->kind == TJ_DEC_STRIP) {
        while (a < d->start && a < m && cp[a] == d->ch) a++;
        for (int k = 0; k < d->stop && b > a && cp[b - 1] == d->ch; k++) b--;
    }
    Buf o = {0};
    int rc = buf_put(&o, "", 0);
    for (int k = a; k < b && rc == 0; k++) {
        if (d->kind == TJ_DEC_METASPACE && cp[k] == d->ch) {
            if (i == 0 && !d->prepend_never) continue;
            rc = buf_put(&o, " ", 1);
        } else rc = buf_cp(&o, cp[k]);
    }
    free(cp);
    if (rc) { free(o.s); return NULL; }
    return o.s;
}

/* Every occurrence of from in s replaced by to (malloc'd). */
static char *replace_all(const char *s, const char *from, const char *to) {
    Buf o = {0};
    size_t fl = strlen(from), tl = strlen(to);
    int rc = buf_put(&o, "", 0);
    for (const char *p = s; *p && rc == 0;) {
        const char *q = fl ? strstr(p, from) : NULL;
        if (!q) { rc = buf_put(&o, p, strlen(p)); break; }
        rc = buf_put(&o, p, (size_t)(q - p)) || buf_put(&o, to, tl);
        p = q + fl;
    }
    if (rc) { free(o.s); return NULL; }
    return o.s;
}

static char *wordpiece_cleanup(char *s) {
    static const char *const pairs[][2] = {
        {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
        {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
    };
    for (size_t k = 0; k < sizeof pairs / sizeof pairs[0] && s; k++) {
        char *r = replace_all(s, pairs[k][0], pairs[k][1]);
        free(s);
        s = r;
    }
    return s;
}

static char *dec_wordpiece(const TjDec *d, const char *t, int i) {
    size_t pl = strlen(d->text);
    Buf o = {0};
    int rc = 0;
    if (i != 0 && !strncmp(t, d->text, pl)) rc = buf_put(&o, t + pl, strlen(t + pl));
    else if (i != 0) rc = buf_put(&o, " ", 1) || buf_put(&o, t, strlen(t));
    else rc = buf_put(&o, t, strlen(t));
    if (rc) { free(o.s); return NULL; }
    return d->cleanup ? wordpiece_cleanup(o.s) : o.s;
}

/* Replace on one token: the pattern's matches → content. */
static char *dec_replace(const TjDec *d, const char *t) {
    TjSpans m = {0};
    int n = (int)strlen(t);
    Buf o = {0};
    int rc = tj_pattern_find(&d->pat, t, n, &m, NULL) || buf_put(&o, "", 0), at = 0;
    for (int k = 0; k < m.n && rc == 0; k++) {
        rc = buf_put(&o, t + at, (size_t)(m.v[k].start - at)) || buf_put(&o, d->text, strlen(d->text));
        at = m.v[k].end;
    }
    if (rc == 0) rc = buf_put(&o, t + at, (size_t)(n - at));
    free(m.v);
    if (rc) { free(o.s); return NULL; }
    return o.s;
}

int tj_dec_apply(const TjDec *d, TjWords *w) {
    switch (d->kind) {
    case TJ_DEC_BYTE_LEVEL: return dec_byte_level(w);
    case TJ_DEC_BYTE_FALLBACK: return dec_byte_fallback(w);
    case TJ_DEC_FUSE: return dec_fuse(w);
    case TJ_DEC_SEQUENCE:
        for (int i = 0; i < d->n_sub; i++)
            if (tj_dec_apply(&d->sub[i], w)) return -1;
        return 0;
    }
    for (int i = 0; i < w->n; i++) {   /* the decoders that work token by token */
        char *r = d->kind == TJ_DEC_WORDPIECE ? dec_wordpiece(d, w->v[i], i)
                : d->kind == TJ_DEC_REPLACE ? dec_replace(d, w->v[i])
                : d->kind == TJ_DEC_BPE ? replace_all(w->v[i], d->text, i == w->n - 1 ? "" : " ")
                : dec_chars(d, w->v[i], i);
        if (!r) return -1;
        free(w->v[i]);
        w->v[i] = r;
    }
    return 0;
}

static const struct { const char *name; int kind; } DEC_KINDS[] = {
    {"ByteLevel", TJ_DEC_BYTE_LEVEL}, {"Metaspace", TJ_DEC_METASPACE}, {"WordPiece", TJ_DEC_WORDPIECE},
    {"ByteFallback", TJ_DEC_BYTE_FALLBACK}, {"Fuse", TJ_DEC_FUSE}, {"Strip", TJ_DEC_STRIP},
    {"Replace", TJ_DEC_REPLACE}, {"BPEDecoder", TJ_DEC_BPE}, {"Sequence", TJ_DEC_SEQUENCE},
};

static int parse_sequence(TjDec *d, const cJSON *j, const char *where, const TjCtx *c) {
    const cJSON *list = tj_get(j, "decoders");
    if (!cJSON_IsArray(list)) return tj_fail(c, where, "a Sequence needs a \"decoders\" list");
    int n = cJSON_GetArraySize(list), i = 0;
    d->sub = calloc((size_t)(n ? n : 1), sizeof *d->sub);
    if (!d->sub) return tj_fail(c, where, "out of memory");
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char w[256];
        snprintf(w, sizeof w, "%s.decoders[%d]", where, i);
        d->n_sub = i + 1;
        if (tj_dec_parse(&d->sub[i], e, w, c)) return -1;
    }
    return 0;
}

/* A string member copied into d->text (dflt when absent). */
static int text_of(TjDec *d, const cJSON *j, const char *key, const char *dflt, const char *where, const TjCtx *c) {
    const char *s = tj_str(j, key);
    if (!s && tj_get(j, key)) return tj_fail(c, where, "\"%s\" must be a string", key);
    int bad = 0;
    d->text = tj_dup(s ? s : dflt, &bad);
    return bad ? tj_fail(c, where, "out of memory") : 0;
}

static int parse_metaspace(TjDec *d, const cJSON *j, const char *where, const TjCtx *c) {
    d->ch = tj_one_char(tj_str(j, "replacement"));
    if (d->ch < 0) return tj_fail(c, where, "Metaspace needs a one-character \"replacement\"");
    const char *scheme = tj_str(j, "prepend_scheme");
    int aps = tj_bool(j, "add_prefix_space", 1);
    if (aps < 0) return tj_fail(c, where, "\"add_prefix_space\" must be true or false");
    if (scheme && strcmp(scheme, "always") && strcmp(scheme, "first") && strcmp(scheme, "never"))
        return tj_fail(c, where, "the prepend_scheme \"%.40s\" is not always, first or never", scheme);
    d->prepend_never = scheme && !strcmp(scheme, "never");
    if (!aps && !d->prepend_never) return tj_fail(c, where, "add_prefix_space false needs \"prepend_scheme\": \"never\"");
    return 0;
}

static int parse_strip(TjDec *d, const cJSON *j, const char *where, const TjCtx *c) {
    const cJSON *a = tj_get(j, "start"), *b = tj_get(j, "stop");
    d->ch = tj_one_char(tj_str(j, "content"));
    if (d->ch < 0) return tj_fail(c, where, "Strip needs a one-character \"content\"");
    if ((a && !cJSON_IsNumber(a)) || (b && !cJSON_IsNumber(b)))
        return tj_fail(c, where, "Strip's \"start\" and \"stop\" must be numbers");
    d->start = a ? (a->valuedouble < 0 ? 0 : a->valuedouble > 1e6 ? 1000000 : (int)a->valuedouble) : 0;
    d->stop = b ? (b->valuedouble < 0 ? 0 : b->valuedouble > 1e6 ? 1000000 : (int)b->valuedouble) : 0;
    return 0;
}

int tj_dec_parse(TjDec *d, const cJSON *j, const char *where, const TjCtx *c) {
    const char *type = tj_str(j, "type");
    if (!cJSON_IsObject(j) || !type) return tj_fail(c, where, "a decoder must be an object with a \"type\"");
    d->kind = -1;
    for (size_t i = 0; i < sizeof DEC_KINDS / sizeof DEC_KINDS[0]; i++)
        if (!strcmp(type, DEC_KINDS[i].name)) d->kind = DEC_KINDS[i].kind;
    if (d->kind < 0) return tj_fail(c, where, "the decoder \"%.40s\" is not supported", type);
    switch (d->kind) {
    case TJ_DEC_METASPACE: return parse_metaspace(d, j, where, c);
    case TJ_DEC_WORDPIECE:
        if ((d->cleanup = tj_bool(j, "cleanup", 1)) < 0) return tj_fail(c, where, "\"cleanup\" must be true or false");
        return text_of(d, j, "prefix", "##", where, c);
    case TJ_DEC_STRIP: return parse_strip(d, j, where, c);
    case TJ_DEC_REPLACE:
        if (!tj_str(j, "content")) return tj_fail(c, where, "Replace needs a \"content\" string");
        return text_of(d, j, "content", "", where, c) || tj_pattern_parse(&d->pat, tj_get(j, "pattern"), where, c);
    case TJ_DEC_BPE: return text_of(d, j, "suffix", "</w>", where, c);
    case TJ_DEC_SEQUENCE: return parse_sequence(d, j, where, c);
    }
    return 0;
}

void tj_dec_free(TjDec *d) {
    if (!d) return;
    for (int i = 0; i < d->n_sub; i++) tj_dec_free(&d->sub[i]);
    free(d->sub);
    free(d->text);
    tj_pattern_free(&d->pat);
    memset(d, 0, sizeof *d);
}
