/* tensor.c — see tensor.h.  Plain loops; the inner loops run over contiguous
 * memory so the compiler vectorizes them, and rows go to OpenMP threads. */
#include "core/tensor.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef ATTNVIZ_BLAS
#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif
static int use_blas = 1;

/* One thread pool: OpenBLAS runs single-threaded and OpenMP threads take blocks
 * of C (two pools on 2 cores fight: OpenMP threads spin while OpenBLAS's own
 * threads want the cores).  One block per thread: every block packs its own
 * parts of both operands again, and 4 blocks a thread (handed out as threads
 * came free, for a thread slowed by the shared machine) packed so much more
 * that one a thread measured faster (SmolLM2 shape, 512 tokens, 12 alternating
 * runs: 1.63 -> 1.52 s; 64 tokens and GPT-2 the same or better). */
#define BLAS_MIN_ROWS 32
static int blas_single = 0;   /* openblas_set_num_threads(1) done */
/* The first product makes OpenBLAS single-threaded, once even when two threads
 * start at the same time (a training step's two halves, model_twin.c). */
static void blas_single_thread(void) {
    if (__atomic_load_n(&blas_single, __ATOMIC_ACQUIRE)) return;   /* done: no lock on every product */
#ifdef _OPENMP
    #pragma omp critical(attnviz_blas_single)
#endif
    if (!blas_single) { openblas_set_num_threads(1); __atomic_store_n(&blas_single, 1, __ATOMIC_RELEASE); }
}
/* sgemm on columns [c0, c1) of C: columns of op(b), the rest whole. */
static void blas_cols(int transa, int transb, int Mr, int c0, int c1, int Kd, const float *a, int lda,
                      const float *b, int ldb, float *c, int ldc) {
    const float *bt = transb ? b + (size_t)c0 * ldb : b + c0;
    cblas_sgemm(CblasRowMajor, transa ? CblasTrans : CblasNoTrans, transb ? CblasTrans : CblasNoTrans,
                Mr, c1 - c0, Kd, 1.0f, a, lda, bt, ldb, 1.0f, c + c0, ldc);
}

/* C is cut into a grid of rb x cb blocks, one a thread.  A block packs its rows
 * of op(a) and its columns of op(b), so all the blocks together pack op(a) cb
 * times and op(b) rb times: the grid is the one of nb blocks that packs least
 * (a forward of 64 tokens through a 768 x 2304 weight goes by columns, as by
 * rows each block packed the whole weight).  Column cuts at multiples of 16,
 * the kernels' width; each element's sum is the same for every grid. */
static void blas_rows(int transa, int transb, int Mr, int Nc, int Kd, const float *a, int lda,
                      const float *b, int ldb, float *c, int ldc) {
    blas_single_thread();
    int nb = 1;
#ifdef _OPENMP
    if ((long)Mr * Nc * Kd >= 1L << 18 && omp_get_max_threads() > 1) nb = omp_get_max_threads();
#endif
    int rb = 1, cb = 1;
    long best = -1;
    for (int r = 1; r <= nb; r++) {   /* blocks of at least BLAS_MIN_ROWS rows and columns */
        if (nb % r || Mr / r < BLAS_MIN_ROWS / (r > 1 ? 1 : 2) || Nc / (nb / r) < BLAS_MIN_ROWS) continue;
        long cost = (long)(nb / r) * Mr + (long)r * Nc;
        if (best < 0 || cost < best) { best = cost; rb = r; cb = nb / r; }
    }
    if (best < 0) {   /* too small to cut nb ways: by rows as far as they go */
        rb = Mr / BLAS_MIN_ROWS < nb ? Mr / BLAS_MIN_ROWS : nb;
        if (rb < 1) rb = 1;
    }
    if (rb * cb <= 1) {
        cblas_sgemm(CblasRowMajor, transa ? CblasTrans : CblasNoTrans, transb ? CblasTrans : CblasNoTrans,
                    Mr, Nc, Kd, 1.0f, a, lda, b, ldb, 1.0f, c, ldc);
        return;
    }
#ifdef _OPENMP
    #pragma omp parallel for schedule(dynamic)
#endif
    for (int t = 0; t < rb * cb; t++) {
        int ri = t / cb, ci = t % cb;
        int r0 = (int)((long)Mr * ri / rb), r1 = (int)((long)Mr * (ri + 1) / rb);
        int c0 = cb == 1 ? 0 : (int)((long)Nc * ci / cb) & ~15;
        int c1 = ci == cb - 1 ? Nc : (int)((long)Nc * (ci + 1) / cb) & ~15;
        /* rows r0..r1 of op(a): row offset r0*lda, or column offset r0 when transposed */
        const float *at = transa ? a + r0 : a + (size_t)r0 * lda;
        blas_cols(transa, transb, r1 - r0, c0, c1, Kd, at, lda, b, ldb, c + (size_t)r0 * ldc, ldc);
    }
}
#else
static int use_blas = 0;
#endif

