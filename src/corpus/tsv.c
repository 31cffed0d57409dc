/* tsv.c — reading and writing the corpus files' lines (see tsv.h). */
#include "corpus/tsv.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include "tokenize/tokenizer.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --------------------------------------------------------------- reading -- */

static void pair_free(CorpusPair *p) {
    for (int i = 0; i < p->n_src; i++) free(p->src[i]);
    for (int i = 0; i < p->n_tgt; i++) free(p->tgt[i]);
    free(p->src); free(p->tgt); free(p->align); free(p->coref); free(p->template_id);
    memset(p, 0, sizeof *p);
}

void corpus_free(Corpus *c) {
    if (!c) return;
    for (int i = 0; i < c->n; i++) pair_free(&c->pairs[i]);
    free(c->pairs);
    c->pairs = NULL;
    c->n = 0;
}

/* Splits s at single spaces into fresh strings. */
static int split_tokens(const char *s, char ***out, int *n) {
    *out = NULL;
    *n = 0;
    int cap = 0;
    while (*s) {
        const char *e = strchr(s, ' ');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (!len) return -1;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **p = realloc(*out, (size_t)cap * sizeof *p);
            if (!p) return -1;
            *out = p;
        }
        if (!((*out)[*n] = strndup(s, len))) return -1;
        (*n)++;
        s += len;
        if (*s == ' ' && !*++s) return -1;
    }
    return *n ? 0 : -1;
}

/* Parses "a-b a-b" (or "-") into pairs checked against limits. */
static int parse_pairs(const char *s, int **out, int *n, int lim0, int lim1) {
    *out = NULL;
    *n = 0;
    if (!strcmp(s, "-")) return 0;
    int cap = 0;
    while (*s) {
        char *e;
        long a = strtol(s, &e, 10);
        if (e == s || *e != '-') return -1;
        s = e + 1;
        long b = strtol(s, &e, 10);
        if (e == s || (*e && *e != ' ')) return -1;
        if (a < 0 || a >= lim0 || b < 0 || b >= lim1) return -1;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            int *p = realloc(*out, (size_t)cap * 2 * sizeof *p);
            if (!p) return -1;
            *out = p;
        }
        (*out)[2 * *n] = (int)a;
        (*out)[2 * *n + 1] = (int)b;
        (*n)++;
        s = *e ? e + 1 : e;
    }
    return 0;
}

