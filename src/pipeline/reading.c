/* reading.c — sentences read by any model, the one sequence of calls `run`
 * makes (reading.h). */
#include "pipeline/reading.h"
#include "core/errmsg.h"
#include "pipeline/links.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- the bundled translator ---- */

/* The words outside training (each prepared sentence), then those of --target. */
static void warn_words(const Reading *rd) {
    int n = rd->n;
    for (int i = 0; i < n && rd->look[i].reached >= LOOK_PREPARED; i++) {
        char which[32] = "";
        if (n > 1) snprintf(which, sizeof which, "sentence %d: ", i + 1);
        if (rd->look[i].world.n_unknown > 0)   /* names and numbers are copied, and only listed */
            rd->spec->warn("%swords the model was not trained on, read as <unk>: %s", which, rd->look[i].world.unknown);
    }
    for (int i = 0; i < n && rd->look[i].reached >= LOOK_TRANSLATED; i++) {
        const Sentence *s = &rd->look[i].s;
        if (s->n_target_unknown > 0)
            rd->spec->warn("%d word(s) of --target not in the vocabulary, read as <unk>: %s", s->n_target_unknown,
                           s->target_unknown);
    }
}

/* The look's error for sentence i (why, the message look_sentences gave), said as run's options name it. */
static int look_error(const Reading *rd, int i, const char *why, char *err, size_t errlen) {
    const Look *L = &rd->look[i];
    if (L->reached == LOOK_NONE && rd->n > 1) return errmsg_set(err, errlen, "sentence %d: %s", i + 1, why);
    if (L->reached == LOOK_PREPARED) return errmsg_set(err, errlen, "%s%s", rd->spec->target ? "--target: " : "", why);
    return errmsg_set(err, errlen, "%s", why);
}

/* Every sentence through the sentence pipeline (look.h): 0; -1 with err after
 * a failure before the trace; 1 when a sentence failed later (its error is
 * kept in rd->why for reading_sentence). */
static int own_begin(Reading *rd, char *err, size_t errlen) {
    const ReadSpec *a = rd->spec;
    ModelFile *mf = &rd->net->mf;
    model_file_coref_head(mf, &rd->coref);
    if (a->no_language_mask) model_file_no_language_mask(mf);
    if (a->window)
        return errmsg_set(err, errlen, "--window draws part of a long text through a GPT-2, BERT or Llama-family "
                          "model; the translator's sentences are drawn whole");
    if (!(rd->net->caps & NET_TRANSLATES))
        return errmsg_set(err, errlen, "run needs an encoder–decoder model; %s is %s", mf->path,
                          model_arch_name(mf->m.config.arch));
    if (a->ablate && net_ablate(rd->net, a->ablate, rd->why, sizeof rd->why) != 0)
        return errmsg_set(err, errlen, "--ablate %s", rd->why);
    if (a->focus && links_check_focus(a->focus, &mf->m.config, err, errlen) != 0) return -1;   /* before any sentence runs */
    unsigned want = LOOK_WORLD | LOOK_TRACE | LOOK_STEPS | LOOK_UNSURE | LOOK_FINITE | LOOK_LINKS | LOOK_AGGREGATES |
                    LOOK_RECORD | (a->importance ? LOOK_IMPORTANCE : 0);
    LookSpec spec = {.want = want, .tag = a->to && !strcmp(a->to, "vi") ? VOCAB_2VI : VOCAB_2FR, .target = a->target,
                     .batch = a->batch, .query = a->query, .focus = a->focus, .coref = &rd->coref};
    double t0 = now_ms();
    int rc = look_sentences(rd->look, mf, rd->texts, rd->n, &spec, rd->why, sizeof rd->why);
    rd->ms_model += now_ms() - t0;
    warn_words(rd);
    if (rc == 0) return 0;
    for (int i = 0; i < rd->n; i++)
        if (rd->look[i].failed && rd->look[i].reached < LOOK_TRANSLATED) return look_error(rd, i, rd->why, err, errlen);
    return 1;
}

