/* grammar.c — composes English sentences with their French and Vietnamese
 * translations (see grammar.h; conventions in samples/corpus/README.md). */
#include "corpus/grammar.h"
#include "core/errmsg.h"
#include "core/rng.h"
#include <stdio.h>
#include <string.h>

enum { ST_INTR, ST_TR, ST_DITR, ST_DEST, ST_BE, N_ST };
enum { T_PRES, T_PAST, T_FUT, N_T };
enum { M_POS, M_NEG, M_Q, N_M };
enum { D_ONE, D_AND, D_BUT, D_SO, D_BECAUSE, D_WHEN, D_WHILE, D_ALTHOUGH,
       D_F_BECAUSE, D_F_WHEN, D_F_WHILE, D_F_ALTHOUGH, D_TWO, D_RELS, D_RELO, N_D };

static const char *const st_name[N_ST] = { "intr", "tr", "ditr", "dest", "be" };
static const char *const t_name[N_T] = { "pres", "past", "fut" };
static const char *const m_name[N_M] = { "pos", "neg", "q" };
static const char *const d_name[N_D] = { "one", "and", "but", "so", "because", "when", "while", "although",
    "f_because", "f_when", "f_while", "f_although", "two", "rels", "relo" };
/* Conjunctions of D_AND..D_ALTHOUGH (fronted ones reuse because..although). */
static const char *const conj_word[7][3] = {
    { "and", "et", "và" }, { "but", "mais", "nhưng" }, { "so", "donc", "nên" },
    { "because", "parce_que", "vì" }, { "when", "quand", "khi" },
    { "while", "pendant_que", "trong_khi" }, { "although", "même_si", "mặc_dù" } };
/* Prepositions of noun-phrase modifiers. */
#define N_PREP 7
static const char *const prep[N_PREP][3] = {
    { "on", "sur", "trên" }, { "in", "dans", "trong" }, { "under", "sous", "dưới" },
    { "near", "près_de", "gần" }, { "behind", "derrière", "sau" }, { "with", "avec", "với" },
    { "in_front_of", "devant", "trước" } };

int grammar_n_frames(void) { return N_ST * N_T * N_M * N_D; }

static void frame_parts(int f, int *st, int *t, int *m, int *d) {
    *d = f % N_D; f /= N_D;
    *m = f % N_M; f /= N_M;
    *t = f % N_T; f /= N_T;
    *st = f;
}

int grammar_frame_discourse(int f) { return f % N_D; }
int grammar_n_discourse(void) { return N_D; }
const char *grammar_discourse_name(int d) { return d >= 0 && d < N_D ? d_name[d] : "?"; }
void grammar_frame_parts(int f, int *structure, int *tense, int *mood, int *discourse) {
    frame_parts(f, structure, tense, mood, discourse);
}
int grammar_make_frame(int structure, int tense, int mood, int discourse) {
    return ((structure * N_T + tense) * N_M + mood) * N_D + discourse;
}

int grammar_frame_valid(int f) {
    int st, t, m, d;
    if (f < 0 || f >= grammar_n_frames()) return 0;
    frame_parts(f, &st, &t, &m, &d);
    return m != M_Q || d == D_ONE || d == D_TWO;
}

void grammar_frame_name(int f, char *out, size_t n) {
    int st, t, m, d;
    frame_parts(f, &st, &t, &m, &d);
    snprintf(out, n, "%s.%s.%s.%s", st_name[st], t_name[t], m_name[m], d_name[d]);
}

/* ------------------------------------------------------------ structures -- */

enum { NK_NOUN, NK_NAME, NK_PRON, NK_PERS };   /* NK_PERS: i / you / we (pers 0 1 2) */
enum { DT_NONE, DT_THE, DT_A, DT_MY, DT_YOUR, DT_OUR, DT_POSS, DT_NUM };
enum { CASE_SUBJ, CASE_OBJ };
#define MAX_NP 12
#define MAX_CL 4

typedef struct {
    int kind, noun, name, pl;
    int det, num, poss_ref;     /* DT_POSS: the possessor NP        */
    int ref;                    /* NK_PRON: the antecedent NP       */
    int nadj, adj[2];
    int pp, pp_np;              /* modifier "on the mat", or -1     */
    int rel;                    /* relative clause index, or -1     */
    int efem;                   /* English he/she of a person       */
    int pers;                   /* NK_PERS: 0 i, 1 you, 2 we        */
} NP;

typedef struct {
    int st, tense, neg, q;
    int verb, adj;              /* adj: ST_BE predicate             */
    int subj, obj, rcp;         /* NP indices or -1 (obj = destination of ST_DEST) */
    int gap;                    /* relative clause: 1 subject gap, 2 object gap, 0 none */
    int head;                   /* relative clause: the NP it modifies */
    int pp, pp_np;              /* adjunct "in the park": preposition of vprep, NP; or -1 */
} Clause;

typedef struct {
    const Lexicon *lx;
    uint64_t *rng;
    unsigned *uses;             /* per noun: uses so far, or NULL (grammar_generate) */
    int d;
    NP np[MAX_NP]; int n_np;
    Clause cl[MAX_CL]; int n_cl;
    int n_sent;                 /* clauses 0..n_cl-1; D_TWO: clause 1 is a second sentence */
    ClassMask person, animal, dest, place;
} Disc;

/* Keys: NP i part p, clause c part p. */
enum { KN_HEAD, KN_DET, KN_ADJ0, KN_ADJ1, KN_PREP, N_KN };
enum { KC_VERB, KC_AUX, KC_NEG, KC_PREP, KC_RPREP, KC_ADJ, KC_CONJ, KC_REL, KC_PUNCT, KC_COMMA, KC_APREP, N_KC };
static int key_np(int i, int p) { return 100 + i * N_KN + p; }
static int key_cl(int c, int p) { return 1000 + c * N_KC + p; }

static int below(Disc *g, int n) { return n > 0 ? rng_splitmix_below(g->rng, n) : 0; }

/* ------------------------------------------------------------- features -- */

