/* tokjson.c — see tokjson.h: loading tokenizer.json, the added tokens, the
 * encode driver and the post-processor.  Its parts, each with its header:
 * tokjson_text (look-ups in the file's JSON and messages, aligned text,
 * Unicode classes, patterns, normalizers), tokjson_pretok (pre-tokenizers),
 * tokjson_model (BPE, WordPiece, WordLevel), tokjson_decode (decoders); they
 * call down that list only, never back into this file. */
#include "tokenize/tokjson.h"
#include "tokenize/tokjson_decode.h"
#include "tokenize/tokjson_model.h"
#include "tokenize/tokjson_pretok.h"
#include "tokenize/tokjson_text.h"
#include "tokenize/strmap.h"
#include "core/errmsg.h"
#include "core/fileio.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE (256u << 20)
#define MAX_ADDED_ID (1 << 24)

/* An added token: "<|endoftext|>", "[CLS]", "<s>". */
typedef struct {
    char *content;       /* as the file spells it                            */
    char *match;         /* what the text is searched for: content, or its   */
                         /* normalized form when "normalized"                */
    int len;             /* strlen(match)                                    */
    int id;
    int single_word, lstrip, rstrip, normalized, special;
} Added;

/* The added tokens searched for in one pass: ordered by first byte, longest
 * first, so the first hit at a position is the longest. */
typedef struct {
    int *order;          /* (n) indices into TokJson.added */
    int n;
    int first[257];      /* order[first[b] .. first[b + 1]) start with byte b */
} AddedSet;

struct TokJson {
    TjNorm *norm;        /* NULL: none */
    TjPre *pre;          /* NULL: none */
    TjModel model;
    TjDec *dec;          /* NULL: none (tokens joined with spaces) */
    Added *added;        /* (n_added) */
    int n_added;
    AddedSet raw, normed;   /* "normalized": false / true */
    TjVocab added_ids;   /* content → id */
    int n_ids;           /* model and added tokens                       */
    const char **tok;    /* (n_ids) id → spelling (owned elsewhere) or NULL */
    unsigned char *special;  /* (n_ids) */
    int has_post;        /* a post-processor that adds tokens             */
    int n_trim;          /* offset trimmings (ByteLevel, RobertaProcessing with trim_offsets) */
    unsigned char trim_prefix[4];   /* (n_trim) each one's add_prefix_space */
    int *pre_ids, n_pre;     /* what it puts before the text              */
    int *post_ids, n_post;   /* and after it                              */
};

/* A message quoting the file (a pattern, a token) on one line: control
 * characters become spaces. */
static void one_line(char *err, size_t errlen) {
    for (size_t i = 0; err && i < errlen && err[i]; i++)
        if ((unsigned char)err[i] < 0x20 || err[i] == 0x7F) err[i] = ' ';
}

/* ---- loading ---- */

static int parse_added_one(Added *a, const cJSON *e, const char *where, const TjCtx *c) {
    const cJSON *id = tj_get(e, "id");
    const char *content = tj_str(e, "content");
    if (!cJSON_IsObject(e) || !content || !cJSON_IsNumber(id))
        return tj_fail(c, where, "an added token needs \"id\" and \"content\"");
    if (id->valuedouble < 0 || id->valuedouble >= MAX_ADDED_ID || id->valuedouble != (int)id->valuedouble)
        return tj_fail(c, where, "the id of \"%.40s\" is not a whole number 0..%d", content, MAX_ADDED_ID - 1);
    a->special = tj_bool(e, "special", 0);
    a->single_word = tj_bool(e, "single_word", 0);
    a->lstrip = tj_bool(e, "lstrip", 0);
    a->rstrip = tj_bool(e, "rstrip", 0);
    a->normalized = tj_bool(e, "normalized", !a->special);
    if (a->special < 0 || a->single_word < 0 || a->lstrip < 0 || a->rstrip < 0 || a->normalized < 0)
        return tj_fail(c, where, "special, single_word, lstrip, rstrip and normalized must be true or false");
    int bad = 0;
    a->content = tj_dup(content, &bad);
    return bad ? tj_fail(c, where, "out of memory") : 0;
}

/* The id the library gives an added token: the id of a token of that text
 * already known (added earlier or in the model's vocabulary), else the next
 * one after the vocabulary and the added tokens so far — in file order, as
 * the library numbers them whatever "id" says (they agree in files it wrote). */
static int added_id(const TokJson *t, const char *content, int *max_added) {
    int id = tjvocab_get(&t->added_ids, content, strlen(content));
    if (id < 0) id = tjvocab_get(&t->model.vocab, content, strlen(content));
    if (id < 0) {
        int size = t->model.vocab.n;
        id = *max_added < 0 ? size : *max_added >= size || size == 0 ? *max_added + 1 : size;
    }
    if (id > *max_added) *max_added = id;
    return id;
}

