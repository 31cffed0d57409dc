/* test_checkpoint.c — safetensors round trip, damaged files (the container's checks in
 * core/safetensors.c and the model's here), the metadata readers. */
#include "check.h"
#include "core/fileio.h"
#include "core/safetensors.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const ModelConfig CKPT_CFG = { MODEL_ENC_DEC, 13, 16, 4, 24, 2, 1, 12, 1 };

static char *vocab13[13] = { "<pad>", "<unk>", "<bos>", "<eos>", "<2fr>", "<2vi>", "the",
                             "animal", "l'", "élève", "tôi", "it", "\"q\"" };

static const char *tmp_path(const char *name) {
    static char buf[8][1024];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 1024, "%s/%s", check_tmpdir(), name);
    return p;
}

static unsigned char *slurp(const char *path, size_t *n) {
    *n = 0;
    return (unsigned char *)file_read_all(path, 64u << 20, n, NULL, 0);   /* test checkpoints are tiny */
}

static void spit(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    if (n) fwrite(data, 1, n, f);
    fclose(f);
}

/* Writes a valid checkpoint and returns its bytes. */
static unsigned char *good_file(size_t *n, Model *m) {
    const char *path = tmp_path("good.safetensors");
    char err[256];
    if (model_init_random(m, &CKPT_CFG, 42)) return NULL;
    const char *extra[] = { "train_command", "attnviz train --seed 1", NULL };
    if (checkpoint_save(path, m, (const char *const *)vocab13, 13, extra, err, sizeof err)) {
        fprintf(stderr, "save: %s\n", err);
        return NULL;
    }
    return slurp(path, n);
}

TEST(checkpoint_round_trip) {
    Model m, back;
    size_t n;
    unsigned char *bytes = good_file(&n, &m);
    REQUIRE(bytes != NULL);
    char **vocab = NULL, *meta = NULL, err[256];
    int nv = 0;
    int rc = checkpoint_load(tmp_path("good.safetensors"), &back, &vocab, &nv, &meta, err, sizeof err);
    if (rc) fprintf(stderr, "  load: %s\n", err);
    REQUIRE(rc == 0);
    CHECK(memcmp(&back.config, &m.config, sizeof m.config) == 0);
    CHECK_INT(back.num_params, m.num_params);
    CHECK(memcmp(back.params_memory, m.params_memory, m.num_params * sizeof(float)) == 0);
    CHECK_INT(nv, 13);
    for (int i = 0; i < nv && i < 13; i++) CHECK(!strcmp(vocab[i], vocab13[i]));
    CHECK(meta && strstr(meta, "\"train_command\":\"attnviz train --seed 1\""));
    CHECK(meta && strstr(meta, "\"format\":\"attnviz-model\""));
    /* header length is a multiple of 8 and the file holds exactly the data */
    uint64_t h = 0;
    for (int i = 0; i < 8; i++) h |= (uint64_t)bytes[i] << (8 * i);
    CHECK(h % 8 == 0);
    CHECK_INT(n, 8 + h + 4 * m.num_params);
    /* saving the loaded model gives the same bytes */
    CHECK(checkpoint_save(tmp_path("again.safetensors"), &back, (const char *const *)vocab, nv,
                          (const char *const[]){ "train_command", "attnviz train --seed 1", NULL },
                          err, sizeof err) == 0);
    size_t n2;
    unsigned char *b2 = slurp(tmp_path("again.safetensors"), &n2);
    CHECK(b2 && n2 == n && memcmp(b2, bytes, n) == 0);
    free(b2);
    free(meta);
    checkpoint_free_vocab(vocab, nv);
    model_free(&back);
    model_free(&m);
    free(bytes);
}

/* Loads path and expects failure with a message containing `want`. */
static void expect_fail(const char *file, int line, const char *what, const char *path, const char *want) {
    Model m;
    char **vocab = (char **)1, *meta = (char *)1, err[512] = "";
    int nv = 7;
    int rc = checkpoint_load(path, &m, &vocab, &nv, &meta, err, sizeof err);
    if (rc != -1) { check_fail(file, line, "%s: load returned %d, expected -1", what, rc); model_free(&m); return; }
    if (!strstr(err, want)) check_fail(file, line, "%s: message \"%s\" lacks \"%s\"", what, err, want);
    if (strchr(err, '\n')) check_fail(file, line, "%s: message is not one line", what);
    if (m.params_memory || vocab || meta || nv) check_fail(file, line, "%s: outputs not cleared on error", what);
}
#define EXPECT_FAIL(what, path, want) expect_fail(__FILE__, __LINE__, what, path, want)