#ifdef ATTNVIZ_BLAS
extern int blas_thread_shutdown_(void) __attribute__((weak));   /* OpenBLAS pthreads builds */
#endif

void tensor_blas_quiet(void) {
#ifdef ATTNVIZ_BLAS
    blas_single_thread();   /* first: setting the count starts the workers again when they are down */
    if (blas_thread_shutdown_) blas_thread_shutdown_();
#endif
}

void combine_block(float *out, int ldo, const float *coef, int ldc, int n, const float *rows, int ld, int Tk,
                   int D) {
#ifdef ATTNVIZ_BLAS
    if (use_blas && Tk >= COMBINE_BLOCK_MIN) {
        blas_single_thread();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, D, Tk, 1.0f, coef, ldc, rows, ld, 0.0f, out, ldo);
        return;
    }
#endif
    for (int i = 0; i < n; i++) combine_rows(out + (size_t)i * ldo, coef + (size_t)i * ldc, rows, ld, Tk, D);
}

void tensor_set_blas(int on) {
#ifdef ATTNVIZ_BLAS
    use_blas = on != 0;
#else
    (void)on;
#endif
}
int tensor_blas_enabled(void) { return use_blas; }

/* Rows of `inp` handled together: each row of w is then loaded once per
 * ROWS output rows instead of once per row (a small register/L1 tile). */
#define ROWS 4
#define ICHUNK 64   /* rows of dout per pass in matmul_backward_weights_ref */

/* dbias (M) += Σ_i dout[i][·] */
static void column_sums(float *restrict dbias, const float *restrict dout, int N, int M) {
    for (int i = 0; i < N; i++) {
        const float *restrict d = dout + (size_t)i * M;
        OMP_SIMD
        for (int j = 0; j < M; j++) dbias[j] += d[j];
    }
}

void matmul_acc(float *out, const float *inp, const float *w, int N, int K, int M) {
#ifdef ATTNVIZ_BLAS
    if (use_blas) {
        blas_rows(0, 0, N, M, K, inp, K, w, M, out, M);
        return;
    }
#endif
    matmul_acc_ref(out, inp, w, N, K, M);
}

void matmul_acc_ref(float *out, const float *inp, const float *w, int N, int K, int M) {
    OMP_PARALLEL_FOR
    for (int i0 = 0; i0 < N; i0 += ROWS) {
        int n = N - i0 < ROWS ? N - i0 : ROWS;
        for (int k = 0; k < K; k++) {
            const float *wk = w + (size_t)k * M;
            for (int r = 0; r < n; r++) {
                float a = inp[(size_t)(i0 + r) * K + k];
                if (a == 0.0f) continue;              /* relu zeros are common */
                float *o = out + (size_t)(i0 + r) * M;
                OMP_SIMD
                for (int j = 0; j < M; j++) o[j] += a * wk[j];
            }
        }
    }
}