/* --attribution: the logit of the word the decoder writes (the pronoun's
 * translation, else the first word) split into its parts, in the trace.
 * 0, or -1 with err. */
static int own_attribution(Reading *rd, Look *L, char *err, size_t errlen) {
    attribution_free(&rd->attr);
    rd->has_attr = 0;
    double t0 = now_ms();
    int rc = attribution_compute_model(&rd->attr, &rd->net->mf.m, &L->s, -1, rd->why, sizeof rd->why);
    rd->ms_model += now_ms() - t0;
    if (rc) return errmsg_set(err, errlen, "%s", rd->why);
    rd->has_attr = 1;
    return trace_take_section(&L->t, "attribution", attribution_json(&rd->attr)) ? errmsg_set(err, errlen, "out of memory")
                                                                                : 0;
}

static int own_sentence(Reading *rd, int i, char *err, size_t errlen) {
    Look *L = &rd->look[i];
    if (L->failed) return look_error(rd, i, rd->why, err, errlen);
    if (rd->spec->attribution && own_attribution(rd, L, err, errlen)) return -1;
    if (!rd->spec->head_roles) return 0;
    double t0 = now_ms();
    int rc = head_roles_measure(&rd->roles, rd->net, &L->t, 0, rd->spec->probe_seed, rd->spec->probe_length,
                                      rd->why, sizeof rd->why);
    rd->ms_model += now_ms() - t0;
    if (rc) return errmsg_set(err, errlen, "--head-roles: %s", rd->why);
    rd->has_roles = 1;
    return 0;
}

/* The summary's lines on names copied through, on a sentence outside training
 * and on the words the model hesitated over. */
static void print_world(const Look *L, int given, const Model *m, FILE *out) {
    const WorldCheck *w = &L->world;
    const Sentence *s = &L->s;
    char missing[512], copy[600];
    world_names_left_out(w, s, decode_lang_mask(m, VOCAB_2FR), decode_lang_mask(m, VOCAB_2VI), m->config.vocab_size,
                         missing, sizeof missing);
    if (!given && *missing)   /* a name read as a word the translation dropped: said, as an unknown word is */
        fprintf(out, "  name left out of the translation: %s (the model reads it as one of its words)\n", missing);
    if (w->n_names) {
        world_missing_names(w, s, missing, sizeof missing);
        fprintf(out, "  copied through: %s%s%s%s\n", w->names, *missing ? "   (not in the translation: " : "", missing,
               *missing ? ")" : "");
    }
    for (int i = 0; i < w->n_unknown && i < 64; i++) {   /* never passed off as a word of the target language */
        int k = w->unknown_pos[i], copied = !given && sentence_copied(s, k) && s->shown && s->shown[k];
        fprintf(out, "  unknown word: %s (%s)%s%s%s\n", s->raw[k],
               w->unknown_in_vocab[i] ? "the model never read it in training" : "not in the model's vocabulary",
               given ? "" : copied ? "; shown as " : "; left out of the translation", copied ? s->shown[k] : "",
               "");
    }
    pictures_copy_note(s, copy, sizeof copy);
    if (*copy) fprintf(out, "  %s (decoder layer %d cross-attention, mean of its heads)\n", copy, s->copy_layer);
    if (w->outside[0]) fprintf(out, "  %s\n", w->outside);
    if (!given && L->n_unsure > 0)
        fprintf(out, "  unsure: %s (the model's probability of the word it wrote, below %.1f)\n", L->unsure, WORLD_UNSURE_P);
}

/* Prints each pronoun's (or the --query token's) link — the head the lines view
 * draws — and warns when the query is absent. */