/* Rewrites the header of a good file: replaces `from` by `to` (first occurrence). */
static int write_edited(const char *path, const unsigned char *bytes, size_t n, const char *from, const char *to) {
    uint64_t h = 0;
    for (int i = 0; i < 8; i++) h |= (uint64_t)bytes[i] << (8 * i);
    char *hdr = malloc(h + 1);
    memcpy(hdr, bytes + 8, h);
    hdr[h] = 0;
    char *at = strstr(hdr, from);
    if (!at) { free(hdr); fprintf(stderr, "  (test setup: \"%s\" not in header)\n", from); return -1; }
    size_t nh = h - strlen(from) + strlen(to);
    unsigned char *out = malloc(8 + nh + (n - 8 - h));
    for (int i = 0; i < 8; i++) out[i] = (unsigned char)((uint64_t)nh >> (8 * i));
    size_t pre = (size_t)(at - hdr);
    memcpy(out + 8, hdr, pre);
    memcpy(out + 8 + pre, to, strlen(to));
    memcpy(out + 8 + pre + strlen(to), at + strlen(from), h - pre - strlen(from));
    memcpy(out + 8 + nh, bytes + 8 + h, n - 8 - h);
    spit(path, out, 8 + nh + (n - 8 - h));
    free(out);
    free(hdr);
    return 0;
}

/* Rewrites a good file with `tail` after its header's JSON object (the
 * padding spaces dropped first): the header grows by strlen(tail). */
static void write_header_tail(const char *path, const unsigned char *bytes, size_t n, const char *tail) {
    uint64_t h = 0;
    for (int i = 0; i < 8; i++) h |= (uint64_t)bytes[i] << (8 * i);
    size_t json = h;
    while (json > 0 && bytes[8 + json - 1] == ' ') json--;
    size_t nh = json + strlen(tail), data = n - 8 - h;
    unsigned char *out = malloc(8 + nh + data);
    for (int i = 0; i < 8; i++) out[i] = (unsigned char)((uint64_t)nh >> (8 * i));
    memcpy(out + 8, bytes + 8, json);
    memcpy(out + 8 + json, tail, strlen(tail));
    memcpy(out + 8 + nh, bytes + 8 + h, data);
    spit(path, out, 8 + nh + data);
    free(out);
}