float *floats_huge(size_t n, int zero) {
    size_t bytes = (n ? n : 1) * sizeof(float), huge = (size_t)2 << 20;
    void *p = NULL;
    if (bytes < huge) return zero ? calloc(n ? n : 1, sizeof(float)) : malloc(bytes);
    if (posix_memalign(&p, huge, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    if (zero) memset(p, 0, bytes);
    return p;
}

void matmul_forward(float *out, const float *inp, const float *w, const float *bias,
                    int N, int K, int M) {
    for (int i = 0; i < N; i++) {
        float *o = out + (size_t)i * M;
        if (bias) memcpy(o, bias, (size_t)M * sizeof(float));
        else memset(o, 0, (size_t)M * sizeof(float));
    }
    matmul_acc(out, inp, w, N, K, M);
}

void matmul_forward_t_ref(float *out, const float *inp, const float *w, const float *bias, int N, int K, int M) {
    OMP_PARALLEL_FOR
    for (int j = 0; j < M; j++) {
        const float *wj = w + (size_t)j * K;
        for (int i = 0; i < N; i++) {
            const float *x = inp + (size_t)i * K;
            float sum = 0;
            OMP_SIMD_SUM
            for (int k = 0; k < K; k++) sum += x[k] * wj[k];
            out[(size_t)i * M + j] = sum + (bias ? bias[j] : 0.0f);
        }
    }
}

void matmul_forward_t(float *out, const float *inp, const float *w, const float *bias, int N, int K, int M) {
#ifdef ATTNVIZ_BLAS
    /* one row (the next token's logits, a KV-cache step): a dot product per
     * output read straight from the weights; sgemm first copied the whole
     * matrix into its packed layout (SmolLM2's 49152 x 576 logits: 55 ms) */
    if (use_blas && N > 1) {
        for (int i = 0; i < N; i++) {
            float *o = out + (size_t)i * M;
            if (bias) memcpy(o, bias, (size_t)M * sizeof(float));
            else memset(o, 0, (size_t)M * sizeof(float));
        }
        blas_rows(0, 1, N, M, K, inp, K, w, K, out, M);
        return;
    }
#endif
    matmul_forward_t_ref(out, inp, w, bias, N, K, M);
}

void matmul_backward_weights(float *dw, float *dbias, const float *dout, const float *inp,
                             int N, int K, int M) {
#ifdef ATTNVIZ_BLAS
    if (use_blas) {
        blas_rows(1, 0, K, M, N, inp, K, dout, M, dw, M);
        if (dbias) column_sums(dbias, dout, N, M);
        return;
    }
#endif
    matmul_backward_weights_ref(dw, dbias, dout, inp, N, K, M);
}

void matmul_backward_weights_ref(float *dw, float *dbias, const float *dout, const float *inp,
                                 int N, int K, int M) {
    /* dw[k][j] += Σ_i inp[i][k] · dout[i][j].  Rows i go in chunks small enough
     * for their dout rows to stay in cache while every block of dw rows (one
     * thread each) passes over them. */
    for (int i0 = 0; i0 < N; i0 += ICHUNK) {
        int i1 = N - i0 < ICHUNK ? N : i0 + ICHUNK;
        OMP_PARALLEL_FOR
        for (int k0 = 0; k0 < K; k0 += ROWS) {
            int nk = K - k0 < ROWS ? K - k0 : ROWS;
            for (int i = i0; i < i1; i++) {
                const float *d = dout + (size_t)i * M;
                for (int r = 0; r < nk; r++) {
                    float a = inp[(size_t)i * K + k0 + r];
                    if (a == 0.0f) continue;
                    float *g = dw + (size_t)(k0 + r) * M;
                    OMP_SIMD
                    for (int j = 0; j < M; j++) g[j] += a * d[j];
                }
            }
        }
    }
    if (dbias) column_sums(dbias, dout, N, M);
}

void matmul_backward(float *dinp, float *dw, float *dbias, float *scratch,
                     const float *dout, const float *inp, const float *w,
                     int N, int K, int M) {
#if defined(ATTNVIZ_BLAS) && defined(_OPENMP)
    /* Two threads: dinp and dw are independent products of equal size, one per
     * thread in one parallel region (one barrier instead of two, each sgemm whole). */
    if (dinp && use_blas && omp_get_max_threads() == 2 && (long)N * K * M >= 1L << 18) {
        blas_single_thread();
        #pragma omp parallel sections num_threads(2)
        {
            #pragma omp section
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, K, M, 1.0f, dout, M, w, M, 1.0f, dinp, K);
            #pragma omp section
            {
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, K, M, N, 1.0f, inp, K, dout, M, 1.0f, dw, M);
                if (dbias) column_sums(dbias, dout, N, M);
            }
        }
        return;
    }
#endif
    if (dinp && use_blas) {
#ifdef ATTNVIZ_BLAS
        blas_rows(0, 1, N, K, M, dout, M, w, M, dinp, K);
#endif
    } else if (dinp) {
        /* dinp += dout · wᵀ, with wᵀ (M,K) materialized so the same i-k-j loop applies. */
        for (int k = 0; k < K; k++)
            for (int j = 0; j < M; j++) scratch[(size_t)j * K + k] = w[(size_t)k * M + j];
        matmul_acc(dinp, dout, scratch, N, M, K);
    }
    matmul_backward_weights(dw, dbias, dout, inp, N, K, M);
}

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       const float *w, const float *b, int N, int C) {
    OMP_PARALLEL_FOR
    for (int i = 0; i < N; i++) {
        const float *restrict x = inp + (size_t)i * C;
        float *restrict o = out + (size_t)i * C;
        double m = 0.0, v = 0.0;
        OMP_SIMD_REDUCE(m)
        for (int c = 0; c < C; c++) m += x[c];
        m /= C;
        OMP_SIMD_REDUCE(v)
        for (int c = 0; c < C; c++) { double d = x[c] - m; v += d * d; }
        v /= C;
        float s = (float)(1.0 / sqrt(v + LAYERNORM_EPS));
        float mf = (float)m;
        OMP_SIMD
        for (int c = 0; c < C; c++) o[c] = (x[c] - mf) * s * w[c] + b[c];
        mean[i] = mf;
        rstd[i] = s;
    }
}

