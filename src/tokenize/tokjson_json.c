/* tokjson_json.c — see tokjson_json.h: the JSON reader of tokjson, a tree
 * of nodes in a few large blocks, strings decoded in place in a copy of the
 * text, so a 2 MB tokenizer.json (100,000 strings) reads in milliseconds
 * where a node-by-node allocator takes most of the load time.
 *
 * RFC 8259: objects, arrays, strings (every escape; \u surrogate pairs
 * joined, a lone surrogate refused), numbers, true, false, null; nesting at
 * most TJ_JSON_DEPTH deep; nothing but white space after the value.  A
 * string holding \u0000 ends there (the strings are C strings). */
#include "tokenize/tokjson_json.h"
#include "core/errmsg.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 8192   /* nodes per block */

struct TjJsonDoc {
    char *text;            /* the copy strings are decoded into */
    TjJson **blocks;       /* (n_blocks) of BLOCK nodes each   */
    int n_blocks, used;    /* nodes used in the last block     */
    TjJson *root;
};

typedef struct {
    TjJsonDoc *doc;
    char *p, *end;
    const char *fail;      /* where it went wrong */
} Reader;

static TjJson *node_new(Reader *r, int type) {
    TjJsonDoc *d = r->doc;
    if (d->n_blocks == 0 || d->used == BLOCK) {
        TjJson **nb = realloc(d->blocks, (size_t)(d->n_blocks + 1) * sizeof *nb);
        if (!nb) return NULL;
        d->blocks = nb;
        if (!(nb[d->n_blocks] = malloc(BLOCK * sizeof(TjJson)))) return NULL;
        d->n_blocks++;
        d->used = 0;
    }
    TjJson *n = &d->blocks[d->n_blocks - 1][d->used++];
    memset(n, 0, sizeof *n);
    n->type = type;
    return n;
}

