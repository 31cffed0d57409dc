/* tokjson.h — Hugging Face's tokenizer.json, read and run in C: the one file
 * every modern model folder ships (GPT-2, BERT, Llama, Mistral, Qwen, …), with
 * the ids Hugging Face's own `tokenizers` library gives (the tests compare
 * with it on thousands of strings).  It is the one tokenizer engine of
 * attnviz: the files older folders ship instead, GPT-2's vocab.json +
 * merges.txt and BERT's vocab.txt, load into the same structures
 * (tokjson_load_gpt2, tokjson_load_bert: their models, and the rules of the
 * tokenizers that first read them where those differ from the library's),
 * as the library itself does; llama2.c's scored pieces merge with its BPE
 * loop (tokenize/llama2c_tok.h).  The file's JSON is read by cJSON.
 *
 * A text goes through, in order:
 *   1. added tokens: those with "normalized": false are cut out of the raw
 *      text first (leftmost, longest; honouring single_word, lstrip, rstrip),
 *      so "<|endoftext|>" or "<s>" in the text is one token;
 *   2. the normalizer, on each piece between them: NFC, NFD, NFKC, NFKD,
 *      Lowercase, StripAccents, BertNormalizer, Replace (string or regex),
 *      Prepend, Strip, ByteLevel, Sequence; then the added tokens with
 *      "normalized": true are cut out of the normalized text;
 *   3. the pre-tokenizer: ByteLevel (with or without its regex,
 *      add_prefix_space), Split (string or regex; Removed, Isolated,
 *      MergedWithPrevious, MergedWithNext, Contiguous; invert), Whitespace,
 *      WhitespaceSplit, BertPreTokenizer, Metaspace (prepend_scheme always,
 *      first, never; split), Punctuation, Digits, CharDelimiterSplit, Sequence;
 *   4. the model on each pre-token: BPE (byte-level, or SentencePiece-style
 *      with "▁", byte_fallback "<0xAB>", fuse_unk, ignore_merges,
 *      continuing_subword_prefix, end_of_word_suffix; merges as "a b" or as
 *      ["a", "b"]), WordPiece (continuing_subword_prefix,
 *      max_input_chars_per_word), WordLevel; a "model" without "type" is
 *      inferred (merges → BPE, else WordPiece when it has a subword prefix or
 *      a word limit, else WordLevel), as GPT-2's and BERT's files need;
 *   5. the post-processor, only when the caller asks (add_special = 1):
 *      TemplateProcessing ("single"), BertProcessing, RobertaProcessing,
 *      ByteLevel (ids unchanged), Sequence.
 * Decoding (ids → text for printing) runs the decoder: ByteLevel, Metaspace,
 * WordPiece, ByteFallback, Fuse, Strip, Replace, BPEDecoder, Sequence;
 * without a decoder the tokens are joined with spaces, as the library does.
 * Regex patterns are the Oniguruma patterns of the file, run by PCRE2 (UTF,
 * UCP) after \w, \W and \s are rewritten to Oniguruma's Unicode classes;
 * Unicode tables come from utf8proc.  Not read: Unigram models, the
 * Precompiled normalizer (T5, ALBERT), the UnicodeScripts pre-tokenizer, the
 * CTC decoder; loading such a file fails, naming it.  Read more leniently
 * than the library: fields it requires may be left out (their defaults),
 * and merges may mix both spellings.
 *
 * Where the library has its own ways, they are followed (the tests check
 * them): an added token gets the id of the same text in the vocabulary, or
 * the next id after it in file order (the file's "id" agrees in files the
 * library wrote); an added token with "normalized": true is spelled as its
 * normalized text ("[MASK]" under Lowercase is "[mask]") and then counts as
 * special only if that text is a special token's; BertNormalizer,
 * BertPreTokenizer and Punctuation classify marks, control characters and
 * punctuation with the library's older Unicode tables (a list of the code
 * points they do not know, in tokjson_text.c); a character outside a BPE
 * vocabulary without an unk_token is dropped; Metaspace with
 * add_prefix_space false needs prepend_scheme "never".  Offsets follow the
 * library's alignments (a prepended "▁" spans the first character, a
 * replacement the last one it replaces, a mark dropped by StripAccents takes
 * its bytes with it), and the ByteLevel and RobertaProcessing
 * post-processors with trim_offsets trim them of spaces.
 *
 * Use (the family/ loader and `attnviz tokenize`):
 *
 *     char err[512];
 *     TokJson *tj = tokjson_load("folder/tokenizer.json", err, sizeof err);
 *        (or tokjson_load_gpt2("vocab.json", "merges.txt", …),
 *            tokjson_load_bert("vocab.txt", lower, -1, …))
 *     if (!tj) { fprintf(stderr, "error: %s\n", err); ... }
 *     TokJsonEnc e = {0};
 *     if (tokjson_encode(tj, text, 1, &e, err, sizeof err)) ...
 *     for (int i = 0; i < e.n; i++)   e.ids[i], e.tokens[i],
 *                                     text + e.start[i] … text + e.end[i]
 *     tokjson_enc_free(&e);
 *     char *s = NULL;  tokjson_decode(tj, ids, n, 1, &s, err, sizeof err); … free(s);
 *     tokjson_free(tj);
 *
 * BOS/EOS: tokenizer.json says them only through its post-processor, which
 * tokjson_bos_id / tokjson_eos_id report (-1 when it has none, as GPT-2's);
 * a folder's tokenizer_config.json ("bos_token", "eos_token") is the caller's
 * to read, and tokjson_id turns its strings into ids.
 *
 * Ownership: TokJson owns everything it read; TokJsonEnc owns its arrays, and
 * its tokens point into the TokJson (valid until tokjson_free).  Errors: -1 or
 * NULL and one line in err ("FILE: model.merges[12]: …"); nothing is printed.
 * tokjson_free and tokjson_enc_free accept NULL and zeroed values.  A loaded
 * TokJson is read-only: several threads may encode with it at once. */
