/* tokenizer.c — UTF-8 word-level tokenizer and vocabulary (see tokenizer.h). */
#include "tokenize/tokenizer.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const vocab_special[VOCAB_N_SPECIAL] = {
    "<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>"
};

/* ---------------------------------------------------------------- UTF-8 -- */

/* Decodes the code point at s[i] (n bytes in all).  Returns its length in bytes,
 * or 0 with *why set when the bytes there are not valid UTF-8. */
static int utf8_decode(const unsigned char *s, size_t n, size_t i, uint32_t *cp,
                       const char **why) {
    unsigned char c = s[i];
    if (c < 0x80) { *cp = c; return 1; }
    if (c < 0xC0) { *why = "lone continuation byte"; return 0; }
    if (c < 0xC2) { *why = "overlong encoding"; return 0; }
    int len;
    uint32_t v;
    if (c < 0xE0) { len = 2; v = c & 0x1F; }
    else if (c < 0xF0) { len = 3; v = c & 0x0F; }
    else if (c < 0xF5) { len = 4; v = c & 0x07; }
    else { *why = "byte that never occurs in UTF-8"; return 0; }
    for (int k = 1; k < len; k++) {
        if (i + k >= n || (s[i + k] & 0xC0) != 0x80) {
            *why = "truncated multi-byte sequence";
            return 0;
        }
        v = (v << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 3 && v < 0x800) || (len == 4 && v < 0x10000)) { *why = "overlong encoding"; return 0; }
    if (v >= 0xD800 && v <= 0xDFFF) { *why = "UTF-16 surrogate"; return 0; }
    if (v > 0x10FFFF) { *why = "code point above U+10FFFF"; return 0; }
    *cp = v;
    return len;
}

static int utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

int tokenizer_utf8_len(const char *s, size_t n, size_t i) {
    uint32_t cp;
    const char *why = "";
    return i < n ? utf8_decode((const unsigned char *)s, n, i, &cp, &why) : 0;
}

int tokenizer_check_utf8(const char *s, size_t n, char *err, size_t errlen) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        const char *why = "";
        int len = utf8_decode(u, n, i, &cp, &why);
        if (!len && !strcmp(why, "truncated multi-byte sequence")) {   /* say which byte breaks it */
            int need = u[i] < 0xE0 ? 2 : u[i] < 0xF0 ? 3 : 4, k = 1;
            while (k < need && i + k < n && (u[i + k] & 0xC0) == 0x80) k++;
            if (i + k >= n)
                return errmsg_set(err, errlen, "invalid UTF-8 at byte %zu (0x%02X): it starts a %d-byte character "
                                  "but the text ends after %d of its bytes (save the text as UTF-8)", i, u[i], need, k);
            return errmsg_set(err, errlen, "invalid UTF-8 at byte %zu (0x%02X): it starts a %d-byte character but "
                              "byte %zu (0x%02X) does not continue it (save the text as UTF-8)", i, u[i], need, i + k,
                              u[i + k]);
        }
        if (!len)
            return errmsg_set(err, errlen, "invalid UTF-8 at byte %zu (0x%02X): %s "
                           "(save the text as UTF-8)", i, u[i], why);
        i += (size_t)len;
    }
    return 0;
}