static void skip_ws(Reader *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static int hex4(const char *p, const char *end) {
    if (end - p < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static char *put_utf8(char *o, long c) {
    if (c < 0x80) *o++ = (char)c;
    else if (c < 0x800) { *o++ = (char)(0xC0 | c >> 6); *o++ = (char)(0x80 | (c & 0x3F)); }
    else if (c < 0x10000) {
        *o++ = (char)(0xE0 | c >> 12); *o++ = (char)(0x80 | ((c >> 6) & 0x3F)); *o++ = (char)(0x80 | (c & 0x3F));
    } else {
        *o++ = (char)(0xF0 | c >> 18); *o++ = (char)(0x80 | ((c >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((c >> 6) & 0x3F)); *o++ = (char)(0x80 | (c & 0x3F));
    }
    return o;
}

/* The escape after a backslash at r->p, decoded to *o.  0, or -1. */
static int read_escape(Reader *r, char **o) {
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *k = r->p < r->end ? strchr(from, *r->p) : NULL;
    if (k && *k) { *(*o)++ = to[k - from]; r->p++; return 0; }
    if (r->p >= r->end || *r->p != 'u') return -1;
    long c = hex4(r->p + 1, r->end);
    r->p += 5;
    if (c >= 0xDC00 && c <= 0xDFFF) return -1;
    if (c >= 0xD800 && c <= 0xDBFF) {   /* a surrogate pair */
        if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u') return -1;
        long lo = hex4(r->p + 2, r->end);
        if (lo < 0xDC00 || lo > 0xDFFF) return -1;
        c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
        r->p += 6;
    }
    if (c < 0) return -1;
    *o = put_utf8(*o, c);
    return 0;
}

/* The string at r->p (after its opening quote), decoded in place. */
static const char *read_string(Reader *r) {
    char *o = r->p, *s = r->p;
    while (r->p < r->end && *r->p != '"') {
        unsigned char c = (unsigned char)*r->p;
        if (c < 0x20) { r->fail = r->p; return NULL; }
        if (c != '\\') { *o++ = *r->p++; continue; }
        r->p++;
        if (read_escape(r, &o)) { r->fail = r->p; return NULL; }
    }
    if (r->p >= r->end) { r->fail = r->p; return NULL; }
    r->p++;                    /* the closing quote */
    *o = '\0';                 /* o <= the quote: decoding never grows */
    return s;
}

static int read_number(Reader *r, TjJson *n) {
    char *p = r->p;
    if (p < r->end && *p == '-') p++;
    if (p >= r->end || *p < '0' || *p > '9') return -1;
    if (*p == '0') p++;
    else while (p < r->end && *p >= '0' && *p <= '9') p++;
    int simple = 1;
    if (p < r->end && *p == '.') {
        simple = 0;
        if (++p >= r->end || *p < '0' || *p > '9') return -1;
        while (p < r->end && *p >= '0' && *p <= '9') p++;
    }
    if (p < r->end && (*p == 'e' || *p == 'E')) {
        simple = 0;
        if (++p < r->end && (*p == '+' || *p == '-')) p++;
        if (p >= r->end || *p < '0' || *p > '9') return -1;
        while (p < r->end && *p >= '0' && *p <= '9') p++;
    }
    if (simple && p - r->p < 16) {   /* whole numbers without strtod */
        long long v = 0;
        for (char *q = r->p + (*r->p == '-'); q < p; q++) v = v * 10 + (*q - '0');
        n->valuedouble = (double)(*r->p == '-' ? -v : v);
    } else {
        char save = *p;   /* p < end or p == end (the copy has a NUL there) */
        *p = '\0';
        n->valuedouble = strtod(r->p, NULL);
        *p = save;
    }
    r->p = p;
    return 0;
}

static TjJson *read_value(Reader *r, int depth);

/* An array or object after its opening bracket; members get their keys. */
static int read_items(Reader *r, TjJson *n, int depth, char close) {
    TjJson *last = NULL;
    skip_ws(r);
    if (r->p < r->end && *r->p == close) { r->p++; return 0; }
    for (;;) {
        const char *key = NULL;
        skip_ws(r);
        if (close == '}') {
            if (r->p >= r->end || *r->p != '"') return -1;
            r->p++;
            if (!(key = read_string(r))) return -1;
            skip_ws(r);
            if (r->p >= r->end || *r->p != ':') return -1;
            r->p++;
        }
        TjJson *v = read_value(r, depth + 1);
        if (!v) return -1;
        v->string = key;
        if (last) last->next = v;
        else n->child = v;
        last = v;
        n->size++;
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') { r->p++; continue; }
        if (r->p < r->end && *r->p == close) { r->p++; return 0; }
        return -1;
    }
}

static TjJson *read_word(Reader *r, const char *word, int type) {
    size_t k = strlen(word);
    if ((size_t)(r->end - r->p) < k || memcmp(r->p, word, k)) return NULL;
    r->p += k;
    return node_new(r, type);
}

static TjJson *read_value(Reader *r, int depth) {
    skip_ws(r);
    if (r->p >= r->end || depth > TJ_JSON_DEPTH) { r->fail = r->p; return NULL; }
    char c = *r->p;
    TjJson *n = NULL;
    if (c == '{' || c == '[') {
        r->p++;
        if ((n = node_new(r, c == '{' ? TJ_JSON_OBJECT : TJ_JSON_ARRAY)) && read_items(r, n, depth, c == '{' ? '}' : ']'))
            n = NULL;
    } else if (c == '"') {
        r->p++;
        const char *s = read_string(r);
        if (s && (n = node_new(r, TJ_JSON_STRING))) n->valuestring = s;
    } else if (c == 't') n = read_word(r, "true", TJ_JSON_TRUE);
    else if (c == 'f') n = read_word(r, "false", TJ_JSON_FALSE);
    else if (c == 'n') n = read_word(r, "null", TJ_JSON_NULL);
    else if ((n = node_new(r, TJ_JSON_NUMBER)) && read_number(r, n)) n = NULL;
    if (!n && !r->fail) r->fail = r->p;
    return n;
}

TjJsonDoc *tj_json_parse(const char *text, size_t len, size_t *fail_at) {
    TjJsonDoc *d = calloc(1, sizeof *d);
    if (d && !(d->text = malloc(len + 1))) { free(d); d = NULL; }
    if (!d) { *fail_at = (size_t)-1; return NULL; }
    memcpy(d->text, text, len);
    d->text[len] = '\0';
    Reader r = {d, d->text, d->text + len, NULL};
    d->root = read_value(&r, 0);
    skip_ws(&r);
    if (d->root && r.p != r.end) { d->root = NULL; r.fail = r.p; }
    if (!d->root) {
        *fail_at = r.fail ? (size_t)(r.fail - d->text) : (size_t)-1;
        tj_json_free(d);
        return NULL;
    }
    return d;
}

const TjJson *tj_json_root(const TjJsonDoc *d) {
    return d->root;
}

void tj_json_free(TjJsonDoc *d) {
    if (!d) return;
    for (int i = 0; i < d->n_blocks; i++) free(d->blocks[i]);
    free(d->blocks);
    free(d->text);
    free(d);
}

int tj_is(const TjJson *j, int type) {
    return j && j->type == type;
}

int tj_size(const TjJson *j) {
    return j ? j->size : 0;
}

const TjJson *tj_get(const TjJson *o, const char *key) {
    if (!o || o->type != TJ_JSON_OBJECT) return NULL;
    for (const TjJson *e = o->child; e; e = e->next)
        if (!strcmp(e->string, key)) return e->type == TJ_JSON_NULL ? NULL : e;
    return NULL;
}

/* ---- look-ups and messages ---- */

int tj_fail(const TjCtx *c, const char *where, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return errmsg_set(c->err, c->errlen, "%s: %s: %s", c->file, where, msg);
}

int tj_bool(const TjJson *o, const char *key, int dflt) {
    const TjJson *v = tj_get(o, key);
    if (!v) return dflt;
    return v->type == TJ_JSON_TRUE ? 1 : v->type == TJ_JSON_FALSE ? 0 : -1;
}

const char *tj_str(const TjJson *o, const char *key) {
    const TjJson *v = tj_get(o, key);
    return tj_is(v, TJ_JSON_STRING) ? v->valuestring : NULL;
}

char *tj_dup(const char *s, int *bad) {
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) *bad = 1;
    return d;
}
