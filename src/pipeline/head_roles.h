/* head_roles.h — what each head does, measured: for every self-attention map
 * (kind "self" or "masked_self", never "cross") a layers × heads table of
 * scores, and a role name per head (TransformerLens detects the same roles,
 * in Python only; induction heads: Olsson et al. 2022).
 *
 * On the user's text (its traced maps), over query rows t = 1 … T−1 of the
 * real tokens (padding left out):
 *   previous_token  mean weight on key t − 1
 *   first_token     mean weight on key 0: the "attention sink"
 *   local           mean weight on the keys within HEAD_ROLES_WINDOW
 *                   positions of the query (itself included)
 *   entropy         mean over the rows of H(row) / log(keys the row may see):
 *                   1 = uniform over what it may see, 0 = one key
 * On a probe: n ordinary tokens drawn at random (seeded, all different)
 * and repeated twice, after the model's BOS when it has one:
 *     [BOS] a b c … | a b c … [the model's own closing tokens, e.g. BERT's [SEP]]
 * over the second copy's positions t (token x_t, its first occurrence at s):
 *   duplicate_token mean weight on key s (the same token, earlier)
 *   induction       mean weight on key s + 1 (the token that followed it)
 * "Ordinary": not a special or control token — the token's text, tokenized
 * again (with and without a leading space), gives back that one token.  The
 * bundled encoder–decoder: its encoder reads  a b c … a b c … <eos>, its
 * decoder (teacher-forced) reads  <2fr> a b c … a b c …  (the language tag
 * is its BOS); ordinary there means a vocabulary word of letters only.
 *
 * Role: the highest of the four scores among those at or above their
 * threshold (HEAD_ROLES_MIN_*); a head that passes none is "local" when
 * local >= HEAD_ROLES_LOCAL_MIN (most weight within the window), else
 * "diffuse" when entropy >= HEAD_ROLES_DIFFUSE_MIN (weight spread over many
 * keys), else "focused" (most weight on a few keys away from the query and
 * the first token: a head that looks for particular words).
 *
 * A command measures with the model it already has open (net/net.h):
 * head_roles_measure(r, net, &trace_of_the_text, n_real, seed, n).  The probe
 * is a forward pass of its own: the model's activations (logits, caches) are
 * then the probe's, so read what you need from them first.
 *
 * Ownership: HeadRoles owns its tables and probe; head_roles_free accepts a
 * zeroed or half-built one.  Errors: -1 and one line in err. */
#ifndef ATTNVIZ_HEAD_ROLES_H
#define ATTNVIZ_HEAD_ROLES_H
#include <stddef.h>
#include <stdint.h>
#include "net/net.h"
#include "trace/trace.h"

#define HEAD_ROLES_MIN_PREVIOUS 0.4f   /* previous_token at or above: "previous token" */
#define HEAD_ROLES_MIN_FIRST 0.5f      /* first_token: "sink" (as pictures_sink)       */
#define HEAD_ROLES_MIN_DUPLICATE 0.4f  /* duplicate_token: "duplicate token"           */
#define HEAD_ROLES_MIN_INDUCTION 0.4f  /* induction: "induction"                       */
#define HEAD_ROLES_WINDOW 2            /* local: keys |j − t| <= 2                     */
#define HEAD_ROLES_LOCAL_MIN 0.7f      /* local at or above (and no role): "local"     */
#define HEAD_ROLES_DIFFUSE_MIN 0.4f    /* else entropy at or above: "diffuse"; below: "focused" */
#define HEAD_ROLES_PROBE_DEFAULT 20    /* n when not given, shrunk to fit the context  */
#define HEAD_ROLES_PROBE_MIN 4         /* a probe shorter than this is refused         */

typedef enum {
    HEAD_ROLE_PREVIOUS = 0, HEAD_ROLE_FIRST = 1, HEAD_ROLE_DUPLICATE = 2, HEAD_ROLE_INDUCTION = 3,
    HEAD_ROLE_LOCAL = 4, HEAD_ROLE_DIFFUSE = 5, HEAD_ROLE_FOCUSED = 6, HEAD_ROLE_N = 7
} HeadRole;

/* Scores of one head. */
typedef struct {
    float previous, first, duplicate, induction, local, entropy;
} HeadRoleScores;

/* One kind of self-attention: the maps "STACK.L.KIND" for L = 0 … L−1. */
typedef struct {
    char stack[16], kind[16];   /* "decoder", "masked_self" */
    int L, H;
    HeadRoleScores *s;          /* (L, H) */
    HeadRole *role;             /* (L, H) */
    int *probe_input;           /* (n_probe_input) the probe as this stack read it */
    int n_probe_input;
    int probe_offset;           /* where the first copy starts in it            */
} HeadRoleTable;

typedef struct HeadRoles {
    int n_tables;
    HeadRoleTable tab[2];       /* the encoder's, then the decoder's */
    uint64_t seed;
    int probe_length;           /* n                                     */
    int *probe_ids;             /* (n) the random tokens                 */
    char **probe_tokens;        /* (n) as the pictures show them         */
} HeadRoles;

/* Short name of a role: "previous token", "sink", "duplicate token",
 * "induction", "local", "diffuse", "focused". */
const char *head_roles_name(HeadRole r);
/* Its key in the trace: "previous_token", "first_token", "duplicate_token",
 * "induction", "local", "diffuse", "focused". */
const char *head_roles_key(HeadRole r);

/* The text scores of head h of map m over its first n_real tokens (0: every
 * token; keys no row may see are padding and cut too): previous, first,
 * local, entropy (duplicate, induction untouched). */
void head_roles_text_scores(const TraceMap *m, int h, int n_real, HeadRoleScores *out);
/* The probe scores of head h of map m: the copies start at `offset` and are
 * n long (offset + 2n <= Tk): duplicate, induction. */
void head_roles_probe_scores(const TraceMap *m, int h, int offset, int n, HeadRoleScores *out);
/* The role of one head's scores. */
HeadRole head_roles_classify(const HeadRoleScores *s);

/* Any model: the text's trace (n_real real tokens; the bundled
 * encoder–decoder's encoder self and decoder masked self maps), the probe's
 * forward pass and the tables.  probe = 0: the default length, shrunk to fit
 * the context; a given length that does not fit is an error.  0, or -1 with
 * err. */
int head_roles_measure(HeadRoles *r, Net *n, const Trace *text, int n_real, uint64_t seed, int probe, char *err,
                       size_t errlen);

/* The "head_roles" member of trace.json (docs/trace-format.md), malloc'd, or
 * NULL out of memory. */
char *head_roles_json(const HeadRoles *r);
/* For the printed summary: per role the top heads, "previous token: decoder.1
 * head 3 0.91, …", one role a line, into buf. */
void head_roles_summary(const HeadRoles *r, int top, char *buf, size_t n);

void head_roles_free(HeadRoles *r);

#endif