uint32_t tokenizer_lower(uint32_t cp) {
    if (cp >= 'A' && cp <= 'Z') return cp + 32;
    if (cp < 0xC0) return cp;
    if (cp <= 0xDE) return cp == 0xD7 ? cp : cp + 0x20;          /* À..Þ, not × */
    if (cp >= 0x100 && cp <= 0x137) return cp | 1;                /* Ā..ķ pairs  */
    if (cp >= 0x139 && cp <= 0x148) return (cp & 1) ? cp + 1 : cp;
    if (cp >= 0x14A && cp <= 0x177) return cp | 1;                /* Ŋ..ŷ, Œ     */
    if (cp == 0x178) return 0xFF;                                 /* Ÿ           */
    if (cp >= 0x179 && cp <= 0x17E) return (cp & 1) ? cp + 1 : cp;
    if (cp == 0x1A0 || cp == 0x1AF) return cp + 1;                /* Ơ Ư         */
    if (cp >= 0x1E00 && cp <= 0x1E95) return cp | 1;              /* Ḁ..ẕ        */
    if (cp >= 0x1EA0 && cp <= 0x1EFF) return cp | 1;              /* Ạ..Ỹ (Vietnamese) */
    if (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) return cp + 0x20; /* Greek    */
    if (cp >= 0x410 && cp <= 0x42F) return cp + 0x20;             /* Cyrillic    */
    if (cp >= 0x400 && cp <= 0x40F) return cp + 0x50;
    return cp;
}

/* ------------------------------------------------------------ splitting -- */

enum { CH_SPACE, CH_WORD, CH_APOS, CH_HYPHEN, CH_PUNCT, CH_CONTROL };

/* Classifies cp; *norm receives the code point to use (’ → ', “ → "). */
static int char_class(uint32_t cp, uint32_t *norm) {
    *norm = cp;
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == '\v' || cp == '\f' ||
        cp == 0xA0 || cp == 0x202F || cp == 0x2009 || cp == 0x200B || cp == 0x3000 ||
        cp == 0xFEFF)
        return CH_SPACE;
    if (cp < 0x20 || cp == 0x7F) return CH_CONTROL;
    if (cp == '\'' || cp == 0x2019 || cp == 0x2018 || cp == 0x02BC) { *norm = '\''; return CH_APOS; }
    if (cp == '-') return CH_HYPHEN;
    if (cp < 0x80) {
        if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9') || cp == '_')
            return CH_WORD;
        return CH_PUNCT;
    }
    if (cp == 0x201C || cp == 0x201D || cp == 0x201E) { *norm = '"'; return CH_PUNCT; }
    if (cp == 0x2026 || cp == 0xAB || cp == 0xBB || cp == 0xBF || cp == 0xA1 ||
        cp == 0x2013 || cp == 0x2014)
        return CH_PUNCT;
    return CH_WORD;
}

typedef struct {
    Tokens *out;
    int max;
    char *err;
    size_t errlen;
} Splitter;

static int emit(Splitter *sp, const char *s, size_t len) {
    if (len > TOKENIZER_MAX_TOKEN_BYTES)
        return errmsg_set(sp->err, sp->errlen, "word \"%.20s...\" is longer than %d bytes "
                       "(split it)", s, TOKENIZER_MAX_TOKEN_BYTES);
    if (sp->out->n >= sp->max)
        return errmsg_set(sp->err, sp->errlen, "sentence has more than %d tokens "
                       "(shorten it)", sp->max);
    char *t = malloc(len + 1);
    if (!t) return errmsg_set(sp->err, sp->errlen, "out of memory");
    memcpy(t, s, len);
    t[len] = 0;
    sp->out->tok[sp->out->n++] = t;
    return 0;
}

static const char *const elisions[] = {
    "l", "qu", "n", "d", "j", "s", "c", "m", "t", "jusqu", "lorsqu", "puisqu"
};

static int is_elision(const char *w, size_t len) {
    for (size_t i = 0; i < sizeof elisions / sizeof *elisions; i++)
        if (strlen(elisions[i]) == len && !memcmp(elisions[i], w, len)) return 1;
    return 0;
}

/* Emits one word (lowercased, apostrophes normalised to '): splits French
 * elisions off, leading/trailing stray apostrophes become "'" tokens. */
