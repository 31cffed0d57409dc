/* tensor.h — the float32 kernels of the model: matmul, layernorm, relu, residual.
 *
 * Plain row-major loops, one OpenMP pragma where it pays.  Every kernel puts
 * outputs first, then inputs, then weights, then sizes.  Dimension letters:
 * N rows (= B*T tokens), C channels, K inner size, M output size.
 *
 * Conventions:
 *   - a linear layer is  out = inp · W + b  with W stored (in, out), exactly the
 *     lesson's  x·W + b  (not PyTorch's (out, in) weight);
 *   - "_acc" kernels ADD into their outputs (gradients accumulate), the others
 *     overwrite;
 *   - nothing allocates; matmul_backward takes a caller-owned scratch (see below).
 * No kernel keeps state; all are safe to call from several threads on disjoint data. */
#ifndef ATTNVIZ_TENSOR_H
#define ATTNVIZ_TENSOR_H
#include <stddef.h>

#define LAYERNORM_EPS 1e-5f

/* OpenMP loops, silent when OpenMP is off (make OPENMP=0): no unknown-pragma warnings. */
#ifdef _OPENMP
#define OMP_PARALLEL_FOR   _Pragma("omp parallel for schedule(static)")
#define OMP_PARALLEL_FOR2  _Pragma("omp parallel for collapse(2) schedule(dynamic, 8)")
#define OMP_SIMD           _Pragma("omp simd")
#define OMP_SIMD_SUM       _Pragma("omp simd reduction(+:sum)")   /* accumulates into `sum` */
#define OMP_PRAGMA(x)      _Pragma(#x)
#define OMP_SIMD_REDUCE(...) OMP_PRAGMA(omp simd reduction(+:__VA_ARGS__))   /* sums, any order */
#define OMP_PARALLEL_FOR_SUM(v) OMP_PRAGMA(omp parallel for schedule(static) reduction(+:v))
#define OMP_PARALLEL_FOR_SIMD _Pragma("omp parallel for simd schedule(static)")
#else
#define OMP_PARALLEL_FOR_SIMD
#define OMP_PARALLEL_FOR_SUM(v)
#define OMP_SIMD_REDUCE(...)
#define OMP_SIMD
#define OMP_SIMD_SUM
#define OMP_PARALLEL_FOR
#define OMP_PARALLEL_FOR2
#endif

/* Matrix products use OpenBLAS's cblas_sgemm when built with ATTNVIZ_BLAS (the
 * Makefile's default when libopenblas-dev is present); the plain loops below
 * (the _ref kernels) are the reference the tests compare it with.
 * tensor_set_blas(0) switches to the plain loops at run time. */
void tensor_set_blas(int on);

/* OpenBLAS (the pthreads build) starts its own worker threads when the
 * program loads, and each spins on sched_yield for about 0.1 s waiting for
 * work that never comes: the products run single-threaded inside attnviz's
 * OpenMP blocks.  On 2 cores the spinning worker took the core a forward pass
 * needed (a 64-token GPT-2-small forward, 2 threads: median 0.31 s with the
 * worker, 0.25 s without).  Called first thing in main: stops those workers
 * (blas_thread_shutdown_, where the library has it) and keeps OpenBLAS at one
 * thread.  Nothing without OpenBLAS. */
void tensor_blas_quiet(void);
int  tensor_blas_enabled(void);   /* 1 when cblas_sgemm is in use */

/* n floats for a large block that lives long and is read over and over (weights,
 * activations, gradients, Adam's moments): from 2 MB up, aligned to 2 MB and
 * asking the kernel for 2 MB pages (a hint: ignored where unsupported), which
 * spares the TLB misses of 4 kB pages and most page faults (training the bench
 * shapes on one thread, alternating runs: median 652 → 617 ms a step at the large
 * shape, 73.8 → 69.0 ms at the small one).
 * Zeroed when zero.  NULL out of memory; free() releases it. */
float *floats_huge(size_t n, int zero);

/* out (N,M) = inp (N,K) · w (K,M) + bias (M); bias may be NULL. */
void matmul_forward(float *out, const float *inp, const float *w, const float *bias,
                    int N, int K, int M);

/* out (N,M) = inp (N,K) · wᵀ + bias (M) with w (M,K) stored as PyTorch's
 * nn.Linear stores it (out, in), so foreign checkpoints are used as mapped
 * (family/stack.c); bias may be NULL.  _ref: the plain loops (one dot product
 * per output, in order of k), the reference of the cblas_sgemm path. */
void matmul_forward_t(float *out, const float *inp, const float *w, const float *bias, int N, int K, int M);
void matmul_forward_t_ref(float *out, const float *inp, const float *w, const float *bias, int N, int K, int M);

/* out (N,M) += inp (N,K) · w (K,M).  The core loop (i-k-j order, rows in parallel). */
void matmul_acc(float *out, const float *inp, const float *w, int N, int K, int M);
void matmul_acc_ref(float *out, const float *inp, const float *w, int N, int K, int M);