static void print_links(const Reading *rd, const Look *L, FILE *out) {
    const ReadSpec *a = rd->spec;
    const CorefHead *c = &rd->coref;
    const Trace *t = &L->t;
    for (int k = 0; k < L->n_links && !a->quiet; k++) {
        const LinksView v = L->links[k].view;
        const HeadLink B = L->links[k].strongest;
        int q = L->links[k].q;
        const char *w = L->s.words.tok[q];
        const TraceMap *m = &t->maps[v.link.map];
        char why[256], whyvi[256];
        links_why(&v, c, why, sizeof why, whyvi, sizeof whyvi);
        const char *ko = model_ablated(&rd->net->mf.m, MODEL_ATTN_ENC_SELF, m->layer, v.link.head) && !strcmp(m->stack, "encoder")
                              ? "; KNOCKED OUT: its output is not used" : "";
        if (v.none_fits)
            fprintf(out, "  %s (position %d): no antecedent in the sentence — no word of it can be what “%s” refers to "
                   "(by the corpus lexicon's persons, genders and numbers); %s head %d (%s) still puts %.2f on “%s”, "
                   "which says where the head looks, not what the pronoun means%s\n", w, q, w, m->id, v.link.head, why,
                   (double)v.top_weight, m->keys[v.top_key], ko);
        else {
            char rule[600], rulevi[600], brief[160];
            links_rule_note(&v, t, q, w, rule, sizeof rule, rulevi, sizeof rulevi, brief, sizeof brief);
            fprintf(out, "  %s (position %d) → %s (position %d): %s head %d, weight %.2f%s — %s%s%s%s\n", w, q,
                   m->keys[v.link.key], v.link.key, m->id, v.link.head, (double)v.link.weight,
                   v.weak ? " (weak link: below 0.5)" : "", why, ko, *rule ? "; not the word the rule expects: " : "", rule);
        }
        if (v.why != LINKS_BY_STRENGTH && B.map >= 0 && (B.map != v.link.map || B.head != v.link.head))
            fprintf(out, "      strongest link of any encoder head: “%s” (%s head %d, weight %.2f)\n",
                   t->maps[B.map].keys[B.key], t->maps[B.map].id, B.head, (double)B.weight);
    }
    if (!L->n_links && a->query && !a->quiet) a->warn("--query '%s' is not a token of \"%s\"", a->query, L->s.text);
}

/* Prints the heads whose knock-out costs the most (run --importance). */
static void print_importance(const Importance *im, const Sentence *s, FILE *out) {
    int cap = 3 * im->Lmax * im->H;
    ImportanceRank *rows = malloc((size_t)(cap > 0 ? cap : 1) * sizeof *rows);
    if (!rows) return;
    int n = importance_rank(im, rows, cap);
    char what[512];
    importance_what(im, what, sizeof what);
    if (im->positions)
        fprintf(out, "  knock-outs: Δ log p of %s when one head is knocked out; the 5 that cost most:\n", what);
    else if (im->pronoun_t >= 0)
        fprintf(out, "  knock-outs: Δ log p of “%s” (translating “%s”) when one head is knocked out; the 5 that cost most:\n",
               im->targets[im->pronoun_t], s->words.tok[im->pronoun_q]);
    else
        fprintf(out, "  knock-outs: mean Δ log p of the translation's tokens when one head is knocked out; the 5 that cost most:\n");
    for (int i = 0; i < n && i < 5; i++) {
        char map[64];
        model_attn_map_name(rows[i].kind, rows[i].layer, map, sizeof map);
        fprintf(out, "      %-22s head %d  %+.3f  (p × %.3g)\n", map, rows[i].head, (double)rows[i].summary,
               exp((double)rows[i].summary));
    }
    free(rows);
}

/* What the look of a sentence found, as far as it came: the translation and
 * the world, the links, the knock-outs. */