static int emit_word(Splitter *sp, const char *w, size_t len) {
    while (len) {
        if (w[0] == '\'') {
            if (emit(sp, "'", 1)) return -1;
            w++, len--;
            continue;
        }
        const char *a = memchr(w, '\'', len);
        if (a && is_elision(w, (size_t)(a - w))) {
            size_t k = (size_t)(a - w) + 1;         /* "l'" with its apostrophe */
            if (emit(sp, w, k)) return -1;
            w += k, len -= k;
            continue;
        }
        size_t end = len;
        while (end && w[end - 1] == '\'') end--;
        if (emit(sp, w, end)) return -1;
        for (size_t k = end; k < len; k++)
            if (emit(sp, "'", 1)) return -1;
        return 0;
    }
    return 0;
}

static int split_into(Tokens *out, const char *text, int max_tokens, char *err,
                      size_t errlen) {
    out->n = 0;
    out->tok = NULL;
    if (!text) return errmsg_set(err, errlen, "no sentence given");
    if (max_tokens < 1 || max_tokens > 4096)
        return errmsg_set(err, errlen, "token limit %d out of range 1..4096", max_tokens);
    size_t n = strlen(text);
    if (tokenizer_check_utf8(text, n, err, errlen)) return -1;
    out->tok = calloc((size_t)max_tokens, sizeof *out->tok);
    if (!out->tok) return errmsg_set(err, errlen, "out of memory");
    Splitter sp = { out, max_tokens, err, errlen };

    const unsigned char *u = (const unsigned char *)text;
    char word[TOKENIZER_MAX_TOKEN_BYTES * 4 + 8];
    size_t wl = 0;
    int word_too_long = 0;
    size_t word_start = 0;
    for (size_t i = 0; i <= n;) {
        uint32_t cp = 0, norm;
        const char *why;
        int len = 1, cls = CH_SPACE;
        if (i < n) {
            len = utf8_decode(u, n, i, &cp, &why);  /* validated above: len > 0 */
            cls = char_class(cp, &norm);
            if (cls == CH_HYPHEN) {                 /* inside a word: part of it */
                uint32_t next = 0, nn;
                const char *w2;
                int l2 = i + 1 < n ? utf8_decode(u, n, i + 1, &next, &w2) : 0;
                /* not after an apostrophe: "'-s" and "l'-a" split as ' - s and l' - a,
                   so the tokens joined by spaces re-tokenize to themselves */
                if (wl && word[wl - 1] != '\'' && l2 && char_class(next, &nn) == CH_WORD) cls = CH_WORD;
                else cls = CH_PUNCT;
            }
        }
        if (cls == CH_CONTROL)
            return errmsg_set(err, errlen, "control character 0x%02X at byte %zu "
                           "(remove it)", (unsigned)cp, i);
        if (cls == CH_WORD || cls == CH_APOS) {
            if (!wl) word_start = i;
            if (wl + 4 < sizeof word)
                wl += (size_t)utf8_encode(tokenizer_lower(norm), word + wl);
            else
                word_too_long = 1;
            i += (size_t)len;
            continue;
        }
        if (wl) {
            if (word_too_long)
                return errmsg_set(err, errlen, "word at byte %zu is longer than %d bytes "
                               "(split it)", word_start, TOKENIZER_MAX_TOKEN_BYTES);
            if (emit_word(&sp, word, wl)) return -1;
            wl = 0;
        }
        if (cls == CH_PUNCT) {
            if (cp == '.' && i + 2 < n && u[i + 1] == '.' && u[i + 2] == '.') {
                if (emit(&sp, "...", 3)) return -1;
                i += 3;
                continue;
            }
            char buf[4];
            int bl = utf8_encode(norm, buf);
            if (emit(&sp, buf, (size_t)bl)) return -1;
        }
        i += (size_t)len;
    }
    if (out->n == 0)
        return errmsg_set(err, errlen, "sentence is empty (give at least one word)");
    return 0;
}

int tokenizer_split_max(Tokens *out, const char *text, int max_tokens, char *err,
                        size_t errlen) {
    int rc = split_into(out, text, max_tokens, err, errlen);
    if (rc) tokens_free(out);
    return rc;
}

