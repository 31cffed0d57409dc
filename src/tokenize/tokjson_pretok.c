/* tokjson_pretok.c — the pre-tokenizers of tokenizer.json (tokjson.h): they
 * cut each normalized piece into the words the model sees, as the tokenizers
 * library's NormalizedString::split does with its five behaviours. */
#include "tokenize/tokjson_pretok.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GPT-2's pattern, which the ByteLevel pre-tokenizer runs. */
#define BYTE_LEVEL_REGEX "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"
#define WHITESPACE_REGEX "\\w+|[^\\w\\s]+"

/* A cut of the text: bytes [start, end), a match of the pattern or not. */
typedef struct { int start, end, match; } Cut;

/* The matches and the text between them, in order, covering s[0, n). */
static Cut *cuts_of(const TjSpans *m, int n, int invert, int *count) {
    Cut *v = malloc(((size_t)m->n * 2 + 1) * sizeof *v);
    if (!v) return NULL;
    int k = 0, prev = 0;
    for (int i = 0; i < m->n; i++) {
        if (prev != m->v[i].start) v[k++] = (Cut){prev, m->v[i].start, invert};
        v[k++] = (Cut){m->v[i].start, m->v[i].end, !invert};
        prev = m->v[i].end;
    }
    if (prev != n) v[k++] = (Cut){prev, n, invert};
    *count = k;
    return v;
}

/* The behaviour applied to the cuts, in place: the pieces to keep (a cut with
 * match = -1 is removed).  Returns their number. */
static int behave(Cut *v, int n, int behavior) {
    int k = 0, prev_match = 0;
    switch (behavior) {
    case TJ_SPLIT_REMOVED:
        for (int i = 0; i < n; i++) if (!v[i].match) v[k++] = v[i];
        return k;
    case TJ_SPLIT_ISOLATED: return n;
    case TJ_SPLIT_CONTIGUOUS:
        for (int i = 0; i < n; i++) {
            if (k > 0 && v[i].match == prev_match) v[k - 1].end = v[i].end;
            else v[k++] = v[i];
            prev_match = v[i].match;
        }
        return k;
    case TJ_SPLIT_MERGED_PREV:
        for (int i = 0; i < n; i++) {
            if (k > 0 && v[i].match && !prev_match) v[k - 1].end = v[i].end;
            else v[k++] = v[i];
            prev_match = v[i].match;
        }
        return k;
    case TJ_SPLIT_MERGED_NEXT: {   /* from the right, then back in order */
        for (int i = n - 1; i >= 0; i--) {
            if (k > 0 && v[i].match && !prev_match) v[n - k].start = v[i].start;
            else v[n - 1 - k++] = v[i];
            prev_match = v[i].match;
        }
        memmove(v, v + n - k, (size_t)k * sizeof *v);
        return k;
    }
    }
    return n;
}

/* s cut by the matches (inverted: the text between them is the delimiter). */
static int split_by(const TjStr *s, const TjSpans *m, int invert, int behavior, TjList *out) {
    if (s->n == 0) return 0;
    int n, rc = 0;
    Cut *v = cuts_of(m, s->n, invert, &n);
    if (!v) return -1;
    n = behave(v, n, behavior);
    for (int i = 0; i < n && rc == 0; i++) {
        if (v[i].end <= v[i].start) continue;
        TjStr piece = {0};
        rc = tjstr_slice(&piece, s, v[i].start, v[i].end) || tjlist_take(out, &piece);
        tjstr_free(&piece);
    }
    free(v);
    return rc;
}

enum { CHARS_SPACE, CHARS_PUNCT, CHARS_DIGIT, CHARS_ONE, CHARS_PY_SPACE, CHARS_PY_PUNCT };

/* Every character of a class as its own match. */
static int char_matches(const TjStr *s, int cls, int32_t one, TjSpans *m) {
    for (int i = 0; i < s->n;) {
        int32_t c;
        int k = tj_utf8_next(s->s, s->n, i, &c);
        int hit = cls == CHARS_SPACE ? tj_is_space(c) : cls == CHARS_PUNCT ? tj_is_punct(c)
                : cls == CHARS_DIGIT ? tj_is_digit(c) : cls == CHARS_PY_SPACE ? tj_py_is_space(c)
                : cls == CHARS_PY_PUNCT ? tj_py_is_punct(c) : c == one;
        if (hit && tjspans_add(m, i, i + k)) return -1;
        i += k;
    }
    return 0;
}