static void own_print(const Reading *rd, const Look *L, FILE *out) {
    const ReadSpec *a = rd->spec;
    if (L->reached < LOOK_TRACED) return;
    if (!a->quiet) {
        fprintf(out, "%s\n", L->s.text);
        fprintf(out, "  → %s: %s%s\n", a->to, L->s.translation, a->target ? "   (given with --target)" : "");
        if (L->s.stop_warning[0]) fprintf(out, "  warning: %s\n", L->s.stop_warning);
        print_world(L, a->target != NULL, &rd->net->mf.m, out);
        if (rd->net->ablated[0])
            fprintf(out, "  knocked out: %s (each head's output replaced by zeros before W_O)\n", rd->net->ablated);
    }
    if (L->reached < LOOK_LINKED) return;
    print_links(rd, L, out);
    if (L->reached >= LOOK_EXPLAINED && a->importance && !a->quiet) print_importance(&L->imp, &L->s, out);
    if (rd->has_attr && !a->quiet) attribution_print(&rd->attr, out);
}

static int own_pictures(Reading *rd, int i, PictureSpec *ps, PictureReport *rep, char *err, size_t errlen) {
    const ReadSpec *a = rd->spec;
    Look *L = &rd->look[i];
    ps->model_path = rd->net->mf.path;
    ps->query = a->query;
    ps->focus_map = L->focus_map;
    ps->focus_head = L->focus_head;
    ps->focus_given = a->focus != NULL;
    ps->links = L->links;
    ps->n_links = L->n_links;
    ps->coref = rd->coref;
    ps->ablated = rd->net->ablated;
    ps->metadata = rd->net->mf.metadata;
    ps->importance = a->importance ? &L->imp : NULL;
    ps->attribution = rd->has_attr ? &rd->attr : NULL;
    ps->rollout = L->rollout;
    ps->outside = L->world.outside;
    if (ps->lines_top < 0) ps->lines_top = 0;
    return pictures_show_sentence(ps, &L->s, &L->t, rep, err, errlen);
}

/* ---- a foreign model: a GPT-2, BERT or Llama-family folder, a llama2.c file ---- */

static void print_candidates(const char *what, const HfCandidate *c, FILE *out) {
    fprintf(out, "  %s", what);
    for (int i = 0; i < HF_RUN_TOP; i++) fprintf(out, "%s “%s” %.3f", i ? "," : "", c[i].text, (double)c[i].prob);
    fprintf(out, "\n");
}

/* What the model says: GPT-2's next token, BERT's [MASK] fillings. */
/* The text as typed, a long one cut after about 200 bytes at a space (whole
 * UTF-8 characters) with how long it is. */
static void print_text(const char *text, FILE *out) {
    size_t n = strlen(text), cut = 200;
    if (n <= cut + 40) { fprintf(out, "%s\n", text); return; }
    while (cut > 100 && text[cut] != ' ') cut--;
    while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80) cut--;
    fprintf(out, "%.*s … (%zu characters)\n", (int)cut, text, n);
}

static void print_hf_predictions(const HfRun *h, const HfFile *f, void (*warn)(const char *, ...), FILE *out) {
    print_text(h->s.text, out);
    fprintf(out, "  tokens (%d):", h->in.n);
    for (int t = 0; t < h->in.n && t < 40; t++) fprintf(out, " %s", h->in.tokens[t]);
    fprintf(out, "%s\n", h->in.n > 40 ? " …" : "");
    if (hf_file_causal(f)) { print_candidates("next token:", h->next, out); return; }
    if (!h->has_predictions) {
        if (h->in.n_masks > 0) warn("%s has no masked-LM head (cls.predictions.*): [MASK] is not filled", f->dir);
        return;
    }
    if (h->n_masks == 0) fprintf(out, "  (no [MASK] in the sentence: write [MASK] where BERT should guess a word)\n");
    for (int m = 0; m < h->n_masks; m++) {
        char what[64];
        snprintf(what, sizeof what, "[MASK] at %d →", h->mask_pos[m]);
        print_candidates(what, h->fill[m], out);
    }
}

/* The Llama family: each pronoun's (or the --query token's) link as the
 * lines view draws it (rd->links), every head that puts at least
 * LINKS_HEADS_MIN of its weight on the same word, and the strongest link of
 * any head. */