int tokenizer_split(Tokens *out, const char *text, char *err, size_t errlen) {
    return tokenizer_split_max(out, text, TOKENIZER_MAX_TOKENS, err, errlen);
}

void tokens_free(Tokens *t) {
    if (!t) return;
    if (t->tok)
        for (int i = 0; i < t->n; i++) free(t->tok[i]);
    free(t->tok);
    t->tok = NULL;
    t->n = 0;
}

/* ----------------------------------------------------------- vocabulary -- */

static uint32_t hash_str(const char *s) {
    uint32_t h = 2166136261u;                       /* FNV-1a */
    for (; *s; s++) { h ^= (unsigned char)*s; h *= 16777619u; }
    return h;
}

/* Slot index holding word, or the empty slot where it would go. */
static int vocab_slot(const Vocab *v, const char *word) {
    uint32_t mask = (uint32_t)v->cap - 1;
    uint32_t i = hash_str(word) & mask;
    while (v->slots[i] >= 0 && strcmp(v->words[v->slots[i]], word))
        i = (i + 1) & mask;
    return (int)i;
}

void vocab_free(Vocab *v) {
    if (!v) return;
    if (v->words)
        for (int i = 0; i < v->size; i++) free(v->words[i]);
    free(v->words);
    free(v->slots);
    memset(v, 0, sizeof *v);
}

static int is_special(const char *w) {
    for (int i = 0; i < VOCAB_N_SPECIAL; i++)
        if (!strcmp(w, vocab_special[i])) return 1;
    return 0;
}

int vocab_build(Vocab *v, const char *const *words, int n, char *err, size_t errlen) {
    memset(v, 0, sizeof *v);
    if (n < 0) return errmsg_set(err, errlen, "negative word count");
    int have_specials = n >= VOCAB_N_SPECIAL;
    for (int i = 0; have_specials && i < VOCAB_N_SPECIAL; i++)
        if (strcmp(words[i], vocab_special[i])) have_specials = 0;
    int total = have_specials ? n : n + VOCAB_N_SPECIAL;
    int cap = 16;
    while (cap <= 2 * total) cap *= 2;
    v->words = calloc((size_t)total, sizeof *v->words);
    v->slots = malloc((size_t)cap * sizeof *v->slots);
    if (!v->words || !v->slots) { vocab_free(v); return errmsg_set(err, errlen, "out of memory"); }
    v->cap = cap;
    for (int i = 0; i < cap; i++) v->slots[i] = -1;
    for (int i = 0; i < total; i++) {
        int from = have_specials ? i : i - VOCAB_N_SPECIAL;
        const char *w = from < 0 ? vocab_special[i] : words[from];
        if (!w || !*w) {
            vocab_free(v);
            return errmsg_set(err, errlen, "vocabulary entry %d is empty", i);
        }
        if (i >= VOCAB_N_SPECIAL && is_special(w)) {
            vocab_free(v);
            return errmsg_set(err, errlen, "special token %s at position %d "
                           "(specials come first, in the order <pad> <unk> <bos> <eos> <2fr> <2vi>)", w, i);
        }
        for (const char *c = w; *c; c++)
            if (*c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') {
                vocab_free(v);
                return errmsg_set(err, errlen, "vocabulary entry %d (\"%s\") contains whitespace", i, w);
            }
        int s = vocab_slot(v, w);
        if (v->slots[s] >= 0) {
            int prev = v->slots[s];
            vocab_free(v);
            return errmsg_set(err, errlen, "duplicate vocabulary entry \"%s\" (ids %d and %d)", w, prev, i);
        }
        v->words[i] = strdup(w);
        if (!v->words[i]) { vocab_free(v); return errmsg_set(err, errlen, "out of memory"); }
        v->size = i + 1;
        v->slots[s] = i;
    }
    return 0;
}