void layernorm_backward(float *dinp, float *dw, float *db, const float *dout,
                        const float *inp, const float *w, const float *mean,
                        const float *rstd, int N, int C) {
    /* With n = (x - mean)·rstd and dn = dout·w:
     *   dx = rstd · (dn - mean(dn) - n · mean(dn·n)) */
    OMP_PARALLEL_FOR
    for (int i = 0; i < N; i++) {
        const float *restrict x = inp + (size_t)i * C, *restrict d = dout + (size_t)i * C;
        float *restrict dx = dinp + (size_t)i * C;
        float m = mean[i], s = rstd[i];
        float sum_dn = 0.0f, sum_dn_n = 0.0f;
        OMP_SIMD_REDUCE(sum_dn, sum_dn_n)
        for (int c = 0; c < C; c++) {
            float n = (x[c] - m) * s, dn = d[c] * w[c];
            sum_dn += dn;
            sum_dn_n += dn * n;
        }
        float a = sum_dn / C, bb = sum_dn_n / C;
        OMP_SIMD
        for (int c = 0; c < C; c++) {
            float n = (x[c] - m) * s, dn = d[c] * w[c];
            dx[c] += s * (dn - a - n * bb);
        }
    }
    float *restrict gw = dw, *restrict gb = db;
    for (int i = 0; i < N; i++) {
        const float *restrict x = inp + (size_t)i * C, *restrict d = dout + (size_t)i * C;
        float m = mean[i], s = rstd[i];
        OMP_SIMD
        for (int c = 0; c < C; c++) {
            gw[c] += d[c] * (x[c] - m) * s;
            gb[c] += d[c];
        }
    }
}

