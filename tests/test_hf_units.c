/* test_hf_units.c — the small parts under the GPT-2/BERT loaders: half-precision
 * conversion (every F16 value against the formula), BF16, the string table,
 * and the safetensors reader's and writer's own checks on files written here. */
#include "check.h"
#include "core/fileio.h"
#include "core/safetensors.h"
#include "tokenize/strmap.h"
#include "tokenize/tokjson.h"
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of an IEEE half from its fields, in double. */
static double half_value(unsigned h) {
    int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return sign ? -v : v;
}

TEST(hf_f16_every_value) {
    int bad = 0;
    for (unsigned h = 0; h < 65536; h++) {
        double want = half_value(h);
        float got = safetensors_f16_to_f32((unsigned short)h);
        int differ = isnan(want) ? !isnan(got) : ((double)got != want || !signbit(got) != !signbit(want));
        if (differ) {
            if (bad++ < 3) check_fail(__FILE__, __LINE__, "f16 %04x -> %.9g, expected %.9g", h, (double)got, want);
        }
    }
    CHECK_INT(bad, 0);
}

/* Float to half, against half_value: every finite half reads back as itself;
 * the midpoint of two neighbours goes to the even one, the floats either
 * side of it to the nearer; past 65504's midpoint (65520) infinity; signs kept. */
TEST(hf_f32_to_f16_rounds_to_nearest_even) {
    int bad = 0;
    for (unsigned h = 0; h < 0x7c00; h++) {
        double v = half_value(h), next = h < 0x7bff ? half_value(h + 1) : 65536.0;
        float mid = (float)((v + next) / 2);   /* exact: 12 significant bits */
        unsigned up = h + 1, even = (h & 1) ? up : h;
        unsigned short got[4] = {safetensors_f32_to_f16((float)v), safetensors_f32_to_f16(mid),
                                 safetensors_f32_to_f16(nextafterf(mid, 0.0f)), safetensors_f32_to_f16(nextafterf(mid, INFINITY))};
        unsigned want[4] = {h, even, h, up};
        for (int i = 0; i < 4; i++)
            if (got[i] != want[i] && bad++ < 3)
                check_fail(__FILE__, __LINE__, "f16 of case %d near %04x: %04x, expected %04x", i, h, got[i], want[i]);
        if (safetensors_f32_to_f16(-(float)v) != (h | 0x8000) && bad++ < 3)
            check_fail(__FILE__, __LINE__, "f16 of -%04x lost its sign", h);
    }
    CHECK_INT(bad, 0);
    CHECK_INT(safetensors_f32_to_f16(0.1f), 0x2e66);         /* NumPy's float16(0.1) */
    CHECK_INT(safetensors_f32_to_f16(1e9f), 0x7c00);
    CHECK_INT(safetensors_f32_to_f16(-INFINITY), 0xfc00);
    CHECK((safetensors_f32_to_f16(NAN) & 0x7c00) == 0x7c00 && (safetensors_f32_to_f16(NAN) & 0x3ff) != 0);
}

TEST(hf_bf16) {
    CHECK(safetensors_bf16_to_f32(0x3F80) == 1.0f);
    CHECK(safetensors_bf16_to_f32(0xC040) == -3.0f);
    CHECK(isinf(safetensors_bf16_to_f32(0x7F80)));
    CHECK_INT(safetensors_dtype_size("BF16"), 2);
    CHECK_INT(safetensors_dtype_size("I64"), 0);
}

