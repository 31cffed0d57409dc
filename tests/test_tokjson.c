/* test_tokjson.c — the tokenizer.json reader (tokenize/tokjson.h) on small
 * files written here, with the ids worked out by hand from the rules of
 * Hugging Face's tokenizers library; and tokjson_tool, the oracle mode of the
 * unit-test binary that tests/test_tokjson.py runs against the library:
 *
 *     build/test_unit --tokjson FILE.json < LINES
 *
 * reads one JSON string a line and prints one JSON object a line:
 * {"ids": […], "with_special": […], "tokens": […], "start": […], "end": […],
 *  "decode": "…", "decode_skip": "…", "ms": encoding time}, after a first
 * line {"load_ms": …, "vocab": …, "bos": …, "eos": …, "unk": …, "model": "…",
 * "sanitized": 0 or 1} (times in ms of processor time).  A load failure: exit 1 and one line
 * "error: …" on stderr. */
#include "check.h"
#include "core/fileio.h"
#include "core/strbuf.h"
#include "tokenize/tokjson.h"
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tokjson_tool(int argc, char **argv);

/* 1 in a build under AddressSanitizer (make sanitize), whose times mean little. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* Processor time of this process, in ms (steadier than the wall clock on a
 * machine other jobs share). */
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void json_ints(StrBuf *s, const char *key, const int *v, int n) {
    strbuf_printf(s, "\"%s\": [", key);
    for (int i = 0; i < n; i++) strbuf_printf(s, i ? ", %d" : "%d", v[i]);
    strbuf_printf(s, "]");
}

/* One text → one JSON line. */
static int tool_line(const TokJson *t, const char *text, StrBuf *s, char *err, size_t errlen) {
    TokJsonEnc plain = {0}, with = {0};
    char *dec = NULL, *skip = NULL;
    double t0 = now_ms();
    int bad = tokjson_encode(t, text, 0, &plain, err, errlen);
    double ms = now_ms() - t0;
    if (bad || tokjson_encode(t, text, 1, &with, err, errlen) ||
        tokjson_decode(t, with.ids, with.n, 0, &dec, err, errlen) ||
        tokjson_decode(t, with.ids, with.n, 1, &skip, err, errlen)) {
        tokjson_enc_free(&plain);
        tokjson_enc_free(&with);
        free(dec);
        return -1;
    }
    strbuf_printf(s, "{");
    json_ints(s, "ids", plain.ids, plain.n);
    strbuf_printf(s, ", ");
    json_ints(s, "with_special", with.ids, with.n);
    strbuf_printf(s, ", \"tokens\": [");
    for (int i = 0; i < plain.n; i++) {
        if (i) strbuf_printf(s, ", ");
        strbuf_json_string(s, plain.tokens[i] ? plain.tokens[i] : "");
    }
    strbuf_printf(s, "], ");
    json_ints(s, "start", plain.start, plain.n);
    strbuf_printf(s, ", ");
    json_ints(s, "end", plain.end, plain.n);
    strbuf_printf(s, ", \"decode\": ");
    strbuf_json_string(s, dec);
    strbuf_printf(s, ", \"decode_skip\": ");
    strbuf_json_string(s, skip);
    strbuf_printf(s, ", \"ms\": %.3f}\n", ms);
    tokjson_enc_free(&plain);
    tokjson_enc_free(&with);
    free(dec);
    free(skip);
    return 0;
}