int vocab_load(Vocab *v, const char *path, char *err, size_t errlen) {
    memset(v, 0, sizeof *v);
    int fd = file_open_regular(path, err, errlen);   /* a FIFO or device never hangs the open */
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0) { errmsg_set(err, errlen, "cannot read vocabulary %s: %s", path, strerror(errno)); close(fd); }
        return -1;
    }
    char **words = NULL;
    int n = 0, cap = 0, rc = -1;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t len;
    while ((len = getline(&line, &lcap, f)) >= 0) {
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        char why[200];
        if (tokenizer_check_utf8(line, (size_t)len, why, sizeof why)) {
            errmsg_set(err, errlen, "%s in %s line %d", why, path, n + 1);
            goto cleanup;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            char **nw = realloc(words, (size_t)cap * sizeof *words);
            if (!nw) { errmsg_set(err, errlen, "out of memory"); goto cleanup; }
            words = nw;
        }
        words[n] = strdup(line);
        if (!words[n]) { errmsg_set(err, errlen, "out of memory"); goto cleanup; }
        n++;
    }
    if (ferror(f)) { errmsg_set(err, errlen, "cannot read %s: %s", path, strerror(errno)); goto cleanup; }
    if (n < VOCAB_N_SPECIAL) { errmsg_set(err, errlen, "%s has %d lines, fewer than the %d special tokens", path, n, VOCAB_N_SPECIAL); goto cleanup; }
    for (int i = 0; i < VOCAB_N_SPECIAL; i++)
        if (strcmp(words[i], vocab_special[i])) {
            errmsg_set(err, errlen, "%s line %d is \"%s\", expected %s (not an attnviz vocabulary?)",
                    path, i + 1, words[i], vocab_special[i]);
            goto cleanup;
        }
    rc = vocab_build(v, (const char *const *)words, n, err, errlen);
cleanup:
    for (int i = 0; i < n; i++) free(words[i]);
    free(words);
    free(line);
    fclose(f);
    return rc;
}

int vocab_save(const Vocab *v, const char *path, char *err, size_t errlen) {
    AtomicFile af;
    if (atomic_open(&af, path, err, errlen)) return -1;
    for (int i = 0; i < v->size; i++) fprintf(af.f, "%s\n", v->words[i]);
    return atomic_commit(&af, err, errlen);
}

int vocab_id(const Vocab *v, const char *word) {
    if (!v->size || !word) return -1;
    return v->slots[vocab_slot(v, word)];
}

const char *vocab_word(const Vocab *v, int id) {
    return id >= 0 && id < v->size ? v->words[id] : NULL;
}

int vocab_encode(const Vocab *v, const char *const *tokens, int n, int *ids, int *unknown) {
    int n_unknown = 0;
    for (int i = 0; i < n; i++) {
        int id = vocab_id(v, tokens[i]);
        if (id < 0) {
            id = VOCAB_UNK;
            if (unknown) unknown[n_unknown] = i;
            n_unknown++;
        }
        ids[i] = id;
    }
    return n_unknown;
}

int vocab_decode(const Vocab *v, const int *ids, int n, int flags, char *buf,
                 size_t buflen, char *err, size_t errlen) {
    if (!buflen) return errmsg_set(err, errlen, "no room to decode into");
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        const char *w = vocab_word(v, ids[i]);
        if (!w) return errmsg_set(err, errlen, "token id %d out of range 0..%d", ids[i], v->size - 1);
        if (flags & VOCAB_DECODE_SKIP_SPECIAL) {
            if (ids[i] == VOCAB_EOS) break;
            if (ids[i] == VOCAB_PAD || ids[i] == VOCAB_BOS || ids[i] == VOCAB_2FR || ids[i] == VOCAB_2VI)
                continue;
        }
        size_t wl = strlen(w);
        if (len + (len ? 1 : 0) + wl + 1 > buflen)
            return errmsg_set(err, errlen, "decoded text longer than %zu bytes", buflen - 1);
        if (len) buf[len++] = ' ';
        memcpy(buf + len, w, wl + 1);
        len += wl;
    }
    return (int)len;
}