TEST(hf_strmap) {
    StrMap m = {0};
    char key[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        REQUIRE(strmap_put(&m, key, strlen(key), i) == 0);
    }
    CHECK_INT(m.n, 5000);
    CHECK_INT(strmap_get(&m, "k4999", 5), 4999);
    CHECK_INT(strmap_get(&m, "k49990", 5), 4999);   /* a prefix of a longer string */
    CHECK_INT(strmap_get(&m, "k5000", 5), -1);
    REQUIRE(strmap_put(&m, "k7", 2, 70) == 0);
    CHECK_INT(strmap_get(&m, "k7", 2), 70);
    CHECK_INT(m.n, 5000);
    strmap_free(&m);
    strmap_free(&m);   /* accepts a zeroed map */
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

typedef struct { const TokJson *t; int rc, n, ids[4]; } EncodeJob;

static void *encode_job(void *arg) {
    EncodeJob *j = arg;
    TokJsonEnc e;
    j->rc = tokjson_encode(j->t, "aab ab", 1, &e, NULL, 0);
    j->n = e.n;
    for (int i = 0; i < e.n && i < 4; i++) j->ids[i] = e.ids[i];
    tokjson_enc_free(&e);
    return NULL;
}

/* GPT-2's vocab.json + merges.txt read into the tokenizer engine, on a
 * vocabulary small enough to merge by hand.  "aab ab" cuts into "aab" and
 * " ab" (byte-level "Ġab"); a b (rank 0) merges first, then a ab (rank 2)
 * and Ġ ab (rank 1): ids aab 5, Ġab 4; no special tokens around them.  Four
 * threads encode with it at once.  "a" given twice keeps its last id, as
 * Python's json (and the tokenizers that read it) do. */
TEST(hf_gpt2_vocab_files_by_hand) {
    char vocab[512], merges[512], err[256] = "";
    snprintf(vocab, sizeof vocab, "%s/bpe-vocab.json", check_tmpdir());
    snprintf(merges, sizeof merges, "%s/bpe-merges.txt", check_tmpdir());
    write_text(vocab, "{\"a\": 6, \"b\": 1, \"\\u0120\": 2, \"ab\": 3, \"\\u0120ab\": 4, \"aab\": 5, \"a\": 0}");
    write_text(merges, "#version: 0.2\na b\n\u0120 ab\r\na ab\n");
    TokJson *t = tokjson_load_gpt2(vocab, merges, err, sizeof err);
    REQUIRE(t != NULL);
    CHECK_INT(tokjson_vocab_size(t), 7);
    pthread_t th[4];
    EncodeJob job[4];
    for (int i = 0; i < 4; i++) {
        job[i] = (EncodeJob){.t = t};
        REQUIRE(pthread_create(&th[i], NULL, encode_job, &job[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_INT(job[i].rc, 0);
        CHECK_INT(job[i].n, 2);
        CHECK_INT(job[i].ids[0], 5);
        CHECK_INT(job[i].ids[1], 4);
    }
    CHECK_INT(tokjson_id(t, "a"), 0);
    CHECK_INT(tokjson_id(t, "\xC4\xA0" "ab"), 4);
    CHECK_INT(tokjson_id(t, "ba"), -1);
    char text[16];
    CHECK_INT(tokjson_token_bytes(t, 4, text, sizeof text), 3);
    CHECK(!strcmp(text, " ab"));
    CHECK_INT(tokjson_token_bytes(t, 6, text, sizeof text), 1);
    CHECK(!strcmp(text, "a"));
    CHECK_INT(tokjson_token_bytes(t, 4, text, 3), -1);   /* no room for the NUL */
    tokjson_free(t);
    /* A bad merge line is refused by every encode (a forward pass on ids
     * never needs merges.txt).  A merge is looked up by its two tokens' text
     * when a text makes the pair, as GPT2Tokenizer ranks them: one that joins
     * into a token vocab.json lacks is refused by every encode that merges it
     * ("bb"), and a text that never makes its pair ("ab" with "a b" first)
     * is encoded; so is a text beside a line whose tokens vocab.json lacks
     * (x y).  A missing merges.txt is refused at load. */
    static const struct { const char *merges, *text, *says; int id; } bad[] = {
        {"a b\nab\n", "ab", "is not a merge", -1},
        {"a b\nb b\n", "bb", "merge 1 (\"b b\"): the token \"bb\" is not in vocab.json", -1},
        {"a b\nb b\n", "ab", NULL, 3},
        {"x y\na b\n", "ab", NULL, 3}};
    for (int k = 0; k < 4; k++) {
        write_text(merges, bad[k].merges);
        t = tokjson_load_gpt2(vocab, merges, err, sizeof err);
        REQUIRE(t != NULL);
        for (int again = 0; again < 2; again++) {
            TokJsonEnc e;
            err[0] = '\0';
            int rc = tokjson_encode(t, bad[k].text, 0, &e, err, sizeof err);
            if (bad[k].says) {
                CHECK(rc != 0);
                CHECK(strstr(err, bad[k].says) != NULL);
            } else {
                CHECK_INT(rc, 0);
                CHECK_INT(e.n, 1);
                CHECK_INT(e.n ? e.ids[0] : -1, bad[k].id);
            }
            tokjson_enc_free(&e);
        }
        tokjson_free(t);
    }
    /* A pair met twice takes the later line's rank, as the library's map (and
     * GPT2Tokenizer's dict) keeps it: "a a" (rank 2) loses to "a b" (rank 1),
     * so "aab" is a + ab, not aa + b. */
    write_text(vocab, "{\"a\": 0, \"b\": 1, \"aa\": 2, \"ab\": 3}");
    write_text(merges, "a a\na b\na a\n");
    t = tokjson_load_gpt2(vocab, merges, err, sizeof err);
    REQUIRE(t != NULL);
    TokJsonEnc twice;
    REQUIRE(tokjson_encode(t, "aab", 0, &twice, err, sizeof err) == 0);
    CHECK_INT(twice.n, 2);
    CHECK_INT(twice.n == 2 ? twice.ids[0] : -1, 0);
    CHECK_INT(twice.n == 2 ? twice.ids[1] : -1, 3);
    tokjson_enc_free(&twice);
    tokjson_free(t);
    snprintf(merges, sizeof merges, "%s/no-such-merges.txt", check_tmpdir());
    CHECK(tokjson_load_gpt2(vocab, merges, err, sizeof err) == NULL);
}

/* A file: header text then n data bytes. */
static void write_st(const char *path, const char *header, size_t n) {
    FILE *f = fopen(path, "wb");
    uint64_t len = strlen(header);
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(len >> (8 * i));
    fwrite(le, 1, 8, f);
    fputs(header, f);
    for (size_t i = 0; i < n; i++) fputc(0, f);
    fclose(f);
}

TEST(hf_safetensors_checks) {
    char path[4096], err[512];
    SafeTensors st;
    snprintf(path, sizeof path, "%s/st.safetensors", check_tmpdir());
    write_st(path, "{\"a\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 24]}}", 24);
    REQUIRE(safetensors_open(&st, path, err, sizeof err) == 0);
    const StTensor *t = safetensors_find(&st, "a");
    REQUIRE(t != NULL);
    CHECK_INT((int)t->numel, 6);
    float x[6] = {1};
    CHECK_INT(safetensors_read_f32(&st, t, x, err, sizeof err), 0);
    CHECK(x[0] == 0.0f);
    const float *mapped = safetensors_map_f32(&st, t);
    CHECK(mapped == NULL);   /* data at byte 8 + 65: not 4-byte aligned, so it is read, not mapped */
    safetensors_close(&st);
    write_st(path, "{\"a\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 24]}}   ", 24);
    REQUIRE(safetensors_open(&st, path, err, sizeof err) == 0);
    mapped = safetensors_map_f32(&st, safetensors_find(&st, "a"));
    CHECK(mapped != NULL && mapped[5] == 0.0f);
    safetensors_close(&st);
    write_st(path, "{\"a\": {\"dtype\": \"F32\", \"shape\": [2, 3], \"data_offsets\": [0, 24]}}", 20);
    CHECK_INT(safetensors_open(&st, path, err, sizeof err), -1);
    CHECK(strstr(err, "truncated") != NULL);
    write_st(path, "{\"a\": {\"dtype\": \"F16\", \"shape\": [2, 3], \"data_offsets\": [0, 24]}}", 24);
    CHECK_INT(safetensors_open(&st, path, err, sizeof err), -1);
    CHECK(strstr(err, "need 12") != NULL);
    write_st(path, "[1, 2]", 0);
    CHECK_INT(safetensors_open(&st, path, err, sizeof err), -1);
    CHECK(strstr(err, "not a JSON object") != NULL);
    safetensors_close(&st);
}

/* A header with more after its JSON object than spaces is refused, with one message. */
TEST(hf_safetensors_header_tail) {
    char path[4096], err[512];
    SafeTensors st;
    snprintf(path, sizeof path, "%s/tail.safetensors", check_tmpdir());
    const char *tails[] = {" {\"b\": {}}", "x", "\n", "  }", "\t"};
    for (int i = 0; i < 5; i++) {
        char hdr[256];
        snprintf(hdr, sizeof hdr, "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}%s", tails[i]);
        write_st(path, hdr, 4);
        err[0] = 0;
        CHECK_INT(safetensors_open(&st, path, err, sizeof err), -1);
        if (!strstr(err, "goes on after its JSON object") || strchr(err, '\n'))
            check_fail(__FILE__, __LINE__, "tail %d: message \"%s\"", i, err);
        CHECK_INT(st.n, 0);   /* closed on error */
    }
    write_st(path, "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}     ", 4);
    CHECK_INT(safetensors_open(&st, path, err, sizeof err), 0);   /* spaces are padding */
    safetensors_close(&st);
}

/* The container's other checks: overlap, a name twice, metadata. */
TEST(hf_safetensors_layout_and_metadata) {
    char path[4096], err[512];
    SafeTensors st;
    snprintf(path, sizeof path, "%s/layout.safetensors", check_tmpdir());
    static const struct { const char *header; const char *want; } bad[] = {
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}, "
         "\"e\": {\"dtype\": \"F32\", \"shape\": [0], \"data_offsets\": [4, 4]}, "
         "\"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 12]}}", "\"a\" and \"b\" overlap"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}, "
         "\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}", "\"a\" appears twice"},
        {"{\"__metadata__\": {\"k\": 1}}", "value \"k\" is not a string"},
        {"{\"__metadata__\": [\"k\"]}", "not an object"},
        {"{\"__metadata__\": {\"k\": \"1\", \"k\": \"2\"}}", "key \"k\" appears twice"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1.5], \"data_offsets\": [0, 4]}}", "bad shape"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4.5]}}", "data_offsets"},
        {"{\"a\": {\"dtype\": \"I64\", \"shape\": [2], \"data_offsets\": [0, 8]}}", "need 16"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296, 4294967296], \"data_offsets\": [0, 4]}}",
         "bad shape"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_st(path, bad[i].header, 16);
        err[0] = 0;
        CHECK_INT(safetensors_open(&st, path, err, sizeof err), -1);
        if (!strstr(err, bad[i].want)) check_fail(__FILE__, __LINE__, "case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].want);
    }
    write_st(path, "{\"__metadata__\": {\"format\": \"pt\", \"note\": \"a \\\"b\\\"\"}, "
                   "\"u\": {\"dtype\": \"F99\", \"shape\": [3], \"data_offsets\": [0, 5]}}", 5);
    REQUIRE(safetensors_open(&st, path, err, sizeof err) == 0);
    CHECK_INT(st.n_meta, 2);
    CHECK(safetensors_meta(&st, "format") && !strcmp(safetensors_meta(&st, "format"), "pt"));
    CHECK(safetensors_meta(&st, "note") && !strcmp(safetensors_meta(&st, "note"), "a \"b\""));
    CHECK(safetensors_meta(&st, "nope") == NULL);
    char *mj = safetensors_meta_json(&st);
    CHECK(mj && !strcmp(mj, "{\"format\":\"pt\",\"note\":\"a \\\"b\\\"\"}"));
    free(mj);
    float x[3];
    CHECK_INT(safetensors_read_f32(&st, safetensors_find(&st, "u"), x, err, sizeof err), -1);   /* listed, not read */
    CHECK(strstr(err, "F99") != NULL);
    safetensors_close(&st);
}

