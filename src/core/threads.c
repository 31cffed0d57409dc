/* threads.c — see threads.h. */
#include "core/threads.h"
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void thread_tune_init(ThreadTune *t) {
    t->max = 1;
#ifdef _OPENMP
    t->max = omp_get_max_threads();
#endif
    t->best = t->max;
    t->step = 0;
    t->time[0] = t->time[1] = INFINITY;
}

/* Where step t->step falls: -1 untimed (warm-up or between measurements),
 * 0 timed with max threads, 1 timed with one. */
static int phase(const ThreadTune *t) {
    if (t->max <= 1 || t->step == 0) return -1;
    long p = (t->step - 1) % THREADS_TUNE_PERIOD;
    return p < THREADS_TUNE_STEPS ? 0 : p < 2 * THREADS_TUNE_STEPS ? 1 : -1;
}

int thread_tune_threads(const ThreadTune *t) {
    int ph = phase(t);
    return ph == 0 ? t->max : ph == 1 ? 1 : t->best;
}

void thread_tune_before(ThreadTune *t) {
#ifdef _OPENMP
    if (t->max > 1) omp_set_num_threads(thread_tune_threads(t));
#else
    (void)t;
#endif
}

void thread_tune_after(ThreadTune *t, double seconds) {
    int ph = phase(t);
    if (ph >= 0 && seconds < t->time[ph]) t->time[ph] = seconds;   /* the fastest: a step */
    if (ph == 1 && (t->step - 1) % THREADS_TUNE_PERIOD == 2 * THREADS_TUNE_STEPS - 1) {  /* disturbed by */
        t->best = t->time[1] < t->time[0] ? 1 : t->max;                /* others counts less */
        t->time[0] = t->time[1] = INFINITY;
    }
    t->step++;
}

void thread_tune_end(ThreadTune *t) {
#ifdef _OPENMP
    if (t->max > 1) omp_set_num_threads(t->max);
#else
    (void)t;
#endif
}

int thread_tune_halves(const ThreadTune *t) { return t->max == 2; }
