/* test_attention.c — the attention engine against values computed by hand. */
#include "core/attention.h"
#include "core/tensor.h"
#include "check.h"
#include "core/rng.h"
#include <stdlib.h>
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The lesson's first example: Q=[[1,2,3]], K=[[2,1,0],[1,2,3]] → scores [[4, 14]].
 * 1·2+2·1+3·0 = 4 and 1·1+2·2+3·3 = 14; ÷√3 gives 2.3094011, 8.0829038;
 * softmax: w0 = 1/(1+e^(10/√3)) = 0.0030992141. */
TEST(attention_lesson_scores_4_14) {
    const float q[] = {1, 2, 3}, k[] = {2, 1, 0, 1, 2, 3};
    AttnSteps st;
    REQUIRE(attn_steps_alloc(&st, 1, 2, 0) == 0);
    AttnHead a = {.q = q, .ldq = 3, .k = k, .ldk = 3, .mask_fill = -INFINITY, .scale = 1.0f / sqrtf(3.0f),
                  .Tq = 1, .Tk = 2, .D = 3, .steps = &st};
    int empty = attention_forward(&a);
    CHECK_INT(empty, 0);
    CHECK_NEAR(st.scores[0], 4.0, 0);
    CHECK_NEAR(st.scores[1], 14.0, 0);
    CHECK_NEAR(st.scaled[0], 2.3094011, 1e-6);
    CHECK_NEAR(st.scaled[1], 8.0829038, 1e-6);
    CHECK_NEAR(st.weights[0], 0.0030992141, 1e-7);
    CHECK_NEAR(st.weights[1], 1.0 - 0.0030992141, 1e-6);
    attn_steps_free(&st);
}

/* The lesson's causal 3×3 example, every row by hand:
 *   row 0: only key 0 → [1, 0, 0]
 *   row 1: softmax(0.4, 0.5) = [1/(1+e^0.1), e^0.1/(1+e^0.1)] = [0.47502081, 0.52497919]
 *   row 2: softmax(0.7, 0.8, 0.9) = [1, e^0.1, e^0.2] / (1 + e^0.1 + e^0.2)
 *        = [0.30060961, 0.33222499, 0.36716540]
 * (The lesson prints [0.25, 0.33, 0.42] for row 2: an arithmetic slip.) */
TEST(attention_lesson_causal_3x3) {
    const float s[] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f};
    const float want[] = {1, 0, 0, 0.47502081f, 0.52497919f, 0, 0.30060961f, 0.33222499f, 0.36716540f};
    unsigned char mask[9];
    attn_causal_mask(mask, 3, 3);
    const unsigned char want_mask[9] = {1, 0, 0, 1, 1, 0, 1, 1, 1};
    CHECK(memcmp(mask, want_mask, 9) == 0);
    float w[9];
    AttnSteps st;
    REQUIRE(attn_steps_alloc(&st, 3, 3, 0) == 0);
    AttnHead a = {.mask = mask, .mask_fill = -INFINITY, .Tq = 3, .Tk = 3, .weights = w, .steps = &st};
    CHECK_INT(attention_from_scores(&a, s), 0);
    CHECK_CLOSE("causal weights", w, want, 9, 1e-7, 1e-6);
    CHECK(isinf(st.masked[1]) && st.masked[1] < 0);
    CHECK(isinf(st.masked[5]) && st.masked[5] < 0);
    CHECK_NEAR(st.masked[3], 0.4, 1e-7);
    /* Above the diagonal exactly zero. */
    CHECK(w[1] == 0.0f && w[2] == 0.0f && w[5] == 0.0f);
    /* With the lesson's -10000 fill the weights are the same in float32: e^-10000 underflows. */
    float w2[9];
    AttnHead a2 = {.mask = mask, .mask_fill = -10000.0f, .Tq = 3, .Tk = 3, .weights = w2};
    attention_from_scores(&a2, s);
    CHECK_CLOSE("fill -10000", w2, want, 9, 1e-7, 1e-6);
    CHECK(w2[1] == 0.0f);
    attn_steps_free(&st);
}

/* softmax subtracts the row max: huge scores do not overflow. softmax(1000, 1001)
 * = [1/(1+e), e/(1+e)] = [0.26894142, 0.73105858]. */
TEST(attention_softmax_stable) {
    float x[2] = {1000.0f, 1001.0f};
    CHECK_INT(attn_softmax_row(x, 2), 0);
    CHECK_NEAR(x[0], 0.26894142, 1e-7);
    CHECK_NEAR(x[1], 0.73105858, 1e-7);
    float y[3] = {-INFINITY, -INFINITY, -INFINITY};
    CHECK_INT(attn_softmax_row(y, 3), 1);
    CHECK(y[0] == 0 && y[1] == 0 && y[2] == 0);
}