static int parse_added(TokJson *t, const cJSON *list, const TjCtx *c) {
    if (!list) return 0;
    if (!cJSON_IsArray(list)) return tj_fail(c, "added_tokens", "must be a list");
    int n = cJSON_GetArraySize(list), i = 0, max_added = -1, rc = 0;
    t->added = calloc((size_t)(n ? n : 1), sizeof *t->added);
    if (!t->added) return tj_fail(c, "added_tokens", "out of memory");
    StrMap index = {0};   /* content → its place in t->added: one look-up a token, not a scan */
    for (const cJSON *e = list->child; e && rc == 0; e = e->next, i++) {
        char where[64];
        snprintf(where, sizeof where, "added_tokens[%d]", i);
        Added a = {0};
        if (parse_added_one(&a, e, where, c)) { free(a.content); rc = -1; break; }
        if (!a.content[0]) { free(a.content); continue; }   /* ignored, as the library does */
        size_t len = strlen(a.content);
        int k = strmap_get(&index, a.content, len);
        if (k >= 0) {   /* the same text again: its flags change, its id stays */
            a.special |= t->added[k].special;
            a.id = t->added[k].id;
            free(t->added[k].content);
            t->added[k] = a;
            continue;
        }
        a.id = added_id(t, a.content, &max_added);
        if (a.id >= MAX_ADDED_ID) { free(a.content); rc = tj_fail(c, where, "too many added tokens"); break; }
        t->added[t->n_added++] = a;
        if (strmap_put(&index, a.content, len, t->n_added - 1) || tjvocab_put(&t->added_ids, a.content, len, a.id))
            rc = tj_fail(c, where, "out of memory");
    }
    strmap_free(&index);
    return rc;
}

/* An added token's place in a search set: by first byte, longest first. */
typedef struct { int first, len, index; } AddedKey;

static int cmp_added(const void *x, const void *y) {
    const AddedKey *a = x, *b = y;
    if (a->first != b->first) return a->first - b->first;
    if (a->len != b->len) return b->len - a->len;
    return a->index - b->index;
}

/* The text each added token is searched for (its normalized form when it is
 * "normalized"), and the two search sets. */
static int prepare_added(TokJson *t, TjWhy *why) {
    *why = (TjWhy){TJ_WHY_MEMORY, "added_tokens", 0, 0};
    for (int i = 0; i < t->n_added; i++) {
        Added *a = &t->added[i];
        TjStr s = {0};
        TjSpan sp = {0, 0};
        if (tjstr_put(&s, a->content, (int)strlen(a->content), sp)) return -1;
        if (a->normalized && t->norm && tj_norm_apply(t->norm, &s, why)) { tjstr_free(&s); return -1; }
        a->match = s.s;   /* takes the text */
        a->len = s.n;
        free(s.al);
    }
    for (int set = 0; set < 2; set++) {
        AddedSet *as = set ? &t->normed : &t->raw;
        as->order = malloc((size_t)(t->n_added ? t->n_added : 1) * sizeof *as->order);
        if (!as->order) return -1;
        AddedKey *key = malloc((size_t)(t->n_added ? t->n_added : 1) * sizeof *key);
        if (!key) return -1;
        for (int i = 0; i < t->n_added; i++) {
            const Added *a = &t->added[i];
            if (a->len > 0 && a->normalized == set) key[as->n++] = (AddedKey){(unsigned char)a->match[0], a->len, i};
        }
        qsort(key, (size_t)as->n, sizeof *key, cmp_added);
        for (int k = 0; k < as->n; k++) as->order[k] = key[k].index;
        for (int b = 0, k = 0; b <= 256; b++) {
            while (k < as->n && key[k].first < b) k++;
            as->first[b] = k;
        }
        free(key);
    }
    return 0;
}

/* The combined vocabulary: the model's ids, the added tokens over them. */
static int build_vocab(TokJson *t) {
    t->n_ids = t->model.n_ids;
    for (int i = 0; i < t->n_added; i++)
        if (t->added[i].id >= t->n_ids) t->n_ids = t->added[i].id + 1;
    t->tok = calloc((size_t)(t->n_ids ? t->n_ids : 1), sizeof *t->tok);
    t->special = calloc((size_t)(t->n_ids ? t->n_ids : 1), 1);
    if (!t->tok || !t->special) return -1;
    for (int i = 0; i < t->model.n_ids; i++) t->tok[i] = t->model.tok[i];
    TjVocab specials = {0};   /* the library tells special tokens by their text */
    for (int i = 0; i < t->n_added; i++) {
        const Added *a = &t->added[i];
        t->tok[a->id] = !a->normalized ? a->content : a->match ? a->match : "";   /* as the library spells it */
        if (a->special && tjvocab_put(&specials, a->content, strlen(a->content), 1)) { tjvocab_free(&specials); return -1; }
    }
    for (int i = 0; i < t->n_added; i++) {
        const char *tok = t->tok[t->added[i].id];
        t->special[t->added[i].id] = tjvocab_get(&specials, tok, strlen(tok)) >= 0;
    }
    tjvocab_free(&specials);
    return 0;
}