/* The writer: exact bytes of a small file, a round trip of every float dtype,
 * and refusals that leave nothing behind. */
TEST(hf_safetensors_write) {
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/w.safetensors", check_tmpdir());
    float a[6] = {1, -2, 3.5f, 0, 1e-3f, -0.0f};
    unsigned short h[2] = {0x3C00, 0xC000};             /* F16 1, -2 */
    unsigned short b[3] = {0x3F80, 0x4040, 0xBF00};     /* BF16 1, 3, -0.5 */
    int64_t ids[2] = {7, -1};
    const char *meta[] = {"format", "pt", "k", "v \"q\"", NULL};
    StWriteTensor t[] = {{"a", "F32", 2, {2, 3}, a}, {"h", "F16", 1, {2}, h}, {"b", "BF16", 1, {3}, b},
                         {"ids", "I64", 1, {2}, ids}, {"s", "F32", 0, {0}, a}};
    REQUIRE(safetensors_write(path, t, 5, meta, err, sizeof err) == 0);
    size_t n = 0;
    unsigned char *bytes = (unsigned char *)file_read_all(path, 1 << 20, &n, err, sizeof err);
    REQUIRE(bytes != NULL);
    const char *want = "{\"__metadata__\":{\"format\":\"pt\",\"k\":\"v \\\"q\\\"\"},"
                       "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                       "\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[24,28]},"
                       "\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[28,34]},"
                       "\"ids\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[34,50]},"
                       "\"s\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[50,54]}}";
    size_t wl = strlen(want), padded = (wl + 7) / 8 * 8;
    uint64_t hl = 0;
    for (int i = 0; i < 8; i++) hl |= (uint64_t)bytes[i] << (8 * i);
    CHECK_INT(hl, padded);
    CHECK_INT(n, 8 + padded + 54);
    CHECK(n >= 8 + padded && memcmp(bytes + 8, want, wl) == 0);
    for (size_t i = wl; i < padded && 8 + i < n; i++) CHECK_INT(bytes[8 + i], ' ');
    CHECK(n == 8 + padded + 54 && memcmp(bytes + 8 + padded, a, 24) == 0 &&
          memcmp(bytes + 8 + padded + 34, ids, 16) == 0);
    free(bytes);

    SafeTensors st;
    REQUIRE(safetensors_open(&st, path, err, sizeof err) == 0);
    float x[6];
    CHECK_INT(safetensors_read_f32(&st, safetensors_find(&st, "a"), x, err, sizeof err), 0);
    CHECK(memcmp(x, a, sizeof a) == 0);
    CHECK_INT(safetensors_read_f32(&st, safetensors_find(&st, "h"), x, err, sizeof err), 0);
    CHECK(x[0] == 1.0f && x[1] == -2.0f);
    CHECK_INT(safetensors_read_f32(&st, safetensors_find(&st, "b"), x, err, sizeof err), 0);
    CHECK(x[0] == 1.0f && x[1] == 3.0f && x[2] == -0.5f);
    CHECK_INT(safetensors_find(&st, "s")->numel, 1);
    CHECK(!strcmp(safetensors_meta(&st, "k"), "v \"q\""));
    safetensors_close(&st);

    /* refused: a name twice, a key twice, an unknown dtype, a reserved name;
     * the file written before stays as it was and no temporary is left */
    StWriteTensor twice[] = {{"a", "F32", 1, {1}, a}, {"a", "F32", 1, {1}, a}};
    StWriteTensor odd[] = {{"a", "F99", 1, {1}, a}};
    StWriteTensor meta_name[] = {{"__metadata__", "F32", 1, {1}, a}};
    const char *meta2[] = {"k", "1", "k", "2", NULL};
    CHECK_INT(safetensors_write(path, twice, 2, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "\"a\" appears twice") != NULL);
    CHECK_INT(safetensors_write(path, t, 1, meta2, err, sizeof err), -1);
    CHECK(strstr(err, "key \"k\" appears twice") != NULL);
    CHECK_INT(safetensors_write(path, odd, 1, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "F99") != NULL);
    CHECK_INT(safetensors_write(path, meta_name, 1, NULL, err, sizeof err), -1);
    size_t n2 = 0;
    char *again = file_read_all(path, 1 << 20, &n2, err, sizeof err);
    CHECK(again && n2 == n);
    free(again);
    DIR *d = opendir(check_tmpdir());
    REQUIRE(d != NULL);
    for (struct dirent *e; (e = readdir(d));)
        if (!strncmp(e->d_name, "w.safetensors.tmp", 17)) check_fail(__FILE__, __LINE__, "left behind: %s", e->d_name);
    closedir(d);

    /* no metadata: no __metadata__ entry at all */
    REQUIRE(safetensors_write(path, t, 1, NULL, err, sizeof err) == 0);
    bytes = (unsigned char *)file_read_all(path, 1 << 20, &n, err, sizeof err);
    CHECK(bytes && n > 8 && memcmp(bytes + 8, "{\"a\":", 5) == 0);
    free(bytes);
}