/* A fully masked row: with -inf its weights and output are defined as 0 (and
 * counted); with a finite fill softmax is uniform as in PyTorch. */
TEST(attention_fully_masked_row) {
    const float s[] = {1, 2, 3, 4};
    const float v[] = {1, 10, 100, 1000};                 /* (2 keys, 2 dims) */
    const unsigned char mask[] = {1, 1, 0, 0};            /* row 1 sees nothing */
    float w[4], out[4];
    AttnHead a = {.v = v, .ldv = 2, .mask = mask, .mask_fill = -INFINITY, .Tq = 2, .Tk = 2, .Dv = 2,
                  .out = out, .ldo = 2, .weights = w};
    CHECK_INT(attention_from_scores(&a, s), 1);
    CHECK(w[2] == 0 && w[3] == 0 && out[2] == 0 && out[3] == 0);
    CHECK(!isnan(out[0]) && !isnan(out[1]));
    a.mask_fill = -1e9f;
    CHECK_INT(attention_from_scores(&a, s), 0);
    CHECK_NEAR(w[2], 0.5, 1e-7);
    CHECK_NEAR(out[2], 0.5 * 1 + 0.5 * 100, 1e-4);
}

/* Output = weights · V, and strides: a head's columns inside a wider matrix.
 * q = [1,0], keys [1,0] and [0,1], scale 1 → scores [1, 0]; weights
 * [e/(1+e), 1/(1+e)] = [0.73105858, 0.26894142]; V rows [2,4], [6,8] →
 * output [1.4621172+1.6136485, 2.9242343+2.1515314] = [3.0757657, 5.0757657]. */
TEST(attention_values_and_strides) {
    /* head 1 of a 2-head layout with D=2: columns 2..3 of rows of width 4 */
    const float q[] = {9, 9, 1, 0};
    const float k[] = {9, 9, 1, 0, 9, 9, 0, 1};
    const float v[] = {9, 9, 2, 4, 9, 9, 6, 8};
    float out[4] = {-1, -1, -1, -1};
    float w[2];
    AttnHead a = {.q = q + 2, .ldq = 4, .k = k + 2, .ldk = 4, .v = v + 2, .ldv = 4, .mask_fill = -INFINITY,
                  .scale = 1.0f, .Tq = 1, .Tk = 2, .D = 2, .Dv = 2, .out = out + 2, .ldo = 4, .weights = w};
    attention_forward(&a);
    CHECK_NEAR(w[0], 0.73105858, 1e-7);
    CHECK_NEAR(out[2], 3.0757657, 1e-6);
    CHECK_NEAR(out[3], 5.0757657, 1e-6);
    CHECK(out[0] == -1 && out[1] == -1);                  /* other head untouched */
}

/* A causal mask with more keys than queries (decoding with a cache) lets query
 * i see keys up to i + (Tk - Tq). */
TEST(attention_causal_offset) {
    unsigned char m[6];
    attn_causal_mask(m, 2, 3);
    const unsigned char want[6] = {1, 1, 0, 1, 1, 1};
    CHECK(memcmp(m, want, 6) == 0);
}

/* attention_forward_fast against attention_forward (its reference): same bits for
 * the weights and the output, with strides, a padding+causal mask (a sliding
 * window of `window` keys when > 0), a fully masked row (-inf fill), a finite
 * fill, a K tile too big for the stack, and rows past one block of 16 (the fast
 * one scores a block of rows up to the last key any of them attends). */