/* ---- the post-processor: what a single text gets before and after it ---- */

static int ids_append(int **v, int *n, const int *ids, int k) {
    int *p = realloc(*v, (size_t)(*n + k + 1) * sizeof *p);
    if (!p) return -1;
    if (k > 0) memcpy(p + *n, ids, (size_t)k * sizeof *p);
    *v = p;
    *n += k;
    return 0;
}

/* Wraps the current before/after ids in pre … post (a processor run after
 * the ones read so far). */
static int post_wrap(TokJson *t, const int *pre, int n_pre, const int *post, int n_post) {
    int *np = NULL, nn = 0;
    if (ids_append(&np, &nn, pre, n_pre) || ids_append(&np, &nn, t->pre_ids, t->n_pre) ||
        ids_append(&t->post_ids, &t->n_post, post, n_post)) { free(np); return -1; }
    free(t->pre_ids);
    t->pre_ids = np;
    t->n_pre = nn;
    t->has_post = 1;
    return 0;
}

/* The ids of a template's special token name ("special_tokens": {name: {"ids": […]}}). */
static int template_ids(const cJSON *specials, const char *name, int **ids, int *n, const char *where, const TjCtx *c) {
    const cJSON *sp = tj_get(specials, name), *list = tj_get(sp, "ids");
    if (!cJSON_IsArray(list)) return tj_fail(c, where, "the special token \"%.40s\" is not in \"special_tokens\"", name);
    for (const cJSON *e = list->child; e; e = e->next) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= MAX_ADDED_ID)
            return tj_fail(c, where, "the ids of \"%.40s\" must be whole numbers >= 0", name);
        int id = (int)e->valuedouble;
        if (ids_append(ids, n, &id, 1)) return tj_fail(c, where, "out of memory");
    }
    return 0;
}

static int parse_template(TokJson *t, const cJSON *j, const char *where, const TjCtx *c) {
    const cJSON *single = tj_get(j, "single"), *specials = tj_get(j, "special_tokens");
    if (!cJSON_IsArray(single)) return tj_fail(c, where, "TemplateProcessing needs a \"single\" list");
    int *ids[2] = {NULL, NULL}, n[2] = {0, 0}, side = 0, rc = 0, seen = 0;
    for (const cJSON *e = single->child; e && rc == 0; e = e->next) {
        const cJSON *sp = tj_get(e, "SpecialToken"), *seq = tj_get(e, "Sequence");
        const char *name = sp ? tj_str(sp, "id") : seq ? tj_str(seq, "id") : NULL;
        if (!name) rc = tj_fail(c, where, "a \"single\" item is {\"SpecialToken\": …} or {\"Sequence\": …}");
        else if (seq && strcmp(name, "A")) rc = tj_fail(c, where, "\"single\" may hold only the sequence A");
        else if (seq && seen++) rc = tj_fail(c, where, "\"single\" holds the sequence A twice");
        else if (seq) side = 1;
        else rc = template_ids(specials, name, &ids[side], &n[side], where, c);
    }
    if (rc == 0 && !seen) rc = tj_fail(c, where, "\"single\" has no sequence A");
    if (rc == 0 && post_wrap(t, ids[0], n[0], ids[1], n[1])) rc = tj_fail(c, where, "out of memory");
    free(ids[0]);
    free(ids[1]);
    return rc;
}

/* BertProcessing and RobertaProcessing: "cls": [token, id], "sep": [token, id]. */
static int parse_cls_sep(TokJson *t, const cJSON *j, const char *where, const TjCtx *c) {
    const cJSON *cls = tj_get(j, "cls"), *sep = tj_get(j, "sep");
    if (!cJSON_IsArray(cls) || !cJSON_IsArray(sep) || cJSON_GetArraySize(cls) != 2 || cJSON_GetArraySize(sep) != 2 || !cJSON_IsNumber(cls->child->next) ||
        !cJSON_IsNumber(sep->child->next) || cls->child->next->valuedouble < 0 || sep->child->next->valuedouble < 0 ||
        cls->child->next->valuedouble >= MAX_ADDED_ID || sep->child->next->valuedouble >= MAX_ADDED_ID)
        return tj_fail(c, where, "\"cls\" and \"sep\" must be [token, id]");
    int a = (int)cls->child->next->valuedouble, b = (int)sep->child->next->valuedouble;
    return post_wrap(t, &a, 1, &b, 1) ? tj_fail(c, where, "out of memory") : 0;
}