int corpus_read_tsv(Corpus *c, const char *path, char *err, size_t errlen) {
    c->n = 0;
    c->pairs = NULL;
    int fd = file_open_regular(path, err, errlen);   /* a FIFO or device never hangs the open */
    if (fd < 0 && errno == ENOENT) return errmsg_set(err, errlen, "cannot open %s: %s (run attnviz corpus first)", path,
                                                     strerror(ENOENT));
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0) { errmsg_set(err, errlen, "cannot read %s: %s", path, strerror(errno)); close(fd); }
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int ln = 0, pcap = 0, rc = 0;
    while (!rc && (len = getline(&line, &cap, f)) >= 0) {
        ln++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if (!len) continue;
        if (tokenizer_check_utf8(line, (size_t)len, NULL, 0)) { rc = errmsg_set(err, errlen, "%s:%d: invalid UTF-8", path, ln); break; }
        ssize_t bad = 0;   /* a NUL would end the line early and a CR would not survive writing: both refused */
        while (bad < len && ((unsigned char)line[bad] >= 0x20 || line[bad] == '\t')) bad++;
        if (bad < len) {
            rc = errmsg_set(err, errlen, "%s:%d: a control character (a NUL or CR byte, ...) inside the line at byte %zd",
                            path, ln, bad + 1);
            break;
        }
        char *col[7];
        int nc = 0;
        char *p = line;
        while (nc < 7) {
            col[nc++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = 0;
            p = tab + 1;
        }
        if (nc != 6) { rc = errmsg_set(err, errlen, "%s:%d: expected 6 tab-separated columns, got %d", path, ln, nc); break; }
        if (c->n == pcap) {
            pcap = pcap ? 2 * pcap : 1024;
            CorpusPair *np = realloc(c->pairs, (size_t)pcap * sizeof *np);
            if (!np) { rc = errmsg_set(err, errlen, "out of memory"); break; }
            c->pairs = np;
        }
        CorpusPair *pr = &c->pairs[c->n++];
        memset(pr, 0, sizeof *pr);
        pr->line = ln;
        if (!strcmp(col[0], "fr")) pr->lang = CORPUS_LANG_FR;
        else if (!strcmp(col[0], "vi")) pr->lang = CORPUS_LANG_VI;
        else { rc = errmsg_set(err, errlen, "%s:%d: language \"%s\" is neither fr nor vi", path, ln, col[0]); break; }
        if (split_tokens(col[1], &pr->src, &pr->n_src)) { rc = errmsg_set(err, errlen, "%s:%d: bad source column", path, ln); break; }
        if (split_tokens(col[2], &pr->tgt, &pr->n_tgt)) { rc = errmsg_set(err, errlen, "%s:%d: bad target column", path, ln); break; }
        if (parse_pairs(col[3], &pr->align, &pr->n_align, pr->n_tgt, pr->n_src)) {
            rc = errmsg_set(err, errlen, "%s:%d: bad alignment \"%s\" (t-s pairs within the sentences)", path, ln, col[3]);
            break;
        }
        if (parse_pairs(col[4], &pr->coref, &pr->n_coref, pr->n_src, pr->n_src)) {
            rc = errmsg_set(err, errlen, "%s:%d: bad coref \"%s\" (p-a pairs of source indices)", path, ln, col[4]);
            break;
        }
        if (!(pr->template_id = strdup(col[5]))) { rc = errmsg_set(err, errlen, "out of memory"); break; }
    }
    free(line);
    fclose(f);
    if (rc) corpus_free(c);
    return rc;
}

/* --------------------------------------------------------------- writing -- */

/* Appends the n bytes of s (out keeps a terminating NUL, as strbuf_printf). */
static int put(StrBuf *out, const char *s, size_t n) {
    if (out->len + n + 1 > out->cap) {
        size_t cap = out->cap ? out->cap : 1 << 16;
        while (out->len + n + 1 > cap) cap *= 2;
        char *p = realloc(out->buf, cap);
        if (!p) return -1;
        out->buf = p;
        out->cap = cap;
    }
    memcpy(out->buf + out->len, s, n);
    out->len += n;
    out->buf[out->len] = 0;
    return 0;
}

static int put_str(StrBuf *out, const char *s) { return put(out, s, strlen(s)); }

/* Tokens separated by single spaces, then a TAB. */
static int put_tokens(StrBuf *out, const char *const *tok, int n) {
    for (int i = 0; i < n; i++)
        if (put_str(out, i ? " " : "") || put_str(out, tok[i])) return -1;
    return put_str(out, "\t");
}

/* "a-b a-b" (or "-" for none), then a TAB. */
static int put_pairs(StrBuf *out, const int *p, int n) {
    char tmp[64];
    for (int i = 0; i < n; i++) {
        int len = snprintf(tmp, sizeof tmp, "%s%d-%d", i ? " " : "", p[2 * i], p[2 * i + 1]);
        if (put(out, tmp, (size_t)len)) return -1;
    }
    if (!n && put_str(out, "-")) return -1;
    return put_str(out, "\t");
}

int corpus_append_tsv(StrBuf *out, const CorpusLine *l) {
    if (put_str(out, l->lang == CORPUS_LANG_FR ? "fr\t" : "vi\t") || put_tokens(out, l->src, l->n_src) ||
        put_tokens(out, l->tgt, l->n_tgt) || put_pairs(out, l->align, l->n_align) ||
        put_pairs(out, l->coref, l->n_coref) || put_str(out, l->id) || put_str(out, "\n"))
        return -1;
    return 0;
}