TEST(checkpoint_damaged_files) {
    Model m;
    size_t n;
    unsigned char *bytes = good_file(&n, &m);
    REQUIRE(bytes != NULL);
    const char *p = tmp_path("bad.safetensors");
    char buf[256];

    EXPECT_FAIL("missing file", tmp_path("nope.safetensors"), "cannot read");
    EXPECT_FAIL("directory", check_tmpdir(), "not a regular file");
    spit(p, "", 0);
    EXPECT_FAIL("empty", p, "too short");
    spit(p, bytes, 5);
    EXPECT_FAIL("5 bytes", p, "too short");
    spit(p, bytes, n / 2);
    EXPECT_FAIL("truncated in the data", p, "outside");
    spit(p, bytes, 100);
    EXPECT_FAIL("truncated in the header", p, "header length");
    unsigned char *c = malloc(n);
    memcpy(c, bytes, n);
    memset(c, 0xff, 8);
    spit(p, c, n);
    EXPECT_FAIL("huge header length", p, "header length is impossible");
    {   /* the file's first 8 bytes are never echoed as a number (a symlink to /etc/shadow) */
        Model m2;
        char **v2 = NULL, *meta2 = NULL, err2[512] = "";
        int nv2 = 0;
        memcpy(c, "root:$6$", 8);
        spit(p, c, n);
        CHECK(checkpoint_load(p, &m2, &v2, &nv2, &meta2, err2, sizeof err2) == -1);
        char shown[32];
        uint64_t h = 0;
        for (int i = 0; i < 8; i++) h |= (uint64_t)c[i] << (8 * i);
        snprintf(shown, sizeof shown, "%llu", (unsigned long long)h);
        CHECK(strstr(err2, "impossible") && !strstr(err2, shown));
    }
    memcpy(c, bytes, n);
    c[8] = 'x';
    spit(p, c, n);
    EXPECT_FAIL("broken JSON", p, "not valid JSON");
    free(c);

    ModelParam tab[MODEL_MAX_TENSORS];
    int nt = model_param_table(&CKPT_CFG, NULL, tab, MODEL_MAX_TENSORS);
    const ModelParam *outb = &tab[nt - 1], *mid = &tab[5];
    char offs[128], offs2[128];

#define EDIT(what, from, to, want) do { \
        if (write_edited(p, bytes, n, from, to) == 0) EXPECT_FAIL(what, p, want); \
        else check_fail(__FILE__, __LINE__, "%s: setup", what); } while (0)

    snprintf(offs, sizeof offs, "\"data_offsets\":[%zu,%zu]", outb->offset * 4, (outb->offset + outb->numel) * 4);
    snprintf(offs2, sizeof offs2, "\"data_offsets\":[%zu,%zu]", (m.num_params + 100) * 4, (m.num_params + 113) * 4);
    EDIT("offsets beyond the file", offs, offs2, "outside");
    snprintf(offs2, sizeof offs2, "\"data_offsets\":[0,%zu]", outb->numel * 4);
    EDIT("overlapping tensors", offs, offs2, "overlap");
    snprintf(offs2, sizeof offs2, "\"data_offsets\":[%zu,%zu]", outb->offset * 4 + 4, outb->offset * 4);
    EDIT("end before begin", offs, offs2, "outside");
    snprintf(offs, sizeof offs, "\"data_offsets\":[%zu,%zu]", mid->offset * 4, (mid->offset + mid->numel) * 4);
    snprintf(offs2, sizeof offs2, "\"data_offsets\":[%zu,%zu]", mid->offset * 4, (mid->offset + mid->numel) * 4 - 4);
    EDIT("size not 4*numel", offs, offs2, "holds");
    snprintf(offs2, sizeof offs2, "\"data_offsets\":[%zu.5,%zu]", mid->offset * 4, (mid->offset + mid->numel) * 4);
    EDIT("fractional offset", offs, offs2, "data_offsets");
    snprintf(offs2, sizeof offs2, "\"data_offsets\":[-4,%zu]", (mid->offset + mid->numel) * 4);
    EDIT("negative offset", offs, offs2, "data_offsets");
    EDIT("wrong shape", "\"shape\":[13,16]", "\"shape\":[13,17]", "shape");
    EDIT("wrong rank", "\"shape\":[13,16]", "\"shape\":[208]", "shape");
    EDIT("wrong dtype", "\"dtype\":\"F32\"", "\"dtype\":\"F16\"", "dtype F16");
    EDIT("missing tensor", "\"out.b\"", "\"out.bias\"", "\"out.b\" is missing");
    EDIT("extra tensor over another", "\"tok_emb\":",
         "\"extra\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"tok_emb\":", "overlap");
    EDIT("extra tensor", "\"tok_emb\":", "\"extra\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},\"tok_emb\":",
         "unexpected tensor \"extra\"");
    EDIT("metadata renamed", "\"__metadata__\"", "\"__metadatx__\"", "\"__metadatx__\": its header entry needs dtype");
    EDIT("metadata twice", "\"tok_emb\":", "\"__metadata__\":{},\"tok_emb\":", "__metadata__ appears twice");
    EDIT("metadata key twice", "\"version\":\"1\"", "\"version\":\"1\",\"version\":\"1\"", "key \"version\" appears twice");
    EDIT("tensor twice", "\"tok_emb\":", "\"out.b\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]},\"tok_emb\":",
         "\"out.b\" appears twice");
    EDIT("wrong format", "\"attnviz-model\"", "\"other-model\"", "not an attnviz model");
    EDIT("wrong version", "\"version\":\"1\"", "\"version\":\"2\"", "version \"2\" is not supported");
    EDIT("missing version", "\"version\":\"1\",", "", "version \"(none)\"");
    EDIT("non-string metadata", "\"version\":\"1\"", "\"version\":1", "not a string");
    EDIT("bad config", "\\\"n_heads\\\":4", "\\\"n_heads\\\":3", "not a multiple");
    EDIT("config zero size", "\\\"d_ff\\\":24", "\\\"d_ff\\\":0", "d_ff");
    EDIT("config not JSON", "\"config\":\"{", "\"config\":\"[", "config");
    EDIT("config arch", "encoder-decoder", "transformer", "arch");
    EDIT("vocab too short", "\\\"<pad>\\\",", "", "13 strings");
    EDIT("vocab not strings", "\\\"<pad>\\\",", "7,", "not a string");
    EDIT("vocab missing", "\"vocab\":", "\"vocabulary\":", "no \"vocab\"");

    /* the model's tensors without __metadata__ */
    ModelParam full[MODEL_MAX_TENSORS];
    StWriteTensor wt[MODEL_MAX_TENSORS];
    nt = model_param_table(&m.config, m.params_memory, full, MODEL_MAX_TENSORS);
    for (int t = 0; t < nt; t++) {
        wt[t] = (StWriteTensor){.name = full[t].name, .dtype = "F32", .ndim = full[t].ndim, .data = full[t].ptr};
        for (int d = 0; d < full[t].ndim; d++) wt[t].shape[d] = full[t].shape[d];
    }
    REQUIRE(safetensors_write(p, wt, nt, NULL, buf, sizeof buf) == 0);
    EXPECT_FAIL("no metadata", p, "no __metadata__");

    /* more than spaces after the header's JSON object */
    write_header_tail(p, bytes, n, " {\"x\":{}}");
    EXPECT_FAIL("a second JSON object after the header's", p, "goes on after its JSON object");
    write_header_tail(p, bytes, n, "\n");
    EXPECT_FAIL("a newline after the header's JSON", p, "only spaces may pad it");
    write_header_tail(p, bytes, n, "       ");
    Model sp;
    char **sv = NULL, serr[512];
    int snv = 0;
    CHECK(checkpoint_load(p, &sp, &sv, &snv, NULL, serr, sizeof serr) == 0);   /* spaces are padding */
    checkpoint_free_vocab(sv, snv);
    model_free(&sp);

    /* a NaN in the data */
    c = malloc(n);
    memcpy(c, bytes, n);
    uint32_t nan_bits = 0x7fc00000u;
    memcpy(c + n - 8, &nan_bits, 4);
    spit(p, c, n);
    EXPECT_FAIL("NaN parameter", p, "non-finite");

    /* Random damage: flipped header bytes and every truncation never crash and
     * either fail cleanly or load a consistent model. */
    uint64_t h = 0;
    for (int i = 0; i < 8; i++) h |= (uint64_t)bytes[i] << (8 * i);
    uint64_t s = 12345;
    for (int it = 0; it < 300; it++) {
        memcpy(c, bytes, n);
        for (int k = 0; k < 3; k++) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            c[8 + s % h] = (unsigned char)(s >> 32);
        }
        spit(p, c, n);
        Model mm;
        char **v = NULL, err[512];
        int nv = 0;
        if (checkpoint_load(p, &mm, &v, &nv, NULL, err, sizeof err) == 0) {
            CHECK(mm.params_memory != NULL && nv == mm.config.vocab_size);
            checkpoint_free_vocab(v, nv);
            model_free(&mm);
        } else {
            CHECK(err[0] != 0 && mm.params_memory == NULL && v == NULL);
        }
    }
    for (size_t len = 0; len < n; len += 1 + len / 16) {
        spit(p, bytes, len);
        snprintf(buf, sizeof buf, "truncated to %zu bytes", len);
        Model mm;
        char **v = NULL, err[512];
        int nv = 0;
        int rc = checkpoint_load(p, &mm, &v, &nv, NULL, err, sizeof err);
        if (rc != -1) check_fail(__FILE__, __LINE__, "%s: loaded", buf);
        model_free(&mm);
        checkpoint_free_vocab(v, nv);
    }
    free(c);
    free(bytes);
    model_free(&m);
}