static int parse_post(TokJson *t, const cJSON *j, const char *where, const TjCtx *c) {
    const char *type = tj_str(j, "type");
    if (!cJSON_IsObject(j) || !type) return tj_fail(c, where, "a post-processor must be an object with a \"type\"");
    if (!strcmp(type, "TemplateProcessing")) return parse_template(t, j, where, c);
    int roberta = !strcmp(type, "RobertaProcessing");
    if (roberta || !strcmp(type, "ByteLevel")) {   /* offsets trimmed of spaces */
        int trim = tj_bool(j, "trim_offsets", 1), prefix = tj_bool(j, "add_prefix_space", 1);
        if (trim < 0 || prefix < 0) return tj_fail(c, where, "trim_offsets and add_prefix_space must be true or false");
        if (trim && t->n_trim == 4) return tj_fail(c, where, "more than 4 processors trim offsets");
        if (trim) t->trim_prefix[t->n_trim++] = (unsigned char)prefix;
        if (!roberta) return 0;
    }
    if (roberta || !strcmp(type, "BertProcessing")) return parse_cls_sep(t, j, where, c);
    if (strcmp(type, "Sequence")) return tj_fail(c, where, "the post-processor \"%.40s\" is not supported", type);
    const cJSON *list = tj_get(j, "processors");
    if (!cJSON_IsArray(list)) return tj_fail(c, where, "a Sequence needs a \"processors\" list");
    int i = 0;
    for (const cJSON *e = list->child; e; e = e->next, i++) {
        char w[256];
        snprintf(w, sizeof w, "%s.processors[%d]", where, i);
        if (parse_post(t, e, w, c)) return -1;
    }
    return 0;
}

/* The optional parts: normalizer, pre_tokenizer, decoder, post_processor. */
static int parse_parts(TokJson *t, const cJSON *root, const TjCtx *c) {
    const cJSON *n = tj_get(root, "normalizer"), *p = tj_get(root, "pre_tokenizer"), *d = tj_get(root, "decoder");
    if (n && (!(t->norm = calloc(1, sizeof *t->norm)) || tj_norm_parse(t->norm, n, "normalizer", c))) return -1;
    if (p && (!(t->pre = calloc(1, sizeof *t->pre)) || tj_pre_parse(t->pre, p, "pre_tokenizer", c))) return -1;
    if (d && (!(t->dec = calloc(1, sizeof *t->dec)) || tj_dec_parse(t->dec, d, "decoder", c))) return -1;
    const cJSON *post = tj_get(root, "post_processor");
    return post ? parse_post(t, post, "post_processor", c) : 0;
}

static int parse_root(TokJson *t, const cJSON *root, const TjCtx *c) {
    if (!cJSON_IsObject(root)) return errmsg_set(c->err, c->errlen, "%s: not a JSON object", c->file);
    const char *version = tj_str(root, "version");
    if (tj_get(root, "version") && (!version || strcmp(version, "1.0")))
        return tj_fail(c, "version", "is \"%.20s\"; only \"1.0\" is known", version ? version : "?");
    if (tj_model_parse(&t->model, tj_get(root, "model"), c) || parse_added(t, tj_get(root, "added_tokens"), c) ||
        parse_parts(t, root, c))
        return -1;
    TjWhy why;
    if (prepare_added(t, &why)) {
        char msg[400];
        tj_why_say(&why, msg, sizeof msg);
        return errmsg_set(c->err, c->errlen, "%s: %s (normalizing the added tokens)", c->file, msg);
    }
    if (build_vocab(t)) return tj_fail(c, "added_tokens", "out of memory");
    for (int i = 0; i < t->n_pre + t->n_post; i++) {
        int id = i < t->n_pre ? t->pre_ids[i] : t->post_ids[i - t->n_pre];
        if (!tokjson_token(t, id))
            return tj_fail(c, "post_processor", "the id %d is no token of the vocabulary (0..%d)", id, t->n_ids - 1);
    }
    return 0;
}

