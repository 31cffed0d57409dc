/* generate.h — a decoder writing text, one token at a time, with a KV cache
 * (family/kvcache.h), and what each step shows: the token written, the
 * candidates it was chosen from, and the new query's attention row in every
 * layer and head.
 *
 * Steps.  The prompt (with the BOS the model's tokenizer puts first) is read
 * one token at a time into the cache.  Step s (0-based) reads the token at
 * position q = n_prompt - 1 + s (the last prompt token, then each written
 * token): that query's row is computed in every layer and head (only that row:
 * the keys and values of earlier positions come from the cache), and the
 * logits at q choose the token at q + 1.  Greedy (temperature 0, the default):
 * the most likely token, the lower id on a tie.  Sampling (temperature T > 0):
 * among the top_k most likely tokens, with probabilities ∝ exp(logit / T),
 * drawn with core/rng.h from the seed, so a seed always writes the same text.
 * Generation stops after `steps` tokens, or at the end-of-text token (GPT-2's
 * <|endoftext|>, the Llama family's EOS; llama2.c also at BOS, as its run.c
 * does), which is then the last step.  The last written token is read too, so
 * every position has its row: the maps end as the full causal matrix
 * (n × n), row q being what query q saw when it was the newest.
 *
 * Ownership: generate_run fills a Generation that generation_free releases
 * (accepts a zeroed one).  Errors: -1 and one line in err (steps < 1, a
 * prompt plus steps longer than the context, top_k outside 1..V). */
#ifndef ATTNVIZ_GENERATE_H
#define ATTNVIZ_GENERATE_H
#include <stddef.h>
#include "core/strbuf.h"
#include "net/net.h"
#include "pipeline/attribution.h"
#include "pipeline/look.h"
#include "trace/trace.h"

typedef struct {
    const char *prompt;
    int steps;              /* tokens to write, >= 1                           */
    double temperature;     /* 0: greedy                                       */
    int top_k;              /* candidates recorded per step (and sampled among) */
    unsigned long long seed;
} GenSpec;

typedef struct {
    int n_prompt;           /* prompt tokens, BOS included                     */
    int n;                  /* tokens in all: prompt + written                 */
    int n_steps;            /* tokens written (fewer than asked at end of text) */
    int N;                  /* room: n_prompt + steps asked; the maps' stride  */
    int L, H, Hkv, D;       /* layers, query heads, key/value heads, head size */
    int *ids;               /* (N) token ids                                   */
    char **tokens;          /* (n) display text of each token                  */
    int top_k;
    HfCandidate *top;       /* (n_steps, top_k) candidates, most likely first  */
    float *maps;            /* (L, H, N, N): row q of (l, h) = query q's weights
                               over keys 0..q (zeros after q), as computed at its step */
    char *prompt;           /* the prompt as given (malloc'd)                  */
    char *text;             /* the written tokens decoded (UTF-8, malloc'd)    */
    size_t kv_per_token;    /* bytes of keys and values one position adds      */
    size_t kv_per_token_mha;/* the same with a key/value head per query head   */
    double seconds;         /* wall time of the n_steps steps                  */
    double cpu_seconds;     /* CPU time of the process over the same steps (on a
                               busy machine the fairer measure)                 */
    int stopped;            /* 1: stopped at the end-of-text token             */
    double temperature;
    unsigned long long seed;
} Generation;

/* Runs spec on a decoder (net.h's NET_GENERATES).  0, or -1 with err. */
int generate_run(Generation *g, Net *n, const GenSpec *spec, char *err, size_t errlen);

/* The translator (NET_TRANSLATES) writing its greedy translation of sentence
 * into French (vi 0) or Vietnamese: the look of that sentence (look.h), its
 * decoder's rows one per written word.  0, or -1 with err. */
int generate_translation(Look *L, Net *n, const char *sentence, int vi, char *err, size_t errlen);

/* The translator's timeline head from --head "L.H" (NULL: the last decoder
 * layer, head 0).  0, or -1 with err naming the layers and heads it has. */
int generate_translator_head(const Net *n, const char *spec, int *layer, int *head, char *err, size_t errlen);

/* --attribution: direct logit attribution (attribution.h) of the first token
 * written, predicted at the prompt's last position, read again in one pass.
 * A decoder only.  0, or -1 with err. */
int generate_attribution(Attribution *at, Net *n, const Generation *g, char *err, size_t errlen);

/* --attribution on the translator: the same of the first word its decoder
 * wrote (decoder position 0, after the language tag), the sentence of L read
 * again in one pass; the trace of L gets its "attribution" (step 0).  0, or -1
 * with err. */
int generate_translation_attribution(Attribution *at, Net *n, Look *L, char *err, size_t errlen);

/* Tokens written per second (n_steps / seconds). */
double generate_tokens_per_s(const Generation *g);

/* Bytes of keys and values cached after step s: the positions read so far,
 * n_prompt + s (the token a step writes is cached by the next step).  The
 * kv-cache plot, the trace's kv_cache_bytes and the terminal all say this. */
size_t generate_kv_bytes(const Generation *g, int s);

/* Row q of head (l, h): (q + 1) weights. */
const float *generate_row(const Generation *g, int l, int h, int q);

/* The maps "decoder.L.masked_self" (n × n, every head) and the "generation"
 * section (docs/trace-format.md) into tr.  0, or -1 out of memory. */
int generate_trace(const Generation *g, Trace *tr);

/* The "generation" section's JSON into sb.  0, or -1 out of memory. */
int generate_json(const Generation *g, StrBuf *sb);

void generation_free(Generation *g);

#endif
