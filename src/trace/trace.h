/* trace.h — the in-memory record of attention maps and its JSON writer.
 *
 * A Trace holds every map the probe saw: one per (stack, layer, kind), each with
 * its query/key tokens, its mask and, per head, the weights and optionally the
 * step matrices (scores, scaled, masked, output).  trace_write_json writes the
 * format of docs/trace-format.md (schema: docs/trace.schema.json), version 1:
 * numbers with %.9g (full float32 precision), −∞ cells of `masked` as null.
 *
 * Ownership: the Trace copies every string and matrix it is given; trace_free
 * releases everything and accepts a zeroed or half-built Trace. */
#ifndef ATTNVIZ_TRACE_H
#define ATTNVIZ_TRACE_H
#include <stddef.h>

typedef struct {
    int head;
    float *weights;  /* (Tq, Tk) always                         */
    float *scores;   /* (Tq, Tk) or NULL — Q·Kᵀ                 */
    float *scaled;   /* (Tq, Tk) or NULL — ÷√d_k                */
    float *masked;   /* (Tq, Tk) or NULL — + mask (−inf allowed) */
    float *output;   /* (Tq, Dv) or NULL — weights·V            */
    float *norm_weighted; /* (Tq, Tk) or NULL — ‖α_ij · f_h(x_j)‖, the size of
                             what key j adds through this head (Kobayashi et al. 2020) */
    /* Rotary position embeddings (RoPE): this head's queries and keys before and
     * after the rotation, or NULL (a model without RoPE, or not recorded). */
    float *q, *q_rot;     /* (Tq, d_k) */
    float *k, *k_rot;     /* (Tk, d_k) */
} TraceHead;

typedef struct {
    char *id;             /* "encoder.0.self", "decoder.1.cross", "custom" */
    char *stack;          /* "encoder" | "decoder" | "custom"              */
    int layer;
    char *kind;           /* "self" | "masked_self" | "cross" | "custom"   */
    int Tq, Tk, d_k, Dv;
    char **queries;       /* Tq tokens */
    char **keys;          /* Tk tokens */
    char **row_labels;    /* Tq labels pictures give the rows, or NULL (the
                             queries): "written\tinput" for a decoder row that
                             writes a word (render/label.h); not in the JSON */
    unsigned char *mask;  /* (Tq, Tk) 1 = may attend, or NULL (no mask)    */
    int *row_pos;         /* (Tq) the position among the keys each row reads
                             from, when the map keeps only some rows (a long
                             text's rows of pronouns, pipeline/longtext.h); NULL:
                             row i is position i                            */
    float mask_fill;      /* -INFINITY or a finite number                  */
    int scaled_by_sqrt_dk;/* 0 for the unscaled variant (--no-scale)       */
    float score_scale;    /* what scores were multiplied by when it is not
                             1/√d_k (Gemma 3's query_pre_attn_scalar^-½); 0 otherwise */
    int n_heads;
    int n_kv_heads;       /* key/value heads (grouped-query attention): query head h
                             reads key/value head h / (n_heads / n_kv_heads); = n_heads
                             when every head has its own                      */
    TraceHead *heads;     /* n_heads, each zeroed until trace_set_head     */
} TraceMap;

struct Trace;
/* Who takes each map the moment its heads are complete (trace_map_done),
 * before the next layer runs: a long text's maps written to trace.bin and
 * pooled layer by layer (pipeline/longtext.h), so memory holds one layer's
 * maps, not every layer's.  map_done may free the heads' matrices (NULL after);
 * 0, or -1 with a message in err. */
typedef struct TraceSink {
    int (*map_done)(struct TraceSink *s, struct Trace *t, TraceMap *m);
    char err[512];
} TraceSink;

typedef struct Trace {
    TraceSink *sink;      /* NULL: the maps stay whole in the trace       */
    char *json_model;     /* optional: a JSON object text for "model" (owned) */
    char **source_tokens; int n_source;
    char **target_tokens; int n_target;
    TraceMap *maps; int n_maps, cap_maps;
    char **images; int n_images, cap_images;  /* relative to trace.json's folder */
    /* optional top-level members written after "maps" (e.g. "ablated",
       "importance", "rollout"): names and JSON texts, owned */
    char **section_names, **section_json; int n_sections;
} Trace;

void trace_init(Trace *t);
void trace_free(Trace *t);

/* Copies tokens (n may be 0). Returns 0, or -1 out of memory. */
int trace_set_source(Trace *t, const char *const *tokens, int n);
int trace_set_target(Trace *t, const char *const *tokens, int n);
/* Copies a JSON object text for the "model" member (NULL removes it). */
int trace_set_model_json(Trace *t, const char *json_object);

/* What a new map is (the fields of TraceMap that trace_add_map fills); a
 * designated initializer leaves the mask NULL and mask_fill 0 when not named. */
typedef struct {
    const char *id;               /* "encoder.0.self", "decoder.1.cross", "custom" */
    const char *stack;            /* "encoder" | "decoder" | "custom"              */
    int layer;
    const char *kind;             /* "self" | "masked_self" | "cross" | "custom"   */
    const char *const *queries;   /* Tq tokens (NULL entries become "")            */
    int Tq;
    const char *const *keys;      /* Tk tokens                                     */
    int Tk;
    int d_k, Dv;                  /* head size of Q, K and of V (the output)       */
    const unsigned char *mask;    /* (Tq, Tk) 1 = may attend, or NULL (no mask)    */
    float mask_fill;              /* -INFINITY or a finite number                  */
    int n_heads;
    int n_kv_heads;               /* 0: n_heads (no grouping); else it divides n_heads */
    float score_scale;            /* 0: scores ÷ √d_k; else the factor used instead    */
    const int *row_pos;           /* (Tq) each row's position among the keys, or NULL  */
} TraceMapSpec;

