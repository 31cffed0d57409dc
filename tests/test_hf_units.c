/* test_hf_units.c — the small parts under the GPT-2/BERT loaders: half-precision
 * conversion (every F16 value against the formula), BF16, the string table,
 * and the safetensors reader's own checks on files written here. */
#include "check.h"
#include "core/fileio.h"
#include "core/safetensors.h"
#include "tokenize/strmap.h"
#include <math.h>
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