static int split_chars(const TjStr *s, int cls, int32_t one, int behavior, TjList *out) {
    TjSpans m = {0};
    int rc = char_matches(s, cls, one, &m) || split_by(s, &m, 0, behavior, out);
    free(m.v);
    return rc;
}

static int split_pattern(const TjStr *s, const TjPattern *p, int invert, int behavior, TjList *out, TjWhy *why) {
    TjSpans m = {0};
    int rc = tj_pattern_find(p, s->s, s->n, &m, why) || split_by(s, &m, invert, behavior, out);
    free(m.v);
    return rc;
}

/* s with text prepended, spanning s's first character. */
static int prepend(TjStr *s, const char *text) {
    if (s->n == 0) return 0;
    TjStr o = {0};
    int32_t c;
    int k = tj_utf8_next(s->s, s->n, 0, &c);
    int rc = tjstr_put(&o, text, (int)strlen(text), tjstr_span(s, 0, k)) || tjstr_slice(&o, s, 0, s->n);
    if (rc == 0) { tjstr_free(s); *s = o; }
    else tjstr_free(&o);
    return rc;
}

/* Each byte as its GPT-2 character, aligned where the byte was. */
static int to_byte_chars(TjStr *s) {
    TjStr o = {0};
    int rc = 0;
    for (int i = 0; i < s->n && rc == 0; i++) rc = tjstr_put_cp(&o, tj_byte_char((unsigned char)s->s[i]), s->al[i]);
    if (rc == 0) { tjstr_free(s); *s = o; }
    else tjstr_free(&o);
    return rc;
}

static int pre_byte_level(const TjPre *p, TjStr *s, TjList *out, TjWhy *why) {
    if (p->add_prefix_space && s->s[0] != ' ' && prepend(s, " ")) return -1;
    int first = out->n;
    if (p->use_regex) {
        if (split_pattern(s, &p->pat, 0, TJ_SPLIT_ISOLATED, out, why)) return -1;
    } else if (tjlist_take(out, s)) return -1;
    for (int i = first; i < out->n; i++)
        if (to_byte_chars(&out->v[i])) return -1;
    return 0;
}

static int pre_metaspace(const TjPre *p, TjStr *s, TjList *out) {
    char rep[8] = {0};
    TjStr o = {0};
    TjSpan sp = {0, 0};
    if (tjstr_put_cp(&o, p->repl, sp)) return -1;
    memcpy(rep, o.s, (size_t)o.n);
    o.n = 0;
    int rc = 0;
    for (int i = 0; i < s->n && rc == 0; i++) {   /* ' ' → the replacement */
        if (s->s[i] == ' ') rc = tjstr_put(&o, rep, (int)strlen(rep), s->al[i]);
        else rc = tjstr_slice(&o, s, i, i + 1);
    }
    if (rc) { tjstr_free(&o); return -1; }
    tjstr_free(s);
    *s = o;
    int starts = s->n >= (int)strlen(rep) && !memcmp(s->s, rep, strlen(rep));
    if (!starts && (p->prepend == TJ_PREPEND_ALWAYS || (p->prepend == TJ_PREPEND_FIRST && s->al[0].start == 0)) &&
        prepend(s, rep))
        return -1;
    if (!p->split) return tjlist_take(out, s);
    return split_chars(s, CHARS_ONE, p->repl, TJ_SPLIT_MERGED_NEXT, out);
}

int tj_pre_gpt2(TjPre *p, const TjCtx *c) {
    int code;
    PCRE2_SIZE at;
    p->kind = TJ_PRE_BYTE_LEVEL;
    p->use_regex = 1;
    p->pat.re = pcre2_compile((PCRE2_SPTR)BYTE_LEVEL_REGEX, PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &code, &at, NULL);
    return p->pat.re ? 0 : tj_fail(c, "pre_tokenizer", "PCRE2 cannot compile GPT-2's pattern (error %d)", code);
}