int tokjson_tool(int argc, char **argv) {
    char err[512] = "";
    if (argc < 3) { fprintf(stderr, "usage: test_unit --tokjson FILE.json < LINES\n"); return 2; }
    double t0 = now_ms();
    TokJson *t = tokjson_load(argv[2], err, sizeof err);
    double ms = now_ms() - t0;
    if (!t) { fprintf(stderr, "error: %s\n", err); return 1; }
    printf("{\"load_ms\": %.3f, \"vocab\": %d, \"bos\": %d, \"eos\": %d, \"unk\": %d, \"model\": \"%s\", "
           "\"sanitized\": %d}\n", ms, tokjson_vocab_size(t), tokjson_bos_id(t), tokjson_eos_id(t), tokjson_unk_id(t),
           tokjson_model_type(t), SANITIZED);
    size_t cap = 1 << 16, len = 0;
    char *in = malloc(cap), line_err[512];
    for (size_t k; in && (k = fread(in + len, 1, cap - len - 1, stdin)) > 0;) {
        len += k;
        if (len + 1 == cap) { char *n = realloc(in, cap *= 2); if (!n) { free(in); in = NULL; } else in = n; }
    }
    if (!in) { fprintf(stderr, "error: out of memory\n"); tokjson_free(t); return 1; }
    in[len] = '\0';
    StrBuf s = {0};
    int rc = 0;
    double enc_ms = 0;
    for (char *line = in, *next; *line && rc == 0; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        else next = line + strlen(line);
        cJSON *j = cJSON_Parse(line);
        if (!cJSON_IsString(j)) { fprintf(stderr, "error: a line is not a JSON string\n"); rc = 1; }
        double t1 = now_ms();
        if (rc == 0 && tool_line(t, j->valuestring, &s, line_err, sizeof line_err)) {
            fprintf(stderr, "error: %s\n", line_err);
            rc = 1;
        }
        enc_ms += now_ms() - t1;
        cJSON_Delete(j);
    }
    if (s.buf) fwrite(s.buf, 1, s.len, stdout);
    fprintf(stderr, "tokjson: loaded in %.1f ms, encoded and decoded in %.1f ms\n", ms, enc_ms);
    free(s.buf);
    free(in);
    tokjson_free(t);
    return rc;
}

/* ---- small files, ids worked out by hand ---- */

/* A tokenizer.json from text where ` stands for " (readable literals). */
static TokJson *load_ticks(const char *ticks, char *err, size_t errlen) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tokjson-%d.json", check_tmpdir(), rand());
    char *json = strdup(ticks);
    for (char *p = json; *p; p++)
        if (*p == '`') *p = '"';
    char e2[256];
    if (file_write_atomic(path, json, strlen(json), e2, sizeof e2)) { free(json); return NULL; }
    free(json);
    return tokjson_load(path, err, errlen);
}

/* Encodes text and compares the ids with want[0..n); prints both on a mismatch. */
static void check_ids(const char *file, int line, const TokJson *t, const char *text, int special, const int *want,
                      int n) {
    TokJsonEnc e = {0};
    char err[512] = "";
    if (tokjson_encode(t, text, special, &e, err, sizeof err)) {
        check_fail(file, line, "encode(\"%s\") failed: %s", text, err);
        return;
    }
    int same = e.n == n;
    for (int i = 0; same && i < n; i++) same = e.ids[i] == want[i];
    if (!same) {
        char got[512] = "", exp[512] = "";
        for (int i = 0; i < e.n; i++) snprintf(got + strlen(got), sizeof got - strlen(got), " %d", e.ids[i]);
        for (int i = 0; i < n; i++) snprintf(exp + strlen(exp), sizeof exp - strlen(exp), " %d", want[i]);
        check_fail(file, line, "encode(\"%s\") =%s, expected%s", text, got, exp);
    }
    tokjson_enc_free(&e);
}
#define IDS(t, text, special, ...) do { const int w_[] = {__VA_ARGS__}; \
    check_ids(__FILE__, __LINE__, t, text, special, w_, (int)(sizeof w_ / sizeof w_[0])); } while (0)

static void check_decode(const char *file, int line, const TokJson *t, const int *ids, int n, int skip,
                         const char *want) {
    char *s = NULL, err[256];
    if (tokjson_decode(t, ids, n, skip, &s, err, sizeof err)) { check_fail(file, line, "decode failed: %s", err); return; }
    if (strcmp(s, want)) check_fail(file, line, "decode = \"%s\", expected \"%s\"", s, want);
    free(s);
}
#define DECODE(t, skip, want, ...) do { const int i_[] = {__VA_ARGS__}; \
    check_decode(__FILE__, __LINE__, t, i_, (int)(sizeof i_ / sizeof i_[0]), skip, want); } while (0)

