/* tokjson_text.c — text that remembers where each byte came from, Unicode
 * classes, patterns and the normalizers of tokenizer.json (tokjson.h).
 *
 * Alignments: every byte of a TjStr carries the input bytes it stands for, so
 * a token's place in the typed text survives lowercasing, accents stripped,
 * "▁" prepended.  A character made from several (NFC) spans them all; a
 * character inserted (a prepended "▁", the spaces around a CJK ideograph)
 * spans the character it was inserted at. */
#include "tokenize/tokjson_text.h"
#include "core/errmsg.h"
#include "core/sizes.h"
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

/* ---- the file's JSON ---- */

const cJSON *tj_get(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return cJSON_IsNull(v) ? NULL : v;
}

int tj_fail(const TjCtx *c, const char *where, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return errmsg_set(c->err, c->errlen, "%s: %s: %s", c->file, where, msg);
}

int tj_bool(const cJSON *o, const char *key, int dflt) {
    const cJSON *v = tj_get(o, key);
    return !v ? dflt : cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

const char *tj_str(const cJSON *o, const char *key) {
    const cJSON *v = tj_get(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

char *tj_dup(const char *s, int *bad) {
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *bad = 1;
    return d;
}

/* ---- TjStr and TjList ---- */

/* The work PCRE2 may do on a text, in its steps (backtracking points; 10 to
 * 200 ns each here).  One match limit for every place let a crafted pattern
 * take 9 ms a character (94 s for 10,000), since PCRE2 counts the limit anew
 * at each place.  So the text has a budget, TJ_STEPS_BASE + TJ_STEPS_PER_BYTE
 * a byte: the pattern is tried at each place in turn (anchored there) with a
 * limit of TJ_STEPS_FIRST, raised fourfold while the place needs more and
 * the budget allows, never past TJ_MATCH_LIMIT; every try is charged its
 * limit.  Real patterns (GPT-2's, Llama 3's, Qwen's) need a few dozen steps a
 * place, and a long run of spaces one costly place (Llama 3's \s*[\r\n]+);
 * a text that needs more is an error, never a silently different split.  The
 * heap limit (KiB) bounds the backtracking memory of one try. */
#define TJ_STEPS_FIRST 64u
#define TJ_STEPS_BASE 1000000L
#define TJ_STEPS_PER_BYTE 256L
#define TJ_MATCH_LIMIT 10000000u
#define TJ_HEAP_LIMIT_KIB (64u << 10)

/* Room for k more bytes (and the NUL).  Sizes in size_t, checked: a text
 * never grows past TJ_TEXT_MAX bytes, so n and cap stay far inside an int. */
static int tjstr_room(TjStr *t, int k) {
    size_t need, cap = t->cap ? (size_t)t->cap : 32, al_bytes;
    if (k < 0 || !size_add(&need, (size_t)t->n, (size_t)k) || !size_add(&need, need, 1) || need > TJ_TEXT_MAX + 1u)
        return -1;
    if (need <= (size_t)t->cap) return 0;
    while (cap < need) cap = cap > TJ_TEXT_MAX / 2 ? TJ_TEXT_MAX + 1u : cap * 2;
    if (!size_mul(&al_bytes, cap, sizeof *t->al)) return -1;
    char *s = realloc(t->s, cap);
    if (!s) return -1;
    t->s = s;
    TjSpan *al = realloc(t->al, al_bytes);
    if (!al) return -1;
    t->al = al;
    t->cap = (int)cap;
    return 0;
}

long tj_growth_limit(long n) {
    long lim = n * TJ_GROWTH + TJ_GROWTH_SLACK;   /* n <= TJ_TEXT_MAX: no overflow */
    return lim < TJ_TEXT_MAX ? lim : TJ_TEXT_MAX;
}

int tj_why_say(const TjWhy *w, char *err, size_t errlen) {
    const char *where = w && w->where ? w->where : "the tokenizer";
    if (w && w->kind == TJ_WHY_GROWTH)
        return errmsg_set(err, errlen, "%s: refused: it turns %ld bytes of text into %ld (a part may grow a text %dx + "
                                       "%d bytes, at most %d MiB)", where, w->from, w->to, TJ_GROWTH, TJ_GROWTH_SLACK,
                          TJ_TEXT_MAX >> 20);
    if (w && w->kind == TJ_WHY_MATCH_LIMIT)
        return errmsg_set(err, errlen, "%s: refused: its regex backtracks too much on this text (a text may cost "
                                       "PCRE2 %ld steps + %ld a byte)", where, TJ_STEPS_BASE, TJ_STEPS_PER_BYTE);
    return errmsg_set(err, errlen, "%s: out of memory", where);
}

int tjstr_put(TjStr *t, const char *p, int k, TjSpan sp) {
    if (tjstr_room(t, k)) return -1;
    memcpy(t->s + t->n, p, (size_t)k);
    for (int i = 0; i < k; i++) t->al[t->n + i] = sp;
    t->n += k;
    t->s[t->n] = '\0';
    return 0;
}

int tjstr_put_cp(TjStr *t, int32_t c, TjSpan sp) {
    utf8proc_uint8_t b[4];
    utf8proc_ssize_t k = utf8proc_encode_char(c, b);
    return k > 0 ? tjstr_put(t, (const char *)b, (int)k, sp) : -1;
}

int tjstr_slice(TjStr *out, const TjStr *in, int a, int b) {
    if (b <= a) return 0;
    if (tjstr_room(out, b - a)) return -1;
    memcpy(out->s + out->n, in->s + a, (size_t)(b - a));
    memcpy(out->al + out->n, in->al + a, (size_t)(b - a) * sizeof *in->al);
    out->n += b - a;
    out->s[out->n] = '\0';
    return 0;
}

TjSpan tjstr_span(const TjStr *t, int i, int k) {
    TjSpan sp = {t->al[i].start, t->al[i + k - 1].end};
    return sp;
}

void tjstr_free(TjStr *t) {
    if (!t) return;
    free(t->s);
    free(t->al);
    memset(t, 0, sizeof *t);
}

int tjlist_take(TjList *l, TjStr *s) {
    if (l->n == l->cap) {
        if (l->cap > INT_MAX / 2) return -1;   /* the doubling would wrap */
        int cap = l->cap ? l->cap * 2 : 16;
        TjStr *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *s;
    memset(s, 0, sizeof *s);
    return 0;
}

void tjlist_free(TjList *l) {
    if (!l) return;
    for (int i = 0; i < l->n; i++) tjstr_free(&l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

int tjspans_add(TjSpans *l, int a, int b) {
    if (l->n == l->cap) {
        if (l->cap > INT_MAX / 2) return -1;   /* the doubling would wrap */
        int cap = l->cap ? l->cap * 2 : 16;
        TjSpan *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].start = a;
    l->v[l->n++].end = b;
    return 0;
}

/* ---- UTF-8 ---- */

int tj_utf8_next(const char *s, int n, int i, int32_t *c) {
    utf8proc_int32_t x;
    utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i, n - i, &x);
    if (k <= 0) { *c = 0xFFFD; return 1; }   /* never on checked text */
    *c = x;
    return (int)k;
}

int tj_utf8_valid(const char *s, size_t n) {
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (i + 8 <= n) {   /* eight ASCII bytes at a time */
            uint64_t w;
            memcpy(&w, p + i, 8);
            if (!(w & 0x8080808080808080ULL)) { i += 8; continue; }
        }
        if (p[i] < 0x80) { i++; continue; }
        int k = p[i] >= 0xC2 && p[i] <= 0xDF ? 2 : p[i] >= 0xE0 && p[i] <= 0xEF ? 3 : p[i] >= 0xF0 && p[i] <= 0xF4 ? 4 : 0;
        if (!k || i + (size_t)k > n) return 0;
        unsigned lo = p[i] == 0xE0 ? 0xA0 : p[i] == 0xF0 ? 0x90 : 0x80, hi = p[i] == 0xED ? 0x9F : p[i] == 0xF4 ? 0x8F : 0xBF;
        if (p[i + 1] < lo || p[i + 1] > hi) return 0;
        for (int j = 2; j < k; j++)
            if ((p[i + j] & 0xC0) != 0x80) return 0;
        i += (size_t)k;
    }
    return 1;
}

int32_t tj_one_char(const char *s) {
    if (!s || !*s) return -1;
    int n = (int)strlen(s);
    int32_t c;
    int k = tj_utf8_next(s, n, 0, &c);
    return k == n ? c : -1;
}

/* ---- Unicode classes ---- */

int tj_is_space(int32_t c) {
    return (c >= 9 && c <= 13) || c == 32 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Code points the library's tables for punctuation, control characters and
 * marks (the unicode_categories crate, older than Unicode 9) do not know,
 * where utf8proc (Unicode 15) says mark, format character or punctuation:
 * the library leaves them inside words.  Found by running every code point
 * below U+40000 through both (tests/test_tokjson.py checks each one). */
static const int32_t UNKNOWN_TO_LIBRARY[][2] = {
    {0x61D, 0x61D}, {0x7FD, 0x7FD}, {0x890, 0x891}, {0x898, 0x89F}, {0x8CA, 0x8E2}, {0x9FD, 0x9FE}, {0xA76, 0xA76},
    {0xAFA, 0xAFF}, {0xB55, 0xB55}, {0xC04, 0xC04}, {0xC3C, 0xC3C}, {0xC77, 0xC77}, {0xC84, 0xC84}, {0xD00, 0xD00},
    {0xD3B, 0xD3C}, {0xD81, 0xD81}, {0xEBA, 0xEBA}, {0xECE, 0xECE}, {0x180F, 0x180F}, {0x1885, 0x1886},
    {0x1ABF, 0x1ACE}, {0x1B7D, 0x1B7E}, {0x1DF6, 0x1DFB}, {0x2E43, 0x2E4F}, {0x2E52, 0x2E5D}, {0xA82C, 0xA82C},
    {0xA8C5, 0xA8C5}, {0xA8FF, 0xA8FF}, {0xA9BD, 0xA9BD}, {0x10D24, 0x10D27}, {0x10EAB, 0x10EAD},
    {0x10EFD, 0x10EFF}, {0x10F46, 0x10F50}, {0x10F55, 0x10F59}, {0x10F82, 0x10F89}, {0x11070, 0x11070},
    {0x11073, 0x11074}, {0x110C2, 0x110C2}, {0x110CD, 0x110CD}, {0x111CF, 0x111CF},
    {0x1123E, 0x1123E}, {0x11241, 0x11241}, {0x1133B, 0x1133B}, {0x11438, 0x1143F}, {0x11442, 0x11444},
    {0x11446, 0x11446}, {0x1144B, 0x1144F}, {0x1145A, 0x1145B}, {0x1145D, 0x1145E}, {0x11660, 0x1166C},
    {0x116B9, 0x116B9}, {0x1182F, 0x11837}, {0x11839, 0x1183B}, {0x1193B, 0x1193C}, {0x1193E, 0x1193E},
    {0x11943, 0x11946}, {0x119D4, 0x119D7}, {0x119DA, 0x119DB}, {0x119E0, 0x119E0}, {0x119E2, 0x119E2},
    {0x11A01, 0x11A0A}, {0x11A33, 0x11A38}, {0x11A3B, 0x11A47}, {0x11A51, 0x11A56}, {0x11A59, 0x11A5B},
    {0x11A8A, 0x11A96}, {0x11A98, 0x11A9C}, {0x11A9E, 0x11AA2}, {0x11B00, 0x11B09}, {0x11C30, 0x11C36},
    {0x11C38, 0x11C3D}, {0x11C3F, 0x11C3F}, {0x11C41, 0x11C45}, {0x11C70, 0x11C71}, {0x11C92, 0x11CA7},
    {0x11CAA, 0x11CB0}, {0x11CB2, 0x11CB3}, {0x11CB5, 0x11CB6}, {0x11D31, 0x11D36}, {0x11D3A, 0x11D3A},
    {0x11D3C, 0x11D3D}, {0x11D3F, 0x11D45}, {0x11D47, 0x11D47}, {0x11D90, 0x11D91}, {0x11D95, 0x11D95},
    {0x11D97, 0x11D97}, {0x11EF3, 0x11EF4}, {0x11EF7, 0x11EF8}, {0x11F00, 0x11F01}, {0x11F36, 0x11F3A},
    {0x11F40, 0x11F40}, {0x11F42, 0x11F4F}, {0x11FFF, 0x11FFF}, {0x12FF1, 0x12FF2}, {0x13430, 0x13440},
    {0x13447, 0x13455}, {0x16E97, 0x16E9A}, {0x16F4F, 0x16F4F}, {0x16FE2, 0x16FE2}, {0x16FE4, 0x16FE4},
    {0x1CF00, 0x1CF2D}, {0x1CF30, 0x1CF46}, {0x1E000, 0x1E006}, {0x1E008, 0x1E018}, {0x1E01B, 0x1E021},
    {0x1E023, 0x1E024}, {0x1E026, 0x1E02A}, {0x1E08F, 0x1E08F}, {0x1E130, 0x1E136}, {0x1E2AE, 0x1E2AE},
    {0x1E2EC, 0x1E2EF}, {0x1E4EC, 0x1E4EF}, {0x1E944, 0x1E94A}, {0x1E95E, 0x1E95F}
};
/* CANADIAN SYLLABICS CHI SIGN, SHARADA SANDHI MARK: Po there, So and Mn now */
#define OLD_PUNCT(c) ((c) == 0x166D || (c) == 0x111C9)
#define OLD_MN 0x1734      /* HANUNOO SIGN PAMUDPOD: Mn there, Mc now */

static int unknown_to_library(int32_t c) {
    int lo = 0, hi = (int)(sizeof UNKNOWN_TO_LIBRARY / sizeof UNKNOWN_TO_LIBRARY[0]) - 1;
    if (c < 0x600) return 0;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (c < UNKNOWN_TO_LIBRARY[mid][0]) hi = mid - 1;
        else if (c > UNKNOWN_TO_LIBRARY[mid][1]) lo = mid + 1;
        else return 1;
    }
    return 0;
}

int tj_is_punct(int32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return 1;
    if (OLD_PUNCT(c)) return 1;
    utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO && !unknown_to_library(c);
}

int tj_is_digit(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return k == UTF8PROC_CATEGORY_ND || k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_NO;
}

/* The symbols that are Other_Alphabetic: circled and squared letters. */
static int alphabetic_symbol(int32_t c) {
    return (c >= 0x24B6 && c <= 0x24E9) || (c >= 0x1F130 && c <= 0x1F149) || (c >= 0x1F150 && c <= 0x1F169) ||
           (c >= 0x1F170 && c <= 0x1F189);
}

int tj_is_word(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_ME) || k == UTF8PROC_CATEGORY_ND ||
           k == UTF8PROC_CATEGORY_NL || k == UTF8PROC_CATEGORY_PC || c == 0x200C || c == 0x200D ||
           alphabetic_symbol(c);
}

/* BertNormalizer's control characters: categories Cc, Cf, Co (Cs cannot
 * occur) except tab, LF, CR.  Unassigned code points (Cn) stay, as the
 * library's unicode_categories::is_other leaves them. */
static int is_control(int32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return 0;
    utf8proc_category_t k = utf8proc_category(c);
    return (k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CO) && !unknown_to_library(c);
}

/* BertNormalizer's nonspacing marks (category Mn in the library's tables). */
static int is_bert_mark(int32_t c) {
    return c == OLD_MN || (utf8proc_category(c) == UTF8PROC_CATEGORY_MN && !unknown_to_library(c) && !OLD_PUNCT(c));
}

/* ---- transformers' BertTokenizer (Python) classes, Unicode of today ---- */

int tj_py_is_space(int32_t c) {
    return (c >= 9 && c <= 13) || (c >= 28 && c <= 32) || c == 0x85 || c == 0x2028 || c == 0x2029 ||
           utf8proc_category(c) == UTF8PROC_CATEGORY_ZS;
}

int tj_py_is_punct(int32_t c) {
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126)) return 1;
    utf8proc_category_t k = utf8proc_category(c);
    return k >= UTF8PROC_CATEGORY_PC && k <= UTF8PROC_CATEGORY_PO;
}

/* Control characters: categories C* except tab, LF, CR. */
static int py_is_control(int32_t c) {
    if (c == '\t' || c == '\n' || c == '\r') return 0;
    utf8proc_category_t k = utf8proc_category(c);
    return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_CN ||
           k == UTF8PROC_CATEGORY_CO || k == UTF8PROC_CATEGORY_CS;
}

static int py_is_cjk(int32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

static int py_is_cased(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return k == UTF8PROC_CATEGORY_LU || k == UTF8PROC_CATEGORY_LL || k == UTF8PROC_CATEGORY_LT;
}

static int py_is_case_ignorable(int32_t c) {
    utf8proc_category_t k = utf8proc_category(c);
    return c == '\'' || c == '.' || c == ':' || c == 0x2019 || c == 0xB7 || k == UTF8PROC_CATEGORY_MN ||
           k == UTF8PROC_CATEGORY_ME || k == UTF8PROC_CATEGORY_CF || k == UTF8PROC_CATEGORY_LM ||
           k == UTF8PROC_CATEGORY_SK;
}

/* Σ at i is final: a cased letter before it and none after (case-ignorables
 * skipped); white space is neither, so the word's edges stop the search. */
static int py_final_sigma(const int32_t *cp, int n, int i) {
    int j = i - 1;
    while (j >= 0 && py_is_case_ignorable(cp[j])) j--;
    if (j < 0 || !py_is_cased(cp[j])) return 0;
    j = i + 1;
    while (j < n && py_is_case_ignorable(cp[j])) j++;
    return j >= n || !py_is_cased(cp[j]);
}

static int is_chinese(int32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
           (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

/* ---- GPT-2's bytes as characters: bytes 33–126, 161–172, 174–255 stand for
 * themselves, the other 68 for U+0100 onwards in byte order. ---- */

int32_t tj_byte_char(int b) {
    if (b <= 32) return 256 + b;
    if (b >= 127 && b <= 160) return 162 + b;
    if (b == 173) return 323;
    return b;
}

int tj_char_byte(int32_t c) {
    if ((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || (c >= 174 && c <= 255)) return (int)c;
    if (c >= 256 && c <= 288) return (int)c - 256;
    if (c >= 289 && c <= 322) return (int)c - 162;
    if (c == 323) return 173;
    return -1;
}

/* ---- patterns ---- */


/* Oniguruma's Unicode \s (tab to CR, NEL, Zs, Zl, Zp) and \w (UTS #18's
 * word: Alphabetic, marks, Nd, Pc, the joiners; not ² or ½), as the
 * library's patterns see them (checked against it: tests/test_tokjson.py). */
#define ONIG_SPACE "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
#define ONIG_WORD "\\p{L}\\p{M}\\p{Nd}\\p{Nl}\\p{Pc}\\x{200C}\\x{200D}\\x{24B6}-\\x{24E9}\\x{1F130}-\\x{1F149}" \
                  "\\x{1F150}-\\x{1F169}\\x{1F170}-\\x{1F189}"

/* The escape \x of an Oniguruma pattern as PCRE2 says it, or NULL when the
 * same. */
static const char *onig_escape(char x, int in_class) {
    switch (x) {
    case 'w': return in_class ? ONIG_WORD : "[" ONIG_WORD "]";
    case 'W': return in_class ? NULL : "[^" ONIG_WORD "]";
    case 's': return in_class ? ONIG_SPACE : "[" ONIG_SPACE "]";
    case 'S': return in_class ? NULL : "[^" ONIG_SPACE "]";
    case 'h': return in_class ? "0-9a-fA-F" : "[0-9a-fA-F]";
    case 'H': return in_class ? NULL : "[^0-9a-fA-F]";
    default: return NULL;
    }
}

/* The PCRE2 spelling of an Oniguruma pattern (malloc'd), or NULL. */
static char *onig_to_pcre2(const char *p) {
    size_t n = strlen(p), k = 0;
    char *o = malloc(n * 80 + 1);   /* an escape of 2 bytes grows to at most 130 */
    if (!o) return NULL;
    int depth = 0;   /* nesting of character classes */
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\\' && i + 1 < n) {
            const char *r = onig_escape(p[i + 1], depth > 0);
            if (r) { memcpy(o + k, r, strlen(r)); k += strlen(r); }
            else { o[k++] = p[i]; o[k++] = p[i + 1]; }
            i++;
        } else if (p[i] == '[' && depth > 0 && p[i + 1] == ':') {   /* [:alpha:] */
            const char *end = strstr(p + i, ":]");
            size_t len = end ? (size_t)(end - (p + i)) + 2 : 1;
            memcpy(o + k, p + i, len);
            k += len;
            i += len - 1;
        } else if (p[i] == '[') {
            depth++;
            o[k++] = p[i];
            if (p[i + 1] == '^') o[k++] = p[++i];
            if (p[i + 1] == ']') o[k++] = p[++i];   /* a leading ] is literal */
        } else {
            if (p[i] == ']' && depth > 0) depth--;
            o[k++] = p[i];
        }
    }
    o[k] = '\0';
    return o;
}

int tj_pattern_regex(TjPattern *p, const char *onig, const char *where, const TjCtx *c) {
    char *pat = onig_to_pcre2(onig);
    if (!pat) return tj_fail(c, where, "out of memory");
    int code;
    PCRE2_SIZE at;
    p->re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &code, &at,
                          NULL);
    free(pat);
    if (!p->re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(code, msg, sizeof msg);
        return tj_fail(c, where, "the regex \"%.60s\" does not compile: %s", onig, (const char *)msg);
    }
    return 0;
}

int tj_pattern_parse(TjPattern *p, const cJSON *j, const char *where, const TjCtx *c) {
    const char *lit = tj_str(j, "String"), *re = tj_str(j, "Regex");
    if (lit) {
        int bad = 0;
        p->lit = tj_dup(lit, &bad);
        return bad ? tj_fail(c, where, "out of memory") : 0;
    }
    if (re) return tj_pattern_regex(p, re, where, c);
    return tj_fail(c, where, "\"pattern\" must be {\"String\": …} or {\"Regex\": …}");
}

static int find_literal(const char *lit, const char *s, int n, TjSpans *out) {
    int k = (int)strlen(lit);
    if (k == 0) return 0;
    for (int i = 0; i + k <= n;) {
        const char *m = memmem(s + i, (size_t)(n - i), lit, (size_t)k);
        if (!m) break;
        int a = (int)(m - s);
        if (tjspans_add(out, a, a + k)) return -1;
        i = a + k;
    }
    return 0;
}

/* One try of the pattern anchored at off, under the text's budget (*spent
 * of budget steps so far): the PCRE2 result, or PCRE2_ERROR_MATCHLIMIT when
 * the place needs more than the budget leaves. */
static int match_at(const pcre2_code *re, const char *s, int n, int off, pcre2_match_data *md,
                    pcre2_match_context *mc, long *spent, long budget) {
    for (uint32_t lim = TJ_STEPS_FIRST;; lim *= 4) {
        if (*spent + (long)lim > budget) return PCRE2_ERROR_MATCHLIMIT;
        *spent += (long)lim;
        pcre2_set_match_limit(mc, lim);
        int r = pcre2_match(re, (PCRE2_SPTR)s, (PCRE2_SIZE)n, (PCRE2_SIZE)off, PCRE2_ANCHORED | PCRE2_NO_UTF_CHECK,
                            md, mc);
        if (r != PCRE2_ERROR_MATCHLIMIT || lim >= TJ_MATCH_LIMIT) return r;
    }
}

int tj_pattern_find(const TjPattern *p, const char *s, int n, TjSpans *out, TjWhy *why) {
    if (p->lit) {
        if (find_literal(p->lit, s, n, out) == 0) return 0;
        if (why) why->kind = TJ_WHY_MEMORY;
        return -1;
    }
    if (!p->re) return 0;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(p->re, NULL);
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    if (!md || !mc) {
        pcre2_match_data_free(md);
        pcre2_match_context_free(mc);
        if (why) why->kind = TJ_WHY_MEMORY;
        return -1;
    }
    pcre2_set_heap_limit(mc, TJ_HEAP_LIMIT_KIB);
    long spent = 0, budget = TJ_STEPS_BASE + TJ_STEPS_PER_BYTE * (long)n;
    int off = 0, last_end = -1, rc = 0;
    while (off <= n) {   /* each place in turn, left to right, as an unanchored PCRE2 match would */
        int r = match_at(p->re, s, n, off, md, mc, &spent, budget);
        if (r < 0 && r != PCRE2_ERROR_NOMATCH) {
            rc = -1;
            if (why)
                why->kind = r == PCRE2_ERROR_MATCHLIMIT || r == PCRE2_ERROR_DEPTHLIMIT || r == PCRE2_ERROR_HEAPLIMIT
                          ? TJ_WHY_MATCH_LIMIT : TJ_WHY_MEMORY;
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        int b = r < 0 ? -1 : (int)ov[1];
        if (r < 0 || (b == off && b == last_end)) {   /* no match here, or an empty one right after the last */
            int32_t ch;
            off += off < n ? tj_utf8_next(s, n, off, &ch) : 1;
            continue;
        }
        if (tjspans_add(out, off, b)) {
            if (why) why->kind = TJ_WHY_MEMORY;
            rc = -1;
            break;
        }
        off = last_end = b;
    }
    pcre2_match_data_free(md);
    pcre2_match_context_free(mc);
    return rc;
}

void tj_pattern_free(TjPattern *p) {
    if (!p) return;
    free(p->lit);
    if (p->re) pcre2_code_free(p->re);
    memset(p, 0, sizeof *p);
}

/* ---- normalizers ---- */

/* Replaces *s by *out (out is zeroed). */
static void take(TjStr *s, TjStr *out) {
    tjstr_free(s);
    *s = *out;
    memset(out, 0, sizeof *out);
}

/* utf8proc's form of s[0, n) (malloc'd, NUL-terminated) and its length. */
static char *unicode_form(const char *s, int n, int options, int *len) {
    utf8proc_uint8_t *d = NULL;
    utf8proc_ssize_t k = utf8proc_map((const utf8proc_uint8_t *)s, n, &d, (utf8proc_option_t)options);
    if (k < 0) return NULL;
    *len = (int)k;
    return (char *)d;
}

/* Code points being normalized, each with the number of characters of the
 * text before it that it stands for: 1 for a character kept, 0 for one a
 * decomposition added, 2 or more for a composition.  This is the library's
 * "change" (0, +1, -N), and its alignments follow from it: a character that
 * stands for some takes the span of the first, one that stands for none the
 * span of the character before (unicode-normalization-alignments). */
typedef struct { int32_t *cp; int *n; int len, cap; } Cps;

static int cps_add(Cps *c, int32_t x, int n) {
    if (c->len == c->cap) {
        if (c->cap > INT_MAX / 2) return -1;   /* the doubling would wrap */
        int cap = c->cap ? c->cap * 2 : 64;
        int32_t *p = realloc(c->cp, (size_t)cap * sizeof *p);
        if (p) c->cp = p;
        int *q = realloc(c->n, (size_t)cap * sizeof *q);
        if (q) c->n = q;
        if (!p || !q) return -1;
        c->cap = cap;
    }
    c->cp[c->len] = x;
    c->n[c->len++] = n;
    return 0;
}

static int ccc(int32_t c) {
    return utf8proc_get_property(c)->combining_class;
}

/* NFD or NFKD: each character decomposed on its own, then the marks put in
 * canonical order as utf8proc does (each keeping its count). */
static int decompose(const TjStr *s, int options, Cps *out) {
    for (int i = 0; i < s->n;) {
        int32_t c, buf[32];
        int k = tj_utf8_next(s->s, s->n, i, &c), last = 0;
        utf8proc_ssize_t m = utf8proc_decompose_char(c, buf, 32, (utf8proc_option_t)options, &last);
        if (m < 0 || m > 32) return -1;
        for (int j = 0; j < m; j++)
            if (cps_add(out, buf[j], j == 0)) return -1;
        i += k;
    }
    for (int p = 0; p + 1 < out->len;) {
        int a = ccc(out->cp[p]), b = ccc(out->cp[p + 1]);
        if (a > b && b > 0) {
            int32_t x = out->cp[p]; out->cp[p] = out->cp[p + 1]; out->cp[p + 1] = x;
            int y = out->n[p]; out->n[p] = out->n[p + 1]; out->n[p + 1] = y;
            p = p > 0 ? p - 1 : p + 1;
        } else p++;
    }
    return 0;
}

/* The primary composite of a and b, or 0 (utf8proc composes the pair). */
static int32_t compose_pair(int32_t a, int32_t b) {
    if (a < 0x80 && b < 0x80) return 0;
    utf8proc_uint8_t in[8];
    utf8proc_ssize_t k = utf8proc_encode_char(a, in);
    k += utf8proc_encode_char(b, in + k);
    utf8proc_uint8_t *out = NULL;
    utf8proc_ssize_t m = utf8proc_map(in, k, &out, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    utf8proc_int32_t c = 0;
    if (m <= 0 || utf8proc_iterate(out, m, &c) != m) c = 0;
    free(out);
    return c;
}

/* Canonical composition (UAX #15) in place: a mark joins the last starter
 * when nothing between blocks it, and the composite stands for both. */
static void compose(Cps *d) {
    int o = 0, starter = -1, last_cc = -1;   /* last_cc -1: right after the starter */
    for (int i = 0; i < d->len; i++) {
        int32_t c = d->cp[i];
        int cc = ccc(c);
        if (starter >= 0 && (last_cc == -1 || (last_cc != 0 && last_cc < cc))) {
            int32_t x = compose_pair(d->cp[starter], c);
            if (x) { d->cp[starter] = x; d->n[starter] += d->n[i]; continue; }
        }
        if (cc == 0) { starter = o; last_cc = -1; }
        else last_cc = cc;
        d->cp[o] = c;
        d->n[o++] = d->n[i];
    }
    d->len = o;
}

/* The normalized code points as text, aligned by their counts. */
static int cps_text(const Cps *d, const TjStr *s, TjStr *out) {
    TjSpan *orig = malloc(((size_t)s->n + 1) * sizeof *orig);   /* the span of each character */
    if (!orig) return -1;
    int m = 0, rc = 0;
    for (int i = 0; i < s->n;) {
        int32_t c;
        int k = tj_utf8_next(s->s, s->n, i, &c);
        orig[m++] = tjstr_span(s, i, k);
        i += k;
    }
    for (int i = 0, p = 0; i < d->len && rc == 0; i++) {
        TjSpan sp = d->n[i] > 0 && p < m ? orig[p] : p > 0 ? orig[p - 1] : (TjSpan){s->al[0].start, s->al[0].start};
        p += d->n[i];
        rc = tjstr_put_cp(out, d->cp[i], sp);
    }
    free(orig);
    return rc;
}

/* NFC, NFD, NFKC or NFKD with the library's alignments: each character
 * decomposed on its own, marks reordered, then composed for NFC and NFKC.
 * The result is checked against utf8proc's form of the whole text; should
 * they ever disagree, utf8proc's text is kept and every character spans the
 * whole. */
static int norm_unicode(TjStr *s, int options) {
    int ascii = 1;
    for (int i = 0; i < s->n && ascii; i++) ascii = (unsigned char)s->s[i] < 0x80;
    if (ascii || s->n == 0) return 0;
    int whole_n, rc;
    char *whole = unicode_form(s->s, s->n, options, &whole_n);
    if (!whole) return -1;
    TjStr out = {0};
    Cps d = {0};
    rc = decompose(s, (options & UTF8PROC_COMPAT) | UTF8PROC_DECOMPOSE, &d);
    if (rc == 0 && (options & UTF8PROC_COMPOSE)) compose(&d);
    if (rc == 0) rc = cps_text(&d, s, &out);
    free(d.cp);
    free(d.n);
    if (rc == 0 && (out.n != whole_n || memcmp(out.s, whole, (size_t)whole_n) != 0)) {
        out.n = 0;
        rc = tjstr_put(&out, whole, whole_n, tjstr_span(s, 0, s->n));
    }
    free(whole);
    if (rc == 0) take(s, &out);
    tjstr_free(&out);
    return rc;
}

/* Rust's char::to_lowercase, character by character (İ → i̇). */
static int norm_lowercase(TjStr *s) {
    TjStr out = {0};
    int rc = 0;
    for (int i = 0; i < s->n && rc == 0;) {
        int32_t c;
        int k = tj_utf8_next(s->s, s->n, i, &c);
        TjSpan sp = tjstr_span(s, i, k);
        if (c == 0x130) rc = tjstr_put_cp(&out, 'i', sp) || tjstr_put_cp(&out, 0x307, sp);
        else if (c < 0x80) rc = tjstr_put_cp(&out, c >= 'A' && c <= 'Z' ? c + 32 : c, sp);
        else rc = tjstr_put_cp(&out, utf8proc_tolower(c), sp);
        i += k;
    }
    if (rc == 0) take(s, &out);
    tjstr_free(&out);
    return rc;
}

enum { MARKS_ALL, MARKS_BERT, MARKS_MN };

/* Drops every character of category M* (StripAccents), BertNormalizer's
 * marks (Mn in the library's tables) or Mn in today's. */
static int norm_drop_marks(TjStr *s, int which) {
    TjStr out = {0};
    int rc = 0;
    for (int i = 0; i < s->n && rc == 0;) {
        int32_t c;
        int k = tj_utf8_next(s->s, s->n, i, &c);
        utf8proc_category_t cat = utf8proc_category(c);
        int mark = which == MARKS_BERT ? is_bert_mark(c) : which == MARKS_MN ? cat == UTF8PROC_CATEGORY_MN
                 : cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME;
        if (!mark) rc = tjstr_put(&out, s->s + i, k, tjstr_span(s, i, k));
        i += k;
    }
    if (rc == 0) take(s, &out);
    tjstr_free(&out);
    return rc;
}

/* BertNormalizer: clean the text, space out CJK ideographs, strip accents
 * (NFD, then Mn dropped), lowercase. */
static int norm_bert(const TjNorm *nm, TjStr *s) {
    TjStr out = {0};
    int rc = 0;
    for (int i = 0; i < s->n && rc == 0;) {
        int32_t c;
        int k = tj_utf8_next(s->s, s->n, i, &c);
        TjSpan sp = tjstr_span(s, i, k);
        i += k;
        if (nm->clean) {
            if (c == 0 || c == 0xFFFD || is_control(c)) continue;
            if (c == '\t' || c == '\n' || c == '\r' || tj_is_space(c)) c = ' ';
        }
        if (nm->chinese && is_chinese(c)) {   /* the space before spans the byte before it, as the library's */
            TjSpan before = out.n ? out.al[out.n - 1] : (TjSpan){s->al[0].start, s->al[0].start};
            rc = tjstr_put_cp(&out, ' ', before) || tjstr_put_cp(&out, c, sp) || tjstr_put_cp(&out, ' ', sp);
        } else rc = tjstr_put_cp(&out, c, sp);
    }
    if (rc == 0) take(s, &out);
    tjstr_free(&out);
    if (rc == 0 && nm->strip_accents)
        rc = norm_unicode(s, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE) || norm_drop_marks(s, MARKS_BERT);
    if (rc == 0 && nm->lowercase) rc = norm_lowercase(s);
    return rc;
}

/* Python's str.lower() of the whole text: İ → i̇, a final Σ → ς. */
static int norm_lower_python(TjStr *s) {
    int32_t *cp = malloc(((size_t)s->n + 1) * sizeof *cp);
    TjSpan *sp = malloc(((size_t)s->n + 1) * sizeof *sp);
    TjStr out = {0};
    int n = 0, rc = cp && sp ? 0 : -1;
    for (int i = 0; i < s->n && rc == 0; n++) {
        int k = tj_utf8_next(s->s, s->n, i, &cp[n]);
        sp[n] = tjstr_span(s, i, k);
        i += k;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        int32_t c = cp[i];
        if (c == 0x130) rc = tjstr_put_cp(&out, 'i', sp[i]) || tjstr_put_cp(&out, 0x307, sp[i]);
        else rc = tjstr_put_cp(&out, c == 0x3A3 && py_final_sigma(cp, n, i) ? 0x3C2 : utf8proc_tolower(c), sp[i]);
    }
    if (rc == 0) take(s, &out);
    tjstr_free(&out);
    free(cp);
    free(sp);
    return rc;
}

/* BertNormalizer as transformers' BertTokenizer (Python) runs it: control
 * characters (C*, unassigned included) dropped, white space to spaces, CJK
 * ideographs spaced, NFC, then lowercase (str.lower) before the accents are
 * stripped (NFD, Mn dropped), with today's Unicode tables (utf8proc). */
static int norm_bert_python(const TjNorm *nm, TjStr *s) {
    TjStr out = {0};
    int rc = 0;
    for (int i = 0; i < s->n && rc == 0;) {
        int32_t c;
        int k = tj_utf8_next(s->s, s->n, i, &c);
        TjSpan sp = tjstr_span(s, i, k);
        i += k;
        if (c == 0 || c == 0xFFFD || py_is_control(c)) continue;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || utf8proc_category(c) == UTF8PROC_CATEGORY_ZS) c = ' ';
        if (py_is_cjk(c)) rc = tjstr_put_cp(&out, ' ', sp) || tjstr_put_cp(&out, c, sp) || tjstr_put_cp(&out, ' ', sp);
        else rc = tjstr_put_cp(&out, c, sp);
    }
    if (rc == 0) take(s, &out);
    tjstr_free(&out);
    if (rc == 0) rc = norm_unicode(s, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    if (rc == 0 && nm->lowercase) rc = norm_lower_python(s);
    if (rc == 0 && nm->strip_accents)
        rc = norm_unicode(s, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE) || norm_drop_marks(s, MARKS_MN);
    return rc;
}

/* Every match of the pattern replaced by content; the new characters span
 * the last character they replace (the byte before an empty match), as the
 * library aligns them. */
static int norm_replace(const TjNorm *nm, TjStr *s, long limit, TjWhy *why) {
    if (s->n == 0) return 0;   /* the library finds no match in empty text */
    TjSpans m = {0};
    TjStr out = {0};
    size_t clen = strlen(nm->content), kept = (size_t)s->n, added = 0, total = 0;
    int rc = tj_pattern_find(&nm->pat, s->s, s->n, &m, why), at = 0;
    for (int i = 0; i < m.n && rc == 0; i++) kept -= (size_t)(m.v[i].end - m.v[i].start);
    if (rc == 0 && (!size_mul(&added, (size_t)m.n, clen) || !size_add(&total, kept, added) || total > (size_t)limit)) {
        *why = (TjWhy){TJ_WHY_GROWTH, nm->where, s->n, total > (size_t)limit ? (long)total : LONG_MAX};
        rc = -1;
    }
    for (int i = 0; i < m.n && rc == 0; i++) {
        int a = m.v[i].start, b = m.v[i].end;
        TjSpan sp = b > 0 ? s->al[b - 1] : (TjSpan){s->al[0].start, s->al[0].start};
        rc = tjstr_slice(&out, s, at, a) || tjstr_put(&out, nm->content, (int)clen, sp);
        at = b;
    }
    if (rc == 0 && m.n > 0) rc = tjstr_slice(&out, s, at, s->n);
    if (rc == 0 && m.n > 0) take(s, &out);
    tjstr_free(&out);
    free(m.v);
    return rc;
}

static int norm_prepend(const TjNorm *nm, TjStr *s, long limit, TjWhy *why) {
    if (s->n == 0) return 0;
    size_t clen = strlen(nm->content);
    if (s->n > limit || clen > (size_t)(limit - s->n)) {
        *why = (TjWhy){TJ_WHY_GROWTH, nm->where, s->n, clen < (size_t)LONG_MAX - (size_t)s->n ? s->n + (long)clen : LONG_MAX};
        return -1;
    }
    TjStr out = {0};
    int32_t c;
    int k = tj_utf8_next(s->s, s->n, 0, &c);
    int rc = tjstr_put(&out, nm->content, (int)clen, tjstr_span(s, 0, k)) || tjstr_slice(&out, s, 0, s->n);
    if (rc == 0) take(s, &out);
    tjstr_free(&out);
    return rc;
}

static int norm_strip(const TjNorm *nm, TjStr *s) {
    int a = 0, b = s->n;
    while (nm->left && a < b) {
        int32_t c;
        int k = tj_utf8_next(s->s, s->n, a, &c);
        if (!tj_is_space(c)) break;
        a += k;
    }
    while (nm->right && b > a) {
        int j = b - 1;
        while (j > a && ((unsigned char)s->s[j] & 0xC0) == 0x80) j--;
        int32_t c;
        tj_utf8_next(s->s, s->n, j, &c);
        if (!tj_is_space(c)) break;
        b = j;
    }
    if (a == 0 && b == s->n) return 0;
    TjStr out = {0};
    int rc = tjstr_slice(&out, s, a, b);
    if (rc == 0) take(s, &out);
    tjstr_free(&out);
    return rc;
}

static int norm_byte_level(TjStr *s) {
    TjStr out = {0};
    int rc = 0;
    for (int i = 0; i < s->n && rc == 0; i++) rc = tjstr_put_cp(&out, tj_byte_char((unsigned char)s->s[i]), s->al[i]);
    if (rc == 0) take(s, &out);
    tjstr_free(&out);
    return rc;
}

/* One normalizer on s; the text may not grow past limit bytes. */
static int norm_step(const TjNorm *nm, TjStr *s, long limit, TjWhy *why) {
    switch (nm->kind) {
    case TJ_NORM_NFC: return norm_unicode(s, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    case TJ_NORM_NFD: return norm_unicode(s, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
    case TJ_NORM_NFKC: return norm_unicode(s, UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    case TJ_NORM_NFKD: return norm_unicode(s, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
    case TJ_NORM_LOWERCASE: return norm_lowercase(s);
    case TJ_NORM_STRIP_ACCENTS: return norm_drop_marks(s, MARKS_ALL);
    case TJ_NORM_BERT: return nm->python ? norm_bert_python(nm, s) : norm_bert(nm, s);
    case TJ_NORM_REPLACE: return norm_replace(nm, s, limit, why);
    case TJ_NORM_PREPEND: return norm_prepend(nm, s, limit, why);
    case TJ_NORM_STRIP: return norm_strip(nm, s);
    case TJ_NORM_BYTE_LEVEL: return norm_byte_level(s);
    }
    return 0;
}

/* nm on s (a Sequence: each part in turn), the text of from bytes growing to
 * at most limit: checked after every part, so a chain that multiplies the text
 * stops at the first part that passes the limit. */
static int norm_run(const TjNorm *nm, TjStr *s, long from, long limit, TjWhy *why) {
    if (nm->kind == TJ_NORM_SEQUENCE) {
        for (int i = 0; i < nm->n_sub; i++)
            if (norm_run(&nm->sub[i], s, from, limit, why)) return -1;
        return 0;
    }
    *why = (TjWhy){TJ_WHY_MEMORY, nm->where, 0, 0};
    if (norm_step(nm, s, limit, why)) return -1;
    if (s->n > limit) {
        *why = (TjWhy){TJ_WHY_GROWTH, nm->where, from, s->n};
        return -1;
    }
    return 0;
}

int tj_norm_apply(const TjNorm *nm, TjStr *s, TjWhy *why) {
    TjWhy w;
    int rc = norm_run(nm, s, s->n, tj_growth_limit(s->n), &w);
    if (rc && why) *why = w;
    return rc;
}

static const struct { const char *name; int kind; } NORM_KINDS[] = {
    {"NFC", TJ_NORM_NFC}, {"NFD", TJ_NORM_NFD}, {"NFKC", TJ_NORM_NFKC}, {"NFKD", TJ_NORM_NFKD},
    {"Lowercase", TJ_NORM_LOWERCASE}, {"StripAccents", TJ_NORM_STRIP_ACCENTS}, {"BertNormalizer", TJ_NORM_BERT},
    {"Replace", TJ_NORM_REPLACE}, {"Prepend", TJ_NORM_PREPEND}, {"Strip", TJ_NORM_STRIP},
    {"ByteLevel", TJ_NORM_BYTE_LEVEL}, {"Sequence", TJ_NORM_SEQUENCE},
};

static int norm_parse_sequence(TjNorm *nm, const cJSON *j, const char *where, const TjCtx *c) {
    const cJSON *list = tj_get(j, "normalizers");
    if (!cJSON_IsArray(list)) return tj_fail(c, where, "a Sequence needs a \"normalizers\" list");
    int n = cJSON_GetArraySize(list), i = 0;
    nm->sub = calloc((size_t)(n ? n : 1), sizeof *nm->sub);
    if (!nm->sub) return tj_fail(c, where, "out of memory");
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char w[256];
        snprintf(w, sizeof w, "%s.normalizers[%d]", where, i);
        nm->n_sub = i + 1;
        if (tj_norm_parse(&nm->sub[i], e, w, c)) return -1;
    }
    return 0;
}

int tj_norm_parse(TjNorm *nm, const cJSON *j, const char *where, const TjCtx *c) {
    const char *type = tj_str(j, "type");
    if (!cJSON_IsObject(j) || !type) return tj_fail(c, where, "a normalizer must be an object with a \"type\"");
    nm->kind = -1;
    for (size_t i = 0; i < sizeof NORM_KINDS / sizeof NORM_KINDS[0]; i++)
        if (!strcmp(type, NORM_KINDS[i].name)) nm->kind = NORM_KINDS[i].kind;
    if (nm->kind < 0) return tj_fail(c, where, "the normalizer \"%.40s\" is not supported", type);
    int bad = 0;
    nm->where = tj_dup(where, &bad);
    if (bad) return tj_fail(c, where, "out of memory");
    switch (nm->kind) {
    case TJ_NORM_BERT:
        nm->clean = tj_bool(j, "clean_text", 1);
        nm->chinese = tj_bool(j, "handle_chinese_chars", 1);
        nm->lowercase = tj_bool(j, "lowercase", 1);
        nm->strip_accents = tj_bool(j, "strip_accents", nm->lowercase);
        if (nm->clean < 0 || nm->chinese < 0 || nm->lowercase < 0 || nm->strip_accents < 0)
            return tj_fail(c, where, "BertNormalizer's options must be true, false or null");
        return 0;
    case TJ_NORM_STRIP:
        nm->left = tj_bool(j, "strip_left", 1);
        nm->right = tj_bool(j, "strip_right", 1);
        return nm->left < 0 || nm->right < 0 ? tj_fail(c, where, "Strip's options must be true or false") : 0;
    case TJ_NORM_REPLACE:
        if (!tj_str(j, "content")) return tj_fail(c, where, "Replace needs a \"content\" string");
        nm->content = tj_dup(tj_str(j, "content"), &bad);
        return bad ? tj_fail(c, where, "out of memory") : tj_pattern_parse(&nm->pat, tj_get(j, "pattern"), where, c);
    case TJ_NORM_PREPEND:
        if (!tj_str(j, "prepend")) return tj_fail(c, where, "Prepend needs a \"prepend\" string");
        nm->content = tj_dup(tj_str(j, "prepend"), &bad);
        return bad ? tj_fail(c, where, "out of memory") : 0;
    case TJ_NORM_SEQUENCE: return norm_parse_sequence(nm, j, where, c);
    default: return 0;
    }
}

void tj_norm_free(TjNorm *nm) {
    if (!nm) return;
    for (int i = 0; i < nm->n_sub; i++) tj_norm_free(&nm->sub[i]);
    free(nm->sub);
    tj_pattern_free(&nm->pat);
    free(nm->content);
    free(nm->where);
    memset(nm, 0, sizeof *nm);
}