/* Adds a map with spec->n_heads empty heads, copying the spec's strings, tokens
 * and mask; returns it, or NULL out of memory.  The returned pointer is valid
 * until the next add. */
TraceMap *trace_add_map(Trace *t, const TraceMapSpec *spec);

/* The row of m that reads from position q (q itself unless m keeps only
 * some rows, TraceMap.row_pos), or -1 when m has no such row. */
int trace_row_of(const TraceMap *m, int q);
/* Head h's weights in the row that reads from position q, and the mask's row:
 * NULL when m keeps no such row (and, for the mask, when m has no mask). */
const float *trace_weights_row(const TraceMap *m, int h, int q);
const unsigned char *trace_mask_row(const TraceMap *m, int q);

/* Frees every matrix of m's heads and its mask (NULL after): a streamed map
 * keeps its names and tokens only. */
void trace_drop_matrices(TraceMap *m);

/* Hands a map whose heads are complete to the trace's sink (t->sink); 0
 * without one.  0, or -1 with the message in t->sink->err ("out of memory"
 * when the sink gave none). */
int trace_map_done(Trace *t, TraceMap *m);

/* Copies Tq labels for the pictures' rows (trace_row_labels); 0, or -1
 * out of memory (the map keeps no labels then). */
int trace_set_row_labels(TraceMap *m, const char *const *labels);
/* What pictures label row i of m with: row_labels, else the queries. */
const char *const *trace_row_labels(const TraceMap *m);

/* The key/value head query head h reads (h itself without grouping). */
int trace_kv_head(const TraceMap *m, int h);

/* Copies one head's queries and keys before and after RoPE: q, q_rot (Tq, d_k),
 * k, k_rot (Tk, d_k), all four given.  0, or -1 (bad head, out of memory). */
int trace_set_rope(TraceMap *m, int head, const float *q, const float *q_rot, const float *k, const float *k_rot);

/* Copies one head's matrices (weights required; others may be NULL). */
int trace_set_head(TraceMap *m, int head, const float *weights, const float *scores,
                   const float *scaled, const float *masked, const float *output);

/* Hands one head's weights (Tq, Tk), malloc'd, to the map, which frees them
 * (its other matrices cleared): no copy.  0, or -1 (bad head; the caller still
 * owns weights).  Heads of one map may be handed over from several threads at
 * once, each its own head. */
int trace_own_head_weights(TraceMap *m, int head, float *weights);

int trace_add_image(Trace *t, const char *relpath);

/* Sets (or replaces) a top-level member name = json (a JSON value text, copied).
 * 0, or -1 out of memory. */
int trace_set_section(Trace *t, const char *name, const char *json);
/* The same with a malloc'd text the trace keeps (freed here on failure); NULL
 * (the text's builder ran out of memory) gives -1, so a caller writes
 * trace_take_section(t, "importance", importance_json(&imp)). */
int trace_take_section(Trace *t, const char *name, char *json);
/* The JSON text of a section, or NULL. */
const char *trace_section(const Trace *t, const char *name);

/* Copies a head's norm-weighted matrix (Tq, Tk).  0, or -1 out of memory. */
int trace_set_norm_weighted(TraceMap *m, int head, const float *values);

/* One matrix of a head as the writers list it: its JSON name, the numbers
 * (NULL when the head has none) and their shape. */
typedef struct {
    const char *name;
    const float *x;
    int rows, cols;
} TracePart;

#define TRACE_HEAD_PARTS 10
/* The matrices of head hd of m in the order every writer puts them: weights,
 * scores, scaled, masked, output, norm_weighted, q, q_rotated, k, k_rotated. */
void trace_head_parts(const TraceMap *m, const TraceHead *hd, TracePart parts[TRACE_HEAD_PARTS]);

/* Finds a map by id, or NULL. */
TraceMap *trace_find_map(Trace *t, const char *id);

/* 0 if every number of every map is finite (a masked cell's −∞ excepted),
 * else -1 with "MAP head H: the STEP hold a non-finite value … at row R,
 * column C: …" naming the first one. */
int trace_check_finite(const Trace *t, char *err, size_t errlen);

/* The same check, and in the same pass over the numbers two flags a head, in
 * order (lower: 2 × trace_n_heads bytes): its weights, its
 * norm_weighted are square (2 rows or more) with +0.0 bit for bit in every cell
 * above the diagonal — a causal map, which trace.bin stores as a triangle. */
int trace_check_finite_lower(const Trace *t, unsigned char *lower, char *err, size_t errlen);

/* The same check of one map: lower (or NULL) gets 2 × m->n_heads flags. */
int trace_check_map_lower(const TraceMap *m, unsigned char *lower, char *err, size_t errlen);

/* How many heads all the maps hold (map 0's heads, then map 1's, …: the order
 * of trace_check_finite_lower's flags). */
int trace_n_heads(const Trace *t);
/* About how many bytes trace_write_json will write (to warn before a large one). */
size_t trace_json_estimate(const Trace *t);
/* Past this much JSON (about a million numbers besides the masked zeros, a
 * tenth of a second to write) run writes trace.bin instead unless told otherwise. */
#define TRACE_JSON_MAX_BYTES ((size_t)16 << 20)

/* Writes JSON atomically (core/fileio.h); refuses (-1) a trace with a
 * non-finite number (trace_check_finite), so null in it always means −∞.
 * 0, or -1 with a message in err. */
int trace_write_json(const Trace *t, const char *path, char *err, size_t errlen);

#endif