/* GPT-2's layout in miniature: byte-level BPE, the special token in the text. */
static const char *BYTE_BPE =
    "{`version`: `1.0`, `added_tokens`: [{`id`: 8, `content`: `<|endoftext|>`, `special`: true,"
    " `normalized`: false, `lstrip`: false, `rstrip`: false, `single_word`: false}],"
    " `normalizer`: null, `pre_tokenizer`: {`type`: `ByteLevel`, `add_prefix_space`: false, `trim_offsets`: true},"
    " `post_processor`: {`type`: `ByteLevel`, `add_prefix_space`: false, `trim_offsets`: false},"
    " `decoder`: {`type`: `ByteLevel`, `add_prefix_space`: false, `trim_offsets`: true},"
    " `model`: {`vocab`: {`a`: 0, `b`: 1, `c`: 2, `\\u0120`: 3, `ab`: 4, `abc`: 5, `\\u0120a`: 6, `\\u0120ab`: 7,"
    " `<|endoftext|>`: 8}, `merges`: [`a b`, `ab c`, [`\\u0120`, `a`], `\\u0120a b`]}}";

TEST(tokjson_byte_level_bpe_by_hand) {
    char err[512] = "";
    TokJson *t = load_ticks(BYTE_BPE, err, sizeof err);
    REQUIRE(t != NULL);
    CHECK(!strcmp(tokjson_model_type(t), "BPE"));   /* no "type": inferred from the merges */
    /* "abc" merges a+b (rank 0) then ab+c; " ab" is Ġ a b, where a+b (rank 0) wins
     * over Ġ+a (rank 2), and Ġ+ab is no merge: [Ġ, ab]. */
    IDS(t, "abc ab<|endoftext|>cab", 0, 5, 3, 4, 8, 2, 4);
    IDS(t, "abc ab<|endoftext|>cab", 1, 5, 3, 4, 8, 2, 4);   /* ByteLevel adds nothing */
    IDS(t, "xab", 0, 4);   /* no unk_token: a character outside the vocabulary is dropped, as the library does */
    TokJsonEnc e = {0};
    REQUIRE(tokjson_encode(t, "abc ab<|endoftext|>cab", 0, &e, err, sizeof err) == 0);
    const int start[] = {0, 3, 4, 6, 19, 20}, end[] = {3, 4, 6, 19, 20, 22};
    for (int i = 0; i < 6 && e.n == 6; i++) { CHECK_INT(e.start[i], start[i]); CHECK_INT(e.end[i], end[i]); }
    CHECK(e.special[3] && !e.special[2]);
    CHECK(!strcmp(e.tokens[1], "\xC4\xA0"));   /* "Ġ" */
    tokjson_enc_free(&e);
    tokjson_enc_free(&e);   /* a freed encoding is zeroed */
    DECODE(t, 0, "abc ab<|endoftext|>cab", 5, 3, 4, 8, 2, 4);
    DECODE(t, 1, "abc abcab", 5, 3, 4, 8, 2, 4);
    CHECK_INT(tokjson_id(t, "<|endoftext|>"), 8);
    CHECK_INT(tokjson_id(t, "zz"), -1);
    CHECK_INT(tokjson_bos_id(t), -1);
    CHECK_INT(tokjson_vocab_size(t), 9);
    CHECK(tokjson_token(t, 9) == NULL && tokjson_token(t, -1) == NULL);
    tokjson_free(t);
    tokjson_free(NULL);
}

/* Llama's layout in miniature: "▁" prepended, spaces replaced, byte fallback. */
static const char *SP_BPE =
    "{`added_tokens`: [{`id`: 0, `content`: `<unk>`, `special`: true, `normalized`: false, `lstrip`: false,"
    " `rstrip`: false, `single_word`: false}, {`id`: 1, `content`: `<s>`, `special`: true, `normalized`: false,"
    " `lstrip`: false, `rstrip`: false, `single_word`: false}, {`id`: 2, `content`: `</s>`, `special`: true,"
    " `normalized`: false, `lstrip`: false, `rstrip`: false, `single_word`: false}],"
    " `normalizer`: {`type`: `Sequence`, `normalizers`: [{`type`: `Prepend`, `prepend`: `\\u2581`},"
    " {`type`: `Replace`, `pattern`: {`String`: ` `}, `content`: `\\u2581`}]},"
    " `pre_tokenizer`: null,"
    " `post_processor`: {`type`: `TemplateProcessing`, `single`: [{`SpecialToken`: {`id`: `<s>`, `type_id`: 0}},"
    " {`Sequence`: {`id`: `A`, `type_id`: 0}}], `special_tokens`: {`<s>`: {`id`: `<s>`, `ids`: [1], `tokens`: [`<s>`]}}},"
    " `decoder`: {`type`: `Sequence`, `decoders`: [{`type`: `Replace`, `pattern`: {`String`: `\\u2581`}, `content`: ` `},"
    " {`type`: `ByteFallback`}, {`type`: `Fuse`}, {`type`: `Strip`, `content`: ` `, `start`: 1, `stop`: 0}]},"
    " `model`: {`type`: `BPE`, `unk_token`: `<unk>`, `fuse_unk`: true, `byte_fallback`: %s,"
    " `vocab`: {`<unk>`: 0, `<s>`: 1, `</s>`: 2, `\\u2581`: 3, `a`: 4, `b`: 5, `\\u2581a`: 6, `ab`: 7, `\\u2581ab`: 8,"
    " `<0xC3>`: 9, `<0xA9>`: 10}, `merges`: [[`\\u2581`, `a`], [`a`, `b`], [`\\u2581a`, `b`]]}}";