#ifndef ATTNVIZ_TOKJSON_H
#define ATTNVIZ_TOKJSON_H
#include <stddef.h>

typedef struct TokJson TokJson;

/* One encoded text, a token a row. */
typedef struct {
    int n;                 /* tokens                                         */
    int *ids;              /* (n)                                            */
    const char **tokens;   /* (n) the vocabulary's spelling ("Ġit", "▁the",  */
                           /*     "##ing", "<0x0A>"), owned by the TokJson   */
    int *start, *end;      /* (n) bytes of the input the token came from:    */
                           /*     text[start, end); a token the post-        */
                           /*     processor added is empty, at 0 before the  */
                           /*     text or at its length after it             */
    unsigned char *special;/* (n) 1: an added special token or one the post- */
                           /*     processor added                            */
} TokJsonEnc;

/* Reads path (at most 256 MB).  NULL with err naming the file and the field. */
TokJson *tokjson_load(const char *path, char *err, size_t errlen);
/* The same from len bytes of JSON in memory; name is used in messages. */
TokJson *tokjson_parse(const char *json, size_t len, const char *name, char *err, size_t errlen);

/* GPT-2's vocab.json + merges.txt, as transformers' GPT2Tokenizer reads
 * them: byte-level BPE with GPT-2's own pre-tokenizer (its pattern run by
 * PCRE2, as OpenAI's encoder.py ran it), no normalizer, no added tokens
 * ("<|endoftext|>" in the text is text) and no post-processor, the ByteLevel
 * decoder.  NULL with err naming the file. */
TokJson *tokjson_load_gpt2(const char *vocab_json, const char *merges_txt, char *err, size_t errlen);

/* BERT's vocab.txt, as transformers' BertTokenizer (Python) reads it:
 * WordPiece ("##", [UNK], words over 100 characters are [UNK]) after
 * BertNormalizer and BertPreTokenizer with that tokenizer's rules (control
 * characters dropped, CJK ideographs spaced, NFC, split on str.isspace();
 * lower: str.lower(), then accents stripped; strip_accents 1 strips them
 * for a cased model too, 0 keeps them, -1 follows lower; punctuation, ASCII
 * symbols or P*, splits off; Unicode tables of today, from utf8proc), where
 * tokenizer.json's BertNormalizer follows the Rust library's; [PAD], [UNK],
 * [CLS], [SEP], [MASK] special added tokens, whole wherever typed; the
 * post-processor [CLS] … [SEP] when both are in the vocabulary; the
 * WordPiece decoder.  NULL with err naming the file. */
TokJson *tokjson_load_bert(const char *vocab_txt, int lower, int strip_accents, char *err, size_t errlen);

/* text (valid UTF-8, NUL-terminated) → out (zeroed or freed before; freed
 * again on failure).  add_special: 1 runs the post-processor (BERT's [CLS] …
 * [SEP], Llama's <s>), 0 gives the model's tokens only.  0, or -1 with err. */
int tokjson_encode(const TokJson *t, const char *text, int add_special, TokJsonEnc *out, char *err, size_t errlen);
void tokjson_enc_free(TokJsonEnc *e);

/* ids[0..n) → *out (malloc'd UTF-8, caller frees), through the decoder;
 * skip_special: 1 leaves the special tokens out.  Ids outside the
 * vocabulary are skipped.  0, or -1 with err (out of memory). */
int tokjson_decode(const TokJson *t, const int *ids, int n, int skip_special, char **out, char *err,
                   size_t errlen);

/* Ids 0..size-1: the model's vocabulary and the added tokens. */
int tokjson_vocab_size(const TokJson *t);
/* The id of a token spelled as in the file ("<s>", "Ġit"), or -1. */
int tokjson_id(const TokJson *t, const char *token);
/* The spelling of an id, or NULL when no token has it. */
const char *tokjson_token(const TokJson *t, int id);
/* The bytes a byte-level token stands for ("Ġit" → " it": each character
 * of its spelling through GPT-2's byte-to-character map) into out, n bytes
 * with the NUL.  Their number, or -1 when id has no token, a character is
 * not one of the 256, or out is too small. */
int tokjson_token_bytes(const TokJson *t, int id, char *out, size_t n);
/* 1 if id is an added token marked "special". */
int tokjson_is_special(const TokJson *t, int id);
/* The token the post-processor puts before the text (<s>, [CLS]), after it
 * (</s>, [SEP]), or -1; the model's unknown token, or -1. */
int tokjson_bos_id(const TokJson *t);
int tokjson_eos_id(const TokJson *t);
int tokjson_unk_id(const TokJson *t);
/* "BPE", "WordPiece" or "WordLevel". */
const char *tokjson_model_type(const TokJson *t);

void tokjson_free(TokJson *t);

#endif