TEST(checkpoint_save_errors) {
    Model m;
    char err[256] = "";
    REQUIRE(model_init_random(&m, &CKPT_CFG, 1) == 0);
    CHECK(checkpoint_save(tmp_path("v.safetensors"), &m, (const char *const *)vocab13, 12, NULL, err, sizeof err) == -1);
    CHECK(strstr(err, "vocab") != NULL);
    err[0] = 0;
    CHECK(checkpoint_save("/nonexistent-dir/x.safetensors", &m, (const char *const *)vocab13, 13, NULL, err, sizeof err) == -1);
    CHECK(strstr(err, "cannot write") != NULL);
    model_free(&m);
    model_free(&m);      /* twice: accepted */
    model_free(NULL);
}

TEST(checkpoint_metadata_readers) {
    const char *meta =
        "{\"format\":\"attnviz-model\",\"coreference_head\":\"{\\\"map\\\":\\\"encoder.2.self\\\",\\\"head\\\":1,"
        "\\\"accuracy\\\":0.93}\",\"supervised_heads\":\"[{\\\"map\\\":\\\"encoder.2.self\\\",\\\"head\\\":1,"
        "\\\"target\\\":\\\"coreference\\\"}]\"}";
    int l = -1, h = -1;
    double acc = 0;
    CHECK_INT(checkpoint_meta_coref_head(meta, 3, 4, &l, &h, &acc), 1);
    CHECK_INT(l, 2);
    CHECK_INT(h, 1);
    CHECK_NEAR(acc, 0.93, 1e-12);
    CHECK_INT(checkpoint_meta_coref_head(meta, 2, 4, &l, &h, &acc), 0);   /* no layer 2 */
    CHECK_INT(checkpoint_meta_coref_head(meta, 3, 1, &l, &h, &acc), 0);   /* no head 1  */
    CHECK_INT(checkpoint_meta_coref_head("{}", 3, 4, &l, &h, &acc), 0);
    CHECK_INT(checkpoint_meta_coref_head("not json", 3, 4, &l, &h, &acc), 0);
    CHECK_INT(checkpoint_meta_coref_head(NULL, 3, 4, &l, &h, &acc), 0);
    CHECK_INT(checkpoint_meta_head_supervised(meta, "encoder.2.self", 1), 1);
    CHECK_INT(checkpoint_meta_head_supervised(meta, "encoder.2.self", 0), 0);
    CHECK_INT(checkpoint_meta_head_supervised(meta, "encoder.1.self", 1), 0);
    CHECK_INT(checkpoint_meta_head_supervised("{}", "encoder.2.self", 1), 0);
    CHECK_INT(checkpoint_meta_head_supervised(NULL, "encoder.2.self", 1), 0);
}