TEST(tokjson_sentencepiece_bpe_by_hand) {
    char json[4096], err[512] = "";
    snprintf(json, sizeof json, SP_BPE, "true");
    TokJson *t = load_ticks(json, err, sizeof err);
    REQUIRE(t != NULL);
    /* "ab é" → "▁ab▁é": ▁+a (rank 0), then ▁a+b (rank 2; a+b's entry is stale);
     * é is not in the vocabulary: its bytes <0xC3> <0xA9>. */
    IDS(t, "ab \xC3\xA9", 0, 8, 3, 9, 10);
    IDS(t, "ab \xC3\xA9", 1, 1, 8, 3, 9, 10);
    IDS(t, "<s>ab", 0, 1, 8);   /* the text after <s> is normalized on its own: "▁" again */
    CHECK_INT(tokjson_bos_id(t), 1);
    CHECK_INT(tokjson_eos_id(t), -1);
    CHECK_INT(tokjson_unk_id(t), 0);
    TokJsonEnc e = {0};
    REQUIRE(tokjson_encode(t, "ab \xC3\xA9", 1, &e, err, sizeof err) == 0);
    REQUIRE(e.n == 5);
    CHECK_INT(e.start[0], 0); CHECK_INT(e.end[0], 0);   /* <s>: empty, before the text */
    CHECK_INT(e.start[1], 0); CHECK_INT(e.end[1], 2);   /* ▁ab: "ab" */
    CHECK_INT(e.start[2], 2); CHECK_INT(e.end[2], 3);   /* ▁: the space */
    CHECK_INT(e.start[3], 3); CHECK_INT(e.end[3], 5);   /* both bytes of é */
    CHECK_INT(e.start[4], 3); CHECK_INT(e.end[4], 5);
    tokjson_enc_free(&e);
    DECODE(t, 0, "<s> ab \xC3\xA9", 1, 8, 3, 9, 10);
    DECODE(t, 1, "ab \xC3\xA9", 1, 8, 3, 9, 10);
    DECODE(t, 1, "ab\xEF\xBF\xBD", 8, 9);   /* a lone byte: U+FFFD */
    tokjson_free(t);
    /* without byte fallback, unknown characters fuse into one <unk> */
    snprintf(json, sizeof json, SP_BPE, "false");
    REQUIRE((t = load_ticks(json, err, sizeof err)) != NULL);
    IDS(t, "\xC3\xA9\xE2\x82\xAC" "a", 0, 3, 0, 4);   /* "é€a" → ▁ <unk> a */
    tokjson_free(t);
}

