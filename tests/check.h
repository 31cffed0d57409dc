/* check.h — the tiny test framework of attnviz's C unit tests.
 *
 * A test is a function declared with TEST(name) in any tests/test_*.c file; it
 * registers itself (constructor attribute), so adding a file adds its tests.
 * CHECK(cond) and the CHECK_* macros print file:line and what differed, mark the
 * current test failed, and go on; REQUIRE(cond) also returns from the test.
 * tests/test_main.c runs every registered test (or those whose name contains the
 * first argument) and ends with "unit: N passed, M failed". */
#ifndef ATTNVIZ_CHECK_H
#define ATTNVIZ_CHECK_H
#include <math.h>
#include <stdio.h>

typedef void (*TestFn)(void);
void check_register(const char *name, TestFn fn);
void check_fail(const char *file, int line, const char *fmt, ...);
/* Compare two float arrays: passes when every |a-b| <= atol + rtol*|b|.
 * On failure prints the first differing index, both values, the max difference. */
int check_close_f(const char *file, int line, const char *what, const float *a,
                  const float *b, int n, double atol, double rtol);
/* Scratch directory for this test run (created once, under $TMPDIR). */
const char *check_tmpdir(void);

#define TEST(name)                                                            \
    static void test_##name(void);                                            \
    __attribute__((constructor)) static void register_##name(void) {          \
        check_register(#name, test_##name);                                   \
    }                                                                         \
    static void test_##name(void)

#define CHECK(cond)                                                           \
    do { if (!(cond)) check_fail(__FILE__, __LINE__, "CHECK(%s)", #cond); } while (0)
#define REQUIRE(cond)                                                         \
    do { if (!(cond)) { check_fail(__FILE__, __LINE__, "REQUIRE(%s)", #cond); return; } } while (0)
#define CHECK_NEAR(a, b, tol)                                                 \
    do { double a_ = (a), b_ = (b);                                           \
         if (!(fabs(a_ - b_) <= (tol)))                                       \
             check_fail(__FILE__, __LINE__, "%s = %.9g, expected %s = %.9g (tol %g)", \
                        #a, a_, #b, b_, (double)(tol)); } while (0)
#define CHECK_INT(a, b)                                                       \
    do { long a_ = (long)(a), b_ = (long)(b);                                 \
         if (a_ != b_) check_fail(__FILE__, __LINE__, "%s = %ld, expected %ld", #a, a_, b_); } while (0)
#define CHECK_CLOSE(what, a, b, n, atol, rtol)                                \
    check_close_f(__FILE__, __LINE__, what, a, b, n, atol, rtol)

#endif