static void print_hf_links(const Reading *rd, FILE *out) {
    const HfRun *h = &rd->hf;
    /* positions count words, or pieces (--pieces, a long text: its kept rows) */
    const Trace *t = rd->has_words ? &rd->wt : h->is_long ? &h->lt.rows : &h->t;
    int total = 0, n_real = rd->has_words ? rd->words.n_real : h->in.n_real;
    for (int i = 0; i < t->n_maps; i++) total += t->maps[i].n_heads;
    if (rd->has_words && rd->n_links) {
        fprintf(out, "  words (%d):", rd->words.n_real);
        for (int i = 0; i < rd->words.n_real && i < 40; i++) fprintf(out, " %s", rd->words.labels[i]);
        fprintf(out, "%s\n  links in words (%s; --pieces shows the tokens):\n", rd->words.n_real > 40 ? " …" : "",
                WORDS_RULE);
    }
    for (int k = 0, shown = 0; k < rd->n_links && shown < 6; k++) {
        const LinksView v = rd->links[k].view;
        int q = rd->links[k].q;
        const char *w = rd->has_words ? rd->words.labels[q] : h->in.tokens[q];
        if (q >= n_real) break;
        shown++;
        if (v.why == LINKS_BY_STRENGTH) {   /* no word that can be an antecedent drew a link */
            fprintf(out, "  %s (position %d): no earlier word that can be an antecedent\n", w, q);
            continue;
        }
        const TraceMap *m = &t->maps[v.link.map];
        fprintf(out, "  %s (position %d) → %s (position %d): %s head %d, weight %.2f%s%s\n", w, q, m->keys[v.link.key],
                v.link.key, m->id, v.link.head, (double)v.link.weight, v.weak ? " (weak link: below 0.5)" : "",
                v.why == LINKS_BY_FOCUS ? " (the --focus head)" : "");
        HeadLink all[64];
        int n = v.why == LINKS_BY_FOCUS ? 0 : links_content_heads(t, q, v.link.key, LINKS_HEADS_MIN, all, 64);
        if (v.why != LINKS_BY_FOCUS) {   /* the --focus head is the user's choice: no census of the others */
            fprintf(out, "      heads putting at least %.1f of its weight on “%s” (%d of %d):", (double)LINKS_HEADS_MIN,
                    m->keys[v.link.key], n, total);
            for (int i = 0; i < n && i < 64; i++)
                fprintf(out, "%s %s head %d %.2f", i ? "," : "", t->maps[all[i].map].id, all[i].head, (double)all[i].weight);
            fprintf(out, "%s\n", n > 64 ? ", …" : "");
        }
        HeadLink B = rd->links[k].strongest;
        if (B.map >= 0 && B.key != v.link.key)
            fprintf(out, "      strongest link of any head: “%s” (position %d; %s head %d, weight %.2f)\n",
                    t->maps[B.map].keys[B.key], B.key, t->maps[B.map].id, B.head, (double)B.weight);
    }
}

/* The refusals, then a --batch's longest sentence.  0, or -1 with err. */
static int family_begin(Reading *rd, char *err, size_t errlen) {
    const ReadSpec *a = rd->spec;
    if (a->ablate && net_ablate(rd->net, a->ablate, rd->why, sizeof rd->why) != 0)
        return errmsg_set(err, errlen, "--ablate %s", rd->why);
    if (a->attribution && !hf_file_causal(&rd->net->fam))
        return errmsg_set(err, errlen, "--attribution splits a decoder's next-token logit (GPT-2, the Llama family, "
                          "llama2.c); BERT fills [MASK]s through norms after each residual add: --importance measures it");
    if (a->target || (a->to && strcmp(a->to, "fr")))
        return errmsg_set(err, errlen, "--target and --to are for attnviz's translation model, not a GPT-2, BERT or "
                          "Llama-family model");
    for (int i = 0; a->batch && i < rd->n; i++) {   /* a batch is padded to its longest */
        HfInput in;
        if (hf_file_encode(&rd->net->fam, rd->texts[i], &in, rd->why, sizeof rd->why))
            return errmsg_set(err, errlen, "sentence %d: %s", i + 1, rd->why);
        if (in.n > rd->pad_to) rd->pad_to = in.n;
        hf_input_free(&in);
    }
    return 0;
}

