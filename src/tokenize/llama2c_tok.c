/* llama2c_tok.c — see llama2c_tok.h. */
#include "tokenize/llama2c_tok.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int32_t read_i32(const unsigned char *p) {
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    int32_t r;
    memcpy(&r, &v, sizeof r);
    return r;
}

static float read_f32(const unsigned char *p) {
    int32_t i = read_i32(p);
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

/* Walks the entries: how many there are (at most want when want > 0) and
 * their bytes.  0, or -1 with err. */
static int count_entries(const unsigned char *data, size_t size, int want, const char *path, int *n, size_t *bytes,
                         char *err, size_t errlen) {
    size_t off = 4;
    *n = 0;
    *bytes = 0;
    while (off < size && (want == 0 || *n < want)) {
        if (size - off < 8)
            return errmsg_set(err, errlen, "%s is truncated: token %d has no score and length (%zu bytes left)", path,
                              *n, size - off);
        int32_t len = read_i32(data + off + 4);
        if (len < 0 || (size_t)len > size - off - 8)
            return errmsg_set(err, errlen, "%s: the length of token %d %s", path, *n,
                              len < 0 ? "is negative (not a llama2.c tokenizer)" : "runs past the file's end (truncated)");
        off += 8 + (size_t)len;
        *bytes += (size_t)len + 1;
        (*n)++;
    }
    if (*n < 3) return errmsg_set(err, errlen, "%s holds %d tokens; a llama2.c tokenizer starts with <unk>, <s>, </s>", path, *n);
    if (want > 0 && *n < want)
        return errmsg_set(err, errlen, "%s holds %d tokens; the model's vocabulary is %d (truncated?)", path, *n, want);
    if (want > 0 && off < size)
        return errmsg_set(err, errlen, "%s holds more than the model's %d tokens (%zu bytes more)", path, want, size - off);
    return 0;
}

#define SCORE_FLOOR -1e10f   /* run.c's: a piece scored at or below it never merges */

static int cmp_score_desc(const void *x, const void *y) {
    float a = *(const float *)x, b = *(const float *)y;
    return (a < b) - (a > b);
}

/* The merge table of step 3 (llama2c_tok.h): every pair of ids whose pieces
 * join into a piece p, merged into p (its lowest id) at p's rank, the rank
 * of its score among the distinct scores, highest first, so equal scores
 * tie and the leftmost pair merges first, as run.c's loop does. */
static int build_merges(Llama2cTok *t) {
    float *rank = malloc((size_t)t->n * sizeof *rank);
    int *next = malloc((size_t)t->n * sizeof *next), *last = malloc((size_t)t->n * sizeof *last);
    int n_rank = 0, rc = rank && next && last ? 0 : -1;
    for (int i = 0; i < t->n && rc == 0; i++) {   /* ids of one piece: a chain from its lowest id */
        int first = strmap_get(&t->map, t->piece[i], (size_t)t->len[i]);
        next[i] = -1;
        last[i] = i;
        if (first != i) { next[last[first]] = i; last[first] = i; }
        if (t->score[i] > SCORE_FLOOR) rank[n_rank++] = t->score[i];   /* NaN is not */
    }
    if (rc == 0) qsort(rank, (size_t)n_rank, sizeof *rank, cmp_score_desc);
    int distinct = 0;
    for (int i = 0; i < n_rank; i++)
        if (distinct == 0 || rank[i] != rank[distinct - 1]) rank[distinct++] = rank[i];
    for (int k = 0; k < t->n && rc == 0; k++) {
        const char *p = t->piece[k];
        if (!(t->score[k] > SCORE_FLOOR) || strmap_get(&t->map, p, (size_t)t->len[k]) != k) continue;
        int lo = 0, hi = distinct - 1;
        while (rank[(lo + hi) / 2] != t->score[k]) {
            if (rank[(lo + hi) / 2] > t->score[k]) lo = (lo + hi) / 2 + 1;
            else hi = (lo + hi) / 2 - 1;
        }
        for (int j = 0; j <= t->len[k] && rc == 0; j++) {
            int a = strmap_get(&t->map, p, (size_t)j), b = a < 0 ? -1 : strmap_get(&t->map, p + j, (size_t)(t->len[k] - j));
            for (int x = b < 0 ? -1 : a; x >= 0 && rc == 0; x = next[x])
                for (int y = b; y >= 0 && rc == 0; y = next[y]) rc = tj_merges_put(&t->merges, x, y, (lo + hi) / 2, k);
        }
    }
    free(rank);
    free(next);
    free(last);
    return rc;
}

int llama2c_tok_parse(Llama2cTok *t, const unsigned char *data, size_t size, int n_vocab, const char *path, char *err,
                      size_t errlen) {
    memset(t, 0, sizeof *t);
    if (size < 4) return errmsg_set(err, errlen, "%s is %zu bytes; a llama2.c tokenizer starts with a 4-byte header", path, size);
    t->max_len = read_i32(data);
    if (t->max_len < 0) return errmsg_set(err, errlen, "%s: max_token_length is negative (not a llama2.c tokenizer)", path);
    size_t bytes;
    if (count_entries(data, size, n_vocab, path, &t->n, &bytes, err, errlen)) return -1;
    t->piece = malloc((size_t)t->n * sizeof *t->piece);
    t->len = malloc((size_t)t->n * sizeof *t->len);
    t->score = malloc((size_t)t->n * sizeof *t->score);
    t->text = malloc(bytes);
    if (!t->piece || !t->len || !t->score || !t->text) goto oom;
    char *p = t->text;
    size_t off = 4;
    for (int i = 0; i < t->n; i++) {
        int32_t len = read_i32(data + off + 4);
        t->score[i] = read_f32(data + off);
        memcpy(p, data + off + 8, (size_t)len);
        p[len] = '\0';
        t->piece[i] = p;
        t->len[i] = (int)strlen(p);   /* a C string to the encoder, as in run.c */
        if (strmap_get(&t->map, p, (size_t)t->len[i]) < 0 && strmap_put(&t->map, p, (size_t)t->len[i], i)) goto oom;
        p += len + 1;
        off += 8 + (size_t)len;
    }
    for (int b = 0; b < 256; b++) { t->bytes[2 * b] = (char)b; t->bytes[2 * b + 1] = '\0'; }
    if (build_merges(t)) goto oom;
    return 0;
oom:
    llama2c_tok_free(t);
    return errmsg_set(err, errlen, "out of memory reading %s", path);
}

int llama2c_tok_load(Llama2cTok *t, const char *path, int n_vocab, char *err, size_t errlen) {
    size_t size = 0;
    memset(t, 0, sizeof *t);
    char *data = file_read_all(path, (size_t)256 << 20, &size, err, errlen);
    if (!data) return -1;
    int rc = llama2c_tok_parse(t, (const unsigned char *)data, size, n_vocab, path, err, errlen);
    free(data);
    return rc;
}

/* The id of a byte's fallback piece, or -1 with err. */
static int byte_id(const Llama2cTok *t, unsigned char b, char *err, size_t errlen) {
    if (b + 3 < t->n) return b + 3;
    return errmsg_set(err, errlen, "byte 0x%02X has no piece and its fallback id %d is outside the %d-token vocabulary",
                      b, b + 3, t->n);
}

/* Steps 1 and 2: BOS, the dummy prefix, then a piece (or bytes) per character. */
static int encode_chars(const Llama2cTok *t, const char *text, int bos, int *ids, int *n, char *err, size_t errlen) {
    *n = 0;
    if (bos) ids[(*n)++] = LLAMA2C_BOS;
    if (text[0]) {
        int id = strmap_get(&t->map, " ", 1);
        if (id < 0 && (id = byte_id(t, ' ', err, errlen)) < 0) return -1;
        ids[(*n)++] = id;
    }
    char buf[8];
    size_t len = 0;
    for (const char *c = text; *c; c++) {   /* run.c's loop: a lead byte and up to 3 continuation bytes */
        if ((*c & 0xC0) != 0x80) len = 0;
        buf[len++] = *c;
        if ((c[1] & 0xC0) == 0x80 && len < 4) continue;
        int id = strmap_get(&t->map, buf, len);
        if (id >= 0) ids[(*n)++] = id;
        else
            for (size_t i = 0; i < len; i++) {
                if ((id = byte_id(t, (unsigned char)buf[i], err, errlen)) < 0) return -1;
                ids[(*n)++] = id;
            }
        len = 0;
    }
    return 0;
}

int llama2c_tok_encode(const Llama2cTok *t, const char *text, int bos, int eos, int **ids, int *n, char *err,
                       size_t errlen) {
    *ids = NULL;
    *n = 0;
    size_t cap = strlen(text) + 3;
    int *out = malloc(cap * sizeof *out);
    int rc = -1;
    if (!out) { errmsg_set(err, errlen, "out of memory encoding %zu bytes", cap - 3); goto done; }
    if (encode_chars(t, text, bos, out, n, err, errlen)) goto done;
    if (tj_merges_apply(&t->merges, out, n)) { errmsg_set(err, errlen, "out of memory encoding %zu bytes", cap - 3); goto done; }
    if (eos) out[(*n)++] = LLAMA2C_EOS;
    *ids = out;
    out = NULL;
    rc = 0;
done:
    free(out);
    if (rc) *n = 0;
    return rc;
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

const char *llama2c_tok_decode(const Llama2cTok *t, int prev, int id, size_t *len) {
    *len = 0;
    if (id < 0 || id >= t->n) return "";
    const char *p = t->piece[id];
    if (prev == LLAMA2C_BOS && p[0] == ' ') p++;
    int h1 = !strncmp(p, "<0x", 3) ? hex_digit(p[3]) : -1;
    if (h1 >= 0) {   /* "<0xHH>": the byte HH (run.c reads it with "<0x%02hhX>") */
        int h2 = hex_digit(p[4]), b = h2 >= 0 ? h1 * 16 + h2 : h1;
        *len = 1;
        return t->bytes + 2 * b;
    }
    *len = strlen(p);
    return p;
}

void llama2c_tok_free(Llama2cTok *t) {
    if (!t) return;
    free(t->piece); free(t->len); free(t->score); free(t->text);
    strmap_free(&t->map);
    tj_merges_free(&t->merges);
    memset(t, 0, sizeof *t);
}