/* Every BF16 and F16 value (256 × 256 each, so the reader's 32768-value pieces
 * meet at a boundary) read whole and by rows: every bit as the one-value
 * conversions give it (bits << 16 for BF16, by hand), and float32 mapped in
 * place with the same bits as read into memory. */
TEST(hf_safetensors_bulk_halves_rows_and_map) {
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/halves.safetensors", check_tmpdir());
    unsigned short *all = malloc(65536 * sizeof *all);
    float *f = malloc(65536 * sizeof *f), *x = malloc(65536 * sizeof *x);
    REQUIRE(all && f && x);
    for (unsigned i = 0; i < 65536; i++) { all[i] = (unsigned short)(i * 40503u); f[i] = (float)i * 0.37f - 9.0f; }
    StWriteTensor t[] = {{"pad", "BF16", 1, {2}, all}, {"b", "BF16", 2, {256, 256}, all},
                         {"h", "F16", 2, {256, 256}, all}, {"f", "F32", 2, {256, 256}, f}};
    REQUIRE(safetensors_write(path, t, 4, NULL, err, sizeof err) == 0);
    SafeTensors st;
    REQUIRE(safetensors_open(&st, path, err, sizeof err) == 0);
    const StTensor *b = safetensors_find(&st, "b"), *h = safetensors_find(&st, "h"), *ft = safetensors_find(&st, "f");
    REQUIRE(b && h && ft);
    CHECK_INT(safetensors_read_f32(&st, b, x, err, sizeof err), 0);
    int bad = 0;
    for (unsigned i = 0; i < 65536; i++) {
        uint32_t want = (uint32_t)all[i] << 16, got;
        memcpy(&got, &x[i], 4);
        if (got != want && bad++ < 3) check_fail(__FILE__, __LINE__, "bf16 %04x -> %08x, expected %08x", all[i], got, want);
    }
    CHECK_INT(safetensors_read_f32(&st, h, x, err, sizeof err), 0);
    for (unsigned i = 0; i < 65536; i++) {
        float want = safetensors_f16_to_f32(all[i]);
        if (memcmp(&want, &x[i], 4) != 0 && bad++ < 3) check_fail(__FILE__, __LINE__, "f16 %04x differs", all[i]);
    }
    CHECK_INT(bad, 0);
    float rows[3 * 256], whole_b[3 * 256];
    CHECK_INT(safetensors_read_rows_f32(&st, b, 127, 3, rows, err, sizeof err), 0);
    for (int i = 0; i < 3 * 256; i++) {
        uint32_t u = (uint32_t)all[127 * 256 + i] << 16;
        memcpy(&whole_b[i], &u, 4);
    }
    CHECK(memcmp(rows, whole_b, sizeof rows) == 0);
    CHECK_INT(safetensors_read_rows_f32(&st, b, 255, 2, rows, err, sizeof err), -1);
    CHECK(strstr(err, "no rows 255..257") != NULL);
    /* F32 at an offset of 4·k: mapped, and the same bits as read */
    const float *mapped = safetensors_map_f32(&st, ft);
    CHECK_INT(safetensors_read_f32(&st, ft, x, err, sizeof err), 0);
    CHECK(mapped && memcmp(mapped, x, 65536 * sizeof *x) == 0 && memcmp(x, f, 65536 * sizeof *x) == 0);
    CHECK(safetensors_map_f32(&st, b) == NULL);   /* not float32: never mapped as floats */
    safetensors_close(&st);
    free(all); free(f); free(x);
}