/* --importance: every head knocked out alone, the model's predictions (the
 * next token, each [MASK]'s filling) scored again; in the trace as the
 * translator's are.  0, or -1 with err. */
static int family_importance(Reading *rd, char *err, size_t errlen) {
    HfRun *h = &rd->hf;
    int pos[HF_RUN_MAX_MASKS], ids[HF_RUN_MAX_MASKS], n = 0;
    const char *labels[HF_RUN_MAX_MASKS];
    if (hf_file_causal(&rd->net->fam)) {
        pos[0] = h->in.n_real - 1, ids[0] = h->next[0].id, labels[0] = h->next[0].text;
        n = 1;
    }
    for (int m = 0; m < h->n_masks; m++, n++)
        pos[n] = h->mask_pos[m], ids[n] = h->fill[m][0].id, labels[n] = h->fill[m][0].text;
    if (n == 0)
        return errmsg_set(err, errlen, "--importance: nothing predicted to score (write [MASK] where BERT should guess "
                          "a word; the checkpoint needs its masked-LM head)");
    if (importance_compute_stack(&rd->imp, &rd->net->fam, &h->in, pos, ids, labels, n, rd->net->knocked, rd->why,
                                 sizeof rd->why))
        return errmsg_set(err, errlen, "--importance: %s", rd->why);
    rd->has_imp = 1;
    return trace_take_section(&h->t, "importance", importance_json(&rd->imp)) ? errmsg_set(err, errlen, "out of memory")
                                                                             : 0;
}

/* --attribution: the predicted next token's logit split into its parts, in
 * the trace.  0, or -1 with err. */
static int family_attribution(Reading *rd, char *err, size_t errlen) {
    HfRun *h = &rd->hf;
    if (attribution_compute(&rd->attr, &rd->net->fam, &h->in, h->in.n_real - 1, h->next[0].id, rd->why, sizeof rd->why))
        return errmsg_set(err, errlen, "%s", rd->why);
    rd->has_attr = 1;
    return trace_take_section(&h->t, "attribution", attribution_json(&rd->attr)) ? errmsg_set(err, errlen, "out of memory")
                                                                                : 0;
}

/* The sentence's pieces grouped into words and its maps merged into them,
 * unless --pieces or no word has more than one piece.  0, or -1 with err. */
static int family_words(Reading *rd, char *err, size_t errlen) {
    words_free(&rd->words);
    trace_free(&rd->wt);
    rd->has_words = 0;
    if (rd->spec->pieces) return 0;
    if (words_of_input(&rd->words, &rd->net->fam, &rd->hf.in, rd->hf.s.text, err, errlen)) return -1;
    if (!words_merged(&rd->words)) return 0;
    if (rd->hf.is_long ? words_merge_rows(&rd->words, &rd->hf.lt.rows, &rd->wt, err, errlen)   /* its kept rows */
                       : words_merge_trace(&rd->words, &rd->hf.t, &rd->wt, err, errlen))
        return -1;
    rd->has_words = 1;
    return 0;
}