void relu_forward(float *out, const float *inp, size_t n) {
    OMP_SIMD
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void residual_forward(float *restrict out, const float *restrict a, const float *restrict b, size_t n) {
    OMP_SIMD
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

void pack_transposed(float *mt, const float *m, int ld, int Tk, int D, int Tkp) {
    for (int d = 0; d < D; d++) {
        float *row = mt + (size_t)d * Tkp;
        for (int j = 0; j < Tk; j++) row[j] = m[(size_t)j * ld + d];
        for (int j = Tk; j < Tkp; j++) row[j] = 0.0f;
    }
}

/* 4, 8 and 16 floats in one vector (GCC/Clang vector extension): the tile kernels
 * below say what they mean instead of hoping the vectoriser sees it.  Each lane
 * computes exactly what the scalar loop would: multiply and add stay separate
 * operations (the Makefile builds this file with -ffp-contract=off, so no build
 * fuses them) and no sum is reordered, so every width gives the same bits. */
typedef float f4 __attribute__((vector_size(16)));
typedef float f8 __attribute__((vector_size(32)));
typedef float f16 __attribute__((vector_size(64)));   /* 16 floats, not half floats */
typedef int32_t i4 __attribute__((vector_size(16)));
static inline f4 load4(const float *p) { f4 v; memcpy(&v, p, sizeof v); return v; }
static inline void store4(float *p, f4 v) { memcpy(p, &v, sizeof v); }
static inline f4 splat4(float x) { return (f4){x, x, x, x}; }

/* The first n < 16 floats of a to o, in 8-, 4-, 2- and 1-float pieces (fixed-size
 * copies the compiler turns into moves, not a call to memcpy). */
static inline void store_first(float *o, const float *a, int n) {
    if (n & 8) { memcpy(o, a, 8 * sizeof(float)); o += 8; a += 8; }
    if (n & 4) { memcpy(o, a, 4 * sizeof(float)); o += 4; a += 4; }
    if (n & 2) { memcpy(o, a, 2 * sizeof(float)); o += 2; a += 2; }
    if (n & 1) *o = *a;
}

/* vecmat_tile on NR rows of x from row i and W columns of mt from j0, as NV vectors
 * of type V per row: NR·NV independent sums side by side, each in order of d. */
#define VECMAT_BLOCK(V, NV, W, NR)                                                \
    do {                                                                          \
        V acc[NR][NV];                /* zeroed lane by lane: memset was rep stos */ \
        for (int r = 0; r < (NR); r++)                                            \
            for (int u = 0; u < (NV); u++) acc[r][u] = (V){0};                    \
        for (int d = 0; d < D; d++) {                                             \
            const float *md = mt + (size_t)d * Tkp + j0;                          \
            for (int r = 0; r < (NR); r++) {                                      \
                float xd = x[(size_t)(i + r) * ldx + d];                          \
                for (int u = 0; u < (NV); u++) {                                  \
                    V m;                                                          \
                    memcpy(&m, md + u * ((W) / (NV)), sizeof m);                  \
                    acc[r][u] += xd * m;                                          \
                }                                                                 \
            }                                                                     \
        }                                                                         \
        int n = Tk - j0 < (W) ? Tk - j0 : (W);                                    \
        for (int r = 0; r < (NR); r++) {                                          \
            float *o = out + (size_t)(i + r) * ldo + j0;                          \
            if (n == (W))                                                         \
                for (int u = 0; u < (NV); u++) memcpy(o + u * ((W) / (NV)), &acc[r][u], sizeof acc[r][u]); \
            else store_first(o, (const float *)acc[r], n);                        \
        }                                                                         \
    } while (0)

/* Tiles of 16 columns (V16: NV16 vectors) and a last one of 8 (V8: NV8), NR rows
 * at a time. */
#define VECMAT_BODY(V16, NV16, V8, NV8, NR)                                       \
    for (int j0 = 0; j0 < Tk; ) {                                                 \
        int i = 0;                                                                \
        if (Tkp - j0 >= 16) {                                                     \
            for (; i + (NR) <= nx; i += (NR)) VECMAT_BLOCK(V16, NV16, 16, NR);    \
            for (; i < nx; i++) VECMAT_BLOCK(V16, NV16, 16, 1);                   \
            j0 += 16;                                                             \
        } else {                                                                  \
            for (; i + (NR) <= nx; i += (NR)) VECMAT_BLOCK(V8, NV8, 8, NR);       \
            for (; i < nx; i++) VECMAT_BLOCK(V8, NV8, 8, 1);                      \
            j0 += 8;                                                              \
        }                                                                         \
    }

/* combine_rows on NV vectors of type V (L floats each) from column d0,
 * accumulators in registers. */
#define COMBINE_BLOCK(V, L, NV)                                                   \
    for (; d0 + (L) * (NV) <= D; d0 += (L) * (NV)) {                              \
        V acc[NV];                    /* zeroed lane by lane: memset was rep stos */ \
        for (int u = 0; u < (NV); u++) acc[u] = (V){0};                           \
        for (int s = 0; s < n; s++) {                                             \
            float c = coef[s];                                                    \
            if (c == 0.0f) continue;                                              \
            const float *r = rows + (size_t)s * ld + d0;                          \
            for (int u = 0; u < (NV); u++) {                                      \
                V rv;                                                             \
                memcpy(&rv, r + (L) * u, sizeof rv);                              \
                acc[u] += c * rv;                                                 \
            }                                                                     \
        }                                                                         \
        for (int u = 0; u < (NV); u++) memcpy(out + d0 + (L) * u, &acc[u], sizeof acc[u]); \
    }

/* 32, 16, 8 and 4 columns at a time, then the last D % 4 one by one. */
#define COMBINE_BODY(V32, NV32, V16, NV16, V8, NV8)                               \
    int d0 = 0;                                                                   \
    COMBINE_BLOCK(V32, 32 / (NV32), NV32)                                         \
    COMBINE_BLOCK(V16, 16 / (NV16), NV16)                                         \
    COMBINE_BLOCK(V8, 8 / (NV8), NV8)                                             \
    COMBINE_BLOCK(f4, 4, 1)                                                       \
    if (d0 == D) return;                                                          \
    for (int d = d0; d < D; d++) out[d] = 0.0f;                                   \
    for (int s = 0; s < n; s++) {                                                 \
        float c = coef[s];                                                        \
        if (c == 0.0f) continue;                                                  \
        const float *r = rows + (size_t)s * ld;                                   \
        for (int d = d0; d < D; d++) out[d] += c * r[d];                          \
    }

#define VECMAT_ARGS float *out, int ldo, const float *x, int ldx, int nx, \
                    const float *mt, int D, int Tk, int Tkp
#define COMBINE_ARGS float *restrict out, const float *restrict coef, \
                     const float *restrict rows, int ld, int n, int D

/* SSE (every x86-64) or whatever 16-byte vectors the machine has. */
static void vecmat_tile_4(VECMAT_ARGS) { VECMAT_BODY(f4, 4, f4, 2, 2) }

/* combine_rows stays on 16-byte vectors everywhere: its time goes to waiting on the
 * rows it reads and the row it writes, and AVX2 or AVX-512 builds of it measured
 * no faster (0–0.5% of a training step slower at d_model 256, 8 heads). */
void combine_rows(COMBINE_ARGS) { COMBINE_BODY(f4, 8, f4, 4, f4, 2) }

/* On x86-64, AVX2 and AVX-512 builds of vecmat_tile too, picked at each call
 * (__builtin_cpu_supports reads a flag set at start-up; an ifunc resolver would
 * run before the sanitizers' runtime and crash the fuzz builds): 8 floats in a ymm
 * register, 16 in a zmm.  Each uses only vectors its target has (GCC emulates a
 * wider vector type through memory, ~6× slower).  All give the same bits. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(ATTNVIZ_PLAIN_KERNELS)
__attribute__((target("avx2"))) static void vecmat_tile_8(VECMAT_ARGS) { VECMAT_BODY(f8, 2, f8, 1, 4) }
__attribute__((target("avx512f"))) static void vecmat_tile_16(VECMAT_ARGS) { VECMAT_BODY(f16, 1, f8, 1, 4) }

void vecmat_tile(VECMAT_ARGS) {
    if (__builtin_cpu_supports("avx512f")) vecmat_tile_16(out, ldo, x, ldx, nx, mt, D, Tk, Tkp);
    else if (__builtin_cpu_supports("avx2")) vecmat_tile_8(out, ldo, x, ldx, nx, mt, D, Tk, Tkp);
    else vecmat_tile_4(out, ldo, x, ldx, nx, mt, D, Tk, Tkp);
}
#else
void vecmat_tile(VECMAT_ARGS) { vecmat_tile_4(out, ldo, x, ldx, nx, mt, D, Tk, Tkp); }
#endif
#undef VECMAT_BLOCK
#undef VECMAT_BODY
#undef COMBINE_BLOCK
#undef COMBINE_BODY
#undef VECMAT_ARGS
#undef COMBINE_ARGS

/* e^v for v <= 0 on a vector V (lanes of I, SPLAT broadcasts): Cephes' expf
 * polynomial after a Cody–Waite reduction by ln 2; below −87, exactly 0.  Each
 * lane runs the same operations whatever the width (no fused multiply-add:
 * -std=c11 keeps a*b+c two roundings), so 4 and 8 lanes give the same bits. */
#define EXP_LE0_BODY(V, I, SPLAT)                                                  \
    I over = v > SPLAT(88.0f);                   /* outside the domain: 2^k stays a float */ \
    v = (V)(((I)v & ~over) | ((I)SPLAT(88.0f) & over));                           \
    I under = v < SPLAT(-87.0f);                 /* underflows to 0, as e^−10000 */ \
    v = (V)(((I)v & ~under) | ((I)SPLAT(-87.0f) & under));  /* keeps 2^k a normal float */ \
    V k = (v * SPLAT(1.44269504088896341f) + SPLAT(12582912.0f)) - SPLAT(12582912.0f); \
    V r = v - k * SPLAT(0.693359375f);           /* Cody–Waite ln 2 */              \
    r = r - k * SPLAT(-2.12194440e-4f);                                           \
    V y = SPLAT(1.9875691500e-4f);                                                \
    y = y * r + SPLAT(1.3981999507e-3f);                                          \
    y = y * r + SPLAT(8.3334519073e-3f);                                          \
    y = y * r + SPLAT(4.1665795894e-2f);                                          \
    y = y * r + SPLAT(1.6666665459e-1f);                                          \
    y = y * r + SPLAT(5.0000001201e-1f);                                          \
    y = y * r * r + r + SPLAT(1.0f);                                              \
    I e = (__builtin_convertvector(k, I) + 127) << 23;   /* 2^k */                 \
    return (V)((I)(y * (V)e) & ~under);

static inline f4 exp4_le0(f4 v) { EXP_LE0_BODY(f4, i4, splat4) }

/* The same, one lane (the same operations, so the same bits); a NaN stays NaN. */
static inline float exp1_le0(float v) {
    if (v != v) return v;
    if (v < -87.0f) return 0.0f;
    if (v > 88.0f) v = 88.0f;
    float k = (v * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = v - k * 0.693359375f;
    r = r - k * -2.12194440e-4f;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * r * r + r + 1.0f;
    union { uint32_t i; float f; } two_k = { .i = (uint32_t)((int32_t)k + 127) << 23 };
    return y * two_k.f;
}

/* σ(z) = 1 / (1 + e^−z) through t = e^−|z| <= 1: 1 / (1 + t) for z >= 0,
 * t / (1 + t) below (no overflow either way). */
#define SIGMOID_BODY(V, I, SPLAT, EXP)                                            \
    I neg = v < SPLAT(0.0f);                                                      \
    V a = (V)((I)v & ~(I)SPLAT(-0.0f));          /* |z| */                         \
    V t = EXP(-a), d = SPLAT(1.0f) + t;                                           \
    V num = (V)(((I)t & neg) | ((I)SPLAT(1.0f) & ~neg));                          \
    return num / d;

static inline f4 sigmoid4(f4 v) { SIGMOID_BODY(f4, i4, splat4, exp4_le0) }

/* exp_shifted and sigmoid_vec over L-lane vectors, then 4 lanes, then one. */
#define EXP_SHIFTED_BODY(L, LOAD, STORE, SPLAT, EXP)                           \
    int i = 0;                                                                    \
    for (; i + (L) <= n; i += (L)) STORE(out + i, EXP(LOAD(x + i) - SPLAT(shift))); \
    for (; i + 4 <= n; i += 4) store4(out + i, exp4_le0(load4(x + i) - splat4(shift))); \
    for (; i < n; i++) out[i] = exp1_le0(x[i] - shift);
#define SIGMOID_VEC_BODY(L, LOAD, STORE, SIG)                                     \
    size_t i = 0;                                                                 \
    for (; i + (L) <= n; i += (L)) STORE(out + i, SIG(LOAD(z + i)));               \
    for (; i + 4 <= n; i += 4) store4(out + i, sigmoid4(load4(z + i)));            \
    for (; i < n; i++) {                                                          \
        float t = exp1_le0(-fabsf(z[i]));                                         \
        out[i] = (z[i] < 0.0f ? t : 1.0f) / (1.0f + t);                          \
    }

static void exp_shifted_4(float *out, const float *x, float shift, int n) {
    EXP_SHIFTED_BODY(4, load4, store4, splat4, exp4_le0)
}
static void sigmoid_vec_4(float *out, const float *z, size_t n) { SIGMOID_VEC_BODY(4, load4, store4, sigmoid4) }

/* On x86-64 an AVX2 build too, picked at each call as vecmat_tile's: 8 lanes
 * in a ymm register (16-byte vectors left SiLU and softmax's exponentials at
 * half the width the machine has).  The same bits as the 4-lane build. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(ATTNVIZ_PLAIN_KERNELS)
typedef int32_t i8 __attribute__((vector_size(32)));
#define AVX2 __attribute__((target("avx2")))
AVX2 static inline f8 load8(const float *p) { f8 v; memcpy(&v, p, sizeof v); return v; }
AVX2 static inline void store8(float *p, f8 v) { memcpy(p, &v, sizeof v); }
AVX2 static inline f8 splat8(float x) { return (f8){x, x, x, x, x, x, x, x}; }
AVX2 static inline f8 exp8_le0(f8 v) { EXP_LE0_BODY(f8, i8, splat8) }
AVX2 static inline f8 sigmoid8(f8 v) { SIGMOID_BODY(f8, i8, splat8, exp8_le0) }
AVX2 static void exp_shifted_8(float *out, const float *x, float shift, int n) {
    EXP_SHIFTED_BODY(8, load8, store8, splat8, exp8_le0)
}
AVX2 static void sigmoid_vec_8(float *out, const float *z, size_t n) { SIGMOID_VEC_BODY(8, load8, store8, sigmoid8) }
#undef AVX2

void exp_shifted(float *out, const float *x, float shift, int n) {
    if (__builtin_cpu_supports("avx2")) exp_shifted_8(out, x, shift, n);
    else exp_shifted_4(out, x, shift, n);
}
void sigmoid_vec(float *out, const float *z, size_t n) {
    if (__builtin_cpu_supports("avx2")) sigmoid_vec_8(out, z, n);
    else sigmoid_vec_4(out, z, n);
}
#else
void exp_shifted(float *out, const float *x, float shift, int n) { exp_shifted_4(out, x, shift, n); }
void sigmoid_vec(float *out, const float *z, size_t n) { sigmoid_vec_4(out, z, n); }
#endif
void exp_shifted_plain(float *out, const float *x, float shift, int n) { exp_shifted_4(out, x, shift, n); }
void sigmoid_vec_plain(float *out, const float *z, size_t n) { sigmoid_vec_4(out, z, n); }
#undef EXP_LE0_BODY
#undef SIGMOID_BODY
#undef EXP_SHIFTED_BODY
#undef SIGMOID_VEC_BODY