static void fast_vs_ref(int Tq, int Tk, int D, float fill, unsigned seed, int window) {
    int ld = 3 * D + 5;                     /* a head's columns inside wider rows */
    size_t nq = (size_t)Tq * ld, nk = (size_t)Tk * ld;
    float *q = malloc(nq * sizeof(float)), *k = malloc(nk * sizeof(float)), *v = malloc(nk * sizeof(float));
    float *o1 = calloc(nq, sizeof(float)), *o2 = calloc(nq, sizeof(float));
    float *w1 = malloc((size_t)Tq * Tk * sizeof(float)), *w2 = malloc((size_t)Tq * Tk * sizeof(float));
    unsigned char *mask = malloc((size_t)Tq * Tk);
    REQUIRE(q && k && v && o1 && o2 && w1 && w2 && mask);
    Rng r = rng_from_state(seed);
    for (size_t i = 0; i < nq; i++) q[i] = 4.0f * rng_float(&r) - 2.0f;
    for (size_t i = 0; i < nk; i++) { k[i] = 4.0f * rng_float(&r) - 2.0f; v[i] = 2.0f * rng_float(&r) - 1.0f; }
    for (int i = 0; i < Tq; i++)
        for (int j = 0; j < Tk; j++) mask[(size_t)i * Tk + j] = (unsigned char)(j <= i && j < Tk - 2 && i != 1 && (!window || i - j < window));
    AttnHead a = {.q = q + D, .ldq = ld, .k = k + D, .ldk = ld, .v = v + D, .ldv = ld, .mask = mask,
                  .mask_fill = fill, .scale = 1.0f / sqrtf((float)D), .Tq = Tq, .Tk = Tk, .D = D, .Dv = D,
                  .out = o1 + D, .ldo = ld, .weights = w1};
    int e1 = attention_forward(&a);
    a.out = o2 + D; a.weights = w2;
    int e2 = attention_forward_fast(&a);
    CHECK_INT(e2, e1);
    CHECK(memcmp(w1, w2, (size_t)Tq * Tk * sizeof(float)) == 0);
    if (Tk < COMBINE_BLOCK_MIN) CHECK(memcmp(o1, o2, nq * sizeof(float)) == 0);
    else CHECK_CLOSE("output (one product for long rows)", o2, o1, (int)nq, 1e-6, 1e-5);
    CHECK_CLOSE("weights", w2, w1, Tq * Tk, 0, 0);
    free(q); free(k); free(v); free(o1); free(o2); free(w1); free(w2); free(mask);
}

TEST(attention_fast_matches_reference) {
    fast_vs_ref(14, 14, 24, -INFINITY, 1, 0);    /* the training shapes */
    fast_vs_ref(13, 14, 32, -INFINITY, 2, 0);    /* cross-attention: Tq != Tk */
    fast_vs_ref(5, 7, 3, -10000.0f, 3, 0);       /* the lesson's finite fill */
    fast_vs_ref(9, 300, 64, -INFINITY, 4, 0);    /* K tile on the heap; weights · V in one product */
    fast_vs_ref(300, 300, 32, -INFINITY, 8, 0);  /* causal: the first 8 blocks by rows, the rest one product each */
    fast_vs_ref(100, 100, 64, -INFINITY, 5, 0);  /* causal over 7 blocks of rows */
    fast_vs_ref(70, 70, 16, -INFINITY, 6, 9);    /* a sliding window of 9 keys */
    fast_vs_ref(40, 40, 8, -1e9f, 7, 5);    /* a window, finite fill: every score computed */
}

/* One shape of the tile kernels against plain loops in their order of summation:
 * nx rows of x (stride ld) times mᵀ for m Tk rows of D, and Σ_s coef[s]·m[s] with
 * some coefficients zero.  Columns past Tk of out and past D must stay untouched. */
static int kernel_case(Rng *r, int D, int Tk, int nx) {
    int ld = D + 3, ldo = Tk + 2, Tkp = tile_cols(Tk), bad = 0;
    float *x = malloc(sizeof(float) * (size_t)nx * ld), *m = malloc(sizeof(float) * (size_t)Tk * ld);
    float *mt = malloc(sizeof(float) * (size_t)D * Tkp), *coef = malloc(sizeof(float) * (size_t)Tk);
    float *got = malloc(sizeof(float) * (size_t)nx * ldo), *want = malloc(sizeof(float) * (size_t)nx * ldo);
    float *cgot = malloc(sizeof(float) * (size_t)(D + 1)), *cwant = malloc(sizeof(float) * (size_t)(D + 1));
    for (int i = 0; i < nx * ld; i++) x[i] = 2.0f * rng_float(r) - 1.0f;
    for (int i = 0; i < Tk * ld; i++) m[i] = (2.0f * rng_float(r) - 1.0f) * 1e3f;
    for (int s = 0; s < Tk; s++) coef[s] = rng_float(r) < 0.3f ? 0.0f : 2.0f * rng_float(r) - 1.0f;
    for (int i = 0; i < nx * ldo; i++) got[i] = want[i] = 12345.0f;
    for (int i = 0; i < nx; i++)
        for (int j = 0; j < Tk; j++) {
            float dot = 0.0f;
            for (int d = 0; d < D; d++) dot += x[(size_t)i * ld + d] * m[(size_t)j * ld + d];
            want[(size_t)i * ldo + j] = dot;
        }
    pack_transposed(mt, m, ld, Tk, D, Tkp);
    vecmat_tile(got, ldo, x, ld, nx, mt, D, Tk, Tkp);
    bad += memcmp(got, want, sizeof(float) * (size_t)nx * ldo) != 0;
    cgot[D] = cwant[D] = 12345.0f;
    for (int d = 0; d < D; d++) cwant[d] = 0.0f;
    for (int s = 0; s < Tk; s++) {
        if (coef[s] == 0.0f) continue;
        for (int d = 0; d < D; d++) cwant[d] += coef[s] * m[(size_t)s * ld + d];
    }
    combine_rows(cgot, coef, m, ld, Tk, D);
    bad += 2 * (memcmp(cgot, cwant, sizeof(float) * (size_t)(D + 1)) != 0);
    free(x); free(m); free(mt); free(coef); free(got); free(want); free(cgot); free(cwant);
    return bad;
}

