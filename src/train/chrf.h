/* chrf.h — chrF, the character n-gram F-score of a translation against its
 * references (Popović 2015, "chrF: character n-gram F-score for automatic MT
 * evaluation"), at corpus level.
 *
 * Characters are Unicode code points of the UTF-8 text with every white space
 * removed (so "l' école" and "l'école" score alike).  For each order n = 1..6:
 *   hyp[n]   n-grams of the hypothesis, ref[n] n-grams of the reference,
 *   match[n] the n-grams they share, each counted min(times in hyp, times in ref).
 * A sentence with several references adds the counts of the reference that gives
 * it the best sentence-level chrF (the first of equals).  The corpus score sums
 * the counts over sentences, then
 *   P_n = match[n] / hyp[n],  R_n = match[n] / ref[n]   for the orders where both
 *   hypothesis and reference have n-grams (shorter texts have no 6-grams),
 *   chrP, chrR = the arithmetic means of P_n and R_n over those orders,
 *   chrF_β = 100 · (1 + β²) · chrP · chrR / (β² · chrP + chrR)   (0 when both are 0).
 * β = 2 weighs recall twice as much as precision.  No allocation outlives a call. */
#ifndef ATTNVIZ_CHRF_H
#define ATTNVIZ_CHRF_H

#define CHRF_ORDER 6

typedef struct {
    double hyp[CHRF_ORDER + 1], ref[CHRF_ORDER + 1], match[CHRF_ORDER + 1];  /* index n = 1..6 */
    long sentences;
} ChrfStats;

void chrf_stats_init(ChrfStats *s);
/* Adds one sentence: its hypothesis and the best of its n_refs references.
 * Returns the index of the reference used, or -1 when there is none or a text
 * is not valid UTF-8 (nothing added). */
int chrf_add(ChrfStats *s, const char *hyp, const char *const *refs, int n_refs);
/* The score of what was added, 0..100. */
double chrf_score(const ChrfStats *s, double beta);

#endif
