/* test_main.c — runs every TEST registered by tests/test_*.c (see check.h). */
#include "check.h"
#include "core/tensor.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TESTS 1024
static struct { const char *name; TestFn fn; } tests[MAX_TESTS];
static int n_tests, current_failed;

void check_register(const char *name, TestFn fn) {
    if (n_tests < MAX_TESTS) { tests[n_tests].name = name; tests[n_tests].fn = fn; n_tests++; }
}

void check_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "  %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    current_failed = 1;
}

int check_close_f(const char *file, int line, const char *what, const float *a,
                  const float *b, int n, double atol, double rtol) {
    int first = -1;
    double maxdiff = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        int bad = !(d <= atol + rtol * fabs((double)b[i]));
        if (isnan(d)) d = INFINITY;
        if (d > maxdiff) maxdiff = d;
        if (bad && first < 0) first = i;
    }
    if (first >= 0) {
        check_fail(file, line, "%s: element %d is %.9g, expected %.9g; max |diff| %.3g over %d values",
                   what, first, a[first], b[first], maxdiff, n);
        return 0;
    }
    return 1;
}

const char *check_tmpdir(void) {
    static char dir[512];
    if (!dir[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/attnviz-unit-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(dir)) { perror("mkdtemp"); exit(2); }
    }
    return dir;
}

/* tests/llama_dump.c: the command modes the Python tests of the Llama family use. */
int llama_dump_main(int argc, char **argv);
/* tests/test_tokjson.c: `test_unit --tokjson FILE.json < LINES`, the mode
 * tests/test_tokjson.py compares with Hugging Face's library. */
int tokjson_tool(int argc, char **argv);

static int cmp_tests(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(int argc, char **argv) {
    tensor_blas_quiet();   /* as attnviz does: no OpenBLAS worker spinning beside the timed loads */
    if (argc > 1 && (!strncmp(argv[1], "--llama-", 8) || !strncmp(argv[1], "--llama2c-", 10)))
        return llama_dump_main(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "--tokjson")) return tokjson_tool(argc, argv);
    const char *filter = argc > 1 ? argv[1] : NULL;
    int passed = 0, failed = 0;
    qsort(tests, n_tests, sizeof tests[0], cmp_tests);
    for (int i = 0; i < n_tests; i++) {
        if (filter && !strstr(tests[i].name, filter)) continue;
        current_failed = 0;
        tests[i].fn();
        if (current_failed) { failed++; printf("FAIL %s\n", tests[i].name); }
        else { passed++; printf("ok   %s\n", tests[i].name); }
        fflush(stdout);
    }
    printf("unit: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