TEST(tokjson_wordpiece_by_hand) {
    char err[512] = "";
    TokJson *t = load_ticks(
        "{`added_tokens`: [{`id`: 1, `content`: `[CLS]`, `special`: true, `normalized`: false},"
        " {`id`: 2, `content`: `[SEP]`, `special`: true, `normalized`: false}],"
        " `normalizer`: {`type`: `BertNormalizer`, `clean_text`: true, `handle_chinese_chars`: true,"
        " `strip_accents`: null, `lowercase`: true}, `pre_tokenizer`: {`type`: `BertPreTokenizer`},"
        " `post_processor`: {`type`: `BertProcessing`, `sep`: [`[SEP]`, 2], `cls`: [`[CLS]`, 1]},"
        " `decoder`: {`type`: `WordPiece`, `prefix`: `##`, `cleanup`: true},"
        " `model`: {`unk_token`: `[UNK]`, `continuing_subword_prefix`: `##`, `max_input_chars_per_word`: 10,"
        " `vocab`: {`[UNK]`: 0, `[CLS]`: 1, `[SEP]`: 2, `un`: 3, `##aff`: 4, `##able`: 5, `aff`: 6, `,`: 7,"
        " `\\u4e2d`: 8}}}", err, sizeof err);
    REQUIRE(t != NULL);
    CHECK(!strcmp(tokjson_model_type(t), "WordPiece"));   /* inferred: no merges, a word limit */
    /* lowercased, accents stripped; "unaffable" → un ##aff ##able; "xyz" has no
     * split; the last word has 18 characters > 10 */
    IDS(t, "Ún\xCC\x81" "Affable, aff xyz unaffableunaffable", 0, 3, 4, 5, 7, 6, 0, 0);
    IDS(t, "unaffable", 1, 1, 3, 4, 5, 2);
    IDS(t, "aff\xE4\xB8\xAD" "aff", 0, 6, 8, 6);   /* a CJK ideograph is a word of its own */
    CHECK_INT(tokjson_bos_id(t), 1);
    CHECK_INT(tokjson_eos_id(t), 2);
    DECODE(t, 0, "[CLS] unaffable, aff [SEP]", 1, 3, 4, 5, 7, 6, 2);
    DECODE(t, 1, "unaffable, aff", 1, 3, 4, 5, 7, 6, 2);
    tokjson_free(t);
}

/* WordLevel behind a Split on "-" with a behaviour: the pieces are the ids. */
static TokJson *split_file(const char *behavior, int invert) {
    char json[2048], err[512];
    snprintf(json, sizeof json,
             "{`pre_tokenizer`: {`type`: `Split`, `pattern`: {`String`: `-`}, `behavior`: `%s`, `invert`: %s},"
             " `model`: {`type`: `WordLevel`, `unk_token`: `<unk>`, `vocab`: {`the`: 0, `-`: 1, `final`: 2,"
             " `countdown`: 3, `the-`: 4, `final-`: 5, `-final`: 6, `-countdown`: 7, `--`: 8, `<unk>`: 9}}}",
             behavior, invert ? "true" : "false");
    TokJson *t = load_ticks(json, err, sizeof err);
    if (!t) fprintf(stderr, "  %s\n", err);
    return t;
}

TEST(tokjson_split_behaviours_by_hand) {
    /* the library's own example: "the-final--countdown" split on "-" */
    TokJson *t;
    REQUIRE((t = split_file("Removed", 0)) != NULL);
    IDS(t, "the-final--countdown", 0, 0, 2, 3);
    tokjson_free(t);
    REQUIRE((t = split_file("Isolated", 0)) != NULL);
    IDS(t, "the-final--countdown", 0, 0, 1, 2, 1, 1, 3);
    tokjson_free(t);
    REQUIRE((t = split_file("MergedWithPrevious", 0)) != NULL);
    IDS(t, "the-final--countdown", 0, 4, 5, 1, 3);
    tokjson_free(t);
    REQUIRE((t = split_file("MergedWithNext", 0)) != NULL);
    IDS(t, "the-final--countdown", 0, 0, 6, 1, 7);
    tokjson_free(t);
    REQUIRE((t = split_file("Contiguous", 0)) != NULL);
    IDS(t, "the-final--countdown", 0, 0, 1, 2, 8, 3);
    tokjson_free(t);
    REQUIRE((t = split_file("Removed", 1)) != NULL);   /* inverted: the words are the delimiters */
    IDS(t, "the-final--countdown", 0, 1, 1, 1);
    tokjson_free(t);
}