static int family_sentence(Reading *rd, int i, const char *dir, char *err, size_t errlen) {
    const ReadSpec *a = rd->spec;
    HfFile *f = &rd->net->fam;
    hf_run_free(&rd->hf);
    importance_free(&rd->imp);
    attribution_free(&rd->attr);
    rd->hf_ready = rd->has_imp = rd->has_attr = 0;
    HfRunSpec spec = {.text = rd->texts[i], .trace = a->trace, .no_pictures = a->no_pictures, .pad_to = rd->pad_to,
                      .stream_dir = a->trace_format == PICTURES_TRACE_JSON ? NULL : dir, .trace_f16 = a->trace_f16,
                      .query = a->query, .long_from = a->long_from, .window = a->window, .win_from = a->win_from,
                      .win_to = a->win_to};
    double t0 = now_ms();
    if (hf_run_forward(&rd->hf, f, &spec, err, errlen)) return -1;
    if (a->attribution && family_attribution(rd, err, errlen)) return -1;
    if (a->importance && family_importance(rd, err, errlen)) return -1;
    if (a->head_roles) {   /* after the predictions: the probe is a pass of its own */
        if (head_roles_measure(&rd->roles, rd->net, &rd->hf.t, rd->hf.in.n_real, a->probe_seed, a->probe_length, rd->why,
                                  sizeof rd->why))
            return errmsg_set(err, errlen, "--head-roles: %s", rd->why);
        rd->has_roles = 1;
    }
    rd->ms_model += now_ms() - t0;
    if (rd->net->ablated[0]) {   /* the trace says which heads were knocked out, as the translator's does */
        char json[4096];
        net_ablated_json(rd->net, json, sizeof json);
        if (trace_set_section(&rd->hf.t, "ablated", json)) return errmsg_set(err, errlen, "out of memory");
    }
    static const CorefHead none = {.layer = -1, .head = -1, .accuracy = -1};
    LinksAsk ask = {.query = a->query, .coref = &none, .focus_map = -1, .prefer_content = 1};
    rd->focus_map = -1;
    rd->focus_head = 0;
    if (a->focus && links_parse_focus(a->focus, &rd->hf.t, &rd->focus_map, &rd->focus_head, err, errlen)) return -1;
    if (a->focus) ask.focus_map = rd->focus_map, ask.focus_head = rd->focus_head;
    if (family_words(rd, err, errlen)) return -1;
    free(rd->links);
    if (rd->has_words)
        rd->n_links = links_find(&rd->wt, (const char *const *)rd->words.labels, rd->words.n, &ask, &rd->links);
    else
        rd->n_links = links_find(rd->hf.is_long ? &rd->hf.lt.rows : &rd->hf.t, (const char *const *)rd->hf.in.tokens,
                                 rd->hf.in.n, &ask, &rd->links);
    if (rd->n_links < 0) { rd->n_links = 0; return errmsg_set(err, errlen, "out of memory"); }
    rd->hf_ready = 1;
    return 0;
}

static void family_print(const Reading *rd, FILE *out) {
    const ReadSpec *a = rd->spec;
    const HfFile *f = &rd->net->fam;
    if (!rd->hf_ready) return;
    if (!a->quiet) print_hf_predictions(&rd->hf, f, a->warn, out);
    if (!a->quiet && rd->net->ablated[0])
        fprintf(out, "  knocked out: %s (each head's output replaced by zeros before W_O)\n", rd->net->ablated);
    if (!a->quiet) print_hf_links(rd, out);
    if (!a->quiet && rd->has_attr) attribution_print(&rd->attr, out);
    if (!a->quiet && rd->has_imp) print_importance(&rd->imp, &rd->hf.s, out);
    int json = a->trace != HF_TRACE_NONE && a->trace_format == PICTURES_TRACE_JSON;   /* else trace.bin or nothing */
    size_t bytes = json ? trace_json_estimate(&rd->hf.t) : 0;
    if (bytes > (size_t)READING_TRACE_WARN_MB << 20)
        a->warn("trace.json will be about %zu MB (%d maps × %d heads × %d² weights); --trace none skips it, "
                "--trace-format bin writes it compact", bytes >> 20, rd->hf.t.n_maps, hf_file_shape(f).n_head, rd->hf.in.n);
}