/* vecmat_tile — the AVX-512, AVX2 or SSE build, whichever this machine runs — and
 * combine_rows give the bits of the plain loops for every shape. */
TEST(attention_tile_kernels_same_bits) {
    static const int Ds[] = {1, 3, 4, 7, 8, 16, 31, 32, 33, 64}, nxs[] = {1, 3, 4, 5, 9};
    Rng r = rng_from_state(2024);
    int vec_bad = 0, comb_bad = 0, cases = 0;
    for (int a = 0; a < (int)(sizeof Ds / sizeof Ds[0]); a++)
        for (int Tk = 1; Tk <= 17; Tk++)
            for (int b = 0; b < (int)(sizeof nxs / sizeof nxs[0]); b++) {
                int bad = kernel_case(&r, Ds[a], Tk, nxs[b]);
                if (bad && vec_bad + comb_bad == 0)
                    fprintf(stderr, "    first difference: D %d, Tk %d, %d rows\n", Ds[a], Tk, nxs[b]);
                vec_bad += bad & 1;
                comb_bad += bad >> 1;
                cases++;
            }
    CHECK_INT(cases, 850);
    CHECK_INT(vec_bad, 0);
    CHECK_INT(comb_bad, 0);
}

/* attention_heads_fast: 12 causal heads of one layer (q, k, v side by side in rows
 * of 3·H·D, outputs side by side), spread over two threads, give the bits of
 * attention_forward head by head. */
static void heads_case(int T) {
    enum { H = 12, D = 16 };
    Rng r = rng_from_state(11);
    float *qkv = malloc(sizeof(float) * T * 3 * H * D), *out = calloc(T * H * D, sizeof(float));
    float *ref_out = calloc(T * D, sizeof(float)), *ref_w = malloc(sizeof(float) * T * T);
    unsigned char *mask = malloc(T * T);
    for (int i = 0; i < T * 3 * H * D; i++) qkv[i] = 2.0f * rng_float(&r) - 1.0f;
    attn_causal_mask(mask, T, T);
    AttnHead a[H];
    for (int h = 0; h < H; h++)
        a[h] = (AttnHead){.q = qkv + h * D, .ldq = 3 * H * D, .k = qkv + (H + h) * D, .ldk = 3 * H * D,
                          .v = qkv + (2 * H + h) * D, .ldv = 3 * H * D, .mask = mask, .mask_fill = -INFINITY,
                          .scale = 0.25f, .Tq = T, .Tk = T, .D = D, .Dv = D, .out = out + h * D, .ldo = H * D,
                          .weights = malloc(sizeof(float) * T * T)};
#ifdef _OPENMP
    int threads = omp_get_max_threads();
    omp_set_num_threads(2);
#endif
    CHECK_INT(attention_heads_fast(a, H), 0);
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    for (int h = 0; h < H; h++) {
        AttnHead b = a[h];
        b.out = ref_out; b.ldo = D; b.weights = ref_w;
        CHECK_INT(attention_forward(&b), 0);
        CHECK(memcmp(ref_w, a[h].weights, sizeof(float) * T * T) == 0);
        for (int t = 0; t < T; t++) {
            if (T < COMBINE_BLOCK_MIN) CHECK(memcmp(ref_out + t * D, out + t * H * D + h * D, sizeof(float) * D) == 0);
            else CHECK_CLOSE("output", out + t * H * D + h * D, ref_out + t * D, D, 1e-6, 1e-5);
        }
        free(a[h].weights);
    }
    free(qkv); free(out); free(ref_out); free(ref_w); free(mask);
}

/* 37 tokens: one part a head, the same bits; 300: each head in two parts of
 * rows, weights · V by products of up to 128 rows: the weights the same bits,
 * the output within float rounding. */
TEST(attention_heads_fast_same_bits_as_one_by_one) {
    heads_case(37);
    heads_case(300);
}
