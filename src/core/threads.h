/* threads.h — how many OpenMP threads a training step uses, chosen by measuring.
 *
 * OMP_NUM_THREADS (or the number of cores) is an upper bound.  On a machine that
 * other programs keep busy, fork–join threads wait for each other at every
 * parallel region and two threads can train slower than one (measured on the
 * shared 2-core machine: 11.8k tokens/s on two threads, 22.2k on one).  So the
 * step loop times a few steps with the upper bound and a few with one thread,
 * keeps the faster, and asks again every THREADS_TUNE_PERIOD steps:
 *
 *   ThreadTune tt;  thread_tune_init(&tt);
 *   for each step:  thread_tune_before(&tt);  … the step …;  thread_tune_after(&tt, seconds);
 *   thread_tune_end(&tt);      (gives the upper bound back to OpenMP)
 *
 * Without OpenMP, or with an upper bound of 1, it does nothing.  The first step
 * (allocations) is never timed.  Results do not depend on the choice: with an
 * upper bound of 2 a training step always cuts its batch into two halves
 * (model/model_twin.c), and the choice only decides whether they run side by side
 * or one after the other, with the same bits.  With more threads the choice
 * changes only the order of the float sums that the kernels split between
 * threads. */
#ifndef ATTNVIZ_THREADS_H
#define ATTNVIZ_THREADS_H

#define THREADS_TUNE_PERIOD 200   /* steps between two measurements           */
#define THREADS_TUNE_STEPS  3     /* steps timed with each setting (the fastest counts) */

typedef struct {
    int max;          /* the upper bound (omp_get_max_threads at init)      */
    int best;         /* threads used between measurements                   */
    long step;        /* steps seen                                          */
    double time[2];   /* fastest timed step: [0] max threads, [1] one thread */
} ThreadTune;

void thread_tune_init(ThreadTune *t);
void thread_tune_before(ThreadTune *t);                 /* sets the step's thread count */
void thread_tune_after(ThreadTune *t, double seconds);  /* the step's wall time */
int  thread_tune_threads(const ThreadTune *t);          /* threads in use now */
void thread_tune_end(ThreadTune *t);
/* Whether a training step cuts its batch in two, one half per thread
 * (model/model_twin.c): when exactly two threads are allowed, the case measured
 * on the 2-core development machine.  With more, the step cuts its products
 * between all of them instead, as before. */
int  thread_tune_halves(const ThreadTune *t);

#endif