/* dw (K,M) += inpᵀ (K,N) · dout (N,M);  dbias (M) += column sums of dout (may be NULL). */
void matmul_backward_weights(float *dw, float *dbias, const float *dout, const float *inp,
                             int N, int K, int M);
void matmul_backward_weights_ref(float *dw, float *dbias, const float *dout, const float *inp,
                                 int N, int K, int M);

/* Gradients of out = inp·w + b:
 *   dinp (N,K) += dout · wᵀ   (skipped when dinp is NULL)
 *   dw   (K,M) += inpᵀ · dout,  dbias (M) += Σ_rows dout
 * scratch: K*M floats (holds wᵀ for the plain loop) — required when dinp is not NULL. */
void matmul_backward(float *dinp, float *dw, float *dbias, float *scratch,
                     const float *dout, const float *inp, const float *w,
                     int N, int K, int M);

/* out (N,C) = (inp - mean) * rstd * w + b, per row; mean/rstd (N) saved for backward.
 * Biased variance, eps LAYERNORM_EPS inside the square root (as torch.nn.LayerNorm). */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       const float *w, const float *b, int N, int C);

/* dinp (N,C) += ∂loss/∂inp;  dw, db (C) += their gradients. */
void layernorm_backward(float *dinp, float *dw, float *db, const float *dout,
                        const float *inp, const float *w, const float *mean,
                        const float *rstd, int N, int C);

/* out = max(0, inp), n elements (out may equal inp). */
void relu_forward(float *out, const float *inp, size_t n);

/* Small building blocks of the per-head attention kernels (core/attention.c,
 * model/model_backward.c); each sums in a fixed order, so results do not depend
 * on the vector width.
 * pack_transposed: mt (D, Tkp) = mᵀ for m (Tk rows of D, row stride ld); columns
 *   Tk … Tkp-1 are zero (Tkp = tile_cols(Tk)).
 * vecmat_tile: out[i·ldo + j] = Σ_d x[i·ldx + d]·mt[d·Tkp + j] for the nx rows i
 *   of x and j < Tk, summed in order of d; 16 columns (or the last 8) of 4 rows at
 *   a time in registers.  Writes only the Tk columns of each out row.
 * combine_rows: out (D) = Σ_s coef[s]·rows[s·ld …], in order of s, zero
 *   coefficients skipped (out overwritten).
 * On x86-64 vecmat_tile comes in AVX-512, AVX2 and SSE builds, the one the
 * processor has picked at each call; all give the same bits. */
#define TILE_COLS 8
static inline int tile_cols(int n) { return (n + TILE_COLS - 1) / TILE_COLS * TILE_COLS; }
void pack_transposed(float *mt, const float *m, int ld, int Tk, int D, int Tkp);
void vecmat_tile(float *out, int ldo, const float *x, int ldx, int nx,
                 const float *mt, int D, int Tk, int Tkp);
void combine_rows(float *out, const float *coef, const float *rows, int ld, int n, int D);
/* combine_block: out (n, D) = coef (n, Tk) · rows (Tk, D) (row strides ldo, ldc,
 * ld): one sgemm when Tk >= COMBINE_BLOCK_MIN and OpenBLAS is on (the sums in
 * the kernel's order, so the last bit may differ from combine_rows), else
 * combine_rows row by row.  A 512-token GPT-2 forward's weights · V took 174 ms
 * of CPU by combine_rows. */
#define COMBINE_BLOCK_MIN 128
void combine_block(float *out, int ldo, const float *coef, int ldc, int n, const float *rows, int ld, int Tk, int D);

/* out[i] = exp(x[i] − shift) for x[i] − shift <= 0 (the softmax of the loss over the
 * vocabulary, each attention row): Cephes' expf polynomial, within 2 ulp of expf,
 * in a loop the compiler vectorises (expf itself is a call per element); arguments
 * below −87 give exactly 0 (expf's denormals below 1.6e-38 are dropped), so a
 * masked score, −∞ or the lesson's −10000, weighs exactly 0.  out may be x.
 * Tested against expf. */
void exp_shifted(float *out, const float *x, float shift, int n);

/* out[i] = σ(z[i]) = 1 / (1 + e^(−z[i])) by the same polynomial (e^−|z| only, so
 * nothing overflows), a few ulp from 1 / (1 + expf(−z)); out may be z.  The
 * GELU and SiLU activations of the foreign families: expf one element at a time
 * was 4% of a 512-token SmolLM2 forward. */
void sigmoid_vec(float *out, const float *z, size_t n);

/* The two above on 4-lane vectors whatever the machine (on x86-64 with AVX2 the
 * two above run on 8): the tests check both give the same bits. */
void exp_shifted_plain(float *out, const float *x, float shift, int n);
void sigmoid_vec_plain(float *out, const float *z, size_t n);

/* out = a + b, n elements. */
void residual_forward(float *out, const float *a, const float *b, size_t n);

#endif