TEST(tokjson_added_token_flags_by_hand) {
    char err[512] = "";
    TokJson *t = load_ticks(
        "{`added_tokens`: [{`id`: 2, `content`: `<m>`, `special`: true, `normalized`: false, `lstrip`: true,"
        " `rstrip`: true}, {`id`: 3, `content`: `ab`, `special`: false, `normalized`: false, `single_word`: true},"
        " {`id`: 77, `content`: `<new>`, `special`: true}],"
        " `pre_tokenizer`: {`type`: `WhitespaceSplit`},"
        " `model`: {`type`: `WordLevel`, `unk_token`: `<unk>`, `vocab`: {`a`: 0, `b`: 1, `<m>`: 2, `ab`: 3, `<unk>`: 4}}}",
        err, sizeof err);
    REQUIRE(t != NULL);
    TokJsonEnc e = {0};
    REQUIRE(tokjson_encode(t, "a <m> b", 0, &e, err, sizeof err) == 0);
    REQUIRE(e.n == 3);
    CHECK_INT(e.ids[1], 2);
    CHECK_INT(e.start[1], 1);   /* lstrip and rstrip take the spaces around <m> */
    CHECK_INT(e.end[1], 6);
    tokjson_enc_free(&e);
    /* "ab" must be a whole word: not inside "xab", but alone at the end */
    IDS(t, "xab ab", 0, 4, 3);
    /* a new added token is numbered after the vocabulary (5), as the library
     * numbers it, whatever its "id" says */
    CHECK_INT(tokjson_id(t, "<new>"), 5);
    CHECK(tokjson_is_special(t, 5) && tokjson_is_special(t, 2) && !tokjson_is_special(t, 3));
    tokjson_free(t);
}

TEST(tokjson_normalizers_by_hand) {
    char err[512] = "";
    TokJson *t = load_ticks(
        "{`normalizer`: {`type`: `Sequence`, `normalizers`: [{`type`: `NFKC`}, {`type`: `Lowercase`},"
        " {`type`: `NFD`}, {`type`: `StripAccents`}, {`type`: `Strip`, `strip_left`: true, `strip_right`: true},"
        " {`type`: `Replace`, `pattern`: {`Regex`: `\\\\d+`}, `content`: `#`},"
        " {`type`: `BertNormalizer`, `clean_text`: false, `handle_chinese_chars`: true, `strip_accents`: false,"
        " `lowercase`: false}]}, `pre_tokenizer`: {`type`: `WhitespaceSplit`},"
        " `model`: {`type`: `WordLevel`, `unk_token`: `<unk>`, `vocab`: {`fine`: 0, `i`: 1, `cafe`: 2, `a#b#`: 3,"
        " `\\u4e2d`: 4, `\\u6587`: 5, `<unk>`: 6}}}", err, sizeof err);
    REQUIRE(t != NULL);
    /* "ﬁne İ café a12b3 中文": NFKC ﬁ → fi; İ → i̇ → i; é → e; digits → #; CJK spaced */
    const char *text = "  \xEF\xAC\x81ne \xC4\xB0 caf\xC3\xA9 a12b3 \xE4\xB8\xAD\xE6\x96\x87 ";
    IDS(t, text, 0, 0, 1, 2, 3, 4, 5);
    TokJsonEnc e = {0};
    REQUIRE(tokjson_encode(t, text, 0, &e, err, sizeof err) == 0);
    CHECK_INT(e.start[0], 2);   /* "ﬁne": 3 bytes of ﬁ, then n, e */
    CHECK_INT(e.end[0], 7);
    CHECK_INT(e.start[2], 11);  /* "café" as typed */
    CHECK_INT(e.end[2], 16);
    tokjson_enc_free(&e);
    tokjson_free(t);
}

TEST(tokjson_metaspace_and_digits_by_hand) {
    char err[512] = "";
    TokJson *t = load_ticks(
        "{`pre_tokenizer`: {`type`: `Sequence`, `pretokenizers`: [{`type`: `Digits`, `individual_digits`: true},"
        " {`type`: `Metaspace`, `replacement`: `_`, `prepend_scheme`: `first`, `split`: true}]},"
        " `added_tokens`: [{`id`: 5, `content`: `<s>`, `special`: true, `normalized`: false}],"
        " `decoder`: {`type`: `Metaspace`, `replacement`: `_`, `prepend_scheme`: `first`},"
        " `model`: {`type`: `WordLevel`, `unk_token`: `?`, `vocab`: {`_a`: 0, `1`: 1, `2`: 2, `_b`: 3, `?`: 4,"
        " `<s>`: 5, `b`: 6}}}", err, sizeof err);
    REQUIRE(t != NULL);
    /* prepend_scheme first: "_" only on the piece at the start of the text; digits one by one */
    IDS(t, "a12 b", 0, 0, 1, 2, 3);
    IDS(t, "<s>b", 0, 5, 6);
    DECODE(t, 0, "a12 b", 0, 1, 2, 3);
    tokjson_free(t);
}