static TokJson *parse_text(const char *json, size_t len, const char *name, char *err, size_t errlen) {
    TjCtx c = {name ? name : "tokenizer.json", err, errlen};
    if (err && errlen) err[0] = '\0';
    if (!tj_utf8_valid(json, len)) {
        errmsg_set(err, errlen, "%s: not valid UTF-8", c.file);
        return NULL;
    }
    const char *end = NULL;
    int oom = 0;
    cJSON *doc = tj_json_parse(json, len, &end, &oom);
    while (doc && end < json + len && (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')) end++;
    if (!doc || end != json + len) {
        if (oom) errmsg_set(err, errlen, "%s: out of memory", c.file);
        else errmsg_set(err, errlen, "%s: not valid JSON (at byte %zu)", c.file, end ? (size_t)(end - json) : (size_t)0);
        tj_json_free();
        return NULL;
    }
    TokJson *t = calloc(1, sizeof *t);
    if (!t) errmsg_set(err, errlen, "out of memory");
    if (t && parse_root(t, doc, &c)) {
        if (err && errlen && !err[0]) errmsg_set(err, errlen, "%s: out of memory", c.file);
        tokjson_free(t);
        t = NULL;
    }
    tj_json_free();
    return t;
}

TokJson *tokjson_parse(const char *json, size_t len, const char *name, char *err, size_t errlen) {
    TokJson *t = parse_text(json, len, name, err, errlen);
    if (!t) one_line(err, errlen);
    return t;
}

TokJson *tokjson_load(const char *path, char *err, size_t errlen) {
    size_t len = 0;
    char *text = file_read_all(path, MAX_FILE, &len, err, errlen);
    if (!text) return NULL;
    TokJson *t = tokjson_parse(text, len, path, err, errlen);
    free(text);
    return t;
}

/* ---- the vocabulary files GPT-2 and BERT shipped before tokenizer.json ---- */

/* The combined vocabulary of a tokenizer built from files; t is freed on failure. */
static TokJson *files_done(TokJson *t, char *err, size_t errlen) {
    TjWhy why;
    if (prepare_added(t, &why) || build_vocab(t)) {
        errmsg_set(err, errlen, "out of memory");
        tokjson_free(t);
        return NULL;
    }
    return t;
}

TokJson *tokjson_load_gpt2(const char *vocab_json, const char *merges_txt, char *err, size_t errlen) {
    TokJson *t = calloc(1, sizeof *t);
    TjCtx c = {merges_txt, err, errlen};
    if (!t || !(t->pre = calloc(1, sizeof *t->pre)) || !(t->dec = calloc(1, sizeof *t->dec))) {
        errmsg_set(err, errlen, "out of memory");
        tokjson_free(t);
        return NULL;
    }
    t->dec->kind = TJ_DEC_BYTE_LEVEL;
    /* merges.txt is read, cut into lines and its lines hashed by their text
     * beside vocab.json's parse (which runs on one thread; the other waited). */
    int bad_vocab = 0, bad_merges = 0;
    char merges_err[1024] = "";
#ifdef _OPENMP
    #pragma omp parallel sections
#endif
    {
#ifdef _OPENMP
        #pragma omp section
#endif
        bad_vocab = tj_model_vocab_json(&t->model, vocab_json, err, errlen) != 0;
#ifdef _OPENMP
        #pragma omp section
#endif
        bad_merges = tj_model_merges_txt(&t->model, merges_txt, merges_err, sizeof merges_err) != 0;
    }
    if (!bad_vocab && bad_merges) errmsg_set(err, errlen, "%s", merges_err);
    if (bad_vocab || bad_merges || tj_pre_gpt2(t->pre, &c)) {
        tokjson_free(t);
        return NULL;
    }
    return files_done(t, err, errlen);
}

/* BERT's special tokens, those in the vocabulary: whole wherever they are
 * typed, before anything else reads the text. */
static int bert_specials(TokJson *t) {
    static const char *const name[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    if (!(t->added = calloc(5, sizeof *t->added))) return -1;
    for (int i = 0; i < 5; i++) {
        int id = tjvocab_get(&t->model.vocab, name[i], strlen(name[i]));
        if (id < 0) continue;
        Added *a = &t->added[t->n_added++];
        *a = (Added){.id = id, .special = 1};
        if (!(a->content = strdup(name[i])) || tjvocab_put(&t->added_ids, name[i], strlen(name[i]), id)) return -1;
    }
    int cls = tokjson_id(t, "[CLS]"), sep = tokjson_id(t, "[SEP]");
    return cls >= 0 && sep >= 0 ? post_wrap(t, &cls, 1, &sep, 1) : 0;
}

TokJson *tokjson_load_bert(const char *vocab_txt, int lower, int strip_accents, char *err, size_t errlen) {
    TokJson *t = calloc(1, sizeof *t);
    if (!t || !(t->norm = calloc(1, sizeof *t->norm)) || !(t->pre = calloc(1, sizeof *t->pre)) ||
        !(t->dec = calloc(1, sizeof *t->dec)) || !(t->dec->text = strdup("##"))) {
        errmsg_set(err, errlen, "out of memory");
        tokjson_free(t);
        return NULL;
    }
    *t->norm = (TjNorm){.kind = TJ_NORM_BERT, .python = 1, .clean = 1, .chinese = 1, .lowercase = lower != 0,
                        .strip_accents = lower ? strip_accents != 0 : strip_accents > 0};
    t->pre->kind = TJ_PRE_BERT;
    t->pre->python = 1;
    t->dec->kind = TJ_DEC_WORDPIECE;
    t->dec->cleanup = 1;
    if (tj_model_vocab_txt(&t->model, vocab_txt, err, errlen)) {
        tokjson_free(t);
        return NULL;
    }
    if (bert_specials(t)) {
        errmsg_set(err, errlen, "out of memory");
        tokjson_free(t);
        return NULL;
    }
    return files_done(t, err, errlen);
}

void tokjson_free(TokJson *t) {
    if (!t) return;
    if (t->norm) tj_norm_free(t->norm);
    if (t->pre) tj_pre_free(t->pre);
    if (t->dec) tj_dec_free(t->dec);
    free(t->norm);
    free(t->pre);
    free(t->dec);
    tj_model_free(&t->model);
    for (int i = 0; i < t->n_added; i++) { free(t->added[i].content); free(t->added[i].match); }
    free(t->added);
    free(t->raw.order);
    free(t->normed.order);
    tjvocab_free(&t->added_ids);
    free(t->tok);
    free(t->special);
    free(t->pre_ids);
    free(t->post_ids);
    free(t);
}

/* ---- encoding ---- */

/* The encoding being built, with its capacity. */
typedef struct {
    TokJsonEnc *e;
    int cap;
    const char *text;    /* the input, for trimming offsets */
    int len, base;       /* its length; tokens before the text's first */
} Out;

static int out_add(const TokJson *t, Out *o, int id, int start, int end, int special) {
    TokJsonEnc *e = o->e;
    if (e->n == o->cap) {
        if (o->cap > INT_MAX / 2) return -1;   /* the doubling would wrap */
        int cap = o->cap ? o->cap * 2 : 64;
        int *ids = realloc(e->ids, (size_t)cap * sizeof *ids);
        if (ids) e->ids = ids;
        const char **tk = realloc(e->tokens, (size_t)cap * sizeof *tk);
        if (tk) e->tokens = tk;
        int *st = realloc(e->start, (size_t)cap * sizeof *st);
        if (st) e->start = st;
        int *en = realloc(e->end, (size_t)cap * sizeof *en);
        if (en) e->end = en;
        unsigned char *sp = realloc(e->special, (size_t)cap);
        if (sp) e->special = sp;
        if (!ids || !tk || !st || !en || !sp) return -1;
        o->cap = cap;
    }
    e->ids[e->n] = id;
    e->tokens[e->n] = tokjson_token(t, id);
    e->start[e->n] = start;
    e->end[e->n] = end < start ? start : end;
    e->special[e->n] = (unsigned char)special;
    e->n++;
    return 0;
}

/* Spaces (Rust's is_whitespace, or GPT-2's "Ġ") at the start (from_end 0)
 * or the end of str[0, n), in characters. */
static int spaces_at(const char *str, int n, int from_end) {
    int count = 0;
    for (int i = 0; i < n;) {
        int32_t c;
        int k = tj_utf8_next(str, n, i, &c);
        int sp = c == 0x120 || tj_is_space(c);
        if (!from_end && !sp) break;
        count = sp ? count + 1 : 0;
        i += k;
    }
    return count;
}

/* The offsets trimmed of the spaces the token's text starts and ends with,
 * as the ByteLevel and RobertaProcessing post-processors do (in characters
 * of the input; a lone leading space of the first token is kept when the
 * pre-tokenizer added one). */
static void trim_offsets(const TokJson *t, const Out *o, const char *str, int n, int *start, int *end) {
    int lead = spaces_at(str, n, 0), trail = spaces_at(str, n, 1);
    for (int k = 0; k < t->n_trim && (lead || trail); k++) {
        int first = o->e->n == o->base || *start == 0, ld = lead;
        if (first && t->trim_prefix[k] && ld == 1) ld = 0;
        for (int i = 0; i < ld && *start < *end; i++)
            do (*start)++; while (*start < *end && ((unsigned char)o->text[*start] & 0xC0) == 0x80);
        int e = *end, i = 0;
        for (; i < trail && e > 0; i++)
            do e--; while (e > 0 && ((unsigned char)o->text[e] & 0xC0) == 0x80);
        if (trail && i == trail) *end = e < *start ? *start : e;
    }
}

/* A token of the text: its offsets trimmed when the post-processor says so;
 * str[0, n) is its text as the library holds it (the vocabulary's, or the
 * matched text of an added token). */
static int out_text(const TokJson *t, Out *o, int id, TjSpan sp, const char *str, int n, int special) {
    if (t->n_trim) trim_offsets(t, o, str, n, &sp.start, &sp.end);
    return out_add(t, o, id, sp.start, sp.end, special);
}

/* A match of an added token: bytes [start, stop) of the text searched. */
typedef struct { int start, stop, added; } Hit;

/* 1 if the character ending at s[i) (before) or starting at s[i] (after) is
 * a word character. */
static int word_at(const char *s, int n, int i, int before) {
    if (before) {
        if (i == 0) return 0;
        int j = i - 1;
        while (j > 0 && ((unsigned char)s[j] & 0xC0) == 0x80) j--;
        i = j;
    } else if (i >= n) return 0;
    int32_t c;
    tj_utf8_next(s, n, i, &c);
    return tj_is_word(c);
}

/* The next match of the set in s at or after from (leftmost, then longest),
 * honouring single_word, lstrip and rstrip.  1 found, 0 none. */
static int added_next(const TokJson *t, const AddedSet *set, const char *s, int n, int *from, int done, Hit *h) {
    for (int i = *from; i < n; i++) {
        int b = (unsigned char)s[i], hit = -1;
        for (int k = set->first[b]; k < set->first[b + 1] && hit < 0; k++) {
            const Added *a = &t->added[set->order[k]];
            if (a->len <= n - i && !memcmp(s + i, a->match, (size_t)a->len)) hit = set->order[k];
        }
        if (hit < 0) continue;
        const Added *a = &t->added[hit];
        int start = i, stop = i + a->len;
        i = stop - 1;   /* the search goes on after the match */
        if (a->single_word && (word_at(s, n, start, 1) || word_at(s, n, stop, 0))) continue;
        if (a->lstrip)
            while (start > done) {
                int j = start - 1;
                while (j > done && ((unsigned char)s[j] & 0xC0) == 0x80) j--;
                int32_t c;
                tj_utf8_next(s, n, j, &c);
                if (!tj_is_space(c)) break;
                start = j;
            }
        if (a->rstrip)
            while (stop < n) {
                int32_t c;
                int k = tj_utf8_next(s, n, stop, &c);
                if (!tj_is_space(c)) break;
                stop += k;
            }
        *from = i + 1;
        *h = (Hit){start, stop, hit};
        return 1;
    }
    *from = n;
    return 0;
}

/* "cannot tokenize the text: " and why a part of the file failed on it. */
static int cannot(const TjWhy *why, char *err, size_t errlen) {
    char msg[400];
    tj_why_say(why, msg, sizeof msg);
    return errmsg_set(err, errlen, "cannot tokenize the text: %s", msg);
}

/* Normalized text without added tokens: pre-tokenizer, then the model. */
static int encode_text(const TokJson *t, TjStr *s, Out *o, char *err, size_t errlen) {
    TjList words = {0};
    TjToks toks = {0};
    int rc = tjlist_take(&words, s);
    TjWhy why = {TJ_WHY_MEMORY, NULL, 0, 0};
    if (rc == 0 && t->pre) rc = tj_pre_apply(t->pre, &words, &why);
    if (rc) { tjlist_free(&words); return cannot(&why, err, errlen); }
    for (int w = 0; w < words.n && rc == 0; w++) {
        const TjStr *p = &words.v[w];
        toks.n = 0;
        rc = tj_model_tokenize(&t->model, p->s, p->n, &toks, err, errlen);
        for (int k = 0; k < toks.n && rc == 0; k++) {
            int id = toks.v[k].id;
            const char *str = id < t->model.n_ids && t->model.tok[id] ? t->model.tok[id] : "";
            TjSpan sp = tjstr_span(p, toks.v[k].start, toks.v[k].end - toks.v[k].start);
            if (out_text(t, o, id, sp, str, (int)strlen(str), 0)) rc = errmsg_set(err, errlen, "out of memory");
        }
    }
    free(toks.v);
    tjlist_free(&words);
    return rc;
}

static int encode_cut(const TokJson *t, TjStr *s, int level, Out *o, char *err, size_t errlen);

/* The text s[a, b) between added tokens: at level 0 (raw text) it is
 * normalized and cut again; at level 1 it goes to the model. */
static int encode_gap(const TokJson *t, const TjStr *s, int a, int b, int level, Out *o, char *err, size_t errlen) {
    TjStr g = {0};
    if (tjstr_slice(&g, s, a, b)) return errmsg_set(err, errlen, "out of memory");
    int rc = level == 0 ? encode_cut(t, &g, 1, o, err, errlen) : encode_text(t, &g, o, err, errlen);
    tjstr_free(&g);
    return rc;
}

/* s cut at the added tokens: level 0 those that are not normalized, on the
 * raw text; level 1 those that are, on the normalized text. */
static int encode_cut(const TokJson *t, TjStr *s, int level, Out *o, char *err, size_t errlen) {
    TjWhy why;
    if (level == 1 && t->norm && tj_norm_apply(t->norm, s, &why)) return cannot(&why, err, errlen);
    const AddedSet *set = level ? &t->normed : &t->raw;
    int done = 0, from = 0, rc = 0;
    Hit h;
    while (rc == 0 && set->n > 0 && added_next(t, set, s->s, s->n, &from, done, &h)) {
        if (h.start > done) rc = encode_gap(t, s, done, h.start, level, o, err, errlen);
        const Added *a = &t->added[h.added];
        TjSpan sp = tjstr_span(s, h.start, h.stop - h.start);
        if (rc == 0 && out_text(t, o, a->id, sp, s->s + h.start, h.stop - h.start, t->special[a->id]))
            rc = errmsg_set(err, errlen, "out of memory");
        done = h.stop;
    }
    if (rc == 0 && done < s->n) rc = encode_gap(t, s, done, s->n, level, o, err, errlen);
    return rc;
}

int tokjson_encode(const TokJson *t, const char *text, int add_special, TokJsonEnc *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (t->model.merges_err) return errmsg_set(err, errlen, "%s", t->model.merges_err);   /* merges.txt's bad line */
    size_t len = strlen(text);
    if (len > (size_t)INT_MAX / 4) return errmsg_set(err, errlen, "the text is %zu bytes; the limit is %d", len, INT_MAX / 4);
    if (!tj_utf8_valid(text, len)) return errmsg_set(err, errlen, "the text is not valid UTF-8");
    Out o = {out, 0, text, (int)len, 0};
    TjStr whole = {0};
    int rc = 0, n = (int)len;
    for (int i = 0; i < n && rc == 0;) {   /* each byte aligned to its character */
        int32_t c;
        int k = tj_utf8_next(text, n, i, &c);
        rc = tjstr_put(&whole, text + i, k, (TjSpan){i, i + k});
        i += k;
    }
    if (rc) rc = errmsg_set(err, errlen, "out of memory");
    int with = add_special && t->has_post;
    for (int i = 0; with && i < t->n_pre && rc == 0; i++)
        if (out_add(t, &o, t->pre_ids[i], 0, 0, 1)) rc = errmsg_set(err, errlen, "out of memory");
    o.base = out->n;
    if (rc == 0) rc = encode_cut(t, &whole, 0, &o, err, errlen);
    for (int i = 0; with && i < t->n_post && rc == 0; i++)
        if (out_add(t, &o, t->post_ids[i], n, n, 1)) rc = errmsg_set(err, errlen, "out of memory");
    tjstr_free(&whole);
    if (rc) {
        tokjson_enc_free(out);
        one_line(err, errlen);
    }
    return rc;
}

void tokjson_enc_free(TokJsonEnc *e) {
    if (!e) return;
    free(e->ids);
    free(e->tokens);
    free(e->start);
    free(e->end);
    free(e->special);
    memset(e, 0, sizeof *e);
}

/* ---- decoding and the vocabulary ---- */

int tokjson_decode(const TokJson *t, const int *ids, int n, int skip_special, char **out, char *err, size_t errlen) {
    *out = NULL;
    TjWords w = {0};
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        const char *tok = tokjson_token(t, ids[i]);
        if (!tok || (skip_special && t->special[ids[i]])) continue;
        rc = tjwords_add(&w, strdup(tok));
    }
    if (rc == 0 && t->dec) rc = tj_dec_apply(t->dec, &w);
    size_t total = 1;
    for (int i = 0; i < w.n; i++) total += strlen(w.v[i]) + 1;
    char *s = rc == 0 ? malloc(total) : NULL;
    if (s) {
        size_t k = 0;
        for (int i = 0; i < w.n; i++) {
            if (i > 0 && !t->dec) s[k++] = ' ';
            size_t l = strlen(w.v[i]);
            memcpy(s + k, w.v[i], l);
            k += l;
        }
        s[k] = '\0';
    }
    tjwords_free(&w);
    if (!s) return errmsg_set(err, errlen, "out of memory");
    *out = s;
    return 0;
}

int tokjson_vocab_size(const TokJson *t) {
    return t->n_ids;
}

int tokjson_id(const TokJson *t, const char *token) {
    int id = tjvocab_get(&t->added_ids, token, strlen(token));
    return id >= 0 ? id : tjvocab_get(&t->model.vocab, token, strlen(token));
}

const char *tokjson_token(const TokJson *t, int id) {
    return id >= 0 && id < t->n_ids ? t->tok[id] : NULL;
}
int tokjson_token_bytes(const TokJson *t, int id, char *out, size_t n) {
    const char *s = tokjson_token(t, id);
    if (!s || n == 0) return -1;
    int len = (int)strlen(s);
    size_t k = 0;
    for (int i = 0; i < len;) {
        int32_t c;
        i += tj_utf8_next(s, len, i, &c);
        int b = tj_char_byte(c);
        if (b < 0 || k + 1 >= n) return -1;
        out[k++] = (char)b;
    }
    out[k] = '\0';
    return (int)k;
}

int tokjson_is_special(const TokJson *t, int id) {
    return id >= 0 && id < t->n_ids && t->special[id];
}
int tokjson_bos_id(const TokJson *t) {
    return t->n_pre > 0 ? t->pre_ids[0] : -1;
}
int tokjson_eos_id(const TokJson *t) {
    return t->n_post > 0 ? t->post_ids[0] : -1;
}
int tokjson_unk_id(const TokJson *t) {
    return t->model.unk;
}

const char *tokjson_model_type(const TokJson *t) {
    return t->model.kind == TJ_MODEL_BPE ? "BPE" : t->model.kind == TJ_MODEL_WORDPIECE ? "WordPiece" : "WordLevel";
}