/* The pre-tokens of one piece, appended to out. */
static int pre_one(const TjPre *p, TjStr *s, TjList *out, TjWhy *why) {
    switch (p->kind) {
    case TJ_PRE_BYTE_LEVEL: return pre_byte_level(p, s, out, why);
    case TJ_PRE_SPLIT: return split_pattern(s, &p->pat, p->invert, p->behavior, out, why);
    case TJ_PRE_WHITESPACE: return split_pattern(s, &p->pat, 1, TJ_SPLIT_REMOVED, out, why);
    case TJ_PRE_WHITESPACE_SPLIT: return split_chars(s, CHARS_SPACE, 0, TJ_SPLIT_REMOVED, out);
    case TJ_PRE_BERT: {
        TjList words = {0};
        int rc = split_chars(s, p->python ? CHARS_PY_SPACE : CHARS_SPACE, 0, TJ_SPLIT_REMOVED, &words);
        for (int i = 0; i < words.n && rc == 0; i++)
            rc = split_chars(&words.v[i], p->python ? CHARS_PY_PUNCT : CHARS_PUNCT, 0, TJ_SPLIT_ISOLATED, out);
        tjlist_free(&words);
        return rc;
    }
    case TJ_PRE_METASPACE: return pre_metaspace(p, s, out);
    case TJ_PRE_PUNCTUATION: return split_chars(s, CHARS_PUNCT, 0, p->behavior, out);
    case TJ_PRE_DIGITS:
        return split_chars(s, CHARS_DIGIT, 0, p->individual ? TJ_SPLIT_ISOLATED : TJ_SPLIT_CONTIGUOUS, out);
    case TJ_PRE_CHAR_DELIMITER: return split_chars(s, CHARS_ONE, p->delim, TJ_SPLIT_REMOVED, out);
    }
    return tjlist_take(out, s);
}

static long total_bytes(const TjList *l) {
    long n = 0;
    for (int i = 0; i < l->n; i++) n += l->v[i].n;
    return n;
}

/* p on the pieces (a Sequence: each part in turn), their bytes, from in all
 * at the start, growing to at most limit: checked after every part. */
static int pre_run(const TjPre *p, TjList *pieces, long from, long limit, TjWhy *why) {
    if (p->kind == TJ_PRE_SEQUENCE) {
        for (int i = 0; i < p->n_sub; i++)
            if (pre_run(&p->sub[i], pieces, from, limit, why)) return -1;
        return 0;
    }
    *why = (TjWhy){TJ_WHY_MEMORY, p->where, 0, 0};
    TjList out = {0};
    for (int i = 0; i < pieces->n; i++) {
        if (pieces->v[i].n == 0) continue;
        if (pre_one(p, &pieces->v[i], &out, why)) { tjlist_free(&out); return -1; }
    }
    tjlist_free(pieces);
    *pieces = out;
    long to = total_bytes(pieces);
    if (to > limit) {
        *why = (TjWhy){TJ_WHY_GROWTH, p->where, from, to};
        return -1;
    }
    return 0;
}

int tj_pre_apply(const TjPre *p, TjList *pieces, TjWhy *why) {
    TjWhy w;
    long from = total_bytes(pieces);
    int rc = pre_run(p, pieces, from, tj_growth_limit(from), &w);
    if (rc && why) *why = w;
    return rc;
}

static const struct { const char *name; int kind; } PRE_KINDS[] = {
    {"ByteLevel", TJ_PRE_BYTE_LEVEL}, {"Split", TJ_PRE_SPLIT}, {"Whitespace", TJ_PRE_WHITESPACE},
    {"WhitespaceSplit", TJ_PRE_WHITESPACE_SPLIT}, {"BertPreTokenizer", TJ_PRE_BERT},
    {"Metaspace", TJ_PRE_METASPACE}, {"Punctuation", TJ_PRE_PUNCTUATION}, {"Digits", TJ_PRE_DIGITS},
    {"CharDelimiterSplit", TJ_PRE_CHAR_DELIMITER}, {"Sequence", TJ_PRE_SEQUENCE},
};

static const char *const BEHAVIORS[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};

static int parse_behavior(const cJSON *j, int dflt, const char *where, const TjCtx *c) {
    const char *b = tj_str(j, "behavior");
    if (!b) return tj_get(j, "behavior") ? tj_fail(c, where, "\"behavior\" must be a string") : dflt;
    for (int i = 0; i < 5; i++)
        if (!strcmp(b, BEHAVIORS[i])) return i;
    return tj_fail(c, where, "the split behavior \"%.40s\" is not one of Removed, Isolated, MergedWithPrevious, "
                             "MergedWithNext, Contiguous", b);
}

static int parse_metaspace(TjPre *p, const cJSON *j, const char *where, const TjCtx *c) {
    p->repl = tj_one_char(tj_str(j, "replacement"));
    if (p->repl < 0) return tj_fail(c, where, "Metaspace needs a one-character \"replacement\"");
    const char *scheme = tj_str(j, "prepend_scheme");
    int aps = tj_bool(j, "add_prefix_space", 1);
    p->split = tj_bool(j, "split", 1);
    if (aps < 0 || p->split < 0) return tj_fail(c, where, "Metaspace's options must be true or false");
    p->prepend = !scheme ? TJ_PREPEND_ALWAYS   /* the library's default, whatever add_prefix_space says */
               : !strcmp(scheme, "always") ? TJ_PREPEND_ALWAYS
               : !strcmp(scheme, "first") ? TJ_PREPEND_FIRST
               : !strcmp(scheme, "never") ? TJ_PREPEND_NEVER : -1;
    if (p->prepend < 0) return tj_fail(c, where, "the prepend_scheme \"%.40s\" is not always, first or never", scheme);
    if (!aps && p->prepend != TJ_PREPEND_NEVER)
        return tj_fail(c, where, "add_prefix_space false needs \"prepend_scheme\": \"never\"");
    return 0;
}