TEST(checkpoint_metadata_source_tokens) {
    /* 10 ids: seen 1, 3, 6, 9 → digits 0xa (ids 0-3), 0x4 (4-7), 0x2 (8-9) */
    unsigned char seen[10] = {0, 1, 0, 1, 0, 0, 1, 0, 0, 1}, known[10];
    char hex[8];
    checkpoint_meta_source_hex(seen, 10, hex, sizeof hex);
    CHECK(!strcmp(hex, "a42"));
    char meta[256];
    snprintf(meta, sizeof meta, "{\"train_source_tokens\":\"%s\",\"train_max_source_len\":\"12\"}", hex);
    int max_len = 0;
    CHECK_INT(checkpoint_meta_source_known(meta, 10, known, &max_len), 1);
    CHECK_INT(max_len, 12);
    for (int i = 0; i < 10; i++) CHECK_INT(known[i], seen[i]);
    /* older checkpoints, wrong length, bad digits: every word known, no length */
    const char *old[] = {"{}", NULL, "{\"train_source_tokens\":\"a4\",\"train_max_source_len\":\"12\"}",
                         "{\"train_source_tokens\":\"a4z\",\"train_max_source_len\":\"12\"}",
                         "{\"train_source_tokens\":\"a42\",\"train_max_source_len\":\"x\"}"};
    for (int k = 0; k < 5; k++) {
        CHECK_INT(checkpoint_meta_source_known(old[k], 10, known, &max_len), 0);
        CHECK_INT(max_len, -1);
        for (int i = 0; i < 10; i++) CHECK_INT(known[i], 1);
    }
}

TEST(checkpoint_metadata_target_tokens) {
    /* the language mask's sets: the same hex as train_source_tokens, one key per language */
    unsigned char fr[10] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0}, vi[10] = {0, 0, 0, 1, 1, 0, 0, 0, 0, 1}, got[10];
    char hfr[8], hvi[8], meta[256];
    checkpoint_meta_source_hex(fr, 10, hfr, sizeof hfr);
    checkpoint_meta_source_hex(vi, 10, hvi, sizeof hvi);
    CHECK(!strcmp(hfr, "8c0") && !strcmp(hvi, "812"));
    snprintf(meta, sizeof meta, "{\"train_target_tokens_fr\":\"%s\",\"train_target_tokens_vi\":\"%s\"}", hfr, hvi);
    CHECK_INT(checkpoint_meta_target_tokens(meta, "fr", 10, got), 1);
    for (int i = 0; i < 10; i++) CHECK_INT(got[i], fr[i]);
    CHECK_INT(checkpoint_meta_target_tokens(meta, "vi", 10, got), 1);
    for (int i = 0; i < 10; i++) CHECK_INT(got[i], vi[i]);
    /* absent (older checkpoints), wrong length, bad digits, other language: no set, all 0 */
    const char *bad[] = {"{}", NULL, "not json", "{\"train_target_tokens_fr\":\"8c\"}",
                         "{\"train_target_tokens_fr\":\"8cz\"}", "{\"train_target_tokens_fr\":\"8C0\"}",
                         "{\"train_target_tokens_vi\":\"812\"}"};
    for (int k = 0; k < 7; k++) {
        memset(got, 7, sizeof got);
        CHECK_INT(checkpoint_meta_target_tokens(bad[k], "fr", 10, got), 0);
        for (int i = 0; i < 10; i++) CHECK_INT(got[i], 0);
    }
}