/* Loading fails with one line naming the file and the part. */
static void check_load_fails(const char *file, int line, const char *json, const char *needle) {
    char err[512] = "";
    TokJson *t = load_ticks(json, err, sizeof err);
    if (t) { check_fail(file, line, "loaded a broken file: %s", json); tokjson_free(t); return; }
    if (!strstr(err, needle) || !strstr(err, "tokjson-") || strchr(err, '\n'))
        check_fail(file, line, "message \"%s\" lacks \"%s\" or the file name", err, needle);
}
#define LOAD_FAILS(json, needle) check_load_fails(__FILE__, __LINE__, json, needle)

TEST(tokjson_broken_files) {
    LOAD_FAILS("{`model`: {`vocab`: {`a`: 0}, `merges`: [`a b`]", "not valid JSON");
    LOAD_FAILS("[1, 2]", "not a JSON object");
    LOAD_FAILS("{`version`: `1.0`}", "model: is missing");
    LOAD_FAILS("{`model`: {`vocab`: {`a`: 0}, `merges`: [`a b`]}}", "model.merges[0]: the token \"b\"");
    LOAD_FAILS("{`model`: {`vocab`: {`a`: 0, `b`: 1}, `merges`: [`a b c`]}}", "model.merges[0]");
    LOAD_FAILS("{`model`: {`vocab`: {`a`: -1}, `merges`: []}}", "model.vocab");
    LOAD_FAILS("{`model`: {`type`: `Unigram`, `vocab`: [[`a`, 0.0]]}}", "Unigram");
    LOAD_FAILS("{`model`: {`vocab`: [[`a`, 0.0]], `unk_id`: 0}}", "Unigram");
    LOAD_FAILS("{`version`: `2.0`, `model`: {`vocab`: {}}}", "version");
    LOAD_FAILS("{`normalizer`: {`type`: `Precompiled`, `precompiled_charsmap`: ``}, `model`: {`vocab`: {}}}",
               "normalizer: the normalizer \"Precompiled\" is not supported");
    LOAD_FAILS("{`pre_tokenizer`: {`type`: `Sequence`, `pretokenizers`: [{`type`: `Split`, `pattern`: {`Regex`: `(`},"
               " `behavior`: `Isolated`}]}, `model`: {`vocab`: {}}}", "pre_tokenizer.pretokenizers[0]: the regex");
    LOAD_FAILS("{`pre_tokenizer`: {`type`: `Metaspace`, `replacement`: `_`, `add_prefix_space`: false},"
               " `model`: {`vocab`: {}}}", "prepend_scheme");
    LOAD_FAILS("{`decoder`: {`type`: `CTC`}, `model`: {`vocab`: {}}}", "decoder: the decoder \"CTC\"");
    LOAD_FAILS("{`post_processor`: {`type`: `TemplateProcessing`, `single`: [{`SpecialToken`: {`id`: `<s>`}}]},"
               " `model`: {`vocab`: {}}}", "post_processor: the special token \"<s>\"");
    LOAD_FAILS("{`added_tokens`: [{`content`: `x`}], `model`: {`vocab`: {}}}", "added_tokens[0]");
    LOAD_FAILS("{`model`: {`vocab`: {`a`: 0}}, `normalizer`: {`type`: `Replace`, `pattern`: {`Regex`: `a`}}}",
               "Replace needs a \"content\"");
    char deep[2400];
    memset(deep, '[', 2000);
    deep[2000] = '\0';
    LOAD_FAILS(deep, "not valid JSON");
    char err[512] = "";
    CHECK(tokjson_load("/nonexistent/tokenizer.json", err, sizeof err) == NULL);
    CHECK(strstr(err, "/nonexistent/tokenizer.json") != NULL);
}

TEST(tokjson_text_must_be_utf8) {
    char err[512] = "";
    TokJson *t = load_ticks(BYTE_BPE, err, sizeof err);
    REQUIRE(t != NULL);
    TokJsonEnc e = {0};
    CHECK(tokjson_encode(t, "ab\xC3", 0, &e, err, sizeof err) == -1);
    CHECK(strstr(err, "UTF-8") != NULL);
    CHECK(e.n == 0 && e.ids == NULL);
    REQUIRE(tokjson_encode(t, "", 1, &e, err, sizeof err) == 0);
    CHECK_INT(e.n, 0);
    tokjson_enc_free(&e);
    tokjson_free(t);
}