static int family_pictures(Reading *rd, PictureSpec *ps, PictureReport *rep, char *err, size_t errlen) {
    const ReadSpec *a = rd->spec;
    HfFile *f = &rd->net->fam;
    ps->model_path = f->dir;
    ps->query = a->query;
    ps->ablated = rd->net->ablated;
    ps->focus_map = rd->focus_map;
    ps->focus_head = rd->focus_head;
    ps->focus_given = a->focus != NULL;
    ps->links = rd->links;
    ps->n_links = rd->n_links;
    ps->words = rd->has_words ? &rd->wt : NULL;
    ps->word_first = rd->has_words ? rd->words.first : NULL;
    ps->coref = (CorefHead){.layer = -1, .head = -1, .accuracy = -1};
    ps->importance = rd->has_imp ? &rd->imp : NULL;
    ps->attribution = rd->has_attr ? &rd->attr : NULL;
    if (ps->lines_top < 0) ps->lines_top = 8;
    ps->sinks = ps->link_heads = 1;
    return hf_run_pictures(&rd->hf, f, ps, rep, err, errlen);
}

/* ---- one sequence of calls ---- */

int reading_begin(Reading *rd, Net *net, const char *const *texts, int n, const ReadSpec *spec, char *err,
                  size_t errlen) {
    memset(rd, 0, sizeof *rd);
    rd->net = net;
    rd->spec = spec;
    rd->texts = texts;
    rd->n = n;
    rd->coref = (CorefHead){.layer = -1, .head = -1, .accuracy = -1};
    if (n > READING_MAX_SENTENCES) return errmsg_set(err, errlen, "too many sentences (at most %d per run)", READING_MAX_SENTENCES);
    return net->own ? own_begin(rd, err, errlen) : family_begin(rd, err, errlen);
}

int reading_sentence(Reading *rd, int i, const char *dir, char *err, size_t errlen) {
    head_roles_free(&rd->roles);
    rd->has_roles = 0;
    return rd->net->own ? own_sentence(rd, i, err, errlen) : family_sentence(rd, i, dir, err, errlen);
}

void reading_print(const Reading *rd, int i, FILE *out) {
    if (rd->net->own) own_print(rd, &rd->look[i], out);
    else family_print(rd, out);
    if (rd->has_roles && !rd->spec->quiet) {
        char text[4096];
        head_roles_summary(&rd->roles, 3, text, sizeof text);
        fprintf(out, "  head roles (the 3 highest scores of each; head_roles.png):\n%s", text);
    }
}

int reading_pictures(Reading *rd, int i, PictureSpec *ps, PictureReport *rep, char *err, size_t errlen) {
    const ReadSpec *a = rd->spec;
    ps->keep_steps = a->trace == HF_TRACE_STEPS;
    ps->no_trace = a->trace == HF_TRACE_NONE;
    ps->trace_format = a->trace_format;
    ps->trace_f16 = a->trace_f16;
    ps->no_pictures = a->no_pictures;
    ps->stream = NULL;
    ps->head_roles = rd->has_roles ? &rd->roles : NULL;
    return rd->net->own ? own_pictures(rd, i, ps, rep, err, errlen) : family_pictures(rd, ps, rep, err, errlen);
}

void reading_title(const Reading *rd, int i, char *buf, size_t n) {
    if (rd->net->own) snprintf(buf, n, "%d. %s → %s", i + 1, rd->look[i].s.text, rd->look[i].s.translation);
    else snprintf(buf, n, "%s", rd->texts[i]);
}

void reading_end(Reading *rd) {
    if (!rd) return;
    for (int i = 0; i < READING_MAX_SENTENCES; i++) look_free(&rd->look[i]);
    hf_run_free(&rd->hf);
    importance_free(&rd->imp);
    attribution_free(&rd->attr);
    head_roles_free(&rd->roles);
    words_free(&rd->words);
    trace_free(&rd->wt);
    free(rd->links);
    memset(rd, 0, sizeof *rd);
}