/* BERT's vocab.txt read into the tokenizer engine: uncased, "Héllo, [MASK]
 * world!" is hello , [MASK] world ! between [CLS] and [SEP] (the accent
 * stripped, [MASK] whole as typed, offsets into the typed text); cased, the
 * capital is no token of the vocabulary and the word is [UNK]. */
TEST(hf_bert_vocab_txt_by_hand) {
    char vocab[512], err[256] = "";
    snprintf(vocab, sizeof vocab, "%s/bert-vocab.txt", check_tmpdir());
    write_text(vocab, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n,\nworld\n!\r\n##s\n");
    TokJson *t = tokjson_load_bert(vocab, 1, -1, err, sizeof err);
    REQUIRE(t != NULL);
    CHECK_INT(tokjson_vocab_size(t), 10);
    const char *text = "H\xC3\xA9llo, [MASK] worlds!";
    TokJsonEnc e;
    REQUIRE(tokjson_encode(t, text, 1, &e, err, sizeof err) == 0);
    int want[] = {2, 5, 6, 4, 7, 9, 8, 3}, start[] = {0, 0, 6, 8, 15, 20, 21, 22}, end[] = {0, 6, 7, 14, 20, 21, 22, 22};
    REQUIRE(e.n == 8);
    for (int i = 0; i < 8; i++) {
        CHECK_INT(e.ids[i], want[i]);
        CHECK_INT(e.start[i], start[i]);
        CHECK_INT(e.end[i], end[i]);
    }
    CHECK_INT(e.special[3], 1);
    tokjson_enc_free(&e);
    tokjson_free(t);
    REQUIRE((t = tokjson_load_bert(vocab, 0, -1, err, sizeof err)) != NULL);
    REQUIRE(tokjson_encode(t, "Hello world", 0, &e, err, sizeof err) == 0);
    REQUIRE(e.n == 2);
    CHECK_INT(e.ids[0], 1);
    CHECK_INT(e.ids[1], 7);
    tokjson_enc_free(&e);
    tokjson_free(t);
    write_text(vocab, "hello\nworld\n");
    CHECK(tokjson_load_bert(vocab, 1, -1, err, sizeof err) == NULL);
    CHECK(strstr(err, "has no [UNK] token") != NULL);
}
