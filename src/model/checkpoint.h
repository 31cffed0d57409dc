/* checkpoint.h — model files in the safetensors format.
 *
 * Layout (https://github.com/huggingface/safetensors):
 *   8 bytes   N, the header length, unsigned little-endian
 *   N bytes   JSON header (padded with spaces to a multiple of 8):
 *     { "__metadata__": { "format": "attnviz-model", "version": "1",
 *                         "config": "<model_config_json text>",
 *                         "vocab":  "<JSON array of the token strings>",
 *                         ...extra string pairs given to checkpoint_save },
 *       "<tensor name>": { "dtype": "F32", "shape": [...], "data_offsets": [begin, end] },
 *       ... }            (names and shapes: model_param_table)
 *   raw little-endian float32 data; offsets are relative to the end of the header.
 *
 * The container is read and written by core/safetensors.h (header length,
 * JSON, offsets in range and not overlapping, end = begin + 4·numel, nothing
 * but spaces after the header's JSON); this module adds what makes it an
 * attnviz model.  The loader trusts nothing: metadata, config, vocabulary, every
 * tensor's dtype and shape are checked before any data is used; unknown extra
 * tensors are an error.  Errors return -1 with one line in err (never exit,
 * never abort).  Writing is atomic (core/fileio.h): a temporary beside PATH,
 * renamed onto it. */
#ifndef ATTNVIZ_CHECKPOINT_H
#define ATTNVIZ_CHECKPOINT_H
#include <stddef.h>
#include "model/model.h"

#define CHECKPOINT_FORMAT  "attnviz-model"
#define CHECKPOINT_VERSION "1"
/* An attnviz header (config, vocabulary, metadata) is tens of kB; 8 MB keeps
 * the JSON parse of a hostile header near 300 MB of memory (cJSON ~40× the text). */
#define CHECKPOINT_MAX_HEADER (8u * 1024u * 1024u)   /* 8 MB */

/* Writes the model's parameters, config and vocab (n_vocab must equal vocab_size).
 * extra: NULL or a NULL-terminated list of key, value, key, value, … strings added
 * to __metadata__ (e.g. "train_command", "…").  0, or -1 with err. */
int checkpoint_save(const char *path, const Model *m, const char *const *vocab, int n_vocab,
                    const char *const *extra, char *err, size_t errlen);

/* Reads a checkpoint into *out (zeroed first; model_free it after).  *vocab receives
 * a malloc'd array of n_vocab malloc'd strings (free with checkpoint_free_vocab).
 * metadata_json, when not NULL, receives the __metadata__ object as JSON text
 * (malloc'd, caller frees).  On error everything is released, *out is zeroed,
 * *vocab is NULL and -1 is returned with err. */
int checkpoint_load(const char *path, Model *out, char ***vocab, int *n_vocab,
                    char **metadata_json, char *err, size_t errlen);

void checkpoint_free_vocab(char **vocab, int n_vocab);

/* Rewrites the checkpoint at path (atomically, by checkpoint_save) with its
 * metadata plus the key → value pairs of kv (NULL-terminated; existing keys
 * are replaced).  0, or -1 with err. */
int checkpoint_rewrite_metadata(const char *path, const char *const *kv, char *err, size_t errlen);

/* ---- what `attnviz eval` and `train` record in the metadata ---- */

/* The eval's best coreference head, when the checkpoint's metadata JSON (the
 * __metadata__ object) records it as "coreference_head":
 * "{\"map\": \"encoder.L.self\", \"head\": H, \"accuracy\": A}".  Fills
 * layer, head and acc (-1 when absent) and returns 1 if it names a head of a
 * model with n_layers encoder layers and n_heads heads; else 0. */
int checkpoint_meta_coref_head(const char *metadata_json, int n_layers, int n_heads,
                               int *layer, int *head, double *acc);

/* 1 if the checkpoint's metadata lists (map_id, head) in "supervised_heads"
 * (JSON text: [{"map": …, "head": H, "target": "coreference"|"alignment", …}]),
 * i.e. the head was trained with gold targets rather than discovered; else 0. */
int checkpoint_meta_head_supervised(const char *metadata_json, const char *map_id, int head);

/* What training saw, so `run` can say when a sentence lies outside it:
 *   "train_source_tokens": the vocabulary ids seen in a training SOURCE as
 *       hexadecimal, one digit per 4 ids (id 4k+b is bit b of digit k);
 *   "train_max_source_len": the longest training source in words (no <eos>).
 * checkpoint_meta_source_hex writes seen[0..n) (1 = seen) as that text into
 * out (at least n/4 + 2 bytes).  checkpoint_meta_source_known fills known[0..n)
 * and *max_len from metadata_json and returns 1; a checkpoint from before they
 * were recorded (or with a malformed entry) gives every id known, *max_len -1
 * and 0. */
void checkpoint_meta_source_hex(const unsigned char *seen, int n, char *out, size_t outlen);
/* Parses such hex into set[0..n); 1 if it is exactly (n + 3) / 4 lowercase hex
 * digits, else 0 (set then unspecified). */
int checkpoint_token_hex_parse(const char *hex, int n, unsigned char *set);
int checkpoint_meta_source_known(const char *metadata_json, int n, unsigned char *known, int *max_len);

/* The target vocabulary of one language, for constrained decoding (decode.h):
 *   "train_target_tokens_fr", "train_target_tokens_vi": the vocabulary ids seen
 *       in the French / Vietnamese training TARGETS, in the same hexadecimal as
 *       train_source_tokens (write it with checkpoint_meta_source_hex).
 * Fills set[0..n) (1 = seen) for lang "fr" or "vi" and returns 1; an absent or
 * malformed entry gives set all 0 and returns 0 (the caller then does not mask). */
int checkpoint_meta_target_tokens(const char *metadata_json, const char *lang, int n, unsigned char *set);
/* Any such hexadecimal token set under key (e.g. "train_antecedent_tokens": the
 * source tokens that were some pronoun's gold antecedent in training, written by
 * eval --write-metadata).  1 and set filled, or 0 and set all 0. */
int checkpoint_meta_token_set(const char *metadata_json, const char *key, int n, unsigned char *set);

#endif