static const NP *base_np(const Disc *g, int i) {
    while (g->np[i].kind == NK_PRON) i = g->np[i].ref;
    return &g->np[i];
}
static int np_pl(const Disc *g, int i) { return base_np(g, i)->pl; }
static int np_city(const Disc *g, int i) {
    const NP *n = base_np(g, i);
    return n->kind == NK_NAME && g->lx->names[n->name].kind == NAME_CITY;
}
static int np_human(const Disc *g, int i) {
    const NP *n = base_np(g, i);
    if (n->kind == NK_PERS) return 1;
    if (n->kind == NK_NAME) return g->lx->names[n->name].kind != NAME_CITY;
    return g->lx->nouns[n->noun].human;
}
/* English natural gender of a person (he/she). */
static int np_efem(const Disc *g, int i) { return base_np(g, i)->efem; }
/* French gender for agreement: persons their natural gender, things the noun's. */
static int np_ffem(const Disc *g, int i) {
    const NP *n = base_np(g, i);
    if (n->kind == NK_NAME || n->kind == NK_PERS) return n->efem;
    if (g->np[i].kind == NK_PRON && g->lx->nouns[n->noun].human && !n->pl) return n->efem;  /* they: the noun's */
    return g->lx->nouns[n->noun].fem;
}
static ClassMask np_classes(const Disc *g, int i) {
    const NP *n = base_np(g, i);
    if (n->kind == NK_PERS) return g->person;
    if (n->kind == NK_NAME) return np_city(g, i) ? g->dest | g->place : g->person;
    return g->lx->nouns[n->noun].classes;
}

/* Is NP j's English number ambiguous ("sheep", "fish": one form for both)? */
static int np_number_open(const Disc *g, int j) {
    const NP *n = &g->np[j];
    if (n->kind != NK_NOUN || n->det == DT_NUM) return 0;
    const Noun *nn = &g->lx->nouns[n->noun];
    return nn->en[0] && nn->en[1] && !strcmp(nn->en[0], nn->en[1]);
}

/* Does NP j (a noun or a name) fit the English pronoun that refers to NP a?
 * A noun whose singular and plural are one English word fits both numbers. */
static int pron_fits(const Disc *g, int a, int j) {
    if (np_pl(g, a)) return np_pl(g, j) || np_number_open(g, j);
    if (np_pl(g, j) && !np_number_open(g, j)) return 0;
    if (!np_human(g, a)) return !np_human(g, j);
    if (!np_human(g, j)) return 0;
    const NP *n = &g->np[j];
    if (n->kind == NK_NOUN && g->lx->nouns[n->noun].neutral) return 1;
    return n->efem == np_efem(g, a);
}