static int parse_sequence(TjPre *p, const cJSON *j, const char *where, const TjCtx *c) {
    const cJSON *list = tj_get(j, "pretokenizers");
    if (!cJSON_IsArray(list)) return tj_fail(c, where, "a Sequence needs a \"pretokenizers\" list");
    int n = cJSON_GetArraySize(list), i = 0;
    p->sub = calloc((size_t)(n ? n : 1), sizeof *p->sub);
    if (!p->sub) return tj_fail(c, where, "out of memory");
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char w[256];
        snprintf(w, sizeof w, "%s.pretokenizers[%d]", where, i);
        p->n_sub = i + 1;
        if (tj_pre_parse(&p->sub[i], e, w, c)) return -1;
    }
    return 0;
}

static int parse_byte_level(TjPre *p, const cJSON *j, const char *where, const TjCtx *c) {
    p->add_prefix_space = tj_bool(j, "add_prefix_space", 1);
    p->use_regex = tj_bool(j, "use_regex", 1);
    if (p->add_prefix_space < 0 || p->use_regex < 0) return tj_fail(c, where, "ByteLevel's options must be true or false");
    return p->use_regex ? tj_pattern_regex(&p->pat, BYTE_LEVEL_REGEX, where, c) : 0;
}

int tj_pre_parse(TjPre *p, const cJSON *j, const char *where, const TjCtx *c) {
    const char *type = tj_str(j, "type");
    int bad = 0;
    if (!(p->where = tj_dup(where, &bad))) return tj_fail(c, where, "out of memory");
    if (!cJSON_IsObject(j) || !type) return tj_fail(c, where, "a pre-tokenizer must be an object with a \"type\"");
    p->kind = -1;
    for (size_t i = 0; i < sizeof PRE_KINDS / sizeof PRE_KINDS[0]; i++)
        if (!strcmp(type, PRE_KINDS[i].name)) p->kind = PRE_KINDS[i].kind;
    if (p->kind < 0) return tj_fail(c, where, "the pre-tokenizer \"%.40s\" is not supported", type);
    switch (p->kind) {
    case TJ_PRE_BYTE_LEVEL: return parse_byte_level(p, j, where, c);
    case TJ_PRE_SPLIT:
        if ((p->behavior = parse_behavior(j, -1, where, c)) < 0)
            return p->behavior == -1 && !tj_get(j, "behavior") ? tj_fail(c, where, "Split needs a \"behavior\"") : -1;
        if ((p->invert = tj_bool(j, "invert", 0)) < 0) return tj_fail(c, where, "\"invert\" must be true or false");
        return tj_pattern_parse(&p->pat, tj_get(j, "pattern"), where, c);
    case TJ_PRE_WHITESPACE: return tj_pattern_regex(&p->pat, WHITESPACE_REGEX, where, c);
    case TJ_PRE_METASPACE: return parse_metaspace(p, j, where, c);
    case TJ_PRE_PUNCTUATION: return (p->behavior = parse_behavior(j, TJ_SPLIT_ISOLATED, where, c)) < 0 ? -1 : 0;
    case TJ_PRE_DIGITS:
        p->individual = tj_bool(j, "individual_digits", 0);
        return p->individual < 0 ? tj_fail(c, where, "\"individual_digits\" must be true or false") : 0;
    case TJ_PRE_CHAR_DELIMITER:
        p->delim = tj_one_char(tj_str(j, "delimiter"));
        return p->delim < 0 ? tj_fail(c, where, "CharDelimiterSplit needs a one-character \"delimiter\"") : 0;
    case TJ_PRE_SEQUENCE: return parse_sequence(p, j, where, c);
    }
    return 0;
}

void tj_pre_free(TjPre *p) {
    if (!p) return;
    for (int i = 0; i < p->n_sub; i++) tj_pre_free(&p->sub[i]);
    free(p->sub);
    tj_pattern_free(&p->pat);
    free(p->where);
    memset(p, 0, sizeof *p);
}