/* Every pronoun (and bound possessive) has exactly one NP that fits it. */
static int pronouns_unique(const Disc *g) {
    for (int p = 0; p < g->n_np; p++) {
        int a = g->np[p].kind == NK_PRON ? g->np[p].ref : g->np[p].det == DT_POSS ? g->np[p].poss_ref : -1;
        if (a < 0) continue;
        int fits = 0;
        for (int j = 0; j < g->n_np; j++)
            if (g->np[j].kind != NK_PRON && g->np[j].kind != NK_PERS && pron_fits(g, a, j)) fits++;
        if (fits != 1) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ choosing -- */

static int adj_fits(const Disc *g, int a, int noun) {
    const ClassMask kinds = g->lx->nouns[noun].classes;
    return (g->lx->adjs[a].classes & kinds) != 0;
}

static int pick_adj(Disc *g, int noun, int want_pre, int avoid) {
    int cand[512], n = 0;
    for (int a = 0; a < g->lx->n_adjs && n < 512; a++)
        if (a != avoid && adj_fits(g, a, noun) && (want_pre < 0 || g->lx->adjs[a].pre == want_pre)) cand[n++] = a;
    return n ? cand[below(g, n)] : -1;
}

/* Of two candidates drawn at random, the noun used less so far (when the
 * caller counts uses): the "two choices" rule evens out how often each noun
 * appears without changing which slots it can fill. */
static int fewer_uses(Disc *g, const int *cand, int n) {
    int a = cand[below(g, n)];
    if (!g->uses) return a;
    int b = cand[below(g, n)];
    return g->uses[b] < g->uses[a] ? b : a;
}

static ClassMask nth_bit(ClassMask m, int k) {
    while (k--) m &= m - 1;
    return m & ~(m - 1);
}

/* Mean uses of the candidates in class bit. */
static double class_uses(const Disc *g, const int *cand, int n, ClassMask bit) {
    double sum = 0.0;
    int k = 0;
    for (int j = 0; j < n; j++)
        if (g->lx->nouns[cand[j]].classes & bit) sum += g->uses[cand[j]], k++;
    return k ? sum / k : 0.0;
}

/* A noun of classes cls (0 = any).  Half the time uniform over the nouns, half
 * the time a class first (one the candidates have, uniform) and then a noun of
 * it: a slot open to every noun then still gives the small classes (body parts,
 * nature) their share, where uniform picks alone left "tooth" 35 times in
 * 200,000 pairs and the model translated it as "sucre". */
static int pick_noun(Disc *g, ClassMask cls) {
    int cand[2048], n = 0;
    ClassMask have = 0;
    for (int i = 0; i < g->lx->n_nouns && n < 2048; i++)
        if (!cls || (g->lx->nouns[i].classes & cls)) cand[n++] = i, have |= g->lx->nouns[i].classes;
    if (!n) return -1;
    if (cls) have &= cls;
    int nbits = 0;
    for (ClassMask b = have; b; b &= b - 1) nbits++;
    if (nbits < 2 || below(g, 2)) return fewer_uses(g, cand, n);
    ClassMask bit = nth_bit(have, below(g, nbits));
    if (g->uses) {                                  /* of two classes, the one used less */
        ClassMask other = nth_bit(have, below(g, nbits));
        if (class_uses(g, cand, n, other) < class_uses(g, cand, n, bit)) bit = other;
    }
    int m = 0;
    for (int j = 0; j < n; j++)
        if (g->lx->nouns[cand[j]].classes & bit) cand[m++] = cand[j];
    return fewer_uses(g, cand, m);
}

static int pick_name(Disc *g, int city) {
    int cand[512], n = 0;
    for (int i = 0; i < g->lx->n_names && n < 512; i++)
        if ((g->lx->names[i].kind == NAME_CITY) == city) cand[n++] = i;
    return n ? cand[below(g, n)] : -1;
}

static int new_np(Disc *g) {
    if (g->n_np == MAX_NP) return -1;
    NP *n = &g->np[g->n_np];
    memset(n, 0, sizeof *n);
    n->ref = n->poss_ref = n->pp = n->pp_np = n->rel = -1;
    n->adj[0] = n->adj[1] = -1;
    return g->n_np++;
}

/* A small noun phrase for a modifier "on the table": the + noun (sg). */
static int make_pp(Disc *g, int head) {
    int i = new_np(g);
    if (i < 0) return -1;
    int noun = pick_noun(g, g->place);
    ClassMask obj;
    if (!lex_class_bit(g->lx, "object", &obj) && below(g, 2)) noun = pick_noun(g, obj);
    if (noun < 0 || !g->lx->nouns[noun].en[0]) { g->n_np--; return -1; }
    g->np[i].kind = NK_NOUN;
    g->np[i].noun = noun;
    g->np[i].det = DT_THE;
    g->np[i].efem = g->lx->nouns[noun].fem;
    g->np[head].pp = below(g, N_PREP);
    g->np[head].pp_np = i;
    return i;
}

/* A noun phrase of classes cls (0 = any).  name: 0 never, 1 allowed (persons),
 * 2 a city.  Returns the NP index or -1. */
static int make_np(Disc *g, ClassMask cls, int name, int mods) {
    int i = new_np(g);
    if (i < 0) return -1;
    NP *n = &g->np[i];
    if (name == 2 || (name == 1 && (cls & g->person) && below(g, 100) < 6)) {
        n->kind = NK_NAME;
        n->name = pick_name(g, name == 2);
        if (n->name < 0) { g->n_np--; return -1; }
        n->efem = g->lx->names[n->name].kind == NAME_F;
        return i;
    }
    n->kind = NK_NOUN;
    n->noun = pick_noun(g, cls);
    if (n->noun < 0) { g->n_np--; return -1; }
    const Noun *nn = &g->lx->nouns[n->noun];
    n->pl = nn->en[1] && (!nn->en[0] || below(g, 100) < 30);
    if (nn->en[0] && nn->en[1] && !strcmp(nn->en[0], nn->en[1])) n->pl = 0;   /* "the sheep": English can't tell */
    n->efem = nn->neutral ? below(g, 2) : nn->fem;
    int r = below(g, 100);
    n->det = r < 60 ? DT_THE : r < 75 ? (n->pl ? DT_THE : DT_A) : r < 88 ? DT_MY + below(g, 3) : (n->pl ? DT_NUM : DT_THE);
    if (n->det == DT_NUM) n->num = 2 + below(g, 8);
    if (!mods) return i;
    r = below(g, 100);
    if (r < 30) n->adj[n->nadj++] = pick_adj(g, n->noun, -1, -1);
    else if (r < 37) {
        n->adj[0] = pick_adj(g, n->noun, 1, -1);
        n->adj[1] = pick_adj(g, n->noun, 0, -1);
        n->nadj = n->adj[0] >= 0 && n->adj[1] >= 0 ? 2 : 0;
    }
    if (n->nadj && n->adj[0] < 0) n->nadj = 0;
    if (below(g, 100) < 8) make_pp(g, i);
    return i;
}

static int make_pron(Disc *g, int ante) {
    int i = new_np(g);
    if (i < 0) return -1;
    g->np[i].kind = NK_PRON;
    g->np[i].ref = ante;
    return i;
}

/* i / you / we (pers 0 1 2): a person, masculine in French, no antecedent. */
static int make_pers(Disc *g, int pers) {
    int i = new_np(g);
    if (i < 0) return -1;
    g->np[i].kind = NK_PERS;
    g->np[i].pers = pers;
    g->np[i].pl = pers == 2;
    return i;
}

/* Nouns of a verb adjunct: "in the park" (places, objects, surfaces,
 * containers), "with the dog" (persons, animals). */
#define N_VPREP 7
static const char *const vprep[N_VPREP][3] = {
    { "in", "dans", "trong" }, { "on", "sur", "trên" }, { "under", "sous", "dưới" },
    { "near", "près_de", "gần" }, { "behind", "derrière", "sau" }, { "in_front_of", "devant", "trước" },
    { "with", "avec", "với" } };
static int make_adjunct(Disc *g, int c) {
    /* in: places, containers; on: surfaces; the others: all four */
    static const char *const loc[] = { "place", "container", "surface", "object" };
    int p = below(g, N_VPREP);
    ClassMask cls = 0, b;
    if (p == N_VPREP - 1) cls = g->person | g->animal;
    else for (size_t k = 0; k < sizeof loc / sizeof *loc; k++)
        if ((p > 1 || (p == 0 && k < 2) || (p == 1 && k == 2)) && !lex_class_bit(g->lx, loc[k], &b)) cls |= b;
    int i = new_np(g);
    if (i < 0) return -1;
    int noun = pick_noun(g, cls);
    if (noun < 0 || !g->lx->nouns[noun].en[0] || (p == 0 && !strcmp(g->lx->nouns[noun].en[0], "school"))) {
        g->n_np--;
        return -1;
    }
    NP *n = &g->np[i];
    n->kind = NK_NOUN;
    n->noun = noun;
    n->efem = g->lx->nouns[noun].neutral ? below(g, 2) : g->lx->nouns[noun].fem;
    int r = below(g, 100);
    n->det = r < 70 ? DT_THE : r < 80 ? DT_A : DT_MY + below(g, 3);
    g->cl[c].pp = p;
    g->cl[c].pp_np = i;
    return 0;
}

/* The person of an object me / you / us for subject NP sj (never "i … me",
 * "we … us", "i … us"): 0 1 2, or -1. */
static int pick_obj_pers(Disc *g, int sj) {
    int sp = sj >= 0 && g->np[sj].kind == NK_PERS ? g->np[sj].pers : -1;
    if (sp == 1) return below(g, 2) ? 0 : 2;
    if (sp == 0 || sp == 2) return 1;
    return below(g, 3);
}

static int verb_ok(const Verb *v, int st, ClassMask subj) {
    int fr = st == ST_INTR ? VF_INTR : st == ST_TR ? VF_TR : st == ST_DITR ? VF_DITR : VF_DEST;
    return (v->frames & fr) && (!subj || !v->s || (v->s & subj));
}

/* Fills clause c of structure st.  subj_np: an NP already made for the
 * subject, or -1.  obj_ante: when >= 0 the object is a pronoun for that NP. */
static int make_clause(Disc *g, int c, int st, int subj_np, int obj_ante) {
    Clause *k = &g->cl[c];
    const Lexicon *lx = g->lx;
    ClassMask scls = subj_np >= 0 ? np_classes(g, subj_np) : 0;
    k->st = st;
    k->obj = k->rcp = -1;
    k->verb = k->adj = -1;
    if (subj_np < 0 && below(g, 100) < 25 && (st == ST_BE || st == ST_INTR || st == ST_DEST || below(g, 2)))
        subj_np = make_pers(g, below(g, 3));
    if (st == ST_BE) {
        if (subj_np < 0) {
            ClassMask kinds = 0;
            for (int a = 0; a < lx->n_adjs; a++) kinds |= lx->adjs[a].classes;
            subj_np = make_np(g, kinds, 0, 1);
            if (subj_np < 0) return -1;
        }
        const NP *b = base_np(g, subj_np);
        if (b->kind == NK_NAME || b->kind == NK_PERS) {
            if (b->kind == NK_NAME && g->np[subj_np].kind != NK_PRON) return -1;  /* no agreement with a name */
            int cand[512], n = 0;
            for (int a = 0; a < lx->n_adjs && n < 512; a++)
                if (lx->adjs[a].classes & g->person) cand[n++] = a;
            k->adj = n ? cand[below(g, n)] : -1;
        } else k->adj = pick_adj(g, b->noun, -1, -1);
        for (int a = 0; a < b->nadj; a++)
            if (b->adj[a] == k->adj) return -1;     /* not "the full plate wasn't full" */
        k->subj = subj_np;
        return k->adj < 0 ? -1 : 0;
    }
    if (subj_np >= 0 && g->np[subj_np].kind == NK_PERS) scls = g->person;
    int obj_pers = st == ST_TR && obj_ante < 0 && below(g, 100) < 12;
    int cand[1024], n = 0;
    for (int v = 0; v < lx->n_verbs && n < 1024; v++) {
        const Verb *vb = &lx->verbs[v];
        if (!verb_ok(vb, st, scls)) continue;
        if (obj_pers && (vb->fr_prep || strchr(vb->en_base, '_') || (vb->o && !(vb->o & g->person)))) continue;
        /* a pronoun object: French direct (a clitic), English no particle ("picks it up") */
        if (obj_ante >= 0 && (vb->fr_prep || strchr(vb->en_base, '_') || (vb->o && !(vb->o & np_classes(g, obj_ante)))))
            continue;
        cand[n++] = v;
    }
    if (!n) return -1;
    k->verb = cand[below(g, n)];
    const Verb *vb = &lx->verbs[k->verb];
    if (subj_np < 0) {
        int name_ok = !(vb->fr_etre && k->tense == T_PAST);
        subj_np = make_np(g, vb->s, name_ok, 1);
        if (subj_np < 0) return -1;
    }
    k->subj = subj_np;
    if (st == ST_TR) k->obj = obj_ante >= 0 ? make_pron(g, obj_ante) : obj_pers ? make_pers(g, pick_obj_pers(g, subj_np))
                                                                             : make_np(g, vb->o, 1, 1);
    if (st == ST_DITR) {
        k->obj = make_np(g, vb->o, 0, 1);
        k->rcp = make_np(g, vb->r ? vb->r : g->person | g->animal, 1, 0);
        if (k->rcp < 0) return -1;
    }
    int city = below(g, 100) < 25 && (!vb->d || (vb->d & g->dest));     /* cities are destinations */
    if (st == ST_DEST) k->obj = city ? make_np(g, 0, 2, 0) : make_np(g, vb->d ? vb->d : g->dest, 0, 0);
    if (st != ST_INTR && k->obj < 0) return -1;
    if (st == ST_DEST && g->np[k->obj].kind == NK_NOUN) g->np[k->obj].det = DT_THE, g->np[k->obj].pl = 0;
    if ((st == ST_INTR || st == ST_TR) && below(g, 100) < 20 && make_adjunct(g, c)) return -1;
    return 0;
}

/* A relative clause on NP head: "the dog that chased the cat" (gap 1) or
 * "the mouse that the cat chased" (gap 2); simple past, positive. */
static int make_rel(Disc *g, int head, int gap) {
    if (g->n_cl == MAX_CL) return -1;
    int c = g->n_cl++;
    Clause *k = &g->cl[c];
    memset(k, 0, sizeof *k);
    k->st = ST_TR; k->tense = T_PAST; k->gap = gap; k->head = head; k->adj = -1; k->rcp = -1;
    k->pp = k->pp_np = -1;
    const Lexicon *lx = g->lx;
    ClassMask hc = np_classes(g, head);
    int cand[1024], n = 0;
    for (int v = 0; v < lx->n_verbs && n < 1024; v++) {
        const Verb *vb = &lx->verbs[v];
        if (!(vb->frames & VF_TR)) continue;
        if (gap == 1 && vb->s && !(vb->s & hc)) continue;
        if (gap == 2 && (vb->en_prep || vb->fr_prep || (vb->o && !(vb->o & hc)))) continue;
        cand[n++] = v;
    }
    if (!n) return -1;
    k->verb = cand[below(g, n)];
    const Verb *vb = &lx->verbs[k->verb];
    k->subj = gap == 1 ? head : make_np(g, vb->s, 1, 0);
    k->obj = gap == 2 ? head : make_np(g, vb->o, 1, 0);
    if (k->subj < 0 || k->obj < 0) return -1;
    g->np[head].rel = c;
    return 0;
}

/* ------------------------------------------------------------- rendering -- */

static void put_keys(GrSide *s, const char *w, const int *keys, int nk, int copy) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", w);
    char *save = NULL;
    for (char *t = strtok_r(buf, "_", &save); t; t = strtok_r(NULL, "_", &save)) {
        if (s->n == GR_MAX_TOK) return;
        GrTok *tk = &s->t[s->n++];
        snprintf(tk->s, sizeof tk->s, "%s", t);
        tk->n_keys = 0;
        for (int i = 0; i < nk && i < GR_MAX_KEYS; i++)
            if (keys[i]) tk->key[tk->n_keys++] = keys[i];
        tk->copy = copy;
    }
}
static void put(GrSide *s, const char *w, int k) { put_keys(s, w, &k, 1, 0); }
static void put2(GrSide *s, const char *w, int k1, int k2) { int k[2] = { k1, k2 }; put_keys(s, w, k, 2, 0); }

static void render_np(Disc *g, GrSide *s, int lang, int i, int cas);
static void render_clause(Disc *g, GrSide *s, int lang, int c);

static int starts_vowel(const char *w) {
    static const char *const v[] = { "a", "e", "i", "o", "u", "h", "à", "â", "é", "è", "ê", "î", "ô", "û", "œ" };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (!strncmp(w, v[i], strlen(v[i]))) return 1;
    return 0;
}

/* English pronoun of antecedent a: form 0 subject, 1 object, 2 possessive. */
static const char *en_pron(const Disc *g, int a, int form) {
    static const char *const f[4][3] = { { "it", "it", "its" }, { "he", "him", "his" }, { "she", "her", "her" },
                                         { "they", "them", "their" } };
    int row = np_pl(g, a) ? 3 : !np_human(g, a) ? 0 : np_efem(g, a) ? 2 : 1;
    return f[row][form];
}
static const char *vi_pron(const Disc *g, int a) {
    if (np_pl(g, a)) return np_human(g, a) ? "họ" : "chúng";
    return !np_human(g, a) ? "nó" : np_efem(g, a) ? "cô_ấy" : "anh_ấy";
}

static void en_np(Disc *g, GrSide *s, int i, int cas) {
    const NP *n = &g->np[i];
    const Lexicon *lx = g->lx;
    int kh = key_np(i, KN_HEAD), kd = key_np(i, KN_DET);
    if (n->kind == NK_PRON) { put(s, en_pron(g, n->ref, cas), kh); return; }
    if (n->kind == NK_PERS) {
        static const char *const f[3][2] = { { "i", "me" }, { "you", "you" }, { "we", "us" } };
        put(s, f[n->pers][cas == CASE_OBJ], kh);
        return;
    }
    if (n->kind == NK_NAME) { put_keys(s, lx->names[n->name].name, &kh, 1, 1); return; }
    const Noun *nn = &lx->nouns[n->noun];
    const char *first = n->nadj ? lx->adjs[n->adj[0]].en : nn->en[n->pl];
    char num[8];
    switch (n->det) {
    case DT_THE: put(s, "the", kd); break;
    case DT_A: put(s, strchr("aeiou", first[0]) ? "an" : "a", kd); break;
    case DT_MY: put(s, "my", kd); break;
    case DT_YOUR: put(s, "your", kd); break;
    case DT_OUR: put(s, "our", kd); break;
    case DT_POSS: put(s, en_pron(g, n->poss_ref, 2), kd); break;
    case DT_NUM: snprintf(num, sizeof num, "%d", n->num); put_keys(s, num, &kd, 1, 1); break;
    }
    for (int a = 0; a < n->nadj; a++) put(s, lx->adjs[n->adj[a]].en, key_np(i, KN_ADJ0 + a));
    put(s, nn->en[n->pl], kh);
    if (n->pp >= 0) { put(s, prep[n->pp][0], key_np(i, KN_PREP)); en_np(g, s, n->pp_np, CASE_OBJ); }
    if (n->rel >= 0) render_clause(g, s, L_EN, n->rel);
}

static const char *fr_adj(const Lexicon *lx, int a, int fem, int pl) { return lx->adjs[a].fr[fem + 2 * pl]; }

static void fr_np(Disc *g, GrSide *s, int i, int cas) {
    const NP *n = &g->np[i];
    const Lexicon *lx = g->lx;
    int kh = key_np(i, KN_HEAD), kd = key_np(i, KN_DET);
    if (n->kind == NK_PRON) {
        int fem = np_ffem(g, i), pl = np_pl(g, i);
        put(s, pl ? (fem ? "elles" : "ils") : (fem ? "elle" : "il"), kh);
        return;
    }
    if (n->kind == NK_PERS) {
        static const char *const f[3][2] = { { "je", "me" }, { "tu", "te" }, { "nous", "nous" } };
        put(s, f[n->pers][cas == CASE_OBJ], kh);
        return;
    }
    if (n->kind == NK_NAME) { put_keys(s, lx->names[n->name].name, &kh, 1, 1); return; }
    const Noun *nn = &lx->nouns[n->noun];
    int fem = nn->fem, pl = n->pl;
    int pre = -1, post[2] = { -1, -1 }, np_ = 0;
    for (int a = 0; a < n->nadj; a++) {
        if (lx->adjs[n->adj[a]].pre && pre < 0) pre = a;
        else post[np_++] = a;
    }
    const char *first = pre >= 0 ? fr_adj(lx, n->adj[pre], fem, pl) : nn->fr[pl];
    int mon = !pl && (!fem || starts_vowel(first));   /* mon amie */
    char num[8];
    switch (n->det) {
    case DT_THE: put(s, pl ? "les" : fem ? "la" : "le", kd); break;
    case DT_A: put(s, fem ? "une" : "un", kd); break;
    case DT_MY: put(s, pl ? "mes" : mon ? "mon" : "ma", kd); break;
    case DT_YOUR: put(s, pl ? "tes" : mon ? "ton" : "ta", kd); break;
    case DT_OUR: put(s, pl ? "nos" : "notre", kd); break;
    case DT_POSS:
        if (np_pl(g, n->poss_ref)) put(s, pl ? "leurs" : "leur", kd);
        else put(s, pl ? "ses" : mon ? "son" : "sa", kd);
        break;
    case DT_NUM: snprintf(num, sizeof num, "%d", n->num); put_keys(s, num, &kd, 1, 1); break;
    }
    if (pre >= 0) put(s, fr_adj(lx, n->adj[pre], fem, pl), key_np(i, KN_ADJ0 + pre));
    put(s, nn->fr[pl], kh);
    for (int a = 0; a < np_; a++) put(s, fr_adj(lx, n->adj[post[a]], fem, pl), key_np(i, KN_ADJ0 + post[a]));
    if (n->pp >= 0) { put(s, prep[n->pp][1], key_np(i, KN_PREP)); fr_np(g, s, n->pp_np, CASE_OBJ); }
    if (n->rel >= 0) render_clause(g, s, L_FR, n->rel);
    (void)cas;
}

static void vi_np(Disc *g, GrSide *s, int i, int cas) {
    const NP *n = &g->np[i];
    const Lexicon *lx = g->lx;
    int kh = key_np(i, KN_HEAD), kd = key_np(i, KN_DET);
    if (n->kind == NK_PRON) { put(s, vi_pron(g, n->ref), kh); return; }
    if (n->kind == NK_PERS) { put(s, n->pers == 0 ? "tôi" : n->pers == 1 ? "bạn" : "chúng_tôi", kh); return; }
    if (n->kind == NK_NAME) { put_keys(s, lx->names[n->name].name, &kh, 1, 1); return; }
    char num[8];
    if (n->det == DT_NUM) { snprintf(num, sizeof num, "%d", n->num); put_keys(s, num, &kd, 1, 1); }
    else if (n->pl) put(s, "những", n->det == DT_THE ? kd : 0);
    else if (n->det == DT_A) put(s, "một", kd);
    put(s, lx->nouns[n->noun].vi, kh);
    for (int a = 0; a < n->nadj; a++) put(s, lx->adjs[n->adj[a]].vi, key_np(i, KN_ADJ0 + a));
    if (n->det == DT_MY) put(s, "của_tôi", kd);
    if (n->det == DT_YOUR) put(s, "của_bạn", kd);
    if (n->det == DT_OUR) put(s, "của_chúng_tôi", kd);
    if (n->det == DT_POSS) { put(s, "của", kd); put(s, vi_pron(g, n->poss_ref), kd); }
    if (n->pp >= 0) { put(s, prep[n->pp][2], key_np(i, KN_PREP)); vi_np(g, s, n->pp_np, CASE_OBJ); }
    if (n->rel >= 0) render_clause(g, s, L_VI, n->rel);
    (void)cas;
}

static void render_np(Disc *g, GrSide *s, int lang, int i, int cas) {
    if (lang == L_EN) en_np(g, s, i, cas);
    else if (lang == L_FR) fr_np(g, s, i, cas);
    else vi_np(g, s, i, cas);
}

/* Object, recipient or destination after the verb (all languages). */
static void render_rest(Disc *g, GrSide *s, int lang, int c) {
    const Clause *k = &g->cl[c];
    const Verb *vb = &g->lx->verbs[k->verb];
    const char *vp = lang == L_EN ? vb->en_prep : lang == L_FR ? vb->fr_prep : vb->vi_prep;
    int okind = k->obj >= 0 ? g->np[k->obj].kind : -1;
    if (k->st == ST_TR && k->gap != 2 && !(lang == L_FR && (okind == NK_PRON || okind == NK_PERS))) {
        if (vp) put(s, vp, key_cl(c, KC_PREP));
        render_np(g, s, lang, k->obj, CASE_OBJ);
    }
    if (k->st == ST_DITR) {
        render_np(g, s, lang, k->obj, CASE_OBJ);
        if (vp) put(s, vp, key_cl(c, KC_RPREP));
        render_np(g, s, lang, k->rcp, CASE_OBJ);
    }
    if (k->st == ST_DEST) {
        if (vp) put(s, vp, key_cl(c, KC_PREP));
        render_np(g, s, lang, k->obj, CASE_OBJ);
    }
    if (k->pp >= 0) {
        put(s, vprep[k->pp][lang], key_cl(c, KC_APREP));
        render_np(g, s, lang, k->pp_np, CASE_OBJ);
    }
}

/* The grammatical person of subject NP i as an index of fr_pres
 * (je tu il nous vous ils): i 0, you 1, singular 2, we 3, plural 5. */
static int pers_ix(const Disc *g, int i) {
    const NP *n = base_np(g, i);
    if (n->kind == NK_PERS) return n->pers == 0 ? 0 : n->pers == 1 ? 1 : 3;
    return np_pl(g, i) ? 5 : 2;
}

static void en_be(Disc *g, GrSide *s, int c) {
    const Clause *k = &g->cl[c];
    int ix = pers_ix(g, k->subj), one = ix == 0 || ix == 2;
    int ka = key_cl(c, KC_AUX), kn = key_cl(c, KC_NEG);
    static const char *const be[2][2][2] = { { { "is", "isn't" }, { "are", "aren't" } },
                                            { { "was", "wasn't" }, { "were", "weren't" } } };
    const char *b = k->tense == T_FUT ? (k->neg ? "won't" : "will")
                  : ix == 0 && k->tense == T_PRES ? "am" : be[k->tense][!one][k->neg];
    int not = ix == 0 && k->tense == T_PRES && k->neg;     /* "i am not" */
    if (k->q) { put(s, b, ka); render_np(g, s, L_EN, k->subj, CASE_SUBJ); }
    else {
        render_np(g, s, L_EN, k->subj, CASE_SUBJ);
        put(s, b, k->neg && !not ? kn : ka);
        if (not) put(s, "not", kn);
    }
    if (k->tense == T_FUT) put(s, "be", k->neg ? kn : ka);
    put(s, g->lx->adjs[k->adj].en, key_cl(c, KC_ADJ));
}

static void en_clause(Disc *g, GrSide *s, int c) {
    const Clause *k = &g->cl[c];
    const Lexicon *lx = g->lx;
    int pl = pers_ix(g, k->gap == 1 ? k->head : k->subj) != 2;     /* do, not does */
    int kv = key_cl(c, KC_VERB), ka = key_cl(c, KC_AUX), kn = key_cl(c, KC_NEG);
    if (k->gap) put(s, np_human(g, k->head) ? "who" : "that", key_cl(c, KC_REL));
    if (k->st == ST_BE) { en_be(g, s, c); return; }
    const Verb *vb = &lx->verbs[k->verb];
    static const char *const aux[N_T][2][2] = { { { "does", "doesn't" }, { "do", "don't" } },
        { { "did", "didn't" }, { "did", "didn't" } }, { { "will", "won't" }, { "will", "won't" } } };
    if (k->q) {
        put(s, aux[k->tense][pl][0], ka);
        render_np(g, s, L_EN, k->subj, CASE_SUBJ);
        put(s, vb->en_base, kv);
    } else {
        if (k->gap != 1) render_np(g, s, L_EN, k->subj, CASE_SUBJ);
        if (k->neg) { put(s, aux[k->tense][pl][1], kn); put(s, vb->en_base, kv); }
        else if (k->tense == T_FUT) { put(s, "will", ka); put(s, vb->en_base, kv); }
        else put(s, k->tense == T_PAST ? vb->en_past : pl ? vb->en_base : vb->en_3s, kv);
    }
    render_rest(g, s, L_EN, c);
}

/* 1 when a clause's English cannot tell present from past: a verb whose past
 * is its base form (read, cut, put, hit) in a positive statement with a subject
 * that takes the base form ("they read the book": lisent or ont lu?).  "he
 * read" (not "reads"), "they don't read" and "did they read" are clear. */
static int en_tense_unclear(Disc *g) {
    for (int c = 0; c < g->n_cl; c++) {
        const Clause *k = &g->cl[c];
        if (k->st == ST_BE || k->verb < 0 || k->q || k->neg || k->tense == T_FUT) continue;
        const Verb *vb = &g->lx->verbs[k->verb];
        if (strcmp(vb->en_base, vb->en_past)) continue;
        if (pers_ix(g, k->gap == 1 ? k->head : k->subj) != 2) return 1;
    }
    return 0;
}

/* French past participle agreeing in gender and number. */
static void fr_pp(GrSide *s, const char *pp, int fem, int pl, int key) {
    char w[96];
    size_t l = strlen(pp);
    snprintf(w, sizeof w, "%s%s%s", pp, fem ? "e" : "", pl && !(!fem && l && pp[l - 1] == 's') ? "s" : "");
    put(s, w, key);
}

static void fr_clause(Disc *g, GrSide *s, int c) {
    const Clause *k = &g->cl[c];
    const Lexicon *lx = g->lx;
    int sj = k->gap == 1 ? k->head : k->subj;
    int pl = np_pl(g, sj), fem = np_ffem(g, sj), ix = pers_ix(g, sj);
    int kv = key_cl(c, KC_VERB), ka = key_cl(c, KC_AUX), kn = key_cl(c, KC_NEG);
    if (k->gap) put(s, k->gap == 1 ? "qui" : "que", key_cl(c, KC_REL));
    if (k->q) { put(s, "est-ce", ka); put(s, "que", ka); }
    if (k->gap != 1) render_np(g, s, L_FR, k->subj, CASE_SUBJ);
    if (k->neg) put(s, "ne", kn);
    int okind = k->st == ST_TR && k->gap != 2 ? g->np[k->obj].kind : -1;
    int clitic = okind == NK_PRON || okind == NK_PERS ? k->obj : -1;
    if (okind == NK_PERS) fr_np(g, s, clitic, CASE_OBJ);        /* me te nous */
    else if (clitic >= 0) put(s, np_pl(g, clitic) ? "les" : np_ffem(g, clitic) ? "la" : "le", key_np(clitic, KN_HEAD));
    int kf = k->q ? ka : k->neg ? kn : 0;
    if (k->st == ST_BE) {
        static const char *const be[N_T][6] = { { "suis", "es", "est", "sommes", "êtes", "sont" },
            { "étais", "étais", "était", "étions", "étiez", "étaient" },
            { "serai", "seras", "sera", "serons", "serez", "seront" } };
        put2(s, be[k->tense][ix], ka, kn);
        if (k->neg) put(s, "pas", kn);
        put(s, fr_adj(lx, k->adj, fem, pl), key_cl(c, KC_ADJ));
        return;
    }
    const Verb *vb = &lx->verbs[k->verb];
    static const char *const fut[6] = { "ai", "as", "a", "ons", "ez", "ont" };
    static const char *const etre[6] = { "suis", "es", "est", "sommes", "êtes", "sont" };
    static const char *const avoir[6] = { "ai", "as", "a", "avons", "avez", "ont" };
    if (k->tense == T_PRES) put(s, vb->fr_pres[ix], kv);
    else if (k->tense == T_FUT) {
        char w[96];
        snprintf(w, sizeof w, "%.*s%s", (int)strlen(vb->fr_fut) - 1, vb->fr_fut, fut[ix]);
        put2(s, w, kv, ka);
    } else put2(s, vb->fr_etre ? etre[ix] : avoir[ix], kf ? kf : kv, 0);
    if (k->neg) put(s, "pas", kn);
    if (k->tense == T_PAST) {
        int agr = vb->fr_etre ? sj : clitic >= 0 ? clitic : k->gap == 2 ? k->head : -1;
        fr_pp(s, vb->fr_pp, agr >= 0 && np_ffem(g, agr), agr >= 0 && np_pl(g, agr), kv);
    }
    render_rest(g, s, L_FR, c);
}

static void vi_clause(Disc *g, GrSide *s, int c) {
    const Clause *k = &g->cl[c];
    const Lexicon *lx = g->lx;
    int kv = key_cl(c, KC_VERB), ka = key_cl(c, KC_AUX), kn = key_cl(c, KC_NEG);
    if (k->gap) put(s, "mà", key_cl(c, KC_REL));
    if (k->gap != 1) render_np(g, s, L_VI, k->subj, CASE_SUBJ);
    const char *end = NULL;
    if (k->st == ST_BE) {
        if (k->tense == T_FUT) put(s, "sẽ", k->neg ? kn : ka);
        else if (k->q) put(s, "có", ka);
        if (k->neg) put(s, "không", kn);
        put(s, lx->adjs[k->adj].vi, key_cl(c, KC_ADJ));
        if (k->q) put(s, "không", ka);
        return;
    }
    if (k->tense == T_PAST) put(s, "đã", k->q ? ka : k->neg ? kn : kv);
    if (k->tense == T_FUT) put(s, "sẽ", k->neg ? kn : ka);
    if (k->tense == T_PRES && k->q) put(s, "có", ka);
    if (k->neg) put(s, "không", kn);
    if (k->q) end = k->tense == T_PAST ? "chưa" : "không";
    put(s, lx->verbs[k->verb].vi, kv);
    render_rest(g, s, L_VI, c);
    if (end) put(s, end, ka);
}

static void render_clause(Disc *g, GrSide *s, int lang, int c) {
    if (lang == L_EN) en_clause(g, s, c);
    else if (lang == L_FR) fr_clause(g, s, c);
    else vi_clause(g, s, c);
}

/* The whole input: clauses joined as the discourse type says. */
static void render_disc(Disc *g, GrSide *s, int lang) {
    int d = g->d;
    s->n = 0;
    const char *end0 = g->cl[0].q ? "?" : ".";
    if (d == D_ONE || d == D_RELS || d == D_RELO) {
        render_clause(g, s, lang, 0);
        put(s, end0, key_cl(0, KC_PUNCT));
    } else if (d >= D_AND && d <= D_ALTHOUGH) {
        render_clause(g, s, lang, 0);
        put(s, conj_word[d - D_AND][lang], key_cl(1, KC_CONJ));
        render_clause(g, s, lang, 1);
        put(s, ".", key_cl(0, KC_PUNCT));
    } else if (d >= D_F_BECAUSE && d <= D_F_ALTHOUGH) {
        put(s, conj_word[d - D_F_BECAUSE + 3][lang], key_cl(1, KC_CONJ));
        render_clause(g, s, lang, 1);
        put(s, ",", key_cl(1, KC_COMMA));
        render_clause(g, s, lang, 0);
        put(s, ".", key_cl(0, KC_PUNCT));
    } else {
        for (int c = 0; c < g->n_cl; c++) {
            render_clause(g, s, lang, c);
            put(s, g->cl[c].q ? "?" : ".", key_cl(c, KC_PUNCT));
        }
    }
}

/* French orthography: elision (le la ne que de → l' n' qu' d' before a vowel
 * or h; si → s' before il/ils), then à le → au, à les → aux, de le → du,
 * de les → des (the contracted token keeps both tokens' keys). */
static void fr_orthography(GrSide *s) {
    static const char *const el[][2] = { { "le", "l'" }, { "la", "l'" }, { "ne", "n'" }, { "que", "qu'" },
                                         { "de", "d'" }, { "je", "j'" }, { "me", "m'" }, { "te", "t'" } };
    for (int i = 0; i + 1 < s->n; i++) {
        for (size_t k = 0; k < sizeof el / sizeof *el; k++)
            if (!strcmp(s->t[i].s, el[k][0]) && starts_vowel(s->t[i + 1].s) && !s->t[i + 1].copy) {
                snprintf(s->t[i].s, sizeof s->t[i].s, "%s", el[k][1]);
                break;
            }
        if (!strcmp(s->t[i].s, "si") && (!strcmp(s->t[i + 1].s, "il") || !strcmp(s->t[i + 1].s, "ils")))
            snprintf(s->t[i].s, sizeof s->t[i].s, "s'");
    }
    for (int i = 0; i + 1 < s->n; i++) {
        const char *c = lexicon_fr_contraction(s->t[i].s, s->t[i + 1].s);
        if (!c) continue;
        snprintf(s->t[i].s, sizeof s->t[i].s, "%s", c);
        GrTok *a = &s->t[i];
        const GrTok *b = &s->t[i + 1];
        for (int q = 0; q < b->n_keys && a->n_keys < GR_MAX_KEYS; q++) a->key[a->n_keys++] = b->key[q];
        memmove(&s->t[i + 1], &s->t[i + 2], (size_t)(s->n - i - 2) * sizeof *s->t);
        s->n--;
    }
}

/* ------------------------------------------------------------ discourse -- */

static void clause_mood(Clause *k, int tense, int m) {
    memset(k, 0, sizeof *k);
    k->tense = tense;
    k->neg = m == M_NEG;
    k->q = m == M_Q;
    k->head = -1;
    k->pp = k->pp_np = -1;
}

/* Candidates for an antecedent in clause c: nouns and people's names. */
static int pick_antecedent(Disc *g, int c) {
    int cand[3], n = 0;
    const Clause *k = &g->cl[c];
    int roles[3] = { k->subj, k->obj, k->rcp };
    for (int r = 0; r < 3; r++) {
        int i = roles[r];
        if (i < 0 || g->np[i].kind == NK_PRON || g->np[i].kind == NK_PERS || np_city(g, i)) continue;
        cand[n++] = i;
    }
    return n ? cand[below(g, n)] : -1;
}

/* Clause c with a pronoun for NP ante: subject, object or possessive. */
static int make_pron_clause(Disc *g, int c, int st, int ante) {
    int role = below(g, 100);
    if (role >= 65 && role < 85 && st == ST_TR) return make_clause(g, c, st, -1, ante);
    if (role >= 85) {
        if (make_clause(g, c, st, -1, -1)) return -1;
        NP *sj = &g->np[g->cl[c].subj];
        if (sj->kind != NK_NOUN || sj->det == DT_NUM) return -1;
        sj->det = DT_POSS;
        sj->poss_ref = ante;
        return 0;
    }
    int p = make_pron(g, ante);
    return p < 0 ? -1 : make_clause(g, c, st, p, -1);
}

static int gen_disc(Disc *g, int f) {
    int st, t, m, d;
    frame_parts(f, &st, &t, &m, &d);
    g->d = d;
    g->n_np = 0;
    g->n_cl = 1;
    int main_c = d == D_TWO ? 1 : 0;
    int ost = below(g, N_ST), ot = below(g, N_T), om = below(g, 100) < 15 ? M_NEG : M_POS;
    if ((d == D_WHEN || d == D_WHILE || d == D_F_WHEN || d == D_F_WHILE) && ot == T_FUT) ot = below(g, 2);  /* no "when it will" */
    if (d == D_ONE || d == D_RELS || d == D_RELO) {
        clause_mood(&g->cl[0], t, m);
        if (make_clause(g, 0, st, -1, -1)) return -1;
        if (d != D_ONE) {
            int h = g->cl[0].subj;
            if (g->np[h].kind != NK_NOUN) return -1;
            g->np[h].pp = -1;
            return make_rel(g, h, d == D_RELS ? 1 : 2);
        }
        const Clause *k = &g->cl[0];
        if (k->obj >= 0 && g->np[k->obj].kind == NK_NOUN && g->np[k->subj].kind != NK_PRON && g->np[k->subj].kind != NK_PERS &&
            !np_city(g, k->subj) && g->np[k->obj].det != DT_NUM && below(g, 100) < 20) {
            g->np[k->obj].det = DT_POSS;
            g->np[k->obj].poss_ref = k->subj;
        } else if (k->pp >= 0 && g->np[k->subj].kind != NK_PERS && !np_city(g, k->subj) && below(g, 100) < 30) {
            g->np[k->pp_np].det = DT_POSS;          /* "she walked with her dog" */
            g->np[k->pp_np].poss_ref = k->subj;
        }
        return 0;
    }
    g->n_cl = 2;
    clause_mood(&g->cl[0], main_c == 0 ? t : ot, main_c == 0 ? m : om);
    clause_mood(&g->cl[1], main_c == 1 ? t : ot, main_c == 1 ? m : om);
    if (make_clause(g, 0, main_c == 0 ? st : ost, -1, -1)) return -1;
    int ante = pick_antecedent(g, 0);
    if (ante < 0 || make_pron_clause(g, 1, main_c == 1 ? st : ost, ante)) return -1;
    if (d != D_TWO || below(g, 100) >= 30) return 0;
    /* a third sentence, its pronoun bound to a noun of the first or the second */
    g->n_cl = 3;
    clause_mood(&g->cl[2], below(g, N_T), below(g, 100) < 15 ? M_NEG : M_POS);
    ante = pick_antecedent(g, below(g, 2));
    return ante < 0 ? -1 : make_pron_clause(g, 2, below(g, N_ST), ante);
}

int grammar_generate(const Lexicon *lx, int f, uint64_t *rng, unsigned *uses, GrPair *out, char *err, size_t errlen) {
    Disc g;
    memset(&g, 0, sizeof g);
    g.lx = lx;
    g.rng = rng;
    g.uses = uses;
    if (lex_class_bit(lx, "person", &g.person) || lex_class_bit(lx, "animal", &g.animal) ||
        lex_class_bit(lx, "dest", &g.dest) || lex_class_bit(lx, "place", &g.place))
        return errmsg_set(err, errlen, "the lexicon needs the noun classes person, animal, place and dest");
    for (int attempt = 0; attempt < 2000; attempt++) {
        if (gen_disc(&g, f) || !pronouns_unique(&g) || en_tense_unclear(&g)) continue;
        memset(out, 0, sizeof *out);
        for (int l = 0; l < N_LANG; l++) render_disc(&g, &out->side[l], l);
        fr_orthography(&out->side[L_FR]);
        int too_long = 0;
        for (int l = 0; l < N_LANG; l++) too_long |= out->side[l].n >= GR_MAX_TOK;
        if (too_long) continue;
        for (int p = 0; p < g.n_np && out->n_coref < GR_MAX_COREF; p++) {
            if (g.np[p].kind == NK_PRON) {
                out->coref_key[out->n_coref][0] = key_np(p, KN_HEAD);
                out->coref_key[out->n_coref++][1] = key_np(g.np[p].ref, KN_HEAD);
            } else if (g.np[p].det == DT_POSS) {
                out->coref_key[out->n_coref][0] = key_np(p, KN_DET);
                out->coref_key[out->n_coref++][1] = key_np(g.np[p].poss_ref, KN_HEAD);
            }
            if (g.np[p].kind == NK_NAME) out->has_name = 1;
        }
        out->frame = f;
        for (int p = 0; uses && p < g.n_np; p++)
            if (g.np[p].kind == NK_NOUN) uses[g.np[p].noun]++;
        return 0;
    }
    char name[64];
    grammar_frame_name(f, name, sizeof name);
    return errmsg_set(err, errlen, "grammar: found no sentence for frame %s (is the lexicon too small?)", name);
}
